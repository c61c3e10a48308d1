/* th_fc_s8_w16: FULLY_CONNECTED with int16 weights the host laid out (see th_nn.h).
 *
 * Register block: 4 output channels x one input row. Per chunk of 4 inputs the DSP loop
 * loads one input word (LDR), splits it into two halfword pairs (SXTB16, SXTB16 ROR 8),
 * loads the block's 8 weight words (two LDM of 4) and issues 8 SMLAD: 16 MACs in 13
 * instructions (+ the loop's LSRS/SUBS/BNE every fourth chunk), where the int8 weights
 * of th_nn_fc_s8 cost 4 SXTB16 and the input offset 2 SXTAB16 more. The input offset is
 * in the host-made bias, so the input is widened without it. Requantization per output as
 * th_nn_fc_s8 does it (the fast form when the host found it exact, else th_requantize_s8).
 *
 * Row loop (w16_blocks, paths FC_W16_TENSOR / FC_W16_CHANNEL): when the host found the fast
 * requantization exact and there are four blocks or more, the whole blocks of a row run in
 * one loop (on Armv7E-M one assembly loop: on short inputs the per-output work dominates,
 * and gcc keeps no block state in registers next to the dot's 13): bias by LDM, the dot,
 * the requantization per tensor or per channel (constants by LDM), a bytewise clamp (none
 * on int8's whole range: path FC_W16_FULL), one word stored; one loop per requantization and
 * store, its dot entered by computed branches set once per row (TH_W16R_ENTRIES). The last
 * 1..3 channels run as one more pass of the same loop (the host's zero-padded weights and
 * bias, their constants copied, the word stored aside).
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_fc_rows.h"
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

#if TH_NN_HAS_DSP && TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* One chunk of four inputs for the four channels of a block: 16 MACs in 13 instructions
 * (LDR, two SXTB16, two LDM, eight SMLAD); WORDS: its weights with the input pairs given. */
#define TH_W16R_WORDS                                                                         \
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
#define TH_W16R_CHUNK                                                                         \
    "ldr %[xb], [%[x]], #4\n\t"                                                             \
    "sxtb16 %[xa], %[xb]\n\t"                                                               \
    "sxtb16 %[xb], %[xb], ror #8\n\t"                                                       \
    TH_W16R_WORDS
#define TH_W16R_RQ_TENSOR                                                                     \
    "ldrd %[w0], %[w1], %[k0]\n\t"                                                          \
    "ldr %[w2], %[k2]\n\t"                                                                  \
    TH_NN_ROWS_RQ1("a0", "w0", "w1", "w2") TH_NN_ROWS_RQ1("a1", "w0", "w1", "w2")           \
    TH_NN_ROWS_RQ1("a2", "w0", "w1", "w2") TH_NN_ROWS_RQ1("a3", "w0", "w1", "w2")
/* th_fast_rq_apply up to its shift, accumulator A with the channel's multiplier M and
 * round_zp RZ (operand xa a temporary). */
#define TH_W16R_RQ_MUL(A, M, RZ)                                                              \
    "lsl %[xa], %[" A "], #1\n\t"                                                           \
    "smmlar %[" A "], %[xa], %[" M "], %[" RZ "]\n\t"                                       \
    "add %[" A "], %[" A "], %[xa], asr #31\n\t"
#define TH_W16R_RQ_SHIFT(A, E)                                                                \
    "asr %[" A "], %[" A "], %[" E "]\n\t"                                                  \
    "ssat %[" A "], #8, %[" A "]\n\t"
/* Per channel: the block's 12 words of the host's table (fc_w16_rq_table) by three LDM. */
#define TH_W16R_RQ_CHANNEL                                                                    \
    "ldr %[x], %[mp]\n\t"                                                                   \
    "ldmia %[x]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                         \
    TH_W16R_RQ_MUL("a0", "w0", "w1") TH_W16R_RQ_MUL("a1", "w2", "w3")                         \
    "ldmia %[x]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                         \
    TH_W16R_RQ_MUL("a2", "w0", "w1") TH_W16R_RQ_MUL("a3", "w2", "w3")                         \
    "ldmia %[x]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                         \
    "str %[x], %[mp]\n\t"                                                                   \
    TH_W16R_RQ_SHIFT("a0", "w0") TH_W16R_RQ_SHIFT("a1", "w1") TH_W16R_RQ_SHIFT("a2", "w2")      \
    TH_W16R_RQ_SHIFT("a3", "w3")
