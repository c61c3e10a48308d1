/* Argument checks and the output stage shared by the MAC kernels. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

static int dims_positive(const th_dims *d)
{
    return d->n > 0 && d->h > 0 && d->w > 0 && d->c > 0;
}

static int offsets_ok(int32_t input_offset, int32_t output_offset, const th_activation *act)
{
    return input_offset >= -127 && input_offset <= 128 && output_offset >= -128 &&
           output_offset <= 127 && act->min >= -128 && act->min <= act->max && act->max <= 127;
}

static int quant_present(const th_per_channel_quant *quant)
{
    return quant != NULL && quant->multiplier != NULL && quant->shift != NULL;
}

int th_nn_quant_ok(const th_per_channel_quant *quant, int32_t channels)
{
    if (!quant_present(quant)) {
        return 0;
    }
    for (int32_t c = 0; c < channels; c++) {
        if (quant->multiplier[c] < 0 || quant->shift[c] < -31 || quant->shift[c] > 30) {
            return 0;
        }
    }
    return 1;
}

/* Element counts must stay far below 2^31 so that index arithmetic never overflows. */
static int size_ok(const th_dims *d)
{
    const int64_t n = (int64_t)d->n * d->h * d->w * d->c;
    return n < (INT64_C(1) << 30);
}

void th_nn_out_stage_init(th_nn_out_stage *stage, const th_per_channel_quant *quant,
                          int32_t channels, int32_t output_offset,
                          const th_activation *activation, int64_t acc_bound)
{
    stage->output_offset = output_offset;
    stage->act_min = activation->min;
    stage->act_max = activation->max;
    stage->clamp = activation->min > -128 || activation->max < 127;
    stage->mixed = 0;
    stage->bias_limit = 0;
    /* th_fast_rq_ok for every channel, its bound tested once (the loop in locals: the
     * stores to *stage may alias the quantization arrays for the compiler). */
    int fast = TH_NN_HAS_DSP;
    if (fast && channels > 0) {
        const int32_t *const mult = quant->multiplier;
        const int32_t *const shift = quant->shift;
        fast = acc_bound < (INT64_C(1) << 29);
        for (int32_t c = 0; c < channels && fast; c++) {
            fast = mult[c] >= 0 && th_fast_shift_ok(shift[c]);
        }
    }
    stage->fast = fast;
}

void th_nn_out_stage_mixed(th_nn_out_stage *stage, const th_per_channel_quant *quant,
                           const int32_t *bias, int32_t channels, int64_t taps_bound)
{
    if (!TH_NN_HAS_DSP || stage->fast || taps_bound >= (INT64_C(1) << 29)) {
        return;
    }
    stage->bias_limit = (int32_t)((INT64_C(1) << 29) - taps_bound);
    for (int32_t c = 0; c < channels && !stage->mixed; c++) {
        stage->mixed = th_nn_fast_channel(stage, quant, bias, c);
    }
}

th_status th_nn_check_scratch(const th_context *ctx, int32_t needed)
{
    if (needed <= 0) {
        return TH_OK;
    }
    if (ctx == NULL || ctx->buf == NULL || ctx->size < needed ||
        ((uintptr_t)ctx->buf & 3u) != 0) {
        return TH_ERR_SCRATCH;
    }
    return TH_OK;
}

th_status th_nn_check_conv(const th_conv_params *params, const th_per_channel_quant *quant,
                           const th_dims *input_dims, const int8_t *input,
                           const th_dims *filter_dims, const int8_t *filter,
                           const th_dims *output_dims, const int8_t *output, int allow_groups)
{
    if (params == NULL || input_dims == NULL || input == NULL || filter_dims == NULL ||
        filter == NULL || output_dims == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    if (!dims_positive(input_dims) || !dims_positive(filter_dims) ||
        !dims_positive(output_dims) || !size_ok(input_dims) || !size_ok(filter_dims) ||
        !size_ok(output_dims)) {
        return TH_ERR_ARG;
    }
    if (output_dims->n != input_dims->n || output_dims->c != filter_dims->n ||
        input_dims->c % filter_dims->c != 0) {
        return TH_ERR_ARG;
    }
    const int32_t groups = input_dims->c / filter_dims->c;
    if (filter_dims->n % groups != 0) {
        return TH_ERR_ARG;
    }
    if (params->stride.h < 1 || params->stride.w < 1 || params->dilation.h < 1 ||
        params->dilation.w < 1 || params->padding.h < 0 || params->padding.w < 0 ||
        !offsets_ok(params->input_offset, params->output_offset, &params->activation)) {
        return TH_ERR_ARG;
    }
    if (!th_nn_quant_ok(quant, output_dims->c)) {
        return TH_ERR_ARG;
    }
#if TH_NN_FILTER_INTERLEAVED
    if (((uintptr_t)filter & 3u) != 0) {
        return TH_ERR_ARG; /* the interleaved layout is read a word at a time */
    }
#endif
    if (groups != 1 && !allow_groups) {
        return TH_ERR_UNSUPPORTED;
    }
    return TH_OK;
}

th_status th_nn_check_dw_dims(const th_dw_conv_params *params,
                              const th_per_channel_quant *quant, const th_dims *input_dims,
                              const int8_t *input, const th_dims *filter_dims,
                              const int8_t *filter, const th_dims *output_dims,
                              const int8_t *output)
{
    if (params == NULL || input_dims == NULL || input == NULL || filter_dims == NULL ||
        filter == NULL || output_dims == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    if (!dims_positive(input_dims) || !dims_positive(filter_dims) ||
        !dims_positive(output_dims) || !size_ok(input_dims) || !size_ok(filter_dims) ||
        !size_ok(output_dims) || params->ch_mult < 1) {
        return TH_ERR_ARG;
    }
    if (filter_dims->n != 1 || output_dims->n != input_dims->n ||
        (int64_t)input_dims->c * params->ch_mult != output_dims->c ||
        filter_dims->c != output_dims->c) {
        return TH_ERR_ARG;
    }
    if (params->stride.h < 1 || params->stride.w < 1 || params->dilation.h < 1 ||
        params->dilation.w < 1 || params->padding.h < 0 || params->padding.w < 0 ||
        !offsets_ok(params->input_offset, params->output_offset, &params->activation)) {
        return TH_ERR_ARG;
    }
    if (!quant_present(quant)) {
        return TH_ERR_ARG;
    }
    return TH_OK;
}

th_status th_nn_check_dw(const th_dw_conv_params *params, const th_per_channel_quant *quant,
                         const th_dims *input_dims, const int8_t *input,
                         const th_dims *filter_dims, const int8_t *filter,
                         const th_dims *output_dims, const int8_t *output)
{
    const th_status status = th_nn_check_dw_dims(params, quant, input_dims, input, filter_dims,
                                                 filter, output_dims, output);
    if (status != TH_OK) {
        return status;
    }
    return th_nn_quant_ok(quant, output_dims->c) ? TH_OK : TH_ERR_ARG;
}
