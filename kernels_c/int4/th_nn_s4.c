/* th_nn_s4: the dot product core of the packed int4 kernels (th_nn_s4.h). */
#include <stddef.h>

#include "th_nn_s4.h"

#if TH_NN_HAS_DSP
/* Eight packed weights (times 16) as four int16 pairs against four staged words. */
TH_INLINE int32_t s4_group(int32_t w, const int16_t *c, int32_t acc)
{
    const int32_t lo = (int32_t)(((uint32_t)w << 4) & 0xF0F0F0F0u); /* n0 n2 n4 n6 */
    const int32_t hi = (int32_t)((uint32_t)w & 0xF0F0F0F0u);        /* n1 n3 n5 n7 */
    acc = th_smlad(th_sxtb16(lo), th_read_s32(c), acc);      /* nibbles (0, 4): (w0, w1) (x0, x1) */
    acc = th_smlad(th_sxtb16_ror8(lo), th_read_s32(c + 2), acc); /* nibbles (2, 6): (w2, w3) (x2, x3) */
    acc = th_smlad(th_sxtb16(hi), th_read_s32(c + 4), acc);      /* nibbles (1, 5): (w4, w5) (x4, x5) */
    return th_smlad(th_sxtb16_ror8(hi), th_read_s32(c + 6), acc); /* nibbles (3, 7): (w6, w7) (x6, x7) */
}

TH_INLINE void s4_dot(const int16_t *col, const uint8_t *row_a, const uint8_t *row_b, int32_t kp,
                    int32_t *acc_a, int32_t *acc_b)
{
    const int32_t groups = kp >> 3;
    int32_t a = 0, b = 0;
    if (row_b != NULL) {
        for (int32_t g = 0; g < groups; g++) {
            a = s4_group(th_read_s32(row_a + 4 * g), col + 8 * g, a);
            b = s4_group(th_read_s32(row_b + 4 * g), col + 8 * g, b);
        }
        *acc_b = b >> 4;
    } else {
        for (int32_t g = 0; g < groups; g++) {
            a = s4_group(th_read_s32(row_a + 4 * g), col + 8 * g, a);
        }
    }
    *acc_a = a >> 4;
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
#define TH_S4_ROWS4 1
/* Four rows (row + j * row_bytes) against one column, each column pair word loaded once:
 * 56 instructions per 32 MACs (the compiler spills the row offsets). */
TH_INLINE void s4_dot_4x1(const int16_t *col, const uint8_t *row, int32_t row_bytes,
                          int32_t kp, int32_t *acc)
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, t, s, x0, x1;
    int32_t n = kp >> 3;
    const uint8_t *w = row, *w2 = row + 2 * row_bytes;
#define TH_S4_ROW(LOAD, SHIFT, A, X0, X1)                                                    \
    LOAD                                                                                     \
    SHIFT                                                                                    \
    "and %[t], %[t], #0xF0F0F0F0\n\t"                                                        \
    "sxtb16 %[s], %[t]\n\t"                                                                  \
    "smlad %[" A "], %[s], %[" X0 "], %[" A "]\n\t"                                          \
    "sxtb16 %[s], %[t], ror #8\n\t"                                                          \
    "smlad %[" A "], %[s], %[" X1 "], %[" A "]\n\t"
#define TH_S4_LSL "lsl %[t], %[t], #4\n\t"
    __asm__ volatile(
        "1:\n\t"
        "ldrd %[x0], %[x1], [%[x]], #8\n\t"
        TH_S4_ROW("ldr %[t], [%[w]]\n\t", TH_S4_LSL, "a0", "x0", "x1")
        TH_S4_ROW("ldr %[t], [%[w], %[rb]]\n\t", TH_S4_LSL, "a1", "x0", "x1")
        TH_S4_ROW("ldr %[t], [%[w2]]\n\t", TH_S4_LSL, "a2", "x0", "x1")
        TH_S4_ROW("ldr %[t], [%[w2], %[rb]]\n\t", TH_S4_LSL, "a3", "x0", "x1")
        "ldrd %[x0], %[x1], [%[x]], #8\n\t"
        TH_S4_ROW("ldr %[t], [%[w], %[rb]]\n\t", "", "a1", "x0", "x1")
        TH_S4_ROW("ldr %[t], [%[w]], #4\n\t", "", "a0", "x0", "x1")
        TH_S4_ROW("ldr %[t], [%[w2], %[rb]]\n\t", "", "a3", "x0", "x1")
        TH_S4_ROW("ldr %[t], [%[w2]], #4\n\t", "", "a2", "x0", "x1")
        "subs %[n], %[n], #1\n\t"
        "bne 1b\n\t"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(col),
          [w] "+r"(w), [w2] "+r"(w2), [n] "+r"(n), [t] "=&r"(t), [s] "=&r"(s),
          [x0] "=&r"(x0), [x1] "=&r"(x1)
        : [rb] "r"(row_bytes)
        : "cc", "memory");
#undef TH_S4_ROW
#undef TH_S4_LSL
    acc[0] = a0 >> 4;
    acc[1] = a1 >> 4;
    acc[2] = a2 >> 4;
    acc[3] = a3 >> 4;
}
#endif
#else
/* Value of each nibble position of a group (th_nn_s4.h: p's three bits reversed). */
static const uint8_t value_of_nibble[8] = {0, 4, 2, 6, 1, 5, 3, 7};

