"""gemmlowp's fixed-point math as TFLite Micro uses it, vectorized over NumPy arrays.

A FixedPoint<int32, k> value ("Qk.(31-k)") is carried as its raw int32 in an int64 array; the
number of integer bits `k` is passed explicitly where the C++ template has it as a parameter.
Every function takes and returns int64 arrays holding int32 values (int16 for the `*_int16`
helpers used by HARD_SWISH) and reproduces the C++ results bit for bit, including C's
truncating division, arithmetic shifts and two's-complement wrap-around of plain additions.
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.fixedpoint import (
    INT32_MAX,
    INT32_MIN,
    ArrayLike,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    wrap_int32,
)

INT16_MIN = -(1 << 15)
INT16_MAX = (1 << 15) - 1

# Raw constants of the C++ code (FixedPoint<int32, 0> unless noted).
_EXP_MINUS_ONE_EIGHTH = 1895147668  # exp(-1/8)
_ONE_THIRD = 715827883
_FORTY_EIGHT_OVER_17 = 1515870810  # Q2.29
_MINUS_32_OVER_17 = -1010580540  # Q2.29
# exp(-2**e) for the barrel shifter of exp_on_negative_values, e = -2 .. 4.
_EXP_OF_MINUS_POT = {
    -2: 1672461947,
    -1: 1302514674,
    0: 790015084,
    1: 290630308,
    2: 39332535,
    3: 720401,
    4: 242,
}


def _i64(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, np.int64)


def one(integer_bits: int) -> int:
    """FixedPoint<int32, k>::One(): 1.0, or the largest value below it when k == 0."""
    return INT32_MAX if integer_bits == 0 else 1 << (31 - integer_bits)


def add(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """FixedPoint '+' on int32: a plain addition that wraps on overflow."""
    return wrap_int32(_i64(a) + _i64(b))


def sub(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    return wrap_int32(_i64(a) - _i64(b))


def neg(a: ArrayLike) -> np.ndarray:
    return wrap_int32(-_i64(a))


def mul(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """FixedPoint '*': integer bits add up, raw values go through SRDHM."""
    return saturating_rounding_doubling_high_mul(a, b)


def rounding_half_sum(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """(a + b) / 2 rounded half away from zero, computed in 64 bits as the C++ does."""
    total = _i64(a) + _i64(b)
    nudged = total + np.where(total >= 0, 1, -1)
    return np.where(nudged >= 0, nudged // 2, -((-nudged) // 2))


def saturating_rounding_multiply_by_pot(x: ArrayLike, exponent: int) -> np.ndarray:
    """x * 2**exponent: saturating left shift for exponent > 0, rounding right shift below."""
    x = _i64(x)
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    shifted = np.clip(x << exponent, INT32_MIN, INT32_MAX)
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, shifted))


def rescale(x: ArrayLike, src_integer_bits: int, dst_integer_bits: int) -> np.ndarray:
    """Rescale<dst>(FixedPoint<int32, src>): change the integer bits, saturating/rounding."""
    return saturating_rounding_multiply_by_pot(x, src_integer_bits - dst_integer_bits)


def exp_on_interval_between_negative_one_quarter_and_0_excl(a: ArrayLike) -> np.ndarray:
    """exp(a) for a in [-1/4, 0), Q0.31 in and out: Taylor expansion around -1/8."""
    x = add(a, 1 << 28)  # a + 1/8
    x2 = mul(x, x)
    x3 = mul(x2, x)
    x4 = mul(x2, x2)
    x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2)
    poly = saturating_rounding_multiply_by_pot(
        add(mul(add(x4_over_4, x3), _ONE_THIRD), x2), -1
    )
    return add(_EXP_MINUS_ONE_EIGHTH, mul(_EXP_MINUS_ONE_EIGHTH, add(x, poly)))


def exp_on_negative_values(a: ArrayLike, integer_bits: int) -> np.ndarray:
    """exp(a) for a <= 0 given in Q`integer_bits`; result in Q0.31."""
    a = _i64(a)
    fractional_bits = 31 - integer_bits
    one_quarter = 1 << (fractional_bits - 2)
    a_mod_quarter_minus_one_quarter = sub(a & (one_quarter - 1), one_quarter)
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        rescale(a_mod_quarter_minus_one_quarter, integer_bits, 0)
    )
    remainder = sub(a_mod_quarter_minus_one_quarter, a)
    # Multiply in exp(-2**e) for each power of two set in the whole-quarters part of -a.
    for exponent, multiplier in _EXP_OF_MINUS_POT.items():
        if integer_bits > exponent:
            bit = 1 << (fractional_bits + exponent)
            result = np.where(remainder & bit, mul(result, multiplier), result)
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))  # -32.0
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, one(0), result)


def _newton_raphson_reciprocal_q2(a: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Shared core of the two divisions: x ~= 1 / ((1 + a) / 2) in Q2.29 after 3 steps."""
    half_denominator = rounding_half_sum(a, one(0))
    x = add(_FORTY_EIGHT_OVER_17, mul(half_denominator, _MINUS_32_OVER_17))
    for _ in range(3):
        one_minus_half_denominator_times_x = sub(one(2), mul(half_denominator, x))
        x = add(x, rescale(mul(x, one_minus_half_denominator_times_x), 4, 2))
    return x, half_denominator


