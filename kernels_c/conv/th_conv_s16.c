/* th_conv_s16: 16x8 CONV_2D as TFLite Micro's reference kernel: int16 NHWC input, int8
 * filter (Cout, KH, KW, Cin) (plain layout in every build), int64 bias, int64 accumulation
 * over the taps inside the input, per-channel requantization (th_requantize_s64). The taps
 * inside the input are found once per output pixel; with dilation 1 each filter row is one
 * contiguous dot product over KW' * Cin values. */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_s16_dsp.h"
#include "th_nn_support.h"

/* acc[k] += dot(x, w + k * taps) over n values for the group's g output channels (4, 2 or
 * 1: the DSP dot products of th_nn_s16_dsp.h share x between them; portable: one). */
TH_INLINE void conv_s16_seg(int32_t g, const int16_t *x, const int8_t *w, size_t taps,
                                int32_t n, int64_t *acc)
{
#if TH_NN_HAS_DSP
    if (g == 4) {
        th_s16_dot4(x, w, (int32_t)taps, n, acc);
    } else if (g == 2) {
        th_s16_dot2(x, w, w + taps, n, &acc[0], &acc[1]);
    } else {
        acc[0] += th_s16_dot1(x, w, n);
    }
#else
    (void)g;
    (void)taps;
    acc[0] += th_dot_s16_s8(x, w, n);
#endif
}

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
    const int32_t dh = params->dilation.h, dw = params->dilation.w, cin = in.c;
    const size_t taps = (size_t)f.h * (size_t)f.w * (size_t)cin;
    const size_t wrow = (size_t)f.w * (size_t)cin; /* one filter row */
    int16_t *y = output;
#if TH_NN_HAS_DSP
    /* patches of at most 128 values (dilation 1, not 1x1) are gathered into col (256 bytes
     * of stack: the interpreter firmware's stack reserve has room for no more) */
    int16_t col[128];
    const int use_col = taps <= 128 && dh == 1 && dw == 1 && f.h * f.w > 1;
#endif
    for (int32_t b = 0; b < in.n; b++) {
        const int16_t *plane = input + (size_t)b * (size_t)in.h * (size_t)in.w * (size_t)cin;
        for (int32_t oy = 0; oy < out.h; oy++) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            int32_t ky0, ky1;
            th_nn_tap_range(y0, f.h, dh, in.h, &ky0, &ky1);
            for (int32_t ox = 0; ox < out.w; ox++) {
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                int32_t kx0, kx1;
                th_nn_tap_range(x0, f.w, dw, in.w, &kx0, &kx1);
#if TH_NN_HAS_DSP
                if (use_col) {
                    /* the pixel's whole patch, zeros outside the input, in one row: every
                     * group of four output channels is one dot product over taps values */
                    memset(col, 0, taps * sizeof col[0]);
                    for (int32_t ky = ky0; kx0 < kx1 && ky < ky1; ky++) {
                        const int16_t *xr =
                            plane + ((size_t)(y0 + ky * dh) * (size_t)in.w + (size_t)(x0 + kx0)) *
                                        (size_t)cin;
                        memcpy(col + (size_t)ky * wrow + (size_t)kx0 * (size_t)cin, xr,
                               (size_t)(kx1 - kx0) * (size_t)cin * sizeof col[0]);
                    }
                    for (int32_t oc = 0; oc < out.c;) {
                        const int32_t left = out.c - oc;
                        const int32_t g = left >= 4 ? 4 : (left >= 2 ? 2 : 1);
                        int64_t acc[4] = {0, 0, 0, 0};
                        conv_s16_seg(g, col, filter + (size_t)oc * taps, taps, (int32_t)taps,
                                     acc);
                        for (int32_t k = 0; k < g; k++, oc++) {
                            int64_t v = acc[k];
                            if (bias != NULL) {
                                v = th_add_wrap64(v, th_load_s64(bias, oc));
                            }
                            *y++ = TH_S16_OUT(v, quant->multiplier[oc], quant->shift[oc],
                                              &params->activation);
                        }
                    }
                    continue;
                }
#endif
                for (int32_t oc = 0; oc < out.c;) {
                    const int32_t left = out.c - oc;
                    const int32_t g = TH_NN_HAS_DSP ? (left >= 4 ? 4 : (left >= 2 ? 2 : 1)) : 1;
                    const int8_t *w = filter + (size_t)oc * taps;
                    int64_t acc[4] = {0, 0, 0, 0};
                    for (int32_t ky = ky0; kx0 < kx1 && ky < ky1; ky++) {
                        const int16_t *xr =
                            plane + (size_t)(y0 + ky * dh) * (size_t)in.w * (size_t)cin;
                        const int8_t *wr = w + (size_t)ky * wrow;
                        if (dw == 1) {
                            conv_s16_seg(g, xr + (size_t)(x0 + kx0) * (size_t)cin,
                                         wr + (size_t)kx0 * (size_t)cin, taps,
                                         (kx1 - kx0) * cin, acc);
                            continue;
                        }
                        for (int32_t kx = kx0; kx < kx1; kx++) {
                            conv_s16_seg(g, xr + (size_t)(x0 + kx * dw) * (size_t)cin,
                                         wr + (size_t)kx * (size_t)cin, taps, cin, acc);
                        }
                    }
                    for (int32_t k = 0; k < g; k++, oc++) {
                        int64_t v = acc[k];
                        if (bias != NULL) {
                            v = th_add_wrap64(v, th_load_s64(bias, oc));
                        }
                        *y++ = TH_S16_OUT(v, quant->multiplier[oc], quant->shift[oc],
                                          &params->activation);
                    }
                }
            }
        }
    }
    return TH_OK;
}
