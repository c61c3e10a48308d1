"""MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU: int8 as TFLite Micro, and float32.

TFLite Micro evaluates the same scalar function at every broadcast output position, so
NumPy broadcasting gives identical results (its slow broadcast paths take up to 4 dims for
SQUARED_DIFFERENCE and PRELU, 5 for MAXIMUM / MINIMUM; passes.validate refuses more).
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.binary import (
    PreluParams,
    SquaredDifferenceParams,
    binary_int8_tensors,
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
from tinyhost.ir import Graph, Op, OpKind


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
        else:
            y = (maximum if op.kind is OpKind.MAXIMUM else minimum)(a, b)
    elif a.dtype == np.float32:
        function = {OpKind.MAXIMUM: maximum, OpKind.MINIMUM: minimum,
                    OpKind.SQUARED_DIFFERENCE: squared_difference_float,
                    OpKind.PRELU: prelu_float}[op.kind]  # fmt: skip
        y = function(a, b)
    else:
        raise UnsupportedModelError(f"{op_where(graph, op)}: {a.dtype} is not supported")
    return [np.broadcast_to(y, out_shape).copy()]


KERNELS = {OpKind.MAXIMUM: _run, OpKind.MINIMUM: _run, OpKind.SQUARED_DIFFERENCE: _run,
           OpKind.PRELU: _run}  # fmt: skip
