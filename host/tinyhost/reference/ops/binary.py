"""MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU, DIV: int8 as TFLite Micro, and float32.

TFLite Micro evaluates the same scalar function at every broadcast output position, so
NumPy broadcasting gives identical results (its slow broadcast paths take up to 4 dims for
SQUARED_DIFFERENCE and PRELU, 5 for MAXIMUM / MINIMUM; passes.validate refuses more).
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith import gemmlowp
from tinyhost.arith.binary import (
    DivParams,
    PreluParams,
    SquaredDifferenceParams,
    binary_int8_tensors,
    div_params,
    prelu_params,
    squared_difference_params,
)
from tinyhost.arith.elementwise import op_where
from tinyhost.arith.fixedpoint import (
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    wrap_int32,
)
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import FusedActivationOptions, Graph, Op, OpKind
from tinyhost.reference.ops.elementwise import clamp_float, float_activation_bounds


def maximum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """el1 > el2 ? el1 : el2 on raw values (int8 or float32; a NaN in b passes through)."""
    return np.where(a > b, a, b).astype(a.dtype)


def minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(a < b, a, b).astype(a.dtype)


def _scaled_input(x: np.ndarray, offset: int, left_shift: int, multiplier: int,
                  shift: int) -> np.ndarray:
    shifted = wrap_int32((x.astype(np.int64) + offset) << left_shift)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier),
                                  -shift)  # fmt: skip


def squared_difference_int8(a: np.ndarray, b: np.ndarray,
                            p: SquaredDifferenceParams) -> np.ndarray:
    s1 = _scaled_input(a, p.input1_offset, p.left_shift, p.input1_multiplier, p.input1_shift)
    s2 = _scaled_input(b, p.input2_offset, p.left_shift, p.input2_multiplier, p.input2_shift)
    diff = wrap_int32(s1 - s2)
    squared = wrap_int32(diff * diff)
    out = multiply_by_quantized_multiplier(squared, p.output_multiplier, p.output_shift)
    return np.clip(out + p.output_offset, p.activation_min, p.activation_max).astype(np.int8)


def prelu_int8(x: np.ndarray, alpha: np.ndarray, p: PreluParams) -> np.ndarray:
    v = x.astype(np.int64) + p.input_offset
    product = v * (alpha.astype(np.int64) + p.alpha_offset)
    pos = multiply_by_quantized_multiplier(v, p.multiplier_pos, p.shift_pos)
    neg = multiply_by_quantized_multiplier(product, p.multiplier_neg, p.shift_neg)
    out = np.where(v >= 0, pos, neg) + p.output_offset
    return np.clip(out, -128, 127).astype(np.int8)


def count_leading_sign_bits(x: np.ndarray) -> np.ndarray:
    """CountLeadingSignBits of int32 values: redundant sign bits, 31 for 0."""
    x = np.asarray(x, np.int64)
    return np.where(x == 0, 31, gemmlowp.count_leading_zeros_u32(np.where(x < 0, ~x, x)) - 1)


def _x86_rounding_divide_by_pot(x: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """RoundingDivideByPOT as the oracle's x86 build runs it, exponent >= 32 included
    (undefined in C++): the mask is the low 32 bits of 2**e - 1 (all ones) and the shift
    count is taken mod 32, as the x86 shift instruction does."""
    x = np.asarray(x, np.int64)
    e = np.asarray(exponent, np.int64)
    mask = wrap_int32((np.int64(1) << np.minimum(e, 62)) - 1)
    remainder = wrap_int32(x & mask)
    threshold = (mask >> 1) + (x < 0)
    return (x >> (e & 31)) + (remainder > threshold)


def div_int8(a: np.ndarray, b: np.ndarray, p: DivParams) -> np.ndarray:
    """DivElementwise: signs moved to input1, input1 normalized by its headroom times
    GetReciprocal(input2), rescaled by the output multiplier and every shift at once.

    What the C++ leaves undefined is done as the oracle's x86 build does it (shift counts
    mod 32): a zero divisor (input2 at its zero point) and final shifts of 32 or more, which
    small |input1| and a small output shift reach. The C kernel does the same, on purpose."""
    in1 = a.astype(np.int64) + p.input1_offset
    in2 = b.astype(np.int64) + p.input2_offset
    negative = in2 < 0
    in1 = np.where(negative, -in1, in1)
    in2 = np.where(negative, -in2, in2)
    # GetReciprocal(in2, 31): 0 has 32 leading zeros and is shifted by 32 mod 32 = 0.
    leading = gemmlowp.count_leading_zeros_u32(in2)
    recip_shift = 31 - leading
    shifted = ((in2 & 0xFFFFFFFF) << (leading & 31)) & 0xFFFFFFFF
    recip = gemmlowp.one_over_one_plus_x_for_x_in_0_1(wrap_int32(shifted - (1 << 31)))
    headroom = count_leading_sign_bits(in1)
    unscaled = saturating_rounding_doubling_high_mul(wrap_int32(in1 << headroom), recip)
    total_shift = p.output_shift - recip_shift - headroom
    scaled = saturating_rounding_doubling_high_mul(unscaled, p.output_multiplier)
    out = _x86_rounding_divide_by_pot(scaled, -total_shift) + p.output_offset
    return np.clip(out, p.activation_min, p.activation_max).astype(np.int8)


def div_float(a: np.ndarray, b: np.ndarray, activation) -> np.ndarray:
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        result = np.divide(a, b, dtype=np.float32)
    return clamp_float(result, *float_activation_bounds(activation))


def squared_difference_float(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        d = np.subtract(a, b, dtype=np.float32)
        return np.multiply(d, d, dtype=np.float32)


def prelu_float(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(x >= 0, x, np.multiply(x, alpha, dtype=np.float32)).astype(np.float32)


def _run(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    a, b = inputs[0], inputs[1]
    assert a is not None and b is not None
    binary_int8_tensors(graph, op)  # arity and matching types
    out_shape = graph.tensors[op.outputs[0]].shape
    if a.dtype == np.int8:
        if op.kind is OpKind.SQUARED_DIFFERENCE:
            y = squared_difference_int8(a, b, squared_difference_params(graph, op))
        elif op.kind is OpKind.PRELU:
            y = prelu_int8(a, b, prelu_params(graph, op))
        elif op.kind is OpKind.DIV:
            y = div_int8(a, b, div_params(graph, op))
        else:
            y = (maximum if op.kind is OpKind.MAXIMUM else minimum)(a, b)
    elif a.dtype == np.float32 and op.kind is OpKind.DIV:
        options = op.options
        assert isinstance(options, FusedActivationOptions)
        y = div_float(a, b, options.activation)
    elif a.dtype == np.float32:
        function = {OpKind.MAXIMUM: maximum, OpKind.MINIMUM: minimum,
                    OpKind.SQUARED_DIFFERENCE: squared_difference_float,
                    OpKind.PRELU: prelu_float}[op.kind]  # fmt: skip
        y = function(a, b)
    else:
        raise UnsupportedModelError(f"{op_where(graph, op)}: {a.dtype} is not supported")
    return [np.broadcast_to(y, out_shape).copy()]


KERNELS = {OpKind.MAXIMUM: _run, OpKind.MINIMUM: _run, OpKind.SQUARED_DIFFERENCE: _run,
           OpKind.PRELU: _run, OpKind.DIV: _run}  # fmt: skip
