/* th_mul_s8: int8 MUL as TFLite Micro's reference: (x1 + offset1) * (x2 + offset2)
 * requantized with one multiplier (double rounding, the shift may be a left shift),
 * + output offset, clamped. NumPy broadcasting as th_add_s8. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_broadcast.h"
#include "th_nn_support.h"

typedef struct {
    int32_t in1_offset;
    int32_t in2_offset;
    int32_t multiplier;
    int32_t shift;
    int32_t out_offset;
    int32_t act_min;
    int32_t act_max;
} mul_consts;

TH_INLINE int8_t mul_one(const mul_consts *k, int32_t a, int32_t b)
{
    const int32_t product = (a + k->in1_offset) * (b + k->in2_offset); /* |.| <= 255^2 */
    const int32_t v = th_requantize(product, k->multiplier, k->shift) + k->out_offset;
    return (int8_t)th_clamp(v, k->act_min, k->act_max);
}

static void mul_row(const mul_consts *k, const int8_t *a, int32_t step_a, const int8_t *b,
                    int32_t step_b, int32_t n, int8_t *out)
{
    if (step_a == 0 && step_b == 0) {
        const int8_t v = mul_one(k, a[0], b[0]);
        for (int32_t i = 0; i < n; i++) {
            out[i] = v;
        }
    } else if (step_a == 0) {
        const int32_t x = a[0];
        for (int32_t i = 0; i < n; i++) {
            out[i] = mul_one(k, x, b[i]);
        }
    } else if (step_b == 0) {
        const int32_t y = b[0];
        for (int32_t i = 0; i < n; i++) {
            out[i] = mul_one(k, a[i], y);
        }
    } else {
        for (int32_t i = 0; i < n; i++) {
            out[i] = mul_one(k, a[i], b[i]);
        }
    }
}

th_status th_mul_s8(const th_context *ctx, const th_mul_params *params,
                    const th_per_tensor_quant *quant, const th_shape *input1_shape,
                    const int8_t *input1, const th_shape *input2_shape, const int8_t *input2,
                    const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || input1 == NULL || input2 == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    th_nn_bcast b;
    if (!th_nn_bcast_init(&b, input1_shape, input2_shape, output_shape) ||
        !th_nn_bcast_alias_ok(&b, input1, input2, output)) {
        return TH_ERR_ARG;
    }
    if (params->input1_offset < -127 || params->input1_offset > 128 ||
        params->input2_offset < -127 || params->input2_offset > 128 ||
        params->output_offset < -128 || params->output_offset > 127 ||
        !th_nn_activation_ok(&params->activation) || quant->multiplier < 0 ||
        quant->shift < -31 || quant->shift > 30) {
        return TH_ERR_ARG;
    }
    mul_consts k;
    k.in1_offset = params->input1_offset;
    k.in2_offset = params->input2_offset;
    k.multiplier = quant->multiplier;
    k.shift = quant->shift;
    k.out_offset = params->output_offset;
    k.act_min = params->activation.min;
    k.act_max = params->activation.max;

    const int32_t inner = b.dims[b.rank - 1];
    const int32_t rows = b.count / inner;
    th_nn_bcast_pos pos;
    th_nn_bcast_start(&pos);
    for (int32_t r = 0; r < rows; r++) {
        mul_row(&k, input1 + pos.off1, b.stride1[b.rank - 1], input2 + pos.off2,
                b.stride2[b.rank - 1], inner, output + r * inner);
        th_nn_bcast_next(&b, &pos);
    }
    return TH_OK;
}
