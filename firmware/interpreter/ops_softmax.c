/*
 * ops_softmax.c - SOFTMAX over the last dim: int8 -> int8 (kernel id 7), int8 -> int16 (71),
 * int16 -> int16 (41). Parameter words: TH_SOFTMAX_P_*, TH_SOFTMAX_S16_P_* (th_interp_abi.h).
 */
#include "ops_common.h"

th_interp_status th_interp_softmax_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    *scratch = 0;
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_SOFTMAX_WORDS || !th_interp_s8_any(x) ||
        !th_interp_s8_any(y) || x->rank < 1 || x->bytes != y->bytes ||
        x->dims[x->rank - 1] > 4095 || p[TH_SOFTMAX_P_INPUT_LEFT_SHIFT] < 0 || p[TH_SOFTMAX_P_INPUT_LEFT_SHIFT] > 31 || p[TH_SOFTMAX_P_DIFF_MIN] > 0) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

/* The kernel's params and the input's shape, from the words. */
static void softmax_args(const th_interp_op *op, th_softmax_params *sp, th_shape *shape)
{
    sp->input_multiplier = op->params[TH_SOFTMAX_P_INPUT_MULTIPLIER];
    sp->input_left_shift = op->params[TH_SOFTMAX_P_INPUT_LEFT_SHIFT];
    sp->diff_min = op->params[TH_SOFTMAX_P_DIFF_MIN];
    th_interp_to_shape(&op->in[0], shape);
}

th_interp_status th_interp_softmax_s8_eval(const th_interp_op *op)
{
    th_softmax_params sp;
    th_shape shape;
    softmax_args(op, &sp, &shape);
    return th_interp_kstatus(th_softmax_s8(NULL, &sp, &shape, (const int8_t *)op->in[0].data,
                                           (int8_t *)op->out[0].data));
}

/* SOFTMAX int8 -> int16 (kernel id 71): the same words, an int16 output of the same shape. */
th_interp_status th_interp_softmax_s8_s16_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    *scratch = 0;
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_SOFTMAX_WORDS ||
        !th_interp_s8_any(x) || !y->present || y->data == NULL || y->dtype != TH_INTERP_INT16 ||
        x->rank < 1 || 2u * x->bytes != y->bytes || x->dims[x->rank - 1] > 4095 ||
        p[TH_SOFTMAX_P_INPUT_LEFT_SHIFT] < 0 || p[TH_SOFTMAX_P_INPUT_LEFT_SHIFT] > 31 ||
        p[TH_SOFTMAX_P_DIFF_MIN] > 0) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_softmax_s8_s16_eval(const th_interp_op *op)
{
    th_softmax_params sp;
    th_shape shape;
    softmax_args(op, &sp, &shape);
    return th_interp_kstatus(th_softmax_s8_s16(NULL, &sp, &shape,
                                               (const int8_t *)op->in[0].data,
                                               (int16_t *)op->out[0].data));
}

/* SOFTMAX int16 -> int16 (kernel id 41): multiplier and shift, and the constants-section
 * offsets of the exp and 1 / (1 + x) tables (513 int16 each, made by the host). */
#define SOFTMAX_S16_LUT 513u

th_interp_status th_interp_softmax_s16_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    *scratch = 0;
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_SOFTMAX_S16_WORDS ||
        !x->present || x->data == NULL || x->dtype != TH_INTERP_INT16 || !y->present ||
        y->data == NULL || y->dtype != TH_INTERP_INT16 || x->rank < 1 ||
        x->bytes != y->bytes || x->dims[x->rank - 1] > 65535 ||
        p[TH_SOFTMAX_S16_P_MULTIPLIER] < 0 || p[TH_SOFTMAX_S16_P_SHIFT] < -31 ||
        p[TH_SOFTMAX_S16_P_SHIFT] > 30 ||
        th_interp_const(op, p[TH_SOFTMAX_S16_P_EXP_LUT], SOFTMAX_S16_LUT, 2u) == NULL ||
        th_interp_const(op, p[TH_SOFTMAX_S16_P_RECIP_LUT], SOFTMAX_S16_LUT, 2u) == NULL) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_softmax_s16_eval(const th_interp_op *op)
{
    const int32_t *p = op->params;
    th_per_tensor_quant q;
    th_shape shape;
    q.multiplier = p[TH_SOFTMAX_S16_P_MULTIPLIER];
    q.shift = p[TH_SOFTMAX_S16_P_SHIFT];
    th_interp_to_shape(&op->in[0], &shape);
    return th_interp_kstatus(th_softmax_s16(
        NULL, &q, th_interp_const(op, p[TH_SOFTMAX_S16_P_EXP_LUT], SOFTMAX_S16_LUT, 2u),
        th_interp_const(op, p[TH_SOFTMAX_S16_P_RECIP_LUT], SOFTMAX_S16_LUT, 2u), &shape,
        (const int16_t *)op->in[0].data, (int16_t *)op->out[0].data));
}
