/* th_conv_s16: 16x8 CONV_2D as TFLite Micro's reference kernel: int16 NHWC input, int8
 * filter (Cout, KH, KW, Cin) (plain layout in every build), int64 bias, int64 accumulation
 * over the taps inside the input, per-channel requantization (th_requantize_s64). */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

th_status th_conv_s16(const th_context *ctx, const th_conv_params *params,
                      const th_per_channel_quant *quant, const th_dims *input_dims,
                      const int16_t *input, const th_dims *filter_dims, const int8_t *filter,
                      const int64_t *bias, const th_dims *output_dims, int16_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || input_dims == NULL || input == NULL ||
        filter_dims == NULL || filter == NULL || output_dims == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    const th_dims in = *input_dims, f = *filter_dims, out = *output_dims;
    if (in.n <= 0 || in.h <= 0 || in.w <= 0 || in.c <= 0 || f.n <= 0 || f.h <= 0 || f.w <= 0 ||
        f.c != in.c || out.n != in.n || out.h <= 0 || out.w <= 0 || out.c != f.n ||
        params->stride.h < 1 || params->stride.w < 1 || params->dilation.h < 1 ||
        params->dilation.w < 1 || params->padding.h < 0 || params->padding.w < 0) {
        return TH_ERR_ARG;
    }
    if (!th_nn_s16_quant_ok(params->input_offset, params->output_offset, &params->activation,
                            quant, out.c)) {
        return TH_ERR_UNSUPPORTED;
    }
    const size_t taps = (size_t)f.h * (size_t)f.w * (size_t)f.c;
    int16_t *y = output;
    for (int32_t b = 0; b < in.n; b++) {
        const int16_t *plane = input + (size_t)b * (size_t)in.h * (size_t)in.w * (size_t)in.c;
        for (int32_t oy = 0; oy < out.h; oy++) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            for (int32_t ox = 0; ox < out.w; ox++) {
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                for (int32_t oc = 0; oc < out.c; oc++) {
                    const int8_t *w = filter + (size_t)oc * taps;
                    int64_t acc = 0;
                    for (int32_t ky = 0; ky < f.h; ky++) {
                        const int32_t iy = y0 + ky * params->dilation.h;
                        if (iy < 0 || iy >= in.h) {
                            continue;
                        }
                        for (int32_t kx = 0; kx < f.w; kx++) {
                            const int32_t ix = x0 + kx * params->dilation.w;
                            if (ix < 0 || ix >= in.w) {
                                continue;
                            }
                            const int16_t *xp =
                                plane + ((size_t)iy * (size_t)in.w + (size_t)ix) * (size_t)in.c;
                            const int8_t *wp = w + ((size_t)ky * (size_t)f.w + (size_t)kx) *
                                                       (size_t)f.c;
                            for (int32_t c = 0; c < in.c; c++) {
                                acc += (int32_t)xp[c] * wp[c];
                            }
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
