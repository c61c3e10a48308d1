"""IR -> .tflite flatbuffer.

Builds the file with `flatbuffers.Builder` and the builder functions of the `tflite` schema
package (which has no object API). The layout follows what TFLite's converter emits and
TFLite Micro expects: file identifier "TFL3", schema version 3, buffer 0 empty, one buffer
per constant tensor with its data 16-byte aligned, operator codes deduplicated.

The output is a pure function of the graph: writing the same graph twice gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np
import tflite

from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import (
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
from tinyhost.tflite.schema import (
    DTYPE_TO_TENSOR_TYPE,
    FILE_IDENTIFIER,
    INT4_TYPE,
    SCHEMA_VERSION,
    pack_int4,
)

# TFLite Micro reads constants in place, so int32/float data must sit on aligned addresses;
# 16 bytes is what TFLite's own converter uses and covers every SIMD load on Cortex-M.
_DATA_ALIGNMENT = 16
# OperatorCode.deprecated_builtin_code is an int8; larger codes are stored as this placeholder.
_PLACEHOLDER_FOR_GREATER_OP_CODES = 127


def write_model(graph: Graph) -> bytes:
    """Serialize `graph` as .tflite bytes.

    Raises UnsupportedModelError if the graph holds ops or dtypes that cannot be written,
    and ModelFormatError if it is inconsistent (index out of range, options of the wrong
    type, constant data that does not match its tensor's shape).
    """
    _check_writable(graph)
    return _Writer(graph).build()


def write_model_file(graph: Graph, path: str | Path) -> None:
    """Write `graph` to a .tflite file at `path`."""
    Path(path).write_bytes(write_model(graph))


def _check_writable(graph: Graph) -> None:
    def fail(message: str) -> ModelFormatError:
        return ModelFormatError(f"{graph.source}: cannot write: {message}")

    unsupported = graph.unsupported_ops()
    if unsupported:
        listed = ", ".join(f"op {i} ({op.name})" for i, op in unsupported)
        raise UnsupportedModelError(
            f"{graph.source}: cannot write a graph with unsupported ops: {listed}"
        )
    n = len(graph.tensors)
    for i, t in enumerate(graph.tensors):
        where = f"tensor {i} '{t.name}'"
        if t.dtype not in DTYPE_TO_TENSOR_TYPE:
            raise UnsupportedModelError(
                f"{graph.source}: cannot write {where}: dtype {t.dtype} has no TFLite type"
            )
        if t.packed_int4 and (t.dtype != np.int8 or t.data is None or t.data.size == 0
                              or t.data.min() < -8 or t.data.max() > 7):
            raise fail(f"{where}: packed int4 needs constant int8 values in [-8, 7]")
        if t.data is not None and (t.data.dtype != t.dtype or t.data.size * t.dtype.itemsize
                                   != t.size_bytes):
            raise fail(
                f"{where}: constant data {t.data.dtype}{list(t.data.shape)} does not match "
                f"{t.dtype}{list(t.shape)}"
            )
        q = t.quant
        if q is not None:
            if q.scale.size != q.zero_point.size or q.scale.size == 0:
                raise fail(
                    f"{where}: {q.scale.size} scales and {q.zero_point.size} zero points"
                )
            if q.per_channel and not (0 <= q.axis < len(t.shape)
                                      and t.shape[q.axis] == q.scale.size):
                raise fail(
                    f"{where}: {q.scale.size} per-channel scales do not match axis {q.axis} "
                    f"of shape {list(t.shape)}"
                )
    for role, indices in (("input", graph.inputs), ("output", graph.outputs)):
        for t in indices:
            if not 0 <= t < n:
                raise fail(f"graph {role} refers to tensor {t}, but the graph has {n}")
    for i, op in enumerate(graph.ops):
        for t in [*op.inputs, *op.outputs]:
            if t is not None and not 0 <= t < n:
                raise fail(f"op {i} ({op.name}) refers to tensor {t}, but the graph has {n}")
        expected = _OPTION_WRITERS[op.kind][0] if op.kind in _OPTION_WRITERS else NoOptions
        if not isinstance(op.options, expected):
            raise fail(
                f"op {i} ({op.name}) has options {type(op.options).__name__}, "
                f"expected {expected.__name__}"
            )


class _Writer:
    """Holds the builder while one graph is serialized; children are built before parents."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.b = flatbuffers.Builder(1024)

    def build(self) -> bytes:
        b, g = self.b, self.graph
        # Buffer 0 is the empty buffer every non-constant tensor points at.
        buffer_of_tensor: list[int] = []
        buffers = [self.buffer(None)]
        for t in g.tensors:
            if t.data is None:
                buffer_of_tensor.append(0)
            else:
                buffer_of_tensor.append(len(buffers))
                buffers.append(self.buffer(pack_int4(t.data) if t.packed_int4 else t.data))

        codes: list[int] = []  # builtin code per operator-code entry, first use first
        for op in g.ops:
            if op.kind.value not in codes:
                codes.append(op.kind.value)
        opcode_offsets = [self.operator_code(c) for c in codes]

        tensors = [self.tensor(t, buffer_of_tensor[i]) for i, t in enumerate(g.tensors)]
        operators = [self.operator(op, codes.index(op.kind.value)) for op in g.ops]

        sg_tensors = self.table_vector(tensors)
        sg_inputs = self.int32_vector(g.inputs)
        sg_outputs = self.int32_vector(g.outputs)
        sg_operators = self.table_vector(operators)
        sg_name = b.CreateString(g.name)
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, sg_tensors)
        tflite.SubGraphAddInputs(b, sg_inputs)
        tflite.SubGraphAddOutputs(b, sg_outputs)
        tflite.SubGraphAddOperators(b, sg_operators)
        tflite.SubGraphAddName(b, sg_name)
        subgraph = tflite.SubGraphEnd(b)

        m_codes = self.table_vector(opcode_offsets)
        m_subgraphs = self.table_vector([subgraph])
        m_description = b.CreateString(g.description)
        m_buffers = self.table_vector(buffers)
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, SCHEMA_VERSION)
        tflite.ModelAddOperatorCodes(b, m_codes)
        tflite.ModelAddSubgraphs(b, m_subgraphs)
        tflite.ModelAddDescription(b, m_description)
        tflite.ModelAddBuffers(b, m_buffers)
        model = tflite.ModelEnd(b)
        b.Finish(model, FILE_IDENTIFIER)
        return bytes(b.Output())

    # -- vectors ---------------------------------------------------------------------------

    def int32_vector(self, values: Sequence[int]) -> int:
        return self.b.CreateNumpyVector(np.asarray(values, dtype="<i4").reshape(-1))

    def table_vector(self, offsets: Sequence[int]) -> int:
        b = self.b
        b.StartVector(4, len(offsets), 4)
        for off in reversed(offsets):
            b.PrependUOffsetTRelative(off)
        return b.EndVector()

    def aligned_bytes(self, payload: bytes) -> int:
        """A ubyte vector whose first element is _DATA_ALIGNMENT-aligned in the final file.

        Alignment holds relative to the end of the builder's buffer; Finish pads the whole
        file to the largest alignment used, so it holds from the file start as well.
        """
        b = self.b
        b.StartVector(1, len(payload), _DATA_ALIGNMENT)
        # What Builder.CreateByteVector does, with the larger alignment it cannot take.
        b.head = b.head - len(payload)
        b.Bytes[b.head : b.head + len(payload)] = payload
        return b.EndVector()

    # -- tables ----------------------------------------------------------------------------

    def buffer(self, data: np.ndarray | None) -> int:
        b = self.b
        payload = None
        if data is not None:
            payload = self.aligned_bytes(_little_endian_bytes(data))
        tflite.BufferStart(b)
        if payload is not None:
            tflite.BufferAddData(b, payload)
        return tflite.BufferEnd(b)

    def operator_code(self, code: int) -> int:
        b = self.b
        tflite.OperatorCodeStart(b)
        tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, _PLACEHOLDER_FOR_GREATER_OP_CODES))
        tflite.OperatorCodeAddBuiltinCode(b, code)
        tflite.OperatorCodeAddVersion(b, 1)
        return tflite.OperatorCodeEnd(b)

    def quantization(self, q: Quantization) -> int:
        b = self.b
        scale = b.CreateNumpyVector(np.asarray(q.scale, dtype="<f4").reshape(-1))
        zero_point = b.CreateNumpyVector(np.asarray(q.zero_point, dtype="<i8").reshape(-1))
        tflite.QuantizationParametersStart(b)
        tflite.QuantizationParametersAddScale(b, scale)
        tflite.QuantizationParametersAddZeroPoint(b, zero_point)
        tflite.QuantizationParametersAddQuantizedDimension(b, q.axis if q.per_channel else 0)
        return tflite.QuantizationParametersEnd(b)

    def tensor(self, t: Tensor, buffer_index: int) -> int:
        b = self.b
        shape = self.int32_vector(t.shape)
        name = b.CreateString(t.name)
        quant = None if t.quant is None else self.quantization(t.quant)
        tflite.TensorStart(b)
        tflite.TensorAddShape(b, shape)
        tflite.TensorAddType(b, INT4_TYPE if t.packed_int4 else DTYPE_TO_TENSOR_TYPE[t.dtype])
        tflite.TensorAddBuffer(b, buffer_index)
        tflite.TensorAddName(b, name)
        if quant is not None:
            tflite.TensorAddQuantization(b, quant)
        if t.is_variable:
            tflite.TensorAddIsVariable(b, True)
        return tflite.TensorEnd(b)

    def operator(self, op: Op, opcode_index: int) -> int:
        b = self.b
        inputs = self.int32_vector([-1 if i is None else i for i in op.inputs])
        outputs = self.int32_vector(op.outputs)
        options = None
        if op.kind in _OPTION_WRITERS:
            _, options_type, write = _OPTION_WRITERS[op.kind]
            options = (options_type, write(b, op.options))
        tflite.OperatorStart(b)
        tflite.OperatorAddOpcodeIndex(b, opcode_index)
        tflite.OperatorAddInputs(b, inputs)
        tflite.OperatorAddOutputs(b, outputs)
        if options is not None:
            tflite.OperatorAddBuiltinOptionsType(b, options[0])
            tflite.OperatorAddBuiltinOptions(b, options[1])
        return tflite.OperatorEnd(b)


