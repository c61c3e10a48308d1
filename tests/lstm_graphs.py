"""UNIDIRECTIONAL_SEQUENCE_LSTM graphs built in memory (int8 input, hidden state and gate
weights, int16 cell state, int32 biases), shared by the reference oracle test and the
device tests."""

from __future__ import annotations

import numpy as np

from reference_single_op import q
from tinyhost.ir import Graph, Op, OpKind, SequenceLSTMOptions, Tensor

I8, I16, I32 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)


def lstm_tensors(rng: np.random.Generator, prefix: str, x: int, batches: int, input_size: int,
                 state: int, tensors: list[Tensor], time_major: bool = False,
                 cell_power: int = -11, gain: float = 1.0) -> tuple[list[int | None], int]:
    """Append one LSTM's tensors reading tensor `x` (3-D); returns (its 24 inputs, output).

    Weight scales put the gate pre-activations near +-3 * gain (Q3.12 saturates at 8), so
    the sigmoid/tanh tables are read over their whole range."""
    xt = tensors[x]
    s_in = float(xt.quant.scale[0])
    s_h, zp_h = 1.0 / 128, int(rng.integers(-10, 11))
    term = 5400.0  # spread of one (x - zp) * w product of random int8 values
    s_wi = float(np.float32(3.0 * gain / (s_in * term * np.sqrt(input_size))))
    s_wr = float(np.float32(2.0 * gain / (s_h * term * np.sqrt(state) * 0.5)))
    n = len(tensors)
    for k in range(4):
        tensors.append(Tensor(f"{prefix}_wi{k}", (state, input_size), I8,
                              rng.integers(-127, 128, (state, input_size)).astype(np.int8),
                              q(s_wi)))
    for k in range(4):
        tensors.append(Tensor(f"{prefix}_wr{k}", (state, state), I8,
                              rng.integers(-127, 128, (state, state)).astype(np.int8), q(s_wr)))
    spread = int(term * np.sqrt(input_size))
    for k in range(4):
        tensors.append(Tensor(f"{prefix}_b{k}", (state,), I32,
                              rng.integers(-spread, spread + 1, state).astype(np.int32),
                              q(float(np.float32(s_in * s_wi)))))
    tensors.append(Tensor(f"{prefix}_h", (batches, state), I8, None, q(s_h, zp_h),
                          is_variable=True))
    tensors.append(Tensor(f"{prefix}_c", (batches, state), I16, None, q(2.0**cell_power),
                          is_variable=True))
    d0, d1 = xt.shape[0], xt.shape[1]
    tensors.append(Tensor(f"{prefix}_y", (d0, d1, state), I8, None, q(s_h, zp_h)))
    weights = list(range(n, n + 8))
    biases = list(range(n + 8, n + 12))
    ins: list[int | None] = [x, *weights, None, None, None, *biases, None, None, n + 12, n + 13,
                             None, None, None, None]
    assert time_major in (False, True) and batches == (d1 if time_major else d0)
    return ins, n + 14


def lstm_graph(rng: np.random.Generator, batches: int, steps: int, input_size: int, state: int,
               time_major: bool = False, cell_clip: float = 0.0, cell_power: int = -11,
               gain: float = 1.0) -> Graph:
    """One LSTM op; the graph's only input is the op's input."""
    shape = (steps, batches, input_size) if time_major else (batches, steps, input_size)
    tensors = [Tensor("x", shape, I8, None, q(0.05, int(rng.integers(-10, 11))))]
    ins, y = lstm_tensors(rng, "lstm", 0, batches, input_size, state, tensors, time_major,
                          cell_power, gain)
    op = Op(OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM, tuple(ins), (y,),
            SequenceLSTMOptions(cell_clip=cell_clip, time_major=time_major))
    return Graph(tuple(tensors), (op,), (0,), (y,), name="lstm", source="lstm.tflite")


def lstm_stack_graph(rng: np.random.Generator) -> Graph:
    """Two LSTMs in a row: x [2, 5, 6] -> batch-major (state 8, cell clip, cell scale 2^-11)
    -> [2, 5, 8], read by a time-major one as 2 steps of 5 batches (state 6, cell scale
    2^-15); both outputs are model outputs."""
    tensors = [Tensor("x", (2, 5, 6), I8, None, q(0.05, 4))]
    ins1, y1 = lstm_tensors(rng, "lstm1", 0, 2, 6, 8, tensors)
    ins2, y2 = lstm_tensors(rng, "lstm2", y1, 5, 8, 6, tensors, time_major=True,
                            cell_power=-15, gain=2.0)
    ops = (Op(OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM, tuple(ins1), (y1,),
              SequenceLSTMOptions(cell_clip=0.75)),
           Op(OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM, tuple(ins2), (y2,),
              SequenceLSTMOptions(time_major=True)))
    return Graph(tuple(tensors), ops, (0,), (y1, y2), name="lstm_stack",
                 source="lstm_stack.tflite")
