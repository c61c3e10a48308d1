"""Whole models, every tensor: the NumPy reference against TFLite Micro.

Each int8 model is compared layer by layer, bit for bit; float models to float tolerance.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from oracle import tflm_run_all_tensors
from paths import (
    SHARED_DATA,
    SHARED_FLOAT,
    SHARED_INT8,
    SHARED_MODELS,
    SKIP_NO_SHARED,
    project_models,
)
from tinyhost import reference
from tinyhost.ir import Graph, OpKind
from tinyhost.tflite import read_model


def _random_inputs(graph: Graph, seed: int) -> list[np.ndarray]:
    return reference.random_inputs(graph, np.random.default_rng(seed))


def _sample_inputs(name: str) -> list[list[np.ndarray]]:
    """The real inputs shipped with the shared models, where there are any."""
    if name.endswith("kws_ref_model.tflite"):
        return [
            [np.load(SHARED_DATA / "mlperf_tiny/kws_input0_49x10_int8.npy").reshape(1, 49, 10, 1)]
        ]
    if name.endswith("pretrainedResnet_quant.tflite"):
        image = np.load(SHARED_DATA / "mlperf_tiny/ic_input0_32x32x3_uint8.npy")
        return [[(image.astype(np.int16) - 128).astype(np.int8).reshape(1, 32, 32, 3)]]
    if name.endswith("network_model.tflite"):
        return [[np.load(SHARED_DATA / "tflm/input_data.npy").astype(np.int8).reshape(1, 8, 8, 16)]]
    return []


def _compare_all_tensors(graph: Graph, inputs: list[np.ndarray], model: Path) -> int:
    """Integer tensors and DEQUANTIZE outputs must match exactly, float math to tolerance."""
    ours = reference.run(graph, inputs, keep_intermediates=True)
    tflm_outputs, tflm_tensors = tflm_run_all_tensors(model, inputs)
    compared = 0
    for op_index, op in enumerate(graph.ops):
        for t in op.outputs:
            expected = tflm_tensors[t].reshape(graph.tensors[t].shape)
            got = ours.tensors[t]
            name = graph.tensors[t].name
            where = f"{model.name}: op {op_index} ({op.name}) output tensor {t} '{name}'"
            assert got.dtype == expected.dtype, where
            if not np.issubdtype(got.dtype, np.floating) or op.kind is OpKind.DEQUANTIZE:
                mismatches = int(np.count_nonzero(got != expected))
                assert mismatches == 0, f"{where}: {mismatches} of {got.size} values differ"
            else:
                scale = max(1.0, float(np.abs(expected).max()))
                np.testing.assert_allclose(
                    got, expected, rtol=1e-4, atol=1e-4 * scale, err_msg=where
                )
            compared += 1
    assert len(ours.outputs) == len(tflm_outputs)
    return compared


def _shared(name: str) -> Path:
    path = SHARED_MODELS / name
    if not path.is_file():
        pytest.skip(SKIP_NO_SHARED)
    return path


@pytest.mark.parametrize("name", SHARED_INT8)
def test_shared_int8_model_bit_exact_every_layer(name: str) -> None:
    path = _shared(name)
    graph = read_model(path)
    cases = _sample_inputs(name) + [_random_inputs(graph, seed) for seed in (1, 2)]
    for inputs in cases:
        assert _compare_all_tensors(graph, inputs, path) == sum(len(op.outputs) for op in graph.ops)


@pytest.mark.parametrize("name", SHARED_FLOAT)
def test_shared_float_model_agrees_every_layer(name: str) -> None:
    path = _shared(name)
    graph = read_model(path)
    _compare_all_tensors(graph, _random_inputs(graph, 3), path)


@pytest.mark.parametrize("path", project_models(), ids=lambda p: p.name)
def test_project_model_matches_tflm_every_layer(path: Path) -> None:
    graph = read_model(path)
    for seed in (4, 5, 6):
        assert _compare_all_tensors(graph, _random_inputs(graph, seed), path) == sum(
            len(op.outputs) for op in graph.ops
        )


def test_project_models_exist() -> None:
    """The op-coverage models are committed with the script that makes them."""
    assert len(project_models()) >= 10
