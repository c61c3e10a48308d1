/* th_fill_s8: int8 FILL as TFLite Micro: every output element is the raw value (no
 * requantization, whatever the tensors' quantization). The output may not overlap the
 * value byte. */
#include <stddef.h>

#include "th_nn.h"

th_status th_fill_s8(const th_context *ctx, const int8_t *value, int32_t size, int8_t *output)
{
    (void)ctx;
    if (value == NULL || output == NULL || size < 0 ||
        (value >= output && value < output + size)) {
        return TH_ERR_ARG;
    }
    const int8_t v = *value;
    for (int32_t i = 0; i < size; i++) {
        output[i] = v;
    }
    return TH_OK;
}
