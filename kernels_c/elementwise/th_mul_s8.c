/* th_mul_s8: int8 MUL as TFLite Micro's reference: (x1 + offset1) * (x2 + offset2)
 * requantized with one multiplier (double rounding, the shift may be a left shift),
 * + output offset, clamped. NumPy broadcasting as th_add_s8. MVE builds: four products at
 * a time, th_mve_requantize (exact for every multiplier >= 0 and shift in [-31, 30]).
 * DSP builds (where SMMLAR is exact: fast or left): the same shape four elements a word
 * (SXTAB16 lanes, halfword multiplies); a scalar broadcast from TH_MUL_LUT_MIN outputs as a
 * 256-byte output table made once per call (mul_fill), then th_lut_s8; a channel
 * broadcast through a stack row of factor pairs made once per call; a spatial broadcast in
 * one call, four outputs of a pixel from one word of x (spatial_t); outputs stored four to a
 * word, the clamp on the packed word. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_broadcast.h"
#include "th_nn_ew_pack.h"
#include "th_nn_support.h"

/* Largest left shift of the DSP left_rows: 255^2 << (13 + 1) < 2^31. */
#define TH_MUL_MAX_LEFT 13
/* Largest left shift of the spatial loop: its factor (y + oy) << (shift + 1) is a signed
 * halfword (255 << 7 < 2^15) for SMLABB / SMLATB; larger shifts (output scales under 1/64 of
 * the product's) take the per-row loops. */
#define TH_MUL_SPATIAL_MAX_LEFT 6

typedef struct {
    int32_t in1_offset;
    int32_t in2_offset;
    int32_t multiplier;
    int32_t shift;
    int32_t out_offset;
    int32_t act_min;
    int32_t act_max;
#if TH_NN_HAS_DSP
    int fast; /* th_fast_rq_apply is exact for every product (|.| <= 255^2) */
    int left; /* shift in [0, TH_MUL_MAX_LEFT]: left_rows */
    th_fast_rq rq;
#endif
} mul_consts;

/* Requantization constants held in locals: stores through int8_t may alias the struct. */
typedef struct {
    int32_t m;
    int32_t shift;
    int32_t zp;
    int32_t lo;
    int32_t hi;
#if TH_NN_HAS_DSP
    th_fast_rq rq;
#endif
} mul_out_consts;

/* The product (offsets added, |.| <= 255^2) requantized, offset, clamped; fast (a constant
 * after inlining): th_fast_rq_apply, exact when mul_consts.fast. */
TH_INLINE int8_t mul_out(const mul_out_consts *c, int32_t product, int fast)
{
#if TH_NN_HAS_DSP
    if (fast) {
        return (int8_t)th_clamp(th_fast_rq_apply(product, &c->rq), c->lo, c->hi);
    }
#endif
    (void)fast;
    return (int8_t)th_clamp(th_requantize(product, c->m, c->shift) + c->zp, c->lo, c->hi);
}

/* n outputs of (a[i * sa] + oa) * (b[i * sb] + ob), sa and sb 0 or 1 (0: that input
 * broadcast, its factor computed once); each output written after its inputs are read. */
TH_INLINE void mul_row_t(const mul_consts *k, const int8_t *a, int32_t step_a, const int8_t *b,
                         int32_t step_b, int32_t n, int8_t *out, int fast)
{
    const int32_t oa = k->in1_offset, ob = k->in2_offset;
    mul_out_consts c;
    c.m = k->multiplier;
    c.shift = k->shift;
    c.zp = k->out_offset;
    c.lo = k->act_min;
    c.hi = k->act_max;
#if TH_NN_HAS_DSP
    c.rq = k->rq;
#endif
    if (step_a == 0 || step_b == 0) {
        const int32_t f = step_a == 0 ? a[0] + oa : b[0] + ob;
        const int8_t *x = step_a == 0 ? b : a;
        const int32_t ox = step_a == 0 ? ob : oa;
        const int32_t nn = step_a == 0 && step_b == 0 ? 1 : n;
        for (int32_t i = 0; i < nn; i++) {
            out[i] = mul_out(&c, (x[i] + ox) * f, fast);
        }
        for (int32_t i = nn; i < n; i++) {
            out[i] = out[0];
        }
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        out[i] = mul_out(&c, (a[i] + oa) * (b[i] + ob), fast);
    }
}

/* An out-of-line row function `name`: the inline row `body` with its two flags constant
 * (its own registers). */
