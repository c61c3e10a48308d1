/* th_nn_im2col_s16: one output pixel's receptive field as offset int16, in SMLAD order. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP

/* Element k of the column lives in word (k / 4) * stride + (k & 1), halfword (k >> 1) & 1:
 * chunk (x0, x1, x2, x3) is stored as words (x0, x2), (x1, x3), the order SXTB16 gives. */
static void put_s16(int32_t *dst, int32_t chunk_stride_words, int32_t k, int32_t v)
{
    char *base = (char *)(dst + (k / 4) * chunk_stride_words + (k & 1));
    th_write_s16(base + 2 * ((k >> 1) & 1), (int16_t)v);
}

/* Largest K the byte-staged path takes (a stack buffer of this many bytes). */
#define TH_IM2COL_BYTES 256

/* n bytes, a word at a time while it can (unaligned word access is fine on these cores).
 * No byte loops: gcc would turn them into memcpy/memset calls, slow for a few bytes. */
TH_INLINE void copy_bytes(int8_t *d, const int8_t *s, int32_t n)
{
    for (; n >= 4; n -= 4, d += 4, s += 4) {
        th_write_s32(d, th_read_s32(s));
    }
    if (n & 2) {
        d[0] = s[0];
        d[1] = s[1];
        d += 2;
        s += 2;
    }
    if (n & 1) {
        d[0] = s[0];
    }
}

TH_INLINE void fill_bytes(int8_t *d, int32_t v4, int32_t n)
{
    for (; n >= 4; n -= 4, d += 4) {
        th_write_s32(d, v4);
    }
    if (n & 2) {
        d[0] = (int8_t)v4;
        d[1] = (int8_t)v4;
        d += 2;
    }
    if (n & 1) {
        d[0] = (int8_t)v4;
    }
}

/* Input channels not a multiple of 4 (first layers: 1 or 3 channels): the column is
 * gathered as int8 first, the padding as -input_offset (it becomes 0 once widened with
 * the offset), then widened a word at a time. */
#if defined(__GNUC__) && !defined(__clang__)
/* Keep gcc from turning the short copy loops into memcpy/memset calls. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void gather_bytes(int8_t *b, const int8_t *input, const th_dims *input_dims,
                         const th_conv_params *params, const th_dims *filter_dims, int32_t y0,
                         int32_t x0, int32_t chunks)
{
    const int32_t cin = input_dims->c;
    const int32_t kw = filter_dims->w;
    const int32_t pad = (int32_t)(0x01010101u * (uint8_t)(-params->input_offset));
    const int row_run = params->dilation.w == 1;
    /* dilation.w 1: taps [lo, hi) of a row are inside, the others are padding */
    const int32_t lo = TH_MIN(kw, TH_MAX(0, -x0));
    const int32_t hi = TH_MAX(lo, TH_MIN(kw, input_dims->w - x0));
    int32_t k = 0;
    for (int32_t ky = 0; ky < filter_dims->h; ky++, k += kw * cin) {
        const int32_t y = y0 + ky * params->dilation.h;
        if (y < 0 || y >= input_dims->h) {
            fill_bytes(b + k, pad, kw * cin);
            continue;
        }
        const int8_t *row = input + (int64_t)y * input_dims->w * cin;
        if (row_run) {
            fill_bytes(b + k, pad, lo * cin);
            if (hi > lo) {
                copy_bytes(b + k + lo * cin, row + (int64_t)(x0 + lo) * cin, (hi - lo) * cin);
            }
            fill_bytes(b + k + hi * cin, pad, (kw - hi) * cin);
            continue;
        }
        for (int32_t kx = 0; kx < kw; kx++) {
            const int32_t x = x0 + kx * params->dilation.w;
            if (x >= 0 && x < input_dims->w) {
                copy_bytes(b + k + kx * cin, row + (int64_t)x * cin, cin);
            } else {
                fill_bytes(b + k + kx * cin, pad, cin);
            }
        }
    }
    fill_bytes(b + k, pad, chunks * 4 - k); /* K padding: widens to 0 */
}

static void im2col_bytes(int32_t *dst, int32_t chunk_stride_words, const int8_t *input,
                         const th_dims *input_dims, const th_conv_params *params,
                         const th_dims *filter_dims, int32_t y0, int32_t x0, int32_t chunks,
                         int32_t offset2)
{
    int32_t words[TH_IM2COL_BYTES / 4];
    gather_bytes((int8_t *)words, input, input_dims, params, filter_dims, y0, x0, chunks);
    for (int32_t j = 0; j < chunks; j++, dst += chunk_stride_words) {
        const int32_t w = words[j];
        dst[0] = th_sxtab16(offset2, w);
        dst[1] = th_sxtab16_ror8(offset2, w);
    }
}

/* Bytes [k0, k0 + n) of the segment [k, k + len) of the column: a copy from src, or the
 * padding value (src NULL). */
TH_INLINE void window_segment(int8_t *b, int32_t k0, int32_t n, int32_t k, int32_t len,
                              const int8_t *src, int32_t pad)
{
    const int32_t a = TH_MAX(k, k0);
    const int32_t e = TH_MIN(k + len, k0 + n);
    if (a >= e) {
        return;
    }
    if (src != NULL) {
        copy_bytes(b + (a - k0), src + (a - k), e - a);
    } else {
        fill_bytes(b + (a - k0), pad, e - a);
    }
}

