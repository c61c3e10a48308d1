/* th_maxpool_s8: int8 MAX_POOL_2D as TFLite Micro's reference. The output pixel is the
 * running maximum (no scratch); on DSP builds four channels at a time with SSUB8 + SEL,
 * which is exact (SSUB8 sets each GE bit from the full 9-bit signed difference); on MVE
 * builds sixteen channels at a time held in a register over the window (max_window_mve,
 * VMAX.S8, tails predicated with VCTP). */
#include <string.h>

#include "th_nn.h"
#include "th_nn_pool.h"
#include "th_nn_support.h"

/* Window heights of the two-row pass (th_maxpool_s8_scratch_size_fast). */
#define TH_MAXPOOL_PAIR_ROWS 7
/* The least window height of the four-row pass (quad_rows_call): from five rows the four
 * windows' shared rows save maxima and loads over two pairs (k + 4 against 2k; at four rows
 * the same maxima, and the extra rows' padding cost more than the loads saved). */
#define TH_MAXPOOL_QUAD_MIN 5
/* Window widths of the stride-1 row pass's functions (taps_row_k) */
#define TH_MAXPOOL_ROW_TAPS 7

#if TH_NN_DSP_NATIVE
/* Bytewise signed max of two words. One asm block: SEL must see SSUB8's GE flags. */
TH_INLINE uint32_t max_s8x4(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("ssub8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b) : "cc");
    return r;
}
/* Bytewise signed min: SEL the other way round. */
TH_INLINE uint32_t min_s8x4(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("ssub8 %0, %1, %2\n\tsel %0, %2, %1" : "=&r"(r) : "r"(a), "r"(b) : "cc");
    return r;
}
#elif TH_NN_HAS_DSP
/* C model of SSUB8 + SEL (a's byte where a >= b, else b's; swapped: the other way round)
 * for host tests of the DSP path. */
TH_INLINE uint32_t sel_s8x4(uint32_t a, uint32_t b, int swapped)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i += 8) {
        const int32_t x = (int8_t)(uint8_t)(a >> i);
        const int32_t y = (int8_t)(uint8_t)(b >> i);
        r |= (uint32_t)(uint8_t)((x - y >= 0) != swapped ? x : y) << i;
    }
    return r;
}
TH_INLINE uint32_t max_s8x4(uint32_t a, uint32_t b)
{
    return sel_s8x4(a, b, 0);
}
TH_INLINE uint32_t min_s8x4(uint32_t a, uint32_t b)
{
    return sel_s8x4(a, b, 1);
}
#endif

/* dst[k] = max(dst[k], src[k]) for k < n. */
static void max_into(int8_t *dst, const int8_t *src, int32_t n)
{
    int32_t k = 0;
#if TH_NN_MVE
    for (; k < n; k += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(n - k));
        vstrbq_p_s8(dst + k, vmaxq_s8(vldrbq_z_s8(dst + k, p), vldrbq_z_s8(src + k, p)), p);
    }
#elif TH_NN_HAS_DSP
    for (; k + 4 <= n; k += 4) {
        uint32_t a;
        uint32_t b;
        memcpy(&a, dst + k, 4);
        memcpy(&b, src + k, 4);
        a = max_s8x4(a, b);
        memcpy(dst + k, &a, 4);
    }
#endif
    for (; k < n; k++) {
        dst[k] = src[k] > dst[k] ? src[k] : dst[k];
    }
}

/* Separable path (th_maxpool_s8_scratch_size > 0 and that much scratch given): per output
 * row, the column maxima over the row's window rows (int8, one input row in scratch, read
 * before any output of the row is written: the in-place order of th_nn.h (c) holds), then
 * each output the maximum of its window's columns. */
static int max_separable(const th_pool_params *p, const th_dims *in, const th_dims *out)
{
    return (int64_t)out->h * out->w > 1 &&
           (int64_t)p->filter.h * p->filter.w >
               (int64_t)p->filter.h * p->stride.w + p->filter.w &&
           (int64_t)in->w * in->c <= (INT64_C(1) << 28);
}

int32_t th_maxpool_s8_scratch_size(const th_pool_params *params, const th_dims *input_dims,
                                   const th_dims *output_dims)
{
    if (params == NULL || input_dims == NULL || output_dims == NULL ||
        input_dims->w < 1 || input_dims->c < 1 || params->filter.h < 1 ||
        params->filter.w < 1 || params->stride.h < 1 || params->stride.w < 1 ||
        !max_separable(params, input_dims, output_dims)) {
        return 0;
    }
    return (input_dims->w * input_dims->c + 3) & ~3;
}

/* Rows of column maxima in the fast scratch: four (quad_rows_call) where the window slides by
 * one row, is 4..TH_MAXPOOL_PAIR_ROWS rows high and the output has four rows, two
 * (max_pair_rows) from two rows high, else one. */
static int32_t max_fast_rows(const th_pool_params *p, const th_dims *out)
{
    if (p->stride.h != 1 || p->filter.h < 2 || p->filter.h > TH_MAXPOOL_PAIR_ROWS ||
        out->h < 2) {
        return 1;
    }
    return p->filter.h >= TH_MAXPOOL_QUAD_MIN && out->h >= 4 ? 4 : 2;
}

/* The fast size for dimensions th_nn_check_pool accepted (each at least 1, strides and
 * windows below 2^16, sizes below 2^30): th_maxpool_s8 skips max_fast_size's other checks. */
static int32_t max_fast_checked(const th_pool_params *p, const th_dims *in, const th_dims *out)
{
    const int32_t cols = (out->w - 1) * p->stride.w + p->filter.w;
    if (out->h * out->w <= 1 || (int64_t)cols * in->c > (INT64_C(1) << 28)) {
        return 0;
    }
    return max_fast_rows(p, out) * ((cols * in->c + 3) & ~3);
}

/* Columns of the padded layout: L = (OW - 1) * SW + KW, from input column -pw. */
static int32_t max_padded_cols(const th_pool_params *p, const th_dims *out)
{
    return (out->w - 1) * p->stride.w + p->filter.w;
}

/* The padded layout's bytes computed from the input: [c0, c1) of the row (input byte
 * c0 - pw * C); the others hold the padding's -128. */
TH_INLINE void padded_bytes(const th_pool_params *p, const th_dims *in, const th_dims *out,
                            int32_t *c0, int32_t *c1)
{
    const int32_t cols = max_padded_cols(p, out), pw = p->padding.w;
    const int32_t t0 = TH_MIN(pw, cols), t1 = TH_MAX(t0, TH_MIN(in->w + pw, cols));
    *c0 = t0 * in->c;
    *c1 = t1 * in->c;
}

/* max_c1_words' shapes (below) */
static int max_c1_applies(const th_pool_params *p, const th_dims *in, const th_dims *out)
{
    if (in->c != 1 || p->stride.h < 2 || p->stride.w < 2 || p->filter.w < 4 ||
        p->filter.w > 8) {
        return 0;
    }
    int32_t c0, c1;
    padded_bytes(p, in, out, &c0, &c1);
    return c1 - c0 >= 4; /* c1_cols' words */
}

/* th_maxpool_prep (th_nn_types.h) for a call given scratch bytes: the path inputs of
 * th_maxpool_s8_prepared and max_lanes_image's geometry (its padded layout where the fast
 * scratch is given, else the columns any window reads from column 0), made once: on small
 * planes they were ~150-250 instructions a call (divisions, clipped-row ranges). The host's
 * mirror is tinyhost.arith.pool.maxpool_prep. */
th_status th_maxpool_s8_prepare(const th_pool_params *params, const th_dims *input_dims,
                                const th_dims *output_dims, int32_t scratch,
                                th_maxpool_prep *prep)
{
    /* no tensors here: prep stands in for th_nn_check_pool's pointers */
    const int8_t *none = (const int8_t *)(const void *)prep;
    const th_status status = th_nn_check_pool(params, input_dims, none, output_dims, none);
    if (status != TH_OK) {
        return status;
    }
    const th_pool_params *p = params;
    const th_dims *in = input_dims, *out = output_dims;
    th_maxpool_prep *k = prep;
    k->params = *p;
    k->in = *in;
    k->out = *out;
    k->clamp = p->activation.min > -128 || p->activation.max < 127;
    const int32_t fast = max_fast_checked(p, in, out);
    const int32_t sep = th_maxpool_s8_scratch_size(p, in, out);
    k->fast = fast > 0 && scratch >= fast ? fast : 0;
    k->sep = sep > 0 && scratch >= sep ? sep : 0;
    k->rows = k->fast > 0 ? max_fast_rows(p, out) : 1;
    k->c1 = k->fast > 0 && max_c1_applies(p, in, out);
    const int32_t ch = in->c, sh = p->stride.h, ph = p->padding.h;
    int32_t c0 = 0, c1;
    if (k->fast > 0) {
        padded_bytes(p, in, out, &c0, &c1);
        k->cols = max_padded_cols(p, out) * ch;
    } else {
        const th_nn_window last =
            th_nn_window_at(out->w - 1, p->stride.w, p->padding.w, p->filter.w, in->w);
        c1 = (last.origin + last.end) * ch; /* columns any window reads */
        k->cols = 0;
    }
    k->c0 = c0;
    k->span = c1 - c0;
    /* output rows [ya, yb): unclipped windows, origin oy * sh - ph >= 0, end <= H; padded,
     * the rows cut by the top are max_chain_top's (with the row of origin 0 where there is
     * one, unless at stride.h 1 it would leave the pairs of rows one row over), those after
     * yb max_rows_bottom's */
    const int chains = k->fast > 0 && k->span > 0;
    int32_t ya = k->span > 0 ? TH_MIN((ph + sh - 1) / sh, out->h) : out->h;
    const int32_t e = in->h - p->filter.h + ph;
    const int32_t yb = e < 0 ? ya : TH_MAX(ya, TH_MIN(out->h, e / sh + 1));
    if (chains && ph > 0 && ph % sh == 0 && ya < yb && (k->rows == 1 || (yb - ya) % 2 == 1)) {
        ya++; /* the row of origin 0: the chain's next rows */
    }
    k->ya = ya;
    k->yb = yb;
    k->rows_padded = k->fast > 0 && (p->stride.w > 1 ||
                                     (!k->clamp && p->filter.w <= TH_MAXPOOL_ROW_TAPS));
    return TH_OK;
}

/* Two rows of column maxima where the window slides down by one row (stride.h 1): the DSP
 * path computes two output rows' column maxima in one pass over their rows (max_pair_rows).
 * Portable and MVE builds have no such path (max_fast_rows and max_fast_checked are built in
 * every build: th_maxpool_s8_prepare fills the same struct everywhere). */
#if TH_NN_HAS_DSP && !TH_NN_MVE
static int32_t max_fast_size(const th_pool_params *p, const th_dims *in, const th_dims *out)
{
    if (in->w < 1 || in->c < 1 || out->w < 1 || out->h < 1 || p->filter.h < 1 ||
        p->filter.w < 1 || p->stride.h < 1 || p->stride.w < 1 ||
        (int64_t)out->h * out->w <= 1 || p->stride.w > 0xFFFF || p->filter.w > 0xFFFF ||
        ((int64_t)(out->w - 1) * p->stride.w + p->filter.w) * in->c > (INT64_C(1) << 28)) {
        return 0;
    }
    return max_fast_checked(p, in, out);
}
#endif

int32_t th_maxpool_s8_scratch_size_fast(const th_pool_params *params,
                                        const th_dims *input_dims,
                                        const th_dims *output_dims)
{
#if TH_NN_HAS_DSP && !TH_NN_MVE
    if (params != NULL && input_dims != NULL && output_dims != NULL) {
        const int32_t fast = max_fast_size(params, input_dims, output_dims);
        return fast > th_maxpool_s8_scratch_size(params, input_dims, output_dims) ? fast : 0;
    }
#else
    (void)params;
    (void)input_dims;
    (void)output_dims;
#endif
    return 0;
}

static void clamp_pixel(int8_t *out, int32_t channels, int32_t act_min, int32_t act_max)
{
    for (int32_t k = 0; k < channels; k++) {
        const int32_t v = out[k];
        out[k] = (int8_t)(v < act_min ? act_min : (v > act_max ? act_max : v));
    }
}

#if TH_NN_MVE
/* One output pixel on MVE: the maximum over rows x cols pixels from base (steps in bytes),
 * clamped, 16 channels at a time held in a register, then dst. */