static int32_t s4_row(const int16_t *col, const uint8_t *row, int32_t kp)
{
    int32_t acc = 0;
    for (int32_t k = 0; k < kp; k += 2) {
        const int32_t byte = row[k >> 1];
        const int16_t *group = col + (k & ~7);
        const int32_t low = ((byte & 0xF) ^ 8) - 8;
        const int32_t high = ((byte >> 4) ^ 8) - 8;
        acc += low * group[value_of_nibble[k & 7]] + high * group[value_of_nibble[(k & 7) + 1]];
    }
    return acc;
}

TH_INLINE void s4_dot(const int16_t *col, const uint8_t *row_a, const uint8_t *row_b, int32_t kp,
                    int32_t *acc_a, int32_t *acc_b)
{
    *acc_a = s4_row(col, row_a, kp);
    if (row_b != NULL) {
        *acc_b = s4_row(col, row_b, kp);
    }
}
#endif

TH_INLINE int8_t s4_out(int32_t acc, const int32_t *bias, int32_t c, const int32_t *mult,
                        const int32_t *shift, int32_t output_offset, int32_t lo, int32_t hi)
{
    const int32_t a = bias != NULL ? th_add_wrap(acc, bias[c]) : acc;
    return (int8_t)th_clamp(th_requantize_s8(a, mult[c], shift[c], output_offset), lo, hi);
}

void th_nn_s4_channels(const int16_t *col, const uint8_t *filter, int32_t kp, int32_t first,
                       int32_t count, const int32_t *bias, const th_per_channel_quant *quant,
                       int32_t output_offset, const th_activation *act, int8_t *y)
{
    const int32_t row_bytes = kp / 2, end = first + count, lo = act->min, hi = act->max;
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    const uint8_t *row = filter + (int64_t)first * row_bytes;
    int32_t c = first;
#ifdef TH_S4_ROWS4
    for (; c + 3 < end; c += 4, row += 4 * row_bytes) {
        int32_t acc[4];
        s4_dot_4x1(col, row, row_bytes, kp, acc);
        for (int32_t j = 0; j < 4; j++) {
            y[c + j] = s4_out(acc[j], bias, c + j, mult, shift, output_offset, lo, hi);
        }
    }
#endif
    for (; c + 1 < end; c += 2, row += 2 * row_bytes) {
        int32_t a = 0, b = 0;
        s4_dot(col, row, row + row_bytes, kp, &a, &b);
        y[c] = s4_out(a, bias, c, mult, shift, output_offset, lo, hi);
        y[c + 1] = s4_out(b, bias, c + 1, mult, shift, output_offset, lo, hi);
    }
    if (c < end) {
        int32_t a = 0, unused = 0;
        s4_dot(col, row, NULL, kp, &a, &unused);
        y[c] = s4_out(a, bias, c, mult, shift, output_offset, lo, hi);
    }
}

int th_nn_s4_rq_table(th_nn_s4_rq *tab, const th_per_channel_quant *quant, const int32_t *bias,
                      int32_t channels, int32_t output_offset, int32_t k)
{
#if TH_NN_HAS_DSP
    const int64_t bound = th_acc_bound(k, 8, bias, channels);
    for (int32_t c = 0; c < channels; c++) {
        if (!th_fast_rq_ok(quant->multiplier[c], quant->shift[c], bound)) {
            return 0;
        }
        tab[c].rq = th_fast_rq_make(quant->multiplier[c], quant->shift[c], output_offset);
        tab[c].bias = bias != NULL ? bias[c] : 0;
    }
    return 1;
#else
    (void)tab;
    (void)quant;
    (void)bias;
    (void)channels;
    (void)output_offset;
    (void)k;
    return 0;
#endif
}

#if TH_NN_HAS_DSP
/* Weight pairs wa (row a) and wb (row b) against the pair words x[0] (pixel 0), x[1]
 * (pixel 1): acc as s4_dot_2x2's. */
