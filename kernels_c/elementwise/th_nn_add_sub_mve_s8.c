/* th_nn_add_sub_mve_s8: the Helium (MVE) body of int8 ADD and SUB (th_nn_add_sub_s8.c
 * checks the arguments and hands MVE builds over here). Four outputs per vector step, the
 * last partial step tail-predicated (nothing read or written past n):
 *  - each input rescaled to the common scale: with both host tables, one VLDRB.U32 of the
 *    int8 values and one gather of their int32 table entries (VLDRW gather, shifted
 *    offsets); without, on the vector: (x + offset) << left_shift (|x + offset| <= 255 and
 *    left_shift <= 22 keep it inside int32), VQRDMULH (SaturatingRoundingDoublingHighMul
 *    exactly, ties included: see th_mve_requantize) and RoundingDivideByPOT as
 *    th_mve_requantize does it (a negative value lowered by one, then VRSHL's round half up
 *    gives round half away from zero), the lowering masked off when the shift is 0;
 *  - the two summed (subtracted) with wrapping, as the reference;
 *  - the sum requantized, offset and clamped by th_mve_requantize_n (the output shift is
 *    <= 0; 0 takes its left path, exact too), stored by a narrowing VSTRB.32.
 * A broadcast input (step 0 in its row) is rescaled once per row in scalar code; both
 * broadcast: one value filled. Each group of four outputs is written after its inputs are
 * read (in-place rule); a broadcast input is never the output (th_nn_bcast_alias_ok). */
#include <stddef.h>

#include "th_nn_add_sub_s8.h"
#include "th_nn_support.h"

#if TH_NN_MVE

typedef struct {
    int32_t off1, off2; /* input offsets */
    int32_t left;       /* left_shift */
    int32_t m1, s1;     /* input multipliers, shifts (<= 0) */
    int32_t m2, s2;
    int32_t mo, so; /* output multiplier, shift (<= 0) */
    const int32_t *t1, *t2;
    th_mve_out o;
} mve_add;

/* RDBPOT(SRDHM(((x + off) << left), m), -s) on four lanes; fix = -1 in every lane when
 * s < 0, else 0 (no lowering before a shift of 0). */
TH_INLINE int32x4_t rescale(int32x4_t x, int32_t off, int32_t left, int32_t m, int32_t s,
                            int32x4_t fix)
{
    int32x4_t y = vshlq_r_s32(vaddq_n_s32(x, off), left);
    y = vqrdmulhq_n_s32(y, m);
    y = vqaddq_s32(y, vandq_s32(vshrq_n_s32(y, 31), fix));
    return vrshlq_n_s32(y, s);
}

/* Rescaled input values of the four int8 values at x, or (tail) of the lanes of p. */
TH_INLINE int32x4_t load_in(const int8_t *x, mve_pred16_t p, int tail, const int32_t *t,
                            int32_t off, int32_t left, int32_t m, int32_t s, int32x4_t fix,
                            int tables)
{
    if (tables) {
        /* tail lanes read index 0: inside the table */
        const uint32x4_t i = tail ? vldrbq_z_u32((const uint8_t *)x, p)
                                  : vldrbq_u32((const uint8_t *)x);
        return vldrwq_gather_shifted_offset_s32(t, i);
    }
    return rescale(tail ? vldrbq_z_s32(x, p) : vldrbq_s32(x), off, left, m, s, fix);
}

/* Scalar rescaling of one input value (a broadcast input's row value). */
static int32_t rescale1(const int32_t *t, int8_t x, int32_t off, int32_t left, int32_t m,
                        int32_t s)
{
    if (t != NULL) {
        return t[(uint8_t)x];
    }
    return th_rdbpot(th_srdhm_pos((int32_t)((uint32_t)(x + off) << left), m), -s);
}

/* The four sums (differences) requantized, offset, clamped. */
TH_INLINE int32x4_t out4(int32x4_t s1, int32x4_t s2, int32_t mo, int32_t so,
                         const th_mve_out *o, int sub, int right)
{
    const int32x4_t raw = sub ? vsubq_s32(s1, s2) : vaddq_s32(s1, s2);
    return th_mve_requantize_n(raw, mo, so, right, o);
}

/* Both inputs advancing: out[i] = a[i] (+/-) b[i], for `rows` rows of n outputs (row r of
 * input 1 at a + r * ra, of input 2 at b + r * rb; ra or rb is 0 where that input repeats).
 * tables, sub and right are constants after inlining; the constants are copied into locals
 * (stores through int8_t may alias the struct). */