static void max_window_mve(int8_t *dst, const int8_t *base, int32_t rows, int32_t row_step,
                           int32_t cols, int32_t ch, int32_t act_min, int32_t act_max)
{
    const int8x16_t lo = vdupq_n_s8((int8_t)act_min), hi = vdupq_n_s8((int8_t)act_max);
    for (int32_t c0 = 0; c0 < ch; c0 += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(ch - c0));
        int8x16_t v = lo; /* the clamp's lower bound is the maximum's start */
        for (int32_t y = 0; y < rows; y++) {
            const int8_t *px = base + y * row_step + c0;
            for (int32_t x = 0; x < cols; x++, px += ch) {
                v = vmaxq_s8(v, vldrbq_z_s8(px, p));
            }
        }
        vstrbq_p_s8(dst + c0, vminq_s8(v, hi), p);
    }
}
#endif

static void max_separable_image(const th_pool_params *p, const th_dims *in,
                                const int8_t *image, const th_dims *out, int8_t *dst,
                                int8_t *cm)
{
    const int32_t in_w = in->w, ch = in->c;
    const int32_t act_min = p->activation.min, act_max = p->activation.max;
    const int clamp = act_min > -128 || act_max < 127;
    const th_nn_window last =
        th_nn_window_at(out->w - 1, p->stride.w, p->padding.w, p->filter.w, in_w);
    const int32_t span = (last.origin + last.end) * ch; /* columns any window reads */
    for (int32_t oy = 0; oy < out->h; oy++) {
        const th_nn_window wy =
            th_nn_window_at(oy, p->stride.h, p->padding.h, p->filter.h, in->h);
        const int32_t ys = wy.origin + wy.start, ye = wy.origin + wy.end;
        if (ye > ys && span > 0) {
            memcpy(cm, image + ys * in_w * ch, (size_t)span);
            for (int32_t y = ys + 1; y < ye; y++) {
                max_into(cm, image + y * in_w * ch, span);
            }
        }
        for (int32_t ox = 0; ox < out->w; ox++) {
            const th_nn_window wx =
                th_nn_window_at(ox, p->stride.w, p->padding.w, p->filter.w, in_w);
            const int32_t xs = wx.origin + wx.start, xe = wx.origin + wx.end;
#if TH_NN_MVE
            max_window_mve(dst, cm + xs * ch, ye > ys ? 1 : 0, 0, xe - xs, ch, act_min, act_max);
            dst += ch;
            continue;
#endif
            if (ye <= ys || xe <= xs) {
                memset(dst, -128, (size_t)ch); /* TFLM's initial value */
            } else {
                memcpy(dst, cm + xs * ch, (size_t)ch);
                for (int32_t x = xs + 1; x < xe; x++) {
                    max_into(dst, cm + x * ch, ch);
                }
            }
            if (clamp) {
                clamp_pixel(dst, ch, act_min, act_max);
            }
            dst += ch;
        }
    }
}

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* ---- DSP separable path: word loops, no call per pixel ----------------------------------
 *
 * Column maxima: cm[i] = the maximum of rows r0..r0+rows-1 at byte i of the row, four bytes
 * a word (SSUB8 + SEL), the row count a constant in each specialization (its loads
 * unrolled). Row maxima: at stride 1 the output row is one flat loop, out[i] = the maximum
 * of cm[i + j * C] over the KW taps j (any C: the taps of byte i are C bytes apart), over
 * the pixels whose window is not clipped; the others (and every pixel at other strides) a
 * pixel at a time, a word at a time (the last word of a pixel ending at its last byte,
 * rewriting bytes already written with the same values). Every window has at least one
 * valid row and column here, so the maximum is over valid taps only, as TFLM's. */
TH_INLINE uint32_t rd4(const int8_t *p)
{
    return (uint32_t)th_read_s32(p);
}

TH_INLINE int8_t max_b(int8_t a, int8_t b)
{
    return a > b ? a : b;
}

/* The word at row r (a constant 0..7) of a column: rows 0-3 from a, rows 4-7 from
 * b = a + 4 * step, at offset 0, s1 = step, s2 = 2 * step or s3 = 3 * step. The offsets stay
 * in registers and a and b are the loop's only source pointers (one increment each), so no
 * load needs address arithmetic: gcc's own choice (an add per load, and spills) cost 37
 * instructions per pair of words at 8 rows, this 27. */
TH_INLINE uint32_t col_word(const int8_t *a, const int8_t *b, int32_t r, int32_t s1,
                            int32_t s2, int32_t s3)
{
    const int8_t *q = r < 4 ? a : b;
    switch (r & 3) {
    case 0: return rd4(q);
    case 1: return rd4(q + s1);
    case 2: return rd4(q + s2);
    default: return rd4(q + s3);
    }
}

/* col_word's offsets and second pointer (a row that exists where reads > 4 rows), hidden
 * from gcc (else it folds them back into a pointer per row). */
#define TH_MAXPOOL_COLS(src, step, reads)                                                     \
    int32_t s1 = (step), s2 = 2 * (step), s3 = 3 * (step);                                    \
    const int8_t *a = (src), *b = (reads) > 4 ? (src) + 4 * (step) : (src);                   \
    if ((reads) > 4) {                                                                        \
        __asm__("" : "+r"(s1), "+r"(s2), "+r"(s3), "+r"(b));                                  \
    } else if ((reads) > 3) {                                                                 \
        __asm__("" : "+r"(s1), "+r"(s2), "+r"(s3));                                           \
    } else if ((reads) > 2) {                                                                 \
        __asm__("" : "+r"(s1), "+r"(s2));                                                     \
    }

/* The maximum of rows 0..rows-1 of a column word (col_word), and of the word at d with acc. */
TH_INLINE uint32_t cols_word(const int8_t *d, const int8_t *a, const int8_t *b, int32_t rows,
                             int acc, int32_t s1, int32_t s2, int32_t s3)
{
    uint32_t v = acc ? max_s8x4(rd4(d), rd4(a)) : rd4(a);
#pragma GCC unroll 8
    for (int32_t r = 1; r < rows; r++) {
        v = max_s8x4(v, col_word(a, b, r, s1, s2, s3));
    }
    return v;
}

/* Two windows of rows a row apart (col_word; the stride-1 row pass: of taps a pixel apart):
 * the rows 1..rows-1 they share, then with row 0 into d and with row `rows` into d + dd,
 * clamped to [lo, hi] bytewise with clamp. */
TH_INLINE void pair_word_rows(int8_t *d, int32_t dd, const int8_t *a, const int8_t *b,
                              int32_t rows, int32_t s1, int32_t s2, int32_t s3, uint32_t lo,
                              uint32_t hi, int clamp)
{
    uint32_t v = col_word(a, b, 1, s1, s2, s3);
#pragma GCC unroll 8
    for (int32_t r = 2; r < rows; r++) {
        v = max_s8x4(v, col_word(a, b, r, s1, s2, s3));
    }
    uint32_t v0 = max_s8x4(v, col_word(a, b, 0, s1, s2, s3));
    uint32_t v1 = max_s8x4(v, col_word(a, b, rows, s1, s2, s3));
    if (clamp) {
        v0 = min_s8x4(max_s8x4(v0, lo), hi);
        v1 = min_s8x4(max_s8x4(v1, lo), hi);
    }
    th_write_s32(d + dd, (int32_t)v1);
    th_write_s32(d, (int32_t)v0);
}

/* dst[i] (i < n) = max over r < rows (rows a constant 1..8) of src[r * step + i], and of
 * dst[i] itself with acc (a constant). n >= 4 not a multiple of 4: the word at n - 4 too, its
 * bytes written twice with the same values (a maximum taken twice). */
TH_INLINE void cols_fixed(int8_t *dst, const int8_t *src, int32_t step, int32_t rows,
                          int32_t n, int acc)
{
    if (n < 4) {
        for (int32_t i = 0; i < n; i++) {
            int8_t v = acc ? max_b(dst[i], src[i]) : src[i];
            for (int32_t r = 1; r < rows; r++) {
                v = max_b(v, src[r * step + i]);
            }
            dst[i] = v;
        }
        return;
    }
    TH_MAXPOOL_COLS(src, step, rows);
    const int8_t *end = src + (n & ~3);
    if ((n & 3) != 0) { /* the last word first: nothing stays live after the loop */
        const int32_t last = n - 4;
        th_write_s32(dst + last,
                     (int32_t)cols_word(dst + last, a + last, b + last, rows, acc, s1, s2, s3));
    }
    for (; a < end; a += 4, b += 4, dst += 4) {
        th_write_s32(dst, (int32_t)cols_word(dst, a, b, rows, acc, s1, s2, s3));
    }
}

#define TH_MAXPOOL_UNROLL 8

/* cols_fixed with the row count k (1..TH_MAXPOOL_UNROLL) made a constant. */
TH_INLINE void cols_k(int8_t *dst, const int8_t *src, int32_t step, int32_t k, int32_t n,
                      int acc)
{
    switch (k) {
    case 1: cols_fixed(dst, src, step, 1, n, acc); break;
    case 2: cols_fixed(dst, src, step, 2, n, acc); break;
    case 3: cols_fixed(dst, src, step, 3, n, acc); break;
    case 4: cols_fixed(dst, src, step, 4, n, acc); break;
    case 5: cols_fixed(dst, src, step, 5, n, acc); break;
    case 6: cols_fixed(dst, src, step, 6, n, acc); break;
    case 7: cols_fixed(dst, src, step, 7, n, acc); break;
    default: cols_fixed(dst, src, step, 8, n, acc); break;
    }
}

/* The column maxima of rows >= 1 rows from src (row step step) over n bytes. */
__attribute__((noinline)) static void max_cols(int8_t *dst, const int8_t *src, int32_t step,
                                               int32_t rows, int32_t n)
{
    cols_k(dst, src, step, TH_MIN(rows, TH_MAXPOOL_UNROLL), n, 0);
    for (int32_t r = TH_MAXPOOL_UNROLL; r < rows; r += TH_MAXPOOL_UNROLL) {
        cols_k(dst, src + r * step, step, TH_MIN(rows - r, TH_MAXPOOL_UNROLL), n, 1);
    }
}

/* max_cols over dst's own values too (the chains' later rows, max_chains). */
__attribute__((noinline)) static void max_cols_acc(int8_t *dst, const int8_t *src,
                                                   int32_t step, int32_t rows, int32_t n)
{
    for (int32_t r = 0; r < rows; r += TH_MAXPOOL_UNROLL) {
        cols_k(dst, src + r * step, step, TH_MIN(rows - r, TH_MAXPOOL_UNROLL), n, 1);
    }
}

/* Two output rows a row apart (rows a constant 2..TH_MAXPOOL_PAIR_ROWS): the maximum of
 * the rows 1..rows-1 they share, then with row 0 into d and with row `rows` into d + dd (the
 * tail as cols_fixed's). */
TH_INLINE void pair_fixed(int8_t *d, int32_t dd, const int8_t *src, int32_t step,
                          int32_t rows, int32_t n)
{
    if (n < 4) {
        for (int32_t i = 0; i < n; i++) {
            int8_t v = src[step + i];
            for (int32_t r = 2; r < rows; r++) {
                v = max_b(v, src[r * step + i]);
            }
            d[i] = max_b(v, src[i]);
            d[dd + i] = max_b(v, src[rows * step + i]);
        }
        return;
    }
    TH_MAXPOOL_COLS(src, step, rows + 1);
    const int8_t *end = src + (n & ~3);
    if ((n & 3) != 0) { /* the last word first, as cols_fixed's */
        const int32_t last = n - 4;
        pair_word_rows(d + last, dd, a + last, b + last, rows, s1, s2, s3, 0, 0, 0);
    }
    for (; a < end; a += 4, b += 4, d += 4) {
        pair_word_rows(d, dd, a, b, rows, s1, s2, s3, 0, 0, 0);
    }
}

/* One function per row count: inlined into one switch, gcc's register allocation over the six
 * loops spilled a pointer or an offset in each. */
#define TH_MAXPOOL_PAIR_FN(k)                                                                 \
    __attribute__((noinline)) static void pair_rows_##k(int8_t *d, int32_t dd,                \
                                                        const int8_t *src, int32_t step,      \
                                                        int32_t n)                            \
    {                                                                                         \
        pair_fixed(d, dd, src, step, k, n);                                                   \
    }
TH_MAXPOOL_PAIR_FN(2)
TH_MAXPOOL_PAIR_FN(3)
TH_MAXPOOL_PAIR_FN(4)
TH_MAXPOOL_PAIR_FN(5)
TH_MAXPOOL_PAIR_FN(6)
TH_MAXPOOL_PAIR_FN(7)

/* d: the first row's column maxima, d + dd the second's: a direct call per case. */
TH_INLINE void pair_rows_call(int8_t *d, int32_t dd, const int8_t *src, int32_t step,
                              int32_t rows, int32_t n)
{
    switch (rows) {
    case 2: pair_rows_2(d, dd, src, step, n); break;
    case 3: pair_rows_3(d, dd, src, step, n); break;
    case 4: pair_rows_4(d, dd, src, step, n); break;
    case 5: pair_rows_5(d, dd, src, step, n); break;
    case 6: pair_rows_6(d, dd, src, step, n); break;
    default: pair_rows_7(d, dd, src, step, n); break;
    }
}

