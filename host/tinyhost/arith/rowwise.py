"""Integer parameters of LOG_SOFTMAX, L2_NORMALIZATION and CUMSUM (int8), as TFLite Micro's
Prepare computes them (log_softmax.cc, l2norm.cc, cumsum.cc), its double arithmetic included.

LOG_SOFTMAX and L2_NORMALIZATION work on rows along the last axis; CUMSUM scans the axis its
constant second input names. What TFLite Micro's Prepare refuses is refused here, naming the
op and the tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.arith.activations import calculate_input_radius
from tinyhost.arith.elementwise import op_where, per_tensor_quant
from tinyhost.arith.fixedpoint import INT32_MAX, quantize_multiplier
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Activation, CumsumOptions, FusedActivationOptions, Graph, Op, Tensor

# LOG_SOFTMAX: exp() of Q5.26 differences, sums in Q12.19, the log and the output in Q4.
LOG_SOFTMAX_INPUT_INTEGER_BITS = 5
LOG_SOFTMAX_ACCUMULATION_INTEGER_BITS = 12
LOG_SOFTMAX_OUTPUT_INTEGER_BITS = 4
LOG_SOFTMAX_OUTPUT_SCALE = np.float32(16.0 / 256)
LOG_SOFTMAX_OUTPUT_ZERO_POINT = 127
# L2_NORMALIZATION writes Q0.7: scale 1/128 (its Prepare does not check the output's).
L2NORM_OUTPUT_SHIFT = 7
L2NORM_MAX_DIMS = 4
# CUMSUM scales inputs up by 2**20 before summing, as ADD does.
CUMSUM_LEFT_SHIFT = 20


@dataclass(frozen=True)
class LogSoftmaxParams:
    """int8 LOG_SOFTMAX: (x - row max) to Q5.26 by (input_multiplier, input_left_shift);
    the log-sum-exp scaled back by (reverse_multiplier, reverse_shift <= 0) bounds the
    differences that still give an output above -128."""

    input_multiplier: int
    input_left_shift: int
    reverse_multiplier: int
    reverse_shift: int
    diff_min: int


@dataclass(frozen=True)
class L2NormParams:
    """int8 L2_NORMALIZATION: (x - zp_in) / ||x - zp_in|| in Q0.7."""

    input_offset: int  # -input zero point


@dataclass(frozen=True)
class CumsumParams:
    """int8 CUMSUM: each (x + input_offset) << 20 halved by (input_multiplier, input_shift),
    summed in int32 (from the scaled offset, as TFLite Micro starts its accumulator), then
    requantized by (output_multiplier, output_shift) + output_offset."""

    input_offset: int
    output_offset: int
    input_multiplier: int
    input_shift: int
    output_multiplier: int
    output_shift: int
    axis: int  # non-negative
    exclusive: bool
    reverse: bool


def _refuse(graph: Graph, op: Op, message: str) -> UnsupportedModelError:
    return UnsupportedModelError(f"{op_where(graph, op)}: {message}")


def _int8_pair(graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
    if not op.inputs or op.inputs[0] is None or len(op.outputs) != 1:
        raise _refuse(graph, op, "expects an input and 1 output")
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.dtype != np.int8 or y.dtype != np.int8:
        raise _refuse(
            graph, op, f"tensor '{x.name}' is {x.dtype} and tensor '{y.name}' {y.dtype}; "
            "the integer kernel needs int8 in and out"
        )
    if x.shape != y.shape:
        raise _refuse(graph, op, f"tensor '{y.name}' {y.shape} differs from input {x.shape}")
    return x, y


def log_softmax_params(graph: Graph, op: Op) -> LogSoftmaxParams:
    """PreprocessLogSoftmaxScalingExp with beta 1 and CalculateInputRadius(5, left shift)."""
    x, y = _int8_pair(graph, op)
    scale, _ = per_tensor_quant(graph, op, x)
    out_scale, out_zero_point = per_tensor_quant(graph, op, y)
    if out_scale != LOG_SOFTMAX_OUTPUT_SCALE or out_zero_point != LOG_SOFTMAX_OUTPUT_ZERO_POINT:
        raise _refuse(
            graph, op, f"tensor '{y.name}' must have scale 16/256 and zero point 127 (TFLite "
            f"Micro's fixed LOG_SOFTMAX output), got {out_scale} and {out_zero_point}"
        )
    real = min(float(scale) * float(1 << (31 - LOG_SOFTMAX_INPUT_INTEGER_BITS)), float(INT32_MAX))
    if not real > 1.0:
        raise _refuse(graph, op, f"tensor '{x.name}' scale {scale} is too small (below 2**-26)")
    multiplier, left_shift = quantize_multiplier(real)
    reverse_real = float(1 << (31 - left_shift)) / float(multiplier)
    reverse_multiplier, reverse_shift = quantize_multiplier(reverse_real)
    if reverse_shift > 0:
        raise _refuse(graph, op, f"tensor '{x.name}' scale {scale} cannot be reversed")
    diff_min = -calculate_input_radius(LOG_SOFTMAX_INPUT_INTEGER_BITS, left_shift)
    return LogSoftmaxParams(multiplier, left_shift, reverse_multiplier, reverse_shift, diff_min)


def l2norm_params(graph: Graph, op: Op) -> L2NormParams:
    x, _ = _int8_pair(graph, op)
    check_l2norm(graph, op)
    _, zero_point = per_tensor_quant(graph, op, x)
    return L2NormParams(-zero_point)


def check_l2norm(graph: Graph, op: Op) -> None:
    """What l2norm.cc's Prepare refuses for any type: more than 4 dims, an activation."""
    x = graph.tensors[op.inputs[0]] if op.inputs and op.inputs[0] is not None else None
    if x is not None and len(x.shape) > L2NORM_MAX_DIMS:
        raise _refuse(graph, op, f"tensor '{x.name}' has {len(x.shape)} dims, at most 4")
    options = op.options
    if isinstance(options, FusedActivationOptions) and options.activation is not Activation.NONE:
        raise _refuse(graph, op, f"fused activation {options.activation.name} is not supported")