TH_INLINE void same_rows(const mve_add *k, const int8_t *a, int32_t ra, const int8_t *b,
                         int32_t rb, int32_t n, int32_t rows, int8_t *out, int tables, int sub,
                         int right)
{
    const int32_t *t1 = k->t1, *t2 = k->t2;
    const int32_t off1 = k->off1, off2 = k->off2, left = k->left;
    const int32_t m1 = k->m1, s1 = k->s1, m2 = k->m2, s2 = k->s2, mo = k->mo, so = k->so;
    const th_mve_out o = k->o;
    const int32x4_t fix1 = vdupq_n_s32(s1 < 0 ? -1 : 0);
    const int32x4_t fix2 = vdupq_n_s32(s2 < 0 ? -1 : 0);
    const mve_pred16_t all = vctp32q(4u);
    for (int32_t r = 0; r < rows; r++, a += ra, b += rb, out += n) {
        int32_t i = 0;
        for (; i + 4 <= n; i += 4) {
            const int32x4_t x = load_in(a + i, all, 0, t1, off1, left, m1, s1, fix1, tables);
            const int32x4_t y = load_in(b + i, all, 0, t2, off2, left, m2, s2, fix2, tables);
            vstrbq_s32(out + i, out4(x, y, mo, so, &o, sub, right));
        }
        if (i < n) {
            const mve_pred16_t p = vctp32q((uint32_t)(n - i));
            const int32x4_t x = load_in(a + i, p, 1, t1, off1, left, m1, s1, fix1, tables);
            const int32x4_t y = load_in(b + i, p, 1, t2, off2, left, m2, s2, fix2, tables);
            vstrbq_p_s32(out + i, out4(x, y, mo, so, &o, sub, right), p);
        }
    }
}

/* One input broadcast along the row (row r's value at c_in + r * rc), the other, x,
 * advancing (row r at x + r * rx): input 1 when second == 0, else input 2. Each row's
 * constant c is the broadcast value rescaled; out = c + x, or c - x when neg (SUB, input1
 * broadcast); SUB with input2 broadcast adds -c (wrapping, negc). */
TH_INLINE void bcast_rows(const mve_add *k, const int8_t *c_in, int32_t rc, const int8_t *x,
                          int32_t rx, int second, int negc, int32_t n, int32_t rows,
                          int8_t *out, int tables, int neg, int right)
{
    const int32_t *t = second ? k->t2 : k->t1, *tc = second ? k->t1 : k->t2;
    const int32_t off = second ? k->off2 : k->off1, offc = second ? k->off1 : k->off2;
    const int32_t m = second ? k->m2 : k->m1, mc = second ? k->m1 : k->m2;
    const int32_t s = second ? k->s2 : k->s1, sc = second ? k->s1 : k->s2;
    const int32_t left = k->left, mo = k->mo, so = k->so;
    const th_mve_out o = k->o;
    const int32x4_t fix = vdupq_n_s32(s < 0 ? -1 : 0);
    const mve_pred16_t all = vctp32q(4u);
    for (int32_t r = 0; r < rows; r++, c_in += rc, x += rx, out += n) {
        const uint32_t c = (uint32_t)rescale1(tables ? tc : NULL, *c_in, offc, left, mc, sc);
        const int32x4_t vc = vdupq_n_s32((int32_t)(negc ? 0u - c : c));
        int32_t i = 0;
        for (; i + 4 <= n; i += 4) {
            const int32x4_t v = load_in(x + i, all, 0, t, off, left, m, s, fix, tables);
            vstrbq_s32(out + i, out4(vc, v, mo, so, &o, neg, right));
        }
        if (i < n) {
            const mve_pred16_t p = vctp32q((uint32_t)(n - i));
            const int32x4_t v = load_in(x + i, p, 1, t, off, left, m, s, fix, tables);
            vstrbq_p_s32(out + i, out4(vc, v, mo, so, &o, neg, right), p);
        }
    }
}

typedef void (*same_fn)(const mve_add *, const int8_t *, int32_t, const int8_t *, int32_t,
                        int32_t, int32_t, int8_t *);
typedef void (*bcast_fn)(const mve_add *, const int8_t *, int32_t, const int8_t *, int32_t,
                         int, int, int32_t, int32_t, int8_t *);

#define SAME_ROWS(name, tables, sub, right)                                                   \
    __attribute__((noinline)) static void name(const mve_add *k, const int8_t *a, int32_t ra, \
                                               const int8_t *b, int32_t rb, int32_t n,        \
                                               int32_t rows, int8_t *out)                     \
    {                                                                                         \
        same_rows(k, a, ra, b, rb, n, rows, out, tables, sub, right);                         \
    }
