/* th_nn_mat_mult_s8_s16: the DSP core of CONV_2D: int16 columns x interleaved int8 filter.
 *
 * Register block: 2 output channels x 2 pixels. Per chunk of 4 taps it loads the two
 * pixels' 4 words (one LDM), the two channels' 2 words (one LDRD), sign-extends each
 * weight word into two halfword pairs (SXTB16, SXTB16 ROR 8) and issues 8 SMLAD:
 * 16 MACs in 14 instructions (+ SUBS, BNE every fourth chunk), no shuffles (the column
 * is stored in SXTB16 order). Requantization happens once per 2x2 block. Two pixels with
 * the fast requantization go through lean loops (mat_mult_2x2_*: constants straight from
 * quant, or from a per-call table, th_nn_rq_table, when Cout <= 17); otherwise, with
 * stage->mixed, channels the fast requantization is not exact for (near-dead channels:
 * shift -31, bias +-2^30) take th_requantize_s8, the others stay fast.
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP

/* Output of one accumulator. `fast_only` is a compile-time constant at every call site:
 * the common case (fast requantization, no activation clamp) compiles to
 * LSL, SMMLAR, ADD, ASR, SSAT. fast_only == 2: the fast requantization for the channels
 * it is exact for, th_requantize for the others (stage->mixed, no clamp). */
TH_INLINE int8_t requant_one(int32_t acc, int32_t c, const th_per_channel_quant *quant,
                             const int32_t *bias, const th_nn_out_stage *stage,
                             const th_fast_rq *rq, int fast_only)
{
    int32_t v;
    if (fast_only == 2 && !th_nn_fast_channel(stage, quant, bias, c)) {
        return (int8_t)th_requantize_s8(acc, quant->multiplier[c], quant->shift[c],
                                        stage->output_offset);
    }
    if (fast_only) {
        return (int8_t)th_fast_rq_apply(acc, rq);
    }
    if (stage->fast) {
        v = th_fast_rq_apply(acc, rq);
    } else {
        v = th_requantize_s8(acc, quant->multiplier[c], quant->shift[c], stage->output_offset);
    }
    if (stage->clamp) {
        v = th_clamp(v, stage->act_min, stage->act_max);
    }
    return (int8_t)v;
}

TH_INLINE th_fast_rq make_rq(const th_per_channel_quant *quant, const int32_t *bias,
                             const th_nn_out_stage *stage, int32_t c, int fast_only)
{
    th_fast_rq rq = {0, 0, 0};
    if ((fast_only == 1 || stage->fast) ||
        (fast_only == 2 && th_nn_fast_channel(stage, quant, bias, c))) {
        rq = th_fast_rq_make(quant->multiplier[c], quant->shift[c], stage->output_offset);
    }
    return rq;
}

/* The 2 pixels x 2 channels MAC loop over `chunks` chunks of 4 taps: cols as written by
 * th_nn_im2col_s16 with chunk stride 4, *wp the channel pair's interleaved filter (advanced
 * past it). */
TH_INLINE void mac_2x2(const int32_t *cols, const int8_t **wp, int32_t chunks, int32_t *p00,
                       int32_t *p01, int32_t *p10, int32_t *p11)
{
    const int32_t *x = cols;
    const int8_t *w = *wp;
    int32_t a00 = *p00;
    int32_t a01 = *p01;
    int32_t a10 = *p10;
    int32_t a11 = *p11;
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* The compiler neither merges the loads into LDM/LDRD nor folds the rotate
     * into SXTB16: 14 instructions per 16 MACs need the loop spelled out. */
    register int32_t x0a __asm__("r8");
    register int32_t x0b __asm__("r9");
    register int32_t x1a __asm__("r10");
    register int32_t x1b __asm__("r11");
    int32_t w0;
    int32_t w1;
    int32_t t;
    int32_t n = chunks;
#define TH_MM_CHUNK                                                                          \
    "ldmia %[x]!, {%[x0a], %[x0b], %[x1a], %[x1b]}\n\t"                                      \
    "ldrd %[w0], %[w1], [%[w]], #8\n\t"                                                     \
    "sxtb16 %[t], %[w0]\n\t"                                                                \
    "smlad %[a00], %[x0a], %[t], %[a00]\n\t"                                                \
    "smlad %[a10], %[x1a], %[t], %[a10]\n\t"                                                \
    "sxtb16 %[t], %[w0], ror #8\n\t"                                                        \
    "smlad %[a00], %[x0b], %[t], %[a00]\n\t"                                                \
    "smlad %[a10], %[x1b], %[t], %[a10]\n\t"                                                \
    "sxtb16 %[t], %[w1]\n\t"                                                                \
    "smlad %[a01], %[x0a], %[t], %[a01]\n\t"                                                \
    "smlad %[a11], %[x1a], %[t], %[a11]\n\t"                                                \
    "sxtb16 %[t], %[w1], ror #8\n\t"                                                        \
    "smlad %[a01], %[x0b], %[t], %[a01]\n\t"                                                \
    "smlad %[a11], %[x1b], %[t], %[a11]\n\t"
    /* chunks % 8 chunks first (bit 0, then bits 1 and 2 shifted into carry), then eight
     * per iteration; the chunk instructions leave the flags alone, so the Z of the second
     * LSRS (chunks / 4 == 0: done, the common 2-chunk case) still holds after the two
     * chunks, the Z of the third (chunks / 8 == 0) after the four. */
    __asm__ volatile(
        "lsrs %[n], %[n], #1\n\t"
        "bcc 1f\n\t"
        TH_MM_CHUNK
        "1:\n\t"
        "lsrs %[n], %[n], #1\n\t"
        "bcc 2f\n\t"
        TH_MM_CHUNK
        TH_MM_CHUNK
        "beq 3f\n\t"
        "2:\n\t"
        "lsrs %[n], %[n], #1\n\t"
        "bcc 5f\n\t"
        TH_MM_CHUNK
        TH_MM_CHUNK
        TH_MM_CHUNK
        TH_MM_CHUNK
        "5:\n\t"
        "beq 3f\n\t"
        "4:\n\t"
        TH_MM_CHUNK
        TH_MM_CHUNK
        TH_MM_CHUNK
        TH_MM_CHUNK
        TH_MM_CHUNK
        TH_MM_CHUNK
        TH_MM_CHUNK
        TH_MM_CHUNK
        "subs %[n], %[n], #1\n\t"
        "bne 4b\n\t"
        "3:\n\t"
        : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11),
          [x] "+r"(x), [w] "+r"(w), [n] "+r"(n), [x0a] "=r"(x0a), [x0b] "=r"(x0b),
          [x1a] "=r"(x1a), [x1b] "=r"(x1b), [w0] "=&r"(w0), [w1] "=&r"(w1),
          [t] "=&r"(t)
        :
        : "cc", "memory");