/* gather_bytes for the column bytes [k0, k0 + n) only (K larger than the stack buffer):
 * the same segments, clipped to the window; filter rows outside it are skipped. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void gather_window(int8_t *b, const int8_t *input, const th_dims *input_dims,
                          const th_conv_params *params, const th_dims *filter_dims, int32_t y0,
                          int32_t x0, int32_t k0, int32_t n)
{
    const int32_t cin = input_dims->c;
    const int32_t kw = filter_dims->w;
    const int32_t run = kw * cin;
    const int32_t pad = (int32_t)(0x01010101u * (uint8_t)(-params->input_offset));
    const int row_run = params->dilation.w == 1;
    const int32_t lo = TH_MIN(kw, TH_MAX(0, -x0));
    const int32_t hi = TH_MAX(lo, TH_MIN(kw, input_dims->w - x0));
    const int32_t k_total = filter_dims->h * run;
    int32_t ky = k0 / run;
    for (int32_t k = ky * run; ky < filter_dims->h && k < k0 + n; ky++, k += run) {
        const int32_t y = y0 + ky * params->dilation.h;
        if (y < 0 || y >= input_dims->h) {
            window_segment(b, k0, n, k, run, NULL, pad);
            continue;
        }
        const int8_t *row = input + (int64_t)y * input_dims->w * cin;
        if (row_run) {
            window_segment(b, k0, n, k, lo * cin, NULL, pad);
            if (hi > lo) {
                window_segment(b, k0, n, k + lo * cin, (hi - lo) * cin,
                               row + (int64_t)(x0 + lo) * cin, pad);
            }
            window_segment(b, k0, n, k + hi * cin, (kw - hi) * cin, NULL, pad);
            continue;
        }
        for (int32_t kx = 0; kx < kw; kx++) {
            const int32_t x = x0 + kx * params->dilation.w;
            const int inside = x >= 0 && x < input_dims->w;
            window_segment(b, k0, n, k + kx * cin, cin,
                           inside ? row + (int64_t)x * cin : NULL, pad);
        }
    }
    window_segment(b, k0, n, k_total, th_round_up4(k_total) - k_total, NULL, pad);
}

/* Cin not a multiple of 4, K beyond the stack buffer: the column staged and widened one
 * window of TH_IM2COL_BYTES at a time. */
static void __attribute__((noinline))
im2col_windows(int32_t *dst, int32_t chunk_stride_words, const int8_t *input,
               const th_dims *input_dims, const th_conv_params *params,
               const th_dims *filter_dims, int32_t y0, int32_t x0, int32_t chunks,
               int32_t offset2)
{
    int32_t words[TH_IM2COL_BYTES / 4];
    for (int32_t j0 = 0; j0 < chunks; j0 += TH_IM2COL_BYTES / 4) {
        const int32_t m = TH_MIN(TH_IM2COL_BYTES / 4, chunks - j0);
        gather_window((int8_t *)words, input, input_dims, params, filter_dims, y0, x0, 4 * j0,
                      4 * m);
        for (int32_t j = 0; j < m; j++, dst += chunk_stride_words) {
            const int32_t w = words[j];
            dst[0] = th_sxtab16(offset2, w);
            dst[1] = th_sxtab16_ror8(offset2, w);
        }
    }
}

/* Any K and Cin, one tap at a time: the general gather every build keeps (th_nn_paths.h),
 * small rather than fast. Taps outside the input and the K padding widen to 0. */
static void __attribute__((noinline))
im2col_taps(int32_t *dst, int32_t chunk_stride_words, const int8_t *input,
            const th_dims *input_dims, const th_conv_params *params, const th_dims *filter_dims,
            int32_t y0, int32_t x0, int32_t chunks)
{
    const int32_t cin = input_dims->c;
    int32_t k = 0;
    for (int32_t ky = 0; ky < filter_dims->h; ky++) {
        const int32_t y = y0 + ky * params->dilation.h;
        for (int32_t kx = 0; kx < filter_dims->w; kx++) {
            const int32_t x = x0 + kx * params->dilation.w;
            const int inside = y >= 0 && y < input_dims->h && x >= 0 && x < input_dims->w;
            const int8_t *px = input + (inside ? ((int64_t)y * input_dims->w + x) * cin : 0);
            for (int32_t ci = 0; ci < cin; ci++, k++) {
                put_s16(dst, chunk_stride_words, k, inside ? px[ci] + params->input_offset : 0);
            }
        }
    }
    for (; k < 4 * chunks; k++) {
        put_s16(dst, chunk_stride_words, k, 0);
    }
}

/* Largest K of the byte-staged pixel pair (two stack buffers of this many bytes). */
#define TH_IM2COL_PAIR_BYTES 128

/* gather_bytes for a window inside the input horizontally with dilation.w 1: one run of
 * kw * cin bytes per filter row. */
TH_INLINE void gather_rows(int8_t *b, const int8_t *input, const th_dims *input_dims,
                           const th_conv_params *params, const th_dims *filter_dims, int32_t y0,
                           int32_t x0, int32_t chunks, int32_t pad)
{
    const int32_t run = filter_dims->w * input_dims->c;
    int32_t k = 0;
    for (int32_t ky = 0; ky < filter_dims->h; ky++, k += run) {
        const int32_t y = y0 + ky * params->dilation.h;
        if (y < 0 || y >= input_dims->h) {
            fill_bytes(b + k, pad, run);
        } else {
            copy_bytes(b + k, input + ((int64_t)y * input_dims->w + x0) * input_dims->c, run);
        }
    }
    fill_bytes(b + k, pad, chunks * 4 - k); /* K padding: widens to 0 */
}

/* Either gather, by whether the window is inside horizontally. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void gather_any(int8_t *b, const int8_t *input, const th_dims *input_dims,
                       const th_conv_params *params, const th_dims *filter_dims, int32_t y0,
                       int32_t x0, int32_t chunks)
{
    if (params->dilation.w == 1 && x0 >= 0 && x0 + filter_dims->w <= input_dims->w) {
        const int32_t pad = (int32_t)(0x01010101u * (uint8_t)(-params->input_offset));
        gather_rows(b, input, input_dims, params, filter_dims, y0, x0, chunks, pad);
    } else {
        gather_bytes(b, input, input_dims, params, filter_dims, y0, x0, chunks);
    }
}

/* Two windows in the same rows, both inside the input horizontally (dilation.w 1): per
 * filter row one run of kw * cin bytes for each, then both widened in one loop into the
 * interleaved (chunk stride 4) layout. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void im2col_row_pair_bytes(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                                  const th_conv_params *params, const th_dims *filter_dims,
                                  int32_t y0, int32_t x0, int32_t x1, int32_t chunks)
{
    int32_t words0[TH_IM2COL_PAIR_BYTES / 4];
    int32_t words1[TH_IM2COL_PAIR_BYTES / 4];
    int8_t *b0 = (int8_t *)words0;
    int8_t *b1 = (int8_t *)words1;
    const int32_t cin = input_dims->c;
    const int32_t run = filter_dims->w * cin;
    const int32_t step = (x1 - x0) * cin;
    const int32_t offset2 = (int32_t)(((uint32_t)params->input_offset << 16) |
                                      ((uint32_t)params->input_offset & 0xFFFFu));
    const int32_t pad = (int32_t)(0x01010101u * (uint8_t)(-params->input_offset));
    int32_t k = 0;
    for (int32_t ky = 0; ky < filter_dims->h; ky++, k += run) {
        const int32_t y = y0 + ky * params->dilation.h;
        if (y < 0 || y >= input_dims->h) {
            fill_bytes(b0 + k, pad, run);
            fill_bytes(b1 + k, pad, run);
            continue;
        }
        const int8_t *row = input + ((int64_t)y * input_dims->w + x0) * cin;
        copy_bytes(b0 + k, row, run);
        copy_bytes(b1 + k, row + step, run);
    }
    fill_bytes(b0 + k, pad, chunks * 4 - k); /* K padding: widens to 0 */
    fill_bytes(b1 + k, pad, chunks * 4 - k);
    for (int32_t j = 0; j < chunks; j++, dst += 4) {
        const int32_t w0 = words0[j];
        const int32_t w1 = words1[j];
        dst[0] = th_sxtab16(offset2, w0);
        dst[1] = th_sxtab16_ror8(offset2, w0);
        dst[2] = th_sxtab16(offset2, w1);
        dst[3] = th_sxtab16_ror8(offset2, w1);
    }
}

