/*
 * th_nn.h - the public API of the tinyhost int8 kernels (ARCHITECTURE.md §4.1-§4.3).
 *
 * Every kernel takes, in this order: a context (caller-provided scratch), the op params,
 * the quant params, then (dims, data) pairs for input, filter, bias, output. It checks
 * its preconditions at entry and returns a th_status. No malloc, no global state.
 * Results are bit-exact with TFLite Micro's int8 reference kernels (double rounding).
 *
 * Scratch rule: call the kernel's *_scratch_size() companion with the same params and
 * dims; pass a 4-byte aligned buffer of at least that many bytes (NULL/0 if it returns 0).
 * A wrapper's size is the size of the variant it picks for those params.
 *
 * Build paths: on Armv7E-M/Armv8-M cores with the DSP extension (__ARM_FEATURE_DSP) the
 * kernels use SMLAD/SXTB16 inner loops unless TH_NN_FORCE_PORTABLE is defined; otherwise a
 * portable C99 path runs (Cortex-M0/M3, host). TH_NN_HAS_DSP tells which.
 *
 * Filter layout: on DSP builds (TH_NN_FILTER_INTERLEAVED == 1) CONV_2D filters and
 * FULLY_CONNECTED weights are passed pre-interleaved by output-channel blocks (2 for conv,
 * 4 for FC) with K = KH*KW*Cin padded to a multiple of 4; see th_nn_support.h and
 * host/tinyhost/codegen/layout.py (interleave_filter). Filter bytes: Cout * round_up(K, 4).
 * Portable builds take the plain OHWI / [Cout, Cin] layout. DEPTHWISE filters are always
 * plain [1, KH, KW, Cout].
 *
 * Aliasing (what the planner may overlap; host/tinyhost/plan/overlap.py states the same rules
 * and the interpreter blob plans with them). d = output - input in bytes; the input must
 * not be needed after the call. Any other overlap of output with an input or the scratch
 * is not allowed. Every rule holds in the DSP and the portable build, uses the kernel's
 * ordinary scratch (the *_scratch_size value; no in-place variant needs more), and is
 * tested at its bound (tests/test_plan_inplace_kernels.py). A kernel change that breaks
 * one of these access orders must change the rule and the planner with it.
 *  (a) th_dw_conv_s8 / th_dw_conv_3x3_s8 / th_dw_conv_general_s8 with ch_mult == 1 may be
 *      computed in place: output == input (the same pointer, buffer of max(input, output)
 *      bytes), for any stride and padding, if N == 1 or OH*OW <= H*W. With N == 1 any d
 *      that is a multiple of C is allowed too (e.g. the output in the tail of the input,
 *      d = H*W*C - OH*OW*C). The kernels work batch by batch, channel by channel: channel
 *      c's input plane is copied to scratch before any output of channel c is written,
 *      and output pixel p channel c is written at d + p*C + c only, so channel c's writes
 *      land on channel-c input bytes (already copied) or outside the input.
 *  (b) th_conv_1x1_s8 (and th_conv_s8 when it picks it) with stride 1, no padding, no
 *      groups may be computed in place: d <= 0 when Cout <= Cin (output == input included),
 *      and d <= H*W*(Cin - Cout) when Cout > Cin (the input in the tail of the output).
 *      Pixels go in ascending order, TH_CONV_1X1_INPLACE_PIXELS (DSP, MVE) or 1 (portable)
 *      at a time, each group read into scratch before its outputs are written (DSP, Cout
 *      <= 4: up to four pixels read straight from the input before any of their outputs
 *      is written, th_nn_conv_direct_s8; the same bound holds for any group size).
 *  (c) Raster order: th_conv_s8 (every variant and build, grouped included),
 *      th_avgpool_s8 and th_maxpool_s8 (its prepared entry alike: the same paths) compute
 *      output pixels in ascending (n, y, x) order,
 *      and pixel q reads only its own window and writes only its own Cout bytes, at any
 *      time after pixel q starts (th_maxpool_s8 uses them as its running maximum; the
 *      DSP conv reads two pixels' windows before writing either, four with Cout <= 4, and
 *      with Cout <= 4 may read windows of the next three output rows before writing the
 *      earlier outputs, each output still written in this order: reading early is within
 *      the same bound; the
 *      pools' separable paths read, while at pixel q, only input bytes at or after the first
 *      byte of pixel q's window: the rows of q's output row, or later ones). So any d is
 *      allowed at which, for every q, d + (q+1)*Cout <= the first input byte read by any
 *      pixel >= q (plan/overlap.py sliding_d_max_padded computes the bound). At stride
 *      1, th_avgpool_s8's pixel (y, x), y > 0, also reads from where pixel (y - 1, x)'s
 *      window starts (the row above its window: the column sums move off it as they
 *      enter); it checks that bound itself (row_above in sliding_d_max_padded) and past it
 *      takes an order that reads only the windows. Depthwise
 *      kernels do NOT follow this order (they go channel by channel over the whole image).
 * Everything else: output must not overlap input, filter, bias or scratch.
 */
#ifndef TH_NN_H
#define TH_NN_H

#include <stdint.h>

#include "th_nn_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pixels the 1x1 kernel stages in scratch at a time (aliasing rule (b)). */
#define TH_CONV_1X1_INPLACE_PIXELS 2

/* Build description, for generated code and tests: bit 0 = DSP path compiled in,
 * bit 1 = interleaved filter layout expected, bit 2 = DSP instructions native, bit 3 = MVE
 * (Helium) paths (CONV_2D, FULLY_CONNECTED; plain filter layout). */
int32_t th_nn_build_flags(void);

/* ---- CONV_2D ---------------------------------------------------------------------------
 * input (N, H, W, Cin), filter (Cout, KH, KW, Cin / groups), bias [Cout] or NULL,
 * output (N, OH, OW, Cout). Per-channel requantization (per-tensor: repeat the pair).
 * Stack (DSP builds, Cortex-M4 gcc -O2): at most about 1.5 KB per call; the fixed buffers
 * are a table of requantization constants prepared once per call (256 bytes, Cout <= 17;
 * 1 KB for the stride-1 pointwise convolution, which stages nothing else on the stack:
 * about 1.5 KB in all; with Cout > 65 its table goes in scratch instead, see
 * th_conv_1x1_s8_scratch_size; Cin == 8 streams 32-byte records of up to 32 channels from
 * a 1 KB buffer) and, for Cin not a multiple of 4 (first layers), 256 bytes of byte-staged
 * im2col columns. */