#undef TH_MM_CHUNK
#else
    for (int32_t j = 0; j < chunks; j++) {
        const int32_t x0a = x[0];
        const int32_t x0b = x[1];
        const int32_t x1a = x[2];
        const int32_t x1b = x[3];
        x += 4;
        const int32_t w0 = th_read_s32(w);
        const int32_t w1 = th_read_s32(w + 4);
        w += 8;
        int32_t t = th_sxtb16(w0);
        a00 = th_smlad(x0a, t, a00);
        a10 = th_smlad(x1a, t, a10);
        t = th_sxtb16_ror8(w0);
        a00 = th_smlad(x0b, t, a00);
        a10 = th_smlad(x1b, t, a10);
        t = th_sxtb16(w1);
        a01 = th_smlad(x0a, t, a01);
        a11 = th_smlad(x1a, t, a11);
        t = th_sxtb16_ror8(w1);
        a01 = th_smlad(x0b, t, a01);
        a11 = th_smlad(x1b, t, a11);
    }
#endif
    *wp = w;
    *p00 = a00;
    *p01 = a01;
    *p10 = a10;
    *p11 = a11;
}

/* Fast requantization of one accumulator (lean loop): mode 1 clamps to the activation. */
TH_INLINE int32_t lean_rq(int32_t acc, int32_t m, int32_t round_zp, int32_t e,
                          const th_nn_out_stage *stage, const int mode)
{
    const int32_t a2 = (int32_t)((uint32_t)acc << 1);
    const int32_t y = th_smmlar(a2, m, round_zp) + (a2 >> 31);
    const int32_t v = th_ssat8(y >> e);
    return mode == 1 ? th_clamp(v, stage->act_min, stage->act_max) : v;
}

TH_INLINE void mat_mult(const int32_t *cols, int32_t num_pixels, int32_t kp,
                        const int8_t *filter, const int32_t *bias,
                        const th_per_channel_quant *quant, const th_nn_out_stage *stage,
                        int32_t cout, int8_t *out0, int8_t *out1, const int fast_only)
{
    const int32_t chunks = kp / 4;
    const int8_t *w = (const int8_t *)__builtin_assume_aligned(filter, 4);
    int32_t c = 0;

    if (num_pixels == 2) {
        for (; c + 1 < cout; c += 2) {
            int32_t a00 = bias != NULL ? bias[c] : 0; /* a<pixel><channel> */
            int32_t a01 = bias != NULL ? bias[c + 1] : 0;
            int32_t a10 = a00;
            int32_t a11 = a01;
            mac_2x2(cols, &w, chunks, &a00, &a01, &a10, &a11);
            if (fast_only == 2 && !(th_nn_fast_channel(stage, quant, bias, c) &&
                                    th_nn_fast_channel(stage, quant, bias, c + 1))) {
                const th_fast_rq none = {0, 0, 0};
                out0[c] = requant_one(a00, c, quant, bias, stage, &none, 0);
                out0[c + 1] = requant_one(a01, c + 1, quant, bias, stage, &none, 0);
                out1[c] = requant_one(a10, c, quant, bias, stage, &none, 0);
                out1[c + 1] = requant_one(a11, c + 1, quant, bias, stage, &none, 0);
                continue;
            }
            /* Mode 2 got here with both channels fast: requantize as mode 1. */
            const int fast_pair = fast_only != 0;
            const th_fast_rq rq0 = make_rq(quant, bias, stage, c, fast_pair);
            const th_fast_rq rq1 = make_rq(quant, bias, stage, c + 1, fast_pair);
            out0[c] = requant_one(a00, c, quant, bias, stage, &rq0, fast_pair);
            out0[c + 1] = requant_one(a01, c + 1, quant, bias, stage, &rq1, fast_pair);
            out1[c] = requant_one(a10, c, quant, bias, stage, &rq0, fast_pair);
            out1[c + 1] = requant_one(a11, c + 1, quant, bias, stage, &rq1, fast_pair);
        }
        if (c < cout) {
            int32_t a0 = bias != NULL ? bias[c] : 0;
            int32_t a1 = a0;
            const int32_t *x = cols;
            for (int32_t j = 0; j < chunks; j++) {
                const int32_t w0 = th_read_s32(w);
                w += 4;
                const int32_t lo = th_sxtb16(w0);
                const int32_t hi = th_sxtb16_ror8(w0);
                a0 = th_smlad(x[0], lo, a0);
                a0 = th_smlad(x[1], hi, a0);
                a1 = th_smlad(x[2], lo, a1);
                a1 = th_smlad(x[3], hi, a1);
                x += 4;
            }
            const th_fast_rq rq = make_rq(quant, bias, stage, c, fast_only);
            out0[c] = requant_one(a0, c, quant, bias, stage, &rq, fast_only);
            out1[c] = requant_one(a1, c, quant, bias, stage, &rq, fast_only);
        }
        return;
    }

    for (; c + 1 < cout; c += 2) {
        int32_t a0 = bias != NULL ? bias[c] : 0;
        int32_t a1 = bias != NULL ? bias[c + 1] : 0;
        const int32_t *x = cols;
        for (int32_t j = 0; j < chunks; j++) {
            const int32_t xa = x[0];
            const int32_t xb = x[1];
            x += 2;
            const int32_t w0 = th_read_s32(w);
            const int32_t w1 = th_read_s32(w + 4);
            w += 8;
            a0 = th_smlad(xa, th_sxtb16(w0), a0);
            a0 = th_smlad(xb, th_sxtb16_ror8(w0), a0);
            a1 = th_smlad(xa, th_sxtb16(w1), a1);
            a1 = th_smlad(xb, th_sxtb16_ror8(w1), a1);
        }
        const th_fast_rq rq0 = make_rq(quant, bias, stage, c, fast_only);
        const th_fast_rq rq1 = make_rq(quant, bias, stage, c + 1, fast_only);
        out0[c] = requant_one(a0, c, quant, bias, stage, &rq0, fast_only);
        out0[c + 1] = requant_one(a1, c + 1, quant, bias, stage, &rq1, fast_only);
    }
    if (c < cout) {
        int32_t a0 = bias != NULL ? bias[c] : 0;
        const int32_t *x = cols;
        for (int32_t j = 0; j < chunks; j++) {
            const int32_t w0 = th_read_s32(w);
            w += 4;
            a0 = th_smlad(x[0], th_sxtb16(w0), a0);
            a0 = th_smlad(x[1], th_sxtb16_ror8(w0), a0);
            x += 2;
        }
        const th_fast_rq rq = make_rq(quant, bias, stage, c, fast_only);
        out0[c] = requant_one(a0, c, quant, bias, stage, &rq, fast_only);
    }
}

