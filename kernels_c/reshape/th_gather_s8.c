/* th_gather_s8: GATHER of int8 rows by int32 indices. The host collapses the shapes into
 * (batch, outer, axis_size, inner) for the input and (batch, coords) for the indices; each
 * gathered row of `inner` bytes is one copy (th_nn_copy_run). Every index is checked before anything is
 * written (TFLM fails the op on an index outside [0, axis_size)). */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_shape.h"

th_status th_gather_s8(const th_context *ctx, const th_gather_params *params,
                       const int8_t *input, const int32_t *indices, int8_t *output)
{
    (void)ctx;
    if (params == NULL || input == NULL || indices == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    const int32_t batch = params->batch, outer = params->outer, size = params->axis_size,
                  inner = params->inner, coords = params->coords;
    if (batch < 1 || outer < 1 || size < 1 || inner < 1 || coords < 0 ||
        (int64_t)batch * outer * size * inner >= TH_NN_MAX_ELEMENTS ||
        (int64_t)batch * outer * coords * inner >= TH_NN_MAX_ELEMENTS) {
        return TH_ERR_ARG;
    }
    for (int32_t k = 0; k < batch * coords; k++) {
        if (indices[k] < 0 || indices[k] >= size) {
            return TH_ERR_ARG;
        }
    }
    int8_t *out = output;
    for (int32_t b = 0; b < batch; b++) {
        const int32_t *idx = indices + b * coords;
        for (int32_t o = 0; o < outer; o++) {
            const int8_t *rows =
                input + ((size_t)b * (size_t)outer + (size_t)o) * (size_t)size * (size_t)inner;
            if (inner == 1) {
                for (int32_t i = 0; i < coords; i++) {
                    out[i] = rows[idx[i]];
                }
                out += coords;
                continue;
            }
            for (int32_t i = 0; i < coords; i++) {
                th_nn_copy_run(out, rows + (size_t)idx[i] * (size_t)inner, (size_t)inner);
                out += inner;
            }
        }
    }
    return TH_OK;
}
