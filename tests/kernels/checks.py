"""The two checks a kernel path test runs on its cases: every case through the sanitized host
driver (one driver per build variant, kept for the test module) and every case in one QEMU
mps2-an386 run of the kernel firmware, each output compared with the NumPy reference."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kernels.cases import Case, mismatches
from kernels.harness import Driver, build_driver
from kernels.target import build_firmware, run_cases

needs_qemu = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="arm-none-eabi-gcc or qemu-system-arm not installed")


def host_driver_fixture(*variants: str) -> Any:
    """A module-scoped fixture giving a running host driver for each build variant."""

    @pytest.fixture(scope="module", params=variants)
    def driver(request: pytest.FixtureRequest) -> Iterator[Driver]:
        if shutil.which("gcc") is None:
            pytest.skip("gcc not installed")
        with Driver(build_driver(request.param)) as d:
            yield d

    return driver


def _report(where: str, problems: list[str], count: int) -> str:
    return f"[{where}] {len(problems)} of {count} cases mismatch:\n" + "\n".join(problems[:8])


def assert_host_matches(driver: Driver, cases: Sequence[Case],
                        name: Callable[[Case], str]) -> None:
    results = [driver.run(case) for case in cases]
    problems = mismatches(cases, results, name)
    assert not problems, _report(driver.build.variant, problems, len(cases))


def assert_cortex_m4_matches(fw_root: Path, cases: Sequence[Case],
                             name: Callable[[Case], str]) -> None:
    run = run_cases(build_firmware("mps2-an386", fw_root), cases, interleaved=True)
    problems = mismatches(cases, run.results, name)
    assert not problems, _report("mps2-an386", problems, len(cases))
