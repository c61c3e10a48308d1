/* th_dw_conv_general_s8: DEPTHWISE_CONV_2D with any filter, stride, padding, dilation and
 * depth multiplier.
 *
 * DSP builds, given th_dw_conv_general_s8_scratch_size_fast (rows path): the filter is oriented so that its longer side runs along the
 * contiguous axis of a staged band (K x 1 audio kernels become 1 x K), the KA filter rows
 * that one output row reads are staged as int16 (input + offset, padding 0) once per output
 * row and input channel, and every output is a chain of SMLADs over tap pairs with the
 * weights of all ch_mult output channels prepared once per input channel as int16 pairs.
 * ch_mult == 1 first copies the channel's int8 plane to scratch (in place, th_nn.h rule
 * (a): later bands read input rows that earlier output rows may have overwritten).
 * Otherwise, and in portable builds: the reference loop (one int8 plane of scratch when
 * ch_mult == 1). */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* Geometry in the oriented frame: A = band rows, B = contiguous axis. */
typedef struct {
    int32_t transposed; /* filter wider along h than w: A = w, B = h */
    int32_t ka, kb, sa, sb, da, db, pad_a, pad_b, in_a, in_b, out_a, out_b;
    int32_t pb; /* band row length (int16 values) */
    int32_t kb_pairs; /* (kb + 1) / 2 weight words per filter row */
} dw_geom;

static dw_geom dw_geometry(const th_dw_conv_params *params, const th_dims *input_dims,
                           const th_dims *filter_dims, const th_dims *output_dims)
{
    dw_geom g;
    g.transposed = filter_dims->w < filter_dims->h;
    if (!g.transposed) {
        g.ka = filter_dims->h, g.kb = filter_dims->w;
        g.sa = params->stride.h, g.sb = params->stride.w;
        g.da = params->dilation.h, g.db = params->dilation.w;
        g.pad_a = params->padding.h, g.pad_b = params->padding.w;
        g.in_a = input_dims->h, g.in_b = input_dims->w;
        g.out_a = output_dims->h, g.out_b = output_dims->w;
    } else {
        g.ka = filter_dims->w, g.kb = filter_dims->h;
        g.sa = params->stride.w, g.sb = params->stride.h;
        g.da = params->dilation.w, g.db = params->dilation.h;
        g.pad_a = params->padding.w, g.pad_b = params->padding.h;
        g.in_a = input_dims->w, g.in_b = input_dims->h;
        g.out_a = output_dims->w, g.out_b = output_dims->h;
    }
    /* With dilation 1 an odd row's last tap is read as a pair with a zero weight: one more
     * value per band row. */
    g.pb = (g.out_b - 1) * g.sb + (g.kb - 1) * g.db + 1 + (g.db == 1 ? (g.kb & 1) : 0);
    g.kb_pairs = (g.kb + 1) / 2;
    return g;
}

/* Scratch layout: [int8 plane (ch_mult 1)] [int16 band KA x PB] [int32 weights]. */
static int32_t plane_bytes(const th_dw_conv_params *params, const th_dims *input_dims)
{
    return params->ch_mult == 1 ? th_round_up4(input_dims->h * input_dims->w) : 0;
}

static int32_t band_bytes(const dw_geom *g)
{
    return th_round_up4(2 * g->ka * g->pb);
}

static int32_t weight_bytes(const th_dw_conv_params *params, const dw_geom *g)
{
    return 4 * params->ch_mult * g->ka * g->kb_pairs;
}

/* One band row: input values (offset added) of oriented row `row` at columns -pad_b ...,
 * zeros outside the input. src(a, b) = src[a * step_a + b * step_b]. */
