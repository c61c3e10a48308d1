/* th_mean_s8 / th_sum_s8 / th_reduce_max_s8: int8 MEAN and SUM as TFLite Micro's
 * QuantizedMeanOrSum (SUM: no 1/count fold, shift_by = 0):
 *   sum = sum of the raw int8 inputs (int32, wrapping) over the reduced dims
 *   shift_by = min(floor(log2(count)), 32, 31 + shift)
 *   multiplier' = (multiplier << shift_by) / count,  shift' = shift - shift_by
 *   out = clamp(MultiplyByQuantizedMultiplier(sum - zp_in * count, multiplier', shift')
 *               + zp_out, -128, 127)
 * (arith.reduce.fold_count). Dims are grouped into alternating kept / reduced runs; the
 * output is written in order and each output sums its reduced elements with a 2-level
 * stride walk per reduced group (REDUCE_MAX: the same walk, keeping the raw maximum). */
#include <stddef.h>
#include <string.h>

#include "../reshape/th_nn_shape.h"
#include "th_nn.h"
#include "th_nn_support.h"

typedef struct {
    int32_t rank;
    int32_t dims[TH_MAX_RANK];
    int32_t stride[TH_MAX_RANK];
    int32_t reduced[TH_MAX_RANK];
} mean_groups;

static int32_t floor_log2(int32_t x)
{
    int32_t n = -1;
    while (x > 0) {
        x >>= 1;
        n++;
    }
    return n;
}

static int32_t next_reduced(const mean_groups *g, int32_t d)
{
    while (d < g->rank && !g->reduced[d]) {
        d++;
    }
    return d;
}

/* Sum of the elements of one output: the reduced groups from d on vary, the kept groups
 * are fixed by base. int32 wrapping like TFLM's accumulator. */
static int32_t reduced_sum(const mean_groups *g, const int8_t *base, int32_t d)
{
    d = next_reduced(g, d);
    if (d == g->rank) {
        return base[0];
    }
    const int32_t stride = g->stride[d];
    uint32_t sum = 0;
    if (next_reduced(g, d + 1) == g->rank) {
        for (int32_t i = 0; i < g->dims[d]; i++) {
            sum += (uint32_t)(int32_t)base[i * stride];
        }
    } else {
        for (int32_t i = 0; i < g->dims[d]; i++) {
            sum += (uint32_t)reduced_sum(g, base + i * stride, d + 1);
        }
    }
    return (int32_t)sum;
}

/* REDUCE_MAX's counterpart of reduced_sum: the largest raw value. */
static int32_t reduced_max(const mean_groups *g, const int8_t *base, int32_t d)
{
    d = next_reduced(g, d);
    if (d == g->rank) {
        return base[0];
    }
    const int32_t stride = g->stride[d];
    const int32_t last = next_reduced(g, d + 1) == g->rank;
    int32_t max = -128;
    for (int32_t i = 0; i < g->dims[d]; i++) {
        const int32_t v = last ? base[i * stride] : reduced_max(g, base + i * stride, d + 1);
        max = v > max ? v : max;
    }
    return max;
}

/* One output: the sum less zero point * count, requantized with the folded multiplier. */
static int8_t mean_out(int32_t sum, int32_t zp_total, int32_t multiplier, int32_t shift,
                       int32_t output_zero_point)
{
    const int32_t centered = (int32_t)((uint32_t)sum - (uint32_t)zp_total);
    const int32_t v = th_requantize(centered, multiplier, shift) + output_zero_point;
    return (int8_t)th_clamp(v, -128, 127);
}

#if TH_NN_HAS_DSP && !TH_NN_MVE
/* sum[0..3] += the int16 lanes of even (channels 0 and 2) and odd (1 and 3). */
TH_INLINE void add_lanes(int32_t sum[4], int32_t even, int32_t odd)
{
    sum[0] += (int16_t)(uint16_t)((uint32_t)even & 0xFFFFu);
    sum[1] += (int16_t)(uint16_t)((uint32_t)odd & 0xFFFFu);
    sum[2] += (int16_t)(uint16_t)((uint32_t)even >> 16);
    sum[3] += (int16_t)(uint16_t)((uint32_t)odd >> 16);
}

/* Channel sums of 4 * words (1 or 2) neighbouring channels over rows rows of stride stride
 * (the [R, C] group layout: MEAN over H and W): one word per row and four channels into int16
 * lane sums (SXTAB16), moved to int32 every 256 rows (|lane| <= 128 * 256 fits int16). Two
 * words a row halve the loop's cost per channel. */