/* im2col_bytes for two pixels (window origins (y0, x0) and (y1, x1)), both widened in one
 * loop into the interleaved (chunk stride 4) layout. */
static void im2col_two_bytes(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                             const th_conv_params *params, const th_dims *filter_dims,
                             int32_t y0, int32_t x0, int32_t y1, int32_t x1, int32_t chunks)
{
    int32_t words0[TH_IM2COL_PAIR_BYTES / 4];
    int32_t words1[TH_IM2COL_PAIR_BYTES / 4];
    const int32_t offset2 = (int32_t)(((uint32_t)params->input_offset << 16) |
                                      ((uint32_t)params->input_offset & 0xFFFFu));
    gather_any((int8_t *)words0, input, input_dims, params, filter_dims, y0, x0, chunks);
    gather_any((int8_t *)words1, input, input_dims, params, filter_dims, y1, x1, chunks);
    for (int32_t j = 0; j < chunks; j++, dst += 4) {
        const int32_t w0 = words0[j];
        const int32_t w1 = words1[j];
        dst[0] = th_sxtab16(offset2, w0);
        dst[1] = th_sxtab16_ror8(offset2, w0);
        dst[2] = th_sxtab16(offset2, w1);
        dst[3] = th_sxtab16_ror8(offset2, w1);
    }
}

/* Cin not a multiple of 4, dilation.w 1 (path IM2COL_RUNS): the column is the filter rows'
 * runs of kw * cin bytes, each split into padding and a run of input bytes, widened word by
 * word straight from the input (unaligned loads) into chunks of chunk stride 4, one or two
 * pixels at a time. A chunk that straddles two runs is put together from the `have` bytes
 * left over from the last (low bytes of acc) and the first of the next; padding bytes are
 * -input_offset, which widen to 0. */
typedef struct {
    int32_t *d; /* the next chunk: pixel 0's lo, hi words, pixel 1's at d + 2 */
    uint32_t acc0; /* bytes not yet widened, the first in the low byte */
    uint32_t acc1;
    int32_t have; /* 0-3 */
    int32_t offset2;
    uint32_t pad4; /* the padding byte four times */
    int two; /* pixel 1 too (its input bytes `step` after pixel 0's) */
} th_runs;

TH_INLINE void runs_emit(th_runs *r, uint32_t w0, uint32_t w1)
{
    r->d[0] = th_sxtab16(r->offset2, (int32_t)w0);
    r->d[1] = th_sxtab16_ror8(r->offset2, (int32_t)w0);
    if (r->two) {
        r->d[2] = th_sxtab16(r->offset2, (int32_t)w1);
        r->d[3] = th_sxtab16_ror8(r->offset2, (int32_t)w1);
    }
    r->d += 4;
}

/* n >= 1 whole words at p (and p + step) widened into n chunks. */
TH_INLINE int32_t *runs_words(int32_t *c, const int8_t *p, int32_t step, int32_t n,
                              int32_t offset2, int two)
{
    if (two) {
        th_nn_widen_two(c, p, p + step, n, offset2);
        return c + 4 * n;
    }
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* 6 instructions per chunk: LDR, 2 SXTAB16, STRD, SUBS, BNE. */
    int32_t u;
    int32_t a;
    int32_t b;
    __asm__ volatile("1:\n\t"
                     "ldr %[u], [%[p0]], #4\n\t"
                     "sxtab16 %[a], %[o], %[u]\n\t"
                     "sxtab16 %[b], %[o], %[u], ror #8\n\t"
                     "strd %[a], %[b], [%[c]], #16\n\t"
                     "subs %[n], %[n], #1\n\t"
                     "bne 1b\n\t"
                     : [p0] "+r"(p), [c] "+r"(c), [n] "+r"(n), [u] "=&r"(u), [a] "=&r"(a),
                       [b] "=&r"(b)
                     : [o] "r"(offset2)
                     : "cc", "memory");
#else
    for (int32_t i = 0; i < n; i++, p += 4, c += 4) {
        const int32_t u = th_read_s32(p);
        c[0] = th_sxtab16(offset2, u);
        c[1] = th_sxtab16_ror8(offset2, u);
    }
#endif
    return c;
}

/* n input bytes at p (pixel 1's at p + step). */
TH_INLINE void runs_data(th_runs *r, const int8_t *p, int32_t step, int32_t n)
{
    if (n < 4) { /* a short run: byte by byte */
        for (int32_t i = 0; i < n; i++) {
            const uint32_t sh = 8u * (uint32_t)r->have;
            r->acc0 |= (uint32_t)(uint8_t)p[i] << sh;
            r->acc1 |= (r->two ? (uint32_t)(uint8_t)p[i + step] : 0u) << sh;
            if (++r->have == 4) {
                runs_emit(r, r->acc0, r->acc1);
                r->acc0 = 0;
                r->acc1 = 0;
                r->have = 0;
            }
        }
        return;
    }
    const int8_t *end = p + n;
    if (r->have != 0) { /* complete the straddling chunk with the run's first bytes */
        const uint32_t sh = 8u * (uint32_t)r->have;
        const uint32_t w1 = r->two ? r->acc1 | ((uint32_t)th_read_s32(p + step) << sh) : 0u;
        runs_emit(r, r->acc0 | ((uint32_t)th_read_s32(p) << sh), w1);
        p += 4 - r->have;
    }
    const int32_t left = (int32_t)(end - p);
    if (left >= 4) {
        r->d = runs_words(r->d, p, step, left >> 2, r->offset2, r->two);
    }
    r->have = left & 3;
    r->acc0 = 0;
    r->acc1 = 0;
    if (r->have != 0) { /* the last bytes, from the run's last word (n >= 4: inside it) */
        const uint32_t sh = 8u * (uint32_t)(4 - r->have);
        r->acc0 = (uint32_t)th_read_s32(end - 4) >> sh;
        r->acc1 = r->two ? (uint32_t)th_read_s32(end - 4 + step) >> sh : 0u;
    }
}

