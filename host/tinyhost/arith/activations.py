"""Integer parameters of the int8 activation ops, SOFTMAX and (de)quantization.

Each `*_params(graph, op)` mirrors the matching TFLite Micro Prepare function, including its
choice of float32 or double arithmetic and what it checks (and what it silently ignores:
LOGISTIC and TANH never look at the output scale, RELU6 never looks at the output tensor).
The dataclasses hold plain ints so the C kernels can take the very same fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tinyhost.arith.elementwise import op_where, per_tensor_quant
from tinyhost.arith.fixedpoint import INT32_MAX, quantize_multiplier, round_half_away
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, LeakyReluOptions, Op, SoftmaxOptions, Tensor

# Softmax feeds exp() with Q5.26 differences and sums the exps in Q12.19.
SOFTMAX_SCALED_DIFF_INTEGER_BITS = 5
SOFTMAX_ACCUMULATION_INTEGER_BITS = 12
# LOGISTIC and TANH rescale their input to Q4.27.
SIGMOID_INPUT_INTEGER_BITS = 4


@dataclass(frozen=True)
class SoftmaxParams:
    """int8 input; output int8 (zero point -128, scale 1/256) or int16 (-32768, 1/65536)."""

    input_multiplier: int
    input_left_shift: int  # >= 0
    diff_min: int  # differences to the row max below this give exp() = 0


@dataclass(frozen=True)
class LogisticParams:
    """Output is Q0.8 offset by -128 whatever the output tensor's scale says."""

    input_zero_point: int
    input_range_radius: int  # |x - zp| at or beyond this saturates
    input_multiplier: int
    input_left_shift: int  # may be positive or negative (a plain QuantizeMultiplier shift)


@dataclass(frozen=True)
class TanhParams:
    """Output is Q0.7 with zero point 0 whatever the output tensor's quantization says."""

    input_zero_point: int
    input_range_radius: int
    input_multiplier: int
    input_left_shift: int


@dataclass(frozen=True)
class ReluParams:
    """RELU: requantize from the input to the output scale, then clamp at the output zero."""

    input_zero_point: int  # subtracted (ARCHITECTURE.md §4.1: an *_offset is what is added)
    output_offset: int  # output zero point (added)
    output_multiplier: int
    output_shift: int
    activation_min: int
    activation_max: int


@dataclass(frozen=True)
class Relu6Params:
    """RELU6: a clamp in the input's quantization; the output tensor's is not consulted."""

    zero: int  # input zero point
    six: int  # 6.0 quantized with the input's parameters, clamped to int8


@dataclass(frozen=True)
class LeakyReluParams:
    input_zero_point: int  # subtracted (ARCHITECTURE.md §4.1: an *_offset is what is added)
    output_offset: int  # output zero point (added)
    output_multiplier_alpha: int  # negative when alpha < 0
    output_shift_alpha: int
    output_multiplier_identity: int
    output_shift_identity: int


@dataclass(frozen=True)
class HardSwishParams:
    """16-bit fixed-point multipliers; exponents are powers of two (negative = right shift)."""

    input_zero_point: int
    output_zero_point: int
    reluish_multiplier_fixedpoint_int16: int
    reluish_multiplier_exponent: int
    output_multiplier_fixedpoint_int16: int
    output_multiplier_exponent: int  # <= 0


@dataclass(frozen=True)
class RequantizeParams:
    """QUANTIZE between integer types: (x - zp_in) * multiplier + zp_out, clamped to out."""

    input_zero_point: int
    output_zero_point: int
    multiplier: int
    shift: int


@dataclass(frozen=True)
class QuantizeParams:
    """QUANTIZE float32 -> integer: round(x / scale) + zero_point, division in float32."""

    scale: float  # a float32 value
    zero_point: int


@dataclass(frozen=True)
class DequantizeParams:
    """DEQUANTIZE integer -> float32: scale * (q - zero_point) computed in double."""

    scale: float  # a float32 value
    zero_point: int


def _unary_tensors(graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
    if len(op.inputs) < 1 or op.inputs[0] is None or len(op.outputs) != 1:
        raise UnsupportedModelError(f"{op_where(graph, op)}: expects 1 input and 1 output")
    return graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]


def _require(condition: bool, graph: Graph, op: Op, message: str) -> None:
    if not condition:
        raise UnsupportedModelError(f"{op_where(graph, op)}: {message}")


