"""LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU, HARD_SWISH: int8 as TFLite Micro, and float32;
LOGISTIC and TANH also int16 (tinyhost.arith.sigmoid16)."""

from __future__ import annotations

import numpy as np

from tinyhost.arith import gemmlowp
from tinyhost.arith.activations import (
    SIGMOID_INPUT_INTEGER_BITS,
    HardSwishParams,
    LeakyReluParams,
    LogisticParams,
    Relu6Params,
    ReluParams,
    TanhParams,
    hard_swish_params,
    leaky_relu_params,
    logistic_params,
    relu6_params,
    relu_params,
    tanh_params,
)
from tinyhost.arith.elementwise import op_where
from tinyhost.arith.fixedpoint import multiply_by_quantized_multiplier, rounding_divide_by_pot
from tinyhost.arith.sigmoid16 import logistic_int16, sigmoid16_params, tanh_int16
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, LeakyReluOptions, Op, OpKind


def _sigmoid_like_int8(
    x: np.ndarray,
    p: LogisticParams | TanhParams,
    function,
    output_fraction_bits: int,
    output_zero_point: int,
) -> np.ndarray:
    """What LOGISTIC and TANH share: saturate outside the radius, else Q4.27 -> f -> int8."""
    centered = x.astype(np.int64) - p.input_zero_point
    in_q4 = multiply_by_quantized_multiplier(centered, p.input_multiplier, p.input_left_shift)
    out_q0 = function(in_q4, SIGMOID_INPUT_INTEGER_BITS)
    out = rounding_divide_by_pot(out_q0, 31 - output_fraction_bits) + output_zero_point
    out = np.clip(out, -128, 127)
    out = np.where(centered <= -p.input_range_radius, -128, out)
    return np.where(centered >= p.input_range_radius, 127, out).astype(np.int8)


def logistic_int8(x: np.ndarray, p: LogisticParams) -> np.ndarray:
    """Output is Q0.8 minus 128: the output tensor's scale is assumed to be 1/256."""
    return _sigmoid_like_int8(x, p, gemmlowp.logistic, 8, -128)


def tanh_int8(x: np.ndarray, p: TanhParams) -> np.ndarray:
    """Output is Q0.7 with zero point 0, whatever the output tensor says."""
    return _sigmoid_like_int8(x, p, gemmlowp.tanh, 7, 0)


def relu_int8(x: np.ndarray, p: ReluParams) -> np.ndarray:
    scaled = multiply_by_quantized_multiplier(
        x.astype(np.int64) - p.input_zero_point, p.output_multiplier, p.output_shift
    )
    return np.clip(scaled + p.output_offset, p.activation_min, p.activation_max).astype(np.int8)


def relu6_int8(x: np.ndarray, p: Relu6Params) -> np.ndarray:
    """A clamp to [zero, six]; when six < zero the upper bound wins, as in the C++."""
    x = x.astype(np.int64)
    return np.where(x > p.six, p.six, np.where(x < p.zero, p.zero, x)).astype(np.int8)


def leaky_relu_int8(x: np.ndarray, p: LeakyReluParams) -> np.ndarray:
    """Identity multiplier for x >= zp, alpha multiplier below; a negative alpha multiplier
    is applied as the negation of its magnitude's product, as TFLite Micro does."""
    centered = x.astype(np.int64) - p.input_zero_point
    identity = multiply_by_quantized_multiplier(
        centered, p.output_multiplier_identity, p.output_shift_identity
    )
    magnitude = abs(p.output_multiplier_alpha)
    alpha = multiply_by_quantized_multiplier(centered, magnitude, p.output_shift_alpha)
    if p.output_multiplier_alpha < 0:
        alpha = -alpha
    out = p.output_offset + np.where(centered >= 0, identity, alpha)
    return np.clip(out, -128, 127).astype(np.int8)


