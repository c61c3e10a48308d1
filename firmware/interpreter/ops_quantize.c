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

/* QUANTIZE int8 -> int16 (kernel id 72), int16 -> int8 (73) and to and from int32 (104-107):
 * TH_REQUANTIZE_P_*. */
/* The smallest value of an integer blob type (TH_INTERP_INT8 / INT16 / INT32). */
static int32_t type_min(uint8_t type)
{
    return type == TH_INTERP_INT8 ? INT8_MIN : (type == TH_INTERP_INT16 ? INT16_MIN : INT32_MIN);
}

static th_interp_status check_requantize(const th_interp_op *op, uint8_t in_type,
                                         uint8_t out_type)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    const int32_t in_zp = p[TH_REQUANTIZE_P_INPUT_ZERO_POINT];
    const int32_t out_zp = p[TH_REQUANTIZE_P_OUTPUT_ZERO_POINT];
    const int32_t in_lo = type_min(in_type), out_lo = type_min(out_type);
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_REQUANTIZE_WORDS ||
        !x->present || !y->present || x->dtype != in_type || y->dtype != out_type ||
        th_interp_elements(x) != th_interp_elements(y) || in_zp < in_lo ||
        in_zp > -(in_lo + 1) || out_zp < out_lo || out_zp > -(out_lo + 1) ||
        p[TH_REQUANTIZE_P_MULTIPLIER] < 0 || p[TH_REQUANTIZE_P_SHIFT] < -31 ||
        p[TH_REQUANTIZE_P_SHIFT] > 30) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

/* Any direction, by the tensors' types (checked in prepare). */
static th_interp_status requantize_eval(const th_interp_op *op)
{
    th_requantize_params rp;
    th_per_tensor_quant q;
    const int32_t n = (int32_t)th_interp_elements(&op->in[0]);
    rp.input_zero_point = op->params[TH_REQUANTIZE_P_INPUT_ZERO_POINT];
    rp.output_zero_point = op->params[TH_REQUANTIZE_P_OUTPUT_ZERO_POINT];
    q.multiplier = op->params[TH_REQUANTIZE_P_MULTIPLIER];
    q.shift = op->params[TH_REQUANTIZE_P_SHIFT];
    const void *x = op->in[0].data;
    void *y = op->out[0].data;
    const uint8_t from = op->in[0].dtype, to = op->out[0].dtype;
    th_status st;
    if (from == TH_INTERP_INT8 && to == TH_INTERP_INT16) {
        st = th_requantize_s8_s16(NULL, &rp, &q, n, (const int8_t *)x, (int16_t *)y);
    } else if (from == TH_INTERP_INT16 && to == TH_INTERP_INT8) {
        st = th_requantize_s16_s8(NULL, &rp, &q, n, (const int16_t *)x, (int8_t *)y);
    } else if (from == TH_INTERP_INT8) {
        st = th_requantize_s8_s32(NULL, &rp, &q, n, (const int8_t *)x, (int32_t *)y);
    } else if (from == TH_INTERP_INT16) {
        st = th_requantize_s16_s32(NULL, &rp, &q, n, (const int16_t *)x, (int32_t *)y);
    } else if (to == TH_INTERP_INT8) {
        st = th_requantize_s32_s8(NULL, &rp, &q, n, (const int32_t *)x, (int8_t *)y);
    } else {
        st = th_requantize_s32_s16(NULL, &rp, &q, n, (const int32_t *)x, (int16_t *)y);
    }
    return th_interp_kstatus(st);
}

/* One prepare / eval pair per direction: prepare checks the tensor types and words, eval
 * dispatches on the types. */
#define TH_REQUANTIZE_ADAPTER(name, in_type, out_type)                                      \
    th_interp_status th_interp_requantize_##name##_prepare(const th_interp_op *op,          \
                                                           uint32_t *scratch)               \
    {                                                                                       \
        *scratch = 0;                                                                       \
        return check_requantize(op, in_type, out_type);                                     \
    }                                                                                       \
    th_interp_status th_interp_requantize_##name##_eval(const th_interp_op *op)             \
    {                                                                                       \
        return requantize_eval(op);                                                         \
    }

TH_REQUANTIZE_ADAPTER(s8_s16, TH_INTERP_INT8, TH_INTERP_INT16)
TH_REQUANTIZE_ADAPTER(s16_s8, TH_INTERP_INT16, TH_INTERP_INT8)
TH_REQUANTIZE_ADAPTER(s8_s32, TH_INTERP_INT8, TH_INTERP_INT32)
TH_REQUANTIZE_ADAPTER(s16_s32, TH_INTERP_INT16, TH_INTERP_INT32)
TH_REQUANTIZE_ADAPTER(s32_s8, TH_INTERP_INT32, TH_INTERP_INT8)
TH_REQUANTIZE_ADAPTER(s32_s16, TH_INTERP_INT32, TH_INTERP_INT16)
