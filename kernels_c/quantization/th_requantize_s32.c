/* th_requantize_{s8,s16}_s32 / th_requantize_s32_{s8,s16}: QUANTIZE to and from int32 as
 * TFLite Micro's Requantize, in its int32 arithmetic:
 *   out = MultiplyByQuantizedMultiplier(x - input_zero_point, quant) + output_zero_point,
 * the difference and (int32 outputs) the sum wrapping modulo 2^32, narrower outputs
 * saturated. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

/* Element widths in bytes; the type's minimum is -2^(8 * width - 1). */
enum { W8 = 1, W16 = 2, W32 = 4 };

TH_INLINE int32_t type_min(int width)
{
    return width == W8 ? INT8_MIN : (width == W16 ? INT16_MIN : INT32_MIN);
}

TH_INLINE int32_t load(const void *p, int32_t i, int width)
{
    return width == W8 ? ((const int8_t *)p)[i]
                       : (width == W16 ? ((const int16_t *)p)[i] : ((const int32_t *)p)[i]);
}

/* Inlined into each kernel with constant widths: one specialised loop per direction. */
TH_INLINE th_status run(const th_requantize_params *params, const th_per_tensor_quant *quant,
                        int32_t size, const void *input, int in_width, void *output,
                        int out_width)
{
    const int32_t in_lo = type_min(in_width), out_lo = type_min(out_width);
    if (params == NULL || quant == NULL || input == NULL || output == NULL || size < 0 ||
        params->input_zero_point < in_lo || params->input_zero_point > -(in_lo + 1) ||
        params->output_zero_point < out_lo || params->output_zero_point > -(out_lo + 1) ||
        quant->multiplier < 0 || quant->shift < -31 || quant->shift > 30) {
        return TH_ERR_ARG;
    }
    for (int32_t i = 0; i < size; i++) {
        /* x - input zero point and the rescaling wrap as TFLM's int32 arithmetic. */
        const int32_t d = (int32_t)((uint32_t)load(input, i, in_width) -
                                    (uint32_t)params->input_zero_point);
        const int32_t r = th_requantize(d, quant->multiplier, quant->shift);
        if (out_width == W32) { /* the sum wraps too; the clamp to int32 is a no-op */
            ((int32_t *)output)[i] = th_add_wrap(r, params->output_zero_point);
            continue;
        }
        const int64_t v = (int64_t)r + params->output_zero_point;
        const int64_t hi = -(int64_t)out_lo - 1;
        const int32_t c = (int32_t)(v < out_lo ? out_lo : (v > hi ? hi : v));
        if (out_width == W8) {
            ((int8_t *)output)[i] = (int8_t)c;
        } else {
            ((int16_t *)output)[i] = (int16_t)c;
        }
    }
    return TH_OK;
}

th_status th_requantize_s8_s32(const th_context *ctx, const th_requantize_params *params,
                               const th_per_tensor_quant *quant, int32_t size,
                               const int8_t *input, int32_t *output)
{
    (void)ctx;
    return run(params, quant, size, input, W8, output, W32);
}

th_status th_requantize_s16_s32(const th_context *ctx, const th_requantize_params *params,
                                const th_per_tensor_quant *quant, int32_t size,
                                const int16_t *input, int32_t *output)
{
    (void)ctx;
    return run(params, quant, size, input, W16, output, W32);
}

th_status th_requantize_s32_s8(const th_context *ctx, const th_requantize_params *params,
                               const th_per_tensor_quant *quant, int32_t size,
                               const int32_t *input, int8_t *output)
{
    (void)ctx;
    return run(params, quant, size, input, W32, output, W8);
}

th_status th_requantize_s32_s16(const th_context *ctx, const th_requantize_params *params,
                                const th_per_tensor_quant *quant, int32_t size,
                                const int32_t *input, int16_t *output)
{
    (void)ctx;
    return run(params, quant, size, input, W32, output, W16);
}