/* pair_rows_call out of line: th_maxpool_s8 keeps its registers. */
__attribute__((noinline)) static void max_pair_rows(int8_t *d, int32_t dd, const int8_t *src,
                                                    int32_t step, int32_t rows, int32_t n)
{
    pair_rows_call(d, dd, src, step, rows, n);
}

/* The word at row r (a constant 0..11) of a column: col_word's, rows 8-11 from c. */
TH_INLINE uint32_t col_word3(const int8_t *a, const int8_t *b, const int8_t *c, int32_t r,
                             int32_t s1, int32_t s2, int32_t s3)
{
    return r < 8 ? col_word(a, b, r, s1, s2, s3) : col_word(c, c, r - 8, s1, s2, s3);
}

/* Four windows of k rows (a constant 4..7) a row apart, [0, k) .. [3, k + 3): the rows
 * [3, k) all share (M), with rows 1-2 (A) for the first two and rows k, k+1 (B) for the last
 * two; each then adds its own row: max(MA, 0), max(MA, k), max(MB, 2), max(MB, k + 2). k + 4
 * maxima and loads for four words, two pairs' 2k and 2k + 2 (pair_word_rows). */
TH_INLINE void quad_word_rows(int8_t *d, int32_t dd, const int8_t *a, const int8_t *b,
                              const int8_t *c, int32_t k, int32_t s1, int32_t s2, int32_t s3)
{
    uint32_t m = col_word3(a, b, c, 3, s1, s2, s3);
#pragma GCC unroll 8
    for (int32_t r = 4; r < k; r++) {
        m = max_s8x4(m, col_word3(a, b, c, r, s1, s2, s3));
    }
    const uint32_t ma = max_s8x4(m, max_s8x4(col_word3(a, b, c, 1, s1, s2, s3),
                                             col_word3(a, b, c, 2, s1, s2, s3)));
    th_write_s32(d, (int32_t)max_s8x4(ma, col_word3(a, b, c, 0, s1, s2, s3)));
    const uint32_t rk = col_word3(a, b, c, k, s1, s2, s3);
    th_write_s32(d + dd, (int32_t)max_s8x4(ma, rk));
    const uint32_t mb = max_s8x4(m, max_s8x4(rk, col_word3(a, b, c, k + 1, s1, s2, s3)));
    th_write_s32(d + 2 * dd, (int32_t)max_s8x4(mb, col_word3(a, b, c, 2, s1, s2, s3)));
    th_write_s32(d + 3 * dd, (int32_t)max_s8x4(mb, col_word3(a, b, c, k + 2, s1, s2, s3)));
}

/* Four output rows a row apart (rows a constant TH_MAXPOOL_QUAD_MIN..TH_MAXPOOL_PAIR_ROWS),
 * row j's column maxima into d + j * dd, over n bytes (the tail as cols_fixed's). */
TH_INLINE void quad_fixed(int8_t *d, int32_t dd, const int8_t *src, int32_t step,
                          int32_t rows, int32_t n)
{
    if (n < 4) {
        for (int32_t i = 0; i < n; i++) {
            for (int32_t j = 0; j < 4; j++) {
                int8_t v = src[j * step + i];
                for (int32_t r = 1; r < rows; r++) {
                    v = max_b(v, src[(j + r) * step + i]);
                }
                d[j * dd + i] = v;
            }
        }
        return;
    }
    TH_MAXPOOL_COLS(src, step, rows + 3);
    const int8_t *c = src + 8 * step;
    if (rows + 3 > 8) {
        __asm__("" : "+r"(c));
    }
    const int8_t *end = src + (n & ~3);
    if ((n & 3) != 0) { /* the last word first, as cols_fixed's */
        const int32_t last = n - 4;
        quad_word_rows(d + last, dd, a + last, b + last, c + last, rows, s1, s2, s3);
    }
    for (; a < end; a += 4, b += 4, c += 4, d += 4) {
        quad_word_rows(d, dd, a, b, c, rows, s1, s2, s3);
    }
}

#define TH_MAXPOOL_QUAD_FN(k)                                                                 \
    __attribute__((noinline)) static void quad_rows_##k(int8_t *d, int32_t dd,                \
                                                        const int8_t *src, int32_t step,      \
                                                        int32_t n)                            \
    {                                                                                         \
        quad_fixed(d, dd, src, step, k, n);                                                   \
    }
TH_MAXPOOL_QUAD_FN(5)
TH_MAXPOOL_QUAD_FN(6)
TH_MAXPOOL_QUAD_FN(7)

/* d + j * dd (j < 4): the column maxima of output row j: a direct call per case. */
TH_INLINE void quad_rows_call(int8_t *d, int32_t dd, const int8_t *src, int32_t step,
                              int32_t rows, int32_t n)
{
    switch (rows) {
    case 5: quad_rows_5(d, dd, src, step, n); break;
    case 6: quad_rows_6(d, dd, src, step, n); break;
    default: quad_rows_7(d, dd, src, step, n); break;
    }
}

/* The clamped maximum of the words at q + j * ch, j < t (unrolled where t is a constant). */
TH_INLINE uint32_t word_taps(const int8_t *q, int32_t ch, int32_t t, uint32_t lo, uint32_t hi,
                             int clamp)
{
    uint32_t v = rd4(q);
    #pragma GCC unroll 8
    for (int32_t j = 1; j < t; j++) {
        v = max_s8x4(v, rd4(q + j * ch));
    }
    return clamp ? min_s8x4(max_s8x4(v, lo), hi) : v;
}

/* out[i] (i < n) = the clamped maximum of src[i + j * ch] over taps j < taps (a constant
 * 1..8 or, at 0, the variable count vtaps); n >= 4 ends with the word at n - 4. */
TH_INLINE void taps_fixed(int8_t *out, const int8_t *src, int32_t ch, int32_t taps,
                          int32_t vtaps, int32_t n, uint32_t lo, uint32_t hi, int clamp)
{
    const int32_t t = taps > 0 ? taps : vtaps;
    if (n < 4) {
        for (int32_t i = 0; i < n; i++) {
            int8_t v = src[i];
            #pragma GCC unroll 8
            for (int32_t j = 1; j < t; j++) {
                v = max_b(v, src[i + j * ch]);
            }
            if (clamp) {
                v = max_b(v, (int8_t)lo);
                v = v < (int8_t)hi ? v : (int8_t)hi;
            }
            out[i] = v;
        }
        return;
    }
    int32_t i = 0;
    for (;;) {
        for (; i + 4 <= n; i += 4) {
            th_write_s32(out + i, (int32_t)word_taps(src + i, ch, t, lo, hi, clamp));
        }
        if (i == n) {
            return;
        }
        i = n - 4; /* the last word, over bytes already written */
    }
}

/* Stride 1: the words at q and q + ch of two outputs a pixel apart (windows of t taps): the
 * taps 1..t-1 they share, then with tap 0 into out and tap t into out + ch. */
TH_INLINE void pair_word(int8_t *out, const int8_t *q, int32_t ch, int32_t t, uint32_t lo,
                         uint32_t hi, int clamp)
{
    uint32_t v = rd4(q + ch);
    #pragma GCC unroll 8
    for (int32_t j = 2; j < t; j++) {
        v = max_s8x4(v, rd4(q + j * ch));
    }
    uint32_t v0 = max_s8x4(v, rd4(q));
    uint32_t v1 = max_s8x4(v, rd4(q + t * ch));
    if (clamp) {
        v0 = min_s8x4(max_s8x4(v0, lo), hi);
        v1 = min_s8x4(max_s8x4(v1, lo), hi);
    }
    th_write_s32(out, (int32_t)v0);
    th_write_s32(out + ch, (int32_t)v1);
}

/* k blocks of the stride-1 row (row_fixed) from d (sources a and b as col_word's, s1 = ch):
 * words in pairs ch bytes apart (pair_word_rows), a block of w = ch rounded up to a multiple
 * of 4 bytes from d writing [d, d + ch + w), the next block from d + ch + w; one or two
 * pairs (w 4 or 8: no inner loop) or a loop over the block. */
TH_INLINE void pair_blocks(int8_t *d, const int8_t *a, const int8_t *b, int32_t k, int32_t ch,
                           int32_t w, int32_t taps, int32_t s1, int32_t s2, int32_t s3,
                           uint32_t lo, uint32_t hi, int clamp)
{
    const int32_t blk = ch + w;
    if (w == 4) {
        for (; k > 0; k--, a += blk, b += blk, d += blk) {
            pair_word_rows(d, s1, a, b, taps, s1, s2, s3, lo, hi, clamp);
        }
    } else if (w == 8) {
        for (; k > 0; k--, a += blk, b += blk, d += blk) {
            pair_word_rows(d, s1, a, b, taps, s1, s2, s3, lo, hi, clamp);
            pair_word_rows(d + 4, s1, a + 4, b + 4, taps, s1, s2, s3, lo, hi, clamp);
        }
    } else {
        for (; k > 0; k--, a += ch, b += ch, d += ch) {
            for (const int8_t *end = a + w; a < end; a += 4, b += 4, d += 4) {
                pair_word_rows(d, s1, a, b, taps, s1, s2, s3, lo, hi, clamp);
            }
        }
    }
}

/* The stride-1 row, flat: out[i] = the clamped maximum of src[i + j * ch] over the taps j
 * (taps a constant 1..7 or, at 0, vtaps) for i < n = count * ch, whatever pixel byte i is
 * in. Where sharing taps pays (two or more taps, and four or more channels, or two or more
 * with three or more taps), words go in pairs ch bytes apart: blocks of ch + w bytes
 * (pair_blocks; no gap as w >= ch: bytes past a pixel's end hold their own maxima). With a
 * constant tap count, a row of at least one block that blocks do not fill ends with one
 * more block ending at n (first: nothing stays live after the main loop), over bytes the
 * others write (the same values); else the bytes after the last whole block a word at a time
 * (taps_fixed). */
TH_INLINE void row_fixed(int8_t *out, const int8_t *src, int32_t ch, int32_t taps,
                         int32_t vtaps, int32_t count, uint32_t lo, uint32_t hi, int clamp)
{
    const int32_t t = taps > 0 ? taps : vtaps, n = count * ch;
    int32_t s = 0;
    if (t >= 2 && (ch >= 4 || (ch >= 2 && t >= 3))) {
        const int32_t w = (ch + 3) & ~3, blk = ch + w;
        if (taps > 0 && n >= blk) { /* col_word's loads: no address arithmetic */
            const int32_t blocks = n / blk, last = n - blk;
            TH_MAXPOOL_COLS(src, ch, taps + 1);
            if (blocks * blk < n) {
                pair_blocks(out + last, a + last, b + last, 1, ch, w, taps, s1, s2, s3, lo,
                            hi, clamp);
            }
            pair_blocks(out, a, b, blocks, ch, w, taps, s1, s2, s3, lo, hi, clamp);
            return;
        }
        for (; s + blk <= n; s += blk) {
            for (int32_t i = s; i < s + w; i += 4) {
                pair_word(out + i, src + i, ch, t, lo, hi, clamp);
            }
        }
    }
    if (s < n) {
        taps_fixed(out + s, src + s, ch, taps, vtaps, n - s, lo, hi, clamp);
    }
}

#if TH_NN_DSP_NATIVE
/* v = max(v, x) bytewise (t: SSUB8's result, only its GE flags used). */
#define TH_MP_MAX(x) "ssub8 %[t], %[v], %[" x "]\n\tsel %[v], %[v], %[" x "]\n\t"
/* One pair of words (pair_word_rows at taps T, unclamped) at a, d: rows 1..T-1 into v (row 4,
 * where T > 4, last: its load advances b), row T (y) with them into d + ch, row 0 (its load
 * advancing a) into d (then d += 4). Taps r < 4 at a + r * ch, the others at b + (r - 4) *
 * ch (col_word's layout). 3T + 3 instructions. */
