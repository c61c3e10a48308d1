/* th_nn_add_sub_s8: int8 ADD and SUB as TFLite Micro's reference (AddElementwise /
 * SubElementwise with the broadcast variants): each input, offset and shifted left by
 * left_shift, is rescaled to the common scale with its own multiplier, the two are added
 * (subtracted) in int32 and the sum is rescaled to the output; all three rescalings use
 * the double-rounding MultiplyByQuantizedMultiplierSmallerThanOneExp.
 *
 * Table path (th_add_s8_tables / th_sub_s8_tables): the input rescaling depends on the
 * int8 value only, so a host-built table of 256 int32 per input replaces it (one load).
 * On DSP builds the output rescaling (tables or not) runs as th_fast_rq_apply (SMMLAR), exact for
 * |sum| < 2^29 and an output right shift in [1, 22]: the bound on the sum follows from the
 * params (each rescaled input is at most ((255 << left_shift) * M >> 31 + 1 >> e) + 1 in
 * magnitude), so it is checked once per call; otherwise the exact portable rescaling runs.
 * DSP fast forms (all with th_fast_rq exact): a scalar broadcast from TH_ADD_LUT_MIN outputs
 * becomes a 256-byte output table built once per call (lut_run) and one lookup pass; a
 * channel broadcast [rows, C] against [C] walks a stack row of the broadcast input's doubled
 * values built once (chan_rows); a spatial broadcast [pixels, C] against [pixels, 1] runs
 * in one call with each pixel's doubled constant in a register (spatial_t), other
 * per-row constants through fast_rows' blocks; the doubling of the output rescaling folds
 * into the shifted add.
 */
#include <stddef.h>

#include "th_nn_add_sub_s8.h"
#include "th_nn_broadcast.h"
#include "th_nn_ew_pack.h"
#include "th_nn_support.h"

/* The call's constants: the prepared struct itself (th_nn_types.h th_add_prep), filled per
 * call by th_add_s8_prepare or kept in flash by the compiled backend. */
typedef th_add_prep add_consts;

TH_INLINE int32_t scale_input(int32_t x, int32_t offset, int32_t left_shift, int32_t m,
                              int32_t e)
{
    const int32_t shifted = (int32_t)((uint32_t)(x + offset) << left_shift);
    return th_rdbpot(th_srdhm_pos(shifted, m), e); /* m >= 0: checked at entry */
}

TH_INLINE int32_t in1(const add_consts *k, int8_t x)
{
    return k->t1 != NULL ? k->t1[(uint8_t)x]
                         : scale_input(x, k->in1_offset, k->left_shift, k->m1, k->e1);
}

TH_INLINE int32_t in2(const add_consts *k, int8_t x)
{
    return k->t2 != NULL ? k->t2[(uint8_t)x]
                         : scale_input(x, k->in2_offset, k->left_shift, k->m2, k->e2);
}

TH_INLINE int8_t finish(const add_consts *k, int32_t s1, int32_t s2)
{
    const int32_t raw = k->subtract ? (int32_t)((uint32_t)s1 - (uint32_t)s2) : th_add_wrap(s1, s2);
#if TH_NN_HAS_DSP
    if (k->fast) {
        return (int8_t)th_clamp(th_fast_rq_apply(raw, &k->rq), k->act_min, k->act_max);
    }
#endif
    const int32_t v = th_rdbpot(th_srdhm_pos(raw, k->mo), k->eo) + k->out_offset;
    return (int8_t)th_clamp(v, k->act_min, k->act_max);
}

/* A row where an input broadcasts (step 0): its rescaled value computed once. */
static void add_row_bcast(const add_consts *k, const int8_t *a, int32_t step_a, const int8_t *b,
                          int32_t step_b, int32_t n, int8_t *out)
{
    if (step_a == 0 && step_b == 0) {
        const int8_t v = finish(k, in1(k, a[0]), in2(k, b[0]));
        for (int32_t i = 0; i < n; i++) {
            out[i] = v;
        }
    } else if (step_a == 0) {
        const int32_t s1 = in1(k, a[0]);
        for (int32_t i = 0; i < n; i++) {
            out[i] = finish(k, s1, in2(k, b[i]));
        }
    } else if (step_b == 0) {
        const int32_t s2 = in2(k, b[0]);
        for (int32_t i = 0; i < n; i++) {
            out[i] = finish(k, in1(k, a[i]), s2);
        }
    }
}

/* One row of n outputs; input i advances by step_i (0 or 1). Each output is written after
 * its inputs are read (in-place rule). */
static void add_row(const add_consts *k, const int8_t *a, int32_t step_a, const int8_t *b,
                    int32_t step_b, int32_t n, int8_t *out)
{
    if ((step_a == 0 || step_b == 0) && TH_NN_PATH(ADD_ROW_BCAST)) {
        add_row_bcast(k, a, step_a, b, step_b, n, out);
        return;
    }
    /* The general loop every build keeps; a broadcast input (step 0) is never the output
     * (th_nn_bcast_alias_ok), so reading it again after a write is fine. */
    for (int32_t i = 0; i < n; i++) {
        out[i] = finish(k, in1(k, a[i * step_a]), in2(k, b[i * step_b]));
    }
}

#if TH_NN_HAS_DSP
/* Activation clamp after the int8 saturation of th_fast_rq_apply: none (the range is the
 * whole int8 range), the lower bound only (act_max == 127, e.g. RELU), or both. */
enum { CLAMP_NONE, CLAMP_LO, CLAMP_BOTH };

/* Output rescale + offset of a raw sum given doubled (2 * raw, th_fast_rq_apply2), saturated
 * to int8, then the activation clamp. The callers pass
 * copies of the constants held in locals: stores through int8_t may alias add_consts,
 * which would make the compiler reload it after every store. */
TH_INLINE int8_t fast_out2(const th_fast_rq *rq, int32_t raw2, int clamp, int32_t lo, int32_t hi)
{
    int32_t v = th_fast_rq_apply2(raw2, rq);
    if (clamp != CLAMP_NONE) {
        v = v < lo ? lo : v;
    }
    if (clamp == CLAMP_BOTH) {
        v = v > hi ? hi : v;
    }
    return (int8_t)v;
}

/* fast_out2 of the raw sum (th_fast_rq_apply's doubling). */
TH_INLINE int8_t fast_out(const th_fast_rq *rq, int32_t raw, int clamp, int32_t lo, int32_t hi)
{
    return fast_out2(rq, (int32_t)((uint32_t)raw << 1), clamp, lo, hi);
}

/* Both inputs through their tables, no broadcast in this row; sub, clamp and d are constants
 * after inlining. Eight elements per iteration stored as two words (the clamp on the packed
 * words; the pointer steps and the loop test shared by eight: 0.5 instructions an output
 * fewer than four a pass), each group read before it is written; rows clamped on both sides
 * too, since th_nn_store4u's two-instruction clamp needs no scratch register (with SSUB8 +
 * SEL the bounds spilled). The last n % 8 go one at a time: a four-output remainder in every
 * linked variant cost about 100 bytes of code to save about 6 instructions a call.
 * t1x is input1's table, doubled when d (a copy made per call, tab_rows_d): 2 * raw =
 * t1x[a] +- 2 * t2[b] in one shifted add. */
TH_INLINE void tab_row(const add_consts *k, const int32_t *t1x, const uint8_t *a,
                       const uint8_t *b, int32_t n, int8_t *out, int sub, int clamp, int d)
{
    const int32_t *t1 = t1x, *t2 = k->t2;
    const int both = clamp == CLAMP_BOTH; /* th_nn_store4u's unsigned form */
    const int32_t lo = k->act_min, hi = k->act_max;
    const th_fast_rq rq = both ? th_nn_rq_less(k->rq, lo) : k->rq;
    const uint32_t lo4 = both ? th_nn_both_k4(lo, hi) : th_nn_splat4(lo);
    const uint32_t hi4 = both ? th_nn_both_c4(hi) : th_nn_splat4(hi);
    int32_t i = 0;
#define TAB_X(j) ((uint32_t)t1[a[i + j]])
#define TAB_Y(j) (d ? (uint32_t)t2[b[i + j]] << 1 : (uint32_t)t2[b[i + j]])
#define TAB_S(j) (sub ? TAB_X(j) - TAB_Y(j) : TAB_X(j) + TAB_Y(j))
#define TAB_S2(j) (int32_t)(d ? TAB_S(j) : TAB_S(j) << 1)
#define TAB_V(j) (both ? th_nn_rq_apply2u(TAB_S2(j), &rq) : th_fast_rq_apply2(TAB_S2(j), &rq))
#define TAB_4(o, j)                                                                           \
    do {                                                                                      \
        if (both) {                                                                           \
            th_nn_store4u(o, TAB_V(j), TAB_V(j + 1), TAB_V(j + 2), TAB_V(j + 3), lo4, hi4);  \
        } else {                                                                              \
            th_nn_store4(o, TAB_V(j), TAB_V(j + 1), TAB_V(j + 2), TAB_V(j + 3),              \
                         clamp != CLAMP_NONE, 0, lo4, hi4);                                   \
        }                                                                                     \
    } while (0)
    for (; i + 8 <= n; i += 8) {
        TAB_4(out + i, 0);
        TAB_4(out + i + 4, 4);
    }
    for (; i < n; i++) {
        const int32_t s2 = TAB_S2(0);
        out[i] = both ? th_nn_from_u(th_nn_rq_apply2u(s2, &rq), lo, hi)
                      : fast_out2(&rq, s2, clamp, lo, hi);
    }
#undef TAB_4
#undef TAB_V
#undef TAB_S2
#undef TAB_S
#undef TAB_Y
#undef TAB_X
}

typedef void (*tab_row_fn)(const add_consts *, const int32_t *, const uint8_t *,
                           const uint8_t *, int32_t, int8_t *);

#define TAB_ROW(name, sub, clamp, d)                                                          \
    static void name(const add_consts *k, const int32_t *t1x, const uint8_t *a,              \
                     const uint8_t *b, int32_t n, int8_t *out)                                \
    {                                                                                         \
        tab_row(k, t1x, a, b, n, out, sub, clamp, d);                                         \
    }
TAB_ROW(tab_row_add_none, 0, CLAMP_NONE, 0)
TAB_ROW(tab_row_add_lo, 0, CLAMP_LO, 0)
TAB_ROW(tab_row_sub_none, 1, CLAMP_NONE, 0)
TAB_ROW(tab_row_sub_lo, 1, CLAMP_LO, 0)
TAB_ROW(tab_row_add_none_d, 0, CLAMP_NONE, 1)
TAB_ROW(tab_row_add_lo_d, 0, CLAMP_LO, 1)
TAB_ROW(tab_row_sub_none_d, 1, CLAMP_NONE, 1)
TAB_ROW(tab_row_sub_lo_d, 1, CLAMP_LO, 1)
#undef TAB_ROW

/* Rarely used (act_max < 127: RELU6, RELU_N1_TO_1): one loop for ADD and SUB. */
static void tab_row_both(const add_consts *k, const int32_t *t1x, const uint8_t *a,
                         const uint8_t *b, int32_t n, int8_t *out)
{
    if (k->subtract) {
        tab_row(k, t1x, a, b, n, out, 1, CLAMP_BOTH, 0);
    } else {
        tab_row(k, t1x, a, b, n, out, 0, CLAMP_BOTH, 0);
    }
}

static void tab_row_both_d(const add_consts *k, const int32_t *t1x, const uint8_t *a,
                           const uint8_t *b, int32_t n, int8_t *out)
{
    if (k->subtract) {
        tab_row(k, t1x, a, b, n, out, 1, CLAMP_BOTH, 1);
    } else {
        tab_row(k, t1x, a, b, n, out, 0, CLAMP_BOTH, 1);
    }
}

/* One input broadcast (its rescaled values doubled: r2, stepping by rstep, 0 or 1), the other
 * (x, table t) advancing: 2 * raw = r2 + 2 * t[x], or r2 - 2 * t[x] when neg (SUB with input1
 * broadcast; SUB with input2 broadcast passes r2 = -2 * s2, the same modulo 2^32), so the
 * doubling of th_fast_rq_apply folds into one shifted add. rstep 1: a channel row built
 * once per call (chan_rows), 0: one constant per row (spatial broadcast). neg, rstep and
 * clamp are constants after inlining; four elements per iteration, each read before it is
 * written. */
TH_INLINE void bcast_row(const th_fast_rq *rqp, const int32_t *r2, int rstep, const int32_t *t,
                         const uint8_t *x, int32_t n, int8_t *out, int neg, int clamp,
                         int32_t lo, int32_t hi)
{
    const int both = clamp == CLAMP_BOTH; /* th_nn_store4u's unsigned form */
    const th_fast_rq rq = both ? th_nn_rq_less(*rqp, lo) : *rqp;
    const uint32_t lo4 = both ? th_nn_both_k4(lo, hi) : th_nn_splat4(lo);
    const uint32_t hi4 = both ? th_nn_both_c4(hi) : th_nn_splat4(hi);
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
#define BC_C(j) ((uint32_t)r2[rstep * (i + j)])
#define BC_U(j) ((uint32_t)t[x[i + j]] << 1)
#define BC_S(j) (int32_t)(neg ? BC_C(j) - BC_U(j) : BC_C(j) + BC_U(j))
#define BC_V(j) th_fast_rq_apply2(BC_S(j), &rq)
#define BC_W(j) th_nn_rq_apply2u(BC_S(j), &rq)
        if (both) {
            th_nn_store4u(out + i, BC_W(0), BC_W(1), BC_W(2), BC_W(3), lo4, hi4);
        } else {
            th_nn_store4(out + i, BC_V(0), BC_V(1), BC_V(2), BC_V(3), clamp != CLAMP_NONE, 0,
                         lo4, hi4);
        }
#undef BC_W
#undef BC_V
#undef BC_S
#undef BC_U
#undef BC_C
    }
    for (; i < n; i++) {
        const uint32_t u = (uint32_t)t[x[i]] << 1, c = (uint32_t)r2[rstep * i];
        const int32_t s2 = (int32_t)(neg ? c - u : c + u);
        out[i] = both ? th_nn_from_u(th_nn_rq_apply2u(s2, &rq), lo, hi)
                      : fast_out2(&rq, s2, clamp, lo, hi);
    }
}

/* `rows` rows of n outputs, row r of x at x + r * row_x, of out at out + r * n; r2 (doubled
 * broadcast values, see bcast_row) steps by 1 along a row (rstep 1: the same row for every
 * row) or by 1 per row (rstep 0: one constant per row). */
typedef void (*bcast_rows_fn)(const add_consts *, const int32_t *, const int32_t *,
                              const uint8_t *, int32_t, int32_t, int32_t, int8_t *, int32_t);

