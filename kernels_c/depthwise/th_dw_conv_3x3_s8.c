/* th_dw_conv_3x3_s8: DEPTHWISE_CONV_2D, 3x3 filter, ch_mult 1, dilation 1, stride 1 or 2.
 *
 * DSP path, one channel at a time (so it runs in place, th_nn.h rule (a)): the channel's
 * input plane is copied into scratch as int16 raw values with its padding as
 * -input_offset (the offset is folded into the accumulator's start value), so the inner
 * loop has no bounds checks. A filter row then is two halfword pairs (w0, w1), (w1, w2):
 * four outputs of a row take 3 (stride 1) or 5 (stride 2) aligned word loads and 8 MAC
 * instructions (12 MACs). With the fast requantization the weights are doubled, which
 * saves its shift. That case runs in assembly: one loop over the blocks of four of every
 * output row of the channel, then (when out_w % 4 >= 2) one over a pair per row; only the
 * padding is written once per call, later channels copy just the plane's interior.
 */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP && !TH_NN_MVE
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

/* Rough instructions of the assembly (dw_rows_*) per output row of n outputs: 57 per block
 * of four, 11 per row, 33 for a pair after the blocks, 19 for a single one; rows shorter
 * than four run the C loop (about 40 per output; rows of three now take dw_rows_s*_three,
 * about 16 per output, and rows of six dw_rows_s*_six, 93 a row, not 101, but the estimate
 * stays: plan/scratch.py mirrors this choice). */
static int32_t row_cost(int32_t n)
{
    if (n < 4) {
        return 40 * n + 20;
    }
    return 57 * (n / 4) + 11 + ((n & 2) ? 33 : 0) + ((n & 1) ? 19 : 0);
}

/* Whether out_h x out_w outputs (out_h > out_w) cost less untransposed: out_h rows of
 * out_w than out_w rows of out_h (row_cost). Only when out_h < 2 * out_w can it: per output
 * row_cost(n) / n is at least 57/4 + 11/n and at most 57/4 + 20.25/n for n >= 4 (shorter
 * rows, the C loop, cost over 40), so the plain rows win only if out_h <= out_w * 20.25 /
 * 11 < 2 * out_w. The test is path
 * DW3X3_ROWS_PLAIN (recorded only where it holds): a model that never has such a layer
 * (kws: 25x5) builds without it and transposes as before. */
static int __attribute__((noinline)) plain_rows_cheaper(int32_t out_h, int32_t out_w)
{
    return out_w * row_cost(out_h) >= out_h * row_cost(out_w);
}

/* A narrow, tall layer is processed transposed (make_geometry) when its plane fits and its
 * output rows do not cost less untransposed (a row's pair or single output after its
 * blocks costs about as much as a block: 9x8 outputs run as 9 rows of two blocks, not 8
 * rows of two blocks and a single); with at most 3 channels only when its rows would be
 * shorter than 8 outputs (untransposed, the channels' pixels are contiguous:
 * fill_group_small). */
static int is_transposed(int32_t s, int32_t out_h, int32_t out_w, int32_t c)
{
    return out_h > out_w && (c >= 4 || out_w < 8) &&
           plane_h(s, out_w) * plane_w(s, out_h) <= plane_h(s, out_h) * plane_w(s, out_w) &&
           !(TH_NN_KEEP_DW3X3_ROWS_PLAIN && out_h < 2 * out_w &&
             plain_rows_cheaper(out_h, out_w) && TH_NN_PATH(DW3X3_ROWS_PLAIN));
}

/* Planes staged per pass given the fast scratch: four (C >= 4: one 32-bit load brings a
 * pixel's four values, see fill_group4; a last one or two channels one at a time, a last
 * three as the last four), or all C = 2 or 3 channels of untransposed rows, whose pixels
 * are contiguous (fill_group_small: word loads of four pixels); else 1. */
static int32_t group_planes(const th_dw_conv_params *params, const th_dims *output_dims)
{
    const int32_t c = output_dims->c;
    if (c >= 4) {
        return 4;
    }
    const int tr = is_transposed(params->stride.h, output_dims->h, output_dims->w, c);
    return c >= 2 && !tr ? c : 1;
}

/* Bytes of the group_planes planes when there are more than one, else 0. */
static int32_t group_planes_bytes(const th_dw_conv_params *params, const th_dims *output_dims)
{
    const int32_t s = params->stride.h;
    const int32_t n = group_planes(params, output_dims);
    return n > 1 ? n * 2 * plane_h(s, output_dims->h) * plane_w(s, output_dims->w) : 0;
}
#endif

int32_t th_dw_conv_3x3_s8_scratch_size(const th_dw_conv_params *params,
                                       const th_dims *input_dims, const th_dims *filter_dims,
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
#elif TH_NN_HAS_DSP
    (void)filter_dims;
    if (params == NULL || input_dims == NULL || output_dims == NULL || output_dims->h <= 0 ||
        output_dims->w <= 0) {
        return 0;
    }
    (void)input_dims;
    return 2 * plane_h(params->stride.h, output_dims->h) *
           plane_w(params->stride.w, output_dims->w);
#else
    return th_dw_conv_general_s8_scratch_size(params, input_dims, filter_dims, output_dims);
#endif
}

int32_t th_dw_conv_3x3_s8_scratch_size_fast(const th_dw_conv_params *params,
                                            const th_dims *input_dims,
                                            const th_dims *filter_dims,
                                            const th_dims *output_dims)
{
    (void)input_dims;
    (void)filter_dims;
#if TH_NN_HAS_DSP && !TH_NN_MVE
    if (params == NULL || output_dims == NULL || output_dims->h <= 0 || output_dims->w <= 0) {
        return 0;
    }
    return group_planes_bytes(params, output_dims);
#else
    (void)params;
    (void)output_dims;
    return 0;
#endif
}

#if TH_NN_HAS_DSP && !TH_NN_MVE

/* How a channel is laid out in the plane. Plane rows run along the input's "outer" axis
 * (y, or x when transposed), plane columns along the "inner" one: a narrow, tall layer
 * (KWS: 25x5) is processed transposed, so that the four-output blocks run along its long
 * axis. The 3x3 filter is transposed with it (strides are equal in both directions). */
typedef struct {
    int32_t ph, pw; /* plane rows, columns (even) */
    int32_t outer, inner; /* input extent along plane rows, columns */
    int32_t pad_outer, pad_inner;
    int32_t src_outer, src_inner; /* input bytes between neighbours along those axes */
    int32_t out_rows, out_cols; /* outputs along plane rows, columns */
    int32_t out_row_step, out_col_step; /* output bytes between neighbours */
    int32_t tap_row_step, tap_col_step; /* filter taps (x channels) between neighbours */
} dw_geometry;

/* The interior rectangle of a plane (the columns and rows the input covers); the rest is
 * padding. */
typedef struct {
    int32_t x_begin, x_end, r_begin, r_end;
} dw_interior;

static dw_interior interior_of(const dw_geometry *g)
{
    dw_interior in;
    in.x_begin = TH_MIN(g->pad_inner, g->pw);
    in.x_end = TH_MIN(g->pad_inner + g->inner, g->pw);
    in.r_begin = TH_MIN(g->pad_outer, g->ph);
    in.r_end = TH_MIN(g->pad_outer + g->outer, g->ph);
    if (in.x_end < in.x_begin) {
        in.x_end = in.x_begin;
    }
    if (in.r_end < in.r_begin) {
        in.r_end = in.r_begin;
    }
    return in;
}

/* Writes the padding of a plane: -input_offset everywhere outside the interior (so that
 * x + input_offset is 0 there: the offset is folded into the accumulator's start value
 * instead, see dw3x3_channel_impl). It does not depend on the channel: written once per
 * call, the channels then only copy their interior (fill_interior, copy4_rows_asm or
 * fill_group4, fill_group_small). */
static void __attribute__((noinline))
fill_padding(int16_t *plane, const dw_geometry *g, int32_t offset)
{
    const int16_t pad = (int16_t)(-offset);
    const int32_t pad2 = (int32_t)(((uint32_t)(uint16_t)pad << 16) | (uint16_t)pad);
    const dw_interior in = interior_of(g);
    /* The geometry in locals: the stores may alias it for the compiler. */
    const int32_t pw = g->pw; /* even: rows are word aligned */
    const int32_t ph = g->ph;
    int32_t r_begin = in.r_begin;
    int32_t r_end = in.r_end;
    if (in.x_end == in.x_begin || r_end == r_begin) {
        r_begin = ph;
        r_end = ph;
    }
    /* Whole rows above and below the interior. */
    for (int16_t *q = plane, *e = plane + r_begin * pw; q != e; q += 2) {
        th_write_s32(q, pad2);
    }
    for (int16_t *q = plane + r_end * pw, *e = plane + ph * pw; q != e; q += 2) {
        th_write_s32(q, pad2);
    }
    if (r_end == r_begin) {
        return;
    }
    /* Left of the first interior row, then the runs right of one interior row and left of
     * the next (contiguous), then right of the last one. */
    for (int32_t q = 0; q < in.x_begin; q++) {
        plane[r_begin * pw + q] = pad;
    }
    const int32_t run = pw - in.x_end + in.x_begin;
    int16_t *q = plane + r_begin * pw + in.x_end;
    int16_t *const last = plane + (r_end - 1) * pw + in.x_end;
    /* Word stores: an odd run writes one value of the next row's interior too, which the
     * channels' copies overwrite (they come after; the plane goes on past that row). A run
     * of at most two values (stride 2 SAME layers) is one store per row, of three or four
     * (SAME stride 1, transposed stride 2) two. */
    if (run <= 2) {
        for (; q != last; q += pw) {
            th_write_s32(q, pad2);
        }
    } else if (run <= 4) {
        for (; q != last; q += pw) {
            th_write_s32(q, pad2);
            th_write_s32(q + 2, pad2);
        }
    } else {
        for (; q != last; q += pw) {
            for (int32_t i = 0; i < run; i += 2) {
                th_write_s32(q + i, pad2);
            }
        }
    }
    for (int32_t i = 0; i < pw - in.x_end; i++) {
        q[i] = pad;
    }
}

/* Stores word v at q in four planes `slot` values apart. */
TH_INLINE void pad_put4(int16_t *q, int32_t slot, int32_t v)
{
    th_write_s32(q, v);
    th_write_s32(q + slot, v);
    th_write_s32(q + 2 * slot, v);
    th_write_s32(q + 3 * slot, v);
}

/* Four planes (path DW3X3_GROUP4; never named where the build leaves it out): fill_padding's
 * places, each stored in all four planes in one pass (one loop's overhead instead of four),
 * in word stores only and fewer loops (fill_padding's loops four-wide took 532 bytes, these
 * 334 on the M4). The padding before the first interior value and after the last one are
 * each one contiguous run; rounding them out to whole words writes at most one interior
 * value at each end, which the channels' copies overwrite (they come after, as for the odd
 * runs between rows). */