/* 2 pixels x (cout & ~1) channels with the fast requantization for every channel (stage->fast
 * or, mixed, per pair when both channels qualify): a lean loop whose only live state besides
 * the MAC registers is a handful of pointers. Per channel the constants come straight from
 * quant: e = -shift, round_zp = (2 * zp + 1) << (e - 1) (== 2^(e-1) + zp * 2^e mod 2^32).
 * Mode 0: stage->fast, no clamp; 1: stage->fast with the activation clamp; 2: stage->mixed,
 * no clamp (pairs with a channel the fast form is not exact for take th_requantize_s8).
 * Returns the number of channels done (cout & ~1). */
TH_INLINE int32_t mat_mult_2x2_lean(const int32_t *cols, int32_t chunks, const int8_t *filter,
                                    const int32_t *bias, const th_per_channel_quant *quant,
                                    const th_nn_out_stage *stage, int32_t cout, int8_t *out0,
                                    int8_t *out1, const int mode, const int32_t skip)
{
    const int32_t zp21 = (int32_t)(2u * (uint32_t)stage->output_offset + 1u);
    const int32_t *mult = quant->multiplier;
    const int32_t *shift = quant->shift;
    const int32_t *b = bias;
    const int8_t *w = (const int8_t *)__builtin_assume_aligned(filter, 4);
    const int32_t pairs = cout >> 1;
    const int32_t *b_end = bias + 2 * pairs;
    for (; b < b_end; b += 2, mult += 2, shift += 2, out0 += 2, out1 += 2) {
        int32_t a00 = b[0];
        int32_t a01 = b[1];
        int32_t a10 = a00;
        int32_t a11 = a01;
        mac_2x2(cols, &w, chunks, &a00, &a01, &a10, &a11);
        w += skip; /* (0 but for th_nn_mat_mult_s8_s16_span: the next pair's span) */
        const int32_t s0 = shift[0];
        const int32_t s1 = shift[1];
        const int32_t m0 = mult[0];
        const int32_t m1 = mult[1];
        if (mode == 2) {
            const int32_t c = (int32_t)(b - bias);
            if (!(th_nn_fast_channel(stage, quant, bias, c) &&
                  th_nn_fast_channel(stage, quant, bias, c + 1))) {
                const int32_t zp = stage->output_offset;
                out0[0] = (int8_t)th_requantize_s8(a00, m0, s0, zp);
                out1[0] = (int8_t)th_requantize_s8(a10, m0, s0, zp);
                out0[1] = (int8_t)th_requantize_s8(a01, m1, s1, zp);
                out1[1] = (int8_t)th_requantize_s8(a11, m1, s1, zp);
                continue;
            }
        }
        const int32_t r0 = (int32_t)((uint32_t)zp21 << (uint32_t)~s0);
        const int32_t r1 = (int32_t)((uint32_t)zp21 << (uint32_t)~s1);
        out0[0] = (int8_t)lean_rq(a00, m0, r0, -s0, stage, mode);
        out1[0] = (int8_t)lean_rq(a10, m0, r0, -s0, stage, mode);
        out0[1] = (int8_t)lean_rq(a01, m1, r1, -s1, stage, mode);
        out1[1] = (int8_t)lean_rq(a11, m1, r1, -s1, stage, mode);
    }
    return 2 * pairs;
}

static int32_t __attribute__((noinline))
mat_mult_2x2_plain(const int32_t *cols, int32_t chunks, const int8_t *filter,
                   const int32_t *bias, const th_per_channel_quant *quant,
                   const th_nn_out_stage *stage, int32_t cout, int8_t *out0, int8_t *out1)
{
    return mat_mult_2x2_lean(cols, chunks, filter, bias, quant, stage, cout, out0, out1, 0,
                             0);
}

static int32_t __attribute__((noinline))
mat_mult_2x2_clamp(const int32_t *cols, int32_t chunks, const int8_t *filter,
                   const int32_t *bias, const th_per_channel_quant *quant,
                   const th_nn_out_stage *stage, int32_t cout, int8_t *out0, int8_t *out1)
{
    return mat_mult_2x2_lean(cols, chunks, filter, bias, quant, stage, cout, out0, out1, 1,
                             0);
}

static int32_t __attribute__((noinline))
mat_mult_2x2_mixed(const int32_t *cols, int32_t chunks, const int8_t *filter,
                   const int32_t *bias, const th_per_channel_quant *quant,
                   const th_nn_out_stage *stage, int32_t cout, int8_t *out0, int8_t *out1)
{
    return mat_mult_2x2_lean(cols, chunks, filter, bias, quant, stage, cout, out0, out1, 2,
                             0);
}

/* mat_mult_2x2_plain and _clamp over a span of each pair's chunks (filter at pair 0's span,
 * skip the bytes to the next pair's): th_nn_mat_mult_s8_s16_span without a table. */
static int32_t __attribute__((noinline))
mat_mult_2x2_plain_skip(const int32_t *cols, int32_t chunks, const int8_t *filter,
                        const int32_t *bias, const th_per_channel_quant *quant,
                        const th_nn_out_stage *stage, int32_t cout, int8_t *out0, int8_t *out1,
                        int32_t skip)
{
    return mat_mult_2x2_lean(cols, chunks, filter, bias, quant, stage, cout, out0, out1, 0,
                             skip);
}

static int32_t __attribute__((noinline))
mat_mult_2x2_clamp_skip(const int32_t *cols, int32_t chunks, const int8_t *filter,
                        const int32_t *bias, const th_per_channel_quant *quant,
                        const th_nn_out_stage *stage, int32_t cout, int8_t *out0, int8_t *out1,
                        int32_t skip)
{
    return mat_mult_2x2_lean(cols, chunks, filter, bias, quant, stage, cout, out0, out1, 1,
                             skip);
}

/* Any pixel count, channel count and output stage, one output at a time: the general path
 * every build keeps (th_nn_paths.h), small rather than fast. Channel c's weights: in its
 * pair's block (8 bytes per chunk, c's word first for even c), or alone (4 per chunk) for
 * the last of an odd count. */
static void __attribute__((noinline))
mat_mult_general(const int32_t *cols, int32_t num_pixels, int32_t kp, const int8_t *filter,
                 const int32_t *bias, const th_per_channel_quant *quant,
                 const th_nn_out_stage *stage, int32_t cout, int8_t *out0, int8_t *out1)
{
    const int32_t chunks = kp / 4;
    for (int32_t c = 0; c < cout; c++) {
        const int paired = (c | 1) < cout;
        const int8_t *w = filter + (int64_t)(c & ~1) * kp + (paired ? (c & 1) * 4 : 0);
        const th_fast_rq rq = make_rq(quant, bias, stage, c, 0);
        const int32_t w_step = paired ? 8 : 4;
        for (int32_t p = 0; p < num_pixels; p++) {
            int32_t acc = bias != NULL ? bias[c] : 0;
            const int32_t *x = cols + 2 * p;
            const int8_t *wc = w;
            for (int32_t j = 0; j < chunks; j++, x += 2 * num_pixels, wc += w_step) {
                const int32_t w0 = th_read_s32(wc);
                acc = th_smlad(x[0], th_sxtb16(w0), acc);
                acc = th_smlad(x[1], th_sxtb16_ror8(w0), acc);
            }
            (p == 0 ? out0 : out1)[c] = requant_one(acc, c, quant, bias, stage, &rq, 0);
        }
    }
}

