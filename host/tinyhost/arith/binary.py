"""Integer parameters of the int8 binary ops SQUARED_DIFFERENCE, PRELU and DIV (MAXIMUM and
MINIMUM compare raw values and take none).

Derived as TFLite Micro's Prepare does (squared_difference.cc PrepareQuantized,
prelu_common.cc CalculatePreluParams, div.cc CalculateOpDataDiv), in double unless noted.
The dataclasses hold plain ints: the C kernels take the same fields (SQUARED_DIFFERENCE in
ADD's structs, DIV in MUL's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.arith.elementwise import (
    AddParams,
    MulParams,
    activation_range,
    op_where,
    per_tensor_quant,
    quantize_multiplier_smaller_than_one,
)
from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, Tensor

# SQUARED_DIFFERENCE scales int8 inputs up by 2**7 (255**2 * 2**14 still fits int32).
INT8_SQUARED_DIFFERENCE_LEFT_SHIFT = 7


@dataclass(frozen=True)
class SquaredDifferenceParams(AddParams):
    """ADD's fields; output_shift is a MultiplyByQuantizedMultiplier shift (may be > 0) and
    the activation range is the whole int8 range (the op has no fused activation)."""


@dataclass(frozen=True)
class PreluParams:
    input_offset: int  # -input zero point
    alpha_offset: int  # -alpha zero point
    output_offset: int  # output zero point
    multiplier_pos: int  # s_in / s_out, for x >= zero point (TFLM's output_multiplier_1)
    shift_pos: int
    multiplier_neg: int  # s_in * s_alpha / s_out, for the product below (output_multiplier_2)
    shift_neg: int


def binary_int8_tensors(graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor]:
    """The op's two inputs and its output, all int8, or a clear error."""
    if len(op.inputs) != 2 or None in op.inputs or len(op.outputs) != 1:
        raise UnsupportedModelError(f"{op_where(graph, op)}: expects 2 inputs and 1 output")
    a, b = (graph.tensors[i] for i in op.inputs)  # type: ignore[index]
    y = graph.tensors[op.outputs[0]]
    if not a.dtype == b.dtype == y.dtype:
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: {a.dtype} and {b.dtype} into {y.dtype}: the types differ"
        )
    return a, b, y


def squared_difference_params(graph: Graph, op: Op) -> SquaredDifferenceParams:
    """PrepareQuantized (int8): inputs to twice the larger input scale, output from its
    square over 2**14 * s_out."""
    in1, in2, out = binary_int8_tensors(graph, op)
    (s1, z1), (s2, z2), (so, zo) = (per_tensor_quant(graph, op, t) for t in (in1, in2, out))
    shift = INT8_SQUARED_DIFFERENCE_LEFT_SHIFT
    twice_max = 2.0 * float(max(s1, s2))
    m1 = quantize_multiplier_smaller_than_one(float(s1) / twice_max, graph, op, "input1")
    m2 = quantize_multiplier_smaller_than_one(float(s2) / twice_max, graph, op, "input2")
    mo = quantize_multiplier(twice_max * twice_max / float((1 << (2 * shift)) * so))
    return SquaredDifferenceParams(-z1, -z2, zo, shift, *m1, *m2, *mo, -128, 127)


def prelu_params(graph: Graph, op: Op) -> PreluParams:
    """CalculatePreluParams (int8): both ratios in double; alpha has one scale (TFLM would
    read only the first of per-channel scales, so those are refused)."""
    x, alpha, y = binary_int8_tensors(graph, op)
    (s_in, z_in), (s_a, z_a), (s_out, z_out) = (
        per_tensor_quant(graph, op, t) for t in (x, alpha, y)
    )
    pos = quantize_multiplier(float(s_in) / float(s_out))
    neg = quantize_multiplier(float(s_in) * float(s_a) / float(s_out))
    return PreluParams(-z_in, -z_a, z_out, *pos, *neg)


# DIV's per-element quotient (reference.ops.binary.div_int8) needs an output shift of at most
# this: the final rescaling's right shift (headroom + reciprocal shift - output shift, with
# a headroom of at least 23 for |input1 + offset| <= 255) must not go negative.
DIV_MAX_OUTPUT_SHIFT = 23


@dataclass(frozen=True)
class DivParams(MulParams):
    """MUL's fields (the C kernel takes MUL's structs); the multiplier is s1 / (s2 * s_out)
    of the float32 scales, computed in double as TFLM's build does."""


def div_params(graph: Graph, op: Op) -> DivParams:
    """CalculateOpDataDiv (int8): the ratio s1 / (s2 * s_out) of the float32 scales in double.
    (Rounded to float32 first, exact quotient ties such as 1 / 1 at a ratio of 2.5 would round
    away from zero where TFLM's results round toward it: the oracle decides, over all 65,536
    input pairs in tests/test_reference_binary_ops.py.)"""
    in1, in2, out = binary_int8_tensors(graph, op)
    (s1, z1), (s2, z2), (so, zo) = (per_tensor_quant(graph, op, t) for t in (in1, in2, out))
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        real = float(np.float64(s1) / (np.float64(s2) * np.float64(so)))
    multiplier, shift = quantize_multiplier(real)
    if shift > DIV_MAX_OUTPUT_SHIFT:
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: scale ratio s1 / (s2 * s_out) = {real:g} is above "
            f"2**{DIV_MAX_OUTPUT_SHIFT - 1}; TFLite Micro's rescaling is undefined there"
        )
    act_min, act_max = activation_range(graph, op, out)
    return DivParams(-z1, -z2, zo, multiplier, shift, act_min, act_max)
