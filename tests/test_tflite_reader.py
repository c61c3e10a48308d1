"""The .tflite reader: on the shared models (facts from models/README.md and an independent
parse with TFLite Micro's generated object API) and on small graphs written in memory."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import flatbuffers
import numpy as np
import pytest
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

from paths import model_params, shared_model, shared_model_paths
from tinyhost.errors import ModelFormatError
from tinyhost.ir import (
    Activation,
    ArgMinMaxOptions,
    BatchMatMulOptions,
    BlockSizeOptions,
    ConcatenationOptions,
    Conv2DOptions,
    CumsumOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    FusedActivationOptions,
    GatherOptions,
    Graph,
    LeakyReluOptions,
    NoOptions,
    Op,
    OpKind,
    OpOptions,
    PackOptions,
    Padding,
    Pool2DOptions,
    Quantization,
    ReducerOptions,
    ReshapeOptions,
    ResizeOptions,
    SequenceLSTMOptions,
    SoftmaxOptions,
    SplitOptions,
    SqueezeOptions,
    StridedSliceOptions,
    SVDFOptions,
    Tensor,
)
from tinyhost.tflite import read_model, read_model_bytes
from tinyhost.tflite.writer import write_model

I8, F32, I32 = np.dtype(np.int8), np.dtype(np.float32), np.dtype(np.int32)

# models/README.md: ops with counts, inputs and outputs as (dtype, shape).
_CONV_KWS = {"CONV_2D": 5, "DEPTHWISE_CONV_2D": 4, "AVERAGE_POOL_2D": 1, "RESHAPE": 1,
             "FULLY_CONNECTED": 1, "SOFTMAX": 1}
_VWW = {"CONV_2D": 14, "DEPTHWISE_CONV_2D": 13, "AVERAGE_POOL_2D": 1, "RESHAPE": 1,
        "FULLY_CONNECTED": 1, "SOFTMAX": 1}
_RESNET = {"CONV_2D": 9, "ADD": 3, "AVERAGE_POOL_2D": 1, "RESHAPE": 1, "FULLY_CONNECTED": 1,
           "SOFTMAX": 1}
README_FACTS = {
    "mlperf_tiny/kws_ref_model.tflite": (_CONV_KWS, [(I8, (1, 49, 10, 1))], [(I8, (1, 12))]),
    "mlperf_tiny/kws_ref_model_float32.tflite": (
        _CONV_KWS, [(F32, (1, 49, 10, 1))], [(F32, (1, 12))]
    ),
    "mlperf_tiny/vww_96_int8.tflite": (_VWW, [(I8, (1, 96, 96, 3))], [(I8, (1, 2))]),
    "mlperf_tiny/vww_96_float.tflite": (_VWW, [(F32, (1, 96, 96, 3))], [(F32, (1, 2))]),
    "mlperf_tiny/pretrainedResnet_quant.tflite": (
        _RESNET, [(I8, (1, 32, 32, 3))], [(I8, (1, 10))]
    ),
    "mlperf_tiny/pretrainedResnet.tflite": (_RESNET, [(F32, (1, 32, 32, 3))], [(F32, (1, 10))]),
    "mlperf_tiny/ad01_int8.tflite": ({"FULLY_CONNECTED": 10}, [(I8, (1, 640))], [(I8, (1, 640))]),
    "mlperf_tiny/ad01_fp32.tflite": (
        {"FULLY_CONNECTED": 10}, [(F32, (1, 640))], [(F32, (1, 640))]
    ),
    "tflm/hello_world_int8.tflite": ({"FULLY_CONNECTED": 3}, [(I8, (1, 1))], [(I8, (1, 1))]),
    "tflm/hello_world_float.tflite": ({"FULLY_CONNECTED": 3}, [(F32, (1, 1))], [(F32, (1, 1))]),
    "tflm/micro_speech_quantized.tflite": (
        {"RESHAPE": 1, "DEPTHWISE_CONV_2D": 1, "FULLY_CONNECTED": 1, "SOFTMAX": 1},
        [(I8, (1, 1960))],
        [(I8, (1, 4))],
    ),
    "tflm/network_model.tflite": (
        {"DEPTHWISE_CONV_2D": 1}, [(I8, (1, 8, 8, 16))], [(I8, (1, 4, 4, 16))]
    ),
    "tflm/simple_add_model.tflite": (
        {"ADD": 1}, [(I8, (1, 128, 128, 1))] * 2, [(I8, (1, 128, 128, 1))]
    ),
}
# int8 models whose CONV_2D / DEPTHWISE_CONV_2D weights are quantized per channel.
PER_CHANNEL_MODELS = [
    "mlperf_tiny/kws_ref_model.tflite",
    "mlperf_tiny/vww_96_int8.tflite",
    "mlperf_tiny/pretrainedResnet_quant.tflite",
    "tflm/micro_speech_quantized.tflite",
    "tflm/network_model.tflite",
]

# TFLite TensorType code -> numpy dtype, written out here rather than taken from tinyhost.
_FB_DTYPES = {0: F32, 1: np.dtype(np.float16), 2: I32, 3: np.dtype(np.uint8),
              4: np.dtype(np.int64), 6: np.dtype(np.bool_), 7: np.dtype(np.int16), 9: I8,
              10: np.dtype(np.float64)}


_NO_SHARED = "shared folder absent (set TINYHOST_SHARED or provide ../shared)"


def _object_model(data: bytes) -> fb.ModelT:
    return fb.ModelT.InitFromObj(fb.Model.GetRootAsModel(data, 0))


def _pack(model: fb.ModelT) -> bytes:
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), b"TFL3")
    return bytes(builder.Output())


# -- shared models ---------------------------------------------------------------------------


@pytest.mark.parametrize("relative", sorted(README_FACTS))
def test_ops_and_io_match_readme(relative: str) -> None:
    graph = read_model(shared_model(relative))
    ops, inputs, outputs = README_FACTS[relative]
    assert Counter(op.kind.name for op in graph.ops) == Counter(ops)
    assert [(graph.tensors[i].dtype, graph.tensors[i].shape) for i in graph.inputs] == inputs
    assert [(graph.tensors[i].dtype, graph.tensors[i].shape) for i in graph.outputs] == outputs
    assert not graph.unsupported_ops()


@pytest.mark.parametrize("path", model_params(shared_model_paths(), _NO_SHARED))
def test_matches_independent_parse(path: Path) -> None:
    """Tensors, constants, quantization and ops agree with TFLite Micro's object API parse."""
    data = path.read_bytes()
    graph = read_model(path)
    model = _object_model(data)
    sg = model.subgraphs[0]
    assert len(graph.tensors) == len(sg.tensors)
    for i, (t, ref) in enumerate(zip(graph.tensors, sg.tensors, strict=True)):
        assert t.name == ref.name.decode(), i
        assert t.shape == tuple(int(d) for d in (ref.shape if ref.shape is not None else [])), i
        assert t.dtype == _FB_DTYPES[ref.type], i
        raw = model.buffers[ref.buffer].data
        if raw is None or len(raw) == 0:
            assert t.data is None, i
        else:
            assert t.data is not None and t.data.shape == t.shape, i
            assert t.data.tobytes() == np.asarray(raw, np.uint8).tobytes(), i
        q = ref.quantization
        if q is None or q.scale is None or len(q.scale) == 0:
            assert t.quant is None, i
        else:
            assert t.quant is not None
            np.testing.assert_array_equal(t.quant.scale, np.asarray(q.scale, np.float32))
            assert t.quant.scale.dtype == np.float32
            np.testing.assert_array_equal(
                t.quant.zero_point, np.broadcast_to(q.zeroPoint, len(q.scale))
            )
    assert len(graph.ops) == len(sg.operators)
    for op, ref in zip(graph.ops, sg.operators, strict=True):
        code = model.operatorCodes[ref.opcodeIndex]
        assert op.kind.value == max(code.builtinCode, code.deprecatedBuiltinCode)
        assert op.inputs == tuple(None if i < 0 else int(i) for i in ref.inputs)
        assert op.outputs == tuple(int(i) for i in ref.outputs)
    assert graph.inputs == tuple(int(i) for i in sg.inputs)
    assert graph.outputs == tuple(int(i) for i in sg.outputs)
    assert graph.description == model.description.decode()


