"""Depthwise 1-D kernels (K x 1, 1 x K, ch_mult 1) of the issue-14 sweep: the very cases of
`bench/kernels.py --sweep --seed S` (same draws, same data), exact instructions per output on
QEMU (kernel firmware, icount plugin), outputs checked against the NumPy reference, with the
path the general depthwise takes (DW_LINES: plan/scratch.py dw_lines_scratch > 0). Numbers,
not a test.

    python bench/dw_lines.py [--seeds 0,1,2] [--board mps2-an386] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from kernels.cases import ConvCase, check_result  # noqa: E402
from kernels.sweep import describe, sweep_cases  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402
from tinyhost.plan.scratch import dw_lines_scratch  # noqa: E402


def one_d(case: ConvCase) -> bool:
    """ch_mult 1 and a 1-D kernel or a one-row / one-column tensor, or a plane of at most 3
    rows or columns."""
    _, h, w, _ = case.x.shape
    kh, kw = case.w.shape[1:3]
    _, oh, ow, _ = case.out_shape
    return case.p.ch_mult == 1 and (kh == 1 or kw == 1 or min(oh, ow) <= 3)


def cases(seeds: list[int]) -> list[tuple[int, ConvCase]]:
    return [(seed, case) for seed in seeds for kind, case in sweep_cases(seed, 30)
            if kind == "depthwise" and isinstance(case, ConvCase) and one_d(case)]


def lines_taken(case: ConvCase) -> bool:
    p = case.p
    k = (int(case.w.shape[1]), int(case.w.shape[2]))
    return dw_lines_scratch(k, case.out_shape[1:3], (p.stride_h, p.stride_w),
                            (p.dilation_h, p.dilation_w), p.ch_mult, case.x.shape[3]) > 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    todo = cases([int(s) for s in args.seeds.split(",")])
    with tempfile.TemporaryDirectory(prefix="th-dwl-") as tmp:
        fw = build_firmware(args.board, Path(tmp), portable=False, big=True)
        run = run_cases(fw, [c for _, c in todo], interleaved=True, icount=True,
                        timeout=1800.0)
    rows = []
    for (seed, case), result, count in zip(todo, run.results, run.counts, strict=True):
        problem = check_result(case, result)
        if problem is not None:
            raise SystemExit(f"{describe(case)}: output differs from reference: {problem}")
        n = count - MARKER_OVERHEAD
        outs = int(np.prod(case.out_shape))
        kh, kw = case.w.shape[1:3]
        floor = 0.35 if kh * kw >= 9 else 0.2
        rows.append({"seed": seed, "shape": describe(case), "macs": case.macs,
                     "instructions": n, "per_output": round(n / outs, 2),
                     "mac_per_instruction": round(case.macs / n, 3), "floor": floor,
                     "floor_per_output": round(kh * kw / floor, 2),
                     "lines": lines_taken(case)})
    out = sys.stderr if args.json else sys.stdout
    for r in sorted(rows, key=lambda r: r["mac_per_instruction"] / r["floor"]):
        mark = "<" if r["mac_per_instruction"] < r["floor"] else " "
        print(f"{r['seed']} {r['shape']:40s} {r['instructions']:>9,} {r['per_output']:7.2f}/out "
              f"(floor {r['floor_per_output']:6.2f}) {r['mac_per_instruction']:.3f} {mark} "
              f"{'DW_LINES' if r['lines'] else ''}", file=out)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
