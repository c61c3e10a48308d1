"""Pointwise CONV_2D (issue 14): exact instructions per call and per output on QEMU (kernel
firmware, DSP path, the kernel's fast scratch), outputs checked, for the pointwise sweep's
shapes (tests/kernels/sweep.py), and with --trace where each call's instructions go, per
function (QEMU single-stepped with -d exec: one logged block per executed instruction,
counted between th_mark_start and th_mark_stop and charged to the function holding the pc).

    python bench/pointwise_calls.py [--seeds 0,1,2] [--all] [--trace] [--shape TEXT]

Without --all only the rows with a floor (MACs per output >= 27) that run under 0.6
MAC/instruction are shown (" <": below the floor of 0.5). Not a test.
"""

from __future__ import annotations

import argparse
import bisect
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from kernels.cases import build_flags_record, check_result  # noqa: E402
from kernels.sweep import describe, sweep_cases  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.boards import load_board  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402
from tinyhost.deploy.qemu import qemu_command  # noqa: E402


def symbols(elf: Path) -> tuple[list[int], list[str]]:
    """Sorted function start addresses and names of an ELF."""
    out = subprocess.run(["arm-none-eabi-nm", "-n", "--defined-only", str(elf)],
                         capture_output=True, text=True, check=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            addrs.append(int(parts[0], 16) & ~1)
            names.append(parts[2])
    return addrs, names


def pc_counts(elf: Path, board: str, cases: list, tmp: Path) -> list[Counter]:
    """Per case, how often each pc ran between the marks (QEMU single-stepped, -d exec)."""
    records = [build_flags_record(0)] + [c.encode(i + 1, True) for i, c in enumerate(cases)]
    (tmp / "cases.bin").write_bytes(b"".join(records))
    log = tmp / "exec.log"
    cmd = qemu_command(load_board(board), elf, "stdio", None,
                       ["-singlestep", "-d", "exec,nochain", "-D", str(log)])
    subprocess.run(cmd, cwd=tmp, stdin=subprocess.DEVNULL, capture_output=True, timeout=600,
                   check=False)
    addrs, names = symbols(elf)
    start = addrs[names.index("th_mark_start")]
    stop = addrs[names.index("th_mark_stop")]
    calls: list[Counter] = []
    current: Counter | None = None
    with log.open() as f:
        for line in f:
            if not line.startswith("Trace"):
                continue
            pc = int(line.split("[")[1].split("/")[1], 16)
            if pc == start:
                current = Counter()
                continue
            if pc == stop and current is not None:
                calls.append(current)
                current = None
                continue
            if current is not None:
                current[pc] += 1
    return calls


def trace_calls(elf: Path, board: str, cases: list, tmp: Path) -> list[Counter]:
    """Per case, instructions per function between the marks."""
    addrs, names = symbols(elf)
    calls: list[Counter] = []
    for pcs in pc_counts(elf, board, cases, tmp):
        per_function: Counter = Counter()
        for pc, n in pcs.items():
            per_function[names[bisect.bisect_right(addrs, pc) - 1]] += n
        calls.append(per_function)
    return calls


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--all", action="store_true", help="every pointwise shape")
    ap.add_argument("--shape", default="", help="only shapes whose text contains this")
    ap.add_argument("--trace", action="store_true", help="per-function counts")
    ap.add_argument("--build-dir", default="", help="keep the firmware build here")
    args = ap.parse_args(argv)
    cases = []
    for seed in (int(s) for s in args.seeds.split(",")):
        for kind, case in sweep_cases(seed, 30):
            if kind != "pointwise" or args.shape not in describe(case):
                continue
            cases.append((seed, case))
    with tempfile.TemporaryDirectory(prefix="th-pwcalls-") as tmp:
        fw = build_firmware(args.board, Path(args.build_dir or tmp), portable=False, big=True)
        run = run_cases(fw, [c for _, c in cases], interleaved=True, icount=True,
                        timeout=1800.0)
        shown = []
        for (seed, case), result, count in zip(cases, run.results, run.counts, strict=True):
            problem = check_result(case, result)
            if problem is not None:
                raise SystemExit(f"{describe(case)}: output differs from reference: {problem}")
            n = count - MARKER_OVERHEAD
            outs = int(case.out_shape[1] * case.out_shape[2] * case.out_shape[3])
            cin = case.x.shape[3]
            rate = case.macs / n
            if not args.all and (cin < 27 or rate >= 0.6):
                continue
            shown.append(case)
            mark = " <" if cin >= 27 and rate < 0.5 else ""
            print(f"s{seed} {describe(case):40} {n:8d} instr {rate:6.3f} MAC/instr "
                  f"{n / outs:7.1f} per output{mark}")
        if args.trace and shown:
            for case, funcs in zip(shown, trace_calls(fw.elf, args.board, shown, Path(tmp)),
                                   strict=True):
                print(f"{describe(case)}: {sum(funcs.values())} instructions")
                for name, k in funcs.most_common():
                    print(f"  {k:8d} {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
