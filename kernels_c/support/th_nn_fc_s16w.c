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
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* One chunk of four inputs for the four channels of a block: 16 MACs in 13 instructions
 * (LDR, two SXTB16, two LDM, eight SMLAD); WORDS: its weights with the input pairs given. */
#define TH_W16_WORDS                                                                         \
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
#define TH_W16_CHUNK                                                                         \
    "ldr %[xb], [%[x]], #4\n\t"                                                             \
    "sxtb16 %[xa], %[xb]\n\t"                                                               \
    "sxtb16 %[xb], %[xb], ror #8\n\t"                                                       \
    TH_W16_WORDS
/* chunks % 4 first (bit 0, then bit 1 shifted into carry), then four per iteration; the
 * chunk instructions leave the flags alone, so the Z of the second LSRS (chunks / 4 == 0:
 * done) still holds after its two chunks. Labels 1-4. */
#define TH_W16_DOT                                                                           \
    "lsrs %[n], %[n], #1\n\t"                                                               \
    "bcc 1f\n\t"                                                                            \
    TH_W16_CHUNK                                                                             \
    "1:\n\t"                                                                                \
    "lsrs %[n], %[n], #1\n\t"                                                               \
    "bcc 2f\n\t"                                                                            \
    TH_W16_CHUNK                                                                             \
    TH_W16_CHUNK                                                                             \
    "2:\n\t"                                                                                \
    "beq 3f\n\t"                                                                            \
    "4:\n\t"                                                                                \
    TH_W16_CHUNK                                                                             \
    TH_W16_CHUNK                                                                             \
    TH_W16_CHUNK                                                                             \
    TH_W16_CHUNK                                                                             \
    "subs %[n], %[n], #1\n\t"                                                               \
    "bne 4b\n\t"                                                                            \
    "3:\n\t"                                                                                \
    /* the partial last word's pairs from the stack (memory operands: no register is      \
     * left) */                                                                              \
    "ldr %[xa], %[tf]\n\t"                                                                  \
    "cmp %[xa], #0\n\t"                                                                     \
    "beq 5f\n\t"                                                                            \
    "ldrd %[xa], %[xb], %[ta]\n\t"                                                          \
    TH_W16_WORDS                                                                             \
    "5:\n\t"
#endif

/* Four channels' accumulators, by value (an array would live on the stack). */
typedef struct {
    int32_t a0;
    int32_t a1;
    int32_t a2;
    int32_t a3;
} w16_acc4;

/* The input row's last, partial word (cin & 3 bytes, zero-padded) split into its halfword
 * pairs once per row; flag nonzero when there is one. */
typedef struct {
    int32_t flag;
    int32_t xa;
    int32_t xb;
} w16_tail;

/* The block's dot products: `chunks` full input words, then the partial last word when
 * tl->flag; *wp advanced past the block's weights. */
TH_INLINE w16_acc4 w16_block(const int8_t *x, const int16_t **wp, int32_t chunks,
                             const w16_tail *tl, w16_acc4 acc)
{
    const int16_t *w = *wp;
    int32_t a0 = acc.a0;
    int32_t a1 = acc.a1;
    int32_t a2 = acc.a2;
    int32_t a3 = acc.a3;
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* LDM needs its registers in ascending order: pinned. */
    register int32_t w0 __asm__("r8");
    register int32_t w1 __asm__("r9");
    register int32_t w2 __asm__("r10");
    register int32_t w3 __asm__("r11");
    int32_t xa;
    int32_t xb;
    int32_t n = chunks;
    __asm__ volatile(TH_W16_DOT
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x),
          [w] "+r"(w), [n] "+r"(n), [xa] "=&r"(xa), [xb] "=&r"(xb), [w0] "=r"(w0),
          [w1] "=r"(w1), [w2] "=r"(w2), [w3] "=r"(w3)
        : [tf] "m"(tl->flag), [ta] "m"(tl->xa), [tb] "m"(tl->xb)
        : "cc", "memory");
