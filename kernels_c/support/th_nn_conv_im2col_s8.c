/* th_nn_conv_im2col_s8: CONV_2D (groups 1) through int16 im2col and the 2x2 SMLAD core,
 * two output pixels at a time. */
#include <stddef.h>
#include <string.h>

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
        ky_lo = y0 >= 0 ? 0 : (dil - 1 - y0) / dil;
        ky_hi = y0 >= input_dims->h ? 0 : (input_dims->h - 1 - y0) / dil + 1;
        ky_hi = TH_MIN(ky_hi, filter_dims->h);
        ky_lo = TH_MIN(ky_lo, ky_hi);
        for (int32_t i = 0; i < ky_lo * words; i++) {
            cols[i] = 0;
        }
        const int32_t all_words = filter_dims->h * words;
        for (int32_t i = ky_hi * words; i < all_words; i++) {
            cols[i] = 0;
        }
    }
    const int32_t row_bytes = input_dims->w * cin;
    for (int32_t ky = ky_lo; ky < ky_hi; ky++) {
        const int8_t *src = input + (int64_t)(y0 + ky * dil) * row_bytes + (int64_t)x0 * cin;
        th_nn_widen_two(cols + ky * words, src, src + params->stride.w * cin, chunks_per_row,
                        offset2);
    }
}

/* Filter rows [ky_lo, ky_lo + rows) of the block-2 interleaved filter (K taps a channel) as a
 * filter of their own (rows * KW * Cin taps, same layout) in dst: one run of whole chunks per
 * block where the rows start and end on a chunk boundary (KW * Cin a multiple of 4), else
 * byte by byte. */
static void __attribute__((noinline))
repack_rows(int8_t *dst, const int8_t *filter, const th_dims *filter_dims, int32_t cout,
            int32_t ky_lo, int32_t rows)
{
    const int32_t row_taps = filter_dims->w * filter_dims->c;
    const int32_t kp = th_round_up4(filter_dims->h * row_taps);
    const int32_t k0 = ky_lo * row_taps;
    const int32_t k_sub = rows * row_taps;
    const int32_t kp_sub = th_round_up4(k_sub);
    for (int32_t first = 0; first < cout; first += TH_CONV_BLOCK) {
        const int32_t g = TH_MIN(TH_CONV_BLOCK, cout - first);
        const int8_t *src = filter + (int64_t)first * kp;
        int8_t *d = dst + (int64_t)first * kp_sub;
        if ((row_taps & 3) == 0) {
            memcpy(d, src + (int64_t)k0 * g, (size_t)(kp_sub * g));
            continue;
        }
        for (int32_t j = 0; j < g; j++) {
            for (int32_t k = 0; k < kp_sub; k++) {
                const int32_t ks = k0 + k;
                d[(k >> 2) * 4 * g + j * 4 + (k & 3)] =
                    k < k_sub ? src[(ks >> 2) * 4 * g + j * 4 + (ks & 3)] : 0;
            }
        }
    }
}

/* One layer's pixel pairs: the layer as conv_im2col sees it, or (rows path) with the filter
 * rows inside of an output row (params with the padding above moved past the rows left out,
 * filter_dims with their count, filter the repacked rows, kp their Kp). */
typedef struct {
    const th_conv_params *params;
    const th_dims *input_dims;
    const th_dims *filter_dims;
    const int8_t *filter;
    const int16_t *filter16;
    const int32_t *bias;
    const th_per_channel_quant *quant;
    const th_nn_out_stage *stage;
    const th_nn_rq_pair *tab;
    int32_t *cols;
    const int8_t *in_b;
    int8_t *out_b;
    int32_t kp;
    int32_t cout;
    int32_t out_w;
    int32_t pixels;
    int apart;
    int staged;
} pair_layer;

/* The pairs (p, p + 1) from pixel p on while p + 1 < end; returns the next p. Inlined into
 * conv_im2col for layers without the rows path (measured: a called copy costs 2-4
 * instructions more per pair). */
