"""Kernel benchmark: exact executed-instruction counts of MLPerf Tiny layers on QEMU.

    python bench/kernels.py [--json] [--board mps2-an386]
    python bench/kernels.py --sweep [--seed S] [--per-class N] [--kernels-only] [--json]
                            [--classes pool,elementwise,...]

Builds the kernel test firmware (tests/kernels/firmware) twice for the board, once with
the portable C path (TH_NN_FORCE_PORTABLE) and once with the DSP path, runs each layer
once under the QEMU icount plugin (tools/qemu-icount: every instruction between
th_mark_start and th_mark_stop, i.e. the whole kernel call including argument checks;
the 2 marker instructions are subtracted) and checks the outputs against the NumPy
reference. On a board with MVE (mps3-an547) the DSP build is made without the Helium paths
(TH_NN_FORCE_NO_MVE) and a third build, path "mve", runs them, with its gain over the DSP path
on the same board. Prints a table; with --json the table goes to stderr and a JSON list, one
object per (layer, path) with keys layer, path, macs, instructions (+ mac_per_instruction),
to stdout. Not a test: nothing here asserts a speed.

--sweep: N (default 30) random shapes per layer class (tests/kernels/sweep.py: conv,
pointwise, depthwise, fully connected; 1k-500k MACs) on the DSP path only, outputs checked
against the reference; prints per class the median and worst MAC/instruction with the worst
shape and the issue-14 floor (worst over the shapes the floor applies to). Then pools (average,
max, MEAN) and elementwise (ADD, SUB, MUL, broadcasts) per element, from graphs run through the
compiled backend (bench/sweep_ops.py). Then issue 17's kernel classes (SVDF, LSTM, 16x8 and
int4-weight conv / depthwise / FC: bench/sweep_seq.py), median and worst MAC/instruction, from
graphs through the compiled backend (--kernels-only: not these two). On mps3-an547 the shapes
larger than its kernel firmware's buffers are left out. With --json one row per shape (class,
shape, macs, instructions; for the per-element classes elements = input elements, both
operands of a binary op, and output_elements) on stdout; the per-element table is per input
element (the issue's wording). --classes: only the named classes (comma-separated: conv,
pointwise, depthwise, fully_connected, fully_connected_w16 (the same FC shapes on the compiled
backend's int16-weight th_fc_s8_w16), pool, elementwise, or seq for issue 17's); the others
are not built or run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
# tests/ first: its `kernels` package, not this script (bench/ is also on the path).
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from sweep_ops import sweep_ops  # noqa: E402
from sweep_seq import sweep_seq  # noqa: E402

from kernels.cases import ConvCase, FcCase, Op, check_result  # noqa: E402
from kernels.layers import fc_layer, layer_case  # noqa: E402
from kernels.sweep import describe, sweep_cases  # noqa: E402
from kernels.target import TargetRun, build_firmware, run_cases  # noqa: E402
from tinyhost.boards import load_board  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402

TARGETS = {"pointwise": 0.9, "conv3x3": 0.9, "depthwise3x3": 0.6, "fully_connected": 0.7,
           "conv_first": None}


def layers() -> list[tuple[str, str, ConvCase | FcCase]]:
    return [
        ("vww pw 48x48x8->16", "pointwise", layer_case(Op.CONV, (48, 48), 8, 16, 1, 1)),
        ("vww dw3x3 s1 48x48x8", "depthwise3x3", layer_case(Op.DW, (48, 48), 8, 8, 3, 1)),
        ("vww dw3x3 s2 48x48x16", "depthwise3x3", layer_case(Op.DW, (48, 48), 16, 16, 3, 2)),
        ("kws pw 25x5x64->64", "pointwise", layer_case(Op.CONV, (25, 5), 64, 64, 1, 1)),
        ("kws dw3x3 s1 25x5x64", "depthwise3x3", layer_case(Op.DW, (25, 5), 64, 64, 3, 1)),
        ("resnet conv3x3 32x32x16->16", "conv3x3",
         layer_case(Op.CONV, (32, 32), 16, 16, 3, 1)),
        ("ad fc 640->128", "fully_connected", fc_layer(640, 128)),
        # First layers: few input channels (byte-staged im2col).
        ("vww conv3x3 s2 96x96x3->8", "conv3x3", layer_case(Op.CONV, (96, 96), 3, 8, 3, 2)),
        ("kws conv10x4 s2 49x10x1->64", "conv_first",
         layer_case(Op.CONV, (49, 10), 1, 64, (10, 4), 2)),
        # Small spatial size, many channels (VWW's last blocks).
        ("vww pw 6x6x128->128", "pointwise", layer_case(Op.CONV, (6, 6), 128, 128, 1, 1)),
        ("vww dw3x3 s1 6x6x128", "depthwise3x3", layer_case(Op.DW, (6, 6), 128, 128, 3, 1)),
        # Given four planes of scratch (th_dw_conv_3x3_s8_scratch_size_fast, which the blob
        # grants where the arena has room: VWW's 6x6 layers, not KWS's peak layer).
        ("vww dw3x3 s1 48x48x8 4-plane", "depthwise3x3",
         replace(layer_case(Op.DW, (48, 48), 8, 8, 3, 1), fast_scratch=True)),
        ("kws dw3x3 s1 25x5x64 4-plane", "depthwise3x3",
         replace(layer_case(Op.DW, (25, 5), 64, 64, 3, 1), fast_scratch=True)),
        ("vww dw3x3 s1 6x6x128 4-plane", "depthwise3x3",
         replace(layer_case(Op.DW, (6, 6), 128, 128, 3, 1), fast_scratch=True)),
    ]


def sweep_floor(kind: str, case: ConvCase | FcCase) -> float | None:
    """Issue 14's MAC/instruction floor for a shape (None: no floor for it)."""
    if isinstance(case, FcCase):
        return 0.6
    kh, kw = case.w.shape[1], case.w.shape[2]
    if case.depthwise:
        return 0.35 if kh * kw * case.p.ch_mult >= 9 else 0.2
    return 0.5 if kh * kw * case.w.shape[3] >= 27 else None