#else
    const int32_t *wv0 = (const int32_t *)__builtin_assume_aligned(w, 4);
    for (int32_t j = 0; j < chunks; j++, x += 4, wv0 += 8) {
        const int32_t v = th_read_s32(x);
        const int32_t xa = th_sxtb16(v);
        const int32_t xb = th_sxtb16_ror8(v);
        a0 = th_smlad(xb, wv0[1], th_smlad(xa, wv0[0], a0));
        a1 = th_smlad(xb, wv0[3], th_smlad(xa, wv0[2], a1));
        a2 = th_smlad(xb, wv0[5], th_smlad(xa, wv0[4], a2));
        a3 = th_smlad(xb, wv0[7], th_smlad(xa, wv0[6], a3));
    }
    if (tl->flag != 0) {
        a0 = th_smlad(tl->xb, wv0[1], th_smlad(tl->xa, wv0[0], a0));
        a1 = th_smlad(tl->xb, wv0[3], th_smlad(tl->xa, wv0[2], a1));
        a2 = th_smlad(tl->xb, wv0[5], th_smlad(tl->xa, wv0[4], a2));
        a3 = th_smlad(tl->xb, wv0[7], th_smlad(tl->xa, wv0[6], a3));
        wv0 += 8;
    }
    w = (const int16_t *)wv0;
#endif
    *wp = w;
    return (w16_acc4){a0, a1, a2, a3};
}

/* th_fast_rq_apply of channel (m, shift = -1 - em1) with nothing made per channel: with
 * v = SMMLAR(2 acc, m, [acc < 0]) (the sign term as the accumulate),
 * (v + 2^(e-1)) >> e == ((v >> (e-1)) + 1) >> 1 (floors), and the output offset rides in
 * the last shift: ((u + 1) >> 1) + zp == (u + 2 zp + 1) >> 1. Exact where th_fast_rq_apply
 * is (|acc| < 2^29, e in [1, 22]: the host's `fast`). */
TH_INLINE int32_t w16_rq_channel(int32_t acc, int32_t m, int32_t shift, int32_t zp2p1)
{
    const int32_t a2 = (int32_t)((uint32_t)acc << 1);
    const int32_t v = th_smmlar(a2, m, acc >> 31);
    return th_ssat8(((v >> ~shift) + zp2p1) >> 1);
}

/* One batch row's whole blocks of four channels with the fast requantization (the host's
 * `fast`), the accumulators in registers from the bias to the stores; per tensor
 * (per_channel 0: channel 0's constants, made once) or per channel. */
