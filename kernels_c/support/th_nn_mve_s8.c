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
 * rounding, exact) and stored with a narrowing, tail-predicated VSTRB.32. FULLY_CONNECTED
 * rows of 16 < K <= 32 turn it around: output channels across the lanes (pixel_narrow; K <= 16:
 * th_nn_fc_s8.c's fc_mve_short, fewer instructions there).
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

/* x0 . wa, x0 . wb, x1 . wa, x1 . wb over k taps (two pixels, two filter rows). */
TH_INLINE void dot2x2(const int8_t *x0, const int8_t *x1, const int8_t *wa, const int8_t *wb,
                      int32_t k, int32_t *r)
{
    int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
    uint32_t n = (uint32_t)k >> 4;
#if defined(__GNUC__) && defined(__OPTIMIZE__)
    if (n > 0) {
        __asm__("1:\n\t"
                "vldrb.8 q0, [%[x0]], #16\n\t"
                "vldrb.8 q2, [%[wa]], #16\n\t"
                "vldrb.8 q1, [%[x1]], #16\n\t"
                "vmlava.s8 %[a00], q0, q2\n\t"
                "vldrb.8 q3, [%[wb]], #16\n\t"
                "vmlava.s8 %[a10], q1, q2\n\t"
                "vmlava.s8 %[a01], q0, q3\n\t"
                "vmlava.s8 %[a11], q1, q3\n\t"
                "subs %[n], %[n], #1\n\t"
                "bne 1b"
                : [x0] "+r"(x0), [x1] "+r"(x1), [wa] "+r"(wa), [wb] "+r"(wb), [n] "+r"(n),
                  [a00] "+Te"(a00), [a01] "+Te"(a01), [a10] "+Te"(a10), [a11] "+Te"(a11)
                :
                : "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "memory", "cc");
    }
#else
    for (; n > 0; n--, x0 += 16, x1 += 16, wa += 16, wb += 16) {
        const int8x16_t v0 = vldrbq_s8(x0), v1 = vldrbq_s8(x1);
        const int8x16_t va = vldrbq_s8(wa), vb = vldrbq_s8(wb);
        a00 = vmladavaq_s8(a00, v0, va);
        a01 = vmladavaq_s8(a01, v0, vb);
        a10 = vmladavaq_s8(a10, v1, va);
        a11 = vmladavaq_s8(a11, v1, vb);
    }
#endif
    const int32_t i = k & 15;
    if (i > 0) {
        const mve_pred16_t p = vctp8q((uint32_t)i);
        const int8x16_t v0 = vldrbq_z_s8(x0, p), v1 = vldrbq_z_s8(x1, p);
        const int8x16_t va = vldrbq_z_s8(wa, p), vb = vldrbq_z_s8(wb, p);
        a00 = vmladavaq_s8(a00, v0, va);
        a01 = vmladavaq_s8(a01, v0, vb);
        a10 = vmladavaq_s8(a10, v1, va);
        a11 = vmladavaq_s8(a11, v1, vb);
    }
    r[0] = a00;
    r[1] = a01;
    r[2] = a10;
    r[3] = a11;
}

/* Two output pixels (columns x0, x1; outputs out0, out1), all cout channels, with tab:
 * four channels a step as two dot2x2 passes, so the requantization constants, the table
 * and the filter rows' setup serve both pixels. */
void th_nn_mve_pixel2_tab(const int8_t *x0, const int8_t *x1, const int8_t *filter, int32_t k,
                          int32_t cout, const int32_t *tab, const th_per_channel_quant *quant,
                          const th_mve_out *o, int8_t *out0, int8_t *out1)
{
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    int32_t c = 0;
    for (; c + 4 <= cout; c += 4) {
        const int8_t *w0 = filter + (int64_t)c * k;
        int32_t r01[4], r23[4];
        dot2x2(x0, x1, w0, w0 + k, k, r01);
        dot2x2(x0, x1, w0 + 2 * k, w0 + 3 * k, k, r23);
        const int32x4_t t = vldrwq_s32(tab + c);
        const int32x4_t m = vldrwq_s32(mult + c), s = vldrwq_s32(shift + c);
        int32x4_t a = vdupq_n_s32(r01[0]);
        a = vsetq_lane_s32(r01[1], a, 1);
        a = vsetq_lane_s32(r23[0], a, 2);
        a = vsetq_lane_s32(r23[1], a, 3);
        int32x4_t b = vdupq_n_s32(r01[2]);
        b = vsetq_lane_s32(r01[3], b, 1);
        b = vsetq_lane_s32(r23[2], b, 2);
        b = vsetq_lane_s32(r23[3], b, 3);
        vstrbq_s32(out0 + c, th_mve_requantize(vaddq_s32(a, t), m, s, o));
        vstrbq_s32(out1 + c, th_mve_requantize(vaddq_s32(b, t), m, s, o));
    }
    if (c < cout) {
        const int32_t g = cout - c;
        const mve_pred16_t p = vctp32q((uint32_t)g);
        const int8_t *w0 = filter + (int64_t)c * k;
        int32_t r01[4], r23[4];
        dot2x2(x0, x1, w0, g > 1 ? w0 + k : w0, k, r01);
        dot2x2(x0, x1, g > 2 ? w0 + 2 * k : w0, w0, k, r23);
        const int32x4_t t = vldrwq_z_s32(tab + c, p);
        const int32x4_t m = vldrwq_z_s32(mult + c, p), s = vldrwq_z_s32(shift + c, p);
        int32x4_t a = vdupq_n_s32(r01[0]);
        a = vsetq_lane_s32(r01[1], a, 1);
        a = vsetq_lane_s32(r23[0], a, 2);
        int32x4_t b = vdupq_n_s32(r01[2]);
        b = vsetq_lane_s32(r01[3], b, 1);
        b = vsetq_lane_s32(r23[2], b, 2);
        vstrbq_p_s32(out0 + c, th_mve_requantize(vaddq_s32(a, t), m, s, o), p);
        vstrbq_p_s32(out1 + c, th_mve_requantize(vaddq_s32(b, t), m, s, o), p);
    }
}

/* ---- k <= TH_NN_MVE_QUAD_K (pointwise layers of up to 32 input channels, small windows of
 * few channels such as the first 3x3 convolution on RGB): four output pixels a step (columns
 * x[0..3], outputs out + p * cout), two output channels at a time whose filter rows sit in Q
 * registers (two each past 16 taps), one VMLADAV per pixel, channel and 16 taps. The four
 * pixels' sums of one channel form one vector, requantized with that channel's scalar
 * constants (th_mve_requantize_n: exact as th_mve_requantize) and scattered (offsets
 * p * cout), n < 4 pixels predicated off. Rows and columns past k are zero-predicated loads:
 * nothing is read past k. */
TH_INLINE void quad_channel_out(int32_t s0, int32_t s1, int32_t s2, int32_t s3, int32_t t,
                                int32_t m, int32_t sh, const th_mve_out *o, int8_t *out,
                                uint32x4_t offs, mve_pred16_t pn)
{
    const int32x4_t v = {s0, s1, s2, s3};
    const int32x4_t a = vaddq_n_s32(v, t);
    vstrbq_scatter_offset_p_s32(out, offs, th_mve_requantize_n(a, m, sh, sh < 0, o), pn);
}

TH_INLINE void quad_small_k_t(const int8_t *const *x, const int8_t *filter, int32_t k,
                              int32_t cout, const int32_t *tab,
                              const th_per_channel_quant *quant, const th_mve_out *o,
                              int8_t *out, int32_t n, const int wide)
{
    const mve_pred16_t pk = vctp8q((uint32_t)(wide ? k - 16 : k));
    const mve_pred16_t pn = vctp32q((uint32_t)n);
    const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)cout);
    const int8_t *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3];
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    for (int32_t c = 0; c < cout; c += 2) {
        const int pair = c + 1 < cout;
        const int8_t *w0 = filter + (int64_t)c * k;
        const int8_t *w1 = pair ? w0 + k : w0;
        int32_t u0, u1, u2, u3, v0, v1, v2, v3;
        if (wide) {
            const int8x16_t a0 = vldrbq_s8(w0), a1 = vldrbq_s8(w1);
            const int8x16_t b0 = vldrbq_z_s8(w0 + 16, pk), b1 = vldrbq_z_s8(w1 + 16, pk);
            int8x16_t y = vldrbq_s8(x0), z = vldrbq_z_s8(x0 + 16, pk);
            u0 = vmladavaq_s8(vmladavq_s8(y, a0), z, b0);
            v0 = vmladavaq_s8(vmladavq_s8(y, a1), z, b1);
            y = vldrbq_s8(x1);
            z = vldrbq_z_s8(x1 + 16, pk);
            u1 = vmladavaq_s8(vmladavq_s8(y, a0), z, b0);
            v1 = vmladavaq_s8(vmladavq_s8(y, a1), z, b1);
            y = vldrbq_s8(x2);
            z = vldrbq_z_s8(x2 + 16, pk);
            u2 = vmladavaq_s8(vmladavq_s8(y, a0), z, b0);
            v2 = vmladavaq_s8(vmladavq_s8(y, a1), z, b1);
            y = vldrbq_s8(x3);
            z = vldrbq_z_s8(x3 + 16, pk);
            u3 = vmladavaq_s8(vmladavq_s8(y, a0), z, b0);
            v3 = vmladavaq_s8(vmladavq_s8(y, a1), z, b1);
        } else {
            const int8x16_t a0 = vldrbq_z_s8(w0, pk), a1 = vldrbq_z_s8(w1, pk);
            int8x16_t y = vldrbq_z_s8(x0, pk);
            u0 = vmladavq_s8(y, a0);
            v0 = vmladavq_s8(y, a1);
            y = vldrbq_z_s8(x1, pk);
            u1 = vmladavq_s8(y, a0);
            v1 = vmladavq_s8(y, a1);
            y = vldrbq_z_s8(x2, pk);
            u2 = vmladavq_s8(y, a0);
            v2 = vmladavq_s8(y, a1);
            y = vldrbq_z_s8(x3, pk);
            u3 = vmladavq_s8(y, a0);
            v3 = vmladavq_s8(y, a1);
        }
        quad_channel_out(u0, u1, u2, u3, tab[c], mult[c], shift[c], o, out + c, offs, pn);
        if (pair) {
            quad_channel_out(v0, v1, v2, v3, tab[c + 1], mult[c + 1], shift[c + 1], o,
                             out + c + 1, offs, pn);
        }
    }
}

/* {a, b, c, d} by two two-lane VMOVs (gcc 12 would go through the stack). */
TH_INLINE int32x4_t lanes4(int32_t a, int32_t b, int32_t c, int32_t d)
{
#if defined(__GNUC__) && defined(__OPTIMIZE__)
    int32x4_t v;
    __asm__("vmov %q0[2], %q0[0], %1, %3\n\t"
            "vmov %q0[3], %q0[1], %2, %4"
            : "=&w"(v)
            : "r"(a), "r"(b), "r"(c), "r"(d));
    return v;
#else
    const int32x4_t v = {a, b, c, d};
    return v;
#endif
}

/* The four-pixel asm loops' requantization (quad_narrow, quad_wide): the channel's four sums
 * in acc (a, b, wq free) plus tab, then th_mve_requantize's steps with the channel's scalars:
 * left shift max(sh, 0), VQRDMULH, the fix-up y + (y >> 31) only when sh < 0 (times sh < 0),
 * rounding shift by min(sh, 0), output offset (then the clamp, per loop); the tail scatters
 * to op + j * cout and goes to the next channel. */
#define QUAD_RQ_ASM                                                                              \
    "ldr %[a], [%[tp]], #4\n\t"                                                                  \
    "vadd.i32 %q[acc], %q[acc], %[a]\n\t"                                                        \
    "ldr %[a], [%[sp_]], #4\n\t"                                                                 \
    "bic %[b], %[a], %[a], asr #31\n\t"                                                          \
    "vshl.s32 %q[acc], %[b]\n\t"                                                                 \
    "ldr %[b], [%[mp]], #4\n\t"                                                                  \
    "vqrdmulh.s32 %q[acc], %q[acc], %[b]\n\t"                                                    \
    "vshr.s32 %q[wq], %q[acc], #31\n\t"                                                          \
    "lsr %[b], %[a], #31\n\t"                                                                    \
    "vmul.i32 %q[wq], %q[wq], %[b]\n\t"                                                          \
    "vqadd.s32 %q[acc], %q[acc], %q[wq]\n\t"                                                     \
    "and %[b], %[a], %[a], asr #31\n\t"                                                          \
    "vrshl.s32 %q[acc], %[b]\n\t"                                                                \
    "vqadd.s32 %q[acc], %q[acc], %[off]\n\t"

#define QUAD_STORE_ASM                                                                           \
    "vstrb.32 %q[acc], [%[op], %q[offs]]\n\t"                                                    \
    "adds %[op], %[op], #1\n\t"                                                                  \
    "le lr, 1b"

/* QUAD_RQ_ASM when every shift is negative (neg): no left shift, the fix-up always. */
#define QUAD_RQ_NEG_ASM                                                                          \
    "ldr %[a], [%[tp]], #4\n\t"                                                                  \
    "vadd.i32 %q[acc], %q[acc], %[a]\n\t"                                                        \
    "ldr %[a], [%[sp_]], #4\n\t"                                                                 \
    "ldr %[b], [%[mp]], #4\n\t"                                                                  \
    "vqrdmulh.s32 %q[acc], %q[acc], %[b]\n\t"                                                    \
    "vshr.s32 %q[wq], %q[acc], #31\n\t"                                                          \
    "vqadd.s32 %q[acc], %q[acc], %q[wq]\n\t"                                                     \
    "vrshl.s32 %q[acc], %[a]\n\t"                                                                \
    "vqadd.s32 %q[acc], %q[acc], %[off]\n\t"

/* quad_small_k for k <= 16: the four pixels' columns (x + j * xs) loaded once into Q
 * registers, then one filter row (one VLDRB) and four VMLADAV per output channel. */
static void __attribute__((noinline))
quad_narrow(const int8_t *x, int32_t xs, const int8_t *filter, int32_t k, int32_t cout,
            const int32_t *tab, const th_per_channel_quant *quant, const th_mve_out *o,
            int8_t *out, int32_t n, int neg)
{
    const th_mve_out oc = *o; /* in registers: the output stores may alias *o */
    const mve_pred16_t pk = vctp8q((uint32_t)k);
    const int8x16_t x0 = vldrbq_z_s8(x, pk), x1 = vldrbq_z_s8(x + xs, pk);
    const int8x16_t x2 = vldrbq_z_s8(x + 2 * xs, pk), x3 = vldrbq_z_s8(x + 3 * xs, pk);
    const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)cout);
    const mve_pred16_t pn = vctp32q((uint32_t)n);
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    const int8_t *w = filter;
#if defined(__GNUC__) && defined(__OPTIMIZE__)
    if (n == 4 && cout > 0) {
        /* Per channel: the filter row, four VMLADAV into two lane pairs, then
         * th_mve_requantize's steps with the channel's scalars: left shift max(sh, 0),
         * VQRDMULH, the fix-up y + (y >> 31) only when sh < 0 (times sh < 0), rounding
         * shift by min(sh, 0), output offset, clamp; scatter to out + c + j * cout. */
        const int32_t *tp = tab;
        int8_t *op = out;
        const uint32_t left = (uint32_t)cout;
        const int32x4_t lov = vdupq_n_s32(oc.act_min);
        int32_t a, b;
        int8x16_t wq;
        int32x4_t acc;
#define NARROW_ASM(rq)                                                                           \
    __asm__ volatile(                                                                            \
        "vmsr p0, %[pk]\n\t"                                                                   \
        "dls lr, %[left]\n"                                                                     \
        "1:\n\t"                                                                               \
        "vpst\n\t"                                                                             \
        "vldrbt.u8 %q[wq], [%[w]]\n\t"                                                         \
        "add %[w], %[w], %[k]\n\t"                                                             \
        "vmlav.s8 %[a], %q[x0], %q[wq]\n\t"                                                    \
        "vmlav.s8 %[b], %q[x2], %q[wq]\n\t"                                                    \
        "vmov %q[acc][2], %q[acc][0], %[a], %[b]\n\t"                                          \
        "vmlav.s8 %[a], %q[x1], %q[wq]\n\t"                                                    \
        "vmlav.s8 %[b], %q[x3], %q[wq]\n\t"                                                    \
        "vmov %q[acc][3], %q[acc][1], %[a], %[b]\n\t" rq                                       \
        "vmax.s32 %q[acc], %q[acc], %q[lov]\n\t"                                               \
        "vdup.32 %q[wq], %[hi]\n\t"                                                            \
        "vmin.s32 %q[acc], %q[acc], %q[wq]\n\t" QUAD_STORE_ASM                                 \
        : [w] "+r"(w), [tp] "+r"(tp), [sp_] "+r"(shift), [mp] "+r"(mult), [op] "+r"(op),         \
          [a] "=&Te"(a), [b] "=&Te"(b), [wq] "=&w"(wq), [acc] "=&w"(acc)                         \
        : [pk] "r"((uint32_t)pk), [k] "r"(k), [x0] "w"(x0), [x1] "w"(x1), [x2] "w"(x2),          \
          [x3] "w"(x3), [offs] "w"(offs), [off] "r"(oc.output_offset), [lov] "w"(lov),           \
          [hi] "r"(oc.act_max), [left] "r"(left)                                                 \
        : "lr", "memory", "cc")
        if (neg) {
            NARROW_ASM(QUAD_RQ_NEG_ASM);
        } else {
            NARROW_ASM(QUAD_RQ_ASM);
        }
#undef NARROW_ASM
        return;
    }
