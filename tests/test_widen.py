"""Host-prepared int16 weights (codegen/widen.py, th_fc_s8_w16): bit-exact, chosen where the
compiled backend should choose them.

- th_conv_1x1_s8_w16 (pointwise CONV_2D, channel pairs) the same way: odd Cout, Cout above
  the 64 channels whose requantization table fits the stack, activations (no table: the
  plain loops), biases that make the requantization exact for some channels only; the
  portable build refuses it (the host never picks it there).
- th_conv_3x3_s8_w16 (the im2col path) the same way, any stride and padding, with the
  host-made table of requantization constants when it applies and without it.
- th_fc_s8_w16 with random shapes (Cin and Cout not multiples of 4, several batches),
  per-tensor and per-channel requantization, activations, and biases large enough to take
  the exact (not the fast) requantization, in the portable build and the DSP build with the
  instructions modelled in C (sanitized library, exact-size buffers): outputs equal the NumPy
  reference and TFLite Micro.
- The choice: --optimize speed on a DSP core without Helium takes every FULLY_CONNECTED of
  ad01 (model.json lists them and the extra flash); never --optimize size, the host board or
  the Cortex-M55; on a board whose flash cannot hold them all, the layers adding the most
  flash go back to int8 until the model fits.
- ad01, kws_ref_model and ResNet with every layer's output made a model output, compiled for QEMU
  mps2-an386 (the int16-weight loops in Arm assembly): every layer bit-exact with the
  reference.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from paths import SHARED_MODELS
from reference_single_op import q, run_tflm, single_op_graph
from test_kernels_misc import Kernels, _start, buf, i32, out
from tinyhost import reference
from tinyhost.arith.padding import compute_window_padding
from tinyhost.boards import load_board
from tinyhost.codegen import get_backend
from tinyhost.codegen.compiled import generate
from tinyhost.codegen.lower import lower_graph
from tinyhost.codegen.widen import (
    CONV_W16_BLOCK,
    conv_rq_table,
    fc_fast_ok,
    fc_w16_bias,
    fc_w16_weights,
    w16_weights,
)
from tinyhost.deploy.runner import run_model
from tinyhost.ir import (
    Activation,
    Conv2DOptions,
    FullyConnectedOptions,
    Graph,
    OpKind,
    Padding,
    Tensor,
)
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_widen"
AD01 = SHARED_MODELS / "mlperf_tiny" / "ad01_int8.tflite"
I8, I32 = np.dtype(np.int8), np.dtype(np.int32)


@pytest.fixture(scope="module", params=["portable", "dsp"])
def built(request) -> Iterator[tuple[str, Kernels]]:
    """(variant, the sanitized kernel library of that build)."""
    for k in _start(request.param):
        yield request.param, k


def _fc_graph(rng: np.random.Generator, batches: int, cin: int, cout: int, per_channel: bool,
              big_bias: bool, act: Activation) -> Graph:
    in_scale, out_scale = float(2.0 ** rng.uniform(-8, -2)), float(2.0 ** rng.uniform(-6, 0))
    w_scale = (2.0 ** rng.uniform(-9, -5, cout if per_channel else 1)).astype(np.float32)
    w = rng.integers(-127, 128, (cout, cin)).astype(np.int8)
    bias = rng.integers(-(1 << 14), 1 << 14, cout).astype(np.int32)
    if big_bias:  # one channel's |acc| may reach 2^29: the exact requantization
        bias[int(rng.integers(cout))] = int(rng.choice([-1, 1])) * ((1 << 29) + 5)
    ts = [Tensor("x", (batches, cin), I8, quant=q(in_scale, int(rng.integers(-128, 128)))),
          Tensor("w", (cout, cin), I8, data=w, quant=q(w_scale, 0)),
          Tensor("b", (cout,), I32, data=bias, quant=q(w_scale * np.float32(in_scale), 0)),
          Tensor("y", (batches, cout), I8, quant=q(out_scale, int(rng.integers(-128, 128))))]
    return single_op_graph(OpKind.FULLY_CONNECTED, FullyConnectedOptions(act), ts, [0, 1, 2],
                           [3])


def _w16_call(kern: Kernels, graph: Graph, x: np.ndarray) -> tuple[np.ndarray, bool]:
    """th_fc_s8_w16 on the arrays codegen/widen.py makes from the lowered call."""
    (call,) = lower_graph(graph, "compiled")
    p = call.params
    w, bias = graph.tensors[1].data, graph.tensors[2].data
    cout, cin = w.shape
    if call.per_channel:
        mult, shift = call.arrays["multiplier"], call.arrays["shift"]
    else:
        mult, shift = p.out_multiplier[:1], p.out_shift[:1]
    fast = fc_fast_ok(cin, bias, mult, shift)
    params = i32(x.shape[0], cin, cout, p.output_offset, p.act_min, p.act_max,
                 int(call.per_channel), int(fast), 0, 0, 0)  # rq_table NULL (offset 40)
    status, bufs = kern.call(
        "th_fc_s8_w16", buf(params), buf(np.asarray(mult, np.int32)),
        buf(np.asarray(shift, np.int32)), buf(x), buf(fc_w16_weights(w)),
        buf(fc_w16_bias(bias, w, p.input_offset)), out(x.size // cin * cout))
    assert status == 0
    return np.frombuffer(bufs[6], np.int8).reshape(x.shape[0], cout), fast


def test_fc_w16_kernel_matches_reference_and_tflm(built: tuple[str, Kernels]) -> None:
    kern = built[1]
    rng = np.random.default_rng(13)
    fast_seen = set()
    for case in range(40):
        batches = int(rng.integers(1, 4))
        cin = int(rng.choice([1, 3, 4, 7, 8, 16, 30, 64, 65, 129]))
        cout = int(rng.choice([1, 2, 3, 4, 5, 8, 13, 16]))
        act = [Activation.NONE, Activation.RELU, Activation.RELU6][case % 3]
        graph = _fc_graph(rng, batches, cin, cout, per_channel=case % 2 == 0,
                          big_bias=case % 5 == 4, act=act)
        x = rng.integers(-128, 128, (batches, cin)).astype(np.int8)
        got, fast = _w16_call(kern, graph, x)
        fast_seen.add(fast)
        want = reference.run(graph, [x]).outputs[0]
        np.testing.assert_array_equal(got, want, err_msg=f"case {case}: {cin}->{cout}")
        if case % 8 == 0:
            np.testing.assert_array_equal(got, run_tflm(graph, [x])[0].reshape(got.shape))
    assert fast_seen == {True, False}  # both requantizations ran


def test_fc_w16_layout_is_the_documented_index() -> None:
    rng = np.random.default_rng(1)
    w = rng.integers(-128, 128, (6, 10)).astype(np.int8)
    got = fc_w16_weights(w)
    kp = 12
    assert got.dtype == np.int16 and got.size == 8 * kp
    for c in range(8):
        for k in range(kp):
            index = ((c // 4 * kp // 4 + k // 4) * 4 + c % 4) * 4 + (k % 2) * 2 + (k % 4) // 2
            want = w[c, k] if c < 6 and k < 10 else 0
            assert got[index] == want, (c, k)


def _json(tmp_path: Path, board: str, optimize: str = "speed") -> dict:
    out = tmp_path / f"{board}-{optimize}"
    get_backend("compiled").convert(read_model(AD01), load_board(board), out,
                                    optimize=optimize)
    return json.loads((out / "model.json").read_text())


@pytest.mark.skipif(not AD01.is_file(), reason="shared models absent")
def test_int16_weights_chosen_under_speed_on_dsp_cores_only(tmp_path: Path) -> None:
    graph = read_model(AD01)
    fcs = [i for i, op in enumerate(graph.ops) if op.kind is OpKind.FULLY_CONNECTED]
    info = _json(tmp_path, "mps2-an386")
    assert [w["op"] for w in info["int16_weights"]] == fcs
    assert all(w["kind"] == "FULLY_CONNECTED" for w in info["int16_weights"])
    extra = sum(w["extra_flash_bytes"] for w in info["int16_weights"])
    assert extra == info["int16_weights_extra_flash_bytes"] > 0
    assert info["linked"] == ["th_fc_s8_w16"]
    size = _json(tmp_path, "mps2-an386", "size")
    assert size["int16_weights"] == [] and "th_fc_s8_w16" not in size["linked"]
    # the widened model holds about twice the weights
    assert info["model_flash_bytes"] - size["model_flash_bytes"] >= extra
    for board in ("host", "mps3-an547"):
        assert _json(tmp_path, board)["int16_weights"] == []


@pytest.mark.skipif(not AD01.is_file(), reason="shared models absent")
def test_int16_weights_dropped_layer_by_layer_when_flash_is_short() -> None:
    graph = read_model(AD01)
    board = load_board("mps2-an386")
    full = generate(graph, board, "ad01")
    plain = generate(graph, board, "ad01", optimize="size")
    extras = sorted(w.extra_flash_bytes for w in full.widened)
    # flash for everything but the two largest widened layers
    need = full.model_flash_bytes - extras[-1] - extras[-2] + 64
    from tinyhost.plan.budget import budget_for

    code = budget_for(board, full.arena_bytes, 0, kernels=full.functions).flash_needed
    small = replace(board, flash=replace(board.flash, size=code + need))
    g = generate(graph, small, "ad01")
    assert len(g.widened) == len(full.widened) - 2
    assert budget_for(small, g.arena_bytes, g.model_flash_bytes, kernels=g.functions).fits
    tiny = replace(board, flash=replace(board.flash, size=code + plain.model_flash_bytes + 64))
    none = generate(graph, tiny, "ad01")
    assert none.widened == ()
    # the extra flash reported is exactly what the widened arrays add
    assert none.model_flash_bytes + sum(extras) == full.model_flash_bytes


@pytest.mark.parametrize(("model", "widened"), [("ad01_int8", 10), ("kws_ref_model", 5),
                                               ("pretrainedResnet_quant", 7)])
def test_every_layer_bit_exact_on_qemu_with_int16_weights(model: str, widened: int) -> None:
    path = SHARED_MODELS / "mlperf_tiny" / f"{model}.tflite"
    if not path.is_file():
        pytest.skip("shared models absent")
    graph = read_model(path)
    layers = tuple(op.outputs[0] for op in graph.ops)
    graph = replace(graph, outputs=tuple(dict.fromkeys(layers + graph.outputs)))
    assert len(generate(graph, load_board("mps2-an386"), model).widened) == widened
    rng = np.random.default_rng(7)
    x = [rng.integers(-128, 128, graph.tensors[i].shape).astype(np.int8) for i in graph.inputs]
    report = run_model(graph, "mps2-an386", [x], backend="compiled",
                       work_dir=BUILD / f"{model}-layers")
    expected = reference.run(graph, x).outputs
    for t, got, want in zip(graph.outputs, report.runs[0].outputs, expected, strict=True):
        np.testing.assert_array_equal(got, np.asarray(want).reshape(got.shape),
                                      err_msg=graph.tensors[t].name)

def _pointwise_graph(rng: np.random.Generator, shape: tuple[int, int, int, int], cout: int,
                     act: Activation, big_bias: bool) -> Graph:
    n, h, w_, cin = shape
    in_scale, out_scale = float(2.0 ** rng.uniform(-8, -2)), float(2.0 ** rng.uniform(-6, 0))
    w_scale = (2.0 ** rng.uniform(-9, -5, cout)).astype(np.float32)
    w = rng.integers(-127, 128, (cout, 1, 1, cin)).astype(np.int8)
    bias = rng.integers(-(1 << 14), 1 << 14, cout).astype(np.int32)
    if big_bias:  # near-dead channels: the table's fast form not exact for them
        for c in rng.choice(cout, size=min(cout, 3), replace=False):
            bias[c] = int(rng.choice([-1, 1])) * ((1 << 30) + 7)
    ts = [Tensor("x", shape, I8, quant=q(in_scale, int(rng.integers(-128, 128)))),
          Tensor("w", (cout, 1, 1, cin), I8, data=w, quant=q(w_scale, 0)),
          Tensor("b", (cout,), I32, data=bias, quant=q(w_scale * np.float32(in_scale), 0)),
          Tensor("y", (n, h, w_, cout), I8, quant=q(out_scale, int(rng.integers(-128, 128))))]
    options = Conv2DOptions(Padding.VALID, 1, 1, activation=act)
    return single_op_graph(OpKind.CONV_2D, options, ts, [0, 1, 2], [3])


def _conv_w16_call(kern: Kernels, graph: Graph, x: np.ndarray) -> tuple[int, np.ndarray]:
    (call,) = lower_graph(graph, "compiled")
    p = call.params
    w, bias = graph.tensors[1].data, graph.tensors[2].data
    n, h, w_, cin = x.shape
    cout = w.shape[0]
    params = i32(p.input_offset, p.output_offset, 1, 1, 0, 0, 1, 1, p.act_min, p.act_max)
    dims_in, dims_f, dims_out = i32(n, h, w_, cin), i32(cout, 1, 1, cin), i32(n, h, w_, cout)
    scratch, _ = kern.call("th_conv_1x1_s8_scratch_size", buf(params), buf(dims_in),
                           buf(dims_f), buf(dims_out))
    status, bufs = kern.call(
        "th_conv_1x1_s8_w16", ("ctx", 10), buf(params), ("ptrs", [11, 12]), buf(dims_in),
        buf(x), buf(dims_f), buf(w16_weights(w, CONV_W16_BLOCK)), buf(bias), buf(dims_out),
        out(n * h * w_ * cout), ("data", bytes(max(scratch, 1))),
        ("data", call.arrays["multiplier"].astype(np.int32).tobytes()),
        ("data", call.arrays["shift"].astype(np.int32).tobytes()))
    return status, np.frombuffer(bufs[9], np.int8).reshape(n, h, w_, cout)


def test_conv_1x1_w16_kernel_matches_reference_and_tflm(built: tuple[str, Kernels]) -> None:
    variant, kern = built
    rng = np.random.default_rng(31)
    for case in range(24):
        n = int(rng.integers(1, 3))
        h, w_ = int(rng.integers(1, 5)), int(rng.integers(1, 6))
        cin = int(rng.choice([4, 12, 16, 64]))
        cout = int(rng.choice([4, 5, 7, 16, 33, 64, 70, 130]))
        act = [Activation.NONE, Activation.NONE, Activation.RELU6][case % 3]
        graph = _pointwise_graph(rng, (n, h, w_, cin), cout, act, big_bias=case % 4 == 3)
        x = rng.integers(-128, 128, (n, h, w_, cin)).astype(np.int8)
        status, got = _conv_w16_call(kern, graph, x)
        if variant == "portable":
            assert status != 0  # TH_ERR_UNSUPPORTED: int16 weights are for DSP builds
            return
        assert status == 0
        want = reference.run(graph, [x]).outputs[0]
        np.testing.assert_array_equal(got, want, err_msg=f"case {case}: {cin}->{cout}")
        if case % 6 == 0:
            np.testing.assert_array_equal(got, run_tflm(graph, [x])[0].reshape(got.shape))


def _conv3x3_graph(rng: np.random.Generator, shape: tuple[int, int, int, int], cout: int,
                   stride: int, padding: Padding, act: Activation, big_bias: bool) -> Graph:
    n, h, w_, cin = shape
    in_scale, out_scale = float(2.0 ** rng.uniform(-8, -2)), float(2.0 ** rng.uniform(-6, 0))
    w_scale = (2.0 ** rng.uniform(-10, -6, cout)).astype(np.float32)
    w = rng.integers(-127, 128, (cout, 3, 3, cin)).astype(np.int8)
    bias = rng.integers(-(1 << 14), 1 << 14, cout).astype(np.int32)
    if big_bias:
        bias[int(rng.integers(cout))] = int(rng.choice([-1, 1])) * ((1 << 30) + 7)
    pads = compute_window_padding(padding, h, w_, 3, 3, stride, stride)
    ts = [Tensor("x", shape, I8, quant=q(in_scale, int(rng.integers(-128, 128)))),
          Tensor("w", (cout, 3, 3, cin), I8, data=w, quant=q(w_scale, 0)),
          Tensor("b", (cout,), I32, data=bias, quant=q(w_scale * np.float32(in_scale), 0)),
          Tensor("y", (n, pads.out_h, pads.out_w, cout), I8,
                 quant=q(out_scale, int(rng.integers(-128, 128))))]
    options = Conv2DOptions(padding, stride, stride, activation=act)
    return single_op_graph(OpKind.CONV_2D, options, ts, [0, 1, 2], [3])


def test_conv_3x3_w16_kernel_matches_reference_and_tflm(built: tuple[str, Kernels]) -> None:
    variant, kern = built
    rng = np.random.default_rng(47)
    tables = set()
    for case in range(24):
        n = int(rng.integers(1, 3))
        h, w_ = int(rng.integers(3, 8)), int(rng.integers(3, 8))
        cin = int(rng.choice([4, 5, 8, 16, 17]))
        cout = int(rng.choice([4, 5, 16, 33]))
        stride = int(rng.integers(1, 3))
        padding = [Padding.SAME, Padding.VALID][case % 2]
        act = [Activation.NONE, Activation.RELU, Activation.RELU6][case % 3]
        graph = _conv3x3_graph(rng, (n, h, w_, cin), cout, stride, padding, act,
                               big_bias=case % 5 == 4)
        x = rng.integers(-128, 128, (n, h, w_, cin)).astype(np.int8)
        (call,) = lower_graph(graph, "compiled")
        p = call.params
        mult, shift = call.arrays["multiplier"], call.arrays["shift"]
        w, bias = graph.tensors[1].data, graph.tensors[2].data
        table = conv_rq_table(bias, mult, shift, p.output_offset, 9 * cin, p.act_min, p.act_max)
        tables.add(table is not None)
        out_shape = graph.tensors[3].shape
        params = i32(p.input_offset, p.output_offset, stride, stride, p.pad_top, p.pad_left, 1,
                     1, p.act_min, p.act_max)
        dims = (i32(*x.shape), i32(cout, 3, 3, cin), i32(*out_shape))
        scratch, _ = kern.call("th_conv_3x3_s8_scratch_size", buf(params), *map(buf, dims))
        rq = ("null", None) if table is None else buf(table.astype(np.int32))
        status, bufs = kern.call(
            "th_conv_3x3_s8_w16", ("ctx", 11), buf(params), ("ptrs", [12, 13]), buf(dims[0]),
            buf(x), buf(dims[1]), buf(w16_weights(w, CONV_W16_BLOCK)), buf(bias), buf(dims[2]),
            out(int(np.prod(out_shape))), rq, ("data", bytes(max(scratch, 1))),
            ("data", mult.astype(np.int32).tobytes()), ("data", shift.astype(np.int32).tobytes()))
        if variant == "portable":
            assert status != 0  # TH_ERR_UNSUPPORTED: int16 weights are for DSP builds
            return
        assert status == 0
        got = np.frombuffer(bufs[9], np.int8).reshape(out_shape)
        want = reference.run(graph, [x]).outputs[0]
        np.testing.assert_array_equal(got, want, err_msg=f"case {case}: {cin}->{cout}")
        if case % 6 == 0:
            np.testing.assert_array_equal(got, run_tflm(graph, [x])[0].reshape(got.shape))
    assert tables == {True, False}  # with and without the host's table