#define ROW_INSTANCE(name, body, flag1, flag2)                                                \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               int32_t ox, const int8_t *y, int32_t oy,       \
                                               int32_t f, int32_t n, int8_t *out)             \
    {                                                                                         \
        body(k, x, ox, y, oy, f, n, out, flag1, flag2);                                       \
    }

#if TH_NN_MVE
/* One row on MVE: out[i] = requantized (a[i * sa] + oa) * (b[i * sb] + ob), four lanes at a
 * time, whole vectors then a predicated tail; each group of four written after its inputs
 * are read. bcast (one factor f, x advancing) and right (shift < 0) are constants after
 * inlining. */
TH_INLINE void mve_row_t(const mul_consts *k, const int8_t *x, int32_t ox, const int8_t *y,
                         int32_t oy, int32_t f, int32_t n, int8_t *out, int bcast, int right)
{
    th_mve_out o;
    o.output_offset = k->out_offset;
    o.act_min = k->act_min;
    o.act_max = k->act_max;
    const int32_t m = k->multiplier, sh = k->shift;
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const int32x4_t vx = vaddq_n_s32(vldrbq_s32(x + i), ox);
        const int32x4_t v = bcast ? vmulq_n_s32(vx, f)
                                  : vmulq_s32(vx, vaddq_n_s32(vldrbq_s32(y + i), oy));
        vstrbq_s32(out + i, th_mve_requantize_n(v, m, sh, right, &o));
    }
    if (i < n) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - i));
        const int32x4_t vx = vaddq_n_s32(vldrbq_z_s32(x + i, p), ox);
        const int32x4_t v = bcast ? vmulq_n_s32(vx, f)
                                  : vmulq_s32(vx, vaddq_n_s32(vldrbq_z_s32(y + i, p), oy));
        vstrbq_p_s32(out + i, th_mve_requantize_n(v, m, sh, right, &o), p);
    }
}

ROW_INSTANCE(mve_same_left, mve_row_t, 0, 0)
ROW_INSTANCE(mve_same_right, mve_row_t, 0, 1)
ROW_INSTANCE(mve_bcast_left, mve_row_t, 1, 0)
ROW_INSTANCE(mve_bcast_right, mve_row_t, 1, 1)

static void mve_row(const mul_consts *k, const int8_t *a, int32_t step_a, const int8_t *b,
                    int32_t step_b, int32_t n, int8_t *out)
{
    const int right = k->shift < 0;
    if (step_a != 0 && step_b != 0) {
        (right ? mve_same_right : mve_same_left)(k, a, k->in1_offset, b, k->in2_offset, 0, n,
                                                 out);
        return;
    }
    const int32_t f = step_a == 0 ? a[0] + k->in1_offset : b[0] + k->in2_offset;
    const int8_t *x = step_a == 0 ? b : a;
    const int32_t ox = step_a == 0 ? k->in2_offset : k->in1_offset;
    const int32_t nn = step_a == 0 && step_b == 0 ? 1 : n;
    (right ? mve_bcast_right : mve_bcast_left)(k, x, ox, x, 0, f, nn, out);
    if (nn < n) {
        th_nn_mve_fill(out + 1, out[0], n - 1);
    }
}
#endif

#if TH_NN_HAS_DSP && !TH_NN_MVE
typedef void (*row_fn)(const mul_consts *, const int8_t *, int32_t, const int8_t *, int32_t,
                       int32_t, int32_t, int8_t *);

/* The DSP rows: x advancing (offset ox), y advancing too (same) or a constant factor f
 * (bcast); clamp (a constant after inlining): the activation range is narrower than int8's
 * (both requantizations saturate to int8 already). left: the shift L = shift is in [0,
 * TH_MUL_MAX_LEFT], with no right shift and so no second rounding: TFLM's SRDHM(p << L, M)
 * = floor((p * 2^L * M + 2^30) / 2^31) (its nudge-and-truncate equals this floor, see
 * th_fast_rq_apply) = SMMLAR(p << (L + 1), M, 0) exactly (|p| <= 255^2 < 2^16 keeps
 * p << (L + 1) inside int32), the zero point in SMMLAR's accumulator; else th_fast_rq_apply
 * (2p given). Kept out of line: their own registers. */
