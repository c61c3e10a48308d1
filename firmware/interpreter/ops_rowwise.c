/*
 * ops_rowwise.c - row and scan ops of issue 17, int8: LOG_SOFTMAX (kernel id 90),
 * L2_NORMALIZATION (91), CUMSUM (92). The input and output have the same element count,
 * checked at load against the parameter words' (rows, depth) or (outer, axis_size, inner).
 * Parameter words: TH_LOG_SOFTMAX_P_*, TH_L2NORM_P_*, TH_CUMSUM_P_* (th_interp_abi.h).
 */
#include "ops_common.h"

/* One int8 input and output whose element counts are both `count` (> 0). */
static th_interp_status same_count_s8(const th_interp_op *op, uint32_t words, int64_t count)
{
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != words ||
        !th_interp_s8_any(&op->in[0]) || !th_interp_s8_any(&op->out[0]) || count < 1 ||
        (uint64_t)count != th_interp_elements(&op->in[0]) ||
        (uint64_t)count != th_interp_elements(&op->out[0])) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static int64_t rows_count(const th_interp_op *op, uint32_t rows, uint32_t depth)
{
    const int32_t r = op->params[rows], d = op->params[depth];
    return r < 1 || d < 1 ? 0 : (int64_t)r * d;
}

th_interp_status th_interp_log_softmax_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    if (op->n_params != TH_LOG_SOFTMAX_WORDS) {
        return TH_INTERP_E_PARAMS;
    }
    return same_count_s8(op, TH_LOG_SOFTMAX_WORDS,
                         rows_count(op, TH_LOG_SOFTMAX_P_ROWS, TH_LOG_SOFTMAX_P_DEPTH));
}

th_interp_status th_interp_log_softmax_s8_eval(const th_interp_op *op)
{
    const int32_t *w = op->params;
    const th_log_softmax_params p = {
        w[TH_LOG_SOFTMAX_P_INPUT_MULTIPLIER], w[TH_LOG_SOFTMAX_P_INPUT_LEFT_SHIFT],
        w[TH_LOG_SOFTMAX_P_REVERSE_MULTIPLIER], w[TH_LOG_SOFTMAX_P_REVERSE_SHIFT],
        w[TH_LOG_SOFTMAX_P_DIFF_MIN]};
    return th_interp_kstatus(th_log_softmax_s8(NULL, &p, w[TH_LOG_SOFTMAX_P_ROWS],
                                               w[TH_LOG_SOFTMAX_P_DEPTH],
                                               (const int8_t *)op->in[0].data,
                                               (int8_t *)op->out[0].data));
}

th_interp_status th_interp_l2norm_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    if (op->n_params != TH_L2NORM_WORDS) {
        return TH_INTERP_E_PARAMS;
    }
    return same_count_s8(op, TH_L2NORM_WORDS,
                         rows_count(op, TH_L2NORM_P_ROWS, TH_L2NORM_P_DEPTH));
}

th_interp_status th_interp_l2norm_s8_eval(const th_interp_op *op)
{
    const int32_t *w = op->params;
    const th_l2norm_params p = {w[TH_L2NORM_P_INPUT_OFFSET]};
    return th_interp_kstatus(th_l2norm_s8(NULL, &p, w[TH_L2NORM_P_ROWS], w[TH_L2NORM_P_DEPTH],
                                          (const int8_t *)op->in[0].data,
                                          (int8_t *)op->out[0].data));
}

th_interp_status th_interp_cumsum_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    if (op->n_params != TH_CUMSUM_WORDS) {
        return TH_INTERP_E_PARAMS;
    }
    const int32_t *w = op->params;
    const int32_t outer = w[TH_CUMSUM_P_OUTER], axis = w[TH_CUMSUM_P_AXIS_SIZE];
    const int32_t inner = w[TH_CUMSUM_P_INNER];
    /* outer * axis checked first: three words up to 2^31 overflow even int64 */
    const int64_t outer_axis = outer < 1 || axis < 1 || inner < 1 ? 0 : (int64_t)outer * axis;
    const int64_t count = outer_axis > INT32_MAX ? 0 : outer_axis * inner;
    return same_count_s8(op, TH_CUMSUM_WORDS, count);
}

th_interp_status th_interp_cumsum_s8_eval(const th_interp_op *op)
{
    const int32_t *w = op->params;
    const th_cumsum_params p = {
        w[TH_CUMSUM_P_INPUT_OFFSET],      w[TH_CUMSUM_P_OUTPUT_OFFSET],
        w[TH_CUMSUM_P_INPUT_MULTIPLIER],  w[TH_CUMSUM_P_INPUT_SHIFT],
        w[TH_CUMSUM_P_OUTPUT_MULTIPLIER], w[TH_CUMSUM_P_OUTPUT_SHIFT],
        w[TH_CUMSUM_P_EXCLUSIVE],         w[TH_CUMSUM_P_REVERSE]};
    return th_interp_kstatus(th_cumsum_s8(NULL, &p, w[TH_CUMSUM_P_OUTER],
                                          w[TH_CUMSUM_P_AXIS_SIZE], w[TH_CUMSUM_P_INNER],
                                          (const int8_t *)op->in[0].data,
                                          (int8_t *)op->out[0].data));
}
