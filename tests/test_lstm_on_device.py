"""UNIDIRECTIONAL_SEQUENCE_LSTM on the device: two LSTMs in a row (batch-major with a cell
clip, then time-major with a fine cell scale) over consecutive invokes with a reset in
between, through both backends on the host board and QEMU mps2-an386; every output of every
invoke bit-exact with the reference carrying its own State. (tests/test_reference_lstm.py
checks the reference against TFLM, here too for this graph.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graph_on_device import QEMU_BOARD_BACKENDS
from lstm_graphs import lstm_stack_graph
from stateful_device import check_invokes_on_device, reference_invokes
from tinyhost.codegen.support import device_problems
from tinyhost.ir.stats import op_macs
from tinyhost.plan import plan_memory
from tinyhost.plan.checker import check_plan
from tinyhost.tflite.writer import write_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_lstm_on_device"
RESET = 3  # the state is reset before the fourth invoke, which repeats the first input


def _case():
    rng = np.random.default_rng(23)
    graph = lstm_stack_graph(rng)
    xs = [rng.integers(-128, 128, (2, 5, 6)).astype(np.int8) for _ in range(RESET)]
    inputs = [*xs, xs[0], xs[1]]
    return graph, inputs, reference_invokes(graph, inputs, RESET)


def test_lstm_stack_plan_macs_and_oracle():
    graph, inputs, expected = _case()
    plan = plan_memory(graph)
    assert check_plan(plan) == []
    states = graph.variable_tensors()
    assert len(states) == 4
    last = len(plan.op_order) - 1
    for b in plan.buffers:
        if any(t in states for t in b.tensors):
            assert (b.first_op, b.last_op) == (0, last)
    assert [op_macs(graph, op) for op in graph.ops] == [2 * 5 * 4 * 8 * (6 + 8),
                                                       2 * 5 * 4 * 6 * (8 + 6)]
    for backend in ("interpreter", "compiled"):
        assert device_problems(graph, backend) == []
    # both outputs of TFLM over the same invokes and reset
    from tflite_micro.python.tflite_micro import runtime

    interpreter = runtime.Interpreter.from_bytes(write_model(graph), arena_size=1 << 20)
    for k, (x, want) in enumerate(zip(inputs, expected)):
        if k == RESET:
            interpreter.reset()
        interpreter.set_input(x, 0)
        interpreter.invoke()
        for j in range(2):
            got = np.array(interpreter.get_output(j))
            np.testing.assert_array_equal(want[j], got.reshape(want[j].shape),
                                          err_msg=f"invoke {k}, output {j}")


def _check(board: str, backend: str) -> None:
    graph, inputs, expected = _case()
    check_invokes_on_device(graph, board, backend, inputs, expected, RESET,
                            BUILD / f"{board}-{backend}")
    # the reference itself: state carried (not the same output twice), reset repeats
    assert not np.array_equal(expected[1][1], expected[0][1])
    assert np.array_equal(expected[RESET][1], expected[0][1])


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_lstm_stack_on_the_host_board(backend: str) -> None:
    _check("host", backend)


@pytest.mark.parametrize(("board", "backend"), QEMU_BOARD_BACKENDS)
def test_lstm_stack_on_qemu(board: str, backend: str) -> None:
    _check(board, backend)
