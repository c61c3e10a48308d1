/*
 * ops_16x8.c - 16x8 adapters (int16 activations, int8 weights, int64 bias): FULLY_CONNECTED
 * (kernel id 36), CONV_2D (37), DEPTHWISE_CONV_2D (38).
 *
 * Inputs: x (int16, arena), weights (int8 const, plain layout in every build), bias (int64
 * const [Cout] or absent); output int16. Parameter words: TH_FC_S16_P_* /
 * TH_CONV2D_S16_P_* / TH_DWCONV2D_S16_P_* (th_interp_abi.h); multiplier and shift are
 * constants-section offsets of [Cout] int32 arrays. The kernels check offsets (0),
 * activation range and shifts themselves; prepare runs them on nothing but the checks.
 */
#include "ops_common.h"

typedef struct {
    th_dims in, filter, out;
    th_per_channel_quant quant;
    th_conv_params conv;
    th_dw_conv_params dw;
    th_fc_params fc;
} s16_setup;

enum { KIND_FC = 0, KIND_CONV = 1, KIND_DW = 2 };

static th_interp_status setup_fc(const th_interp_op *op, s16_setup *s)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *w = &op->in[1], *y = &op->out[0];
    if (op->n_params != TH_FC_S16_WORDS || !th_interp_is(w, TH_INTERP_INT8, 2) ||
        !x->present || x->dtype != TH_INTERP_INT16 || !y->present ||
        y->dtype != TH_INTERP_INT16) {
        return TH_INTERP_E_PARAMS;
    }
    const int32_t cout = w->dims[0], cin = w->dims[1];
    const uint32_t x_elems = th_interp_elements(x), y_elems = th_interp_elements(y);
    if (x_elems % (uint32_t)cin != 0 ||
        (uint64_t)(x_elems / (uint32_t)cin) * (uint32_t)cout != y_elems) {
        return TH_INTERP_E_PARAMS;
    }
    s->in.n = s->out.n = (int32_t)(x_elems / (uint32_t)cin);
    s->in.h = s->in.w = s->filter.h = s->filter.w = s->out.h = s->out.w = 1;
    s->in.c = s->filter.c = cin;
    s->filter.n = s->out.c = cout;
    s->fc.input_offset = p[TH_FC_S16_P_INPUT_OFFSET];
    s->fc.filter_offset = p[TH_FC_S16_P_FILTER_OFFSET];
    s->fc.output_offset = p[TH_FC_S16_P_OUTPUT_OFFSET];
    s->fc.activation.min = p[TH_FC_S16_P_ACT_MIN];
    s->fc.activation.max = p[TH_FC_S16_P_ACT_MAX];
    s->quant.multiplier = th_interp_const(op, p[TH_FC_S16_P_MULTIPLIER], (uint32_t)cout, 4);
    s->quant.shift = th_interp_const(op, p[TH_FC_S16_P_SHIFT], (uint32_t)cout, 4);
    return TH_INTERP_OK;
}

static th_interp_status setup_conv(const th_interp_op *op, int depthwise, s16_setup *s)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *w = &op->in[1], *y = &op->out[0];
    if (op->n_params != (depthwise ? TH_DWCONV2D_S16_WORDS : TH_CONV2D_S16_WORDS) ||
        !th_interp_is(x, TH_INTERP_INT16, 4) || !th_interp_is(w, TH_INTERP_INT8, 4) ||
        !th_interp_is(y, TH_INTERP_INT16, 4) || (w->flags & TH_TENSOR_INTERLEAVED) != 0) {
        return TH_INTERP_E_PARAMS;
    }
    th_interp_dims4(x, &s->in);
    th_interp_dims4(w, &s->filter);
    th_interp_dims4(y, &s->out);
    th_tile stride, pad, dil;
    stride.h = p[TH_CONV2D_S16_P_STRIDE_H];
    stride.w = p[TH_CONV2D_S16_P_STRIDE_W];
    pad.h = p[TH_CONV2D_S16_P_PAD_TOP];
    pad.w = p[TH_CONV2D_S16_P_PAD_LEFT];
    dil.h = p[TH_CONV2D_S16_P_DILATION_H];
    dil.w = p[TH_CONV2D_S16_P_DILATION_W];
    if (!th_interp_window_ok(s->in.h, s->out.h, s->filter.h, stride.h, dil.h, pad.h) ||
        !th_interp_window_ok(s->in.w, s->out.w, s->filter.w, stride.w, dil.w, pad.w)) {
        return TH_INTERP_E_PARAMS;
    }
    const int32_t cout = s->out.c;
    s->quant.multiplier = th_interp_const(op, p[TH_CONV2D_S16_P_MULTIPLIER], (uint32_t)cout, 4);
    s->quant.shift = th_interp_const(op, p[TH_CONV2D_S16_P_SHIFT], (uint32_t)cout, 4);
    if (depthwise) {
        s->dw.input_offset = p[TH_DWCONV2D_S16_P_INPUT_OFFSET];
        s->dw.output_offset = p[TH_DWCONV2D_S16_P_OUTPUT_OFFSET];
        s->dw.ch_mult = p[TH_DWCONV2D_S16_P_CH_MULT];
        s->dw.stride = stride;
        s->dw.padding = pad;
        s->dw.dilation = dil;
        s->dw.activation.min = p[TH_DWCONV2D_S16_P_ACT_MIN];
        s->dw.activation.max = p[TH_DWCONV2D_S16_P_ACT_MAX];
        if (s->filter.n != 1 || s->filter.c != cout) {
            return TH_INTERP_E_PARAMS;
        }
    } else {
        s->conv.input_offset = p[TH_CONV2D_S16_P_INPUT_OFFSET];
        s->conv.output_offset = p[TH_CONV2D_S16_P_OUTPUT_OFFSET];
        s->conv.stride = stride;
        s->conv.padding = pad;
        s->conv.dilation = dil;
        s->conv.activation.min = p[TH_CONV2D_S16_P_ACT_MIN];
        s->conv.activation.max = p[TH_CONV2D_S16_P_ACT_MAX];
    }
    return TH_INTERP_OK;
}

