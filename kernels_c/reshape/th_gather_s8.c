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
#if TH_NN_MVE
    /* Helium: the smallest and largest index, four at a time */
    int32_t lo = 0, hi = 0;
    if (batch * coords > 0) {
        lo = hi = indices[0];
    }
    for (int32_t k = 0; k < batch * coords; k += 4) {
        const mve_pred16_t q = vctp32q((uint32_t)(batch * coords - k));
        const int32x4_t v = vldrwq_z_s32(indices + k, q);
        lo = vminvq_p_s32(lo, v, q);
        hi = vmaxvq_p_s32(hi, v, q);
    }
    if (lo < 0 || hi >= size) {
        return TH_ERR_ARG;
    }
#else
    for (int32_t k = 0; k < batch * coords; k++) {
        if (indices[k] < 0 || indices[k] >= size) {
            return TH_ERR_ARG;
        }
    }
#endif
    int8_t *out = output;
    for (int32_t b = 0; b < batch; b++) {
        const int32_t *idx = indices + b * coords;
        for (int32_t o = 0; o < outer; o++) {
            const int8_t *rows =
                input + ((size_t)b * (size_t)outer + (size_t)o) * (size_t)size * (size_t)inner;
            if (inner == 1) {
#if TH_NN_MVE
                /* Helium: VLDRB gathers of four at the (checked) word indices */
                for (int32_t i = 0; i < coords; i += 4) {
                    const mve_pred16_t q = vctp32q((uint32_t)(coords - i));
                    const uint32x4_t at = vreinterpretq_u32_s32(vldrwq_z_s32(idx + i, q));
                    vstrbq_p_s32(out + i, vldrbq_gather_offset_z_s32(rows, at, q), q);
                }
#else
                for (int32_t i = 0; i < coords; i++) {
                    out[i] = rows[idx[i]];
                }
#endif
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
