/* th_avgpool_s8: int8 AVERAGE_POOL_2D as TFLite Micro's reference (no requantization). Sums
 * are exact integers, so the separable path's order gives the same result. MVE builds sum
 * across channels in vectors (int16 lanes for the column sums and up to 256 taps, int32
 * beyond) and divide four lanes at a time (avg_div). DSP builds with at most 256 taps
 * (avg_lanes_image) keep the column and window sums in int16 lanes, two channels a word, and
 * divide without a division (SMLAWB / SMLAWT by a reciprocal, exact: see below). One output
 * pixel over whole rows (global pooling) takes AVG_GLOBAL on DSP builds (avg_global). */
#include "th_nn.h"
#include "th_nn_pool.h"
#include "th_nn_support.h"

/* Channels summed at a time: int32 accumulators on the stack, no scratch. */
#define TH_AVGPOOL_CHUNK 32

/* TFLM's rounding: (sum +- count/2) / count with C's truncating division. */
TH_INLINE int32_t avg_round(int32_t sum, int32_t count)
{
    const int32_t half = count / 2;
    return sum > 0 ? (sum + half) / count : (sum - half) / count;
}

#if TH_NN_MVE
/* Division of four window sums by count, avg_round exactly: for 2 <= count <= 4096, with
 * n = |sum| + count / 2 (|sum| <= 128 * count) and m = ceil(2^32 / count) = (2^32 - 1) /
 * count + 1 = 2^32 / count + e / count (0 <= e < count), (n * m) >> 32 (VMULH.U32) is
 * floor(n / count): the excess n * e / (count * 2^32) is below 1 / count because n * e <=
 * 128.5 * 4096 * 4095 < 2^32. The sign is put back after (TFLM rounds half away from zero).
 * Other counts (1, > 4096) take avg_round per lane. */
#define TH_AVG_MVE_MAX_COUNT 4096

typedef struct {
    uint32_t m; /* 0: per lane */
    int32_t half;
    int32_t count;
    int32_t lo;
    int32_t hi;
} avg_div;

TH_INLINE void avg_div_set(avg_div *d, int32_t count)
{
    if (count != d->count) {
        d->count = count;
        d->half = count / 2;
        d->m = count >= 2 && count <= TH_AVG_MVE_MAX_COUNT ? 0xFFFFFFFFu / (uint32_t)count + 1u
                                                          : 0u;
    }
}

/* dst[0..3] (lanes in p) = the clamped averages of the four sums. */
TH_INLINE void avg_store4(int8_t *dst, int32x4_t sum, const avg_div *d, mve_pred16_t p)
{
    int32x4_t v = sum;
    if (d->m != 0u) {
        const mve_pred16_t neg = vcmpltq_n_s32(sum, 0);
        const uint32x4_t n = vreinterpretq_u32_s32(vaddq_n_s32(vabsq_s32(sum), d->half));
        const int32x4_t q = vreinterpretq_s32_u32(vmulhq_u32(n, vdupq_n_u32(d->m)));
        v = vpselq_s32(vnegq_s32(q), q, neg);
    } else if (d->count != 1) {
        int32_t t[4];
        vstrwq_s32(t, sum);
        for (int32_t j = 0; j < 4; j++) {
            t[j] = avg_round(t[j], d->count);
        }
        v = vldrwq_s32(t);
    }
    v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(d->lo)), vdupq_n_s32(d->hi));
    vstrbq_p_s32(dst, v, p);
}
#endif

/* Separable path (th_avgpool_s8_scratch_size > 0 and that much scratch given): per image, an
 * int16 column sum per (x, c) over the rows of the current output row's window, slid down
 * one output row at a time (rows leaving subtracted, rows entering added), and an int32
 * running sum per channel slid along the row over the column sums. Every input element is
 * added and subtracted once whatever the window. In-place order (th_nn.h (c)): pixel q's
 * output is written once its sum is known; the column sums of columns < xs(q+1) are then
 * moved to the next output row, reading the leaving rows there only at columns >= xs(q)
 * and the entering rows (read by later pixels only), all still unwritten. */
static int avg_separable(const th_pool_params *p, const th_dims *in, const th_dims *out)
{
    const int64_t taps = (int64_t)p->filter.h * p->filter.w;
    const int64_t strides = (int64_t)p->stride.h * p->stride.w;
    /* strides >= 2 (AVG_STRIDED): enough taps per window, or windows sharing input rows */
    return (int64_t)out->h * out->w > 1 && p->filter.h <= 256 &&
           (taps >= 4 * strides ||
            (p->stride.h >= 2 && p->stride.w >= 2 && taps <= 256 &&
             (taps >= 2 * strides || p->filter.h > p->stride.h))) &&
           (int64_t)in->w * in->c <= (INT64_C(1) << 26);
}

/* Columns of column sums: W, or at stride 1 max(W + KW - 1, OW - 1 + KW), room for zero
 * columns in the padding on both sides (the DSP path's stride-1 rows, avg_lanes_image). */
static int32_t avg_cs_cols(const th_pool_params *p, const th_dims *in, const th_dims *out)
{
    if (p->stride.h != 1 || p->stride.w != 1) {
        return in->w;
    }
    return TH_MAX(in->w + p->filter.w - 1, out->w - 1 + p->filter.w);
}

/* Halfwords from one column's sums to the next: C, or at stride 1 with an odd C, C + 1 (a
 * pad halfword after each column keeps every column's groups word-aligned: the DSP row
 * walker's LDRD / STRD, avg_lanes_image). Every build's scratch alike (plan/scratch.py). */
static int32_t avg_cs_stride(const th_pool_params *p, int32_t c)
{
    return p->stride.h == 1 && p->stride.w == 1 ? c + (c & 1) : c;
}

/* The scratch of arguments th_nn_check_pool accepts (th_avgpool_s8 calls it after that
 * check, not the public function's checks a second time). */
__attribute__((noinline)) static int32_t avg_scratch_need(const th_pool_params *params,
                                                          const th_dims *input_dims,
                                                          const th_dims *output_dims)
{
    if (!avg_separable(params, input_dims, output_dims)) {
        return 0;
    }
    return ((2 * avg_cs_cols(params, input_dims, output_dims) *
                 avg_cs_stride(params, input_dims->c) +
             3) &
            ~3) +
           4 * input_dims->c;
}

int32_t th_avgpool_s8_scratch_size(const th_pool_params *params, const th_dims *input_dims,
                                   const th_dims *output_dims)
{
    if (params == NULL || input_dims == NULL || output_dims == NULL ||
        input_dims->w < 1 || input_dims->c < 1 || params->filter.h < 1 ||
        params->filter.w < 1 || params->stride.h < 1 || params->stride.w < 1) {
        return 0;
    }
    return avg_scratch_need(params, input_dims, output_dims);
}

/* cs[k] += sign * row[k] over the n values of one input row segment. */
static void col_add(int16_t *cs, const int8_t *row, int32_t n)
{
#if TH_NN_MVE
    for (int32_t k = 0; k < n; k += 8) {
        const mve_pred16_t p = vctp16q((uint32_t)(n - k));
        vstrhq_p_s16(cs + k, vaddq_s16(vldrhq_z_s16(cs + k, p), vldrbq_z_s16(row + k, p)), p);
    }
#else
    for (int32_t k = 0; k < n; k++) {
        cs[k] = (int16_t)(cs[k] + row[k]);
    }
#endif
}

static void col_sub(int16_t *cs, const int8_t *row, int32_t n)
{
#if TH_NN_MVE
    for (int32_t k = 0; k < n; k += 8) {
        const mve_pred16_t p = vctp16q((uint32_t)(n - k));
        vstrhq_p_s16(cs + k, vsubq_s16(vldrhq_z_s16(cs + k, p), vldrbq_z_s16(row + k, p)), p);
    }
#else
    for (int32_t k = 0; k < n; k++) {
        cs[k] = (int16_t)(cs[k] - row[k]);
    }
#endif
}

#if TH_NN_MVE
/* acc[c] += sign * sum of the n columns from col (column stride ch), c < ch. */
static void acc_cols(int32_t *acc, const int16_t *col, int32_t n, int32_t ch, int sub)
{
    for (int32_t c = 0; c < ch; c += 4) {
        const mve_pred16_t p = vctp32q((uint32_t)(ch - c));
        int32x4_t a = vldrwq_z_s32(acc + c, p);
        for (int32_t x = 0; x < n; x++) {
            const int32x4_t v = vldrhq_z_s32(col + x * ch + c, p);
            a = sub ? vsubq_s32(a, v) : vaddq_s32(a, v);
        }
        vstrwq_p_s32(acc + c, a, p);
    }
}

/* One output pixel from acc (enter: one column added first, leave: one subtracted after,
 * either NULL), then dst. */
static void acc_out(int32_t *acc, const int16_t *enter, const int16_t *leave, int32_t ch,
                    const avg_div *dp, int8_t *dst)
{
    const avg_div dv = *dp; /* in registers: the stores through dst may alias *dp */
    const avg_div *d = &dv;
    for (int32_t c = 0; c < ch; c += 4) {
        const mve_pred16_t p = vctp32q((uint32_t)(ch - c));
        int32x4_t a = vldrwq_z_s32(acc + c, p);
        if (enter != NULL) {
            a = vaddq_s32(a, vldrhq_z_s32(enter + c, p));
        }
        avg_store4(dst + c, a, d, p);
        if (leave != NULL) {
            a = vsubq_s32(a, vldrhq_z_s32(leave + c, p));
        }
        vstrwq_p_s32(acc + c, a, p);
    }
}
#endif

/* Out of line: inlined, its locals are part of th_avgpool_s8's frame, under
 * avg_lanes_image's on the stack bound's chain (avg_strided_image stays inlined: a call
 * cost a strided pool ~8 instructions). */
__attribute__((noinline)) static void avg_separable_image(const th_pool_params *p,
                                                          const th_dims *in,
                                                          const int8_t *image,
                                                          const th_dims *out, int8_t *dst,
                                                          int16_t *cs, int32_t *acc)
{
    const int32_t in_h = in->h, in_w = in->w, ch = in->c;
    const int32_t act_min = p->activation.min, act_max = p->activation.max;
    th_nn_window wy = th_nn_window_at(0, p->stride.h, p->padding.h, p->filter.h, in_h);
#if TH_NN_MVE
    avg_div dv;
    dv.count = 0;
    dv.m = 0u;
    dv.half = 0;
    dv.lo = act_min;
    dv.hi = act_max;
#endif
    for (int32_t k = 0; k < in_w * ch; k++) {
        cs[k] = 0;
    }
    for (int32_t y = wy.origin + wy.start; y < wy.origin + wy.end; y++) {
        col_add(cs, image + y * in_w * ch, in_w * ch);
    }
    for (int32_t oy = 0; oy < out->h; oy++) {
        const int32_t ys = wy.origin + wy.start, ye = wy.origin + wy.end;
        const int last_row = oy + 1 == out->h;
        th_nn_window wn = wy;
        if (!last_row) {
            wn = th_nn_window_at(oy + 1, p->stride.h, p->padding.h, p->filter.h, in_h);
        }
        const int32_t ns = wn.origin + wn.start, ne = wn.origin + wn.end;
        const int32_t leave_end = ye < ns ? ye : ns;   /* rows [ys, leave_end) leave */
        const int32_t enter_start = ye > ns ? ye : ns; /* rows [enter_start, ne) enter */
        for (int32_t c = 0; c < ch; c++) {
            acc[c] = 0;
        }
        int32_t have_end = 0; /* columns [xs, have_end) are in acc */
        int32_t upd = 0;      /* columns [0, upd) hold the next row's sums */
        th_nn_window wx = th_nn_window_at(0, p->stride.w, p->padding.w, p->filter.w, in_w);
        for (int32_t ox = 0; ox < out->w; ox++) {
            const int32_t xs = wx.origin + wx.start, xe = wx.origin + wx.end;
            const int32_t add_from = have_end > xs ? have_end : xs;
            const int32_t count = (ye - ys) * (xe - xs);
            int32_t next_xs = in_w;
            if (ox + 1 < out->w) {
                wx = th_nn_window_at(ox + 1, p->stride.w, p->padding.w, p->filter.w, in_w);
                next_xs = wx.origin + wx.start;
            }
            const int32_t leave_to = xe < next_xs ? xe : next_xs; /* [xs, leave_to) leave */
            have_end = xe;
#if TH_NN_MVE
            avg_div_set(&dv, count);
            if (xe - add_from == 1 && leave_to - xs == 1) {
                acc_out(acc, cs + add_from * ch, cs + xs * ch, ch, &dv, dst);
            } else {
                acc_cols(acc, cs + add_from * ch, xe - add_from, ch, 0);
                acc_out(acc, NULL, NULL, ch, &dv, dst);
                acc_cols(acc, cs + xs * ch, leave_to - xs, ch, 1);
            }
            dst += ch;
#else
            if (xe - add_from == 1 && leave_to - xs == 1) {
                /* one column enters and one leaves (stride 1): one pass over the channels */
                const int16_t *enter = cs + add_from * ch, *leave = cs + xs * ch;
                for (int32_t c = 0; c < ch; c++) {
                    const int32_t a = acc[c] + enter[c];
                    const int32_t v = avg_round(a, count);
                    dst[c] = (int8_t)(v < act_min ? act_min : (v > act_max ? act_max : v));
                    acc[c] = a - leave[c];
                }
                dst += ch;
            } else {
                for (int32_t x = add_from; x < xe; x++) {
                    const int16_t *col = cs + x * ch;
                    for (int32_t c = 0; c < ch; c++) {
                        acc[c] += col[c];
                    }
                }
                for (int32_t c = 0; c < ch; c++) {
                    int32_t v = avg_round(acc[c], count);
                    v = v < act_min ? act_min : (v > act_max ? act_max : v);
                    dst[c] = (int8_t)v;
                }
                dst += ch;
                for (int32_t x = xs; x < leave_to; x++) {
                    const int16_t *col = cs + x * ch;
                    for (int32_t c = 0; c < ch; c++) {
                        acc[c] -= col[c];
                    }
                }
            }
#endif
            if (!last_row && next_xs > upd) {
                const int32_t n = (next_xs - upd) * ch;
                for (int32_t y = ys; y < leave_end; y++) {
                    col_sub(cs + upd * ch, image + (y * in_w + upd) * ch, n);
                }
                for (int32_t y = enter_start; y < ne; y++) {
                    col_add(cs + upd * ch, image + (y * in_w + upd) * ch, n);
                }
                upd = next_xs;
            }
        }
        wy = wn;
    }
}

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* ---- DSP path: int16 lanes for the column and window sums ------------------------------
 *
 * filter.h * filter.w <= 256 (so every window or column sum, |s| <= 128 * 256, fits an
 * int16 lane), any stride, in the order of avg_separable_image. The column sums cs and the
 * channel sums acc are int16, four channels c0..c3 of a group stored as the words (c0, c2),
 * (c1, c3) (what SXTB16 and its ror #8 form give from four input bytes), channels past
 * C & ~3 one halfword each (pidx). At stride 1 a span of interior pixels (one column
 * enters each window and one leaves) runs in one call, four channels at a time: acc +=
 * entering column; the averages; acc -= leaving column; the leaving column's sums moved
 * to the next output row (+ the row that enters, - the row that leaves).
 *
 * The average without a division, for count >= 3 (count <= 256): with n = s + half + 128 *
 * count - [s < 0 and count even] (0 <= n < 256 * count: (s + half) / count truncated as
 * TFLM rounds, half away from zero), floor(n / count) - 128 is TFLM's average, and with
 * M = 2 * ceil(2^31 / count) (even, < 2^31) floor(n * M / 2^32) == floor(n / count): M *
 * count = 2^32 + e with 0 <= e < 2 * count, so the excess n * e / (count * 2^32) stays
 * below 1 / count as n * e < 512 * count^2 <= 2^32. The lane holds x = n - 32768 (an int16:
 * n < 65536), and SMLAWB / SMLAWT with accumulator M / 2 give floor(M * x / 2^16) + M / 2 =
 * floor(M * n / 2^16) (M * 32768 / 2^16 = M / 2 exactly), whose top halfword is the quotient
 * (< 256). The lane constant is half + 128 * count - 32768, plus each lane's -1 of a
 * negative sum (SSAT16 to one bit) when count is even. */

#if TH_NN_DSP_NATIVE
/* -1 in each negative halfword lane of s, 0 in the others (SSAT16 to 1 bit). */
TH_INLINE int32_t avg_sign16(int32_t s)
{
    return (int32_t)__ssat16((uint32_t)s, 1);
}
/* (top of hi, top of lo as the bottom): PKHTB, which gcc does not form from C. */
TH_INLINE int32_t avg_tops(int32_t lo, int32_t hi)
{
    int32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(hi), "r"(lo));
    return r;
}
TH_INLINE int32_t avg_smlawb(int32_t m, int32_t x, int32_t acc)
{
    int32_t r;
    __asm__("smlawb %0, %1, %2, %3" : "=r"(r) : "r"(m), "r"(x), "r"(acc));
    return r;
}
TH_INLINE int32_t avg_smlawt(int32_t m, int32_t x, int32_t acc)
{
    int32_t r;
    __asm__("smlawt %0, %1, %2, %3" : "=r"(r) : "r"(m), "r"(x), "r"(acc));
    return r;
}
TH_INLINE int32_t avg_ssub16(int32_t a, int32_t b)
{
    return (int32_t)__ssub16((uint32_t)a, (uint32_t)b);
}
/* Bytewise unsigned clamp of four quotients (each 0..255) to [lo, hi] (bytes repeated). */
TH_INLINE uint32_t avg_clamp_u8x4(uint32_t q, uint32_t lo, uint32_t hi)
{
    uint32_t r;
    __asm__("usub8 %0, %1, %2\n\tsel %0, %1, %2\n\tusub8 %1, %0, %3\n\tsel %0, %3, %0"
            : "=&r"(r), "+&r"(q)
            : "r"(lo), "r"(hi)
            : "cc");
    return r;
}
#else
TH_INLINE int32_t avg_sign16(int32_t s)
{
    return th_pack16(th_lo16(s) < 0 ? -1 : 0, th_hi16(s) < 0 ? -1 : 0);
}
TH_INLINE int32_t avg_tops(int32_t lo, int32_t hi)
{
    return th_pkhtb(lo, hi);
}
TH_INLINE int32_t avg_smlawb(int32_t m, int32_t x, int32_t acc)
{
    const int64_t p = (int64_t)m * th_lo16(x);
    return (int32_t)((p - (p & 0xFFFF)) / 65536) + acc; /* floor(p / 2^16) + acc */
}
TH_INLINE int32_t avg_smlawt(int32_t m, int32_t x, int32_t acc)
{
    const int64_t p = (int64_t)m * th_hi16(x);
    return (int32_t)((p - (p & 0xFFFF)) / 65536) + acc;
}
TH_INLINE int32_t avg_ssub16(int32_t a, int32_t b)
{
    return th_pack16(th_lo16(a) - th_lo16(b), th_hi16(a) - th_hi16(b));
}
TH_INLINE uint32_t avg_clamp_u8x4(uint32_t q, uint32_t lo, uint32_t hi)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i += 8) {
        uint32_t v = (q >> i) & 0xFFu;
        const uint32_t l = (lo >> i) & 0xFFu, h = (hi >> i) & 0xFFu;
        v = v < l ? l : (v > h ? h : v);
        r |= v << i;
    }
    return r;
}
#endif

/* Halfword index of channel c in a pixel's int16 sums (groups of four as (c0, c2, c1, c3)). */
TH_INLINE int32_t pidx(int32_t c, int32_t c4)
{
    return c < c4 ? (c & ~3) | ((c & 1) << 1) | ((c >> 1) & 1) : c;
}

static int avg_lanes_applies(const th_pool_params *p)
{
    return (int64_t)p->filter.h * p->filter.w <= 256;
}

typedef struct {
    int32_t m;  /* 2 * ceil(2^31 / count) (stride 1, even count: the tie-free M) */
    int32_t mh; /* m / 2 (stride 1, even count: the tie-free A) */
    int32_t a;  /* tie-free: the accumulator for x = s itself (the assembly; no + k) */
    int32_t k;  /* half + 128 * count - 32768 in both halves */
    int32_t count;
    int32_t even;
    uint32_t lo; /* activation bounds + 128, bytes repeated */
    uint32_t hi;
    int32_t clamp;
} avg_s1_div;

/* tie_free (a constant: the stride-1 spans), for an even count c = 2h: constants that round
 * TFLM's ties without the sign lanes, and even = 0. With x = s + k (n = s + h + 128c as
 * above), SMLAWB / SMLAWT give q = floor((M n + B) / 2^32), B = 2^16 A - 2^15 M. M =
 * ceil((2^31 + 2^15) / h) makes e = M c - 2^32 lie in [2^16, 2^16 + c), so the excess (M n
 * + B) / 2^32 - n / c = e (n - n0) / (c 2^32), n0 = -B c / e, has size below 129 e / 2^32 <
 * 1 / c; A, the least with B >= -129 e, puts n0 in (128c, 129c] (that interval of B is e >=
 * 2^16 long): the ties below n0 (n = jc, j <= 128: sums s < 0 at .5) round down, those from
 * 129c (s > 0) up, half away from zero; every other n floors as n / c. Checked exhaustively
 * over s in [-128c, 127c], c = 4..256 (tests/test_kernels_avgpool_span.py). */
