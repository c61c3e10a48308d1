"""Shared by the op-family device tests: one graph whose every op's output is a model output,
checked against TFLite Micro in the reference and on a board through a backend."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reference_single_op import run_tflm
from tinyhost import reference
from tinyhost.deploy.runner import run_model
from tinyhost.ir import Graph


def int8_inputs(graph: Graph, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, graph.tensors[i].shape).astype(np.int8)
            for i in graph.inputs]  # fmt: skip


def assert_reference_matches_tflm(graph: Graph, x: list[np.ndarray]) -> None:
    ours = reference.run(graph, x).outputs
    theirs = run_tflm(graph, x)
    for index, a, t in zip(graph.outputs, ours, theirs, strict=True):
        np.testing.assert_array_equal(a, t.reshape(a.shape), err_msg=graph.tensors[index].name)


def assert_device_matches_reference(graph: Graph, x: list[np.ndarray], board: str,
                                    backend: str, work_dir: Path, **options: object) -> None:
    """Every output (each an op's output) bit-exact with the reference (`options`: more
    keywords of run_model)."""
    expected = reference.run(graph, x).outputs
    report = run_model(graph, board, [x], backend=backend, work_dir=work_dir,
                       **options)  # type: ignore[arg-type]
    for t, got, want in zip(graph.outputs, report.runs[0].outputs, expected, strict=True):
        want = np.asarray(want).reshape(got.shape)
        assert np.array_equal(got, want), (
            f"tensor {t} '{graph.tensors[t].name}' differs ({int(np.sum(got != want))} values)"
        )


# The op-family device tests run on the three QEMU cores: Cortex-M4 (DSP paths) through both
# backends, Cortex-M7 (DSP paths, another pipeline and memory map) and Cortex-M55 (the Helium
# build) through one backend each, so every family meets every kernel build.
QEMU_BOARD_BACKENDS = (
    ("mps2-an386", "interpreter"),
    ("mps2-an386", "compiled"),
    ("mps2-an500", "interpreter"),
    ("mps3-an547", "compiled"),
)
