/*
 * th_nn_support.h - internal helpers of the tinyhost kernels (not part of the public API).
 *
 *  - th_requantize(): TFLite Micro's MultiplyByQuantizedMultiplier with double rounding,
 *    the exact form of host/tinyhost/arith/fixedpoint.py.
 *  - A fast exact requantization for the DSP paths (th_requant_fast_*), valid under
 *    conditions the kernels check once at entry.
 *  - SIMD wrappers (th_smlad, th_sxtb16, ...): ACLE intrinsics on Armv7E-M/Armv8-M with the
 *    DSP extension, plain C models of the same instructions when TH_NN_EMULATE_DSP is set
 *    (host builds that run the DSP algorithms under ASan/UBSan).
 */
#ifndef TH_NN_SUPPORT_H
#define TH_NN_SUPPORT_H

#include <stdint.h>
#include <string.h>

#include "th_nn_paths.h"
#include "th_nn_types.h"

#if TH_NN_DSP_NATIVE
#include <arm_acle.h>
#endif
#if TH_NN_MVE
#include <arm_mve.h>
#endif

#define TH_INLINE static inline __attribute__((always_inline))
#define TH_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TH_MAX(a, b) ((a) > (b) ? (a) : (b))

/* ---- exact TFLite Micro requantization (portable) ------------------------------------- */

/* gemmlowp SaturatingRoundingDoublingHighMul. */
TH_INLINE int32_t th_srdhm(int32_t a, int32_t b)
{
    if (a == b && a == INT32_MIN) {
        return INT32_MAX;
    }
    const int64_t ab = (int64_t)a * b;
    const int64_t nudge = ab >= 0 ? (INT64_C(1) << 30) : (1 - (INT64_C(1) << 30));
    /* C division truncates toward zero, as gemmlowp relies on. */
    return (int32_t)((ab + nudge) / (INT64_C(1) << 31));
}

/* th_srdhm for b >= 0 (no saturation case), as floor((a * b + 2^30) / 2^31): one 64-bit
 * product and shift (the identity th_requantize_s8 relies on). */
TH_INLINE int32_t th_srdhm_pos(int32_t a, int32_t b)
{
    return (int32_t)(((int64_t)a * b + (INT64_C(1) << 30)) >> 31);
}

/* Leading zero bits of x (32 for 0): CLZ on Arm. */
TH_INLINE int32_t th_clz32(uint32_t x)
{
    if (x == 0) {
        return 32;
    }
#if defined(__GNUC__)
    return __builtin_clz(x);
#else
    int32_t n = 0;
    while (!(x & 0x80000000u)) {
        x <<= 1;
        n++;
    }
    return n;
#endif
}

/* gemmlowp RoundingDivideByPOT, exponent in [0, 31]: rounds half away from zero. */
TH_INLINE int32_t th_rdbpot(int32_t x, int32_t exponent)
{
    const int32_t mask = (int32_t)((UINT32_C(1) << exponent) - 1u);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* MultiplyByQuantizedMultiplier (double rounding); shift in [-31, 30]. The left shift wraps
 * modulo 2^32 like the reference (fixedpoint.wrap_int32). */
TH_INLINE int32_t th_requantize(int32_t acc, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    const int32_t shifted = (int32_t)((uint32_t)acc << left);
    return th_rdbpot(th_srdhm(shifted, multiplier), right);
}

/* th_requantize + output offset, saturated to int8, for multiplier >= 0 (checked at kernel
 * entry), in fewer instructions: SRDHM as floor((a * M + 2^30) / 2^31), which equals
 * gemmlowp's nudge-and-truncate (see th_fast_rq_apply), via one 64-bit product and shift
 * (no saturation case: M >= 0 excludes a == M == INT32_MIN); then RDBPOT; the result is
 * saturated to [-256, 255] before the offset so the sum cannot overflow and clamps like
 * the exact sum would. */
TH_INLINE int32_t th_requantize_s8(int32_t acc, int32_t multiplier, int32_t shift,
                                   int32_t output_offset)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    const int32_t a = (int32_t)((uint32_t)acc << left);
    const int32_t y = (int32_t)(((int64_t)a * multiplier + (INT64_C(1) << 30)) >> 31);
    int32_t r = th_rdbpot(y, right);
    r = r < -256 ? -256 : (r > 255 ? 255 : r);
    r += output_offset;
    return r < -128 ? -128 : (r > 127 ? 127 : r);
}

TH_INLINE int32_t th_clamp(int32_t x, int32_t lo, int32_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

/* TFLite Micro's MultiplyByQuantizedMultiplier on an int64 accumulator (the 16x8 kernels;
 * host/tinyhost/arith/fixedpoint.py multiply_by_quantized_multiplier_int64): the Q31
 * multiplier rounded to Q15 (0x7FFF at most), the product rounded half up by 15 - shift
 * bits. For multiplier >= 0 and shift in [-31, 7] (checked at kernel entry). The product
 * wraps (unsigned) and the result is truncated to int32, as TFLM's build does. */
TH_INLINE int32_t th_requantize_s64(int64_t acc, int32_t multiplier, int32_t shift)
{
    const int64_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int32_t total = 15 - shift;
    const uint64_t product = (uint64_t)acc * (uint64_t)reduced + (UINT64_C(1) << (total - 1));
    return (int32_t)(uint32_t)(uint64_t)((int64_t)product >> total);
}

/* int64 add that wraps (an accumulator plus an int64 bias, as defined C). */
TH_INLINE int64_t th_add_wrap64(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* An int64 bias element: the interpreter's constants are only word aligned (LDRD needs no
 * more on Cortex-M), so read it without assuming 8-byte alignment. */
TH_INLINE int64_t th_load_s64(const int64_t *base, int32_t index)
{
    int64_t v;
    memcpy(&v, (const uint8_t *)base + (size_t)index * sizeof v, sizeof v);
    return v;
}

/* The checks the 16x8 kernels share: no offsets (zero points 0), an int16 activation range,
 * per-channel multipliers >= 0 with shifts in [-31, 7]. */
TH_INLINE int th_nn_s16_quant_ok(int32_t input_offset, int32_t output_offset,
                                 const th_activation *act, const th_per_channel_quant *quant,
                                 int32_t channels)
{
    if (input_offset != 0 || output_offset != 0 || act->min < -32768 || act->max > 32767 ||
        act->min > act->max || quant->multiplier == NULL || quant->shift == NULL) {
        return 0;
    }
    for (int32_t c = 0; c < channels; c++) {
        if (quant->multiplier[c] < 0 || quant->shift[c] < -31 || quant->shift[c] > 7) {
            return 0;
        }
    }
    return 1;
}

/* sum of x[i] * w[i] for i < n (16x8 dot product; int64 so any n is exact). */
TH_INLINE int64_t th_dot_s16_s8(const int16_t *x, const int8_t *w, int32_t n)
{
    int64_t acc = 0;
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        acc += (int32_t)x[i] * w[i];
        acc += (int32_t)x[i + 1] * w[i + 1];
        acc += (int32_t)x[i + 2] * w[i + 2];
        acc += (int32_t)x[i + 3] * w[i + 3];
    }
    for (; i < n; i++) {
        acc += (int32_t)x[i] * w[i];
    }
    return acc;
}

/* The taps [*lo, *hi) of a window starting at `start` (may be negative) with `k` taps
 * `dil` apart that fall inside [0, size). */
