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
