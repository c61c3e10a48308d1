"""Run kernel test cases on an emulated board: build the test firmware, write cases.bin,
run QEMU with semihosting (optionally under the icount plugin), read results.bin."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernels.cases import Case, ConvCase, Result, build_flags_record, decode_results
from kernels.harness import REPO
from tinyhost.deploy import build, run_semihosted, run_with_icount
from tinyhost.deploy.build import BuildResult
from tinyhost.plan.scratch import dw_general_scratch

FIRMWARE_DIR = Path(__file__).resolve().parent / "firmware"


# Buffer sizes of the default firmware build (tests/kernels/firmware/main.c).
RECORD_CAP, RESULT_CAP, ARENA_CAP = 32768, 16384, 49152


def fits_small_firmware(case: Case, interleaved: bool = True) -> bool:
    """Whether a case fits the default firmware's buffers (netduinoplus2 has 128 KiB RAM)."""
    record = len(case.encode(0, interleaved))
    out = int(np.prod(case.out_shape))
    # arena: copies of every blob + output + scratch (<= 4 * K + a padded plane) + guards
    scratch = 2 * (case.x.shape[-2] + 8) * (case.x.shape[-3] + 8) if case.x.ndim == 4 else 0
    scratch += 4 * (case.w.size // case.w.shape[0] + 4)
    scratch += 4 * case.w.shape[0]  # the MVE conv's per-channel table
    if isinstance(case, ConvCase) and case.depthwise:
        p = case.p
        scratch = max(scratch, dw_general_scratch(
            case.x.shape[1:3], case.w.shape[1:3], case.out_shape[1:3],
            (p.stride_h, p.stride_w), (p.dilation_h, p.dilation_w), p.ch_mult, True,
            case.x.shape[3]))
    return record <= RECORD_CAP and out + 32 <= RESULT_CAP and \
        record + out + scratch + 512 <= ARENA_CAP


@dataclass(frozen=True)
class TargetRun:
    build_flags: int
    results: list[Result]
    counts: list[int]  # instruction counts per kernel call (icount runs only)


def build_firmware(board: str, build_root: Path, portable: bool = False,
                   big: bool = False, no_mve: bool = False) -> BuildResult:
    """`no_mve`: on an MVE board, the DSP build of the kernels (TH_NN_FORCE_NO_MVE)."""
    name = (f"{board}-{'portable' if portable else 'default'}{'-big' if big else ''}"
            f"{'-nomve' if no_mve else ''}")
    return build(FIRMWARE_DIR, board, build_root / name,
                 defines={"TH_KTEST_PORTABLE": portable, "TH_KTEST_BIG": big,
                          "TH_KTEST_NO_MVE": no_mve}, root=REPO)


def function_disassembly(elf: Path, function: str, mve: bool = False) -> str:
    """arm-none-eabi-objdump of one function (to check which instructions it really has);
    `mve`: decode Helium instructions (Armv8.1-M)."""
    decode = ["-marmv8.1-m.main"] if mve else []
    proc = subprocess.run(["arm-none-eabi-objdump", "-d", *decode, f"--disassemble={function}",
                           str(elf)], capture_output=True, text=True, check=True)
    return proc.stdout


def run_cases(fw: BuildResult, cases: Sequence[Case], interleaved: bool,
              icount: bool = False, timeout: float = 600.0) -> TargetRun:
    """One firmware run over all cases (plus a leading build-flags query)."""
    with tempfile.TemporaryDirectory(prefix="th-ktest-") as tmp:
        records = [build_flags_record(0)]
        records += [case.encode(i + 1, interleaved) for i, case in enumerate(cases)]
        (Path(tmp) / "cases.bin").write_bytes(b"".join(records))
        if icount:
            r = run_with_icount(fw.elf, fw.board, timeout=timeout, cwd=tmp)
            run, counts = r.run, r.counts
        else:
            run, counts = run_semihosted(fw.elf, fw.board, timeout=timeout, cwd=tmp), []
        if not run.ok:
            raise RuntimeError(f"kernel test firmware on {fw.board.name}: {run.describe()}")
        results = decode_results((Path(tmp) / "results.bin").read_bytes())
    if len(results) != len(cases) + 1 or results[0].status != 0:
        raise RuntimeError(f"{len(results)} results for {len(cases) + 1} records")
    flags = int.from_bytes(results[0].data, "little", signed=True)
    return TargetRun(flags, results[1:], counts)