#define TH_MP_PAIR_WORD                                                                       \
    "ldr %[v], [%[a], %[s1]]\n\t"                                                             \
    ".if %c[T] > 2\n\tldr %[x], [%[a], %[s2]]\n\t" TH_MP_MAX("x") ".endif\n\t"                \
    ".if %c[T] > 3\n\tldr %[x], [%[a], %[s3]]\n\t" TH_MP_MAX("x") ".endif\n\t"                \
    ".if %c[T] > 5\n\tldr %[x], [%[b], %[s1]]\n\t" TH_MP_MAX("x") ".endif\n\t"                \
    ".if %c[T] > 6\n\tldr %[x], [%[b], %[s2]]\n\t" TH_MP_MAX("x") ".endif\n\t"                \
    ".if %c[T] == 2\n\tldr %[y], [%[a], %[s2]]\n\t.endif\n\t"                                 \
    ".if %c[T] == 3\n\tldr %[y], [%[a], %[s3]]\n\t.endif\n\t"                                 \
    ".if %c[T] == 4\n\tldr %[y], [%[b]], #4\n\t.endif\n\t"                                    \
    ".if %c[T] == 5\n\tldr %[y], [%[b], %[s1]]\n\t.endif\n\t"                                 \
    ".if %c[T] == 6\n\tldr %[y], [%[b], %[s2]]\n\t.endif\n\t"                                 \
    ".if %c[T] == 7\n\tldr %[y], [%[b], %[s3]]\n\t.endif\n\t"                                 \
    ".if %c[T] > 4\n\tldr %[x], [%[b]], #4\n\t" TH_MP_MAX("x") ".endif\n\t"                   \
    "ssub8 %[t], %[v], %[y]\n\tsel %[y], %[v], %[y]\n\t"                                      \
    "str %[y], [%[d], %[s1]]\n\t"                                                             \
    "ldr %[x], [%[a]], #4\n\t"                                                                \
    "ssub8 %[t], %[v], %[x]\n\tsel %[x], %[v], %[x]\n\t"                                      \
    "str %[x], [%[d]], #4\n\t"

/* rows rows of row_fixed's pair blocks (taps a constant 2..7, w = ch rounded up to 4 bytes a
 * constant 4 or 8, n >= ch + w bytes a row), row r from src + r * dd into out + r * n (the
 * padded layout's output rows are adjacent). The geometry once a call; a row is one asm
 * loop over its blocks, the block ending at n (where blocks do not fill the row) after the
 * others by stepping the pointers back: gcc's C kept the block's pointers, offsets and count
 * in 14 registers and gave that last block its own spilling copy, plus a division and the
 * geometry every row (43x9x6 k5x6 s1 same: 243 instructions a row for 4 blocks of 42). */
TH_INLINE void rows_asm(int8_t *out, const int8_t *src, int32_t ch, int32_t w, int32_t taps,
                        int32_t n, int32_t rows, int32_t dd)
{
    const int32_t blk = ch + w, blocks = n / blk, rem = n - blocks * blk;
    const int32_t back = rem > 0 ? blk - rem : 0, s2 = 2 * ch, s3 = 3 * ch;
    for (; rows > 0; rows--, out += n, src += dd) {
        const int8_t *a = src, *b = taps >= 4 ? src + 4 * ch : src;
        int8_t *d = out;
        int32_t k = blocks, bk = back;
        uint32_t v, x, y, t;
        __asm__ volatile("1:\n\t" TH_MP_PAIR_WORD
                         ".if %c[W] == 8\n\t" TH_MP_PAIR_WORD ".endif\n\t"
                         "add %[a], %[a], %[s1]\n\t"
                         ".if %c[T] > 3\n\tadd %[b], %[b], %[s1]\n\t.endif\n\t"
                         "add %[d], %[d], %[s1]\n\t"
                         "subs %[k], %[k], #1\n\t"
                         "bne 1b\n\t"
                         "cbz %[bk], 2f\n\t" /* the block ending at n */
                         "sub %[a], %[a], %[bk]\n\t"
                         ".if %c[T] > 3\n\tsub %[b], %[b], %[bk]\n\t.endif\n\t"
                         "sub %[d], %[d], %[bk]\n\t"
                         "movs %[k], #1\n\t"
                         "movs %[bk], #0\n\t"
                         "b 1b\n"
                         "2:"
                         : [a] "+&r"(a), [b] "+&r"(b), [d] "+&r"(d), [k] "+&r"(k),
                           [bk] "+&l"(bk), [v] "=&r"(v), [x] "=&r"(x), [y] "=&r"(y),
                           [t] "=&r"(t)
                         : [s1] "r"(ch), [s2] "r"(s2), [s3] "r"(s3), [T] "i"(taps), [W] "i"(w)
                         : "cc", "memory");
    }
}
#endif

/* ---- Stride-1 row pass by running maxima (van Herk / Gil-Werman) ----------------------
 * One chain: the word at channel offset c of every output pixel, out pixel x = the maximum of
 * the words of pixels x..x+T-1 (taps T, ch bytes apart). Blocks of T outputs: the suffix
 * maxima of the block's T words (T - 1 maxima), then a running prefix maximum over the next
 * block's words (T - 2) and one maximum an output: 3T - 4 maxima and 2T - 1 loads for T
 * outputs, whatever T, where the pairs ch bytes apart (pair_word_rows: 3T + 3 instructions a
 * pair of words) grow with T. The words of a pixel: chains at 0 and ch - 4 (4-8 channels,
 * bytes ch - 4..3 computed twice). ch and T constants: every load at an immediate offset. */
TH_INLINE void vh_block(int8_t *o, const int8_t *q, int32_t ch, int32_t taps, int32_t r)
{
    uint32_t s[TH_MAXPOOL_ROW_TAPS];
    s[taps - 1] = rd4(q + (taps - 1) * ch);
#pragma GCC unroll 8
    for (int32_t j = taps - 2; j >= 0; j--) {
        s[j] = max_s8x4(rd4(q + j * ch), s[j + 1]);
    }
    th_write_s32(o, (int32_t)s[0]);
    uint32_t p = 0;
#pragma GCC unroll 8
    for (int32_t j = 1; j < taps; j++) {
        if (j >= r) { /* a block of r < T outputs (the chain's last): reads stop at its end */
            return;
        }
        const uint32_t u = rd4(q + (taps - 1 + j) * ch);
        p = j == 1 ? u : max_s8x4(p, u);
        th_write_s32(o + j * ch, (int32_t)max_s8x4(s[j], p));
    }
}

/* One block position (r outputs from o, sources from q) over rows rows: row j from
 * q + j * dd into o + j * n. */
TH_INLINE void vh_block_rows(int8_t *o, const int8_t *q, int32_t ch, int32_t taps, int32_t r,
                             int32_t rows, int32_t n, int32_t dd)
{
    for (; rows > 0; rows--, o += n, q += dd) {
        vh_block(o, q, ch, taps, r);
    }
}

/* rows rows of the stride-1 row pass by chains (ch 4..8, taps constants), row j from src + j * dd into out + j * count * ch. The rows are the inner loop (a block position's
 * pointers and a count, ~4 instructions a block) and the last block's size rem a constant
 * per case, chosen once a call: per row and chain, whole blocks then the rest, with the
 * rows outside, cost ~20 instructions a row more (loop tests, a switch, spills). */
TH_INLINE void vh_rows(int8_t *out, const int8_t *src, int32_t ch, int32_t taps,
                       int32_t count, int32_t rows, int32_t dd)
{
    const int32_t n = count * ch, rem = count % taps, whole = (count - rem) * ch;
    for (int32_t c = 0;; c = ch - 4) {
        int8_t *o = out + c;
        const int8_t *q = src + c;
        for (const int8_t *end = q + whole; q < end; q += taps * ch, o += taps * ch) {
            vh_block_rows(o, q, ch, taps, taps, rows, n, dd);
        }
        switch (rem) {
        case 0: break;
        case 1: vh_block_rows(o, q, ch, taps, 1, rows, n, dd); break;
        case 2: vh_block_rows(o, q, ch, taps, 2, rows, n, dd); break;
        case 3: vh_block_rows(o, q, ch, taps, 3, rows, n, dd); break;
        case 4: vh_block_rows(o, q, ch, taps, 4, rows, n, dd); break;
        case 5: vh_block_rows(o, q, ch, taps, 5, rows, n, dd); break;
        default: vh_block_rows(o, q, ch, taps, 6, rows, n, dd); break; /* taps 7 */
        }
        if (c == ch - 4) { /* the chains at 0 and ch - 4: one at 4 channels */
            return;
        }
    }
}

#define TH_MAXPOOL_VH_FN(c, k)                                                                \
    __attribute__((noinline)) static void vh_rows_##c##_##k(int8_t *out, const int8_t *src,  \
                                                            int32_t count, int32_t rows,      \
                                                            int32_t dd)                       \
    {                                                                                         \
        vh_rows(out, src, c, k, count, rows, dd);                                             \
    }
TH_MAXPOOL_VH_FN(4, 5)
TH_MAXPOOL_VH_FN(4, 6)
TH_MAXPOOL_VH_FN(4, 7)
TH_MAXPOOL_VH_FN(5, 6)
TH_MAXPOOL_VH_FN(5, 7)
TH_MAXPOOL_VH_FN(6, 5)
TH_MAXPOOL_VH_FN(6, 6)
TH_MAXPOOL_VH_FN(6, 7)
TH_MAXPOOL_VH_FN(7, 5)
TH_MAXPOOL_VH_FN(7, 6)
TH_MAXPOOL_VH_FN(7, 7)
TH_MAXPOOL_VH_FN(8, 5)
TH_MAXPOOL_VH_FN(8, 6)
TH_MAXPOOL_VH_FN(8, 7)

/* The chains where they take fewer instructions than the pairs (taps 5-7 at 4-8 channels,
 * but 5 channels at 5 taps: 2 chain words a pixel against the pairs' 1.54), else 0. */
TH_INLINE int vh_rows_call(int32_t taps, int8_t *out, const int8_t *src, int32_t ch,
                           int32_t count, int32_t rows, int32_t dd)
{
/* keep: the instance's TH_NN_PATH, written out per instance (the path lists are read from
 * the sources) */
#define TH_MAXPOOL_VH_TRY(c, k, keep)                                                         \
    if (taps == (k) && (keep)) {                                                              \
        vh_rows_##c##_##k(out, src, count, rows, dd);                                         \
        return 1;                                                                             \
    }
    switch (ch) {
    case 4:
        TH_MAXPOOL_VH_TRY(4, 5, TH_NN_PATH(MAX_VH_4_5))
        TH_MAXPOOL_VH_TRY(4, 6, TH_NN_PATH(MAX_VH_4_6))
        TH_MAXPOOL_VH_TRY(4, 7, TH_NN_PATH(MAX_VH_4_7))
        return 0;
    case 5: /* a window of 5 keeps the pair loop at 5 channels */
        TH_MAXPOOL_VH_TRY(5, 6, TH_NN_PATH(MAX_VH_5_6))
        TH_MAXPOOL_VH_TRY(5, 7, TH_NN_PATH(MAX_VH_5_7))
        return 0;
    case 6:
        TH_MAXPOOL_VH_TRY(6, 5, TH_NN_PATH(MAX_VH_6_5))
        TH_MAXPOOL_VH_TRY(6, 6, TH_NN_PATH(MAX_VH_6_6))
        TH_MAXPOOL_VH_TRY(6, 7, TH_NN_PATH(MAX_VH_6_7))
        return 0;
    case 7:
        TH_MAXPOOL_VH_TRY(7, 5, TH_NN_PATH(MAX_VH_7_5))
        TH_MAXPOOL_VH_TRY(7, 6, TH_NN_PATH(MAX_VH_7_6))
        TH_MAXPOOL_VH_TRY(7, 7, TH_NN_PATH(MAX_VH_7_7))
        return 0;
    case 8:
        TH_MAXPOOL_VH_TRY(8, 5, TH_NN_PATH(MAX_VH_8_5))
        TH_MAXPOOL_VH_TRY(8, 6, TH_NN_PATH(MAX_VH_8_6))
        TH_MAXPOOL_VH_TRY(8, 7, TH_NN_PATH(MAX_VH_8_7))
        return 0;
    default: return 0;
    }
#undef TH_MAXPOOL_VH_TRY
}

/* One function per tap count, as TH_MAXPOOL_PAIR_FN (no clamp: a clamped row takes the
 * variable count): a row. */
#define TH_MAXPOOL_ROW_FN(k)                                                                  \
    __attribute__((noinline)) static void row_taps_##k(int8_t *out, const int8_t *src,        \
                                                       int32_t ch, int32_t count)             \
    {                                                                                         \
        row_fixed(out, src, ch, k, k, count, 0, 0, 0);                                        \
    }
TH_MAXPOOL_ROW_FN(1)
TH_MAXPOOL_ROW_FN(2)
TH_MAXPOOL_ROW_FN(3)
TH_MAXPOOL_ROW_FN(4)
TH_MAXPOOL_ROW_FN(5)
TH_MAXPOOL_ROW_FN(6)
TH_MAXPOOL_ROW_FN(7)

#if TH_NN_DSP_NATIVE
/* rows_asm applies (row_fixed's pairs with w 4 or 8: 2-8 channels); ch <= 8 first, the
 * wider rows' only extra test. */
