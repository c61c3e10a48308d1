/* th_dw_conv_lines_s8: the general depthwise's channel-inner path (ch_mult 1, 4 or more
 * channels, at most 8 taps), for 1-D tensors and short lines, where the rows path's fixed
 * costs per channel and per row (staging, records, row calls) are spread over few outputs.
 *
 * HWC order as stored: for each output pixel, the channels in blocks of four; per block, each
 * valid tap's input word (four channels) is sign-extended with the input offset added
 * (SXTAB16, two lanes a word) and multiplied per channel (SMLABB / SMLATT) by the doubled
 * weights, then four outputs are requantized (the fast exact form of th_nn_support.h on the
 * doubled accumulator) and stored. Taps in the padding are skipped (the window is clipped per
 * pixel), so the offset needs no folding. The filter is oriented so that the axis with more
 * taps (B) is the inner loop. C % 4 channels: the blocks start at channel C % 4 and one more
 * block covers channels 0-3 (its outputs C % 4 .. 3 are rewritten with the same values).
 *
 * Scratch (th_dw_lines_scratch): per block one record, widened once per call in the order the
 * loop reads it: 2 bias (4 words), per tap (a, b) at a KB + b two words of doubled weight
 * pairs (channels 0, 2 and 1, 3), then (multiplier, 2^(e-1) + zp 2^e, e) per channel.
 * The per-pixel block loop is Thumb-2 assembly on DSP cores (the same loop in C with modelled
 * DSP instructions in host builds): one unrolled variant per tap count for pixels whose
 * one-row window is whole, one general loop over clipped windows. */
#include <stddef.h>

#include "th_dw_lines.h"
#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP && !TH_NN_MVE

#define DW_LINES_MAX_TAPS 8
#define DW_LINES_MAX_SCRATCH 16384

/* What the block loops read (byte offsets fixed: the assembly below). */
typedef struct {
    int32_t step;    /* 0: input bytes between taps along B */
    int32_t nb;      /* 4: taps per row (B) */
    int32_t na;      /* 8: rows (A), at least 1 */
    int32_t rowstep; /* 12: input bytes from the end of a row's taps to the next row's first */
    int32_t wpre;    /* 16: weight bytes skipped before the first valid tap */
    int32_t wrow;    /* 20: weight bytes skipped between rows */
    int32_t wpost;   /* 24: weight bytes skipped after the last valid tap */
    int32_t xback;   /* 28: input bytes the taps advance, less 4 */
    int32_t off;     /* 32: input offset in both halfwords */
} dw_lines_job;

/* Record words of one block. */
TH_INLINE int32_t lines_record_words(int32_t taps)
{
    return 4 + 2 * taps + 12;
}

/* The oriented frame: B (inner taps) is w unless the filter has more rows than columns. */
TH_INLINE int32_t lines_transposed(const th_dims *filter_dims)
{
    return filter_dims->h > filter_dims->w;
}

int32_t th_dw_lines_scratch(const th_dw_conv_params *params, const th_dims *input_dims,
                            const th_dims *filter_dims, const th_dims *output_dims)
{
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL ||
        params->ch_mult != 1 || input_dims->c < 4 || filter_dims->h <= 0 ||
        filter_dims->w <= 0 || output_dims->h <= 0 || output_dims->w <= 0) {
        return 0;
    }
    const int32_t taps = filter_dims->h * filter_dims->w;
    if (taps > DW_LINES_MAX_TAPS) {
        return 0;
    }
    const int32_t c = input_dims->c;
    const int32_t blocks = (c >> 2) + ((c & 3) != 0);
    const int32_t bytes = blocks * 4 * lines_record_words(taps);
    if (bytes > DW_LINES_MAX_SCRATCH) {
        return 0;
    }
    /* Estimated instructions, this path against the rows path (per call; plan/scratch.py
     * dw_lines_scratch states the same, fit on the issue-14 sweep): here 8 per tap and 31 per
     * block of four channels, 100 per pixel (300 with a channel tail), 75 per channel for the
     * records; the rows path (9 kp + 22) / 4 per output, 3 KA SB staged values per output,
     * 130 per output row, phase and channel, 100 per channel. This path where it is estimated
     * 10% faster. */
    const int32_t tr = lines_transposed(filter_dims);
    const int32_t ka = tr ? filter_dims->w : filter_dims->h;
    const int32_t sb = tr ? params->stride.h : params->stride.w;
    const int32_t db = tr ? params->dilation.h : params->dilation.w;
    const int32_t out_a = tr ? output_dims->w : output_dims->h;
    int32_t g = sb, r = db; /* phases: db / gcd(sb, db) */
    while (r != 0) {
        const int32_t t = g % r;
        g = r;
        r = t;
    }
    const int64_t pixels = (int64_t)output_dims->h * output_dims->w;
    const int64_t lines =
        4 * (pixels * (blocks * (8 * taps + 31) + ((c & 3) != 0 ? 300 : 100)) + 75 * c);
    const int64_t kp = (taps + 1) / 2;
    const int64_t rows = (int64_t)c * (pixels * (9 * kp + 22) + 12 * pixels * ka * sb +
                                       4 * 130 * (int64_t)out_a * (db / g) + 400);
    return 11 * lines < 10 * rows ? bytes : 0;
}