def _little_endian_bytes(data: np.ndarray) -> bytes:
    return np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<")).tobytes()


# -- options: one writer per options table, mirroring the reader's _OPTION_PARSERS ----------

_Builder = flatbuffers.Builder


def _refuse_explicit_padding(o: Conv2DOptions | DepthwiseConv2DOptions) -> None:
    if o.explicit_padding is not None:  # TFLite has SAME and VALID only
        raise UnsupportedModelError(
            f"a convolution with a PAD folded in (padding {list(o.explicit_padding)}) has no "
            ".tflite form: write the graph before codegen.fold"
        )


def _conv2d(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, Conv2DOptions)
    _refuse_explicit_padding(o)
    tflite.Conv2DOptionsStart(b)
    tflite.Conv2DOptionsAddPadding(b, o.padding.value)
    tflite.Conv2DOptionsAddStrideW(b, o.stride_w)
    tflite.Conv2DOptionsAddStrideH(b, o.stride_h)
    tflite.Conv2DOptionsAddFusedActivationFunction(b, o.activation.value)
    tflite.Conv2DOptionsAddDilationWFactor(b, o.dilation_w)
    tflite.Conv2DOptionsAddDilationHFactor(b, o.dilation_h)
    return tflite.Conv2DOptionsEnd(b)


