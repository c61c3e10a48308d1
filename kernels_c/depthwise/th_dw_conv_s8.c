/* th_dw_conv_s8: DEPTHWISE_CONV_2D wrapper, picks th_dw_conv_3x3_s8 when it applies. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

static int is_3x3(const th_dw_conv_params *params, const th_dims *filter_dims)
{
    return filter_dims->h == 3 && filter_dims->w == 3 && params->ch_mult == 1 &&
           params->dilation.h == 1 && params->dilation.w == 1 &&
           params->stride.h == params->stride.w &&
           (params->stride.h == 1 || params->stride.h == 2);
}

int32_t th_dw_conv_s8_scratch_size(const th_dw_conv_params *params, const th_dims *input_dims,
                                   const th_dims *filter_dims, const th_dims *output_dims)
{
    if (params == NULL || filter_dims == NULL) {
        return 0;
    }
    if (is_3x3(params, filter_dims)) {
        return th_dw_conv_3x3_s8_scratch_size(params, input_dims, filter_dims, output_dims);
    }
    return th_dw_conv_general_s8_scratch_size(params, input_dims, filter_dims, output_dims);
}

int32_t th_dw_conv_s8_scratch_size_fast(const th_dw_conv_params *params,
                                        const th_dims *input_dims, const th_dims *filter_dims,
                                        const th_dims *output_dims)
{
    if (params == NULL || filter_dims == NULL) {
        return 0;
    }
    if (is_3x3(params, filter_dims)) {
        return th_dw_conv_3x3_s8_scratch_size_fast(params, input_dims, filter_dims,
                                                   output_dims);
    }
    return th_dw_conv_general_s8_scratch_size_fast(params, input_dims, filter_dims,
                                                   output_dims);
}

th_status th_dw_conv_s8(const th_context *ctx, const th_dw_conv_params *params,
                        const th_per_channel_quant *quant, const th_dims *input_dims,
                        const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                        const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    if (params == NULL || filter_dims == NULL) {
        return TH_ERR_ARG;
    }
    if (is_3x3(params, filter_dims)) {
        return th_dw_conv_3x3_s8(ctx, params, quant, input_dims, input, filter_dims, filter,
                                 bias, output_dims, output);
    }
    return th_dw_conv_general_s8(ctx, params, quant, input_dims, input, filter_dims, filter,
                                 bias, output_dims, output);
}
