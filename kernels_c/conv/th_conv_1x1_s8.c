/* th_conv_1x1_s8: pointwise CONV_2D (1x1 filter, no padding), any stride.
 *
 * In place (th_nn.h aliasing rule (b)): pixels are staged in scratch before their outputs
 * are written, two at a time on the DSP path, one at a time on the portable path.
 */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_support.h"

int32_t th_conv_1x1_s8_scratch_size(const th_conv_params *params, const th_dims *input_dims,
                                    const th_dims *filter_dims, const th_dims *output_dims)
{
    (void)params;
    (void)filter_dims;
    (void)output_dims;
    if (input_dims == NULL || input_dims->c <= 0) {
        return 0;
    }
#if TH_NN_DSP
    return th_nn_im2col_pair_bytes(input_dims->c);
#else
    return input_dims->c;
#endif
}

#if TH_NN_DSP
/* Two consecutive pixels (stride 1) as interleaved int16 columns, 4 channels per step. */
static void pixel_pair_s16(int32_t *cols, const int8_t *px, int32_t cin, int32_t offset2)
{
    const int8_t *px1 = px + cin;
    for (int32_t i = 0; i < cin; i += 4, cols += 4) {
        const int32_t a = th_read_s32(px + i);
        const int32_t b = th_read_s32(px1 + i);
        cols[0] = th_sxtab16(offset2, a);
        cols[1] = th_sxtab16_ror8(offset2, a);
        cols[2] = th_sxtab16(offset2, b);
        cols[3] = th_sxtab16_ror8(offset2, b);
    }
}

/* One pixel as an int16 column (chunk stride 2), 4 channels per step. */
static void pixel_one_s16(int32_t *cols, const int8_t *px, int32_t cin, int32_t offset2)
{
    for (int32_t i = 0; i < cin; i += 4, cols += 2) {
        const int32_t a = th_read_s32(px + i);
        cols[0] = th_sxtab16(offset2, a);
        cols[1] = th_sxtab16_ror8(offset2, a);
    }
}

/* Stride 1, Cin a multiple of 4: consecutive pixels, widened two at a time; tab: the
 * requantization constants or NULL. */
static void __attribute__((noinline))
conv_1x1_dense(int32_t *cols, const th_conv_params *params, const th_per_channel_quant *quant,
               const th_dims *input_dims, const int8_t *input, const int8_t *filter,
               const int32_t *bias, const th_dims *output_dims, int8_t *output,
               const th_nn_out_stage *stage, const th_nn_rq_pair *tab)
{
    const int32_t cin = input_dims->c;
    const int32_t cout = output_dims->c;
    const int32_t pixels = output_dims->h * output_dims->w;
    const int32_t offset2 = (int32_t)(((uint32_t)params->input_offset << 16) |
                                      ((uint32_t)params->input_offset & 0xFFFFu));
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + (int64_t)b * input_dims->h * input_dims->w * cin;
        int8_t *out_b = output + (int64_t)b * pixels * cout;
        int32_t p = 0;
        for (; p + 1 < pixels; p += 2) {
            pixel_pair_s16(cols, in_b + (int64_t)p * cin, cin, offset2);
            th_nn_mat_mult_s8_s16_tab(cols, 2, cin, filter, bias, quant, stage, tab, cout,
                                      out_b + (int64_t)p * cout,
                                      out_b + (int64_t)(p + 1) * cout);
        }
        if (p < pixels) {
            pixel_one_s16(cols, in_b + (int64_t)p * cin, cin, offset2);
            th_nn_mat_mult_s8_s16(cols, 1, cin, filter, bias, quant, stage, cout,
                                  out_b + (int64_t)p * cout, NULL);
        }
    }
}
/* conv_1x1_dense with a table of up to TH_NN_RQ_PAIRS_1X1 channel pairs (1 KiB) on this
 * frame; only called when the table applies, so that frames below it are the table path's
 * (no im2col staging, no th_nn_mat_mult_s8_s16 fallback but for an odd last channel). */
static void __attribute__((noinline))
conv_1x1_dense_tab(int32_t *cols, const th_conv_params *params,
                   const th_per_channel_quant *quant, const th_dims *input_dims,
                   const int8_t *input, const int8_t *filter, const int32_t *bias,
                   const th_dims *output_dims, int8_t *output, const th_nn_out_stage *stage)
{
    th_nn_rq_pair rq_buf[TH_NN_RQ_PAIRS_1X1];
    const th_nn_rq_pair *tab =
        th_nn_rq_table(rq_buf, TH_NN_RQ_PAIRS_1X1, quant, bias, stage, output_dims->c);
    conv_1x1_dense(cols, params, quant, input_dims, input, filter, bias, output_dims, output,
                   stage, tab);
}

