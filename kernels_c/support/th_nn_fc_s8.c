/* th_nn_fc_s8: FULLY_CONNECTED core shared by the per-tensor and per-channel kernels.
 *
 * DSP path: weights interleaved by blocks of 4 output channels (th_nn_support.h), input
 * read in place as int8 and widened with SXTAB16 (the input offset rides along), so no
 * scratch is needed. A filter offset (per-tensor FC) is folded in exactly:
 * sum((x + io) * (w + fo)) = sum((x + io) * w) + fo * sum(x + io).
 * Inputs of at most 128 values (path FC_SHORT, no filter offset, a bias): the row widened once
 * into int16 pairs on the stack (256 bytes at most), whole rows run from the entry; longer
 * inputs the same where the caller gives th_fully_connected_s8_scratch_size_fast's scratch.
 * MVE path: th_nn_mve_pixel_sums per batch row (th_nn_mve_s8.c); inputs of at most 16 values
 * (fc_mve_short) without the sums of weights.
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_fc_rows.h"
#include "th_nn_support.h"

/* The OR of every channel's multiplier, 30 - shift and shift + 31: its sign bit is set when
 * one is out of range. */
static uint32_t th_nn_check_shifts(const int32_t *multiplier, const int32_t *shift,
                                   int32_t count)
{
    uint32_t bad = 0;
    int32_t i = 0;
    for (; i + 2 <= count; i += 2) { /* two channels per pass: the loop's own cost halved */
        const uint32_t s0 = (uint32_t)shift[i];
        const uint32_t s1 = (uint32_t)shift[i + 1];
        bad |= (uint32_t)multiplier[i] | (uint32_t)multiplier[i + 1] | (30u - s0) |
               (s0 + 31u) | (30u - s1) | (s1 + 31u);
    }
    if (i < count) {
        const uint32_t s0 = (uint32_t)shift[i];
        bad |= (uint32_t)multiplier[i] | (30u - s0) | (s0 + 31u);
    }
    return bad;
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* Per channel, eight channels a pass by two LDMs of eight words: shift & ~(multiplier >> 31)
 * ANDed, whose bits 4-31 are set exactly when every shift is in [-16, -1] and every
 * multiplier >= 0 (one operation per word: 2.5 instructions per channel with the loads and
 * the loop; a call of its own, so the per-tensor check saves no registers for it). */
static uint32_t __attribute__((noinline))
th_nn_check_fc_fast8(const int32_t *multiplier, const int32_t *shift, int32_t passes)
{
    TH_NN_REGS_R4_R11(v0, v1, v2, v3, v4, v5, v6, v7);
    uint32_t all = 0xFFFFFFFFu;
    __asm__ volatile(
        "1:\n\t"
        "ldmia %[mp]!, {%[v0], %[v1], %[v2], %[v3], %[v4], %[v5], %[v6], %[v7]}\n\t"
        "orr %[v0], %[v0], %[v1]\n\t"
        "orr %[v2], %[v2], %[v3]\n\t"
        "orr %[v4], %[v4], %[v5]\n\t"
        "orr %[v6], %[v6], %[v7]\n\t"
        "orr %[v0], %[v0], %[v2]\n\t"
        "orr %[v4], %[v4], %[v6]\n\t"
        "orr %[v0], %[v0], %[v4]\n\t"
        "bic %[all], %[all], %[v0], asr #31\n\t"
        "ldmia %[sp]!, {%[v0], %[v1], %[v2], %[v3], %[v4], %[v5], %[v6], %[v7]}\n\t"
        "and %[v0], %[v0], %[v1]\n\t"
        "and %[v2], %[v2], %[v3]\n\t"
        "and %[v4], %[v4], %[v5]\n\t"
        "and %[v6], %[v6], %[v7]\n\t"
        "and %[v0], %[v0], %[v2]\n\t"
        "and %[v4], %[v4], %[v6]\n\t"
        "and %[all], %[all], %[v0]\n\t"
        "and %[all], %[all], %[v4]\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 1b\n\t"
        : [mp] "+r"(multiplier), [sp] "+r"(shift), [n] "+r"(passes), [all] "+r"(all),
          [v0] "=&r"(v0), [v1] "=&r"(v1), [v2] "=&r"(v2), [v3] "=&r"(v3), [v4] "=&r"(v4),
          [v5] "=&r"(v5), [v6] "=&r"(v6), [v7] "=&r"(v7)
        :
        : "cc", "memory");
    return all;
}
#endif

/* th_nn_check_fc's checks, inlined into the kernels' entries (COUNT < 0: per channel, one
 * constant per output channel). *COMMON: every multiplier >= 0 and every shift in [-16, -1]
 * (per channel: the fast path's requantization needs no range check of its own then). */
TH_INLINE th_status fc_check(const th_fc_params *params, const int32_t *multiplier,
                             const int32_t *shift, int32_t count, const th_dims *input_dims,
                             const int8_t *input, const th_dims *filter_dims,
                             const int8_t *filter, const th_dims *output_dims,
                             const int8_t *output, int *common)
{
    if (params == NULL || multiplier == NULL || shift == NULL || input_dims == NULL ||
        input == NULL || filter_dims == NULL || filter == NULL || output_dims == NULL ||
        output == NULL) {
        return TH_ERR_ARG;
    }
    const int32_t cin = filter_dims->c;
    const int32_t cout = filter_dims->n;
    const int32_t batches = input_dims->n;
    if (count < 0) {
        count = cout;
    }
    /* The scalar checks ORed into one word, one test (a branch each cost ~3 instructions).
     * cin, cout, batches >= 1: v - 1 has its sign bit set for 0 and below (INT32_MIN
     * aside, whose unsigned product below is >= 2^31). */
    const uint32_t pos = ((uint32_t)cin - 1u) | ((uint32_t)cout - 1u) | ((uint32_t)batches - 1u);
    /* batches * cin and cout * cin below 2^30, as unsigned 64-bit products. */
    const uint64_t rows = (uint64_t)(uint32_t)batches * (uint32_t)cin;
    const uint64_t wts = (uint64_t)(uint32_t)cout * (uint32_t)cin;
    /* Offsets and the activation range biased into [0, 255] (their OR below 256), and
     * min <= max. */
    const uint32_t ranges =
        ((uint32_t)params->input_offset + 127u) | ((uint32_t)params->filter_offset + 127u) |
        ((uint32_t)params->output_offset + 128u) | ((uint32_t)params->activation.min + 128u) |
        ((uint32_t)params->activation.max + 128u);
    uint32_t bad = (pos >> 31) | (uint32_t)(rows >> 32) | ((uint32_t)rows >> 30) |
                   (uint32_t)(wts >> 32) | ((uint32_t)wts >> 30) | (ranges >> 8) |
                   (((uint32_t)params->activation.max - (uint32_t)params->activation.min) >>
                    31) |
                   ((uint32_t)input_dims->c ^ (uint32_t)cin) |
                   ((uint32_t)output_dims->n ^ (uint32_t)batches) |
                   ((uint32_t)output_dims->c ^ (uint32_t)cout);
#if TH_NN_FILTER_INTERLEAVED
    bad |= (uint32_t)((uintptr_t)filter & 3u);
#endif
    if (bad != 0) {
        return TH_ERR_ARG;
    }
    /* The common case first, two operations per channel: multipliers >= 0 (their OR) and
     * shifts in [-16, -1] (~shift in [0, 15]: their OR below 16), inside the range below. */
    uint32_t neg = 0;
    uint32_t nots = 0;
    int32_t i = 0;
    if (count == 1) { /* per tensor */
        neg = (uint32_t)multiplier[0];
        nots = ~(uint32_t)shift[0];
        i = 1;
    }
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    else if (count >= 8) {
        nots = ~th_nn_check_fc_fast8(multiplier, shift, count >> 3);
        i = count & ~7; /* nots below 16 exactly when those channels are the common case */
    }
#else
    for (; i + 4 <= count; i += 4) {
        neg |= (uint32_t)multiplier[i] | (uint32_t)multiplier[i + 1] |
               (uint32_t)multiplier[i + 2] | (uint32_t)multiplier[i + 3];
        nots |= ~(uint32_t)shift[i] | ~(uint32_t)shift[i + 1] | ~(uint32_t)shift[i + 2] |
                ~(uint32_t)shift[i + 3];
    }
#endif
    for (; i < count; i++) {
        neg |= (uint32_t)multiplier[i];
        nots |= ~(uint32_t)shift[i];
    }
    /* Else multiplier >= 0 and -31 <= shift <= 30 for all: sign bits ORed, no branch per
     * channel (30 - s and s + 31 are both >= 0 exactly in range, as 32-bit words). */
    *common = (neg >> 31) == 0 && nots < 16u;
    if (!*common && (th_nn_check_shifts(multiplier, shift, count) >> 31) != 0) {
        return TH_ERR_ARG;
    }
    return TH_OK;
}

th_status th_nn_check_fc(const th_fc_params *params, const int32_t *multiplier,
                         const int32_t *shift, int32_t count, const th_dims *input_dims,
                         const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                         const th_dims *output_dims, const int8_t *output)
{
    int common;
    return fc_check(params, multiplier, shift, count < 0 ? 0 : count, input_dims, input,
                    filter_dims, filter, output_dims, output, &common);
}

/* Path FC_SHORT (below) widens the input row, 8 bytes per chunk of four inputs, on its stack
 * for inputs of at most FC_SHORT_MAX values; longer ones (up to FC_SHORT_SCRATCH_MAX) into
 * the caller's scratch, for two blocks of four channels or more (the widening, ~5
 * instructions a chunk, costs about what one block saves). */
#define FC_SHORT_MAX 128
#define FC_SHORT_SCRATCH_MAX (INT32_C(1) << 20)

int32_t th_nn_fc_short_scratch(const th_dims *filter_dims)
{
#if TH_NN_HAS_DSP && !TH_NN_MVE
    if (filter_dims != NULL && filter_dims->c > FC_SHORT_MAX &&
        filter_dims->c <= FC_SHORT_SCRATCH_MAX && filter_dims->n >= 8) {
        return 2 * th_round_up4(filter_dims->c);
    }
#else
    (void)filter_dims;
#endif
    return 0;
}

#if TH_NN_HAS_DSP && !TH_NN_MVE

/* Input word k..k+3, zero-padded past cin (the filter's padding is zero too): the last 1-3
 * bytes one by one (no loop; a byte loop into a buffer becomes a memcpy call). */
TH_INLINE int32_t load_x(const int8_t *x, int32_t k, int32_t cin)
{
    if (k + 4 <= cin) {
        return th_read_s32(x + k);
    }
    const int32_t r = cin - k; /* 1..3 bytes */
    uint32_t v = (uint8_t)x[k];
    if (r > 1) {
        v |= (uint32_t)(uint8_t)x[k + 1] << 8;
    }
    if (r > 2) {
        v |= (uint32_t)(uint8_t)x[k + 2] << 16;
    }
    return (int32_t)v;
}

/* One chunk's pairs (xa, xb) times g (1..3, a constant after inlining) weight words of an
 * interleaved block, into the accumulators. */
TH_INLINE void words_g(int32_t xa, int32_t xb, const int8_t *w, int32_t *a0, int32_t *a1,
                       int32_t *a2, const int32_t g)
{
    const int32_t w0 = th_read_s32(w);
    *a0 = th_smlad(xb, th_sxtb16_ror8(w0), th_smlad(xa, th_sxtb16(w0), *a0));
    if (g > 1) {
        const int32_t w1 = th_read_s32(w + 4);
        *a1 = th_smlad(xb, th_sxtb16_ror8(w1), th_smlad(xa, th_sxtb16(w1), *a1));
    }
    if (g > 2) {
        const int32_t w2 = th_read_s32(w + 8);
        *a2 = th_smlad(xb, th_sxtb16_ror8(w2), th_smlad(xa, th_sxtb16(w2), *a2));
    }
}

/* Dot products of one input row with g (1..3, a constant after inlining) channels of an
 * interleaved block, accumulators in registers; the partial last word (zero-padded, times
 * the filter's zero padding) widened by the caller. */
TH_INLINE void blockg_dot(const int8_t *x, int32_t cin, int32_t offset2, const int8_t *w,
                          int32_t acc[4], int32_t xta, int32_t xtb, const int32_t g)
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2];
    const int8_t *const x_end = x + (cin & ~3);
    for (; x != x_end; x += 4, w += 4 * g) {
        const int32_t xv = th_read_s32(x);
        words_g(th_sxtab16(offset2, xv), th_sxtab16_ror8(offset2, xv), w, &a0, &a1, &a2, g);
    }
    if ((cin & 3) != 0) {
        words_g(xta, xtb, w, &a0, &a1, &a2, g);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
}

