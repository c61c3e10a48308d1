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
    if ((int64_t)i->n * i->h * i->w * i->c >= (INT64_C(1) << 30) ||
        (int64_t)o->n * o->h * o->w * o->c >= (INT64_C(1) << 30)) {
        return TH_ERR_ARG;
    }
    if (params->stride.h < 1 || params->stride.w < 1 || params->filter.h < 1 ||
        params->filter.w < 1 || params->padding.h < 0 || params->padding.w < 0 ||
        params->activation.min < -128 || params->activation.min > params->activation.max ||
        params->activation.max > 127) {
        return TH_ERR_ARG;
    }
    /* Bounded geometry keeps every window index inside int32. */
    if (params->stride.h > 0xFFFF || params->stride.w > 0xFFFF || params->filter.h > 0xFFFF ||
        params->filter.w > 0xFFFF || params->padding.h > 0xFFFF || params->padding.w > 0xFFFF) {
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
