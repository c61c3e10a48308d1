/* th_dw_conv_general_s8: DEPTHWISE_CONV_2D with any filter, stride, padding, dilation and
 * depth multiplier.
 *
 * DSP builds, given th_dw_conv_general_s8_scratch_size_fast (rows path): the filter is
 * oriented so that its longer side B runs along the contiguous axis of a staged band (K x 1
 * audio kernels become 1 x K). Per output row, the KA input rows it reads are staged as
 * int16 raw values with -input_offset in the padding (the offset is folded into each
 * channel's start value), dilation along B split into phase rows so that an output's taps
 * are adjacent; every output is then a chain of SMLADs over tap pairs, four outputs of a
 * row at a time sharing each weight word, with per output channel records (doubled weight
 * pairs, start value, requantization constants) prepared once per input channel. Filters
 * of one or two rows after orientation (audio K x 1 and 1 x K, 2 x K) stage up to four
 * adjacent channels per pass (four: a word load per position and row, split with SXTB16; a
 * tail of two or three: byte loads), and one row call runs the pass's channels. ch_mult ==
 * 1 with several output rows first copies the channel's int8 plane to scratch when the
 * output overlaps the input (th_nn.h rule (a): later bands read input rows that earlier
 * output rows may have overwritten; one channel per pass then); with one output row a
 * pass's bands hold all of its input before any of its outputs is written. Filters of 15
 * or more taps with two or more along B take the plane path instead (below, dw_plane_s8),
 * when their plane fits TH_DW_PLANE_MAX, except filters two rows across after orientation
 * (path DW_ROWS_KA2, not in place: a band word pairs the two rows, so no pair is padded, four
 * channels are staged a pass, and stride-2 row kernels load one new word a pair; 39x7x17
 * k11x2 s1x3 d2x2: 76,626 -> 57,720 instructions). Otherwise, and in portable builds: the reference
 * loop (one int8 plane of scratch when ch_mult == 1). */
#include <stddef.h>

#include "th_dw_lines.h"
#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* Geometry in the oriented frame: B = w or h, whichever stages fewer values. A band
 * holds, for one output row, the KA input rows it reads interleaved column by column: value
 * (a, b) at b KA + a, so that an output's KA x KB taps are one contiguous run of values (a
 * 1-D convolution with KA KB taps and stride SB KA). Dilation along B: the band is staged as
 * DB phase rows (phase r holds the columns r, r + DB, r + 2 DB, ...), so that an output's
 * columns are adjacent in one phase row. Outputs j = o0 + P t (P = DB / gcd(SB, DB)) share
 * the phase (o0 SB) mod DB and start at column (o0 SB) / DB + SBP t there (SBP = SB / gcd). */
typedef struct {
    int32_t transposed; /* A = w, B = h (dw_transposed) */
    int32_t ka, kb, sa, sb, da, db, pad_a, pad_b, in_a, in_b, out_a, out_b;
    int32_t kp; /* weight words: (KA KB + 1) / 2 tap pairs */
    int32_t p; /* output phases */
    int32_t sbp; /* column stride within a phase row */
    int32_t g; /* gcd(sb, db): only phases that are multiples of it are read */
    int32_t cols; /* columns per phase row */
    int32_t plen; /* values per phase row: cols KA, rounded up to even */
    int32_t group; /* channels staged per pass, at most (KA 1 and 2: up to 4) */
} dw_geom;

