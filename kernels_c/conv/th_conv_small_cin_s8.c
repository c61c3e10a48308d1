/* th_nn_conv_small_cin_s8: CONV_2D with few input channels (first layers), DSP builds.
 *
 * The int16 im2col of the general path costs more than the MACs when Cin is 1-3. Here the
 * input an output row needs is staged once per row as "column blocks": for every input
 * column (padding included) its KH * Cin values, raw (no offset; padding as -input_offset,
 * so that the offset folds into the bias: bias' = bias + input_offset * sum(w), exact mod
 * 2^32), in a fixed order within the block. An output pixel's whole receptive field is then
 * KW consecutive blocks: kw_words int16 pairs at an even offset. The weights are re-arranged
 * once per call into the same order, doubled (saves the LSL of th_fast_rq_apply2), as int16
 * pairs, with the requantization constants, in a record stream the MAC loop reads with one
 * pointer: per block of 4 output channels, chunks of 4 words (one LDM of the pixel's 4
 * column words, four LDMs of the 4 channels' weight words, 16 SMLAD), an optional tail of
 * 2 words, the 12 constants, then the next block's 4 (doubled) biases and the address to go
 * on at: one LDM {r0-r3, pc} per block starts it. Cout % 4 != 0 (path CONV_SMALL_CIN_PART):
 * the last Cout % 4 channels are blocks of one channel each (chunks of one LDM of the column
 * words, one of the channel's, 4 SMLAD; 3 constants), which write only their own byte: a
 * padded block of 4 cost 21 instructions a chunk for 1-3 useful channels, and its outputs a
 * copy (k4x4 Cin 2 Cout 5: 252 -> 154 instructions per pixel).
 *
 * Applies (th_nn_small_cin_geometry) to groups 1, dilation 1, Cin <= 3 and small enough
 * filters; runs when the fast requantization is exact for every channel and
 * there is no activation clamp (otherwise the caller takes th_nn_conv_im2col_s8, whose
 * scratch the kernels reserve too). Raster order (th_nn.h rule (c)): an output row's input
 * is staged before any of its outputs is written, and only rows of pixels not yet written
 * are read.
 *
 * A one-row or one-column image (one output row or column, SAME padding) meets one filter
 * row or column only; path CONV_SMALL_CIN_LINE builds the records of that line alone (the
 * other taps multiply padding, which contributes 0): a smaller geometry in the same scratch.
 * A one-column image (one output column) runs as the one-row image it is in memory
 * (small_cin_view; the scratch has room for both geometries).
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP

/* Largest chunk count of the unrolled MAC sequence and largest record stream; given
 * th_nn_conv_small_cin_scratch_fast (path CONV_SMALL_CIN_WIDE, general conv only), streams up
 * to 2 KB: 37x29x3->19 k9x1 s2 (1,452 B) ran im2col at 0.416 MAC/instruction. */
#define TH_SC_MAX_CHUNKS 8
#define TH_SC_MAX_RECORD_BYTES 1024
#define TH_SC_MAX_RECORD_BYTES_FAST 2048
/* Given the same fast scratch (path CONV_SMALL_CIN_LONG), a layer of Cout < 4 (one-channel
 * blocks only) takes fields of up to 16 chunks: its staged tile outgrows the base scratch
 * (53x22x3->1 k5x5, 10 chunks: 852 B against im2col's 304 B), and the im2col it ran instead
 * spent 189 instructions per 75 MACs. */
#define TH_SC_MAX_CHUNKS_ONE 16
/* Output pixels staged at a time (scratch: their columns only); with fields of 9-16 chunks
 * (path CONV_SMALL_CIN_LONG), whose one-channel blocks amortize the staging over few MACs,
 * up to 32 (53x22x3->1 k5x5: one tile a row, not 16 + 6). */
#define TH_SC_TILE 16
#define TH_SC_TILE_LONG 32

typedef struct {
    int32_t bp; /* values per column block (KH * Cin, + 1 if needed for even offsets) */
    int32_t kw_words; /* int16 pairs per receptive field, even */
    int32_t chunks; /* kw_words / 4 */
    int32_t tail; /* kw_words % 4: 0 or 2 */
    int32_t quads; /* Cout / 4: blocks of 4 channels */
    int32_t quad_words; /* record words per block of 4 channels (trailer included) */
    int32_t singles; /* Cout % 4: blocks of one channel (path CONV_SMALL_CIN_PART) */
    int32_t single_words; /* record words per block of one channel (trailer included) */
    int32_t record_words;
    int32_t stage_values; /* int16 values of the staged row */
    int32_t tile; /* output pixels staged at a time */
} th_sc_geometry;

/* The geometry of Cin <= 3 values a tap, a kh x kw filter (the kept taps), Cout channels and
 * output rows of ow pixels at stride stride_w, with the base scratch's limits or (fast) those
 * of the fast scratch; 0 when over them. Scalars, so that a view's geometry needs no
 * th_conv_params / th_dims built for it. */