/* One channel's weights alone (4 bytes a chunk, at w) over `chunks` chunks of two pixels'
 * columns (chunk stride 4), added to *p0, *p1. */
TH_INLINE void mac_2x1(const int32_t *cols, const int8_t *w, int32_t chunks, int32_t *p0,
                       int32_t *p1)
{
    const int32_t *x = cols;
    int32_t a0 = *p0;
    int32_t a1 = *p1;
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* gcc loads the four column words one by one and counts with a separate index: 15
     * instructions per chunk where one LDM, LDR, 2 SXTB16 and 4 SMLAD take 8 (two chunks
     * per iteration, the odd one first; the chunk leaves the flags of the LSRS alone). */
    register int32_t x0a __asm__("r8");
    register int32_t x0b __asm__("r9");
    register int32_t x1a __asm__("r10");
    register int32_t x1b __asm__("r11");
    int32_t w0;
    int32_t t;
    int32_t n = chunks;
#define TH_LC_CHUNK                                                                          \
    "ldmia %[x]!, {%[x0a], %[x0b], %[x1a], %[x1b]}\n\t"                                      \
    "ldr %[w0], [%[w]], #4\n\t"                                                             \
    "sxtb16 %[t], %[w0]\n\t"                                                                \
    "smlad %[a0], %[x0a], %[t], %[a0]\n\t"                                                   \
    "smlad %[a1], %[x1a], %[t], %[a1]\n\t"                                                   \
    "sxtb16 %[t], %[w0], ror #8\n\t"                                                        \
    "smlad %[a0], %[x0b], %[t], %[a0]\n\t"                                                   \
    "smlad %[a1], %[x1b], %[t], %[a1]\n\t"
    __asm__ volatile("lsrs %[n], %[n], #1\n\t"
                     "bcc 1f\n\t"
                     TH_LC_CHUNK
                     "1:\n\t"
                     "beq 3f\n\t"
                     "2:\n\t"
                     TH_LC_CHUNK
                     TH_LC_CHUNK
                     "subs %[n], %[n], #1\n\t"
                     "bne 2b\n\t"
                     "3:\n\t"
                     : [a0] "+r"(a0), [a1] "+r"(a1), [x] "+r"(x), [w] "+r"(w), [n] "+r"(n),
                       [x0a] "=r"(x0a), [x0b] "=r"(x0b), [x1a] "=r"(x1a), [x1b] "=r"(x1b),
                       [w0] "=&r"(w0), [t] "=&r"(t)
                     :
                     : "cc", "memory");
#undef TH_LC_CHUNK
#else
    for (int32_t j = 0; j < chunks; j++, w += 4, x += 4) {
        const int32_t w0 = th_read_s32(w);
        const int32_t lo = th_sxtb16(w0);
        const int32_t hi = th_sxtb16_ror8(w0);
        a0 = th_smlad(x[1], hi, th_smlad(x[0], lo, a0));
        a1 = th_smlad(x[3], hi, th_smlad(x[2], lo, a1));
    }
#endif
    *p0 = a0;
    *p1 = a1;
}

/* The last (odd) channel c of two pixels (bias non-NULL), its weights alone (4 bytes a
 * chunk): one small loop, so no blocked loop is linked for it; or, where the build leaves that
 * out (no odd channel count in the model), the general loop. */
static void last_channel(const int32_t *cols, int32_t kp, const int8_t *filter,
                         const int32_t *bias, const th_per_channel_quant *quant,
                         const th_nn_out_stage *stage, int32_t c, int8_t *out0, int8_t *out1)
{
    if (!TH_NN_PATH(MM_LAST_CHANNEL)) {
        th_per_channel_quant q;
        q.multiplier = quant->multiplier + c;
        q.shift = quant->shift + c;
        mat_mult_general(cols, 2, kp, filter + (int64_t)c * kp, bias + c, &q, stage, 1,
                         out0 + c, out1 + c);
        return;
    }
    const int8_t *w = filter + (int64_t)c * kp;
    int32_t a0 = bias[c];
    int32_t a1 = a0;
    mac_2x1(cols, w, kp / 4, &a0, &a1);
    if (stage->fast && !stage->clamp) { /* the common case without the general tests */
        const th_fast_rq rq = make_rq(quant, bias, stage, c, 1);
        out0[c] = requant_one(a0, c, quant, bias, stage, &rq, 1);
        out1[c] = requant_one(a1, c, quant, bias, stage, &rq, 1);
        return;
    }
    const th_fast_rq rq = make_rq(quant, bias, stage, c, 0);
    out0[c] = requant_one(a0, c, quant, bias, stage, &rq, 0);
    out1[c] = requant_one(a1, c, quant, bias, stage, &rq, 0);
}


void th_nn_mat_mult_s8_s16(const int32_t *cols, int32_t num_pixels, int32_t kp,
                           const int8_t *filter, const int32_t *bias,
                           const th_per_channel_quant *quant, const th_nn_out_stage *stage,
                           int32_t cout, int8_t *out0, int8_t *out1)
{
    /* The 2x2 loops where they apply and the build keeps them, else the general loop. */
    const int pair = num_pixels == 2 && cout > 1 && bias != NULL;
    int32_t c = -1;
    if (pair && stage->fast && !stage->clamp && TH_NN_PATH(MM2_PLAIN)) {
        c = mat_mult_2x2_plain(cols, kp / 4, filter, bias, quant, stage, cout, out0, out1);
    } else if (pair && stage->fast && stage->clamp && TH_NN_PATH(MM2_CLAMP)) {
        c = mat_mult_2x2_clamp(cols, kp / 4, filter, bias, quant, stage, cout, out0, out1);
    } else if (pair && !stage->fast && stage->mixed && !stage->clamp && TH_NN_PATH(MM2_MIXED)) {
        c = mat_mult_2x2_mixed(cols, kp / 4, filter, bias, quant, stage, cout, out0, out1);
    }
    if (c >= 0) {
        if (c < cout) {
            last_channel(cols, kp, filter, bias, quant, stage, c, out0, out1);
        }
        return;
    }
    if (stage->fast && !stage->clamp && TH_NN_PATH(MM_FAST)) {
        mat_mult(cols, num_pixels, kp, filter, bias, quant, stage, cout, out0, out1, 1);
    } else if (stage->mixed && !stage->clamp && TH_NN_PATH(MM_MIXED)) {
        mat_mult(cols, num_pixels, kp, filter, bias, quant, stage, cout, out0, out1, 2);
    } else if (TH_NN_PATH(MM_EXACT)) {
        mat_mult(cols, num_pixels, kp, filter, bias, quant, stage, cout, out0, out1, 0);
    } else {
        mat_mult_general(cols, num_pixels, kp, filter, bias, quant, stage, cout, out0, out1);
    }
}