TH_INLINE void w16_row_fast(const th_fc_w16_params *p, const int32_t *multiplier,
                            const int32_t *shift, const int8_t *x, const int16_t *w,
                            const int32_t *bias, int8_t *out, const int per_channel)
{
    const int32_t cin = p->cin;
    const int32_t full = cin / 4;
    const int32_t tail = cin & 3;
    const int32_t xt = tail != 0 ? w16_tail_word(x, 4 * full, cin) : 0;
    const w16_tail tl = {tail, th_sxtb16(xt), th_sxtb16_ror8(xt)}; /* on the stack */
    const int32_t lo = p->activation.min;
    const int32_t hi = p->activation.max;
    const int clamp = lo > -128 || hi < 127; /* else SSAT already clamped */
    const int32_t zp2p1 = 2 * p->output_offset + 1;
    const th_fast_rq rq =
        th_fast_rq_make(multiplier[0], per_channel ? -1 : shift[0], p->output_offset);
    const int32_t blocks = p->cout / 4;
    for (int32_t i = 0; i < blocks; i++, bias += 4, out += 4) {
        w16_acc4 acc = {bias[0], bias[1], bias[2], bias[3]};
        acc = w16_block(x, &w, full, &tl, acc);
        int32_t v0;
        int32_t v1;
        int32_t v2;
        int32_t v3;
        if (per_channel) {
            const int32_t *m = multiplier + 4 * i;
            const int32_t *s = shift + 4 * i;
            v0 = w16_rq_channel(acc.a0, m[0], s[0], zp2p1);
            v1 = w16_rq_channel(acc.a1, m[1], s[1], zp2p1);
            v2 = w16_rq_channel(acc.a2, m[2], s[2], zp2p1);
            v3 = w16_rq_channel(acc.a3, m[3], s[3], zp2p1);
        } else {
            v0 = th_fast_rq_apply(acc.a0, &rq);
            v1 = th_fast_rq_apply(acc.a1, &rq);
            v2 = th_fast_rq_apply(acc.a2, &rq);
            v3 = th_fast_rq_apply(acc.a3, &rq);
        }
        if (clamp) {
            v0 = th_clamp(v0, lo, hi);
            v1 = th_clamp(v1, lo, hi);
            v2 = th_clamp(v2, lo, hi);
            v3 = th_clamp(v3, lo, hi);
        }
        out[0] = (int8_t)v0;
        out[1] = (int8_t)v1;
        out[2] = (int8_t)v2;
        out[3] = (int8_t)v3;
    }
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* w16_row_fast as one assembly loop: gcc cannot keep a block's pointers in registers next to
 * the dot loop's 13, so everything the loop does not hold in registers lives in this frame
 * (memory operands). Per block: LDM of the bias, the dot loop, the requantization (per
 * tensor: the constants k0..k2 = multiplier, round_zp, e; per channel: the multipliers and
 * shifts by LDM, k2 = 2 zp + 1), the clamp when narrower than SSAT's, four STRB. */
typedef struct {
    const int8_t *x;
    int32_t chunks; /* whole input words */
    int32_t tflag;  /* the partial last word: present, its pairs */
    int32_t txa;
    int32_t txb;
    int8_t *out;
    const int32_t *bias_end;
    int32_t clamp;
    int32_t lo;
    int32_t hi;
    int32_t k0;
    int32_t k1;
    int32_t k2;
    const int32_t *mult;
    const int32_t *shift;
} w16_frame;

#define TH_W16_RQ_TENSOR1(A)                                                                 \
    "lsl %[xa], %[" A "], #1\n\t"                                                           \
    "smmlar %[" A "], %[xa], %[w0], %[w1]\n\t"                                              \
    "add %[" A "], %[" A "], %[xa], asr #31\n\t"                                            \
    "asr %[" A "], %[" A "], %[w2]\n\t"                                                     \
    "ssat %[" A "], #8, %[" A "]\n\t"
#define TH_W16_RQ_TENSOR                                                                     \
    "ldrd %[w0], %[w1], %[k0]\n\t"                                                          \
    "ldr %[w2], %[k2]\n\t"                                                                  \
    TH_W16_RQ_TENSOR1("a0") TH_W16_RQ_TENSOR1("a1") TH_W16_RQ_TENSOR1("a2")                 \
    TH_W16_RQ_TENSOR1("a3")
#define TH_W16_RQ_MUL1(A, W)                                                                 \
    "lsl %[xa], %[" A "], #1\n\t"                                                           \
    "asr %[xb], %[" A "], #31\n\t"                                                          \
    "smmlar %[" A "], %[xa], %[" W "], %[xb]\n\t"
#define TH_W16_RQ_SHIFT1(A, W)                                                               \
    "mvn %[xa], %[" W "]\n\t"                                                               \
    "asr %[" A "], %[" A "], %[xa]\n\t"                                                     \
    "add %[" A "], %[" A "], %[n]\n\t"                                                      \
    "ssat %[" A "], #8, %[" A "], asr #1\n\t"
#define TH_W16_RQ_CHANNEL                                                                    \
    "ldr %[x], %[mp]\n\t"                                                                   \
    "ldmia %[x]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                         \
    "str %[x], %[mp]\n\t"                                                                   \
    TH_W16_RQ_MUL1("a0", "w0") TH_W16_RQ_MUL1("a1", "w1") TH_W16_RQ_MUL1("a2", "w2")        \
    TH_W16_RQ_MUL1("a3", "w3")                                                               \
    "ldr %[x], %[sp]\n\t"                                                                   \
    "ldmia %[x]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                         \
    "str %[x], %[sp]\n\t"                                                                   \
    "ldr %[n], %[k2]\n\t"                                                                   \
    TH_W16_RQ_SHIFT1("a0", "w0") TH_W16_RQ_SHIFT1("a1", "w1") TH_W16_RQ_SHIFT1("a2", "w2")  \
    TH_W16_RQ_SHIFT1("a3", "w3")
#define TH_W16_CLAMP1(A)                                                                     \
    "cmp %[" A "], %[xa]\n\t"                                                               \
    "it lt\n\t"                                                                             \
    "movlt %[" A "], %[xa]\n\t"                                                             \
    "cmp %[" A "], %[xb]\n\t"                                                               \
    "it gt\n\t"                                                                             \
    "movgt %[" A "], %[xb]\n\t"
/* The block loop around the requantization RQ (label 0; 6 after the clamp). */
#define TH_W16_ROW(RQ)                                                                       \
    "0:\n\t"                                                                                \
    "ldmia %[bias]!, {%[a0], %[a1], %[a2], %[a3]}\n\t"                                      \
    "ldrd %[x], %[n], %[xp]\n\t"                                                            \
    TH_W16_DOT                                                                               \
    RQ                                                                                       \
    "ldr %[xa], %[clamp]\n\t"                                                               \
    "cmp %[xa], #0\n\t"                                                                     \
    "beq 6f\n\t"                                                                            \
    "ldrd %[xa], %[xb], %[lo]\n\t"                                                          \
    TH_W16_CLAMP1("a0") TH_W16_CLAMP1("a1") TH_W16_CLAMP1("a2") TH_W16_CLAMP1("a3")         \
    "6:\n\t"                                                                                \
    "ldr %[x], %[out]\n\t"                                                                  \
    "strb %[a0], [%[x]], #1\n\t"                                                            \
    "strb %[a1], [%[x]], #1\n\t"                                                            \
    "strb %[a2], [%[x]], #1\n\t"                                                            \
    "strb %[a3], [%[x]], #1\n\t"                                                            \
    "str %[x], %[out]\n\t"                                                                  \
    "ldr %[x], %[bend]\n\t"                                                                 \
    "cmp %[bias], %[x]\n\t"                                                                 \
    "bne 0b\n\t"

/* The asm statement of w16_row_asm (the same operands for both requantizations). Pairs of
 * frame words are read by LDRD from the first one's operand (x and chunks, the tail's pairs,
 * lo and hi, k0 and k1); out, mult and shift are written back through their operands (the
 * "memory" clobber covers the frame). */
#define TH_W16_ROW_ASM(RQ)                                                                   \
    __asm__ volatile(TH_W16_ROW(RQ)                                                          \
                     : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3),        \
                       [x] "=&r"(xr), [w] "+r"(w), [n] "=&r"(n), [xa] "=&r"(xa),             \
                       [xb] "=&r"(xb), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2),       \
                       [w3] "=&r"(w3), [bias] "+r"(bias)                                     \
                     : [xp] "m"(f.x), [tf] "m"(f.tflag), [ta] "m"(f.txa),                    \
                       [bend] "m"(f.bias_end), [clamp] "m"(f.clamp), [lo] "m"(f.lo),         \
                       [k0] "m"(f.k0), [k2] "m"(f.k2), [out] "m"(f.out), [mp] "m"(f.mult),    \
                       [sp] "m"(f.shift)                                                     \
                     : "cc", "memory")

