/* th_fully_connected_s8: FULLY_CONNECTED with per-tensor requantization. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

int32_t th_fully_connected_s8_scratch_size(const th_fc_params *params,
                                           const th_dims *input_dims,
                                           const th_dims *filter_dims)
{
    (void)params;
    (void)input_dims;
    (void)filter_dims;
    return 0;
}

/* The widened input row of the short-input path for longer inputs (th_nn_fc_s8.c); the
 * per-channel kernel takes the same. */
int32_t th_fully_connected_s8_scratch_size_fast(const th_fc_params *params,
                                                const th_dims *input_dims,
                                                const th_dims *filter_dims)
{
    (void)params;
    (void)input_dims;
    return th_nn_fc_short_scratch(filter_dims);
}

th_status th_fully_connected_s8(const th_context *ctx, const th_fc_params *params,
                                const th_per_tensor_quant *quant, const th_dims *input_dims,
                                const int8_t *input, const th_dims *filter_dims,
                                const int8_t *filter, const int32_t *bias,
                                const th_dims *output_dims, int8_t *output)
{
    /* The same arguments: a branch (th_nn_fc_s8.c checks them). */
    return th_nn_fc_tensor_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                              output_dims, output);
}