const th_nn_rq_pair *th_nn_rq_table(th_nn_rq_pair *tab, int32_t capacity,
                                    const th_per_channel_quant *quant, const int32_t *bias,
                                    const th_nn_out_stage *stage, int32_t cout)
{
    if (!th_nn_rq_table_applies(capacity, bias, stage, cout)) {
        return NULL;
    }
    int16_t slow[TH_NN_RQ_SLOW_MAX];
    int32_t slow_count; /* stays 0: stage->fast holds for every channel */
    return th_nn_rq_table_mixed(tab, capacity, quant, bias, stage, cout, slow, &slow_count);
}

const th_nn_rq_pair *th_nn_rq_table_mixed(th_nn_rq_pair *tab, int32_t capacity,
                                          const th_per_channel_quant *quant,
                                          const int32_t *bias, const th_nn_out_stage *stage,
                                          int32_t cout, int16_t *slow, int32_t *slow_count)
{
    *slow_count = 0;
    if (!th_nn_rq_table_mixed_applies(capacity, bias, stage, cout)) {
        return NULL;
    }
    for (int32_t c = 0; c < 2 * (cout / 2); c++) {
        th_nn_rq_pair *entry = &tab[c / 2];
        const int32_t j = c & 1;
        if (stage->fast || th_nn_fast_channel(stage, quant, bias, c)) {
            const th_fast_rq rq = th_fast_rq_make(quant->multiplier[c], quant->shift[c],
                                                  stage->output_offset);
            entry->bias[j] = bias[c];
            entry->multiplier[j] = rq.multiplier;
            entry->round_zp[j] = rq.round_zp;
            entry->e[j] = rq.e;
            continue;
        }
        if (*slow_count == TH_NN_RQ_SLOW_MAX) {
            *slow_count = 0;
            return NULL;
        }
        slow[(*slow_count)++] = (int16_t)c;
        /* A harmless placeholder: the block loop writes 0 or -1, then the fix-up. */
        entry->bias[j] = 0;
        entry->multiplier[j] = 0;
        entry->round_zp[j] = 0;
        entry->e[j] = 0;
    }
    return tab;
}

void th_nn_mat_mult_fix_channels(const int32_t *cols, int32_t kp, const int8_t *filter,
                                 const int32_t *bias, const th_per_channel_quant *quant,
                                 const th_nn_out_stage *stage, const int16_t *slow,
                                 int32_t slow_count, int8_t *out0, int8_t *out1)
{
    for (int32_t i = 0; i < slow_count; i++) {
        const int32_t c = slow[i];
        const int32_t first = c & ~1; /* a channel of a full pair: block of 2, see layout */
        const int8_t *f = filter + (int64_t)first * kp + (c - first) * 4;
        int32_t acc0 = bias[c];
        int32_t acc1 = bias[c];
        for (int32_t j = 0; j < kp / 4; j++, f += 8) {
            const int32_t w = th_read_s32(f);
            const int32_t lo = th_sxtb16(w);
            const int32_t hi = th_sxtb16_ror8(w);
            acc0 = th_smlad(cols[4 * j + 1], hi, th_smlad(cols[4 * j], lo, acc0));
            acc1 = th_smlad(cols[4 * j + 3], hi, th_smlad(cols[4 * j + 2], lo, acc1));
        }
        out0[c] = (int8_t)th_requantize_s8(acc0, quant->multiplier[c], quant->shift[c],
                                           stage->output_offset);
        out1[c] = (int8_t)th_requantize_s8(acc1, quant->multiplier[c], quant->shift[c],
                                           stage->output_offset);
    }
}

void th_nn_mat_mult_fix_channels_w16(const int32_t *cols, int32_t kp, const int16_t *filter,
                                     const int32_t *bias, const th_per_channel_quant *quant,
                                     const th_nn_out_stage *stage, const int16_t *slow,
                                     int32_t slow_count, int8_t *out0, int8_t *out1)
{
    for (int32_t i = 0; i < slow_count; i++) {
        const int32_t c = slow[i];
        const int32_t *w = (const int32_t *)__builtin_assume_aligned(
            filter + (int64_t)(c / 2) * 2 * kp + (c & 1) * 4, 4);
        int32_t acc0 = bias[c];
        int32_t acc1 = bias[c];
        for (int32_t j = 0; j < kp / 4; j++, w += 4) {
            acc0 = th_smlad(cols[4 * j + 1], w[1], th_smlad(cols[4 * j], w[0], acc0));
            acc1 = th_smlad(cols[4 * j + 3], w[1], th_smlad(cols[4 * j + 2], w[0], acc1));
        }
        out0[c] = (int8_t)th_requantize_s8(acc0, quant->multiplier[c], quant->shift[c],
                                           stage->output_offset);
        out1[c] = (int8_t)th_requantize_s8(acc1, quant->multiplier[c], quant->shift[c],
                                           stage->output_offset);
    }
}

/* The 2 x 2 blocks of channel pairs [0, pairs) with table constants. Native: the whole
 * block loop in assembly (gcc spills the loop state around the 14-register MAC loop with
 * about 10 more instructions per block). Registers in the MAC loop: accumulators r0-r3
 * (a00, a01, a10, a11), columns r8-r11, weights r6, r7, sign-extended r5, iteration counter
 * r4, column pointer ip, filter pointer lr. The MAC loop does 8 chunks (56 bytes of code
 * each) per iteration and is entered Duff-style at chunk (-chunks) & 7 through an address
 * computed once per call: one LDR PC per block. Frame: [sp] cols, iterations, tab, tab end,
 * out0, out1, entry. Requantization as th_fast_rq_apply. */
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__) && defined(__GNUC__)
#define TH_TAB_CHUNK \
    "ldmia ip!, {r8, r9, r10, r11}\n\t" \
    "ldrd r6, r7, [lr], #8\n\t" \
    "sxtb16 r5, r6\n\t" \
    "smlad r0, r8, r5, r0\n\t" \
    "smlad r2, r10, r5, r2\n\t" \
    "sxtb16 r5, r6, ror #8\n\t" \
    "smlad r0, r9, r5, r0\n\t" \
    "smlad r2, r11, r5, r2\n\t" \
    "sxtb16 r5, r7\n\t" \
    "smlad r1, r8, r5, r1\n\t" \
    "smlad r3, r10, r5, r3\n\t" \
    "sxtb16 r5, r7, ror #8\n\t" \
    "smlad r1, r9, r5, r1\n\t" \
    "smlad r3, r11, r5, r3\n\t"

