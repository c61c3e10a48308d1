/* ops_common.h - small helpers shared by the op adapters (private). */
#ifndef TH_INTERP_OPS_COMMON_H
#define TH_INTERP_OPS_COMMON_H

#include "th_interp_ops.h"
#include "th_nn.h"

static inline void th_interp_to_shape(const th_interp_tensor *t, th_shape *s)
{
    s->rank = t->rank;
    for (int32_t d = 0; d < TH_MAX_RANK; d++) {
        s->dims[d] = d < (int32_t)t->rank ? t->dims[d] : 1;
    }
}

/* An int8 tensor of rank 1..TH_MAX_RANK (a rank-0 scalar is described as rank 1, [1]). */
static inline int th_interp_s8_any(const th_interp_tensor *t)
{
    return t->present && t->data != NULL && t->dtype == TH_INTERP_INT8 &&
           t->rank <= TH_MAX_RANK;
}

static inline void th_interp_to_shape_r1(const th_interp_tensor *t, th_shape *s)
{
    th_interp_to_shape(t, s);
    if (s->rank == 0) {
        s->rank = 1;
        s->dims[0] = 1;
    }
}

static inline void th_interp_dims4(const th_interp_tensor *t, th_dims *d)
{
    d->n = t->dims[0];
    d->h = t->dims[1];
    d->w = t->dims[2];
    d->c = t->dims[3];
}

/* Window geometry consistent with TFLite's SAME/VALID output size: padding smaller than
 * the dilated filter, and the last window starting inside the padded input. */
static inline int th_interp_window_ok(int32_t in, int32_t out, int32_t k, int32_t stride,
                                      int32_t dil, int32_t pad)
{
    const int64_t eff = (int64_t)(k - 1) * dil + 1;
    return stride >= 1 && dil >= 1 && pad >= 0 && pad < eff &&
           (int64_t)(out - 1) * stride + eff <= (int64_t)in + 2 * (int64_t)pad + 1;
}

static inline th_interp_status th_interp_kstatus(th_status s)
{
    return s == TH_OK ? TH_INTERP_OK : TH_INTERP_E_KERNEL_FAILED;
}

static inline int th_interp_act_ok(int32_t lo, int32_t hi)
{
    return lo >= -128 && lo <= hi && hi <= 127;
}

#endif
