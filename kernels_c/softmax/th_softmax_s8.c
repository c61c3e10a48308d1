/* th_softmax_s8: int8 -> int8 SOFTMAX over the last dim (see th_nn_softmax.c). */
#include <stddef.h>

#include "th_nn_softmax.h"

th_status th_softmax_s8(const th_context *ctx, const th_softmax_params *params,
                        const th_shape *shape, const int8_t *input, int8_t *output)
{
    (void)ctx;
    if (output == NULL) {
        return TH_ERR_ARG;
    }
    return th_nn_softmax_s8(params, shape, input, output, NULL);
}
