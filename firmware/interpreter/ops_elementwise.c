/*
 * ops_elementwise.c - ADD (kernel id 8), SUB (10), MUL (11), MAXIMUM (30), MINIMUM (31),
 * SQUARED_DIFFERENCE (32), PRELU (33), DIV (34): int8 with broadcasting; FILL (35); int16
 * ADD (39) and MUL (40) with broadcasting.
 * Parameter words: TH_ADD_P_*, TH_ADD_TAB_P_* (ADD/SUB with input tables, kernel ids 20, 21:
 * 256 int32 each in the constants, made by the host: th_add_s8_tables), TH_MUL_P_*,
 * TH_PRELU_P_* (SQUARED_DIFFERENCE takes TH_ADD_P_*, DIV TH_MUL_P_*; MAXIMUM / MINIMUM
 * none), in
 * th_interp_abi.h (generated from host/tinyhost/codegen/interpreter_abi.py).
 * Either input may be a constant; the kernel checks the broadcast shapes (and the adapter
 * checks them once at load, by running the same rule).
 */
#include "ops_common.h"

/* NumPy broadcasting of a and b gives exactly y. */
static int broadcast_ok(const th_interp_tensor *a, const th_interp_tensor *b,
                        const th_interp_tensor *y)
{
    const uint32_t r = y->rank;
    if (a->rank > r || b->rank > r) {
        return 0;
    }
    for (uint32_t k = 0; k < r; k++) {
        const int32_t ya = k < a->rank ? a->dims[a->rank - 1 - k] : 1;
        const int32_t yb = k < b->rank ? b->dims[b->rank - 1 - k] : 1;
        const int32_t yy = y->dims[r - 1 - k];
        if ((ya != yy && ya != 1) || (yb != yy && yb != 1)) {
            return 0;
        }
    }
    return 1;
}

/* A tensor of `dtype` and rank 1..TH_MAX_RANK (int8 or int16 operands). */
static int typed_any(const th_interp_tensor *t, uint8_t dtype)
{
    return t->present && t->data != NULL && t->dtype == dtype && t->rank <= TH_MAX_RANK;
}

static th_interp_status check_binary_typed(const th_interp_op *op, uint32_t words,
                                           uint8_t dtype)
{
    const th_interp_tensor *a = &op->in[0], *b = &op->in[1], *y = &op->out[0];
    if (op->n_in != 2 || op->n_out != 1 || op->n_params != words || !typed_any(a, dtype) ||
        !typed_any(b, dtype) || !typed_any(y, dtype) || !broadcast_ok(a, b, y)) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static th_interp_status check_binary(const th_interp_op *op, uint32_t words)
{
    return check_binary_typed(op, words, TH_INTERP_INT8);
}

/* The activation range of an int8 or int16 output. */
static int act_ok(int32_t lo, int32_t hi, uint8_t dtype)
{
    return dtype == TH_INTERP_INT8 ? th_interp_act_ok(lo, hi)
                                   : (lo >= -32768 && lo <= hi && hi <= 32767);
}

/* The shapes of a binary op's inputs and output (a scalar as [1]). */
static void binary_shapes(const th_interp_op *op, th_shape *s1, th_shape *s2, th_shape *so)
{
    th_interp_to_shape_r1(&op->in[0], s1);
    th_interp_to_shape_r1(&op->in[1], s2);
    th_interp_to_shape_r1(&op->out[0], so);
}

static int shift_ok(int32_t shift)
{
    return shift <= 0 && shift >= -31;
}

static th_interp_status prepare_add_typed(const th_interp_op *op, uint32_t *scratch,
                                          uint32_t words, uint8_t dtype)
{
    const int32_t *p = op->params;
    *scratch = 0;
    if (check_binary_typed(op, words, dtype) != TH_INTERP_OK || p[TH_ADD_P_LEFT_SHIFT] < 0 ||
        p[TH_ADD_P_LEFT_SHIFT] > 30 || !shift_ok(p[TH_ADD_P_INPUT1_SHIFT]) ||
        !shift_ok(p[TH_ADD_P_INPUT2_SHIFT]) || !shift_ok(p[TH_ADD_P_OUTPUT_SHIFT]) ||
        !act_ok(p[TH_ADD_P_ACT_MIN], p[TH_ADD_P_ACT_MAX], dtype)) {
        return TH_INTERP_E_PARAMS;
    }
    if (words == TH_ADD_TAB_WORDS &&
        (th_interp_const(op, p[TH_ADD_TAB_P_TABLE1], 256u, 4u) == NULL ||
         th_interp_const(op, p[TH_ADD_TAB_P_TABLE2], 256u, 4u) == NULL)) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static th_interp_status prepare_add(const th_interp_op *op, uint32_t *scratch, uint32_t words)
{
    return prepare_add_typed(op, scratch, words, TH_INTERP_INT8);
}

static void add_structs(const int32_t *p, th_add_params *ap, th_add_quant *aq)
{
    ap->input1_offset = p[TH_ADD_P_INPUT1_OFFSET];
    ap->input2_offset = p[TH_ADD_P_INPUT2_OFFSET];
    ap->output_offset = p[TH_ADD_P_OUTPUT_OFFSET];
    ap->left_shift = p[TH_ADD_P_LEFT_SHIFT];
    aq->input1_multiplier = p[TH_ADD_P_INPUT1_MULTIPLIER];
    aq->input1_shift = p[TH_ADD_P_INPUT1_SHIFT];
    aq->input2_multiplier = p[TH_ADD_P_INPUT2_MULTIPLIER];
    aq->input2_shift = p[TH_ADD_P_INPUT2_SHIFT];
    aq->output_multiplier = p[TH_ADD_P_OUTPUT_MULTIPLIER];
    aq->output_shift = p[TH_ADD_P_OUTPUT_SHIFT];
    ap->activation.min = p[TH_ADD_P_ACT_MIN];
    ap->activation.max = p[TH_ADD_P_ACT_MAX];
}

typedef th_status (*add_fn)(const th_context *, const th_add_params *, const th_add_quant *,
                            const th_shape *, const int8_t *, const th_shape *, const int8_t *,
                            const th_shape *, int8_t *);

static th_interp_status eval_add(const th_interp_op *op, add_fn fn)
{
    th_add_params ap;
    th_add_quant aq;
    th_shape s1, s2, so;
    add_structs(op->params, &ap, &aq);
    binary_shapes(op, &s1, &s2, &so);
    return th_interp_kstatus(fn(NULL, &ap, &aq, &s1, (const int8_t *)op->in[0].data, &s2,
                                (const int8_t *)op->in[1].data, &so, (int8_t *)op->out[0].data));
}

th_interp_status th_interp_add_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_add(op, scratch, TH_ADD_WORDS);
}

th_interp_status th_interp_add_s8_eval(const th_interp_op *op)
{
    return eval_add(op, th_add_s8);
}

th_interp_status th_interp_sub_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_add(op, scratch, TH_ADD_WORDS);
}

