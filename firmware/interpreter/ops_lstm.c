/*
 * ops_lstm.c - UNIDIRECTIONAL_SEQUENCE_LSTM int8 with an int16 cell state (kernel id 100).
 *
 * Inputs: x int8 [batches, steps, input_size] ([steps, batches, input_size] time-major),
 * the hidden state int8 and the cell state int16, batches * state_size values each
 * (variable arena tensors: read and written in place, kept across invokes, reset by
 * th_interp_reset_state); output int8 shaped as x with state_size last. The gate weights
 * and biases and the sigmoid table are constants named by parameter words (stacked per gate,
 * th_nn.h); the other
 * words are TH_LSTM_P_* (th_interp_abi.h).
 */
#include "ops_common.h"

typedef struct {
    th_lstm_params params;
    th_lstm_quant quant;
    const int8_t *w_in, *w_rec;
    const int32_t *bias;
    const uint16_t *sigmoid_table;
} lstm_setup;

static th_interp_status setup(const th_interp_op *op, lstm_setup *s)
{
    const int32_t *p = op->params;
    const th_interp_tensor *x = &op->in[0], *h = &op->in[1], *c = &op->in[2], *y = &op->out[0];
    if (op->n_in != 3 || op->n_out != 1 || op->n_params != TH_LSTM_WORDS ||
        !th_interp_is(x, TH_INTERP_INT8, 3) || !th_interp_is(y, TH_INTERP_INT8, 3) ||
        !h->present || h->data == NULL || h->dtype != TH_INTERP_INT8 || !c->present ||
        c->data == NULL || c->dtype != TH_INTERP_INT16 ||
        (h->flags & TH_TENSOR_VARIABLE) == 0 || (c->flags & TH_TENSOR_VARIABLE) == 0) {
        return TH_INTERP_E_PARAMS;
    }
    const int32_t time_major = p[TH_LSTM_P_TIME_MAJOR];
    if (time_major != 0 && time_major != 1) {
        return TH_INTERP_E_PARAMS;
    }
    th_lstm_params *lp = &s->params;
    lp->batches = time_major ? x->dims[1] : x->dims[0];
    lp->time_steps = time_major ? x->dims[0] : x->dims[1];
    lp->input_size = x->dims[2];
    lp->state_size = y->dims[2];
    lp->time_major = time_major;
    const uint32_t n_state = (uint32_t)lp->batches * (uint32_t)lp->state_size;
    if (y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1] ||
        th_interp_elements(h) != n_state || th_interp_elements(c) != n_state) {
        return TH_INTERP_E_PARAMS;
    }
    lp->input_offset = p[TH_LSTM_P_INPUT_OFFSET];
    lp->hidden_offset = p[TH_LSTM_P_HIDDEN_OFFSET];
    lp->hidden_zero_point = p[TH_LSTM_P_HIDDEN_ZERO_POINT];
    lp->cell_scale_power = p[TH_LSTM_P_CELL_SCALE_POWER];
    lp->cell_clip = p[TH_LSTM_P_CELL_CLIP];
    th_lstm_quant *q = &s->quant;
    for (uint32_t g = 0; g < 4u; g++) {
        q->input_multiplier[g] = p[TH_LSTM_P_INPUT_MULTIPLIER + g];
        q->input_shift[g] = p[TH_LSTM_P_INPUT_SHIFT + g];
        q->recurrent_multiplier[g] = p[TH_LSTM_P_RECURRENT_MULTIPLIER + g];
        q->recurrent_shift[g] = p[TH_LSTM_P_RECURRENT_SHIFT + g];
    }
    q->forget_cell_multiplier = p[TH_LSTM_P_FORGET_CELL_MULTIPLIER];
    q->forget_cell_shift = p[TH_LSTM_P_FORGET_CELL_SHIFT];
    q->input_cell_multiplier = p[TH_LSTM_P_INPUT_CELL_MULTIPLIER];
    q->input_cell_shift = p[TH_LSTM_P_INPUT_CELL_SHIFT];
    q->hidden_multiplier = p[TH_LSTM_P_HIDDEN_MULTIPLIER];
    q->hidden_shift = p[TH_LSTM_P_HIDDEN_SHIFT];
    /* 64-bit sizes: dims near 2^15 each would wrap a 32-bit product past the check. */
    const uint64_t rows = 4u * (uint64_t)lp->state_size;
    const uint64_t n_w_in = rows * (uint64_t)lp->input_size;
    const uint64_t n_w_rec = rows * (uint64_t)lp->state_size;
    if (lp->state_size <= 0 || lp->input_size <= 0 || n_w_in > UINT32_MAX ||
        n_w_rec > UINT32_MAX) {
        return TH_INTERP_E_PARAMS;
    }
    s->w_in = th_interp_const(op, p[TH_LSTM_P_INPUT_WEIGHTS], (uint32_t)n_w_in, 1u);
    s->w_rec = th_interp_const(op, p[TH_LSTM_P_RECURRENT_WEIGHTS], (uint32_t)n_w_rec, 1u);
    s->bias = th_interp_const(op, p[TH_LSTM_P_BIAS], (uint32_t)rows, 4u);
    s->sigmoid_table = th_interp_const(op, p[TH_LSTM_P_SIGMOID_TABLE], 256u, 2u);
    if (s->w_in == NULL || s->w_rec == NULL || s->bias == NULL || s->sigmoid_table == NULL) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

