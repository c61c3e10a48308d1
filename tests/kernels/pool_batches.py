"""Shared drivers of the average-pool path tests (tests/test_kernels_avgpool_*.py): a case
from its geometry, one host batch (ASan / UBSan driver) and one QEMU mps2-an386 batch, each
checked against the NumPy reference."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import Op, check_result
from kernels.cases_ops import PoolCase, fits_firmware
from kernels.harness import Driver, build_driver
from kernels.target import build_firmware, run_cases
from tinyhost.arith.padding import compute_window_padding
from tinyhost.arith.pool import PoolParams
from tinyhost.ir import Padding

needs_qemu = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="arm-none-eabi-gcc or qemu-system-arm not installed")


def avgpool_case(rng: np.random.Generator, i: int, hwc: tuple[int, int, int],
                 kernel: tuple[int, int], stride: tuple[int, int],
                 padding: Padding) -> PoolCase:
    """An average pool of random int8 input: one case in six clamped to a random activation
    range, one in five with two images."""
    (h, w, c), (fh, fw), (sh, sw) = hwc, kernel, stride
    pads = compute_window_padding(padding, h, w, fh, fw, sh, sw)
    lo, hi = ((-128, 127) if i % 6 else
              (int(rng.integers(-128, 0)), int(rng.integers(0, 128))))
    p = PoolParams(sh, sw, fh, fw, pads.top, pads.left, pads.bottom, pads.right, lo, hi)
    x = rng.integers(-128, 128, (1 + (i % 5 == 4), h, w, c)).astype(np.int8)
    return PoolCase(Op.AVGPOOL, x, p, (x.shape[0], pads.out_h, pads.out_w, c))


def draw_cases(seed: int, count: int,
               draw: Callable[[np.random.Generator, int], PoolCase | None]) -> list[PoolCase]:
    """count cases from draw(rng, index), which returns None for a draw to skip."""
    rng = np.random.default_rng(seed)
    out: list[PoolCase] = []
    while len(out) < count:
        case = draw(rng, len(out))
        if case is not None:
            out.append(case)
    return out


def out_pixels(hwc: tuple[int, int, int], kernel: tuple[int, int], stride: tuple[int, int],
               padding: Padding) -> int:
    pads = compute_window_padding(padding, hwc[0], hwc[1], *kernel, *stride)
    return pads.out_h * pads.out_w


def check_on_host(variant: str, cases: list[PoolCase]) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in cases:
            problem = check_result(case, driver.run(case))
            assert problem is None, f"[{variant}] {case.x.shape} {case.p}: {problem}"


def check_on_cortex_m4(build_root: Path, cases: list[PoolCase], at_least: int) -> None:
    """The cases that fit the kernel firmware, in one QEMU run (at least `at_least`)."""
    cases = [c for c in cases if fits_firmware(c)]
    assert len(cases) >= at_least
    run = run_cases(build_firmware("mps2-an386", build_root), cases, interleaved=True)
    problems = [f"{c.x.shape} {c.p}: {p}" for c, r in zip(cases, run.results, strict=True)
                if (p := check_result(c, r)) is not None]  # fmt: skip
    assert not problems, f"{len(problems)} of {len(cases)} mismatch:\n" + "\n".join(
        problems[:8])
