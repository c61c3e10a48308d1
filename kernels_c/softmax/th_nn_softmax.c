/* th_nn_softmax: int8 SOFTMAX as TFLite Micro's reference (SoftmaxInt8LUT is not used by
 * TFLM for int8 input; its reference path is this one). Per row: the difference to the row
 * maximum, rescaled to Q5.26 (beta folded into the multiplier), goes through gemmlowp's
 * exp_on_negative_values; the exps are summed in Q12.19; the sum is inverted with
 * GetReciprocal (one_over_one_plus_x after normalizing); each output is
 * exp * reciprocal rounded to Q0.8 (int8, - 128) or Q0.16 (int16, - 32768). Differences
 * below diff_min give the minimum output and are left out of the sum.
 * The gemmlowp functions below follow host/tinyhost/arith/gemmlowp.py line by line. */
#include <stddef.h>

#include "../reshape/th_nn_shape.h"
#include "th_nn_softmax.h"
#include "th_nn_support.h"

#define SCALED_DIFF_INTEGER_BITS 5
#define ACCUMULATION_INTEGER_BITS 12

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
    static const int32_t exp_of_minus_pot[7] = {
        1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242,
    }; /* exp(-2^e), e = -2 .. 4 (const data in flash, not state) */
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