static int32_t gcd32(int32_t a, int32_t b)
{
    while (b != 0) {
        const int32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Rough instructions to stage the bands of one channel with B along w (transposed 0) or h:
 * about 3 per staged value, KA ((OB - 1) SB + (KB - 1) DB + 1) per output row, plus 80 per
 * output row for the calls. The cheaper frame is used. */
static int64_t stage_cost(int32_t ka, int32_t kb, int32_t sb, int32_t db, int32_t out_a,
                          int32_t out_b)
{
    return (int64_t)out_a * (3 * (int64_t)ka * ((out_b - 1) * (int64_t)sb +
                                                (kb - 1) * (int64_t)db + 1) + 80);
}

static int32_t dw_transposed(const th_dw_conv_params *params, const th_dims *filter_dims,
                             const th_dims *output_dims)
{
    const int64_t plain = stage_cost(filter_dims->h, filter_dims->w, params->stride.w,
                                     params->dilation.w, output_dims->h, output_dims->w);
    const int64_t transposed = stage_cost(filter_dims->w, filter_dims->h, params->stride.h,
                                          params->dilation.h, output_dims->w, output_dims->h);
    return transposed < plain;
}

static dw_geom dw_geometry(const th_dw_conv_params *params, const th_dims *input_dims,
                           const th_dims *filter_dims, const th_dims *output_dims)
{
    dw_geom g;
    g.transposed = dw_transposed(params, filter_dims, output_dims);
    if (!g.transposed) {
        g.ka = filter_dims->h, g.kb = filter_dims->w;
        g.sa = params->stride.h, g.sb = params->stride.w;
        g.da = params->dilation.h, g.db = params->dilation.w;
        g.pad_a = params->padding.h, g.pad_b = params->padding.w;
        g.in_a = input_dims->h, g.in_b = input_dims->w;
        g.out_a = output_dims->h, g.out_b = output_dims->w;
    } else {
        g.ka = filter_dims->w, g.kb = filter_dims->h;
        g.sa = params->stride.w, g.sb = params->stride.h;
        g.da = params->dilation.w, g.db = params->dilation.h;
        g.pad_a = params->padding.w, g.pad_b = params->padding.h;
        g.in_a = input_dims->w, g.in_b = input_dims->h;
        g.out_a = output_dims->w, g.out_b = output_dims->h;
    }
    g.kp = (g.ka * g.kb + 1) / 2;
    g.g = gcd32(g.sb, g.db);
    g.p = g.db / g.g;
    g.sbp = g.sb / g.g;
    /* Values read in a phase row: the last output of phase o0 reads 2 kp values from
     * ((o0 sb) / db + sbp (n - 1)) KA, n rounded up to a multiple of four (the last, partial
     * block of four outputs is computed whole). */
    int32_t need = 0;
    for (int32_t o0 = 0; o0 < g.p && o0 < g.out_b; o0++) {
        const int32_t n = ((g.out_b - o0 + g.p - 1) / g.p + 3) & ~3;
        const int32_t end = ((o0 * g.sb) / g.db + g.sbp * (n - 1)) * g.ka + 2 * g.kp;
        need = TH_MAX(need, end);
    }
    g.cols = (need + g.ka - 1) / g.ka;
    g.plen = (g.cols * g.ka + 1) & ~1;
    /* KA 1 and 2: up to four adjacent channels per pass (gather_words). */
    g.group = g.ka <= 2 ? TH_MIN(input_dims->c, 4) : 1;
    return g;
}

/* Scratch layout: [int8 plane (ch_mult 1, several output rows: in place)]
 * [int16 bands: group x DB x plen] [int32 records: group x ch_mult x (5 + kp)]. */
static int32_t plane_bytes(const th_dw_conv_params *params, const th_dims *input_dims,
                           const dw_geom *g)
{
    return params->ch_mult == 1 && g->out_a > 1 ? th_round_up4(input_dims->h * input_dims->w)
                                                : 0;
}

static int32_t band_bytes(const dw_geom *g)
{
    return 2 * g->group * g->db * g->plen;
}

static int32_t record_words(const dw_geom *g)
{
    return 4 + g->kp;
}

/* Output record of one output channel: mode, then
 *   mode 0/1 (fast requantization exact; 1: activation narrower than int8):
 *     2 * (bias + input_offset * sum(w)), multiplier, 2^(e-1) + zp 2^e, e; weights doubled
 *   mode 2: bias + input_offset * sum(w), multiplier, shift, -; weights as they are
 * then kp words of int16 weight pairs in band order (b KA + a; an odd count ends (w, 0)). */
#define DW_REC_ACC 0
#define DW_REC_MULT 1
#define DW_REC_RZP 2
#define DW_REC_E 3
#define DW_REC_W 4

/* What prepare_record needs, fixed per call. */
typedef struct {
    const int8_t *filter;
    const int32_t *bias, *multiplier, *shift;
    int32_t fa, fb; /* filter bytes between taps along A and along B */
    int32_t ka, kb;
    int32_t offset, zp, clamp;
    int32_t taps_bound; /* KA KB 256 128: |acc - bias| */
    int32_t rows; /* weights row by row (plane path): A-major, pairs along B, an odd row
                   * ending (w, 0) */
} dw_rec_ctx;

static dw_rec_ctx rec_ctx(const th_dw_conv_params *params, const th_per_channel_quant *quant,
                          const th_dims *filter_dims, const int8_t *filter,
                          const int32_t *bias, int32_t out_c, const dw_geom *g)
{
    dw_rec_ctx c;
    c.filter = filter;
    c.bias = bias;
    c.multiplier = quant->multiplier;
    c.shift = quant->shift;
    const int32_t step_w = out_c;
    const int32_t step_h = filter_dims->w * out_c;
    c.fa = g->transposed ? step_w : step_h;
    c.fb = g->transposed ? step_h : step_w;
    c.ka = g->ka;
    c.kb = g->kb;
    c.offset = params->input_offset;
    c.zp = params->output_offset;
    c.clamp = params->activation.min > -128 || params->activation.max < 127;
    const int64_t taps = (int64_t)g->ka * g->kb * 256 * 128;
    c.taps_bound = taps < (INT64_C(1) << 29) ? (int32_t)taps : (1 << 29);
    c.rows = 0;
    return c;
}

/* Weight pairs of a 2-D filter in band order ((a, b) at b KA + a), scaled (scale 1 or 2);
 * adds the sum of the unscaled weights to *wsum. Stored a halfword at a time (the pair's
 * first tap in the low half, as th_pkhbt packs it), an odd count ending with 0. */
static void dw_weights_2d(int32_t *w, const dw_rec_ctx *c, const int8_t *f, int32_t scale,
                          int32_t *wsum)
{
    /* The context's fields in locals: the stores through w may not reload them. */
    const int32_t ka = c->ka, kb = c->kb, fa = c->fa, fb = c->fb;
    int32_t sum = 0;
    int8_t *h = (int8_t *)w;
    for (int32_t b = 0; b < kb; b++, f += fb) {
        const int8_t *fa_ = f;
        for (int32_t a = ka; a > 0; a--, fa_ += fa, h += 2) {
            const int32_t v = *fa_;
            sum += v;
            th_write_s16(h, (int16_t)(v * scale));
        }
    }
    if ((ka * kb) & 1) {
        th_write_s16(h, 0);
    }
    *wsum += sum;
}

/* Fills the record of output channel oc at rec (mode word, then the record). */
static void __attribute__((noinline)) prepare_record(int32_t *rec, const dw_rec_ctx *c,
                                                     int32_t oc)
{
    const int32_t b = c->bias != NULL ? c->bias[oc] : 0;
    const int32_t mult = c->multiplier[oc];
    const int32_t shift = c->shift[oc];
    const int64_t bound = (int64_t)c->taps_bound + (b < 0 ? -(int64_t)b : b);
    const int32_t mode = th_fast_rq_ok(mult, shift, bound) ? c->clamp : 2;
    const int32_t scale = mode == 2 ? 1 : 2;
    int32_t wsum = 0;
    int32_t *w = rec + 1 + DW_REC_W;
    const int8_t *f = c->filter + oc;
    if (c->ka == 1 || c->rows) { /* pairs along B, each of the KA rows on its own */
        const int32_t fb = c->fb;
        for (int32_t a = c->ka; a > 0; a--) {
            const int8_t *fr = f;
            for (int32_t p = c->kb >> 1; p > 0; p--, fr += 2 * fb) {
                const int32_t w0 = fr[0];
                const int32_t w1 = fr[fb];
                wsum += w0 + w1;
                *w++ = th_pkhbt(w0 * scale, w1 * scale);
            }
            if (c->kb & 1) {
                const int32_t w0 = fr[0];
                wsum += w0;
                *w++ = (int32_t)((uint32_t)(w0 * scale) & 0xFFFFu);
            }
            f += c->fa;
        }
    } else if (c->ka == 2) { /* band order pairs the two rows: (a 0, a 1) per column b */
        const int32_t fa = c->fa, fb = c->fb;
        for (int32_t b = c->kb; b > 0; b--, f += fb) {
            const int32_t w0 = f[0];
            const int32_t w1 = f[fa];
            wsum += w0 + w1;
            *w++ = th_pkhbt(w0 * scale, w1 * scale);
        }
    } else {
        dw_weights_2d(w, c, f, scale, &wsum);
    }
    rec[0] = mode;
    rec += 1;
    /* sum((x + offset) w) = sum(x w) + offset sum(w): the bands hold raw values and -offset
     * in the padding. */
    rec[DW_REC_ACC] = (int32_t)((uint32_t)b * (uint32_t)scale +
                                (uint32_t)c->offset * (uint32_t)(scale * wsum));
    rec[DW_REC_MULT] = mult;
    if (mode == 2) {
        rec[DW_REC_RZP] = shift;
        rec[DW_REC_E] = 0;
    } else {
        const th_fast_rq rq = th_fast_rq_make(mult, shift, c->zp);
        rec[DW_REC_RZP] = rq.round_zp;
        rec[DW_REC_E] = rq.e;
    }
}

/* d[i] = s[i * st], i < count. */
static void __attribute__((noinline)) gather1(int16_t *d, const int8_t *s, int32_t st,
                                               int32_t count)
{
    int16_t *const end = d + (count & ~3);
    const int32_t st2 = 2 * st;
    const int32_t st3 = 3 * st;
    for (; d != end; d += 4, s += 4 * st) {
        const int32_t v0 = s[0];
        const int32_t v1 = s[st];
        const int32_t v2 = s[st2];
        const int32_t v3 = s[st3];
        th_write_s32(d, th_pkhbt(v0, v1));
        th_write_s32(d + 2, th_pkhbt(v2, v3));
    }
    for (int32_t i = 0; i < (count & 3); i++, s += st) {
        d[i] = *s;
    }
}

/* d[i * ds] = s[i * st], i < count (one row of an interleaved band). */
static void __attribute__((noinline)) gather_strided(int16_t *d, int32_t ds, const int8_t *s,
                                                     int32_t st, int32_t count)
{
    int32_t i = count >> 2;
    for (; i > 0; i--, d += 4 * ds, s += 4 * st) {
        const int16_t v0 = s[0];
        const int16_t v1 = s[st];
        const int16_t v2 = s[2 * st];
        const int16_t v3 = s[3 * st];
        d[0] = v0;
        d[ds] = v1;
        d[2 * ds] = v2;
        d[3 * ds] = v3;
    }
    for (i = count & 3; i > 0; i--, d += ds, s += st) {
        *d = *s;
    }
}

/* d[i * ds] = v, i < count. */
TH_INLINE void fill_strided(int16_t *d, int32_t ds, int16_t v, int32_t count)
{
    for (int32_t i = 0; i < count; i++, d += ds) {
        *d = v;
    }
}

/* A word that may alias the int16 values it fills. */
typedef uint32_t dw_word __attribute__((may_alias));

/* d[i] = v, i < count (even; d 4-byte aligned, as the scratch's records already need): two
 * values per word, eight words per iteration (double-word stores). */
static void __attribute__((noinline)) fill_pairs(int16_t *d, int16_t v, int32_t count)
{
    const uint32_t w = ((uint32_t)(uint16_t)v << 16) | (uint16_t)v;
    dw_word *p = (dw_word *)(void *)d;
    int32_t n = count >> 1;
    for (; n >= 8; n -= 8, p += 8) {
        p[0] = w;
        p[1] = w;
        p[2] = w;
        p[3] = w;
        p[4] = w;
        p[5] = w;
        p[6] = w;
        p[7] = w;
    }
    for (; n > 0; n--) {
        *p++ = w;
    }
}

/* One word of int16 pairs (s[k], s[sy + k]) per channel k < G into the bands d0 + k slot,
 * `words` words each, s advancing adv bytes a word: two adjacent columns of one input row
 * (KA 1: sy = adv / 2) or one column of two input rows (KA 2: the band interleaves them);
 * then, if odd, one value s[k] more per band (an odd column count, KA 1). G 4 reads a word
 * per row (the channels are adjacent bytes) and splits it with SXTB16; G 2 and 3 read bytes
 * (a word could reach past the input). */
TH_INLINE void gather_words_g(int16_t *d0, int32_t slot, const int8_t *s, int32_t sy,
                              int32_t adv, int32_t words, int32_t odd, const int G)
{
    int16_t *const end = d0 + 2 * words;
    for (; d0 != end; d0 += 2, s += adv) {
        _Pragma("GCC unroll 3") for (int32_t k = 0; k < G; k++) {
            th_write_s32(d0 + k * slot, th_pkhbt(s[k], s[sy + k]));
        }
    }
    if (odd) {
        _Pragma("GCC unroll 3") for (int32_t k = 0; k < G; k++) {
            d0[k * slot] = s[k];
        }
    }
}

/* G 4: one pointer per band (post-incremented stores: 15 instructions a word; unrolled,
 * gcc 12 indexes the stores and measured more). PAD 1 or 2 (gather_pad): only row 0 or only
 * row 1 read, the word's other half pw's (pad in both halves). */
TH_INLINE void gather_words4(int16_t *d0, int32_t slot, const int8_t *s, int32_t sy,
                             int32_t adv, int32_t words, int32_t odd, const int PAD, int32_t pw)
{
    int16_t *d1 = d0 + slot;
    int16_t *d2 = d1 + slot;
    int16_t *d3 = d2 + slot;
    int16_t *const end = d0 + 2 * words;
    for (; d0 != end; d0 += 2, d1 += 2, d2 += 2, d3 += 2, s += adv) {
        const int32_t x = th_read_s32(s);
        int32_t w0, w1, w2, w3;
        if (PAD == 0) {
            const int32_t y = th_read_s32(s + sy);
            const int32_t lo = th_pkhbt(x, y); /* bytes x0 x1 y0 y1 */
            const int32_t hi = th_pkhtb(x, y); /* bytes x2 x3 y2 y3 */
            w0 = th_sxtb16(lo);
            w1 = th_sxtb16_ror8(lo);
            w2 = th_sxtb16(hi);
            w3 = th_sxtb16_ror8(hi);
        } else {
            const int32_t e = th_sxtb16(x); /* channels 0 and 2 */
            const int32_t o = th_sxtb16_ror8(x); /* channels 1 and 3 */
            w0 = PAD == 1 ? th_pkhbt(e, pw) : th_pkhbt(pw, e);
            w1 = PAD == 1 ? th_pkhbt(o, pw) : th_pkhbt(pw, o);
            w2 = PAD == 1 ? th_pkhtb(e, pw) : th_pkhtb(pw, e);
            w3 = PAD == 1 ? th_pkhtb(o, pw) : th_pkhtb(pw, o);
        }
        th_write_s32(d0, w0);
        th_write_s32(d1, w1);
        th_write_s32(d2, w2);
        th_write_s32(d3, w3);
    }
    if (odd) {
        d0[0] = s[0];
        d1[0] = s[1];
        d2[0] = s[2];
        d3[0] = s[3];
    }
}

static void __attribute__((noinline)) gather_words(int16_t *d0, int32_t slot, int32_t group,
                                                    const int8_t *s, int32_t sy, int32_t adv,
                                                    int32_t words, int32_t odd)
{
    if (group == 4) {
        gather_words4(d0, slot, s, sy, adv, words, odd, 0, 0);
    } else if (group == 3) {
        gather_words_g(d0, slot, s, sy, adv, words, odd, 3);
    } else if (group == 2) {
        gather_words_g(d0, slot, s, sy, adv, words, odd, 2);
    } else {
        gather_words_g(d0, slot, s, sy, adv, words, odd, 1);
    }
}

/* One input row of `group` channels (adjacent bytes) into the bands d0 + k slot:
 * dk[i] = s[i * st + k], i < count (KA 1). */
TH_INLINE void stage_cols(int16_t *d0, int32_t group, int32_t slot, const int8_t *s,
                          int32_t st, int32_t count)
{
    if (group == 1) {
        gather1(d0, s, st, count);
    } else {
        gather_words(d0, slot, group, s, st, 2 * st, count >> 1, count & 1);
    }
}

/* stage_band for KA 1 and DB 1 (one input row, one phase): no phase arithmetic. */
static void __attribute__((noinline))
stage_line(int16_t *dst, int32_t group, int32_t slot, const int8_t *src, int32_t step_a,
           int32_t step_b, int32_t oa, const dw_geom *g, int32_t offset)
{
    const int32_t row = oa * g->sa - g->pad_a;
    const int32_t lo = TH_MIN(g->pad_b, g->cols);
    const int32_t hi = TH_MIN(TH_MAX(g->pad_b + g->in_b, lo), g->cols);
    if (row < 0 || row >= g->in_a) {
        for (int32_t k = 0; k < group; k++) {
            fill_strided(dst + k * slot + lo, 1, (int16_t)(-offset), hi - lo);
        }
    } else if (lo < hi) {
        const int8_t *s = src + (int64_t)row * step_a + (int64_t)(lo - g->pad_b) * step_b;
        stage_cols(dst + lo, group, slot, s, step_b, hi - lo);
    }
}

/* KA 2 with one of the two rows inside the input: per column and channel k < group the word
 * (s[k], pad) (row 0 inside: `first`) or (pad, s[k]), `words` columns, s advancing adv bytes
 * (the byte-at-a-time staging of each row on its own costs twice as much). */
static void __attribute__((noinline)) gather_pad(int16_t *d0, int32_t slot, int32_t group,
                                                  const int8_t *s, int32_t adv, int32_t words,
                                                  int16_t pad, int32_t first)
{
    if (group == 4) { /* a word of the four channels per column, split with SXTB16 */
        const int32_t pw = (int32_t)((uint32_t)(uint16_t)pad * 0x10001u);
        if (first) {
            gather_words4(d0, slot, s, 0, adv, words, 0, 1, pw);
        } else {
            gather_words4(d0, slot, s, 0, adv, words, 0, 2, pw);
        }
        return;
    }
    for (int32_t k = 0; k < group; k++, d0 += slot, s++) {
        int16_t *d = d0;
        const int8_t *p = s;
        if (first) {
            for (int32_t i = words; i > 0; i--, d += 2, p += adv) {
                th_write_s32(d, th_pkhbt(*p, pad));
            }
        } else {
            for (int32_t i = words; i > 0; i--, d += 2, p += adv) {
                th_write_s32(d, th_pkhbt(pad, *p));
            }
        }
    }
}

/* Stages the band of output row oa for `group` channels (1-4, adjacent in memory; more than
 * 1 only with KA 1 or 2) to bands `slot` values apart: phase rows of interleaved raw values,
 * -offset outside the input (the columns left and right of the input hold it from the start,
 * dw_rows_s8). src(a, b) = src[a * step_a + b * step_b]. */
static void __attribute__((noinline))
stage_band(int16_t *dst, int32_t group, int32_t slot, const int8_t *src, int32_t step_a,
           int32_t step_b, int32_t oa, const dw_geom *g, int32_t offset)
{
    const int16_t pad = (int16_t)(-offset);
    const int32_t ka = g->ka;
    const int32_t row0 = oa * g->sa - g->pad_a;
    /* KA 2 with both rows inside: a word of the two rows' values per column and channel. */
    const int32_t row1 = row0 + g->da;
    const int both = ka == 2 && row0 >= 0 && row1 < g->in_a;
    const int in0 = row0 >= 0 && row0 < g->in_a;
    const int one = ka == 2 && in0 != (row1 >= 0 && row1 < g->in_a);
    for (int32_t r = 0; r < g->db; r += g->g) { /* no output reads the other phases */
        int16_t *d = dst + r * g->plen;
        /* Phase r column i holds input column r + i db - pad_b. */
        const int32_t lo = TH_MIN(TH_MAX((g->pad_b - r + g->db - 1) / g->db, 0), g->cols);
        const int32_t hi =
            TH_MIN(TH_MAX((g->pad_b + g->in_b - r + g->db - 1) / g->db, lo), g->cols);
        const int32_t st = step_b * g->db;
        const int64_t col = (int64_t)(r + lo * g->db - g->pad_b) * step_b; /* lo < hi: >= 0 */
        if (both) {
            if (lo < hi) {
                gather_words(d + 2 * lo, slot, group, src + row0 * (int64_t)step_a + col,
                             g->da * step_a, st, hi - lo, 0);
            }
            continue;
        }
        if (one) {
            if (lo < hi) {
                gather_pad(d + 2 * lo, slot, group,
                           src + (in0 ? row0 : row1) * (int64_t)step_a + col, st, hi - lo, pad,
                           in0);
            }
            continue;
        }
        for (int32_t a = 0; a < ka; a++) {
            const int32_t row = row0 + a * g->da;
            if (row < 0 || row >= g->in_a) {
                /* columns outside [lo, hi) hold -offset already (dw_rows_s8) */
                for (int32_t k = 0; k < group; k++) {
                    fill_strided(d + k * slot + a + lo * ka, ka, pad, hi - lo);
                }
            } else if (lo < hi) {
                const int8_t *s = src + (int64_t)row * step_a + col;
                if (ka == 1) {
                    stage_cols(d + lo, group, slot, s, st, hi - lo);
                } else { /* one channel at a time */
                    for (int32_t k = 0; k < group; k++) {
                        gather_strided(d + k * slot + lo * ka + a, ka, s + k, st, hi - lo);
                    }
                }
            }
        }
    }
}

/* Requantized output of one accumulator (see the record above). */
TH_INLINE int8_t dw_out1(int32_t acc, const int32_t *rec, int32_t mode, int32_t zp,
                         int32_t lo, int32_t hi)
{
    int32_t y;
    if (mode == 2) {
        y = th_requantize_s8(acc, rec[DW_REC_MULT], rec[DW_REC_RZP], zp);
    } else {
        y = th_smmlar(acc, rec[DW_REC_MULT], rec[DW_REC_RZP]);
        y += acc >> 31;
        y = th_ssat8(y >> rec[DW_REC_E]);
    }
    return (int8_t)th_clamp(y, lo, hi);
}

/* Row kernel arguments. */
typedef struct {
    const int16_t *x; /* first value of the first output's taps */
    int8_t *out;
    int32_t n; /* outputs */
    int32_t os; /* output bytes between outputs */
    int32_t s; /* band values between outputs */
    int32_t kp; /* tap pairs */
    int32_t zp, lo, hi;
    int32_t channels; /* output channels per band (adjacent bytes), records rw words apart */
    int32_t bands; /* bands (input channels) per call, xs values apart; their outputs follow */
    int32_t xs;
    int32_t rw;
} dw_row_args;

/* Four accumulators += kp tap pairs (weight words w) of the windows at q, q + s, q + 2 s,
 * q + 3 s (four base pointers: immediate offsets). With constant kp and s the loop unrolls
 * and loads of the same word are shared. */
/* Four pixels' sums over kp weight words: pixel k's pairs at pk. */
#define DW_TAPS4(p0, p1, p2, p3, w, kp)                                                      \
    _Pragma("GCC unroll 8") for (int32_t p_ = 0; p_ < (kp); p_++) {                          \
        const int32_t wv_ = (w)[p_];                                                         \
        s0 = th_smlad(th_read_s32((p0) + 2 * p_), wv_, s0);                                  \
        s1 = th_smlad(th_read_s32((p1) + 2 * p_), wv_, s1);                                  \
        s2 = th_smlad(th_read_s32((p2) + 2 * p_), wv_, s2);                                  \
        s3 = th_smlad(th_read_s32((p3) + 2 * p_), wv_, s3);                                  \
    }

#define DW_ACC4(q, w, kp, s)                                                                 \
    do {                                                                                     \
        const int16_t *q0_ = (q);                                                            \
        const int16_t *q1_ = q0_ + (s);                                                      \
        const int16_t *q2_ = q1_ + (s);                                                      \
        const int16_t *q3_ = q2_ + (s);                                                      \
        DW_TAPS4(q0_, q1_, q2_, q3_, w, kp)                                                  \
    } while (0)

/* The same sums for four independent window pointers (advanced, with w, a filter row of rs
 * values and kp weight words at a time over `rows` rows). */
#define DW_ACC4_ROWS(q0, q1, q2, q3, rows, rs, w, kp)                                        \
    for (int32_t a_ = (rows); a_ > 0;                                                        \
         a_--, q0 += (rs), q1 += (rs), q2 += (rs), q3 += (rs), w += (kp)) {                  \
        DW_TAPS4(q0, q1, q2, q3, w, kp)                                                      \
    }

/* Stride 1, runtime kp: the windows of the four outputs overlap, two new words per pair. */
TH_INLINE void dw_acc4_s1(const int16_t *q, const int32_t *w, int32_t kp, int32_t *a0,
                          int32_t *a1, int32_t *a2, int32_t *a3)
{
    int32_t s0 = *a0, s1 = *a1, s2 = *a2, s3 = *a3;
    int32_t x0 = th_read_s32(q);
    int32_t x1 = th_read_s32(q + 1);
    int32_t p = 0;
    for (; p + 1 < kp; p += 2, q += 4) {
        const int32_t w0 = w[p];
        const int32_t w1 = w[p + 1];
        const int32_t x2 = th_read_s32(q + 2);
        const int32_t x3 = th_read_s32(q + 3);
        s0 = th_smlad(x0, w0, s0);
        s1 = th_smlad(x1, w0, s1);
        s2 = th_smlad(x2, w0, s2);
        s3 = th_smlad(x3, w0, s3);
        x0 = th_read_s32(q + 4);
        x1 = th_read_s32(q + 5);
        s0 = th_smlad(x2, w1, s0);
        s1 = th_smlad(x3, w1, s1);
        s2 = th_smlad(x0, w1, s2);
        s3 = th_smlad(x1, w1, s3);
    }
    if (p < kp) {
        const int32_t w0 = w[p];
        s0 = th_smlad(x0, w0, s0);
        s1 = th_smlad(x1, w0, s1);
        s2 = th_smlad(th_read_s32(q + 2), w0, s2);
        s3 = th_smlad(th_read_s32(q + 3), w0, s3);
    }
    *a0 = s0, *a1 = s1, *a2 = s2, *a3 = s3;
}

/* Stride 2 (KA 2 bands: a column of both rows is one word), runtime kp: the windows of the
 * four outputs are a word apart, so each pair loads one new word; the four live words rotate
 * through x0-x3 (unrolled by four: no register moves). */
TH_INLINE void dw_acc4_s2(const int16_t *q, const int32_t *w, int32_t kp, int32_t *a0,
                          int32_t *a1, int32_t *a2, int32_t *a3)
{
    int32_t s0 = *a0, s1 = *a1, s2 = *a2, s3 = *a3;
    int32_t x0 = th_read_s32(q);
    int32_t x1 = th_read_s32(q + 2);
    int32_t x2 = th_read_s32(q + 4);
    int32_t x3;
/* Pair j of the four outputs: load the block's next word into xn (q + off values), then the
 * windows' words a-d times weight word j. */
#define DW_S2_PAIR(xn, off, a, b, c, d, j)                                                   \
    do {                                                                                     \
        xn = th_read_s32(q + (off));                                                         \
        s0 = th_smlad(a, w[j], s0);                                                          \
        s1 = th_smlad(b, w[j], s1);                                                          \
        s2 = th_smlad(c, w[j], s2);                                                          \
        s3 = th_smlad(d, w[j], s3);                                                          \
    } while (0)
    const int32_t *const end = w + (kp & ~3);
    for (; w != end; w += 4, q += 8) {
        DW_S2_PAIR(x3, 6, x0, x1, x2, x3, 0);
        DW_S2_PAIR(x0, 8, x1, x2, x3, x0, 1);
        DW_S2_PAIR(x1, 10, x2, x3, x0, x1, 2);
        DW_S2_PAIR(x2, 12, x3, x0, x1, x2, 3);
    }
    const int32_t rest = kp & 3; /* the same steps, at most three */
    if (rest > 0) {
        DW_S2_PAIR(x3, 6, x0, x1, x2, x3, 0);
        if (rest > 1) {
            DW_S2_PAIR(x0, 8, x1, x2, x3, x0, 1);
            if (rest > 2) {
                DW_S2_PAIR(x1, 10, x2, x3, x0, x1, 2);
            }
        }
    }
#undef DW_S2_PAIR
    *a0 = s0, *a1 = s1, *a2 = s2, *a3 = s3;
}

/* The same for two outputs (the one or two left after the blocks of four: the bands cover
 * the windows of a whole last block, dw_geometry). */
TH_INLINE void dw_acc2_s2(const int16_t *q, const int32_t *w, int32_t kp, int32_t *a0,
                          int32_t *a1)
{
    int32_t s0 = *a0, s1 = *a1;
    int32_t x0 = th_read_s32(q);
    const int32_t *const end = w + (kp & ~1);
    for (; w != end; w += 2, q += 4) {
        const int32_t x1 = th_read_s32(q + 2);
        s0 = th_smlad(x0, w[0], s0);
        s1 = th_smlad(x1, w[0], s1);
        x0 = th_read_s32(q + 4);
        s0 = th_smlad(x1, w[1], s0);
        s1 = th_smlad(x0, w[1], s1);
    }
    if (kp & 1) {
        s0 = th_smlad(x0, w[0], s0);
        s1 = th_smlad(th_read_s32(q + 2), w[0], s1);
    }
    *a0 = s0, *a1 = s1;
}

/* Fast requantization of a doubled accumulator (record mode 0). */
TH_INLINE int32_t dw_rq(int32_t acc2, int32_t mult, int32_t rzp, int32_t e)
{
    int32_t y = th_smmlar(acc2, mult, rzp);
    y += acc2 >> 31;
    return th_ssat8(y >> e);
}

/* n (1 or 2) outputs of a row segment one at a time, record mode 0 (out of line: one copy
 * for the row kernels of longer filters). */
static void __attribute__((noinline)) dw_row_tail(const int16_t *x, const int32_t *rec,
                                                  int8_t *out, int32_t kp, int32_t s,
                                                  int32_t os, int32_t n)
{
    for (; n > 0; n--, x += s, out += os) {
        int32_t acc = rec[DW_REC_ACC];
        for (int32_t p = 0; p < kp; p++) {
            acc = th_smlad(th_read_s32(x + 2 * p), rec[DW_REC_W + p], acc);
        }
        out[0] = (int8_t)dw_rq(acc, rec[DW_REC_MULT], rec[DW_REC_RZP], rec[DW_REC_E]);
    }
}

/* One row segment of one output channel (outputs at out), record mode 0. KP > 0: constant
 * tap pairs (up to four are held in registers); S > 0: constant stride. */
TH_INLINE void dw_row_one(const dw_row_args *r, const int16_t *x, const int32_t *rec,
                          int8_t *out, const int KP,
                          const int S)
{
    const int32_t kp = KP > 0 ? KP : r->kp;
    const int32_t s = S > 0 ? S : r->s;
    const int32_t os = r->os;
    const int32_t acc0 = rec[DW_REC_ACC];
    const int32_t mult = rec[DW_REC_MULT];
    const int32_t rzp = rec[DW_REC_RZP];
    const int32_t e = rec[DW_REC_E];
    const int32_t *wts = rec + DW_REC_W;
    int32_t wl[4] = {0, 0, 0, 0};
    if (KP > 0 && KP <= 4) {
        _Pragma("GCC unroll 4") for (int32_t p = 0; p < KP; p++) {
            wl[p] = wts[p];
        }
    }
    /* Blocks of four outputs; a last block of three is computed whole (the bands cover its
     * windows, dw_geometry) and stores three; one or two left over go one at a time. */
    const int32_t rest = r->n & 3;
    int32_t blocks = (r->n + (rest == 3)) >> 2;
    if (blocks > 0) {
        for (;;) {
            int32_t s0 = acc0, s1 = acc0, s2 = acc0, s3 = acc0;
            if (KP > 0 && KP <= 4) {
                DW_ACC4(x, wl, KP, s);
            } else if (S == 2 && (KP == 0 || KP > 8)) { /* one new word a pair */
                dw_acc4_s2(x, wts, kp, &s0, &s1, &s2, &s3);
            } else if (KP > 0 || s != 1) {
                DW_ACC4(x, wts, kp, s);
            } else {
                dw_acc4_s1(x, wts, kp, &s0, &s1, &s2, &s3);
            }
            /* Stores stepping the pointer: no 2 os, 3 os kept in registers. */
            *out = (int8_t)dw_rq(s0, mult, rzp, e);
            out += os;
            *out = (int8_t)dw_rq(s1, mult, rzp, e);
            out += os;
            *out = (int8_t)dw_rq(s2, mult, rzp, e);
            out += os;
            if (--blocks == 0) {
                if (rest == 3) {
                    return;
                }
                *out = (int8_t)dw_rq(s3, mult, rzp, e);
                out += os;
                x += 4 * s;
                break;
            }
            *out = (int8_t)dw_rq(s3, mult, rzp, e);
            out += os;
            x += 4 * s;
        }
    }
    if (KP > 0 && KP <= 5) { /* inline: a few tap pairs (the 3 x 3 and smaller filters) */
        for (int32_t n = rest == 3 ? 0 : rest; n > 0; n--, x += s, out += os) {
            int32_t acc = acc0;
            _Pragma("GCC unroll 5") for (int32_t p = 0; p < KP; p++) {
                acc = th_smlad(th_read_s32(x + 2 * p), KP <= 4 ? wl[p] : wts[p], acc);
            }
            out[0] = (int8_t)dw_rq(acc, mult, rzp, e);
        }
    } else if ((KP == 0 || KP > 8) && S == 2 && rest != 3 && rest > 0) {
        int32_t s0 = acc0, s1 = acc0;
        dw_acc2_s2(x, wts, kp, &s0, &s1);
        *out = (int8_t)dw_rq(s0, mult, rzp, e);
        if (rest == 2) {
            out[os] = (int8_t)dw_rq(s1, mult, rzp, e);
        }
    } else if (rest != 3 && rest > 0) {
        dw_row_tail(x, rec, out, kp, s, os, rest);
    }
}

/* Any record mode (activation clamp, exact requantization), one output at a time. */
static void __attribute__((noinline)) dw_row_slow(const dw_row_args *r, const int16_t *x,
                                                  const int32_t *rec,
                                                  int8_t *out)
{
    const int32_t mode = rec[-1];
    for (int32_t n = r->n; n > 0; n--, x += r->s, out += r->os) {
        int32_t acc = rec[DW_REC_ACC];
        for (int32_t p = 0; p < r->kp; p++) {
            acc = th_smlad(th_read_s32(x + 2 * p), rec[DW_REC_W + p], acc);
        }
        out[0] = dw_out1(acc, rec, mode, r->zp, r->lo, r->hi);
    }
}

/* The row segment of r->bands x r->channels output channels (records from rec, mode word
 * first; band b at r->x + b r->xs). */
TH_INLINE void dw_row_impl(const dw_row_args *r, const int32_t *rec, const int KP,
                           const int S)
{
    int8_t *out = r->out;
    const int16_t *x = r->x;
    for (int32_t b = r->bands; b > 0; b--, x += r->xs) {
        for (int32_t c = r->channels; c > 0; c--, rec += r->rw, out++) {
            if (rec[0] == 0) {
                dw_row_one(r, x, rec + 1, out, KP, S);
            } else {
                dw_row_slow(r, x, rec + 1, out);
            }
        }
    }
}

typedef void (*dw_row_fn)(const dw_row_args *r, const int32_t *rec);

#define DW_ROW_FN(name, KP, S)                                                               \
    static void name(const dw_row_args *r, const int32_t *rec)                               \
    {                                                                                        \
        dw_row_impl(r, rec, KP, S);                                                          \
    }
#define DW_ROW_FNS(KP)                                                                       \
    DW_ROW_FN(dw_row_k##KP##_s1, KP, 1)                                                      \
    DW_ROW_FN(dw_row_k##KP##_s2, KP, 2)                                                      \
    DW_ROW_FN(dw_row_k##KP##_sn, KP, 0)
DW_ROW_FNS(1)
DW_ROW_FNS(2)
DW_ROW_FNS(3)
DW_ROW_FNS(4)
DW_ROW_FNS(5)
DW_ROW_FNS(6)
DW_ROW_FNS(7)
DW_ROW_FNS(8)
DW_ROW_FN(dw_row_k5_s3, 5, 3)
DW_ROW_FN(dw_row_k5_s6, 5, 6)
DW_ROW_FN(dw_row_k2_s4, 2, 4)
DW_ROW_FN(dw_row_any_s1, 0, 1)
DW_ROW_FN(dw_row_any_sn, 0, 0)
DW_ROW_FN(dw_row_any_s2, 0, 2)
#if TH_NN_KEEP_DW_ROWS_KA2
/* Two-row filters 9-16 taps long (path DW_ROWS_KA2): constant pairs, no loop. */
#define DW_ROW_S2(KP) DW_ROW_FN(dw_row_k##KP##_s2, KP, 2)
DW_ROW_S2(9) DW_ROW_S2(10) DW_ROW_S2(11) DW_ROW_S2(12)
DW_ROW_S2(13) DW_ROW_S2(14) DW_ROW_S2(15) DW_ROW_S2(16)
#undef DW_ROW_S2
#endif
#undef DW_ROW_FNS
#undef DW_ROW_FN

static dw_row_fn pick_row_fn(int32_t kp, int32_t s)
{
    static const dw_row_fn by_kp[8][3] = {
        {dw_row_k1_s1, dw_row_k1_s2, dw_row_k1_sn}, {dw_row_k2_s1, dw_row_k2_s2, dw_row_k2_sn},
        {dw_row_k3_s1, dw_row_k3_s2, dw_row_k3_sn}, {dw_row_k4_s1, dw_row_k4_s2, dw_row_k4_sn},
        {dw_row_k5_s1, dw_row_k5_s2, dw_row_k5_sn}, {dw_row_k6_s1, dw_row_k6_s2, dw_row_k6_sn},
        {dw_row_k7_s1, dw_row_k7_s2, dw_row_k7_sn}, {dw_row_k8_s1, dw_row_k8_s2, dw_row_k8_sn},
    };
    if (kp == 5 && s == 3) {
        return dw_row_k5_s3; /* 3 x 3, stride 1 */
    }
    if (kp == 5 && s == 6) {
        return dw_row_k5_s6; /* 3 x 3, stride 2 */
    }
    if (kp == 2 && s == 4) {
        return dw_row_k2_s4; /* 2 x 2, stride 2 */
    }
    const int32_t si = s == 1 ? 0 : (s == 2 ? 1 : 2);
    if (kp <= 8) {
        return by_kp[kp - 1][si];
    }
#if TH_NN_KEEP_DW_ROWS_KA2
    static const dw_row_fn s2_long[8] = {dw_row_k9_s2,  dw_row_k10_s2, dw_row_k11_s2,
                                         dw_row_k12_s2, dw_row_k13_s2, dw_row_k14_s2,
                                         dw_row_k15_s2, dw_row_k16_s2};
    if (s == 2 && kp <= 16) {
        return s2_long[kp - 9];
    }
#endif
    return si == 0 ? dw_row_any_s1 : si == 1 ? dw_row_any_s2 : dw_row_any_sn;
}

/* All outputs of one output row of r->channels output channels (records from rec). */
static void dw_out_row(dw_row_fn fn, dw_row_args *r, const int16_t *band, int8_t *out_row,
                       int32_t out_step_b, const int32_t *rec, const dw_geom *g)
{
    if (g->p == 1) {
        r->x = band;
        r->out = out_row;
        r->n = g->out_b;
        fn(r, rec);
        return;
    }
    for (int32_t o0 = 0; o0 < g->p && o0 < g->out_b; o0++) {
        const int32_t ph = (o0 * g->sb) % g->db;
        r->x = band + ph * g->plen + ((o0 * g->sb) / g->db) * g->ka;
        r->out = out_row + (int64_t)o0 * out_step_b;
        r->n = (g->out_b - o0 + g->p - 1) / g->p;
        fn(r, rec);
    }
}

/* Whether the output overlaps the input (th_nn.h rule (a)). */
static int dw_overlaps(const th_dims *input_dims, const int8_t *input,
                         const th_dims *output_dims, const int8_t *output)
{
    const int8_t *in_end =
        input + (int64_t)input_dims->n * input_dims->h * input_dims->w * input_dims->c;
    const int8_t *out_end =
        output + (int64_t)output_dims->n * output_dims->h * output_dims->w * output_dims->c;
    return output < in_end && input < out_end;
}

/* g: dw_geometry of these arguments. */
static void dw_rows_s8(int8_t *scratch, const dw_geom *gp, const th_dw_conv_params *params,
                       const th_per_channel_quant *quant, const th_dims *input_dims,
                       const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                       const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    const dw_geom g = *gp;
    int8_t *plane = scratch;
    int16_t *band = (int16_t *)(void *)(scratch + plane_bytes(params, input_dims, &g));
    int32_t *records = (int32_t *)(void *)((int8_t *)band + band_bytes(&g));
    const int32_t in_c = input_dims->c;
    const int32_t out_c = output_dims->c;
    const int32_t mult = params->ch_mult;
    const int32_t rw = 1 + record_words(&g); /* mode word first */
    const int32_t band_slot = g.db * g.plen;
    const dw_rec_ctx rc = rec_ctx(params, quant, filter_dims, filter, bias, out_c, &g);
    /* Output steps in the oriented frame. */
    const int32_t out_step_a = g.transposed ? out_c : output_dims->w * out_c;
    const int32_t out_step_b = g.transposed ? output_dims->w * out_c : out_c;
    const int32_t plane_size = input_dims->h * input_dims->w;
    /* The plane copy is only needed when the output overwrites the input (th_nn.h rule
     * (a)) and later output rows read input rows that earlier ones may have overwritten. */
    const int32_t in_place = plane_bytes(params, input_dims, &g) > 0 &&
                             dw_overlaps(input_dims, input, output_dims, output);
    dw_row_args r;
    r.os = g.p * out_step_b;
    r.s = g.sbp * g.ka;
    r.kp = g.kp;
    r.zp = params->output_offset;
    r.lo = params->activation.min;
    r.hi = params->activation.max;
    r.channels = mult;
    r.rw = rw;
    r.xs = band_slot;
    const dw_row_fn fn = pick_row_fn(r.kp, r.s);
    /* -offset everywhere: stage_band writes only the columns inside the input. */
    fill_pairs(band, (int16_t)(-params->input_offset), g.group * band_slot);
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *in_b = input + (int64_t)n * plane_size * in_c;
        int8_t *out_b = output + (int64_t)n * output_dims->h * output_dims->w * out_c;
        for (int32_t ic = 0; ic < in_c;) {
            /* In place with several output rows, one channel at a time (its plane copied). */
            const int32_t group = g.out_a == 1 || !in_place ? TH_MIN(g.group, in_c - ic) : 1;
            const int8_t *src = in_b + ic;
            int32_t step_h = input_dims->w * in_c;
            int32_t step_w = in_c;
            if (in_place && group == 1) {
                for (int32_t i = 0; i < plane_size; i++) {
                    plane[i] = in_b[(int64_t)i * in_c + ic];
                }
                src = plane;
                step_h = input_dims->w;
                step_w = 1;
            }
            const int32_t step_a = g.transposed ? step_w : step_h;
            const int32_t step_b = g.transposed ? step_h : step_w;
            /* The records of the group's output channels, in output order. */
            for (int32_t m = 0; m < group * mult; m++) {
                prepare_record(records + m * rw, &rc, ic * mult + m);
            }
            r.bands = group;
            for (int32_t oa = 0; oa < g.out_a; oa++) {
                if (g.ka == 1 && g.db == 1) {
                    stage_line(band, group, band_slot, src, step_a, step_b, oa, &g,
                               params->input_offset);
                } else {
                    stage_band(band, group, band_slot, src, step_a, step_b, oa, &g,
                               params->input_offset);
                }
                dw_out_row(fn, &r, band, out_b + (int64_t)oa * out_step_a + ic * mult,
                           out_step_b, records, &g);
            }
            ic += group;
        }
    }
}

/* ---- Plane path: filters of at least 3 rows and 4 columns (2 with ch_mult 1), the padded
 * int16 plane of a channel within TH_DW_PLANE_MAX bytes ----
 * The channel's padded input plane is staged once as int16 raw values (-input_offset in the
 * padding, folded into the start value like the rows path); each plane row as DW phase rows
 * of `phlen` values (phase r holds the columns r, r + DW, ...), so that an output's taps
 * are KH runs of KW adjacent values, one per filter row, each a chain of SMLADs over
 * column pairs (an odd KW pads the last pair with a zero weight), four outputs at a time
 * sharing each weight word. Outputs o0 + P t (P = DW / gcd(SW, DW)) share a phase and step
 * SW / gcd values in it; where that step is 1 the blocks' windows overlap and share their loads
 * (path DW_PLANE_S1), and with several phases and a larger step a row's outputs go instead in
 * blocks of four consecutive ones across the phases (path DW_PLANE_PHASES: phase rows of few
 * outputs are not left to one output at a time). Path DW_PLANE_FLAT, taken first: all the
 * channel's outputs in memory order in blocks of four whatever rows and phases they fall in,
 * each block's windows from a table of offsets made once per call (dw_plane_table), one call
 * per channel (planes of 21-161 outputs per channel: per-row calls and blocks of four cut
 * short by row ends cost as much as the taps); unit-stride blocks not split by a row end
 * share their loads as DW_PLANE_S1's. Staging is once per channel (the rows path
 * restages the KA input rows of every output row, which for tall filters on small planes
 * costs more than the taps), rows inner (gather_rows), and no plane copy is needed in place:
 * the channel's input is in scratch before any of its outputs is written. */
#define TH_DW_PLANE_MAX 16384

typedef struct {
    int32_t transposed; /* A = w, B = h */
    int32_t ka, kb, sa, sb, da, db, pad_a, pad_b, in_a, in_b, out_a, out_b;
    int32_t rows, rowlen, phlen, kbp;
    int32_t p, sbp; /* output phases, values between a phase's outputs */
} dw_plane_geom;

/* The plane geometry with B = w (transposed 0) or B = h; rowlen 0 if it does not apply. */
static dw_plane_geom dw_plane_frame(const th_dw_conv_params *params, const th_dims *input_dims,
                                    const th_dims *filter_dims, const th_dims *output_dims,
                                    int32_t transposed)
{
    dw_plane_geom p;
    p.transposed = transposed;
    p.ka = transposed ? filter_dims->w : filter_dims->h;
    p.kb = transposed ? filter_dims->h : filter_dims->w;
    p.sa = transposed ? params->stride.w : params->stride.h;
    p.sb = transposed ? params->stride.h : params->stride.w;
    p.da = transposed ? params->dilation.w : params->dilation.h;
    p.db = transposed ? params->dilation.h : params->dilation.w;
    p.pad_a = transposed ? params->padding.w : params->padding.h;
    p.pad_b = transposed ? params->padding.h : params->padding.w;
    p.in_a = transposed ? input_dims->w : input_dims->h;
    p.in_b = transposed ? input_dims->h : input_dims->w;
    p.out_a = transposed ? output_dims->w : output_dims->h;
    p.out_b = transposed ? output_dims->h : output_dims->w;
    p.rowlen = 0;
    if (p.ka < 2 || p.kb < (params->ch_mult == 1 ? 2 : 4) || p.ka * p.kb < 15 || p.kb > 64 ||
        p.ka > 64 || p.db > 16) {
        return p;
    }
    const int32_t g = gcd32(p.sb, p.db);
    p.kbp = (p.kb + 1) / 2;
    p.p = p.db / g;
    p.sbp = p.sb / g;
    /* Values read in a phase row: the last output of phase o0 reads 2 kbp values from
     * (o0 sb) / db + sbp (n - 1), n rounded up to a multiple of four (the last block of four
     * is computed whole). */
    int64_t need = 0;
    for (int32_t o0 = 0; o0 < p.p && o0 < p.out_b; o0++) {
        const int32_t n = ((p.out_b - o0 + p.p - 1) / p.p + 3) & ~3;
        const int64_t end = (o0 * p.sb) / p.db + (int64_t)p.sbp * (n - 1) + 2 * p.kbp;
        need = need > end ? need : end;
    }
    const int64_t phlen = (need + 1) & ~1;
    const int64_t rows = (int64_t)(p.out_a - 1) * p.sa + (int64_t)(p.ka - 1) * p.da + 1;
    if (2 * rows * p.db * phlen > TH_DW_PLANE_MAX) {
        return p;
    }
    p.rows = (int32_t)rows;
    p.phlen = (int32_t)phlen;
    p.rowlen = (int32_t)(p.db * phlen);
    return p;
}

/* Rough instructions per output row of a frame: about 3 per weight pair and output, 2 per
 * filter row and output, 200 per phase row call (times out_b outputs of the row). */
static int64_t dw_plane_cost(const dw_plane_geom *p)
{
    return (int64_t)(3 * p->ka * p->kbp + 2 * p->ka) * p->out_b + 200 * p->p;
}

/* The cheaper frame per output (B = w on a tie); rowlen 0: no plane path. */
static dw_plane_geom dw_plane_geometry(const th_dw_conv_params *params,
                                       const th_dims *input_dims, const th_dims *filter_dims,
                                       const th_dims *output_dims)
{
    const dw_plane_geom plain = dw_plane_frame(params, input_dims, filter_dims, output_dims, 0);
    const dw_plane_geom tr = dw_plane_frame(params, input_dims, filter_dims, output_dims, 1);
    if (tr.rowlen > 0 && (plain.rowlen == 0 || dw_plane_cost(&tr) * plain.out_b <
                                                   dw_plane_cost(&plain) * tr.out_b)) {
        return tr;
    }
    return plain;
}

/* Plane, records, and the flat path's window table (dw_plane_table). */
static int32_t dw_plane_scratch(const th_dw_conv_params *params, const dw_plane_geom *p)
{
    return 2 * p->rows * p->rowlen + 4 * params->ch_mult * (1 + 4 + p->ka * p->kbp) +
           2 * th_round_up4(p->out_a * p->out_b);
}

/* Byte offsets from the plane of the windows of a channel's outputs in memory order (h
 * outer), their count rounded up to a multiple of four by repeating the last (path
 * DW_PLANE_FLAT). A window starts inside the plane (TH_DW_PLANE_MAX bytes): 16 bits. */
static void __attribute__((noinline)) dw_plane_table(uint16_t *t, const dw_plane_geom *pg)
{
    const int32_t outer = pg->transposed ? pg->out_b : pg->out_a;
    const int32_t inner = pg->transposed ? pg->out_a : pg->out_b;
    int32_t n = 0;
    for (int32_t i = 0; i < outer; i++) {
        for (int32_t j = 0; j < inner; j++, n++) {
            const int32_t oa = pg->transposed ? j : i;
            const int32_t c = (pg->transposed ? i : j) * pg->sb; /* plane column */
            t[n] = (uint16_t)(2 * (oa * pg->sa * pg->rowlen + (c % pg->db) * pg->phlen +
                                   c / pg->db));
        }
    }
    for (; n & 3; n++) {
        t[n] = t[n - 1];
    }
}

/* Plane row kernel arguments. */
typedef struct {
    const int16_t *x; /* first value of the first output's first filter row */
    int8_t *out;
    int32_t n; /* outputs */
    int32_t os; /* output bytes between outputs */
    int32_t s; /* values between outputs */
    int32_t kbp, kh; /* pairs per filter row, filter rows */
    int32_t rs; /* values between filter rows */
    int32_t zp, lo, hi;
    int32_t channels, rw; /* output channels (adjacent bytes), record words */
    int32_t sb, db, phlen; /* phases (dw_plane_phases_impl): stride, dilation, phase row */
    const dw_word *tab; /* flat (dw_plane_flat_impl): window byte offsets, two per word */
} dw_plane_args;

/* One output of one channel: start value acc plus the KH runs of pairs at x. */
TH_INLINE int32_t dw_plane_acc1(const dw_plane_args *r, const int16_t *x, const int32_t *w,
                                int32_t acc, const int KBP)
{
    const int32_t kbp = KBP > 0 ? KBP : r->kbp;
    for (int32_t a = r->kh; a > 0; a--, x += r->rs, w += kbp) {
        _Pragma("GCC unroll 8") for (int32_t p = 0; p < kbp; p++) {
            acc = th_smlad(th_read_s32(x + 2 * p), w[p], acc);
        }
    }
    return acc;
}

/* One output row of one channel, record mode 0. */
TH_INLINE void dw_plane_one(const dw_plane_args *r, const int32_t *rec, int8_t *out,
                            const int KBP, const int S)
{
    const int32_t kbp = KBP > 0 ? KBP : r->kbp;
    const int32_t s = S > 0 ? S : r->s;
    const int32_t os = r->os;
    const int32_t acc0 = rec[DW_REC_ACC];
    const int32_t mult = rec[DW_REC_MULT];
    const int32_t rzp = rec[DW_REC_RZP];
    const int32_t e = rec[DW_REC_E];
    const int32_t *wts = rec + DW_REC_W;
    const int16_t *x = r->x;
    const int32_t kh = r->kh;
    const int32_t rs = r->rs;
    /* As dw_row_one: blocks of four, a last block of three computed whole, one or two left
     * over one at a time. */
    const int32_t rest = r->n & 3;
    for (int32_t blocks = (r->n + (rest == 3)) >> 2; blocks > 0; blocks--) {
        int32_t s0 = acc0, s1 = acc0, s2 = acc0, s3 = acc0;
        const int32_t *wa = wts;
        if (S > 0) { /* constant stride: loads of the same word shared (DW_ACC4) */
            const int16_t *xa = x;
            for (int32_t a = kh; a > 0; a--, xa += rs, wa += kbp) {
                DW_ACC4(xa, wa, kbp, s);
            }
        } else {
            /* Runtime stride: four window pointers stepping a filter row at a time
             * (immediate offsets for the pairs, no per-pair offset registers). */
            const int16_t *q0 = x, *q1 = x + s, *q2 = x + 2 * s, *q3 = x + 3 * s;
            DW_ACC4_ROWS(q0, q1, q2, q3, kh, rs, wa, kbp);
        }
        *out = (int8_t)dw_rq(s0, mult, rzp, e);
        out += os;
        *out = (int8_t)dw_rq(s1, mult, rzp, e);
        out += os;
        *out = (int8_t)dw_rq(s2, mult, rzp, e);
        out += os;
        if (blocks == 1 && rest == 3) {
            return;
        }
        *out = (int8_t)dw_rq(s3, mult, rzp, e);
        out += os;
        x += 4 * s;
    }
    for (int32_t n = rest == 3 ? 0 : rest; n > 0; n--, x += s, out += os) {
        *out = (int8_t)dw_rq(dw_plane_acc1(r, x, wts, acc0, KBP), mult, rzp, e);
    }
}

/* Any record mode, one output at a time. */
static void __attribute__((noinline)) dw_plane_slow(const dw_plane_args *r, const int32_t *rec,
                                                    int8_t *out)
{
    const int16_t *x = r->x;
    for (int32_t n = r->n; n > 0; n--, x += r->s, out += r->os) {
        const int32_t acc = dw_plane_acc1(r, x, rec + DW_REC_W, rec[DW_REC_ACC], 0);
        out[0] = dw_out1(acc, rec, rec[-1], r->zp, r->lo, r->hi);
    }
}

TH_INLINE void dw_plane_impl(const dw_plane_args *r, const int32_t *rec, const int KBP,
                             const int S)
{
    int8_t *out = r->out;
    for (int32_t c = r->channels; c > 0; c--, rec += r->rw, out++) {
        if (rec[0] == 0) {
            dw_plane_one(r, rec + 1, out, KBP, S);
        } else {
            dw_plane_slow(r, rec + 1, out);
        }
    }
}

/* Several phases (P > 1): a row's outputs in blocks of four consecutive ones across the
 * phases (output o at phase (o SB) mod DB, index (o SB) / DB there: r->x is the row's first
 * value, r->n its outputs, r->os bytes apart), so that rows of few outputs per phase still
 * share each weight word four times; a last block of fewer repeats its last output (windows
 * the other outputs read) and stores only its own. */
TH_INLINE void dw_plane_phases_impl(const dw_plane_args *r, const int32_t *rec, const int KBP)
{
    const int32_t kbp = KBP > 0 ? KBP : r->kbp;
    const int32_t os = r->os;
    const int32_t rs = r->rs;
    for (int32_t o = 0; o < r->n; o += 4) {
        const int16_t *q[4];
        for (int32_t k = 0; k < 4; k++) {
            const int32_t c = TH_MIN(o + k, r->n - 1) * r->sb; /* plane column */
            q[k] = r->x + (c % r->db) * r->phlen + c / r->db;
        }
        const int32_t m = TH_MIN(r->n - o, 4);
        int8_t *out = r->out + (int64_t)o * os;
        const int32_t *rc = rec;
        for (int32_t ch = r->channels; ch > 0; ch--, rc += r->rw, out++) {
            const int32_t *rr = rc + 1;
            if (rc[0] != 0) { /* activation clamp or exact requantization */
                for (int32_t k = 0; k < m; k++) {
                    const int32_t acc =
                        dw_plane_acc1(r, q[k], rr + DW_REC_W, rr[DW_REC_ACC], KBP);
                    out[k * os] = dw_out1(acc, rr, rc[0], r->zp, r->lo, r->hi);
                }
                continue;
            }
            const int32_t acc0 = rr[DW_REC_ACC];
            int32_t s0 = acc0, s1 = acc0, s2 = acc0, s3 = acc0;
            const int16_t *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];
            const int32_t *wa = rr + DW_REC_W;
            DW_ACC4_ROWS(q0, q1, q2, q3, r->kh, rs, wa, kbp);
            const int32_t mult = rr[DW_REC_MULT];
            const int32_t rzp = rr[DW_REC_RZP];
            const int32_t e = rr[DW_REC_E];
            int8_t *d = out;
            *d = (int8_t)dw_rq(s0, mult, rzp, e);
            if (m > 1) {
                d += os;
                *d = (int8_t)dw_rq(s1, mult, rzp, e);
            }
            if (m > 2) {
                d += os;
                *d = (int8_t)dw_rq(s2, mult, rzp, e);
            }
            if (m > 3) {
                d += os;
                *d = (int8_t)dw_rq(s3, mult, rzp, e);
            }
        }
    }
}

/* Path DW_PLANE_FLAT: all r->n outputs of a channel in memory order (r->os bytes apart) in
 * blocks of four, whatever rows and phases they fall in, each block's four windows at the
 * byte offsets of r->tab from r->x (dw_plane_table: n rounded up to four, the last repeated).
 * Channels of few outputs per row (large strides and dilations) keep every weight word
 * shared four times, and a channel is one call. */
static void __attribute__((noinline)) dw_plane_flat_slow(const dw_plane_args *r,
                                                         const int32_t *rec, int8_t *out)
{
    const uint16_t *t = (const uint16_t *)(const void *)r->tab;
    for (int32_t i = 0; i < r->n; i++, out += r->os) {
        const int16_t *x = (const int16_t *)(const void *)((const char *)r->x + t[i]);
        const int32_t acc = dw_plane_acc1(r, x, rec + DW_REC_W, rec[DW_REC_ACC], 0);
        out[0] = dw_out1(acc, rec, rec[-1], r->zp, r->lo, r->hi);
    }
}

/* S1 (stride 1 along B, one phase: path DW_PLANE_S1): a block whose four windows are
 * adjacent (not split by a row end) shares its overlapping window loads (DW_ACC4). */
TH_INLINE void dw_plane_flat_impl(const dw_plane_args *r, const int32_t *rec, const int KBP,
                                  const int S1)
{
    const int32_t kbp = KBP > 0 ? KBP : r->kbp;
    const char *x = (const char *)r->x;
    const int32_t os = r->os;
    const int32_t rs = r->rs;
    int8_t *out = r->out;
    for (int32_t c = r->channels; c > 0; c--, rec += r->rw, out++) {
        const int32_t *rr = rec + 1;
        if (rec[0] != 0) { /* activation clamp or exact requantization */
            dw_plane_flat_slow(r, rr, out);
            continue;
        }
        const int32_t acc0 = rr[DW_REC_ACC];
        const dw_word *t = r->tab;
        int8_t *o = out;
        for (int32_t left = r->n;; left -= 4, t += 2) {
            const uint32_t t01 = t[0], t23 = t[1];
            const int16_t *q0 = (const int16_t *)(const void *)(x + (t01 & 0xFFFFu));
            const int16_t *q1 = (const int16_t *)(const void *)(x + (t01 >> 16));
            const int16_t *q2 = (const int16_t *)(const void *)(x + (t23 & 0xFFFFu));
            const int16_t *q3 = (const int16_t *)(const void *)(x + (t23 >> 16));
            int32_t s0 = acc0, s1 = acc0, s2 = acc0, s3 = acc0;
            const int32_t *wa = rr + DW_REC_W;
            if (S1 && t23 - t01 == 0x00040004u && (t01 >> 16) - (t01 & 0xFFFFu) == 2) {
                for (int32_t a = r->kh; a > 0; a--, q0 += rs, wa += kbp) {
                    if (KBP > 0) {
                        DW_ACC4(q0, wa, KBP, 1);
                    } else {
                        dw_acc4_s1(q0, wa, kbp, &s0, &s1, &s2, &s3);
                    }
                }
            } else {
                DW_ACC4_ROWS(q0, q1, q2, q3, r->kh, rs, wa, kbp);
            }
            const int32_t mult = rr[DW_REC_MULT];
            const int32_t rzp = rr[DW_REC_RZP];
            const int32_t e = rr[DW_REC_E];
            *o = (int8_t)dw_rq(s0, mult, rzp, e);
            o += os;
            if (left > 4) { /* a whole block, more to come */
                *o = (int8_t)dw_rq(s1, mult, rzp, e);
                o += os;
                *o = (int8_t)dw_rq(s2, mult, rzp, e);
                o += os;
                *o = (int8_t)dw_rq(s3, mult, rzp, e);
                o += os;
                continue;
            }
            if (left > 1) {
                *o = (int8_t)dw_rq(s1, mult, rzp, e);
                o += os;
            }
            if (left > 2) {
                *o = (int8_t)dw_rq(s2, mult, rzp, e);
                o += os;
            }
            if (left > 3) {
                *o = (int8_t)dw_rq(s3, mult, rzp, e);
            }
            break;
        }
    }
}

typedef void (*dw_plane_fn)(const dw_plane_args *r, const int32_t *rec);

/* Plane row kernels per tap pairs per filter row (KBP, 0: any): any stride; stride 1 (path
 * DW_PLANE_S1: the windows of a block of four overlap, so that its loads of the same word are
 * shared); blocks across phases (path DW_PLANE_PHASES, dw_plane_phases_impl). */
/* One kernel per KBP and variant: CALL, the impl called with r, rec and KBP. */
#define DW_PLANE_DEF(KBP, SUFFIX, CALL)                                                      \
    static void dw_plane_k##KBP##SUFFIX(const dw_plane_args *r, const int32_t *rec)          \
    {                                                                                        \
        CALL;                                                                                \
    }
#define DW_PLANE_FN(KBP) DW_PLANE_DEF(KBP, , dw_plane_impl(r, rec, KBP, 0))
#define DW_PLANE_FN_S1(KBP) DW_PLANE_DEF(KBP, _s1, dw_plane_impl(r, rec, KBP, 1))
#define DW_PLANE_FN_PH(KBP) DW_PLANE_DEF(KBP, _ph, dw_plane_phases_impl(r, rec, KBP))
#define DW_PLANE_FN_FLAT(KBP) DW_PLANE_DEF(KBP, _flat, dw_plane_flat_impl(r, rec, KBP, 0))
#define DW_PLANE_FN_FLAT_S1(KBP) DW_PLANE_DEF(KBP, _flat_s1, dw_plane_flat_impl(r, rec, KBP, 1))
#define DW_PLANE_FNS(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8)
/* Indexed by KBP (0: more than 8). */
#define DW_PLANE_TABLE(SUFFIX)                                                               \
    {                                                                                        \
        dw_plane_k0##SUFFIX, dw_plane_k1##SUFFIX, dw_plane_k2##SUFFIX, dw_plane_k3##SUFFIX,  \
            dw_plane_k4##SUFFIX, dw_plane_k5##SUFFIX, dw_plane_k6##SUFFIX,                   \
            dw_plane_k7##SUFFIX, dw_plane_k8##SUFFIX                                         \
    }
DW_PLANE_FNS(DW_PLANE_FN)
#if TH_NN_KEEP_DW_PLANE_S1
DW_PLANE_FNS(DW_PLANE_FN_S1)
#endif
#if TH_NN_KEEP_DW_PLANE_PHASES
DW_PLANE_FNS(DW_PLANE_FN_PH)
#endif
#if TH_NN_KEEP_DW_PLANE_FLAT
DW_PLANE_FNS(DW_PLANE_FN_FLAT)
#if TH_NN_KEEP_DW_PLANE_S1
DW_PLANE_FNS(DW_PLANE_FN_FLAT_S1)
#endif
#endif

/* Blocks across phases where there are several and a phase's outputs are not adjacent (with
 * stride 1 the per-phase blocks share their overlapping window loads, which measures faster)
 * and the build keeps the path. */
static int dw_plane_across(const dw_plane_geom *pg)
{
    return pg->p > 1 && pg->sbp != 1 && TH_NN_PATH(DW_PLANE_PHASES);
}

/* Flat blocks where the build keeps them, except unit stride along B in the transposed frame:
 * memory order (h outer) then steps along A, so a block's windows are never adjacent and the
 * row kernels' shared loads (DW_PLANE_S1) measure faster. */
static int dw_plane_flat(const dw_plane_geom *pg)
{
    return !(pg->transposed && pg->sbp == 1 && TH_NN_KEEP_DW_PLANE_S1) &&
           TH_NN_PATH(DW_PLANE_FLAT);
}

/* The row kernel: flat, across phases (dw_plane_across), else by stride s. */
static dw_plane_fn pick_plane_fn(int32_t kbp, int32_t s, int32_t p, int across, int flat)
{
    const int32_t i = kbp <= 8 ? kbp : 0;
#if TH_NN_KEEP_DW_PLANE_FLAT
    if (flat) {
#if TH_NN_KEEP_DW_PLANE_S1
        if (s == 1 && p == 1 && TH_NN_PATH(DW_PLANE_S1)) {
            static const dw_plane_fn fs[9] = DW_PLANE_TABLE(_flat_s1);
            return fs[i];
        }
#endif
        static const dw_plane_fn fl[9] = DW_PLANE_TABLE(_flat);
        return fl[i];
    }
#endif
#if TH_NN_KEEP_DW_PLANE_PHASES
    if (across) {
        static const dw_plane_fn ph[9] = DW_PLANE_TABLE(_ph);
        return ph[i];
    }
#endif
#if TH_NN_KEEP_DW_PLANE_S1
    if (s == 1 && TH_NN_PATH(DW_PLANE_S1)) {
        static const dw_plane_fn s1[9] = DW_PLANE_TABLE(_s1);
        return s1[i];
    }
#endif
    (void)s;
    (void)across;
    (void)flat;
    (void)p;
    static const dw_plane_fn any[9] = DW_PLANE_TABLE();
    return any[i];
}
#undef DW_PLANE_TABLE
#undef DW_PLANE_FNS
#undef DW_PLANE_FN_PH
#undef DW_PLANE_FN_FLAT
#undef DW_PLANE_FN_FLAT_S1
#undef DW_PLANE_DEF
#undef DW_PLANE_FN_S1
#undef DW_PLANE_FN

/* d[r ds + i] = s[r ss + i st], i < count, r < rows: a channel's phase column of plane
 * rows in one call, rows inner (phase rows of a few values each, where a loop per row costs
 * more than its values): four columns at a time, then a pair, then one. */
static void __attribute__((noinline)) gather_rows(int16_t *d, int32_t ds, const int8_t *s,
                                                  int32_t ss, int32_t st, int32_t count,
                                                  int32_t rows)
{
    if (rows <= 0) {
        return;
    }
    int32_t i = 0;
    for (; i + 4 <= count; i += 4) {
        int16_t *h = d + i; /* halfword aligned only */
        const int8_t *p = s + i * st;
        for (int32_t r = rows; r > 0; r--, h += ds, p += ss) {
            const int32_t v0 = p[0];
            const int32_t v1 = p[st];
            const int32_t v2 = p[2 * st];
            const int32_t v3 = p[3 * st];
            th_write_s32(h, th_pkhbt(v0, v1));
            th_write_s32(h + 2, th_pkhbt(v2, v3));
        }
    }
    if (count & 2) {
        int16_t *h = d + i;
        const int8_t *p = s + i * st;
        for (int32_t r = rows; r > 0; r--, h += ds, p += ss) {
            th_write_s32(h, th_pkhbt(p[0], p[st]));
        }
        i += 2;
    }
    if (count & 1) {
        int16_t *h = d + i;
        const int8_t *p = s + i * st;
        for (int32_t r = rows; r > 0; r--, h += ds, p += ss) {
            *h = *p;
        }
    }
}

/* Out of line: inlined into the dispatch its channel loop measured slower. */
static void __attribute__((noinline))
dw_plane_s8(int8_t *scratch, const dw_plane_geom *pg, const th_dw_conv_params *params,
            const th_per_channel_quant *quant, const th_dims *input_dims, const int8_t *input,
            const th_dims *filter_dims, const int8_t *filter, const int32_t *bias,
            const th_dims *output_dims, int8_t *output)
{
    int16_t *plane = (int16_t *)(void *)scratch;
    int32_t *records = (int32_t *)(void *)(scratch + 2 * pg->rows * pg->rowlen);
    const int32_t in_c = input_dims->c, out_c = output_dims->c;
    const int32_t mult = params->ch_mult;
    dw_geom g; /* what rec_ctx reads: filter rows along A, columns along B */
    g.transposed = pg->transposed;
    g.ka = pg->ka;
    g.kb = pg->kb;
    dw_rec_ctx rc = rec_ctx(params, quant, filter_dims, filter, bias, out_c, &g);
    rc.rows = 1;
    const int32_t rw = 1 + 4 + pg->ka * pg->kbp; /* mode word first */
    /* Steps in the oriented frame (input and output bytes). */
    const int32_t in_step_a = pg->transposed ? in_c : input_dims->w * in_c;
    const int32_t in_step_b = pg->transposed ? input_dims->w * in_c : in_c;
    const int32_t out_step_a = pg->transposed ? out_c : output_dims->w * out_c;
    const int32_t out_step_b = pg->transposed ? output_dims->w * out_c : out_c;
    /* Input lines inside the plane: plane row r is input line r - pad_a. Outputs read only
     * the rows oa sa + a da, multiples of gcd(sa, da): the others are not staged. */
    const int32_t rstep = gcd32(pg->sa, pg->da);
    const int32_t r0 = TH_MIN((pg->pad_a + rstep - 1) / rstep * rstep, pg->rows);
    const int32_t r1 = TH_MAX(TH_MIN(pg->pad_a + pg->in_a, pg->rows), r0);
    const int32_t db = pg->db;
    /* A filter's span along A within the stride: the rows between spans are never read
     * (stride 3, two taps), so only the read ones are staged. */
    const int apart = (pg->ka - 1) * pg->da + 1 < pg->sa;
    const int flat = dw_plane_flat(pg);
    const int across = !flat && dw_plane_across(pg);
    dw_plane_args r;
    r.os = flat ? out_c : across ? out_step_b : pg->p * out_step_b;
    r.s = pg->sbp;
    r.sb = pg->sb;
    r.db = pg->db;
    r.phlen = pg->phlen;
    r.kbp = pg->kbp;
    r.kh = pg->ka;
    r.rs = pg->da * pg->rowlen;
    r.zp = params->output_offset;
    r.lo = params->activation.min;
    r.hi = params->activation.max;
    r.channels = mult;
    r.rw = rw;
    r.tab = (const dw_word *)(const void *)(records + mult * rw);
    if (flat) {
        dw_plane_table((uint16_t *)(void *)(records + mult * rw), pg);
    }
    const dw_plane_fn fn = pick_plane_fn(pg->kbp, pg->sbp, pg->p, across, flat);
    /* -offset everywhere; each channel then writes only the input's lines. */
    fill_pairs(plane, (int16_t)(-params->input_offset), pg->rows * pg->rowlen);
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *in_b = input + (int64_t)n * input_dims->h * input_dims->w * in_c;
        int8_t *out_b = output + (int64_t)n * output_dims->h * output_dims->w * out_c;
        for (int32_t ic = 0; ic < in_c; ic++) {
            for (int32_t ph = 0; ph < db; ph += db / pg->p) { /* phases read: gcd(sb, db) k */
                /* Phase ph index i holds plane column ph + i db, input column
                 * ph + i db - pad_b. */
                const int32_t i0 = TH_MIN(TH_MAX((pg->pad_b - ph + db - 1) / db, 0), pg->phlen);
                const int32_t i1 =
                    TH_MIN(TH_MAX((pg->pad_b + pg->in_b - ph + db - 1) / db, i0), pg->phlen);
                int16_t *d = plane + ph * pg->phlen + i0;
                const int8_t *src = in_b + (int64_t)(ph + i0 * db - pg->pad_b) * in_step_b +
                                    ic - (int64_t)pg->pad_a * in_step_a;
                if (apart) { /* only the rows read: oa sa + a da, rows sa apart per tap a */
                    for (int32_t a = 0; a < pg->ka; a++) {
                        const int32_t first = a * pg->da; /* plane row of oa = 0 */
                        const int32_t lo = first >= pg->pad_a
                                               ? 0
                                               : (pg->pad_a - first + pg->sa - 1) / pg->sa;
                        const int32_t hi = TH_MIN(
                            pg->out_a, (pg->pad_a + pg->in_a - first + pg->sa - 1) / pg->sa);
                        const int32_t row = lo * pg->sa + first;
                        gather_rows(d + row * pg->rowlen, pg->sa * pg->rowlen,
                                    src + (int64_t)row * in_step_a, pg->sa * in_step_a,
                                    db * in_step_b, i1 - i0, hi - lo);
                    }
                    continue;
                }
                gather_rows(d + r0 * pg->rowlen, rstep * pg->rowlen,
                            src + (int64_t)r0 * in_step_a, rstep * in_step_a, db * in_step_b,
                            i1 - i0, (r1 - r0 + rstep - 1) / rstep);
            }
            for (int32_t m = 0; m < mult; m++) {
                prepare_record(records + m * rw, &rc, ic * mult + m);
            }
            if (flat) { /* one call: the channel's outputs in memory order */
                r.x = plane;
                r.out = out_b + ic * mult;
                r.n = pg->out_a * pg->out_b;
                fn(&r, records);
                continue;
            }
            for (int32_t oa = 0; oa < pg->out_a; oa++) {
                const int16_t *x = plane + oa * pg->sa * pg->rowlen;
                int8_t *out = out_b + (int64_t)oa * out_step_a + ic * mult;
                if (across) { /* one call, blocks across the phases */
                    r.x = x;
                    r.out = out;
                    r.n = pg->out_b;
                    fn(&r, records);
                    continue;
                }
                for (int32_t o0 = 0; o0 < pg->p && o0 < pg->out_b; o0++) {
                    const int32_t c0 = o0 * pg->sb; /* plane column */
                    r.x = x + (c0 % db) * pg->phlen + c0 / db;
                    r.out = out + (int64_t)o0 * out_step_b;
                    r.n = (pg->out_b - o0 + pg->p - 1) / pg->p;
                    fn(&r, records);
                }
            }
        }
    }
}
#endif

int32_t th_dw_conv_general_s8_scratch_size(const th_dw_conv_params *params,
                                           const th_dims *input_dims,
                                           const th_dims *filter_dims,
                                           const th_dims *output_dims)
{
#if TH_NN_MVE
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL ||
        output_dims->h <= 0 || output_dims->w <= 0 || filter_dims->h <= 0 ||
        filter_dims->w <= 0 || params->stride.h <= 0 || params->stride.w <= 0 ||
        params->dilation.h <= 0 || params->dilation.w <= 0) {
        return 0;
    }
    return th_nn_mve_dw_scratch(params, filter_dims, output_dims);
#endif
    (void)filter_dims;
    (void)output_dims;
    /* ch_mult > 1 never runs in place (th_nn.h rule (a)): the input is read directly. */
    if (params == NULL || params->ch_mult != 1 || input_dims == NULL || input_dims->h <= 0 ||
        input_dims->w <= 0) {
        return 0;
    }
    return th_round_up4(input_dims->h * input_dims->w);
}

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* Filters two taps across in the rows path's frame (dw_transposed) where the plane path also
 * applies: the rows path's bands pair the two rows in each word (KA KB taps in KA KB / 2
 * pairs, the plane pads each row of an odd KB), its output rows read no row twice when the
 * stride across is at least the filter's span, and it stages four channels a pass. */
