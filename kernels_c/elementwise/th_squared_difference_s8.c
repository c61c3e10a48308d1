/* th_squared_difference_s8: int8 SQUARED_DIFFERENCE as TFLite Micro's reference: each input,
 * offset and shifted left by left_shift (7), is rescaled to a common scale with its own
 * multiplier (MultiplyByQuantizedMultiplierSmallerThanOneExp), the difference is squared in
 * int32 and requantized with MultiplyByQuantizedMultiplier (the output shift may be a left
 * shift), + output offset, clamped. NumPy broadcasting and the in-place rule as th_add_s8;
 * a broadcast input is rescaled once per row. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_broadcast.h"
#include "th_nn_support.h"

typedef struct {
    int32_t in1_offset;
    int32_t in2_offset;
    int32_t left_shift;
    int32_t m1;
    int32_t e1; /* right shifts */
    int32_t m2;
    int32_t e2;
    int32_t mo;
    int32_t so; /* MultiplyByQuantizedMultiplier shift */
    int32_t out_offset;
    int32_t act_min;
    int32_t act_max;
} sqdiff_consts;

TH_INLINE int32_t scale_input(int32_t x, int32_t offset, int32_t left_shift, int32_t m,
                              int32_t e)
{
    /* |x + offset| <= 255 and left_shift <= 7: no overflow; m >= 0 (checked at entry) */
    return th_rdbpot(th_srdhm_pos((x + offset) * (1 << left_shift), m), e);
}

TH_INLINE int8_t finish(const sqdiff_consts *k, int32_t s1, int32_t s2)
{
    const int32_t d = s1 - s2;
    /* th_requantize_s8 clamps to int8, exact within any activation range inside it */
    const int32_t v = th_requantize_s8(d * d, k->mo, k->so, k->out_offset);
    return (int8_t)th_clamp(v, k->act_min, k->act_max);
}

#if TH_NN_MVE
/* Four lanes on MVE: each input offset, shifted left and rescaled (th_mve_requantize_n with
 * a right shift, no offset, a clamp that changes nothing: exactly scale_input), the
 * difference squared (wrapping, as the scalar int32 product) and requantized with the
 * output's offset and range (th_mve_requantize_n: exactly th_requantize_s8 + clamp). */
TH_INLINE int32x4_t sqdiff_mve4(const sqdiff_consts *k, int32x4_t x, int32x4_t y, const int ro,
                                const th_mve_out *wide, const th_mve_out *o)
{
    const int32x4_t s1 = th_mve_requantize_n(vshlq_n_s32(vaddq_n_s32(x, k->in1_offset), 7),
                                             k->m1, -k->e1, k->e1 > 0, wide);
    const int32x4_t s2 = th_mve_requantize_n(vshlq_n_s32(vaddq_n_s32(y, k->in2_offset), 7),
                                             k->m2, -k->e2, k->e2 > 0, wide);
    const int32x4_t d = vsubq_s32(s1, s2);
    return th_mve_requantize_n(vmulq_s32(d, d), k->mo, k->so, ro, o);
}

/* A row on MVE (left_shift 7, TFLM's for int8), four lanes at a time, then a predicated
 * tail; a and b each step (1) or broadcast (0). Each group of four is written after its
 * inputs are read (in place). ro = output shift < 0, a constant in each instance. */
TH_INLINE void sqdiff_row_mve(const sqdiff_consts *kp, const int8_t *a, int32_t step_a,
                              const int8_t *b, int32_t step_b, int32_t n, int8_t *out,
                              const int ro)
{
    const sqdiff_consts k = *kp; /* a local: the stores to out could alias *kp */
    th_mve_out wide;
    wide.output_offset = 0;
    wide.act_min = INT32_MIN;
    wide.act_max = INT32_MAX;
    th_mve_out o;
    o.output_offset = k.out_offset;
    o.act_min = k.act_min;
    o.act_max = k.act_max;
    const int32x4_t a0 = vdupq_n_s32(a[0]);
    const int32x4_t b0 = vdupq_n_s32(b[0]);
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const int32x4_t x = step_a ? vldrbq_s32(a + i) : a0;
        const int32x4_t y = step_b ? vldrbq_s32(b + i) : b0;
        vstrbq_s32(out + i, sqdiff_mve4(&k, x, y, ro, &wide, &o));
    }
    if (i < n) {
        const mve_pred16_t q = vctp32q((uint32_t)(n - i));
        const int32x4_t x = step_a ? vldrbq_z_s32(a + i, q) : a0;
        const int32x4_t y = step_b ? vldrbq_z_s32(b + i, q) : b0;
        vstrbq_p_s32(out + i, sqdiff_mve4(&k, x, y, ro, &wide, &o), q);
    }
}

