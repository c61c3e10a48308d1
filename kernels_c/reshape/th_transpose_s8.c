/* th_transpose_s8: TRANSPOSE of an int8 tensor. Dims of size 1 are dropped and output
 * dims that are consecutive input dims merged; the output is then written in order, each
 * innermost run copied with memcpy when it is contiguous in the input too, else gathered
 * with the input stride. */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_shape.h"

th_status th_transpose_s8(const th_context *ctx, const th_transpose_params *params,
                          const th_shape *input_shape, const int8_t *input,
                          const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    if (params == NULL || input == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    const int32_t count = th_nn_shape_count(input_shape);
    if (count < 0 || th_nn_shape_count(output_shape) != count ||
        output_shape->rank != input_shape->rank) {
        return TH_ERR_ARG;
    }
    const int32_t rank = input_shape->rank;
    int32_t seen = 0;
    for (int32_t i = 0; i < rank; i++) {
        const int32_t p = params->perm[i];
        if (p < 0 || p >= rank || (seen & (1 << p)) ||
            output_shape->dims[i] != input_shape->dims[p]) {
            return TH_ERR_ARG;
        }
        seen |= 1 << p;
    }
    int32_t in_stride[TH_MAX_RANK];
    th_nn_shape_strides(input_shape, in_stride);
    /* Reduced output dims with their input strides, outermost first. */
    int32_t dims[TH_MAX_RANK];
    int32_t stride[TH_MAX_RANK];
    int32_t n = 0;
    for (int32_t i = 0; i < rank; i++) {
        const int32_t p = params->perm[i];
        const int32_t d = input_shape->dims[p];
        if (d == 1) {
            continue;
        }
        if (n > 0 && stride[n - 1] == in_stride[p] * d) {
            dims[n - 1] *= d; /* input dim p follows the previous one directly */
            stride[n - 1] = in_stride[p];
            continue;
        }
        dims[n] = d;
        stride[n] = in_stride[p];
        n++;
    }
    if (n == 0) {
        output[0] = input[0];
        return TH_OK;
    }
    const int32_t run = dims[n - 1];
    const int32_t run_stride = stride[n - 1];
    int32_t idx[TH_MAX_RANK] = {0};
    int32_t off = 0;
    int8_t *out = output;
    for (int32_t r = 0; r < count / run; r++) {
        if (run_stride == 1) {
            memcpy(out, input + off, (size_t)run);
        } else {
            const int8_t *src = input + off;
            for (int32_t k = 0; k < run; k++) {
                out[k] = src[k * run_stride];
            }
        }
        out += run;
        for (int32_t d = n - 2; d >= 0; d--) {
            off += stride[d];
            if (++idx[d] < dims[d]) {
                break;
            }
            off -= stride[d] * dims[d];
            idx[d] = 0;
        }
    }
    return TH_OK;
}