SAME_ROWS(mve_add_tab, 1, 0, 1)
SAME_ROWS(mve_sub_tab, 1, 1, 1)
SAME_ROWS(mve_add_tab_left, 1, 0, 0)
SAME_ROWS(mve_sub_tab_left, 1, 1, 0)
SAME_ROWS(mve_add_rq, 0, 0, 1)
SAME_ROWS(mve_sub_rq, 0, 1, 1)
SAME_ROWS(mve_add_rq_left, 0, 0, 0)
SAME_ROWS(mve_sub_rq_left, 0, 1, 0)
#undef SAME_ROWS

#define BCAST_ROWS(name, tables, neg, right)                                                  \
    __attribute__((noinline)) static void name(                                               \
        const mve_add *k, const int8_t *c_in, int32_t rc, const int8_t *x, int32_t rx,        \
        int second, int negc, int32_t n, int32_t rows, int8_t *out)                           \
    {                                                                                         \
        bcast_rows(k, c_in, rc, x, rx, second, negc, n, rows, out, tables, neg, right);       \
    }
BCAST_ROWS(mve_bcast_tab, 1, 0, 1)
BCAST_ROWS(mve_bcast_neg_tab, 1, 1, 1)
BCAST_ROWS(mve_bcast_tab_left, 1, 0, 0)
BCAST_ROWS(mve_bcast_neg_tab_left, 1, 1, 0)
BCAST_ROWS(mve_bcast_rq, 0, 0, 1)
BCAST_ROWS(mve_bcast_neg_rq, 0, 1, 1)
BCAST_ROWS(mve_bcast_rq_left, 0, 0, 0)
BCAST_ROWS(mve_bcast_neg_rq_left, 0, 1, 0)
#undef BCAST_ROWS

/* Rows shorter than a vector ([P, C] against [P, 1] or [C], C < 16): the rows as one flat
 * run, so the per-row cost goes. x (full, table tx / rescaling cx) advances contiguously;
 * y (ty / cy) is read by a byte gather at its offset in each lane: the lane's channel
 * (y per channel) or pixel (y per pixel), counted on the vector (after +4, at most two
 * wraps of the channel past C, since C >= 2). op: 0 x + y, 1 x - y, 2 y - x. The output
 * rescaling takes any shift <= 0 (the lowering before the rounding shift masked off when the
 * shift is 0). */
typedef struct {
    const int32_t *t;
    int32_t off, m, s;
} mve_in;

TH_INLINE int32x4_t in_vals(uint32x4_t bytes, const mve_in *c, int32_t left, int tables)
{
    if (tables) {
        return vldrwq_gather_shifted_offset_s32(c->t, bytes);
    }
    /* the bytes as int8 values, sign-extended */
    const int32x4_t v = vshrq_n_s32(vshlq_n_s32(vreinterpretq_s32_u32(bytes), 24), 24);
    return rescale(v, c->off, left, c->m, c->s, vdupq_n_s32(c->s < 0 ? -1 : 0));
}

/* The lanes' channels (and pixels) advanced by four: ch + 4 wraps past c at most twice
 * (c >= 2), each wrap by the unsigned minimum of ch and ch - c (ch < c: ch - c wraps to a
 * large value); a wrap (ch changed) adds one to the pixel. two: c < 4. */
TH_INLINE void advance(uint32x4_t *ch, uint32x4_t *pix, uint32_t c, int per_pixel, int two)
{
    const uint32x4_t one = vdupq_n_u32(1u);
    for (int w = 0; w < (two ? 2 : 1); w++) {
        const uint32x4_t t = *ch;
        *ch = vminq_u32(t, vsubq_n_u32(t, c));
        if (per_pixel) {
            *pix = vaddq_u32(*pix, vminq_u32(vsubq_u32(t, *ch), one));
        }
    }
}

TH_INLINE int32x4_t flat_out(const mve_add *k, const int8_t *x, const mve_in *ix,
                             const int8_t *y, const mve_in *iy, uint32x4_t yoff, mve_pred16_t p,
                             int tail, int32x4_t fix, int tables, int op)
{
    const uint32x4_t bx = tail ? vldrbq_z_u32((const uint8_t *)x, p) : vldrbq_u32((const uint8_t *)x);
    const uint32x4_t by = tail ? vldrbq_gather_offset_z_u32((const uint8_t *)y, yoff, p)
                               : vldrbq_gather_offset_u32((const uint8_t *)y, yoff);
    const int32x4_t vx = in_vals(bx, ix, k->left, tables);
    const int32x4_t vy = in_vals(by, iy, k->left, tables);
    const int32x4_t raw = op == 0 ? vaddq_s32(vx, vy) : op == 1 ? vsubq_s32(vx, vy)
                                                              : vsubq_s32(vy, vx);
    int32x4_t r = vqrdmulhq_n_s32(raw, k->mo);
    r = vqaddq_s32(r, vandq_s32(vshrq_n_s32(r, 31), fix));
    r = vqaddq_n_s32(vrshlq_n_s32(r, k->so), k->o.output_offset);
    return vminq_s32(vmaxq_s32(r, vdupq_n_s32(k->o.act_min)), vdupq_n_s32(k->o.act_max));
}

