/* th_dw_conv_general_s8: DEPTHWISE_CONV_2D with any filter, stride, padding, dilation and
 * depth multiplier; in place when ch_mult == 1 (scratch: one int8 input plane), reads the
 * input directly when ch_mult > 1 (no scratch). */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

int32_t th_dw_conv_general_s8_scratch_size(const th_dw_conv_params *params,
                                           const th_dims *input_dims,
                                           const th_dims *filter_dims,
                                           const th_dims *output_dims)
{
    (void)filter_dims;
    (void)output_dims;
    /* ch_mult > 1 never runs in place (th_nn.h rule (a)): the input is read directly. */
    if (params == NULL || params->ch_mult != 1 || input_dims == NULL || input_dims->h <= 0 ||
        input_dims->w <= 0) {
        return 0;
    }
    return th_round_up4(input_dims->h * input_dims->w);
}

th_status th_dw_conv_general_s8(const th_context *ctx, const th_dw_conv_params *params,
                                const th_per_channel_quant *quant, const th_dims *input_dims,
                                const int8_t *input, const th_dims *filter_dims,
                                const int8_t *filter, const int32_t *bias,
                                const th_dims *output_dims, int8_t *output)
{
    th_status status = th_nn_check_dw(params, quant, input_dims, input, filter_dims, filter,
                                      output_dims, output);
    if (status != TH_OK) {
        return status;
    }
    status = th_nn_check_scratch(
        ctx, th_dw_conv_general_s8_scratch_size(params, input_dims, filter_dims, output_dims));
    if (status != TH_OK) {
        return status;
    }
    int8_t *plane = ctx != NULL ? (int8_t *)ctx->buf : NULL;
    th_nn_dw_conv_ref_s8(plane, params, quant, input_dims, input, filter_dims, filter, bias,
                         output_dims, output);
    return TH_OK;
}