/* th_conv_1x1_s8 at stride 1 with Cin a multiple of 4 and the output as large as the input,
 * with int16 weights the host laid out (compiled backend, --optimize speed): per channel
 * pair and chunk of 4 input channels k..k+3 the halfwords w[c][k], w[c][k+2], w[c][k+1],
 * w[c][k+3], then those of channel c+1 (an odd last channel paired with zeros). Same
 * scratch, aliasing and outputs as th_conv_1x1_s8; DSP builds without Helium only
 * (TH_ERR_UNSUPPORTED elsewhere and for other shapes). */
th_status th_conv_1x1_s8_w16(const th_context *ctx, const th_conv_params *params,
                             const th_per_channel_quant *quant, const th_dims *input_dims,
                             const int8_t *input, const th_dims *filter_dims,
                             const int16_t *filter, const int32_t *bias,
                             const th_dims *output_dims, int8_t *output);

/* th_conv_3x3_s8's im2col path (Cin > 3, not its direct path for Cout <= 3) with int16
 * weights in th_conv_1x1_s8_w16's layout over K = 9 * Cin taps (kh, kw, c order, K padded
 * to a multiple of 4), and rq: the host-made requantization constants of every channel
 * pair, 8 int32 each {bias c, bias c+1, multiplier c, c+1, round_zp c, c+1, e c, c+1} with
 * e = -shift and round_zp = 2^(e-1) + output_offset * 2^e (mod 2^32), used when the fast
 * requantization is exact for every channel without a clamp (else, or NULL: exact loops).
 * Same scratch and outputs as th_conv_3x3_s8; DSP builds without Helium only. */
th_status th_conv_3x3_s8_w16(const th_context *ctx, const th_conv_params *params,
                             const th_per_channel_quant *quant, const th_dims *input_dims,
                             const int8_t *input, const th_dims *filter_dims,
                             const int16_t *filter, const int32_t *bias,
                             const th_dims *output_dims, int8_t *output, const int32_t *rq);

/* Picks th_conv_1x1_s8, th_conv_3x3_s8 or th_conv_general_s8. */
th_status th_conv_s8(const th_context *ctx, const th_conv_params *params,
                     const th_per_channel_quant *quant, const th_dims *input_dims,
                     const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                     const int32_t *bias, const th_dims *output_dims, int8_t *output);
int32_t th_conv_s8_scratch_size(const th_conv_params *params, const th_dims *input_dims,
                                const th_dims *filter_dims, const th_dims *output_dims);
/* The faster path's scratch of the kernel th_conv_s8 picks (its *_scratch_size_fast), 0
 * when it has none. */
int32_t th_conv_s8_scratch_size_fast(const th_conv_params *params, const th_dims *input_dims,
                                     const th_dims *filter_dims, const th_dims *output_dims);

/* 1x1 filter, no padding, no groups, dilation irrelevant; any stride. */
th_status th_conv_1x1_s8(const th_context *ctx, const th_conv_params *params,
                         const th_per_channel_quant *quant, const th_dims *input_dims,
                         const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                         const int32_t *bias, const th_dims *output_dims, int8_t *output);
int32_t th_conv_1x1_s8_scratch_size(const th_conv_params *params, const th_dims *input_dims,
                                    const th_dims *filter_dims, const th_dims *output_dims);
/* The faster path's scratch (DSP builds without Helium; 0 in others or where it has none):
 * Cout * (8 * ceil(Cin / 4) + 16) bytes for Cout <= 16 and Cin >= 4 (Cin a multiple of 4:
 * Cout <= 8 and 16 output pixels or more), when that is more than
 * th_conv_1x1_s8_scratch_size; given at least that much (and the fast requantization exact
 * for every channel), the weights are widened once per call and each input word feeds every
 * output channel. */
int32_t th_conv_1x1_s8_scratch_size_fast(const th_conv_params *params,
                                         const th_dims *input_dims, const th_dims *filter_dims,
                                         const th_dims *output_dims);

/* 3x3 filter, dilation 1, no groups; any stride and padding. */
th_status th_conv_3x3_s8(const th_context *ctx, const th_conv_params *params,
                         const th_per_channel_quant *quant, const th_dims *input_dims,
                         const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                         const int32_t *bias, const th_dims *output_dims, int8_t *output);
int32_t th_conv_3x3_s8_scratch_size(const th_conv_params *params, const th_dims *input_dims,
                                    const th_dims *filter_dims, const th_dims *output_dims);

/* Any filter, stride, padding, dilation and group count. */
th_status th_conv_general_s8(const th_context *ctx, const th_conv_params *params,
                             const th_per_channel_quant *quant, const th_dims *input_dims,
                             const int8_t *input, const th_dims *filter_dims,
                             const int8_t *filter, const int32_t *bias,
                             const th_dims *output_dims, int8_t *output);
int32_t th_conv_general_s8_scratch_size(const th_conv_params *params,
                                        const th_dims *input_dims, const th_dims *filter_dims,
                                        const th_dims *output_dims);
/* The faster path's scratch (DSP builds without Helium; 0 in others or where it has none):
 * (Cout + 4) * round_up4(KH * KW * Cin) bytes for groups 1, 2 <= Cout <= 4, dilation.w > 1
 * and a filter that is not 1x1, when that is more than th_conv_general_s8_scratch_size; given
 * at least that much, the few-output-channel direct path runs every pixel (those outside
 * interior quads four at a time from int8 columns). th_conv_3x3_s8 takes the same (th_conv_s8_scratch_size_fast). */
int32_t th_conv_general_s8_scratch_size_fast(const th_conv_params *params,
                                             const th_dims *input_dims,
                                             const th_dims *filter_dims,
                                             const th_dims *output_dims);

/* ---- DEPTHWISE_CONV_2D -----------------------------------------------------------------
 * input (N, H, W, Cin), filter (1, KH, KW, Cin * ch_mult), bias [Cout] or NULL,
 * output (N, OH, OW, Cin * ch_mult). */

/* Picks th_dw_conv_3x3_s8 or th_dw_conv_general_s8. */
th_status th_dw_conv_s8(const th_context *ctx, const th_dw_conv_params *params,
                        const th_per_channel_quant *quant, const th_dims *input_dims,
                        const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                        const int32_t *bias, const th_dims *output_dims, int8_t *output);
int32_t th_dw_conv_s8_scratch_size(const th_dw_conv_params *params, const th_dims *input_dims,
                                   const th_dims *filter_dims, const th_dims *output_dims);
/* The faster path's scratch of the kernel th_dw_conv_s8 picks (its *_scratch_size_fast), 0
 * when it has none. */