#define BCAST_ROWS(name, rstep, neg, clamp)                                                   \
    static void name(const add_consts *k, const int32_t *r2, const int32_t *t,                \
                     const uint8_t *x, int32_t row_x, int32_t n, int32_t rows, int8_t *out,   \
                     int32_t row_o)                                                           \
    {                                                                                         \
        const th_fast_rq rq = k->rq;                                                          \
        const int32_t lo = k->act_min, hi = k->act_max;                                       \
        for (int32_t r = 0; r < rows; r++) {                                                  \
            bcast_row(&rq, rstep ? r2 : r2 + r, rstep, t, x + r * row_x, n, out + r * row_o,  \
                      neg, clamp, lo, hi);                                                    \
        }                                                                                     \
    }
BCAST_ROWS(bcast_row_add_none, 0, 0, CLAMP_NONE)
BCAST_ROWS(bcast_row_add_lo, 0, 0, CLAMP_LO)
BCAST_ROWS(bcast_row_add_both, 0, 0, CLAMP_BOTH)
BCAST_ROWS(bcast_row_neg_none, 0, 1, CLAMP_NONE)
BCAST_ROWS(bcast_row_neg_lo, 0, 1, CLAMP_LO)
BCAST_ROWS(bcast_row_neg_both, 0, 1, CLAMP_BOTH)
BCAST_ROWS(chan_row_add_none, 1, 0, CLAMP_NONE)
BCAST_ROWS(chan_row_add_lo, 1, 0, CLAMP_LO)
BCAST_ROWS(chan_row_neg_none, 1, 1, CLAMP_NONE)
BCAST_ROWS(chan_row_neg_lo, 1, 1, CLAMP_LO)
#undef BCAST_ROWS

/* Rarely used (act_max < 127: RELU6, RELU_N1_TO_1): one channel loop for both signs. */
static void chan_row_both(const add_consts *k, const int32_t *r2, const int32_t *t,
                          const uint8_t *x, int32_t row_x, int32_t n, int32_t rows, int8_t *out,
                          int neg)
{
    const th_fast_rq rq = k->rq;
    const int32_t lo = k->act_min, hi = k->act_max;
    for (int32_t r = 0; r < rows; r++) {
        if (neg) {
            bcast_row(&rq, r2, 1, t, x + r * row_x, n, out + r * row_x, 1, CLAMP_BOTH, lo, hi);
        } else {
            bcast_row(&rq, r2, 1, t, x + r * row_x, n, out + r * row_x, 0, CLAMP_BOTH, lo, hi);
        }
    }
}

/* The broadcast rows for this clamp and sign, NULL where the build leaves them out. */
static bcast_rows_fn bcast_pick(int clamp, int neg)
{
    if (neg) {
        return clamp == CLAMP_NONE ? (TH_NN_PATH(ADD_BCAST_NEG) ? bcast_row_neg_none : NULL)
               : clamp == CLAMP_LO ? (TH_NN_PATH(ADD_BCAST_NEG_LO) ? bcast_row_neg_lo : NULL)
                                   : (TH_NN_PATH(ADD_BCAST_NEG_BOTH) ? bcast_row_neg_both : NULL);
    }
    return clamp == CLAMP_NONE ? (TH_NN_PATH(ADD_BCAST) ? bcast_row_add_none : NULL)
           : clamp == CLAMP_LO ? (TH_NN_PATH(ADD_BCAST_LO) ? bcast_row_add_lo : NULL)
                               : (TH_NN_PATH(ADD_BCAST_BOTH) ? bcast_row_add_both : NULL);
}

/* th_fast_rq_apply2 / th_nn_rq_apply2u, without the sign term when ns (th_add_prep nosign:
 * proven idle for every input pair; rq's round_zp already lowered by 1 for nosign 2). */
TH_INLINE int32_t rq2_ns(int32_t acc2, const th_fast_rq *rq, int ns)
{
    int32_t y = th_smmlar(acc2, rq->multiplier, rq->round_zp);
    if (!ns) {
        y += acc2 >> 31;
    }
    return th_ssat8(y >> rq->e);
}

TH_INLINE int32_t rq2u_ns(int32_t acc2, const th_fast_rq *rq, int ns)
{
    int32_t y = th_smmlar(acc2, rq->multiplier, rq->round_zp);
    if (!ns) {
        y += acc2 >> 31;
    }
    return th_nn_usat8(y >> rq->e);
}

TH_INLINE int32_t at_least(int32_t v, int32_t lo)
{
    return v < lo ? lo : v;
}

/* Spatial broadcast: `rows` pixels of n outputs, x's pixel r at x + r * n (out alike), the
 * broadcast input's value for pixel r at src[r] through its table tb. The pixel's doubled
 * rescaled value c = f2 * tb[src[r]] (f2 = -2 for SUB with input2 broadcast, else 2) stays
 * in a register for the pixel's n outputs (bcast_row, rstep 0). One call per layer: about 8
 * instructions a pixel besides its outputs, against about 40 through fast_rows' blocks of
 * row constants and a call per row. neg, clamp and ns are constants after inlining; ns: the
 * sign term left out (th_add_prep nosign != 0), one instruction an output fewer. Eight
 * outputs a pass (the pointer steps and the loop test shared by eight), then one group of
 * four. */
TH_INLINE void spatial_t(const add_consts *k, const int32_t *tb, int32_t f2, const int8_t *src,
                         const int32_t *t, const uint8_t *x, int32_t n, int32_t rows,
                         int8_t *out, int neg, int clamp, int ns)
{
    const int both = clamp == CLAMP_BOTH; /* th_nn_store4u's unsigned form */
    const int32_t lo = k->act_min, hi = k->act_max;
    th_fast_rq rq = both ? th_nn_rq_less(k->rq, lo) : k->rq;
    if (ns) {
        rq.round_zp = (int32_t)((uint32_t)rq.round_zp - (uint32_t)(k->nosign == 2));
    }
    const uint32_t lo4 = both ? th_nn_both_k4(lo, hi) : th_nn_splat4(lo);
    const uint32_t hi4 = both ? th_nn_both_c4(hi) : th_nn_splat4(hi);
    const uint8_t *s = (const uint8_t *)src;
    const uint8_t *const send = s + rows;
    const int32_t n8 = n & ~7, n4 = n & 4, nt = n & 3;
    /* pixels are contiguous in x and out: both pointers just run on */
    do {
        const uint32_t c = (uint32_t)tb[*s++] * (uint32_t)f2;
#define SP_S(j) (int32_t)(neg ? c - ((uint32_t)t[x[j]] << 1) : c + ((uint32_t)t[x[j]] << 1))
#define SP_V(j) rq2_ns(SP_S(j), &rq, ns)
#define SP_W(j) rq2u_ns(SP_S(j), &rq, ns)
#define SP_4(o, j)                                                                            \
    do {                                                                                      \
        if (both) {                                                                           \
            th_nn_store4u(o, SP_W(j), SP_W(j + 1), SP_W(j + 2), SP_W(j + 3), lo4, hi4);      \
        } else {                                                                              \
            th_nn_store4(o, SP_V(j), SP_V(j + 1), SP_V(j + 2), SP_V(j + 3),                  \
                         clamp != CLAMP_NONE, 0, lo4, hi4);                                   \
        }                                                                                     \
    } while (0)
        for (const uint8_t *const e8 = x + n8; x != e8; x += 8, out += 8) {
            SP_4(out, 0);
            SP_4(out + 4, 4);
        }
        if (n4) {
            SP_4(out, 0);
            x += 4;
            out += 4;
        }
#define SP_O(j)                                                                               \
    (both ? th_nn_from_u(SP_W(j), lo, hi) : clamp == CLAMP_NONE ? SP_V(j) : at_least(SP_V(j), lo))
        TH_NN_EW_TAIL3(nt, x, out, SP_O);
#undef SP_O
#undef SP_4
#undef SP_W
#undef SP_V
#undef SP_S
    } while (s != send);
}

typedef void (*spatial_fn)(const add_consts *, const int32_t *, int32_t, const int8_t *,
                           const int32_t *, const uint8_t *, int32_t, int32_t, int8_t *);
#define SPATIAL(name, neg, clamp, ns)                                                         \
    __attribute__((noinline)) static void name(const add_consts *k, const int32_t *tb,       \
                                               int32_t f2, const int8_t *src,                 \
                                               const int32_t *t, const uint8_t *x, int32_t n, \
                                               int32_t rows, int8_t *out)                     \
    {                                                                                         \
        spatial_t(k, tb, f2, src, t, x, n, rows, out, neg, clamp, ns);                        \
    }
SPATIAL(spatial_add_none, 0, CLAMP_NONE, 0)
SPATIAL(spatial_add_lo, 0, CLAMP_LO, 0)
SPATIAL(spatial_add_both, 0, CLAMP_BOTH, 0)
SPATIAL(spatial_neg_none, 1, CLAMP_NONE, 0)
SPATIAL(spatial_neg_lo, 1, CLAMP_LO, 0)
SPATIAL(spatial_neg_both, 1, CLAMP_BOTH, 0)
SPATIAL(spatial_add_none_ns, 0, CLAMP_NONE, 1)
SPATIAL(spatial_add_lo_ns, 0, CLAMP_LO, 1)
SPATIAL(spatial_add_both_ns, 0, CLAMP_BOTH, 1)
SPATIAL(spatial_neg_none_ns, 1, CLAMP_NONE, 1)
SPATIAL(spatial_neg_lo_ns, 1, CLAMP_LO, 1)
SPATIAL(spatial_neg_both_ns, 1, CLAMP_BOTH, 1)
#undef SPATIAL

/* The spatial loop for this clamp and sign, NULL where the build leaves it out; ns: the
 * sign term proven idle, its loop if kept, else the one with the term. */
static spatial_fn spatial_pick(int clamp, int neg, int ns)
{
    /* only the path picked is evaluated (a recording build notes each one evaluated) */
#define PICK(keep, fn) ((keep) ? (fn) : NULL)
    spatial_fn f = NULL;
    if (ns) {
        if (neg) {
            f = clamp == CLAMP_NONE ? PICK(TH_NN_PATH(ADD_SPATIAL_NEG_NS), spatial_neg_none_ns)
                : clamp == CLAMP_LO ? PICK(TH_NN_PATH(ADD_SPATIAL_NEG_NS_LO), spatial_neg_lo_ns)
                                    : PICK(TH_NN_PATH(ADD_SPATIAL_NEG_NS_BOTH),
                                           spatial_neg_both_ns);
        } else {
            f = clamp == CLAMP_NONE ? PICK(TH_NN_PATH(ADD_SPATIAL_NS), spatial_add_none_ns)
                : clamp == CLAMP_LO ? PICK(TH_NN_PATH(ADD_SPATIAL_NS_LO), spatial_add_lo_ns)
                                    : PICK(TH_NN_PATH(ADD_SPATIAL_NS_BOTH), spatial_add_both_ns);
        }
        if (f != NULL) {
            return f;
        }
    }
    if (neg) {
        return clamp == CLAMP_NONE ? PICK(TH_NN_PATH(ADD_SPATIAL_NEG), spatial_neg_none)
               : clamp == CLAMP_LO ? PICK(TH_NN_PATH(ADD_SPATIAL_NEG_LO), spatial_neg_lo)
                                   : PICK(TH_NN_PATH(ADD_SPATIAL_NEG_BOTH), spatial_neg_both);
    }
    return clamp == CLAMP_NONE ? PICK(TH_NN_PATH(ADD_SPATIAL), spatial_add_none)
           : clamp == CLAMP_LO ? PICK(TH_NN_PATH(ADD_SPATIAL_LO), spatial_add_lo)
                               : PICK(TH_NN_PATH(ADD_SPATIAL_BOTH), spatial_add_both);
#undef PICK
}

/* Doubled rescaled value of input1 (which1) or input2 for x, negated when neg (mod 2^32). */
TH_INLINE int32_t doubled(const add_consts *k, int which1, int8_t x, int neg)
{
    const uint32_t v = (uint32_t)(which1 ? in1(k, x) : in2(k, x)) << 1;
    return (int32_t)(neg ? 0u - v : v);
}

/* Channel broadcast: [rows, n] against one row of n (input1's when bcast1). The broadcast
 * row's doubled values are built once per call into a stack row of at most TH_ADD_CHAN_MAX:
 * short rows repeated to fill it (consecutive rows are contiguous), long rows in column
 * blocks. 0 when the build leaves the path out. */
#define TH_ADD_CHAN_MAX 64
__attribute__((noinline)) static int chan_rows(const add_consts *k, int bcast1,
                                               const int8_t *row, const int8_t *x, int32_t n,
                                               int32_t rows, int8_t *out, int clamp)
{
    const int neg = bcast1 && k->subtract; /* 2 * raw = r2 - 2 * t1[x] */
    const int negate_row = !bcast1 && k->subtract;
    const int32_t *t = bcast1 ? k->t2 : k->t1;
    int32_t r2[TH_ADD_CHAN_MAX];
    if (!TH_NN_PATH(ADD_CHAN)) {
        return 0;
    }
    const bcast_rows_fn f = clamp == CLAMP_NONE ? (neg ? chan_row_neg_none : chan_row_add_none)
                            : clamp == CLAMP_LO ? (neg ? chan_row_neg_lo : chan_row_add_lo)
                                                : NULL;
    if (n <= TH_ADD_CHAN_MAX / 2) {
        /* reps rows at a time as one row of reps * n */
        int32_t reps = TH_ADD_CHAN_MAX / n;
        reps = reps < rows ? reps : rows;
        for (int32_t j = 0; j < n; j++) {
            r2[j] = doubled(k, bcast1, row[j], negate_row);
        }
        for (int32_t j = n; j < reps * n; j++) {
            r2[j] = r2[j - n];
        }
        /* the full groups in one call (rows of reps * n), then what is left */
        const int32_t groups = rows / reps, len = reps * n, left = (rows - groups * reps) * n;
        const uint8_t *xl = (const uint8_t *)(x + groups * len);
        if (f != NULL) {
            f(k, r2, t, (const uint8_t *)x, len, len, groups, out, len);
            f(k, r2, t, xl, 0, left, 1, out + groups * len, 0);
        } else {
            chan_row_both(k, r2, t, (const uint8_t *)x, len, len, groups, out, neg);
            chan_row_both(k, r2, t, xl, 0, left, 1, out + groups * len, neg);
        }
        return 1;
    }
    for (int32_t j0 = 0; j0 < n; j0 += TH_ADD_CHAN_MAX) {
        const int32_t len = n - j0 < TH_ADD_CHAN_MAX ? n - j0 : TH_ADD_CHAN_MAX;
        for (int32_t j = 0; j < len; j++) {
            r2[j] = doubled(k, bcast1, row[j0 + j], negate_row);
        }
        /* rows of len at stride n (x and out alike) */
        const uint8_t *xr = (const uint8_t *)(x + j0);
        if (f != NULL) {
            f(k, r2, t, xr, n, len, rows, out + j0, n);
        } else {
            chan_row_both(k, r2, t, xr, n, len, rows, out + j0, neg);
        }
    }
    return 1;
}

