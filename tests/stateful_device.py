"""Models with state (variable tensors) over consecutive invokes with a reset: the reference
carrying its own State, and the device compared with it on every output of every invoke.
Shared by the SVDF and LSTM device tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tinyhost import reference
from tinyhost.deploy.runner import run_model
from tinyhost.ir import Graph


def reference_invokes(graph: Graph, inputs: list[np.ndarray],
                      reset: int) -> list[list[np.ndarray]]:
    """Every output of each invoke, the state reset before invoke `reset`."""
    expected, state = [], None
    for k, x in enumerate(inputs):
        if k == reset:
            state = reference.initial_state(graph)
        result = reference.run(graph, [x], state=state)
        state = result.state
        expected.append(result.outputs)
    return expected


def check_invokes_on_device(graph: Graph, board: str, backend: str, inputs: list[np.ndarray],
                            expected: list[list[np.ndarray]], reset: int,
                            work_dir: Path) -> None:
    """Run the invokes on the device (reset before invoke `reset`) and compare every output
    with `expected` bit for bit."""
    report = run_model(graph, board, [[x] for x in inputs], backend=backend,
                       work_dir=work_dir, reset_before={reset})
    assert len(report.runs) == len(inputs)
    for k, (run, want) in enumerate(zip(report.runs, expected)):
        for j, (got, w) in enumerate(zip(run.outputs, want)):
            np.testing.assert_array_equal(got, w.reshape(got.shape),
                                          err_msg=f"invoke {k}, output {j}")
