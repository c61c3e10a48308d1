"""Post-training quantization: ranges, weights, folding, graph rules, errors, CLI, and every
quantized model bit-exact in TFLite Micro (every tensor)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from oracle import tflm_run_all_tensors
from paths import PROJECT_MODELS, shared_model
from tinyhost import reference
from tinyhost.cli.quantize import RANDOM_WARNING, add_parser, quantize_for_convert
from tinyhost.errors import InputDataError, TinyhostError, UnsupportedModelError
from tinyhost.ir import (
    Activation,
    ConcatenationOptions,
    Conv2DOptions,
    FullyConnectedOptions,
    FusedActivationOptions,
    Graph,
    NoOptions,
    Op,
    OpKind,
    Padding,
    Pool2DOptions,
    ReshapeOptions,
    SoftmaxOptions,
    Tensor,
)
from tinyhost.quantize import (
    QuantizeOptions,
    collect_statistics,
    fold_float_patterns,
    load_calibration_data,
    quantize_graph,
    quantize_model,
    random_calibration_data,
)
from tinyhost.quantize.ranges import (
    Histogram,
    choose_quant_params,
    histogram_of,
    mse_range,
    percentile_range,
    quantization_mse,
)
from tinyhost.quantize.weights import dequantize_weights, quantize_bias, quantize_weights
from tinyhost.tflite import read_model
from tinyhost.tflite.reader import read_model_bytes
from tinyhost.tflite.writer import write_model

F32 = np.dtype(np.float32)


def assert_tflm_bit_exact(graph: Graph, inputs: list[np.ndarray]) -> None:
    """The written model runs in TFLite Micro and every non-constant tensor equals the
    reference's, bit for bit; the graph's own inputs are fed to both."""
    data = write_model(graph)
    ours = reference.run(graph, inputs, keep_intermediates=True)
    fed = [ours.tensors[i] for i in graph.inputs]
    _, theirs = tflm_run_all_tensors(data, fed)
    checked = 0
    for index, value in ours.tensors.items():
        if graph.tensors[index].is_constant:
            continue
        expected = np.asarray(theirs[index]).reshape(-1)
        assert np.array_equal(np.asarray(value).reshape(-1), expected), (
            f"tensor {index} '{graph.tensors[index].name}' differs from TFLite Micro"
        )
        checked += 1
    assert checked >= len(graph.ops)


def _int8_inputs(graph: Graph, samples: list[list[np.ndarray]]) -> list[np.ndarray]:
    """The first sample, as the quantized graph takes it (quantized if its input is int8)."""
    return reference.prepare_inputs(graph, samples[0])


# -- ranges ----------------------------------------------------------------------------------


@pytest.mark.parametrize("lo, hi", [(-1.0, 1.0), (0.0, 6.0), (-3.7, 0.2), (0.3, 2.0),
                                    (-5.0, -1.0), (0.0, 0.0), (-0.001, 1000.0)])
def test_quant_params_represent_zero_and_cover_range(lo: float, hi: float) -> None:
    p = choose_quant_params(lo, hi)
    assert p.scale.dtype == np.float32 and p.scale > 0
    assert -128 <= p.zero_point <= 127
    # Real 0 maps to an integer exactly: the dequantized zero point is 0.
    assert p.dequantize(p.quantize(np.array([0.0])))[0] == 0.0
    lo0, hi0 = min(lo, 0.0), max(hi, 0.0)
    if hi0 - lo0 > 1e-2:
        assert abs(float(p.scale) - (hi0 - lo0) / 255) <= 1e-6 * (hi0 - lo0)
        # The ends are representable to within one step of the nudged grid.
        for v in (lo0, hi0):
            assert abs(p.dequantize(p.quantize(np.array([v])))[0] - v) <= float(p.scale) * 1.01


def test_quant_params_match_tflite_formula() -> None:
    # [-1, 3]: scale 4/255, zero point -128 - (-1)/scale = -64.25 -> -64.
    p = choose_quant_params(-1.0, 3.0)
    assert p.scale == np.float32(4 / 255)
    assert p.zero_point == -64
    # [0, 1]: the converter's usual image input, 1/255 and -128.
    p = choose_quant_params(0.0, 1.0)
    assert (p.scale, p.zero_point) == (np.float32(1 / 255), -128)


def test_percentile_clips_the_tail_only() -> None:
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.uniform(0, 1, 100_000), [50.0]])
    h = histogram_of(values, 0.0, 50.0)
    lo, hi = percentile_range(h, 99.9)
    assert lo == 0.0
    assert 0.95 < hi < 1.1


def test_mse_range_clips_outliers_and_beats_minmax() -> None:
    rng = np.random.default_rng(1)
    # Two outliers among a million: rounding the bulk on their range costs more than
    # clipping them (2 * 15**2 vs 1e6 * (40/255)**2 / 12).
    values = np.concatenate([rng.standard_normal(1_000_000), [20.0, -20.0]])
    h = histogram_of(values, -20.0, 20.0)
    lo, hi = mse_range(h)
    assert -10 < lo < -2 and 2 < hi < 10
    clipped = quantization_mse(h, choose_quant_params(lo, hi))
    full = quantization_mse(h, choose_quant_params(-20.0, 20.0))
    assert clipped < full / 2


def test_mse_range_keeps_the_full_range_of_a_uniform_tensor() -> None:
    values = np.linspace(0.0, 2.0, 50_000)
    lo, hi = mse_range(histogram_of(values, 0.0, 2.0))
    assert lo == 0.0 and hi == pytest.approx(2.0)


def test_exact_zeros_cost_nothing_in_mse() -> None:
    h = Histogram(np.array([10.0, 0.0, 0.0, 1.0]), np.array([0.0, 1.0, 2.0, 3.0, 4.0]), 10.0)
    p = choose_quant_params(0.0, 4.0)
    # Only the one value at 3.5 counts; the ten zeros are exactly representable.
    error = 3.5 - p.dequantize(p.quantize(np.array([3.5])))[0]
    assert quantization_mse(h, p) == pytest.approx(error * error)


# -- weights and biases ----------------------------------------------------------------------


def test_per_channel_weights_symmetric_in_range() -> None:
    rng = np.random.default_rng(2)
    w = rng.standard_normal((6, 3, 3, 4)) * np.array([0.01, 0.1, 1, 10, 100, 0])[:, None, None,
                                                                                 None]
    qw = quantize_weights(w, axis=0)
    assert qw.values.dtype == np.int8
    assert qw.values.min() >= -127 and qw.values.max() <= 127
    assert np.all(qw.quant.zero_point == 0) and qw.quant.axis == 0 and qw.quant.scale.size == 6
    assert np.all(qw.quant.scale > 0)
    # Each non-zero channel uses its full range and rounds to within half a step.
    assert np.all(np.abs(qw.values[:5]).reshape(5, -1).max(axis=1) == 127)
    err = np.abs(dequantize_weights(qw) - w)
    assert np.all(err <= qw.quant.scale.reshape(-1, 1, 1, 1) * 0.5 + 1e-12)
    assert np.all(qw.values[5] == 0)


def test_depthwise_axis_and_per_tensor() -> None:
    rng = np.random.default_rng(3)
    w = rng.standard_normal((1, 3, 3, 8))
    qw = quantize_weights(w, axis=3)
    assert qw.quant.axis == 3 and qw.quant.scale.size == 8
    assert np.allclose(qw.quant.scale, np.abs(w).reshape(-1, 8).max(axis=0) / 127, rtol=1e-6)
    pt = quantize_weights(w, axis=None)
    assert pt.quant.scale.size == 1 and not pt.quant.per_channel
    assert pt.quant.scale[0] == pytest.approx(np.abs(w).max() / 127, rel=1e-6)


def test_bias_int32_at_input_times_weight_scale() -> None:
    bias = np.array([0.5, -1.25, 3.0])
    w_scales = np.array([0.01, 0.02, 0.04], np.float32)
    q, quant = quantize_bias(bias, 0.05, w_scales, 3)
    assert q.dtype == np.int32 and np.all(quant.zero_point == 0)
    expected_scale = np.float32(0.05) * w_scales.astype(np.float64)
    assert np.allclose(quant.scale, expected_scale, rtol=1e-7)
    assert np.array_equal(q, np.round(bias / expected_scale).astype(np.int32))


def test_weight_scale_grows_so_the_bias_fits_int32() -> None:
    w = np.full((1, 4), 1e-9)
    bias = np.array([1000.0])
    qw = quantize_weights(w, 0, bias, input_scale=1e-3)
    q, _ = quantize_bias(bias, 1e-3, qw.quant.scale, 1)
    assert abs(int(q[0])) < 2**31 - 1
    assert int(q[0]) * float(np.float32(1e-3)) * float(qw.quant.scale[0]) == pytest.approx(
        1000.0, rel=1e-6)


# -- folding ---------------------------------------------------------------------------------


def _t(name: str, shape, data=None, dtype=F32) -> Tensor:
    return Tensor(name=name, shape=tuple(shape), dtype=np.dtype(dtype),
                  data=None if data is None else np.asarray(data, dtype))


def _conv_bn_relu_graph() -> Graph:
    """conv (no activation) -> MUL per-channel -> ADD per-channel -> RELU -> FC -> SOFTMAX."""
    rng = np.random.default_rng(4)
    tensors = [
        _t("x", (1, 6, 6, 2)),
        _t("w", (4, 3, 3, 2), rng.standard_normal((4, 3, 3, 2)) * 0.5),
        _t("b", (4,), rng.standard_normal(4) * 0.1),
        _t("conv", (1, 6, 6, 4)),
        _t("gamma", (4,), [0.5, -1.5, 2.0, 0.25]),
        _t("scaled", (1, 6, 6, 4)),
        _t("beta", (1, 1, 1, 4), [[[[0.1, 0.2, -0.3, 0.4]]]]),
        _t("shifted", (1, 6, 6, 4)),
        _t("relu", (1, 6, 6, 4)),
        _t("flat_shape", (2,), [1, 144], np.int32),
        _t("flat", (1, 144)),
        _t("fc_w", (3, 144), rng.standard_normal((3, 144)) * 0.1),
        _t("fc_b", (3,), [0.0, 0.1, -0.1]),
        _t("logits", (1, 3)),
        _t("probs", (1, 3)),
    ]
    ops = [
        Op(OpKind.CONV_2D, (0, 1, 2), (3,), Conv2DOptions(Padding.SAME, 1, 1)),
        Op(OpKind.MUL, (3, 4), (5,), FusedActivationOptions()),
        Op(OpKind.ADD, (6, 5), (7,), FusedActivationOptions()),
        Op(OpKind.RELU, (7,), (8,), NoOptions()),
        Op(OpKind.RESHAPE, (8, 9), (10,), ReshapeOptions()),
        Op(OpKind.FULLY_CONNECTED, (10, 11, 12), (13,), FullyConnectedOptions()),
        Op(OpKind.SOFTMAX, (13,), (14,), SoftmaxOptions()),
    ]
    return Graph(tensors=tuple(tensors), ops=tuple(ops), inputs=(0,), outputs=(14,),
                 source="<conv_bn_relu>")


def test_fold_batchnorm_and_relu_into_conv() -> None:
    graph = _conv_bn_relu_graph()
    folded = fold_float_patterns(graph)
    kinds = [op.kind for op in folded.ops]
    assert kinds == [OpKind.CONV_2D, OpKind.RESHAPE, OpKind.FULLY_CONNECTED, OpKind.SOFTMAX]
    assert folded.ops[0].options.activation is Activation.RELU
    assert len(folded.tensors) == len(graph.tensors) - 5  # gamma, beta, 3 intermediates
    # The input graph is untouched (pure function).
    assert len(graph.ops) == 7
    x = np.random.default_rng(5).standard_normal((1, 6, 6, 2)).astype(np.float32)
    before = reference.run(graph, [x], keep_intermediates=True)
    after = reference.run(folded, [x], keep_intermediates=True)
    np.testing.assert_allclose(after.outputs[0], before.outputs[0], rtol=1e-5, atol=1e-6)
    relu_before = before.tensors[8]
    relu_after = after.tensors[folded.ops[0].outputs[0]]
    np.testing.assert_allclose(relu_after, relu_before, rtol=1e-5, atol=1e-5)


def test_fold_leaves_shared_intermediates_alone() -> None:
    graph = _conv_bn_relu_graph()
    # Make the conv output a graph output too: MUL can no longer be folded into the conv.
    graph = dataclasses.replace(graph, outputs=(14, 3))
    folded = fold_float_patterns(graph)
    assert [op.kind for op in folded.ops][:2] == [OpKind.CONV_2D, OpKind.MUL]


def test_quantized_folded_graph_is_bit_exact_and_accurate() -> None:
    graph = _conv_bn_relu_graph()
    samples = random_calibration_data(graph, 16)
    q = quantize_model(graph, samples)
    assert [op.kind for op in q.ops] == [OpKind.CONV_2D, OpKind.RESHAPE,
                                         OpKind.FULLY_CONNECTED, OpKind.SOFTMAX]
    assert_tflm_bit_exact(q, _int8_inputs(q, samples))
    for sample in samples[:4]:
        expected = reference.run(graph, sample).outputs[0]
        got = reference.run(q, sample).outputs[0].astype(np.float64)
        probs = (got + 128) / 256
        assert np.abs(probs - expected).max() < 0.05


# -- graph-level rules -----------------------------------------------------------------------


def _branches_graph() -> Graph:
    """Two branches, LOGISTIC and TANH (fixed output quantizations), concatenated, then PAD,
    MAX_POOL and RESHAPE, plus a concat of two convs: exercises joint quantization and the
    requantize that two fixed choices force."""
    rng = np.random.default_rng(6)
    tensors = [
        _t("x", (1, 4, 4, 3)),
        _t("w1", (4, 1, 1, 3), rng.standard_normal((4, 1, 1, 3))),
        _t("b1", (4,), rng.standard_normal(4) * 0.1),
        _t("c1", (1, 4, 4, 4)),
        _t("w2", (2, 3, 3, 3), rng.standard_normal((2, 3, 3, 3)) * 3),
        _t("c2", (1, 4, 4, 2)),
        _t("cat", (1, 4, 4, 6)),
        _t("sig", (1, 4, 4, 6)),
        _t("th", (1, 4, 4, 6)),
        _t("cat2", (1, 4, 4, 12)),
        _t("pads", (4, 2), [[0, 0], [1, 1], [1, 1], [0, 0]], np.int32),
        _t("padded", (1, 6, 6, 12)),
        _t("pooled", (1, 3, 3, 12)),
    ]
    ops = [
        Op(OpKind.CONV_2D, (0, 1, 2), (3,), Conv2DOptions(Padding.VALID, 1, 1)),
        Op(OpKind.CONV_2D, (0, 4, None), (5,), Conv2DOptions(Padding.SAME, 1, 1)),
        Op(OpKind.CONCATENATION, (3, 5), (6,), ConcatenationOptions(axis=3)),
        Op(OpKind.LOGISTIC, (6,), (7,), NoOptions()),
        Op(OpKind.TANH, (6,), (8,), NoOptions()),
        Op(OpKind.CONCATENATION, (7, 8), (9,), ConcatenationOptions(axis=-1)),
        Op(OpKind.PAD, (9, 10), (11,), NoOptions()),
        Op(OpKind.MAX_POOL_2D, (11,), (12,), Pool2DOptions(Padding.VALID, 2, 2, 2, 2)),
    ]
    return Graph(tensors=tuple(tensors), ops=tuple(ops), inputs=(0,), outputs=(12,),
                 source="<branches>")


def test_joint_quantization_and_fixed_outputs() -> None:
    graph = _branches_graph()
    samples = random_calibration_data(graph, 8)
    q = quantize_model(graph, samples)
    by_name = {t.name: t for t in q.tensors}
    for a, b in [("c1", "cat"), ("c2", "cat"), ("cat2", "padded"), ("padded", "pooled")]:
        assert by_name[a].quant.equals(by_name[b].quant), (a, b)
    assert (by_name["sig"].quant.scale[0], by_name["sig"].quant.zero_point[0]) == (
        np.float32(1 / 256), -128)
    assert (by_name["th"].quant.scale[0], by_name["th"].quant.zero_point[0]) == (
        np.float32(1 / 128), 0)
    # LOGISTIC's encoding won the concat; TANH's output is requantized into it.
    assert by_name["cat2"].quant.equals(by_name["sig"].quant)
    requantize = [op for op in q.ops if op.kind is OpKind.QUANTIZE]
    assert len(requantize) == 1 and requantize[0].inputs == (q.tensors.index(by_name["th"]),)
    # Bias correction gives the bias-less conv an int32 bias.
    conv2 = q.ops[1]
    assert q.tensors[conv2.inputs[2]].dtype == np.int32
    assert_tflm_bit_exact(q, _int8_inputs(q, samples))


def test_float_io_adds_quantize_and_dequantize() -> None:
    graph = _branches_graph()
    samples = random_calibration_data(graph, 8)
    q = quantize_model(graph, samples, QuantizeOptions(int8_io=False, per_channel=False))
    assert q.ops[0].kind is OpKind.QUANTIZE and q.ops[-1].kind is OpKind.DEQUANTIZE
    assert q.tensors[q.inputs[0]].dtype == F32 and q.tensors[q.outputs[0]].dtype == F32
    assert q.tensors[q.inputs[0]].name == "x" and q.tensors[q.outputs[0]].name == "pooled"
    assert all(not q.tensors[op.inputs[1]].quant.per_channel
               for op in q.ops if op.kind is OpKind.CONV_2D)
    assert_tflm_bit_exact(q, samples[0])


def test_round_trip_gives_the_same_ir() -> None:
    graph = read_model(PROJECT_MODELS / "mobilenet_block_residual_float.tflite")
    for options in (QuantizeOptions(), QuantizeOptions(method="mse", per_channel=False,
                                                       int8_io=False)):
        q = quantize_model(graph, random_calibration_data(graph, 4), options)
        data = write_model(q)
        back = read_model_bytes(data)
        assert back.equals(q)
        assert write_model(back) == data


# -- the project's float models (every op kind with an int8 form) -----------------------------

PROJECT_FLOAT = ["activations_float", "mobilenet_block_residual_float", "kws_dscnn_float",
                 "conv_same_stride2_relu6_float"]


@pytest.mark.parametrize("method", ["minmax", "percentile", "mse"])
@pytest.mark.parametrize("stem", PROJECT_FLOAT)
def test_project_float_models_bit_exact(stem: str, method: str) -> None:
    graph = read_model(PROJECT_MODELS / f"{stem}.tflite")
    samples = random_calibration_data(graph, 8)
    q = quantize_model(graph, samples, QuantizeOptions(method=method))
    assert all(t.dtype in (np.int8, np.int32) for t in q.tensors)
    assert_tflm_bit_exact(q, _int8_inputs(q, samples))
    # Dequantized outputs track the float model to within a few steps of their scale.
    ours = reference.run(q, samples[1]).outputs
    floats = reference.run(graph, samples[1]).outputs
    for index, got, want in zip(q.outputs, ours, floats):
        quant = q.tensors[index].quant
        real = (got.astype(np.float64) - quant.zero_point[0]) * quant.scale[0]
        spread = float(np.ptp(want)) or 1.0
        assert np.mean(np.abs(real - want)) < 0.05 * spread + 2 * quant.scale[0], stem


def test_hello_world_float_bit_exact() -> None:
    graph = read_model(shared_model("tflm/hello_world_float.tflite"))
    samples = [[np.array([[x]], np.float32)] for x in np.linspace(0, 2 * np.pi, 32)]
    q = quantize_model(graph, samples, QuantizeOptions(method="mse"))
    for sample in samples[::8]:
        assert_tflm_bit_exact(q, reference.prepare_inputs(q, sample))
    got = [reference.run(q, s).outputs[0] for s in samples]
    quant = q.tensors[q.outputs[0]].quant
    real = (np.concatenate(got).astype(np.float64) - quant.zero_point[0]) * quant.scale[0]
    assert np.abs(real.reshape(-1) - np.sin(np.linspace(0, 2 * np.pi, 32))).max() < 0.2


# -- calibration data and errors -------------------------------------------------------------


def _digits() -> Graph:
    return read_model(PROJECT_MODELS / "digits_float.tflite")


def test_calibration_formats(tmp_path: Path) -> None:
    graph = _digits()
    x = np.random.default_rng(7).random((5, 8, 8, 1)).astype(np.float32)
    np.save(tmp_path / "a.npy", x)
    np.savez(tmp_path / "b.npz", image=x, labels=np.arange(5))
    folder = tmp_path / "folder"
    folder.mkdir()
    np.save(folder / "0.npy", x[0])  # one sample without the batch dim
    np.save(folder / "1.npy", x[1:2])  # one sample with it
    np.save(folder / "2.npy", x[2:])  # a batch
    for spec in (tmp_path / "a.npy", tmp_path / "b.npz", f"{tmp_path / 'b.npz'}:image", folder):
        samples = load_calibration_data(spec, graph)
        assert len(samples) == 5, spec
        assert samples[3][0].shape == (1, 8, 8, 1)
        np.testing.assert_array_equal(samples[3][0][0], x[3])


@pytest.mark.parametrize(
    "array, message",
    [
        (np.zeros((4, 8, 8), np.float32), "does not fit the model input"),
        (np.zeros((4, 8, 8, 3), np.float32), "does not fit the model input"),
        (np.zeros((4, 8, 8, 1), np.uint8), "must be floating point"),
        (np.full((2, 8, 8, 1), np.nan, np.float32), "NaN"),
        (np.zeros((0, 8, 8, 1), np.float32), "no calibration samples"),
    ],
)
def test_calibration_data_errors(tmp_path: Path, array: np.ndarray, message: str) -> None:
    path = tmp_path / "bad.npy"
    np.save(path, array)
    with pytest.raises(InputDataError, match=message) as info:
        load_calibration_data(path, _digits())
    assert "bad.npy" in str(info.value)


def test_calibration_npz_ambiguity_and_missing(tmp_path: Path) -> None:
    graph = _digits()
    np.savez(tmp_path / "two.npz", a=np.zeros((2, 8, 8, 1), np.float32),
             b=np.ones((2, 8, 8, 1), np.float32))
    with pytest.raises(InputDataError, match="FILE.npz:KEY"):
        load_calibration_data(tmp_path / "two.npz", graph)
    with pytest.raises(InputDataError, match="no array 'c'"):
        load_calibration_data(f"{tmp_path / 'two.npz'}:c", graph)
    with pytest.raises(InputDataError, match="no such"):
        load_calibration_data(tmp_path / "absent.npy", graph)
    # The digits archive picks calib_x among calib_x / test_x by name.
    samples = load_calibration_data(PROJECT_MODELS / "digits_data.npz", graph)
    assert len(samples) == 200


def test_already_quantized_model_is_refused() -> None:
    graph = read_model(PROJECT_MODELS / "digits_tf_int8.tflite")
    with pytest.raises(UnsupportedModelError, match="already quantized"):
        quantize_model(graph, [[np.zeros((1, 8, 8, 1), np.float32)]])


def test_ops_without_int8_kernel_are_listed() -> None:
    graph = read_model(PROJECT_MODELS / "unsupported" / "exp_gather_sqrt_neg_float.tflite")
    with pytest.raises(UnsupportedModelError) as info:
        quantize_model(graph, random_calibration_data(graph, 2))
    message = str(info.value)
    for name in ("EXP", "SQRT", "NEG"):  # TFLite Micro has float32 kernels only
        op = {"EXP": 0, "SQRT": 3, "NEG": 4}[name]
        assert f"op {op} ({name}): TFLite Micro runs {name} in float32 only" in message
    assert "GATHER" not in message  # quantizable since issue 17
    assert "exp_gather_sqrt_neg_float.tflite" in message


def test_stateful_ops_are_refused_with_the_converter_route() -> None:
    """SVDF and LSTM run in int8, but their int16 state scales need TFLite's converter."""
    f32 = np.dtype(np.float32)
    tensors = (Tensor("x", (1, 4), f32), Tensor("y", (1, 4), f32), Tensor("z", (1, 4), f32))
    graph = Graph(tensors=tensors,
                  ops=(Op(OpKind.SVDF, (0,), (1,), NoOptions()),
                       Op(OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM, (1,), (2,), NoOptions())),
                  inputs=(0,), outputs=(2,), source="seq.tflite")
    with pytest.raises(UnsupportedModelError) as info:
        quantize_model(graph, random_calibration_data(graph, 2))
    message = str(info.value)
    assert "seq.tflite" in message
    for where in ("op 0 (SVDF)", "op 1 (UNIDIRECTIONAL_SEQUENCE_LSTM)"):
        assert f"{where}: " in message
    assert message.count("TFLite converter") == 2
    assert "has no int8 kernel" not in message


