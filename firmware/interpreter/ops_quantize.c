/*
 * ops_quantize.c - QUANTIZE float32 -> int8 (kernel id 13) and DEQUANTIZE int8 -> float32
 * (id 14), for models with float inputs or outputs. Words: TH_QUANTIZE_P_* (th_interp_abi.h).
 */
#include <string.h>

#include "ops_common.h"

static th_interp_status check(const th_interp_op *op, uint8_t in_type, uint8_t out_type)
{
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_QUANTIZE_WORDS || !x->present || !y->present ||
        x->dtype != in_type || y->dtype != out_type ||
        th_interp_elements(x) != th_interp_elements(y) || op->params[TH_QUANTIZE_P_ZERO_POINT] < -128 ||
        op->params[TH_QUANTIZE_P_ZERO_POINT] > 127) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static th_affine_params affine(const th_interp_op *op)
{
    th_affine_params a;
    memcpy(&a.scale, &op->params[TH_QUANTIZE_P_SCALE_BITS], sizeof a.scale);
    a.zero_point = op->params[TH_QUANTIZE_P_ZERO_POINT];
    return a;
}

th_interp_status th_interp_quantize_f32_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    return check(op, TH_INTERP_FLOAT32, TH_INTERP_INT8);
}

th_interp_status th_interp_quantize_f32_s8_eval(const th_interp_op *op)
{
    const th_affine_params a = affine(op);
    return th_interp_kstatus(th_quantize_f32_s8(NULL, &a, (int32_t)th_interp_elements(&op->in[0]),
                                                (const float *)op->in[0].data,
                                                (int8_t *)op->out[0].data));
}

th_interp_status th_interp_dequantize_s8_f32_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    return check(op, TH_INTERP_INT8, TH_INTERP_FLOAT32);
}

th_interp_status th_interp_dequantize_s8_f32_eval(const th_interp_op *op)
{
    const th_affine_params a = affine(op);
    return th_interp_kstatus(th_dequantize_s8_f32(NULL, &a,
                                                  (int32_t)th_interp_elements(&op->in[0]),
                                                  (const int8_t *)op->in[0].data,
                                                  (float *)op->out[0].data));
}
