/* th_split_s8: SPLIT / SPLIT_V / UNPACK of an int8 tensor along one axis, the inverse of
 * th_concat_s8: output by output, for each index of the dims before the axis, its slab (its
 * axis length times the inner size) is one copy (th_nn_copy_run) from the input. Raw
 * copies, as TFLM (no rescaling). */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_shape.h"

th_status th_split_s8(const th_context *ctx, const th_split_params *params,
                      const th_shape *input_shape, const int8_t *input,
                      const th_shape *output_shapes, int8_t *const *outputs)
{
    (void)ctx;
    int32_t outer, inner;
    if (params == NULL || output_shapes == NULL || outputs == NULL || input == NULL ||
        !th_nn_axis_parts_ok(input_shape, output_shapes, params->num_outputs, params->axis,
                             &outer, &inner)) {
        return TH_ERR_ARG;
    }
    const int32_t axis = params->axis;
    for (int32_t i = 0; i < params->num_outputs; i++) {
        if (outputs[i] == NULL) {
            return TH_ERR_ARG;
        }
    }
    /* output by output: its slab size, source step and destination advance are invariant */
    const size_t row = (size_t)input_shape->dims[axis] * (size_t)inner;
    const int8_t *first = input;
    for (int32_t i = 0; i < params->num_outputs; i++) {
        const size_t slab = (size_t)output_shapes[i].dims[axis] * (size_t)inner;
        const int8_t *in = first;
        int8_t *out = outputs[i];
        for (int32_t o = 0; o < outer; o++, in += row, out += slab) {
            th_nn_copy_run(out, in, slab);
        }
        first += slab;
    }
    return TH_OK;
}
