/* th_conv_s4: CONV_2D (no groups) with packed int4 filters (th_nn_s4.h): one int16 im2col
 * column per output pixel, then two output channels per dot product pass. */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_s4.h"

int32_t th_conv_s4_scratch_size(const th_conv_params *params, const th_dims *input_dims,
                                const th_dims *filter_dims, const th_dims *output_dims)
{
    (void)params;
    (void)input_dims;
    (void)output_dims;
    if (filter_dims == NULL) {
        return 0;
    }
    return 2 * th_s4_round_up8(filter_dims->h * filter_dims->w * filter_dims->c);
}

th_status th_conv_s4(const th_context *ctx, const th_conv_params *params,
                     const th_per_channel_quant *quant, const th_dims *input_dims,
                     const int8_t *input, const th_dims *filter_dims, const uint8_t *filter,
                     const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    th_status status = th_nn_check_conv(params, quant, input_dims, input, filter_dims,
                                        (const int8_t *)filter, output_dims, output, 0);
    if (status != TH_OK) {
        return status;
    }
    const int32_t in_h = input_dims->h, in_w = input_dims->w, cin = input_dims->c;
    const int32_t k_h = filter_dims->h, k_w = filter_dims->w, cout = output_dims->c;
    const int64_t k_total = (int64_t)k_h * k_w * cin;
    if (k_total > TH_S4_MAX_K) {
        return TH_ERR_UNSUPPORTED;
    }
    const int32_t kp = th_s4_round_up8((int32_t)k_total);
    status = th_nn_check_scratch(ctx, 2 * kp);
    if (status != TH_OK) {
        return status;
    }
    int16_t *col = (int16_t *)ctx->buf;
    int8_t *y = output;
    for (int32_t b = 0; b < output_dims->n; b++) {
        const int8_t *in_b = input + (int64_t)b * in_h * in_w * cin;
        for (int32_t oy = 0; oy < output_dims->h; oy++) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            for (int32_t ox = 0; ox < output_dims->w; ox++) {
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                int16_t *dst = col;
                for (int32_t ky = 0; ky < k_h; ky++) {
                    const int32_t iy = y0 + ky * params->dilation.h;
                    for (int32_t kx = 0; kx < k_w; kx++, dst += cin) {
                        const int32_t ix = x0 + kx * params->dilation.w;
                        if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) {
                            memset(dst, 0, (size_t)cin * sizeof *dst);
                            continue;
                        }
                        const int8_t *px = in_b + ((int64_t)iy * in_w + ix) * cin;
                        for (int32_t ic = 0; ic < cin; ic++) {
                            dst[ic] = (int16_t)(px[ic] + params->input_offset);
                        }
                    }
                }
                memset(dst, 0, (size_t)(kp - k_total) * sizeof *dst);
                th_nn_s4_channels(col, filter, kp, 0, cout, bias, quant,
                                  params->output_offset, &params->activation, y);
                y += cout;
            }
        }
    }
    return TH_OK;
}