TH_INLINE void s4_mac_2x2(int32_t wa, int32_t wb, const int32_t *x, int32_t *acc)
{
    const int32_t x0 = x[0], x1 = x[1];
    acc[0] = th_smlad(wa, x0, acc[0]);
    acc[1] = th_smlad(wa, x1, acc[1]);
    acc[2] = th_smlad(wb, x0, acc[2]);
    acc[3] = th_smlad(wb, x1, acc[3]);
}

/* Rows ra and ra + row_bytes (channels c, c + 1) against the interleaved columns of two
 * pixels (x: word 2j + p holds pixel p's values 2j, 2j + 1): acc[0] (c, pixel 0), acc[1]
 * (c, 1), acc[2] (c + 1, 0), acc[3] (c + 1, 1). Each weight pair serves both pixels; the
 * weight words are loaded again for the high nibbles rather than kept (register pressure). */
TH_INLINE void s4_dot_2x2(const int32_t *x, const uint8_t *ra, int32_t row_bytes,
                          int32_t groups, int32_t *acc)
{
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* The compiler spills (46 instructions per 32 MACs): 40 spelled out, 13 registers. */
    int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0, ta, tb, s, x0, x1;
    int32_t n = groups;
#define TH_S4_PAIR(ROT, T0, T1)                                                              \
    "ldrd %[x0], %[x1], [%[x]], #8\n\t"                                                      \
    "sxtb16 %[s], %[" T0 "]" ROT "\n\t"                                                      \
    "smlad %[a00], %[s], %[x0], %[a00]\n\t"                                                  \
    "smlad %[a01], %[s], %[x1], %[a01]\n\t"                                                  \
    "sxtb16 %[s], %[" T1 "]" ROT "\n\t"                                                      \
    "smlad %[a10], %[s], %[x0], %[a10]\n\t"                                                  \
    "smlad %[a11], %[s], %[x1], %[a11]\n\t"
    __asm__ volatile(
        "1:\n\t"
        "ldr %[tb], [%[w], %[rb]]\n\t"
        "ldr %[ta], [%[w]]\n\t"
        "lsl %[ta], %[ta], #4\n\t"
        "and %[ta], %[ta], #0xF0F0F0F0\n\t"
        "lsl %[tb], %[tb], #4\n\t"
        "and %[tb], %[tb], #0xF0F0F0F0\n\t"
        TH_S4_PAIR("", "ta", "tb")
        TH_S4_PAIR(", ror #8", "ta", "tb")
        "ldr %[tb], [%[w], %[rb]]\n\t"
        "ldr %[ta], [%[w]], #4\n\t"
        "and %[ta], %[ta], #0xF0F0F0F0\n\t"
        "and %[tb], %[tb], #0xF0F0F0F0\n\t"
        TH_S4_PAIR("", "ta", "tb")
        TH_S4_PAIR(", ror #8", "ta", "tb")
        "subs %[n], %[n], #1\n\t"
        "bne 1b\n\t"
        : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [x] "+r"(x),
          [w] "+r"(ra), [n] "+r"(n), [ta] "=&r"(ta), [tb] "=&r"(tb), [s] "=&r"(s),
          [x0] "=&r"(x0), [x1] "=&r"(x1)
        : [rb] "r"(row_bytes)
        : "cc", "memory");
#undef TH_S4_PAIR
    acc[0] = a00 >> 4;
    acc[1] = a01 >> 4;
    acc[2] = a10 >> 4;
    acc[3] = a11 >> 4;
#else
    int32_t a[4] = {0, 0, 0, 0};
    const int32_t *end = x + 8 * groups;
    for (; x != end; x += 8, ra += 4) {
        int32_t t = (int32_t)(((uint32_t)th_read_s32(ra) << 4) & 0xF0F0F0F0u);
        int32_t u = (int32_t)(((uint32_t)th_read_s32(ra + row_bytes) << 4) & 0xF0F0F0F0u);
        s4_mac_2x2(th_sxtb16(t), th_sxtb16(u), x, a);
        s4_mac_2x2(th_sxtb16_ror8(t), th_sxtb16_ror8(u), x + 2, a);
        t = (int32_t)((uint32_t)th_read_s32(ra) & 0xF0F0F0F0u);
        u = (int32_t)((uint32_t)th_read_s32(ra + row_bytes) & 0xF0F0F0F0u);
        s4_mac_2x2(th_sxtb16(t), th_sxtb16(u), x + 4, a);
        s4_mac_2x2(th_sxtb16_ror8(t), th_sxtb16_ror8(u), x + 6, a);
    }
    acc[0] = a[0] >> 4;
    acc[1] = a[1] >> 4;
    acc[2] = a[2] >> 4;
    acc[3] = a[3] >> 4;
#endif
}

