"""General CONV_2D with few output channels (issue 14, the im2col and direct paths): exact
instructions per output on QEMU (kernel firmware, DSP path), outputs checked, for the conv
sweep's shapes (tests/kernels/sweep.py) with Cin >= 4 and Cout <= --max-cout.

    python bench/few_cout.py [--seeds 0,1,2] [--max-cout 9] [--board mps2-an386]

Not a test: prints per shape the MAC/instruction, instructions per output element and the
issue's floor.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from kernels.cases import check_result  # noqa: E402
from kernels.sweep import describe, sweep_cases  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--max-cout", type=int, default=9)
    args = ap.parse_args(argv)
    cases = []
    for seed in (int(s) for s in args.seeds.split(",")):
        cases += [(seed, case) for kind, case in sweep_cases(seed, 30)
                  if kind == "conv" and case.x.shape[3] >= 4
                  and case.out_shape[3] <= args.max_cout]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="th-fewcout-") as tmp:
        fw = build_firmware(args.board, Path(tmp), portable=False, big=True)
        run = run_cases(fw, [c for _, c in cases], interleaved=True, icount=True,
                        timeout=1800.0)
    for (seed, case), result, count in zip(cases, run.results, run.counts, strict=True):
        problem = check_result(case, result)
        if problem is not None:
            raise SystemExit(f"{describe(case)}: output differs from reference: {problem}")
        n = count - MARKER_OVERHEAD
        outs = int(case.out_shape[1] * case.out_shape[2] * case.out_shape[3])
        rate = case.macs / n
        mark = " <" if rate < 0.5 else ""
        print(f"s{seed} {describe(case):40} K {case.macs // outs:5d} {rate:6.3f} MAC/instr "
              f"{n / outs:7.1f} per output{mark}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