#else

int32_t th_dw_lines_scratch(const th_dw_conv_params *params, const th_dims *input_dims,
                            const th_dims *filter_dims, const th_dims *output_dims)
{
    (void)params;
    (void)input_dims;
    (void)filter_dims;
    (void)output_dims;
    return 0;
}
#endif

/* The assembly loops are left out of builds that do not keep the path (th_nn_paths.h). */
#define DW_LINES_RUNS (TH_NN_HAS_DSP && !TH_NN_MVE && (!TH_NN_DSP_NATIVE || TH_NN_KEEP_DW_LINES))

#if DW_LINES_RUNS
/* Valid taps of one axis for output coordinate o: the first (*k0) and the count. */
TH_INLINE int32_t lines_clip(int32_t o, int32_t s, int32_t d, int32_t pad, int32_t n, int32_t k,
                             int32_t *k0)
{
    const int32_t start = o * s - pad;
    if (start >= 0 && start + (k - 1) * d < n) {
        *k0 = 0;
        return k;
    }
    const int32_t first = start < 0 ? (-start + d - 1) / d : 0;
    const int32_t end = n - start > 0 ? TH_MIN((n - start + d - 1) / d, k) : 0;
    *k0 = first;
    return end > first ? end - first : 0;
}

#if TH_NN_DSP_NATIVE
/* Thumb-2 block loops: (job, x, out, rec, blocks). x and out: the pixel's first block (first
 * valid tap); rec: its record; blocks records follow, each block four channels on. */
#define DW_LINES_LOOP(name)                                                                  \
    void name(const dw_lines_job *job, const int8_t *x, int8_t *out, const int32_t *rec,     \
              int32_t blocks)
DW_LINES_LOOP(th_dw_lines_gen);
DW_LINES_LOOP(th_dw_lines_k1);
DW_LINES_LOOP(th_dw_lines_k2);
DW_LINES_LOOP(th_dw_lines_k3);
DW_LINES_LOOP(th_dw_lines_k4);
DW_LINES_LOOP(th_dw_lines_k5);
DW_LINES_LOOP(th_dw_lines_k6);
DW_LINES_LOOP(th_dw_lines_k7);
DW_LINES_LOOP(th_dw_lines_k8);
#undef DW_LINES_LOOP