/* Channel broadcast without a clamp, down the columns: channel j's doubled constant c (see
 * bcast_row) stays in a register for its `rows` outputs at stride s (x and out alike), so an
 * output is a byte load, a table load, the shifted add, th_fast_rq_apply2 and a byte store
 * (about 9 instructions, four a pass), against chan_rows' 11 (the row's constant loaded
 * per output). Each output is written after its input is read (out may be x). */
TH_INLINE void chan_col(const th_fast_rq *rqp, uint32_t c, const int32_t *t, const uint8_t *x,
                        int32_t s, int32_t rows, int8_t *out, int neg)
{
    const th_fast_rq rq = *rqp;
    const int32_t s2 = 2 * s, s3 = 3 * s, s4 = 4 * s;
    const uint8_t *const end4 = x + (rows >> 2) * s4;
#define CC_S(o) (int32_t)(neg ? c - ((uint32_t)t[x[o]] << 1) : c + ((uint32_t)t[x[o]] << 1))
#define CC_V(o) (int8_t)th_fast_rq_apply2(CC_S(o), &rq)
    while (x != end4) {
        out[0] = CC_V(0);
        out[s] = CC_V(s);
        out[s2] = CC_V(s2);
        out[s3] = CC_V(s3);
        x += s4;
        out += s4;
    }
    for (int32_t i = rows & 3; i > 0; i--) {
        *out = CC_V(0);
        x += s;
        out += s;
    }
#undef CC_V
#undef CC_S
}

/* [rows, n] (x) against one row of n (input1's when bcast1), column by column (chan_col);
 * neg: SUB with input1 broadcast (2 * raw = c - 2 * t[x]), a constant after inlining. */
typedef void (*chan_cols_fn)(const add_consts *, int, const int8_t *, const uint8_t *, int32_t,
                             int32_t, int8_t *);
#define CHAN_COLS(name, neg)                                                                  \
    __attribute__((noinline)) static void name(const add_consts *k, int bcast1,              \
                                               const int8_t *row, const uint8_t *x,           \
                                               int32_t n, int32_t rows, int8_t *out)          \
    {                                                                                         \
        const th_fast_rq rq = k->rq;                                                          \
        const int32_t *t = bcast1 ? k->t2 : k->t1;                                            \
        const int negate_row = !bcast1 && k->subtract;                                        \
        for (int32_t j = 0; j < n; j++) {                                                     \
            const uint32_t c = (uint32_t)doubled(k, bcast1, row[j], negate_row);              \
            chan_col(&rq, c, t, x + j, n, rows, out + j, neg);                                \
        }                                                                                     \
    }
CHAN_COLS(chan_cols_add, 0)
CHAN_COLS(chan_cols_neg, 1)
#undef CHAN_COLS
/* Rows from which the column walk beats chan_rows (its per-column set-up and row tail). */
#define TH_ADD_CHAN_COL_ROWS 8

#define TH_ADD_CHAN_LUT_ROWS 224
/* ... with a clamp (micro, 37 and 12 channels: even at about 110 rows) */
#define TH_ADD_CHAN_LUT_ROWS_CLAMP 128
__attribute__((noinline)) static void lut_column(const int8_t *lut, const int8_t *x,
                                                 int32_t stride, int32_t count, int8_t *out)
{
    th_nn_lut_strided(lut, x, stride, count, out);
}
static void chan_lut(const add_consts *k, int bcast1, const int8_t *row, const int8_t *x,
                     int32_t n, int32_t rows, int8_t *out);

/* The table row for this clamp and operation, NULL where the build leaves it out; d: the
 * rows reading input1's table doubled. */
static tab_row_fn tab_pick(int clamp, int sub, int d)
{
    /* only the path picked is evaluated (a recording build notes each one evaluated) */
#define PICK(keep, fn) ((keep) ? (fn) : NULL)
    const int lo = clamp == CLAMP_LO;
    if (clamp == CLAMP_BOTH) {
        return d ? PICK(TH_NN_PATH(ADD_TAB_BOTH_D), tab_row_both_d)
                 : PICK(TH_NN_PATH(ADD_TAB_BOTH), tab_row_both);
    }
    if (sub) {
        return d ? (lo ? PICK(TH_NN_PATH(ADD_TAB_SUB_LO_D), tab_row_sub_lo_d)
                       : PICK(TH_NN_PATH(ADD_TAB_SUB_D), tab_row_sub_none_d))
                 : (lo ? PICK(TH_NN_PATH(ADD_TAB_SUB_LO), tab_row_sub_lo)
                       : PICK(TH_NN_PATH(ADD_TAB_SUB), tab_row_sub_none));
    }
    return d ? (lo ? PICK(TH_NN_PATH(ADD_TAB_LO_D), tab_row_add_lo_d)
                   : PICK(TH_NN_PATH(ADD_TAB_D), tab_row_add_none_d))
             : (lo ? PICK(TH_NN_PATH(ADD_TAB_LO), tab_row_add_lo)
                   : PICK(TH_NN_PATH(ADD_TAB), tab_row_add_none));
#undef PICK
}

/* Same shape from TH_ADD_TAB_D_MIN outputs (one contiguous run of n): input1's table doubled
 * once into the stack (about 400 instructions on DSP builds) saves one instruction per output
 * (tab_row's d). */