int32_t th_dw_conv_s8_scratch_size_fast(const th_dw_conv_params *params,
                                        const th_dims *input_dims, const th_dims *filter_dims,
                                        const th_dims *output_dims);

/* 3x3 filter, ch_mult 1, dilation 1, stride 1 or 2 (both directions equal); any padding. */
th_status th_dw_conv_3x3_s8(const th_context *ctx, const th_dw_conv_params *params,
                            const th_per_channel_quant *quant, const th_dims *input_dims,
                            const int8_t *input, const th_dims *filter_dims,
                            const int8_t *filter, const int32_t *bias,
                            const th_dims *output_dims, int8_t *output);
int32_t th_dw_conv_3x3_s8_scratch_size(const th_dw_conv_params *params,
                                       const th_dims *input_dims, const th_dims *filter_dims,
                                       const th_dims *output_dims);
/* Scratch with which the DSP path stages four channels per pass (C >= 4, the last C % 4
 * one at a time; faster, more RAM), 0 when that does not apply; the kernel uses it whenever ctx->size is at
 * least this, and one channel per pass (th_dw_conv_3x3_s8_scratch_size) otherwise. The
 * tinyhost planner gives it where it does not grow the arena. th_dw_conv_s8 passes the
 * context through, so the same holds for it when it picks this kernel. */
int32_t th_dw_conv_3x3_s8_scratch_size_fast(const th_dw_conv_params *params,
                                            const th_dims *input_dims,
                                            const th_dims *filter_dims,
                                            const th_dims *output_dims);

/* Any filter, stride, padding, dilation and depth multiplier. Scratch: one int8 input plane
 * (round_up4(H*W)) when ch_mult == 1; none when ch_mult > 1 (the input is read directly;
 * such an op never runs in place, rule (a)). Given at least
 * th_dw_conv_general_s8_scratch_size_fast (DSP builds; 0 in portable ones) it runs a DSP
 * path, four outputs per pass by SMLAD over tap pairs: for filters of 15 or more taps whose
 * padded int16 plane fits 16 KB, the plane path (the channel's plane staged once, dilation
 * along the contiguous axis as phase rows); else the rows path (int16 bands of raw values
 * per output row, dilation split into phase rows; four channels staged per pass for
 * one-row filters); else the reference loop; the tinyhost planner gives that where it does
 * not grow the arena. With ch_mult 1, C >= 4 and at most 8 taps, where estimated faster (1-D
 * tensors, short lines; th_dw_conv_lines_s8.c), the fast size covers the channel-inner path's
 * records too and, unless the output overlaps the input, an activation clamp narrows int8 or
 * the fast requantization is inexact, that path runs: output pixels in order, channels in
 * blocks of four. */
th_status th_dw_conv_general_s8(const th_context *ctx, const th_dw_conv_params *params,
                                const th_per_channel_quant *quant, const th_dims *input_dims,
                                const int8_t *input, const th_dims *filter_dims,
                                const int8_t *filter, const int32_t *bias,
                                const th_dims *output_dims, int8_t *output);
int32_t th_dw_conv_general_s8_scratch_size(const th_dw_conv_params *params,
                                           const th_dims *input_dims,
                                           const th_dims *filter_dims,
                                           const th_dims *output_dims);
int32_t th_dw_conv_general_s8_scratch_size_fast(const th_dw_conv_params *params,
                                                const th_dims *input_dims,
                                                const th_dims *filter_dims,
                                                const th_dims *output_dims);

/* ---- FULLY_CONNECTED -------------------------------------------------------------------
 * input (batches, 1, 1, Cin) (any shape whose product is batches * Cin: pass n = batches,
 * c = Cin), weights (Cout, 1, 1, Cin), bias [Cout] or NULL, output (batches, 1, 1, Cout).
 * Scratch: none needed (size 0); given th_fully_connected_s8_scratch_size_fast's (both
 * kernels; DSP builds without Helium: 2 * round_up4(Cin) bytes when 128 < Cin <= 2^20 and
 * Cout >= 8, else 0), inputs longer than 128 values run the short-input path too. */

/* Per-tensor requantization; params->filter_offset applies. */
th_status th_fully_connected_s8(const th_context *ctx, const th_fc_params *params,
                                const th_per_tensor_quant *quant, const th_dims *input_dims,
                                const int8_t *input, const th_dims *filter_dims,
                                const int8_t *filter, const int32_t *bias,
                                const th_dims *output_dims, int8_t *output);

/* Per-channel requantization; params->filter_offset must be 0. */
th_status th_fully_connected_per_channel_s8(const th_context *ctx, const th_fc_params *params,
                                            const th_per_channel_quant *quant,
                                            const th_dims *input_dims, const int8_t *input,
                                            const th_dims *filter_dims, const int8_t *filter,
                                            const int32_t *bias, const th_dims *output_dims,
                                            int8_t *output);

/* FULLY_CONNECTED with host-prepared int16 weights (compiled backend, --optimize speed;
 * ARCHITECTURE.md §4.3). weights: int16, per block of 4 output channels (Cout padded to a
 * multiple of 4 with zero rows) and per chunk of 4 inputs k..k+3 (Cin padded to a multiple
 * of 4 with zeros), for each of the block's channels c the halfwords
 * w[c][k], w[c][k+2], w[c][k+1], w[c][k+3] (the order of SXTB16 and SXTB16 ROR 8 of the
 * input word): index(c, k) = ((c/4 * Kp/4 + k/4) * 4 + c%4) * 4 + (k%2) * 2 + (k%4)/2.
 * bias: int32[round_up4(Cout)], each bias[c] + input_offset * sum_k w[c][k] (wrapping), so
 * the loop multiplies the raw int8 inputs; the accumulators equal the int8 kernels'.
 * filter_offset must be 0. fast: the host found th_fast_rq exact for every channel
 * (multiplier >= 0, shift in [-22, -1], Cin * 255 * 255 + max |original bias| < 2^29); the
 * outputs are the same either way. No scratch. */
typedef struct {
    int32_t batches;
    int32_t cin;
    int32_t cout;
    int32_t output_offset;
    th_activation activation;
    int32_t mult_step; /* 0: multiplier[0], shift[0] for every channel; 1: per channel */
    int32_t fast;
    /* NULL, or with mult_step 1 and fast the same constants for the row loop (used when
     * Cout >= 16): per block of four channels (Cout padded to 4, the padding repeating the
     * last channel) th_fast_rq's multiplier and round_zp of each channel in turn, then the
     * four e: 12 words a block (codegen/widen.py fc_w16_rq_table). */
    const int32_t *rq_table;
} th_fc_w16_params;

