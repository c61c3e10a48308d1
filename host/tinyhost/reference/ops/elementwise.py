"""ADD, SUB, MUL: int8 with TFLite Micro's arithmetic, and float32; NumPy broadcasting.

TFLite Micro broadcasts with the usual rules (up to 6-D) and evaluates the same scalar
function at every output position, so NumPy broadcasting gives identical results.
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.elementwise import (
    AddParams,
    MulParams,
    add_params,
    mul_params,
    op_where,
    sub_params,
)
from tinyhost.arith.fixedpoint import (
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    wrap_int32,
)
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Activation, FusedActivationOptions, Graph, Op, OpKind

_FLOAT_MAX = np.finfo(np.float32).max


def _smaller_than_one(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """MultiplyByQuantizedMultiplierSmallerThanOneExp (double rounding, shift <= 0)."""
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, multiplier), -shift)


def _rescaled_inputs(
    a: np.ndarray, b: np.ndarray, p: AddParams
) -> tuple[np.ndarray, np.ndarray]:
    shifted1 = wrap_int32((a.astype(np.int64) + p.input1_offset) << p.left_shift)
    shifted2 = wrap_int32((b.astype(np.int64) + p.input2_offset) << p.left_shift)
    return (
        _smaller_than_one(shifted1, p.input1_multiplier, p.input1_shift),
        _smaller_than_one(shifted2, p.input2_multiplier, p.input2_shift),
    )


def _finish(raw: np.ndarray, p: AddParams, dtype: type = np.int8) -> np.ndarray:
    out = _smaller_than_one(raw, p.output_multiplier, p.output_shift) + p.output_offset
    return np.clip(out, p.activation_min, p.activation_max).astype(dtype)


def add_int8(a: np.ndarray, b: np.ndarray, p: AddParams) -> np.ndarray:
    """int8 ADD (int16 ADD for int16 inputs: the same steps, TFLM's AddElementwise);
    `a` and `b` broadcast against each other."""
    scaled1, scaled2 = _rescaled_inputs(a, b, p)
    return _finish(wrap_int32(scaled1 + scaled2), p, a.dtype.type)


def sub_int8(a: np.ndarray, b: np.ndarray, p: AddParams) -> np.ndarray:
    """int8 SUB (a - b); same fields as ADD (int16 SUB for int16 inputs, as ADD)."""
    scaled1, scaled2 = _rescaled_inputs(a, b, p)
    return _finish(wrap_int32(scaled1 - scaled2), p, a.dtype.type)


def mul_int8(a: np.ndarray, b: np.ndarray, p: MulParams) -> np.ndarray:
    """int8 MUL (int16 MUL for int16 inputs): the product of the offset inputs (an int32 in
    TFLM, wrapping) requantized with one multiplier."""
    product = (a.astype(np.int64) + p.input1_offset) * (b.astype(np.int64) + p.input2_offset)
    out = multiply_by_quantized_multiplier(wrap_int32(product), p.output_multiplier,
                                           p.output_shift)
    return np.clip(out + p.output_offset, p.activation_min,
                   p.activation_max).astype(a.dtype.type)


def float_activation_bounds(activation: Activation) -> tuple[np.float32, np.float32]:
    """CalculateActivationRange for float: anything but the RELUs clamps to +-FLT_MAX only."""
    if activation is Activation.RELU:
        return np.float32(0), _FLOAT_MAX
    if activation is Activation.RELU6:
        return np.float32(0), np.float32(6)
    if activation is Activation.RELU_N1_TO_1:
        return np.float32(-1), np.float32(1)
    return -_FLOAT_MAX, _FLOAT_MAX


def clamp_float(x: np.ndarray, low: np.float32, high: np.float32) -> np.ndarray:
    """min(max(x, low), high) with C++ std::min/std::max semantics (NaN passes through)."""
    x = np.where(x < low, low, x)
    return np.where(high < x, high, x).astype(np.float32)


def add_float(a: np.ndarray, b: np.ndarray, activation: Activation) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        result = np.add(a, b, dtype=np.float32)
    return clamp_float(result, *float_activation_bounds(activation))


def sub_float(a: np.ndarray, b: np.ndarray, activation: Activation) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        result = np.subtract(a, b, dtype=np.float32)
    return clamp_float(result, *float_activation_bounds(activation))


def mul_float(a: np.ndarray, b: np.ndarray, activation: Activation) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        result = np.multiply(a, b, dtype=np.float32)
    return clamp_float(result, *float_activation_bounds(activation))


_INT8 = {OpKind.ADD: (add_params, add_int8), OpKind.SUB: (sub_params, sub_int8),
         OpKind.MUL: (mul_params, mul_int8)}
_FLOAT = {OpKind.ADD: add_float, OpKind.SUB: sub_float, OpKind.MUL: mul_float}


def _run(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    a, b = inputs[0], inputs[1]
    assert a is not None and b is not None
    out_dtype = graph.tensors[op.outputs[0]].dtype
    if a.dtype == b.dtype == out_dtype == np.int8 or (
        a.dtype == b.dtype == out_dtype == np.int16
    ):
        derive, kernel = _INT8[op.kind]
        return [kernel(a, b, derive(graph, op))]
    if a.dtype == b.dtype == out_dtype == np.float32:
        options = op.options
        assert isinstance(options, FusedActivationOptions)
        return [_FLOAT[op.kind](a, b, options.activation)]
    raise UnsupportedModelError(
        f"{op_where(graph, op)}: {a.dtype} and {b.dtype} into {out_dtype} is not supported"
    )


KERNELS = {OpKind.ADD: _run, OpKind.SUB: _run, OpKind.MUL: _run}
