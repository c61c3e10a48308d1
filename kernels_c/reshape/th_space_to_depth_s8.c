/* th_space_to_depth_s8: SPACE_TO_DEPTH (NHWC int8), runs of block * C_in bytes. */
#include "th_nn_space_depth.h"

th_status th_space_to_depth_s8(const th_context *ctx, int32_t block, const th_dims *input_dims,
                               const int8_t *input, const th_dims *output_dims, int8_t *output)
{
    (void)ctx;
    return th_nn_space_depth(block, output_dims, input_dims, input, output, 0);
}
