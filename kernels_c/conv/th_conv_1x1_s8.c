/* th_conv_1x1_s8: pointwise CONV_2D (1x1 filter, no padding), any stride.
 *
 * In place (th_nn.h aliasing rule (b)): pixels are staged in scratch before their outputs
 * are written, two at a time on the DSP and MVE paths (the MVE path stages only when the
 * output overlaps the input), one at a time on the portable path.
 */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* Output pixel p reads input pixel p (stride 1, same size), Cin a multiple of 4: the paths
 * that widen consecutive pixels two at a time. */
static int dense_shape(const th_conv_params *params, const th_dims *input_dims,
                       const th_dims *output_dims)
{
    return params->stride.h == 1 && params->stride.w == 1 &&
           output_dims->h == input_dims->h && output_dims->w == input_dims->w &&
           (input_dims->c & 3) == 0;
}

/* The dense path's requantization table goes in scratch when it would not fit the 1 KiB on
 * the stack (Cout > 65): bytes after the columns. */
static int32_t table_scratch_bytes(int32_t cout)
{
    return cout / 2 > TH_NN_RQ_PAIRS_1X1 ? (cout / 2) * (int32_t)sizeof(th_nn_rq_pair) : 0;
}

#endif

int32_t th_conv_1x1_s8_scratch_size(const th_conv_params *params, const th_dims *input_dims,
                                    const th_dims *filter_dims, const th_dims *output_dims)
{
    (void)filter_dims;
    if (input_dims == NULL || input_dims->c <= 0) {
        return 0;
    }
#if TH_NN_MVE
    (void)params;
    if (output_dims == NULL || output_dims->c <= 0) {
        return 0;
    }
    const th_dims pointwise = {output_dims->c, 1, 1, input_dims->c};
    return th_nn_mve_conv_scratch(&pointwise);
#elif TH_NN_HAS_DSP
    int32_t bytes = th_nn_im2col_pair_bytes(input_dims->c);
    if (params != NULL && output_dims != NULL && dense_shape(params, input_dims, output_dims)) {
        bytes += table_scratch_bytes(output_dims->c);
    }
    return bytes;
#else
    (void)params;
    (void)output_dims;
    return input_dims->c;
#endif
}

/* ---- few output channels (Cout <= FEW_MAX_COUT) ------------------------------------------
 * The weights, widened once per call into scratch, doubled, in SXTB16 order: for each tile
 * of up to four channels and each input word j (input channels 4j..4j+3; the last word is
 * read at Cin - 4, its lanes already counted weighted 0) per channel the words (w[4j],
 * w[4j+2]) and (w[4j+1], w[4j+3]); then per channel {2 * bias, multiplier, round_zp, e}.
 * Each input word is loaded and widened (with the input offset) once per tile and feeds
 * every channel of it with one LDRD and two SMLAD. */
#define FEW_MAX_COUT 16
#define FEW_TILE 4
/* Cout 9-16 (CONV1X1_FEW16): two to three tiles of four and a last one, for Cin not a
 * multiple of 4 only (where the alternative is the per-pixel im2col path). */
#define FEW_SMALL_COUT 8
/* With Cin a multiple of 4 the pairs path is nearly as fast per pixel, so the widening pays
 * from about this many output pixels on (measured, bench/kernels.py --sweep). */
#define FEW_MIN_PIXELS_CIN4 16

static int32_t few_words(int32_t cin)
{
    return (cin + 3) / 4;
}

/* Scratch bytes of the path, 0 where it does not apply (shapes only). */
static int32_t few_scratch_bytes(const th_dims *input_dims, const th_dims *output_dims)
{
    const int32_t cout = output_dims->c;
    const int32_t pixels = output_dims->n * output_dims->h * output_dims->w;
    if (!(TH_NN_HAS_DSP && !TH_NN_MVE) || cout > FEW_MAX_COUT || input_dims->c < 4 ||
        ((input_dims->c & 3) == 0 && (pixels < FEW_MIN_PIXELS_CIN4 || cout > FEW_SMALL_COUT))) {
        return 0;
    }
    return cout * (8 * few_words(input_dims->c) + 16);
}
int32_t th_conv_1x1_s8_scratch_size_fast(const th_conv_params *params,
                                         const th_dims *input_dims, const th_dims *filter_dims,
                                         const th_dims *output_dims)
{
    if (input_dims == NULL || output_dims == NULL || output_dims->c <= 0) {
        return 0;
    }
    const int32_t few = few_scratch_bytes(input_dims, output_dims);
    return few > th_conv_1x1_s8_scratch_size(params, input_dims, filter_dims, output_dims)
               ? few
               : 0;
}

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* Two pixels as interleaved int16 columns, 4 channels per step. */
static void pixel_pair_s16(int32_t *cols, const int8_t *px, const int8_t *px1, int32_t cin,
                           int32_t offset2)
{
    for (int32_t i = 0; i < cin; i += 4, cols += 4) {
        const int32_t a = th_read_s32(px + i);
        const int32_t b = th_read_s32(px1 + i);
        cols[0] = th_sxtab16(offset2, a);
        cols[1] = th_sxtab16_ror8(offset2, a);
        cols[2] = th_sxtab16(offset2, b);
        cols[3] = th_sxtab16_ror8(offset2, b);
    }
}

/* Channels of a table the block loop cannot requantize exactly (th_nn_rq_table_mixed). */
typedef struct {
    int16_t channel[TH_NN_RQ_SLOW_MAX];
    int32_t count;
} slow_channels;

/* Where output pixel p reads its input pixel (locals: the output may alias anything). */
typedef struct {
    int32_t out_w, stride_h, stride_w, in_w, cin;
    int dense; /* stride 1, same width: pixel p is input pixel p */
} pixel_walk;

static int64_t pixel_offset(const pixel_walk *wk, int32_t p)
{
    if (wk->dense) {
        return (int64_t)p * wk->cin;
    }
    const int32_t y = (p / wk->out_w) * wk->stride_h;
    const int32_t x = (p % wk->out_w) * wk->stride_w;
    return ((int64_t)y * wk->in_w + x) * wk->cin;
}

/* Cin a multiple of 4, any stride: pixels widened two at a time (in raster order, rule (b)
 * at stride 1, (c) otherwise); tab: the requantization constants or NULL; slow: channels to
 * fix after each pair of pixels. filter16 non-NULL: the host's int16 weights
 * (th_nn_mat_mult_s16w_tab) instead of filter (conv_1x1_pairs_w16; a function of its own,
 * so that the int8 path's frames stay as they were). */