#endif
    (void)neg;
    for (int32_t c = 0; c < cout; c++, w += k) {
        const int8x16_t wv = vldrbq_z_s8(w, pk);
        const int32x4_t v = lanes4(vmladavq_s8(x0, wv), vmladavq_s8(x1, wv),
                                   vmladavq_s8(x2, wv), vmladavq_s8(x3, wv));
        const int32_t sh = shift[c];
        const int32x4_t y = th_mve_requantize_n(vaddq_n_s32(v, tab[c]), mult[c], sh, sh < 0,
                                                &oc);
        vstrbq_scatter_offset_p_s32(out + c, offs, y, pn);
    }
}

/* quad_wide's sum of one pixel (its column at register p) by the channel's filter row (wq,
 * wh): the column's halves into xl and xh (the second predicated), two VMLADAV(A) into r. */
#define WIDE_DOT_ASM(r, p)                                                                       \
    "vldrb.u8 %q[xl], [%[" p "]]\n\t"                                                          \
    "vpst\n\t"                                                                                 \
    "vldrbt.u8 %q[xh], [%[" p "], #16]\n\t"                                                    \
    "vmlav.s8 %[" r "], %q[xl], %q[wq]\n\t"                                                    \
    "vmlava.s8 %[" r "], %q[xh], %q[wh]\n\t"

/* quad_small_k for 16 < k <= 32 and four pixels: the columns' first 16 taps (x + j * xs)
 * loaded once into Q registers, per output channel the filter row (two VLDRB, the second
 * predicated), the columns' other taps (predicated, one VPT block) and eight VMLADAV(A);
 * the requantization as quad_narrow's. */
static void __attribute__((noinline))
quad_wide(const int8_t *x, int32_t xs, const int8_t *filter, int32_t k, int32_t cout,
          const int32_t *tab, const th_per_channel_quant *quant, const th_mve_out *o,
          int8_t *out, int neg)
{
#if defined(__GNUC__) && defined(__OPTIMIZE__)
    if (cout <= 0) {
        return;
    }
    const th_mve_out oc = *o; /* in registers: the output stores may alias *o */
    const mve_pred16_t pk = vctp8q((uint32_t)(k - 16));
    const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)cout);
    const int32x4_t lo = vdupq_n_s32(oc.act_min), hi = vdupq_n_s32(oc.act_max);
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    const int8_t *w = filter;
    const int32_t *tp = tab;
    int8_t *op = out;
    const uint32_t left = (uint32_t)cout;
    int32_t a, b;
    int8x16_t wq, wh, xl, xh;
    int32x4_t acc;
    /* per channel: pixels 0 and 2 (acc lanes 0, 2), then 1 and 3, each by its two halves */
#define WIDE_ASM(rq)                                                                             \
    __asm__ volatile(                                                                            \
        "vmsr p0, %[pk]\n\t"                                                                   \
        "dls lr, %[left]\n"                                                                     \
        "1:\n\t"                                                                               \
        "vldrb.u8 %q[wq], [%[w]]\n\t"                                                          \
        "vpst\n\t"                                                                             \
        "vldrbt.u8 %q[wh], [%[w], #16]\n\t"                                                    \
        "add %[w], %[w], %[k]\n\t"                                                             \
        "add %[b], %[x], %[xs], lsl #1\n\t" WIDE_DOT_ASM("a", "x") WIDE_DOT_ASM("b", "b")      \
        "vmov %q[acc][2], %q[acc][0], %[a], %[b]\n\t"                                          \
        "add %[a], %[x], %[xs]\n\t"                                                            \
        "add %[b], %[a], %[xs], lsl #1\n\t" WIDE_DOT_ASM("a", "a") WIDE_DOT_ASM("b", "b")      \
        "vmov %q[acc][3], %q[acc][1], %[a], %[b]\n\t" rq                                       \
        "vmax.s32 %q[acc], %q[acc], %q[lo]\n\t"                                                \
        "vmin.s32 %q[acc], %q[acc], %q[hi]\n\t" QUAD_STORE_ASM                                 \
        : [w] "+r"(w), [tp] "+r"(tp), [sp_] "+r"(shift), [mp] "+r"(mult), [op] "+r"(op),         \
          [a] "=&Te"(a), [b] "=&Te"(b), [wq] "=&w"(wq), [wh] "=&w"(wh), [xl] "=&w"(xl),          \
          [xh] "=&w"(xh), [acc] "=&w"(acc)                                                       \
        : [pk] "r"((uint32_t)pk), [k] "r"(k), [x] "r"(x), [xs] "r"(xs), [offs] "w"(offs),        \
          [off] "r"(oc.output_offset), [lo] "w"(lo), [hi] "w"(hi), [left] "r"(left)              \
        : "lr", "memory", "cc")
    if (neg) {
        WIDE_ASM(QUAD_RQ_NEG_ASM);
    } else {
        WIDE_ASM(QUAD_RQ_ASM);
    }
#undef WIDE_ASM
#else
    (void)neg;
    const int8_t *const xj[4] = {x, x + xs, x + 2 * xs, x + 3 * xs};
    quad_small_k_t(xj, filter, k, cout, tab, quant, o, out, 4, 1);
#endif
}

/* Four output pixels of one row whose windows (dilation 1) lie inside the input, rows of
 * kwc <= 16 bytes: window row ky of pixel j read straight from the input at
 * x + ky * rs + j * xs, one VMLADAV per pixel, channel and window row (no column): per
 * group of QUAD_DIRECT_GROUP channels, each window row of the four pixels is loaded once
 * into Q registers for all of the group's channels, the sums kept as vectors. The rows
 * are read as whole vectors (16 bytes, inside the input: the caller checks): the filter
 * row's lanes past kwc are zero, so the bytes past the window count 0, whatever they are. */
#define QUAD_DIRECT_GROUP 8 /* output channels per pass of quad_direct (its stack: 16 B each) */

static void __attribute__((noinline))
quad_direct(const int8_t *x, int32_t xs, int32_t rs, int32_t kh, int32_t kwc,
            const int8_t *filter, int32_t cout, const int32_t *tab,
            const th_per_channel_quant *quant, const th_mve_out *o, int8_t *out)
{
    const th_mve_out oc = *o; /* in registers: the output stores may alias *o */
    const mve_pred16_t pk = vctp8q((uint32_t)kwc);
    const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)cout);
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    const int32_t kk = kh * kwc;
    int32x4_t acc[QUAD_DIRECT_GROUP]; /* the four pixels' sums of each channel of a group */
    for (int32_t g = 0; g < cout; g += QUAD_DIRECT_GROUP) {
        const int32_t gn = TH_MIN(QUAD_DIRECT_GROUP, cout - g);
        const int8_t *xr = x;
        for (int32_t ky = 0; ky < kh; ky++, xr += rs) {
            /* window row ky of the four pixels in registers, for every channel of g */
            const int8x16_t x0 = vldrbq_s8(xr), x1 = vldrbq_s8(xr + xs);
            const int8x16_t x2 = vldrbq_s8(xr + 2 * xs), x3 = vldrbq_s8(xr + 3 * xs);
            const int8_t *w = filter + (int64_t)g * kk + ky * kwc;
            for (int32_t c = 0; c < gn; c++, w += kk) {
                const int8x16_t wv = vldrbq_z_s8(w, pk);
                const int32x4_t v = lanes4(vmladavq_s8(x0, wv), vmladavq_s8(x1, wv),
                                           vmladavq_s8(x2, wv), vmladavq_s8(x3, wv));
                acc[c] = ky == 0 ? v : vaddq_s32(acc[c], v);
            }
        }
        for (int32_t c = 0; c < gn; c++) {
            const int32_t sh = shift[g + c];
            const int32x4_t y = th_mve_requantize_n(vaddq_n_s32(acc[c], tab[g + c]),
                                                    mult[g + c], sh, sh < 0, &oc);
            vstrbq_scatter_offset_s32(out + g + c, offs, y);
        }
    }
}

static void __attribute__((noinline))
quad_small_k(const int8_t *const *x, const int8_t *filter, int32_t k, int32_t cout,
             const int32_t *tab, const th_per_channel_quant *quant, const th_mve_out *o,
             int8_t *out, int32_t n)
{
    const th_mve_out oc = *o; /* in registers: the output stores may alias *o */
    if (k > 16) {
        quad_small_k_t(x, filter, k, cout, tab, quant, &oc, out, n, 1);
    } else {
        quad_small_k_t(x, filter, k, cout, tab, quant, &oc, out, n, 0);
    }
}

/* ---- short rows (FULLY_CONNECTED of K <= MVE_NARROW_K): output channels across the lanes --
 * 16 channels a step in four int32 vectors: per input k one VLDRB.S32 gather of each vector's
 * four weights (offsets j * K from two bases 8 rows apart) and one VMLA.S32 by the scalar
 * x[k] + input_offset (taken once per call into a table); bias and row_add as the start;
 * requantized per vector. The last 1-15 channels four at a time, the last vector predicated
 * (nothing read or written past the filter and the output). */
#define MVE_NARROW_K 32

/* four channels from c (whole: all four exist, else those of p) requantized */
TH_INLINE int32x4_t narrow_out(int32x4_t a, const int32_t *bias, int32_t row_add, int32_t c,
                               const int32_t *multiplier, const int32_t *shift,
                               int32_t per_channel, const th_mve_out *o, mve_pred16_t p,
                               const int whole)
{
    if (bias != NULL) {
        a = vaddq_s32(a, whole ? vldrwq_s32(bias + c) : vldrwq_z_s32(bias + c, p));
    }
    a = vaddq_n_s32(a, row_add);
    if (!per_channel) {
        return th_mve_requantize(a, vdupq_n_s32(multiplier[0]), vdupq_n_s32(shift[0]), o);
    }
    const int32x4_t m = whole ? vldrwq_s32(multiplier + c) : vldrwq_z_s32(multiplier + c, p);
    const int32x4_t sh = whole ? vldrwq_s32(shift + c) : vldrwq_z_s32(shift + c, p);
    return th_mve_requantize(a, m, sh, o);
}

static void __attribute__((noinline))
pixel_narrow(const int8_t *x, const int8_t *filter, int32_t k, int32_t cout,
             const int32_t *bias, int32_t input_offset, int32_t row_add,
             const int32_t *multiplier, const int32_t *shift, int32_t per_channel,
             const th_mve_out *o, int8_t *out)
{
    int16_t xs[MVE_NARROW_K]; /* x + input_offset: |.| <= 255 */
    for (int32_t i = 0; i < k; i++) {
        xs[i] = (int16_t)(x[i] + input_offset);
    }
    const th_mve_out oc = *o; /* in registers: the output stores may alias *o */
    const uint32x4_t offs0 = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)k);
    const uint32x4_t offs1 = vaddq_n_u32(offs0, (uint32_t)(4 * k));
    const int32x4_t zero = vdupq_n_s32(0);
    const mve_pred16_t all = vctp32q(4);
    int32_t c = 0;
    for (; c + 16 <= cout; c += 16) {
        const int8_t *w0 = filter + (int64_t)c * k;
        const int8_t *w1 = w0 + 8 * k;
        int32x4_t a0 = zero, a1 = zero, a2 = zero, a3 = zero;
        for (int32_t i = 0; i < k; i++, w0++, w1++) {
            const int32_t xv = xs[i];
            a0 = vmlaq_n_s32(a0, vldrbq_gather_offset_s32(w0, offs0), xv);
            a1 = vmlaq_n_s32(a1, vldrbq_gather_offset_s32(w0, offs1), xv);
            a2 = vmlaq_n_s32(a2, vldrbq_gather_offset_s32(w1, offs0), xv);
            a3 = vmlaq_n_s32(a3, vldrbq_gather_offset_s32(w1, offs1), xv);
        }
        vstrbq_s32(out + c, narrow_out(a0, bias, row_add, c, multiplier, shift, per_channel,
                                       &oc, all, 1));
        vstrbq_s32(out + c + 4, narrow_out(a1, bias, row_add, c + 4, multiplier, shift,
                                           per_channel, &oc, all, 1));
        vstrbq_s32(out + c + 8, narrow_out(a2, bias, row_add, c + 8, multiplier, shift,
                                           per_channel, &oc, all, 1));
        vstrbq_s32(out + c + 12, narrow_out(a3, bias, row_add, c + 12, multiplier, shift,
                                            per_channel, &oc, all, 1));
    }
    for (; c < cout; c += 4) {
        const mve_pred16_t p = vctp32q((uint32_t)(cout - c));
        const int8_t *w = filter + (int64_t)c * k;
        int32x4_t a = zero;
        for (int32_t i = 0; i < k; i++, w++) {
            a = vmlaq_n_s32(a, vldrbq_gather_offset_z_s32(w, offs0, p), xs[i]);
        }
        vstrbq_p_s32(out + c, narrow_out(a, bias, row_add, c, multiplier, shift, per_channel,
                                         &oc, p, 0), p);
    }
}

void th_nn_mve_pixel_sums(const int8_t *x, const int8_t *filter, int32_t k, int32_t cout,
                          const int32_t *bias, int32_t input_offset, int32_t row_add,
                          const int32_t *multiplier, const int32_t *shift,
                          int32_t per_channel, const th_mve_out *o, int8_t *out)
{
    if (k <= MVE_NARROW_K && cout >= 8) {
        pixel_narrow(x, filter, k, cout, bias, input_offset, row_add, multiplier, shift,
                     per_channel, o, out);
        return;
    }
    pixel(x, filter, k, cout, NULL, bias, input_offset, row_add, multiplier, shift,
          per_channel, o, out, 1);
}

/* Columns staged at a time: four pixels for k <= TH_NN_MVE_QUAD_K, else two. */
static int32_t conv_columns(int32_t k)
{
    return k <= TH_NN_MVE_QUAD_K ? 4 : 2;
}

int32_t th_nn_mve_conv_scratch(const th_dims *filter_dims)
{
    const int32_t k = filter_dims->h * filter_dims->w * filter_dims->c;
    return 4 * filter_dims->n + conv_columns(k) * th_round_up4(k);
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
    /* the pad value everywhere first, then the input's runs over it (the rows and columns
     * inside the input worked out once; a run of at most 16 bytes: one predicated copy) */
    th_nn_mve_fill(col, pad, kh * row_bytes);
    /* window rows [r0, r1) inside the input */
    const int32_t r0 = y0 >= 0 ? 0 : TH_MIN(kh, (-y0 + dh - 1) / dh);
    const int32_t r1 = y0 > in_h - 1 ? r0 : TH_MAX(r0, TH_MIN(kh, (in_h - 1 - y0) / dh + 1));
    if (r1 <= r0) {
        return;
    }
    const int64_t in_row = (int64_t)dh * in_w * cin;
    const int8_t *row = in_b + (int64_t)(y0 + r0 * dh) * in_w * cin;
    col += r0 * row_bytes;
    if (dw == 1) {
        /* taps [lo, hi) of every row inside the input: one run a row */
        const int32_t lo = x0 < 0 ? TH_MIN(-x0, kw) : 0;
        const int32_t hi = TH_MAX(lo, TH_MIN(kw, in_w - x0));
        const int32_t n = (hi - lo) * cin;
        if (n <= 0) {
            return;
        }
        const int8_t *src = row + (int64_t)(x0 + lo) * cin;
        int8_t *d = col + lo * cin;
        if (n <= 16) {
            const mve_pred16_t p = vctp8q((uint32_t)n);
            for (int32_t r = r0; r < r1; r++, src += in_row, d += row_bytes) {
                vstrbq_p_s8(d, vldrbq_z_s8(src, p), p);
            }
            return;
        }
        for (int32_t r = r0; r < r1; r++, src += in_row, d += row_bytes) {
            th_nn_mve_copy(d, src, n);
        }
        return;
    }
    for (int32_t r = r0; r < r1; r++, row += in_row, col += row_bytes) {
        for (int32_t kx = 0; kx < kw; kx++) {
            const int32_t x = x0 + kx * dw;
            if (x >= 0 && x < in_w) {
                th_nn_mve_copy(col + kx * cin, row + (int64_t)x * cin, cin);
            }
        }
    }
}

/* Input offsets of the taps of a window inside the input (K <= GATHER_K): tap i of chunk h
 * (16 taps) at off[2h][m] (i = 16h + 2m) or off[2h + 1][m] (i = 16h + 2m + 1), tap
 * (ky, kx, c) at ky * DH * W * Cin + kx * DW * Cin + c; taps past K read offset 0. Whether
 * K <= GATHER_K and every offset fits 16 bits. */
#define GATHER_K 64

static int gather_offsets(uint16_t off[GATHER_K / 8][8], const th_conv_params *params,
                          const th_dims *input_dims, const th_dims *filter_dims)
{
    const int32_t cin = input_dims->c, kw = filter_dims->w;
    const int32_t k = filter_dims->h * kw * cin;
    const int64_t last = (int64_t)(filter_dims->h - 1) * params->dilation.h * input_dims->w *
                             cin + (int64_t)(kw - 1) * params->dilation.w * cin + cin - 1;
    if (last > 0xffff || k > GATHER_K) {
        return 0;
    }
    memset(off, 0, GATHER_K * sizeof(uint16_t));
    const int32_t row = params->dilation.h * input_dims->w * cin, tap = params->dilation.w * cin;
    int32_t i = 0;
    for (int32_t ky = 0; ky < filter_dims->h; ky++) {
        for (int32_t kx = 0; kx < kw; kx++) {
            for (int32_t c = 0; c < cin; c++, i++) {
                off[(i >> 4) * 2 + (i & 1)][(i & 15) >> 1] = (uint16_t)(ky * row + kx * tap + c);
            }
        }
    }
    return 1;
}

/* The columns (dst[j], k bytes) of m windows inside the input (src[j]: their first taps):
 * per 16 taps two 8-lane gathers (even and odd taps, VLDRB.S16 at 16-bit offsets) narrowed
 * into one vector (VMOVNB, VMOVNT), the last 16 stored predicated to k bytes. */
