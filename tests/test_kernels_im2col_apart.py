"""The general CONV_2D's pixel pairs widened as two row runs (th_nn_conv_im2col_s8.c
im2col_apart: Cin a multiple of 4, dilation.w 1, stride.w >= KW or filter rows of at most 32
bytes, both windows inside horizontally) vs the NumPy reference: on the host (ASan/UBSan;
portable, DSP modelled in C, DSP general) and in one QEMU Cortex-M4 run. The shapes put pairs
at every edge: padding on each side (rows outside the input, border pixels that take the
other im2col paths), odd output widths (the last pixel of a row paired across rows), odd and
even Cout, dilated rows, an activation clamp, two batches."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from kernels.cases import ConvCase, Op
from kernels.checks import (
    assert_cortex_m4_matches,
    assert_host_matches,
    host_driver_fixture,
    needs_qemu,
)
from kernels.harness import Driver
from kernels.sweep import _conv_case, describe

# (h, w), Cin, Cout, (kh, kw), (sh, sw), dilation.h, (top, left, bottom, right) or None: SAME
SHAPES = [
    ((7, 9), 4, 2, (2, 1), (1, 1), 1, None),
    ((9, 8), 8, 5, (3, 1), (1, 1), 1, (1, 0, 1, 0)),
    ((6, 13), 12, 3, (3, 2), (2, 2), 1, (1, 1, 0, 1)),
    ((11, 10), 4, 7, (5, 3), (1, 3), 2, (2, 2, 2, 1)),
    ((5, 7), 20, 1, (2, 2), (1, 3), 1, (0, 1, 1, 0)),
    ((4, 15), 12, 3, (3, 1), (1, 1), 1, (0, 0, 0, 0)),
    ((8, 5), 16, 9, (1, 1), (2, 2), 1, (0, 0, 0, 0)),
    ((10, 11), 8, 4, (4, 2), (2, 2), 1, (2, 1, 1, 2)),
    ((3, 6), 4, 6, (3, 2), (1, 2), 1, (3, 0, 3, 0)),  # all-padding rows at both ends
    ((13, 17), 32, 5, (3, 1), (1, 1), 1, None),
    # overlapping windows with filter rows of at most 32 bytes (TH_APART_MAX_ROW)
    ((9, 12), 4, 3, (3, 3), (1, 1), 1, (1, 1, 1, 1)),
    ((8, 10), 8, 5, (2, 4), (1, 2), 2, None),
    ((7, 9), 12, 2, (3, 2), (2, 1), 1, (1, 0, 1, 1)),
]
APART_MAX_ROW = 32  # th_nn_conv_im2col_s8.c TH_APART_MAX_ROW


def _case(i: int, hw: tuple[int, int], cin: int, cout: int, k: tuple[int, int],
          stride: tuple[int, int], dil_h: int,
          pads: tuple[int, int, int, int] | None) -> ConvCase:
    rng = np.random.default_rng(1400 + i)
    case = None
    while case is None:
        case = _conv_case(rng, Op.CONV, hw, cin, cout, k, stride, (dil_h, 1))
    if pads is None:
        return case
    top, left, bottom, right = pads
    oh = (hw[0] + top + bottom - (k[0] - 1) * dil_h - 1) // stride[0] + 1
    ow = (hw[1] + left + right - k[1]) // stride[1] + 1
    p = dataclasses.replace(case.p, pad_top=top, pad_left=left, pad_bottom=bottom,
                            pad_right=right)
    return dataclasses.replace(case, p=p, out_shape=(1, oh, ow, cout))


def apart_cases() -> list[ConvCase]:
    """Each shape plain, one with an activation clamp and one with two batches."""
    out = []
    for i, shape in enumerate(SHAPES):
        case = _case(i, *shape)
        out.append(case)
        if i % 2 == 0:
            out.append(dataclasses.replace(case, p=dataclasses.replace(case.p, act_min=-90,
                                                                       act_max=70)))
        else:
            out.append(dataclasses.replace(case, x=np.concatenate([case.x, -case.x[:, ::-1]]),
                                           out_shape=(2, *case.out_shape[1:])))
    return out


def test_shapes_reach_the_apart_pairs() -> None:
    """Each shape has a pair of adjacent output pixels in one row whose windows are inside
    horizontally and do not overlap (so the path runs), and SHAPES pad every side."""
    sides = [False] * 4
    for case in apart_cases():
        p = case.p
        kw, cin = case.w.shape[2], case.w.shape[3]
        assert cin % 4 == 0 and p.dilation_w == 1
        assert p.stride_w >= kw or kw * cin <= APART_MAX_ROW
        ow, w = case.out_shape[2], case.x.shape[2]
        assert any(ox * p.stride_w >= p.pad_left
                   and ox * p.stride_w - p.pad_left + p.stride_w + kw <= w
                   for ox in range(ow - 1)), describe(case)
        for j, pad in enumerate((p.pad_top, p.pad_left, p.pad_bottom, p.pad_right)):
            sides[j] = sides[j] or pad > 0
    assert all(sides)


driver = host_driver_fixture("portable", "dsp", "dsp_general")


def test_apart_pairs_match_reference_on_host(driver: Driver) -> None:
    assert_host_matches(driver, apart_cases(), describe)


@needs_qemu
def test_apart_pairs_match_reference_on_cortex_m4(kernel_fw_root: Path) -> None:
    assert_cortex_m4_matches(kernel_fw_root, apart_cases(), describe)
