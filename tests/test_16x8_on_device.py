"""A 16x8 model on the device: QUANTIZE int8 -> int16, CONV_2D, DEPTHWISE_CONV_2D and
FULLY_CONNECTED with int16 activations, int8 weights and int64 biases, int16 ADD, MUL and
SOFTMAX, QUANTIZE back to int8, through both backends on the host board and QEMU mps2-an386; both
outputs (int8 and int16) bit-exact with the reference, which is checked against TFLite
Micro on the same graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graph_on_device import QEMU_BOARD_BACKENDS
from graphs_16x8 import chain_16x8
from reference_single_op import assert_matches_tflm
from tinyhost import reference
from tinyhost.deploy.runner import run_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_16x8_on_device"


def _case():
    rng = np.random.default_rng(21)
    graph = chain_16x8(rng)
    inputs = [rng.integers(-128, 128, (1, 8, 8, 3)).astype(np.int8) for _ in range(2)]
    return graph, inputs


def test_chain_16x8_reference_matches_tflm():
    graph, inputs = _case()
    for x in inputs:
        y8, y16 = assert_matches_tflm(graph, [x])
        assert np.unique(y16).size > 5 and np.ptp(y8.astype(int)) > 10  # values spread
        assert 0 < y16.max() < 32767


def _check(board: str, backend: str) -> None:
    graph, inputs = _case()
    report = run_model(graph, board, [[x] for x in inputs], backend=backend,
                       work_dir=BUILD / f"{board}-{backend}")
    assert len(report.runs) == len(inputs)
    for k, (run, x) in enumerate(zip(report.runs, inputs)):
        want = reference.run(graph, [x]).outputs
        for j, (got, w) in enumerate(zip(run.outputs, want)):
            assert got.dtype == w.dtype
            np.testing.assert_array_equal(got, w.reshape(got.shape),
                                          err_msg=f"invoke {k}, output {j}")


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_chain_16x8_on_the_host_board(backend: str) -> None:
    _check("host", backend)


@pytest.mark.parametrize(("board", "backend"), QEMU_BOARD_BACKENDS)
def test_chain_16x8_on_qemu(board: str, backend: str) -> None:
    _check(board, backend)
