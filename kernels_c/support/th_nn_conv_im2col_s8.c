/* th_nn_conv_im2col_s8: CONV_2D (groups 1) through int16 im2col and the 2x2 SMLAD core,
 * two output pixels at a time. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP
/* Columns of output pixels (oy, ox) and (oy, ox + 1) whose windows are inside horizontally
 * and do not overlap (stride.w >= KW; or short rows, TH_APART_MAX_ROW; Cin a multiple of 4,
 * dilation.w 1): each filter row is one run of KW * Cin bytes per pixel, the two widened in
 * one loop (th_nn_im2col_pair_s16 widens each tap separately for non-overlapping windows).
 * Filter rows [ky_lo, ky_hi) are inside the
 * input, the chunks of the others zero. */
/* Overlapping windows (stride.w < KW) too when a filter row has at most this many bytes:
 * th_nn_im2col_pair_s16 widens their shared words once, but in three short runs per row
 * (measured, bench/few_cout.py: 32 and 64 bytes the same, the sweep's shapes all gain). */
#define TH_APART_MAX_ROW 32

/* rows >= 1 filter rows of n >= 1 words each, the first at p0 (pixel 1's `step` bytes
 * further), the next row_step bytes after the last's start, widened into consecutive chunks
 * at c as th_nn_widen_two does (the rows' chunks follow each other). One loop for the
 * whole window: a call per row cost about 12 instructions (pointers, count, call). */
TH_INLINE void widen_two_rows(int32_t *c, const int8_t *p0, int32_t step, int32_t rows,
                              int32_t row_step, int32_t n, int32_t offset2)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* 10 instructions per chunk as th_nn_widen_two, 4 per row. */
    const int32_t skip = row_step - 4 * n;
    int32_t k;
    int32_t u;
    int32_t v;
    int32_t a;
    int32_t b;
    __asm__ volatile("1:\n\t"
                     "mov %[k], %[n]\n\t"
                     "2:\n\t"
                     "ldr %[v], [%[p], %[s]]\n\t"
                     "ldr %[u], [%[p]], #4\n\t"
                     TH_NN_WIDEN_TWO_STORE
                     "subs %[k], %[k], #1\n\t"
                     "bne 2b\n\t"
                     "add %[p], %[p], %[skip]\n\t"
                     "subs %[rows], %[rows], #1\n\t"
                     "bne 1b\n\t"
                     : [p] "+r"(p0), [c] "+r"(c), [rows] "+r"(rows), [k] "=&r"(k),
                       [u] "=&r"(u), [v] "=&r"(v), [a] "=&r"(a), [b] "=&r"(b)
                     : [o] "r"(offset2), [s] "r"(step), [n] "r"(n), [skip] "r"(skip)
                     : "cc", "memory");
#else
    for (; rows > 0; rows--, p0 += row_step, c += 4 * n) {
        th_nn_widen_two(c, p0, p0 + step, n, offset2);
    }
#endif
}

static void __attribute__((noinline))
im2col_apart(int32_t *cols, const int8_t *input, const th_dims *input_dims,
             const th_conv_params *params, const th_dims *filter_dims, int32_t oy, int32_t ox)
{
    const int32_t cin = input_dims->c;
    const int32_t chunks_per_row = filter_dims->w * cin / 4;
    const int32_t dil = params->dilation.h;
    const int32_t y0 = oy * params->stride.h - params->padding.h;
    const int32_t x0 = ox * params->stride.w - params->padding.w;
    const int32_t offset = params->input_offset;
    const int32_t offset2 = (int32_t)(((uint32_t)offset << 16) | ((uint32_t)offset & 0xFFFFu));
    int32_t ky_lo = 0;
    int32_t ky_hi = filter_dims->h;
    const int32_t words = 4 * chunks_per_row;
    if (y0 < 0 || y0 + (ky_hi - 1) * dil >= input_dims->h) { /* rows outside: zero */
        th_nn_rows_inside(y0, dil, ky_hi, input_dims->h, &ky_lo, &ky_hi);
        for (int32_t i = 0; i < ky_lo * words; i++) {
            cols[i] = 0;
        }
        const int32_t all_words = filter_dims->h * words;
        for (int32_t i = ky_hi * words; i < all_words; i++) {
            cols[i] = 0;
        }
    }
    if (ky_lo >= ky_hi) {
        return;
    }
    const int32_t row_bytes = input_dims->w * cin;
    const int8_t *src = input + (int64_t)(y0 + ky_lo * dil) * row_bytes + (int64_t)x0 * cin;
    widen_two_rows(cols + ky_lo * words, src, params->stride.w * cin, ky_hi - ky_lo,
                   dil * row_bytes, chunks_per_row, offset2);
}

