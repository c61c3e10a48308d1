"""The `tinyhost` command line: inspect and reference, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from paths import SHARED_MODELS, SKIP_NO_SHARED, project_models
from tinyhost import reference
from tinyhost.tflite import read_model


def _tinyhost(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tinyhost.cli", *args], capture_output=True, text=True, timeout=300
    )


def _project_model(stem: str) -> Path:
    path = next((p for p in project_models() if p.stem == stem), None)
    assert path is not None, f"tests/models/{stem}.tflite is missing"
    return path


def test_inspect_json_vww_macs() -> None:
    path = SHARED_MODELS / "mlperf_tiny/vww_96_int8.tflite"
    if not path.is_file():
        pytest.skip(SKIP_NO_SHARED)
    result = _tinyhost("inspect", str(path), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert abs(summary["macs"] - 7_490_000) <= 0.01 * 7_490_000
    assert isinstance(summary["macs"], int)
    assert summary["unsupported"] == []
    assert len(summary["ops"]) == 31
    assert sum(op["macs"] for op in summary["ops"]) == summary["macs"]
    kinds = [op["kind"] for op in summary["ops"]]
    assert kinds.count("CONV_2D") == 14 and kinds.count("DEPTHWISE_CONV_2D") == 13
    assert [op["index"] for op in summary["ops"]] == list(range(31))
    # int8 weights, int32 biases and shape operands: the bytes of every constant tensor.
    graph = read_model(path)
    assert summary["weight_bytes"] == sum(
        t.data.nbytes for t in graph.tensors if t.data is not None
    )
    assert summary["inputs"][0]["shape"] == [1, 96, 96, 3]
    every = {"reference": True, "interpreter": True, "compiled": True}
    assert all(op["runs"] == every for op in summary["ops"])


def test_inspect_text_lists_every_op() -> None:
    path = _project_model("kws_dscnn_int8")
    result = _tinyhost("inspect", str(path))
    assert result.returncode == 0, result.stderr
    graph = read_model(path)
    for index, op in enumerate(graph.ops):
        assert f"{index:>4}  {op.name}" in result.stdout
    assert "unsupported ops: none" in result.stdout


def test_reference_command_matches_library(tmp_path: Path) -> None:
    path = _project_model("kws_dscnn_int8")
    graph = read_model(path)
    shape = graph.tensors[graph.inputs[0]].shape
    x = np.random.default_rng(7).integers(-128, 128, shape, dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    result = _tinyhost(
        "reference",
        str(path),
        "--input",
        str(tmp_path / "x.npy"),
        "-o",
        str(tmp_path / "y.npy"),
        "--dump-dir",
        str(tmp_path / "dump"),
    )
    assert result.returncode == 0, result.stderr
    expected = reference.run(graph, [x], keep_intermediates=True)
    assert np.array_equal(np.load(tmp_path / "y.npy"), expected.outputs[0])
    index = json.loads((tmp_path / "dump" / "index.json").read_text())
    dumped = {entry["tensor"]: np.load(tmp_path / "dump" / entry["file"]) for entry in index}
    activations = [i for i, t in enumerate(graph.tensors) if t.data is None]
    assert sorted(dumped) == activations
    for i, value in dumped.items():
        assert np.array_equal(value, expected.tensors[i])


def test_reference_quantizes_float_input(tmp_path: Path) -> None:
    path = _project_model("kws_dscnn_int8")
    graph = read_model(path)
    t = graph.tensors[graph.inputs[0]]
    scale, zero_point = float(t.quant.scale[0]), int(t.quant.zero_point[0])
    q = np.random.default_rng(8).integers(-128, 128, t.shape, dtype=np.int8)
    x = ((q.astype(np.float32) - zero_point) * np.float32(scale)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    result = _tinyhost(
        "reference", str(path), "--input", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy")
    )
    assert result.returncode == 0, result.stderr
    # Values on the quantization grid quantize back to exactly the same int8 input.
    assert np.array_equal(np.load(tmp_path / "y.npy"), reference.run(graph, [q]).outputs[0])


def test_reference_runs_each_sample_of_a_batch(tmp_path: Path) -> None:
    path = _project_model("kws_dscnn_int8")
    graph = read_model(path)
    shape = graph.tensors[graph.inputs[0]].shape
    xs = np.random.default_rng(9).integers(-128, 128, (3, *shape[1:]), dtype=np.int8)
    np.save(tmp_path / "x.npy", xs)
    result = _tinyhost(
        "reference", str(path), "--input", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy")
    )
    assert result.returncode == 0, result.stderr
    y = np.load(tmp_path / "y.npy")
    assert y.shape[0] == 3
    for k in range(3):
        assert np.array_equal(y[k : k + 1], reference.run(graph, [xs[k : k + 1]]).outputs[0])


@pytest.mark.parametrize(
    "setup, needle",
    [
        ("missing", "no such file"),
        ("wrong_shape", "expects shape"),
        ("not_npy", "not a readable .npy"),
    ],
)
def test_reference_input_errors(tmp_path: Path, setup: str, needle: str) -> None:
    path = _project_model("kws_dscnn_int8")
    x = tmp_path / "x.npy"
    if setup == "wrong_shape":
        np.save(x, np.zeros((2, 3), np.int8))
    elif setup == "not_npy":
        x.write_text("1,2,3")
    result = _tinyhost("reference", str(path), "--input", str(x), "-o", str(tmp_path / "y.npy"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert needle in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_hybrid_model_is_refused() -> None:
    path = SHARED_MODELS / "mlperf_tiny/kws_ref_model_float32.tflite"
    if not path.is_file():
        pytest.skip(SKIP_NO_SHARED)
    result = _tinyhost("reference", str(path), "--input", str(path), "-o", "/dev/null")
    assert result.returncode == 2
    assert "hybrid ops" in result.stderr and "0 (CONV_2D), 2 (CONV_2D)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


UNSUPPORTED_MODEL = (
    Path(__file__).parent / "models" / "unsupported" / "exp_gather_sqrt_neg_float.tflite"
)


def test_inspect_lists_every_unsupported_op() -> None:
    result = _tinyhost("inspect", str(UNSUPPORTED_MODEL), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["unsupported"] == [
        {"index": 0, "kind": "EXP"},
        {"index": 3, "kind": "SQRT"},
        {"index": 4, "kind": "NEG"},
    ]
    assert [op["supported"] for op in summary["ops"]] == [False, True, True, False, False]
    # a float model: the device runs its int8 twin, so device support is not claimed either way
    assert [op["runs"] for op in summary["ops"]] == [
        {"reference": ok, "interpreter": None, "compiled": None}
        for ok in (False, True, True, False, False)]


def test_reference_refuses_unsupported_model_listing_all(tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.zeros((1, 16), np.float32))
    result = _tinyhost(
        "reference",
        str(UNSUPPORTED_MODEL),
        "--input",
        str(tmp_path / "x.npy"),
        "-o",
        str(tmp_path / "y.npy"),
    )
    assert result.returncode == 2
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert str(UNSUPPORTED_MODEL) in line
    assert "unsupported ops: 0 (EXP), 3 (SQRT), 4 (NEG)" in line
    assert not (tmp_path / "y.npy").exists()