TH_INLINE void sums_rows(const int8_t *base, int32_t rows, int32_t stride, int32_t words,
                         int32_t sum[8])
{
    for (int32_t j = 0; j < 4 * words; j++) {
        sum[j] = 0;
    }
    int32_t r = 0;
    while (r < rows) {
        const int32_t end = rows - r > 256 ? r + 256 : rows;
        /* channels (0, 2), (1, 3) of the first word, (4, 6), (5, 7) of the second: scalars,
         * so that the row loop keeps them in registers */
        int32_t l0 = 0, l1 = 0, l2 = 0, l3 = 0;
        const int8_t *q = base + r * stride;
        if (words == 1) {
            for (; r < end; r++, q += stride) {
                const int32_t w = th_read_s32(q);
                l0 = th_sxtab16(l0, w);
                l1 = th_sxtab16_ror8(l1, w);
            }
        } else {
            for (; r < end; r++, q += stride) {
                const int32_t w0 = th_read_s32(q), w1 = th_read_s32(q + 4);
                l0 = th_sxtab16(l0, w0);
                l1 = th_sxtab16_ror8(l1, w0);
                l2 = th_sxtab16(l2, w1);
                l3 = th_sxtab16_ror8(l3, w1);
            }
        }
        add_lanes(sum, l0, l1);
        if (words == 2) {
            add_lanes(sum + 4, l2, l3);
        }
    }
}

/* The requantization of one call's outputs: th_fast_rq_apply where it is exact for every
 * sum (|sum - zp_total| <= 256 * count < 2^29, the folded multiplier >= 0, shift in
 * [-22, -1]: the usual MEAN), else mean_out's; a few instructions an output instead of the
 * 64-bit rounding chain, which dominates small planes with many channels. */
typedef struct {
    th_fast_rq rq;
    int fast;
    int32_t zp_total, multiplier, shift, output_zero_point;
} mean_rq;

TH_INLINE int8_t mean_out_rq(int32_t sum, const mean_rq *q)
{
    if (q->fast) {
        return (int8_t)th_fast_rq_apply((int32_t)((uint32_t)sum - (uint32_t)q->zp_total),
                                        &q->rq);
    }
    return mean_out(sum, q->zp_total, q->multiplier, q->shift, q->output_zero_point);
}

/* Sums of a contiguous run of n bytes by byte position modulo the period (4 bytes: one
 * word, 12 bytes: three), for channel counts 1-3 (C divides the period): each word adds
 * into two int16 lane pairs (SXTAB16, its ror #8 form), moved to int32 every 256 periods
 * (|lane| <= 128 * 256 fits); the bytes past the last whole period one at a time. */
static void sums_period(const int8_t *p, int32_t n, int32_t words, uint32_t pos[12])
{
    const int32_t period = 4 * words;
    for (int32_t j = 0; j < period; j++) {
        pos[j] = 0;
    }
    int32_t done = 0;
    while (n - done >= period) {
        int32_t chunks = (n - done) / period;
        chunks = chunks > 256 ? 256 : chunks;
        const int8_t *q = p + done;
        int32_t l[6] = {0, 0, 0, 0, 0, 0}; /* (0, 2), (1, 3) of each word */
        if (words == 1) {
            for (int32_t i = 0; i < chunks; i++, q += 4) {
                const int32_t w = th_read_s32(q);
                l[0] = th_sxtab16(l[0], w);
                l[1] = th_sxtab16_ror8(l[1], w);
            }
        } else {
            for (int32_t i = 0; i < chunks; i++, q += 12) {
                const int32_t w0 = th_read_s32(q), w1 = th_read_s32(q + 4);
                const int32_t w2 = th_read_s32(q + 8);
                l[0] = th_sxtab16(l[0], w0);
                l[1] = th_sxtab16_ror8(l[1], w0);
                l[2] = th_sxtab16(l[2], w1);
                l[3] = th_sxtab16_ror8(l[3], w1);
                l[4] = th_sxtab16(l[4], w2);
                l[5] = th_sxtab16_ror8(l[5], w2);
            }
        }
        for (int32_t k = 0; k < words; k++) {
            for (int32_t j = 0; j < 4; j++) { /* lane j / 2 of word (0, 2) or (1, 3) */
                const uint32_t lane = (uint32_t)l[2 * k + (j & 1)] >> (j & 2 ? 16 : 0);
                pos[4 * k + j] += (uint32_t)(int32_t)(int16_t)(uint16_t)(lane & 0xFFFFu);
            }
        }
        done += chunks * period;
    }
    for (int32_t j = 0; done + j < n; j++) {
        pos[j] += (uint32_t)(int32_t)p[done + j];
    }
}
#endif

#if TH_NN_MVE
/* The [R, C] group layout on MVE: 16 channels at a time, int16 lane sums over at most 256
 * rows (|sum| <= 128 * 256 fits) widened into int32 (wrapping like the scalar sum), less
 * the zero point, requantized four lanes at a time (th_mve_requantize: exact for the folded
 * multiplier >= 0 and shift in [-31, 30]). */
