"""The general CONV_2D's K x 1 / 1 x K filters crossing a padded edge with Cin not a multiple
of 4 (path IM2COL_SPAN: th_nn_conv_im2col_s8.c conv_im2col_span, th_nn_im2col_span_s16,
th_nn_mat_mult_s8_s16_span: a same-row pair crossing an edge stages, widens and multiplies
only the chunks holding taps inside the input) vs the NumPy reference: on the host (ASan/UBSan;
portable, DSP modelled in C, DSP general) and in one QEMU Cortex-M4 run.

The shapes: filters taller (wider) than the input, so every window crosses; pads on one side
only and larger than the filter's reach minus one (pairs with no tap inside: the one-chunk
span of zeros); strides; dilated rows; Cin 5, 6, 7, 9, 15 (chunks straddling filter rows);
odd and even Cout, Cout above the requantization table's 17 (the exact requantization), an
activation clamp, odd output widths (pairs across rows, the full-K path), two batches.
"""

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

# (h, w), Cin, Cout, (kh, kw), (sh, sw), dilation.h, (top, left, bottom, right)
SHAPES = [
    ((4, 34), 5, 7, (9, 1), (1, 1), 1, (4, 0, 4, 0)),  # the sweep's 4x34x5 k9x1 "same"
    ((4, 14), 25, 21, (8, 1), (2, 2), 1, (3, 0, 4, 0)),  # Cout > 17: no table
    ((5, 5), 23, 6, (5, 1), (1, 1), 1, (2, 0, 2, 0)),  # odd output width
    ((7, 12), 6, 9, (8, 1), (2, 1), 1, (4, 0, 3, 0)),
    ((3, 9), 7, 5, (5, 1), (1, 2), 1, (6, 0, 2, 0)),  # rows wholly outside: empty spans
    ((6, 8), 9, 8, (5, 1), (1, 1), 2, (4, 0, 4, 0)),  # dilated rows
    ((9, 4), 5, 10, (1, 9), (1, 1), 1, (0, 4, 0, 4)),  # 1 x K
    ((5, 6), 15, 19, (1, 7), (2, 1), 1, (0, 3, 0, 3)),  # 1 x K, K 105, Cout > 17
    ((3, 5), 7, 6, (1, 5), (1, 2), 1, (0, 7, 0, 2)),  # 1 x K, windows wholly outside
    ((8, 3), 6, 7, (1, 5), (3, 1), 1, (0, 2, 0, 2)),  # odd output width
]
STAGE_BYTES = 256  # th_nn_im2col_s16.c TH_STAGE_BYTES
DIRECT_MAX_COUT = 4  # th_nn_support.h TH_NN_DIRECT_MAX_COUT


def _case(i: int, hw: tuple[int, int], cin: int, cout: int, k: tuple[int, int],
          stride: tuple[int, int], dil_h: int, pads: tuple[int, int, int, int]) -> ConvCase:
    rng = np.random.default_rng(2300 + i)
    case = None
    while case is None:
        case = _conv_case(rng, Op.CONV, hw, cin, cout, k, stride, (dil_h, 1))
    top, left, bottom, right = pads
    oh = (hw[0] + top + bottom - (k[0] - 1) * dil_h - 1) // stride[0] + 1
    ow = (hw[1] + left + right - k[1]) // stride[1] + 1
    p = dataclasses.replace(case.p, pad_top=top, pad_left=left, pad_bottom=bottom,
                            pad_right=right)
    return dataclasses.replace(case, p=p, out_shape=(1, oh, ow, cout))


def span_cases() -> list[ConvCase]:
    """Each shape plain, then clamped (even i) or with two batches (odd i)."""
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


def _crossing_pairs(case: ConvCase) -> tuple[int, int]:
    """(same-row pairs crossing an edge, of those with no tap inside) as conv_im2col_span
    walks the output."""
    p = case.p
    _, h, w, _ = case.x.shape
    kh, kw = case.w.shape[1:3]
    _, oh, ow, _ = case.out_shape
    crossing = empty = 0
    for q in range(0, oh * ow - 1, 2):
        oy, ox = divmod(q, ow)
        if ox + 1 >= ow:
            continue
        y0, x0 = oy * p.stride_h - p.pad_top, ox * p.stride_w - p.pad_left
        x1 = x0 + p.stride_w
        if y0 < 0 or y0 + (kh - 1) * p.dilation_h >= h or x0 < 0 or x1 + kw > w:
            crossing += 1
            rows = any(0 <= y0 + r * p.dilation_h < h for r in range(kh))
            cols = any(0 <= x + t < w for x in (x0, x1) for t in range(kw))
            empty += not (rows and cols)
    return crossing, empty


def test_shapes_reach_the_span_path() -> None:
    """Every case is a K x 1 or 1 x K filter padded across it, Cin not a multiple of 4, staged
    (K <= 256), more output channels than the direct path takes, with pairs crossing an edge;
    both filter orientations, pairs with no tap inside, odd output widths, Cout above 17."""
    kinds = set()
    for case in span_cases():
        p = case.p
        kh, kw, cin = case.w.shape[1:]
        assert cin % 4 != 0 and p.dilation_w == 1 and kw * cin >= 4, describe(case)
        assert kh * kw * cin <= STAGE_BYTES, describe(case)
        assert case.out_shape[3] > DIRECT_MAX_COUT, describe(case)
        assert (kw == 1 and p.pad_top + p.pad_bottom > 0 and p.pad_top > 0 or
                kh == 1 and p.pad_left > 0), describe(case)
        crossing, empty = _crossing_pairs(case)
        assert crossing > 0, describe(case)
        kinds.add("kx1" if kw == 1 else "1xk")
        if empty:
            kinds.add("empty")
        if case.out_shape[2] % 2:
            kinds.add("odd width")
        if case.out_shape[3] > 17:
            kinds.add("no table")
    assert kinds == {"kx1", "1xk", "empty", "odd width", "no table"}


driver = host_driver_fixture("portable", "dsp", "dsp_general")


def test_span_matches_reference_on_host(driver: Driver) -> None:
    assert_host_matches(driver, span_cases(), describe)


@needs_qemu
def test_span_matches_reference_on_cortex_m4(kernel_fw_root: Path) -> None:
    assert_cortex_m4_matches(kernel_fw_root, span_cases(), describe)