th_status th_fc_s8_w16(const th_fc_w16_params *params, const int32_t *multiplier,
                       const int32_t *shift, const int8_t *input, const int16_t *weights,
                       const int32_t *bias, int8_t *output);

int32_t th_fully_connected_s8_scratch_size(const th_fc_params *params,
                                           const th_dims *input_dims,
                                           const th_dims *filter_dims);
int32_t th_fully_connected_s8_scratch_size_fast(const th_fc_params *params,
                                                const th_dims *input_dims,
                                                const th_dims *filter_dims);

/* ---- 16x8: int16 activations, int8 weights, int64 bias (TFLM's reference 16x8 kernels) ----
 * Portable C only; filters in the plain layout in every build (never interleaved); no
 * scratch; offsets must be 0 (zero points 0) and shifts in [-31, 7] (TH_ERR_UNSUPPORTED
 * otherwise); the activation range is int16's or inside it. Shapes as the int8 kernels'. */
th_status th_fully_connected_s16(const th_context *ctx, const th_fc_params *params,
                                 const th_per_channel_quant *quant, const th_dims *input_dims,
                                 const int16_t *input, const th_dims *filter_dims,
                                 const int8_t *filter, const int64_t *bias,
                                 const th_dims *output_dims, int16_t *output);
th_status th_conv_s16(const th_context *ctx, const th_conv_params *params,
                      const th_per_channel_quant *quant, const th_dims *input_dims,
                      const int16_t *input, const th_dims *filter_dims, const int8_t *filter,
                      const int64_t *bias, const th_dims *output_dims, int16_t *output);
th_status th_dw_conv_s16(const th_context *ctx, const th_dw_conv_params *params,
                         const th_per_channel_quant *quant, const th_dims *input_dims,
                         const int16_t *input, const th_dims *filter_dims,
                         const int8_t *filter, const int64_t *bias,
                         const th_dims *output_dims, int16_t *output);

/* int16 ADD / SUB / MUL (TFLM's int16 paths; arith.elementwise's params with left_shift 15
 * and int16 activation ranges), NumPy broadcasting as th_add_s8; no in-place mode.
 * th_sub_s16 (input1 - input2) takes ADD's structs; th_mul_s16 takes offsets 0 only (TFLM
 * refuses int16 MUL zero points). */
th_status th_add_s16(const th_context *ctx, const th_add_params *params,
                     const th_add_quant *quant, const th_shape *input1_shape,
                     const int16_t *input1, const th_shape *input2_shape,
                     const int16_t *input2, const th_shape *output_shape, int16_t *output);
th_status th_sub_s16(const th_context *ctx, const th_add_params *params,
                     const th_add_quant *quant, const th_shape *input1_shape,
                     const int16_t *input1, const th_shape *input2_shape,
                     const int16_t *input2, const th_shape *output_shape, int16_t *output);
th_status th_mul_s16(const th_context *ctx, const th_mul_params *params,
                     const th_per_tensor_quant *quant, const th_shape *input1_shape,
                     const int16_t *input1, const th_shape *input2_shape,
                     const int16_t *input2, const th_shape *output_shape, int16_t *output);

/* ---- SVDF --------------------------------------------------------------------------------
 * input (n=batches, c=input_size) int8, weights_feature (n=filters, c=input_size) int8,
 * weights_time (n=filters, c=memory) int16 (plain layouts in every build), bias [units]
 * int32 or NULL, state batches * filters * memory int16 (TFLite's variable tensor, kept by
 * the caller across calls and updated in place: zero after a reset), output (n=batches,
 * c=units) int8, units = filters / rank. Scratch: th_svdf_s8_scratch_size (the input and
 * the newest state values as int16). No output may overlap an input, the state or the
 * scratch. */
th_status th_svdf_s8(const th_context *ctx, const th_svdf_params *params,
                     const th_svdf_quant *quant, const th_dims *input_dims, const int8_t *input,
                     const th_dims *weights_feature_dims, const int8_t *weights_feature,
                     const th_dims *weights_time_dims, const int16_t *weights_time,
                     const int32_t *bias, int16_t *state, const th_dims *output_dims,
                     int8_t *output);
int32_t th_svdf_s8_scratch_size(const th_svdf_params *params, const th_dims *input_dims,
                                const th_dims *weights_feature_dims,
                                const th_dims *weights_time_dims);

/* ---- UNIDIRECTIONAL_SEQUENCE_LSTM -------------------------------------------------------
 * TFLite Micro's integer LSTM (no peephole, projection, layer norm or CIFG). input int8
 * [batches, time_steps, input_size] ([time_steps, batches, input_size] time-major);
 * input_weights int8 [4][state_size][input_size] and recurrent_weights int8
 * [4][state_size][state_size], gates in the order input, forget, cell, output (TFLite's
 * eight weight tensors, stacked); bias int32 [4][state_size]; hidden int8 and cell int16
 * [batches, state_size] (TFLite's two variable tensors, kept by the caller across calls
 * and updated in place); output int8, shaped as input with state_size last; sigmoid_table
 * the 256-entry table of the gates' sigmoid and tanh (as th_logistic_s16's). No scratch
 * (ctx may be NULL). The output may not overlap the input, the weights or either state. */
th_status th_lstm_s8(const th_context *ctx, const th_lstm_params *params,
                     const th_lstm_quant *quant, const int8_t *input,
                     const int8_t *input_weights, const int8_t *recurrent_weights,
                     const int32_t *bias, const uint16_t *sigmoid_table, int8_t *hidden,
                     int16_t *cell, int8_t *output);