TH_INLINE void flat_rows(const mve_add *kk, const int8_t *x, const mve_in *cx, const int8_t *y,
                         const mve_in *cy, int per_pixel, int32_t c, int32_t total,
                         int8_t *out, int tables, int op)
{
    const mve_add k = *kk; /* locals: stores through int8_t may alias the struct */
    const mve_in ix = *cx, iy = *cy;
    const int32x4_t fix = vdupq_n_s32(k.so < 0 ? -1 : 0);
    const int two = c < 4;
    uint32x4_t ch = vidupq_n_u32(0u, 1); /* 0 1 2 3 */
    uint32x4_t pix = vdupq_n_u32(0u);
    advance(&ch, &pix, (uint32_t)c, per_pixel, two);
    int32_t i = 0;
    for (; i + 4 <= total; i += 4) {
        const int32x4_t r = flat_out(&k, x + i, &ix, y, &iy, per_pixel ? pix : ch,
                                     vctp32q(4u), 0, fix, tables, op);
        vstrbq_s32(out + i, r);
        ch = vaddq_n_u32(ch, 4u);
        advance(&ch, &pix, (uint32_t)c, per_pixel, two);
    }
    if (i < total) {
        const mve_pred16_t p = vctp32q((uint32_t)(total - i));
        vstrbq_p_s32(out + i, flat_out(&k, x + i, &ix, y, &iy, per_pixel ? pix : ch, p, 1, fix,
                                       tables, op), p);
    }
}

typedef void (*flat_fn)(const mve_add *, const int8_t *, const mve_in *, const int8_t *,
                        const mve_in *, int, int32_t, int32_t, int8_t *);

#define FLAT_ROWS(name, tables, op)                                                           \
    __attribute__((noinline)) static void name(const mve_add *k, const int8_t *x,             \
                                               const mve_in *cx, const int8_t *y,             \
                                               const mve_in *cy, int per_pixel, int32_t c,    \
                                               int32_t total, int8_t *out)                    \
    {                                                                                         \
        flat_rows(k, x, cx, y, cy, per_pixel, c, total, out, tables, op);                     \
    }
FLAT_ROWS(mve_flat_add_tab, 1, 0)
FLAT_ROWS(mve_flat_sub_tab, 1, 1)
FLAT_ROWS(mve_flat_rsub_tab, 1, 2)
FLAT_ROWS(mve_flat_add_rq, 0, 0)
FLAT_ROWS(mve_flat_sub_rq, 0, 1)
FLAT_ROWS(mve_flat_rsub_rq, 0, 2)
#undef FLAT_ROWS

/* The flat path for a two-dim broadcast with rows of 2 to 15 outputs where one input is
 * full and the other broadcasts along one dim; 0 when it does not apply. */
static int flat(const mve_add *k, const th_nn_bcast *b, const int8_t *in1, const int8_t *in2,
                int8_t *out, int tables, int sub)
{
    const int32_t c = b->dims[1];
    if (b->rank != 2 || c < 2 || c >= 16) {
        return 0;
    }
    const int full1 = b->stride1[0] == c && b->stride1[1] == 1;
    const int full2 = b->stride2[0] == c && b->stride2[1] == 1;
    if (full1 == full2) {
        return 0;
    }
    /* the broadcasting input: per channel (strides 0, 1) or per pixel (1, 0) */
    const int32_t r = full1 ? b->stride2[0] : b->stride1[0];
    const int32_t st = full1 ? b->stride2[1] : b->stride1[1];
    if (!((r == 0 && st == 1) || (r == 1 && st == 0))) {
        return 0;
    }
    const mve_in i1 = {k->t1, k->off1, k->m1, k->s1};
    const mve_in i2 = {k->t2, k->off2, k->m2, k->s2};
    static const flat_fn fns[6] = {mve_flat_add_rq,  mve_flat_sub_rq,  mve_flat_rsub_rq,
                                   mve_flat_add_tab, mve_flat_sub_tab, mve_flat_rsub_tab};
    /* x is the full input: x - y when it is input1, y - x when it is input2 */
    const int op = sub ? (full1 ? 1 : 2) : 0;
    fns[tables * 3 + op](k, full1 ? in1 : in2, full1 ? &i1 : &i2, full1 ? in2 : in1,
                         full1 ? &i2 : &i1, r == 1, c, b->count, out);
    return 1;
}

