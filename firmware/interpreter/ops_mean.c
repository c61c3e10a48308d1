/*
 * ops_mean.c - MEAN int8 (kernel id 15).
 * Params: input_zero_point, output_zero_point, axis_mask, multiplier, shift.
 */
#include "ops_common.h"

th_interp_status th_interp_mean_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    uint64_t kept = 1;
    *scratch = 0;
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != 5u || !th_interp_s8_any(x) ||
        !th_interp_s8_any(y) || x->rank < 1 || ((uint32_t)p[2] >> x->rank) != 0 ||
        p[0] < -128 || p[0] > 127 || p[1] < -128 || p[1] > 127 || p[3] < 0 || p[4] < -31 ||
        p[4] > 30) {
        return TH_INTERP_E_PARAMS;
    }
    for (uint32_t d = 0; d < x->rank; d++) {
        if ((((uint32_t)p[2] >> d) & 1u) == 0) {
            kept *= (uint32_t)x->dims[d];
        }
    }
    return kept == th_interp_elements(y) ? TH_INTERP_OK : TH_INTERP_E_PARAMS;
}

th_interp_status th_interp_mean_s8_eval(const th_interp_op *op)
{
    const int32_t *p = op->params;
    th_mean_params mp;
    th_per_tensor_quant q;
    th_shape si, so;
    mp.input_zero_point = p[0];
    mp.output_zero_point = p[1];
    mp.axis_mask = (uint32_t)p[2];
    q.multiplier = p[3];
    q.shift = p[4];
    th_interp_to_shape(&op->in[0], &si);
    th_interp_to_shape_r1(&op->out[0], &so);
    return th_interp_kstatus(th_mean_s8(NULL, &mp, &q, &si, (const int8_t *)op->in[0].data, &so,
                                        (int8_t *)op->out[0].data));
}