static int geometry_of(th_sc_geometry *g, int32_t cin, int32_t kh, int32_t kw,
                       int32_t stride_w, int32_t cout, int32_t ow, int fast)
{
    const int32_t cap = fast && TH_NN_KEEP_CONV_SMALL_CIN_WIDE ? TH_SC_MAX_RECORD_BYTES_FAST
                                                               : TH_SC_MAX_RECORD_BYTES;
    const int long_fields = fast && TH_NN_KEEP_CONV_SMALL_CIN_LONG &&
                            TH_NN_KEEP_CONV_SMALL_CIN_PART && cout < 4;
    const int32_t max_chunks = long_fields ? TH_SC_MAX_CHUNKS_ONE : TH_SC_MAX_CHUNKS;
    const int32_t b = kh * cin;
    g->bp = b + ((b * stride_w) & 1);
    const int32_t field = kw * g->bp;
    /* (shifts: the counts are not negative) */
    g->kw_words = (((field + 1) >> 1) + 1) & ~1;
    g->chunks = g->kw_words >> 2;
    g->tail = g->kw_words & 3;
    if (g->chunks > max_chunks) {
        return 0;
    }
    g->quads = cout >> 2;
    g->quad_words = 4 * g->kw_words + 12 + 5;
    /* (a build without path CONV_SMALL_CIN_PART runs no such blocks: needs no room) */
    g->singles = TH_NN_KEEP_CONV_SMALL_CIN_PART ? cout & 3 : 0;
    g->single_words = g->kw_words + 3 + 5;
    g->record_words = 5 + g->quads * g->quad_words + g->singles * g->single_words;
    if (4 * g->record_words > cap) {
        return 0;
    }
    const int32_t tile = TH_MIN(ow, long_fields ? TH_SC_TILE_LONG : TH_SC_TILE);
    g->tile = tile;
    /* the last pixel's field read as kw_words words: past the tile's columns
     * ((tile - 1) * stride_w + kw of bp values; 2 * kw_words >= kw * bp), and even
     * (stride_w * bp is: bp's parity term) */
    g->stage_values = (tile - 1) * stride_w * g->bp + 2 * g->kw_words;
    return 1;
}

/* The layer's geometry (geometry_of), 0 where the path does not apply. */
static int geometry(const th_conv_params *params, const th_dims *input_dims,
                    const th_dims *filter_dims, const th_dims *output_dims, int fast,
                    th_sc_geometry *g)
{
    const int32_t cin = input_dims->c;
    if (cin != filter_dims->c || cin > 3 || params->dilation.h != 1 ||
        params->dilation.w != 1) {
        return 0;
    }
    return geometry_of(g, cin, filter_dims->h, filter_dims->w, params->stride.w,
                       output_dims->c, output_dims->w, fast);
}

TH_INLINE int32_t scratch_bytes(const th_sc_geometry *g)
{
    return 4 * g->record_words + 2 * g->stage_values;
}

/* The scratch with the base (fast) scratch's limits, 0 when the path does not apply. */
static int32_t small_cin_scratch(const th_conv_params *params, const th_dims *input_dims,
                                 const th_dims *filter_dims, const th_dims *output_dims,
                                 int fast)
{
    th_sc_geometry g;
    if (!geometry(params, input_dims, filter_dims, output_dims, fast, &g)) {
        return 0;
    }
    int32_t bytes = scratch_bytes(&g);
    if (TH_NN_KEEP_CONV_SMALL_CIN_LINE && input_dims->w == 1 && output_dims->w == 1 &&
        output_dims->h > 1) {
        /* a one-column image: room for its one-row view too (small_cin_view; a build
         * without that path needs no more than the layer's own geometry) */
        if (geometry_of(&g, input_dims->c, 1, filter_dims->h, params->stride.h,
                        output_dims->c, output_dims->h, fast)) {
            bytes = TH_MAX(bytes, scratch_bytes(&g));
        }
    }
    return bytes;
}

int32_t th_nn_conv_small_cin_scratch(const th_conv_params *params, const th_dims *input_dims,
                                     const th_dims *filter_dims, const th_dims *output_dims)
{
    return small_cin_scratch(params, input_dims, filter_dims, output_dims, 0);
}

int32_t th_nn_conv_small_cin_scratch_fast(const th_conv_params *params,
                                          const th_dims *input_dims,
                                          const th_dims *filter_dims,
                                          const th_dims *output_dims)
{
    if (!TH_NN_KEEP_CONV_SMALL_CIN_WIDE && !TH_NN_KEEP_CONV_SMALL_CIN_LONG) {
        return 0;
    }
    /* only where the base limits turn the layer away (the fast ones first: they reject most
     * layers alone, and this size is asked on target too) */
    const int32_t fast = small_cin_scratch(params, input_dims, filter_dims, output_dims, 1);
    return fast != 0 && small_cin_scratch(params, input_dims, filter_dims, output_dims, 0) == 0
               ? fast
               : 0;
}

/* Position of tap (ky, ci) inside a column block: Cin == 3 stores each row's values as
 * (c0, c2, c1), the order one word load and two SXTB16 give. */
TH_INLINE int32_t block_pos(int32_t ky, int32_t ci, int32_t cin)
{
    if (cin == 3) {
        return 3 * ky + (ci == 0 ? 0 : (ci == 2 ? 1 : 2));
    }
    return ky * cin + ci;
}

/* The taps a call keeps (th_sc_view): its tap (ky, kx, ci) is filter tap
 * k0 + ky * k_row + kx * k_col + ci. */
typedef struct {
    th_dims dims; /* the kept taps: n = Cout, h x w, c = Cin */
    int32_t k0;
    int32_t k_row;
    int32_t k_col;
} th_sc_taps;

/* Zeroes n words, 4 a store group (a memset call of the whole 47-word record took 143
 * instructions on 22x1x2->11x1x3 k5x5); the empty asm keeps the compiler from turning the
 * loop back into a memset call. */
TH_INLINE void zero_words(int32_t *p, int32_t n)
{
    for (; n >= 4; n -= 4, p += 4) {
        p[0] = 0;
        p[1] = 0;
        p[2] = 0;
        p[3] = 0;
#if defined(__GNUC__)
        __asm__("" : "+r"(p));
#endif
    }
    for (; n > 0; n--, p++) {
        *p = 0;
#if defined(__GNUC__)
        __asm__("" : "+r"(p));
#endif
    }
}

