/*
 * ops_elementwise.c - ADD (kernel id 8), SUB (10), MUL (11): int8 with broadcasting.
 * ADD/SUB params: input1_offset, input2_offset, output_offset, left_shift,
 *   input1_multiplier, input1_shift, input2_multiplier, input2_shift, output_multiplier,
 *   output_shift, act_min, act_max.
 * ADD/SUB with input tables (kernel ids 20, 21): the 12 ADD/SUB words, then table1_off,
 *   table2_off (256 int32 each in the constants, made by the host: th_add_s8_tables).
 * MUL params: input1_offset, input2_offset, output_offset, multiplier, shift, act_min, act_max.
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

static th_interp_status check_binary(const th_interp_op *op, uint32_t words)
{
    const th_interp_tensor *a = &op->in[0], *b = &op->in[1], *y = &op->out[0];
    if (op->n_in != 2 || op->n_out != 1 || op->n_params != words || !th_interp_s8_any(a) ||
        !th_interp_s8_any(b) || !th_interp_s8_any(y) || !broadcast_ok(a, b, y)) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static th_interp_status prepare_add(const th_interp_op *op, uint32_t *scratch, uint32_t words)
{
    const int32_t *p = op->params;
    *scratch = 0;
    if (check_binary(op, words) != TH_INTERP_OK || p[3] < 0 || p[3] > 30 || p[5] > 0 ||
        p[7] > 0 || p[9] > 0 || p[5] < -31 || p[7] < -31 || p[9] < -31 ||
        !th_interp_act_ok(p[10], p[11])) {
        return TH_INTERP_E_PARAMS;
    }
    if (words == 14u && (th_interp_const(op, p[12], 256u, 4u) == NULL ||
                         th_interp_const(op, p[13], 256u, 4u) == NULL)) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static void add_structs(const int32_t *p, th_add_params *ap, th_add_quant *aq)
{
    ap->input1_offset = p[0];
    ap->input2_offset = p[1];
    ap->output_offset = p[2];
    ap->left_shift = p[3];
    aq->input1_multiplier = p[4];
    aq->input1_shift = p[5];
    aq->input2_multiplier = p[6];
    aq->input2_shift = p[7];
    aq->output_multiplier = p[8];
    aq->output_shift = p[9];
    ap->activation.min = p[10];
    ap->activation.max = p[11];
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
    th_interp_to_shape_r1(&op->in[0], &s1);
    th_interp_to_shape_r1(&op->in[1], &s2);
    th_interp_to_shape_r1(&op->out[0], &so);
    return th_interp_kstatus(fn(NULL, &ap, &aq, &s1, (const int8_t *)op->in[0].data, &s2,
                                (const int8_t *)op->in[1].data, &so, (int8_t *)op->out[0].data));
}

th_interp_status th_interp_add_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_add(op, scratch, 12u);
}

th_interp_status th_interp_add_s8_eval(const th_interp_op *op)
{
    return eval_add(op, th_add_s8);
}

th_interp_status th_interp_sub_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_add(op, scratch, 12u);
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
    const int32_t *t1 = th_interp_const(op, op->params[12], 256u, 4u);
    const int32_t *t2 = th_interp_const(op, op->params[13], 256u, 4u);
    th_interp_to_shape_r1(&op->in[0], &s1);
    th_interp_to_shape_r1(&op->in[1], &s2);
    th_interp_to_shape_r1(&op->out[0], &so);
    return th_interp_kstatus(fn(NULL, &ap, &aq, t1, t2, &s1, (const int8_t *)op->in[0].data,
                                &s2, (const int8_t *)op->in[1].data, &so,
                                (int8_t *)op->out[0].data));
}

th_interp_status th_interp_add_tab_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_add(op, scratch, 14u);
}

th_interp_status th_interp_add_tab_s8_eval(const th_interp_op *op)
{
    return eval_add_tab(op, th_add_s8_tables);
}

th_interp_status th_interp_sub_tab_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_add(op, scratch, 14u);
}

th_interp_status th_interp_sub_tab_s8_eval(const th_interp_op *op)
{
    return eval_add_tab(op, th_sub_s8_tables);
}

th_interp_status th_interp_sub_s8_eval(const th_interp_op *op)
{
    return eval_add(op, th_sub_s8);
}

th_interp_status th_interp_mul_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    *scratch = 0;
    if (check_binary(op, 7u) != TH_INTERP_OK || p[3] < 0 || p[4] < -31 || p[4] > 30 ||
        !th_interp_act_ok(p[5], p[6])) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_mul_s8_eval(const th_interp_op *op)
{
    const int32_t *p = op->params;
    th_mul_params mp;
    th_per_tensor_quant q;
    th_shape s1, s2, so;
    mp.input1_offset = p[0];
    mp.input2_offset = p[1];
    mp.output_offset = p[2];
    q.multiplier = p[3];
    q.shift = p[4];
    mp.activation.min = p[5];
    mp.activation.max = p[6];
    th_interp_to_shape_r1(&op->in[0], &s1);
    th_interp_to_shape_r1(&op->in[1], &s2);
    th_interp_to_shape_r1(&op->out[0], &so);
    return th_interp_kstatus(th_mul_s8(NULL, &mp, &q, &s1, (const int8_t *)op->in[0].data, &s2,
                                       (const int8_t *)op->in[1].data, &so,
                                       (int8_t *)op->out[0].data));
}