static void __attribute__((noinline))
mean_rc_mve(const int8_t *input, int32_t rows, int32_t stride, int32_t cols, int32_t zp_total,
            int32_t multiplier, int32_t shift, int32_t output_zero_point, int8_t *output)
{
    th_mve_out o;
    o.output_offset = output_zero_point;
    o.act_min = -128;
    o.act_max = 127;
    for (int32_t c0 = 0; c0 < cols; c0 += 16) {
        const int32_t cn = cols - c0;
        const mve_pred16_t p0 = vctp16q((uint32_t)cn);
        const mve_pred16_t p1 = vctp16q((uint32_t)(cn > 8 ? cn - 8 : 0));
        int32x4_t s[4];
        for (int32_t j = 0; j < 4; j++) {
            s[j] = vdupq_n_s32(0);
        }
        int32_t r = 0;
        while (r < rows) {
            const int32_t end = rows - r > 256 ? r + 256 : rows;
            int16x8_t a0 = vdupq_n_s16(0), a1 = vdupq_n_s16(0);
            const int8_t *px = input + r * stride + c0;
            if (cn > 8) {
                for (; r < end; r++, px += stride) {
                    a0 = vaddq_s16(a0, vldrbq_z_s16(px, p0));
                    a1 = vaddq_s16(a1, vldrbq_z_s16(px + 8, p1));
                }
            } else {
                for (; r < end; r++, px += stride) {
                    a0 = vaddq_s16(a0, vldrbq_z_s16(px, p0));
                }
            }
            th_mve_widen16(&a0, &a1, s);
        }
        for (int32_t j = 0; j < 4 && 4 * j < cn; j++) {
            const int32x4_t c = vsubq_n_s32(s[j], zp_total);
            const int32x4_t v = shift < 0 ? th_mve_requantize_n(c, multiplier, shift, 1, &o)
                                          : th_mve_requantize_n(c, multiplier, shift, 0, &o);
            vstrbq_p_s32(output + c0 + 4 * j, v, vctp32q((uint32_t)(cn - 4 * j)));
        }
    }
}
#endif

enum { REDUCE_MEAN, REDUCE_SUM, REDUCE_MAX };

/* MEAN and SUM: the same zero-point corrected sums; SUM's requantization has no 1/count
 * fold (QuantizedMeanOrSum's compute_sum). REDUCE_MAX: the raw maximum (input and output
 * share their quantization), over the same walk. */