TH_INLINE void fast_rows(const mul_consts *k, const int8_t *x, int32_t ox, const int8_t *y,
                         int32_t oy, int32_t f, const int32_t *gh, int32_t n, int8_t *out,
                         int bcast, int clamp, int left)
{
    /* clamp: th_nn_store4u's unsigned form, lo folded into the zero point */
    const int32_t lo = k->act_min, hi = k->act_max;
    const th_fast_rq rq = clamp ? th_nn_rq_less(k->rq, lo) : k->rq;
    const int32_t m = k->multiplier, zp = clamp ? k->out_offset - lo : k->out_offset;
    const int32_t sh = left ? k->shift + 1 : 1;
    const uint32_t k4 = th_nn_both_k4(lo, hi), c4 = th_nn_both_c4(hi);
    /* bcast 1: product << sh = x * fs + cs; bcast 2 (channel rows): x * g + h with the pair
     * (g, h) = gh[2i], gh[2i + 1] made the same way from the broadcast value at i */
    const int32_t fs = (int32_t)((uint32_t)f << sh), cs = (int32_t)((uint32_t)(ox * f) << sh);
#define MUL_P(i)                                                                              \
    (bcast == 2 ? x[i] * gh[2 * (i)] + gh[2 * (i) + 1]                                        \
     : bcast    ? x[i] * fs + cs                                                              \
                : (int32_t)((uint32_t)((x[i] + ox) * (y[i] + oy)) << sh))
#define MUL_V(p)                                                                              \
    (clamp ? (left ? th_nn_usat8(th_smmlar((p), m, zp)) : th_nn_rq_apply2u((p), &rq))         \
           : (left ? th_ssat8(th_smmlar((p), m, zp)) : th_fast_rq_apply2((p), &rq)))
#define MUL_4(o, v0, v1, v2, v3)                                                              \
    do {                                                                                      \
        if (clamp) {                                                                          \
            th_nn_store4u(o, v0, v1, v2, v3, k4, c4);                                         \
        } else {                                                                              \
            th_nn_store4(o, v0, v1, v2, v3, 0, 0, 0, 0);                                      \
        }                                                                                     \
    } while (0)
    int32_t i = 0;
    /* same shape: four elements of each input from one word, offsets added in 16-bit lanes
     * (SXTAB16, |x + ox| <= 255), the products from halfword multiplies */
    const int32_t ox2 = (int32_t)(((uint32_t)ox & 0xFFFFu) | ((uint32_t)ox << 16));
    const int32_t oy2 = (int32_t)(((uint32_t)oy & 0xFFFFu) | ((uint32_t)oy << 16));
#define SH(p) (left ? (int32_t)((uint32_t)(p) << sh) : (p))
    for (; i + 4 <= n; i += 4) { /* one word out, the clamp on the packed word */
        if (bcast == 0) {
            const int32_t xw = th_read_s32(x + i), yw = th_read_s32(y + i);
            const int32_t x02 = th_sxtab16(ox2, xw), x13 = th_sxtab16_ror8(ox2, xw);
            int32_t y02 = th_sxtab16(oy2, yw), y13 = th_sxtab16_ror8(oy2, yw);
            if (!left) { /* the doubling in y's lanes (|2 (y + oy)| <= 510): two SADD16 */
                y02 = th_sadd16(y02, y02);
                y13 = th_sadd16(y13, y13);
            }
            MUL_4(out + i, MUL_V(SH(th_nn_smulbb(x02, y02))), MUL_V(SH(th_nn_smulbb(x13, y13))),
                  MUL_V(SH(th_nn_smultt(x02, y02))), MUL_V(SH(th_nn_smultt(x13, y13))));
        } else {
            MUL_4(out + i, MUL_V(MUL_P(i)), MUL_V(MUL_P(i + 1)), MUL_V(MUL_P(i + 2)),
                  MUL_V(MUL_P(i + 3)));
        }
    }
#undef SH
    for (; i < n; i++) {
        const int32_t v = MUL_V(MUL_P(i));
        out[i] = clamp ? th_nn_from_u(v, lo, hi) : (int8_t)v;
    }
#undef MUL_4
#undef MUL_P
#undef MUL_V
}

#define DSP_ROW(name, bcast, clamp, left)                                                     \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               int32_t ox, const int8_t *y, int32_t oy,       \
                                               int32_t f, int32_t n, int8_t *out)             \
    {                                                                                         \
        fast_rows(k, x, ox, y, oy, f, NULL, n, out, bcast, clamp, left);                      \
    }
DSP_ROW(fast_same, 0, 0, 0)
DSP_ROW(fast_same_clamp, 0, 1, 0)
DSP_ROW(fast_bcast, 1, 0, 0)
DSP_ROW(fast_bcast_clamp, 1, 1, 0)
DSP_ROW(left_same, 0, 0, 1)
DSP_ROW(left_same_clamp, 0, 1, 1)
DSP_ROW(left_bcast, 1, 0, 1)
DSP_ROW(left_bcast_clamp, 1, 1, 1)
#undef DSP_ROW