def cumsum_axis(graph: Graph, op: Op) -> int:
    """The constant int32 axis (one element), made non-negative, as cumsum.cc reads it."""
    if len(op.inputs) != 2 or op.inputs[1] is None or len(op.outputs) != 1:
        raise _refuse(graph, op, "expects an input, an axis and 1 output")
    x, axis = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    if axis.dtype != np.int32 or axis.data is None or axis.data.size != 1:
        raise _refuse(graph, op, f"axis tensor '{axis.name}' must be one constant int32")
    if len(x.shape) < 1:
        raise _refuse(graph, op, f"tensor '{x.name}' must have at least 1 dim")
    value = int(axis.data.reshape(-1)[0])
    rank = len(x.shape)
    if not -rank <= value < rank:
        raise _refuse(graph, op, f"axis {value} is out of range for tensor '{x.name}' {x.shape}")
    return value % rank


def cumsum_params(graph: Graph, op: Op) -> CumsumParams:
    """cumsum.cc CalculateOpData: input multiplier s/(2s) and output 2s/(2**20 s_out), each
    by QuantizeMultiplierSmallerThanOneExp (which refuses a multiplier of 1 or more)."""
    axis = cumsum_axis(graph, op)
    x, y = _int8_pair(graph, op)
    (s_in, z_in), (s_out, z_out) = per_tensor_quant(graph, op, x), per_tensor_quant(graph, op, y)
    twice_max_input_scale = 2 * float(s_in)
    input_multiplier, input_shift = quantize_multiplier(float(s_in) / twice_max_input_scale)
    real_output = twice_max_input_scale / (float(1 << CUMSUM_LEFT_SHIFT) * float(s_out))
    output_multiplier, output_shift = quantize_multiplier(real_output)
    if output_shift > 0:
        raise _refuse(
            graph, op, f"tensor '{y.name}' scale {s_out} is too small for input scale {s_in} "
            "(2 * input scale / (2**20 * output scale) must stay below 1)"
        )
    options = op.options
    assert isinstance(options, CumsumOptions)
    return CumsumParams(-z_in, z_out, input_multiplier, input_shift, output_multiplier,
                        output_shift, axis, options.exclusive, options.reverse)  # fmt: skip