TH_INLINE void pairs_body(int32_t *cols, const th_conv_params *params,
                          const th_per_channel_quant *quant, const th_dims *input_dims,
                          const int8_t *input, const int8_t *filter, const int32_t *bias,
                          const th_dims *output_dims, int8_t *output,
                          const th_nn_out_stage *stage, const th_nn_rq_pair *tab,
                          const slow_channels *slow, const int16_t *filter16)
{
    const int32_t cin = input_dims->c;
    const int32_t cout = output_dims->c;
    const int32_t pixels = output_dims->h * output_dims->w;
    const int32_t offset2 = (int32_t)(((uint32_t)params->input_offset << 16) |
                                      ((uint32_t)params->input_offset & 0xFFFFu));
    const pixel_walk wk = {output_dims->w, params->stride.h, params->stride.w, input_dims->w,
                           cin,
                           params->stride.h == 1 && params->stride.w == 1 &&
                               output_dims->w == input_dims->w};
    const int dense = wk.dense;
    const int32_t slow_count = slow != NULL ? slow->count : 0;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + (int64_t)b * input_dims->h * input_dims->w * cin;
        int8_t *out_b = output + (int64_t)b * pixels * cout;
        int32_t p = 0;
        for (; p + 1 < pixels; p += 2) {
            const int8_t *px0 = in_b + (int64_t)p * cin;
            const int8_t *px1 = px0 + cin;
            if (!dense) {
                px0 = in_b + pixel_offset(&wk, p);
                px1 = in_b + pixel_offset(&wk, p + 1);
            }
            pixel_pair_s16(cols, px0, px1, cin, offset2);
            int8_t *out0 = out_b + (int64_t)p * cout;
            int8_t *out1 = out0 + cout;
            if (filter16 != NULL) {
                th_nn_mat_mult_s16w_tab(cols, 2, cin, filter16, bias, quant, stage, tab, cout,
                                        out0, out1);
                if (slow_count > 0) {
                    th_nn_mat_mult_fix_channels_w16(cols, cin, filter16, bias, quant, stage,
                                                    slow->channel, slow_count, out0, out1);
                }
                continue;
            }
            th_nn_mat_mult_s8_s16_tab(cols, 2, cin, filter, bias, quant, stage, tab, cout,
                                      out0, out1);
            if (slow_count > 0) {
                th_nn_mat_mult_fix_channels(cols, cin, filter, bias, quant, stage,
                                            slow->channel, slow_count, out0, out1);
            }
        }
        if (p < pixels) {
            /* The last pixel of an odd count as a pair with itself, both outputs written to
             * the same place: the loops of the pairs above, not a one-pixel loop. */
            const int8_t *px = in_b + pixel_offset(&wk, p);
            int8_t *o = out_b + (int64_t)p * cout;
            pixel_pair_s16(cols, px, px, cin, offset2);
            if (filter16 != NULL) {
                th_nn_mat_mult_s16w_tab(cols, 2, cin, filter16, bias, quant, stage, tab, cout,
                                        o, o);
                if (slow_count > 0) {
                    th_nn_mat_mult_fix_channels_w16(cols, cin, filter16, bias, quant, stage,
                                                    slow->channel, slow_count, o, o);
                }
            } else {
                th_nn_mat_mult_s8_s16_tab(cols, 2, cin, filter, bias, quant, stage, tab, cout,
                                          o, o);
                if (slow_count > 0) {
                    th_nn_mat_mult_fix_channels(cols, cin, filter, bias, quant, stage,
                                                slow->channel, slow_count, o, o);
                }
            }
        }
    }
}

static void __attribute__((noinline))
conv_1x1_pairs(int32_t *cols, const th_conv_params *params, const th_per_channel_quant *quant,
               const th_dims *input_dims, const int8_t *input, const int8_t *filter,
               const int32_t *bias, const th_dims *output_dims, int8_t *output,
               const th_nn_out_stage *stage, const th_nn_rq_pair *tab,
               const slow_channels *slow)
{
    pairs_body(cols, params, quant, input_dims, input, filter, bias, output_dims, output,
               stage, tab, slow, NULL);
}

static void __attribute__((noinline))
conv_1x1_pairs_w16(int32_t *cols, const th_conv_params *params,
                   const th_per_channel_quant *quant, const th_dims *input_dims,
                   const int8_t *input, const int16_t *filter16, const int32_t *bias,
                   const th_dims *output_dims, int8_t *output, const th_nn_out_stage *stage,
                   const th_nn_rq_pair *tab, const slow_channels *slow)
{
    if (filter16 == NULL) {
        return; /* (never: lets the compiler drop the int8 loops from this function) */
    }
    pairs_body(cols, params, quant, input_dims, input, NULL, bias, output_dims, output, stage,
               tab, slow, filter16);
}

/* conv_1x1_pairs with a table of up to TH_NN_RQ_PAIRS_1X1 channel pairs (1 KiB) on this
 * frame, or in scratch after the columns for more channels; only called when the table
 * applies, so that frames below it are the table path's (no im2col staging, no
 * th_nn_mat_mult_s8_s16 fallback but for an odd last channel). Near-dead channels of a
 * mixed stage are fixed up exactly after each pair of pixels (filter16: the host's int16
 * weights instead of filter: inlined in th_conv_1x1_s8_w16). */
TH_INLINE void tab_body(int32_t *cols, const th_conv_params *params,
                        const th_per_channel_quant *quant, const th_dims *input_dims,
                        const int8_t *input, const int8_t *filter, const int32_t *bias,
                        const th_dims *output_dims, int8_t *output,
                        const th_nn_out_stage *stage, const int16_t *filter16)
{
    th_nn_rq_pair rq_buf[TH_NN_RQ_PAIRS_1X1];
    const int32_t cout = output_dims->c;
    th_nn_rq_pair *buf = rq_buf;
    int32_t capacity = TH_NN_RQ_PAIRS_1X1;
    if (table_scratch_bytes(cout) > 0 && dense_shape(params, input_dims, output_dims)) {
        buf = (th_nn_rq_pair *)(void *)((int8_t *)cols + th_nn_im2col_pair_bytes(input_dims->c));
        capacity = cout / 2;
    }
    slow_channels slow;
    const th_nn_rq_pair *tab = th_nn_rq_table_mixed(buf, capacity, quant, bias, stage, cout,
                                                    slow.channel, &slow.count);
    if (filter16 != NULL) {
        conv_1x1_pairs_w16(cols, params, quant, input_dims, input, filter16, bias, output_dims,
                           output, stage, tab, &slow);
    } else {
        conv_1x1_pairs(cols, params, quant, input_dims, input, filter, bias, output_dims,
                       output, stage, tab, &slow);
    }
}

static void __attribute__((noinline))
conv_1x1_pairs_tab(int32_t *cols, const th_conv_params *params,
                   const th_per_channel_quant *quant, const th_dims *input_dims,
                   const int8_t *input, const int8_t *filter, const int32_t *bias,
                   const th_dims *output_dims, int8_t *output, const th_nn_out_stage *stage)
{
    tab_body(cols, params, quant, input_dims, input, filter, bias, output_dims, output, stage,
             NULL);
}


/* ---- 8 input channels -------------------------------------------------------------------
 * With K = 8 a 2 x 2 block has 32 MACs against 4 requantizations, and staging columns and
 * loading constants cost as much as the MACs. This path keeps one pixel's 8 values in four
 * registers as SXTB16 pairs of the raw bytes (the input offset is folded into the bias:
 * sum((x + o) * w) = sum(x * w) + o * sum(w), exact) and streams per-channel records
 * {4 weight words, doubled, in SXTB16 order; 2 * bias'; multiplier; round_zp; e} with one
 * LDM each: per output LDM, 4 SMLAD, then SMMLAR, ADD, ASR, SSAT, STRB (th_fast_rq_apply2).
 * Channels go in groups of four; bit 8 of the last record's e (the shift only reads bits
 * 0-7) ends the pixel. Records live on the stack, up to K8_CHUNK channels at a time. One
 * pixel is read before any of its outputs is written: in place per rule (b). */
#define K8_RECORD_WORDS 8
#define K8_CHUNK 32 /* 32 records: 1 KiB of stack */
#define K8_LAST 256

