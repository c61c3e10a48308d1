/* th_conv_s4: CONV_2D (no groups) with packed int4 filters (th_nn_s4.h): the int16 im2col
 * columns of two output pixels at a time, then two output channels per pass over both
 * (th_nn_s4_channels2: each weight word unpacked once for four dot products), with the fast
 * requantization where it is exact for every channel (th_nn_s4_rq_table). */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_s4.h"

int32_t th_conv_s4_scratch_size(const th_conv_params *params, const th_dims *input_dims,
                                const th_dims *filter_dims, const th_dims *output_dims)
{
    (void)params;
    (void)input_dims;
    if (filter_dims == NULL || output_dims == NULL) {
        return 0;
    }
    return 4 * th_s4_round_up8(filter_dims->h * filter_dims->w * filter_dims->c) +
           th_nn_s4_rq_bytes(output_dims->c);
}

#if TH_NN_HAS_DSP
/* DSP: the columns of two pixels interleaved by value pairs (th_nn_s4_channels2): value k of
 * pixel p at int16 index 4 * (k / 2) + 2 * p + k % 2. */
TH_INLINE int32_t col_index(int32_t k, int32_t p)
{
    return ((k >> 1) << 2) + (p << 1) + (k & 1);
}
#else
/* Portable: one natural column per pixel, pixel 1's after pixel 0's. */
TH_INLINE int32_t col_index(int32_t k, int32_t p)
{
    (void)p;
    return k;
}
#endif

/* Pixel p's values k0 .. k0 + n (n a multiple of 4, k0 even; DSP) from px: four at a time,
 * widened with the offset by SXTAB16 and stored as two pairs. */
#if TH_NN_HAS_DSP
static void stage_run4(int16_t *col, int32_t p, int32_t k0, const int8_t *px, int32_t n,
                       int32_t offset)
{
    const int32_t off2 = (int32_t)(((uint32_t)offset << 16) | ((uint32_t)offset & 0xFFFFu));
    int32_t *w = (int32_t *)(void *)col + k0 + p; /* pair k0 / 2 of pixel p */
    for (int32_t i = 0; i < n; i += 4, w += 4) {
        const int32_t v = th_read_s32(px + i);
        const int32_t even = th_sxtab16(off2, v); /* (x0, x2) + offset */
        const int32_t odd = th_sxtab16_ror8(off2, v); /* (x1, x3) + offset */
        w[0] = th_pkhbt(even, odd);
        w[2] = th_pkhtb(even, odd);
    }
}
#endif

/* Pixel p's int16 column (x + input_offset, 0 for padding and the tail up to kp) of output
 * pixel (oy, ox) of one batch, at col_index. */
static void stage_pixel(int16_t *col, int32_t p, const int8_t *in_b,
                        const th_conv_params *params, const th_dims *input_dims,
                        const th_dims *filter_dims, int32_t oy, int32_t ox, int32_t kp)
{
    const int32_t in_h = input_dims->h, in_w = input_dims->w, cin = input_dims->c;
    const int32_t y0 = oy * params->stride.h - params->padding.h;
    const int32_t x0 = ox * params->stride.w - params->padding.w;
    const int32_t offset = params->input_offset;
    int32_t k = 0;
    for (int32_t ky = 0; ky < filter_dims->h; ky++) {
        const int32_t iy = y0 + ky * params->dilation.h;
        for (int32_t kx = 0; kx < filter_dims->w; kx++) {
            const int32_t ix = x0 + kx * params->dilation.w;
            if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) {
                for (int32_t ic = 0; ic < cin; ic++, k++) {
                    col[col_index(k, p)] = 0;
                }
                continue;
            }
            const int8_t *px = in_b + ((int64_t)iy * in_w + ix) * cin;
#if TH_NN_HAS_DSP
            if ((cin & 3) == 0) { /* k is even: every tap starts a pair */
                stage_run4(col, p, k, px, cin, offset);
                k += cin;
                continue;
            }
#endif
            for (int32_t ic = 0; ic < cin; ic++, k++) {
                col[col_index(k, p)] = (int16_t)(px[ic] + offset);
            }
        }
    }
    for (; k < kp; k++) {
        col[col_index(k, p)] = 0;
    }
}

th_status th_conv_s4(const th_context *ctx, const th_conv_params *params,
                     const th_per_channel_quant *quant, const th_dims *input_dims,
                     const int8_t *input, const th_dims *filter_dims, const uint8_t *filter,
                     const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    th_status status = th_nn_check_conv(params, quant, input_dims, input, filter_dims,
                                        (const int8_t *)filter, output_dims, output, 0);
    if (status != TH_OK) {
        return status;
    }
    const int32_t cin = input_dims->c, cout = output_dims->c;
    const int64_t k_total = (int64_t)filter_dims->h * filter_dims->w * cin;
    if (k_total > TH_S4_MAX_K) {
        return TH_ERR_UNSUPPORTED;
    }
    const int32_t kp = th_s4_round_up8((int32_t)k_total);
    status = th_nn_check_scratch(ctx, 4 * kp + th_nn_s4_rq_bytes(cout));
    if (status != TH_OK) {
        return status;
    }
    int16_t *cols = (int16_t *)ctx->buf; /* two columns (col_index) */
#if TH_NN_HAS_DSP
    int16_t *col1 = cols; /* interleaved */
#else
    int16_t *col1 = cols + kp;
#endif
    th_nn_s4_rq *tab = (th_nn_s4_rq *)(void *)(cols + 2 * kp);
    if (!th_nn_s4_rq_table(tab, quant, bias, cout, params->output_offset, (int32_t)k_total)) {
        tab = NULL;
    }
    const int32_t out_h = output_dims->h, out_w = output_dims->w;
    const int64_t plane = (int64_t)out_h * out_w, in_plane = (int64_t)input_dims->h *
                                                                input_dims->w * cin;
    for (int32_t b = 0; b < output_dims->n; b++) {
        const int8_t *in_b = input + b * in_plane;
        int8_t *y = output + b * plane * cout;
        for (int64_t p = 0; p < plane; p += 2, y += 2 * cout) {
            const int32_t oy = (int32_t)(p / out_w), ox = (int32_t)(p % out_w);
            stage_pixel(cols, 0, in_b, params, input_dims, filter_dims, oy, ox, kp);
            if (p + 1 < plane) {
                const int32_t oy1 = ox + 1 < out_w ? oy : oy + 1;
                const int32_t ox1 = ox + 1 < out_w ? ox + 1 : 0;
                stage_pixel(col1, 1, in_b, params, input_dims, filter_dims, oy1, ox1, kp);
                th_nn_s4_channels2(cols, col1, filter, kp, cout, bias, quant, tab,
                                   params->output_offset, &params->activation, y, y + cout);
            } else { /* the last pixel alone: its column as pixel 1's too, y written twice */
                stage_pixel(col1, 1, in_b, params, input_dims, filter_dims, oy, ox, kp);
                th_nn_s4_channels2(cols, col1, filter, kp, cout, bias, quant, tab,
                                   params->output_offset, &params->activation, y, y);
            }
        }
    }
    return TH_OK;
}