@pytest.mark.parametrize("relative", PER_CHANNEL_MODELS)
def test_per_channel_weights_and_bias(relative: str) -> None:
    graph = read_model(shared_model(relative))
    checked = 0
    for op in graph.ops:
        if op.kind not in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D):
            continue
        weights = graph.tensors[op.inputs[1]]
        # TFLite layouts: conv weights [out, h, w, in], depthwise weights [1, h, w, out].
        axis = 0 if op.kind is OpKind.CONV_2D else 3
        assert weights.dtype == I8 and weights.quant is not None
        assert weights.quant.per_channel
        assert weights.quant.axis == axis
        assert weights.quant.scale.size == weights.shape[axis]
        assert np.all(weights.quant.zero_point == 0)
        assert op.inputs[2] is not None
        bias = graph.tensors[op.inputs[2]]
        assert bias.dtype == I32 and bias.shape == (weights.shape[axis],)
        assert bias.quant is not None and bias.quant.axis == 0
        assert bias.quant.scale.size == weights.shape[axis]
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("path", model_params(shared_model_paths(), _NO_SHARED))
def test_constant_data_sizes(path: Path) -> None:
    graph = read_model(path)
    constant_bytes = 0
    for t in graph.tensors:
        if t.data is not None:
            assert t.data.dtype == t.dtype and t.data.shape == t.shape
            assert t.data.nbytes == int(np.prod(t.shape, dtype=np.int64)) * t.dtype.itemsize
            constant_bytes += t.data.nbytes
    for i in [*graph.inputs, *graph.outputs]:
        assert graph.tensors[i].data is None
    assert constant_bytes <= path.stat().st_size