static th_interp_status setup(const th_interp_op *op, int kind, s16_setup *s)
{
    const th_interp_tensor *b = &op->in[2];
    if (op->n_in != 3 || op->n_out != 1) {
        return TH_INTERP_E_PARAMS;
    }
    const th_interp_status st = kind == KIND_FC ? setup_fc(op, s)
                                                : setup_conv(op, kind == KIND_DW, s);
    if (st != TH_INTERP_OK || s->quant.multiplier == NULL || s->quant.shift == NULL) {
        return TH_INTERP_E_PARAMS;
    }
    if (b->present && (!th_interp_is(b, TH_INTERP_INT64, 1) || b->dims[0] != s->out.c)) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static th_status run(const th_interp_op *op, int kind, const s16_setup *s)
{
    const int16_t *x = (const int16_t *)op->in[0].data;
    const int8_t *w = (const int8_t *)op->in[1].data;
    const int64_t *b = (const int64_t *)op->in[2].data;
    int16_t *y = (int16_t *)op->out[0].data;
    if (kind == KIND_FC) {
        return th_fully_connected_s16(NULL, &s->fc, &s->quant, &s->in, x, &s->filter, w, b,
                                      &s->out, y);
    }
    if (kind == KIND_DW) {
        return th_dw_conv_s16(NULL, &s->dw, &s->quant, &s->in, x, &s->filter, w, b, &s->out,
                              y);
    }
    return th_conv_s16(NULL, &s->conv, &s->quant, &s->in, x, &s->filter, w, b, &s->out, y);
}

/* Prepare: the setup's checks and the kernels' entry checks (offsets, activation range,
 * shifts, channel counts), so a bad blob fails at init rather than at the first invoke. */
static th_interp_status prepare(const th_interp_op *op, int kind, uint32_t *scratch)
{
    s16_setup s;
    *scratch = 0;
    if (setup(op, kind, &s) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    const th_activation act = kind == KIND_FC ? s.fc.activation
                              : kind == KIND_DW ? s.dw.activation : s.conv.activation;
    const int32_t offsets = kind == KIND_FC ? (s.fc.input_offset | s.fc.filter_offset |
                                               s.fc.output_offset)
                            : kind == KIND_DW ? (s.dw.input_offset | s.dw.output_offset)
                                              : (s.conv.input_offset | s.conv.output_offset);
    if (offsets != 0 || act.min < -32768 || act.min > act.max || act.max > 32767) {
        return TH_INTERP_E_PARAMS;
    }
    for (int32_t c = 0; c < s.out.c; c++) {
        if (s.quant.multiplier[c] < 0 || s.quant.shift[c] < -31 || s.quant.shift[c] > 7) {
            return TH_INTERP_E_PARAMS;
        }
    }
    if (kind == KIND_DW && (s.dw.ch_mult < 1 || (int64_t)s.in.c * s.dw.ch_mult != s.out.c)) {
        return TH_INTERP_E_PARAMS;
    }
    if (kind == KIND_CONV && (s.filter.n != s.out.c || s.filter.c != s.in.c)) {
        return TH_INTERP_E_PARAMS;
    }
    return s.out.n == s.in.n ? TH_INTERP_OK : TH_INTERP_E_PARAMS;
}

static th_interp_status eval(const th_interp_op *op, int kind)
{
    s16_setup s;
    if (setup(op, kind, &s) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    return th_interp_kstatus(run(op, kind, &s));
}

th_interp_status th_interp_fc_s16_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare(op, KIND_FC, scratch);
}

th_interp_status th_interp_fc_s16_eval(const th_interp_op *op)
{
    return eval(op, KIND_FC);
}

th_interp_status th_interp_conv2d_s16_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare(op, KIND_CONV, scratch);
}

th_interp_status th_interp_conv2d_s16_eval(const th_interp_op *op)
{
    return eval(op, KIND_CONV);
}

th_interp_status th_interp_dwconv2d_s16_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare(op, KIND_DW, scratch);
}

th_interp_status th_interp_dwconv2d_s16_eval(const th_interp_op *op)
{
    return eval(op, KIND_DW);
}