/* The accumulator A' that takes the raw sum s in the lane (no + k: 2 instructions a group
 * fewer): SMLAWB gives floor(M s / 2^16) + A', whose top halfword is floor((M s + 2^16 A') /
 * 2^32) (A' an integer), and M s + 2^16 A' = M n + B' for B' = 2^16 A' - M (h + 128c). The
 * quotient is exact for every B' in [-low, -low + 2^16) (even counts, tie-free: low = 129 e,
 * the interval above is e >= 2^16 long; odd counts: low = 0, as B = 0 and B' < 2^16 keeps
 * the excess e n + B' c < 2^32), and A' = ceil((M (h + 128c) - low) / 2^16) puts B' there;
 * |M s / 2^16| < 2^30 and the sum stays in [0, 2^24) (the quotient). Checked with the rest
 * (test_tie_free_constants_are_exact). */
TH_INLINE int32_t avg_s1_raw_acc(uint32_t m, int32_t count, uint32_t low)
{
    const uint64_t t = (uint64_t)m * (uint32_t)(count / 2 + 128 * count) - low;
    return (int32_t)((t + 0xFFFFu) >> 16);
}

TH_INLINE void avg_s1_div_set_t(avg_s1_div *d, int32_t count, int tie_free)
{
    const uint32_t h = (uint32_t)count / 2u;
    const uint32_t k = (uint32_t)(count / 2 + 128 * count - 32768) & 0xFFFFu;
    d->k = (int32_t)(k | (k << 16));
    d->count = count;
    d->even = (count & 1) == 0;
    if (tie_free && d->even) {
        const uint32_t m = (UINT32_C(0x80000000) + UINT32_C(0x8000) + h - 1u) / h;
        const uint32_t e = m * (uint32_t)count; /* mod 2^32: e < 2^17 */
        d->m = (int32_t)m;
        /* A = ceil((2^15 M - 129 e) / 2^16) in 32 bits (129 e > 2^15) */
        d->mh = (int32_t)((m >> 1) - ((129u * e - ((m & 1u) << 15)) >> 16));
        d->a = avg_s1_raw_acc(m, count, 129u * e);
        d->even = 0;
        return;
    }
    /* ceil(2^31 / count) in 32 bits: 2^31 + count - 1 < 2^32 (count <= 256) */
    const uint32_t m2 = ((UINT32_C(0x80000000) + (uint32_t)count - 1u) / (uint32_t)count) * 2u;
    d->m = (int32_t)m2;
    d->mh = (int32_t)(m2 / 2u);
    if (tie_free) {
        /* the spans only (avg_s1_div_set's strided pixels take + k) */
        d->a = avg_s1_raw_acc(m2, count, 0u);
    }
}

static void avg_s1_div_set(avg_s1_div *d, int32_t count)
{
    avg_s1_div_set_t(d, count, 0);
}

/* Division constants held in locals (int8 / int16 stores may alias the struct). */
typedef struct {
    int32_t m, mh, k, half_bias, even;
    int32_t even_mask; /* all ones when count is even */
    uint32_t lo, hi;
    int32_t clamp;
} s1_consts;

TH_INLINE s1_consts s1_consts_of(const avg_s1_div *dp)
{
    const s1_consts c = {dp->m,     dp->mh,           dp->k,  dp->count / 2 + 128 * dp->count,
                         dp->even,  -(int32_t)dp->even, dp->lo, dp->hi,
                         dp->clamp};
    return c;
}

/* The four averages of channel sums a = (c0, c2), b = (c1, c3) as int8 bytes c0..c3 (an
 * even count's rounding needs the lanes' signs). */
TH_INLINE int32_t s1_avg4_t(int32_t a, int32_t b, const s1_consts *c, int even)
{
    int32_t xa = th_sadd16(a, c->k), xb = th_sadd16(b, c->k);
    if (even) {
        xa = th_sadd16(xa, avg_sign16(a));
        xb = th_sadd16(xb, avg_sign16(b));
    }
    const int32_t q02 = avg_tops(avg_smlawb(c->m, xa, c->mh), avg_smlawt(c->m, xa, c->mh));
    const int32_t q13 = avg_tops(avg_smlawb(c->m, xb, c->mh), avg_smlawt(c->m, xb, c->mh));
    uint32_t q = (uint32_t)q02 | ((uint32_t)q13 << 8);
    if (c->clamp) {
        q = avg_clamp_u8x4(q, c->lo, c->hi);
    }
    return (int32_t)(q ^ 0x80808080u);
}

TH_INLINE int32_t s1_avg4(int32_t a, int32_t b, const s1_consts *c)
{
    return c->even ? s1_avg4_t(a, b, c, 1) : s1_avg4_t(a, b, c, 0);
}

/* One channel's average of the sum s (count >= 3, as s1_avg4). */
TH_INLINE int8_t s1_avg1(int32_t s, const s1_consts *c)
{
    /* x = n - 32768 in SMLAWB's low halfword, as the lanes (either set of constants) */
    const int32_t x = s + c->half_bias - 32768 - (c->even & (s < 0));
    int32_t q = avg_smlawb(c->m, x, c->mh) >> 16;
    if (c->clamp) {
        q = th_clamp(q, (int32_t)(c->lo & 0xFFu), (int32_t)(c->hi & 0xFFu));
    }
    return (int8_t)(q - 128);
}

/* acc += (sub: -=) the column sums of columns [x0, x1), two halfwords at a time (acc and cs
 * share the layout). */
static void s1_cols_acc(int16_t *acc, const int16_t *cs, int32_t x0, int32_t x1, int32_t ch,
                        int sub)
{
    for (int32_t x = x0; x < x1; x++) {
        const int16_t *col = cs + x * ch;
        int32_t k = 0;
        for (; k + 2 <= ch; k += 2) {
            const int32_t a = th_read_s32(acc + k), v = th_read_s32(col + k);
            th_write_s32(acc + k, sub ? avg_ssub16(a, v) : th_sadd16(a, v));
        }
        if (k < ch) {
            acc[k] = (int16_t)(sub ? acc[k] - col[k] : acc[k] + col[k]);
        }
    }
}

/* Channels k, k + 1 past C & ~3 over a span (pointers at channel k; their sums are the
 * halfwords of one word, not always word-aligned): as s1_span_t's groups, two lanes. */
TH_INLINE void s1_pair(int16_t *acc, int16_t *leave, const int16_t *enter, const int8_t *e,
                       const int8_t *l, int32_t n, int32_t ch, const s1_consts *c, int8_t *dst,
                       int update, int even)
{
    int32_t a = th_read_s32(acc);
    for (int32_t i = 0, o = 0; i < n; i++, o += ch) {
        a = th_sadd16(a, th_read_s32(enter + o));
        int32_t x = th_sadd16(a, c->k);
        if (even) {
            x = th_sadd16(x, avg_sign16(a));
        }
        const uint32_t q =
            (uint32_t)avg_tops(avg_smlawb(c->m, x, c->mh), avg_smlawt(c->m, x, c->mh));
        uint32_t b = q | (q >> 8); /* the quotients in bytes 0 and 1 */
        if (c->clamp) {
            b = avg_clamp_u8x4(b, c->lo, c->hi);
        }
        th_write_s16(dst + o, (int16_t)(uint16_t)((b ^ 0x8080u) & 0xFFFFu));
        const int32_t lv = th_read_s32(leave + o);
        a = avg_ssub16(a, lv);
        if (update) {
            th_write_s32(leave + o, avg_ssub16(th_sadd16(lv, th_pkhbt(e[o], e[o + 1])),
                                               th_pkhbt(l[o], l[o + 1])));
        }
    }
    th_write_s32(acc, a);
}

/* The channels past C & ~3 of s1_span_t, channel by channel over the span (enter, leave,
 * e, l and dst at the span's first pixel). */
TH_INLINE void s1_tails(int16_t *acc, int16_t *leave, const int16_t *enter, const int8_t *e,
                        const int8_t *l, int32_t n, int32_t ch, const s1_consts *cp,
                        int8_t *dst, int update)
{
    const s1_consts c = *cp;
    int32_t k = ch & ~3;
    if (ch - k >= 2) {
        /* two channels in the halfwords of one word (e, l: NULL without update) */
        const int8_t *ek = update ? e + k : e, *lk = update ? l + k : l;
        if (c.even) {
            s1_pair(acc + k, leave + k, enter + k, ek, lk, n, ch, &c, dst + k, update, 1);
        } else {
            s1_pair(acc + k, leave + k, enter + k, ek, lk, n, ch, &c, dst + k, update, 0);
        }
        k += 2;
    }
    for (; k < ch; k++) {
        int32_t a = acc[k];
        for (int32_t i = 0, o = k; i < n; i++, o += ch) {
            a += enter[o];
            dst[o] = s1_avg1(a, &c);
            a -= leave[o];
            if (update) {
                leave[o] = (int16_t)(leave[o] + e[o] - l[o]);
            }
        }
        acc[k] = (int16_t)a;
    }
}

/* n interior pixels from column x0 (one column enters each window, w = the filter width,
 * and one leaves; the count dp->count >= 3 the same for all): acc += entering column; the
 * averages; acc -= leaving column; with update, the leaving column then moved to the next
 * row (+ input row xe, - input row xl, both at the pixel's first column). update and even
 * (the count's parity: odd counts need no sign lanes) are constants of each copy. */
TH_INLINE void s1_span_t(int16_t *acc, int16_t *cs, int32_t x0, int32_t w, int32_t n,
                         const int8_t *xe, const int8_t *xl, int32_t ch, const s1_consts *cp,
                         int8_t *dst, int by_channel, int update, int even)
{
    const s1_consts c = *cp;
    const int32_t c4 = ch & ~3;
    int16_t *leave = cs + x0 * ch;
    const int16_t *enter = leave + (w - 1) * ch;
    const int8_t *e = update ? xe + x0 * ch : xe;
    const int8_t *l = update ? xl + x0 * ch : xl;
    if (by_channel) {
        /* Output apart from the input: a group of four channels (then each other channel)
         * over the whole span, its sums in registers. */
        for (int32_t k = 0; k < c4; k += 4) {
            int32_t a = th_read_s32(acc + k), b = th_read_s32(acc + k + 2);
            for (int32_t i = 0, o = k; i < n; i++, o += ch) {
                a = th_sadd16(a, th_read_s32(enter + o));
                b = th_sadd16(b, th_read_s32(enter + o + 2));
                th_write_s32(dst + o, s1_avg4_t(a, b, &c, even));
                const int32_t la = th_read_s32(leave + o), lb = th_read_s32(leave + o + 2);
                a = avg_ssub16(a, la);
                b = avg_ssub16(b, lb);
                if (update) {
                    const int32_t ev = th_read_s32(e + o), lv = th_read_s32(l + o);
                    th_write_s32(leave + o, avg_ssub16(th_sxtab16(la, ev), th_sxtb16(lv)));
                    th_write_s32(leave + o + 2,
                                 avg_ssub16(th_sxtab16_ror8(lb, ev), th_sxtb16_ror8(lv)));
                }
            }
            th_write_s32(acc + k, a);
            th_write_s32(acc + k + 2, b);
        }
    } else {
        /* In place: pixel by pixel, each group's output, its sums and its leaving column's
         * move in one pass (pixel q's output never overlaps what q or a later pixel reads,
         * th_nn.h (c)), then the other channels. */
        for (int32_t i = 0; i < n; i++) {
            for (int32_t k = 0; k < c4; k += 4) {
                const int32_t a = th_sadd16(th_read_s32(acc + k), th_read_s32(enter + k));
                const int32_t b =
                    th_sadd16(th_read_s32(acc + k + 2), th_read_s32(enter + k + 2));
                th_write_s32(dst + k, s1_avg4_t(a, b, &c, even));
                const int32_t la = th_read_s32(leave + k), lb = th_read_s32(leave + k + 2);
                th_write_s32(acc + k, avg_ssub16(a, la));
                th_write_s32(acc + k + 2, avg_ssub16(b, lb));
                if (update) {
                    const int32_t ev = th_read_s32(e + k), lv = th_read_s32(l + k);
                    th_write_s32(leave + k, avg_ssub16(th_sxtab16(la, ev), th_sxtb16(lv)));
                    th_write_s32(leave + k + 2,
                                 avg_ssub16(th_sxtab16_ror8(lb, ev), th_sxtb16_ror8(lv)));
                }
            }
            for (int32_t k = c4; k < ch; k++) {
                const int32_t a = acc[k] + enter[k];
                dst[k] = s1_avg1(a, &c);
                acc[k] = (int16_t)(a - leave[k]);
                if (update) {
                    leave[k] = (int16_t)(leave[k] + e[k] - l[k]);
                }
            }
            dst += ch;
            leave += ch;
            enter += ch;
            e += update ? ch : 0;
            l += update ? ch : 0;
        }
        return;
    }
    s1_tails(acc, leave, enter, e, l, n, ch, &c, dst, update);
}

#if TH_NN_DSP_NATIVE
/* s1_span_t's update loop in assembly for groups of four channels (the C loop keeps 14 values
 * live and spills: ~53 instructions a group; here 29 for any count), pixel by pixel and in
 * each pixel group by group, the order of the in-place loop (so it serves both): acc +=
 * entering column; acc - leaving column stored; the averages (s1_avg4_t without its + k:
 * SMLAWB / SMLAWT of the raw sums by the tie-free m with accumulator avg_s1_raw_acc, PKHTB,
 * the bytes joined and flipped to int8; no clamp); the leaving column + row e - row l
 * stored back (the row walker s1_row_w below, one call per row). These
 * arguments: s1_move_w's (the columns right of a row's last window; acc, enter,
 * dst, m and a unused); offsets of the fields are used by the assembly. */
typedef struct {
    int16_t *acc;         /* 0 */
    const int16_t *enter; /* 4: the first pixel's entering column */
    int16_t *leave;       /* 8: its leaving column */
    const int8_t *e;      /* 12: the entering row at the first pixel */
    const int8_t *l;      /* 16: the leaving row there */
    int8_t *dst;          /* 20 */
    int32_t n;            /* 24: pixels, >= 1 */
    int32_t c4;           /* 28: channels in groups of four, >= 4 */
    int32_t tail;         /* 32: C - c4 (the step past a pixel's groups) */
    int32_t m;            /* 36 */
    int32_t a;            /* 40: avg_s1_raw_acc (the warm runs: the drift start) */
} s1_asm_args;

/* acc += entering column, acc - leaving column stored; W: the columns word-aligned (LDRD /
 * STRD; an odd C's columns are C + 1 halfwords apart for it, avg_lanes_image: LDR / STR
 * pairs for unaligned columns cost 4 instructions a group more). */
#define TH_S1_SLIDE(LOAD_ENTER, LOAD_LEAVE)                                               \
    LOAD_ENTER                                                                            \
    "sadd16 r10, r10, r12\n\t"                                                            \
    "sadd16 r11, r11, lr\n\t"                                                             \
    LOAD_LEAVE                                                                            \
    "ssub16 r12, r10, r12\n\t"                                                            \
    "ssub16 lr, r11, lr\n\t"                                                              \
    "strd r12, lr, [r0], #8\n\t"
#define TH_S1_ENTER_W "ldrd r12, lr, [r1], #8\n\t"
#define TH_S1_LEAVE_W "ldrd r12, lr, [r2]\n\t"
/* the keep loop (no move): the leaving column's pointer stepped by its load */
#define TH_S1_ENTER_K TH_S1_ENTER_W
#define TH_S1_LEAVE_K "ldrd r12, lr, [r2], #8\n\t"
#define TH_S1_DIV                                                                         \
    "smlawb r12, r7, r10, r8\n\t"                                                         \
    "smlawt r10, r7, r10, r8\n\t"                                                         \
    "pkhtb r10, r10, r12, asr #16\n\t"                                                    \
    "smlawb r12, r7, r11, r8\n\t"                                                         \
    "smlawt r11, r7, r11, r8\n\t"                                                         \
    "pkhtb r11, r11, r12, asr #16\n\t"                                                    \
    "orr r10, r10, r11, lsl #8\n\t"                                                       \
    "eor r10, r10, #0x80808080\n\t"                                                       \
    "str r10, [r5], #4\n\t"
#define TH_S1_UPDATE(RELOAD, STORE)                                                       \
    RELOAD                                                                                \
    "ldr r12, [r3], #4\n\t"                                                               \
    "ldr lr, [r4], #4\n\t"                                                                \
    "sxtab16 r10, r10, r12\n\t"                                                           \
    "sxtab16 r11, r11, r12, ror #8\n\t"                                                   \
    "sxtb16 r12, lr\n\t"                                                                  \
    "ssub16 r10, r10, r12\n\t"                                                            \
    "sxtb16 r12, lr, ror #8\n\t"                                                          \
    "ssub16 r11, r11, r12\n\t"                                                            \
    STORE
#define TH_S1_RELOAD_W "ldrd r10, r11, [r2]\n\t"
#define TH_S1_STORE_W "strd r10, r11, [r2], #8\n\t"
#define TH_S1_SKIP "add r2, r2, #8\n\t" /* no update: past the leaving column's group */
/* Rows where one row enters and none leaves (SAME's top rows) or the reverse (its bottom
 * rows, output apart from the input): the leaving column + row e, or - row l. */
#define TH_S1_ENTER1(RELOAD, STORE)                                                       \
    RELOAD                                                                                \
    "ldr r12, [r3], #4\n\t"                                                               \
    "sxtab16 r10, r10, r12\n\t"                                                           \
    "sxtab16 r11, r11, r12, ror #8\n\t"                                                   \
    STORE
/* The average of one channel's sum (r10: SMLAWB by the reciprocal r7 and r8, the quotient's
 * byte flipped to int8) stored at r5; of two channels' sums (the halfwords of r10, PKHTB,
 * the quotients joined in bytes 0 and 1). */
#define TH_S1_AVG1                                                                        \
    "smlawb r11, r7, r10, r8\n\t"                                                         \
    "lsr r11, r11, #16\n\t"                                                               \
    "eor r11, r11, #0x80\n\t"                                                             \
    "strb r11, [r5], #1\n\t"
#define TH_S1_AVG2                                                                        \
    "smlawb r11, r7, r10, r8\n\t"                                                         \
    "smlawt r10, r7, r10, r8\n\t"                                                         \
    "pkhtb r10, r10, r11, asr #16\n\t"                                                    \
    "orr r10, r10, r10, lsr #8\n\t"                                                       \
    "eor r10, r10, #0x80808080\n\t"                                                       \
    "strh r10, [r5], #2\n\t"
/* One channel past C & ~3 (halfword sums, natural order): acc += entering column, acc -
 * leaving column stored; the average (SMLAWB of the raw sum, the quotient's byte flipped
 * to int8); then (T_MOVE) the leaving column + row e - row l, or (T_SKIP) past it. ~17
 * instructions a channel (the C loop took ~46). */
#define TH_S1_TAIL(UPDATE1)                                                               \
    "ldrsh r10, [r0]\n\t"                                                                 \
    "ldrsh r12, [r1], #4\n\t"                                                             \
    "add r10, r10, r12\n\t"                                                               \
    "ldrsh r12, [r2]\n\t"                                                                 \
    "sub r11, r10, r12\n\t"                                                               \
    "strh r11, [r0], #2\n\t"                                                              \
    TH_S1_AVG1                                                                            \
    UPDATE1
/* the leaving column's channel + row e - row l (r12: its sum), pointers past the channel
 * (S: the column-sum step, "2", or "4" for the row walker: the channel then the layout's
 * pad halfword, as it is the last of an odd C, avg_lanes_image) */
#define TH_S1_T_MOVE_S(S)                                                                 \
    "ldrsb r11, [r3], #1\n\t"                                                             \
    "add r12, r12, r11\n\t"                                                               \
    "ldrsb r11, [r4], #1\n\t"                                                             \
    "sub r12, r12, r11\n\t"                                                               \
    "strh r12, [r2], #" S "\n\t"
#define TH_S1_T_MOVE TH_S1_T_MOVE_S("4")
#define TH_S1_T_SKIP "add r2, r2, #4\n\t"
#define TH_S1_T_ENTER                                                                     \
    "ldrsb r11, [r3], #1\n\t"                                                             \
    "add r12, r12, r11\n\t"                                                               \
    "strh r12, [r2], #4\n\t"
/* Two channels past C & ~3 as the two halfwords of one word (not always word-aligned:
 * LDR / STR), as a group's half: acc += entering column, acc - leaving column stored; the
 * averages (SMLAWB / SMLAWT of the raw sums, PKHTB, the quotients joined in bytes 0 and 1
 * and flipped to int8); then (P_MOVE) the leaving column + row e - row l, or (P_SKIP) past
 * it. 20 instructions for the two (one at a time: ~40). Sets no NZCV flag (TH_S1_ROW_LOOP branches on
 * flags across it). */