def test_ad01_weights_are_per_tensor() -> None:
    graph = read_model(shared_model("mlperf_tiny/ad01_int8.tflite"))
    for op in graph.ops:
        weights = graph.tensors[op.inputs[1]]
        assert weights.quant is not None and not weights.quant.per_channel


def test_bias_axis_quirk_is_tolerated() -> None:
    """A 1-D per-channel bias carrying the depthwise weights' axis 3 reads with axis 0."""
    data = shared_model("tflm/network_model.tflite").read_bytes()
    model = _object_model(data)
    sg = model.subgraphs[0]
    bias_index = next(
        int(op.inputs[2]) for op in sg.operators
        if model.operatorCodes[op.opcodeIndex].builtinCode == OpKind.DEPTHWISE_CONV_2D.value
    )
    bias = sg.tensors[bias_index]
    assert len(bias.shape) == 1 and len(bias.quantization.scale) > 1
    bias.quantization.quantizedDimension = 3
    graph = read_model_bytes(_pack(model))
    quant = graph.tensors[bias_index].quant
    assert quant is not None and quant.per_channel and quant.axis == 0
    original = read_model_bytes(data)
    assert graph.equals(original)


# -- small graphs written in memory ----------------------------------------------------------


def _tensor(name: str, shape: tuple[int, ...], dtype: np.dtype = F32, data=None, quant=None):
    return Tensor(name=name, shape=shape, dtype=np.dtype(dtype), data=data, quant=quant)


def _one_op_graph(kind: OpKind, options: OpOptions, n_inputs: int = 1) -> Graph:
    tensors = tuple(_tensor(f"in{i}", (1, 4, 4, 2)) for i in range(n_inputs)) + (
        _tensor("out", (1, 4, 4, 2)),
    )
    op = Op(kind=kind, inputs=tuple(range(n_inputs)), outputs=(n_inputs,), options=options)
    return Graph(tensors=tensors, ops=(op,), inputs=tuple(range(n_inputs)),
                 outputs=(n_inputs,), name="g", description="one op")


