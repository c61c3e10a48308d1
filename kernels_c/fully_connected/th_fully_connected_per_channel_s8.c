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
    (void)ctx;
    if (quant == NULL || filter_dims == NULL) {
        return TH_ERR_ARG;
    }
    const th_status status =
        th_nn_check_fc(params, quant->multiplier, quant->shift, filter_dims->n, input_dims,
                       input, filter_dims, filter, output_dims, output);
    if (status != TH_OK) {
        return status;
    }
    if (params->filter_offset != 0) {
        return TH_ERR_UNSUPPORTED; /* TFLM ignores it per channel; refuse, don't guess */
    }
    th_nn_fc_s8(params, quant->multiplier, quant->shift, 1, input_dims, input, filter_dims,
                filter, bias, output_dims, output);
    return TH_OK;
}
