/* th_nn_softmax.h - private: the shared core of th_softmax_s8 and th_softmax_s8_s16, and
 * the gemmlowp functions SOFTMAX and LOG_SOFTMAX share (host/tinyhost/arith/gemmlowp.py). */
#ifndef TH_NN_SOFTMAX_H
#define TH_NN_SOFTMAX_H

#include "th_nn.h"
#include "th_nn_support.h"

/* Longest row whose Q12.19 sum of exps (each <= 2^19) cannot overflow int32. */
#define TH_SOFTMAX_MAX_ROW 4095

/* Exactly one of out8 / out16 is non-NULL. */
th_status th_nn_softmax_s8(const th_softmax_params *params, const th_shape *shape,
                           const int8_t *input, int8_t *out8, int16_t *out16);

TH_INLINE int32_t th_nn_wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

TH_INLINE int32_t th_nn_wrap_sub(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

/* SaturatingRoundingMultiplyByPOT(Param) for exponent in [0, 31] (a saturating left shift). */
TH_INLINE int32_t th_nn_sat_shift_left(int32_t x, int32_t exponent)
{
    if (exponent == 0) {
        return x;
    }
    const int32_t threshold = (int32_t)((UINT32_C(1) << (31 - exponent)) - 1u);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << exponent);
}

/* exp(a) for a <= 0 in Q5.26; result Q0.31. */
int32_t th_nn_exp_on_negative_q5(int32_t a);

/* The row's maximum (*row_max) and its sum of exps in Q12.19 (wrapping): differences to the
 * maximum from diff_min on, rescaled to Q5.26 by (input_multiplier, input_left_shift). */
int32_t th_nn_sum_of_exps(const th_softmax_params *p, const int8_t *in, int32_t n,
                          int32_t *row_max);

/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out. */
int32_t th_nn_one_over_one_plus_x(int32_t a);

#endif /* TH_NN_SOFTMAX_H */
