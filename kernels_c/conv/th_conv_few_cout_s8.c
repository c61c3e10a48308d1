/* th_nn_conv_few_cout_s8: CONV_2D (groups 1) with 2 or 3 output channels, dilation.w 1, Cin
 * >= 4, DSP builds given the fast scratch (path CONV_FEW_COUT, th_nn_support.h): channel-inner
 * rows straight from the int8 input.
 *
 * With Cout 2-3 the int16 im2col of the general path is widening work shared by too few
 * channels, and the direct path's quads widen every input word once per channel. Here an
 * input word is read and widened once (LDR, 2 SXTAB16 with the input offset) and meets every
 * channel's weights, kept widened in the fast scratch in SXTB16's lane order (taps 0, 2 and
 * 1, 3 of a word: LDRD) so no weight is widened per pixel: per word 12 instructions for 12
 * MACs with Cout 3 (9 for 8 with Cout 2, its own asm), against the quads' 25 for 16 per
 * channel; the word loop is unrolled by four (entered part-way per filter row), so its
 * control costs half an instruction a word.
 *
 * One pixel at a time, in raster order (ARCHITECTURE.md §4.1, th_nn.h rule (c): a pixel reads
 * its window, then writes its Cout bytes). Each filter row inside is one run of KW * Cin bytes
 * (dilation.w 1), read as round_up4 of that in words against zero weights past the run. Rows
 * outside the input are skipped (TFLM's padding value -input_offset contributes 0); a window
 * cut by the left or right edge is first staged in the scratch with -input_offset for the
 * taps outside (0 after the offset), as is the rare interior window whose last word would
 * read past the input tensor. Requantization as the direct path: th_fast_rq_apply where exact
 * for the channel, th_requantize_s8 otherwise, then the activation clamp.
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP && !TH_NN_MVE

#if defined(__GNUC__) && !defined(__clang__)
#define TH_FEW_NO_MEMCPY __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define TH_FEW_NO_MEMCPY
#endif

/* Pixels per run of the asm (their sums on the stack: 192 bytes; 16 rather than 8 saved ~60
 * instructions a run of set-up and requantization loop entry on 4x15x12 k3x1, Cortex-M4). */
#define FEW_CHUNK 16

/* Requantization of one channel. */
typedef struct {
    th_fast_rq rq;
    int32_t multiplier;
    int32_t shift;
    int32_t fast;
} few_rq;

/* Words of a filter row per pass of the asm's unrolled word loop. */
#define FEW_UNROLL 4

/* A run of pixels dx input bytes apart: the biases (first: one LDM), rows per pixel, the
 * passes after the first of the unrolled word loop (its first pass takes 1-4 words, entered
 * part-way), that entry (the asm's, from entry_off), input bytes from a row's last word to
 * the next row's first, from a pixel's end to the next pixel's start, weight bytes per pixel
 * (rewound), the end of the sums, the entry's byte offset into the loop (+1: Thumb), pixels
 * and words per row (the portable model's). */
