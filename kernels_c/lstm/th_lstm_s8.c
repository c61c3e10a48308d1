/* th_lstm_s8: TFLite Micro's integer UNIDIRECTIONAL_SEQUENCE_LSTM (lstm_eval's LstmStep),
 * one batch row and time step at a time (rows are independent, so time-major or not is only
 * where a row's input and output sit). For each state unit j:
 *   pre(g) = lstm_sat16(rq(bias[g][j] + sum_k w_in[g][j][k] * (x[k] + input_offset)))
 *          + lstm_sat16(rq(sum_k w_rec[g][j][k] * (h[k] + hidden_offset))), saturated to int16
 *            (Q3.12; each product requantized on its own, as TFLM's two FULLY_CONNECTEDs);
 *   gates: sigmoid(pre) for input, forget, output; tanh(pre) for the cell gate (Q0.15);
 *   cell[j] = clip(lstm_sat16(lstm_sat16(rq(f * cell[j])) + lstm_sat16(rq(i * g))));
 *   out[j] = clamp8(rq(tanh(cell[j]) * o) + hidden_zero_point),
 * then the row's output becomes the hidden state (the old one is read by every unit, so
 * the new one is written to the output first). The int16 sigmoid and tanh are TFLite's
 * reference_integer_ops Logistic/Tanh (th_nn_sigmoid16.h): the host's 256-entry table of
 * sigmoid(i / 24) in 0.16, linearly interpolated. */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_sigmoid16.h"
#include "th_nn_support.h"

static int32_t lstm_sat16(int32_t v)
{
    return th_clamp(v, INT16_MIN, INT16_MAX);
}

/* The four gates' sums acc[g] = sum_k w[g * gate_stride + k] * (x[k] + offset): each x
 * value loaded (and, on DSP builds, unpacked with the offset into two int16 pairs) once for
 * the four weight rows; DSP builds take four products per row per step, two per SMLAD
 * (weights as bytes 0/2 and 1/3; x + offset fits int16). */
