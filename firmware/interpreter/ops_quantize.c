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

/* QUANTIZE int8 -> int16 (kernel id 72) and int16 -> int8 (id 73): TH_REQUANTIZE_P_*. */
static th_interp_status check_requantize(const th_interp_op *op, uint8_t in_type,
                                         uint8_t out_type)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    const int32_t in_zp = p[TH_REQUANTIZE_P_INPUT_ZERO_POINT];
    const int32_t out_zp = p[TH_REQUANTIZE_P_OUTPUT_ZERO_POINT];
    const int32_t in_lo = in_type == TH_INTERP_INT8 ? -128 : -32768;
    const int32_t out_lo = out_type == TH_INTERP_INT8 ? -128 : -32768;
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_REQUANTIZE_WORDS ||
        !x->present || !y->present || x->dtype != in_type || y->dtype != out_type ||
        th_interp_elements(x) != th_interp_elements(y) || in_zp < in_lo || in_zp > -in_lo - 1 ||
        out_zp < out_lo || out_zp > -out_lo - 1 || p[TH_REQUANTIZE_P_MULTIPLIER] < 0 ||
        p[TH_REQUANTIZE_P_SHIFT] < -31 || p[TH_REQUANTIZE_P_SHIFT] > 30) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

/* Either direction: to16 != 0 for int8 -> int16. */
static th_interp_status requantize_eval(const th_interp_op *op, int to16)
{
    th_requantize_params rp;
    th_per_tensor_quant q;
    const int32_t n = (int32_t)th_interp_elements(&op->in[0]);
    rp.input_zero_point = op->params[TH_REQUANTIZE_P_INPUT_ZERO_POINT];
    rp.output_zero_point = op->params[TH_REQUANTIZE_P_OUTPUT_ZERO_POINT];
    q.multiplier = op->params[TH_REQUANTIZE_P_MULTIPLIER];
    q.shift = op->params[TH_REQUANTIZE_P_SHIFT];
    return th_interp_kstatus(
        to16 ? th_requantize_s8_s16(NULL, &rp, &q, n, (const int8_t *)op->in[0].data,
                                    (int16_t *)op->out[0].data)
             : th_requantize_s16_s8(NULL, &rp, &q, n, (const int16_t *)op->in[0].data,
                                    (int8_t *)op->out[0].data));
}

th_interp_status th_interp_requantize_s8_s16_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    return check_requantize(op, TH_INTERP_INT8, TH_INTERP_INT16);
}

th_interp_status th_interp_requantize_s8_s16_eval(const th_interp_op *op)
{
    return requantize_eval(op, 1);
}

th_interp_status th_interp_requantize_s16_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    return check_requantize(op, TH_INTERP_INT16, TH_INTERP_INT8);
}

th_interp_status th_interp_requantize_s16_s8_eval(const th_interp_op *op)
{
    return requantize_eval(op, 0);
}
