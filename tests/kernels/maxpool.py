"""Shared pieces of the max-pool kernel tests (test_kernels_maxpool_*.py): a case through the
generic entry, its name in failure messages, and the host and Cortex-M4 check loops (each
case through the prepared entry and, for some, the generic one, against the reference)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernels.cases import check_result
from kernels.cases_ops import PoolCase, fits_firmware
from kernels.harness import Driver, build_driver
from kernels.target import build_firmware, run_cases

needs_target = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="arm-none-eabi-gcc or qemu-system-arm not installed")


def generic(case: PoolCase) -> PoolCase:
    """The same call through th_maxpool_s8 with its largest scratch."""
    return PoolCase(case.op, case.x, case.p, case.out_shape, fast_scratch=True)


def named(case: PoolCase) -> str:
    p = case.p
    return (f"{case.x.shape} k{p.filter_h}x{p.filter_w} s{p.stride_h} pad {p.pad_top},"
            f"{p.pad_left},{p.pad_bottom},{p.pad_right} act [{p.act_min}, {p.act_max}] "
            f"scratch {case.prepared_scratch}")


def check_on_host(variant: str, cases: list[PoolCase]) -> None:
    """Every case, then the same through the generic entry, on a host driver build."""
    with Driver(build_driver(variant)) as driver:
        for case in cases:
            for c in (case, generic(case)):
                problem = check_result(c, driver.run(c))
                assert problem is None, f"[{variant}] {named(c)}: {problem}"


def check_on_m4(fw_root: Path, cases: list[PoolCase], min_cases: int, generic_cases: int) -> None:
    """The cases the kernel firmware holds (at least min_cases), the first generic_cases of
    them again through the generic entry, on QEMU mps2-an386 in one run."""
    cases = [c for c in cases if fits_firmware(c)]
    assert len(cases) >= min_cases
    cases += [generic(c) for c in cases[:generic_cases]]
    run = run_cases(build_firmware("mps2-an386", fw_root), cases, interleaved=True)
    problems = [f"{named(c)}: {p}" for c, r in zip(cases, run.results, strict=True)
                if (p := check_result(c, r)) is not None]  # fmt: skip
    assert not problems, f"{len(problems)} of {len(cases)} mismatch:\n" + "\n".join(
        problems[:8])
