"""QUANTIZE (float32 -> int8/int16, and requantization between integer types) and DEQUANTIZE."""

from __future__ import annotations

import numpy as np

from tinyhost.arith.activations import (
    DequantizeParams,
    QuantizeParams,
    RequantizeParams,
    dequantize_params,
    quantize_params,
    requantize_params,
)
from tinyhost.arith.elementwise import op_where
from tinyhost.arith.fixedpoint import (
    affine_dequantize,
    affine_quantize,
    multiply_by_quantized_multiplier,
    wrap_int32,
)
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind

# (input, output) integer pairs TFLite Micro's QUANTIZE requantizes between.
_REQUANTIZE_PAIRS = frozenset(
    (np.dtype(a), np.dtype(b))
    for a, b in [
        (np.int8, np.int8), (np.int8, np.int16), (np.int8, np.int32), (np.int8, np.uint8),
        (np.uint8, np.int8), (np.int16, np.int8), (np.int16, np.int16), (np.int16, np.int32),
        (np.int32, np.int8), (np.int32, np.int16),
    ]
)
_FLOAT_QUANTIZE_OUTPUTS = frozenset({np.dtype(np.int8), np.dtype(np.int16)})
_DEQUANTIZE_INPUTS = frozenset({np.dtype(np.int8), np.dtype(np.int16)})


def quantize_float(x: np.ndarray, p: QuantizeParams, out_dtype=np.int8) -> np.ndarray:
    """float32 -> integer: round(x / scale) (float32 division, halves away) + zero point."""
    return affine_quantize(x, p.scale, p.zero_point, out_dtype)


def requantize(x: np.ndarray, p: RequantizeParams, out_dtype=np.int8) -> np.ndarray:
    """Integer -> integer: (x - zp_in) rescaled with the double-rounding multiplier, + zp_out,
    in TFLM's int32 arithmetic: an int32 output is that sum wrapped (the clamp to int32 is a
    no-op there), a narrower one is clamped."""
    info = np.iinfo(out_dtype)
    scaled = multiply_by_quantized_multiplier(
        x.astype(np.int64) - p.input_zero_point, p.multiplier, p.shift
    )
    if np.dtype(out_dtype) == np.int32:
        return wrap_int32(np.asarray(scaled, np.int64) + p.output_zero_point).astype(np.int32)
    return np.clip(scaled + p.output_zero_point, info.min, info.max).astype(out_dtype)


def dequantize(x: np.ndarray, p: DequantizeParams) -> np.ndarray:
    return affine_dequantize(x, p.scale, p.zero_point)


def _run_quantize(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    out_dtype = graph.tensors[op.outputs[0]].dtype
    if x.dtype == np.float32 and out_dtype in _FLOAT_QUANTIZE_OUTPUTS:
        return [quantize_float(x, quantize_params(graph, op), out_dtype)]
    if (x.dtype, out_dtype) in _REQUANTIZE_PAIRS:
        return [requantize(x, requantize_params(graph, op), out_dtype)]
    raise UnsupportedModelError(
        f"{op_where(graph, op)}: quantize from {x.dtype} into {out_dtype} is not supported"
    )


def _run_dequantize(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    out_dtype = graph.tensors[op.outputs[0]].dtype
    if x.dtype in _DEQUANTIZE_INPUTS and out_dtype == np.float32:
        return [dequantize(x, dequantize_params(graph, op))]
    raise UnsupportedModelError(
        f"{op_where(graph, op)}: dequantize from {x.dtype} into {out_dtype} is not supported"
    )


KERNELS = {OpKind.QUANTIZE: _run_quantize, OpKind.DEQUANTIZE: _run_dequantize}