typedef struct {
    int32_t bias[3];
    int32_t rows;
    int32_t passes;
    int32_t entry;
    int32_t adj;
    int32_t pix_adj;
    int32_t w_back;
    int32_t o_end;
    int32_t entry_off;
    int32_t pixels;
    int32_t words;
} few_geo;

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* One word of input (x, post-incremented) widened with the offset into t and u. Every
 * instruction of a word is 32-bit (48 bytes a word: the entry offset's unit). */
#define TH_FEW_WORD                                                                          \
    "ldr %[u], [%[x]], #4\n\t"                                                                \
    "sxtab16 %[t], %[off], %[u]\n\t"                                                          \
    "sxtab16 %[u], %[off], %[u], ror #8\n\t"
/* Channel S's two weight words (w, post-incremented) against t and u. */
#define TH_FEW_CHANNEL(S)                                                                    \
    "ldrd %[a], %[b], [%[w]], #8\n\t"                                                         \
    "smlad %[" S "], %[t], %[a], %[" S "]\n\t"                                                \
    "smlad %[" S "], %[u], %[b], %[" S "]\n\t"
#define TH_FEW_WORD3 TH_FEW_WORD TH_FEW_CHANNEL("s0") TH_FEW_CHANNEL("s1") TH_FEW_CHANNEL("s2")
#define TH_FEW_WORD2 TH_FEW_WORD TH_FEW_CHANNEL("s0") TH_FEW_CHANNEL("s1")
/* g's pixels from x against w (WORD: one input word against every channel) to o, the sums
 * SUMS (ascending registers). Per pixel: the sums from the biases (LDM) and lr the rows; per
 * row a jump into the loop of FEW_UNROLL words (Duff's device: the loop's control once per
 * 4 words, not per word); the sums out by one STM. */
#define TH_FEW_PIXELS(WORD, SUMS)                                                            \
    "adr.w %[t], 7f\n\t"                                                                      \
    "ldr %[n], [%[g], #40]\n\t"                                                               \
    "add %[t], %[t], %[n]\n\t"                                                                \
    "str %[t], [%[g], #20]\n\t"                                                               \
    "3:\n\t"                                                                                  \
    "ldr lr, [%[g], #12]\n\t"                                                                 \
    "ldm %[g], {" SUMS "}\n\t"                                                                \
    "2:\n\t"                                                                                  \
    "ldrd %[n], %[t], [%[g], #16]\n\t"                                                        \
    "bx %[t]\n\t"                                                                             \
    ".p2align 2\n\t"                                                                          \
    "7:\n\t"                                                                                  \
    WORD WORD WORD WORD                                                                       \
    "subs %[n], %[n], #1\n\t"                                                                 \
    "bpl 7b\n\t"                                                                              \
    "ldr %[t], [%[g], #24]\n\t"                                                               \
    "add %[x], %[x], %[t]\n\t"                                                                \
    "subs lr, lr, #1\n\t"                                                                     \
    "bne 2b\n\t"                                                                              \
    "stm %[o]!, {" SUMS "}\n\t"                                                               \
    "ldrd %[n], %[t], [%[g], #28]\n\t"                                                        \
    "add %[x], %[x], %[n]\n\t"                                                                \
    "sub %[w], %[w], %[t]\n\t"                                                                \
    "ldr %[n], [%[g], #36]\n\t"                                                               \
    "cmp %[o], %[n]\n\t"                                                                      \
    "bne 3b\n\t"

/* g's pixels (words, rows, pixels > 0) from input x against weights w (3 channels' widened
 * words per input word): their sums to o, three a pixel. */
static void __attribute__((noinline))
few3_pixels(const int8_t *x, const int32_t *w, few_geo *g, int32_t offset2, int32_t *o)
{
    /* (fixed ascending registers: LDM and STM of the sums) */
    register int32_t s0 __asm__("r4");
    register int32_t s1 __asm__("r5");
    register int32_t s2 __asm__("r6");
    int32_t n, t, u, a, b;
    __asm__ volatile(
        TH_FEW_PIXELS(TH_FEW_WORD3, "%[s0], %[s1], %[s2]")
        : [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [x] "+r"(x), [w] "+r"(w),
          [o] "+r"(o), [n] "=&r"(n), [t] "=&r"(t), [u] "=&r"(u), [a] "=&r"(a), [b] "=&r"(b)
        : [g] "r"(g), [off] "r"(offset2)
        : "cc", "memory", "lr");
}

/* few3_pixels for 2 channels (36 bytes a word: the entry offset's unit), two sums a pixel. */
static void __attribute__((noinline))
few2_pixels(const int8_t *x, const int32_t *w, few_geo *g, int32_t offset2, int32_t *o)
{
    register int32_t s0 __asm__("r4");
    register int32_t s1 __asm__("r5");
    int32_t n, t, u, a, b;
    __asm__ volatile(
        TH_FEW_PIXELS(TH_FEW_WORD2, "%[s0], %[s1]")
        : [s0] "=&r"(s0), [s1] "=&r"(s1), [x] "+r"(x), [w] "+r"(w),
          [o] "+r"(o), [n] "=&r"(n), [t] "=&r"(t), [u] "=&r"(u), [a] "=&r"(a), [b] "=&r"(b)
        : [g] "r"(g), [off] "r"(offset2)
        : "cc", "memory", "lr");
}

#undef TH_FEW_PIXELS
#undef TH_FEW_WORD2
#undef TH_FEW_WORD3
#undef TH_FEW_CHANNEL
#undef TH_FEW_WORD

/* Bytes of one word's asm per channel count. */
#define FEW_WORD_BYTES(cout) ((cout) == 3 ? 48 : 36)
#define few_pixels(cout, x, w, g, off, o)                                                    \
    ((cout) == 3 ? few3_pixels(x, w, g, off, o) : few2_pixels(x, w, g, off, o))
#else
/* Portable model of the asm (emulated DSP builds, path recording, -O0). */
#define FEW_WORD_BYTES(cout) 0 /* (no asm) */
static void few_pixels(int32_t cout, const int8_t *x, const int32_t *w, few_geo *g,
                       int32_t offset2, int32_t *o)
{
    for (int32_t p = 0; p < g->pixels; p++, o += cout) {
        const int32_t *wp = w;
        for (int32_t c = 0; c < cout; c++) {
            o[c] = g->bias[c];
        }
        for (int32_t r = 0; r < g->rows; r++, x += g->adj) {
            for (int32_t j = 0; j < g->words; j++, x += 4) {
                const int32_t v = th_read_s32(x);
                const int32_t t = th_sxtab16(offset2, v);
                const int32_t u = th_sxtab16_ror8(offset2, v);
                for (int32_t c = 0; c < cout; c++, wp += 2) {
                    o[c] = th_smlad(u, wp[1], th_smlad(t, wp[0], o[c]));
                }
            }
        }
        x += g->pix_adj;
    }
}
#endif

TH_INLINE int8_t few_out(int32_t acc, const few_rq *r, const th_nn_out_stage *stage)
{
    int32_t v = r->fast ? th_fast_rq_apply(acc, &r->rq)
                        : th_requantize_s8(acc, r->multiplier, r->shift, stage->output_offset);
    if (stage->clamp) {
        v = th_clamp(v, stage->act_min, stage->act_max);
    }
    return (int8_t)v;
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* th_fast_rq_apply of the sum at p (post-incremented) with channel S's constants, its byte to
 * o (post-incremented): 7 instructions (the compiler's loop of C spilled the constants of three
 * channels: 28 a pixel instead of 24, Cortex-M4). */
#define TH_FEW_RQ(S)                                                                         \
    "ldr %[a], [%[p]], #4\n\t"                                                               \
    "lsl %[t], %[a], #1\n\t"                                                                 \
    "smmlar %[a], %[t], %[m" S "], %[r" S "]\n\t"                                              \
    "add %[a], %[a], %[t], asr #31\n\t"                                                      \
    "asr %[a], %[a], %[e" S "]\n\t"                                                          \
    "ssat %[a], #8, %[a]\n\t"                                                                \
    "strb %[a], [%[o]], #1\n\t"

/* The sums at p of the pixels whose outputs are o .. end (end > o), every channel fast, no
 * clamp: Cout 3. */
static void __attribute__((noinline))
few3_requant(const int32_t *p, int8_t *o, const int8_t *end, const few_rq *rq)
{
    int32_t a, t;
    __asm__ volatile("1:\n\t" TH_FEW_RQ("0") TH_FEW_RQ("1") TH_FEW_RQ("2")
                     "ldr %[t], %[end]\n\t"
                     "cmp %[o], %[t]\n\t"
                     "bne 1b\n\t"
                     : [p] "+r"(p), [o] "+r"(o), [a] "=&r"(a), [t] "=&r"(t)
                     : [m0] "r"(rq[0].rq.multiplier), [r0] "r"(rq[0].rq.round_zp),
                       [e0] "r"(rq[0].rq.e), [m1] "r"(rq[1].rq.multiplier),
                       [r1] "r"(rq[1].rq.round_zp), [e1] "r"(rq[1].rq.e),
                       [m2] "r"(rq[2].rq.multiplier), [r2] "r"(rq[2].rq.round_zp),
                       [e2] "r"(rq[2].rq.e), [end] "m"(end)
                     : "cc", "memory");
}

/* few3_requant with Cout 2. */
static void __attribute__((noinline))
few2_requant(const int32_t *p, int8_t *o, const int8_t *end, const few_rq *rq)
{
    int32_t a, t;
    __asm__ volatile("1:\n\t" TH_FEW_RQ("0") TH_FEW_RQ("1")
                     "cmp %[o], %[end]\n\t"
                     "bne 1b\n\t"
                     : [p] "+r"(p), [o] "+r"(o), [a] "=&r"(a), [t] "=&r"(t)
                     : [m0] "r"(rq[0].rq.multiplier), [r0] "r"(rq[0].rq.round_zp),
                       [e0] "r"(rq[0].rq.e), [m1] "r"(rq[1].rq.multiplier),
                       [r1] "r"(rq[1].rq.round_zp), [e1] "r"(rq[1].rq.e), [end] "r"(end)
                     : "cc", "memory");
}
#undef TH_FEW_RQ
#else
/* Portable model of the asm. */
static void few_requant(int32_t cout, const int32_t *p, int8_t *o, const int8_t *end,
                        const few_rq *rq)
{
    for (; o != end; p += cout, o += cout) {
        for (int32_t c = 0; c < cout; c++) {
            o[c] = (int8_t)th_fast_rq_apply(p[c], &rq[c].rq);
        }
    }
}
#define few3_requant(p, o, end, rq) few_requant(3, p, o, end, rq)
#define few2_requant(p, o, end, rq) few_requant(2, p, o, end, rq)
#endif

/* Channel c's taps (plain order) into d, kp bytes, from the interleaved block layout: four
 * taps a word, word j of the channel at base + j * step. */
static void plain_taps(const int8_t *filter, int32_t c, int32_t k_total, int32_t cout,
                       int8_t *d)
{
    const int32_t base = th_filter_index(c, 0, k_total, cout, TH_CONV_BLOCK);
    const int32_t step =
        k_total > 4 ? th_filter_index(c, 4, k_total, cout, TH_CONV_BLOCK) - base : 4;
    for (int32_t j = 0; 4 * j < k_total; j++) {
        th_write_s32(d + 4 * j, th_read_s32(filter + base + j * step));
    }
}

/* Bytes from channel c's word j to its word j + 1 in the interleaved block layout (f: word
 * 0 of the channel). */
static int32_t plain_step(const int8_t *filter, const int8_t *f, int32_t c, int32_t k_total,
                          int32_t cout)
{
    return k_total > 4 ? (int32_t)(filter + th_filter_index(c, 4, k_total, cout, TH_CONV_BLOCK) - f)
                       : 4;
}

/* The window at input column x0 of `rows` input rows from row (row_step apart) into col,
 * w_row bytes per row: taps outside the input columns and the bytes past the run as pad
 * (pad4: that byte four times). Word stores: a byte loop cost as much as the window's MACs. */
static inline __attribute__((always_inline)) void stage_window(const int8_t *row, int32_t row_step, int32_t rows,
                                          int32_t x0, int32_t in_w, int32_t kw, int32_t cin,
                                          int32_t w_row, int32_t pad4, int8_t *col)
{
    const int32_t lo = x0 < 0 ? -x0 : 0;
    const int32_t hi = TH_MIN(kw, in_w - x0);
    const int32_t mid = (hi - lo) * cin; /* (>= Cin >= 4: some column inside) */
    const int32_t left = lo * cin;       /* pad bytes before the columns inside */
    const int32_t right = left + mid;    /* the first pad byte after them */
    const int8_t *src = row + (x0 + lo) * cin;
    for (int32_t r = 0; r < rows; r++, src += row_step, col += w_row) {
        /* The pad words only (their overlap with the inside bytes rewritten below): the
         * left ones up, the right ones down from the row's end (never past the window). */
        for (int32_t j = 0; j < left; j += 4) {
            th_write_s32(col + j, pad4);
        }
        for (int32_t j = w_row - 4; j > right - 4; j -= 4) {
            th_write_s32(col + j, pad4);
        }
        int8_t *d = col + left;
        const int8_t *s = src;
        const int8_t *const s_end = src + mid;
        for (; s_end - s >= 8; s += 8, d += 8) {
            const int32_t a = th_read_s32(s);
            const int32_t b = th_read_s32(s + 4);
            th_write_s32(d, a);
            th_write_s32(d + 4, b);
        }
        if (s_end - s >= 4) {
            th_write_s32(d, th_read_s32(s));
            s += 4;
            d += 4;
        }
        for (; s != s_end; s++, d++) {
            *d = *s;
        }
    }
}

TH_FEW_NO_MEMCPY int th_nn_conv_few_cout_s8(const th_context *ctx, const th_conv_params *params,
                           const th_per_channel_quant *quant, const th_dims *input_dims,
                           const int8_t *input, const th_dims *filter_dims,
                           const int8_t *filter, const int32_t *bias,
                           const th_dims *output_dims, int8_t *output)
{
    const int32_t need =
        th_nn_conv_few_cout_scratch(params, input_dims, filter_dims, output_dims);
    if (need == 0 || ctx->size < need) {
        return 0;
    }
    const int32_t cin = input_dims->c;
    const int32_t cout = output_dims->c; /* 2 or 3 (th_nn_conv_few_cout_scratch) */
    const int32_t kh = filter_dims->h;
    const int32_t kw = filter_dims->w;
    const int32_t run = kw * cin;
    const int32_t w_row = th_round_up4(run);
    const int32_t words = w_row / 4;
    const int32_t k_total = kh * run;
    th_nn_out_stage stage;
    th_nn_out_stage_init(&stage, quant, cout, params->output_offset, &params->activation,
                         th_acc_bound(k_total, 128, bias, cout));
    th_nn_out_stage_mixed(&stage, quant, bias, cout, (int64_t)k_total * 256 * 128);
    few_rq rq[3];
    int32_t b0[3] = {0, 0, 0};
    for (int32_t c = 0; c < cout; c++) {
        rq[c].multiplier = quant->multiplier[c];
        rq[c].shift = quant->shift[c];
        b0[c] = bias != NULL ? bias[c] : 0;
        rq[c].fast = stage.fast || (stage.mixed && th_nn_fast_channel(&stage, quant, bias, c));
        rq[c].rq = rq[c].fast ? th_fast_rq_make(rq[c].multiplier, rq[c].shift,
                                                stage.output_offset)
                              : (th_fast_rq){0, 0, 0};
    }
    /* Widened weights: for filter row ky, word j, channel c the words (taps 0, 2) and (1, 3)
     * of the row's taps 4 j.. at ww + 2 ((ky words + j) cout + c), taps past the run 0. The
     * plain taps of one channel go through the staging area first (kp <= kh w_row bytes). */
    int32_t *ww = (int32_t *)ctx->buf;
    int8_t *col = (int8_t *)(ww + 2 * cout * kh * words);
    if ((run & 3) == 0) {
        /* Rows of whole words: row ky's word j is the channel's word ky words + j, read in
         * place, all three channels a word (ctx's fixed cost was ~22 instructions a word
         * and channel through the staging, Cortex-M4). */
        const int8_t *f0 = filter + th_filter_index(0, 0, k_total, cout, TH_CONV_BLOCK);
        const int8_t *f1 = filter + th_filter_index(1, 0, k_total, cout, TH_CONV_BLOCK);
        const int32_t step0 = plain_step(filter, f0, 0, k_total, cout);
        const int32_t step1 = plain_step(filter, f1, 1, k_total, cout);
        int32_t *d = ww;
        if (cout == 3) {
            const int8_t *f2 = filter + th_filter_index(2, 0, k_total, cout, TH_CONV_BLOCK);
            const int32_t step2 = plain_step(filter, f2, 2, k_total, cout);
            for (int32_t m = 0; m < kh * words; m++, d += 2 * 3) {
                const int32_t v0 = th_read_s32(f0 + m * step0);
                const int32_t v1 = th_read_s32(f1 + m * step1);
                const int32_t v2 = th_read_s32(f2 + m * step2);
                d[0] = th_sxtb16(v0);
                d[1] = th_sxtb16_ror8(v0);
                d[2] = th_sxtb16(v1);
                d[3] = th_sxtb16_ror8(v1);
                d[4] = th_sxtb16(v2);
                d[5] = th_sxtb16_ror8(v2);
            }
        } else {
            for (int32_t m = 0; m < kh * words; m++, d += 2 * 2) {
                const int32_t v0 = th_read_s32(f0 + m * step0);
                const int32_t v1 = th_read_s32(f1 + m * step1);
                d[0] = th_sxtb16(v0);
                d[1] = th_sxtb16_ror8(v0);
                d[2] = th_sxtb16(v1);
                d[3] = th_sxtb16_ror8(v1);
            }
        }
    }
    /* Rows ending inside a word: through the staging, the row's last word masked. */
    const uint32_t tail = (1u << (8 * (run & 3))) - 1u;
    for (int32_t c = 0; c < cout && (run & 3) != 0; c++) {
        plain_taps(filter, c, k_total, cout, col);
        int32_t *d = ww + 2 * c;
        for (int32_t ky = 0; ky < kh; ky++) {
            const int8_t *src = col + ky * run;
            for (int32_t j = 1; j < words; j++, src += 4, d += 2 * cout) {
                const int32_t v = th_read_s32(src);
                d[0] = th_sxtb16(v);
                d[1] = th_sxtb16_ror8(v);
            }
            const int32_t v = (int32_t)((uint32_t)th_read_s32(src) & tail);
            d[0] = th_sxtb16(v);
            d[1] = th_sxtb16_ror8(v);
            d += 2 * cout;
        }
    }
    const int32_t offset2 = (int32_t)(((uint32_t)params->input_offset << 16) |
                                      ((uint32_t)params->input_offset & 0xFFFFu));
    const int32_t pad4 = (int32_t)(0x01010101u * (uint8_t)(-params->input_offset));
    const int32_t in_w = input_dims->w;
    const int32_t row_bytes = in_w * cin;
    const int32_t row_step = params->dilation.h * row_bytes;
    const int32_t in_batch = input_dims->h * row_bytes;
    const int32_t in_total = input_dims->n * in_batch;
    const int32_t w_pixel = 2 * cout * words; /* widened words per filter row */
    const int32_t sw = params->stride.w;
    const int32_t dx = sw * cin;
    /* Output columns [ox_a, ox_b) have every tap column inside: a run of pixels. */
    const int32_t ox_a = TH_MIN((params->padding.w + sw - 1) / sw, output_dims->w);
    const int32_t last_x = in_w - kw + params->padding.w;
    const int32_t ox_b = last_x < 0 ? ox_a : TH_MAX(ox_a, TH_MIN(output_dims->w, last_x / sw + 1));
    int plain = !stage.clamp; /* every channel fast, no clamp: the lean output loop */
    for (int32_t c = 0; c < cout; c++) {
        plain = plain && rq[c].fast;
    }
    /* g: runs of interior pixels; g1: one staged window (rows alike, no steps) */
    few_geo g = {{b0[0], b0[1], b0[2]}, 0, (words - 1) / FEW_UNROLL, 0, 0, 0, 0, 0,
                 (FEW_UNROLL - 1 - (words - 1) % FEW_UNROLL) * FEW_WORD_BYTES(cout) + 1, 0,
                 words};
    few_geo g1 = g;
    g.adj = row_step - w_row;
    g1.pixels = 1;
    /* (locals: the asm's memory clobber would reload the structures' fields every row) */
    const int32_t dil_h = params->dilation.h;
    const int32_t stride_h = params->stride.h;
    const int32_t pad_w = params->padding.w;
    const int32_t in_h = input_dims->h;
    const int32_t out_h = output_dims->h;
    const int32_t out_w = output_dims->w;
    const int32_t y_full = in_h - 1 - (kh - 1) * dil_h; /* last y0 with every row inside */
    int8_t *out = output;
    for (int32_t b = 0; b < input_dims->n; b++) {
        int32_t y0 = -params->padding.h;
        for (int32_t oy = 0; oy < out_h; oy++, y0 += stride_h) {
            int32_t ky_lo = 0;
            int32_t ky_hi = kh;
            if (y0 < 0 || y0 > y_full) {
                th_nn_rows_inside(y0, dil_h, kh, in_h, &ky_lo, &ky_hi);
            }
            const int32_t rows = ky_hi - ky_lo;
            /* (offsets, not pointers, until a window is known inside) */
            const int32_t row0 = b * in_batch + (y0 + ky_lo * dil_h) * row_bytes;
            const int32_t last = (rows - 1) * row_step + w_row; /* a window's read span */
            const int32_t *wr = ww + ky_lo * w_pixel;
            if (rows != g.rows) {
                g.rows = rows;
                g.pix_adj = dx - rows * row_step;
                g.w_back = rows * w_pixel * 4;
                g1.rows = rows;
            }
            /* the run's pixels whose last word stays inside the input */
            int32_t run_b = rows > 0 ? ox_b : ox_a;
            while (run_b > ox_a && row0 + ((run_b - 1) * sw - pad_w) * cin + last > in_total) {
                run_b--;
            }
            for (int32_t ox = 0; ox < out_w;) {
                int32_t acc[3 * FEW_CHUNK];
                int32_t n = 1;
                if (ox >= ox_a && ox < run_b) {
                    n = TH_MIN(FEW_CHUNK, run_b - ox);
                    g.pixels = n;
                    g.o_end = (int32_t)(intptr_t)(acc + cout * n);
                    few_pixels(cout, input + row0 + (ox * sw - pad_w) * cin, wr, &g,
                               offset2, acc);
                } else {
                    const int32_t x0 = ox * sw - pad_w;
                    acc[0] = b0[0];
                    acc[1] = b0[1];
                    acc[2] = b0[2]; /* (acc[2]: the next pixel's with Cout 2) */
                    if (rows > 0 && x0 + kw > 0 && x0 < in_w) {
                        stage_window(input + row0, row_step, rows, x0, in_w, kw, cin, w_row,
                                     pad4, col);
                        g1.o_end = (int32_t)(intptr_t)(acc + cout);
                        few_pixels(cout, col, wr, &g1, offset2, acc);
                    }
                }
                if (plain && cout == 3) {
                    few3_requant(acc, out, out + 3 * n, rq);
                    out += 3 * n;
                } else if (plain) {
                    few2_requant(acc, out, out + 2 * n, rq);
                    out += 2 * n;
                } else {
                    for (int32_t i = 0; i < n * cout; i += cout, out += cout) {
                        for (int32_t c = 0; c < cout; c++) {
                            out[c] = few_out(acc[i + c], &rq[c], &stage);
                        }
                    }
                }
                ox += n;
            }
        }
    }
    return 1;
}

#endif /* TH_NN_HAS_DSP && !TH_NN_MVE */
