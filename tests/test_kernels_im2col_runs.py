"""The general CONV_2D's columns for Cin not a multiple of 4 (th_nn_im2col_s16.c, paths
IM2COL_STAGED and IM2COL_RUNS: dilation.w 1, filter rows of 4 bytes or more; K <= 256 staged
as bytes with whole-word copies, K > 256 widened straight from the input as row runs with
chunks straddling runs) and the odd last output channel's loop (th_nn_mat_mult_s8_s16.c
last_channel) vs the NumPy reference: on the host (ASan/UBSan; portable, DSP modelled in C,
DSP general) and in one QEMU Cortex-M4 run.

The shapes put windows at every edge: padding on each side (rows wholly outside, taps cut on
the left and the right, a window wider than the input), runs shorter than a word (Cin 1-3,
one tap inside), odd output widths (pairs across rows), odd and even Cout, dilated rows,
strides, an activation clamp (which also keeps Cin 1-3 off the small-Cin path), two batches.
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
    # K <= 256: staged
    ((9, 11), 5, 6, (3, 3), (1, 1), 1, (1, 1, 1, 1)),
    ((8, 7), 2, 9, (3, 7), (1, 1), 1, (1, 3, 1, 3)),
    ((6, 13), 3, 7, (2, 5), (2, 2), 1, (0, 2, 1, 2)),
    ((7, 9), 1, 5, (3, 5), (1, 1), 1, (1, 2, 1, 2)),  # 3 bytes inside at the edges
    ((10, 8), 6, 5, (4, 2), (1, 3), 2, (3, 0, 3, 1)),  # all-padding rows at both ends
    ((7, 10), 18, 5, (3, 3), (2, 1), 1, (1, 1, 0, 1)),
    ((5, 9), 7, 8, (2, 3), (1, 1), 1, (0, 0, 0, 0)),  # odd output width
    ((9, 3), 5, 6, (6, 6), (2, 2), 1, (2, 2, 2, 3)),  # windows wider than the input
    # pairs in the same rows crossing an edge (stage_pair_rows): filters taller than the
    # input, dilated rows outside at both ends with taps cut on both sides, strides
    ((4, 34), 5, 7, (9, 1), (1, 1), 1, (4, 0, 4, 0)),
    ((6, 9), 3, 5, (5, 4), (1, 2), 2, (4, 2, 3, 1)),
    ((5, 8), 2, 6, (4, 3), (2, 1), 1, (2, 1, 2, 1)),
    ((3, 7), 6, 9, (7, 2), (1, 3), 1, (3, 1, 3, 1)),
    # K > 256: row runs
    ((8, 12), 18, 5, (6, 3), (1, 1), 1, (0, 1, 0, 1)),
    ((9, 10), 5, 6, (6, 9), (2, 2), 1, (2, 4, 3, 4)),
    ((12, 6), 3, 6, (10, 9), (1, 2), 1, (4, 4, 5, 4)),  # one tap inside: 3-byte runs
    ((35, 12), 2, 7, (15, 9), (2, 1), 2, (14, 4, 13, 4)),
    ((7, 9), 30, 9, (3, 3), (1, 2), 1, (1, 1, 1, 0)),
]


def _edge_shapes(n: int) -> list[tuple]:
    """n random staged shapes whose windows cross the top or bottom edge (pairs in the same
    rows staged in one rows loop): short inputs, tall filters, padding up to the filter's
    reach on each side, dilated rows, strides."""
    rng = np.random.default_rng(1515)
    out: list[tuple] = []
    while len(out) < n:
        cin = int(rng.choice([1, 2, 3, 5, 6, 7, 9]))
        kh, kw = int(rng.integers(2, 10)), int(rng.integers(1, 6))
        dil = int(rng.integers(1, 3))
        h, w = int(rng.integers(2, 9)), int(rng.integers(3, 13))
        reach = (kh - 1) * dil + 1
        pads = tuple(int(rng.integers(0, r)) for r in (reach, kw, reach, kw))
        stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        if (kw * cin < 4 or kh * kw * cin > STAGE_BYTES or pads[0] + pads[2] == 0
                or h + pads[0] + pads[2] < (kh - 1) * dil + 1 or w + pads[1] + pads[3] < kw):
            continue
        out.append(((h, w), cin, int(rng.integers(5, 11)), (kh, kw), stride, dil, pads))
    return out


STAGE_BYTES = 256  # th_nn_im2col_s16.c TH_STAGE_BYTES
SHAPES += _edge_shapes(6)
DIRECT_MAX_COUT = 4  # th_nn_support.h TH_NN_DIRECT_MAX_COUT


def _case(i: int, hw: tuple[int, int], cin: int, cout: int, k: tuple[int, int],
          stride: tuple[int, int], dil_h: int, pads: tuple[int, int, int, int]) -> ConvCase:
    rng = np.random.default_rng(1500 + i)
    case = None
    while case is None:
        case = _conv_case(rng, Op.CONV, hw, cin, cout, k, stride, (dil_h, 1))
    top, left, bottom, right = pads
    oh = (hw[0] + top + bottom - (k[0] - 1) * dil_h - 1) // stride[0] + 1
    ow = (hw[1] + left + right - k[1]) // stride[1] + 1
    p = dataclasses.replace(case.p, pad_top=top, pad_left=left, pad_bottom=bottom,
                            pad_right=right)
    return dataclasses.replace(case, p=p, out_shape=(1, oh, ow, cout))


def runs_cases() -> list[ConvCase]:
    """Each shape plain (Cin >= 4) or clamped (Cin <= 3: off the small-Cin path), and once
    more clamped or with two batches."""
    out = []
    for i, shape in enumerate(SHAPES):
        case = _case(i, *shape)
        clamped = dataclasses.replace(case, p=dataclasses.replace(case.p, act_min=-90,
                                                                  act_max=70))
        out.append(case if shape[1] > 3 else clamped)
        if i % 2 == 0:
            out.append(clamped)
        else:
            out.append(dataclasses.replace(case, x=np.concatenate([case.x, -case.x[:, ::-1]]),
                                           out_shape=(2, *case.out_shape[1:])))
    return out


def test_shapes_reach_the_runs_path() -> None:
    """Every case takes the im2col path with IM2COL_STAGED or IM2COL_RUNS (Cin not a
    multiple of 4, dilation.w 1, filter rows of 4 bytes or more, more output channels than
    the direct path takes), both K <= 256 and K > 256, odd Cout, and SHAPES pad every side."""
    sides = [False] * 4
    ks = set()
    for case in runs_cases():
        p = case.p
        kh, kw, cin = case.w.shape[1:]
        assert cin % 4 != 0 and p.dilation_w == 1 and kw * cin >= 4, describe(case)
        assert case.out_shape[3] > DIRECT_MAX_COUT, describe(case)
        ks.add(kh * kw * cin <= STAGE_BYTES)
        for j, pad in enumerate((p.pad_top, p.pad_left, p.pad_bottom, p.pad_right)):
            sides[j] = sides[j] or pad > 0
    assert all(sides) and ks == {True, False}
    assert any(case.out_shape[3] % 2 for case in runs_cases())


driver = host_driver_fixture("portable", "dsp", "dsp_general")


def test_runs_match_reference_on_host(driver: Driver) -> None:
    assert_host_matches(driver, runs_cases(), describe)


@needs_qemu
def test_runs_match_reference_on_cortex_m4(kernel_fw_root: Path) -> None:
    assert_cortex_m4_matches(kernel_fw_root, runs_cases(), describe)
