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

static void prelu_row(const th_prelu_params *p, const int8_t *x, int32_t step_x,
                      const int8_t *alpha, int32_t step_a, int32_t n, int8_t *out)
{
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
    if (params == NULL || input == NULL || alpha == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    th_nn_bcast b;
    if (!th_nn_bcast_init(&b, input_shape, alpha_shape, output_shape) ||
        !th_nn_bcast_alias_ok(&b, input, alpha, output)) {
        return TH_ERR_ARG;
    }
    if (params->input_offset < -127 || params->input_offset > 128 ||
        params->alpha_offset < -127 || params->alpha_offset > 128 ||
        params->output_offset < -128 || params->output_offset > 127 ||
        params->multiplier_pos < 0 || params->multiplier_neg < 0 ||
        !shift_ok(params->shift_pos) || !shift_ok(params->shift_neg)) {
        return TH_ERR_ARG;
    }
    const int32_t inner = b.dims[b.rank - 1];
    const int32_t rows = b.count / inner;
    th_nn_bcast_pos pos;
    th_nn_bcast_start(&pos);
    for (int32_t r = 0; r < rows; r++) {
        prelu_row(params, input + pos.off1, b.stride1[b.rank - 1], alpha + pos.off2,
                  b.stride2[b.rank - 1], inner, output + r * inner);
        th_nn_bcast_next(&b, &pos);
    }
    return TH_OK;
}