def test_fused_tanh_activation_is_refused() -> None:
    graph = _conv_bn_relu_graph()
    op = graph.ops[0]
    bad = dataclasses.replace(op, options=dataclasses.replace(op.options,
                                                              activation=Activation.TANH))
    graph = dataclasses.replace(graph, ops=(bad, *graph.ops[1:]))
    with pytest.raises(UnsupportedModelError, match=r"op 0 \(CONV_2D\): fused TANH"):
        quantize_model(graph, random_calibration_data(graph, 2))


def test_statistics_from_another_graph_are_refused() -> None:
    graph = _digits()
    stats = collect_statistics(graph, random_calibration_data(graph, 2), progress=False)
    other = read_model(PROJECT_MODELS / "kws_dscnn_float.tflite")
    with pytest.raises(InputDataError, match="another graph"):
        quantize_graph(other, stats)


# -- command line ----------------------------------------------------------------------------


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tinyhost")
    add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_cli_quantize_digits(tmp_path: Path, capsys) -> None:
    out = tmp_path / "digits_int8.tflite"
    args = _parse(["quantize", str(PROJECT_MODELS / "digits_float.tflite"), "--calib",
                   f"{PROJECT_MODELS / 'digits_data.npz'}:calib_x", "-o", str(out),
                   "--method", "percentile", "--float-io", "--per-tensor"])
    assert args.func(args) == 0
    assert "200 calibration samples" in capsys.readouterr().out
    q = read_model(out)
    assert q.ops[0].kind is OpKind.QUANTIZE and q.ops[-1].kind is OpKind.DEQUANTIZE
    x = np.load(PROJECT_MODELS / "digits_data.npz")["test_x"][:1]
    assert_tflm_bit_exact(q, [x])


def test_cli_errors_are_tinyhost_errors(tmp_path: Path) -> None:
    args = _parse(["quantize", str(PROJECT_MODELS / "digits_tf_int8.tflite"), "--calib",
                   "random", "-o", str(tmp_path / "x.tflite")])
    with pytest.raises(TinyhostError, match="already quantized"):
        args.func(args)
    assert not (tmp_path / "x.tflite").exists()


def test_quantize_for_convert_requires_calib_and_warns_on_random() -> None:
    graph = read_model(PROJECT_MODELS / "conv_same_stride2_relu6_float.tflite")
    with pytest.raises(InputDataError, match="--calib"):
        quantize_for_convert(graph, None)
    warnings: list[str] = []
    q = quantize_for_convert(graph, "random", warn=warnings.append, progress=False)
    assert warnings == [RANDOM_WARNING]
    assert q.tensors[q.inputs[0]].dtype == np.int8
    samples = random_calibration_data(graph, 2)
    assert_tflm_bit_exact(q, _int8_inputs(q, samples))
