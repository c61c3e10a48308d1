"""Layers of the MLPerf Tiny models (shapes as in the .tflite files) with random data and
realistic requantization, for the layer tests and bench/kernels.py."""

from __future__ import annotations

import dataclasses

import numpy as np

from kernels.cases import DW_OPS, ConvCase, FcCase, Op
from tinyhost.arith.conv import ConvParams, FullyConnectedParams
from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.plan.scratch import small_cin_conv_fast_scratch, small_cin_conv_scratch

# Layers of the MLPerf Tiny models (shapes as in the .tflite files), random data.
REAL_LAYERS = [
    ("vww pw 48x48x8->16", Op.CONV, dict(hw=(48, 48), cin=8, cout=16, k=1, stride=1)),
    ("vww conv 3x3 s2 96x96x3->8", Op.CONV, dict(hw=(96, 96), cin=3, cout=8, k=3, stride=2)),
    ("resnet conv 3x3 32x32x16", Op.CONV, dict(hw=(32, 32), cin=16, cout=16, k=3, stride=1)),
    ("kws conv 10x4 s2 49x10x1->64", Op.CONV, dict(hw=(49, 10), cin=1, cout=64, k=(10, 4),
                                                    stride=2)),
    ("vww dw 3x3 s1 48x48x8", Op.DW, dict(hw=(48, 48), cin=8, cout=8, k=3, stride=1)),
    ("vww dw 3x3 s2 48x48x16", Op.DW, dict(hw=(48, 48), cin=16, cout=16, k=3, stride=2)),
    ("kws dw 3x3 25x5x64", Op.DW, dict(hw=(25, 5), cin=64, cout=64, k=3, stride=1)),
]


