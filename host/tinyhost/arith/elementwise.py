"""Integer parameters of the int8 binary elementwise ops (ADD, SUB, MUL).

Derived from the IR exactly as TFLite Micro's CalculateOpDataAdd / CalculateOpDataSub /
CalculateOpDataMul do (all in double).
The dataclasses hold plain ints: the C kernels take the same fields in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.arith.fixedpoint import (
    quantize_multiplier,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    wrap_int32,
)
from tinyhost.arith.fused_activation import int8_activation_range, int16_activation_range
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import FusedActivationOptions, Graph, Op, Quantization, Tensor

# ADD and SUB scale int8 inputs up by 2**20 before rescaling, to keep precision (int16: 15).
INT8_ADD_LEFT_SHIFT = 20
INT16_ADD_LEFT_SHIFT = 15


@dataclass(frozen=True)
class AddParams:
    """ADD (and SUB): both inputs rescaled to a common scale, summed, then rescaled to out."""

    input1_offset: int  # -input1 zero point
    input2_offset: int  # -input2 zero point
    output_offset: int  # output zero point
    left_shift: int
    input1_multiplier: int
    input1_shift: int  # <= 0 (right shift)
    input2_multiplier: int
    input2_shift: int
    output_multiplier: int
    output_shift: int
    activation_min: int
    activation_max: int


@dataclass(frozen=True)
class SubParams(AddParams):
    """SUB takes the same fields as ADD, derived the same way."""


@dataclass(frozen=True)
class MulParams:
    input1_offset: int  # -input1 zero point
    input2_offset: int  # -input2 zero point
    output_offset: int  # output zero point
    output_multiplier: int
    output_shift: int  # may be positive (left shift) when s1*s2/s_out >= 1
    activation_min: int
    activation_max: int


def op_where(graph: Graph, op: Op) -> str:
    """'model.tflite: op 3 (ADD)' for messages; the op's index is found by identity."""
    index = next((i for i, o in enumerate(graph.ops) if o is op), None)
    return f"{graph.source}: op {index} ({op.name})"


def per_tensor_quant(graph: Graph, op: Op, tensor: Tensor) -> tuple[np.float32, int]:
    """(scale as float32, zero point) of a per-tensor quantized tensor, or a clear error."""
    q: Quantization | None = tensor.quant
    if q is None or q.scale.size == 0:
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: tensor '{tensor.name}' is {tensor.dtype} without quantization"
        )
    if q.per_channel:
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: tensor '{tensor.name}' has per-channel quantization, "
            "only per-tensor is supported here"
        )
    scale = np.float32(q.scale[0])
    if not (np.isfinite(scale) and scale > 0):
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: tensor '{tensor.name}' has invalid scale {scale}"
        )
    return scale, int(q.zero_point[0])


