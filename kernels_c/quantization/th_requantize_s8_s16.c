/* th_requantize_s8_s16: QUANTIZE int8 -> int16 as TFLite Micro's Requantize:
 * clamp16(MultiplyByQuantizedMultiplier(x - input_zero_point, quant) + output_zero_point). */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

th_status th_requantize_s8_s16(const th_context *ctx, const th_requantize_params *params,
                               const th_per_tensor_quant *quant, int32_t size,
                               const int8_t *input, int16_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || input == NULL || output == NULL || size < 0 ||
        params->input_zero_point < -128 || params->input_zero_point > 127 ||
        params->output_zero_point < INT16_MIN || params->output_zero_point > INT16_MAX ||
        quant->multiplier < 0 || quant->shift < -31 || quant->shift > 30) {
        return TH_ERR_ARG;
    }
    for (int32_t i = 0; i < size; i++) {
        const int64_t v = (int64_t)th_requantize(input[i] - params->input_zero_point,
                                                 quant->multiplier, quant->shift) +
                          params->output_zero_point;
        output[i] = (int16_t)(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v));
    }
    return TH_OK;
}