/* Int16 weights: the pair's 4 weight words in r4-r7 (the loop then ends on the column
 * pointer, not on a counter in r4). */
#define TH_TAB_CHUNK_W16 \
    "ldmia ip!, {r8, r9, r10, r11}\n\t" \
    "ldmia lr!, {r4, r5, r6, r7}\n\t" \
    "smlad r0, r8, r4, r0\n\t" \
    "smlad r0, r9, r5, r0\n\t" \
    "smlad r2, r10, r4, r2\n\t" \
    "smlad r2, r11, r5, r2\n\t" \
    "smlad r1, r8, r6, r1\n\t" \
    "smlad r1, r9, r7, r1\n\t" \
    "smlad r3, r10, r6, r3\n\t" \
    "smlad r3, r11, r7, r3\n\t"

/* Frame word [sp, #4] (into r4 from cols r0 and chunks r1) and the loop's end test: the
 * iteration count, or (int16 weights) the end of the columns. */
#define TH_TAB_COUNT "adds r4, r1, #7\n\t" "lsrs r4, r4, #3\n\t"
#define TH_TAB_NEXT "subs r4, r4, #1\n\t" "bne 5b\n\t"
#define TH_TAB_COUNT_W16 "add r4, r0, r1, lsl #4\n\t"
#define TH_TAB_NEXT_W16 "ldr r4, [sp, #4]\n\t" "cmp ip, r4\n\t" "bne 5b\n\t"

/* The block loop of mat_mult_2x2_tab around CHUNK, one chunk of 4 taps of BYTES bytes of
 * code (a string); COUNT and NEXT as above. */
#define TH_TAB_LOOP(CHUNK, BYTES, COUNT, NEXT, SKIP) \
    "push {r4-r11, lr}\n\t" \
    "sub sp, sp, #28\n\t" \
    "ldr r4, [sp, #64]\n\t" \
    "cmp r4, #0\n\t" \
    "ble 9f\n\t" \
    "ldrd r5, r6, [sp, #68]\n\t" \
    "add r4, r3, r4, lsl #5\n\t" \
    "strd r3, r4, [sp, #8]\n\t" \
    "strd r5, r6, [sp, #16]\n\t" \
    COUNT \
    "strd r0, r4, [sp, #0]\n\t" \
    "rsbs r5, r1, #0\n\t" \
    "and r5, r5, #7\n\t" \
    "movs r6, #" BYTES "\n\t" \
    "adr.w r7, 5f\n\t" \
    "mla r7, r5, r6, r7\n\t" \
    "orr r7, r7, #1\n\t" \
    "str r7, [sp, #24]\n\t" \
    "mov lr, r2\n\t" \
    "mov r10, r3\n\t" \
    "1:\n\t" \
    "ldrd r0, r1, [r10], #32\n\t" \
    "str r10, [sp, #8]\n\t" \
    "mov r2, r0\n\t" \
    "mov r3, r1\n\t" \
    "ldrd ip, r4, [sp, #0]\n\t" \
    "ldr pc, [sp, #24]\n\t" \
    "5:\n\t" \
    CHUNK \
    CHUNK \
    CHUNK \
    CHUNK \
    CHUNK \
    CHUNK \
    CHUNK \
    CHUNK \
    NEXT \
    SKIP \
    "6:\n\t" \
    "ldr ip, [sp, #8]\n\t" \
    "ldrd r4, r5, [ip, #-24]\n\t" \
    "ldrd r6, r7, [ip, #-16]\n\t" \
    "ldrd r8, r9, [ip, #-8]\n\t" \
    "ldrd r11, ip, [sp, #16]\n\t" \
    "lsls r0, r0, #1\n\t" \
    "smmlar r10, r0, r4, r6\n\t" \
    "add r10, r10, r0, asr #31\n\t" \
    "asrs r10, r10, r8\n\t" \
    "ssat r10, #8, r10\n\t" \
    "strb r10, [r11], #1\n\t" \
    "lsls r1, r1, #1\n\t" \
    "smmlar r10, r1, r5, r7\n\t" \
    "add r10, r10, r1, asr #31\n\t" \
    "asrs r10, r10, r9\n\t" \
    "ssat r10, #8, r10\n\t" \
    "strb r10, [r11], #1\n\t" \
    "lsls r2, r2, #1\n\t" \
    "smmlar r10, r2, r4, r6\n\t" \
    "add r10, r10, r2, asr #31\n\t" \
    "asrs r10, r10, r8\n\t" \
    "ssat r10, #8, r10\n\t" \
    "strb r10, [ip], #1\n\t" \
    "lsls r3, r3, #1\n\t" \
    "smmlar r10, r3, r5, r7\n\t" \
    "add r10, r10, r3, asr #31\n\t" \
    "asrs r10, r10, r9\n\t" \
    "ssat r10, #8, r10\n\t" \
    "strb r10, [ip], #1\n\t" \
    "strd r11, ip, [sp, #16]\n\t" \
    "ldrd r10, r11, [sp, #8]\n\t" \
    "cmp r10, r11\n\t" \
    "bne 1b\n\t" \
    "9:\n\t" \
    "add sp, sp, #28\n\t" \
    "pop {r4-r11, pc}\n\t"

/* The arguments are read by the assembly (AAPCS: r0-r3, then the stack). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline))
mat_mult_2x2_tab(const int32_t *cols, int32_t chunks, const int8_t *filter,
                 const th_nn_rq_pair *tab, int32_t pairs, int8_t *out0, int8_t *out1)
{
    __asm__ volatile(TH_TAB_LOOP(TH_TAB_CHUNK, "56", TH_TAB_COUNT, TH_TAB_NEXT, ""));
}

/* The same with int16 weights in SXTB16 order (th_nn_mat_mult_s16w_tab): per chunk one LDM
 * of the columns, one of the channel pair's weights, 8 SMLAD (10 instructions, 40 bytes of
 * code; 3 per 8 chunks to end the loop). */
static void __attribute__((naked, noinline))
mat_mult_2x2_tab_w16(const int32_t *cols, int32_t chunks, const int16_t *filter,
                     const th_nn_rq_pair *tab, int32_t pairs, int8_t *out0, int8_t *out1)
{
    __asm__ volatile(TH_TAB_LOOP(TH_TAB_CHUNK_W16, "40", TH_TAB_COUNT_W16, TH_TAB_NEXT_W16, ""));
}
/* mat_mult_2x2_tab over a span of each pair's chunks (th_nn_mat_mult_s8_s16_span): filter
 * at the span's first chunk of pair 0, skip (8th argument, [sp, #76] in the loop's frame) the
 * bytes from the span's end to the next pair's span (r4 is free between the MAC loop and the
 * requantization). */