/* n padding bytes. */
TH_INLINE void runs_pad(th_runs *r, int32_t n)
{
    if (r->have != 0) {
        const int32_t take = TH_MIN(n, 4 - r->have);
        const uint32_t bytes = r->pad4 >> (8u * (uint32_t)(4 - take));
        r->acc0 |= bytes << (8u * (uint32_t)r->have);
        r->acc1 |= bytes << (8u * (uint32_t)r->have);
        r->have += take;
        n -= take;
        if (r->have < 4) {
            return;
        }
        runs_emit(r, r->acc0, r->acc1);
    }
    for (; n >= 4; n -= 4) {
        r->d[0] = 0;
        r->d[1] = 0;
        if (r->two) {
            r->d[2] = 0;
            r->d[3] = 0;
        }
        r->d += 4;
    }
    r->have = n;
    r->acc0 = n != 0 ? r->pad4 >> (8u * (uint32_t)(4 - n)) : 0u;
    r->acc1 = r->acc0;
}

/* The column of the window at (y0, x0) (and, two, of the one step input bytes further in
 * the same rows, with the same taps inside) into dst (chunk stride 4). */
TH_INLINE void im2col_runs(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                            const th_conv_params *params, const th_dims *filter_dims,
                            int32_t y0, int32_t x0, int32_t step, const int two)
{
    const int32_t cin = input_dims->c;
    const int32_t kw = filter_dims->w;
    const int32_t lo = TH_MIN(kw, TH_MAX(0, -x0));
    const int32_t hi = TH_MAX(lo, TH_MIN(kw, input_dims->w - x0));
    const int32_t offset = params->input_offset;
    th_runs r;
    r.d = dst;
    r.acc0 = 0;
    r.acc1 = 0;
    r.have = 0;
    r.offset2 = (int32_t)(((uint32_t)offset << 16) | ((uint32_t)offset & 0xFFFFu));
    r.pad4 = 0x01010101u * (uint8_t)(-offset);
    r.two = two;
    const int32_t row_bytes = input_dims->w * cin;
    const int8_t *first = input + (int64_t)(x0 + lo) * cin;
    for (int32_t ky = 0; ky < filter_dims->h; ky++) {
        const int32_t y = y0 + ky * params->dilation.h;
        if (y < 0 || y >= input_dims->h || hi == lo) {
            runs_pad(&r, kw * cin);
            continue;
        }
        if (lo > 0) {
            runs_pad(&r, lo * cin);
        }
        runs_data(&r, first + (int64_t)y * row_bytes, step, (hi - lo) * cin);
        if (hi < kw) {
            runs_pad(&r, (kw - hi) * cin);
        }
    }
    if (r.have != 0) { /* K padding */
        runs_pad(&r, 4 - r.have);
    }
}

/* im2col_runs of one window, and of two in the same rows with the same taps inside. */
static void __attribute__((noinline))
im2col_runs_one(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                const th_conv_params *params, const th_dims *filter_dims, int32_t y0,
                int32_t x0)
{
    im2col_runs(dst, input, input_dims, params, filter_dims, y0, x0, 0, 0);
}

static void __attribute__((noinline))
im2col_runs_two(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                const th_conv_params *params, const th_dims *filter_dims, int32_t y0,
                int32_t x0, int32_t step)
{
    im2col_runs(dst, input, input_dims, params, filter_dims, y0, x0, step, 1);
}

/* Largest K staged as bytes by im2col_staged (two stack buffers of this many bytes + 4). */
#define TH_STAGE_BYTES 256
#define TH_STAGE_WORDS (TH_STAGE_BYTES / 4 + 1)

/* n >= 4 bytes from s to d, whole words, the last overlapping. */
TH_INLINE void stage_copy(int8_t *d, const int8_t *s, int32_t n)
{
    const int32_t last = n - 4;
    int32_t i = 0;
    for (; i < last; i += 4) {
        th_write_s32(d + i, th_read_s32(s + i));
    }
    th_write_s32(d + last, th_read_s32(s + last));
}

/* The window at (y0, x0) as its K bytes (padding -input_offset) and the K padding at b
 * (room for K + 4 bytes): all padding first, a word at a time, then each filter row's taps
 * inside the input copied over it (whole words, the last overlapping the run's own bytes:
 * never read past the run). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void __attribute__((noinline))
stage_window(int8_t *b, const int8_t *input, const th_dims *input_dims,
             const th_conv_params *params, const th_dims *filter_dims, int32_t y0, int32_t x0,
             int32_t k_total)
{
    const int32_t cin = input_dims->c;
    const int32_t kw = filter_dims->w;
    const int32_t lo = TH_MIN(kw, TH_MAX(0, -x0));
    const int32_t hi = TH_MAX(lo, TH_MIN(kw, input_dims->w - x0));
    const int32_t pad4 = (int32_t)(0x01010101u * (uint8_t)(-params->input_offset));
    for (int32_t i = 0; i <= k_total; i += 4) {
        th_write_s32(b + i, pad4);
    }
    const int32_t run = (hi - lo) * cin;
    if (run == 0) {
        return;
    }
    const int32_t row_bytes = input_dims->w * cin;
    const int8_t *first = input + (int64_t)(x0 + lo) * cin;
    int8_t *d = b + lo * cin;
    for (int32_t ky = 0; ky < filter_dims->h; ky++, d += kw * cin) {
        const int32_t y = y0 + ky * params->dilation.h;
        if (y < 0 || y >= input_dims->h) {
            continue;
        }
        const int8_t *src = first + (int64_t)y * row_bytes;
        if (run >= 4) {
            stage_copy(d, src, run);
        } else {
            for (int32_t i = 0; i < run; i++) {
                d[i] = src[i];
            }
        }
    }
}

/* A filter row's taps inside (run bytes, none when 0) from input + offset to d (the address
 * formed only when there are taps: offsets of windows outside may point anywhere). */
TH_INLINE void stage_run(int8_t *d, const int8_t *input, ptrdiff_t offset, int32_t run)
{
    if (run >= 4) {
        stage_copy(d, input + offset, run);
        return;
    }
    for (int32_t i = 0; i < run; i++) {
        d[i] = input[offset + i];
    }
}

