/* th_conv_3x3_s8: CONV_2D with a 3x3 filter, dilation 1, no groups; any stride/padding. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

int32_t th_conv_3x3_s8_scratch_size(const th_conv_params *params, const th_dims *input_dims,
                                    const th_dims *filter_dims, const th_dims *output_dims)
{
#if TH_NN_MVE
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL) {
        return 0;
    }
    return th_nn_mve_conv_scratch(filter_dims);
#elif TH_NN_HAS_DSP
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL) {
        return 0;
    }
    /* (locals: TH_MAX evaluates its arguments twice; see th_conv_general_s8_scratch_size) */
    const int32_t im2col = th_nn_im2col_pair_bytes(9 * filter_dims->c);
    const int32_t small_cin =
        th_nn_conv_small_cin_scratch(params, input_dims, filter_dims, output_dims);
    return TH_MAX(im2col, small_cin);
#else
    (void)params;
    (void)input_dims;
    (void)filter_dims;
    (void)output_dims;
    return 0;
#endif
}

th_status th_conv_3x3_s8(const th_context *ctx, const th_conv_params *params,
                         const th_per_channel_quant *quant, const th_dims *input_dims,
                         const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                         const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    th_status status = th_nn_check_conv(params, quant, input_dims, input, filter_dims, filter,
                                        output_dims, output, 0);
    if (status != TH_OK) {
        return status;
    }
    if (filter_dims->h != 3 || filter_dims->w != 3 || params->dilation.h != 1 ||
        params->dilation.w != 1) {
        return TH_ERR_UNSUPPORTED;
    }
    status = th_nn_check_scratch(
        ctx, th_conv_3x3_s8_scratch_size(params, input_dims, filter_dims, output_dims));
    if (status != TH_OK) {
        return status;
    }
#if TH_NN_MVE
    th_nn_mve_conv_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                      output_dims, output);
#elif TH_NN_HAS_DSP
    /* Cout 2-3 given the fast scratch (th_conv_few_cout_s8.c, which checks it) */
    if (TH_NN_KEEP_CONV_FEW_COUT && (uint32_t)(output_dims->c - 2) < 2u &&
        input_dims->c >= 4 &&
        th_nn_conv_few_cout_s8(ctx, params, quant, input_dims, input, filter_dims, filter,
                               bias, output_dims, output) &&
        TH_NN_PATH(CONV_FEW_COUT)) {
        return TH_OK;
    }
    if (th_nn_conv_direct_applies(input_dims, filter_dims, output_dims) &&
        TH_NN_PATH(CONV_DIRECT)) {
        th_nn_conv_direct_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                             output_dims, output);
        return TH_OK;
    }
    if (input_dims->c <= 3 && TH_NN_KEEP_CONV_SMALL_CIN && /* (only Cin it takes) */
        th_nn_conv_small_cin_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                                output_dims, output, 0)) {
        return TH_OK;
    }
    th_nn_conv_im2col_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                         output_dims, output);
#else
    th_nn_conv_ref_s8(params, quant, input_dims, input, filter_dims, filter, bias, output_dims,
                      output);
#endif
    return TH_OK;
}

th_status th_conv_3x3_s8_w16(const th_context *ctx, const th_conv_params *params,
                             const th_per_channel_quant *quant, const th_dims *input_dims,
                             const int8_t *input, const th_dims *filter_dims,
                             const int16_t *filter, const int32_t *bias,
                             const th_dims *output_dims, int8_t *output, const int32_t *rq)
{
#if TH_NN_HAS_DSP && !TH_NN_MVE
    /* th_nn_check_conv looks at the filter pointer only (never NULL here). */
    th_status status = th_nn_check_conv(params, quant, input_dims, input, filter_dims,
                                        (const int8_t *)filter, output_dims, output, 0);
    if (status != TH_OK) {
        return status;
    }
    if (filter_dims->h != 3 || filter_dims->w != 3 || params->dilation.h != 1 ||
        params->dilation.w != 1 || input_dims->c <= 3 ||
        th_nn_conv_direct_applies(input_dims, filter_dims, output_dims)) {
        return TH_ERR_UNSUPPORTED; /* the int8 kernel's other paths */
    }
    status = th_nn_check_scratch(
        ctx, th_conv_3x3_s8_scratch_size(params, input_dims, filter_dims, output_dims));
    if (status != TH_OK) {
        return status;
    }
    th_nn_conv_im2col_s8_w16(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                             output_dims, output, (const th_nn_rq_pair *)(const void *)rq);
    return TH_OK;
#else
    (void)ctx;
    (void)params;
    (void)quant;
    (void)input_dims;
    (void)input;
    (void)filter_dims;
    (void)filter;
    (void)bias;
    (void)output_dims;
    (void)output;
    (void)rq;
    return TH_ERR_UNSUPPORTED; /* the host chooses int16 weights for DSP builds only */
#endif
}
