/* th_l2norm_s8: int8 L2_NORMALIZATION over rows as TFLite Micro's reference
 * (host/tinyhost/reference/ops/rowwise.py l2norm_int8): the row's sum of squares of
 * (x - zero point) in int32 (wrapping, as TFLM's on rows past 33025 values), its inverse
 * square root as a (Q31 multiplier, shift) pair by GetInvSqrtQuantizedMultiplierExp's
 * Newton-Raphson, each value rescaled by it into Q0.7 (scale 1/128, zero point 0).
 * Reads the whole row before writing it: output == input is safe. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#define OUTPUT_SHIFT 7

/* gemmlowp Rescale<3> of a Q(src) value: a rounding shift right or a saturating shift left. */
static int32_t rescale_to_q3(int32_t x, int32_t src_integer_bits)
{
    const int32_t exponent = src_integer_bits - 3;
    if (exponent < 0) {
        return th_rdbpot(x, -exponent);
    }
    if (exponent == 0) {
        return x;
    }
    const int32_t threshold = (int32_t)((UINT32_C(1) << (31 - exponent)) - 1u);
    return x > threshold ? INT32_MAX : (x < -threshold ? INT32_MIN : (int32_t)((uint32_t)x
                                                                               << exponent));
}

/* 1 / sqrt(value) as (multiplier, left shift), arith.unary.inv_sqrt_quantized_multiplier_exp
 * with reverse_shift -1. */
static void inv_sqrt(int32_t value, int32_t *multiplier, int32_t *shift)
{
    if (value <= 1) {
        *multiplier = INT32_MAX;
        *shift = 0;
        return;
    }
    int32_t right = 11;
    while (value >= (1 << 29)) {
        value /= 4;
        right++;
    }
    const int32_t pairs = (th_clz32((uint32_t)value) - 1) / 2 - 1;
    right -= pairs;
    value <<= 2 * pairs;
    const int32_t half_input = th_rdbpot(value >> 1, 1); /* Q3.28 */
    const int32_t three_halves = (1 << 28) + (1 << 27);
    int32_t x = 1 << 28; /* 1.0 in Q3.28 */
    for (int i = 0; i < 5; i++) {
        const int32_t x3 = rescale_to_q3(th_srdhm(th_srdhm(x, x), x), 9);
        const int32_t a = th_srdhm(three_halves, x);
        const int32_t b = th_srdhm(half_input, x3);
        x = rescale_to_q3((int32_t)((uint32_t)a - (uint32_t)b), 6);
    }
    x = th_srdhm(x, 1518500250); /* sqrt(2) / 2 */
    if (right < 0) {
        x = (int32_t)((uint32_t)x << -right);
        right = 0;
    }
    *multiplier = x;
    *shift = -right;
}

th_status th_l2norm_s8(const th_context *ctx, const th_l2norm_params *params, int32_t rows,
                       int32_t depth, const int8_t *input, int8_t *output)
{
    (void)ctx;
    if (params == NULL || input == NULL || output == NULL || rows < 1 || depth < 1 ||
        params->input_offset < -127 || params->input_offset > 128) {
        return TH_ERR_ARG;
    }
    for (int32_t r = 0; r < rows; r++) {
        const int8_t *in = input + r * depth;
        int8_t *out = output + r * depth;
        uint32_t acc = 0;
        for (int32_t i = 0; i < depth; i++) {
            const int32_t v = in[i] + params->input_offset;
            acc += (uint32_t)(v * v);
        }
        int32_t multiplier, shift;
        inv_sqrt((int32_t)acc, &multiplier, &shift);
        for (int32_t i = 0; i < depth; i++) {
            const int32_t v = in[i] + params->input_offset;
            out[i] = (int8_t)th_clamp(th_requantize(v, multiplier, shift + OUTPUT_SHIFT), -128,
                                      127);
        }
    }
    return TH_OK;
}