/* The last block's g = cout % 4 channels. */
static void block_dot(const int8_t *x, int32_t cin, int32_t offset2, const int8_t *w,
                      int32_t g, int32_t acc[4], int32_t xta, int32_t xtb)
{
    if (g == 1) {
        blockg_dot(x, cin, offset2, w, acc, xta, xtb, 1);
    } else if (g == 2) {
        blockg_dot(x, cin, offset2, w, acc, xta, xtb, 2);
    } else {
        blockg_dot(x, cin, offset2, w, acc, xta, xtb, 3);
    }
}

/* The input row's last, partial word (cin & 3 bytes, zero-padded) widened with the input
 * offset, for every block of the row: flag nonzero when there is one. */
typedef struct {
    int32_t flag;
    int32_t xa;
    int32_t xb;
} fc_tail;

/* Four channels' accumulators, by value (an array would live on the stack). */
typedef struct {
    int32_t a0;
    int32_t a1;
    int32_t a2;
    int32_t a3;
} fc_acc4;

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* One chunk of four inputs for the four channels of a block: 16 MACs in 22 instructions
 * (LDR, 2 LDRD, 2 SXTAB16: input + offset, 8 SXTB16, 8 SMLAD); WORDS: its weights with the
 * input pairs given (the first LDRD done). */
#define TH_FC_WORDS                                                                          \
    "sxtb16 %[t], %[w0]\n\t"                                                                \
    "smlad %[a0], %[xa], %[t], %[a0]\n\t"                                                   \
    "sxtb16 %[t], %[w0], ror #8\n\t"                                                        \
    "smlad %[a0], %[xb], %[t], %[a0]\n\t"                                                   \
    "sxtb16 %[t], %[w1]\n\t"                                                                \
    "smlad %[a1], %[xa], %[t], %[a1]\n\t"                                                   \
    "sxtb16 %[t], %[w1], ror #8\n\t"                                                        \
    "smlad %[a1], %[xb], %[t], %[a1]\n\t"                                                   \
    "ldrd %[w0], %[w1], [%[w]], #8\n\t"                                                     \
    "sxtb16 %[t], %[w0]\n\t"                                                                \
    "smlad %[a2], %[xa], %[t], %[a2]\n\t"                                                   \
    "sxtb16 %[t], %[w0], ror #8\n\t"                                                        \
    "smlad %[a2], %[xb], %[t], %[a2]\n\t"                                                   \
    "sxtb16 %[t], %[w1]\n\t"                                                                \
    "smlad %[a3], %[xa], %[t], %[a3]\n\t"                                                   \
    "sxtb16 %[t], %[w1], ror #8\n\t"                                                        \
    "smlad %[a3], %[xb], %[t], %[a3]\n\t"
#define TH_FC_CHUNK                                                                          \
    "ldr %[xb], [%[x]], #4\n\t"                                                             \
    "ldrd %[w0], %[w1], [%[w]], #8\n\t"                                                     \
    "sxtab16 %[xa], %[off], %[xb]\n\t"                                                      \
    "sxtab16 %[xb], %[off], %[xb], ror #8\n\t"                                              \
    TH_FC_WORDS
#endif

/* Four channels: the hot loop, the partial last word included. */
TH_INLINE fc_acc4 block4_dot(const int8_t *x, int32_t cin, int32_t offset2, const int8_t *w,
                             fc_acc4 acc, const fc_tail *tail)
{
    int32_t a0 = acc.a0;
    int32_t a1 = acc.a1;
    int32_t a2 = acc.a2;
    int32_t a3 = acc.a3;
    const int32_t full = cin / 4;
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* 16 MACs in 22 instructions: LDR, 2 SXTAB16 (input + offset), 2 LDRD, 8 SXTB16,
     * 8 SMLAD, and SUBS + BNE every second chunk. gcc does not keep all of it in
     * registers without help. The partial last word's pair comes from the stack (memory
     * operands: no register is left), so the accumulators never leave their registers. */
    int32_t n = full;
    int32_t xa;
    int32_t xb;
    int32_t w0;
    int32_t w1;
    int32_t t;
    /* Odd count: one chunk first, then two per iteration; then the partial word. */
    __asm__ volatile(
        "cmp %[n], #0\n\t"
        "beq 3f\n\t"
        "tst %[n], #1\n\t"
        "beq 1f\n\t"
        TH_FC_CHUNK
        "subs %[n], %[n], #1\n\t"
        "beq 3f\n\t"
        "1:\n\t"
        TH_FC_CHUNK
        TH_FC_CHUNK
        "subs %[n], %[n], #2\n\t"
        "bne 1b\n\t"
        "3:\n\t"
        "ldr %[t], %[tf]\n\t"
        "cmp %[t], #0\n\t"
        "beq 4f\n\t"
        "ldr %[xa], %[ta]\n\t"
        "ldr %[xb], %[tb]\n\t"
        "ldrd %[w0], %[w1], [%[w]], #8\n\t"
        TH_FC_WORDS
        "4:\n\t"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x),
          [w] "+r"(w), [n] "+r"(n), [xa] "=&r"(xa), [xb] "=&r"(xb), [w0] "=&r"(w0),
          [w1] "=&r"(w1), [t] "=&r"(t)
        : [off] "r"(offset2), [tf] "m"(tail->flag), [ta] "m"(tail->xa), [tb] "m"(tail->xb)
        : "cc", "memory");
#else
    for (int32_t j = 0; j < full; j++) {
        const int32_t xv = th_read_s32(x);
        x += 4;
        const int32_t xa = th_sxtab16(offset2, xv);
        const int32_t xb = th_sxtab16_ror8(offset2, xv);
        const int32_t w0 = th_read_s32(w);
        const int32_t w1 = th_read_s32(w + 4);
        const int32_t w2 = th_read_s32(w + 8);
        const int32_t w3 = th_read_s32(w + 12);
        w += 16;
        a0 = th_smlad(xa, th_sxtb16(w0), a0);
        a0 = th_smlad(xb, th_sxtb16_ror8(w0), a0);
        a1 = th_smlad(xa, th_sxtb16(w1), a1);
        a1 = th_smlad(xb, th_sxtb16_ror8(w1), a1);
        a2 = th_smlad(xa, th_sxtb16(w2), a2);
        a2 = th_smlad(xb, th_sxtb16_ror8(w2), a2);
        a3 = th_smlad(xa, th_sxtb16(w3), a3);
        a3 = th_smlad(xb, th_sxtb16_ror8(w3), a3);
    }
    if (tail->flag) {
        const int32_t xa = tail->xa;
        const int32_t xb = tail->xb;
        int32_t wv = th_read_s32(w);
        a0 = th_smlad(xb, th_sxtb16_ror8(wv), th_smlad(xa, th_sxtb16(wv), a0));
        wv = th_read_s32(w + 4);
        a1 = th_smlad(xb, th_sxtb16_ror8(wv), th_smlad(xa, th_sxtb16(wv), a1));
        wv = th_read_s32(w + 8);
        a2 = th_smlad(xb, th_sxtb16_ror8(wv), th_smlad(xa, th_sxtb16(wv), a2));
        wv = th_read_s32(w + 12);
        a3 = th_smlad(xb, th_sxtb16_ror8(wv), th_smlad(xa, th_sxtb16(wv), a3));
    }
#endif
    return (fc_acc4){a0, a1, a2, a3};
}

/* One input row of the block loop. */
typedef struct {
    const int8_t *x;
    int32_t cin;
    int32_t kp;
    int32_t offset2;
    int32_t fo_sum; /* filter offset * sum(x + input offset) */
    const int32_t *bias;
    const int32_t *multiplier;
    const int32_t *shift;
    int32_t output_offset;
    int32_t act_min;
    int32_t act_max;
    int32_t fast; /* per tensor: its shift suits the fast requantization (per channel: 1) */
} fc_row;