/* Records of channels [c0, c0 + n) (n a multiple of 4). */
static void k8_records(int32_t *rec, int32_t c0, int32_t n, const int8_t *filter,
                       const int32_t *bias, const th_per_channel_quant *quant,
                       const th_nn_out_stage *stage, int32_t input_offset, int32_t cout)
{
    for (int32_t j = 0; j < n; j++, rec += K8_RECORD_WORDS) {
        const int32_t c = c0 + j;
        const int32_t lo = th_read_s32(filter + th_filter_index(c, 0, 8, cout, TH_CONV_BLOCK));
        const int32_t hi = th_read_s32(filter + th_filter_index(c, 4, 8, cout, TH_CONV_BLOCK));
        const int32_t w[4] = {th_sxtb16(lo), th_sxtb16_ror8(lo), th_sxtb16(hi),
                              th_sxtb16_ror8(hi)};
        int32_t wsum = 0;
        for (int32_t i = 0; i < 4; i++) {
            rec[i] = th_sadd16(w[i], w[i]); /* |2w| <= 256 fits a halfword */
        }
        for (int32_t k = 0; k < 8; k++) {
            wsum += filter[th_filter_index(c, k, 8, cout, TH_CONV_BLOCK)];
        }
        const uint32_t b = (uint32_t)(bias != NULL ? bias[c] : 0) +
                           (uint32_t)input_offset * (uint32_t)wsum;
        const th_fast_rq rq = th_fast_rq_make(quant->multiplier[c], quant->shift[c],
                                              stage->output_offset);
        rec[4] = (int32_t)(b << 1);
        rec[5] = rq.multiplier;
        rec[6] = rq.round_zp;
        rec[7] = rq.e | (j == n - 1 ? K8_LAST : 0);
    }
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__) && defined(__GNUC__)
#define K8_OUTPUT \
    "ldmia lr!, {r4, r5, r6, r7, r8, r9, r10, r11}\n\t" \
    "smlad r8, r0, r4, r8\n\t" \
    "smlad r8, r1, r5, r8\n\t" \
    "smlad r8, r2, r6, r8\n\t" \
    "smlad r8, r3, r7, r8\n\t" \
    "smmlar r4, r8, r9, r10\n\t" \
    "add r4, r4, r8, asr #31\n\t" \
    "asr r4, r4, r11\n\t" \
    "ssat r4, #8, r4\n\t" \
    "strb r4, [ip], #1\n\t"

/* Pixels from `in` (8 bytes each) to `out` until `out_end`, the records' channels of each,
 * then `skip` bytes to the next pixel's first one. Registers: pixel r0-r3, record r4-r11
 * (the accumulator in r8), output ip, records lr. Frame: [sp] in, records, skip, end. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline))
conv_1x1_k8_pixels(const int8_t *in, const int32_t *rec, int32_t skip, int8_t *out,
                   const int8_t *out_end)
{
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #16\n\t"
        "ldr r4, [sp, #52]\n\t"
        "strd r0, r1, [sp]\n\t"
        "strd r2, r4, [sp, #8]\n\t"
        "mov ip, r3\n\t"
        "1:\n\t"
        "ldrd r4, lr, [sp]\n\t"
        "ldr r1, [r4], #4\n\t"
        "ldr r3, [r4], #4\n\t"
        "str r4, [sp]\n\t"
        "sxtb16 r0, r1\n\t"
        "sxtb16 r1, r1, ror #8\n\t"
        "sxtb16 r2, r3\n\t"
        "sxtb16 r3, r3, ror #8\n\t"
        "2:\n\t"
        K8_OUTPUT K8_OUTPUT K8_OUTPUT K8_OUTPUT
        "tst r11, #256\n\t"
        "beq 2b\n\t"
        "ldrd r4, r5, [sp, #8]\n\t"
        "add ip, ip, r4\n\t"
        "cmp ip, r5\n\t"
        "bne 1b\n\t"
        "add sp, sp, #16\n\t"
        "pop {r4-r11, pc}\n\t");
}
#pragma GCC diagnostic pop
#undef K8_OUTPUT
#else
static void conv_1x1_k8_pixels(const int8_t *in, const int32_t *rec, int32_t skip,
                               int8_t *out, const int8_t *out_end)
{
    while (out != out_end) {
        const int32_t lo = th_read_s32(in);
        const int32_t hi = th_read_s32(in + 4);
        in += 8;
        const int32_t x[4] = {th_sxtb16(lo), th_sxtb16_ror8(lo), th_sxtb16(hi),
                              th_sxtb16_ror8(hi)};
        const int32_t *r = rec;
        int32_t last;
        do {
            int32_t acc = r[4];
            for (int32_t i = 0; i < 4; i++) {
                acc = th_smlad(x[i], r[i], acc);
            }
            const int32_t y = th_add_wrap(th_smmlar(acc, r[5], r[6]), acc >> 31);
            *out++ = (int8_t)th_ssat8(y >> (r[7] & 0xFF));
            last = r[7] & K8_LAST;
            r += K8_RECORD_WORDS;
        } while (!last);
        out += skip;
    }
}
#endif

/* True when the input and output tensors share bytes (in place). */
static int overlaps(const int8_t *input, const th_dims *input_dims, const int8_t *output,
                    const th_dims *output_dims)
{
    const int64_t in_bytes = (int64_t)input_dims->n * input_dims->h * input_dims->w *
                             input_dims->c;
    const int64_t out_bytes = (int64_t)output_dims->n * output_dims->h * output_dims->w *
                              output_dims->c;
    const uintptr_t a = (uintptr_t)input;
    const uintptr_t b = (uintptr_t)output;
    return a < b + (uintptr_t)out_bytes && b < a + (uintptr_t)in_bytes;
}

/* Stride 1, Cin == 8, Cout a multiple of 4, fast requantization without clamp. Chunks of
 * channels re-read the input after earlier chunks wrote the output: one chunk in place. */
static void __attribute__((noinline))
conv_1x1_k8(const th_conv_params *params, const th_per_channel_quant *quant,
            const th_dims *input_dims, const int8_t *input, const int8_t *filter,
            const int32_t *bias, const th_dims *output_dims, int8_t *output,
            const th_nn_out_stage *stage)
{
    int32_t rec[K8_CHUNK * K8_RECORD_WORDS];
    const int32_t cout = output_dims->c;
    const int32_t pixels = input_dims->n * input_dims->h * input_dims->w;
    for (int32_t c0 = 0; c0 < cout; c0 += K8_CHUNK) {
        const int32_t n = TH_MIN(K8_CHUNK, cout - c0);
        k8_records(rec, c0, n, filter, bias, quant, stage, params->input_offset, cout);
        conv_1x1_k8_pixels(input, rec, cout - n, output + c0,
                           output + c0 + (int64_t)pixels * cout);
    }
}

/* The few-channel path's scratch (layout above few_words). */
static void few_prepare(int32_t *ws, const int8_t *filter, const int32_t *bias,
                        const th_per_channel_quant *quant, const th_nn_out_stage *stage,
                        int32_t cin, int32_t cout)
{
    const int32_t nw = few_words(cin);
    const int32_t tail0 = 4 * (nw - 1); /* first input channel the last word adds */
    for (int32_t t0 = 0; t0 < cout; t0 += FEW_TILE) {
        const int32_t g = TH_MIN(FEW_TILE, cout - t0);
        for (int32_t i = 0; i < g; i++) {
            const int32_t c = t0 + i;
#if TH_NN_FILTER_INTERLEAVED /* th_filter_index, walked: blocks of TH_CONV_BLOCK (2) */
            const int32_t first = c & ~1;
            const int8_t *src = filter + (int64_t)first * 4 * nw + (c - first) * 4;
            const int32_t step = cout - first >= 2 ? 8 : 4;
#else
            const int8_t *src = filter + (int64_t)c * cin;
            const int32_t step = 4;
#endif
            int32_t *dst = ws + t0 * 2 * nw + 2 * i;
            const int32_t *dst_end = dst + 2 * g * (nw - 1);
            for (; dst != dst_end; src += step, dst += 2 * g) {
                const int32_t w = th_read_s32(src);
                const int32_t lo = th_sxtb16(w);
                const int32_t hi = th_sxtb16_ror8(w);
                dst[0] = th_sadd16(lo, lo);
                dst[1] = th_sadd16(hi, hi);
            }
            /* The last word: lanes 4 - r..3 hold the r taps from 4 (nw - 1) on. */
            const int32_t r = cin - tail0;
#if TH_NN_FILTER_INTERLEAVED /* the chunk is padded with zeros: shift it into place */
            const int32_t last = (int32_t)((uint32_t)th_read_s32(src) << (8 * (4 - r)));
#else
            uint32_t last = 0;
            for (int32_t k = cin - 1; k >= tail0; k--) {
                last = (last << 8) | (uint8_t)filter[th_filter_index(c, k, cin, cout,
                                                                     TH_CONV_BLOCK)];
            }
            last <<= 8 * (4 - r);
#endif
            const int32_t lo = th_sxtb16((int32_t)last);
            const int32_t hi = th_sxtb16_ror8((int32_t)last);
            dst[0] = th_sadd16(lo, lo);
            dst[1] = th_sadd16(hi, hi);
        }
    }
    int32_t *rq = ws + 2 * nw * cout;
    for (int32_t c = 0; c < cout; c++, rq += 4) {
        const th_fast_rq r = th_fast_rq_make(quant->multiplier[c], quant->shift[c],
                                             stage->output_offset);
        rq[0] = (int32_t)((uint32_t)(bias != NULL ? bias[c] : 0) << 1);
        rq[1] = r.multiplier;
        rq[2] = r.round_zp;
        rq[3] = r.e;
    }
}