/* Channel broadcast rows (fast_rows' bcast 2): x against the pairs gh, n elements. */
typedef void (*chan_fn)(const mul_consts *, const int8_t *, const int32_t *, int32_t, int8_t *);
#define CHAN_ROW(name, clamp, left)                                                           \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               const int32_t *gh, int32_t n, int8_t *out)     \
    {                                                                                         \
        fast_rows(k, x, 0, x, 0, 0, gh, n, out, 2, clamp, left);                              \
    }
CHAN_ROW(chan_left, 0, 1)
CHAN_ROW(chan_left_clamp, 1, 1)
#undef CHAN_ROW

/* Channel rows on the fast path (right shift), four outputs a pass: x's word split into
 * (x0 + ox, x2 + ox) and (x1 + ox, x3 + ox) halfwords (SXTAB16), the factors 2 (y + oy) of
 * those columns packed the same way (|.| <= 510) in two words pw[2q], pw[2q + 1], so SMULBB /
 * SMULTT give the four doubled products th_fast_rq_apply2 takes; the n % 4 last columns one
 * factor a word after them. `rows` rows of n at stride `stride` (x and out alike); each group
 * read before it is written. */
TH_INLINE void chanv_t(const mul_consts *k, const int8_t *x, int32_t ox, const int32_t *pw,
                       int32_t n, int32_t rows, int32_t stride, int8_t *out, int clamp)
{
    /* clamp: th_nn_store4u's unsigned form, lo folded into the zero point */
    const int32_t lo = k->act_min, hi = k->act_max;
    const th_fast_rq rq = clamp ? th_nn_rq_less(k->rq, lo) : k->rq;
    const uint32_t k4 = th_nn_both_k4(lo, hi), c4 = th_nn_both_c4(hi);
    const int32_t ox2 = (int32_t)(((uint32_t)ox & 0xFFFFu) | ((uint32_t)ox << 16));
    const int32_t *tail = pw + 2 * (n >> 2);
    for (int32_t r = 0; r < rows; r++) {
        const int8_t *xr = x + r * stride;
        int8_t *o = out + r * stride;
        const int32_t *w = pw;
        int32_t i = 0;
        for (; i + 4 <= n; i += 4, w += 2) {
            const int32_t xw = th_read_s32(xr + i);
            const int32_t x02 = th_sxtab16(ox2, xw), x13 = th_sxtab16_ror8(ox2, xw);
            const int32_t f02 = w[0], f13 = w[1];
#define CV_V(p) (clamp ? th_nn_rq_apply2u((p), &rq) : th_fast_rq_apply2((p), &rq))
            const int32_t v0 = CV_V(th_nn_smulbb(x02, f02)), v1 = CV_V(th_nn_smulbb(x13, f13));
            const int32_t v2 = CV_V(th_nn_smultt(x02, f02)), v3 = CV_V(th_nn_smultt(x13, f13));
            if (clamp) {
                th_nn_store4u(o + i, v0, v1, v2, v3, k4, c4);
            } else {
                th_nn_store4(o + i, v0, v1, v2, v3, 0, 0, 0, 0);
            }
        }
        for (int32_t t = 0; i < n; i++, t++) {
            const int32_t v = CV_V((xr[i] + ox) * tail[t]);
            o[i] = clamp ? th_nn_from_u(v, lo, hi) : (int8_t)v;
#undef CV_V
        }
    }
}

typedef void (*chanv_fn)(const mul_consts *, const int8_t *, int32_t, const int32_t *, int32_t,
                         int32_t, int32_t, int8_t *);
#define CHANV(name, clamp)                                                                    \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               int32_t ox, const int32_t *pw, int32_t n,      \
                                               int32_t rows, int32_t stride, int8_t *out)     \
    {                                                                                         \
        chanv_t(k, x, ox, pw, n, rows, stride, out, clamp);                                   \
    }
CHANV(chanv_fast, 0)
CHANV(chanv_fast_clamp, 1)
#undef CHANV

/* chanv_t's packed factors of n columns, column j's factor f(j) = 2 (y[j % len] + oy). */
static void chanv_pack(const int8_t *y, int32_t oy, int32_t len, int32_t n, int32_t *pw)
{
    int32_t j = 0;
    for (; j + 4 <= n; j += 4, pw += 2) {
#define F(c) ((uint32_t)(2 * (y[(j + (c)) % len] + oy)) & 0xFFFFu)
        pw[0] = (int32_t)(F(0) | (F(2) << 16));
        pw[1] = (int32_t)(F(1) | (F(3) << 16));
#undef F
    }
    for (; j < n; j++) {
        *pw++ = 2 * (y[j % len] + oy);
    }
}

