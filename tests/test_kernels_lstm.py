"""th_lstm_s8 (portable and modelled-DSP builds, ASan + UBSan) against the NumPy reference,
over consecutive calls that carry both states, bit for bit: the output and the states.

Params come from LSTM graphs through `tinyhost.arith.lstm.lstm_params`; expected values come
from `tinyhost.reference.ops.lstm`, never from the C code.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lstm_graphs import lstm_graph
from test_kernels_misc import Kernels, _start, assert_same, buf, i32, out
from tinyhost.arith.lstm import BIASES, INPUT_WEIGHTS, RECURRENT_WEIGHTS, LstmParams, lstm_params
from tinyhost.arith.sigmoid16 import sigmoid_table_u16
from tinyhost.reference.ops.lstm import lstm_int8

TH_OK, TH_ERR_ARG = 0, 1
TABLE = sigmoid_table_u16().astype("<u2")  # the gates' table, as the codegen passes it


@pytest.fixture(scope="module", params=["portable", "dsp"])
def kern_lstm(request) -> Iterator[Kernels]:
    yield from _start(request.param)


def lstm_args(p: LstmParams) -> tuple[bytes, bytes]:
    params = i32(p.batches, p.time_steps, p.input_size, p.state_size, int(p.time_major),
                 p.input_offset, p.hidden_offset, p.hidden_zero_point, p.cell_scale_power,
                 p.cell_clip)
    quant = i32(*p.input_multipliers, *p.input_shifts, *p.recurrent_multipliers,
                *p.recurrent_shifts, p.forget_cell_multiplier, p.forget_cell_shift,
                p.input_cell_multiplier, p.input_cell_shift, p.hidden_multiplier,
                p.hidden_shift)
    return params, quant


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_lstm_kernel_over_calls(kern_lstm, data):
    draw = data.draw
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    batches, steps = draw(st.integers(1, 3)), draw(st.integers(1, 5))
    input_size, state = draw(st.integers(1, 12)), draw(st.integers(1, 10))
    time_major = draw(st.booleans())
    clip = draw(st.sampled_from([0.0, 0.0, 0.5]))
    power = draw(st.sampled_from([-11, -12, -15, -9, -20, 1]))
    gain = draw(st.sampled_from([1.0, 4.0]))
    graph = lstm_graph(rng, batches, steps, input_size, state, time_major, clip, power, gain)
    op = graph.ops[0]
    p = lstm_params(graph, op)
    w_in = [graph.tensors[op.inputs[k]].data for k in INPUT_WEIGHTS]
    w_rec = [graph.tensors[op.inputs[k]].data for k in RECURRENT_WEIGHTS]
    bias = [graph.tensors[op.inputs[k]].data for k in BIASES]
    params, quant = lstm_args(p)
    hidden = np.full((batches, state), p.hidden_zero_point, np.int8)
    cell = np.zeros((batches, state), np.int16)
    if draw(st.booleans()):  # any earlier history
        hidden = rng.integers(-128, 128, hidden.shape).astype(np.int8)
        cell = rng.integers(-32768, 32768, cell.shape).astype(np.int16)
    for call in range(3):
        x = rng.integers(-128, 128, graph.tensors[0].shape).astype(np.int8)
        want_y, want_h, want_c = lstm_int8(x, w_in, w_rec, bias, hidden, cell, p)
        status, bufs = kern_lstm.call(
            "th_lstm_s8", ("null", None), buf(params), buf(quant), buf(x),
            buf(np.concatenate(w_in)), buf(np.concatenate(w_rec)), buf(np.concatenate(bias)),
            buf(TABLE), buf(hidden), buf(cell), out(want_y.size))
        assert status == TH_OK, call
        assert_same(np.frombuffer(bufs[8], np.int8).reshape(hidden.shape), want_h,
                    f"hidden after call {call}")
        assert_same(np.frombuffer(bufs[9], np.int16).reshape(cell.shape), want_c,
                    f"cell after call {call}")
        assert_same(np.frombuffer(bufs[10], np.int8).reshape(want_y.shape), want_y,
                    f"output of call {call}")
        hidden, cell = want_h, want_c


def test_lstm_kernel_refuses_bad_arguments(kern_lstm):
    graph = lstm_graph(np.random.default_rng(1), 1, 2, 3, 4)
    p = lstm_params(graph, graph.ops[0])
    params, quant = lstm_args(p)
    bad_power = params[:32] + i32(5) + params[36:]  # cell_scale_power out of range
    for prm in (bad_power, i32(0) + params[4:]):  # and zero batches
        status, bufs = kern_lstm.call(
            "th_lstm_s8", ("null", None), buf(prm), buf(quant), buf(np.zeros(6, np.int8)),
            buf(np.zeros(48, np.int8)), buf(np.zeros(64, np.int8)), buf(np.zeros(16, np.int32)),
            buf(TABLE), buf(np.zeros(4, np.int8)), buf(np.zeros(4, np.int16)), out(8))
        assert status == TH_ERR_ARG
        assert set(bufs[10]) == {0x5A}
