"""Integer parameters of AVERAGE_POOL_2D and MAX_POOL_2D, as TFLite Micro's PoolingPrepare.

int8 pooling never requantizes: TFLM requires the input and output quantization to agree
and works on the raw int8 values, so the parameters are only the window and the clamp.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.arith.fused_activation import int8_activation_range
from tinyhost.arith.padding import compute_window_padding
from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import Activation, Graph, Op, Pool2DOptions


@dataclass(frozen=True)
class PoolParams:
    """One 2-D pooling op. For float32 ops act_min/act_max are unused; `activation` applies."""

    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    pad_bottom: int
    pad_right: int
    act_min: int = -128
    act_max: int = 127
    activation: Activation = Activation.NONE


def pool_params(graph: Graph, op: Op) -> PoolParams:
    options = op.options
    where = f"{graph.source}: {op.name}"
    if not isinstance(options, Pool2DOptions):
        raise ModelFormatError(f"{where}: options {type(options).__name__}")
    x = graph.tensors[op.inputs[0]]
    y = graph.tensors[op.outputs[0]]
    if len(x.shape) != 4:
        raise UnsupportedModelError(f"{where}: needs a 4-D input, got {list(x.shape)}")
    pads = compute_window_padding(
        options.padding, x.shape[1], x.shape[2], options.filter_h, options.filter_w,
        options.stride_h, options.stride_w,
    )
    act_min, act_max = -128, 127
    if x.dtype == np.int8:
        if x.quant is None or y.quant is None:
            raise UnsupportedModelError(f"{where}: int8 tensors without quantization")
        # TFLM refuses differing scales (beyond 1e-6) or zero points: values are not rescaled.
        if (abs(float(x.quant.scale[0]) - float(y.quant.scale[0])) > 1e-6
                or int(x.quant.zero_point[0]) != int(y.quant.zero_point[0])):
            raise UnsupportedModelError(
                f"{where}: input '{x.name}' and output '{y.name}' must share scale and zero point"
            )
        act_min, act_max = int8_activation_range(options.activation, y.quant)
    return PoolParams(
        stride_h=options.stride_h,
        stride_w=options.stride_w,
        filter_h=options.filter_h,
        filter_w=options.filter_w,
        pad_top=pads.top,
        pad_left=pads.left,
        pad_bottom=pads.bottom,
        pad_right=pads.right,
        act_min=act_min,
        act_max=act_max,
        activation=options.activation,
    )


# th_maxpool_s8.c's constants the prepared struct's fields depend on
_MAXPOOL_PAIR_ROWS = 7  # TH_MAXPOOL_PAIR_ROWS
_MAXPOOL_QUAD_MIN = 5  # TH_MAXPOOL_QUAD_MIN
_MAXPOOL_ROW_TAPS = 7  # TH_MAXPOOL_ROW_TAPS


def _ru4(n: int) -> int:
    return (n + 3) & ~3


def maxpool_prep(p: PoolParams, in_shape: tuple[int, ...], out_shape: tuple[int, ...],
                 scratch: int) -> dict:
    """th_maxpool_prep (th_nn_types.h) as th_maxpool_s8_prepare fills it for an int8
    MAX_POOL_2D of NHWC `in_shape` -> `out_shape` given `scratch` bytes (ARCHITECTURE.md
    §4.4b): the C struct's fields in its order (prep_words / prep_initializer), the same in
    every kernel build. The kernel tests compare it with the C prepare's word for word."""
    n, h, w, c = (int(v) for v in in_shape)
    oh, ow = int(out_shape[1]), int(out_shape[2])
    sh, sw, fh, fw = p.stride_h, p.stride_w, p.filter_h, p.filter_w
    ph, pw = p.pad_top, p.pad_left
    clamp = int(p.act_min > -128 or p.act_max < 127)
    # max_fast_checked, th_maxpool_s8_scratch_size, max_fast_rows
    cols = (ow - 1) * sw + fw
    pair = sh == 1 and 2 <= fh <= _MAXPOOL_PAIR_ROWS and oh >= 2
    rows = (4 if fh >= _MAXPOOL_QUAD_MIN and oh >= 4 else 2) if pair else 1
    fast = 0 if oh * ow <= 1 or cols * c > 1 << 28 else rows * _ru4(cols * c)
    separable = oh * ow > 1 and fh * fw > fh * sw + fw and w * c <= 1 << 28
    sep = _ru4(w * c) if separable else 0
    fast = fast if 0 < fast <= scratch else 0
    sep = sep if 0 < sep <= scratch else 0
    rows = rows if fast else 1
    if fast:  # padded_bytes: the padded layout's columns computed from the input
        t0 = min(pw, cols)
        t1 = max(t0, min(w + pw, cols))
        c0, c1, cols_bytes = t0 * c, t1 * c, cols * c
    else:  # the columns any window reads (th_nn_window_at of the last output column)
        origin = (ow - 1) * sw - pw
        start = max(-origin, 0)
        end = max(start, min(w - origin, fw))
        c0, c1, cols_bytes = 0, (origin + end) * c, 0
    span = c1 - c0
    c1_path = int(bool(fast) and c == 1 and sh >= 2 and sw >= 2 and 4 <= fw <= 8
                  and span >= 4)
    # max_lanes_image's rows [ya, yb) (C's division truncates; every operand here >= 0
    # except e, tested first)
    ya = min((ph + sh - 1) // sh, oh) if span > 0 else oh
    e = h - fh + ph
    yb = ya if e < 0 else max(ya, min(oh, e // sh + 1))
    if (fast and span > 0 and ph > 0 and ph % sh == 0 and ya < yb
            and (rows == 1 or (yb - ya) % 2 == 1)):
        ya += 1
    rows_padded = int(bool(fast) and (sw > 1 or (not clamp and fw <= _MAXPOOL_ROW_TAPS)))
    return {
        "params": {"stride": {"h": sh, "w": sw}, "filter": {"h": fh, "w": fw},
                   "padding": {"h": ph, "w": pw},
                   "activation": {"min": p.act_min, "max": p.act_max}},
        "in": {"n": n, "h": h, "w": w, "c": c},
        "out": {"n": int(out_shape[0]), "h": oh, "w": ow, "c": int(out_shape[3])},
        "fast": fast, "sep": sep, "rows": rows, "c1": c1_path, "c0": c0, "span": span,
        "cols": cols_bytes, "ya": ya, "yb": yb, "rows_padded": rows_padded, "clamp": clamp,
    }
