/* th_dw_conv_lines_s8: the general depthwise's channel-inner path (ch_mult 1, 4 or more
 * channels), for 1-D tensors and short lines, where the rows path's fixed costs per channel
 * and per row (staging, records, row calls) are spread over few outputs. Two variants, the
 * one estimated cheaper (lines_variant):
 *
 * Taps (at most 8 taps; 2-D windows up to 64). HWC order as stored: for each output pixel, the
 * channels in blocks of four; per block, each valid tap's input word (four channels) is
 * sign-extended with the input offset added (SXTAB16, two lanes a word) and multiplied per
 * channel (SMLABB / SMLATT) by the doubled weights, then four outputs are requantized (the
 * fast exact form of th_nn_support.h on the doubled accumulator) and stored. Taps in the
 * padding are skipped (the window is clipped per pixel), so the offset needs no folding. The
 * filter is oriented so that the axis with more taps (B) is the inner loop. C % 4 channels:
 * the blocks start at channel C % 4 and one more block covers channels 0-3 (its outputs
 * C % 4 .. 3 are rewritten with the same values). Scratch (th_dw_lines_scratch): per block one
 * record, widened once per call in the order the loop reads it: 2 bias (4 words), per tap (a,
 * b) at a KB + b two words of doubled weight pairs (channels 0, 2 and 1, 3), then (multiplier,
 * 2^(e-1) + zp 2^e, e) per channel. The per-pixel block loop is Thumb-2 assembly on DSP cores
 * (the same loop in C with modelled DSP instructions in host builds): one unrolled variant per
 * tap count for pixels whose one-row window is whole (K <= 3: one row loop call per line, the
 * tail's block in it), one general loop over clipped windows. The records are built by Thumb-2
 * loops too (th_dw_lines_rec, th_dw_lines_rq): they run once per channel per call.
 *
 * Pairs (one tap across the line after orientation, at most 16 along it; any stride and
 * dilation): per output line and block of four channels the input line is staged once as
 * int16 tap pairs (below, pairs_geom), so that every output is KP = ceil(KB / 2) SMLADs per
 * channel, four channels per LDM of staged words and one of weight pairs; the blocks are
 * 4 i .. 4 i + 3, the last ending at channel C - 1 (no scalar tail). Two taps across (at most
 * 8 along): a staged word pairs the two input lines an output line reads instead, so that an
 * output is KB SMLADs per channel (21x8x19 k5x2 s2x3: 26,886 -> 16,736 instructions, was the
 * taps variant's block loop). Scratch: per block a record (doubled bias, weight pairs,
 * requantization), one staged line, the line's phase spans and output runs. Thumb-2 output
 * and staging loops on DSP cores, the same in C in host builds. */
#include <stddef.h>

#include "th_dw_lines.h"
#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP && !TH_NN_MVE

#define DW_LINES_MAX_TAPS 8
/* 2-D windows (two or more taps across the line) of more than 8 taps run the general block
 * loop: for small planes and few outputs per channel its 9 instructions per tap and block
 * cost less than the rows path's staging and calls per channel and output row. Filters of
 * 15 taps or more take the plane path first (th_dw_conv_general_s8.c) where it fits. */
#define DW_LINES_MAX_TAPS_2D 64
/* The row loops: at most 3 taps along the line (one tap across), a line's whole windows in
 * one call. The cost estimate (lines_variant) still counts the line loops they replaced
 * (one block of channels across a line, at most 20 blocks; per block and pixel 8 K + 31
 * against the row loops' 8 K + 25), so that the path choices stay where they were measured. */
#define DW_LINE_MAX_K 3
#define DW_LINE_MAX_BLOCKS 20
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
    int32_t xs;      /* 36: input bytes between the pixels of a line (the row loops) */
    int32_t os;      /* 40: output bytes between them */
    int32_t blocks;  /* 44: blocks of four channels per pixel (the row loops) */
    int32_t tail;    /* 48: C % 4 (the row loops with the tail's block) */
} dw_lines_job;

/* Record words of one block. */
TH_INLINE int32_t lines_record_words(int32_t taps)
{
    return 4 + 2 * taps + 12;
}

/* The taps variant applies: at most 8 taps (the unrolled loops), or a 2-D window (KA >= 2
 * after orientation) of at most DW_LINES_MAX_TAPS_2D (the general block loop). */
TH_INLINE int lines_taps_ok(int32_t taps, int32_t ka)
{
    return taps <= DW_LINES_MAX_TAPS || (ka > 1 && taps <= DW_LINES_MAX_TAPS_2D);
}

/* The oriented frame: B (inner taps) is w unless the filter has more rows than columns. */
TH_INLINE int32_t lines_transposed(const th_dims *filter_dims)
{
    return filter_dims->h > filter_dims->w;
}

/* ---- Pairs variant: 1-D windows (one tap across A after orientation), SMLAD over tap pairs
 * The input line an output line reads is staged once per block of four channels as words of
 * (x[q] + off, x[q + DB] + off) int16 pairs (0 outside the input), four channels a slot, at the
 * positions q = -pad_b + i G (G = gcd(SB, U), U = 2 DB) in P = U / G phase rows (index i in row
 * i mod P, slot i / P): an output's pair j is then slot j on from its first, so every output is
 * KP = ceil(KB / 2) SMLADs per channel over consecutive slots and the weight pairs of its
 * block's record (an odd KB ends (w, 0)). Outputs o0 + t P share a phase and step SB / G
 * slots. Each input value is widened once per output line, not once per tap.
 * Across (two taps across A, at most 8 along B): a slot pairs the two lines an output line
 * reads, (x[a][q] + off, x[a + DA][q] + off), so that its pair j is the taps (0, j), (1, j):
 * U = DB, KP = KB and no pair is half empty; the same output loops and staging. */
typedef struct {
    int32_t transposed;                       /* B = h */
    int32_t across;                           /* two taps across A */
    int32_t kb, sb, db, pad_b, in_b, out_b;   /* along the line */
    int32_t sa, da, pad_a, in_a, out_a;       /* across lines */
    int32_t q1;                               /* B offset of a slot's second position */
    int32_t kp, g, p, sbg, phlen;
    int32_t split; /* one phase row read by two output phases (pairs_geometry): output
                    * phases P << split (P 1 then) */
    int32_t e;     /* split: 1 where pad_b was made even (slot 0 one position earlier) */
} pairs_geom;

#define DW_PAIRS_MAX_PAIRS 8

/* Record words of one block: 4 bias, 4 KP weight pairs, 12 requantization. */
TH_INLINE int32_t pairs_record_words(int32_t kp)
{
    return 16 + 4 * kp;
}

