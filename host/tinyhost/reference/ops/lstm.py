"""UNIDIRECTIONAL_SEQUENCE_LSTM: TFLite Micro's integer LSTM (int8 activations and weights,
int16 cell state and gates, int32 biases; lstm_eval's LstmStep).

Each batch row runs its time steps in order (time-major or not, the arithmetic per row is
the same): each gate is two fully connected products requantized to int16 at 2^-12 (the
bias in the input one) and added with int16 saturation, then the int16 sigmoid (tanh for
the cell gate) of TFLite's reference_integer_ops, a 256-entry table of sigmoid(i / 24)
interpolated; cell = sat(forget x cell) + sat(input x cell gate), saturated then clipped;
hidden = output gate x tanh(cell), requantized to int8. The output at each step is the
hidden state.

The kernel returns the output and then the new hidden and cell states (ARCHITECTURE.md
§4.12).
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.fixedpoint import multiply_by_quantized_multiplier, wrap_int32
from tinyhost.arith.lstm import BIASES, INPUT_WEIGHTS, RECURRENT_WEIGHTS, LstmParams, lstm_params
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind

# sigmoid(i / 24), i = 0..255, in unsigned 0.16 fixed point: the table TFLite's int16
# LOGISTIC and TANH interpolate (sigmoid_table_uint16). Its entries are published values, not
# a rounding of the function (a third of them differ from round(65536 * sigmoid) by one), so
# they are stated here as data; kernels_c/lstm/th_lstm_s8.c holds the same values
# (tests/test_kernels_lstm.py compares the two).
SIGMOID_TABLE_U16 = (
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
)


def sigmoid_table() -> np.ndarray:
    return np.asarray(SIGMOID_TABLE_U16, dtype=np.int64)


_TABLE = sigmoid_table()


def _scale_input(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """The input scaling both int16 activations share (multiplier 0: 3 << shift)."""
    if multiplier == 0:
        multiplier, left_shift = 3 << left_shift, 0
    rounding = (1 << (left_shift - 1)) if left_shift > 0 else 0
    return (x.astype(np.int64) * multiplier + rounding) >> left_shift


def sigmoid_int16(x: np.ndarray) -> np.ndarray:
    """reference_integer_ops::Logistic(0, 0, ...) on int16: Q3.12 in, Q0.15 out."""
    v = _scale_input(x, 0, 0)
    a = np.abs(v)
    uh = a >> 9
    idx = np.minimum(uh, 254)
    ua, ub = _TABLE[idx], _TABLE[idx + 1]
    interp = (ua << 9) + (a & 0x1FF) * (ub - ua)
    result = np.where(uh >= 255, 0x7FFF << 10, interp)
    result = np.where(v >= 0, result + (1 << 9), (1 << 25) - result + (1 << 9) - 1)
    return (result >> 10).astype(np.int16)


def tanh_int16(x: np.ndarray, scale_power: int) -> np.ndarray:
    """lstm_internal::Tanh: reference_integer_ops::Tanh on int16 at scale 2^scale_power,
    Q0.15 out."""
    left_shift = 15 + scale_power - 3
    multiplier = 0
    if left_shift < 0:
        left_shift, multiplier = -left_shift, 3
    v = _scale_input(x, multiplier, left_shift)
    a = np.abs(v)
    uh = a >> 8
    idx = np.minimum(uh, 254)
    ua, ub = _TABLE[idx], _TABLE[idx + 1]
    interp = (ua << 8) + (a & 0xFF) * (ub - ua)
    result = np.where(uh >= 255, 0xFFFF << 8, interp)
    result = np.where(v >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1)
    return (result >> 8).astype(np.int16)


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