/* The fast requantization (th_fast_rq_apply) of channel (m, shift = -1 - em1), nothing
 * made per channel: with v = SMMLAR(2 acc, m, [acc < 0]) (the sign term as the accumulate),
 * (v + 2^(e-1)) >> e == ((v >> (e-1)) + 1) >> 1 (floors), and the output offset rides in
 * the last shift: ((u + 1) >> 1) + zp == (u + 2 zp + 1) >> 1. Exact under th_fast_rq_apply's
 * conditions (|acc| < 2^29, e in [1, 22]; the caller keeps e <= 16). */
TH_INLINE int32_t fc_rq_channel(int32_t acc, int32_t m, int32_t em1, int32_t zp2p1)
{
    const int32_t a2 = (int32_t)((uint32_t)acc << 1);
    const int32_t v = th_smmlar(a2, m, a2 >> 31);
    return th_ssat8(((v >> em1) + zp2p1) >> 1);
}

/* |acc| < 2^29 (the fast requantization's bound): acc ^ (acc >> 31) is |acc| or |acc| - 1;
 * for four accumulators, their OR in one compare. */
TH_INLINE uint32_t fc_mag(int32_t a)
{
    return (uint32_t)(a ^ (a >> 31));
}

#define FC_MAG_LIMIT ((UINT32_C(1) << 29) - 1u)

/* Every block of four channels of one input row: dot products with the partial last word,
 * then the fast requantization when the block's accumulators and the shifts allow it
 * (checked on the accumulators themselves, so a large bias only costs its own block), else
 * the exact one. Per tensor (per_channel 0: channel 0's constants) or per channel. */
TH_INLINE void fc_blocks(const fc_row *r, const fc_tail *tail, const int8_t *filter,
                         int32_t blocks, int8_t *out, const int per_channel)
{
    /* Locals: the int8 output stores may alias anything, fields would be reloaded. */
    const int8_t *x = r->x;
    const int32_t cin = r->cin;
    const int32_t kp = r->kp;
    const int32_t offset2 = r->offset2;
    const int32_t fo_sum = r->fo_sum;
    const int32_t *bias = r->bias;
    const int32_t *mult = r->multiplier;
    const int32_t *shift = r->shift;
    const int32_t zp = r->output_offset;
    const int32_t lo = r->act_min;
    const int32_t hi = r->act_max;
    const int fast = r->fast;
    const fc_tail tl = *tail; /* on the stack: the dot's memory operands need no register */
    const int clamp = lo > -128 || hi < 127; /* else SSAT already clamped */
    const th_fast_rq rq = th_fast_rq_make(mult[0], fast && !per_channel ? shift[0] : -1, zp);
    const int32_t zp2p1 = 2 * zp + 1;
    const int8_t *w = filter;
    for (int32_t i = 0; i < blocks; i++, w += 4 * kp, out += 4) {
        fc_acc4 acc = {fo_sum, fo_sum, fo_sum, fo_sum};
        if (bias != NULL) {
            acc.a0 = th_add_wrap(bias[4 * i], fo_sum);
            acc.a1 = th_add_wrap(bias[4 * i + 1], fo_sum);
            acc.a2 = th_add_wrap(bias[4 * i + 2], fo_sum);
            acc.a3 = th_add_wrap(bias[4 * i + 3], fo_sum);
        }
        acc = block4_dot(x, cin, offset2, w, acc, &tl);
        int32_t v0;
        int32_t v1;
        int32_t v2;
        int32_t v3;
        uint32_t mag = fc_mag(acc.a0) | fc_mag(acc.a1) | fc_mag(acc.a2) | fc_mag(acc.a3);
        const int32_t *sh = shift + 4 * i;
        if (per_channel) {
            /* The shifts too: e - 1 = ~shift in [0, 15] (a subset of th_fast_shift_ok's
             * range), i.e. ~shift << 25 below the limit; for shift in [-31, 30] (checked at
             * entry) every other value lands at or above it. */
            mag |= (~(uint32_t)sh[0] << 25) | (~(uint32_t)sh[1] << 25) |
                   (~(uint32_t)sh[2] << 25) | (~(uint32_t)sh[3] << 25);
        }
        if (fast && mag < FC_MAG_LIMIT) {
            if (per_channel) {
                const int32_t *m = mult + 4 * i;
                v0 = fc_rq_channel(acc.a0, m[0], ~sh[0], zp2p1);
                v1 = fc_rq_channel(acc.a1, m[1], ~sh[1], zp2p1);
                v2 = fc_rq_channel(acc.a2, m[2], ~sh[2], zp2p1);
                v3 = fc_rq_channel(acc.a3, m[3], ~sh[3], zp2p1);
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
        } else {
            const int32_t c = per_channel ? 4 * i : 0;
            const int32_t d = per_channel ? 1 : 0;
            v0 = th_clamp(th_requantize_s8(acc.a0, mult[c], shift[c], zp), lo, hi);
            v1 = th_clamp(th_requantize_s8(acc.a1, mult[c + d], shift[c + d], zp), lo, hi);
            v2 = th_clamp(th_requantize_s8(acc.a2, mult[c + 2 * d], shift[c + 2 * d], zp), lo,
                          hi);
            v3 = th_clamp(th_requantize_s8(acc.a3, mult[c + 3 * d], shift[c + 3 * d], zp), lo,
                          hi);
        }
        out[0] = (int8_t)v0;
        out[1] = (int8_t)v1;
        out[2] = (int8_t)v2;
        out[3] = (int8_t)v3;
    }
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* fc_blocks as one assembly loop (path FC_ROWS: no filter offset, a bias): gcc keeps no block
 * state in registers next to the dot's 13, so the loop's state lives in this frame (memory
 * operands, addressed from SP). Per block: LDM of the bias, the dot, the fast
 * requantization's bound check (|acc| and, per channel, the shifts: fc_blocks' test; a
 * block failing it ends the loop, and fc_blocks takes it and the rest), the requantization
 * per tensor or per channel, a bytewise clamp (SSUB8/SEL), one word stored. Pairs read by
 * LDRD stay adjacent: x and chunks, the tail's pairs, lo4 and hi4, k0 and k1. */
typedef struct {
    const int8_t *x;
    int32_t chunks;
    int32_t tflag;
    int32_t txa;
    int32_t txb;
    int32_t offset2;
    int8_t *out;
    const int32_t *bias_end;
    int32_t mode; /* 0: per tensor (k0..k2 = multiplier, round_zp, e); 1: per channel */
    uint32_t lo4; /* the activation range, its bytes four times */
    uint32_t hi4;
    int32_t k0;
    int32_t k1;
    int32_t k2; /* per channel: 2 zp + 1 */
    const int32_t *mult;
    const int32_t *shift;
    uint32_t limit; /* FC_MAG_LIMIT */
} fc_frame;

#define TH_FC_MAG1(A)                                                                        \
    "eor %[xa], %[" A "], %[" A "], asr #31\n\t"                                            \
    "orr %[n], %[n], %[xa]\n\t"
#define TH_FC_CH_MUL1(A, E)                                                                  \
    "lsl %[xa], %[" A "], #1\n\t"                                                           \
    "asr %[n], %[" A "], #31\n\t"                                                           \
    "ldr %[xb], [%[x]], #4\n\t"                                                             \
    "smmlar %[" A "], %[xa], %[xb], %[n]\n\t"                                               \
    "asr %[" A "], %[" A "], %[" E "]\n\t"
#define TH_FC_CH_OUT1(A) TH_FC_CH_OUT1R(A, "n")
/* The same with 2 zp + 1 in operand Z. */
#define TH_FC_CH_OUT1R(A, Z)                                                                 \
    "add %[" A "], %[" A "], %[" Z "]\n\t"                                                  \
    "ssat %[" A "], #8, %[" A "], asr #1\n\t"
/* The row's first `blocks` blocks while the fast requantization's bound holds; returns how
 * many it did. */
static int32_t __attribute__((noinline))
fc_rows(const fc_row *r, const fc_tail *tail, const int8_t *w, int32_t blocks, int8_t *out,
        int per_channel)
{
    const th_fast_rq rq =
        th_fast_rq_make(r->multiplier[0], per_channel ? -1 : r->shift[0], r->output_offset);
    const int32_t *bias = r->bias;
    /* On this stack (addressed from SP: no register is left for a base), aligned for LDRD. */
    fc_frame l __attribute__((aligned(8))) = {
        r->x, r->cin / 4, tail->flag, tail->xa, tail->xb, r->offset2, out, bias + 4 * blocks,
        per_channel, th_nn_bytes4(r->act_min), th_nn_bytes4(r->act_max), rq.multiplier,
        rq.round_zp, per_channel ? 2 * r->output_offset + 1 : rq.e, r->multiplier, r->shift,
        FC_MAG_LIMIT};
    TH_NN_ROWS_REGS(t, off, x);
    __asm__ volatile(
        "0:\n\t"
        "ldmia %[bias]!, {%[a0], %[a1], %[a2], %[a3]}\n\t"
        "ldrd %[x], %[n], %[xp]\n\t"
        "ldr %[off], %[offp]\n\t"
        /* the dot: two chunks per iteration, an odd count entering at the second */
        "lsrs %[n], %[n], #1\n\t"
        "bcc 1f\n\t"
        "adds %[n], %[n], #1\n\t"
        "b 2f\n\t"
        "1:\n\t"
        "beq 3f\n\t"
        "9:\n\t"
        TH_FC_CHUNK
        "2:\n\t"
        TH_FC_CHUNK
        "subs %[n], %[n], #1\n\t"
        "bne 9b\n\t"
        "3:\n\t"
        "ldr %[xa], %[tf]\n\t"
        "cmp %[xa], #0\n\t"
        "beq 4f\n\t"
        "ldrd %[xa], %[xb], %[ta]\n\t"
        "ldrd %[w0], %[w1], [%[w]], #8\n\t"
        TH_FC_WORDS
        "4:\n\t"
        /* the bound: |acc| (as fc_mag) ORed */
        "eor %[n], %[a0], %[a0], asr #31\n\t"
        TH_FC_MAG1("a1") TH_FC_MAG1("a2") TH_FC_MAG1("a3")
        "ldr %[x], %[mode]\n\t"
        "cmp %[x], #0\n\t"
        "beq 5f\n\t"
        /* per channel: e - 1 = ~shift (<< 25 into the bound: at most 15) */
        "ldr %[x], %[sp]\n\t"
        "ldmia %[x], {%[w0], %[w1], %[t], %[off]}\n\t"
        "mvn %[w0], %[w0]\n\t"
        "mvn %[w1], %[w1]\n\t"
        "mvn %[t], %[t]\n\t"
        "mvn %[off], %[off]\n\t"
        "orr %[n], %[n], %[w0], lsl #25\n\t"
        "orr %[n], %[n], %[w1], lsl #25\n\t"
        "orr %[n], %[n], %[t], lsl #25\n\t"
        "orr %[n], %[n], %[off], lsl #25\n\t"
        "ldr %[xa], %[lim]\n\t"
        "cmp %[n], %[xa]\n\t"
        "bcs 8f\n\t"
        "add %[x], %[x], #16\n\t"
        "str %[x], %[sp]\n\t"
        "ldr %[x], %[mp]\n\t"
        TH_FC_CH_MUL1("a0", "w0") TH_FC_CH_MUL1("a1", "w1") TH_FC_CH_MUL1("a2", "t")
        TH_FC_CH_MUL1("a3", "off")
        "str %[x], %[mp]\n\t"
        "ldr %[n], %[k2]\n\t"
        TH_FC_CH_OUT1("a0") TH_FC_CH_OUT1("a1") TH_FC_CH_OUT1("a2") TH_FC_CH_OUT1("a3")
        "b 6f\n\t"
        "5:\n\t"
        "ldr %[xa], %[lim]\n\t"
        "cmp %[n], %[xa]\n\t"
        "bcs 8f\n\t"
        "ldrd %[w0], %[w1], %[k0]\n\t"
        "ldr %[t], %[k2]\n\t"
        TH_NN_ROWS_RQ1("a0", "w0", "w1", "t") TH_NN_ROWS_RQ1("a1", "w0", "w1", "t")
        TH_NN_ROWS_RQ1("a2", "w0", "w1", "t") TH_NN_ROWS_RQ1("a3", "w0", "w1", "t")
        "6:\n\t"
        TH_NN_ROWS_STORE
        "ldr %[x], %[bend]\n\t"
        "cmp %[bias], %[x]\n\t"
        "bne 0b\n\t"
        "b 7f\n\t"
        "8:\n\t"
        "sub %[bias], %[bias], #16\n\t"
        "7:\n\t"
        : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [x] "=&r"(x),
          [w] "+r"(w), [n] "=&r"(n), [xa] "=&r"(xa), [xb] "=&r"(xb), [w0] "=&r"(w0),
          [w1] "=&r"(w1), [t] "=&r"(t), [off] "=&r"(off), [bias] "+r"(bias)
        : [xp] "m"(l.x), [offp] "m"(l.offset2), [tf] "m"(l.tflag), [ta] "m"(l.txa),
          [mode] "m"(l.mode), [sp] "m"(l.shift), [mp] "m"(l.mult), [lim] "m"(l.limit),
          [k0] "m"(l.k0), [k2] "m"(l.k2), [lo] "m"(l.lo4), [out] "m"(l.out),
          [bend] "m"(l.bias_end)
        : "cc", "memory");
    return (int32_t)(bias - r->bias) / 4;
}

#endif

/* ---- Path FC_SHORT: inputs of at most FC_SHORT_MAX values, or more given scratch ---------
 * (x + input_offset) widened once per input row into int16 pairs on this path's stack (at
 * most 256 bytes; longer rows into the caller's scratch, th_nn_fc_short_scratch), in the
 * order the dot consumes them: chunk j's pairs (x[4j], x[4j+2]) and (x[4j+1], x[4j+3]), the
 * tail zero-padded to whole chunks (the weights' padding is zero).
 * Per chunk of a block of four channels: LDRD of the pairs, one LDM of the four weight
 * words, 8 SXTB16 and 8 SMLAD (18 instructions for 16 MACs, where fc_rows spends 22 plus
 * the tail word's own code), and no tail code at all. The rest of a block is fc_rows', but
 * for the bound: no |acc| compares, the requantization's doubling by QADD sets Q where
 * |acc| >= 2^30, tested once a block (TH_FC_S_DOT); per channel, the path runs only when
 * every shift is in [-16, -1] (checked at entry), so the shifts need no test. */
/* The path's bound (QADD's: 2 acc fits, |acc| < 2^30, which keeps th_fast_rq_apply and
 * fc_rq_channel exact too) as fc_mag's limit; ~shift << 26 is below it exactly when the
 * shift is in [-16, -1] (for shift in [-31, 30], checked at entry). */
#define FC_SHORT_LIMIT (UINT32_C(1) << 30)

/* One chunk (input word xv) widened: its pairs in the dot's order. */
TH_INLINE void fc_short_widen1(int32_t xv, int32_t offset2, int32_t *xw)
{
    xw[0] = th_sxtab16(offset2, xv);
    xw[1] = th_sxtab16_ror8(offset2, xv);
}

/* The widened row: 2 words per chunk, chunks = round_up4(cin) / 4. Natively four chunks a
 * pass (4 LDR, 8 SXTAB16, one STM of the eight pairs: 15 instructions with the loop where
 * gcc's C takes 32; LDR, as the row may sit at any byte), then two chunks a pass in C. */
static void __attribute__((noinline))
fc_short_widen(const int8_t *x, int32_t cin, int32_t offset2, int32_t *xw)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    int32_t n = cin >> 4;
    if (n > 0) {
        /* Pairs (lo, hi) of each word in ascending registers: STM stores them in order. */
        TH_NN_REGS_R4_R11(p0, v0, p1, v1, p2, v2, p3, v3);
        __asm__ volatile(
            "1:\n\t"
            "ldr %[v0], [%[x]], #4\n\t"
            "ldr %[v1], [%[x]], #4\n\t"
            "ldr %[v2], [%[x]], #4\n\t"
            "ldr %[v3], [%[x]], #4\n\t"
            "sxtab16 %[p0], %[off], %[v0]\n\t"
            "sxtab16 %[v0], %[off], %[v0], ror #8\n\t"
            "sxtab16 %[p1], %[off], %[v1]\n\t"
            "sxtab16 %[v1], %[off], %[v1], ror #8\n\t"
            "sxtab16 %[p2], %[off], %[v2]\n\t"
            "sxtab16 %[v2], %[off], %[v2], ror #8\n\t"
            "sxtab16 %[p3], %[off], %[v3]\n\t"
            "sxtab16 %[v3], %[off], %[v3], ror #8\n\t"
            "stmia %[xw]!, {%[p0], %[v0], %[p1], %[v1], %[p2], %[v2], %[p3], %[v3]}\n\t"
            "subs %[n], %[n], #1\n\t"
            "bne 1b\n\t"
            : [x] "+r"(x), [xw] "+r"(xw), [n] "+r"(n), [p0] "=&r"(p0), [v0] "=&r"(v0),
              [p1] "=&r"(p1), [v1] "=&r"(v1), [p2] "=&r"(p2), [v2] "=&r"(v2), [p3] "=&r"(p3),
              [v3] "=&r"(v3)
            : [off] "r"(offset2)
            : "cc", "memory");
    }
    if ((cin & 8) != 0) {
        fc_short_widen1(th_read_s32(x), offset2, xw);
        fc_short_widen1(th_read_s32(x + 4), offset2, xw + 2);
        x += 8;
        xw += 4;
    }
#else
    const int8_t *const x_end = x + (cin & ~7);
    for (; x != x_end; x += 8, xw += 4) {
        const int32_t v0 = th_read_s32(x);
        const int32_t v1 = th_read_s32(x + 4);
        fc_short_widen1(v0, offset2, xw);
        fc_short_widen1(v1, offset2, xw + 2);
    }
#endif
    if ((cin & 4) != 0) {
        fc_short_widen1(th_read_s32(x), offset2, xw);
        x += 4;
        xw += 2;
    }
    if ((cin & 3) != 0) {
        fc_short_widen1(load_x(x, 0, cin & 3), offset2, xw);
    }
}