#define TH_ADD_TAB_D_MIN 384
__attribute__((noinline)) static void tab_run_d(const add_consts *k, tab_row_fn row,
                                                const int8_t *a, const int8_t *b, int32_t n,
                                                int8_t *out)
{
    int32_t t1d[256];
    const uint32_t *src = (const uint32_t *)k->t1;
    uint32_t *dst = (uint32_t *)t1d;
    const uint32_t *const end = src + 256;
#if TH_NN_DSP_NATIVE
    /* eight entries a pass through LDM / STM: 1.5 instructions an entry (about 400 for the
     * table) against 5 one at a time */
    __asm__ volatile("1:\n\t"
                     "ldmia %0!, {r2, r3, r4, r5, r6, r7, r8, r9}\n\t"
                     "lsls r2, r2, #1\n\tlsls r3, r3, #1\n\tlsls r4, r4, #1\n\t"
                     "lsls r5, r5, #1\n\tlsls r6, r6, #1\n\tlsls r7, r7, #1\n\t"
                     "lsl r8, r8, #1\n\tlsl r9, r9, #1\n\t"
                     "stmia %1!, {r2, r3, r4, r5, r6, r7, r8, r9}\n\t"
                     "cmp %0, %2\n\t"
                     "bne 1b"
                     : "+r"(src), "+r"(dst)
                     : "r"(end)
                     : "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "cc", "memory");
#else
    for (; src != end; src++, dst++) {
        *dst = *src << 1;
    }
#endif
    row(k, t1d, (const uint8_t *)a, (const uint8_t *)b, n, out);
}

/* The DSP table path for `rows` rows of n outputs, input i's row r at in_i + r * row_i
 * (steps in the row step_i); the row function picked once. 0 when it does not apply or the
 * build left it out (add_row runs instead). */
/* Rows whose broadcast constants are doubled at a time (a stack row). */
#define TH_ADD_ROWS_MAX 16
static int fast_rows(const add_consts *k, const int8_t *a, int32_t step_a, int32_t row_a,
                     const int8_t *b, int32_t step_b, int32_t row_b, int32_t n, int32_t rows,
                     int8_t *out)
{
    const int clamp = k->act_max < 127 ? CLAMP_BOTH : (k->act_min > -128 ? CLAMP_LO : CLAMP_NONE);
    if (step_a == 1 && step_b == 1 && k->t1 != NULL && k->t2 != NULL) {
        /* a clamped row costs chan_rows about 12 an output, the column walk 9 */
        const int32_t lut_rows = clamp == CLAMP_NONE ? TH_ADD_CHAN_LUT_ROWS
                                                     : TH_ADD_CHAN_LUT_ROWS_CLAMP;
        if ((row_a == 0 || row_b == 0) && rows >= lut_rows &&
            TH_NN_PATH(ADD_CHAN_LUT)) {
            chan_lut(k, row_a == 0, row_a == 0 ? a : b, row_a == 0 ? b : a, n, rows, out);
            return 1;
        }
        if ((row_a == 0 || row_b == 0) && clamp == CLAMP_NONE && rows >= TH_ADD_CHAN_COL_ROWS &&
            TH_NN_PATH(ADD_CHAN_COL)) {
            const int bcast1 = row_a == 0;
            (bcast1 && k->subtract ? chan_cols_neg : chan_cols_add)(
                k, bcast1, bcast1 ? a : b, (const uint8_t *)(bcast1 ? b : a), n, rows, out);
            return 1;
        }
        if ((row_a == 0 || row_b == 0) && rows > 1 &&
            chan_rows(k, row_a == 0, row_a == 0 ? a : b, row_a == 0 ? b : a, n, rows, out,
                      clamp)) {
            return 1;
        }
        const int run = rows == 1 || (row_a == n && row_b == n); /* one run of n * rows */
        const tab_row_fn row_d = run && (int64_t)n * rows >= TH_ADD_TAB_D_MIN
                                     ? tab_pick(clamp, k->subtract, 1)
                                     : NULL;
        if (row_d != NULL) {
            tab_run_d(k, row_d, a, b, n * rows, out);
            return 1;
        }
        const tab_row_fn row = tab_pick(clamp, k->subtract, 0);
        if (row == NULL) {
            return 0;
        }
        for (int32_t r = 0; r < rows; r++) {
            row(k, k->t1, (const uint8_t *)(a + r * row_a), (const uint8_t *)(b + r * row_b), n,
                out + r * n);
        }
        return 1;
    }
    if ((step_a == 0 && step_b == 1 && k->t2 != NULL) ||
        (step_a == 1 && step_b == 0 && k->t1 != NULL)) {
        /* one constant per row (scalar or spatial broadcast), doubled in blocks of rows */
        const int bcast1 = step_a == 0;
        /* spatial: [rows, n] against [rows, 1], x contiguous, both tables */
        const int spatial = rows > 1 && (bcast1 ? row_a == 1 && row_b == n
                                                : row_b == 1 && row_a == n) &&
                            k->t1 != NULL && k->t2 != NULL;
        const spatial_fn sf =
            spatial ? spatial_pick(clamp, bcast1 && k->subtract, k->nosign != 0) : NULL;
        if (sf != NULL) {
            sf(k, bcast1 ? k->t1 : k->t2, !bcast1 && k->subtract ? -2 : 2, bcast1 ? a : b,
               bcast1 ? k->t2 : k->t1, (const uint8_t *)(bcast1 ? b : a), n, rows, out);
            return 1;
        }
        const bcast_rows_fn f = bcast_pick(clamp, bcast1 && k->subtract);
        if (f == NULL) {
            return 0;
        }
        const int8_t *src = bcast1 ? a : b;
        const int32_t row_src = bcast1 ? row_a : row_b, row_x = bcast1 ? row_b : row_a;
        const uint8_t *x = (const uint8_t *)(bcast1 ? b : a);
        int32_t r2[TH_ADD_ROWS_MAX];
        for (int32_t r0 = 0; r0 < rows; r0 += TH_ADD_ROWS_MAX) {
            const int32_t m = rows - r0 < TH_ADD_ROWS_MAX ? rows - r0 : TH_ADD_ROWS_MAX;
            for (int32_t j = 0; j < m; j++) {
                r2[j] = doubled(k, bcast1, src[(r0 + j) * row_src], !bcast1 && k->subtract);
            }
            f(k, r2, bcast1 ? k->t2 : k->t1, x + r0 * row_x, row_x, n, m, out + r0 * n, n);
        }
        return 1;
    }
    return 0;
}

/* The output for every int8 value of one input (input2 when scalar1, else input1: through its
 * table t) against one value s of the other: lut[v] = the output for (int8_t)v, with the
 * arithmetic of finish(): 2 * raw = base2 +- 2 * t[v] as in bcast_row, requantized as
 * th_fast_rq_apply2 (th_nn_mono_fill_th: the saturated ends as runs, their edges from the
 * call's acc edges, SMMLAR and a shift between them). */
__attribute__((noinline)) static void mono_fill_th(const th_nn_mono *q, const th_nn_mono_th *th,
                                                   int8_t *lut, th_nn_mono_runs *st)
{
    th_nn_mono_fill_th(q, th, lut, st);
}

TH_INLINE void mono_of(const add_consts *k, int scalar1, int8_t s, th_nn_mono *qp)
{
    const uint32_t c = (uint32_t)(scalar1 ? in1(k, s) : in2(k, s));
    th_nn_mono q;
    q.tab = scalar1 ? k->t2 : k->t1;
    /* raw = c + u, c - u (SUB, input1 the scalar) or u - c = (-c) + u (SUB, input2) */
    q.c = (int32_t)((k->subtract && !scalar1 ? 0u - c : c) << 1);
    q.k = k->subtract && scalar1 ? -2 : 2;
    q.m = k->rq.multiplier;
    q.rzp = k->rq.round_zp;
    q.rzp_neg = (int32_t)((uint32_t)q.rzp - 1u);
    q.e = k->rq.e;
    q.lo = k->act_min;
    q.hi = k->act_max;
    *qp = q;
}

/* The call's acc edges (th_nn_mono_thresholds, from the requantization's formula: about
 * 300 instructions) for the tables of the broadcast values lo_v .. hi_v (c between theirs:
 * the tables' ends for x, both tables monotone); q then holds lo_v's mono. */
TH_INLINE th_nn_mono_th acc_edges(const add_consts *k, int bcast1, int8_t lo_v, int8_t hi_v,
                                  th_nn_mono *qp)
{
    mono_of(k, bcast1, hi_v, qp);
    const int32_t c_hi = qp->c;
    mono_of(k, bcast1, lo_v, qp);
    const th_nn_mono *q = qp;
    /* inside int32 as every acc of the call (th_fast_rq_ok's bound), summed as acc is */
    const int32_t x0 = (int32_t)((uint32_t)q->k * (uint32_t)q->tab[128]);
    const int32_t x1 = (int32_t)((uint32_t)q->k * (uint32_t)q->tab[127]);
    const uint32_t c0 = (uint32_t)(q->c < c_hi ? q->c : c_hi);
    const uint32_t c1 = (uint32_t)(q->c < c_hi ? c_hi : q->c);
    const int32_t amin = (int32_t)(c0 + (uint32_t)(x0 < x1 ? x0 : x1));
    const int32_t amax = (int32_t)(c1 + (uint32_t)(x0 < x1 ? x1 : x0));
    return th_nn_mono_thresholds(q, amin, amax);
}

/* The scalar table's pass over x (th_nn_lut_run), out of line: its own registers. */
__attribute__((noinline)) static void lut_run8(const int8_t *lut, const int8_t *x, int32_t n,
                                               int8_t *out)
{
    th_nn_lut_run(lut, x, n, out);
}

/* Scalar broadcast (s is one element; x has n): the output is a function of one int8, so a
 * 256-byte table of it, built once (mono_fill_th, or with finish()'s arithmetic where x has no
 * table), then one lookup pass (th_nn_lut_run, 3.5 instructions an element). Pays from
 * TH_ADD_LUT_MIN elements. */
#define TH_ADD_LUT_MIN 512
__attribute__((noinline)) static th_status lut_run(const add_consts *k, int scalar1,
                                                   const int8_t *s, const int8_t *x, int32_t n,
                                                   int8_t *out)
{
    uint32_t lutw[64];
    int8_t *lut = (int8_t *)lutw;
    const int32_t *t = scalar1 ? k->t2 : k->t1;
    if (t != NULL) {
        th_nn_mono q;
        th_nn_mono_runs st;
        th_nn_mono_runs_none(&st);
        const th_nn_mono_th th = acc_edges(k, scalar1, s[0], s[0], &q);
        mono_fill_th(&q, &th, lut, &st);
    } else {
        const uint32_t c = (uint32_t)(scalar1 ? in1(k, s[0]) : in2(k, s[0]));
        const th_fast_rq rq = k->rq;
        const int32_t lo = k->act_min, hi = k->act_max, sub = k->subtract;
        const int negu = sub && scalar1;
        const uint32_t base = sub && !scalar1 ? 0u - c : c;
        for (int32_t v = 0; v < 256; v++) {
            const int8_t xv = (int8_t)(uint8_t)v;
            const uint32_t u = (uint32_t)(scalar1 ? in2(k, xv) : in1(k, xv));
            lut[v] = (int8_t)th_clamp(th_fast_rq_apply((int32_t)(negu ? base - u : base + u), &rq),
                                      lo, hi);
        }
    }
    lut_run8(lut, x, n, out);
    return TH_OK;
}

/* Channel broadcast with many rows: [rows, n] (x) against one row of n (input1's when
 * bcast1), both inputs with tables: channel j's outputs are a function of x alone, so per
 * channel a 256-byte output table (mono_fill_th: its edges by searches on the table words
 * from the call's acc edges, acc_edges) and one strided pass down the column (3.5 per
 * output, against about 11 on chan_rows): from TH_ADD_CHAN_LUT_ROWS
 * (TH_ADD_CHAN_LUT_ROWS_CLAMP) rows, where the table's worst case is paid back. */
__attribute__((noinline)) static void chan_lut(const add_consts *k, int bcast1,
                                               const int8_t *row, const int8_t *x, int32_t n,
                                               int32_t rows, int8_t *out)
{
    uint32_t lutw[64];
    th_nn_mono q;
    /* The acc edges of lo and hi do not depend on the channel: found once over the accs
     * any channel reaches, each table's edges are then searches on its table words
     * (th_nn_mono_fill_th). */
    const th_nn_mono_th th = acc_edges(k, bcast1, -128, 127, &q);
    th_nn_mono_runs st; /* what lutw holds: runs written only where they change */
    th_nn_mono_runs_none(&st);
    for (int32_t j = 0; j < n; j++) {
        mono_of(k, bcast1, row[j], &q);
        mono_fill_th(&q, &th, (int8_t *)lutw, &st);
        lut_column((const int8_t *)lutw, x + j, n, rows, out + j);
    }
}

/* scale_input on DSP without a table: SRDHM(v, m) = floor((v * m + 2^30) / 2^31) (TFLM's
 * nudge-and-truncate is this floor) = SMMLAR(2v, m, 0), exact as |2v| <= 255 << 23 < 2^31;
 * then RDBPOT(y, e) = (y + half + (y < 0 ? neg : 0)) >> e with half = 2^(e-1) and neg = -1
 * for e >= 1 (ties away from zero), half = neg = 0 for e = 0; |y| < 2^30 keeps the sum
 * inside int32. Here 2v = x * f + g (one MLA: f = 2^(left_shift+1), g = offset * f) and
 * half rides in SMMLAR's accumulator; the sign test reads 2v: y < 0 implies v < 0 (m >= 0),
 * and where v < 0 but y == 0 the correction gives (half - 1) >> e = 0 as well. */
typedef struct {
    int32_t f;
    int32_t g;
    int32_t m;
    int32_t half;
    int32_t neg;
    int32_t e;
} dscale;

TH_INLINE dscale dscale_make(int32_t offset, int32_t left_shift, int32_t m, int32_t e)
{
    dscale d;
    d.f = (int32_t)(UINT32_C(1) << (left_shift + 1));
    d.g = (int32_t)((uint32_t)offset * (uint32_t)d.f);
    d.m = m;
    d.e = e;
    d.half = e > 0 ? (int32_t)(UINT32_C(1) << (e - 1)) : 0;
    d.neg = e > 0 ? -1 : 0;
    return d;
}

TH_INLINE uint32_t dscale_apply(int32_t x, const dscale *d)
{
    const int32_t v = (int32_t)((uint32_t)x * (uint32_t)d->f + (uint32_t)d->g);
    return (uint32_t)((th_smmlar(v, d->m, d->half) + ((v >> 31) & d->neg)) >> d->e);
}

/* Rows without tables (small tensors: the lowering gives tables from
 * ADD_TABLE_MIN_ELEMENTS outputs): both rescalings per element as above, the output through
 * th_fast_rq_apply; `rows` rows of n, input i's row r at in_i + r * row_i, steps 0 or 1 in
 * a row; each output written after its inputs are read. */
__attribute__((noinline)) static void direct_rows(const add_consts *k, const int8_t *a,
                                                  int32_t step_a, int32_t row_a,
                                                  const int8_t *b, int32_t step_b,
                                                  int32_t row_b, int32_t n, int32_t rows,
                                                  int8_t *out)
{
    const dscale d1 = dscale_make(k->in1_offset, k->left_shift, k->m1, k->e1);
    const dscale d2 = dscale_make(k->in2_offset, k->left_shift, k->m2, k->e2);
    const th_fast_rq rq = k->rq;
    const int32_t lo = k->act_min, hi = k->act_max, sub = k->subtract;
    for (int32_t r = 0; r < rows; r++) {
        const int8_t *ar = a + r * row_a, *br = b + r * row_b;
        int8_t *o = out + r * n;
        for (int32_t i = 0; i < n; i++) {
            const uint32_t s1 = dscale_apply(ar[i * step_a], &d1);
            const uint32_t s2 = dscale_apply(br[i * step_b], &d2);
            const int32_t raw = (int32_t)(sub ? s1 - s2 : s1 + s2);
            o[i] = (int8_t)th_clamp(th_fast_rq_apply(raw, &rq), lo, hi);
        }
    }
}

/* One row of n outputs, 2 * raw formed directly (th_fast_rq_apply2): mode 1: the other
 * input's doubled rescaled value c2 for the whole row; mode 2: one per column, cr[i];
 * 2 * raw = c -+ 2 * s(x) (sub: c minus). sub, mode and clamp are constants after inlining;
 * each output is written after its inputs are read. (Same-shape rows: lrow, one input
 * linear.) */
TH_INLINE void drow(const dscale *dxp, const int8_t *x, const int32_t *cr, uint32_t c2,
                    int32_t n, int8_t *out, const th_fast_rq *rqp, int32_t lo, int32_t hi,
                    int mode, int sub, int clamp)
{
    const dscale dx = *dxp; /* locals: out's stores cannot alias them */
    const th_fast_rq rq = *rqp;
    for (int32_t i = 0; i < n; i++) {
        const uint32_t c = mode == 1 ? c2 : (uint32_t)cr[i];
        const uint32_t w = dscale_apply(x[i], &dx) << 1;
        out[i] = fast_out2(&rq, (int32_t)(sub ? c - w : c + w), clamp, lo, hi);
    }
}

/* `rows` rows of n; row r of x at x + r * row_x, of out at out + r * n; mode 1: c2[r] per
 * row, mode 2: the row c2 for every row. */
typedef void (*drows_fn)(const add_consts *, const dscale *, const int8_t *, int32_t,
                         const int32_t *, int32_t, int32_t, int8_t *);
#define DROWS(name, mode, sub, clamp)                                                         \
    __attribute__((noinline)) static void name(const add_consts *k, const dscale *dx,        \
                                               const int8_t *x, int32_t row_x,                \
                                               const int32_t *c2, int32_t n, int32_t rows,    \
                                               int8_t *out)                                   \
    {                                                                                         \
        const th_fast_rq rq = k->rq;                                                          \
        const int32_t lo = k->act_min, hi = k->act_max;                                       \
        for (int32_t r = 0; r < rows; r++) {                                                  \
            drow(dx, x + r * row_x, c2, mode == 1 ? (uint32_t)c2[r] : 0u, n, out + r * n,     \
                 &rq, lo, hi, mode, sub, clamp);                                              \
        }                                                                                     \
    }
DROWS(drows_row_add, 1, 0, CLAMP_NONE)
DROWS(drows_row_neg, 1, 1, CLAMP_NONE)
DROWS(drows_row_add_c, 1, 0, CLAMP_BOTH)
DROWS(drows_row_neg_c, 1, 1, CLAMP_BOTH)
DROWS(drows_chan_add, 2, 0, CLAMP_NONE)
DROWS(drows_chan_neg, 2, 1, CLAMP_NONE)
DROWS(drows_chan_add_c, 2, 0, CLAMP_BOTH)
DROWS(drows_chan_neg_c, 2, 1, CLAMP_BOTH)
#undef DROWS

/* A linear input: TFLite's ADD gives the larger input scale the multiplier s / (2 s) = 1/2
 * exactly, quantized as m = 2^30 with no right shift, so nearly every ADD/SUB has one. Then
 * SRDHM((x + offset) << ls, 2^30) = (x + offset) << (ls - 1) exactly for ls >= 1 (the half
 * its rounding adds is truncated on either side of zero; RDBPOT by 0 is the identity), and
 * the doubled rescaled value is x * 2^ls + offset * 2^ls: one MLA, against dscale_apply's
 * five instructions and six constants. */
TH_INLINE int lin_ok(int32_t m, int32_t e, int32_t left_shift)
{
    return m == INT32_C(0x40000000) && e == 0 && left_shift >= 1;
}

/* One row of n outputs, x linear: 2 * raw = x * f + c with f = +-2^ls and the rest in c,
 * folded by the caller (direct_fast). mode 0: c = g +- 2 * s(y) (y advances, dscale dy; minus
 * when neg); mode 1: c = c2 for the whole row; mode 2: c = cr[i]. mode, neg and clamp are
 * constants after inlining; each output is written after its inputs are read. */
TH_INLINE void lrow(int32_t f, int32_t g, const int8_t *x, const dscale *dyp, const int8_t *y,
                    const int32_t *cr, uint32_t c2, int32_t n, int8_t *out,
                    const th_fast_rq *rqp, int32_t lo, int32_t hi, int mode, int neg,
                    int clamp)
{
    const th_fast_rq rq = *rqp; /* locals: out's stores cannot alias them */
    const dscale dy = *dyp;
    for (int32_t i = 0; i < n; i++) {
        uint32_t c;
        if (mode == 0) {
            const uint32_t w = dscale_apply(y[i], &dy) << 1;
            c = neg ? (uint32_t)g - w : (uint32_t)g + w;
        } else {
            c = mode == 1 ? c2 : (uint32_t)cr[i];
        }
        out[i] = fast_out2(&rq, (int32_t)((uint32_t)x[i] * (uint32_t)f + c), clamp, lo, hi);
    }
}

/* `rows` rows of n; row r of x at x + r * row_x, of y (mode 0) at y + r * row_y, of out at
 * out + r * n; mode 1: c2[r] per row, mode 2: the row c2 for every row. */
typedef void (*lrows_fn)(const add_consts *, int32_t, int32_t, const int8_t *, int32_t,
                         const dscale *, const int8_t *, int32_t, const int32_t *, int32_t,
                         int32_t, int8_t *);
#define LROWS(name, mode, neg, clamp)                                                         \
    __attribute__((noinline)) static void name(                                               \
        const add_consts *k, int32_t f, int32_t g, const int8_t *x, int32_t row_x,            \
        const dscale *dy, const int8_t *y, int32_t row_y, const int32_t *c2, int32_t n,       \
        int32_t rows, int8_t *out)                                                            \
    {                                                                                         \
        const th_fast_rq rq = k->rq;                                                          \
        const int32_t lo = k->act_min, hi = k->act_max;                                       \
        for (int32_t r = 0; r < rows; r++) {                                                  \
            lrow(f, g, x + r * row_x, dy, y + r * row_y, c2,                                  \
                 mode == 1 ? (uint32_t)c2[r] : 0u, n, out + r * n, &rq, lo, hi, mode, neg,    \
                 clamp);                                                                      \
        }                                                                                     \
    }
LROWS(lrows_same_add, 0, 0, CLAMP_NONE)
LROWS(lrows_same_neg, 0, 1, CLAMP_NONE)
LROWS(lrows_same_add_c, 0, 0, CLAMP_BOTH)
LROWS(lrows_same_neg_c, 0, 1, CLAMP_BOTH)
LROWS(lrows_row, 1, 0, CLAMP_NONE)
LROWS(lrows_row_c, 1, 0, CLAMP_BOTH)
LROWS(lrows_chan, 2, 0, CLAMP_NONE)
LROWS(lrows_chan_c, 2, 0, CLAMP_BOTH)
#undef LROWS

/* Rows (and row constants) doubled per block: a stack row. */
#define TH_ADD_DROWS_MAX 32

/* The direct path specialized (see dscale) for a rank-2 walk of `rows` rows of n: input i's
 * row r at in_i + r * row_i, steps step_i (0 or 1) in a row. 0 (nothing written) unless one
 * input advances along and across the rows (the other may broadcast either way), and when
 * both do, one of them is linear (lin_ok). */
__attribute__((noinline)) static int direct_fast(const add_consts *k, const int8_t *a,
                                                 int32_t step_a, int32_t row_a,
                                                 const int8_t *b, int32_t step_b,
                                                 int32_t row_b, int32_t n, int32_t rows,
                                                 int8_t *out)
{
    const dscale d1 = dscale_make(k->in1_offset, k->left_shift, k->m1, k->e1);
    const dscale d2 = dscale_make(k->in2_offset, k->left_shift, k->m2, k->e2);
    const int clamp = k->act_min > -128 || k->act_max < 127;
    const int sub = k->subtract;
    const int rep_a = rows > 1 && row_a == 0, rep_b = rows > 1 && row_b == 0; /* channel */
    const int32_t lin_f = INT32_C(1) << k->left_shift; /* lin_ok's 2^ls (<= 2^22) */
    if (step_a == 1 && step_b == 1 && !rep_a && !rep_b) {
        const int l1 = lin_ok(k->m1, k->e1, k->left_shift);
        if ((l1 || lin_ok(k->m2, k->e2, k->left_shift)) && TH_NN_PATH(ADD_DIRECT_LIN)) {
            /* x the linear input (input1 if both are); SUB with input2 linear:
             * 2 * raw = 2 s(y) - (x * f + g) = x * (-f) + (-g) + 2 s(y) */
            const int32_t g = (int32_t)((uint32_t)(l1 ? k->in1_offset : k->in2_offset) *
                                        (uint32_t)lin_f);
            const int flip = !l1 && sub;
            const lrows_fn lf = clamp ? (l1 && sub ? lrows_same_neg_c : lrows_same_add_c)
                                      : (l1 && sub ? lrows_same_neg : lrows_same_add);
            lf(k, flip ? -lin_f : lin_f, (int32_t)(flip ? 0u - (uint32_t)g : (uint32_t)g),
               l1 ? a : b, l1 ? row_a : row_b, l1 ? &d2 : &d1, l1 ? b : a, l1 ? row_b : row_a,
               NULL, n, rows, out);
            return 1;
        }
        return 0; /* neither input linear (not TFLite's parameters): direct_rows */
    }
    /* one input (the broadcast one, src) gives constants: per row (step 0) or per column
     * (row step 0); x advances. 2 * raw = c + 2 s(x), or c - 2 s(x) when input1 is the
     * constant side of a SUB; input2's constants are negated for SUB. */
    const int bcast1 = step_a == 0 || rep_a;
    if (bcast1 ? step_b != 1 || rep_b : step_a != 1 || rep_a) {
        return 0; /* neither advances all the way: direct_rows */
    }
    const int chan = bcast1 ? step_a == 1 : step_b == 1;
    const int neg = bcast1 && sub;
    const int negate = !bcast1 && sub;
    const dscale *ds = bcast1 ? &d1 : &d2;
    const dscale *dx = bcast1 ? &d2 : &d1;
    const int8_t *src = bcast1 ? a : b;
    const int8_t *x = bcast1 ? b : a;
    const int32_t row_src = bcast1 ? row_a : row_b, row_x = bcast1 ? row_b : row_a;
    const drows_fn f = chan ? (clamp ? (neg ? drows_chan_neg_c : drows_chan_add_c)
                                     : (neg ? drows_chan_neg : drows_chan_add))
                            : (clamp ? (neg ? drows_row_neg_c : drows_row_add_c)
                                     : (neg ? drows_row_neg : drows_row_add));
    /* x linear: 2 * raw = c -+ (x * 2^ls + gx) = x * xf + (c -+ gx), gx folded into the
     * constants (lin_ok) */
    const int xlin = lin_ok(bcast1 ? k->m2 : k->m1, bcast1 ? k->e2 : k->e1, k->left_shift) &&
                     TH_NN_PATH(ADD_DIRECT_LIN);
    const uint32_t gx = xlin ? (uint32_t)(bcast1 ? k->in2_offset : k->in1_offset) *
                                   (uint32_t)lin_f
                             : 0u;
    const uint32_t cadd = neg ? 0u - gx : gx;
    const int32_t xf = neg ? -lin_f : lin_f;
    const lrows_fn lf = !xlin ? NULL
                        : chan ? (clamp ? lrows_chan_c : lrows_chan)
                               : (clamp ? lrows_row_c : lrows_row);
    int32_t c2[TH_ADD_DROWS_MAX];
    if (chan) {
        for (int32_t j0 = 0; j0 < n; j0 += TH_ADD_DROWS_MAX) {
            const int32_t len = n - j0 < TH_ADD_DROWS_MAX ? n - j0 : TH_ADD_DROWS_MAX;
            for (int32_t j = 0; j < len; j++) {
                const uint32_t v = dscale_apply(src[j0 + j], ds) << 1;
                c2[j] = (int32_t)((negate ? 0u - v : v) + cadd);
            }
            if (len == n) { /* every row in one call */
                if (lf != NULL) {
                    lf(k, xf, 0, x, row_x, dx, x, 0, c2, n, rows, out);
                } else {
                    f(k, dx, x, row_x, c2, n, rows, out);
                }
                break;
            }
            for (int32_t r = 0; r < rows; r++) { /* column blocks: one call per row */
                if (lf != NULL) {
                    lf(k, xf, 0, x + r * row_x + j0, 0, dx, x, 0, c2, len, 1, out + r * n + j0);
                } else {
                    f(k, dx, x + r * row_x + j0, 0, c2, len, 1, out + r * n + j0);
                }
            }
        }
        return 1;
    }
    for (int32_t r0 = 0; r0 < rows; r0 += TH_ADD_DROWS_MAX) {
        const int32_t m = rows - r0 < TH_ADD_DROWS_MAX ? rows - r0 : TH_ADD_DROWS_MAX;
        for (int32_t j = 0; j < m; j++) {
            const uint32_t v = dscale_apply(src[(r0 + j) * row_src], ds) << 1;
            c2[j] = (int32_t)((negate ? 0u - v : v) + cadd);
        }
        if (lf != NULL) {
            lf(k, xf, 0, x + r0 * row_x, row_x, dx, x, 0, c2, n, m, out + r0 * n);
        } else {
            f(k, dx, x + r0 * row_x, row_x, c2, n, m, out + r0 * n);
        }
    }
    return 1;
}

#endif

#if TH_NN_HAS_DSP
/* ---- the separable form (th_add_prep sep, ARCHITECTURE.md §4.4b) ------------------------
 *
 * With the sign term idle, TFLM's output rescale of S = s1 +- s2 is one floor,
 * out - zo = floor((S * mo + K) / 2^N) (N = 31 + eo, K = 2^30 + 2^(30 + eo)), so the output
 * of a pair is floor(A[x] + B[y]) with A, B per value: the host picks int32 tables T (input1)
 * and C (input2, zo and -L * 2^16 folded in) with u = USAT8((T[x] + C[y]) >> 16) and
 * out = min(u, H) + L right for all 65536 pairs (arith/elementwise.py add_sep, exhaustive
 * against the reference arithmetic, whatever the sign term does): no SMMLAR, no shift.
 * (L, H) = (-128, 255) for sep_mode 0 (no clamp, or one that never bites), (act_min, 255)
 * for 1, (act_min, act_max - act_min) for 2. Four outputs go as one word: the sums' high
 * halfwords paired (PKHTB: outputs 0 and 2, 1 and 3), USAT16 #8 on each pair, ORR of the
 * second shifted by 8 (bytes 0..3 in order), then L added per byte (UADD8), after H's
 * UQADD8 for mode 2 (th_nn_store4u's pair): 7 instructions (8 for mode 2) for the four
 * results against 4 saturations, 3 BFI and a clamp. Modes 0 and 1 share their code. */
enum { SEP_LO, SEP_BOTH };
#define TH_ADD_SEP_F 16

/* One output's u from the table sum s (the run's last n % 4). */
TH_INLINE int32_t sep_v(uint32_t s)
{
    return th_nn_usat8((int32_t)s >> TH_ADD_SEP_F);
}

/* The output of u: one at a time (packing the last n % 4 costs more in branches than it
 * saves); mode 2 through sep_store4's two byte operations on the one byte (k4, c4 as
 * there), which need no compare nor the bounds in registers. */
TH_INLINE int8_t sep_out(int32_t u, int mode, int32_t lo, uint32_t k4, uint32_t c4)
{
    return mode == SEP_LO ? (int8_t)(u + lo) : (int8_t)th_nn_both4u((uint32_t)u, k4, c4);
}

/* Four table sums' outputs stored as one word at out; k4 / c4: splat(L) for SEP_LO,
 * th_nn_both_k4 / th_nn_both_c4 for SEP_BOTH. */
TH_INLINE void sep_store4(int8_t *out, uint32_t s0, uint32_t s1, uint32_t s2, uint32_t s3,
                          int mode, uint32_t k4, uint32_t c4)
{
    const uint32_t a = th_nn_usat16_8((uint32_t)th_pkhtb((int32_t)s0, (int32_t)s2));
    const uint32_t b = th_nn_usat16_8((uint32_t)th_pkhtb((int32_t)s1, (int32_t)s3));
    const uint32_t w = a | (b << 8);
    th_write_s32(out, (int32_t)(mode == SEP_BOTH ? th_nn_both4u(w, k4, c4) : th_nn_uadd8(w, k4)));
}

/* `rows` runs of n outputs, contiguous in x and out: run r's other input value src[r]
 * gives the constant c = tc[.] held in a register, x's values go through tx (spatial
 * broadcast; a scalar: rows 1). Eight outputs a pass, then four, then the rest; each group
 * read before it is written (out may be x). The run's pieces come from n each time (kept
 * per call they spilled: about 8 instructions a run more). */
TH_INLINE void sep_rows_t(const int32_t *tc, const uint8_t *src, const int32_t *tx,
                          const uint8_t *x, int32_t n, int32_t rows, int8_t *out, int32_t lo,
                          int32_t hi, int mode, int tails)
{
    /* tails 0 or 4: n % 8 known (n % 4 == 0), no tests of n's pieces a run: about 12
     * instructions a run fewer (a pixel of 16: 109 -> 97); 16: n is 16, the run one pass */
    if (tails == 16) {
        n = 16;
    } else if (tails >= 0) {
        n = (n & ~7) | tails;
    }
    const uint32_t k4 = mode == SEP_BOTH ? th_nn_both_k4(lo, hi) : th_nn_splat4(lo);
    const uint32_t c4 = th_nn_both_c4(hi);
    const uint8_t *const send = src + rows;
    do {
        const uint32_t c = (uint32_t)tc[*src++];
#define SR_S(j) ((uint32_t)tx[x[j]] + c)
#define SR_V(j) sep_v(SR_S(j))
#define SR_4(o, j) sep_store4(o, SR_S(j), SR_S(j + 1), SR_S(j + 2), SR_S(j + 3), mode, k4, c4)
        if (tails == 16) { /* no pass loop: a pixel of 16 97 -> ~82 */
            SR_4(out, 0);
            SR_4(out + 4, 4);
            SR_4(out + 8, 8);
            SR_4(out + 12, 12);
            x += 16;
            out += 16;
        } else {
            for (const uint8_t *const e8 = x + (n & ~7); x != e8; x += 8, out += 8) {
                SR_4(out, 0);
                SR_4(out + 4, 4);
            }
        }
        if (n & 4) {
            SR_4(out, 0);
            x += 4;
            out += 4;
        }
#define SR_O(j) sep_out(SR_V(j), mode, lo, k4, c4)
        if (tails < 0) {
            TH_NN_EW_TAIL3(n & 3, x, out, SR_O);
        }
#undef SR_O
#undef SR_4
#undef SR_V
#undef SR_S
    } while (src != send);
}

/* n outputs of two advancing inputs (same shape): out = F(ta[a] + tb[b]). */
TH_INLINE void sep_same_t(const int32_t *ta, const uint8_t *a, const int32_t *tb,
                          const uint8_t *b, int32_t n, int8_t *out, int32_t lo, int32_t hi,
                          int mode)
{
    const uint32_t k4 = mode == SEP_BOTH ? th_nn_both_k4(lo, hi) : th_nn_splat4(lo);
    const uint32_t c4 = th_nn_both_c4(hi);
    const int32_t n8 = n & ~7, n4 = n & 4, nt = n & 3;
#define SS_S(j) ((uint32_t)ta[a[j]] + (uint32_t)tb[b[j]])
#define SS_V(j) sep_v(SS_S(j))
#define SS_4(o, j) sep_store4(o, SS_S(j), SS_S(j + 1), SS_S(j + 2), SS_S(j + 3), mode, k4, c4)
    for (const uint8_t *const e8 = a + n8; a != e8; a += 8, b += 8, out += 8) {
        SS_4(out, 0);
        SS_4(out + 4, 4);
    }
    if (n4) {
        SS_4(out, 0);
        a += 4;
        b += 4;
        out += 4;
    }
    if (nt & 2) {
        const int32_t v0 = SS_V(0);
        out[1] = sep_out(SS_V(1), mode, lo, k4, c4);
        out[0] = sep_out(v0, mode, lo, k4, c4);
        a += 2;
        b += 2;
        out += 2;
    }
    if (nt & 1) {
        out[0] = sep_out(SS_V(0), mode, lo, k4, c4);
    }
#undef SS_4
#undef SS_V
#undef SS_S
}

/* Channel broadcast: `rows` rows of n outputs, x's row r at x + r * row_x (out alike), each
 * output x's value through tx plus the column's constant cr[j] (the broadcast input's table
 * word, built once per call): a table load fewer than sep_same_t. */
TH_INLINE void sep_chan_t(const int32_t *tx, const uint8_t *x, int32_t row_x,
                          const int32_t *cr, int32_t n, int32_t rows, int8_t *out, int32_t lo,
                          int32_t hi, int mode)
{
    const uint32_t k4 = mode == SEP_BOTH ? th_nn_both_k4(lo, hi) : th_nn_splat4(lo);
    const uint32_t c4 = th_nn_both_c4(hi);
    const int32_t n8 = n & ~7, n4 = n & 4, nt = n & 3;
    const int32_t skip = row_x - n;
#define SC_S(j) ((uint32_t)tx[x[j]] + (uint32_t)c[j])
#define SC_V(j) sep_v(SC_S(j))
#define SC_4(o, j) sep_store4(o, SC_S(j), SC_S(j + 1), SC_S(j + 2), SC_S(j + 3), mode, k4, c4)
    for (int32_t r = rows; r > 0; r--) {
        const int32_t *c = cr;
        for (const uint8_t *const e8 = x + n8; x != e8; x += 8, c += 8, out += 8) {
            SC_4(out, 0);
            SC_4(out + 4, 4);
        }
        if (n4) {
            SC_4(out, 0);
            x += 4;
            c += 4;
            out += 4;
        }
        if (nt & 2) {
            const int32_t v0 = SC_V(0);
            out[1] = sep_out(SC_V(1), mode, lo, k4, c4);
            out[0] = sep_out(v0, mode, lo, k4, c4);
            x += 2;
            c += 2;
            out += 2;
        }
        if (nt & 1) {
            *out++ = sep_out(SC_V(0), mode, lo, k4, c4);
            x++;
        }
        x += skip;
        out += skip;
    }
#undef SC_4
#undef SC_V
#undef SC_S
}

typedef void (*sep_chan_fn)(const int32_t *, const uint8_t *, int32_t, const int32_t *,
                            int32_t, int32_t, int8_t *, int32_t, int32_t);
#define SEP_CHAN(name, mode)                                                                  \
    __attribute__((noinline)) static void name(const int32_t *tx, const uint8_t *x,          \
                                               int32_t row_x, const int32_t *cr, int32_t n,   \
                                               int32_t rows, int8_t *out, int32_t lo,         \
                                               int32_t hi)                                    \
    {                                                                                         \
        sep_chan_t(tx, x, row_x, cr, n, rows, out, lo, hi, mode);                             \
    }
SEP_CHAN(sep_chan_lo, SEP_LO)
SEP_CHAN(sep_chan_both, SEP_BOTH)
#undef SEP_CHAN

/* The channel broadcast with rows of n <= TH_ADD_CHAN_MAX as one flat run of `total`
 * outputs (x and out contiguous): output i adds the column constant cr[i mod len], cr the
 * row's table words repeated to len = (TH_ADD_CHAN_MAX / n) * n plus six wrap words, so a
 * group of four may straddle two rows and no row has a tail of its own (C 38: two single
 * outputs and a re-entry a row before). On the M4 the groups run in assembly: LDM of the four
 * constants, per output LDRB, LDR and ADD, sep_store4's seven (eight for mode 2) with
 * post-incremented pointers: 5.5 (5.75) instructions an output, the wrap of cr once per len
 * outputs (SUB, two loads of the words kept after the wrap words, CMP, branch). Whatever is
 * left (fewer than len + 3 outputs) runs here in C, groups then single outputs, on wrap
 * words enough for it never to wrap. */
#if TH_NN_DSP_NATIVE
/* sep_chan_flat's groups of four on the M4 while c < ce, then `after` (SEP_FLAT_WRAP: the
 * wrap of c by the word at ce[6] and the next pass while out <= the word at ce[7]; "": none,
 * the rest's whole groups on words that never wrap). */
#define SEP_FLAT_WRAP                                                                         \
    "ldr r8, [%[ce], #24]\n\t"                                                                \
    "sub %[c], %[c], r8\n\t"                                                                  \
    "ldr r8, [%[ce], #28]\n\t"                                                                \
    "cmp %[o], r8\n\t"                                                                        \
    "bls 1b"
#define SEP_FLAT_ASM(after, clamp)                                                            \
    __asm__ volatile("1:\n\t"                                                                 \
                     "ldmia %[c]!, {r4, r5, r6, lr}\n\t"                                      \
                     "ldrb r8, [%[x], #1]\n\tldr r8, [%[t], r8, lsl #2]\n\tadd r5, r5, r8\n\t" \
                     "ldrb r8, [%[x], #2]\n\tldr r8, [%[t], r8, lsl #2]\n\tadd r6, r6, r8\n\t" \
                     "ldrb r8, [%[x], #3]\n\tldr r8, [%[t], r8, lsl #2]\n\tadd lr, lr, r8\n\t" \
                     "ldrb r8, [%[x]], #4\n\tldr r8, [%[t], r8, lsl #2]\n\tadd r4, r4, r8\n\t" \
                     "pkhtb r4, r6, r4, asr #16\n\t"                                          \
                     "pkhtb r5, lr, r5, asr #16\n\t"                                          \
                     "usat16 r4, #8, r4\n\t"                                                  \
                     "usat16 r5, #8, r5\n\t"                                                  \
                     "orr r4, r4, r5, lsl #8\n\t" clamp "str r4, [%[o]], #4\n\t"              \
                     "cmp %[c], %[ce]\n\t"                                                    \
                     "blo 1b\n\t" after                                                       \
                     : [c] "+r"(c), [x] "+r"(x), [o] "+r"(out)                                \
                     : [t] "r"(tx), [ce] "r"(cend), [k] "r"(k4), [h] "r"(c4)                 \
                     : "r4", "r5", "r6", "r8", "lr", "cc", "memory")
#endif

TH_INLINE void sep_chan_flat(const int32_t *tc, const uint8_t *u, const int32_t *tx,
                             const uint8_t *x, int32_t n, int32_t total, int8_t *out, int32_t lo,
                             int32_t hi, int mode)
{
    int32_t cr[TH_ADD_CHAN_MAX + 8];
    /* whole rows, no more than the call has (a short call's set-up stays short) */
    const int32_t reps = TH_ADD_CHAN_MAX / n, len = (reps < total / n ? reps : total / n) * n;
    const uint32_t k4 = mode == SEP_BOTH ? th_nn_both_k4(lo, hi) : th_nn_splat4(lo);
    const uint32_t c4 = th_nn_both_c4(hi);
    for (int32_t j = 0; j < n; j++) {
        cr[j] = tc[u[j]];
    }
    /* the rest below reads below cr[len + 5] after the assembly, else below cr[total] */
    const int32_t words = total >= len + 3 ? len + 6 : total;
    for (int32_t j = n; j < words; j++) {
        cr[j] = cr[j - n];
    }
    const int32_t *c = cr;
    int8_t *const oend = out + total;
    if (total >= len + 3) {
        /* each pass of the outer loop starts at a phase of at most 3 and writes at most
         * len + 3 outputs: it runs while that many are left */
        int8_t *const osafe = oend - (len + 3);
#if TH_NN_DSP_NATIVE
        const int32_t *const cend = cr + len;
        cr[len + 6] = len * 4;
        cr[len + 7] = (int32_t)(uintptr_t)osafe;
        if (mode == SEP_BOTH) {
            SEP_FLAT_ASM(SEP_FLAT_WRAP, "uqadd8 r4, r4, %[k]\n\tuadd8 r4, r4, %[h]\n\t");
        } else {
            SEP_FLAT_ASM(SEP_FLAT_WRAP, "uadd8 r4, r4, %[k]\n\t");
        }
#else
        do {
            do {
                sep_store4(out, (uint32_t)tx[x[0]] + (uint32_t)c[0],
                           (uint32_t)tx[x[1]] + (uint32_t)c[1],
                           (uint32_t)tx[x[2]] + (uint32_t)c[2],
                           (uint32_t)tx[x[3]] + (uint32_t)c[3], mode, k4, c4);
                x += 4;
                out += 4;
                c += 4;
            } while (c < cr + len);
            c -= len;
        } while (out <= osafe);
#endif
    }
    /* the rest: fewer than len + 3 outputs from a phase under 4, inside cr's len + 6 words */
#if TH_NN_DSP_NATIVE
    if (oend - out >= 4) { /* its whole groups in assembly too: 23 instructions a group, 33 in C */
        const int32_t *const cend = c + ((oend - out) & ~3);
        if (mode == SEP_BOTH) {
            SEP_FLAT_ASM("", "uqadd8 r4, r4, %[k]\n\tuadd8 r4, r4, %[h]\n\t");
        } else {
            SEP_FLAT_ASM("", "uadd8 r4, r4, %[k]\n\t");
        }
    }
#endif
    for (; oend - out >= 4; x += 4, out += 4, c += 4) {
        sep_store4(out, (uint32_t)tx[x[0]] + (uint32_t)c[0], (uint32_t)tx[x[1]] + (uint32_t)c[1],
                   (uint32_t)tx[x[2]] + (uint32_t)c[2], (uint32_t)tx[x[3]] + (uint32_t)c[3], mode,
                   k4, c4);
    }
    for (; out != oend; x++, out++, c++) {
        *out = sep_out(sep_v((uint32_t)tx[x[0]] + (uint32_t)c[0]), mode, lo, k4, c4);
    }
}
#if TH_NN_DSP_NATIVE
#undef SEP_FLAT_ASM
#undef SEP_FLAT_WRAP
#endif

/* The channel broadcast [rows, n] against the row `row` (input1's when bcast1): rows of at
 * most TH_ADD_CHAN_MAX as one flat run (sep_chan_flat), longer ones through sep_chan_t in
 * column blocks of TH_ADD_CHAN_MAX, the block's table words in a stack row. Out of
 * line (sep_chan_lo / sep_chan_both): its stack row stays off th_add_s8_prepared's frame
 * (every path's), and the mode is a constant in the C rest of the flat run (a group there
 * 25 instructions, not 40). */
TH_INLINE void sep_chan(sep_chan_fn f, const int32_t *tc, const int8_t *row, const int32_t *tx,
                        const uint8_t *x, int32_t n, int32_t rows, int8_t *out, int32_t lo,
                        int32_t hi, int mode)
{
    const uint8_t *u = (const uint8_t *)row;
    if (n <= TH_ADD_CHAN_MAX) {
        sep_chan_flat(tc, u, tx, x, n, n * rows, out, lo, hi, mode);
        return;
    }
    int32_t cr[TH_ADD_CHAN_MAX];
    for (int32_t j0 = 0; j0 < n; j0 += TH_ADD_CHAN_MAX) {
        const int32_t len = n - j0 < TH_ADD_CHAN_MAX ? n - j0 : TH_ADD_CHAN_MAX;
        for (int32_t j = 0; j < len; j++) {
            cr[j] = tc[u[j0 + j]];
        }
        f(tx, x + j0, n, cr, len, rows, out + j0, lo, hi);
    }
}

typedef void (*sep_chan_entry)(const int32_t *, const int8_t *, const int32_t *,
                               const uint8_t *, int32_t, int32_t, int8_t *, int32_t, int32_t);
#define SEP_CHAN_ENTRY(name, f, mode)                                                         \
    __attribute__((noinline)) static void name(const int32_t *tc, const int8_t *row,         \
                                               const int32_t *tx, const uint8_t *x,           \
                                               int32_t n, int32_t rows, int8_t *out,          \
                                               int32_t lo, int32_t hi)                        \
    {                                                                                         \
        sep_chan(f, tc, row, tx, x, n, rows, out, lo, hi, mode);                              \
    }
SEP_CHAN_ENTRY(sep_chan_run_lo, sep_chan_lo, SEP_LO)
SEP_CHAN_ENTRY(sep_chan_run_both, sep_chan_both, SEP_BOTH)
#undef SEP_CHAN_ENTRY

typedef void (*sep_rows_fn)(const int32_t *, const uint8_t *, const int32_t *, const uint8_t *,
                            int32_t, int32_t, int8_t *, int32_t, int32_t);
typedef void (*sep_same_fn)(const int32_t *, const uint8_t *, const int32_t *, const uint8_t *,
                            int32_t, int8_t *, int32_t, int32_t);
#define SEP_FNS(rows_name, same_name, mode)                                                   \
    __attribute__((noinline)) static void rows_name(                                          \
        const int32_t *tc, const uint8_t *src, const int32_t *tx, const uint8_t *x,           \
        int32_t n, int32_t rows, int8_t *out, int32_t lo, int32_t hi)                         \
    {                                                                                         \
        sep_rows_t(tc, src, tx, x, n, rows, out, lo, hi, mode, -1);                           \
    }                                                                                         \
    __attribute__((noinline)) static void same_name(const int32_t *ta, const uint8_t *a,     \
                                                    const int32_t *tb, const uint8_t *b,      \
                                                    int32_t n, int8_t *out, int32_t lo,       \
                                                    int32_t hi)                               \
    {                                                                                         \
        sep_same_t(ta, a, tb, b, n, out, lo, hi, mode);                                       \
    }
SEP_FNS(sep_rows_lo, sep_same_lo, SEP_LO)
SEP_FNS(sep_rows_both, sep_same_both, SEP_BOTH)
#undef SEP_FNS

/* sep_rows_t for runs of n % 8 == 0 (tails 0), n % 8 == 4 (tails 4) and n == 16 (tails 16) */
#define SEP_ROWS4(name, mode, tails)                                                          \
    __attribute__((noinline)) static void name(                                               \
        const int32_t *tc, const uint8_t *src, const int32_t *tx, const uint8_t *x,           \
        int32_t n, int32_t rows, int8_t *out, int32_t lo, int32_t hi)                         \
    {                                                                                         \
        sep_rows_t(tc, src, tx, x, n, rows, out, lo, hi, mode, tails);                        \
    }
SEP_ROWS4(sep_rows8_lo, SEP_LO, 0)
SEP_ROWS4(sep_rows84_lo, SEP_LO, 4)
SEP_ROWS4(sep_rows8_both, SEP_BOTH, 0)
SEP_ROWS4(sep_rows84_both, SEP_BOTH, 4)
SEP_ROWS4(sep_rows16_lo, SEP_LO, 16)
SEP_ROWS4(sep_rows16_both, SEP_BOTH, 16)
#undef SEP_ROWS4

/* One group of four outputs whose constants may differ (a group crossing a pixel's end). */
TH_INLINE void sep_mix4(int8_t *out, const int32_t *tx, const uint8_t *x, uint32_t c0,
                        uint32_t c1, uint32_t c2, uint32_t c3, int mode, uint32_t k4,
                        uint32_t c4)
{
    sep_store4(out, (uint32_t)tx[x[0]] + c0, (uint32_t)tx[x[1]] + c1, (uint32_t)tx[x[2]] + c2,
               (uint32_t)tx[x[3]] + c3, mode, k4, c4);
}

/* Spatial runs of n = 4q + m outputs (m = n % 4 of 1-3; q >= 1 where m is 1) four pixels a
 * block: the block's 4n outputs are n whole groups, so no pixel has a tail of single
 * outputs (sep_rows_t's: about 6 instructions each, 8 for mode 2, a pixel of 7 about 8.4 an
 * output). The group crossing a pixel's end takes its first s outputs' constant from that
 * pixel, the rest from the next: s = 1, 2, 3 at the ends of pixels a, b, c for m = 1; 2, -, 2
 * for m = 2; 3, 2, 1 for m = 3, the whole groups between. m is a constant after inlining;
 * the last rows % 4 pixels go through `rest` (sep_rows_t). */
TH_INLINE void sep_mix_t(const int32_t *tc, const uint8_t *src, const int32_t *tx,
                         const uint8_t *x, int32_t n, int32_t rows, int8_t *out, int32_t lo,
                         int32_t hi, int mode, int m, int qc, sep_rows_fn rest)
{
    const uint32_t k4 = mode == SEP_BOTH ? th_nn_both_k4(lo, hi) : th_nn_splat4(lo);
    const uint32_t c4 = th_nn_both_c4(hi);
    /* qc >= 0: n's q as a constant (pixels of 2-3, 5-7, 9-11; qc <= 2), the block
     * straight-line code: the runtime count's loops cost about 10 instructions each, 40 a
     * block of 28 outputs (n 7), 60 of 40 (n 10) */
    const int32_t q = qc >= 0 ? qc : n >> 2;
    const uint8_t *const send = src + (rows & ~3);
#define MX_ONE(c)                                                                             \
    do {                                                                                      \
        sep_mix4(out, tx, x, c, c, c, c, mode, k4, c4);                                       \
        x += 4;                                                                               \
        out += 4;                                                                             \
    } while (0)
    /* a constant count (qc 0-2) unrolled by hand: gcc -O2 keeps a loop of two */
#define MX_FULL(cnt, c)                                                                       \
    if (qc >= 0) {                                                                            \
        if ((cnt) >= 1) {                                                                     \
            MX_ONE(c);                                                                        \
        }                                                                                     \
        if ((cnt) >= 2) {                                                                     \
            MX_ONE(c);                                                                        \
        }                                                                                     \
    } else {                                                                                  \
        for (int32_t g = (cnt); g > 0; g--) {                                                 \
            MX_ONE(c);                                                                        \
        }                                                                                     \
    }
#define MX_CROSS(s, a, b)                                                                     \
    do {                                                                                      \
        sep_mix4(out, tx, x, a, (s) > 1 ? a : b, (s) > 2 ? a : b, b, mode, k4, c4);           \
        x += 4;                                                                               \
        out += 4;                                                                             \
    } while (0)
    for (; src != send; src += 4) {
        const uint32_t ca = (uint32_t)tc[src[0]], cb = (uint32_t)tc[src[1]];
        const uint32_t cc = (uint32_t)tc[src[2]], cd = (uint32_t)tc[src[3]];
        if (m == 1) {
            MX_FULL(q, ca);
            MX_CROSS(1, ca, cb);
            MX_FULL(q - 1, cb);
            MX_CROSS(2, cb, cc);
            MX_FULL(q - 1, cc);
            MX_CROSS(3, cc, cd);
            MX_FULL(q, cd);
        } else if (m == 2) {
            MX_FULL(q, ca);
            MX_CROSS(2, ca, cb);
            MX_FULL(q, cb);
            MX_FULL(q, cc);
            MX_CROSS(2, cc, cd);
            MX_FULL(q, cd);
        } else {
            MX_FULL(q, ca);
            MX_CROSS(3, ca, cb);
            MX_FULL(q, cb);
            MX_CROSS(2, cb, cc);
            MX_FULL(q, cc);
            MX_CROSS(1, cc, cd);
            MX_FULL(q, cd);
        }
    }
#undef MX_CROSS
#undef MX_FULL
#undef MX_ONE
    if (rows & 3) {
        rest(tc, send, tx, x, n, rows & 3, out, lo, hi);
    }
}

#define SEP_MIX(name, mode, m, qc, rest)                                                      \
    __attribute__((noinline)) static void name(                                               \
        const int32_t *tc, const uint8_t *src, const int32_t *tx, const uint8_t *x,           \
        int32_t n, int32_t rows, int8_t *out, int32_t lo, int32_t hi)                         \
    {                                                                                         \
        sep_mix_t(tc, src, tx, x, n, rows, out, lo, hi, mode, m, qc, rest);                   \
    }
SEP_MIX(sep_mix1_lo, SEP_LO, 1, -1, sep_rows_lo)
SEP_MIX(sep_mix2_lo, SEP_LO, 2, -1, sep_rows_lo)
SEP_MIX(sep_mix3_lo, SEP_LO, 3, -1, sep_rows_lo)
SEP_MIX(sep_mix1_both, SEP_BOTH, 1, -1, sep_rows_both)
SEP_MIX(sep_mix2_both, SEP_BOTH, 2, -1, sep_rows_both)
SEP_MIX(sep_mix3_both, SEP_BOTH, 3, -1, sep_rows_both)
/* pixels of 2 and 3 (q 0), 5-7 (q 1) */
SEP_MIX(sep_mix_n2_lo, SEP_LO, 2, 0, sep_rows_lo)
SEP_MIX(sep_mix_n3_lo, SEP_LO, 3, 0, sep_rows_lo)
SEP_MIX(sep_mix_n5_lo, SEP_LO, 1, 1, sep_rows_lo)
SEP_MIX(sep_mix_n6_lo, SEP_LO, 2, 1, sep_rows_lo)
SEP_MIX(sep_mix_n7_lo, SEP_LO, 3, 1, sep_rows_lo)
SEP_MIX(sep_mix_n2_both, SEP_BOTH, 2, 0, sep_rows_both)
SEP_MIX(sep_mix_n3_both, SEP_BOTH, 3, 0, sep_rows_both)
SEP_MIX(sep_mix_n5_both, SEP_BOTH, 1, 1, sep_rows_both)
SEP_MIX(sep_mix_n6_both, SEP_BOTH, 2, 1, sep_rows_both)
SEP_MIX(sep_mix_n7_both, SEP_BOTH, 3, 1, sep_rows_both)
/* ... 9-11 (q 2) */
SEP_MIX(sep_mix_n9_lo, SEP_LO, 1, 2, sep_rows_lo)
SEP_MIX(sep_mix_n10_lo, SEP_LO, 2, 2, sep_rows_lo)
SEP_MIX(sep_mix_n11_lo, SEP_LO, 3, 2, sep_rows_lo)
SEP_MIX(sep_mix_n9_both, SEP_BOTH, 1, 2, sep_rows_both)
SEP_MIX(sep_mix_n10_both, SEP_BOTH, 2, 2, sep_rows_both)
SEP_MIX(sep_mix_n11_both, SEP_BOTH, 3, 2, sep_rows_both)
#undef SEP_MIX

/* sep_mix_t for pixels of n < 12 (n != 1, 4, 8) with n's q a constant; NULL where the build
 * left the path out. */
static sep_rows_fn sep_mix_short(int32_t n, int both)
{
    if (n > 8) {
        if (both) {
            return TH_NN_PATH(ADD_SEP_MIXQ2_BOTH)
                       ? (n == 9 ? sep_mix_n9_both : n == 10 ? sep_mix_n10_both : sep_mix_n11_both)
                       : NULL;
        }
        return TH_NN_PATH(ADD_SEP_MIXQ2)
                   ? (n == 9 ? sep_mix_n9_lo : n == 10 ? sep_mix_n10_lo : sep_mix_n11_lo)
                   : NULL;
    }
    if (n < 4) {
        if (both) {
            return TH_NN_PATH(ADD_SEP_MIXQ0_BOTH) ? (n == 2 ? sep_mix_n2_both : sep_mix_n3_both)
                                                  : NULL;
        }
        return TH_NN_PATH(ADD_SEP_MIXQ0) ? (n == 2 ? sep_mix_n2_lo : sep_mix_n3_lo) : NULL;
    }
    if (both) {
        return TH_NN_PATH(ADD_SEP_MIXQ1_BOTH)
                   ? (n == 5 ? sep_mix_n5_both : n == 6 ? sep_mix_n6_both : sep_mix_n7_both)
                   : NULL;
    }
    return TH_NN_PATH(ADD_SEP_MIXQ1)
               ? (n == 5 ? sep_mix_n5_lo : n == 6 ? sep_mix_n6_lo : sep_mix_n7_lo)
               : NULL;
}

/* The separable form for a rank-1 or rank-2 walk (rows of n; input i's row r at
 * in_i + r * row_i, steps step_i 0 or 1 in a row): 0 (nothing written) where it does not
 * apply or the build left the path out. */
static int sep_run(const add_consts *k, const int8_t *a, int32_t step_a, int32_t row_a,
                   const int8_t *b, int32_t step_b, int32_t row_b, int32_t n, int32_t rows,
                   int8_t *out)
{
    const int both = k->sep_mode == 2;
    const int32_t lo = k->sep_mode == 0 ? -128 : k->act_min, hi = k->act_max; /* L; H + L */
    const int32_t *t1 = k->sep, *t2 = k->sep + 256;
    if (step_a == 1 && step_b == 1 && rows > 1 && (row_a == 0 || row_b == 0)) {
        /* channel broadcast: many rows go to the output tables (chan_lut, 3.5 an output)
         * where the call has the input tables */
        const int32_t lut_rows = k->act_min == -128 && k->act_max == 127
                                     ? TH_ADD_CHAN_LUT_ROWS
                                     : TH_ADD_CHAN_LUT_ROWS_CLAMP;
        if (rows >= lut_rows && k->t1 != NULL && k->t2 != NULL) {
            return 0;
        }
        const sep_chan_entry f = both
                                     ? (TH_NN_PATH(ADD_SEP_CHAN_BOTH) ? sep_chan_run_both : NULL)
                                     : (TH_NN_PATH(ADD_SEP_CHAN) ? sep_chan_run_lo : NULL);
        if (f == NULL) {
            return 0;
        }
        const int bcast1 = row_a == 0;
        f(bcast1 ? t1 : t2, bcast1 ? a : b, bcast1 ? t2 : t1, (const uint8_t *)(bcast1 ? b : a),
          n, rows, out, lo, hi);
        return 1;
    }
    if (step_a == 1 && step_b == 1) {
        /* same shape: one run, or rows of them */
        const sep_same_fn f = both ? (TH_NN_PATH(ADD_SEP_SAME_BOTH) ? sep_same_both : NULL)
                                   : (TH_NN_PATH(ADD_SEP_SAME) ? sep_same_lo : NULL);
        if (f == NULL) {
            return 0;
        }
        if (rows == 1 || (row_a == n && row_b == n)) {
            f(t1, (const uint8_t *)a, t2, (const uint8_t *)b, n * rows, out, lo, hi);
            return 1;
        }
        for (int32_t r = 0; r < rows; r++) {
            f(t1, (const uint8_t *)(a + r * row_a), t2, (const uint8_t *)(b + r * row_b), n,
              out + r * n, lo, hi);
        }
        return 1;
    }
    /* one input constant along a row (step 0), the other contiguous across the rows */
    const int bcast1 = step_a == 0;
    if ((bcast1 ? step_b != 1 || (rows > 1 && (row_b != n || row_a != 1))
                : step_a != 1 || step_b != 0 || (rows > 1 && (row_a != n || row_b != 1)))) {
        return 0;
    }
    const int m = n & 3;
    sep_rows_fn f = NULL;
    if (rows >= 4 && m != 0 && (m != 1 || n >= 5) && n <= 40) {
        /* four pixels a block, no single outputs (sep_mix_t); longer runs keep sep_rows_t's
         * eight a pass (sweep seed 0: n 47-61 were 0.2-0.7% slower in blocks) */
        f = n < 12 ? sep_mix_short(n, both) : NULL;
        if (f != NULL) {
            /* the block's count known */
        } else if (both) {
            f = m == 1   ? (TH_NN_PATH(ADD_SEP_MIX1_BOTH) ? sep_mix1_both : NULL)
                : m == 2 ? (TH_NN_PATH(ADD_SEP_MIX2_BOTH) ? sep_mix2_both : NULL)
                         : (TH_NN_PATH(ADD_SEP_MIX3_BOTH) ? sep_mix3_both : NULL);
        } else {
            f = m == 1   ? (TH_NN_PATH(ADD_SEP_MIX1) ? sep_mix1_lo : NULL)
                : m == 2 ? (TH_NN_PATH(ADD_SEP_MIX2) ? sep_mix2_lo : NULL)
                         : (TH_NN_PATH(ADD_SEP_MIX3) ? sep_mix3_lo : NULL);
        }
    }
    if (m == 0) {
        /* n % 8 known: no tests of the run's pieces */
        f = both ? (TH_NN_PATH(ADD_SEP_ROWS4_BOTH) ? (n & 4 ? sep_rows84_both : sep_rows8_both)
                                                   : NULL)
                 : (TH_NN_PATH(ADD_SEP_ROWS4) ? (n & 4 ? sep_rows84_lo : sep_rows8_lo) : NULL);
        if (n == 16) { /* the run straight-line */
            f = both ? (TH_NN_PATH(ADD_SEP_ROWS16_BOTH) ? sep_rows16_both : f)
                     : (TH_NN_PATH(ADD_SEP_ROWS16) ? sep_rows16_lo : f);
        }
    }
    if (f == NULL) {
        f = both ? (TH_NN_PATH(ADD_SEP_ROWS_BOTH) ? sep_rows_both : NULL)
                 : (TH_NN_PATH(ADD_SEP_ROWS) ? sep_rows_lo : NULL);
    }
    if (f == NULL) {
        return 0;
    }
    f(bcast1 ? t1 : t2, (const uint8_t *)(bcast1 ? a : b), bcast1 ? t2 : t1,
      (const uint8_t *)(bcast1 ? b : a), n, rows, out, lo, hi);
    return 1;
}

/* The loop the host chose (th_add_prep go, the choice sep_run makes for the walk; the
 * compiled backend knows the shapes): no walk to read, no checks, about 70 instructions a
 * call fewer than th_add_s8_prepared's own choice. 0 where the build left the path out. */
TH_INLINE int sep_go(const add_consts *k, const int8_t *in1, const int8_t *in2, int8_t *out)
{
    const int32_t go = k->go, n = k->go_n, rows = k->go_rows;
    const int first = go & 1, both = k->sep_mode == 2;
    const int32_t *const t1 = k->sep, *const t2 = k->sep + 256;
    const int32_t *const tc = first ? t1 : t2, *const tx = first ? t2 : t1;
    const uint8_t *const src = (const uint8_t *)(first ? in1 : in2);
    const uint8_t *const x = (const uint8_t *)(first ? in2 : in1);
    const int32_t lo = k->sep_mode == 0 ? -128 : k->act_min, hi = k->act_max;
    sep_rows_fn f;
#define GO_PICK(lo_kept, both_kept, lo_fn, both_fn)                                            \
    (both ? ((both_kept) ? both_fn : NULL) : ((lo_kept) ? lo_fn : NULL))
    switch (go >> 1) {
    case TH_ADD_GO_ROWS:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_ROWS), TH_NN_PATH(ADD_SEP_ROWS_BOTH),
                    sep_rows_lo, sep_rows_both);
        break;
    case TH_ADD_GO_ROWS8:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_ROWS4), TH_NN_PATH(ADD_SEP_ROWS4_BOTH),
                    sep_rows8_lo, sep_rows8_both);
        break;
    case TH_ADD_GO_ROWS84:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_ROWS4), TH_NN_PATH(ADD_SEP_ROWS4_BOTH),
                    sep_rows84_lo, sep_rows84_both);
        break;
    case TH_ADD_GO_ROWS16:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_ROWS16), TH_NN_PATH(ADD_SEP_ROWS16_BOTH),
                    sep_rows16_lo, sep_rows16_both);
        break;
    case TH_ADD_GO_MIX1:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_MIX1), TH_NN_PATH(ADD_SEP_MIX1_BOTH),
                    sep_mix1_lo, sep_mix1_both);
        break;
    case TH_ADD_GO_MIX2:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_MIX2), TH_NN_PATH(ADD_SEP_MIX2_BOTH),
                    sep_mix2_lo, sep_mix2_both);
        break;
    case TH_ADD_GO_MIX3:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_MIX3), TH_NN_PATH(ADD_SEP_MIX3_BOTH),
                    sep_mix3_lo, sep_mix3_both);
        break;
    case TH_ADD_GO_MIX_N2:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_MIXQ0), TH_NN_PATH(ADD_SEP_MIXQ0_BOTH),
                    sep_mix_n2_lo, sep_mix_n2_both);
        break;
    case TH_ADD_GO_MIX_N3:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_MIXQ0), TH_NN_PATH(ADD_SEP_MIXQ0_BOTH),
                    sep_mix_n3_lo, sep_mix_n3_both);
        break;
    case TH_ADD_GO_MIX_N5:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_MIXQ1), TH_NN_PATH(ADD_SEP_MIXQ1_BOTH),
                    sep_mix_n5_lo, sep_mix_n5_both);
        break;
    case TH_ADD_GO_MIX_N6:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_MIXQ1), TH_NN_PATH(ADD_SEP_MIXQ1_BOTH),
                    sep_mix_n6_lo, sep_mix_n6_both);
        break;
    case TH_ADD_GO_MIX_N7:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_MIXQ1), TH_NN_PATH(ADD_SEP_MIXQ1_BOTH),
                    sep_mix_n7_lo, sep_mix_n7_both);
        break;
    case TH_ADD_GO_MIX_N9:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_MIXQ2), TH_NN_PATH(ADD_SEP_MIXQ2_BOTH),
                    sep_mix_n9_lo, sep_mix_n9_both);
        break;
    case TH_ADD_GO_MIX_N10:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_MIXQ2), TH_NN_PATH(ADD_SEP_MIXQ2_BOTH),
                    sep_mix_n10_lo, sep_mix_n10_both);
        break;
    case TH_ADD_GO_MIX_N11:
        f = GO_PICK(TH_NN_PATH(ADD_SEP_MIXQ2), TH_NN_PATH(ADD_SEP_MIXQ2_BOTH),
                    sep_mix_n11_lo, sep_mix_n11_both);
        break;
    case TH_ADD_GO_SAME: {
        const sep_same_fn g = GO_PICK(TH_NN_PATH(ADD_SEP_SAME),
                                      TH_NN_PATH(ADD_SEP_SAME_BOTH), sep_same_lo, sep_same_both);
        if (g == NULL) {
            return 0;
        }
        g(tc, src, tx, x, n, out, lo, hi);
        return 1;
    }
    case TH_ADD_GO_CHAN: {
        const sep_chan_entry g = GO_PICK(TH_NN_PATH(ADD_SEP_CHAN), TH_NN_PATH(ADD_SEP_CHAN_BOTH),
                                         sep_chan_run_lo, sep_chan_run_both);
        if (g == NULL) {
            return 0;
        }
        g(tc, (const int8_t *)src, tx, x, n, rows, out, lo, hi);
        return 1;
    }
    default:
        return 0;
    }