/* w16_block's dot over n whole input words: chunks % 4 first (bit 0, then bit 1 shifted
 * into carry; the chunks leave the flags alone, so the Z of the second LSRS, n / 4 == 0,
 * still holds), then four per iteration. */
#define TH_W16B_DOT4                                                                           \
    "lsrs %[n], %[n], #1\n\t"                                                               \
    "bcc 1f\n\t"                                                                            \
    TH_W16R_CHUNK                                                                             \
    "1:\n\t"                                                                                \
    "lsrs %[n], %[n], #1\n\t"                                                               \
    "bcc 2f\n\t"                                                                            \
    TH_W16R_CHUNK                                                                             \
    TH_W16R_CHUNK                                                                             \
    "2:\n\t"                                                                                \
    "beq 3f\n\t"                                                                            \
    "9:\n\t"                                                                                \
    TH_W16R_CHUNK                                                                             \
    TH_W16R_CHUNK                                                                             \
    TH_W16R_CHUNK                                                                             \
    TH_W16R_CHUNK                                                                             \
    "subs %[n], %[n], #1\n\t"                                                               \
    "bne 9b\n\t"                                                                            \
    "3:\n\t"
/* The dot over the whole input words, entered by a computed branch (Duff's device): the
 * frame's e1 (the chunk of the loop where chunks % per-pass of them remain, or e2 when there
 * are none) and e2 (after the loop: the partial last word, label 4, or past it, label 5) are
 * set once per row by TH_W16R_ENTRIES (the last channels' pass finds them set), so a block spends two LDR PC on what were tests of
 * the parity and of the partial word. Labels 9, 8, 2, 1: the loop's chunks (DOT4: four per
 * pass where the build keeps FC_W16_UNROLL4, inputs of 128 or more; else DOT2, smaller);
 * lp: the passes, ceil(chunks / per pass). */
#define TH_W16R_DOT4                                                                           \
    "9:\n\t" TH_W16R_CHUNK "8:\n\t" TH_W16R_CHUNK "2:\n\t" TH_W16R_CHUNK "1:\n\t"            \
    TH_W16R_CHUNK                                                                             \
    "subs %[n], %[n], #1\n\t"                                                               \
    "bne 9b\n\t"
#define TH_W16R_DOT2                                                                           \
    "9:\n\t" TH_W16R_CHUNK "8:\n\t" TH_W16R_CHUNK                                             \
    "subs %[n], %[n], #1\n\t"                                                               \
    "bne 9b\n\t"
#define TH_W16R_ENTRIES4                                                                       \
    "ldr %[n], %[chp]\n\t"                                                                  \
    "adds %[xa], %[n], #3\n\t"                                                              \
    "lsrs %[xa], %[xa], #2\n\t"                                                             \
    "str %[xa], %[lp]\n\t"                                                                  \
    "and %[x], %[n], #3\n\t"                                                                \
    "adr.w %[xa], 9f\n\t"                                                                   \
    "adr.w %[xb], 1f\n\t"                                                                   \
    "cmp %[x], #1\n\t"                                                                      \
    "it eq\n\t"                                                                             \
    "moveq %[xa], %[xb]\n\t"                                                                \
    "adr.w %[xb], 2f\n\t"                                                                   \
    "cmp %[x], #2\n\t"                                                                      \
    "it eq\n\t"                                                                             \
    "moveq %[xa], %[xb]\n\t"                                                                \
    "adr.w %[xb], 8f\n\t"                                                                   \
    "cmp %[x], #3\n\t"                                                                      \
    "it eq\n\t"                                                                             \
    "moveq %[xa], %[xb]\n\t"
#define TH_W16R_ENTRIES2                                                                       \
    "ldr %[n], %[chp]\n\t"                                                                  \
    "adds %[xa], %[n], #1\n\t"                                                              \
    "lsrs %[xa], %[xa], #1\n\t"                                                             \
    "str %[xa], %[lp]\n\t"                                                                  \
    "adr.w %[xa], 9f\n\t"                                                                   \
    "adr.w %[xb], 8f\n\t"                                                                   \
    "tst %[n], #1\n\t"                                                                      \
    "it ne\n\t"                                                                             \
    "movne %[xa], %[xb]\n\t"
/* e2 the partial word's label where there is one, else past it; e1 = e2 without chunks
 * (Thumb addresses: bit 0 set). */
