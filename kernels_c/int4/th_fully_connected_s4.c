/* th_fully_connected_s4: FULLY_CONNECTED with packed int4 weights (th_nn_s4.h). */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_s4.h"

int32_t th_fully_connected_s4_scratch_size(const th_fc_params *params,
                                           const th_dims *input_dims,
                                           const th_dims *filter_dims)
{
    (void)params;
    (void)input_dims;
    return filter_dims == NULL ? 0 : 2 * th_s4_round_up8(filter_dims->c);
}

th_status th_fully_connected_s4(const th_context *ctx, const th_fc_params *params,
                                const th_per_channel_quant *quant, const th_dims *input_dims,
                                const int8_t *input, const th_dims *filter_dims,
                                const uint8_t *filter, const int32_t *bias,
                                const th_dims *output_dims, int8_t *output)
{
    if (quant == NULL || filter_dims == NULL) {
        return TH_ERR_ARG;
    }
    th_status status =
        th_nn_check_fc(params, quant->multiplier, quant->shift, filter_dims->n, input_dims,
                       input, filter_dims, (const int8_t *)filter, output_dims, output);
    if (status != TH_OK) {
        return status;
    }
    const int32_t cin = filter_dims->c, cout = filter_dims->n, kp = th_s4_round_up8(cin);
    if (params->filter_offset != 0 || cin > TH_S4_MAX_K) {
        return TH_ERR_UNSUPPORTED; /* int4 weights are symmetric (TFLM) */
    }
    status = th_nn_check_scratch(ctx, 2 * kp);
    if (status != TH_OK) {
        return status;
    }
    int16_t *col = (int16_t *)ctx->buf;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *x = input + (int64_t)b * cin;
        for (int32_t k = 0; k < cin; k++) {
            col[k] = (int16_t)(x[k] + params->input_offset);
        }
        for (int32_t k = cin; k < kp; k++) {
            col[k] = 0;
        }
        th_nn_s4_channels(col, filter, kp, 0, cout, bias, quant, params->output_offset,
                          &params->activation, output + (int64_t)b * cout);
    }
    return TH_OK;
}