/* The record stream (see the file comment): the taps *t of a filter of k_total taps per
 * channel; the bias folds the input offset of the kept taps only. A block of `width`
 * channels (4, or 1 for the last Cout % 4) holds, channel i at word i * 4 of each, chunks of
 * 4 * width words, the tail (2 * width words), then 3 * width constants; its biases are the
 * 5-word trailer before it (the previous block's, or the stream head). Built a group at a
 * time (a block of 4, or all the blocks of one): each tap's record slot, from its position
 * in the column blocks, and its filter index are found once for the group's channels (one
 * channel at a time cost ~27 instructions a tap; ResNet-8's first layer has 432 a call).
 * Channel j's weight k at f[j] + (k / 4) * kg[j] + k % 4 (th_filter_index: 4 consecutive
 * k are adjacent in every layout). */
static void build_records(int32_t *rec, const th_sc_geometry *g, const th_conv_params *params,
                          const th_per_channel_quant *quant, const th_sc_taps *t,
                          int32_t k_total, const int8_t *filter, const int32_t *bias,
                          int32_t output_offset)
{
    const int32_t cin = t->dims.c;
    const int32_t kh = t->dims.h;
    const int32_t kwid = t->dims.w;
    const int32_t cout = t->dims.n;
    const int32_t k0 = t->k0; /* (locals: the stores below may alias *t for the compiler) */
    const int32_t k_rows = t->k_row;
    const int32_t k_col = t->k_col;
    const int32_t bp = g->bp;
    const int32_t chunk_words = 4 * g->chunks;
    const uint32_t input_offset = (uint32_t)params->input_offset;
    for (int32_t c0 = 0; c0 < cout;) {
        /* (a build without path CONV_SMALL_CIN_PART takes Cout % 4 == 0 only) */
        const int32_t quad = !TH_NN_KEEP_CONV_SMALL_CIN_PART || c0 / 4 < g->quads;
        const int32_t n = quad ? 4 : cout - c0;
        const int32_t width = quad ? 4 : 1;
        int32_t *words = rec + 5 + (quad ? (c0 / 4) * g->quad_words : g->quads * g->quad_words);
        int16_t *body = (int16_t *)(void *)words;
        /* halfwords from channel j to j + 1: within a block of 4, or block to block */
        const int32_t chunk_step = quad ? 8 : 2 * g->single_words;
        const int32_t tail_step = quad ? 4 : 2 * g->single_words;
        /* channel j's weights (k at f + (k / 4) * kg + k % 4) and their sum, together:
         * one pointer walks them in the loop over the channels */
        struct {
            const int8_t *f;
            int32_t kg;
            uint32_t sum;
        } ch[4];
        /* the group's words from its first weight to its last (taps leave some values
         * unwritten); the stream before, written below or by mac_row, or loaded and unused
         * (the 3 unused bias slots of a one-channel block's trailer), needs none */
        zero_words(words, quad ? 4 * g->kw_words : (n - 1) * g->single_words + g->kw_words);
        for (int32_t j = 0; j < n; j++) {
            const int32_t base = th_filter_index(c0 + j, 0, k_total, cout, TH_CONV_BLOCK);
            ch[j].f = filter + base;
            ch[j].kg = th_filter_index(c0 + j, 4, k_total, cout, TH_CONV_BLOCK) - base;
            ch[j].sum = 0;
        }
        /* a (ky, ci) at a time: its taps are bp values and k_col weights apart */
        for (int32_t ky = 0; ky < kh; ky++) {
            for (int32_t ci = 0; ci < cin; ci++) {
                int32_t pos = block_pos(ky, ci, cin);
                int32_t kk = k0 + ky * k_rows + ci;
                for (int32_t kx = 0; kx < kwid; kx++, pos += bp, kk += k_col) {
                    /* value pos & 1 of word m (its weight words are zeroed): chunk m / 4
                     * holds 4 words per channel; the tail (m >= chunk_words, m % 4 < 2)
                     * 2, which the same offset gives */
                    const int32_t m = pos >> 1;
                    int16_t *d = body + (m >> 2) * 8 * width + (m & 3) * 2 + (pos & 1);
                    const int32_t step = m < chunk_words ? chunk_step : tail_step;
                    const int32_t kq = kk >> 2;
                    const int32_t kr = kk & 3;
                    for (int32_t j = 0; j < n; j++, d += step) {
                        const int32_t w = ch[j].f[kq * ch[j].kg + kr];
                        ch[j].sum += (uint32_t)w;
                        th_write_s16(d, (int16_t)(2 * w));
                    }
                }
            }
        }
        for (int32_t j = 0; j < n; j++) {
            const int32_t c = c0 + j;
            const int32_t i = quad ? j : 0;
            int32_t *block = quad ? words : words + j * g->single_words;
            const uint32_t b = bias != NULL ? (uint32_t)bias[c] : 0u;
            /* the bias slot: the trailer of the block before (or the stream head) */
            block[i - 5] = (int32_t)(2u * (b + input_offset * ch[j].sum));
            const th_fast_rq rq = th_fast_rq_make(quant->multiplier[c], quant->shift[c],
                                                  output_offset);
            int32_t *k3 = block + width * g->kw_words + 3 * i;
            k3[0] = rq.multiplier;
            k3[1] = rq.round_zp;
            k3[2] = rq.e;
        }
        c0 += n;
    }
}

/* Widens n columns of Cin == 3 (not the row's last) into column blocks bp values apart,
 * each as (c0, c2, c1) at its row's slot: one word load, two SXTB16, two stores. */
