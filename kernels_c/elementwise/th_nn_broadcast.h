/*
 * th_nn_broadcast.h - private: NumPy broadcasting of two inputs for the binary kernels.
 *
 * The output shape is reduced to as few dims as possible: dims of size 1 are dropped and
 * neighbours that both inputs walk contiguously (or both broadcast) are merged. What is
 * left is walked row by row; in the innermost dim each input moves by 1 or 0 (broadcast),
 * so the common cases (same shape, [..., C] against [C], scalar) become one or a few
 * long rows.
 */
#ifndef TH_NN_BROADCAST_H
#define TH_NN_BROADCAST_H

#include <stdint.h>

#include "../reshape/th_nn_shape.h"

/* th_nn_types.h's th_bcast_walk: prepared calls (th_add_prep) carry one */
typedef th_bcast_walk th_nn_bcast;

/* Input dim aligned with output dim i (1 where the input has fewer dims). */
static inline int32_t th_nn_bcast_dim(const th_shape *s, int32_t rank, int32_t i)
{
    const int32_t j = i - (rank - s->rank);
    return j >= 0 ? s->dims[j] : 1;
}

/* Returns 0 if the shapes are invalid (a rank outside 1..TH_MAX_RANK, an input of higher rank
 * than the output, a dim below 1, 2^30 elements or more) or the output is not their broadcast
 * shape. One pass from the innermost dim: validation, the element counts, the strides and the
 * collapse together (the fixed cost of every binary kernel call). */
static inline int th_nn_bcast_init(th_nn_bcast *b, const th_shape *s1, const th_shape *s2,
                                   const th_shape *out)
{
    if (s1 == NULL || s2 == NULL || out == NULL) {
        return 0;
    }
    const int32_t rank = out->rank;
    if (rank < 1 || rank > TH_MAX_RANK || s1->rank < 1 || s1->rank > rank || s2->rank < 1 ||
        s2->rank > rank) {
        return 0;
    }
    /* collapsed dims, innermost first: neighbours that both inputs walk contiguously (or
     * both broadcast) merged, dims of 1 dropped */
    int32_t dims[TH_MAX_RANK];
    int32_t a1[TH_MAX_RANK];
    int32_t a2[TH_MAX_RANK];
    int32_t n = 0;
    uint32_t count = 1; /* < 2^30 */
    int32_t next1 = 1;
    int32_t next2 = 1;
    for (int32_t i = rank - 1; i >= 0; i--) {
        const int32_t d1 = th_nn_bcast_dim(s1, rank, i);
        const int32_t d2 = th_nn_bcast_dim(s2, rank, i);
        const int32_t d = out->dims[i];
        if (d < 1 || (d1 != d && d1 != 1) || (d2 != d && d2 != 1) ||
            (d != 1 && d1 == 1 && d2 == 1)) {
            return 0;
        }
        const uint64_t c = (uint64_t)count * (uint32_t)d;
        if (c >= (uint64_t)TH_NN_MAX_ELEMENTS) {
            return 0;
        }
        count = (uint32_t)c;
        const int32_t st1 = d1 == 1 ? 0 : next1;
        const int32_t st2 = d2 == 1 ? 0 : next2;
        next1 *= d1;
        next2 *= d2;
        if (d == 1) {
            continue;
        }
        if (n > 0 && st1 == a1[n - 1] * dims[n - 1] && st2 == a2[n - 1] * dims[n - 1]) {
            dims[n - 1] *= d;
            continue;
        }
        dims[n] = d;
        a1[n] = st1;
        a2[n] = st2;
        n++;
    }
    b->count1 = next1;
    b->count2 = next2;
    b->count = (int32_t)count;
    if (n == 0) {
        dims[0] = 1;
        a1[0] = 0;
        a2[0] = 0;
        n = 1;
    }
    b->rank = n;
    for (int32_t i = 0; i < n; i++) {
        b->dims[i] = dims[n - 1 - i];
        b->stride1[i] = a1[n - 1 - i];
        b->stride2[i] = a2[n - 1 - i];
    }
    return 1;
}

/* Row walker: rows = product of all but the innermost dim. */
typedef struct {
    int32_t idx[TH_MAX_RANK];
    int32_t off1;
    int32_t off2;
} th_nn_bcast_pos;

static inline void th_nn_bcast_start(th_nn_bcast_pos *p)
{
    for (int32_t i = 0; i < TH_MAX_RANK; i++) {
        p->idx[i] = 0;
    }
    p->off1 = 0;
    p->off2 = 0;
}

