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

/* Bytes of four planes (channels staged four at a time: one 32-bit load brings a pixel's
 * four values, see fill_group4), when that applies (stride 1, C a multiple of 4), else 0. */
static int32_t four_planes_bytes(const th_dw_conv_params *params, const th_dims *output_dims)
{
    const int32_t s = params->stride.h;
    if (s != 1 || output_dims->c < 4 || (output_dims->c & 3) != 0) {
        return 0;
    }
    return 4 * 2 * plane_h(s, output_dims->h) * plane_w(s, output_dims->w);
}
#endif

int32_t th_dw_conv_3x3_s8_scratch_size(const th_dw_conv_params *params,
                                       const th_dims *input_dims, const th_dims *filter_dims,
                                       const th_dims *output_dims)
{
#if TH_NN_DSP
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
#if TH_NN_DSP
    if (params == NULL || output_dims == NULL || output_dims->h <= 0 || output_dims->w <= 0) {
        return 0;
    }
    return four_planes_bytes(params, output_dims);
#else
    (void)params;
    (void)output_dims;
    return 0;
#endif
}

#if TH_NN_DSP

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
 * call, the channels then only copy their interior (fill_interior, fill_group4). */
static void fill_padding(int16_t *plane, const dw_geometry *g, int32_t offset)
{
    const int16_t pad = (int16_t)(-offset);
    const int32_t pad2 = (int32_t)(((uint32_t)(uint16_t)pad << 16) | (uint16_t)pad);
    const dw_interior in = interior_of(g);
    const int32_t pw = g->pw; /* even: rows are word aligned */
    for (int32_t r = 0; r < g->ph; r++) {
        int16_t *row = plane + r * pw;
        if (r < in.r_begin || r >= in.r_end || in.x_end == in.x_begin) {
            for (int32_t q = 0; q < pw; q += 2) {
                th_write_s32(row + q, pad2);
            }
            continue;
        }
        for (int32_t q = 0; q < in.x_begin; q++) {
            row[q] = pad;
        }
        for (int32_t q = in.x_end; q < pw; q++) {
            row[q] = pad;
        }
    }
}

/* Four input values (stride in_c bytes) from src to the int16 plane at d (word aligned),
 * `quads` times: 4 LDRSB, ADD, 2 PKHBT, STRD per four values, the loop unrolled twice (an
 * odd count enters it in the middle). */
#define TH_DW_COPY_QUAD                                                                      \
    "ldrsb %[t0], [%[s]]\n\t"                                                                \
    "ldrsb %[t1], [%[s], %[c]]\n\t"                                                          \
    "ldrsb %[t2], [%[s], %[c], lsl #1]\n\t"                                                  \
    "ldrsb %[t3], [%[s], %[c3]]\n\t"                                                         \
    "add %[s], %[s], %[c], lsl #2\n\t"                                                       \
    "pkhbt %[t0], %[t0], %[t1], lsl #16\n\t"                                                 \
    "pkhbt %[t2], %[t2], %[t3], lsl #16\n\t"                                                 \
    "strd %[t0], %[t2], [%[d]], #8\n\t"

TH_INLINE void copy_quads(int16_t *d, const int8_t *src, int32_t in_c, int32_t quads)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    const int16_t *end = d + 4 * quads;
    const int32_t in_c3 = 3 * in_c;
    int32_t t0, t1, t2, t3;
    __asm__ volatile(
        "tst %[n], #1\n\t"
        "bne 2f\n\t"
        "1:\n\t" TH_DW_COPY_QUAD
        "2:\n\t" TH_DW_COPY_QUAD
        "cmp %[d], %[end]\n\t"
        "bne 1b\n\t"
        : [s] "+r"(src), [d] "+r"(d), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2),
          [t3] "=&r"(t3)
        : [c] "r"(in_c), [c3] "r"(in_c3), [end] "r"(end), [n] "r"(quads)
        : "cc", "memory");
#else
    for (int32_t i = 0; i < 4 * quads; i++) {
        d[i] = src[(int32_t)i * in_c];
    }