TH_INLINE int8x16_t gather16(const int8_t *x, uint16x8_t even, uint16x8_t odd)
{
    const int8x16_t e = vmovnbq_s16(vdupq_n_s8(0), vldrbq_gather_offset_s16(x, even));
    return vmovntq_s16(e, vldrbq_gather_offset_s16(x, odd));
}

static void __attribute__((noinline))
gather_cols(int8_t *const *dst, const int8_t *const *src, int32_t m,
            const uint16_t off[GATHER_K / 8][8], int32_t k)
{
    const uint16x8_t e0 = vldrhq_u16(off[0]), d0 = vldrhq_u16(off[1]);
    if (k <= 16) {
        const mve_pred16_t p = vctp8q((uint32_t)k);
        for (int32_t j = 0; j < m; j++) {
            vstrbq_p_s8(dst[j], gather16(src[j], e0, d0), p);
        }
        return;
    }
    if (k <= 32) { /* (the four-pixel path's columns: all offsets in registers) */
        const uint16x8_t e1 = vldrhq_u16(off[2]), d1 = vldrhq_u16(off[3]);
        const mve_pred16_t p = vctp8q((uint32_t)(k - 16));
        for (int32_t j = 0; j < m; j++) {
            vstrbq_s8(dst[j], gather16(src[j], e0, d0));
            vstrbq_p_s8(dst[j] + 16, gather16(src[j], e1, d1), p);
        }
        return;
    }
    int32_t h = 0;
    for (; h + 16 < k; h += 16) { /* whole 16s */
        const uint16x8_t e = vldrhq_u16(off[h / 8]), d = vldrhq_u16(off[h / 8 + 1]);
        for (int32_t j = 0; j < m; j++) {
            vstrbq_s8(dst[j] + h, gather16(src[j], e, d));
        }
    }
    const uint16x8_t e = vldrhq_u16(off[h / 8]), d = vldrhq_u16(off[h / 8 + 1]);
    const mve_pred16_t p = vctp8q((uint32_t)(k - h));
    for (int32_t j = 0; j < m; j++) {
        vstrbq_p_s8(dst[j] + h, gather16(src[j], e, d), p);
    }
}

/* The column of output pixel (oy, ox) into col: queued for gather_cols (gdst, gsrc, *m) when
 * its window lies inside the input and gather holds, else built now (im2col). */
TH_INLINE void window_column(int8_t *col, const int8_t *in_b, const th_dims *input_dims,
                             const th_conv_params *params, const th_dims *filter_dims,
                             int32_t oy, int32_t ox, int gather, int8_t **gdst,
                             const int8_t **gsrc, int32_t *m)
{
    const int32_t y0 = oy * params->stride.h - params->padding.h;
    const int32_t x0 = ox * params->stride.w - params->padding.w;
    if (gather && y0 >= 0 && x0 >= 0 &&
        y0 + (filter_dims->h - 1) * params->dilation.h < input_dims->h &&
        x0 + (filter_dims->w - 1) * params->dilation.w < input_dims->w) {
        gdst[*m] = col;
        gsrc[(*m)++] = in_b + ((int64_t)y0 * input_dims->w + x0) * input_dims->c;
    } else {
        im2col(col, in_b, input_dims, params, filter_dims, oy, ox);
    }
}

/* th_nn_mve_conv_s8 for 4 < k <= TH_NN_MVE_QUAD_K: four pixels a step (quad_small_k), all
 * four read (staged in the four columns at col, or read in place) before any is written. */
#ifndef DIRECT_RULE
#define DIRECT_RULE (filter_dims->h <= 2)
#endif
static void conv_quads(const th_conv_params *params, const th_dims *input_dims,
                       const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                       const th_dims *output_dims, int8_t *output, const int32_t *tab,
                       int8_t *col, const th_per_channel_quant *quant, const th_mve_out *o,
                       int pointwise, int stage, const uint16_t goff[GATHER_K / 8][8],
                       int gather)
{
    const int32_t cin = input_dims->c, cout = output_dims->c;
    const int32_t k = filter_dims->h * filter_dims->w * cin;
    const int32_t out_w = output_dims->w, pixels = output_dims->h * out_w;
    const int32_t col_bytes = th_round_up4(k);
    const int64_t in_bytes = (int64_t)input_dims->h * input_dims->w * cin;
    const int64_t out_bytes = (int64_t)pixels * cout;
    /* Windows of dilation 1 whose rows (kwc bytes) fit one vector: output pixels
     * [oy_lo, oy_hi) x [ox_lo, ox_hi) read no padding, four of one row go by quad_direct
     * straight from the input when their outputs overlap none of their windows (it reads
     * the windows again for every channel); for K <= 16 only windows of one or two rows
     * (more rows: gathered columns and quad_narrow take fewer instructions). */
    const int32_t in_h = input_dims->h, in_w = input_dims->w;
    const int32_t sh = params->stride.h, sw = params->stride.w;
    const int32_t kwc = filter_dims->w * cin;
    const int direct = !pointwise && params->dilation.h == 1 && params->dilation.w == 1 &&
                       kwc <= 16 && DIRECT_RULE;
    const int32_t oy_lo = (params->padding.h + sh - 1) / sh;
    const int32_t ox_lo = (params->padding.w + sw - 1) / sw;
    /* oy < oy_hi <=> oy * sh - pad + kh <= in_h */
    const int32_t ry = in_h + params->padding.h - filter_dims->h;
    const int32_t rx = in_w + params->padding.w - filter_dims->w;
    const int32_t oy_hi = ry < 0 ? 0 : ry / sh + 1, ox_hi = rx < 0 ? 0 : rx / sw + 1;
    /* windows inside the input (any dilation): output pixels [oy_lo, gy_hi) x [ox_lo, gx_hi)
     * (their columns gathered when gather holds) */
    const int32_t gy =
        in_h + params->padding.h - ((filter_dims->h - 1) * params->dilation.h + 1);
    const int32_t gx =
        in_w + params->padding.w - ((filter_dims->w - 1) * params->dilation.w + 1);
    const int32_t gy_hi = gy < 0 ? 0 : gy / sh + 1, gx_hi = gx < 0 ? 0 : gx / sw + 1;
    int neg = 1; /* every shift negative (quad_narrow's shorter requantization) */
    for (int32_t c = 0; c < cout; c++) {
        neg &= quant->shift[c] < 0;
    }
    /* stride 1 (and so the input's size): pixel q of the output reads input pixel q */
    const int dense = pointwise && k <= 16 && params->stride.h == 1 && params->stride.w == 1;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + b * in_bytes;
        int8_t *out = output + b * out_bytes;
        if (dense) {
            for (int32_t q = 0; q < pixels; q += 4) {
                const int32_t n = TH_MIN(4, pixels - q);
                const int8_t *xq = in_b + (int64_t)q * cin;
                if (stage || n < 4) { /* the four pixels, or the last n, are read first */
                    th_nn_mve_copy(col, xq, n * cin);
                    xq = col;
                }
                quad_narrow(xq, cin, filter, k, cout, tab, quant, o, out + (int64_t)q * cout,
                            n, neg);
            }
            continue;
        }
        int32_t oy = 0, ox = 0;
        for (int32_t q = 0; q < pixels; q += 4) {
            const int32_t n = TH_MIN(4, pixels - q);
            const int8_t *xw = in_b + ((int64_t)(oy * sh - params->padding.h) * in_w +
                                       (ox * sw - params->padding.w)) * cin;
            if (direct && ox + 3 < out_w && oy >= oy_lo && oy < oy_hi && ox >= ox_lo &&
                ox + 3 < ox_hi &&
                xw + (int64_t)(filter_dims->h - 1) * in_w * cin + 3 * sw * cin + 16 <=
                    in_b + in_bytes &&
                !overlaps(out + (int64_t)q * cout, 4 * cout, xw,
                          (int64_t)(filter_dims->h - 1) * in_w * cin + 3 * sw * cin + kwc)) {
                quad_direct(xw, sw * cin, in_w * cin, filter_dims->h, kwc, filter, cout, tab,
                            quant, o, out + (int64_t)q * cout);
                ox += 4;
                if (ox == out_w) {
                    ox = 0;
                    oy++;
                }
                continue;
            }
            if (n == 4 && ox + 3 < out_w &&
                ((gather && oy >= oy_lo && oy < gy_hi && ox >= ox_lo && ox + 3 < gx_hi) ||
                 (pointwise && !stage))) {
                /* four inner windows of one row: their columns gathered at once, or four
                 * pixels of one row read in place (pointwise, no overlap) */
                const int8_t *x0 = in_b + ((int64_t)(oy * sh - params->padding.h) * in_w +
                                           (ox * sw - params->padding.w)) * cin;
                const int32_t step = sw * cin;
                const int8_t *xq = x0;
                int32_t xs = step;
                if (!pointwise) {
                    int8_t *const gd[4] = {col, col + col_bytes, col + 2 * col_bytes,
                                           col + 3 * col_bytes};
                    const int8_t *const gs[4] = {x0, x0 + step, x0 + 2 * step, x0 + 3 * step};
                    gather_cols(gd, gs, 4, goff, k);
                    xq = col;
                    xs = col_bytes;
                }
                if (k > 16) {
                    quad_wide(xq, xs, filter, k, cout, tab, quant, o, out + (int64_t)q * cout,
                              neg);
                } else {
                    quad_narrow(xq, xs, filter, k, cout, tab, quant, o,
                                out + (int64_t)q * cout, 4, neg);
                }
                ox += 4;
                if (ox == out_w) {
                    ox = 0;
                    oy++;
                }
                continue;
            }
            const int8_t *x[4];
            int8_t *gdst[4];
            const int8_t *gsrc[4];
            int32_t m = 0; /* columns to gather */
            for (int32_t j = 0; j < n; j++) {
                int8_t *cj = col + j * col_bytes;
                if (pointwise) {
                    x[j] = in_b + ((int64_t)oy * params->stride.h * input_dims->w +
                                   (int64_t)ox * params->stride.w) * cin;
                    if (stage) {
                        th_nn_mve_copy(cj, x[j], cin);
                        x[j] = cj;
                    }
                } else {
                    if (gather && oy >= oy_lo && oy < gy_hi && ox >= ox_lo && ox < gx_hi) {
                        gdst[m] = cj;
                        gsrc[m++] = in_b + ((int64_t)(oy * sh - params->padding.h) * in_w +
                                            (ox * sw - params->padding.w)) * cin;
                    } else {
                        im2col(cj, in_b, input_dims, params, filter_dims, oy, ox);
                    }
                    x[j] = cj;
                }
                if (++ox == out_w) {
                    ox = 0;
                    oy++;
                }
            }
            if (m > 0) {
                gather_cols(gdst, gsrc, m, goff, k);
            }
            for (int32_t j = n; j < 4; j++) {
                x[j] = x[n - 1];
            }
            int8_t *o_q = out + (int64_t)q * cout;
            /* quad_narrow and quad_wide take the columns at one stride: columns in scratch,
             * or pixels of one input row */
            const int32_t xs = (int32_t)(x[1] - x[0]);
            if (k > 16) {
                if (n == 4 && x[2] - x[1] == xs && x[3] - x[2] == xs) {
                    quad_wide(x[0], xs, filter, k, cout, tab, quant, o, o_q, neg);
                } else {
                    quad_small_k(x, filter, k, cout, tab, quant, o, o_q, n);
                }
                continue;
            }
            if (x[2] - x[1] != xs || x[3] - x[2] != xs) {
                for (int32_t j = 0; j < 4; j++) {
                    int8_t *cj = col + j * col_bytes;
                    if (x[j] != cj) {
                        th_nn_mve_copy(cj, x[j], k);
                    }
                }
                quad_narrow(col, col_bytes, filter, k, cout, tab, quant, o, o_q, n, neg);
            } else {
                quad_narrow(x[0], xs, filter, k, cout, tab, quant, o, o_q, n, neg);
            }
        }
    }
}

/* ---- Few output channels (Cout <= FEW_COUT, K > 4): the pointwise and conv layers of one to
 * three filters, where four channels a step (dot4, dot2x2) would compute up to four times the
 * sums it keeps. Two output pixels a pass, every output channel at once: per 16 taps one
 * VLDRB of each pixel's taps, one of each filter row, one VMLADAVA per pixel and channel.
 * The taps are read straight from the input where the pair lies in one output row and inside
 * the input along the row (window rows of KW * Cin contiguous bytes at dilation 1, else runs
 * of Cin): window rows above or below the input are skipped, their filter rows' sums
 * (VADDVA) times the input offset taken off, as the folded table counts them. Other pairs
 * go through two int8 columns (im2col). Four pixels' sums are requantized as one vector per
 * channel (quad_channel_out) after all four are read, so in place as the paths above. */
#define FEW_COUT 4

/* The window's taps of one pixel as rows of nx runs of len bytes (run t of row r at
 * x + r * rs + t * cs, its weights contiguous): a column is one run of K. */
typedef struct {
    int32_t rows, rs, nx, cs, len;
} few_runs;

/* Sums of pixels x0 and x1 (at row r0 of their windows) over rows [r0, r1) of g with nc
 * (1-3, a constant after inlining) filter rows k apart: s0[c] = x0 . w_c, s1[c] = x1 . w_c. */
TH_INLINE void few_dot_t(const int8_t *x0, const int8_t *x1, const int8_t *w, int32_t k,
                         const few_runs *g, int32_t r0, int32_t r1, int32_t *s0,
                         int32_t *s1, const int32_t nc)
{
    const int32_t n16 = g->len >> 4, tail = g->len & 15;
    const mve_pred16_t pt = vctp8q((uint32_t)tail);
    int32_t a0 = 0, a1 = 0, a2 = 0, b0 = 0, b1 = 0, b2 = 0;
    w += (int64_t)r0 * g->nx * g->len;
    for (int32_t r = r0; r < r1; r++) {
        const int8_t *p0 = x0 + (int64_t)(r - r0) * g->rs;
        const int8_t *p1 = x1 + (int64_t)(r - r0) * g->rs;
        for (int32_t t = 0; t < g->nx; t++, p0 += g->cs, p1 += g->cs) {
            const int8_t *q0 = p0, *q1 = p1;
            for (int32_t i = 0; i < n16; i++, q0 += 16, q1 += 16, w += 16) {
                const int8x16_t v0 = vldrbq_s8(q0), v1 = vldrbq_s8(q1);
                const int8x16_t wa = vldrbq_s8(w);
                a0 = vmladavaq_s8(a0, v0, wa);
                b0 = vmladavaq_s8(b0, v1, wa);
                if (nc > 1) {
                    const int8x16_t wb = vldrbq_s8(w + k);
                    a1 = vmladavaq_s8(a1, v0, wb);
                    b1 = vmladavaq_s8(b1, v1, wb);
                }
                if (nc > 2) {
                    const int8x16_t wc = vldrbq_s8(w + 2 * k);
                    a2 = vmladavaq_s8(a2, v0, wc);
                    b2 = vmladavaq_s8(b2, v1, wc);
                }
            }
            if (tail > 0) {
                const int8x16_t v0 = vldrbq_z_s8(q0, pt), v1 = vldrbq_z_s8(q1, pt);
                const int8x16_t wa = vldrbq_z_s8(w, pt);
                a0 = vmladavaq_s8(a0, v0, wa);
                b0 = vmladavaq_s8(b0, v1, wa);
                if (nc > 1) {
                    const int8x16_t wb = vldrbq_z_s8(w + k, pt);
                    a1 = vmladavaq_s8(a1, v0, wb);
                    b1 = vmladavaq_s8(b1, v1, wb);
                }
                if (nc > 2) {
                    const int8x16_t wc = vldrbq_z_s8(w + 2 * k, pt);
                    a2 = vmladavaq_s8(a2, v0, wc);
                    b2 = vmladavaq_s8(b2, v1, wc);
                }
                w += tail;
            }
        }
    }
    s0[0] = a0;
    s1[0] = b0;
    if (nc > 1) {
        s0[1] = a1;
        s1[1] = b1;
    }
    if (nc > 2) {
        s0[2] = a2;
        s1[2] = b2;
    }
}

/* few_dot for one run per window row (dilation 1 along the row) of at most 16 bytes: per row
 * one predicated VLDRB of each pixel's row and of each filter row (one VPT block), one
 * VMLADAVA per pixel and channel; nc = 1 or 2, rows r1 - r0 >= 1 (optimized gcc builds:
 * the others take few_dot_t). */
