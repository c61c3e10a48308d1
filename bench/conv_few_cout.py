"""CONV_2D (not 1x1) with 1-4 output channels (issue 14, the direct path): exact instructions
per output on QEMU (kernel firmware, DSP path, the sweep's fast scratch), outputs checked.

    python bench/conv_few_cout.py [--seeds 0,1,2] [--draws N] [--board mps2-an386] [--json]

Shapes: the conv sweep's own (tests/kernels/sweep.py) with Cout <= 4, then --draws more per
seed from the same conv distribution with Cout drawn from 1-4 (the sweep draws Cout from 1-64,
so few of its shapes are this class). Not a test: prints per shape MAC/instruction,
instructions per output element and MACs per output, and the class's median and worst.
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

import kernels.sweep as ks  # noqa: E402
from kernels.cases import ConvCase, check_result  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402


def class_cases(seed: int, draws: int) -> list[tuple[str, ConvCase]]:
    out = [(f"s{seed}", case) for kind, case in ks.sweep_cases(seed, 30)
           if kind == "conv" and isinstance(case, ConvCase) and case.out_shape[3] <= 4]
    rng = np.random.default_rng(1000 + seed)
    n = 0
    while n < draws:
        case = ks.conv(rng, (1, 5))
        if case is None or not ks.MIN_MACS <= case.macs <= ks.MAX_MACS:
            continue
        if (len(case.encode(0, True)) > ks.MAX_RECORD
                or int(np.prod(case.out_shape)) > ks.MAX_OUTPUT):
            continue
        out.append((f"d{seed}", case))
        n += 1
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    cases = [c for seed in (int(s) for s in args.seeds.split(","))
             for c in class_cases(seed, args.draws)]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="th-fewcout-") as tmp:
        fw = build_firmware(args.board, Path(tmp), portable=False, big=True)
        run = run_cases(fw, [c for _, c in cases], interleaved=True, icount=True,
                        timeout=1800.0)
    rows = []
    for (tag, case), result, count in zip(cases, run.results, run.counts, strict=True):
        problem = check_result(case, result)
        if problem is not None:
            raise SystemExit(f"{ks.describe(case)}: output differs from reference: {problem}")
        n = count - MARKER_OVERHEAD
        outs = int(np.prod(case.out_shape))
        k = case.macs // outs
        rate = case.macs / n
        mark = " <" if rate < 0.5 and k >= 27 else ""
        rows.append({"tag": tag, "shape": ks.describe(case), "macs": case.macs,
                     "instructions": n, "per_output": n / outs, "k": k})
        print(f"{tag:4} {ks.describe(case):42} K {k:5d} {rate:6.3f} MAC/instr "
              f"{n / outs:7.1f} per output{mark}", file=sys.stderr if args.json else sys.stdout)
    rates = sorted(r["macs"] / r["instructions"] for r in rows if r["k"] >= 27)
    if rates:
        print(f"floor shapes {len(rates)}: median {rates[len(rates) // 2]:.3f} worst "
              f"{rates[0]:.3f}, below 0.5: {sum(r < 0.5 for r in rates)}",
              file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
