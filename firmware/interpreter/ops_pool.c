/*
 * ops_pool.c - AVERAGE_POOL_2D (kernel id 5) and MAX_POOL_2D (id 6), int8 NHWC.
 * Parameter words: TH_POOL_P_* (th_interp_abi.h).
 */
#include "ops_common.h"


static th_interp_status setup(const th_interp_op *op, th_pool_params *pp, th_dims *in,
                              th_dims *out)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *y = &op->out[0];
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_POOL_WORDS ||
        !th_interp_is(x, TH_INTERP_INT8, 4) || !th_interp_is(y, TH_INTERP_INT8, 4)) {
        return TH_INTERP_E_PARAMS;
    }
    in->n = x->dims[0];
    in->h = x->dims[1];
    in->w = x->dims[2];
    in->c = x->dims[3];
    out->n = y->dims[0];
    out->h = y->dims[1];
    out->w = y->dims[2];
    out->c = y->dims[3];
    pp->stride.h = p[TH_POOL_P_STRIDE_H];
    pp->stride.w = p[TH_POOL_P_STRIDE_W];
    pp->filter.h = p[TH_POOL_P_FILTER_H];
    pp->filter.w = p[TH_POOL_P_FILTER_W];
    pp->padding.h = p[TH_POOL_P_PAD_TOP];
    pp->padding.w = p[TH_POOL_P_PAD_LEFT];
    pp->activation.min = p[TH_POOL_P_ACT_MIN];
    pp->activation.max = p[TH_POOL_P_ACT_MAX];
    return TH_INTERP_OK;
}

static int window_ok(int32_t in, int32_t out, int32_t k, int32_t stride, int32_t pad)
{
    return stride >= 1 && k >= 1 && pad >= 0 && pad < k &&
           (int64_t)(out - 1) * stride + k <= (int64_t)in + 2 * (int64_t)pad + 1;
}

static th_interp_status prepare(const th_interp_op *op, uint32_t *scratch)
{
    th_pool_params pp;
    th_dims in, out;
    th_interp_status s = setup(op, &pp, &in, &out);
    *scratch = 0;
    if (s != TH_INTERP_OK) {
        return s;
    }
    if (in.n != out.n || in.c != out.c ||
        !window_ok(in.h, out.h, pp.filter.h, pp.stride.h, pp.padding.h) ||
        !window_ok(in.w, out.w, pp.filter.w, pp.stride.w, pp.padding.w) ||
        !th_interp_act_ok(pp.activation.min, pp.activation.max)) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

typedef int32_t (*scratch_size_fn)(const th_pool_params *, const th_dims *, const th_dims *);

/* prepare, then the scratch of the kernel's separable path (0 when it does not apply). */
static th_interp_status prepare_sized(const th_interp_op *op, uint32_t *scratch,
                                      scratch_size_fn size)
{
    th_pool_params pp;
    th_dims in, out;
    const th_interp_status s = prepare(op, scratch);
    if (s != TH_INTERP_OK || setup(op, &pp, &in, &out) != TH_INTERP_OK) {
        return s;
    }
    *scratch = (uint32_t)size(&pp, &in, &out);
    return TH_INTERP_OK;
}

th_interp_status th_interp_avgpool_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_sized(op, scratch, th_avgpool_s8_scratch_size);
}

th_interp_status th_interp_maxpool_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return prepare_sized(op, scratch, th_maxpool_s8_scratch_size);
}

th_interp_status th_interp_avgpool_s8_eval(const th_interp_op *op)
{
    th_pool_params pp;
    th_dims in, out;
    th_context kctx;
    if (setup(op, &pp, &in, &out) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    kctx.buf = op->scratch;
    kctx.size = (int32_t)op->scratch_size;
    return th_interp_kstatus(th_avgpool_s8(&kctx, &pp, &in, (const int8_t *)op->in[0].data,
                                           &out, (int8_t *)op->out[0].data));
}

th_interp_status th_interp_maxpool_s8_eval(const th_interp_op *op)
{
    th_pool_params pp;
    th_dims in, out;
    th_context kctx;
    if (setup(op, &pp, &in, &out) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    kctx.buf = op->scratch;
    kctx.size = (int32_t)op->scratch_size;
    return th_interp_kstatus(th_maxpool_s8(&kctx, &pp, &in, (const int8_t *)op->in[0].data,
                                           &out, (int8_t *)op->out[0].data));
}