#undef GO_PICK
    if (f == NULL) {
        return 0;
    }
    f(tc, src, tx, x, n, rows, out, lo, hi);
    return 1;
}
#endif

/* Largest |rescaled input| scale_input can return for these params (see the top). */
static int32_t input_bound(int32_t left_shift, int32_t m, int32_t e)
{
    /* 255 << 22 < 2^30 and m < 2^31: one SMULL, (v * m) >> 31 < 2^30 */
    const int32_t v = INT32_C(255) << left_shift;
    const int32_t hi = (int32_t)(((int64_t)v * m) >> 31);
    return ((hi + 1) >> e) + 1;
}

static int multiplier_ok(int32_t m, int32_t shift)
{
    return m >= 0 && shift <= 0 && shift >= -31;
}

/* th_add_s8_prepare without the nosign proof (nosign 0): the generic entries' per-call fill. */
static th_status add_fill(const th_add_params *params, const th_add_quant *quant,
                          const int32_t *input1_table, const int32_t *input2_table,
                          const th_shape *input1_shape, const th_shape *input2_shape,
                          const th_shape *output_shape, int32_t subtract, th_add_prep *prep)
{
    if (params == NULL || quant == NULL || prep == NULL ||
        !th_nn_bcast_init(&prep->walk, input1_shape, input2_shape, output_shape)) {
        return TH_ERR_ARG;
    }
    /* |x + offset| <= 255, so left shifts up to 22 stay inside int32. */
    if (params->input1_offset < -127 || params->input1_offset > 128 ||
        params->input2_offset < -127 || params->input2_offset > 128 ||
        params->output_offset < -128 || params->output_offset > 127 ||
        params->left_shift < 0 || params->left_shift > 22 ||
        !th_nn_activation_ok(&params->activation) ||
        !multiplier_ok(quant->input1_multiplier, quant->input1_shift) ||
        !multiplier_ok(quant->input2_multiplier, quant->input2_shift) ||
        !multiplier_ok(quant->output_multiplier, quant->output_shift)) {
        return TH_ERR_ARG;
    }
    add_consts *k = prep;
    k->in1_offset = params->input1_offset;
    k->in2_offset = params->input2_offset;
    k->left_shift = params->left_shift;
    k->m1 = quant->input1_multiplier;
    k->e1 = -quant->input1_shift;
    k->m2 = quant->input2_multiplier;
    k->e2 = -quant->input2_shift;
    k->mo = quant->output_multiplier;
    k->eo = -quant->output_shift;
    k->out_offset = params->output_offset;
    k->act_min = params->activation.min;
    k->act_max = params->activation.max;
    k->subtract = subtract != 0;
    k->t1 = input1_table;
    k->t2 = input2_table;
    /* the same in every build, so one host copy serves them all */
    const int64_t bound = (int64_t)input_bound(k->left_shift, k->m1, k->e1) +
                          input_bound(k->left_shift, k->m2, k->e2);
    k->fast = th_fast_rq_ok(k->mo, quant->output_shift, bound);
    k->rq = (th_fast_rq){0, 0, 0}; /* read only when fast */
    if (k->fast) {
        k->rq = th_fast_rq_make(k->mo, quant->output_shift, k->out_offset);
    }
    k->nosign = 0;
    k->sep = NULL; /* not proven: the host's proof only (add_sep) */
    k->sep_mode = 0;
    k->go = 0; /* not chosen: the host's choice only (add_go) */
    k->go_n = 0;
    k->go_rows = 0;
    return TH_OK;
}

