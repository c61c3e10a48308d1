"""MEAN and SUM: TFLite Micro's EvalMeanHelper and EvalSumHelper.

int8 (QuantizedMeanOrSum, also when input and output share their quantization):
(sum - input_zero_point * count) requantized with input_scale / output_scale folded with
1/count (see arith.reduce.fold_count; SUM: not folded), + output zero point, clamped.
float32: sum / count (SUM: the sum).
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.fixedpoint import multiply_by_quantized_multiplier, wrap_int32
from tinyhost.arith.reduce import MeanParams, fold_count, mean_params, reduce_max_params
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind


def _count(x: np.ndarray, axes: tuple[int, ...]) -> int:
    return int(np.prod([x.shape[a] for a in axes], dtype=np.int64))


def _finish_shape(y: np.ndarray, p: MeanParams) -> np.ndarray:
    return y if p.keep_dims else np.squeeze(y, axis=p.axes)


def mean_int8(x: np.ndarray, p: MeanParams, divide: bool = True) -> np.ndarray:
    """MEAN; SUM with divide=False (QuantizedMeanOrSum's compute_sum: no 1/count fold)."""
    count = _count(x, p.axes)
    total = wrap_int32(x.astype(np.int64).sum(axis=p.axes, keepdims=True))
    if count == 0:
        return _finish_shape(np.zeros(total.shape, np.int8), p)
    multiplier, shift = fold_count(p.multiplier, p.shift, count) if divide else (p.multiplier,
                                                                                  p.shift)
    shifted = wrap_int32(total - p.input_zero_point * count)
    y = multiply_by_quantized_multiplier(shifted, multiplier, shift) + p.output_zero_point
    return _finish_shape(np.clip(y, -128, 127).astype(np.int8), p)


def mean_float(x: np.ndarray, p: MeanParams) -> np.ndarray:
    count = _count(x, p.axes)
    total = x.astype(np.float32).sum(axis=p.axes, keepdims=True, dtype=np.float32)
    y = total / np.float32(count) if count else np.zeros_like(total)
    return _finish_shape(y.astype(np.float32), p)


def reduce_max(x: np.ndarray, p: MeanParams) -> np.ndarray:
    """REDUCE_MAX (int8: raw values, one quantization in and out; float32)."""
    return _finish_shape(x.max(axis=p.axes, keepdims=True), p)


def run_reduce_max(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    x = args[0]
    assert x is not None
    if x.dtype not in (np.int8, np.float32):
        raise UnsupportedModelError(f"{graph.source}: {op.name} on {x.dtype} is not supported")
    return [reduce_max(x, reduce_max_params(graph, op, args[1]))]


def sum_float(x: np.ndarray, p: MeanParams) -> np.ndarray:
    total = x.astype(np.float32).sum(axis=p.axes, keepdims=True, dtype=np.float32)
    return _finish_shape(total.astype(np.float32), p)


def run_mean(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    """MEAN and SUM."""
    x, axes = args[0], args[1]
    p = mean_params(graph, op, axes)
    mean = op.kind is OpKind.MEAN
    if x.dtype == np.int8:
        return [mean_int8(x, p, divide=mean)]
    if x.dtype == np.float32:
        return [mean_float(x, p) if mean else sum_float(x, p)]
    raise UnsupportedModelError(f"{graph.source}: {op.name} on {x.dtype} is not supported")


KERNELS = {OpKind.MEAN: run_mean, OpKind.SUM: run_mean, OpKind.REDUCE_MAX: run_reduce_max}