#define TH_MAXPOOL_ASM_ROWS(k)                                                                \
    if (ch <= 8 && (k) >= 2 && (ch >= 4 || (ch >= 2 && (k) >= 3)) &&                          \
        n >= ch + ((ch + 3) & ~3)) {                                                          \
        if (ch <= 4) {                                                                        \
            rows_asm(out, src, ch, 4, (k), n, rows, dd);                                      \
        } else {                                                                              \
            rows_asm(out, src, ch, 8, (k), n, rows, dd);                                      \
        }                                                                                     \
        return;                                                                               \
    }
#else
#define TH_MAXPOOL_ASM_ROWS(k)
#endif

/* rows rows of row_taps_<k>, row r from src + r * dd into out + r * n (n = count * ch: the
 * padded layout's output rows are adjacent); on Armv7E-M rows_asm where it applies. */
#define TH_MAXPOOL_TAPS_FN(k)                                                                 \
    __attribute__((noinline)) static void taps_row_##k(int8_t *out, const int8_t *src,        \
                                                       int32_t ch, int32_t count,             \
                                                       int32_t rows, int32_t dd)              \
    {                                                                                         \
        const int32_t n = count * ch;                                                         \
        TH_MAXPOOL_ASM_ROWS(k)                                                                \
        for (; rows > 0; rows--, out += n, src += dd) {                                       \
            row_taps_##k(out, src, ch, count);                                                \
        }                                                                                     \
    }
TH_MAXPOOL_TAPS_FN(1)
TH_MAXPOOL_TAPS_FN(2)
TH_MAXPOOL_TAPS_FN(3)
TH_MAXPOOL_TAPS_FN(4)
TH_MAXPOOL_TAPS_FN(5)
TH_MAXPOOL_TAPS_FN(6)
TH_MAXPOOL_TAPS_FN(7)

/* taps_row_<k> (k 5..7) or, where vh_rows_call applies, the chains: a function of its own,
 * taps_row_<k>'s rows loop keeping its registers (the test inside it spilled them: 34x48x7
 * k7x5 s1 valid +8%). */
#define TH_MAXPOOL_VH_TAPS_FN(k)                                                              \
    __attribute__((noinline)) static void taps_vh_##k(int8_t *out, const int8_t *src,         \
                                                      int32_t ch, int32_t count,              \
                                                      int32_t rows, int32_t dd)               \
    {                                                                                         \
        if (!vh_rows_call((k), out, src, ch, count, rows, dd)) {                              \
            taps_row_##k(out, src, ch, count, rows, dd);                                      \
        }                                                                                     \
    }
TH_MAXPOOL_VH_TAPS_FN(5)
TH_MAXPOOL_VH_TAPS_FN(6)
TH_MAXPOOL_VH_TAPS_FN(7)

/* Rows r < rows of row_taps_<k>, from src + r * dd into out + r * n. */
#define TH_MAXPOOL_TAPS_ROWS(k)                                                               \
    for (; rows > 0; rows--, out += n, src += dd) {                                           \
        row_taps_##k(out, src, ch, count);                                                    \
    }                                                                                         \
    return 1

/* The stride-1 row pass (unclamped) of rows rows, row r from src + r * dd into out + r * n
 * (n = count * ch: the padded layout's output rows are adjacent), taps 1..TH_MAXPOOL_ROW_TAPS,
 * else 0 (nothing done): up to 8 channels taps_row_<taps> (the rows' loop in the callee:
 * rows_asm), more a row at a time (row_taps_<taps>, as before rows_asm: the callee's loop
 * and arguments cost ~30 instructions a call there); a direct call per case (the stack
 * bound's call graph sees every target, as it would not a pointer's). */
TH_INLINE int taps_rows(int32_t taps, int8_t *out, const int8_t *src, int32_t ch,
                        int32_t count, int32_t rows, int32_t dd)
{
    const int32_t n = count * ch;
    if (ch <= 8) {
        switch (taps) {
        case 1: taps_row_1(out, src, ch, count, rows, dd); return 1;
        case 2: taps_row_2(out, src, ch, count, rows, dd); return 1;
        case 3: taps_row_3(out, src, ch, count, rows, dd); return 1;
        case 4: taps_row_4(out, src, ch, count, rows, dd); return 1;
        case 5: taps_vh_5(out, src, ch, count, rows, dd); return 1;
        case 6: taps_vh_6(out, src, ch, count, rows, dd); return 1;
        case 7: taps_vh_7(out, src, ch, count, rows, dd); return 1;
        default: return 0;
        }
    }
    switch (taps) {
    case 1: TH_MAXPOOL_TAPS_ROWS(1);
    case 2: TH_MAXPOOL_TAPS_ROWS(2);
    case 3: TH_MAXPOOL_TAPS_ROWS(3);
    case 4: TH_MAXPOOL_TAPS_ROWS(4);
    case 5: TH_MAXPOOL_TAPS_ROWS(5);
    case 6: TH_MAXPOOL_TAPS_ROWS(6);
    case 7: TH_MAXPOOL_TAPS_ROWS(7);
    default: return 0;
    }
}

/* One row of taps_rows. */
TH_INLINE int taps_row_call(int32_t taps, int8_t *out, const int8_t *src, int32_t ch,
                            int32_t count)
{
    return taps_rows(taps, out, src, ch, count, 1, 0);
}

__attribute__((noinline)) static void max_taps(int8_t *out, const int8_t *src, int32_t ch,
                                               int32_t taps, int32_t count, uint32_t lo,
                                               uint32_t hi, int clamp)
{
    if (!taps_row_call(clamp ? 0 : taps, out, src, ch, count)) {
        row_fixed(out, src, ch, 0, taps, count, lo, hi, clamp);
    }
}

/* count pixels of ch >= 4 channels, step bytes apart in src, each the maximum of taps
 * pixels (a constant 2..7 or, at 0, vtaps), four channels a word (the last word of a pixel
 * ending at its last byte). */
TH_INLINE void strided_fixed(int8_t *out, const int8_t *src, int32_t ch, int32_t step,
                             int32_t taps, int32_t vtaps, int32_t count, uint32_t lo,
                             uint32_t hi, int clamp)
{
    const int32_t t = taps > 0 ? taps : vtaps;
    for (int32_t k = 0; k < count; k++, out += ch, src += step) {
        for (int32_t c = 0; c < ch; c += 4) {
            c = c + 4 > ch ? ch - 4 : c;
            th_write_s32(out + c, (int32_t)word_taps(src + c, ch, t, lo, hi, clamp));
        }
    }
}

/* strided_fixed with the tap count fw made a constant for 2..7 (its loads unrolled). */
#define TH_MAXPOOL_STRIDED_TAPS(c)                                                            \
    switch (fw) {                                                                             \
    case 2: strided_fixed(out, src, (c), step, 2, 2, count, lo, hi, clamp); break;            \
    case 3: strided_fixed(out, src, (c), step, 3, 3, count, lo, hi, clamp); break;            \
    case 4: strided_fixed(out, src, (c), step, 4, 4, count, lo, hi, clamp); break;            \
    case 5: strided_fixed(out, src, (c), step, 5, 5, count, lo, hi, clamp); break;            \
    case 6: strided_fixed(out, src, (c), step, 6, 6, count, lo, hi, clamp); break;            \
    case 7: strided_fixed(out, src, (c), step, 7, 7, count, lo, hi, clamp); break;            \
    default: strided_fixed(out, src, (c), step, 0, fw, count, lo, hi, clamp); break;          \
    }

/* max_row_strided's packed pixels of ch = 1..3 channels, span = fw * ch >= 4 bytes (ch and
 * fw constants in each specialization: the window's loads unrolled). */
TH_INLINE void packed_fixed(int8_t *out, const int8_t *src, int32_t ch, int32_t step,
                            int32_t fw, int32_t count, uint32_t lo, uint32_t hi, int clamp)
{
    const int32_t span = fw * ch, wstep = ch == 3 ? 3 : 4;
    for (int32_t k = 0; k < count; k++, out += ch, src += step) {
        uint32_t v = rd4(src);
        int32_t off = wstep;
        #pragma GCC unroll 8
        for (; off + 4 <= span; off += wstep) {
            v = max_s8x4(v, rd4(src + off));
        }
        if (off < span) { /* the word ending at the window's last byte */
            uint32_t last = rd4(src + span - 4);
            if (ch == 3) {
                last = (last >> 8) | (last << 24);
            }
            v = max_s8x4(v, last);
        }
        if (ch == 1) {
            v = max_s8x4(v, v >> 16);
            v = max_s8x4(v, v >> 8);
        } else if (ch == 2) {
            v = max_s8x4(v, v >> 16);
        }
        if (clamp) {
            v = min_s8x4(max_s8x4(v, lo), hi);
        }
        out[0] = (int8_t)v;
        if (ch >= 2) {
            out[1] = (int8_t)(v >> 8);
        }
        if (ch == 3) {
            out[2] = (int8_t)(v >> 16);
        }
    }
}

/* packed_fixed with ch (1..3) a constant and fw one for 2..7. */
#define TH_MAXPOOL_PACKED_TAPS(c)                                                             \
    switch (fw) {                                                                             \
    case 2: packed_fixed(out, src, (c), step, 2, count, lo, hi, clamp); break;                \
    case 3: packed_fixed(out, src, (c), step, 3, count, lo, hi, clamp); break;                \
    case 4: packed_fixed(out, src, (c), step, 4, count, lo, hi, clamp); break;                \
    case 5: packed_fixed(out, src, (c), step, 5, count, lo, hi, clamp); break;                \
    case 6: packed_fixed(out, src, (c), step, 6, count, lo, hi, clamp); break;                \
    case 7: packed_fixed(out, src, (c), step, 7, count, lo, hi, clamp); break;                \
    default: packed_fixed(out, src, (c), step, fw, count, lo, hi, clamp); break;              \
    }

/* count output pixels a stride of sw pixels apart, every window unclipped: out pixel k = the
 * clamped maximum of the fw pixels of ch bytes from src + k * sw * ch. Four channels a word;
 * a pixel of fewer than four channels whose window spans at least four bytes packs taps
 * into words instead (words at multiples of ch, 1 and 2 channels folded from the word's
 * halves, 3 channels with the last word ending at the window's last byte, rotated so its
 * bytes 0-2 are channels 0-2), never reading outside the window. */
static void max_row_strided(int8_t *out, const int8_t *src, int32_t ch, int32_t sw,
                            int32_t fw, int32_t count, uint32_t lo, uint32_t hi, int clamp)
{
    const int32_t span = fw * ch, step = sw * ch;
    if (ch >= 4) {
        /* ch a literal 4: a pixel a word, no channel loop */
        if (ch == 4) {
            TH_MAXPOOL_STRIDED_TAPS(4);
        } else {
            TH_MAXPOOL_STRIDED_TAPS(ch);
        }
        return;
    }
    if (span < 4) {
        for (int32_t k = 0; k < count; k++, out += ch, src += step) {
            for (int32_t c = 0; c < ch; c++) {
                int32_t v = src[c];
                for (int32_t j = 1; j < fw; j++) {
                    v = TH_MAX(v, src[c + j * ch]);
                }
                out[c] = (int8_t)(clamp ? th_clamp(v, (int8_t)lo, (int8_t)hi) : v);
            }
        }
        return;
    }
    if (ch == 1) {
        TH_MAXPOOL_PACKED_TAPS(1);
    } else if (ch == 2) {
        TH_MAXPOOL_PACKED_TAPS(2);
    } else {
        TH_MAXPOOL_PACKED_TAPS(3);
    }
}

/* One output row from its column maxima cm: padded, columns -pw .. L - pw - 1 (every
 * window unclipped, the padding's columns -128: the maximum over valid taps, as each window
 * has one); else input columns 0..W-1. */
static void max_row_out(const th_pool_params *p, const th_dims *in, const th_dims *out,
                        const int8_t *cm, int8_t *dst, uint32_t lo, uint32_t hi, int clamp,
                        int padded)
{
    const int32_t ch = in->c, sw = p->stride.w, fw = p->filter.w, pw = p->padding.w;
    if (padded) {
        if (sw == 1) {
            max_taps(dst, cm, ch, fw, out->w, lo, hi, clamp);
            return;
        }
        max_row_strided(dst, cm, ch, sw, fw, out->w, lo, hi, clamp);
        return;
    }
    /* pixels [a, b) have unclipped windows (origin ox * sw - pw >= 0, end <= W) */
    const int32_t a = TH_MIN((pw + sw - 1) / sw, out->w);
    const int32_t b = in->w - fw + pw < 0 ? a
                                          : TH_MAX(a, TH_MIN(out->w, (in->w - fw + pw) / sw + 1));
    for (int32_t ox = 0; ox < out->w; ox++) {
        if (ox == a && b > a) {
            if (sw == 1) {
                max_taps(dst + a * ch, cm + (a - pw) * ch, ch, fw, b - a, lo, hi, clamp);
            } else {
                max_row_strided(dst + a * ch, cm + (a * sw - pw) * ch, ch, sw, fw, b - a, lo,
                                hi, clamp);
            }
            ox = b - 1;
            continue;
        }
        const th_nn_window wx = th_nn_window_at(ox, sw, pw, fw, in->w);
        const int32_t xs = wx.origin + wx.start;
        if (wx.end <= wx.start) {
            memset(dst + ox * ch, -128, (size_t)ch); /* TFLM's initial value */
            if (clamp) {
                clamp_pixel(dst + ox * ch, ch, p->activation.min, p->activation.max);
            }
            continue;
        }
        max_taps(dst + ox * ch, cm + xs * ch, ch, wx.end - wx.start, 1, lo, hi, clamp);
    }
}