TH_INLINE void widen3(int16_t *d, const int8_t *s, int32_t n, int32_t bp)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    const int32_t step = 2 * bp;
    int32_t v;
    int32_t lo;
    int32_t hi;
    if (n <= 0) {
        return;
    }
    __asm__ volatile("1:\n\t"
                     "ldr %[v], [%[s]], #3\n\t"
                     "sxtb16 %[lo], %[v]\n\t"
                     "sxtb16 %[hi], %[v], ror #8\n\t"
                     "strh %[hi], [%[d], #4]\n\t"
                     "str %[lo], [%[d]]\n\t"
                     "add %[d], %[d], %[step]\n\t"
                     "subs %[n], %[n], #1\n\t"
                     "bne 1b\n\t"
                     : [s] "+r"(s), [d] "+r"(d), [n] "+r"(n), [v] "=&r"(v), [lo] "=&r"(lo),
                       [hi] "=&r"(hi)
                     : [step] "r"(step)
                     : "cc", "memory");
#else
    for (; n > 0; n--, s += 3, d += bp) {
        const int32_t v = th_read_s32(s);
        th_write_s32(d, th_sxtb16(v));
        th_write_s16(d + 2, (int16_t)th_sxtb16_ror8(v));
    }
#endif
}

/* Widens n columns of Cin == 1 into column blocks bp values apart, two at a time. */
TH_INLINE void widen1(int16_t *d, const int8_t *s, int32_t n, int32_t bp)
{
#if defined(__GNUC__)
    /* n opaque here, and an end pointer: no trip count or final pointers that gcc would
     * hoist out of stage_tile's row loop, for every Cin 2-3 tile to pay (~12 instructions;
     * vww's first layer has 144 tiles) */
    __asm__ volatile("" : "+r"(n));
#endif
    for (const int8_t *e = s + (n & ~1); s != e; s += 2, d += 2 * bp) {
        const int16_t a = s[0];
        const int16_t b = s[1];
        d[0] = a;
        d[bp] = b;
    }
    if ((n & 1) != 0) {
        d[0] = s[0];
    }
}

/* Widens n columns of Cin == 2 (a column's two values at an even slot: bp and the row's
 * slot are even) into column blocks bp values apart: a halfword load, its bytes moved to
 * 0 and 2, one SXTB16, one word store. */
TH_INLINE void widen2(int16_t *d, const int8_t *s, int32_t n, int32_t bp)
{
    for (; n > 0; n--, s += 2, d += bp) {
        uint16_t h;
        memcpy(&h, s, sizeof h);
        const uint32_t v = (uint32_t)h | ((uint32_t)h << 8);
        th_write_s32(d, th_sxtb16((int32_t)v));
    }
}

TH_INLINE void fill_cols(int16_t *d, int32_t n, int32_t bp, int32_t cin, int16_t pad)
{
    for (; n > 0; n--, d += bp) {
        for (int32_t ci = 0; ci < cin; ci++) {
            d[ci] = pad;
        }
    }
}

/* Stages the receptive fields of output pixels [ox0, ox0 + npix) of row oy: column xc (input
 * x = ox0 * stride - pad_l + xc) at stage[xc * bp], padding as -input_offset. edges 0: the
 * padding columns left and right of the input are as the previous call left them (one tile
 * a row: the same columns every call, which nothing else writes). */
static void stage_tile(int16_t *stage, const th_sc_geometry *g, const int8_t *input,
                       const th_dims *input_dims, const th_conv_params *params,
                       const th_dims *filter_dims, int32_t oy, int32_t ox0, int32_t npix,
                       int edges)
{
    const int32_t cin = input_dims->c;
    const int32_t w_in = input_dims->w;
    const int32_t bp = g->bp;
    const int32_t cols = (npix - 1) * params->stride.w + filter_dims->w;
    const int32_t x0 = ox0 * params->stride.w - params->padding.w;
    const int16_t pad = (int16_t)(-params->input_offset);
    /* columns [xs, xe) are inside the input */
    const int32_t xs = TH_MIN(cols, TH_MAX(0, -x0));
    const int32_t xe = TH_MAX(xs, TH_MIN(cols, w_in - x0));
    for (int32_t ky = 0; ky < filter_dims->h; ky++) {
        const int32_t y = oy * params->stride.h - params->padding.h + ky;
        int16_t *d = stage + ky * cin;
        if (y < 0 || y >= input_dims->h || xe <= xs) {
            fill_cols(d, cols, bp, cin, pad);
            continue;
        }
        if (edges) {
            fill_cols(d, xs, bp, cin, pad);
            fill_cols(d + xe * bp, cols - xe, bp, cin, pad);
        }
        const int8_t *s = input + ((int64_t)y * w_in + (xs + x0)) * cin;
        int16_t *dc = d + xs * bp;
        const int32_t n = xe - xs;
        if (cin == 3) {
            /* word loads except for the last input row's last column (no read past the
             * input; the byte after another row's end is the next row's, in place not yet
             * written, rule (c), and its value is dropped) */
            const int32_t words = xe + x0 < w_in || y + 1 < input_dims->h ? n : n - 1;
            widen3(dc, s, words, bp);
            if (words < n) {
                s += 3 * words;
                dc += bp * words;
                dc[0] = s[0];
                dc[1] = s[2];
                dc[2] = s[1];
            }
        } else if (cin == 1) {
            widen1(dc, s, n, bp);
        } else {
            widen2(dc, s, n, bp);
        }
    }
    /* (a column's extra slot and the values after the last column are not written: their
     * record weights are 0, so they add 0 whatever they hold) */
}

/* One output row (npix pixels) of the MAC + requantization loop. */
typedef struct {
    const int16_t *x; /* first pixel's receptive field */
    int32_t x_step; /* bytes between pixels */
    int32_t npix;
    int32_t *rec;
    int8_t *out;
    int32_t quads;
    int32_t quad_bytes;
    int32_t chunks;
    int32_t tail;
    int32_t singles;
    int32_t single_bytes;
} th_sc_row;

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__) && defined(__GNUC__)
/* Registers: accumulators r0-r3 (channels 0-3 of the block, doubled), column words r4-r7,
 * weight words r8-r11, column pointer ip, record pointer lr. Frame: [sp] out, [sp, #4]
 * column base, [sp, #8] x_step, [sp, #12] pixels left, [sp, #16] record start. The
 * record's address slots are written at entry: the chunk sequence entered so that exactly
 * `chunks` chunks run (84 bytes each; a one-channel block's, 24), with or without the tail,
 * or the pixel end. */