/* One tap, input at ADDR: r1-r4 += lanes 0, 1, 2, 3 of (x + off) times the weights at r6. */
__asm__(
    "    .syntax unified\n"
    "    .thumb\n"
    "    .macro DWL_TAP addr:vararg\n"
    "    ldr r8, \\addr\n"
    "    sxtab16 r9, lr, r8\n"
    "    sxtab16 r8, lr, r8, ror #8\n"
    "    ldrd r10, r11, [r6], #8\n"
    "    smlabb r1, r9, r10, r1\n"
    "    smlatt r3, r9, r10, r3\n"
    "    smlabb r2, r8, r11, r2\n"
    "    smlatt r4, r8, r11, r4\n"
    "    .endm\n"
    /* Requantize accumulator ACC (doubled) with the next (mult, rzp, e) at r6, store at O. */
    "    .macro DWL_RQ acc, o\n"
    "    ldmia r6!, {r8, r9, r11}\n"
    "    smmlar r9, \\acc, r8, r9\n"
    "    add r9, r9, \\acc, asr #31\n"
    "    asr r9, r9, r11\n"
    "    ssat r9, #8, r9\n"
    "    strb r9, [\\o], #1\n"
    "    .endm\n"
    "    .macro DWL_RQ4 o=r10\n"
    "    .ifc \\o, r10\n"
    "    ldr r10, [sp, #0]\n"
    "    .endif\n"
    "    DWL_RQ r1, \\o\n"
    "    DWL_RQ r2, \\o\n"
    "    DWL_RQ r3, \\o\n"
    "    DWL_RQ r4, \\o\n"
    "    .ifc \\o, r10\n"
    "    str r10, [sp, #0]\n"
    "    .endif\n"
    "    .endm\n"
    /* Whole one-row window of K taps: tap t at x + t step (r12 step, r7 3 step, r0 x + 4
     * step). K <= 5: r0 counts the blocks; K <= 3: r7 is the output pointer. */
    "    .macro DWL_FULL k\n"
    "    .pushsection .text.th_dw_lines_k\\k,\"ax\",%progbits\n"
    "    .global th_dw_lines_k\\k\n"
    "    .hidden th_dw_lines_k\\k\n"
    "    .type th_dw_lines_k\\k, %function\n"
    "    .thumb_func\n"
    "    .p2align 2\n"
    "th_dw_lines_k\\k:\n"
    "    push {r4-r11, lr}\n"
    "    ldr r7, [sp, #36]\n"
    "    sub sp, sp, #8\n"
    "    mov r5, r1\n"
    "    mov r6, r3\n"
    "    ldr r12, [r0, #0]\n"
    "    ldr lr, [r0, #32]\n"
    "    .if \\k > 5\n"
    "    add r7, r2, r7, lsl #2\n"
    "    str r2, [sp, #0]\n"
    "    str r7, [sp, #4]\n"
    "    .else\n"
    "    mov r0, r7\n"
    "    .if \\k > 3\n"
    "    str r2, [sp, #0]\n"
    "    .else\n"
    "    mov r7, r2\n"
    "    .endif\n"
    "    .endif\n"
    "    .if \\k > 3\n"
    "    add r7, r12, r12, lsl #1\n"
    "    .endif\n"
    "1:\n"
    "    ldmia r6!, {r1-r4}\n"
    "    .if \\k > 5\n"
    "    add r0, r5, r12, lsl #2\n"
    "    .endif\n"
    "    DWL_TAP [r5]\n"
    "    .if \\k > 1\n"
    "    DWL_TAP [r5, r12]\n"
    "    .endif\n"
    "    .if \\k > 2\n"
    "    DWL_TAP [r5, r12, lsl #1]\n"
    "    .endif\n"
    "    .if \\k > 3\n"
    "    DWL_TAP [r5, r7]\n"
    "    .endif\n"
    "    .if \\k == 5\n"
    "    DWL_TAP [r5, r12, lsl #2]\n"
    "    .endif\n"
    "    .if \\k > 5\n"
    "    DWL_TAP [r0]\n"
    "    DWL_TAP [r0, r12]\n"
    "    .endif\n"
    "    .if \\k > 6\n"
    "    DWL_TAP [r0, r12, lsl #1]\n"
    "    .endif\n"
    "    .if \\k > 7\n"
    "    DWL_TAP [r0, r7]\n"
    "    .endif\n"
    "    adds r5, r5, #4\n"
    "    .if \\k > 5\n"
    "    DWL_RQ4\n"
    "    ldr r8, [sp, #4]\n"
    "    cmp r10, r8\n"
    "    .elseif \\k > 3\n"
    "    DWL_RQ4\n"
    "    subs r0, r0, #1\n"
    "    .else\n"
    "    DWL_RQ4 r7\n"
    "    subs r0, r0, #1\n"
    "    .endif\n"
    "    bne 1b\n"
    "    add sp, sp, #8\n"
    "    pop {r4-r11, pc}\n"
    "    .size th_dw_lines_k\\k, . - th_dw_lines_k\\k\n"
    "    .popsection\n"
    "    .endm\n"
    "    DWL_FULL 1\n"
    "    DWL_FULL 2\n"
    "    DWL_FULL 3\n"
    "    DWL_FULL 4\n"
    "    DWL_FULL 5\n"
    "    DWL_FULL 6\n"
    "    DWL_FULL 7\n"
    "    DWL_FULL 8\n"
    /* Clipped windows: job->na rows of job->nb taps. */
    "    .pushsection .text.th_dw_lines_gen,\"ax\",%progbits\n"
    "    .global th_dw_lines_gen\n"
    "    .hidden th_dw_lines_gen\n"
    "    .type th_dw_lines_gen, %function\n"
    "    .thumb_func\n"
    "    .p2align 2\n"
    "th_dw_lines_gen:\n"
    "    push {r4-r11, lr}\n"
    "    ldr r7, [sp, #36]\n"
    "    sub sp, sp, #16\n"
    "    mov r5, r1\n"
    "    mov r6, r3\n"
    "    add r7, r2, r7, lsl #2\n"
    "    str r2, [sp, #0]\n"
    "    str r7, [sp, #4]\n"
    "    ldr r12, [r0, #0]\n"
    "    ldr lr, [r0, #32]\n"
    "1:\n"
    "    ldmia r6!, {r1-r4}\n"
    "    ldr r7, [r0, #16]\n"
    "    add r6, r6, r7\n"
    "    ldr r7, [r0, #8]\n"
    "    str r7, [sp, #8]\n"
    "2:\n"
    "    ldr r7, [r0, #4]\n"
    "    lsrs r7, r7, #1\n"
    "    bcc 3f\n"
    "    DWL_TAP [r5]\n"
    "    add r5, r5, r12\n"
    "3:\n"
    "    beq 5f\n"
    "4:\n"
    "    DWL_TAP [r5]\n"
    "    add r5, r5, r12\n"
    "    DWL_TAP [r5]\n"
    "    add r5, r5, r12\n"
    "    subs r7, r7, #1\n"
    "    bne 4b\n"
    "5:\n"
    "    ldr r7, [sp, #8]\n"
    "    subs r7, r7, #1\n"
    "    beq 6f\n"
    "    str r7, [sp, #8]\n"
    "    ldr r8, [r0, #12]\n"
    "    add r5, r5, r8\n"
    "    ldr r8, [r0, #20]\n"
    "    add r6, r6, r8\n"
    "    b 2b\n"
    "6:\n"
    "    ldr r7, [r0, #24]\n"
    "    add r6, r6, r7\n"
    "    DWL_RQ4\n"
    "    ldr r7, [r0, #28]\n"
    "    subs r5, r5, r7\n"
    "    ldr r8, [sp, #4]\n"
    "    cmp r10, r8\n"
    "    bne 1b\n"
    "    add sp, sp, #16\n"
    "    pop {r4-r11, pc}\n"
    "    .size th_dw_lines_gen, . - th_dw_lines_gen\n"
    "    .popsection\n"
    "    .purgem DWL_FULL\n"
    "    .purgem DWL_RQ4\n"
    "    .purgem DWL_RQ\n"
    "    .purgem DWL_TAP\n");

