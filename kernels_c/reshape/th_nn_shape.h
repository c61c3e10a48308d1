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

#if TH_NN_MVE
#include <arm_mve.h>
#endif

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

#if TH_NN_MVE
/* Helium: 16 bytes per VLDRB/VSTRB in a tail-predicated low-overhead loop (WLSTP/LETP: the
 * last iteration moves the n % 16 left, no scalar tail), 3 instructions per 16 bytes where
 * newlib's memcpy / memset are word or byte loops with a call's setup. Copies and gathers
 * go front to back, one vector at a time: a destination below its source may overlap it. */
static inline void th_nn_mve_move(int8_t *dst, const int8_t *src, size_t n)
{
#if defined(__GNUC__) && defined(__OPTIMIZE__)
    __asm__ volatile("wlstp.8 lr, %[n], 2f\n"
                     "1:\n\t"
                     "vldrb.8 q0, [%[s]], #16\n\t"
                     "vstrb.8 q0, [%[d]], #16\n\t"
                     "letp lr, 1b\n"
                     "2:"
                     : [d] "+r"(dst), [s] "+r"(src)
                     : [n] "r"(n)
                     : "lr", "d0", "d1", "memory");
#else
    for (int32_t left = (int32_t)n; left > 0; left -= 16, src += 16, dst += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)left);
        vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
    }
#endif
}

static inline void th_nn_mve_set(int8_t *dst, int8_t value, size_t n)
{
#if defined(__GNUC__) && defined(__OPTIMIZE__)
    __asm__ volatile("vdup.8 q0, %[v]\n\t"
                     "wlstp.8 lr, %[n], 2f\n"
                     "1:\n\t"
                     "vstrb.8 q0, [%[d]], #16\n\t"
                     "letp lr, 1b\n"
                     "2:"
                     : [d] "+r"(dst)
                     : [n] "r"(n), [v] "r"((int32_t)value)
                     : "lr", "d0", "d1", "memory");
#else
    const int8x16_t v = vdupq_n_s8(value);
    for (int32_t left = (int32_t)n; left > 0; left -= 16, dst += 16) {
        vstrbq_p_s8(dst, v, vctp8q((uint32_t)left));
    }
#endif
}

/* One tail-predicated loop over n elements of `size` bits (8, 16, 32) moving 16 bytes,
 * 8 or 4 per iteration: LOAD then STORE (asm text with %q[t] the vector), the register
 * "base" advancing by "step" bytes after each load or store that names it. The pointers
 * are low registers (the widening and narrowing VLDRB / VSTRB forms want them). */
#define TH_NN_MVE_LOOP(size, n, load, store, advance, dst_, src_, off, base_step)                 \
    do {                                                                                          \
        int8x16_t t_;                                                                             \
        __asm__ volatile("wlstp." #size " lr, %[cnt], 2f\n"                                       \
                         "1:\n\t" load "\n\t" store "\n\t" advance "\n\t"                         \
                         "letp lr, 1b\n"                                                          \
                         "2:"                                                                     \
                         : [d] "+l"(dst_), [s] "+l"(src_), [t] "=&w"(t_)                          \
                         : [cnt] "r"(n), [o] "w"(off), [st] "r"(base_step)                        \
                         : "lr", "memory");                                                       \
    } while (0)

/* dst[k] = src[k * step] for k < n, step > 1: VLDRB gathers of 16 bytes at byte offsets
 * while 15 * step fits them, else of 8 at halfword offsets (narrowing stores), else of 4 at
 * word offsets; 4 instructions a gather. */
static inline void th_nn_mve_gather(int8_t *dst, const int8_t *src, int32_t step, int32_t n)
{
    if (step <= 17) {
        const uint8x16_t off = vmulq_n_u8(vidupq_n_u8(0u, 1), (uint8_t)step);
        TH_NN_MVE_LOOP(8, n, "vldrb.u8 %q[t], [%[s], %q[o]]", "vstrb.8 %q[t], [%[d]], #16",
                       "add %[s], %[s], %[st]", dst, src, off, 16u * (uint32_t)step);
    } else if (step <= 9362) { /* 7 * step < 2^16 */
        const uint16x8_t off = vmulq_n_u16(vidupq_n_u16(0u, 1), (uint16_t)step);
        TH_NN_MVE_LOOP(16, n, "vldrb.u16 %q[t], [%[s], %q[o]]", "vstrb.16 %q[t], [%[d]], #8",
                       "add %[s], %[s], %[st]", dst, src, off, 8u * (uint32_t)step);
    } else {
        const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0u, 1), (uint32_t)step);
        TH_NN_MVE_LOOP(32, n, "vldrb.u32 %q[t], [%[s], %q[o]]", "vstrb.32 %q[t], [%[d]], #4",
                       "add %[s], %[s], %[st]", dst, src, off, 4u * (uint32_t)step);
    }
}

/* dst[k * step] = src[k] for k < n, 1 < step <= 9362: contiguous loads, VSTRB scatters at
 * byte offsets while 15 * step fits them, else at halfword offsets (8 a store). */
static inline void th_nn_mve_scatter(int8_t *dst, const int8_t *src, int32_t step, int32_t n)
{
    if (step <= 17) {
        const uint8x16_t off = vmulq_n_u8(vidupq_n_u8(0u, 1), (uint8_t)step);
        TH_NN_MVE_LOOP(8, n, "vldrb.8 %q[t], [%[s]], #16", "vstrb.8 %q[t], [%[d], %q[o]]",
                       "add %[d], %[d], %[st]", dst, src, off, 16u * (uint32_t)step);
    } else {
        const uint16x8_t off = vmulq_n_u16(vidupq_n_u16(0u, 1), (uint16_t)step);
        TH_NN_MVE_LOOP(16, n, "vldrb.u16 %q[t], [%[s]], #8", "vstrb.16 %q[t], [%[d], %q[o]]",
                       "add %[d], %[d], %[st]", dst, src, off, 8u * (uint32_t)step);
    }
}
#endif

/* Moves of whole runs: the Helium loops above on MVE builds, else memcpy / memset. */
static inline void th_nn_move(int8_t *dst, const int8_t *src, size_t n)
{
#if TH_NN_MVE
    th_nn_mve_move(dst, src, n);
#else
    memcpy(dst, src, n);
#endif
}

static inline void th_nn_fill(int8_t *dst, int8_t value, size_t n)
{
#if TH_NN_MVE
    th_nn_mve_set(dst, value, n);
#else
    memset(dst, value, n);
#endif
}

/* Copy a run of n bytes. A short run (the inner dims of a small tensor) goes four bytes at a
 * time through fixed-size memcpy (one unaligned load and store on cores that have them, e.g.
 * Cortex-M3 and up), then byte by byte: cheaper than a memcpy call's setup; a longer run is
 * one memcpy. On MVE builds every run is one Helium loop. */
#define TH_NN_SHORT_RUN 64u
static inline void th_nn_copy_run(int8_t *dst, const int8_t *src, size_t n)
{
#if TH_NN_MVE
    th_nn_mve_move(dst, src, n);
#else
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
#endif
}

static inline int th_nn_activation_ok(const th_activation *act)
{
    return act->min >= -128 && act->min <= act->max && act->max <= 127;
}

#endif /* TH_NN_SHAPE_H */
