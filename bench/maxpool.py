"""MAX_POOL_2D (issue 14's pool floor: <= 6 instructions per input element) on the DSP kernel
firmware: exact instructions per call under the icount plugin.

    python bench/maxpool.py [--board mps2-an386] [--scratch fast|separable|none] [--trace]
                            [--prepared] [SHAPE ...]

SHAPE as the pool sweep prints it, joined by underscores: 29x6x64_k6x4_s1_same (default: the
sweep's max pools above 6 per element on main in session 16, and two that share their paths).
Outputs checked against the NumPy reference; --trace adds per shape the instructions per
function. The sweep (bench/kernels.py --sweep --classes pool) measures the same calls through
the compiled backend, which adds the call from model.c. Numbers, not pass/fail.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
# tests/ first: its `kernels` package, not bench/kernels.py.
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from pointwise_calls import trace_calls  # noqa: E402

from kernels.cases import Op, check_result  # noqa: E402
from kernels.cases_ops import PoolCase  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.arith.padding import compute_window_padding  # noqa: E402
from tinyhost.arith.pool import PoolParams  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402
from tinyhost.ir import Padding  # noqa: E402
from tinyhost.plan.scratch import maxpool_fast_scratch, maxpool_scratch  # noqa: E402

DEFAULT = ["29x6x64_k6x4_s1_same", "24x3x12_k3x2_s1_valid", "34x48x7_k7x5_s1_valid",
           "30x4x4_k3x3_s2_same", "3x30x4_k2x7_s2_same", "4x4x20_k4x3_s1_same",
           "43x9x6_k5x6_s1_same", "13x11x1_k6x4_s3_same", "41x13x64_k7x3_s1_same",
           "29x21x58_k3x2_s1_valid"]  # fmt: skip


def case(text: str, scratch: str, prepared: bool = False) -> PoolCase:
    hwc, k, s, pad = text.split("_")
    h, w, c = (int(v) for v in hwc.split("x"))
    kh, kw = (int(v) for v in k[1:].split("x"))
    stride = int(s[1:])
    pads = compute_window_padding(Padding[pad.upper()], h, w, kh, kw, stride, stride)
    p = PoolParams(stride, stride, kh, kw, pads.top, pads.left, pads.bottom, pads.right,
                   -128, 127)
    x = np.random.default_rng(h * w * c).integers(-128, 128, (1, h, w, c)).astype(np.int8)
    given = None
    if prepared:  # the compiled backend's call: th_maxpool_s8_prepared, the scratch granted
        k, st = (kh, kw), (stride, stride)
        ohw = (pads.out_h, pads.out_w)
        given = {"none": 0, "separable": maxpool_scratch(w, c, ohw, k, st),
                 "fast": max(maxpool_scratch(w, c, ohw, k, st),
                             maxpool_fast_scratch(w, c, ohw, k, st))}[scratch]
    return PoolCase(Op.MAXPOOL, x, p, (1, pads.out_h, pads.out_w, c),
                    no_scratch=scratch == "none", fast_scratch=scratch == "fast",
                    prepared_scratch=given)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--build", default=str(REPO / "build" / "bench_maxpool"))
    ap.add_argument("--scratch", default="fast", choices=["fast", "separable", "none"])
    ap.add_argument("--trace", action="store_true", help="per-function counts")
    ap.add_argument("--prepared", action="store_true",
                    help="th_maxpool_s8_prepared on the host's struct (the compiled call)")
    ap.add_argument("shapes", nargs="*", default=DEFAULT)
    args = ap.parse_args()
    cases = [case(t, args.scratch, args.prepared) for t in args.shapes]
    fw = build_firmware(args.board, Path(args.build), portable=False, big=True)
    run = run_cases(fw, cases, interleaved=True, icount=True, timeout=1800.0)
    for text, c, result, count in zip(args.shapes, cases, run.results, run.counts,
                                      strict=True):  # fmt: skip
        problem = check_result(c, result)
        if problem is not None:
            raise SystemExit(f"{text}: {problem}")
        n, el = count - MARKER_OVERHEAD, c.x.size
        print(f"{text:<26} el={el:>6} out={int(np.prod(c.out_shape)):>6} instr={n:>7} "
              f"per_el={n / el:6.2f}")
    if args.trace:
        with tempfile.TemporaryDirectory(prefix="th-maxpool-") as tmp:
            for text, funcs in zip(args.shapes, trace_calls(fw.elf, args.board, cases,
                                                            Path(tmp)), strict=True):  # fmt: skip
                print(f"{text}: {sum(funcs.values())} instructions")
                for name, k in funcs.most_common():
                    print(f"  {k:8d} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