#if defined(__GNUC__) && defined(__OPTIMIZE__)
TH_INLINE void few_short_rows(const int8_t *x0, const int8_t *x1, const int8_t *w, int32_t k,
                              const few_runs *g, int32_t r0, int32_t r1, int32_t *s0,
                              int32_t *s1, const int32_t nc)
{
    const uint32_t p = (uint32_t)vctp8q((uint32_t)g->len);
    const int32_t rs = g->rs, len = g->len;
    const uint32_t n = (uint32_t)(r1 - r0);
    int32_t a0 = 0, b0 = 0, a1 = 0, b1 = 0;
    w += (int64_t)r0 * len;
    if (nc == 1) {
        __asm__("vmsr p0, %[p]\n\t"
                "dls lr, %[n]\n"
                "1:\n\t"
                "vpsttt\n\t"
                "vldrbt.u8 q0, [%[x0]]\n\t"
                "vldrbt.u8 q1, [%[x1]]\n\t"
                "vldrbt.u8 q2, [%[w]]\n\t"
                "add %[x0], %[rs]\n\t"
                "add %[x1], %[rs]\n\t"
                "add %[w], %[len]\n\t"
                "vmlava.s8 %[a0], q0, q2\n\t"
                "vmlava.s8 %[b0], q1, q2\n\t"
                "le lr, 1b"
                : [x0] "+r"(x0), [x1] "+r"(x1), [w] "+r"(w), [a0] "+Te"(a0), [b0] "+Te"(b0)
                : [p] "r"(p), [n] "r"(n), [rs] "r"(rs), [len] "r"(len)
                : "d0", "d1", "d2", "d3", "d4", "d5", "lr", "memory", "cc");
    } else {
        const int8_t *wb = w + k;
        __asm__("vmsr p0, %[p]\n\t"
                "dls lr, %[n]\n"
                "1:\n\t"
                "vpstttt\n\t"
                "vldrbt.u8 q0, [%[x0]]\n\t"
                "vldrbt.u8 q1, [%[x1]]\n\t"
                "vldrbt.u8 q2, [%[w]]\n\t"
                "vldrbt.u8 q3, [%[wb]]\n\t"
                "add %[x0], %[rs]\n\t"
                "add %[x1], %[rs]\n\t"
                "add %[w], %[len]\n\t"
                "add %[wb], %[len]\n\t"
                "vmlava.s8 %[a0], q0, q2\n\t"
                "vmlava.s8 %[b0], q1, q2\n\t"
                "vmlava.s8 %[a1], q0, q3\n\t"
                "vmlava.s8 %[b1], q1, q3\n\t"
                "le lr, 1b"
                : [x0] "+r"(x0), [x1] "+r"(x1), [w] "+r"(w), [wb] "+r"(wb), [a0] "+Te"(a0),
                  [b0] "+Te"(b0), [a1] "+Te"(a1), [b1] "+Te"(b1)
                : [p] "r"(p), [n] "r"(n), [rs] "r"(rs), [len] "r"(len)
                : "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "lr", "memory", "cc");
    }
    s0[0] = a0;
    s1[0] = b0;
    if (nc > 1) {
        s0[1] = a1;
        s1[1] = b1;
    }
}
#endif

/* s0[c] and s1[c] -= input_offset * (sum of filter row c's taps in rows [r0, r1) of g). */
static void few_skip_rows(const int8_t *filter, int32_t k, int32_t nc, const few_runs *g,
                          int32_t r0, int32_t r1, int32_t input_offset, int32_t *s0,
                          int32_t *s1)
{
    const int32_t row = g->nx * g->len;
    for (int32_t c = 0; c < nc; c++) {
        const int8_t *w = filter + (int64_t)c * k + (int64_t)r0 * row;
        int32_t sum = 0;
        int32_t i = (r1 - r0) * row;
        for (; i >= 16; i -= 16, w += 16) {
            sum = vaddvaq_s8(sum, vldrbq_s8(w));
        }
        if (i > 0) {
            sum = vaddvaq_s8(sum, vldrbq_z_s8(w, vctp8q((uint32_t)i)));
        }
        const uint32_t d = (uint32_t)input_offset * (uint32_t)sum;
        s0[c] = (int32_t)((uint32_t)s0[c] - d);
        s1[c] = (int32_t)((uint32_t)s1[c] - d);
    }
}

static void __attribute__((noinline))
few_dot(const int8_t *x0, const int8_t *x1, const int8_t *filter, int32_t k, int32_t nc,
        const few_runs *g, int32_t r0, int32_t r1, int32_t *s0, int32_t *s1)
{
#if defined(__GNUC__) && defined(__OPTIMIZE__)
    if (g->nx == 1 && g->len <= 16 && r1 > r0) {
        if (nc == 1) {
            few_short_rows(x0, x1, filter, k, g, r0, r1, s0, s1, 1);
        } else {
            few_short_rows(x0, x1, filter, k, g, r0, r1, s0, s1, 2);
            if (nc == 3) {
                few_short_rows(x0, x1, filter + 2 * k, k, g, r0, r1, s0 + 2, s1 + 2, 1);
            } else if (nc == 4) {
                few_short_rows(x0, x1, filter + 2 * k, k, g, r0, r1, s0 + 2, s1 + 2, 2);
            }
        }
        return;
    }
#endif
    if (nc == 1) {
        few_dot_t(x0, x1, filter, k, g, r0, r1, s0, s1, 1);
    } else if (nc == 3) {
        few_dot_t(x0, x1, filter, k, g, r0, r1, s0, s1, 3);
    } else { /* two and four: pairs of channels */
        few_dot_t(x0, x1, filter, k, g, r0, r1, s0, s1, 2);
        if (nc == 4) {
            few_dot_t(x0, x1, filter + 2 * k, k, g, r0, r1, s0 + 2, s1 + 2, 2);
        }
    }
}

static void __attribute__((noinline))
conv_few_cout(const th_conv_params *params, const th_dims *input_dims, const int8_t *input,
              const th_dims *filter_dims, const int8_t *filter, const th_dims *output_dims,
              int8_t *output, const int32_t *tab, int8_t *col0, int8_t *col1,
              const th_per_channel_quant *quant, const th_mve_out *o)
{
    const th_mve_out oc = *o; /* in registers: the output stores may alias *o */
    const int32_t in_h = input_dims->h, in_w = input_dims->w, cin = input_dims->c;
    const int32_t kh = filter_dims->h, kw = filter_dims->w, cout = output_dims->c;
    const int32_t k = kh * kw * cin;
    const int32_t out_w = output_dims->w, pixels = output_dims->h * out_w;
    const int32_t sh = params->stride.h, sw = params->stride.w;
    const int32_t dh = params->dilation.h, dw = params->dilation.w;
    const int32_t pt = params->padding.h, pl = params->padding.w;
    const int64_t in_bytes = (int64_t)in_h * in_w * cin;
    const int64_t out_bytes = (int64_t)pixels * cout;
    /* the window in place: rows of kw * cin bytes (dilation 1 along the row), else runs */
    const few_runs direct = {kh, dh * in_w * cin, dw == 1 ? 1 : kw, dw * cin,
                             dw == 1 ? kw * cin : cin};
    const few_runs column = {1, 0, 1, 0, k};
    /* output columns [ox_lo, ox_hi) read no padding along the row */
    const int32_t ox_lo = (pl + sw - 1) / sw;
    const int32_t rx = in_w + pl - ((kw - 1) * dw + 1);
    const int32_t ox_hi = rx < 0 ? 0 : rx / sw + 1;
    const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)cout);
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + b * in_bytes;
        int8_t *out = output + b * out_bytes;
        int32_t oy = 0, ox = 0;
        for (int32_t q = 0; q < pixels; q += 4) {
            const int32_t n = TH_MIN(4, pixels - q);
            int32_t s[4][FEW_COUT];
            for (int32_t j = 0; j < n; j += 2) {
                const int pair = j + 1 < n;
                const int32_t oy1 = pair && ox + 1 == out_w ? oy + 1 : oy;
                const int32_t ox1 = !pair ? ox : ox + 1 < out_w ? ox + 1 : 0;
                const int32_t y0 = oy * sh - pt;
                if (oy1 == oy && ox >= ox_lo && ox1 < ox_hi) {
                    /* window rows [r0, r1) inside the input */
                    const int32_t r0 = y0 >= 0 ? 0 : TH_MIN(kh, (-y0 + dh - 1) / dh);
                    const int32_t r1 =
                        y0 > in_h - 1 ? r0 : TH_MAX(r0, TH_MIN(kh, (in_h - 1 - y0) / dh + 1));
                    const int8_t *x0 = in_b + ((int64_t)(y0 + r0 * dh) * in_w +
                                               (int64_t)ox * sw - pl) * cin;
                    const int8_t *x1 = x0 + (int64_t)(ox1 - ox) * sw * cin;
                    few_dot(x0, x1, filter, k, cout, &direct, r0, r1, s[j], s[j + 1]);
                    if (r0 > 0) {
                        few_skip_rows(filter, k, cout, &direct, 0, r0, params->input_offset,
                                      s[j], s[j + 1]);
                    }
                    if (r1 < kh) {
                        few_skip_rows(filter, k, cout, &direct, r1, kh, params->input_offset,
                                      s[j], s[j + 1]);
                    }
                } else {
                    im2col(col0, in_b, input_dims, params, filter_dims, oy, ox);
                    if (pair) {
                        im2col(col1, in_b, input_dims, params, filter_dims, oy1, ox1);
                    }
                    few_dot(col0, pair ? col1 : col0, filter, k, cout, &column, 0, 1, s[j],
                            s[j + 1]);
                }
                oy = ox1 + 1 < out_w ? oy1 : oy1 + 1;
                ox = ox1 + 1 < out_w ? ox1 + 1 : 0;
            }
            const mve_pred16_t pn = vctp32q((uint32_t)n);
            int8_t *o_q = out + (int64_t)q * cout;
            for (int32_t c = 0; c < cout; c++) {
                quad_channel_out(s[0][c], s[1][c], s[2][c], s[3][c], tab[c], mult[c],
                                 shift[c], &oc, o_q + c, offs, pn);
            }
        }
    }
}

static void conv_columns_paths(const th_conv_params *params,
                               const th_per_channel_quant *quant, const th_dims *input_dims,
                               const int8_t *input, const th_dims *filter_dims,
                               const int8_t *filter, const th_dims *output_dims,
                               int8_t *output, const int32_t *tab, int8_t *col0, int8_t *col1,
                               const th_mve_out *op, int pointwise, int stage);

void th_nn_mve_conv_s8(const th_context *ctx, const th_conv_params *params,
                       const th_per_channel_quant *quant, const th_dims *input_dims,
                       const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                       const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    const int32_t cin = input_dims->c, cout = output_dims->c;
    const int32_t k = filter_dims->h * filter_dims->w * cin;
    int32_t *tab = (int32_t *)ctx->buf;
    int8_t *col0 = (int8_t *)ctx->buf + 4 * cout;
    int8_t *col1 = col0 + th_round_up4(k);
    th_nn_mve_kernel_sums(tab, filter, bias, cout, k, params->input_offset);
    const th_mve_out o = {params->output_offset, params->activation.min,
                          params->activation.max};
    const int32_t out_h = output_dims->h, out_w = output_dims->w;
    const int64_t in_bytes = (int64_t)input_dims->h * input_dims->w * cin;
    const int64_t out_bytes = (int64_t)out_h * out_w * cout;
    /* 1x1 without padding: the column is the input pixel itself, staged only when the
     * output overlaps the input (in place, th_nn.h rule (b): two pixels at a time, both read
     * before either is written, as the DSP path; rule (c) likewise). */
    const int pointwise = filter_dims->h == 1 && filter_dims->w == 1 &&
                          params->padding.h == 0 && params->padding.w == 0;
    const int stage = overlaps(input, in_bytes * input_dims->n, output,
                               out_bytes * output_dims->n);
    /* (a pointwise layer of four channels: one dot2x2 pair per two pixels does better) */
    if (cout <= (pointwise ? FEW_COUT - 1 : FEW_COUT) && k > TH_NN_MVE_QUAD_K) {
        conv_few_cout(params, input_dims, input, filter_dims, filter, output_dims, output, tab,
                      col0, col1, quant, &o);
        return;
    }
    conv_columns_paths(params, quant, input_dims, input, filter_dims, filter, output_dims,
                       output, tab, col0, col1, &o, pointwise, stage);
}

/* th_nn_mve_conv_s8 past the few-channel path (its own frame: the gather offsets): four
 * pixels a step (conv_quads) or pixel pairs. */
static void __attribute__((noinline))
conv_columns_paths(const th_conv_params *params, const th_per_channel_quant *quant,
                   const th_dims *input_dims, const int8_t *input, const th_dims *filter_dims,
                   const int8_t *filter, const th_dims *output_dims, int8_t *output,
                   const int32_t *tab, int8_t *col0, int8_t *col1, const th_mve_out *op,
                   int pointwise, int stage)
{
    const th_mve_out o = *op;
    const int32_t cin = input_dims->c, cout = output_dims->c;
    const int32_t k = filter_dims->h * filter_dims->w * cin;
    const int32_t out_w = output_dims->w, pixels = output_dims->h * out_w;
    const int64_t in_bytes = (int64_t)input_dims->h * input_dims->w * cin;
    const int64_t out_bytes = (int64_t)pixels * cout;
    /* windows inside the input: columns gathered (gather_cols) when K <= GATHER_K and the
     * offsets fit 16 bits */
    uint16_t goff[GATHER_K / 8][8];
    const int gather = !pointwise && gather_offsets(goff, params, input_dims, filter_dims);
    if (conv_columns(k) == 4) {
        conv_quads(params, input_dims, input, filter_dims, filter, output_dims, output, tab,
                   col0, quant, &o, pointwise, stage, goff, gather);
        return;
    }
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + b * in_bytes;
        int8_t *out = output + b * out_bytes;
        int32_t oy = 0, ox = 0;
        for (int32_t q = 0; q < pixels; q += 2) {
            const int pair = q + 1 < pixels;
            const int32_t oy1 = ox + 1 < out_w ? oy : oy + 1;
            const int32_t ox1 = ox + 1 < out_w ? ox + 1 : 0;
            const int8_t *x0, *x1 = NULL;
            if (pointwise) {
                x0 = in_b + ((int64_t)oy * params->stride.h * input_dims->w +
                             (int64_t)ox * params->stride.w) * cin;
                if (pair) {
                    x1 = in_b + ((int64_t)oy1 * params->stride.h * input_dims->w +
                                 (int64_t)ox1 * params->stride.w) * cin;
                }
                if (stage) {
                    th_nn_mve_copy(col0, x0, cin);
                    x0 = col0;
                    if (pair) {
                        th_nn_mve_copy(col1, x1, cin);
                        x1 = col1;
                    }
                }
            } else {
                int8_t *gdst[2];
                const int8_t *gsrc[2];
                int32_t m = 0;
                window_column(col0, in_b, input_dims, params, filter_dims, oy, ox, gather,
                              gdst, gsrc, &m);
                x0 = col0;
                if (pair) {
                    window_column(col1, in_b, input_dims, params, filter_dims, oy1, ox1,
                                  gather, gdst, gsrc, &m);
                    x1 = col1;
                }
                if (m > 0) {
                    gather_cols(gdst, gsrc, m, goff, k);
                }
            }
            if (pair) {
                th_nn_mve_pixel2_tab(x0, x1, filter, k, cout, tab, quant, &o,
                                     out + (int64_t)q * cout, out + (int64_t)(q + 1) * cout);
                oy = ox1 + 1 < out_w ? oy1 : oy1 + 1;
                ox = ox1 + 1 < out_w ? ox1 + 1 : 0;
            } else {
                th_nn_mve_pixel_tab(x0, filter, k, cout, tab, quant, &o,
                                    out + (int64_t)q * cout);
            }
        }
    }
}

#endif /* TH_NN_MVE */

#if TH_NN_MVE
/* ---- DEPTHWISE_CONV_2D ------------------------------------------------------------------
 * One output channel at a time, four output pixels of a row in the four int32 lanes (MVE's
 * VMLA multiplies by a scalar: the tap's weight). The input channel's plane is staged in
 * scratch as int8 with its padding as the input zero point (the folded offset, bias +
 * input_offset * sum of the taps, makes it count 0, so the loop has no bounds checks),
 * eight pixels per VLDRB.S16 gather (offsets i * C) and narrowing VSTRB.16. Per tap and
 * four outputs: one widening VLDRB.S32 (a gather of offsets 0, s, 2s, 3s at stride s > 1)
 * and one VMLA.S32; the four results requantized as one vector and stored with a VSTRB.32
 * scatter (offsets j * Cout), tail-predicated. Channel c's plane is staged before any of its
 * outputs is written, and only channel c is written: in place as th_nn.h rule (a). */

typedef struct {
    int32_t kh, kw, sh, sw, dh, dw, ph, pw; /* filter, stride, dilation, staged plane */
} mve_dw_geom;

static mve_dw_geom mve_dw_geometry(const th_dw_conv_params *params,
                                   const th_dims *filter_dims, const th_dims *output_dims)
{
    mve_dw_geom g;
    g.kh = filter_dims->h;
    g.kw = filter_dims->w;
    g.sh = params->stride.h;
    g.sw = params->stride.w;
    g.dh = params->dilation.h;
    g.dw = params->dilation.w;
    g.ph = (output_dims->h - 1) * g.sh + (g.kh - 1) * g.dh + 1;
    g.pw = (output_dims->w - 1) * g.sw + (g.kw - 1) * g.dw + 1;
    return g;
}

int32_t th_nn_mve_dw_scratch(const th_dw_conv_params *params, const th_dims *filter_dims,
                             const th_dims *output_dims)
{
    const mve_dw_geom g = mve_dw_geometry(params, filter_dims, output_dims);
    return th_round_up4(g.ph * g.pw);
}

/* n pixels' channel bytes (stride cin) from src to dst. */
TH_INLINE void gather_channel(int8_t *dst, const int8_t *src, int32_t n, int32_t cin,
                              uint16x8_t offs)
{
    if (cin <= 9000) {
        for (; n >= 8; n -= 8, src += 8 * cin, dst += 8) {
            vstrbq_s16(dst, vldrbq_gather_offset_s16(src, offs));
        }
        if (n > 0) {
            const mve_pred16_t p = vctp16q((uint32_t)n);
            vstrbq_p_s16(dst, vldrbq_gather_offset_z_s16(src, offs, p), p);
        }
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        dst[i] = src[(int64_t)i * cin];
    }
}

/* The interior of input channel ic of one batch into the plane (its padding, the same for
 * every channel, is filled once per call). */
static void mve_dw_stage(int8_t *plane, const mve_dw_geom *geo, const int8_t *in_b,
                         const th_dims *input_dims, const th_dw_conv_params *params,
                         int32_t ic)
{
    const int32_t in_h = input_dims->h, in_w = input_dims->w, cin = input_dims->c;
    const int32_t top = params->padding.h, left = params->padding.w;
    const int32_t x_lo = TH_MIN(left, geo->pw);
    const int32_t x_hi = TH_MAX(x_lo, TH_MIN(geo->pw, left + in_w));
    if (x_hi <= x_lo) {
        return;
    }
    const int32_t y_lo = TH_MIN(top, geo->ph);
    const int32_t y_hi = TH_MAX(y_lo, TH_MIN(geo->ph, top + in_h));
    const uint16x8_t offs = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)cin);
    int8_t *dst = plane + (int64_t)y_lo * geo->pw + x_lo;
    const int8_t *src = in_b + ((int64_t)(y_lo - top) * in_w + (x_lo - left)) * cin + ic;
    for (int32_t y = y_lo; y < y_hi; y++, dst += geo->pw, src += (int64_t)in_w * cin) {
        gather_channel(dst, src, x_hi - x_lo, cin, offs);
    }
}