#define TH_SC_CHUNK \
    "ldmia.w ip!, {r4, r5, r6, r7}\n\t" \
    "ldmia.w lr!, {r8, r9, r10, r11}\n\t" \
    "smlad r0, r4, r8, r0\n\t" \
    "smlad r0, r5, r9, r0\n\t" \
    "smlad r0, r6, r10, r0\n\t" \
    "smlad r0, r7, r11, r0\n\t" \
    "ldmia.w lr!, {r8, r9, r10, r11}\n\t" \
    "smlad r1, r4, r8, r1\n\t" \
    "smlad r1, r5, r9, r1\n\t" \
    "smlad r1, r6, r10, r1\n\t" \
    "smlad r1, r7, r11, r1\n\t" \
    "ldmia.w lr!, {r8, r9, r10, r11}\n\t" \
    "smlad r2, r4, r8, r2\n\t" \
    "smlad r2, r5, r9, r2\n\t" \
    "smlad r2, r6, r10, r2\n\t" \
    "smlad r2, r7, r11, r2\n\t" \
    "ldmia.w lr!, {r8, r9, r10, r11}\n\t" \
    "smlad r3, r4, r8, r3\n\t" \
    "smlad r3, r5, r9, r3\n\t" \
    "smlad r3, r6, r10, r3\n\t" \
    "smlad r3, r7, r11, r3\n\t"
#define TH_SC_CHUNKS8 \
    TH_SC_CHUNK TH_SC_CHUNK TH_SC_CHUNK TH_SC_CHUNK \
    TH_SC_CHUNK TH_SC_CHUNK TH_SC_CHUNK TH_SC_CHUNK
/* A one-channel block's chunk: its 4 column words, 4 weight words. */
#define TH_SC_CHUNK1 \
    "ldmia.w ip!, {r4, r5, r6, r7}\n\t" \
    "ldmia.w lr!, {r8, r9, r10, r11}\n\t" \
    "smlad r0, r4, r8, r0\n\t" \
    "smlad r0, r5, r9, r0\n\t" \
    "smlad r0, r6, r10, r0\n\t" \
    "smlad r0, r7, r11, r0\n\t"
#define TH_SC_CHUNKS1_8 \
    TH_SC_CHUNK1 TH_SC_CHUNK1 TH_SC_CHUNK1 TH_SC_CHUNK1 \
    TH_SC_CHUNK1 TH_SC_CHUNK1 TH_SC_CHUNK1 TH_SC_CHUNK1
/* The one-channel sequences: 16 chunks where path CONV_SMALL_CIN_LONG is kept. */
#if TH_NN_KEEP_CONV_SMALL_CIN_LONG
#define TH_SC_CHUNKS1 TH_SC_CHUNKS1_8 TH_SC_CHUNKS1_8
#define TH_SC_CHUNKS1_N "16"
#else
#define TH_SC_CHUNKS1 TH_SC_CHUNKS1_8
#define TH_SC_CHUNKS1_N "8"
#endif
#define TH_SC_TAIL1(acc) \
    "ldrd r8, r9, [lr], #8\n\t" \
    "smlad " acc ", r4, r8, " acc "\n\t" \
    "smlad " acc ", r5, r9, " acc "\n\t"
#define TH_SC_RQ(acc, m, r, e) \
    "smmlar r10, " acc ", " m ", " r "\n\t" \
    "add.w " acc ", r10, " acc ", asr #31\n\t" \
    "asr.w " acc ", " acc ", " e "\n\t" \
    "ssat " acc ", #8, " acc "\n\t"

#if TH_NN_KEEP_CONV_SMALL_CIN_PART
/* Entry: the address slots of the one-channel blocks (after the blocks of 4: r4 the next
 * slot; r7 chunks, r8 tail). */
#define TH_SC_SINGLES_ENTRY \
    "2:\n\t" \
    "ldrd r5, r6, [r0, #36]\n\t"   /* singles, single_bytes */ \
    "cbz r5, 3f\n\t" \
    "adr.w r9, 17f\n\t" \
    "adr.w r10, 16f\n\t" \
    "cmp r8, #0\n\t" \
    "it ne\n\t" \
    "movne r9, r10\n\t" \
    "movs r10, #24\n\t" \
    "mls r9, r7, r10, r9\n\t" \
    "orr r9, r9, #1\n\t" \
    "1:\n\t" \
    "str r9, [r4]\n\t" \
    "add r4, r4, r6\n\t" \
    "subs r5, r5, #1\n\t" \
    "bne 1b\n\t" \
    "3:\n\t"
/* The one-channel block: chunks, tail, requantization, its one output byte. */
#define TH_SC_SINGLES_CODE \
    ".p2align 2\n\t" \
    "15:\n\t" \
    TH_SC_CHUNKS1 \
    "16:\n\t" \
    "ldrd r4, r5, [ip]\n\t" \
    TH_SC_TAIL1("r0") \
    "b 17f\n\t" \
    ".p2align 2\n\t" \
    "14:\n\t" \
    TH_SC_CHUNKS1 \
    "17:\n\t" \
    ".if (17b - 14b) != " TH_SC_CHUNKS1_N " * 24\n\t" \
    ".error \"chunk size\"\n\t" \
    ".endif\n\t" \
    ".if (16b - 15b) != " TH_SC_CHUNKS1_N " * 24\n\t" \
    ".error \"chunk size\"\n\t" \
    ".endif\n\t" \
    "ldmia.w lr!, {r4, r5, r6}\n\t" \
    TH_SC_RQ("r0", "r4", "r5", "r6") \
    "ldr ip, [sp, #0]\n\t" \
    "strb r0, [ip], #1\n\t" \
    "str ip, [sp, #0]\n\t" \
    "ldr ip, [sp, #4]\n\t" \
    "ldmia.w lr!, {r0, r1, r2, r3, pc}\n\t"
