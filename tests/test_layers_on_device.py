"""Every layer on the device, both backends: each op's output tensor is made a model output,
so the firmware returns it, and it must equal the reference's tensor bit for bit.

Exposing a tensor as an output keeps it live to the end of the plan, so no later op may reuse
its bytes: what the device returns is exactly what that op wrote. Models whose op outputs
fit the protocol firmware's 16 outputs run whole; longer ones in windows of 16 ops.
"""

from __future__ import annotations

import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS, SHARED_INT8, SHARED_MODELS
from tinyhost import reference
from tinyhost.codegen.interpreter_abi import LIMITS
from tinyhost.deploy.runner import run_model
from tinyhost.ir import Graph
from tinyhost.reference.executor import random_inputs
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_layers_on_device"
WINDOW = LIMITS["TH_INTERP_MAX_MODEL_IO"]
# Every op output of a model exposed at once must leave the STM32F405's 128 KiB room for the
# rest of the plan: models whose op outputs together stay under this run there too.
SMALL_BOARD_EXPOSED = 48 * 1024

MODELS = [PROJECT_MODELS / f"{m}.tflite" for m in (
    "kws_dscnn_int8", "mobilenet_block_residual_int8", "vision_hswish_concat_sigmoid_int8",
    "pad_concat_requantize_int8", "elementwise_add_sub_mul_broadcast_int8",
    # issue 14's shapes nobody tuned for: K x 1 audio depthwise stacks, a multiplier-8
    # depthwise first layer on one channel, odd channel counts in MobileNetV2 blocks
    "audio_dw_kx1_stack_int8", "dw_mult8_first_layer_int8",
    "mobilenet_blocks_odd_channels_int8")]  # fmt: skip
# Every shared int8 model TFLite Micro runs, where ../shared is present.
MODELS += [SHARED_MODELS / m for m in SHARED_INT8 if (SHARED_MODELS / m).is_file()]


def _layer_outputs(graph: Graph) -> list[int]:
    return [t for op in graph.ops for t in op.outputs]


def _with_outputs(graph: Graph, outputs: list[int]) -> Graph:
    return replace(graph, outputs=tuple(outputs))


def _check_layers(path: Path, board: str, backend: str, window_size: int = WINDOW) -> int:
    graph = read_model(path)
    x = random_inputs(graph, np.random.default_rng(zlib.crc32(path.name.encode())))
    expected = reference.run(graph, x, keep_intermediates=True).tensors
    layers = _layer_outputs(graph)
    for first in range(0, len(layers), window_size):
        window = layers[first : first + window_size]
        probe = _with_outputs(graph, window)
        report = run_model(probe, board, [x], backend=backend,
                           work_dir=BUILD / f"{board}-{backend}-{path.stem}-{first}")  # fmt: skip
        for t, got in zip(window, report.runs[0].outputs):
            want = np.asarray(expected[t]).reshape(got.shape)
            assert np.array_equal(got, want), (
                f"{path.name}: tensor {t} '{graph.tensors[t].name}' differs "
                f"({int(np.sum(got != want))} of {got.size} values)"
            )
    return len(layers)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_every_layer_bit_exact_on_the_host_board(path: Path, backend: str) -> None:
    assert _check_layers(path, "host", backend) == len(read_model(path).ops)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_every_layer_of_kws_on_qemu(backend: str) -> None:
    path = SHARED_MODELS / "mlperf_tiny" / "kws_ref_model.tflite"
    if not path.is_file():
        path = MODELS[0]
    _check_layers(path, "mps2-an386", backend)


def _exposed_bytes(path: Path) -> int:
    graph = read_model(path)
    return sum(int(np.prod(graph.tensors[t].shape)) * graph.tensors[t].dtype.itemsize
               for t in _layer_outputs(graph))  # fmt: skip


def _qemu_cases() -> list:
    """Every model on the Cortex-M4, M7 and M55 boards; on the STM32F405 (Cortex-M4 too: the
    same kernels and code as mps2-an386) the models whose exposed outputs fit its 128 KiB
    whole. The others would need windows of two ops there (a build per two layers) to learn
    nothing mps2-an386 does not; their real plan on that board runs end to end in
    test_compiled."""
    return [pytest.param(path, board, id=f"{path.stem}-{board}")
            for path in MODELS
            for board in ("mps2-an386", "mps2-an500", "netduinoplus2", "mps3-an547")
            if board != "netduinoplus2" or _exposed_bytes(path) <= SMALL_BOARD_EXPOSED]


@pytest.mark.parametrize(("path", "board"), _qemu_cases())
def test_every_layer_of_every_model_compiled_on_qemu(path: Path, board: str) -> None:
    """The compiled backend on every QEMU board (Cortex-M4, M7, STM32F405, M55)."""
    assert _check_layers(path, board, "compiled") == len(read_model(path).ops)