def hard_swish_int8(x: np.ndarray, p: HardSwishParams) -> np.ndarray:
    """x * relu6(x + 3) / 6 in 16-bit fixed point, every intermediate stored as int16."""
    g = gemmlowp
    value = g.wrap_int16(x.astype(np.int64) - p.input_zero_point)
    hires = g.wrap_int16(value * (1 << 7))
    preshift_output = g.saturating_rounding_doubling_high_mul_int16(
        hires, p.output_multiplier_fixedpoint_int16
    )
    # The relu-ish factor: x rescaled so that 3.0 -> 32768, saturated, then mapped to [0, 1].
    reluish = hires
    if p.reluish_multiplier_exponent > 0:
        reluish = g.saturating_left_shift_int16(reluish, p.reluish_multiplier_exponent - 1)
    reluish = g.saturating_rounding_doubling_high_mul_int16(
        reluish, p.reluish_multiplier_fixedpoint_int16
    )
    if p.reluish_multiplier_exponent > 0:
        reluish = g.saturating_left_shift_int16(reluish, 1)
    if p.reluish_multiplier_exponent < 0:
        reluish = g.rounding_divide_by_pot_int16(reluish, -p.reluish_multiplier_exponent)
    reluish = g.wrap_int16((reluish + (1 << 15)) >> 1)
    output = g.saturating_doubling_high_mul_int16(reluish, preshift_output)
    output = g.rounding_divide_by_pot_int16(output, -p.output_multiplier_exponent)
    output = g.wrap_int16(output + p.output_zero_point)
    return np.clip(output, -128, 127).astype(np.int8)


# -- float32 --------------------------------------------------------------------------------

_LOGISTIC_UPPER_CUTOFF = np.float32(16.619047164916992188)
_LOGISTIC_LOWER_CUTOFF = np.float32(-9.0)


def _expf(x: np.ndarray) -> np.ndarray:
    # In double then rounded: the correctly rounded expf that libm gives for nearly all x.
    return np.exp(x.astype(np.float64)).astype(np.float32)


def logistic_float(x: np.ndarray) -> np.ndarray:
    """TFLite Micro's float logistic: 1 / (1 + exp(-x)) with its cutoffs."""
    x = x.astype(np.float32)
    with np.errstate(over="ignore"):
        middle = np.float32(1) / (np.float32(1) + _expf(-x))
    out = np.where(x < _LOGISTIC_LOWER_CUTOFF, _expf(x), middle)
    return np.where(x > _LOGISTIC_UPPER_CUTOFF, np.float32(1), out).astype(np.float32)


def tanh_float(x: np.ndarray) -> np.ndarray:
    return np.tanh(x.astype(np.float64)).astype(np.float32)


def relu_float(x: np.ndarray) -> np.ndarray:
    return np.where(x < 0, np.float32(0), x).astype(np.float32)


def relu6_float(x: np.ndarray) -> np.ndarray:
    return np.where(x > 6, np.float32(6), np.where(x < 0, np.float32(0), x)).astype(np.float32)


def leaky_relu_float(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x > 0, x, x * np.float32(alpha)).astype(np.float32)


def hard_swish_float(x: np.ndarray) -> np.ndarray:
    """in * min(6, max(0, in + 3)) / 6, evaluated left to right in float32."""
    x = x.astype(np.float32)
    shifted = x + np.float32(3)
    # std::max(0, v) and std::min(6, v): a NaN v yields the constant, unlike np.maximum.
    low_clamped = np.where(np.float32(0) < shifted, shifted, np.float32(0))
    relu6 = np.where(low_clamped < np.float32(6), low_clamped, np.float32(6))
    return ((x * relu6) / np.float32(6)).astype(np.float32)


# -- registry -------------------------------------------------------------------------------


def _check_types(graph: Graph, op: Op, x: np.ndarray) -> np.dtype:
    out_dtype = graph.tensors[op.outputs[0]].dtype
    if x.dtype != out_dtype or x.dtype not in (np.int8, np.float32):
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: {x.dtype} into {out_dtype} is not supported"
        )
    return x.dtype


def _unary(int8_kernel, derive, float_kernel, int16_kernel=None):
    def run(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None
        if int16_kernel is not None and x.dtype == np.int16:
            return [int16_kernel(x, sigmoid16_params(graph, op))]
        if _check_types(graph, op, x) == np.int8:
            return [int8_kernel(x, derive(graph, op))]
        return [float_kernel(x)]

    return run


def _run_leaky_relu(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    if _check_types(graph, op, x) == np.int8:
        return [leaky_relu_int8(x, leaky_relu_params(graph, op))]
    options = op.options
    assert isinstance(options, LeakyReluOptions)
    return [leaky_relu_float(x, options.alpha)]


KERNELS = {
    OpKind.LOGISTIC: _unary(logistic_int8, logistic_params, logistic_float, logistic_int16),
    OpKind.TANH: _unary(tanh_int8, tanh_params, tanh_float, tanh_int16),
    OpKind.RELU: _unary(relu_int8, relu_params, relu_float),
    OpKind.RELU6: _unary(relu6_int8, relu6_params, relu6_float),
    OpKind.LEAKY_RELU: _run_leaky_relu,
    OpKind.HARD_SWISH: _unary(hard_swish_int8, hard_swish_params, hard_swish_float),
}
