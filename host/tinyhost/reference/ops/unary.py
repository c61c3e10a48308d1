"""ABS, RSQRT, ELU: int8 as TFLite Micro (elementwise.cc, elu.cc), and float32; ZEROS_LIKE
(raw zeros of the output's type, whatever its quantization, as zeros_like.cc writes) and
FILL (the raw value repeated, fill.cc).

The int8 functions are total over int8 (codegen.lut evaluates them on all 256 values);
what TFLite Micro refuses at run time (RSQRT of a value below the input zero point) is
checked by the registered kernel, not by the function.
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.elementwise import op_where
from tinyhost.arith.fixedpoint import multiply_by_quantized_multiplier
from tinyhost.arith.unary import (
    RSQRT_SHIFT,
    AbsParams,
    EluParams,
    RsqrtParams,
    abs_params,
    elu_params,
    inv_sqrt_quantized_multiplier_exp,
    rsqrt_params,
)
from tinyhost.errors import InputDataError, UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind


def abs_int8(x: np.ndarray, p: AbsParams) -> np.ndarray:
    value = np.abs(x.astype(np.int64) - p.input_zero_point)
    if p.needs_rescale:
        value = multiply_by_quantized_multiplier(value, p.multiplier, p.shift)
    return np.clip(value + p.output_zero_point, -128, 127).astype(np.int8)


def rsqrt_int8(x: np.ndarray, p: RsqrtParams) -> np.ndarray:
    """RsqrtEvalQuantized. A zero (x == zp) gives 127, as TFLM; values below the zero point,
    which TFLM refuses, are given 127 too (only tables reach them)."""
    value = x.astype(np.int64) - p.input_zero_point
    inv, inv_shift = inv_sqrt_quantized_multiplier_exp(np.maximum(value, 0))
    data = multiply_by_quantized_multiplier(1, inv, inv_shift + RSQRT_SHIFT)
    out = multiply_by_quantized_multiplier(data, p.multiplier, p.shift - RSQRT_SHIFT)
    out = np.clip(out + p.output_zero_point, -128, 127)
    return np.where(value <= 0, 127, out).astype(np.int8)


def elu_int8(x: np.ndarray, p: EluParams) -> np.ndarray:
    """elu.cc PopulateLookupTable, in float32: s_in * (x - zp_in) -> exp(v) - 1 below 0 ->
    round(v * (1 / s_out)) + zp_out, clamped."""
    f32 = np.float32
    dequantized = f32(p.input_scale) * (x.astype(np.int64) - p.input_zero_point).astype(f32)
    with np.errstate(over="ignore"):
        exp = np.exp(dequantized.astype(np.float64)).astype(f32)  # correctly rounded expf
    transformed = np.where(dequantized < 0, exp - f32(1), dequantized).astype(f32)
    inverse_scale = f32(1) / f32(p.output_scale)
    scaled = (transformed * inverse_scale).astype(f32)
    rounded = np.copysign(np.floor(np.abs(scaled.astype(np.float64)) + 0.5), scaled)
    out = (rounded.astype(f32) + f32(p.output_zero_point)).astype(np.float64)
    return np.clip(np.nan_to_num(out), -128, 127).astype(np.int8)


def abs_float(x: np.ndarray) -> np.ndarray:
    return np.abs(x).astype(np.float32)


def rsqrt_float(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.float32(1) / np.sqrt(x.astype(np.float32))).astype(np.float32)


def elu_float(x: np.ndarray) -> np.ndarray:
    """reference_ops::Elu: expm1 below zero."""
    x = x.astype(np.float32)
    return np.where(x < 0, np.expm1(x.astype(np.float64)).astype(np.float32), x).astype(
        np.float32
    )


def _unary(int8_kernel, derive, float_kernel, check=None):
    def run(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None
        out_dtype = graph.tensors[op.outputs[0]].dtype
        if x.dtype == out_dtype == np.int8:
            p = derive(graph, op)
            if check is not None:
                check(graph, op, x, p)
            return [int8_kernel(x, p)]
        if x.dtype == out_dtype == np.float32:
            return [float_kernel(x)]
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: {x.dtype} into {out_dtype} is not supported"
        )

    return run


def _check_rsqrt(graph: Graph, op: Op, x: np.ndarray, p: RsqrtParams) -> None:
    """TFLM's RSQRT fails the invoke on an input below its zero point (a negative value)."""
    if np.any(x.astype(np.int64) < p.input_zero_point):
        raise InputDataError(
            f"{op_where(graph, op)}: RSQRT of a negative value (an input below the zero point "
            f"{p.input_zero_point}); TFLite Micro refuses it"
        )


def _run_zeros_like(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    y = graph.tensors[op.outputs[0]]
    if y.dtype not in (np.int8, np.int32, np.int64, np.float32):
        raise UnsupportedModelError(f"{op_where(graph, op)}: {y.dtype} is not supported")
    return [np.zeros(y.shape, y.dtype)]


def _run_fill(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    value = inputs[1]
    assert value is not None
    y = graph.tensors[op.outputs[0]]
    if value.dtype != y.dtype or y.dtype not in (np.int8, np.int32, np.float32):
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: a {value.dtype} value into {y.dtype} is not supported"
        )
    return [np.full(y.shape, value.reshape(-1)[0], y.dtype)]


KERNELS = {
    OpKind.ZEROS_LIKE: _run_zeros_like,
    OpKind.FILL: _run_fill,
    OpKind.ABS: _unary(abs_int8, abs_params, abs_float),
    OpKind.RSQRT: _unary(rsqrt_int8, rsqrt_params, rsqrt_float, _check_rsqrt),
    OpKind.ELU: _unary(elu_int8, elu_params, elu_float),
}