/* One output row of a chain (max_chains) from its column maxima cm (padded, cm - c0 the
 * layout's start), or with no window row (any: rows 0) -128s, clamped. */
static void max_chain_row(const th_pool_params *p, const th_dims *in, const th_dims *out,
                          const int8_t *cm, int8_t *dst, uint32_t lo, uint32_t hi, int clamp,
                          int any)
{
    if (any) {
        max_row_out(p, in, out, cm, dst, lo, hi, clamp, 1);
        return;
    }
    memset(dst, -128, (size_t)(out->w * in->c)); /* TFLM's initial value */
    if (clamp) {
        clamp_pixel(dst, out->w * in->c, p->activation.min, p->activation.max);
    }
}

/* Two rows of a chain from cm and cm1 (both with window rows) into dst and the row after:
 * unclamped at stride 1 one taps_rows, else max_chain_row twice. */
TH_INLINE void max_chain_pair(const th_pool_params *p, const th_dims *in, const th_dims *out,
                              const int8_t *cm, const int8_t *cm1, int8_t *dst, uint32_t lo,
                              uint32_t hi, int clamp)
{
    const int32_t orow = out->w * in->c;
    if (!clamp && p->stride.w == 1 &&
        taps_rows(p->filter.w, dst, cm, in->c, out->w, 2, (int32_t)(cm1 - cm))) {
        return;
    }
    max_chain_row(p, in, out, cm, dst, lo, hi, clamp, 1);
    max_chain_row(p, in, out, cm1, dst + orow, lo, hi, clamp, 1);
}

/* The padding's -128s of a row of the padded layout, bytes [0, c0) and [c1, end) (end the
 * layout's bytes, the row's scratch round_up4(end)): where both sides have up to 32 bytes
 * (small), as words, no memset call (~40 instructions each on small planes; past 32 bytes
 * memset takes fewer): from 0 past c0 and ending at end back past c1 (c1 >= 4 there), over
 * bytes of [c0, c1) that the column pass writes before any read, or of the padding. */
TH_INLINE int pad_small(int32_t c0, int32_t c1, int32_t end)
{
    return c0 <= 32 && end - c1 <= 32 && c1 >= 4;
}

static void pad_fill(int8_t *r, int32_t c0, int32_t c1, int32_t end)
{
    uint32_t fill = 0x80808080u;
    __asm__("" : "+r"(fill)); /* else gcc makes the loops memset calls again */
    for (int32_t j = 0; j < c0; j += 4) {
        th_write_s32(r + j, (int32_t)fill);
    }
    for (int32_t j = end; j > c1; j -= 4) {
        th_write_s32(r + j - 4, (int32_t)fill);
    }
}

/* The padding's -128s of the padded layout's rows r and r1 (NULL: none), bytes [0, c0) and
 * [c1, end): pad_fill's words where pad_small, else memset. */
TH_INLINE void pad_rows(int8_t *r, int8_t *r1, int32_t c0, int32_t c1, int32_t end)
{
    if (pad_small(c0, c1, end)) {
        pad_fill(r, c0, c1, end);
        if (r1 != NULL) {
            pad_fill(r1, c0, c1, end);
        }
        return;
    }
    for (int32_t k = 0; k < (r1 != NULL ? 2 : 1); k++) {
        int8_t *q = k == 0 ? r : r1;
        memset(q, -128, (size_t)c0);
        memset(q + c1, -128, (size_t)(end - c1));
    }
}

/* A padded row's row pass in max_rows_padded: taps_row_<KW> at stride.w 1, else the strided
 * loop (max_row_strided). */
TH_INLINE void padded_row(int8_t *dst, const int8_t *cm, int32_t ch, int32_t sw, int32_t fw,
                          int32_t ow, uint32_t lo, uint32_t hi, int clamp)
{
    if (sw == 1) {
        taps_row_call(fw, dst, cm, ch, ow);
    } else {
        max_row_strided(dst, cm, ch, sw, fw, ow, lo, hi, clamp);
    }
}

/* Output rows [ya, yb) (unclipped windows) of a padded layout at stride.w > 1, or at stride.w
 * 1 unclamped with KW <= TH_MAXPOOL_ROW_TAPS: the column maxima into cm, two rows a pass
 * into cm and cm1 (not NULL: stride.h 1), then padded_row over them. Out of line with the
 * row pass resolved once: per row, max_row_out's window sums and its callees' arguments on
 * the stack cost ~55-70 instructions, and inlined into th_maxpool_s8 its registers spilled. */
#if defined(__clang__)
static void __attribute__((noinline)) /* clang (the fuzz builds) has no noclone */
#else
static void __attribute__((noinline, noclone)) /* not split into more arguments (IPA-SRA) */
#endif
max_rows_padded(const th_maxpool_prep *k, const int8_t *image, int8_t *cm, int8_t *cm1,
                int8_t *dst, int32_t ya, int32_t yb)
{
    const th_pool_params *p = &k->params;
    const int32_t ch = k->in.c, ow = k->out.w, step = k->in.w * ch, orow = ow * ch;
    const int32_t fh = p->filter.h, fw = p->filter.w, sw = p->stride.w;
    const int clamp = k->clamp;
    const uint32_t lo = (uint32_t)(uint8_t)(int8_t)p->activation.min * 0x01010101u;
    const uint32_t hi = (uint32_t)(uint8_t)(int8_t)p->activation.max * 0x01010101u;
    const int32_t c0 = k->c0, c1 = c0 + k->span, span = k->span;
    const int8_t *src = image + (ya * p->stride.h - p->padding.h) * step + c0 -
                        p->padding.w * ch;
    int32_t y = ya;
    if (cm1 != NULL) {
        const int32_t dd = (int32_t)(cm1 - cm);
        /* four rows given where max_fast_rows says so (cm1 given: stride.h 1, KH <= 7) */
        const int quad = k->rows == 4;
        if (quad && y + 4 <= yb) { /* rows 2-3's padding: only where the quads run */
            pad_rows(cm + 2 * dd, cm + 3 * dd, c0, c1, k->cols);
        }
        for (; quad && y + 4 <= yb; y += 4, src += 4 * step, dst += 4 * orow) {
            quad_rows_call(cm + c0, dd, src, step, fh, span);
            if (sw == 1 && taps_rows(fw, dst, cm, ch, ow, 4, dd)) {
                continue; /* the four rows in one call (taps_rows) */
            }
            for (int32_t j = 0; j < 4; j++) {
                padded_row(dst + j * orow, cm + j * dd, ch, sw, fw, ow, lo, hi, clamp);
            }
        }
        for (; y + 2 <= yb; y += 2, src += 2 * step, dst += 2 * orow) {
            pair_rows_call(cm + c0, dd, src, step, fh, span);
            if (sw == 1 && taps_rows(fw, dst, cm, ch, ow, 2, dd)) {
                continue;
            }
            padded_row(dst, cm, ch, sw, fw, ow, lo, hi, clamp);
            padded_row(dst + orow, cm1, ch, sw, fw, ow, lo, hi, clamp);
        }
    }
    for (const int32_t sstep = p->stride.h * step; y < yb; y++, src += sstep, dst += orow) {
        max_cols(cm + c0, src, step, fh, span);
        padded_row(dst, cm, ch, sw, fw, ow, lo, hi, clamp);
    }
}

/* Two nested windows' column maxima in one pass: the maximum of rows 0..shared-1 from src
 * (shared a constant 1..5, row step step) into ds, and of those and the row at src + eo into
 * ds + dd (the tail as cols_fixed's). The clipped top pair (the window and the one a row
 * longer) and bottom pair (the row above added) of max_top_pair and max_bottom_pair: one
 * loop where max_cols and max_of2 were two passes with a call each (4x4x20 k4x3 s1 same:
 * ~80 instructions a pair). */
TH_INLINE void edge_fixed(int8_t *ds, int32_t dd, const int8_t *src, int32_t step, int32_t eo,
                          int32_t shared, int32_t n)
{
    if (n < 4) {
        for (int32_t i = 0; i < n; i++) {
            int8_t v = src[i];
            for (int32_t r = 1; r < shared; r++) {
                v = max_b(v, src[r * step + i]);
            }
            ds[i] = v;
            ds[dd + i] = max_b(v, src[eo + i]);
        }
        return;
    }
    TH_MAXPOOL_COLS(src, step, shared);
    __asm__("" : "+r"(eo)); /* in a register over the loop (gcc reloaded it a word) */
    const int8_t *end = src + (n & ~3);
    if ((n & 3) != 0) { /* the last word first, as cols_fixed's */
        const int32_t last = n - 4;
        const uint32_t v = cols_word(NULL, a + last, b + last, shared, 0, s1, s2, s3);
        th_write_s32(ds + last, (int32_t)v);
        th_write_s32(ds + last + dd, (int32_t)max_s8x4(v, rd4(a + last + eo)));
    }
    for (; a < end; a += 4, b += 4, ds += 4) {
        const uint32_t v = cols_word(NULL, a, b, shared, 0, s1, s2, s3);
        th_write_s32(ds, (int32_t)v);
        th_write_s32(ds + dd, (int32_t)max_s8x4(v, rd4(a + eo)));
    }
}

#define TH_MAXPOOL_EDGE_FN(k)                                                                 \
    __attribute__((noinline)) static void edge_rows_##k(int8_t *ds, int32_t dd,               \
                                                        const int8_t *src, int32_t step,      \
                                                        int32_t eo, int32_t n)                \
    {                                                                                         \
        edge_fixed(ds, dd, src, step, eo, k, n);                                              \
    }
TH_MAXPOOL_EDGE_FN(1)
TH_MAXPOOL_EDGE_FN(2)
TH_MAXPOOL_EDGE_FN(3)
TH_MAXPOOL_EDGE_FN(4)
TH_MAXPOOL_EDGE_FN(5)

/* edge_rows_<shared> (1..5), else 0 (nothing done): a direct call per case. The pairs run
 * where the fast scratch has two rows (KH <= TH_MAXPOOL_PAIR_ROWS) and both windows are
 * clipped, the top pair's after two or more rows of padding: at most KH - 2 rows shared. */
TH_INLINE int edge_rows_call(int8_t *ds, int32_t dd, const int8_t *src, int32_t step,
                             int32_t eo, int32_t shared, int32_t n)
{
    switch (shared) {
    case 1: edge_rows_1(ds, dd, src, step, eo, n); return 1;
    case 2: edge_rows_2(ds, dd, src, step, eo, n); return 1;
    case 3: edge_rows_3(ds, dd, src, step, eo, n); return 1;
    case 4: edge_rows_4(ds, dd, src, step, eo, n); return 1;
    case 5: edge_rows_5(ds, dd, src, step, eo, n); return 1;
    default: return 0;
    }
}

/* dst[i] = max(a[i], b[i]) for i < n (dst overlapping neither): a word at a time, a count
 * that is not a multiple of four ending with the word at n - 4 (first, its bytes written
 * again with the same values), under four bytes a byte at a time. One pass where a copy and
 * a maximum into it (max_cols, max_cols_acc) were two, with a call each. */
TH_INLINE void max_of2(int8_t *dst, const int8_t *a, const int8_t *b, int32_t n)
{
    if (n < 4) {
        for (int32_t i = 0; i < n; i++) {
            dst[i] = max_b(a[i], b[i]);
        }
        return;
    }
    const int32_t last = n - 4;
    th_write_s32(dst + last, (int32_t)max_s8x4(rd4(a + last), rd4(b + last)));
    for (int32_t i = 0; i < last; i += 4) {
        th_write_s32(dst + i, (int32_t)max_s8x4(rd4(a + i), rd4(b + i)));
    }
}

/* Two top rows' column maxima (stride.h 1, the second window one row longer): rows
 * [0, rows) of src into d, with row `rows` too into d1 (max_of2). One call where max_cols
 * and max_cols_acc were two (4x4x20 k4x3 s1 same: 65 instructions fewer). */
__attribute__((noinline)) static void max_top_pair(int8_t *d, int8_t *d1, const int8_t *src,
                                                   int32_t step, int32_t rows, int32_t n)
{
    if (edge_rows_call(d, (int32_t)(d1 - d), src, step, rows * step, rows, n)) {
        return;
    }
    max_cols(d, src, step, rows, n);
    max_of2(d1, d, src + rows * step, n);
}

