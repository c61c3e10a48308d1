"""A model with state on the device: two SVDFs (ranks 1 and 2, the second without bias) and
the int16 edges of a keyword-spotting model (SOFTMAX int8 -> int16, QUANTIZE int16 <-> int8)
over consecutive invokes with a reset in between, through both backends on the host board
and QEMU mps2-an386; every output of every invoke bit-exact with the reference carrying its
own State. (tests/test_reference_svdf.py checks the reference against TFLM.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graph_on_device import QEMU_BOARD_BACKENDS
from stateful_device import check_invokes_on_device, reference_invokes
from svdf_graphs import kws_svdf_graph
from tinyhost.plan import plan_memory
from tinyhost.plan.checker import check_plan

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_svdf_on_device"
RESET = 4  # the state is reset before the fifth invoke, which repeats the first input


def _case():
    rng = np.random.default_rng(17)
    graph = kws_svdf_graph(rng, second_bias=False)
    xs = [rng.integers(-128, 128, (1, 16)).astype(np.int8) for _ in range(RESET)]
    inputs = [*xs, xs[0], xs[1]]
    return graph, inputs, reference_invokes(graph, inputs, RESET)


def test_state_is_persistent_in_the_plan():
    graph, _, _ = _case()
    plan = plan_memory(graph)
    assert check_plan(plan) == []
    last = len(plan.op_order) - 1
    states = graph.variable_tensors()
    assert len(states) == 2
    for b in plan.buffers:
        if any(t in states for t in b.tensors):
            assert (b.first_op, b.last_op) == (0, last)
            assert b.tensors in ((states[0],), (states[1],))  # shared with nothing
    total_state = sum(graph.tensors[t].size_bytes for t in states)
    assert plan.arena_bytes >= total_state + sum(graph.tensors[t].size_bytes
                                                 for t in graph.outputs)


def _check(board: str, backend: str) -> None:
    graph, inputs, expected = _case()
    check_invokes_on_device(graph, board, backend, inputs, expected, RESET,
                            BUILD / f"{board}-{backend}")
    # the reference itself: state carried (not the same output twice), reset repeats
    assert not np.array_equal(expected[1][3], expected[0][3])
    assert np.array_equal(expected[RESET][3], expected[0][3])


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_svdf_stack_on_the_host_board(backend: str) -> None:
    _check("host", backend)


@pytest.mark.parametrize(("board", "backend"), QEMU_BOARD_BACKENDS)
def test_svdf_stack_on_qemu(board: str, backend: str) -> None:
    _check(board, backend)
