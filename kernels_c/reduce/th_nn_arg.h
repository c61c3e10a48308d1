/* th_nn_arg.h - private: the loop of ARG_MAX / ARG_MIN. For each outer index the output
 * row (inner int32 indices) starts at 0 and moves to i where row i's value is strictly
 * beyond the best so far (read back through the index): ties keep the first index, as
 * TFLM's ArgMinMax. Rows are read in memory order. */
#ifndef TH_NN_ARG_H
#define TH_NN_ARG_H

#include <stddef.h>

#include "th_nn.h"
#include "../reshape/th_nn_shape.h"

static inline th_status th_nn_arg(const th_arg_params *params, const int8_t *input,
                                  int32_t *output, int largest)
{
    if (params == NULL || input == NULL || output == NULL || params->outer < 1 ||
        params->axis_size < 1 || params->inner < 1 ||
        (int64_t)params->outer * params->axis_size * params->inner >= TH_NN_MAX_ELEMENTS) {
        return TH_ERR_ARG;
    }
    const int32_t size = params->axis_size, inner = params->inner;
    if (inner == 1) { /* the last axis: one contiguous row per output, best kept in a register */
        for (int32_t o = 0; o < params->outer; o++) {
            const int8_t *row = input + (size_t)o * (size_t)size;
            int8_t best = row[0];
            int32_t at = 0;
            for (int32_t i = 1; i < size; i++) {
                if (largest ? row[i] > best : row[i] < best) {
                    best = row[i];
                    at = i;
                }
            }
            output[o] = at;
        }
        return TH_OK;
    }
    for (int32_t o = 0; o < params->outer; o++) {
        const int8_t *base = input + (size_t)o * (size_t)size * (size_t)inner;
        int32_t *out = output + (size_t)o * (size_t)inner;
        for (int32_t j = 0; j < inner; j++) {
            out[j] = 0;
        }
        for (int32_t i = 1; i < size; i++) {
            const int8_t *row = base + (size_t)i * (size_t)inner;
            for (int32_t j = 0; j < inner; j++) {
                const int8_t best = base[(size_t)out[j] * (size_t)inner + (size_t)j];
                if (largest ? row[j] > best : row[j] < best) {
                    out[j] = i;
                }
            }
        }
    }
    return TH_OK;
}

#endif /* TH_NN_ARG_H */