static int dw_rows_ka2(const th_dw_conv_params *params, const th_dims *filter_dims,
                       const th_dims *output_dims)
{
    return (filter_dims->h == 2 || filter_dims->w == 2) && /* dw_transposed only then */
           (dw_transposed(params, filter_dims, output_dims) ? filter_dims->w
                                                            : filter_dims->h) == 2;
}

/* The fast scratch (th_dw_conv_general_s8_scratch_size_fast) of shapes the multiplier path
 * does not take, given their plane geometry; *lines: th_dw_lines_scratch (0 where the plane
 * path applies), so that a call evaluates each geometry once. */
static int32_t dw_fast_size(const th_dw_conv_params *params, const th_dims *input_dims,
                            const th_dims *filter_dims, const th_dims *output_dims,
                            const dw_plane_geom *pg, dw_geom *g, int32_t *lines)
{
    *lines = 0;
    const int32_t plane = pg->rowlen > 0 ? dw_plane_scratch(params, pg) : 0;
    if (plane > 0 && !dw_rows_ka2(params, filter_dims, output_dims)) {
        return plane;
    }
    *g = dw_geometry(params, input_dims, filter_dims, output_dims);
    const int32_t rows = plane_bytes(params, input_dims, g) + band_bytes(g) +
                         4 * g->group * params->ch_mult * (1 + record_words(g));
    if (plane > 0) { /* DW_ROWS_KA2: the plane path's too (in place, or the path left out) */
        return TH_MAX(rows, plane);
    }
    /* The channel-inner path where it applies (rows path kept for the in-place case). */
    *lines = th_dw_lines_scratch(params, input_dims, filter_dims, output_dims);
    return TH_MAX(rows, *lines);
}
#endif

