/* th_log_softmax_s8: int8 LOG_SOFTMAX over rows as TFLite Micro's reference
 * (host/tinyhost/reference/ops/rowwise.py log_softmax_int8, arith.rowwise):
 * per row, the differences to the row maximum are rescaled to Q5.26, their exps summed in
 * Q12.19 (from the row maximum on: the sum is at least 1.0), the log of the sum taken in Q5.26
 * (log_x_ge_1 below) and subtracted, and the result written in Q4 (scale 1/16) from 127 down.
 * Differences at or below the bound the log-sum-exp scaled back to input units gives (or
 * diff_min - 1) give -128. Reads the whole row before writing it: output == input is safe. */
#include <stddef.h>

#include "th_nn_softmax.h"

#define INPUT_INTEGER_BITS 5
#define ACCUMULATION_INTEGER_BITS 12 /* of the sum th_nn_sum_of_exps returns */
#define OUTPUT_INTEGER_BITS 4
#define LOG_ACCUM_BITS (INPUT_INTEGER_BITS + 1)

/* log(a) for a >= 1 in Q12.19, result in Q5.26: the power of two of a found as is and after
 * a premultiplication by sqrt(1/2), the nearer one kept, then a rational approximation of
 * the log of the rest around 2^-1/4 (gemmlowp.log_x_ge_1, line by line). */
static int32_t log_x_ge_1(int32_t a)
{
    const int32_t log_2 = 1488522236;
    const int32_t sqrt_sqrt_half = 1805811301;
    const int32_t sqrt_half = 1518500250;
    const int32_t alpha_n = 117049297;
    const int32_t alpha_d = 127690142;
    const int32_t alpha_i = 1057819769;
    const int32_t alpha_f = 638450708;
    const int32_t fraction_shift = 31 - LOG_ACCUM_BITS;
    const int32_t shifted_quarter = th_rdbpot(1 << 29, LOG_ACCUM_BITS);

    const int32_t a_headroom_plus_1 = th_clz32((uint32_t)a);
    const int32_t r_a_tmp = th_nn_sat_shift_left(a, a_headroom_plus_1 - 1);
    const int32_t r_a = th_nn_sat_shift_left(th_srdhm(r_a_tmp, sqrt_half), 1);
    int64_t sum = (int64_t)th_nn_sat_shift_left(ACCUMULATION_INTEGER_BITS - a_headroom_plus_1,
                                                fraction_shift) + shifted_quarter;
    const int32_t a_pow_2_adj = (int32_t)TH_MAX(TH_MIN(sum, INT32_MAX), INT32_MIN);

    const int32_t b = th_srdhm(a, sqrt_half);
    const int32_t b_headroom = th_clz32((uint32_t)b) - 1;
    const int32_t r_b = th_nn_sat_shift_left(a, b_headroom);
    sum = (int64_t)th_nn_sat_shift_left(ACCUMULATION_INTEGER_BITS - b_headroom, fraction_shift) -
          shifted_quarter;
    const int32_t b_pow_2_adj = (int32_t)TH_MAX(TH_MIN(sum, INT32_MAX), INT32_MIN);

    const int32_t r = TH_MIN(r_a, r_b);
    const int32_t pow_2_adj = TH_MAX(a_pow_2_adj, b_pow_2_adj);
    const int64_t half_sum = (int64_t)r + sqrt_sqrt_half;
    const int32_t p = (int32_t)((half_sum + (half_sum >= 0 ? 1 : -1)) / 2);
    int32_t q = th_nn_wrap_sub(r, sqrt_sqrt_half);
    q = th_nn_wrap_add(q, q);
    const int32_t q_squared = th_srdhm(q, q);
    const int32_t num =
        th_nn_wrap_add(th_srdhm(q, r), th_srdhm(th_srdhm(q, q_squared), alpha_n));
    const int32_t denom_minus_one = th_nn_wrap_add(
        th_srdhm(p, th_nn_wrap_add(th_nn_wrap_add(alpha_i, q), th_srdhm(alpha_d, q_squared))),
        th_srdhm(alpha_f, q));
    const int32_t recip_denom = th_nn_one_over_one_plus_x(denom_minus_one);
    const int32_t num_scaled = th_rdbpot(num, LOG_ACCUM_BITS);
    const int32_t total =
        th_nn_wrap_add(th_srdhm(pow_2_adj, log_2), th_srdhm(num_scaled, recip_denom));
    return th_nn_sat_shift_left(total, LOG_ACCUM_BITS - INPUT_INTEGER_BITS);
}

static void log_softmax_row(const th_log_softmax_params *p, const int8_t *in, int32_t n,
                            int8_t *out)
{
    const th_softmax_params sp = {p->input_multiplier, p->input_left_shift, p->diff_min};
    int32_t max;
    const int32_t sum = th_nn_sum_of_exps(&sp, in, n, &max);
    const int32_t log_sum = log_x_ge_1(sum);
    const int32_t bound = th_requantize(th_nn_wrap_add(log_sum, INT32_MIN),
                                        p->reverse_multiplier, p->reverse_shift);
    const int32_t adjusted_diff_min = TH_MAX(p->diff_min - 1, bound);
    for (int32_t i = 0; i < n; i++) {
        const int32_t diff = in[i] - max;
        int32_t v = -128;
        if (diff > adjusted_diff_min) {
            const int32_t scaled = th_requantize(diff, p->input_multiplier, p->input_left_shift);
            v = th_rdbpot(th_nn_wrap_sub(scaled, log_sum),
                          31 - INPUT_INTEGER_BITS - OUTPUT_INTEGER_BITS) + 127;
            v = th_clamp(v, -128, 127);
        }
        out[i] = (int8_t)v;
    }
}

th_status th_log_softmax_s8(const th_context *ctx, const th_log_softmax_params *params,
                            int32_t rows, int32_t depth, const int8_t *input, int8_t *output)
{
    (void)ctx;
    if (params == NULL || input == NULL || output == NULL || rows < 1 || depth < 1 ||
        params->input_left_shift < 0 || params->input_left_shift > 31 ||
        params->input_multiplier < 0 || params->reverse_multiplier < 0 ||
        params->reverse_shift > 0 || params->reverse_shift < -31 || params->diff_min > 0) {
        return TH_ERR_ARG;
    }
    for (int32_t r = 0; r < rows; r++) {
        log_softmax_row(params, input + r * depth, depth, output + r * depth);
    }
    return TH_OK;
}