/* The row loop's state (the native loop's frame, addressed from SP; the last channels read
 * their constants here in every build). */
typedef struct {
    const int32_t *xw;
    int32_t n; /* the dot's passes of eight chunks, ceil(chunks / 8) */
    int8_t *out;
    const int8_t *out_end; /* (LDRD with out: the block's store and the loop's test) */
    uint32_t lo4; /* the activation range, its bytes four times (LDRD with hi4) */
    uint32_t hi4;
    int32_t k0; /* per tensor: multiplier, round_zp (LDRD); k2: e. Per channel: 2 zp + 1 */
    int32_t k1;
    int32_t k2;
    const int32_t *bias;
    const int32_t *mult;
    const int32_t *shift;
    int32_t chunks;
    uint32_t entry; /* where the dot's first pass enters (chunks % 8 from its end), Thumb bit */
} fc_sframe;

/* Path FC_SHORT_ONE applies: the dot's one pass (at most eight chunks). */
TH_INLINE int fc_short_one(const fc_sframe *f)
{
    return f->n == 1 && TH_NN_PATH(FC_SHORT_ONE);
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)

/* One chunk's pairs (XA, XB) times weight word W into A (W and t overwritten). */
#define TH_FC_XW_WORD(A, XA, XB, W)                                                          \
    "sxtb16 %[t], %[" W "]\n\t"                                                             \
    "smlad %[" A "], %[" XA "], %[t], %[" A "]\n\t"                                         \
    "sxtb16 %[" W "], %[" W "], ror #8\n\t"                                                 \
    "smlad %[" A "], %[" XB "], %[" W "], %[" A "]\n\t"
/* One chunk: the input pairs, four weight words by one LDM (w0..w3 ascending registers). */
#define TH_FC_S_WORD(A, W) TH_FC_XW_WORD(A, "xa", "xb", W)
#define TH_FC_S_CHUNK                                                                        \
    "ldrd %[xa], %[xb], [%[x]], #8\n\t"                                                     \
    "ldmia %[w]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                         \
    TH_FC_S_WORD("a0", "w0") TH_FC_S_WORD("a1", "w1") TH_FC_S_WORD("a2", "w2")               \
    TH_FC_S_WORD("a3", "w3")
/* The dot's entry for the row (once a call, into the frame): the first pass of eight chunks
 * skips (8 - chunks % 8) % 8 of them, so every pass after it is whole and no block spends a
 * test on the remainder. Every chunk is 72 bytes of code (18 32-bit encodings, checked where
 * the chunks are assembled), so the entry is computed, not searched. */
