/* th_nn_conv_ref_s8: CONV_2D as TFLite Micro's reference loops state it (any params). */
#include "th_nn.h"
#include "th_nn_support.h"

void th_nn_conv_ref_s8(const th_conv_params *params, const th_per_channel_quant *quant,
                       const th_dims *input_dims, const int8_t *input,
                       const th_dims *filter_dims, const int8_t *filter, const int32_t *bias,
                       const th_dims *output_dims, int8_t *output)
{
    const int32_t in_h = input_dims->h;
    const int32_t in_w = input_dims->w;
    const int32_t in_c = input_dims->c;
    const int32_t k_h = filter_dims->h;
    const int32_t k_w = filter_dims->w;
    const int32_t group_c = filter_dims->c;
    const int32_t out_c = output_dims->c;
    const int32_t per_group = out_c / (in_c / group_c);
    const int32_t k_total = k_h * k_w * group_c;

    for (int32_t b = 0; b < output_dims->n; b++) {
        const int8_t *in_b = input + (int64_t)b * in_h * in_w * in_c;
        for (int32_t oy = 0; oy < output_dims->h; oy++) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            for (int32_t ox = 0; ox < output_dims->w; ox++) {
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                for (int32_t oc = 0; oc < out_c; oc++) {
                    const int32_t first_in = (oc / per_group) * group_c;
                    int32_t acc = 0;
                    for (int32_t ky = 0; ky < k_h; ky++) {
                        const int32_t y = y0 + ky * params->dilation.h;
                        if (y < 0 || y >= in_h) {
                            continue;
                        }
                        for (int32_t kx = 0; kx < k_w; kx++) {
                            const int32_t x = x0 + kx * params->dilation.w;
                            if (x < 0 || x >= in_w) {
                                continue;
                            }
                            const int8_t *px = in_b + ((int64_t)y * in_w + x) * in_c + first_in;
                            const int32_t k0 = (ky * k_w + kx) * group_c;
                            for (int32_t ic = 0; ic < group_c; ic++) {
                                const int32_t w = filter[th_filter_index(
                                    oc, k0 + ic, k_total, out_c, TH_CONV_BLOCK)];
                                acc = th_add_wrap(acc, (px[ic] + params->input_offset) * w);
                            }
                        }
                    }
                    if (bias != NULL) {
                        acc = th_add_wrap(acc, bias[oc]);
                    }
                    const int32_t rq =
                        th_requantize(acc, quant->multiplier[oc], quant->shift[oc]);
                    output[(((int64_t)b * output_dims->h + oy) * output_dims->w + ox) * out_c +
                           oc] = th_out_s8(rq, params->output_offset, params->activation.min,
                                           params->activation.max);
                }
            }
        }
    }
}
