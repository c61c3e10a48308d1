/* th_maxpool_s8: int8 MAX_POOL_2D as TFLite Micro's reference. The output pixel is the
 * running maximum (no scratch); on DSP builds four channels at a time with SSUB8 + SEL,
 * which is exact (SSUB8 sets each GE bit from the full 9-bit signed difference); on MVE
 * builds sixteen channels at a time held in a register over the window (max_window_mve,
 * VMAX.S8, tails predicated with VCTP). */
#include <string.h>

#include "th_nn.h"
#include "th_nn_pool.h"
#include "th_nn_support.h"

#if TH_NN_DSP_NATIVE
/* Bytewise signed max of two words. One asm block: SEL must see SSUB8's GE flags. */
TH_INLINE uint32_t max_s8x4(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("ssub8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b) : "cc");
    return r;
}
#elif TH_NN_HAS_DSP
/* C model of SSUB8 + SEL for host tests of the DSP path. */
TH_INLINE uint32_t max_s8x4(uint32_t a, uint32_t b)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i += 8) {
        const int32_t x = (int8_t)(uint8_t)(a >> i);
        const int32_t y = (int8_t)(uint8_t)(b >> i);
        r |= (uint32_t)(uint8_t)(x - y >= 0 ? x : y) << i;
    }
    return r;
}
#endif

/* dst[k] = max(dst[k], src[k]) for k < n. */
static void max_into(int8_t *dst, const int8_t *src, int32_t n)
{
    int32_t k = 0;
#if TH_NN_MVE
    for (; k < n; k += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(n - k));
        vstrbq_p_s8(dst + k, vmaxq_s8(vldrbq_z_s8(dst + k, p), vldrbq_z_s8(src + k, p)), p);
    }
#elif TH_NN_HAS_DSP
    for (; k + 4 <= n; k += 4) {
        uint32_t a;
        uint32_t b;
        memcpy(&a, dst + k, 4);
        memcpy(&b, src + k, 4);
        a = max_s8x4(a, b);
        memcpy(dst + k, &a, 4);
    }
#endif
    for (; k < n; k++) {
        dst[k] = src[k] > dst[k] ? src[k] : dst[k];
    }
}

/* Separable path (th_maxpool_s8_scratch_size > 0 and that much scratch given): per output
 * row, the column maxima over the row's window rows (int8, one input row in scratch, read
 * before any output of the row is written: the in-place order of th_nn.h (c) holds), then
 * each output the maximum of its window's columns. */
static int max_separable(const th_pool_params *p, const th_dims *in, const th_dims *out)
{
    return (int64_t)out->h * out->w > 1 &&
           (int64_t)p->filter.h * p->filter.w >
               (int64_t)p->filter.h * p->stride.w + p->filter.w &&
           (int64_t)in->w * in->c <= (INT64_C(1) << 28);
}

int32_t th_maxpool_s8_scratch_size(const th_pool_params *params, const th_dims *input_dims,
                                   const th_dims *output_dims)
{
    if (params == NULL || input_dims == NULL || output_dims == NULL ||
        input_dims->w < 1 || input_dims->c < 1 || params->filter.h < 1 ||
        params->filter.w < 1 || params->stride.h < 1 || params->stride.w < 1 ||
        !max_separable(params, input_dims, output_dims)) {
        return 0;
    }
    return (input_dims->w * input_dims->c + 3) & ~3;
}

static void clamp_pixel(int8_t *out, int32_t channels, int32_t act_min, int32_t act_max)
{
    for (int32_t k = 0; k < channels; k++) {
        const int32_t v = out[k];
        out[k] = (int8_t)(v < act_min ? act_min : (v > act_max ? act_max : v));
    }
}

#if TH_NN_MVE
/* One output pixel on MVE: the maximum over rows x cols pixels from base (steps in bytes),
 * clamped, 16 channels at a time held in a register, then dst. */
static void max_window_mve(int8_t *dst, const int8_t *base, int32_t rows, int32_t row_step,
                           int32_t cols, int32_t ch, int32_t act_min, int32_t act_max)
{
    const int8x16_t lo = vdupq_n_s8((int8_t)act_min), hi = vdupq_n_s8((int8_t)act_max);
    for (int32_t c0 = 0; c0 < ch; c0 += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(ch - c0));
        int8x16_t v = lo; /* the clamp's lower bound is the maximum's start */
        for (int32_t y = 0; y < rows; y++) {
            const int8_t *px = base + y * row_step + c0;
            for (int32_t x = 0; x < cols; x++, px += ch) {
                v = vmaxq_s8(v, vldrbq_z_s8(px, p));
            }
        }
        vstrbq_p_s8(dst + c0, vminq_s8(v, hi), p);
    }
}
#endif