/* K x 1 and 1 x K filters crossing a padded edge (Cin not a multiple of 4, staged): a
 * same-row pair whose windows cross an edge stages, widens and multiplies only the chunks
 * holding taps inside the input (th_nn_im2col_span_s16, th_nn_mat_mult_s8_s16_span); the
 * rest of the taps are padding, zero in both columns (4x34x5 k9x1 "same": 20 of 45). Its own
 * copy of conv_im2col's pair loop (staged layers only), so no other layer's pairs test for
 * it; chosen per layer in th_nn_conv_im2col_s8 (conv_im2col's code is unchanged). */
static void __attribute__((noinline))
conv_im2col_span(const th_context *ctx, const th_conv_params *params,
                 const th_per_channel_quant *quant, const th_dims *input_dims,
                 const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                 const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    /* (set-up as conv_im2col) */
    const int32_t k_total = filter_dims->h * filter_dims->w * filter_dims->c;
    const int32_t cout = output_dims->c;
    const int32_t out_w = output_dims->w;
    const int32_t pixels = output_dims->h * out_w;
    th_nn_out_stage st;
    th_nn_out_stage_init(&st, quant, cout, params->output_offset, &params->activation,
                         th_acc_bound(k_total, 128, bias, cout));
    th_nn_out_stage_mixed(&st, quant, bias, cout, (int64_t)k_total * 256 * 128);
    const th_nn_out_stage *stage = &st;
    th_nn_rq_pair rq_buf[TH_NN_RQ_PAIRS]; /* 256 bytes of stack */
    const th_nn_rq_pair *tab = th_nn_rq_table(rq_buf, TH_NN_RQ_PAIRS, quant, bias, stage, cout);
    int32_t *cols = (int32_t *)ctx->buf;
    const int32_t kp = th_round_up4(k_total);
    const int32_t sy = params->stride.h;
    const int32_t sx = params->stride.w;
    const int32_t kw = filter_dims->w;
    const int32_t y_last = input_dims->h - (filter_dims->h - 1) * params->dilation.h;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b =
            input + (int64_t)b * input_dims->h * input_dims->w * input_dims->c;
        int8_t *out_b = output + (int64_t)b * pixels * cout;
        int32_t p = 0;
        for (; p + 1 < pixels; p += 2) {
            const int32_t oy = p / out_w;
            const int32_t ox = p - oy * out_w;
            const int32_t y0 = oy * sy - params->padding.h;
            const int32_t x0 = ox * sx - params->padding.w;
            int8_t *o0 = out_b + (int64_t)p * cout;
            if (ox + 1 < out_w) {
                if (y0 < 0 || y0 >= y_last || x0 < 0 || x0 + sx + kw > input_dims->w) {
                    int32_t j0;
                    const int32_t n = th_nn_im2col_span_s16(cols, in_b, input_dims, params,
                                                            filter_dims, y0, x0, x0 + sx, &j0);
                    th_nn_mat_mult_s8_s16_span(cols, j0, n, kp, filter, bias, quant, stage,
                                               tab, cout, o0, o0 + cout);
                    continue;
                }
                th_nn_im2col_staged_s16(cols, in_b, input_dims, params, filter_dims, y0, x0, y0,
                                        x0 + sx);
            } else {
                th_nn_im2col_staged_s16(cols, in_b, input_dims, params, filter_dims, y0, x0,
                                        y0 + sy, -params->padding.w);
            }
            th_nn_mat_mult_s8_s16_tab(cols, 2, kp, filter, bias, quant, stage, tab, cout, o0,
                                      o0 + cout);
        }
        if (p < pixels) { /* as conv_im2col */
            th_nn_im2col_two_s16(cols, in_b, input_dims, params, filter_dims, p / out_w,
                                 p % out_w, p / out_w, p % out_w);
            th_nn_mat_mult_s8_s16_tab(cols, 2, kp, filter, bias, quant, stage, tab, cout,
                                      out_b + (int64_t)p * cout, out_b + (int64_t)p * cout);
        }
    }
}