/* True when the fast requantization is exact for every channel: th_fast_rq_ok per channel
 * with its own bias (|acc| <= Cin * 256 * 128 + |bias|; multipliers >= 0 checked at entry),
 * cheaper than th_nn_out_stage_init's bound over every channel. */
static int few_fast(const th_per_channel_quant *quant, const int32_t *bias, int32_t cin,
                    int32_t cout)
{
    const int64_t taps = (int64_t)cin * 256 * 128;
    if (taps >= (INT64_C(1) << 29)) {
        return 0;
    }
    const int32_t room = (int32_t)((INT64_C(1) << 29) - taps);
    for (int32_t c = 0; c < cout; c++) {
        const int32_t b = bias != NULL ? bias[c] : 0;
        if (!th_fast_shift_ok(quant->shift[c]) || b >= room || b <= -room) {
            return 0;
        }
    }
    return 1;
}

/* The output stage as locals (kept in registers across the MAC loops' asm). */
typedef struct {
    int32_t clamp, act_min, act_max;
} few_act;

/* One output channel from its doubled accumulator: th_fast_rq_apply2, then the clamp when
 * the activation range is narrower than int8's. */
TH_INLINE int8_t few_out(int32_t acc2, const int32_t *rq, few_act act)
{
    int32_t y = th_smmlar(acc2, rq[1], rq[2]);
    y = th_ssat8(th_add_wrap(y, acc2 >> 31) >> rq[3]);
    if (act.clamp) {
        y = th_clamp(y, act.act_min, act.act_max);
    }
    return (int8_t)y;
}

/* FEW_DOT(px, n): n >= 1 input words from px (4 bytes apart) into the accumulators a0..a3
 * of a tile of g channels (a constant after inlining), weights from wp on. */
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__) && defined(__GNUC__)
#define FEW_CH(a)                                     \
    "ldrd %[w0], %[w1], [%[w]], #8\n\t"               \
    "smlad %[" a "], %[xa], %[w0], %[" a "]\n\t"       \
    "smlad %[" a "], %[x], %[w1], %[" a "]\n\t"
#define FEW_LOOP(channels)                                                               \
    __asm__ volatile("1:\n\t"                                                            \
                     "ldr %[x], [%[px]], #4\n\t"                                         \
                     "sxtab16 %[xa], %[off], %[x]\n\t"                                   \
                     "sxtab16 %[x], %[off], %[x], ror #8\n\t" channels                   \
                     "subs %[n], %[n], #1\n\t"                                           \
                     "bne 1b\n\t"                                                        \
                     : [px] "+r"(p_), [w] "+r"(wp), [n] "+r"(n_), [a0] "+r"(a0),          \
                       [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "=&r"(x_),        \
                       [xa] "=&r"(xa_), [w0] "=&r"(w0_), [w1] "=&r"(w1_)                 \
                     : [off] "r"(offset2)                                                \
                     : "cc", "memory")
#define FEW_DOT(px, n)                                                                   \
    do {                                                                                 \
        const int8_t *p_ = (px);                                                         \
        int32_t n_ = (n), x_, xa_, w0_, w1_;                                             \
        if (g == 1) {                                                                    \
            FEW_LOOP(FEW_CH("a0"));                                                      \
        } else if (g == 2) {                                                             \
            FEW_LOOP(FEW_CH("a0") FEW_CH("a1"));                                         \
        } else if (g == 3) {                                                             \
            FEW_LOOP(FEW_CH("a0") FEW_CH("a1") FEW_CH("a2"));                            \
        } else {                                                                         \
            FEW_LOOP(FEW_CH("a0") FEW_CH("a1") FEW_CH("a2") FEW_CH("a3"));               \
        }                                                                                \
    } while (0)
#else
#define FEW_DOT(px, n)                                                                   \
    do {                                                                                 \
        const int8_t *p_ = (px);                                                         \
        for (int32_t n_ = (n); n_ > 0; n_--, p_ += 4, wp += 2 * g) {                     \
            const int32_t x_ = th_read_s32(p_);                                          \
            const int32_t xa_ = th_sxtab16(offset2, x_);                                 \
            const int32_t xb_ = th_sxtab16_ror8(offset2, x_);                            \
            a0 = th_smlad(xb_, wp[1], th_smlad(xa_, wp[0], a0));                         \
            if (g > 1) {                                                                 \
                a1 = th_smlad(xb_, wp[3], th_smlad(xa_, wp[2], a1));                     \
            }                                                                            \
            if (g > 2) {                                                                 \
                a2 = th_smlad(xb_, wp[5], th_smlad(xa_, wp[4], a2));                     \
            }                                                                            \
            if (g > 3) {                                                                 \
                a3 = th_smlad(xb_, wp[7], th_smlad(xa_, wp[6], a3));                     \
            }                                                                            \
        }                                                                                \
    } while (0)
#endif

/* g (1-4) channels of one pixel: nw - 1 words from px, the last one from px + cin - 4;
 * wp: the tile's weights, rq: its channels' constants. */
TH_INLINE void few_tile(const int8_t *px, int32_t nw, int32_t cin, const int32_t *wp,
                        const int32_t *rq, int32_t offset2, few_act act, int8_t *out,
                        const int32_t g)
{
    int32_t a0 = rq[0];
    int32_t a1 = g > 1 ? rq[4] : 0;
    int32_t a2 = g > 2 ? rq[8] : 0;
    int32_t a3 = g > 3 ? rq[12] : 0;
    if (nw > 1) {
        FEW_DOT(px, nw - 1);
    }
    FEW_DOT(px + cin - 4, 1);
    out[0] = few_out(a0, rq, act);
    if (g > 1) {
        out[1] = few_out(a1, rq + 4, act);
    }
    if (g > 2) {
        out[2] = few_out(a2, rq + 8, act);
    }
    if (g > 3) {
        out[3] = few_out(a3, rq + 12, act);
    }
}
#undef FEW_DOT

/* Every output pixel: `full` tiles of four channels, then one of g (1-4). A pixel's first
 * tiles go to a stash until the last has read the pixel: in place per rule (b). */
TH_INLINE void few_pixels(const int32_t *ws, const th_conv_params *params,
                          const th_dims *input_dims, const int8_t *input,
                          const th_dims *output_dims, int8_t *output,
                          const th_nn_out_stage *stage, const int32_t full, const int32_t g)
{
    const int32_t cin = input_dims->c;
    const int32_t cout = FEW_TILE * full + g;
    const int32_t nw = few_words(cin);
    const int32_t *rq = ws + 2 * nw * cout;
    const int32_t *wl = ws + 2 * nw * FEW_TILE * full; /* the last tile's weights */
    const int32_t *rql = rq + 4 * FEW_TILE * full;
    const int32_t offset2 = (int32_t)(((uint32_t)params->input_offset << 16) |
                                      ((uint32_t)params->input_offset & 0xFFFFu));
    const int32_t step_x = params->stride.w * cin;
    const int32_t row = input_dims->w * cin;
    const int32_t step_y = params->stride.h * row;
    const int32_t out_w = output_dims->w;
    const few_act act = {stage->clamp, stage->act_min, stage->act_max};
    int8_t *out = output;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_row = input + (int64_t)b * input_dims->h * row;
        for (int32_t y = 0; y < output_dims->h; y++, in_row += step_y) {
            const int8_t *px = in_row;
            for (int32_t x = 0; x < out_w; x++, px += step_x, out += cout) {
                if (full == 0) {
                    few_tile(px, nw, cin, ws, rq, offset2, act, out, g);
                    continue;
                }
                int32_t stash[FEW_MAX_COUT / FEW_TILE - 1];
                for (int32_t t = 0; t < full; t++) {
                    few_tile(px, nw, cin, ws + 2 * nw * FEW_TILE * t, rq + 4 * FEW_TILE * t,
                             offset2, act, (int8_t *)&stash[t], FEW_TILE);
                }
                few_tile(px, nw, cin, wl, rql, offset2, act, out + FEW_TILE * full, g);
                for (int32_t t = 0; t < full; t++) {
                    th_write_s32(out + FEW_TILE * t, stash[t]);
                }
            }
        }
    }
}

