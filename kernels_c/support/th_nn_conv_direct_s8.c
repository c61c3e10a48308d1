/* th_nn_conv_direct_s8: CONV_2D (groups 1) with few output channels, DSP builds, no im2col.
 *
 * With Cout <= TH_NN_DIRECT_MAX_COUT the int16 im2col of the general path costs more than
 * the MACs it feeds (every column value is used by 1-3 channels only). Here every output
 * is a sum of dot products straight from the int8 input: a filter row's taps inside the
 * input are one contiguous run of (kx_hi - kx_lo) * Cin bytes in NHWC (dilation.w 1; with
 * dilation.w > 1 one run of Cin bytes per tap), the matching weights one run of the
 * channel's filter row. Runs are read a word at a time (unaligned loads), the input widened
 * with its offset by SXTAB16, the weights by SXTB16, two SMLAD per word and pixel; the last
 * n % 4 bytes of a run take one more word with the weight bytes past the run masked to 0.
 * Four (or two) horizontally adjacent output pixels with the same taps inside share the
 * weight words (23 instructions per 16 MACs; Cout 2 with whole-word filter rows: pixel pairs
 * sharing the input words between both channels, 21 per 16, pair_quads), other pixels
 * (borders) go one at a time with
 * their runs clipped; padding taps are skipped (they
 * contribute 0 in TFLM, the padding value being -input_offset).
 *
 * The filter arrives interleaved by channel pairs (th_nn_support.h): it is copied once per
 * call into scratch as plain rows of Kp bytes per channel (Cout * Kp <= 3 * Kp bytes of the
 * 4 * Kp the im2col scratch of every conv variant already has, th_nn_im2col_pair_bytes).
 * Given the fast scratch (th_nn_conv_direct_fast_scratch: dilation.w > 1, Cout 2-4), every
 * pixel is staged instead as an int8 column and four columns take the quad loop (below).
 * Requantization as the other DSP paths: th_fast_rq_apply where exact for the channel,
 * th_requantize_s8 otherwise, then the activation clamp.
 *
 * Raster order (th_nn.h rule (c)) and rule (b) of the pointwise kernel: pixels go in
 * ascending order, up to four at a time, and every channel of a pixel group is accumulated
 * before any of its outputs is written.
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP

/* Requantization of one channel. */
typedef struct {
    th_fast_rq rq;
    int32_t multiplier;
    int32_t shift;
    int32_t bias;
    int32_t fast;
} direct_rq;

/* s[0] += sum((x0[i] + o) * w[i]), s[1] += sum((x1[i] + o) * w[i]) over i < n. The last
 * n % 4 bytes: one more word with the weight bytes past n masked to 0 (the input bytes
 * there, read but multiplied by 0, must exist: x_end bounds them), else a scalar tail. */
TH_INLINE void dot_pair(const int8_t *x0, const int8_t *x1, const int8_t *w, int32_t n,
                        int32_t offset2, int32_t offset, const int8_t *x_end, int32_t *s)
{
    int32_t s0 = s[0];
    int32_t s1 = s[1];
    const int32_t rem = n & 3;
    const int8_t *w_end = w + (n - rem);
    for (; w != w_end; x0 += 4, x1 += 4, w += 4) {
        const int32_t wv = th_read_s32(w);
        const int32_t u = th_read_s32(x0);
        const int32_t v = th_read_s32(x1);
        const int32_t wl = th_sxtb16(wv);
        const int32_t wh = th_sxtb16_ror8(wv);
        s0 = th_smlad(th_sxtab16(offset2, u), wl, s0);
        s1 = th_smlad(th_sxtab16(offset2, v), wl, s1);
        s0 = th_smlad(th_sxtab16_ror8(offset2, u), wh, s0);
        s1 = th_smlad(th_sxtab16_ror8(offset2, v), wh, s1);
    }
    if (rem != 0) {
        if (x1 + 4 <= x_end && x0 + 4 <= x_end) {
            const int32_t wv =
                (int32_t)((uint32_t)th_read_s32(w) & ((1u << (8 * rem)) - 1u));
            const int32_t u = th_read_s32(x0);
            const int32_t v = th_read_s32(x1);
            const int32_t wl = th_sxtb16(wv);
            const int32_t wh = th_sxtb16_ror8(wv);
            s0 = th_smlad(th_sxtab16(offset2, u), wl, s0);
            s1 = th_smlad(th_sxtab16(offset2, v), wl, s1);
            s0 = th_smlad(th_sxtab16_ror8(offset2, u), wh, s0);
            s1 = th_smlad(th_sxtab16_ror8(offset2, v), wh, s1);
        } else {
            for (int32_t i = 0; i < rem; i++) {
                s0 = th_add_wrap(s0, (x0[i] + offset) * w[i]);
                s1 = th_add_wrap(s1, (x1[i] + offset) * w[i]);
            }
        }
    }
    s[0] = s0;
    s[1] = s1;
}

