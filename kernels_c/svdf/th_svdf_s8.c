/* th_svdf_s8: int8 SVDF with int16 weights_time and an int16 state, as TFLite Micro's
 * integer SVDF (EvalIntegerSvdfReference), per batch b:
 *   1. newest(b, f) = clamp16(MultiplyByQuantizedMultiplier(
 *          sum_c weights_feature[f][c] * (input[b][c] + input_offset), feature quant));
 *   2. every state row (b, f) = memory int16 values, oldest first, moves one step left and
 *      takes newest(b, f) last (TFLM shifts the whole buffer by one value, then overwrites
 *      each row's last value: the same);
 *   3. out(b, u) = clamp8(MultiplyByQuantizedMultiplier(bias[u] + sum over the rank
 *          filters f of unit u of sum_m weights_time[f][m] * state(b, f)[m], time quant)
 *          + output_offset).
 * No fused activation: TFLM's integer SVDF ignores it. int32 sums wrap like TFLM's.
 * Scratch (th_svdf_s8_scratch_size): the batch's input plus input_offset as int16 (on DSP
 * builds each group of four stored as x0 x2 x1 x3, the order SXTB16 unpacks the weights in,
 * so one SMLAD takes two products), then the batch's newest values, int16 [filters]: the
 * feature sums go two filters at a time (each staged input word loaded once for both);
 * then each state row is shifted and summed against weights_time in one pass (on DSP
 * builds two values per word and SMLAD). */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

int32_t th_svdf_s8_scratch_size(const th_svdf_params *params, const th_dims *input_dims,
                                const th_dims *weights_feature_dims,
                                const th_dims *weights_time_dims)
{
    (void)params;
    (void)weights_time_dims;
    if (input_dims == NULL || weights_feature_dims == NULL || input_dims->c <= 0 ||
        weights_feature_dims->n <= 0) {
        return 0;
    }
    return (int32_t)((((uint32_t)input_dims->c * 2u + 3u) & ~3u) +
                     (((uint32_t)weights_feature_dims->n * 2u + 3u) & ~3u));
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

/* The feature sums of two filters (w0, w1: their weights rows) over the staged input. */
static void feature_dot2(const int8_t *w0, const int8_t *w1, const int16_t *staged, int32_t n,
                         int32_t *dot0, int32_t *dot1)
{
    int32_t a0 = 0, a1 = 0;
    int32_t c = 0;
#if TH_NN_HAS_DSP
    for (; c + 4 <= n; c += 4) {
        const int32_t x02 = th_read_s32(staged + c);
        const int32_t x13 = th_read_s32(staged + c + 2);
        const int32_t p = th_read_s32(w0 + c);
        const int32_t q = th_read_s32(w1 + c);
        a0 = th_smlad(th_sxtb16(p), x02, a0);
        a1 = th_smlad(th_sxtb16(q), x02, a1);
        a0 = th_smlad(th_sxtb16_ror8(p), x13, a0);
        a1 = th_smlad(th_sxtb16_ror8(q), x13, a1);
    }
#endif
    for (; c < n; c++) {
        a0 = th_add_wrap(a0, (int32_t)w0[c] * staged[c]);
        a1 = th_add_wrap(a1, (int32_t)w1[c] * staged[c]);
    }
    *dot0 = a0;
    *dot1 = a1;
}

/* th_requantize for a multiplier >= 0 (checked at entry), in fewer instructions: SRDHM as
 * floor((a * M + 2^30) / 2^31), which equals gemmlowp's nudge-and-truncate (th_nn_support.h
 * th_requantize_s8 explains why), then RDBPOT. */
static int32_t requantize(int32_t acc, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    const int32_t a = (int32_t)((uint32_t)acc << left);
    return th_rdbpot((int32_t)(((int64_t)a * multiplier + (INT64_C(1) << 30)) >> 31), right);
}

static int16_t to_state(int32_t dot, const th_svdf_quant *quant)
{
    const int32_t v = requantize(dot, quant->feature_multiplier, quant->feature_shift);
    return (int16_t)th_clamp(v, INT16_MIN, INT16_MAX);
}

/* One state row: every value moves one step left (the oldest drops out), `newest` enters
 * last; returns the time sum of weights_time's row with the new values. One pass, in place,
 * ascending: value m + 1 is read before value m is written. On DSP builds an even-length
 * row goes a word (two values) at a time: the new word k is the high
 * half of old word k and the low half of old word k + 1, then one SMLAD. */
static int32_t shift_and_time_dot(int16_t *row, const int16_t *w, int32_t n, int16_t newest)
{
    int32_t acc = 0;
#if TH_NN_HAS_DSP
    if ((n & 1) == 0) {
        const int32_t words = n / 2;
        uint32_t cur = (uint32_t)th_read_s32(row);
        for (int32_t k = 0; k + 1 < words; k++) {
            const uint32_t next = (uint32_t)th_read_s32(row + 2 * k + 2);
            const uint32_t v = (cur >> 16) | (next << 16);
            th_write_s32(row + 2 * k, (int32_t)v);
            acc = th_smlad(th_read_s32(w + 2 * k), (int32_t)v, acc);
            cur = next;
        }
        const uint32_t last = (cur >> 16) | ((uint32_t)(uint16_t)newest << 16);
        th_write_s32(row + n - 2, (int32_t)last);
        return th_smlad(th_read_s32(w + n - 2), (int32_t)last, acc);
    }
#endif
    for (int32_t m = 0; m + 1 < n; m++) {
        const int16_t v = row[m + 1];
        row[m] = v;
        acc = th_add_wrap(acc, (int32_t)w[m] * v);
    }
    row[n - 1] = newest;
    return th_add_wrap(acc, (int32_t)w[n - 1] * newest);
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
        params->output_offset > 127 || quant->feature_multiplier < 0 ||
        quant->time_multiplier < 0 || quant->feature_shift < -31 ||
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
    int16_t *newest = staged + (((uint32_t)n_input + 1u) & ~1u);
    const int32_t units = filters / rank;
    const int32_t row_values = filters * memory; /* state values of one batch */

    for (int32_t b = 0; b < batches; b++) {
        int16_t *row = state + (size_t)b * (size_t)row_values;
        stage_input(input + (size_t)b * (size_t)n_input, n_input, params->input_offset,
                    staged);
        for (int32_t f = 0; f < filters; f += 2) {
            int32_t dot0, dot1;
            const int8_t *wf = weights_feature + (size_t)f * (size_t)n_input;
            /* an odd last filter pairs with itself */
            feature_dot2(wf, f + 1 < filters ? wf + n_input : wf, staged, n_input, &dot0,
                         &dot1);
            newest[f] = to_state(dot0, quant);
            if (f + 1 < filters) {
                newest[f + 1] = to_state(dot1, quant);
            }
        }
        const int16_t *wt = weights_time;
        const int16_t *nw = newest;
        for (int32_t u = 0; u < units; u++) {
            int32_t acc = bias != NULL ? bias[u] : 0;
            for (int32_t r = 0; r < rank; r++, wt += memory, row += memory) {
                acc = th_add_wrap(acc, shift_and_time_dot(row, wt, memory, *nw++));
            }
            const int32_t v = requantize(acc, quant->time_multiplier, quant->time_shift);
            output[(size_t)b * (size_t)units + (size_t)u] =
                th_out_s8(v, params->output_offset, -128, 127);
        }
    }
    return TH_OK;
}
