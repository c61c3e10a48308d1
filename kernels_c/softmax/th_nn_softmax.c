/* th_nn_softmax: int8 SOFTMAX as TFLite Micro's reference (SoftmaxInt8LUT is not used by
 * TFLM for int8 input; its reference path is this one). Per row: the difference to the row
 * maximum, rescaled to Q5.26 (beta folded into the multiplier), goes through gemmlowp's
 * exp_on_negative_values; the exps are summed in Q12.19; the sum is inverted with
 * GetReciprocal (one_over_one_plus_x after normalizing); each output is
 * exp * reciprocal rounded to Q0.8 (int8, - 128) or Q0.16 (int16, - 32768). Differences
 * below diff_min give the minimum output and are left out of the sum.
 * The gemmlowp functions below follow host/tinyhost/arith/gemmlowp.py line by line.
 * MVE builds: the row maximum by VMAXV (16 lanes), the exps four lanes at a time (the same
 * steps on vectors: VQRDMULH is SaturatingRoundingDoublingHighMul exactly, saturation
 * included; RoundingDivideByPOT as th_mve_requantize; VQSHL is the saturating left shift;
 * each bit of exp_on_negative_values' remainder a predicated VQRDMULH), the sum by
 * predicated VADDVA (wrapping, as the reference), the output loop the same way. */
#include <stddef.h>

#include "../reshape/th_nn_shape.h"
#include "th_nn_softmax.h"
#include "th_nn_support.h"

#define SCALED_DIFF_INTEGER_BITS 5
#define ACCUMULATION_INTEGER_BITS 12

/* exp(-2^e), e = -2 .. 4, Q0.31 (const data in flash, not state) */
static const int32_t exp_of_minus_pot[7] = {
    1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242,
};

/* exp(a) for a in [-1/4, 0), Q0.31: Taylor expansion around -1/8. */
static int32_t exp_on_interval(int32_t a)
{
    const int32_t exp_minus_one_eighth = 1895147668;
    const int32_t one_third = 715827883;
    const int32_t x = th_nn_wrap_add(a, 1 << 28);
    const int32_t x2 = th_srdhm(x, x);
    const int32_t x3 = th_srdhm(x2, x);
    const int32_t x4 = th_srdhm(x2, x2);
    const int32_t x4_over_4 = th_rdbpot(x4, 2);
    const int32_t poly =
        th_rdbpot(th_nn_wrap_add(th_srdhm(th_nn_wrap_add(x4_over_4, x3), one_third), x2), 1);
    return th_nn_wrap_add(exp_minus_one_eighth,
                          th_srdhm(exp_minus_one_eighth, th_nn_wrap_add(x, poly)));
}

/* exp(a) for a <= 0 in Q5.26; result Q0.31. */
int32_t th_nn_exp_on_negative_q5(int32_t a)
{
    const int32_t fractional_bits = 31 - SCALED_DIFF_INTEGER_BITS;
    const int32_t one_quarter = 1 << (fractional_bits - 2);
    const int32_t a_mod_quarter_minus_one_quarter =
        th_nn_wrap_sub(a & (one_quarter - 1), one_quarter);
    int32_t result = exp_on_interval(
        th_nn_sat_shift_left(a_mod_quarter_minus_one_quarter, SCALED_DIFF_INTEGER_BITS));
    const int32_t remainder = th_nn_wrap_sub(a_mod_quarter_minus_one_quarter, a);
    for (int32_t e = -2; e <= 4; e++) { /* every e < SCALED_DIFF_INTEGER_BITS */
        if (remainder & (1 << (fractional_bits + e))) {
            result = th_srdhm(result, exp_of_minus_pot[e + 2]);
        }
    }
    return a == 0 ? INT32_MAX : result;
}

/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out: Newton-Raphson in Q2.29. */
int32_t th_nn_one_over_one_plus_x(int32_t a)
{
    const int64_t sum = (int64_t)a + INT32_MAX;
    const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    const int32_t forty_eight_over_17 = 1515870810;
    const int32_t minus_32_over_17 = -1010580540;
    int32_t x =
        th_nn_wrap_add(forty_eight_over_17, th_srdhm(half_denominator, minus_32_over_17));
    for (int i = 0; i < 3; i++) {
        const int32_t one_minus = th_nn_wrap_sub(1 << 29, th_srdhm(half_denominator, x));
        x = th_nn_wrap_add(x, th_nn_sat_shift_left(th_srdhm(x, one_minus), 2));
    }
    return th_nn_sat_shift_left(x, 1);
}