static void lstm_dot4(const int8_t *w, size_t gate_stride, const int8_t *x, int32_t n,
                      int32_t offset, int32_t acc[4])
{
    const int8_t *w0 = w, *w1 = w + gate_stride, *w2 = w1 + gate_stride;
    const int8_t *w3 = w2 + gate_stride;
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int32_t k = 0;
#if TH_NN_HAS_DSP
    const int32_t offsets = (int32_t)(((uint32_t)offset << 16) | ((uint32_t)offset & 0xFFFFu));
    for (; k + 4 <= n; k += 4) {
        const int32_t xv = th_read_s32(x + k);
        const int32_t x02 = th_sxtab16(offsets, xv), x13 = th_sxtab16_ror8(offsets, xv);
        int32_t wv = th_read_s32(w0 + k);
        a0 = th_smlad(th_sxtb16(wv), x02, th_smlad(th_sxtb16_ror8(wv), x13, a0));
        wv = th_read_s32(w1 + k);
        a1 = th_smlad(th_sxtb16(wv), x02, th_smlad(th_sxtb16_ror8(wv), x13, a1));
        wv = th_read_s32(w2 + k);
        a2 = th_smlad(th_sxtb16(wv), x02, th_smlad(th_sxtb16_ror8(wv), x13, a2));
        wv = th_read_s32(w3 + k);
        a3 = th_smlad(th_sxtb16(wv), x02, th_smlad(th_sxtb16_ror8(wv), x13, a3));
    }
#endif
    for (; k < n; k++) {
        const int32_t xk = (int32_t)x[k] + offset;
        a0 += (int32_t)w0[k] * xk;
        a1 += (int32_t)w1[k] * xk;
        a2 += (int32_t)w2[k] * xk;
        a3 += (int32_t)w3[k] * xk;
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

/* MultiplyByQuantizedMultiplier for multiplier >= 0 (checked at entry): SRDHM as one
 * 64-bit product and shift (th_srdhm_pos), then RDBPOT. */
static int32_t lstm_rq(int32_t acc, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    return th_rdbpot(th_srdhm_pos((int32_t)((uint32_t)acc << left), multiplier), right);
}

static int lstm_rq_ok(int32_t multiplier, int32_t shift)
{
    return multiplier >= 0 && shift >= -31 && shift <= 30;
}

static int lstm_args_ok(const th_lstm_params *p, const th_lstm_quant *q)
{
    if (p->batches <= 0 || p->time_steps <= 0 || p->input_size <= 0 || p->state_size <= 0 ||
        p->input_size > 65535 || p->state_size > 65535 || p->input_offset < -127 ||
        p->input_offset > 128 || p->hidden_offset < -127 || p->hidden_offset > 128 ||
        p->hidden_zero_point < -128 || p->hidden_zero_point > 127 ||
        p->cell_scale_power < -40 || p->cell_scale_power > 2 || p->cell_clip < 0 ||
        p->cell_clip > INT16_MAX) {
        return 0;
    }
    for (int g = 0; g < 4; g++) {
        if (!lstm_rq_ok(q->input_multiplier[g], q->input_shift[g]) ||
            !lstm_rq_ok(q->recurrent_multiplier[g], q->recurrent_shift[g])) {
            return 0;
        }
    }
    return lstm_rq_ok(q->forget_cell_multiplier, q->forget_cell_shift) &&
           lstm_rq_ok(q->input_cell_multiplier, q->input_cell_shift) &&
           lstm_rq_ok(q->hidden_multiplier, q->hidden_shift);
}

th_status th_lstm_s8(const th_context *ctx, const th_lstm_params *params,
                     const th_lstm_quant *quant, const int8_t *input,
                     const int8_t *input_weights, const int8_t *recurrent_weights,
                     const int32_t *bias, const uint16_t *sigmoid_table, int8_t *hidden,
                     int16_t *cell, int8_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || input == NULL || input_weights == NULL ||
        recurrent_weights == NULL || bias == NULL || sigmoid_table == NULL || hidden == NULL ||
        cell == NULL ||
        output == NULL || !lstm_args_ok(params, quant)) {
        return TH_ERR_ARG;
    }
    /* Everything the loops read, in locals: the stores to the output and the states may
     * alias the parameter structs as far as the compiler knows. */
    const th_lstm_quant q = *quant;
    const int32_t n_in = params->input_size, n = params->state_size;
    const int32_t batches = params->batches, steps = params->time_steps;
    const int32_t in_off = params->input_offset, h_off = params->hidden_offset;
    const int32_t h_zp = params->hidden_zero_point, clip = params->cell_clip;
    const int time_major = params->time_major != 0;
    /* lstm_internal::Tanh's input scaling of the cell state: left shift 12 + power. */
    int32_t cell_shift = 12 + params->cell_scale_power, cell_mult = 3;
    if (cell_shift >= 0) {
        cell_mult = 3 << cell_shift;
        cell_shift = 0;
    } else {
        cell_shift = -cell_shift;
    }
    for (int32_t b = 0; b < batches; b++) {
        int8_t *h = hidden + (size_t)b * (size_t)n;
        int16_t *c = cell + (size_t)b * (size_t)n;
        for (int32_t t = 0; t < steps; t++) {
            const size_t row = time_major ? (size_t)t * (size_t)batches + (size_t)b
                                          : (size_t)b * (size_t)steps + (size_t)t;
            const int8_t *x = input + row * (size_t)n_in;
            int8_t *y = output + row * (size_t)n;
            for (int32_t j = 0; j < n; j++) {
                int32_t gate[4], acc_in[4], acc_rec[4];
                lstm_dot4(input_weights + (size_t)j * (size_t)n_in, (size_t)n * (size_t)n_in,
                          x, n_in, in_off, acc_in);
                lstm_dot4(recurrent_weights + (size_t)j * (size_t)n, (size_t)n * (size_t)n, h,
                          n, h_off, acc_rec);
                for (int g = 0; g < 4; g++) {
                    const int32_t in = th_add_wrap(bias[(size_t)g * (size_t)n + (size_t)j],
                                                   acc_in[g]);
                    const int32_t pre = lstm_sat16(
                        lstm_sat16(lstm_rq(in, q.input_multiplier[g], q.input_shift[g])) +
                        lstm_sat16(lstm_rq(acc_rec[g], q.recurrent_multiplier[g],
                                           q.recurrent_shift[g])));
                    /* Logistic(0, 0) / Tanh(0, 0) on Q3.12: multiplier 3, no shift. */
                    gate[g] = g == 2 ? th_tanh16(pre * 3, sigmoid_table)
                                     : th_sigmoid16(pre * 3, sigmoid_table);
                }
                const int32_t kept = lstm_sat16(lstm_rq(gate[1] * (int32_t)c[j],
                                                        q.forget_cell_multiplier,
                                                        q.forget_cell_shift));
                const int32_t added = lstm_sat16(
                    lstm_rq(gate[0] * gate[2], q.input_cell_multiplier, q.input_cell_shift));
                int32_t cv = lstm_sat16(kept + added);
                if (clip > 0) {
                    cv = th_clamp(cv, -clip, clip);
                }
                c[j] = (int16_t)cv;
                const int32_t th =
                    th_tanh16(th_sigmoid16_scale(cv, cell_mult, cell_shift), sigmoid_table);
                y[j] = (int8_t)th_clamp(
                    lstm_rq(th * gate[3], q.hidden_multiplier, q.hidden_shift) + h_zp, INT8_MIN,
                    INT8_MAX);
            }
            memcpy(h, y, (size_t)n);
        }
    }
    return TH_OK;
}