int32_t th_dw_conv_general_s8_scratch_size_fast(const th_dw_conv_params *params,
                                                const th_dims *input_dims,
                                                const th_dims *filter_dims,
                                                const th_dims *output_dims)
{
#if TH_NN_HAS_DSP && !TH_NN_MVE
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL ||
        input_dims->h <= 0 || input_dims->w <= 0 || filter_dims->h <= 0 ||
        filter_dims->w <= 0 || output_dims->h <= 0 || output_dims->w <= 0 ||
        params->ch_mult <= 0) {
        return 0;
    }
    if (th_nn_dw_mult_applies(params, filter_dims)) { /* th_dw_conv_mult_s8.c */
        return th_nn_dw_mult_scratch(params, filter_dims, output_dims);
    }
    const dw_plane_geom pg = dw_plane_geometry(params, input_dims, filter_dims, output_dims);
    dw_geom g;
    int32_t lines;
    return dw_fast_size(params, input_dims, filter_dims, output_dims, &pg, &g, &lines);
#else
    (void)params;
    (void)input_dims;
    (void)filter_dims;
    (void)output_dims;
    return 0;
#endif
}

th_status th_dw_conv_general_s8(const th_context *ctx, const th_dw_conv_params *params,
                                const th_per_channel_quant *quant, const th_dims *input_dims,
                                const int8_t *input, const th_dims *filter_dims,
                                const int8_t *filter, const int32_t *bias,
                                const th_dims *output_dims, int8_t *output)
{
    /* The per-channel constants are checked by the lines path's record pass where it runs
     * (th_dw_lines.h), else before any other path (one pass over the channels, not two). */
    th_status status = th_nn_check_dw_dims(params, quant, input_dims, input, filter_dims,
                                           filter, output_dims, output);
    if (status != TH_OK) {
        return status;
    }
    status = th_nn_check_scratch(
        ctx, th_dw_conv_general_s8_scratch_size(params, input_dims, filter_dims, output_dims));
    if (status != TH_OK) {
        return status;
    }
    int8_t *plane = ctx != NULL ? (int8_t *)ctx->buf : NULL;
#if TH_NN_HAS_DSP && !TH_NN_MVE
    const int mult = th_nn_dw_mult_applies(params, filter_dims);
    dw_plane_geom pg;
    dw_geom g;
    g.ka = 0; /* set where dw_fast_size needs the rows geometry */
    int32_t lines = 0, fast = 0;
    if (!mult) { /* each geometry once per call (th_dw_conv_general_s8_scratch_size_fast's) */
        pg = dw_plane_geometry(params, input_dims, filter_dims, output_dims);
        fast = dw_fast_size(params, input_dims, filter_dims, output_dims, &pg, &g, &lines);
    }
    const int room = fast > 0 && th_nn_check_scratch(ctx, fast) == TH_OK;
    if (lines > 0 && room && TH_NN_PATH(DW_LINES) &&
        th_dw_lines_s8(ctx, lines, params, quant, input_dims, input, filter_dims, filter, bias,
                       output_dims, output)) {
        return TH_OK; /* lines > 0: no plane path (dw_fast_size) */
    }
#endif
    if (!th_nn_quant_ok(quant, output_dims->c)) {
        return TH_ERR_ARG;
    }
#if TH_NN_MVE
    th_nn_mve_dw_conv_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                         output_dims, output);
    return TH_OK;