__attribute__((noinline)) static void sqdiff_mve_left(const sqdiff_consts *k, const int8_t *a,
                                                      int32_t sa, const int8_t *b, int32_t sb,
                                                      int32_t n, int8_t *out)
{
    sqdiff_row_mve(k, a, sa, b, sb, n, out, 0);
}

__attribute__((noinline)) static void sqdiff_mve_right(const sqdiff_consts *k, const int8_t *a,
                                                       int32_t sa, const int8_t *b, int32_t sb,
                                                       int32_t n, int8_t *out)
{
    sqdiff_row_mve(k, a, sa, b, sb, n, out, 1);
}
#endif

static void sqdiff_row(const void *consts, const int8_t *a, int32_t step_a, const int8_t *b,
                       int32_t step_b, int32_t n, int8_t *out)
{
    const sqdiff_consts kc = *(const sqdiff_consts *)consts; /* a local: kept in registers */
    const sqdiff_consts *k = &kc;
#if TH_NN_MVE
    if (n >= 4 && k->left_shift == 7) {
        (k->so < 0 ? sqdiff_mve_right : sqdiff_mve_left)(k, a, step_a, b, step_b, n, out);
        return;
    }
#endif
    if (step_a == 1 && step_b == 1) {
        for (int32_t i = 0; i < n; i++) {
            const int32_t s1 = scale_input(a[i], k->in1_offset, k->left_shift, k->m1, k->e1);
            const int32_t s2 = scale_input(b[i], k->in2_offset, k->left_shift, k->m2, k->e2);
            out[i] = finish(k, s1, s2);
        }
    } else if (step_a == 0) {
        const int32_t s1 = scale_input(a[0], k->in1_offset, k->left_shift, k->m1, k->e1);
        for (int32_t i = 0; i < n; i++) {
            const int32_t s2 =
                scale_input(b[i * step_b], k->in2_offset, k->left_shift, k->m2, k->e2);
            out[i] = finish(k, s1, s2);
        }
    } else {
        const int32_t s2 = scale_input(b[0], k->in2_offset, k->left_shift, k->m2, k->e2);
        for (int32_t i = 0; i < n; i++) {
            const int32_t s1 = scale_input(a[i], k->in1_offset, k->left_shift, k->m1, k->e1);
            out[i] = finish(k, s1, s2);
        }
    }
}

static int small_shift_ok(int32_t shift)
{
    return shift <= 0 && shift >= -31;
}

th_status th_squared_difference_s8(const th_context *ctx, const th_add_params *params,
                                   const th_add_quant *quant, const th_shape *input1_shape,
                                   const int8_t *input1, const th_shape *input2_shape,
                                   const int8_t *input2, const th_shape *output_shape,
                                   int8_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || input1 == NULL || input2 == NULL || output == NULL ||
        !th_nn_binary_offsets_ok(params->input1_offset, params->input2_offset,
                                 params->output_offset) ||
        params->left_shift < 0 || params->left_shift > 7 ||
        !th_nn_activation_ok(&params->activation) || quant->input1_multiplier < 0 ||
        quant->input2_multiplier < 0 || quant->output_multiplier < 0 ||
        !small_shift_ok(quant->input1_shift) || !small_shift_ok(quant->input2_shift) ||
        quant->output_shift < -31 || quant->output_shift > 30) {
        return TH_ERR_ARG;
    }
    sqdiff_consts k;
    k.in1_offset = params->input1_offset;
    k.in2_offset = params->input2_offset;
    k.left_shift = params->left_shift;
    k.m1 = quant->input1_multiplier;
    k.e1 = -quant->input1_shift;
    k.m2 = quant->input2_multiplier;
    k.e2 = -quant->input2_shift;
    k.mo = quant->output_multiplier;
    k.so = quant->output_shift;
    k.out_offset = params->output_offset;
    k.act_min = params->activation.min;
    k.act_max = params->activation.max;
    return th_nn_bcast_rows(input1_shape, input1, input2_shape, input2, output_shape, output,
                            sqdiff_row, &k)
               ? TH_OK
               : TH_ERR_ARG;
}
