/* th_nn_min_max_s8: MAXIMUM / MINIMUM as TFLite Micro's reference: the raw int8 values are
 * compared, no requantization (TFLM reads no quantization parameters for these ops).
 * NumPy broadcasting as th_add_s8; each output is written after its inputs are read,
 * ascending (the in-place rule of th_add_s8). */
#include <stddef.h>

#include "th_nn_broadcast.h"
#include "th_nn_min_max_s8.h"

static void max_row(const int8_t *a, int32_t step_a, const int8_t *b, int32_t step_b,
                    int32_t n, int8_t *out)
{
    if (step_a == 1 && step_b == 1) {
        for (int32_t i = 0; i < n; i++) {
            const int8_t x = a[i];
            const int8_t y = b[i];
            out[i] = x > y ? x : y;
        }
    } else if (step_a == 0) {
        const int8_t x = a[0];
        for (int32_t i = 0; i < n; i++) {
            const int8_t y = b[i * step_b];
            out[i] = x > y ? x : y;
        }
    } else {
        const int8_t y = b[0];
        for (int32_t i = 0; i < n; i++) {
            const int8_t x = a[i];
            out[i] = x > y ? x : y;
        }
    }
}

static void min_row(const int8_t *a, int32_t step_a, const int8_t *b, int32_t step_b,
                    int32_t n, int8_t *out)
{
    if (step_a == 1 && step_b == 1) {
        for (int32_t i = 0; i < n; i++) {
            const int8_t x = a[i];
            const int8_t y = b[i];
            out[i] = x < y ? x : y;
        }
    } else if (step_a == 0) {
        const int8_t x = a[0];
        for (int32_t i = 0; i < n; i++) {
            const int8_t y = b[i * step_b];
            out[i] = x < y ? x : y;
        }
    } else {
        const int8_t y = b[0];
        for (int32_t i = 0; i < n; i++) {
            const int8_t x = a[i];
            out[i] = x < y ? x : y;
        }
    }
}

th_status th_nn_min_max_s8(const th_shape *input1_shape, const int8_t *input1,
                           const th_shape *input2_shape, const int8_t *input2,
                           const th_shape *output_shape, int8_t *output, int take_max)
{
    if (input1 == NULL || input2 == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    th_nn_bcast b;
    if (!th_nn_bcast_init(&b, input1_shape, input2_shape, output_shape) ||
        !th_nn_bcast_alias_ok(&b, input1, input2, output)) {
        return TH_ERR_ARG;
    }
    const int32_t inner = b.dims[b.rank - 1];
    const int32_t rows = b.count / inner;
    th_nn_bcast_pos pos;
    th_nn_bcast_start(&pos);
    for (int32_t r = 0; r < rows; r++) {
        /* a row where both inputs broadcast is one value: step_a == 0 covers it */
        if (take_max) {
            max_row(input1 + pos.off1, b.stride1[b.rank - 1], input2 + pos.off2,
                    b.stride2[b.rank - 1], inner, output + r * inner);
        } else {
            min_row(input1 + pos.off1, b.stride1[b.rank - 1], input2 + pos.off2,
                    b.stride2[b.rank - 1], inner, output + r * inner);
        }
        th_nn_bcast_next(&b, &pos);
    }
    return TH_OK;
}
