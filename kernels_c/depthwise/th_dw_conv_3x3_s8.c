/* th_dw_conv_3x3_s8: DEPTHWISE_CONV_2D, 3x3 filter, ch_mult 1, dilation 1, stride 1 or 2.
 *
 * DSP path, one channel at a time (so it runs in place, th_nn.h rule (a)): the channel's
 * input plane is copied into scratch as int16 (x + input_offset) with its padding as
 * zeros, so the inner loop has no bounds checks. A filter row then is two SMLAD operands
 * (w0, w1) and w2: with stride 1, four outputs of a row take 3 aligned and 2 unaligned
 * word loads and 8 MAC instructions (12 MACs).
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_DSP
/* Plane geometry: rows/columns the 3x3 windows of all outputs touch, plus one spare
 * column (the 4-wide block reads one element past the last window), width even. */
static int32_t plane_w(int32_t stride, int32_t out_w)
{
    return ((out_w - 1) * stride + 4 + 1) & ~1;
}

static int32_t plane_h(int32_t stride, int32_t out_h)
{
    return (out_h - 1) * stride + 3;
}
#endif

int32_t th_dw_conv_3x3_s8_scratch_size(const th_dw_conv_params *params,
                                       const th_dims *input_dims, const th_dims *filter_dims,
                                       const th_dims *output_dims)
{
#if TH_NN_DSP
    (void)input_dims;
    (void)filter_dims;
    if (params == NULL || output_dims == NULL || output_dims->h <= 0 || output_dims->w <= 0) {
        return 0;
    }
    return 2 * plane_h(params->stride.h, output_dims->h) *
           plane_w(params->stride.w, output_dims->w);
#else
    return th_dw_conv_general_s8_scratch_size(params, input_dims, filter_dims, output_dims);
#endif
}

#if TH_NN_DSP

/* Copies channel c of the input into the zero-padded int16 plane. */
static void fill_plane(int16_t *plane, int32_t ph, int32_t pw, const int8_t *in,
                       const th_dims *input_dims, int32_t c, int32_t pad_t, int32_t pad_l,
                       int32_t offset)
{
    const int32_t in_c = input_dims->c;
    for (int32_t r = 0; r < ph; r++) {
        int16_t *row = plane + r * pw;
        const int32_t y = r - pad_t;
        if (y < 0 || y >= input_dims->h) {
            for (int32_t q = 0; q < pw; q++) {
                row[q] = 0;
            }
            continue;
        }
        const int32_t x_begin = TH_MIN(pad_l, pw);
        const int32_t x_end = TH_MIN(pad_l + input_dims->w, pw);
        int32_t q = 0;
        for (; q < x_begin; q++) {
            row[q] = 0;
        }
        if (q < x_end) {
            const int8_t *src = in + ((int64_t)y * input_dims->w + (q - pad_l)) * in_c + c;
            for (; q < x_end; q++, src += in_c) {
                row[q] = (int16_t)(*src + offset);
            }
        }
        for (; q < pw; q++) {
            row[q] = 0;
        }
    }
}

/* `fast_only` is a compile-time constant at each call site (see mat_mult). */
TH_INLINE int8_t dw_out(int32_t acc, const th_fast_rq *rq, int32_t c,
                        const th_per_channel_quant *quant, const th_nn_out_stage *stage,
                        int fast_only)
{
    int32_t v;
    if (fast_only) {
        return (int8_t)th_fast_rq_apply(acc, rq);
    }
    if (stage->fast) {
        v = th_fast_rq_apply(acc, rq);
    } else {
        v = th_out_s8(th_requantize(acc, quant->multiplier[c], quant->shift[c]),
                      stage->output_offset, -128, 127);
    }
    return (int8_t)th_clamp(v, stage->act_min, stage->act_max);
}