typedef th_status (*add_tab_fn)(const th_context *, const th_add_params *,
                                const th_add_quant *, const int32_t *, const int32_t *,
                                const th_shape *, const int8_t *, const th_shape *,
                                const int8_t *, const th_shape *, int8_t *);

static th_interp_status eval_add_tab(const th_interp_op *op, add_tab_fn fn)
{
    th_add_params ap;
    th_add_quant aq;
    th_shape s1, s2, so;
    add_structs(op->params, &ap, &aq);
    /* checked in prepare: never NULL here */
    const int32_t *t1 = th_interp_const(op, op->params[TH_ADD_TAB_P_TABLE1], 256u, 4u);
    const int32_t *t2 = th_interp_const(op, op->params[TH_ADD_TAB_P_TABLE2], 256u, 4u);
    binary_shapes(op, &s1, &s2, &so);
    return th_interp_kstatus(fn(NULL, &ap, &aq, t1, t2, &s1, (const int8_t *)op->in[0].data,
                                &s2, (const int8_t *)op->in[1].data, &so,
                                (int8_t *)op->out[0].data));
}

th_interp_status th_interp_add_tab_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_add(op, scratch, TH_ADD_TAB_WORDS);
}

th_interp_status th_interp_add_tab_s8_eval(const th_interp_op *op)
{
    return eval_add_tab(op, th_add_s8_tables);
}

th_interp_status th_interp_sub_tab_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_add(op, scratch, TH_ADD_TAB_WORDS);
}

th_interp_status th_interp_sub_tab_s8_eval(const th_interp_op *op)
{
    return eval_add_tab(op, th_sub_s8_tables);
}

th_interp_status th_interp_sub_s8_eval(const th_interp_op *op)
{
    return eval_add(op, th_sub_s8);
}

/* MUL's words (MUL, DIV): the output shift in [-31, max_shift]. */
static th_interp_status prepare_mul_typed(const th_interp_op *op, uint32_t *scratch,
                                          int32_t max_shift, uint8_t dtype)
{
    const int32_t *p = op->params;
    *scratch = 0;
    if (check_binary_typed(op, TH_MUL_WORDS, dtype) != TH_INTERP_OK ||
        p[TH_MUL_P_OUTPUT_MULTIPLIER] < 0 || p[TH_MUL_P_OUTPUT_SHIFT] < -31 ||
        p[TH_MUL_P_OUTPUT_SHIFT] > max_shift ||
        !act_ok(p[TH_MUL_P_ACT_MIN], p[TH_MUL_P_ACT_MAX], dtype)) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static th_interp_status prepare_mul(const th_interp_op *op, uint32_t *scratch,
                                    int32_t max_shift)
{
    return prepare_mul_typed(op, scratch, max_shift, TH_INTERP_INT8);
}

th_interp_status th_interp_mul_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_mul(op, scratch, 30);
}

