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
 */
#include <stddef.h>

#include "th_nn_add_sub_s8.h"
#include "th_nn_broadcast.h"
#include "th_nn_support.h"

typedef struct {
    int32_t in1_offset;
    int32_t in2_offset;
    int32_t left_shift;
    int32_t m1;
    int32_t e1; /* right shifts */
    int32_t m2;
    int32_t e2;
    int32_t mo;
    int32_t eo;
    int32_t out_offset;
    int32_t act_min;
    int32_t act_max;
    int32_t subtract;
    const int32_t *t1; /* NULL: rescale input1 per element */
    const int32_t *t2;
#if TH_NN_HAS_DSP
    int fast; /* th_fast_rq_apply is exact for every sum */
    th_fast_rq rq;
#endif
} add_consts;

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

/* Output rescale + offset, saturated to int8, then the activation clamp. The callers pass
 * copies of the constants held in locals: stores through int8_t may alias add_consts,
 * which would make the compiler reload it after every store. */
TH_INLINE int8_t fast_out(const th_fast_rq *rq, int32_t raw, int clamp, int32_t lo, int32_t hi)
{
    int32_t v = th_fast_rq_apply(raw, rq);
    if (clamp != CLAMP_NONE) {
        v = v < lo ? lo : v;
    }
    if (clamp == CLAMP_BOTH) {
        v = v > hi ? hi : v;
    }
    return (int8_t)v;
}

/* Both inputs through their tables, no broadcast in this row; sub and clamp are constants
 * after inlining. Four elements per iteration, each read before it is written. */
TH_INLINE void tab_row(const add_consts *k, const uint8_t *a, const uint8_t *b, int32_t n,
                       int8_t *out, int sub, int clamp)
{
    const int32_t *t1 = k->t1, *t2 = k->t2;
    const th_fast_rq rq = k->rq;
    const int32_t lo = k->act_min, hi = k->act_max;
    int32_t i = 0;
    if (clamp != CLAMP_BOTH) { /* both clamps: the loop below (fewer registers) */
        for (; i + 4 <= n; i += 4) {
            const uint32_t a0 = a[i], a1 = a[i + 1], a2 = a[i + 2], a3 = a[i + 3];
            const uint32_t b0 = b[i], b1 = b[i + 1], b2 = b[i + 2], b3 = b[i + 3];
            const uint32_t x0 = (uint32_t)t1[a0], y0 = (uint32_t)t2[b0];
            const uint32_t x1 = (uint32_t)t1[a1], y1 = (uint32_t)t2[b1];
            const uint32_t x2 = (uint32_t)t1[a2], y2 = (uint32_t)t2[b2];
            const uint32_t x3 = (uint32_t)t1[a3], y3 = (uint32_t)t2[b3];
            out[i] = fast_out(&rq, (int32_t)(sub ? x0 - y0 : x0 + y0), clamp, lo, hi);
            out[i + 1] = fast_out(&rq, (int32_t)(sub ? x1 - y1 : x1 + y1), clamp, lo, hi);
            out[i + 2] = fast_out(&rq, (int32_t)(sub ? x2 - y2 : x2 + y2), clamp, lo, hi);
            out[i + 3] = fast_out(&rq, (int32_t)(sub ? x3 - y3 : x3 + y3), clamp, lo, hi);
        }
    }
    for (; i < n; i++) {
        const uint32_t x = (uint32_t)t1[a[i]], y = (uint32_t)t2[b[i]];
        out[i] = fast_out(&rq, (int32_t)(sub ? x - y : x + y), clamp, lo, hi);
    }
}

typedef void (*tab_row_fn)(const add_consts *, const uint8_t *, const uint8_t *, int32_t,
                           int8_t *);

#define TAB_ROW(name, sub, clamp)                                                             \
    static void name(const add_consts *k, const uint8_t *a, const uint8_t *b, int32_t n,      \
                     int8_t *out)                                                             \
    {                                                                                         \
        tab_row(k, a, b, n, out, sub, clamp);                                                 \
    }
TAB_ROW(tab_row_add_none, 0, CLAMP_NONE)
TAB_ROW(tab_row_add_lo, 0, CLAMP_LO)
TAB_ROW(tab_row_sub_none, 1, CLAMP_NONE)
TAB_ROW(tab_row_sub_lo, 1, CLAMP_LO)
#undef TAB_ROW

/* Rarely used (act_max < 127: RELU6, RELU_N1_TO_1): one loop for ADD and SUB. */
static void tab_row_both(const add_consts *k, const uint8_t *a, const uint8_t *b, int32_t n,
                         int8_t *out)
{
    if (k->subtract) {
        tab_row(k, a, b, n, out, 1, CLAMP_BOTH);
    } else {
        tab_row(k, a, b, n, out, 0, CLAMP_BOTH);
    }
}