static void __attribute__((noinline))
fill_padding4(int16_t *plane, const dw_geometry *g, int32_t offset, int32_t slot)
{
    const int16_t pad = (int16_t)(-offset);
    const int32_t pad2 = (int32_t)(((uint32_t)(uint16_t)pad << 16) | (uint16_t)pad);
    const dw_interior in = interior_of(g);
    const int32_t pw = g->pw; /* even: rows are word aligned */
    const int32_t ph = g->ph;
    int16_t *const end = plane + ph * pw;
    const int empty = in.x_end == in.x_begin || in.r_end == in.r_begin;
    /* Up to the first interior value (rounded up to a word), or all of it. */
    int16_t *const head = empty ? end : plane + ((in.r_begin * pw + in.x_begin + 1) & ~1);
    for (int16_t *q = plane; q != head; q += 2) {
        pad_put4(q, slot, pad2);
    }
    if (empty) {
        return;
    }
    /* The runs right of one interior row and left of the next. */
    const int32_t run = pw - in.x_end + in.x_begin;
    int16_t *q = plane + in.r_begin * pw + in.x_end;
    int16_t *const last = plane + (in.r_end - 1) * pw + in.x_end;
    if (run <= 2) { /* stride 2 SAME: one word per row, no inner loop */
        for (; q != last; q += pw) {
            pad_put4(q, slot, pad2);
        }
    } else if (run <= 4) { /* SAME stride 1, or stride 2 with an odd input: two words */
        for (; q != last; q += pw) {
            pad_put4(q, slot, pad2);
            pad_put4(q + 2, slot, pad2);
        }
    }
    for (; q != last; q += pw) {
        for (int32_t i = 0; i < run; i += 2) {
            pad_put4(q + i, slot, pad2);
        }
    }
    /* From after the last interior value (rounded down to a word) to the end. */
    for (q = plane + (((in.r_end - 1) * pw + in.x_end) & ~1); q != end; q += 2) {
        pad_put4(q, slot, pad2);
    }
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* What copy_rows_asm reads (offsets fixed in the assembly). */
typedef struct {
    const int8_t *src; /* 0: first interior value of the first row */
    int16_t *d; /* 4: its place in the plane */
    int32_t in_c; /* 8: input bytes between neighbours along the row */
    int32_t quad_bytes; /* 12: 8 x the aligned quads per row (at least one) */
    int32_t rows; /* 16: at least one */
    int32_t flags; /* 20: bit 0 one value first (odd start), bit 1 an overlapping last quad */
    int32_t s_adv; /* 24: input bytes from after a row's quads to the next row */
    int32_t d_adv; /* 28: plane bytes from after a row's quads to the next row */
    int32_t back_s; /* 32: input bytes from after the quads back to the last quad's start */
    int32_t back_d; /* 36: plane bytes, likewise */
} dw_copy_args;

typedef char dw_copy_args_size_check[sizeof(dw_copy_args) == 40 ? 1 : -1];

/* Four input values (stride r2 bytes, r3 = 3 x r2) from r0 to the plane at r1 (word
 * aligned): 4 LDRSB, ADD, 2 PKHBT, STRD. */
#define TH_DW_COPY_QUAD                                                                      \
    "ldrsb r5, [r0]\n\t"                                                                     \
    "ldrsb r6, [r0, r2]\n\t"                                                                 \
    "ldrsb r7, [r0, r2, lsl #1]\n\t"                                                         \
    "ldrsb r8, [r0, r3]\n\t"                                                                 \
    "add r0, r0, r2, lsl #2\n\t"                                                             \
    "pkhbt r5, r5, r6, lsl #16\n\t"                                                          \
    "pkhbt r7, r7, r8, lsl #16\n\t"                                                          \
    "strd r5, r7, [r1], #8\n\t"

/* Copies the interior rows of a channel's plane: per row, one value when the interior
 * starts at an odd column, then word-aligned quads (the loop unrolled twice, an odd count
 * enters it in the middle), then, when the row's length left a remainder, one more quad
 * ending at the row's last value (rewriting up to three values with the same ones: 4 LDRSB
 * and 4 STRH). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline)) copy_rows_asm(const dw_copy_args *a)
{
    __asm__ volatile("push {r4-r11, lr}\n\t"
                     "sub sp, sp, #12\n\t"
                     "ldrd r5, r6, [r0, #32]\n\t"
                     "strd r5, r6, [sp]\n\t"
                     "ldm r0, {r0-r2, r9-r12, lr}\n\t"
                     "add r3, r2, r2, lsl #1\n\t"
                     "5:\n\t"
                     "tst r11, #1\n\t"
                     "beq 3f\n\t"
                     "ldrsb r5, [r0]\n\t"
                     "add r0, r0, r2\n\t"
                     "strh r5, [r1], #2\n\t"
                     "3:\n\t"
                     "add r4, r1, r9\n\t"
                     "tst r9, #8\n\t"
                     "bne 2f\n\t"
                     "1:\n\t" TH_DW_COPY_QUAD "2:\n\t" TH_DW_COPY_QUAD
                     "cmp r1, r4\n\t"
                     "bne 1b\n\t"
                     "tst r11, #2\n\t"
                     "beq 4f\n\t"
                     "ldrd r5, r6, [sp]\n\t"
                     "sub r5, r0, r5\n\t"
                     "sub r6, r1, r6\n\t"
                     "ldrsb r7, [r5]\n\t"
                     "ldrsb r8, [r5, r2]\n\t"
                     "strh r7, [r6]\n\t"
                     "strh r8, [r6, #2]\n\t"
                     "ldrsb r7, [r5, r2, lsl #1]\n\t"
                     "ldrsb r8, [r5, r3]\n\t"
                     "strh r7, [r6, #4]\n\t"
                     "strh r8, [r6, #6]\n\t"
                     "4:\n\t"
                     "add r0, r0, r12\n\t"
                     "add r1, r1, lr\n\t"
                     "subs r10, r10, #1\n\t"
                     "bne 5b\n\t"
                     "add sp, sp, #12\n\t"
                     "pop {r4-r11, pc}\n\t");
}
#pragma GCC diagnostic pop
#undef TH_DW_COPY_QUAD
#define TH_DW_COPY_ASM 1
#else
#define TH_DW_COPY_ASM 0
#endif

/* Copies channel c of the input into the interior of its int16 plane as raw values (the
 * padding is already there, fill_padding). */
static void fill_interior(int16_t *plane, const dw_geometry *g, const int8_t *in, int32_t c)
{
    const int32_t pw = g->pw;
    const int32_t in_c = g->src_inner;
    const dw_interior box = interior_of(g);
    const int32_t n = box.x_end - box.x_begin;
    if (n <= 0 || box.r_end <= box.r_begin) {
        return;
    }
    const int8_t *src = in + (box.x_begin - g->pad_inner) * in_c + c +
                        (box.r_begin - g->pad_outer) * g->src_outer;
    int16_t *d = plane + box.r_begin * pw + box.x_begin;
#if TH_DW_COPY_ASM
    const int32_t lead = box.x_begin & 1; /* one value first, so that the rest is word aligned */
    const int32_t quads = (n - lead) / 4;
    if (quads > 0) {
        const int32_t rem = n - lead - 4 * quads;
        const int32_t done = lead + 4 * quads; /* values per row before the last quad */
        dw_copy_args a;
        a.src = src;
        a.d = d;
        a.in_c = in_c;
        a.quad_bytes = 8 * quads;
        a.rows = box.r_end - box.r_begin;
        a.flags = lead | (rem > 0 ? 2 : 0);
        a.s_adv = g->src_outer - done * in_c;
        a.d_adv = (int32_t)sizeof(int16_t) * (pw - done);
        a.back_s = (4 - rem) * in_c;
        a.back_d = (int32_t)sizeof(int16_t) * (4 - rem);
        copy_rows_asm(&a);
        return;
    }
#endif
    for (int32_t r = box.r_begin; r < box.r_end; r++, src += g->src_outer, d += pw) {
        for (int32_t i = 0; i < n; i++) {
            d[i] = src[i * in_c];
        }
    }
}

/* Pixel value w (four channels' bytes) to four planes `slot` values apart, at q. */
TH_INLINE void put4(int16_t *q, int32_t slot, int32_t w)
{
    const uint32_t u = (uint32_t)w;
    q[0] = (int8_t)(uint8_t)u;
    q[slot] = (int8_t)(uint8_t)(u >> 8);
    q[2 * slot] = (int8_t)(uint8_t)(u >> 16);
    q[3 * slot] = (int8_t)(uint8_t)(u >> 24);
}

#if TH_DW_COPY_ASM
/* What copy4_rows_asm reads (offsets fixed in the assembly). */
typedef struct {
    int16_t *d; /* 0: the first interior value's place in the first plane */
    int32_t in_c; /* 4: input bytes between neighbours along the row */
    int32_t slot_bytes; /* 8: bytes between the planes */
    int32_t quad_bytes; /* 12: 8 x the pixel quads per row */
    int32_t flags; /* 16: bit 0 one pixel first (odd start), bit 1 a pair, bit 2 a last one,
                    * bit 3 the quads straight-line (path DW3X3_COPY_SHORT) */
    int32_t s_adv; /* 20: input bytes from after a row's pair to the next row */
    int32_t d_adv; /* 24: plane bytes, likewise */
    int32_t span; /* 28: input bytes of the interior rows (rows x src_outer) */
    /* 32-44: where the row's parts go on to (first pixel or quads, after the quads, after
     * the pair, the quads' entry), the same for every group of the call: worked out by the
     * first group's call (jumps[0] NULL until then), read by the later ones. */
    uintptr_t jumps[4];
} dw_copy4_args;

typedef char dw_copy4_args_size_check[sizeof(dw_copy4_args) == 48 ? 1 : -1];

/* One quad of pixels for copy4_rows_asm (23 instructions per 16 values). */
#define TH_DW_COPY4_QUAD                                                                     \
    "ldr r8, [r0]\n\t"                                                                       \
    "ldr r9, [r0, r2]\n\t"                                                                   \
    "ldr r10, [r0, r2, lsl #1]\n\t"                                                          \
    "ldr r11, [r0, r3]\n\t"                                                                  \
    "add r0, r0, r2, lsl #2\n\t"                                                             \
    "pkhtb r12, r9, r8, asr #16\n\t"                                                         \
    "pkhbt r8, r8, r9, lsl #16\n\t"                                                          \
    "pkhtb lr, r11, r10, asr #16\n\t"                                                        \
    "pkhbt r10, r10, r11, lsl #16\n\t"                                                       \
    "sxtb16 r9, r8\n\t"                                                                      \
    "sxtb16 r11, r10\n\t"                                                                    \
    "strd r9, r11, [r1], #8\n\t"                                                             \
    "sxtb16 r9, r8, ror #8\n\t"                                                              \
    "sxtb16 r11, r10, ror #8\n\t"                                                            \
    "strd r9, r11, [r4], #8\n\t"                                                             \
    "sxtb16 r9, r12\n\t"                                                                     \
    "sxtb16 r11, lr\n\t"                                                                     \
    "strd r9, r11, [r5], #8\n\t"                                                             \
    "sxtb16 r9, r12, ror #8\n\t"                                                             \
    "sxtb16 r11, lr, ror #8\n\t"                                                             \
    "strd r9, r11, [r6], #8\n\t"

/* A first pixel at an odd column for copy4_rows_asm: 4 LDRSB, 4 STRH. */
#define TH_DW_COPY4_LEAD                                                                     \
    "ldrsb r9, [r0]\n\t"                                                                     \
    "ldrsb r10, [r0, #1]\n\t"                                                                \
    "ldrsb r11, [r0, #2]\n\t"                                                                \
    "ldrsb r12, [r0, #3]\n\t"                                                                \
    "add r0, r0, r2\n\t"                                                                     \
    "strh r9, [r1], #2\n\t"                                                                  \
    "strh r10, [r4], #2\n\t"                                                                 \
    "strh r11, [r5], #2\n\t"                                                                 \
    "strh r12, [r6], #2\n\t"

/* Rows of 1-4 pixel quads (flags bit 3, path DW3X3_COPY_SHORT: interiors of 4-19 columns,
 * small planes): the quads straight-line, entered at the row's count (labels 12-15, the
 * jump worked out with the others), so a row sets no end pointer and runs no loop test;
 * a row without a first odd pixel starts there directly (5 instructions a row fewer). */
#if TH_NN_KEEP_DW3X3_COPY_SHORT
#define TH_DW_COPY_SHORT_PICK                                                                \
    "ldr r6, [r0, #16]\n\t"                                                                  \
    "tst r6, #8\n\t"                                                                         \
    "beq 16f\n\t"                                                                            \
    "adr.w r5, 12f\n\t"                                                                      \
    "cmp r4, #24\n\t"                                                                        \
    "it eq\n\t"                                                                              \
    "adreq.w r5, 13f\n\t"                                                                    \
    "cmp r4, #16\n\t"                                                                        \
    "it eq\n\t"                                                                              \
    "adreq.w r5, 14f\n\t"                                                                    \
    "cmp r4, #8\n\t"                                                                         \
    "it eq\n\t"                                                                              \
    "adreq.w r5, 15f\n\t"                                                                    \
    "16:\n\t"
#define TH_DW_COPY_SHORT_START                                                               \
    "tst r5, #8\n\t"                                                                         \
    "it ne\n\t"                                                                              \
    "ldrne r4, [r0, #44]\n\t"
/* (a first pixel and the quads straight-line: label 17, the first pixel then the quads'
 * entry, without the loop's end pointer: 2 instructions a row fewer) */
#define TH_DW_COPY_SHORT_LEAD                                                                \
    "and r6, r5, #9\n\t"                                                                     \
    "cmp r6, #9\n\t"                                                                         \
    "it eq\n\t"                                                                              \
    "adreq.w r4, 17f\n\t"
#define TH_DW_COPY_SHORT_CHAIN(LEAD, QUAD)                                                   \
    "17:\n\t" LEAD "ldr pc, [sp, #28]\n\t"                                                   \
    "12:\n\t" QUAD "13:\n\t" QUAD "14:\n\t" QUAD "15:\n\t" QUAD                              \
    "ldr pc, [sp, #20]\n\t"
/* (jumps[0] set: skip working them out; with the choice above, past CBNZ's reach) */
#define TH_DW_COPY_JUMPS_MADE                                                                \
    "cmp r4, #0\n\t"                                                                         \
    "bne.w 11f\n\t"
#else
#define TH_DW_COPY_JUMPS_MADE "cbnz r4, 11f\n\t"
#define TH_DW_COPY_SHORT_PICK
#define TH_DW_COPY_SHORT_START
#define TH_DW_COPY_SHORT_LEAD
#define TH_DW_COPY_SHORT_CHAIN(LEAD, QUAD)
#endif

/* The row copies' common entry (copy4_rows_asm, copy4_last3_asm, copy4_lone_asm): frame, the
 * row state and the jumps (worked out once per call), the planes from the arguments, then
 * SETUP; ends at label 5, the row loop's head. */
#define TH_DW_COPY_ROWS_ENTRY_WITH(SETUP)                                                    \
    "push {r4-r11, lr}\n\t"                                                                  \
    "sub sp, sp, #36\n\t"                                                                    \
    "ldr r4, [r0, #28]\n\t"                                                                  \
    "add r4, r4, r1\n\t"                                                                     \
    "str r4, [sp, #16]\n\t"                                                                  \
    "ldr r4, [r0, #12]\n\t"                                                                  \
    "str r4, [sp]\n\t"                                                                       \
    "ldrd r4, r5, [r0, #20]\n\t"                                                             \
    "strd r4, r5, [sp, #8]\n\t"                                                              \
    "ldr r4, [r0, #32]\n\t"                                                                  \
    TH_DW_COPY_JUMPS_MADE                                                                    \
    "ldr r4, [r0, #12]\n\t"                                                                  \
    "adr.w r5, 1f\n\t"                                                                       \
    "tst r4, #8\n\t"                                                                         \
    "it ne\n\t"                                                                              \
    "adrne.w r5, 2f\n\t"                                                                     \
    "cmp r4, #0\n\t"                                                                         \
    "it eq\n\t"                                                                              \
    "adreq.w r5, 4f\n\t"                                                                     \
    TH_DW_COPY_SHORT_PICK                                                                    \
    "orr r5, r5, #1\n\t"                                                                     \
    "str r5, [r0, #44]\n\t"                                                                  \
    "ldr r5, [r0, #16]\n\t"                                                                  \
    "adr.w r4, 3f\n\t"                                                                       \
    TH_DW_COPY_SHORT_START                                                                   \
    "tst r5, #1\n\t"                                                                         \
    "it ne\n\t"                                                                              \
    "adrne.w r4, 8f\n\t"                                                                     \
    TH_DW_COPY_SHORT_LEAD                                                                    \
    "orr r4, r4, #1\n\t"                                                                     \
    "str r4, [r0, #32]\n\t"                                                                  \
    "adr.w r4, 7f\n\t"                                                                       \
    "tst r5, #4\n\t"                                                                         \
    "it ne\n\t"                                                                              \
    "adrne.w r4, 10f\n\t"                                                                    \
    "orr r4, r4, #1\n\t"                                                                     \
    "str r4, [r0, #40]\n\t"                                                                  \
    "tst r5, #2\n\t"                                                                         \
    "itt ne\n\t"                                                                             \
    "adrne.w r4, 9f\n\t"                                                                     \
    "orrne r4, r4, #1\n\t"                                                                   \
    "str r4, [r0, #36]\n\t"                                                                  \
    "11:\n\t"                                                                                \
    "ldr r4, [r0, #32]\n\t"                                                                  \
    "str r4, [sp, #4]\n\t"                                                                   \
    "ldrd r4, r5, [r0, #36]\n\t"                                                             \
    "strd r4, r5, [sp, #20]\n\t"                                                             \
    "ldr r4, [r0, #44]\n\t"                                                                  \
    "str r4, [sp, #28]\n\t"                                                                  \
    "mov r12, r1\n\t"                                                                        \
    "ldm r0, {r1-r3}\n\t"                                                                    \
    "mov r0, r12\n\t"                                                                        \
    "add r4, r1, r3\n\t"                                                                     \
    "add r5, r4, r3\n\t"                                                                     \
    "add r6, r5, r3\n\t"                                                                     \
    "add r3, r2, r2, lsl #1\n\t"                                                             \
    SETUP                                                                                    \
    "5:\n\t"                                                                                 \
    "ldr pc, [sp, #4]\n\t"
#define TH_DW_COPY_ROWS_ENTRY TH_DW_COPY_ROWS_ENTRY_WITH("")

/* Copies the interior rows of four planes (fill_interior for four channels at once: a
 * pixel's four values are one load). Per row: one pixel (4 LDRSB, 4 STRH) when the interior
 * starts at an odd column, then quads of pixels: 4 loads, PKHBT/PKHTB gather the pixels'
 * bytes of channels (0, 1) and (2, 3), SXTB16 / SXTB16 ROR 8 sign-extend them to plane
 * words, one STRD per plane (TH_DW_COPY4_QUAD; two per iteration, an odd count enters at
 * the second), then a pair and a last pixel as the flags say, until the input reaches
 * src + span. The flags and the count's parity are the same for every row and group, so
 * the first group's call turns them into the addresses the row's parts go on to (kept in
 * a->jumps for the later groups; LDR PC from the frame: one instruction per choice instead
 * of a load, test and branch). Registers: r0 input, r1 r4
 * r5 r6 the planes, r2 in_c, r3 3 x in_c, r7 end of the row's quads, r8-r12 lr values; row
 * state on the stack: 0 quad_bytes, 4 the row's first part (the first pixel or the quads),
 * 8 s_adv, 12 d_adv, 16 src_end, 20 the part after the quads (pair, last pixel or row end),
 * 24 the part after the pair (last pixel or row end), 28 the quads' entry (first or second
 * of the pair, or past them when there are none). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline))
copy4_rows_asm(dw_copy4_args *a, const int8_t *src)
{
    __asm__ volatile(TH_DW_COPY_ROWS_ENTRY
                     "8:\n\t" TH_DW_COPY4_LEAD
                     "3:\n\t"
                     "ldr r7, [sp]\n\t"
                     "add r7, r7, r1\n\t"
                     "ldr pc, [sp, #28]\n\t"
                     "1:\n\t" TH_DW_COPY4_QUAD "2:\n\t" TH_DW_COPY4_QUAD
                     "cmp r1, r7\n\t"
                     "bne 1b\n\t"
                     "4:\n\t"
                     "ldr pc, [sp, #20]\n\t"
                     "9:\n\t"
                     "ldr r9, [r0]\n\t"
                     "ldr r10, [r0, r2]\n\t"
                     "add r0, r0, r2, lsl #1\n\t"
                     "pkhtb r12, r10, r9, asr #16\n\t"
                     "pkhbt r9, r9, r10, lsl #16\n\t"
                     "sxtb16 r10, r9\n\t"
                     "str r10, [r1], #4\n\t"
                     "sxtb16 r10, r9, ror #8\n\t"
                     "str r10, [r4], #4\n\t"
                     "sxtb16 r10, r12\n\t"
                     "str r10, [r5], #4\n\t"
                     "sxtb16 r10, r12, ror #8\n\t"
                     "str r10, [r6], #4\n\t"
                     "ldr pc, [sp, #24]\n\t"
                     "10:\n\t"
                     "ldrsb r9, [r0]\n\t"
                     "ldrsb r10, [r0, #1]\n\t"
                     "ldrsb r11, [r0, #2]\n\t"
                     "ldrsb r12, [r0, #3]\n\t"
                     "strh r9, [r1]\n\t"
                     "strh r10, [r4]\n\t"
                     "strh r11, [r5]\n\t"
                     "strh r12, [r6]\n\t"
                     "7:\n\t"
                     "ldrd r8, r9, [sp, #8]\n\t"
                     "add r0, r0, r8\n\t"
                     "add r1, r1, r9\n\t"
                     "add r4, r4, r9\n\t"
                     "add r5, r5, r9\n\t"
                     "add r6, r6, r9\n\t"
                     "ldr r8, [sp, #16]\n\t"
                     "cmp r0, r8\n\t"
                     "bne 5b\n\t"
                     "add sp, sp, #36\n\t"
                     "pop {r4-r11, pc}\n\t"
                     TH_DW_COPY_SHORT_CHAIN(TH_DW_COPY4_LEAD, TH_DW_COPY4_QUAD));
}
#pragma GCC diagnostic pop
#undef TH_DW_COPY4_QUAD
#undef TH_DW_COPY4_LEAD

/* One quad of pixels for copy4_last3_asm: TH_DW_COPY4_QUAD without plane 0 (byte 0 of each
 * pixel word, the channel before the three): 20 instructions per 12 values. */
#define TH_DW_COPY3_QUAD                                                                     \
    "ldr r8, [r0]\n\t"                                                                       \
    "ldr r9, [r0, r2]\n\t"                                                                   \
    "ldr r10, [r0, r2, lsl #1]\n\t"                                                          \
    "ldr r11, [r0, r3]\n\t"                                                                  \
    "add r0, r0, r2, lsl #2\n\t"                                                             \
    "pkhtb r12, r9, r8, asr #16\n\t"                                                         \
    "pkhbt r8, r8, r9, lsl #16\n\t"                                                          \
    "pkhtb lr, r11, r10, asr #16\n\t"                                                        \
    "pkhbt r10, r10, r11, lsl #16\n\t"                                                       \
    "sxtb16 r9, r8, ror #8\n\t"                                                              \
    "sxtb16 r11, r10, ror #8\n\t"                                                            \
    "strd r9, r11, [r4], #8\n\t"                                                             \
    "sxtb16 r9, r12\n\t"                                                                     \
    "sxtb16 r11, lr\n\t"                                                                     \
    "strd r9, r11, [r5], #8\n\t"                                                             \
    "sxtb16 r9, r12, ror #8\n\t"                                                             \
    "sxtb16 r11, lr, ror #8\n\t"                                                             \
    "strd r9, r11, [r6], #8\n\t"

#define TH_DW_COPY3_LEAD                                                                     \
    "ldrsb r9, [r0, #1]\n\t"                                                                 \
    "ldrsb r10, [r0, #2]\n\t"                                                                \
    "ldrsb r11, [r0, #3]\n\t"                                                                \
    "add r0, r0, r2\n\t"                                                                     \
    "strh r9, [r4], #2\n\t"                                                                  \
    "strh r10, [r5], #2\n\t"                                                                 \
    "strh r11, [r6], #2\n\t"

/* The last three channels of C % 4 == 3 (path DW3X3_GROUP3): copy4_rows_asm's rows with
 * the same arguments and src (the pixel words of channels c - 1 .. c + 2: inside the pixel,
 * so never past the input's end), storing only planes 1-3 (channels c .. c + 2) instead of
 * also the unused plane 0: per quad of pixels 18 instructions instead of 21. Its own jumps
 * (a->jumps, worked out on the call when jumps[0] is 0: the caller passes a copy of the
 * four-plane arguments). Registers as copy4_rows_asm's, r4 the row's pointer (r1 unused). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline, unused))
copy4_last3_asm(dw_copy4_args *a, const int8_t *src)
{
    __asm__ volatile(TH_DW_COPY_ROWS_ENTRY
                     "8:\n\t" TH_DW_COPY3_LEAD
                     "3:\n\t"
                     "ldr r7, [sp]\n\t"
                     "add r7, r7, r4\n\t"
                     "ldr pc, [sp, #28]\n\t"
                     "1:\n\t" TH_DW_COPY3_QUAD "2:\n\t" TH_DW_COPY3_QUAD
                     "cmp r4, r7\n\t"
                     "bne 1b\n\t"
                     "4:\n\t"
                     "ldr pc, [sp, #20]\n\t"
                     "9:\n\t"
                     "ldr r9, [r0]\n\t"
                     "ldr r10, [r0, r2]\n\t"
                     "add r0, r0, r2, lsl #1\n\t"
                     "pkhtb r12, r10, r9, asr #16\n\t"
                     "pkhbt r9, r9, r10, lsl #16\n\t"
                     "sxtb16 r10, r9, ror #8\n\t"
                     "str r10, [r4], #4\n\t"
                     "sxtb16 r10, r12\n\t"
                     "str r10, [r5], #4\n\t"
                     "sxtb16 r10, r12, ror #8\n\t"
                     "str r10, [r6], #4\n\t"
                     "ldr pc, [sp, #24]\n\t"
                     "10:\n\t"
                     "ldrsb r9, [r0, #1]\n\t"
                     "ldrsb r10, [r0, #2]\n\t"
                     "ldrsb r11, [r0, #3]\n\t"
                     "strh r9, [r4]\n\t"
                     "strh r10, [r5]\n\t"
                     "strh r11, [r6]\n\t"
                     "7:\n\t"
                     "ldrd r8, r9, [sp, #8]\n\t"
                     "add r0, r0, r8\n\t"
                     "add r4, r4, r9\n\t"
                     "add r5, r5, r9\n\t"
                     "add r6, r6, r9\n\t"
                     "ldr r8, [sp, #16]\n\t"
                     "cmp r0, r8\n\t"
                     "bne 5b\n\t"
                     "add sp, sp, #36\n\t"
                     "pop {r4-r11, pc}\n\t"
                     TH_DW_COPY_SHORT_CHAIN(TH_DW_COPY3_LEAD, TH_DW_COPY3_QUAD));
}
#pragma GCC diagnostic pop
#undef TH_DW_COPY3_QUAD
#undef TH_DW_COPY3_LEAD

/* One quad of one channel's pixels for copy4_lone_asm (copy_rows_asm's quad, to plane 3):
 * 4 LDRSB, ADD, 2 PKHBT, STRD. Byte loads beat the pixel words here: one plane's values
 * from words take a PKHTB and an SXTB16 per two, 10 instructions a quad, not 8. */
#define TH_DW_COPY1_QUAD                                                                     \
    "ldrsb r8, [r0]\n\t"                                                                     \
    "ldrsb r9, [r0, r2]\n\t"                                                                 \
    "ldrsb r10, [r0, r2, lsl #1]\n\t"                                                        \
    "ldrsb r11, [r0, r3]\n\t"                                                                \
    "add r0, r0, r2, lsl #2\n\t"                                                             \
    "pkhbt r8, r8, r9, lsl #16\n\t"                                                          \
    "pkhbt r10, r10, r11, lsl #16\n\t"                                                       \
    "strd r8, r10, [r6], #8\n\t"

#define TH_DW_COPY1_LEAD                                                                     \
    "ldrsb r9, [r0]\n\t"                                                                     \
    "add r0, r0, r2\n\t"                                                                     \
    "strh r9, [r6], #2\n\t"

/* The one channel left after the groups of four (C % 4 == 1 or 2, path DW3X3_LONE), into
 * plane 3 (the plane of record 3 that runs it): copy4_rows_asm's rows and jumps (the
 * straight-line quads of DW3X3_COPY_SHORT too) with one plane's parts, where
 * copy_rows_asm tests its flags per row and ends a row with a remainder by a whole
 * overlapping quad (13 instructions for a pair, here 7 with its jump). The caller passes a
 * copy of the four-plane arguments (jumps[0] 0: its own jumps) and the channel's src.
 * Registers: r0 input, r6 the plane, r2 in_c, r3 3 x in_c, r7 end of the row's quads
 * (loop), r8-r11 values; s_adv, d_adv and src_end in r4 r5 r1 (planes 0-2 unused). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline, unused))
copy4_lone_asm(dw_copy4_args *a, const int8_t *src)
{
    __asm__ volatile(TH_DW_COPY_ROWS_ENTRY_WITH("ldrd r4, r5, [sp, #8]\n\t"
                                                "ldr r1, [sp, #16]\n\t")
                     "8:\n\t" TH_DW_COPY1_LEAD
                     "3:\n\t"
                     "ldr r7, [sp]\n\t"
                     "add r7, r7, r6\n\t"
                     "ldr pc, [sp, #28]\n\t"
                     "1:\n\t" TH_DW_COPY1_QUAD "2:\n\t" TH_DW_COPY1_QUAD
                     "cmp r6, r7\n\t"
                     "bne 1b\n\t"
                     "4:\n\t"
                     "ldr pc, [sp, #20]\n\t"
                     "9:\n\t"
                     "ldrsb r9, [r0]\n\t"
                     "ldrsb r10, [r0, r2]\n\t"
                     "add r0, r0, r2, lsl #1\n\t"
                     "pkhbt r9, r9, r10, lsl #16\n\t"
                     "str r9, [r6], #4\n\t"
                     "ldr pc, [sp, #24]\n\t"
                     "10:\n\t"
                     "ldrsb r9, [r0]\n\t"
                     "strh r9, [r6]\n\t"
                     "7:\n\t"
                     "add r0, r0, r4\n\t"
                     "add r6, r6, r5\n\t"
                     "cmp r0, r1\n\t"
                     "bne 5b\n\t"
                     "add sp, sp, #36\n\t"
                     "pop {r4-r11, pc}\n\t"
                     TH_DW_COPY_SHORT_CHAIN(TH_DW_COPY1_LEAD, TH_DW_COPY1_QUAD));
}
#pragma GCC diagnostic pop
#undef TH_DW_COPY1_QUAD
#undef TH_DW_COPY1_LEAD
#undef TH_DW_COPY_ROWS_ENTRY
#undef TH_DW_COPY_ROWS_ENTRY_WITH
#undef TH_DW_COPY_SHORT_PICK
#undef TH_DW_COPY_JUMPS_MADE
#undef TH_DW_COPY_SHORT_START
#undef TH_DW_COPY_SHORT_LEAD
#undef TH_DW_COPY_SHORT_CHAIN
#endif

#if TH_DW_COPY_ASM
/* The copy4_rows_asm arguments of every group of a call (plane 0 of the group at `plane`);
 * returns the input offset of channel 0's first interior pixel, or -1 when the interior is
 * empty. Made once per call: a group then passes only its input pointer. */
static int32_t copy4_prepare(dw_copy4_args *a, const dw_geometry *g, int16_t *plane,
                             int32_t slot, int copy_short)
{
    const int32_t in_c = g->src_inner;
    const dw_interior box = interior_of(g);
    if (box.x_end == box.x_begin || box.r_end == box.r_begin) {
        return -1;
    }
    const int32_t lead = box.x_begin & 1; /* one value first: the rest is word aligned */
    const int32_t rest = box.x_end - box.x_begin - lead;
    const int32_t quads = rest / 4;
    const int32_t pair = (rest >> 1) & 1;
    const int32_t done = lead + 4 * quads + 2 * pair; /* pixels before a last one */
    a->d = plane + box.r_begin * g->pw + box.x_begin;
    a->in_c = in_c;
    a->slot_bytes = (int32_t)sizeof(int16_t) * slot;
    a->quad_bytes = 8 * quads;
    a->flags = lead | (pair << 1) | ((rest & 1) << 2) | (copy_short ? 8 : 0);
    a->s_adv = g->src_outer - done * in_c;
    a->d_adv = (int32_t)sizeof(int16_t) * (g->pw - done);
    a->span = (box.r_end - box.r_begin) * g->src_outer;
    a->jumps[0] = 0; /* the first group's call works them out */
    return (box.x_begin - g->pad_inner) * in_c + (box.r_begin - g->pad_outer) * g->src_outer;
}
#endif

#if !TH_DW_COPY_ASM
/* Copies channels c .. c + 3 of the input into the interiors of four planes `slot` values
 * apart (fill_interior for four channels at once: a pixel's four values are one load; with
 * the assembly, the kernel calls copy4_rows_asm itself). */
static void fill_group4(int16_t *plane, int32_t slot, const dw_geometry *g, const int8_t *in,
                        int32_t c)
{
    const int32_t pw = g->pw;
    const int32_t in_c = g->src_inner;
    const dw_interior box = interior_of(g);
    if (box.x_end == box.x_begin || box.r_end == box.r_begin) {
        return;
    }
    const int32_t lead = box.x_begin & 1; /* one value first: the rest is word aligned */
    const int8_t *src = in + (box.x_begin - g->pad_inner) * in_c + c +
                        (box.r_begin - g->pad_outer) * g->src_outer;
    int16_t *d = plane + box.r_begin * pw + box.x_begin;
    const int32_t pairs = (box.x_end - box.x_begin - lead) / 2;
    const int32_t tail = (box.x_end - box.x_begin - lead) & 1;
    for (int32_t r = box.r_begin; r < box.r_end; r++, src += g->src_outer, d += pw) {
        const int8_t *s = src;
        int16_t *q = d;
        if (lead) {
            put4(q++, slot, th_read_s32(s));
            s += in_c;
        }
        for (int32_t i = 0; i < 2 * pairs; i++) {
            put4(q + i, slot, th_read_s32(s + (int32_t)i * in_c));
        }
        q += 2 * pairs;
        s += 2 * pairs * in_c;
        if (tail) {
            put4(q, slot, th_read_s32(s));
        }
    }
}
#endif

#if TH_DW_COPY_ASM
/* What copy_small_rows_asm reads (offsets fixed in the assembly). */
typedef struct {
    const int8_t *src; /* 0: first interior pixel of the first row */
    int16_t *d; /* 4: its place in the first plane */
    int32_t slot_bytes; /* 8: bytes between the planes */
    int32_t quad_bytes; /* 12: 8 x the pixel quads per row */
    int32_t flags; /* 16: bit 0 one pixel first (odd start), bits 2-3 pixels after the quads */
    int32_t s_adv; /* 20: input bytes from after a row's last pixel to the next row */
    int32_t d_adv; /* 24: plane bytes, likewise */
    int32_t rows; /* 28: at least one */
} dw_copy_small_args;

typedef char dw_copy_small_args_size_check[sizeof(dw_copy_small_args) == 32 ? 1 : -1];

/* Four contiguous 3-channel pixels (a b c) from r0 to the planes at r1 r2 r3: three words
 * [a0 b0 c0 a1] [b1 c1 a2 b2] [c2 a3 b3 c3]; SXTB16 of each word at the rotations that put
 * every value in the half its plane word wants (w0: 0, 8; w1: 16, 24; w2: 0, 8), then one
 * PKHBT / PKHTB per plane word: 3 LDR, 6 SXTB16, 6 PKH, 3 STRD for 12 values. */
#define TH_DW_QUAD3                                                                          \
    "ldr r8, [r0], #4\n\t"                                                                   \
    "ldr r9, [r0], #4\n\t"                                                                   \
    "ldr r10, [r0], #4\n\t"                                                                  \
    "sxtb16 r11, r8\n\t"                 /* a0 c0 */                                         \
    "sxtb16 r12, r8, ror #8\n\t"         /* b0 a1 */                                         \
    "pkhbt r8, r11, r12\n\t"             /* a0 a1 */                                         \
    "sxtb16 lr, r9, ror #16\n\t"         /* a2 b1 */                                         \
    "pkhbt r12, r12, lr\n\t"             /* b0 b1 */                                         \
    "sxtb16 r9, r9, ror #24\n\t"         /* b2 c1 */                                         \
    "pkhtb r11, r9, r11, asr #16\n\t"    /* c0 c1 */                                         \
    "sxtb16 r4, r10\n\t"                 /* c2 b3 */                                         \
    "sxtb16 r5, r10, ror #8\n\t"         /* a3 c3 */                                         \
    "pkhbt r6, lr, r5, lsl #16\n\t"      /* a2 a3 */                                         \
    "pkhbt lr, r9, r4\n\t"               /* b2 b3 */                                         \
    "pkhbt r10, r4, r5\n\t"              /* c2 c3 */                                         \
    "strd r8, r6, [r1], #8\n\t"                                                              \
    "strd r12, lr, [r2], #8\n\t"                                                             \
    "strd r11, r10, [r3], #8\n\t"

#define TH_DW_PIXEL3                                                                         \
    "ldrsb r9, [r0]\n\t"                                                                     \
    "ldrsb r10, [r0, #1]\n\t"                                                                \
    "ldrsb r11, [r0, #2]\n\t"                                                                \
    "adds r0, r0, #3\n\t"                                                                    \
    "strh r9, [r1], #2\n\t"                                                                  \
    "strh r10, [r2], #2\n\t"                                                                 \
    "strh r11, [r3], #2\n\t"

/* Four 2-channel pixels: two words [a0 b0 a1 b1] [a2 b2 a3 b3], SXTB16 and SXTB16 ROR 8
 * are the plane words. */
#define TH_DW_QUAD2                                                                          \
    "ldr r8, [r0], #4\n\t"                                                                   \
    "ldr r9, [r0], #4\n\t"                                                                   \
    "sxtb16 r10, r8\n\t"                                                                     \
    "sxtb16 r11, r9\n\t"                                                                     \
    "sxtb16 r8, r8, ror #8\n\t"                                                              \
    "sxtb16 r9, r9, ror #8\n\t"                                                              \
    "strd r10, r11, [r1], #8\n\t"                                                            \
    "strd r8, r9, [r2], #8\n\t"

#define TH_DW_PIXEL2                                                                         \
    "ldrsb r9, [r0]\n\t"                                                                     \
    "ldrsb r10, [r0, #1]\n\t"                                                                \
    "adds r0, r0, #2\n\t"                                                                    \
    "strh r9, [r1], #2\n\t"                                                                  \
    "strh r10, [r2], #2\n\t"

/* Copies the interior rows of the 2 or 3 planes of all channels (contiguous pixels): per
 * row one pixel when the interior starts at an odd column, then quads of pixels, then up to
 * three pixels. Registers: r0 input, r1 r2 r3 the planes (r3 unused with two), r7 end of
 * the row's quads, r4-r6 r8-r12 lr values; row state on the stack. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define TH_DW_COPY_SMALL_FN(NAME, QUAD, PIXEL)                                               \
    static void __attribute__((naked, noinline)) NAME(const dw_copy_small_args *a)           \
    {                                                                                        \
        __asm__ volatile("push {r4-r11, lr}\n\t"                                             \
                         "sub sp, sp, #20\n\t"                                               \
                         "ldrd r4, r5, [r0, #12]\n\t"                                        \
                         "strd r4, r5, [sp]\n\t"                                             \
                         "ldrd r4, r5, [r0, #20]\n\t"                                        \
                         "strd r4, r5, [sp, #8]\n\t"                                         \
                         "ldr r4, [r0, #28]\n\t"                                             \
                         "str r4, [sp, #16]\n\t"                                             \
                         "ldm r0, {r0, r1, r3}\n\t"                                          \
                         "add r2, r1, r3\n\t"                                                \
                         "add r3, r2, r3\n\t"                                                \
                         "5:\n\t"                                                            \
                         "ldr r8, [sp, #4]\n\t"                                              \
                         "tst r8, #1\n\t"                                                    \
                         "beq 3f\n\t" PIXEL "3:\n\t"                                         \
                         "ldr r7, [sp]\n\t"                                                  \
                         "cbz r7, 4f\n\t"                                                    \
                         "add r7, r7, r1\n\t"                                                \
                         "1:\n\t" QUAD "cmp r1, r7\n\t"                                      \
                         "bne 1b\n\t"                                                        \
                         "4:\n\t"                                                            \
                         "ldr r8, [sp, #4]\n\t"                                              \
                         "lsrs r8, r8, #2\n\t"                                               \
                         "beq 6f\n\t"                                                        \
                         "7:\n\t" PIXEL "subs r8, r8, #1\n\t"                                \
                         "bne 7b\n\t"                                                        \
                         "6:\n\t"                                                            \
                         "ldrd r8, r9, [sp, #8]\n\t"                                         \
                         "add r0, r0, r8\n\t"                                                \
                         "add r1, r1, r9\n\t"                                                \
                         "add r2, r2, r9\n\t"                                                \
                         "add r3, r3, r9\n\t"                                                \
                         "ldr r8, [sp, #16]\n\t"                                             \
                         "subs r8, r8, #1\n\t"                                               \
                         "str r8, [sp, #16]\n\t"                                             \
                         "bne 5b\n\t"                                                        \
                         "add sp, sp, #20\n\t"                                               \
                         "pop {r4-r11, pc}\n\t");                                            \
    }
TH_DW_COPY_SMALL_FN(copy3_rows_asm, TH_DW_QUAD3, TH_DW_PIXEL3)
TH_DW_COPY_SMALL_FN(copy2_rows_asm, TH_DW_QUAD2, TH_DW_PIXEL2)
#pragma GCC diagnostic pop
#undef TH_DW_COPY_SMALL_FN
#undef TH_DW_QUAD3
#undef TH_DW_PIXEL3
#undef TH_DW_QUAD2
#undef TH_DW_PIXEL2
#endif

/* Copies all n = 2 or 3 channels of the input (untransposed: a row's pixels are
 * contiguous, src_inner == n) into the interiors of n planes `slot` values apart. */
static void fill_group_small(int16_t *plane, int32_t slot, const dw_geometry *g,
                             const int8_t *in, int32_t n)
{
    const int32_t pw = g->pw;
    const dw_interior box = interior_of(g);
    const int32_t cols = box.x_end - box.x_begin;
    if (cols <= 0 || box.r_end <= box.r_begin) {
        return;
    }
    const int8_t *src = in + (box.x_begin - g->pad_inner) * n +
                        (box.r_begin - g->pad_outer) * g->src_outer;
    int16_t *d = plane + box.r_begin * pw + box.x_begin;
#if TH_DW_COPY_ASM
    const int32_t lead = box.x_begin & 1; /* one pixel first: the rest is word aligned */
    const int32_t rest = cols - lead;
    dw_copy_small_args a;
    a.src = src;
    a.d = d;
    a.slot_bytes = (int32_t)sizeof(int16_t) * slot;
    a.quad_bytes = 8 * (rest / 4);
    a.flags = lead | ((rest & 3) << 2);
    a.s_adv = g->src_outer - cols * n;
    a.d_adv = (int32_t)sizeof(int16_t) * (pw - cols);
    a.rows = box.r_end - box.r_begin;
    if (n == 3) {
        copy3_rows_asm(&a);
    } else {
        copy2_rows_asm(&a);
    }
#else
    for (int32_t r = box.r_begin; r < box.r_end; r++, src += g->src_outer, d += pw) {
        for (int32_t i = 0; i < cols; i++) {
            for (int32_t k = 0; k < n; k++) {
                d[k * slot + i] = src[i * n + k];
            }
        }
    }
#endif
}

/* Stages channels c .. c + group - 1 into their planes (group 4, 2 or 3 from the fast
 * scratch). A function of its own, so that the copies' argument blocks are not in
 * th_dw_conv_3x3_s8's frame during the output rows. */
static void __attribute__((noinline))
fill_group(int16_t *plane, int32_t slot, const dw_geometry *g, const int8_t *in, int32_t c,
           int32_t group)
{
#if !TH_DW_COPY_ASM
    if (TH_NN_KEEP_DW3X3_GROUP4 && group == 4) {
        fill_group4(plane, slot, g, in, c);
        return;
    }
#else
    (void)c; /* four planes: the kernel calls copy4_rows_asm itself */
#endif
    if (TH_NN_PATH(DW3X3_SMALL_GROUP)) { /* never chosen where left out */
        fill_group_small(plane, slot, g, in, group);
    }
}

/* `fast_only` is a compile-time constant at each call site (see mat_mult). With it, the
 * accumulators are doubled (weights times 2) and th_fast_rq_apply2 applies. */
TH_INLINE int8_t dw_out(int32_t acc, const th_fast_rq *rq, int32_t c,
                        const th_per_channel_quant *quant, const th_nn_out_stage *stage,
                        int fast_only)
{
    int32_t v;
    if (fast_only) {
        return (int8_t)th_fast_rq_apply2(acc, rq);
    }
    if (stage->fast) {
        v = th_fast_rq_apply(acc, rq);
    } else {
        v = th_requantize_s8(acc, quant->multiplier[c], quant->shift[c], stage->output_offset);
    }
    return (int8_t)th_clamp(v, stage->act_min, stage->act_max);
}

/* One filter row of output k: taps (v_k) . (w0, w1) + bottom(v_k+1) * w2, where v_j is
 * the word of plane values (2j, 2j+1) from the row's first tap (stride 2), or for stride 1
 * outputs 2j and 2j + 1 from v_j = (p0, p1) and v_j+1 = (p2, p3):
 *     out 2j     = (p0, p1) . (w0, w1) + p2 * w2        SMLAD v_j, W01; SMLABT v_j+1, W12
 *     out 2j + 1 = p1 * w0 + (p2, p3) . (w1, w2)       SMLATB v_j, W01; SMLAD v_j+1, W12
 * with W01 = (w0, w1), W12 = (w1, w2): aligned word loads only. */
#define TH_DW_ROW_S1(p, w01, w12)                                                            \
    do {                                                                                     \
        const int32_t v0 = th_read_s32(p);                                                   \
        const int32_t v1 = th_read_s32((p) + 2);                                             \
        const int32_t v2 = th_read_s32((p) + 4);                                             \
        a0 = th_smlad(v0, w01, a0);                                                          \
        a0 = th_smlabt(v1, w12, a0);                                                         \
        a1 = th_smlatb(v0, w01, a1);                                                         \
        a1 = th_smlad(v1, w12, a1);                                                          \
        a2 = th_smlad(v1, w01, a2);                                                          \
        a2 = th_smlabt(v2, w12, a2);                                                         \
        a3 = th_smlatb(v1, w01, a3);                                                         \
        a3 = th_smlad(v2, w12, a3);                                                          \
    } while (0)

/* One filter row of four stride-2 outputs. */
#define TH_DW_ROW_S2(p, w01, w12)                                                            \
    do {                                                                                     \
        const int32_t v0 = th_read_s32(p);                                                   \
        const int32_t v1 = th_read_s32((p) + 2);                                             \
        const int32_t v2 = th_read_s32((p) + 4);                                             \
        const int32_t v3 = th_read_s32((p) + 6);                                             \
        const int32_t v4 = th_read_s32((p) + 8);                                             \
        a0 = th_smlabt(v1, w12, th_smlad(v0, w01, a0));                                      \
        a1 = th_smlabt(v2, w12, th_smlad(v1, w01, a1));                                      \
        a2 = th_smlabt(v3, w12, th_smlad(v2, w01, a2));                                      \
        a3 = th_smlabt(v4, w12, th_smlad(v3, w01, a3));                                      \
    } while (0)

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* What the assembly reads, in the order its stack frame holds it (the first 15 words are
 * copied there): the weights of filter row 0 and the accumulator start together (one LDM
 * brings all three), the other rows' weight words, the fast requantization, the row end's
 * words (o_end and e_count: one LDRD), the row tail's jumps. e_count: the shift in its low
 * byte (all ASR reads), the row's tail in bits 8-9 (bit 8 a pair after each row's blocks,
 * bit 9 a single output), above them 2^22 minus the loop's iterations per row (ADDS #1024
 * carries out after the last one and leaves the bits below). The tail bits are the same
 * for every row and channel of a call, so the call's first channel turns them into the
 * addresses a row goes on to after its blocks and after its pair (tail[0] 0 until then):
 * one LDR PC per row instead of a shift and two branches. `next`: the channel to run after
 * this one in the same call (the four staged channels of a group: one call, one frame), or
 * NULL. */
