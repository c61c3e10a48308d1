/* th_avgpool_s8: int8 AVERAGE_POOL_2D as TFLite Micro's reference (no requantization). Sums
 * are exact integers, so the separable path's order gives the same result. */
#include "th_nn.h"
#include "th_nn_pool.h"
#include "th_nn_support.h"

/* Channels summed at a time: int32 accumulators on the stack, no scratch. */
#define TH_AVGPOOL_CHUNK 32

/* TFLM's rounding: (sum +- count/2) / count with C's truncating division. */
TH_INLINE int32_t avg_round(int32_t sum, int32_t count)
{
    const int32_t half = count / 2;
    return sum > 0 ? (sum + half) / count : (sum - half) / count;
}

/* Separable path (th_avgpool_s8_scratch_size > 0 and that much scratch given): per image, an
 * int16 column sum per (x, c) over the rows of the current output row's window, slid down
 * one output row at a time (rows leaving subtracted, rows entering added), and an int32
 * running sum per channel slid along the row over the column sums. Every input element is
 * added and subtracted once whatever the window. In-place order (th_nn.h (c)): pixel q's
 * output is written once its sum is known; the column sums of columns < xs(q+1) are then
 * moved to the next output row, reading the leaving rows there only at columns >= xs(q)
 * and the entering rows (read by later pixels only), all still unwritten. */
static int avg_separable(const th_pool_params *p, const th_dims *in, const th_dims *out)
{
    return (int64_t)out->h * out->w > 1 && p->filter.h <= 256 &&
           (int64_t)p->filter.h * p->filter.w >= 4 * (int64_t)p->stride.h * p->stride.w &&
           (int64_t)in->w * in->c <= (INT64_C(1) << 26);
}

int32_t th_avgpool_s8_scratch_size(const th_pool_params *params, const th_dims *input_dims,
                                   const th_dims *output_dims)
{
    if (params == NULL || input_dims == NULL || output_dims == NULL ||
        input_dims->w < 1 || input_dims->c < 1 || params->filter.h < 1 ||
        params->filter.w < 1 || params->stride.h < 1 || params->stride.w < 1 ||
        !avg_separable(params, input_dims, output_dims)) {
        return 0;
    }
    return ((2 * input_dims->w * input_dims->c + 3) & ~3) + 4 * input_dims->c;
}

/* cs[k] += sign * row[k] over the n values of one input row segment. */
static void col_add(int16_t *cs, const int8_t *row, int32_t n)
{
    for (int32_t k = 0; k < n; k++) {
        cs[k] = (int16_t)(cs[k] + row[k]);
    }
}

static void col_sub(int16_t *cs, const int8_t *row, int32_t n)
{
    for (int32_t k = 0; k < n; k++) {
        cs[k] = (int16_t)(cs[k] - row[k]);
    }
}