#define TH_S1_PAIR(UPDATE2)                                                               \
    "ldr r10, [r0]\n\t"                                                                   \
    "ldr r12, [r1], #4\n\t"                                                               \
    "sadd16 r10, r10, r12\n\t"                                                            \
    "ldr r12, [r2]\n\t"                                                                   \
    "ssub16 r11, r10, r12\n\t"                                                            \
    "str r11, [r0], #4\n\t"                                                               \
    TH_S1_AVG2 UPDATE2
/* two bytes b0 b1 -> (b0, b1) in halfword lanes: LDRH, then b1 copied to byte 2 for SXTB16 */
#define TH_S1_P_MOVE                                                                      \
    "ldrh r10, [r3], #2\n\t"                                                              \
    "orr r10, r10, r10, lsl #8\n\t"                                                       \
    "sxtab16 r12, r12, r10\n\t"                                                           \
    "ldrh r10, [r4], #2\n\t"                                                              \
    "orr r10, r10, r10, lsl #8\n\t"                                                       \
    "sxtb16 r10, r10\n\t"                                                                 \
    "ssub16 r12, r12, r10\n\t"                                                            \
    "str r12, [r2], #4\n\t"
#define TH_S1_P_SKIP "add r2, r2, #4\n\t"
#define TH_S1_P_ENTER                                                                     \
    "ldrh r10, [r3], #2\n\t"                                                              \
    "orr r10, r10, r10, lsl #8\n\t"                                                       \
    "sxtab16 r12, r12, r10\n\t"                                                           \
    "str r12, [r2], #4\n\t"
/* The fused order (output apart from the input, avg_lanes_image): the walk of output row y
 * moves each column from row y - 1's window rows to row y's at the moment it enters (UPD:
 * + row e and / or - row l, the rows at r3 / r4 loaded once), stores it back, adds it, and
 * subtracts the leaving column, moved when it entered (or before the walk); no column is
 * loaded twice: 28 instructions a group with both rows (the split order: 29, its leaving
 * column loaded again for its move). r1: the entering column (moved in place). Sets no
 * NZCV flag. */
#define TH_S1_F_GROUP(UPD)                                                                \
    "ldrd r10, r11, [r1]\n\t" UPD "strd r10, r11, [r1], #8\n\t"                           \
    "ldrd r12, lr, [r0]\n\t"                                                              \
    "sadd16 r10, r10, r12\n\t"                                                            \
    "sadd16 r11, r11, lr\n\t"                                                             \
    "ldrd r12, lr, [r2], #8\n\t"                                                          \
    "ssub16 r12, r10, r12\n\t"                                                            \
    "ssub16 lr, r11, lr\n\t"                                                              \
    "strd r12, lr, [r0], #8\n\t"
#define TH_S1_F_E                                                                         \
    "ldr r12, [r3], #4\n\t"                                                               \
    "sxtab16 r10, r10, r12\n\t"                                                           \
    "sxtab16 r11, r11, r12, ror #8\n\t"
#define TH_S1_F_L                                                                         \
    "ldr r12, [r4], #4\n\t"                                                               \
    "sxtb16 lr, r12\n\t"                                                                  \
    "ssub16 r10, r10, lr\n\t"                                                             \
    "sxtb16 lr, r12, ror #8\n\t"                                                          \
    "ssub16 r11, r11, lr\n\t"
/* - row l as + ~l (MVN, then SXTAB16: -l - 1 a lane, one instruction fewer): the column
 * drifts by -1; mode 7 only (no padding column in any window, avg_lanes_image), where
 * every window holds fw moved columns, so the drift is cancelled once a row in acc's
 * start (s1_row); the lanes wrap modulo 2^16 like the sums, exact where the window's sum
 * is divided. Group lanes only (the pair and tail channels move exactly). */
#define TH_S1_F_LN                                                                        \
    "ldr r12, [r4], #4\n\t"                                                               \
    "mvn r12, r12\n\t"                                                                    \
    "sxtab16 r10, r10, r12\n\t"                                                           \
    "sxtab16 r11, r11, r12, ror #8\n\t"
/* Two channels past C & ~3 in the fused order (as TH_S1_PAIR and TH_S1_P_MOVE, the move on
 * the entering column first; UPD on r10). */
#define TH_S1_F_PAIR(UPD)                                                                 \
    "ldr r10, [r1]\n\t" UPD "str r10, [r1], #4\n\t"                                       \
    "ldr r12, [r0]\n\t"                                                                   \
    "sadd16 r10, r10, r12\n\t"                                                            \
    "ldr r12, [r2], #4\n\t"                                                               \
    "ssub16 r11, r10, r12\n\t"                                                            \
    "str r11, [r0], #4\n\t"                                                               \
    TH_S1_AVG2
#define TH_S1_FP_E                                                                        \
    "ldrh r12, [r3], #2\n\t"                                                              \
    "orr r12, r12, r12, lsl #8\n\t"                                                       \
    "sxtab16 r10, r10, r12\n\t"
#define TH_S1_FP_L                                                                        \
    "ldrh r12, [r4], #2\n\t"                                                              \
    "orr r12, r12, r12, lsl #8\n\t"                                                       \
    "sxtb16 r12, r12\n\t"                                                                 \
    "ssub16 r10, r10, r12\n\t"
/* The last channel of an odd C in the fused order (as TH_S1_TAIL and TH_S1_T_MOVE; UPD on
 * r11; the column pointers step past the layout's pad halfword). */
#define TH_S1_F_TAIL(UPD)                                                                 \
    "ldrsh r11, [r1]\n\t" UPD "strh r11, [r1], #4\n\t"                                    \
    "ldrsh r10, [r0]\n\t"                                                                 \
    "add r10, r10, r11\n\t"                                                               \
    "ldrsh r12, [r2], #4\n\t"                                                             \
    "sub r11, r10, r12\n\t"                                                               \
    "strh r11, [r0], #2\n\t"                                                              \
    TH_S1_AVG1
#define TH_S1_FT_E                                                                        \
    "ldrsb r12, [r3], #1\n\t"                                                             \
    "add r11, r11, r12\n\t"
#define TH_S1_FT_L                                                                        \
    "ldrsb r12, [r4], #1\n\t"                                                             \
    "sub r11, r11, r12\n\t"
/* The fused segment loops (seg up 4: rows e and l, 5: row e, 6: row l), TH_S1_ROW_LOOP's
 * frame. Groups two at a time (one TEQ / BNE for both: -1 instruction a group); an odd
 * count of groups enters each pixel at the second (r9: the entry, B0 or B1; MOV PC: one
 * instruction more a pixel than BNE). The table picks the entry (s1_seg.up: B2 for an even
 * count, B for an odd one), so a segment's start costs one ADR (two when odd), not the
 * seven that read the parity from the frame. */
#define TH_S1_F_ROW_LOOP(G, PR, T1, B, P, T)                                             \
    TH_S1_F_ROW_LOOP_X("", TH_S1_F_GROUP(G), TH_S1_F_PAIR(PR), TH_S1_F_TAIL(T1), B, P, T)
/* ENTRY: run at the segment's start (either parity); GROUP / PAIR / TAIL: the whole steps */
#define TH_S1_F_ROW_LOOP_X(ENTRY, GROUP, PAIR, TAIL, B, P, T)                             \
    B ":\n\t" ENTRY                                                                       \
    "adr r9, " B "1f\n\t"                                                                 \
    "b " B "1f\n\t"                                                                       \
    B "2:\n\t" ENTRY                                                                      \
    "adr r9, " B "0f\n\t"                                                                 \
    B "0:\n\t" GROUP TH_S1_DIV                                                            \
    B "1:\n\t" GROUP TH_S1_DIV                                                            \
        "teq r0, r6\n\t"                                                                  \
        "bne " B "0b\n\t"                                                                 \
        "bcc " P "f\n\t" PAIR P ":\n\t"                                                  \
        "bvc " T "f\n\t" TAIL T ":\n\t"                                                  \
        "ldrd r0, r11, [sp, #0]\n\t"                                                      \
        "teq r5, r11\n\t"                                                                 \
        "it ne\n\t"                                                                      \
        "movne pc, r9\n\t"
/* The fused order's pixels whose leaving column is SAME's left padding (up 9, both rows
 * moving, s1_row): nothing leaves, so the sum is acc's next value (no LDRD / SSUB16 of a
 * zero column: 3 instructions a group fewer, 2 a pair or tail channel). r2 (the leaving
 * column, not read) holds r1 - r2 over the segment (the two step together in the fused
 * loops), set back from r1 at its end: one SUB each way. */
#define TH_S1_FL_GROUP(UPD)                                                               \
    "ldrd r10, r11, [r1]\n\t" UPD "strd r10, r11, [r1], #8\n\t"                           \
    "ldrd r12, lr, [r0]\n\t"                                                              \
    "sadd16 r10, r10, r12\n\t"                                                            \
    "sadd16 r11, r11, lr\n\t"                                                             \
    "strd r10, r11, [r0], #8\n\t"
#define TH_S1_FL_PAIR(UPD)                                                                \
    "ldr r10, [r1]\n\t" UPD "str r10, [r1], #4\n\t"                                       \
    "ldr r12, [r0]\n\t"                                                                   \
    "sadd16 r10, r10, r12\n\t"                                                            \
    "str r10, [r0], #4\n\t" TH_S1_AVG2
#define TH_S1_FL_TAIL(UPD)                                                                \
    "ldrsh r11, [r1]\n\t" UPD "strh r11, [r1], #4\n\t"                                    \
    "ldrsh r10, [r0]\n\t"                                                                 \
    "add r10, r10, r11\n\t"                                                               \
    "strh r10, [r0], #2\n\t" TH_S1_AVG1
#define TH_S1_FL_ROW_LOOP                                                                 \
    TH_S1_F_ROW_LOOP_X("sub r2, r1, r2\n\t", TH_S1_FL_GROUP(TH_S1_F_E TH_S1_F_L),         \
                       TH_S1_FL_PAIR(TH_S1_FP_E TH_S1_FP_L),                              \
                       TH_S1_FL_TAIL(TH_S1_FT_E TH_S1_FT_L), "34", "35", "36")            \
    "sub r2, r1, r2\n\t"
/* Windows two columns wide, both rows moving (up 10: mode 4 where fw == 2, s1_fused_u): the
 * window is acc (the column left of the entering one, exact: fw == 2 never drifts, mode 7
 * is not taken) + the entering column, and the entering column, moved, is acc's next value
 * (stored there too): no leaving column loaded or subtracted, 23 instructions a group where
 * TH_S1_F_GROUP's acc + entering - leaving took 26 (mode 4; 25 with mode 7's drift). r2 is
 * not read: the entry keeps r1 - r2 in the frame's free word [sp, #8], the exit sets r2
 * back from r1 (the leaving column as the other loops step it, for the segment after). */
#define TH_S1_W2_GROUP(UPD)                                                               \
    "ldrd r10, r11, [r1]\n\t" UPD "strd r10, r11, [r1], #8\n\t"                           \
    "ldrd r12, lr, [r0]\n\t"                                                              \
    "strd r10, r11, [r0], #8\n\t"                                                         \
    "sadd16 r10, r10, r12\n\t"                                                            \
    "sadd16 r11, r11, lr\n\t"
#define TH_S1_W2_PAIR(UPD)                                                                \
    "ldr r10, [r1]\n\t" UPD "str r10, [r1], #4\n\t"                                       \
    "ldr r12, [r0]\n\t"                                                                   \
    "str r10, [r0], #4\n\t"                                                               \
    "sadd16 r10, r10, r12\n\t" TH_S1_AVG2
#define TH_S1_W2_TAIL(UPD)                                                                \
    "ldrsh r11, [r1]\n\t" UPD "strh r11, [r1], #4\n\t"                                    \
    "ldrsh r10, [r0]\n\t"                                                                 \
    "strh r11, [r0], #2\n\t"                                                              \
    "add r10, r10, r11\n\t" TH_S1_AVG1