/* ---- pooling, elementwise, activations, data movement ----------------------------------
 * None of these kernels needs scratch: ctx may be NULL, there is no *_scratch_size
 * companion, the planner reserves nothing. Every kernel checks its arguments at entry
 * (TH_ERR_ARG) and writes nothing when it refuses them.
 *
 * LUT design: every unary int8 -> int8 function (LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU,
 * RELU, RELU6, RELU_N1_TO_1, ABS, RSQRT, ELU, ZEROS_LIKE, QUANTIZE int8 -> int8) runs as
 * th_lut_s8, one table load per element. The host builds the 256-entry table by running the NumPy reference (the spec,
 * bit-exact with TFLM's gemmlowp Q4.27 / int16 fixed-point paths) on all 256 inputs
 * (tinyhost.arith.lut), so the kernel is exact by construction; no fixed-point
 * logistic/tanh runs on the device. Table index: (uint8_t)x, i.e. table[0..127] are the
 * outputs for x = 0..127 and table[128..255] for x = -128..-1.
 *
 * Aliasing (in addition to the rules above): th_lut_s8 may run in place (output ==
 * input: four elements are read before those four are written, ascending). th_add_s8 /
 * th_sub_s8 / th_mul_s8 (and th_maximum_s8, th_minimum_s8, th_squared_difference_s8,
 * th_prelu_s8, th_div_s8) may write over input1 or input2 (the same pointer, d = 0) when that
 * input has the output's element count (is not broadcast); they refuse a partial overlap
 * (TH_ERR_ARG). SOFTMAX, QUANTIZE float32 -> int8 and int8 <-> int16, DEQUANTIZE, MEAN,
 * PAD, CONCATENATION, FILL, TRANSPOSE, STRIDED_SLICE, SPLIT, GATHER, DEPTH_TO_SPACE,
 * SPACE_TO_DEPTH, the resizes, ARG_MAX / ARG_MIN and BATCH_MATMUL declare no in-place mode.
 * Any other overlap of an output with an input is not allowed.
 */

/* AVERAGE_POOL_2D: input (N, H, W, C), output (N, OH, OW, C). The padding is never
 * averaged in; a window with no input in it is refused (TH_ERR_ARG), as TFLM does. */
th_status th_avgpool_s8(const th_context *ctx, const th_pool_params *params,
                        const th_dims *input_dims, const int8_t *input,
                        const th_dims *output_dims, int8_t *output);

/* Scratch of th_avgpool_s8's separable path (int16 column sums of one input row, int32
 * channel sums): round_up4(2 * AW * C) + 4 * C when the output has more than one pixel,
 * filter.h <= 256 and filter.h * filter.w >= 4 * stride.h * stride.w (or, with both strides
 * >= 2, 2 * stride.h * stride.w <= filter.h * filter.w <= 256: the DSP strided path), else 0;
 * AW = W, or at
 * stride 1 max(W + filter.w - 1, OW - 1 + filter.w) (zero columns for the padding). Given less
 * (or no ctx) the kernel sums every window directly. */
int32_t th_avgpool_s8_scratch_size(const th_pool_params *params, const th_dims *input_dims,
                                   const th_dims *output_dims);

/* MAX_POOL_2D: as th_avgpool_s8; a window entirely in the padding gives -128, clamped. */
/* Scratch of th_maxpool_s8's separable path (int8 column maxima of one input row):
 * round_up4(W * C) when the output has more than one pixel and
 * filter.h * filter.w > filter.h * stride.w + filter.w, else 0. Given less (or no ctx) the
 * kernel takes every window's maximum directly. */
int32_t th_maxpool_s8_scratch_size(const th_pool_params *params, const th_dims *input_dims,
                                   const th_dims *output_dims);
/* The faster path's scratch (DSP builds; 0 in others or where it has none): R rows of
 * column maxima, R * round_up4(((OW - 1) * stride.w + filter.w) * C), R = 4 when
 * stride.h == 1, 5 <= filter.h <= 7 and the output has four or more rows, R = 2 when
 * stride.h == 1, 2 <= filter.h <= 7 and the output has more than one row, else 1 (0 where
 * that is not above th_maxpool_s8_scratch_size); given that much, R output rows a row apart
 * take one pass over their rows. */
int32_t th_maxpool_s8_scratch_size_fast(const th_pool_params *params,
                                        const th_dims *input_dims,
                                        const th_dims *output_dims);

th_status th_maxpool_s8(const th_context *ctx, const th_pool_params *params,
                        const th_dims *input_dims, const int8_t *input,
                        const th_dims *output_dims, int8_t *output);
/* Prepared MAX_POOL_2D (ARCHITECTURE.md §4.4b): th_maxpool_s8_prepare checks what
 * th_maxpool_s8 checks and fills prep for a call given scratch bytes of scratch (the size
 * of the ctx it will run with); th_maxpool_s8 is th_maxpool_s8_prepare then
 * th_maxpool_s8_prepared. th_maxpool_s8_prepared runs with no checks: prep from
 * th_maxpool_s8_prepare (or the host's word-for-word copy), ctx->buf with at least the
 * scratch prep was made for (ctx unread where prep uses none). */
th_status th_maxpool_s8_prepare(const th_pool_params *params, const th_dims *input_dims,
                                const th_dims *output_dims, int32_t scratch,
                                th_maxpool_prep *prep);
th_status th_maxpool_s8_prepared(const th_context *ctx, const th_maxpool_prep *prep,
                                 const int8_t *input, int8_t *output);

/* ADD / SUB (input1 - input2) / MUL with NumPy broadcasting of up to TH_MAX_RANK dims:
 * shapes align on their last dims, a dim of 1 (or a missing one) broadcasts, and the
 * output shape must be the broadcast shape. */
th_status th_add_s8(const th_context *ctx, const th_add_params *params,
                    const th_add_quant *quant, const th_shape *input1_shape,
                    const int8_t *input1, const th_shape *input2_shape, const int8_t *input2,
                    const th_shape *output_shape, int8_t *output);
th_status th_sub_s8(const th_context *ctx, const th_add_params *params,
                    const th_add_quant *quant, const th_shape *input1_shape,
                    const int8_t *input1, const th_shape *input2_shape, const int8_t *input2,
                    const th_shape *output_shape, int8_t *output);
/* ADD / SUB with host-built input tables: input1_table / input2_table are NULL (that input
 * is rescaled per element, as th_add_s8) or 256 int32 with table[(uint8_t)x] = the
 * rescaled input, RDBPOT(SRDHM((x + input_offset) << left_shift, multiplier), -shift)
 * (tinyhost.arith.elementwise.add_input_tables). params and quant are still required and
 * checked; with tables that match them the results equal th_add_s8 / th_sub_s8 bit for bit
 * (a table that does not match gives wrong values, never out-of-bounds accesses). Same
 * shapes, broadcasting and in-place rule as th_add_s8. */
th_status th_add_s8_tables(const th_context *ctx, const th_add_params *params,
                           const th_add_quant *quant, const int32_t *input1_table,
                           const int32_t *input2_table, const th_shape *input1_shape,
                           const int8_t *input1, const th_shape *input2_shape,
                           const int8_t *input2, const th_shape *output_shape, int8_t *output);
