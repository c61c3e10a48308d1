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