/* stage_window of the two windows at (y0, x0) and (y0, x1), not both inside the input, into
 * b and b + 4 * TH_STAGE_WORDS: both padded first, then one loop over the filter rows inside
 * the input alone (bounds found once: rows outside cost nothing) copying each window's taps
 * inside. Two calls of stage_window test every filter row twice (about 30 instructions a row
 * and window; 4x34x5 k9x1: 290 a window). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void __attribute__((noinline))
stage_pair_rows(int8_t *b, const int8_t *input, const th_dims *input_dims,
                const th_conv_params *params, const th_dims *filter_dims, int32_t y0,
                int32_t x0, int32_t x1, int32_t k_total)
{
    const int32_t cin = input_dims->c;
    const int32_t kw = filter_dims->w;
    const int32_t lo0 = TH_MIN(kw, TH_MAX(0, -x0));
    const int32_t hi0 = TH_MAX(lo0, TH_MIN(kw, input_dims->w - x0));
    const int32_t lo1 = TH_MIN(kw, TH_MAX(0, -x1));
    const int32_t hi1 = TH_MAX(lo1, TH_MIN(kw, input_dims->w - x1));
    const int32_t pad4 = (int32_t)(0x01010101u * (uint8_t)(-params->input_offset));
    int8_t *b1 = b + 4 * TH_STAGE_WORDS;
    for (int32_t i = 0; i <= k_total; i += 4) {
        th_write_s32(b + i, pad4);
        th_write_s32(b1 + i, pad4);
    }
    int32_t ky;
    int32_t ky_hi;
    th_nn_rows_inside(y0, params->dilation.h, filter_dims->h, input_dims->h, &ky, &ky_hi);
    const int32_t run0 = (hi0 - lo0) * cin;
    const int32_t run1 = (hi1 - lo1) * cin;
    const int32_t row_bytes = input_dims->w * cin;
    const int32_t row_step = params->dilation.h * row_bytes;
    if (ky >= ky_hi) {
        return; /* every row outside */
    }
    ptrdiff_t o0 = (ptrdiff_t)(y0 + ky * params->dilation.h) * row_bytes;
    ptrdiff_t o1 = o0 + (ptrdiff_t)(x1 + lo1) * cin;
    o0 += (ptrdiff_t)(x0 + lo0) * cin;
    int8_t *d0 = b + ky * kw * cin + lo0 * cin;
    int8_t *d1 = b1 + ky * kw * cin + lo1 * cin;
    for (; ky < ky_hi; ky++, o0 += row_step, o1 += row_step, d0 += kw * cin, d1 += kw * cin) {
        stage_run(d0, input, o0, run0);
        stage_run(d1, input, o1, run1);
    }
}

/* stage_window of two windows wholly inside the input (rows of run >= 4 bytes), the
 * second's input bytes `step` after the first's. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void __attribute__((noinline))
stage_inside(int8_t *b, const int8_t *s, int32_t step, int32_t row_step, int32_t kh,
             int32_t run, int32_t k_total, int32_t pad4, int two)
{
    int8_t *d = b;
    for (int32_t ky = 0; ky < kh; ky++, d += run, s += row_step) {
        stage_copy(d, s, run);
        if (two) {
            stage_copy(d + 4 * TH_STAGE_WORDS, s + step, run);
        }
    }
    th_write_s32(b + k_total, pad4); /* K padding */
    if (two) {
        th_write_s32(b + 4 * TH_STAGE_WORDS + k_total, pad4);
    }
}

int th_nn_im2col_staged_applies(const th_dims *input_dims, const th_conv_params *params,
                                const th_dims *filter_dims)
{
    return params->dilation.w == 1 && filter_dims->w * input_dims->c >= 4 &&
           filter_dims->h * filter_dims->w * input_dims->c <= TH_STAGE_BYTES &&
           TH_NN_PATH(IM2COL_STAGED);
}

/* Two windows (any rows, any taps inside) staged, then widened in one loop. */
void th_nn_im2col_staged_s16(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                             const th_conv_params *params, const th_dims *filter_dims,
                             int32_t y0, int32_t x0, int32_t y1, int32_t x1)
{
    const int32_t k_total = filter_dims->h * filter_dims->w * input_dims->c;
    int32_t words[2 * TH_STAGE_WORDS];
    int8_t *b = (int8_t *)words;
    const int32_t offset = params->input_offset;
    const int32_t cin = input_dims->c;
    const int32_t kw = filter_dims->w;
    const int32_t y_span = (filter_dims->h - 1) * params->dilation.h;
    const int in0 = y0 >= 0 && y0 + y_span < input_dims->h && x0 >= 0 &&
                    x0 + kw <= input_dims->w;
    const int in1 = y1 >= 0 && y1 + y_span < input_dims->h && x1 >= 0 &&
                    x1 + kw <= input_dims->w;
    const int32_t row_bytes = input_dims->w * cin;
    const int32_t pad4 = (int32_t)(0x01010101u * (uint8_t)(-offset));
    /* The same rows, an edge crossed: one rows loop (left out, two windows staged apart). */
    if (y0 == y1 && !(in0 && in1) && TH_NN_PATH(IM2COL_PAIR_ROWS)) {
        stage_pair_rows(b, input, input_dims, params, filter_dims, y0, x0, x1, k_total);
    } else if (in0) { /* windows wholly inside: row copies only (both in one loop) */
        const int8_t *s0 = input + (int64_t)y0 * row_bytes + (int64_t)x0 * cin;
        const int32_t step = in1 ? (y1 - y0) * row_bytes + (x1 - x0) * cin : 0;
        stage_inside(b, s0, step, params->dilation.h * row_bytes, filter_dims->h, kw * cin,
                     k_total, pad4, in1);
        if (!in1) {
            stage_window(b + 4 * TH_STAGE_WORDS, input, input_dims, params, filter_dims, y1,
                         x1, k_total);
        }
    } else {
        stage_window(b, input, input_dims, params, filter_dims, y0, x0, k_total);
        if (!in1) {
            stage_window(b + 4 * TH_STAGE_WORDS, input, input_dims, params, filter_dims, y1,
                         x1, k_total);
        } else {
            stage_inside(b + 4 * TH_STAGE_WORDS,
                         input + (int64_t)y1 * row_bytes + (int64_t)x1 * cin, 0,
                         params->dilation.h * row_bytes, filter_dims->h, kw * cin, k_total,
                         pad4, 0);
        }
    }
    runs_words(dst, b, 4 * TH_STAGE_WORDS, th_round_up4(k_total) / 4,
               (int32_t)(((uint32_t)offset << 16) | ((uint32_t)offset & 0xFFFFu)), 1);
}