/* th_add_prep's nosign (th_nn_types.h): for every pair of int8 inputs, the output with the
 * rounding's sign term against without it (rq as is: 1; round_zp - 1: 2), after the
 * activation clamp (the int8 saturation lies inside it). Exhaustive, 65536 pairs in int64
 * (every build alike, so the host's copy, arith/elementwise.py add_prep, matches): a tie
 * reached on either side of zero costs the proof, not a result. Only where fast. */
static int32_t nosign_of(const add_consts *k)
{
    if (!k->fast) {
        return 0;
    }
    int ok1 = 1, ok2 = 1;
    for (int32_t a = -128; a < 128 && (ok1 || ok2); a++) {
        const int64_t s1 = in1(k, (int8_t)a);
        for (int32_t b = -128; b < 128; b++) {
            const int64_t s2 = in2(k, (int8_t)b);
            const int64_t acc2 = 2 * (k->subtract ? s1 - s2 : s1 + s2); /* |.| < 2^30 */
            th_nn_nosign_pair(acc2, &k->rq, k->act_min, k->act_max, &ok1, &ok2);
        }
    }
    return ok1 ? 1 : (ok2 ? 2 : 0);
}

th_status th_add_s8_prepare(const th_add_params *params, const th_add_quant *quant,
                            const int32_t *input1_table, const int32_t *input2_table,
                            const th_shape *input1_shape, const th_shape *input2_shape,
                            const th_shape *output_shape, int32_t subtract, th_add_prep *prep)
{
    const th_status st = add_fill(params, quant, input1_table, input2_table, input1_shape,
                                  input2_shape, output_shape, subtract, prep);
    if (st == TH_OK) {
        prep->nosign = nosign_of(prep);
    }
    return st;
}

