"""FULLY_CONNECTED int8 on short inputs (issue 14): exact instructions per output on QEMU.

    python bench/fc_short.py [--seeds 0,1,2,3,4] [--max-cin 300] [--board mps2-an386]
                             [--shape TEXT] [--no-fixed] [--trace]

Runs the sweep's fully connected shapes (tests/kernels/sweep.py, the seeds given) with an
input of at most --max-cin values, plus fixed short shapes (cin 1-40, both
requantizations), on the DSP kernel firmware under the icount plugin; prints per shape the
instructions, instructions per output and MAC/instruction (the floor is 0.6), outputs
checked against the NumPy reference; --shape keeps the shapes whose text contains it,
--trace adds per shape the instructions per function (bench/pointwise_calls.py's trace).
Numbers, not a test.
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

from kernels.cases import FcCase, Op, check_result  # noqa: E402
from kernels.sweep import _quant, describe, sweep_cases  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.arith.conv import FullyConnectedParams  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402


def fixed_cases() -> list[FcCase]:
    """Short inputs of both kinds: cin 1-40 (every tail), 64-133 outputs."""
    rng = np.random.default_rng(1414)
    out = []
    for i in range(24):
        cin, cout = 1 + i * 40 // 24, 64 + 3 * i
        per_channel = i % 2 == 1
        mult, shift = _quant(rng, cout if per_channel else 1, cin)
        p = FullyConnectedParams(input_offset=int(rng.integers(-20, 20)), filter_offset=0,
                                 output_offset=int(rng.integers(-20, 20)),
                                 out_multiplier=mult, out_shift=shift, act_min=-128,
                                 act_max=127)
        x = rng.integers(-128, 128, (1, cin)).astype(np.int8)
        w = rng.integers(-127, 128, (cout, cin)).astype(np.int8)
        bias = rng.integers(-20000, 20000, cout).astype(np.int32)
        out.append(FcCase(Op.FC_PER_CHANNEL if per_channel else Op.FC, x, w, bias, p))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--max-cin", type=int, default=300)
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--build", default=str(REPO / "build" / "fc_short"))
    ap.add_argument("--shape", default="", help="only shapes whose text contains this")
    ap.add_argument("--no-fixed", action="store_true", help="only the sweep's shapes")
    ap.add_argument("--trace", action="store_true", help="per-function counts")
    args = ap.parse_args()
    cases: list[tuple[str, FcCase]] = []
    for s in (int(v) for v in args.seeds.split(",") if v):
        cases += [(f"seed {s}", c) for kind, c in sweep_cases(s, 30)
                  if kind == "fully_connected" and c.w.shape[1] <= args.max_cin]
    if not args.no_fixed:
        cases += [("fixed", c) for c in fixed_cases()]
    cases = [(where, c) for where, c in cases if args.shape in describe(c)]
    fw = build_firmware(args.board, Path(args.build), portable=False, big=True)
    run = run_cases(fw, [c for _, c in cases], interleaved=True, icount=True, timeout=1800.0)
    print(f"{'set':7} {'shape':24} {'instr':>7} {'/out':>7} {'MAC/i':>6}")
    for (where, case), result, count in zip(cases, run.results, run.counts, strict=True):
        problem = check_result(case, result)
        if problem is not None:
            raise SystemExit(f"{describe(case)}: {problem}")
        n = count - MARKER_OVERHEAD
        print(f"{where:7} {describe(case):24} {n:7d} {n / case.w.shape[0]:7.1f} "
              f"{case.macs / n:6.3f}")
    if args.trace:
        with tempfile.TemporaryDirectory(prefix="th-fcshort-") as tmp:
            shown = [c for _, c in cases]
            for case, funcs in zip(shown, trace_calls(fw.elf, args.board, shown, Path(tmp)),
                                   strict=True):
                print(f"{describe(case)}: {sum(funcs.values())} instructions")
                for name, k in funcs.most_common():
                    print(f"  {k:8d} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