static void stage_row(int16_t *dst, const int8_t *src, int32_t step_a, int32_t step_b,
                      int32_t row, const dw_geom *g, int32_t input_offset)
{
    if (row < 0 || row >= g->in_a) {
        for (int32_t j = 0; j < g->pb; j++) {
            dst[j] = 0;
        }
        return;
    }
    const int32_t lead = TH_MIN(g->pad_b, g->pb);
    const int32_t body_end = TH_MIN(g->pb, g->pad_b + g->in_b);
    int32_t j = 0;
    for (; j < lead; j++) {
        dst[j] = 0;
    }
    const int8_t *s = src + (int64_t)row * step_a + (int64_t)(j - g->pad_b) * step_b;
    for (; j < body_end; j++, s += step_b) {
        dst[j] = (int16_t)(*s + input_offset);
    }
    for (; j < g->pb; j++) {
        dst[j] = 0;
    }
}

/* Weights of output channel oc as int16 pairs along the oriented B axis (an odd row's last
 * word holds one weight and a zero). */
static void prepare_weights(int32_t *dst, const int8_t *filter, int32_t oc, int32_t out_c,
                            const th_dims *filter_dims, const dw_geom *g)
{
    for (int32_t a = 0; a < g->ka; a++) {
        for (int32_t p = 0; p < g->kb_pairs; p++) {
            int32_t w[2] = {0, 0};
            for (int32_t k = 0; k < 2 && 2 * p + k < g->kb; k++) {
                const int32_t b = 2 * p + k;
                const int32_t ky = g->transposed ? b : a;
                const int32_t kx = g->transposed ? a : b;
                w[k] = filter[(ky * filter_dims->w + kx) * out_c + oc];
            }
            dst[a * g->kb_pairs + p] = th_pkhbt(w[0], w[1]);
        }
    }
}

/* Output stage of one output channel. */
typedef struct {
    th_fast_rq rq;
    int32_t fast;
    int32_t multiplier, shift, output_offset, act_min, act_max;
} dw_out_stage;

TH_INLINE int8_t dw_out(int32_t acc, const dw_out_stage *o)
{
    const int32_t v = o->fast ? th_fast_rq_apply(acc, &o->rq)
                              : th_requantize_s8(acc, o->multiplier, o->shift, o->output_offset);
    return (int8_t)th_clamp(v, o->act_min, o->act_max);
}

/* Four outputs of a row per pass sharing each weight load, taps adjacent (dilation 1; odd
 * rows end with a zero-weight pair). sb is a constant at the fast call sites, so the four
 * input loads take immediate offsets. */
TH_INLINE int32_t dw_row4(int8_t *out, int32_t out_step, const int16_t *band,
                          const int32_t *w, int32_t acc0, int32_t n, int32_t ka, int32_t kbp,
                          int32_t pb, int32_t sb, const dw_out_stage *o)
{
    int32_t b = 0;
    for (; b + 3 < n; b += 4, out += 4 * out_step) {
        const int16_t *r = band + b * sb;
        const int32_t *wa = w;
        int32_t s0 = acc0;
        int32_t s1 = acc0;
        int32_t s2 = acc0;
        int32_t s3 = acc0;
        for (int32_t a = 0; a < ka; a++, r += pb) {
            const int16_t *x = r;
            for (int32_t p = 0; p < kbp; p++, x += 2) {
                const int32_t wv = *wa++;
                s0 = th_smlad(th_read_s32(x), wv, s0);
                s1 = th_smlad(th_read_s32(x + sb), wv, s1);
                s2 = th_smlad(th_read_s32(x + 2 * sb), wv, s2);
                s3 = th_smlad(th_read_s32(x + 3 * sb), wv, s3);
            }
        }
        out[0] = dw_out(s0, o);
        out[out_step] = dw_out(s1, o);
        out[2 * out_step] = dw_out(s2, o);
        out[3 * out_step] = dw_out(s3, o);
    }
    for (; b < n; b++, out += out_step) {
        const int16_t *r = band + b * sb;
        const int32_t *wa = w;
        int32_t acc = acc0;
        for (int32_t a = 0; a < ka; a++, r += pb) {
            for (int32_t p = 0; p < kbp; p++) {
                acc = th_smlad(th_read_s32(r + 2 * p), *wa++, acc);
            }
        }
        *out = dw_out(acc, o);
    }
    return b;
}