#define TH_IM2COL_SPAN_ASM 1
static void __attribute__((naked, noinline))
mat_mult_2x2_tab_skip(const int32_t *cols, int32_t chunks, const int8_t *filter,
                      const th_nn_rq_pair *tab, int32_t pairs, int8_t *out0, int8_t *out1,
                      int32_t skip)
{
    __asm__ volatile(TH_TAB_LOOP(TH_TAB_CHUNK, "56", TH_TAB_COUNT, TH_TAB_NEXT,
                                 "ldr r4, [sp, #76]\n\t" "add lr, lr, r4\n\t"));
}
#pragma GCC diagnostic pop
#undef TH_TAB_CHUNK
#undef TH_TAB_CHUNK_W16
#undef TH_TAB_COUNT
#undef TH_TAB_NEXT
#undef TH_TAB_COUNT_W16
#undef TH_TAB_NEXT_W16
#undef TH_TAB_LOOP
#else
static void __attribute__((noinline))
mat_mult_2x2_tab(const int32_t *cols, int32_t chunks, const int8_t *filter,
                 const th_nn_rq_pair *tab, int32_t pairs, int8_t *out0, int8_t *out1)
{
    const int8_t *w = (const int8_t *)__builtin_assume_aligned(filter, 4);
    const th_nn_rq_pair *end = tab + pairs;
    const int32_t delta = (int32_t)(out1 - out0);
    for (; tab < end; tab++, out0 += 2) {
        int32_t a00 = tab->bias[0];
        int32_t a01 = tab->bias[1];
        int32_t a10 = a00;
        int32_t a11 = a01;
        mac_2x2(cols, &w, chunks, &a00, &a01, &a10, &a11);
        const int32_t a00x2 = (int32_t)((uint32_t)a00 << 1);
        const int32_t a01x2 = (int32_t)((uint32_t)a01 << 1);
        const int32_t a10x2 = (int32_t)((uint32_t)a10 << 1);
        const int32_t a11x2 = (int32_t)((uint32_t)a11 << 1);
        const int32_t m0 = tab->multiplier[0];
        const int32_t m1 = tab->multiplier[1];
        const int32_t r0 = tab->round_zp[0];
        const int32_t r1 = tab->round_zp[1];
        const int32_t e0 = tab->e[0];
        const int32_t e1 = tab->e[1];
        out0[0] = (int8_t)th_ssat8((th_smmlar(a00x2, m0, r0) + (a00x2 >> 31)) >> e0);
        out0[1] = (int8_t)th_ssat8((th_smmlar(a01x2, m1, r1) + (a01x2 >> 31)) >> e1);
        out0[delta] = (int8_t)th_ssat8((th_smmlar(a10x2, m0, r0) + (a10x2 >> 31)) >> e0);
        out0[delta + 1] = (int8_t)th_ssat8((th_smmlar(a11x2, m1, r1) + (a11x2 >> 31)) >> e1);
    }
}

/* mac_2x2 on int16 weights (C: the non-native builds). */
TH_INLINE void mac_2x2_w16(const int32_t *cols, const int16_t **wp, int32_t chunks,
                           int32_t acc[4])
{
    const int32_t *w = (const int32_t *)__builtin_assume_aligned(*wp, 4);
    for (int32_t j = 0; j < chunks; j++, cols += 4, w += 4) {
        acc[0] = th_smlad(cols[1], w[1], th_smlad(cols[0], w[0], acc[0]));
        acc[2] = th_smlad(cols[3], w[1], th_smlad(cols[2], w[0], acc[2]));
        acc[1] = th_smlad(cols[1], w[3], th_smlad(cols[0], w[2], acc[1]));
        acc[3] = th_smlad(cols[3], w[3], th_smlad(cols[2], w[2], acc[3]));
    }
    *wp = (const int16_t *)w;
}

static void __attribute__((noinline))
mat_mult_2x2_tab_w16(const int32_t *cols, int32_t chunks, const int16_t *filter,
                     const th_nn_rq_pair *tab, int32_t pairs, int8_t *out0, int8_t *out1)
{
    const int16_t *w = filter;
    for (int32_t i = 0; i < pairs; i++, tab++, out0 += 2, out1 += 2) {
        int32_t acc[4] = {tab->bias[0], tab->bias[1], tab->bias[0], tab->bias[1]};
        mac_2x2_w16(cols, &w, chunks, acc);
        for (int32_t k = 0; k < 4; k++) {
            const int32_t j = k & 1;
            const th_fast_rq rq = {tab->multiplier[j], tab->round_zp[j], tab->e[j]};
            const int8_t v = (int8_t)th_fast_rq_apply(acc[k], &rq);
            if (k < 2) {
                out0[j] = v;
            } else {
                out1[j] = v;
            }
        }
    }
}
#endif

/* Any pixel count (1 or 2), any channel count, int16 weights of channel pairs (the last
 * channel of an odd count padded with a zero channel): plain loops, exact per output as
 * mat_mult mode 0 (the fast form when stage->fast, else th_requantize_s8). */
static void mat_mult_w16_general(const int32_t *cols, int32_t num_pixels, int32_t kp,
                                 const int16_t *filter, const int32_t *bias,
                                 const th_per_channel_quant *quant,
                                 const th_nn_out_stage *stage, int32_t first, int32_t cout,
                                 int8_t *out0, int8_t *out1)
{
    const int32_t chunks = kp / 4;
    const int32_t step = num_pixels == 2 ? 4 : 2; /* column words per chunk */
    for (int32_t c = first; c < cout; c++) {
        const int32_t *w = (const int32_t *)__builtin_assume_aligned(
            filter + (int64_t)(c / 2) * 2 * 4 * chunks + (c & 1) * 4, 4);
        int32_t a0 = bias != NULL ? bias[c] : 0;
        int32_t a1 = a0;
        const int32_t *x = cols;
        for (int32_t j = 0; j < chunks; j++, x += step, w += 4) {
            a0 = th_smlad(x[1], w[1], th_smlad(x[0], w[0], a0));
            if (num_pixels == 2) {
                a1 = th_smlad(x[3], w[1], th_smlad(x[2], w[0], a1));
            }
        }
        const th_fast_rq rq = make_rq(quant, bias, stage, c, 0);
        out0[c] = requant_one(a0, c, quant, bias, stage, &rq, 0);
        if (num_pixels == 2) {
            out1[c] = requant_one(a1, c, quant, bias, stage, &rq, 0);
        }
    }
}