/* One filter row of four stride-1 outputs: p points at the row's first tap of output 0. */
#define TH_DW_ROW_S1(p, w01, w2)                                                             \
    do {                                                                                     \
        const int32_t v0 = th_read_s32(p);       /* (p0, p1) */                             \
        const int32_t v1 = th_read_s32((p) + 2); /* (p2, p3) */                             \
        const int32_t v2 = th_read_s32((p) + 4); /* (p4, p5) */                             \
        const int32_t u0 = th_read_s32((p) + 1); /* (p1, p2) */                             \
        const int32_t u1 = th_read_s32((p) + 3); /* (p3, p4) */                             \
        a0 = th_smlad(v0, w01, a0);                                                          \
        a0 = th_smlabb(v1, w2, a0);                                                          \
        a1 = th_smlad(u0, w01, a1);                                                          \
        a1 = th_smlatb(v1, w2, a1);                                                          \
        a2 = th_smlad(v1, w01, a2);                                                          \
        a2 = th_smlabb(v2, w2, a2);                                                          \
        a3 = th_smlad(u1, w01, a3);                                                          \
        a3 = th_smlatb(v2, w2, a3);                                                          \
    } while (0)

/* One filter row of two stride-2 outputs. */
#define TH_DW_ROW_S2(p, w01, w2)                                                             \
    do {                                                                                     \
        const int32_t v0 = th_read_s32(p);                                                   \
        const int32_t v1 = th_read_s32((p) + 2);                                             \
        const int32_t v2 = th_read_s32((p) + 4);                                             \
        a0 = th_smlad(v0, w01, a0);                                                          \
        a0 = th_smlabb(v1, w2, a0);                                                          \
        a1 = th_smlad(v1, w01, a1);                                                          \
        a1 = th_smlabb(v2, w2, a1);                                                          \
    } while (0)

TH_INLINE void dw3x3_channel_impl(const int16_t *plane, int32_t pw, int32_t stride,
                                  const int8_t *filter, int32_t c, int32_t channels,
                                  int32_t acc0, const th_per_channel_quant *quant,
                                  const th_nn_out_stage *stage, const th_dims *output_dims,
                                  int8_t *out, const int fast_only)
{
    int32_t wa[3];
    int32_t wb[3];
    for (int32_t r = 0; r < 3; r++) {
        const int32_t a = filter[(3 * r) * channels + c];
        const int32_t b = filter[(3 * r + 1) * channels + c];
        wa[r] = (int32_t)(((uint32_t)b << 16) | ((uint32_t)a & 0xFFFFu));
        wb[r] = filter[(3 * r + 2) * channels + c];
    }
    const int32_t w01_0 = wa[0], w01_1 = wa[1], w01_2 = wa[2];
    const int32_t w2_0 = wb[0], w2_1 = wb[1], w2_2 = wb[2];
    th_fast_rq rq = {0, 0, 0};
    if (fast_only || stage->fast) {
        rq = th_fast_rq_make(quant->multiplier[c], quant->shift[c], stage->output_offset);
    }
    const int32_t out_w = output_dims->w;
    for (int32_t oy = 0; oy < output_dims->h; oy++) {
        const int16_t *r0 = plane + oy * stride * pw;
        const int16_t *r1 = r0 + pw;
        const int16_t *r2 = r1 + pw;
        int8_t *o = out + ((int64_t)oy * out_w) * channels + c;
        int32_t ox = 0;
        if (stride == 1) {
            for (; ox + 3 < out_w; ox += 4, r0 += 4, r1 += 4, r2 += 4) {
                int32_t a0 = acc0;
                int32_t a1 = acc0;
                int32_t a2 = acc0;
                int32_t a3 = acc0;
                TH_DW_ROW_S1(r0, w01_0, w2_0);
                TH_DW_ROW_S1(r1, w01_1, w2_1);
                TH_DW_ROW_S1(r2, w01_2, w2_2);
                o[0] = dw_out(a0, &rq, c, quant, stage, fast_only);
                o += channels;
                o[0] = dw_out(a1, &rq, c, quant, stage, fast_only);
                o += channels;
                o[0] = dw_out(a2, &rq, c, quant, stage, fast_only);
                o += channels;
                o[0] = dw_out(a3, &rq, c, quant, stage, fast_only);
                o += channels;
            }
        } else {
            for (; ox + 1 < out_w; ox += 2, r0 += 4, r1 += 4, r2 += 4) {
                int32_t a0 = acc0;
                int32_t a1 = acc0;
                TH_DW_ROW_S2(r0, w01_0, w2_0);
                TH_DW_ROW_S2(r1, w01_1, w2_1);
                TH_DW_ROW_S2(r2, w01_2, w2_2);
                o[0] = dw_out(a0, &rq, c, quant, stage, fast_only);
                o += channels;
                o[0] = dw_out(a1, &rq, c, quant, stage, fast_only);
                o += channels;
            }
        }
        for (; ox < out_w; ox++, r0 += stride, r1 += stride, r2 += stride) {
            int32_t a = acc0;
            a = th_smlabb(th_read_s32(r0 + 2), w2_0, th_smlad(th_read_s32(r0), w01_0, a));
            a = th_smlabb(th_read_s32(r1 + 2), w2_1, th_smlad(th_read_s32(r1), w01_1, a));
            a = th_smlabb(th_read_s32(r2 + 2), w2_2, th_smlad(th_read_s32(r2), w01_2, a));
            o[0] = dw_out(a, &rq, c, quant, stage, fast_only);
            o += channels;
        }
    }
}