/* One output row of one output channel. Not inlined: its loops get the registers. */
__attribute__((noinline)) static void dw_row(int8_t *out, int32_t out_step,
                                             const int16_t *band, const int32_t *w,
                                             int32_t acc0, const dw_geom *g,
                                             const dw_out_stage *stage)
{
    /* A local copy: the int8 stores below could alias *stage, which would reload it. */
    const dw_out_stage os = *stage;
    const dw_out_stage *o = &os;
    const int32_t pb = g->pb;
    const int32_t ka = g->ka;
    const int32_t kb = g->kb;
    const int32_t kbp = g->kb_pairs;
    const int32_t full = kb / 2;
    const int32_t sb = g->sb;
    const int32_t db = g->db;
    const int32_t n = g->out_b;
    if (db == 1) {
        if (sb == 1) {
            dw_row4(out, out_step, band, w, acc0, n, ka, kbp, pb, 1, o);
        } else if (sb == 2) {
            dw_row4(out, out_step, band, w, acc0, n, ka, kbp, pb, 2, o);
        } else {
            dw_row4(out, out_step, band, w, acc0, n, ka, kbp, pb, sb, o);
        }
        return;
    }
    for (int32_t b = 0; b < n; b++, out += out_step) {
        const int16_t *r = band + b * sb;
        const int32_t *wa = w;
        int32_t acc = acc0;
        for (int32_t a = 0; a < ka; a++, r += pb, wa += kbp) {
            const int16_t *t = r;
            for (int32_t p = 0; p < full; p++, t += 2 * db) {
                acc = th_smlad(th_pkhbt(t[0], t[db]), wa[p], acc);
            }
            if (kb & 1) {
                acc = th_smlabb(*t, wa[full], acc);
            }
        }
        *out = dw_out(acc, o);
    }
}

static void dw_rows_s8(int8_t *scratch, const th_dw_conv_params *params,
                       const th_per_channel_quant *quant, const th_dims *input_dims,
                       const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                       const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    const dw_geom g = dw_geometry(params, input_dims, filter_dims, output_dims);
    int8_t *plane = scratch;
    int16_t *band = (int16_t *)(void *)(scratch + plane_bytes(params, input_dims));
    int32_t *weights = (int32_t *)(void *)((int8_t *)band + band_bytes(&g));
    const int32_t in_c = input_dims->c;
    const int32_t out_c = output_dims->c;
    const int32_t mult = params->ch_mult;
    const int32_t words = g.ka * g.kb_pairs;
    const int64_t bound = th_acc_bound(filter_dims->h * filter_dims->w, 128, bias, out_c);
    /* Output steps in the oriented frame. */
    const int32_t out_step_a = g.transposed ? out_c : output_dims->w * out_c;
    const int32_t out_step_b = g.transposed ? output_dims->w * out_c : out_c;
    const int32_t plane_size = input_dims->h * input_dims->w;
    /* The plane copy is only needed when the output overwrites the input (rule (a)). */
    const int8_t *in_end = input + (int64_t)input_dims->n * plane_size * in_c;
    const int8_t *out_end = output + (int64_t)output_dims->n * output_dims->h *
                                         output_dims->w * out_c;
    const int32_t in_place = mult == 1 && output < in_end && input < out_end;
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *in_b = input + (int64_t)n * plane_size * in_c;
        int8_t *out_b = output + (int64_t)n * output_dims->h * output_dims->w * out_c;
        for (int32_t ic = 0; ic < in_c; ic++) {
            const int8_t *src = in_b + ic;
            int32_t step_h = input_dims->w * in_c;
            int32_t step_w = in_c;
            if (in_place) {
                for (int32_t i = 0; i < plane_size; i++) {
                    plane[i] = in_b[(int64_t)i * in_c + ic];
                }
                src = plane;
                step_h = input_dims->w;
                step_w = 1;
            }
            const int32_t step_a = g.transposed ? step_w : step_h;
            const int32_t step_b = g.transposed ? step_h : step_w;
            for (int32_t m = 0; m < mult; m++) {
                prepare_weights(weights + m * words, filter, ic * mult + m, out_c, filter_dims,
                                &g);
            }
            for (int32_t oa = 0; oa < g.out_a; oa++) {
                const int32_t row0 = oa * g.sa - g.pad_a;
                for (int32_t a = 0; a < g.ka; a++) {
                    stage_row(band + a * g.pb, src, step_a, step_b, row0 + a * g.da, &g,
                              params->input_offset);
                }
                for (int32_t m = 0; m < mult; m++) {
                    const int32_t oc = ic * mult + m;
                    dw_out_stage o;
                    o.multiplier = quant->multiplier[oc];
                    o.shift = quant->shift[oc];
                    o.output_offset = params->output_offset;
                    o.act_min = params->activation.min;
                    o.act_max = params->activation.max;
                    o.fast = th_fast_rq_ok(o.multiplier, o.shift, bound);
                    o.rq = o.fast ? th_fast_rq_make(o.multiplier, o.shift, o.output_offset)
                                  : (th_fast_rq){0, 0, 0};
                    dw_row(out_b + (int64_t)oa * out_step_a + oc, out_step_b, band,
                           weights + m * words, bias != NULL ? bias[oc] : 0, &g, &o);
                }
            }
        }
    }
}
#endif