/* Whether the interior is whole input rows (no column of the input outside the plane), so
 * mve_dw_stage_rows can stage it: the rows are consecutive in the input. The plane may end
 * before the input's last rows (a negative bottom padding: rows no output reads). */
static int mve_dw_whole_rows(const mve_dw_geom *geo, const th_dims *input_dims,
                             const th_dw_conv_params *params)
{
    return params->padding.w + input_dims->w <= geo->pw && params->padding.h < geo->ph &&
           input_dims->c <= 9000;
}

/* The input rows a whole-rows interior stages: those above the plane's end. */
static int32_t mve_dw_staged_rows(const mve_dw_geom *geo, const th_dims *input_dims,
                                  const th_dw_conv_params *params)
{
    return TH_MIN(input_dims->h, geo->ph - params->padding.h);
}

/* Input channel ic of one batch into the plane's interior (whole rows): eight pixels per
 * VLDRB.S16 gather (offsets i * C) and VSTRB.16, the row's last 1-7 predicated; the source
 * runs on across rows. */
static void mve_dw_stage_rows(int8_t *plane, const mve_dw_geom *geo, const int8_t *in_b,
                              const th_dims *input_dims, const th_dw_conv_params *params,
                              int32_t ic)
{
    const int32_t cin = input_dims->c, in_w = input_dims->w, full = in_w >> 3;
    const uint16x8_t offs = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)cin);
    const mve_pred16_t p = vctp16q((uint32_t)(in_w & 7));
    const int8_t *src = in_b + ic;
    int8_t *row = plane + (int64_t)params->padding.h * geo->pw + params->padding.w;
    const int32_t rows = mve_dw_staged_rows(geo, input_dims, params);
    if (in_w >= 8) {
        /* the row's last 1-7 pixels as the last eight (rewriting a few, no predicate) */
        const int64_t back = (int64_t)(in_w - 8) * cin, row_in = (int64_t)in_w * cin;
        for (int32_t y = 0; y < rows; y++, row += geo->pw, src += row_in) {
            int8_t *d = row;
            const int8_t *sp = src;
            for (int32_t k = 0; k < full; k++, sp += 8 * cin, d += 8) {
                vstrbq_s16(d, vldrbq_gather_offset_s16(sp, offs));
            }
            if (in_w & 7) {
                vstrbq_s16(row + in_w - 8, vldrbq_gather_offset_s16(src + back, offs));
            }
        }
        return;
    }
    for (int32_t y = 0; y < rows; y++, row += geo->pw) {
        int8_t *d = row;
        for (int32_t k = 0; k < full; k++, src += 8 * cin, d += 8) {
            vstrbq_s16(d, vldrbq_gather_offset_s16(src, offs));
        }
        if (in_w & 7) {
            vstrbq_p_s16(d, vldrbq_gather_offset_z_s16(src, offs, p), p);
            src += (in_w & 7) * cin;
        }
    }
}

/* Whole-rows interiors of at most `room` pixels (what the call's table has left) are staged
 * as one run: eight input pixels per VLDRB.S16 gather (offsets i * C, consecutive in the
 * input) and one VSTRB.16 scatter to their plane positions (this table, made once per call),
 * no per-row loop. Returns the run's pixel count, 0 if it does not apply. */
static int32_t mve_dw_run_table(uint16_t *tab, int32_t room, const mve_dw_geom *geo,
                                const th_dims *input_dims, const th_dw_conv_params *params)
{
    const int32_t in_w = input_dims->w;
    const int32_t top = params->padding.h, left = params->padding.w;
    if (!mve_dw_whole_rows(geo, input_dims, params)) {
        return 0;
    }
    const int32_t in_h = mve_dw_staged_rows(geo, input_dims, params);
    if ((int64_t)in_h * in_w > room ||
        (int64_t)geo->ph * geo->pw > 65536) {
        return 0;
    }
    int32_t i = 0;
    for (int32_t y = 0; y < in_h; y++) {
        for (int32_t x = 0; x < in_w; x++) {
            tab[i++] = (uint16_t)((top + y) * geo->pw + left + x);
        }
    }
    return i;
}

/* Input channel ic of one batch (its n-pixel run) into the plane at the table's offsets. */
static void mve_dw_stage_run(int8_t *plane, const uint16_t *tab, int32_t n, const int8_t *in_b,
                             int32_t cin, int32_t ic)
{
    const uint16x8_t offs = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)cin);
    const int8_t *src = in_b + ic;
    for (; n >= 8; n -= 8, src += 8 * cin, tab += 8) {
        vstrbq_scatter_offset_s16(plane, vld1q_u16(tab), vldrbq_gather_offset_s16(src, offs));
    }
    if (n > 0) {
        const mve_pred16_t p = vctp16q((uint32_t)n);
        vstrbq_scatter_offset_p_s16(plane, vldrhq_z_u16(tab, p),
                                    vldrbq_gather_offset_z_s16(src, offs, p), p);
    }
}

/* th_mve_requantize for one channel in all lanes: scalar multiplier and shifts (left >= 0,
 * right <= 0; the half-away fix-up only when right < 0, as there). */
TH_INLINE int32x4_t rq_channel(int32x4_t acc, int32_t multiplier, int32_t left, int32_t right,
                               int32_t zp, int32x4_t lo, int32x4_t hi)
{
    int32x4_t y = vshlq_r_s32(acc, left);
    y = vqrdmulhq_n_s32(y, multiplier);
    if (right < 0) {
        y = vqaddq_s32(y, vshrq_n_s32(y, 31));
        y = vrshlq_n_s32(y, right);
    }
    y = vqaddq_n_s32(y, zp);
    return vminq_s32(vmaxq_s32(y, lo), hi);
}

TH_INLINE int32x4_t dw_taps(const int8_t *r, int32_t row_step, const int32_t *wt,
                            const int8_t *w, int32_t oc_stride, int32x4_t acc,
                            uint32x4_t in_offs, const int kh, const int kw, const int sw,
                            const int dw, const int table, const int pred, mve_pred16_t p)
{
#pragma GCC unroll 3
    for (int ky = 0; ky < kh; ky++, r += row_step) {
#pragma GCC unroll 3
        for (int kx = 0; kx < kw; kx++) {
            const int8_t *x = r + kx * dw;
            int32x4_t xv;
            if (pred) {
                xv = sw == 1 ? vldrbq_z_s32(x, p) : vldrbq_gather_offset_z_s32(x, in_offs, p);
            } else {
                xv = sw == 1 ? vldrbq_s32(x) : vldrbq_gather_offset_s32(x, in_offs);
            }
            const int t = ky * kw + kx;
            acc = vmlaq_n_s32(acc, xv, table ? wt[t] : w[(int64_t)t * oc_stride]);
        }
    }
    return acc;
}

/* Output rows of one channel from its staged plane; KH, KW, SW, DW constant where the caller
 * inlines it for a common geometry. w: the channel's first tap, taps oc_stride apart. Eight
 * outputs of a row per step (each tap's weight read once for both vectors), then four, then
 * the last one to three predicated (nothing read past them). */
TH_INLINE void mve_dw_rows(const int8_t *plane, const mve_dw_geom *geo, const int8_t *w,
                           int32_t oc_stride, int32_t start, int32_t multiplier,
                           int32_t shift, const th_mve_out *o, const th_dims *output_dims,
                           int8_t *out, const int kh, const int kw, const int sw,
                           const int dw)
{
    /* 3x3: the weights in registers (or at least a local table); else read as needed */
    int32_t wt[9];
    const int table = kh * kw <= 9;
    for (int t = 0; table && t < kh * kw; t++) {
        wt[t] = w[(int64_t)t * oc_stride];
    }
    const int32_t out_w = output_dims->w;
    const int32_t row_step = geo->dh * geo->pw;
    const uint32x4_t in_offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)sw);
    const uint32x4_t out_offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)oc_stride);
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : shift;
    const int32_t zp = o->output_offset;
    const int32x4_t lo = vdupq_n_s32(o->act_min);
    const int32x4_t hi = vdupq_n_s32(o->act_max);
    const int32x4_t init = vdupq_n_s32(start);
    const mve_pred16_t all = vctp32q(4);
    for (int32_t oy = 0; oy < output_dims->h; oy++) {
        const int8_t *row = plane + (int64_t)oy * geo->sh * geo->pw;
        int8_t *o_row = out + (int64_t)oy * out_w * oc_stride;
        int32_t ox = 0;
        for (; ox + 8 <= out_w; ox += 8) {
            const int8_t *r = row + ox * sw;
            int32x4_t a0 = init, a1 = init;
#if defined(__GNUC__) && defined(__OPTIMIZE__)
            if (kh == 3 && kw == 3 && sw == 1 && dw == 1 && table) {
                /* 3x3, stride 1: 18 widening loads (low base registers), 18 VMLA, 9 LDR */
                const int8_t *r1 = r + row_step, *r2 = r + 2 * row_step;
                int32_t t;
                __asm__("ldr %[t], [%[wp], #0]\n\t"
                        "vldrb.s32 q0, [%[r0]]\n\t"
                        "vldrb.s32 q1, [%[r0], #4]\n\t"
                        "vmla.s32 %q[a0], q0, %[t]\n\t"
                        "vmla.s32 %q[a1], q1, %[t]\n\t"
                        "ldr %[t], [%[wp], #4]\n\t"
                        "vldrb.s32 q0, [%[r0], #1]\n\t"
                        "vldrb.s32 q1, [%[r0], #5]\n\t"
                        "vmla.s32 %q[a0], q0, %[t]\n\t"
                        "vmla.s32 %q[a1], q1, %[t]\n\t"
                        "ldr %[t], [%[wp], #8]\n\t"
                        "vldrb.s32 q0, [%[r0], #2]\n\t"
                        "vldrb.s32 q1, [%[r0], #6]\n\t"
                        "vmla.s32 %q[a0], q0, %[t]\n\t"
                        "vmla.s32 %q[a1], q1, %[t]\n\t"
                        "ldr %[t], [%[wp], #12]\n\t"
                        "vldrb.s32 q0, [%[r1]]\n\t"
                        "vldrb.s32 q1, [%[r1], #4]\n\t"
                        "vmla.s32 %q[a0], q0, %[t]\n\t"
                        "vmla.s32 %q[a1], q1, %[t]\n\t"
                        "ldr %[t], [%[wp], #16]\n\t"
                        "vldrb.s32 q0, [%[r1], #1]\n\t"
                        "vldrb.s32 q1, [%[r1], #5]\n\t"
                        "vmla.s32 %q[a0], q0, %[t]\n\t"
                        "vmla.s32 %q[a1], q1, %[t]\n\t"
                        "ldr %[t], [%[wp], #20]\n\t"
                        "vldrb.s32 q0, [%[r1], #2]\n\t"
                        "vldrb.s32 q1, [%[r1], #6]\n\t"
                        "vmla.s32 %q[a0], q0, %[t]\n\t"
                        "vmla.s32 %q[a1], q1, %[t]\n\t"
                        "ldr %[t], [%[wp], #24]\n\t"
                        "vldrb.s32 q0, [%[r2]]\n\t"
                        "vldrb.s32 q1, [%[r2], #4]\n\t"
                        "vmla.s32 %q[a0], q0, %[t]\n\t"
                        "vmla.s32 %q[a1], q1, %[t]\n\t"
                        "ldr %[t], [%[wp], #28]\n\t"
                        "vldrb.s32 q0, [%[r2], #1]\n\t"
                        "vldrb.s32 q1, [%[r2], #5]\n\t"
                        "vmla.s32 %q[a0], q0, %[t]\n\t"
                        "vmla.s32 %q[a1], q1, %[t]\n\t"
                        "ldr %[t], [%[wp], #32]\n\t"
                        "vldrb.s32 q0, [%[r2], #2]\n\t"
                        "vldrb.s32 q1, [%[r2], #6]\n\t"
                        "vmla.s32 %q[a0], q0, %[t]\n\t"
                        "vmla.s32 %q[a1], q1, %[t]"
                        : [a0] "+w"(a0), [a1] "+w"(a1), [t] "=&r"(t)
                        : [r0] "l"(r), [r1] "l"(r1), [r2] "l"(r2), [wp] "r"(wt)
                        : "d0", "d1", "d2", "d3", "memory");
                int8_t *op = o_row + (int64_t)ox * oc_stride;
                vstrbq_scatter_offset_s32(op, out_offs,
                                          rq_channel(a0, multiplier, left, right, zp, lo, hi));
                vstrbq_scatter_offset_s32(op + 4 * oc_stride, out_offs,
                                          rq_channel(a1, multiplier, left, right, zp, lo, hi));
                continue;
            }
#endif
#pragma GCC unroll 3
            for (int ky = 0; ky < kh; ky++, r += row_step) {
#pragma GCC unroll 3
                for (int kx = 0; kx < kw; kx++) {
                    const int8_t *x = r + kx * dw;
                    const int t = ky * kw + kx;
                    const int32_t wv = table ? wt[t] : w[(int64_t)t * oc_stride];
                    if (sw == 1) {
                        a0 = vmlaq_n_s32(a0, vldrbq_s32(x), wv);
                        a1 = vmlaq_n_s32(a1, vldrbq_s32(x + 4), wv);
                    } else {
                        a0 = vmlaq_n_s32(a0, vldrbq_gather_offset_s32(x, in_offs), wv);
                        a1 = vmlaq_n_s32(a1, vldrbq_gather_offset_s32(x + 4 * sw, in_offs),
                                         wv);
                    }
                }
            }
            int8_t *op = o_row + (int64_t)ox * oc_stride;
            vstrbq_scatter_offset_s32(op, out_offs,
                                      rq_channel(a0, multiplier, left, right, zp, lo, hi));
            vstrbq_scatter_offset_s32(op + 4 * oc_stride, out_offs,
                                      rq_channel(a1, multiplier, left, right, zp, lo, hi));
        }
        for (; ox + 4 <= out_w; ox += 4) {
            const int32x4_t a = dw_taps(row + ox * sw, row_step, wt, w, oc_stride, init,
                                        in_offs, kh, kw, sw, dw, table, 0, all);
            vstrbq_scatter_offset_s32(o_row + (int64_t)ox * oc_stride, out_offs,
                                      rq_channel(a, multiplier, left, right, zp, lo, hi));
        }
        if (ox < out_w) {
            const mve_pred16_t p = vctp32q((uint32_t)(out_w - ox));
            const int32x4_t a = dw_taps(row + ox * sw, row_step, wt, w, oc_stride, init,
                                        in_offs, kh, kw, sw, dw, table, 1, p);
            vstrbq_scatter_offset_p_s32(o_row + (int64_t)ox * oc_stride, out_offs,
                                        rq_channel(a, multiplier, left, right, zp, lo, hi), p);
        }
    }
}

/* The output plane as one sequence of OH * OW pixels, four per vector whatever the row width
 * (narrow outputs: KWS's 25x5, VWW's 6x6 and 3x3): per lane the window origin in the staged
 * plane, oy * SH * PW + ox * SW, kept as (oy, ox) vectors stepped by four with a carry into
 * oy; per tap one VLDRB.S32 gather (offsets: the origins) and one VMLA.S32. */
