/* th_fully_connected_s16: 16x8 FULLY_CONNECTED as TFLite Micro's reference kernel: int16
 * input, int8 weights [Cout, Cin] (plain layout in every build), int64 bias, int64
 * accumulation, per-channel requantization (th_requantize_s64), int16 output. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_s16_dsp.h"
#include "th_nn_support.h"

/* Requantized output oc of one batch row from its int64 sum. */
static inline int16_t fc_s16_out(int64_t acc, const th_fc_params *params,
                                 const th_per_channel_quant *quant, const int64_t *bias,
                                 int32_t oc)
{
    if (bias != NULL) {
        acc = th_add_wrap64(acc, th_load_s64(bias, oc));
    }
    return TH_S16_OUT(acc, quant->multiplier[oc], quant->shift[oc], &params->activation);
}

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
        int16_t *y = output + (size_t)b * (size_t)cout;
        int32_t oc = 0;
#if TH_NN_HAS_DSP
        /* four, then two output channels per pass over x (th_nn_s16_dsp.h) */
        for (; oc + 4 <= cout; oc += 4) {
            const int8_t *w = filter + (size_t)oc * (size_t)cin;
            int64_t acc[4] = {0, 0, 0, 0};
            th_s16_dot4(x, w, cin, cin, acc);
            for (int32_t k = 0; k < 4; k++) {
                y[oc + k] = fc_s16_out(acc[k], params, quant, bias, oc + k);
            }
        }
        for (; oc + 2 <= cout; oc += 2) {
            const int8_t *w = filter + (size_t)oc * (size_t)cin;
            int64_t a0 = 0, a1 = 0;
            th_s16_dot2(x, w, w + cin, cin, &a0, &a1);
            y[oc] = fc_s16_out(a0, params, quant, bias, oc);
            y[oc + 1] = fc_s16_out(a1, params, quant, bias, oc + 1);
        }
#endif
        for (; oc < cout; oc++) {
            const int8_t *w = filter + (size_t)oc * (size_t)cin;
            y[oc] = fc_s16_out(th_dot_s16_s8(x, w, cin), params, quant, bias, oc);
        }
    }
    return TH_OK;
}
