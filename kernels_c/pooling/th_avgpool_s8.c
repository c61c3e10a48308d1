/* th_avgpool_s8: int8 AVERAGE_POOL_2D as TFLite Micro's reference (no requantization). */
#include "th_nn.h"
#include "th_nn_pool.h"

/* Channels summed at a time: int32 accumulators on the stack, no scratch. */
#define TH_AVGPOOL_CHUNK 32

/* TFLM's rounding: (sum +- count/2) / count with C's truncating division. */
static inline int32_t avg_round(int32_t sum, int32_t count)
{
    const int32_t half = count / 2;
    return sum > 0 ? (sum + half) / count : (sum - half) / count;
}

th_status th_avgpool_s8(const th_context *ctx, const th_pool_params *params,
                        const th_dims *input_dims, const int8_t *input,
                        const th_dims *output_dims, int8_t *output)
{
    (void)ctx;
    const th_status status = th_nn_check_pool(params, input_dims, input, output_dims, output);
    if (status != TH_OK) {
        return status;
    }
    const int32_t in_h = input_dims->h;
    const int32_t in_w = input_dims->w;
    const int32_t channels = input_dims->c;
    /* Refuse before writing anything: every window needs at least one input tap. */
    for (int32_t oy = 0; oy < output_dims->h; oy++) {
        const th_nn_window wy =
            th_nn_window_at(oy, params->stride.h, params->padding.h, params->filter.h, in_h);
        if (wy.end <= wy.start) {
            return TH_ERR_ARG;
        }
    }
    for (int32_t ox = 0; ox < output_dims->w; ox++) {
        const th_nn_window wx =
            th_nn_window_at(ox, params->stride.w, params->padding.w, params->filter.w, in_w);
        if (wx.end <= wx.start) {
            return TH_ERR_ARG;
        }
    }
    const int32_t act_min = params->activation.min;
    const int32_t act_max = params->activation.max;
    int8_t *out = output;
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *image = input + (int32_t)n * in_h * in_w * channels;
        for (int32_t oy = 0; oy < output_dims->h; oy++) {
            const th_nn_window wy = th_nn_window_at(oy, params->stride.h, params->padding.h,
                                                    params->filter.h, in_h);
            for (int32_t ox = 0; ox < output_dims->w; ox++) {
                const th_nn_window wx = th_nn_window_at(ox, params->stride.w,
                                                        params->padding.w, params->filter.w,
                                                        in_w);
                const int32_t count = (wy.end - wy.start) * (wx.end - wx.start);
                for (int32_t c0 = 0; c0 < channels; c0 += TH_AVGPOOL_CHUNK) {
                    const int32_t cn =
                        channels - c0 < TH_AVGPOOL_CHUNK ? channels - c0 : TH_AVGPOOL_CHUNK;
                    int32_t acc[TH_AVGPOOL_CHUNK];
                    for (int32_t k = 0; k < cn; k++) {
                        acc[k] = 0;
                    }
                    for (int32_t fy = wy.start; fy < wy.end; fy++) {
                        /* integer index first: no pointer ever leaves the array */
                        const int32_t row = (wy.origin + fy) * in_w + wx.origin;
                        for (int32_t fx = wx.start; fx < wx.end; fx++) {
                            const int8_t *px = image + (row + fx) * channels + c0;
                            for (int32_t k = 0; k < cn; k++) {
                                acc[k] += px[k];
                            }
                        }
                    }
                    for (int32_t k = 0; k < cn; k++) {
                        int32_t v = avg_round(acc[k], count);
                        v = v < act_min ? act_min : (v > act_max ? act_max : v);
                        out[c0 + k] = (int8_t)v;
                    }
                }
                out += channels;
            }
        }
    }
    return TH_OK;
}