/* The padded layout's output rows [0, y0), whose windows start at input row 0 (origin <= 0):
 * one chain, a row's column maxima the previous row's with the rows its window adds
 * (max_cols_acc), so the run reads each input row once, in ascending order (th_nn.h (c));
 * with cm1 (stride.h 1) its first two rows in one pass (max_top_pair, read before either is
 * written: th_nn.h (c)'s early reads), the chain then in cm1. src: input row 0 at the first
 * computed byte, cm + c0; a window with no row gives -128s. */
static void max_chain_top(const th_pool_params *p, const th_dims *in, const th_dims *out,
                          const int8_t *src, int8_t *cm, int8_t *cm1, int32_t c0, int32_t span,
                          int8_t *dst, int32_t y0, uint32_t lo, uint32_t hi, int clamp)
{
    const int32_t row = in->w * in->c, orow = out->w * in->c;
    int32_t done = 0; /* cm holds rows [0, done) */
    const int32_t ye0 = TH_MIN(in->h, p->filter.h - p->padding.h);
    if (cm1 != NULL && y0 >= 2 && ye0 > 0 && ye0 < in->h) {
        /* rows 0 and 1 (stride.h 1: windows [0, ye0) and [0, ye0 + 1)) in one pass, the
         * chain going on from cm1 */
        max_top_pair(cm + c0, cm1 + c0, src, row, ye0, span);
        max_chain_pair(p, in, out, cm, cm1, dst, lo, hi, clamp);
        if (y0 == 2) {
            return;
        }
        /* cm1's rows are the chain's: a copy would cost what the pair saved, so the rest
         * runs on cm1 */
        cm = cm1;
        done = ye0 + 1;
        dst += 2 * orow;
        for (int32_t oy = 2; oy < y0; oy++, dst += orow) {
            const int32_t ye = TH_MIN(in->h, oy - p->padding.h + p->filter.h);
            if (ye > done) {
                max_cols_acc(cm + c0, src + done * row, row, ye - done, span);
                done = ye;
            }
            max_chain_row(p, in, out, cm, dst, lo, hi, clamp, 1);
        }
        return;
    }
    for (int32_t oy = 0; oy < y0; oy++, dst += orow) {
        const int32_t ye = TH_MIN(in->h, oy * p->stride.h - p->padding.h + p->filter.h);
        if (ye > done) {
            if (done > 0) {
                max_cols_acc(cm + c0, src + done * row, row, ye - done, span);
            } else {
                max_cols(cm + c0, src, row, ye, span);
            }
            done = ye;
        }
        max_chain_row(p, in, out, cm, dst, lo, hi, clamp, done > 0);
    }
}

/* Two bottom rows' column maxima: rows [1, rows) of src (row step step) into d1, with row 0
 * too into d (max_of2). Out of line: max_rows_bottom's loop (inlined into th_maxpool_s8)
 * keeps the registers it had with one call here. */
__attribute__((noinline)) static void max_bottom_pair(int8_t *d, int8_t *d1, const int8_t *src,
                                                      int32_t step, int32_t rows, int32_t n)
{
    if (edge_rows_call(d1, (int32_t)(d - d1), src + step, step, -step, rows - 1, n)) {
        return;
    }
    max_cols(d1, src + step, step, rows - 1, n);
    max_of2(d, d1, src, n);
}

/* Output rows [y1, OH) of the padded layout, whose windows [ys, H) are cut by the bottom:
 * where cm1 is given (stride.h 1), two a pass, the second row's rows [ys + 1, H) into cm1,
 * the first's cm1's with row ys (max_of2; read before either output row is written: th_nn.h
 * (c)'s early reads); else a row at a time. src and dst: as max_chain_top's (dst at row y1). */
static void max_rows_bottom(const th_pool_params *p, const th_dims *in, const th_dims *out,
                            const int8_t *src, int8_t *cm, int8_t *cm1, int32_t c0,
                            int32_t span, int8_t *dst, int32_t y1, uint32_t lo, uint32_t hi,
                            int clamp)
{
    const int32_t row = in->w * in->c, orow = out->w * in->c, h = in->h;
    for (int32_t oy = y1; oy < out->h; oy++, dst += orow) {
        const int32_t ys = oy * p->stride.h - p->padding.h; /* >= 0: below the top rows */
        if (ys >= h) {
            max_chain_row(p, in, out, cm, dst, lo, hi, clamp, 0);
        } else if (cm1 != NULL && oy + 1 < out->h && ys + 1 < h) {
            max_bottom_pair(cm + c0, cm1 + c0, src + ys * row, row, h - ys, span);
            max_chain_pair(p, in, out, cm, cm1, dst, lo, hi, clamp);
            dst += orow;
            oy++;
        } else {
            max_cols(cm + c0, src + ys * row, row, h - ys, span);
            max_chain_row(p, in, out, cm, dst, lo, hi, clamp, 1);
        }
    }
}

/* padded: cm (and cm1) hold max_padded_cols columns from input column -pw; cm1: the second
 * row (NULL: none). Output rows [ya, yb) (windows of KH rows inside the image) in one call
 * where max_rows_padded's row pass applies;
 * the others a row at a time, two where both windows are unclipped (stride 1). */
static void max_lanes_image(const th_maxpool_prep *k, const int8_t *image, int8_t *dst,
                            int8_t *cm, int8_t *cm1)
{
    const th_pool_params *p = &k->params;
    const th_dims *in = &k->in, *out = &k->out;
    const int32_t in_w = in->w, ch = in->c, row = in_w * ch, orow = out->w * ch;
    const int32_t act_min = p->activation.min, act_max = p->activation.max;
    const int clamp = k->clamp, padded = k->fast > 0;
    const uint32_t lo = (uint32_t)(uint8_t)(int8_t)act_min * 0x01010101u;
    const uint32_t hi = (uint32_t)(uint8_t)(int8_t)act_max * 0x01010101u;
    const int32_t fh = p->filter.h, sh = p->stride.h, ph = p->padding.h;
    /* the columns computed from the input: cm bytes [c0, c0 + span), input bytes from
     * c0 - off (th_maxpool_s8_prepare) */
    const int32_t c0 = k->c0, span = k->span, off = padded ? p->padding.w * ch : 0;
    if (padded) {
        pad_rows(cm, cm1, c0, c0 + span, k->cols);
    }
    const int chains = padded && span > 0;
    const int32_t ya = k->ya, yb = k->yb;
    const int rows_padded = k->rows_padded;
    const int32_t yend = chains ? yb : out->h;
    if (chains && ya > 0) {
        max_chain_top(p, in, out, image + c0 - off, cm, cm1, c0, span, dst, ya, lo, hi, clamp);
        dst += ya * orow;
    }
    for (int32_t oy = chains ? ya : 0; oy < yend; oy++) {
        if (oy == ya && yb - ya >= 2 && rows_padded) { /* one row: its setup would not pay */
            max_rows_padded(k, image, cm, cm1, dst, ya, yb);
            dst += (yb - ya) * orow;
            oy = yb - 1;
            continue;
        }
        const th_nn_window wy = th_nn_window_at(oy, sh, ph, fh, in->h);
        const int32_t ys = wy.origin + wy.start, ye = wy.origin + wy.end;
        const int8_t *src = image + ys * row + c0 - off;
        if (cm1 != NULL && oy + 1 < yend && ye - ys == fh && ye < in->h && span > 0) {
            /* this row's window and the next one's, both unclipped (stride 1) */
            max_pair_rows(cm + c0, (int32_t)(cm1 - cm), src, row, fh, span);
            max_row_out(p, in, out, cm, dst, lo, hi, clamp, padded);
            max_row_out(p, in, out, cm1, dst + orow, lo, hi, clamp, padded);
            dst += 2 * orow;
            oy++;
            continue;
        }
        if (ye <= ys || span <= 0) {
            memset(dst, -128, (size_t)orow); /* every window in the padding */
            if (clamp) {
                clamp_pixel(dst, orow, act_min, act_max);
            }
        } else {
            max_cols(cm + c0, src, row, ye - ys, span);
            max_row_out(p, in, out, cm, dst, lo, hi, clamp, padded);
        }
        dst += orow;
    }
    if (chains && yb < out->h) {
        max_rows_bottom(p, in, out, image + c0 - off, cm, cm1, c0, span, dst, yb, lo, hi, clamp);
    }
}
#endif

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* Every image through max_lanes_image: padded where fast > 0 (the fast scratch given), its
 * second (and third and fourth) row of column maxima where the fast size has them. */
static void max_lanes(const th_context *ctx, const th_maxpool_prep *k, const int8_t *input,
                      int8_t *output)
{
    const th_dims *in = &k->in, *out = &k->out;
    const int32_t image_in = in->h * in->w * in->c, image_out = out->h * out->w * out->c;
    int8_t *cm1 = k->rows > 1 ? (int8_t *)ctx->buf + k->fast / k->rows : NULL;
    for (int32_t n = 0; n < in->n; n++) {
        max_lanes_image(k, input + n * image_in, output + n * image_out, (int8_t *)ctx->buf,
                        cm1);
    }
}
#endif

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* Channel counts below which the DSP direct path beats max_into's word loop over the pixel */
#define TH_MAXPOOL_DIRECT_MAX_C 32

/* DSP direct path (no scratch): each window's maximum four channels at a time in a register
 * (the last group of a count that is not a multiple of four ending at channel C - 1, its
 * bytes written twice with the same values after every read of the window, which they never
 * overlap: th_nn.h (c)), 1-3 channels a byte at a time, the count a constant of the loop. */
TH_INLINE void direct_small_max(const int8_t *px, int32_t rows, int32_t row_step,
                                int32_t cols, int32_t ch, int32_t lo, int32_t hi, int8_t *dst)
{
    int32_t m[3] = {-128, -128, -128};
    for (int32_t y = 0; y < rows; y++, px += row_step) {
        const int8_t *q = px;
        for (int32_t x = 0; x < cols; x++, q += ch) {
#pragma GCC unroll 3
            for (int32_t k = 0; k < ch; k++) {
                m[k] = TH_MAX(m[k], q[k]);
            }
        }
    }
#pragma GCC unroll 3
    for (int32_t k = 0; k < ch; k++) {
        dst[k] = (int8_t)th_clamp(m[k], lo, hi);
    }
}

__attribute__((noinline)) static void max_direct_lanes(const th_pool_params *p,
                                                       const th_dims *in, const int8_t *input,
                                                       const th_dims *out, int8_t *dst)
{
    const int32_t in_h = in->h, in_w = in->w, ch = in->c, row = in_w * ch;
    const int32_t lo = p->activation.min, hi = p->activation.max;
    const int clamp = lo > -128 || hi < 127;
    const uint32_t lo4 = (uint32_t)(uint8_t)(int8_t)lo * 0x01010101u;
    const uint32_t hi4 = (uint32_t)(uint8_t)(int8_t)hi * 0x01010101u;
    for (int32_t n = 0; n < in->n; n++) {
        const int8_t *image = input + n * in_h * row;
        for (int32_t oy = 0; oy < out->h; oy++) {
            const th_nn_window wy =
                th_nn_window_at(oy, p->stride.h, p->padding.h, p->filter.h, in_h);
            const int32_t rows = wy.end - wy.start;
            for (int32_t ox = 0; ox < out->w; ox++, dst += ch) {
                const th_nn_window wx =
                    th_nn_window_at(ox, p->stride.w, p->padding.w, p->filter.w, in_w);
                const int32_t cols = wx.end - wx.start;
                const int8_t *base =
                    image + (wy.origin + wy.start) * row + (wx.origin + wx.start) * ch;
                if (rows <= 0 || cols <= 0) {
                    memset(dst, -128, (size_t)ch); /* TFLM's initial value */
                    clamp_pixel(dst, ch, lo, hi);
                } else if (ch < 4) {
                    if (ch == 1) {
                        direct_small_max(base, rows, row, cols, 1, lo, hi, dst);
                    } else if (ch == 2) {
                        direct_small_max(base, rows, row, cols, 2, lo, hi, dst);
                    } else {
                        direct_small_max(base, rows, row, cols, 3, lo, hi, dst);
                    }
                } else {
                    for (int32_t k = 0; k < ch; k += 4) {
                        k = k + 4 > ch ? ch - 4 : k;
                        const int8_t *py = base + k;
                        uint32_t v = rd4(py);
                        for (int32_t y = 0; y < rows; y++, py += row) {
                            const int8_t *q = py;
                            for (int32_t x = 0; x < cols; x++, q += ch) {
                                v = max_s8x4(v, rd4(q));
                            }
                        }
                        if (clamp) {
                            v = min_s8x4(max_s8x4(v, lo4), hi4);
                        }
                        th_write_s32(dst + k, (int32_t)v);
                    }
                }
            }
        }
    }
}
#endif

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* MAX_C1_WORDS: one channel, strides >= 2 both ways, windows 4..8 wide, the fast scratch
 * given: max_lanes_image's padded layout in one function, no call per row. Per output row the
 * column maxima of its window's rows (c1_cols), then per output the word(s) of its window
 * folded to one byte. On small planes max_lanes' calls and setup per row were most of the
 * count (13x11x1 k6x4 s3: ~1,000 of 1,535 instructions). */