TH_INLINE void w16_row_asm(const th_fc_w16_params *p, const int32_t *multiplier,
                           const int32_t *shift, const int8_t *x, const int16_t *w,
                           const int32_t *bias, int8_t *out, const int per_channel)
{
    const int32_t cin = p->cin;
    const int32_t full = cin / 4;
    const int32_t tail = cin & 3;
    const int32_t xt = tail != 0 ? w16_tail_word(x, 4 * full, cin) : 0;
    const int32_t blocks = p->cout / 4;
    if (blocks == 0) {
        return;
    }
    const int32_t lo = p->activation.min;
    const int32_t hi = p->activation.max;
    const th_fast_rq rq =
        th_fast_rq_make(multiplier[0], per_channel ? -1 : shift[0], p->output_offset);
    /* aligned for LDRD; not const: the loop writes out, mult and shift back */
    w16_frame f __attribute__((aligned(8))) = {x, full, tail, th_sxtb16(xt), th_sxtb16_ror8(xt), out, bias + 4 * blocks,
                   lo > -128 || hi < 127, lo, hi, rq.multiplier, rq.round_zp,
                   per_channel ? 2 * p->output_offset + 1 : rq.e, multiplier, shift};
    register int32_t a0 __asm__("r0");
    register int32_t a1 __asm__("r1");
    register int32_t a2 __asm__("r2");
    register int32_t a3 __asm__("r3");
    register int32_t w0 __asm__("r8");
    register int32_t w1 __asm__("r9");
    register int32_t w2 __asm__("r10");
    register int32_t w3 __asm__("r11");
    const int8_t *xr;
    int32_t n;
    int32_t xa;
    int32_t xb;
    if (per_channel) {
        TH_W16_ROW_ASM(TH_W16_RQ_CHANNEL);
    } else {
        TH_W16_ROW_ASM(TH_W16_RQ_TENSOR);
    }
}
#endif