#define TH_W16R_ENTRIES_END                                                                    \
    "ldr %[x], %[tf]\n\t"                                                                   \
    "cmp %[x], #0\n\t"                                                                      \
    "adr.w %[xb], 5f\n\t"                                                                   \
    "adr.w %[x], 4f\n\t"                                                                    \
    "it ne\n\t"                                                                             \
    "movne %[xb], %[x]\n\t"                                                                 \
    "orr %[xb], %[xb], #1\n\t"                                                              \
    "str %[xb], %[e2]\n\t"                                                                  \
    "cmp %[n], #0\n\t"                                                                      \
    "it eq\n\t"                                                                             \
    "moveq %[xa], %[xb]\n\t"                                                                \
    "orr %[xa], %[xa], #1\n\t"                                                              \
    "str %[xa], %[e1]\n\t"
#if TH_NN_KEEP_FC_W16_UNROLL4
#define TH_W16R_DOT TH_W16R_DOT4
#define TH_W16R_ENTRIES TH_W16R_ENTRIES4 TH_W16R_ENTRIES_END
#else
#define TH_W16R_DOT TH_W16R_DOT2
#define TH_W16R_ENTRIES TH_W16R_ENTRIES2 TH_W16R_ENTRIES_END
#endif
#endif



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
    /* chunks % 4 first, then four per iteration (TH_W16B_DOT4) */
    __asm__ volatile(TH_W16B_DOT4
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x),
          [w] "+r"(w), [n] "+r"(n), [xa] "=&r"(xa), [xb] "=&r"(xb), [w0] "=r"(w0),
          [w1] "=r"(w1), [w2] "=r"(w2), [w3] "=r"(w3)
        :
        : "cc", "memory");
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

#if TH_NN_HAS_DSP
/* One row's block loop state, in memory (the assembly loop reads it through memory operands:
 * its registers all go to the dot). Pairs read by LDRD stay adjacent: x and its passes, the
 * tail's pairs, lo4 and hi4, k0 and k1. */
typedef struct {
    const int8_t *x;
    int32_t passes; /* the assembly dot's loop count (TH_W16R_ENTRIES) */
    int32_t chunks; /* whole input words */
    int32_t tflag;  /* the partial last word: present, its halfword pairs */
    int32_t txa;
    int32_t txb;
    int8_t *out;
    const int32_t *bias_end;
    int32_t mode;   /* W16_TENSOR, W16_CHANNEL */
    uint32_t lo4;   /* the activation range, its bytes four times (SSUB8 / SEL lanes) */
    uint32_t hi4;
    int32_t k0;     /* W16_TENSOR: multiplier, round_zp, e (th_fast_rq) */
    int32_t k1;
    int32_t k2;
    const int32_t *mult; /* W16_CHANNEL: the block's 12 words of the host's table */
    uintptr_t e1;   /* the dot's entries (Thumb addresses, TH_W16R_ENTRIES) */
    uintptr_t e2;
} w16_frame;

