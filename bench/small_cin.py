"""Few-input-channel CONV_2D shapes (issue 14, th_conv_small_cin_s8.c and the paths next to
it): exact instructions per output on QEMU (kernel firmware, DSP path), outputs checked.

    python bench/small_cin.py [--board mps2-an386]

Not a test: prints per shape the MAC/instruction and instructions per output element.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from kernels.cases import Op, check_result  # noqa: E402
from kernels.layers import layer_case  # noqa: E402
from kernels.sweep import describe  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402

# (input h, w), Cin, Cout, kernel, stride: SAME padding
SHAPES = [((61, 25), 1, 4, 7, 2), ((42, 27), 2, 4, (5, 3), 1), ((48, 48), 3, 8, 3, 2),
          ((49, 10), 1, 64, (10, 4), 2), ((42, 31), 3, 12, 3, 2), ((42, 31), 3, 11, 3, 2),
          ((23, 31), 3, 8, 3, 2), ((23, 31), 3, 7, 3, 2), ((22, 1), 2, 4, 5, 2),
          ((22, 1), 2, 3, 5, 2), ((1, 40), 1, 8, (1, 5), 2), ((30, 1), 3, 8, (5, 1), 1)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    args = ap.parse_args(argv)
    cases = [layer_case(Op.CONV, hw, cin, cout, k, s, seed=i)
             for i, (hw, cin, cout, k, s) in enumerate(SHAPES)]
    with tempfile.TemporaryDirectory(prefix="th-smallcin-") as tmp:
        fw = build_firmware(args.board, Path(tmp), portable=False, big=True)
        run = run_cases(fw, cases, interleaved=True, icount=True, timeout=600.0)
    for case, result, count in zip(cases, run.results, run.counts, strict=True):
        problem = check_result(case, result)
        if problem is not None:
            raise SystemExit(f"{describe(case)}: output differs from reference: {problem}")
        n = count - MARKER_OVERHEAD
        outs = int(case.out_shape[1] * case.out_shape[2] * case.out_shape[3])
        print(f"{describe(case):36} {case.macs / n:6.3f} MAC/instr {n / outs:7.1f} per output")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
