/*
 * th_nn_s4.h - internals of the packed int4 weight kernels (th_*_s4, th_nn.h "INT4").
 *
 * Weights: one row per output channel of K int4 values (FULLY_CONNECTED: Cin; CONV_2D:
 * KH*KW*Cin in OHWI order; DEPTHWISE_CONV_2D: the KH*KW taps of that channel), packed two per
 * byte in TFLite's nibble order (value 2i in the low nibble of byte i, 2i+1 in the high one),
 * each row zero-padded to Kp = round_up(K, 8) values (Kp / 2 bytes, a whole number of words).
 * The same layout in every build (host/tinyhost/codegen/layout.py s4_rows).
 *
 * The kernels stage the int8 operand as int16 (x + input_offset; 0 for padding and the row's
 * tail) in scratch, eight values per group in the order (x0, x4, x2, x6, x1, x5, x3, x7): the
 * order in which one weight word unpacks into four int16 pairs on DSP builds (two masks,
 * SXTB16 and SXTB16 ROR 8; each weight comes out times 16, the dot product is shifted right
 * by 4 at the end, exact because every product is a multiple of 16). Bound: K <= 65536 keeps
 * 16 * |sum| below 2^31.
 */
#ifndef TH_NN_S4_H
#define TH_NN_S4_H

#include <stdint.h>

#include "th_nn_support.h"

#define TH_S4_MAX_K 65536

TH_INLINE int32_t th_s4_round_up8(int32_t k)
{
    return (k + 7) & ~7;
}

/* Slot of value k in its staged group: k's low three bits reversed. */
TH_INLINE int32_t th_s4_slot(int32_t k)
{
    const int32_t j = k & 7;
    return (k & ~7) | ((j & 1) << 2) | (j & 2) | ((j >> 2) & 1);
}

/* Dot products of the staged column `col` (kp int16 values) with one or two packed rows:
 * *acc_a = sum over k of row_a[k] * col value k (row_b likewise when not NULL). */
void th_nn_s4_dot(const int16_t *col, const uint8_t *row_a, const uint8_t *row_b, int32_t kp,
                  int32_t *acc_a, int32_t *acc_b);

#endif