def layer_case(op: Op, hw: tuple[int, int], cin: int, cout: int, k: int | tuple[int, int],
               stride: int, seed: int = 0) -> ConvCase:
    """A SAME-padded layer with realistic requantization (as TFLM would compute it)."""
    rng = np.random.default_rng(seed)
    kh, kw = (k, k) if isinstance(k, int) else k
    oh, ow = -(-hw[0] // stride), -(-hw[1] // stride)
    pad_h = max((oh - 1) * stride + kh - hw[0], 0)
    pad_w = max((ow - 1) * stride + kw - hw[1], 0)
    depthwise = op in DW_OPS
    taps = kh * kw * (1 if depthwise else cin)
    scale = 30.0 / (np.sqrt(taps) * 110 * 70)
    mult = np.empty(cout, np.int32)
    shift = np.empty(cout, np.int32)
    for c in range(cout):
        mult[c], shift[c] = quantize_multiplier(scale * float(rng.uniform(0.5, 2.0)))
    p = ConvParams(input_offset=128, output_offset=-128 + int(rng.integers(0, 40)),
                   out_multiplier=mult, out_shift=shift, act_min=-128, act_max=127,
                   stride_h=stride, stride_w=stride, dilation_h=1, dilation_w=1,
                   pad_top=pad_h // 2, pad_left=pad_w // 2, pad_bottom=pad_h - pad_h // 2,
                   pad_right=pad_w - pad_w // 2)
    x = rng.integers(-128, 128, (1, *hw, cin)).astype(np.int8)
    w_shape = (1, kh, kw, cout) if depthwise else (cout, kh, kw, cin)
    w = rng.integers(-127, 128, w_shape).astype(np.int8)
    bias = rng.integers(-20000, 20000, cout).astype(np.int32)
    return ConvCase(op, x, w, bias, p, (1, oh, ow, cout))




def with_dead_channels(case: ConvCase, channels: list[int]) -> ConvCase:
    """The case with near-dead output channels as real models have them (VWW's later
    pointwise layers): bias +-2^30 and shift -31, where the kernels' fast requantization is
    not exact and they must switch to the exact one for those channels only."""
    bias = np.array(case.bias, np.int32)
    shift = np.array(case.p.out_shift, np.int32)
    for k, c in enumerate(channels):
        bias[c] = (1 << 30) if k % 2 == 0 else -(1 << 30)
        shift[c] = -31
    p = dataclasses.replace(case.p, out_shift=shift)
    return dataclasses.replace(case, bias=bias, p=p)


def fc_layer(cin: int, cout: int, seed: int = 0) -> FcCase:
    """A per-tensor FULLY_CONNECTED layer."""
    rng = np.random.default_rng(seed)
    m, s = quantize_multiplier(20.0 / (np.sqrt(cin) * 110 * 70))
    p = FullyConnectedParams(input_offset=int(rng.integers(-20, 20)), filter_offset=0,
                             output_offset=int(rng.integers(-20, 20)),
                             out_multiplier=np.array([m], np.int32),
                             out_shift=np.array([s], np.int32), act_min=-128, act_max=127)
    x = rng.integers(-128, 128, (1, cin)).astype(np.int8)
    w = rng.integers(-127, 128, (cout, cin)).astype(np.int8)
    bias = rng.integers(-20000, 20000, cout).astype(np.int32)
    return FcCase(Op.FC, x, w, bias, p)


# Issue 14's classes on the DSP paths that take them: few output channels (the direct path,
# th_nn_conv_direct_s8.c: Cout 1-3, odd Cin, groups of 1, 2 and 4 pixels, clipped borders,
# dilations, in place), long columns of odd Cin (im2col staged in 256-byte windows), short
# and odd fully connected inputs (the per-row tail word, per-channel blocks).
FEW_CHANNEL_LAYERS: list[tuple[Op, tuple[int, int], int, int, int | tuple[int, int], int]] = [
    (Op.CONV, (11, 11), 31, 1, (6, 5), 1),  # K 930, one channel
    (Op.CONV, (7, 55), 5, 1, (4, 3), 2),
    (Op.CONV, (24, 7), 38, 2, 3, 2),
    (Op.CONV, (9, 13), 7, 3, (2, 5), 1),
    (Op.CONV, (13, 9), 18, 5, (7, 4), 2),  # K 504, Cout 5: two im2col windows
    (Op.CONV, (8, 12), 18, 5, (6, 3), 1),
    (Op.CONV_1X1, (9, 5), 31, 3, 1, 2),
    (Op.CONV_1X1, (10, 12), 25, 1, 1, 1),
    (Op.CONV_3X3, (6, 7), 9, 2, 3, 1),
]


def small_cin_cases() -> list[ConvCase]:
    """CONV_2D with 1-5 input channels (th_conv_small_cin_s8.c and the paths next to it):
    one-column and one-row images, K x K and K x 1 kernels, strides 1-3, SAME and VALID."""
    rng = np.random.default_rng(14)
    cases = []
    for i in range(48):
        cin = int(rng.integers(1, 6))
        cout = 4 * int(rng.integers(1, 5)) if i % 4 else int(rng.integers(1, 12))
        kh = int(rng.integers(1, 8))
        kw = 1 if i % 3 == 0 else int(rng.integers(1, 8))
        stride = int(rng.integers(1, 4))
        h, w = int(rng.integers(kh, 20)), int(rng.integers(kw, 40))
        if i % 6 == 1:
            w = 1  # one-column image: whole kernel columns in the padding
        elif i % 6 == 2:
            h = 1
        case = layer_case(Op.CONV, (h, w), cin, cout, (kh, kw), stride, seed=i)
        if i % 2 and h >= kh and w >= kw:  # VALID
            oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
            case = dataclasses.replace(
                case, out_shape=(1, oh, ow, cout),
                p=dataclasses.replace(case.p, pad_top=0, pad_left=0, pad_bottom=0,
                                      pad_right=0))
        cases.append(case)
    # Cout % 4 != 0 (one-channel blocks after those of 4, path CONV_SMALL_CIN_PART), Cout 2
    # and 3, several 16-pixel tiles; one-column images run as one-row ones (K x 1 and K x K
    # filters, even kernels, VALID), one-row images, line images of filters too large for the
    # layer's own geometry.
    for i, (hw, cin, cout, k, stride) in enumerate([
            ((22, 1), 2, 3, 5, 2), ((22, 1), 2, 4, 5, 2), ((30, 1), 3, 7, (5, 1), 1),
            ((17, 1), 1, 2, 3, 3), ((9, 1), 3, 9, (7, 2), 1), ((40, 1), 1, 13, (4, 4), 1),
            ((1, 40), 1, 6, (1, 5), 2), ((1, 23), 3, 5, 3, 1), ((42, 31), 3, 11, 3, 2),
            ((23, 31), 3, 7, 3, 2), ((20, 17), 1, 2, (2, 6), 2), ((13, 9), 2, 3, 3, 1),
            ((16, 40), 3, 13, 3, 2), ((5, 5), 1, 9, 4, 1), ((12, 35), 2, 10, (4, 2), 1),
            # filters whose whole field is over the base limits, their line within them
            # (the view before the layer's geometry)
            ((30, 1), 3, 5, 11, 1), ((25, 1), 2, 2, (9, 7), 2), ((1, 30), 1, 6, 9, 2)]):
        cases.append(layer_case(Op.CONV, hw, cin, cout, k, stride, seed=100 + i))
    # Cout % 4 != 0 (path CONV_SMALL_CIN_PART: blocks of one channel after those of 4),
    # drawn where the path applies: Cout 1-3 (no block of 4) and 5-15, fields of 1 to 8
    # chunks with and without the 2-word tail, strides 1-3, rows of several 16-pixel tiles.
    drawn = 0
    while drawn < 10:
        cin, kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 8)), int(rng.integers(1, 8))
        cout = int(rng.choice([1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15]))
        stride = int(rng.integers(1, 4))
        hw = (int(rng.integers(kh, 12)), int(rng.integers(kw, 40)))
        if small_cin_conv_scratch(cin, kh, kw, cout, -(-hw[1] // stride), stride, 1, 1):
            cases.append(layer_case(Op.CONV, hw, cin, cout, (kh, kw), stride, seed=200 + drawn))
            drawn += 1
    # Record streams of 1-2 KB (path CONV_SMALL_CIN_WIDE, general conv only): drawn where
    # only the 1 KB cap turns the layer away, each run with the base scratch (im2col) and the
    # fast one (the path): blocks of 4 with and without one-channel blocks, tails, strides
    # 1-3, one or several tiles; and the sweep row 37x29x3->19 k9x1 s2 it was made for.
    wide = [layer_case(Op.CONV, (37, 29), 3, 19, (9, 1), 2, seed=300)]
    while len(wide) < 6:
        cin, kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 8)), int(rng.integers(1, 8))
        cout, stride = int(rng.integers(5, 24)), int(rng.integers(1, 4))
        hw = (int(rng.integers(kh, 9)), int(rng.integers(kw, 40)))
        if (kh, kw) != (3, 3) and small_cin_conv_fast_scratch(
                cin, kh, kw, cout, -(-hw[1] // stride), stride, 1, 1):
            wide.append(layer_case(Op.CONV, hw, cin, cout, (kh, kw), stride,
                                   seed=300 + len(wide)))
    cases += [dataclasses.replace(c, fast_scratch=f) for c in wide for f in (False, True)]
    # Cout 1-3 with fields of 9-16 chunks (path CONV_SMALL_CIN_LONG, general conv only; Cout 1
    # before the direct path): drawn where only the 8-chunk cap turns the layer away, each
    # run with the base scratch (direct / im2col) and the fast one (the path): tails,
    # strides 1-3, rows of one tile and of two 32-pixel tiles, padding rows and columns; and
    # the sweep row 53x22x3->1 k5x5 it was made for (small).
    long = [layer_case(Op.CONV, (9, 22), 3, 1, 5, 1, seed=400)]
    while len(long) < 6:
        cin, kh, kw = int(rng.integers(1, 4)), int(rng.integers(2, 12)), int(rng.integers(2, 12))
        cout, stride = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        hw = (int(rng.integers(kh, kh + 3)), int(rng.integers(kw, 36 * stride)))
        if len(long) == 5:
            hw = (hw[0], 33 * stride + 1)  # two tiles
        if (kh, kw) != (3, 3) and small_cin_conv_fast_scratch(
                cin, kh, kw, cout, -(-hw[1] // stride), stride, 1, 1):
            long.append(layer_case(Op.CONV, hw, cin, cout, (kh, kw), stride,
                                   seed=400 + len(long)))
    cases += [dataclasses.replace(c, fast_scratch=f) for c in long for f in (False, True)]
    valid = layer_case(Op.CONV, (20, 1), 2, 6, (5, 1), 1, seed=7)
    cases.append(dataclasses.replace(
        valid, out_shape=(1, 16, 1, 6),
        p=dataclasses.replace(valid.p, pad_top=0, pad_left=0, pad_bottom=0, pad_right=0)))
    return cases