static th_status reduce(const th_mean_params *params, const th_per_tensor_quant *quant,
                        const th_shape *input_shape, const int8_t *input,
                        const th_shape *output_shape, int8_t *output, int32_t mode)
{
    const int32_t divide = mode == REDUCE_MEAN;
    if (params == NULL || quant == NULL || input == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    const int32_t in_count = th_nn_shape_count(input_shape);
    const int32_t out_count = th_nn_shape_count(output_shape);
    if (in_count < 0 || out_count < 0 || params->input_zero_point < -128 ||
        params->input_zero_point > 127 || params->output_zero_point < -128 ||
        params->output_zero_point > 127 || quant->multiplier < 0 || quant->shift < -31 ||
        quant->shift > 30 || (params->axis_mask >> input_shape->rank) != 0) {
        return TH_ERR_ARG;
    }
    /* Group the dims: size-1 dims dropped, neighbours with the same status merged. */
    int32_t in_stride[TH_MAX_RANK];
    th_nn_shape_strides(input_shape, in_stride);
    mean_groups g;
    g.rank = 0;
    int32_t count = 1;
    int32_t kept = 1;
    for (int32_t d = 0; d < input_shape->rank; d++) {
        const int32_t size = input_shape->dims[d];
        const int32_t reduced = (params->axis_mask >> d) & 1u;
        if (reduced) {
            count *= size;
        } else {
            kept *= size;
        }
        if (size == 1) {
            continue;
        }
        if (g.rank > 0 && g.reduced[g.rank - 1] == reduced) {
            g.dims[g.rank - 1] *= size;
            g.stride[g.rank - 1] = in_stride[d];
            continue;
        }
        g.dims[g.rank] = size;
        g.stride[g.rank] = in_stride[d];
        g.reduced[g.rank] = reduced;
        g.rank++;
    }
    if (kept != out_count) {
        return TH_ERR_ARG;
    }
    /* The 1/count fold of TFLM's Eval (MEAN only). */
    int32_t shift_by = divide ? floor_log2(count) : 0;
    shift_by = shift_by < 32 ? shift_by : 32;
    shift_by = shift_by < 31 + quant->shift ? shift_by : 31 + quant->shift;
    const int32_t multiplier =
        divide ? (int32_t)(((int64_t)quant->multiplier << shift_by) / count) : quant->multiplier;
    const int32_t shift = quant->shift - shift_by;
    const int32_t zp_total = (int32_t)((uint32_t)params->input_zero_point * (uint32_t)count);

    int32_t first = 0; /* outputs before this one are written */
#if TH_NN_MVE
    if (mode != REDUCE_MAX && g.rank == 2 && g.reduced[0] && !g.reduced[1]) {
        /* [R, C]: 16 channels at a time */
        mean_rc_mve(input, g.dims[0], g.stride[0], g.dims[1], zp_total, multiplier, shift,
                    params->output_zero_point, output);
        first = g.dims[1];
    }
#elif TH_NN_HAS_DSP
    mean_rq rq;
    rq.fast = th_fast_rq_ok(multiplier, shift, INT64_C(256) * count);
    rq.rq = th_fast_rq_make(multiplier, rq.fast ? shift : -1, params->output_zero_point);
    rq.zp_total = zp_total;
    rq.multiplier = multiplier;
    rq.shift = shift;
    rq.output_zero_point = params->output_zero_point;
    /* [R] (one output: every element) or [R, C] with C <= 3: the contiguous run summed by
     * byte position, a position's sum going to channel position % C. */
    const int32_t rc = g.rank == 2 && g.reduced[0] && !g.reduced[1] && g.dims[1] <= 3;
    if (mode != REDUCE_MAX && ((g.rank == 1 && g.reduced[0]) || rc)) {
        const int32_t ch = rc ? g.dims[1] : 1;
        uint32_t pos[12];
        sums_period(input, g.rank == 1 ? g.dims[0] : g.dims[0] * ch, ch == 3 ? 3 : 1, pos);
        const int32_t period = ch == 3 ? 12 : 4;
        for (int32_t c = 0; c < ch; c++) {
            uint32_t sum = 0;
            for (int32_t j = c; j < period; j += ch) {
                sum += pos[j];
            }
            output[c] = mean_out_rq((int32_t)sum, &rq);
        }
        return TH_OK;
    }
    if (mode != REDUCE_MAX && g.rank == 2 && g.reduced[0] && !g.reduced[1]) {
        /* [R, C]: eight channels at a time (four where C < 8); the last 1-7 (1-3) as the
         * eight (four) ending at channel C - 1 (C > 4: some channels summed twice, each
         * output written once more with the same value) */
        const int32_t c_all = g.dims[1], group = c_all >= 8 ? 8 : 4;
        for (; first < c_all; first += group) {
            const int32_t at = first + group <= c_all ? first : c_all - group;
            int32_t sums[8];
            sums_rows(input + at, g.dims[0], g.stride[0], group / 4, sums);
            for (int32_t j = 0; j < group; j++) {
                output[at + j] = mean_out_rq(sums[j], &rq);
            }
        }
        return TH_OK;
    }
#endif
    /* Odometer over the kept groups; each output sums its reduced groups. */
    int32_t idx[TH_MAX_RANK] = {0};
    int32_t off = 0;
    if (first > 0) { /* [R, C]: the kept group is dim 1 */
        idx[1] = first;
        off = first * g.stride[1];
    }
    for (int32_t o = first; o < out_count; o++) {
        output[o] = mode == REDUCE_MAX
                        ? (int8_t)reduced_max(&g, input + off, 0)
                        : mean_out(reduced_sum(&g, input + off, 0), zp_total, multiplier, shift,
                                   params->output_zero_point);
        for (int32_t d = g.rank - 1; d >= 0; d--) {
            if (g.reduced[d]) {
                continue;
            }
            off += g.stride[d];
            if (++idx[d] < g.dims[d]) {
                break;
            }
            off -= g.stride[d] * g.dims[d];
            idx[d] = 0;
        }
    }
    return TH_OK;
}

th_status th_mean_s8(const th_context *ctx, const th_mean_params *params,
                     const th_per_tensor_quant *quant, const th_shape *input_shape,
                     const int8_t *input, const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    return reduce(params, quant, input_shape, input, output_shape, output, REDUCE_MEAN);
}

th_status th_sum_s8(const th_context *ctx, const th_mean_params *params,
                    const th_per_tensor_quant *quant, const th_shape *input_shape,
                    const int8_t *input, const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    return reduce(params, quant, input_shape, input, output_shape, output, REDUCE_SUM);
}

th_status th_reduce_max_s8(const th_context *ctx, const th_mean_params *params,
                           const th_shape *input_shape, const int8_t *input,
                           const th_shape *output_shape, int8_t *output)
{
    static const th_per_tensor_quant unused = {0, 0};
    (void)ctx;
    return reduce(params, &unused, input_shape, input, output_shape, output, REDUCE_MAX);
}