/* One input broadcast in this row (its rescaled value c), the other (x, table t) advancing:
 * raw = c + t[x], or c - t[x] when neg (SUB with input1 broadcast; SUB with input2
 * broadcast passes c = -s2, the same modulo 2^32). neg and clamp are constants after
 * inlining; four elements per iteration, each read before it is written. */
TH_INLINE void bcast_row(const add_consts *k, uint32_t c, const int32_t *t, const uint8_t *x,
                         int32_t n, int8_t *out, int neg, int clamp)
{
    const th_fast_rq rq = k->rq;
    const int32_t lo = k->act_min, hi = k->act_max;
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const uint32_t v0 = (uint32_t)t[x[i]], v1 = (uint32_t)t[x[i + 1]];
        const uint32_t v2 = (uint32_t)t[x[i + 2]], v3 = (uint32_t)t[x[i + 3]];
        out[i] = fast_out(&rq, (int32_t)(neg ? c - v0 : c + v0), clamp, lo, hi);
        out[i + 1] = fast_out(&rq, (int32_t)(neg ? c - v1 : c + v1), clamp, lo, hi);
        out[i + 2] = fast_out(&rq, (int32_t)(neg ? c - v2 : c + v2), clamp, lo, hi);
        out[i + 3] = fast_out(&rq, (int32_t)(neg ? c - v3 : c + v3), clamp, lo, hi);
    }
    for (; i < n; i++) {
        const uint32_t v = (uint32_t)t[x[i]];
        out[i] = fast_out(&rq, (int32_t)(neg ? c - v : c + v), clamp, lo, hi);
    }
}

typedef void (*bcast_row_fn)(const add_consts *, uint32_t, const int32_t *, const uint8_t *,
                             int32_t, int8_t *);

#define BCAST_ROW(name, neg, clamp)                                                           \
    static void name(const add_consts *k, uint32_t c, const int32_t *t, const uint8_t *x,     \
                     int32_t n, int8_t *out)                                                  \
    {                                                                                         \
        bcast_row(k, c, t, x, n, out, neg, clamp);                                            \
    }
BCAST_ROW(bcast_row_add_none, 0, CLAMP_NONE)
BCAST_ROW(bcast_row_add_lo, 0, CLAMP_LO)
BCAST_ROW(bcast_row_add_both, 0, CLAMP_BOTH)
BCAST_ROW(bcast_row_neg_none, 1, CLAMP_NONE)
BCAST_ROW(bcast_row_neg_lo, 1, CLAMP_LO)
BCAST_ROW(bcast_row_neg_both, 1, CLAMP_BOTH)
#undef BCAST_ROW

/* The broadcast row for this clamp and sign, NULL where the build leaves it out. */
static bcast_row_fn bcast_pick(int clamp, int neg)
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

/* The table row for this clamp and operation, NULL where the build leaves it out. */
static tab_row_fn tab_pick(int clamp, int sub)
{
    if (clamp == CLAMP_BOTH) {
        return TH_NN_PATH(ADD_TAB_BOTH) ? tab_row_both : NULL;
    }
    if (sub) {
        return clamp == CLAMP_NONE ? (TH_NN_PATH(ADD_TAB_SUB) ? tab_row_sub_none : NULL)
                                   : (TH_NN_PATH(ADD_TAB_SUB_LO) ? tab_row_sub_lo : NULL);
    }
    return clamp == CLAMP_NONE ? (TH_NN_PATH(ADD_TAB) ? tab_row_add_none : NULL)
                               : (TH_NN_PATH(ADD_TAB_LO) ? tab_row_add_lo : NULL);
}

/* The DSP table path for `rows` rows of n outputs, input i's row r at in_i + r * row_i
 * (steps in the row step_i); the row function picked once. 0 when it does not apply or the
 * build left it out (add_row runs instead). */