TH_INLINE int32_t pairs_loop(const pair_layer *l, int32_t p, int32_t end)
{
    const th_conv_params *params = l->params;
    const th_dims *input_dims = l->input_dims;
    const th_dims *filter_dims = l->filter_dims;
    const int32_t out_w = l->out_w;
    const int32_t cout = l->cout;
    int32_t *cols = l->cols;
    const int8_t *in_b = l->in_b;
    const int32_t x_span = params->stride.w + filter_dims->w;
    const int32_t sy = params->stride.h;
    const int32_t sx = params->stride.w;
    for (; p + 1 < end; p += 2) {
        const int32_t oy = p / out_w;
        const int32_t ox = p - oy * out_w;
        if (l->apart && ox + 1 < out_w && ox * sx >= params->padding.w &&
            ox * sx - params->padding.w + x_span <= input_dims->w && TH_NN_PATH(IM2COL_APART)) {
            im2col_apart(cols, in_b, input_dims, params, filter_dims, oy, ox);
        } else if (ox + 1 < out_w && (input_dims->c & 3) == 0) {
            th_nn_im2col_pair_s16(cols, in_b, input_dims, params, filter_dims, oy, ox);
        } else if (l->staged) {
            const int32_t y0 = oy * sy - params->padding.h;
            const int32_t x0 = ox * sx - params->padding.w;
            if (ox + 1 < out_w) {
                th_nn_im2col_staged_s16(cols, in_b, input_dims, params, filter_dims, y0, x0, y0,
                                        x0 + sx);
            } else {
                th_nn_im2col_staged_s16(cols, in_b, input_dims, params, filter_dims, y0, x0,
                                        y0 + sy, -params->padding.w);
            }
        } else {
            th_nn_im2col_two_s16(cols, in_b, input_dims, params, filter_dims, oy, ox,
                                 (p + 1) / out_w, (p + 1) % out_w);
        }
        int8_t *out0 = l->out_b + (int64_t)p * cout;
        if (l->filter16 != NULL) {
            th_nn_mat_mult_s16w_tab(cols, 2, l->kp, l->filter16, l->bias, l->quant, l->stage,
                                    l->tab, cout, out0, out0 + cout);
            continue;
        }
        th_nn_mat_mult_s8_s16_tab(cols, 2, l->kp, l->filter, l->bias, l->quant, l->stage,
                                  l->tab, cout, out0, out0 + cout);
    }
    return p;
}

static int32_t __attribute__((noinline)) conv_pairs(const pair_layer *l, int32_t p, int32_t end)
{
    return pairs_loop(l, p, end);
}

/* The pairs of the output rows [oy, oy_end) from pixel p on (the rows path: the rows whose
 * windows cross the top or bottom edge with the filter rows inside alone, repacked into
 * rows_filter where that saves more than the repacking costs); returns the next p. *packed:
 * the first filter row and the row count in rows_filter. */