#define TH_S1_W2_ROW_LOOP                                                                 \
    TH_S1_F_ROW_LOOP_X("sub r12, r1, r2\n\tstr r12, [sp, #8]\n\t",                        \
                       TH_S1_W2_GROUP(TH_S1_F_E TH_S1_F_L),                               \
                       TH_S1_W2_PAIR(TH_S1_FP_E TH_S1_FP_L),                              \
                       TH_S1_W2_TAIL(TH_S1_FT_E TH_S1_FT_L), "38", "39", "40")            \
    "ldr r12, [sp, #8]\n\t"                                                               \
    "sub r2, r1, r12\n\t"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define TH_S1_MOVE(AL) TH_S1_UPDATE(TH_S1_RELOAD_##AL, TH_S1_STORE_##AL)
/* A run's arguments from s1_asm_args (r0): r2, r3 / r4, r5, r6 / r7 (see the runs below),
 * and r1 the odd-C pad's bytes after a column's channels. */
#define TH_S1_RUN_ARGS                                                                    \
    "ldr r2, [r0, #8]\n\t"                                                                \
    "ldrd r3, r4, [r0, #12]\n\t"                                                          \
    "ldr r5, [r0, #24]\n\t"                                                               \
    "ldrd r6, r7, [r0, #28]\n\t"                                                          \
    "and r1, r7, #1\n\t"                                                                  \
    "lsl r1, r1, #1\n\t" /* odd C: the pad's 2 bytes */
/* Column sums moved to the next row only (the columns right of the last pixel's window):
 * per column (n of them from leave, e, l), its groups and then its other channels (one
 * halfword each) + row e - row l. */
#define TH_S1_MOVE_RUN(NAME, AL)                                                          \
    static void __attribute__((naked, noinline)) NAME(const s1_asm_args *a)               \
    {                                                                                     \
        __asm__ volatile("push {r4-r11, lr}\n\t"                                          \
                         TH_S1_RUN_ARGS                                                   \
                         "1:\n\t"                                                         \
                         "add r8, r3, r6\n\t"                                             \
                         "2:\n\t" TH_S1_MOVE(AL) "cmp r3, r8\n\t"                        \
                         "bne 2b\n\t"                                                     \
                         "movs r9, r7\n\t"                                                \
                         "beq 5f\n\t"                                                     \
                         "4:\n\t"                                                         \
                         "ldrsh r12, [r2]\n\t" TH_S1_T_MOVE_S("2") "subs r9, r9, #1\n\t" \
                         "bne 4b\n\t"                                                     \
                         "add r2, r2, r1\n\t" /* past the pad */                          \
                         "5:\n\t"                                                         \
                         "subs r5, r5, #1\n\t"                                            \
                         "bne 1b\n\t"                                                     \
                         "pop {r4-r11, pc}\n\t");                                         \
    }
TH_S1_MOVE_RUN(s1_move_w, W)
/* A row's first window columns (n >= 1 of them from leave, e, l) summed into acc (its
 * layout a column's without the pad): the first column's groups + the drift start (a's
 * field a, both halfwords; s1_row) and its other channels stored, so acc needs no clearing
 * before (a memset call, ~80 instructions a row at C = 49), then per column its groups and
 * its other channels added; G / T first load each (and in the fused order with both rows
 * moving, s1_row mode 4 or 7, move it + row e - row l and store it back: 16 instructions a
 * group where s1_move_w and a C sum took ~22 and a call). The other channels (C - c4 <=
 * 3): P two at once (the halfwords of one word, LDR / STR, not always word-aligned; 10 or
 * 12 instructions where T twice in a loop took 24 or 28), then T one (no loop: at most
 * one is left), r11 the value either way. */
#define TH_S1_WARM_RUN(NAME, G, T, P)                                                     \
static void __attribute__((naked, noinline)) NAME(const s1_asm_args *a)                \
{                                                                                      \
    __asm__ volatile("push {r4-r11, lr}\n\t"                                           \
                     "ldr r9, [r0, #0]\n\t"                                            \
                     TH_S1_RUN_ARGS                                                    \
                     "add r8, r9, r6, lsl #1\n\t" /* acc's groups' end */              \
                     "ldr r6, [r0, #40]\n\t" /* the drift start */                     \
                     "mov r0, r9\n\t"                                                  \
                     "3:\n\t"                                                          \
                     G                                                                 \
                     "sadd16 r10, r10, r6\n\t"                                         \
                     "sadd16 r11, r11, r6\n\t"                                         \
                     "strd r10, r11, [r0], #8\n\t"                                     \
                     "cmp r0, r8\n\t"                                                  \
                     "bne 3b\n\t"                                                      \
                     "cbz r7, 6f\n\t"                                                  \
                     "cmp r7, #2\n\t" /* NZCV kept by P: lt 1, eq 2, gt 3 */            \
                     "blt 71f\n\t"                                                     \
                     P                                                                 \
                     "str r11, [r0], #4\n\t"                                           \
                     "beq 72f\n\t"                                                     \
                     "71:\n\t"                                                         \
                     T                                                                 \
                     "strh r11, [r0], #2\n\t"                                          \
                     "72:\n\t"                                                         \
                     "add r2, r2, r1\n\t" /* past the pad */                           \
                     "6:\n\t"                                                          \
                     "subs r5, r5, #1\n\t"                                             \
                     "beq 9f\n\t"                                                      \
                     "1:\n\t"                                                          \
                     "mov r0, r9\n\t"                                                  \
                     "2:\n\t"                                                          \
                     G                                                                 \
                     "ldrd r12, lr, [r0]\n\t"                                          \
                     "sadd16 r10, r10, r12\n\t"                                        \
                     "sadd16 r11, r11, lr\n\t"                                         \
                     "strd r10, r11, [r0], #8\n\t"                                     \
                     "cmp r0, r8\n\t"                                                  \
                     "bne 2b\n\t"                                                      \
                     "cbz r7, 5f\n\t"                                                  \
                     "cmp r7, #2\n\t"                                                  \
                     "blt 41f\n\t"                                                     \
                     P                                                                 \
                     "ldr r12, [r0]\n\t"                                               \
                     "sadd16 r11, r11, r12\n\t"                                        \
                     "str r11, [r0], #4\n\t"                                           \
                     "beq 42f\n\t"                                                     \
                     "41:\n\t"                                                         \
                     T                                                                 \
                     "ldrsh r12, [r0]\n\t"                                             \
                     "add r12, r12, r11\n\t"                                           \
                     "strh r12, [r0], #2\n\t"                                          \
                     "42:\n\t"                                                         \
                     "add r2, r2, r1\n\t" /* past the pad */                           \
                     "5:\n\t"                                                          \
                     "subs r5, r5, #1\n\t"                                             \
                     "bne 1b\n\t"                                                      \
                     "9:\n\t"                                                          \
                     "pop {r4-r11, pc}\n\t");                                          \
}
/* a group's column: moved (+ row e - row l, or + ~row l: TH_S1_F_LN) and stored, or only
 * loaded (s1_sum_w: acc + the columns' sums, the C loop took ~10 instructions a group, 7
 * here); the same for one channel */
#define TH_S1_W_MOVE(L)                                                                   \
    "ldrd r10, r11, [r2]\n\t" TH_S1_F_E L "strd r10, r11, [r2], #8\n\t"
#define TH_S1_W_MOVE1 "ldrsh r11, [r2]\n\t" TH_S1_FT_E TH_S1_FT_L "strh r11, [r2], #2\n\t"
/* two channels' column (natural order) + row e - row l, exact (as TH_S1_P_MOVE, in r11) */
#define TH_S1_W_MOVE2                                                                     \
    "ldr r11, [r2]\n\t"                                                                   \
    "ldrh r12, [r3], #2\n\t"                                                              \
    "orr r12, r12, r12, lsl #8\n\t"                                                       \
    "sxtab16 r11, r11, r12\n\t"                                                           \
    "ldrh r12, [r4], #2\n\t"                                                              \
    "orr r12, r12, r12, lsl #8\n\t"                                                       \
    "sxtb16 r12, r12\n\t"                                                                 \
    "ssub16 r11, r11, r12\n\t"                                                            \
    "str r11, [r2], #4\n\t"
TH_S1_WARM_RUN(s1_warm_w, TH_S1_W_MOVE(TH_S1_F_L), TH_S1_W_MOVE1, TH_S1_W_MOVE2)
TH_S1_WARM_RUN(s1_warm_n, TH_S1_W_MOVE(TH_S1_F_LN), TH_S1_W_MOVE1, TH_S1_W_MOVE2)
TH_S1_WARM_RUN(s1_sum_w, "ldrd r10, r11, [r2], #8\n\t", "ldrsh r11, [r2], #2\n\t",
               "ldr r11, [r2], #4\n\t")
/* A whole output row in one call (s1_row_run): its pixels as consecutive segments of one
 * count and one update (SAME's border pixels one or a few each, the interior one), walked
 * from a table so a border pixel costs its segment's ~10 instructions, not a call with its
 * own set-up and divisor (~100). The pointers run on across segments (the pixels are
 * consecutive); the row-entering and -leaving rows only in the update segments, which
 * follow every other (they are the pixels from the left padding on). Offsets used by the
 * assembly. */
typedef struct {
    int32_t m;   /* 0: tie-free reciprocal */
    int32_t a;   /* 4: avg_s1_raw_acc */
    int32_t end; /* 8: the segment's end, bytes from the row's first output */
    int32_t up;  /* 12: 2 u + the parity of the count of groups (s1_up), u: the leaving
                  * column + row e - row l (1), + row e (2), - row l (3), or kept (0);
                  * the fused order's 4 to 7 (s1_row's modes), 8 (right padding
                  * entering), 9 (mode 4 where left padding leaves), 10 (mode 4,
                  * windows two columns wide: TH_S1_W2_ROW_LOOP) */
} s1_seg;

/* s1_seg.up for update u: the parity picks a fused loop's entry (TH_S1_F_ROW_LOOP). */
TH_INLINE int32_t s1_up(int u, int32_t c4)
{
    return 2 * u + ((c4 >> 2) & 1);
}

typedef struct {
    int16_t *acc;         /* 0 */
    const int16_t *enter; /* 4: pixel 0's entering column */
    int16_t *leave;       /* 8: its leaving column */
    const int8_t *e;      /* 12: the entering row at the first update pixel's column */
    const int8_t *l;      /* 16: the leaving row there */
    int8_t *dst;          /* 20: the row's first output */
    const s1_seg *seg;    /* 24 */
    int32_t c4;           /* 28 */
    int32_t tail;         /* 32 */
    int8_t *dst_end;      /* 36 */
} s1_row_args;

/* Per segment: m, a and its end from the table, then its loop over its pixels (keep, move,
 * enter or leave: labels apart), pixel by pixel and in each pixel group by group then the
 * C - c4 (0..3) other channels; the next pixel: acc back to its start ([sp, #0]) until dst
 * reaches the segment's end ([sp, #4]); then the next segment until the row's end ([sp,
 * #16]). C - c4 is in the flags once a call (the prologue's MSR): C (bit 29) a pair, V
 * (bit 28) one more; every instruction of the walk leaves C and V (TEQ for the loop and
 * row ends, no flag-setting arithmetic), so a pixel's other channels cost two branches and
 * a segment's start none. */
#define TH_S1_ROW_LOOP(AL, UPDATE, UPD1, B, P, T)                                        \
    B ":\n\t" B "0:\n\t"                                                                \
    "ldrd r10, r11, [r0]\n\t" TH_S1_SLIDE(TH_S1_ENTER_##AL, TH_S1_LEAVE_##AL) TH_S1_DIV   \
        UPDATE "teq r0, r6\n\t"                                                          \
               "bne " B "0b\n\t"                                                         \
               "bcc " P "f\n\t" TH_S1_PAIR(TH_S1_P_##UPD1) P ":\n\t"                    \
               "bvc " T "f\n\t" TH_S1_TAIL(TH_S1_T_##UPD1) T ":\n\t"                    \
               "ldrd r0, r11, [sp, #0]\n\t"                                             \
               "teq r5, r11\n\t"                                                        \
               "bne " B "0b\n\t"
/* The fused order's pixels whose entering column is right padding (up 8: SAME's right
 * border, s1_row): nothing enters and no column moves, so per group the sum, the averages
 * and acc - the leaving column, 16 instructions where the keep loop added the zero column
 * (20). r1 stays in the padding columns (zero) for the other channels' loads: it steps
 * only by them, at most 8 bytes a pixel, and the padding holds fw - 1 - pl columns of
 * at least 12 bytes past column in_w, where r1 starts. */
#define TH_S1_NE_ROW_LOOP                                                                 \
    "31:\n\t"                                                                             \
    "310:\n\t"                                                                            \
    "ldrd r10, r11, [r0]\n\t"                                                             \
    "ldrd r12, lr, [r2], #8\n\t"                                                          \
    "ssub16 r12, r10, r12\n\t"                                                            \
    "ssub16 lr, r11, lr\n\t"                                                              \
    "strd r12, lr, [r0], #8\n\t" TH_S1_DIV                                                \
    "teq r0, r6\n\t"                                                                      \
    "bne 310b\n\t"                                                                        \
    "bcc 32f\n\t" TH_S1_PAIR(TH_S1_P_SKIP) "32:\n\t"                                     \
    "bvc 33f\n\t" TH_S1_TAIL(TH_S1_T_SKIP) "33:\n\t"                                     \
    "ldrd r0, r11, [sp, #0]\n\t"                                                          \
    "teq r5, r11\n\t"                                                                     \
    "bne 310b\n\t"
#define TH_S1_ROW_RUN(NAME, AL)                                                           \
    static void __attribute__((naked, noinline)) NAME(const s1_row_args *a)               \
    {                                                                                     \
        __asm__ volatile("push {r4-r11, lr}\n\t"                                          \
                         "sub sp, sp, #24\n\t"                                            \
                         "ldrd r10, r11, [r0, #28]\n\t"                                   \
                         "lsl r11, r11, #28\n\t" /* C - c4 in C and V */                \
                         "msr APSR_nzcvq, r11\n\t"                                        \
                         "ldr r5, [r0, #20]\n\t"                                          \
                         "str r5, [sp, #12]\n\t"                                          \
                         "ldr r6, [r0, #36]\n\t"                                          \
                         "str r6, [sp, #16]\n\t"                                          \
                         "ldr r9, [r0, #24]\n\t"                                          \
                         "ldrd r1, r2, [r0, #4]\n\t"                                      \
                         "ldrd r3, r4, [r0, #12]\n\t"                                     \
                         "ldr r0, [r0, #0]\n\t"                                           \
                         "str r0, [sp, #0]\n\t"                                           \
                         "add r6, r0, r10, lsl #1\n\t"                                    \
                         "1:\n\t"                                                         \
                         "ldmia r9!, {r7, r8, r10, r11}\n\t"                              \
                         "str r9, [sp, #20]\n\t" /* r9: the fused loops' entry */         \
                         "ldr r12, [sp, #12]\n\t"                                         \
                         "add r10, r10, r12\n\t"                                          \
                         "str r10, [sp, #4]\n\t"                                          \
                         "tbh [pc, r11, lsl #1]\n\t" /* by 2 up + odd (s1_seg) */       \
                         "8:\n\t"                                                         \
                         ".hword (5f - 8b) / 2, (5f - 8b) / 2, (2f - 8b) / 2\n\t"        \
                         ".hword (2f - 8b) / 2, (11f - 8b) / 2, (11f - 8b) / 2\n\t"      \
                         ".hword (5f - 8b) / 2, (5f - 8b) / 2, (172f - 8b) / 2\n\t"      \
                         ".hword (17f - 8b) / 2, (212f - 8b) / 2, (21f - 8b) / 2\n\t"    \
                         ".hword (242f - 8b) / 2, (24f - 8b) / 2, (272f - 8b) / 2\n\t"   \
                         ".hword (27f - 8b) / 2, (31f - 8b) / 2, (31f - 8b) / 2\n\t"     \
                         ".hword (342f - 8b) / 2, (34f - 8b) / 2\n\t"                     \
                         ".hword (382f - 8b) / 2, (38f - 8b) / 2\n\t"                     \
                         TH_S1_ROW_LOOP(K, "", SKIP, "5", "6", "7")                        \
                         "b 9f\n\t" TH_S1_ROW_LOOP(AL, TH_S1_MOVE(AL), MOVE, "2", "3", "4") \
                         "b 9f\n\t" TH_S1_ROW_LOOP(AL, TH_S1_ENTER1(TH_S1_RELOAD_##AL,     \
                                                                  TH_S1_STORE_##AL),      \
                                                     ENTER, "11", "12", "13")             \
                         "b 9f\n\t" TH_S1_F_ROW_LOOP(TH_S1_F_E TH_S1_F_L,               \
                                                       TH_S1_FP_E TH_S1_FP_L,             \
                                                       TH_S1_FT_E TH_S1_FT_L, "17", "18", \
                                                       "19")                              \
                         "b 9f\n\t" TH_S1_F_ROW_LOOP(TH_S1_F_E, TH_S1_FP_E, TH_S1_FT_E, \
                                                       "21", "22", "23")                  \
                         "b 9f\n\t" TH_S1_F_ROW_LOOP(TH_S1_F_L, TH_S1_FP_L, TH_S1_FT_L, \
                                                       "24", "25", "26")                  \
                         "b 9f\n\t" TH_S1_F_ROW_LOOP(TH_S1_F_E TH_S1_F_LN,              \
                                                       TH_S1_FP_E TH_S1_FP_L,             \
                                                       TH_S1_FT_E TH_S1_FT_L, "27", "28", \
                                                       "29")                              \
                         "b 9f\n\t" TH_S1_NE_ROW_LOOP                                  \
                         "b 9f\n\t" TH_S1_W2_ROW_LOOP /* not last: FL falls through */ \
                         "b 9f\n\t" TH_S1_FL_ROW_LOOP                                  \
                         "9:\n\t"                                                         \
                         "ldr r9, [sp, #20]\n\t"                                          \
                         "ldr r10, [sp, #16]\n\t"                                         \
                         "teq r5, r10\n\t"                                                \
                         "bne 1b\n\t"                                                     \
                         "add sp, sp, #24\n\t"                                            \
                         "pop {r4-r11, pc}\n\t");                                         \
    }
TH_S1_ROW_RUN(s1_row_w, W)
#pragma GCC diagnostic pop
#endif

/* The C loops of s1_span (clamped activations, C < 4, builds without the assembly). */
__attribute__((noinline)) static void s1_span_c(int16_t *acc, int16_t *cs, int32_t x0,
                                                int32_t w, int32_t n, const int8_t *xe,
                                                const int8_t *xl, int32_t ch,
                                                const avg_s1_div *dp, int8_t *dst,
                                                int by_channel, int update)
{
    const s1_consts c = s1_consts_of(dp); /* tie-free (s1_row): no sign lanes */
    by_channel = by_channel && n > 2; /* the C loops: by channel over longer spans */
    if (update) {
        s1_span_t(acc, cs, x0, w, n, xe, xl, ch, &c, dst, by_channel, 1, 0);
    } else {
        s1_span_t(acc, cs, x0, w, n, xe, xl, ch, &c, dst, by_channel, 0, 0);
    }
}

/* n pixels of one count from column x0 (s1_span_t). Inlined into s1_row: a one-pixel span
 * (a SAME border pixel) costs the assembly's call, not s1_span_c's frame (~100 more). */
TH_INLINE void s1_span(int16_t *acc, int16_t *cs, int32_t x0, int32_t w, int32_t n,
                       const int8_t *xe, const int8_t *xl, int32_t ch, int32_t cst,
                       const avg_s1_div *dp, int8_t *dst, int by_channel, int update)
{
#if TH_NN_DSP_NATIVE
    const int32_t c4 = ch & ~3;
    if (!dp->clamp && c4 > 0) {
        /* The whole span in assembly, pixel by pixel, in each pixel its groups then its
         * other channels (the order of the in-place C loop, so it serves both); an odd
         * C's columns cst = C + 1 halfwords apart. */
        /* one segment: the row walker (tie-free constants, s1_row: every count as an
         * odd one) */
        int16_t *leave = cs + x0 * cst;
        const s1_seg seg = {dp->m, dp->a, n * ch, s1_up(update ? 1 : 0, c4)};
        const s1_row_args a = {acc,
                               leave + (w - 1) * cst,
                               leave,
                               update ? xe + x0 * ch : NULL,
                               update ? xl + x0 * ch : NULL,
                               dst,
                               &seg,
                               c4,
                               ch - c4,
                               dst + n * ch};
        s1_row_w(&a);
        return;
    }
#else
    (void)cst;
#endif
    s1_span_c(acc, cs, x0, w, n, xe, xl, ch, dp, dst, by_channel, update); /* cst == C */
}

/* Column sums of columns [x0, x1) moved to the next output row's window, rows [n0, e1):
 * rows [l0, l1) subtracted and [e0, e1) added, or (fresh) summed afresh over [n0, e1); one
 * pass per column, each group of four channels in registers. */
/* n4 groups of four channels at col (int16 sums) and q (input bytes of row l0): + the row d
 * bytes on, - row l0, nr times a row further down. */
static void cols_pairs(int16_t *col, const int8_t *q, int32_t n4, int32_t nr, int32_t row,
                       int32_t d)
{
    if (nr == 1) {
        /* one row enters and one leaves (stride 1): no row loop */
        for (int32_t g = 0; g < n4; g++, col += 4, q += 4) {
            const int32_t lv = th_read_s32(q), ev = th_read_s32(q + d);
            th_write_s32(col, avg_ssub16(th_sxtab16(th_read_s32(col), ev), th_sxtb16(lv)));
            th_write_s32(col + 2, avg_ssub16(th_sxtab16_ror8(th_read_s32(col + 2), ev),
                                             th_sxtb16_ror8(lv)));
        }
        return;
    }
    for (int32_t g = 0; g < n4; g++, col += 4, q += 4) {
        int32_t a = th_read_s32(col), b = th_read_s32(col + 2);
        const int8_t *r = q;
        for (int32_t i = 0; i < nr; i++, r += row) {
            const int32_t lv = th_read_s32(r), ev = th_read_s32(r + d);
            a = avg_ssub16(th_sxtab16(a, ev), th_sxtb16(lv));
            b = avg_ssub16(th_sxtab16_ror8(b, ev), th_sxtb16_ror8(lv));
        }
        th_write_s32(col, a);
        th_write_s32(col + 2, b);
    }
}

/* One input row into the column sums of n columns from col (q: the row's bytes there): mode
 * 0 sets them to the row, 1 adds it, 2 subtracts it. A row pass has no per-column loop
 * set-up when C % 4 == 0 (the columns' groups are one run) and a short one otherwise, so
 * small C pays ~10 instructions a column where the column-by-column row loops paid ~80
 * (stride 1's padding rows, where one row enters or leaves). */
TH_INLINE void cols_row_t(int16_t *col, const int8_t *q, int32_t n, int32_t ch, int32_t cst,
                          int mode)
{
    const int32_t c4 = ch & ~3;
    const int32_t runs = c4 == ch ? 1 : n;       /* runs of groups */
    const int32_t g = c4 == ch ? n * ch / 4 : c4 / 4; /* groups a run */
    for (int32_t r = 0; r < runs; r++) {
        for (int32_t i = 0; i < g; i++, col += 4, q += 4) {
            const int32_t v = th_read_s32(q);
            int32_t a = th_sxtb16(v), b = th_sxtb16_ror8(v);
            if (mode == 1) {
                a = th_sadd16(th_read_s32(col), a);
                b = th_sadd16(th_read_s32(col + 2), b);
            } else if (mode == 2) {
                a = avg_ssub16(th_read_s32(col), a);
                b = avg_ssub16(th_read_s32(col + 2), b);
            }
            th_write_s32(col, a);
            th_write_s32(col + 2, b);
        }
        for (int32_t c = c4; c < ch; c++, col++, q++) {
            *col = (int16_t)(mode == 0 ? *q : mode == 1 ? *col + *q : *col - *q);
        }
        col += cst - ch; /* past the column's pad (cst: its stride) */
    }
}

static void cols_row(int16_t *col, const int8_t *q, int32_t n, int32_t ch, int32_t cst,
                     int mode)
{
    if (mode == 0) {
        cols_row_t(col, q, n, ch, cst, 0);
    } else if (mode == 1) {
        cols_row_t(col, q, n, ch, cst, 1);
    } else {
        cols_row_t(col, q, n, ch, cst, 2);
    }
}

/* The sums of two input rows (q, q + row) set into the column sums of n columns from col,
 * in one pass (cols_row's set and add passes loaded and stored each column twice: ~70
 * instructions a column at C = 5, ~25 here): a SAME image's first window rows. */
__attribute__((noinline)) static void cols_rows2(int16_t *col, const int8_t *q, int32_t row,
                                                 int32_t n, int32_t ch, int32_t cst)
{
    const int32_t c4 = ch & ~3;
    const int32_t runs = c4 == ch ? 1 : n;           /* runs of groups */
    const int32_t g = c4 == ch ? n * ch / 4 : c4 / 4; /* groups a run */
    for (int32_t r = 0; r < runs; r++) {
        for (int32_t i = 0; i < g; i++, col += 4, q += 4) {
            const int32_t v = th_read_s32(q), w = th_read_s32(q + row);
            th_write_s32(col, th_sxtab16(th_sxtb16(v), w));
            th_write_s32(col + 2, th_sxtab16_ror8(th_sxtb16_ror8(v), w));
        }
        for (int32_t c = c4; c < ch; c++, col++, q++) {
            *col = (int16_t)(q[0] + q[row]);
        }
        col += cst - ch; /* past the column's pad */
    }
}

/* The four bytes at r summed over nr >= 2 rows (row bytes apart) in int16 lanes: bytes 0
 * and 2 in *pa, 1 and 3 in *pb. unrolled (a constant of each copy, with nr one too: the
 * rows unrolled, ~3 instructions a row), or two rows a step. */
TH_INLINE void fresh_lanes(const int8_t *r, int32_t row, int32_t nr, int unrolled, int32_t *pa,
                           int32_t *pb)
{
    const int32_t v = th_read_s32(r);
    int32_t a = th_sxtb16(v), b = th_sxtb16_ror8(v);
    if (unrolled) {
#pragma GCC unroll 8
        for (int32_t i = 1; i < nr; i++) {
            const int32_t u = th_read_s32(r + i * row);
            a = th_sxtab16(a, u);
            b = th_sxtab16_ror8(b, u);
        }
    } else {
        int32_t i = 1;
        for (r += row; i + 2 <= nr; i += 2, r += 2 * row) {
            const int32_t u = th_read_s32(r), t = th_read_s32(r + row);
            a = th_sxtab16(th_sxtab16(a, u), t);
            b = th_sxtab16_ror8(th_sxtab16_ror8(b, u), t);
        }
        if (i < nr) {
            const int32_t u = th_read_s32(r);
            a = th_sxtab16(a, u);
            b = th_sxtab16_ror8(b, u);
        }
    }
    *pa = a;
    *pb = b;
}

/* cols_fresh for one nr (a constant in each copy): per column its groups, then its 1..3
 * other channels from the column's last four bytes (inside the pixel: C >= 5 there)
 * summed as a group, their lanes stored (channel C - 3: b's low half, C - 2: a's high, C -
 * 1: b's high; the sums' layout keeps these channels one halfword each, pidx). */
TH_INLINE void cols_fresh_n(int16_t *col, const int8_t *q, int32_t row, int32_t nr, int u,
                            int32_t n, int32_t ch, int32_t cst)
{
    const int32_t c4 = ch & ~3, t = ch - c4;
    for (int32_t x = 0; x < n; x++, col += cst, q += ch) {
        for (int32_t k = 0; k < c4; k += 4) {
            int32_t a, b;
            fresh_lanes(q + k, row, nr, u, &a, &b);
            th_write_s32(col + k, a);
            th_write_s32(col + k + 2, b);
        }
        if (t > 0) {
            int32_t a, b;
            fresh_lanes(q + ch - 4, row, nr, u, &a, &b);
            col[ch - 1] = (int16_t)(uint16_t)((uint32_t)b >> 16);
            if (t > 1) {
                col[ch - 2] = (int16_t)(uint16_t)((uint32_t)a >> 16);
                if (t > 2) {
                    col[ch - 3] = (int16_t)(uint16_t)(uint32_t)b;
                }
            }
        }
    }
}

/* n columns' sums (col, cst halfwords apart) set afresh to nr >= 2 input rows (q: the first
 * row at the first column), each group's sums in registers over the rows (an image's first
 * window rows, summed once). 3 and 4 rows unrolled (SAME's first windows up to 7 rows
 * high: the row loop took ~21 instructions a group at nr = 3, unrolled ~14), other heights
 * two rows a step; the channels past C & ~3 as one group's lanes (~5 instructions a row
 * each by the scalar loop before). */
__attribute__((noinline)) static void cols_fresh(int16_t *col, const int8_t *q, int32_t row,
                                                 int32_t nr, int32_t n, int32_t ch,
                                                 int32_t cst)
{
    switch (nr) {
    case 3:
        cols_fresh_n(col, q, row, 3, 1, n, ch, cst);
        break;
    case 4:
        cols_fresh_n(col, q, row, 4, 1, n, ch, cst);
        break;
    default:
        cols_fresh_n(col, q, row, nr, 0, n, ch, cst);
        break;
    }
}

static void lanes_cols(int16_t *cs, const int8_t *image, int32_t row, int32_t l0, int32_t l1,
                       int32_t e0, int32_t e1, int32_t n0, int32_t x0, int32_t x1, int32_t ch,
                       int fresh, int32_t cst)
{
    /* cst: halfwords from one column's sums to the next (avg_cs_stride) */
    const int32_t c4 = ch & ~3;
    const int32_t a0 = fresh ? n0 : e0;
    if (!fresh && l1 - l0 == e1 - e0 && l1 > l0 && x1 > x0) {
        /* As many rows enter as leave (strided rows): in pairs, whole groups in one run when
         * C is a multiple of four. */
        const int32_t d = (e0 - l0) * row;
        const int8_t *q = image + l0 * row + x0 * ch;
        if (c4 == ch) {
            cols_pairs(cs + x0 * cst, q, (x1 - x0) * ch / 4, l1 - l0, row, d);
            return;
        }
        for (int32_t x = x0; x < x1; x++, q += ch) {
            int16_t *col = cs + x * cst;
            if (c4 > 0) {
                cols_pairs(col, q, c4 / 4, l1 - l0, row, d);
            }
            for (int32_t c = c4; c < ch; c++) {
                int32_t v = col[c];
                for (int32_t i = 0, o = c; i < l1 - l0; i++, o += row) {
                    v += q[o + d] - q[o];
                }
                col[c] = (int16_t)v;
            }
        }
        return;
    }
    if (x1 > x0 && (fresh ? ch < 16 && e1 - a0 <= 2 : l1 - l0 <= 1 && e1 - e0 <= 1)) {
        /* by rows (below: by columns, each group's sums kept in registers over the rows,
         * cheaper for many rows of wide columns) */
        int16_t *col = cs + x0 * cst;
        const int8_t *q = image + x0 * ch;
        const int32_t n = x1 - x0;
        if (fresh && a0 >= e1) {
            for (int32_t k = 0; k < n * cst; k++) {
                col[k] = 0;
            }
        }
        if (fresh && e1 - a0 == 2) {
            cols_rows2(col, q + a0 * row, row, n, ch, cst);
            return;
        }
        for (int32_t y = l0; !fresh && y < l1; y++) {
            cols_row(col, q + y * row, n, ch, cst, 2);
        }
        for (int32_t y = a0; y < e1; y++) {
            cols_row(col, q + y * row, n, ch, cst, fresh && y == a0 ? 0 : 1);
        }
        return;
    }
    for (int32_t x = x0; x < x1; x++) {
        int16_t *col = cs + x * cst;
        const int8_t *px = image + x * ch;
        for (int32_t k = 0; k < c4; k += 4) {
            int32_t a = 0, b = 0;
            if (!fresh) {
                a = th_read_s32(col + k);
                b = th_read_s32(col + k + 2);
                for (int32_t y = l0; y < l1; y++) {
                    const int32_t v = th_read_s32(px + y * row + k);
                    a = avg_ssub16(a, th_sxtb16(v));
                    b = avg_ssub16(b, th_sxtb16_ror8(v));
                }
            }
            for (int32_t y = a0; y < e1; y++) {
                const int32_t v = th_read_s32(px + y * row + k);
                a = th_sxtab16(a, v);
                b = th_sxtab16_ror8(b, v);
            }
            th_write_s32(col + k, a);
            th_write_s32(col + k + 2, b);
        }
        for (int32_t c = c4; c < ch; c++) {
            int32_t v = 0;
            if (!fresh) {
                v = col[c];
                for (int32_t y = l0; y < l1; y++) {
                    v -= px[y * row + c];
                }
            }
            for (int32_t y = a0; y < e1; y++) {
                v += px[y * row + c];
            }
            col[c] = (int16_t)v;
        }
    }
}

/* One pixel off the span (count >= 3): per group of four channels, in registers, acc +=
 * the column sums of columns [a0, a1); the averages; acc -= columns [l0, l1). */
static void lanes_pixel(int16_t *acc, const int16_t *cs, int32_t a0, int32_t a1, int32_t l0,
                        int32_t l1, int32_t ch, const avg_s1_div *dp, int8_t *dst)
{
    const s1_consts c = s1_consts_of(dp);
    const int32_t c4 = ch & ~3;
    for (int32_t k = 0; k < c4; k += 4) {
        int32_t a = th_read_s32(acc + k), b = th_read_s32(acc + k + 2);
        const int16_t *p = cs + a0 * ch + k;
        for (int32_t x = a0; x < a1; x++, p += ch) {
            a = th_sadd16(a, th_read_s32(p));
            b = th_sadd16(b, th_read_s32(p + 2));
        }
        th_write_s32(dst + k, s1_avg4(a, b, &c));
        p = cs + l0 * ch + k;
        for (int32_t x = l0; x < l1; x++, p += ch) {
            a = avg_ssub16(a, th_read_s32(p));
            b = avg_ssub16(b, th_read_s32(p + 2));
        }
        th_write_s32(acc + k, a);
        th_write_s32(acc + k + 2, b);
    }
    for (int32_t k = c4; k < ch; k++) {
        int32_t a = acc[k];
        for (int32_t x = a0; x < a1; x++) {
            a += cs[x * ch + k];
        }
        dst[k] = s1_avg1(a, &c);
        for (int32_t x = l0; x < l1; x++) {
            a -= cs[x * ch + k];
        }
        acc[k] = (int16_t)a;
    }
}

/* acc = the sums of the column sums of columns [0, x1) (x1 <= 0: zeros), two halfwords a
 * word, in registers over the columns; the group lanes from d (s1_row's drift, modulo
 * 2^16 as the sums). */
static void s1_acc_init(int16_t *acc, const int16_t *cs, int32_t x1, int32_t ch, int32_t cst,
                        int32_t d)
{
    const int32_t d2 = (int32_t)(((uint32_t)d & 0xFFFFu) * 0x10001u);
    int32_t k = 0;
    for (; k + 4 <= ch; k += 4) {
        int32_t a = d2, b = d2;
        const int16_t *col = cs + k;
        for (int32_t x = 0; x < x1; x++, col += cst) {
            a = th_sadd16(a, th_read_s32(col));
            b = th_sadd16(b, th_read_s32(col + 2));
        }
        th_write_s32(acc + k, a);
        th_write_s32(acc + k + 2, b);
    }
    for (; k < ch; k++) {
        int32_t a = 0;
        for (int32_t x = 0; x < x1; x++) {
            a += cs[x * cst + k];
        }
        acc[k] = (int16_t)a;
    }
}

/* Columns of pixel ox's window at stride 1 (pl: the left padding), clipped to the input. */
TH_INLINE int32_t s1_cols_of(int32_t ox, int32_t pl, int32_t fw, int32_t in_w)
{
    const int32_t o = ox - pl;
    return TH_MIN(in_w, o + fw) - TH_MAX(0, o);
}

/* s1_span for a count of 1 or 2 (a corner or border window of a 2-tap kernel; the
 * reciprocal needs 3 or more): per pixel, its window's sums, the averages, the leaving
 * column out and (update) moved to the next row, in the in-place order of s1_span_t. */
__attribute__((noinline)) static void s1_span_small(int16_t *acc, int16_t *cs, int32_t x0,
                                                    int32_t w, int32_t n, const int8_t *xe,
                                                    const int8_t *xl, int32_t ch,
                                                    int32_t cst, int32_t count,
                                                    const th_pool_params *p, int8_t *dst,
                                                    int update)
{
    const int32_t c4 = ch & ~3;
    int16_t *leave = cs + x0 * cst;
    const int16_t *enter = leave + (w - 1) * cst;
    /* o: the pixel's bytes (output, rows e and l), oc: its columns' sums */
    for (int32_t i = 0, o = 0, oc = 0; i < n; i++, o += ch, oc += cst) {
        s1_cols_acc(acc, enter + oc, 0, 1, ch, 0);
        for (int32_t c = 0; c < ch; c++) {
            dst[o + c] = (int8_t)th_clamp(avg_round(acc[pidx(c, c4)], count),
                                          p->activation.min, p->activation.max);
        }
        s1_cols_acc(acc, leave + oc, 0, 1, ch, 1);
        for (int32_t c = 0; update && c < ch; c++) {
            const int32_t x = x0 * ch + o + c;
            leave[oc + pidx(c, c4)] = (int16_t)(leave[oc + pidx(c, c4)] + xe[x] - xl[x]);
        }
    }
}

/* Whether pixel ox's window moves a column at stride 1: update 1, its leaving column (an
 * input column: ox >= pl); 2 (the fused order), its entering one (ox - pl + fw - 1 < in_w);
 * 0, none. */
TH_INLINE int s1_moves(int32_t ox, int32_t pl, int32_t fw, int32_t in_w, int update)
{
    return update == 2 ? ox - pl + fw <= in_w : update && ox >= pl;
}

/* Pixels from ox of one window column count and one s1_moves, at least one. */
static int32_t s1_seg_len(int32_t ox, int32_t pl, int32_t fw, int32_t in_w, int32_t out_w,
                          int update)
{
    if (ox >= pl && ox - pl + fw <= in_w) {
        /* interior: every window fw columns up to the last one inside (all of them move
         * either column) */
        return TH_MIN(out_w, in_w - fw + pl + 1) - ox;
    }
    const int32_t cols = s1_cols_of(ox, pl, fw, in_w);
    const int up = s1_moves(ox, pl, fw, in_w, update);
    int32_t n = 1;
    while (ox + n < out_w && s1_cols_of(ox + n, pl, fw, in_w) == cols &&
           s1_moves(ox + n, pl, fw, in_w, update) == up) {
        n++;
    }
    return n;
}

#if TH_NN_DSP_NATIVE
/* A moving segment's u for mode (s1_seg.up): 9 for mode 4 where its leaving columns are
 * left padding (bit 0 of left: TH_S1_FL_ROW_LOOP), 10 for mode 4 with windows two columns
 * wide (TH_S1_W2_ROW_LOOP; no left padding then), else the mode. */
TH_INLINE int s1_fused_u(int mode, uint32_t left, int32_t fw)
{
    return mode == 4 && (left & 1u) ? 9 : mode == 4 && fw == 2 ? 10 : mode;
}

/* Segments a row table holds (a window fw wide: at most 2 * fw - 1; more: s1_span each). */
#define TH_S1_SEGS 16

/* s1_row_w's table for rows of `rows` window rows and one update mode (n:
 * segments, < 0: the row takes s1_span by segment), kept from row to row while those hold. */
typedef struct {
    int32_t rows, mode, n;
    uint32_t inner; /* bit i: segment i moves a column (its up is the mode): from the left
                     * padding on, or (the fused order) up to the right one; bit 16 + i:
                     * segment i's leaving columns are left padding (the fused order) */
    s1_seg seg[TH_S1_SEGS];
    /* the row walker's arguments, the image-wide fields set with the table (a row sets
     * the other four: ~20 instructions a row less than a fresh struct) */
    s1_row_args run;
} s1_segs;
#endif

#if TH_NN_DSP_NATIVE
/* Another window height for a table of the same update kind (s1_row: split): its segments
 * (ends and bits depend on that kind alone: SAME's top and bottom rows) with their counts'
 * reciprocals and updates anew, not s1_seg_len and the segment logic again (~55
 * instructions a segment); a count below 3 leaves the table to the rebuild (rows kept). */
__attribute__((noinline)) static void s1_table_rows(s1_segs *sg, int32_t rows, int mode,
                                                    avg_s1_div *dv, int32_t pl, int32_t fw,
                                                    int32_t in_w, int32_t ch)
{
    const int32_t c4 = ch & ~3;
    const int fused = mode >= 4;
    int32_t ox = 0;
    for (int32_t i = 0; i < sg->n; i++) {
        const int32_t count = rows * s1_cols_of(ox, pl, fw, in_w);
        if (count < 3) {
            return;
        }
        if (count != dv->count) {
            avg_s1_div_set_t(dv, count, 1);
        }
        s1_seg *g = &sg->seg[i];
        g->m = dv->m;
        g->a = dv->a;
        g->up = s1_up((sg->inner >> i) & 1u ? s1_fused_u(mode, sg->inner >> (16 + i), fw)
                      : fused                  ? 8
                                               : 0,
                      c4);
        ox = g->end / ch;
    }
    sg->rows = rows;
    sg->mode = mode;
}
#endif

#if TH_NN_DSP_NATIVE
/* The fused order's moves outside the walk (s1_row mode 4, 5 or 6): n columns from col
 * (the row walker's layout) + row e and / or - row l, e and l at column 0. */
static void s1_fused_move(int16_t *col, int32_t n, const int8_t *e, const int8_t *l, int mode,
                          int32_t c4, int32_t ch)
{
    if (mode == 4) {
        const s1_asm_args m = {NULL, NULL, col, e, l, NULL, n, c4, ch - c4, 0, 0};
        s1_move_w(&m);
    } else if (mode != 0) {
        cols_row(col, mode == 5 ? e : l, n, ch, ch + (ch & 1), mode == 5 ? 1 : 2);
    }
}
#endif

#if TH_NN_DSP_NATIVE
/* s1_row's table for rows of `rows` window rows and update `mode`, where either differs
 * from the table's (a new update on the same segments, other counts on the same segments,
 * else rebuilt; sg->n < 0: the row takes s1_span by segment). C >= 4, no clamp. Out of
 * line (s1_row and s1_table_steady): a few times an image. */
__attribute__((noinline)) static void s1_table_set(s1_segs *sg, int16_t *acc, int16_t *csb,
                                                   int32_t rows, int mode, avg_s1_div *dv,
                                                   int32_t pl, int32_t fw, int32_t in_w,
                                                   int32_t out_w, int32_t ch, int32_t cst)
{
    const int fused = mode >= 4;
    const int32_t c4 = ch & ~3;
    if (sg->rows == rows && sg->mode != mode && sg->n > 0 && fused == (sg->mode >= 4)) {
        /* the same segments, another update (a VALID image's last row, the fused
         * order's first row of both rows moving after one entering): no rebuild */
        sg->mode = mode;
        for (int32_t i = 0; i < sg->n; i++) {
            sg->seg[i].up = s1_up((sg->inner >> i) & 1u ? s1_fused_u(mode, sg->inner >> (16 + i), fw)
                                  : fused                  ? 8
                                                           : 0,
                                  c4);
        }
    }
    const int split = fused ? 2 : mode != 0;
    if (sg->rows > 0 && sg->rows != rows && sg->n > 0 &&
        split == (sg->mode >= 4 ? 2 : sg->mode != 0)) {
        s1_table_rows(sg, rows, mode, dv, pl, fw, in_w, ch);
    }
    if (sg->rows != rows || sg->mode != mode) {
        int16_t *leave = csb - pl * cst; /* pixel 0's: csb's column -pl (cs's first) */
        sg->run.acc = acc;
        sg->run.enter = leave + (fw - 1) * cst;
        sg->run.leave = leave;
        sg->run.seg = sg->seg;
        sg->run.c4 = c4;
        sg->run.tail = ch - c4;
        sg->rows = rows;
        sg->inner = 0;
        sg->mode = mode;
        sg->n = 0;
        for (int32_t ox = 0; ox < out_w;) {
            const int32_t n = s1_seg_len(ox, pl, fw, in_w, out_w, split);
            const int32_t count = rows * s1_cols_of(ox, pl, fw, in_w);
            if (count < 3 || sg->n == TH_S1_SEGS) {
                sg->n = -1;
                break;
            }
            if (count != dv->count) {
                avg_s1_div_set_t(dv, count, 1);
            }
            s1_seg *g = &sg->seg[sg->n++];
            g->m = dv->m;
            g->a = dv->a;
            g->end = (ox + n) * ch;
            const int moves = s1_moves(ox, pl, fw, in_w, fused ? 2 : 1);
            /* 8: the fused order's right padding enters (TH_S1_NE_ROW_LOOP) */
            const uint32_t left = (uint32_t)(fused && ox + n <= pl);
            g->up = s1_up(moves && mode != 0 ? s1_fused_u(mode, left, fw)
                          : fused && !moves  ? 8
                                             : 0,
                          c4);
            sg->inner |= ((uint32_t)((moves && mode != 0) || (!fused && ox >= pl)) |
                          left << 16)
                         << (sg->n - 1);
            ox += n;
        }
    }
}

#endif

/* One output row at stride 1 as spans over csb (the column sums from input column 0, zero
 * columns in the padding on both sides, so one column enters and one leaves every window):
 * the pixels of one count (rows * columns >= 3) and one update in one s1_span (or all of
 * the row's segments in one s1_row_w call). mode: pixel ox's leaving column (ox
 * >= pl: an input column) moved to the next row there, + row xe - row xl (1), + row xe only
 * (2, by the assembly only: returns 0 where it did not run, the row's columns then to
 * move by the caller), or not (0); 4 (the fused order, the
 * assembly only, else returns 0 with nothing done): the columns still hold the previous
 * output row's window rows, each moved + row xe - row xl before it is summed (the window's
 * first columns here, the others by the pixel they enter at), 5 (+ row xe only) or 6
 * (- row xl only) the same way; 7, as 4 with each group lane
 * of a moved column drifting by -1 (TH_S1_F_LN). drift: the drift of every column's group
 * lanes (after this row's moves), cancelled in acc's start: acc holds fw - 1 columns'
 * sums + drift * fw a lane before a pixel's column enters, so the fw columns' sum then is
 * exact (modulo 2^16, every lane's arithmetic). */
TH_INLINE int s1_row(int16_t *acc, int16_t *csb, int32_t rows, const th_pool_params *p,
                  int32_t in_w, int32_t out_w, int32_t ch, int32_t cst, const int8_t *xe,
                  const int8_t *xl, int mode, avg_s1_div *dv, int8_t *dst, int by_channel,
                  void *segs, int32_t drift)
{
    const int32_t pl = p->padding.w, fw = p->filter.w;
    const int32_t x1 = TH_MIN(in_w, fw - 1 - pl); /* the columns before pixel 0's entering */
#if TH_NN_DSP_NATIVE
    const int32_t c4 = ch & ~3;
    s1_segs *sg = (s1_segs *)segs;
    if (!dv->clamp && c4 > 0) {
        const int fused = mode >= 4;
        if (sg->rows != rows || sg->mode != mode) {
            s1_table_set(sg, acc, csb, rows, mode, dv, pl, fw, in_w, out_w, ch, cst);
        }
        if (sg->n > 0) {
            const int8_t *e = xe, *l = xl;
            /* acc from the drift's start (group lanes) + the first x1 columns, moved
             * first in the fused order (in one pass with both rows): the warm runs set
             * acc (without columns: set here) */
            const int32_t d2 = (int32_t)(((uint32_t)(drift * fw) & 0xFFFFu) * 0x10001u);
            if (x1 <= 0) {
                int32_t k = 0;
                for (; k < c4; k += 2) {
                    th_write_s32(acc + k, d2);
                }
                for (; k < ch; k++) {
                    acc[k] = 0;
                }
            } else {
                const s1_asm_args m = {acc, NULL, csb, xe, xl, NULL, x1, c4, ch - c4, 0, d2};
                if (fused && (mode == 4 || mode == 7)) {
                    if (mode == 7) {
                        s1_warm_n(&m);
                    } else {
                        s1_warm_w(&m);
                    }
                } else {
                    if (fused) {
                        s1_fused_move(csb, x1, xe, xl, mode, c4, ch);
                    }
                    s1_sum_w(&m);
                }
            }
            if (fused) {
                /* rows e and l at pixel 0's entering column (the moving pixels are the
                 * row's first: s1_moves) */
                e = x1 < in_w && xe != NULL ? xe + (fw - 1 - pl) * ch : NULL;
                l = x1 < in_w && xl != NULL ? xl + (fw - 1 - pl) * ch : NULL;
            }
            s1_row_args *a = &sg->run;
            a->e = e;
            a->l = l;
            a->dst = dst;
            a->dst_end = dst + out_w * ch;
            s1_row_w(a);
            return 1;
        }
    }
    if (mode >= 4) {
        return 0;
    }
#else
    (void)segs;
#endif
    s1_acc_init(acc, csb, x1, ch, cst, drift * fw);
    const int update = mode == 1;
    for (int32_t ox = 0; ox < out_w;) {
        const int32_t cols = s1_cols_of(ox, pl, fw, in_w);
        const int up = update && ox >= pl;
        const int32_t n = s1_seg_len(ox, pl, fw, in_w, out_w, update);
        if (rows * cols < 3) {
            s1_span_small(acc, csb, ox - pl, fw, n, xe, xl, ch, cst, rows * cols, p,
                          dst + ox * ch, up);
            ox += n;
            continue;
        }
        if (rows * cols != dv->count) {
            avg_s1_div_set_t(dv, rows * cols, 1);
        }
        s1_span(acc, csb, ox - pl, fw, n, xe, xl, ch, cst, dv, dst + ox * ch, by_channel, up);
        ox += n;
    }
    return mode < 2;
}

#if TH_NN_DSP_NATIVE
/* k rows of the fused order after one of mode 4 or 7 (s1_row) whose windows slide down by
 * a row each (one row entering, one leaving: the table holds): per row the warm run and
 * the row walker, ~40 instructions of set-up where avg_lanes_image's general row step took
 * ~230. w: the first row's warm run (e and l: its rows entering and leaving at column 0,
 * a: its drift start), stepped a row at a time (a by dd in both lanes, mode 7's drift:
 * SADD16 wraps each lane modulo 2^16 as s1_row's start does); off: from column 0 to pixel
 * 0's entering column, dstep: an output row. */
__attribute__((noinline)) static void s1_steady_rows(s1_segs *sg, const s1_asm_args *w0,
                                                     int32_t k, int32_t row, int32_t off,
                                                     int8_t *dst, int32_t dstep, int32_t dd)
{
    s1_asm_args w = *w0;
    s1_row_args *a = &sg->run;
    for (int32_t i = 0; i < k; i++) {
        if (dd != 0) {
            s1_warm_n(&w);
        } else {
            s1_warm_w(&w);
        }
        a->e = w.e + off;
        a->l = w.l + off;
        a->dst = dst;
        dst += dstep;
        a->dst_end = dst;
        s1_row_w(a);
        w.e += row;
        w.l += row;
        w.a = th_sadd16(w.a, dd);
    }
}
#endif

static void avg_lanes_image(const th_pool_params *p, const th_dims *in, const int8_t *image,
                            const th_dims *out, int8_t *dst, int16_t *cs, int16_t *acc,
                            int by_channel)
{
    const int32_t in_h = in->h, in_w = in->w, ch = in->c;
    const int32_t c4 = ch & ~3;
    const int32_t act_min = p->activation.min, act_max = p->activation.max;
    const int32_t row = in_w * ch, fw = p->filter.w, pad_w = p->padding.w;
    const int32_t sh = p->stride.h, sw = p->stride.w;
    /* Stride 1: column sums from csb = cs + pad_w columns, the padding's columns zero (pad_w
     * < fw: every window has input; avg_cs_cols columns cover the last window). */
    const int s1 = sh == 1 && sw == 1;
    const int clamp = act_min > -128 || act_max < 127;
    /* cst: halfwords from a column's sums to the next; an odd C's pad halfword (scratch for
     * it at stride 1, avg_cs_stride) where the row walker takes the rows (no clamp, C >= 4:
     * s1_row, s1_span), so its groups are word-aligned; the C loops keep C. */
    int32_t cst = ch;
#if TH_NN_DSP_NATIVE
    if (s1 && !clamp && c4 > 0) {
        cst = avg_cs_stride(p, ch);
    }
#endif
    int16_t *csb = cs;
    if (s1) {
        csb = cs + pad_w * cst;
        for (int32_t k = 0; k < pad_w * cst; k++) {
            cs[k] = 0;
        }
        /* the right padding's columns a window reads: up to the last window's, cs column
         * W' - 1 + KW - 1 (none at VALID: a memset of KW - 1 columns a call saved) */
        for (int32_t k = (pad_w + in_w) * cst; k < (out->w - 1 + fw) * cst; k++) {
            cs[k] = 0;
        }
    }
#if TH_NN_DSP_NATIVE
    s1_segs segs;
    segs.rows = 0; /* no table yet */
#endif
    avg_s1_div dv;
    dv.lo = (uint32_t)(act_min + 128) * 0x01010101u;
    dv.hi = (uint32_t)(act_max + 128) * 0x01010101u;
    dv.clamp = clamp;
    dv.count = 0;
    th_nn_window wy = th_nn_window_at(0, sh, p->padding.h, p->filter.h, in_h);
    const int32_t f0 = wy.origin + wy.start, f1 = wy.origin + wy.end; /* first window rows */
    if (c4 > 0 && f1 - f0 >= 2 && !(ch < 16 && f1 - f0 == 2)) {
        /* not lanes_cols' by-rows pass (cols_rows2): its general loop, ~2x the instructions
         * (called from here: the stack's chain no deeper than through lanes_cols) */
        cols_fresh(csb, image + f0 * row, row, f1 - f0, in_w, ch, cst);
    } else {
        lanes_cols(csb, image, row, 0, 0, f0, f1, f0, 0, in_w, ch, 1, cst);
    }
#if TH_NN_DSP_NATIVE
    /* The fused order (s1_row mode 4) where the row walker runs and the output is apart
     * from the input: output row y's walk reads the row above its windows, which raster
     * order in place (th_nn.h (c)) may have overwritten. */
    const int fused = s1 && by_channel && !clamp && c4 > 0;
    int32_t pys = 0, pye = 0; /* the previous output row's window rows */
    /* No padding column in any window (VALID): the group lanes may drift (s1_row mode 7),
     * by `drift` so far; not for windows two columns wide (mode 4's TH_S1_W2_ROW_LOOP, exact,
     * takes 2 instructions a group fewer than mode 7). */
    const int no_pad = pad_w == 0 && out->w - 1 + fw <= in_w && fw != 2;
    int32_t drift = 0;
#endif
    for (int32_t oy = 0; oy < out->h; oy++) {
        const int32_t ys = wy.origin + wy.start, ye = wy.origin + wy.end;
        const int last_row = oy + 1 == out->h;
        th_nn_window wn = wy;
        if (!last_row) {
            wn = th_nn_window_at(oy + 1, sh, p->padding.h, p->filter.h, in_h);
        }
        /* Rows [ys, leave_end) leave and [enter_start, ne) enter; at stride 1 at most one
         * each (xl = row ys, xe = row ne - 1, NULL: none). Not for the fused order (its
         * own rows below: ~20 instructions a row less). */
        int32_t ns = 0, ne = 0, leave_end = 0, enter_start = 0;
        const int8_t *xl = NULL, *xe = NULL;
        const int32_t rows = ye - ys;
#if TH_NN_DSP_NATIVE
        if (!fused)
#endif
        {
            ns = wn.origin + wn.start;
            ne = wn.origin + wn.end;
            leave_end = last_row ? ys : TH_MIN(ye, ns);
            enter_start = last_row ? ne : TH_MAX(ye, ns);
            xl = leave_end > ys ? image + ys * row : NULL;
            xe = ne > enter_start ? image + (ne - 1) * row : NULL;
        }
        if (s1) {
            /* Stride 1 (counts below 3 in s1_span_small, at the row's ends). With a
             * row entering and one leaving, each pixel moves its leaving column; else the
             * sums move after the row: + the entering row, or - the leaving row (in
             * place: the next window's rows summed afresh, below row ys, where pixel q's
             * window starts, th_nn.h (c)). */
            const int both = !last_row && xe != NULL && xl != NULL;
            /* one row entering: moved by the pixels too where the assembly runs */
            int mode = both ? 1 : !last_row && xe != NULL && xl == NULL ? 2 : 0;
            const int8_t *re = xe, *rl = xl;
            int32_t rdrift = 0;
#if TH_NN_DSP_NATIVE
            if (fused) {
                /* The columns hold row oy - 1's window rows [pys, pye) (row 0's: as
                 * summed): rows [pys, min(pye, ys)) leave, [max(pye, ys), ye) enter, at
                 * most one each; 4: both rows (7: with drift), 5: one entering (SAME's top
                 * rows), 6: one leaving. */
                const int32_t l1 = TH_MIN(pye, ys), e0 = TH_MAX(pye, ys);
                rl = oy > 0 && l1 > pys ? image + pys * row : NULL;
                re = oy > 0 && ye > e0 ? image + (ye - 1) * row : NULL;
                mode = rl != NULL ? (re != NULL ? 4 + 3 * no_pad : 6) : re != NULL ? 5 : 0;
                rdrift = drift + (mode == 7);
            }
#endif
            /* s1_row's only call (inlined: its frame is avg_lanes_image's, the stack
             * bound's chain one frame shorter) */
            int moved;
            for (;;) {
                moved = s1_row(acc, csb, rows, p, in_w, out->w, ch, cst, re, rl, mode, &dv,
                               dst, by_channel,
#if TH_NN_DSP_NATIVE
                               &segs,
#else
                               NULL,
#endif
                               rdrift);
#if TH_NN_DSP_NATIVE
                if (fused && !moved) {
                    /* no row table (a count below 3): the columns moved first, then the
                     * row */
                    s1_fused_move(csb, in_w, re, rl, mode == 7 ? 4 : mode, c4, ch);
                    re = NULL;
                    rl = NULL;
                    mode = 0;
                    rdrift = drift;
                    continue;
                }
#endif
                break;
            }
            dst += out->w * ch;
#if TH_NN_DSP_NATIVE
            if (fused) {
                drift += mode == 7;
                pys = ys;
                pye = ye;
                wy = wn;
                /* The rows after this one whose windows hold p->filter.h input rows (both
                 * rows moving, the table as it is): in one call, s1_steady_rows */
                const int32_t x1 = TH_MIN(in_w, fw - 1 - pad_w);
                const int32_t last =
                    TH_MIN(out->h - 1, in_h - p->filter.h + p->padding.h);
                int steady = moved && x1 > 0 && x1 < in_w && last > oy;
                if (steady && mode != 4 && mode != 7) {
                    /* a full row after which only such rows follow (VALID's first row,
                     * SAME's first full one): their table now, not row oy + 1's general
                     * step (6x7x18 k3x6 VALID: ~180 instructions a call less) */
                    const int m = 4 + 3 * no_pad;
                    if (rows == p->filter.h) {
                        /* the table as s1_row would set it for row oy + 1 (row oy's: rows
                         * == p->filter.h, another mode) */
                        s1_table_set(&segs, acc, csb, rows, m, &dv, pad_w, fw, in_w, out->w,
                                     ch, cst);
                    }
                    steady = rows == p->filter.h && segs.n > 0;
                }
                if (steady) {
                    /* the rows' mode, 4 + 3 * no_pad as s1_row's rows of both moving */
                    const int32_t k = last - oy, n7 = no_pad;
                    const s1_asm_args w = {acc, NULL, csb, image + ye * row, image + ys * row,
                                           NULL, x1, c4, ch - c4, 0,
                                           (int32_t)(((uint32_t)((drift + n7) * fw) & 0xFFFFu) *
                                                     0x10001u)};
                    s1_steady_rows(&segs, &w, k, row, (fw - 1 - pad_w) * ch, dst,
                                   out->w * ch, n7 ? fw * 0x10001 : 0);
                    dst += k * out->w * ch;
                    drift += k * n7;
                    pys = ys + k;
                    pye = ye + k;
                    oy += k;
                    if (oy + 1 < out->h) {
                        wy = th_nn_window_at(oy + 1, sh, p->padding.h, p->filter.h, in_h);
                    }
                }
                continue;
            }
#endif
            if (mode >= 2 && moved) {
                /* the columns no pixel left */
                const int32_t x0 = TH_MAX(0, out->w - pad_w);
                if (x0 < in_w) {
                    lanes_cols(csb, image, row, ys, leave_end, enter_start, ne, ns, x0, in_w,
                               ch, 0, cst);
                }
            } else if (both) {
                const int32_t x0 = TH_MAX(0, out->w - pad_w); /* columns no pixel left */
                if (x0 < in_w) {
#if TH_NN_DSP_NATIVE
                    if (c4 > 0 && (cst & 1) == 0) {
                        /* in assembly, groups and then the other channels (word-aligned
                         * columns: not an odd C's unpadded ones, clamped) */
                        const s1_asm_args a = {NULL, NULL, csb + x0 * cst, xe + x0 * ch,
                                               xl + x0 * ch, NULL, in_w - x0, c4, ch - c4,
                                               0, 0};
                        s1_move_w(&a);
                    } else {
                        lanes_cols(csb, image, row, ys, leave_end, enter_start, ne, ns, x0,
                                   in_w, ch, 0, cst);
                    }
#else
                    lanes_cols(csb, image, row, ys, leave_end, enter_start, ne, ns, x0, in_w,
                               ch, 0, cst);
#endif
                }
            } else if (!last_row) {
                /* in place, row ys may hold outputs now: the next window's rows afresh */
                lanes_cols(csb, image, row, ys, leave_end, enter_start, ne, ns, 0, in_w, ch,
                           leave_end > ys && !by_channel, cst);
            }
            wy = wn;
            continue;
        }
        for (int32_t c = 0; c < ch; c++) {
            acc[c] = 0;
        }
        /* Other strides, or small counts: pixel by pixel, the column sums moved lazily. */
        const int fresh = 3 * (ne - ns) < 5 * (leave_end - ys) + 3 * (ne - enter_start);
        int32_t have_end = 0; /* columns [xs, have_end) are in acc */
        int32_t upd = 0;      /* columns [0, upd) hold the next row's sums */
        for (int32_t ox = 0; ox < out->w; ox++) {
            const th_nn_window wx = th_nn_window_at(ox, sw, pad_w, fw, in_w);
            const int32_t xs = wx.origin + wx.start, xe_ = wx.origin + wx.end;
            const int32_t count = rows * (xe_ - xs);
            if (count >= 3 && count != dv.count) {
                avg_s1_div_set(&dv, count);
            }
            int32_t next_xs = in_w;
            if (ox + 1 < out->w) {
                const th_nn_window wx1 = th_nn_window_at(ox + 1, sw, pad_w, fw, in_w);
                next_xs = wx1.origin + wx1.start;
            }
            const int32_t add_from = have_end > xs ? have_end : xs;
            const int32_t leave_to = xe_ < next_xs ? xe_ : next_xs; /* [xs, leave_to) leave */
            have_end = xe_;
            /* Columns added, averages, columns subtracted. */
            if (count >= 3) {
                lanes_pixel(acc, csb, add_from, xe_, xs, leave_to, ch, &dv, dst);
            } else {
                s1_cols_acc(acc, csb, add_from, xe_, ch, 0);
                for (int32_t c = 0; c < ch; c++) {
                    dst[c] = (int8_t)th_clamp(avg_round(acc[pidx(c, c4)], count), act_min,
                                              act_max);
                }
                s1_cols_acc(acc, csb, xs, leave_to, ch, 1);
            }
            dst += ch;
            if (!last_row && next_xs > upd) {
                lanes_cols(csb, image, row, ys, leave_end, enter_start, ne, ns, upd, next_xs,
                           ch, fresh, ch);
                upd = next_xs;
            }
        }
        wy = wn;
    }
}

/* ---- DSP strided path (stride >= 2 both ways, AVG_STRIDED) ------------------------------
 *
 * Per output row: the column sums of its window rows, afresh (no sliding: at stride >= 2 a
 * row is in at most ceil(KH / SH) windows), over the flat bytes of the columns the row's
 * windows span, four bytes at a time (SXTAB16 and its ror #8 form, then PKHBT / PKHTB to
 * store them in natural order: cs[x * C + c]); then the pixels, four channels at a time
 * over a span of pixels of one count: the window's column sums as words (channels c, c + 1
 * and c + 2, c + 3; any C, the loads unaligned where x * C + c is odd), the average by the
 * reciprocal (as s1_avg4_t, the quotients joined in natural order). A count below 3 takes
 * avg_round per channel. The row's input is all read before any of its outputs is written,
 * so the raster-order aliasing of th_nn.h (c) holds. */
static int avg_strided_applies(const th_pool_params *p)
{
    return p->stride.h >= 2 && p->stride.w >= 2 && (int64_t)p->filter.h * p->filter.w <= 256;
}

#if TH_NN_DSP_NATIVE
/* (bottom of a, bottom of b) and (top of a, top of b): PKHBT / PKHTB, which gcc does not
 * form from C. */
TH_INLINE int32_t st_pk_lo(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
TH_INLINE int32_t st_pk_hi(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
    return r;
}
#else
TH_INLINE int32_t st_pk_lo(int32_t a, int32_t b)
{
    return th_pkhbt(a, b);
}
TH_INLINE int32_t st_pk_hi(int32_t a, int32_t b)
{
    return th_pkhtb(a, b);
}
#endif

/* Two words at p (word-aligned: cs starts at column 0 of the word-aligned scratch and f
 * is a multiple of four), then p + 4 halfwords (STRD with writeback on the target: one add
 * less per group than a store and a pointer step). */
TH_INLINE int16_t *st_store2_next16(int16_t *p, int32_t lo, int32_t hi)
{
#if TH_NN_DSP_NATIVE
    __asm__ volatile("strd %1, %2, [%0], #8" : "+r"(p) : "r"(lo), "r"(hi) : "memory");
    return p;
#else
    th_write_s32(p, lo);
    th_write_s32(p + 2, hi);
    return p + 4;
#endif
}

/* p[0] = lo, p[1] = hi, then p + 2 (STRD with writeback on the target). */
TH_INLINE int32_t *st_store2_next(int32_t *p, int32_t lo, int32_t hi)
{
#if TH_NN_DSP_NATIVE
    __asm__ volatile("strd %1, %2, [%0], #8" : "+r"(p) : "r"(lo), "r"(hi) : "memory");
    return p;
#else
    p[0] = lo;
    p[1] = hi;
    return p + 2;
#endif
}

/* *lo = p[0], *hi = p[1], then p + 2 (one LDRD with writeback on the target: gcc splits a
 * word pair into two LDRs, one instruction more per column of a grouped window). */
TH_INLINE const int32_t *st_load2_next(const int32_t *p, int32_t *lo, int32_t *hi)
{
#if TH_NN_DSP_NATIVE
    int32_t a, b;
    __asm__("ldrd %0, %1, [%2], #8"
            : "=&r"(a), "=&r"(b), "+r"(p)
            : "m"(*(const int32_t(*)[2])(const void *)p));
    *lo = a;
    *hi = b;
    return p;
#else
    *lo = p[0];
    *hi = p[1];
    return p + 2;
#endif
}

/* The word at q + k * row, k a constant of the unrolled row loop: rows 0-4, 6 and 8 from
 * the one pointer q with the registers row and row3 = 3 * row (LDR's shifted register
 * offsets); gcc's own addressing keeps a second pointer, one ADD per group of four. */
TH_INLINE int32_t st_row_word(const int8_t *q, int32_t k, int32_t row, int32_t row3)
{
#if TH_NN_DSP_NATIVE
    int32_t v;
    switch (k) {
    case 0: return th_read_s32(q);
    case 1: __asm__("ldr %0, [%1, %2]" : "=r"(v) : "r"(q), "r"(row), "m"(*q)); return v;
    case 2: __asm__("ldr %0, [%1, %2, lsl #1]" : "=r"(v) : "r"(q), "r"(row), "m"(*q)); return v;
    case 3: __asm__("ldr %0, [%1, %2]" : "=r"(v) : "r"(q), "r"(row3), "m"(*q)); return v;
    case 4: __asm__("ldr %0, [%1, %2, lsl #2]" : "=r"(v) : "r"(q), "r"(row), "m"(*q)); return v;
    case 6: __asm__("ldr %0, [%1, %2, lsl #1]" : "=r"(v) : "r"(q), "r"(row3), "m"(*q)); return v;
    default: break;
    }
#else
    (void)row3;
#endif
    return th_read_s32(q + k * row);
}

/* cs[f] = the sum over `rows` rows (row bytes apart) of p[f], f < n; fixed: rows a
 * constant up to 7 (st_row_word's loads; a variable row index would branch per load). */
TH_INLINE void st_cols_t(int16_t *cs, const int8_t *p, int32_t row, int32_t n, int32_t rows,
                         int fixed)
{
    const int32_t row3 = 3 * row;
    int16_t *o = cs;
    int32_t f = 0;
    for (; f + 4 <= n; f += 4) {
        int32_t a = 0, b = 0;
#pragma GCC unroll 8
        for (int32_t k = 0; k < rows; k++) {
            const int32_t v = fixed ? st_row_word(p + f, k, row, row3)
                                    : th_read_s32(p + f + k * row);
            a = th_sxtab16(a, v);
            b = th_sxtab16_ror8(b, v);
        }
        o = st_store2_next16(o, st_pk_lo(a, b), st_pk_hi(a, b));
    }
    for (; f < n; f++) {
        int32_t s = 0;
        for (int32_t k = 0; k < rows; k++) {
            s += p[k * row + f];
        }
        cs[f] = (int16_t)s;
    }
}

/* CALL(R) with the row count R a constant up to 7 (the unrolled sums). */
#define TH_ST_BY_ROWS(CALL)                                                               \
    switch (rows) {                                                                       \
    case 1: CALL(1); break;                                                               \
    case 2: CALL(2); break;                                                               \
    case 3: CALL(3); break;                                                               \
    case 4: CALL(4); break;                                                               \
    case 5: CALL(5); break;                                                               \
    case 6: CALL(6); break;                                                               \
    case 7: CALL(7); break;                                                               \
    default: CALL(rows); break;                                                           \
    }

__attribute__((noinline)) static void st_cols(int16_t *cs, const int8_t *p, int32_t row,
                                              int32_t n, int32_t rows)
{
#define TH_ST_ROWS(R) st_cols_t(cs, p, row, n, R, rows >= 1 && rows <= 7)
    TH_ST_BY_ROWS(TH_ST_ROWS)
#undef TH_ST_ROWS
}

/* The four averages of natural-order sums a = (c0, c1), b = (c2, c3) as int8 bytes c0..c3. */
TH_INLINE int32_t st_avg4(int32_t a, int32_t b, const s1_consts *c, int even)
{
    int32_t xa = th_sadd16(a, c->k), xb = th_sadd16(b, c->k);
    if (even) {
        xa = th_sadd16(xa, avg_sign16(a));
        xb = th_sadd16(xb, avg_sign16(b));
    }
    const int32_t q02 = avg_tops(avg_smlawb(c->m, xa, c->mh), avg_smlawb(c->m, xb, c->mh));
    const int32_t q13 = avg_tops(avg_smlawt(c->m, xa, c->mh), avg_smlawt(c->m, xb, c->mh));
    uint32_t q = (uint32_t)q02 | ((uint32_t)q13 << 8);
    if (c->clamp) {
        q = avg_clamp_u8x4(q, c->lo, c->hi);
    }
    return (int32_t)(q ^ 0x80808080u);
}

/* n pixels (stride sw columns apart) whose windows are the `cols` columns from cs (count
 * >= 3), four channels at a time (C >= 4: the last group ends at C - 1, its bytes written
 * twice with the same value; C < 4: one group, its first C bytes). cols, even, clamp and
 * wide (C >= 4) are constants of each copy. */
TH_INLINE void st_span_t(const int16_t *cs, int32_t cols, int32_t n, int32_t sw, int32_t ch,
                         const s1_consts *cp, int8_t *dst, int even, int clamp, int wide)
{
    s1_consts c = *cp;
    c.clamp = clamp;
    const int32_t step = sw * ch;
    if (!wide && ch == 2) {
        /* two channels: two pixels a word (their four output bytes are contiguous) */
        for (int32_t i = 0; i < n; i += 2) {
            const int16_t *p = cs + i * step;
            int32_t a = 0, b = 0;
            for (int32_t j = 0; j < cols; j++, p += 2) {
                a = th_sadd16(a, th_read_s32(p));
                if (i + 1 < n) {
                    b = th_sadd16(b, th_read_s32(p + step));
                }
            }
            const int32_t v = st_avg4(a, b, &c, even);
            if (i + 1 < n) {
                th_write_s32(dst + 2 * i, v);
            } else {
                th_write_s16(dst + 2 * i, (int16_t)(uint16_t)((uint32_t)v & 0xFFFFu));
            }
        }
        return;
    }
    for (int32_t k = 0; k < ch; k += 4) {
        const int32_t kk = wide ? (k + 4 > ch ? ch - 4 : k) : 0;
        const int16_t *p = cs + kk;
        int8_t *o = dst + kk;
        for (int32_t i = 0; i < n; i++, p += step, o += ch) {
            int32_t a = th_read_s32(p), b = wide || ch > 2 ? th_read_s32(p + 2) : 0;
            const int16_t *q = p + ch;
#pragma GCC unroll 8
            for (int32_t j = 1; j < cols; j++, q += ch) {
                a = th_sadd16(a, th_read_s32(q));
                if (wide || ch > 2) {
                    b = th_sadd16(b, th_read_s32(q + 2));
                }
            }
            const int32_t v = st_avg4(a, b, &c, even);
            if (wide) {
                th_write_s32(o, v);
            } else {
                for (int32_t j = 0; j < ch; j++) {
                    o[j] = (int8_t)(uint8_t)((uint32_t)v >> (8 * j));
                }
            }
        }
    }
}

/* CALL(E, N) with the column count N a constant up to 7 (the unrolled sums), then return. */
#define TH_ST_BY_COLS(CALL, E)                                                            \
    switch (cols) {                                                                       \
    case 2: CALL(E, 2); return;                                                           \
    case 3: CALL(E, 3); return;                                                           \
    case 4: CALL(E, 4); return;                                                           \
    case 5: CALL(E, 5); return;                                                           \
    case 6: CALL(E, 6); return;                                                           \
    case 7: CALL(E, 7); return;                                                           \
    default: CALL(E, cols); return;                                                       \
    }
#define TH_ST_COLS(E, N) st_span_t(cs, N, n, sw, ch, &c, dst, E, 0, 1)
#define TH_ST_COLS_SMALL(E, N) st_span_t(cs, N, n, sw, ch, &c, dst, E, 0, 0)

__attribute__((noinline)) static void st_span(const int16_t *cs, int32_t cols, int32_t n,
                                              int32_t sw, int32_t ch, const avg_s1_div *dp,
                                              int8_t *dst)
{
    const s1_consts c = s1_consts_of(dp);
    if (c.clamp) {
        /* a clamp: the column count a variable */
        if (c.even) {
            st_span_t(cs, cols, n, sw, ch, &c, dst, 1, 1, ch >= 4);
        } else {
            st_span_t(cs, cols, n, sw, ch, &c, dst, 0, 1, ch >= 4);
        }
    } else if (ch < 4) {
        if (c.even) {
            TH_ST_BY_COLS(TH_ST_COLS_SMALL, 1)
        } else {
            TH_ST_BY_COLS(TH_ST_COLS_SMALL, 0)
        }
    } else if (c.even) {
        TH_ST_BY_COLS(TH_ST_COLS, 1)
    } else {
        TH_ST_BY_COLS(TH_ST_COLS, 0)
    }
}
#undef TH_ST_COLS_SMALL
#undef TH_ST_COLS

/* ---- AVG_STRIDED_PAIRS: two channels, windows two columns wide (stride.w >= 2) -----------
 *
 * A window row is then one word, (c0, c1) of two columns, and windows share no column, so
 * the column sums (st_cols' stores, st_span's reloads) save nothing: each pixel sums its
 * window from the input (SXTAB16 and its ror #8 form: lanes (c0, c0) and (c1, c1), a
 * lane's halves added), two pixels a step (their four output bytes one word, st_avg4).
 * Each output is written after its window and the next pixel's are read: th_nn.h (c). */

/* (c0, c1) sums of the window of `rows` rows (row bytes apart) from p (rows a constant up to
 * 7 with fixed: st_row_word's loads). */
TH_INLINE int32_t st_pair_sum(const int8_t *p, int32_t row, int32_t rows, int fixed)
{
    const int32_t row3 = 3 * row, v0 = th_read_s32(p);
    int32_t a = th_sxtb16(v0), b = th_sxtb16_ror8(v0);
#pragma GCC unroll 8
    for (int32_t k = 1; k < rows; k++) {
        const int32_t v = fixed ? st_row_word(p, k, row, row3) : th_read_s32(p + k * row);
        a = th_sxtab16(a, v);
        b = th_sxtab16_ror8(b, v);
    }
    return th_sadd16(st_pk_lo(a, b), st_pk_hi(a, b));
}

/* n pixels (step bytes apart from p) whose windows are `rows` rows of two columns (the
 * count 2 * rows >= 3: even): two a word, an odd last one alone (a halfword). clamp and
 * fixed: constants. */
TH_INLINE void st_pairs_t(const int8_t *p, int32_t row, int32_t rows, int32_t n, int32_t step,
                          const s1_consts *cp, int8_t *dst, int clamp, int fixed)
{
    s1_consts c = *cp;
    c.clamp = clamp;
    for (int32_t i = 0; i + 2 <= n; i += 2, dst += 4) {
        int32_t s0 = st_pair_sum(p, row, rows, fixed);
        /* the second window's loads after the first's: gcc interleaved them and spilled */
        __asm__("" : "+r"(s0) : : "memory");
        p += step;
        const int32_t s1 = st_pair_sum(p, row, rows, fixed);
        p += step;
        th_write_s32(dst, st_avg4(s0, s1, &c, 1));
    }
    if (n & 1) {
        const int32_t v = st_avg4(st_pair_sum(p, row, rows, fixed), 0, &c, 1);
        th_write_s16(dst, (int16_t)(uint16_t)((uint32_t)v & 0xFFFFu));
    }
}

/* st_pairs_t unclamped with the row count a constant up to 7 (TH_ST_BY_ROWS), clamped with
 * it a variable (as st_span). */
#define TH_ST_PAIRS(R) st_pairs_t(p, row, R, n, step, &c, dst, 0, rows >= 1 && rows <= 7)

__attribute__((noinline)) static void st_pairs(const int8_t *p, int32_t row, int32_t rows,
                                               int32_t n, int32_t step, const avg_s1_div *dp,
                                               int8_t *dst)
{
    const s1_consts c = s1_consts_of(dp);
    if (c.clamp) {
        st_pairs_t(p, row, rows, n, step, &c, dst, 1, 0);
    } else {
        TH_ST_BY_ROWS(TH_ST_PAIRS)
    }
}
#undef TH_ST_PAIRS

/* ---- The grouped layout (C >= 4, th_avgpool_s8_scratch_size_fast or room in the ordinary
 * scratch): the column sums of channel group g (channels kk = min(4g, C - 4) .. kk + 3, the
 * last group overlapping for C % 4) over the span's columns x0 + j are the words
 * cs[2 * (g * cols + j)] = (ckk, ckk+2) and cs[2 * (g * cols + j) + 1] = (ckk+1, ckk+3),
 * as SXTAB16 and its ror #8 form leave them. A window's columns are then consecutive
 * doubleword pairs at fixed offsets from one pointer (LDRD with immediate offsets, no pack
 * into natural order). */

/* Bytes of the grouped column sums of `cols` columns of C >= 4 channels. */
static int32_t st_group_bytes(int32_t cols, int32_t ch)
{
    return 2 * cols * ((ch + 3) & ~3);
}

/* The grouped column sums (above) of `cols` columns from p (channel 0 of the first column)
 * over `rows` rows (row bytes apart). */
TH_INLINE void st_gcols_t(int32_t *cs, const int8_t *p, int32_t row, int32_t ch, int32_t cols,
                          int32_t rows)
{
    const int32_t row3 = 3 * row;
    for (int32_t k = 0;;) {
        const int8_t *q = p + k;
        for (const int32_t *end = cs + 2 * cols; cs != end; q += ch) {
            int32_t a = 0, b = 0;
            /* rows 3i .. 3i + 2 from q + i * row3: three offset registers for any count */
#pragma GCC unroll 8
            for (int32_t r = 0; r < rows; r++) {
                const int32_t v = th_read_s32(q + r / 3 * row3 + r % 3 * row);
                a = th_sxtab16(a, v);
                b = th_sxtab16_ror8(b, v);
            }
            cs = st_store2_next(cs, a, b);
        }
        k += 4;
        if (k >= ch) {
            return;
        }
        k = k + 4 > ch ? ch - 4 : k;
    }
}

__attribute__((noinline)) static void st_gcols(int32_t *cs, const int8_t *p, int32_t row,
                                               int32_t ch, int32_t cols, int32_t rows)
{
#define TH_ST_ROWS(R) st_gcols_t(cs, p, row, ch, cols, R)
    TH_ST_BY_ROWS(TH_ST_ROWS)
#undef TH_ST_ROWS
}
#undef TH_ST_BY_ROWS

/* The four averages (int8 bytes, natural order) of one group's window: the `cols` columns
 * of grouped sums from p (count >= 3). */
TH_INLINE int32_t st_gavg(const int32_t *p, int32_t cols, const s1_consts *c, int even)
{
    int32_t a, b;
    p = st_load2_next(p, &a, &b);
#pragma GCC unroll 8
    for (int32_t j = 1; j < cols; j++) {
        int32_t x, y;
        p = st_load2_next(p, &x, &y);
        a = th_sadd16(a, x);
        b = th_sadd16(b, y);
    }
    return s1_avg4_t(a, b, c, even);
}

/* n pixels (stride sw columns apart) whose windows are the `cols` columns from cs (the
 * grouped sums at the first window's first column; gstride words from one group to the
 * next; count >= 3): one pixel (an edge) its groups in one loop, else group by group its n
 * pixels. cols, even and clamp are constants of each copy. */
TH_INLINE void st_gspan_t(const int32_t *cs, int32_t gstride, int32_t cols, int32_t n,
                          int32_t sw, int32_t ch, const s1_consts *cp, int8_t *dst, int even,
                          int clamp)
{
    s1_consts c = *cp;
    c.clamp = clamp;
    if (n == 1) {
        int8_t *const last = dst + ch - 4; /* the last group ends at C - 1 */
        for (;; cs += gstride, dst += 4) {
            if (dst > last) {
                dst = last;
            }
            th_write_s32(dst, st_gavg(cs, cols, &c, even));
            if (dst == last) {
                return;
            }
        }
    }
    for (int32_t k = 0;; cs += gstride) {
        const int32_t *p = cs;
        int8_t *o = dst + k;
        for (int32_t i = 0; i < n; i++, p += 2 * sw, o += ch) {
            th_write_s32(o, st_gavg(p, cols, &c, even));
        }
        k += 4;
        if (k >= ch) {
            return;
        }
        k = k + 4 > ch ? ch - 4 : k;
    }
}

#define TH_ST_GCOLS(E, N) st_gspan_t(cs, gstride, N, n, sw, ch, &c, dst, E, 0)

__attribute__((noinline)) static void st_gspan(const int32_t *cs, int32_t gstride,
                                               int32_t cols, int32_t n, int32_t sw,
                                               int32_t ch, const avg_s1_div *dp, int8_t *dst)
{
    const s1_consts c = s1_consts_of(dp);
    if (c.clamp) {
        if (c.even) {
            st_gspan_t(cs, gstride, cols, n, sw, ch, &c, dst, 1, 1);
        } else {
            st_gspan_t(cs, gstride, cols, n, sw, ch, &c, dst, 0, 1);
        }
    } else if (c.even) {
        TH_ST_BY_COLS(TH_ST_GCOLS, 1)
    } else {
        TH_ST_BY_COLS(TH_ST_GCOLS, 0)
    }
}
#undef TH_ST_GCOLS
#undef TH_ST_BY_COLS

static void avg_strided_image(const th_pool_params *p, const th_dims *in, const int8_t *image,
                              const th_dims *out, int8_t *dst, int16_t *cs, int grouped)
{
    const int32_t in_w = in->w, ch = in->c, row = in_w * ch;
    const int32_t sw = p->stride.w, fw = p->filter.w, pw = p->padding.w;
    const int32_t act_min = p->activation.min, act_max = p->activation.max;
    avg_s1_div dv;
    dv.lo = (uint32_t)(act_min + 128) * 0x01010101u;
    dv.hi = (uint32_t)(act_max + 128) * 0x01010101u;
    dv.clamp = act_min > -128 || act_max < 127;
    dv.count = 0;
    const th_nn_window w0 = th_nn_window_at(0, sw, pw, fw, in_w);
    const th_nn_window wl = th_nn_window_at(out->w - 1, sw, pw, fw, in_w);
    const int32_t x0 = w0.origin + w0.start, x1 = wl.origin + wl.end;
    int32_t *gs = (int32_t *)(void *)cs; /* grouped: word-aligned scratch */
    if (!grouped) {
        /* the lanes a group of C < 4 channels reads past the last column: zero */
        cs[x1 * ch] = 0;
        cs[x1 * ch + 1] = 0;
    }
    /* pixels [ia, ib): windows of fw columns inside the input */
    const int32_t ia = TH_MIN(out->w, (pw + sw - 1) / sw);
    const int32_t ib = TH_MAX(ia, TH_MIN(out->w, in_w - fw + pw >= 0 ? (in_w - fw + pw) / sw + 1
                                                                      : 0));
    /* the span [ia, ib) by AVG_STRIDED_PAIRS, the column sums then only for edge pixels */
    const int pairs = !grouped && ch == 2 && fw == 2 && ib - ia >= 2 &&
                      TH_NN_PATH(AVG_STRIDED_PAIRS);
    const int sums = !pairs || ia > 0 || ib < out->w;
    for (int32_t oy = 0; oy < out->h; oy++, dst += out->w * ch) {
        const th_nn_window wy = th_nn_window_at(oy, p->stride.h, p->padding.h, p->filter.h,
                                                in->h);
        const int32_t rows = wy.end - wy.start, y0 = wy.origin + wy.start;
        if (!sums && rows >= 2) {
            /* the whole row one span (pw 0: from column 0), no per-pixel geometry: ~40
             * instructions a row less (11x28x2 k6x2 s2) */
            if (2 * rows != dv.count) {
                avg_s1_div_set(&dv, 2 * rows);
            }
            st_pairs(image + y0 * row, row, rows, out->w, sw * ch, &dv, dst);
            continue;
        }
        if (grouped) {
            st_gcols(gs, image + y0 * row + x0 * ch, row, ch, x1 - x0, rows);
        } else if (sums) {
            st_cols(cs + x0 * ch, image + y0 * row + x0 * ch, row, (x1 - x0) * ch, rows);
        }
        for (int32_t ox = 0; ox < out->w;) {
            const th_nn_window wx = th_nn_window_at(ox, sw, pw, fw, in_w);
            const int32_t cols = wx.end - wx.start, xs = wx.origin + wx.start;
            const int32_t n = ox == ia && ib > ia ? ib - ia : 1;
            const int32_t count = rows * cols;
            if (count >= 3) {
                if (count != dv.count) {
                    avg_s1_div_set(&dv, count);
                }
                if (grouped) {
                    st_gspan(gs + 2 * (xs - x0), 2 * (x1 - x0), cols, n, sw, ch, &dv,
                             dst + ox * ch);
                } else if (pairs && n > 1) {
                    st_pairs(image + y0 * row + xs * ch, row, rows, n, sw * ch, &dv,
                             dst + ox * ch);
                } else {
                    st_span(cs + xs * ch, cols, n, sw, ch, &dv, dst + ox * ch);
                }
            } else {
                /* one or two taps: from the input */
                const int8_t *top = image + y0 * row;
                for (int32_t f = 0; f < n * ch; f++) {
                    const int32_t x = xs + f / ch * sw, c = f % ch;
                    int32_t s = 0;
                    for (int32_t y = 0; y < rows; y++) {
                        for (int32_t j = 0; j < cols; j++) {
                            s += top[y * row + (x + j) * ch + c];
                        }
                    }
                    dst[ox * ch + f] = (int8_t)th_clamp(avg_round(s, count), act_min, act_max);
                }
            }
            ox += n;
        }
    }
}
#endif

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* ---- DSP direct path: every window summed in int16 lanes (no scratch) --------------------
 *
 * For windows of at most 256 taps. Four channels at a time (SXTAB16 and its ror #8 form
 * into two registers; the last group of a count that is not a multiple of four is the four
 * channels ending at C - 1, its bytes written twice with the same values: a pixel's bytes
 * are written after every read of its window, which they never overlap, th_nn.h (c)), the
 * average by the reciprocal (s1_avg4, count >= 3) or avg_round; 1-3 channels one byte at a
 * time (1-2: window rows four bytes at a time), the channel count a constant of each loop. */
TH_INLINE void direct_small(const int8_t *px, int32_t rows, int32_t row_step, int32_t cols,
                            int32_t ch, int32_t count, const s1_consts *c, int32_t act_min,
                            int32_t act_max, int8_t *dst)
{
    int32_t acc[3] = {0, 0, 0};
    if (ch < 3) {
        /* A window row is cols * ch contiguous bytes: four at a time into int16 lanes (byte
         * j into a if j % 4 is 0 or 2, else b: channel j % ch; at most 128 bytes a lane
         * with 256 taps), the rest one at a time. */
        const int32_t n = cols * ch;
        int32_t a = 0, b = 0;
        for (int32_t y = 0; y < rows; y++, px += row_step) {
            int32_t j = 0;
            for (; j + 4 <= n; j += 4) {
                const int32_t w = th_read_s32(px + j);
                a = th_sxtab16(a, w);
                b = th_sxtab16_ror8(b, w);
            }
            for (; j < n; j++) {
                acc[j & (ch - 1)] += px[j];
            }
        }
        acc[0] +=
            (int16_t)(uint16_t)((uint32_t)a & 0xFFFFu) + (int16_t)(uint16_t)((uint32_t)a >> 16);
        acc[ch - 1] +=
            (int16_t)(uint16_t)((uint32_t)b & 0xFFFFu) + (int16_t)(uint16_t)((uint32_t)b >> 16);
    } else {
        for (int32_t y = 0; y < rows; y++, px += row_step) {
            const int8_t *q = px;
            for (int32_t x = 0; x < cols; x++, q += ch) {
#pragma GCC unroll 3
                for (int32_t k = 0; k < ch; k++) {
                    acc[k] += q[k];
                }
            }
        }
    }
#pragma GCC unroll 3
    for (int32_t k = 0; k < ch; k++) {
        dst[k] = count >= 3 ? s1_avg1(acc[k], c)
                            : (int8_t)th_clamp(avg_round(acc[k], count), act_min, act_max);
    }
}

__attribute__((noinline)) static void avg_direct_lanes(const th_pool_params *params,
                                                       const th_dims *in, const int8_t *input,
                                                       const th_dims *out, int8_t *output)
{
    const int32_t in_h = in->h, in_w = in->w, ch = in->c, row = in_w * ch;
    const int32_t act_min = params->activation.min, act_max = params->activation.max;
    avg_s1_div dv;
    dv.lo = (uint32_t)(act_min + 128) * 0x01010101u;
    dv.hi = (uint32_t)(act_max + 128) * 0x01010101u;
    dv.clamp = act_min > -128 || act_max < 127;
    avg_s1_div_set(&dv, 3); /* every field set; reset for each count >= 3 */
    s1_consts c = s1_consts_of(&dv);
    int8_t *dst = output;
    for (int32_t n = 0; n < in->n; n++) {
        const int8_t *image = input + n * in_h * row;
        for (int32_t oy = 0; oy < out->h; oy++) {
            const th_nn_window wy = th_nn_window_at(oy, params->stride.h, params->padding.h,
                                                    params->filter.h, in_h);
            const int32_t rows = wy.end - wy.start;
            for (int32_t ox = 0; ox < out->w; ox++, dst += ch) {
                const th_nn_window wx = th_nn_window_at(ox, params->stride.w,
                                                        params->padding.w, params->filter.w,
                                                        in_w);
                const int32_t cols = wx.end - wx.start;
                const int32_t count = rows * cols;
                if (count >= 3 && count != dv.count) {
                    avg_s1_div_set(&dv, count);
                    c = s1_consts_of(&dv);
                }
                const int8_t *base =
                    image + (wy.origin + wy.start) * row + (wx.origin + wx.start) * ch;
                if (TH_NN_KEEP_AVG_DIRECT_SMALL && ch < 4) {
                    if (ch == 1) {
                        direct_small(base, rows, row, cols, 1, count, &c, act_min, act_max,
                                     dst);
                    } else if (ch == 2) {
                        direct_small(base, rows, row, cols, 2, count, &c, act_min, act_max,
                                     dst);
                    } else {
                        direct_small(base, rows, row, cols, 3, count, &c, act_min, act_max,
                                     dst);
                    }
                    continue;
                }
                for (int32_t k = 0; k < ch; k += 4) {
                    if (k + 4 > ch) {
                        k = ch - 4;
                    }
                    int32_t a = 0, b = 0;
                    const int8_t *py = base + k;
                    for (int32_t y = 0; y < rows; y++, py += row) {
                        const int8_t *q = py;
                        for (int32_t x = 0; x < cols; x++, q += ch) {
                            const int32_t w = th_read_s32(q);
                            a = th_sxtab16(a, w);
                            b = th_sxtab16_ror8(b, w);
                        }
                    }
                    if (count >= 3) {
                        th_write_s32(dst + k, s1_avg4(a, b, &c));
                    } else {
                        const int32_t v[4] = {(int16_t)(uint16_t)((uint32_t)a & 0xFFFFu),
                                              (int16_t)(uint16_t)((uint32_t)b & 0xFFFFu),
                                              (int16_t)(uint16_t)((uint32_t)a >> 16),
                                              (int16_t)(uint16_t)((uint32_t)b >> 16)};
                        for (int32_t j = 0; j < 4; j++) {
                            dst[k + j] =
                                (int8_t)th_clamp(avg_round(v[j], count), act_min, act_max);
                        }
                    }
                }
            }
        }
    }
}
#endif

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* ---- DSP global path (AVG_GLOBAL): one output pixel whose window spans whole rows -------
 *
 * The window's input is then `pixels` contiguous pixels of C bytes. C >= 4: four channels
 * at a time down the pixels (SXTAB16 and its ror #8 form into int16 lanes (c0, c2), (c1,
 * c3), added into int32 totals every 256 pixels: |lane| <= 128 * 256), four pixels a loop
 * step, the last group the four channels ending at C - 1 (its bytes written twice, the same
 * values). C < 4 (AVG_GLOBAL_SMALL): the flat bytes, three words a step. Then one division per channel (avg_round).
 * The output pixel is written only after its window is read (th_nn.h (c)). */
#define TH_AVG_GLOBAL_BLOCK 256

/* The two int16 lanes of a word, sign-extended. */
TH_INLINE int32_t avg_lane_lo(int32_t x)
{
    return (int16_t)(uint16_t)((uint32_t)x & 0xFFFFu);
}
TH_INLINE int32_t avg_lane_hi(int32_t x)
{
    return (int16_t)(uint16_t)((uint32_t)x >> 16);
}

/* Sums of four channels over n pixels (ch bytes apart) from p into s[0..3]. */
static void glob_group(const int8_t *p, int32_t n, int32_t ch, int32_t *s)
{
    s[0] = s[1] = s[2] = s[3] = 0;
    for (int32_t i = 0; i < n; i += TH_AVG_GLOBAL_BLOCK) {
        const int32_t blk = TH_MIN(TH_AVG_GLOBAL_BLOCK, n - i);
        int32_t a = 0, b = 0;
        /* integer offsets: no pointer past the input */
        for (int32_t o = 0, end = (blk & ~3) * ch; o != end; o += 4 * ch) {
            const int32_t w0 = th_read_s32(p + o), w1 = th_read_s32(p + o + ch);
            const int32_t w2 = th_read_s32(p + o + 2 * ch), w3 = th_read_s32(p + o + 3 * ch);
            a = th_sxtab16(th_sxtab16(a, w0), w1);
            b = th_sxtab16_ror8(th_sxtab16_ror8(b, w0), w1);
            a = th_sxtab16(th_sxtab16(a, w2), w3);
            b = th_sxtab16_ror8(th_sxtab16_ror8(b, w2), w3);
        }
        p += (blk & ~3) * ch;
        for (int32_t j = blk & ~3; j < blk; j++, p += ch) {
            const int32_t w = th_read_s32(p);
            a = th_sxtab16(a, w);
            b = th_sxtab16_ror8(b, w);
        }
        s[0] += avg_lane_lo(a);
        s[1] += avg_lane_lo(b);
        s[2] += avg_lane_hi(a);
        s[3] += avg_lane_hi(b);
    }
}

/* Sums of C < 4 channels over the n flat bytes from p into s[0..C-1], three words a step
 * (12 bytes, a multiple of C: byte j is channel j % C, each lane one channel's). */
static void glob_flat(const int8_t *p, int32_t n, int32_t ch, int32_t *s)
{
    int32_t j = 0;
    while (j + 12 <= n) {
        int32_t lane[6] = {0, 0, 0, 0, 0, 0}; /* (bytes 0, 2), (1, 3) of each word */
        const int32_t end = j + TH_MIN(n - j, TH_AVG_GLOBAL_BLOCK * 12) / 12 * 12;
        for (; j < end; j += 12) {
#pragma GCC unroll 3
            for (int32_t w = 0; w < 3; w++) {
                const int32_t v = th_read_s32(p + j + 4 * w);
                lane[2 * w] = th_sxtab16(lane[2 * w], v);
                lane[2 * w + 1] = th_sxtab16_ror8(lane[2 * w + 1], v);
            }
        }
        for (int32_t w = 0; w < 3; w++) {
            s[(4 * w) % ch] += avg_lane_lo(lane[2 * w]);
            s[(4 * w + 2) % ch] += avg_lane_hi(lane[2 * w]);
            s[(4 * w + 1) % ch] += avg_lane_lo(lane[2 * w + 1]);
            s[(4 * w + 3) % ch] += avg_lane_hi(lane[2 * w + 1]);
        }
    }
    for (; j < n; j++) {
        s[j % ch] += p[j];
    }
}

/* dst[j] = the clamped average of s[j] over count taps, j < n. */
static void glob_store(const int32_t *s, int32_t n, int32_t count, int32_t act_min,
                       int32_t act_max, int8_t *dst)
{
    for (int32_t j = 0; j < n; j++) {
        dst[j] = (int8_t)th_clamp(avg_round(s[j], count), act_min, act_max);
    }
}

/* The global path when it applies (one output pixel, its window whole rows): 1, else 0. */
__attribute__((noinline)) static int avg_global(const th_pool_params *p, const th_dims *in,
                                                const int8_t *input, int8_t *output)
{
    const int32_t in_w = in->w, ch = in->c, row = in_w * ch;
    const th_nn_window wy = th_nn_window_at(0, p->stride.h, p->padding.h, p->filter.h, in->h);
    const th_nn_window wx = th_nn_window_at(0, p->stride.w, p->padding.w, p->filter.w, in_w);
    if (wx.origin + wx.start != 0 || wx.origin + wx.end != in_w ||
        !(ch >= 4 ? TH_NN_PATH(AVG_GLOBAL) : TH_NN_PATH(AVG_GLOBAL_SMALL))) {
        return 0;
    }
    const int32_t pixels = (wy.end - wy.start) * in_w;
    const int32_t lo = p->activation.min, hi = p->activation.max;
    for (int32_t n = 0; n < in->n; n++) {
        const int8_t *window = input + (n * in->h + wy.origin + wy.start) * row;
        int8_t *dst = output + n * ch;
        int32_t s[4] = {0, 0, 0, 0};
        if (ch < 4) {
            glob_flat(window, pixels * ch, ch, s);
            glob_store(s, ch, pixels, lo, hi, dst);
            continue;
        }
        for (int32_t k = 0; k < ch; k += 4) {
            const int32_t kk = k + 4 > ch ? ch - 4 : k;
            glob_group(window + kk, pixels, ch, s);
            glob_store(s, 4, pixels, lo, hi, dst + kk);
        }
    }
    return 1;
}
#endif

/* Every window summed directly (no scratch), TH_AVGPOOL_CHUNK channels at a time. Out of
 * line: the separable path's registers stay out of its loops. */
#if !TH_NN_MVE
__attribute__((noinline)) static void avg_direct(const th_pool_params *params,
                                                 const th_dims *input_dims, const int8_t *input,
                                                 const th_dims *output_dims, int8_t *output)
{
#if TH_NN_HAS_DSP
    /* here, not in th_avgpool_s8: its inlined separable loops keep their registers */
    if ((TH_NN_KEEP_AVG_GLOBAL || TH_NN_KEEP_AVG_GLOBAL_SMALL) &&
        (int64_t)output_dims->h * output_dims->w == 1 &&
        avg_global(params, input_dims, input, output)) {
        return;
    }
#endif
    const int32_t in_h = input_dims->h;
    const int32_t in_w = input_dims->w;
    const int32_t channels = input_dims->c;
    const int32_t act_min = params->activation.min;
    const int32_t act_max = params->activation.max;
    int8_t *out = output;
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *image = input + (int32_t)n * in_h * in_w * channels;
        for (int32_t oy = 0; oy < output_dims->h; oy++) {
            const th_nn_window wy = th_nn_window_at(oy, params->stride.h, params->padding.h,
                                                    params->filter.h, in_h);
            for (int32_t ox = 0; ox < output_dims->w; ox++) {
                const th_nn_window wx = th_nn_window_at(ox, params->stride.w,
                                                        params->padding.w, params->filter.w,
                                                        in_w);
                const int32_t count = (wy.end - wy.start) * (wx.end - wx.start);
                for (int32_t c0 = 0; c0 < channels; c0 += TH_AVGPOOL_CHUNK) {
                    const int32_t cn =
                        channels - c0 < TH_AVGPOOL_CHUNK ? channels - c0 : TH_AVGPOOL_CHUNK;
                    int32_t acc[TH_AVGPOOL_CHUNK];
                    for (int32_t k = 0; k < cn; k++) {
                        acc[k] = 0;
                    }
                    for (int32_t fy = wy.start; fy < wy.end; fy++) {
                        /* integer index first: no pointer ever leaves the array */
                        const int32_t row = (wy.origin + fy) * in_w + wx.origin;
                        for (int32_t fx = wx.start; fx < wx.end; fx++) {
                            const int8_t *px = image + (row + fx) * channels + c0;
                            int32_t k = 0;
                            for (; k + 4 <= cn; k += 4) {
                                acc[k] += px[k];
                                acc[k + 1] += px[k + 1];
                                acc[k + 2] += px[k + 2];
                                acc[k + 3] += px[k + 3];
                            }
                            for (; k < cn; k++) {
                                acc[k] += px[k];
                            }
                        }
                    }
                    for (int32_t k = 0; k < cn; k++) {
                        int32_t v = avg_round(acc[k], count);
                        v = v < act_min ? act_min : (v > act_max ? act_max : v);
                        out[c0 + k] = (int8_t)v;
                    }
                }
                out += channels;
            }
        }
    }
}

#endif

#if TH_NN_MVE
/* avg_direct on MVE: 16 channels at a time, int16 lane sums over at most 256 taps
 * (|sum| <= 128 * 256 fits) widened into int32, four lanes divided at a time. */
__attribute__((noinline)) static void avg_direct_mve(const th_pool_params *params,
                                                     const th_dims *input_dims,
                                                     const int8_t *input,
                                                     const th_dims *output_dims,
                                                     int8_t *output)
{
    const int32_t in_h = input_dims->h;
    const int32_t in_w = input_dims->w;
    const int32_t ch = input_dims->c;
    avg_div dv;
    dv.count = 0;
    dv.m = 0u;
    dv.half = 0;
    dv.lo = params->activation.min;
    dv.hi = params->activation.max;
    int8_t *out = output;
    for (int32_t n = 0; n < input_dims->n; n++) {
        const int8_t *image = input + (int32_t)n * in_h * in_w * ch;
        for (int32_t oy = 0; oy < output_dims->h; oy++) {
            const th_nn_window wy = th_nn_window_at(oy, params->stride.h, params->padding.h,
                                                    params->filter.h, in_h);
            for (int32_t ox = 0; ox < output_dims->w; ox++) {
                const th_nn_window wx = th_nn_window_at(ox, params->stride.w,
                                                        params->padding.w, params->filter.w,
                                                        in_w);
                avg_div_set(&dv, (wy.end - wy.start) * (wx.end - wx.start));
                const avg_div d = dv;
                for (int32_t c0 = 0; c0 < ch; c0 += 16) {
                    const int32_t cn = ch - c0;
                    const mve_pred16_t p0 = vctp16q((uint32_t)cn);
                    const mve_pred16_t p1 = vctp16q((uint32_t)(cn > 8 ? cn - 8 : 0));
                    int16x8_t a0 = vdupq_n_s16(0), a1 = vdupq_n_s16(0);
                    int32x4_t s[4];
                    for (int32_t j = 0; j < 4; j++) {
                        s[j] = vdupq_n_s32(0);
                    }
                    int32_t taps = 0;
                    for (int32_t fy = wy.start; fy < wy.end; fy++) {
                        const int32_t row = (wy.origin + fy) * in_w + wx.origin;
                        int32_t fx = wx.start;
                        while (fx < wx.end) {
                            const int32_t room = 256 - taps;
                            const int32_t blk = wx.end - fx < room ? wx.end - fx : room;
                            const int8_t *px = image + (row + fx) * ch + c0;
                            for (int32_t i = 0; i < blk; i++, px += ch) {
                                a0 = vaddq_s16(a0, vldrbq_z_s16(px, p0));
                                a1 = vaddq_s16(a1, vldrbq_z_s16(px + 8, p1));
                            }
                            fx += blk;
                            taps += blk;
                            if (taps == 256) {
                                th_mve_widen16(&a0, &a1, s);
                                taps = 0;
                            }
                        }
                    }
                    th_mve_widen16(&a0, &a1, s);
                    for (int32_t j = 0; j < 4 && 4 * j < cn; j++) {
                        avg_store4(out + c0 + 4 * j, s[j], &d, vctp32q((uint32_t)(cn - 4 * j)));
                    }
                }
                out += ch;
            }
        }
    }
}
#endif

/* Whether each of n >= 1 windows along an axis has an input tap: a window has one iff
 * -filter < origin < in, and the origins increase, so the first and the last decide (O(1),
 * not a loop over the outputs: small planes pay it per call). */
static int avg_axis_covered(int32_t n, int32_t stride, int32_t pad, int32_t filter, int32_t in)
{
    const th_nn_window a = th_nn_window_at(0, stride, pad, filter, in);
    const th_nn_window b = th_nn_window_at(n - 1, stride, pad, filter, in);
    return a.end > a.start && b.end > b.start;
}

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* The largest d = output - input (bytes, one image) at which the stride-1 rows may read the
 * input row above each output row's windows: th_nn.h (c) with pixel (y, x), y > 0, also
 * reading from where pixel (y - 1, x)'s window starts (plan/overlap.py,
 * sliding_d_max_padded(row_above), grants no more). The first read of row y is input row
 * r(y) = max(y - 1 - pt, 0) (r(0) = 0) from column max(x - pl, 0); the bound is the least,
 * over rows, of row y's own pixels (least at x = min(pl, W' - 1)) and of its last pixel
 * against row y + 1's first read. Row by row: O(H'), small beside the pool. */
