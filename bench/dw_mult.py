"""Depthwise with a channel multiplier (th_dw_conv_mult_s8, path DW_MULT, and the shapes around
its dispatch bound): exact instructions per output on QEMU (kernel firmware, icount plugin),
outputs checked against the NumPy reference. Numbers, not a test.

    python bench/dw_mult.py [--board mps2-an386] [--json]
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

from kernels.cases import ConvCase, Op, check_result  # noqa: E402
from kernels.sweep import _conv_case, describe  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402
from tinyhost.plan.scratch import dw_mult_applies  # noqa: E402

# (input h x w, input channels, multiplier, kernel, stride)
SHAPES = [
    ((9, 9), 1, 26, (3, 3), (2, 2)),
    ((41, 41), 1, 26, (3, 3), (2, 2)),
    ((36, 36), 1, 30, (3, 3), (2, 2)),
    ((66, 66), 1, 11, (3, 3), (2, 2)),
    ((66, 66), 1, 8, (3, 3), (2, 2)),
    ((47, 47), 1, 26, (3, 3), (1, 1)),
    ((11, 11), 1, 10, (3, 3), (2, 2)),
    ((16, 16), 1, 32, (2, 2), (1, 1)),
    ((77, 77), 1, 9, (2, 2), (1, 1)),
    ((40, 40), 2, 8, (3, 3), (1, 1)),
    ((40, 40), 4, 4, (3, 3), (1, 1)),
    ((24, 24), 1, 16, (4, 4), (1, 1)),
    ((59, 59), 5, 3, (3, 3), (2, 2)),
    ((77, 77), 2, 2, (3, 3), (2, 2)),
    ((33, 33), 2, 4, (3, 3), (2, 2)),
    ((79, 79), 2, 2, (3, 3), (1, 1)),
    ((40, 40), 3, 3, (3, 3), (1, 1)),
    ((49, 49), 8, 2, (2, 2), (2, 2)),
    ((48, 48), 4, 3, (2, 2), (1, 1)),
    ((32, 32), 6, 4, (2, 2), (2, 2)),
    ((40, 40), 1, 12, (2, 2), (1, 1)),
    ((30, 30), 3, 2, (5, 5), (1, 1)),
    ((30, 30), 1, 8, (1, 2), (1, 1)),
    ((20, 20), 4, 2, (4, 4), (2, 2)),
]


def cases() -> list[ConvCase]:
    rng = np.random.default_rng(7)
    out = []
    for hw, cin, mult, k, stride in SHAPES:
        case = None
        while case is None:
            case = _conv_case(rng, Op.DW, hw, cin, cin * mult, k, stride, (1, 1), mult)
        out.append(case)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    todo = cases()
    with tempfile.TemporaryDirectory(prefix="th-dwm-") as tmp:
        fw = build_firmware(args.board, Path(tmp), portable=False, big=True)
        run = run_cases(fw, todo, interleaved=True, icount=True, timeout=1800.0)
    rows = []
    for case, result, count in zip(todo, run.results, run.counts, strict=True):
        problem = check_result(case, result)
        if problem is not None:
            raise SystemExit(f"{describe(case)}: output differs from reference: {problem}")
        n = count - MARKER_OVERHEAD
        outs = int(np.prod(case.out_shape))
        k = case.w.shape[1:3]
        rows.append({"shape": describe(case), "macs": case.macs, "instructions": n,
                     "per_output": round(n / outs, 2),
                     "mac_per_instruction": round(case.macs / n, 3),
                     "dw_mult": dw_mult_applies(k, case.p.ch_mult)})
    for r in rows:
        print(f"{r['shape']:42s} {r['instructions']:>10,} {r['per_output']:7.2f}/out "
              f"{r['mac_per_instruction']:.3f} MAC/ins {'DW_MULT' if r['dw_mult'] else ''}",
              file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