typedef th_status (*mul_fn)(const th_context *, const th_mul_params *,
                            const th_per_tensor_quant *, const th_shape *, const int8_t *,
                            const th_shape *, const int8_t *, const th_shape *, int8_t *);

/* MUL's words as its structs, and the three shapes (MUL, DIV, int16 MUL). */
static void mul_structs(const th_interp_op *op, th_mul_params *mp, th_per_tensor_quant *q,
                        th_shape *s1, th_shape *s2, th_shape *so)
{
    const int32_t *p = op->params;
    mp->input1_offset = p[TH_MUL_P_INPUT1_OFFSET];
    mp->input2_offset = p[TH_MUL_P_INPUT2_OFFSET];
    mp->output_offset = p[TH_MUL_P_OUTPUT_OFFSET];
    q->multiplier = p[TH_MUL_P_OUTPUT_MULTIPLIER];
    q->shift = p[TH_MUL_P_OUTPUT_SHIFT];
    mp->activation.min = p[TH_MUL_P_ACT_MIN];
    mp->activation.max = p[TH_MUL_P_ACT_MAX];
    binary_shapes(op, s1, s2, so);
}

static th_interp_status eval_mul(const th_interp_op *op, mul_fn fn)
{
    th_mul_params mp;
    th_per_tensor_quant q;
    th_shape s1, s2, so;
    mul_structs(op, &mp, &q, &s1, &s2, &so);
    return th_interp_kstatus(fn(NULL, &mp, &q, &s1, (const int8_t *)op->in[0].data, &s2,
                                (const int8_t *)op->in[1].data, &so, (int8_t *)op->out[0].data));
}

th_interp_status th_interp_mul_s8_eval(const th_interp_op *op)
{
    return eval_mul(op, th_mul_s8);
}

/* ---- MAXIMUM (kernel id 30), MINIMUM (31): no parameter words -------------------------- */

typedef th_status (*min_max_fn)(const th_context *, const th_shape *, const int8_t *,
                                const th_shape *, const int8_t *, const th_shape *, int8_t *);

static th_interp_status eval_min_max(const th_interp_op *op, min_max_fn fn)
{
    th_shape s1, s2, so;
    binary_shapes(op, &s1, &s2, &so);
    return th_interp_kstatus(fn(NULL, &s1, (const int8_t *)op->in[0].data, &s2,
                                (const int8_t *)op->in[1].data, &so, (int8_t *)op->out[0].data));
}

th_interp_status th_interp_maximum_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    return check_binary(op, TH_MINMAX_WORDS);
}

th_interp_status th_interp_maximum_s8_eval(const th_interp_op *op)
{
    return eval_min_max(op, th_maximum_s8);
}

th_interp_status th_interp_minimum_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    return check_binary(op, TH_MINMAX_WORDS);
}

th_interp_status th_interp_minimum_s8_eval(const th_interp_op *op)
{
    return eval_min_max(op, th_minimum_s8);
}

/* ---- SQUARED_DIFFERENCE (kernel id 32): ADD's words, the output shift may be > 0 -------- */

th_interp_status th_interp_sqdiff_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    *scratch = 0;
    if (check_binary(op, TH_ADD_WORDS) != TH_INTERP_OK || p[TH_ADD_P_LEFT_SHIFT] < 0 ||
        p[TH_ADD_P_LEFT_SHIFT] > 7 || !shift_ok(p[TH_ADD_P_INPUT1_SHIFT]) ||
        !shift_ok(p[TH_ADD_P_INPUT2_SHIFT]) || p[TH_ADD_P_OUTPUT_SHIFT] < -31 ||
        p[TH_ADD_P_OUTPUT_SHIFT] > 30 ||
        !th_interp_act_ok(p[TH_ADD_P_ACT_MIN], p[TH_ADD_P_ACT_MAX])) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_sqdiff_s8_eval(const th_interp_op *op)
{
    return eval_add(op, th_squared_difference_s8);
}

/* ---- DIV (kernel id 34): MUL's words, the output shift at most 23 -------------------- */

th_interp_status th_interp_div_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_mul(op, scratch, 23);
}

th_interp_status th_interp_div_s8_eval(const th_interp_op *op)
{
    return eval_mul(op, th_div_s8);
}

/* ---- FILL (kernel id 35): no parameter words; the input is the one-element value ------ */

