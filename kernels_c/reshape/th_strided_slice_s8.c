/* th_strided_slice_s8: STRIDED_SLICE of an int8 tensor once the host has resolved begin,
 * end, masks and shrink/new axes into a first index and a step per input dim; the output
 * shape (input rank) gives the count per dim. Every index is checked at entry. */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_shape.h"

th_status th_strided_slice_s8(const th_context *ctx, const th_strided_slice_params *params,
                              const th_shape *input_shape, const int8_t *input,
                              const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    if (params == NULL || input == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    const int32_t count = th_nn_shape_count(output_shape);
    if (th_nn_shape_count(input_shape) < 0 || count < 0 ||
        output_shape->rank != input_shape->rank) {
        return TH_ERR_ARG;
    }
    const int32_t rank = input_shape->rank;
    int32_t in_stride[TH_MAX_RANK];
    th_nn_shape_strides(input_shape, in_stride);
    int32_t step[TH_MAX_RANK];
    int32_t off = 0;
    for (int32_t d = 0; d < rank; d++) {
        const int64_t first = params->begin[d];
        const int64_t last = first + (int64_t)(output_shape->dims[d] - 1) * params->stride[d];
        if (params->stride[d] == 0 || first < 0 || first >= input_shape->dims[d] || last < 0 ||
            last >= input_shape->dims[d]) {
            return TH_ERR_ARG;
        }
        off += params->begin[d] * in_stride[d];
        /* A dim of one output index never steps (its stride may be anything); otherwise the
         * checks above bound |stride| by the input dim, so the step fits. */
        step[d] = output_shape->dims[d] > 1 ? params->stride[d] * in_stride[d] : 0;
    }
    /* Output dims of one index dropped (their offset is in off) and a dim merged into the
     * next inner one where its step continues it (e.g. a crop of whole rows): fewer, longer
     * runs. Outermost first. */
    int32_t dims[TH_MAX_RANK];
    int32_t steps[TH_MAX_RANK];
    int32_t n = 0;
    for (int32_t d = rank - 1; d >= 0; d--) {
        const int32_t c = output_shape->dims[d];
        if (c == 1) {
            continue;
        }
        if (n > 0 && step[d] == steps[n - 1] * dims[n - 1]) {
            dims[n - 1] *= c;
            continue;
        }
        dims[n] = c;
        steps[n] = step[d];
        n++;
    }
    for (int32_t i = 0; i < n / 2; i++) { /* innermost first -> outermost first */
        const int32_t t = dims[i], u = steps[i];
        dims[i] = dims[n - 1 - i];
        steps[i] = steps[n - 1 - i];
        dims[n - 1 - i] = t;
        steps[n - 1 - i] = u;
    }
    if (n == 0) {
        output[0] = input[off];
        return TH_OK;
    }
    const int32_t run = dims[n - 1];
    const int32_t run_step = steps[n - 1];
    /* the runs of the next outer dim in a plain loop, the dims above it by index */
    const int32_t rows = n >= 2 ? dims[n - 2] : 1;
    const int32_t row_step = n >= 2 ? steps[n - 2] : 0;
    int32_t idx[TH_MAX_RANK] = {0};
    int8_t *out = output;
    for (int32_t r = 0; r < count / run / rows; r++) {
        int32_t at = off;
        for (int32_t i = 0; i < rows; i++, at += row_step, out += run) {
            if (run_step == 1) {
                th_nn_move(out, input + at, (size_t)run);
#if TH_NN_MVE
            } else if (run_step > 1) {
                th_nn_mve_gather(out, input + at, run_step, run);
#endif
            } else {
                /* integer offsets: a negative step never forms a pointer before the array */
                for (int32_t k = 0; k < run; k++) {
                    out[k] = input[at + k * run_step];
                }
            }
        }
        for (int32_t d = n - 3; d >= 0; d--) {
            off += steps[d];
            if (++idx[d] < dims[d]) {
                break;
            }
            off -= steps[d] * dims[d];
            idx[d] = 0;
        }
    }
    return TH_OK;
}
