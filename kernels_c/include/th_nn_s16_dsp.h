/*
 * th_nn_s16_dsp.h - the DSP dot products of the 16x8 kernels (th_fully_connected_s16,
 * th_conv_s16, th_dw_conv_s16; internal, not part of the public API).
 *
 * int16 activations pair with SMLAD directly: one 32-bit word holds two int16 inputs, and
 * SXTB16 / SXTB16 ROR 8 widen one word of four int8 weights to (w0, w2) and (w1, w3). The
 * inputs are paired to match, (x0, x2) and (x1, x3) by PKHBT / PKHTB, once per word of
 * inputs and shared by the output channels computed together.
 *
 * Exactness: TFLite Micro accumulates in int64. |x * w| <= 32768 * 128 = 2^22, so a 32-bit
 * partial sum of at most TH_S16_BLOCK = 256 products (|sum| <= 2^30) cannot overflow; the
 * helpers widen it to int64 after every block, so any length is exact (the int64 sum is
 * the exact sum: it never exceeds 2^22 * 2^31 in the models' sizes, and wraps like the
 * portable path otherwise).
 */
#ifndef TH_NN_S16_DSP_H
#define TH_NN_S16_DSP_H

#include <stdint.h>

#include "th_nn_support.h"

#if TH_NN_HAS_DSP

#define TH_S16_BLOCK 256 /* products per 32-bit partial sum (multiple of 4) */

/* acc + top(a) * top(b) (SMLATT). */
TH_INLINE int32_t th_s16_smlatt(int32_t a, int32_t b, int32_t acc)
{
#if TH_NN_DSP_NATIVE
    return __smlatt(a, b, acc);
#else
    return th_add_wrap(acc, (int32_t)(int16_t)(uint16_t)((uint32_t)a >> 16) *
                                (int32_t)(int16_t)(uint16_t)((uint32_t)b >> 16));
#endif
}

/* Four int16 inputs at x as (x0, x2) in *even and (x1, x3) in *odd (PKHBT, PKHTB: gcc 12
 * does not always fold the C forms of th_pkhbt / th_pkhtb into them). */
TH_INLINE void th_s16_load4(const int16_t *x, int32_t *even, int32_t *odd)
{
    const int32_t a = th_read_s32(x), b = th_read_s32(x + 2);
#if TH_NN_DSP_NATIVE
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(*even) : "r"(a), "r"(b));
    __asm__("pkhtb %0, %2, %1, asr #16" : "=r"(*odd) : "r"(a), "r"(b));
#else
    *even = th_pkhbt(a, b);
    *odd = th_pkhtb(a, b);
#endif
}

/* acc + the dot product of (x0, x2), (x1, x3) with the four int8 weights at w. */
TH_INLINE int32_t th_s16_mac4(int32_t even, int32_t odd, const int8_t *w, int32_t acc)
{
    const int32_t ww = th_read_s32(w);
    acc = th_smlad(even, th_sxtb16(ww), acc);
    return th_smlad(odd, th_sxtb16_ror8(ww), acc);
}

/* The 32-bit sums a[0..3] += dot(x, w + k * stride) over blk values (blk a multiple of 4,
 * at least 4, at most TH_S16_BLOCK); advances *x and *w by blk. Native: the loop in
 * assembly (gcc 12 spills the four weight rows of the C loop): per four inputs 2 LDR,
 * PKHTB, PKHBT, then per row LDR, SXTB16, SMLAD, SXTB16 ROR 8, SMLAD. Not inlined: the
 * loop takes 13 registers, which a caller's live values could leave the asm without. */