static int fast_rows(const add_consts *k, const int8_t *a, int32_t step_a, int32_t row_a,
                     const int8_t *b, int32_t step_b, int32_t row_b, int32_t n, int32_t rows,
                     int8_t *out)
{
    const int clamp = k->act_max < 127 ? CLAMP_BOTH : (k->act_min > -128 ? CLAMP_LO : CLAMP_NONE);
    if (step_a == 1 && step_b == 1 && k->t1 != NULL && k->t2 != NULL) {
        const tab_row_fn row = tab_pick(clamp, k->subtract);
        if (row == NULL) {
            return 0;
        }
        for (int32_t r = 0; r < rows; r++) {
            row(k, (const uint8_t *)(a + r * row_a), (const uint8_t *)(b + r * row_b), n,
                out + r * n);
        }
        return 1;
    }
    if (step_a == 0 && step_b == 1 && k->t2 != NULL) {
        const bcast_row_fn f = bcast_pick(clamp, k->subtract);
        if (f == NULL) {
            return 0;
        }
        for (int32_t r = 0; r < rows; r++) {
            f(k, (uint32_t)in1(k, a[r * row_a]), k->t2, (const uint8_t *)(b + r * row_b), n,
              out + r * n);
        }
        return 1;
    }
    if (step_a == 1 && step_b == 0 && k->t1 != NULL) {
        const bcast_row_fn f = bcast_pick(clamp, 0);
        if (f == NULL) {
            return 0;
        }
        for (int32_t r = 0; r < rows; r++) {
            const uint32_t s2 = (uint32_t)in2(k, b[r * row_b]);
            f(k, k->subtract ? 0u - s2 : s2, k->t1, (const uint8_t *)(a + r * row_a), n,
              out + r * n);
        }
        return 1;
    }
    return 0;
}

/* Largest |rescaled input| scale_input can return for these params (see the top). */
static int64_t input_bound(int32_t left_shift, int32_t m, int32_t e)
{
    const int64_t v = (int64_t)255 << left_shift;
    return ((((v * m) >> 31) + 1) >> e) + 1;
}
#endif

static int multiplier_ok(int32_t m, int32_t shift)
{
    return m >= 0 && shift <= 0 && shift >= -31;
}

th_status th_nn_add_sub_s8(const th_add_params *params, const th_add_quant *quant,
                           const int32_t *input1_table, const int32_t *input2_table,
                           const th_shape *input1_shape, const int8_t *input1,
                           const th_shape *input2_shape, const int8_t *input2,
                           const th_shape *output_shape, int8_t *output, int subtract)
{
    if (params == NULL || quant == NULL || input1 == NULL || input2 == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    th_nn_bcast b;
    if (!th_nn_bcast_init(&b, input1_shape, input2_shape, output_shape) ||
        !th_nn_bcast_alias_ok(&b, input1, input2, output)) {
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
#if TH_NN_MVE
    th_nn_add_sub_mve_s8(params, quant, input1_table, input2_table, &b, input1, input2, output,
                         subtract);
    return TH_OK;
#endif
    add_consts k;
    k.in1_offset = params->input1_offset;
    k.in2_offset = params->input2_offset;
    k.left_shift = params->left_shift;
    k.m1 = quant->input1_multiplier;
    k.e1 = -quant->input1_shift;
    k.m2 = quant->input2_multiplier;
    k.e2 = -quant->input2_shift;
    k.mo = quant->output_multiplier;
    k.eo = -quant->output_shift;
    k.out_offset = params->output_offset;
    k.act_min = params->activation.min;
    k.act_max = params->activation.max;
    k.subtract = subtract != 0;
    k.t1 = input1_table;
    k.t2 = input2_table;
#if TH_NN_HAS_DSP
    {
        const int64_t bound = input_bound(k.left_shift, k.m1, k.e1) +
                              input_bound(k.left_shift, k.m2, k.e2);
        k.fast = th_fast_rq_ok(k.mo, quant->output_shift, bound);
        k.rq = (th_fast_rq){0, 0, 0}; /* read only when fast */
        if (k.fast) {
            k.rq = th_fast_rq_make(k.mo, quant->output_shift, k.out_offset);
        }
    }
#endif

    const int32_t inner = b.dims[b.rank - 1];
    const int32_t rows = b.count / inner;
#if TH_NN_HAS_DSP
    /* Two dims left (e.g. [H*W, C] against [C], or against [H*W, 1]): every row at once. */
    const int tables = k.fast && (k.t1 != NULL || k.t2 != NULL);
    if (tables && b.rank == 2 &&
        fast_rows(&k, input1, b.stride1[1], b.stride1[0], input2, b.stride2[1], b.stride2[0],
                  inner, rows, output)) {
        return TH_OK;
    }
#endif
    th_nn_bcast_pos pos;
    th_nn_bcast_start(&pos);
    for (int32_t r = 0; r < rows; r++) {
        const int8_t *a = input1 + pos.off1, *bb = input2 + pos.off2;
        const int32_t step_a = b.stride1[b.rank - 1], step_b = b.stride2[b.rank - 1];
        int8_t *o = output + r * inner;
#if TH_NN_HAS_DSP
        if (tables && fast_rows(&k, a, step_a, 0, bb, step_b, 0, inner, 1, o)) {
            th_nn_bcast_next(&b, &pos);
            continue;
        }
#endif
        add_row(&k, a, step_a, bb, step_b, inner, o);
        th_nn_bcast_next(&b, &pos);
    }
    return TH_OK;
}