#define TH_FC_S_ENTRY                                                                        \
    "ldr %[n], %[chk]\n\t"                                                                  \
    "rsb %[n], %[n], #0\n\t"                                                                \
    "and %[n], %[n], #7\n\t"                                                                \
    "mov %[t], #72\n\t"                                                                     \
    "adr.w %[xa], 9f + 1\n\t" /* (+ 1: the Thumb bit LDR to PC wants) */                    \
    "mla %[t], %[n], %[t], %[xa]\n\t"                                                       \
    "str %[t], %[ent]\n\t"
/* A block's bias, the dot: passes of eight chunks, the first entered by the row's entry (LDR
 * to PC). Q is cleared (from n, the small pass count: bit 27 clear) for the bound: the
 * requantization doubles each accumulator by QADD, which sets Q exactly when 2 acc does not
 * fit (|acc| >= 2^30), and TH_FC_S_BOUND tests it once a block, before the SSATs (they set Q
 * too). An SMLAD whose accumulation wraps sets Q as well: that block goes to the general
 * loop too (exact there; only slower). */
#define TH_FC_S_DOT                                                                          \
    "ldr %[x], %[bp]\n\t"                                                                   \
    "ldmia %[x]!, {%[a0], %[a1], %[a2], %[a3]}\n\t"                                         \
    "str %[x], %[bp]\n\t"                                                                   \
    "ldrd %[x], %[n], %[xwp]\n\t"                                                           \
    "msr APSR_nzcvq, %[n]\n\t"                                                              \
    "ldr pc, %[ent]\n\t"                                                                    \
    TH_FC_S_PASS                                                                            \
    "subs %[n], %[n], #1\n\t"                                                               \
    "bne 9b\n\t"
/* One pass of eight chunks (label 9, the entry's base). */
#define TH_FC_S_PASS                                                                         \
    "9:\n\t"                                                                                \
    TH_FC_S_CHUNK                                                                           \
    "1:\n\t"                                                                                \
    ".if (1b - 9b) - 72\n\t"                                                                 \
    ".error \"TH_FC_S_CHUNK is not 72 bytes (TH_FC_S_ENTRY)\"\n\t"                             \
    ".endif\n\t"                                                                            \
    TH_FC_S_CHUNK TH_FC_S_CHUNK TH_FC_S_CHUNK TH_FC_S_CHUNK TH_FC_S_CHUNK TH_FC_S_CHUNK       \
    TH_FC_S_CHUNK
/* Path FC_SHORT_ONE: at most eight chunks (32 inputs), the dot one pass, so no pass count:
 * n holds the bias pointer instead (no frame load and store of it a block), and Q is
 * cleared from operand Q, which the previous block's requantization left small (per
 * tensor w2 = e, per channel w0 = e - 1: bit 27 clear; zeroed before the first block). */
#define TH_FC_S1_PRE(Q)                                                                      \
    "ldr %[n], %[bp]\n\t"                                                                   \
    "mov %[" Q "], #0\n\t"
#define TH_FC_S1_DOT(Q)                                                                      \
    "ldmia %[n]!, {%[a0], %[a1], %[a2], %[a3]}\n\t"                                         \
    "ldr %[x], %[xwp]\n\t"                                                                  \
    "msr APSR_nzcvq, %[" Q "]\n\t"                                                          \
    "ldr pc, %[ent]\n\t"                                                                    \
    TH_FC_S_PASS
/* The block's bound failed (Q, bit 27, shifted into C): the loop ends (xb free after the
 * requantization's products; n kept: FC_SHORT_ONE's bias pointer). */
#define TH_FC_S_BOUND                                                                        \
    "mrs %[xb], APSR\n\t"                                                                   \
    "lsls %[xb], %[xb], #5\n\t"                                                             \
    "bcs 8f\n\t"
#define TH_FC_S_QADD(A) "qadd %[xa], %[" A "], %[" A "]\n\t"
/* Per channel: two channels' products by the multiplier, read as a pair (LDRD from operand x,
 * written back), before the shift by E - 1 (TH_FC_CH_MUL1's with QADD, t free after the
 * dot; the rounding's -1 for a negative acc made in A itself, once doubled into xa). */
#define TH_FC_S_MUL2(A, B, EA, EB)                                                           \
    "ldrd %[xb], %[t], [%[x]], #8\n\t"                                                      \
    TH_FC_S_MUL1(A, "xb", EA) TH_FC_S_MUL1(B, "t", EB)
#define TH_FC_S_MUL1(A, M, E)                                                                \
    TH_FC_S_QADD(A)                                                                         \
    "asr %[" A "], %[" A "], #31\n\t"                                                       \
    "smmlar %[" A "], %[xa], %[" M "], %[" A "]\n\t"                                        \
    "asr %[" A "], %[" A "], %[" E "]\n\t"
/* e - 1 = ~shift of a channel, in [0, 15]: the path takes per-channel rows only when every
 * shift is in [-16, -1] (fc_check's COMMON), so no range check here. */
#define TH_FC_S_E1(W) "mvn %[" W "], %[" W "]\n\t"
/* Per channel: the shifts, the bound, the requantization. */
#define TH_FC_S_RQ_CHANNEL                                                                   \
    "ldr %[x], %[sp]\n\t"                                                                   \
    "ldmia %[x]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                         \
    "str %[x], %[sp]\n\t"                                                                   \
    TH_FC_S_E1("w0") TH_FC_S_E1("w1") TH_FC_S_E1("w2") TH_FC_S_E1("w3")                     \
    "ldr %[x], %[mp]\n\t"                                                                   \
    TH_FC_S_MUL2("a0", "a1", "w0", "w1") TH_FC_S_MUL2("a2", "a3", "w2", "w3")               \
    "str %[x], %[mp]\n\t"                                                                   \
    TH_FC_S_BOUND                                                                           \
    "ldr %[xa], %[k2]\n\t"                                                                  \
    TH_FC_CH_OUT1R("a0", "xa") TH_FC_CH_OUT1R("a1", "xa") TH_FC_CH_OUT1R("a2", "xa")         \
    TH_FC_CH_OUT1R("a3", "xa")
/* Per tensor: the requantization, the bound before the SSATs. */
#define TH_FC_S_RQ_TENSOR                                                                    \
    "ldrd %[w0], %[w1], %[k0]\n\t"                                                          \
    "ldr %[w2], %[k2]\n\t"                                                                  \
    TH_NN_ROWS_RQ_MUL("a0", "w0", "w1", "w2", TH_FC_S_QADD("a0"))                            \
    TH_NN_ROWS_RQ_MUL("a1", "w0", "w1", "w2", TH_FC_S_QADD("a1"))                            \
    TH_NN_ROWS_RQ_MUL("a2", "w0", "w1", "w2", TH_FC_S_QADD("a2"))                            \
    TH_NN_ROWS_RQ_MUL("a3", "w0", "w1", "w2", TH_FC_S_QADD("a3"))                            \
    TH_FC_S_BOUND                                                                           \
    "ssat %[a0], #8, %[a0]\n\t"                                                             \
    "ssat %[a1], #8, %[a1]\n\t"                                                             \
    "ssat %[a2], #8, %[a2]\n\t"                                                             \
    "ssat %[a3], #8, %[a3]\n\t"
/* The block loop: PRE once, then bias and dot (DOT), RQ, the four outputs packed, clamped
 * (CLAMP non-zero: bytewise, a1 the SSUB8s' scratch) or not and stored, the next block
 * unless the row is done (out and out_end by one LDRD; a1 free after the packing). */
#define TH_FC_S_LOOP(PRE, DOT, RQ, CLAMP)                                                    \
    do {                                                                                     \
    TH_NN_ROWS_REGS(w2, w3, x);                                                              \
    int32_t t;                                                                               \
    __asm__ volatile(                                                                        \
        TH_FC_S_ENTRY                                                                         \
        PRE                                                                                   \
        "0:\n\t"                                                                            \
        DOT                                                                                   \
        RQ                                                                                    \
        TH_NN_ROWS_PACK                                                                       \
        CLAMP                                                                                 \
        "ldrd %[x], %[a1], %[out]\n\t"                                                      \
        "str %[a0], [%[x]], #4\n\t"                                                         \
        "str %[x], %[out]\n\t"                                                              \
        "cmp %[x], %[a1]\n\t"                                                               \
        "bne 0b\n\t"                                                                        \
        "8:\n\t"                                                                            \
        : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [x] "=&r"(x),      \
          [w] "+r"(w), [n] "=&r"(n), [xa] "=&r"(xa), [xb] "=&r"(xb), [w0] "=&r"(w0),         \
          [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3), [t] "=&r"(t)                       \
        : [bp] "m"(l->bias), [xwp] "m"(l->xw), [sp] "m"(l->shift), [mp] "m"(l->mult),        \
          [k0] "m"(l->k0), [k2] "m"(l->k2), [lo] "m"(l->lo4), [out] "m"(l->out),             \
          [chk] "m"(l->chunks), [ent] "m"(l->entry)                                          \
        : "cc", "memory");                                                                   \
    } while (0)

/* FC_SHORT_ONE's loop per requantization, clamped by CLAMP or not (Q: see TH_FC_S1_PRE). */
#define TH_FC_S1_LOOP(CLAMP)                                                                 \
    do {                                                                                     \
        if (per_channel) {                                                                   \
            TH_FC_S_LOOP(TH_FC_S1_PRE("w0"), TH_FC_S1_DOT("w0"), TH_FC_S_RQ_CHANNEL, CLAMP); \
        } else {                                                                             \
            TH_FC_S_LOOP(TH_FC_S1_PRE("w2"), TH_FC_S1_DOT("w2"), TH_FC_S_RQ_TENSOR, CLAMP);  \
        }                                                                                    \
    } while (0)

/* The row's first `blocks` blocks while the fast requantization's bound holds (as fc_rows);
 * returns where its output stopped (the row's out_end when it did them all). FULL: the
 * activation range is int8's (path FC_SHORT_FULL, no clamp after the SSATs; else path
 * FC_SHORT's clamped loops). */