def calculate_input_radius(input_integer_bits: int, input_left_shift: int) -> int:
    """CalculateInputRadius with 31 total signed bits: the largest |input| that cannot saturate."""
    return math.floor(
        ((1 << input_integer_bits) - 1) * float(1 << (31 - input_integer_bits))
        / float(1 << input_left_shift)
    )


def softmax_params(graph: Graph, op: Op) -> SoftmaxParams:
    """CalculateSoftmaxParams for int8 input (PreprocessSoftmaxScaling + CalculateInputRadius)."""
    x, y = _unary_tensors(graph, op)
    _require(x.dtype == np.int8, graph, op, f"quantized softmax needs int8 input, got {x.dtype}")
    scale, _ = per_tensor_quant(graph, op, x)
    out_scale, out_zero_point = per_tensor_quant(graph, op, y)
    if y.dtype == np.int8:
        _require(
            out_zero_point == -128 and out_scale == np.float32(1) / np.float32(256),
            graph, op,
            f"int8 softmax output must have zero point -128 and scale 1/256, got "
            f"{out_zero_point} and {out_scale}",
        )
    elif y.dtype == np.int16:
        target = np.float32(1) / np.float32(65536)
        _require(
            out_zero_point == -32768
            and abs(out_scale - target) <= np.float32(0.001) * target,
            graph, op,
            f"int16 softmax output must have zero point -32768 and scale 1/65536, got "
            f"{out_zero_point} and {out_scale}",
        )
    else:
        raise UnsupportedModelError(f"{op_where(graph, op)}: int8 softmax into {y.dtype}")
    options = op.options
    assert isinstance(options, SoftmaxOptions)
    beta = float(np.float32(options.beta))
    real = min(
        beta * float(scale) * float(1 << (31 - SOFTMAX_SCALED_DIFF_INTEGER_BITS)),
        float(INT32_MAX),
    )
    # QuantizeMultiplierGreaterThanOne: TFLite Micro aborts unless the multiplier exceeds 1.
    _require(real > 1.0, graph, op, f"beta * input scale = {beta * float(scale)!r} is too small")
    multiplier, shift = quantize_multiplier(real)
    diff_min = -calculate_input_radius(SOFTMAX_SCALED_DIFF_INTEGER_BITS, shift)
    return SoftmaxParams(multiplier, shift, diff_min)


def _sigmoid_input_params(graph: Graph, op: Op, x: Tensor) -> tuple[int, int, int, int]:
    """The input rescaling LOGISTIC and TANH share: Q4.27 via frexp of scale * 2**27."""
    scale, zero_point = per_tensor_quant(graph, op, x)
    significand, shift = math.frexp(float(scale) * float(1 << (31 - SIGMOID_INPUT_INTEGER_BITS)))
    multiplier = round_half_away(significand * (1 << 31))
    _require(shift >= 0, graph, op, f"input scale {scale} is too small")
    radius = calculate_input_radius(SIGMOID_INPUT_INTEGER_BITS, shift)
    return zero_point, radius, multiplier, shift


def logistic_params(graph: Graph, op: Op) -> LogisticParams:
    x, y = _unary_tensors(graph, op)
    _require(x.dtype == y.dtype == np.int8, graph, op, "int8 logistic needs int8 in and out")
    _, out_zero_point = per_tensor_quant(graph, op, y)
    _require(out_zero_point == -128, graph, op,
             f"int8 logistic output zero point must be -128, got {out_zero_point}")
    return LogisticParams(*_sigmoid_input_params(graph, op, x))


def tanh_params(graph: Graph, op: Op) -> TanhParams:
    x, y = _unary_tensors(graph, op)
    _require(x.dtype == y.dtype == np.int8, graph, op, "int8 tanh needs int8 in and out")
    return TanhParams(*_sigmoid_input_params(graph, op, x))


def relu_params(graph: Graph, op: Op) -> ReluParams:
    """CalculateReluOpData<int8_t>: double in/out multiplier, clamp below at the output zero."""
    x, y = _unary_tensors(graph, op)
    in_scale, in_zero_point = per_tensor_quant(graph, op, x)
    out_scale, out_zero_point = per_tensor_quant(graph, op, y)
    multiplier, shift = quantize_multiplier(float(in_scale) / float(out_scale))
    return ReluParams(in_zero_point, out_zero_point, multiplier, shift,
                      max(-128, out_zero_point), 127)


