/* th_split_s8: SPLIT / SPLIT_V / UNPACK of an int8 tensor along one axis, the inverse of
 * th_concat_s8: for each index of the dims before the axis, each output's slab (its axis
 * length times the inner size) is one memcpy from the input, in output order. Raw copies,
 * as TFLM (no rescaling). */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_shape.h"

th_status th_split_s8(const th_context *ctx, const th_split_params *params,
                      const th_shape *input_shape, const int8_t *input,
                      const th_shape *output_shapes, int8_t *const *outputs)
{
    (void)ctx;
    if (params == NULL || output_shapes == NULL || outputs == NULL || input == NULL ||
        th_nn_shape_count(input_shape) < 0 || params->num_outputs < 1) {
        return TH_ERR_ARG;
    }
    const int32_t rank = input_shape->rank;
    const int32_t axis = params->axis;
    if (axis < 0 || axis >= rank) {
        return TH_ERR_ARG;
    }
    int64_t axis_total = 0;
    for (int32_t i = 0; i < params->num_outputs; i++) {
        const th_shape *s = &output_shapes[i];
        if (outputs[i] == NULL || th_nn_shape_count(s) < 0 || s->rank != rank) {
            return TH_ERR_ARG;
        }
        for (int32_t d = 0; d < rank; d++) {
            if (d != axis && s->dims[d] != input_shape->dims[d]) {
                return TH_ERR_ARG;
            }
        }
        axis_total += s->dims[axis];
    }
    if (axis_total != input_shape->dims[axis]) {
        return TH_ERR_ARG;
    }
    int32_t outer = 1;
    int32_t inner = 1;
    for (int32_t d = 0; d < axis; d++) {
        outer *= input_shape->dims[d];
    }
    for (int32_t d = axis + 1; d < rank; d++) {
        inner *= input_shape->dims[d];
    }
    const int8_t *in = input;
    for (int32_t o = 0; o < outer; o++) {
        for (int32_t i = 0; i < params->num_outputs; i++) {
            const int32_t slab = output_shapes[i].dims[axis] * inner;
            memcpy(outputs[i] + o * slab, in, (size_t)slab);
            in += slab;
        }
    }
    return TH_OK;
}
