"""End to end on the host board: convert -> build -> run over the serial protocol, bit-exact.

One interpreter firmware is built for the host board with every available kernel
(`--all-ops`) and a large arena; each model's blob then goes over LOAD_MODEL, so every model
runs through the real firmware (protocol, validation, dispatch, kernels) without a rebuild
per model. Outputs must equal the NumPy reference (itself bit-exact with TFLite Micro)
exactly, for several inputs per model. `tinyhost run` itself is exercised once, building its
own firmware, with --json.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from paths import SHARED_DATA, SHARED_FLOAT, SHARED_INT8, SHARED_MODELS, model_params
from paths import project_models as _project_models
from tinyhost import reference
from tinyhost.boards import load_board
from tinyhost.codegen.blob import build_blob
from tinyhost.codegen.interpreter import convert, target_for
from tinyhost.deploy.protocol import Device
from tinyhost.deploy.runner import build_firmware, invoke_once, open_device
from tinyhost.ir import Graph
from tinyhost.quantize.quantizer import is_float_model
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_run_host"
ARENA = 192 << 10

INT8_MODELS = [SHARED_MODELS / m for m in SHARED_INT8 if (SHARED_MODELS / m).is_file()] + [
    p for p in _project_models() if not is_float_model(read_model(p))
]
FLOAT_MODELS = [SHARED_MODELS / m for m in SHARED_FLOAT if (SHARED_MODELS / m).is_file()] + [
    p for p in _project_models() if is_float_model(read_model(p))
]


@pytest.fixture(scope="module")
def firmware() -> Path:
    board = load_board("host")
    seed = read_model(SHARED_MODELS / "tflm" / "hello_world_int8.tflite") if (
        SHARED_MODELS / "tflm" / "hello_world_int8.tflite").is_file() else read_model(
        INT8_MODELS[0])  # fmt: skip
    conv = convert(seed, board, BUILD / "model", all_ops=True, arena_bytes=ARENA)
    return build_firmware(conv.out_dir, board, BUILD / "build").elf


@pytest.fixture(scope="module")
def device(firmware: Path) -> Iterator[Device]:
    with open_device(firmware, "host", request_timeout=10.0) as dev:
        yield dev


def random_inputs(graph: Graph, rng: np.random.Generator) -> list[np.ndarray]:
    return reference.random_inputs(graph, rng)


def shared_inputs(path: Path, graph: Graph) -> list[list[np.ndarray]]:
    """The shared sample inputs that fit this model (kws, ic)."""
    samples = {"kws_ref_model": "mlperf_tiny/kws_input0_49x10_int8.npy",
               "pretrainedResnet_quant": "mlperf_tiny/ic_input0_32x32x3_uint8.npy"}  # fmt: skip
    rel = samples.get(path.stem)
    if rel is None or not (SHARED_DATA / rel).is_file() or len(graph.inputs) != 1:
        return []
    x = np.load(SHARED_DATA / rel)
    t = graph.tensors[graph.inputs[0]]
    if x.size != int(np.prod(t.shape)):
        return []
    if x.dtype == np.uint8:
        x = (x.astype(np.int16) - 128).astype(np.int8)
    return [[x.astype(np.int8).reshape(t.shape)]]


def check_model_on_device(device: Device, graph: Graph, input_sets: list[list[np.ndarray]]):
    blob = build_blob(graph, target_for(load_board("host")))
    device.load_model(blob.data)
    info = device.info()
    assert info.model_ready
    assert info.model_hash == blob.crc
    assert info.backend == "interpreter" and info.board == "host"
    assert info.n_ops == len(graph.ops)
    for inputs in input_sets:
        run = invoke_once(device, inputs)
        expected = reference.run(graph, inputs).outputs
        assert len(run.outputs) == len(expected)
        for k, (got, want) in enumerate(zip(run.outputs, expected)):
            assert got.dtype == want.dtype and got.shape == want.shape, k
            np.testing.assert_array_equal(got, want, err_msg=f"output {k}")
        assert run.latency.unit == "host-ns"
        assert len(run.latency.per_op) == len(graph.ops)


@pytest.mark.parametrize("path", model_params(INT8_MODELS))
def test_int8_model_bit_exact_over_protocol(device: Device, path: Path) -> None:
    graph = read_model(path)
    rng = np.random.default_rng(7)
    sets = shared_inputs(path, graph) + [random_inputs(graph, rng) for _ in range(3)]
    check_model_on_device(device, graph, sets)


@pytest.mark.parametrize("path", model_params(FLOAT_MODELS))
def test_float_model_quantized_then_bit_exact(device: Device, path: Path) -> None:
    """Float models go through `convert`'s quantization step, then run bit-exact with the
    reference of the quantized graph."""
    from tinyhost.cli.quantize import quantize_for_convert

    graph = quantize_for_convert(read_model(path), "random", warn=lambda _: None,
                                 progress=False)  # fmt: skip
    rng = np.random.default_rng(11)
    check_model_on_device(device, graph, [random_inputs(graph, rng) for _ in range(2)])


def test_tinyhost_run_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`tinyhost run MODEL --board host --backend interpreter --input X.npy --json`."""
    from tinyhost.cli import backend as cli_backend

    model = SHARED_MODELS / "mlperf_tiny" / "ad01_int8.tflite"
    if not model.is_file():
        # without ../shared: a project model with one input, as the command below gives one
        model = next(m for m in INT8_MODELS if len(read_model(m).inputs) == 1)
    graph = read_model(model)
    x = random_inputs(graph, np.random.default_rng(3))[0]
    np.save(tmp_path / "x.npy", x)
    parser = argparse.ArgumentParser()
    cli_backend.add_parser(parser.add_subparsers())
    args = parser.parse_args(["run", str(model), "--board", "host", "--backend", "interpreter",
                              "--input", str(tmp_path / "x.npy"), "--json",
                              "--work-dir", str(BUILD / "cli-run")])  # fmt: skip
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    expected = reference.run(graph, [x]).outputs
    assert out["outputs"] == [e.reshape(-1).tolist() for e in expected]
    assert out["board"] == "host" and out["backend"] == "interpreter"
    assert out["latency"]["unit"] == "host-ns"
    assert out["latency"]["total"] > 0
    assert len(out["latency"]["per_op"]) == len(graph.ops)
    assert out["arena_bytes"] >= 1