/* One function per Cout up to 8 (its own frame: one is live at a time), one per last tile
 * above (Cout 9-16: two or three full tiles). */
#define FEW_RUN(name, full, g)                                                           \
    static void __attribute__((noinline))                                                \
    name(const int32_t *ws, const th_conv_params *params, const th_dims *input_dims,      \
         const int8_t *input, const th_dims *output_dims, int8_t *output,                 \
         const th_nn_out_stage *stage)                                                    \
    {                                                                                     \
        few_pixels(ws, params, input_dims, input, output_dims, output, stage, full, g);   \
    }
FEW_RUN(few_run1, 0, 1)
FEW_RUN(few_run2, 0, 2)
FEW_RUN(few_run3, 0, 3)
FEW_RUN(few_run4, 0, 4)
FEW_RUN(few_run5, 1, 1)
FEW_RUN(few_run6, 1, 2)
FEW_RUN(few_run7, 1, 3)
FEW_RUN(few_run8, 1, 4)
#define FEW_WIDE_FULL ((output_dims->c - 1) / FEW_TILE)
FEW_RUN(few_wide1, FEW_WIDE_FULL, 1)
FEW_RUN(few_wide2, FEW_WIDE_FULL, 2)
FEW_RUN(few_wide3, FEW_WIDE_FULL, 3)
FEW_RUN(few_wide4, FEW_WIDE_FULL, 4)
#undef FEW_WIDE_FULL
#undef FEW_RUN

/* Cout 4 without a clamp (CONV1X1_FEW4): few_run4's pixels in one assembly loop that keeps
 * every register for the MACs (accumulators r0-r3, a tile's weights for one input word r4-r7
 * with two LDM, the word r8/r9, pixel r10, weights r11, offset r12, count lr) and its state
 * in a frame of its own, the biases first so that one LDM starts a pixel: 48 + 15 (Cin / 4)
 * instructions a pixel against few_run4's about 80 + 17 (Cin / 4) (9x5x31->5x3x4 s2: 216 ->
 * 153). Needs Cin >= 5 (a loop of nw - 1 >= 1 words, then the last at Cin - 4). */
typedef struct {
    int32_t bias2[FEW_TILE]; /* 0: doubled biases, the accumulators' start */
    const int8_t *px;        /* 16: this pixel */
    const int32_t *ws;       /* 20: the tile's weights, then its constants */
    int32_t words;           /* 24: nw - 1 */
    int32_t tail;            /* 28: Cin - 4 nw: the last word from the loop's end */
    int8_t *out;             /* 32 */
    int32_t advance;         /* 36: to the next pixel from the loop's end */
    int32_t x_left;          /* 40: pixels left in this row */
    int32_t out_w;           /* 44 */
    int32_t row_skip;        /* 48: to the next row from past the row's last pixel */
    int32_t rows;            /* 52: rows left */
    int32_t offset2;         /* 56: input offset in both halfwords */
} few4_frame;

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__) && defined(__GNUC__)
#define FEW4_WORD                                                                        \
    "sxtab16 r9, r12, r8\n\t"                                                            \
    "sxtab16 r8, r12, r8, ror #8\n\t"                                                    \
    "ldmia r11!, {r4, r5, r6, r7}\n\t"                                                   \
    "smlad r0, r9, r4, r0\n\t"                                                           \
    "smlad r0, r8, r5, r0\n\t"                                                           \
    "smlad r1, r9, r6, r1\n\t"                                                           \
    "smlad r1, r8, r7, r1\n\t"                                                           \
    "ldmia r11!, {r4, r5, r6, r7}\n\t"                                                   \
    "smlad r2, r9, r4, r2\n\t"                                                           \
    "smlad r2, r8, r5, r2\n\t"                                                           \
    "smlad r3, r9, r6, r3\n\t"                                                           \
    "smlad r3, r8, r7, r3\n\t"
/* record {2 bias (unused here), multiplier, round_zp, e}: th_fast_rq_apply2 */
#define FEW4_OUT(acc)                                                                    \
    "ldmia r11!, {r4, r5, r6, r7}\n\t"                                                   \
    "smmlar r4, " acc ", r5, r6\n\t"                                                     \
    "add r4, r4, " acc ", asr #31\n\t"                                                   \
    "asr r4, r4, r7\n\t"                                                                 \
    "ssat r4, #8, r4\n\t"                                                                \
    "strb r4, [r9], #1\n\t"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline)) few4_run(const few4_frame *f)
{
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #60\n\t"
        "ldmia r0!, {r1, r2, r3, r4, r5, r6, r7, r8}\n\t"
        "stmia sp, {r1, r2, r3, r4, r5, r6, r7, r8}\n\t"
        "ldmia r0, {r1, r2, r3, r4, r5, r6, r12}\n\t"
        "add r0, sp, #32\n\t"
        "stmia r0, {r1, r2, r3, r4, r5, r6}\n\t"
        "1:\n\t"
        "ldmia sp, {r0, r1, r2, r3, r10, r11, lr}\n\t"
        "2:\n\t"
        "ldr r8, [r10], #4\n\t" FEW4_WORD
        "subs lr, lr, #1\n\t"
        "bne 2b\n\t"
        "ldr lr, [sp, #28]\n\t"
        "ldr r8, [r10, lr]\n\t" FEW4_WORD
        "ldr r9, [sp, #32]\n\t"
        FEW4_OUT("r0") FEW4_OUT("r1") FEW4_OUT("r2") FEW4_OUT("r3")
        "str r9, [sp, #32]\n\t"
        "ldrd r4, r5, [sp, #36]\n\t"
        "add r10, r10, r4\n\t"
        "str r10, [sp, #16]\n\t"
        "subs r5, r5, #1\n\t"
        "str r5, [sp, #40]\n\t"
        "bne 1b\n\t"
        /* the row's end */
        "ldrd r4, r5, [sp, #44]\n\t"
        "add r10, r10, r5\n\t"
        "str r10, [sp, #16]\n\t"
        "str r4, [sp, #40]\n\t"
        "ldr r6, [sp, #52]\n\t"
        "subs r6, r6, #1\n\t"
        "str r6, [sp, #52]\n\t"
        "bne 1b\n\t"
        "add sp, sp, #60\n\t"
        "pop {r4-r11, pc}\n\t");
}
#pragma GCC diagnostic pop
#undef FEW4_WORD
#undef FEW4_OUT
#endif

