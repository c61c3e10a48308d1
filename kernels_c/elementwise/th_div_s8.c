/* th_div_s8: int8 DIV as TFLite Micro's reference (DivElementwise): with v1 = x1 + offset1,
 * v2 = x2 + offset2 and the signs moved to v1, v1 normalized by its headroom (leading sign
 * bits) is multiplied by GetReciprocal(v2) (gemmlowp's 1 / (1 + x) in Q0.31), then by the
 * output multiplier, and shifted right by headroom + reciprocal shift - output shift at
 * once; + output offset, clamped to the activation range.
 *
 * Where the C++ is undefined, this kernel does what the oracle's x86 build does (the NumPy
 * reference states the same): a zero divisor gives a reciprocal shift of -1 and the
 * reciprocal of 1 + (0 - 1); a final right shift of 32 or more (small |v1| with a small
 * output shift) masks with all ones and shifts by the count mod 32.
 * NumPy broadcasting and the in-place rule as th_add_s8 (MUL's param structs). */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_broadcast.h"
#include "th_nn_support.h"

/* gemmlowp one_over_one_plus_x_for_x_in_0_1: Q0.31 in and out, Newton-Raphson in Q2.29. */
static int32_t one_over_one_plus_x(int32_t a)
{
    const int64_t sum = (int64_t)a + INT32_MAX;
    const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    const int32_t forty_eight_over_17 = 1515870810;
    const int32_t minus_32_over_17 = -1010580540;
    int32_t x = (int32_t)((uint32_t)forty_eight_over_17 +
                          (uint32_t)th_srdhm(half_denominator, minus_32_over_17));
    for (int i = 0; i < 3; i++) {
        const int32_t one_minus =
            (int32_t)((uint32_t)(1 << 29) - (uint32_t)th_srdhm(half_denominator, x));
        const int32_t delta = th_srdhm(x, one_minus);
        /* SaturatingRoundingMultiplyByPOT<2> */
        const int32_t scaled = delta > (INT32_MAX >> 2)    ? INT32_MAX
                               : delta < -(INT32_MAX >> 2) ? INT32_MIN
                                                           : delta * 4;
        x = (int32_t)((uint32_t)x + (uint32_t)scaled);
    }
    /* SaturatingRoundingMultiplyByPOT<1> */
    return x > (INT32_MAX >> 1) ? INT32_MAX : x < -(INT32_MAX >> 1) ? INT32_MIN : x * 2;
}

/* RoundingDivideByPOT for exponent >= 0 with the x86 behaviour past 31 (see above). */
static int32_t rdbpot_any(int32_t x, int32_t exponent)
{
    if (exponent <= 31) {
        return th_rdbpot(x, exponent);
    }
    /* mask = all ones, threshold = -1; the shift count is taken mod 32 */
    const int32_t shifted = x >> (exponent & 31);
    return shifted + ((x & -1) > ((x < 0 ? 1 : 0) - 1) ? 1 : 0);
}

typedef struct {
    int32_t in1_offset;
    int32_t in2_offset;
    int32_t out_offset;
    int32_t multiplier;
    int32_t shift;
    int32_t act_min;
    int32_t act_max;
} div_consts;

/* What depends on the divisor alone: its sign, GetReciprocal(|v2|, 31) and its shift. */
typedef struct {
    int32_t negate;
    int32_t recip;
    int32_t recip_shift;
} divisor;

static divisor make_divisor(const div_consts *k, int32_t b)
{
    divisor d;
    int32_t v2 = b + k->in2_offset;
    d.negate = v2 < 0;
    if (d.negate) {
        v2 = -v2;
    }
    const int32_t leading = th_clz32((uint32_t)v2);
    d.recip_shift = 31 - leading;
    const uint32_t shifted = (uint32_t)v2 << (leading & 31);
    d.recip = one_over_one_plus_x((int32_t)(shifted - 0x80000000u));
    return d;
}

TH_INLINE int8_t div_by(const div_consts *k, int32_t a, const divisor *d)
{
    int32_t v1 = a + k->in1_offset;
    if (d->negate) {
        v1 = -v1;
    }
    const int32_t recip = d->recip;
    const int32_t recip_shift = d->recip_shift;
    const int32_t headroom = v1 == 0 ? 31 : th_clz32((uint32_t)(v1 < 0 ? ~v1 : v1)) - 1;
    /* recip and the multiplier are >= 0: th_srdhm_pos */
    const int32_t unscaled = th_srdhm_pos((int32_t)((uint32_t)v1 << headroom), recip);
    const int32_t right = headroom + recip_shift - k->shift; /* >= 0: shift <= 23 (host) */
    const int32_t v = rdbpot_any(th_srdhm_pos(unscaled, k->multiplier), right) + k->out_offset;
    return (int8_t)th_clamp(v, k->act_min, k->act_max);
}

/* A divisor that broadcasts along the row (a scalar, a [..., 1] shape) is prepared once. */
static void div_row(const void *consts, const int8_t *a, int32_t step_a, const int8_t *b,
                    int32_t step_b, int32_t n, int8_t *out)
{
    const div_consts kc = *(const div_consts *)consts; /* a local: kept in registers */
    const div_consts *k = &kc;
    if (step_b == 0) {
        const divisor d = make_divisor(k, b[0]);
        for (int32_t i = 0; i < n; i++) {
            out[i] = div_by(k, a[i * step_a], &d);
        }
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        const divisor d = make_divisor(k, b[i]);
        out[i] = div_by(k, a[i * step_a], &d);
    }
}

th_status th_div_s8(const th_context *ctx, const th_mul_params *params,
                    const th_per_tensor_quant *quant, const th_shape *input1_shape,
                    const int8_t *input1, const th_shape *input2_shape, const int8_t *input2,
                    const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || input1 == NULL || input2 == NULL || output == NULL ||
        !th_nn_binary_offsets_ok(params->input1_offset, params->input2_offset,
                                 params->output_offset) ||
        !th_nn_activation_ok(&params->activation) || quant->multiplier < 0 ||
        quant->shift < -31 || quant->shift > 23) {
        return TH_ERR_ARG;
    }
    const div_consts k = {params->input1_offset, params->input2_offset, params->output_offset,
                          quant->multiplier, quant->shift, params->activation.min,
                          params->activation.max};
    return th_nn_bcast_rows(input1_shape, input1, input2_shape, input2, output_shape, output,
                            div_row, &k)
               ? TH_OK
               : TH_ERR_ARG;
}
