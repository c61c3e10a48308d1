"""UNIDIRECTIONAL_SEQUENCE_LSTM: TFLite Micro's integer LSTM (int8 activations and weights,
int16 cell state and gates, int32 biases; lstm_eval's LstmStep).

Each batch row runs its time steps in order (time-major or not, the arithmetic per row is
the same): each gate is two fully connected products requantized to int16 at 2^-12 (the
bias in the input one) and added with int16 saturation, then the int16 sigmoid (tanh for
the cell gate) of TFLite's reference_integer_ops (tinyhost.arith.sigmoid16: a generated
256-entry table of sigmoid(i / 24), interpolated); cell = sat(forget x cell) + sat(input
x cell gate), saturated then clipped; hidden = output gate x tanh(cell), requantized to
int8. The output at each step is the hidden state.

The kernel returns the output and then the new hidden and cell states (ARCHITECTURE.md
§4.12).
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.fixedpoint import multiply_by_quantized_multiplier, wrap_int32
from tinyhost.arith.lstm import BIASES, INPUT_WEIGHTS, RECURRENT_WEIGHTS, LstmParams, lstm_params
from tinyhost.arith.sigmoid16 import Sigmoid16Params, logistic_int16
from tinyhost.arith.sigmoid16 import tanh_int16 as tanh16
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind


def sigmoid_int16(x: np.ndarray) -> np.ndarray:
    """reference_integer_ops::Logistic(0, 0, ...) on int16: Q3.12 in, Q0.15 out."""
    return logistic_int16(x, Sigmoid16Params(0, 0))


def tanh_int16(x: np.ndarray, scale_power: int) -> np.ndarray:
    """lstm_internal::Tanh: reference_integer_ops::Tanh on int16 at scale 2^scale_power,
    Q0.15 out."""
    left_shift = 15 + scale_power - 3
    if left_shift < 0:
        return tanh16(x, Sigmoid16Params(3, -left_shift))
    return tanh16(x, Sigmoid16Params(0, left_shift))


def _fc16(x: np.ndarray, offset: int, w: np.ndarray, bias: np.ndarray | None,
          multiplier: int, shift: int) -> np.ndarray:
    """int8 x int8 (+ int32 bias) -> int16 (zero point 0), saturated."""
    acc = (x.astype(np.int64) + offset) @ w.astype(np.int64).T
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    acc = multiply_by_quantized_multiplier(wrap_int32(acc), multiplier, shift)
    return np.clip(acc, -32768, 32767)


def _mul(a: np.ndarray, b: np.ndarray, multiplier: int, shift: int, lo: int, hi: int,
         offset: int = 0) -> np.ndarray:
    prod = a.astype(np.int64) * b.astype(np.int64)
    return np.clip(multiply_by_quantized_multiplier(prod, multiplier, shift) + offset, lo, hi)


def lstm_step(x: np.ndarray, hidden: np.ndarray, cell: np.ndarray, w_in: list[np.ndarray],
              w_rec: list[np.ndarray], biases: list[np.ndarray],
              p: LstmParams) -> tuple[np.ndarray, np.ndarray]:
    """One time step for rows x [n, input], hidden int8 [n, state], cell int16 [n, state]:
    (new hidden int8, new cell int16)."""
    gates = []
    for k in range(4):
        g = _fc16(x, p.input_offset, w_in[k], biases[k], p.input_multipliers[k],
                  p.input_shifts[k])
        r = _fc16(hidden, p.hidden_offset, w_rec[k], None, p.recurrent_multipliers[k],
                  p.recurrent_shifts[k])
        g = np.clip(g + r, -32768, 32767)
        if k == 2:
            gates.append(tanh_int16(g, -12))
        else:
            gates.append(sigmoid_int16(g))
    i_gate, f_gate, c_gate, o_gate = gates
    kept = _mul(f_gate, cell, p.forget_cell_multiplier, p.forget_cell_shift, -32768, 32767)
    added = _mul(i_gate, c_gate, p.input_cell_multiplier, p.input_cell_shift, -32768, 32767)
    new_cell = np.clip(kept + added, -32768, 32767)
    if p.cell_clip > 0:
        new_cell = np.clip(new_cell, -p.cell_clip, p.cell_clip)
    new_cell = new_cell.astype(np.int16)
    t = tanh_int16(new_cell, p.cell_scale_power)
    new_hidden = _mul(t, o_gate, p.hidden_multiplier, p.hidden_shift, -128, 127,
                      p.hidden_zero_point)
    return new_hidden.astype(np.int8), new_cell


def lstm_int8(x: np.ndarray, w_in: list[np.ndarray], w_rec: list[np.ndarray],
              biases: list[np.ndarray], hidden: np.ndarray, cell: np.ndarray,
              p: LstmParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(output int8 shaped as x with `state` last, new hidden, new cell)."""
    b, t, s = p.batches, p.time_steps, p.state_size
    xs = x.reshape(t, b, p.input_size) if p.time_major else x.reshape(b, t, p.input_size)
    h = hidden.reshape(b, s).copy()
    c = cell.reshape(b, s).copy()
    out = np.empty((t, b, s) if p.time_major else (b, t, s), np.int8)
    for step in range(t):
        rows = xs[step] if p.time_major else xs[:, step]
        h, c = lstm_step(rows, h, c, w_in, w_rec, biases, p)
        if p.time_major:
            out[step] = h
        else:
            out[:, step] = h
    return out, h.reshape(hidden.shape), c.reshape(cell.shape)


def run_sequence_lstm(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    x = args[0]
    if x.dtype != np.int8:
        raise UnsupportedModelError(
            f"UNIDIRECTIONAL_SEQUENCE_LSTM with {x.dtype} input is not supported (int8 only)"
        )
    p = lstm_params(graph, op)
    out, h, c = lstm_int8(x, [args[i] for i in INPUT_WEIGHTS],
                          [args[i] for i in RECURRENT_WEIGHTS], [args[i] for i in BIASES],
                          args[18], args[19], p)
    return [out, h, c]


KERNELS = {OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM: run_sequence_lstm}