typedef struct dw_row_args_s {
    int32_t w0[2]; /* 0: W01, W12 of filter row 0 */
    int32_t acc0; /* 8 */
    int32_t w12[4]; /* 12: W01, W12 of rows 1, 2 */
    int32_t multiplier; /* 28 */
    int32_t round_zp; /* 32 */
    int8_t *o_end; /* 36: the first output of the row after the last */
    int32_t e_count; /* 40 */
    int32_t p_skip; /* 44: bytes from a row's last block to the next row's first window */
    int32_t o_skip; /* 48: output bytes from after a row's last block to the next row */
    uintptr_t tail[2]; /* 52: the pair, single or row end; after the pair: single or end */
    const int16_t *p0; /* 60: row windows of the first output row */
    const int16_t *p1;
    const int16_t *p2;
    int8_t *o; /* 72: its first output */
    int32_t cs; /* 76: output bytes between neighbours along the row */
#if TH_NN_KEEP_DW3X3_GROUP4
    const struct dw_row_args_s *next; /* 80 (only where groups of four can chain) */
#endif
} dw_row_args;

/* The assembly's offsets assume 32-bit pointers. */
typedef char
    dw_row_args_size_check[sizeof(dw_row_args) == (TH_NN_KEEP_DW3X3_GROUP4 ? 84 : 80) ? 1 : -1];

