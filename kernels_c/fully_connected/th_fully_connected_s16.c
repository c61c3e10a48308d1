/* th_fully_connected_s16: 16x8 FULLY_CONNECTED as TFLite Micro's reference kernel: int16
 * input, int8 weights [Cout, Cin] (plain layout in every build), int64 bias, int64
 * accumulation, per-channel requantization (th_requantize_s64), int16 output. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

th_status th_fully_connected_s16(const th_context *ctx, const th_fc_params *params,
                                 const th_per_channel_quant *quant, const th_dims *input_dims,
                                 const int16_t *input, const th_dims *filter_dims,
                                 const int8_t *filter, const int64_t *bias,
                                 const th_dims *output_dims, int16_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || input_dims == NULL || input == NULL ||
        filter_dims == NULL || filter == NULL || output_dims == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    const int32_t batches = input_dims->n, cin = input_dims->c, cout = filter_dims->n;
    if (batches <= 0 || cin <= 0 || cout <= 0 || filter_dims->c != cin ||
        output_dims->n != batches || output_dims->c != cout) {
        return TH_ERR_ARG;
    }
    if (params->filter_offset != 0 ||
        !th_nn_s16_quant_ok(params->input_offset, params->output_offset, &params->activation,
                            quant, cout)) {
        return TH_ERR_UNSUPPORTED;
    }
    for (int32_t b = 0; b < batches; b++) {
        const int16_t *x = input + (size_t)b * (size_t)cin;
        for (int32_t oc = 0; oc < cout; oc++) {
            const int8_t *w = filter + (size_t)oc * (size_t)cin;
            int64_t acc = th_dot_s16_s8(x, w, cin);
            if (bias != NULL) {
                acc = th_add_wrap64(acc, bias[oc]);
            }
            output[(size_t)b * (size_t)cout + (size_t)oc] =
                th_out_s16(acc, quant->multiplier[oc], quant->shift[oc], &params->activation);
        }
    }
    return TH_OK;
}