void th_nn_mat_mult_s16w_tab(const int32_t *cols, int32_t num_pixels, int32_t kp,
                             const int16_t *filter, const int32_t *bias,
                             const th_per_channel_quant *quant, const th_nn_out_stage *stage,
                             const th_nn_rq_pair *tab, int32_t cout, int8_t *out0,
                             int8_t *out1)
{
    int32_t first = 0;
    if (tab != NULL && num_pixels == 2) {
        const int32_t pairs = cout / 2;
        mat_mult_2x2_tab_w16(cols, kp / 4, filter, tab, pairs, out0, out1);
        first = 2 * pairs;
    }
    mat_mult_w16_general(cols, num_pixels, kp, filter, bias, quant, stage, first, cout, out0,
                         out1);
}

void th_nn_mat_mult_s8_s16_tab(const int32_t *cols, int32_t num_pixels, int32_t kp,
                               const int8_t *filter, const int32_t *bias,
                               const th_per_channel_quant *quant,
                               const th_nn_out_stage *stage, const th_nn_rq_pair *tab,
                               int32_t cout, int8_t *out0, int8_t *out1)
{
    if (tab == NULL || num_pixels != 2 || !TH_NN_PATH(MM2_TAB)) {
        th_nn_mat_mult_s8_s16(cols, num_pixels, kp, filter, bias, quant, stage, cout, out0,
                              out1);
        return;
    }
    const int32_t pairs = cout / 2;
    mat_mult_2x2_tab(cols, kp / 4, filter, tab, pairs, out0, out1);
    if (2 * pairs < cout) {
        last_channel(cols, kp, filter, bias, quant, stage, 2 * pairs, out0, out1);
    }
}

/* Only the span's chunks (the im2col path's K x 1 / 1 x K windows crossing an edge): each
 * channel pair's weights start 8 * j0 bytes into its block of 2 * kp; the blocked loops above
 * walk the whole filter without a skip, so the span has this loop of its own. One MAC loop
 * for every output stage (a second copy is 0.8 KB): the pair's constants come from the table
 * or, without one, from quant as mat_mult_2x2_lean makes them; an exact (not fast) stage
 * requantizes through requant_one. */
void th_nn_mat_mult_s8_s16_span(const int32_t *cols, int32_t j0, int32_t chunks, int32_t kp,
                                const int8_t *filter, const int32_t *bias,
                                const th_per_channel_quant *quant,
                                const th_nn_out_stage *stage, const th_nn_rq_pair *tab,
                                int32_t cout, int8_t *out0, int8_t *out1)
{
    const int8_t *w = filter + 8 * j0;
    int32_t c = 0;
#if defined(TH_IM2COL_SPAN_ASM)
    if (tab != NULL) { /* the table's block loop, skipping the chunks outside the span */
        c = 2 * (cout >> 1);
        mat_mult_2x2_tab_skip(cols, chunks, w, tab, cout >> 1, out0, out1, 8 * (kp / 4 - chunks));
    }
#endif
    if (tab == NULL && bias != NULL && stage->fast) { /* the lean loops, skipping */
        const int32_t skip = 8 * (kp / 4 - chunks);
        c = stage->clamp ? mat_mult_2x2_clamp_skip(cols, chunks, w, bias, quant, stage, cout,
                                                   out0, out1, skip)
                         : mat_mult_2x2_plain_skip(cols, chunks, w, bias, quant, stage, cout,
                                                   out0, out1, skip);
    }
    const int exact = tab == NULL && !stage->fast;
    /* (ssat8 bounds every output already: no clamp is the full range) */
    const int32_t lo = stage->clamp ? stage->act_min : -128;
    const int32_t hi = stage->clamp ? stage->act_max : 127;
    const int32_t zp21 = (int32_t)(2u * (uint32_t)stage->output_offset + 1u);
    for (; c + 1 < cout; c += 2, w += 2 * kp) {
        const int8_t *wp = (const int8_t *)__builtin_assume_aligned(w, 4);
        int32_t a00;
        int32_t a01;
        int32_t m0;
        int32_t m1;
        int32_t r0;
        int32_t r1;
        int32_t e0;
        int32_t e1;
        if (tab != NULL) {
            const th_nn_rq_pair *t = tab + (c >> 1);
            a00 = t->bias[0];
            a01 = t->bias[1];
            m0 = t->multiplier[0];
            m1 = t->multiplier[1];
            r0 = t->round_zp[0];
            r1 = t->round_zp[1];
            e0 = t->e[0];
            e1 = t->e[1];
        } else {
            a00 = bias != NULL ? bias[c] : 0;
            a01 = bias != NULL ? bias[c + 1] : 0;
            m0 = quant->multiplier[c];
            m1 = quant->multiplier[c + 1];
            e0 = -quant->shift[c];
            e1 = -quant->shift[c + 1];
            /* (masked: an exact stage's shifts may be anything; its constants go unused) */
            r0 = (int32_t)((uint32_t)zp21 << ((uint32_t)(e0 - 1) & 31u));
            r1 = (int32_t)((uint32_t)zp21 << ((uint32_t)(e1 - 1) & 31u));
        }
        int32_t a10 = a00;
        int32_t a11 = a01;
        mac_2x2(cols, &wp, chunks, &a00, &a01, &a10, &a11);
        if (exact) {
            const th_fast_rq none = {0, 0, 0};
            out0[c] = requant_one(a00, c, quant, bias, stage, &none, 0);
            out1[c] = requant_one(a10, c, quant, bias, stage, &none, 0);
            out0[c + 1] = requant_one(a01, c + 1, quant, bias, stage, &none, 0);
            out1[c + 1] = requant_one(a11, c + 1, quant, bias, stage, &none, 0);
            continue;
        }
        out0[c] = (int8_t)th_clamp(lean_rq(a00, m0, r0, e0, stage, 0), lo, hi);
        out1[c] = (int8_t)th_clamp(lean_rq(a10, m0, r0, e0, stage, 0), lo, hi);
        out0[c + 1] = (int8_t)th_clamp(lean_rq(a01, m1, r1, e1, stage, 0), lo, hi);
        out1[c + 1] = (int8_t)th_clamp(lean_rq(a11, m1, r1, e1, stage, 0), lo, hi);
    }
    if (c < cout) { /* the last of an odd count: its weights alone, 4 bytes a chunk */
        int32_t a0 = bias != NULL ? bias[c] : 0;
        int32_t a1 = a0;
        mac_2x1(cols, filter + (int64_t)c * kp + 4 * j0, chunks, &a0, &a1);
        const th_fast_rq rq = make_rq(quant, bias, stage, c, 0);
        out0[c] = requant_one(a0, c, quant, bias, stage, &rq, 0);
        out1[c] = requant_one(a1, c, quant, bias, stage, &rq, 0);
    }
}

#endif /* TH_NN_HAS_DSP */
