"""The interpreter firmware on QEMU Cortex-M boards: DSP kernels, interleaved filters,
the protocol over QEMU's TCP serial port, bit-exact outputs and labelled latency units."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS, SHARED_MODELS
from tinyhost import reference
from tinyhost.deploy.runner import run_model
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_interpreter_qemu"

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed",
)

CASES = [
    ("mps2-an386", SHARED_MODELS / "mlperf_tiny" / "kws_ref_model.tflite", "instructions"),
    ("netduinoplus2", PROJECT_MODELS / "vision_hswish_concat_sigmoid_int8.tflite",
     "instructions"),
    ("mps2-an500", PROJECT_MODELS / "fc_pertensor_bias_relu6_nobias_int8.tflite", "instructions"),
]


@pytest.mark.parametrize("board,path,unit", CASES, ids=[c[0] for c in CASES])
def test_qemu_board_bit_exact(board: str, path: Path, unit: str) -> None:
    if not path.is_file():
        pytest.skip(f"{path} absent")
    graph = read_model(path)
    rng = np.random.default_rng(5)
    sets = [[rng.integers(-128, 128, graph.tensors[i].shape).astype(np.int8)
             for i in graph.inputs] for _ in range(2)]  # fmt: skip
    report = run_model(graph, board, sets, work_dir=BUILD / f"{board}-{path.stem}",
                       timeout=300)  # fmt: skip
    for inputs, run in zip(sets, report.runs):
        for got, want in zip(run.outputs, reference.run(graph, inputs).outputs):
            np.testing.assert_array_equal(got, want)
        assert run.latency.unit == unit
        assert run.latency.total > 0 and len(run.latency.per_op) == len(graph.ops)
