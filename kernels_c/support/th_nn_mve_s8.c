/* th_nn_mve_s8: the Helium (MVE) matrix core of CONV_2D and FULLY_CONNECTED (TH_NN_MVE).
 *
 * Filters are plain [Cout, K] (K = KH*KW*Cin contiguous per output channel). One output
 * pixel's column x (K int8) meets four filter rows at a time: per 16 taps one VLDRB of x,
 * four VLDRB of weights and four VMLADAVA (int8 x int8 summed into an int32), the last
 * partial 16 by tail-predicated loads (VCTP8, zeroing: nothing is read past K). The input
 * offset is folded in exactly: sum((x + io) * w) = sum(x * w) + io * sum(w), with sum(w)
 * per channel either prepared once per call (th_nn_mve_kernel_sums, CONV_2D: in scratch,
 * bias included) or summed alongside by VADDVA (FULLY_CONNECTED, no scratch). Wrapping int32
 * arithmetic throughout, so the sums equal the reference's mod 2^32, as its own do.
 * The four results are requantized as one vector (th_mve_requantize, TFLM's double
 * rounding, exact) and stored with a narrowing, tail-predicated VSTRB.32.
 */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_MVE

void th_nn_mve_copy(int8_t *dst, const int8_t *src, int32_t n)
{
    for (; n >= 16; n -= 16, src += 16, dst += 16) {
        vstrbq_s8(dst, vldrbq_s8(src));
    }
    if (n > 0) {
        const mve_pred16_t p = vctp8q((uint32_t)n);
        vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
    }
}

void th_nn_mve_fill(int8_t *dst, int8_t value, int32_t n)
{
    const int8x16_t v = vdupq_n_s8(value);
    for (; n >= 16; n -= 16, dst += 16) {
        vstrbq_s8(dst, v);
    }
    if (n > 0) {
        vstrbq_p_s8(dst, v, vctp8q((uint32_t)n));
    }
}

void th_nn_mve_kernel_sums(int32_t *tab, const int8_t *filter, const int32_t *bias,
                           int32_t cout, int32_t k, int32_t input_offset)
{
    for (int32_t c = 0; c < cout; c++) {
        const int8_t *w = filter + (int64_t)c * k;
        int32_t sum = 0;
        int32_t i = k;
        for (; i >= 16; i -= 16, w += 16) {
            sum = vaddvaq_s8(sum, vldrbq_s8(w));
        }
        if (i > 0) {
            sum = vaddvaq_s8(sum, vldrbq_z_s8(w, vctp8q((uint32_t)i)));
        }
        const uint32_t b = bias != NULL ? (uint32_t)bias[c] : 0u;
        tab[c] = (int32_t)(b + (uint32_t)input_offset * (uint32_t)sum);
    }
}

/* sum(x * w_j) of four rows (dot4) and, when SUMS, sum(w_j) too. */
TH_INLINE void dot4(const int8_t *x, const int8_t *w0, const int8_t *w1, const int8_t *w2,
                    const int8_t *w3, int32_t k, int32_t *acc, int32_t *wsum, const int sums)
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int32_t i = k & 15;
    uint32_t n = (uint32_t)k >> 4;
