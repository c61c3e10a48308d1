/* th_prelu_s8: int8 PRELU as TFLite Micro's reference: v = x + input_offset; v >= 0 is
 * requantized with (multiplier_pos, shift_pos), otherwise v * (alpha + alpha_offset) with
 * (multiplier_neg, shift_neg) (both MultiplyByQuantizedMultiplier); + output offset,
 * clamped to int8. alpha broadcasts against the input as NumPy does (per channel: [C]
 * against [..., C]; the common case walks rows of C with both pointers stepping). The
 * in-place rule of th_add_s8 holds for the input (and alpha). */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_broadcast.h"
#include "th_nn_support.h"

/* MultiplyByQuantizedMultiplier for a multiplier >= 0 (checked at entry): th_srdhm_pos. */
TH_INLINE int32_t requantize_pos(int32_t acc, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    return th_rdbpot(th_srdhm_pos((int32_t)((uint32_t)acc << left), multiplier), right);
}

TH_INLINE int8_t prelu_one(const th_prelu_params *p, int32_t x, int32_t alpha)
{
    const int32_t v = x + p->input_offset;
    const int32_t r = v >= 0 ? requantize_pos(v, p->multiplier_pos, p->shift_pos)
                             : requantize_pos(v * (alpha + p->alpha_offset), p->multiplier_neg,
                                              p->shift_neg);
    return th_out_s8(r, p->output_offset, -128, 127);
}

static void prelu_row(const void *consts, const int8_t *x, int32_t step_x,
                      const int8_t *alpha, int32_t step_a, int32_t n, int8_t *out)
{
    const th_prelu_params pc = *(const th_prelu_params *)consts; /* kept in registers */
    const th_prelu_params *p = &pc;
    if (step_x == 1 && step_a == 1) {
        for (int32_t i = 0; i < n; i++) {
            out[i] = prelu_one(p, x[i], alpha[i]);
        }
    } else if (step_a == 0) {
        const int32_t a = alpha[0];
        for (int32_t i = 0; i < n; i++) {
            out[i] = prelu_one(p, x[i * step_x], a);
        }
    } else {
        const int32_t v = x[0];
        for (int32_t i = 0; i < n; i++) {
            out[i] = prelu_one(p, v, alpha[i]);
        }
    }
}

static int shift_ok(int32_t shift)
{
    return shift >= -31 && shift <= 30;
}

th_status th_prelu_s8(const th_context *ctx, const th_prelu_params *params,
                      const th_shape *input_shape, const int8_t *input,
                      const th_shape *alpha_shape, const int8_t *alpha,
                      const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    if (params == NULL || input == NULL || alpha == NULL || output == NULL ||
        !th_nn_binary_offsets_ok(params->input_offset, params->alpha_offset,
                                 params->output_offset) ||
        params->multiplier_pos < 0 || params->multiplier_neg < 0 ||
        !shift_ok(params->shift_pos) || !shift_ok(params->shift_neg)) {
        return TH_ERR_ARG;
    }
    return th_nn_bcast_rows(input_shape, input, alpha_shape, alpha, output_shape, output,
                            prelu_row, params)
               ? TH_OK
               : TH_ERR_ARG;
}
