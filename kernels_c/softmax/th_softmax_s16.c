/* th_softmax_s16: int16 -> int16 SOFTMAX over the last dim as TFLite Micro's SoftmaxInt16:
 * per row, the difference to the row max scaled by quant (double-rounding
 * MultiplyByQuantizedMultiplier) and recentred looks up exp in exp_lut; the sum of the exps,
 * normalized by its leading zeros, looks up 1 / (1 + x) in recip_lut; each exp times that
 * reciprocal is rounded back to Q0.15 and clamped to [0, 32767]. The tables (513 int16
 * each, tinyhost.arith.softmax16) interpolate 512 steps of 128. */
#include <stddef.h>

#include "../reshape/th_nn_shape.h"
#include "th_nn.h"
#include "th_nn_support.h"

TH_INLINE int32_t lut16(int32_t value, const int16_t *lut)
{
    const int32_t index = 256 + (value >> 7);
    const int32_t base = lut[index];
    const int32_t slope = lut[index + 1] - base;
    return base + ((slope * (value & 0x7F) + 64) >> 7);
}

th_status th_softmax_s16(const th_context *ctx, const th_per_tensor_quant *quant,
                         const int16_t *exp_lut, const int16_t *recip_lut,
                         const th_shape *shape, const int16_t *input, int16_t *output)
{
    (void)ctx;
    if (quant == NULL || exp_lut == NULL || recip_lut == NULL || shape == NULL ||
        input == NULL || output == NULL || quant->multiplier < 0 || quant->shift < -31 ||
        quant->shift > 30) {
        return TH_ERR_ARG;
    }
    const int32_t count = th_nn_shape_count(shape);
    if (count < 0 || shape->rank < 1) {
        return TH_ERR_ARG;
    }
    const int32_t depth = shape->dims[shape->rank - 1];
    if (depth <= 0 || depth > 65535) { /* the int32 sum of exps must not overflow */
        return depth <= 0 ? TH_ERR_ARG : TH_ERR_UNSUPPORTED;
    }
    for (int32_t r = 0; r < count / depth; r++) {
        const int16_t *x = input + (size_t)r * (size_t)depth;
        int16_t *y = output + (size_t)r * (size_t)depth;
        int32_t max = INT16_MIN;
        for (int32_t j = 0; j < depth; j++) {
            max = x[j] > max ? x[j] : max;
        }
        int32_t sum = 0;
        for (int32_t j = 0; j < depth; j++) {
            const int32_t scaled = th_requantize(x[j] - max, quant->multiplier, quant->shift);
            const int32_t e = lut16(th_clamp(scaled + 32767, -32768, 32767), exp_lut);
            y[j] = (int16_t)e; /* the exps wait in the output for the reciprocal */
            sum += e;
        }
        /* sum >= the row max's exp > 0; at most 65535 * 32767. A table that breaks this
         * (not one the host made: a corrupted blob) is refused rather than shifted by it. */
        if (sum < 2) {
            return TH_ERR_ARG;
        }
        const int32_t headroom = th_clz32((uint32_t)sum);
        const int32_t shifted = (int32_t)((((int64_t)sum << (headroom - 1)) + (1 << 13)) >> 14);
        const int32_t reciprocal =
            lut16(th_clamp(shifted - ((1 << 15) + (1 << 16)), -32768, 32767), recip_lut);
        const int32_t right = 31 - headroom;
        const int64_t round = (int64_t)1 << (right - 1);
        for (int32_t j = 0; j < depth; j++) {
            const int64_t v = ((int64_t)y[j] * reciprocal + round) >> right;
            y[j] = (int16_t)(v < 0 ? 0 : (v > 32767 ? 32767 : v));
        }
    }
    return TH_OK;
}