#if defined(__GNUC__) && defined(__OPTIMIZE__)
    /* The 16-tap loop with post-incremented loads (gcc 12 would recompute each address):
     * 5 loads, 4 VMLADAVA (+ 4 VADDVA) and the loop branch per 64 MACs. */
    if (n > 0) {
        if (sums) {
            /* two rows at a time: the sums of weights need four more registers */
            const int8_t *xr = x;
            uint32_t m = n;
            __asm__("1:\n\t"
                    "vldrb.8 q0, [%[x]], #16\n\t"
                    "vldrb.8 q1, [%[w0]], #16\n\t"
                    "vldrb.8 q2, [%[w1]], #16\n\t"
                    "vmlava.s8 %[a0], q0, q1\n\t"
                    "vaddva.s8 %[s0], q1\n\t"
                    "vmlava.s8 %[a1], q0, q2\n\t"
                    "vaddva.s8 %[s1], q2\n\t"
                    "subs %[n], %[n], #1\n\t"
                    "bne 1b"
                    : [x] "+r"(xr), [w0] "+r"(w0), [w1] "+r"(w1), [n] "+r"(m), [a0] "+Te"(a0),
                      [a1] "+Te"(a1), [s0] "+Te"(s0), [s1] "+Te"(s1)
                    :
                    : "d0", "d1", "d2", "d3", "d4", "d5", "memory", "cc");
            __asm__("1:\n\t"
                    "vldrb.8 q0, [%[x]], #16\n\t"
                    "vldrb.8 q1, [%[w2]], #16\n\t"
                    "vldrb.8 q2, [%[w3]], #16\n\t"
                    "vmlava.s8 %[a2], q0, q1\n\t"
                    "vaddva.s8 %[s2], q1\n\t"
                    "vmlava.s8 %[a3], q0, q2\n\t"
                    "vaddva.s8 %[s3], q2\n\t"
                    "subs %[n], %[n], #1\n\t"
                    "bne 1b"
                    : [x] "+r"(x), [w2] "+r"(w2), [w3] "+r"(w3), [n] "+r"(n), [a2] "+Te"(a2),
                      [a3] "+Te"(a3), [s2] "+Te"(s2), [s3] "+Te"(s3)
                    :
                    : "d0", "d1", "d2", "d3", "d4", "d5", "memory", "cc");
        } else {
            __asm__("1:\n\t"
                    "vldrb.8 q0, [%[x]], #16\n\t"
                    "vldrb.8 q1, [%[w0]], #16\n\t"
                    "vldrb.8 q2, [%[w1]], #16\n\t"
                    "vmlava.s8 %[a0], q0, q1\n\t"
                    "vldrb.8 q3, [%[w2]], #16\n\t"
                    "vmlava.s8 %[a1], q0, q2\n\t"
                    "vldrb.8 q1, [%[w3]], #16\n\t"
                    "vmlava.s8 %[a2], q0, q3\n\t"
                    "vmlava.s8 %[a3], q0, q1\n\t"
                    "subs %[n], %[n], #1\n\t"
                    "bne 1b"
                    : [x] "+r"(x), [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3),
                      [n] "+r"(n), [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2),
                      [a3] "+Te"(a3)
                    :
                    : "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "memory", "cc");
        }
    }
#else
    for (; n > 0; n--) {
        const int8x16_t xv = vldrbq_s8(x);
        const int8x16_t v0 = vldrbq_s8(w0);
        const int8x16_t v1 = vldrbq_s8(w1);
        const int8x16_t v2 = vldrbq_s8(w2);
        const int8x16_t v3 = vldrbq_s8(w3);
        x += 16;
        w0 += 16;
        w1 += 16;
        w2 += 16;
        w3 += 16;
        a0 = vmladavaq_s8(a0, xv, v0);
        a1 = vmladavaq_s8(a1, xv, v1);
        a2 = vmladavaq_s8(a2, xv, v2);
        a3 = vmladavaq_s8(a3, xv, v3);
        if (sums) {
            s0 = vaddvaq_s8(s0, v0);
            s1 = vaddvaq_s8(s1, v1);
            s2 = vaddvaq_s8(s2, v2);
            s3 = vaddvaq_s8(s3, v3);
        }
    }
#endif
    if (i > 0) {
        const mve_pred16_t p = vctp8q((uint32_t)i);
        const int8x16_t xv = vldrbq_z_s8(x, p);
        const int8x16_t v0 = vldrbq_z_s8(w0, p);
        const int8x16_t v1 = vldrbq_z_s8(w1, p);
        const int8x16_t v2 = vldrbq_z_s8(w2, p);
        const int8x16_t v3 = vldrbq_z_s8(w3, p);
        a0 = vmladavaq_s8(a0, xv, v0);
        a1 = vmladavaq_s8(a1, xv, v1);
        a2 = vmladavaq_s8(a2, xv, v2);
        a3 = vmladavaq_s8(a3, xv, v3);
        if (sums) {
            s0 = vaddvaq_s8(s0, v0);
            s1 = vaddvaq_s8(s1, v1);
            s2 = vaddvaq_s8(s2, v2);
            s3 = vaddvaq_s8(s3, v3);
        }
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    if (sums) {
        wsum[0] = s0;
        wsum[1] = s1;
        wsum[2] = s2;
        wsum[3] = s3;
    }
}

TH_INLINE int32x4_t vec4(const int32_t *v)
{
    int32x4_t r = vdupq_n_s32(v[0]);
    r = vsetq_lane_s32(v[1], r, 1);
    r = vsetq_lane_s32(v[2], r, 2);
    return vsetq_lane_s32(v[3], r, 3);
}

/* One output pixel (all cout channels) from its column x; the shared body of the two entry
 * points below (SUMS: FULLY_CONNECTED, sums of weights on the fly; else tab). */
TH_INLINE void pixel(const int8_t *x, const int8_t *filter, int32_t k, int32_t cout,
                     const int32_t *tab, const int32_t *bias, int32_t input_offset,
                     int32_t row_add, const int32_t *multiplier, const int32_t *shift,
                     int32_t per_channel, const th_mve_out *o, int8_t *out, const int sums)
{
    int32x4_t mult = vdupq_n_s32(multiplier[0]);
    int32x4_t sh = vdupq_n_s32(shift[0]);
    for (int32_t c = 0; c < cout; c += 4) {
        const int32_t g = TH_MIN(4, cout - c);
        const mve_pred16_t p = vctp32q((uint32_t)g);
        const int8_t *w0 = filter + (int64_t)c * k;
        const int8_t *w1 = g > 1 ? w0 + k : w0;
        const int8_t *w2 = g > 2 ? w1 + k : w0;
        const int8_t *w3 = g > 3 ? w2 + k : w0;
        int32_t acc[4], wsum[4];
        dot4(x, w0, w1, w2, w3, k, acc, wsum, sums);
        int32x4_t a = vec4(acc);
        if (sums) {
            a = vmlaq_n_s32(a, vec4(wsum), input_offset);
            if (bias != NULL) {
                a = vaddq_s32(a, vldrwq_z_s32(bias + c, p));
            }
            a = vaddq_n_s32(a, row_add);
        } else {
            a = vaddq_s32(a, vldrwq_z_s32(tab + c, p));
        }
        if (per_channel) {
            mult = vldrwq_z_s32(multiplier + c, p);
            sh = vldrwq_z_s32(shift + c, p);
        }
        vstrbq_p_s32(out + c, th_mve_requantize(a, mult, sh, o), p);
    }
}

void th_nn_mve_pixel_tab(const int8_t *x, const int8_t *filter, int32_t k, int32_t cout,
                         const int32_t *tab, const th_per_channel_quant *quant,
                         const th_mve_out *o, int8_t *out)
{
    pixel(x, filter, k, cout, tab, NULL, 0, 0, quant->multiplier, quant->shift, 1, o, out, 0);
}

void th_nn_mve_pixel_sums(const int8_t *x, const int8_t *filter, int32_t k, int32_t cout,
                          const int32_t *bias, int32_t input_offset, int32_t row_add,
                          const int32_t *multiplier, const int32_t *shift,
                          int32_t per_channel, const th_mve_out *o, int8_t *out)
{
    pixel(x, filter, k, cout, NULL, bias, input_offset, row_add, multiplier, shift,
          per_channel, o, out, 1);
}

int32_t th_nn_mve_conv_scratch(const th_dims *filter_dims)
{
    return 4 * filter_dims->n + th_round_up4(filter_dims->h * filter_dims->w * filter_dims->c);
}

/* Whether [a, a + an) and [b, b + bn) share a byte. */
static int overlaps(const void *a, int64_t an, const void *b, int64_t bn)
{
    const uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + (uintptr_t)bn && pb < pa + (uintptr_t)an;
}

/* The column of output pixel (oy, ox): K bytes, the padding as the input zero point
 * (-input_offset), which the folded offset turns into 0 as the reference skips it. */
static void im2col(int8_t *col, const int8_t *in_b, const th_dims *input_dims,
                   const th_conv_params *params, const th_dims *filter_dims, int32_t oy,
                   int32_t ox)
{
    const int32_t in_h = input_dims->h, in_w = input_dims->w, cin = input_dims->c;
    const int32_t kh = filter_dims->h, kw = filter_dims->w;
    const int32_t dh = params->dilation.h, dw = params->dilation.w;
    const int8_t pad = (int8_t)(-params->input_offset);
    const int32_t y0 = oy * params->stride.h - params->padding.h;
    const int32_t x0 = ox * params->stride.w - params->padding.w;
    const int32_t row_bytes = kw * cin;
    for (int32_t ky = 0; ky < kh; ky++, col += row_bytes) {
        const int32_t y = y0 + ky * dh;
        if (y < 0 || y >= in_h) {
            th_nn_mve_fill(col, pad, row_bytes);
            continue;
        }
        const int8_t *row = in_b + (int64_t)y * in_w * cin;
        if (dw == 1) {
            /* taps [lo, hi) inside the row, one copy */
            const int32_t lo = x0 < 0 ? TH_MIN(-x0, kw) : 0;
            const int32_t hi = TH_MAX(lo, TH_MIN(kw, in_w - x0));
            if (lo > 0) {
                th_nn_mve_fill(col, pad, lo * cin);
            }
            th_nn_mve_copy(col + lo * cin, row + (int64_t)(x0 + lo) * cin, (hi - lo) * cin);
            if (hi < kw) {
                th_nn_mve_fill(col + hi * cin, pad, (kw - hi) * cin);
            }
            continue;
        }
        for (int32_t kx = 0; kx < kw; kx++) {
            const int32_t x = x0 + kx * dw;
            if (x < 0 || x >= in_w) {
                th_nn_mve_fill(col + kx * cin, pad, cin);
            } else {
                th_nn_mve_copy(col + kx * cin, row + (int64_t)x * cin, cin);
            }
        }
    }
}

void th_nn_mve_conv_s8(const th_context *ctx, const th_conv_params *params,
                       const th_per_channel_quant *quant, const th_dims *input_dims,
                       const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                       const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    const int32_t cin = input_dims->c, cout = output_dims->c;
    const int32_t k = filter_dims->h * filter_dims->w * cin;
    int32_t *tab = (int32_t *)ctx->buf;
    int8_t *col = (int8_t *)ctx->buf + 4 * cout;
    th_nn_mve_kernel_sums(tab, filter, bias, cout, k, params->input_offset);
    const th_mve_out o = {params->output_offset, params->activation.min,
                          params->activation.max};
    const int32_t out_h = output_dims->h, out_w = output_dims->w;
    const int64_t in_bytes = (int64_t)input_dims->h * input_dims->w * cin;
    const int64_t out_bytes = (int64_t)out_h * out_w * cout;
    /* 1x1 without padding: the column is the input pixel itself, staged only when the
     * output overlaps the input (in place, th_nn.h rule (b): one pixel at a time). */
    const int pointwise = filter_dims->h == 1 && filter_dims->w == 1 &&
                          params->padding.h == 0 && params->padding.w == 0;
    const int stage = overlaps(input, in_bytes * input_dims->n, output,
                               out_bytes * output_dims->n);
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + b * in_bytes;
        int8_t *out = output + b * out_bytes;
        for (int32_t oy = 0; oy < out_h; oy++) {
            for (int32_t ox = 0; ox < out_w; ox++, out += cout) {
                const int8_t *x;
                if (pointwise) {
                    x = in_b + ((int64_t)oy * params->stride.h * input_dims->w +
                                (int64_t)ox * params->stride.w) * cin;
                    if (stage) {
                        th_nn_mve_copy(col, x, cin);
                        x = col;
                    }
                } else {
                    im2col(col, in_b, input_dims, params, filter_dims, oy, ox);
                    x = col;
                }
                th_nn_mve_pixel_tab(x, filter, k, cout, tab, quant, &o, out);
            }
        }
    }
}

#endif /* TH_NN_MVE */
