/* th_cumsum_s8: int8 CUMSUM along one axis as TFLite Micro's reference
 * (host/tinyhost/reference/ops/rowwise.py cumsum_int8): the input viewed as
 * (outer, axis_size, inner); each (x + input_offset) << 20 scaled by (input_multiplier,
 * input_shift), summed in int32 (wrapping, from the scaled input offset as TFLM starts its
 * accumulator), the running (or, exclusive, the preceding) sum requantized into the output.
 * reverse scans from the end. Each element is read before its output is written and never
 * again: output == input is safe. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#define LEFT_SHIFT 20

th_status th_cumsum_s8(const th_context *ctx, const th_cumsum_params *params, int32_t outer,
                       int32_t axis_size, int32_t inner, const int8_t *input, int8_t *output)
{
    (void)ctx;
    if (params == NULL || input == NULL || output == NULL || outer < 1 || axis_size < 1 ||
        inner < 1 || params->input_shift > 0 || params->input_shift < -31 ||
        params->output_shift > 0 || params->output_shift < -31 || params->output_multiplier < 0 ||
        params->output_offset < -128 || params->output_offset > 127) {
        return TH_ERR_ARG;
    }
    const th_cumsum_params *p = params;
    /* TFLM's input multiplier is 1/2 exactly (2^30, shift 0): then SRDHM(v << 20, 2^30) is
     * v << 19 with nothing to round, for every |v| <= 255. */
    const int32_t halving = p->input_multiplier == (1 << 30) && p->input_shift == 0;
    const int32_t start = th_requantize((int32_t)((uint32_t)p->input_offset << LEFT_SHIFT),
                                        p->input_multiplier, p->input_shift);
    const int32_t step = p->reverse ? -inner : inner;
    for (int32_t o = 0; o < outer; o++) {
        for (int32_t i = 0; i < inner; i++) {
            int32_t k = o * axis_size * inner + i + (p->reverse ? (axis_size - 1) * inner : 0);
            uint32_t acc = (uint32_t)start;
            for (int32_t a = 0; a < axis_size; a++, k += step) {
                const int32_t v = input[k] + p->input_offset;
                const uint32_t scaled =
                    halving ? (uint32_t)v << (LEFT_SHIFT - 1)
                            : (uint32_t)th_requantize((int32_t)((uint32_t)v << LEFT_SHIFT),
                                                      p->input_multiplier, p->input_shift);
                const uint32_t before = acc;
                acc += scaled;
                output[k] = (int8_t)th_requantize_s8((int32_t)(p->exclusive ? before : acc),
                                                     p->output_multiplier, p->output_shift,
                                                     p->output_offset);
            }
        }
    }
    return TH_OK;
}
