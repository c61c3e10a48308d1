/* th_add_s16 / th_sub_s16: int16 ADD and SUB as TFLite Micro's reference (AddElementwise /
 * SubElementwise for int16, and their broadcast variants): each input plus its offset, shifted
 * left by left_shift (15), rescaled to the common scale with its own multiplier, the two
 * summed (subtracted) in int32 and the result rescaled
 * to the output (all three double-rounding MultiplyByQuantizedMultiplierSmallerThanOneExp),
 * + output offset, clamped. NumPy broadcasting; no in-place mode. MVE builds: four lanes at a
 * time, the rescalings as th_mve_requantize does them (VQRDMULH, then RoundingDivideByPOT as
 * a lowering of negative values and VRSHL, masked off for a shift of 0), a broadcast input
 * loaded once per row. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_broadcast.h"
#include "th_nn_support.h"

typedef struct {
    const th_add_params *p;
    const th_add_quant *q;
} add16_consts;

TH_INLINE int32_t rescale(int32_t x, int32_t offset, int32_t left_shift, int32_t m, int32_t e)
{
    const int32_t shifted = (int32_t)((uint32_t)(x + offset) << left_shift); /* wraps */
    return th_rdbpot(th_srdhm(shifted, m), -e);
}

/* One row; `subtract` is a constant in each caller, so each gets its own loop. */
TH_INLINE void add_sub_row(const void *consts, const int16_t *a, int32_t step_a,
                           const int16_t *b, int32_t step_b, int32_t n, int16_t *out,
                           int subtract)
{
    const th_add_params *p = ((const add16_consts *)consts)->p;
    const th_add_quant *q = ((const add16_consts *)consts)->q;
    for (int32_t i = 0; i < n; i++) {
        const int32_t s1 = rescale(a[i * step_a], p->input1_offset, p->left_shift,
                                   q->input1_multiplier, q->input1_shift);
        const int32_t s2 = rescale(b[i * step_b], p->input2_offset, p->left_shift,
                                   q->input2_multiplier, q->input2_shift);
        const int32_t sum = subtract ? th_add_wrap(s1, (int32_t)(0u - (uint32_t)s2))
                                     : th_add_wrap(s1, s2);
        const int32_t v = th_rdbpot(th_srdhm(sum, q->output_multiplier), -q->output_shift);
        const int64_t y = (int64_t)v + p->output_offset;
        out[i] = (int16_t)(y < p->activation.min ? p->activation.min
                           : (y > p->activation.max ? p->activation.max : y));
    }
}

#if TH_NN_MVE
/* RDBPOT(SRDHM(((x + off) << left), m), -s) on four lanes, any s in [-31, 0]. */
TH_INLINE int32x4_t mve_rescale16(int32x4_t x, int32_t off, int32_t left, int32_t m, int32_t s)
{
    int32x4_t y = vshlq_r_s32(vaddq_n_s32(x, off), left); /* wraps, as the reference */
    y = vqrdmulhq_n_s32(y, m);
    y = vqaddq_s32(y, vandq_s32(vshrq_n_s32(y, 31), vdupq_n_s32(s < 0 ? -1 : 0)));
    return vrshlq_n_s32(y, s);
}

/* The row on vectors; a broadcast input (step 0) read once. */
TH_INLINE void mve_row16(const void *consts, const int16_t *a, int32_t step_a, const int16_t *b,
                         int32_t step_b, int32_t n, int16_t *out, int subtract)
{
    const th_add_params p = *((const add16_consts *)consts)->p;
    const th_add_quant q = *((const add16_consts *)consts)->q;
    const int32x4_t ca = vdupq_n_s32(a[0]), cb = vdupq_n_s32(b[0]);
    const int32x4_t lo = vdupq_n_s32(p.activation.min), hi = vdupq_n_s32(p.activation.max);
    const int32x4_t fix = vdupq_n_s32(q.output_shift < 0 ? -1 : 0);
    for (int32_t i = 0; i < n; i += 4) {
        const mve_pred16_t pr = vctp32q((uint32_t)(n - i));
        const int32x4_t x = step_a ? vldrhq_z_s32(a + i, pr) : ca;
        const int32x4_t y = step_b ? vldrhq_z_s32(b + i, pr) : cb;
        const int32x4_t s1 = mve_rescale16(x, p.input1_offset, p.left_shift,
                                           q.input1_multiplier, q.input1_shift);
        const int32x4_t s2 = mve_rescale16(y, p.input2_offset, p.left_shift,
                                           q.input2_multiplier, q.input2_shift);
        int32x4_t r = vqrdmulhq_n_s32(subtract ? vsubq_s32(s1, s2) : vaddq_s32(s1, s2),
                                      q.output_multiplier);
        r = vqaddq_s32(r, vandq_s32(vshrq_n_s32(r, 31), fix));
        r = vqaddq_n_s32(vrshlq_n_s32(r, q.output_shift), p.output_offset);
        vstrhq_p_s32(out + i, vminq_s32(vmaxq_s32(r, lo), hi), pr);
    }
}