/* The chain of a group's records (`next`) only in a build that keeps path DW3X3_GROUP4: a
 * build without it (a model whose calls all run one channel at a time, e.g. kws) keeps
 * the walkers' one-record code (no `next` in the frame, no check after the last row). A
 * chained record (label 11, after the return) copies only its own first 11 words to the
 * frame: p_skip, o_skip and the tail jumps are the call's, already there from its first
 * record (which alone works the jumps out), then joins at label 12. */
#if TH_NN_KEEP_DW3X3_GROUP4
#define TH_DW_ASM_FRAME "#64"
#define TH_DW_ASM_NEXT_SAVE                                                                  \
    "ldr r1, [r0, #80]\n\t"                                                                  \
    "str r1, [sp, #60]\n\t"
#define TH_DW_ASM_JOIN "12:\n\t"
#define TH_DW_ASM_NEXT_RUN                                                                   \
    "ldr r0, [sp, #60]\n\t"                                                                  \
    "cmp r0, #0\n\t"                                                                         \
    "bne 11f\n\t"
#define TH_DW_ASM_CHAIN                                                                      \
    "11:\n\t"                                                                                \
    TH_DW_ASM_NEXT_SAVE                                                                      \
    "ldm r0!, {r1-r11}\n\t"                                                                  \
    "stm sp, {r1-r11}\n\t"                                                                   \
    "add r0, r0, #16\n\t"                                                                    \
    "b 12b\n\t"
#else
#define TH_DW_ASM_FRAME "#60"
#define TH_DW_ASM_NEXT_SAVE
#define TH_DW_ASM_JOIN
#define TH_DW_ASM_NEXT_RUN
#define TH_DW_ASM_CHAIN
#endif

/* Register use of the block loop: r0-r2 row windows p0-p2, r3 r4 weight pair (W01, W12) or
 * requantization (multiplier, round_zp), r6 r7 r8 r5 accumulators of outputs 0-3 (r5 takes
 * the start value: ldm sp, {r3, r4, r5}), r9 r10 plane words, r11 output, r12 its step,
 * lr shift and iteration count (e_count). */

/* Stride 1, a filter row's first eight instructions for four outputs, the fourth's first
 * MAC into A3 (words 0-2); the four- and five-output blocks go on from there. */
#define TH_DW_S1_HEAD(P, I0, I1, I2, I3, A3)                                                 \
    "ldrd r9, r10, [" P "], #8\n\t"                                                          \
    "smlad r6, r9, r3, " I0 "\n\t"                                                           \
    "smlatb r7, r9, r3, " I1 "\n\t"                                                          \
    "ldr r9, [" P "]\n\t"                                                                    \
    "smlabt r6, r10, r4, r6\n\t"                                                             \
    "smlad r7, r10, r4, r7\n\t"                                                              \
    "smlad r8, r10, r3, " I2 "\n\t"                                                          \
    "smlatb " A3 ", r10, r3, " I3 "\n\t"

/* One filter row for four outputs (stride 1): LDRD + LDR + 8 MAC for 12 MACs; I0-I3 are the
 * accumulators' addends (r5, the start value, for every output of row 0). */
#define TH_DW_ASM_S1(P, I0, I1, I2, I3)                                                      \
    TH_DW_S1_HEAD(P, I0, I1, I2, I3, "r5")                                                   \
    "smlabt r8, r9, r4, r8\n\t"                                                              \
    "smlad r5, r9, r4, r5\n\t"

/* Stride 2, a filter row's first eight MACs of four outputs, the fourth's first into A3 (words
 * 0-3); the four- and five-output blocks go on from there. */
#define TH_DW_S2_HEAD(P, I0, I1, I2, I3, A3)                                                 \
    "ldrd r9, r10, [" P "], #8\n\t"                                                          \
    "smlad r6, r9, r3, " I0 "\n\t"                                                           \
    "smlabt r6, r10, r4, r6\n\t"                                                             \
    "smlad r7, r10, r3, " I1 "\n\t"                                                          \
    "ldrd r9, r10, [" P "], #8\n\t"                                                          \
    "smlabt r7, r9, r4, r7\n\t"                                                              \
    "smlad r8, r9, r3, " I2 "\n\t"                                                           \
    "smlabt r8, r10, r4, r8\n\t"                                                             \
    "smlad " A3 ", r10, r3, " I3 "\n\t"

/* One filter row for four outputs (stride 2): 2 LDRD + LDR + 8 MAC for 12 MACs. */
#define TH_DW_ASM_S2(P, I0, I1, I2, I3)                                                      \
    TH_DW_S2_HEAD(P, I0, I1, I2, I3, "r5")                                                   \
    "ldr r9, [" P "]\n\t"                                                                    \
    "smlabt r5, r9, r4, r5\n\t"

/* Requantizes accumulator A (doubled) and stores it at ADDR. */
#define TH_DW_ASM_OUT(A, ADDR)                                                               \
    "smmlar r9, " A ", r3, r4\n\t"                                                           \
    "add r9, r9, " A ", asr #31\n\t"                                                         \
    "asr r9, r9, lr\n\t"                                                                     \
    "ssat r9, #8, r9\n\t"                                                                    \
    "strb r9, " ADDR "\n\t"

/* One block of four outputs: 3 weight loads (the first with the start value), 9 words of
 * input in 6 loads, 24 MAC instructions, one load of the requantization constants, 4 x 5 to
 * requantize and store, 2 output steps. ROW is TH_DW_ASM_S1 or TH_DW_ASM_S2. */
#define TH_DW_ASM_BLOCK(ROW)                                                                 \
    "ldm sp, {r3, r4, r5}\n\t"                                                               \
    ROW("r0", "r5", "r5", "r5", "r5")                                                        \
    "ldrd r3, r4, [sp, #12]\n\t"                                                             \
    ROW("r1", "r6", "r7", "r8", "r5")                                                        \
    "ldrd r3, r4, [sp, #20]\n\t"                                                             \
    ROW("r2", "r6", "r7", "r8", "r5")                                                        \
    "ldrd r3, r4, [sp, #28]\n\t"                                                             \
    TH_DW_ASM_OUT("r6", "[r11]")                                                             \
    TH_DW_ASM_OUT("r7", "[r11, r12]")                                                        \
    "add r11, r11, r12, lsl #1\n\t"                                                          \
    TH_DW_ASM_OUT("r8", "[r11]")                                                             \
    TH_DW_ASM_OUT("r5", "[r11, r12]")                                                        \
    "add r11, r11, r12, lsl #1\n\t"

/* The last outputs of a row after its blocks: a pair (stride 1: 4 MAC per filter row) ... */
#define TH_DW_PAIR_S1(P, I0, I1)                                                             \
    "ldrd r9, r10, [" P "], #4\n\t"                                                          \
    "smlad r6, r9, r3, " I0 "\n\t"                                                           \
    "smlatb r7, r9, r3, " I1 "\n\t"                                                          \
    "smlabt r6, r10, r4, r6\n\t"                                                             \
    "smlad r7, r10, r4, r7\n\t"

/* ... or stride 2 (r8 holds the window's third word) ... */
#define TH_DW_PAIR_S2(P, I0, I1)                                                             \
    "ldrd r9, r10, [" P "], #8\n\t"                                                          \
    "ldr r8, [" P "]\n\t"                                                                    \
    "smlad r6, r9, r3, " I0 "\n\t"                                                           \
    "smlabt r6, r10, r4, r6\n\t"                                                             \
    "smlad r7, r10, r3, " I1 "\n\t"                                                          \
    "smlabt r7, r8, r4, r7\n\t"

/* ... and a single output (either stride). */
#define TH_DW_SINGLE(P, I0)                                                                  \
    "ldrd r9, r10, [" P "]\n\t"                                                              \
    "smlad r6, r9, r3, " I0 "\n\t"                                                           \
    "smlabt r6, r10, r4, r6\n\t"

#define TH_DW_ASM_PAIR(PAIR)                                                                 \
    "ldm sp, {r3, r4, r5}\n\t"                                                               \
    PAIR("r0", "r5", "r5")                                                                   \
    "ldrd r3, r4, [sp, #12]\n\t"                                                             \
    PAIR("r1", "r6", "r7")                                                                   \
    "ldrd r3, r4, [sp, #20]\n\t"                                                             \
    PAIR("r2", "r6", "r7")                                                                   \
    "ldrd r3, r4, [sp, #28]\n\t"                                                             \
    TH_DW_ASM_OUT("r6", "[r11]")                                                             \
    TH_DW_ASM_OUT("r7", "[r11, r12]")                                                        \
    "add r11, r11, r12, lsl #1\n\t"

#define TH_DW_ASM_SINGLE                                                                     \
    "ldm sp, {r3, r4, r5}\n\t"                                                               \
    TH_DW_SINGLE("r0", "r5")                                                                 \
    "ldrd r3, r4, [sp, #12]\n\t"                                                             \
    TH_DW_SINGLE("r1", "r6")                                                                 \
    "ldrd r3, r4, [sp, #20]\n\t"                                                             \
    TH_DW_SINGLE("r2", "r6")                                                                 \
    "ldrd r3, r4, [sp, #28]\n\t"                                                             \
    TH_DW_ASM_OUT("r6", "[r11]")

/* Three outputs after a row's blocks (out_w % 4 == 3; path DW3X3_TAIL3) as one tail, or a
 * row of three alone (paths DW3X3_S{1,2}_THREE): 2 loads + 6 MAC per filter row, the
 * weights and requantization loaded once, 44 instructions where the pair and the single
 * output take 51 and a jump between them. The pointers move as the pair's (two outputs),
 * the third output is stored in place, as the single one is. Stride 1 (cols 0-5 of the
 * window) ... */
#define TH_DW_THREE_S1(P, I0, I1, I2)                                                        \
    "ldrd r9, r10, [" P "], #4\n\t"                                                          \
    "smlad r6, r9, r3, " I0 "\n\t"                                                           \
    "smlatb r7, r9, r3, " I1 "\n\t"                                                          \
    "smlabt r6, r10, r4, r6\n\t"                                                             \
    "smlad r7, r10, r4, r7\n\t"                                                              \
    "smlad r8, r10, r3, " I2 "\n\t"                                                          \
    "ldr r9, [" P ", #4]\n\t"                                                                \
    "smlabt r8, r9, r4, r8\n\t"

/* ... stride 2 (cols 0-7). */
#define TH_DW_THREE_S2(P, I0, I1, I2)                                                        \
    "ldrd r9, r10, [" P "], #8\n\t"                                                          \
    "smlad r6, r9, r3, " I0 "\n\t"                                                           \
    "smlabt r6, r10, r4, r6\n\t"                                                             \
    "smlad r7, r10, r3, " I1 "\n\t"                                                          \
    "ldrd r9, r10, [" P "]\n\t"                                                              \
    "smlabt r7, r9, r4, r7\n\t"                                                              \
    "smlad r8, r9, r3, " I2 "\n\t"                                                           \
    "smlabt r8, r10, r4, r8\n\t"

/* The three outputs' block (r6 r7 r8; r11 ends at the third, r12 its step). */
#define TH_DW_ASM_THREE_BLOCK(THREE)                                                         \
    "ldm sp, {r3, r4, r5}\n\t"                                                               \
    THREE("r0", "r5", "r5", "r5")                                                            \
    "ldrd r3, r4, [sp, #12]\n\t"                                                             \
    THREE("r1", "r6", "r7", "r8")                                                            \
    "ldrd r3, r4, [sp, #20]\n\t"                                                             \
    THREE("r2", "r6", "r7", "r8")                                                            \
    "ldrd r3, r4, [sp, #28]\n\t"                                                             \
    TH_DW_ASM_OUT("r6", "[r11]")                                                             \
    TH_DW_ASM_OUT("r7", "[r11, r12]")                                                        \
    "add r11, r11, r12, lsl #1\n\t"                                                          \
    TH_DW_ASM_OUT("r8", "[r11]")

#if TH_NN_KEEP_DW3X3_TAIL3
/* The tail at label 9, then to the row end; its jump is chosen with the others (pair and
 * single bits both set: the N and C flags, TH_DW_TAIL_PICK). */
#define TH_DW_ASM_THREE(THREE) "9:\n\t" TH_DW_ASM_THREE_BLOCK(THREE) "b 6f\n\t"
/* After a pair (N): the three (C, a single too) or the pair alone. */
#define TH_DW_TAIL_PICK                                                                      \
    "bpl 10f\n\t"                                                                            \
    "ite cs\n\t"                                                                             \
    "adrcs.w r1, 9f\n\t"                                                                     \
    "adrcc.w r1, 5f\n\t"                                                                     \
    "10:\n\t"
#else
#define TH_DW_ASM_THREE(THREE)
#define TH_DW_TAIL_PICK                                                                      \
    "it mi\n\t"                                                                              \
    "adrmi.w r1, 5f\n\t"
#endif

/* Pieces of both row walkers below: the next channel's arguments to frame word 15, the
 * arguments' first 15 words to the stack frame (r0 ends at the rest: r0-r2, r11, r12; a
 * chained record joins there); the blocks of four, two an iteration, entered at ENTRY; a
 * row's end (pointers to the next row, until o_end), then the next channel (label 11) or
 * the return. */