/* stage_pair_rows of the chunks [*j0, *j0 + n) alone: the union of the two windows' taps
 * inside the input runs from the first row inside at the leftmost tap inside to the last at
 * the rightmost, and only those words are padded, copied and widened (4x34x5 k9x1: 5-6 of
 * 12 chunks). Bytes before the first chunk are not staged: window byte k sits at
 * b[k - 4 * j0]. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
int32_t th_nn_im2col_span_s16(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                              const th_conv_params *params, const th_dims *filter_dims,
                              int32_t y0, int32_t x0, int32_t x1, int32_t *j0)
{
    int32_t words[2 * TH_STAGE_WORDS];
    int8_t *b = (int8_t *)words;
    int8_t *b1 = b + 4 * TH_STAGE_WORDS;
    const int32_t cin = input_dims->c;
    const int32_t kw = filter_dims->w;
    const int32_t kwc = kw * cin;
    const int32_t lo0 = TH_MIN(kw, TH_MAX(0, -x0));
    const int32_t hi0 = TH_MAX(lo0, TH_MIN(kw, input_dims->w - x0));
    const int32_t lo1 = TH_MIN(kw, TH_MAX(0, -x1));
    const int32_t hi1 = TH_MAX(lo1, TH_MIN(kw, input_dims->w - x1));
    const int32_t offset = params->input_offset;
    const int32_t pad4 = (int32_t)(0x01010101u * (uint8_t)(-offset));
    int32_t ky;
    int32_t ky_hi;
    th_nn_rows_inside(y0, params->dilation.h, filter_dims->h, input_dims->h, &ky, &ky_hi);
    int32_t first = 0; /* every tap outside: one chunk of zeros */
    int32_t end = 1;
    if (ky < ky_hi && (hi0 > lo0 || hi1 > lo1)) {
        first = ky * kwc + TH_MIN(lo0, lo1) * cin;
        end = (ky_hi - 1) * kwc + TH_MAX(hi0, hi1) * cin;
    }
    const int32_t c0 = first >> 2;
    const int32_t n = ((end + 3) >> 2) - c0;
    for (int32_t i = 0; i < 4 * n; i += 4) {
        th_write_s32(b + i, pad4);
        th_write_s32(b1 + i, pad4);
    }
    if (ky < ky_hi) {
        const int32_t run0 = (hi0 - lo0) * cin;
        const int32_t run1 = (hi1 - lo1) * cin;
        const int32_t row_bytes = input_dims->w * cin;
        const int32_t row_step = params->dilation.h * row_bytes;
        ptrdiff_t o0 = (ptrdiff_t)(y0 + ky * params->dilation.h) * row_bytes;
        ptrdiff_t o1 = o0 + (ptrdiff_t)(x1 + lo1) * cin;
        o0 += (ptrdiff_t)(x0 + lo0) * cin;
        int8_t *d0 = b + ky * kwc + lo0 * cin - 4 * c0;
        int8_t *d1 = b1 + ky * kwc + lo1 * cin - 4 * c0;
        for (; ky < ky_hi; ky++, o0 += row_step, o1 += row_step, d0 += kwc, d1 += kwc) {
            stage_run(d0, input, o0, run0);
            stage_run(d1, input, o1, run1);
        }
    }
    runs_words(dst, b, 4 * TH_STAGE_WORDS, n,
               (int32_t)(((uint32_t)offset << 16) | ((uint32_t)offset & 0xFFFFu)), 1);
    *j0 = c0;
    return n;
}

/* Whether im2col_runs takes this layer (and the build keeps it). */
TH_INLINE int runs_apply(const th_dims *input_dims, const th_conv_params *params,
                         const th_dims *filter_dims)
{
    return (input_dims->c & 3) != 0 && params->dilation.w == 1 &&
           filter_dims->w * input_dims->c >= 4 &&
           filter_dims->h * filter_dims->w * input_dims->c > TH_STAGE_BYTES &&
           TH_NN_PATH(IM2COL_RUNS);
}

void th_nn_im2col_two_s16(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                          const th_conv_params *params, const th_dims *filter_dims,
                          int32_t out_y0, int32_t out_x0, int32_t out_y1, int32_t out_x1)
{
    const int32_t k_total = filter_dims->h * filter_dims->w * input_dims->c;
    const int32_t sy = params->stride.h;
    if (th_nn_im2col_staged_applies(input_dims, params, filter_dims)) {
        th_nn_im2col_staged_s16(dst, input, input_dims, params, filter_dims,
                                out_y0 * sy - params->padding.h,
                                out_x0 * params->stride.w - params->padding.w,
                                out_y1 * sy - params->padding.h,
                                out_x1 * params->stride.w - params->padding.w);
        return;
    }
    if (runs_apply(input_dims, params, filter_dims)) {
        const int32_t sx = params->stride.w;
        const int32_t x0 = out_x0 * sx - params->padding.w;
        const int32_t x1 = out_x1 * sx - params->padding.w;
        const int32_t kw = filter_dims->w;
        /* one pass for both when their windows meet the same taps (both inside) */
        if (out_y0 == out_y1 && x0 >= 0 && x1 >= 0 && x0 + kw <= input_dims->w &&
            x1 + kw <= input_dims->w) {
            im2col_runs_two(dst, input, input_dims, params, filter_dims,
                            out_y0 * sy - params->padding.h, x0, (x1 - x0) * input_dims->c);
            return;
        }
        im2col_runs_one(dst, input, input_dims, params, filter_dims,
                        out_y0 * sy - params->padding.h, x0);
        im2col_runs_one(dst + 2, input, input_dims, params, filter_dims,
                        out_y1 * sy - params->padding.h, x1);
        return;
    }
    if ((input_dims->c & 3) != 0 && k_total <= TH_IM2COL_PAIR_BYTES) {
        const int32_t y0 = out_y0 * sy - params->padding.h;
        const int32_t x0 = out_x0 * params->stride.w - params->padding.w;
        const int32_t x1 = out_x1 * params->stride.w - params->padding.w;
        if (out_y0 == out_y1 && params->dilation.w == 1 && x0 >= 0 && x1 >= 0 &&
            x0 + filter_dims->w <= input_dims->w && x1 + filter_dims->w <= input_dims->w &&
            TH_NN_PATH(IM2COL_ROW_PAIR)) {
            im2col_row_pair_bytes(dst, input, input_dims, params, filter_dims, y0, x0, x1,
                                  th_round_up4(k_total) / 4);
            return;
        }
        if (TH_NN_PATH(IM2COL_TWO_BYTES)) {
            im2col_two_bytes(dst, input, input_dims, params, filter_dims, y0, x0,
                             out_y1 * sy - params->padding.h, x1, th_round_up4(k_total) / 4);
            return;
        }
    }
    th_nn_im2col_s16(dst, 4, input, input_dims, params, filter_dims, out_y0, out_x0);
    th_nn_im2col_s16(dst + 2, 4, input, input_dims, params, filter_dims, out_y1, out_x1);
}