# Non-default values everywhere, so a field the writer or reader drops shows up.
OPTION_CASES: list[tuple[OpKind, OpOptions, int]] = [
    (OpKind.CONV_2D, Conv2DOptions(Padding.VALID, 2, 3, 4, 5, Activation.RELU6), 3),
    (OpKind.DEPTHWISE_CONV_2D,
     DepthwiseConv2DOptions(Padding.VALID, 3, 2, 4, 2, 3, Activation.RELU_N1_TO_1), 3),
    (OpKind.FULLY_CONNECTED, FullyConnectedOptions(Activation.RELU, keep_num_dims=True), 2),
    (OpKind.AVERAGE_POOL_2D, Pool2DOptions(Padding.VALID, 2, 3, 4, 5, Activation.RELU), 1),
    (OpKind.MAX_POOL_2D, Pool2DOptions(Padding.SAME, 3, 2, 5, 4, Activation.RELU6), 1),
    (OpKind.ADD, FusedActivationOptions(Activation.RELU), 2),
    (OpKind.SUB, FusedActivationOptions(Activation.RELU6), 2),
    (OpKind.MUL, FusedActivationOptions(Activation.TANH), 2),
    (OpKind.RESHAPE, ReshapeOptions((1, -1, 8)), 1),
    (OpKind.RESHAPE, ReshapeOptions(None), 2),
    (OpKind.SQUEEZE, SqueezeOptions((0, 2)), 1),
    (OpKind.SOFTMAX, SoftmaxOptions(0.5), 1),
    (OpKind.CONCATENATION, ConcatenationOptions(-1, Activation.RELU), 2),
    (OpKind.LEAKY_RELU, LeakyReluOptions(0.25), 1),  # float32 in the file: exact
    (OpKind.MEAN, ReducerOptions(True), 2),
    (OpKind.STRIDED_SLICE, StridedSliceOptions(1, 2, 4, 8, 16, True), 4),
    (OpKind.SVDF, SVDFOptions(2, Activation.RELU, asymmetric_quantize_inputs=True), 5),
    (OpKind.SPLIT, SplitOptions(3), 2),
    (OpKind.SPLIT_V, SplitOptions(2), 3),
    (OpKind.PACK, PackOptions(-1, 3), 3),
    (OpKind.UNPACK, PackOptions(1, 4), 1),
    (OpKind.GATHER, GatherOptions(-2, 1), 2),
    (OpKind.DEPTH_TO_SPACE, BlockSizeOptions(2), 1),
    (OpKind.SPACE_TO_DEPTH, BlockSizeOptions(3), 1),
    (OpKind.RESIZE_BILINEAR, ResizeOptions(True, False), 2),
    (OpKind.RESIZE_NEAREST_NEIGHBOR, ResizeOptions(False, True), 2),
    (OpKind.ARG_MAX, ArgMinMaxOptions("int32"), 2),
    (OpKind.ARG_MIN, ArgMinMaxOptions("int64"), 2),
    (OpKind.BATCH_MATMUL, BatchMatMulOptions(True, False), 2),
    (OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM,
     SequenceLSTMOptions(Activation.TANH, 2.5, 1.25, True, True), 24),
    *[(kind, NoOptions(), 1) for kind in (
        OpKind.DEQUANTIZE, OpKind.LOGISTIC, OpKind.RELU, OpKind.RELU6, OpKind.TANH, OpKind.PAD,
        OpKind.TRANSPOSE, OpKind.PADV2, OpKind.QUANTIZE, OpKind.HARD_SWISH, OpKind.ABS,
        OpKind.RSQRT, OpKind.ELU, OpKind.ZEROS_LIKE, OpKind.EXPAND_DIMS)],
    *[(kind, NoOptions(), 2) for kind in (
        OpKind.MAXIMUM, OpKind.MINIMUM, OpKind.SQUARED_DIFFERENCE, OpKind.PRELU, OpKind.FILL)],
    (OpKind.DIV, FusedActivationOptions(Activation.RELU6), 2),
    (OpKind.LOG_SOFTMAX, NoOptions(), 1),
    (OpKind.L2_NORMALIZATION, FusedActivationOptions(Activation.RELU), 1),
    (OpKind.CUMSUM, CumsumOptions(True, False), 2),
    (OpKind.CUMSUM, CumsumOptions(False, True), 2),
    (OpKind.SUM, ReducerOptions(False), 2),
    (OpKind.REDUCE_MAX, ReducerOptions(True), 2),
]


def test_option_cases_cover_every_supported_kind() -> None:
    assert {kind for kind, _, _ in OPTION_CASES} == set(OpKind) - {OpKind.UNSUPPORTED}