#define TH_DW_ASM_FRAME_ARGS                                                                 \
    TH_DW_ASM_NEXT_SAVE                                                                      \
    "ldm r0!, {r1-r8}\n\t"                                                                   \
    "stm sp, {r1-r8}\n\t"                                                                    \
    "ldm r0!, {r1-r7}\n\t"                                                                   \
    "add r8, sp, #32\n\t"                                                                    \
    "stm r8, {r1-r7}\n\t"                                                                    \
    TH_DW_ASM_JOIN                                                                           \
    "ldm r0, {r0-r2, r11, r12}\n\t"
#define TH_DW_ASM_BLOCKS(ROW, ENTRY)                                                         \
    "b " ENTRY "f\n\t"                                                                       \
    "1:\n\t" TH_DW_ASM_BLOCK(ROW) "2:\n\t" TH_DW_ASM_BLOCK(ROW)                              \
    "adds lr, lr, #1024\n\t"                                                                 \
    "bcc 1b\n\t"
#define TH_DW_ASM_ROW_END_WITH(NEXT_ROW)                                                      \
    "ldrd r3, r4, [sp, #44]\n\t"                                                             \
    "add r0, r0, r3\n\t"                                                                     \
    "add r1, r1, r3\n\t"                                                                     \
    "add r2, r2, r3\n\t"                                                                     \
    "add r11, r11, r4\n\t"                                                                   \
    NEXT_ROW                                                                                 \
    TH_DW_ASM_NEXT_RUN                                                                       \
    "add sp, sp, " TH_DW_ASM_FRAME "\n\t"                                                    \
    "pop {r4-r11, pc}\n\t"                                                                   \
    TH_DW_ASM_CHAIN
/* ... the next row until o_end (lr: the row's e_count again, its loop count used up) ... */
#define TH_DW_ASM_ROW_END(ENTRY)                                                             \
    TH_DW_ASM_ROW_END_WITH("ldrd r9, lr, [sp, #36]\n\t"                                      \
                           "cmp r11, r9\n\t"                                                 \
                           "bne " ENTRY "b\n\t")
/* ... or, rows of five outputs alone (no block loop uses lr's count), the rows counted in
 * lr above its low 10 bits (dw_asm_prepare: ADDS #1024 carries out after the last row):
 * 2 instructions a row instead of 3. */
#define TH_DW_ASM_ROW_END_COUNTED                                                            \
    TH_DW_ASM_ROW_END_WITH("adds lr, lr, #1024\n\t"                                          \
                           "bcc 3b\n\t")

/* Every output of every output row (at least one block of four per row, one row): the
 * blocks two per iteration (ADDS + BCC per eight outputs; with an odd count of blocks each
 * row enters at the second: ENTRY "2", else "1"), then the row's pair and single output as
 * the tail jumps say (worked out from e_count's tail bits by the call's first channel:
 * LSLS #23 moves them to N and C), until the output reaches o_end. The arguments' first
 * 15 words go to a stack frame. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define TH_DW_ROWS_FN(NAME, ROW, PAIR, THREE, ENTRY)                                         \
    static void __attribute__((naked, noinline)) NAME(dw_row_args *k)                        \
    {                                                                                        \
        __asm__ volatile("push {r4-r11, lr}\n\t"                                             \
                         "sub sp, sp, " TH_DW_ASM_FRAME "\n\t"                               \
                         "ldr r1, [r0, #52]\n\t"                                             \
                         "cbnz r1, 7f\n\t"                                                   \
                         "ldr r2, [r0, #40]\n\t"                                             \
                         "lsls r2, r2, #23\n\t"                                              \
                         "adr.w r1, 6f\n\t"                                                  \
                         "adr.w r3, 6f\n\t"                                                  \
                         "itt cs\n\t"                                                        \
                         "adrcs.w r1, 8f\n\t"                                                \
                         "adrcs.w r3, 8f\n\t"                                                \
                         TH_DW_TAIL_PICK                                                     \
                         "orr r1, r1, #1\n\t"                                                \
                         "orr r3, r3, #1\n\t"                                                \
                         "strd r1, r3, [r0, #52]\n\t"                                        \
                         "7:\n\t"                                                            \
                         TH_DW_ASM_FRAME_ARGS                                                \
                         "ldr lr, [sp, #40]\n\t"                                             \
                         TH_DW_ASM_BLOCKS(ROW, ENTRY)                                        \
                         "ldr pc, [sp, #52]\n\t"                                             \
                         "5:\n\t" TH_DW_ASM_PAIR(PAIR)                                         \
                         "ldr pc, [sp, #56]\n\t"                                             \
                         TH_DW_ASM_THREE(THREE)                                              \
                         "8:\n\t" TH_DW_ASM_SINGLE "6:\n\t"                                  \
                         TH_DW_ASM_ROW_END(ENTRY));                                          \
    }

TH_DW_ROWS_FN(dw_rows_s1_even, TH_DW_ASM_S1, TH_DW_PAIR_S1, TH_DW_THREE_S1, "1")
TH_DW_ROWS_FN(dw_rows_s1_odd, TH_DW_ASM_S1, TH_DW_PAIR_S1, TH_DW_THREE_S1, "2")
TH_DW_ROWS_FN(dw_rows_s2_even, TH_DW_ASM_S2, TH_DW_PAIR_S2, TH_DW_THREE_S2, "1")
TH_DW_ROWS_FN(dw_rows_s2_odd, TH_DW_ASM_S2, TH_DW_PAIR_S2, TH_DW_THREE_S2, "2")
#undef TH_DW_ROWS_FN

/* One filter row for five outputs, stride 1 (3 loads, cols 0-7 of the window: plane_w's
 * spare column is the last load's top half) ... Accumulators r6 r7 r8 r12 r5 for outputs
 * 0-4: r5 holds the start value until row 0's last use of it. */
#define TH_DW_FIVE_S1(P, I0, I1, I2, I3, I4)                                                 \
    TH_DW_S1_HEAD(P, I0, I1, I2, I3, "r12")                                                  \
    "ldr r10, [" P ", #4]\n\t"                                                               \
    "smlabt r8, r9, r4, r8\n\t"                                                              \
    "smlad r12, r9, r4, r12\n\t"                                                             \
    "smlad r5, r9, r3, " I4 "\n\t"                                                           \
    "smlabt r5, r10, r4, r5\n\t"

/* ... stride 2 (3 LDRD, words 0-5): 13 instructions for 15 MACs either way. */
#define TH_DW_FIVE_S2(P, I0, I1, I2, I3, I4)                                                 \
    TH_DW_S2_HEAD(P, I0, I1, I2, I3, "r12")                                                  \
    "ldrd r9, r10, [" P "]\n\t"                                                              \
    "smlabt r12, r9, r4, r12\n\t"                                                            \
    "smlad r5, r9, r3, " I4 "\n\t"                                                           \
    "smlabt r5, r10, r4, r5\n\t"

/* The last five outputs of a row in one block: the output step r12 becomes output 3's
 * accumulator, so it waits in the frame (the tail jumps' slot, unused here) and r10 brings
 * it back for the stores (RESTORE: and to r12 for the next row's blocks). */
#define TH_DW_ASM_FIVE(FIVE, RESTORE)                                                        \
    "ldm sp, {r3, r4, r5}\n\t"                                                               \
    FIVE("r0", "r5", "r5", "r5", "r5", "r5")                                                 \
    "ldrd r3, r4, [sp, #12]\n\t"                                                             \
    FIVE("r1", "r6", "r7", "r8", "r12", "r5")                                                \
    "ldrd r3, r4, [sp, #20]\n\t"                                                             \
    FIVE("r2", "r6", "r7", "r8", "r12", "r5")                                                \
    "ldrd r3, r4, [sp, #28]\n\t"                                                             \
    "ldr r10, [sp, #52]\n\t"                                                                 \
    TH_DW_ASM_OUT("r6", "[r11]")                                                             \
    TH_DW_ASM_OUT("r7", "[r11, r10]")                                                        \
    "add r11, r11, r10, lsl #1\n\t"                                                          \
    TH_DW_ASM_OUT("r8", "[r11]")                                                             \
    TH_DW_ASM_OUT("r12", "[r11, r10]")                                                       \
    "add r11, r11, r10, lsl #1\n\t"                                                          \
    TH_DW_ASM_OUT("r5", "[r11]")                                                             \
    RESTORE

/* Rows of 4m + 1 outputs (paths DW3X3_S{1,2}_FIVE{,_EVEN,_ODD}): m - 1 blocks of four (as
 * TH_DW_ROWS_FN's loop, LOOP: entered at "1" or "2" by their parity; none when m = 1),
 * then the last five in one block, where TH_DW_ROWS_FN runs a block, the tail's jump and a
 * single output that loads its weights and requantization again (stride 2: 78
 * instructions, here 72; stride 1: 75 and 72). p_skip and o_skip are dw_asm_prepare's for
 * m blocks and a single (done = 4m): the pointers move as far here. */
#define TH_DW_ROWS5_FN(NAME, FIVE, LOOP, RESTORE, ROW_END)                                   \
    static void __attribute__((naked, noinline)) NAME(dw_row_args *k)                        \
    {                                                                                        \
        __asm__ volatile("push {r4-r11, lr}\n\t"                                             \
                         "sub sp, sp, " TH_DW_ASM_FRAME "\n\t"                               \
                         TH_DW_ASM_FRAME_ARGS                                                \
                         "str r12, [sp, #52]\n\t"                                            \
                         "ldr lr, [sp, #40]\n\t"                                             \
                         LOOP                                                                \
                         "3:\n\t" TH_DW_ASM_FIVE(FIVE, RESTORE)                              \
                         ROW_END);                                                           \
    }

#define TH_DW_FIVE_RESTORE "mov r12, r10\n\t"

TH_DW_ROWS5_FN(dw_rows_s1_five, TH_DW_FIVE_S1, "", "", TH_DW_ASM_ROW_END_COUNTED)
TH_DW_ROWS5_FN(dw_rows_s1_five_even, TH_DW_FIVE_S1, TH_DW_ASM_BLOCKS(TH_DW_ASM_S1, "1"),
               TH_DW_FIVE_RESTORE, TH_DW_ASM_ROW_END("1"))
TH_DW_ROWS5_FN(dw_rows_s1_five_odd, TH_DW_FIVE_S1, TH_DW_ASM_BLOCKS(TH_DW_ASM_S1, "2"),
               TH_DW_FIVE_RESTORE, TH_DW_ASM_ROW_END("2"))
TH_DW_ROWS5_FN(dw_rows_s2_five_even, TH_DW_FIVE_S2, TH_DW_ASM_BLOCKS(TH_DW_ASM_S2, "1"),
               TH_DW_FIVE_RESTORE, TH_DW_ASM_ROW_END("1"))
TH_DW_ROWS5_FN(dw_rows_s2_five_odd, TH_DW_FIVE_S2, TH_DW_ASM_BLOCKS(TH_DW_ASM_S2, "2"),
               TH_DW_FIVE_RESTORE, TH_DW_ASM_ROW_END("2"))
#undef TH_DW_ROWS5_FN

/* Rows of exactly five outputs, stride 2 (path DW3X3_S2_FIVE; 10x10 -> 5x5 planes): a
 * plane row is then 12 values, 6 words (plane_w), and the three rows of a window are
 * consecutive, so one LDM brings a row's whole window (p1 = p0 + 12, p2 = p1 + 12; the
 * third LDM, without writeback, leaves r0 at the next output row's first plane row).
 * Three LDMs instead of nine LDRD; the row then has no free register, so the
 * requantization words wait in the frame (one LDM) and the output and row count go back
 * to it (one STRD): 68 instructions a row where TH_DW_ROWS5_FN's took 79. Registers: r0
 * plane, r1-r6 a plane row's words, r7 r8 the filter row's W01 W12, r9-r12 lr
 * accumulators of outputs 0-4 (lr the start value until row 0's last use of it); then
 * r1-r6 multiplier, round_zp, e_count, output, its step, o_skip (the output pointer
 * stops at output 2, output 4 is stored at [r4, r5, lsl #1]: dw_asm_prepare's o_skip
 * for variant 8 counts two outputs fewer than done = 4), r7 the value stored.
 * Frame: W01 W12 acc0 of filter row 0 (one LDM, as the record's first words), the six
 * requantization words at 12, rows 1-2's weight words at 36, `next` at 52. */
#define TH_DW_S2F_ROW(I0, I1, I2, I3)                                                        \
    "smlad r9, r1, r7, " I0 "\n\t"                                                           \
    "smlad r10, r2, r7, " I1 "\n\t"                                                          \
    "smlad r11, r3, r7, " I2 "\n\t"                                                          \
    "smlad r12, r4, r7, " I3 "\n\t"                                                          \
    "smlad lr, r5, r7, lr\n\t"                                                               \
    "smlabt r9, r2, r8, r9\n\t"                                                              \
    "smlabt r10, r3, r8, r10\n\t"                                                            \
    "smlabt r11, r4, r8, r11\n\t"                                                            \
    "smlabt r12, r5, r8, r12\n\t"                                                            \
    "smlabt lr, r6, r8, lr\n\t"
#define TH_DW_S2F_OUT(A, ADDR)                                                               \
    "smmlar r7, " A ", r1, r2\n\t"                                                           \
    "add r7, r7, " A ", asr #31\n\t"                                                         \
    "asr r7, r7, r3\n\t"                                                                     \
    "ssat r7, #8, r7\n\t"                                                                    \
    "strb r7, " ADDR "\n\t"
#if TH_NN_KEEP_DW3X3_GROUP4
#define TH_DW_S2F_NEXT_SAVE                                                                  \
    "ldr r1, [r0, #80]\n\t"                                                                  \
    "str r1, [sp, #52]\n\t"
#define TH_DW_S2F_NEXT_RUN                                                                   \
    "ldr r0, [sp, #52]\n\t"                                                                  \
    "cmp r0, #0\n\t"                                                                         \
    "bne 11b\n\t"
#else
#define TH_DW_S2F_NEXT_SAVE
#define TH_DW_S2F_NEXT_RUN
#endif
static void __attribute__((naked, noinline)) dw_rows_s2_five(dw_row_args *k)
{
    __asm__ volatile("push {r4-r11, lr}\n\t"
                     "sub sp, sp, #56\n\t"
                     "11:\n\t"
                     TH_DW_S2F_NEXT_SAVE
                     "ldm r0, {r1-r7}\n\t"
                     "stm sp, {r1-r3}\n\t"
                     "add r8, sp, #36\n\t"
                     "stm r8, {r4-r7}\n\t"
                     "ldrd r1, r2, [r0, #28]\n\t"
                     "ldr r3, [r0, #40]\n\t"
                     "ldrd r4, r5, [r0, #72]\n\t"
                     "ldr r6, [r0, #48]\n\t"
                     "add r8, sp, #12\n\t"
                     "stm r8, {r1-r6}\n\t"
                     "ldr r0, [r0, #60]\n\t"
                     "3:\n\t"
                     "ldm r0!, {r1-r6}\n\t"
                     "ldm sp, {r7, r8, lr}\n\t"
                     /* row 0: every output starts from lr (acc0), output 4 last */
                     TH_DW_S2F_ROW("lr", "lr", "lr", "lr")
                     "ldm r0!, {r1-r6}\n\t"
                     "ldrd r7, r8, [sp, #36]\n\t"
                     TH_DW_S2F_ROW("r9", "r10", "r11", "r12")
                     "ldm r0, {r1-r6}\n\t"
                     "ldrd r7, r8, [sp, #44]\n\t"
                     TH_DW_S2F_ROW("r9", "r10", "r11", "r12")
                     "add r8, sp, #12\n\t"
                     "ldm r8, {r1-r6}\n\t"
                     TH_DW_S2F_OUT("r9", "[r4]")
                     TH_DW_S2F_OUT("r10", "[r4, r5]")
                     "add r4, r4, r5, lsl #1\n\t"
                     TH_DW_S2F_OUT("r11", "[r4]")
                     TH_DW_S2F_OUT("r12", "[r4, r5]")
                     TH_DW_S2F_OUT("lr", "[r4, r5, lsl #1]")
                     "add r4, r4, r6\n\t"
                     "adds r3, r3, #1024\n\t"
                     "strd r3, r4, [sp, #20]\n\t"
                     "bcc 3b\n\t"
                     TH_DW_S2F_NEXT_RUN
                     "add sp, sp, #56\n\t"
                     "pop {r4-r11, pc}\n\t");
}
#undef TH_DW_S2F_ROW
#undef TH_DW_S2F_OUT
#undef TH_DW_S2F_NEXT_SAVE
#undef TH_DW_S2F_NEXT_RUN

#if TH_NN_KEEP_DW3X3_S2_EIGHT
/* Rows of exactly eight outputs, stride 2 (path DW3X3_S2_EIGHT; 15x15 -> 7x8, 17x17 ->
 * 9x8): plane_w is 18, so a row's two blocks of four read words 0-4 and 4-8 of each
 * plane row, one LDM of five words each. Block A walks plane rows 0, 1, 2 (filter rows 0-2),
 * block B back up from row 2 to 0 (filter rows 2-0; in row 2 it loads words 5-8 only, word 4
 * still in r5 from block A), the steps immediates (36 bytes a plane row): 115 instructions a row where dw_rows_s2_even's two blocks and row end took
 * 129. Registers: r0 plane, r1-r5 a plane row's words, r6 r7 W01 W12, r8-r11 the block's
 * accumulators (r8 the start value until its own first MAC), r12 the output, lr
 * e_count (its low byte the shift, the rows counted above bit 10); for the stores
 * r1-r4 multiplier, round_zp, output step, o_skip (the output pointer moves two steps
 * at a time, six in a row: dw_asm_prepare's o_skip for variant 15 counts two outputs
 * fewer than done = 8), r6 the value stored.
 * Frame: those four words, then the record's first seven (weights, start value) at 16,
 * `next` at 44. */
#define TH_DW_S2E_INIT(A, B, C, D)                                                           \
    "smlad r9, " B ", r6, r8\n\t"                                                            \
    "smlad r10, " C ", r6, r8\n\t"                                                           \
    "smlad r11, " D ", r6, r8\n\t"                                                           \
    "smlad r8, " A ", r6, r8\n\t"
#define TH_DW_S2E_ACC(A, B, C, D)                                                            \
    "smlad r8, " A ", r6, r8\n\t"                                                            \
    "smlad r9, " B ", r6, r9\n\t"                                                            \
    "smlad r10, " C ", r6, r10\n\t"                                                          \
    "smlad r11, " D ", r6, r11\n\t"
