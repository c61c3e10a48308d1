"""Scratch bytes each kernel needs in the arena, one documented rule per op.

These rules are exactly what the kernels_c `*_scratch_size` companions return (th_nn.h) for
the kernel variant the wrapper picks, in the DSP build (`PlanOptions.dsp`) or the portable
one; the planner never guesses. The in-place modes of overlap.py use the same scratch (the
kernels stage their input there anyway). This is the only Python statement of these sizes
(ARCHITECTURE.md §4.2): codegen grants scratch from it, and tests/test_scratch_sizes.py checks
it against the C functions of both kernel builds on random shapes.

| op (int8) | DSP build (bytes) | portable build |
|---|---|---|
| CONV_2D 1x1, no padding, no groups (th_conv_1x1_s8) | 4 * round_up4(Cin) + T | Cin |
| CONV_2D 3x3, dilation 1, no groups (th_conv_3x3_s8) | max(4 * round_up4(9 * Cin), S) | 0 |
| CONV_2D other, no groups (th_conv_general_s8) | max(4 * round_up4(KH * KW * Cin), S) | 0 |
| CONV_2D grouped | 0 | 0 |
| DEPTHWISE 3x3, mult 1, dilation 1, stride 1 or 2 | 2 * PH * PW (int16 plane) | round_up4(H*W) |
| DEPTHWISE other, mult 1 (th_dw_conv_general_s8) | round_up4(H * W) | round_up4(H * W) |
| DEPTHWISE mult > 1 (input read directly, never in place) | 0 | 0 |
| SVDF (th_svdf_s8: input and newest state values, int16) | SV | SV |
| AVERAGE_POOL_2D separable (th_avgpool_s8_scratch_size) | A | A |
| MAX_POOL_2D separable (th_maxpool_s8_scratch_size) | X | X |
| CONV_2D fused with its residual ADD (compiled backend) | round_up4(conv's) + W * Cout | alike |
| DEPTHWISE_CONV_2D fused with its pointwise CONV_2D (compiled backend) | DP | alike |
| CONV_2D with packed int4 weights (`s4_kernel`) | 4 * round_up8(K) + 16 * Cout | same |
| FULLY_CONNECTED with packed int4 weights | 2 * round_up8(K) | same |
| DEPTHWISE with packed int4 weights | round_up4(KH * KW * C) + the int8 one's | same |
| everything else (elementwise, MEAN, ...), float32 | 0 | 0 |

A = round_up4(2 * AW * AC) + 4 * C (int16 column sums, int32 channel sums) when the output has
more than one pixel, KH <= 256 and KH * KW >= 4 * SH * SW, or SH, SW >= 2, KH * KW <= 256 and
KH * KW >= 2 * SH * SW or KH > SH (th_avgpool_s8.c, its strided path), else 0; AW = W,
or at stride 1 max(W + KW - 1, (OW - 1) + KW) (zero columns in the padding on both sides);
AC = C, or at stride 1 C + (C & 1) (an odd C's columns padded to whole words).
The strided path keeps its column sums grouped by four channels (C >= 4) when
2 * W * round_up4(C) <= A (always at C % 4 == 0), else in natural order.
X = round_up4(W * C) (int8 column maxima) when the output has more than one pixel and
KH * KW > KH * SW + KW (th_maxpool_s8.c), else 0. Given XF (fast_scratch_bytes, DSP build
without Helium: R * round_up4(L * C), L = (OW - 1) * SW + KW the columns the windows span with
the padding, R = 4 when SH == 1, 5 <= KH <= 7 and OH >= 4, R = 2 when SH == 1, 2 <= KH <= 7
and OH > 1, else 1; 0 when the output is one pixel or XF <= X) the max pool runs its word loops
on padded rows of column maxima, R output rows per pass over their input rows; given X only,
the same loops on unpadded rows.
FULLY_CONNECTED int8 needs none; given FF (fast_scratch_bytes, DSP build without Helium:
2 * round_up4(Cin) when 128 < Cin <= 2^20 and Cout >= 8, else 0) it widens longer input rows
into it and runs its short-input path (FC_SHORT) on them too.
SV = round_up4(2 * input_size) + round_up4(2 * filters).
T = 32 * (Cout / 2) when the 1x1 is dense (stride 1, output size = input size, Cin % 4 == 0)
and Cout / 2 > RQ_PAIRS_ON_STACK (its requantization table), else 0.
PH = (OH - 1) * stride + 3, PW = ((OW - 1) * stride + 5) & ~1 (th_dw_conv_3x3_s8.c). Given four
planes (fast_scratch_bytes: C >= 4) it stages four channels per pass (the last C % 4 one at a
time), given C planes (C = 2 or 3, untransposed: not OH > OW with OW < 8 and the transposed
plane no larger) all C channels in one pass, instead; the blob gives it that where the planned
arena has the room free.
Given G (fast_scratch_bytes, DSP build) the general depthwise runs its DSP multiplier, plane or
rows path, else the reference loop. Multiplier path (dw_mult_applies: mult >= 2 and KH * KW <=
16; th_dw_conv_mult_s8.c): G = 4 * mult * (4 + ceil(KH * KW / 2)) + round_up4(PH * PW + 4), one
input channel's records (per output channel the start value, ceil(KH * KW / 2) weight pairs and
three requantization words) and its int8 plane padded to what the outputs read (PH, PW as for
Helium below); at most 4 taps, the records and one output row's staged tap pairs instead of the
plane: 4 * ceil(KH * KW / 2) * round_up2(OW).
Plane path, in the frame (A, B) = (H, W) or (W, H) cheaper per output
(_dw_plane_frame; KA >= 2, KB >= 4 or >= 2 with mult 1, KA * KB >= 15, KA and KB <= 64,
DB <= 16, plane <= 16384 bytes): G = 2 * R * DB * PHL + 4 * mult * (5 + KA * ceil(KB / 2)), one
padded int16 input plane (R = (OA - 1) * SA + (KA - 1) * DA + 1 lines of DB phase rows of PHL
values, PHL as PL below with KA = 1 and KP = ceil(KB / 2)) and the records; where the rows
path's frame below has KA = 2 (its bands pair the two rows: path DW_ROWS_KA2, taken unless the
output overlaps the input), G = max(that, the rows path's G). Rows path:
G = [round_up4(H * W) if mult 1 and OA > 1] + 2 * group * DB * PL +
4 * group * mult * (5 + KP): the int8 plane (in place), the int16 bands (group = min(C, 4)
channels staged per pass when KA <= 2, else 1) of DB phase rows of PL values each,
and the records (mode, start value, requantization constants, KP = ceil(KA * KB / 2) weight
pairs) of one input channel's outputs, in the frame (A, B) = (H, W) or (W, H) that stages
fewer values (stage_cost, th_dw_conv_general_s8.c). A band row interleaves the KA input rows
column by column; PL = round_up2(KA * ceil(N / KA)), N = the largest
((o0 * SB) // DB + SB' * (n - 1)) * KA + 2 * KP over the P = DB / gcd(SB, DB) output phases o0
(n = their output count rounded up to a multiple of four, SB' = SB / gcd).
G is at least the channel-inner path's scratch where that path applies (dw_lines_scratch:
records, and in its pairs variant one staged line).
K of the int4 kernels (th_*_s4, one staged int16 column): KH * KW * Cin (CONV_2D), Cin
(FULLY_CONNECTED). The int4 depthwise widens its filter into the scratch's head and runs the
int8 depthwise on the rest: its fast scratch is that head + the int8 one's fast scratch.
DP = round_up4(max over the bands of both kernels' scratch for the band's shapes) + R * OW * C,
R = dwpw_band_rows (the depthwise output rows staged per band, OW * C bytes each).
S = small_cin_conv_scratch (few input channels, th_conv_small_cin_s8.c; 0 when it does not apply).

Helium build (`PlanOptions.mve`, with `dsp`; th_nn_mve_s8.c): every CONV_2D without groups (1x1,
3x3, general) needs 4 * Cout (bias + input offset * sum of weights, per channel) +
2 * round_up4(KH * KW * Cin) (two int8 columns, or the staged pixels of an in-place 1x1; four
when K <= MVE_QUAD_K = 32: four pixels a step);
grouped 0.
Every DEPTHWISE_CONV_2D round_up4(PH * PW), PH = (OH - 1) * SH + (KH - 1) * DH + 1 (PW alike):
one int8 input plane with its padding (mve_dw_scratch), no faster path. Other ops: none.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from tinyhost.arith.padding import compute_window_padding
from tinyhost.ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DwPwConv2DOptions,
    Graph,
    Op,
    OpKind,
    Pool2DOptions,
    ResidualConv2DOptions,
    dwpw_parts,
)
from tinyhost.plan.options import PlanOptions


def _ru4(k: int) -> int:
    return (k + 3) & ~3


def _is_int8(graph: Graph, op: Op) -> bool:
    first = op.inputs[0] if op.inputs else None
    return first is not None and graph.tensors[first].dtype == np.int8


def _pads(graph: Graph, op: Op) -> tuple[int, int]:
    """(top, left) padding of a CONV_2D / DEPTHWISE_CONV_2D op, as TFLM computes it."""
    o = op.options
    assert isinstance(o, Conv2DOptions | DepthwiseConv2DOptions)
    _, h, w, _ = graph.tensors[op.inputs[0]].shape
    _, kh, kw, _ = graph.tensors[op.inputs[1]].shape
    p = compute_window_padding(
        o.padding, h, w, kh, kw, o.stride_h, o.stride_w, o.dilation_h, o.dilation_w,
        explicit=o.explicit_padding,
    )
    return p.top, p.left


def is_conv_1x1_kernel(graph: Graph, op: Op) -> bool:
    """th_conv_s8 picks th_conv_1x1_s8: 1x1 filter, no padding, no groups (any stride)."""
    if op.kind is not OpKind.CONV_2D or not isinstance(op.options, Conv2DOptions):
        return False
    x = graph.tensors[op.inputs[0]].shape
    f = graph.tensors[op.inputs[1]].shape  # Cout, KH, KW, Cin / groups
    y = graph.tensors[op.outputs[0]].shape
    if len(x) != 4 or len(f) != 4 or len(y) != 4:
        return False
    o = op.options
    return (
        x[3] == f[3]
        and f[1] == 1
        and f[2] == 1
        and _pads(graph, op) == (0, 0)
        and (y[1] - 1) * o.stride_h < x[1]
        and (y[2] - 1) * o.stride_w < x[2]
    )


def is_pointwise_conv(graph: Graph, op: Op) -> bool:
    """A stride-1 CONV_2D run by th_conv_1x1_s8: output pixel p depends on input pixel p only,
    staged in scratch before it is written (th_nn.h aliasing rule (b))."""
    if not is_conv_1x1_kernel(graph, op):
        return False
    o = op.options
    assert isinstance(o, Conv2DOptions)
    return o.stride_h == 1 and o.stride_w == 1


def ch_mult(graph: Graph, op: Op) -> int:
    """From the shapes (some files store 0 in the option), as tinyhost.arith.conv does."""
    cin = graph.tensors[op.inputs[0]].shape[3]
    cout = graph.tensors[op.inputs[1]].shape[3]
    return cout // cin if cin else 0


def conv_variant(graph: Graph, op: Op) -> str:
    """The kernels_c function the CONV_2D / DEPTHWISE_CONV_2D wrapper runs for this op
    (th_conv_s8.c `pick`, th_dw_conv_s8.c `is_3x3`); a compiled model calls it directly."""
    if op.kind is OpKind.DEPTHWISE_CONV_2D:
        return "th_dw_conv_3x3_s8" if _is_dw_3x3(graph, op) else "th_dw_conv_general_s8"
    if is_conv_1x1_kernel(graph, op):
        return "th_conv_1x1_s8"
    o = op.options
    assert isinstance(o, Conv2DOptions)
    x = graph.tensors[op.inputs[0]].shape
    _, kh, kw, wc = graph.tensors[op.inputs[1]].shape
    if x[3] == wc and kh == 3 and kw == 3 and o.dilation_h == 1 and o.dilation_w == 1:
        return "th_conv_3x3_s8"
    return "th_conv_general_s8"


def _is_dw_3x3(graph: Graph, op: Op) -> bool:
    """th_dw_conv_s8.c is_3x3: the 3x3 kernel takes the op."""
    o = op.options
    assert isinstance(o, DepthwiseConv2DOptions)
    _, kh, kw, _ = graph.tensors[op.inputs[1]].shape
    return (kh == 3 and kw == 3 and ch_mult(graph, op) == 1 and o.dilation_h == 1
            and o.dilation_w == 1 and o.stride_h == o.stride_w and o.stride_h in (1, 2))


# th_nn_support.h TH_NN_RQ_PAIRS_1X1: the dense 1x1 path keeps up to this many channel pairs of
# requantization constants (32 bytes each) on the stack, more in scratch after the columns.
RQ_PAIRS_ON_STACK = 32


# th_conv_small_cin_s8.c: largest unrolled chunk count and record stream.
SMALL_CIN_MAX_CHUNKS = 8
SMALL_CIN_MAX_RECORD_BYTES = 1024
SMALL_CIN_MAX_RECORD_BYTES_FAST = 2048  # given the fast scratch (path CONV_SMALL_CIN_WIDE)
SMALL_CIN_MAX_CHUNKS_ONE = 16  # ... Cout < 4 (path CONV_SMALL_CIN_LONG)
SMALL_CIN_TILE = 16
SMALL_CIN_TILE_LONG = 32


def small_cin_conv_scratch(cin: int, kh: int, kw: int, cout: int, ow: int, stride_w: int,
                           dilation_h: int, dilation_w: int,
                           column: tuple[int, int] | None = None, fast: bool = False) -> int:
    """Scratch of the few-input-channel CONV_2D path (th_nn_conv_small_cin_scratch), 0 when it
    does not apply: groups 1 (cin = the filter's), dilation 1, Cin <= 3, a receptive field of
    at most 8 chunks of 4 int16 pairs (+ a tail of 2) and a record stream (weights, biases,
    requantization constants; channels in blocks of 4, the last Cout % 4 in blocks of one) of
    at most 1 KB; with the fast scratch (fast, small_cin_conv_fast_scratch) streams of 2 KB
    and, Cout < 4, fields of 16 chunks.
    Scratch: the record stream plus the staged columns (int16) of up to 16 output pixels of
    a row.
    column = (OH, stride_h) of a one-column image (W = OW = 1) with OH > 1: at least the
    scratch of the one-row image it runs as (filter 1 x KH, OW = OH, stride_w = stride_h)."""
    if cin > 3 or dilation_h != 1 or dilation_w != 1:
        return 0
    b = kh * cin
    bp = b + ((b * stride_w) & 1)
    words = (((kw * bp + 1) // 2) + 1) & ~1
    if words // 4 > (SMALL_CIN_MAX_CHUNKS_ONE if fast and cout < 4 else SMALL_CIN_MAX_CHUNKS):
        return 0
    record_words = 5 + (cout // 4) * (4 * words + 17) + (cout % 4) * (words + 8)
    if 4 * record_words > (SMALL_CIN_MAX_RECORD_BYTES_FAST if fast else
                           SMALL_CIN_MAX_RECORD_BYTES):
        return 0
    # output pixels staged at a time (32 given the fast scratch for Cout < 4)
    tile = min(ow, SMALL_CIN_TILE_LONG if fast and cout < 4 else SMALL_CIN_TILE)
    cols = (tile - 1) * stride_w + kw
    values = max(cols * bp, (tile - 1) * stride_w * bp + 2 * words)
    full = 4 * record_words + 2 * ((values + 1) & ~1)
    if column is None:
        return full
    return max(full, small_cin_conv_scratch(cin, 1, kh, cout, column[0], column[1], 1, 1,
                                            fast=fast))


def small_cin_conv_fast_scratch(cin: int, kh: int, kw: int, cout: int, ow: int, stride_w: int,
                                dilation_h: int, dilation_w: int,
                                column: tuple[int, int] | None = None) -> int:
    """th_nn_conv_small_cin_scratch_fast: where only the 1 KB cap on the record stream (or,
    Cout < 4, the 8-chunk cap on the field) turns the layer away, its scratch with streams up
    to 2 KB (fields up to 16 chunks); else 0."""
    args = (cin, kh, kw, cout, ow, stride_w, dilation_h, dilation_w, column)
    if small_cin_conv_scratch(*args):
        return 0
    return small_cin_conv_scratch(*args, fast=True)


MVE_QUAD_K = 32  # TH_NN_MVE_QUAD_K: th_nn_mve_conv_s8's four-pixel path


def _conv_scratch(graph: Graph, op: Op, dsp: bool, mve: bool = False) -> int:
    x = graph.tensors[op.inputs[0]].shape
    cout, kh, kw, wc = graph.tensors[op.inputs[1]].shape
    if dsp and mve:  # th_nn_mve_conv_scratch: the table of 4 * Cout, int8 columns
        k = kh * kw * wc
        return 0 if x[3] != wc else 4 * cout + (4 if k <= MVE_QUAD_K else 2) * _ru4(k)
    if is_conv_1x1_kernel(graph, op):
        if not dsp:
            return x[3]
        y = graph.tensors[op.outputs[0]].shape
        o = op.options
        assert isinstance(o, Conv2DOptions)
        dense = (o.stride_h, o.stride_w) == (1, 1) and y[1:3] == x[1:3] and x[3] % 4 == 0
        pairs = y[3] // 2
        table = 32 * pairs if dense and pairs > RQ_PAIRS_ON_STACK else 0
        return 4 * _ru4(x[3]) + table
    if not dsp or x[3] != wc:
        return 0  # portable paths and grouped convolution: the reference loop, no scratch
    o = op.options
    assert isinstance(o, Conv2DOptions)
    y = graph.tensors[op.outputs[0]].shape
    column = (y[1], o.stride_h) if x[2] == 1 and y[2] == 1 and y[1] > 1 else None
    small = small_cin_conv_scratch(wc, kh, kw, y[3], y[2], o.stride_w,
                                   o.dilation_h, o.dilation_w, column)
    # 3x3 and general: int16 im2col of two output pixels, or the few-input-channel path
    return max(4 * _ru4(kh * kw * wc), small)


DW_PLANE_MAX = 16384  # th_dw_conv_general_s8.c TH_DW_PLANE_MAX
DW_MULT_TAPS = 16  # th_nn_support.h TH_DW_MULT_TAPS
DW_MULT_SMALL_TAPS = 4  # th_nn_support.h TH_DW_MULT_SMALL_TAPS


def _dw_plane_frame(k: tuple[int, int], out_hw: tuple[int, int], stride: tuple[int, int],
                    dilation: tuple[int, int], mult: int, b: int) -> tuple[int, int] | None:
    """dw_plane_frame with axis b (1: w, 0: h) contiguous: (G, cost per output row), None where
    it does not apply."""
    ka, kb = k[1 - b], k[b]
    sa, sb, da, db = stride[1 - b], stride[b], dilation[1 - b], dilation[b]
    out_a, out_b = out_hw[1 - b], out_hw[b]
    if ka < 2 or kb < (2 if mult == 1 else 4) or ka * kb < 15 or kb > 64 or ka > 64 or db > 16:
        return None
    g = math.gcd(sb, db)
    phases, sbp, kbp = db // g, sb // g, (kb + 1) // 2
    need = 0
    for o0 in range(min(phases, out_b)):
        n = ((out_b - o0 + phases - 1) // phases + 3) & ~3
        need = max(need, (o0 * sb) // db + sbp * (n - 1) + 2 * kbp)
    phlen = (need + 1) & ~1
    rows = (out_a - 1) * sa + (ka - 1) * da + 1
    if 2 * rows * db * phlen > DW_PLANE_MAX:
        return None
    # plane, records, the flat path's window table (dw_plane_table)
    return (2 * rows * db * phlen + 4 * mult * (5 + ka * kbp) + 2 * _ru4(out_a * out_b),
            (3 * ka * kbp + 2 * ka) * out_b + 200 * phases)


def dw_plane_scratch(k: tuple[int, int], out_hw: tuple[int, int], stride: tuple[int, int],
                     dilation: tuple[int, int], mult: int) -> int:
    """The general depthwise's plane path (dw_plane_geometry): its G in the cheaper frame per
    output, or 0 where it does not apply."""
    plain = _dw_plane_frame(k, out_hw, stride, dilation, mult, 1)
    tr = _dw_plane_frame(k, out_hw, stride, dilation, mult, 0)
    if tr is not None and (plain is None or tr[1] * out_hw[1] < plain[1] * out_hw[0]):
        return tr[0]
    return 0 if plain is None else plain[0]


DW_LINES_MAX_TAPS = 8  # th_dw_conv_lines_s8.c
DW_LINES_MAX_TAPS_2D = 64  # 2-D windows (KA >= 2): the general block loop
DW_LINES_MAX_SCRATCH = 16384
DW_LINE_MAX_K = 3  # th_dw_conv_lines_s8.c: the estimate of its K <= 3 loops (lines_variant)
DW_LINE_MAX_BLOCKS = 20
DW_PAIRS_MAX_PAIRS = 8


def _dw_pairs(k: tuple[int, int], out_hw: tuple[int, int], stride: tuple[int, int],
              dilation: tuple[int, int], blocks: int) -> tuple[int, int] | None:
    """th_dw_conv_lines_s8.c pairs variant (pairs_geometry, pairs_cost4): (scratch bytes,
    4 x estimated instructions), or None where it does not apply (more than two taps across
    the line, more than 16 along it with one across, more than 8 with two)."""
    b = 0 if k[0] > k[1] else 1  # the line (B) axis: more taps, w on a tie
    kb, sb, db, out_b, out_a = k[b], stride[b], dilation[b], out_hw[b], out_hw[1 - b]
    across = k[1 - b] == 2  # a slot pairs the two lines across
    if k[1 - b] > 2 or kb > (2 - across) * DW_PAIRS_MAX_PAIRS or sb > 64 or db > 64:
        return None
    kp = kb if across else (kb + 1) // 2
    u = db if across else 2 * db  # positions between an output's pairs
    g = math.gcd(sb, u)
    p, sbg = u // g, sb // g
    op = p
    # split: odd SB, DB 1 (odd KB or SB > 1): one phase row of even positions read by two
    # output phases, a second record per block (weight pairs shifted by one tap),
    # KP = KB / 2 + 1
    split = (not across and db == 1 and sb % 2 == 1 and kb // 2 + 1 <= DW_PAIRS_MAX_PAIRS
             and (kb % 2 == 1 or sb > 1) and out_b > 1)
    if split:
        kp, g, p, op, sbg = kb // 2 + 1, 2, 1, 2, sb
    # split: phase 1 from slot (SB + 1) // 2 (pad_b made even or not: the larger)
    phlen = max(((o0 * sb + split) // g) // p + ((out_b - o0 + op - 1) // op - 1) * sbg + kp
                for o0 in range(min(op, out_b)))
    # records, the staged line, the phase rows' spans and the line's output runs
    size = ((1 + split) * blocks * 4 * (16 + 4 * kp) + 16 * p * phlen + 16 * p
            + 8 * min(op, out_b))
    if across:
        per_line = out_b * (6 * kp + 32) + 11 * p * phlen + 155
        return size, 40 * (blocks * (out_a * per_line + 200) + 1660) // 9  # 10 / 9: margin
    per_line = out_b * (6 * kp + 27) + (24 >> split) * p * phlen + 344  # split: 12 a slot
    return size, 4 * (blocks * (out_a * per_line + (1 + split) * (13 * kp + 78)) + 2530)


def dw_lines_scratch(k: tuple[int, int], out_hw: tuple[int, int], stride: tuple[int, int],
                     dilation: tuple[int, int], mult: int, channels: int) -> int:
    """th_dw_lines_scratch: the channel-inner path's scratch where it applies (mult 1,
    C >= 4) and the cheaper of its variants is estimated below the rows path
    (lines_variant); else 0. Taps variant (at most 8 taps, or a 2-D window of at most 64):
    ceil(C / 4) blocks of 4 * (16 + 2 * taps) bytes; pairs variant (one tap across the line,
    at most 16 along it, _dw_pairs): ceil(C / 4) blocks of 4 * (16 + 4 * KP) bytes and one
    staged line (and the line's spans and runs), also with two taps across and at most 8
    along (its estimate 10 / 9 of the counts)."""
    if mult != 1 or channels < 4:
        return 0
    taps = k[0] * k[1]
    blocks = channels // 4 + (channels % 4 != 0)
    b = 0 if k[0] > k[1] else 1  # the inner (B) axis: more taps, w on a tie
    ka, sb, out_a = k[1 - b], stride[b], out_hw[1 - b]
    phases = dilation[b] // math.gcd(stride[b], dilation[b])
    pixels = out_hw[0] * out_hw[1]
    kp = (taps + 1) // 2
    rows = channels * (pixels * (8 * kp + 26) + 4 * pixels * ka * sb
                       + 480 * out_a * phases + 844) + 16280
    best: tuple[int, int] | None = None  # (4 x estimate, bytes)
    size = blocks * 4 * (16 + 2 * taps)
    taps_ok = taps <= DW_LINES_MAX_TAPS or (ka > 1 and taps <= DW_LINES_MAX_TAPS_2D)
    if taps_ok and size <= DW_LINES_MAX_SCRATCH:
        if ka == 1 and taps <= DW_LINE_MAX_K and blocks <= DW_LINE_MAX_BLOCKS:  # line loops
            per_line = out_hw[b] * blocks * (8 * taps + 31) + 24 * blocks + 110
            est = 4 * (out_a * per_line + 40 * channels + 8 * taps * blocks + 634)
        else:
            # beyond the fit's taps (2-D, more than 8): 12 per filter row after the first
            per_block = 9 * taps + 25 + (12 * (ka - 1) if taps > DW_LINES_MAX_TAPS else 0)
            est = 4 * (pixels * (blocks * per_block + (26 if channels % 4 else 0) + 115)
                       + 72 * channels + 634)
        best = (est, size)
    pairs = _dw_pairs(k, out_hw, stride, dilation, blocks)
    if pairs is not None and pairs[0] <= DW_LINES_MAX_SCRATCH and (
            best is None or pairs[1] < best[0]):
        best = (pairs[1], pairs[0])
    return best[1] if best is not None and best[0] < rows else 0


def dw_mult_applies(k: tuple[int, int], mult: int) -> bool:
    """th_nn_support.h th_nn_dw_mult_applies: the multiplier path takes the depthwise."""
    taps = k[0] * k[1]
    return mult >= 2 and taps <= DW_MULT_TAPS


def _dw_rows_axis(k: tuple[int, int], out_hw: tuple[int, int], stride: tuple[int, int],
                  dilation: tuple[int, int]) -> int:
    """The rows path's contiguous (B) axis (0: h, 1: w): the frame staging fewer values
    (th_dw_conv_general_s8.c stage_cost, dw_transposed)."""
    def cost(b: int) -> int:
        return out_hw[1 - b] * (3 * k[1 - b] * ((out_hw[b] - 1) * stride[b]
                                                + (k[b] - 1) * dilation[b] + 1) + 80)

    return 0 if cost(0) < cost(1) else 1


def dw_rows_ka2(k: tuple[int, int], out_hw: tuple[int, int], stride: tuple[int, int],
                dilation: tuple[int, int], mult: int) -> bool:
    """Path DW_ROWS_KA2 (dw_rows_ka2): the plane path applies and the rows path's frame has
    two filter rows across, so the rows path runs instead (unless in place)."""
    b = _dw_rows_axis(k, out_hw, stride, dilation)
    return (not dw_mult_applies(k, mult) and k[1 - b] == 2
            and dw_plane_scratch(k, out_hw, stride, dilation, mult) > 0)


def dw_general_scratch(hw: tuple[int, int], k: tuple[int, int], out_hw: tuple[int, int],
                       stride: tuple[int, int], dilation: tuple[int, int], mult: int,
                       dsp: bool, channels: int = 1) -> int:
    """th_dw_conv_general_s8_scratch_size_fast (G above; 0 in portable builds), (h, w);
    channels: the input's C."""
    if not dsp:
        return 0
    if dw_mult_applies(k, mult):  # th_dw_conv_mult_s8.c: one input channel's records and
        kp = (k[0] * k[1] + 1) // 2
        if k[0] * k[1] <= DW_MULT_SMALL_TAPS:  # one output row's staged tap pairs
            return 4 * mult * (4 + kp) + 4 * kp * ((out_hw[1] + 1) & ~1)
        ph = (out_hw[0] - 1) * stride[0] + (k[0] - 1) * dilation[0] + 1  # padded plane
        pw = (out_hw[1] - 1) * stride[1] + (k[1] - 1) * dilation[1] + 1
        return 4 * mult * (4 + kp) + _ru4(ph * pw + 4)
    plane_path = dw_plane_scratch(k, out_hw, stride, dilation, mult)
    b = _dw_rows_axis(k, out_hw, stride, dilation)
    ka, kb = k[1 - b], k[b]
    if plane_path and ka != 2:  # dw_rows_ka2: two rows across take the rows path first
        return plane_path
    sb, db, out_a, out_b = stride[b], dilation[b], out_hw[1 - b], out_hw[b]
    kp = (ka * kb + 1) // 2
    g = math.gcd(sb, db)
    phases, sbp = db // g, sb // g
    need = 0  # values read per phase row: the last output of phase o0 reads 2 kp from its start
    for o0 in range(min(phases, out_b)):
        n = ((out_b - o0 + phases - 1) // phases + 3) & ~3  # whole blocks of four outputs
        need = max(need, ((o0 * sb) // db + sbp * (n - 1)) * ka + 2 * kp)
    cols = (need + ka - 1) // ka
    plen = (cols * ka + 1) & ~1
    group = min(channels, 4) if ka <= 2 else 1
    plane = _ru4(hw[0] * hw[1]) if mult == 1 and out_a > 1 else 0
    rows = plane + 2 * group * db * plen + 4 * group * mult * (5 + kp)
    if plane_path:  # DW_ROWS_KA2: the plane path's too (in place, or the path left out)
        return max(rows, plane_path)
    return max(rows, dw_lines_scratch(k, out_hw, stride, dilation, mult, channels))


def mve_dw_scratch(k: tuple[int, int], out_hw: tuple[int, int], stride: tuple[int, int],
                   dilation: tuple[int, int]) -> int:
    """th_nn_mve_dw_scratch: one int8 input plane padded to what the outputs read."""
    ph = (out_hw[0] - 1) * stride[0] + (k[0] - 1) * dilation[0] + 1
    pw = (out_hw[1] - 1) * stride[1] + (k[1] - 1) * dilation[1] + 1
    return _ru4(ph * pw)


def _dw_3x3_rows(oh: int, ow: int, s: int) -> bool:
    """th_dw_conv_3x3_s8 group_planes: C = 2 or 3 are staged together given C planes where
    the planes are untransposed (is_transposed false: not OH > OW with OW < 8 and the
    transposed plane no larger)."""
    def ph(o: int) -> int:
        return (o - 1) * s + 3

    def pw(o: int) -> int:
        return ((o - 1) * s + 5) & ~1

    return not (oh > ow and ow < 8 and ph(ow) * pw(oh) <= ph(oh) * pw(ow))


def _dw_scratch(graph: Graph, op: Op, dsp: bool, fast: bool = False, mve: bool = False) -> int:
    o = op.options
    assert isinstance(o, DepthwiseConv2DOptions)
    _, h, w, c = graph.tensors[op.inputs[0]].shape
    _, kh, kw, _ = graph.tensors[op.inputs[1]].shape
    _, oh, ow, oc = graph.tensors[op.outputs[0]].shape
    if dsp and mve:  # every depthwise: its Helium path, no faster one
        return 0 if fast else mve_dw_scratch((kh, kw), (oh, ow), (o.stride_h, o.stride_w),
                                             (o.dilation_h, o.dilation_w))
    if dsp and _is_dw_3x3(graph, op):
        s = o.stride_h
        plane = 2 * ((oh - 1) * s + 3) * (((ow - 1) * s + 5) & ~1)
        if fast:  # th_dw_conv_3x3_s8_scratch_size_fast: four channels staged per pass
            if oc >= 4:
                return 4 * plane
            return oc * plane if oc >= 2 and _dw_3x3_rows(oh, ow, s) else 0
        return plane
    if fast:  # th_dw_conv_general_s8_scratch_size_fast: the DSP rows path
        return dw_general_scratch((h, w), (kh, kw), (oh, ow), (o.stride_h, o.stride_w),
                                  (o.dilation_h, o.dilation_w), ch_mult(graph, op), dsp, c)
    if ch_mult(graph, op) != 1:
        return 0  # th_dw_conv_general_s8 reads the input directly
    return _ru4(h * w)


def fast_scratch_bytes(graph: Graph, op: Op, options: PlanOptions | None = None) -> int:
    """Scratch with which the op's kernel runs a faster path (more than scratch_bytes), 0 when
    it has none: the 3x3 depthwise stages four channels per pass
    (th_dw_conv_3x3_s8_scratch_size_fast), the general depthwise runs its DSP rows path
    (th_dw_conv_general_s8_scratch_size_fast), the max pool its padded rows
    (th_maxpool_s8_scratch_size_fast), the int8 fully connected its short-input path on
    longer inputs (th_fully_connected_s8_scratch_size_fast). The kernel picks the path from
    the scratch size it is given; codegen gives it where the planned arena has that much room
    free (no growth).
    The pointwise conv with few output channels widens its weights into it
    (th_conv_1x1_s8_scratch_size_fast), and the general conv with 2-4 output channels and
    dilation.w > 1 stages int8 columns in it, the general conv with Cin <= 3 whose record
    stream is over 1 KB (or, Cout < 4, whose field is over 8 chunks) runs the few-input-channel
    path in it (streams up to 2 KB, fields up to 16 chunks;
    th_conv_general_s8_scratch_size_fast)."""
    options = options or PlanOptions()
    if not options.dsp or not _is_int8(graph, op) or not op.outputs:
        return 0
    if isinstance(op.options, DwPwConv2DOptions):  # its bands run in the planned scratch
        return 0
    if s4_kernel(graph, op):  # th_dw_conv_s4_scratch_size_fast
        if op.kind is not OpKind.DEPTHWISE_CONV_2D:
            return 0
        fast = _dw_scratch(graph, op, True, fast=True, mve=options.mve)
        return _s4_dw_head(graph, op) + fast if fast else 0
    if graph.tensors[op.outputs[0]].dtype != np.int8:
        return 0
    if op.kind is OpKind.DEPTHWISE_CONV_2D and isinstance(op.options, DepthwiseConv2DOptions):
        return _dw_scratch(graph, op, True, fast=True, mve=options.mve)
    if is_conv_1x1_kernel(graph, op) and not options.mve:
        y = graph.tensors[op.outputs[0]].shape
        return conv_1x1_few_scratch(graph.tensors[op.inputs[0]].shape[3], y[3],
                                    y[0] * y[1] * y[2], _conv_scratch(graph, op, True))
    if (op.kind is OpKind.CONV_2D and type(op.options) is Conv2DOptions  # not a fused residual
            and not options.mve):
        fast = max(conv_direct_fast_scratch(graph, op), conv_direct_edge_scratch(graph, op),
                   small_cin_fast_scratch(graph, op), conv_few_cout_scratch(graph, op))
        return fast if fast > _conv_scratch(graph, op, True) else 0
    if op.kind is OpKind.MAX_POOL_2D and isinstance(op.options, Pool2DOptions) and not options.mve:
        _, _, w, c = graph.tensors[op.inputs[0]].shape
        _, oh, ow, _ = graph.tensors[op.outputs[0]].shape
        o = op.options
        return maxpool_fast_scratch(w, c, (oh, ow), (o.filter_h, o.filter_w),
                                    (o.stride_h, o.stride_w))
    if op.kind is OpKind.FULLY_CONNECTED and not options.mve and len(op.inputs) > 1:
        cout, cin = graph.tensors[op.inputs[1]].shape[:2]
        return fc_fast_scratch(cin, cout)
    return 0


def small_cin_fast_scratch(graph: Graph, op: Op) -> int:
    """The few-input-channel path's fast scratch (th_conv_general_s8_scratch_size_fast; the
    3x3 conv offers none): small_cin_conv_fast_scratch of the layer."""
    x = graph.tensors[op.inputs[0]].shape
    cout, kh, kw, wc = graph.tensors[op.inputs[1]].shape
    o = op.options
    assert isinstance(o, Conv2DOptions)
    if x[3] != wc or conv_variant(graph, op) != "th_conv_general_s8":
        return 0
    y = graph.tensors[op.outputs[0]].shape
    column = (y[1], o.stride_h) if x[2] == 1 and y[2] == 1 and y[1] > 1 else None
    return small_cin_conv_fast_scratch(wc, kh, kw, cout, y[2], o.stride_w, o.dilation_h,
                                       o.dilation_w, column)


def conv_direct_fast_scratch(graph: Graph, op: Op) -> int:
    """th_conv_general_s8_scratch_size_fast (DSP builds without Helium): the few-output-channel
    direct path's plain filter rows and four int8 columns, (Cout + 4) * round_up4(K) bytes, for
    groups 1, a filter that is not 1x1, dilation.w > 1 and 2 <= Cout <= 4; else 0 (the caller
    keeps it only where it is more than the ordinary scratch). 3x3 filters with dilation 1 go
    to th_conv_3x3_s8, never here."""
    x = graph.tensors[op.inputs[0]].shape
    cout, kh, kw, wc = graph.tensors[op.inputs[1]].shape
    o = op.options
    assert isinstance(o, Conv2DOptions)
    if not 2 <= cout <= 4 or x[3] != wc or (kh, kw) == (1, 1) or o.dilation_w < 2:
        return 0
    return (cout + 4) * _ru4(kh * kw * wc)


def conv_few_cout_scratch(graph: Graph, op: Op) -> int:
    """th_nn_conv_few_cout_scratch (th_conv_general_s8_scratch_size_fast, DSP builds without
    Helium): the channel-inner path for Cout 2-3, groups 1, Cin >= 4, dilation.w 1, a filter
    that is not 1x1: the weights widened to int16, 2 * Cout * KH * round_up4(KW * Cin) bytes,
    and one staged window, KH * round_up4(KW * Cin); else 0. Offered by th_conv_3x3_s8 too
    (th_conv_s8_scratch_size_fast, as conv_direct_edge_scratch for Cout 1)."""
    x = graph.tensors[op.inputs[0]].shape
    cout, kh, kw, wc = graph.tensors[op.inputs[1]].shape
    o = op.options
    assert isinstance(o, Conv2DOptions)
    if cout not in (2, 3) or x[3] != wc or wc < 4 or o.dilation_w != 1 or (kh, kw) == (1, 1):
        return 0
    return (2 * cout + 1) * kh * _ru4(kw * wc)


DIRECT_EDGE_MAX_RUN = 32  # th_nn_support.h TH_NN_DIRECT_EDGE_MAX_RUN


def conv_direct_edge_scratch(graph: Graph, op: Op) -> int:
    """th_nn_conv_direct_edge_scratch (th_conv_general_s8_scratch_size_fast, DSP builds without
    Helium): the direct path's edge patches for Cout 1, groups 1, dilation.w 1, a filter that
    is not 1x1 with rows of at most DIRECT_EDGE_MAX_RUN bytes (KW * Cin), some window partly
    left or right of the input or (1-3 output rows) a last group of 3 pixels, not a one-column
    image with one output column: the padded filter rows, KH * round_up4(KW * Cin), a patch
    of KH rows of (3 stride.w + KW) * Cin bytes and a word, rounded up to words, then the
    padded rows widened (twice their bytes); else 0. Offered by th_conv_3x3_s8 too
    (th_conv_s8_scratch_size_fast: its Cout 1 row runs)."""
    x = graph.tensors[op.inputs[0]].shape
    cout, kh, kw, wc = graph.tensors[op.inputs[1]].shape
    o = op.options
    assert isinstance(o, Conv2DOptions)
    ow = graph.tensors[op.outputs[0]].shape[2]
    if (cout != 1 or x[3] != wc or o.dilation_w != 1 or (kh, kw) == (1, 1)
            or kw * wc > DIRECT_EDGE_MAX_RUN or (x[2] == 1 and ow == 1)
            or conv_variant(graph, op) not in ("th_conv_general_s8", "th_conv_3x3_s8")):
        return 0
    left = _pads(graph, op)[1]
    oh = graph.tensors[op.outputs[0]].shape[1]
    if left <= 0 and (ow - 1) * o.stride_w - left + kw <= x[2] and (ow % 4 != 3 or oh >= 4):
        return 0
    return _ru4(kh * (_ru4(kw * wc) + (3 * o.stride_w + kw) * wc) + 4) + 2 * kh * _ru4(kw * wc)


CONV_1X1_FEW_MAX_COUT = 16  # th_conv_1x1_s8.c FEW_MAX_COUT
CONV_1X1_FEW_SMALL_COUT = 8  # th_conv_1x1_s8.c FEW_SMALL_COUT
CONV_1X1_FEW_MIN_PIXELS_CIN4 = 16  # th_conv_1x1_s8.c FEW_MIN_PIXELS_CIN4


def conv_1x1_few_scratch(cin: int, cout: int, pixels: int, ordinary: int) -> int:
    """th_conv_1x1_s8_scratch_size_fast (DSP builds without Helium): the weights widened to
    int16 (8 bytes per channel and input word, ceil(Cin / 4) words) and 16 bytes of
    requantization constants per channel, for Cout <= 16 and Cin >= 4 (with Cin a multiple of
    4, Cout <= 8 and from 16 output pixels on); 0 where that is not more than the ordinary
    scratch."""
    if cout > CONV_1X1_FEW_MAX_COUT or cin < 4 or (cin % 4 == 0 and (
            pixels < CONV_1X1_FEW_MIN_PIXELS_CIN4 or cout > CONV_1X1_FEW_SMALL_COUT)):
        return 0
    few = cout * (8 * ((cin + 3) // 4) + 16)
    return few if few > ordinary else 0


def svdf_scratch_bytes(input_size: int, filters: int) -> int:
    """th_svdf_s8_scratch_size: one batch's input + offset and its newest state values, as
    int16 (every build)."""
    return _ru4(2 * input_size) + _ru4(2 * filters)


def avgpool_scratch(w: int, c: int, out_hw: tuple[int, int], k: tuple[int, int],
                    stride: tuple[int, int]) -> int:
    """th_avgpool_s8_scratch_size (A above), every build."""
    taps, strides = k[0] * k[1], stride[0] * stride[1]
    strided = min(stride) >= 2 and taps <= 256 and (  # th_avgpool_s8.c AVG_STRIDED
        taps >= 2 * strides or k[0] > stride[0])
    if out_hw[0] * out_hw[1] <= 1 or k[0] > 256 or (taps < 4 * strides and not strided):
        return 0
    s1 = stride == (1, 1)
    cols = max(w + k[1] - 1, out_hw[1] - 1 + k[1]) if s1 else w
    # avg_cs_stride: at stride 1 an odd C's columns C + 1 halfwords apart (word-aligned)
    return _ru4(2 * cols * (c + (c & 1) if s1 else c)) + 4 * c


def maxpool_scratch(w: int, c: int, out_hw: tuple[int, int], k: tuple[int, int],
                    stride: tuple[int, int]) -> int:
    """th_maxpool_s8_scratch_size (X above), every build."""
    if out_hw[0] * out_hw[1] <= 1 or k[0] * k[1] <= k[0] * stride[1] + k[1]:
        return 0
    return _ru4(w * c)


FC_SHORT_MAX = 128  # th_nn_fc_s8.c FC_SHORT_MAX, FC_SHORT_SCRATCH_MAX
FC_SHORT_SCRATCH_MAX = 1 << 20


def fc_fast_scratch(cin: int, cout: int) -> int:
    """th_fully_connected_s8_scratch_size_fast (FF above; DSP builds without Helium)."""
    if FC_SHORT_MAX < cin <= FC_SHORT_SCRATCH_MAX and cout >= 8:
        return 2 * _ru4(cin)
    return 0


MAXPOOL_PAIR_ROWS = 7  # th_maxpool_s8.c TH_MAXPOOL_PAIR_ROWS
MAXPOOL_QUAD_MIN = 5  # th_maxpool_s8.c TH_MAXPOOL_QUAD_MIN


def maxpool_fast_scratch(w: int, c: int, out_hw: tuple[int, int], k: tuple[int, int],
                         stride: tuple[int, int]) -> int:
    """th_maxpool_s8_scratch_size_fast (XF above; DSP builds without Helium)."""
    cols = (out_hw[1] - 1) * stride[1] + k[1]
    if out_hw[0] * out_hw[1] <= 1 or cols * c > 1 << 28:
        return 0
    pair = stride[0] == 1 and 2 <= k[0] <= MAXPOOL_PAIR_ROWS and out_hw[0] > 1
    quad = pair and k[0] >= MAXPOOL_QUAD_MIN and out_hw[0] >= 4
    fast = (4 if quad else 2 if pair else 1) * _ru4(cols * c)
    return fast if fast > maxpool_scratch(w, c, out_hw, k, stride) else 0


def residual_row_bytes(graph: Graph, op: Op) -> int:
    """One output row of a fused residual conv (ResidualConv2DOptions): W * Cout bytes."""
    _, _, w, c = graph.tensors[op.outputs[0]].shape
    return w * c


def residual_scratch(conv_scratch: int, row_bytes: int, rows: int) -> int:
    """A fused residual conv's scratch (codegen.compiled): the conv's own (each band is an
    ordinary call of the conv variant on a run of rows, whose scratch does not depend on the
    height), then `rows` output rows of int8 staging that the ADD then adds to the skip."""
    return _ru4(conv_scratch) + rows * row_bytes
S4_MAX_K = 65536  # th_nn_s4.h TH_S4_MAX_K
S4_RQ_BYTES = 16  # th_nn_s4.h th_nn_s4_rq: one channel's fast requantization constants


def dwpw_band_rows(graph: Graph, op: Op) -> int:
    """Depthwise output rows per band of a fused depthwise -> pointwise op (DwPwConv2DOptions)
    at the least: one, or two when a row has an odd number of pixels, so that every band but
    the last holds whole pixel pairs for the pointwise core (which does an odd last pixel
    alone, slower); never more than the plane's height. Bands the code generator makes
    taller are multiples of it (plan/overlap.py dwpw_d_max relies on that)."""
    o = op.options
    assert isinstance(o, DwPwConv2DOptions)
    _, oh, ow, _ = graph.tensors[o.dw_output].shape
    return min(oh, 1 if ow % 2 == 0 else 2)


def dwpw_band_input(graph: Graph, op: Op, r0: int, rows: int) -> tuple[int, int, int]:
    """For the band of depthwise output rows [r0, r0 + rows) of a fused op: (first, top,
    end): its windows' first input row (negative in the top padding), and the input rows
    [top, end) it reads (rows past `end` are padding, as in the full layer)."""
    dw = dwpw_parts(op)[0]
    o = dw.options
    assert isinstance(o, DepthwiseConv2DOptions)
    _, h, w, _ = graph.tensors[dw.inputs[0]].shape
    _, kh, kw, _ = graph.tensors[dw.inputs[1]].shape
    p = compute_window_padding(o.padding, h, w, kh, kw, o.stride_h, o.stride_w, o.dilation_h,
                               o.dilation_w, explicit=o.explicit_padding)  # fmt: skip
    first = r0 * o.stride_h - p.top
    end = min(h, first + (rows - 1) * o.stride_h + (kh - 1) * o.dilation_h + 1)
    return first, max(first, 0), end


def dwpw_bands(height: int, rows: int) -> tuple[tuple[int, int], ...]:
    """(first row, rows) of each band of `rows` rows over `height` rows (the last shorter)."""
    return tuple((r0, min(rows, height - r0)) for r0 in range(0, height, rows))


def _dwpw_band_scratch(graph: Graph, op: Op, options: PlanOptions, r0: int, rows: int) -> int:
    """The larger of the two kernels' scratch on one band's shapes."""
    dw, pw = dwpw_parts(op)
    o = dw.options
    assert isinstance(o, DepthwiseConv2DOptions)
    x, mid, y = dw.inputs[0], dw.outputs[0], pw.outputs[0]
    _, h, w, _ = graph.tensors[x].shape
    _, kh, kw, _ = graph.tensors[dw.inputs[1]].shape
    first, top, end = dwpw_band_input(graph, op, r0, rows)
    p = compute_window_padding(o.padding, h, w, kh, kw, o.stride_h, o.stride_w, o.dilation_h,
                               o.dilation_w, explicit=o.explicit_padding)  # fmt: skip
    bottom = first + (rows - 1) * o.stride_h + (kh - 1) * o.dilation_h + 1 - end
    tensors = list(graph.tensors)
    shapes = {x: (1, end - top, w), mid: (1, rows, graph.tensors[mid].shape[2]),
              y: (1, rows, graph.tensors[y].shape[2])}  # fmt: skip
    for t, hw in shapes.items():
        tensors[t] = replace(tensors[t], shape=(*hw, graph.tensors[t].shape[3]))
    band_dw = replace(dw, options=replace(o, explicit_padding=(top - first, bottom, p.left,
                                                                p.right)))  # fmt: skip
    band = replace(graph, tensors=tuple(tensors), ops=(band_dw, pw))
    return max(scratch_bytes(band, band_dw, options), scratch_bytes(band, pw, options))


def dwpw_scratch(graph: Graph, op: Op, options: PlanOptions, rows: int) -> int:
    """A fused depthwise -> pointwise op's scratch run in bands of `rows` depthwise output
    rows (codegen.compiled): both kernels' scratch for the bands' shapes (they run one after
    the other), then the staged rows (the depthwise band's output, the pointwise's input)."""
    mid = graph.tensors[dwpw_parts(op)[0].outputs[0]]
    _, oh, ow, c = mid.shape
    kernels = max(_dwpw_band_scratch(graph, op, options, r0, n)
                  for r0, n in dwpw_bands(oh, rows))  # fmt: skip
    return _ru4(kernels) + rows * ow * c


def dwpw_staging_offset(graph: Graph, op: Op, options: PlanOptions, rows: int) -> int:
    """Where the staged rows start in dwpw_scratch(rows): after the kernels' scratch."""
    return dwpw_scratch(graph, op, options, rows) - rows * _dwpw_row_bytes(graph, op)


def _dwpw_row_bytes(graph: Graph, op: Op) -> int:
    _, _, ow, c = graph.tensors[dwpw_parts(op)[0].outputs[0]].shape
    return ow * c


def s4_taps(graph: Graph, op: Op) -> int:
    """K of an op's int4 kernel: the values of one packed weight row."""
    shape = graph.tensors[op.inputs[1]].shape
    if op.kind is OpKind.DEPTHWISE_CONV_2D:
        return int(shape[1] * shape[2])
    return int(np.prod(shape[1:]))


def _s4_dw_head(graph: Graph, op: Op) -> int:
    """th_dw_conv_s4's widened filter at the head of its scratch: round_up4(KH * KW * C)."""
    return _ru4(int(np.prod(graph.tensors[op.inputs[1]].shape)))


def s4_kernel(graph: Graph, op: Op) -> bool:
    """Whether the device runs the op with packed int4 weights (th_conv_s4, th_dw_conv_s4,
    th_fully_connected_s4): int8 activations, constant weights the model stores as int4
    (`Tensor.packed_int4`), no groups, symmetric weights, K <= S4_MAX_K. Otherwise the weights
    are unpacked to int8 and the int8 kernels run (the lowering asks this too)."""
    if op.kind not in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED):
        return False
    if len(op.inputs) < 2 or op.inputs[1] is None or not op.outputs:
        return False
    w = graph.tensors[op.inputs[1]]
    if not w.packed_int4 or w.data is None or w.data.ndim not in (2, 4) or not _is_int8(
            graph, op) or graph.tensors[op.outputs[0]].dtype != np.int8:
        return False
    if op.kind is OpKind.CONV_2D and graph.tensors[op.inputs[0]].shape[-1] != w.shape[-1]:
        return False  # grouped
    if w.quant is not None and np.any(np.asarray(w.quant.zero_point) != 0):
        return False
    return s4_taps(graph, op) <= S4_MAX_K


def scratch_bytes(graph: Graph, op: Op, options: PlanOptions | None = None) -> int:
    """Scratch of the op's kernel (in place or not), per the table above."""
    options = options or PlanOptions()
    if not _is_int8(graph, op) or not op.outputs:
        return 0
    if graph.tensors[op.outputs[0]].dtype != np.int8:
        return 0
    if isinstance(op.options, DwPwConv2DOptions):  # bands of dwpw_band_rows rows
        return dwpw_scratch(graph, op, options, dwpw_band_rows(graph, op))
    if isinstance(op.options, ResidualConv2DOptions):  # bands of one output row at least
        conv = _conv_scratch(graph, op, options.dsp, options.mve)
        return residual_scratch(conv, residual_row_bytes(graph, op), 1)
    if s4_kernel(graph, op):
        if op.kind is OpKind.DEPTHWISE_CONV_2D:
            return _s4_dw_head(graph, op) + _dw_scratch(graph, op, options.dsp, mve=options.mve)
        if op.kind is OpKind.CONV_2D:  # two int16 columns, the requantization table
            return 4 * ((s4_taps(graph, op) + 7) & ~7) + S4_RQ_BYTES * int(
                graph.tensors[op.outputs[0]].shape[-1])
        return 2 * ((s4_taps(graph, op) + 7) & ~7)
    if op.kind is OpKind.CONV_2D and isinstance(op.options, Conv2DOptions):
        return _conv_scratch(graph, op, options.dsp, options.mve)
    if op.kind is OpKind.DEPTHWISE_CONV_2D and isinstance(op.options, DepthwiseConv2DOptions):
        return _dw_scratch(graph, op, options.dsp, mve=options.mve)
    if op.kind in (OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D) and isinstance(
            op.options, Pool2DOptions):
        _, _, w, c = graph.tensors[op.inputs[0]].shape
        _, oh, ow, _ = graph.tensors[op.outputs[0]].shape
        o = op.options
        rule = avgpool_scratch if op.kind is OpKind.AVERAGE_POOL_2D else maxpool_scratch
        return rule(w, c, (oh, ow), (o.filter_h, o.filter_w), (o.stride_h, o.stride_w))
    if op.kind is OpKind.SVDF:
        return svdf_scratch_bytes(graph.tensors[op.inputs[0]].shape[-1],
                                  graph.tensors[op.inputs[1]].shape[0])
    return 0