/* The host's choice of the loop (th_add_prep go) is built where the build keeps ADD_GO (a
 * compiled model whose ADD / SUB calls carry one; always when recording). */
#if TH_NN_HAS_DSP && !TH_NN_MVE &&                                                            \
    ((defined(TH_NN_RECORD_PATHS) && TH_NN_RECORD_PATHS) || TH_NN_KEEP_ADD_GO)
#define TH_ADD_GO_BUILT 1
/* Out of line: the choosing code's frame and saves stay off the chosen loop's calls. */
#define TH_ADD_BODY __attribute__((noinline)) static
#else
#define TH_ADD_GO_BUILT 0
#define TH_ADD_BODY TH_INLINE /* th_add_s8_prepared as it was */
#endif

/* Every path but the host's chosen loop (th_add_s8_prepared). */
TH_ADD_BODY th_status add_prepared_body(const th_add_prep *k, const int8_t *input1,
                                        const int8_t *input2, int8_t *output)
{
    const th_nn_bcast *b = &k->walk;
#if TH_NN_MVE
    {
        const th_add_params params = {k->in1_offset, k->in2_offset, k->out_offset,
                                      k->left_shift, {k->act_min, k->act_max}};
        const th_add_quant quant = {k->m1, -k->e1, k->m2, -k->e2, k->mo, -k->eo};
        th_nn_add_sub_mve_s8(&params, &quant, k->t1, k->t2, b, input1, input2, output,
                             k->subtract);
        return TH_OK;
    }
#endif
#if TH_NN_HAS_DSP
    if (k->fast && (b->count1 == 1 || b->count2 == 1) && b->count >= TH_ADD_LUT_MIN &&
        TH_NN_PATH(ADD_LUT)) {
        const int scalar1 = b->count1 == 1;
        return lut_run(k, scalar1, scalar1 ? input1 : input2, scalar1 ? input2 : input1,
                       b->count, output);
    }
#endif
    const int32_t inner = b->dims[b->rank - 1];
    const int32_t rows = b->count / inner;
#if TH_NN_HAS_DSP
    if (k->sep != NULL && b->rank <= 2 &&
        sep_run(k, input1, b->stride1[b->rank - 1], b->rank == 2 ? b->stride1[0] : 0, input2,
                b->stride2[b->rank - 1], b->rank == 2 ? b->stride2[0] : 0, inner, rows,
                output)) {
        return TH_OK;
    }
    /* Two dims left (e.g. [H*W, C] against [C], or against [H*W, 1]): every row at once. */
    const int tables = k->fast && (k->t1 != NULL || k->t2 != NULL);
    if (tables && b->rank == 2 &&
        fast_rows(k, input1, b->stride1[1], b->stride1[0], input2, b->stride2[1], b->stride2[0],
                  inner, rows, output)) {
        return TH_OK;
    }
    const int direct = k->fast && k->t1 == NULL && k->t2 == NULL && TH_NN_PATH(ADD_DIRECT);
    if (direct && b->rank <= 2) { /* every row in one call */
        const int32_t r1 = b->rank == 2 ? b->stride1[0] : 0;
        const int32_t r2 = b->rank == 2 ? b->stride2[0] : 0;
        if ((b->stride1[b->rank - 1] != 0 || b->stride2[b->rank - 1] != 0) &&
            direct_fast(k, input1, b->stride1[b->rank - 1], r1, input2, b->stride2[b->rank - 1],
                        r2, inner, rows, output)) {
            return TH_OK;
        }
        direct_rows(k, input1, b->stride1[b->rank - 1], r1, input2, b->stride2[b->rank - 1], r2,
                    inner, rows, output);
        return TH_OK;
    }
#endif
    th_nn_bcast_pos pos;
    th_nn_bcast_start(&pos);
    for (int32_t r = 0; r < rows; r++) {
        const int8_t *a = input1 + pos.off1, *bb = input2 + pos.off2;
        const int32_t step_a = b->stride1[b->rank - 1], step_b = b->stride2[b->rank - 1];
        int8_t *o = output + r * inner;
#if TH_NN_HAS_DSP
        if (tables && fast_rows(k, a, step_a, 0, bb, step_b, 0, inner, 1, o)) {
            th_nn_bcast_next(b, &pos);
            continue;
        }
        if (direct) {
            direct_rows(k, a, step_a, 0, bb, step_b, 0, inner, 1, o);
            th_nn_bcast_next(b, &pos);
            continue;
        }
#endif
        add_row(k, a, step_a, bb, step_b, inner, o);
        th_nn_bcast_next(b, &pos);
    }
    return TH_OK;
}

