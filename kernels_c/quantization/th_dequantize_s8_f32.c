/* th_dequantize_s8_f32: DEQUANTIZE int8 -> float32. TFLite Micro computes
 * (float)((double)scale * (q - zero_point)); |q - zero_point| <= 255 needs 8 bits and the
 * scale 24, so the double product is the exact product and the cast rounds it once. The
 * float32 product rounds the same exact value once with the same rule: identical results
 * with no double arithmetic (which Cortex-M4's FPU lacks). */
#include <stddef.h>

#include "th_nn.h"

th_status th_dequantize_s8_f32(const th_context *ctx, const th_affine_params *params,
                               int32_t size, const int8_t *input, float *output)
{
    (void)ctx;
    if (params == NULL || input == NULL || output == NULL || size < 0 ||
        params->zero_point < -128 || params->zero_point > 127) {
        return TH_ERR_ARG;
    }
    const float scale = params->scale;
    const int32_t zp = params->zero_point;
    for (int32_t i = 0; i < size; i++) {
        output[i] = scale * (float)(input[i] - zp);
    }
    return TH_OK;
}
