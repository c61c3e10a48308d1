"""Packed int4 weights kept packed on the device (th_conv_s4, th_dw_conv_s4,
th_fully_connected_s4; ARCHITECTURE.md §4.3): a CONV_2D -> DEPTHWISE_CONV_2D ->
FULLY_CONNECTED graph with int4 weights (the FC rows and the depthwise run of odd length: a
nibble tail; the conv with Cin % 4 == 0, an odd output pixel count and an odd Cout;
per-channel convolutions, a per-tensor FC with Cout 7: a block of four rows, a pair, one),
every op's output a model output, bit-exact with TFLite Micro in the reference and with the
reference on the host board and QEMU mps2-an386 through both backends; and the digits model
quantized with `--weights int4` bit-exact on QEMU through both backends, its model data in
flash smaller than with int8 weights."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from graph_builder import GraphBuilder
from graph_on_device import (
    assert_device_matches_reference,
    assert_reference_matches_tflm,
    int8_inputs,
)
from paths import PROJECT_MODELS
from reference_single_op import q
from tinyhost import reference
from tinyhost.boards import load_board
from tinyhost.cli import main
from tinyhost.codegen.backends import get_backend
from tinyhost.codegen.lower import lower_graph
from tinyhost.deploy.runner import run_model
from tinyhost.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    Graph,
    OpKind,
    Padding,
)
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_int4_on_device"
I32 = np.dtype(np.int32)


def _int4_graph() -> Graph:
    rng = np.random.default_rng(17)
    b = GraphBuilder(rng)
    x = b.tensor("x", (1, 5, 7, 4), quant=q(0.05, 3))  # 35 pixels: an odd one left

    def w4(shape: tuple[int, ...]) -> np.ndarray:
        return rng.integers(-7, 8, shape).astype(np.int8)

    conv = b.conv(x, Conv2DOptions(Padding.SAME, 1, 1, activation=Activation.RELU),
                  w4((5, 3, 3, 4)), rng.uniform(0.02, 0.06, 5).astype(np.float32),
                  rng.integers(-200, 200, 5), q(0.08, -128), "conv")  # K = 36
    dw = b.conv(conv, DepthwiseConv2DOptions(Padding.SAME, 2, 2, 3),
                w4((1, 3, 3, 15)), rng.uniform(0.02, 0.06, 15).astype(np.float32),
                rng.integers(-200, 200, 15), q(0.1, 5), "dw")  # taps 9, mult 3
    # FULLY_CONNECTED over the (1, 3, 4, 15) output as 4 rows of 45 (odd), per tensor
    fw = b.tensor("fc_w", (7, 45), data=w4((7, 45)), quant=q(0.03, 0))
    fb = b.tensor("fc_b", (7,), I32, rng.integers(-300, 300, 7).astype(np.int32),
                  q(np.float32(0.1 * 0.03), 0))
    y = b.tensor("fc_y", (4, 7), quant=q(0.2, -4))
    b.op(OpKind.FULLY_CONNECTED, (dw, fw, fb), (y,), FullyConnectedOptions())
    g = b.graph([x], [conv, dw, y], "int4_chain")
    tensors = tuple(replace(t, packed_int4=True) if t.name.endswith("_w") else t
                    for t in g.tensors)  # fmt: skip
    return replace(g, tensors=tensors)


def test_int4_chain_lowers_to_the_packed_kernels() -> None:
    g = _int4_graph()
    functions = [c.function for c in lower_graph(g)]
    assert functions == ["th_conv_s4", "th_dw_conv_s4", "th_fully_connected_s4"]
    assert_reference_matches_tflm(g, int8_inputs(g, 1))
    outs = reference.run(g, int8_inputs(g, 1)).outputs
    assert all(len(np.unique(o)) > 8 for o in outs)  # not saturated: the test can fail


@pytest.mark.parametrize("board", ["host", "mps2-an386"])
@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_int4_chain_on_device(board: str, backend: str) -> None:
    g = _int4_graph()
    assert_device_matches_reference(g, int8_inputs(g, 2), board, backend,
                                    BUILD / f"chain-{board}-{backend}")


@pytest.fixture(scope="module")
def digits(tmp_path_factory) -> tuple[Graph, Graph, list[np.ndarray]]:
    out = tmp_path_factory.mktemp("digits")
    paths = {}
    for weights in ("int8", "int4"):
        paths[weights] = out / f"digits_{weights}.tflite"
        assert main(["quantize", str(PROJECT_MODELS / "digits_float.tflite"), "--calib",
                     f"{PROJECT_MODELS / 'digits_data.npz'}:calib_x", "--weights", weights,
                     "-o", str(paths[weights])]) == 0  # fmt: skip
    g4 = read_model(paths["int4"])
    data = np.load(PROJECT_MODELS / "digits_data.npz")
    x_q = g4.tensors[g4.inputs[0]].quant
    xs = [np.clip(np.round(x / float(x_q.scale[0])) + int(x_q.zero_point[0]), -128, 127)
          .astype(np.int8).reshape(g4.tensors[g4.inputs[0]].shape)
          for x in data["test_x"][:3]]  # fmt: skip
    return g4, read_model(paths["int8"]), xs


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_int4_digits_on_qemu_is_exact_and_smaller(digits, backend: str) -> None:
    g4, g8, xs = digits
    assert {c.function for c in lower_graph(g4)} >= {"th_conv_s4", "th_fully_connected_s4"}
    report = run_model(g4, "mps2-an386", [[x] for x in xs], backend=backend,
                       work_dir=BUILD / f"digits-{backend}")  # fmt: skip
    for run, x in zip(report.runs, xs, strict=True):
        np.testing.assert_array_equal(run.outputs[0], reference.run(g4, [x]).outputs[0])
    board = load_board("mps2-an386")
    int8 = get_backend(backend).fit(g8, board).model_flash_bytes
    assert get_backend(backend).fit(g4, board).model_flash_bytes == report.model_flash_bytes
    assert report.model_flash_bytes < int8, (report.model_flash_bytes, int8)
