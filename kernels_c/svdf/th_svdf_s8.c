/* th_svdf_s8: int8 SVDF with int16 weights_time and an int16 state, as TFLite Micro's
 * integer SVDF (EvalIntegerSvdfReference), per batch b:
 *   1. every state row (b, f) = memory int16 values, oldest first, moves one step left
 *      (one memmove of the whole state: the value crossing into the previous row lands
 *      in that row's newest slot, which step 2 overwrites);
 *   2. newest(b, f) = clamp16(MultiplyByQuantizedMultiplier(
 *          sum_c weights_feature[f][c] * (input[b][c] + input_offset), feature quant));
 *   3. out(b, u) = clamp8(MultiplyByQuantizedMultiplier(bias[u] + sum over the rank
 *          filters f of unit u of sum_m weights_time[f][m] * state(b, f)[m], time quant)
 *          + output_offset).
 * No fused activation: TFLM's integer SVDF ignores it. int32 sums wrap like TFLM's.
 * Scratch: the batch's input plus input_offset as int16, once per batch (on DSP builds
 * each group of four stored as x0 x2 x1 x3, the order SXTB16 unpacks the weights in, so
 * one SMLAD takes two products); the time sums take pairs of int16 through SMLAD. */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_support.h"

int32_t th_svdf_s8_scratch_size(const th_svdf_params *params, const th_dims *input_dims,
                                const th_dims *weights_feature_dims,
                                const th_dims *weights_time_dims)
{
    (void)params;
    (void)weights_feature_dims;
    (void)weights_time_dims;
    if (input_dims == NULL || input_dims->c <= 0) {
        return 0;
    }
    return (int32_t)(((uint32_t)input_dims->c * 2u + 3u) & ~3u);
}

/* The batch's input + offset, int16, in the order the feature dot product reads it. */
static void stage_input(const int8_t *x, int32_t n, int32_t offset, int16_t *staged)
{
    int32_t c = 0;
#if TH_NN_HAS_DSP
    for (; c + 4 <= n; c += 4) {
        staged[c] = (int16_t)(x[c] + offset);
        staged[c + 1] = (int16_t)(x[c + 2] + offset);
        staged[c + 2] = (int16_t)(x[c + 1] + offset);
        staged[c + 3] = (int16_t)(x[c + 3] + offset);
    }
#endif
    for (; c < n; c++) {
        staged[c] = (int16_t)(x[c] + offset);
    }
}

static int32_t feature_dot(const int8_t *w, const int16_t *staged, int32_t n)
{
    int32_t acc = 0;
    int32_t c = 0;
#if TH_NN_HAS_DSP
    for (; c + 4 <= n; c += 4) {
        const int32_t w4 = th_read_s32(w + c);
        acc = th_smlad(th_sxtb16(w4), th_read_s32(staged + c), acc);
        acc = th_smlad(th_sxtb16_ror8(w4), th_read_s32(staged + c + 2), acc);
    }
#endif
    for (; c < n; c++) {
        acc = th_add_wrap(acc, (int32_t)w[c] * staged[c]);
    }
    return acc;
}

static int32_t time_dot(const int16_t *w, const int16_t *s, int32_t n)
{
    int32_t acc = 0;
    int32_t m = 0;
#if TH_NN_HAS_DSP
    for (; m + 2 <= n; m += 2) {
        acc = th_smlad(th_read_s32(w + m), th_read_s32(s + m), acc);
    }
#endif
    for (; m < n; m++) {
        acc = th_add_wrap(acc, (int32_t)w[m] * s[m]);
    }
    return acc;
}

th_status th_svdf_s8(const th_context *ctx, const th_svdf_params *params,
                     const th_svdf_quant *quant, const th_dims *input_dims, const int8_t *input,
                     const th_dims *weights_feature_dims, const int8_t *weights_feature,
                     const th_dims *weights_time_dims, const int16_t *weights_time,
                     const int32_t *bias, int16_t *state, const th_dims *output_dims,
                     int8_t *output)
{
    if (params == NULL || quant == NULL || input_dims == NULL || input == NULL ||
        weights_feature_dims == NULL || weights_feature == NULL || weights_time_dims == NULL ||
        weights_time == NULL || state == NULL || output_dims == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    const int32_t batches = input_dims->n;
    const int32_t n_input = input_dims->c;
    const int32_t filters = weights_feature_dims->n;
    const int32_t memory = weights_time_dims->c;
    const int32_t rank = params->rank;
    if (batches <= 0 || n_input <= 0 || filters <= 0 || memory <= 0 || rank <= 0 ||
        filters % rank != 0 || weights_feature_dims->c != n_input ||
        weights_time_dims->n != filters || output_dims->n != batches ||
        output_dims->c != filters / rank || params->input_offset < -127 ||
        params->input_offset > 128 || params->output_offset < -128 ||
        params->output_offset > 127 || quant->feature_shift < -31 ||
        quant->feature_shift > 30 || quant->time_shift < -31 || quant->time_shift > 30) {
        return TH_ERR_ARG;
    }
    const int32_t need = th_svdf_s8_scratch_size(params, input_dims, weights_feature_dims,
                                                 weights_time_dims);
    if (ctx == NULL || ctx->buf == NULL || ctx->size < need ||
        ((uintptr_t)ctx->buf & 3u) != 0) {
        return TH_ERR_SCRATCH;
    }
    int16_t *staged = (int16_t *)ctx->buf;
    const int32_t units = filters / rank;
    const int32_t row = filters * memory; /* state values of one batch */

    memmove(state, state + 1, ((size_t)batches * (size_t)row - 1u) * sizeof(int16_t));
    for (int32_t b = 0; b < batches; b++) {
        int16_t *st = state + (size_t)b * (size_t)row;
        stage_input(input + (size_t)b * (size_t)n_input, n_input, params->input_offset,
                    staged);
        const int8_t *w = weights_feature;
        for (int32_t f = 0; f < filters; f++, w += n_input) {
            const int32_t dot = feature_dot(w, staged, n_input);
            const int32_t v = th_requantize(dot, quant->feature_multiplier,
                                            quant->feature_shift);
            st[(size_t)f * (size_t)memory + (size_t)memory - 1u] =
                (int16_t)th_clamp(v, INT16_MIN, INT16_MAX);
        }
        const int16_t *wt = weights_time;
        const int16_t *s = st;
        for (int32_t u = 0; u < units; u++) {
            int32_t acc = bias != NULL ? bias[u] : 0;
            for (int32_t r = 0; r < rank; r++, wt += memory, s += memory) {
                acc = th_add_wrap(acc, time_dot(wt, s, memory));
            }
            const int32_t v = th_requantize(acc, quant->time_multiplier, quant->time_shift);
            output[(size_t)b * (size_t)units + (size_t)u] =
                th_out_s8(v, params->output_offset, -128, 127);
        }
    }
    return TH_OK;
}