#endif
#if TH_NN_HAS_DSP && !TH_NN_MVE
    if (mult) { /* its fast scratch is the path's */
        const int32_t mfast = th_nn_dw_mult_scratch(params, filter_dims, output_dims);
        if (TH_NN_KEEP_DW_MULT && mfast > 0 && th_nn_check_scratch(ctx, mfast) == TH_OK &&
            TH_NN_PATH(DW_MULT)) {
            th_nn_dw_mult_s8(plane, params, quant, input_dims, input, filter_dims, filter,
                             bias, output_dims, output);
            return TH_OK;
        }
    } else {
        /* DW_ROWS_KA2 (dw_rows_ka2): the rows path, not in place (its plane copy, one
         * channel a pass). */
        const int rows_ka2 = pg.rowlen > 0 && g.ka == 2 &&
                             !dw_overlaps(input_dims, input, output_dims, output) &&
                             TH_NN_PATH(DW_ROWS_KA2);
        if (room && pg.rowlen > 0 && !rows_ka2) {
            dw_plane_s8(plane, &pg, params, quant, input_dims, input, filter_dims, filter,
                        bias, output_dims, output);
            return TH_OK;
        }
        if (room) {
            dw_rows_s8(plane, &g, params, quant, input_dims, input, filter_dims, filter, bias,
                       output_dims, output);
            return TH_OK;
        }
    }
#endif
    th_nn_dw_conv_ref_s8(plane, params, quant, input_dims, input, filter_dims, filter, bias,
                         output_dims, output);
    return TH_OK;
}
