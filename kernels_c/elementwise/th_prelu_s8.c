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

#if TH_NN_MVE
/* A row on MVE, four lanes at a time (then a predicated tail): both branches requantized
 * (th_mve_requantize_n, exact: see th_nn_support.h), the sign of v = x + input_offset
 * picking one, + output offset, clamped to int8. x and alpha each step (1) or broadcast (0);
 * rp / rn (shift_pos / shift_neg < 0) are constants in each instance. Each group of four is
 * written after its inputs are read (in place). */
TH_INLINE int32x4_t prelu_mve4(int32x4_t v, int32x4_t a, int32_t mp, int32_t sp, int32_t mn,
                               int32_t sn, const int rp, const int rn, const th_mve_out *o)
{
    const int32x4_t pos = th_mve_requantize_n(v, mp, sp, rp, o);
    const int32x4_t neg = th_mve_requantize_n(vmulq_s32(v, a), mn, sn, rn, o);
    return vpselq_s32(pos, neg, vcmpgeq_n_s32(v, 0));
}

TH_INLINE void prelu_row_mve(const th_prelu_params *p, const int8_t *x, int32_t step_x,
                             const int8_t *alpha, int32_t step_a, int32_t n, int8_t *out,
                             const int rp, const int rn)
{
    /* locals: the stores to out could otherwise alias *p, reloaded every vector */
    const int32_t xo = p->input_offset, ao = p->alpha_offset;
    const int32_t mp = p->multiplier_pos, sp = p->shift_pos;
    const int32_t mn = p->multiplier_neg, sn = p->shift_neg;
    th_mve_out o;
    o.output_offset = p->output_offset;
    o.act_min = -128;
    o.act_max = 127;
    const int32x4_t x0 = vdupq_n_s32(x[0] + xo);
    const int32x4_t a0 = vdupq_n_s32(alpha[0] + ao);
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const int32x4_t v = step_x ? vaddq_n_s32(vldrbq_s32(x + i), xo) : x0;
        const int32x4_t a = step_a ? vaddq_n_s32(vldrbq_s32(alpha + i), ao) : a0;
        vstrbq_s32(out + i, prelu_mve4(v, a, mp, sp, mn, sn, rp, rn, &o));
    }
    if (i < n) {
        const mve_pred16_t q = vctp32q((uint32_t)(n - i));
        const int32x4_t v = step_x ? vaddq_n_s32(vldrbq_z_s32(x + i, q), xo) : x0;
        const int32x4_t a = step_a ? vaddq_n_s32(vldrbq_z_s32(alpha + i, q), ao) : a0;
        vstrbq_p_s32(out + i, prelu_mve4(v, a, mp, sp, mn, sn, rp, rn, &o), q);
    }
}

#define PRELU_MVE(name, rp, rn)                                                                   \
    __attribute__((noinline)) static void name(const th_prelu_params *p, const int8_t *x,         \
                                               int32_t sx, const int8_t *a, int32_t sa,           \
                                               int32_t n, int8_t *out)                            \
    {                                                                                             \
        prelu_row_mve(p, x, sx, a, sa, n, out, rp, rn);                                           \
    }
PRELU_MVE(prelu_mve_ll, 0, 0)
PRELU_MVE(prelu_mve_lr, 0, 1)
PRELU_MVE(prelu_mve_rl, 1, 0)
PRELU_MVE(prelu_mve_rr, 1, 1)
#endif

static void prelu_row(const void *consts, const int8_t *x, int32_t step_x,
                      const int8_t *alpha, int32_t step_a, int32_t n, int8_t *out)
{
    const th_prelu_params pc = *(const th_prelu_params *)consts; /* kept in registers */
    const th_prelu_params *p = &pc;
#if TH_NN_MVE
    if (n >= 4) {
        const int rp = p->shift_pos < 0, rn = p->shift_neg < 0;
        (rp ? (rn ? prelu_mve_rr : prelu_mve_rl) : (rn ? prelu_mve_lr : prelu_mve_ll))(
            p, x, step_x, alpha, step_a, n, out);
        return;
    }
#endif
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
