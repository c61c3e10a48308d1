/*
 * ops_lut.c - unary int8 -> int8 ops through a 256-entry table (kernel id 12): LOGISTIC,
 * TANH, RELU, RELU6, LEAKY_RELU, HARD_SWISH and int8 -> int8 QUANTIZE. The host builds the
 * table by running the reference on every int8 value (th_nn.h, "LUT design").
 * Parameter words: TH_LUT_P_TABLE, the constants offset of 256 int8 (th_interp_abi.h).
 * Also int16 LOGISTIC and TANH (ids 101, 102), which interpolate a 256-entry uint16 table.
 */
#include "ops_common.h"

th_interp_status th_interp_lut_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_LUT_WORDS || !th_interp_s8_any(&op->in[0]) ||
        !th_interp_s8_any(&op->out[0]) || op->in[0].bytes != op->out[0].bytes ||
        th_interp_const(op, op->params[TH_LUT_P_TABLE], 256u, 1u) == NULL) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_lut_s8_eval(const th_interp_op *op)
{
    const int8_t *table = th_interp_const(op, op->params[TH_LUT_P_TABLE], 256u, 1u);
    return th_interp_kstatus(th_lut_s8(NULL, table, (int32_t)op->in[0].bytes,
                                       (const int8_t *)op->in[0].data,
                                       (int8_t *)op->out[0].data));
}

/* int16 LOGISTIC and TANH (kernel ids 101, 102): int16 in and out of the same element count
 * (in place allowed), words TH_SIGMOID16_P_* -- Prepare's input (multiplier, shift) and the
 * constants offset of the 256-entry uint16 sigmoid table. */
static th_interp_status sigmoid16_check(const th_interp_op *op)
{
    const int32_t m = op->params[TH_SIGMOID16_P_MULTIPLIER], e = op->params[TH_SIGMOID16_P_SHIFT];
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_SIGMOID16_WORDS ||
        !op->in[0].present || !op->out[0].present || op->in[0].data == NULL ||
        op->out[0].data == NULL || op->in[0].dtype != TH_INTERP_INT16 ||
        op->out[0].dtype != TH_INTERP_INT16 || op->in[0].bytes != op->out[0].bytes ||
        m < 0 || e < 0 || e > 31 || (m == 0 && e > 13) ||
        th_interp_const(op, op->params[TH_SIGMOID16_P_SIGMOID_TABLE], 256u, 2u) == NULL) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static th_interp_status sigmoid16_eval(const th_interp_op *op, int tanh)
{
    const uint16_t *table = th_interp_const(op, op->params[TH_SIGMOID16_P_SIGMOID_TABLE], 256u,
                                            2u);
    th_per_tensor_quant q;
    q.multiplier = op->params[TH_SIGMOID16_P_MULTIPLIER];
    q.shift = op->params[TH_SIGMOID16_P_SHIFT];
    const int32_t n = (int32_t)(op->in[0].bytes / 2u);
    const int16_t *x = (const int16_t *)op->in[0].data;
    int16_t *y = (int16_t *)op->out[0].data;
    return th_interp_kstatus(tanh ? th_tanh_s16(NULL, &q, table, n, x, y)
                                  : th_logistic_s16(NULL, &q, table, n, x, y));
}

th_interp_status th_interp_logistic_s16_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    return sigmoid16_check(op);
}

th_interp_status th_interp_logistic_s16_eval(const th_interp_op *op)
{
    return sigmoid16_eval(op, 0);
}

th_interp_status th_interp_tanh_s16_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    return sigmoid16_check(op);
}

th_interp_status th_interp_tanh_s16_eval(const th_interp_op *op)
{
    return sigmoid16_eval(op, 1);
}