def _depthwise(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, DepthwiseConv2DOptions)
    _refuse_explicit_padding(o)
    tflite.DepthwiseConv2DOptionsStart(b)
    tflite.DepthwiseConv2DOptionsAddPadding(b, o.padding.value)
    tflite.DepthwiseConv2DOptionsAddStrideW(b, o.stride_w)
    tflite.DepthwiseConv2DOptionsAddStrideH(b, o.stride_h)
    tflite.DepthwiseConv2DOptionsAddDepthMultiplier(b, o.depth_multiplier)
    tflite.DepthwiseConv2DOptionsAddFusedActivationFunction(b, o.activation.value)
    tflite.DepthwiseConv2DOptionsAddDilationWFactor(b, o.dilation_w)
    tflite.DepthwiseConv2DOptionsAddDilationHFactor(b, o.dilation_h)
    return tflite.DepthwiseConv2DOptionsEnd(b)


def _fully_connected(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, FullyConnectedOptions)
    tflite.FullyConnectedOptionsStart(b)
    tflite.FullyConnectedOptionsAddFusedActivationFunction(b, o.activation.value)
    tflite.FullyConnectedOptionsAddWeightsFormat(
        b, tflite.FullyConnectedOptionsWeightsFormat.DEFAULT
    )
    tflite.FullyConnectedOptionsAddKeepNumDims(b, o.keep_num_dims)
    return tflite.FullyConnectedOptionsEnd(b)