static void avg_separable_image(const th_pool_params *p, const th_dims *in,
                                const int8_t *image, const th_dims *out, int8_t *dst,
                                int16_t *cs, int32_t *acc)
{
    const int32_t in_h = in->h, in_w = in->w, ch = in->c;
    const int32_t act_min = p->activation.min, act_max = p->activation.max;
    th_nn_window wy = th_nn_window_at(0, p->stride.h, p->padding.h, p->filter.h, in_h);
    for (int32_t k = 0; k < in_w * ch; k++) {
        cs[k] = 0;
    }
    for (int32_t y = wy.origin + wy.start; y < wy.origin + wy.end; y++) {
        col_add(cs, image + y * in_w * ch, in_w * ch);
    }
    for (int32_t oy = 0; oy < out->h; oy++) {
        const int32_t ys = wy.origin + wy.start, ye = wy.origin + wy.end;
        const int last_row = oy + 1 == out->h;
        th_nn_window wn = wy;
        if (!last_row) {
            wn = th_nn_window_at(oy + 1, p->stride.h, p->padding.h, p->filter.h, in_h);
        }
        const int32_t ns = wn.origin + wn.start, ne = wn.origin + wn.end;
        const int32_t leave_end = ye < ns ? ye : ns;   /* rows [ys, leave_end) leave */
        const int32_t enter_start = ye > ns ? ye : ns; /* rows [enter_start, ne) enter */
        for (int32_t c = 0; c < ch; c++) {
            acc[c] = 0;
        }
        int32_t have_end = 0; /* columns [xs, have_end) are in acc */
        int32_t upd = 0;      /* columns [0, upd) hold the next row's sums */
        th_nn_window wx = th_nn_window_at(0, p->stride.w, p->padding.w, p->filter.w, in_w);
        for (int32_t ox = 0; ox < out->w; ox++) {
            const int32_t xs = wx.origin + wx.start, xe = wx.origin + wx.end;
            const int32_t add_from = have_end > xs ? have_end : xs;
            const int32_t count = (ye - ys) * (xe - xs);
            int32_t next_xs = in_w;
            if (ox + 1 < out->w) {
                wx = th_nn_window_at(ox + 1, p->stride.w, p->padding.w, p->filter.w, in_w);
                next_xs = wx.origin + wx.start;
            }
            const int32_t leave_to = xe < next_xs ? xe : next_xs; /* [xs, leave_to) leave */
            have_end = xe;
            if (xe - add_from == 1 && leave_to - xs == 1) {
                /* one column enters and one leaves (stride 1): one pass over the channels */
                const int16_t *enter = cs + add_from * ch, *leave = cs + xs * ch;
                for (int32_t c = 0; c < ch; c++) {
                    const int32_t a = acc[c] + enter[c];
                    const int32_t v = avg_round(a, count);
                    dst[c] = (int8_t)(v < act_min ? act_min : (v > act_max ? act_max : v));
                    acc[c] = a - leave[c];
                }
                dst += ch;
            } else {
                for (int32_t x = add_from; x < xe; x++) {
                    const int16_t *col = cs + x * ch;
                    for (int32_t c = 0; c < ch; c++) {
                        acc[c] += col[c];
                    }
                }
                for (int32_t c = 0; c < ch; c++) {
                    int32_t v = avg_round(acc[c], count);
                    v = v < act_min ? act_min : (v > act_max ? act_max : v);
                    dst[c] = (int8_t)v;
                }
                dst += ch;
                for (int32_t x = xs; x < leave_to; x++) {
                    const int16_t *col = cs + x * ch;
                    for (int32_t c = 0; c < ch; c++) {
                        acc[c] -= col[c];
                    }
                }
            }
            if (!last_row && next_xs > upd) {
                const int32_t n = (next_xs - upd) * ch;
                for (int32_t y = ys; y < leave_end; y++) {
                    col_sub(cs + upd * ch, image + (y * in_w + upd) * ch, n);
                }
                for (int32_t y = enter_start; y < ne; y++) {
                    col_add(cs + upd * ch, image + (y * in_w + upd) * ch, n);
                }
                upd = next_xs;
            }
        }
        wy = wn;
    }
}

/* Every window summed directly (no scratch), TH_AVGPOOL_CHUNK channels at a time. Out of
 * line: the separable path's registers stay out of its loops. */
__attribute__((noinline)) static void avg_direct(const th_pool_params *params,
                                                 const th_dims *input_dims, const int8_t *input,
                                                 const th_dims *output_dims, int8_t *output)
{
    const int32_t in_h = input_dims->h;
    const int32_t in_w = input_dims->w;
    const int32_t channels = input_dims->c;
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
                            int32_t k = 0;
                            for (; k + 4 <= cn; k += 4) {
                                acc[k] += px[k];
                                acc[k + 1] += px[k + 1];
                                acc[k + 2] += px[k + 2];
                                acc[k + 3] += px[k + 3];
                            }
                            for (; k < cn; k++) {
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
}

th_status th_avgpool_s8(const th_context *ctx, const th_pool_params *params,
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
    const int32_t need = ctx != NULL && ctx->buf != NULL
                             ? th_avgpool_s8_scratch_size(params, input_dims, output_dims)
                             : 0;
    if (need > 0 && ctx->size >= need) {
        int16_t *cs = (int16_t *)ctx->buf;
        int32_t *acc = (int32_t *)((int8_t *)ctx->buf + need - 4 * channels);
        const int32_t image_in = in_h * in_w * channels;
        const int32_t image_out = output_dims->h * output_dims->w * channels;
        for (int32_t n = 0; n < input_dims->n; n++) {
            avg_separable_image(params, input_dims, input + n * image_in, output_dims,
                                output + n * image_out, cs, acc);
        }
        return TH_OK;
    }
    avg_direct(params, input_dims, input, output_dims, output);
    return TH_OK;
}
