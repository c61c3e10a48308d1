"""FULLY_CONNECTED: TFLite Micro's reference FullyConnected / FullyConnectedPerChannel.

The input, of any rank, is read as [batches, in_features] with in_features the weights'
last dimension, exactly as TFLM walks the flat buffer. int8:
acc = sum((x + input_offset) * (w + filter_offset)) + bias, requantized (per tensor or per
output channel), + output_offset, clamped.
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.conv import FullyConnectedParams, fully_connected_params
from tinyhost.arith.fixedpoint import (
    multiply_by_quantized_multiplier_int64,
    requantize_to_int8,
    wrap_int32,
)
from tinyhost.arith.fused_activation import apply_float_activation
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import FullyConnectedOptions, Graph, Op, OpKind


def _rows(x: np.ndarray, in_features: int) -> np.ndarray:
    if in_features == 0 or x.size % in_features:
        raise UnsupportedModelError(
            f"FULLY_CONNECTED input {list(x.shape)} is not a whole number of rows of "
            f"{in_features} features"
        )
    return x.reshape(-1, in_features)


def fully_connected_int8(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                         p: FullyConnectedParams) -> np.ndarray:
    """int8 FC; weights [units, in_features]; returns [batches, units]."""
    rows = _rows(x, w.shape[1]).astype(np.float64) + p.input_offset
    weights = w.astype(np.float64) + p.filter_offset
    # float64 BLAS is exact: partial sums are integers far below 2**53.
    acc = (rows @ weights.T).astype(np.int64)
    if bias is not None:
        acc += bias.astype(np.int64).reshape(-1)
    return requantize_to_int8(wrap_int32(acc), p.out_multiplier.astype(np.int64),
                              p.out_shift.astype(np.int64), p.output_offset, p.act_min,
                              p.act_max)


def requantize_16x8(acc: np.ndarray, p: FullyConnectedParams) -> np.ndarray:
    """The 16x8 epilogue: int64 accumulator, MultiplyByQuantizedMultiplier's int64 form,
    clamp to the activation range, no output offset."""
    scaled = multiply_by_quantized_multiplier_int64(acc, p.out_multiplier.astype(np.int64),
                                                    p.out_shift.astype(np.int64))
    return np.clip(scaled, p.act_min, p.act_max).astype(np.int16)


def fully_connected_16x8(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                         p: FullyConnectedParams) -> np.ndarray:
    """int16 input, int8 weights, int64 bias: acc = sum(x * w) + bias in int64."""
    rows = _rows(x, w.shape[1]).astype(np.int64)
    acc = rows @ w.astype(np.int64).T  # exact: |acc| < 2**22 * in_features
    if bias is not None:
        with np.errstate(over="ignore"):
            acc = acc + bias.astype(np.int64).reshape(-1)
    return requantize_16x8(acc, p)


def fully_connected_float(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                          p: FullyConnectedParams) -> np.ndarray:
    acc = _rows(x, w.shape[1]).astype(np.float32) @ w.astype(np.float32).T
    if bias is not None:
        acc = acc + bias.astype(np.float32).reshape(-1)
    return apply_float_activation(acc, p.activation).astype(np.float32)


def run_fully_connected(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    x, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    p = fully_connected_params(graph, op)
    if x.dtype == np.int8 and w.dtype == np.int8:
        y = fully_connected_int8(x, w, bias, p)
    elif x.dtype == np.int16 and w.dtype == np.int8:
        y = fully_connected_16x8(x, w, bias, p)
    elif x.dtype == np.float32 and w.dtype == np.float32:
        y = fully_connected_float(x, w, bias, p)
    else:
        raise UnsupportedModelError(
            f"{graph.source}: {op.name} with {x.dtype} input and {w.dtype} weights is not "
            "supported"
        )
    options = op.options
    if isinstance(options, FullyConnectedOptions) and options.keep_num_dims:
        y = y.reshape(*x.shape[:-1], w.shape[0])
    return [y]


KERNELS = {OpKind.FULLY_CONNECTED: run_fully_connected}
