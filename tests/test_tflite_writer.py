"""The .tflite writer: round trips, determinism, layout TFLite Micro needs, and TFLM runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite

from oracle import tflm_run_all_tensors
from paths import model_params, project_model_paths, shared_model, shared_model_paths
from tinyhost import reference
from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import (
    Activation,
    Conv2DOptions,
    FullyConnectedOptions,
    Graph,
    NoOptions,
    Op,
    OpKind,
    Padding,
    Quantization,
    ReshapeOptions,
    SoftmaxOptions,
    Tensor,
    UnsupportedOptions,
)
from tinyhost.tflite import read_model, read_model_bytes
from tinyhost.tflite.writer import write_model, write_model_file

ALL_MODELS = shared_model_paths() + project_model_paths()

# Shared models TFLite Micro runs; kws_ref_model_float32 is hybrid, which TFLM refuses.
TFLM_SHARED = [
    "mlperf_tiny/kws_ref_model.tflite",
    "mlperf_tiny/vww_96_int8.tflite",
    "mlperf_tiny/pretrainedResnet_quant.tflite",
    "mlperf_tiny/ad01_int8.tflite",
    "tflm/hello_world_int8.tflite",
    "tflm/micro_speech_quantized.tflite",
    "tflm/network_model.tflite",
    "tflm/simple_add_model.tflite",
    "tflm/hello_world_float.tflite",
]


def _random_inputs(graph: Graph, rng: np.random.Generator) -> list[np.ndarray]:
    return reference.random_inputs(graph, rng)


def _assert_same_tflm_outputs(original: bytes, written: bytes, graph: Graph) -> None:
    rng = np.random.default_rng(1234)
    for _ in range(2):
        inputs = _random_inputs(graph, rng)
        expected, _ = tflm_run_all_tensors(original, inputs)
        got, _ = tflm_run_all_tensors(written, inputs)
        assert len(got) == len(expected) == len(graph.outputs)
        for a, b in zip(got, expected, strict=True):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)


# -- every model -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", model_params(ALL_MODELS))
def test_round_trip_and_determinism(path: Path) -> None:
    graph = read_model(path)
    written = write_model(graph)
    back = read_model_bytes(written, "written")
    assert back.equals(graph)
    assert back.description == graph.description and back.name == graph.name
    assert write_model(back) == written
    assert write_model(graph) == written


@pytest.mark.parametrize("path", model_params(ALL_MODELS))
def test_layout(path: Path) -> None:
    """Identifier, version, empty buffer 0, one aligned buffer per constant, deduped codes."""
    graph = read_model(path)
    data = write_model(graph)
    assert data[4:8] == b"TFL3"
    model = tflite.Model.GetRootAsModel(data, 0)
    assert model.Version() == 3
    assert model.Buffers(0).DataLength() == 0
    n_constants = sum(t.is_constant for t in graph.tensors)
    assert model.BuffersLength() == 1 + n_constants
    sg = model.Subgraphs(0)
    buffers_used = []
    for i in range(sg.TensorsLength()):
        buffer_index = sg.Tensors(i).Buffer()
        if graph.tensors[i].is_constant:
            buffers_used.append(buffer_index)
            buf = model.Buffers(buffer_index)
            # Byte offset of the data vector's first element (no public accessor for it).
            offset = buf._tab.Vector(buf._tab.Offset(4))
            assert offset % 16 == 0, f"tensor {i} data at byte {offset}"
        else:
            assert buffer_index == 0
    assert sorted(buffers_used) == list(range(1, 1 + n_constants))

    kinds = {op.kind.value for op in graph.ops}
    assert model.OperatorCodesLength() == len(kinds)
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]
    assert sorted(c.BuiltinCode() for c in codes) == sorted(kinds)
    for c in codes:
        assert c.DeprecatedBuiltinCode() == min(c.BuiltinCode(), 127)


@pytest.mark.parametrize("relative", TFLM_SHARED)
def test_written_shared_model_runs_identically_in_tflm(relative: str) -> None:
    original = shared_model(relative).read_bytes()
    graph = read_model_bytes(original, relative)
    _assert_same_tflm_outputs(original, write_model(graph), graph)


@pytest.mark.parametrize("path", model_params(project_model_paths(), "tests/models has no .tflite"))
def test_written_project_model_runs_identically_in_tflm(path: Path) -> None:
    original = path.read_bytes()
    graph = read_model_bytes(original, str(path))
    try:
        tflm_run_all_tensors(original, _random_inputs(graph, np.random.default_rng(0)))
    except RuntimeError as e:  # the generated model itself is not TFLM-runnable
        pytest.skip(f"TFLite Micro refuses the original {path.name}: {e}")
    _assert_same_tflm_outputs(original, write_model(graph), graph)


# -- a graph built by hand -------------------------------------------------------------------


def _q(scale, zero_point=0, axis: int = 0) -> Quantization:
    scale = np.atleast_1d(np.asarray(scale, np.float32))
    zp = np.broadcast_to(np.asarray(zero_point, np.int64), scale.shape).copy()
    return Quantization(scale=scale, zero_point=zp, axis=axis)


def _hand_built_graph() -> Graph:
    """int8 CONV_2D (per-channel) -> RESHAPE -> FULLY_CONNECTED (no bias) -> SOFTMAX."""
    rng = np.random.default_rng(7)
    in_scale, conv_scale, fc_w_scale, fc_scale = 0.05, 0.1, 0.01, 0.2
    conv_w_scales = np.float32([0.01, 0.02, 0.015, 0.03])
    conv_w = rng.integers(-127, 128, (4, 3, 3, 3), dtype=np.int8)
    conv_bias_scales = (np.float32(in_scale) * conv_w_scales).astype(np.float32)
    conv_bias = rng.integers(-500, 500, 4, dtype=np.int32)
    fc_w = rng.integers(-127, 128, (5, 256), dtype=np.int8)
    i8, i32 = np.dtype(np.int8), np.dtype(np.int32)
    tensors = (
        Tensor("input", (1, 8, 8, 3), i8, quant=_q(in_scale, -10)),
        Tensor("conv/weights", (4, 3, 3, 3), i8, conv_w, _q(conv_w_scales, 0, axis=0)),
        Tensor("conv/bias", (4,), i32, conv_bias, _q(conv_bias_scales, 0)),
        Tensor("conv/out", (1, 8, 8, 4), i8, quant=_q(conv_scale, -128)),
        Tensor("reshape/shape", (2,), i32, np.int32([1, 256])),
        Tensor("reshape/out", (1, 256), i8, quant=_q(conv_scale, -128)),
        Tensor("fc/weights", (5, 256), i8, fc_w, _q(fc_w_scale, 0)),
        Tensor("fc/out", (1, 5), i8, quant=_q(fc_scale, 3)),
        Tensor("probabilities", (1, 5), i8, quant=_q(1 / 256, -128)),
    )
    ops = (
        Op(OpKind.CONV_2D, (0, 1, 2), (3,), Conv2DOptions(Padding.SAME, 1, 1,
                                                          activation=Activation.RELU)),
        Op(OpKind.RESHAPE, (3, 4), (5,), ReshapeOptions((1, 256))),
        Op(OpKind.FULLY_CONNECTED, (5, 6, None), (7,), FullyConnectedOptions()),
        Op(OpKind.SOFTMAX, (7,), (8,), SoftmaxOptions(1.0)),
    )
    return Graph(tensors=tensors, ops=ops, inputs=(0,), outputs=(8,), name="hand",
                 description="built in a test")


def test_hand_built_graph_runs_in_tflm(tmp_path: Path) -> None:
    graph = _hand_built_graph()
    path = tmp_path / "hand.tflite"
    write_model_file(graph, path)
    back = read_model(path)
    assert back.equals(graph)
    assert back.description == "built in a test" and back.name == "hand"

    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (1, 8, 8, 3), dtype=np.int8)
    (probs,), tensors = tflm_run_all_tensors(path, [x])
    assert probs.dtype == np.int8 and probs.shape == (1, 5)
    # Softmax output: probabilities at scale 1/256, zero point -128, summing to about 1.
    total = float(np.sum((probs.astype(np.int32) + 128) / 256.0))
    assert abs(total - 1.0) < 0.05, total
    # The fused RELU clamps the conv output at its zero point: no value below -128 + 0.
    conv_out = tensors[3]
    assert conv_out.shape == (1, 8, 8, 4) and conv_out.min() >= -128
    # RESHAPE only relabels the bytes.
    np.testing.assert_array_equal(tensors[5].reshape(-1), conv_out.reshape(-1))


# -- errors ----------------------------------------------------------------------------------


def test_unsupported_op_is_refused_by_index_and_name() -> None:
    graph = _hand_built_graph()
    custom = Op(OpKind.UNSUPPORTED, (7,), (8,), UnsupportedOptions("CUSTOM(TFLite_Foo)", 32))
    graph = Graph(graph.tensors, (*graph.ops[:3], custom), graph.inputs, graph.outputs,
                  source="m.tflite")
    with pytest.raises(UnsupportedModelError, match=r"op 3 \(CUSTOM\(TFLite_Foo\)\)"):
        write_model(graph)


def test_options_of_the_wrong_type_are_refused() -> None:
    graph = _hand_built_graph()
    bad = Op(OpKind.SOFTMAX, (7,), (8,), NoOptions())
    graph = Graph(graph.tensors, (*graph.ops[:3], bad), graph.inputs, graph.outputs)
    with pytest.raises(ModelFormatError, match="op 3 \\(SOFTMAX\\) has options NoOptions"):
        write_model(graph)


def test_unwritable_dtype_is_refused() -> None:
    t = Tensor("c", (2,), np.dtype(np.complex64))
    graph = Graph((t, Tensor("y", (2,), np.dtype(np.float32))),
                  (Op(OpKind.RELU, (0,), (1,), NoOptions()),), (0,), (1,))
    with pytest.raises(UnsupportedModelError, match="tensor 0 'c'"):
        write_model(graph)


def test_out_of_range_tensor_index_is_refused() -> None:
    graph = _hand_built_graph()
    bad = Op(OpKind.SOFTMAX, (7,), (42,), SoftmaxOptions())
    graph = Graph(graph.tensors, (*graph.ops[:3], bad), graph.inputs, graph.outputs)
    with pytest.raises(ModelFormatError, match="op 3 \\(SOFTMAX\\) refers to tensor 42"):
        write_model(graph)


def test_constant_of_the_wrong_size_is_refused() -> None:
    graph = _hand_built_graph()
    tensors = list(graph.tensors)
    tensors[4] = Tensor("reshape/shape", (2,), np.dtype(np.int32), np.int32([1, 256, 1]))
    graph = Graph(tuple(tensors), graph.ops, graph.inputs, graph.outputs)
    with pytest.raises(ModelFormatError, match="tensor 4 'reshape/shape'"):
        write_model(graph)