static int32_t __attribute__((noinline))
conv_rows(const pair_layer *l, int8_t *rows_filter, int32_t packed[2], int32_t p, int32_t oy,
          int32_t oy_end)
{
    const th_conv_params *params = l->params;
    const th_dims *input_dims = l->input_dims;
    const th_dims *filter_dims = l->filter_dims;
    const int32_t out_w = l->out_w;
    const int32_t dil = params->dilation.h;
    const int32_t row_taps = filter_dims->w * filter_dims->c;
    for (; oy < oy_end; oy++) {
        const int32_t y0 = oy * params->stride.h - params->padding.h;
        const int32_t ky_lo = y0 >= 0 ? 0 : TH_MIN((dil - 1 - y0) / dil, filter_dims->h);
        const int32_t ky_hi =
            y0 >= input_dims->h ? 0 : TH_MIN((input_dims->h - 1 - y0) / dil + 1, filter_dims->h);
        const int32_t rows = ky_hi - ky_lo;
        const int32_t kp_sub = th_round_up4(rows * row_taps);
        const int32_t row_end = (oy + 1) * out_w;
        /* Repacking costs about 8 instructions a byte, a word copy where the rows are whole
         * chunks; a chunk left out saves about 7/8 of an instruction per tap and output. */
        const int32_t cost = (row_taps & 3) == 0 ? 1 : 8;
        if (rows <= 0 || rows == filter_dims->h || (l->kp - kp_sub) * out_w <= cost * kp_sub ||
            !TH_NN_PATH(IM2COL_ROWS)) {
            p = conv_pairs(l, p, TH_MIN(row_end + 1, l->pixels)); /* (and across rows) */
            continue;
        }
        if (ky_lo != packed[0] || rows != packed[1]) {
            repack_rows(rows_filter, l->filter, filter_dims, l->cout, ky_lo, rows);
            packed[0] = ky_lo;
            packed[1] = rows;
        }
        th_conv_params sub_params = *params;
        sub_params.padding.h = params->padding.h - ky_lo * dil;
        th_dims sub_dims = *filter_dims;
        sub_dims.h = rows;
        pair_layer sub = *l;
        sub.params = &sub_params;
        sub.filter_dims = &sub_dims;
        sub.filter = rows_filter;
        sub.kp = kp_sub;
        sub.staged = l->staged && th_nn_im2col_staged_applies(input_dims, &sub_params, &sub_dims);
        p = conv_pairs(&sub, p, row_end);
        if (p + 1 == row_end && row_end < l->pixels) {
            p = conv_pairs(l, p, row_end + 1); /* the pair across rows: the whole filter */
        }
    }
    return p;
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
    pair_layer layer;
    layer.params = params;
    layer.input_dims = input_dims;
    layer.filter_dims = filter_dims;
    layer.filter = filter;
    layer.filter16 = filter16;
    layer.bias = bias;
    layer.quant = quant;
    layer.stage = &stage;
    layer.tab = tab;
    layer.cols = cols;
    layer.kp = kp;
    layer.cout = cout;
    layer.out_w = out_w;
    layer.pixels = pixels;
    /* Pairs of non-overlapping windows inside: im2col_apart. */
    layer.apart = (input_dims->c & 3) == 0 && params->dilation.w == 1 &&
                  (params->stride.w >= filter_dims->w ||
                   filter_dims->w * input_dims->c <= TH_APART_MAX_ROW);
    /* Staged pairs: any pair with Cin not a multiple of 4, else pairs across rows (odd
     * output width), which the paths above do not take. */
    layer.staged = ((input_dims->c & 3) != 0 || (out_w & 1) != 0) &&
                   th_nn_im2col_staged_applies(input_dims, params, filter_dims);
    /* Output rows whose windows cross the top or bottom edge (given the fast scratch,
     * th_nn_im2col_rows_scratch): conv_rows, the filter repacked after the columns. */
    int8_t *rows_filter = NULL;
    int32_t rows_top = 0; /* output rows [0, rows_top) and [rows_bottom, OH) cross an edge */
    int32_t rows_bottom = output_dims->h;
    if (TH_NN_KEEP_IM2COL_ROWS && filter16 == NULL) {
        const int32_t fast =
            th_nn_im2col_rows_scratch(params, input_dims, filter_dims, output_dims);
        if (fast > 0 && ctx->size >= fast) {
            rows_filter = (int8_t *)ctx->buf + th_nn_im2col_pair_bytes(kp);
            const int32_t sy = params->stride.h;
            const int32_t reach = (filter_dims->h - 1) * params->dilation.h;
            rows_top = TH_MIN((params->padding.h + sy - 1) / sy, output_dims->h);
            /* the first row whose window ends below the input */
            const int32_t below = input_dims->h - 1 - reach + params->padding.h;
            rows_bottom = below < 0 ? 0 : TH_MIN(below / sy + 1, output_dims->h);
            rows_bottom = TH_MAX(rows_bottom, rows_top);
        }
    }
    int32_t packed[2] = {-1, 0};
    for (int32_t b = 0; b < input_dims->n; b++) {
        layer.in_b = input + (int64_t)b * input_dims->h * input_dims->w * input_dims->c;
        layer.out_b = output + (int64_t)b * pixels * cout;
        int8_t *out_b = layer.out_b;
        const int8_t *in_b = layer.in_b;
        int32_t p = 0;
        if (rows_filter == NULL) {
            p = pairs_loop(&layer, 0, pixels);
        } else {
            p = conv_rows(&layer, rows_filter, packed, p, 0, rows_top);
            p = pairs_loop(&layer, p, rows_bottom * out_w + (rows_bottom < output_dims->h));
            p = conv_rows(&layer, rows_filter, packed, p, rows_bottom, output_dims->h);
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
