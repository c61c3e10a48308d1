/* th_add_s16 / th_sub_s16: int16 ADD and SUB as TFLite Micro's reference (AddElementwise /
 * SubElementwise for int16, and their broadcast variants): each input plus its offset, shifted
 * left by left_shift (15), rescaled to the common scale with its own multiplier, the two
 * summed (subtracted) in int32 and the result rescaled
 * to the output (all three double-rounding MultiplyByQuantizedMultiplierSmallerThanOneExp),
 * + output offset, clamped. NumPy broadcasting; no in-place mode. */
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
