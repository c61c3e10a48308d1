/*
 * th_nn_s4.h - internals of the packed int4 weight kernels (th_*_s4, th_nn.h "INT4").
 *
 * Weights of CONV_2D and FULLY_CONNECTED (a DSP-friendly layout prepared on the host:
 * host/tinyhost/codegen/layout.py s4_rows, the same in every build; DEPTHWISE_CONV_2D has its
 * own, th_dw_conv_s4.c): one row per output channel of K int4 values
 * (FULLY_CONNECTED: Cin; CONV_2D: KH*KW*Cin in OHWI order), zero-padded to Kp = round_up(K, 8) values (Kp / 2 bytes, whole words), two
 * per byte (nibble 2i in the low half of byte i, 2i + 1 in the high half, as TFLite), but
 * within each group of eight values nibble p holds value rev3(p) (p's three bits reversed:
 * 0 4 2 6 1 5 3 7). So one weight word unpacks, by two masks and SXTB16 / SXTB16 ROR 8, into
 * the int16 pairs (w0, w1), (w2, w3), (w4, w5), (w6, w7), each weight times 16 (the dot
 * product is shifted right by 4 at the end, exact: every product is a multiple of 16), and
 * SMLAD takes them against the int8 operand staged as int16 in natural order (x +
 * input_offset; 0 for padding and the row's tail) in scratch. Bound: K <= 65536 keeps
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

/* Output channels [first, first + count) of one pixel from its staged column: y[c] for each
 * (requantized, offset, clamped to the activation range; multipliers >= 0, checked at kernel
 * entry). Row c of `filter` is at c * kp / 2. */
void th_nn_s4_channels(const int16_t *col, const uint8_t *filter, int32_t kp, int32_t first,
                       int32_t count, const int32_t *bias, const th_per_channel_quant *quant,
                       int32_t output_offset, const th_activation *act, int8_t *y);

/* Per channel constants of the fast requantization (th_fast_rq_apply) with the bias, filled
 * once per kernel call in scratch (th_nn_s4_rq_table). */
typedef struct {
    th_fast_rq rq;
    int32_t bias;
} th_nn_s4_rq;

/* Bytes of the th_nn_s4_rq table of `channels` channels. */
TH_INLINE int32_t th_nn_s4_rq_bytes(int32_t channels)
{
    return channels * (int32_t)sizeof(th_nn_s4_rq);
}

/* Fills tab[0 .. channels) and returns 1 when th_fast_rq_apply is exact for every channel
 * (DSP builds; accumulators of k int4 taps plus the bias), else 0 (tab untouched or partly
 * filled: the kernel then uses the exact requantization). */
int th_nn_s4_rq_table(th_nn_s4_rq *tab, const th_per_channel_quant *quant, const int32_t *bias,
                      int32_t channels, int32_t output_offset, int32_t k);

/* th_nn_s4_channels for two pixels at once (outputs y0, y1, all `count` channels from 0):
 * every weight word unpacked once for both. DSP builds: col0 holds both columns interleaved
 * by value pairs (int32 word 2j + p: pixel p's values 2j, 2j + 1; col1 unused); portable:
 * two natural columns col0, col1 of kp values. tab: the fast requantization
 * (th_nn_s4_rq_table) or NULL (exact). y1 may be y0 (the same pixel twice). */
void th_nn_s4_channels2(const int16_t *col0, const int16_t *col1, const uint8_t *filter,
                        int32_t kp, int32_t count, const int32_t *bias,
                        const th_per_channel_quant *quant, const th_nn_s4_rq *tab,
                        int32_t output_offset, const th_activation *act, int8_t *y0,
                        int8_t *y1);

#endif
