/*
 * th_nn_shape.h - private helpers of the shape-generic kernels (elementwise, data movement,
 * reduce, softmax): th_shape validation and element counts. Not part of the public API.
 */
#ifndef TH_NN_SHAPE_H
#define TH_NN_SHAPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "th_nn_types.h"

/* Element counts stay below 2^30 so that int32 index arithmetic never overflows. */
#define TH_NN_MAX_ELEMENTS (INT32_C(1) << 30)

/* Element count of a valid shape, or -1 if the shape is invalid (rank out of range, a dim
 * below 1, too many elements). */
static inline int32_t th_nn_shape_count(const th_shape *s)
{
    if (s == NULL || s->rank < 1 || s->rank > TH_MAX_RANK) {
        return -1;
    }
    int64_t n = 1;
    for (int32_t i = 0; i < s->rank; i++) {
        if (s->dims[i] < 1) {
            return -1;
        }
        n *= s->dims[i];
        if (n >= TH_NN_MAX_ELEMENTS) {
            return -1;
        }
    }
    return (int32_t)n;
}

/* Row-major element strides of a valid shape. */
static inline void th_nn_shape_strides(const th_shape *s, int32_t *strides)
{
    int32_t stride = 1;
    for (int32_t i = s->rank - 1; i >= 0; i--) {
        strides[i] = stride;
        stride *= s->dims[i];
    }
}

/* The parts of a split along `axis` (CONCATENATION inputs, SPLIT outputs) against the whole:
 * n >= 1 valid shapes of the whole's rank, equal to it off the axis, whose axis lengths add
 * up to the whole's. On success *outer / *inner are the element counts of the dims before /
 * after the axis. */
static inline int th_nn_axis_parts_ok(const th_shape *whole, const th_shape *parts, int32_t n,
                                      int32_t axis, int32_t *outer, int32_t *inner)
{
    if (th_nn_shape_count(whole) < 0 || parts == NULL || n < 1 || axis < 0 ||
        axis >= whole->rank) {
        return 0;
    }
    int64_t axis_total = 0;
    for (int32_t i = 0; i < n; i++) {
        if (th_nn_shape_count(&parts[i]) < 0 || parts[i].rank != whole->rank) {
            return 0;
        }
        for (int32_t d = 0; d < whole->rank; d++) {
            if (d != axis && parts[i].dims[d] != whole->dims[d]) {
                return 0;
            }
        }
        axis_total += parts[i].dims[axis];
    }
    if (axis_total != whole->dims[axis]) {
        return 0;
    }
    *outer = 1;
    *inner = 1;
    for (int32_t d = 0; d < axis; d++) {
        *outer *= whole->dims[d];
    }
    for (int32_t d = axis + 1; d < whole->rank; d++) {
        *inner *= whole->dims[d];
    }
    return 1;
}

/* Copy a run of n bytes. A short run (the inner dims of a small tensor) goes four bytes at a
 * time through fixed-size memcpy (one unaligned load and store on cores that have them, e.g.
 * Cortex-M3 and up), then byte by byte: cheaper than a memcpy call's setup; a longer run is
 * one memcpy. */
#define TH_NN_SHORT_RUN 64u
static inline void th_nn_copy_run(int8_t *dst, const int8_t *src, size_t n)
{
    if (n >= TH_NN_SHORT_RUN) {
        memcpy(dst, src, n);
        return;
    }
    for (; n >= 4u; n -= 4u, src += 4, dst += 4) {
        uint32_t w;
        memcpy(&w, src, 4u);
        memcpy(dst, &w, 4u);
    }
    for (; n > 0u; n--) {
        *dst++ = *src++;
    }
}

static inline int th_nn_activation_ok(const th_activation *act)
{
    return act->min >= -128 && act->min <= act->max && act->max <= 127;
}

#endif /* TH_NN_SHAPE_H */
