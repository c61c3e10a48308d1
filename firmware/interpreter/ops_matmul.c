/*
 * ops_matmul.c - BATCH_MATMUL, int8 (kernel id 59): both operands activations or constants,
 * batch dims broadcast, adj_x / adj_y. Parameter words: TH_MATMUL_P_* (th_interp_abi.h); the
 * activation range is int8's (TFLM's BATCH_MATMUL has no fused activation).
 */
#include "ops_common.h"

static void matmul_params(const th_interp_op *op, th_batch_matmul_params *mp,
                          th_per_tensor_quant *q)
{
    const int32_t *p = op->params;
    mp->lhs_offset = p[TH_MATMUL_P_LHS_OFFSET];
    mp->rhs_offset = p[TH_MATMUL_P_RHS_OFFSET];
    mp->output_offset = p[TH_MATMUL_P_OUTPUT_OFFSET];
    mp->adj_x = p[TH_MATMUL_P_ADJ_X];
    mp->adj_y = p[TH_MATMUL_P_ADJ_Y];
    mp->activation.min = -128;
    mp->activation.max = 127;
    q->multiplier = p[TH_MATMUL_P_MULTIPLIER];
    q->shift = p[TH_MATMUL_P_SHIFT];
}

th_interp_status th_interp_batch_matmul_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const th_interp_tensor *a = &op->in[0], *b = &op->in[1], *y = &op->out[0];
    *scratch = 0;
    if (op->n_in != 2 || op->n_out != 1 || op->n_params != TH_MATMUL_WORDS ||
        !th_interp_s8_any(a) || !th_interp_s8_any(b) || !th_interp_s8_any(y) || a->rank < 2 ||
        b->rank < 2 || y->rank < a->rank || y->rank < b->rank) {
        return TH_INTERP_E_PARAMS;
    }
    const int32_t *p = op->params;
    const uint32_t r = y->rank;
    const int32_t adj_x = p[TH_MATMUL_P_ADJ_X], adj_y = p[TH_MATMUL_P_ADJ_Y];
    if ((adj_x & ~1) != 0 || (adj_y & ~1) != 0 || p[TH_MATMUL_P_SHIFT] < -31 ||
        p[TH_MATMUL_P_SHIFT] > 30 || p[TH_MATMUL_P_LHS_OFFSET] < -127 ||
        p[TH_MATMUL_P_LHS_OFFSET] > 128 || p[TH_MATMUL_P_RHS_OFFSET] < -127 ||
        p[TH_MATMUL_P_RHS_OFFSET] > 128) {
        return TH_INTERP_E_PARAMS;
    }
    const int32_t rows = adj_x ? a->dims[a->rank - 1] : a->dims[a->rank - 2];
    const int32_t depth = adj_x ? a->dims[a->rank - 2] : a->dims[a->rank - 1];
    const int32_t depth_b = adj_y ? b->dims[b->rank - 1] : b->dims[b->rank - 2];
    const int32_t cols = adj_y ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
    if (depth != depth_b || y->dims[r - 2] != rows || y->dims[r - 1] != cols) {
        return TH_INTERP_E_PARAMS;
    }
    for (uint32_t d = 0; d + 2 < r; d++) { /* batch dims, aligned on the right */
        const int32_t da = d + a->rank >= r ? a->dims[d + a->rank - r] : 1;
        const int32_t db = d + b->rank >= r ? b->dims[d + b->rank - r] : 1;
        if ((da != y->dims[d] && da != 1) || (db != y->dims[d] && db != 1)) {
            return TH_INTERP_E_PARAMS;
        }
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_batch_matmul_s8_eval(const th_interp_op *op)
{
    th_batch_matmul_params mp;
    th_per_tensor_quant q;
    th_shape sa, sb, so;
    matmul_params(op, &mp, &q);
    th_interp_to_shape(&op->in[0], &sa);
    th_interp_to_shape(&op->in[1], &sb);
    th_interp_to_shape(&op->out[0], &so);
    return th_interp_kstatus(th_batch_matmul_s8(NULL, &mp, &q, &sa,
                                                (const int8_t *)op->in[0].data, &sb,
                                                (const int8_t *)op->in[1].data, &so,
                                                (int8_t *)op->out[0].data));
}
