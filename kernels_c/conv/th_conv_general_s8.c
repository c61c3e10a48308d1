/* th_conv_general_s8: CONV_2D with any filter size, stride, padding, dilation and groups.
 * DSP path (groups == 1): int16 im2col of two output pixels, then the 2x2 SMLAD core.
 * MVE path (groups == 1): int8 im2col of one pixel, th_nn_mve_conv_s8. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

int32_t th_conv_general_s8_scratch_size(const th_conv_params *params,
                                        const th_dims *input_dims, const th_dims *filter_dims,
                                        const th_dims *output_dims)
{
#if TH_NN_MVE
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL ||
        input_dims->c != filter_dims->c) {
        return 0; /* grouped convolution: the reference loop needs no scratch */
    }
    return th_nn_mve_conv_scratch(filter_dims);
#elif TH_NN_HAS_DSP
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL ||
        input_dims->c != filter_dims->c) {
        return 0; /* grouped convolution: the reference loop needs no scratch */
    }
    /* (locals: TH_MAX evaluates its arguments twice, and the small-Cin size is ~80
     * instructions a call, asked on every call) */
    const int32_t im2col =
        th_nn_im2col_pair_bytes(filter_dims->h * filter_dims->w * filter_dims->c);
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


int32_t th_conv_general_s8_scratch_size_fast(const th_conv_params *params,
                                             const th_dims *input_dims,
                                             const th_dims *filter_dims,
                                             const th_dims *output_dims)
{
#if TH_NN_HAS_DSP && !TH_NN_MVE
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL) {
        return 0;
    }
    /* (the columns and the small-Cin path's never both apply: the columns need dilation.w > 1,
     * the small-Cin path dilation 1; the edge patches, Cout 1, take what they need of the
     * larger) */
    const int32_t columns =
        th_nn_conv_direct_fast_scratch(params, input_dims, filter_dims, output_dims);
    const int32_t edges =
        th_nn_conv_direct_edge_scratch(params, input_dims, filter_dims, output_dims);
    const int32_t direct = TH_MAX(columns, edges);
    const int32_t small_cin =
        th_nn_conv_small_cin_scratch_fast(params, input_dims, filter_dims, output_dims);
    const int32_t cin_small = TH_MAX(direct, small_cin);
    const int32_t few_cout =
        th_nn_conv_few_cout_scratch(params, input_dims, filter_dims, output_dims);
    const int32_t fast = TH_MAX(cin_small, few_cout);
    return fast > th_conv_general_s8_scratch_size(params, input_dims, filter_dims, output_dims)
               ? fast
               : 0;
#else
    (void)params;
    (void)input_dims;
    (void)filter_dims;
    (void)output_dims;
    return 0;
#endif
}

th_status th_conv_general_s8(const th_context *ctx, const th_conv_params *params,
                             const th_per_channel_quant *quant, const th_dims *input_dims,
                             const int8_t *input, const th_dims *filter_dims,
                             const int8_t *filter, const int32_t *bias,
                             const th_dims *output_dims, int8_t *output)
{
    th_status status = th_nn_check_conv(params, quant, input_dims, input, filter_dims, filter,
                                        output_dims, output, 1);
    if (status != TH_OK) {
        return status;
    }
    status = th_nn_check_scratch(
        ctx, th_conv_general_s8_scratch_size(params, input_dims, filter_dims, output_dims));
    if (status != TH_OK) {
        return status;
    }
#if TH_NN_MVE
    if (input_dims->c == filter_dims->c) {
        th_nn_mve_conv_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                          output_dims, output);
        return TH_OK;
    }
#elif TH_NN_HAS_DSP
    /* Cout 1: the small-Cin path's fields of 9-16 chunks, given its fast scratch, before the
     * direct path (where faster: th_nn_conv_small_cin_s8, TH_NN_SMALL_CIN_LONG_ONLY) */
    if (input_dims->c <= 3 && output_dims->c == 1 && TH_NN_KEEP_CONV_SMALL_CIN_LONG &&
        th_nn_conv_small_cin_s8(ctx, params, quant, input_dims, input, filter_dims, filter,
                                bias, output_dims, output, TH_NN_SMALL_CIN_LONG_ONLY)) {
        return TH_OK;
    }
    /* Cout 2-3 given the fast scratch: widened weights, the input widened once for every
     * channel (th_conv_few_cout_s8.c; it checks its scratch itself: the check inline here
     * cost the other layers 2 more instructions a call in registers; Cin < 4 never calls) */
    if (TH_NN_KEEP_CONV_FEW_COUT && (uint32_t)(output_dims->c - 2) < 2u &&
        input_dims->c >= 4 &&
        th_nn_conv_few_cout_s8(ctx, params, quant, input_dims, input, filter_dims, filter,
                               bias, output_dims, output) &&
        TH_NN_PATH(CONV_FEW_COUT)) {
        return TH_OK;
    }
    if ((th_nn_conv_direct_applies(input_dims, filter_dims, output_dims) ||
         th_nn_conv_direct_given(ctx, params, input_dims, filter_dims, output_dims)) &&
        TH_NN_PATH(CONV_DIRECT)) {
        th_nn_conv_direct_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                             output_dims, output);
        return TH_OK;
    }
    if (input_dims->c == filter_dims->c) {
        if (input_dims->c <= 3 && TH_NN_KEEP_CONV_SMALL_CIN && /* (only Cin it takes) */
            th_nn_conv_small_cin_s8(ctx, params, quant, input_dims, input, filter_dims, filter,
                                    bias, output_dims, output, 1)) {
            return TH_OK;
        }
        if (TH_NN_PATH(CONV_IM2COL)) {
            th_nn_conv_im2col_s8(ctx, params, quant, input_dims, input, filter_dims, filter,
                                 bias, output_dims, output);
            return TH_OK;
        }
    }
#endif
    th_nn_conv_ref_s8(params, quant, input_dims, input, filter_dims, filter, bias, output_dims,
                      output);
    return TH_OK;
}