def _pool2d(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, Pool2DOptions)
    tflite.Pool2DOptionsStart(b)
    tflite.Pool2DOptionsAddPadding(b, o.padding.value)
    tflite.Pool2DOptionsAddStrideW(b, o.stride_w)
    tflite.Pool2DOptionsAddStrideH(b, o.stride_h)
    tflite.Pool2DOptionsAddFilterWidth(b, o.filter_w)
    tflite.Pool2DOptionsAddFilterHeight(b, o.filter_h)
    tflite.Pool2DOptionsAddFusedActivationFunction(b, o.activation.value)
    return tflite.Pool2DOptionsEnd(b)


def _fused(
    start: Callable[[_Builder], None],
    add_activation: Callable[[_Builder, int], None],
    end: Callable[[_Builder], int],
) -> Callable[[_Builder, OpOptions], int]:
    def write(b: _Builder, o: OpOptions) -> int:
        assert isinstance(o, FusedActivationOptions)
        start(b)
        add_activation(b, o.activation.value)
        return end(b)

    return write


def _reshape(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, ReshapeOptions)
    new_shape = None
    if o.new_shape is not None:
        new_shape = b.CreateNumpyVector(np.asarray(o.new_shape, dtype="<i4").reshape(-1))
    tflite.ReshapeOptionsStart(b)
    if new_shape is not None:
        tflite.ReshapeOptionsAddNewShape(b, new_shape)
    return tflite.ReshapeOptionsEnd(b)


def _squeeze(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, SqueezeOptions)
    dims = b.CreateNumpyVector(np.asarray(o.squeeze_dims, dtype="<i4").reshape(-1))
    tflite.SqueezeOptionsStart(b)
    tflite.SqueezeOptionsAddSqueezeDims(b, dims)
    return tflite.SqueezeOptionsEnd(b)


def _softmax(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, SoftmaxOptions)
    tflite.SoftmaxOptionsStart(b)
    tflite.SoftmaxOptionsAddBeta(b, o.beta)
    return tflite.SoftmaxOptionsEnd(b)


def _concatenation(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, ConcatenationOptions)
    tflite.ConcatenationOptionsStart(b)
    tflite.ConcatenationOptionsAddAxis(b, o.axis)
    tflite.ConcatenationOptionsAddFusedActivationFunction(b, o.activation.value)
    return tflite.ConcatenationOptionsEnd(b)