static void mve_add_row16(const void *consts, const int16_t *a, int32_t step_a,
                          const int16_t *b, int32_t step_b, int32_t n, int16_t *out)
{
    mve_row16(consts, a, step_a, b, step_b, n, out, 0);
}

static void mve_sub_row16(const void *consts, const int16_t *a, int32_t step_a,
                          const int16_t *b, int32_t step_b, int32_t n, int16_t *out)
{
    mve_row16(consts, a, step_a, b, step_b, n, out, 1);
}
#define add_row mve_add_row16
#define sub_row mve_sub_row16
#else
static void add_row(const void *consts, const int16_t *a, int32_t step_a, const int16_t *b,
                    int32_t step_b, int32_t n, int16_t *out)
{
    add_sub_row(consts, a, step_a, b, step_b, n, out, 0);
}

static void sub_row(const void *consts, const int16_t *a, int32_t step_a, const int16_t *b,
                    int32_t step_b, int32_t n, int16_t *out)
{
    add_sub_row(consts, a, step_a, b, step_b, n, out, 1);
}
#endif

static th_status add_sub(const th_add_params *params, const th_add_quant *quant,
                         const th_shape *input1_shape, const int16_t *input1,
                         const th_shape *input2_shape, const int16_t *input2,
                         const th_shape *output_shape, int16_t *output, int subtract)
{
    if (params == NULL || quant == NULL || input1_shape == NULL || input1 == NULL ||
        input2_shape == NULL || input2 == NULL || output_shape == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    const th_add_quant *q = quant;
    if (params->input1_offset < -32767 || params->input1_offset > 32768 ||
        params->input2_offset < -32767 || params->input2_offset > 32768 ||
        params->output_offset < -32768 || params->output_offset > 32767 ||
        params->left_shift < 0 || params->left_shift > 15 ||
        params->activation.min < -32768 || params->activation.min > params->activation.max ||
        params->activation.max > 32767 || q->input1_multiplier < 0 ||
        q->input2_multiplier < 0 || q->output_multiplier < 0 || q->input1_shift > 0 ||
        q->input2_shift > 0 || q->output_shift > 0 || q->input1_shift < -31 ||
        q->input2_shift < -31 || q->output_shift < -31) {
        return TH_ERR_ARG;
    }
    const add16_consts k = {params, quant};
    return th_nn_bcast_rows_s16(input1_shape, input1, input2_shape, input2, output_shape,
                                output, subtract ? sub_row : add_row, &k)
               ? TH_OK
               : TH_ERR_ARG;
}

th_status th_add_s16(const th_context *ctx, const th_add_params *params,
                     const th_add_quant *quant, const th_shape *input1_shape,
                     const int16_t *input1, const th_shape *input2_shape,
                     const int16_t *input2, const th_shape *output_shape, int16_t *output)
{
    (void)ctx;
    return add_sub(params, quant, input1_shape, input1, input2_shape, input2, output_shape,
                   output, 0);
}

th_status th_sub_s16(const th_context *ctx, const th_add_params *params,
                     const th_add_quant *quant, const th_shape *input1_shape,
                     const int16_t *input1, const th_shape *input2_shape,
                     const int16_t *input2, const th_shape *output_shape, int16_t *output)
{
    (void)ctx;
    return add_sub(params, quant, input1_shape, input1, input2_shape, input2, output_shape,
                   output, 1);
}