void th_nn_add_sub_mve_s8(const th_add_params *params, const th_add_quant *quant,
                          const int32_t *input1_table, const int32_t *input2_table,
                          const th_nn_bcast *b, const int8_t *input1, const int8_t *input2,
                          int8_t *output, int subtract)
{
    mve_add k;
    k.off1 = params->input1_offset;
    k.off2 = params->input2_offset;
    k.left = params->left_shift;
    k.m1 = quant->input1_multiplier;
    k.s1 = quant->input1_shift;
    k.m2 = quant->input2_multiplier;
    k.s2 = quant->input2_shift;
    k.mo = quant->output_multiplier;
    k.so = quant->output_shift;
    k.o.output_offset = params->output_offset;
    k.o.act_min = params->activation.min;
    k.o.act_max = params->activation.max;
    /* the vector rows use tables only when both are given (a single one: rescaled) */
    const int tables = input1_table != NULL && input2_table != NULL;
    k.t1 = input1_table;
    k.t2 = input2_table;
    const int right = k.so < 0;
    const int sub = subtract != 0;
    static const same_fn same[8] = {mve_add_rq_left, mve_add_rq,  mve_sub_rq_left,
                                    mve_sub_rq,      mve_add_tab_left, mve_add_tab,
                                    mve_sub_tab_left, mve_sub_tab};
    static const bcast_fn bcast[8] = {mve_bcast_rq_left,      mve_bcast_rq,
                                      mve_bcast_neg_rq_left,  mve_bcast_neg_rq,
                                      mve_bcast_tab_left,     mve_bcast_tab,
                                      mve_bcast_neg_tab_left, mve_bcast_neg_tab};
    const same_fn rows_same = same[tables * 4 + sub * 2 + right];
    const bcast_fn rows_bcast1 = bcast[tables * 4 + sub * 2 + right]; /* input1 broadcast */
    const bcast_fn rows_bcast2 = bcast[tables * 4 + right];           /* input2 broadcast */

    if (flat(&k, b, input1, input2, output, tables, sub)) {
        return;
    }
    const int32_t inner = b->dims[b->rank - 1];
    const int32_t step_a = b->stride1[b->rank - 1], step_b = b->stride2[b->rank - 1];
    /* two dims (e.g. [P, C] against [C] or [P, 1]): every row in one call; else row by row */
    const int32_t n_rows = b->rank == 2 ? b->dims[0] : 1;
    const int32_t ra = b->rank == 2 ? b->stride1[0] : 0, rb = b->rank == 2 ? b->stride2[0] : 0;
    const int32_t calls = b->count / inner / n_rows;
    th_nn_bcast_pos pos;
    th_nn_bcast_start(&pos);
    for (int32_t r = 0; r < calls; r++) {
        const int8_t *a = input1 + pos.off1, *bb = input2 + pos.off2;
        int8_t *o = output + r * inner;
        if (step_a != 0 && step_b != 0) {
            rows_same(&k, a, ra, bb, rb, inner, n_rows, o);
        } else if (step_a == 0 && step_b == 0) {
            /* one value per row (only rank 1 here: a broadcast row pair merges away) */
            const int32_t c1 = rescale1(k.t1, a[0], k.off1, k.left, k.m1, k.s1);
            const int32_t c2 = rescale1(k.t2, bb[0], k.off2, k.left, k.m2, k.s2);
            const uint32_t raw = sub ? (uint32_t)c1 - (uint32_t)c2 : (uint32_t)c1 + (uint32_t)c2;
            const int32_t v = th_requantize((int32_t)raw, k.mo, k.so) + k.o.output_offset;
            th_nn_mve_fill(o, (int8_t)th_clamp(v, k.o.act_min, k.o.act_max), inner * n_rows);
        } else if (step_a == 0) {
            rows_bcast1(&k, a, ra, bb, rb, 1, 0, inner, n_rows, o);
        } else {
            rows_bcast2(&k, bb, rb, a, ra, 0, sub, inner, n_rows, o);
        }
        th_nn_bcast_next(b, &pos);
    }
}

#endif /* TH_NN_MVE */
