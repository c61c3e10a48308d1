/*
 * ops_int4.c - CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED with packed int4 weights
 * (kernel ids 110, 111, 112; th_nn.h "INT4").
 *
 * Inputs: x (int8, arena), no weight tensor (absent), bias (int32 const [Cout] or absent).
 * Parameter words: TH_CONV2D_S4_P_* / TH_DWCONV2D_S4_P_* / TH_FC_S4_P_* (th_interp_abi.h);
 * multiplier, shift ([Cout] int32) and weights (the packed rows: Cout rows of round_up(K, 8)
 * values, K = KH*KW*Cin, KH*KW or Cin, two per byte) are constants-section offsets.
 */
#include "ops_common.h"

typedef struct {
    th_dims in, filter, out;
    th_per_channel_quant quant;
    const uint8_t *weights;
    th_conv_params cp;
    th_dw_conv_params dp;
} s4_conv_setup;

static uint32_t row_bytes(uint64_t k)
{
    return (uint32_t)(((k + 7u) & ~(uint64_t)7u) / 2u);
}

static th_interp_status quant_ok(const th_per_channel_quant *q, int32_t cout)
{
    if (q->multiplier == NULL || q->shift == NULL) {
        return TH_INTERP_E_PARAMS;
    }
    for (int32_t c = 0; c < cout; c++) {
        if (q->multiplier[c] < 0 || q->shift[c] < -31 || q->shift[c] > 30) {
            return TH_INTERP_E_PARAMS;
        }
    }
    return TH_INTERP_OK;
}