static int32_t avg_s1_d_max(const th_pool_params *p, const th_dims *in, const th_dims *out)
{
    const int32_t w = in->w, oh = out->h, ow = out->w, pt = p->padding.h;
    const int32_t left = TH_MIN(p->padding.w, ow - 1);
    int32_t r = 0; /* r(y) */
    int32_t best = -1 - left;
    for (int32_t y = 0; y < oh; y++) {
        best = TH_MIN(best, r * w - y * ow - 1 - left);
        r = TH_MAX(y - pt, 0); /* r(y + 1) */
        if (y + 1 < oh) {
            best = TH_MIN(best, r * w - (y + 1) * ow);
        }
    }
    return best * in->c;
}
#endif

th_status th_avgpool_s8(const th_context *ctx, const th_pool_params *params,
                        const th_dims *input_dims, const int8_t *input,
                        const th_dims *output_dims, int8_t *output)
{
    const th_status status = th_nn_check_pool(params, input_dims, input, output_dims, output);
    if (status != TH_OK) {
        return status;
    }
    const int32_t in_h = input_dims->h;
    const int32_t in_w = input_dims->w;
    const int32_t channels = input_dims->c;
    /* Refuse before writing anything: every window needs at least one input tap. */
    if (!avg_axis_covered(output_dims->h, params->stride.h, params->padding.h,
                          params->filter.h, in_h) ||
        !avg_axis_covered(output_dims->w, params->stride.w, params->padding.w,
                          params->filter.w, in_w)) {
        return TH_ERR_ARG;
    }
    const int32_t need = ctx != NULL && ctx->buf != NULL
                             ? avg_scratch_need(params, input_dims, output_dims)
                             : 0;
    if (need > 0 && ctx->size >= need) {
        int16_t *cs = (int16_t *)ctx->buf;
        int32_t *acc = (int32_t *)((int8_t *)ctx->buf + need - 4 * channels);
        const int32_t image_in = in_h * in_w * channels;
        const int32_t image_out = output_dims->h * output_dims->w * channels;
#if TH_NN_HAS_DSP && !TH_NN_MVE
        if (avg_strided_applies(params) && ((uintptr_t)ctx->buf & 3u) == 0u &&
            TH_NN_PATH(AVG_STRIDED)) {
            /* grouped when its sums fit (always at C % 4 == 0: 2 * W * C bytes) */
            const int grouped =
                channels >= 4 && st_group_bytes(input_dims->w, channels) <= ctx->size;
            for (int32_t n = 0; n < input_dims->n; n++) {
                avg_strided_image(params, input_dims, input + n * image_in, output_dims,
                                  output + n * image_out, cs, grouped);
            }
            return TH_OK;
        }
        if (avg_lanes_applies(params) && TH_NN_PATH(AVG_LANES)) {
            /* Spans channel by channel (and at stride 1 the fused order, which reads the
             * row above the windows) unless the output overlaps the input (in place) at a
             * d past avg_s1_d_max. */
            const uintptr_t i0 = (uintptr_t)input, o0 = (uintptr_t)output;
            int by_channel = o0 >= i0 + (uintptr_t)image_in * (uintptr_t)input_dims->n ||
                             i0 >= o0 + (uintptr_t)image_out * (uintptr_t)input_dims->n;
            const int32_t d_max = !by_channel && params->stride.h == 1 && params->stride.w == 1
                                      ? avg_s1_d_max(params, input_dims, output_dims)
                                      : INT32_MIN;
            for (int32_t n = 0; n < input_dims->n; n++) {
                int bc = by_channel;
                if (!bc && d_max != INT32_MIN) {
                    /* image n's d (modulo 2^32 like the addresses: signed on the target) */
                    const int32_t d = (int32_t)(uint32_t)(o0 + (uintptr_t)(n * image_out) -
                                                          i0 - (uintptr_t)(n * image_in));
                    bc = d <= d_max;
                }
                avg_lanes_image(params, input_dims, input + n * image_in, output_dims,
                                output + n * image_out, cs, (int16_t *)acc, bc);
            }
            return TH_OK;
        }
#endif
        if (TH_NN_PATH(AVG_SEPARABLE)) {
            for (int32_t n = 0; n < input_dims->n; n++) {
                avg_separable_image(params, input_dims, input + n * image_in, output_dims,
                                    output + n * image_out, cs, acc);
            }
            return TH_OK;
        }
    }
#if TH_NN_MVE
    avg_direct_mve(params, input_dims, input, output_dims, output);
#else
#if TH_NN_HAS_DSP
    /* Not for global pooling (one output pixel): AVG_GLOBAL (in avg_direct) when its window
     * is whole rows (KWS: ~1.1 instructions per element, 5.8 by the general loop), else the general
     * loop, which reads each input once there too; a model whose only pool is global (the
     * MLPerf Tiny ones) keeps ~0.8 KB less code. Fewer than four channels: a path of
     * its own (three specialized loops a model with wider pools need not link). */
    if ((int64_t)params->filter.h * params->filter.w <= 256 &&
        (int64_t)output_dims->h * output_dims->w > 1 &&
        (input_dims->c >= 4 ? TH_NN_PATH(AVG_DIRECT_LANES) : TH_NN_PATH(AVG_DIRECT_SMALL))) {
        avg_direct_lanes(params, input_dims, input, output_dims, output);
        return TH_OK;
    }
#endif
    avg_direct(params, input_dims, input, output_dims, output);
#endif
    return TH_OK;
}