static th_status run(const th_interp_op *op, const lstm_setup *s)
{
    return th_lstm_s8(NULL, &s->params, &s->quant, (const int8_t *)op->in[0].data, s->w_in,
                      s->w_rec, s->bias, s->sigmoid_table, (int8_t *)op->in[1].data, (int16_t *)op->in[2].data,
                      (int8_t *)op->out[0].data);
}

th_interp_status th_interp_lstm_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    lstm_setup s;
    *scratch = 0;
    const th_interp_status st = setup(op, &s);
    if (st != TH_INTERP_OK) {
        return st;
    }
    /* The ranges th_lstm_s8 accepts (th_nn_types.h), refused here before any invoke. */
    const th_lstm_params *lp = &s.params;
    const th_lstm_quant *q = &s.quant;
    int ok = lp->input_size <= 65535 && lp->state_size <= 65535 && lp->input_offset >= -127 &&
             lp->input_offset <= 128 && lp->hidden_offset >= -127 && lp->hidden_offset <= 128 &&
             lp->hidden_zero_point >= -128 && lp->hidden_zero_point <= 127 &&
             lp->cell_scale_power >= -40 && lp->cell_scale_power <= 2 && lp->cell_clip >= 0 &&
             lp->cell_clip <= 32767;
    const int32_t m[11] = {q->input_multiplier[0], q->input_multiplier[1],
                           q->input_multiplier[2], q->input_multiplier[3],
                           q->recurrent_multiplier[0], q->recurrent_multiplier[1],
                           q->recurrent_multiplier[2], q->recurrent_multiplier[3],
                           q->forget_cell_multiplier, q->input_cell_multiplier,
                           q->hidden_multiplier};
    const int32_t e[11] = {q->input_shift[0], q->input_shift[1], q->input_shift[2],
                           q->input_shift[3], q->recurrent_shift[0], q->recurrent_shift[1],
                           q->recurrent_shift[2], q->recurrent_shift[3], q->forget_cell_shift,
                           q->input_cell_shift, q->hidden_shift};
    for (int k = 0; k < 11; k++) {
        ok = ok && m[k] >= 0 && e[k] >= -31 && e[k] <= 30;
    }
    if (!ok) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_lstm_s8_eval(const th_interp_op *op)
{
    lstm_setup s;
    if (setup(op, &s) != TH_INTERP_OK) {
        return TH_INTERP_E_PARAMS;
    }
    return th_interp_kstatus(run(op, &s));
}
