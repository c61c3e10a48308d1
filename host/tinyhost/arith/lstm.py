"""Integer parameters of the int8 UNIDIRECTIONAL_SEQUENCE_LSTM, as TFLite Micro's Prepare
(UnidirectionalSequenceLstmPrepare, PrepareGateParametersInteger) derives them.

Tensors (TFLite's 24 inputs; TFLM takes no peephole, projection, layer norm or CIFG):
input int8 [batch, time, input] ([time, batch, input] time-major), the eight gate weights
int8 per-tensor symmetric ([state, input] and [state, state]), four int32 gate biases
[state], the hidden state (int8 variable, [batch, state]) and the cell state (int16
variable, a power-of-two scale). Each gate is FC(input) + FC(hidden) into int16 at scale
2^-12 (each product requantized on its own, the bias in the input one), a saturating add,
then sigmoid (tanh for the cell gate: the fused activation, which TFLite files can only
state as TANH) to int16 at 2^-15.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tinyhost.arith.conv import per_tensor_fc_multiplier
from tinyhost.arith.elementwise import op_where, per_tensor_quant
from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, SequenceLSTMOptions

# Input indices (TFLite's lstm_shared.h order).
INPUT = 0
INPUT_WEIGHTS = (1, 2, 3, 4)  # input-to-{input, forget, cell, output} gate
RECURRENT_WEIGHTS = (5, 6, 7, 8)
PEEPHOLE = (9, 10, 11)
BIASES = (12, 13, 14, 15)
PROJECTION = (16, 17)
HIDDEN_STATE = 18
CELL_STATE = 19
LAYER_NORM = (20, 21, 22, 23)
GATE_NAMES = ("input", "forget", "cell", "output")

GATE_SCALE_POWER = -12  # FC outputs (activation inputs): Q3.12
NONLINEAR_OUTPUT_SCALE = 2.0**-15  # activation outputs: Q0.15


@dataclass(frozen=True)
class LstmParams:
    batches: int
    time_steps: int
    input_size: int
    state_size: int
    time_major: bool
    input_offset: int  # -input zero point
    hidden_offset: int  # -hidden state zero point (the recurrent FC's input offset)
    hidden_zero_point: int  # added after the output gate x tanh(cell) product
    # per gate (input, forget, cell, output): input FC and recurrent FC requantization
    input_multipliers: tuple[int, int, int, int]
    input_shifts: tuple[int, int, int, int]
    recurrent_multipliers: tuple[int, int, int, int]
    recurrent_shifts: tuple[int, int, int, int]
    cell_scale_power: int  # cell state scale = 2^cell_scale_power
    forget_cell_multiplier: int  # forget gate x cell -> cell
    forget_cell_shift: int
    input_cell_multiplier: int  # input gate x cell gate -> cell
    input_cell_shift: int
    hidden_multiplier: int  # output gate x tanh(cell) -> hidden (int8)
    hidden_shift: int
    cell_clip: int  # quantized cell clip; 0: none


def cell_scale_power(graph: Graph, op: Op) -> int:
    """log2 of the cell state's scale, which must be a power of two."""
    cell = graph.tensors[op.inputs[CELL_STATE]]
    scale = float(per_tensor_quant(graph, op, cell)[0])
    power = round(math.log2(scale))
    if scale != 2.0**power:
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: cell state '{cell.name}' scale {scale!r} is not a power "
            "of two; the integer LSTM needs one"
        )
    return power


def _mul_params(scale_a: float, scale_b: float, scale_out: float) -> tuple[int, int]:
    """CreateInterGateMulParams: double(a) * double(b) / double(out)."""
    return quantize_multiplier(scale_a * scale_b / scale_out)


def lstm_params(graph: Graph, op: Op) -> LstmParams:
    o = op.options
    assert isinstance(o, SequenceLSTMOptions)
    x = graph.tensors[op.inputs[INPUT]]
    hidden = graph.tensors[op.inputs[HIDDEN_STATE]]
    cell = graph.tensors[op.inputs[CELL_STATE]]
    s_in, zp_in = per_tensor_quant(graph, op, x)
    s_h, zp_h = per_tensor_quant(graph, op, hidden)
    s_cell = float(per_tensor_quant(graph, op, cell)[0])
    power = cell_scale_power(graph, op)
    gate_scale = float(np.float32(2.0**GATE_SCALE_POWER))
    pairs_in, pairs_rec = [], []
    for k in range(4):
        w_in = graph.tensors[op.inputs[INPUT_WEIGHTS[k]]]
        w_rec = graph.tensors[op.inputs[RECURRENT_WEIGHTS[k]]]
        pairs_in.append(per_tensor_fc_multiplier(s_in, per_tensor_quant(graph, op, w_in)[0],
                                                 gate_scale))
        pairs_rec.append(per_tensor_fc_multiplier(s_h, per_tensor_quant(graph, op, w_rec)[0],
                                                  gate_scale))
    m_fc, e_fc = _mul_params(NONLINEAR_OUTPUT_SCALE, s_cell, s_cell)
    m_ic, e_ic = _mul_params(NONLINEAR_OUTPUT_SCALE, NONLINEAR_OUTPUT_SCALE, s_cell)
    m_h, e_h = _mul_params(NONLINEAR_OUTPUT_SCALE, NONLINEAR_OUTPUT_SCALE, float(s_h))
    # CreateLstmCellStateInfo: double(clip) / double(scale), clamped to int16, truncated.
    clip = 0
    if o.cell_clip > 0:
        clip = int(min(max(float(np.float32(o.cell_clip)) / s_cell, -32768.0), 32767.0))
    if o.time_major:
        time_steps, batches = x.shape[0], x.shape[1]
    else:
        batches, time_steps = x.shape[0], x.shape[1]
    return LstmParams(
        batches=batches, time_steps=time_steps, input_size=x.shape[2],
        state_size=graph.tensors[op.inputs[RECURRENT_WEIGHTS[0]]].shape[0],
        time_major=o.time_major, input_offset=-zp_in, hidden_offset=-zp_h,
        hidden_zero_point=zp_h,
        input_multipliers=tuple(m for m, _ in pairs_in),  # type: ignore[arg-type]
        input_shifts=tuple(e for _, e in pairs_in),  # type: ignore[arg-type]
        recurrent_multipliers=tuple(m for m, _ in pairs_rec),  # type: ignore[arg-type]
        recurrent_shifts=tuple(e for _, e in pairs_rec),  # type: ignore[arg-type]
        cell_scale_power=power,
        forget_cell_multiplier=m_fc, forget_cell_shift=e_fc,
        input_cell_multiplier=m_ic, input_cell_shift=e_ic,
        hidden_multiplier=m_h, hidden_shift=e_h, cell_clip=clip,
    )  # fmt: skip