/* Any other stride or Cin: th_nn_im2col_s16 per pixel, a table for Cout <= 17. */
static void __attribute__((noinline))
conv_1x1_im2col(int32_t *cols, const th_conv_params *params, const th_per_channel_quant *quant,
                const th_dims *input_dims, const int8_t *input, const th_dims *filter_dims,
                const int8_t *filter, const int32_t *bias, const th_dims *output_dims,
                int8_t *output, const th_nn_out_stage *stage)
{
    const int32_t cin = input_dims->c;
    const int32_t cout = output_dims->c;
    const int32_t out_w = output_dims->w;
    const int32_t pixels = output_dims->h * out_w;
    th_nn_rq_pair rq_buf[TH_NN_RQ_PAIRS]; /* 256 bytes of stack */
    const th_nn_rq_pair *tab = th_nn_rq_table(rq_buf, TH_NN_RQ_PAIRS, quant, bias, stage, cout);
    const int32_t kp = th_round_up4(cin);
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + (int64_t)b * input_dims->h * input_dims->w * cin;
        int8_t *out_b = output + (int64_t)b * pixels * cout;
        int32_t p = 0;
        for (; p + 1 < pixels; p += 2) {
            th_nn_im2col_s16(cols, 4, in_b, input_dims, params, filter_dims, p / out_w,
                             p % out_w);
            th_nn_im2col_s16(cols + 2, 4, in_b, input_dims, params, filter_dims,
                             (p + 1) / out_w, (p + 1) % out_w);
            th_nn_mat_mult_s8_s16_tab(cols, 2, kp, filter, bias, quant, stage, tab, cout,
                                      out_b + (int64_t)p * cout,
                                      out_b + (int64_t)(p + 1) * cout);
        }
        if (p < pixels) {
            th_nn_im2col_s16(cols, 2, in_b, input_dims, params, filter_dims, p / out_w,
                             p % out_w);
            th_nn_mat_mult_s8_s16(cols, 1, kp, filter, bias, quant, stage, cout,
                                  out_b + (int64_t)p * cout, NULL);
        }
    }
}
#endif

th_status th_conv_1x1_s8(const th_context *ctx, const th_conv_params *params,
                         const th_per_channel_quant *quant, const th_dims *input_dims,
                         const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                         const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    th_status status = th_nn_check_conv(params, quant, input_dims, input, filter_dims, filter,
                                        output_dims, output, 0);
    if (status != TH_OK) {
        return status;
    }
    if (filter_dims->h != 1 || filter_dims->w != 1 || params->padding.h != 0 ||
        params->padding.w != 0 || (output_dims->h - 1) * params->stride.h >= input_dims->h ||
        (output_dims->w - 1) * params->stride.w >= input_dims->w) {
        return TH_ERR_UNSUPPORTED;
    }
    status = th_nn_check_scratch(
        ctx, th_conv_1x1_s8_scratch_size(params, input_dims, filter_dims, output_dims));
    if (status != TH_OK) {
        return status;
    }

    const int32_t cin = input_dims->c;
    const int32_t cout = output_dims->c;

#if TH_NN_DSP
    th_nn_out_stage stage;
    th_nn_out_stage_init(&stage, quant, cout, params->output_offset, &params->activation,
                         th_acc_bound(cin, 128, bias, cout));
    th_nn_out_stage_mixed(&stage, quant, bias, cout, (int64_t)cin * 256 * 128);
    int32_t *cols = (int32_t *)ctx->buf;
    if ((cin & 3) == 0 && params->stride.h == 1 && params->stride.w == 1) {
        if (th_nn_rq_table_applies(TH_NN_RQ_PAIRS_1X1, bias, &stage, cout)) {
            conv_1x1_dense_tab(cols, params, quant, input_dims, input, filter, bias,
                               output_dims, output, &stage);
        } else {
            conv_1x1_dense(cols, params, quant, input_dims, input, filter, bias, output_dims,
                           output, &stage, NULL);
        }
        return TH_OK;
    }
    conv_1x1_im2col(cols, params, quant, input_dims, input, filter_dims, filter, bias,
                    output_dims, output, &stage);
#else
    const int32_t out_w = output_dims->w;
    const int32_t pixels = output_dims->h * out_w;
    int8_t *pixel = (int8_t *)ctx->buf;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + (int64_t)b * input_dims->h * input_dims->w * cin;
        int8_t *out_b = output + (int64_t)b * pixels * cout;
        for (int32_t p = 0; p < pixels; p++) {
            const int32_t y = (p / out_w) * params->stride.h;
            const int32_t x = (p % out_w) * params->stride.w;
            memcpy(pixel, in_b + ((int64_t)y * input_dims->w + x) * cin, (size_t)cin);
            for (int32_t oc = 0; oc < cout; oc++) {
                int32_t acc = bias != NULL ? bias[oc] : 0;
                for (int32_t ic = 0; ic < cin; ic++) {
                    const int32_t w = filter[th_filter_index(oc, ic, cin, cout, TH_CONV_BLOCK)];
                    acc = th_add_wrap(acc, (pixel[ic] + params->input_offset) * w);
                }
                const int32_t rq = th_requantize(acc, quant->multiplier[oc], quant->shift[oc]);
                out_b[(int64_t)p * cout + oc] = th_out_s8(
                    rq, params->output_offset, params->activation.min, params->activation.max);
            }
        }
    }
#endif
    return TH_OK;
}
