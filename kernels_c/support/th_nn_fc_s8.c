/* th_nn_fc_s8: FULLY_CONNECTED core shared by the per-tensor and per-channel kernels.
 *
 * DSP path: weights interleaved by blocks of 4 output channels (th_nn_support.h), input
 * read in place as int8 and widened with SXTAB16 (the input offset rides along), so no
 * scratch is needed. A filter offset (per-tensor FC) is folded in exactly:
 * sum((x + io) * (w + fo)) = sum((x + io) * w) + fo * sum(x + io).
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

th_status th_nn_check_fc(const th_fc_params *params, const int32_t *multiplier,
                         const int32_t *shift, int32_t count, const th_dims *input_dims,
                         const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                         const th_dims *output_dims, const int8_t *output)
{
    if (params == NULL || multiplier == NULL || shift == NULL || input_dims == NULL ||
        input == NULL || filter_dims == NULL || filter == NULL || output_dims == NULL ||
        output == NULL) {
        return TH_ERR_ARG;
    }
    const int32_t cin = filter_dims->c;
    const int32_t cout = filter_dims->n;
    if (cin <= 0 || cout <= 0 || input_dims->n <= 0 || input_dims->c != cin ||
        output_dims->n != input_dims->n || output_dims->c != cout ||
        (int64_t)input_dims->n * cin >= (INT64_C(1) << 30) ||
        (int64_t)cout * cin >= (INT64_C(1) << 30)) {
        return TH_ERR_ARG;
    }
    if (params->input_offset < -127 || params->input_offset > 128 ||
        params->filter_offset < -127 || params->filter_offset > 128 ||
        params->output_offset < -128 || params->output_offset > 127 ||
        params->activation.min < -128 || params->activation.min > params->activation.max ||
        params->activation.max > 127) {
        return TH_ERR_ARG;
    }
    for (int32_t i = 0; i < count; i++) {
        if (multiplier[i] < 0 || shift[i] < -31 || shift[i] > 30) {
            return TH_ERR_ARG;
        }
    }
#if TH_NN_INTERLEAVED
    if (((uintptr_t)filter & 3u) != 0) {
        return TH_ERR_ARG;
    }
#endif
    return TH_OK;
}

#if TH_NN_DSP

/* Input word k..k+3, zero-padded past cin (the filter's padding is zero too). */
TH_INLINE int32_t load_x(const int8_t *x, int32_t k, int32_t cin)
{
    if (k + 4 <= cin) {
        return th_read_s32(x + k);
    }
    int8_t tail[4] = {0, 0, 0, 0};
    for (int32_t i = 0; k + i < cin; i++) {
        tail[i] = x[k + i];
    }
    return th_read_s32(tail);
}

/* Dot products of one input row with g (1..4) channels of an interleaved block. The
 * zero padding of a partial last word multiplies the offset by zero weights only. */
static void block_dot(const int8_t *x, int32_t cin, int32_t offset2, const int8_t *w,
                      int32_t g, int32_t acc[4])
{
    const int32_t kp = th_round_up4(cin);
    for (int32_t k = 0; k < kp; k += 4) {
        const int32_t xv = load_x(x, k, cin);
        const int32_t xa = th_sxtab16(offset2, xv);
        const int32_t xb = th_sxtab16_ror8(offset2, xv);
        for (int32_t j = 0; j < g; j++) {
            const int32_t wv = th_read_s32(w);
            w += 4;
            acc[j] = th_smlad(xa, th_sxtb16(wv), acc[j]);
            acc[j] = th_smlad(xb, th_sxtb16_ror8(wv), acc[j]);
        }
    }
}