typedef void (*dw_lines_fn)(const dw_lines_job *job, const int8_t *x, int8_t *out,
                            const int32_t *rec, int32_t blocks);

static dw_lines_fn lines_full_fn(int32_t k)
{
    static const dw_lines_fn by_k[DW_LINES_MAX_TAPS] = {
        th_dw_lines_k1, th_dw_lines_k2, th_dw_lines_k3, th_dw_lines_k4,
        th_dw_lines_k5, th_dw_lines_k6, th_dw_lines_k7, th_dw_lines_k8};
    return by_k[k - 1];
}
#else
/* The same block loop in C (host builds, DSP modelled). */
static void th_dw_lines_gen(const dw_lines_job *job, const int8_t *x, int8_t *out,
                            const int32_t *rec, int32_t blocks)
{
    const uint8_t *w8 = (const uint8_t *)(const void *)rec;
    for (; blocks > 0; blocks--) {
        int32_t acc[4];
        const int32_t *head = (const int32_t *)(const void *)w8;
        for (int32_t j = 0; j < 4; j++) {
            acc[j] = head[j];
        }
        w8 += 16 + job->wpre;
        const int8_t *xp = x;
        for (int32_t a = job->na; a > 0; a--) {
            for (int32_t b = job->nb; b > 0; b--, xp += job->step, w8 += 8) {
                const int32_t v = th_read_s32(xp);
                const int32_t x02 = th_sxtab16(job->off, v);
                const int32_t x13 = th_sxtab16_ror8(job->off, v);
                const int32_t *w = (const int32_t *)(const void *)w8;
                acc[0] = th_smlabb(x02, w[0], acc[0]);
                acc[2] = th_smlabb(x02 >> 16, w[0] >> 16, acc[2]);
                acc[1] = th_smlabb(x13, w[1], acc[1]);
                acc[3] = th_smlabb(x13 >> 16, w[1] >> 16, acc[3]);
            }
            if (a > 1) {
                xp += job->rowstep;
                w8 += job->wrow;
            }
        }
        w8 += job->wpost;
        const int32_t *rq = (const int32_t *)(const void *)w8;
        for (int32_t j = 0; j < 4; j++, rq += 3) {
            int32_t y = th_smmlar(acc[j], rq[0], rq[1]);
            y += acc[j] >> 31;
            out[j] = (int8_t)th_ssat8(y >> rq[2]);
        }
        w8 += 48;
        out += 4;
        x += 4;
    }
}