def paths(board: str) -> list[tuple[str, bool, bool, bool]]:
    """(path, portable, no_mve, interleaved filters) of the kernel builds to compare: portable
    and DSP, plus the Helium build on an MVE board (its DSP build then without MVE)."""
    mve = load_board(board).mve
    rows = [("portable", True, False, False), ("dsp", False, mve, True)]
    return rows + [("mve", False, False, False)] if mve else rows


# The big kernel firmware's record and result buffers where they are smaller than the sweep's
# shapes allow (tests/kernels/firmware/app.cmake): those shapes are left out on that board.
BIG_CAPS = {"mps3-an547": (131_072, 49_152 - 32)}


def sweep(args: argparse.Namespace) -> int:
    classes = frozenset(args.classes.split(",")) if args.classes else None
    entries = [(kind, case) for kind, case in sweep_cases(args.seed, args.per_class)
               if classes is None or kind in classes]  # fmt: skip
    if args.board in BIG_CAPS:
        record_cap, result_cap = BIG_CAPS[args.board]
        kept = [(kind, case) for kind, case in entries
                if len(case.encode(0, True)) <= record_cap
                and int(np.prod(case.out_shape)) <= result_cap]  # fmt: skip
        print(f"{len(entries) - len(kept)} sweep shapes larger than the {args.board} kernel "
              f"firmware's buffers left out", file=sys.stderr)
        entries = kept
    cases = [case for _, case in entries]
    mve = load_board(args.board).mve
    with tempfile.TemporaryDirectory(prefix="th-ksweep-") as tmp:
        run = run_mve = TargetRun(0, [], [])
        if cases:
            fw = build_firmware(args.board, Path(tmp), portable=False, big=True, no_mve=mve)
            run = run_cases(fw, cases, interleaved=True, icount=True, timeout=1800.0)
        if mve and cases:
            fw_mve = build_firmware(args.board, Path(tmp), portable=False, big=True)
            run_mve = run_cases(fw_mve, cases, interleaved=False, icount=True, timeout=1800.0)
            for (kind, case), result in zip(entries, run_mve.results, strict=True):
                problem = check_result(case, result)
                if problem is not None:
                    raise SystemExit(f"{kind} {describe(case)} [mve]: output differs from "
                                     f"reference: {problem}")
        per_element, sequence = [], []
        if not args.kernels_only:
            if classes is None or classes & {"pool", "elementwise"}:
                per_element = sweep_ops(args.seed, args.per_class, args.board, Path(tmp),
                                        classes)  # fmt: skip
            if classes is None or "seq" in classes:
                sequence = sweep_seq(args.seed, args.per_class, args.board, Path(tmp))
    if len(run.counts) != len(cases):
        raise SystemExit(f"{len(run.counts)} instruction counts for {len(cases)} layers")
    rows = []
    for (kind, case), result, count in zip(entries, run.results, run.counts, strict=True):
        problem = check_result(case, result)
        if problem is not None:
            raise SystemExit(f"{kind} {describe(case)}: output differs from reference: "
                             f"{problem}")
        rows.append({"class": kind, "shape": describe(case), "macs": case.macs,
                     "instructions": count - MARKER_OVERHEAD,
                     "floor": sweep_floor(kind, case)})
    out = sys.stderr if args.json else sys.stdout
    print(f"sweep seed {args.seed}, {args.per_class} shapes per class, DSP path, "
          f"{args.board}", file=out)
    print(f"{'class':16} {'median':>7} {'worst':>7} {'floor':>6} {'<floor':>6}  worst shape "
          f"(MAC/instr, among shapes with a floor)", file=out)
    for kind in dict.fromkeys(r["class"] for r in rows):
        mine = [r for r in rows if r["class"] == kind]
        rate = [r["macs"] / r["instructions"] for r in mine]
        floored = [(r["macs"] / r["instructions"], r) for r in mine if r["floor"] is not None]
        worst_rate, worst = min(floored, key=lambda t: t[0] / t[1]["floor"])
        below = sum(1 for v, r in floored if v < r["floor"])
        print(f"{kind:16} {float(np.median(rate)):7.3f} {worst_rate:7.3f} "
              f"{worst['floor']:6.2f} {below:6d}  {worst['shape']}", file=out)
    print(f"{'class':16} {'median':>7} {'worst':>7} {'floor':>6} {'>floor':>6}  worst shape "
          f"(instructions per input element)", file=out)
    for kind in dict.fromkeys(r["class"] for r in per_element):
        mine = [r for r in per_element if r["class"] == kind]
        cost = [r["instructions"] / r["elements"] for r in mine]
        worst = max(mine, key=lambda r: r["instructions"] / r["elements"])
        above = sum(1 for v in cost if v > worst["element_floor"])
        print(f"{kind:16} {float(np.median(cost)):7.2f} {max(cost):7.2f} "
              f"{worst['element_floor']:6.1f} {above:6d}  {worst['shape']}", file=out)
    print(f"{'class':16} {'median':>7} {'worst':>7}  worst shape (MAC/instr, issue 17's "
          f"kernels: graphs through the compiled backend)", file=out)
    for kind in dict.fromkeys(r["class"] for r in sequence):
        mine = [r for r in sequence if r["class"] == kind]
        rate = [r["macs"] / r["instructions"] for r in mine]
        worst = min(mine, key=lambda r: r["macs"] / r["instructions"])
        print(f"{kind:16} {float(np.median(rate)):7.3f} {min(rate):7.3f}  {worst['shape']}",
              file=out)
    if mve:
        for r, count in zip(rows, run_mve.counts, strict=True):
            r["mve_instructions"] = count - MARKER_OVERHEAD
        print(f"Helium path on {args.board}: instructions DSP / MVE per class", file=out)
        print(f"{'class':16} {'median':>7} {'worst':>7} {'MVE MAC/instr':>13}  worst shape",
              file=out)
        for kind in dict.fromkeys(r["class"] for r in rows):
            mine = [r for r in rows if r["class"] == kind]
            gains = [r["instructions"] / r["mve_instructions"] for r in mine]
            worst = min(mine, key=lambda r: r["instructions"] / r["mve_instructions"])
            rate = float(np.median([r["macs"] / r["mve_instructions"] for r in mine]))
            print(f"{kind:16} {float(np.median(gains)):6.2f}x {min(gains):6.2f}x {rate:13.3f}"
                  f"  {worst['shape']}", file=out)
    if args.json:
        keys = ("class", "shape", "macs", "instructions", "floor", "mve_instructions",
                "elements", "output_elements")
        print(json.dumps([{k: r[k] for k in keys if k in r}
                          for r in [*rows, *per_element, *sequence]],
                         indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="JSON list on stdout")
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--sweep", action="store_true", help="random shapes per layer class")
    ap.add_argument("--seed", type=int, default=0, help="sweep: shape seed")
    ap.add_argument("--per-class", type=int, default=30, help="sweep: shapes per class")
    ap.add_argument("--classes", default="",
                    help="sweep: only these classes, comma-separated (seq: issue 17's)")
    ap.add_argument("--kernels-only", action="store_true",
                    help="sweep: only the conv, pointwise, depthwise and FC kernel classes")
    args = ap.parse_args(argv)
    if args.sweep:
        return sweep(args)

    entries = layers()
    cases = [case for _, _, case in entries]
    rows = []
    with tempfile.TemporaryDirectory(prefix="th-kbench-") as tmp:
        for path, portable, no_mve, interleaved in paths(args.board):
            fw = build_firmware(args.board, Path(tmp), portable=portable, big=True,
                                no_mve=no_mve)
            run = run_cases(fw, cases, interleaved=interleaved, icount=True)
            if len(run.counts) != len(cases):
                raise SystemExit(f"{len(run.counts)} instruction counts for {len(cases)} layers")
            for (name, kind, case), result, count in zip(entries, run.results, run.counts,
                                                         strict=True):
                problem = check_result(case, result)
                if problem is not None:
                    raise SystemExit(f"{name} [{path}]: output differs from reference: "
                                     f"{problem}")
                instructions = count - MARKER_OVERHEAD
                rows.append({"layer": name, "path": path, "kind": kind, "macs": case.macs,
                             "instructions": instructions,
                             "mac_per_instruction": round(case.macs / instructions, 3)})

    out = sys.stderr if args.json else sys.stdout
    dsp = {r["layer"]: r["instructions"] for r in rows if r["path"] == "dsp"}
    print(f"{'layer':30} {'path':9} {'MACs':>10} {'instructions':>13} {'MAC/instr':>9} "
          f"{'target':>6} {'vs dsp':>6}", file=out)
    for r in rows:
        target = TARGETS[r["kind"]] if r["path"] == "dsp" else None
        target = "" if target is None else target
        gain = f"{dsp[r['layer']] / r['instructions']:.2f}x" if r["path"] == "mve" else ""
        print(f"{r['layer']:30} {r['path']:9} {r['macs']:>10,} {r['instructions']:>13,} "
              f"{r['mac_per_instruction']:>9.3f} {target:>6} {gain:>6}",
              file=out)
    if args.json:
        print(json.dumps([{k: r[k] for k in ("layer", "path", "macs", "instructions",
                                              "mac_per_instruction")} for r in rows],
                         indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