#else
#define TH_SC_SINGLES_ENTRY ""
#define TH_SC_SINGLES_CODE ""
#endif
/* Blocks of 4 may be none only where blocks of one exist. */
#if TH_NN_KEEP_CONV_SMALL_CIN_PART
#define TH_SC_NO_QUADS "cbz r5, 2f\n\t"
#else
#define TH_SC_NO_QUADS ""
#endif

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline)) mac_row(const th_sc_row *a)
{
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #24\n\t"
        "ldrd r1, r2, [r0, #0]\n\t"    /* x, x_step */
        "ldrd r3, r4, [r0, #8]\n\t"    /* npix, rec */
        "ldr r5, [r0, #16]\n\t"        /* out */
        "str r5, [sp, #0]\n\t"
        "strd r1, r2, [sp, #4]\n\t"
        "strd r3, r4, [sp, #12]\n\t"
        "ldrd r5, r6, [r0, #20]\n\t"   /* quads, quad_bytes */
        "ldrd r7, r8, [r0, #28]\n\t"   /* chunks, tail */
        "adr.w r9, 7f\n\t"             /* end of the chunks without tail */
        "adr.w r10, 6f\n\t"            /* end of the chunks with tail */
        "cmp r8, #0\n\t"
        "it ne\n\t"
        "movne r9, r10\n\t"
        "movs r10, #84\n\t"
        "mls r9, r7, r10, r9\n\t"
        "orr r9, r9, #1\n\t"
        "add r4, r4, #16\n\t"          /* the first address slot */
        TH_SC_NO_QUADS
        "1:\n\t"
        "str r9, [r4]\n\t"
        "add r4, r4, r6\n\t"
        "subs r5, r5, #1\n\t"
        "bne 1b\n\t"
        TH_SC_SINGLES_ENTRY
        "adr.w r10, 8f\n\t"
        "orr r10, r10, #1\n\t"
        "str r10, [r4]\n\t"
        "mov ip, r1\n\t"
        "ldr lr, [sp, #16]\n\t"
        "ldmia.w lr!, {r0, r1, r2, r3, pc}\n\t"
        ".p2align 2\n\t"
        "5:\n\t"
        TH_SC_CHUNKS8
        "6:\n\t"
        "ldrd r4, r5, [ip]\n\t"
        TH_SC_TAIL1("r0")
        TH_SC_TAIL1("r1")
        TH_SC_TAIL1("r2")
        TH_SC_TAIL1("r3")
        "b 7f\n\t"
        ".p2align 2\n\t"
        "4:\n\t"
        TH_SC_CHUNKS8
        "7:\n\t"
        ".if (7b - 4b) != 8 * 84\n\t"
        ".error \"chunk size\"\n\t"
        ".endif\n\t"
        ".if (6b - 5b) != 8 * 84\n\t"
        ".error \"chunk size\"\n\t"
        ".endif\n\t"
        "ldmia.w lr!, {r4, r5, r6, r7, r8, r9}\n\t"
        TH_SC_RQ("r0", "r4", "r5", "r6")
        TH_SC_RQ("r1", "r7", "r8", "r9")
        "ldmia.w lr!, {r4, r5, r6, r7, r8, r9}\n\t"
        TH_SC_RQ("r2", "r4", "r5", "r6")
        TH_SC_RQ("r3", "r7", "r8", "r9")
        "ldr ip, [sp, #0]\n\t"
        "strb r0, [ip], #1\n\t"
        "strb r1, [ip], #1\n\t"
        "strb r2, [ip], #1\n\t"
        "strb r3, [ip], #1\n\t"
        "str ip, [sp, #0]\n\t"
        "ldr ip, [sp, #4]\n\t"
        "ldmia.w lr!, {r0, r1, r2, r3, pc}\n\t"
        "8:\n\t"
        "ldrd r4, r5, [sp, #4]\n\t"
        "add ip, r4, r5\n\t"
        "str ip, [sp, #4]\n\t"
        "ldr r6, [sp, #12]\n\t"
        "subs r6, r6, #1\n\t"
        "str r6, [sp, #12]\n\t"
        "beq 9f\n\t"
        "ldr lr, [sp, #16]\n\t"
        "ldmia.w lr!, {r0, r1, r2, r3, pc}\n\t"
        "9:\n\t"
        "add sp, sp, #24\n\t"
        "pop {r4-r11, pc}\n\t"
        TH_SC_SINGLES_CODE);
}
#pragma GCC diagnostic pop
#undef TH_SC_CHUNK
#undef TH_SC_CHUNKS8
#undef TH_SC_CHUNK1
#undef TH_SC_CHUNKS1_8
#undef TH_SC_CHUNKS1
#undef TH_SC_CHUNKS1_N
#undef TH_SC_SINGLES_ENTRY
#undef TH_SC_SINGLES_CODE
#undef TH_SC_NO_QUADS
#undef TH_SC_TAIL1
#undef TH_SC_RQ
#else
/* The requantization of one accumulator by the record's 3 constants at r. */
TH_INLINE int32_t rq_model(int32_t acc, const int32_t *r)
{
    th_fast_rq rq;
    rq.multiplier = r[0];
    rq.round_zp = r[1];
    rq.e = r[2];
    return th_fast_rq_apply2(acc, &rq);
}