/* Cout 4: CONV1X1_FEW4 where it applies, else few_run4 (which also models the assembly in
 * the emulated DSP build and the path recording: the same choice, the same results). A
 * function of its own so that conv_1x1_few's code for the other Cout stays as it was. */
static void __attribute__((noinline))
few_cout4(const int32_t *ws, const th_conv_params *params, const th_dims *input_dims,
          const int8_t *input, const th_dims *output_dims, int8_t *output,
          const th_nn_out_stage *stage)
{
    if (stage->clamp || input_dims->c < 5 || !TH_NN_PATH(CONV1X1_FEW4)) {
        few_run4(ws, params, input_dims, input, output_dims, output, stage);
        return;
    }
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__) && defined(__GNUC__)
    const int32_t cin = input_dims->c;
    const int32_t nw = few_words(cin);
    const int32_t *rq = ws + 2 * nw * FEW_TILE;
    const int32_t step_x = params->stride.w * cin;
    const int32_t row = input_dims->w * cin;
    few4_frame f;
    for (int32_t c = 0; c < FEW_TILE; c++) {
        f.bias2[c] = rq[4 * c];
    }
    f.ws = ws;
    f.words = nw - 1;
    f.tail = cin - 4 * nw;
    f.advance = step_x - 4 * (nw - 1);
    f.x_left = output_dims->w;
    f.out_w = output_dims->w;
    f.row_skip = params->stride.h * row - output_dims->w * step_x;
    f.offset2 = (int32_t)(((uint32_t)params->input_offset << 16) |
                          ((uint32_t)params->input_offset & 0xFFFFu));
    for (int32_t b = 0; b < input_dims->n; b++) {
        f.px = input + (int64_t)b * input_dims->h * row;
        f.out = output + (int64_t)b * output_dims->h * output_dims->w * FEW_TILE;
        f.rows = output_dims->h;
        few4_run(&f);
    }
#else
    few_run4(ws, params, input_dims, input, output_dims, output, stage); /* the asm's model */
#endif
}

/* Cout <= FEW_MAX_COUT, Cin >= 4, any stride, fast requantization for every channel; the
 * scratch of few_scratch_bytes. */
static void __attribute__((noinline))
conv_1x1_few(int32_t *ws, const th_conv_params *params, const th_per_channel_quant *quant,
             const th_dims *input_dims, const int8_t *input, const int8_t *filter,
             const int32_t *bias, const th_dims *output_dims, int8_t *output,
             const th_nn_out_stage *stage)
{
    few_prepare(ws, filter, bias, quant, stage, input_dims->c, output_dims->c);
    if (output_dims->c > FEW_SMALL_COUT) {
        if (TH_NN_PATH(CONV1X1_FEW16)) { /* (the caller checked it) */
            switch (output_dims->c & 3) {
            case 1:
                few_wide1(ws, params, input_dims, input, output_dims, output, stage);
                break;
            case 2:
                few_wide2(ws, params, input_dims, input, output_dims, output, stage);
                break;
            case 3:
                few_wide3(ws, params, input_dims, input, output_dims, output, stage);
                break;
            default:
                few_wide4(ws, params, input_dims, input, output_dims, output, stage);
                break;
            }
        }
        return;
    }
#define FEW_CASE(c)                                                                      \
    case c:                                                                              \
        few_run##c(ws, params, input_dims, input, output_dims, output, stage);           \
        break
    switch (output_dims->c) {
        FEW_CASE(1);
        FEW_CASE(2);
        FEW_CASE(3);
    case 4:
        few_cout4(ws, params, input_dims, input, output_dims, output, stage);
        break;
        FEW_CASE(5);
        FEW_CASE(6);
        FEW_CASE(7);
    default:
        few_run8(ws, params, input_dims, input, output_dims, output, stage);
        break;
    }
#undef FEW_CASE
}

/* ---- one output pixel -------------------------------------------------------------------
 * Each weight is used once: the pixel is widened (with the input offset) into scratch, the
 * int8 weights are read straight from the interleaved filter (the last chunk is padded with
 * zeros, so the last input word is the pixel's last r bytes shifted down): four channels
 * (two blocks) per widened input word, then the last 1-3 channels in one pass (a block of
 * two and/or the single last channel of an odd count). Every channel is requantized
 * exactly, so the path needs no output stage: it runs before th_conv_1x1_s8 prepares one.
 * The fast form is exact for |acc| < 2^29 (th_fast_rq_ok), so with the accumulator itself
 * in hand that is the test, not a bound from the bias (one compare instead of loading the
 * bias and the room: 40 -> 26 instructions a channel, 2x1x103->23 s2). */
typedef struct {
    int32_t output_offset, act_min, act_max;
    int32_t zp2; /* 2 * output_offset + 1 */
    int32_t clamp; /* activation range narrower than int8's */
} one_stage;

TH_INLINE int8_t one_out(int32_t acc, int32_t m, int32_t shift, one_stage st)
{
    int32_t y;
    if (th_fast_shift_ok(shift) && (uint32_t)acc + (UINT32_C(1) << 29) < (UINT32_C(1) << 30)) {
        /* th_fast_rq_make with its round_zp, 2^(e - 1) + zp * 2^e, as (2 zp + 1) << (e - 1) */
        th_fast_rq rq;
        rq.multiplier = m;
        rq.e = -shift;
        rq.round_zp = (int32_t)((uint32_t)st.zp2 << (-1 - shift));
        y = th_fast_rq_apply(acc, &rq);
    } else {
        y = th_requantize_s8(acc, m, shift, st.output_offset);
    }
    if (st.clamp) {
        y = th_clamp(y, st.act_min, st.act_max);
    }
    return (int8_t)y;
}

/* n channels (1-4, a constant after inlining) from their accumulators a: the first two at
 * w (8 bytes per input word, 4 with n == 1), with n == 4 two more at w2 (8 bytes a word),
 * with n == 3 the single last channel of an odd count at w2 (4 bytes a word). */
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__) && defined(__GNUC__)
#define ONE_CH(a, w)                                           \
    "sxtb16 %[t], %[" w "]\n\t"                                \
    "smlad %[" a "], %[x0], %[t], %[" a "]\n\t"                 \
    "sxtb16 %[t], %[" w "], ror #8\n\t"                        \
    "smlad %[" a "], %[x1], %[t], %[" a "]\n\t"
#define ONE_X "ldrd %[x0], %[x1], [%[x]], #8\n\t"
#define ONE_PAIR(a, b, w) "ldrd %[w0], %[w1], [%[" w "]], #8\n\t" ONE_CH(a, "w0") ONE_CH(b, "w1")
#define ONE_SINGLE(a, w) "ldr %[w0], [%[" w "]], #4\n\t" ONE_CH(a, "w0")
#endif
TH_INLINE void one_dot(int32_t *a, const int32_t *cols, const int32_t *cols_end,
                       const int8_t *w, const int8_t *w2, const int32_t n)
{
    int32_t a0 = a[0];
    int32_t a1 = n > 1 ? a[1] : 0;
    int32_t a2 = n > 2 ? a[2] : 0;
    int32_t a3 = n > 3 ? a[3] : 0;
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__) && defined(__GNUC__)
    const int32_t *x = cols;
    int32_t x0, x1, w0, w1, t;
#define ONE_LOOP(body, stop)                                                             \
    __asm__ volatile("1:\n\t" body "cmp %[x], %[end]\n\t"                                \
                     "bne 1b\n\t"                                                         \
                     : [x] "+r"(x), [w] "+r"(w), [w2] "+r"(w2), [a0] "+r"(a0),            \
                       [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x0] "=&r"(x0),       \
                       [x1] "=&r"(x1), [w0] "=&r"(w0), [w1] "=&r"(w1), [t] "=&r"(t)       \
                     : [end] "r"(stop)                                                   \
                     : "cc", "memory")