static int8_t *__attribute__((noinline))
fc_short_asm(const fc_sframe *f, const int8_t *w, int per_channel, int full)
{
    /* On this stack (addressed from SP: no register is left for a base; inlined into the
     * caller, some builds (-Os) find no registers for the operands). */
    fc_sframe frame __attribute__((aligned(8))) = *f;
    fc_sframe *const l = &frame;
    /* (a loop the build leaves out is never selected: with none kept, nothing here reads l) */
    (void)l;
    (void)w;
    (void)per_channel;
    if (fc_short_one(f)) {
#if TH_NN_KEEP_FC_SHORT_ONE
        if (full) {
            TH_FC_S1_LOOP("");
        } else {
            TH_FC_S1_LOOP(TH_NN_ROWS_CLAMP_T("a1"));
        }
#endif
    } else if (full) {
#if TH_NN_KEEP_FC_SHORT_FULL
        if (per_channel) {
            TH_FC_S_LOOP("", TH_FC_S_DOT, TH_FC_S_RQ_CHANNEL, "");
        } else {
            TH_FC_S_LOOP("", TH_FC_S_DOT, TH_FC_S_RQ_TENSOR, "");
        }
#endif
    } else {
#if TH_NN_KEEP_FC_SHORT
        if (per_channel) {
            TH_FC_S_LOOP("", TH_FC_S_DOT, TH_FC_S_RQ_CHANNEL, TH_NN_ROWS_CLAMP);
        } else {
            TH_FC_S_LOOP("", TH_FC_S_DOT, TH_FC_S_RQ_TENSOR, TH_NN_ROWS_CLAMP);
        }
#endif
    }
    return frame.out;
}
#endif

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* The native loops: LDRD of the pairs and of the weight words (the filter is word-aligned,
 * checked at entry), a count in a register; one channel two chunks a pass (an odd count
 * entering with one). Per chunk 6.5, 12 and 17 instructions for g = 1, 2, 3, where gcc's
 * C spends 9, 15 and 19. */
TH_INLINE void xw_dotg_asm(const int32_t *xw, int32_t chunks, const int8_t *w, int32_t *b0,
                           int32_t *b1, int32_t *b2, const int32_t g)
{
    int32_t c0 = *b0, c1 = *b1, c2 = *b2;
    int32_t xa, xb, w0, w1, t;
    if (g == 1) {
        int32_t xc, xd;
        __asm__ volatile(
            "lsrs %[n], %[n], #1\n\t"
            "bcc 1f\n\t"
            "ldrd %[xa], %[xb], [%[x]], #8\n\t"
            "ldr %[w0], [%[w]], #4\n\t"
            TH_FC_S_WORD("c0", "w0")
            "1:\n\t"
            "beq 3f\n\t" /* (Z from the LSRS: the chunk above sets no flag) */
            "2:\n\t"
            "ldrd %[xa], %[xb], [%[x]], #8\n\t"
            "ldrd %[xc], %[xd], [%[x]], #8\n\t"
            "ldrd %[w0], %[w1], [%[w]], #8\n\t"
            TH_FC_S_WORD("c0", "w0") TH_FC_XW_WORD("c0", "xc", "xd", "w1")
            "subs %[n], %[n], #1\n\t"
            "bne 2b\n\t"
            "3:\n\t"
            : [c0] "+r"(c0), [x] "+r"(xw), [w] "+r"(w), [n] "+r"(chunks), [xa] "=&r"(xa),
              [xb] "=&r"(xb), [xc] "=&r"(xc), [xd] "=&r"(xd), [w0] "=&r"(w0), [w1] "=&r"(w1),
              [t] "=&r"(t)
            :
            : "cc", "memory");
    } else if (g == 2) {
        __asm__ volatile(
            "1:\n\t"
            "ldrd %[xa], %[xb], [%[x]], #8\n\t"
            "ldrd %[w0], %[w1], [%[w]], #8\n\t"
            TH_FC_S_WORD("c0", "w0") TH_FC_S_WORD("c1", "w1")
            "subs %[n], %[n], #1\n\t"
            "bne 1b\n\t"
            : [c0] "+r"(c0), [c1] "+r"(c1), [x] "+r"(xw), [w] "+r"(w), [n] "+r"(chunks),
              [xa] "=&r"(xa), [xb] "=&r"(xb), [w0] "=&r"(w0), [w1] "=&r"(w1), [t] "=&r"(t)
            :
            : "cc", "memory");
    } else {
        int32_t w2;
        __asm__ volatile(
            "1:\n\t"
            "ldrd %[xa], %[xb], [%[x]], #8\n\t"
            "ldrd %[w0], %[w1], [%[w]], #8\n\t"
            "ldr %[w2], [%[w]], #4\n\t"
            TH_FC_S_WORD("c0", "w0") TH_FC_S_WORD("c1", "w1")
            TH_FC_S_WORD("c2", "w2")
            "subs %[n], %[n], #1\n\t"
            "bne 1b\n\t"
            : [c0] "+r"(c0), [c1] "+r"(c1), [c2] "+r"(c2), [x] "+r"(xw), [w] "+r"(w),
              [n] "+r"(chunks), [xa] "=&r"(xa), [xb] "=&r"(xb), [w0] "=&r"(w0),
              [w1] "=&r"(w1), [w2] "=&r"(w2), [t] "=&r"(t)
            :
            : "cc", "memory");
    }
    *b0 = c0;
    *b1 = c1;
    *b2 = c2;
}
#endif

/* Dot products of the widened row (chunks pairs of words) with g (1..3, a constant after
 * inlining) channels of a block interleaved by g, into a0..a2 (by value: an array would live
 * on the stack). */
TH_INLINE void xw_dotg(const int32_t *xw, int32_t chunks, const int8_t *w, int32_t *a0,
                       int32_t *a1, int32_t *a2, const int32_t g)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    xw_dotg_asm(xw, chunks, w, a0, a1, a2, g);
#else
    int32_t b0 = *a0, b1 = *a1, b2 = *a2;
    const int32_t *const xw_end = xw + 2 * chunks;
    for (; xw != xw_end; xw += 2, w += 4 * g) {
        words_g(xw[0], xw[1], w, &b0, &b1, &b2, g);
    }
    *a0 = b0;
    *a1 = b1;
    *a2 = b2;
#endif
}

/* One of the last channels: the fast requantization where exact (per tensor: the row loop's
 * RQ, its shift checked at the path's entry; per channel: e <= 16, as fc_rq_channel wants,
 * every shift checked at the path's entry), else the exact one; clamped. */
TH_INLINE int8_t fc_short_out1(const th_fc_params *params, const int32_t *multiplier,
                               const int32_t *shift, const int per_channel,
                               const th_fast_rq *rq, int32_t acc, int32_t c)
{
    const int32_t zp = params->output_offset;
    int32_t v;
    if (fc_mag(acc) < FC_MAG_LIMIT) {
        v = per_channel ? fc_rq_channel(acc, multiplier[c], ~shift[c], 2 * zp + 1)
                        : th_fast_rq_apply(acc, rq);
    } else {
        const int32_t k = per_channel ? c : 0;
        v = th_requantize_s8(acc, multiplier[k], shift[k], zp);
    }
    return (int8_t)th_clamp(v, params->activation.min, params->activation.max);
}

/* The last g = cout % 4 channels of the frame's row (their block interleaved by g, at w)
 * from the widened row (the partial last chunk's pairs included: no SXTAB16 here); the row's
 * constants from the frame (per tensor: k0..k2 the fast requantization's). A call of its own:
 * its setup out of the row loop's way. */
static void __attribute__((noinline))
fc_short_last(const fc_sframe *f, const th_fc_params *params, const int8_t *w, int32_t g,
              const int per_channel)
{
    const int32_t c0 = (int32_t)(f->out_end - f->out);
    const int32_t *const bias = f->bias + c0;
    const th_fast_rq rq = {f->k0, f->k1, f->k2};
    int32_t a0 = bias[0];
    int32_t a1 = 0;
    int32_t a2 = 0;
    if (g == 1) {
        xw_dotg(f->xw, f->chunks, w, &a0, &a1, &a2, 1);
    } else if (g == 2) {
        a1 = bias[1];
        xw_dotg(f->xw, f->chunks, w, &a0, &a1, &a2, 2);
    } else {
        a1 = bias[1];
        a2 = bias[2];
        xw_dotg(f->xw, f->chunks, w, &a0, &a1, &a2, 3);
    }
    int8_t *const out = f->out;
    out[c0] = fc_short_out1(params, f->mult, f->shift, per_channel, &rq, a0, c0);
    if (g > 1) {
        out[c0 + 1] = fc_short_out1(params, f->mult, f->shift, per_channel, &rq, a1, c0 + 1);
    }
    if (g > 2) {
        out[c0 + 2] = fc_short_out1(params, f->mult, f->shift, per_channel, &rq, a2, c0 + 2);
    }
}

/* Path FC_SHORT: whole batch rows (no filter offset, a bias, the per-tensor shift in the fast
 * range, per channel every shift in [-16, -1]); returns how many rows it did. A row whose
 * block fails the bound is left whole to the general loop (FULLY_CONNECTED never runs in
 * place, so its input is still there). */
