/*
 * ops_conv.c - CONV_2D and DEPTHWISE_CONV_2D adapters (kernel ids 1, 2).
 *
 * Inputs: x (int8 NHWC, arena), filter (int8 const), bias (int32 const [Cout] or absent).
 * Parameter words: TH_CONV2D_P_* / TH_DWCONV2D_P_* (th_interp_abi.h, generated); multiplier
 * and shift are constants-section offsets of [Cout] int32 arrays.
 */
#include "ops_common.h"

/* Depthwise words are the conv words plus ch_mult (th_interp_abi.h). */

typedef struct {
    th_dims in, filter, out;
    th_per_channel_quant quant;
    th_tile stride, pad, dilation;
    int32_t input_offset, output_offset, act_min, act_max, ch_mult;
} conv_setup;

static th_interp_status setup(const th_interp_op *op, int depthwise, conv_setup *s)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *w = &op->in[1], *b = &op->in[2], *y = &op->out[0];
    int32_t cout;
    if (op->n_in != 3 || op->n_out != 1 || op->n_params != (depthwise ? TH_DWCONV2D_WORDS : TH_CONV2D_WORDS) ||
        !th_interp_is(x, TH_INTERP_INT8, 4) || !th_interp_is(w, TH_INTERP_INT8, 4) ||
        !th_interp_is(y, TH_INTERP_INT8, 4)) {
        return TH_INTERP_E_PARAMS;
    }
    th_interp_dims4(x, &s->in);
    th_interp_dims4(w, &s->filter);
    th_interp_dims4(y, &s->out);
    s->input_offset = p[TH_CONV2D_P_INPUT_OFFSET];
    s->output_offset = p[TH_CONV2D_P_OUTPUT_OFFSET];
    s->stride.h = p[TH_CONV2D_P_STRIDE_H];
    s->stride.w = p[TH_CONV2D_P_STRIDE_W];
    s->pad.h = p[TH_CONV2D_P_PAD_TOP];
    s->pad.w = p[TH_CONV2D_P_PAD_LEFT];
    s->dilation.h = p[TH_CONV2D_P_DILATION_H];
    s->dilation.w = p[TH_CONV2D_P_DILATION_W];
    s->act_min = p[TH_CONV2D_P_ACT_MIN];
    s->act_max = p[TH_CONV2D_P_ACT_MAX];
    s->ch_mult = depthwise ? p[TH_DWCONV2D_P_CH_MULT] : 1;
    cout = depthwise ? s->filter.c : s->filter.n;
    s->quant.multiplier = th_interp_const(op, p[TH_CONV2D_P_MULTIPLIER], (uint32_t)cout, 4);
    s->quant.shift = th_interp_const(op, p[TH_CONV2D_P_SHIFT], (uint32_t)cout, 4);
    if (s->quant.multiplier == NULL || s->quant.shift == NULL) {
        return TH_INTERP_E_PARAMS;
    }
    if (b->present && (!th_interp_is(b, TH_INTERP_INT32, 1) || b->dims[0] != cout)) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static th_interp_status check(const th_interp_op *op, const conv_setup *s, int depthwise)
{
    const th_interp_tensor *w = &op->in[1];
    const int32_t cout = s->out.c;
    uint64_t filter_bytes;
    if (s->out.n != s->in.n || s->input_offset < -127 || s->input_offset > 128 ||
        s->output_offset < -128 || s->output_offset > 127 || s->act_min < -128 ||
        s->act_min > s->act_max || s->act_max > 127 ||
        !th_interp_window_ok(s->in.h, s->out.h, s->filter.h, s->stride.h, s->dilation.h,
                             s->pad.h) ||
        !th_interp_window_ok(s->in.w, s->out.w, s->filter.w, s->stride.w, s->dilation.w,
                             s->pad.w)) {
        return TH_INTERP_E_PARAMS;
    }
    if (depthwise) {
        if (s->filter.n != 1 || s->ch_mult < 1 || (int64_t)s->in.c * s->ch_mult != cout ||
            s->filter.c != cout || (w->flags & TH_TENSOR_INTERLEAVED) != 0 ||
            w->bytes != (uint32_t)s->filter.h * (uint32_t)s->filter.w * (uint32_t)cout) {
            return TH_INTERP_E_PARAMS;
        }
    } else {
        const uint64_t k = (uint64_t)s->filter.h * s->filter.w * s->filter.c;
        if (s->filter.n != cout || s->in.c % s->filter.c != 0 ||
            (s->out.c % (s->in.c / s->filter.c)) != 0) {
            return TH_INTERP_E_PARAMS;
        }
        /* The filter layout must be the one this kernel build reads (th_nn.h). */
        if (((w->flags & TH_TENSOR_INTERLEAVED) != 0) != (TH_NN_FILTER_INTERLEAVED != 0)) {
            return TH_INTERP_E_PARAMS;
        }
        filter_bytes = TH_NN_FILTER_INTERLEAVED ? (uint64_t)cout * ((k + 3u) & ~(uint64_t)3u)
                                                : (uint64_t)cout * k;
        if (w->bytes != filter_bytes) {
            return TH_INTERP_E_PARAMS;
        }
    }
    for (int32_t c = 0; c < cout; c++) {
        if (s->quant.multiplier[c] < 0 || s->quant.shift[c] < -31 || s->quant.shift[c] > 30) {
            return TH_INTERP_E_PARAMS;
        }
    }
    return TH_INTERP_OK;
}

