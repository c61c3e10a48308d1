/* th_nn_add_sub_s8: int8 ADD and SUB as TFLite Micro's reference (AddElementwise /
 * SubElementwise with the broadcast variants): each input, offset and shifted left by
 * left_shift, is rescaled to the common scale with its own multiplier, the two are added
 * (subtracted) in int32 and the sum is rescaled to the output; all three rescalings use
 * the double-rounding MultiplyByQuantizedMultiplierSmallerThanOneExp. */
#include <stddef.h>

#include "th_nn_add_sub_s8.h"
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
    int32_t eo;
    int32_t out_offset;
    int32_t act_min;
    int32_t act_max;
    int32_t subtract;
} add_consts;

TH_INLINE int32_t scale_input(int32_t x, int32_t offset, int32_t left_shift, int32_t m,
                              int32_t e)
{
    const int32_t shifted = (int32_t)((uint32_t)(x + offset) << left_shift);
    return th_rdbpot(th_srdhm(shifted, m), e);
}

TH_INLINE int8_t finish(const add_consts *k, int32_t s1, int32_t s2)
{
    const int32_t raw = k->subtract ? (int32_t)((uint32_t)s1 - (uint32_t)s2) : th_add_wrap(s1, s2);
    const int32_t v = th_rdbpot(th_srdhm(raw, k->mo), k->eo) + k->out_offset;
    return (int8_t)th_clamp(v, k->act_min, k->act_max);
}

/* One row of n outputs; input i advances by step_i (0 or 1). A broadcast input is
 * rescaled once. Each output is written after its inputs are read (in-place rule). */
static void add_row(const add_consts *k, const int8_t *a, int32_t step_a, const int8_t *b,
                    int32_t step_b, int32_t n, int8_t *out)
{
    if (step_a == 0 && step_b == 0) {
        const int8_t v = finish(k, scale_input(a[0], k->in1_offset, k->left_shift, k->m1, k->e1),
                                scale_input(b[0], k->in2_offset, k->left_shift, k->m2, k->e2));
        for (int32_t i = 0; i < n; i++) {
            out[i] = v;
        }
    } else if (step_a == 0) {
        const int32_t s1 = scale_input(a[0], k->in1_offset, k->left_shift, k->m1, k->e1);
        for (int32_t i = 0; i < n; i++) {
            out[i] = finish(k, s1, scale_input(b[i], k->in2_offset, k->left_shift, k->m2, k->e2));
        }
    } else if (step_b == 0) {
        const int32_t s2 = scale_input(b[0], k->in2_offset, k->left_shift, k->m2, k->e2);
        for (int32_t i = 0; i < n; i++) {
            out[i] = finish(k, scale_input(a[i], k->in1_offset, k->left_shift, k->m1, k->e1), s2);
        }
    } else {
        for (int32_t i = 0; i < n; i++) {
            out[i] = finish(k, scale_input(a[i], k->in1_offset, k->left_shift, k->m1, k->e1),
                            scale_input(b[i], k->in2_offset, k->left_shift, k->m2, k->e2));
        }
    }
}

static int multiplier_ok(int32_t m, int32_t shift)
{
    return m >= 0 && shift <= 0 && shift >= -31;
}

th_status th_nn_add_sub_s8(const th_add_params *params, const th_add_quant *quant,
                           const th_shape *input1_shape, const int8_t *input1,
                           const th_shape *input2_shape, const int8_t *input2,
                           const th_shape *output_shape, int8_t *output, int subtract)
{
    if (params == NULL || quant == NULL || input1 == NULL || input2 == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    th_nn_bcast b;
    if (!th_nn_bcast_init(&b, input1_shape, input2_shape, output_shape) ||
        !th_nn_bcast_alias_ok(&b, input1, input2, output)) {
        return TH_ERR_ARG;
    }
    /* |x + offset| <= 255, so left shifts up to 22 stay inside int32. */
    if (params->input1_offset < -127 || params->input1_offset > 128 ||
        params->input2_offset < -127 || params->input2_offset > 128 ||
        params->output_offset < -128 || params->output_offset > 127 ||
        params->left_shift < 0 || params->left_shift > 22 ||
        !th_nn_activation_ok(&params->activation) ||
        !multiplier_ok(quant->input1_multiplier, quant->input1_shift) ||
        !multiplier_ok(quant->input2_multiplier, quant->input2_shift) ||
        !multiplier_ok(quant->output_multiplier, quant->output_shift)) {
        return TH_ERR_ARG;
    }
    add_consts k;
    k.in1_offset = params->input1_offset;
    k.in2_offset = params->input2_offset;
    k.left_shift = params->left_shift;
    k.m1 = quant->input1_multiplier;
    k.e1 = -quant->input1_shift;
    k.m2 = quant->input2_multiplier;
    k.e2 = -quant->input2_shift;
    k.mo = quant->output_multiplier;
    k.eo = -quant->output_shift;
    k.out_offset = params->output_offset;
    k.act_min = params->activation.min;
    k.act_max = params->activation.max;
    k.subtract = subtract != 0;

    const int32_t inner = b.dims[b.rank - 1];
    const int32_t rows = b.count / inner;
    th_nn_bcast_pos pos;
    th_nn_bcast_start(&pos);
    for (int32_t r = 0; r < rows; r++) {
        add_row(&k, input1 + pos.off1, b.stride1[b.rank - 1], input2 + pos.off2,
                b.stride2[b.rank - 1], inner, output + r * inner);
        th_nn_bcast_next(&b, &pos);
    }
    return TH_OK;
}