/* an odd word count: one word, then two a pass */
#define ONE_WORDS(word)                                                                  \
    do {                                                                                 \
        if (((cols_end - cols) & 2) != 0) {                                              \
            ONE_LOOP(word, cols + 2);                                                    \
        }                                                                                \
        if (x != cols_end) {                                                             \
            ONE_LOOP(word word, cols_end);                                               \
        }                                                                                \
    } while (0)
    if (n == 4) {
        ONE_WORDS(ONE_X ONE_PAIR("a0", "a1", "w") ONE_PAIR("a2", "a3", "w2"));
    } else if (n == 3) {
        ONE_WORDS(ONE_X ONE_PAIR("a0", "a1", "w") ONE_SINGLE("a2", "w2"));
    } else if (n == 2) {
        ONE_WORDS(ONE_X ONE_PAIR("a0", "a1", "w"));
    } else {
        ONE_WORDS(ONE_X ONE_SINGLE("a0", "w"));
    }
#undef ONE_WORDS
#undef ONE_LOOP
#else
    for (const int32_t *x = cols; x != cols_end; x += 2) {
        const int32_t x0 = x[0];
        const int32_t x1 = x[1];
        const int32_t w0 = th_read_s32(w);
        a0 = th_smlad(x1, th_sxtb16_ror8(w0), th_smlad(x0, th_sxtb16(w0), a0));
        if (n > 1) {
            const int32_t w1 = th_read_s32(w + 4);
            a1 = th_smlad(x1, th_sxtb16_ror8(w1), th_smlad(x0, th_sxtb16(w1), a1));
        }
        w += n > 1 ? 8 : 4;
        if (n > 2) {
            const int32_t w20 = th_read_s32(w2);
            a2 = th_smlad(x1, th_sxtb16_ror8(w20), th_smlad(x0, th_sxtb16(w20), a2));
        }
        if (n > 3) {
            const int32_t w21 = th_read_s32(w2 + 4);
            a3 = th_smlad(x1, th_sxtb16_ror8(w21), th_smlad(x0, th_sxtb16(w21), a3));
        }
        if (n > 2) {
            w2 += n > 3 ? 8 : 4;
        }
    }
#endif
    a[0] = a0;
    if (n > 1) {
        a[1] = a1;
    }
    if (n > 2) {
        a[2] = a2;
    }
    if (n > 3) {
        a[3] = a3;
    }
}
#undef ONE_CH
#undef ONE_X
#undef ONE_PAIR
#undef ONE_SINGLE

/* n channels (1-4) from c on: their accumulators (biases first), then their outputs;
 * mult, shift: the layer's, bias NULL or the layer's (straight-line: a loop over a[] cost
 * 5 instructions a channel). */
TH_INLINE void one_channels(const int32_t *cols, const int32_t *cols_end, const int8_t *w,
                            int32_t block, const int32_t *mult, const int32_t *shift,
                            const int32_t *bias, one_stage st, int32_t c, int8_t *output,
                            const int32_t n)
{
    int32_t a[4] = {0, 0, 0, 0};
    if (bias != NULL) {
        for (int32_t i = 0; i < n; i++) {
            a[i] = bias[c + i];
        }
    }
    one_dot(a, cols, cols_end, w, n > 2 ? w + block : NULL, n);
    output[c] = one_out(a[0], mult[c], shift[c], st);
    if (n > 1) {
        output[c + 1] = one_out(a[1], mult[c + 1], shift[c + 1], st);
    }
    if (n > 2) {
        output[c + 2] = one_out(a[2], mult[c + 2], shift[c + 2], st);
    }
    if (n > 3) {
        output[c + 3] = one_out(a[3], mult[c + 3], shift[c + 3], st);
    }
}

/* N == OH == OW == 1, Cin >= 4, interleaved filter; scratch of 8 * ceil(Cin / 4) bytes (the
 * ordinary scratch has more). The pixel is read whole before any output is written: in
 * place per rules (b) and (c). */
static void __attribute__((noinline))
conv_1x1_one(int32_t *cols, const th_conv_params *params, const th_per_channel_quant *quant,
             const th_dims *input_dims, const int8_t *input, const int8_t *filter,
             const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    const int32_t cin = input_dims->c;
    const int32_t cout = output_dims->c;
    const int32_t nw = few_words(cin);
    const int32_t offset2 = (int32_t)(((uint32_t)params->input_offset << 16) |
                                      ((uint32_t)params->input_offset & 0xFFFFu));
    const int32_t *cols_end = cols + 2 * nw;
    int32_t *d = cols;
    for (const int8_t *px = input; d != cols_end - 2; px += 4, d += 2) {
        const int32_t x = th_read_s32(px);
        d[0] = th_sxtab16(offset2, x);
        d[1] = th_sxtab16_ror8(offset2, x);
    }
    const uint32_t last = (uint32_t)th_read_s32(input + cin - 4) >> (8 * (4 * nw - cin));
    d[0] = th_sxtab16(offset2, (int32_t)last);
    d[1] = th_sxtab16_ror8(offset2, (int32_t)last);
    const int32_t block = 8 * nw; /* bytes of a block of two channels */
    const one_stage st = {params->output_offset, params->activation.min,
                          params->activation.max, 2 * params->output_offset + 1,
                          params->activation.min > -128 || params->activation.max < 127};
    const int32_t *mult = quant->multiplier; /* (locals: the asm clobbers memory) */
    const int32_t *shift = quant->shift;
    int32_t c = 0;
    for (; c + 3 < cout; c += 4) {
        one_channels(cols, cols_end, filter + (int64_t)c * 4 * nw, block, mult, shift, bias, st,
                     c, output, 4);
    }
    const int8_t *w = filter + (int64_t)c * 4 * nw;
    switch (cout - c) {
    case 3:
        one_channels(cols, cols_end, w, block, mult, shift, bias, st, c, output, 3);
        break;
    case 2:
        one_channels(cols, cols_end, w, block, mult, shift, bias, st, c, output, 2);
        break;
    case 1:
        one_channels(cols, cols_end, w, block, mult, shift, bias, st, c, output, 1);
        break;
    default:
        break;
    }
}

/* Cin not a multiple of 4: th_nn_im2col_s16 per pixel, a table for Cout <= 17. */
static void __attribute__((noinline))
conv_1x1_im2col(int32_t *cols, const th_conv_params *params, const th_per_channel_quant *quant,
                const th_dims *input_dims, const int8_t *input, const th_dims *filter_dims,
                const int8_t *filter, const int32_t *bias, const th_dims *output_dims,
                int8_t *output, const th_nn_out_stage *stage)
{
    const int32_t cin = input_dims->c;
    const int32_t cout = output_dims->c;
    const int32_t out_w = output_dims->w;
    const int32_t pixels = output_dims->h * out_w;
    th_nn_rq_pair rq_buf[TH_NN_RQ_PAIRS]; /* 256 bytes of stack */
    const th_nn_rq_pair *tab = th_nn_rq_table(rq_buf, TH_NN_RQ_PAIRS, quant, bias, stage, cout);
    const int32_t kp = th_round_up4(cin);
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + (int64_t)b * input_dims->h * input_dims->w * cin;
        int8_t *out_b = output + (int64_t)b * pixels * cout;
        int32_t p = 0;
        for (; p + 1 < pixels; p += 2) {
            th_nn_im2col_s16(cols, 4, in_b, input_dims, params, filter_dims, p / out_w,
                             p % out_w);
            th_nn_im2col_s16(cols + 2, 4, in_b, input_dims, params, filter_dims,
                             (p + 1) / out_w, (p + 1) % out_w);
            th_nn_mat_mult_s8_s16_tab(cols, 2, kp, filter, bias, quant, stage, tab, cout,
                                      out_b + (int64_t)p * cout,
                                      out_b + (int64_t)(p + 1) * cout);
        }
        if (p < pixels) {
            th_nn_im2col_s16(cols, 2, in_b, input_dims, params, filter_dims, p / out_w,
                             p % out_w);
            th_nn_mat_mult_s8_s16(cols, 1, kp, filter, bias, quant, stage, cout,
                                  out_b + (int64_t)p * cout, NULL);
        }
    }
}
#endif