#if TH_ADD_GO_BUILT
/* The host's loop, else (a path the build left out) the kernel's choice. Out of line: the
 * entry's other calls stay two tail calls and no frame. */
__attribute__((noinline)) static th_status add_go(const th_add_prep *k, const int8_t *input1,
                                                  const int8_t *input2, int8_t *output)
{
    if (sep_go(k, input1, input2, output)) {
        return TH_OK;
    }
    return add_prepared_body(k, input1, input2, output);
}
#endif

th_status th_add_s8_prepared(const th_add_prep *k, const int8_t *input1, const int8_t *input2,
                             int8_t *output)
{
#if TH_ADD_GO_BUILT
    if (k->go != 0 && TH_NN_PATH(ADD_GO)) {
        return add_go(k, input1, input2, output);
    }
#endif
    return add_prepared_body(k, input1, input2, output);
}
#undef TH_ADD_BODY
#undef TH_ADD_GO_BUILT

th_status th_nn_add_sub_s8(const th_add_params *params, const th_add_quant *quant,
                           const int32_t *input1_table, const int32_t *input2_table,
                           const th_shape *input1_shape, const int8_t *input1,
                           const th_shape *input2_shape, const int8_t *input2,
                           const th_shape *output_shape, int8_t *output, int subtract)
{
    th_add_prep k;
    if (input1 == NULL || input2 == NULL || output == NULL ||
        add_fill(params, quant, input1_table, input2_table, input1_shape, input2_shape,
                 output_shape, subtract, &k) != TH_OK ||
        !th_nn_bcast_alias_ok(&k.walk, input1, input2, output)) {
        return TH_ERR_ARG;
    }
    return th_add_s8_prepared(&k, input1, input2, output);
}
