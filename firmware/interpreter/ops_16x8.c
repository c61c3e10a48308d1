/*
 * ops_16x8.c - 16x8 adapters (int16 activations, int8 weights, int64 bias): FULLY_CONNECTED
 * (kernel id 36), CONV_2D (37), DEPTHWISE_CONV_2D (38).
 *
 * Inputs: x (int16, arena), weights (int8 const, plain layout in every build), bias (int64
 * const [Cout] or absent); output int16. Parameter words: TH_FC_S16_P_* /
 * TH_CONV2D_S16_P_* / TH_DWCONV2D_S16_P_* (th_interp_abi.h; the depthwise words are the
 * conv words plus ch_mult); multiplier and shift are constants-section offsets of [Cout]
 * int32 arrays. Prepare checks everything the kernels check at entry (offsets 0, int16
 * activation range, shifts in [-31, 7], shapes), reading the words in place so that its
 * frame stays small (it runs under th_interp_init); eval fills the kernel's structs.
 */
#include "ops_common.h"

enum { KIND_FC = 0, KIND_CONV = 1, KIND_DW = 2 };

/* Word indices shared by the conv and depthwise words (th_interp_abi.h lists them in the
 * same order). */
typedef char conv_dw_words_agree[(TH_CONV2D_S16_P_ACT_MAX == TH_DWCONV2D_S16_P_ACT_MAX &&
                                  TH_CONV2D_S16_P_SHIFT == TH_DWCONV2D_S16_P_SHIFT)
                                     ? 1
                                     : -1];

static int fc_shapes_ok(const th_interp_tensor *x, const th_interp_tensor *w,
                        const th_interp_tensor *y)
{
    const uint32_t cout = (uint32_t)w->dims[0], cin = (uint32_t)w->dims[1];
    const uint32_t x_elems = th_interp_elements(x);
    return th_interp_is(w, TH_INTERP_INT8, 2) && x->present && x->dtype == TH_INTERP_INT16 &&
           y->present && y->dtype == TH_INTERP_INT16 && x_elems % cin == 0 &&
           (uint64_t)(x_elems / cin) * cout == th_interp_elements(y);
}

static int conv_shapes_ok(const th_interp_op *op, int depthwise)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *w = &op->in[1], *y = &op->out[0];
    if (!th_interp_is(x, TH_INTERP_INT16, 4) || !th_interp_is(w, TH_INTERP_INT8, 4) ||
        !th_interp_is(y, TH_INTERP_INT16, 4) || (w->flags & TH_TENSOR_INTERLEAVED) != 0 ||
        y->dims[0] != x->dims[0] ||
        !th_interp_window_ok(x->dims[1], y->dims[1], w->dims[1], p[TH_CONV2D_S16_P_STRIDE_H],
                             p[TH_CONV2D_S16_P_DILATION_H], p[TH_CONV2D_S16_P_PAD_TOP]) ||
        !th_interp_window_ok(x->dims[2], y->dims[2], w->dims[2], p[TH_CONV2D_S16_P_STRIDE_W],
                             p[TH_CONV2D_S16_P_DILATION_W], p[TH_CONV2D_S16_P_PAD_LEFT])) {
        return 0;
    }
    if (depthwise) {
        const int32_t mult = p[TH_DWCONV2D_S16_P_CH_MULT];
        return w->dims[0] == 1 && w->dims[3] == y->dims[3] && mult >= 1 &&
               (int64_t)x->dims[3] * mult == y->dims[3];
    }
    return w->dims[0] == y->dims[3] && w->dims[3] == x->dims[3];
}

static th_interp_status prepare(const th_interp_op *op, int kind, uint32_t *scratch)
{
    const int32_t *p = op->params;
    const int fc = kind == KIND_FC;
    const th_interp_tensor *b = &op->in[2];
    const uint32_t words = fc ? TH_FC_S16_WORDS
                              : (kind == KIND_DW ? TH_DWCONV2D_S16_WORDS : TH_CONV2D_S16_WORDS);
    *scratch = 0;
    if (op->n_in != 3 || op->n_out != 1 || op->n_params != words ||
        !(fc ? fc_shapes_ok(&op->in[0], &op->in[1], &op->out[0])
             : conv_shapes_ok(op, kind == KIND_DW))) {
        return TH_INTERP_E_PARAMS;
    }
    const int32_t cout = fc ? op->in[1].dims[0] : op->out[0].dims[3];
    const int32_t lo = p[fc ? TH_FC_S16_P_ACT_MIN : TH_CONV2D_S16_P_ACT_MIN];
    const int32_t hi = p[fc ? TH_FC_S16_P_ACT_MAX : TH_CONV2D_S16_P_ACT_MAX];
    const int32_t offsets = fc ? (p[TH_FC_S16_P_INPUT_OFFSET] | p[TH_FC_S16_P_FILTER_OFFSET] |
                                  p[TH_FC_S16_P_OUTPUT_OFFSET])
                               : (p[TH_CONV2D_S16_P_INPUT_OFFSET] |
                                  p[TH_CONV2D_S16_P_OUTPUT_OFFSET]);
    const int32_t *m = th_interp_const(op, p[fc ? TH_FC_S16_P_MULTIPLIER
                                               : TH_CONV2D_S16_P_MULTIPLIER],
                                       (uint32_t)cout, 4);
    const int32_t *s = th_interp_const(op, p[fc ? TH_FC_S16_P_SHIFT : TH_CONV2D_S16_P_SHIFT],
                                       (uint32_t)cout, 4);
    if (offsets != 0 || lo < -32768 || lo > hi || hi > 32767 || m == NULL || s == NULL ||
        (b->present && (!th_interp_is(b, TH_INTERP_INT64, 1) || b->dims[0] != cout))) {
        return TH_INTERP_E_PARAMS;
    }
    for (int32_t c = 0; c < cout; c++) {
        if (m[c] < 0 || s[c] < -31 || s[c] > 7) {
            return TH_INTERP_E_PARAMS;
        }
    }
    return TH_INTERP_OK;
}

