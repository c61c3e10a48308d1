/* th_concat_s8: CONCATENATION (and PACK) of int8 tensors along one axis: input by input,
 * for each index of the dims before the axis, its slab (its axis length times the inner
 * size) is one copy (th_nn_copy_run) to its place in the output. Raw copies: TFLM requires
 * every input quantized like the output. */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_shape.h"

th_status th_concat_s8(const th_context *ctx, const th_concat_params *params,
                       const th_shape *input_shapes, const int8_t *const *inputs,
                       const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    int32_t outer, inner;
    if (params == NULL || input_shapes == NULL || inputs == NULL || output == NULL ||
        !th_nn_axis_parts_ok(output_shape, input_shapes, params->num_inputs, params->axis,
                             &outer, &inner)) {
        return TH_ERR_ARG;
    }
    const int32_t axis = params->axis;
    for (int32_t i = 0; i < params->num_inputs; i++) {
        if (inputs[i] == NULL) {
            return TH_ERR_ARG;
        }
    }
    /* input by input: its slab size, source advance and destination step are invariant */
    const size_t row = (size_t)output_shape->dims[axis] * (size_t)inner;
    int8_t *first = output;
    for (int32_t i = 0; i < params->num_inputs; i++) {
        const size_t slab = (size_t)input_shapes[i].dims[axis] * (size_t)inner;
        const int8_t *in = inputs[i];
        int8_t *out = first;
        for (int32_t o = 0; o < outer; o++, in += slab, out += row) {
            th_nn_copy_run(out, in, slab);
        }
        first += slab;
    }
    return TH_OK;
}