def quantize_multiplier_smaller_than_one(
    real: float, graph: Graph, op: Op, what: str
) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: TFLite Micro aborts unless 0 < real < 1."""
    if not 0.0 < real < 1.0:
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: {what} multiplier {real!r} is outside (0, 1); "
            "TFLite Micro refuses these quantization parameters"
        )
    return quantize_multiplier(real)


def _binary_tensors(graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor]:
    if len(op.inputs) != 2 or None in op.inputs or len(op.outputs) != 1:
        raise UnsupportedModelError(f"{op_where(graph, op)}: expects 2 inputs and 1 output")
    in1, in2 = (graph.tensors[i] for i in op.inputs)  # type: ignore[index]
    return in1, in2, graph.tensors[op.outputs[0]]


def activation_range(graph: Graph, op: Op, output: Tensor) -> tuple[int, int]:
    """The int8 (int16) range of the op's fused activation (CalculateActivationRangeQuantized)
    for an int8 (int16) output."""
    options = op.options
    assert isinstance(options, FusedActivationOptions)
    ranged = int16_activation_range if output.dtype == np.int16 else int8_activation_range
    try:
        return ranged(options.activation, output.quant)  # type: ignore[arg-type]
    except UnsupportedModelError as error:
        raise UnsupportedModelError(f"{op_where(graph, op)}: {error}") from None


def add_params(graph: Graph, op: Op) -> AddParams:
    """CalculateOpDataAdd for int8 and int16: multipliers from double ratios to twice the max
    scale; int16 outputs scale the inputs up by 2**15 instead of 2**20."""
    in1, in2, out = _binary_tensors(graph, op)
    left_shift = INT16_ADD_LEFT_SHIFT if out.dtype == np.int16 else INT8_ADD_LEFT_SHIFT
    (s1, z1), (s2, z2), (so, zo) = (per_tensor_quant(graph, op, t) for t in (in1, in2, out))
    twice_max = 2.0 * float(max(s1, s2))
    m1 = quantize_multiplier_smaller_than_one(float(s1) / twice_max, graph, op, "input1")
    m2 = quantize_multiplier_smaller_than_one(float(s2) / twice_max, graph, op, "input2")
    mo = quantize_multiplier_smaller_than_one(
        twice_max / ((1 << left_shift) * float(so)), graph, op, "output"
    )
    act_min, act_max = activation_range(graph, op, out)
    return AddParams(-z1, -z2, zo, left_shift, *m1, *m2, *mo, act_min, act_max)


def sub_params(graph: Graph, op: Op) -> SubParams:
    """CalculateOpDataSub for int8: the same numbers as ADD.

    Older TFLite Micro sources compute SUB's ratios in float32; the pinned version agrees
    with the double computation only (checked against it), so SUB shares ADD's derivation.
    """
    p = add_params(graph, op)
    return SubParams(**vars(p))


def mul_params(graph: Graph, op: Op) -> MulParams:
    """CalculateOpDataMul for int8: one multiplier s1*s2/s_out (double)."""
    in1, in2, out = _binary_tensors(graph, op)
    (s1, z1), (s2, z2), (so, zo) = (per_tensor_quant(graph, op, t) for t in (in1, in2, out))
    multiplier, shift = quantize_multiplier(float(s1) * float(s2) / float(so))
    act_min, act_max = activation_range(graph, op, out)
    return MulParams(-z1, -z2, zo, multiplier, shift, act_min, act_max)


def add_input_tables(p: AddParams) -> tuple[np.ndarray, np.ndarray]:
    """The rescaled ADD/SUB inputs for every int8 value: two int32 tables of 256.

    table_i[(uint8)x] = RDBPOT(SRDHM((x + input_i_offset) << left_shift, multiplier_i),
    -shift_i), the first step of TFLM's AddElementwise with fixedpoint's arithmetic (the
    same functions the reference runs). The kernels' table path (th_add_s8_tables) looks
    the inputs up instead of rescaling them; index (uint8)x, as the LUT tables.
    """
    x = np.arange(256, dtype=np.uint8).view(np.int8).astype(np.int64)
    tables = []
    for offset, multiplier, shift in ((p.input1_offset, p.input1_multiplier, p.input1_shift),
                                      (p.input2_offset, p.input2_multiplier, p.input2_shift)):
        shifted = wrap_int32((x + offset) << p.left_shift)
        scaled = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier),
                                        -shift)
        tables.append(np.asarray(scaled, dtype=np.int64).astype("<i4"))
    return tables[0], tables[1]


def collapse_broadcast(s1: tuple[int, ...], s2: tuple[int, ...], out: tuple[int, ...]
                       ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:  # fmt: skip
    """The shapes of a binary elementwise op (NumPy broadcasting of s1 and s2 to out) with as
    few dims as walk the same elements (kernels_c/elementwise/th_nn_broadcast.h): output dims
    of 1 dropped, neighbours merged where each input is contiguous in both or broadcasts in
    both; the inputs get the output's dims where they advance and 1 where they broadcast."""
    rank = len(out)
    d1 = (1,) * (rank - len(s1)) + tuple(s1)
    d2 = (1,) * (rank - len(s2)) + tuple(s2)
    merged: list[list[int]] = []  # [dim, input1 advances, input2 advances], innermost first
    for i in range(rank - 1, -1, -1):
        if out[i] == 1:
            continue
        a1, a2 = int(d1[i] != 1), int(d2[i] != 1)
        if merged and merged[-1][1:] == [a1, a2]:
            merged[-1][0] *= out[i]
        else:
            merged.append([out[i], a1, a2])
    merged = merged[::-1] or [[1, 0, 0]]
    return (tuple(d if a else 1 for d, a, _ in merged),
            tuple(d if a else 1 for d, _, a in merged), tuple(d for d, _, _ in merged))
