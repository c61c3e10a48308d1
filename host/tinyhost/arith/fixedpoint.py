"""Integer primitives of TFLite Micro's int8 arithmetic, vectorized over NumPy arrays.

Values that are int32 in C are carried in int64 arrays so products never overflow; every
function returns int64 arrays holding int32 values. Divisions truncate toward zero and
shifts are arithmetic, as in C on the targets we run.
"""

from __future__ import annotations

import math

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1

ArrayLike = np.ndarray | int


def round_half_away(x: float) -> int:
    """std::round / TfLiteRound: halves go away from zero (Python's round() goes to even)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def quantize_multiplier(real_multiplier: float) -> tuple[int, int]:
    """Encode a positive real multiplier as (Q31 significand, power-of-two exponent).

    real ~= significand * 2**(exponent - 31), significand in [2**30, 2**31).
    """
    if real_multiplier == 0.0:
        return 0, 0
    significand, exponent = math.frexp(real_multiplier)
    q_fixed = round_half_away(significand * (1 << 31))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        exponent += 1
    if exponent < -31:  # every bit would be shifted out: flush to zero like TFLite
        return 0, 0
    return q_fixed, exponent


def wrap_int32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap to int32, as C arithmetic does on overflow on our targets."""
    return ((np.asarray(x, np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _trunc_div_pow2(x: np.ndarray, bits: int) -> np.ndarray:
    """x / 2**bits with C's truncation toward zero."""
    return np.where(x >= 0, x >> bits, -((-x) >> bits))


def saturating_rounding_doubling_high_mul(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul for int32 operands."""
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    overflow = (a == b) & (a == INT32_MIN)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    high = _trunc_div_pow2(ab + nudge, 31)
    return np.where(overflow, INT32_MAX, high)


def rounding_divide_by_pot(x: ArrayLike, exponent: ArrayLike) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT: x / 2**exponent, rounding half away from zero."""
    x = np.asarray(x, np.int64)
    exponent = np.asarray(exponent, np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(
    x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike
) -> np.ndarray:
    """TFLite Micro's default (double rounding) MultiplyByQuantizedMultiplier.

    `multiplier` and `shift` broadcast against `x` (per-channel requantization passes arrays
    shaped to the channel axis).
    """
    x = np.asarray(x, np.int64)
    shift = np.asarray(shift, np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    shifted = wrap_int32(x << left)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier), right)


def multiply_by_quantized_multiplier_int64(
    x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike
) -> np.ndarray:
    """TFLite Micro's MultiplyByQuantizedMultiplier for an int64 accumulator (16x8 kernels).

    The Q31 multiplier is rounded to Q15 (saturating at 0x7FFF), the product rounded half up
    by 15 - shift bits; the int64 arithmetic wraps and the result is truncated to int32, as
    the C++ does on two's complement targets (only absurd biases get there).
    """
    x = np.asarray(x, np.int64)
    multiplier = np.asarray(multiplier, np.int64)
    total = 15 - np.asarray(shift, np.int64)
    reduced = np.where(multiplier < 0x7FFF0000, (multiplier + (1 << 15)) >> 16, 0x7FFF)
    with np.errstate(over="ignore"):
        result = (x * reduced + (np.int64(1) << (total - 1))) >> total
    return wrap_int32(result)


def requantize_to_int8(
    acc: ArrayLike,
    multiplier: ArrayLike,
    shift: ArrayLike,
    output_zero_point: int,
    act_min: int = -128,
    act_max: int = 127,
) -> np.ndarray:
    """The epilogue every int8 MAC kernel shares: scale, add the zero point, clamp."""
    scaled = multiply_by_quantized_multiplier(acc, multiplier, shift) + output_zero_point
    return np.clip(scaled, act_min, act_max).astype(np.int8)


def affine_quantize(x: np.ndarray, scale: float, zero_point: int, dtype=np.int8) -> np.ndarray:
    """float -> integer as TFLite Micro's QUANTIZE: float32 division, round half away, clamp."""
    info = np.iinfo(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        q = (np.asarray(x, np.float32) / np.float32(scale)).astype(np.float64)
    # roundf, done in double where |q| + 0.5 is exact (in float32 0.49999997 + 0.5 rounds up).
    rounded = np.copysign(np.floor(np.abs(q) + 0.5), q)
    # The C++ casts to int32 (undefined when out of range); we saturate as Cortex-M's VCVT
    # does, NaN becoming 0. Only |x / scale| >= 2**31 or NaN can tell the difference.
    rounded = np.clip(np.nan_to_num(rounded, nan=0.0), INT32_MIN, INT32_MAX)
    return np.clip(rounded + zero_point, info.min, info.max).astype(dtype)


def affine_dequantize(q: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """integer -> float as TFLite Micro's DEQUANTIZE: computed in double, stored as float32."""
    # A double beyond float32's range becomes +-inf, as the C conversion does: not an error.
    with np.errstate(over="ignore"):
        return (np.float64(scale) * (np.asarray(q, np.int64) - zero_point)).astype(np.float32)
