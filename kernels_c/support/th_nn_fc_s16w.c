/* th_fc_s8_w16: FULLY_CONNECTED with int16 weights the host laid out (see th_nn.h).
 *
 * Register block: 4 output channels x one input row. Per chunk of 4 inputs the DSP loop
 * loads one input word (LDR), splits it into two halfword pairs (SXTB16, SXTB16 ROR 8),
 * loads the block's 8 weight words (two LDM of 4) and issues 8 SMLAD: 16 MACs in 13
 * instructions (+ the loop's LSRS/SUBS/BNE every fourth chunk), where the int8 weights
 * of th_nn_fc_s8 cost 4 SXTB16 and the input offset 2 SXTAB16 more. The input offset is
 * in the host-made bias, so the input is widened without it. Requantization per output as
 * th_nn_fc_s8 does it (the fast form when the host found it exact, else th_requantize_s8).
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

/* The last, partial input word (bytes past cin read as 0; their weights are 0 anyway). */
TH_INLINE int32_t w16_tail_word(const int8_t *x, int32_t from, int32_t cin)
{
    uint32_t v = 0;
    for (int32_t i = cin - from - 1; i >= 0; i--) {
        v = (v << 8) | (uint8_t)x[from + i];
    }
    return (int32_t)v;
}

#if TH_NN_HAS_DSP
/* acc[0..3] += the dot products of `chunks` full input words with the block's weights;
 * *wp advanced past them. */
TH_INLINE void w16_block(const int8_t *x, const int16_t **wp, int32_t chunks, int32_t acc[4])
{
    const int16_t *w = *wp;
    int32_t a0 = acc[0];
    int32_t a1 = acc[1];
    int32_t a2 = acc[2];
    int32_t a3 = acc[3];
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* LDM needs its registers in ascending order: pinned. */
    register int32_t w0 __asm__("r8");
    register int32_t w1 __asm__("r9");
    register int32_t w2 __asm__("r10");
    register int32_t w3 __asm__("r11");
    int32_t xa;
    int32_t xb;
    int32_t n = chunks;
#define TH_W16_CHUNK                                                                         \
    "ldr %[xb], [%[x]], #4\n\t"                                                             \
    "sxtb16 %[xa], %[xb]\n\t"                                                               \
    "sxtb16 %[xb], %[xb], ror #8\n\t"                                                       \
    "ldmia %[w]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                         \
    "smlad %[a0], %[xa], %[w0], %[a0]\n\t"                                                  \
    "smlad %[a0], %[xb], %[w1], %[a0]\n\t"                                                  \
    "smlad %[a1], %[xa], %[w2], %[a1]\n\t"                                                  \
    "smlad %[a1], %[xb], %[w3], %[a1]\n\t"                                                  \
    "ldmia %[w]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                         \
    "smlad %[a2], %[xa], %[w0], %[a2]\n\t"                                                  \
    "smlad %[a2], %[xb], %[w1], %[a2]\n\t"                                                  \
    "smlad %[a3], %[xa], %[w2], %[a3]\n\t"                                                  \
    "smlad %[a3], %[xb], %[w3], %[a3]\n\t"
    /* chunks % 4 first (bit 0, then bit 1 shifted into carry), then four per iteration;
     * the chunk instructions leave the flags alone, so the Z of the second LSRS
     * (chunks / 4 == 0: done) still holds after its two chunks. */
    __asm__ volatile(
        "lsrs %[n], %[n], #1\n\t"
        "bcc 1f\n\t"
        TH_W16_CHUNK
        "1:\n\t"
        "lsrs %[n], %[n], #1\n\t"
        "bcc 2f\n\t"
        TH_W16_CHUNK
        TH_W16_CHUNK
        "2:\n\t"
        "beq 3f\n\t"
        "4:\n\t"
        TH_W16_CHUNK
        TH_W16_CHUNK
        TH_W16_CHUNK
        TH_W16_CHUNK
        "subs %[n], %[n], #1\n\t"
        "bne 4b\n\t"
        "3:\n\t"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x),
          [w] "+r"(w), [n] "+r"(n), [xa] "=&r"(xa), [xb] "=&r"(xb), [w0] "=r"(w0),
          [w1] "=r"(w1), [w2] "=r"(w2), [w3] "=r"(w3)
        :
        : "cc", "memory");
