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
