/* th_fully_connected_per_channel_s8: FULLY_CONNECTED with per-channel requantization. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

th_status th_fully_connected_per_channel_s8(const th_context *ctx, const th_fc_params *params,
                                            const th_per_channel_quant *quant,
                                            const th_dims *input_dims, const int8_t *input,
                                            const th_dims *filter_dims, const int8_t *filter,
                                            const int32_t *bias, const th_dims *output_dims,
                                            int8_t *output)
{
    /* The same arguments: a branch (th_nn_fc_s8.c checks them; a filter offset is refused,
     * as TFLM ignores it per channel). */
    return th_nn_fc_channel_s8(ctx, params, quant, input_dims, input, filter_dims, filter,
                               bias, output_dims, output);
}