TH_INLINE void th_nn_tap_range(int32_t start, int32_t k, int32_t dil, int32_t size,
                               int32_t *lo, int32_t *hi)
{
    const int32_t first = start < 0 ? (-start + dil - 1) / dil : 0;
    const int32_t last = size - start <= 0 ? 0 : (size - start + dil - 1) / dil;
    *lo = first;
    *hi = last < k ? last : k;
}

/* The 16x8 epilogue: requantize, clamp, store as int16. */
TH_INLINE int16_t th_out_s16(int64_t acc, int32_t multiplier, int32_t shift,
                             const th_activation *act)
{
    return (int16_t)th_clamp(th_requantize_s64(acc, multiplier, shift), act->min, act->max);
}


/* Requantized value + output offset, clamped to the activation range (int64: no overflow
 * even for extreme requantized values). */
TH_INLINE int8_t th_out_s8(int32_t requantized, int32_t output_offset, int32_t act_min,
                           int32_t act_max)
{
    const int64_t v = (int64_t)requantized + output_offset;
    return (int8_t)(v < act_min ? act_min : (v > act_max ? act_max : v));
}

/* Wrapping int32 add: accumulators that TFLM keeps in int32 (models never overflow them;
 * wrapping keeps random tests defined instead of UB). */
TH_INLINE int32_t th_add_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* ---- unaligned little-endian loads and stores (compile to single ldr/str on Cortex-M) -- */