static void __attribute__((noinline))
w16_row_tensor(const th_fc_w16_params *p, const int32_t *multiplier, const int32_t *shift,
               const int8_t *x, const int16_t *w, const int32_t *bias, int8_t *out)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    w16_row_asm(p, multiplier, shift, x, w, bias, out, 0);
#else
    w16_row_fast(p, multiplier, shift, x, w, bias, out, 0);
#endif
}

static void __attribute__((noinline))
w16_row_channel(const th_fc_w16_params *p, const int32_t *multiplier, const int32_t *shift,
                const int8_t *x, const int16_t *w, const int32_t *bias, int8_t *out)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    w16_row_asm(p, multiplier, shift, x, w, bias, out, 1);
#else
    w16_row_fast(p, multiplier, shift, x, w, bias, out, 1);
#endif
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
        int32_t c0 = 0;
#if TH_NN_HAS_DSP
        if (fast) { /* whole blocks in a loop of their own; the last 1..3 channels below */
            if (step != 0) {
                w16_row_channel(params, multiplier, shift, x, w, bias, out);
            } else {
                w16_row_tensor(params, multiplier, shift, x, w, bias, out);
            }
            c0 = cout & ~3;
            w += (int64_t)c0 * 4 * chunks;
        }
#endif
        for (; c0 < cout; c0 += 4) {
#if TH_NN_HAS_DSP
            const w16_tail tl = {full != chunks, th_sxtb16(tail), th_sxtb16_ror8(tail)};
            const w16_acc4 a4 = w16_block(x, &w, full, &tl,
                                          (w16_acc4){bias[c0], bias[c0 + 1], bias[c0 + 2],
                                                     bias[c0 + 3]});
            const int32_t acc[4] = {a4.a0, a4.a1, a4.a2, a4.a3};
#else
            int32_t acc[4] = {bias[c0], bias[c0 + 1], bias[c0 + 2], bias[c0 + 3]};
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
