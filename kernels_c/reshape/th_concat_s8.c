/* th_concat_s8: CONCATENATION of int8 tensors along one axis: for each index of the dims
 * before the axis, each input's slab (its axis length times the inner size) is copied in
 * input order. Raw copies: TFLM requires every input quantized like the output. */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_shape.h"

th_status th_concat_s8(const th_context *ctx, const th_concat_params *params,
                       const th_shape *input_shapes, const int8_t *const *inputs,
                       const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    if (params == NULL || input_shapes == NULL || inputs == NULL || output == NULL ||
        th_nn_shape_count(output_shape) < 0 || params->num_inputs < 1) {
        return TH_ERR_ARG;
    }
    const int32_t rank = output_shape->rank;
    const int32_t axis = params->axis;
    if (axis < 0 || axis >= rank) {
        return TH_ERR_ARG;
    }
    int64_t axis_total = 0;
    for (int32_t i = 0; i < params->num_inputs; i++) {
        const th_shape *s = &input_shapes[i];
        if (inputs[i] == NULL || th_nn_shape_count(s) < 0 || s->rank != rank) {
            return TH_ERR_ARG;
        }
        for (int32_t d = 0; d < rank; d++) {
            if (d != axis && s->dims[d] != output_shape->dims[d]) {
                return TH_ERR_ARG;
            }
        }
        axis_total += s->dims[axis];
    }
    if (axis_total != output_shape->dims[axis]) {
        return TH_ERR_ARG;
    }
    int32_t outer = 1;
    int32_t inner = 1;
    for (int32_t d = 0; d < axis; d++) {
        outer *= output_shape->dims[d];
    }
    for (int32_t d = axis + 1; d < rank; d++) {
        inner *= output_shape->dims[d];
    }
    int8_t *out = output;
    for (int32_t o = 0; o < outer; o++) {
        for (int32_t i = 0; i < params->num_inputs; i++) {
            const int32_t slab = input_shapes[i].dims[axis] * inner;
            memcpy(out, inputs[i] + o * slab, (size_t)slab);
            out += slab;
        }
    }
    return TH_OK;
}