TH_INLINE int32_t th_read_s32(const void *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

TH_INLINE void th_write_s32(void *p, int32_t v)
{
    memcpy(p, &v, sizeof v);
}

TH_INLINE void th_write_s16(void *p, int16_t v)
{
    memcpy(p, &v, sizeof v);
}

/* ---- DSP instruction models ------------------------------------------------------------ */
#if TH_NN_DSP_NATIVE

TH_INLINE int32_t th_smlad(int32_t a, int32_t b, int32_t acc)
{
    return __smlad((uint32_t)a, (uint32_t)b, acc);
}
TH_INLINE int32_t th_smlabb(int32_t a, int32_t b, int32_t acc)
{
    return __smlabb(a, b, acc);
}
TH_INLINE int32_t th_smlatb(int32_t a, int32_t b, int32_t acc)
{
    return __smlatb(a, b, acc);
}
TH_INLINE int32_t th_smlabt(int32_t a, int32_t b, int32_t acc)
{
    return __smlabt(a, b, acc);
}
/* (sign-extended byte 0, byte 2) */
TH_INLINE int32_t th_sxtb16(int32_t x)
{
    return (int32_t)__sxtb16((uint32_t)x);
}
/* (byte 1, byte 3). Inline asm: gcc 12 does not fold a C rotate into SXTB16. */
TH_INLINE int32_t th_sxtb16_ror8(int32_t x)
{
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}
/* halfwords of a plus sign-extended bytes 0 and 2 of x */
TH_INLINE int32_t th_sxtab16(int32_t a, int32_t x)
{
    return (int32_t)__sxtab16((uint32_t)a, (uint32_t)x);
}
TH_INLINE int32_t th_sxtab16_ror8(int32_t a, int32_t x)
{
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
    return r;
}
/* halfwords of a plus zero-extended bytes 0 and 2 of x (bytes 1 and 3 with _ror8) */
TH_INLINE uint32_t th_uxtab16(uint32_t a, uint32_t x)
{
    uint32_t r;
    __asm__("uxtab16 %0, %1, %2" : "=r"(r) : "r"(a), "r"(x));
    return r;
}
TH_INLINE uint32_t th_uxtab16_ror8(uint32_t a, uint32_t x)
{
    uint32_t r;
    __asm__("uxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
    return r;
}
TH_INLINE int32_t th_sadd16(int32_t a, int32_t b)
{
    return (int32_t)__sadd16((uint32_t)a, (uint32_t)b);
}
/* (bottom of a, bottom of b) and (top of a, top of b): one PKHBT / PKHTB each. Written as
 * asm because gcc does not always find them in the equivalent C mask-and-shift forms. */
TH_INLINE int32_t th_pkhbt(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
TH_INLINE int32_t th_pkhtb(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhtb %0, %2, %1, asr #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
TH_INLINE int32_t th_ssat8(int32_t x)
{
    return __ssat(x, 8);
}
/* acc + ((a * b + 2^31) >> 32): SMMLAR (no ACLE intrinsic). */
TH_INLINE int32_t th_smmlar(int32_t a, int32_t b, int32_t acc)
{
    int32_t r;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
    return r;
}

#elif TH_NN_HAS_DSP /* C models for host tests of the DSP algorithms */

TH_INLINE int32_t th_lo16(int32_t x)
{
    return (int16_t)(uint16_t)((uint32_t)x & 0xFFFFu);
}
TH_INLINE int32_t th_hi16(int32_t x)
{
    return (int16_t)(uint16_t)((uint32_t)x >> 16);
}
TH_INLINE int32_t th_pack16(int32_t lo, int32_t hi)
{
    return (int32_t)(((uint32_t)hi << 16) | ((uint32_t)lo & 0xFFFFu));
}
TH_INLINE int32_t th_smlad(int32_t a, int32_t b, int32_t acc)
{
    return th_add_wrap(acc, th_lo16(a) * th_lo16(b) + th_hi16(a) * th_hi16(b));
}
TH_INLINE int32_t th_smlabb(int32_t a, int32_t b, int32_t acc)
{
    return th_add_wrap(acc, th_lo16(a) * th_lo16(b));
}
TH_INLINE int32_t th_smlatb(int32_t a, int32_t b, int32_t acc)
{
    return th_add_wrap(acc, th_hi16(a) * th_lo16(b));
}
TH_INLINE int32_t th_smlabt(int32_t a, int32_t b, int32_t acc)
{
    return th_add_wrap(acc, th_lo16(a) * th_hi16(b));
}
TH_INLINE int32_t th_sxtb16(int32_t x)
{
    const uint32_t u = (uint32_t)x;
    return th_pack16((int8_t)(uint8_t)(u & 0xFFu), (int8_t)(uint8_t)((u >> 16) & 0xFFu));
}
TH_INLINE int32_t th_sxtb16_ror8(int32_t x)
{
    const uint32_t u = (uint32_t)x;
    return th_pack16((int8_t)(uint8_t)((u >> 8) & 0xFFu), (int8_t)(uint8_t)(u >> 24));
}
TH_INLINE int32_t th_sadd16(int32_t a, int32_t b)
{
    return th_pack16(th_lo16(a) + th_lo16(b), th_hi16(a) + th_hi16(b));
}
TH_INLINE int32_t th_sxtab16(int32_t a, int32_t x)
{
    return th_sadd16(a, th_sxtb16(x));
}
TH_INLINE int32_t th_sxtab16_ror8(int32_t a, int32_t x)
{
    return th_sadd16(a, th_sxtb16_ror8(x));
}
TH_INLINE uint32_t th_uxtab16(uint32_t a, uint32_t x)
{
    return ((a + (x & 0xFFu)) & 0xFFFFu) | ((a & 0xFFFF0000u) + (x & 0x00FF0000u));
}
TH_INLINE uint32_t th_uxtab16_ror8(uint32_t a, uint32_t x)
{
    return th_uxtab16(a, (x >> 8) | (x << 24));
}
TH_INLINE int32_t th_pkhbt(int32_t a, int32_t b)
{
    return th_pack16(th_lo16(a), th_lo16(b));
}
TH_INLINE int32_t th_pkhtb(int32_t a, int32_t b)
{
    return th_pack16(th_hi16(a), th_hi16(b));
}
TH_INLINE int32_t th_ssat8(int32_t x)
{
    return th_clamp(x, -128, 127);
}
TH_INLINE int32_t th_smmlar(int32_t a, int32_t b, int32_t acc)
{
    const int64_t p = (int64_t)a * b + (INT64_C(1) << 31);
    return th_add_wrap(acc, (int32_t)(p >> 32));
}

#endif /* DSP models */

/* ---- fast exact requantization (DSP paths) ---------------------------------------------
 *
 * For a right shift e = -shift in [1, TH_FAST_MAX_E], a multiplier >= 0 and |acc| < 2^29:
 *     RDBPOT(SRDHM(acc, M), e) + zp == (SMMLAR(2*acc, M, R) + [acc < 0 ? -1 : 0]) >> e
 * with R = 2^(e-1) + zp * 2^e. Proof: SMMLAR(2a, M, R) = R + floor((aM + 2^30) / 2^31)
 * = R + SRDHM(a, M) (TFLM's nudge-and-truncate equals this floor), and RDBPOT(y, e) =
 * floor((y + 2^(e-1) - [y < 0]) / 2^e); y < 0 and a < 0 only disagree when y == 0, where
 * both roundings give 0. Kernels check the conditions once and fall back to th_requantize.
 */
#define TH_FAST_MAX_E 22

/* th_fast_rq (multiplier, round_zp = 2^(e-1) + zp * 2^e, e): th_nn_types.h, as prepared
 * calls carry one (th_add_prep). */

TH_INLINE th_fast_rq th_fast_rq_make(int32_t multiplier, int32_t shift, int32_t zp)
{
    th_fast_rq r;
    r.multiplier = multiplier;
    r.e = -shift;
    r.round_zp = (int32_t)((UINT32_C(1) << (r.e - 1)) + ((uint32_t)zp << r.e));
    return r;
}

/* The shift part of th_fast_rq_ok (multipliers are checked >= 0 at kernel entry). */
TH_INLINE int th_fast_shift_ok(int32_t shift)
{
    return (uint32_t)(-1 - shift) < (uint32_t)TH_FAST_MAX_E;
}

/* True when th_fast_rq_apply() is exact for this (multiplier, shift) and any accumulator
 * with |acc| <= acc_bound. */
TH_INLINE int th_fast_rq_ok(int32_t multiplier, int32_t shift, int64_t acc_bound)
{
    return multiplier >= 0 && shift <= -1 && shift >= -TH_FAST_MAX_E &&
           acc_bound < (INT64_C(1) << 29);
}

#if TH_NN_HAS_DSP
/* Requantized, zero-point-added value saturated to int8 (activation clamp not applied). */
TH_INLINE int32_t th_fast_rq_apply(int32_t acc, const th_fast_rq *rq)
{
    const int32_t a2 = (int32_t)((uint32_t)acc << 1);
    int32_t y = th_smmlar(a2, rq->multiplier, rq->round_zp);
    y += a2 >> 31;
    return th_ssat8(y >> rq->e);
}
#endif

/* The filter rows [*lo, *hi) (*lo == *hi: none) of a window whose kh rows, dil apart, start
 * at input row y0, that are inside an input of h rows. */
TH_INLINE void th_nn_rows_inside(int32_t y0, int32_t dil, int32_t kh, int32_t h, int32_t *lo,
                                 int32_t *hi)
{
    const int32_t top = y0 >= 0 ? 0 : (dil - 1 - y0) / dil;
    const int32_t bottom = y0 >= h ? 0 : TH_MIN((h - 1 - y0) / dil + 1, kh);
    *hi = bottom;
    *lo = TH_MIN(top, bottom);
}

#if TH_NN_HAS_DSP
/* n >= 1 words of the runs at p0 and p1 widened with offset2 (the input offset in both
 * halfwords) into two pixels' chunks: chunk i holds p0's lo, hi, p1's lo, hi halfword pairs
 * (4 words, th_nn_im2col_s16's layout with chunk stride 4). */
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* The two words loaded (u: pixel 0's, v: pixel 1's) widened with offset2 (o) and stored as
 * one chunk at c (c advanced by it): the assembly of th_nn_widen_two's loop after its loads. */
#define TH_NN_WIDEN_TWO_STORE                                                                  \
    "sxtab16 %[a], %[o], %[v]\n\t"                                                             \
    "sxtab16 %[b], %[o], %[v], ror #8\n\t"                                                     \
    "strd %[a], %[b], [%[c], #8]\n\t"                                                          \
    "sxtab16 %[a], %[o], %[u]\n\t"                                                             \
    "sxtab16 %[b], %[o], %[u], ror #8\n\t"                                                     \
    "strd %[a], %[b], [%[c]], #16\n\t"
#endif
TH_INLINE void th_nn_widen_two(int32_t *c, const int8_t *p0, const int8_t *p1, int32_t n,
                               int32_t offset2)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* 10 instructions per chunk: 2 LDR, 4 SXTAB16, 2 STRD, SUBS, BNE. */
    int32_t u;
    int32_t v;
    int32_t a;
    int32_t b;
    __asm__ volatile("1:\n\t"
                     "ldr %[u], [%[p0]], #4\n\t"
                     "ldr %[v], [%[p1]], #4\n\t"
                     TH_NN_WIDEN_TWO_STORE
                     "subs %[n], %[n], #1\n\t"
                     "bne 1b\n\t"
                     : [p0] "+r"(p0), [p1] "+r"(p1), [c] "+r"(c), [n] "+r"(n), [u] "=&r"(u),
                       [v] "=&r"(v), [a] "=&r"(a), [b] "=&r"(b)
                     : [o] "r"(offset2)
                     : "cc", "memory");
#else
    for (int32_t i = 0; i < n; i++, c += 4) {
        const int32_t u = th_read_s32(p0 + 4 * i);
        const int32_t v = th_read_s32(p1 + 4 * i);
        c[0] = th_sxtab16(offset2, u);
        c[1] = th_sxtab16_ror8(offset2, u);
        c[2] = th_sxtab16(offset2, v);
        c[3] = th_sxtab16_ror8(offset2, v);
    }
#endif
}
#endif

#if TH_NN_HAS_DSP
/* th_fast_rq_apply for an accumulator the kernel already computed doubled (2 * acc, e.g.
 * with doubled weights): saves the LSL. Same conditions as th_fast_rq_apply. */
TH_INLINE int32_t th_fast_rq_apply2(int32_t acc2, const th_fast_rq *rq)
{
    int32_t y = th_smmlar(acc2, rq->multiplier, rq->round_zp);
    y += acc2 >> 31;
    return th_ssat8(y >> rq->e);
}
#endif

/* Largest |accumulator| a MAC kernel can produce: taps * 255 * 128 + max |bias|. */
TH_INLINE int64_t th_acc_bound(int32_t taps, int32_t max_weight_abs, const int32_t *bias,
                               int32_t channels)
{
    /* |bias| in uint32 (|INT32_MIN| = 2^31 fits): a 32-bit compare a channel, not 64-bit */
    uint32_t max_bias = 0;
    if (bias != NULL) {
        for (int32_t c = 0; c < channels; c++) {
            const uint32_t b = bias[c] < 0 ? 0u - (uint32_t)bias[c] : (uint32_t)bias[c];
            max_bias = b > max_bias ? b : max_bias;
        }
    }
    return (int64_t)taps * 256 * max_weight_abs + (int64_t)max_bias;
}

/* ---- offline filter layouts (DSP builds) ------------------------------------------------
 *
 * CONV_2D filters (block 2) and FULLY_CONNECTED weights (block 4) are stored as a
 * [Cout, K] matrix (K = KH*KW*Cin) with K padded to Kp = round_up(K, 4) by zeros, output
 * channels taken in blocks of B (the last block may be smaller, g channels), and within a
 * block the 4-byte chunks of its channels interleaved:
 *     index(c, k) = (c / B) * B * Kp + (k / 4) * 4 * g + (c % B) * 4 + k % 4
 * so one load brings 4 taps of g channels. host/tinyhost/codegen/layout.py builds it.
 */
#define TH_CONV_BLOCK 2
#define TH_FC_BLOCK 4

TH_INLINE int32_t th_round_up4(int32_t k)
{
    return (k + 3) & ~3;
}

TH_INLINE int32_t th_filter_index(int32_t c, int32_t k, int32_t K, int32_t cout, int32_t block)
{
#if TH_NN_FILTER_INTERLEAVED
    const int32_t kp = th_round_up4(K);
    const int32_t first = (c / block) * block;
    const int32_t g = TH_MIN(block, cout - first);
    return first * kp + (k / 4) * 4 * g + (c - first) * 4 + (k & 3);
#else
    (void)cout;
    (void)block;
    return c * K + k;
#endif
}


/* ---- internal functions shared by the kernels (kernels_c/support/) ----------------------- */
#ifdef __cplusplus
extern "C" {
#endif

/* Output stage shared by the MAC kernels. */
typedef struct {
    int32_t output_offset;
    int32_t act_min;
    int32_t act_max;
    int32_t fast; /* th_fast_rq_apply is exact for every channel (checked at entry) */
    int32_t mixed; /* not for all channels, but for those with th_nn_fast_channel */
    int32_t bias_limit; /* mixed: |bias| below this keeps |acc| < 2^29 */
    int32_t clamp; /* activation range narrower than [-128, 127] */
} th_nn_out_stage;

/* Fills the output stage; fast requantization if every channel qualifies for acc_bound. */
void th_nn_out_stage_init(th_nn_out_stage *stage, const th_per_channel_quant *quant,
                          int32_t channels, int32_t output_offset,
                          const th_activation *activation, int64_t acc_bound);

/* After th_nn_out_stage_init: when the fast requantization is not exact for every channel,
 * sets stage->mixed if it is for some, judged per channel by th_nn_fast_channel
 * (taps_bound: largest |acc - bias|, taps * 256 * 128). Models have such layers: a near-dead
 * channel gets shift -31 or a huge bias, and must not slow the whole layer down. */
void th_nn_out_stage_mixed(th_nn_out_stage *stage, const th_per_channel_quant *quant,
                           const int32_t *bias, int32_t channels, int64_t taps_bound);

/* True when the fast requantization is exact for channel c (stage->mixed). */
TH_INLINE int th_nn_fast_channel(const th_nn_out_stage *stage,
                                 const th_per_channel_quant *quant, const int32_t *bias,
                                 int32_t c)
{
    return th_fast_shift_ok(quant->shift[c]) &&
           (bias == NULL || (bias[c] < stage->bias_limit && bias[c] > -stage->bias_limit));
}

/* Common argument checks of CONV_2D kernels (groups allowed when allow_groups). */
th_status th_nn_check_conv(const th_conv_params *params, const th_per_channel_quant *quant,
                           const th_dims *input_dims, const int8_t *input,
                           const th_dims *filter_dims, const int8_t *filter,
                           const th_dims *output_dims, const int8_t *output, int allow_groups);

th_status th_nn_check_dw(const th_dw_conv_params *params, const th_per_channel_quant *quant,
                         const th_dims *input_dims, const int8_t *input,
                         const th_dims *filter_dims, const int8_t *filter,
                         const th_dims *output_dims, const int8_t *output);

/* th_nn_check_dw without the per-channel constants' values (quant's pointers are checked):
 * for a kernel whose fast path checks them in its own per-channel pass, which then calls
 * th_nn_quant_ok before any other path (every multiplier >= 0, every shift in [-31, 30]). */
th_status th_nn_check_dw_dims(const th_dw_conv_params *params,
                              const th_per_channel_quant *quant, const th_dims *input_dims,
                              const int8_t *input, const th_dims *filter_dims,
                              const int8_t *filter, const th_dims *output_dims,
                              const int8_t *output);
int th_nn_quant_ok(const th_per_channel_quant *quant, int32_t channels);

th_status th_nn_check_scratch(const th_context *ctx, int32_t needed);

/* Straightforward CONV_2D over every output pixel (any params, either filter layout).
 * Reads the input while writing the output: no aliasing. */
void th_nn_conv_ref_s8(const th_conv_params *params, const th_per_channel_quant *quant,
                       const th_dims *input_dims, const int8_t *input,
                       const th_dims *filter_dims, const int8_t *filter, const int32_t *bias,
                       const th_dims *output_dims, int8_t *output);

#if TH_NN_HAS_DSP
/* int16 im2col: writes K = taps * cin values (x + input_offset, zero for padding) of one
 * output pixel as Kp/4 chunks of (x0, x2, x1, x3), chunk j at dst[j * chunk_stride_words]
 * (2 words per chunk; chunk_stride_words = 4 interleaves two pixels). */
void th_nn_im2col_s16(int32_t *dst, int32_t chunk_stride_words, const int8_t *input,
                      const th_dims *input_dims, const th_conv_params *params,
                      const th_dims *filter_dims, int32_t out_y, int32_t out_x);

/* th_nn_im2col_s16 of output pixels (out_y, out_x) and (out_y, out_x + 1), chunk stride 4
 * (interleaved), widening the input the two windows share once. */
void th_nn_im2col_pair_s16(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                           const th_conv_params *params, const th_dims *filter_dims,
                           int32_t out_y, int32_t out_x);

/* th_nn_im2col_s16 of output pixels (out_y0, out_x0) and (out_y1, out_x1), chunk stride 4
 * (interleaved); input channels not a multiple of 4 are staged as bytes for both at once. */
void th_nn_im2col_two_s16(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                          const th_conv_params *params, const th_dims *filter_dims,
                          int32_t out_y0, int32_t out_x0, int32_t out_y1, int32_t out_x1);

/* Whether th_nn_im2col_staged_s16 takes the layer (dilation.w 1, filter rows of 4 bytes or
 * more, K <= 256, path IM2COL_STAGED). */
int th_nn_im2col_staged_applies(const th_dims *input_dims, const th_conv_params *params,
                                const th_dims *filter_dims);

/* th_nn_im2col_two_s16 of the windows at input origins (y0, x0) and (y1, x1) (output position
 * times stride minus padding) where th_nn_im2col_staged_applies. */
void th_nn_im2col_staged_s16(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                             const th_conv_params *params, const th_dims *filter_dims,
                             int32_t y0, int32_t x0, int32_t y1, int32_t x1);

/* The windows at (y0, x0) and (y0, x1) (one input row origin, not both inside the input) as
 * th_nn_im2col_staged_s16 writes them, but only chunks [*j0, *j0 + n) of the Kp/4, n
 * returned (>= 1): the chunks holding any tap inside the input for either window (the
 * others are zero in both). Chunk *j0 goes to dst[0]. Where th_nn_im2col_staged_applies. */
int32_t th_nn_im2col_span_s16(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                              const th_conv_params *params, const th_dims *filter_dims,
                              int32_t y0, int32_t x0, int32_t x1, int32_t *j0);

/* One (num_pixels == 1) or two pixels of a CONV_2D / FC as a matrix product over K:
 * cols holds their int16 columns as written by th_nn_im2col_s16 (chunk_stride 2 or 4),
 * filter the interleaved (block 2) layout, kp = round_up(K, 4). Writes cout values at
 * out0 (and out1). */
void th_nn_mat_mult_s8_s16(const int32_t *cols, int32_t num_pixels, int32_t kp,
                           const int8_t *filter, const int32_t *bias,
                           const th_per_channel_quant *quant, const th_nn_out_stage *stage,
                           int32_t cout, int8_t *out0, int8_t *out1);

/* Per channel pair constants of the fast requantization, prepared once per kernel call
 * (th_nn_rq_table) so the 2 x 2 block loop reads them with two loads. */
typedef struct {
    int32_t bias[2];
    int32_t multiplier[2];
    int32_t round_zp[2]; /* 2^(e-1) + zp * 2^e */
    int32_t e[2]; /* -shift */
} th_nn_rq_pair;

/* Channel pairs a kernel keeps on its stack: 8 * 32 = 256 bytes, Cout <= 17 (im2col
 * convolutions, whose column staging takes stack too). */
#define TH_NN_RQ_PAIRS 8

/* The same for the pointwise convolution (no staging on the stack): 32 * 32 = 1024 bytes,
 * Cout <= 65. */
#define TH_NN_RQ_PAIRS_1X1 32

/* True when th_nn_rq_table applies (see below). */
TH_INLINE int th_nn_rq_table_applies(int32_t capacity, const int32_t *bias,
                                     const th_nn_out_stage *stage, int32_t cout)
{
    return stage->fast && !stage->clamp && bias != NULL && cout / 2 <= capacity;
}

/* Fills tab[0 .. cout / 2) and returns tab when the table applies (stage->fast, no
 * activation clamp, bias present, cout / 2 <= capacity); NULL otherwise. */
const th_nn_rq_pair *th_nn_rq_table(th_nn_rq_pair *tab, int32_t capacity,
                                    const th_per_channel_quant *quant, const int32_t *bias,
                                    const th_nn_out_stage *stage, int32_t cout);

/* Channels th_nn_rq_table_mixed can leave to an exact fix-up (near-dead channels). */
#define TH_NN_RQ_SLOW_MAX 16

/* True when th_nn_rq_table_mixed applies: the fast requantization for all channels or (mixed)
 * for some, no activation clamp, bias present, cout / 2 <= capacity. */
TH_INLINE int th_nn_rq_table_mixed_applies(int32_t capacity, const int32_t *bias,
                                           const th_nn_out_stage *stage, int32_t cout)
{
    return (stage->fast || stage->mixed) && !stage->clamp && bias != NULL &&
           cout / 2 <= capacity;
}

/* th_nn_rq_table for a mixed stage too: channels of the pairs the fast requantization is
 * not exact for get placeholder constants and are listed in slow (at most
 * TH_NN_RQ_SLOW_MAX, else NULL), for th_nn_mat_mult_fix_channels after each block. */
const th_nn_rq_pair *th_nn_rq_table_mixed(th_nn_rq_pair *tab, int32_t capacity,
                                          const th_per_channel_quant *quant,
                                          const int32_t *bias, const th_nn_out_stage *stage,
                                          int32_t cout, int16_t *slow, int32_t *slow_count);

/* Recomputes the listed channels of two pixels (cols as for th_nn_mat_mult_s8_s16, chunk
 * stride 4) with the exact requantization, overwriting out0[c] and out1[c]. */
void th_nn_mat_mult_fix_channels(const int32_t *cols, int32_t kp, const int8_t *filter,
                                 const int32_t *bias, const th_per_channel_quant *quant,
                                 const th_nn_out_stage *stage, const int16_t *slow,
                                 int32_t slow_count, int8_t *out0, int8_t *out1);

/* th_nn_mat_mult_s8_s16_tab with int16 weights the host laid out (compiled backend): per
 * channel pair and chunk of 4 taps k..k+3 the halfwords w[c][k], w[c][k+2], w[c][k+1],
 * w[c][k+3], then the same of channel c+1 (an odd last channel paired with zeros). The
 * block loop takes 10 instructions per 16 MACs instead of 14; tab NULL or one pixel: plain
 * loops with the exact requantization. */
void th_nn_mat_mult_s16w_tab(const int32_t *cols, int32_t num_pixels, int32_t kp,
                             const int16_t *filter, const int32_t *bias,
                             const th_per_channel_quant *quant, const th_nn_out_stage *stage,
                             const th_nn_rq_pair *tab, int32_t cout, int8_t *out0,
                             int8_t *out1);

/* th_nn_mat_mult_fix_channels for th_nn_mat_mult_s16w_tab's int16 weights. */
void th_nn_mat_mult_fix_channels_w16(const int32_t *cols, int32_t kp, const int16_t *filter,
                                     const int32_t *bias, const th_per_channel_quant *quant,
                                     const th_nn_out_stage *stage, const int16_t *slow,
                                     int32_t slow_count, int8_t *out0, int8_t *out1);

/* th_nn_mat_mult_s8_s16 with the constants of th_nn_rq_table (tab may be NULL: same as
 * th_nn_mat_mult_s8_s16). */
void th_nn_mat_mult_s8_s16_tab(const int32_t *cols, int32_t num_pixels, int32_t kp,
                               const int8_t *filter, const int32_t *bias,
                               const th_per_channel_quant *quant,
                               const th_nn_out_stage *stage, const th_nn_rq_pair *tab,
                               int32_t cout, int8_t *out0, int8_t *out1);

/* th_nn_mat_mult_s8_s16_tab of two pixels over chunks [j0, j0 + chunks) of the kp/4 only
 * (the others zero in both columns): cols holds those chunks (chunk stride 4), filter the
 * whole layer's (interleaved, kp per channel). tab NULL: the exact requantization. */
void th_nn_mat_mult_s8_s16_span(const int32_t *cols, int32_t j0, int32_t chunks, int32_t kp,
                                const int8_t *filter, const int32_t *bias,
                                const th_per_channel_quant *quant,
                                const th_nn_out_stage *stage, const th_nn_rq_pair *tab,
                                int32_t cout, int8_t *out0, int8_t *out1);

/* CONV_2D with few input channels (th_conv_small_cin_s8.c): scratch bytes it needs, 0 when
 * the shapes are not its (shapes and params only); the kernel returns 0 without touching
 * anything when it does not apply (shapes, or requantization not fast / activation clamp),
 * 1 when done. Arguments already checked, scratch of max(this, the im2col path's). The
 * _fast size: where only the 1 KB cap on its record stream (path CONV_SMALL_CIN_WIDE) or,
 * Cout < 4, the 8-chunk cap on its field (path CONV_SMALL_CIN_LONG) turns a layer away, the
 * scratch with streams up to 2 KB and fields up to 16 chunks (else 0); the kernel takes it
 * when wide (th_conv_general_s8: th_conv_general_s8_scratch_size_fast) and ctx->size holds
 * it. wide == TH_NN_SMALL_CIN_LONG_ONLY (Cout 1, before the direct path): only those fields,
 * only where they beat the direct path. */
#define TH_NN_SMALL_CIN_LONG_ONLY 2
int32_t th_nn_conv_small_cin_scratch(const th_conv_params *params, const th_dims *input_dims,
                                     const th_dims *filter_dims, const th_dims *output_dims);
int32_t th_nn_conv_small_cin_scratch_fast(const th_conv_params *params,
                                          const th_dims *input_dims,
                                          const th_dims *filter_dims,
                                          const th_dims *output_dims);
int th_nn_conv_small_cin_s8(const th_context *ctx, const th_conv_params *params,
                            const th_per_channel_quant *quant, const th_dims *input_dims,
                            const int8_t *input, const th_dims *filter_dims,
                            const int8_t *filter, const int32_t *bias,
                            const th_dims *output_dims, int8_t *output, int wide);

/* CONV_2D with few output channels straight from the int8 input (th_nn_conv_direct_s8.c):
 * applies (groups 1) to Cout == 1, to Cout <= 3 when Cin > 4 is not a multiple of 4 or the
 * filter is 1x1, to Cout == 2 when Cin is a multiple of 4, and to Cout == 4 for 1x1 filters
 * with such a Cin and output rows of 4 pixels or more; needs Cout * Kp bytes of scratch (<=
 * th_nn_im2col_pair_bytes(K), which every CONV_2D variant reserves). Any stride, padding,
 * dilation. Arguments already checked. */
#define TH_NN_DIRECT_MAX_COUT 4
TH_INLINE int th_nn_conv_direct_applies(const th_dims *input_dims, const th_dims *filter_dims,
                                        const th_dims *output_dims)
{
    const int32_t cout = output_dims->c;
    if (cout > TH_NN_DIRECT_MAX_COUT || input_dims->c != filter_dims->c) {
        return 0; /* (Cout first: one compare on every other layer) */
    }
    /* One channel always; two or three when Cin is not a multiple of 4 but long enough
     * for word runs (the column staging is then byte by byte), or the filter is 1x1 (no
     * reuse of a column at all); two with Cin a multiple of 4 too (padded rows' whole-row
     * quads: 28x40x4 k4x4 0.384 -> 0.464 MAC/instruction, 13x53x24 k3x7 s2 0.584 -> 0.648;
     * three measured slower, 4x15x12 k3x1 0.337 -> 0.260); four for a 1x1 filter with such
     * a Cin and rows of four output pixels or more (the quads; measured,
     * bench/kernels.py --sweep). */
    const int odd_cin = (input_dims->c & 3) != 0 && input_dims->c > 4;
    const int pointwise = filter_dims->h == 1 && filter_dims->w == 1;
    if (cout == 4) {
        return pointwise && odd_cin && output_dims->w >= 4;
    }
    return cout == 1 || odd_cin || pointwise || (cout == 2 && (input_dims->c & 3) == 0);
}
/* The direct path's fast scratch: (Cout + 4) * Kp bytes, the plain rows and four int8 columns
 * from which the pixels outside interior quads go four at a time (consecutive in raster
 * order, across rows). Offered where it measured faster than the other paths (Cortex-M4,
 * bench/conv_few_cout.py): groups 1, filter not 1x1, dilation.w > 1 (taps of Cin bytes each,
 * which the direct path's single pixels take one short run at a time) and 2 <= Cout <= 4
 * (Cout 1 pays the staging alone); else 0. Given it, the direct path applies. */
TH_INLINE int32_t th_nn_conv_direct_fast_scratch(const th_conv_params *params,
                                                 const th_dims *input_dims,
                                                 const th_dims *filter_dims,
                                                 const th_dims *output_dims)
{
    if (output_dims->c > TH_NN_DIRECT_MAX_COUT || output_dims->c < 2 ||
        params->dilation.w < 2 || input_dims->c != filter_dims->c ||
        (filter_dims->h == 1 && filter_dims->w == 1)) {
        return 0;
    }
    return (output_dims->c + 4) * th_round_up4(filter_dims->h * filter_dims->w * filter_dims->c);
}
/* The direct path's edge patches (path CONV_DIRECT_EDGES): Cout 1, groups 1, dilation.w 1, a
 * filter that is not 1x1 with filter rows of at most TH_NN_DIRECT_EDGE_MAX_RUN bytes (KW *
 * Cin), some window partly left or right of the input or (1-3 output rows, no bands) a last
 * group of 3 pixels after the interior quads, not a one-column image with one output column
 * (the column view): the padded plain rows, KH words-rounded rows of KW * Cin bytes, then one
 * patch of KH rows of the input columns four adjacent windows span, (3 stride.w + KW) * Cin
 * bytes each, and a word the last row's word reads may reach, then the padded rows widened
 * (twice their bytes, quad_rows_wide: used where the scratch holds them). A row's
 * border pixels then take the quad loop from the patch, four at a time, not short clipped
 * runs one pixel at a time (7x55x5 k4x3 s2: 11,621 -> 10,657 instructions, Cortex-M4);
 * longer filter rows' runs pay less per pixel than the patch's copy (13x39x18 k7x7 s2,
 * 126-byte rows: +3%); else 0. With the widened rows, each output row's patches and interior
 * quads go as asm runs (path CONV_DIRECT_ROW_RUN). th_conv_3x3_s8 offers it too
 * (th_conv_s8_scratch_size_fast; 59x19x5 k3x3 s2: 60,354 -> 47,967 instructions). */
#define TH_NN_DIRECT_EDGE_MAX_RUN 32
TH_INLINE int32_t th_nn_conv_direct_edge_scratch(const th_conv_params *params,
                                                 const th_dims *input_dims,
                                                 const th_dims *filter_dims,
                                                 const th_dims *output_dims)
{
    const int32_t kw = filter_dims->w;
    if (output_dims->c != 1 || params->dilation.w != 1 || input_dims->c != filter_dims->c ||
        (filter_dims->h == 1 && kw == 1) || kw * input_dims->c > TH_NN_DIRECT_EDGE_MAX_RUN ||
        (input_dims->w == 1 && output_dims->w == 1) ||
        (params->padding.w <= 0 &&
         (output_dims->w - 1) * params->stride.w - params->padding.w + kw <= input_dims->w &&
         (output_dims->w % 4 != 3 || output_dims->h >= 4))) {
        return 0;
    }
    const int32_t cin = input_dims->c;
    return th_round_up4(filter_dims->h * (th_round_up4(kw * cin) + (3 * params->stride.w + kw) * cin) + 4) +
           2 * filter_dims->h * th_round_up4(kw * cin);
}
/* The call was given that scratch (the direct path then applies). */
TH_INLINE int th_nn_conv_direct_given(const th_context *ctx, const th_conv_params *params,
                                      const th_dims *input_dims, const th_dims *filter_dims,
                                      const th_dims *output_dims)
{
    const int32_t fast =
        th_nn_conv_direct_fast_scratch(params, input_dims, filter_dims, output_dims);
    return fast > 0 && ctx->size >= fast;
}
void th_nn_conv_direct_s8(const th_context *ctx, const th_conv_params *params,
                          const th_per_channel_quant *quant, const th_dims *input_dims,
                          const int8_t *input, const th_dims *filter_dims,
                          const int8_t *filter, const int32_t *bias,
                          const th_dims *output_dims, int8_t *output);

/* CONV_2D with 2 or 3 output channels, channel-inner rows (th_conv_few_cout_s8.c, path
 * CONV_FEW_COUT): groups 1, Cin >= 4 (fewer: th_nn_conv_small_cin_s8), dilation.w 1, a filter
 * that is not 1x1. (Cout 2 with its own 2-channel asm since session 24: faster than the
 * direct path's quads and pairs on every measured shape, 33x20x5 k6x6 -8.6%, 28x40x4 k4x4
 * -3.3%, 24x7x38 k3x3 s2 -2.1%; Cortex-M4.) Its scratch, offered as the fast scratch
 * (th_conv_general_s8_scratch_size_fast):
 * every channel's weights widened to int16, 2 Cout KH round_up4(KW Cin) words, then one staged
 * window of KH round_up4(KW Cin) bytes; else 0. The kernel returns 0 (nothing done) where it
 * does not apply or ctx->size is below that, 1 when done. Arguments already checked. */
TH_INLINE int32_t th_nn_conv_few_cout_scratch(const th_conv_params *params,
                                              const th_dims *input_dims,
                                              const th_dims *filter_dims,
                                              const th_dims *output_dims)
{
    const int32_t cout = output_dims->c;
    if (cout < 2 || cout > 3 || input_dims->c != filter_dims->c || input_dims->c < 4 ||
        params->dilation.w != 1 || (filter_dims->h == 1 && filter_dims->w == 1)) {
        return 0;
    }
    return (2 * cout + 1) * filter_dims->h * th_round_up4(filter_dims->w * input_dims->c);
}
TH_INLINE int th_nn_conv_few_cout_given(const th_context *ctx, const th_conv_params *params,
                                        const th_dims *input_dims, const th_dims *filter_dims,
                                        const th_dims *output_dims)
{
    const int32_t need =
        th_nn_conv_few_cout_scratch(params, input_dims, filter_dims, output_dims);
    return need > 0 && ctx->size >= need;
}
int th_nn_conv_few_cout_s8(const th_context *ctx, const th_conv_params *params,
                           const th_per_channel_quant *quant, const th_dims *input_dims,
                           const int8_t *input, const th_dims *filter_dims,
                           const int8_t *filter, const int32_t *bias,
                           const th_dims *output_dims, int8_t *output);

/* CONV_2D with groups == 1 via th_nn_im2col_s16 + th_nn_mat_mult_s8_s16; scratch of
 * th_nn_im2col_pair_bytes(K). Arguments already checked. */
void th_nn_conv_im2col_s8(const th_context *ctx, const th_conv_params *params,
                          const th_per_channel_quant *quant, const th_dims *input_dims,
                          const int8_t *input, const th_dims *filter_dims,
                          const int8_t *filter, const int32_t *bias,
                          const th_dims *output_dims, int8_t *output);

/* th_nn_conv_im2col_s8 with int16 weights (th_nn_mat_mult_s16w_tab's layout) and the
 * requantization constants of every channel pair made on the host (th_nn_rq_table's, used
 * when the table applies; NULL: none). */
void th_nn_conv_im2col_s8_w16(const th_context *ctx, const th_conv_params *params,
                              const th_per_channel_quant *quant, const th_dims *input_dims,
                              const int8_t *input, const th_dims *filter_dims,
                              const int16_t *filter, const int32_t *bias,
                              const th_dims *output_dims, int8_t *output,
                              const th_nn_rq_pair *tab);
#endif

/* DEPTHWISE_CONV_2D channel by channel: any params. ch_mult == 1: through an int8 copy of
 * each input plane (scratch of H*W bytes), in place allowed; ch_mult > 1: reads the input
 * directly (plane unused, may be NULL). Arguments already checked. */
void th_nn_dw_conv_ref_s8(int8_t *plane, const th_dw_conv_params *params,
                          const th_per_channel_quant *quant, const th_dims *input_dims,
                          const int8_t *input, const th_dims *filter_dims,
                          const int8_t *filter, const int32_t *bias,
                          const th_dims *output_dims, int8_t *output);

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* DEPTHWISE_CONV_2D with ch_mult >= 2 and 5 to TH_DW_MULT_TAPS taps, pixel by pixel;
 * ch_mult >= 2 and at most TH_DW_MULT_SMALL_TAPS taps, by staged output rows (th_dw_conv_mult_s8.c; path DW_MULT of th_dw_conv_general_s8; where it is
 * faster than the rows and plane paths, measured on Cortex-M4): scratch th_nn_dw_mult_scratch
 * bytes (one input channel's records and padded plane, or its records and one staged output
 * row), never in place. Arguments already checked. */
#define TH_DW_MULT_TAPS 16
#define TH_DW_MULT_SMALL_TAPS 4 /* any ch_mult >= 2: a row of staged tap pairs, streamed */
TH_INLINE int th_nn_dw_mult_applies(const th_dw_conv_params *params, const th_dims *filter_dims)
{
    const int32_t taps = filter_dims->h * filter_dims->w;
    const int32_t m = params->ch_mult;
    return m >= 2 && taps <= TH_DW_MULT_TAPS;
}
int32_t th_nn_dw_mult_scratch(const th_dw_conv_params *params, const th_dims *filter_dims,
                              const th_dims *output_dims);
void th_nn_dw_mult_s8(int8_t *scratch, const th_dw_conv_params *params,
                      const th_per_channel_quant *quant, const th_dims *input_dims,
                      const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                      const int32_t *bias, const th_dims *output_dims, int8_t *output);
#endif

/* FULLY_CONNECTED int8 (th_nn_fc_s8.c), per tensor and per channel: the kernels'
 * th_fully_connected_s8 / th_fully_connected_per_channel_s8 whole, checks included (their
 * arguments as the kernels', so the kernels' calls are plain branches). */
th_status th_nn_fc_tensor_s8(const th_context *ctx, const th_fc_params *params,
                             const th_per_tensor_quant *quant, const th_dims *input_dims,
                             const int8_t *input, const th_dims *filter_dims,
                             const int8_t *filter, const int32_t *bias,
                             const th_dims *output_dims, int8_t *output);
th_status th_nn_fc_channel_s8(const th_context *ctx, const th_fc_params *params,
                              const th_per_channel_quant *quant, const th_dims *input_dims,
                              const int8_t *input, const th_dims *filter_dims,
                              const int8_t *filter, const int32_t *bias,
                              const th_dims *output_dims, int8_t *output);

/* th_fully_connected_s8_scratch_size_fast (th_nn_fc_s8.c). */
int32_t th_nn_fc_short_scratch(const th_dims *filter_dims);

th_status th_nn_check_fc(const th_fc_params *params, const int32_t *multiplier,
                         const int32_t *shift, int32_t count, const th_dims *input_dims,
                         const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                         const th_dims *output_dims, const int8_t *output);

#if TH_NN_MVE
/* ---- Helium (MVE) paths (th_nn_mve_s8.c) ---------------------------------------------- */

/* Output stage of the MVE paths: zero point and activation range. */
typedef struct {
    int32_t output_offset;
    int32_t act_min;
    int32_t act_max;
} th_mve_out;

/* th_requantize + output offset + activation clamp on four lanes, exact for every
 * multiplier >= 0 and shift in [-31, 30]: the left shift wraps (VSHL); VQRDMULH is gemmlowp's
 * SaturatingRoundingDoublingHighMul exactly (its nudge-and-truncate for a negative product
 * equals floor((a * m + 2^30) / 2^31), what VQRDMULH computes, and both saturate only at
 * INT32_MIN * INT32_MIN); RoundingDivideByPOT rounds half away from zero, VRSHL half up, so
 * a negative y is first lowered by one (saturating; exact: y = q * 2^e + r with 0 <= r < 2^e
 * rounds to q + [r > 2^(e-1)] both ways), only in lanes that shift right (e = 0 must stay y).
 * The offset is added saturating: the clamp to [act_min, act_max] then gives what the exact
 * sum gives. tests/test_kernels_target.py checks it against th_requantize on random and
 * extreme values (the th_mve_requant_check case). */
TH_INLINE int32x4_t th_mve_requantize(int32x4_t acc, int32x4_t multiplier, int32x4_t shift,
                                      const th_mve_out *o)
{
    const int32x4_t zero = vdupq_n_s32(0);
    const mve_pred16_t right = vcmpltq_n_s32(shift, 0);
    int32x4_t y = vshlq_s32(acc, vmaxq_s32(shift, zero));
    y = vqrdmulhq_s32(y, multiplier);
    y = vqaddq_m_s32(y, y, vshrq_n_s32(y, 31), right);
    y = vrshlq_s32(y, vminq_s32(shift, zero));
    y = vqaddq_n_s32(y, o->output_offset);
    y = vmaxq_s32(y, vdupq_n_s32(o->act_min));
    return vminq_s32(y, vdupq_n_s32(o->act_max));
}

/* th_mve_requantize with one multiplier and shift for all lanes: every lane shifts the same
 * way, so no predicate is needed (same exactness argument; shift == 0 takes the left path,
 * where VSHL by 0 leaves y unchanged). right (a constant after inlining) = shift < 0. */
TH_INLINE int32x4_t th_mve_requantize_n(int32x4_t acc, int32_t multiplier, int32_t shift,
                                        int right, const th_mve_out *o)
{
    int32x4_t y;
    if (right) {
        y = vqrdmulhq_n_s32(acc, multiplier);
        y = vqaddq_s32(y, vshrq_n_s32(y, 31));
        y = vrshlq_n_s32(y, shift);
    } else {
        y = vqrdmulhq_n_s32(vshlq_r_s32(acc, shift), multiplier);
    }
    y = vqaddq_n_s32(y, o->output_offset);
    y = vmaxq_s32(y, vdupq_n_s32(o->act_min));
    return vminq_s32(y, vdupq_n_s32(o->act_max));
}

/* Adds int16 lane sums of 16 channels (a0: 0-7, a1: 8-15) into s[0..3] (four channels
 * each, in order) and clears them. */
TH_INLINE void th_mve_widen16(int16x8_t *a0, int16x8_t *a1, int32x4_t s[4])
{
    int16_t t[16];
    vstrhq_s16(t, *a0);
    vstrhq_s16(t + 8, *a1);
    for (int32_t j = 0; j < 4; j++) {
        s[j] = vaddq_s32(s[j], vldrhq_s32(t + 4 * j));
    }
    *a0 = vdupq_n_s16(0);
    *a1 = vdupq_n_s16(0);
}

/* n bytes from src to dst (no overlap), n >= 0, vector loads and stores. */
void th_nn_mve_copy(int8_t *dst, const int8_t *src, int32_t n);
/* n bytes of value at dst. */
void th_nn_mve_fill(int8_t *dst, int8_t value, int32_t n);

/* tab[c] = bias[c] (0 without bias) + input_offset * sum_k filter[c][k], wrapping. */
void th_nn_mve_kernel_sums(int32_t *tab, const int8_t *filter, const int32_t *bias,
                           int32_t cout, int32_t k, int32_t input_offset);

/* One output pixel, all cout channels: out[c] = requantized tab[c] + sum_k x[k] *
 * filter[c][k] (filter plain [cout, k]), per-channel quant. */
void th_nn_mve_pixel_tab(const int8_t *x, const int8_t *filter, int32_t k, int32_t cout,
                         const int32_t *tab, const th_per_channel_quant *quant,
                         const th_mve_out *o, int8_t *out);

/* The same with the sums of weights taken alongside (no table): acc = bias[c] + row_add +
 * sum_k (x[k] + input_offset) * filter[c][k]; multiplier/shift per channel (per_channel)
 * or one pair. */
void th_nn_mve_pixel_sums(const int8_t *x, const int8_t *filter, int32_t k, int32_t cout,
                          const int32_t *bias, int32_t input_offset, int32_t row_add,
                          const int32_t *multiplier, const int32_t *shift,
                          int32_t per_channel, const th_mve_out *o, int8_t *out);

/* Two output pixels (columns x0, x1) at once, as th_nn_mve_pixel_tab. */
void th_nn_mve_pixel2_tab(const int8_t *x0, const int8_t *x1, const int8_t *filter, int32_t k,
                          int32_t cout, const int32_t *tab, const th_per_channel_quant *quant,
                          const th_mve_out *o, int8_t *out0, int8_t *out1);

/* Largest K of th_nn_mve_conv_s8's four-pixel path (filter rows held in Q registers). */
#define TH_NN_MVE_QUAD_K 32

/* Scratch of th_nn_mve_conv_s8: the table (4 * Cout) and two columns (round_up4(K) each),
 * four columns when K <= TH_NN_MVE_QUAD_K (filter_dims->n = Cout, h * w * c = K). */
int32_t th_nn_mve_conv_scratch(const th_dims *filter_dims);

/* CONV_2D with groups == 1 (any filter, stride, padding, dilation), arguments and scratch
 * already checked: two pixels at a time in raster order (four when K <= TH_NN_MVE_QUAD_K, or
 * Cout <= 4), all read before any is written (rules (b), (c)), through int8 columns in
 * scratch or read in place (a 1x1 without padding; windows inside the input). */
void th_nn_mve_conv_s8(const th_context *ctx, const th_conv_params *params,
                       const th_per_channel_quant *quant, const th_dims *input_dims,
                       const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                       const int32_t *bias, const th_dims *output_dims, int8_t *output);

/* Scratch of th_nn_mve_dw_conv_s8: four channels of the padded input plane the outputs
 * read, 4 * PH * PW bytes, PH = (OH - 1) * SH + (KH - 1) * DH + 1 (PW alike). */
int32_t th_nn_mve_dw_scratch(const th_dw_conv_params *params, const th_dims *filter_dims,
                             const th_dims *output_dims);

/* DEPTHWISE_CONV_2D, any filter, stride, padding, dilation and ch_mult, arguments and
 * scratch already checked: channel by channel, each input channel staged before any of its
 * outputs is written (in place, rule (a)); where the output lies apart from the input and
 * no padding is read, the windows of up to 16 taps are read from the input itself. */
void th_nn_mve_dw_conv_s8(const th_context *ctx, const th_dw_conv_params *params,
                          const th_per_channel_quant *quant, const th_dims *input_dims,
                          const int8_t *input, const th_dims *filter_dims,
                          const int8_t *filter, const int32_t *bias,
                          const th_dims *output_dims, int8_t *output);
#endif /* TH_NN_MVE */

/* Scratch bytes of the int16 im2col for two pixels. */
TH_INLINE int32_t th_nn_im2col_pair_bytes(int32_t k)
{
    return 4 * th_round_up4(k);
}

#ifdef __cplusplus
}
#endif

#endif /* TH_NN_SUPPORT_H */