/* Four channels: the hot loop (21 instructions per 16 MACs once compiled). */
static void block4_dot(const int8_t *x, int32_t cin, int32_t offset2, const int8_t *w,
                       int32_t acc[4])
{
    int32_t a0 = acc[0];
    int32_t a1 = acc[1];
    int32_t a2 = acc[2];
    int32_t a3 = acc[3];
    const int32_t full = cin / 4;
    for (int32_t j = 0; j < full; j++) {
        const int32_t xv = th_read_s32(x);
        x += 4;
        const int32_t xa = th_sxtab16(offset2, xv);
        const int32_t xb = th_sxtab16_ror8(offset2, xv);
        const int32_t w0 = th_read_s32(w);
        const int32_t w1 = th_read_s32(w + 4);
        const int32_t w2 = th_read_s32(w + 8);
        const int32_t w3 = th_read_s32(w + 12);
        w += 16;
        a0 = th_smlad(xa, th_sxtb16(w0), a0);
        a0 = th_smlad(xb, th_sxtb16_ror8(w0), a0);
        a1 = th_smlad(xa, th_sxtb16(w1), a1);
        a1 = th_smlad(xb, th_sxtb16_ror8(w1), a1);
        a2 = th_smlad(xa, th_sxtb16(w2), a2);
        a2 = th_smlad(xb, th_sxtb16_ror8(w2), a2);
        a3 = th_smlad(xa, th_sxtb16(w3), a3);
        a3 = th_smlad(xb, th_sxtb16_ror8(w3), a3);
    }
    if (cin & 3) {
        const int32_t xv = load_x(x, 0, cin & 3);
        const int32_t xa = th_sxtab16(offset2, xv);
        const int32_t xb = th_sxtab16_ror8(offset2, xv);
        int32_t wv = th_read_s32(w);
        a0 = th_smlad(xb, th_sxtb16_ror8(wv), th_smlad(xa, th_sxtb16(wv), a0));
        wv = th_read_s32(w + 4);
        a1 = th_smlad(xb, th_sxtb16_ror8(wv), th_smlad(xa, th_sxtb16(wv), a1));
        wv = th_read_s32(w + 8);
        a2 = th_smlad(xb, th_sxtb16_ror8(wv), th_smlad(xa, th_sxtb16(wv), a2));
        wv = th_read_s32(w + 12);
        a3 = th_smlad(xb, th_sxtb16_ror8(wv), th_smlad(xa, th_sxtb16(wv), a3));
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

#endif /* TH_NN_DSP */

void th_nn_fc_s8(const th_fc_params *params, const int32_t *multiplier, const int32_t *shift,
                 int32_t mult_step, const th_dims *input_dims, const int8_t *input,
                 const th_dims *filter_dims, const int8_t *filter, const int32_t *bias,
                 const th_dims *output_dims, int8_t *output)
{
    const int32_t cin = filter_dims->c;
    const int32_t cout = filter_dims->n;
    (void)output_dims;
#if TH_NN_DSP
    const int32_t kp = th_round_up4(cin);
    const int32_t offset2 = (int32_t)(((uint32_t)params->input_offset << 16) |
                                      ((uint32_t)params->input_offset & 0xFFFFu));
    int fast = 1;
    /* The fast requantization needs |acc| < 2^29: check with the actual biases. */
    {
        int64_t max_bias = 0;
        for (int32_t c = 0; bias != NULL && c < cout; c++) {
            const int64_t b = bias[c] < 0 ? -(int64_t)bias[c] : bias[c];
            max_bias = b > max_bias ? b : max_bias;
        }
        const int64_t acc_bound = (int64_t)cin * 255 * 255 + max_bias;
        for (int32_t c = 0; c < (mult_step ? cout : 1) && fast; c++) {
            fast = th_fast_rq_ok(multiplier[c], shift[c], acc_bound);
        }
    }
#endif
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *x = input + (int64_t)b * cin;
        int8_t *out = output + (int64_t)b * cout;
        int32_t x_sum = 0; /* sum(x + input_offset), for the filter offset */
        if (params->filter_offset != 0) {
            for (int32_t k = 0; k < cin; k++) {
                x_sum += x[k] + params->input_offset;
            }
        }
#if TH_NN_DSP
        for (int32_t c0 = 0; c0 < cout; c0 += TH_FC_BLOCK) {
            const int32_t g = TH_MIN(TH_FC_BLOCK, cout - c0);
            int32_t acc[4] = {0, 0, 0, 0};
            for (int32_t j = 0; j < g; j++) {
                acc[j] = th_add_wrap(bias != NULL ? bias[c0 + j] : 0,
                                     (int32_t)((uint32_t)params->filter_offset *
                                               (uint32_t)x_sum));
            }
            const int8_t *w = filter + (int64_t)c0 * kp;
            if (g == 4) {
                block4_dot(x, cin, offset2, w, acc);
            } else {
                block_dot(x, cin, offset2, w, g, acc);
            }
            for (int32_t j = 0; j < g; j++) {
                const int32_t c = c0 + j;
                const int32_t m = multiplier[c * mult_step];
                const int32_t s = shift[c * mult_step];
                int32_t v;
                if (fast) {
                    const th_fast_rq rq = th_fast_rq_make(m, s, params->output_offset);
                    v = th_clamp(th_fast_rq_apply(acc[j], &rq), params->activation.min,
                                 params->activation.max);
                } else {
                    v = th_out_s8(th_requantize(acc[j], m, s), params->output_offset,
                                  params->activation.min, params->activation.max);
                }
                out[c] = (int8_t)v;
            }
        }
#else
        for (int32_t c = 0; c < cout; c++) {
            int32_t acc = bias != NULL ? bias[c] : 0;
            for (int32_t k = 0; k < cin; k++) {
                const int32_t w = filter[th_filter_index(c, k, cin, cout, TH_FC_BLOCK)];
                acc = th_add_wrap(acc, (x[k] + params->input_offset) * w);
            }
            acc = th_add_wrap(acc, (int32_t)((uint32_t)params->filter_offset * (uint32_t)x_sum));
            const int32_t rq = th_requantize(acc, multiplier[c * mult_step], shift[c * mult_step]);
            out[c] = th_out_s8(rq, params->output_offset, params->activation.min,
                               params->activation.max);
        }
#endif
    }
}
