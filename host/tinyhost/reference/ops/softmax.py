"""SOFTMAX over the last axis: int8 in -> int8 or int16 out as TFLite Micro, and float32.

The int8 path is TFLite Micro's reference: differences to the row maximum are rescaled to
Q5.26 (beta folded into the multiplier), exponentiated with gemmlowp's exp, summed in Q12.19,
inverted with GetReciprocal and written as Q0.8 - 128 (int8) or Q0.16 - 32768 (int16).
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith import gemmlowp
from tinyhost.arith.activations import (
    SOFTMAX_ACCUMULATION_INTEGER_BITS,
    SOFTMAX_SCALED_DIFF_INTEGER_BITS,
    SoftmaxParams,
    softmax_params,
)
from tinyhost.arith.elementwise import op_where
from tinyhost.arith.fixedpoint import (
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    wrap_int32,
)
from tinyhost.arith.softmax16 import Softmax16Params, softmax16_luts, softmax16_params
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind, SoftmaxOptions


def _softmax_int8_to(x: np.ndarray, p: SoftmaxParams, out_dtype: type) -> np.ndarray:
    info = np.iinfo(out_dtype)
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    diff = rows - rows.max(axis=1, keepdims=True)
    used = diff >= p.diff_min
    # MultiplyByQuantizedMultiplierGreaterThanOne: left shift in int32, then SRDHM.
    scaled_diff = saturating_rounding_doubling_high_mul(
        wrap_int32(diff << p.input_left_shift), p.input_multiplier
    )
    exps = gemmlowp.exp_on_negative_values(scaled_diff, SOFTMAX_SCALED_DIFF_INTEGER_BITS)
    in_accumulator = gemmlowp.rescale(exps, 0, SOFTMAX_ACCUMULATION_INTEGER_BITS)
    # int32 sums wrap; wrapping the exact sum once is the same thing.
    sum_of_exps = wrap_int32(np.where(used, in_accumulator, 0).sum(axis=1, keepdims=True))
    reciprocal, num_bits_over_unit = gemmlowp.get_reciprocal(
        sum_of_exps, SOFTMAX_ACCUMULATION_INTEGER_BITS
    )
    exponent = num_bits_over_unit + 31 - 8 * np.dtype(out_dtype).itemsize
    unsaturated = rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(reciprocal, exps), exponent
    )
    out = np.clip(unsaturated + info.min, info.min, info.max)
    return np.where(used, out, info.min).astype(out_dtype).reshape(x.shape)


def softmax_int8(x: np.ndarray, p: SoftmaxParams) -> np.ndarray:
    """int8 -> int8 (output zero point -128, scale 1/256)."""
    return _softmax_int8_to(x, p, np.int8)


def softmax_int8_int16(x: np.ndarray, p: SoftmaxParams) -> np.ndarray:
    """int8 -> int16 (output zero point -32768, scale 1/65536)."""
    return _softmax_int8_to(x, p, np.int16)


def softmax_float(x: np.ndarray, beta: float) -> np.ndarray:
    """exp((x - max) * beta) / sum, in float32 with a left-to-right sum, as TFLite Micro."""
    x = x.astype(np.float32)
    diff = (x - x.max(axis=-1, keepdims=True)) * np.float32(beta)
    exps = np.exp(diff.astype(np.float64)).astype(np.float32)
    total = np.cumsum(exps, axis=-1, dtype=np.float32)[..., -1:]
    return (exps / total).astype(np.float32)


def lut_lookup_int16(value: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """TFLM's lut_lookup for int16 inputs: 512 steps of 128, linear between neighbours."""
    value = np.asarray(value, np.int64)
    index = 256 + (value >> 7)
    base = lut.astype(np.int64)[index]
    slope = lut.astype(np.int64)[index + 1] - base
    return (base + ((slope * (value & 0x7F) + 64) >> 7)).astype(np.int16)


def softmax_int16(x: np.ndarray, p: Softmax16Params) -> np.ndarray:
    """int16 -> int16 (zero point 0, scale 1/32768) as TFLM's SoftmaxInt16: exp of the
    scaled difference to the row max from a table, the sum's reciprocal from another
    (normalized by its leading zeros), products rounded back to Q0.15."""
    exp_lut, recip_lut = softmax16_luts()
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    diff = rows - rows.max(axis=1, keepdims=True)
    scaled = multiply_by_quantized_multiplier(diff, p.input_multiplier, p.input_left_shift)
    exps = lut_lookup_int16(np.clip(scaled + 32767, -32768, 32767), exp_lut).astype(np.int64)
    total = wrap_int32(exps.sum(axis=1, keepdims=True))  # int32 in TFLM
    headroom = 32 - np.array([[int(t).bit_length()] for t in (total & 0xFFFFFFFF).ravel()])
    shifted = ((total << (headroom - 1)) + (1 << 13)) >> 14
    recentred = np.clip(shifted - ((1 << 15) + (1 << 16)), -32768, 32767)
    reciprocal = lut_lookup_int16(recentred, recip_lut).astype(np.int64)
    right = 31 - headroom
    out = (exps * reciprocal + (np.int64(1) << (right - 1))) >> right
    return np.clip(out, 0, 32767).astype(np.int16).reshape(x.shape)


def _run(graph: Graph, op: Op, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    out_dtype = graph.tensors[op.outputs[0]].dtype
    if x.dtype == np.int8 and out_dtype == np.int8:
        return [softmax_int8(x, softmax_params(graph, op))]
    if x.dtype == np.int8 and out_dtype == np.int16:
        return [softmax_int8_int16(x, softmax_params(graph, op))]
    if x.dtype == out_dtype == np.int16:
        return [softmax_int16(x, softmax16_params(graph, op))]
    if x.dtype == out_dtype == np.float32:
        options = op.options
        assert isinstance(options, SoftmaxOptions)
        return [softmax_float(x, options.beta)]
    raise UnsupportedModelError(
        f"{op_where(graph, op)}: softmax from {x.dtype} into {out_dtype} is not supported"
    )


KERNELS = {OpKind.SOFTMAX: _run}
