/*
 * ops_lut.c - unary int8 -> int8 ops through a 256-entry table (kernel id 12): LOGISTIC,
 * TANH, RELU, RELU6, LEAKY_RELU, HARD_SWISH and int8 -> int8 QUANTIZE. The host builds the
 * table by running the reference on every int8 value (th_nn.h, "LUT design").
 * Parameter words: TH_LUT_P_TABLE, the constants offset of 256 int8 (th_interp_abi.h).
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
