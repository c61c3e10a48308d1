/* th_nn_pool.h - private: argument checks and window geometry shared by the pooling kernels. */
#ifndef TH_NN_POOL_H
#define TH_NN_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "th_nn_types.h"

/* Window of one output position along one axis, clipped to the input: taps [start, end)
 * of the filter fall inside; origin is the input index of tap 0. */
typedef struct {
    int32_t origin;
    int32_t start;
    int32_t end;
} th_nn_window;

static inline th_nn_window th_nn_window_at(int32_t out, int32_t stride, int32_t pad,
                                           int32_t filter, int32_t in_size)
{
    th_nn_window w;
    w.origin = out * stride - pad;
    w.start = w.origin < 0 ? -w.origin : 0;
    w.end = in_size - w.origin < filter ? in_size - w.origin : filter;
    if (w.end < w.start) {
        w.end = w.start;
    }
    return w;
}

/* a * b * c * d < 2^30 for factors in [1, 2^31): two 32x32 -> 64-bit products (UMULL), each
 * checked below 2^30 before the third (then below 2^60): no 64x64 multiply, no overflow. */
static inline int th_nn_pool_size_ok(int32_t a, int32_t b, int32_t c, int32_t d)
{
    const uint64_t ab = (uint64_t)(uint32_t)a * (uint32_t)b;
    const uint64_t cd = (uint64_t)(uint32_t)c * (uint32_t)d;
    return ab < (UINT64_C(1) << 30) && cd < (UINT64_C(1) << 30) &&
           (uint64_t)(uint32_t)ab * (uint32_t)cd < (UINT64_C(1) << 30);
}

static inline th_status th_nn_check_pool(const th_pool_params *params, const th_dims *input_dims,
                                         const int8_t *input, const th_dims *output_dims,
                                         const int8_t *output)
{
    if (params == NULL || input_dims == NULL || input == NULL || output_dims == NULL ||
        output == NULL) {
        return TH_ERR_ARG;
    }
    const th_dims *i = input_dims;
    const th_dims *o = output_dims;
    if (i->n < 1 || i->h < 1 || i->w < 1 || i->c < 1 || o->h < 1 || o->w < 1 ||
        o->n != i->n || o->c != i->c) {
        return TH_ERR_ARG;
    }
    if (!th_nn_pool_size_ok(i->n, i->h, i->w, i->c) ||
        !th_nn_pool_size_ok(o->n, o->h, o->w, o->c)) {
        return TH_ERR_ARG;
    }
    /* Bounded geometry keeps every window index inside int32: strides and windows in
     * [1, 0xFFFF], padding in [0, 0xFFFF], one unsigned compare each. */
    if ((uint32_t)params->stride.h - 1u >= 0xFFFFu ||
        (uint32_t)params->stride.w - 1u >= 0xFFFFu ||
        (uint32_t)params->filter.h - 1u >= 0xFFFFu ||
        (uint32_t)params->filter.w - 1u >= 0xFFFFu ||
        (uint32_t)params->padding.h > 0xFFFFu || (uint32_t)params->padding.w > 0xFFFFu ||
        params->activation.min < -128 || params->activation.min > params->activation.max ||
        params->activation.max > 127) {
        return TH_ERR_ARG;
    }
    /* Window origins stay inside int32. */
    if ((int64_t)(o->h - 1) * params->stride.h > (INT64_C(1) << 30) ||
        (int64_t)(o->w - 1) * params->stride.w > (INT64_C(1) << 30)) {
        return TH_ERR_ARG;
    }
    return TH_OK;
}

#endif /* TH_NN_POOL_H */