static void dw3x3_channel(const int16_t *plane, int32_t pw, int32_t stride,
                          const int8_t *filter, int32_t c, int32_t channels, int32_t acc0,
                          const th_per_channel_quant *quant, const th_nn_out_stage *stage,
                          const th_dims *output_dims, int8_t *out)
{
    if (stage->fast && !stage->clamp) {
        dw3x3_channel_impl(plane, pw, stride, filter, c, channels, acc0, quant, stage,
                           output_dims, out, 1);
    } else {
        dw3x3_channel_impl(plane, pw, stride, filter, c, channels, acc0, quant, stage,
                           output_dims, out, 0);
    }
}

#endif /* TH_NN_DSP */

th_status th_dw_conv_3x3_s8(const th_context *ctx, const th_dw_conv_params *params,
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
    if (filter_dims->h != 3 || filter_dims->w != 3 || params->ch_mult != 1 ||
        params->dilation.h != 1 || params->dilation.w != 1 ||
        params->stride.h != params->stride.w || params->stride.h > 2) {
        return TH_ERR_UNSUPPORTED;
    }
    status = th_nn_check_scratch(
        ctx, th_dw_conv_3x3_s8_scratch_size(params, input_dims, filter_dims, output_dims));
    if (status != TH_OK) {
        return status;
    }
#if TH_NN_DSP
    const int32_t channels = output_dims->c;
    const int32_t stride = params->stride.h;
    const int32_t ph = plane_h(stride, output_dims->h);
    const int32_t pw = plane_w(stride, output_dims->w);
    int16_t *plane = (int16_t *)ctx->buf;
    th_nn_out_stage stage;
    th_nn_out_stage_init(&stage, quant, channels, params->output_offset, &params->activation,
                         th_acc_bound(9, 128, bias, channels));
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b =
            input + (int64_t)b * input_dims->h * input_dims->w * input_dims->c;
        int8_t *out_b = output + (int64_t)b * output_dims->h * output_dims->w * channels;
        for (int32_t c = 0; c < channels; c++) {
            fill_plane(plane, ph, pw, in_b, input_dims, c, params->padding.h,
                       params->padding.w, params->input_offset);
            dw3x3_channel(plane, pw, stride, filter, c, channels,
                          bias != NULL ? bias[c] : 0, quant, &stage, output_dims, out_b);
        }
    }
#else
    th_nn_dw_conv_ref_s8((int8_t *)ctx->buf, params, quant, input_dims, input, filter_dims,
                         filter, bias, output_dims, output);
#endif
    return TH_OK;
}
