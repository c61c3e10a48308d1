/* th_arg_min_s8: ARG_MIN of int8 along one axis, int32 indices (th_nn_arg.h). */
#include "th_nn_arg.h"

th_status th_arg_min_s8(const th_context *ctx, const th_arg_params *params, const int8_t *input,
                        int32_t *output)
{
    (void)ctx;
    return th_nn_arg(params, input, output, 0);
}
