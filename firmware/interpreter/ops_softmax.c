/*
 * ops_softmax.c - SOFTMAX int8 -> int8 over the last dim (kernel id 7).
 * Params: input_multiplier, input_left_shift, diff_min.
 */
#include "ops_common.h"

th_interp_status th_interp_softmax_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    *scratch = 0;
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != 3u || !th_interp_s8_any(x) ||
        !th_interp_s8_any(y) || x->rank < 1 || x->bytes != y->bytes ||
        x->dims[x->rank - 1] > 4095 || p[1] < 0 || p[1] > 31 || p[2] > 0) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_softmax_s8_eval(const th_interp_op *op)
{
    th_softmax_params sp;
    th_shape shape;
    sp.input_multiplier = op->params[0];
    sp.input_left_shift = op->params[1];
    sp.diff_min = op->params[2];
    th_interp_to_shape(&op->in[0], &shape);
    return th_interp_kstatus(th_softmax_s8(NULL, &sp, &shape, (const int8_t *)op->in[0].data,
                                           (int8_t *)op->out[0].data));
}