th_interp_status th_interp_fill_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_FILL_WORDS ||
        !th_interp_s8_any(&op->in[0]) || op->in[0].bytes != 1u ||
        !th_interp_s8_any(&op->out[0])) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_fill_s8_eval(const th_interp_op *op)
{
    return th_interp_kstatus(th_fill_s8(NULL, (const int8_t *)op->in[0].data,
                                        (int32_t)op->out[0].bytes, (int8_t *)op->out[0].data));
}

/* ---- PRELU (kernel id 33): TH_PRELU_P_* ------------------------------------------------ */

th_interp_status th_interp_prelu_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    *scratch = 0;
    if (check_binary(op, TH_PRELU_WORDS) != TH_INTERP_OK ||
        p[TH_PRELU_P_MULTIPLIER_POS] < 0 || p[TH_PRELU_P_MULTIPLIER_NEG] < 0 ||
        p[TH_PRELU_P_SHIFT_POS] < -31 || p[TH_PRELU_P_SHIFT_POS] > 30 ||
        p[TH_PRELU_P_SHIFT_NEG] < -31 || p[TH_PRELU_P_SHIFT_NEG] > 30) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_prelu_s8_eval(const th_interp_op *op)
{
    const int32_t *p = op->params;
    th_prelu_params pp;
    th_shape s1, s2, so;
    pp.input_offset = p[TH_PRELU_P_INPUT_OFFSET];
    pp.alpha_offset = p[TH_PRELU_P_ALPHA_OFFSET];
    pp.output_offset = p[TH_PRELU_P_OUTPUT_OFFSET];
    pp.multiplier_pos = p[TH_PRELU_P_MULTIPLIER_POS];
    pp.shift_pos = p[TH_PRELU_P_SHIFT_POS];
    pp.multiplier_neg = p[TH_PRELU_P_MULTIPLIER_NEG];
    pp.shift_neg = p[TH_PRELU_P_SHIFT_NEG];
    binary_shapes(op, &s1, &s2, &so);
    return th_interp_kstatus(th_prelu_s8(NULL, &pp, &s1, (const int8_t *)op->in[0].data, &s2,
                                         (const int8_t *)op->in[1].data, &so,
                                         (int8_t *)op->out[0].data));
}

/* ---- int16 ADD (kernel id 39, TH_ADD_P_*) and MUL (40, TH_MUL_P_*; offsets 0) ---------- */
th_interp_status th_interp_add_s16_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_add_typed(op, scratch, TH_ADD_WORDS, TH_INTERP_INT16);
}

typedef th_status (*add16_fn)(const th_context *, const th_add_params *, const th_add_quant *,
                              const th_shape *, const int16_t *, const th_shape *,
                              const int16_t *, const th_shape *, int16_t *);

static th_interp_status eval_add16(const th_interp_op *op, add16_fn fn)
{
    th_add_params ap;
    th_add_quant aq;
    th_shape s1, s2, so;
    add_structs(op->params, &ap, &aq);
    binary_shapes(op, &s1, &s2, &so);
    return th_interp_kstatus(fn(NULL, &ap, &aq, &s1, (const int16_t *)op->in[0].data, &s2,
                                (const int16_t *)op->in[1].data, &so,
                                (int16_t *)op->out[0].data));
}

th_interp_status th_interp_add_s16_eval(const th_interp_op *op)
{
    return eval_add16(op, th_add_s16);
}

/* int16 SUB (kernel id 103): ADD's words, input1 - input2. */
th_interp_status th_interp_sub_s16_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_add_typed(op, scratch, TH_ADD_WORDS, TH_INTERP_INT16);
}

th_interp_status th_interp_sub_s16_eval(const th_interp_op *op)
{
    return eval_add16(op, th_sub_s16);
}

th_interp_status th_interp_mul_s16_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    const th_interp_status st = prepare_mul_typed(op, scratch, 30, TH_INTERP_INT16);
    return st != TH_INTERP_OK || p[TH_MUL_P_INPUT1_OFFSET] != 0 ||
                   p[TH_MUL_P_INPUT2_OFFSET] != 0 || p[TH_MUL_P_OUTPUT_OFFSET] != 0
               ? TH_INTERP_E_PARAMS
               : TH_INTERP_OK;
}

th_interp_status th_interp_mul_s16_eval(const th_interp_op *op)
{
    th_mul_params mp;
    th_per_tensor_quant q;
    th_shape s1, s2, so;
    mul_structs(op, &mp, &q, &s1, &s2, &so);
    return th_interp_kstatus(th_mul_s16(NULL, &mp, &q, &s1, (const int16_t *)op->in[0].data,
                                        &s2, (const int16_t *)op->in[1].data, &so,
                                        (int16_t *)op->out[0].data));
}
