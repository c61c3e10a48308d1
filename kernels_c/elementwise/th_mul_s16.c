/* th_mul_s16: int16 MUL as TFLite Micro's reference (MulElementwise for int16):
 * (x1 + offset1) * (x2 + offset2) in int32 (wrapping), requantized with one multiplier
 * (double rounding, the shift may be a left shift), + output offset, clamped. TFLM takes
 * int16 zero points 0 only (the offsets are checked to be 0). NumPy broadcasting; no
 * in-place mode. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_broadcast.h"
#include "th_nn_support.h"

typedef struct {
    const th_mul_params *p;
    const th_per_tensor_quant *q;
} mul16_consts;

static void mul_row(const void *consts, const int16_t *a, int32_t step_a, const int16_t *b,
                    int32_t step_b, int32_t n, int16_t *out)
{
    const th_mul_params *p = ((const mul16_consts *)consts)->p;
    const th_per_tensor_quant *q = ((const mul16_consts *)consts)->q;
    for (int32_t i = 0; i < n; i++) {
        const int32_t product = a[i * step_a] * b[i * step_b]; /* |.| <= 2^30 */
        const int32_t v = th_requantize(product, q->multiplier, q->shift);
        out[i] = (int16_t)th_clamp(v, p->activation.min, p->activation.max);
    }
}

th_status th_mul_s16(const th_context *ctx, const th_mul_params *params,
                     const th_per_tensor_quant *quant, const th_shape *input1_shape,
                     const int16_t *input1, const th_shape *input2_shape,
                     const int16_t *input2, const th_shape *output_shape, int16_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || input1_shape == NULL || input1 == NULL ||
        input2_shape == NULL || input2 == NULL || output_shape == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    if (params->input1_offset != 0 || params->input2_offset != 0 ||
        params->output_offset != 0 || params->activation.min < -32768 ||
        params->activation.min > params->activation.max || params->activation.max > 32767 ||
        quant->multiplier < 0 || quant->shift < -31 || quant->shift > 30) {
        return TH_ERR_ARG;
    }
    const mul16_consts k = {params, quant};
    return th_nn_bcast_rows_s16(input1_shape, input1, input2_shape, input2, output_shape,
                                output, mul_row, &k)
               ? TH_OK
               : TH_ERR_ARG;
}
