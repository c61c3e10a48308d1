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
 * reference_integer_ops Logistic/Tanh: a 256-entry table of sigmoid(i / 24) in 0.16,
 * linearly interpolated. */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_support.h"

/* sigmoid(i / 24) in unsigned 0.16, TFLite's published table (host: reference/ops/lstm.py
 * SIGMOID_TABLE_U16; tests/test_kernels_lstm.py compares the two). */
static const uint16_t sigmoid_table[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
};

/* Logistic(0, 0) on a Q3.12 value: Q0.15. */
static int16_t lstm_sigmoid_q12(int32_t x)
{
    const int32_t v = x * 3;
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t uh = a >> 9;
    uint32_t r;
    if (uh >= 255u) {
        r = 0x7FFFu << 10;
    } else {
        const uint32_t ua = sigmoid_table[uh], ub = sigmoid_table[uh + 1u];
        r = (ua << 9) + (a & 0x1FFu) * (ub - ua);
    }
    r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
    return (int16_t)(r >> 10);
}

/* Tanh(multiplier, left_shift) on an int16 value (multiplier already resolved, never 0):
 * Q0.15. */
static int16_t lstm_tanh_s16(int32_t x, int32_t multiplier, int32_t shift)
{
    const int32_t round = shift > 0 ? (int32_t)(1u << (shift - 1)) : 0;
    const int32_t v = (x * multiplier + round) >> shift;
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t uh = a >> 8;
    int32_t r;
    if (uh >= 255u) {
        r = 0xFFFF << 8;
    } else {
        const uint32_t ua = sigmoid_table[uh], ub = sigmoid_table[uh + 1u];
        r = (int32_t)((ua << 8) + (a & 0xFFu) * (ub - ua));
    }
    r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    return (int16_t)(r >> 8);
}

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
                     const int32_t *bias, int8_t *hidden, int16_t *cell, int8_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || input == NULL || input_weights == NULL ||
        recurrent_weights == NULL || bias == NULL || hidden == NULL || cell == NULL ||
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
                    gate[g] = g == 2 ? lstm_tanh_s16(pre, 3, 0) : lstm_sigmoid_q12(pre);
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
                const int32_t th = lstm_tanh_s16(cv, cell_mult, cell_shift);
                y[j] = (int8_t)th_clamp(
                    lstm_rq(th * gate[3], q.hidden_multiplier, q.hidden_shift) + h_zp, INT8_MIN,
                    INT8_MAX);
            }
            memcpy(h, y, (size_t)n);
        }
    }
    return TH_OK;
}