def one_over_one_plus_x_for_x_in_0_1(a: ArrayLike) -> np.ndarray:
    """1 / (1 + a) for a in [0, 1) in Q0.31."""
    x, _ = _newton_raphson_reciprocal_q2(a)
    return rescale(x, 1, 0)  # ExactMulByPot<-1> turns Q2 into Q1 without touching raw bits


def one_minus_x_over_one_plus_x_for_x_in_0_1(a: ArrayLike) -> np.ndarray:
    """(1 - a) / (1 + a) for a in [0, 1) in Q0.31."""
    x, _ = _newton_raphson_reciprocal_q2(a)
    return rescale(sub(x, one(2)), 2, 0)


def logistic(a: ArrayLike, integer_bits: int) -> np.ndarray:
    """1 / (1 + exp(-a)) for a in Q`integer_bits`; result in Q0.31."""
    a = _i64(a)
    positive = a > 0
    abs_input = np.where(positive, a, neg(a))
    result_if_positive = one_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(neg(abs_input), integer_bits)
    )
    result_if_negative = sub(one(0), result_if_positive)
    result = np.where(positive, result_if_positive, result_if_negative)
    return np.where(a == 0, 1 << 30, result)


def tanh(a: ArrayLike, integer_bits: int) -> np.ndarray:
    """tanh(a) for a in Q`integer_bits`; result in Q0.31."""
    a = _i64(a)
    negative = a < 0
    n = np.where(negative, a, neg(a))
    # -tanh(n) for n <= 0 is (1 - exp(2n)) / (1 + exp(2n)); 2n is n read with one more bit.
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))
    return np.where(a == 0, 0, np.where(negative, neg(t), t))


def count_leading_zeros_u32(x: ArrayLike) -> np.ndarray:
    """Leading zero bits of x read as uint32 (32 for 0)."""
    original = _i64(x) & 0xFFFFFFFF
    u = original
    bits = np.zeros(u.shape, np.int64)
    # Binary search: shift the top set bit up to bit 31, counting the shift.
    for width in (16, 8, 4, 2, 1):
        top_bits_clear = u < (1 << (32 - width))
        bits = np.where(top_bits_clear, bits + width, bits)
        u = np.where(top_bits_clear, u << width, u)
    return np.where(original == 0, 32, bits)


