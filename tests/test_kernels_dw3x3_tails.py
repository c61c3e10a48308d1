"""th_dw_conv_3x3_s8's row assembly at the end of a row (issue 14, session 26): rows of
4m + 1 outputs whose last five are one block (paths DW3X3_S{1,2}_FIVE{,_EVEN,_ODD},
dw_rows_s*_five*: the output step in the frame, output 3's accumulator in r12, m = 1 and
m - 1 blocks of either parity before them) and rows ending in three outputs after their
blocks (out_w % 4 == 3, path DW3X3_TAIL3: one three-output tail, both strides, both block
parities).
Against the NumPy reference on QEMU (Cortex-M4 and M7: the assembly) and on the host (DSP
modelled in C, and the build leaving every optional path out). Planes of 5-31 rows and
columns, odd and even, SAME-like and VALID padding (and padding on one side), C 1-13,
with and without a bias, in place, two batches, the fast scratch and one plane at a time;
outputs no taller than wide, so that the rows are the output's (never transposed), plus
tall ones whose transposed rows are five or three-tailed.
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


def _cases(seed: int, count: int) -> list[ConvCase]:
    """Half with rows of 5, 9, 13, 17 or 25, half with rows of 7, 11 or 15; both strides."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(count):
        c = 1 + i % 13
        five = i % 2 == 0
        s = 1 + (i // 2) % 2
        ow = (5, 9, 5, 13, 17, 25)[(i // 4) % 6] if five else (7, 11, 15)[(i // 4) % 3]
        oh = int(rng.integers(1, min(ow, 9) + 1))
        if i % 9 == 4:  # tall: transposed, its rows along the output's height
            oh, ow = ow, int(rng.integers(1, ow))
        pads = [(0, 0, 0, 0), (1, 1, 1, 1), (0, 1, 0, 1), (1, 2, 1, 2)][i % 4]
        if i % 7 == 3:  # one side only
            pads = tuple(int(k == i % 4) for k in range(4))
        if oh == 1 and pads[0] + pads[1] > 1:  # one output row reads at least one input row
            pads = (0, 1, *pads[2:])
        if ow == 1 and pads[2] + pads[3] > 1:
            pads = (*pads[:2], 0, 1)
        case = dw3x3_out_case(rng, oh, ow, c, s, pads, batches=1 + (i % 11 == 5), bias=i % 5 != 2)
        if i % 6 == 1:
            case = dataclasses.replace(case, in_place=True)
        if i % 8 == 7:  # one plane at a time
            case = dataclasses.replace(case, fast_scratch=False)
        cases.append(case)
    return cases


def test_shapes_reach_the_paths() -> None:
    """The draw's sides are odd and even from 5 to 31 and its rows are the paths' (checked
    here, so that a change to the draw cannot silently stop reaching them)."""
    cases = _cases(326, 120)
    sides = {d for c in cases for d in c.x.shape[1:3]}
    assert {5, 6, 9, 10, 11} <= sides and max(sides) >= 29
    plain = [c for c in cases if c.out_shape[1] <= c.out_shape[2]]
    for s in (1, 2):
        fives = [c.out_shape[2] for c in plain if c.out_shape[2] % 4 == 1 and c.p.stride_w == s]
        assert fives.count(5) >= 5 and {9, 13, 17, 25} <= set(fives)  # m = 1, even, odd
        tails = [c for c in plain if c.out_shape[2] % 4 == 3 and c.p.stride_w == s]
        assert {7, 11, 15} <= {c.out_shape[2] for c in tails}
    assert {c.out_shape[3] for c in cases} == set(range(1, 14))


@pytest.mark.parametrize("variant", ("dsp", "dsp_general"))
def test_dw3x3_tails_match_reference_on_host(variant: str) -> None:
    check_on_host(variant, _cases(325, 60))


@needs_target
@pytest.mark.parametrize("board", BOARDS)
def test_dw3x3_tails_on_target(tmp_path: Path, board: str) -> None:
    cases = [c for c in _cases(326, 120) if fits_small_firmware(c)]
    assert len(cases) >= 110
    check_on_target(board, tmp_path, cases)
