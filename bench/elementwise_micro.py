"""Elementwise kernels one call at a time: exact instructions of th_add_s8_tables /
th_sub_s8_tables / th_mul_s8 on fixed shapes of each broadcast form (QEMU, the kernel test
firmware, DSP build), per output and per input element (both operands), outputs checked
against the NumPy reference. Numbers, not pass/fail.

    python bench/elementwise_micro.py [--board mps2-an386]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from kernels.cases import Op, check_result  # noqa: E402
from kernels.cases_ops import AddCase, MulCase  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.arith.elementwise import AddParams, MulParams  # noqa: E402
from tinyhost.arith.fixedpoint import quantize_multiplier  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402

# (op, big shape, other shape, relu6)
SHAPES = [
    (Op.ADD, (1, 1, 1, 1), (1, 1, 1, 1), False),
    (Op.ADD, (1, 1, 1, 2), (1, 1, 1, 2), False),
    (Op.ADD, (1, 1, 1, 4), (1, 1, 1, 1), False),
    (Op.ADD, (1, 20, 1, 2), (1, 20, 1, 1), True),
    (Op.ADD, (1, 6, 1, 2), (1, 1, 1, 2), False),
    (Op.MUL, (1, 3, 20, 3), (1, 3, 20, 3), True),
    (Op.ADD, (1, 14, 26, 14), (1, 14, 26, 14), False),
    (Op.SUB, (1, 23, 26, 12), (1, 23, 26, 12), True),
    (Op.ADD, (1, 38, 30, 24), (1, 1, 1, 24), False),
    (Op.ADD, (1, 32, 19, 44), (1, 1, 1, 44), True),
    (Op.SUB, (1, 6, 6, 52), (1, 1, 1, 52), False),
    (Op.SUB, (1, 5, 34, 36), (1, 1, 1, 36), False),
    (Op.MUL, (1, 38, 18, 50), (1, 1, 1, 50), True),
    (Op.MUL, (1, 6, 35, 33), (1, 1, 1, 33), False),
    (Op.SUB, (1, 37, 16, 7), (1, 37, 16, 1), False),
    (Op.ADD, (1, 9, 23, 58), (1, 9, 23, 1), False),
    (Op.MUL, (1, 16, 18, 17), (1, 16, 18, 1), True),
    (Op.ADD, (1, 16, 12, 32), (1, 1, 1, 1), False),
]


def _case(i: int, op: Op, big: tuple, other: tuple, relu6: bool) -> AddCase | MulCase:
    rng = np.random.default_rng(i)
    s1, s2, so = (float(np.float32(rng.uniform(0.01, 0.2))) for _ in range(3))
    z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
    lo, hi = (max(-128, zo), min(127, zo + round(6 / so))) if relu6 else (-128, 127)
    a = rng.integers(-128, 128, big).astype(np.int8)
    b = rng.integers(-128, 128, other).astype(np.int8)
    if op is Op.MUL:
        m, sh = quantize_multiplier(s1 * s2 / so)
        return MulCase(op, a, b, MulParams(-z1, -z2, zo, m, sh, lo, hi))
    twice = 2 * max(s1, s2)
    m1, e1 = quantize_multiplier(s1 / twice)
    m2, e2 = quantize_multiplier(s2 / twice)
    mo, eo = quantize_multiplier(twice / ((1 << 20) * so))
    p = AddParams(-z1, -z2, zo, 20, m1, e1, m2, e2, mo, eo, lo, hi)
    return AddCase(op, a, b, p, tables=int(np.prod(big)) >= 128)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--board", default="mps2-an386")
    args = ap.parse_args()
    cases = [_case(i, *s) for i, s in enumerate(SHAPES)]
    fw = build_firmware(args.board, REPO / "build" / "elementwise_micro", big=True)
    run = run_cases(fw, cases, interleaved=True, icount=True)
    for (op, big, other, relu6), case, result, n in zip(SHAPES, cases, run.results,
                                                        run.counts, strict=True):
        n -= MARKER_OVERHEAD
        problem = check_result(case, result)
        if problem is not None:
            raise SystemExit(f"{op.name} {big} {other}: {problem}")
        out, inputs = int(np.prod(big)), int(np.prod(big)) + int(np.prod(other))
        print(f"{op.name:4s} {'x'.join(map(str, big[1:])):10s} vs "
              f"{'x'.join(map(str, other[1:])):9s}{' relu6' if relu6 else '      '} "
              f"{n:8d} instr  {n / out:6.2f}/out  {n / inputs:6.2f}/in")
    return 0


if __name__ == "__main__":
    sys.exit(main())
