/* th_dw_conv_s4: DEPTHWISE_CONV_2D with packed int4 filters (th_nn_s4.h; one row of KH*KW
 * taps per output channel): per output pixel and input channel, its taps staged as int16,
 * then the ch_mult output channels of that input channel, two per dot product pass. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_s4.h"

int32_t th_dw_conv_s4_scratch_size(const th_dw_conv_params *params, const th_dims *input_dims,
                                   const th_dims *filter_dims, const th_dims *output_dims)
{
    (void)params;
    (void)input_dims;
    (void)output_dims;
    return filter_dims == NULL ? 0 : 2 * th_s4_round_up8(filter_dims->h * filter_dims->w);
}

th_status th_dw_conv_s4(const th_context *ctx, const th_dw_conv_params *params,
                        const th_per_channel_quant *quant, const th_dims *input_dims,
                        const int8_t *input, const th_dims *filter_dims, const uint8_t *filter,
                        const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    th_status status = th_nn_check_dw(params, quant, input_dims, input, filter_dims,
                                      (const int8_t *)filter, output_dims, output);
    if (status != TH_OK) {
        return status;
    }
    const int32_t in_h = input_dims->h, in_w = input_dims->w, cin = input_dims->c;
    const int32_t k_h = filter_dims->h, k_w = filter_dims->w, cout = output_dims->c;
    const int32_t mult = params->ch_mult;
    if ((int64_t)k_h * k_w > TH_S4_MAX_K) {
        return TH_ERR_UNSUPPORTED;
    }
    const int32_t kp = th_s4_round_up8(k_h * k_w);
    status = th_nn_check_scratch(ctx, 2 * kp);
    if (status != TH_OK) {
        return status;
    }
    int16_t *col = (int16_t *)ctx->buf;
    for (int32_t k = k_h * k_w; k < kp; k++) {
        col[k] = 0;
    }
    int8_t *y = output;
    for (int32_t b = 0; b < output_dims->n; b++) {
        const int8_t *in_b = input + (int64_t)b * in_h * in_w * cin;
        for (int32_t oy = 0; oy < output_dims->h; oy++) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            for (int32_t ox = 0; ox < output_dims->w; ox++) {
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                /* Interior pixels (the whole window inside) read without bound checks. */
                const int interior = y0 >= 0 && y0 + (k_h - 1) * params->dilation.h < in_h &&
                                     x0 >= 0 && x0 + (k_w - 1) * params->dilation.w < in_w;
                const int64_t row_step = (int64_t)params->dilation.h * in_w * cin;
                const int64_t col_step = (int64_t)params->dilation.w * cin;
                for (int32_t ic = 0; ic < cin; ic++) {
                    int32_t k = 0;
                    if (interior) {
                        const int8_t *row = in_b + ((int64_t)y0 * in_w + x0) * cin + ic;
                        for (int32_t ky = 0; ky < k_h; ky++, row += row_step) {
                            for (int32_t kx = 0; kx < k_w; kx++, k++) {
                                col[k] = (int16_t)(row[kx * col_step] + params->input_offset);
                            }
                        }
                    }
                    for (int32_t ky = 0; ky < k_h && !interior; ky++) {
                        const int32_t iy = y0 + ky * params->dilation.h;
                        for (int32_t kx = 0; kx < k_w; kx++, k++) {
                            const int32_t ix = x0 + kx * params->dilation.w;
                            const int inside = iy >= 0 && iy < in_h && ix >= 0 && ix < in_w;
                            col[k] =
                                (int16_t)(inside ? in_b[((int64_t)iy * in_w + ix) * cin + ic] +
                                                       params->input_offset
                                                 : 0);
                        }
                    }
                    th_nn_s4_channels(col, filter, kp, ic * mult, mult, bias, quant,
                                      params->output_offset, &params->activation, y);
                }
                y += cout;
            }
        }
    }
    return TH_OK;
}
