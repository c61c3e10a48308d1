/* th_minimum_s8: int8 MINIMUM (th_nn_min_max_s8). */
#include "th_nn_min_max_s8.h"

th_status th_minimum_s8(const th_context *ctx, const th_shape *input1_shape,
                        const int8_t *input1, const th_shape *input2_shape,
                        const int8_t *input2, const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    return th_nn_min_max_s8(input1_shape, input1, input2_shape, input2, output_shape, output, 0);
}
