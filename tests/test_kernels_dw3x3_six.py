"""th_dw_conv_3x3_s8's rows of exactly six outputs (issue 14, session 30): paths
DW3X3_S1_SIX and DW3X3_S2_SIX (dw_rows_s*_six: one six-output block a row, the rows counted
in the frame, six accumulators with lr among them), where a 6-wide output (a MobileNet's
6x6 planes: 6x6 stride 1, 12x12 -> 6x6 stride 2) ran a block of four, the tail's jump and a
pair. Rows of six are a plain output six wide, or a transposed one six tall (the kernel's
rows along the height: is_transposed, mirrored in kernels/dw3x3.py).
Against the NumPy reference on QEMU (Cortex-M4 and M7: the assembly) and on the host under
ASan/UBSan (portable, DSP modelled in C, and the build leaving every optional path out):
C 1-40 (every C % 4: groups of four, the last three, a lone one or two) and a MobileNet's
64 and 128, both strides, SAME-like, VALID and one-sided padding, odd and even input sides,
per-channel quantization, with and without a bias, in place, two images, the fast scratch
and one plane at a time, and next to them rows of 2, 3, 5, 7, 10 and 14 outputs (the other
loops, whose choice the six's sits among); clamps and the exact requantization (the C
loops) on the same shapes.
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

# (output rows, output columns): plain rows of six, transposed ones (six tall, whose rows
# then run along the height), and the neighbouring widths of the other loops
_OUTS = ((6, 6), (1, 6), (3, 6), (6, 6), (4, 6), (6, 4), (6, 2), (6, 1), (5, 6), (2, 6),
         (2, 3), (3, 5), (2, 7), (3, 10), (2, 14), (1, 2))
_PADS = ((0, 0, 0, 0), (1, 1, 1, 1), (0, 1, 0, 1), (1, 0, 1, 0), (1, 2, 0, 1), (0, 0, 1, 0))


def _cases(seed: int, count: int) -> list[ConvCase]:
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(count):
        c = 1 + i % 40 if i < 40 else int(rng.integers(1, 41))
        oh, ow = _OUTS[i % len(_OUTS)]
        s = 1 + (i // len(_OUTS)) % 2
        pads = _PADS[(i // 3) % len(_PADS)]
        if oh == 1 and pads[0] + pads[1] > 1:  # one output row reads at least one input row
            pads = (0, 1, *pads[2:])
        if ow == 1 and pads[2] + pads[3] > 1:
            pads = (*pads[:2], 0, 1)
        case = dw3x3_out_case(rng, oh, ow, c, s, pads, batches=1 + (i % 11 == 5),
                              bias=i % 5 != 2)
        if i % 6 == 1:
            case = dataclasses.replace(case, in_place=True)
        if i % 7 == 3:  # one plane at a time
            case = dataclasses.replace(case, fast_scratch=False)
        cases.append(case)
    return cases


def _mobilenet(seed: int) -> list[ConvCase]:
    """A MobileNet's 6x6 planes: 6x6x128 stride 1 (SAME) and 12x12x64 -> 6x6 stride 2
    (TFLite's SAME: padding after only), two of each."""
    rng = np.random.default_rng(seed)
    return [dw3x3_out_case(rng, 6, 6, c, s, pads, bias=k == 0)
            for k in range(2)
            for c, s, pads in ((128, 1, (1, 1, 1, 1)), (64, 2, (0, 1, 0, 1)),
                               (60, 1, (1, 1, 1, 1)), (36, 2, (0, 1, 0, 1)))]


def _modes(cases: list[ConvCase]) -> list[ConvCase]:
    """Each case, and every third with a clamp or the exact requantization (a channel's
    shift >= 0): the C loops, which the six's choice must leave to them."""
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
    """Rows of six of both strides, plain and transposed, every C % 4, odd and even input
    sides, in place, two images, one plane at a time (checked here, so that a change to
    the draw cannot silently stop reaching them)."""
    cases = _cases(331, 160)
    for s in (1, 2):
        six = [c for c in cases if c.p.stride_w == s and row_outputs(c) == 6]
        plain = [c for c in six if not transposed(c)]
        tall = [c for c in six if transposed(c)]
        assert len(plain) >= 25 and len(tall) >= 8, (s, len(plain), len(tall))
        assert {c.out_shape[3] % 4 for c in plain} == {0, 1, 2, 3}
        assert {c.out_shape[3] % 4 for c in tall} == {0, 1, 2, 3}
        assert {c.x.shape[1] % 2 for c in plain} == {0, 1}
        assert {c.x.shape[2] % 2 for c in plain} == {0, 1}
        assert any(c.in_place for c in six) and any(not c.fast_scratch for c in six)
        assert {row_outputs(c) for c in cases if c.p.stride_w == s} >= {2, 3, 5, 7, 10, 14}
    assert {c.out_shape[3] for c in cases} == set(range(1, 41))
    assert any(c.x.shape[0] == 2 and row_outputs(c) == 6 for c in cases)
    assert all(row_outputs(c) == 6 for c in _mobilenet(332))


@pytest.mark.parametrize("variant", ("portable", "dsp", "dsp_general"))
def test_dw3x3_six_match_reference_on_host(variant: str) -> None:
    check_on_host(variant, _modes(_cases(330, 80)) + _mobilenet(330))


@needs_target
@pytest.mark.parametrize("board", BOARDS)
def test_dw3x3_six_on_target(tmp_path: Path, board: str) -> None:
    cases = [c for c in _modes(_cases(331, 160)) + _mobilenet(332) if fits_small_firmware(c)]
    assert len(cases) >= 200
    assert sum(row_outputs(c) == 6 and c.p.act_min == -128 and c.p.act_max == 127
               for c in cases) >= 100
    check_on_target(board, tmp_path, cases)
