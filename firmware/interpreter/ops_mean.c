/*
 * ops_mean.c - MEAN int8 (kernel id 15), SUM int8 (93) and REDUCE_MAX int8 (94), with the
 * same words (REDUCE_MAX reads only the axis mask).
 * Parameter words: TH_MEAN_P_* (th_interp_abi.h).
 */
#include "ops_common.h"

th_interp_status th_interp_mean_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    uint64_t kept = 1;
    *scratch = 0;
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_MEAN_WORDS || !th_interp_s8_any(x) ||
        !th_interp_s8_any(y) || x->rank < 1 || ((uint32_t)p[TH_MEAN_P_AXIS_MASK] >> x->rank) != 0 ||
        p[TH_MEAN_P_INPUT_ZERO_POINT] < -128 || p[TH_MEAN_P_INPUT_ZERO_POINT] > 127 || p[TH_MEAN_P_OUTPUT_ZERO_POINT] < -128 || p[TH_MEAN_P_OUTPUT_ZERO_POINT] > 127 || p[TH_MEAN_P_MULTIPLIER] < 0 || p[TH_MEAN_P_SHIFT] < -31 ||
        p[TH_MEAN_P_SHIFT] > 30) {
        return TH_INTERP_E_PARAMS;
    }
    for (uint32_t d = 0; d < x->rank; d++) {
        if ((((uint32_t)p[TH_MEAN_P_AXIS_MASK] >> d) & 1u) == 0) {
            kept *= (uint32_t)x->dims[d];
        }
    }
    return kept == th_interp_elements(y) ? TH_INTERP_OK : TH_INTERP_E_PARAMS;
}

/* 0: SUM, 1: MEAN, 2: REDUCE_MAX */
static th_interp_status sums_eval(const th_interp_op *op, int32_t mode)
{
    const int32_t *p = op->params;
    th_mean_params mp;
    th_per_tensor_quant q;
    th_shape si, so;
    mp.input_zero_point = p[TH_MEAN_P_INPUT_ZERO_POINT];
    mp.output_zero_point = p[TH_MEAN_P_OUTPUT_ZERO_POINT];
    mp.axis_mask = (uint32_t)p[TH_MEAN_P_AXIS_MASK];
    q.multiplier = p[TH_MEAN_P_MULTIPLIER];
    q.shift = p[TH_MEAN_P_SHIFT];
    th_interp_to_shape(&op->in[0], &si);
    th_interp_to_shape_r1(&op->out[0], &so);
    const int8_t *x = (const int8_t *)op->in[0].data;
    int8_t *y = (int8_t *)op->out[0].data;
    if (mode == 2) {
        return th_interp_kstatus(th_reduce_max_s8(NULL, &mp, &si, x, &so, y));
    }
    return th_interp_kstatus(mode ? th_mean_s8(NULL, &mp, &q, &si, x, &so, y)
                                    : th_sum_s8(NULL, &mp, &q, &si, x, &so, y));
}

th_interp_status th_interp_mean_s8_eval(const th_interp_op *op)
{
    return sums_eval(op, 1);
}

th_interp_status th_interp_sum_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return th_interp_mean_s8_prepare(op, scratch);
}

th_interp_status th_interp_sum_s8_eval(const th_interp_op *op)
{
    return sums_eval(op, 0);
}

th_interp_status th_interp_reduce_max_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return th_interp_mean_s8_prepare(op, scratch);
}

th_interp_status th_interp_reduce_max_s8_eval(const th_interp_op *op)
{
    return sums_eval(op, 2);
}