def _leaky_relu(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, LeakyReluOptions)
    tflite.LeakyReluOptionsStart(b)
    tflite.LeakyReluOptionsAddAlpha(b, o.alpha)
    return tflite.LeakyReluOptionsEnd(b)


def _reducer(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, ReducerOptions)
    tflite.ReducerOptionsStart(b)
    tflite.ReducerOptionsAddKeepDims(b, o.keep_dims)
    return tflite.ReducerOptionsEnd(b)


def _strided_slice(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, StridedSliceOptions)
    tflite.StridedSliceOptionsStart(b)
    tflite.StridedSliceOptionsAddBeginMask(b, o.begin_mask)
    tflite.StridedSliceOptionsAddEndMask(b, o.end_mask)
    tflite.StridedSliceOptionsAddEllipsisMask(b, o.ellipsis_mask)
    tflite.StridedSliceOptionsAddNewAxisMask(b, o.new_axis_mask)
    tflite.StridedSliceOptionsAddShrinkAxisMask(b, o.shrink_axis_mask)
    tflite.StridedSliceOptionsAddOffset(b, o.offset)
    return tflite.StridedSliceOptionsEnd(b)


def _svdf(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, SVDFOptions)
    tflite.SVDFOptionsStart(b)
    tflite.SVDFOptionsAddRank(b, o.rank)
    tflite.SVDFOptionsAddFusedActivationFunction(b, o.activation.value)
    tflite.SVDFOptionsAddAsymmetricQuantizeInputs(b, o.asymmetric_quantize_inputs)
    return tflite.SVDFOptionsEnd(b)


def _one_field(cls: type, start: Callable, add: Callable, end: Callable,
               value: Callable[[Any], object]) -> Callable[[_Builder, OpOptions], int]:
    """A writer of an options table with one field: SPLIT / SPLIT_V (num_splits),
    DEPTH_TO_SPACE / SPACE_TO_DEPTH (block_size), ARG_MAX / ARG_MIN (output_type)."""

    def write(b: _Builder, o: OpOptions) -> int:
        assert isinstance(o, cls)
        start(b)
        add(b, value(o))
        return end(b)

    return write


def _split(start: Callable, add: Callable, end: Callable) -> Callable[[_Builder, OpOptions], int]:
    return _one_field(SplitOptions, start, add, end, lambda o: o.num_splits)


def _pack(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, PackOptions)
    tflite.PackOptionsStart(b)
    tflite.PackOptionsAddValuesCount(b, o.count)
    tflite.PackOptionsAddAxis(b, o.axis)
    return tflite.PackOptionsEnd(b)


def _unpack(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, PackOptions)
    tflite.UnpackOptionsStart(b)
    tflite.UnpackOptionsAddNum(b, o.count)
    tflite.UnpackOptionsAddAxis(b, o.axis)
    return tflite.UnpackOptionsEnd(b)


def _gather(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, GatherOptions)
    tflite.GatherOptionsStart(b)
    tflite.GatherOptionsAddAxis(b, o.axis)
    tflite.GatherOptionsAddBatchDims(b, o.batch_dims)
    return tflite.GatherOptionsEnd(b)


def _block(start: Callable, add: Callable, end: Callable) -> Callable[[_Builder, OpOptions], int]:
    return _one_field(BlockSizeOptions, start, add, end, lambda o: o.block_size)


def _resize(start: Callable, align: Callable, half: Callable,
            end: Callable) -> Callable[[_Builder, OpOptions], int]:
    def write(b: _Builder, o: OpOptions) -> int:
        assert isinstance(o, ResizeOptions)
        start(b)
        align(b, o.align_corners)
        half(b, o.half_pixel_centers)
        return end(b)

    return write


def _arg(start: Callable, add: Callable, end: Callable) -> Callable[[_Builder, OpOptions], int]:
    return _one_field(ArgMinMaxOptions, start, add, end, lambda o: (
        tflite.TensorType.INT32 if o.output_type == "int32" else tflite.TensorType.INT64))


