"""Per-instruction account of one kernel call (issue 14): how often each instruction of the
kernel ran, on the DSP kernel firmware under QEMU (mps2-an386, single-stepped with -d exec as
bench/pointwise_calls.py's --trace, counted between th_mark_start and th_mark_stop), printed
as the executed lines of each function's disassembly with their counts. The counts say what
an output costs: a line run once a block of four channels or once a row shows its loop.

    python bench/pc_trace.py SHAPE [--maxpool [--prepared]] [--functions NAME ...] [--min N]
                             [--build DIR]

SHAPE: a kernel sweep shape as tests/kernels/sweep.py describes it (seeds 0-4), e.g.
"19->142 per-tensor" (fully connected), "17x17x19" (the first shape containing it); with
--maxpool, a bench/maxpool.py shape (29x6x64_k6x4_s1_same; --prepared: the compiled backend's
call, th_maxpool_s8_prepared). --functions: the functions to
disassemble (default: every function the call ran, most instructions first); --min: only the
lines run at least N times. Outputs checked against the NumPy reference. Numbers, not a test.
"""

from __future__ import annotations

import argparse
import bisect
import importlib.util
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# tests/ first: its `kernels` package, not bench/kernels.py.
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from pointwise_calls import pc_counts, symbols  # noqa: E402

from kernels.cases import check_result  # noqa: E402
from kernels.sweep import describe, sweep_cases  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402


def find_case(shape: str, maxpool: bool, prepared: bool = False):
    """The case SHAPE names: bench/maxpool.py's, or the first sweep case containing it."""
    if maxpool:
        spec = importlib.util.spec_from_file_location("bench_maxpool",
                                                      REPO / "bench" / "maxpool.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.case(shape, "fast", prepared)
    for seed in range(5):
        for _kind, case in sweep_cases(seed, 30):
            if shape in describe(case):
                return case
    raise SystemExit(f"no sweep shape contains {shape!r}")


def annotated(elf: Path, function: str, counts: Counter, least: int) -> list[str]:
    """The function's disassembly lines run at least `least` times, each with its count."""
    out = subprocess.run(["arm-none-eabi-objdump", "-d", f"--disassemble={function}",
                          str(elf)], capture_output=True, text=True, check=True).stdout
    lines = []
    for line in out.splitlines():
        head = line.split(":", 1)[0].strip()
        if not head or any(ch not in "0123456789abcdef" for ch in head) or "\t" not in line:
            continue
        n = counts.get(int(head, 16), 0)
        if n >= least:
            lines.append(f"{n:7d} {line.strip()}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape")
    ap.add_argument("--maxpool", action="store_true", help="a bench/maxpool.py shape")
    ap.add_argument("--prepared", action="store_true", help="with --maxpool: the prepared entry")
    ap.add_argument("--functions", nargs="*", default=[])
    ap.add_argument("--min", type=int, default=1, help="lines run at least this often")
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--build", default=str(REPO / "build" / "pc_trace"))
    args = ap.parse_args()
    case = find_case(args.shape, args.maxpool, args.prepared)
    fw = build_firmware(args.board, Path(args.build), portable=False, big=True)
    run = run_cases(fw, [case], interleaved=True, icount=True, timeout=600.0)
    problem = check_result(case, run.results[0])
    if problem is not None:
        raise SystemExit(f"{args.shape}: {problem}")
    with tempfile.TemporaryDirectory(prefix="th-pctrace-") as tmp:
        counts = pc_counts(fw.elf, args.board, [case], Path(tmp))[0]
    addrs, names = symbols(fw.elf)
    per_function: Counter = Counter()
    for pc, n in counts.items():
        per_function[names[bisect.bisect_right(addrs, pc) - 1]] += n
    print(f"{args.shape}: {run.counts[0] - MARKER_OVERHEAD} instructions "
          f"({sum(counts.values())} traced)")
    for name, n in per_function.most_common():
        print(f"  {n:8d} {name}")
    for name in args.functions or [name for name, _ in per_function.most_common()]:
        lines = annotated(fw.elf, name, counts, args.min)
        if lines:
            print(f"\n{name}:")
            print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
