/*
 * ops_shape.c - data movement, int8: PAD/PADV2 (kernel id 16), CONCATENATION (17),
 * TRANSPOSE (18), STRIDED_SLICE (19). Shapes are checked against the params at load.
 * Parameter words: TH_PAD_P_*, TH_CONCAT_P_*, TH_TRANSPOSE_P_*, TH_SLICE_P_* (th_interp_abi.h;
 * per-dimension arrays of TH_INTERP_MAX_RANK words, resolved on the host).
 */
#include "ops_common.h"

static int unary_s8(const th_interp_op *op, uint32_t words)
{
    return op->n_in == 1 && op->n_out == 1 && op->n_params == words &&
           th_interp_s8_any(&op->in[0]) && th_interp_s8_any(&op->out[0]) &&
           op->in[0].rank >= 1;
}

th_interp_status th_interp_pad_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    *scratch = 0;
    if (!unary_s8(op, TH_PAD_WORDS) || y->rank != x->rank || p[TH_PAD_P_PAD_VALUE] < -128 || p[TH_PAD_P_PAD_VALUE] > 127) {
        return TH_INTERP_E_PARAMS;
    }
    for (uint32_t d = 0; d < TH_MAX_RANK; d++) {
        const int32_t before = p[TH_PAD_P_BEFORE + d], after = p[TH_PAD_P_AFTER + d];
        if (before < 0 || after < 0 || (d >= x->rank && (before | after) != 0) ||
            (d < x->rank && (int64_t)x->dims[d] + before + after != y->dims[d])) {
            return TH_INTERP_E_PARAMS;
        }
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_pad_s8_eval(const th_interp_op *op)
{
    th_pad_params pp;
    th_shape si, so;
    pp.pad_value = op->params[TH_PAD_P_PAD_VALUE];
    for (uint32_t d = 0; d < TH_MAX_RANK; d++) {
        pp.before[d] = op->params[TH_PAD_P_BEFORE + d];
        pp.after[d] = op->params[TH_PAD_P_AFTER + d];
    }
    th_interp_to_shape(&op->in[0], &si);
    th_interp_to_shape(&op->out[0], &so);
    return th_interp_kstatus(th_pad_s8(NULL, &pp, &si, (const int8_t *)op->in[0].data, &so,
                                       (int8_t *)op->out[0].data));
}

th_interp_status th_interp_concat_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const th_interp_tensor *y = &op->out[0];
    const int32_t axis = op->n_params == TH_CONCAT_WORDS ? op->params[TH_CONCAT_P_AXIS] : -1;
    int64_t sum = 0;
    *scratch = 0;
    if (op->n_in < 1 || op->n_out != 1 || op->n_params != TH_CONCAT_WORDS || !th_interp_s8_any(y) ||
        axis < 0 || axis >= (int32_t)y->rank) {
        return TH_INTERP_E_PARAMS;
    }
    for (uint32_t k = 0; k < op->n_in; k++) {
        const th_interp_tensor *x = &op->in[k];
        if (!th_interp_s8_any(x) || x->rank != y->rank) {
            return TH_INTERP_E_PARAMS;
        }
        for (uint32_t d = 0; d < y->rank; d++) {
            if ((int32_t)d != axis && x->dims[d] != y->dims[d]) {
                return TH_INTERP_E_PARAMS;
            }
        }
        sum += x->dims[axis];
    }
    return sum == y->dims[axis] ? TH_INTERP_OK : TH_INTERP_E_PARAMS;
}

th_interp_status th_interp_concat_s8_eval(const th_interp_op *op)
{
    th_concat_params cp;
    th_shape shapes[TH_INTERP_MAX_OP_INPUTS], so;
    const int8_t *inputs[TH_INTERP_MAX_OP_INPUTS];
    cp.axis = op->params[TH_CONCAT_P_AXIS];
    cp.num_inputs = (int32_t)op->n_in;
    for (uint32_t k = 0; k < op->n_in; k++) {
        th_interp_to_shape(&op->in[k], &shapes[k]);
        inputs[k] = (const int8_t *)op->in[k].data;
    }
    th_interp_to_shape(&op->out[0], &so);
    return th_interp_kstatus(th_concat_s8(NULL, &cp, shapes, inputs, &so,
                                          (int8_t *)op->out[0].data));
}

th_interp_status th_interp_transpose_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    uint32_t seen = 0;
    *scratch = 0;
    if (!unary_s8(op, TH_TRANSPOSE_WORDS) || y->rank != x->rank) {
        return TH_INTERP_E_PARAMS;
    }
    for (uint32_t d = 0; d < x->rank; d++) {
        const int32_t src = op->params[TH_TRANSPOSE_P_PERM + d];
        if (src < 0 || src >= (int32_t)x->rank || ((seen >> src) & 1u) != 0 ||
            y->dims[d] != x->dims[src]) {
            return TH_INTERP_E_PARAMS;
        }
        seen |= 1u << src;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_transpose_s8_eval(const th_interp_op *op)
{
    th_transpose_params tp;
    th_shape si, so;
    for (uint32_t d = 0; d < TH_MAX_RANK; d++) {
        tp.perm[d] = d < op->in[0].rank ? op->params[TH_TRANSPOSE_P_PERM + d] : (int32_t)d;
    }
    th_interp_to_shape(&op->in[0], &si);
    th_interp_to_shape(&op->out[0], &so);
    return th_interp_kstatus(th_transpose_s8(NULL, &tp, &si, (const int8_t *)op->in[0].data, &so,
                                             (int8_t *)op->out[0].data));
}

th_interp_status th_interp_strided_slice_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0];
    uint64_t count = 1;
    *scratch = 0;
    if (!unary_s8(op, TH_SLICE_WORDS)) {
        return TH_INTERP_E_PARAMS;
    }
    for (uint32_t d = 0; d < x->rank; d++) {
        const int64_t begin = p[TH_SLICE_P_BEGIN + d], stride = p[TH_SLICE_P_STRIDE + d],
                      n = p[TH_SLICE_P_COUNT + d];
        /* first and last index inside the input dim */
        if (stride == 0 || n < 1 || begin < 0 || begin >= x->dims[d] ||
            begin + (n - 1) * stride < 0 || begin + (n - 1) * stride >= x->dims[d]) {
            return TH_INTERP_E_PARAMS;
        }
        count *= (uint64_t)n;
    }
    return count == th_interp_elements(&op->out[0]) ? TH_INTERP_OK : TH_INTERP_E_PARAMS;
}

th_interp_status th_interp_strided_slice_s8_eval(const th_interp_op *op)
{
    th_strided_slice_params sp;
    th_shape si, so;
    th_interp_to_shape(&op->in[0], &si);
    so.rank = si.rank;
    for (uint32_t d = 0; d < TH_MAX_RANK; d++) {
        sp.begin[d] = d < (uint32_t)si.rank ? op->params[TH_SLICE_P_BEGIN + d] : 0;
        sp.stride[d] = d < (uint32_t)si.rank ? op->params[TH_SLICE_P_STRIDE + d] : 1;
        so.dims[d] = d < (uint32_t)si.rank ? op->params[TH_SLICE_P_COUNT + d] : 1;
    }
    return th_interp_kstatus(th_strided_slice_s8(NULL, &sp, &si, (const int8_t *)op->in[0].data,
                                                 &so, (int8_t *)op->out[0].data));
}