TH_INLINE void mve_dw_flat(const int8_t *plane, const mve_dw_geom *geo, const int8_t *w,
                           int32_t oc_stride, int32_t start, int32_t multiplier,
                           int32_t shift, const th_mve_out *o, const th_dims *output_dims,
                           int8_t *out, const int kh, const int kw)
{
    int32_t wt[9];
    const int table = kh * kw <= 9;
    for (int t = 0; table && t < kh * kw; t++) {
        wt[t] = w[(int64_t)t * oc_stride];
    }
    const int32_t ow = output_dims->w;
    const int32_t total = output_dims->h * ow;
    const int32_t row_step = geo->dh * geo->pw;
    const int32_t y_step = geo->sh * geo->pw;
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : shift;
    const int32_t zp = o->output_offset;
    const int32x4_t lo = vdupq_n_s32(o->act_min);
    const int32x4_t hi = vdupq_n_s32(o->act_max);
    const int32x4_t init = vdupq_n_s32(start);
    int32x4_t ox = vreinterpretq_s32_u32(vidupq_n_u32(0, 1));
    int32x4_t oy = vdupq_n_s32(0);
    uint32x4_t oidx = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)oc_stride);
    for (mve_pred16_t c = vcmpgeq_n_s32(ox, ow); c != 0; c = vcmpgeq_n_s32(ox, ow)) {
        ox = vsubq_m_n_s32(ox, ox, ow, c);
        oy = vaddq_m_n_s32(oy, oy, 1, c);
    }
    for (int32_t q = 0; q < total; q += 4) {
        const uint32x4_t origin =
            vreinterpretq_u32_s32(vmlaq_n_s32(vmulq_n_s32(ox, geo->sw), oy, y_step));
        const mve_pred16_t p = vctp32q((uint32_t)(total - q));
        const int8_t *r = plane;
        int32x4_t acc = init;
        if (q + 4 <= total && kh == 3 && kw == 3 && table && geo->dw == 1) {
#if defined(__GNUC__) && defined(__OPTIMIZE__)
            {
                int32_t t;
                __asm__("vadd.i32 q1, %q[o0], %[one]\n\t"
                    "vadd.i32 q2, %q[o0], %[two]\n\t"
                    "ldr %[t], [%[wp], #0]\n\t"
                    "vldrb.s32 q3, [%[b0], %q[o0]]\n\t"
                    "vmla.s32 %q[acc], q3, %[t]\n\t"
                    "ldr %[t], [%[wp], #4]\n\t"
                    "vldrb.s32 q3, [%[b0], q1]\n\t"
                    "vmla.s32 %q[acc], q3, %[t]\n\t"
                    "ldr %[t], [%[wp], #8]\n\t"
                    "vldrb.s32 q3, [%[b0], q2]\n\t"
                    "vmla.s32 %q[acc], q3, %[t]\n\t"
                    "ldr %[t], [%[wp], #12]\n\t"
                    "vldrb.s32 q3, [%[b1], %q[o0]]\n\t"
                    "vmla.s32 %q[acc], q3, %[t]\n\t"
                    "ldr %[t], [%[wp], #16]\n\t"
                    "vldrb.s32 q3, [%[b1], q1]\n\t"
                    "vmla.s32 %q[acc], q3, %[t]\n\t"
                    "ldr %[t], [%[wp], #20]\n\t"
                    "vldrb.s32 q3, [%[b1], q2]\n\t"
                    "vmla.s32 %q[acc], q3, %[t]\n\t"
                    "ldr %[t], [%[wp], #24]\n\t"
                    "vldrb.s32 q3, [%[b2], %q[o0]]\n\t"
                    "vmla.s32 %q[acc], q3, %[t]\n\t"
                    "ldr %[t], [%[wp], #28]\n\t"
                    "vldrb.s32 q3, [%[b2], q1]\n\t"
                    "vmla.s32 %q[acc], q3, %[t]\n\t"
                    "ldr %[t], [%[wp], #32]\n\t"
                    "vldrb.s32 q3, [%[b2], q2]\n\t"
                    "vmla.s32 %q[acc], q3, %[t]"
                    : [acc] "+w"(acc), [t] "=&r"(t)
                    : [o0] "w"(origin), [b0] "r"(plane), [b1] "r"(plane + row_step),
                      [b2] "r"(plane + 2 * row_step), [wp] "r"(wt), [one] "r"(1), [two] "r"(2)
                    : "d2", "d3", "d4", "d5", "d6", "d7", "memory");
            }
#else
            for (int t = 0; t < 9; t++) {
                acc = vmlaq_n_s32(
                    acc, vldrbq_gather_offset_s32(plane + (t / 3) * row_step + t % 3, origin),
                    wt[t]);
            }
#endif
        } else if (q + 4 <= total) {
#pragma GCC unroll 3
            for (int ky = 0; ky < kh; ky++, r += row_step) {
#pragma GCC unroll 3
                for (int kx = 0; kx < kw; kx++) {
                    const int t = ky * kw + kx;
                    acc = vmlaq_n_s32(acc, vldrbq_gather_offset_s32(r + kx * geo->dw, origin),
                                      table ? wt[t] : w[(int64_t)t * oc_stride]);
                }
            }
        } else {
            for (int ky = 0; ky < kh; ky++, r += row_step) {
                for (int kx = 0; kx < kw; kx++) {
                    const int t = ky * kw + kx;
                    acc = vmlaq_n_s32(acc,
                                      vldrbq_gather_offset_z_s32(r + kx * geo->dw, origin, p),
                                      table ? wt[t] : w[(int64_t)t * oc_stride]);
                }
            }
        }
        vstrbq_scatter_offset_p_s32(out, oidx,
                                    rq_channel(acc, multiplier, left, right, zp, lo, hi), p);
        oidx = vaddq_n_u32(oidx, (uint32_t)(4 * oc_stride));
        ox = vaddq_n_s32(ox, 4);
        for (mve_pred16_t c = vcmpgeq_n_s32(ox, ow); c != 0; c = vcmpgeq_n_s32(ox, ow)) {
            ox = vsubq_m_n_s32(ox, ox, ow, c);
            oy = vaddq_m_n_s32(oy, oy, 1, c);
        }
    }
}

static void __attribute__((noinline))
mve_dw_flat_3x3(const int8_t *plane, const mve_dw_geom *geo, const int8_t *w,
                int32_t oc_stride, int32_t start, int32_t multiplier, int32_t shift,
                const th_mve_out *o, const th_dims *output_dims, int8_t *out)
{
    mve_dw_flat(plane, geo, w, oc_stride, start, multiplier, shift, o, output_dims, out, 3, 3);
}

/* Filters of at most 16 taps whose window spans at most 256 bytes of the plane (3x3 at any
 * stride, 1xN, ...): one output is one VLDRB.8 gather of its taps (byte offsets ky * DH * PW
 * + kx * DW, unused lanes at 0) and one VMLADAV against the channel's taps (held in a vector,
 * unused lanes 0); four outputs a step, requantized as one vector. 17 to 32 taps (5x5, 1x32,
 * ...): a second gather of taps 16.. from the start of tap 16's filter row (base2), each
 * span at most 256 bytes, accumulated by VMLADAVA (the *2 functions). */
#define MVE_DW_DOT_TAPS 32

typedef struct {
    uint8x16_t offs;  /* taps 0..15 from the window's origin */
    uint8x16_t offs2; /* taps 16..31 from base2 */
    int8x16_t wv;
    int8x16_t wv2;
    int32_t base2;
} mve_dw_taps;

/* Plane offset of tap t of the window (0 for t past the filter). */
static int32_t mve_dw_tap_offset(const mve_dw_geom *geo, int32_t t)
{
    return t < geo->kh * geo->kw ? (t / geo->kw) * geo->dh * geo->pw + (t % geo->kw) * geo->dw
                                 : 0;
}

static int32_t mve_dw_base2(const mve_dw_geom *g)
{
    return (16 / g->kw) * g->dh * g->pw;
}

static int mve_dw_dot_applies(const mve_dw_geom *g)
{
    const int32_t taps = g->kh * g->kw;
    if (taps <= 16) {
        return mve_dw_tap_offset(g, taps - 1) <= 255;
    }
    return taps <= MVE_DW_DOT_TAPS && mve_dw_tap_offset(g, 15) <= 255 &&
           mve_dw_tap_offset(g, taps - 1) - mve_dw_base2(g) <= 255;
}

static void mve_dw_dot_offsets(mve_dw_taps *t, const mve_dw_geom *geo)
{
    uint8_t off[32];
    const int32_t base2 = geo->kh * geo->kw > 16 ? mve_dw_base2(geo) : 0;
    for (int32_t k = 0; k < 32; k++) {
        const int32_t real = k < geo->kh * geo->kw;
        off[k] = (uint8_t)(k >= 16 && real ? mve_dw_tap_offset(geo, k) - base2
                                           : mve_dw_tap_offset(geo, k));
    }
    t->offs = vld1q_u8(off);
    t->offs2 = vld1q_u8(off + 16);
    t->base2 = base2;
}

/* Filters of at most 32 taps: the taps of 8 channels at a time transposed into a table, one
 * row of 16 bytes per channel (tab[h][16 * j + t % 16]: tap t, h = t / 16, of channel oc + j),
 * one predicated VLDRB of each tap's n <= 8 channels and a VSTRB.8 scatter (offsets 16 * j).
 * The table is zeroed once per call, so taps past the filter stay 0 in every row. */
#define MVE_DW_TAB_TAPS 32

static void mve_dw_tap_rows(int8_t (*tab)[128], const int8_t *w, int32_t oc_stride,
                            int32_t taps, int32_t n)
{
    const mve_pred16_t p = vctp8q((uint32_t)n);
    const uint8x16_t offs = vmulq_n_u8(vidupq_n_u8(0, 1), 16);
    for (int32_t t = 0; t < taps; t++, w += oc_stride) {
        vstrbq_scatter_offset_p_s8(&tab[t >> 4][t & 15], offs, vldrbq_z_s8(w, p), p);
    }
}

/* The dot product of one window at b with the channel's taps (two: taps 16.. too, gathered
 * at b + base2 with offs2 against wv2). */
TH_INLINE int32_t mve_dw_dot1(const int8_t *b, uint8x16_t offs, int8x16_t wv, uint8x16_t offs2,
                              int8x16_t wv2, int32_t base2, int two)
{
    const int32_t a = vmladavq_s8(vldrbq_gather_offset_s8(b, offs), wv);
    return two ? vmladavaq_s8(a, vldrbq_gather_offset_s8(b + base2, offs2), wv2) : a;
}

/* The taps as the dot bodies take them (by value: in registers). */
#define DOT_TAPS_PARAMS                                                                        \
    uint8x16_t offs, int8x16_t wv, uint8x16_t offs2, int8x16_t wv2, int32_t base2, int two
#define DOT_TAPS offs, wv, offs2, wv2, base2, two

/* Outputs narrower than eight, at most this many in all: the output pixels as one sequence,
 * four a step, each window's offset in the plane from a table made once per call. */
#define MVE_DW_FLAT_MAX 512

static void mve_dw_flat_table(uint16_t *tab, const mve_dw_geom *geo,
                              const th_dims *output_dims)
{
    int32_t i = 0;
    for (int32_t oy = 0; oy < output_dims->h; oy++) {
        for (int32_t ox = 0; ox < output_dims->w; ox++) {
            tab[i++] = (uint16_t)(oy * geo->sh * geo->pw + ox * geo->sw);
        }
    }
    for (int32_t j = 0; j < 3; j++) {
        tab[i + j] = tab[i - 1]; /* the last step's unused lanes read a valid window */
    }
}

TH_INLINE void
mve_dw_dot_flat_t(const int8_t *plane, const uint16_t *tab, DOT_TAPS_PARAMS,
                  int32_t oc_stride, int32_t start, int32_t multiplier, int32_t shift,
                  const th_mve_out *o, const th_dims *output_dims, int8_t *out, const int neg)
{
    const int32_t total = output_dims->h * output_dims->w;
    const th_mve_out oc = *o; /* in registers: the output stores may alias *o */
    const int32x4_t init = vdupq_n_s32(start);
    const uint32x4_t out_offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)oc_stride);
    for (int32_t q = 0; q < total; q += 4, out += 4 * oc_stride, tab += 4) {
        const int32x4_t acc = lanes4(
            mve_dw_dot1(plane + tab[0], DOT_TAPS), mve_dw_dot1(plane + tab[1], DOT_TAPS),
            mve_dw_dot1(plane + tab[2], DOT_TAPS), mve_dw_dot1(plane + tab[3], DOT_TAPS));
        const int32x4_t v =
            th_mve_requantize_n(vaddq_s32(acc, init), multiplier, shift, neg, &oc);
        if (q + 4 <= total) {
            vstrbq_scatter_offset_s32(out, out_offs, v);
        } else {
            vstrbq_scatter_offset_p_s32(out, out_offs, v, vctp32q((uint32_t)(total - q)));
        }
    }
}

/* The same with the offsets computed as it goes (any size). */
TH_INLINE void
mve_dw_dot_walk_t(const int8_t *plane, const mve_dw_geom *geo, DOT_TAPS_PARAMS,
                  int32_t oc_stride, int32_t start, int32_t multiplier, int32_t shift,
                  const th_mve_out *o, const th_dims *output_dims, int8_t *out, const int neg)
{
    const int32_t ow = output_dims->w, sw = geo->sw, ystep = geo->sh * geo->pw;
    const int32_t total = output_dims->h * ow;
    const th_mve_out oc = *o; /* in registers: the output stores may alias *o */
    const int32x4_t init = vdupq_n_s32(start);
    const uint32x4_t out_offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)oc_stride);
    const int8_t *row = plane, *b = plane;
    int32_t ox = 0;
    for (int32_t q = 0; q < total; q += 4, out += 4 * oc_stride) {
        const int32_t n = TH_MIN(4, total - q);
        int32_t a[4] = {0, 0, 0, 0};
        for (int32_t j = 0; j < n; j++) {
            a[j] = mve_dw_dot1(b, DOT_TAPS);
            if (++ox == ow) {
                ox = 0;
                row += ystep;
                b = row;
            } else {
                b += sw;
            }
        }
        const int32x4_t acc = lanes4(a[0], a[1], a[2], a[3]);
        vstrbq_scatter_offset_p_s32(
            out, out_offs,
            th_mve_requantize_n(vaddq_s32(acc, init), multiplier, shift, neg, &oc),
            vctp32q((uint32_t)n));
    }
}

TH_INLINE void
mve_dw_dot_t(const int8_t *plane, const mve_dw_geom *geo, DOT_TAPS_PARAMS,
             int32_t oc_stride, int32_t start, int32_t multiplier, int32_t shift,
             const th_mve_out *o, const th_dims *output_dims, int8_t *out, const int neg)
{
    const int32_t ow = output_dims->w, sw = geo->sw;
    const th_mve_out oc = *o; /* in registers: the output stores may alias *o */
    const int32x4_t init = vdupq_n_s32(start);
    const uint32x4_t out_offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)oc_stride);
    for (int32_t oy = 0; oy < output_dims->h; oy++) {
        const int8_t *b = plane + (int64_t)oy * geo->sh * geo->pw;
        int8_t *o_row = out + (int64_t)oy * ow * oc_stride;
        int32_t ox = 0;
        for (; ox + 4 <= ow; ox += 4, b += 4 * sw) {
            const int32x4_t acc =
                lanes4(mve_dw_dot1(b, DOT_TAPS), mve_dw_dot1(b + sw, DOT_TAPS),
                       mve_dw_dot1(b + 2 * sw, DOT_TAPS), mve_dw_dot1(b + 3 * sw, DOT_TAPS));
            vstrbq_scatter_offset_s32(
                o_row + (int64_t)ox * oc_stride, out_offs,
                th_mve_requantize_n(vaddq_s32(acc, init), multiplier, shift, neg, &oc));
        }
        if (ox < ow) {
            /* the last 1-3: lanes past them repeat the last window (stored off) */
            const int32_t n = ow - ox;
            const int32_t s1 = n > 1 ? sw : 0, s2 = n > 2 ? 2 * sw : s1;
            const int32x4_t acc =
                lanes4(mve_dw_dot1(b, DOT_TAPS), mve_dw_dot1(b + s1, DOT_TAPS),
                       mve_dw_dot1(b + s2, DOT_TAPS), mve_dw_dot1(b + s2, DOT_TAPS));
            vstrbq_scatter_offset_p_s32(
                o_row + (int64_t)ox * oc_stride, out_offs,
                th_mve_requantize_n(vaddq_s32(acc, init), multiplier, shift, neg, &oc),
                vctp32q((uint32_t)n));
        }
    }
}

/* Out-of-line instances (their own registers) of the 17-32 taps paths (taps from a
 * mve_dw_taps, a second gather): flattened (tab), walked (outputs narrower than 8) or by
 * rows; and the walk of up to 16 taps (taps in registers). Up to 16 taps flattened or by
 * rows: mve_dw_dot_flat and mve_dw_dot below, which loop over the channels themselves. */
#define MVE_DW_DOT2_INSTANCE(name2, body, where, where_arg)                                   \
    static void __attribute__((noinline))                                                     \
    name2(const int8_t *plane, where, const mve_dw_taps *t, int32_t oc_stride, int32_t start, \
          int32_t multiplier, int32_t shift, const th_mve_out *o, const th_dims *output_dims, \
          int8_t *out)                                                                         \
    {                                                                                          \
        body(plane, where_arg, t->offs, t->wv, t->offs2, t->wv2, t->base2, 1, oc_stride,      \
             start, multiplier, shift, o, output_dims, out, shift < 0);                        \
    }
MVE_DW_DOT2_INSTANCE(mve_dw_dot2_flat, mve_dw_dot_flat_t, const uint16_t *tab, tab)
MVE_DW_DOT2_INSTANCE(mve_dw_dot2_walk, mve_dw_dot_walk_t, const mve_dw_geom *geo, geo)
MVE_DW_DOT2_INSTANCE(mve_dw_dot2, mve_dw_dot_t, const mve_dw_geom *geo, geo)
#undef MVE_DW_DOT2_INSTANCE

static void __attribute__((noinline))
mve_dw_dot_walk(const int8_t *plane, const mve_dw_geom *geo, uint8x16_t offs, int8x16_t wv,
                int32_t oc_stride, int32_t start, int32_t multiplier, int32_t shift,
                const th_mve_out *o, const th_dims *output_dims, int8_t *out)
{
    mve_dw_dot_walk_t(plane, geo, offs, wv, offs, wv, 0, 0, oc_stride, start, multiplier, shift,
                      o, output_dims, out, shift < 0);
}

/* What every channel of one call shares: the staged plane and how to stage it, the tables,
 * the filter and requantization. */
typedef struct {
    int8_t *plane;
    const mve_dw_geom *geo;
    const th_dims *input_dims;
    const th_dims *output_dims;
    const th_dw_conv_params *params;
    const th_per_channel_quant *quant;
    const int8_t *filter;
    const int32_t *bias;
    const uint16_t *flat_tab; /* narrow outputs' window offsets */
    const uint16_t *run_tab;  /* the staging run's plane offsets (run > 0) */
    int32_t run;
    int rows;   /* the interior is whole input rows */
    int contig; /* ... and the plane's rows are the input's: one contiguous run */
    int direct; /* no padding read, output apart: the windows read in the input (geo in
                 * bytes of the input: SW, DW times C, PW the input row), nothing staged */
    int8_t (*tap_tab)[128];
    th_mve_out o;
} mve_dw_call;

/* Channel oc's preparation: its input channel staged (the first of its ch_mult outputs), its
 * taps (wv: 0..15, wv2: 16..31, from the tap table, filled per 8 channels; taps <= 32) and
 * the folded start bias + input_offset * sum of its taps, returned. */
