"""Depthwise with a channel multiplier > 1 (issue 14, class depthwise): the sweep's shapes of
that kind for the given seeds, on QEMU with exact instruction counts (DSP kernel firmware, as
bench/kernels.py --sweep runs them). Prints per shape MAC/instruction, instructions per
output and the floor; --json: one row per shape; --trace: instructions per function
(bench/pointwise_calls.py's single-stepped trace) of the shapes containing --shape."""

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

from kernels.cases import check_result  # noqa: E402
from kernels.sweep import describe, sweep_cases  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--per-class", type=int, default=30)
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--shape", default="", help="only shapes whose text contains this")
    ap.add_argument("--trace", action="store_true", help="per-function counts")
    args = ap.parse_args(argv)
    cases = [case for seed in args.seeds.split(",")
             for kind, case in sweep_cases(int(seed), args.per_class)
             if kind == "depthwise" and case.p.ch_mult > 1
             and args.shape in describe(case)]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="th-dwm-") as tmp:
        fw = build_firmware(args.board, Path(tmp), portable=False, big=True)
        run = run_cases(fw, cases, interleaved=True, icount=True, timeout=1800.0)
        traces = trace_calls(fw.elf, args.board, cases, Path(tmp)) if args.trace else []
    rows = []
    for case, result, count in zip(cases, run.results, run.counts, strict=True):
        problem = check_result(case, result)
        if problem is not None:
            raise SystemExit(f"{describe(case)}: output differs from reference: {problem}")
        n = count - MARKER_OVERHEAD
        taps = case.w.shape[1] * case.w.shape[2]
        floor = 0.35 if taps * case.p.ch_mult >= 9 else 0.2  # bench/kernels.py sweep_floor
        rows.append({"shape": describe(case), "macs": case.macs, "instructions": n,
                     "per_output": n / int(np.prod(case.out_shape)),
                     "floor": floor})
    for case, funcs in zip(cases if traces else [], traces, strict=True):
        print(f"{describe(case)}: {sum(funcs.values())} instructions")
        for name, k in funcs.most_common(12):
            print(f"  {k:8d} {name}")
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        rate = r["macs"] / r["instructions"]
        flag = "" if r["floor"] is None or rate >= r["floor"] else "  < floor"
        print(f"{r['shape']:42} {rate:6.3f} {r['per_output']:7.2f}/out  floor {r['floor']}{flag}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