/* Advances to the next row (odometer over the outer dims). */
static inline void th_nn_bcast_next(const th_nn_bcast *b, th_nn_bcast_pos *p)
{
    for (int32_t d = b->rank - 2; d >= 0; d--) {
        p->off1 += b->stride1[d];
        p->off2 += b->stride2[d];
        if (++p->idx[d] < b->dims[d]) {
            return;
        }
        p->off1 -= b->stride1[d] * b->dims[d];
        p->off2 -= b->stride2[d] * b->dims[d];
        p->idx[d] = 0;
    }
}

/* Shared precondition of the in-place rule: an output may only alias a full-size input. */
static inline int th_nn_bcast_alias_ok(const th_nn_bcast *b, const int8_t *in1,
                                       const int8_t *in2, const int8_t *out)
{
    /* compared as integers: the pointers may belong to different arrays */
    const uintptr_t o = (uintptr_t)out;
    const uintptr_t a = (uintptr_t)in1;
    const uintptr_t c = (uintptr_t)in2;
    const int bad1 = a != o && a < o + (uintptr_t)b->count && o < a + (uintptr_t)b->count1;
    const int bad2 = c != o && c < o + (uintptr_t)b->count && o < c + (uintptr_t)b->count2;
    const int short1 = in1 == out && b->count1 != b->count;
    const int short2 = in2 == out && b->count2 != b->count;
    return !(bad1 || bad2 || short1 || short2);
}

/* Offsets of a binary int8 kernel: inputs add -zero point (-127..128), the output adds its
 * zero point (-128..127). */
static inline int th_nn_binary_offsets_ok(int32_t input1_offset, int32_t input2_offset,
                                          int32_t output_offset)
{
    return input1_offset >= -127 && input1_offset <= 128 && input2_offset >= -127 &&
           input2_offset <= 128 && output_offset >= -128 && output_offset <= 127;
}

/* One row of n outputs: input i advances by step_i (0 where it broadcasts, else 1); each
 * output is written after its inputs are read (the in-place rule). */
typedef void (*th_nn_bcast_row_fn)(const void *consts, const int8_t *a, int32_t step_a,
                                   const int8_t *b, int32_t step_b, int32_t n, int8_t *out);

/* The broadcast walk of a binary kernel: 0 (nothing written) when the shapes do not
 * broadcast to the output or the output overlaps an input other than by the in-place rule;
 * otherwise row() over every output row, and 1. */
static inline int th_nn_bcast_rows(const th_shape *s1, const int8_t *in1, const th_shape *s2,
                                   const int8_t *in2, const th_shape *out_shape, int8_t *out,
                                   th_nn_bcast_row_fn row, const void *consts)
{
    th_nn_bcast b;
    if (!th_nn_bcast_init(&b, s1, s2, out_shape) || !th_nn_bcast_alias_ok(&b, in1, in2, out)) {
        return 0;
    }
    const int32_t inner = b.dims[b.rank - 1];
    const int32_t rows = b.count / inner;
    th_nn_bcast_pos pos;
    th_nn_bcast_start(&pos);
    for (int32_t r = 0; r < rows; r++) {
        row(consts, in1 + pos.off1, b.stride1[b.rank - 1], in2 + pos.off2,
            b.stride2[b.rank - 1], inner, out + r * inner);
        th_nn_bcast_next(&b, &pos);
    }
    return 1;
}

/* The int16 counterpart of th_nn_bcast_rows (th_add_s16, th_mul_s16): no in-place mode,
 * so the output may not overlap either input at all. */
typedef void (*th_nn_bcast_row16_fn)(const void *consts, const int16_t *a, int32_t step_a,
                                     const int16_t *b, int32_t step_b, int32_t n,
                                     int16_t *out);

static inline int th_nn_bcast_rows_s16(const th_shape *s1, const int16_t *in1,
                                       const th_shape *s2, const int16_t *in2,
                                       const th_shape *out_shape, int16_t *out,
                                       th_nn_bcast_row16_fn row, const void *consts)
{
    th_nn_bcast b;
    if (!th_nn_bcast_init(&b, s1, s2, out_shape)) {
        return 0;
    }
    const uintptr_t o = (uintptr_t)out, a = (uintptr_t)in1, c = (uintptr_t)in2;
    const uintptr_t no = 2u * (uintptr_t)b.count;
    if ((a < o + no && o < a + 2u * (uintptr_t)b.count1) ||
        (c < o + no && o < c + 2u * (uintptr_t)b.count2)) {
        return 0;
    }
    const int32_t inner = b.dims[b.rank - 1];
    const int32_t rows = b.count / inner;
    th_nn_bcast_pos pos;
    th_nn_bcast_start(&pos);
    for (int32_t r = 0; r < rows; r++) {
        row(consts, in1 + pos.off1, b.stride1[b.rank - 1], in2 + pos.off2,
            b.stride2[b.rank - 1], inner, out + r * inner);
        th_nn_bcast_next(&b, &pos);
    }
    return 1;
}

#endif /* TH_NN_BROADCAST_H */