static __attribute__((noinline, unused)) void th_s16_block4(const int16_t **xp,
                                                          const int8_t **wp, int32_t stride,
                                                          int32_t blk, int32_t *a)
{
    const int16_t *x = *xp;
    const int8_t *w = *wp;
    const int16_t *const end = x + blk;
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
#if TH_NN_DSP_NATIVE
    const int32_t stride3 = 3 * stride;
    int32_t ev, od, ww, t;
    __asm__ volatile(
        "1:\n\t"
        "ldr %[od], [%[x], #4]\n\t"
        "ldr %[ev], [%[x]], #8\n\t"
        "pkhtb %[t], %[od], %[ev], asr #16\n\t"
        "pkhbt %[ev], %[ev], %[od], lsl #16\n\t"
        "ldr %[ww], [%[w], %[s]]\n\t"
        "sxtb16 %[od], %[ww]\n\t"
        "smlad %[a1], %[ev], %[od], %[a1]\n\t"
        "sxtb16 %[ww], %[ww], ror #8\n\t"
        "smlad %[a1], %[t], %[ww], %[a1]\n\t"
        "ldr %[ww], [%[w], %[s], lsl #1]\n\t"
        "sxtb16 %[od], %[ww]\n\t"
        "smlad %[a2], %[ev], %[od], %[a2]\n\t"
        "sxtb16 %[ww], %[ww], ror #8\n\t"
        "smlad %[a2], %[t], %[ww], %[a2]\n\t"
        "ldr %[ww], [%[w], %[s3]]\n\t"
        "sxtb16 %[od], %[ww]\n\t"
        "smlad %[a3], %[ev], %[od], %[a3]\n\t"
        "sxtb16 %[ww], %[ww], ror #8\n\t"
        "smlad %[a3], %[t], %[ww], %[a3]\n\t"
        "ldr %[ww], [%[w]], #4\n\t"
        "sxtb16 %[od], %[ww]\n\t"
        "smlad %[a0], %[ev], %[od], %[a0]\n\t"
        "sxtb16 %[ww], %[ww], ror #8\n\t"
        "smlad %[a0], %[t], %[ww], %[a0]\n\t"
        "cmp %[x], %[end]\n\t"
        "bne 1b\n\t"
        : [x] "+&r"(x), [w] "+&r"(w), [a0] "+&r"(a0), [a1] "+&r"(a1), [a2] "+&r"(a2),
          [a3] "+&r"(a3), [ev] "=&r"(ev), [od] "=&r"(od), [ww] "=&r"(ww), [t] "=&r"(t)
        : [end] "r"(end), [s] "r"(stride), [s3] "r"(stride3)
        : "cc", "memory");
#else
    do {
        int32_t even, odd;
        th_s16_load4(x, &even, &odd);
        x += 4;
        a0 = th_s16_mac4(even, odd, w, a0);
        a1 = th_s16_mac4(even, odd, w + stride, a1);
        a2 = th_s16_mac4(even, odd, w + 2 * stride, a2);
        a3 = th_s16_mac4(even, odd, w + 3 * stride, a3);
        w += 4;
    } while (x != end);
#endif
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
    *xp = x;
    *wp = w;
}

/* r[k] += dot(x, w + k * stride) over n values, k < 4: four weight rows sharing the
 * inputs. */
TH_INLINE void th_s16_dot4(const int16_t *x, const int8_t *w, int32_t stride, int32_t n,
                           int64_t *r)
{
    int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    while (n >= 4) {
        const int32_t blk = n < TH_S16_BLOCK ? (n & ~3) : TH_S16_BLOCK;
        n -= blk;
        int32_t a[4] = {0, 0, 0, 0};
        th_s16_block4(&x, &w, stride, blk, a);
        s0 += a[0];
        s1 += a[1];
        s2 += a[2];
        s3 += a[3];
    }
    for (int32_t i = 0; i < n; i++) {
        const int32_t xi = x[i];
        s0 += xi * w[i];
        s1 += xi * w[stride + i];
        s2 += xi * w[2 * stride + i];
        s3 += xi * w[3 * stride + i];
    }
    r[0] += s0;
    r[1] += s1;
    r[2] += s2;
    r[3] += s3;
}