static int32_t __attribute__((noinline))
fc_short_rows(const th_fc_params *params, const int32_t *multiplier, const int32_t *shift,
              int32_t mult_step, int32_t batches, const int8_t *input, int32_t cin,
              int32_t cout, const int8_t *filter, const int32_t *bias, int8_t *output,
              int32_t *scratch)
{
    /* The widened row: here, or in the scratch (word-aligned: LDRD's) past FC_SHORT_MAX. */
    int32_t xw_stack[FC_SHORT_MAX / 2] __attribute__((aligned(8)));
    int32_t *const xw = scratch != NULL ? scratch : xw_stack;
    /* (cin, cout > 0: shifts, not signed divisions) */
    const int32_t chunks = (int32_t)(((uint32_t)cin + 3u) >> 2);
    const int32_t blocks = (int32_t)((uint32_t)cout >> 2);
    const int per_channel = mult_step != 0;
    const int32_t offset2 = (int32_t)(((uint32_t)params->input_offset << 16) |
                                      ((uint32_t)params->input_offset & 0xFFFFu));
    const th_fast_rq rq =
        th_fast_rq_make(multiplier[0], per_channel ? -1 : shift[0], params->output_offset);
    const int8_t *const w_last = filter + (int64_t)blocks * 16 * chunks;
    /* (every field given: a partial initializer becomes a memset call) */
    fc_sframe f __attribute__((aligned(8))) = {
        xw, (int32_t)(((uint32_t)chunks + 7u) >> 3), output, output,
        th_nn_bytes4(params->activation.min), th_nn_bytes4(params->activation.max),
        rq.multiplier, rq.round_zp,
        per_channel ? 2 * params->output_offset + 1 : rq.e, bias, multiplier, shift, chunks,
        0};
    int8_t *out = output;
    for (int32_t b = 0; b < batches; b++, input += cin, out += cout) {
        fc_short_widen(input, cin, offset2, xw);
        /* (fc_short_asm advances a copy of f: only the row's output changes) */
        f.out = out;
        f.out_end = out + 4 * blocks;
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
        const int full = params->activation.min == -128 && params->activation.max == 127;
        const int whole = blocks == 0 || fc_short_asm(&f, filter, per_channel, full) == f.out_end;
#else
        /* The same loop in C (builds without the native DSP loop, the kernel tests'
         * emulated DSP build among them): the widened row, the bound, the fast
         * requantization; the native loop's choice of FC_SHORT_ONE made too (recorded). */
        (void)(blocks > 0 && fc_short_one(&f));
        const int32_t zp2p1 = 2 * params->output_offset + 1;
        const int8_t *w = filter;
        int32_t done = 0;
        for (; done < blocks; done++) {
            const int32_t c0 = 4 * done;
            int32_t acc[4];
            uint32_t mag = 0;
            for (int32_t j = 0; j < 4; j++) {
                acc[j] = bias[c0 + j];
            }
            for (int32_t k = 0; k < chunks; k++, w += 16) {
                for (int32_t j = 0; j < 4; j++) {
                    const int32_t wv = th_read_s32(w + 4 * j);
                    acc[j] = th_smlad(xw[2 * k + 1], th_sxtb16_ror8(wv),
                                      th_smlad(xw[2 * k], th_sxtb16(wv), acc[j]));
                }
            }
            for (int32_t j = 0; j < 4; j++) {
                mag |= fc_mag(acc[j]) | (per_channel ? ~(uint32_t)shift[c0 + j] << 26 : 0u);
            }
            if (mag >= FC_SHORT_LIMIT) {
                break;
            }
            for (int32_t j = 0; j < 4; j++) {
                const int32_t v = per_channel ? fc_rq_channel(acc[j], multiplier[c0 + j],
                                                              ~shift[c0 + j], zp2p1)
                                              : th_fast_rq_apply(acc[j], &rq);
                out[c0 + j] = (int8_t)th_clamp(v, params->activation.min,
                                               params->activation.max);
            }
        }
        const int whole = done == blocks;
#endif
        if (!whole) {
            return b;
        }
        if ((cout & 3) != 0) {
            fc_short_last(&f, params, w_last, cout & 3, per_channel);
        }
    }
    return batches;
}

static void __attribute__((noinline))
fc_blocks_tensor(const fc_row *r, const fc_tail *tail, const int8_t *filter, int32_t blocks,
                 int8_t *out)
{
    fc_blocks(r, tail, filter, blocks, out, 0);
}

static void __attribute__((noinline))
fc_blocks_channel(const fc_row *r, const fc_tail *tail, const int8_t *filter, int32_t blocks,
                  int8_t *out)
{
    fc_blocks(r, tail, filter, blocks, out, 1);
}

/* The row loop (fc_rows) over the blocks it takes, fc_blocks over the rest (their frames
 * side by side, not one on the other). */
TH_INLINE void fc_blocks_rest(const fc_row *r, const fc_tail *tail, const int8_t *filter,
                              int32_t blocks, int8_t *out, const int per_channel)
{
    int32_t done = 0;
    /* (selected here in every build, so a recording build, its DSP modelled in C, records
     * the path) */
    if (r->fo_sum == 0 && r->bias != NULL && r->fast && blocks > 0 && TH_NN_PATH(FC_ROWS)) {
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
        done = fc_rows(r, tail, filter, blocks, out, per_channel);
#endif
    }
    if (done == blocks) {
        return;
    }
    fc_row rest = *r;
    if (rest.bias != NULL) {
        rest.bias += 4 * done;
    }
    if (per_channel) {
        rest.multiplier += 4 * done;
        rest.shift += 4 * done;
    }
    filter += (int64_t)done * 4 * r->kp;
    if (per_channel) {
        fc_blocks_channel(&rest, tail, filter, blocks - done, out + 4 * done);
    } else {
        fc_blocks_tensor(&rest, tail, filter, blocks - done, out + 4 * done);
    }
}

#endif /* TH_NN_HAS_DSP */

#if TH_NN_MVE
/* Inputs of at most 16 values (fc_mve_short). */
typedef struct {
    int16x8_t x_lo, x_hi; /* x + input_offset, values 0-7 and 8-15 (lanes past cin: any) */
    mve_pred16_t p_lo, p_hi; /* the weight lanes that exist */
    int32_t cin;
} fc_short_row;

/* Dots of four weight rows with the row; the loads are predicated and zeroing, so nothing
 * past a row is read and the lanes past cin add nothing. HI: cin > 8. */
TH_INLINE int32x4_t fc_short_dot4(const fc_short_row *r, const int8_t *w0, const int8_t *w1,
                                  const int8_t *w2, const int8_t *w3, const int hi)
{
    int32_t a0 = vmladavq_s16(r->x_lo, vldrbq_z_s16(w0, r->p_lo));
    int32_t a1 = vmladavq_s16(r->x_lo, vldrbq_z_s16(w1, r->p_lo));
    int32_t a2 = vmladavq_s16(r->x_lo, vldrbq_z_s16(w2, r->p_lo));
    int32_t a3 = vmladavq_s16(r->x_lo, vldrbq_z_s16(w3, r->p_lo));
    if (hi) {
        a0 = vmladavaq_s16(a0, r->x_hi, vldrbq_z_s16(w0 + 8, r->p_hi));
        a1 = vmladavaq_s16(a1, r->x_hi, vldrbq_z_s16(w1 + 8, r->p_hi));
        a2 = vmladavaq_s16(a2, r->x_hi, vldrbq_z_s16(w2 + 8, r->p_hi));
        a3 = vmladavaq_s16(a3, r->x_hi, vldrbq_z_s16(w3 + 8, r->p_hi));
    }
    int32x4_t v = vdupq_n_s32(a0);
    v = vsetq_lane_s32(a1, v, 1);
    v = vsetq_lane_s32(a2, v, 2);
    return vsetq_lane_s32(a3, v, 3);
}

/* One batch row, per-tensor requantization (RIGHT: shift < 0), whole groups of four
 * channels: no predicates outside the loads. Returns the channels done. */
TH_INLINE int32_t fc_short_tensor(const fc_short_row *r, const int8_t *filter, int32_t cout,
                                  const int32_t *bias, int32_t row_add, int32_t multiplier,
                                  int32_t shift, const th_mve_out *o, int8_t *out,
                                  const int hi, const int right)
{
    const int32_t cin = r->cin;
    int32_t c = 0;
    for (; c + 4 <= cout; c += 4, filter += 4 * cin) {
        int32x4_t a = fc_short_dot4(r, filter, filter + cin, filter + 2 * cin,
                                    filter + 3 * cin, hi);
        a = vaddq_n_s32(a, row_add);
        if (bias != NULL) {
            a = vaddq_s32(a, vldrwq_s32(bias + c));
        }
        vstrbq_s32(out + c, th_mve_requantize_n(a, multiplier, shift, right, o));
    }
    return c;
}

/* Inputs of at most 16 values: (x + input_offset) widened to int16 once per batch row and
 * each weight row dotted with one VMLADAV per 8 values, so the offset needs no sums of
 * weights; four output channels requantized per vector. The general path's per-row setup
 * costs more than such a dot (ad01's 8 -> 128 layer: ~36 instructions per output there). */
static void __attribute__((noinline))
fc_mve_short(const th_fc_params *params, const int32_t *multiplier, const int32_t *shift,
             int32_t mult_step, int32_t batches, const int8_t *input, int32_t cin,
             int32_t cout, const int8_t *filter, const int32_t *bias, int8_t *output)
{
    const th_mve_out o = {params->output_offset, params->activation.min,
                          params->activation.max};
    const int16_t io = (int16_t)params->input_offset;
    const int32_t fo = params->filter_offset;
    fc_short_row r;
    r.cin = cin;
    r.p_lo = vctp16q((uint32_t)TH_MIN(cin, 8));
    r.p_hi = vctp16q((uint32_t)(cin > 8 ? cin - 8 : 0));
    const int hi = cin > 8;
    for (int32_t b = 0; b < batches; b++) {
        const int8_t *x = input + (int64_t)b * cin;
        r.x_lo = vaddq_n_s16(vldrbq_z_s16(x, r.p_lo), io);
        r.x_hi = vaddq_n_s16(vldrbq_z_s16(x + 8, r.p_hi), io);
        /* A filter offset: fo * sum(x + io), the same for every channel. */
        const int32_t row_add =
            fo != 0 ? fo * (vaddvq_p_s16(r.x_lo, r.p_lo) + vaddvq_p_s16(r.x_hi, r.p_hi)) : 0;
        int8_t *out = output + (int64_t)b * cout;
        int32_t c = 0;
        if (mult_step == 0) {
            const int32_t m = multiplier[0], s = shift[0];
            if (hi) {
                c = s < 0 ? fc_short_tensor(&r, filter, cout, bias, row_add, m, s, &o, out, 1, 1)
                          : fc_short_tensor(&r, filter, cout, bias, row_add, m, s, &o, out, 1, 0);
            } else {
                c = s < 0 ? fc_short_tensor(&r, filter, cout, bias, row_add, m, s, &o, out, 0, 1)
                          : fc_short_tensor(&r, filter, cout, bias, row_add, m, s, &o, out, 0, 0);
            }
        }
        /* Per channel, and the last channels: predicated groups. */
        for (; c < cout; c += 4) {
            const int32_t g = TH_MIN(4, cout - c);
            const mve_pred16_t p = vctp32q((uint32_t)g);
            const int8_t *w0 = filter + (int64_t)c * cin;
            const int8_t *w1 = g > 1 ? w0 + cin : w0;
            const int8_t *w2 = g > 2 ? w1 + cin : w0;
            const int8_t *w3 = g > 3 ? w2 + cin : w0;
            int32x4_t a = vaddq_n_s32(fc_short_dot4(&r, w0, w1, w2, w3, hi), row_add);
            if (bias != NULL) {
                a = vaddq_s32(a, vldrwq_z_s32(bias + c, p));
            }
            const int32_t k = c * mult_step;
            const int32x4_t m = mult_step ? vldrwq_z_s32(multiplier + k, p)
                                          : vdupq_n_s32(multiplier[0]);
            const int32x4_t e = mult_step ? vldrwq_z_s32(shift + k, p) : vdupq_n_s32(shift[0]);
            vstrbq_p_s32(out + c, th_mve_requantize(a, m, e, &o), p);
        }
    }
}
#endif /* TH_NN_MVE */

