"""LOG_SOFTMAX and L2_NORMALIZATION over the last axis, CUMSUM along any axis: int8 as
TFLite Micro's reference kernels compute them, and float32.

LOG_SOFTMAX int8: differences to the row maximum in Q5.26, their exps summed in Q12.19, the
log of the sum in Q5.26 subtracted and the result written in Q4 (scale 1/16) from 127 down;
differences too small for any output above -128 give -128. L2_NORMALIZATION int8: the row's
sum of squares (int32) to an inverse square root multiplier, each value rescaled by it into
Q0.7. CUMSUM int8: ADD's arithmetic, summed in int32 (which wraps).
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith import gemmlowp
from tinyhost.arith.elementwise import op_where
from tinyhost.arith.fixedpoint import (
    INT32_MIN,
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
    wrap_int32,
)
from tinyhost.arith.rowwise import (
    CUMSUM_LEFT_SHIFT,
    L2NORM_OUTPUT_SHIFT,
    LOG_SOFTMAX_ACCUMULATION_INTEGER_BITS,
    LOG_SOFTMAX_INPUT_INTEGER_BITS,
    LOG_SOFTMAX_OUTPUT_INTEGER_BITS,
    LOG_SOFTMAX_OUTPUT_ZERO_POINT,
    CumsumParams,
    L2NormParams,
    LogSoftmaxParams,
    check_l2norm,
    cumsum_axis,
    cumsum_params,
    l2norm_params,
    log_softmax_params,
)
from tinyhost.arith.unary import inv_sqrt_quantized_multiplier_exp
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import CumsumOptions, Graph, Op, OpKind


def log_softmax_int8(x: np.ndarray, p: LogSoftmaxParams) -> np.ndarray:
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    diff = rows - rows.max(axis=1, keepdims=True)
    scaled = multiply_by_quantized_multiplier(diff, p.input_multiplier, p.input_left_shift)
    exps = gemmlowp.exp_on_negative_values(scaled, LOG_SOFTMAX_INPUT_INTEGER_BITS)
    in_accumulator = gemmlowp.rescale(exps, 0, LOG_SOFTMAX_ACCUMULATION_INTEGER_BITS)
    sums = wrap_int32(np.where(diff >= p.diff_min, in_accumulator, 0).sum(axis=1, keepdims=True))
    log_sum = gemmlowp.log_x_ge_1(
        sums, LOG_SOFTMAX_ACCUMULATION_INTEGER_BITS, LOG_SOFTMAX_INPUT_INTEGER_BITS
    )
    bound = multiply_by_quantized_multiplier(
        wrap_int32(log_sum + INT32_MIN), p.reverse_multiplier, p.reverse_shift
    )
    adjusted_diff_min = np.maximum(p.diff_min - 1, bound)
    exponent = 31 - LOG_SOFTMAX_INPUT_INTEGER_BITS - LOG_SOFTMAX_OUTPUT_INTEGER_BITS
    out = rounding_divide_by_pot(wrap_int32(scaled - log_sum), exponent)
    out = np.clip(out + LOG_SOFTMAX_OUTPUT_ZERO_POINT, -128, 127)
    return np.where(diff > adjusted_diff_min, out, -128).astype(np.int8).reshape(x.shape)


def log_softmax_float(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    shifted = x - x.max(axis=-1, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(axis=-1, keepdims=True, dtype=np.float32))
    return (shifted - log_sum).astype(np.float32)


def l2norm_int8(x: np.ndarray, p: L2NormParams) -> np.ndarray:
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64) + p.input_offset
    sums = wrap_int32((rows * rows).sum(axis=1, keepdims=True))
    inv, inv_shift = inv_sqrt_quantized_multiplier_exp(sums)
    out = multiply_by_quantized_multiplier(rows, inv, inv_shift + L2NORM_OUTPUT_SHIFT)
    return np.clip(out, -128, 127).astype(np.int8).reshape(x.shape)


def l2norm_float(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    norm = np.sqrt((x * x).sum(axis=-1, keepdims=True, dtype=np.float32))
    return (x / np.maximum(norm, np.float32(1e-6))).astype(np.float32)


def cumsum_int8(x: np.ndarray, p: CumsumParams) -> np.ndarray:
    def scale_in(v: np.ndarray | int) -> np.ndarray:
        return multiply_by_quantized_multiplier(
            wrap_int32(np.asarray(v, np.int64) << CUMSUM_LEFT_SHIFT), p.input_multiplier,
            p.input_shift,
        )

    values = np.moveaxis(x.astype(np.int64), p.axis, -1)
    if p.reverse:
        values = values[..., ::-1]
    scaled = scale_in(values + p.input_offset)
    sums = np.cumsum(scaled, axis=-1)
    if p.exclusive:
        sums = np.concatenate([np.zeros_like(sums[..., :1]), sums[..., :-1]], axis=-1)
    accumulated = wrap_int32(sums + scale_in(p.input_offset))
    out = multiply_by_quantized_multiplier(accumulated, p.output_multiplier, p.output_shift)
    out = np.clip(out + p.output_offset, -128, 127).astype(np.int8)
    if p.reverse:
        out = out[..., ::-1]
    return np.ascontiguousarray(np.moveaxis(out, -1, p.axis))


def cumsum_float(x: np.ndarray, axis: int, exclusive: bool, reverse: bool) -> np.ndarray:
    values = np.moveaxis(x.astype(np.float32), axis, -1)
    if reverse:
        values = values[..., ::-1]
    sums = np.cumsum(values, axis=-1, dtype=np.float32)
    if exclusive:
        sums = np.concatenate([np.zeros_like(sums[..., :1]), sums[..., :-1]], axis=-1)
    if reverse:
        sums = sums[..., ::-1]
    return np.ascontiguousarray(np.moveaxis(sums, -1, axis)).astype(np.float32)


def _types(graph: Graph, op: Op, x: np.ndarray) -> np.dtype:
    out_dtype = graph.tensors[op.outputs[0]].dtype
    if x.dtype != out_dtype or out_dtype not in (np.int8, np.float32):
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: {x.dtype} into {out_dtype} is not supported (int8 or "
            "float32 in and out)"
        )
    return out_dtype


def _run_log_softmax(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    if _types(graph, op, x) == np.int8:
        return [log_softmax_int8(x, log_softmax_params(graph, op))]
    return [log_softmax_float(x)]


def _run_l2norm(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    if _types(graph, op, x) == np.int8:
        return [l2norm_int8(x, l2norm_params(graph, op))]
    check_l2norm(graph, op)
    return [l2norm_float(x)]


def _run_cumsum(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    if _types(graph, op, x) == np.int8:
        return [cumsum_int8(x, cumsum_params(graph, op))]
    options = op.options
    assert isinstance(options, CumsumOptions)
    return [cumsum_float(x, cumsum_axis(graph, op), options.exclusive, options.reverse)]


KERNELS = {
    OpKind.LOG_SOFTMAX: _run_log_softmax,
    OpKind.L2_NORMALIZATION: _run_l2norm,
    OpKind.CUMSUM: _run_cumsum,
}
