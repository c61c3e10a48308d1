/* th_dw_conv_s4: DEPTHWISE_CONV_2D with packed int4 filters (th_nn.h "INT4"): the filter is
 * one packed run of KH*KW*C values in the int8 kernel's [KH, KW, C] order, padded to whole
 * words. It is widened once per call into the head of the scratch (KH*KW*C bytes, a few
 * hundred), and the int8 kernel (th_dw_conv_s8, with its own staging and fast
 * requantization) runs on it with the rest of the scratch. Same values, same arithmetic:
 * bit-exact with the int8 kernels by construction. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_s4.h"

/* Bytes of the widened filter: round_up4(KH*KW*C), 0 for bad dims. */
static int32_t widened_bytes(const th_dims *filter_dims)
{
    const int64_t n = (int64_t)filter_dims->h * filter_dims->w * filter_dims->c;
    return n <= 0 || n > INT32_MAX / 2 ? 0 : (int32_t)((n + 3) & ~INT64_C(3));
}

int32_t th_dw_conv_s4_scratch_size(const th_dw_conv_params *params, const th_dims *input_dims,
                                   const th_dims *filter_dims, const th_dims *output_dims)
{
    if (filter_dims == NULL) {
        return 0;
    }
    return widened_bytes(filter_dims) +
           th_dw_conv_s8_scratch_size(params, input_dims, filter_dims, output_dims);
}

int32_t th_dw_conv_s4_scratch_size_fast(const th_dw_conv_params *params,
                                        const th_dims *input_dims, const th_dims *filter_dims,
                                        const th_dims *output_dims)
{
    if (filter_dims == NULL) {
        return 0;
    }
    const int32_t fast =
        th_dw_conv_s8_scratch_size_fast(params, input_dims, filter_dims, output_dims);
    return fast > 0 ? widened_bytes(filter_dims) + fast : 0;
}

th_status th_dw_conv_s4(const th_context *ctx, const th_dw_conv_params *params,
                        const th_per_channel_quant *quant, const th_dims *input_dims,
                        const int8_t *input, const th_dims *filter_dims, const uint8_t *filter,
                        const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    th_status status = th_nn_check_dw(params, quant, input_dims, input, filter_dims,
                                      (const int8_t *)filter, output_dims, output);
    if (status != TH_OK) {
        return status;
    }
    const int32_t head = widened_bytes(filter_dims);
    const int32_t need =
        head + th_dw_conv_s8_scratch_size(params, input_dims, filter_dims, output_dims);
    status = th_nn_check_scratch(ctx, need);
    if (status != TH_OK) {
        return status;
    }
    int8_t *w = (int8_t *)ctx->buf;
    const int32_t n = filter_dims->h * filter_dims->w * filter_dims->c;
    for (int32_t i = 0; i + 1 < n; i += 2) {
        const int32_t byte = filter[i >> 1];
        w[i] = (int8_t)(((byte & 0xF) ^ 8) - 8);
        w[i + 1] = (int8_t)(((byte >> 4) ^ 8) - 8);
    }
    if (n & 1) {
        w[n - 1] = (int8_t)(((filter[n >> 1] & 0xF) ^ 8) - 8);
    }
    const th_context rest = {(int8_t *)ctx->buf + head, ctx->size - head};
    return th_dw_conv_s8(&rest, params, quant, input_dims, input, filter_dims, w, bias,
                         output_dims, output);
}