th_status th_sub_s8_tables(const th_context *ctx, const th_add_params *params,
                           const th_add_quant *quant, const int32_t *input1_table,
                           const int32_t *input2_table, const th_shape *input1_shape,
                           const int8_t *input1, const th_shape *input2_shape,
                           const int8_t *input2, const th_shape *output_shape, int8_t *output);
/* Prepared ADD / SUB (ARCHITECTURE.md §4.4b): th_add_s8_prepare checks what th_add_s8_tables
 * checks (tables may be NULL; subtract: 0 ADD, 1 SUB) except the pointers' overlap, and fills
 * *prep (TH_ERR_ARG: nothing valid in it), its nosign by an exhaustive proof over the 65536
 * input pairs (about a million instructions: a set-up step, not per call); th_add_s8,
 * th_sub_s8 and their _tables forms are this without the proof (nosign 0), the overlap
 * check, then th_add_s8_prepared. th_add_s8_prepared runs a prepared call
 * with no checks: prep from th_add_s8_prepare (or the host's field-for-field copy, with
 * the same tables), inputs and output as th_add_s8's, the in-place rule kept; it returns
 * TH_OK. The compiled backend keeps each ADD / SUB's prep in flash and calls only this. */
th_status th_add_s8_prepare(const th_add_params *params, const th_add_quant *quant,
                            const int32_t *input1_table, const int32_t *input2_table,
                            const th_shape *input1_shape, const th_shape *input2_shape,
                            const th_shape *output_shape, int32_t subtract, th_add_prep *prep);
th_status th_add_s8_prepared(const th_add_prep *prep, const int8_t *input1, const int8_t *input2,
                             int8_t *output);
th_status th_mul_s8(const th_context *ctx, const th_mul_params *params,
                    const th_per_tensor_quant *quant, const th_shape *input1_shape,
                    const int8_t *input1, const th_shape *input2_shape, const int8_t *input2,
                    const th_shape *output_shape, int8_t *output);
/* Prepared MUL, as th_add_s8_prepare / th_add_s8_prepared (nosign's proof over the 65536
 * products): th_mul_s8 is th_mul_s8_prepare without the proof, the overlap check, then
 * th_mul_s8_prepared. */
th_status th_mul_s8_prepare(const th_mul_params *params, const th_per_tensor_quant *quant,
                            const th_shape *input1_shape, const th_shape *input2_shape,
                            const th_shape *output_shape, th_mul_prep *prep);
th_status th_mul_s8_prepared(const th_mul_prep *prep, const int8_t *input1, const int8_t *input2,
                             int8_t *output);

/* MAXIMUM / MINIMUM: the larger (smaller) raw int8 value of each pair, no requantization
 * (TFLM compares raw values whatever the quantization). Broadcasting and in-place rule as
 * th_add_s8. */
th_status th_maximum_s8(const th_context *ctx, const th_shape *input1_shape,
                        const int8_t *input1, const th_shape *input2_shape,
                        const int8_t *input2, const th_shape *output_shape, int8_t *output);
th_status th_minimum_s8(const th_context *ctx, const th_shape *input1_shape,
                        const int8_t *input1, const th_shape *input2_shape,
                        const int8_t *input2, const th_shape *output_shape, int8_t *output);

/* SQUARED_DIFFERENCE (arith.binary.SquaredDifferenceParams): ADD's params and quant structs
 * (left_shift 7); unlike ADD, quant->output_shift may be positive (a left shift).
 * Broadcasting and in-place rule as th_add_s8. */
th_status th_squared_difference_s8(const th_context *ctx, const th_add_params *params,
                                   const th_add_quant *quant, const th_shape *input1_shape,
                                   const int8_t *input1, const th_shape *input2_shape,
                                   const int8_t *input2, const th_shape *output_shape,
                                   int8_t *output);

/* DIV (arith.binary.DivParams in MUL's structs; quant->shift <= 23): TFLM's reciprocal
 * arithmetic, its undefined corners (a zero divisor, shifts past 31) as the oracle's x86
 * build computes them (th_div_s8.c). Broadcasting and in-place rule as th_add_s8. */
th_status th_div_s8(const th_context *ctx, const th_mul_params *params,
                    const th_per_tensor_quant *quant, const th_shape *input1_shape,
                    const int8_t *input1, const th_shape *input2_shape, const int8_t *input2,
                    const th_shape *output_shape, int8_t *output);

/* PRELU: alpha broadcasts against the input (per channel: shape [C] or [1, 1, C]); the
 * output has the input's shape. In-place rule as th_add_s8 (input1 = input). */
th_status th_prelu_s8(const th_context *ctx, const th_prelu_params *params,
                      const th_shape *input_shape, const int8_t *input,
                      const th_shape *alpha_shape, const int8_t *alpha,
                      const th_shape *output_shape, int8_t *output);

/* SOFTMAX over the last dim of shape; output has the same shape. Rows longer than 4095
 * are refused (TH_ERR_UNSUPPORTED): TFLM's Q12.19 sum of exps could overflow. */
th_status th_softmax_s8(const th_context *ctx, const th_softmax_params *params,
                        const th_shape *shape, const int8_t *input, int8_t *output);
th_status th_softmax_s8_s16(const th_context *ctx, const th_softmax_params *params,
                            const th_shape *shape, const int8_t *input, int16_t *output);

/* LOG_SOFTMAX over rows of depth int8 values (rows * depth elements). output == input is
 * allowed (each row is read whole before it is written); no other overlap. */
th_status th_log_softmax_s8(const th_context *ctx, const th_log_softmax_params *params,
                            int32_t rows, int32_t depth, const int8_t *input, int8_t *output);

/* L2_NORMALIZATION over rows of depth int8 values; output == input allowed, as above. */
th_status th_l2norm_s8(const th_context *ctx, const th_l2norm_params *params, int32_t rows,
                       int32_t depth, const int8_t *input, int8_t *output);

/* CUMSUM along the middle axis of the input viewed as (outer, axis_size, inner); the output
 * has the input's shape. output == input allowed (element k is read, then written, once). */
th_status th_cumsum_s8(const th_context *ctx, const th_cumsum_params *params, int32_t outer,
                       int32_t axis_size, int32_t inner, const int8_t *input, int8_t *output);

/* int16 -> int16 SOFTMAX (TFLM's SoftmaxInt16): quant scales the difference to the row max
 * so that [-65535, 0] is [-10, 0] (arith.softmax16.Softmax16Params); exp_lut and recip_lut
 * are the 513-entry tables of arith.softmax16.softmax16_luts. Rows longer than 65535 are
 * refused (TH_ERR_UNSUPPORTED). No in-place mode. */