@pytest.mark.parametrize(
    ("kind", "options", "n_inputs"), OPTION_CASES, ids=lambda v: getattr(v, "name", None)
)
def test_options_read_back(kind: OpKind, options: OpOptions, n_inputs: int) -> None:
    graph = _one_op_graph(kind, options, n_inputs)
    back = read_model_bytes(write_model(graph))
    assert back.ops[0].kind is kind
    assert back.ops[0].options == options
    assert back.name == "g" and back.description == "one op"
    assert back.equals(graph)


def test_absent_optional_input_reads_as_none() -> None:
    w = np.arange(8, dtype=np.float32).reshape(2, 4)
    tensors = (_tensor("x", (1, 4)), _tensor("w", (2, 4), data=w), _tensor("y", (1, 2)))
    op = Op(OpKind.FULLY_CONNECTED, (0, 1, None), (2,), FullyConnectedOptions())
    graph = Graph(tensors=tensors, ops=(op,), inputs=(0,), outputs=(2,))
    data = write_model(graph)
    assert list(_object_model(data).subgraphs[0].operators[0].inputs) == [0, 1, -1]
    back = read_model_bytes(data)
    assert back.ops[0].inputs == (0, 1, None)
    np.testing.assert_array_equal(back.tensors[1].data, w)


def test_single_zero_point_is_repeated_per_channel() -> None:
    """Some converters store one zero point for all channels; the reader expands it."""
    w = np.ones((3, 1, 1, 2), np.int8)
    quant = Quantization(np.array([0.1, 0.2, 0.3], np.float32), np.zeros(3, np.int64), 0)
    tensors = (
        _tensor("x", (1, 2, 2, 2), I8, quant=Quantization(np.float32([1]), np.int64([0]))),
        _tensor("w", (3, 1, 1, 2), I8, data=w, quant=quant),
        _tensor("y", (1, 2, 2, 3), I8, quant=Quantization(np.float32([1]), np.int64([0]))),
    )
    op = Op(OpKind.CONV_2D, (0, 1, None), (2,), Conv2DOptions(Padding.VALID, 1, 1))
    model = _object_model(write_model(Graph(tensors, (op,), (0,), (2,))))
    model.subgraphs[0].tensors[1].quantization.zeroPoint = [0]
    back = read_model_bytes(_pack(model)).tensors[1].quant
    assert back is not None
    np.testing.assert_array_equal(back.zero_point, [0, 0, 0])
    np.testing.assert_array_equal(back.scale, np.float32([0.1, 0.2, 0.3]))


def test_mismatched_per_channel_scales_are_rejected() -> None:
    graph = _one_op_graph(OpKind.RELU, NoOptions())
    model = _object_model(write_model(graph))
    q = fb.QuantizationParametersT()
    q.scale, q.zeroPoint, q.quantizedDimension = [0.1, 0.2, 0.3], [0, 0, 0], 3
    model.subgraphs[0].tensors[0].quantization = q  # 3 scales, but axis 3 has 2 entries
    with pytest.raises(ModelFormatError, match="per-channel scales"):
        read_model_bytes(_pack(model), "quirky.tflite")


@pytest.mark.parametrize("cut", [3, 7, 40])
def test_truncated_file_is_a_format_error(cut: int) -> None:
    data = write_model(_one_op_graph(OpKind.ADD, FusedActivationOptions(), 2))
    with pytest.raises(ModelFormatError, match="cut.tflite"):
        read_model_bytes(data[:cut], "cut.tflite")


def test_wrong_identifier_is_a_format_error() -> None:
    data = bytearray(write_model(_one_op_graph(OpKind.RELU, NoOptions())))
    data[4:8] = b"XXXX"
    with pytest.raises(ModelFormatError, match="not a TFLite model"):
        read_model_bytes(bytes(data), "x.tflite")


def test_missing_file_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(ModelFormatError, match="no such file"):
        read_model(tmp_path / "absent.tflite")


def test_every_shared_model_has_readme_facts(shared_dir: Path) -> None:
    found = {p.relative_to(shared_dir / "models").as_posix()
             for p in (shared_dir / "models").rglob("*.tflite")}
    assert found == set(README_FACTS)