def get_reciprocal(x: ArrayLike, x_integer_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLite's GetReciprocal: (1 / x scaled into Q0.31, num_bits_over_unit), x > 0."""
    x = _i64(x)
    headroom_plus_one = count_leading_zeros_u32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = ((x & 0xFFFFFFFF) << headroom_plus_one) & 0xFFFFFFFF
    shifted_sum_minus_one = wrap_int32(shifted - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit


# -- int16 helpers (HARD_SWISH); values are int16 held in int64 arrays ----------------------


def wrap_int16(x: ArrayLike) -> np.ndarray:
    """Two's-complement wrap to int16, as a store into an int16_t does on our targets."""
    return ((_i64(x) + (1 << 15)) & 0xFFFF) - (1 << 15)


def _trunc_div(x: np.ndarray, divisor: int) -> np.ndarray:
    return np.where(x >= 0, x // divisor, -((-x) // divisor))


def saturating_rounding_doubling_high_mul_int16(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """The int16 SRDHM (VQRDMULH on 16-bit lanes)."""
    a, b = _i64(a), _i64(b)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    high = wrap_int16(_trunc_div(ab + nudge, 1 << 15))
    return np.where((a == b) & (a == INT16_MIN), INT16_MAX, high)


def saturating_doubling_high_mul_int16(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """SQDMULH on 16 bits: like the SRDHM but truncating toward zero instead of rounding."""
    a, b = _i64(a), _i64(b)
    high = wrap_int16(_trunc_div(a * b, 1 << 15))
    return np.where((a == b) & (a == INT16_MIN), INT16_MAX, high)


def rounding_divide_by_pot_int16(x: ArrayLike, exponent: int) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT instantiated for int16_t (every step stored as int16)."""
    x = _i64(x)
    mask = int(wrap_int16((1 << exponent) - 1))
    remainder = wrap_int16(x & mask)
    threshold = wrap_int16((mask >> 1) + (x < 0))
    return wrap_int16((x >> exponent) + (remainder > threshold))


def saturating_left_shift_int16(x: ArrayLike, amount: int) -> np.ndarray:
    return np.clip(_i64(x) << amount, INT16_MIN, INT16_MAX)


# -- log (LOG_SOFTMAX) ---------------------------------------------------------------------

# Raw Q0.31 constants of TFLite's log_x_for_x_greater_than_or_equal_to_1_impl.
_LOG_2 = 1488522236
_SQRT_SQRT_HALF = 1805811301
_SQRT_HALF = 1518500250
_ONE_QUARTER = 1 << 29
_LOG_ALPHA_N = 117049297  # 11/240 * 2**(1/4)
_LOG_ALPHA_D = 127690142  # 1/20 * 2**(1/4)
_LOG_ALPHA_I = 1057819769  # 2 / 2**(1/4) - 2**(1/4)
_LOG_ALPHA_F = 638450708  # 1/4 * 2**(1/4)


def saturating_shift_left(x: ArrayLike, exponent: ArrayLike) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOTParam with a run-time exponent >= 0 (per element)."""
    x, exponent = np.broadcast_arrays(_i64(x), _i64(exponent))
    safe = np.clip(exponent, 0, 31)
    threshold = np.where(safe == 0, INT32_MAX, (np.int64(1) << (31 - safe)) - 1)
    shifted = wrap_int32(x << safe)
    result = np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, shifted))
    return np.where(safe == 0, x, result)


def _saturate_int32(x: np.ndarray) -> np.ndarray:
    return np.clip(x, INT32_MIN, INT32_MAX)


def log_x_ge_1(a: ArrayLike, input_integer_bits: int, output_integer_bits: int) -> np.ndarray:
    """log(a) for a >= 1 given in Q`input_integer_bits`, in Q`output_integer_bits`.

    TFLite's log_x_for_x_greater_than_or_equal_to_1: the input's power of two found twice
    (as is and premultiplied by sqrt(1/2)), the closer one kept, and the log of the remaining
    factor in [2**-1/4, 2**1/4) from a rational approximation around 2**-1/4, accumulated
    with one extra integer bit.
    """
    accum_bits = output_integer_bits + 1
    fraction_shift = 31 - accum_bits
    z_a = _i64(a)
    shifted_quarter = rescale(_ONE_QUARTER, 0, accum_bits)
    z_a_headroom_plus_1 = count_leading_zeros_u32(z_a)
    r_a_tmp = saturating_shift_left(z_a, z_a_headroom_plus_1 - 1)
    r_a = saturating_shift_left(mul(r_a_tmp, _SQRT_HALF), 1)
    z_a_pow_2_adj = _saturate_int32(
        saturating_shift_left(input_integer_bits - z_a_headroom_plus_1, fraction_shift)
        + shifted_quarter
    )
    z_b = mul(z_a, _SQRT_HALF)
    z_b_headroom = count_leading_zeros_u32(z_b) - 1
    r_b = saturating_shift_left(z_a, z_b_headroom)
    z_b_pow_2_adj = _saturate_int32(
        saturating_shift_left(input_integer_bits - z_b_headroom, fraction_shift)
        - shifted_quarter
    )
    r = np.minimum(r_a, r_b)
    z_pow_2_adj = np.maximum(z_a_pow_2_adj, z_b_pow_2_adj)
    p = rounding_half_sum(r, _SQRT_SQRT_HALF)
    q = sub(r, _SQRT_SQRT_HALF)
    q = add(q, q)
    q_squared = mul(q, q)
    num = add(mul(q, r), mul(mul(q, q_squared), _LOG_ALPHA_N))
    denom_minus_one = add(
        mul(p, add(add(_LOG_ALPHA_I, q), mul(_LOG_ALPHA_D, q_squared))), mul(_LOG_ALPHA_F, q)
    )
    recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one)
    num_scaled = rescale(num, 0, accum_bits)
    total = add(mul(z_pow_2_adj, _LOG_2), mul(num_scaled, recip_denom))
    return rescale(total, accum_bits, output_integer_bits)