void th_nn_im2col_s16(int32_t *dst, int32_t chunk_stride_words, const int8_t *input,
                      const th_dims *input_dims, const th_conv_params *params,
                      const th_dims *filter_dims, int32_t out_y, int32_t out_x)
{
    const int32_t cin = input_dims->c;
    const int32_t k_total = filter_dims->h * filter_dims->w * cin;
    const int32_t chunks = th_round_up4(k_total) / 4;
    const int32_t offset = params->input_offset;
    const int32_t offset2 = (int32_t)(((uint32_t)offset << 16) | ((uint32_t)offset & 0xFFFFu));
    const int32_t y0 = out_y * params->stride.h - params->padding.h;
    const int32_t x0 = out_x * params->stride.w - params->padding.w;

    if ((cin & 3) != 0) {
        if (k_total <= TH_IM2COL_BYTES && TH_NN_PATH(IM2COL_BYTES)) {
            im2col_bytes(dst, chunk_stride_words, input, input_dims, params, filter_dims, y0,
                         x0, chunks, offset2);
        } else if (k_total > TH_IM2COL_BYTES && TH_NN_PATH(IM2COL_WINDOWS)) {
            im2col_windows(dst, chunk_stride_words, input, input_dims, params, filter_dims, y0,
                           x0, chunks, offset2);
        } else {
            im2col_taps(dst, chunk_stride_words, input, input_dims, params, filter_dims, y0,
                        x0, chunks);
        }
        return;
    }

    /* The padded tail of the last chunk must read as zero. */
    dst[(chunks - 1) * chunk_stride_words] = 0;
    dst[(chunks - 1) * chunk_stride_words + 1] = 0;

    /* A filter row whose taps are all inside and adjacent (dilation 1) is one contiguous
     * run of KW * cin input bytes: one word loop over it. */
    const int row_runs = (cin & 3) == 0 && params->dilation.w == 1 && x0 >= 0 &&
                         x0 + filter_dims->w <= input_dims->w;
    const int32_t row_words = filter_dims->w * cin / 4;
    int32_t k = 0;
    for (int32_t ky = 0; ky < filter_dims->h; ky++) {
        const int32_t y = y0 + ky * params->dilation.h;
        if (row_runs) {
            int32_t *d = dst + (k / 4) * chunk_stride_words;
            k += filter_dims->w * cin;
            if (y < 0 || y >= input_dims->h) {
                for (int32_t i = 0; i < row_words; i++, d += chunk_stride_words) {
                    d[0] = 0;
                    d[1] = 0;
                }
                continue;
            }
            const int8_t *px = input + ((int64_t)y * input_dims->w + x0) * cin;
            for (int32_t i = 0; i < row_words; i++, d += chunk_stride_words, px += 4) {
                const int32_t w = th_read_s32(px);
                d[0] = th_sxtab16(offset2, w);
                d[1] = th_sxtab16_ror8(offset2, w);
            }
            continue;
        }
        for (int32_t kx = 0; kx < filter_dims->w; kx++, k += cin) {
            const int32_t x = x0 + kx * params->dilation.w;
            const int inside = y >= 0 && y < input_dims->h && x >= 0 && x < input_dims->w;
            const int8_t *px = inside ? input + ((int64_t)y * input_dims->w + x) * cin : input;
            if ((cin & 3) == 0) {
                int32_t *d = dst + (k / 4) * chunk_stride_words;
                for (int32_t i = 0; i < cin; i += 4, d += chunk_stride_words) {
                    if (inside) {
                        const int32_t w = th_read_s32(px + i);
                        d[0] = th_sxtab16(offset2, w);
                        d[1] = th_sxtab16_ror8(offset2, w);
                    } else {
                        d[0] = 0;
                        d[1] = 0;
                    }
                }
            } else {
                for (int32_t i = 0; i < cin; i++) {
                    put_s16(dst, chunk_stride_words, k + i, inside ? px[i] + offset : 0);
                }
            }
        }
    }
}

/* n widened words of the run at p, stored at c[4 * i] and, when d1 is not NULL, also at
 * d1[4 * i]. */
TH_INLINE void widen_run(int32_t *c, int32_t *d1, const int8_t *p, int32_t n, int32_t offset2)
{
    if (n <= 0) {
        return;
    }
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* gcc stores the pair as two STRs with separate pointer updates: 7 instructions per
     * word (10 for both pixels) where LDR, 2 SXTAB16, STRD (x2) and the loop take 6 (7). */
    int32_t w;
    int32_t lo;
    int32_t hi;
    if (d1 == NULL) {
        __asm__ volatile("1:\n\t"
                         "ldr %[w], [%[p]], #4\n\t"
                         "sxtab16 %[lo], %[o], %[w]\n\t"
                         "sxtab16 %[hi], %[o], %[w], ror #8\n\t"
                         "strd %[lo], %[hi], [%[c]], #16\n\t"
                         "subs %[n], %[n], #1\n\t"
                         "bne 1b\n\t"
                         : [p] "+r"(p), [c] "+r"(c), [n] "+r"(n), [w] "=&r"(w),
                           [lo] "=&r"(lo), [hi] "=&r"(hi)
                         : [o] "r"(offset2)
                         : "cc", "memory");
        return;
    }
    __asm__ volatile("1:\n\t"
                     "ldr %[w], [%[p]], #4\n\t"
                     "sxtab16 %[lo], %[o], %[w]\n\t"
                     "sxtab16 %[hi], %[o], %[w], ror #8\n\t"
                     "strd %[lo], %[hi], [%[c]], #16\n\t"
                     "strd %[lo], %[hi], [%[c1]], #16\n\t"
                     "subs %[n], %[n], #1\n\t"
                     "bne 1b\n\t"
                     : [p] "+r"(p), [c] "+r"(c), [c1] "+r"(d1), [n] "+r"(n), [w] "=&r"(w),
                       [lo] "=&r"(lo), [hi] "=&r"(hi)
                     : [o] "r"(offset2)
                     : "cc", "memory");
#else
    for (; n > 0; n--, p += 4, c += 4) {
        const int32_t w = th_read_s32(p);
        const int32_t lo = th_sxtab16(offset2, w);
        const int32_t hi = th_sxtab16_ror8(offset2, w);
        c[0] = lo;
        c[1] = hi;
        if (d1 != NULL) {
            d1[0] = lo;
            d1[1] = hi;
            d1 += 4;
        }
    }
#endif
}

