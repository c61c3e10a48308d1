"""Packed int4 weights (TFLite INT4): read, written, run bit-exact with TFLite Micro, and made by
`tinyhost quantize --weights int4` with the accuracy cost reported.

TFLM unpacks int4 weights to int8 before any kernel runs; the reader does the same, so the
reference and both backends run them as int8 values in [-8, 7]."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from reference_single_op import I8, I32, q, run_tflm, single_op_graph
from tinyhost import reference
from tinyhost.cli import main
from tinyhost.deploy.runner import run_model
from tinyhost.errors import TinyhostError
from tinyhost.ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    OpKind,
    Padding,
    Tensor,
)
from tinyhost.passes.validate import check_graph
from tinyhost.tflite import read_model
from tinyhost.tflite.schema import pack_int4, unpack_int4
from tinyhost.tflite.writer import write_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_int4_weights"
DIGITS = PROJECT_MODELS / "digits_float.tflite"
DIGITS_DATA = PROJECT_MODELS / "digits_data.npz"


@pytest.mark.parametrize("count", [1, 2, 7, 64, 255])
def test_pack_and_unpack_are_inverse(count: int) -> None:
    values = np.random.default_rng(count).integers(-8, 8, count).astype(np.int8)
    packed = pack_int4(values)
    assert packed.size == (count + 1) // 2
    np.testing.assert_array_equal(unpack_int4(packed, count), values)
    # TFLite's order: the even element in the low nibble
    assert pack_int4(np.array([-8, 7], np.int8))[0] == 0x78


def _graph(kind: OpKind, per_channel: bool, seed: int):
    rng = np.random.default_rng(seed)
    if kind is OpKind.FULLY_CONNECTED:
        shape, xs, ys, axis, opts = (6, 20), (2, 20), (2, 6), 0, FullyConnectedOptions()
    elif kind is OpKind.CONV_2D:
        shape, xs, ys, axis = (5, 3, 3, 4), (1, 7, 6, 4), (1, 7, 6, 5), 0
        opts = Conv2DOptions(Padding.SAME, 1, 1)
    else:
        shape, xs, ys, axis = (1, 3, 3, 6), (1, 7, 6, 3), (1, 7, 6, 6), 3
        opts = DepthwiseConv2DOptions(Padding.SAME, 1, 1, 2)
    cout = shape[axis]
    scales = rng.uniform(0.01, 0.1, cout if per_channel else 1).astype(np.float32)
    w = rng.integers(-8, 8, shape).astype(np.int8)
    tensors = [
        Tensor("x", xs, I8, quant=q(0.05, int(rng.integers(-20, 20)))),
        Tensor("w", shape, I8, w, q(scales, 0, axis=axis), packed_int4=True),
        Tensor("b", (cout,), I32, rng.integers(-300, 300, cout).astype(np.int32),
               q((0.05 * scales).astype(np.float32), 0)),
        Tensor("y", ys, I8, quant=q(0.3, int(rng.integers(-20, 20)))),
    ]
    return single_op_graph(kind, opts, tensors, [0, 1, 2], [3])


CASES = [(OpKind.FULLY_CONNECTED, False), (OpKind.CONV_2D, True), (OpKind.CONV_2D, False),
         (OpKind.DEPTHWISE_CONV_2D, True)]


@pytest.mark.parametrize(("kind", "per_channel"), CASES)
def test_int4_weights_written_read_and_bit_exact_with_tflm(kind: OpKind, per_channel: bool,
                                                           tmp_path: Path) -> None:
    graph = _graph(kind, per_channel, 7)
    data = write_model(graph)
    unpacked = write_model(replace(graph, tensors=tuple(
        replace(t, packed_int4=False) for t in graph.tensors)))  # fmt: skip
    weights = graph.tensors[1].size_bytes
    assert len(unpacked) - len(data) >= weights // 2 - 16  # the weights stored in half
    path = tmp_path / "int4.tflite"
    path.write_bytes(data)
    back = read_model(path)
    assert back.tensors[1].packed_int4 and back.tensors[1].dtype == np.int8
    np.testing.assert_array_equal(back.tensors[1].data, graph.tensors[1].data)
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = rng.integers(-128, 128, graph.tensors[0].shape).astype(np.int8)
        np.testing.assert_array_equal(reference.run(back, [x]).outputs[0], run_tflm(back, [x])[0])


def test_per_channel_int4_fully_connected_is_refused_as_tflm_does() -> None:
    graph = _graph(OpKind.FULLY_CONNECTED, True, 3)
    with pytest.raises(TinyhostError, match="int4 FULLY_CONNECTED weights per tensor only"):
        check_graph(graph)
    with pytest.raises(RuntimeError):  # TFLM refuses it at allocation
        run_tflm(graph, [np.zeros((2, 20), np.int8)])


def test_quantize_int4_reports_the_cost_and_runs_on_device(tmp_path: Path, capsys) -> None:
    out = tmp_path / "digits_int4.tflite"
    assert main(["quantize", str(DIGITS), "--calib", f"{DIGITS_DATA}:calib_x",
                 "--weights", "int4", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "int4 weights vs float" in text and "int8 weights vs float" in text
    graph = read_model(out)
    int4 = [t for t in graph.tensors if t.packed_int4]
    assert all(int(t.data.min()) >= -7 and int(t.data.max()) <= 7 for t in int4)
    assert len(int4) == 3  # both convs and the fully connected layer

    data = np.load(DIGITS_DATA)
    x_q = graph.tensors[graph.inputs[0]].quant
    xs = [np.clip(np.round(x / float(x_q.scale[0])) + int(x_q.zero_point[0]), -128, 127)
          .astype(np.int8).reshape(graph.tensors[graph.inputs[0]].shape)
          for x in data["test_x"][:40]]  # fmt: skip
    want = [reference.run(graph, [x]).outputs[0] for x in xs]
    for x, w in zip(xs[:8], want, strict=False):
        np.testing.assert_array_equal(run_tflm(graph, [x])[0], w)
    # int4 keeps most of the accuracy on the held-out digits
    top1 = np.mean([int(np.argmax(w)) == int(y) for w, y in zip(want, data["test_y"][:40],
                                                                 strict=True)])  # fmt: skip
    assert top1 >= 0.85, top1
    for backend in ("interpreter", "compiled"):
        report = run_model(graph, "host", [[x] for x in xs[:4]], backend=backend,
                           work_dir=BUILD / backend)  # fmt: skip
        for run, w in zip(report.runs, want, strict=False):
            np.testing.assert_array_equal(run.outputs[0], w)
