/* th_requantize_s16_s8: QUANTIZE int16 -> int8 as TFLite Micro's Requantize:
 * clamp8(MultiplyByQuantizedMultiplier(x - input_zero_point, quant) + output_zero_point). */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

th_status th_requantize_s16_s8(const th_context *ctx, const th_requantize_params *params,
                               const th_per_tensor_quant *quant, int32_t size,
                               const int16_t *input, int8_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || input == NULL || output == NULL || size < 0 ||
        params->input_zero_point < INT16_MIN || params->input_zero_point > INT16_MAX ||
        params->output_zero_point < -128 || params->output_zero_point > 127 ||
        quant->multiplier < 0 || quant->shift < -31 || quant->shift > 30) {
        return TH_ERR_ARG;
    }
    for (int32_t i = 0; i < size; i++) {
        const int32_t v = th_requantize(input[i] - params->input_zero_point, quant->multiplier,
                                        quant->shift);
        output[i] = th_out_s8(v, params->output_zero_point, -128, 127);
    }
    return TH_OK;
}
