/* th_conv_s8: CONV_2D wrapper, picks the fastest variant that accepts the params. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

typedef enum { CONV_1X1, CONV_3X3, CONV_GENERAL } conv_variant;

static conv_variant pick(const th_conv_params *params, const th_dims *input_dims,
                         const th_dims *filter_dims, const th_dims *output_dims)
{
    const int no_groups = input_dims->c == filter_dims->c;
    if (no_groups && filter_dims->h == 1 && filter_dims->w == 1 && params->padding.h == 0 &&
        params->padding.w == 0 && (output_dims->h - 1) * params->stride.h < input_dims->h &&
        (output_dims->w - 1) * params->stride.w < input_dims->w) {
        return CONV_1X1;
    }
    if (no_groups && filter_dims->h == 3 && filter_dims->w == 3 && params->dilation.h == 1 &&
        params->dilation.w == 1) {
        return CONV_3X3;
    }
    return CONV_GENERAL;
}

int32_t th_conv_s8_scratch_size(const th_conv_params *params, const th_dims *input_dims,
                                const th_dims *filter_dims, const th_dims *output_dims)
{
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL) {
        return 0;
    }
    switch (pick(params, input_dims, filter_dims, output_dims)) {
    case CONV_1X1:
        return th_conv_1x1_s8_scratch_size(params, input_dims, filter_dims, output_dims);
    case CONV_3X3:
        return th_conv_3x3_s8_scratch_size(params, input_dims, filter_dims, output_dims);
    default:
        return th_conv_general_s8_scratch_size(params, input_dims, filter_dims, output_dims);
    }
}

int32_t th_conv_s8_scratch_size_fast(const th_conv_params *params, const th_dims *input_dims,
                                     const th_dims *filter_dims, const th_dims *output_dims)
{
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL) {
        return 0;
    }
    switch (pick(params, input_dims, filter_dims, output_dims)) {
    case CONV_1X1:
        return th_conv_1x1_s8_scratch_size_fast(params, input_dims, filter_dims, output_dims);
    case CONV_3X3: {
#if TH_NN_HAS_DSP && !TH_NN_MVE
        /* Cout 2-3: the widened weights (th_conv_few_cout_s8.c); Cout 1: the direct path's
         * edge patches and widened rows (th_nn_conv_direct_s8's row runs); else no faster
         * path */
        const int32_t few =
            th_nn_conv_few_cout_scratch(params, input_dims, filter_dims, output_dims);
        const int32_t edge =
            th_nn_conv_direct_edge_scratch(params, input_dims, filter_dims, output_dims);
        const int32_t fast = TH_MAX(few, edge);
        return fast > th_conv_3x3_s8_scratch_size(params, input_dims, filter_dims, output_dims)
                   ? fast
                   : 0;
#else
        return 0;
#endif
    }
    default:
        return th_conv_general_s8_scratch_size_fast(params, input_dims, filter_dims,
                                                    output_dims);
    }
}

th_status th_conv_s8(const th_context *ctx, const th_conv_params *params,
                     const th_per_channel_quant *quant, const th_dims *input_dims,
                     const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                     const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL) {
        return TH_ERR_ARG;
    }
    switch (pick(params, input_dims, filter_dims, output_dims)) {
    case CONV_1X1:
        return th_conv_1x1_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                              output_dims, output);
    case CONV_3X3:
        return th_conv_3x3_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                              output_dims, output);
    default:
        return th_conv_general_s8(ctx, params, quant, input_dims, input, filter_dims, filter,
                                  bias, output_dims, output);
    }
}