def _batch_matmul(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, BatchMatMulOptions)
    tflite.BatchMatMulOptionsStart(b)
    tflite.BatchMatMulOptionsAddAdjX(b, o.adj_x)
    tflite.BatchMatMulOptionsAddAdjY(b, o.adj_y)
    return tflite.BatchMatMulOptionsEnd(b)


def _sequence_lstm(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, SequenceLSTMOptions)
    tflite.UnidirectionalSequenceLSTMOptionsStart(b)
    tflite.UnidirectionalSequenceLSTMOptionsAddFusedActivationFunction(b, o.activation.value)
    tflite.UnidirectionalSequenceLSTMOptionsAddCellClip(b, o.cell_clip)
    tflite.UnidirectionalSequenceLSTMOptionsAddProjClip(b, o.proj_clip)
    tflite.UnidirectionalSequenceLSTMOptionsAddTimeMajor(b, o.time_major)
    tflite.UnidirectionalSequenceLSTMOptionsAddAsymmetricQuantizeInputs(
        b, o.asymmetric_quantize_inputs
    )
    return tflite.UnidirectionalSequenceLSTMOptionsEnd(b)


def _cumsum(b: _Builder, o: OpOptions) -> int:
    assert isinstance(o, CumsumOptions)
    tflite.CumsumOptionsStart(b)
    tflite.CumsumOptionsAddExclusive(b, o.exclusive)
    tflite.CumsumOptionsAddReverse(b, o.reverse)
    return tflite.CumsumOptionsEnd(b)


_OptionWriter = tuple[type, int, Callable[[_Builder, OpOptions], int]]
_BO = tflite.BuiltinOptions