/* The third tap of each output: the next word's bottom half by W12's top. */
#define TH_DW_S2E_THIRD(B, C, D, E)                                                          \
    "smlabt r8, " B ", r7, r8\n\t"                                                           \
    "smlabt r9, " C ", r7, r9\n\t"                                                           \
    "smlabt r10, " D ", r7, r10\n\t"                                                         \
    "smlabt r11, " E ", r7, r11\n\t"
#define TH_DW_S2E_FIRST                                                                      \
    TH_DW_S2E_INIT("r1", "r2", "r3", "r4") TH_DW_S2E_THIRD("r2", "r3", "r4", "r5")
#define TH_DW_S2E_MORE                                                                       \
    TH_DW_S2E_ACC("r1", "r2", "r3", "r4") TH_DW_S2E_THIRD("r2", "r3", "r4", "r5")
/* Block B's first plane row: word 4 still in r5 from block A's last, words 5-8 in r1-r4. */
#define TH_DW_S2E_FIRST_B                                                                    \
    TH_DW_S2E_INIT("r5", "r1", "r2", "r3") TH_DW_S2E_THIRD("r1", "r2", "r3", "r4")
#define TH_DW_S2E_OUT(A, ADDR)                                                               \
    "smmlar r6, " A ", r1, r2\n\t"                                                           \
    "add r6, r6, " A ", asr #31\n\t"                                                         \
    "asr r6, r6, lr\n\t"                                                                     \
    "ssat r6, #8, r6\n\t"                                                                    \
    "strb r6, " ADDR "\n\t"
#define TH_DW_S2E_STORES                                                                     \
    "ldm sp, {r1-r4}\n\t"                                                                    \
    TH_DW_S2E_OUT("r8", "[r12]")                                                             \
    TH_DW_S2E_OUT("r9", "[r12, r3]")                                                         \
    "add r12, r12, r3, lsl #1\n\t"                                                           \
    TH_DW_S2E_OUT("r10", "[r12]")                                                            \
    TH_DW_S2E_OUT("r11", "[r12, r3]")
#if TH_NN_KEEP_DW3X3_GROUP4
#define TH_DW_S2E_NEXT_SAVE                                                                  \
    "ldr r1, [r0, #80]\n\t"                                                                  \
    "str r1, [sp, #44]\n\t"
#define TH_DW_S2E_NEXT_RUN                                                                   \
    "ldr r0, [sp, #44]\n\t"                                                                  \
    "cmp r0, #0\n\t"                                                                         \
    "bne 11b\n\t"
#else
#define TH_DW_S2E_NEXT_SAVE
#define TH_DW_S2E_NEXT_RUN
#endif
static void __attribute__((naked, noinline)) dw_rows_s2_eight(dw_row_args *k)
{
    __asm__ volatile("push {r4-r11, lr}\n\t"
                     "sub sp, sp, #48\n\t"
                     "11:\n\t"
                     TH_DW_S2E_NEXT_SAVE
                     "ldm r0, {r1-r7}\n\t"
                     "add r8, sp, #16\n\t"
                     "stm r8, {r1-r7}\n\t"
                     "ldrd r1, r2, [r0, #28]\n\t"
                     "ldrd r12, r3, [r0, #72]\n\t"
                     "ldr r4, [r0, #48]\n\t"
                     "stm sp, {r1-r4}\n\t"
                     "ldr lr, [r0, #40]\n\t"
                     "ldr r0, [r0, #60]\n\t"
                     "3:\n\t"
                     /* block A: outputs 0-3, plane rows 0-2 */
                     "ldm r0, {r1-r5}\n\t"
                     "ldrd r6, r7, [sp, #16]\n\t"
                     "ldr r8, [sp, #24]\n\t"
                     TH_DW_S2E_FIRST
                     "add r0, r0, #36\n\t"
                     "ldm r0, {r1-r5}\n\t"
                     "ldrd r6, r7, [sp, #28]\n\t"
                     TH_DW_S2E_MORE
                     "add r0, r0, #36\n\t"
                     "ldm r0!, {r1-r5}\n\t"
                     "ldrd r6, r7, [sp, #36]\n\t"
                     TH_DW_S2E_MORE
                     TH_DW_S2E_STORES
                     "add r12, r12, r3, lsl #1\n\t"
                     /* block B: outputs 4-7, plane rows 2-0 (words 4-8; r0 at row 2's word 5) */
                     "ldm r0, {r1-r4}\n\t"
                     "ldrd r6, r7, [sp, #36]\n\t"
                     "ldr r8, [sp, #24]\n\t"
                     TH_DW_S2E_FIRST_B
                     "sub r0, r0, #40\n\t"
                     "ldm r0, {r1-r5}\n\t"
                     "ldrd r6, r7, [sp, #28]\n\t"
                     TH_DW_S2E_MORE
                     "sub r0, r0, #36\n\t"
                     "ldm r0, {r1-r5}\n\t"
                     "ldrd r6, r7, [sp, #16]\n\t"
                     TH_DW_S2E_MORE
                     TH_DW_S2E_STORES
                     "add r12, r12, r4\n\t"
                     /* the next output row's windows: two plane rows down, words 0-4 */
                     "add r0, r0, #56\n\t"
                     "adds lr, lr, #1024\n\t"
                     "bcc 3b\n\t"
                     TH_DW_S2E_NEXT_RUN
                     "add sp, sp, #48\n\t"
                     "pop {r4-r11, pc}\n\t");
}
#undef TH_DW_S2E_INIT
#undef TH_DW_S2E_ACC
#undef TH_DW_S2E_THIRD
#undef TH_DW_S2E_FIRST
#undef TH_DW_S2E_MORE
#undef TH_DW_S2E_FIRST_B
#undef TH_DW_S2E_OUT
#undef TH_DW_S2E_STORES
#undef TH_DW_S2E_NEXT_SAVE
#undef TH_DW_S2E_NEXT_RUN
#endif

/* Rows of exactly three outputs (paths DW3X3_S{1,2}_THREE; the last planes of a MobileNet,
 * 6x6 -> 3x3 and 3x3 -> 3x3, ran the C loop at about 70 instructions an output): the
 * three-output block alone, the rows counted in lr as the rows of five alone
 * (dw_asm_prepare: done = 2, the pointers move as the block's). */
#define TH_DW_ROWS3_FN(NAME, THREE)                                                          \
    static void __attribute__((naked, noinline)) NAME(dw_row_args *k)                        \
    {                                                                                        \
        __asm__ volatile("push {r4-r11, lr}\n\t"                                             \
                         "sub sp, sp, " TH_DW_ASM_FRAME "\n\t"                               \
                         TH_DW_ASM_FRAME_ARGS                                                \
                         "ldr lr, [sp, #40]\n\t"                                             \
                         "3:\n\t" TH_DW_ASM_THREE_BLOCK(THREE)                               \
                         TH_DW_ASM_ROW_END_COUNTED);                                         \
    }

#if TH_NN_KEEP_DW3X3_S1_THREE
TH_DW_ROWS3_FN(dw_rows_s1_three, TH_DW_THREE_S1)
#endif
#if TH_NN_KEEP_DW3X3_S2_THREE
TH_DW_ROWS3_FN(dw_rows_s2_three, TH_DW_THREE_S2)
#endif
#undef TH_DW_ROWS3_FN

/* Rows of exactly six outputs (paths DW3X3_S{1,2}_SIX; a MobileNet's 6x6 planes), where a
 * block of four, a pair and their jumps took 105 instructions a row: one block of six,
 * 93. Accumulators r6 r7 r8 r12 r5 lr for outputs 0-5 (r5 the start value until row 0's
 * last use of it; output 5's first MAC comes before output 4's). Stride 1: 3 loads and 12
 * MAC a filter row (cols 0-7; the pointer moves six columns) ... */
#define TH_DW_SIX_S1(P, I0, I1, I2, I3, I4, I5)                                              \
    "ldrd r9, r10, [" P "], #8\n\t"                                                          \
    "smlad r6, r9, r3, " I0 "\n\t"                                                           \
    "smlatb r7, r9, r3, " I1 "\n\t"                                                          \
    "smlabt r6, r10, r4, r6\n\t"                                                             \
    "smlad r7, r10, r4, r7\n\t"                                                              \
    "smlad r8, r10, r3, " I2 "\n\t"                                                          \
    "smlatb r12, r10, r3, " I3 "\n\t"                                                        \
    "ldr r9, [" P "], #4\n\t"                                                                \
    "smlabt r8, r9, r4, r8\n\t"                                                              \
    "smlad r12, r9, r4, r12\n\t"                                                             \
    "smlatb lr, r9, r3, " I5 "\n\t"                                                          \
    "smlad r5, r9, r3, " I4 "\n\t"                                                           \
    "ldr r10, [" P "]\n\t"                                                                   \
    "smlabt r5, r10, r4, r5\n\t"                                                             \
    "smlad lr, r10, r4, lr\n\t"

/* ... stride 2: 4 loads and 12 MAC (words 0-6, cols 0-13). */
#define TH_DW_SIX_S2(P, I0, I1, I2, I3, I4, I5)                                              \
    TH_DW_S2_HEAD(P, I0, I1, I2, I3, "r12")                                                  \
    "ldrd r9, r10, [" P "], #8\n\t"                                                          \
    "smlabt r12, r9, r4, r12\n\t"                                                            \
    "smlad lr, r10, r3, " I5 "\n\t"                                                          \
    "smlad r5, r9, r3, " I4 "\n\t"                                                           \
    "smlabt r5, r10, r4, r5\n\t"                                                             \
    "ldr r9, [" P "]\n\t"                                                                    \
    "smlabt lr, r9, r4, lr\n\t"

/* TH_DW_ASM_OUT with the shift in r10 (lr holds output 5). */
#define TH_DW_ASM_OUT10(A, ADDR)                                                             \
    "smmlar r9, " A ", r3, r4\n\t"                                                           \
    "add r9, r9, " A ", asr #31\n\t"                                                         \
    "asr r9, r9, r10\n\t"                                                                    \
    "ssat r9, #8, r9\n\t"                                                                    \
    "strb r9, " ADDR "\n\t"

/* The row's six outputs: the shift from e_count's low byte to r10, the output step (frame
 * word 13, as the rows of five keep it) to r6 once output 0 is stored; r11 ends six outputs
 * on (dw_asm_prepare's done = 6 for one block and a pair). The rows are counted in frame
 * word 10 (lr is an accumulator): its low byte stays the shift. */
#define TH_DW_ROWS6_FN(NAME, SIX)                                                            \
    static void __attribute__((naked, noinline)) NAME(dw_row_args *k)                        \
    {                                                                                        \
        __asm__ volatile("push {r4-r11, lr}\n\t"                                             \
                         "sub sp, sp, " TH_DW_ASM_FRAME "\n\t"                               \
                         TH_DW_ASM_FRAME_ARGS                                                \
                         "str r12, [sp, #52]\n\t"                                            \
                         "3:\n\t"                                                            \
                         "ldm sp, {r3, r4, r5}\n\t"                                          \
                         SIX("r0", "r5", "r5", "r5", "r5", "r5", "r5")                       \
                         "ldrd r3, r4, [sp, #12]\n\t"                                        \
                         SIX("r1", "r6", "r7", "r8", "r12", "r5", "lr")                      \
                         "ldrd r3, r4, [sp, #20]\n\t"                                        \
                         SIX("r2", "r6", "r7", "r8", "r12", "r5", "lr")                      \
                         "ldrd r3, r4, [sp, #28]\n\t"                                        \
                         "ldr r10, [sp, #40]\n\t"                                            \
                         TH_DW_ASM_OUT10("r6", "[r11]")                                      \
                         "ldr r6, [sp, #52]\n\t"                                             \
                         TH_DW_ASM_OUT10("r7", "[r11, r6]")                                  \
                         "add r11, r11, r6, lsl #1\n\t"                                      \
                         TH_DW_ASM_OUT10("r8", "[r11]")                                      \
                         TH_DW_ASM_OUT10("r12", "[r11, r6]")                                 \
                         "add r11, r11, r6, lsl #1\n\t"                                      \
                         TH_DW_ASM_OUT10("r5", "[r11]")                                      \
                         TH_DW_ASM_OUT10("lr", "[r11, r6]")                                  \
                         "add r11, r11, r6, lsl #1\n\t"                                      \
                         TH_DW_ASM_ROW_END_WITH("ldr lr, [sp, #40]\n\t"                      \
                                                "adds lr, lr, #1024\n\t"                     \
                                                "str lr, [sp, #40]\n\t"                      \
                                                "bcc 3b\n\t"));                              \
    }

#if TH_NN_KEEP_DW3X3_S1_SIX
TH_DW_ROWS6_FN(dw_rows_s1_six, TH_DW_SIX_S1)
#endif
#if TH_NN_KEEP_DW3X3_S2_SIX
TH_DW_ROWS6_FN(dw_rows_s2_six, TH_DW_SIX_S2)
#endif
#undef TH_DW_ROWS6_FN
#undef TH_DW_ASM_OUT10
#undef TH_DW_SIX_S1
#undef TH_DW_SIX_S2
#undef TH_DW_ASM_BLOCKS
#undef TH_DW_ASM_FRAME_ARGS
#undef TH_DW_ASM_ROW_END
#undef TH_DW_ASM_ROW_END_WITH
#undef TH_DW_ASM_ROW_END_COUNTED
#undef TH_DW_ASM_FRAME
#undef TH_DW_ASM_NEXT_SAVE
#undef TH_DW_ASM_JOIN
#undef TH_DW_ASM_NEXT_RUN
#undef TH_DW_ASM_CHAIN
#undef TH_DW_FIVE_RESTORE
#undef TH_DW_FIVE_S1
#undef TH_DW_FIVE_S2
#pragma GCC diagnostic pop
#define TH_DW_ASM 1
#else
#define TH_DW_ASM 0
#endif

#if TH_DW_ASM || (defined(TH_NN_RECORD_PATHS) && TH_NN_RECORD_PATHS)
/* Rows of n = 4m + 1 outputs (m >= 1), the last five in one block: 5-7 (stride 1), 8-10
 * (stride 2) for m = 1, an even count of blocks before them, an odd one; 0 when the build
 * leaves that loop out (the rows then end in a single output). */
TH_INLINE int dw_asm_five(int32_t n, int32_t stride)
{
    const int32_t before = n / 4 - 1; /* blocks before the last five outputs */
    if (stride == 1) {
        return before == 0       ? (TH_NN_PATH(DW3X3_S1_FIVE) ? 5 : 0)
               : (before & 1) != 0 ? (TH_NN_PATH(DW3X3_S1_FIVE_ODD) ? 7 : 0)
                                   : (TH_NN_PATH(DW3X3_S1_FIVE_EVEN) ? 6 : 0);
    }
    return before == 0       ? (TH_NN_PATH(DW3X3_S2_FIVE) ? 8 : 0)
           : (before & 1) != 0 ? (TH_NN_PATH(DW3X3_S2_FIVE_ODD) ? 10 : 0)
                               : (TH_NN_PATH(DW3X3_S2_FIVE_EVEN) ? 9 : 0);
}

/* Which assembly loop a call takes: 0 none (the C loop: requantization other than the fast
 * one without clamp, rows of fewer than three outputs, or a loop the build leaves out), else
 * 11 + (stride 2) for rows of three, 13 + (stride 2) for rows of six, 15 for stride-2 rows
 * of eight, dw_asm_five's, or
 * 1 + 2 * (stride 2) + (odd count of 4-output blocks). Plain C, so that a
 * recording build on the host (th_nn_paths.h) sees the choice. */
static int dw_asm_variant(const dw_geometry *g, int32_t stride, const th_nn_out_stage *stage)
{
    if (!stage->fast || stage->clamp || g->out_cols < 3) {
        return 0;
    }
    if (g->out_cols == 3) { /* rows of three alone: 11 (stride 1), 12 */
        return stride == 1 ? (TH_NN_PATH(DW3X3_S1_THREE) ? 11 : 0)
                           : (TH_NN_PATH(DW3X3_S2_THREE) ? 12 : 0);
    }
    if (g->out_cols == 8 && stride == 2 && TH_NN_PATH(DW3X3_S2_EIGHT)) {
        return 15; /* rows of eight alone, stride 2 (else two blocks) */
    }
    if (g->out_cols == 6) { /* rows of six alone: 13, 14 (else a block and a pair) */
        const int six = stride == 1 ? (TH_NN_PATH(DW3X3_S1_SIX) ? 13 : 0)
                                    : (TH_NN_PATH(DW3X3_S2_SIX) ? 14 : 0);
        if (six != 0) {
            return six;
        }
    }
    const int five = (g->out_cols & 3) == 1 ? dw_asm_five(g->out_cols, stride) : 0;
    if (five != 0) {
        return five;
    }
    const int odd = (g->out_cols / 4) & 1;
    if (stride == 1) {
        return odd ? (TH_NN_PATH(DW3X3_S1_ODD) ? 2 : 0) : (TH_NN_PATH(DW3X3_S1_EVEN) ? 1 : 0);
    }
    return odd ? (TH_NN_PATH(DW3X3_S2_ODD) ? 4 : 0) : (TH_NN_PATH(DW3X3_S2_EVEN) ? 3 : 0);
}

/* dw_asm_variant, and path DW3X3_TAIL3 recorded where its rows end in three outputs (the
 * assembly takes that tail whenever the build keeps it: a pair and a single bit). */
static int dw_asm_loop(const dw_geometry *g, int32_t stride, const th_nn_out_stage *stage)
{
    const int variant = dw_asm_variant(g, stride, stage);
    if (variant != 0 && variant <= 4 && (g->out_cols & 3) == 3) {
        (void)TH_NN_PATH(DW3X3_TAIL3);
    }
    return variant;
}
#endif

#if TH_DW_ASM
/* Whether the build keeps any five-output loop (else dw_asm_prepare's code is main's). */
#define TH_DW_ANY_FIVE                                                                       \
    (TH_NN_KEEP_DW3X3_S1_FIVE || TH_NN_KEEP_DW3X3_S1_FIVE_EVEN ||                            \
     TH_NN_KEEP_DW3X3_S1_FIVE_ODD || TH_NN_KEEP_DW3X3_S2_FIVE ||                             \
     TH_NN_KEEP_DW3X3_S2_FIVE_EVEN || TH_NN_KEEP_DW3X3_S2_FIVE_ODD)

#define TH_DW_RECORDS (TH_NN_KEEP_DW3X3_GROUP4 ? 4 : 1)

/* Per call: the assembly's arguments but for each channel's own words, which loop, and
 * what every channel's words are made from (set once, so a channel's call passes only its
 * plane and index). */