/* Channel broadcast: [rows, n] (x, input offset ox) against one row y of n (offset oy), on
 * the DSP rows (k->fast or k->left). The row's factors are built once per call into a stack
 * row of TH_MUL_CHAN_MAX columns (fast: chanv_t's packed halfwords; left: (g, h) pairs):
 * short rows repeated to fill it (consecutive rows are contiguous), long rows in column
 * blocks. 0 when the build leaves the path out. */
#define TH_MUL_CHAN_MAX 32
__attribute__((noinline)) static int mul_chan(const mul_consts *k, const int8_t *x, int32_t ox,
                                              const int8_t *y, int32_t oy, int32_t n,
                                              int32_t rows, int8_t *out)
{
    if (!TH_NN_PATH(MUL_CHAN)) {
        return 0;
    }
    const int clamp = k->act_min > -128 || k->act_max < 127;
    int32_t gh[2 * TH_MUL_CHAN_MAX];
    const int32_t block = n <= TH_MUL_CHAN_MAX / 2 ? n : TH_MUL_CHAN_MAX;
    int32_t reps = n <= TH_MUL_CHAN_MAX / 2 ? TH_MUL_CHAN_MAX / n : 1;
    reps = reps < rows ? reps : rows;
    if (!k->left) { /* chanv_t: the packed factors in gh, the row loop in the call */
        const chanv_fn fv = clamp ? chanv_fast_clamp : chanv_fast;
        if (reps > 1) { /* reps rows as one row of reps * n, then what is left */
            const int32_t len = reps * n, full = rows / reps, left = rows - full * reps;
            chanv_pack(y, oy, n, len, gh);
            fv(k, x, ox, gh, len, full, len, out);
            if (left > 0) { /* its own tail: packed again for left * n columns */
                chanv_pack(y, oy, n, left * n, gh);
                fv(k, x + full * len, ox, gh, left * n, 1, 0, out + full * len);
            }
            return 1;
        }
        for (int32_t j0 = 0; j0 < n; j0 += block) {
            const int32_t len = n - j0 < block ? n - j0 : block;
            chanv_pack(y + j0, oy, len, len, gh);
            fv(k, x + j0, ox, gh, len, rows, n, out + j0);
        }
        return 1;
    }
    const chan_fn f = clamp ? chan_left_clamp : chan_left;
    const int32_t sh = k->shift + 1;
    for (int32_t j0 = 0; j0 < n; j0 += block) {
        const int32_t len = n - j0 < block ? n - j0 : block;
        for (int32_t j = 0; j < reps * len; j++) {
            const int32_t g = (int32_t)((uint32_t)(y[j0 + j % len] + oy) << sh);
            gh[2 * j] = g;
            gh[2 * j + 1] = (int32_t)((uint32_t)ox * (uint32_t)g);
        }
        for (int32_t r = 0; r < rows; r += reps) {
            const int32_t cnt = rows - r < reps ? rows - r : reps;
            if (reps > 1) { /* cnt rows of n, contiguous */
                f(k, x + r * n, gh, cnt * n, out + r * n);
            } else {
                f(k, x + r * n + j0, gh, len, out + r * n + j0);
            }
        }
    }
    return 1;
}

/* Spatial broadcast: [rows, n] (x, offset ox) against [rows, 1] (y, offset oy), one call per
 * layer; pixels are contiguous in x and out, so both pointers just run on and a pixel costs
 * about 10 instructions besides its outputs (its factor f = y + oy and what derives from it).
 * Right shift (fast): four outputs from one word of x, split into (x0 + ox, x2 + ox) and
 * (x1 + ox, x3 + ox) halfwords (SXTAB16) and multiplied by 2f in both halfwords (SMULBB /
 * SMULTT, |2f| <= 510), the doubled products th_fast_rq_apply2 takes; left (see fast_rows):
 * (x + ox) * f << (shift + 1) = x * fs + cs, one MLA. The n % 4 last outputs of a pixel
 * without a loop; each output written after its inputs are read. */
