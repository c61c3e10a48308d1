/*
 * ops_fc.c - FULLY_CONNECTED adapters: per-tensor (kernel id 3) and per-channel (id 4).
 *
 * Inputs: x (int8, any shape with batches * Cin elements), weights (int8 const [Cout, Cin]),
 * bias (int32 const [Cout] or absent); output int8 with batches * Cout elements.
 * Parameter words: TH_FC_P_* (th_interp_abi.h); multiplier and shift are the values (per
 * tensor) or constants-section offsets of [Cout] int32 arrays (per channel).
 */
#include "th_interp_ops.h"
#include "th_nn.h"


typedef struct {
    th_fc_params params;
    th_dims in, filter, out;
    const int32_t *multiplier;
    const int32_t *shift;
} fc_setup;

static th_interp_status setup(const th_interp_op *op, int per_channel, fc_setup *s)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *w = &op->in[1], *b = &op->in[2], *y = &op->out[0];
    int32_t cin, cout;
    uint32_t x_elems, y_elems;
    if (op->n_in != 3 || op->n_out != 1 || op->n_params != TH_FC_WORDS ||
        !th_interp_is(w, TH_INTERP_INT8, 2) || !x->present || x->dtype != TH_INTERP_INT8 ||
        !y->present || y->dtype != TH_INTERP_INT8) {
        return TH_INTERP_E_PARAMS;
    }
    cout = w->dims[0];
    cin = w->dims[1];
    x_elems = th_interp_elements(x);
    y_elems = th_interp_elements(y);
    if (x_elems % (uint32_t)cin != 0 || (uint64_t)(x_elems / (uint32_t)cin) * (uint32_t)cout !=
                                            y_elems) {
        return TH_INTERP_E_PARAMS;
    }
    s->in.n = (int32_t)(x_elems / (uint32_t)cin);
    s->in.h = s->in.w = 1;
    s->in.c = cin;
    s->filter.n = cout;
    s->filter.h = s->filter.w = 1;
    s->filter.c = cin;
    s->out.n = s->in.n;
    s->out.h = s->out.w = 1;
    s->out.c = cout;
    s->params.input_offset = p[TH_FC_P_INPUT_OFFSET];
    s->params.filter_offset = p[TH_FC_P_FILTER_OFFSET];
    s->params.output_offset = p[TH_FC_P_OUTPUT_OFFSET];
    s->params.activation.min = p[TH_FC_P_ACT_MIN];
    s->params.activation.max = p[TH_FC_P_ACT_MAX];
    if (per_channel) {
        s->multiplier = th_interp_const(op, p[TH_FC_P_MULTIPLIER], (uint32_t)cout, 4);
        s->shift = th_interp_const(op, p[TH_FC_P_SHIFT], (uint32_t)cout, 4);
    } else {
        s->multiplier = &p[TH_FC_P_MULTIPLIER];
        s->shift = &p[TH_FC_P_SHIFT];
    }
    if (s->multiplier == NULL || s->shift == NULL) {
        return TH_INTERP_E_PARAMS;
    }
    if (b->present && (!th_interp_is(b, TH_INTERP_INT32, 1) || b->dims[0] != cout)) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static th_interp_status prepare(const th_interp_op *op, int per_channel, uint32_t *scratch)
{
    fc_setup s;
    const th_interp_tensor *w = &op->in[1];
    const uint64_t cin = (uint32_t)w->dims[1], cout = (uint32_t)w->dims[0];
    const int32_t count = per_channel ? w->dims[0] : 1;
    th_interp_status st = setup(op, per_channel, &s);
    if (st != TH_INTERP_OK) {
        return st;
    }
    if (s.params.input_offset < -127 || s.params.input_offset > 128 ||
        s.params.filter_offset < -127 || s.params.filter_offset > 128 ||
        (per_channel && s.params.filter_offset != 0) || s.params.output_offset < -128 ||
        s.params.output_offset > 127 || s.params.activation.min < -128 ||
        s.params.activation.min > s.params.activation.max || s.params.activation.max > 127) {
        return TH_INTERP_E_PARAMS;
    }
    if (((w->flags & TH_TENSOR_INTERLEAVED) != 0) != (TH_NN_FILTER_INTERLEAVED != 0) ||
        w->bytes != (TH_NN_FILTER_INTERLEAVED ? cout * ((cin + 3u) & ~(uint64_t)3u)
                                              : cout * cin)) {
        return TH_INTERP_E_PARAMS;
    }
    for (int32_t c = 0; c < count; c++) {
        if (s.multiplier[c] < 0 || s.shift[c] < -31 || s.shift[c] > 30) {
            return TH_INTERP_E_PARAMS;
        }
    }
    *scratch = 0; /* th_nn.h: FULLY_CONNECTED needs no scratch */
    return TH_INTERP_OK;
}

th_interp_status th_interp_fc_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare(op, 0, scratch);
}

th_interp_status th_interp_fc_pc_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare(op, 1, scratch);
}

th_interp_status th_interp_fc_s8_eval(const th_interp_op *op)
{
    fc_setup s;
    th_per_tensor_quant q;
    th_context kctx = {op->scratch, (int32_t)op->scratch_size};
    if (setup(op, 0, &s) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    q.multiplier = s.multiplier[0];
    q.shift = s.shift[0];
    return th_fully_connected_s8(&kctx, &s.params, &q, &s.in, (const int8_t *)op->in[0].data,
                                 &s.filter, (const int8_t *)op->in[1].data,
                                 (const int32_t *)op->in[2].data, &s.out,
                                 (int8_t *)op->out[0].data) == TH_OK
               ? TH_INTERP_OK
               : TH_INTERP_E_KERNEL_FAILED;
}

th_interp_status th_interp_fc_pc_s8_eval(const th_interp_op *op)
{
    fc_setup s;
    th_per_channel_quant q;
    th_context kctx = {op->scratch, (int32_t)op->scratch_size};
    if (setup(op, 1, &s) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    q.multiplier = s.multiplier;
    q.shift = s.shift;
    return th_fully_connected_per_channel_s8(
               &kctx, &s.params, &q, &s.in, (const int8_t *)op->in[0].data, &s.filter,
               (const int8_t *)op->in[1].data, (const int32_t *)op->in[2].data, &s.out,
               (int8_t *)op->out[0].data) == TH_OK
               ? TH_INTERP_OK
               : TH_INTERP_E_KERNEL_FAILED;
}