static void mve_dw_channel_stage(const mve_dw_call *k, const int8_t *in_b, int32_t oc)
{
    const int32_t mult_ch = k->params->ch_mult;
    if (mult_ch == 1 || oc % mult_ch == 0) {
        const int32_t ic = mult_ch == 1 ? oc : oc / mult_ch;
        if (k->contig) {
            const uint16x8_t offs =
                vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)k->input_dims->c);
            gather_channel(k->plane + (int64_t)k->params->padding.h * k->geo->pw, in_b + ic,
                           mve_dw_staged_rows(k->geo, k->input_dims, k->params) *
                               k->input_dims->w,
                           k->input_dims->c, offs);
        } else if (k->run > 0) {
            mve_dw_stage_run(k->plane, k->run_tab, k->run, in_b, k->input_dims->c, ic);
        } else if (k->rows) {
            mve_dw_stage_rows(k->plane, k->geo, in_b, k->input_dims, k->params, ic);
        } else {
            mve_dw_stage(k->plane, k->geo, in_b, k->input_dims, k->params, ic);
        }
    }
}

/* The folded start of channel oc given the sum of its taps. */
TH_INLINE int32_t mve_dw_start(const mve_dw_call *k, int32_t oc, uint32_t wsum)
{
    return (int32_t)((k->bias != NULL ? (uint32_t)k->bias[oc] : 0u) +
                     (uint32_t)k->params->input_offset * wsum);
}

/* (stage 0: the windows are read in the input, nothing staged) */
TH_INLINE int32_t mve_dw_channel_t(const mve_dw_call *k, const int8_t *in_b, int32_t oc,
                                   int8x16_t *wv, int8x16_t *wv2, const int stage)
{
    const int32_t oc_total = k->output_dims->c;
    const int32_t taps = k->geo->kh * k->geo->kw;
    if (stage) {
        mve_dw_channel_stage(k, in_b, oc);
    }
    uint32_t wsum = 0;
    if (taps <= MVE_DW_TAB_TAPS) {
        if (oc % 8 == 0) {
            mve_dw_tap_rows(k->tap_tab, k->filter + oc, oc_total, taps, TH_MIN(8, oc_total - oc));
        }
        *wv = vldrbq_s8(&k->tap_tab[0][16 * (oc % 8)]);
        *wv2 = vldrbq_s8(&k->tap_tab[1][16 * (oc % 8)]);
        wsum = (uint32_t)vaddvaq_s8(vaddvq_s8(*wv), *wv2);
    } else {
        *wv = vdupq_n_s8(0);
        *wv2 = *wv;
        for (int32_t t = 0; t < taps; t++) {
            wsum += (uint32_t)(int32_t)k->filter[(int64_t)t * oc_total + oc];
        }
    }
    return mve_dw_start(k, oc, wsum);
}

TH_INLINE int32_t mve_dw_channel(const mve_dw_call *k, const int8_t *in_b, int32_t oc,
                                 int8x16_t *wv, int8x16_t *wv2)
{
    return mve_dw_channel_t(k, in_b, oc, wv, wv2, 1);
}

/* ---- 3x3, stride 1, dilation 1, planes at most 84 wide: 2x2 output blocks -----------------
 * The block's four outputs (oy, ox), (oy, ox + 1), (oy + 1, ox), (oy + 1, ox + 1) read the 4x4
 * window at plane + oy * PW + ox: one VLDRB.8 gather (lane 4r + c: offset r * PW + c) and one
 * VMLADAV per output against the channel's taps placed at that output's position in the
 * window (lane 4(ky + dy) + kx + dx, 0 elsewhere: four gathers from the channel's tap-table
 * row, whose lane 15 is 0, once per channel). A block past the last row or column predicates
 * that window row or column off (nothing is read past the plane) and its outputs off at the
 * store (offsets 0, C, OW * C, OW * C + C). */
#define MVE_DW_2X2_MAX_PW 84

/* A predicate of constant bits the compiler cannot see: gcc 12 (-O2) folded the 32-bit-lane
 * store predicate 0x0f0f (lanes 0 and 2) into all lanes. */
TH_INLINE mve_pred16_t mve_pred_bits(uint32_t bits)
{
    mve_pred16_t p = (mve_pred16_t)bits;
#if defined(__GNUC__)
    __asm__("" : "+r"(p));
#endif
    return p;
}

static int mve_dw_2x2_applies(const mve_dw_geom *g)
{
    return g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 &&
           g->pw <= MVE_DW_2X2_MAX_PW;
}

/* Four outputs of one block: the window gathered under p (all lanes when p is 0xffff). */
TH_INLINE int32x4_t mve_dw_block(const int8_t *b, uint8x16_t win, int8x16_t w00, int8x16_t w01,
                                 int8x16_t w10, int8x16_t w11, int32_t start, const int pred,
                                 mve_pred16_t p)
{
    const int8x16_t x = pred ? vldrbq_gather_offset_z_s8(b, win, p)
                             : vldrbq_gather_offset_s8(b, win);
    return vaddq_n_s32(lanes4(vmladavq_s8(x, w00), vmladavq_s8(x, w01), vmladavq_s8(x, w10),
                              vmladavq_s8(x, w11)),
                       start);
}

TH_INLINE void mve_dw_2x2_channel(const int8_t *plane, const mve_dw_geom *geo, uint8x16_t win,
                                  int8x16_t w00, int8x16_t w01, int8x16_t w10, int8x16_t w11,
                                  int32_t oc_stride, int32_t start, int32_t multiplier,
                                  int32_t shift, const th_mve_out *o,
                                  const th_dims *output_dims, int8_t *out, const int neg)
{
    const int32_t oh = output_dims->h, ow = output_dims->w, pw = geo->pw;
    const th_mve_out oc = *o; /* in registers: the output stores may alias *o */
    uint32x4_t out_offs = vdupq_n_u32(0);
    out_offs = vsetq_lane_u32((uint32_t)oc_stride, out_offs, 1);
    out_offs = vsetq_lane_u32((uint32_t)(ow * oc_stride), out_offs, 2);
    out_offs = vsetq_lane_u32((uint32_t)((ow + 1) * oc_stride), out_offs, 3);
    const int32_t nbx = ow >> 1;
    const int8_t *b_row = plane;
    int8_t *o_row = out;
    for (int32_t by = oh >> 1; by > 0; by--, b_row += 2 * pw, o_row += 2 * ow * oc_stride) {
        const int8_t *b = b_row;
        int8_t *op = o_row;
        for (int32_t bx = nbx; bx > 0; bx--, b += 2, op += 2 * oc_stride) {
            const int32x4_t a = mve_dw_block(b, win, w00, w01, w10, w11, start, 0, 0xffff);
            vstrbq_scatter_offset_s32(op, out_offs,
                                      th_mve_requantize_n(a, multiplier, shift, neg, &oc));
        }
    }
    /* an odd last column: window column 3 and the outputs of column ox + 1 off */
    if (ow & 1) {
        const int8_t *b = plane + ow - 1;
        int8_t *op = out + (int64_t)(ow - 1) * oc_stride;
        for (int32_t by = oh >> 1; by > 0; by--, b += 2 * pw, op += 2 * ow * oc_stride) {
            const int32x4_t a =
                mve_dw_block(b, win, w00, w01, w10, w11, start, 1, mve_pred_bits(0x7777));
            vstrbq_scatter_offset_p_s32(op, out_offs,
                                        th_mve_requantize_n(a, multiplier, shift, neg, &oc),
                                        mve_pred_bits(0x0f0f));
        }
    }
    /* an odd last row: window row 3 and the outputs of row oy + 1 off (the corner: both) */
    if (oh & 1) {
        const int8_t *b = plane + (int64_t)(oh - 1) * pw;
        int8_t *op = out + (int64_t)(oh - 1) * ow * oc_stride;
        for (int32_t ox = 0; ox < ow; ox += 2, b += 2, op += 2 * oc_stride) {
            const int last = ox + 1 >= ow;
            const int32x4_t a = mve_dw_block(b, win, w00, w01, w10, w11, start, 1,
                                             mve_pred_bits(last ? 0x0777 : 0x0fff));
            vstrbq_scatter_offset_p_s32(op, out_offs,
                                        th_mve_requantize_n(a, multiplier, shift, neg, &oc),
                                        mve_pred_bits(last ? 0x000f : 0x00ff));
        }
    }
}

/* Every channel of one batch by 2x2 blocks (mve_dw_2x2_applies). */
static void __attribute__((noinline))
mve_dw_dot_2x2(const mve_dw_call *k, const int8_t *in_b, int8_t *out_b)
{
    const int32_t oc_total = k->output_dims->c;
    /* lane 4r + c: window offset r * PW + c; tap 3r + c of the first output (lane 15, past the
     * 3x3 taps, reads a 0 of the tap row) where r, c < 3 */
    const uint8x16_t lane = vidupq_n_u8(0, 1);
    const uint8x16_t r = vshrq_n_u8(lane, 2), c = vandq_u8(lane, vdupq_n_u8(3));
    const uint8x16_t winv = vaddq_u8(vmulq_n_u8(r, (uint8_t)k->geo->pw), c);
    const mve_pred16_t in3 = vcmpltq_n_s8(vreinterpretq_s8_u8(r), 3) &
                             vcmpltq_n_s8(vreinterpretq_s8_u8(c), 3);
    const uint8x16_t perm = vpselq_u8(vaddq_u8(vmulq_n_u8(r, 3), c), vdupq_n_u8(15), in3);
    for (int32_t oc = 0; oc < oc_total; oc++) {
        int8x16_t wv, wv2;
        const int32_t start = mve_dw_channel(k, in_b, oc, &wv, &wv2);
        /* the other outputs' taps: the first's moved one column (8 bits), one row (32 bits)
         * or both along the window (VSHLC; lanes 3, 7, 11 and 12-15 of the first are 0) */
        uint32_t carry = 0;
        const int8x16_t w00 = vldrbq_gather_offset_s8(&k->tap_tab[0][16 * (oc % 8)], perm);
        const int8x16_t w01 = vshlcq_s8(w00, &carry, 8);
        carry = 0;
        const int8x16_t w10 = vshlcq_s8(w00, &carry, 32);
        carry = 0;
        const int8x16_t w11 = vshlcq_s8(w01, &carry, 32);
        const int32_t m = k->quant->multiplier[oc], sh = k->quant->shift[oc];
        if (sh < 0) {
            mve_dw_2x2_channel(k->plane, k->geo, winv, w00, w01, w10, w11, oc_total, start, m,
                               sh, &k->o, k->output_dims, out_b + oc, 1);
        } else {
            mve_dw_2x2_channel(k->plane, k->geo, winv, w00, w01, w10, w11, oc_total, start, m,
                               sh, &k->o, k->output_dims, out_b + oc, 0);
        }
    }
}

/* ---- more than 32 taps (5x15, 7x7, 12x5, 14x13 dilated, ...): by groups of taps -----------
 * The taps are split into groups of at most 16: the filter's rows (contiguous in the plane when
 * DW is 1) or runs of 16 taps in raster order (any dilation; each run within 256 bytes of the
 * plane from its first tap). Per output and group one VLDRB of the group's bytes (a row: one
 * contiguous load, zero-predicated where it would end past the plane; else a VLDRB.8 gather at
 * the group's offsets, lanes past the group at offset 0) and one VMLADAVA against the group's
 * weights (a per-channel table of 16-byte rows, 0 past the group), four outputs of the
 * flattened output plane a step sharing each group's weights; the four sums requantized as one
 * vector, the last step predicated. Raster runs are used where they are fewer gathers than
 * rows are loads (dilated rows, or at most half as many groups as rows). */
#define MVE_DW_GROUPS 16

typedef struct {
    uint8_t offs[MVE_DW_GROUPS][16]; /* gathered: lane j's offset from the group's first tap */
    int32_t delta[MVE_DW_GROUPS];    /* first tap's plane offset minus the previous group's */
    int32_t len;                     /* taps per group (group gi: taps gi * len, ...) */
    int32_t groups;
    int mode; /* MVE_DW_ROWS (DW 1: contiguous loads), MVE_DW_ROWS_GATHERED or MVE_DW_RUNS */
} mve_dw_groups;

#define MVE_DW_ROWS 0
#define MVE_DW_ROWS_GATHERED 1 /* the rows at offsets kx * DW: the groups' common offsets */
#define MVE_DW_RUNS 2

/* The groups of a filter as rows (per_row) or runs of 16 taps; 0 if they do not fit (more
 * than 16 groups or rows longer than 16 taps, or a group spanning more than 256 bytes). */
static int mve_dw_groups_fill(mve_dw_groups *t, const mve_dw_geom *g, int per_row)
{
    const int32_t taps = g->kh * g->kw, len = per_row ? g->kw : 16;
    t->len = len;
    t->groups = (taps + len - 1) / len;
    t->mode = !per_row ? MVE_DW_RUNS : g->dw > 1 ? MVE_DW_ROWS_GATHERED : MVE_DW_ROWS;
    if (t->groups > MVE_DW_GROUPS || len > 16) {
        return 0;
    }
    int32_t prev = 0;
    for (int32_t gi = 0; gi < t->groups; gi++) {
        const int32_t first = gi * len, base = mve_dw_tap_offset(g, first);
        for (int32_t j = 0; j < 16; j++) {
            const int32_t off =
                j < TH_MIN(len, taps - first) ? mve_dw_tap_offset(g, first + j) - base : 0;
            if (off > 255) {
                return 0;
            }
            t->offs[gi][j] = (uint8_t)off;
        }
        t->delta[gi] = base - prev;
        prev = base;
    }
    return 1;
}

/* The groups the filter takes (0 if neither fits): runs where they cost fewer instructions
 * than rows (about 17 per run and four outputs, 14 per row), else rows. */
static int mve_dw_groups_pick(mve_dw_groups *t, const mve_dw_geom *g)
{
    if (g->kh * g->kw <= MVE_DW_TAB_TAPS) {
        return 0;
    }
    if (mve_dw_groups_fill(t, g, 0) &&
        (17 * t->groups < 14 * g->kh || g->kw > 16 || g->kh > MVE_DW_GROUPS)) {
        return 1;
    }
    return mve_dw_groups_fill(t, g, 1);
}

/* One filter row's taps of a window at b: 16 bytes (whole), zero-predicated past KW, or
 * gathered at the row's offsets. */
#define MVE_ROW_WHOLE 0
#define MVE_ROW_PRED 1
#define MVE_ROW_GATHER 2

TH_INLINE int8x16_t mve_dw_row_taps(const int8_t *b, uint8x16_t offs, mve_pred16_t p,
                                    const int kind)
{
    return kind == MVE_ROW_WHOLE  ? vldrbq_s8(b)
           : kind == MVE_ROW_PRED ? vldrbq_z_s8(b, p)
                                  : vldrbq_gather_offset_s8(b, offs);
}

/* a_j += window j's rows . the filter rows, four windows (b0..b3), kh rows row_step apart. */
TH_INLINE void mve_dw_rows4(const int8_t *b0, const int8_t *b1, const int8_t *b2,
                            const int8_t *b3, int32_t row_step, const int8_t (*rows)[16],
                            int32_t kh, uint8x16_t offs, mve_pred16_t p, const int kind,
                            int32_t *a0, int32_t *a1, int32_t *a2, int32_t *a3)
{
    int32_t s0 = *a0, s1 = *a1, s2 = *a2, s3 = *a3;
    for (int32_t ky = 0; ky < kh;
         ky++, b0 += row_step, b1 += row_step, b2 += row_step, b3 += row_step) {
        const int8x16_t w = vldrbq_s8(rows[ky]);
        s0 = vmladavaq_s8(s0, mve_dw_row_taps(b0, offs, p, kind), w);
        s1 = vmladavaq_s8(s1, mve_dw_row_taps(b1, offs, p, kind), w);
        s2 = vmladavaq_s8(s2, mve_dw_row_taps(b2, offs, p, kind), w);
        s3 = vmladavaq_s8(s3, mve_dw_row_taps(b3, offs, p, kind), w);
    }
    *a0 = s0, *a1 = s1, *a2 = s2, *a3 = s3;
}

TH_INLINE void mve_dw_rowdot_channel(const int8_t *plane, const mve_dw_geom *geo,
                                     const mve_dw_groups *t, const int8_t (*rows)[16],
                                     int32_t oc_stride, int32_t start, int32_t multiplier,
                                     int32_t shift, const th_mve_out *o,
                                     const th_dims *output_dims, int8_t *out, const int neg,
                                     const int mode)
{
    const th_mve_out oc = *o; /* in registers: the output stores may alias *o */
    const int32_t ow = output_dims->w, total = output_dims->h * ow;
    const int32_t row_step = geo->dh * geo->pw, y_step = geo->sh * geo->pw, sw = geo->sw;
    const mve_pred16_t p = vctp8q((uint32_t)geo->kw);
    const uint8x16_t row_offs = vld1q_u8(t->offs[0]); /* (rows gathered: every row's) */
    /* contiguous rows: a window whose 16-byte reads all end inside the plane is read without
     * a predicate (bytes past KW meet weight 0) */
    const int64_t whole_end =
        (int64_t)geo->ph * geo->pw - 16 - (int64_t)(geo->kh - 1) * row_step;
    const uint32x4_t out_offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)oc_stride);
    const int8_t *row = plane, *next = plane;
    int32_t ox = 0;
    for (int32_t q = 0; q < total; q += 4, out += 4 * oc_stride) {
        const int32_t n = TH_MIN(4, total - q);
        const int8_t *b0, *b1, *b2, *b3;
        if (ox + 4 < ow) { /* four outputs inside one output row */
            b0 = next;
            b1 = b0 + sw;
            b2 = b1 + sw;
            b3 = b2 + sw;
            next = b3 + sw;
            ox += 4;
        } else {
            const int8_t *b[4];
            for (int32_t j = 0; j < 4; j++) {
                b[j] = j < n ? next : b[0];
                if (j < n && ++ox == ow) {
                    ox = 0;
                    row += y_step;
                    next = row;
                } else if (j < n) {
                    next += sw;
                }
            }
            b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
        }
        int32_t a0 = start, a1 = start, a2 = start, a3 = start;
        if (mode == MVE_DW_ROWS_GATHERED) {
            mve_dw_rows4(b0, b1, b2, b3, row_step, rows, geo->kh, row_offs, p, MVE_ROW_GATHER,
                         &a0, &a1, &a2, &a3);
        } else if (mode == MVE_DW_RUNS) {
            for (int32_t gi = 0; gi < t->groups; gi++) {
                const int32_t d = t->delta[gi];
                b0 += d, b1 += d, b2 += d, b3 += d;
                const uint8x16_t offs = vld1q_u8(t->offs[gi]);
                const int8x16_t w = vldrbq_s8(rows[gi]);
                a0 = vmladavaq_s8(a0, vldrbq_gather_offset_s8(b0, offs), w);
                a1 = vmladavaq_s8(a1, vldrbq_gather_offset_s8(b1, offs), w);
                a2 = vmladavaq_s8(a2, vldrbq_gather_offset_s8(b2, offs), w);
                a3 = vmladavaq_s8(a3, vldrbq_gather_offset_s8(b3, offs), w);
            }
        } else if (b3 - plane <= whole_end) { /* (b3: the last window) */
            mve_dw_rows4(b0, b1, b2, b3, row_step, rows, geo->kh, row_offs, p, MVE_ROW_WHOLE,
                         &a0, &a1, &a2, &a3);
        } else {
            mve_dw_rows4(b0, b1, b2, b3, row_step, rows, geo->kh, row_offs, p, MVE_ROW_PRED,
                         &a0, &a1, &a2, &a3);
        }
        const int32x4_t v =
            th_mve_requantize_n(lanes4(a0, a1, a2, a3), multiplier, shift, neg, &oc);
        if (n == 4) {
            vstrbq_scatter_offset_s32(out, out_offs, v);
        } else {
            vstrbq_scatter_offset_p_s32(out, out_offs, v, vctp32q((uint32_t)n));
        }
    }
}