TH_INLINE void spatial_t(const mul_consts *k, const int8_t *x, int32_t ox, const int8_t *y,
                         int32_t oy, int32_t n, int32_t rows, int8_t *out, int clamp, int left)
{
    /* clamp: th_nn_store4u's unsigned form, lo folded into the zero point */
    const int32_t lo = k->act_min, hi = k->act_max;
    const th_fast_rq rq = clamp ? th_nn_rq_less(k->rq, lo) : k->rq;
    const int32_t m = k->multiplier, zp = clamp ? k->out_offset - lo : k->out_offset;
    const int32_t sh = left ? k->shift + 1 : 1;
    const uint32_t k4 = th_nn_both_k4(lo, hi), c4 = th_nn_both_c4(hi);
    const int32_t ox2 = (int32_t)(((uint32_t)ox & 0xFFFFu) | ((uint32_t)ox << 16));
    const int32_t n4 = n & ~3, nt = n & 3;
    const int8_t *const yend = y + rows;
    do {
        const int32_t fs = (int32_t)((uint32_t)(*y++ + oy) << sh);
        const int32_t cs = (int32_t)((uint32_t)ox * (uint32_t)fs);
        const int32_t fp = (int32_t)(((uint32_t)fs & 0xFFFFu) | ((uint32_t)fs << 16));
#define MS_V(p)                                                                               \
    (clamp ? (left ? th_nn_usat8(th_smmlar((p), m, zp)) : th_nn_rq_apply2u((p), &rq))         \
           : (left ? th_ssat8(th_smmlar((p), m, zp)) : th_fast_rq_apply2((p), &rq)))
#define MS_C(p) (clamp ? th_nn_from_u(MS_V(p), lo, hi) : MS_V(p))
#define MS_P(j) (x[j] * fs + cs)
#define MS_4(v0, v1, v2, v3)                                                                  \
    do {                                                                                      \
        if (clamp) {                                                                          \
            th_nn_store4u(out, v0, v1, v2, v3, k4, c4);                                       \
        } else {                                                                              \
            th_nn_store4(out, v0, v1, v2, v3, 0, 0, 0, 0);                                    \
        }                                                                                     \
    } while (0)
        for (const int8_t *const e4 = x + n4; x != e4; x += 4, out += 4) {
            if (left) { /* |fs| < 2^15 (TH_MUL_SPATIAL_MAX_LEFT): x's word as sign-extended
                         * halfword lanes, the products accumulated onto cs by SMLABB /
                         * SMLATB, 7 instructions where four LDRSB + MLA pairs take 8 */
                const int32_t xw = th_read_s32(x);
                const int32_t x02 = th_sxtb16(xw), x13 = th_sxtb16_ror8(xw);
                MS_4(MS_V(th_smlabb(x02, fs, cs)), MS_V(th_smlabb(x13, fs, cs)),
                     MS_V(th_smlatb(x02, fs, cs)), MS_V(th_smlatb(x13, fs, cs)));
            } else {
                const int32_t xw = th_read_s32(x);
                const int32_t x02 = th_sxtab16(ox2, xw), x13 = th_sxtab16_ror8(ox2, xw);
                MS_4(MS_V(th_nn_smulbb(x02, fp)), MS_V(th_nn_smulbb(x13, fp)),
                     MS_V(th_nn_smultt(x02, fp)), MS_V(th_nn_smultt(x13, fp)));
            }
        }
#undef MS_4
#define MS_O(j) MS_C(MS_P(j))
        TH_NN_EW_TAIL3(nt, x, out, MS_O);
#undef MS_O
#undef MS_P
#undef MS_C
#undef MS_V
    } while (y != yend);
}

typedef void (*spatial_fn)(const mul_consts *, const int8_t *, int32_t, const int8_t *, int32_t,
                           int32_t, int32_t, int8_t *);
#define SPATIAL(name, clamp, left)                                                            \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               int32_t ox, const int8_t *y, int32_t oy,       \
                                               int32_t n, int32_t rows, int8_t *out)          \
    {                                                                                         \
        spatial_t(k, x, ox, y, oy, n, rows, out, clamp, left);                                \
    }
SPATIAL(spatial_fast, 0, 0)
SPATIAL(spatial_fast_clamp, 1, 0)
SPATIAL(spatial_left, 0, 1)
SPATIAL(spatial_left_clamp, 1, 1)
#undef SPATIAL

/* The output table of x's int8 values (offset ox) times the factor f (the other input's value
 * plus its offset): the product p = (x + ox) * f, linear in x, is requantized as fast_rows
 * does (th_nn_mono_fill's acc = p << sh, sh = 1 with th_fast_rq_apply2's sign term (fast),
 * or shift + 1 with none and e = 0 (left)), so exact by construction; the saturated ends as
 * runs, SMMLAR and a shift between them. */