/* a = max_s8x4(a, b) in place: no copy of the result out of an early-clobber register
 * (a move per maximum in c1_cols' loop). */
TH_INLINE void max_in(uint32_t *a, uint32_t b)
{
#if TH_NN_DSP_NATIVE
    uint32_t t;
    __asm__("ssub8 %1, %0, %2\n\tsel %0, %0, %2" : "+r"(*a), "=&r"(t) : "r"(b) : "cc");
#else
    *a = max_s8x4(*a, b);
#endif
}

/* cm[j] (j < len, 4 <= len <= 12) = the maximum of src[r * step + j] over r < rows (>= 1):
 * three words (at 0, o1 = min(4, len - 4) and o2 = len - 4, overlapping where len < 12)
 * held over the rows, two rows an iteration (loads at register offsets from two pointers). */
TH_INLINE void c1_chunk(int8_t *cm, const int8_t *q, int32_t step, int32_t rows, int32_t o1,
                        int32_t o2)
{
    uint32_t v0 = rd4(q), v1 = rd4(q + o1), v2 = rd4(q + o2);
    const int8_t *end = q + rows * step;
    q += step;
    if ((rows & 1) == 0) {
        max_in(&v0, rd4(q));
        max_in(&v1, rd4(q + o1));
        max_in(&v2, rd4(q + o2));
        q += step;
    }
    for (const int8_t *q2 = q + step; q < end; q += 2 * step, q2 += 2 * step) {
        max_in(&v0, rd4(q));
        max_in(&v1, rd4(q + o1));
        max_in(&v2, rd4(q + o2));
        max_in(&v0, rd4(q2));
        max_in(&v1, rd4(q2 + o1));
        max_in(&v2, rd4(q2 + o2));
    }
    th_write_s32(cm + o2, (int32_t)v2);
    th_write_s32(cm + o1, (int32_t)v1);
    th_write_s32(cm, (int32_t)v0);
}

/* The word of an output's window in cm: its first four bytes, with fw > 4 (fw a constant 4,
 * or 5..8) their maximum with the four ending at its last byte. */
TH_INLINE uint32_t c1_window(const int8_t *cm, int32_t fw)
{
    uint32_t v = rd4(cm);
    if (fw > 4) {
        max_in(&v, rd4(cm + fw - 4));
    }
    return v;
}

/* Four windows' words folded to their four maxima, output j in byte j: (w0, w2) and (w1, w3)
 * halves paired (PKHBT / PKHTB) and maxed, then the even and odd bytes of the two results
 * interleaved (UXTAB16 into the other's masked bytes) and maxed. 12 instructions against
 * 4 x 6 folding each word alone. */
TH_INLINE uint32_t c1_fold4(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3)
{
    const uint32_t m02 = max_s8x4((uint32_t)th_pkhbt((int32_t)w0, (int32_t)w2),
                                  (uint32_t)th_pkhtb((int32_t)w0, (int32_t)w2));
    const uint32_t m13 = max_s8x4((uint32_t)th_pkhbt((int32_t)w1, (int32_t)w3),
                                  (uint32_t)th_pkhtb((int32_t)w1, (int32_t)w3));
    const uint32_t lo = th_uxtab16((m13 << 8) & 0xFF00FF00u, m02);
    const uint32_t hi = th_uxtab16_ror8(m13 & 0xFF00FF00u, m02);
    return max_s8x4(lo, hi);
}

/* count outputs sw bytes apart in cm, each the maximum of fw (a constant 4, or 5..8) bytes
 * (c1_window), clamped (a constant): from four outputs four at a time (c1_fold4, one word
 * stored), a count that is not a multiple of four ending with the four ending at the last
 * output (bytes written twice with the same values); below four each folded alone. */
TH_INLINE void c1_row(int8_t *dst, const int8_t *cm, int32_t sw, int32_t fw, int32_t count,
                      int32_t lo, int32_t hi, int clamp)
{
    if (count < 4) {
        for (int8_t *end = dst + count; dst < end; dst++, cm += sw) {
            uint32_t v = c1_window(cm, fw);
            max_in(&v, v >> 16);
            max_in(&v, v >> 8);
            *dst = (int8_t)(clamp ? th_clamp((int8_t)v, lo, hi) : (int8_t)v);
        }
        return;
    }
    const uint32_t lo4 = (uint32_t)(uint8_t)(int8_t)lo * 0x01010101u;
    const uint32_t hi4 = (uint32_t)(uint8_t)(int8_t)hi * 0x01010101u;
    int8_t *const last = dst + count - 4;
    for (;;) {
        uint32_t v = c1_fold4(c1_window(cm, fw), c1_window(cm + sw, fw),
                              c1_window(cm + 2 * sw, fw), c1_window(cm + 3 * sw, fw));
        if (clamp) {
            v = min_s8x4(max_s8x4(v, lo4), hi4);
        }
        th_write_s32(dst, (int32_t)v);
        if (dst == last) {
            return;
        }
        dst += 4;
        cm += 4 * sw;
        if (dst > last) { /* back to the last four */
            cm -= (dst - last) * sw;
            dst = last;
        }
    }
}

/* One output row of max_c1_words from its column maxima cm (the padded layout): c1_row with
 * its constants resolved, out of line: max_c1_words' row loop keeps its registers (inlined,
 * its values spilled to the stack at ~20 instructions a row). The common case (windows 4
 * wide, no clamp: c1_out4) has its own function, which max_c1_words
 * picks once (13x11x1 k6x4 s3: ~10 instructions a row of loads and tests fewer). */
__attribute__((noinline)) static void c1_out4(int8_t *dst, const int8_t *cm,
                                              const th_pool_params *p, int32_t count)
{
    c1_row(dst, cm, p->stride.w, 4, count, -128, 127, 0);
}

__attribute__((noinline)) static void c1_out(int8_t *dst, const int8_t *cm,
                                             const th_pool_params *p, int32_t count)
{
    const int32_t sw = p->stride.w, fw = p->filter.w;
    const int32_t lo = p->activation.min, hi = p->activation.max;
    if (lo > -128 || hi < 127) {
        c1_row(dst, cm, sw, fw, count, lo, hi, 1);
    } else {
        c1_row(dst, cm, sw, fw, count, lo, hi, 0);
    }
}

__attribute__((noinline)) static void max_c1_words(const th_maxpool_prep *k,
                                                   const int8_t *input, int8_t *dst,
                                                   int8_t *cm)
{
    const th_pool_params *p = &k->params;
    const int32_t in_h = k->in.h, in_w = k->in.w, ow = k->out.w, oh = k->out.h;
    const int32_t sh = p->stride.h, fh = p->filter.h;
    const int32_t c0 = k->c0, span = k->span; /* th_maxpool_s8_prepare's padded layout */
    pad_rows(cm, NULL, c0, c0 + span, k->cols);
    const int32_t lo = p->activation.min, hi = p->activation.max;
    const int32_t len = TH_MIN(12, span), last = span - len;
    const int out4 = p->filter.w == 4 && lo == -128 && hi == 127;
    const int32_t o2 = len - 4, o1 = TH_MIN(4, o2);
    const int8_t *src = input + c0 - p->padding.w;
    for (int32_t n = 0; n < k->in.n; n++, src += in_h * in_w) {
        int32_t ys = -p->padding.h;
        for (int32_t oy = 0; oy < oh; oy++, ys += sh, dst += ow) {
            const int32_t y0 = TH_MAX(ys, 0), rows = TH_MIN(ys + fh, in_h) - y0;
            if (rows <= 0) {
                memset(dst, th_clamp(-128, lo, hi), (size_t)ow); /* TFLM's initial value */
                continue;
            }
            /* the column maxima in chunks of 12 bytes, the last one ending at span over
             * bytes of the one before */
            const int8_t *row = src + y0 * in_w;
            for (int32_t s = 0; s < last; s += 12) {
                c1_chunk(cm + c0 + s, row + s, in_w, rows, 4, 8);
            }
            c1_chunk(cm + c0 + last, row + last, in_w, rows, o1, o2);
            if (out4) {
                c1_out4(dst, cm, p, ow);
            } else {
                c1_out(dst, cm, p, ow);
            }
        }
    }
}
#endif

th_status th_maxpool_s8(const th_context *ctx, const th_pool_params *params,
                        const th_dims *input_dims, const int8_t *input,
                        const th_dims *output_dims, int8_t *output)
{
    if (input == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    /* the prepared call's struct made here per call, so the two entries cannot drift */
    th_maxpool_prep k;
    const int32_t scratch = ctx != NULL && ctx->buf != NULL ? ctx->size : 0;
    const th_status status =
        th_maxpool_s8_prepare(params, input_dims, output_dims, scratch, &k);
    if (status != TH_OK) {
        return status;
    }
    return th_maxpool_s8_prepared(ctx, &k, input, output);
}

th_status th_maxpool_s8_prepared(const th_context *ctx, const th_maxpool_prep *prep,
                                 const int8_t *input, int8_t *output)
{
    const th_maxpool_prep *k = prep;
    const th_pool_params *params = &k->params;
    const th_dims *input_dims = &k->in, *output_dims = &k->out;
    const int32_t in_h = input_dims->h;
    const int32_t in_w = input_dims->w;
    const int32_t channels = input_dims->c;
    const int32_t act_min = params->activation.min;
    const int32_t act_max = params->activation.max;
    const int clamp = k->clamp;
    const int32_t image_in = in_h * in_w * channels;
    const int32_t image_out = output_dims->h * output_dims->w * channels;
#if TH_NN_HAS_DSP && !TH_NN_MVE
    /* the path choice stays here (the build's kept paths, §4.2c): the padded layout where
     * the fast scratch was given, else the separable scratch's */
    if (k->c1 && TH_NN_PATH(MAX_C1_WORDS)) {
        max_c1_words(k, input, output, (int8_t *)ctx->buf);
        return TH_OK;
    }
    if ((k->fast > 0 || k->sep > 0) && TH_NN_PATH(MAX_LANES)) {
        max_lanes(ctx, k, input, output);
        return TH_OK;
    }
#endif
    if (k->sep > 0) {
        for (int32_t n = 0; n < input_dims->n; n++) {
            max_separable_image(params, input_dims, input + n * image_in, output_dims,
                                output + n * image_out, (int8_t *)ctx->buf);
        }
        return TH_OK;
    }
#if TH_NN_HAS_DSP && !TH_NN_MVE
    if (channels < TH_MAXPOOL_DIRECT_MAX_C && TH_NN_PATH(MAX_DIRECT_LANES)) {
        max_direct_lanes(params, input_dims, input, output_dims, output);
        return TH_OK;
    }
#endif
    int8_t *out = output;
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *image = input + (int32_t)n * in_h * in_w * channels;
        for (int32_t oy = 0; oy < output_dims->h; oy++) {
            const th_nn_window wy = th_nn_window_at(oy, params->stride.h, params->padding.h,
                                                    params->filter.h, in_h);
            for (int32_t ox = 0; ox < output_dims->w; ox++) {
                const th_nn_window wx = th_nn_window_at(ox, params->stride.w,
                                                        params->padding.w, params->filter.w,
                                                        in_w);
#if TH_NN_MVE
                max_window_mve(out, image + ((wy.origin + wy.start) * in_w + wx.origin +
                                             wx.start) * channels,
                               wy.end - wy.start, in_w * channels, wx.end - wx.start,
                               channels, act_min, act_max);
                out += channels;
                continue;
#endif
                if (wy.end <= wy.start || wx.end <= wx.start) {
                    memset(out, -128, (size_t)channels); /* TFLM's initial value */
                } else {
                    int first = 1;
                    for (int32_t fy = wy.start; fy < wy.end; fy++) {
                        const int32_t row = (wy.origin + fy) * in_w + wx.origin;
                        for (int32_t fx = wx.start; fx < wx.end; fx++) {
                            const int8_t *px = image + (row + fx) * channels;
                            if (first) {
                                memcpy(out, px, (size_t)channels);
                                first = 0;
                            } else {
                                max_into(out, px, channels);
                            }
                        }
                    }
                }
                if (clamp) {
                    clamp_pixel(out, channels, act_min, act_max);
                }
                out += channels;
            }
        }
    }
    return TH_OK;
}