enum { W16_TENSOR = 0, W16_CHANNEL = 1 };

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* The four outputs packed into a0 and stored through the frame's out pointer, unclamped
 * (path FC_W16_FULL: the activation range is int8's, SSAT clamped already). */
#define TH_W16R_STORE_FULL                                                                    \
    "bfi %[a0], %[a1], #8, #8\n\t"                                                          \
    "bfi %[a0], %[a2], #16, #8\n\t"                                                         \
    "bfi %[a0], %[a3], #24, #8\n\t"                                                         \
    "ldr %[x], %[out]\n\t"                                                                  \
    "str %[a0], [%[x]], #4\n\t"                                                             \
    "str %[x], %[out]\n\t"

/* The block loop (label 0), one per requantization RQ (per tensor or per channel, each its
 * own loop: no mode test a block) and STORE (clamped bytewise, TH_NN_ROWS_STORE, or not):
 * bias by LDM, the dot (TH_W16R_DOT, entered through e1, left through e2: the partial last
 * word's pairs from the frame), the requantization, the four outputs stored as one word. */
#define TH_W16R_ROW(RQ, STORE)                                                                \
    "ldr %[xa], %[e1]\n\t"                                                                  \
    "cmp %[xa], #0\n\t"                                                                     \
    "bne 0f\n\t"                                                                            \
    TH_W16R_ENTRIES                                                                           \
    "0:\n\t"                                                                                \
    "ldmia %[bias]!, {%[a0], %[a1], %[a2], %[a3]}\n\t"                                      \
    "ldrd %[x], %[n], %[xp]\n\t"                                                            \
    "ldr pc, %[e1]\n\t"                                                                     \
    TH_W16R_DOT                                                                               \
    "ldr pc, %[e2]\n\t"                                                                     \
    "4:\n\t"                                                                                \
    "ldrd %[xa], %[xb], %[ta]\n\t"                                                          \
    TH_W16R_WORDS                                                                             \
    "5:\n\t"                                                                                \
    RQ                                                                                        \
    STORE                                                                                     \
    "ldr %[x], %[bend]\n\t"                                                                 \
    "cmp %[bias], %[x]\n\t"                                                                 \
    "bne 0b\n\t"

/* One asm statement running TH_W16R_ROW(RQ, STORE) on frame l from w and bias. LDM needs
 * its registers in ascending order: pinned. The frame's words are memory operands (the loop
 * writes passes, e1, e2, out and mult back: "memory" clobber). */
#define TH_W16R_RUN(RQ, STORE)                                                                \
    do {                                                                                      \
        TH_NN_ROWS_REGS(w2, w3, xr);                                                          \
        __asm__ volatile(TH_W16R_ROW(RQ, STORE)                                               \
                         : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3),    \
                           [x] "=&r"(xr), [w] "+r"(w), [n] "=&r"(n), [xa] "=&r"(xa),          \
                           [xb] "=&r"(xb), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2),    \
                           [w3] "=&r"(w3), [bias] "+r"(bias)                                  \
                         : [xp] "m"(l.x), [lp] "m"(l.passes), [chp] "m"(l.chunks),            \
                           [tf] "m"(l.tflag), [ta] "m"(l.txa), [bend] "m"(l.bias_end),        \
                           [lo] "m"(l.lo4), [k0] "m"(l.k0), [k2] "m"(l.k2),                   \
                           [out] "m"(l.out), [mp] "m"(l.mult), [e1] "m"(l.e1),                \
                           [e2] "m"(l.e2)                                                     \
                         : "cc", "memory");                                                   \
    } while (0)
#endif

/* `blocks` blocks of four channels of one input row x, from bias and w, into out, then the
 * last `rest` (0..3) channels as one more pass of the same loop: its block's weights, bias
 * and table are the host's padded ones, its word stored into `last` and `rest` bytes of it
 * copied out. int8 outputs with the fast requantization (mode W16_TENSOR: multiplier[0],
 * shift[0]; W16_CHANNEL: per channel from the host's table p->rq_table). */