__attribute__((noinline)) static void mul_fill(const mul_consts *k, int32_t f, int32_t ox,
                                               int8_t *lut)
{
    const int32_t sh = k->left ? k->shift + 1 : 1;
    th_nn_mono q;
    q.tab = NULL;
    q.k = (int32_t)((uint32_t)f << sh);
    q.c = (int32_t)((uint32_t)(ox * f) << sh);
    q.m = k->multiplier;
    q.rzp = k->left ? k->out_offset : k->rq.round_zp;
    q.rzp_neg = k->left ? q.rzp : (int32_t)((uint32_t)q.rzp - 1u);
    q.e = k->left ? 0 : k->rq.e;
    q.lo = k->act_min;
    q.hi = k->act_max;
    th_nn_mono_fill(&q, lut);
}

/* Scalar broadcast (s one element, x n elements): a 256-byte table of the output for every
 * int8 value (mul_fill), then one th_lut_s8 pass. Pays from TH_MUL_LUT_MIN elements. */
#define TH_MUL_LUT_MIN 512
__attribute__((noinline)) static th_status mul_lut(const mul_consts *k, int scalar1,
                                                   const int8_t *s, const int8_t *x, int32_t n,
                                                   int8_t *out)
{
    uint32_t lutw[64];
    int8_t *lut = (int8_t *)lutw;
    mul_fill(k, s[0] + (scalar1 ? k->in1_offset : k->in2_offset),
             scalar1 ? k->in2_offset : k->in1_offset, lut);
    return th_lut_s8(NULL, lut, n, x, out);
}

/* Channel broadcast with many rows: [rows, n] (x) against one row y of n (y is input1 when
 * y1): channel j's outputs are a function of x alone, so per channel a 256-byte output table
 * (mul_fill: up to about 1,550 instructions) and one strided pass down the column (3.5
 * instructions per output against about 9 on mul_chan): from TH_MUL_CHAN_LUT_ROWS rows,
 * where the table's worst case is paid back (1,550 / (9.1 - 3.5) = 277). */
#define TH_MUL_CHAN_LUT_ROWS 280
__attribute__((noinline)) static void lut_column(const int8_t *lut, const int8_t *x,
                                                 int32_t stride, int32_t count, int8_t *out)
{
    th_nn_lut_strided(lut, x, stride, count, out);
}

__attribute__((noinline)) static void mul_chan_lut(const mul_consts *k, int y1, const int8_t *y,
                                                   const int8_t *x, int32_t n, int32_t rows,
                                                   int8_t *out)
{
    uint32_t lutw[64];
    int8_t *lut = (int8_t *)lutw;
    const int32_t oy = y1 ? k->in1_offset : k->in2_offset;
    const int32_t ox = y1 ? k->in2_offset : k->in1_offset;
    for (int32_t j = 0; j < n; j++) {
        mul_fill(k, y[j] + oy, ox, lut);
        lut_column(lut, x + j, n, rows, out + j);
    }
}
#endif

#if !TH_NN_MVE
/* The exact rows (any multiplier and shift), out of line: their own registers. */
__attribute__((noinline)) static void exact_row(const mul_consts *k, const int8_t *a,
                                                int32_t step_a, const int8_t *b,
                                                int32_t step_b, int32_t n, int8_t *out)
{
    mul_row_t(k, a, step_a, b, step_b, n, out, 0);
}

#endif

static void mul_row(const mul_consts *k, const int8_t *a, int32_t step_a, const int8_t *b,
                    int32_t step_b, int32_t n, int8_t *out)
{
#if TH_NN_MVE
    mve_row(k, a, step_a, b, step_b, n, out);
#else
#if TH_NN_HAS_DSP
    if ((k->fast || k->left) && (step_a != 0 || step_b != 0)) {
        const int clamp = k->act_min > -128 || k->act_max < 127;
        if (step_a != 0 && step_b != 0) {
            const row_fn row = k->left ? (clamp ? left_same_clamp : left_same)
                                       : (clamp ? fast_same_clamp : fast_same);
            row(k, a, k->in1_offset, b, k->in2_offset, 0, n, out);
        } else {
            const int32_t f = step_a == 0 ? a[0] + k->in1_offset : b[0] + k->in2_offset;
            const int8_t *x = step_a == 0 ? b : a;
            const int32_t ox = step_a == 0 ? k->in2_offset : k->in1_offset;
            const row_fn row = k->left ? (clamp ? left_bcast_clamp : left_bcast)
                                       : (clamp ? fast_bcast_clamp : fast_bcast);
            row(k, x, ox, x, 0, f, n, out);
        }
        return;
    }
    if (k->fast) {
        mul_row_t(k, a, step_a, b, step_b, n, out, 1);
        return;
    }
#endif
    exact_row(k, a, step_a, b, step_b, n, out);
#endif
}

