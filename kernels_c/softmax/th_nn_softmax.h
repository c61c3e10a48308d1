/* th_nn_softmax.h - private: the shared core of th_softmax_s8 and th_softmax_s8_s16. */
#ifndef TH_NN_SOFTMAX_H
#define TH_NN_SOFTMAX_H

#include "th_nn.h"

/* Longest row whose Q12.19 sum of exps (each <= 2^19) cannot overflow int32. */
#define TH_SOFTMAX_MAX_ROW 4095

/* Exactly one of out8 / out16 is non-NULL. */
th_status th_nn_softmax_s8(const th_softmax_params *params, const th_shape *shape,
                           const int8_t *input, int8_t *out8, int16_t *out16);

#endif /* TH_NN_SOFTMAX_H */