def _float_to_quantized_int8(value: float, scale: np.float32, zero_point: int) -> int:
    """FloatToQuantizedType<int8_t>: round(value / scale) in float32, + zero point, clamp."""
    quotient = float(np.float32(value) / scale)
    return min(127, max(-128, round_half_away(quotient) + zero_point))


def relu6_params(graph: Graph, op: Op) -> Relu6Params:
    x, _ = _unary_tensors(graph, op)
    scale, zero_point = per_tensor_quant(graph, op, x)
    return Relu6Params(zero_point, _float_to_quantized_int8(6.0, scale, zero_point))


def leaky_relu_params(graph: Graph, op: Op) -> LeakyReluParams:
    """CalculateOpDataLeakyRelu: both ratios in double (older sources show float32 here; the
    pinned TFLite Micro agrees with double only, checked against it)."""
    x, y = _unary_tensors(graph, op)
    in_scale, in_zero_point = per_tensor_quant(graph, op, x)
    out_scale, out_zero_point = per_tensor_quant(graph, op, y)
    options = op.options
    assert isinstance(options, LeakyReluOptions)
    alpha = float(np.float32(options.alpha))
    alpha_ratio = float(in_scale) * alpha / float(out_scale)
    identity_ratio = float(in_scale) / float(out_scale)
    m_alpha, s_alpha = quantize_multiplier(alpha_ratio)
    m_identity, s_identity = quantize_multiplier(identity_ratio)
    return LeakyReluParams(in_zero_point, out_zero_point, m_alpha, s_alpha,
                           m_identity, s_identity)


def down_scale_int32_to_int16_multiplier(multiplier: int) -> int:
    """DownScaleInt32ToInt16Multiplier: round a Q31 multiplier to Q15, saturating."""
    if multiplier >= INT32_MAX - (1 << 15):
        return (1 << 15) - 1
    return (multiplier + (1 << 15)) >> 16


def hard_swish_params(graph: Graph, op: Op) -> HardSwishParams:
    """HardSwishPrepare: ratios of a 'hires' input scale (input/128) to the output scale and
    to 3/32768, in double (older sources divide in float32; the pinned TFLite Micro agrees
    with double only), each quantized to Q31 and then rounded to Q15."""
    x, y = _unary_tensors(graph, op)
    in_scale, in_zero_point = per_tensor_quant(graph, op, x)
    out_scale, out_zero_point = per_tensor_quant(graph, op, y)
    hires_input_scale = np.float32(1.0 / 128.0) * in_scale
    reluish_scale = np.float32(3.0 / 32768.0)
    out_m, out_e = quantize_multiplier(float(hires_input_scale) / float(out_scale))
    _require(out_e <= 0, graph, op,
             f"input/output scale ratio {float(in_scale / out_scale)} is too large for HARD_SWISH")
    rel_m, rel_e = quantize_multiplier(float(hires_input_scale) / float(reluish_scale))
    return HardSwishParams(
        in_zero_point,
        out_zero_point,
        down_scale_int32_to_int16_multiplier(rel_m),
        rel_e,
        down_scale_int32_to_int16_multiplier(out_m),
        out_e,
    )


def requantize_params(graph: Graph, op: Op) -> RequantizeParams:
    """PrepareQuantizeReference for integer -> integer: double s_in / s_out."""
    x, y = _unary_tensors(graph, op)
    in_scale, in_zero_point = per_tensor_quant(graph, op, x)
    out_scale, out_zero_point = per_tensor_quant(graph, op, y)
    multiplier, shift = quantize_multiplier(float(in_scale) / float(out_scale))
    return RequantizeParams(in_zero_point, out_zero_point, multiplier, shift)


def quantize_params(graph: Graph, op: Op) -> QuantizeParams:
    _, y = _unary_tensors(graph, op)
    scale, zero_point = per_tensor_quant(graph, op, y)
    return QuantizeParams(float(scale), zero_point)


def dequantize_params(graph: Graph, op: Op) -> DequantizeParams:
    x, _ = _unary_tensors(graph, op)
    scale, zero_point = per_tensor_quant(graph, op, x)
    return DequantizeParams(float(scale), zero_point)
