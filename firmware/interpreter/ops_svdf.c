/*
 * ops_svdf.c - SVDF int8 with an int16 state (kernel id 70).
 *
 * Inputs: x int8 [batches, input_size], weights_feature int8 const [filters, input_size],
 * weights_time int16 const [filters, memory], bias int32 const [units] or absent, the state
 * int16 [batches, filters * memory] (a variable arena tensor: read and written in place,
 * kept across invokes, reset by th_interp_reset_state); output int8 [batches, units].
 * Parameter words: TH_SVDF_P_* (th_interp_abi.h).
 */
#include "ops_common.h"

typedef struct {
    th_svdf_params params;
    th_svdf_quant quant;
    th_dims in, wf, wt, out;
} svdf_setup;

static th_interp_status setup(const th_interp_op *op, svdf_setup *s)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *wf = &op->in[1], *wt = &op->in[2];
    const th_interp_tensor *b = &op->in[3], *st = &op->in[4], *y = &op->out[0];
    if (op->n_in != 5 || op->n_out != 1 || op->n_params != TH_SVDF_WORDS ||
        !th_interp_is(x, TH_INTERP_INT8, 2) || !th_interp_is(wf, TH_INTERP_INT8, 2) ||
        !th_interp_is(wt, TH_INTERP_INT16, 2) || !th_interp_is(st, TH_INTERP_INT16, 2) ||
        !th_interp_is(y, TH_INTERP_INT8, 2) || (st->flags & TH_TENSOR_VARIABLE) == 0) {
        return TH_INTERP_E_PARAMS;
    }
    const int32_t batches = x->dims[0], n_input = x->dims[1], filters = wf->dims[0];
    const int32_t memory = wt->dims[1], rank = p[TH_SVDF_P_RANK];
    if (rank <= 0 || filters % rank != 0 || wf->dims[1] != n_input || wt->dims[0] != filters ||
        y->dims[0] != batches || y->dims[1] != filters / rank || st->dims[0] != batches ||
        (int64_t)st->dims[1] != (int64_t)filters * memory) {
        return TH_INTERP_E_PARAMS;
    }
    if (b->present && (!th_interp_is(b, TH_INTERP_INT32, 1) || b->dims[0] != filters / rank)) {
        return TH_INTERP_E_PARAMS;
    }
    s->params.input_offset = p[TH_SVDF_P_INPUT_OFFSET];
    s->params.output_offset = p[TH_SVDF_P_OUTPUT_OFFSET];
    s->params.rank = rank;
    s->quant.feature_multiplier = p[TH_SVDF_P_FEATURE_MULTIPLIER];
    s->quant.feature_shift = p[TH_SVDF_P_FEATURE_SHIFT];
    s->quant.time_multiplier = p[TH_SVDF_P_TIME_MULTIPLIER];
    s->quant.time_shift = p[TH_SVDF_P_TIME_SHIFT];
    s->in.n = batches;
    s->in.h = s->in.w = 1;
    s->in.c = n_input;
    s->wf.n = filters;
    s->wf.h = s->wf.w = 1;
    s->wf.c = n_input;
    s->wt.n = filters;
    s->wt.h = s->wt.w = 1;
    s->wt.c = memory;
    s->out.n = batches;
    s->out.h = s->out.w = 1;
    s->out.c = filters / rank;
    return TH_INTERP_OK;
}

th_interp_status th_interp_svdf_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    svdf_setup s;
    const th_interp_status st = setup(op, &s);
    *scratch = 0;
    if (st != TH_INTERP_OK) {
        return st;
    }
    if (s.params.input_offset < -127 || s.params.input_offset > 128 ||
        s.params.output_offset < -128 || s.params.output_offset > 127 ||
        s.quant.feature_multiplier < 0 || s.quant.time_multiplier < 0 ||
        s.quant.feature_shift < -31 || s.quant.feature_shift > 30 ||
        s.quant.time_shift < -31 || s.quant.time_shift > 30) {
        return TH_INTERP_E_PARAMS;
    }
    *scratch = (uint32_t)th_svdf_s8_scratch_size(&s.params, &s.in, &s.wf, &s.wt);
    return TH_INTERP_OK;
}

th_interp_status th_interp_svdf_s8_eval(const th_interp_op *op)
{
    svdf_setup s;
    th_context kctx = {op->scratch, (int32_t)op->scratch_size};
    if (setup(op, &s) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    return th_interp_kstatus(th_svdf_s8(
        &kctx, &s.params, &s.quant, &s.in, (const int8_t *)op->in[0].data, &s.wf,
        (const int8_t *)op->in[1].data, &s.wt, (const int16_t *)op->in[2].data,
        op->in[3].present ? (const int32_t *)op->in[3].data : NULL, (int16_t *)op->in[4].data,
        &s.out, (int8_t *)op->out[0].data));
}
