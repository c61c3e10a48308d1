"""CONV_2D and DEPTHWISE_CONV_2D: TFLite Micro's reference_integer_ops semantics.

int8: acc = sum over the window of (x + input_offset) * w (taps outside the input are
skipped, i.e. contribute 0), + bias, requantized per output channel with the double-rounding
MultiplyByQuantizedMultiplier, + output_offset, clamped to the activation range.
float32: the same window sum in float32, + bias, then the fused activation.
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.conv import ConvParams, conv_params
from tinyhost.arith.fixedpoint import (
    multiply_by_quantized_multiplier_int64,
    requantize_to_int8,
    wrap_int32,
)
from tinyhost.arith.fused_activation import apply_float_activation
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind
from tinyhost.reference.ops._window import output_size, pad_for_window, taps


def _geometry(x_shape: tuple[int, ...], filter_h: int, filter_w: int,
              p: ConvParams) -> tuple[int, int]:
    out_h = output_size(x_shape[1], p.pad_top, p.pad_bottom, filter_h, p.stride_h, p.dilation_h)
    out_w = output_size(x_shape[2], p.pad_left, p.pad_right, filter_w, p.stride_w, p.dilation_w)
    if out_h <= 0 or out_w <= 0:
        raise UnsupportedModelError(
            f"conv window {filter_h}x{filter_w} does not fit input {list(x_shape)}"
        )
    return out_h, out_w


def _padded(x: np.ndarray, filter_h: int, filter_w: int, p: ConvParams,
            out_h: int, out_w: int) -> np.ndarray:
    return pad_for_window(
        x, p.pad_top, p.pad_left, out_h, out_w,
        (filter_h - 1) * p.dilation_h + 1, (filter_w - 1) * p.dilation_w + 1,
        p.stride_h, p.stride_w, fill=0,
    )


def _im2col(xs: np.ndarray, filter_h: int, filter_w: int, p: ConvParams) -> np.ndarray:
    """[N, OH, OW, KH*KW, C] patches of the offset input, zero where the window is outside."""
    out_h, out_w = _geometry(xs.shape, filter_h, filter_w, p)
    padded = _padded(xs, filter_h, filter_w, p, out_h, out_w)
    views = [v for _, _, v in taps(padded, filter_h, filter_w, out_h, out_w, p.stride_h,
                                   p.stride_w, p.dilation_h, p.dilation_w)]
    return np.stack(views, axis=3)


def _grouped_matmul(patches: np.ndarray, w: np.ndarray, dtype: type) -> np.ndarray:
    """sum over (fy, fx, c) of patches * w for each output channel, group by group."""
    n, out_h, out_w, k, channels = patches.shape
    out_channels, _, _, group_channels = w.shape
    groups = channels // group_channels
    per_group = out_channels // groups
    result = np.empty((n * out_h * out_w, out_channels), dtype)
    for g in range(groups):
        cols = patches[..., g * group_channels:(g + 1) * group_channels]
        cols = cols.reshape(-1, k * group_channels).astype(dtype, copy=False)
        wg = w[g * per_group:(g + 1) * per_group].reshape(per_group, -1).astype(dtype)
        result[:, g * per_group:(g + 1) * per_group] = cols @ wg.T
    return result.reshape(n, out_h, out_w, out_channels)


def _check_groups(x: np.ndarray, w: np.ndarray) -> None:
    if w.shape[3] == 0 or x.shape[3] % w.shape[3] or w.shape[0] % (x.shape[3] // w.shape[3]):
        raise UnsupportedModelError(
            f"CONV_2D filter {list(w.shape)} does not match input channels {x.shape[3]}"
        )


def conv2d_int8(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                p: ConvParams) -> np.ndarray:
    """int8 NHWC conv, filter [Cout, KH, KW, Cin/groups], bias int32 [Cout] or None."""
    _check_groups(x, w)
    xs = x.astype(np.float64) + p.input_offset
    patches = _im2col(xs, w.shape[1], w.shape[2], p)
    # float64 BLAS is exact here: every partial sum is an integer far below 2**53.
    acc = _grouped_matmul(patches, w, np.float64).astype(np.int64)
    if bias is not None:
        acc += bias.astype(np.int64)
    return requantize_to_int8(wrap_int32(acc), p.out_multiplier.astype(np.int64),
                              p.out_shift.astype(np.int64), p.output_offset, p.act_min,
                              p.act_max)


def conv2d_16x8(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                p: ConvParams) -> np.ndarray:
    """int16 NHWC conv with int8 filters and an int64 bias, accumulated in int64."""
    _check_groups(x, w)
    patches = _im2col(x.astype(np.int64), w.shape[1], w.shape[2], p)
    acc = _grouped_matmul(patches, w, np.int64)
    return _epilogue_16x8(acc, bias, p)


def _epilogue_16x8(acc: np.ndarray, bias: np.ndarray | None, p: ConvParams) -> np.ndarray:
    if bias is not None:
        with np.errstate(over="ignore"):
            acc = acc + bias.astype(np.int64)
    scaled = multiply_by_quantized_multiplier_int64(acc, p.out_multiplier.astype(np.int64),
                                                    p.out_shift.astype(np.int64))
    return np.clip(scaled, p.act_min, p.act_max).astype(np.int16)


def conv2d_float(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                 p: ConvParams) -> np.ndarray:
    _check_groups(x, w)
    patches = _im2col(x.astype(np.float32), w.shape[1], w.shape[2], p)
    acc = _grouped_matmul(patches, w, np.float32)
    if bias is not None:
        acc = acc + bias.astype(np.float32)
    return apply_float_activation(acc, p.activation).astype(np.float32)


def _depthwise_acc(xs: np.ndarray, w: np.ndarray, p: ConvParams, acc_dtype: type) -> np.ndarray:
    filter_h, filter_w, out_channels = w.shape[1], w.shape[2], w.shape[3]
    if xs.shape[3] * p.ch_mult != out_channels:
        raise UnsupportedModelError(
            f"DEPTHWISE_CONV_2D: {xs.shape[3]} input channels x depth multiplier "
            f"{p.ch_mult} != {out_channels} output channels"
        )
    if p.ch_mult > 1:
        # Output channel ic * ch_mult + m reads input channel ic.
        xs = np.repeat(xs, p.ch_mult, axis=3)
    out_h, out_w = _geometry(xs.shape, filter_h, filter_w, p)
    padded = _padded(xs, filter_h, filter_w, p, out_h, out_w)
    acc = np.zeros((xs.shape[0], out_h, out_w, out_channels), acc_dtype)
    weights = w.reshape(filter_h, filter_w, out_channels).astype(acc_dtype)
    for fy, fx, view in taps(padded, filter_h, filter_w, out_h, out_w, p.stride_h, p.stride_w,
                             p.dilation_h, p.dilation_w):
        acc += view * weights[fy, fx]
    return acc


def depthwise_conv2d_int8(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                          p: ConvParams) -> np.ndarray:
    """int8 NHWC depthwise conv, filter [1, KH, KW, Cin * ch_mult]."""
    taps_count = w.shape[1] * w.shape[2]
    # Each product is at most 255 * 128 in magnitude: int32 holds the sum for < 65k taps.
    acc_dtype = np.int32 if taps_count < 65_000 else np.int64
    xs = x.astype(acc_dtype) + p.input_offset
    acc = _depthwise_acc(xs, w, p, acc_dtype).astype(np.int64)
    if bias is not None:
        acc += bias.astype(np.int64)
    return requantize_to_int8(wrap_int32(acc), p.out_multiplier.astype(np.int64),
                              p.out_shift.astype(np.int64), p.output_offset, p.act_min,
                              p.act_max)


def depthwise_conv2d_16x8(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                          p: ConvParams) -> np.ndarray:
    """int16 NHWC depthwise conv with int8 filters and an int64 bias, accumulated in int64."""
    return _epilogue_16x8(_depthwise_acc(x.astype(np.int64), w, p, np.int64), bias, p)


def depthwise_conv2d_float(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                           p: ConvParams) -> np.ndarray:
    acc = _depthwise_acc(x.astype(np.float32), w, p, np.float32)
    if bias is not None:
        acc = acc + bias.astype(np.float32)
    return apply_float_activation(acc, p.activation).astype(np.float32)


def _dispatch(int8_fn, float_fn, s16_fn):
    def run(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
        x, w = args[0], args[1]
        bias = args[2] if len(args) > 2 else None
        p = conv_params(graph, op)
        if x.dtype == np.int8 and w.dtype == np.int8:
            return [int8_fn(x, w, bias, p)]
        if x.dtype == np.int16 and w.dtype == np.int8:
            return [s16_fn(x, w, bias, p)]
        if x.dtype == np.float32 and w.dtype == np.float32:
            return [float_fn(x, w, bias, p)]
        raise UnsupportedModelError(
            f"{graph.source}: {op.name} with {x.dtype} input and {w.dtype} filter is not supported"
        )

    return run


run_conv_2d = _dispatch(conv2d_int8, conv2d_float, conv2d_16x8)
run_depthwise_conv_2d = _dispatch(depthwise_conv2d_int8, depthwise_conv2d_float,
                                  depthwise_conv2d_16x8)

KERNELS = {
    OpKind.CONV_2D: run_conv_2d,
    OpKind.DEPTHWISE_CONV_2D: run_depthwise_conv_2d,
}
