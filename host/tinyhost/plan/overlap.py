"""The declared overlaps: which input of which op may share bytes with its output.

This table is the contract between the planner and the C kernels (kernels_c, th_nn.h
"Aliasing"): each row states what the kernels guarantee, in both the DSP and the portable
build, and nothing more. The plan checker accepts an overlap between two live tensors only
if a row of this table allows it; kernel tests (tests/test_plan_inplace_kernels.py) run the
C kernels at the offsets the rows allow, and end-to-end tests run every model's blob, which
uses these overlaps, bit-exact on the host board and on QEMU.

No in-place mode needs other scratch than the kernel's ordinary one (scratch.py): the
kernels that run in place stage what they still need in that scratch anyway.

Offsets: `d = offset(output) - offset(input)` in bytes. A row allows overlap when the input
dies at the op (no later reader, not a graph output) and `d_min <= d <= d_max` and
`d % modulus == 0`; any placement where the two do not overlap is always allowed.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np

from tinyhost.ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DwPwConv2DOptions,
    Graph,
    Op,
    OpKind,
    Padding,
    Pool2DOptions,
    ResidualConv2DOptions,
    dwpw_parts,
)
from tinyhost.plan.options import PlanOptions
from tinyhost.plan.scratch import (
    ch_mult,
    dwpw_band_input,
    dwpw_band_rows,
    is_pointwise_conv,
    s4_kernel,
    scratch_bytes,
)

UNBOUNDED = 1 << 62


class OverlapMode(enum.Enum):
    ALIAS = "alias"
    ELEMENTWISE = "elementwise"
    DEPTHWISE_CHANNEL = "depthwise-channel"
    POINTWISE_PIXEL = "pointwise-pixel"
    SLIDING = "sliding"
    RESIDUAL = "residual"
    DW_PW = "dw-pw-bands"


@dataclass(frozen=True)
class OverlapRule:
    """One row of the table, in words the kernels engineer implements."""

    mode: OverlapMode
    kinds: tuple[OpKind, ...]
    input_slots: tuple[int, ...]
    option: str  # the PlanOptions field that switches the row
    condition: str
    offset: str
    access_order: str
    scratch: str


# Unary int8 -> int8 ops the interpreter runs as th_lut_s8 (QUANTIZE only int8 -> int8).
_LUT = (
    OpKind.RELU,
    OpKind.RELU6,
    OpKind.LEAKY_RELU,
    OpKind.HARD_SWISH,
    OpKind.LOGISTIC,
    OpKind.TANH,
    OpKind.QUANTIZE,
    OpKind.ABS,
    OpKind.RSQRT,
    OpKind.ELU,
    OpKind.ZEROS_LIKE,
)
_BINARY = (OpKind.ADD, OpKind.SUB, OpKind.MUL, OpKind.MAXIMUM, OpKind.MINIMUM,
           OpKind.SQUARED_DIFFERENCE, OpKind.PRELU, OpKind.DIV)
# Windowed kernels that write output pixels in raster order, each after its own window is
# read (th_conv_s8 in all variants and builds, th_avgpool_s8, th_maxpool_s8 and its prepared
# entry, the compiled backend's call). Depthwise is
# not among them: it works channel by channel over the whole image (DEPTHWISE_CHANNEL).
_SLIDING = (
    OpKind.CONV_2D,
    OpKind.AVERAGE_POOL_2D,
    OpKind.MAX_POOL_2D,
)

OVERLAP_TABLE: tuple[OverlapRule, ...] = (
    OverlapRule(
        OverlapMode.ALIAS,
        (OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.EXPAND_DIMS),
        (0,),
        "alias",
        "input is not a constant",
        "d = 0 (same bytes)",
        "no kernel runs: the op is a no-op",
        "0",
    ),
    OverlapRule(
        OverlapMode.ELEMENTWISE,
        _LUT + _BINARY,
        (0, 1),
        "inplace_elementwise",
        "int8 input and output with the same number of elements (a binary op's input is "
        "not broadcast)",
        "d = 0 (the same pointer: th_add_s8 / th_sub_s8 / th_mul_s8 refuse a partial "
        "overlap)",
        "th_lut_s8: four elements read, then those four written, ascending; ADD / SUB / MUL: "
        "element i of both inputs read before output element i is written, ascending",
        "0",
    ),
    OverlapRule(
        OverlapMode.DEPTHWISE_CHANNEL,
        (OpKind.DEPTHWISE_CONV_2D,),
        (0,),
        "inplace_depthwise",
        "depth multiplier 1, batch 1, int8 in and out, output no larger than input "
        "(any filter, stride, padding, dilation)",
        "d % C == 0 (C = channels); normally d = 0",
        "channel by channel (c ascending): input plane c is copied to scratch (int8, or the "
        "int16 padded plane of the DSP 3x3 kernel), then every output pixel of channel c is "
        "written, at p * C + c only",
        "the kernel's ordinary scratch: one input channel plane",
    ),
    OverlapRule(
        OverlapMode.POINTWISE_PIXEL,
        (OpKind.CONV_2D,),
        (0,),
        "inplace_pointwise",
        "1x1 filter, stride 1, no groups, int8 in and out (th_conv_1x1_s8)",
        "d <= 0 if Cout <= Cin, else d <= in_bytes - out_bytes (output ends at or before "
        "the input's end: the input sits in the tail of the output)",
        "pixels in ascending order, K at a time (K = 2 on the DSP path, 1 portable): the K "
        "input pixels are copied to scratch, then their K output pixels are written",
        "the kernel's ordinary scratch (4 * round_up4(Cin) DSP, Cin portable)",
    ),
    OverlapRule(
        OverlapMode.SLIDING,
        _SLIDING,
        (0,),
        "sliding",
        "NHWC int8 input and output (CONV_2D any variant, AVERAGE_POOL_2D, MAX_POOL_2D)",
        "d <= d_max(shape): the largest d such that, for every output pixel q in raster "
        "order, the bytes of pixels 0..q end at or before the first input byte read by any "
        "pixel >= q (computed by sliding_d_max; a stride-1 AVERAGE_POOL_2D's pixel (y, x) "
        "also reads from where pixel (y - 1, x)'s window starts)",
        "output pixels in ascending raster order (batch, y, x); pixel q reads only its own "
        "window and its writes may happen at any time after pixel q starts",
        "the op's ordinary scratch (scratch.py)",
    ),
    OverlapRule(
        OverlapMode.RESIDUAL,
        (OpKind.CONV_2D,),
        (3,),
        "inplace_elementwise",
        "a CONV_2D fused with its residual ADD (compiled backend, codegen/fold.py): input 3 "
        "is the skip, int8, of the output's shape",
        "d = 0 (the sum is written over the skip)",
        "bands of output rows in order: the band's conv output goes to scratch, then th_add_s8 "
        "reads element i of it and of the skip before writing element i of the band",
        "the conv's scratch plus the staged rows (scratch.py residual_scratch)",
    ),
    OverlapRule(
        OverlapMode.DW_PW,
        (OpKind.DEPTHWISE_CONV_2D,),
        (0,),
        "sliding",
        "a DEPTHWISE_CONV_2D fused with its pointwise CONV_2D (compiled backend, "
        "codegen/fold.py): input 0 (the depthwise input) and the pointwise output, int8 NHWC",
        "d <= dwpw_d_max: at every band boundary b (a multiple of scratch.py dwpw_band_rows), "
        "the output rows before b end at or before the first input row a band from b reads",
        "bands of depthwise output rows in order: the band's depthwise reads its input rows "
        "into staging, then the pointwise writes the band's output rows from staging",
        "both kernels' scratch plus the staged rows (scratch.py dwpw_scratch)",
    ),
)


@dataclass(frozen=True)
class Overlap:
    """One overlap permitted by a rule for one op of one graph."""

    op: int  # graph op index
    mode: OverlapMode
    input_tensor: int
    output_tensor: int
    d_min: int
    d_max: int
    modulus: int
    scratch_bytes: int  # the kernel's whole scratch when it runs this way

    def allows(self, d: int) -> bool:
        return self.d_min <= d <= self.d_max and d % self.modulus == 0

    def candidate_ds(self, alignment: int, in_size: int, out_size: int) -> list[int]:
        """A few allowed offsets worth trying: those that minimise the pair's extent first."""
        step = math.lcm(self.modulus, alignment)
        wanted = [0, in_size - out_size, self.d_max, self.d_min]
        out: list[int] = []
        for w in wanted:
            w = min(max(w, self.d_min), self.d_max)
            for d in (w // step * step, -(-w // step) * step):
                if self.allows(d) and d not in out:
                    out.append(d)
        return out

    def min_extent(self, alignment: int, in_size: int, out_size: int) -> int:
        """Fewest bytes the input and output can occupy together under this rule."""
        best = -(-in_size // alignment) * alignment + out_size  # not overlapping at all
        for d in self.candidate_ds(alignment, in_size, out_size):
            best = min(best, max(d + out_size, in_size) - min(d, 0))
        return best


def _same_pixels(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return len(a) == len(b) == 4 and a[:3] == b[:3]


def _pad_before(size: int, out: int, stride: int, k: int, dilation: int, pad: Padding) -> int:
    if pad is Padding.VALID:
        return 0
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return total // 2


_Window = tuple[int, int, int, int, int, int, Padding | tuple[int, int, int, int]]


def _window(op: Op, graph: Graph) -> _Window | None:
    """(kh, kw, stride_h, stride_w, dilation_h, dilation_w, padding) of a windowed op; the
    padding is (top, bottom, left, right) where a PAD was folded into a conv."""
    o = op.options
    if isinstance(o, Conv2DOptions | DepthwiseConv2DOptions):
        _, kh, kw, _ = graph.tensors[op.inputs[1]].shape
        padding = o.padding if o.explicit_padding is None else o.explicit_padding
        return kh, kw, o.stride_h, o.stride_w, o.dilation_h, o.dilation_w, padding
    if isinstance(o, Pool2DOptions):
        return o.filter_h, o.filter_w, o.stride_h, o.stride_w, 1, 1, o.padding
    return None


def sliding_d_max(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    window: _Window,
    row_above: bool = False,
) -> int:
    """Largest output-minus-input offset at which a raster-order windowed kernel is safe
    (row_above: see sliding_d_max_padded)."""
    _, h, w, _ = in_shape
    _, oh, ow, _ = out_shape
    kh, kw, sh, sw, dh, dw, padding = window
    if isinstance(padding, tuple):
        pad_t, pad_l = padding[0], padding[2]
    else:
        pad_t = _pad_before(h, oh, sh, kh, dh, padding)
        pad_l = _pad_before(w, ow, sw, kw, dw, padding)
    return sliding_d_max_padded(in_shape, out_shape, (kh, kw, sh, sw, dh, dw), (pad_t, pad_l),
                                row_above)  # fmt: skip


def sliding_d_max_padded(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    window: tuple[int, int, int, int, int, int],
    pads: tuple[int, int],
    row_above: bool = False,
) -> int:
    """sliding_d_max with explicit (top, left) padding; window = (kh, kw, sh, sw, dh, dw).

    Pixel q's output bytes end at d + (q+1)*out_pixel_bytes; the first input byte still to be
    read once pixel q starts is the smallest window start of the pixels q, q+1, ...
    row_above: pixel (y, x) with y > 0 reads from the start of pixel (y - 1, x)'s window
    instead (a stride-1 average pool's fused column order moves its column sums off the
    previous output row's first window row, th_nn.h (c)).
    """
    n, h, w, cin = in_shape
    _, oh, ow, cout = out_shape
    kh, kw, sh, sw, dh, dw = window
    pad_t, pad_l = pads

    def first_inside(start: np.ndarray, dil: int) -> np.ndarray:
        # first tap of the window that lands inside the image (taps before it read padding)
        behind = np.maximum(-start, 0)
        return start + (-(-behind // dil)) * dil

    y0 = first_inside(np.arange(oh) * sh - pad_t, dh)
    if row_above:
        y0 = np.concatenate([y0[:1], y0[:-1]])
    x0 = first_inside(np.arange(ow) * sw - pad_l, dw)
    start = ((np.arange(n)[:, None, None] * h + y0[None, :, None]) * w + x0[None, None, :]) * cin
    start = start.reshape(-1)
    needed = np.minimum.accumulate(start[::-1])[::-1]
    written_end = (np.arange(start.size) + 1) * cout
    return int(np.min(needed - written_end))


def dwpw_d_max(graph: Graph, op: Op) -> int:
    """The largest d = offset(output) - offset(input) at which a fused depthwise -> pointwise
    op may write its output over its dying input: the bands' boundaries b are multiples of
    dwpw_band_rows (any taller bands the code generator makes keep a subset of them), and
    when band b starts, output rows [0, b) are written and input rows from the band's first
    are still to be read. One band: it reads all its input before writing anything."""
    dw, pw = dwpw_parts(op)
    _, _, w, cin = graph.tensors[dw.inputs[0]].shape
    _, oh, ow, cout = graph.tensors[pw.outputs[0]].shape
    rows = dwpw_band_rows(graph, op)
    bound = UNBOUNDED
    for b in range(rows, oh, rows):
        top = dwpw_band_input(graph, op, b, rows)[1]
        bound = min(bound, top * w * cin - b * ow * cout)
    return bound


def op_overlaps(graph: Graph, index: int, options: PlanOptions) -> list[Overlap]:
    """Every overlap the table allows for op `index` (the input's death is checked by callers)."""
    op = graph.ops[index]
    result: list[Overlap] = []
    if not op.outputs or s4_kernel(graph, op):  # the int4 kernels declare no aliasing
        return result
    out_t = op.outputs[0]
    out = graph.tensors[out_t]
    ordinary = scratch_bytes(graph, op, options)

    def arena_input(slot: int) -> int | None:
        if slot >= len(op.inputs) or op.inputs[slot] is None:
            return None
        t = op.inputs[slot]
        return None if graph.tensors[t].is_constant else t

    if isinstance(op.options, DwPwConv2DOptions):  # the output over the dying input's rows
        t = arena_input(0)
        if (t is not None and options.rule_enabled("sliding")
                and graph.tensors[t].dtype == np.int8 == out.dtype):  # fmt: skip
            bound = dwpw_d_max(graph, op)
            result.append(Overlap(index, OverlapMode.DW_PW, t, out_t, -UNBOUNDED, bound, 1,
                                  ordinary))  # fmt: skip
        return result

    if isinstance(op.options, ResidualConv2DOptions):  # only its skip may hold the sum
        t = arena_input(3)
        if (t is not None and options.rule_enabled("inplace_elementwise")
                and graph.tensors[t].dtype == np.int8 == out.dtype
                and tuple(graph.tensors[t].shape) == tuple(out.shape)):  # fmt: skip
            result.append(Overlap(index, OverlapMode.RESIDUAL, t, out_t, 0, 0, 1, ordinary))
        return result

    if op.kind in (OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.EXPAND_DIMS) and options.rule_enabled(
        "alias"
    ):
        t = arena_input(0)
        if t is not None and graph.tensors[t].size_bytes == out.size_bytes:
            result.append(Overlap(index, OverlapMode.ALIAS, t, out_t, 0, 0, 1, 0))
        return result

    if op.kind in _LUT + _BINARY and options.rule_enabled("inplace_elementwise"):
        slots = (0, 1) if op.kind in _BINARY else (0,)
        for slot in slots:
            t = arena_input(slot)
            if t is None:
                continue
            src = graph.tensors[t]
            if src.dtype != np.int8 or out.dtype != np.int8 or src.size_bytes != out.size_bytes:
                continue
            if op.kind in _BINARY and tuple(src.shape) != tuple(out.shape):
                continue  # a broadcast input has fewer elements; same-shape inputs only
            result.append(Overlap(index, OverlapMode.ELEMENTWISE, t, out_t, 0, 0, 1, ordinary))

    src_t = arena_input(0)
    if src_t is None:
        return result
    src = graph.tensors[src_t]
    int8_io = src.dtype == np.int8 and out.dtype == np.int8

    if (
        op.kind is OpKind.DEPTHWISE_CONV_2D
        and options.rule_enabled("inplace_depthwise")
        and int8_io
        and isinstance(op.options, DepthwiseConv2DOptions)
        and len(src.shape) == 4
        and len(out.shape) == 4
        and src.shape[0] == 1
        and ch_mult(graph, op) == 1
        and src.shape[3] == out.shape[3]
        and out.size_bytes <= src.size_bytes
    ):
        c = src.shape[3]
        result.append(
            Overlap(
                index, OverlapMode.DEPTHWISE_CHANNEL, src_t, out_t, -UNBOUNDED, UNBOUNDED, c,
                ordinary,
            )
        )

    if (
        options.rule_enabled("inplace_pointwise")
        and int8_io
        and is_pointwise_conv(graph, op)
        and _same_pixels(src.shape, out.shape)
    ):
        cin, cout = src.shape[3], out.shape[3]
        d_max = 0 if cout <= cin else src.size_bytes - out.size_bytes
        mode = OverlapMode.POINTWISE_PIXEL
        result.append(Overlap(index, mode, src_t, out_t, -UNBOUNDED, d_max, 1, ordinary))

    window = _window(op, graph)
    if (
        op.kind in _SLIDING
        and window is not None
        and options.rule_enabled("sliding")
        and int8_io
        and len(src.shape) == 4
        and len(out.shape) == 4
    ):
        # th_avgpool_s8 at stride 1 reads the row above each output row's windows (th_nn.h
        # (c)); the kernel checks the same bound before taking that order
        row_above = op.kind is OpKind.AVERAGE_POOL_2D and window[2:4] == (1, 1)
        d_max = sliding_d_max(src.shape, out.shape, window, row_above)
        result.append(
            Overlap(index, OverlapMode.SLIDING, src_t, out_t, -UNBOUNDED, d_max, 1, ordinary)
        )
    return result
