/* th_depth_to_space_s8: DEPTH_TO_SPACE (NHWC int8), runs of block * C_out bytes. */
#include "th_nn_space_depth.h"

th_status th_depth_to_space_s8(const th_context *ctx, int32_t block, const th_dims *input_dims,
                               const int8_t *input, const th_dims *output_dims, int8_t *output)
{
    (void)ctx;
    return th_nn_space_depth(block, input_dims, output_dims, input, output, 1);
}