th_status th_softmax_s16(const th_context *ctx, const th_per_tensor_quant *quant,
                         const int16_t *exp_lut, const int16_t *recip_lut,
                         const th_shape *shape, const int16_t *input, int16_t *output);

/* FILL: size copies of the raw *value (TFLM copies it whatever the quantization). */
th_status th_fill_s8(const th_context *ctx, const int8_t *value, int32_t size, int8_t *output);

/* Unary int8 function through a 256-entry table (see "LUT design" above). */
th_status th_lut_s8(const th_context *ctx, const int8_t *table, int32_t size,
                    const int8_t *input, int8_t *output);

/* QUANTIZE float32 -> int8: round(x / scale) (float32 division, halves away from zero)
 * + zero point, saturated; NaN counts as 0. Float32 arithmetic only (no double, no libm). */
th_status th_quantize_f32_s8(const th_context *ctx, const th_affine_params *params,
                             int32_t size, const float *input, int8_t *output);

/* DEQUANTIZE int8 -> float32. TFLM computes scale * (q - zp) in double and rounds to
 * float32; since |q - zp| <= 255 the double product is exact, so the single float32
 * product scale * (float)(q - zp) rounds the same exact value once: identical results
 * (also for subnormal results, provided the FPU does not flush to zero). */
th_status th_dequantize_s8_f32(const th_context *ctx, const th_affine_params *params,
                               int32_t size, const int8_t *input, float *output);

/* QUANTIZE int8 -> int16 and int16 -> int8 as TFLM's Requantize: (x - input zero point)
 * times the multiplier (double rounding) + output zero point, saturated to the output type. */
th_status th_requantize_s8_s16(const th_context *ctx, const th_requantize_params *params,
                               const th_per_tensor_quant *quant, int32_t size,
                               const int8_t *input, int16_t *output);
th_status th_requantize_s16_s8(const th_context *ctx, const th_requantize_params *params,
                               const th_per_tensor_quant *quant, int32_t size,
                               const int16_t *input, int8_t *output);
/* QUANTIZE to and from int32, the same steps in int32 arithmetic as TFLM's: x - input zero
 * point wraps for int32 inputs, and the sum with the output zero point wraps for int32
 * outputs (narrower outputs saturate). Zero points within their type. */
th_status th_requantize_s8_s32(const th_context *ctx, const th_requantize_params *params,
                               const th_per_tensor_quant *quant, int32_t size,
                               const int8_t *input, int32_t *output);
th_status th_requantize_s16_s32(const th_context *ctx, const th_requantize_params *params,
                                const th_per_tensor_quant *quant, int32_t size,
                                const int16_t *input, int32_t *output);
th_status th_requantize_s32_s8(const th_context *ctx, const th_requantize_params *params,
                               const th_per_tensor_quant *quant, int32_t size,
                               const int32_t *input, int8_t *output);
th_status th_requantize_s32_s16(const th_context *ctx, const th_requantize_params *params,
                                const th_per_tensor_quant *quant, int32_t size,
                                const int32_t *input, int16_t *output);

/* int16 LOGISTIC and TANH (TFLM's reference_integer_ops; zero points 0, output scale
 * 2^-15): quant is Prepare's input (multiplier, left_shift), arith.sigmoid16.Sigmoid16Params
 * (multiplier 0: the power-of-two case, left_shift at most 13 then; else 0..31); table is the
 * 256-entry sigmoid table of arith.sigmoid16.sigmoid_table_u16. May run in place (output ==
 * input). */
th_status th_logistic_s16(const th_context *ctx, const th_per_tensor_quant *quant,
                          const uint16_t *table, int32_t size, const int16_t *input,
                          int16_t *output);
th_status th_tanh_s16(const th_context *ctx, const th_per_tensor_quant *quant,
                      const uint16_t *table, int32_t size, const int16_t *input,
                      int16_t *output);

/* PAD / PADV2: output dim i = input dim i + before[i] + after[i]. */
th_status th_pad_s8(const th_context *ctx, const th_pad_params *params,
                    const th_shape *input_shape, const int8_t *input,
                    const th_shape *output_shape, int8_t *output);

/* A convolution's output from its computed channels (compiled backend): every pixel is
 * `pixel` (channels bytes of constants) with live[j] written at live_channel[j]. */
th_status th_expand_channels_s8(const th_context *ctx, const int8_t *live, int32_t pixels,
                                int32_t live_count, const uint16_t *live_channel,
                                const int8_t *pixel, int32_t channels, int8_t *output);

/* CONCATENATION along params->axis of params->num_inputs inputs (input_shapes[i],
 * inputs[i]) sharing every other dim; raw copies (TFLM requires equal quantization). */
th_status th_concat_s8(const th_context *ctx, const th_concat_params *params,
                       const th_shape *input_shapes, const int8_t *const *inputs,
                       const th_shape *output_shape, int8_t *output);

/* TRANSPOSE: output dims[i] = input dims[perm[i]]. */
th_status th_transpose_s8(const th_context *ctx, const th_transpose_params *params,
                          const th_shape *input_shape, const int8_t *input,
                          const th_shape *output_shape, int8_t *output);

/* STRIDED_SLICE, resolved on the host: output_shape has the input's rank (a shrunk dim has
 * size 1; new axes are not listed) and output[i...] = input[begin + i * stride ...]; every
 * index must lie inside the input. The output tensor's own shape is a reshape of this. */
th_status th_strided_slice_s8(const th_context *ctx, const th_strided_slice_params *params,
                              const th_shape *input_shape, const int8_t *input,
                              const th_shape *output_shape, int8_t *output);

/* MEAN over the dims in params->axis_mask, as TFLM's int8 QuantizedMeanOrSum: the
 * zero-point corrected int32 sum requantized with quant (input_scale / output_scale)
 * folded with 1/count, + output zero point. output_shape may keep the reduced dims as 1
 * or drop them (only its element count is checked). */
th_status th_mean_s8(const th_context *ctx, const th_mean_params *params,
                     const th_per_tensor_quant *quant, const th_shape *input_shape,
                     const int8_t *input, const th_shape *output_shape, int8_t *output);

/* REDUCE_MAX: the largest raw int8 value over the reduced dims (params->axis_mask; input
 * and output share their quantization, so the zero points are not read). */
th_status th_reduce_max_s8(const th_context *ctx, const th_mean_params *params,
                           const th_shape *input_shape, const int8_t *input,
                           const th_shape *output_shape, int8_t *output);

