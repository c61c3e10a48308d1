/* th_nn_min_max_s8: MAXIMUM / MINIMUM as TFLite Micro's reference: the raw int8 values are
 * compared, no requantization (TFLM reads no quantization parameters for these ops).
 * NumPy broadcasting and the in-place rule as th_add_s8. */
#include <stddef.h>

#include "th_nn_broadcast.h"
#include "th_nn_min_max_s8.h"
#include "th_nn_support.h"

/* x where (x > y) equals take_max, else y (ties give the common value); take_max is a
 * constant in each caller, so each gets its own plain loop. */
TH_INLINE void min_max_row(const int8_t *a, int32_t step_a, const int8_t *b, int32_t step_b,
                           int32_t n, int8_t *out, const int take_max)
{
#if TH_NN_MVE
    /* Helium: VMAX / VMIN of 16 lanes (the raw values, as above) in a tail-predicated loop;
     * a broadcast side is one VDUP (max and min commute). 5 (4) instructions a vector. */
    if (step_a + step_b >= 1) {
        const int8_t *x = step_a ? a : b; /* the side that steps */
        const int8_t *y = step_a ? b : a; /* the other: broadcast, or b when both step */
        int8x16_t t, u;
        if (step_a != step_b) {
            const int8x16_t c = vdupq_n_s8(y[0]);
#define MIN_MAX_BCAST(insn)                                                                       \
    __asm__ volatile("wlstp.8 lr, %[n], 2f\n"                                                     \
                     "1:\n\t"                                                                     \
                     "vldrb.8 %q[t], [%[x]], #16\n\t" insn " %q[t], %q[t], %q[c]\n\t"             \
                     "vstrb.8 %q[t], [%[o]], #16\n\t"                                             \
                     "letp lr, 1b\n"                                                              \
                     "2:"                                                                         \
                     : [x] "+r"(x), [o] "+r"(out), [t] "=&w"(t)                                   \
                     : [n] "r"(n), [c] "w"(c)                                                     \
                     : "lr", "memory")
            if (take_max) {
                MIN_MAX_BCAST("vmax.s8");
            } else {
                MIN_MAX_BCAST("vmin.s8");
            }
            return;
        }
#define MIN_MAX_SAME(insn)                                                                        \
    __asm__ volatile("wlstp.8 lr, %[n], 2f\n"                                                     \
                     "1:\n\t"                                                                     \
                     "vldrb.8 %q[t], [%[x]], #16\n\t"                                             \
                     "vldrb.8 %q[u], [%[y]], #16\n\t" insn " %q[t], %q[t], %q[u]\n\t"             \
                     "vstrb.8 %q[t], [%[o]], #16\n\t"                                             \
                     "letp lr, 1b\n"                                                              \
                     "2:"                                                                         \
                     : [x] "+r"(x), [y] "+r"(y), [o] "+r"(out), [t] "=&w"(t), [u] "=&w"(u)        \
                     : [n] "r"(n)                                                                 \
                     : "lr", "memory")
        if (take_max) {
            MIN_MAX_SAME("vmax.s8");
        } else {
            MIN_MAX_SAME("vmin.s8");
        }
        return;
    }
#endif
    if (step_a == 1 && step_b == 1) {
        for (int32_t i = 0; i < n; i++) {
            const int8_t x = a[i];
            const int8_t y = b[i];
            out[i] = (x > y) == take_max ? x : y;
        }
    } else if (step_a == 0) {
        const int8_t x = a[0];
        for (int32_t i = 0; i < n; i++) {
            const int8_t y = b[i * step_b];
            out[i] = (x > y) == take_max ? x : y;
        }
    } else {
        const int8_t y = b[0];
        for (int32_t i = 0; i < n; i++) {
            const int8_t x = a[i];
            out[i] = (x > y) == take_max ? x : y;
        }
    }
}

static void max_row(const void *consts, const int8_t *a, int32_t step_a, const int8_t *b,
                    int32_t step_b, int32_t n, int8_t *out)
{
    (void)consts;
    min_max_row(a, step_a, b, step_b, n, out, 1);
}

static void min_row(const void *consts, const int8_t *a, int32_t step_a, const int8_t *b,
                    int32_t step_b, int32_t n, int8_t *out)
{
    (void)consts;
    min_max_row(a, step_a, b, step_b, n, out, 0);
}

th_status th_nn_min_max_s8(const th_shape *input1_shape, const int8_t *input1,
                           const th_shape *input2_shape, const int8_t *input2,
                           const th_shape *output_shape, int8_t *output, int take_max)
{
    if (input1 == NULL || input2 == NULL || output == NULL ||
        !th_nn_bcast_rows(input1_shape, input1, input2_shape, input2, output_shape, output,
                          take_max ? max_row : min_row, NULL)) {
        return TH_ERR_ARG;
    }
    return TH_OK;
}
