/* th_nn_im2col_s16: one output pixel's receptive field as offset int16, in SMLAD order. */
#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_DSP

/* Element k of the column lives in word (k / 4) * stride + (k & 1), halfword (k >> 1) & 1:
 * chunk (x0, x1, x2, x3) is stored as words (x0, x2), (x1, x3), the order SXTB16 gives. */
static void put_s16(int32_t *dst, int32_t chunk_stride_words, int32_t k, int32_t v)
{
    char *base = (char *)(dst + (k / 4) * chunk_stride_words + (k & 1));
    th_write_s16(base + 2 * ((k >> 1) & 1), (int16_t)v);
}

void th_nn_im2col_s16(int32_t *dst, int32_t chunk_stride_words, const int8_t *input,
                      const th_dims *input_dims, const th_conv_params *params,
                      const th_dims *filter_dims, int32_t out_y, int32_t out_x)
{
    const int32_t cin = input_dims->c;
    const int32_t k_total = filter_dims->h * filter_dims->w * cin;
    const int32_t chunks = th_round_up4(k_total) / 4;
    const int32_t offset = params->input_offset;
    const int32_t offset2 = (int32_t)(((uint32_t)offset << 16) | ((uint32_t)offset & 0xFFFFu));
    const int32_t y0 = out_y * params->stride.h - params->padding.h;
    const int32_t x0 = out_x * params->stride.w - params->padding.w;

    /* The padded tail of the last chunk must read as zero. */
    dst[(chunks - 1) * chunk_stride_words] = 0;
    dst[(chunks - 1) * chunk_stride_words + 1] = 0;

    int32_t k = 0;
    for (int32_t ky = 0; ky < filter_dims->h; ky++) {
        const int32_t y = y0 + ky * params->dilation.h;
        for (int32_t kx = 0; kx < filter_dims->w; kx++, k += cin) {
            const int32_t x = x0 + kx * params->dilation.w;
            const int inside = y >= 0 && y < input_dims->h && x >= 0 && x < input_dims->w;
            const int8_t *px = inside ? input + ((int64_t)y * input_dims->w + x) * cin : input;
            if ((cin & 3) == 0) {
                int32_t *d = dst + (k / 4) * chunk_stride_words;
                for (int32_t i = 0; i < cin; i += 4, d += chunk_stride_words) {
                    if (inside) {
                        const int32_t w = th_read_s32(px + i);
                        d[0] = th_sxtab16(offset2, w);
                        d[1] = th_sxtab16_ror8(offset2, w);
                    } else {
                        d[0] = 0;
                        d[1] = 0;
                    }
                }
            } else {
                for (int32_t i = 0; i < cin; i++) {
                    put_s16(dst, chunk_stride_words, k + i, inside ? px[i] + offset : 0);
                }
            }
        }
    }
}

#endif /* TH_NN_DSP */