/* *r0, *r1 += dot(x, w0), dot(x, w1) over n values. */
TH_INLINE void th_s16_dot2(const int16_t *x, const int8_t *w0, const int8_t *w1, int32_t n,
                           int64_t *r0, int64_t *r1)
{
    int64_t s0 = 0, s1 = 0;
    while (n >= 4) {
        int32_t blk = n < TH_S16_BLOCK ? (n & ~3) : TH_S16_BLOCK;
        n -= blk;
        int32_t a0 = 0, a1 = 0;
        for (; blk > 0; blk -= 4) {
            int32_t even, odd;
            th_s16_load4(x, &even, &odd);
            x += 4;
            a0 = th_s16_mac4(even, odd, w0, a0);
            w0 += 4;
            a1 = th_s16_mac4(even, odd, w1, a1);
            w1 += 4;
        }
        s0 += a0;
        s1 += a1;
    }
    for (int32_t i = 0; i < n; i++) {
        s0 += (int32_t)x[i] * w0[i];
        s1 += (int32_t)x[i] * w1[i];
    }
    *r0 += s0;
    *r1 += s1;
}

/* dot(x, w) over n values. */
TH_INLINE int64_t th_s16_dot1(const int16_t *x, const int8_t *w, int32_t n)
{
    int64_t s = 0;
    while (n >= 4) {
        int32_t blk = n < TH_S16_BLOCK ? (n & ~3) : TH_S16_BLOCK;
        n -= blk;
        int32_t a = 0;
        for (; blk > 0; blk -= 4) {
            int32_t even, odd;
            th_s16_load4(x, &even, &odd);
            x += 4;
            a = th_s16_mac4(even, odd, w, a);
            w += 4;
        }
        s += a;
    }
    for (int32_t i = 0; i < n; i++) {
        s += (int32_t)x[i] * w[i];
    }
    return s;
}

/* th_out_s16 in fewer instructions when the sum fits in int32 (the common case): the
 * product a * reduced (|.| < 2^46) is one SMULL, and for total = 15 - shift >= 17
 *   floor((p + 2^(total-1)) / 2^total) == floor((floor(p / 2^16) + 2^(total-17)) / 2^(total-16))
 * (2^(total-1) is a multiple of 2^16; nested floor division), all in int32 (|p / 2^16| < 2^30,
 * the rounding term <= 2^29); the result (|.| < 2^30) needs no truncation. Otherwise
 * th_out_s16 itself. */
TH_INLINE int16_t th_s16_out(int64_t acc, int32_t multiplier, int32_t shift,
                             const th_activation *act)
{
    const int32_t a = (int32_t)acc;
    const int32_t total = 15 - shift;
    if ((int64_t)a != acc || total < 17) {
        return th_out_s16(acc, multiplier, shift, act);
    }
    /* th_requantize_s64's Q15 multiplier: (m + 2^15) >> 16, 0x7FFF from m = 0x7FFF0000 on */
    const uint32_t r16 = ((uint32_t)multiplier + 0x8000u) >> 16;
    const int32_t reduced = (int32_t)(r16 < 0x7FFFu ? r16 : 0x7FFFu);
#if TH_NN_DSP_NATIVE
    int32_t lo, hi; /* SMULL (gcc would multiply acc, known equal to a, in 64 bits) */
    __asm__("smull %0, %1, %2, %3" : "=&r"(lo), "=&r"(hi) : "r"(a), "r"(reduced));
    const int32_t p16 = (int32_t)(((uint32_t)lo >> 16) | ((uint32_t)hi << 16));
#else
    const int32_t p16 = (int32_t)(((int64_t)a * reduced) >> 16);
#endif
    const int32_t r = (p16 + (1 << (total - 17))) >> (total - 16);
    return (int16_t)th_clamp(r, act->min, act->max);
}

#define TH_S16_OUT th_s16_out
#else
#define TH_S16_OUT th_out_s16
#endif /* TH_NN_HAS_DSP */

#endif /* TH_NN_S16_DSP_H */