static void conv_params(const conv_setup *s, th_conv_params *cp)
{
    cp->input_offset = s->input_offset;
    cp->output_offset = s->output_offset;
    cp->stride = s->stride;
    cp->padding = s->pad;
    cp->dilation = s->dilation;
    cp->activation.min = s->act_min;
    cp->activation.max = s->act_max;
}

static void dw_params(const conv_setup *s, th_dw_conv_params *dp)
{
    dp->input_offset = s->input_offset;
    dp->output_offset = s->output_offset;
    dp->ch_mult = s->ch_mult;
    dp->stride = s->stride;
    dp->padding = s->pad;
    dp->dilation = s->dilation;
    dp->activation.min = s->act_min;
    dp->activation.max = s->act_max;
}

th_interp_status th_interp_conv2d_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    conv_setup s;
    th_conv_params cp;
    int32_t need;
    th_interp_status st = setup(op, 0, &s);
    if (st == TH_INTERP_OK) {
        st = check(op, &s, 0);
    }
    if (st != TH_INTERP_OK) {
        return st;
    }
    conv_params(&s, &cp);
    need = th_conv_s8_scratch_size(&cp, &s.in, &s.filter, &s.out);
    *scratch = need > 0 ? (uint32_t)need : 0u;
    return TH_INTERP_OK;
}

th_interp_status th_interp_conv2d_s8_eval(const th_interp_op *op)
{
    conv_setup s;
    th_conv_params cp;
    th_context kctx;
    th_status ks;
    if (setup(op, 0, &s) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    conv_params(&s, &cp);
    kctx.buf = op->scratch;
    kctx.size = (int32_t)op->scratch_size;
    ks = th_conv_s8(&kctx, &cp, &s.quant, &s.in, (const int8_t *)op->in[0].data, &s.filter,
                    (const int8_t *)op->in[1].data, (const int32_t *)op->in[2].data, &s.out,
                    (int8_t *)op->out[0].data);
    return ks == TH_OK ? TH_INTERP_OK : TH_INTERP_E_KERNEL_FAILED;
}

th_interp_status th_interp_dwconv2d_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    conv_setup s;
    th_dw_conv_params dp;
    int32_t need;
    th_interp_status st = setup(op, 1, &s);
    if (st == TH_INTERP_OK) {
        st = check(op, &s, 1);
    }
    if (st != TH_INTERP_OK) {
        return st;
    }
    dw_params(&s, &dp);
    need = th_dw_conv_s8_scratch_size(&dp, &s.in, &s.filter, &s.out);
    *scratch = need > 0 ? (uint32_t)need : 0u;
    return TH_INTERP_OK;
}

th_interp_status th_interp_dwconv2d_s8_eval(const th_interp_op *op)
{
    conv_setup s;
    th_dw_conv_params dp;
    th_context kctx;
    th_status ks;
    if (setup(op, 1, &s) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    dw_params(&s, &dp);
    kctx.buf = op->scratch;
    kctx.size = (int32_t)op->scratch_size;
    ks = th_dw_conv_s8(&kctx, &dp, &s.quant, &s.in, (const int8_t *)op->in[0].data, &s.filter,
                       (const int8_t *)op->in[1].data, (const int32_t *)op->in[2].data, &s.out,
                       (int8_t *)op->out[0].data);
    return ks == TH_OK ? TH_INTERP_OK : TH_INTERP_E_KERNEL_FAILED;
}