TH_INLINE void
w16_blocks(const th_fc_w16_params *p, const int32_t *multiplier, const int32_t *shift,
           const int8_t *x, const int16_t *w, const int32_t *bias, int32_t blocks, int8_t *out,
           int32_t mode, int32_t rest, int noclamp)
{
    const int32_t cin = p->cin;
    const int32_t full = cin / 4;
    const int32_t xt = (cin & 3) != 0 ? w16_tail_word(x, 4 * full, cin) : 0;
    const int32_t zp = p->output_offset;
    const th_fast_rq rq = mode == W16_TENSOR ? th_fast_rq_make(multiplier[0], shift[0], zp)
                                             : (th_fast_rq){0, 0, 0};
    uint32_t last = 0;
    (void)noclamp;
    w16_frame l __attribute__((aligned(8))) = {
        x, 0, full, cin & 3, th_sxtb16(xt), th_sxtb16_ror8(xt), out, bias + 4 * blocks, mode,
        th_nn_bytes4(p->activation.min), th_nn_bytes4(p->activation.max), rq.multiplier,
        rq.round_zp, rq.e, p->rq_table, 0, 0};
    /* The whole blocks, then (pass 1) the last partial one. The count is volatile: gcc would
     * peel the first pass, each asm loop twice in the code. */
    volatile int32_t passes = rest != 0 ? 2 : 1;
    for (;;) {
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
        /* A loop the build leaves out is never selected (TH_NN_PATH, w16_rows); with none
         * kept, nothing here reads l or w. */
        (void)l;
        (void)w;
        if (mode == W16_TENSOR) {
#if TH_NN_KEEP_FC_W16_TENSOR
            if (noclamp) {
#if TH_NN_KEEP_FC_W16_FULL
                TH_W16R_RUN(TH_W16R_RQ_TENSOR, TH_W16R_STORE_FULL);
#endif
            } else {
                TH_W16R_RUN(TH_W16R_RQ_TENSOR, TH_NN_ROWS_STORE);
            }
#endif
        } else {
#if TH_NN_KEEP_FC_W16_CHANNEL
            if (noclamp) {
#if TH_NN_KEEP_FC_W16_FULL
                TH_W16R_RUN(TH_W16R_RQ_CHANNEL, TH_W16R_STORE_FULL);
#endif
            } else {
                TH_W16R_RUN(TH_W16R_RQ_CHANNEL, TH_NN_ROWS_STORE);
            }
#endif
        }
#else
        w16_frame *f = &l;
        for (; bias != f->bias_end; bias += 4) {
            int32_t acc[4] = {bias[0], bias[1], bias[2], bias[3]};
            const int8_t *x = f->x;
            for (int32_t j = 0; j <= f->chunks; j++, w += 16) {
                int32_t xa = f->txa;
                int32_t xb = f->txb;
                if (j == f->chunks) {
                    if (f->tflag == 0) {
                        break;
                    }
                } else {
                    const int32_t v = th_read_s32(x + 4 * j);
                    xa = th_sxtb16(v);
                    xb = th_sxtb16_ror8(v);
                }
                const int32_t *wv = (const int32_t *)__builtin_assume_aligned(w, 4);
                for (int32_t o = 0; o < 4; o++) {
                    acc[o] = th_smlad(xb, wv[2 * o + 1], th_smlad(xa, wv[2 * o], acc[o]));
                }
            }
            int8_t *y = f->out;
            for (int32_t o = 0; o < 4; o++) {
                th_fast_rq rc = rq;
                if (f->mode == W16_CHANNEL) {
                    const int32_t *t = f->mult;
                    rc = (th_fast_rq){t[2 * o], t[2 * o + 1], t[8 + o]};
                }
                int32_t v = th_fast_rq_apply(acc[o], &rc);
                v = th_clamp(v, (int8_t)f->lo4, (int8_t)f->hi4);
                y[o] = (int8_t)v;
            }
            f->out = y + 4;
            if (f->mode == W16_CHANNEL) {
                f->mult += 12;
            }
        }
#endif
        if (--passes == 0) {
            break;
        }
        l.out = (int8_t *)&last;
        l.bias_end = bias + 4;
    }
    for (int32_t k = 0; k < rest; k++) {
        out[4 * blocks + k] = (int8_t)(uint8_t)(last >> (8 * k));
    }
}


/* Every row (the fast requantization), its blocks and its last 1..3 channels by w16_blocks. */
static void __attribute__((noinline))
w16_rows(const th_fc_w16_params *p, const int32_t *multiplier, const int32_t *shift,
         const int8_t *input, const int16_t *weights, const int32_t *bias, int8_t *output)
{
    const int32_t cin = p->cin;
    const int32_t cout = p->cout;
    /* int8's whole range: SSAT clamps, the loop without the bytewise clamp (selected here
     * in every build, so a recording build, its DSP modelled in C, records the path) */
    const int noclamp = p->activation.min == -128 && p->activation.max == 127 &&
                        TH_NN_PATH(FC_W16_FULL);
    for (int32_t b = 0; b < p->batches; b++) {
        w16_blocks(p, multiplier, shift, input + (int64_t)b * cin, weights, bias, cout / 4,
                   output + (int64_t)b * cout, p->mult_step ? W16_CHANNEL : W16_TENSOR,
                   cout & 3, noclamp);
    }
}
#endif /* TH_NN_HAS_DSP */

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
#if TH_NN_HAS_DSP
    /* The row loop where its setup (a frame of 15 words, a call) pays: fast, four blocks or
     * more. Fewer (a classifier's last layer: 10-12 outputs) stay on the loop below, so a
     * model with only those links no second loop (its code size). */
    if (fast && cout >= 16 &&
        (step ? params->rq_table != NULL && TH_NN_PATH(FC_W16_CHANNEL)
              : TH_NN_PATH(FC_W16_TENSOR))) {
        if (cin >= 128) { /* its dot loop four chunks per pass, where the build keeps it */
            (void)TH_NN_PATH(FC_W16_UNROLL4);
        }
        w16_rows(params, multiplier, shift, input, weights, bias, output);
        return TH_OK;
    }
#endif
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