/* C model of mac_row (host builds with TH_NN_EMULATE_DSP): the same record stream. */
static void mac_row(const th_sc_row *a)
{
    const int32_t kw_words = 4 * a->chunks + a->tail;
    const char *x = (const char *)a->x;
    int8_t *out = a->out;
    for (int32_t p = 0; p < a->npix; p++) {
        const int32_t *r = a->rec;
        int32_t acc[4];
        for (int32_t q = 0; q < a->quads; q++) {
            for (int32_t i = 0; i < 4; i++) {
                acc[i] = r[i];
            }
            r += 5;
            for (int32_t j = 0; j < a->chunks; j++) {
                for (int32_t i = 0; i < 4; i++) {
                    for (int32_t m = 0; m < 4; m++) {
                        acc[i] = th_smlad(th_read_s32(x + 4 * (4 * j + m)), r[m], acc[i]);
                    }
                    r += 4;
                }
            }
            if (a->tail != 0) {
                for (int32_t i = 0; i < 4; i++) {
                    acc[i] = th_smlad(th_read_s32(x + 4 * (kw_words - 2)), r[0], acc[i]);
                    acc[i] = th_smlad(th_read_s32(x + 4 * (kw_words - 1)), r[1], acc[i]);
                    r += 2;
                }
            }
            for (int32_t i = 0; i < 4; i++) {
                *out++ = (int8_t)rq_model(acc[i], r);
                r += 3;
            }
        }
        for (int32_t q = 0; q < a->singles; q++) {
            int32_t acc = r[0];
            r += 5;
            for (int32_t m = 0; m < kw_words; m++) {
                acc = th_smlad(th_read_s32(x + 4 * m), r[m], acc);
            }
            r += kw_words;
            *out++ = (int8_t)rq_model(acc, r);
            r += 3;
        }
        x += a->x_step;
    }
}
#endif

/* The problem a call runs: the whole layer, or (path CONV_SMALL_CIN_LINE) a one-row or
 * one-column image seen as a smaller one. */
typedef struct {
    th_conv_params params;
    th_dims input;
    th_dims output;
    th_sc_taps taps;
    th_sc_geometry g;
} th_sc_view;

/* Swaps *h and *w. */
TH_INLINE void swap_hw(int32_t *h, int32_t *w)
{
    const int32_t t = *h;
    *h = *w;
    *w = t;
}

/* A one-row (one-column) image with one output row (column): only filter row pad.h (column
 * pad.w) meets the input, the others multiply padding, which contributes 0: *v keeps that row
 * (column) only, with padding 0 on that axis. A one-column image is then seen as the one-row
 * image it is in memory (H x 1 x C is 1 x H x C; the kept column of the filter a row), so
 * its output column is one row of up to 16-pixel tiles, not one call per pixel. 1 when the
 * view differs from the layer and has a geometry. Called where the layer's geometry holds:
 * th_nn_conv_small_cin_scratch then reserved room for the view (a row view is smaller on
 * every term, a column view is the geometry it adds). */
static int __attribute__((noinline))
small_cin_view(const th_conv_params *params, const th_dims *input_dims,
               const th_dims *filter_dims, const th_dims *output_dims, int fast,
               th_sc_view *v)
{
    const int32_t cin = filter_dims->c;
    int changed = 0;
    v->params = *params;
    v->input = *input_dims;
    v->output = *output_dims;
    v->taps.dims = *filter_dims;
    v->taps.k0 = 0;
    v->taps.k_row = filter_dims->w * cin;
    v->taps.k_col = cin;
    if (input_dims->h == 1 && output_dims->h == 1 && params->padding.h < filter_dims->h &&
        filter_dims->h > 1) {
        v->taps.k0 += params->padding.h * v->taps.k_row;
        v->taps.dims.h = 1;
        v->params.padding.h = 0;
        changed = 1;
    }
    if (input_dims->w == 1 && output_dims->w == 1 && params->padding.w < filter_dims->w) {
        if (filter_dims->w > 1) {
            v->taps.k0 += params->padding.w * cin;
            v->taps.dims.w = 1;
            v->params.padding.w = 0;
            changed = 1;
        }
        if (output_dims->h > 1) {
            swap_hw(&v->input.h, &v->input.w);
            swap_hw(&v->output.h, &v->output.w);
            swap_hw(&v->taps.dims.h, &v->taps.dims.w);
            swap_hw(&v->taps.k_row, &v->taps.k_col);
            swap_hw(&v->params.stride.h, &v->params.stride.w);
            swap_hw(&v->params.padding.h, &v->params.padding.w);
            changed = 1;
        }
    }
    return changed && geometry(&v->params, &v->input, &v->taps.dims, &v->output, fast, &v->g);
}

/* The call on the layer, or a view of it (filter: the layer's, k_total taps per channel;
 * *t the taps the view keeps, *gp its geometry). */
