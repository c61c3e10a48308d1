/* th_nn_mat_mult_s8_s16: the DSP core of CONV_2D: int16 columns x interleaved int8 filter.
 *
 * Register block: 2 output channels x 2 pixels. Per chunk of 4 taps it loads the two
 * pixels' 4 words (one LDM), the two channels' 2 words (one LDRD), sign-extends each
 * weight word into two halfword pairs (SXTB16, SXTB16 ROR 8) and issues 8 SMLAD:
 * 16 MACs in 14 instructions (+ SUBS, BNE every second chunk), no shuffles (the column
 * is stored in SXTB16 order). Requantization happens once per 2x2 block; with
 * stage->mixed, channels the fast requantization is not exact for (near-dead channels:
 * shift -31, bias +-2^30) take th_requantize_s8, the others stay fast.
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_DSP

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
            const int32_t *x = cols;
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
            /* Odd chunk count: one chunk first, then two per iteration. */
            __asm__ volatile(
                "tst %[n], #1\n\t"
                "beq 1f\n\t"
                TH_MM_CHUNK
                "subs %[n], %[n], #1\n\t"
                "beq 3f\n\t"
                "1:\n\t"
                TH_MM_CHUNK
                TH_MM_CHUNK
                "subs %[n], %[n], #2\n\t"
                "bne 1b\n\t"
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

void th_nn_mat_mult_s8_s16(const int32_t *cols, int32_t num_pixels, int32_t kp,
                           const int8_t *filter, const int32_t *bias,
                           const th_per_channel_quant *quant, const th_nn_out_stage *stage,
                           int32_t cout, int8_t *out0, int8_t *out1)
{
    if (stage->fast && !stage->clamp) {
        mat_mult(cols, num_pixels, kp, filter, bias, quant, stage, cout, out0, out1, 1);
    } else if (stage->mixed && !stage->clamp) {
        mat_mult(cols, num_pixels, kp, filter, bias, quant, stage, cout, out0, out1, 2);
    } else {
        mat_mult(cols, num_pixels, kp, filter, bias, quant, stage, cout, out0, out1, 0);
    }
}

#endif /* TH_NN_DSP */