th_status th_conv_1x1_s8(const th_context *ctx, const th_conv_params *params,
                         const th_per_channel_quant *quant, const th_dims *input_dims,
                         const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                         const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    th_status status = th_nn_check_conv(params, quant, input_dims, input, filter_dims, filter,
                                        output_dims, output, 0);
    if (status != TH_OK) {
        return status;
    }
    if (filter_dims->h != 1 || filter_dims->w != 1 || params->padding.h != 0 ||
        params->padding.w != 0 || (output_dims->h - 1) * params->stride.h >= input_dims->h ||
        (output_dims->w - 1) * params->stride.w >= input_dims->w) {
        return TH_ERR_UNSUPPORTED;
    }
    status = th_nn_check_scratch(
        ctx, th_conv_1x1_s8_scratch_size(params, input_dims, filter_dims, output_dims));
    if (status != TH_OK) {
        return status;
    }

    const int32_t cin = input_dims->c;
    const int32_t cout = output_dims->c;

#if TH_NN_MVE
    (void)cin;
    (void)cout;
    th_nn_mve_conv_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                      output_dims, output);
#elif TH_NN_HAS_DSP
    if (TH_NN_FILTER_INTERLEAVED && input_dims->n * output_dims->h * output_dims->w == 1 &&
        cin >= 4 && TH_NN_PATH(CONV1X1_ONE)) {
        conv_1x1_one((int32_t *)ctx->buf, params, quant, input_dims, input, filter, bias,
                     output_dims, output);
        return TH_OK;
    }
    th_nn_out_stage stage;
    const int32_t few = few_scratch_bytes(input_dims, output_dims);
    if (few > 0 && ctx->size >= few && few_fast(quant, bias, cin, cout) &&
        TH_NN_PATH(CONV1X1_FEW) && (cout <= FEW_SMALL_COUT || TH_NN_PATH(CONV1X1_FEW16))) {
        /* the stage's fields only: few_fast checked the channels */
        th_nn_out_stage_init(&stage, quant, 0, params->output_offset, &params->activation, 0);
        conv_1x1_few((int32_t *)ctx->buf, params, quant, input_dims, input, filter, bias,
                     output_dims, output, &stage);
        return TH_OK;
    }
    th_nn_out_stage_init(&stage, quant, cout, params->output_offset, &params->activation,
                         th_acc_bound(cin, 128, bias, cout));
    th_nn_out_stage_mixed(&stage, quant, bias, cout, (int64_t)cin * 256 * 128);
    if (th_nn_conv_direct_applies(input_dims, filter_dims, output_dims) &&
        TH_NN_PATH(CONV_DIRECT)) {
        th_nn_conv_direct_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                             output_dims, output);
        return TH_OK;
    }
    int32_t *cols = (int32_t *)ctx->buf;
    const int dense = dense_shape(params, input_dims, output_dims);
    if (cin == 8 && dense && (cout & 3) == 0 && stage.fast && !stage.clamp &&
        (cout <= K8_CHUNK || !overlaps(input, input_dims, output, output_dims)) &&
        TH_NN_PATH(CONV1X1_K8)) {
        conv_1x1_k8(params, quant, input_dims, input, filter, bias, output_dims, output,
                    &stage);
        return TH_OK;
    }
    if ((cin & 3) == 0 && TH_NN_PATH(CONV1X1_PAIRS)) {
        if (th_nn_rq_table_mixed_applies(cout, bias, &stage, cout) && TH_NN_PATH(CONV1X1_TAB)) {
            conv_1x1_pairs_tab(cols, params, quant, input_dims, input, filter, bias,
                               output_dims, output, &stage);
        } else {
            conv_1x1_pairs(cols, params, quant, input_dims, input, filter, bias, output_dims,
                           output, &stage, NULL, NULL);
        }
        return TH_OK;
    }
    conv_1x1_im2col(cols, params, quant, input_dims, input, filter_dims, filter, bias,
                    output_dims, output, &stage);
#else
    const int32_t out_w = output_dims->w;
    const int32_t pixels = output_dims->h * out_w;
    int8_t *pixel = (int8_t *)ctx->buf;
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + (int64_t)b * input_dims->h * input_dims->w * cin;
        int8_t *out_b = output + (int64_t)b * pixels * cout;
        for (int32_t p = 0; p < pixels; p++) {
            const int32_t y = (p / out_w) * params->stride.h;
            const int32_t x = (p % out_w) * params->stride.w;
            memcpy(pixel, in_b + ((int64_t)y * input_dims->w + x) * cin, (size_t)cin);
            for (int32_t oc = 0; oc < cout; oc++) {
                int32_t acc = bias != NULL ? bias[oc] : 0;
                for (int32_t ic = 0; ic < cin; ic++) {
                    const int32_t w = filter[th_filter_index(oc, ic, cin, cout, TH_CONV_BLOCK)];
                    acc = th_add_wrap(acc, (pixel[ic] + params->input_offset) * w);
                }
                const int32_t rq = th_requantize(acc, quant->multiplier[oc], quant->shift[oc]);
                out_b[(int64_t)p * cout + oc] = th_out_s8(
                    rq, params->output_offset, params->activation.min, params->activation.max);
            }
        }
    }
#endif
    return TH_OK;
}

th_status th_conv_1x1_s8_w16(const th_context *ctx, const th_conv_params *params,
                             const th_per_channel_quant *quant, const th_dims *input_dims,
                             const int8_t *input, const th_dims *filter_dims,
                             const int16_t *filter, const int32_t *bias,
                             const th_dims *output_dims, int8_t *output)
{
#if TH_NN_HAS_DSP && !TH_NN_MVE
    /* th_nn_check_conv looks at the filter pointer only (never NULL here). */
    th_status status = th_nn_check_conv(params, quant, input_dims, input, filter_dims,
                                        (const int8_t *)filter, output_dims, output, 0);
    if (status != TH_OK) {
        return status;
    }
    if (filter == NULL || /* (checked above; said again so the int8 loops drop out) */
        filter_dims->h != 1 || filter_dims->w != 1 || params->padding.h != 0 ||
        params->padding.w != 0 || !dense_shape(params, input_dims, output_dims)) {
        return TH_ERR_UNSUPPORTED;
    }
    status = th_nn_check_scratch(
        ctx, th_conv_1x1_s8_scratch_size(params, input_dims, filter_dims, output_dims));
    if (status != TH_OK) {
        return status;
    }
    const int32_t cin = input_dims->c;
    const int32_t cout = output_dims->c;
    th_nn_out_stage stage;
    th_nn_out_stage_init(&stage, quant, cout, params->output_offset, &params->activation,
                         th_acc_bound(cin, 128, bias, cout));
    th_nn_out_stage_mixed(&stage, quant, bias, cout, (int64_t)cin * 256 * 128);
    int32_t *cols = (int32_t *)ctx->buf;
    if (th_nn_rq_table_mixed_applies(cout, bias, &stage, cout)) {
        tab_body(cols, params, quant, input_dims, input, NULL, bias, output_dims, output,
                 &stage, filter);
    } else {
        conv_1x1_pairs_w16(cols, params, quant, input_dims, input, filter, bias, output_dims,
                           output, &stage, NULL, NULL);
    }
    return TH_OK;
#else
    (void)ctx;
    (void)params;
    (void)quant;
    (void)input_dims;
    (void)input;
    (void)filter_dims;
    (void)filter;
    (void)bias;
    (void)output_dims;
    (void)output;
    return TH_ERR_UNSUPPORTED; /* the host chooses int16 weights for DSP builds only */
#endif
}