#endif
}

/* Copies channel c of the input into the interior of its int16 plane as raw values (the
 * padding is already there, fill_padding), with little work per row. */
static void fill_interior(int16_t *plane, const dw_geometry *g, const int8_t *in, int32_t c)
{
    const int32_t pw = g->pw;
    const int32_t in_c = g->src_inner;
    const int32_t x_begin = TH_MIN(g->pad_inner, pw);
    const int32_t x_end = TH_MIN(g->pad_inner + g->inner, pw);
    const int32_t r_begin = TH_MIN(g->pad_outer, g->ph);
    const int32_t r_end = TH_MIN(g->pad_outer + g->outer, g->ph);
    if (x_end <= x_begin || r_end <= r_begin) {
        return;
    }
    const int32_t lead = x_begin & 1; /* one value first, so that the rest is word aligned */
    const int32_t quads = (x_end - x_begin - lead) / 4;
    const int32_t tail = (x_end - x_begin - lead) - 4 * quads;
    const int8_t *src = in + (x_begin - g->pad_inner) * in_c + c +
                        (r_begin - g->pad_outer) * g->src_outer;
    int16_t *d = plane + r_begin * pw + x_begin;
    for (int32_t r = r_begin; r < r_end; r++, src += g->src_outer, d += pw) {
        const int8_t *s = src;
        int16_t *q = d;
        if (lead) {
            *q++ = *s;
            s += in_c;
        }
        if (quads > 0) {
            copy_quads(q, s, in_c, quads);
            q += 4 * quads;
            s += 4 * quads * in_c;
        }
        for (int32_t i = 0; i < tail; i++, s += in_c) {
            q[i] = *s;
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

/* Pairs of pixels (stride in_c bytes, four channels each) from src to four planes `slot`
 * values apart, at q (word aligned): per pair, two 32-bit loads, PKHBT/PKHTB gather the
 * pixels' bytes of channels (0, 1) and (2, 3), and SXTB16 / SXTB16 ROR 8 sign-extend them
 * to a plane word (x, x+1) of each channel: 14 instructions per 8 values. */
TH_INLINE void copy_pairs4(int16_t *q, int32_t slot, const int8_t *src, int32_t in_c,
                           int32_t pairs)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    int16_t *d0 = q;
    int16_t *d1 = q + slot;
    int16_t *d2 = q + 2 * slot;
    int16_t *d3 = q + 3 * slot;
    const int16_t *end = q + 2 * pairs;
    int32_t a, b, t;
    __asm__ volatile(
        "1:\n\t"
        "ldr %[a], [%[s]]\n\t"
        "ldr %[b], [%[s], %[c]]\n\t"
        "add %[s], %[s], %[c], lsl #1\n\t"
        "pkhtb %[t], %[b], %[a], asr #16\n\t"
        "pkhbt %[a], %[a], %[b], lsl #16\n\t"
        "sxtb16 %[b], %[a]\n\t"
        "str %[b], [%[d0]], #4\n\t"
        "sxtb16 %[b], %[a], ror #8\n\t"
        "str %[b], [%[d1]], #4\n\t"
        "sxtb16 %[b], %[t]\n\t"
        "str %[b], [%[d2]], #4\n\t"
        "sxtb16 %[b], %[t], ror #8\n\t"
        "str %[b], [%[d3]], #4\n\t"
        "cmp %[d0], %[end]\n\t"
        "bne 1b\n\t"
        : [s] "+r"(src), [d0] "+r"(d0), [d1] "+r"(d1), [d2] "+r"(d2), [d3] "+r"(d3),
          [a] "=&r"(a), [b] "=&r"(b), [t] "=&r"(t)
        : [c] "r"(in_c), [end] "r"(end)
        : "cc", "memory");
#else
    for (int32_t i = 0; i < 2 * pairs; i++) {
        put4(q + i, slot, th_read_s32(src + (int32_t)i * in_c));
    }
#endif
}

/* Copies channels c .. c + 3 of the input into the interiors of four planes `slot` values
 * apart (fill_interior for four channels at once: a pixel's four values are one load). */
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
    const int32_t pairs = (box.x_end - box.x_begin - lead) / 2;
    const int32_t tail = (box.x_end - box.x_begin - lead) & 1;
    const int8_t *src = in + (box.x_begin - g->pad_inner) * in_c + c +
                        (box.r_begin - g->pad_outer) * g->src_outer;
    int16_t *d = plane + box.r_begin * pw + box.x_begin;
    for (int32_t r = box.r_begin; r < box.r_end; r++, src += g->src_outer, d += pw) {
        const int8_t *s = src;
        int16_t *q = d;
        if (lead) {
            put4(q++, slot, th_read_s32(s));
            s += in_c;
        }
        if (pairs > 0) {
            copy_pairs4(q, slot, s, in_c, pairs);
            q += 2 * pairs;
            s += 2 * pairs * in_c;
        }
        if (tail) {
            put4(q, slot, th_read_s32(s));
        }
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
/* What the assembly loop reads: the six weight words, the accumulator start, the fast
 * requantization and the loop bounds (offsets are fixed in the assembly). The loop covers
 * the blocks of four of every output row; it updates `end` and `rows` as it goes. */
typedef struct {
    int32_t w[6]; /* W01, W12 of rows 0, 1, 2 */
    int32_t acc0; /* 24 */
    int32_t multiplier; /* 28 */
    int32_t round_zp; /* 32 */
    int32_t e; /* 36 */
    const int16_t *end; /* 40: r0 after the last block of four of the current row */
    int32_t p_skip; /* 44: bytes from there to the next row's first window */
    int32_t o_skip; /* 48: output bytes from after the row's last block to the next row */
    int32_t rows; /* 52: output rows left, including the current one */
    int32_t span; /* 56: bytes from a row's first window to its `end` */
} dw_row_args;

/* One filter row for four outputs (stride 1): 2 LDRD + LDR + 8 MAC for 12 MACs. */
#define TH_DW_ASM_S1(P, WOFF, I0, I1, I2, I3)                                                \
    "ldrd %[wa], %[wb], [%[k], #" WOFF "]\n\t"                                               \
    "ldrd %[v0], %[v1], [%[" P "]], #8\n\t"                                                  \
    "smlad %[a0], %[v0], %[wa], %[" I0 "]\n\t"                                               \
    "smlatb %[a1], %[v0], %[wa], %[" I1 "]\n\t"                                              \
    "ldr %[v0], [%[" P "]]\n\t"                                                              \
    "smlabt %[a0], %[v1], %[wb], %[a0]\n\t"                                                  \
    "smlad %[a1], %[v1], %[wb], %[a1]\n\t"                                                   \
    "smlad %[a2], %[v1], %[wa], %[" I2 "]\n\t"                                               \
    "smlatb %[a3], %[v1], %[wa], %[" I3 "]\n\t"                                              \
    "smlabt %[a2], %[v0], %[wb], %[a2]\n\t"                                                  \
    "smlad %[a3], %[v0], %[wb], %[a3]\n\t"

/* One filter row for four outputs (stride 2): 3 LDRD + LDR + 8 MAC for 12 MACs. */
#define TH_DW_ASM_S2(P, WOFF, I0, I1, I2, I3)                                                \
    "ldrd %[wa], %[wb], [%[k], #" WOFF "]\n\t"                                               \
    "ldrd %[v0], %[v1], [%[" P "]], #8\n\t"                                                  \
    "smlad %[a0], %[v0], %[wa], %[" I0 "]\n\t"                                               \
    "smlabt %[a0], %[v1], %[wb], %[a0]\n\t"                                                  \
    "smlad %[a1], %[v1], %[wa], %[" I1 "]\n\t"                                               \
    "ldrd %[v0], %[v1], [%[" P "]], #8\n\t"                                                  \
    "smlabt %[a1], %[v0], %[wb], %[a1]\n\t"                                                  \
    "smlad %[a2], %[v0], %[wa], %[" I2 "]\n\t"                                               \
    "smlabt %[a2], %[v1], %[wb], %[a2]\n\t"                                                  \
    "smlad %[a3], %[v1], %[wa], %[" I3 "]\n\t"                                               \
    "ldr %[v0], [%[" P "]]\n\t"                                                              \
    "smlabt %[a3], %[v0], %[wb], %[a3]\n\t"

/* Requantize accumulator A (doubled) and store it at [o + OFF]. */
#define TH_DW_ASM_OUT(A, ADDR)                                                               \
    "smmlar %[v0], %[" A "], %[wa], %[wb]\n\t"                                               \
    "add %[v0], %[v0], %[" A "], asr #31\n\t"                                                \
    "asr %[v0], %[v0], %[v1]\n\t"                                                            \
    "ssat %[v0], #8, %[v0]\n\t"                                                              \
    "strb %[v0], " ADDR "\n\t"

/* Requantizes and stores the block's four outputs. */
#define TH_DW_ASM_OUT4                                                                       \
    "ldrd %[wa], %[wb], [%[k], #28]\n\t"                                                     \
    "ldr %[v1], [%[k], #36]\n\t"                                                             \
    TH_DW_ASM_OUT("a0", "[%[o]]")                                                            \
    TH_DW_ASM_OUT("a1", "[%[o], %[cs]]")                                                     \
    "add %[o], %[o], %[cs], lsl #1\n\t"                                                      \
    TH_DW_ASM_OUT("a2", "[%[o]]")                                                            \
    TH_DW_ASM_OUT("a3", "[%[o], %[cs]]")                                                     \
    "add %[o], %[o], %[cs], lsl #1\n\t"

/* One block of four outputs: the accumulator start goes to a3, the first filter row takes
 * it as its addend. ROW is TH_DW_ASM_S1 or TH_DW_ASM_S2. */
#define TH_DW_ASM_BLOCK(ROW)                                                                 \
    "ldr %[a3], [%[k], #24]\n\t"                                                             \
    ROW("p0", "0", "a3", "a3", "a3", "a3")                                                   \
    ROW("p1", "8", "a0", "a1", "a2", "a3")                                                   \
    ROW("p2", "16", "a0", "a1", "a2", "a3") TH_DW_ASM_OUT4

/* After two blocks: back to label 1 until the row's `end`, then on to the next output row
 * (back to label L: 1b for an even count of blocks per row, 2b, the second block, for an
 * odd one). */
#define TH_DW_ASM_NEXT(L)                                                                    \
    "ldr %[v0], [%[k], #40]\n\t"                                                             \
    "cmp %[p0], %[v0]\n\t"                                                                   \
    "bne 1b\n\t"                                                                             \
    "ldrd %[wa], %[wb], [%[k], #44]\n\t"                                                     \
    "add %[p0], %[p0], %[wa]\n\t"                                                            \
    "add %[p1], %[p1], %[wa]\n\t"                                                            \
    "add %[p2], %[p2], %[wa]\n\t"                                                            \
    "add %[o], %[o], %[wb]\n\t"                                                              \
    "ldrd %[v0], %[v1], [%[k], #52]\n\t"                                                     \
    "add %[a0], %[p0], %[v1]\n\t"                                                            \
    "str %[a0], [%[k], #40]\n\t"                                                             \
    "subs %[v0], %[v0], #1\n\t"                                                              \
    "str %[v0], [%[k], #52]\n\t"                                                             \
    "bne " L "\n\t"

#define TH_DW_ASM_OPERANDS                                                                   \
    : [p0] "+r"(p0), [p1] "+r"(p1), [p2] "+r"(p2), [o] "+r"(o), [a0] "=&r"(a0),              \
      [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [v0] "=&r"(v0), [v1] "=&r"(v1),        \
      [wa] "=&r"(wa), [wb] "=&r"(wb)                                                         \
    : [k] "r"(k), [cs] "r"(cs)                                                               \
    : "cc", "memory"

/* The blocks of four outputs of every output row (at least one block, one row), from the
 * row windows p0, p1, p2 of the first row and its output o; two blocks per loop iteration
 * (one end-of-row check per eight outputs), an odd count of blocks enters at the second. */
#define TH_DW_ROWS_FN(NAME, ROW)                                                             \
    static void NAME(const int16_t *p0, const int16_t *p1, const int16_t *p2, int8_t *o,     \
                     int32_t cs, dw_row_args *k, int32_t odd)                                 \
    {                                                                                        \
        int32_t a0, a1, a2, a3, v0, v1, wa, wb;                                              \
        if (odd) {                                                                           \
            __asm__ volatile("b 2f\n\t"                                                      \
                             "1:\n\t" TH_DW_ASM_BLOCK(ROW) "2:\n\t" TH_DW_ASM_BLOCK(ROW)     \
                                 TH_DW_ASM_NEXT("2b") TH_DW_ASM_OPERANDS);                   \
        } else {                                                                             \
            __asm__ volatile("1:\n\t" TH_DW_ASM_BLOCK(ROW) TH_DW_ASM_BLOCK(ROW)              \
                                 TH_DW_ASM_NEXT("1b") TH_DW_ASM_OPERANDS);                   \
        }                                                                                    \
    }

TH_DW_ROWS_FN(dw_rows_s1_asm, TH_DW_ASM_S1)
TH_DW_ROWS_FN(dw_rows_s2_asm, TH_DW_ASM_S2)
#undef TH_DW_ROWS_FN

/* Two outputs of one filter row (stride 1), the accumulators' addend A0 (a1 for the first
 * row, which holds the start value): LDRD + LDRD + 4 MAC. */
#define TH_DW2_ASM_S1(P, WOFF, A0)                                                           \
    "ldrd %[wa], %[wb], [%[k], #" WOFF "]\n\t"                                               \
    "ldrd %[v0], %[v1], [%[" P "]]\n\t"                                                      \
    "smlad %[a0], %[v0], %[wa], %[" A0 "]\n\t"                                               \
    "smlatb %[a1], %[v0], %[wa], %[a1]\n\t"                                                  \
    "smlabt %[a0], %[v1], %[wb], %[a0]\n\t"                                                  \
    "smlad %[a1], %[v1], %[wb], %[a1]\n\t"

/* Two outputs of one filter row (stride 2): LDRD + LDRD + LDR + 4 MAC. */
#define TH_DW2_ASM_S2(P, WOFF, A0)                                                           \
    "ldrd %[wa], %[wb], [%[k], #" WOFF "]\n\t"                                               \
    "ldrd %[v0], %[v1], [%[" P "]]\n\t"                                                      \
    "smlad %[a0], %[v0], %[wa], %[" A0 "]\n\t"                                               \
    "smlad %[a1], %[v1], %[wa], %[a1]\n\t"                                                   \
    "smlabt %[a0], %[v1], %[wb], %[a0]\n\t"                                                  \
    "ldr %[v0], [%[" P "], #8]\n\t"                                                          \
    "smlabt %[a1], %[v0], %[wb], %[a1]\n\t"

/* Requantizes and stores the two outputs, then steps to the next output row: p_skip and
 * o_skip are the whole row steps here, rows counts down. */
#define TH_DW2_ASM_TAIL                                                                      \
    "ldrd %[wa], %[wb], [%[k], #28]\n\t"                                                     \
    "ldr %[v1], [%[k], #36]\n\t"                                                             \
    TH_DW_ASM_OUT("a0", "[%[o]]")                                                            \
    TH_DW_ASM_OUT("a1", "[%[o], %[cs]]")                                                     \
    "ldrd %[wa], %[wb], [%[k], #44]\n\t"                                                     \
    "add %[p0], %[p0], %[wa]\n\t"                                                            \
    "add %[p1], %[p1], %[wa]\n\t"                                                            \
    "add %[p2], %[p2], %[wa]\n\t"                                                            \
    "add %[o], %[o], %[wb]\n\t"                                                              \
    "ldr %[v0], [%[k], #52]\n\t"                                                             \
    "subs %[v0], %[v0], #1\n\t"                                                              \
    "str %[v0], [%[k], #52]\n\t"                                                             \
    "bne 1b\n\t"

#define TH_DW2_ASM_OPERANDS                                                                  \
    : [p0] "+r"(p0), [p1] "+r"(p1), [p2] "+r"(p2), [o] "+r"(o), [a0] "=&r"(a0),              \
      [a1] "=&r"(a1), [v0] "=&r"(v0), [v1] "=&r"(v1), [wa] "=&r"(wa), [wb] "=&r"(wb)         \
    : [k] "r"(k), [cs] "r"(cs)                                                               \
    : "cc", "memory"

/* Two outputs (columns starting at an even plane column) of every output row. */
static void dw_pairs_asm(const int16_t *p0, const int16_t *p1, const int16_t *p2, int8_t *o,
                         int32_t cs, int32_t stride, dw_row_args *k)
{
    int32_t a0, a1, v0, v1, wa, wb;
    if (stride == 1) {
        __asm__ volatile("1:\n\t"
                         "ldr %[a1], [%[k], #24]\n\t" TH_DW2_ASM_S1("p0", "0", "a1")
                             TH_DW2_ASM_S1("p1", "8", "a0") TH_DW2_ASM_S1("p2", "16", "a0")
                                 TH_DW2_ASM_TAIL TH_DW2_ASM_OPERANDS);
    } else {
        __asm__ volatile("1:\n\t"
                         "ldr %[a1], [%[k], #24]\n\t" TH_DW2_ASM_S2("p0", "0", "a1")
                             TH_DW2_ASM_S2("p1", "8", "a0") TH_DW2_ASM_S2("p2", "16", "a0")
                                 TH_DW2_ASM_TAIL TH_DW2_ASM_OPERANDS);
    }
}
#define TH_DW_ASM 1
#else
#define TH_DW_ASM 0
#endif

TH_INLINE void dw3x3_channel_impl(const int16_t *plane, const dw_geometry *g, int32_t stride,
                                  const int8_t *filter, int32_t c, int32_t bias,
                                  int32_t offset, const th_per_channel_quant *quant,
                                  const th_nn_out_stage *stage, int8_t *out,
                                  const int fast_only)
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
#if TH_DW_ASM
    dw_row_args args;
    for (int32_t r = 0; r < 3; r++) {
        args.w[2 * r] = w01[r];
        args.w[2 * r + 1] = w12[r];
    }
    args.acc0 = acc0;
    args.multiplier = rq.multiplier;
    args.round_zp = rq.round_zp;
    args.e = rq.e;
#endif
    const int32_t out_w = g->out_cols;
    const int32_t step = 4 * stride; /* plane columns per four outputs */
    int32_t ox_first = 0; /* columns of every row the assembly loop computed */
#if TH_DW_ASM
    if (fast_only && out_w >= 4) {
        const int32_t blocks = out_w / 4;
        args.end = plane + blocks * step;
        args.p_skip = (int32_t)sizeof(int16_t) * (stride * pw - blocks * step);
        args.o_skip = g->out_row_step - 4 * blocks * cs;
        args.rows = g->out_rows;
        args.span = (int32_t)sizeof(int16_t) * blocks * step;
        if (stride == 1) {
            dw_rows_s1_asm(plane, plane + pw, plane + 2 * pw, out + c, cs, &args, blocks & 1);
        } else {
            dw_rows_s2_asm(plane, plane + pw, plane + 2 * pw, out + c, cs, &args, blocks & 1);
        }
        ox_first = 4 * blocks;
    }
#endif
    if (ox_first > 0) {
#if TH_DW_ASM
        if (out_w - ox_first >= 2) {
            /* Two more outputs of each row (ox_first is even). */
            const int16_t *p = plane + ox_first * stride;
            args.p_skip = (int32_t)sizeof(int16_t) * stride * pw;
            args.o_skip = g->out_row_step;
            args.rows = g->out_rows;
            dw_pairs_asm(p, p + pw, p + 2 * pw, out + c + ox_first * cs, cs, stride, &args);
            ox_first += 2;
        }
#endif
        /* The last outputs of each row, one at a time. */
        const int32_t left = out_w - ox_first;
        const int16_t *rp = plane + ox_first * stride;
        int8_t *orow = out + c + ox_first * cs;
        for (int32_t oy = 0; left > 0 && oy < g->out_rows;
             oy++, rp += stride * pw, orow += g->out_row_step) {
            const int16_t *r0 = rp;
            int8_t *o = orow;
            for (int32_t i = 0; i < left; i++, r0 += stride, o += cs) {
                int32_t a = acc0;
                a = th_smlabt(th_read_s32(r0 + 2), w12_0, th_smlad(th_read_s32(r0), w01_0, a));
                a = th_smlabt(th_read_s32(r0 + pw + 2), w12_1,
                              th_smlad(th_read_s32(r0 + pw), w01_1, a));
                a = th_smlabt(th_read_s32(r0 + 2 * pw + 2), w12_2,
                              th_smlad(th_read_s32(r0 + 2 * pw), w01_2, a));
                o[0] = dw_out(a, &rq, c, quant, stage, fast_only);
            }
        }
        return;
    }
    for (int32_t oy = 0; oy < g->out_rows; oy++) {
        int32_t ox = 0;
        const int16_t *r0 = plane + oy * stride * pw;
        const int16_t *r1 = r0 + pw;
        const int16_t *r2 = r1 + pw;
        int8_t *o = out + (int64_t)oy * g->out_row_step + c;
        for (; ox + 3 < out_w; ox += 4, r0 += step, r1 += step, r2 += step) {
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
    if (stage->fast && !stage->clamp) {
        dw3x3_channel_impl(plane, g, stride, filter, c, bias, offset, quant, stage, out, 1);
    } else {
        dw3x3_channel_impl(plane, g, stride, filter, c, bias, offset, quant, stage, out, 0);
    }
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
    const int32_t plain = plane_h(s, oh) * plane_w(s, ow);
    const int transpose = oh > ow && plane_h(s, ow) * plane_w(s, oh) <= plain;
    if (!transpose) {
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
    dw_geometry geo;
    make_geometry(&geo, params, input_dims, output_dims);
    int16_t *plane = (int16_t *)ctx->buf;
    /* Four channels per pass when the caller's scratch holds four planes (the planner gives
     * it where the arena has room to spare), else one. */
    const int32_t four = four_planes_bytes(params, output_dims);
    const int32_t planes = four > 0 && ctx->size >= four ? 4 : 1;
    /* Plane k at plane + k * slot (the plain plane's size; a transposed one fits in it). */
    const int32_t slot = plane_h(stride, output_dims->h) * plane_w(stride, output_dims->w);
    th_nn_out_stage stage;
    th_nn_out_stage_init(&stage, quant, channels, params->output_offset, &params->activation,
                         th_acc_bound(9, 128, bias, channels));
    for (int32_t k = 0; k < planes; k++) {
        fill_padding(plane + k * slot, &geo, params->input_offset);
    }
    for (int32_t b = 0; b < input_dims->n; b++) {
        const int8_t *in_b =
            input + (int64_t)b * input_dims->h * input_dims->w * input_dims->c;
        int8_t *out_b = output + (int64_t)b * output_dims->h * output_dims->w * channels;
        for (int32_t c = 0; c < channels; c += planes) {
            /* Every staged channel is copied before any of its outputs is written. */
            if (planes == 4) {
                fill_group4(plane, slot, &geo, in_b, c);
            } else {
                fill_interior(plane, &geo, in_b, c);
            }
            for (int32_t k = 0; k < planes; k++) {
                dw3x3_channel(plane + k * slot, &geo, stride, filter, c + k,
                              bias != NULL ? bias[c + k] : 0, params->input_offset, quant,
                              &stage, out_b);
            }
        }
    }
#else
    th_nn_dw_conv_ref_s8((int8_t *)ctx->buf, params, quant, input_dims, input, filter_dims,
                         filter, bias, output_dims, output);
#endif
    return TH_OK;
}
