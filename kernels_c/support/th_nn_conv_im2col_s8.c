/* th_nn_conv_im2col_s8: CONV_2D (groups 1) through int16 im2col and the 2x2 SMLAD core,
 * two output pixels at a time. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP
/* filter16 non-NULL: the host's int16 weights (th_nn_mat_mult_s16w_tab) and its table of
 * requantization constants (host_tab, NULL: none), instead of filter. One copy for both
 * entry points (a test per pixel pair costs nothing; a second copy of the loop, 0.5 KB). */
static void __attribute__((noinline))
conv_im2col(const th_context *ctx, const th_conv_params *params,
            const th_per_channel_quant *quant, const th_dims *input_dims, const int8_t *input,
            const th_dims *filter_dims, const int8_t *filter, const int32_t *bias,
            const th_dims *output_dims, int8_t *output, const int16_t *filter16,
            const th_nn_rq_pair *host_tab)
{
    const int32_t k_total = filter_dims->h * filter_dims->w * filter_dims->c;
    const int32_t cout = output_dims->c;
    const int32_t out_w = output_dims->w;
    const int32_t pixels = output_dims->h * out_w;
    th_nn_out_stage stage;
    th_nn_out_stage_init(&stage, quant, cout, params->output_offset, &params->activation,
                         th_acc_bound(k_total, 128, bias, cout));
    th_nn_out_stage_mixed(&stage, quant, bias, cout, (int64_t)k_total * 256 * 128);
    th_nn_rq_pair rq_buf[TH_NN_RQ_PAIRS]; /* 256 bytes of stack */
    const th_nn_rq_pair *tab = NULL;
    if (filter16 == NULL) {
        tab = th_nn_rq_table(rq_buf, TH_NN_RQ_PAIRS, quant, bias, &stage, cout);
    } else if (th_nn_rq_table_applies(cout, bias, &stage, cout)) {
        tab = host_tab; /* the constants th_nn_rq_table would make, for every pair */
    }
    int32_t *cols = (int32_t *)ctx->buf;
    const int32_t kp = th_round_up4(k_total);
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b =
            input + (int64_t)b * input_dims->h * input_dims->w * input_dims->c;
        int8_t *out_b = output + (int64_t)b * pixels * cout;
        int32_t p = 0;
        for (; p + 1 < pixels; p += 2) {
            const int32_t oy = p / out_w;
            const int32_t ox = p - oy * out_w;
            if (ox + 1 < out_w && (input_dims->c & 3) == 0) {
                th_nn_im2col_pair_s16(cols, in_b, input_dims, params, filter_dims, oy, ox);
            } else {
                th_nn_im2col_two_s16(cols, in_b, input_dims, params, filter_dims, oy, ox,
                                     (p + 1) / out_w, (p + 1) % out_w);
            }
            if (filter16 != NULL) {
                th_nn_mat_mult_s16w_tab(cols, 2, kp, filter16, bias, quant, &stage, tab, cout,
                                        out_b + (int64_t)p * cout,
                                        out_b + (int64_t)(p + 1) * cout);
                continue;
            }
            th_nn_mat_mult_s8_s16_tab(cols, 2, kp, filter, bias, quant, &stage, tab, cout,
                                      out_b + (int64_t)p * cout,
                                      out_b + (int64_t)(p + 1) * cout);
        }
        if (p < pixels && filter16 != NULL) {
            th_nn_im2col_s16(cols, 2, in_b, input_dims, params, filter_dims, p / out_w,
                             p % out_w);
            th_nn_mat_mult_s16w_tab(cols, 1, kp, filter16, bias, quant, &stage, NULL, cout,
                                    out_b + (int64_t)p * cout, NULL);
        } else if (p < pixels) {
            /* The last pixel of an odd count as a pair with itself, both outputs written to
             * the same place: the 2x2 loops a layer takes anyway, not a one-pixel loop. */
            th_nn_im2col_two_s16(cols, in_b, input_dims, params, filter_dims, p / out_w,
                                 p % out_w, p / out_w, p % out_w);
            th_nn_mat_mult_s8_s16_tab(cols, 2, kp, filter, bias, quant, &stage, tab, cout,
                                      out_b + (int64_t)p * cout, out_b + (int64_t)p * cout);
        }
    }
}

void th_nn_conv_im2col_s8(const th_context *ctx, const th_conv_params *params,
                          const th_per_channel_quant *quant, const th_dims *input_dims,
                          const int8_t *input, const th_dims *filter_dims,
                          const int8_t *filter, const int32_t *bias,
                          const th_dims *output_dims, int8_t *output)
{
    conv_im2col(ctx, params, quant, input_dims, input, filter_dims, filter, bias, output_dims,
                output, NULL, NULL);
}

void th_nn_conv_im2col_s8_w16(const th_context *ctx, const th_conv_params *params,
                              const th_per_channel_quant *quant, const th_dims *input_dims,
                              const int8_t *input, const th_dims *filter_dims,
                              const int16_t *filter, const int32_t *bias,
                              const th_dims *output_dims, int8_t *output,
                              const th_nn_rq_pair *tab)
{
    conv_im2col(ctx, params, quant, input_dims, input, filter_dims, NULL, bias, output_dims,
                output, filter, tab);
}
#endif
