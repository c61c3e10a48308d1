/* th_dw_conv_s16: 16x8 DEPTHWISE_CONV_2D as TFLite Micro's reference kernel: int16 NHWC
 * input, int8 filter (1, KH, KW, Cin * ch_mult), int64 bias, int64 accumulation over the
 * taps inside the input (found once per output pixel), per-channel requantization
 * (th_requantize_s64). Output channel c * ch_mult + m reads input channel c. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_s16_dsp.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP
/* The 32-bit sums of output channels oc..oc+3 over the rows x cols taps inside the input
 * (the DSP path, channel multiplier 1 or 2, a compile-time constant after inlining): one
 * word of four int8 weights widened by SXTB16 to (w0, w2), (w1, w3); int16 inputs (x0, x1),
 * (x2, x3) (multiplier 1) or (x0, x1) for (oc, oc + 1), (oc + 2, oc + 3) (multiplier 2);
 * one halfword product per SMLAxy. At most 511 taps (checked): |sum| < 2^31. */
static inline void dw_s16_taps4(int32_t mult, const int16_t *xp, size_t xstep, size_t xrow,
                                const int8_t *wp, size_t wstep, size_t wrow, int32_t rows,
                                int32_t cols, int32_t *a)
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (int32_t r = 0; r < rows; r++, xp += xrow, wp += wrow) {
        const int16_t *x = xp;
        const int8_t *w = wp;
        for (int32_t t = 0; t < cols; t++, x += xstep, w += wstep) {
            const int32_t ww = th_read_s32(w);
            const int32_t w02 = th_sxtb16(ww), w13 = th_sxtb16_ror8(ww);
            const int32_t xa = th_read_s32(x);
            if (mult == 1) {
                const int32_t xb = th_read_s32(x + 2);
                a0 = th_smlabb(xa, w02, a0);
                a1 = th_smlatb(xa, w13, a1);
                a2 = th_smlabt(xb, w02, a2);
                a3 = th_s16_smlatt(xb, w13, a3);
            } else {
                a0 = th_smlabb(xa, w02, a0);
                a1 = th_smlabb(xa, w13, a1);
                a2 = th_s16_smlatt(xa, w02, a2);
                a3 = th_s16_smlatt(xa, w13, a3);
            }
        }
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}
#endif

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
#if TH_NN_HAS_DSP
    /* the DSP path: multiplier 1 or 2, 32-bit sums exact (at most 511 taps) */
    const int dsp = (mult == 1 || mult == 2) && (int64_t)f.h * f.w <= 511;
    const size_t xrow = (size_t)dh * (size_t)in.w * (size_t)in.c; /* next row of taps */
    const size_t wrow = (size_t)f.w * (size_t)f.c;
#endif
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
                int32_t oc = 0;
#if TH_NN_HAS_DSP
                const int32_t rows = kx0 < kx1 && ky0 < ky1 ? ky1 - ky0 : 0;
                /* the first tap inside the input (the window's corner when it has none) */
                const int16_t *xb = rows == 0 ? plane :
                    plane + ((size_t)(y0 + ky0 * dh) * (size_t)in.w + (size_t)(x0 + kx0 * dw)) *
                                (size_t)in.c;
                const int8_t *wb = rows == 0 ? filter :
                    filter + ((size_t)ky0 * (size_t)f.w + (size_t)kx0) * (size_t)f.c;
                for (; dsp && oc + 4 <= out.c; oc += 4) {
                    int32_t a[4];
                    if (mult == 1) {
                        dw_s16_taps4(1, xb + oc, xstep, xrow, wb + oc, (size_t)f.c, wrow, rows,
                                     kx1 - kx0, a);
                    } else {
                        dw_s16_taps4(2, xb + oc / 2, xstep, xrow, wb + oc, (size_t)f.c, wrow,
                                     rows, kx1 - kx0, a);
                    }
                    for (int32_t k = 0; k < 4; k++) {
                        int64_t acc = a[k];
                        if (bias != NULL) {
                            acc = th_add_wrap64(acc, th_load_s64(bias, oc + k));
                        }
                        *y++ = TH_S16_OUT(acc, quant->multiplier[oc + k], quant->shift[oc + k],
                                          &params->activation);
                    }
                }
#endif
                for (; oc < out.c; oc++) {
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
                        acc = th_add_wrap64(acc, th_load_s64(bias, oc));
                    }
                    *y++ = th_out_s16(acc, quant->multiplier[oc], quant->shift[oc],
                                      &params->activation);
                }
            }
        }
    }
    return TH_OK;
}
