"""Issue 14's stride-1 AVERAGE_POOL_2D span paths (th_avgpool_s8.c, DSP build with scratch).

On Cortex-M4 the groups of four channels of a span run in assembly: odd and even window
counts (the even one's sign lanes), the leaving column moved to the next row or not (rows
without a row entering and one leaving, the pixels left of the padding), the columns'
sums word-aligned (even C: LDRD / STRD) or not (odd C: LDR / STR), then the channels past
C & ~3 two at a time in one word and the last one alone; the columns right of the last
window move in assembly too. Activations other than the full range take the C loops. The
cases: windows 1x1 .. 9x8, planes from one pixel past the window to about three windows,
SAME (padding on every side: top / left and bottom / right differ by one for even windows)
and VALID, C = 1 .. 9, 12, 13, 16, 18, 31 (every tail 0 .. 3, even and odd), one or two
images. All against the NumPy reference, on the host (ASan / UBSan, portable and emulated
DSP builds) and in one batch on QEMU mps2-an386 (the native DSP build: the assembly).
"""

from __future__ import annotations

import shutil
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

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")

CHANNELS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 18, 31]


def span_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """Stride-1 average pools cycling through CHANNELS; one in six clamped."""
    rng = np.random.default_rng(seed)
    out: list[PoolCase] = []
    while len(out) < count:
        i = len(out)
        c = CHANNELS[i % len(CHANNELS)]
        fh, fw = int(rng.integers(1, 10)), int(rng.integers(1, 9))
        if fh * fw < 3:
            continue
        h, w = int(rng.integers(fh, 3 * fh + 2)), int(rng.integers(fw, 3 * fw + 2))
        padding = Padding.SAME if i % 2 else Padding.VALID
        pads = compute_window_padding(padding, h, w, fh, fw, 1, 1)
        if h * w * c > max_elements:
            continue
        lo, hi = ((-128, 127) if i % 6 else
                  (int(rng.integers(-128, 0)), int(rng.integers(0, 128))))
        p = PoolParams(1, 1, fh, fw, pads.top, pads.left, pads.bottom, pads.right, lo, hi)
        x = rng.integers(-128, 128, (1 + (i % 5 == 4), h, w, c)).astype(np.int8)
        out.append(PoolCase(Op.AVGPOOL, x, p, (x.shape[0], pads.out_h, pads.out_w, c)))
    return out


def test_span_cases_reach_every_branch() -> None:
    """Odd and even C with every tail, both paddings, odd and even counts."""
    cases = span_cases(5, 120, 4000)
    assert {c.x.shape[3] % 4 for c in cases} == {0, 1, 2, 3}
    assert any(c.p.pad_left > 0 and c.p.pad_right > c.p.pad_left for c in cases)
    counts = {(c.p.filter_h * c.p.filter_w) % 2 for c in cases}
    assert counts == {0, 1}


@pytest.mark.parametrize("variant", ["portable", "dsp"])
def test_span_paths_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in span_cases(5, 120, 4000):
            problem = check_result(case, driver.run(case))
            assert problem is None, f"[{variant}] {case.x.shape} {case.p}: {problem}"


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                    or shutil.which("qemu-system-arm") is None,
                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
def test_span_paths_on_cortex_m4(tmp_path: Path) -> None:
    cases = [c for c in span_cases(6, 160, 6000) if fits_firmware(c)]
    assert len(cases) >= 140
    run = run_cases(build_firmware("mps2-an386", tmp_path), cases, interleaved=True)
    problems = [f"{c.x.shape} {c.p}: {p}" for c, r in zip(cases, run.results, strict=True)
                if (p := check_result(c, r)) is not None]  # fmt: skip
    assert not problems, f"{len(problems)} of {len(cases)} mismatch:\n" + "\n".join(
        problems[:8])