typedef void (*dw_lines_fn)(const dw_lines_job *job, const int8_t *x, int8_t *out,
                            const int32_t *rec, int32_t blocks);

static dw_lines_fn lines_full_fn(int32_t k)
{
    (void)k;
    return th_dw_lines_gen;
}
#endif

/* The record of the block of channels cb .. cb + 3 (f: the filter at channel cb; fa, fb: its
 * bytes between taps along A and B); 0 if fast requantization is not exact for one of them. */
static int lines_record(int32_t *rec, const int8_t *f, int32_t fa, int32_t fb, int32_t ka,
                        int32_t kb, const int32_t *bias, const int32_t *mult,
                        const int32_t *shift, int32_t zp)
{
    int32_t *w = rec + 4;
    for (int32_t a = ka; a > 0; a--, f += fa) {
        const int8_t *fr = f;
        for (int32_t b = kb; b > 0; b--, fr += fb, w += 2) {
            w[0] = th_pkhbt(2 * fr[0], 2 * fr[2]);
            w[1] = th_pkhbt(2 * fr[1], 2 * fr[3]);
        }
    }
    /* th_fast_rq_ok with |acc| <= taps 2^15 + |bias| (at most 8 taps: 32-bit compares). */
    const uint32_t bias_max = (UINT32_C(1) << 29) - (uint32_t)(ka * kb) * 32768u;
    for (int32_t j = 0; j < 4; j++, w += 3) {
        const int32_t b = bias != NULL ? bias[j] : 0;
        const uint32_t babs = b < 0 ? 0u - (uint32_t)b : (uint32_t)b;
        const int32_t m = mult[j];
        const int32_t e = -shift[j];
        if (m < 0 || e < 1 || e > TH_FAST_MAX_E || babs >= bias_max) {
            return 0;
        }
        rec[j] = (int32_t)((uint32_t)b * 2u);
        w[0] = m;
        w[1] = (int32_t)((UINT32_C(1) << (e - 1)) + ((uint32_t)zp << e));
        w[2] = e;
    }
    return 1;
}