/* The conv / depthwise words as the kernels' fields (checked by prepare). */
static void conv_fields(const int32_t *p, th_tile *stride, th_tile *pad, th_tile *dil,
                        th_activation *act)
{
    stride->h = p[TH_CONV2D_S16_P_STRIDE_H];
    stride->w = p[TH_CONV2D_S16_P_STRIDE_W];
    pad->h = p[TH_CONV2D_S16_P_PAD_TOP];
    pad->w = p[TH_CONV2D_S16_P_PAD_LEFT];
    dil->h = p[TH_CONV2D_S16_P_DILATION_H];
    dil->w = p[TH_CONV2D_S16_P_DILATION_W];
    act->min = p[TH_CONV2D_S16_P_ACT_MIN];
    act->max = p[TH_CONV2D_S16_P_ACT_MAX];
}

static th_interp_status eval(const th_interp_op *op, int kind)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *w = &op->in[1], *y = &op->out[0];
    const int16_t *xd = (const int16_t *)x->data;
    const int8_t *wd = (const int8_t *)w->data;
    const int64_t *bd = (const int64_t *)op->in[2].data;
    int16_t *yd = (int16_t *)y->data;
    th_dims in, filter, out;
    th_per_channel_quant quant;
    th_status st;
    if (kind == KIND_FC) {
        th_fc_params fp;
        const int32_t cout = w->dims[0], cin = w->dims[1];
        const int32_t batches = (int32_t)(th_interp_elements(x) / (uint32_t)cin);
        in.n = out.n = batches;
        in.h = in.w = filter.h = filter.w = out.h = out.w = 1;
        in.c = filter.c = cin;
        filter.n = out.c = cout;
        fp.input_offset = p[TH_FC_S16_P_INPUT_OFFSET];
        fp.filter_offset = p[TH_FC_S16_P_FILTER_OFFSET];
        fp.output_offset = p[TH_FC_S16_P_OUTPUT_OFFSET];
        fp.activation.min = p[TH_FC_S16_P_ACT_MIN];
        fp.activation.max = p[TH_FC_S16_P_ACT_MAX];
        quant.multiplier = th_interp_const(op, p[TH_FC_S16_P_MULTIPLIER], (uint32_t)cout, 4);
        quant.shift = th_interp_const(op, p[TH_FC_S16_P_SHIFT], (uint32_t)cout, 4);
        st = th_fully_connected_s16(NULL, &fp, &quant, &in, xd, &filter, wd, bd, &out, yd);
    } else {
        th_interp_dims4(x, &in);
        th_interp_dims4(w, &filter);
        th_interp_dims4(y, &out);
        quant.multiplier =
            th_interp_const(op, p[TH_CONV2D_S16_P_MULTIPLIER], (uint32_t)out.c, 4);
        quant.shift = th_interp_const(op, p[TH_CONV2D_S16_P_SHIFT], (uint32_t)out.c, 4);
        if (kind == KIND_DW) {
            th_dw_conv_params dp;
            dp.input_offset = p[TH_DWCONV2D_S16_P_INPUT_OFFSET];
            dp.output_offset = p[TH_DWCONV2D_S16_P_OUTPUT_OFFSET];
            dp.ch_mult = p[TH_DWCONV2D_S16_P_CH_MULT];
            conv_fields(p, &dp.stride, &dp.padding, &dp.dilation, &dp.activation);
            st = th_dw_conv_s16(NULL, &dp, &quant, &in, xd, &filter, wd, bd, &out, yd);
        } else {
            th_conv_params cp;
            cp.input_offset = p[TH_CONV2D_S16_P_INPUT_OFFSET];
            cp.output_offset = p[TH_CONV2D_S16_P_OUTPUT_OFFSET];
            conv_fields(p, &cp.stride, &cp.padding, &cp.dilation, &cp.activation);
            st = th_conv_s16(NULL, &cp, &quant, &in, xd, &filter, wd, bd, &out, yd);
        }
    }
    return th_interp_kstatus(st);
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