/* SUM: th_mean_s8 without the 1/count fold (TFLM's EvalSumHelper, int8). */
th_status th_sum_s8(const th_context *ctx, const th_mean_params *params,
                    const th_per_tensor_quant *quant, const th_shape *input_shape,
                    const int8_t *input, const th_shape *output_shape, int8_t *output);

/* SPLIT / SPLIT_V / UNPACK along params->axis into params->num_outputs outputs
 * (output_shapes[i], outputs[i]) sharing every other dim with the input (an UNPACK output
 * is described with the axis dim 1); raw copies, one memcpy per output slab. */
th_status th_split_s8(const th_context *ctx, const th_split_params *params,
                      const th_shape *input_shape, const int8_t *input,
                      const th_shape *output_shapes, int8_t *const *outputs);

/* GATHER: output (b, o, i, :) = input (b, o, indices[b * coords + i], :), rows of inner
 * bytes; an index outside [0, axis_size) is refused (TH_ERR_ARG) before anything is
 * written. PACK runs as th_concat_s8 with each input described with the new axis as 1. */
th_status th_gather_s8(const th_context *ctx, const th_gather_params *params,
                       const int8_t *input, const int32_t *indices, int8_t *output);

/* DEPTH_TO_SPACE: input (N, H, W, b*b*C) -> output (N, H*b, W*b, C); output (n, h*b + i,
 * w*b + j, c) = input (n, h, w, (i*b + j)*C + c). SPACE_TO_DEPTH is its inverse. */
th_status th_depth_to_space_s8(const th_context *ctx, int32_t block, const th_dims *input_dims,
                               const int8_t *input, const th_dims *output_dims, int8_t *output);
th_status th_space_to_depth_s8(const th_context *ctx, int32_t block, const th_dims *input_dims,
                               const int8_t *input, const th_dims *output_dims, int8_t *output);

/* RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR (NHWC, same N and C) from host-built tables
 * (th_resize_tables; every index and weight is checked at entry). Raw values, as TFLM. */
th_status th_resize_nearest_s8(const th_context *ctx, const th_resize_tables *tables,
                               const th_dims *input_dims, const int8_t *input,
                               const th_dims *output_dims, int8_t *output);
th_status th_resize_bilinear_s8(const th_context *ctx, const th_resize_tables *tables,
                                const th_dims *input_dims, const int8_t *input,
                                const th_dims *output_dims, int8_t *output);

/* ARG_MAX / ARG_MIN: output (o, j) = the first i with the largest (smallest) input
 * (o, i, j); int32 indices. */
th_status th_arg_max_s8(const th_context *ctx, const th_arg_params *params, const int8_t *input,
                        int32_t *output);
th_status th_arg_min_s8(const th_context *ctx, const th_arg_params *params, const int8_t *input,
                        int32_t *output);

/* BATCH_MATMUL: output [..., rows, cols] = LHS [..., rows, depth] x RHS [..., depth, cols]
 * (adj_x / adj_y: an operand stored transposed in its last two dims), batch dims broadcast
 * after extending both operands with leading 1s to the output's rank (2..TH_MAX_RANK). No
 * scratch; no in-place mode. */
th_status th_batch_matmul_s8(const th_context *ctx, const th_batch_matmul_params *params,
                             const th_per_tensor_quant *quant, const th_shape *lhs_shape,
                             const int8_t *lhs, const th_shape *rhs_shape, const int8_t *rhs,
                             const th_shape *output_shape, int8_t *output);

/* ---- INT4: packed int4 weights (TFLite INT4; kernels_c/int4/th_nn_s4.h) -----------------
 * CONV_2D (no groups), DEPTHWISE_CONV_2D and FULLY_CONNECTED with int8 activations and
 * weights two per byte in every build (TFLite's nibble order: value 2i low, 2i+1 high;
 * host/tinyhost/codegen/layout.py). CONV_2D and FC: one row per output channel (FC: Cin
 * values; conv: the KH*KW*Cin of OHWI), each row zero-padded to round_up(K, 8) values, the
 * values of each group of eight permuted (s4_rows); scratch (*_scratch_size): FC
 * 2 * round_up(K, 8) bytes (one staged int16 column), CONV_2D 4 * round_up(K, 8) + 16 * Cout
 * (the columns of two output pixels, the fast requantization's constants). DEPTHWISE_CONV_2D: the KH*KW*C values in [KH, KW, C]
 * order as one run padded to a multiple of 8 (s4_dw_run); scratch round_up(KH*KW*C, 4) (the
 * filter widened to int8) + th_dw_conv_s8_scratch_size, or + its fast size
 * (th_dw_conv_s4_scratch_size_fast, 0 when none) for th_dw_conv_s8's faster path.
 * Per-channel requantization (per tensor: repeat the pair); FC's filter_offset must be 0.
 * K > 65536 is TH_ERR_UNSUPPORTED (conv, FC). Dims as the int8 kernels'. No output may
 * overlap an input or the scratch. */
th_status th_fully_connected_s4(const th_context *ctx, const th_fc_params *params,
                                const th_per_channel_quant *quant, const th_dims *input_dims,
                                const int8_t *input, const th_dims *filter_dims,
                                const uint8_t *filter, const int32_t *bias,
                                const th_dims *output_dims, int8_t *output);
int32_t th_fully_connected_s4_scratch_size(const th_fc_params *params,
                                           const th_dims *input_dims,
                                           const th_dims *filter_dims);
th_status th_conv_s4(const th_context *ctx, const th_conv_params *params,
                     const th_per_channel_quant *quant, const th_dims *input_dims,
                     const int8_t *input, const th_dims *filter_dims, const uint8_t *filter,
                     const int32_t *bias, const th_dims *output_dims, int8_t *output);
int32_t th_conv_s4_scratch_size(const th_conv_params *params, const th_dims *input_dims,
                                const th_dims *filter_dims, const th_dims *output_dims);
th_status th_dw_conv_s4(const th_context *ctx, const th_dw_conv_params *params,
                        const th_per_channel_quant *quant, const th_dims *input_dims,
                        const int8_t *input, const th_dims *filter_dims, const uint8_t *filter,
                        const int32_t *bias, const th_dims *output_dims, int8_t *output);
int32_t th_dw_conv_s4_scratch_size(const th_dw_conv_params *params, const th_dims *input_dims,
                                   const th_dims *filter_dims, const th_dims *output_dims);
int32_t th_dw_conv_s4_scratch_size_fast(const th_dw_conv_params *params,
                                        const th_dims *input_dims, const th_dims *filter_dims,
                                        const th_dims *output_dims);

#ifdef __cplusplus
}
#endif

#endif /* TH_NN_H */