/* One row against the interleaved columns of two pixels. */
TH_INLINE void s4_dot_1x2(const int32_t *x, const uint8_t *ra, int32_t groups, int32_t *acc)
{
    int32_t a0 = 0, a1 = 0;
    const int32_t *end = x + 8 * groups;
    for (; x != end; x += 8, ra += 4) {
        const int32_t wa = th_read_s32(ra);
        const int32_t t = (int32_t)(((uint32_t)wa << 4) & 0xF0F0F0F0u);
        const int32_t u = (int32_t)((uint32_t)wa & 0xF0F0F0F0u);
        a0 = th_smlad(th_sxtb16(t), x[0], a0);
        a1 = th_smlad(th_sxtb16(t), x[1], a1);
        a0 = th_smlad(th_sxtb16_ror8(t), x[2], a0);
        a1 = th_smlad(th_sxtb16_ror8(t), x[3], a1);
        a0 = th_smlad(th_sxtb16(u), x[4], a0);
        a1 = th_smlad(th_sxtb16(u), x[5], a1);
        a0 = th_smlad(th_sxtb16_ror8(u), x[6], a0);
        a1 = th_smlad(th_sxtb16_ror8(u), x[7], a1);
    }
    acc[0] = a0 >> 4;
    acc[1] = a1 >> 4;
}

/* Channel t's outputs of two pixels, fast requantization (constants loaded once). */
TH_INLINE void s4_fast_pair(int32_t acc0, int32_t acc1, const th_nn_s4_rq *t, int clamp,
                            int32_t lo, int32_t hi, int8_t *y0, int8_t *y1)
{
    const th_fast_rq rq = t->rq;
    const int32_t b = t->bias;
    int32_t r0 = th_fast_rq_apply(acc0 + b, &rq), r1 = th_fast_rq_apply(acc1 + b, &rq);
    if (clamp) {
        r0 = th_clamp(r0, lo, hi);
        r1 = th_clamp(r1, lo, hi);
    }
    *y0 = (int8_t)r0;
    *y1 = (int8_t)r1;
}
#endif

void th_nn_s4_channels2(const int16_t *col0, const int16_t *col1, const uint8_t *filter,
                        int32_t kp, int32_t count, const int32_t *bias,
                        const th_per_channel_quant *quant, const th_nn_s4_rq *tab,
                        int32_t output_offset, const th_activation *act, int8_t *y0,
                        int8_t *y1)
{
#if TH_NN_HAS_DSP
    (void)col1; /* interleaved into col0 (th_nn_s4.h) */
    const int32_t *x = (const int32_t *)(const void *)col0;
    const int32_t row_bytes = kp / 2, groups = kp >> 3, lo = act->min, hi = act->max;
    const int clamp = lo > -128 || hi < 127;
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    const uint8_t *row = filter;
    int32_t acc[4];
    int32_t c = 0;
    for (; c + 1 < count; c += 2, row += 2 * row_bytes) {
        s4_dot_2x2(x, row, row_bytes, groups, acc);
        if (tab != NULL) {
            s4_fast_pair(acc[0], acc[1], tab + c, clamp, lo, hi, y0 + c, y1 + c);
            s4_fast_pair(acc[2], acc[3], tab + c + 1, clamp, lo, hi, y0 + c + 1, y1 + c + 1);
        } else {
            y0[c] = s4_out(acc[0], bias, c, mult, shift, output_offset, lo, hi);
            y1[c] = s4_out(acc[1], bias, c, mult, shift, output_offset, lo, hi);
            y0[c + 1] = s4_out(acc[2], bias, c + 1, mult, shift, output_offset, lo, hi);
            y1[c + 1] = s4_out(acc[3], bias, c + 1, mult, shift, output_offset, lo, hi);
        }
    }
    if (c < count) {
        s4_dot_1x2(x, row, groups, acc);
        if (tab != NULL) {
            s4_fast_pair(acc[0], acc[1], tab + c, clamp, lo, hi, y0 + c, y1 + c);
        } else {
            y0[c] = s4_out(acc[0], bias, c, mult, shift, output_offset, lo, hi);
            y1[c] = s4_out(acc[1], bias, c, mult, shift, output_offset, lo, hi);
        }
    }
#else
    (void)tab;
    th_nn_s4_channels(col0, filter, kp, 0, count, bias, quant, output_offset, act, y0);
    if (col1 != col0 || y1 != y0) {
        th_nn_s4_channels(col1, filter, kp, 0, count, bias, quant, output_offset, act, y1);
    }
#endif
}
