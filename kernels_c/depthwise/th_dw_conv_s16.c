/* th_dw_conv_s16: 16x8 DEPTHWISE_CONV_2D as TFLite Micro's reference kernel: int16 NHWC
 * input, int8 filter (1, KH, KW, Cin * ch_mult), int64 bias, int64 accumulation over the
 * taps inside the input (found once per output pixel), per-channel requantization
 * (th_requantize_s64). Output channel c * ch_mult + m reads input channel c. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

th_status th_dw_conv_s16(const th_context *ctx, const th_dw_conv_params *params,
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
    const th_dims in = *input_dims, f = *filter_dims, out = *output_dims;
    const int32_t mult = params->ch_mult;
    if (in.n <= 0 || in.h <= 0 || in.w <= 0 || in.c <= 0 || mult < 1 || f.h <= 0 || f.w <= 0 ||
        f.c != in.c * mult || out.n != in.n || out.h <= 0 || out.w <= 0 || out.c != f.c ||
        params->stride.h < 1 || params->stride.w < 1 || params->dilation.h < 1 ||
        params->dilation.w < 1 || params->padding.h < 0 || params->padding.w < 0) {
        return TH_ERR_ARG;
    }
    if (!th_nn_s16_quant_ok(params->input_offset, params->output_offset, &params->activation,
                            quant, out.c)) {
        return TH_ERR_UNSUPPORTED;
    }
    const int32_t dh = params->dilation.h, dw = params->dilation.w;
    const size_t xstep = (size_t)dw * (size_t)in.c; /* next tap along a row */
    int16_t *y = output;
    for (int32_t b = 0; b < in.n; b++) {
        const int16_t *plane = input + (size_t)b * (size_t)in.h * (size_t)in.w * (size_t)in.c;
        for (int32_t oy = 0; oy < out.h; oy++) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            int32_t ky0, ky1;
            th_nn_tap_range(y0, f.h, dh, in.h, &ky0, &ky1);
            for (int32_t ox = 0; ox < out.w; ox++) {
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                int32_t kx0, kx1;
                th_nn_tap_range(x0, f.w, dw, in.w, &kx0, &kx1);
                for (int32_t oc = 0; oc < out.c; oc++) {
                    const int32_t ic = oc / mult;
                    int64_t acc = 0;
                    for (int32_t ky = ky0; kx0 < kx1 && ky < ky1; ky++) {
                        const int16_t *xp =
                            plane + ((size_t)(y0 + ky * dh) * (size_t)in.w +
                                     (size_t)(x0 + kx0 * dw)) * (size_t)in.c + (size_t)ic;
                        const int8_t *wp =
                            filter + ((size_t)ky * (size_t)f.w + (size_t)kx0) * (size_t)f.c +
                            (size_t)oc;
                        for (int32_t kx = kx0; kx < kx1; kx++) {
                            acc += (int32_t)*xp * *wp;
                            xp += xstep;
                            wp += f.c;
                        }
                    }
                    if (bias != NULL) {
                        acc = th_add_wrap64(acc, bias[oc]);
                    }
                    *y++ = th_out_s16(acc, quant->multiplier[oc], quant->shift[oc],
                                      &params->activation);
                }
            }
        }
    }
    return TH_OK;
}