/* dot_pair for four pixels, `dx` input bytes apart: s[0..3]. */
TH_INLINE void dot_quad(const int8_t *x0, int32_t dx, const int8_t *w, int32_t n,
                        int32_t offset2, int32_t offset, const int8_t *x_end, int32_t *s)
{
    int32_t s0 = s[0];
    int32_t s1 = s[1];
    int32_t s2 = s[2];
    int32_t s3 = s[3];
    const int8_t *x1 = x0 + dx;
    const int8_t *x2 = x1 + dx;
    const int8_t *x3 = x2 + dx;
    const int32_t rem = n & 3;
    const int8_t *w_end = w + (n - rem);
    for (; w != w_end; x0 += 4, x1 += 4, x2 += 4, x3 += 4, w += 4) {
        const int32_t wv = th_read_s32(w);
        const int32_t wl = th_sxtb16(wv);
        const int32_t wh = th_sxtb16_ror8(wv);
        int32_t u = th_read_s32(x0);
        s0 = th_smlad(th_sxtab16(offset2, u), wl, s0);
        s0 = th_smlad(th_sxtab16_ror8(offset2, u), wh, s0);
        u = th_read_s32(x1);
        s1 = th_smlad(th_sxtab16(offset2, u), wl, s1);
        s1 = th_smlad(th_sxtab16_ror8(offset2, u), wh, s1);
        u = th_read_s32(x2);
        s2 = th_smlad(th_sxtab16(offset2, u), wl, s2);
        s2 = th_smlad(th_sxtab16_ror8(offset2, u), wh, s2);
        u = th_read_s32(x3);
        s3 = th_smlad(th_sxtab16(offset2, u), wl, s3);
        s3 = th_smlad(th_sxtab16_ror8(offset2, u), wh, s3);
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
    if (rem != 0) {
        /* The tails as two pairs (x3 is the furthest: the pairs check it). */
        int32_t t[2] = {0, 0};
        dot_pair(x0, x1, w, rem, offset2, offset, x_end, t);
        s[0] = th_add_wrap(s[0], t[0]);
        s[1] = th_add_wrap(s[1], t[1]);
        t[0] = 0;
        t[1] = 0;
        dot_pair(x2, x3, w, rem, offset2, offset, x_end, t);
        s[2] = th_add_wrap(s[2], t[0]);
        s[3] = th_add_wrap(s[3], t[1]);
    }
}

/* s += sum((x[i] + o) * w[i]) over i < n, the tail as in dot_pair. */
TH_INLINE int32_t dot_one(const int8_t *x, const int8_t *w, int32_t n, int32_t offset2,
                          int32_t offset, const int8_t *x_end, int32_t s)
{
    const int32_t rem = n & 3;
    const int8_t *w_end = w + (n - rem);
    for (; w != w_end; x += 4, w += 4) {
        const int32_t wv = th_read_s32(w);
        const int32_t u = th_read_s32(x);
        s = th_smlad(th_sxtab16(offset2, u), th_sxtb16(wv), s);
        s = th_smlad(th_sxtab16_ror8(offset2, u), th_sxtb16_ror8(wv), s);
    }
    if (rem != 0) {
        if (x + 4 <= x_end) {
            const int32_t wv =
                (int32_t)((uint32_t)th_read_s32(w) & ((1u << (8 * rem)) - 1u));
            const int32_t u = th_read_s32(x);
            s = th_smlad(th_sxtab16(offset2, u), th_sxtb16(wv), s);
            s = th_smlad(th_sxtab16_ror8(offset2, u), th_sxtb16_ror8(wv), s);
        } else {
            for (int32_t i = 0; i < rem; i++) {
                s = th_add_wrap(s, (x[i] + offset) * w[i]);
            }
        }
    }
    return s;
}

/* Taps [lo, hi) of a filter axis inside the input: origin o, dilation d, size k, input n. */
TH_INLINE void inside_taps(int32_t o, int32_t d, int32_t k, int32_t n, int32_t *lo,
                           int32_t *hi)
{
    int32_t a = o >= 0 ? 0 : (-o + d - 1) / d;
    int32_t b = o > n - 1 ? 0 : (n - 1 - o) / d + 1;
    b = TH_MIN(b, k);
    a = TH_MIN(a, b);
    *lo = a;
    *hi = b;
}

/* The shared geometry of a call (byte offsets fit int32: the checks bound the tensors). */
typedef struct {
    const int8_t *w; /* plain filter rows: channel c's row ky at w + c * w_ch + ky * w_row */
    const int8_t *x_end; /* end of the input tensor */
    int32_t kp;
    int32_t w_row; /* kw * Cin, or that rounded up to words, the bytes past it 0 (padded) */
    int32_t w_ch;  /* kp, or kh * w_row (padded) */
    int32_t cin;
    int32_t kw;
    int32_t dil_w;
    int32_t offset;
    int32_t offset2;
    /* the interleaved filter where its channel pairs' rows run as the pairs loop reads them
     * (Cout 2, whole-word filter rows, dilation.w 1), else NULL (pair_quads) */
    const int8_t *pairs;
    /* Cout 1 with the edge patches' scratch, native DSP builds: the padded rows widened, two
     * words per weight word (quad_rows_wide), else NULL */
    const int32_t *wide;
    /* native DSP builds: one_quads' rows loop (quad_rows_whole, or with wide quad_rows_wide,
     * quad_rows_wide_long for rows over TH_NN_DIRECT_EDGE_MAX_RUN bytes), chosen once a call */
    void (*rows_fn)(const int8_t *, int32_t, const int8_t *, const int32_t *, int32_t, int32_t,
                    int32_t *);
    /* edge_rows with wide (rows of 1-8 words, at most RUN_MAX_KH), path CONV_DIRECT_ROW_RUN:
     * the rows' weight sums' prefix (widen_sums), else NULL */
    const int32_t *wsum;
} direct_geo;

/* Channel c of 1, 2 or 4 pixels (each `dx` input bytes after the previous, same taps inside):
 * `rows` rows from input row pointer xa (the first tap inside of the first row inside,
 * row_step bytes to the next), taps [kx_lo, kx_hi) of filter rows from ky_lo. */
TH_INLINE void channel_sums(const direct_geo *g, int32_t c, const int8_t *xa, int32_t row_step,
                            int32_t rows, int32_t ky_lo, int32_t kx_lo, int32_t kx_hi,
                            int32_t pixels, int32_t dx, int32_t *s)
{
    const int32_t span = g->dil_w == 1 ? kx_hi - kx_lo : 1;
    const int32_t run = span * g->cin;
    /* no tap column inside (a window wholly in a folded PAD's columns): the bias alone */
    const int32_t runs = span > 0 ? (kx_hi - kx_lo) / span : 0;
    const int32_t run_step = g->dil_w * g->cin;
    const int8_t *wr = g->w + c * g->w_ch + ky_lo * g->w_row + kx_lo * g->cin;
    const int32_t w_row = g->w_row;
    for (int32_t r = 0; r < rows; r++, xa += row_step, wr += w_row) {
        const int8_t *x = xa;
        const int8_t *w = wr;
        for (int32_t i = 0; i < runs; i++, x += run_step, w += g->cin) {
            if (pixels == 4) {
                dot_quad(x, dx, w, run, g->offset2, g->offset, g->x_end, s);
            } else if (pixels == 2) {
                dot_pair(x, x + dx, w, run, g->offset2, g->offset, g->x_end, s);
            } else {
                s[0] = dot_one(x, w, run, g->offset2, g->offset, g->x_end, s[0]);
            }
        }
    }
}

TH_INLINE int8_t direct_out(int32_t acc, const direct_rq *r, const th_nn_out_stage *stage)
{
    int32_t v = r->fast ? th_fast_rq_apply(acc, &r->rq)
                        : th_requantize_s8(acc, r->multiplier, r->shift, stage->output_offset);
    if (stage->clamp) {
        v = th_clamp(v, stage->act_min, stage->act_max);
    }
    return (int8_t)v;
}

/* One word of four pixels' runs (x0 + i * dx) against weight word wv. */
TH_INLINE void quad_word(const int8_t *x0, int32_t dx, int32_t wv, int32_t offset2,
                         int32_t *s0, int32_t *s1, int32_t *s2, int32_t *s3)
{
    const int32_t wl = th_sxtb16(wv);
    const int32_t wh = th_sxtb16_ror8(wv);
    int32_t u = th_read_s32(x0);
    *s0 = th_smlad(th_sxtab16(offset2, u), wl, *s0);
    *s0 = th_smlad(th_sxtab16_ror8(offset2, u), wh, *s0);
    u = th_read_s32(x0 + dx);
    *s1 = th_smlad(th_sxtab16(offset2, u), wl, *s1);
    *s1 = th_smlad(th_sxtab16_ror8(offset2, u), wh, *s1);
    u = th_read_s32(x0 + 2 * dx);
    *s2 = th_smlad(th_sxtab16(offset2, u), wl, *s2);
    *s2 = th_smlad(th_sxtab16_ror8(offset2, u), wh, *s2);
    u = th_read_s32(x0 + 3 * dx);
    *s3 = th_smlad(th_sxtab16(offset2, u), wl, *s3);
    *s3 = th_smlad(th_sxtab16_ror8(offset2, u), wh, *s3);
}

/* The four pixels of a quad (dilation.w 1): `dx` input bytes apart, filter rows of `words`
 * whole words and a partial last word (its weight bytes: mask, 0 for none; it reads
 * round_up4 bytes, which the caller checked exist), row_step input bytes and w_step weight
 * bytes from one filter row to the next. One per call: only the pointers change per quad. */
typedef struct {
    int32_t dx;
    int32_t words;
    int32_t adj; /* row_step - 4 words: from a row's last word to the next row (after words) */
    int32_t mask;
    int32_t w_step;
    int32_t row_step;
    int32_t offset2;
} quad_geo;

TH_INLINE quad_geo quad_geo_make(int32_t dx, int32_t run, int32_t w_step, int32_t row_step,
                                 int32_t offset2)
{
    return (quad_geo){dx, run / 4, row_step - 4 * (run / 4),
                      (int32_t)((1u << (8 * (run & 3))) - 1u), w_step, row_step, offset2};
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* quad_channel on native DSP builds: each row's whole words 16 MACs in 25 instructions
 * (LDR + 2 SXTB16 of the weight word, per pixel LDR + 2 SXTAB16 + 2 SMLAD, SUBS + BNE), the
 * pixels at x, x + dx, x + 2 dx (LSL #1 addressing), x + 3 dx; all 14 registers, which gcc
 * finds only in a function of its own, and at -Os only with the geometry as arguments and
 * the row pointers copied per row (read through a pointer, or stepped as the asm's own
 * operands, gcc -Os reports impossible constraints). The row's partial last word as
 * quad_word. The sums come and go through s (no struct by value: fewer copies per call). */
#define TH_QUAD_PIXEL(S, ADDR)                                                               \
    "ldr %[u], " ADDR "\n\t"                                                                 \
    "sxtab16 %[t], %[off], %[u]\n\t"                                                          \
    "smlad %[" S "], %[t], %[wl], %[" S "]\n\t"                                               \
    "sxtab16 %[u], %[off], %[u], ror #8\n\t"                                                  \
    "smlad %[" S "], %[u], %[wh], %[" S "]\n\t"
/* n (> 0) words of a row: w and x (the first pixel) past them. */
#define TH_QUAD_WORDS                                                                        \
    "1:\n\t"                                                                                  \
    "ldr %[u], [%[w]], #4\n\t"                                                                \
    "sxtb16 %[wl], %[u]\n\t"                                                                  \
    "sxtb16 %[wh], %[u], ror #8\n\t"                                                          \
    TH_QUAD_PIXEL("s1", "[%[x], %[dx]]")                                                     \
    TH_QUAD_PIXEL("s2", "[%[x], %[dx], lsl #1]")                                             \
    TH_QUAD_PIXEL("s3", "[%[x], %[dx3]]")                                                    \
    TH_QUAD_PIXEL("s0", "[%[x]], #4")                                                        \
    "subs %[n], %[n], #1\n\t"                                                                 \
    "bne 1b\n\t"
static void __attribute__((noinline))
quad_rows(const int8_t *xr, int32_t dx, const int8_t *wr, int32_t words, int32_t mask,
          int32_t w_step, int32_t rows, int32_t row_step, int32_t offset2, int32_t *s)
{
    int32_t s0 = s[0];
    int32_t s1 = s[1];
    int32_t s2 = s[2];
    int32_t s3 = s[3];
    for (int32_t r = 0; r < rows; r++, xr += row_step, wr += w_step) {
        const int8_t *x = xr;
        const int8_t *w = wr;
        if (words > 0) {
            int32_t n = words;
            int32_t wl;
            int32_t wh;
            int32_t u;
            int32_t t;
            __asm__ volatile(
                TH_QUAD_WORDS
                : [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [x] "+r"(x),
                  [w] "+r"(w), [n] "+r"(n), [wl] "=&r"(wl), [wh] "=&r"(wh), [u] "=&r"(u),
                  [t] "=&r"(t)
                : [dx] "r"(dx), [dx3] "r"(3 * dx), [off] "r"(offset2)
                : "cc", "memory");
        }
        if (mask != 0) {
            quad_word(x, dx, th_read_s32(w) & mask, offset2, &s0, &s1, &s2, &s3);
        }
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
}

/* The row loop around a whole-rows asm body (quad_rows_whole, pair_rows): t holds s (the
 * four sums in and out), u the row count, n the address of {words, adj}; words, adj, the
 * row count and s are kept in 16 bytes below sp; after each row x steps by adj. */
#define TH_ROWS_ENTER                                                                        \
    "str %[t], [sp, #-4]!\n\t"                                                                \
    "str %[u], [sp, #-4]!\n\t"                                                                \
    "ldrd %[s0], %[s1], [%[t]]\n\t"                                                           \
    "ldrd %[s2], %[s3], [%[t], #8]\n\t"                                                       \
    "ldrd %[n], %[u], [%[n]]\n\t"                                                             \
    "strd %[n], %[u], [sp, #-8]!\n\t"                                                         \
    "2:\n\t"
#define TH_ROWS_LEAVE                                                                        \
    "ldrd %[n], %[u], [sp]\n\t"                                                               \
    "add %[x], %[x], %[u]\n\t"                                                                \
    "ldr %[t], [sp, #8]\n\t"                                                                  \
    "subs %[t], %[t], #1\n\t"                                                                 \
    "str %[t], [sp, #8]\n\t"                                                                  \
    "bne 2b\n\t"                                                                              \
    "ldr %[t], [sp, #12]\n\t"                                                                 \
    "add sp, sp, #16\n\t"                                                                     \
    "strd %[s0], %[s1], [%[t]]\n\t"                                                           \
    "strd %[s2], %[s3], [%[t], #8]\n\t"
/* quad_rows for rows of whole words only, the weights of one row following the previous
 * (padded rows): the row loop too in the asm, 7 instructions per row, against ~20 of C per
 * row and a masked word in quad_rows. wa: q's words (> 0) and adj, rows > 0, the four
 * sums in s (in and out). All 14 registers are the asm's (the sums loaded and stored by it:
 * with a C value live across it gcc reports impossible constraints once an FPU is enabled);
 * words, adj, the row count and s are kept in 16 bytes below sp (not in the .su frame). */
static void __attribute__((noinline))
quad_rows_whole(const int8_t *x, int32_t dx, const int8_t *w, const int32_t *wa, int32_t rows,
                int32_t offset2, int32_t *s)
{
    int32_t s0;
    int32_t s1;
    int32_t s2;
    int32_t s3;
    int32_t n = (int32_t)(uintptr_t)wa;
    int32_t wl;
    int32_t wh;
    int32_t u = rows;
    int32_t t = (int32_t)(uintptr_t)s;
    __asm__ volatile(
        TH_ROWS_ENTER
        TH_QUAD_WORDS
        TH_ROWS_LEAVE
        : [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [x] "+r"(x),
          [w] "+r"(w), [n] "+r"(n), [wl] "=&r"(wl), [wh] "=&r"(wh), [u] "+r"(u),
          [t] "+r"(t)
        : [dx] "r"(dx), [dx3] "r"(3 * dx), [off] "r"(offset2)
        : "cc", "memory");
}
/* quad_rows_whole with the weights widened once per call (direct_geo.wide: each weight word
 * as its SXTB16 and SXTB16 ROR #8 halves, 8 bytes): LDRD for the two halves, 21 instructions
 * per 16 MACs against 25. Cout 1 only (one channel: nothing else shares the widening). Its
 * rows are at most TH_NN_DIRECT_EDGE_MAX_RUN bytes (edge_rows), 1-8 words: each row is one
 * pass through eight unrolled words entered at word 8 - words by a TBH, no per-word count
 * and branch (7x55x5 k4x3 s2, 4-word rows: 99 -> 91 instructions a row). */
#define TH_QUAD_WIDE_WORD                                                                    \
    "ldrd %[wl], %[wh], [%[w]], #8\n\t"                                                       \
    TH_QUAD_PIXEL("s1", "[%[x], %[dx]]")                                                     \
    TH_QUAD_PIXEL("s2", "[%[x], %[dx], lsl #1]")                                             \
    TH_QUAD_PIXEL("s3", "[%[x], %[dx3]]")                                                    \
    TH_QUAD_PIXEL("s0", "[%[x]], #4")
static void __attribute__((noinline))
quad_rows_wide(const int8_t *x, int32_t dx, const int8_t *w, const int32_t *wa, int32_t rows,
               int32_t offset2, int32_t *s)
{ /* (w: the widened words, as int8 for quad_rows_whole's signature: one_quads picks either) */
    int32_t s0;
    int32_t s1;
    int32_t s2;
    int32_t s3;
    int32_t n = (int32_t)(uintptr_t)wa;
    int32_t wl;
    int32_t wh;
    int32_t u = rows;
    int32_t t = (int32_t)(uintptr_t)s;
    __asm__ volatile(
        TH_ROWS_ENTER
        "rsb %[n], %[n], #8\n\t" /* (TH_ROWS_ENTER's label 2 is past it: set once) */
        "4:\n\t"
        "tbh [pc, %[n], lsl #1]\n\t"
        "5:\n\t"
        ".hword (10f - 5b) / 2, (11f - 5b) / 2, (12f - 5b) / 2, (13f - 5b) / 2\n\t"
        ".hword (14f - 5b) / 2, (15f - 5b) / 2, (16f - 5b) / 2, (17f - 5b) / 2\n\t"
        "10:\n\t" TH_QUAD_WIDE_WORD
        "11:\n\t" TH_QUAD_WIDE_WORD
        "12:\n\t" TH_QUAD_WIDE_WORD
        "13:\n\t" TH_QUAD_WIDE_WORD
        "14:\n\t" TH_QUAD_WIDE_WORD
        "15:\n\t" TH_QUAD_WIDE_WORD
        "16:\n\t" TH_QUAD_WIDE_WORD
        "17:\n\t" TH_QUAD_WIDE_WORD
        "ldr %[u], [sp, #4]\n\t"
        "add %[x], %[x], %[u]\n\t"
        "ldr %[t], [sp, #8]\n\t"
        "subs %[t], %[t], #1\n\t"
        "str %[t], [sp, #8]\n\t"
        "bne 4b\n\t"
        "ldr %[t], [sp, #12]\n\t"
        "add sp, sp, #16\n\t"
        "strd %[s0], %[s1], [%[t]]\n\t"
        "strd %[s2], %[s3], [%[t], #8]\n\t"
        : [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [x] "+r"(x),
          [w] "+r"(w), [n] "+r"(n), [wl] "=&r"(wl), [wh] "=&r"(wh), [u] "+r"(u),
          [t] "+r"(t)
        : [dx] "r"(dx), [dx3] "r"(3 * dx), [off] "r"(offset2)
        : "cc", "memory");
}
/* quad_rows_wide for rows of more than eight words (filter rows over
 * TH_NN_DIRECT_EDGE_MAX_RUN bytes): the eight unrolled words as a loop, its first pass entered
 * at word 8 - (words - 1) % 8 - 1 by the TBH, a pass ending where w reaches the row's last
 * widened word (kept below sp): 6 instructions a row and 3 a pass more than quad_rows_wide,
 * against quad_rows_whole's 4 a word (25 per 16 MACs: 11x11x31 k6x5, 39-word rows). wa: q's
 * words (> 8) and adj; the row's widened bytes (8 words) one more word below sp. */
static void __attribute__((noinline))
quad_rows_wide_long(const int8_t *x, int32_t dx, const int8_t *w, const int32_t *wa,
                    int32_t rows, int32_t offset2, int32_t *s)
{
    int32_t s0;
    int32_t s1;
    int32_t s2;
    int32_t s3;
    int32_t n = (int32_t)(uintptr_t)wa;
    int32_t wl;
    int32_t wh;
    int32_t u = rows;
    int32_t t = (int32_t)(uintptr_t)s;
    __asm__ volatile(
        TH_ROWS_ENTER
        /* below sp: [sp] the row's end in w, [sp, #4] its widened bytes, then words, adj,
         * rows, s (TH_ROWS_ENTER's, 8 bytes higher) */
        "lsl %[u], %[n], #3\n\t"
        "str %[u], [sp, #-4]!\n\t"
        "sub sp, sp, #4\n\t"
        "sub %[n], %[n], #1\n\t"
        "and %[n], %[n], #7\n\t"
        "rsb %[n], %[n], #7\n\t"
        "4:\n\t"
        "ldr %[u], [sp, #4]\n\t"
        "add %[u], %[u], %[w]\n\t"
        "str %[u], [sp]\n\t"
        "tbh [pc, %[n], lsl #1]\n\t"
        "5:\n\t"
        ".hword (10f - 5b) / 2, (11f - 5b) / 2, (12f - 5b) / 2, (13f - 5b) / 2\n\t"
        ".hword (14f - 5b) / 2, (15f - 5b) / 2, (16f - 5b) / 2, (17f - 5b) / 2\n\t"
        "10:\n\t" TH_QUAD_WIDE_WORD
        "11:\n\t" TH_QUAD_WIDE_WORD
        "12:\n\t" TH_QUAD_WIDE_WORD
        "13:\n\t" TH_QUAD_WIDE_WORD
        "14:\n\t" TH_QUAD_WIDE_WORD
        "15:\n\t" TH_QUAD_WIDE_WORD
        "16:\n\t" TH_QUAD_WIDE_WORD
        "17:\n\t" TH_QUAD_WIDE_WORD
        "ldr %[u], [sp]\n\t"
        "cmp %[w], %[u]\n\t"
        "bne 10b\n\t"
        "ldr %[u], [sp, #12]\n\t"
        "add %[x], %[x], %[u]\n\t"
        "ldr %[t], [sp, #16]\n\t"
        "subs %[t], %[t], #1\n\t"
        "str %[t], [sp, #16]\n\t"
        "bne 4b\n\t"
        "ldr %[t], [sp, #20]\n\t"
        "add sp, sp, #24\n\t"
        "strd %[s0], %[s1], [%[t]]\n\t"
        "strd %[s2], %[s3], [%[t], #8]\n\t"
        : [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [x] "+r"(x),
          [w] "+r"(w), [n] "+r"(n), [wl] "=&r"(wl), [wh] "=&r"(wh), [u] "+r"(u),
          [t] "+r"(t)
        : [dx] "r"(dx), [dx3] "r"(3 * dx), [off] "r"(offset2)
        : "cc", "memory");
}
#undef TH_QUAD_WIDE_WORD
/* ---- Row runs (path CONV_DIRECT_ROW_RUN; Cout 1, widened rows of 1-8 words) ---------------
 * A run of quads along an output row in one asm call, the input offset folded in the bias:
 * every tap a quad reads is inside the input or a patch byte of -input_offset, so
 * sum((x + o) w) = sum(x w) + o sum(w) over the filter rows inside (modulo 2^32 as the
 * products' sum itself), and the loop widens the input by SXTB16 without an offset register:
 * the row count then stays in a register (5 instructions a filter row against
 * quad_rows_wide's 7), and the quads follow each other without a call, the per-quad set-up
 * and the sums' stores 16 instructions (one_quads' call per quad: ~45). */
typedef struct {
    int32_t adj;  /* row_step - 4 words: from a filter row's last word to the next row */
    int32_t rows; /* filter rows inside (> 0) */
    const int32_t *w; /* the widened rows from the first inside */
    int32_t bias; /* the bias with the offset's part of those rows folded in */
    int32_t back; /* 4 dx - rows row_step: from a quad's rows' end to the next quad */
    int32_t dx;
    int32_t entry; /* 8 - words: the TBH's entry into the eight unrolled words */
} run_args;
#define TH_RUN_PIXEL(S, ADDR)                                                                 \
    "ldr %[u], " ADDR "\n\t"                                                                  \
    "sxtb16 %[t], %[u]\n\t"                                                                    \
    "smlad %[" S "], %[t], %[wl], %[" S "]\n\t"                                                \
    "sxtb16 %[u], %[u], ror #8\n\t"                                                            \
    "smlad %[" S "], %[u], %[wh], %[" S "]\n\t"
#define TH_RUN_WORD                                                                           \
    "ldrd %[wl], %[wh], [%[w]], #8\n\t"                                                        \
    TH_RUN_PIXEL("s1", "[%[x], %[dx]]")                                                       \
    TH_RUN_PIXEL("s2", "[%[x], %[dx], lsl #1]")                                               \
    TH_RUN_PIXEL("s3", "[%[x], %[dx3]]")                                                      \
    TH_RUN_PIXEL("s0", "[%[x]], #4")
/* quads (> 0) quads from x (each 4 dx input bytes after the previous), their four sums each
 * to sums in order. All 14 registers are the asm's; a's fields, the sums' pointer and the
 * quads left are kept in 32 bytes below sp (not in the .su frame, as quad_rows_whole's). */
static void __attribute__((noinline))
quad_run_wide(const int8_t *x, const run_args *a, int32_t quads, int32_t *sums)
{
    int32_t s0;
    int32_t s1;
    int32_t s2;
    int32_t s3;
    int32_t w;
    int32_t n;
    int32_t cnt;
    int32_t dx;
    int32_t dx3;
    int32_t wh;
    int32_t wl = (int32_t)(uintptr_t)sums;
    int32_t u = quads;
    int32_t t = (int32_t)(uintptr_t)a;
    __asm__ volatile(
        "sub sp, sp, #32\n\t"
        "ldrd %[s0], %[s1], [%[t]]\n\t"     /* adj, rows */
        "strd %[s0], %[s1], [sp]\n\t"
        "ldrd %[s0], %[s1], [%[t], #8]\n\t" /* w, bias */
        "strd %[s0], %[s1], [sp, #8]\n\t"
        "ldr %[s0], [%[t], #16]\n\t"        /* back */
        "str %[s0], [sp, #16]\n\t"
        "strd %[wl], %[u], [sp, #20]\n\t"   /* sums, quads */
        "ldrd %[dx], %[n], [%[t], #20]\n\t" /* dx, entry */
        "add %[dx3], %[dx], %[dx], lsl #1\n\t"
        "6:\n\t"
        "ldr %[s0], [sp, #12]\n\t"
        "mov %[s1], %[s0]\n\t"
        "mov %[s2], %[s0]\n\t"
        "mov %[s3], %[s0]\n\t"
        "ldr %[w], [sp, #8]\n\t"
        "ldr %[cnt], [sp, #4]\n\t"
        "4:\n\t"
        "tbh [pc, %[n], lsl #1]\n\t"
        "5:\n\t"
        ".hword (10f - 5b) / 2, (11f - 5b) / 2, (12f - 5b) / 2, (13f - 5b) / 2\n\t"
        ".hword (14f - 5b) / 2, (15f - 5b) / 2, (16f - 5b) / 2, (17f - 5b) / 2\n\t"
        "10:\n\t" TH_RUN_WORD
        "11:\n\t" TH_RUN_WORD
        "12:\n\t" TH_RUN_WORD
        "13:\n\t" TH_RUN_WORD
        "14:\n\t" TH_RUN_WORD
        "15:\n\t" TH_RUN_WORD
        "16:\n\t" TH_RUN_WORD
        "17:\n\t" TH_RUN_WORD
        "ldr %[u], [sp]\n\t"
        "add %[x], %[x], %[u]\n\t"
        "subs %[cnt], %[cnt], #1\n\t"
        "bne 4b\n\t"
        "ldr %[t], [sp, #20]\n\t"
        "strd %[s0], %[s1], [%[t]], #8\n\t"
        "strd %[s2], %[s3], [%[t]], #8\n\t"
        "str %[t], [sp, #20]\n\t"
        "ldr %[u], [sp, #16]\n\t"
        "add %[x], %[x], %[u]\n\t"
        "ldr %[u], [sp, #24]\n\t"
        "subs %[u], %[u], #1\n\t"
        "str %[u], [sp, #24]\n\t"
        "bne 6b\n\t"
        "add sp, sp, #32\n\t"
        : [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [x] "+r"(x),
          [w] "=&r"(w), [n] "=&r"(n), [cnt] "=&r"(cnt), [dx] "=&r"(dx), [dx3] "=&r"(dx3),
          [wl] "+r"(wl), [wh] "=&r"(wh), [u] "+r"(u), [t] "+r"(t)
        :
        : "cc", "memory");
}
#undef TH_RUN_WORD
#undef TH_RUN_PIXEL

/* Quads per row buffer: their sums on the stack (128 bytes). */
#define RUN_CHUNK 8

/* The outputs of n pixels from their sums. */
static int8_t *__attribute__((noinline))
run_out(const int32_t *sums, int32_t n, const direct_rq *rq, const th_nn_out_stage *stage,
        int8_t *out)
{
    int8_t *const end = out + n;
    if (!stage->clamp && rq->fast) {
        const th_fast_rq f = rq->rq;
        int8_t *const end4 = out + (n & ~3); /* four a pass: 7 instructions an output, not 9 */
        for (; out != end4; out += 4, sums += 4) {
            out[0] = (int8_t)th_fast_rq_apply(sums[0], &f);
            out[1] = (int8_t)th_fast_rq_apply(sums[1], &f);
            out[2] = (int8_t)th_fast_rq_apply(sums[2], &f);
            out[3] = (int8_t)th_fast_rq_apply(sums[3], &f);
        }
        for (; out != end; out++, sums++) {
            *out = (int8_t)th_fast_rq_apply(*sums, &f);
        }
        return end;
    }
    for (; out != end; out++, sums++) {
        *out = direct_out(*sums, rq, stage);
    }
    return end;
}


/* The row runs' filter rows: at most this many (their weight sums' prefix on the stack). */
#define RUN_MAX_KH 16

/* The widened rows of direct_geo.wide (as widen_rows: kh rows of `words` plain words at
 * plain), and prefix[r] = the sum of rows [0, r)'s weights (r <= kh), modulo 2^32: the
 * offset's part of a run's bias is o (prefix[ky_lo + rows] - prefix[ky_lo]). */
static void __attribute__((noinline))
widen_sums(const int32_t *plain, int32_t kh, int32_t words, int32_t *wd, int32_t *prefix)
{
    int32_t sum = 0;
    prefix[0] = 0;
    for (int32_t r = 1; r <= kh; r++) {
        for (int32_t j = 0; j < words; j++, wd += 2) {
            const int32_t v = *plain++;
            const int32_t lo = th_sxtb16(v);
            const int32_t hi = th_sxtb16_ror8(v);
            wd[0] = lo;
            wd[1] = hi;
            sum = th_smlad(lo, 0x00010001, th_smlad(hi, 0x00010001, sum));
        }
        prefix[r] = sum;
    }
}

/* The run bias of filter rows [ky_lo, ky_lo + rows). */
TH_INLINE int32_t run_bias(const direct_geo *g, int32_t bias, int32_t ky_lo, int32_t rows)
{
    const uint32_t sum = (uint32_t)g->wsum[ky_lo + rows] - (uint32_t)g->wsum[ky_lo];
    return th_add_wrap(bias, (int32_t)((uint32_t)g->offset * sum));
}
#undef TH_QUAD_WORDS
#undef TH_QUAD_PIXEL
#endif

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* The widened rows of direct_geo.wide: each of `words` plain words as its two halves. */
TH_INLINE void widen_rows(const int32_t *plain, int32_t words, int32_t *wd)
{
    for (int32_t j = 0; j < words; j++, wd += 2) {
        const int32_t v = plain[j];
        wd[0] = th_sxtb16(v);
        wd[1] = th_sxtb16_ror8(v);
    }
}
#endif

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* The widened rows of a Cout 1 call without the edge patches (th_nn_conv_direct_s8), or NULL:
 * after its plain rows (w_row bytes each, whole words, at most TH_NN_DIRECT_EDGE_MAX_RUN) in
 * ctx's scratch; span: the output columns from the first interior one to interior_end. (Out
 * of line: the kernel's own code as before.) */
static const int32_t *__attribute__((noinline))
rows_wide(const th_context *ctx, const th_conv_params *params, const th_dims *input_dims,
          const th_dims *filter_dims, const th_dims *output_dims, const int32_t *plain,
          int32_t w_row, int32_t span)
{
    const int32_t kh = filter_dims->h;
    const int32_t quads = span >= 4 ? span / 4 : 0;
    if (params->dilation.w != 1 || ctx->size < 3 * kh * w_row ||
        input_dims->n * output_dims->h * quads * TH_MIN(kh, input_dims->h) < 3 * kh) {
        return NULL;
    }
    int32_t *wd = (int32_t *)(void *)((int8_t *)ctx->buf + kh * w_row);
    widen_rows(plain, kh * w_row / 4, wd);
    return wd;
}
#endif

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
#define DIRECT_ROWS_WHOLE quad_rows_whole /* direct_geo.rows_fn without wide */
#else
#define DIRECT_ROWS_WHOLE NULL
#endif

/* Four pixels' sums of one channel into s[0..3] (from their values): `rows` filter rows of
 * q's quad from input x (the first pixel's first byte) and weights w. */
TH_INLINE void quad_channel(const int8_t *x, const int8_t *w, int32_t rows, const quad_geo *q,
                            int32_t *s)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    if (q->mask == 0 && q->w_step == 4 * q->words && q->words > 0 && rows > 0) {
        quad_rows_whole(x, q->dx, w, &q->words, rows, q->offset2, s);
        return;
    }
    quad_rows(x, q->dx, w, q->words, q->mask, q->w_step, rows, q->row_step, q->offset2, s);
#else
    for (int32_t r = 0; r < rows; r++, x += q->row_step, w += q->w_step) {
        const int8_t *xw = x;
        const int8_t *ww = w;
        const int8_t *w_end = w + 4 * q->words;
        for (; ww != w_end; ww += 4, xw += 4) {
            quad_word(xw, q->dx, th_read_s32(ww), q->offset2, &s[0], &s[1], &s[2], &s[3]);
        }
        if (q->mask != 0) {
            quad_word(xw, q->dx, th_read_s32(ww) & q->mask, q->offset2, &s[0], &s[1], &s[2],
                      &s[3]);
        }
    }
#endif
}

/* Every channel's sums of a quad into acc[4 c + p] from the bias: channel c's weights from
 * w + c * kp. */
TH_INLINE void quad_all(const int8_t *x, const int8_t *w, int32_t kp, int32_t rows,
                        const quad_geo *q, const direct_rq *rq, int32_t cout, int32_t *acc)
{
    for (int32_t c = 0; c < cout; c++, w += kp, acc += 4) {
        acc[0] = rq[c].bias;
        acc[1] = acc[0];
        acc[2] = acc[0];
        acc[3] = acc[0];
        quad_channel(x, w, rows, q, acc);
    }
}

/* ---- Channel pairs (Cout 2): the input widened once for both channels -------------------
 * Two pixels x two channels per word: the interleaved filter's word pair (LDRD), its four
 * halves (4 SXTB16) shared by both pixels, each pixel's word widened once (LDR, 2 SXTB16) for
 * both channels: 16 MACs in 21 instructions against the quads' 25, the registers freed by
 * leaving the input offset out of the loop: every tap of an interior quad is inside, so the
 * offset's part of a sum, offset * (the used weights' sum), is one constant per channel and
 * filter row span (added to the bias, modulo 2^32 as the products' sum itself). */

/* s[0..3] += pixels x and x + dx against channels 0 and 1 (s: p0c0, p0c1, p1c0, p1c1) over
 * `rows` rows of `words` (> 0) words, wa = {words, row_step - 4 words}, the pairs' rows
 * following each other at w (8 bytes per word). */
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* All 14 registers as in quad_rows_whole (words, adj, the row count and s below sp). */
static void __attribute__((noinline))
pair_rows(const int8_t *x, int32_t dx, const int8_t *w, const int32_t *wa, int32_t rows,
          int32_t *s)
{
    int32_t s0, s1, s2, s3, a, b, c, d; /* (the sums, the weights' halves) */
    int32_t n = (int32_t)(uintptr_t)wa;
    int32_t u = rows;
    int32_t t = (int32_t)(uintptr_t)s;
    __asm__ volatile(
        TH_ROWS_ENTER
        "1:\n\t"
        "ldrd %[a], %[b], [%[w]], #8\n\t"
        "sxtb16 %[c], %[a]\n\t"
        "sxtb16 %[a], %[a], ror #8\n\t"
        "sxtb16 %[d], %[b]\n\t"
        "sxtb16 %[b], %[b], ror #8\n\t"
        "ldr %[u], [%[x], %[dx]]\n\t"
        "sxtb16 %[t], %[u]\n\t"
        "smlad %[s2], %[t], %[c], %[s2]\n\t"
        "smlad %[s3], %[t], %[d], %[s3]\n\t"
        "sxtb16 %[u], %[u], ror #8\n\t"
        "smlad %[s2], %[u], %[a], %[s2]\n\t"
        "smlad %[s3], %[u], %[b], %[s3]\n\t"
        "ldr %[u], [%[x]], #4\n\t"
        "sxtb16 %[t], %[u]\n\t"
        "smlad %[s0], %[t], %[c], %[s0]\n\t"
        "smlad %[s1], %[t], %[d], %[s1]\n\t"
        "sxtb16 %[u], %[u], ror #8\n\t"
        "smlad %[s0], %[u], %[a], %[s0]\n\t"
        "smlad %[s1], %[u], %[b], %[s1]\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 1b\n\t"
        TH_ROWS_LEAVE
        : [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [x] "+r"(x),
          [w] "+r"(w), [n] "+r"(n), [a] "=&r"(a), [b] "=&r"(b), [c] "=&r"(c), [d] "=&r"(d),
          [u] "+r"(u), [t] "+r"(t)
        : [dx] "r"(dx)
        : "cc", "memory");
}
#undef TH_ROWS_ENTER
#undef TH_ROWS_LEAVE
#else
TH_INLINE void pair_rows(const int8_t *x, int32_t dx, const int8_t *w, const int32_t *wa,
                         int32_t rows, int32_t *s)
{
    for (int32_t r = 0; r < rows; r++, x += wa[1]) {
        for (int32_t j = 0; j < wa[0]; j++, w += 8, x += 4) {
            const int32_t w0 = th_read_s32(w);
            const int32_t w1 = th_read_s32(w + 4);
            const int32_t u = th_read_s32(x);
            const int32_t v = th_read_s32(x + dx);
            s[0] = th_smlad(th_sxtb16(u), th_sxtb16(w0), s[0]);
            s[0] = th_smlad(th_sxtb16_ror8(u), th_sxtb16_ror8(w0), s[0]);
            s[1] = th_smlad(th_sxtb16(u), th_sxtb16(w1), s[1]);
            s[1] = th_smlad(th_sxtb16_ror8(u), th_sxtb16_ror8(w1), s[1]);
            s[2] = th_smlad(th_sxtb16(v), th_sxtb16(w0), s[2]);
            s[2] = th_smlad(th_sxtb16_ror8(v), th_sxtb16_ror8(w0), s[2]);
            s[3] = th_smlad(th_sxtb16(v), th_sxtb16(w1), s[3]);
            s[3] = th_smlad(th_sxtb16_ror8(v), th_sxtb16_ror8(w1), s[3]);
        }
    }
}
#endif

/* interior_quads for Cout 2 from g->pairs: each quad as two pixel pairs, both accumulated
 * before any output is written (the quads' order). */
static void __attribute__((noinline))
pair_quads(const direct_geo *g, const direct_rq *rq, const th_nn_out_stage *stage,
           const int8_t *xa, int32_t dx, int32_t row_step, int32_t rows, int32_t ky_lo,
           int32_t quads, int8_t *out)
{
    const int32_t words = g->w_row / 4;
    const int8_t *w = g->pairs + 2 * ky_lo * g->w_row;
    /* The offset's part: the used rows' weight sums, two channels per SMLAD pair. */
    int32_t sum0 = 0;
    int32_t sum1 = 0;
    const int32_t ones = 0x00010001;
    for (int32_t j = 0; j < rows * words; j++) {
        const int32_t w0 = th_read_s32(w + 8 * j);
        const int32_t w1 = th_read_s32(w + 8 * j + 4);
        sum0 = th_smlad(th_sxtb16(w0), ones, th_smlad(th_sxtb16_ror8(w0), ones, sum0));
        sum1 = th_smlad(th_sxtb16(w1), ones, th_smlad(th_sxtb16_ror8(w1), ones, sum1));
    }
    const int32_t b0 = th_add_wrap(rq[0].bias, (int32_t)((uint32_t)g->offset * (uint32_t)sum0));
    const int32_t b1 = th_add_wrap(rq[1].bias, (int32_t)((uint32_t)g->offset * (uint32_t)sum1));
    const int32_t wa[2] = {words, row_step - 4 * words};
    const int plain = !stage->clamp && rq[0].fast && rq[1].fast;
    for (int32_t q = 0; q < quads; q++, xa += 4 * dx, out += 8) {
        int32_t s[8] = {b0, b1, b0, b1, b0, b1, b0, b1};
        pair_rows(xa, dx, w, wa, rows, s);
        pair_rows(xa + 2 * dx, dx, w, wa, rows, s + 4);
        if (plain) {
            const th_fast_rq f0 = rq[0].rq;
            const th_fast_rq f1 = rq[1].rq;
            for (int32_t i = 0; i < 8; i += 2) {
                out[i] = (int8_t)th_fast_rq_apply(s[i], &f0);
                out[i + 1] = (int8_t)th_fast_rq_apply(s[i + 1], &f1);
            }
        } else {
            for (int32_t i = 0; i < 8; i++) {
                out[i] = direct_out(s[i], &rq[i & 1], stage);
            }
        }
    }
}

/* The output columns [.., end) whose windows end inside the input (dilation.w 1). */
TH_INLINE int32_t interior_end(const th_conv_params *params, const th_dims *input_dims,
                               const th_dims *filter_dims, const th_dims *output_dims)
{
    const int32_t last_x = input_dims->w - filter_dims->w + params->padding.w;
    return last_x < 0 ? 0 : TH_MIN(output_dims->w, last_x / params->stride.w + 1);
}

/* Interior quads that fit from xa: of at most `quads`, as many as keep the last quad's masked
 * words (round_up4(run) bytes from each filter row's start) inside the input. */
TH_INLINE int32_t fit_quads(const direct_geo *g, const int8_t *xa, int32_t dx,
                            int32_t row_step, int32_t rows, int32_t quads)
{
    const int32_t last = (rows - 1) * row_step + th_round_up4(g->kw * g->cin);
    while (quads > 0 && xa + (4 * quads - 1) * dx + last > g->x_end) {
        quads--;
    }
    return quads;
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* interior_quads for Cout 1 with whole-word filter rows (padded or multiples of 4 bytes):
 * straight to quad_rows_whole per quad and the four outputs, without the channel loop, the
 * quad_geo and the per-quad whole-rows test of quad_all (7x55x5 k4x3 s2: ~120 -> ~50
 * instructions a quad besides its MACs). */
static void __attribute__((noinline))
one_quads(const direct_geo *g, const direct_rq *rq, const th_nn_out_stage *stage,
          const int8_t *xa, int32_t dx, int32_t row_step, int32_t rows, int32_t ky_lo,
          int32_t quads, int8_t *out)
{
    const int32_t wa[2] = {g->w_row / 4, row_step - g->w_row};
    /* the widened rows where the call has them (quad_rows_wide), else the int8 rows */
    void (*const quad_rows_fn)(const int8_t *, int32_t, const int8_t *, const int32_t *,
                               int32_t, int32_t, int32_t *) = g->rows_fn;
    const int8_t *w = g->wide != NULL ? (const int8_t *)(g->wide + 2 * (ky_lo * g->w_row / 4))
                                      : g->w + ky_lo * g->w_row;
    const int32_t offset2 = g->offset2;
    const int32_t bias = rq[0].bias;
    const th_fast_rq f = rq[0].rq;
    const int8_t *const end = out + 4 * quads;
    if (!stage->clamp && rq[0].fast) {
        for (; out != end; out += 4, xa += 4 * dx) {
            int32_t s[4] = {bias, bias, bias, bias};
            quad_rows_fn(xa, dx, w, wa, rows, offset2, s);
            out[0] = (int8_t)th_fast_rq_apply(s[0], &f);
            out[1] = (int8_t)th_fast_rq_apply(s[1], &f);
            out[2] = (int8_t)th_fast_rq_apply(s[2], &f);
            out[3] = (int8_t)th_fast_rq_apply(s[3], &f);
        }
        return;
    }
    for (; out != end; out += 4, xa += 4 * dx) {
        int32_t s[4] = {bias, bias, bias, bias};
        quad_rows_fn(xa, dx, w, wa, rows, offset2, s);
        for (int32_t p = 0; p < 4; p++) {
            out[p] = direct_out(s[p], rq, stage);
        }
    }
}
#endif

/* Interior pixels of one output row, dilation.w 1, four at a time: every tap column inside,
 * one run of kw * Cin bytes per filter row inside, its partial last word masked, or with
 * padded rows a whole word against zero weights (the input bytes it reads past the run
 * exist: the caller checked the last quad). quads groups from xa (the first pixel's first
 * run), outputs from out. */
static void __attribute__((noinline))
interior_quads(const direct_geo *g, const direct_rq *rq, const th_nn_out_stage *stage,
               int32_t cout, const int8_t *xa, int32_t dx, int32_t row_step, int32_t rows,
               int32_t ky_lo, int32_t quads, int8_t *out)
{
    if (cout == 2 && g->pairs != NULL && rows > 0 && TH_NN_PATH(CONV_DIRECT_PAIRS)) {
        pair_quads(g, rq, stage, xa, dx, row_step, rows, ky_lo, quads, out);
        return;
    }
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    if (cout == 1 && (g->w_row & 3) == 0 && g->w_row > 0 && rows > 0) {
        one_quads(g, rq, stage, xa, dx, row_step, rows, ky_lo, quads, out);
        return;
    }
#endif
    const quad_geo qg = quad_geo_make(dx, g->w_row, g->w_row, row_step, g->offset2);
    const int8_t *w = g->w + ky_lo * g->w_row;
    int plain = !stage->clamp; /* every channel fast, no clamp: the lean output loop */
    for (int32_t c = 0; c < cout; c++) {
        plain = plain && rq[c].fast;
    }
    for (int32_t q = 0; q < quads; q++, xa += 4 * dx) {
        int32_t acc[4 * TH_NN_DIRECT_MAX_COUT];
        quad_all(xa, w, g->w_ch, rows, &qg, rq, cout, acc);
        if (plain) { /* fast requantization for every channel, no clamp */
            for (int32_t c = 0; c < cout; c++) {
                const th_fast_rq f = rq[c].rq;
                out[c] = (int8_t)th_fast_rq_apply(acc[4 * c], &f);
                out[cout + c] = (int8_t)th_fast_rq_apply(acc[4 * c + 1], &f);
                out[2 * cout + c] = (int8_t)th_fast_rq_apply(acc[4 * c + 2], &f);
                out[3 * cout + c] = (int8_t)th_fast_rq_apply(acc[4 * c + 3], &f);
            }
            out += 4 * cout;
            continue;
        }
        for (int32_t p = 0; p < 4; p++, out += cout) {
            for (int32_t c = 0; c < cout; c++) {
                out[c] = direct_out(acc[4 * c + p], &rq[c], stage);
            }
        }
    }
}


/* ---- Columns (fast scratch): any group of up to four pixels --------------------------------
 * Pixels whose windows are not all inside (borders), with dilation.w > 1, or past the last
 * interior quad are staged as int8 columns of kp bytes (the window's taps in filter order,
 * taps outside the input and the bytes [K, kp) as -input_offset, which the offset turns
 * into 0), four columns kp bytes apart, then take quad_rows' loop over one "row" of kp
 * bytes: the same 16 MACs per 25 instructions as the interior, the staging shared by the
 * channels. */

#if defined(__GNUC__) && !defined(__clang__)
#define TH_NO_MEMCPY_CALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define TH_NO_MEMCPY_CALLS
#endif

/* n bytes from s (n >= 0), words while it can; n bytes of pad4's byte. */
TH_INLINE void col_copy(int8_t *d, const int8_t *s, int32_t n)
{
    for (; n >= 4; n -= 4, d += 4, s += 4) {
        th_write_s32(d, th_read_s32(s));
    }
    for (; n > 0; n--) {
        *d++ = *s++;
    }
}

TH_INLINE void col_fill(int8_t *d, int32_t pad4, int32_t n)
{
    for (; n >= 4; n -= 4, d += 4) {
        th_write_s32(d, pad4);
    }
    for (; n > 0; n--) {
        *d++ = (int8_t)pad4;
    }
}

/* What the columns need of a call. */
typedef struct {
    const int8_t *in_b; /* the batch's input */
    int32_t in_h;
    int32_t in_w;
    int32_t kh;
    int32_t dil_h;
    int32_t row_bytes;
    int32_t k_total;
    int32_t pad4; /* -input_offset in every byte */
} col_geo;

/* The column of the window at input (y0, x0) into col (kp bytes). */
static void TH_NO_MEMCPY_CALLS stage_column(const direct_geo *g, const col_geo *cg, int32_t y0,
                                            int32_t x0, int8_t *col)
{
    const int32_t cin = g->cin;
    const int32_t kw = g->kw;
    const int32_t row_len = kw * cin;
    int32_t ky_lo;
    int32_t ky_hi;
    int32_t kx_lo;
    int32_t kx_hi;
    inside_taps(y0, cg->dil_h, cg->kh, cg->in_h, &ky_lo, &ky_hi);
    inside_taps(x0, g->dil_w, kw, cg->in_w, &kx_lo, &kx_hi);
    if (kx_lo >= kx_hi) {
        ky_hi = ky_lo; /* no tap column inside: all padding */
    }
    int8_t *d = col;
    col_fill(d, cg->pad4, ky_lo * row_len);
    d += ky_lo * row_len;
    const int8_t *row = ky_lo < ky_hi ? cg->in_b + (y0 + ky_lo * cg->dil_h) * cg->row_bytes +
                                            (x0 + kx_lo * g->dil_w) * cin
                                      : cg->in_b;
    const int32_t head = kx_lo * cin;
    const int32_t tail = (kw - kx_hi) * cin;
    for (int32_t ky = ky_lo; ky < ky_hi; ky++, row += cg->dil_h * cg->row_bytes) {
        col_fill(d, cg->pad4, head);
        d += head;
        if (g->dil_w == 1) {
            col_copy(d, row, (kx_hi - kx_lo) * cin);
            d += (kx_hi - kx_lo) * cin;
        } else {
            const int8_t *x = row;
            for (int32_t kx = kx_lo; kx < kx_hi; kx++, x += g->dil_w * cin, d += cin) {
                col_copy(d, x, cin);
            }
        }
        col_fill(d, cg->pad4, tail);
        d += tail;
    }
    col_fill(d, cg->pad4, (cg->kh - ky_hi) * row_len + g->kp - cg->k_total);
}

/* n (1-4) pixels from their staged columns (cols, kp bytes apart; columns n.. hold earlier
 * values, their sums unused): all channels, then the n pixels' outputs. */
static void column_quad(const direct_geo *g, const direct_rq *rq, const th_nn_out_stage *stage,
                        int32_t cout, const int8_t *cols, int32_t n, int8_t *out)
{
    const int32_t kp = g->kp;
    const quad_geo qg = quad_geo_make(kp, kp, kp, 0, g->offset2);
    int32_t acc[4 * TH_NN_DIRECT_MAX_COUT];
    quad_all(cols, g->w, kp, 1, &qg, rq, cout, acc);
    for (int32_t p = 0; p < n; p++, out += cout) {
        for (int32_t c = 0; c < cout; c++) {
            out[c] = direct_out(acc[4 * c + p], &rq[c], stage);
        }
    }
}

/* Every pixel from columns, four at a time in raster order (across rows and batches). */
static void __attribute__((noinline))
direct_columns(const direct_geo *g, const direct_rq *rq, const th_nn_out_stage *stage,
               const th_conv_params *params, const th_dims *input_dims,
               const th_dims *filter_dims, const th_dims *output_dims, const int8_t *input,
               int8_t *cols, int8_t *out)
{
    const int32_t cout = output_dims->c;
    const int32_t kp = g->kp;
    const int32_t pad4 = (int32_t)(0x01010101u * (uint8_t)(-params->input_offset));
    for (int32_t j = 0; j < 4 * kp; j += 4) { /* columns a partial group leaves unstaged */
        th_write_s32(cols + j, pad4);
    }
    const int32_t row_bytes = input_dims->w * g->cin;
    int32_t pending = 0;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const col_geo cg = {input + b * input_dims->h * row_bytes, input_dims->h, input_dims->w,
                            filter_dims->h, params->dilation.h, row_bytes,
                            filter_dims->h * filter_dims->w * g->cin, pad4};
        for (int32_t oy = 0; oy < output_dims->h; oy++) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            for (int32_t ox = 0; ox < output_dims->w; ox++) {
                stage_column(g, &cg, y0, ox * params->stride.w - params->padding.w,
                             cols + pending * kp);
                if (++pending == 4) {
                    column_quad(g, rq, stage, cout, cols, 4, out);
                    out += 4 * cout;
                    pending = 0;
                }
            }
        }
    }
    if (pending > 0) {
        column_quad(g, rq, stage, cout, cols, pending, out);
    }
}

/* ---- Rows and bands (no fast scratch) ------------------------------------------------------ */

/* What the rows of a call share. */
typedef struct {
    const direct_geo *g;
    const direct_rq *rq;
    const th_nn_out_stage *stage;
    const th_conv_params *params;
    const th_dims *in;
    const th_dims *filt;
    const th_dims *outd;
    int32_t cout;
    int32_t dx;        /* input bytes between horizontally adjacent windows */
    int32_t row_bytes; /* input bytes per row */
    int32_t row_step;  /* input bytes between filter rows */
    int32_t ox_end;    /* interior_end */
    int32_t bands;     /* direct_band may apply */
} direct_call;

/* The edge patches of a call (path CONV_DIRECT_EDGES). */
typedef struct {
    int8_t *patch;
    int32_t patch_row; /* its bytes per filter row: the columns of four windows */
    int32_t pad4;      /* -input_offset in every byte */
    int32_t qa;        /* the first output column whose window starts inside */
    int32_t cols;      /* patch_row / Cin (no division per patch) */
} edge_geo;

/* Every channel's sums of 1, 2 or 4 pixels `dx` input bytes apart with the same taps inside
 * (filter rows [ky_lo, ky_lo + rows), columns [kx_lo, kx_hi); xa the first pixel's first
 * tap inside) into acc[4 c + p], from the bias. Four pixels with dilation.w 1 take the quad
 * loop where their partial words stay inside the input. */
static void pixel_sums(const direct_call *k, const int8_t *xa, int32_t rows, int32_t ky_lo,
                       int32_t kx_lo, int32_t kx_hi, int32_t pixels, int32_t dx, int32_t *acc)
{
    const direct_geo *g = k->g;
    const int32_t run = (kx_hi - kx_lo) * g->cin;
    const int quad = pixels == 4 && g->dil_w == 1 && rows > 0 && run > 0 &&
                     xa + 3 * dx + (rows - 1) * k->row_step + th_round_up4(run) <= g->x_end;
    if (quad) {
        /* (whole rows: padded rows' zero weights take the partial word unmasked) */
        const int32_t qrun = run == g->kw * g->cin ? g->w_row : run;
        const quad_geo qg = quad_geo_make(dx, qrun, g->w_row, k->row_step, g->offset2);
        quad_all(xa, g->w + ky_lo * g->w_row + kx_lo * g->cin, g->w_ch, rows, &qg, k->rq,
                 k->cout, acc);
        return;
    }
    for (int32_t c = 0; c < k->cout; c++) {
        int32_t *s = &acc[4 * c];
        s[0] = k->rq[c].bias;
        s[1] = s[0];
        s[2] = s[0];
        s[3] = s[0];
        channel_sums(g, c, xa, k->row_step, rows, ky_lo, kx_lo, kx_hi, pixels, dx, s);
    }
}

/* The outputs of `pixels` pixels from acc[4 c + p] in raster order; the output past them.
 * (k's fields in locals: the int8 stores may alias them.) */
TH_INLINE int8_t *pixels_out(const direct_call *k, const int32_t *acc, int32_t pixels,
                             int8_t *out)
{
    const int32_t cout = k->cout;
    const direct_rq *rq = k->rq;
    const th_nn_out_stage *stage = k->stage;
    for (int32_t p = 0; p < pixels; p++, out += cout) {
        for (int32_t c = 0; c < cout; c++) {
            out[c] = direct_out(acc[4 * c + p], &rq[c], stage);
        }
    }
    return out;
}

/* The filter rows [*ky_lo, *ky_hi) inside for the windows of input row y0; the input row of
 * the first (in_b where none is inside). */
TH_INLINE const int8_t *row_taps(const direct_call *k, const int8_t *in_b, int32_t y0,
                                 int32_t *ky_lo, int32_t *ky_hi)
{
    const int32_t dil_h = k->params->dilation.h;
    inside_taps(y0, dil_h, k->filt->h, k->in->h, ky_lo, ky_hi);
    return *ky_lo < *ky_hi ? in_b + (y0 + *ky_lo * dil_h) * k->row_bytes : in_b;
}

/* The tap columns [*kx_lo, *kx_hi) inside of the window at input column x0, its rows inside
 * (*rows: rows_in, 0 where no column is inside) and its first tap inside from row0 (in_b
 * where it has none: nothing is read). */
TH_INLINE const int8_t *window_at(const direct_call *k, const int8_t *in_b, const int8_t *row0,
                                  int32_t rows_in, int32_t x0, int32_t *rows, int32_t *kx_lo,
                                  int32_t *kx_hi)
{
    const int32_t dil_w = k->params->dilation.w;
    inside_taps(x0, dil_w, k->filt->w, k->in->w, kx_lo, kx_hi);
    *rows = *kx_lo < *kx_hi ? rows_in : 0;
    return *rows > 0 ? row0 + (x0 + *kx_lo * dil_w) * k->g->cin : in_b;
}

/* Pixels [ox, ox + n) (n 1-4, Cout 1, dilation.w 1) from k->patch: its `rows` rows (filter
 * rows from ky_lo; input rows from row0, row_step apart) hold the input columns of four
 * windows from x0, those outside the input as -input_offset (0 after the offset, as TFLM's
 * padding), so the four take the interior's quad loop whatever their taps inside; pixels
 * past n are computed from whatever columns follow, their sums unused. Each patch row is
 * whole words: the padding before the input columns, the input columns (rounded up where the
 * input has the bytes), the padding after (rounded up), each over the last's overshoot; the
 * last row's words may reach the scratch's last word. (The quad's last word of a row reads up
 * to 3 bytes past its window: the next row or that word, against zero weights.) */
TH_INLINE void TH_NO_MEMCPY_CALLS
edge_patch(const direct_call *k, const edge_geo *e, const int8_t *row0, int32_t rows,
           int32_t x0)
{
    const direct_geo *g = k->g;
    const int32_t cin = g->cin;
    const int32_t pr = e->patch_row;
    const int32_t lo = TH_MAX(x0, 0);
    const int32_t hi = TH_MIN(x0 + e->cols, k->in->w);
    const int32_t head = hi > lo ? (lo - x0) * cin : pr;
    const int32_t mid = hi > lo ? (hi - lo) * cin : 0;
    const int8_t *src = row0 + lo * cin;
    /* The input's whole words of a row, and its last bytes one by one where the last row's
     * rounded-up word would pass the input's end. */
    const int whole = src + (rows - 1) * k->row_step + th_round_up4(mid) <= g->x_end;
    const int32_t mid_words = whole ? (mid + 3) / 4 : mid / 4;
    const int32_t pad4 = e->pad4;
    const int32_t head_words = (head + 3) / 4;
    const int32_t tail_words = (pr - head - mid + 3) / 4;
    int8_t *d = e->patch;
    for (int32_t r = 0; r < rows; r++, src += k->row_step, d += pr) {
        for (int32_t j = 0; j < head_words; j++) {
            th_write_s32(d + 4 * j, pad4);
        }
        int8_t *m = d + head;
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
        if (mid_words > 0) {
            /* two words a pass, an odd count's first alone: 3 instructions a word, not 4 */
            int8_t *md = m;
            const int8_t *ms = src;
            int32_t n = mid_words;
            int32_t a;
            int32_t b;
            __asm__ volatile("lsrs %[n], %[n], #1\n\t"
                             "bcc 1f\n\t"
                             "ldr %[a], [%[s]], #4\n\t"
                             "str %[a], [%[d]], #4\n\t"
                             "1:\n\t"
                             "beq 3f\n\t"
                             "2:\n\t"
                             "ldr %[a], [%[s]], #4\n\t"
                             "ldr %[b], [%[s]], #4\n\t"
                             "str %[a], [%[d]], #4\n\t"
                             "str %[b], [%[d]], #4\n\t"
                             "subs %[n], %[n], #1\n\t"
                             "bne 2b\n\t"
                             "3:\n\t"
                             : [n] "+r"(n), [d] "+r"(md), [s] "+r"(ms), [a] "=&r"(a),
                               [b] "=&r"(b)
                             :
                             : "cc", "memory");
        }
#else
        for (int32_t j = 0; j < mid_words; j++) {
            th_write_s32(m + 4 * j, th_read_s32(src + 4 * j));
        }
#endif
        for (int32_t j = 4 * mid_words; j < mid; j++) {
            m[j] = src[j];
        }
        for (int32_t j = 0; j < tail_words; j++) {
            th_write_s32(m + mid + 4 * j, pad4);
        }
    }
}

static int8_t *__attribute__((noinline))
edge_quad(const direct_call *k, const edge_geo *e, const int8_t *row0, int32_t rows,
          int32_t ky_lo, int32_t x0, int32_t n, int8_t *out)
{
    const direct_geo *g = k->g;
    edge_patch(k, e, row0, rows, x0);
    const int32_t pr = e->patch_row;
    int32_t acc[4];
    acc[0] = k->rq[0].bias;
    acc[1] = acc[0];
    acc[2] = acc[0];
    acc[3] = acc[0];
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    if (g->wide != NULL) {
        const int32_t wa[2] = {g->w_row / 4, pr - g->w_row};
        quad_rows_wide(e->patch, k->dx, (const int8_t *)(g->wide + 2 * (ky_lo * g->w_row / 4)),
                       wa, rows, g->offset2, acc);
    } else {
        const quad_geo qg = quad_geo_make(k->dx, g->w_row, g->w_row, pr, g->offset2);
        quad_channel(e->patch, g->w + ky_lo * g->w_row, rows, &qg, acc);
    }
#else
    const quad_geo qg = quad_geo_make(k->dx, g->w_row, g->w_row, pr, g->offset2);
    quad_channel(e->patch, g->w + ky_lo * g->w_row, rows, &qg, acc);
#endif
    /* (rq and stage in locals: the int8 stores may alias k's fields) */
    const direct_rq *rq = k->rq;
    const th_nn_out_stage *stage = k->stage;
    if (!stage->clamp && rq->fast) {
        const th_fast_rq f = rq->rq;
        for (int32_t p = 0; p < n; p++) {
            out[p] = (int8_t)th_fast_rq_apply(acc[p], &f);
        }
        return out + n;
    }
    for (int32_t p = 0; p < n; p++) {
        out[p] = direct_out(acc[p], rq, stage);
    }
    return out + n;
}

/* Output row oy of batch input in_b with the edge patches (k->patch; Cout 1, dilation.w 1):
 * the pixels before the first interior one four at a time from the patch, the interior quads,
 * the pixels after them four at a time from the patch (no taps to clip, no per-pixel
 * division). A row without a filter row inside is its bias. */
TH_INLINE int8_t *edge_row(const direct_call *k, const edge_geo *e, const int8_t *in_b,
                          int32_t oy, int8_t *out)
{
    const th_conv_params *params = k->params;
    const int32_t out_w = k->outd->w;
    const int32_t sw = params->stride.w;
    int32_t ky_lo;
    int32_t ky_hi;
    const int8_t *row0 = row_taps(k, in_b, oy * params->stride.h - params->padding.h, &ky_lo,
                                  &ky_hi);
    if (ky_lo >= ky_hi) {
        const int8_t v = direct_out(k->rq[0].bias, &k->rq[0], k->stage);
        for (int32_t ox = 0; ox < out_w; ox++) {
            out[ox] = v;
        }
        return out + out_w;
    }
    const int32_t rows = ky_hi - ky_lo;
    int32_t ox = 0;
    for (; ox < e->qa && ox < out_w; ox += 4) {
        out = edge_quad(k, e, row0, rows, ky_lo, ox * sw - params->padding.w,
                        TH_MIN(4, out_w - ox), out);
    }
    if (ox + 4 <= k->ox_end) {
        const int8_t *xa = row0 + (ox * sw - params->padding.w) * k->g->cin;
        const int32_t quads = fit_quads(k->g, xa, k->dx, k->row_step, rows, (k->ox_end - ox) / 4);
        if (quads > 0) {
            interior_quads(k->g, k->rq, k->stage, 1, xa, k->dx, k->row_step, rows, ky_lo, quads,
                           out);
            out += 4 * quads;
            ox += 4 * quads;
        }
    }
    for (; ox < out_w; ox += 4) {
        out = edge_quad(k, e, row0, rows, ky_lo, ox * sw - params->padding.w,
                        TH_MIN(4, out_w - ox), out);
    }
    return out;
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* A patch's geometry (run_patch) for the windows from input column x0. */
typedef struct {
    int32_t x0;   /* INT32_MIN: none yet */
    int32_t src;  /* the first input column's bytes from the row's start */
    int32_t last; /* the bytes a row's copy reads (its whole words) */
    int32_t some; /* some input column: the asm applies */
    int32_t mid;  /* the input columns' bytes */
    int32_t pg[7]; /* head words, pad4, head bytes, mid words, tail words, row step, patch row */
} patch_plan;

static void __attribute__((noinline))
patch_plan_make(const direct_call *k, const edge_geo *e, int32_t x0, patch_plan *p)
{
    const int32_t cin = k->g->cin;
    const int32_t lo = TH_MAX(x0, 0);
    const int32_t hi = TH_MIN(x0 + e->cols, k->in->w);
    const int32_t mid = hi > lo ? (hi - lo) * cin : 0;
    const int32_t head = (lo - x0) * cin;
    p->x0 = x0;
    p->src = lo * cin;
    p->last = th_round_up4(mid);
    p->some = hi > lo;
    p->mid = mid;
    p->pg[0] = (head + 3) / 4;
    p->pg[1] = e->pad4;
    p->pg[2] = head;
    p->pg[3] = (mid + 3) / 4;
    p->pg[4] = (e->patch_row - head - mid + 3) / 4;
    p->pg[5] = k->row_step;
    p->pg[6] = e->patch_row;
}

/* The patch of p's four windows (as edge_patch) for the input rows from row0 of one output
 * row: the padding words, the input's words (3 instructions a word), the padding after them;
 * edge_patch where the last row's words would pass the input or no column is inside. */
static void __attribute__((noinline))
run_patch(const direct_call *k, const edge_geo *e, const patch_plan *p, const int8_t *row0,
          int32_t rows)
{
    const int8_t *src = row0 + p->src;
    if (!p->some || src + (rows - 1) * k->row_step + p->last > k->g->x_end) {
        edge_patch(k, e, row0, rows, p->x0);
        return;
    }
    const int32_t *pg = p->pg;
    const int32_t mid = p->mid;
    int8_t *d = e->patch;
    int32_t a;
    int32_t b;
    int32_t n;
    int32_t m;
    int32_t t;
    __asm__ volatile(
        "1:\n\t"
        "ldrd %[n], %[b], [%[pg]]\n\t" /* head words, pad4 */
        "mov %[m], %[d]\n\t"
        "cmp %[n], #0\n\t"
        "beq 3f\n\t"
        "2:\n\t"
        "str %[b], [%[m]], #4\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 2b\n\t"
        "3:\n\t"
        "ldrd %[m], %[n], [%[pg], #8]\n\t" /* head bytes, mid words (> 0) */
        "add %[m], %[m], %[d]\n\t"
        "mov %[t], %[s]\n\t"
        "lsrs %[n], %[n], #1\n\t"
        "bcc 4f\n\t"
        "ldr %[a], [%[t]], #4\n\t"
        "str %[a], [%[m]], #4\n\t"
        "4:\n\t"
        "beq 6f\n\t"
        "5:\n\t"
        "ldr %[a], [%[t]], #4\n\t"
        "ldr %[b], [%[t]], #4\n\t"
        "str %[a], [%[m]], #4\n\t"
        "str %[b], [%[m]], #4\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 5b\n\t"
        "6:\n\t"
        "ldr %[n], [%[pg], #16]\n\t" /* tail words, from the input's end in the patch */
        "cmp %[n], #0\n\t"
        "beq 8f\n\t"
        "ldr %[a], [%[pg], #4]\n\t"
        "ldr %[b], [%[pg], #8]\n\t"
        "add %[b], %[b], %[d]\n\t"
        "add %[b], %[b], %[mid]\n\t"
        "7:\n\t"
        "str %[a], [%[b]], #4\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 7b\n\t"
        "8:\n\t"
        "ldrd %[a], %[b], [%[pg], #20]\n\t" /* row step, patch row */
        "add %[s], %[s], %[a]\n\t"
        "add %[d], %[d], %[b]\n\t"
        "subs %[rows], %[rows], #1\n\t"
        "bne 1b\n\t"
        : [d] "+r"(d), [s] "+r"(src), [rows] "+r"(rows), [a] "=&r"(a), [b] "=&r"(b),
          [n] "=&r"(n), [m] "=&r"(m), [t] "=&r"(t)
        : [pg] "r"(pg), [mid] "r"(mid)
        : "cc", "memory");
}

/* edge_rows with the widened rows' sums (g->wsum), path CONV_DIRECT_ROW_RUN: each output
 * row's patches and interior quads as quad_run_wide runs into a buffer of sums (the offset
 * folded in the bias of the row's filter rows inside, set again only where those change:
 * top and bottom rows), then the row's outputs from it. */
static void __attribute__((noinline))
run_rows(const direct_call *k, const edge_geo *e, const int8_t *input, int8_t *out)
{
    const direct_geo *g = k->g;
    const th_conv_params *params = k->params;
    const int32_t out_w = k->outd->w;
    const int32_t sw = params->stride.w;
    const int32_t pad_w = params->padding.w;
    const int32_t words = g->w_row / 4;
    const int32_t dx = k->dx;
    const direct_rq *rq = k->rq;
    const th_nn_out_stage *stage = k->stage;
    /* ia: the interior quads', pa: the patch's (its rows pr bytes apart, one quad a run) */
    run_args ia = {k->row_step - g->w_row, 0, g->wide, 0, 0, dx, 8 - words};
    run_args pa = {e->patch_row - g->w_row, 0, g->wide, 0, 0, dx, 8 - words};
    int32_t prev_lo = -1;
    int32_t prev_rows = -1;
    patch_plan lp; /* the last left and right patches' geometry */
    patch_plan rp;
    lp.x0 = INT32_MIN;
    rp.x0 = INT32_MIN;
    int32_t sums[4 * RUN_CHUNK];
    int32_t *const cap = sums + 4 * RUN_CHUNK;
    const int32_t left_end = TH_MIN(e->qa, out_w); /* the left patches: [0, left_end) */
    const int32_t in_bytes = k->in->h * k->row_bytes;
    for (int32_t b = 0; b < k->in->n; b++, input += in_bytes) {
        for (int32_t oy = 0; oy < k->outd->h; oy++) {
            int32_t ky_lo;
            int32_t ky_hi;
            const int8_t *row0 =
                row_taps(k, input, oy * params->stride.h - params->padding.h, &ky_lo, &ky_hi);
            const int32_t rows = ky_hi - ky_lo;
            if (rows <= 0) {
                const int8_t v = direct_out(rq->bias, rq, stage);
                for (int32_t ox = 0; ox < out_w; ox++) {
                    out[ox] = v;
                }
                out += out_w;
                continue;
            }
            if (ky_lo != prev_lo || rows != prev_rows) {
                const int32_t *wd = g->wide + 2 * ky_lo * words;
                ia.rows = rows;
                ia.w = wd;
                ia.bias = run_bias(g, rq->bias, ky_lo, rows);
                ia.back = 4 * dx - rows * k->row_step;
                pa.rows = rows;
                pa.w = wd;
                pa.bias = ia.bias;
                prev_lo = ky_lo;
                prev_rows = rows;
            }
            /* the interior quads: columns [mid_lo, mid_hi), as many as fit in the input;
             * the patches on either side, each side's geometry kept from the last row */
            const int32_t mid_lo = th_round_up4(left_end);
            int32_t mid_hi = mid_lo;
            if (mid_lo + 4 <= k->ox_end) {
                mid_hi += 4 * fit_quads(g, row0 + (mid_lo * sw - pad_w) * g->cin, dx,
                                        k->row_step, rows, (k->ox_end - mid_lo) / 4);
            }
            /* sums from p; row_out: the row's outputs not yet written */
            int32_t *p = sums;
            int32_t row_out = out_w;
            for (int32_t ox = 0; ox < out_w;) {
                if (p == cap) {
                    out = run_out(sums, 4 * RUN_CHUNK, rq, stage, out);
                    row_out -= 4 * RUN_CHUNK;
                    p = sums;
                }
                if (ox >= mid_lo && ox < mid_hi) {
                    const int32_t q = TH_MIN((mid_hi - ox) / 4, (int32_t)(cap - p) / 4);
                    quad_run_wide(row0 + (ox * sw - pad_w) * g->cin, &ia, q, p);
                    p += 4 * q;
                    ox += 4 * q;
                    continue;
                }
                patch_plan *plan = ox < mid_lo ? &lp : &rp;
                if (plan->x0 != ox * sw - pad_w) {
                    patch_plan_make(k, e, ox * sw - pad_w, plan);
                }
                run_patch(k, e, plan, row0, rows);
                quad_run_wide(e->patch, &pa, 1, p);
                p += 4;
                ox += 4;
            }
            out = run_out(sums, row_out, rq, stage, out);
        }
    }
}
#endif

/* Every output row with the edge patches, in raster order (no bands: the patch gives a band's
 * border pixels the quad loop already). Out of line: the rows path compiles as before. */
static void __attribute__((noinline))
edge_rows(const direct_call *k, const th_context *ctx, int8_t *patch, const int8_t *input,
          int8_t *out)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* The padded rows widened once (two halves per weight word) where the scratch holds them
     * after the patch: LDRD in the quad loop for LDR + 2 SXTB16 a word (quad_rows_wide). The
     * widening, ~10 instructions a word of the KH rows, once, saves 2 a word per quad and
     * filter row inside: where the quads' rows inside (about min(KH, H) each) reach 5 KH
     * (4x16x3 k7x7 s2, two rows of two quads: +2% with it). */
    direct_geo gw;
    direct_call kw;
    int32_t wsum[RUN_MAX_KH + 1];
    const int32_t edge = th_nn_conv_direct_edge_scratch(k->params, k->in, k->filt, k->outd);
    const int32_t words = k->filt->h * k->g->w_row / 4;
    const int32_t kh = k->filt->h;
    if (ctx->size >= edge &&
        k->in->n * k->outd->h * ((k->outd->w + 3) / 4) * TH_MIN(kh, k->in->h) >= 5 * kh) {
        int32_t *wd = (int32_t *)(void *)((int8_t *)ctx->buf + (edge - 8 * words));
        gw = *k->g;
        gw.wide = wd;
        gw.rows_fn = quad_rows_wide; /* (rows of at most TH_NN_DIRECT_EDGE_MAX_RUN bytes) */
        if (kh <= RUN_MAX_KH && TH_NN_PATH(CONV_DIRECT_ROW_RUN)) {
            widen_sums((const int32_t *)(const void *)gw.w, kh, words / kh, wd, wsum);
            gw.wsum = wsum;
        } else {
            widen_rows((const int32_t *)(const void *)gw.w, words, wd);
        }
        kw = *k;
        kw.g = &gw;
        k = &kw;
    }
#else
    (void)ctx;
#if defined(TH_NN_RECORD_PATHS) && TH_NN_RECORD_PATHS
    /* (run_rows is asm: recorded by the condition a native build takes it on) */
    if (ctx->size >= th_nn_conv_direct_edge_scratch(k->params, k->in, k->filt, k->outd) &&
        k->in->n * k->outd->h * ((k->outd->w + 3) / 4) * TH_MIN(k->filt->h, k->in->h) >=
            5 * k->filt->h &&
        k->filt->h <= 16) {
        (void)TH_NN_PATH(CONV_DIRECT_ROW_RUN);
    }
#endif
#endif
    const th_conv_params *params = k->params;
    const edge_geo e = {patch, (3 * params->stride.w + k->filt->w) * k->g->cin,
                        (int32_t)(0x01010101u * (uint8_t)(-params->input_offset)),
                        (params->padding.w + params->stride.w - 1) / params->stride.w,
                        3 * params->stride.w + k->filt->w};
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    if (k->g->wsum != NULL) {
        run_rows(k, &e, input, out);
        return;
    }
#endif
    const int32_t in_bytes = k->in->h * k->row_bytes;
    for (int32_t b = 0; b < k->in->n; b++, input += in_bytes) {
        for (int32_t oy = 0; oy < k->outd->h; oy++) {
            out = edge_row(k, &e, input, oy, out);
        }
    }
}

/* Output row oy of batch input in_b, in raster order: interior quads, other pixels up to
 * four at a time with the same taps inside. Returns the output past the row. */
static int8_t *direct_row(const direct_call *k, const int8_t *in_b, int32_t oy, int8_t *out)
{
    const th_conv_params *params = k->params;
    const th_dims *in = k->in;
    const th_dims *filt = k->filt;
    const int32_t out_w = k->outd->w;
    const int32_t cout = k->cout;
    const int32_t sw = params->stride.w;
    const int32_t y0 = oy * params->stride.h - params->padding.h;
    int32_t ky_lo;
    int32_t ky_hi;
    inside_taps(y0, params->dilation.h, filt->h, in->h, &ky_lo, &ky_hi);
    const int32_t row_off = ky_lo < ky_hi ? (y0 + ky_lo * params->dilation.h) * k->row_bytes : 0;
    int32_t ox = 0;
    while (ox < out_w) {
        const int32_t x0 = ox * sw - params->padding.w;
        int32_t kx_lo;
        int32_t kx_hi;
        inside_taps(x0, params->dilation.w, filt->w, in->w, &kx_lo, &kx_hi);
        /* Up to 4 pixels with the same taps inside (then all of them inside). */
        int32_t pixels = 1;
        if (ox + 1 < out_w) {
            int32_t lo1;
            int32_t hi1;
            inside_taps(x0 + sw, params->dilation.w, filt->w, in->w, &lo1, &hi1);
            if (lo1 == kx_lo && hi1 == kx_hi) {
                pixels = 2;
                if (ox + 3 < out_w) {
                    inside_taps(x0 + 3 * sw, params->dilation.w, filt->w, in->w, &lo1, &hi1);
                    pixels = lo1 == kx_lo && hi1 == kx_hi ? 4 : 2;
                }
            }
        }
        const int32_t rows = kx_lo < kx_hi ? ky_hi - ky_lo : 0;
        const int8_t *xa =
            rows > 0 ? in_b + row_off + (x0 + kx_lo * params->dilation.w) * k->g->cin : in_b;
        if (pixels == 4 && params->dilation.w == 1 && kx_lo == 0 && kx_hi == filt->w &&
            rows > 0) {
            /* Interior quads up to the last pixel whose window ends inside. */
            const int32_t quads =
                fit_quads(k->g, xa, k->dx, k->row_step, rows, (k->ox_end - ox) / 4);
            if (quads > 0) {
                interior_quads(k->g, k->rq, k->stage, cout, xa, k->dx, k->row_step, rows,
                               ky_lo, quads, out);
                out += 4 * quads * cout;
                ox += 4 * quads;
                continue;
            }
        }
        int32_t acc[4 * TH_NN_DIRECT_MAX_COUT];
        if (pixels == 4) {
            pixel_sums(k, xa, rows, ky_lo, kx_lo, kx_hi, 4, k->dx, acc);
        } else { /* (pairs and single pixels inline) */
            for (int32_t c = 0; c < cout; c++) {
                int32_t *s = &acc[4 * c];
                s[0] = k->rq[c].bias;
                s[1] = s[0];
                channel_sums(k->g, c, xa, k->row_step, rows, ky_lo, kx_lo, kx_hi, pixels,
                             k->dx, s);
            }
        }
        for (int32_t p = 0; p < pixels; p++, out += cout) {
            for (int32_t c = 0; c < cout; c++) {
                out[c] = direct_out(acc[4 * c + p], &k->rq[c], k->stage);
            }
        }
        ox += pixels;
    }
    return out;
}

/* One pixel's cout (1-4) outputs (a byte loop would be a memcpy call). */
TH_INLINE void pixel_copy(int8_t *out, const int8_t *from, int32_t cout)
{
    out[0] = from[0];
    if (cout > 1) {
        out[1] = from[1];
        if (cout > 2) {
            out[2] = from[2];
            if (cout > 3) {
                out[3] = from[3];
            }
        }
    }
}

/* Output bytes a band keeps of the pixels outside its rows' interior quads. */
#define DIRECT_BAND_BYTES 128

/* Output rows oy0..oy0 + 3 as a band, where their filter rows inside are the same: the
 * columns outside the interior quads (borders, the rows' last interior pixels; dilation.w 1)
 * four rows at a time (one quad down the column: the same taps inside),
 * kept in a buffer, then the rows in raster order, the interior quads straight to the output.
 * The windows of the later rows' outside pixels are read before earlier outputs are written
 * (aliasing rule (c): reading early is harmless, every output is written in raster order).
 * Returns the output past the band, or NULL (nothing done) where a band does not apply. */
static int8_t *direct_band(const direct_call *k, const int8_t *in_b, int32_t oy0, int8_t *out)
{
    const th_conv_params *params = k->params;
    const int32_t out_w = k->outd->w;
    const int32_t cout = k->cout;
    const int32_t sw = params->stride.w;
    const int32_t sh = params->stride.h;
    if (!k->bands || oy0 + 3 >= k->outd->h) {
        return NULL;
    }
    const int32_t y0 = oy0 * sh - params->padding.h;
    int32_t ky_lo;
    int32_t ky_hi;
    int32_t lo3;
    int32_t hi3;
    const int8_t *row0 = row_taps(k, in_b, y0, &ky_lo, &ky_hi);
    (void)row_taps(k, in_b, y0 + 3 * sh, &lo3, &hi3);
    const int32_t rows = ky_hi - ky_lo;
    if (lo3 != ky_lo || hi3 != ky_hi || rows <= 0) {
        return NULL; /* (the taps inside only shrink, then grow: equal ends, equal rows) */
    }
    const int32_t col_step = sh * k->row_bytes;
    /* Interior quads: columns [qa, qa + 4 quads), as many as fit in the band's last row. */
    const int32_t qa = (params->padding.w + sw - 1) / sw;
    const int32_t qa_off = (qa * sw - params->padding.w) * k->g->cin;
    int32_t quads = 0;
    if (k->ox_end - qa >= 4) {
        quads = fit_quads(k->g, row0 + 3 * col_step + qa_off, k->dx, k->row_step, rows,
                          (k->ox_end - qa) / 4);
    }
    const int32_t qb = qa + 4 * quads;
    const int32_t outside = out_w - 4 * quads;
    if (outside == 0 || 4 * outside * cout > DIRECT_BAND_BYTES) {
        return NULL; /* all interior: the rows; too many: the rows */
    }
    int8_t band[DIRECT_BAND_BYTES];
    int8_t *bp = band;
    for (int32_t ox = 0; ox < out_w; ox++) {
        if (ox == qa && quads > 0) {
            ox = qb - 1;
            continue;
        }
        int32_t r;
        int32_t kx_lo;
        int32_t kx_hi;
        const int8_t *xa =
            window_at(k, in_b, row0, rows, ox * sw - params->padding.w, &r, &kx_lo, &kx_hi);
        int32_t acc[4 * TH_NN_DIRECT_MAX_COUT];
        pixel_sums(k, xa, r, ky_lo, kx_lo, kx_hi, 4, col_step, acc);
        bp = pixels_out(k, acc, 4, bp);
    }
    for (int32_t p = 0; p < 4; p++) {
        const int8_t *from = band + p * cout;
        for (int32_t ox = 0; ox < out_w; ox++) {
            if (ox == qa && quads > 0) {
                interior_quads(k->g, k->rq, k->stage, cout, row0 + p * col_step + qa_off,
                               k->dx, k->row_step, rows, ky_lo, quads, out);
                out += 4 * quads * cout;
                ox = qb - 1;
                continue;
            }
            pixel_copy(out, from, cout);
            out += cout;
            from += 4 * cout;
        }
    }
    return out;
}

/* Plain rows (cout channels of kp bytes at w) padded in place: filter row ky of channel c
 * (run bytes, run % 4 != 0) to w + c * kh * w_row + ky * w_row, its bytes [run, w_row) 0.
 * Every byte moves up or stays: the last row first, each from its last word down (a word
 * read is never one a higher word has overwritten; the last word's bytes past the row,
 * possibly already overwritten, or up to 3 past the plain rows inside the 4 Kp scratch,
 * are masked to 0). Word copies: a byte loop cost up to 5% of a small layer. */
static void pad_rows(int8_t *w, int32_t cout, int32_t kp, int32_t kh, int32_t run,
                     int32_t w_row)
{
    const uint32_t mask = (1u << (8 * (run & 3))) - 1u;
    for (int32_t r = cout * kh - 1; r >= 0; r--) {
        const int32_t c = r / kh;
        const int8_t *from = w + c * kp + (r - c * kh) * run;
        int8_t *to = w + r * w_row;
        int32_t j = w_row - 4;
        th_write_s32(to + j, (int32_t)((uint32_t)th_read_s32(from + j) & mask));
        for (j -= 4; j >= 0; j -= 4) {
            th_write_s32(to + j, th_read_s32(from + j));
        }
    }
}

/* The column view of th_nn_conv_direct_s8 (path CONV_DIRECT_COLUMN): *p, *in, *f, *out the
 * one-row image; returns the filter column kept. (Out of line, with column_plain: the
 * kernel's other paths compile as before.) */
static int32_t __attribute__((noinline))
column_view(const th_conv_params *params, const th_dims *input_dims, const th_dims *filter_dims,
            const th_dims *output_dims, th_conv_params *p, th_dims *in, th_dims *f,
            th_dims *out)
{
    *in = *input_dims;
    in->w = in->h;
    in->h = 1;
    *out = *output_dims;
    out->w = out->h;
    out->h = 1;
    *f = *filter_dims;
    f->w = f->h;
    f->h = 1;
    *p = *params;
    p->stride.w = params->stride.h;
    p->padding.w = params->padding.h;
    p->dilation.w = params->dilation.h;
    p->stride.h = 1;
    p->padding.h = 0;
    p->dilation.h = 1;
    return params->padding.w / params->dilation.w;
}

/* The column view's plain rows: channel c's taps (ky, kc, ci) of the layer's filter (dims
 * fd) at d + c * kp, byte by byte (a tap's Cin bytes need not start a word), then zeros up
 * to kp. Tap k of channel c is at base + (k / 4) * step + k % 4 in either layout. */
static void __attribute__((noinline))
column_plain(const int8_t *filter, const th_dims *fd, int32_t kc, int32_t cout, int32_t kp,
             int8_t *d)
{
    const int32_t cin = fd->c;
    const int32_t k_full = fd->h * fd->w * cin;
    const int32_t k_view = fd->h * cin;
    for (int32_t c = 0; c < cout; c++, d += kp) {
        const int32_t base = th_filter_index(c, 0, k_full, cout, TH_CONV_BLOCK);
        const int32_t step = th_filter_index(c, 4, k_full, cout, TH_CONV_BLOCK) - base;
        const int8_t *src = filter + base;
        int32_t k = kc * cin;
        for (int32_t i = 0; i < k_view; k += (fd->w - 1) * cin) {
            for (int32_t ci = 0; ci < cin; ci++, i++, k++) {
                d[i] = src[(k >> 2) * step + (k & 3)];
            }
        }
        for (int32_t i = k_view; i < kp; i++) {
            d[i] = 0;
        }
    }
}

void th_nn_conv_direct_s8(const th_context *ctx, const th_conv_params *params,
                          const th_per_channel_quant *quant, const th_dims *input_dims,
                          const int8_t *input, const th_dims *filter_dims,
                          const int8_t *filter, const int32_t *bias,
                          const th_dims *output_dims, int8_t *output)
{
    /* A pointwise layer at stride 1 without padding: its pixels are one run in memory, taken
     * as one row (quads across the image's rows: narrow images keep the quad loop). */
    th_dims in_row;
    th_dims out_row;
    if (filter_dims->h == 1 && filter_dims->w == 1 && params->stride.h == 1 &&
        params->stride.w == 1 && params->padding.h == 0 && params->padding.w == 0 &&
        output_dims->h == input_dims->h && output_dims->w == input_dims->w) {
        in_row = *input_dims;
        in_row.w *= in_row.h;
        in_row.h = 1;
        out_row = *output_dims;
        out_row.w *= out_row.h;
        out_row.h = 1;
        input_dims = &in_row;
        output_dims = &out_row;
    }
    /* A one-column image with one output column (path CONV_DIRECT_COLUMN): only filter column
     * kc = padding.w / dilation.w meets the input, and H x 1 x Cin is 1 x H x Cin in memory,
     * so the layer runs as that one-row image with that column's KH taps as a 1 x KH filter:
     * a window's rows inside are one run (dilation.h 1), the pixels down the column interior
     * quads, not one run of Cin bytes per filter row and pixel (52x1x5 k4x4 s2: 7,116 ->
     * 3,522 instructions, Cortex-M4). kc_col: the kept column, -1 for none. */
    th_conv_params p_col;
    th_dims f_col;
    const th_dims *filter_full = filter_dims;
    int32_t kc_col = -1;
    if (input_dims->w == 1 && output_dims->w == 1 && filter_dims->h > 1 &&
        params->padding.w % params->dilation.w == 0 &&
        params->padding.w / params->dilation.w < filter_dims->w &&
        TH_NN_PATH(CONV_DIRECT_COLUMN)) {
        kc_col = column_view(params, input_dims, filter_dims, output_dims, &p_col, &in_row,
                             &f_col, &out_row);
        input_dims = &in_row;
        output_dims = &out_row;
        filter_dims = &f_col;
        params = &p_col;
    }
    const int32_t cin = input_dims->c;
    const int32_t cout = output_dims->c;
    const int32_t k_total = filter_dims->h * filter_dims->w * cin;
    const int32_t kp = th_round_up4(k_total);
    th_nn_out_stage stage;
    th_nn_out_stage_init(&stage, quant, cout, params->output_offset, &params->activation,
                         th_acc_bound(k_total, 128, bias, cout));
    th_nn_out_stage_mixed(&stage, quant, bias, cout, (int64_t)k_total * 256 * 128);
    direct_rq rq[TH_NN_DIRECT_MAX_COUT];
    for (int32_t c = 0; c < cout; c++) {
        rq[c].multiplier = quant->multiplier[c];
        rq[c].shift = quant->shift[c];
        rq[c].bias = bias != NULL ? bias[c] : 0;
        rq[c].fast = stage.fast || (stage.mixed && th_nn_fast_channel(&stage, quant, bias, c));
        rq[c].rq = rq[c].fast ? th_fast_rq_make(rq[c].multiplier, rq[c].shift,
                                                stage.output_offset)
                              : (th_fast_rq){0, 0, 0};
    }
    /* Plain rows: word j of channel c from the interleaved block layout. */
    int32_t *plain = (int32_t *)ctx->buf;
    if (kc_col < 0) {
        for (int32_t c = 0; c < cout; c++) {
            for (int32_t j = 0; j < kp / 4; j++) {
                plain[c * (kp / 4) + j] = th_read_s32(
                    filter + th_filter_index(c, 4 * j, k_total, cout, TH_CONV_BLOCK));
            }
        }
    } else {
        column_plain(filter, filter_full, kc_col, cout, kp, (int8_t *)plain);
    }
    /* Padded rows where a filter row's bytes are not whole words (dilation.w 1: one run
     * per row), a row has interior quads and the rows fit in the scratch every variant
     * reserves (4 Kp, th_nn_im2col_pair_bytes): the quads' rows then end in a whole word
     * against zero weights, no mask, and the rows of a quad run in one loop (quad_channel).
     * (Without interior quads the padding cost more than it saved: 24x7x38 k3x3 s2, +1.4%.) */
    const int32_t ox_end = interior_end(params, input_dims, filter_dims, output_dims);
    const int32_t qa = (params->padding.w + params->stride.w - 1) / params->stride.w;
    const int32_t run = filter_dims->w * cin;
    const int32_t w_row_padded = th_round_up4(run);
    /* The edge patches (path CONV_DIRECT_EDGES) after the padded rows in their scratch. */
    int8_t *patch = NULL;
    if (cout == 1 && kc_col < 0) {
        /* (the widened rows last, edge_rows: a smaller scratch, th_conv_3x3_s8's, holds the
         * patch without them) */
        const int32_t edge =
            th_nn_conv_direct_edge_scratch(params, input_dims, filter_dims, output_dims) -
            2 * filter_dims->h * th_round_up4(filter_dims->w * cin);
        if (edge > 0 && ctx->size >= edge && TH_NN_PATH(CONV_DIRECT_EDGES)) {
            patch = (int8_t *)ctx->buf + filter_dims->h * th_round_up4(filter_dims->w * cin);
        }
    }
    const int padded = params->dilation.w == 1 && w_row_padded != run &&
                       (patch != NULL ||
                        (ox_end - qa >= 4 && cout * filter_dims->h * w_row_padded <= 4 * kp));
    const int32_t w_row = padded ? w_row_padded : run;
    if (padded) {
        pad_rows((int8_t *)plain, cout, kp, filter_dims->h, run, w_row);
    }
    const int32_t in_bytes = input_dims->n * input_dims->h * input_dims->w * cin;
    direct_geo g = {(const int8_t *)plain, input + in_bytes, kp, w_row,
                          padded ? filter_dims->h * w_row : kp, cin, filter_dims->w,
                          params->dilation.w, params->input_offset,
                          (int32_t)(((uint32_t)params->input_offset << 16) |
                                    ((uint32_t)params->input_offset & 0xFFFFu)),
                          TH_NN_FILTER_INTERLEAVED && kc_col < 0 && cout == 2 &&
                                  params->dilation.w == 1 && (run & 3) == 0
                              ? filter /* the layer's filter: not the column view's */
                              : NULL,
                          NULL, DIRECT_ROWS_WHOLE, NULL};
    /* Given the fast scratch: every pixel from int8 columns (th_nn_conv_direct_fast_scratch). */
    const int32_t fast =
        th_nn_conv_direct_fast_scratch(params, input_dims, filter_dims, output_dims);
    if (fast > 0 && ctx->size >= fast) {
        direct_columns(&g, rq, &stage, params, input_dims, filter_dims, output_dims, input,
                       (int8_t *)plain + cout * kp, output);
        return;
    }
    const int32_t row_bytes = input_dims->w * cin;
    /* Bands (dilation.w 1, four output rows) where some pixels of a row are outside its
     * interior quads and the band's buffer holds them (measured: with dilation.w > 1 the
     * rows' pairs are faster than four rows' short runs). */
    const int32_t outside = output_dims->w - (ox_end > qa ? 4 * ((ox_end - qa) / 4) : 0);
    const direct_call k = {&g, rq, &stage, params, input_dims, filter_dims, output_dims, cout,
                           params->stride.w * cin, row_bytes, params->dilation.h * row_bytes,
                           ox_end,
                           params->dilation.w == 1 && output_dims->h >= 4 && outside > 0 &&
                               4 * outside * cout <= DIRECT_BAND_BYTES};
    if (patch != NULL) {
        edge_rows(&k, ctx, patch, input, output);
        return;
    }
    /* Cout 1 without the edge patches: the rows widened as edge_rows does (one_quads then takes
     * quad_rows_wide, 21 instructions per 16 MACs against quad_rows_whole's 25), after the rows
     * where the scratch holds them (3 KH w_row bytes: within the 4 Kp every variant reserves
     * from rows of 9 bytes on), for rows of whole words up to TH_NN_DIRECT_EDGE_MAX_RUN bytes
     * (quad_rows_wide's eight words) and where the quads' rows, about min(KH, H) per quad,
     * reach 3 KH (the widening, ~8 instructions a word, once; 4 saved a word per quad row). */
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    if (cout == 1 && (w_row & 3) == 0) {
        g.wide = rows_wide(ctx, params, input_dims, filter_dims, output_dims, plain, w_row,
                           ox_end - qa);
        if (g.wide != NULL) {
            g.rows_fn = w_row <= TH_NN_DIRECT_EDGE_MAX_RUN ? quad_rows_wide : quad_rows_wide_long;
        }
    }
#endif
    int8_t *out = output;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + b * input_dims->h * row_bytes;
        int32_t oy = 0;
        while (oy < output_dims->h) {
            int8_t *band_end = direct_band(&k, in_b, oy, out);
            if (band_end != NULL) {
                out = band_end;
                oy += 4;
            } else {
                out = direct_row(&k, in_b, oy, out);
                oy++;
            }
        }
    }
}

#endif /* TH_NN_HAS_DSP */