static int32_t scaled_diff(const th_softmax_params *p, int32_t diff)
{
    return th_srdhm((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
}

#if TH_NN_MVE
/* RoundingDivideByPOT by a constant exponent in [1, 31] on four lanes. */
#define MVE_RDBPOT(y, e) vrshrq_n_s32(vqaddq_s32((y), vshrq_n_s32((y), 31)), (e))

/* exp_on_interval on four lanes. */
TH_INLINE int32x4_t mve_exp_on_interval(int32x4_t a)
{
    const int32_t exp_minus_one_eighth = 1895147668;
    const int32_t one_third = 715827883;
    const int32x4_t x = vaddq_n_s32(a, 1 << 28);
    const int32x4_t x2 = vqrdmulhq_s32(x, x);
    const int32x4_t x3 = vqrdmulhq_s32(x2, x);
    const int32x4_t x4 = vqrdmulhq_s32(x2, x2);
    const int32x4_t x4_over_4 = MVE_RDBPOT(x4, 2);
    const int32x4_t inner = vaddq_s32(vqrdmulhq_n_s32(vaddq_s32(x4_over_4, x3), one_third), x2);
    const int32x4_t poly = MVE_RDBPOT(inner, 1);
    const int32x4_t e = vdupq_n_s32(exp_minus_one_eighth);
    return vaddq_s32(e, vqrdmulhq_s32(e, vaddq_s32(x, poly)));
}

/* th_nn_exp_on_negative_q5 on four lanes (a <= 0, Q5.26). Bit fractional_bits + e of the
 * remainder (e = -2 .. 4) is moved to the sign by a left shift of 5 - e; where it is set,
 * the result is multiplied by exp(-2^e) (a predicated VQRDMULH). */
#define MVE_EXP_BIT(e)                                                                        \
    result = vqrdmulhq_m_n_s32(result, result, exp_of_minus_pot[(e) + 2],                     \
                               vcmpltq_n_s32(vshlq_n_s32(remainder, 5 - (e)), 0))
TH_INLINE int32x4_t mve_exp_on_negative_q5(int32x4_t a)
{
    const int32_t fractional_bits = 31 - SCALED_DIFF_INTEGER_BITS;
    const int32_t one_quarter = 1 << (fractional_bits - 2);
    const int32x4_t aq = vsubq_s32(vandq_s32(a, vdupq_n_s32(one_quarter - 1)),
                                   vdupq_n_s32(one_quarter));
    int32x4_t result = mve_exp_on_interval(vqshlq_n_s32(aq, SCALED_DIFF_INTEGER_BITS));
    const int32x4_t remainder = vsubq_s32(aq, a);
    MVE_EXP_BIT(-2);
    MVE_EXP_BIT(-1);
    MVE_EXP_BIT(0);
    MVE_EXP_BIT(1);
    MVE_EXP_BIT(2);
    MVE_EXP_BIT(3);
    MVE_EXP_BIT(4);
    return vpselq_s32(vdupq_n_s32(INT32_MAX), result, vcmpeqq_n_s32(a, 0));
}
#undef MVE_EXP_BIT

/* The exps of (in[i..i+3] - max) (lanes of p), and in *used the lanes whose difference is
 * at least diff_min. */
TH_INLINE int32x4_t mve_exps(const th_softmax_params *p, const int8_t *in, mve_pred16_t pred,
                             int32_t max, mve_pred16_t *used)
{
    const int32x4_t diff = vsubq_n_s32(vldrbq_z_s32(in, pred), max);
    *used = vcmpgeq_m_n_s32(diff, p->diff_min, pred);
    const int32x4_t scaled = vqrdmulhq_n_s32(vshlq_r_s32(diff, p->input_left_shift),
                                             p->input_multiplier);
    return mve_exp_on_negative_q5(scaled);
}

static int8_t mve_row_max(const int8_t *in, int32_t n)
{
    int8_t max = in[0];
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        max = vmaxvq_s8(max, vldrbq_s8(in + i));
    }
    if (i < n) {
        const mve_pred16_t p = vctp8q((uint32_t)(n - i));
        max = vmaxvq_p_s8(max, vldrbq_z_s8(in + i, p), p);
    }
    return max;
}

int32_t th_nn_sum_of_exps(const th_softmax_params *p, const int8_t *in, int32_t n,
                          int32_t *row_max)
{
    const int32_t max = mve_row_max(in, n);
    int32_t sum = 0;
    for (int32_t i = 0; i < n; i += 4) {
        mve_pred16_t used;
        const int32x4_t e = mve_exps(p, in + i, vctp32q((uint32_t)(n - i)), max, &used);
        sum = vaddvaq_p_s32(sum, MVE_RDBPOT(e, ACCUMULATION_INTEGER_BITS), used);
    }
    *row_max = max;
    return sum;
}

/* The output loop of softmax_row: zero + RDBPOT(SRDHM(reciprocal, exp), exponent) where the
 * difference is used (exponent in [1, 31]; the product is >= 0, so only the upper clamp
 * can apply), else zero; zero = -128 (int8, out8) or -32768 (int16, out16). */
TH_INLINE void mve_out_t(const th_softmax_params *p, const int8_t *in, int32_t n,
                        int32_t max, int32_t reciprocal, int32_t exponent, int8_t *out8,
                        int16_t *out16, int wide)
{
    const int32_t zero = wide ? -32768 : -128;
    const int32x4_t top = vdupq_n_s32(wide ? 32767 : 127);
    for (int32_t i = 0; i < n; i += 4) {
        const mve_pred16_t pred = vctp32q((uint32_t)(n - i));
        mve_pred16_t used;
        const int32x4_t e = mve_exps(p, in + i, pred, max, &used);
        int32x4_t y = vqrdmulhq_n_s32(e, reciprocal);
        y = vrshlq_n_s32(vqaddq_s32(y, vshrq_n_s32(y, 31)), -exponent);
        y = vminq_s32(vpselq_s32(vaddq_n_s32(y, zero), vdupq_n_s32(zero), used), top);
        if (wide) {
            vstrhq_p_s32(out16 + i, y, pred);
        } else {
            vstrbq_p_s32(out8 + i, y, pred);
        }
    }
}

/* mve_out_t with the output type a constant (one loop each). */
static void mve_out(const th_softmax_params *p, const int8_t *in, int32_t n, int32_t max,
                    int32_t reciprocal, int32_t exponent, int8_t *out8, int16_t *out16)
{
    if (out8 != NULL) {
        mve_out_t(p, in, n, max, reciprocal, exponent, out8, NULL, 0);
    } else {
        mve_out_t(p, in, n, max, reciprocal, exponent, NULL, out16, 1);
    }
}
#else
int32_t th_nn_sum_of_exps(const th_softmax_params *p, const int8_t *in, int32_t n,
                          int32_t *row_max)
{
    int32_t max = in[0];
    for (int32_t i = 1; i < n; i++) {
        max = in[i] > max ? in[i] : max;
    }
    int32_t sum = 0;
    for (int32_t i = 0; i < n; i++) {
        const int32_t diff = in[i] - max;
        if (diff >= p->diff_min) {
            const int32_t e = th_nn_exp_on_negative_q5(scaled_diff(p, diff));
            sum = th_nn_wrap_add(sum, th_rdbpot(e, ACCUMULATION_INTEGER_BITS));
        }
    }
    *row_max = max;
    return sum;
}
#endif

static void softmax_row(const th_softmax_params *p, const int8_t *in, int32_t n, int8_t *out8,
                        int16_t *out16)
{
    int32_t max;
    const int32_t sum = th_nn_sum_of_exps(p, in, n, &max);
    /* GetReciprocal: sum > 0 (the maximum contributes 2^19) and < 2^31 (row limit). */
    const int32_t headroom_plus_one = th_clz32((uint32_t)sum);
    const int32_t num_bits_over_unit = ACCUMULATION_INTEGER_BITS - headroom_plus_one;
    const int32_t shifted_minus_one =
        (int32_t)(((uint32_t)sum << headroom_plus_one) - UINT32_C(0x80000000));
    const int32_t reciprocal = th_nn_one_over_one_plus_x(shifted_minus_one);
    const int32_t exponent = num_bits_over_unit + 31 - (out8 != NULL ? 8 : 16);
#if TH_NN_MVE
    if (exponent <= 31) {
        mve_out(p, in, n, max, reciprocal, exponent, out8, out16);
        return;
    }
#endif
    for (int32_t i = 0; i < n; i++) {
        const int32_t diff = in[i] - max;
        int32_t v = out8 != NULL ? -128 : -32768;
        if (diff >= p->diff_min) {
            const int32_t e = th_nn_exp_on_negative_q5(scaled_diff(p, diff));
            /* exponent > 31 (int8 rows of 512+ near-max values): every product is
             * < 2^31 and rounds to 0, as the reference defines it (TFLM's
             * RoundingDivideByPOT leaves it undefined) */
            v += exponent > 31 ? 0 : th_rdbpot(th_srdhm(reciprocal, e), exponent);
        }
        if (out8 != NULL) {
            out8[i] = (int8_t)th_clamp(v, -128, 127);
        } else {
            out16[i] = (int16_t)th_clamp(v, -32768, 32767);
        }
    }
}

th_status th_nn_softmax_s8(const th_softmax_params *params, const th_shape *shape,
                           const int8_t *input, int8_t *out8, int16_t *out16)
{
    if (params == NULL || input == NULL || (out8 == NULL && out16 == NULL)) {
        return TH_ERR_ARG;
    }
    const int32_t count = th_nn_shape_count(shape);
    if (count < 0 || params->input_left_shift < 0 || params->input_left_shift > 31 ||
        params->input_multiplier < 0 || params->diff_min > 0) {
        return TH_ERR_ARG;
    }
    const int32_t depth = shape->dims[shape->rank - 1];
    if (depth > TH_SOFTMAX_MAX_ROW) {
        return TH_ERR_UNSUPPORTED;
    }
    for (int32_t r = 0; r < count / depth; r++) {
        softmax_row(params, input + r * depth, depth, out8 != NULL ? out8 + r * depth : NULL,
                    out16 != NULL ? out16 + r * depth : NULL);
    }
    return TH_OK;
}