th_status th_mul_s8(const th_context *ctx, const th_mul_params *params,
                    const th_per_tensor_quant *quant, const th_shape *input1_shape,
                    const int8_t *input1, const th_shape *input2_shape, const int8_t *input2,
                    const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || input1 == NULL || input2 == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    th_nn_bcast b;
    if (!th_nn_bcast_init(&b, input1_shape, input2_shape, output_shape) ||
        !th_nn_bcast_alias_ok(&b, input1, input2, output)) {
        return TH_ERR_ARG;
    }
    if (params->input1_offset < -127 || params->input1_offset > 128 ||
        params->input2_offset < -127 || params->input2_offset > 128 ||
        params->output_offset < -128 || params->output_offset > 127 ||
        !th_nn_activation_ok(&params->activation) || quant->multiplier < 0 ||
        quant->shift < -31 || quant->shift > 30) {
        return TH_ERR_ARG;
    }
    mul_consts k;
    k.in1_offset = params->input1_offset;
    k.in2_offset = params->input2_offset;
    k.multiplier = quant->multiplier;
    k.shift = quant->shift;
    k.out_offset = params->output_offset;
    k.act_min = params->activation.min;
    k.act_max = params->activation.max;
#if TH_NN_HAS_DSP
    k.fast = th_fast_rq_ok(k.multiplier, k.shift, 255 * 255);
    k.left = k.shift >= 0 && k.shift <= TH_MUL_MAX_LEFT;
    if (k.fast) {
        k.rq = th_fast_rq_make(k.multiplier, k.shift, k.out_offset);
    } else {
        /* unused by the left rows and the exact path, but the clamped rows lower a copy
         * (th_nn_rq_less) before they know which form they take: a defined value */
        const th_fast_rq none = {0};
        k.rq = none;
    }
#endif

    const int32_t inner = b.dims[b.rank - 1];
    const int32_t rows = b.count / inner;
#if TH_NN_HAS_DSP && !TH_NN_MVE
    if ((k.fast || k.left) && (b.count1 == 1 || b.count2 == 1) && b.count >= TH_MUL_LUT_MIN &&
        TH_NN_PATH(MUL_LUT)) {
        const int scalar1 = b.count1 == 1;
        return mul_lut(&k, scalar1, scalar1 ? input1 : input2, scalar1 ? input2 : input1,
                       b.count, output);
    }
    /* Channel broadcast: [rows, C] against [C] (either side). */
    if ((k.fast || k.left) && b.rank == 2 && rows > 1 && b.stride1[1] == 1 &&
        b.stride2[1] == 1 && (b.stride1[0] == 0 || b.stride2[0] == 0)) {
        const int bc1 = b.stride1[0] == 0;
        if (rows >= TH_MUL_CHAN_LUT_ROWS && TH_NN_PATH(MUL_CHAN_LUT)) {
            mul_chan_lut(&k, bc1, bc1 ? input1 : input2, bc1 ? input2 : input1, inner, rows,
                         output);
            return TH_OK;
        }
        if (mul_chan(&k, bc1 ? input2 : input1, bc1 ? k.in2_offset : k.in1_offset,
                     bc1 ? input1 : input2, bc1 ? k.in1_offset : k.in2_offset, inner, rows,
                     output)) {
            return TH_OK;
        }
    }
    /* Spatial broadcast: [rows, C] against [rows, 1] (either side). */
    if ((k.fast || (k.left && k.shift <= TH_MUL_SPATIAL_MAX_LEFT)) && b.rank == 2 && rows > 1 &&
        b.stride1[0] != 0 &&
        b.stride2[0] != 0 && (b.stride1[1] == 0) != (b.stride2[1] == 0) &&
        TH_NN_PATH(MUL_SPATIAL)) {
        const int bc1 = b.stride1[1] == 0;
        const int clamp = k.act_min > -128 || k.act_max < 127;
        const spatial_fn f = k.left ? (clamp ? spatial_left_clamp : spatial_left)
                                    : (clamp ? spatial_fast_clamp : spatial_fast);
        f(&k, bc1 ? input2 : input1, bc1 ? k.in2_offset : k.in1_offset, bc1 ? input1 : input2,
          bc1 ? k.in1_offset : k.in2_offset, inner, rows, output);
        return TH_OK;
    }
#endif
    th_nn_bcast_pos pos;
    th_nn_bcast_start(&pos);
    for (int32_t r = 0; r < rows; r++) {
        mul_row(&k, input1 + pos.off1, b.stride1[b.rank - 1], input2 + pos.off2,
                b.stride2[b.rank - 1], inner, output + r * inner);
        th_nn_bcast_next(&b, &pos);
    }
    return TH_OK;
}