typedef struct {
    /* One record per staged plane of a group (k[0] -> k[1] -> k[2] -> k[3]: a group's
     * channels run in one call); a channel staged alone takes the last (next NULL). A
     * build without groups of four: that one record. */
    dw_row_args k[TH_DW_RECORDS];
    void (*rows_fn)(dw_row_args *k);
    uint32_t count; /* the iteration count and tail bits of e_count */
    int32_t o_span; /* output bytes of all rows */
    int32_t pw; /* plane row length */
    int32_t tap_row_step, tap_col_step;
    int32_t offset; /* input_offset */
    int32_t zp; /* output_offset */
    const int8_t *filter;
    const int32_t *bias; /* or NULL */
    const th_per_channel_quant *quant;
    int8_t *out; /* the batch's output */
} dw_asm_call;

/* Prepares the assembly for the fast requantization without clamp and rows of at least
 * four outputs; 0 when that does not apply. */
static int dw_asm_prepare(dw_asm_call *call, const dw_geometry *g, int32_t stride,
                          const th_nn_out_stage *stage, const int8_t *filter,
                          const int32_t *bias, const th_per_channel_quant *quant,
                          int32_t offset, const int16_t *plane, int32_t slot, int groups)
{
    const int variant = dw_asm_loop(g, stride, stage);
    if (variant == 0) {
        return 0;
    }
    const int32_t out_w = g->out_cols;
    const int32_t blocks = out_w / 4;
    const int32_t pair = out_w - 4 * blocks >= 2;
    const int32_t done = 4 * blocks + 2 * pair; /* outputs of a row before a single one */
    /* Rows of five and of eight alone (variants 8 and 15) leave their output pointer two
     * outputs short of done (their last outputs are stored at offsets from it). */
    const int32_t o_done = done - ((variant == 8 || variant == 15) ? 2 : 0);
    /* Two blocks per iteration (an odd count enters at the second); the five-output loops
     * run one block fewer. */
    const int32_t looped = blocks - (TH_DW_ANY_FIVE && variant >= 5);
    /* Rows of five alone (variants 5 and 8) count their rows there instead. */
    const uint32_t iterations =
        (TH_NN_KEEP_DW3X3_S1_FIVE && variant == 5) ||
                (TH_NN_KEEP_DW3X3_S2_FIVE && variant == 8) ||
                (TH_NN_KEEP_DW3X3_S1_THREE && variant == 11) ||
                (TH_NN_KEEP_DW3X3_S2_THREE && variant == 12) ||
                (TH_NN_KEEP_DW3X3_S1_SIX && variant == 13) ||
                (TH_NN_KEEP_DW3X3_S2_SIX && variant == 14) ||
                (TH_NN_KEEP_DW3X3_S2_EIGHT && variant == 15)
            ? (uint32_t)g->out_rows
            : (uint32_t)(looped + 1) / 2;
    call->count = ((0u - iterations) << 10) | ((uint32_t)(pair | ((out_w & 1) << 1)) << 8);
#if TH_NN_KEEP_DW3X3_GROUP4
    /* What every channel's record shares; a group's record j always reads plane j (the
     * channel staged alone, record 3, sets its own: it comes after the groups). Without
     * groups of four in this call, only record 3. */
    call->o_span = g->out_rows * g->out_row_step;
    for (int32_t j = groups ? 0 : 3; j < 4; j++) {
        dw_row_args *const r = &call->k[j];
        r->p_skip = (int32_t)sizeof(int16_t) * (g->pw - done) * stride;
        r->o_skip = g->out_row_step - o_done * g->out_col_step;
        r->cs = g->out_col_step;
        r->tail[0] = 0; /* each record's first channel works the tail jumps out */
        r->p0 = plane + j * slot;
        r->p1 = r->p0 + g->pw;
        r->p2 = r->p1 + g->pw;
        r->next = j < 3 ? &call->k[j + 1] : NULL;
    }
#else /* main's one record (the build's calls all run one channel at a time) */
    (void)plane;
    (void)slot;
    (void)groups;
    call->k[0].p_skip = (int32_t)sizeof(int16_t) * (g->pw - done) * stride;
    call->k[0].o_skip = g->out_row_step - o_done * g->out_col_step;
    call->o_span = g->out_rows * g->out_row_step;
    call->k[0].cs = g->out_col_step;
    call->k[0].tail[0] = 0; /* the first channel's call works the tail jumps out */
#endif
    call->pw = g->pw;
    call->tap_row_step = g->tap_row_step;
    call->tap_col_step = g->tap_col_step;
    call->offset = offset;
    call->zp = stage->output_offset;
    call->filter = filter;
    call->bias = bias;
    call->quant = quant;
    /* (Loops the build leaves out are never named, so the linker drops them.) */
    call->rows_fn = variant == 1 && TH_NN_KEEP_DW3X3_S1_EVEN   ? dw_rows_s1_even
#if TH_NN_KEEP_DW3X3_S1_THREE
                    : variant == 11 ? dw_rows_s1_three
#endif
#if TH_NN_KEEP_DW3X3_S2_THREE
                    : variant == 12 ? dw_rows_s2_three
#endif
#if TH_NN_KEEP_DW3X3_S1_SIX
                    : variant == 13 ? dw_rows_s1_six
#endif
#if TH_NN_KEEP_DW3X3_S2_SIX
                    : variant == 14 ? dw_rows_s2_six
#endif
#if TH_NN_KEEP_DW3X3_S2_EIGHT
                    : variant == 15 ? dw_rows_s2_eight
#endif
                    : variant == 2 && TH_NN_KEEP_DW3X3_S1_ODD  ? dw_rows_s1_odd
                    : variant == 3 && TH_NN_KEEP_DW3X3_S2_EVEN ? dw_rows_s2_even
                    : variant == 5 && TH_NN_KEEP_DW3X3_S1_FIVE ? dw_rows_s1_five
                    : variant == 6 && TH_NN_KEEP_DW3X3_S1_FIVE_EVEN ? dw_rows_s1_five_even
                    : variant == 7 && TH_NN_KEEP_DW3X3_S1_FIVE_ODD  ? dw_rows_s1_five_odd
                    : variant == 8 && TH_NN_KEEP_DW3X3_S2_FIVE      ? dw_rows_s2_five
                    : variant == 9 && TH_NN_KEEP_DW3X3_S2_FIVE_EVEN ? dw_rows_s2_five_even
                    : variant == 10 && TH_NN_KEEP_DW3X3_S2_FIVE_ODD ? dw_rows_s2_five_odd
                    : TH_NN_KEEP_DW3X3_S2_ODD                  ? dw_rows_s2_odd
                                                               : NULL;
    return call->rows_fn != NULL;
}

/* Weight words of filter row f (taps tc apart), doubled: (w0, w1) to *w01, (w1, w2) to
 * *w12 (|2w| <= 256 fits a halfword, so SADD16 doubles both halves); returns w0 + w1 + w2. */
TH_INLINE int32_t dw_row_words(const int8_t *f, int32_t tc, int32_t *w01, int32_t *w12)
{
    const int32_t a = f[0];
    const int32_t b = f[tc];
    const int32_t d = f[2 * tc];
    const int32_t ab = th_pkhbt(a, b);
    const int32_t bd = th_pkhbt(b, d);
    *w01 = th_sadd16(ab, ab);
    *w12 = th_sadd16(bd, bd);
    return a + b + d;
}

/* A channel's record k for the assembly, its weight words and start value already there:
 * the requantization and the pointers (the rest of what dw3x3_channel_impl computes with
 * fast_only). */
TH_INLINE void dw3x3_channel_set(dw_asm_call *call, dw_row_args *k, const int16_t *plane,
                                 int32_t c)
{
    const th_fast_rq rq =
        th_fast_rq_make(call->quant->multiplier[c], call->quant->shift[c], call->zp);
    k->multiplier = rq.multiplier;
    k->round_zp = rq.round_zp;
    k->e_count = (int32_t)(call->count | ((uint32_t)rq.e & 0xFFu));
    k->p0 = plane;
    k->p1 = plane + call->pw;
    k->p2 = plane + 2 * call->pw;
    k->o = call->out + c;
    k->o_end = k->o + call->o_span;
}

/* One channel in assembly: the same words dw3x3_channel_impl computes with fast_only. */
TH_INLINE void dw3x3_channel_asm(dw_asm_call *call, const int16_t *plane, int32_t c)
{
    dw_row_args *k = &call->k[TH_DW_RECORDS - 1];
    const int8_t *f = call->filter + c;
    const int32_t tr = call->tap_row_step;
    const int32_t tc = call->tap_col_step;
    int32_t wsum = dw_row_words(f, tc, &k->w0[0], &k->w0[1]);
    wsum += dw_row_words(f + tr, tc, &k->w12[0], &k->w12[1]);
    wsum += dw_row_words(f + 2 * tr, tc, &k->w12[2], &k->w12[3]);
    const int32_t bias = call->bias != NULL ? call->bias[c] : 0;
    /* Doubled: 2 * (bias + offset * sum(w)), see dw3x3_channel_impl. */
    k->acc0 = (int32_t)(2u * ((uint32_t)bias + (uint32_t)call->offset * (uint32_t)wsum));
    dw3x3_channel_set(call, k, plane, c);
    call->rows_fn(k);
}

/* The staged channels c .. c + group - 1 (planes `slot` values apart) in assembly. A
 * function of its own: its few live values stay in registers, which the kernel's loop,
 * sharing a frame with the C paths, would keep on the stack. */
static void __attribute__((noinline))
dw3x3_group_asm(dw_asm_call *call, const int16_t *plane, int32_t slot, int32_t c,
                int32_t group)
{
    for (const int32_t end = c + group; c < end; c++, plane += slot) {
        dw3x3_channel_asm(call, plane, c);
    }
}

#if TH_NN_KEEP_DW3X3_GROUP4
/* One filter row's words of four channels (dw_words4_asm): the taps' words (a pixel's four
 * channels' bytes each: r4 r6 r8) split by SXTB16 into channels (0, 2), by SXTB16 ROR 8 into
 * (1, 3) (r5 r7 r9), doubled by SADD16 (|2w| <= 256 fits a halfword), summed per channel
 * into r10 (0, 2) and r11 (1, 3) (SUMS: TH_DW_WORDS4_SUM0 starts them, TH_DW_WORDS4_SUM
 * adds to them; r12 and lr hold a + b), then
 * paired per channel (PKHBT the bottom halves, PKHTB the top ones) into (w0, w1), (w1, w2)
 * at byte I of each channel's words. 34 instructions for the 24 words. */
#define TH_DW_WORDS4_ROW(I, SUMS)                                                            \
    "ldr r4, [r1]\n\t"                                                                       \
    "ldr r6, [r1, r2]\n\t"                                                                   \
    "ldr r8, [r1, r2, lsl #1]\n\t"                                                           \
    "add r1, r1, r3\n\t"                                                                     \
    "sxtb16 r5, r4, ror #8\n\t"                                                              \
    "sxtb16 r4, r4\n\t"                                                                      \
    "sxtb16 r7, r6, ror #8\n\t"                                                              \
    "sxtb16 r6, r6\n\t"                                                                      \
    "sxtb16 r9, r8, ror #8\n\t"                                                              \
    "sxtb16 r8, r8\n\t"                                                                      \
    "sadd16 r4, r4, r4\n\t"                                                                  \
    "sadd16 r5, r5, r5\n\t"                                                                  \
    "sadd16 r6, r6, r6\n\t"                                                                  \
    "sadd16 r7, r7, r7\n\t"                                                                  \
    "sadd16 r8, r8, r8\n\t"                                                                  \
    "sadd16 r9, r9, r9\n\t"                                                                  \
    "sadd16 r12, r4, r6\n\t"                                                                 \
    "sadd16 lr, r5, r7\n\t"                                                                  \
    SUMS                                                                                     \
    "pkhbt r12, r4, r6, lsl #16\n\t"                                                         \
    "pkhbt lr, r6, r8, lsl #16\n\t"                                                          \
    "strd r12, lr, [r0, #" I "]\n\t"                                                         \
    "pkhbt r12, r5, r7, lsl #16\n\t"                                                         \
    "pkhbt lr, r7, r9, lsl #16\n\t"                                                          \
    "strd r12, lr, [r0, #84 + " I "]\n\t"                                                    \
    "pkhtb r12, r6, r4, asr #16\n\t"                                                         \
    "pkhtb lr, r8, r6, asr #16\n\t"                                                          \
    "strd r12, lr, [r0, #168 + " I "]\n\t"                                                   \
    "pkhtb r12, r7, r5, asr #16\n\t"                                                         \
    "pkhtb lr, r9, r7, asr #16\n\t"                                                          \
    "strd r12, lr, [r0, #252 + " I "]\n\t"

#define TH_DW_WORDS4_SUM0                                                                    \
    "sadd16 r10, r12, r8\n\t"                                                                \
    "sadd16 r11, lr, r9\n\t"
#define TH_DW_WORDS4_SUM                                                                     \
    "sadd16 r12, r12, r8\n\t"                                                                \
    "sadd16 lr, lr, r9\n\t"                                                                  \
    "sadd16 r10, r10, r12\n\t"                                                               \
    "sadd16 r11, r11, lr\n\t"

/* The weight words of four channels (records q[0..3], channels f[0] .. f[3] of each tap;
 * taps tc apart along a filter row, rows tr apart) from word loads: 9 loads for the 36
 * taps where dw_row_words takes a byte load per tap; in place of the start value, each
 * channel's doubled sum of taps (|sum| <= 9 x 256: SADD16 halves do not overflow). In
 * assembly: gcc's version kept the words' inputs on the stack (a 204-byte frame). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline))
dw_words4_asm(dw_row_args *q, const int8_t *f, int32_t tc, int32_t tr)
{
    __asm__ volatile("push {r4-r11, lr}\n\t"
                     TH_DW_WORDS4_ROW("0", TH_DW_WORDS4_SUM0)
                     TH_DW_WORDS4_ROW("12", TH_DW_WORDS4_SUM)
                     TH_DW_WORDS4_ROW("20", TH_DW_WORDS4_SUM)
                     "sxth r12, r10\n\t"
                     "asr r10, r10, #16\n\t"
                     "sxth lr, r11\n\t"
                     "asr r11, r11, #16\n\t"
                     "str r12, [r0, #8]\n\t"
                     "str lr, [r0, #92]\n\t"
                     "str r10, [r0, #176]\n\t"
                     "str r11, [r0, #260]\n\t"
                     "pop {r4-r11, pc}\n\t");
}
#pragma GCC diagnostic pop
#undef TH_DW_WORDS4_ROW
#undef TH_DW_WORDS4_SUM0
#undef TH_DW_WORDS4_SUM

/* The offsets of dw_asm_call that dw_group4_set_asm reads. */
typedef char dw_asm_call_offsets_check
    [offsetof(dw_asm_call, count) == 340 && offsetof(dw_asm_call, o_span) == 344 &&
             offsetof(dw_asm_call, offset) == 360 && offsetof(dw_asm_call, zp) == 364 &&
             offsetof(dw_asm_call, bias) == 372 && offsetof(dw_asm_call, quant) == 376 &&
             offsetof(dw_asm_call, out) == 380 && sizeof(dw_row_args) == 84
         ? 1
         : -1];

/* Records r .. k[3] of channels c .. (their weight words and doubled tap sums there, from
 * dw_words4_asm): what dw3x3_channel_set and dw3x3_channel_asm's start value compute, 19
 * instructions a channel where gcc's loop took 28 (it kept values on the stack). acc0 =
 * 2 bias + offset x 2 sum(w); th_fast_rq_make's round_zp, (1 << (e - 1)) + (zp << e), as
 * (2 zp + 1) << (e - 1) (mod 2^32, e = -shift >= 1 on the fast path: one shift); e_count =
 * count + (e & 0xFF) (count's low byte is 0: one UXTAB). Without a bias, r6 reads four
 * zero words on the stack. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline))
dw_group4_set_asm(dw_asm_call *call, int32_t c, dw_row_args *r)
{
    __asm__ volatile("push {r4-r11, lr}\n\t"
                     "sub sp, sp, #16\n\t"
                     "ldr r3, [r0, #376]\n\t"
                     "ldrd r4, r5, [r3]\n\t"
                     "add r4, r4, r1, lsl #2\n\t"
                     "add r5, r5, r1, lsl #2\n\t"
                     "ldr r6, [r0, #372]\n\t"
                     "cbz r6, 1f\n\t"
                     "add r6, r6, r1, lsl #2\n\t"
                     "b 2f\n\t"
                     "1:\n\t"
                     "strd r6, r6, [sp]\n\t"
                     "strd r6, r6, [sp, #8]\n\t"
                     "mov r6, sp\n\t"
                     "2:\n\t"
                     "ldrd r7, r8, [r0, #360]\n\t"
                     "mov r3, #1\n\t"
                     "add r8, r3, r8, lsl #1\n\t"
                     "ldrd r9, r10, [r0, #340]\n\t"
                     "ldr r11, [r0, #380]\n\t"
                     "add r11, r11, r1\n\t"
                     "add r12, r0, #336\n\t"
                     "3:\n\t"
                     "ldr r3, [r6], #4\n\t"
                     "ldr r1, [r2, #8]\n\t"
                     "lsl r3, r3, #1\n\t"
                     "mla r1, r1, r7, r3\n\t"
                     "str r1, [r2, #8]\n\t"
                     "ldr r3, [r5], #4\n\t"
                     "ldr r1, [r4], #4\n\t"
                     "mvn lr, r3\n\t"
                     "lsl lr, r8, lr\n\t"
                     "strd r1, lr, [r2, #28]\n\t"
                     "rsb r3, r3, #0\n\t"
                     "uxtab r3, r9, r3\n\t"
                     "add r1, r11, r10\n\t"
                     "strd r1, r3, [r2, #36]\n\t"
                     "str r11, [r2, #72]\n\t"
                     "add r11, r11, #1\n\t"
                     "add r2, r2, #84\n\t"
                     "cmp r2, r12\n\t"
                     "bne 3b\n\t"
                     "add sp, sp, #16\n\t"
                     "pop {r4-r11, pc}\n\t");
}
#pragma GCC diagnostic pop

/* Channels c0 + back .. c0 + 3 of a group of four staged planes (back 0, or 1 for the last
 * three of C % 4 == 3: c0 is then the channel before them, whose plane goes unused) in
 * assembly. The four channels' weight words come from word loads (dw_words4_asm: 9 loads
 * for the 36 taps where dw_row_words takes one byte load a tap), the start values from
 * their sums, the rest per channel (dw_group4_set_asm); then one call of the rows for all
 * of them (the records' `next`: one entry and frame). */
static void __attribute__((noinline))
dw3x3_group4_asm(dw_asm_call *call, int32_t c0, int32_t back)
{
    dw_words4_asm(call->k, call->filter + c0, call->tap_col_step, call->tap_row_step);
    dw_group4_set_asm(call, c0 + back, &call->k[back]);
    call->rows_fn(&call->k[back]); /* the channels after it: `next` */
}
#endif
#endif