static int32_t gcd_lines(int32_t a, int32_t b)
{
    while (b != 0) {
        const int32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The pairs geometry; 0 if the variant does not apply (more than two taps across the line,
 * more than 2 DW_PAIRS_MAX_PAIRS taps along it with one across, more than DW_PAIRS_MAX_PAIRS
 * with two). */
static int pairs_geometry(const th_dw_conv_params *params, const th_dims *input_dims,
                          const th_dims *filter_dims, const th_dims *output_dims, pairs_geom *g)
{
    const int32_t tr = lines_transposed(filter_dims);
    const int32_t ka = tr ? filter_dims->w : filter_dims->h;
    g->transposed = tr;
    g->across = ka == 2;
    g->kb = tr ? filter_dims->h : filter_dims->w;
    if (ka > 2 || g->kb > (2 - g->across) * DW_PAIRS_MAX_PAIRS) {
        return 0;
    }
    g->sb = tr ? params->stride.h : params->stride.w;
    g->db = tr ? params->dilation.h : params->dilation.w;
    g->pad_b = tr ? params->padding.h : params->padding.w;
    g->in_b = tr ? input_dims->h : input_dims->w;
    g->out_b = tr ? output_dims->h : output_dims->w;
    g->sa = tr ? params->stride.w : params->stride.h;
    g->da = tr ? params->dilation.w : params->dilation.h;
    g->pad_a = tr ? params->padding.w : params->padding.h;
    g->in_a = tr ? input_dims->w : input_dims->h;
    g->out_a = tr ? output_dims->w : output_dims->h;
    if (g->sb <= 0 || g->db <= 0 || g->db > 64 || g->sb > 64) {
        return 0;
    }
    g->q1 = g->across ? 0 : g->db;
    /* Split: an odd stride without dilation would stage every position twice (P 2: slots
     * (q, q + 1) for even and for odd q). Only the slots of even q (from -pad_b) are staged;
     * an output starting at an odd q reads the slot before its first tap with weight pairs
     * shifted by one tap ((0, w0), (w1, w2), ..: a second record per block), so KP is
     * KB / 2 + 1 for both phases (an even KB's first phase ends with a (0, 0) pair). Half
     * the staging for at most one more SMLAD per channel and output (4x48x37 k1x9 s2x3);
     * not for an even KB at stride 1, where the pair costs more than the staging saved
     * (1x67x128 k1x12 s1x1: 155,392 -> 162,283 instructions split). The slots start at an
     * even input position (pad_b made even, e: the position added), so that no slot pairs
     * the padding with the input at the start (the widening loop stages the line straight,
     * pairs_s8's `direct`); output o's first slot is then (o SB + e) / 2, its record the
     * shifted one where that is odd. Two outputs or more (two output phases). */
    if ((g->sb & 1) && g->db == 1 && !g->across && ((g->kb & 1) || g->sb > 1) &&
        g->kb / 2 + 1 <= DW_PAIRS_MAX_PAIRS && g->out_b > 1) {
        g->split = 1;
        g->kp = g->kb / 2 + 1;
        g->g = 2;
        g->p = 1;
        g->sbg = g->sb; /* slots between the outputs of a phase: 2 SB positions */
        g->e = g->pad_b & 1;
        g->pad_b += g->e;
        /* Slots: phase 0's last output's first slot + KP, phase 1's (from slot (SB + e) / 2:
         * counted with e 1 whatever e is, as plan/scratch.py, which does not know pad_b) */
        g->phlen = TH_MAX(((g->out_b + 1) / 2 - 1) * g->sb,
                          (g->sb + 1) / 2 + (g->out_b / 2 - 1) * g->sb) + g->kp;
        return 1;
    }
    g->split = 0;
    g->e = 0;
    const int32_t u = g->across ? g->db : 2 * g->db; /* positions between an output's pairs */
    g->kp = g->across ? g->kb : (g->kb + 1) / 2;
    g->g = gcd_lines(g->sb, u);
    g->p = u / g->g;
    g->sbg = g->sb / g->g;
    /* Slots a phase row needs: its last output's first slot + KP. */
    int32_t need = 0;
    for (int32_t o0 = 0; o0 < g->p && o0 < g->out_b; o0++) {
        const int32_t n = (g->out_b - o0 + g->p - 1) / g->p;
        need = TH_MAX(need, (o0 * g->sbg) / g->p + (n - 1) * g->sbg + g->kp);
    }
    g->phlen = need;
    return 1;
}

/* Scratch bytes of the pairs variant: the blocks' records (twice where split), one staged
 * line, the phase rows' spans (pairs_span) and the line's output runs (two words each).
 * INT32_MAX where a count is beyond any the variant takes (DW_LINES_MAX_SCRATCH bounds
 * phlen by 1024 and blocks by 205), so that the sum is int32 (was int64: about 20
 * instructions a call, two calls a layer). */
TH_INLINE int32_t pairs_bytes(const pairs_geom *g, int32_t blocks)
{
    if (g->phlen > 4096 || blocks > 4096) {
        return INT32_MAX;
    }
    return blocks * (1 + g->split) * 4 * pairs_record_words(g->kp) + 16 * g->p * g->phlen +
           16 * g->p + 8 * TH_MIN(g->p << g->split, g->out_b);
}

/* Estimated instructions of the pairs variant, four times (least squares on QEMU counts of
 * the issue-14 sweep's 1-D shapes, bench/dw_lines.py): per block and output 6 per pair and
 * 27; per block and line 24 per staged slot and 344; per block 13 per pair and 78; 2530. */
static int64_t pairs_cost4(const pairs_geom *g, int32_t blocks)
{
    if (g->across) {
        /* From the loops' counts (QEMU: 21x8x19 k5x2 s2x3 16,820 estimated, 16,724 counted;
         * 6x43x9 k2x5 s3x1 20,536, 19,962), then 10 / 9 of it: taken only where clearly
         * cheaper, as the other estimates err by that much on such shapes (6x43x9: the rows
         * path 21,116 estimated, 19,789 counted, where it stays). */
        const int64_t per_line =
            (int64_t)g->out_b * (6 * g->kp + 32) + 11 * (int64_t)g->p * g->phlen + 155;
        return 40 * (blocks * ((int64_t)g->out_a * per_line + 200) + 1660) / 9;
    }
    /* split: 12 per staged slot (its line is staged straight where the input is even long:
     * 4x48x37 k1x9 s2x3 34,222 counted, 43,470 estimated at 24) */
    const int64_t per_line = (int64_t)g->out_b * (6 * g->kp + 27) +
                             (24 >> g->split) * (int64_t)g->p * g->phlen + 344;
    return 4 * (blocks * ((int64_t)g->out_a * per_line + (1 + g->split) * (13 * g->kp + 78)) +
                2530);
}

/* The pairs variant's geometry (*pg), scratch bytes (*pbytes) and pairs_cost4, or -1 where it
 * does not apply (a call of its own: the other variants' estimates stay lean). */
static int64_t __attribute__((noinline))
pairs_estimate(const th_dw_conv_params *params, const th_dims *input_dims,
               const th_dims *filter_dims, const th_dims *output_dims, pairs_geom *pg,
               int32_t blocks, int64_t *pbytes)
{
    if (!pairs_geometry(params, input_dims, filter_dims, output_dims, pg)) {
        return -1;
    }
    *pbytes = pairs_bytes(pg, blocks);
    return pairs_cost4(pg, blocks);
}

/* Which variant runs (0: none, 1: taps, 2: pairs) and its scratch bytes (*bytes). */
static int32_t lines_variant(const th_dw_conv_params *params, const th_dims *input_dims,
                             const th_dims *filter_dims, const th_dims *output_dims,
                             int32_t *bytes, pairs_geom *pg)
{
    *bytes = 0;
    if (params == NULL || input_dims == NULL || filter_dims == NULL || output_dims == NULL ||
        params->ch_mult != 1 || input_dims->c < 4 || filter_dims->h <= 0 ||
        filter_dims->w <= 0 || output_dims->h <= 0 || output_dims->w <= 0) {
        return 0;
    }
    const int32_t taps = filter_dims->h * filter_dims->w;
    const int32_t c = input_dims->c;
    const int32_t blocks = (c >> 2) + ((c & 3) != 0);
    /* Estimated instructions, four times, of each variant and of the rows path (plan/scratch.py
     * dw_lines_scratch states the same; least squares on the QEMU counts of the issue-14
     * sweep's 1-D shapes, bench/dw_lines.py, the line loops counted): taps variant, with
     * the line loops (one-row windows, at most DW_LINE_MAX_K taps and DW_LINE_MAX_BLOCKS
     * blocks): per line 8 per tap and 31 per block of four channels and pixel, 24 per block
     * and 110; 40 per channel, 8 per tap and block, 634; else 9 per tap and 25 per block and
     * pixel, 115 per pixel (+ 26 with a channel tail), 72 per channel, 634; pairs variant
     * pairs_cost4; the rows path 2 per tap pair and 6.5 per output, 1.1 per staged value
     * (KA SB per output), 120 per output row, phase and channel, 211 per channel, 4070.
     * The cheaper variant where it is estimated below the rows path. */
    const int32_t tr = lines_transposed(filter_dims);
    const int32_t ka = tr ? filter_dims->w : filter_dims->h;
    const int32_t kb = taps / ka;
    const int32_t sb = tr ? params->stride.h : params->stride.w;
    const int32_t db = tr ? params->dilation.h : params->dilation.w;
    const int32_t out_a = tr ? output_dims->w : output_dims->h;
    const int32_t g = gcd_lines(sb, db); /* phases: db / gcd(sb, db) */
    const int64_t pixels = (int64_t)output_dims->h * output_dims->w;
    const int64_t kp = (taps + 1) / 2;
    const int64_t rows = (int64_t)c * (pixels * (8 * kp + 26) + 4 * pixels * ka * sb +
                                       480 * (int64_t)out_a * (db / g) + 844) +
                         16280;
    int64_t best = INT64_MAX;
    int32_t variant = 0;
    int32_t size = 0;
    const int32_t taps_bytes = blocks * 4 * lines_record_words(taps);
    int line_loops = 0;
    if (lines_taps_ok(taps, ka) && taps_bytes <= DW_LINES_MAX_SCRATCH) {
        line_loops = ka == 1 && kb <= DW_LINE_MAX_K && blocks <= DW_LINE_MAX_BLOCKS;
        if (line_loops) {
            const int32_t out_b = tr ? output_dims->h : output_dims->w; /* no 64-bit divide */
            const int64_t per_line = (int64_t)out_b * blocks * (8 * taps + 31) + 24 * blocks + 110;
            best = 4 * (out_a * per_line + 40 * c + 8 * taps * blocks + 634);
        } else {
            /* Beyond the fit's taps (2-D windows of more than 8): 12 more per filter row
             * after the first (the block loop's row step). */
            const int32_t per_block =
                9 * taps + 25 + (taps > DW_LINES_MAX_TAPS ? 12 * (ka - 1) : 0);
            best = 4 * (pixels * (blocks * per_block + ((c & 3) != 0 ? 26 : 0) + 115) +
                        72 * c + 634);
        }
        variant = 1;
        size = taps_bytes;
    }
    /* Where the line loops' estimate applies, the pairs estimate exceeds it: per block and
     * output 6 KP + 27 + 24 per staged slot (at least one per output) > 8 taps + 31 (taps
     * <= 3); per block and line 344 > 24 + 110 + 40 * 4 + 8 taps (the per-line, per-channel
     * and per-tap terms); 2530 > 634. So its geometry is not worked out. */
    int64_t pbytes;
    if (!line_loops) {
        const int64_t cost = pairs_estimate(params, input_dims, filter_dims, output_dims, pg,
                                            blocks, &pbytes);
        if (cost >= 0 && pbytes <= DW_LINES_MAX_SCRATCH && cost < best) {
            best = cost;
            variant = 2;
            size = (int32_t)pbytes;
        }
    }
    if (variant == 0 || best >= rows) {
        return 0;
    }
    *bytes = size;
    return variant;
}

int32_t th_dw_lines_scratch(const th_dw_conv_params *params, const th_dims *input_dims,
                            const th_dims *filter_dims, const th_dims *output_dims)
{
    int32_t bytes;
    pairs_geom pg;
    (void)lines_variant(params, input_dims, filter_dims, output_dims, &bytes, &pg);
    return bytes;
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
/* Four requantizations in three LDMs (r10 free, unlike DWL_RQ4) from the record words at
 * REC (post-incremented): the twelve words (m, rzp, e per channel) land in the registers
 * each channel's finished one frees. AT: stored at r7 + J, else at r7 post-incremented.
 * Shared by both assembly blocks below (each purges them). */
#define DWL_RQ_MACROS                                                                          \
    "    .macro DWL_RQX acc, m, rz, e, j, at\n"                                                 \
    "    smmlar \\rz, \\acc, \\m, \\rz\n"                                                       \
    "    add \\rz, \\rz, \\acc, asr #31\n"                                                     \
    "    asr \\rz, \\rz, \\e\n"                                                                 \
    "    ssat \\rz, #8, \\rz\n"                                                                 \
    "    .if \\at\n"                                                                            \
    "    strb \\rz, [r7, #\\j]\n"                                                               \
    "    .else\n"                                                                                \
    "    strb \\rz, [r7], #1\n"                                                                 \
    "    .endif\n"                                                                               \
    "    .endm\n"                                                                                \
    "    .macro DWL_RQ4L at, rec=r6\n"                                                            \
    "    ldmia \\rec!, {r8-r11}\n"                                                              \
    "    DWL_RQX r1, r8, r9, r10, 0, \\at\n"                                                      \
    "    ldmia \\rec!, {r1, r8, r9, r10}\n"                                                     \
    "    DWL_RQX r2, r11, r1, r8, 1, \\at\n"                                                      \
    "    ldmia \\rec!, {r1, r2, r8, r11}\n"                                                     \
    "    DWL_RQX r3, r9, r10, r1, 2, \\at\n"                                                      \
    "    DWL_RQX r4, r2, r8, r11, 3, \\at\n"                                                      \
    "    .endm\n"

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
/* Row loops (blocks: the line's pixels, job->blocks blocks of channels each; rowT, T > 0:
 * and the tail's block of T = C % 4 channels). */
DW_LINES_LOOP(th_dw_row0_k1);
DW_LINES_LOOP(th_dw_row0_k2);
DW_LINES_LOOP(th_dw_row0_k3);
DW_LINES_LOOP(th_dw_row1_k1);
DW_LINES_LOOP(th_dw_row1_k2);
DW_LINES_LOOP(th_dw_row1_k3);
DW_LINES_LOOP(th_dw_row2_k1);
DW_LINES_LOOP(th_dw_row2_k2);
DW_LINES_LOOP(th_dw_row2_k3);
DW_LINES_LOOP(th_dw_row3_k1);
DW_LINES_LOOP(th_dw_row3_k2);
DW_LINES_LOOP(th_dw_row3_k3);
#undef DW_LINES_LOOP

/* One tap, input at ADDR: r1-r4 += lanes 0, 1, 2, 3 of (x + off) times the weights at r6. */
__asm__(
    "    .syntax unified\n"
    "    .thumb\n"
    "    .macro DWL_TAP addr:vararg\n"
    "    ldr r8, \\addr\n"
    "    ldrd r10, r11, [r6], #8\n"
    "    DWL_MAC\n"
    "    .endm\n"
    /* The input word at r8 (four channels) widened with the offset (lr) into r9 (channels
     * 0, 2) and r8 (1, 3), times the weight pairs r10, r11 into r1-r4. */
    "    .macro DWL_MAC n=4\n"
    "    sxtab16 r9, lr, r8\n"
    "    .if \\n > 1\n"
    "    sxtab16 r8, lr, r8, ror #8\n"
    "    .endif\n"
    "    smlabb r1, r9, r10, r1\n"
    "    .if \\n > 2\n"
    "    smlatt r3, r9, r10, r3\n"
    "    .endif\n"
    "    .if \\n > 1\n"
    "    smlabb r2, r8, r11, r2\n"
    "    .endif\n"
    "    .if \\n > 3\n"
    "    smlatt r4, r8, r11, r4\n"
    "    .endif\n"
    "    .endm\n"
    /* Load r8 from the tap I of the K <= 3 loops: 0 at r5 post-incremented by INC (a block;
     * a tail's block: its C % 4 channels), 1 at r5 + r12, 2 at r5 + 2 r12. */
    "    .macro DWL_LDX i, inc=4\n"
    "    .if \\i == 0\n"
    "    ldr r8, [r5], #\\inc\n"
    "    .elseif \\i == 1\n"
    "    ldr r8, [r5, r12]\n"
    "    .else\n"
    "    ldr r8, [r5, r12, lsl #1]\n"
    "    .endif\n"
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
    DWL_RQ_MACROS
    /* Tap T of K <= 3 (weights at r6 + 8 T): tap 0 last, its loads post-incrementing x by
     * a block (4) and r6 past the taps, so the pixel loop needs no pointer adds. */
    "    .macro DWL_TAPI t, k\n"
    "    DWL_LDX \\t\n"
    "    .if \\t == 0\n"
    "    ldrd r10, r11, [r6], #(8 * \\k)\n"
    "    .else\n"
    "    ldrd r10, r11, [r6, #(8 * \\t)]\n"
    "    .endif\n"
    "    DWL_MAC\n"
    "    .endm\n"
    /* Taps 0 .. min(K, 3) - 1 at r5, r5 + step, r5 + 2 step (r12 step). */
    "    .macro DWL_TAPS3 k\n"
    "    DWL_TAP [r5]\n"
    "    .if \\k > 1\n"
    "    DWL_TAP [r5, r12]\n"
    "    .endif\n"
    "    .if \\k > 2\n"
    "    DWL_TAP [r5, r12, lsl #1]\n"
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
    "    .if \\k <= 3\n"
    "    .if \\k > 2\n"
    "    DWL_TAPI 2, \\k\n"
    "    .endif\n"
    "    .if \\k > 1\n"
    "    DWL_TAPI 1, \\k\n"
    "    .endif\n"
    "    DWL_TAPI 0, \\k\n"
    "    .else\n"
    "    DWL_TAPS3 \\k\n"
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
    "    .if \\k > 3\n"
    "    adds r5, r5, #4\n"
    "    .endif\n"
    "    .if \\k > 5\n"
    "    DWL_RQ4\n"
    "    ldr r8, [sp, #4]\n"
    "    cmp r10, r8\n"
    "    .elseif \\k > 3\n"
    "    DWL_RQ4\n"
    "    subs r0, r0, #1\n"
    "    .else\n"
    "    DWL_RQ4L 0\n"
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
    /* Tap T of the row loops (K <= 3): r5 at the block's tap K - 1, r12 = -step; tap 0's
     * weights came with the bias (one LDM), the last tap post-increments x by its N
     * channels (a block, or the tail's C % 4: the next block then starts at channel T). */
    "    .macro DWL_TAPR t, k, n\n"
    "    DWL_LDX (\\k - 1 - \\t), \\n\n"
    "    .if \\t > 0\n"
    "    ldrd r10, r11, [r6], #8\n"
    "    .endif\n"
    "    DWL_MAC \\n\n"
    "    .endm\n"
    /* One block of the row loops: bias and tap 0's weights in one LDM, the taps, N (the
     * tail's block: C % 4) or four outputs stored at r7 post-incremented. A tail's block
     * reads a whole record and leaves r6 inside it (the last record of a pixel). */
    "    .macro DWL_BLK k, n=4\n"
    "    ldmia r6!, {r1-r4, r10, r11}\n"
    "    DWL_TAPR 0, \\k, \\n\n"
    "    .if \\k > 1\n"
    "    DWL_TAPR 1, \\k, \\n\n"
    "    .endif\n"
    "    .if \\k > 2\n"
    "    DWL_TAPR 2, \\k, \\n\n"
    "    .endif\n"
    "    .if \\n == 4\n"
    "    DWL_RQ4L 0\n"
    "    .elseif \\n == 3\n"
    "    ldmia r6!, {r8-r11}\n"
    "    DWL_RQX r1, r8, r9, r10, 0, 0\n"
    "    ldmia r6!, {r1, r8, r9, r10}\n"
    "    DWL_RQX r2, r11, r1, r8, 0, 0\n"
    "    ldr r1, [r6]\n"
    "    DWL_RQX r3, r9, r10, r1, 0, 0\n"
    "    .elseif \\n == 2\n"
    "    ldmia r6, {r3, r4, r8-r11}\n"
    "    DWL_RQX r1, r3, r4, r8, 0, 0\n"
    "    DWL_RQX r2, r9, r10, r11, 0, 0\n"
    "    .else\n"
    "    ldmia r6, {r8-r10}\n"
    "    DWL_RQX r1, r8, r9, r10, 0, 0\n"
    "    .endif\n"
    "    .endm\n"
    /* A line of n >= 1 pixels whose one-row windows of K <= 3 taps are whole, job->blocks
     * blocks of four channels each (records consecutive from rec, input and output blocks
     * four bytes apart): per block 8 K + 24 instructions, per pixel 9. Pixels job->xs input
     * and job->os output bytes apart. T = C % 4 > 0 (th_dw_rowT_k*): x and out at channel 0;
     * per pixel first the tail's block at channel 0 (the record after the blocks', four
     * channels wide): only its T outputs are computed and stored (T 2, K 3: 29 instructions,
     * not a whole block's 47), then the blocks from channel T, 1 more per pixel.
     * Stack: [sp] bytes from past a pixel's last block to the next pixel's first, input and
     * [sp, 4] output, [sp, 8] the end of out (r7), [sp, 12] rec, [sp, 16] blocks. */
    "    .macro DWL_ROW k, t\n"
    "    .pushsection .text.th_dw_row\\t\\()_k\\k,\"ax\",%progbits\n"
    "    .global th_dw_row\\t\\()_k\\k\n"
    "    .hidden th_dw_row\\t\\()_k\\k\n"
    "    .type th_dw_row\\t\\()_k\\k, %function\n"
    "    .thumb_func\n"
    "    .p2align 2\n"
    "th_dw_row\\t\\()_k\\k:\n"
    "    push {r4-r11, lr}\n"
    "    ldr r8, [sp, #36]\n"
    "    sub sp, sp, #24\n"
    "    mov r5, r1\n"
    "    mov r7, r2\n"
    "    ldr r12, [r0, #0]\n"
    "    ldr lr, [r0, #32]\n"
    "    ldrd r1, r2, [r0, #36]\n"
    "    ldr r4, [r0, #44]\n"
    "    mla r9, r8, r2, r7\n"
    "    sub r1, r1, r4, lsl #2\n"
    "    sub r2, r2, r4, lsl #2\n"
    "    .if \\t\n"
    "    sub r1, r1, #\\t\n"
    "    sub r2, r2, #\\t\n"
    "    mov r6, #(64 + 8 * \\k)\n" /* record bytes */
    "    mla r6, r4, r6, r3\n"          /* the tail's record: the blocks' leave r6 there */
    "    .endif\n"
    "    strd r1, r2, [sp, #0]\n"
    "    str r9, [sp, #8]\n"
    "    strd r3, r4, [sp, #12]\n"
    "    .if \\k == 2\n"
    "    add r5, r5, r12\n"
    "    .elseif \\k == 3\n"
    "    add r5, r5, r12, lsl #1\n"
    "    .endif\n"
    "    rsb r12, r12, #0\n"
    /* Two blocks an iteration, an odd count's first alone (the blocks leave the flags of
     * the LSRS: no flag-setting instruction in them). */
    "2:\n"
    "    .if \\t\n"
    "    DWL_BLK \\k, \\t\n" /* x now at channel T: its last load stepped T */
    "    .endif\n"
    "    ldrd r6, r0, [sp, #12]\n"
    "    lsrs r0, r0, #1\n"
    "    bcc 1f\n"
    "    DWL_BLK \\k\n"
    "    beq 3f\n"
    "1:\n"
    "    DWL_BLK \\k\n"
    "    DWL_BLK \\k\n"
    "    subs r0, r0, #1\n"
    "    bne 1b\n"
    "3:\n"
    "    ldmia sp, {r8-r10}\n"
    "    add r5, r5, r8\n"
    "    add r7, r7, r9\n"
    "    cmp r7, r10\n"
    "    bne 2b\n"
    "    add sp, sp, #24\n"
    "    pop {r4-r11, pc}\n"
    "    .size th_dw_row\\t\\()_k\\k, . - th_dw_row\\t\\()_k\\k\n"
    "    .popsection\n"
    "    .endm\n"
    "    .irp t, 0, 1, 2, 3\n"
    "    DWL_ROW 1, \\t\n"
    "    DWL_ROW 2, \\t\n"
    "    DWL_ROW 3, \\t\n"
    "    .endr\n"
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
    "    .purgem DWL_ROW\n"
    "    .purgem DWL_BLK\n"
    "    .purgem DWL_TAPR\n"
    "    .purgem DWL_FULL\n"
    "    .purgem DWL_RQ4L\n"
    "    .purgem DWL_RQX\n"
    "    .purgem DWL_TAPI\n"
    "    .purgem DWL_RQ4\n"
    "    .purgem DWL_RQ\n"
    "    .purgem DWL_TAPS3\n"
    "    .purgem DWL_TAP\n"
    "    .purgem DWL_MAC\n"
    "    .purgem DWL_LDX\n");

typedef void (*dw_lines_fn)(const dw_lines_job *job, const int8_t *x, int8_t *out,
                            const int32_t *rec, int32_t blocks);

static dw_lines_fn lines_full_fn(int32_t k)
{
    static const dw_lines_fn by_k[DW_LINES_MAX_TAPS] = {
        th_dw_lines_k1, th_dw_lines_k2, th_dw_lines_k3, th_dw_lines_k4,
        th_dw_lines_k5, th_dw_lines_k6, th_dw_lines_k7, th_dw_lines_k8};
    return by_k[k - 1];
}

/* The row loop of K taps, with the tail's block of tail channels. */
static dw_lines_fn lines_line_fn(int32_t k, int32_t tail)
{
    static const dw_lines_fn by_k[4][DW_LINE_MAX_K] = {
        {th_dw_row0_k1, th_dw_row0_k2, th_dw_row0_k3},
        {th_dw_row1_k1, th_dw_row1_k2, th_dw_row1_k3},
        {th_dw_row2_k1, th_dw_row2_k2, th_dw_row2_k3},
        {th_dw_row3_k1, th_dw_row3_k2, th_dw_row3_k3}};
    return by_k[tail][k - 1];
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

/* The row loops in C: blocks pixels, job->xs and job->os apart, of job->blocks blocks of
 * channels from channel job->tail, then (job->tail > 0) the tail's block at channel 0. */
static void th_dw_row(const dw_lines_job *job, const int8_t *x, int8_t *out,
                      const int32_t *rec, int32_t blocks)
{
    const int32_t t = job->tail;
    const int32_t *tail_rec = rec + job->blocks * lines_record_words(job->na * job->nb);
    for (; blocks > 0; blocks--, x += job->xs, out += job->os) {
        th_dw_lines_gen(job, x + t, out + t, rec, job->blocks);
        if (t != 0) {
            th_dw_lines_gen(job, x, out, tail_rec, 1);
        }
    }
}

static dw_lines_fn lines_full_fn(int32_t k)
{
    (void)k;
    return th_dw_lines_gen;
}

static dw_lines_fn lines_line_fn(int32_t k, int32_t tail)
{
    (void)k;
    (void)tail;
    return th_dw_row;
}
#endif

/* What the records' bias and requantization words are built from. */
typedef struct {
    const int32_t *bias; /* NULL: none */
    const int32_t *mult;
    const int32_t *shift;
    uint32_t z1;  /* 1 + 2 zp */
    uint32_t lim; /* largest |bias| with |acc| < 2^29 */
    int32_t rw;   /* record words */
    int32_t rq;   /* words before the requantization words */
} lines_rq_src;

TH_INLINE void lines_rq_init(lines_rq_src *q, const int32_t *bias,
                             const th_per_channel_quant *quant, int32_t zp, int32_t taps,
                             int32_t rw, int32_t rq)
{
    q->bias = bias;
    q->mult = quant->multiplier;
    q->shift = quant->shift;
    q->z1 = 1u + 2u * (uint32_t)zp;
    q->lim = (UINT32_C(1) << 29) - 1u - (uint32_t)taps * 32768u; /* |acc| <= taps 2^15 + |b| */
    q->rw = rw;
    q->rq = rq;
}

/* The bias words (doubled) and requantization words (per channel the multiplier,
 * 2^(e-1) + zp 2^e = z1 2^(e-1), e) of n records from rec, record i of the channels
 * cb + 4 i .. + 3; returns bits whose bit 31 is set if the fast requantization is not exact
 * for one of them: e outside [1, TH_FAST_MAX_E] or |bias| > lim (lim - b or lim + b
 * negative mod 2^32: lim < 2^29, so a wrapped one is too), or a multiplier < 0. A clear
 * bit 31 thus implies th_nn_quant_ok, which the entry leaves to this pass (th_dw_lines.h).
 * Branch-free checks; one call per call's run of blocks (it runs once per channel of every
 * call). */
static uint32_t __attribute__((noinline)) lines_rq_blocks_c(int32_t *rec, const lines_rq_src *q,
                                                            int32_t cb, int32_t n)
{
    static const int32_t no_bias[1] = {0};
    const int32_t *bp = q->bias != NULL ? q->bias + cb : no_bias;
    const int32_t bstep = q->bias != NULL;
    const int32_t *mp = q->mult + cb;
    const int32_t *sp = q->shift + cb;
    const uint32_t z1 = q->z1, lim = q->lim;
    uint32_t bad = 0;
    for (int32_t *end = rec + n * q->rw; rec != end; rec += q->rw) {
        int32_t *w = rec + q->rq;
        for (int32_t j = 0; j < 4; j++, w += 3, bp += bstep) {
            const uint32_t b = (uint32_t)*bp;
            const uint32_t e1 = ~(uint32_t)*sp++; /* e - 1 */
            rec[j] = (int32_t)(b * 2u);
            w[0] = *mp++;
            w[1] = (int32_t)(z1 << (e1 & 31u));
            w[2] = (int32_t)(e1 + 1u);
            bad |= e1 | ((uint32_t)(TH_FAST_MAX_E - 1) - e1) | (lim - b) | (lim + b) |
                   (uint32_t)w[0];
        }
    }
    return bad;
}

#if TH_NN_DSP_NATIVE
/* What th_dw_lines_rq reads (byte offsets fixed: the assembly). */
typedef struct {
    const int32_t *bias;  /* 0: at the first channel */
    const int32_t *shift; /* 4 */
    const int32_t *mult;  /* 8 */
    uint32_t z1;          /* 12 */
    uint32_t lim;         /* 16 */
    int32_t next;         /* 20: bytes from past a record's four bias words to the next record */
    int32_t rq;           /* 24: bytes from a record to its requantization words */
} dw_lines_rq_job;

#define DWL_STR2(x) #x
#define DWL_STR(x) DWL_STR2(x)

/* What th_dw_lines_rec reads (byte offsets fixed: the assembly). */
typedef struct {
    const int32_t *bias;  /* 0: at the first block's channel */
    const int32_t *shift; /* 4 */
    const int32_t *mult;  /* 8 */
    uint32_t z1;          /* 12 */
    uint32_t lim;         /* 16 */
    const int8_t *f;      /* 20: the filter at the first block's channel */
    int32_t fb;           /* 24: filter bytes between taps */
    int32_t kb;           /* 28: taps */
    int32_t tail;         /* 32: nonzero: one more record, of channels 0-3 (the next four) */
    const int32_t *bias0; /* 36 */
    const int32_t *shift0; /* 40 */
    const int32_t *mult0; /* 44 */
    const int8_t *f0;     /* 48 */
} dw_lines_rec_job;

/* lines_rq_blocks_c in Thumb-2 for records with a bias, 17 instructions per channel:
 * (rec, job, n >= 1). th_dw_lines_rec: whole taps-variant records of one-row windows with
 * a bias (lines_w_blocks_c and lines_rq_blocks_c), 9 instructions per tap, 17 per channel,
 * 7 per record: (rec, job, n >= 1), returns the bits of lines_rq_blocks_c. */
uint32_t th_dw_lines_rq(int32_t *rec, const dw_lines_rq_job *job, int32_t n);
uint32_t th_dw_lines_rec(int32_t *rec, const dw_lines_rec_job *job, int32_t n);
__asm__(
    "    .syntax unified\n"
    "    .thumb\n"
    /* One channel: bias (r2), shift (r3), multiplier (r4) post-incremented; doubled bias
     * stored at r0, (m, z1 2^(e-1), e) at r1, both post-incremented; checks OR'd into r7
     * (z1: r5, lim: r6). */
    "    .macro DWL_RQCH\n"
    "    ldr r8, [r2], #4\n"
    "    ldr r9, [r3], #4\n"
    "    ldr r10, [r4], #4\n"
    "    lsl r11, r8, #1\n"
    "    str r11, [r0], #4\n"
    "    mvn r9, r9\n"
    "    lsl r11, r5, r9\n"
    "    add r12, r9, #1\n"
    "    stmia r1!, {r10, r11, r12}\n"
    "    orr r7, r7, r10\n" /* a negative multiplier */
    "    rsb r10, r9, #(" DWL_STR(TH_FAST_MAX_E) " - 1)\n"
    "    orr r9, r9, r10\n"
    "    sub r10, r6, r8\n"
    "    add r8, r6, r8\n"
    "    orr r9, r9, r10\n"
    "    orr r9, r9, r8\n"
    "    orr r7, r7, r9\n"
    "    .endm\n"
    "    .pushsection .text.th_dw_lines_rq,\"ax\",%progbits\n"
    "    .global th_dw_lines_rq\n"
    "    .hidden th_dw_lines_rq\n"
    "    .type th_dw_lines_rq, %function\n"
    "    .thumb_func\n"
    "    .p2align 2\n"
    "th_dw_lines_rq:\n"
    "    push {r4-r11, lr}\n"
    "    sub sp, sp, #8\n"
    "    mov lr, r2\n"
    "    ldrd r8, r9, [r1, #20]\n"
    "    strd r8, r9, [sp]\n"
    "    ldmia r1, {r2-r6}\n"
    "    movs r7, #0\n"
    "    add r1, r0, r9\n"
    "1:\n"
    "    .rept 4\n"
    "    DWL_RQCH\n"
    "    .endr\n"
    "    ldrd r8, r9, [sp]\n"
    "    add r0, r0, r8\n"
    "    add r1, r0, r9\n"
    "    subs lr, lr, #1\n"
    "    bne 1b\n"
    "    mov r0, r7\n"
    "    add sp, sp, #8\n"
    "    pop {r4-r11, pc}\n"
    "    .size th_dw_lines_rq, . - th_dw_lines_rq\n"
    "    .popsection\n"
    /* Stack: [sp] f of the next record, [sp, 4] fb, [sp, 8] kb, [sp, 12] the tail's
     * pointers (job + 36) or 0. A record's requantization words end it: the next starts
     * where they do. */
    "    .pushsection .text.th_dw_lines_rec,\"ax\",%progbits\n"
    "    .global th_dw_lines_rec\n"
    "    .hidden th_dw_lines_rec\n"
    "    .type th_dw_lines_rec, %function\n"
    "    .thumb_func\n"
    "    .p2align 2\n"
    "th_dw_lines_rec:\n"
    "    push {r4-r11, lr}\n"
    "    sub sp, sp, #16\n"
    "    mov lr, r2\n"
    "    ldrd r8, r9, [r1, #20]\n"
    "    ldrd r10, r11, [r1, #28]\n"
    "    cmp r11, #0\n"
    "    it ne\n"
    "    addne r11, r1, #36\n"
    "    stmia sp, {r8-r11}\n"
    "    ldmia r1, {r2-r6}\n"
    "    movs r7, #0\n"
    "1:\n"
    "    ldmia sp, {r8-r10}\n"
    "    adds r11, r8, #4\n"
    "    str r11, [sp]\n"
    "    add r1, r0, #16\n"
    "2:\n"
    "    ldr r11, [r8]\n"
    "    add r8, r8, r9\n"
    "    sxtb16 r12, r11\n"
    "    sxtb16 r11, r11, ror #8\n"
    "    sadd16 r12, r12, r12\n"
    "    sadd16 r11, r11, r11\n"
    "    strd r12, r11, [r1], #8\n"
    "    subs r10, r10, #1\n"
    "    bne 2b\n"
    "    .rept 4\n"
    "    DWL_RQCH\n"
    "    .endr\n"
    "    mov r0, r1\n"
    "    subs lr, lr, #1\n"
    "    bne 1b\n"
    "    ldr r8, [sp, #12]\n"
    "    cmp r8, #0\n"
    "    beq 3f\n"
    "    movs r9, #0\n"
    "    str r9, [sp, #12]\n"
    "    ldmia r8, {r2-r4, r9}\n"
    "    str r9, [sp]\n"
    "    mov lr, #1\n"
    "    b 1b\n"
    "3:\n"
    "    mov r0, r7\n"
    "    add sp, sp, #16\n"
    "    pop {r4-r11, pc}\n"
    "    .size th_dw_lines_rec, . - th_dw_lines_rec\n"
    "    .popsection\n"
    "    .purgem DWL_RQCH\n");
#endif

/* lines_rq_blocks_c, in Thumb-2 on DSP cores where there is a bias; n >= 1; then, where
 * tcb >= 0, the record after them of channels tcb .. tcb + 3 (a channel tail's block: one
 * call builds the job for both, about 15 instructions less than two calls). */
static uint32_t lines_rq_blocks(int32_t *rec, const lines_rq_src *q, int32_t cb, int32_t n,
                                int32_t tcb)
{
#if TH_NN_DSP_NATIVE
    if (q->bias != NULL) {
        dw_lines_rq_job job = {q->bias + cb, q->shift + cb, q->mult + cb, q->z1,
                               q->lim,       4 * q->rw - 16, 4 * q->rq};
        uint32_t bad = th_dw_lines_rq(rec, &job, n);
        if (tcb >= 0) {
            job.bias = q->bias + tcb;
            job.shift = q->shift + tcb;
            job.mult = q->mult + tcb;
            bad |= th_dw_lines_rq(rec + n * q->rw, &job, 1);
        }
        return bad;
    }
#endif
    uint32_t bad = lines_rq_blocks_c(rec, q, cb, n);
    if (tcb >= 0) {
        bad |= lines_rq_blocks_c(rec + n * q->rw, q, tcb, 1);
    }
    return bad;
}

/* The weight words of n taps-variant records from rec (rw words apart; record i: the
 * channels of the filter at f + 4 i; fa, fb: its bytes between taps along A and B): per tap
 * the four channels' weights as one word, sign-extended two lanes at a time (channels 0, 2
 * and 1, 3) and doubled, at word 4 + 2 t. */
static void __attribute__((noinline)) lines_w_blocks(int32_t *rec, int32_t rw, const int8_t *f,
                                                     int32_t n, int32_t fa, int32_t fb,
                                                     int32_t ka, int32_t kb)
{
    const int32_t row_skip = fa - kb * fb; /* from past a row's last tap to the next row */
    for (; n > 0; n--, rec += rw, f += 4) {
        int32_t *w = rec + 4;
        const int8_t *fp = f;
        for (int32_t a = ka; a > 0; a--, fp += row_skip) {
            for (int32_t t = kb; t > 0; t--, w += 2, fp += fb) {
                const int32_t v = th_read_s32(fp);
                const int32_t v02 = th_sxtb16(v), v13 = th_sxtb16_ror8(v);
                w[0] = th_sadd16(v02, v02);
                w[1] = th_sadd16(v13, v13);
            }
        }
    }
}

/* The four staged words of a slot from its two positions' words of four channels, each
 * widened with the offset added (a02, a13: channels 0, 2 and 1, 3 of the first). */
TH_INLINE void pairs_put4(int32_t *d, int32_t a02, int32_t a13, int32_t b02, int32_t b13)
{
    d[0] = th_pkhbt(a02, b02);
    d[1] = th_pkhbt(a13, b13);
    d[2] = th_pkhtb(a02, b02);
    d[3] = th_pkhtb(a13, b13);
}

/* The four weight words of one pair from its two taps' words of four channels (b 0: the
 * half-empty last pair): bytes interleaved (a0 a1 b0 b1, a2 a3 b2 b3), so that each
 * sign-extension gives one channel's pair, then doubled. Returns w + 4. */
TH_INLINE int32_t *pairs_w_put(int32_t *w, int32_t a, int32_t b)
{
    const int32_t lo = th_pkhbt(a, b), hi = th_pkhtb(a, b);
    const int32_t v0 = th_sxtb16(lo), v1 = th_sxtb16_ror8(lo);
    const int32_t v2 = th_sxtb16(hi), v3 = th_sxtb16_ror8(hi);
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* One STM with the pointer step (was four STRs and an add: 21x8x19 k5x2 s2x3, 25 pairs,
     * about 100 instructions); STM needs its registers in ascending order: pinned. */
    register int32_t w0 __asm__("r4") = th_sadd16(v0, v0);
    register int32_t w1 __asm__("r5") = th_sadd16(v1, v1);
    register int32_t w2 __asm__("r6") = th_sadd16(v2, v2);
    register int32_t w3 __asm__("r7") = th_sadd16(v3, v3);
    __asm__ volatile("stmia %[w]!, {%[w0], %[w1], %[w2], %[w3]}"
                     : [w] "+r"(w)
                     : [w0] "r"(w0), [w1] "r"(w1), [w2] "r"(w2), [w3] "r"(w3)
                     : "memory");
    return w;
#else
    w[0] = th_sadd16(v0, v0);
    w[1] = th_sadd16(v1, v1);
    w[2] = th_sadd16(v2, v2);
    w[3] = th_sadd16(v3, v3);
    return w + 4;
#endif
}

/* The weight words of n pairs records from rec (rw words apart; record i: the channels of
 * the filter at f + 4 i): per pair j and channel (2 w(j), 2 w'(j)), from word 4; pair j's
 * taps at filter bytes j pstep and j pstep + second; `odd`: one more pair, half empty.
 * Along the line (fb: the filter's bytes between taps along it): pstep 2 fb, second fb, KB / 2
 * pairs and KB odd; across: pstep fb, second the bytes between its two taps across, KB. */
static void __attribute__((noinline)) pairs_w_blocks(int32_t *rec, int32_t rw, const int8_t *f,
                                                     int32_t n, int32_t pstep, int32_t second,
                                                     int32_t pairs, int32_t odd)
{
    for (; n > 0; n--, rec += rw, f += 4) {
        int32_t *w = rec + 4;
        const int8_t *fp = f;
        /* Whole pairs, then an odd count's last tap (no per-pair test). */
        for (int32_t t = pairs; t > 0; t--, fp += pstep) {
            w = pairs_w_put(w, th_read_s32(fp), th_read_s32(fp + second));
        }
        if (odd) {
            (void)pairs_w_put(w, th_read_s32(fp), 0);
        }
    }
}

/* The split geometry's second-phase records (pairs_geometry) after the blocks' first-phase
 * ones (scratch; c channels): the same start value and requantization words, and weight
 * pairs shifted by one tap, (0, w0), (w1, w2), ..: per channel, second-phase pair j is the
 * high half of first-phase pair j - 1 (0 for j = 0) in its low half, the low half of pair
 * j in its high half: two instructions a word (LSR, ORR) from the first-phase words instead
 * of widening the filter bytes again and copying the rest (4x48x37 k1x9 s2x3: 31,505 ->
 * 30,432 instructions, about 107 a record).
 * The first phase's last pair ends with the half-empty (w(KB - 1), 0) for an odd KB, so the
 * shifted one ends with (w(KB - 2), w(KB - 1)); for an even KB it is (0, 0): written here
 * (pairs_w_blocks wrote KB / 2 of its KB / 2 + 1 pairs), the shifted one is then
 * (w(KB - 1), 0). Out of line: the variant's other geometries do not pay for it. */
#if TH_NN_DSP_NATIVE
/* (first, n >= 1, kp): the records' words from `first` on, n records of 16 + 4 KP words,
 * the second-phase ones n records on. Per pair LDM, four ORR, STM, four LSR. */
void th_dw_pairs_shift(int32_t *first, int32_t n, int32_t kp);
__asm__(
    "    .syntax unified\n"
    "    .thumb\n"
    "    .pushsection .text.th_dw_pairs_shift,\"ax\",%progbits\n"
    "    .global th_dw_pairs_shift\n"
    "    .hidden th_dw_pairs_shift\n"
    "    .type th_dw_pairs_shift, %function\n"
    "    .thumb_func\n"
    "    .p2align 2\n"
    "th_dw_pairs_shift:\n"
    "    push {r4-r11, lr}\n"
    /* r3: the second-phase records, n (16 + 4 KP) words on */
    "    add r3, r2, #4\n"
    "    mul r3, r3, r1\n"
    "    add r3, r0, r3, lsl #4\n"
    "1:\n"
    "    ldmia r0!, {r4-r7}\n" /* the start values */
    "    stmia r3!, {r4-r7}\n"
    /* pair 0: (0, w0), no high halves before it */
    "    ldmia r0!, {r4-r7}\n"
    "    lsls r8, r4, #16\n"
    "    lsls r9, r5, #16\n"
    "    lsls r10, r6, #16\n"
    "    lsls r11, r7, #16\n"
    "    subs lr, r2, #1\n"
    "    b 3f\n"
    "2:\n"
    "    ldmia r0!, {r4-r7}\n"
    "    orr r8, r8, r4, lsl #16\n"
    "    orr r9, r9, r5, lsl #16\n"
    "    orr r10, r10, r6, lsl #16\n"
    "    orr r11, r11, r7, lsl #16\n"
    "3:\n"
    "    stmia r3!, {r8-r11}\n"
    "    lsrs r8, r4, #16\n"
    "    lsrs r9, r5, #16\n"
    "    lsrs r10, r6, #16\n"
    "    lsrs r11, r7, #16\n"
    "    subs lr, lr, #1\n"
    "    bpl 2b\n"
    "    ldmia r0!, {r4-r11}\n" /* the requantization words */
    "    stmia r3!, {r4-r11}\n"
    "    ldmia r0!, {r4-r7}\n"
    "    stmia r3!, {r4-r7}\n"
    "    subs r1, r1, #1\n"
    "    bne 1b\n"
    "    pop {r4-r11, pc}\n"
    "    .size th_dw_pairs_shift, . - th_dw_pairs_shift\n"
    "    .popsection\n");
#else
/* The same in C (host builds). */
static void th_dw_pairs_shift(int32_t *first, int32_t n, int32_t kp)
{
    const int32_t rw = pairs_record_words(kp);
    int32_t *sec = first + n * rw;
    for (; n > 0; n--, first += rw, sec += rw) {
        for (int32_t ch = 0; ch < 4; ch++) {
            uint32_t prev = 0;
            sec[ch] = first[ch];
            for (int32_t j = 0; j < kp; j++) {
                const uint32_t cur = (uint32_t)first[4 + 4 * j + ch];
                sec[4 + 4 * j + ch] = (int32_t)(prev | (cur << 16));
                prev = cur >> 16;
            }
        }
        for (int32_t k = 4 + 4 * kp; k < rw; k++) {
            sec[k] = first[k];
        }
    }
}
#endif

static void __attribute__((noinline)) pairs_split_records(int32_t *scratch, const pairs_geom *g,
                                                          int32_t c)
{
    const int32_t blocks = (c >> 2) + ((c & 3) != 0);
    const int32_t rw = pairs_record_words(g->kp);
    if ((g->kb & 1) == 0) {
        for (int32_t *p = scratch + 4 * g->kp, *end = p + blocks * rw; p != end; p += rw) {
            p[0] = 0;
            p[1] = 0;
            p[2] = 0;
            p[3] = 0;
        }
    }
    th_dw_pairs_shift(scratch, blocks, g->kp);
}

/* Slots of one phase row with a position inside the input: [elo, ehi); both: [lo, hi). */
typedef struct {
    int32_t elo, lo, hi, ehi;
} pairs_span;

/* What staging one line of one block reads (x: the line's channel cb, position 0; across,
 * the line of whichever of the two is inside). */
typedef struct {
    const int8_t *x;
    int32_t step; /* input bytes between positions along the line */
    /* th_dw_pairs_widen's k (no copy on the stack): input bytes from a slot's first value
     * to its second (PAIRS_SECOND), between the slots of a phase row, the input offset in
     * both halfwords (PAIRS_OFF) */
    int32_t k[3];
    int32_t in0, in1; /* the first, second value's line is inside the input */
} pairs_src;
#define PAIRS_SECOND 0
#define PAIRS_OFF 2

/* The four words of slot position q: (v(q), v'(q + q1)) per channel (v': the second line
 * across), v 0 outside (one of the two is inside). A position inside is read as one word of
 * the block's four channels and widened two lanes at a time; one outside gives 0 lanes (not
 * the offset). */
TH_INLINE void pairs_slot_edge(int32_t *d, const pairs_src *s, const pairs_geom *g, int32_t q)
{
    const int32_t q1 = q + g->q1;
    const int32_t off = s->k[PAIRS_OFF];
    int32_t a02 = 0, a13 = 0, b02 = 0, b13 = 0;
    if (s->in0 && q >= 0 && q < g->in_b) {
        const int32_t a = th_read_s32(s->x + (int64_t)q * s->step);
        a02 = th_sxtab16(off, a);
        a13 = th_sxtab16_ror8(off, a);
    }
    if (s->in1 && q1 >= 0 && q1 < g->in_b) {
        const int32_t b = th_read_s32(s->x + (int64_t)q * s->step + s->k[PAIRS_SECOND]);
        b02 = th_sxtab16(off, b);
        b13 = th_sxtab16_ror8(off, b);
    }
    pairs_put4(d, a02, a13, b02, b13);
}

/* First i >= 0 with q0 + i pg >= v (pg > 0). */
TH_INLINE int32_t pairs_first(int32_t q0, int32_t pg, int32_t v)
{
    return q0 >= v ? 0 : (v - q0 + pg - 1) / pg;
}

/* The span of phase row ph. */
static pairs_span pairs_span_of(const pairs_geom *g, int32_t ph)
{
    const int32_t pg = g->p * g->g;
    const int32_t q0 = ph * g->g - g->pad_b;
    pairs_span r;
    r.elo = TH_MIN(pairs_first(q0, pg, -g->q1), g->phlen);
    r.ehi = TH_MAX(TH_MIN(pairs_first(q0, pg, g->in_b), g->phlen), r.elo);
    r.lo = TH_MAX(TH_MIN(pairs_first(q0, pg, 0), r.ehi), r.elo);
    r.hi = TH_MAX(TH_MIN(pairs_first(q0, pg, g->in_b - g->q1), r.ehi), r.lo);
    return r;
}

/* Zeroes the slots of phase row d outside [sp->elo, sp->ehi) (both positions outside). */
static void pairs_zero_outside(int32_t *d, const pairs_span *sp, int32_t phlen)
{
    for (int32_t k = 0; k < 4 * sp->elo; k++) {
        d[k] = 0;
    }
    for (int32_t k = 4 * sp->ehi; k < 4 * phlen; k++) {
        d[k] = 0;
    }
}

/* Staging of n >= 1 slots whose two positions are inside, from x on: k = {input bytes
 * between a slot's two positions, between slots, the offset in both halfwords}. */
#if TH_NN_DSP_NATIVE
/* Thumb-2 (below, with the output loops). */
void th_dw_pairs_widen(int32_t *dd, const int8_t *x, int32_t n, const int32_t *k);
#else
static void th_dw_pairs_widen(int32_t *dd, const int8_t *x, int32_t n, const int32_t *k)
{
    for (; n > 0; n--, x += k[1], dd += 4) {
        const int32_t a = th_read_s32(x);
        const int32_t b = th_read_s32(x + k[0]);
        const int32_t lo = th_pkhbt(a, b), hi = th_pkhtb(a, b); /* as the assembly */
        dd[0] = th_sxtab16(k[2], lo);
        dd[1] = th_sxtab16_ror8(k[2], lo);
        dd[2] = th_sxtab16(k[2], hi);
        dd[3] = th_sxtab16_ror8(k[2], hi);
    }
}
#endif

/* Stages the phase rows of one line of one block into st (P rows of phlen slots). Slots
 * with both positions outside the input are never written here: zeroed when `zero` (the
 * first staging of a call; pairs_s8 zeroes all slots for lines in the padding), so that
 * only the padding slots are written, not the whole line. spans: the P phase rows' (worked
 * out once per call). */
static void __attribute__((noinline)) pairs_stage(int32_t *st, const pairs_src *s,
                                                  const pairs_geom *g, int32_t zero,
                                                  const pairs_span *spans)
{
    const int32_t pg = g->p * g->g; /* positions between slots of a phase row */
    for (int32_t ph = 0; ph < g->p; ph++) {
        int32_t *d = st + 4 * ph * g->phlen;
        const int32_t q0 = ph * g->g - g->pad_b; /* slot 0's position */
        const pairs_span sp = spans[ph];
        const int32_t elo = sp.elo, ehi = sp.ehi;
        /* Across, a line outside: every slot one of the edge's. */
        const int32_t both = s->in0 & s->in1;
        const int32_t lo = both ? sp.lo : ehi, hi = both ? sp.hi : ehi;
        if (zero) {
            pairs_zero_outside(d, &sp, g->phlen);
        }
        int32_t i = elo;
        for (; i < lo; i++) {
            pairs_slot_edge(d + 4 * i, s, g, q0 + i * pg);
        }
        if (hi > lo) {
            th_dw_pairs_widen(d + 4 * lo, s->x + (int64_t)(q0 + lo * pg) * s->step, hi - lo,
                              s->k);
        }
        for (i = hi; i < ehi; i++) {
            pairs_slot_edge(d + 4 * i, s, g, q0 + i * pg);
        }
    }
}

/* What one phase run of outputs reads (byte offsets fixed: the assembly below). */
typedef struct {
    const int32_t *x; /* 0: the first output's first slot */
    int32_t os;       /* 4: output bytes between outputs */
    int8_t *out;      /* 8 */
    int32_t xs;       /* 12: staged bytes between outputs less the 16 KP the loads step */
    int32_t n;        /* 16: outputs, at least 1 */
    int32_t kp;       /* 20: pairs (the C model's; the assembly has one loop per count) */
} pairs_run;

typedef void (*pairs_fn)(const pairs_run *r, const int32_t *rec);

#if TH_NN_DSP_NATIVE
/* Thumb-2 output loops, one per pair count KP: per output of the block, the bias (four
 * words), then per pair one LDM of the four channels' staged words and one of their weight
 * pairs, four SMLADs; then the four requantized outputs stored. */
#define DW_PAIRS_LOOP(name) void name(const pairs_run *r, const int32_t *rec)
DW_PAIRS_LOOP(th_dw_pairs_k1);
DW_PAIRS_LOOP(th_dw_pairs_k2);
DW_PAIRS_LOOP(th_dw_pairs_k3);
DW_PAIRS_LOOP(th_dw_pairs_k4);
DW_PAIRS_LOOP(th_dw_pairs_k5);
DW_PAIRS_LOOP(th_dw_pairs_k6);
DW_PAIRS_LOOP(th_dw_pairs_k7);
DW_PAIRS_LOOP(th_dw_pairs_k8);
#undef DW_PAIRS_LOOP

__asm__(
    "    .syntax unified\n"
    "    .thumb\n"
    DWL_RQ_MACROS
    /* Stack: [sp] os, [sp, 4] out, [sp, 8] xs - 16 KP, [sp, 12] end of out. Per output
     * 31 + 6 KP instructions. */
    "    .macro DWP_LOOP kp\n"
    "    .pushsection .text.th_dw_pairs_k\\kp,\"ax\",%progbits\n"
    "    .global th_dw_pairs_k\\kp\n"
    "    .hidden th_dw_pairs_k\\kp\n"
    "    .type th_dw_pairs_k\\kp, %function\n"
    "    .thumb_func\n"
    "    .p2align 2\n"
    "th_dw_pairs_k\\kp:\n"
    "    push {r4-r11, lr}\n"
    "    mov r5, r1\n"
    /* the run in one LDM (its field order the frame's), end = out + n os, 5 instructions
     * a call (was 12) */
    "    ldm r0, {r0-r4}\n"
    "    mla r4, r4, r1, r2\n"
    "    push {r1-r4}\n"
    "1:\n"
    "    ldmia r5!, {r1-r4}\n"
    "    .rept \\kp\n"
    "    ldmia r0!, {r6-r9}\n"
    "    ldmia r5!, {r10, r11, r12, lr}\n"
    "    smlad r1, r6, r10, r1\n"
    "    smlad r2, r7, r11, r2\n"
    "    smlad r3, r8, r12, r3\n"
    "    smlad r4, r9, lr, r4\n"
    "    .endr\n"
    /* os, out, xs - 16 KP, end in one LDM: r6, r12, lr are not the requantization's */
    "    ldmia sp, {r6, r7, r12, lr}\n"
    "    DWL_RQ4L 1, r5\n"
    "    add r7, r7, r6\n"
    "    str r7, [sp, #4]\n"
    "    sub r5, r5, #(64 + 16 * \\kp)\n"
    "    add r0, r0, r12\n"
    "    cmp r7, lr\n"
    "    bne 1b\n"
    "    add sp, sp, #16\n"
    "    pop {r4-r11, pc}\n"
    "    .size th_dw_pairs_k\\kp, . - th_dw_pairs_k\\kp\n"
    "    .popsection\n"
    "    .endm\n"
    "    DWP_LOOP 1\n"
    "    DWP_LOOP 2\n"
    "    DWP_LOOP 3\n"
    "    DWP_LOOP 4\n"
    "    DWP_LOOP 5\n"
    "    DWP_LOOP 6\n"
    "    DWP_LOOP 7\n"
    "    DWP_LOOP 8\n"
    "    .purgem DWP_LOOP\n"
    "    .purgem DWL_RQ4L\n"
    "    .purgem DWL_RQX\n"
    /* Staging, n >= 1 slots whose two positions are inside: (dd, x, n, k), k: input bytes
     * between a slot's two positions, between slots, the offset in both halfwords. The two
     * words' bytes interleaved first (PKH: a0 a1 b0 b1 and a2 a3 b2 b3), so that each SXTAB16
     * gives one channel's pair: 7 instructions a slot, was 9. Four slots an iteration (one
     * pointer add per two, one loop test per four: 10 a slot; by two 10.5, 21 slots 221
     * instructions a call, was 230), an odd count's first slot and a count's bit 1 pair
     * before the loop. */
    "    .macro DWP_SLOT a, b\n"
    "    pkhbt r8, \\a, \\b, lsl #16\n" /* bytes a0 a1 b0 b1 */
    "    pkhtb r10, \\b, \\a, asr #16\n" /* a2 a3 b2 b3 */
    "    sxtab16 r9, r12, r8, ror #8\n"
    "    sxtab16 r8, r12, r8\n"
    "    sxtab16 r11, r12, r10, ror #8\n"
    "    sxtab16 r10, r12, r10\n"
    "    stmia r0!, {r8-r11}\n"
    "    .endm\n"
    /* Two slots from r1 on (r3: r4 + r5), r1 stepped past them. */
    "    .macro DWP_SLOT2\n"
    "    ldr r6, [r1]\n"
    "    ldr r7, [r1, r4]\n"
    "    DWP_SLOT r6, r7\n"
    "    ldr r6, [r1, r5]\n"
    "    ldr r7, [r1, r3]\n"
    "    add r1, r1, r5, lsl #1\n"
    "    DWP_SLOT r6, r7\n"
    "    .endm\n"
    "    .pushsection .text.th_dw_pairs_widen,\"ax\",%progbits\n"
    "    .global th_dw_pairs_widen\n"
    "    .hidden th_dw_pairs_widen\n"
    "    .type th_dw_pairs_widen, %function\n"
    "    .thumb_func\n"
    "    .p2align 2\n"
    "th_dw_pairs_widen:\n"
    "    push {r4-r11, lr}\n"
    "    ldm r3, {r4, r5, r12}\n" /* k in one LDM (was three LDRs) */
    "    add r3, r4, r5\n"
    "    lsrs r2, r2, #1\n"
    "    bcc 1f\n"
    "    ldr r6, [r1]\n"
    "    ldr r7, [r1, r4]\n"
    "    add r1, r1, r5\n"
    "    DWP_SLOT r6, r7\n"
    "1:\n"
    "    lsrs r2, r2, #1\n"
    "    bcc 3f\n"
    "    DWP_SLOT2\n"
    "3:\n"
    /* Z from the LSRS: nothing in DWP_SLOT2 sets flags */
    "    beq 2f\n"
    "4:\n"
    "    DWP_SLOT2\n"
    "    DWP_SLOT2\n"
    "    subs r2, r2, #1\n"
    "    bne 4b\n"
    "2:\n"
    "    pop {r4-r11, pc}\n"
    "    .size th_dw_pairs_widen, . - th_dw_pairs_widen\n"
    "    .popsection\n"
    "    .purgem DWP_SLOT2\n"
    "    .purgem DWP_SLOT\n");


static pairs_fn pairs_pick(int32_t kp)
{
    static const pairs_fn by_kp[DW_PAIRS_MAX_PAIRS] = {
        th_dw_pairs_k1, th_dw_pairs_k2, th_dw_pairs_k3, th_dw_pairs_k4,
        th_dw_pairs_k5, th_dw_pairs_k6, th_dw_pairs_k7, th_dw_pairs_k8};
    return by_kp[kp - 1];
}
#else
/* The same output loop in C (host builds, DSP modelled). */
static void pairs_outputs(const pairs_run *r, const int32_t *rec)
{
    const int32_t kp = r->kp;
    const int8_t *x = (const int8_t *)(const void *)r->x;
    int8_t *out = r->out;
    const int32_t *rq = rec + 4 + 4 * kp;
    for (int32_t n = r->n; n > 0; n--, x += r->xs + 16 * kp, out += r->os) {
        const int32_t *xw = (const int32_t *)(const void *)x;
        int32_t acc[4];
        for (int32_t ch = 0; ch < 4; ch++) {
            acc[ch] = rec[ch];
            for (int32_t j = 0; j < kp; j++) {
                acc[ch] = th_smlad(xw[4 * j + ch], rec[4 + 4 * j + ch], acc[ch]);
            }
            const int32_t y = th_smmlar(acc[ch], rq[3 * ch], rq[3 * ch + 1]);
            out[ch] = (int8_t)th_ssat8((y + (acc[ch] >> 31)) >> rq[3 * ch + 2]);
        }
    }
}
#endif

/* One line's blocks where the line is staged straight by the widening loop and read by one
 * phase run (pairs_s8's `wide`, P 1): per block one widening of n slots from x and one output
 * run, the pointers stepped, not recomputed (the general block loop costs 57 instructions a
 * block, this about 20). Inline: a call of its own would add its frame to the depthwise
 * stack bound (8 bytes) for 11 instructions a call saved. r: the run with x and n set; blocks
 * at channels 0, 4, .., the last at C - 4 (c: C; the tail's block rewrites channels of the
 * one before with the same values). */
TH_INLINE void pairs_line_wide(pairs_fn fn, pairs_run *r, const int32_t *rec, int32_t rw,
                                int32_t *st, const int8_t *x, const int32_t *k, int32_t n,
                                int32_t c)
{
    int8_t *out = r->out;
    /* left: channels after the block's; pointers stepped (was an index, 21 instructions a
     * block) */
    for (int32_t left = c - 4;;) {
        th_dw_pairs_widen(st, x, n, k);
        r->out = out;
        fn(r, rec);
        if (left <= 0) {
            return;
        }
        const int32_t step = TH_MIN(left, 4); /* the tail's block: its last channel C - 1 */
        left -= step;
        x += step;
        out += step;
        rec += rw;
    }
}

/* The split geometry where every line is inside and staged straight (pairs_s8's `wide`,
 * two runs): per line and block the widening, then both runs, the pointers stepped (the
 * general block loop recomputed both runs' fields and records: 4x48x37 k1x9 s2x3 30,432 ->
 * 29,540 instructions). t: the runs' shared fields (xs, os, kp); src: step and k, its
 * PAIRS_SECOND set. Out of line, the whole call, what it needs worked out from g and the
 * scratch (the records, then the staged line, spans, run_x and run_n, pairs_s8): as part
 * of pairs_s8's line loop it made th_dw_lines_s8's frame deeper (the depthwise stack
 * bound) or cost the loop's other lines (21x8x19 k5x2 s2x3 +30 instructions). */
static void __attribute__((noinline)) pairs_split_lines(const pairs_geom *g, const pairs_run *t,
                                                        const pairs_src *src, int32_t *scratch,
                                                        const int8_t *input,
                                                        const th_dims *input_dims,
                                                        int8_t *output,
                                                        const th_dims *output_dims)
{
#if TH_NN_DSP_NATIVE
    const pairs_fn fn = pairs_pick(g->kp);
#else
    const pairs_fn fn = pairs_outputs;
#endif
    const int32_t c = input_dims->c;
    const int32_t blocks = (c >> 2) + ((c & 3) != 0);
    const int32_t rw = pairs_record_words(g->kp);
    int32_t *stage = scratch + 2 * blocks * rw;
    const pairs_span *sp0 = (const pairs_span *)(void *)(stage + 4 * g->p * g->phlen);
    const int32_t *run_x = (const int32_t *)(const void *)(sp0 + g->p);
    /* run 0 the shifted records where e (pairs_s8) */
    const int32_t *rec0 = scratch + (g->e ? blocks * rw : 0);
    const int32_t second = g->e ? -blocks * rw : blocks * rw;
    int32_t *st = stage + 4 * sp0->lo;
    const int32_t n = sp0->hi - sp0->lo;
    const int32_t in_step_a = g->transposed ? c : input_dims->w * c;
    const int32_t out_step_a = g->transposed ? c : output_dims->w * c;
    pairs_run r[2];
    r[0] = *t;
    r[1] = *t;
    r[0].x = stage + run_x[0];
    r[1].x = stage + run_x[1];
    r[0].n = run_x[2];
    r[1].n = run_x[3];
    const int32_t ob = t->os / 2; /* os: two outputs apart */
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_n = input + (int64_t)b * input_dims->h * input_dims->w * c;
        int8_t *out_n = output + (int64_t)b * output_dims->h * output_dims->w * c;
        for (int32_t oa = 0; oa < g->out_a; oa++) {
            const int8_t *x = in_n + (int64_t)(oa * g->sa - g->pad_a) * in_step_a +
                              (int64_t)(sp0->lo * g->g - g->pad_b) * src->step;
            r[0].out = out_n + (int64_t)oa * out_step_a;
            r[1].out = r[0].out + ob;
            const int32_t *rec = rec0;
            for (int32_t left = c - 4;;) {
                th_dw_pairs_widen(st, x, n, src->k);
                fn(&r[0], rec);
                fn(&r[1], rec + second);
                if (left <= 0) {
                    break;
                }
                const int32_t step = TH_MIN(left, 4);
                left -= step;
                x += step;
                r[0].out += step;
                r[1].out += step;
                rec += rw;
            }
        }
    }
}

/* The pairs variant (lines_variant 2); 0 (nothing written) if a record is refused. */
static int pairs_s8(int32_t *scratch, const pairs_geom *g, const th_dw_conv_params *params,
                    const th_per_channel_quant *quant, const th_dims *input_dims,
                    const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                    const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    const int32_t c = input_dims->c;
    const int32_t blocks = (c >> 2) + ((c & 3) != 0);
    const int32_t rw = pairs_record_words(g->kp);
    int32_t *stage = scratch + (1 + g->split) * blocks * rw;
    const int32_t fb = g->transposed ? filter_dims->w * c : c;
    const int32_t fa = g->transposed ? c : filter_dims->w * c;
    /* Pair j's taps: along, 2 j and 2 j + 1 (an odd KB's last alone); across, (0, j), (1, j). */
    const int32_t pstep = g->across ? fb : 2 * fb, wsecond = g->across ? fa : fb;
    const int32_t pairs = g->across ? g->kb : g->kb >> 1, odd = !g->across && (g->kb & 1);
    /* Block i: channels 4 i .. 4 i + 3, the last one ending at channel C - 1 (it rewrites
     * channels of the one before with the same values). */
    const int32_t full = c >> 2;
    lines_rq_src q;
    lines_rq_init(&q, bias, quant, params->output_offset,
                  filter_dims->h * filter_dims->w, rw, 4 + 4 * g->kp);
    pairs_w_blocks(scratch, rw, filter, full, pstep, wsecond, pairs, odd);
    if (full < blocks) {
        pairs_w_blocks(scratch + full * rw, rw, filter + c - 4, 1, pstep, wsecond, pairs,
                       odd);
    }
    const uint32_t bad = lines_rq_blocks(scratch, &q, 0, full, full < blocks ? c - 4 : -1);
    if ((bad >> 31) != 0) {
        return 0;
    }
    if (g->split) { /* the second phase's records after the first's (same block order) */
        pairs_split_records(scratch, g, c);
    }
    const int32_t in_step_b = g->transposed ? input_dims->w * c : c;
    const int32_t in_step_a = g->transposed ? c : input_dims->w * c;
    const int32_t out_step_b = g->transposed ? output_dims->w * c : c;
    const int32_t out_step_a = g->transposed ? c : output_dims->w * c;
#if TH_NN_DSP_NATIVE
    const pairs_fn fn = pairs_pick(g->kp);
#else
    const pairs_fn fn = pairs_outputs;
#endif
    pairs_src src;
    src.step = in_step_b;
    const int32_t second = g->across ? g->da * in_step_a : g->db * in_step_b;
    src.k[1] = g->p * g->g * in_step_b;
    src.k[PAIRS_OFF] = (int32_t)(((uint32_t)params->input_offset & 0xFFFFu) |
                        ((uint32_t)params->input_offset << 16));
    int32_t zeroed = 0; /* the slots outside the input are 0 */
    /* After the staged line (pairs_bytes), what every line and block shares: the phase
     * rows' spans, and the output runs of a line, one per phase (P of them, or fewer
     * outputs): each's first staged word and outputs. */
    pairs_span *spans = (pairs_span *)(void *)(stage + 4 * g->p * g->phlen);
    for (int32_t ph = 0; ph < g->p; ph++) {
        spans[ph] = pairs_span_of(g, ph);
    }
    /* One phase row and no slot at an edge (no padding along the line): the lines inside
     * are staged by the widening loop straight, the slots outside zeroed once here. */
    const pairs_span *sp0 = spans;
    const int direct =
        g->p == 1 && sp0->elo == sp0->lo && sp0->hi == sp0->ehi && sp0->hi > sp0->lo;
    const int8_t *wx = NULL; /* a line's channel 0 at the first inside slot's position */
    if (direct) {
        pairs_zero_outside(stage, sp0, g->phlen);
        zeroed = 1;
    }
    const int32_t op = g->p << g->split; /* output phases */
    const int32_t runs = TH_MIN(op, g->out_b);
    int32_t *run_x = (int32_t *)(void *)(spans + g->p), *run_n = run_x + runs;
    for (int32_t o0 = 0; o0 < runs; o0++) {
        /* staged index of pair 0 (split: SBG = SB, (o0 SB + e) / 2) */
        const int32_t first = (o0 * g->sbg + g->e) >> g->split;
        run_x[o0] = 4 * ((first % g->p) * g->phlen + first / g->p);
        run_n[o0] = (g->out_b - o0 + op - 1) / op;
    }
    pairs_run r;
    r.xs = 16 * (g->sbg - g->kp);
    r.kp = g->kp;
    r.os = op * out_step_b;
    /* split (one tap across): every line inside where the first and last are */
    if (g->split && direct && g->pad_a <= 0 && (g->out_a - 1) * g->sa - g->pad_a < g->in_a) {
        src.k[PAIRS_SECOND] = second;
        pairs_split_lines(g, &r, &src, scratch, input, input_dims, output, output_dims);
        return 1;
    }
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *in_n = input + (int64_t)n * input_dims->h * input_dims->w * c;
        int8_t *out_n = output + (int64_t)n * output_dims->h * output_dims->w * c;
        for (int32_t oa = 0; oa < g->out_a; oa++) {
            const int32_t ia = oa * g->sa - g->pad_a;
            /* Across: the second line DA on (along: the same line). */
            const int32_t ia1 = g->across ? ia + g->da : ia;
            src.in0 = ia >= 0 && ia < g->in_a;
            src.in1 = ia1 >= 0 && ia1 < g->in_a;
            const int32_t inside = src.in0 | src.in1;
            /* x at the first line, or (second 0) at the second where only it is inside */
            const int8_t *line = in_n + (int64_t)(src.in0 ? ia : inside ? ia1 : 0) * in_step_a;
            src.k[PAIRS_SECOND] = src.in0 ? second : 0;
            int8_t *out_line = out_n + (int64_t)oa * out_step_a;
            if (!inside) { /* a line in the padding: every slot 0 */
                for (int32_t k = 0; k < 4 * g->p * g->phlen; k++) {
                    stage[k] = 0;
                }
                zeroed = 1;
            }
            const int wide = direct && src.in0 && src.in1;
            if (wide) {
                wx = line + (int64_t)(sp0->lo * g->g - g->pad_b) * in_step_b;
                if (runs == 1) {
                    r.x = stage + run_x[0];
                    r.n = run_n[0];
                    r.out = out_line;
                    /* (not split: two runs then) */
                    pairs_line_wide(fn, &r, scratch, rw, stage + 4 * sp0->lo, wx, src.k,
                                    sp0->hi - sp0->lo, c);
                    continue;
                }
            }
            for (int32_t i = 0; i < blocks; i++) {
                const int32_t cb = TH_MIN(4 * i, c - 4);
                src.x = line + cb;
                if (wide) {
                    th_dw_pairs_widen(stage + 4 * sp0->lo, wx + cb, sp0->hi - sp0->lo, src.k);
                } else if (inside) {
                    pairs_stage(stage, &src, g, !zeroed, spans);
                    zeroed = 1;
                }
                if (!g->split) {
                    for (int32_t o0 = 0; o0 < runs; o0++) {
                        r.x = stage + run_x[o0];
                        r.out = out_line + (int64_t)o0 * out_step_b + cb;
                        r.n = run_n[o0];
                        fn(&r, scratch + i * rw);
                    }
                    continue;
                }
                /* split: run 0 and run 1 (SB odd: one of them starts at odd positions from
                 * slot 0, e: run 0; its records the shifted ones, blocks records on) */
                r.x = stage + run_x[0];
                r.out = out_line + cb;
                r.n = run_n[0];
                fn(&r, scratch + (i + (g->e ? blocks : 0)) * rw);
                if (runs > 1) {
                    r.x = stage + run_x[1];
                    r.out = out_line + out_step_b + cb;
                    r.n = run_n[1];
                    fn(&r, scratch + (i + (g->e ? 0 : blocks)) * rw);
                }
            }
        }
    }
    return 1;
}

/* What one taps-variant call shares across its clipped pixels: set on the first one
 * (lines_call_init), so that a call whose windows are all whole (the row loops) does not
 * build it. */
typedef struct {
    dw_lines_job job;          /* step and offset set */
    const dw_lines_job *whole; /* the job of a whole window */
    const th_dw_conv_params *params;
    const th_dims *input_dims, *filter_dims;
    const int32_t *records; /* NULL until lines_call_init */
    const int32_t *rec0;
    int32_t rw, full, tail, tr;
    int32_t h, w, c, kh, kw, sh, sw, dh, dw, ph, pw;
} lines_call;

static void __attribute__((noinline)) lines_call_init(lines_call *q)
{
    const th_dw_conv_params *params = q->params;
    const dw_lines_job *wj = q->whole;
    q->records = q->rec0;
    q->h = q->input_dims->h, q->w = q->input_dims->w, q->c = q->input_dims->c;
    q->kh = q->filter_dims->h, q->kw = q->filter_dims->w;
    q->sh = params->stride.h, q->sw = params->stride.w;
    q->dh = params->dilation.h, q->dw = params->dilation.w;
    q->ph = params->padding.h, q->pw = params->padding.w;
    /* Every field the block loop reads set one by one (copying whole jobs costs a memcpy
     * call); lines_pixel sets the window fields before each use. */
    q->job.step = wj->step;
    q->job.off = wj->off;
    q->job.xs = 0, q->job.os = 0, q->job.blocks = 0, q->job.tail = 0;
}

/* Output pixel (oy, ox) of one batch (in_b, out_px: its first channel), window clipped to
 * the input, all blocks. */
static void lines_pixel(lines_call *q, const int8_t *in_b, int8_t *out_px, int32_t oy,
                        int32_t ox)
{
    if (q->records == NULL) {
        lines_call_init(q);
    }
    int32_t ky0, kx0;
    const int32_t nky = lines_clip(oy, q->sh, q->dh, q->ph, q->h, q->kh, &ky0);
    const int32_t nkx = lines_clip(ox, q->sw, q->dw, q->pw, q->w, q->kw, &kx0);
    const int32_t iy = oy * q->sh - q->ph + ky0 * q->dh;
    const int32_t ix = ox * q->sw - q->pw + kx0 * q->dw;
    const int8_t *x = in_b + ((int64_t)iy * q->w + ix) * q->c;
    const dw_lines_job *job = &q->job;
    dw_lines_job *cj = &q->job;
    const int32_t taps = q->kh * q->kw;
    const int32_t row_bytes = q->w * q->c;
    if (nky == q->kh && nkx == q->kw) {
        job = q->whole;
    } else if (nky == 0 || nkx == 0) { /* every tap in the padding */
        cj->na = 1, cj->nb = 0, cj->wpre = 0, cj->wrow = 0, cj->rowstep = 0;
        x = in_b;
    } else if (!q->tr) {
        cj->na = nky, cj->nb = nkx;
        cj->rowstep = q->dh * row_bytes - nkx * cj->step;
        cj->wpre = 8 * (ky0 * q->kw + kx0);
        cj->wrow = 8 * (q->kw - nkx);
    } else {
        cj->na = nkx, cj->nb = nky;
        cj->rowstep = q->dw * q->c - nky * cj->step;
        cj->wpre = 8 * (kx0 * q->kh + ky0);
        cj->wrow = 8 * (q->kh - nky);
    }
    if (job == cj) {
        cj->wpost = 8 * taps - cj->wpre - 8 * cj->na * cj->nb - cj->wrow * (cj->na - 1);
        cj->xback = cj->na * cj->nb * cj->step + (cj->na - 1) * cj->rowstep - 4;
    }
    if (q->full > 0) {
        th_dw_lines_gen(job, x + q->tail, out_px + q->tail, q->records, q->full);
    }
    if (q->tail != 0) {
        th_dw_lines_gen(job, x, out_px, q->records + q->full * q->rw, 1);
    }
}

int th_dw_lines_s8(const th_context *ctx, int32_t need, const th_dw_conv_params *params,
                   const th_per_channel_quant *quant, const th_dims *input_dims,
                   const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                   const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    if (params->activation.min > -128 || params->activation.max < 127) {
        return 0; /* need > 0 and ctx's room: the caller's (th_dw_lines.h) */
    }
    const int32_t h = input_dims->h, w = input_dims->w, c = input_dims->c;
    const int32_t oh = output_dims->h, ow = output_dims->w;
    /* Element counts below 2^30 (th_nn_check_dw_dims): int32 products. */
    const int8_t *in_end = input + input_dims->n * h * w * c;
    const int8_t *out_end = output + output_dims->n * oh * ow * c;
    if (output < in_end && input < out_end) {
        return 0; /* in place (th_nn.h rule (a)): the rows path copies planes */
    }
    /* The variant from need (lines_variant's choice): the pairs variant's bytes always
     * exceed the taps variant's (4 KP >= 2 taps, and a staged line), so need is the taps
     * variant's bytes only when it runs (checked first: no pairs geometry for it). */
    const int32_t blocks = (input_dims->c >> 2) + ((input_dims->c & 3) != 0);
    const int32_t kh = filter_dims->h, kw = filter_dims->w;
    const int32_t taps = kh * kw;
    const int32_t tr = lines_transposed(filter_dims);
    const int32_t ka = tr ? kw : kh, kb = tr ? kh : kw;
    if (!lines_taps_ok(taps, ka) || need != blocks * 4 * lines_record_words(taps)) {
        pairs_geom pg;
        if (pairs_geometry(params, input_dims, filter_dims, output_dims, &pg) &&
            need == pairs_bytes(&pg, blocks)) {
            return pairs_s8((int32_t *)ctx->buf, &pg, params, quant, input_dims, input,
                            filter_dims, filter, bias, output_dims, output);
        }
        return 0;
    }
    const int32_t rw = lines_record_words(taps);
    const int32_t tail = c & 3;
    const int32_t full = c >> 2;
    int32_t *records = (int32_t *)ctx->buf;
    const int32_t fa = tr ? c : kw * c, fb = tr ? kw * c : c;
    /* The full blocks' records, then the tail's (channels 0-3). */
    lines_rq_src rq;
    lines_rq_init(&rq, bias, quant, params->output_offset, taps, rw, 4 + 2 * taps);
    uint32_t bad;
#if TH_NN_DSP_NATIVE
    if (ka == 1 && bias != NULL) { /* one call, the tail's record in it */
        const dw_lines_rec_job rj = {bias + tail, rq.shift + tail, rq.mult + tail, rq.z1,
                                     rq.lim, filter + tail, fb, kb, tail, bias, rq.shift,
                                     rq.mult, filter};
        bad = th_dw_lines_rec(records, &rj, full);
    } else
#endif
    {
        lines_w_blocks(records, rw, filter + tail, full, fa, fb, ka, kb);
        if (tail != 0) {
            lines_w_blocks(records + full * rw, rw, filter, 1, fa, fb, ka, kb);
        }
        bad = lines_rq_blocks(records, &rq, tail, full, tail != 0 ? 0 : -1);
    }
    if ((bad >> 31) != 0) {
        return 0;
    }
    const int32_t sh = params->stride.h, sw = params->stride.w;
    const int32_t dh = params->dilation.h, dwl = params->dilation.w;
    const int32_t ph = params->padding.h, pw = params->padding.w;
    const int32_t row_bytes = w * c;
    /* The job of a whole window (most pixels): fields fixed per call, set one by one. */
    dw_lines_job whole;
    dw_lines_job *wj = &whole;
    wj->step = tr ? dh * row_bytes : dwl * c;
    wj->off = (int32_t)(((uint32_t)params->input_offset & 0xFFFFu) |
                        ((uint32_t)params->input_offset << 16));
    wj->na = ka;
    wj->nb = kb;
    wj->rowstep = tr ? dwl * c - kh * wj->step : dh * row_bytes - kw * wj->step;
    wj->wpre = 0;
    wj->wrow = 0;
    wj->wpost = 0;
    wj->xback = ka * kb * wj->step + (ka - 1) * wj->rowstep - 4;
    lines_call q; /* the clipped pixels' (lines_pixel): the rest on first use */
    q.whole = wj;
    q.params = params;
    q.input_dims = input_dims;
    q.filter_dims = filter_dims;
    q.records = NULL;
    q.rec0 = records;
    q.rw = rw;
    q.full = full;
    q.tail = tail;
    q.tr = tr;
    /* One-row windows: per line (A), the pixels whose window is whole ([lo, hi) along B) run
     * as one line loop call per block; the others one by one. */
    const int32_t out_a = ka == 1 ? (tr ? ow : oh) : oh * ow;
    const int32_t out_b = ka == 1 ? (tr ? oh : ow) : 1;
    const int32_t in_a = tr ? w : h, sa = tr ? sw : sh, pad_a = tr ? pw : ph;
    const int32_t sb = tr ? sh : sw, db = tr ? dh : dwl, pad_b = tr ? ph : pw;
    const int32_t in_bl = tr ? h : w;
    const int32_t xa = tr ? c : row_bytes, xb = tr ? row_bytes : c;
    const int32_t oa_bytes = tr ? c : ow * c, ob_bytes = tr ? ow * c : c;
    int32_t lo = out_b, hi = out_b;
    if (ka == 1) {
        lo = TH_MIN((pad_b + sb - 1) / sb, out_b);
        const int32_t last = in_bl - 1 + pad_b - (kb - 1) * db;
        hi = last < 0 ? lo : TH_MAX(TH_MIN(last / sb + 1, out_b), lo);
    }
    wj->xs = sb * xb; /* the row loops' pixel steps (the others ignore them) */
    wj->os = ob_bytes;
    wj->blocks = full;
    wj->tail = tail;
    /* K <= 3: a line's whole windows in one row loop call, the tail's block in it (any
     * block count: the row loop's per-pixel cost is 7, 11 with a tail). */
    const int32_t use_line = kb <= DW_LINE_MAX_K;
    const dw_lines_fn line_fn = use_line ? lines_line_fn(kb, tail) : th_dw_lines_gen;
    /* Called for one-row windows only (at most DW_LINES_MAX_TAPS taps); 2-D windows run
     * lines_pixel. */
    const dw_lines_fn full_fn = lines_full_fn(TH_MIN(kb, DW_LINES_MAX_TAPS));
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *in_b = input + n * h * row_bytes;
        int8_t *out_b0 = output + n * oh * ow * c;
        for (int32_t oa = 0; oa < out_a; oa++) {
            if (ka != 1) { /* 2-D windows: pixel oa in HW order */
                lines_pixel(&q, in_b, out_b0 + oa * c, oa / ow, oa % ow);
                continue;
            }
            const int32_t ia = oa * sa - pad_a;
            const int32_t run = ia >= 0 && ia < in_a ? hi - lo : 0;
            int8_t *out_line = out_b0 + oa * oa_bytes;
            for (int32_t ob = 0; ob < out_b; ob++) {
                if (ob == lo && run > 0 && !use_line) { /* whole windows, pixel by pixel */
                    const int8_t *x = in_b + ia * xa + (lo * sb - pad_b) * xb;
                    int8_t *o = out_line + lo * ob_bytes;
                    for (int32_t i = run; i > 0; i--, x += wj->xs, o += ob_bytes) {
                        if (full > 0) {
                            full_fn(wj, x + tail, o + tail, records, full);
                        }
                        if (tail != 0) {
                            full_fn(wj, x, o, records + full * rw, 1);
                        }
                    }
                    ob = hi - 1;
                    continue;
                }
                if (ob == lo && run > 0) {
                    const int8_t *x = in_b + ia * xa + (lo * sb - pad_b) * xb;
                    int8_t *o = out_line + lo * ob_bytes;
                    line_fn(wj, x, o, records, run); /* full >= 1 (C >= 4) */
                    ob = hi - 1;
                    continue;
                }
                lines_pixel(&q, in_b, out_line + ob * ob_bytes, tr ? ob : oa, tr ? oa : ob);
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