int th_dw_lines_s8(const th_context *ctx, int32_t need, const th_dw_conv_params *params,
                   const th_per_channel_quant *quant, const th_dims *input_dims,
                   const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                   const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    if (need <= 0 || ctx == NULL || ctx->buf == NULL || ctx->size < need ||
        params->activation.min > -128 || params->activation.max < 127) {
        return 0;
    }
    const int32_t h = input_dims->h, w = input_dims->w, c = input_dims->c;
    const int32_t oh = output_dims->h, ow = output_dims->w;
    const int8_t *in_end = input + (int64_t)input_dims->n * h * w * c;
    const int8_t *out_end = output + (int64_t)output_dims->n * oh * ow * c;
    if (output < in_end && input < out_end) {
        return 0; /* in place (th_nn.h rule (a)): the rows path copies planes */
    }
    const int32_t kh = filter_dims->h, kw = filter_dims->w;
    const int32_t taps = kh * kw;
    const int32_t tr = lines_transposed(filter_dims);
    const int32_t rw = lines_record_words(taps);
    const int32_t tail = c & 3;
    const int32_t full = c >> 2;
    int32_t *records = (int32_t *)ctx->buf;
    const int32_t ka = tr ? kw : kh, kb = tr ? kh : kw;
    const int32_t fa = tr ? c : kw * c, fb = tr ? kw * c : c;
    for (int32_t i = 0; i <= full; i++) { /* the full blocks, then the tail's (channels 0-3) */
        const int32_t cb = i < full ? tail + 4 * i : 0;
        if (i == full && tail == 0) {
            break;
        }
        if (!lines_record(records + i * rw, filter + cb, fa, fb, ka, kb,
                          bias != NULL ? bias + cb : NULL, quant->multiplier + cb,
                          quant->shift + cb, params->output_offset)) {
            return 0;
        }
    }
    const dw_lines_fn whole = lines_full_fn(kb);
    const int32_t one_row = ka == 1;
    const int32_t sh = params->stride.h, sw = params->stride.w;
    const int32_t dh = params->dilation.h, dwl = params->dilation.w;
    const int32_t ph = params->padding.h, pw = params->padding.w;
    const int32_t row_bytes = w * c;
    dw_lines_job job;
    job.off = (int32_t)(((uint32_t)params->input_offset & 0xFFFFu) |
                        ((uint32_t)params->input_offset << 16));
    job.step = tr ? dh * row_bytes : dwl * c;
    /* The job of a whole window (most pixels): fields fixed per call. */
    dw_lines_job whole_job = job;
    whole_job.na = ka;
    whole_job.nb = kb;
    whole_job.rowstep = tr ? dwl * c - kh * job.step : dh * row_bytes - kw * job.step;
    whole_job.wpre = 0;
    whole_job.wrow = 0;
    whole_job.wpost = 0;
    whole_job.xback = ka * kb * job.step + (ka - 1) * whole_job.rowstep - 4;
    const dw_lines_fn whole_fn = one_row ? whole : th_dw_lines_gen;
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *in_b = input + (int64_t)n * h * row_bytes;
        int8_t *out_px = output + (int64_t)n * oh * ow * c;
        for (int32_t oy = 0; oy < oh; oy++) {
            int32_t ky0;
            const int32_t nky = lines_clip(oy, sh, dh, ph, h, kh, &ky0);
            for (int32_t ox = 0; ox < ow; ox++, out_px += c) {
                int32_t kx0;
                const int32_t nkx = lines_clip(ox, sw, dwl, pw, w, kw, &kx0);
                const int32_t iy = oy * sh - ph + ky0 * dh;
                const int32_t ix = ox * sw - pw + kx0 * dwl;
                const int8_t *x = in_b + ((int64_t)iy * w + ix) * c;
                if (nky == kh && nkx == kw) {
                    if (full > 0) {
                        whole_fn(&whole_job, x + tail, out_px + tail, records, full);
                    }
                    if (tail != 0) {
                        whole_fn(&whole_job, x, out_px, records + full * rw, 1);
                    }
                    continue;
                }
                if (nky == 0 || nkx == 0) { /* every tap in the padding */
                    job.na = 1, job.nb = 0, job.wpre = 0, job.wrow = 0, job.rowstep = 0;
                    x = in_b;
                } else if (!tr) {
                    job.na = nky, job.nb = nkx;
                    job.rowstep = dh * row_bytes - nkx * job.step;
                    job.wpre = 8 * (ky0 * kw + kx0);
                    job.wrow = 8 * (kw - nkx);
                } else {
                    job.na = nkx, job.nb = nky;
                    job.rowstep = dwl * c - nky * job.step;
                    job.wpre = 8 * (kx0 * kh + ky0);
                    job.wrow = 8 * (kh - nky);
                }
                job.wpost = 8 * taps - job.wpre - 8 * job.na * job.nb - job.wrow * (job.na - 1);
                job.xback = job.na * job.nb * job.step + (job.na - 1) * job.rowstep - 4;
                if (full > 0) {
                    th_dw_lines_gen(&job, x + tail, out_px + tail, records, full);
                }
                if (tail != 0) {
                    th_dw_lines_gen(&job, x, out_px, records + full * rw, 1);
                }
            }
        }
    }
    return 1;
}

#else /* portable and Helium builds, or the path left out: no channel-inner path */

int th_dw_lines_s8(const th_context *ctx, int32_t need, const th_dw_conv_params *params,
                   const th_per_channel_quant *quant, const th_dims *input_dims,
                   const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                   const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    (void)ctx;
    (void)need;
    (void)params;
    (void)quant;
    (void)input_dims;
    (void)input;
    (void)filter_dims;
    (void)filter;
    (void)bias;
    (void)output_dims;
    (void)output;
    return 0;
}
#endif