/* Words [from, to) of the pair's row run (word i at in_row + run_off + 4 * i) clipped to
 * the words inside the input, [lo, hi): pixel 0 (pix0) stores word i at row[4 * i],
 * pixel 1 (pix1) at row[2 + 4 * (i - shift)]. */
TH_INLINE void widen_clipped(int32_t *row, const int8_t *in_row, int32_t run_off,
                             int32_t from, int32_t to,
                             int32_t lo, int32_t hi, int32_t shift, int pix0, int pix1,
                             int32_t offset2)
{
    const int32_t a = TH_MAX(from, lo);
    const int32_t b = TH_MIN(to, hi);
    if (a >= b) {
        return;
    }
    int32_t *d0 = pix0 ? row + 4 * a : NULL;
    int32_t *d1 = pix1 ? row + 2 + 4 * (a - shift) : NULL;
    widen_run(d0 != NULL ? d0 : d1, d0 != NULL ? d1 : NULL, in_row + (run_off + 4 * a), b - a,
              offset2);
}

/* th_nn_im2col_pair_s16 for a pair whose combined window is not inside the input
 * horizontally (s < kw, dilation.w 1, cin % 4 == 0): words [lo, hi) of each row run are
 * inside, the rows are zeroed first. */
static void __attribute__((noinline))
pair_clipped(int32_t *dst, const int8_t *input, const th_dims *input_dims,
             const th_conv_params *params, const th_dims *filter_dims, int32_t y0, int32_t x0)
{
    const int32_t cin = input_dims->c;
    const int32_t offset = params->input_offset;
    const int32_t offset2 = (int32_t)(((uint32_t)offset << 16) | ((uint32_t)offset & 0xFFFFu));
    const int32_t row_words = filter_dims->w * cin / 4;
    const int32_t shift_words = params->stride.w * cin / 4;
    const int32_t total_words = row_words + shift_words;
    const int32_t lo = TH_MIN(total_words, TH_MAX(0, -x0) * (cin / 4));
    const int32_t hi = TH_MAX(lo, TH_MIN(total_words, (input_dims->w - x0) * (cin / 4)));
    int32_t *row = dst;
    for (int32_t ky = 0; ky < filter_dims->h; ky++, row += 4 * row_words) {
        const int32_t y = y0 + ky * params->dilation.h;
        for (int32_t i = 0; i < 4 * row_words; i++) {
            row[i] = 0;
        }
        if (y < 0 || y >= input_dims->h) {
            continue;
        }
        /* run word i is input x = x0 + i / (cin / 4) of row y: only [lo, hi) are read */
        const int8_t *in_row = input + (int64_t)y * input_dims->w * cin;
        const int32_t run_off = x0 * cin;
        widen_clipped(row, in_row, run_off, 0, shift_words, lo, hi, shift_words, 1, 0, offset2);
        widen_clipped(row, in_row, run_off, shift_words, row_words, lo, hi, shift_words, 1, 1,
                      offset2);
        widen_clipped(row, in_row, run_off, row_words, total_words, lo, hi, shift_words, 0, 1,
                      offset2);
    }
}

void th_nn_im2col_pair_s16(int32_t *dst, const int8_t *input, const th_dims *input_dims,
                           const th_conv_params *params, const th_dims *filter_dims,
                           int32_t out_y, int32_t out_x)
{
    const int32_t cin = input_dims->c;
    const int32_t kw = filter_dims->w;
    const int32_t s = params->stride.w;
    const int32_t y0 = out_y * params->stride.h - params->padding.h;
    const int32_t x0 = out_x * s - params->padding.w;
    if ((cin & 3) != 0) {
        th_nn_im2col_two_s16(dst, input, input_dims, params, filter_dims, out_y, out_x, out_y,
                             out_x + 1);
        return;
    }
    const int clipped = x0 < 0 || x0 + s + kw > input_dims->w;
    if (params->dilation.w != 1 || s >= kw ||
        (clipped ? !TH_NN_PATH(IM2COL_PAIR_CLIPPED) : !TH_NN_PATH(IM2COL_PAIR_RUN))) {
        th_nn_im2col_s16(dst, 4, input, input_dims, params, filter_dims, out_y, out_x);
        th_nn_im2col_s16(dst + 2, 4, input, input_dims, params, filter_dims, out_y, out_x + 1);
        return;
    }
    if (clipped) {
        pair_clipped(dst, input, input_dims, params, filter_dims, y0, x0);
        return;
    }
    /* One run of (kw + s) * cin bytes per filter row covers both windows: its first
     * kw * cin bytes are pixel 0's taps, the ones from s * cin on pixel 1's; the words in
     * both are widened once and stored twice. */
    const int32_t offset = params->input_offset;
    const int32_t offset2 = (int32_t)(((uint32_t)offset << 16) | ((uint32_t)offset & 0xFFFFu));
    const int32_t row_words = kw * cin / 4;
    const int32_t shift_words = s * cin / 4;
    int32_t *row = dst; /* K = kh * kw * cin is a multiple of 4: no padded tail */
    for (int32_t ky = 0; ky < filter_dims->h; ky++, row += 4 * row_words) {
        const int32_t y = y0 + ky * params->dilation.h;
        if (y < 0 || y >= input_dims->h) {
            for (int32_t i = 0; i < 4 * row_words; i++) {
                row[i] = 0;
            }
            continue;
        }
        const int8_t *src = input + ((int64_t)y * input_dims->w + x0) * cin;
        widen_run(row, NULL, src, shift_words, offset2);                       /* pixel 0 */
        widen_run(row + 4 * shift_words, row + 2, src + 4 * shift_words,
                  row_words - shift_words, offset2);                           /* both */
        widen_run(row + 2 + 4 * (row_words - shift_words), NULL, src + 4 * row_words,
                  shift_words, offset2);                                       /* pixel 1 */
    }
}

#endif /* TH_NN_HAS_DSP */