/* Every channel of one batch by groups of taps (t: mve_dw_groups_pick): the channel's taps
 * into the tap table's 256 bytes as 16-byte rows, one per group, then its outputs. */
static void __attribute__((noinline))
mve_dw_rowdot(const mve_dw_call *k, const mve_dw_groups *t, const int8_t *in_b, int8_t *out_b)
{
    const int32_t oc_total = k->output_dims->c;
    int8_t (*rows)[16] = (int8_t (*)[16])(void *)k->tap_tab;
    th_nn_mve_fill(&rows[0][0], 0, 16 * MVE_DW_GROUPS); /* taps past each group: 0 */
    /* a group's taps, 8 a gather, C apart in the filter (offsets fit 16 bits: C < 4096) */
    const uint16x8_t offs = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)oc_total);
    for (int32_t oc = 0; oc < oc_total; oc++) {
        mve_dw_channel_stage(k, in_b, oc);
        int32_t wsum = 0;
        for (int32_t gi = 0, left = k->geo->kh * k->geo->kw; gi < t->groups; gi++) {
            const int32_t n = TH_MIN(t->len, left);
            const int8_t *w = k->filter + (int64_t)gi * t->len * oc_total + oc;
            if (oc_total < 4096) {
                const int16x8_t lo = vldrbq_gather_offset_z_s16(w, offs, vctp16q((uint32_t)n));
                vstrbq_s16(rows[gi], lo);
                wsum = vaddvaq_s16(wsum, lo);
                if (n > 8) {
                    const int16x8_t hi = vldrbq_gather_offset_z_s16(
                        w + 8 * oc_total, offs, vctp16q((uint32_t)(n - 8)));
                    vstrbq_s16(rows[gi] + 8, hi);
                    wsum = vaddvaq_s16(wsum, hi);
                }
            } else {
                for (int32_t j = 0; j < n; j++) {
                    rows[gi][j] = w[(int64_t)j * oc_total];
                    wsum += w[(int64_t)j * oc_total];
                }
            }
            left -= n;
        }
        const int32_t start = mve_dw_start(k, oc, (uint32_t)wsum);
        const int32_t m = k->quant->multiplier[oc], sh = k->quant->shift[oc];
        const int8_t (*r)[16] = (const int8_t (*)[16])rows;
        if (t->mode == MVE_DW_RUNS) {
            mve_dw_rowdot_channel(k->plane, k->geo, t, r, oc_total, start, m, sh, &k->o,
                                  k->output_dims, out_b + oc, sh < 0, MVE_DW_RUNS);
        } else if (t->mode == MVE_DW_ROWS_GATHERED) {
            mve_dw_rowdot_channel(k->plane, k->geo, t, r, oc_total, start, m, sh, &k->o,
                                  k->output_dims, out_b + oc, sh < 0, MVE_DW_ROWS_GATHERED);
        } else {
            mve_dw_rowdot_channel(k->plane, k->geo, t, r, oc_total, start, m, sh, &k->o,
                                  k->output_dims, out_b + oc, sh < 0, MVE_DW_ROWS);
        }
    }
}

/* Every channel of one batch through the up-to-16-taps dot path, flattened (flat) or by rows:
 * the per-channel work inline in one loop (no call per channel). */
TH_INLINE void mve_dw_dot_channels(const mve_dw_call *k, uint8x16_t offs, const int8_t *in_b,
                                   int8_t *out_b, const int flat, const int direct)
{
    const int32_t oc_total = k->output_dims->c, mult_ch = k->params->ch_mult;
    for (int32_t oc = 0; oc < oc_total; oc++) {
        int8x16_t wv, wv2;
        const int32_t start = mve_dw_channel_t(k, in_b, oc, &wv, &wv2, !direct);
        const int32_t m = k->quant->multiplier[oc], sh = k->quant->shift[oc];
        /* (direct: the input channel itself, the windows' offsets in input bytes) */
        const int8_t *plane = direct ? in_b + (mult_ch == 1 ? oc : oc / mult_ch) : k->plane;
        if (flat && sh < 0) {
            mve_dw_dot_flat_t(k->plane, k->flat_tab, offs, wv, offs, wv, 0, 0, oc_total, start,
                              m, sh, &k->o, k->output_dims, out_b + oc, 1);
        } else if (flat) {
            mve_dw_dot_flat_t(k->plane, k->flat_tab, offs, wv, offs, wv, 0, 0, oc_total, start,
                              m, sh, &k->o, k->output_dims, out_b + oc, 0);
        } else if (sh < 0) {
            mve_dw_dot_t(plane, k->geo, offs, wv, offs, wv, 0, 0, oc_total, start, m, sh,
                         &k->o, k->output_dims, out_b + oc, 1);
        } else {
            mve_dw_dot_t(plane, k->geo, offs, wv, offs, wv, 0, 0, oc_total, start, m, sh,
                         &k->o, k->output_dims, out_b + oc, 0);
        }
    }
}

static void __attribute__((noinline))
mve_dw_dot_flat(const mve_dw_call *k, uint8x16_t offs, const int8_t *in_b, int8_t *out_b)
{
    mve_dw_dot_channels(k, offs, in_b, out_b, 1, 0);
}

static void __attribute__((noinline))
mve_dw_dot(const mve_dw_call *k, uint8x16_t offs, const int8_t *in_b, int8_t *out_b)
{
    mve_dw_dot_channels(k, offs, in_b, out_b, 0, 0);
}

/* The same reading the windows in the input (k->direct). */
static void __attribute__((noinline))
mve_dw_dot_direct(const mve_dw_call *k, uint8x16_t offs, const int8_t *in_b, int8_t *out_b)
{
    mve_dw_dot_channels(k, offs, in_b, out_b, 0, 1);
}

#undef DOT_TAPS
#undef DOT_TAPS_PARAMS

static void __attribute__((noinline))
mve_dw_3x3_s1(const int8_t *plane, const mve_dw_geom *geo, const int8_t *w, int32_t oc_stride,
              int32_t start, int32_t multiplier, int32_t shift, const th_mve_out *o,
              const th_dims *output_dims, int8_t *out)
{
    mve_dw_rows(plane, geo, w, oc_stride, start, multiplier, shift, o, output_dims, out, 3, 3,
                1, 1);
}

static void __attribute__((noinline))
mve_dw_3x3_s2(const int8_t *plane, const mve_dw_geom *geo, const int8_t *w, int32_t oc_stride,
              int32_t start, int32_t multiplier, int32_t shift, const th_mve_out *o,
              const th_dims *output_dims, int8_t *out)
{
    mve_dw_rows(plane, geo, w, oc_stride, start, multiplier, shift, o, output_dims, out, 3, 3,
                2, 1);
}

static void __attribute__((noinline))
mve_dw_any(const int8_t *plane, const mve_dw_geom *geo, const int8_t *w, int32_t oc_stride,
           int32_t start, int32_t multiplier, int32_t shift, const th_mve_out *o,
           const th_dims *output_dims, int8_t *out)
{
    mve_dw_rows(plane, geo, w, oc_stride, start, multiplier, shift, o, output_dims, out,
                geo->kh, geo->kw, geo->sw, geo->dw);
}

void th_nn_mve_dw_conv_s8(const th_context *ctx, const th_dw_conv_params *params,
                          const th_per_channel_quant *quant, const th_dims *input_dims,
                          const int8_t *input, const th_dims *filter_dims,
                          const int8_t *filter, const int32_t *bias,
                          const th_dims *output_dims, int8_t *output)
{
    const mve_dw_geom geo = mve_dw_geometry(params, filter_dims, output_dims);
    int8_t *plane = (int8_t *)ctx->buf;
    const int32_t oc_total = output_dims->c;
    const int32_t taps = geo.kh * geo.kw;
    const th_mve_out o = {params->output_offset, params->activation.min,
                          params->activation.max};
    const int s1 = geo.kh == 3 && geo.kw == 3 && geo.sw == 1 && geo.dw == 1;
    const int s2 = geo.kh == 3 && geo.kw == 3 && geo.sw == 2 && geo.dw == 1;
    /* rows shorter than two vectors: the flattened loop (s1 rows of 8+ keep the row loop's
     * 8-output block) */
    const int narrow = s1 ? output_dims->w < 8 : output_dims->w < 16;
    const int dot = mve_dw_dot_applies(&geo);
    mve_dw_taps taps_v;
    memset(&taps_v, 0, sizeof taps_v);
    if (dot) {
        mve_dw_dot_offsets(&taps_v, &geo);
    }
    /* the narrow outputs' windows, then the staging run's table; or (more than 32 taps: no
     * windows table) the groups of taps, then the run's table */
    union {
        uint16_t flat[MVE_DW_FLAT_MAX + 3];
        struct {
            mve_dw_groups groups;
            uint16_t run[MVE_DW_FLAT_MAX + 3 - (sizeof(mve_dw_groups) + 1) / 2];
        } grouped;
    } tabs;
    uint16_t *flat_tab = tabs.flat;
    mve_dw_groups *groups = &tabs.grouped.groups;
    const int grouped = mve_dw_groups_pick(groups, &geo); /* (taps > 32: no flat table) */
    /* a one-column output (K x 1 filters on [1, T, 1, C] audio shapes): one row of OH
     * outputs below, no table of windows */
    const int column = dot && taps <= 16 && output_dims->w == 1 && output_dims->h >= 4;
    const int flat = dot && !column && output_dims->w < 8 &&
                     output_dims->h * output_dims->w <= MVE_DW_FLAT_MAX &&
                     geo.ph * geo.pw <= 65536;
    if (flat) {
        mve_dw_flat_table(flat_tab, &geo, output_dims);
    }
    int8_t tap_tab[2][128] __attribute__((aligned(16)));
    if (taps <= MVE_DW_TAB_TAPS) {
        th_nn_mve_fill(&tap_tab[0][0], 0, (int32_t)sizeof tap_tab);
    }
    const int32_t flat_n = flat ? output_dims->h * output_dims->w + 3 : 0;
    /* the rows and column dot paths read the windows straight from the input where no
     * padding is read and the output lies apart (in bytes of the input: geo_in) */
    mve_dw_geom geo_in = geo;
    geo_in.sw = geo.sw * input_dims->c;
    geo_in.dw = geo.dw * input_dims->c;
    geo_in.pw = input_dims->w * input_dims->c;
    const int direct =
        dot && taps <= 16 &&
        (column || (!flat && output_dims->w >= 8 && !mve_dw_2x2_applies(&geo) && !grouped)) &&
        params->padding.h == 0 && params->padding.w == 0 && geo.ph <= input_dims->h &&
        geo.pw <= input_dims->w && (int64_t)input_dims->w * input_dims->c * geo.sh < 65536 &&
        mve_dw_dot_applies(&geo_in) &&
        !overlaps(input, (int64_t)input_dims->n * input_dims->h * input_dims->w * input_dims->c,
                  output,
                  (int64_t)input_dims->n * output_dims->h * output_dims->w * output_dims->c);
    if (direct) {
        mve_dw_dot_offsets(&taps_v, &geo_in);
    }
    const uint8x16_t dot_offs = taps_v.offs;
    mve_dw_call k;
    k.direct = direct;
    k.plane = plane;
    k.geo = direct ? &geo_in : &geo;
    k.input_dims = input_dims;
    k.output_dims = output_dims;
    k.params = params;
    k.quant = quant;
    k.filter = filter;
    k.bias = bias;
    k.flat_tab = flat_tab;
    uint16_t *run_tab = grouped ? tabs.grouped.run : flat_tab + flat_n;
    const int32_t run_room = grouped ? (int32_t)(sizeof tabs.grouped.run / sizeof(uint16_t))
                                     : MVE_DW_FLAT_MAX + 3 - flat_n;
    k.run_tab = run_tab;
    k.rows = mve_dw_whole_rows(&geo, input_dims, params);
    k.contig = k.rows && params->padding.w == 0 && input_dims->w == geo.pw;
    k.run = k.contig || direct
                ? 0
                : mve_dw_run_table(run_tab, run_room, &geo, input_dims, params);
    k.tap_tab = tap_tab;
    k.o = o;
    if (!direct) {
        th_nn_mve_fill(plane, (int8_t)(-params->input_offset), geo.ph * geo.pw);
    }
    const int64_t in_batch = (int64_t)input_dims->h * input_dims->w * input_dims->c;
    const int64_t out_batch = (int64_t)output_dims->h * output_dims->w * oc_total;
    if (column) {
        /* A one-column output (K x 1 filters on [1, T, 1, C] audio shapes) as one row of OH
         * outputs whose windows are SH * PW apart (the rows path's stride), outputs C apart
         * as in a row. */
        mve_dw_geom col_geo = *k.geo;
        col_geo.sw = k.geo->sh * k.geo->pw;
        th_dims col_dims = *output_dims;
        col_dims.h = 1;
        col_dims.w = output_dims->h;
        k.geo = &col_geo;
        k.output_dims = &col_dims;
        for (int32_t b = 0; b < input_dims->n; b++) {
            if (direct) {
                mve_dw_dot_direct(&k, dot_offs, input + b * in_batch, output + b * out_batch);
            } else {
                mve_dw_dot(&k, dot_offs, input + b * in_batch, output + b * out_batch);
            }
        }
        return;
    }
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b =
            input + (int64_t)b * input_dims->h * input_dims->w * input_dims->c;
        int8_t *out_b = output + (int64_t)b * output_dims->h * output_dims->w * oc_total;
        if (grouped) {
            mve_dw_rowdot(&k, groups, in_b, out_b);
            continue;
        }
        if (mve_dw_2x2_applies(&geo) && !flat) { /* (narrow outputs: flattened, cheaper) */
            mve_dw_dot_2x2(&k, in_b, out_b);
            continue;
        }
        if (dot && taps <= 16 && flat) {
            mve_dw_dot_flat(&k, dot_offs, in_b, out_b);
            continue;
        }
        if (direct) {
            mve_dw_dot_direct(&k, dot_offs, in_b, out_b);
            continue;
        }
        if (dot && taps <= 16 && output_dims->w >= 8) {
            mve_dw_dot(&k, dot_offs, in_b, out_b);
            continue;
        }
        for (int32_t oc = 0; oc < oc_total; oc++) {
            int8x16_t wv, wv2;
            const int32_t start = mve_dw_channel(&k, in_b, oc, &wv, &wv2);
            const int32_t m = quant->multiplier[oc], sh = quant->shift[oc];
            if (dot) {
                taps_v.wv = wv;
                taps_v.wv2 = wv2;
                if (taps > 16 && flat) {
                    mve_dw_dot2_flat(plane, flat_tab, &taps_v, oc_total, start, m, sh, &o,
                                     output_dims, out_b + oc);
                } else if (taps > 16 && output_dims->w < 8) {
                    mve_dw_dot2_walk(plane, &geo, &taps_v, oc_total, start, m, sh, &o,
                                     output_dims, out_b + oc);
                } else if (taps > 16) {
                    mve_dw_dot2(plane, &geo, &taps_v, oc_total, start, m, sh, &o, output_dims,
                                out_b + oc);
                } else {
                    mve_dw_dot_walk(plane, &geo, dot_offs, wv, oc_total, start, m, sh, &o,
                                    output_dims, out_b + oc);
                }
            } else if (narrow && geo.kh == 3 && geo.kw == 3) {
                mve_dw_flat_3x3(plane, &geo, filter + oc, oc_total, start, m, sh, &o,
                                output_dims, out_b + oc);
            } else if (s1) {
                mve_dw_3x3_s1(plane, &geo, filter + oc, oc_total, start, m, sh, &o, output_dims,
                              out_b + oc);
            } else if (s2) {
                mve_dw_3x3_s2(plane, &geo, filter + oc, oc_total, start, m, sh, &o, output_dims,
                              out_b + oc);
            } else {
                mve_dw_any(plane, &geo, filter + oc, oc_total, start, m, sh, &o, output_dims,
                           out_b + oc);
            }
        }
    }
}
#endif /* TH_NN_MVE */
