/* th_quantize_f32_s8: QUANTIZE float32 -> int8 as TFLite Micro's AffineQuantize:
 * round(x / scale) + zero_point, saturated to int8, with the division in float32 and
 * std::round's halves away from zero. The rounding is done without libm and without double:
 * for |q| < 1024 the fraction q - trunc(q) is exact in float32, so comparing it with +-0.5
 * rounds exactly (floorf(|q| + 0.5f) would not: 0.49999997f + 0.5f rounds up to 1).
 * Values beyond +-1024 and infinities saturate anyway; NaN counts as 0 (Cortex-M's VCVT
 * gives 0; the C++ cast is undefined there). */
#include <stddef.h>

#include "th_nn.h"

static inline int32_t round_half_away(float q)
{
    if (!(q == q)) {
        return 0;
    }
    if (q >= 1024.0f) {
        return 1024;
    }
    if (q <= -1024.0f) {
        return -1024;
    }
    int32_t t = (int32_t)q; /* truncates toward zero */
    const float frac = q - (float)t;
    if (frac >= 0.5f) {
        t++;
    } else if (frac <= -0.5f) {
        t--;
    }
    return t;
}

th_status th_quantize_f32_s8(const th_context *ctx, const th_affine_params *params,
                             int32_t size, const float *input, int8_t *output)
{
    (void)ctx;
    if (params == NULL || input == NULL || output == NULL || size < 0 ||
        !(params->scale > 0.0f) || params->zero_point < -128 || params->zero_point > 127) {
        return TH_ERR_ARG;
    }
    const float scale = params->scale;
    const int32_t zp = params->zero_point;
    for (int32_t i = 0; i < size; i++) {
        const int32_t v = round_half_away(input[i] / scale) + zp;
        output[i] = (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v));
    }
    return TH_OK;
}
