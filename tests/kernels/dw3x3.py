"""Shared pieces of the th_dw_conv_3x3_s8 tests (tests/test_kernels_dw3x3_*.py): a
multiplier-1 3x3 depthwise case drawn from its input or output size, a mirror of the
kernel's row orientation (which side its assembly rows run along), and the host and QEMU
loops that check cases against the NumPy reference."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import ConvCase, Op, check_result
from kernels.harness import Driver, build_driver
from kernels.sweep import describe
from kernels.target import build_firmware, run_cases
from tinyhost.arith.conv import ConvParams

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
needs_target = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
# QEMU's Cortex-M4 and M7 boards: the assembly of both
BOARDS = ("mps2-an386", "mps2-an500")


def dw3x3_case(rng: np.random.Generator, hw: tuple[int, int], c: int, s: int,
               pads: tuple[int, int, int, int], batches: int = 1,
               bias: bool = True) -> ConvCase:
    """A multiplier-1 3x3 depthwise on an hw input, per-channel quantization (shifts -10 to
    -6: the fast requantization), given the fast scratch."""
    pt, pb, pl, pr = pads
    oh = (hw[0] + pt + pb - 3) // s + 1
    ow = (hw[1] + pl + pr - 3) // s + 1
    assert oh >= 1 and ow >= 1
    mult_q = rng.integers(1 << 30, (1 << 31) - 1, c, dtype=np.int64).astype(np.int32)
    shift = rng.integers(-10, -6, c, endpoint=True).astype(np.int32)
    p = ConvParams(input_offset=int(rng.integers(-127, 129)),
                   output_offset=int(rng.integers(-128, 128)),
                   out_multiplier=mult_q, out_shift=shift, act_min=-128, act_max=127,
                   stride_h=s, stride_w=s, dilation_h=1, dilation_w=1, pad_top=pt,
                   pad_left=pl, pad_bottom=pb, pad_right=pr, ch_mult=1)
    x = rng.integers(-128, 128, (batches, *hw, c)).astype(np.int8)
    w = rng.integers(-127, 128, (1, 3, 3, c)).astype(np.int8)
    b = rng.integers(-20000, 20000, c).astype(np.int32) if bias else None
    return ConvCase(Op.DW, x, w, b, p, (batches, oh, ow, c), fast_scratch=True)


def dw3x3_out_case(rng: np.random.Generator, oh: int, ow: int, c: int, s: int,
                   pads: tuple[int, int, int, int], batches: int = 1,
                   bias: bool = True) -> ConvCase:
    """dw3x3_case whose output is oh x ow (the input sized from the pads)."""
    pt, pb, pl, pr = pads
    hw = ((oh - 1) * s + 3 - pt - pb, (ow - 1) * s + 3 - pl - pr)
    return dw3x3_case(rng, hw, c, s, pads, batches, bias)


def row_cost(n: int) -> int:
    """th_dw_conv_3x3_s8.c row_cost: rough instructions of an output row of n."""
    return 40 * n + 20 if n < 4 else 57 * (n // 4) + 11 + 33 * (n & 2 != 0) + 19 * (n & 1)


def _plane(s: int, oh: int, ow: int) -> int:
    return ((oh - 1) * s + 3) * (((ow - 1) * s + 5) & ~1)


def transposed(case: ConvCase) -> bool:
    """th_dw_conv_3x3_s8.c is_transposed (every optional path kept): whether the kernel's
    rows run along the output's height."""
    _, oh, ow, c = case.out_shape
    s = case.p.stride_h
    plain_cheaper = oh < 2 * ow and ow * row_cost(oh) >= oh * row_cost(ow)
    return (oh > ow and (c >= 4 or ow < 8) and _plane(s, ow, oh) <= _plane(s, oh, ow)
            and not plain_cheaper)


def row_outputs(case: ConvCase) -> int:
    """Outputs in each of the kernel's rows (the output's width, or its height transposed)."""
    return case.out_shape[1] if transposed(case) else case.out_shape[2]


def check_on_host(variant: str, cases: Sequence[ConvCase]) -> None:
    """The cases in the sanitized host driver (portable, dsp: DSP modelled in C, dsp_general:
    every optional path left out) against the reference."""
    with Driver(build_driver(variant)) as driver:
        for case in cases:
            problem = check_result(case, driver.run(case))
            assert problem is None, f"{describe(case)}: {problem}"


def check_on_target(board: str, tmp_path: Path, cases: Sequence[ConvCase]) -> None:
    """The cases in one QEMU run of the kernel test firmware against the reference."""
    run = run_cases(build_firmware(board, tmp_path), cases, interleaved=True)
    for case, result in zip(cases, run.results, strict=True):
        problem = check_result(case, result)
        assert problem is None, f"{board} {describe(case)}: {problem}"