static void max_separable_image(const th_pool_params *p, const th_dims *in,
                                const int8_t *image, const th_dims *out, int8_t *dst,
                                int8_t *cm)
{
    const int32_t in_w = in->w, ch = in->c;
    const int32_t act_min = p->activation.min, act_max = p->activation.max;
    const int clamp = act_min > -128 || act_max < 127;
    const th_nn_window last =
        th_nn_window_at(out->w - 1, p->stride.w, p->padding.w, p->filter.w, in_w);
    const int32_t span = (last.origin + last.end) * ch; /* columns any window reads */
    for (int32_t oy = 0; oy < out->h; oy++) {
        const th_nn_window wy =
            th_nn_window_at(oy, p->stride.h, p->padding.h, p->filter.h, in->h);
        const int32_t ys = wy.origin + wy.start, ye = wy.origin + wy.end;
        if (ye > ys && span > 0) {
            memcpy(cm, image + ys * in_w * ch, (size_t)span);
            for (int32_t y = ys + 1; y < ye; y++) {
                max_into(cm, image + y * in_w * ch, span);
            }
        }
        for (int32_t ox = 0; ox < out->w; ox++) {
            const th_nn_window wx =
                th_nn_window_at(ox, p->stride.w, p->padding.w, p->filter.w, in_w);
            const int32_t xs = wx.origin + wx.start, xe = wx.origin + wx.end;
#if TH_NN_MVE
            max_window_mve(dst, cm + xs * ch, ye > ys ? 1 : 0, 0, xe - xs, ch, act_min, act_max);
            dst += ch;
            continue;
#endif
            if (ye <= ys || xe <= xs) {
                memset(dst, -128, (size_t)ch); /* TFLM's initial value */
            } else {
                memcpy(dst, cm + xs * ch, (size_t)ch);
                for (int32_t x = xs + 1; x < xe; x++) {
                    max_into(dst, cm + x * ch, ch);
                }
            }
            if (clamp) {
                clamp_pixel(dst, ch, act_min, act_max);
            }
            dst += ch;
        }
    }
}

th_status th_maxpool_s8(const th_context *ctx, const th_pool_params *params,
                        const th_dims *input_dims, const int8_t *input,
                        const th_dims *output_dims, int8_t *output)
{
    const th_status status = th_nn_check_pool(params, input_dims, input, output_dims, output);
    if (status != TH_OK) {
        return status;
    }
    const int32_t in_h = input_dims->h;
    const int32_t in_w = input_dims->w;
    const int32_t channels = input_dims->c;
    const int32_t act_min = params->activation.min;
    const int32_t act_max = params->activation.max;
    const int clamp = act_min > -128 || act_max < 127;
    const int32_t need = ctx != NULL && ctx->buf != NULL
                             ? th_maxpool_s8_scratch_size(params, input_dims, output_dims)
                             : 0;
    if (need > 0 && ctx->size >= need) {
        const int32_t image_in = in_h * in_w * channels;
        const int32_t image_out = output_dims->h * output_dims->w * channels;
        for (int32_t n = 0; n < input_dims->n; n++) {
            max_separable_image(params, input_dims, input + n * image_in, output_dims,
                                output + n * image_out, (int8_t *)ctx->buf);
        }
        return TH_OK;
    }
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
#if TH_NN_MVE
                max_window_mve(out, image + ((wy.origin + wy.start) * in_w + wx.origin +
                                             wx.start) * channels,
                               wy.end - wy.start, in_w * channels, wx.end - wx.start,
                               channels, act_min, act_max);
                out += channels;
                continue;
#endif
                if (wy.end <= wy.start || wx.end <= wx.start) {
                    memset(out, -128, (size_t)channels); /* TFLM's initial value */
                } else {
                    int first = 1;
                    for (int32_t fy = wy.start; fy < wy.end; fy++) {
                        const int32_t row = (wy.origin + fy) * in_w + wx.origin;
                        for (int32_t fx = wx.start; fx < wx.end; fx++) {
                            const int8_t *px = image + (row + fx) * channels;
                            if (first) {
                                memcpy(out, px, (size_t)channels);
                                first = 0;
                            } else {
                                max_into(out, px, channels);
                            }
                        }
                    }
                }
                if (clamp) {
                    clamp_pixel(out, channels, act_min, act_max);
                }
                out += channels;
            }
        }
    }
    return TH_OK;
}
