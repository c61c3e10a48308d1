"""Depthwise general path (th_dw_conv_general_s8: rows and plane paths, multiplier 1): the
sweep's depthwise shapes of seeds 0-4 with a 2-D plane, multiplier 1 and a filter other than
3x3 or 1x1 (tests/kernels/sweep.py, kind "any K x K"), exact instructions per output on QEMU
(kernel firmware, icount plugin), outputs checked against the NumPy reference. Numbers, not a
test.

    python bench/dw_general.py [--board mps2-an386] [--seeds 0,1,2,3,4] [--build DIR] [--json]
                               [--shape TEXT] [--trace]

--trace: where each call's instructions go, per function (bench/pointwise_calls.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from pointwise_calls import trace_calls  # noqa: E402

from kernels.cases import ConvCase, check_result  # noqa: E402
from kernels.sweep import describe, sweep_cases  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402


def general(case: ConvCase) -> bool:
    """A multiplier-1 depthwise on a 2-D plane whose filter is not 3x3 or 1x1."""
    _, h, w, _ = case.x.shape
    k = tuple(case.w.shape[1:3])
    return (case.depthwise and case.p.ch_mult == 1 and h > 1 and w > 1
            and k not in ((3, 3), (1, 1)))


def cases(seeds: list[int]) -> list[tuple[int, ConvCase]]:
    return [(seed, case) for seed in seeds for kind, case in sweep_cases(seed, 30)
            if kind == "depthwise" and isinstance(case, ConvCase) and general(case)]


def row(seed: int, case: ConvCase, n: int) -> dict:
    """The JSON row of a measured shape (n instructions)."""
    taps = int(case.w.shape[1] * case.w.shape[2])
    return {"seed": seed, "shape": describe(case), "macs": case.macs, "instructions": n,
            "per_output": round(n / int(np.prod(case.out_shape)), 1), "taps": taps,
            "mac_per_instruction": round(case.macs / n, 3), "floor": 0.35 if taps >= 9 else 0.2}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--build", default=None, help="build directory (kept: incremental)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--shape", default="", help="only shapes whose text contains this")
    ap.add_argument("--trace", action="store_true", help="per-function counts")
    args = ap.parse_args(argv)
    todo = [(seed, case) for seed, case in cases([int(s) for s in args.seeds.split(",")])
            if args.shape in describe(case)]
    with tempfile.TemporaryDirectory(prefix="th-dwg-") as tmp:
        root = Path(args.build) if args.build else Path(tmp)
        fw = build_firmware(args.board, root, portable=False, big=True)
        run = run_cases(fw, [c for _, c in todo], interleaved=True, icount=True,
                        timeout=1800.0)
        traces = (trace_calls(fw.elf, args.board, [c for _, c in todo], Path(tmp))
                  if args.trace else [])
    bad = [f"{describe(case)}: {problem}" for (_, case), result in zip(todo, run.results)
           if (problem := check_result(case, result)) is not None]
    if bad:
        raise SystemExit("outputs differ from the reference:\n" + "\n".join(bad))
    rows = [row(seed, case, count - MARKER_OVERHEAD)
            for (seed, case), count in zip(todo, run.counts, strict=True)]
    out = sys.stderr if args.json else sys.stdout
    for r in sorted(rows, key=lambda r: r["mac_per_instruction"]):
        mark = "<" if r["mac_per_instruction"] < r["floor"] else " "
        print(f"{r['seed']} {r['shape']:40s} {r['instructions']:>9,} {r['per_output']:7.1f}/out "
              f"{r['mac_per_instruction']:.3f} {mark}{r['floor']}", file=out)
    for (_, case), funcs in zip(todo if traces else [], traces, strict=True):
        print(f"{describe(case)}: {sum(funcs.values())} instructions", file=out)
        for name, k in funcs.most_common(12):
            print(f"  {k:8d} {name}", file=out)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
