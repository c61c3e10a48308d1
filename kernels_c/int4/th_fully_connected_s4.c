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
    const int32_t row_bytes = kp / 2;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *x = input + (int64_t)b * cin;
        int8_t *y = output + (int64_t)b * cout;
        for (int32_t k = 0; k < kp; k++) {
            col[th_s4_slot(k)] = (int16_t)(k < cin ? x[k] + params->input_offset : 0);
        }
        for (int32_t c = 0; c < cout; c += 2) {
            const int32_t pair = c + 1 < cout;
            int32_t acc[2] = {0, 0};
            th_nn_s4_dot(col, filter + (int64_t)c * row_bytes,
                         pair ? filter + (int64_t)(c + 1) * row_bytes : NULL, kp, &acc[0],
                         &acc[1]);
            for (int32_t j = 0; j <= pair; j++) {
                const int32_t a = bias != NULL ? th_add_wrap(acc[j], bias[c + j]) : acc[j];
                y[c + j] = th_out_s8(th_requantize(a, quant->multiplier[c + j],
                                                   quant->shift[c + j]),
                                     params->output_offset, params->activation.min,
                                     params->activation.max);
            }
        }
    }
    return TH_OK;
}
