"""Integer parameters of the int8 unary ops ABS, RSQRT and ELU, and RSQRT's inverse square root.

Each `*_params(graph, op)` mirrors TFLite Micro's Prepare (elementwise.cc PrepareAbsRsqrt,
elu.cc CalculateOpData), including its float32 or double arithmetic. The device runs every
one of these ops as a 256-entry table (codegen.lut) made by the reference from these params.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tinyhost.arith import gemmlowp
from tinyhost.arith.elementwise import op_where, per_tensor_quant
from tinyhost.arith.fixedpoint import INT32_MAX, ArrayLike, quantize_multiplier, wrap_int32
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, Tensor

# RsqrtEvalQuantized keeps 1/sqrt(x) as an integer by scaling it up by 2**20 first.
RSQRT_SHIFT = 20
# GetInvSqrtQuantizedMultiplierExp's result is a right shift; reverse_shift -1 makes it left.
REVERSE_SHIFT = -1
_HALF_SQRT_2 = 1518500250  # sqrt(2) / 2 in Q0.31
_THREE_HALVES_Q3 = (1 << 28) + (1 << 27)  # 1.5 in Q3.28


@dataclass(frozen=True)
class AbsParams:
    """ABS: |x - zp_in| (+ requantization when the scales differ) + zp_out, clamped."""

    input_zero_point: int
    output_zero_point: int
    needs_rescale: bool  # input scale != output scale (as float32)
    multiplier: int  # s_in / s_out (double); 0 when not needed
    shift: int


@dataclass(frozen=True)
class RsqrtParams:
    """RSQRT: 1/sqrt(x - zp_in) in fixed point, times 1/(sqrt(s_in) * s_out), + zp_out."""

    input_zero_point: int
    output_zero_point: int
    multiplier: int
    shift: int


@dataclass(frozen=True)
class EluParams:
    """ELU int8: TFLM fills a table in float32 from the tensors' scales and zero points."""

    input_scale: float  # float32 values
    input_zero_point: int
    output_scale: float
    output_zero_point: int


def _unary_int8(graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
    if len(op.inputs) != 1 or op.inputs[0] is None or len(op.outputs) != 1:
        raise UnsupportedModelError(f"{op_where(graph, op)}: expects 1 input and 1 output")
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.dtype != np.int8 or y.dtype != np.int8:
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: {x.dtype} into {y.dtype}; the int8 kernel needs int8 "
            "in and out"
        )
    return x, y


def abs_params(graph: Graph, op: Op) -> AbsParams:
    """PrepareAbsRsqrt for ABS: rescale only when the float32 scales differ; ratio in double."""
    x, y = _unary_int8(graph, op)
    (s_in, z_in), (s_out, z_out) = per_tensor_quant(graph, op, x), per_tensor_quant(graph, op, y)
    if s_in == s_out:
        return AbsParams(z_in, z_out, False, 0, 0)
    return AbsParams(z_in, z_out, True, *quantize_multiplier(float(s_in) / float(s_out)))


def rsqrt_params(graph: Graph, op: Op) -> RsqrtParams:
    """PrepareAbsRsqrt for RSQRT: 1 / (sqrt(double s_in) * double s_out)."""
    x, y = _unary_int8(graph, op)
    (s_in, z_in), (s_out, z_out) = per_tensor_quant(graph, op, x), per_tensor_quant(graph, op, y)
    real = 1.0 / (math.sqrt(float(s_in)) * float(s_out))
    return RsqrtParams(z_in, z_out, *quantize_multiplier(real))


def elu_params(graph: Graph, op: Op) -> EluParams:
    x, y = _unary_int8(graph, op)
    (s_in, z_in), (s_out, z_out) = per_tensor_quant(graph, op, x), per_tensor_quant(graph, op, y)
    return EluParams(float(s_in), z_in, float(s_out), z_out)


def inv_sqrt_quantized_multiplier_exp(
    value: ArrayLike, reverse_shift: int = REVERSE_SHIFT
) -> tuple[np.ndarray, np.ndarray]:
    """GetInvSqrtQuantizedMultiplierExp, vectorized: 1/sqrt(value) as (Q31 multiplier, shift).

    Newton-Raphson in gemmlowp's Q3.28 from a starting guess of 1, five iterations, on the
    value normalized into [2**27, 2**29) by pairs of bits; values <= 1 give (INT32_MAX, 0).
    The shift is a right shift times `reverse_shift`.
    """
    v = np.asarray(value, np.int64)
    small = v <= 1
    x_in = np.where(small, 2, v)
    shift = np.full(x_in.shape, 11, np.int64)
    while np.any(x_in >= 1 << 29):
        big = x_in >= 1 << 29
        x_in = np.where(big, x_in // 4, x_in)
        shift = np.where(big, shift + 1, shift)
    max_left_shift_bits = gemmlowp.count_leading_zeros_u32(x_in) - 1
    left_shift_bit_pairs = max_left_shift_bits // 2 - 1
    shift = shift - left_shift_bit_pairs
    x_in = x_in << (2 * left_shift_bit_pairs)
    fixed_input = x_in >> 1  # Q3.28
    half_input = gemmlowp.saturating_rounding_multiply_by_pot(fixed_input, -1)
    x = np.full(x_in.shape, gemmlowp.one(3), np.int64)
    for _ in range(5):
        x3 = gemmlowp.rescale(gemmlowp.mul(gemmlowp.mul(x, x), x), 9, 3)
        x = gemmlowp.rescale(
            gemmlowp.sub(gemmlowp.mul(_THREE_HALVES_Q3, x), gemmlowp.mul(half_input, x3)), 6, 3
        )
    x = gemmlowp.mul(x, _HALF_SQRT_2)
    negative = shift < 0
    x = np.where(negative, wrap_int32(x << np.where(negative, -shift, 0)), x)
    shift = np.where(negative, 0, shift) * reverse_shift
    return np.where(small, INT32_MAX, x), np.where(small, 0, shift)