TH_INLINE void dw3x3_channel_impl(const int16_t *plane, const dw_geometry *g, int32_t stride,
                                  const int8_t *filter, int32_t c, int32_t bias,
                                  int32_t offset, const th_per_channel_quant *quant,
                                  const th_nn_out_stage *stage, int8_t *out,
                                  const int fast_only, const int compact)
{
    const int32_t pw = g->pw;
    const int32_t cs = g->out_col_step;
    /* Doubled weights (fast_only): |w| <= 128, so 2w fits a halfword. */
    const int32_t scale = fast_only ? 2 : 1;
    int32_t w01[3];
    int32_t w12[3];
    int32_t wsum = 0;
    for (int32_t r = 0; r < 3; r++) {
        const int8_t *f = filter + r * g->tap_row_step + c;
        const int32_t a = scale * f[0];
        const int32_t b = scale * f[g->tap_col_step];
        const int32_t d = scale * f[2 * g->tap_col_step];
        w01[r] = (int32_t)(((uint32_t)b << 16) | ((uint32_t)a & 0xFFFFu));
        w12[r] = (int32_t)(((uint32_t)d << 16) | ((uint32_t)b & 0xFFFFu));
        wsum += a + b + d;
    }
    /* sum((x + offset) * w) = sum(x * w) + offset * sum(w); padding holds -offset. */
    const int32_t acc0 = th_add_wrap((int32_t)((uint32_t)bias * (uint32_t)scale),
                                     (int32_t)((uint32_t)offset * (uint32_t)wsum));
    const int32_t w01_0 = w01[0], w01_1 = w01[1], w01_2 = w01[2];
    const int32_t w12_0 = w12[0], w12_1 = w12[1], w12_2 = w12[2];
    th_fast_rq rq = {0, 0, 0};
    if (fast_only || stage->fast) {
        rq = th_fast_rq_make(quant->multiplier[c], quant->shift[c], stage->output_offset);
    }
    const int32_t out_w = g->out_cols;
    const int32_t step = 4 * stride; /* plane columns per four outputs */
    for (int32_t oy = 0; oy < g->out_rows; oy++) {
        int32_t ox = 0;
        const int16_t *r0 = plane + oy * stride * pw;
        const int16_t *r1 = r0 + pw;
        const int16_t *r2 = r1 + pw;
        int8_t *o = out + (int64_t)oy * g->out_row_step + c;
        for (; !compact && ox + 3 < out_w; ox += 4, r0 += step, r1 += step, r2 += step) {
            int32_t a0 = acc0;
            int32_t a1 = acc0;
            int32_t a2 = acc0;
            int32_t a3 = acc0;
            if (stride == 1) {
                TH_DW_ROW_S1(r0, w01_0, w12_0);
                TH_DW_ROW_S1(r1, w01_1, w12_1);
                TH_DW_ROW_S1(r2, w01_2, w12_2);
            } else {
                TH_DW_ROW_S2(r0, w01_0, w12_0);
                TH_DW_ROW_S2(r1, w01_1, w12_1);
                TH_DW_ROW_S2(r2, w01_2, w12_2);
            }
            o[0] = dw_out(a0, &rq, c, quant, stage, fast_only);
            o += cs;
            o[0] = dw_out(a1, &rq, c, quant, stage, fast_only);
            o += cs;
            o[0] = dw_out(a2, &rq, c, quant, stage, fast_only);
            o += cs;
            o[0] = dw_out(a3, &rq, c, quant, stage, fast_only);
            o += cs;
        }
        for (; ox < out_w; ox++, r0 += stride, r1 += stride, r2 += stride) {
            int32_t a = acc0;
            a = th_smlabt(th_read_s32(r0 + 2), w12_0, th_smlad(th_read_s32(r0), w01_0, a));
            a = th_smlabt(th_read_s32(r1 + 2), w12_1, th_smlad(th_read_s32(r1), w01_1, a));
            a = th_smlabt(th_read_s32(r2 + 2), w12_2, th_smlad(th_read_s32(r2), w01_2, a));
            o[0] = dw_out(a, &rq, c, quant, stage, fast_only);
            o += cs;
        }
    }
}

static void dw3x3_channel(const int16_t *plane, const dw_geometry *g, int32_t stride,
                          const int8_t *filter, int32_t c, int32_t bias, int32_t offset,
                          const th_per_channel_quant *quant, const th_nn_out_stage *stage,
                          int8_t *out)
{
    if (stage->fast && !stage->clamp && TH_NN_PATH(DW3X3_C_FAST)) {
        dw3x3_channel_impl(plane, g, stride, filter, c, bias, offset, quant, stage, out, 1, 0);
    } else if (TH_NN_PATH(DW3X3_C_EXACT)) {
        dw3x3_channel_impl(plane, g, stride, filter, c, bias, offset, quant, stage, out, 0, 0);
    } else { /* the general loop every build keeps: one output at a time */
        dw3x3_channel_impl(plane, g, stride, filter, c, bias, offset, quant, stage, out, 0, 1);
    }
}

/* Whether a plane's interior rows hold 1-4 word-aligned pixel quads (copy4_rows_asm then
 * runs them straight-line: path DW3X3_COPY_SHORT). */
static int copy_short_rows(const dw_geometry *g)
{
    const dw_interior box = interior_of(g);
    const int32_t quads = (box.x_end - box.x_begin - (box.x_begin & 1)) / 4;
    return quads >= 1 && quads <= 4 && box.r_end > box.r_begin;
}

/* Plain orientation, or transposed when the output is taller than wide and the transposed
 * plane fits the scratch (sized for the plain one). */
static void make_geometry(dw_geometry *g, const th_dw_conv_params *params,
                          const th_dims *input_dims, const th_dims *output_dims)
{
    const int32_t s = params->stride.h;
    const int32_t ch = output_dims->c;
    const int32_t oh = output_dims->h;
    const int32_t ow = output_dims->w;
    if (!is_transposed(s, oh, ow, ch)) {
        g->ph = plane_h(s, oh);
        g->pw = plane_w(s, ow);
        g->outer = input_dims->h;
        g->inner = input_dims->w;
        g->pad_outer = params->padding.h;
        g->pad_inner = params->padding.w;
        g->src_outer = input_dims->w * input_dims->c;
        g->src_inner = input_dims->c;
        g->out_rows = oh;
        g->out_cols = ow;
        g->out_row_step = ow * ch;
        g->out_col_step = ch;
        g->tap_row_step = 3 * ch;
        g->tap_col_step = ch;
    } else {
        g->ph = plane_h(s, ow);
        g->pw = plane_w(s, oh);
        g->outer = input_dims->w;
        g->inner = input_dims->h;
        g->pad_outer = params->padding.w;
        g->pad_inner = params->padding.h;
        g->src_outer = input_dims->c;
        g->src_inner = input_dims->w * input_dims->c;
        g->out_rows = ow;
        g->out_cols = oh;
        g->out_row_step = ch;
        g->out_col_step = ow * ch;
        g->tap_row_step = ch;
        g->tap_col_step = 3 * ch;
    }
}

#endif /* TH_NN_HAS_DSP */

/* th_nn_quant_ok and th_nn_out_stage_init(..., th_acc_bound(9, 128, bias, C)) from one
 * pass over the channels: three scans took about 27 instructions a channel, this one 9
 * (a small plane's call is mostly per-channel work). It ORs what it reads, each value
 * then at most the OR: the multipliers (bit 31: one is negative), -1 - shift (the fast
 * requantization's e - 1, in [0, TH_FAST_MAX_E) when the OR is) and |bias| - (bias < 0)
 * (the bound holds when the OR is below it). Where an OR says no, the exact scans decide
 * (th_nn_quant_ok, th_nn_out_stage_init). Returns th_nn_quant_ok. */
#if TH_NN_HAS_DSP && !TH_NN_MVE
static int __attribute__((noinline))
dw_scan_channels(th_nn_out_stage *stage, const th_dw_conv_params *params,
                 const th_per_channel_quant *quant, const int32_t *bias, int32_t channels)
{
    const int32_t *const mult = quant->multiplier;
    const int32_t *const shift = quant->shift;
    /* th_acc_bound's taps part; a bias of magnitude below 2^29 minus it keeps |acc| < 2^29 */
    const int64_t taps_bound = (int64_t)9 * 256 * 128;
    uint32_t m_or = 0;
    uint32_t e_or = 0;
    uint32_t b_or = 0;
    if (bias != NULL) {
        for (int32_t c = 0; c < channels; c++) {
            m_or |= (uint32_t)mult[c];
            e_or |= ~(uint32_t)shift[c];
            b_or |= (uint32_t)(bias[c] ^ (bias[c] >> 31));
        }
    } else {
        for (int32_t c = 0; c < channels; c++) {
            m_or |= (uint32_t)mult[c];
            e_or |= ~(uint32_t)shift[c];
        }
    }
    const int fast = (m_or >> 31) == 0 && e_or < (uint32_t)TH_FAST_MAX_E &&
                     (int64_t)b_or + 1 + taps_bound < (INT64_C(1) << 29);
    if (!fast) { /* the exact scans */
        if (!th_nn_quant_ok(quant, channels)) {
            return 0;
        }
        th_nn_out_stage_init(stage, quant, channels, params->output_offset,
                             &params->activation, th_acc_bound(9, 128, bias, channels));
        return 1;
    }
    /* Every channel passed: the fields, and fast (TH_NN_HAS_DSP) with no channel to scan. */
    th_nn_out_stage_init(stage, quant, 0, params->output_offset, &params->activation, 0);
    return 1;
}
#endif

th_status th_dw_conv_3x3_s8(const th_context *ctx, const th_dw_conv_params *params,
                            const th_per_channel_quant *quant, const th_dims *input_dims,
                            const int8_t *input, const th_dims *filter_dims,
                            const int8_t *filter, const int32_t *bias,
                            const th_dims *output_dims, int8_t *output)
{
#if TH_NN_HAS_DSP && !TH_NN_MVE
    /* The dims here, the per-channel quantization below in one pass with the output
     * stage's (dw_scan_channels). */
    th_status status = th_nn_check_dw_dims(params, quant, input_dims, input, filter_dims,
                                           filter, output_dims, output);
    if (status != TH_OK) {
        return status;
    }
    th_nn_out_stage stage;
    if (!dw_scan_channels(&stage, params, quant, bias, output_dims->c)) {
        return TH_ERR_ARG;
    }
#else /* no output stage to fill (Helium's kernel, the reference) */
    th_status status = th_nn_check_dw(params, quant, input_dims, input, filter_dims, filter,
                                      output_dims, output);
    if (status != TH_OK) {
        return status;
    }
#endif
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
#if TH_NN_MVE
    th_nn_mve_dw_conv_s8(ctx, params, quant, input_dims, input, filter_dims, filter, bias,
                         output_dims, output);
#elif TH_NN_HAS_DSP
    const int32_t channels = output_dims->c;
    const int32_t stride = params->stride.h;
    dw_geometry geo;
    make_geometry(&geo, params, input_dims, output_dims);
    int16_t *plane = (int16_t *)ctx->buf;
    /* Four channels per pass (or all of 2 or 3) when the caller's scratch holds their
     * planes (the planner gives it where the arena has room to spare), else one. */
    const int32_t group_bytes = group_planes_bytes(params, output_dims);
    int32_t planes =
        group_bytes > 0 && ctx->size >= group_bytes ? group_planes(params, output_dims) : 1;
    if (planes == 4 && !TH_NN_PATH(DW3X3_GROUP4)) {
        planes = 1; /* the four-plane copy left out (a model whose arena gives no room) */
    }
    /* Plane k at plane + k * slot (the plain plane's size; a transposed one fits in it). */
    const int32_t slot = plane_h(stride, output_dims->h) * plane_w(stride, output_dims->w);
    if (TH_NN_KEEP_DW3X3_GROUP4 && planes == 4) {
        fill_padding4(plane, &geo, params->input_offset, slot);
    } else {
        for (int32_t k = 0; k < planes; k++) {
            fill_padding(plane + k * slot, &geo, params->input_offset);
        }
    }
    /* Four planes' rows of 1-4 pixel quads: copied straight-line (copy4_rows_asm's path
     * DW3X3_COPY_SHORT; chosen here so that a recording build sees it). */
    const int copy_short = TH_NN_KEEP_DW3X3_GROUP4 && planes == 4 && copy_short_rows(&geo) &&
                           TH_NN_PATH(DW3X3_COPY_SHORT);
    (void)copy_short;
    /* All 2 or 3 channels in one pass (planes), else 1 (one at a time, or fours). */
    const int32_t whole = planes > 1 && planes < 4 && TH_NN_PATH(DW3X3_SMALL_GROUP) ? planes : 1;
#if TH_DW_COPY_ASM
    /* Four planes: the copy's arguments once for all groups (the C copy, fill_group4,
     * works them out per group). */
    dw_copy4_args copy4;
    const int32_t copy4_off = TH_NN_KEEP_DW3X3_GROUP4 && planes == 4
                                  ? copy4_prepare(&copy4, &geo, plane, slot, copy_short)
                                  : -1;
#endif
    /* The last three of C % 4 == 3 channels: three planes stored, not four (copy4_last3_asm;
     * the C copy, fill_group4, stages four). */
    const int group3 = planes == 4 && channels % 4 == 3 && TH_NN_PATH(DW3X3_GROUP3);
    /* A last one or two channels (C % 4 == 1, 2): one plane's rows with the four-plane
     * copy's jumps (copy4_lone_asm; without it, or in C, fill_interior). */
    const int lone = TH_NN_KEEP_DW3X3_GROUP4 && planes == 4 &&
                     (channels % 4 == 1 || channels % 4 == 2) && TH_NN_PATH(DW3X3_LONE);
#if TH_DW_COPY_ASM
    /* The last channels' copy arguments: copy4_last3_asm's or copy4_lone_asm's (never both:
     * C % 4 says which), each with its own jumps (jumps[0] still 0: copy4_prepare). */
    dw_copy4_args copy_last;
    if (group3 || lone) {
        copy_last = copy4;
    }
#else
    (void)group3;
    (void)lone;
#endif
#if TH_DW_ASM
    dw_asm_call call;
    const int use_asm =
        dw_asm_prepare(&call, &geo, stride, &stage, filter, bias, quant, params->input_offset,
                       plane, slot, TH_NN_KEEP_DW3X3_GROUP4 && planes == 4);
#elif defined(TH_NN_RECORD_PATHS) && TH_NN_RECORD_PATHS
    const int use_asm = dw_asm_loop(&geo, stride, &stage) != 0; /* as on a Cortex-M */
#endif
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b =
            input + (int64_t)b * input_dims->h * input_dims->w * input_dims->c;
        int8_t *out_b = output + (int64_t)b * output_dims->h * output_dims->w * channels;
#if TH_DW_ASM
        call.out = out_b;
#endif
        int32_t c = 0;
#if TH_DW_COPY_ASM && TH_DW_ASM && TH_NN_KEEP_DW3X3_GROUP4
        if (planes == 4 && use_asm && copy4_off >= 0) {
            /* The groups of four as the loop below runs them (copy4_rows_asm, then
             * dw3x3_group4_asm), without its choices per group; it takes the rest. */
            for (; c + 4 <= channels; c += 4) {
                copy4_rows_asm(&copy4, in_b + copy4_off + c);
                dw3x3_group4_asm(&call, c, 0);
            }
        }
#endif
        while (c < channels) {
            /* Every staged channel is copied before any of its outputs is written. The last
             * three of C >= 4 channels are staged as the last four (one word load per pixel
             * beats three one-plane copies); the first of those is done (skip: its plane
             * goes unused, its input may already hold its outputs when in place). */
            int32_t group = whole;
            int32_t back = 0; /* staged channels before c */
            if (planes == 4 && c + 4 <= channels) {
                group = 4;
            } else if (planes == 4 && c + 3 == channels) {
                group = 3;
                back = 1;
            }
            /* Channel c's plane. One channel left after the groups of four (C % 4 == 1, 2)
             * is staged in plane 3: the assembly runs it with record 3, whose plane
             * pointers then stay plane 3's for the next batch's groups. */
            int16_t *const first =
                plane + (TH_NN_KEEP_DW3X3_GROUP4 && planes == 4 && group == 1 ? 3 : back) * slot;
            if (group == 1) { /* one channel: inline (per channel) */
#if TH_DW_COPY_ASM && TH_NN_KEEP_DW3X3_LONE /* (else main's code, as gcc lays it out) */
                if (lone && copy4_off >= 0) {
                    copy4_lone_asm(&copy_last, in_b + copy4_off + c);
                } else {
                    fill_interior(first, &geo, in_b, c);
                }
#else
                fill_interior(first, &geo, in_b, c);
#endif
#if TH_DW_COPY_ASM
            } else if (TH_NN_KEEP_DW3X3_GROUP4 && planes == 4) { /* else never named */
                if (copy4_off >= 0 && TH_NN_KEEP_DW3X3_GROUP3 && group3 && group == 3) {
                    copy4_last3_asm(&copy_last, in_b + copy4_off + (c - back));
                } else if (copy4_off >= 0) {
                    copy4_rows_asm(&copy4, in_b + copy4_off + (c - back));
                }
#endif
            } else {
                fill_group(plane, slot, &geo, in_b, c - back, group + back);
            }
            for (int32_t k = 0; k < group; k++) {
#if TH_DW_ASM
                if (use_asm) {
#if TH_NN_KEEP_DW3X3_GROUP4
                    if (group + back == 4) { /* four staged planes (else never named) */
                        dw3x3_group4_asm(&call, c - back, back);
                        break;
                    }
#endif
                    dw3x3_group_asm(&call, first, slot, c, group);
                    break;
                }
#elif defined(TH_NN_RECORD_PATHS) && TH_NN_RECORD_PATHS
                if (use_asm) { /* the assembly's C model, not a path of its own */
                    dw3x3_channel_impl(first + k * slot, &geo, stride, filter, c + k,
                                       bias != NULL ? bias[c + k] : 0, params->input_offset,
                                       quant, &stage, out_b, 1, 0);
                    continue;
                }
#endif
                dw3x3_channel(first + k * slot, &geo, stride, filter, c + k,
                              bias != NULL ? bias[c + k] : 0, params->input_offset, quant,
                              &stage, out_b);
            }
            c += group;
        }
    }
#else
    th_nn_dw_conv_ref_s8((int8_t *)ctx->buf, params, quant, input_dims, input, filter_dims,
                         filter, bias, output_dims, output);
#endif
    return TH_OK;
}
