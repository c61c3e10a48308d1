/* th_nn_dw_conv_ref_s8: DEPTHWISE_CONV_2D one input channel plane at a time (any params).
 *
 * ch_mult == 1: the plane is copied to scratch first, so output channel c may overwrite
 * input channel c (in place, th_nn.h aliasing rule (a)). ch_mult > 1: such an op never
 * runs in place (the output must not overlap the input), so the input is read where it
 * is and no scratch is used (`plane` may be NULL).
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

/* The ch_mult outputs of input channel ic, from its plane at src: value (y, x) at
 * src[(y * W + x) * step]. Inlined at both call sites, so step 1 folds away. */
TH_INLINE void dw_channel(const int8_t *src, int32_t step, int32_t ic,
                          const th_dw_conv_params *params, const th_per_channel_quant *quant,
                          const th_dims *input_dims, const th_dims *filter_dims,
                          const int8_t *filter, const int32_t *bias,
                          const th_dims *output_dims, int8_t *out_b)
{
    const int32_t in_h = input_dims->h;
    const int32_t in_w = input_dims->w;
    const int32_t out_c = output_dims->c;
    for (int32_t m = 0; m < params->ch_mult; m++) {
        const int32_t oc = ic * params->ch_mult + m;
        for (int32_t oy = 0; oy < output_dims->h; oy++) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            for (int32_t ox = 0; ox < output_dims->w; ox++) {
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                int32_t acc = 0;
                for (int32_t ky = 0; ky < filter_dims->h; ky++) {
                    const int32_t y = y0 + ky * params->dilation.h;
                    if (y < 0 || y >= in_h) {
                        continue;
                    }
                    for (int32_t kx = 0; kx < filter_dims->w; kx++) {
                        const int32_t x = x0 + kx * params->dilation.w;
                        if (x < 0 || x >= in_w) {
                            continue;
                        }
                        const int32_t w = filter[(ky * filter_dims->w + kx) * out_c + oc];
                        const int32_t v = src[(y * in_w + x) * step];
                        acc = th_add_wrap(acc, (v + params->input_offset) * w);
                    }
                }
                if (bias != NULL) {
                    acc = th_add_wrap(acc, bias[oc]);
                }
                const int32_t rq = th_requantize(acc, quant->multiplier[oc], quant->shift[oc]);
                out_b[((int64_t)oy * output_dims->w + ox) * out_c + oc] = th_out_s8(
                    rq, params->output_offset, params->activation.min, params->activation.max);
            }
        }
    }
}

void th_nn_dw_conv_ref_s8(int8_t *plane, const th_dw_conv_params *params,
                          const th_per_channel_quant *quant, const th_dims *input_dims,
                          const int8_t *input, const th_dims *filter_dims,
                          const int8_t *filter, const int32_t *bias,
                          const th_dims *output_dims, int8_t *output)
{
    const int32_t in_c = input_dims->c;
    const int32_t plane_size = input_dims->h * input_dims->w;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + (int64_t)b * plane_size * in_c;
        int8_t *out_b = output + (int64_t)b * output_dims->h * output_dims->w * output_dims->c;
        for (int32_t ic = 0; ic < in_c; ic++) {
            if (params->ch_mult == 1) {
                for (int32_t i = 0; i < plane_size; i++) {
                    plane[i] = in_b[(int64_t)i * in_c + ic];
                }
                dw_channel(plane, 1, ic, params, quant, input_dims, filter_dims, filter, bias,
                           output_dims, out_b);
            } else {
                dw_channel(in_b + ic, in_c, ic, params, quant, input_dims, filter_dims, filter,
                           bias, output_dims, out_b);
            }
        }
    }
}