/* filter16 non-NULL: the host's int16 weights (th_nn_mat_mult_s16w_tab) and its table of
 * requantization constants (host_tab, NULL: none), instead of filter. One copy for both
 * entry points (a test per pixel pair costs nothing; a second copy of the loop, 0.5 KB). */
static void __attribute__((noinline))
conv_im2col(const th_context *ctx, const th_conv_params *params,
            const th_per_channel_quant *quant, const th_dims *input_dims, const int8_t *input,
            const th_dims *filter_dims, const int8_t *filter, const int32_t *bias,
            const th_dims *output_dims, int8_t *output, const int16_t *filter16,
            const th_nn_rq_pair *host_tab)
{
    const int32_t k_total = filter_dims->h * filter_dims->w * filter_dims->c;
    const int32_t cout = output_dims->c;
    const int32_t out_w = output_dims->w;
    const int32_t pixels = output_dims->h * out_w;
    th_nn_out_stage stage;
    th_nn_out_stage_init(&stage, quant, cout, params->output_offset, &params->activation,
                         th_acc_bound(k_total, 128, bias, cout));
    th_nn_out_stage_mixed(&stage, quant, bias, cout, (int64_t)k_total * 256 * 128);
    th_nn_rq_pair rq_buf[TH_NN_RQ_PAIRS]; /* 256 bytes of stack */
    const th_nn_rq_pair *tab = NULL;
    if (filter16 == NULL) {
        tab = th_nn_rq_table(rq_buf, TH_NN_RQ_PAIRS, quant, bias, &stage, cout);
    } else if (th_nn_rq_table_applies(cout, bias, &stage, cout)) {
        tab = host_tab; /* the constants th_nn_rq_table would make, for every pair */
    }
    int32_t *cols = (int32_t *)ctx->buf;
    const int32_t kp = th_round_up4(k_total);
    /* Pairs of non-overlapping windows inside: im2col_apart. */
    const int apart = (input_dims->c & 3) == 0 && params->dilation.w == 1 &&
                      (params->stride.w >= filter_dims->w ||
                       filter_dims->w * input_dims->c <= TH_APART_MAX_ROW);
    const int32_t x_span = params->stride.w + filter_dims->w;
    /* Staged pairs: any pair with Cin not a multiple of 4, else pairs across rows (odd
     * output width), which the paths above do not take. */
    const int staged = ((input_dims->c & 3) != 0 || (out_w & 1) != 0) &&
                       th_nn_im2col_staged_applies(input_dims, params, filter_dims);
    const int32_t sy = params->stride.h;
    const int32_t sx = params->stride.w;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b =
            input + (int64_t)b * input_dims->h * input_dims->w * input_dims->c;
        int8_t *out_b = output + (int64_t)b * pixels * cout;
        int32_t p = 0;
        for (; p + 1 < pixels; p += 2) {
            const int32_t oy = p / out_w;
            const int32_t ox = p - oy * out_w;
            if (apart && ox + 1 < out_w && ox * params->stride.w >= params->padding.w &&
                ox * params->stride.w - params->padding.w + x_span <= input_dims->w &&
                TH_NN_PATH(IM2COL_APART)) {
                im2col_apart(cols, in_b, input_dims, params, filter_dims, oy, ox);
            } else if (ox + 1 < out_w && (input_dims->c & 3) == 0) {
                th_nn_im2col_pair_s16(cols, in_b, input_dims, params, filter_dims, oy, ox);
            } else if (staged) {
                const int32_t y0 = oy * sy - params->padding.h;
                const int32_t x0 = ox * sx - params->padding.w;
                if (ox + 1 < out_w) {
                    th_nn_im2col_staged_s16(cols, in_b, input_dims, params, filter_dims, y0, x0,
                                            y0, x0 + sx);
                } else {
                    th_nn_im2col_staged_s16(cols, in_b, input_dims, params, filter_dims, y0, x0,
                                            y0 + sy, -params->padding.w);
                }
            } else {
                th_nn_im2col_two_s16(cols, in_b, input_dims, params, filter_dims, oy, ox,
                                     (p + 1) / out_w, (p + 1) % out_w);
            }
            if (filter16 != NULL) {
                th_nn_mat_mult_s16w_tab(cols, 2, kp, filter16, bias, quant, &stage, tab, cout,
                                        out_b + (int64_t)p * cout,
                                        out_b + (int64_t)(p + 1) * cout);
                continue;
            }
            th_nn_mat_mult_s8_s16_tab(cols, 2, kp, filter, bias, quant, &stage, tab, cout,
                                      out_b + (int64_t)p * cout,
                                      out_b + (int64_t)(p + 1) * cout);
        }
        if (p < pixels && filter16 != NULL) {
            th_nn_im2col_s16(cols, 2, in_b, input_dims, params, filter_dims, p / out_w,
                             p % out_w);
            th_nn_mat_mult_s16w_tab(cols, 1, kp, filter16, bias, quant, &stage, NULL, cout,
                                    out_b + (int64_t)p * cout, NULL);
        } else if (p < pixels) {
            /* The last pixel of an odd count as a pair with itself, both outputs written to
             * the same place: the 2x2 loops a layer takes anyway, not a one-pixel loop. */
            th_nn_im2col_two_s16(cols, in_b, input_dims, params, filter_dims, p / out_w,
                                 p % out_w, p / out_w, p % out_w);
            th_nn_mat_mult_s8_s16_tab(cols, 2, kp, filter, bias, quant, &stage, tab, cout,
                                      out_b + (int64_t)p * cout, out_b + (int64_t)p * cout);
        }
    }
}