/* Every path but FC_SHORT, batch rows b0.. (all of them in builds without it). A call of its
 * own where FC_SHORT comes first (its setup out of FC_SHORT's way); inlined on Helium (no
 * FC_SHORT there: one frame, as one function before). */
#if TH_NN_MVE
TH_INLINE void
#elif defined(__clang__)
static void __attribute__((noinline)) /* clang (the fuzz builds) has no noclone */
#else
static void __attribute__((noinline, noclone))
#endif
fc_general(const th_fc_params *params, const int32_t *multiplier, const int32_t *shift,
           int32_t mult_step, int32_t b0, int32_t batches, const int8_t *input,
           const th_dims *filter_dims, const int8_t *filter, const int32_t *bias,
           int8_t *output)
{
    const int32_t cin = filter_dims->c;
    const int32_t cout = filter_dims->n;
#if TH_NN_MVE
    (void)b0;
    if (cin <= 16) {
        fc_mve_short(params, multiplier, shift, mult_step, batches, input, cin, cout,
                     filter, bias, output);
        return;
    }
    /* Helium: plain [Cout, Cin] weights, four rows per pass, sums of weights alongside (no
     * scratch); the filter offset as fo * sum(x + io) added to every channel. */
    const th_mve_out o = {params->output_offset, params->activation.min,
                          params->activation.max};
    for (int32_t b = 0; b < batches; b++) {
        const int8_t *x = input + (int64_t)b * cin;
        uint32_t row_add = 0;
        if (params->filter_offset != 0) {
            int32_t x_sum = 0;
            int32_t i = cin;
            const int8_t *xp = x;
            for (; i >= 16; i -= 16, xp += 16) {
                x_sum = vaddvaq_s8(x_sum, vldrbq_s8(xp));
            }
            if (i > 0) {
                x_sum = vaddvaq_s8(x_sum, vldrbq_z_s8(xp, vctp8q((uint32_t)i)));
            }
            row_add = (uint32_t)params->filter_offset *
                      ((uint32_t)x_sum + (uint32_t)params->input_offset * (uint32_t)cin);
        }
        th_nn_mve_pixel_sums(x, filter, cin, cout, bias, params->input_offset,
                             (int32_t)row_add, multiplier, shift, mult_step,
                             &o, output + (int64_t)b * cout);
    }
#else
#if TH_NN_HAS_DSP
    const int32_t kp = th_round_up4(cin);
    const int32_t offset2 = (int32_t)(((uint32_t)params->input_offset << 16) |
                                      ((uint32_t)params->input_offset & 0xFFFFu));
    /* The fast requantization: exact for every shift in [-22, -1] (multipliers are >= 0,
     * checked at entry) and |acc| < 2^29, checked on the accumulators. */
    /* Per tensor: its one shift. Per channel: checked block by block (fc_blocks). */
    const int fast = mult_step != 0 || th_fast_shift_ok(shift[0]);
    const th_fast_rq rq_tensor =
        fast && mult_step == 0 ? th_fast_rq_make(multiplier[0], shift[0], params->output_offset)
             : (th_fast_rq){0, 0, 0};
#endif
    for (int32_t b = b0; b < batches; b++) {
        const int8_t *x = input + (int64_t)b * cin;
        int8_t *out = output + (int64_t)b * cout;
        int32_t x_sum = 0; /* sum(x + input_offset), for the filter offset */
        if (params->filter_offset != 0) {
            for (int32_t k = 0; k < cin; k++) {
                x_sum += x[k] + params->input_offset;
            }
        }
#if TH_NN_HAS_DSP
        const int32_t fo_sum =
            (int32_t)((uint32_t)params->filter_offset * (uint32_t)x_sum);
        /* The input row's last, partial word, widened once for every block. */
        const int32_t x_tail = (cin & 3) != 0 ? load_x(x, cin & ~3, cin) : 0;
        const fc_tail tail = {cin & 3, th_sxtab16(offset2, x_tail),
                              th_sxtab16_ror8(offset2, x_tail)};
        const int32_t xta = tail.xa;
        const int32_t xtb = tail.xb;
        /* Blocks of four channels in a call of their own; the last 1..3 channels below. */
        const int32_t first = cout & ~3;
        if (first > 0) {
            const fc_row row = {x, cin, kp, offset2, fo_sum, bias, multiplier, shift,
                                params->output_offset, params->activation.min,
                                params->activation.max, fast};
            fc_blocks_rest(&row, &tail, filter, first / 4, out, mult_step != 0);
        }
        for (int32_t c0 = first; c0 < cout; c0 += TH_FC_BLOCK) {
            const int32_t g = TH_MIN(TH_FC_BLOCK, cout - c0);
            int32_t acc[4] = {0, 0, 0, 0};
            for (int32_t j = 0; j < g; j++) {
                acc[j] = th_add_wrap(bias != NULL ? bias[c0 + j] : 0, fo_sum);
            }
            const int8_t *w = filter + (int64_t)c0 * kp;
            block_dot(x, cin, offset2, w, g, acc, xta, xtb);
            for (int32_t j = 0; j < g; j++) {
                const int32_t c = c0 + j;
                const int32_t m = multiplier[c * mult_step];
                const int32_t s = shift[c * mult_step];
                int32_t v;
                if (th_fast_shift_ok(s) && fc_mag(acc[j]) < FC_MAG_LIMIT) {
                    const th_fast_rq rq =
                        mult_step ? th_fast_rq_make(m, s, params->output_offset) : rq_tensor;
                    v = th_clamp(th_fast_rq_apply(acc[j], &rq), params->activation.min,
                                 params->activation.max);
                } else {
                    v = th_clamp(th_requantize_s8(acc[j], m, s, params->output_offset),
                                 params->activation.min, params->activation.max);
                }
                out[c] = (int8_t)v;
            }
        }
#else
        for (int32_t c = 0; c < cout; c++) {
            int32_t acc = bias != NULL ? bias[c] : 0;
            for (int32_t k = 0; k < cin; k++) {
                const int32_t w = filter[th_filter_index(c, k, cin, cout, TH_FC_BLOCK)];
                acc = th_add_wrap(acc, (x[k] + params->input_offset) * w);
            }
            acc = th_add_wrap(acc, (int32_t)((uint32_t)params->filter_offset * (uint32_t)x_sum));
            const int32_t rq = th_requantize(acc, multiplier[c * mult_step], shift[c * mult_step]);
            out[c] = th_out_s8(rq, params->output_offset, params->activation.min,
                               params->activation.max);
        }
#endif
    }
#endif /* TH_NN_MVE */
}

/* The checks, path FC_SHORT chosen before any other path's setup, then the rest. */
TH_INLINE th_status fc_entry(const th_context *ctx, const th_fc_params *params,
                             const int32_t *multiplier, const int32_t *shift,
                             const int per_channel,
                             const th_dims *input_dims, const int8_t *input,
                             const th_dims *filter_dims, const int8_t *filter,
                             const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    (void)ctx; /* (read by FC_SHORT's scratch only) */
    int common;
    const th_status status = fc_check(params, multiplier, shift, per_channel ? -1 : 1,
                                      input_dims, input, filter_dims, filter, output_dims,
                                      output, &common);
    if (status != TH_OK) {
        return status;
    }
    if (per_channel && params->filter_offset != 0) {
        return TH_ERR_UNSUPPORTED; /* TFLM ignores it per channel; refuse, don't guess */
    }
    const int32_t batches = input_dims->n;
    int32_t b0 = 0;
#if TH_NN_HAS_DSP && !TH_NN_MVE
    /* The full int8 range (no clamp after the SSATs) and the others: separate loops. */
    const int full = params->activation.min == -128 && params->activation.max == 127;
    /* Past FC_SHORT_MAX inputs, the widened row in the caller's scratch when it has room. */
    int32_t *scratch = NULL;
    if (filter_dims->c > FC_SHORT_MAX && ctx != NULL && ctx->buf != NULL &&
        ((uintptr_t)ctx->buf & 3u) == 0) {
        const int32_t size = th_nn_fc_short_scratch(filter_dims);
        scratch = size > 0 && ctx->size >= size ? (int32_t *)ctx->buf : NULL;
    }
    if ((filter_dims->c <= FC_SHORT_MAX || scratch != NULL) && params->filter_offset == 0 &&
        bias != NULL && (per_channel ? common : th_fast_shift_ok(shift[0])) &&
        (full ? TH_NN_PATH(FC_SHORT_FULL) : TH_NN_PATH(FC_SHORT))) {
        b0 = fc_short_rows(params, multiplier, shift, per_channel, batches, input,
                           filter_dims->c, filter_dims->n, filter, bias, output, scratch);
        if (b0 == batches) {
            return TH_OK;
        }
    }
#endif
    fc_general(params, multiplier, shift, per_channel, b0, batches, input, filter_dims, filter,
               bias, output);
    return TH_OK;
}

th_status th_nn_fc_tensor_s8(const th_context *ctx, const th_fc_params *params,
                             const th_per_tensor_quant *quant, const th_dims *input_dims,
                             const int8_t *input, const th_dims *filter_dims,
                             const int8_t *filter, const int32_t *bias,
                             const th_dims *output_dims, int8_t *output)
{
    if (quant == NULL) {
        return TH_ERR_ARG;
    }
    return fc_entry(ctx, params, &quant->multiplier, &quant->shift, 0, input_dims, input,
                    filter_dims, filter, bias, output_dims, output);
}

th_status th_nn_fc_channel_s8(const th_context *ctx, const th_fc_params *params,
                              const th_per_channel_quant *quant, const th_dims *input_dims,
                              const int8_t *input, const th_dims *filter_dims,
                              const int8_t *filter, const int32_t *bias,
                              const th_dims *output_dims, int8_t *output)
{
    if (quant == NULL) {
        return TH_ERR_ARG;
    }
    return fc_entry(ctx, params, quant->multiplier, quant->shift, 1, input_dims, input,
                    filter_dims, filter, bias, output_dims, output);
}
