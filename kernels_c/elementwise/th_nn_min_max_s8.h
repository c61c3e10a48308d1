/* th_nn_min_max_s8.h - private: the shared core of th_maximum_s8 and th_minimum_s8. */
#ifndef TH_NN_MIN_MAX_S8_H
#define TH_NN_MIN_MAX_S8_H

#include "th_nn.h"

/* take_max != 0: the larger raw value of each pair, else the smaller. */
th_status th_nn_min_max_s8(const th_shape *input1_shape, const int8_t *input1,
                           const th_shape *input2_shape, const int8_t *input2,
                           const th_shape *output_shape, int8_t *output, int take_max);

#endif /* TH_NN_MIN_MAX_S8_H */
