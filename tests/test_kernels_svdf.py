"""th_svdf_s8 (portable and modelled-DSP builds, ASan + UBSan) against the NumPy reference,
over consecutive calls that carry the state, bit for bit: the output and the state itself.

Params come from SVDF graphs through `tinyhost.arith.svdf.svdf_params`; expected values
come from `tinyhost.reference.ops.svdf`, never from the C code.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svdf_graphs import svdf_graph
from test_kernels_misc import Kernels, _start, assert_same, buf, i32, out
from tinyhost.arith.svdf import svdf_params
from tinyhost.reference.ops.svdf import svdf_int8

TH_OK, TH_ERR_SCRATCH = 0, 3


@pytest.fixture(scope="module", params=["portable", "dsp"])
def kern_svdf(request) -> Iterator[Kernels]:
    yield from _start(request.param)


def dims(n: int, c: int) -> bytes:
    return i32(n, 1, 1, c)


def scratch_bytes(input_size: int, filters: int) -> int:
    """plan/scratch.py's statement (checked against the C function in test_scratch_sizes)."""
    from tinyhost.plan.scratch import svdf_scratch_bytes

    return svdf_scratch_bytes(input_size, filters)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_svdf_kernel_over_calls(kern_svdf, data):
    draw = data.draw
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    batches, input_size = draw(st.integers(1, 3)), draw(st.integers(1, 41))
    units, rank, memory = draw(st.integers(1, 9)), draw(st.integers(1, 3)), draw(st.integers(1, 11))
    bias = draw(st.booleans())
    gain = draw(st.sampled_from([1.0, 1.0, 0.02]))  # 0.02: newest state values saturate
    graph = svdf_graph(rng, batches, input_size, units, rank, memory, bias=bias,
                       state_gain=gain)
    op = graph.ops[0]
    p = svdf_params(graph, op)
    wf, wt = (graph.tensors[op.inputs[k]].data for k in (1, 2))
    b = graph.tensors[op.inputs[3]].data if bias else None
    filters = units * rank
    state = np.zeros((batches, filters * memory), np.int16)
    if draw(st.booleans()):  # any earlier history
        state = rng.integers(-32768, 32768, state.shape).astype(np.int16)
    params = i32(p.input_offset, p.output_offset, p.rank)
    quant = i32(p.feature_multiplier, p.feature_shift, p.time_multiplier, p.time_shift)
    scratch = scratch_bytes(input_size, filters)
    for call in range(3):
        x = rng.integers(-128, 128, (batches, input_size)).astype(np.int8)
        want_y, want_state = svdf_int8(x, wf, wt, b, state, p)
        status, bufs = kern_svdf.call(
            "th_svdf_s8", ("ctx", 13), buf(params), buf(quant), buf(dims(batches, input_size)),
            buf(x), buf(dims(filters, input_size)), buf(wf), buf(dims(filters, memory)),
            buf(wt), buf(b) if b is not None else ("null", None), buf(state),
            buf(dims(batches, units)), out(batches * units), out(scratch))
        assert status == TH_OK, call
        got_state = np.frombuffer(bufs[10], np.int16).reshape(state.shape)
        assert_same(got_state, want_state, f"state after call {call}")
        assert_same(np.frombuffer(bufs[12], np.int8).reshape(want_y.shape), want_y,
                    f"output of call {call}")
        state = want_state


def test_svdf_kernel_refuses_small_scratch(kern_svdf):
    graph = svdf_graph(np.random.default_rng(1), 1, 9, 2, 1, 3)
    op = graph.ops[0]
    p = svdf_params(graph, op)
    wf, wt, b = (graph.tensors[op.inputs[k]].data for k in (1, 2, 3))
    state = np.zeros((1, 6), np.int16)
    status, bufs = kern_svdf.call(
        "th_svdf_s8", ("ctx", 13), buf(i32(p.input_offset, p.output_offset, p.rank)),
        buf(i32(p.feature_multiplier, p.feature_shift, p.time_multiplier, p.time_shift)),
        buf(dims(1, 9)), buf(np.zeros((1, 9), np.int8)), buf(dims(2, 9)), buf(wf),
        buf(dims(2, 3)), buf(wt), buf(b), buf(state), buf(dims(1, 2)), out(2),
        out(scratch_bytes(9, 2) - 2))
    assert status == TH_ERR_SCRATCH
    assert set(bufs[12]) == {0x5A}
