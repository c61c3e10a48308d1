"""th_dw_conv_3x3_s8's rows of exactly three outputs (issue 14, session 29): paths
DW3X3_S1_THREE and DW3X3_S2_THREE (dw_rows_s*_three: the three-output block alone, the rows
counted in lr), where a 3-wide output (a MobileNet's last planes: 6x6 -> 3x3 stride 2,
3x3 -> 3x3 stride 1) ran the C loop. Rows of three are a plain output three wide and at
most three tall, or a transposed one three tall and one or two wide.
Against the NumPy reference on QEMU (Cortex-M4 and M7: the assembly) and on the host (DSP
modelled in C, and the build leaving every optional path out): C 1-40 (every C % 4: groups
of four, the last three, a lone one or two), both strides, SAME-like and VALID padding, odd
and even planes, per-channel quantization, with and without a bias, clamps (the C loop),
in place, two batches, the fast scratch and one plane at a time.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import ConvCase
from kernels.dw3x3 import (
    BOARDS,
    check_on_host,
    check_on_target,
    dw3x3_out_case,
    needs_gcc,
    needs_target,
)
from kernels.target import fits_small_firmware

pytestmark = needs_gcc

# (output rows, output columns): plain rows of three, then transposed ones (columns of three)
_OUTS = ((3, 3), (1, 3), (2, 3), (3, 3), (3, 1), (3, 2))
_PADS = ((0, 0, 0, 0), (1, 1, 1, 1), (0, 1, 0, 1), (1, 0, 1, 0), (1, 2, 0, 1))


def _cases(seed: int, count: int) -> list[ConvCase]:
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(count):
        c = 1 + i % 40 if i < 40 else int(rng.integers(1, 41))
        s = 1 + (i // 2) % 2
        oh, ow = _OUTS[i % len(_OUTS)]
        pads = _PADS[(i // 3) % len(_PADS)]
        if oh == 1 and pads[0] + pads[1] > 1:  # one output row reads at least one input row
            pads = (0, 1, *pads[2:])
        if ow == 1 and pads[2] + pads[3] > 1:
            pads = (*pads[:2], 0, 1)
        case = dw3x3_out_case(rng, oh, ow, c, s, pads, batches=1 + (i % 11 == 5), bias=i % 5 != 2)
        if i % 6 == 1:
            case = dataclasses.replace(case, in_place=True)
        if i % 8 == 7:  # one plane at a time
            case = dataclasses.replace(case, fast_scratch=False)
        if i % 13 == 9:  # a clamp: the C loop
            case = case.clamped()
        cases.append(case)
    return cases


def test_shapes_reach_the_paths() -> None:
    """Rows of three of both strides, plain and transposed, every C % 4, odd and even input
    sides (checked here, so that a change to the draw cannot silently stop reaching them)."""
    cases = _cases(329, 160)
    for s in (1, 2):
        mine = [c for c in cases if c.p.stride_w == s and c.p.act_min == -128
                and c.p.act_max == 127]
        plain = [c for c in mine if c.out_shape[2] == 3]
        tall = [c for c in mine if c.out_shape[1] == 3 and c.out_shape[2] < 3]
        assert len(plain) >= 30 and len(tall) >= 15
        assert {c.out_shape[3] % 4 for c in plain} == {0, 1, 2, 3}
        assert {c.x.shape[1] % 2 for c in plain} == {0, 1}
        assert {c.x.shape[2] % 2 for c in plain} == {0, 1}
    assert {c.out_shape[3] for c in cases} == set(range(1, 41))
    assert any(c.x.shape[0] == 2 for c in cases)


@pytest.mark.parametrize("variant", ("dsp", "dsp_general"))
def test_dw3x3_three_match_reference_on_host(variant: str) -> None:
    check_on_host(variant, _cases(328, 80))


@needs_target
@pytest.mark.parametrize("board", BOARDS)
def test_dw3x3_three_on_target(tmp_path: Path, board: str) -> None:
    cases = [c for c in _cases(329, 160) if fits_small_firmware(c)]
    assert len(cases) >= 150
    check_on_target(board, tmp_path, cases)
