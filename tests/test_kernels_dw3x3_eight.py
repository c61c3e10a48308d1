"""th_dw_conv_3x3_s8's stride-2 rows loaded a plane row at a time (issue 14, session 32):
path DW3X3_S2_EIGHT (dw_rows_s2_eight: rows of exactly eight outputs, two blocks of four
whose plane rows come in one LDM of five words each, block A down the window's rows and
block B back up, block B's first row reusing block A's last word 4) and path DW3X3_S2_FIVE
(dw_rows_s2_five, now one LDM of six words per plane row, the requantization words from the
frame). Both store their last outputs at offsets from a pointer two outputs short of
dw_asm_prepare's `done` (its o_skip for them). Rows of eight or five are a plain output
that wide, or a transposed one that tall (is_transposed, mirrored in kernels/dw3x3.py).
Against the NumPy reference on QEMU (Cortex-M4 and M7: the assembly) and on the host under
ASan/UBSan (portable, DSP modelled in C, and the build leaving every optional path out):
C 1-40 (every C % 4: groups of four, the last three, a lone one or two), SAME-like, VALID
and one-sided padding, odd and even input sides, per-channel quantization, with and without
a bias, in place, two images, the fast scratch and one plane at a time, stride 1 rows of
eight and five beside them (other loops), and rows of 4, 6, 7, 9 and 16 outputs; clamps and
the exact requantization (the C loops) on the same shapes.
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
    row_outputs,
    transposed,
)
from kernels.target import fits_small_firmware

pytestmark = needs_gcc

# (output rows, output columns): plain rows of eight and five, transposed ones (eight or
# five tall), and the neighbouring widths of the other loops
_OUTS = ((7, 8), (1, 8), (3, 8), (8, 8), (8, 5), (5, 5), (1, 5), (9, 8), (8, 3), (5, 2),
         (2, 8), (4, 5), (2, 4), (2, 7), (3, 9), (2, 16), (2, 6))
_PADS = ((0, 0, 0, 0), (1, 1, 1, 1), (0, 1, 0, 1), (1, 0, 1, 0), (1, 2, 0, 1), (0, 0, 1, 0))


def _cases(seed: int, count: int) -> list[ConvCase]:
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(count):
        c = 1 + i % 40 if i < 40 else int(rng.integers(1, 41))
        oh, ow = _OUTS[i % len(_OUTS)]
        s = 2 if (i // len(_OUTS)) % 3 != 2 else 1
        pads = _PADS[(i // 3) % len(_PADS)]
        if oh == 1 and pads[0] + pads[1] > 1:  # one output row reads at least one input row
            pads = (0, 1, *pads[2:])
        if ow == 1 and pads[2] + pads[3] > 1:
            pads = (*pads[:2], 0, 1)
        case = dw3x3_out_case(rng, oh, ow, c, s, pads, batches=1 + (i % 11 == 5),
                              bias=i % 5 != 2)
        _, h, w, _ = case.x.shape
        if i % 6 == 1 and (case.x.shape[0] == 1 or oh * ow <= h * w):  # th_nn.h rule (a)
            case = dataclasses.replace(case, in_place=True)
        if i % 7 == 3:  # one plane at a time
            case = dataclasses.replace(case, fast_scratch=False)
        cases.append(case)
    return cases


def _sweep_rows(seed: int) -> list[ConvCase]:
    """The sweep's rows that these loops were written for: 15x15x9 -> 7x8 and 10x10x33 ->
    5x5 (SAME, stride 2: padding after only), and 17x17x19 -> 9x8."""
    rng = np.random.default_rng(seed)
    return [dw3x3_out_case(rng, oh, ow, c, 2, pads)
            for oh, ow, c, pads in ((7, 8, 9, (0, 0, 1, 1)), (5, 5, 33, (0, 1, 0, 1)),
                                    (9, 8, 19, (1, 1, 0, 0)))]


def _modes(cases: list[ConvCase]) -> list[ConvCase]:
    """Each case, and every third with a clamp or the exact requantization (a channel's
    shift >= 0): the C loops, which the loops' choice must leave to them."""
    out = list(cases)
    for i, case in enumerate(cases[::3]):
        p = case.p
        if i % 2 == 0:
            out.append(case.clamped())
        else:
            exact = np.where(np.arange(len(p.out_shift)) % 2 == 0, 1, p.out_shift)
            out.append(dataclasses.replace(
                case, p=dataclasses.replace(p, out_shift=exact.astype(np.int32))))
    return out


def test_shapes_reach_the_paths() -> None:
    """Stride-2 rows of eight and five, plain and transposed, every C % 4, odd and even
    input sides, in place, two images, one plane at a time (checked here, so that a change
    to the draw cannot silently stop reaching them)."""
    cases = _cases(321, 170)
    for n in (8, 5):
        rows = [c for c in cases if c.p.stride_w == 2 and row_outputs(c) == n]
        plain = [c for c in rows if not transposed(c)]
        tall = [c for c in rows if transposed(c)]
        assert len(plain) >= 20 and len(tall) >= 6, (n, len(plain), len(tall))
        assert {c.out_shape[3] % 4 for c in plain} == {0, 1, 2, 3}
        assert {c.out_shape[3] % 4 for c in tall} == {0, 1, 2, 3}
        assert {c.x.shape[1] % 2 for c in plain} == {0, 1}
        assert {c.x.shape[2] % 2 for c in plain} == {0, 1}
        assert any(c.in_place for c in rows) and any(not c.fast_scratch for c in rows)
        assert any(c.x.shape[0] == 2 for c in rows)
    assert any(c.p.stride_w == 1 and row_outputs(c) == 8 for c in cases)
    assert {row_outputs(c) for c in cases if c.p.stride_w == 2} >= {4, 6, 7, 9, 16}
    assert {c.out_shape[3] for c in cases} == set(range(1, 41))
    assert [row_outputs(c) for c in _sweep_rows(322)] == [8, 5, 8]


@pytest.mark.parametrize("variant", ("portable", "dsp", "dsp_general"))
def test_dw3x3_eight_match_reference_on_host(variant: str) -> None:
    check_on_host(variant, _modes(_cases(320, 85)) + _sweep_rows(320))


@needs_target
@pytest.mark.parametrize("board", BOARDS)
def test_dw3x3_eight_on_target(tmp_path: Path, board: str) -> None:
    cases = [c for c in _modes(_cases(321, 170)) + _sweep_rows(322) if fits_small_firmware(c)]
    assert len(cases) >= 200
    assert sum(row_outputs(c) in (5, 8) and c.p.stride_w == 2 and c.p.act_min == -128
               and c.p.act_max == 127 for c in cases) >= 60
    check_on_target(board, tmp_path, cases)