#undef TH_W16_CHUNK
#else
    const int32_t *wv = (const int32_t *)__builtin_assume_aligned(w, 4);
    for (int32_t j = 0; j < chunks; j++, x += 4, wv += 8) {
        const int32_t v = th_read_s32(x);
        const int32_t xa = th_sxtb16(v);
        const int32_t xb = th_sxtb16_ror8(v);
        a0 = th_smlad(xb, wv[1], th_smlad(xa, wv[0], a0));
        a1 = th_smlad(xb, wv[3], th_smlad(xa, wv[2], a1));
        a2 = th_smlad(xb, wv[5], th_smlad(xa, wv[4], a2));
        a3 = th_smlad(xb, wv[7], th_smlad(xa, wv[6], a3));
    }
    w = (const int16_t *)wv;
#endif
    *wp = w;
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}
#endif /* TH_NN_HAS_DSP */

/* One output: requantized, offset added, clamped (the int8 kernels' arithmetic); rq: the
 * fast constants of the channel when p->fast. */
TH_INLINE int8_t w16_out(int32_t acc, int32_t m, int32_t s, const th_fast_rq *rq,
                         const th_fc_w16_params *p)
{
    int32_t v;
#if TH_NN_HAS_DSP
    if (p->fast) {
        v = th_fast_rq_apply(acc, rq);
    } else {
        v = th_requantize_s8(acc, m, s, p->output_offset);
    }
#else
    (void)rq;
    v = th_requantize_s8(acc, m, s, p->output_offset);
#endif
    return (int8_t)th_clamp(v, p->activation.min, p->activation.max);
}

th_status th_fc_s8_w16(const th_fc_w16_params *params, const int32_t *multiplier,
                       const int32_t *shift, const int8_t *input, const int16_t *weights,
                       const int32_t *bias, int8_t *output)
{
    if (params == NULL || multiplier == NULL || shift == NULL || input == NULL ||
        weights == NULL || bias == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    const int32_t cin = params->cin;
    const int32_t cout = params->cout;
    if (params->batches <= 0 || cin <= 0 || cout <= 0 || params->mult_step < 0 ||
        params->mult_step > 1) {
        return TH_ERR_ARG;
    }
    const int32_t full = cin / 4;                  /* whole input words */
    const int32_t chunks = (cin + 3) / 4;          /* weight chunks per block */
    const int32_t step = params->mult_step;
    const int32_t zp = params->output_offset;
    const int32_t fast = params->fast;
    const th_fast_rq rq_tensor = fast ? th_fast_rq_make(multiplier[0], shift[0], zp)
                                      : (th_fast_rq){0, 0, 0};
    for (int32_t b = 0; b < params->batches; b++) {
        const int8_t *x = input + (int64_t)b * cin;
        int8_t *out = output + (int64_t)b * cout;
        const int32_t tail = (cin & 3) != 0 ? w16_tail_word(x, 4 * full, cin) : 0;
        const int16_t *w = weights;
        for (int32_t c0 = 0; c0 < cout; c0 += 4) {
            int32_t acc[4] = {bias[c0], bias[c0 + 1], bias[c0 + 2], bias[c0 + 3]};
#if TH_NN_HAS_DSP
            w16_block(x, &w, full, acc);
            if (full != chunks) {
                const int32_t *wv = (const int32_t *)__builtin_assume_aligned(w, 4);
                const int32_t xa = th_sxtb16(tail);
                const int32_t xb = th_sxtb16_ror8(tail);
                for (int32_t o = 0; o < 4; o++) {
                    acc[o] = th_smlad(xb, wv[2 * o + 1], th_smlad(xa, wv[2 * o], acc[o]));
                }
                w += 16;
            }
#else
            for (int32_t j = 0; j < chunks; j++, w += 16) {
                const int32_t v = j < full ? th_read_s32(x + 4 * j) : tail;
                for (int32_t o = 0; o < 4; o++) {
                    for (int32_t k = 0; k < 4; k++) {
                        const int32_t xk = (int8_t)(uint8_t)((uint32_t)v >> (8 * k));
                        const int16_t wk = w[4 * o + (k % 2) * 2 + k / 2];
                        acc[o] = (int32_t)((uint32_t)acc[o] + (uint32_t)(xk * wk));
                    }
                }
            }
#endif
            const int32_t g = TH_MIN(4, cout - c0);
            for (int32_t o = 0; o < g; o++) {
                const int32_t c = c0 + o;
                const int32_t m = multiplier[c * step];
                const int32_t s = shift[c * step];
                const th_fast_rq rq = step && fast ? th_fast_rq_make(m, s, zp) : rq_tensor;
                out[c] = w16_out(acc[o], m, s, &rq, params);
            }
        }
    }
    return TH_OK;
}