/* Conv and depthwise words agree up to SHIFT (th_interp_abi.h). */
static th_interp_status conv_setup(const th_interp_op *op, int depthwise, s4_conv_setup *s)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *w = &op->in[1], *b = &op->in[2], *y = &op->out[0];
    const uint32_t words = depthwise ? TH_DWCONV2D_S4_WORDS : TH_CONV2D_S4_WORDS;
    const int32_t fh = p[depthwise ? TH_DWCONV2D_S4_P_FILTER_H : TH_CONV2D_S4_P_FILTER_H];
    const int32_t fw = p[depthwise ? TH_DWCONV2D_S4_P_FILTER_W : TH_CONV2D_S4_P_FILTER_W];
    const int32_t woff = p[depthwise ? TH_DWCONV2D_S4_P_WEIGHTS : TH_CONV2D_S4_P_WEIGHTS];
    if (op->n_in != 3 || op->n_out != 1 || op->n_params != words || w->present ||
        !th_interp_is(x, TH_INTERP_INT8, 4) || !th_interp_is(y, TH_INTERP_INT8, 4) ||
        fh < 1 || fw < 1 || fh > 0xFFFF || fw > 0xFFFF) {
        return TH_INTERP_E_PARAMS;
    }
    th_interp_dims4(x, &s->in);
    th_interp_dims4(y, &s->out);
    const int32_t cout = s->out.c;
    s->filter.n = depthwise ? 1 : cout;
    s->filter.h = fh;
    s->filter.w = fw;
    s->filter.c = depthwise ? cout : s->in.c;
    const int32_t ch_mult = depthwise ? p[TH_DWCONV2D_S4_P_CH_MULT] : 1;
    const uint64_t k = (uint64_t)fh * (uint64_t)fw * (depthwise ? 1u : (uint32_t)s->in.c);
    if (s->out.n != s->in.n || k > 65536u || (depthwise && k * (uint64_t)cout > (1u << 28)) ||
        (depthwise && (ch_mult < 1 || (int64_t)s->in.c * ch_mult != cout))) {
        return TH_INTERP_E_PARAMS;
    }
    s->quant.multiplier = th_interp_const(op, p[TH_CONV2D_S4_P_MULTIPLIER], (uint32_t)cout, 4);
    s->quant.shift = th_interp_const(op, p[TH_CONV2D_S4_P_SHIFT], (uint32_t)cout, 4);
    /* conv: one row per output channel; depthwise: one run of KH*KW*C values (th_nn.h) */
    const uint32_t weight_words = depthwise ? row_bytes(k * (uint32_t)cout) / 4u
                                            : (uint32_t)cout * (row_bytes(k) / 4u);
    s->weights = th_interp_const(op, woff, weight_words, 4);
    if (s->weights == NULL || quant_ok(&s->quant, cout) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    if (b->present && (!th_interp_is(b, TH_INTERP_INT32, 1) || b->dims[0] != cout)) {
        return TH_INTERP_E_PARAMS;
    }
    s->cp.input_offset = s->dp.input_offset = p[TH_CONV2D_S4_P_INPUT_OFFSET];
    s->cp.output_offset = s->dp.output_offset = p[TH_CONV2D_S4_P_OUTPUT_OFFSET];
    s->cp.stride.h = s->dp.stride.h = p[TH_CONV2D_S4_P_STRIDE_H];
    s->cp.stride.w = s->dp.stride.w = p[TH_CONV2D_S4_P_STRIDE_W];
    s->cp.padding.h = s->dp.padding.h = p[TH_CONV2D_S4_P_PAD_TOP];
    s->cp.padding.w = s->dp.padding.w = p[TH_CONV2D_S4_P_PAD_LEFT];
    s->cp.dilation.h = s->dp.dilation.h = p[TH_CONV2D_S4_P_DILATION_H];
    s->cp.dilation.w = s->dp.dilation.w = p[TH_CONV2D_S4_P_DILATION_W];
    s->cp.activation.min = s->dp.activation.min = p[TH_CONV2D_S4_P_ACT_MIN];
    s->cp.activation.max = s->dp.activation.max = p[TH_CONV2D_S4_P_ACT_MAX];
    s->dp.ch_mult = ch_mult;
    if (s->cp.input_offset < -127 || s->cp.input_offset > 128 || s->cp.output_offset < -128 ||
        s->cp.output_offset > 127 || s->cp.activation.min < -128 ||
        s->cp.activation.min > s->cp.activation.max || s->cp.activation.max > 127 ||
        !th_interp_window_ok(s->in.h, s->out.h, fh, s->cp.stride.h, s->cp.dilation.h,
                             s->cp.padding.h) ||
        !th_interp_window_ok(s->in.w, s->out.w, fw, s->cp.stride.w, s->cp.dilation.w,
                             s->cp.padding.w)) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static th_interp_status scratch_of(int32_t need, uint32_t *scratch)
{
    *scratch = need > 0 ? (uint32_t)need : 0u;
    return TH_INTERP_OK;
}

th_interp_status th_interp_conv2d_s4_prepare(const th_interp_op *op, uint32_t *scratch)
{
    s4_conv_setup s;
    const th_interp_status st = conv_setup(op, 0, &s);
    if (st != TH_INTERP_OK) {
        return st;
    }
    return scratch_of(th_conv_s4_scratch_size(&s.cp, &s.in, &s.filter, &s.out), scratch);
}

th_interp_status th_interp_conv2d_s4_eval(const th_interp_op *op)
{
    s4_conv_setup s;
    th_context kctx = {op->scratch, (int32_t)op->scratch_size};
    if (conv_setup(op, 0, &s) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    const th_status ks = th_conv_s4(&kctx, &s.cp, &s.quant, &s.in,
                                    (const int8_t *)op->in[0].data, &s.filter, s.weights,
                                    (const int32_t *)op->in[2].data, &s.out,
                                    (int8_t *)op->out[0].data);
    return ks == TH_OK ? TH_INTERP_OK : TH_INTERP_E_KERNEL_FAILED;
}

th_interp_status th_interp_dwconv2d_s4_prepare(const th_interp_op *op, uint32_t *scratch)
{
    s4_conv_setup s;
    const th_interp_status st = conv_setup(op, 1, &s);
    if (st != TH_INTERP_OK) {
        return st;
    }
    return scratch_of(th_dw_conv_s4_scratch_size(&s.dp, &s.in, &s.filter, &s.out), scratch);
}

th_interp_status th_interp_dwconv2d_s4_eval(const th_interp_op *op)
{
    s4_conv_setup s;
    th_context kctx = {op->scratch, (int32_t)op->scratch_size};
    if (conv_setup(op, 1, &s) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    const th_status ks = th_dw_conv_s4(&kctx, &s.dp, &s.quant, &s.in,
                                       (const int8_t *)op->in[0].data, &s.filter, s.weights,
                                       (const int32_t *)op->in[2].data, &s.out,
                                       (int8_t *)op->out[0].data);
    return ks == TH_OK ? TH_INTERP_OK : TH_INTERP_E_KERNEL_FAILED;
}

typedef struct {
    th_dims in, filter, out;
    th_per_channel_quant quant;
    const uint8_t *weights;
    th_fc_params params;
} s4_fc_setup;

static th_interp_status fc_setup(const th_interp_op *op, s4_fc_setup *s)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *w = &op->in[1], *b = &op->in[2], *y = &op->out[0];
    const int32_t cin = p[TH_FC_S4_P_CIN];
    if (op->n_in != 3 || op->n_out != 1 || op->n_params != TH_FC_S4_WORDS || w->present ||
        !x->present || x->dtype != TH_INTERP_INT8 || !y->present ||
        y->dtype != TH_INTERP_INT8 || cin < 1 || cin > 65536) {
        return TH_INTERP_E_PARAMS;
    }
    const uint32_t x_elems = th_interp_elements(x), y_elems = th_interp_elements(y);
    if (x_elems % (uint32_t)cin != 0) {
        return TH_INTERP_E_PARAMS;
    }
    const uint32_t batches = x_elems / (uint32_t)cin;
    if (y_elems % batches != 0) {
        return TH_INTERP_E_PARAMS;
    }
    const int32_t cout = (int32_t)(y_elems / batches);
    s->in.n = s->out.n = (int32_t)batches;
    s->in.h = s->in.w = s->filter.h = s->filter.w = s->out.h = s->out.w = 1;
    s->in.c = s->filter.c = cin;
    s->filter.n = s->out.c = cout;
    s->params.input_offset = p[TH_FC_S4_P_INPUT_OFFSET];
    s->params.filter_offset = 0;
    s->params.output_offset = p[TH_FC_S4_P_OUTPUT_OFFSET];
    s->params.activation.min = p[TH_FC_S4_P_ACT_MIN];
    s->params.activation.max = p[TH_FC_S4_P_ACT_MAX];
    s->quant.multiplier = th_interp_const(op, p[TH_FC_S4_P_MULTIPLIER], (uint32_t)cout, 4);
    s->quant.shift = th_interp_const(op, p[TH_FC_S4_P_SHIFT], (uint32_t)cout, 4);
    s->weights = th_interp_const(op, p[TH_FC_S4_P_WEIGHTS],
                                 (uint32_t)cout * (row_bytes((uint32_t)cin) / 4u), 4);
    if (s->weights == NULL || quant_ok(&s->quant, cout) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    if (b->present && (!th_interp_is(b, TH_INTERP_INT32, 1) || b->dims[0] != cout)) {
        return TH_INTERP_E_PARAMS;
    }
    if (s->params.input_offset < -127 || s->params.input_offset > 128 ||
        s->params.output_offset < -128 || s->params.output_offset > 127 ||
        s->params.activation.min < -128 || s->params.activation.min > s->params.activation.max ||
        s->params.activation.max > 127) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_fc_s4_prepare(const th_interp_op *op, uint32_t *scratch)
{
    s4_fc_setup s;
    const th_interp_status st = fc_setup(op, &s);
    if (st != TH_INTERP_OK) {
        return st;
    }
    return scratch_of(th_fully_connected_s4_scratch_size(&s.params, &s.in, &s.filter), scratch);
}

th_interp_status th_interp_fc_s4_eval(const th_interp_op *op)
{
    s4_fc_setup s;
    th_context kctx = {op->scratch, (int32_t)op->scratch_size};
    if (fc_setup(op, &s) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    const th_status ks = th_fully_connected_s4(&kctx, &s.params, &s.quant, &s.in,
                                               (const int8_t *)op->in[0].data, &s.filter,
                                               s.weights, (const int32_t *)op->in[2].data,
                                               &s.out, (int8_t *)op->out[0].data);
    return ks == TH_OK ? TH_INTERP_OK : TH_INTERP_E_KERNEL_FAILED;
}