static int __attribute__((noinline))
small_cin_call(const th_context *ctx, const th_sc_geometry *gp, const th_conv_params *pv,
               const th_dims *iv, const th_dims *ov, const th_sc_taps *t,
               const th_per_channel_quant *quant, const int8_t *input, int32_t k_total,
               const int8_t *filter, const int32_t *bias, int8_t *output)
{
    const th_sc_geometry g = *gp;
    const th_conv_params p = *pv;
    const th_dims in = *iv;
    const th_dims on = *ov;
    const th_dims taps = t->dims;
    const th_conv_params *params = &p;
    const th_dims *input_dims = &in;
    const th_dims *output_dims = &on;
    const int32_t cout = output_dims->c;
    th_nn_out_stage stage;
    th_nn_out_stage_init(&stage, quant, cout, params->output_offset, &params->activation,
                         th_acc_bound(k_total, 128, bias, cout));
    if (!stage.fast || stage.clamp || !TH_NN_PATH(CONV_SMALL_CIN) ||
        ((cout & 3) != 0 && !TH_NN_PATH(CONV_SMALL_CIN_PART))) {
        return 0;
    }
    int32_t *rec = (int32_t *)ctx->buf;
    int16_t *staged = (int16_t *)(void *)(rec + g.record_words);
    build_records(rec, &g, params, quant, t, k_total, filter, bias, params->output_offset);
    th_sc_row row;
    row.x_step = 2 * params->stride.w * g.bp;
    row.rec = rec;
    row.quads = g.quads;
    row.quad_bytes = 4 * g.quad_words;
    row.chunks = g.chunks;
    row.tail = g.tail;
    row.singles = g.singles; /* (0 in a build without path CONV_SMALL_CIN_PART) */
    row.single_bytes = 4 * g.single_words;
    const int64_t in_batch = (int64_t)input_dims->h * input_dims->w * input_dims->c;
    const int64_t out_row = (int64_t)output_dims->w * cout;
    int edges = 1; /* (the first tile fills the padding columns) */
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b = input + b * in_batch;
        int8_t *out_b = output + (int64_t)b * output_dims->h * out_row;
        for (int32_t oy = 0; oy < output_dims->h; oy++) {
            for (int32_t ox = 0; ox < output_dims->w; ox += g.tile) {
                const int32_t npix = TH_MIN(g.tile, output_dims->w - ox);
                stage_tile(staged, &g, in_b, input_dims, params, &taps, oy, ox, npix, edges);
                edges = output_dims->w > g.tile;
                row.x = staged;
                row.npix = npix;
                row.out = out_b + oy * out_row + (int64_t)ox * cout;
                mac_row(&row);
            }
        }
    }
    return 1;
}

int th_nn_conv_small_cin_s8(const th_context *ctx, const th_conv_params *params,
                            const th_per_channel_quant *quant, const th_dims *input_dims,
                            const int8_t *input, const th_dims *filter_dims,
                            const int8_t *filter, const int32_t *bias,
                            const th_dims *output_dims, int8_t *output, int wide)
{
    th_sc_view v;
    const int32_t k_total = filter_dims->h * filter_dims->w * filter_dims->c;
    th_sc_geometry full;
    int fast = 0;
    const int long_only = wide == TH_NN_SMALL_CIN_LONG_ONLY;
    /* Long only (Cout 1, before th_conv_general_s8's direct path): the direct path is faster
     * on 8 chunks or fewer, and where the staging per output is large. Fields of 9-16 chunks
     * at stride 1 (instructions per output 53x22x3 k5x5 189.1 -> 142.8, 30x22x2 k7x7 254.4 ->
     * 177.5, 20x40x1 k11x11 344.9 -> 268.0) or stride 2 with Cin <= 2 (30x60x2 k7x7 238.2 ->
     * 227.8, 12x44x1 k10x10 352.3 -> 292.9); not Cin 3 at stride 2 (30x60x3 k5x5 178.7 vs
     * 187.1) nor stride 3 (30x60x1 k9x9 250.4 vs 272.5). */
    if (long_only && !(params->stride.w == 1 || (params->stride.w == 2 && input_dims->c <= 2))) {
        return 0;
    }
    /* A line image with the base limits: its view first, given the view's own scratch, so the
     * layer's geometry (which otherwise vouches for that room, th_nn_conv_small_cin_scratch)
     * is not computed too (22x1x2->11x1x3 k5x5 s2: one geometry less a call). */
    const int line = TH_NN_KEEP_CONV_SMALL_CIN_LINE && !long_only &&
                     (input_dims->h == 1 || input_dims->w == 1);
    if (line && small_cin_view(params, input_dims, filter_dims, output_dims, 0, &v) &&
        ctx->size >= scratch_bytes(&v.g) && TH_NN_PATH(CONV_SMALL_CIN_LINE)) {
        return small_cin_call(ctx, &v.g, &v.params, &v.input, &v.output, &v.taps, quant,
                              input, k_total, filter, bias, output);
    }
    if (!geometry(params, input_dims, filter_dims, output_dims, 0, &full)) {
        /* the longer record stream (or, Cout < 4, field) where the caller was given its
         * scratch */
        fast = 1;
        const int32_t size = wide ? th_nn_conv_small_cin_scratch_fast(params, input_dims,
                                                                      filter_dims, output_dims)
                                  : 0;
        if (!(size > 0 && ctx->size >= size &&
              geometry(params, input_dims, filter_dims, output_dims, 1, &full))) {
            return 0;
        }
        /* (exclusive: a field over 8 chunks has Cout < 4, a stream of under 1 KB) */
        if (full.chunks > TH_SC_MAX_CHUNKS ? !TH_NN_PATH(CONV_SMALL_CIN_LONG)
                                           : !TH_NN_PATH(CONV_SMALL_CIN_WIDE)) {
            return 0;
        }
    } else if (long_only) {
        return 0;
    }
    /* (the base limits' view was tried above) */
    if (TH_NN_KEEP_CONV_SMALL_CIN_LINE && (input_dims->h == 1 || input_dims->w == 1) &&
        fast &&
        small_cin_view(params, input_dims, filter_dims, output_dims, fast, &v) &&
        TH_NN_PATH(CONV_SMALL_CIN_LINE)) {
        return small_cin_call(ctx, &v.g, &v.params, &v.input, &v.output, &v.taps, quant,
                              input, k_total, filter, bias, output);
    }
    const th_sc_taps all = {*filter_dims, 0, filter_dims->w * filter_dims->c, filter_dims->c};
    return small_cin_call(ctx, &full, params, input_dims, output_dims, &all, quant, input,
                          k_total, filter, bias, output);
}

#endif /* TH_NN_HAS_DSP */