void th_nn_conv_im2col_s8(const th_context *ctx, const th_conv_params *params,
                          const th_per_channel_quant *quant, const th_dims *input_dims,
                          const int8_t *input, const th_dims *filter_dims,
                          const int8_t *filter, const int32_t *bias,
                          const th_dims *output_dims, int8_t *output)
{
    /* (cheapest tests first: a layer with Cin a multiple of 4 pays two instructions, one
     * with neither filter side 1 a few more; the call last. TH_NN_KEEP_IM2COL_SPAN first
     * folds the whole test away in a build without the path, where the external call would
     * otherwise stay; TH_NN_PATH last so a recording build marks the path only when taken) */
    if (TH_NN_KEEP_IM2COL_SPAN && (input_dims->c & 3) != 0 && (filter_dims->w == 1 || filter_dims->h == 1) &&
        (filter_dims->w == 1 ? params->padding.h : params->padding.w) > 0 &&
        filter_dims->w * input_dims->c >= 4 &&
        th_nn_im2col_staged_applies(input_dims, params, filter_dims) &&
        TH_NN_PATH(IM2COL_SPAN)) {
        conv_im2col_span(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                         output_dims, output);
        return;
    }
    conv_im2col(ctx, params, quant, input_dims, input, filter_dims, filter, bias, output_dims,
                output, NULL, NULL);
}

void th_nn_conv_im2col_s8_w16(const th_context *ctx, const th_conv_params *params,
                              const th_per_channel_quant *quant, const th_dims *input_dims,
                              const int8_t *input, const th_dims *filter_dims,
                              const int16_t *filter, const int32_t *bias,
                              const th_dims *output_dims, int8_t *output,
                              const th_nn_rq_pair *tab)
{
    conv_im2col(ctx, params, quant, input_dims, input, filter_dims, NULL, bias, output_dims,
                output, filter, tab);
}
#endif
