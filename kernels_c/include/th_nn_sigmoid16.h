/*
 * th_nn_sigmoid16.h - internal: the int16 sigmoid and tanh of TFLite's reference_integer_ops
 * (not part of the public API), shared by th_logistic_s16 / th_tanh_s16 and th_lstm_s8's
 * gates.
 *
 * `table` is the 256-entry sigmoid(i / 24) table in unsigned 0.16 that the host generates
 * (tinyhost.arith.sigmoid16.sigmoid_table_u16) and passes as a constant; it rises, so
 * next - this never wraps. The input is first rescaled (th_sigmoid16_scale) so that one table
 * step is 2^9 units for the sigmoid and 2^8 for the tanh; outputs are Q0.15.
 */
#ifndef TH_NN_SIGMOID16_H
#define TH_NN_SIGMOID16_H

#include <stdint.h>

/* (x * multiplier + round) >> left_shift in int32 (the product wraps, as TFLM's int32 does);
 * multiplier already resolved (the power-of-two case's 3 << left_shift with shift 0),
 * 0 <= left_shift <= 31. */
static inline int32_t th_sigmoid16_scale(int32_t x, int32_t multiplier, int32_t left_shift)
{
    const uint32_t round = left_shift > 0 ? 1u << (left_shift - 1) : 0u;
    const int32_t v = (int32_t)((uint32_t)x * (uint32_t)multiplier + round);
    return v >> left_shift;
}

static inline uint32_t th_sigmoid16_abs(int32_t v)
{
    return v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
}

/* Logistic of a rescaled input: Q0.15. */
static inline int16_t th_sigmoid16(int32_t v, const uint16_t *table)
{
    const uint32_t a = th_sigmoid16_abs(v);
    const uint32_t uh = a >> 9;
    uint32_t r;
    if (uh >= 255u) {
        r = 0x7FFFu << 10;
    } else {
        const uint32_t lo = table[uh], hi = table[uh + 1u];
        r = (lo << 9) + (a & 0x1FFu) * (hi - lo);
    }
    r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
    return (int16_t)(r >> 10);
}

/* Tanh of a rescaled input, 2 * sigmoid(2x) - 1: Q0.15. */
static inline int16_t th_tanh16(int32_t v, const uint16_t *table)
{
    const uint32_t a = th_sigmoid16_abs(v);
    const uint32_t uh = a >> 8;
    int32_t r;
    if (uh >= 255u) {
        r = 0xFFFF << 8;
    } else {
        const uint32_t lo = table[uh], hi = table[uh + 1u];
        r = (int32_t)((lo << 8) + (a & 0xFFu) * (hi - lo));
    }
    r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    return (int16_t)(r >> 8);
}

#endif /* TH_NN_SIGMOID16_H */
