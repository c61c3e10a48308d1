/* th_dw_lines.h - the general depthwise's channel-inner path (internal to kernels_c/depthwise:
 * th_dw_conv_lines_s8.c, called by th_dw_conv_general_s8.c). */
#ifndef TH_DW_LINES_H
#define TH_DW_LINES_H

#include "th_nn.h"

/* Scratch bytes the channel-inner path needs for these shapes (its per-call records, and in
 * its pairs variant one staged line), 0 where it does not apply (portable and Helium builds,
 * ch_mult > 1, fewer than 4 channels, more than 8 taps unless a 2-D window of at most 64 or
 * one tap across the line and at most 16 along it (two across: 8), or where the rows path is
 * estimated faster). plan/scratch.py dw_lines_scratch. */
int32_t th_dw_lines_scratch(const th_dw_conv_params *params, const th_dims *input_dims,
                            const th_dims *filter_dims, const th_dims *output_dims);

/* Called where need (th_dw_lines_scratch of the same arguments) > 0 and ctx has that much
 * scratch (th_nn_check_scratch); runs the path when the output does not overlap the input,
 * no activation clamp narrows int8 and the fast requantization is exact for every channel;
 * returns 1 if it ran, 0 (nothing written but scratch) otherwise. Arguments: th_nn_check_dw_dims's; the per-channel constants are
 * checked here (a 1 implies th_nn_quant_ok), so after a 0 the caller checks them. */
int th_dw_lines_s8(const th_context *ctx, int32_t need, const th_dw_conv_params *params,
                   const th_per_channel_quant *quant, const th_dims *input_dims,
                   const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                   const int32_t *bias, const th_dims *output_dims, int8_t *output);

#endif