# Kinds absent here take NoOptions and are written without an options table.
_OPTION_WRITERS: dict[OpKind, _OptionWriter] = {
    OpKind.CONV_2D: (Conv2DOptions, _BO.Conv2DOptions, _conv2d),
    OpKind.DEPTHWISE_CONV_2D: (DepthwiseConv2DOptions, _BO.DepthwiseConv2DOptions, _depthwise),
    OpKind.FULLY_CONNECTED: (FullyConnectedOptions, _BO.FullyConnectedOptions, _fully_connected),
    OpKind.AVERAGE_POOL_2D: (Pool2DOptions, _BO.Pool2DOptions, _pool2d),
    OpKind.MAX_POOL_2D: (Pool2DOptions, _BO.Pool2DOptions, _pool2d),
    OpKind.ADD: (
        FusedActivationOptions,
        _BO.AddOptions,
        _fused(
            tflite.AddOptionsStart,
            tflite.AddOptionsAddFusedActivationFunction,
            tflite.AddOptionsEnd,
        ),
    ),
    OpKind.SUB: (
        FusedActivationOptions,
        _BO.SubOptions,
        _fused(
            tflite.SubOptionsStart,
            tflite.SubOptionsAddFusedActivationFunction,
            tflite.SubOptionsEnd,
        ),
    ),
    OpKind.MUL: (
        FusedActivationOptions,
        _BO.MulOptions,
        _fused(
            tflite.MulOptionsStart,
            tflite.MulOptionsAddFusedActivationFunction,
            tflite.MulOptionsEnd,
        ),
    ),
    OpKind.DIV: (
        FusedActivationOptions,
        _BO.DivOptions,
        _fused(
            tflite.DivOptionsStart,
            tflite.DivOptionsAddFusedActivationFunction,
            tflite.DivOptionsEnd,
        ),
    ),
    OpKind.RESHAPE: (ReshapeOptions, _BO.ReshapeOptions, _reshape),
    OpKind.SQUEEZE: (SqueezeOptions, _BO.SqueezeOptions, _squeeze),
    OpKind.SOFTMAX: (SoftmaxOptions, _BO.SoftmaxOptions, _softmax),
    OpKind.CONCATENATION: (ConcatenationOptions, _BO.ConcatenationOptions, _concatenation),
    OpKind.LEAKY_RELU: (LeakyReluOptions, _BO.LeakyReluOptions, _leaky_relu),
    OpKind.MEAN: (ReducerOptions, _BO.ReducerOptions, _reducer),
    OpKind.SUM: (ReducerOptions, _BO.ReducerOptions, _reducer),
    OpKind.REDUCE_MAX: (ReducerOptions, _BO.ReducerOptions, _reducer),
    OpKind.STRIDED_SLICE: (StridedSliceOptions, _BO.StridedSliceOptions, _strided_slice),
    OpKind.SVDF: (SVDFOptions, _BO.SVDFOptions, _svdf),
    OpKind.SPLIT: (SplitOptions, _BO.SplitOptions, _split(
        tflite.SplitOptionsStart, tflite.SplitOptionsAddNumSplits, tflite.SplitOptionsEnd)),
    OpKind.SPLIT_V: (SplitOptions, _BO.SplitVOptions, _split(
        tflite.SplitVOptionsStart, tflite.SplitVOptionsAddNumSplits, tflite.SplitVOptionsEnd)),
    OpKind.PACK: (PackOptions, _BO.PackOptions, _pack),
    OpKind.UNPACK: (PackOptions, _BO.UnpackOptions, _unpack),
    OpKind.GATHER: (GatherOptions, _BO.GatherOptions, _gather),
    OpKind.DEPTH_TO_SPACE: (BlockSizeOptions, _BO.DepthToSpaceOptions, _block(
        tflite.DepthToSpaceOptionsStart, tflite.DepthToSpaceOptionsAddBlockSize,
        tflite.DepthToSpaceOptionsEnd)),
    OpKind.SPACE_TO_DEPTH: (BlockSizeOptions, _BO.SpaceToDepthOptions, _block(
        tflite.SpaceToDepthOptionsStart, tflite.SpaceToDepthOptionsAddBlockSize,
        tflite.SpaceToDepthOptionsEnd)),
    OpKind.RESIZE_BILINEAR: (ResizeOptions, _BO.ResizeBilinearOptions, _resize(
        tflite.ResizeBilinearOptionsStart, tflite.ResizeBilinearOptionsAddAlignCorners,
        tflite.ResizeBilinearOptionsAddHalfPixelCenters, tflite.ResizeBilinearOptionsEnd)),
    OpKind.RESIZE_NEAREST_NEIGHBOR: (ResizeOptions, _BO.ResizeNearestNeighborOptions, _resize(
        tflite.ResizeNearestNeighborOptionsStart,
        tflite.ResizeNearestNeighborOptionsAddAlignCorners,
        tflite.ResizeNearestNeighborOptionsAddHalfPixelCenters,
        tflite.ResizeNearestNeighborOptionsEnd)),
    OpKind.ARG_MAX: (ArgMinMaxOptions, _BO.ArgMaxOptions, _arg(
        tflite.ArgMaxOptionsStart, tflite.ArgMaxOptionsAddOutputType, tflite.ArgMaxOptionsEnd)),
    OpKind.ARG_MIN: (ArgMinMaxOptions, _BO.ArgMinOptions, _arg(
        tflite.ArgMinOptionsStart, tflite.ArgMinOptionsAddOutputType, tflite.ArgMinOptionsEnd)),
    OpKind.BATCH_MATMUL: (BatchMatMulOptions, _BO.BatchMatMulOptions, _batch_matmul),
    OpKind.L2_NORMALIZATION: (FusedActivationOptions, _BO.L2NormOptions, _fused(
        tflite.L2NormOptionsStart, tflite.L2NormOptionsAddFusedActivationFunction,
        tflite.L2NormOptionsEnd)),
    OpKind.CUMSUM: (CumsumOptions, _BO.CumsumOptions, _cumsum),
    OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM: (
        SequenceLSTMOptions, _BO.UnidirectionalSequenceLSTMOptions, _sequence_lstm
    ),
}  # fmt: skip