int32_t th_dw_conv_general_s8_scratch_size(const th_dw_conv_params *params,
                                           const th_dims *input_dims,
                                           const th_dims *filter_dims,
                                           const th_dims *output_dims)
{
#if TH_NN_MVE
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL ||
        output_dims->h <= 0 || output_dims->w <= 0 || filter_dims->h <= 0 ||
        filter_dims->w <= 0 || params->stride.h <= 0 || params->stride.w <= 0 ||
        params->dilation.h <= 0 || params->dilation.w <= 0) {
        return 0;
    }
    return th_nn_mve_dw_scratch(params, filter_dims, output_dims);
#endif
    (void)filter_dims;
    (void)output_dims;
    /* ch_mult > 1 never runs in place (th_nn.h rule (a)): the input is read directly. */
    if (params == NULL || params->ch_mult != 1 || input_dims == NULL || input_dims->h <= 0 ||
        input_dims->w <= 0) {
        return 0;
    }
    return th_round_up4(input_dims->h * input_dims->w);
}

int32_t th_dw_conv_general_s8_scratch_size_fast(const th_dw_conv_params *params,
                                                const th_dims *input_dims,
                                                const th_dims *filter_dims,
                                                const th_dims *output_dims)
{
#if TH_NN_HAS_DSP && !TH_NN_MVE
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL ||
        input_dims->h <= 0 || input_dims->w <= 0 || filter_dims->h <= 0 ||
        filter_dims->w <= 0 || output_dims->h <= 0 || output_dims->w <= 0 ||
        params->ch_mult <= 0) {
        return 0;
    }
    const dw_geom g = dw_geometry(params, input_dims, filter_dims, output_dims);
    return plane_bytes(params, input_dims) + band_bytes(&g) + weight_bytes(params, &g);
#else
    (void)params;
    (void)input_dims;
    (void)filter_dims;
    (void)output_dims;
    return 0;
#endif
}

th_status th_dw_conv_general_s8(const th_context *ctx, const th_dw_conv_params *params,
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
    status = th_nn_check_scratch(
        ctx, th_dw_conv_general_s8_scratch_size(params, input_dims, filter_dims, output_dims));
    if (status != TH_OK) {
        return status;
    }
#if TH_NN_MVE
    th_nn_mve_dw_conv_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                         output_dims, output);
    return TH_OK;
#endif
    int8_t *plane = ctx != NULL ? (int8_t *)ctx->buf : NULL;
#if TH_NN_HAS_DSP && !TH_NN_MVE
    const int32_t fast = th_dw_conv_general_s8_scratch_size_fast(params, input_dims,
                                                                 filter_dims, output_dims);
    if (fast > 0 && th_nn_check_scratch(ctx, fast) == TH_OK) {
        dw_rows_s8(plane, params, quant, input_dims, input, filter_dims, filter, bias,
                   output_dims, output);
        return TH_OK;
    }
#endif
    th_nn_dw_conv_ref_s8(plane, params, quant, input_dims, input, filter_dims, filter, bias,
                         output_dims, output);
    return TH_OK;
}
