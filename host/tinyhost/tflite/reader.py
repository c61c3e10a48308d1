""".tflite flatbuffer -> IR.

The `flatbuffers` runtime does not verify buffers, so a corrupt file can make it read
anywhere or loop over a bogus 4-billion-entry vector. The reader therefore checks every
vector length against the file size before iterating, converts any low-level failure into
a `ModelFormatError` naming the file, and validates the resulting graph (indices, sizes,
quantization) before handing it on.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import tflite

from tinyhost.errors import ModelFormatError, TinyhostError
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
    UnsupportedOptions,
)
from tinyhost.tflite.schema import (
    BUILTIN_NAMES,
    INT4_TYPE,
    KIND_BY_CODE,
    TENSOR_TYPE_NAMES,
    TENSOR_TYPE_TO_DTYPE,
    unpack_int4,
)

# struct.error's wording for a read past the end of the buffer.
_READ_PAST_END = re.compile(r"at least (\d+) bytes .* at offset (\d+)")
_IDENTIFIER = b"TFL3"
_MAX_RANK = 8
_MAX_TENSOR_BYTES = 1 << 30


def read_model(path: str | Path) -> Graph:
    """Read a .tflite file into a validated IR graph."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ModelFormatError(f"{path}: no such file") from None
    except OSError as e:
        raise ModelFormatError(f"{path}: cannot read ({e.strerror})") from None
    return read_model_bytes(data, str(path))


def read_model_bytes(data: bytes, source: str = "<bytes>") -> Graph:
    """Parse .tflite bytes; `source` names the origin in error messages."""
    if len(data) < 8:
        raise ModelFormatError(f"{source}: {len(data)} bytes, too short to be a .tflite model")
    if data[4:8] != _IDENTIFIER:
        raise ModelFormatError(
            f"{source}: not a TFLite model (bytes 4..7 are {data[4:8]!r}, expected {_IDENTIFIER!r})"
        )
    root = int.from_bytes(data[0:4], "little")
    if root + 4 > len(data):
        raise ModelFormatError(
            f"{source}: truncated at byte {len(data):,} of at least {root + 4:,} (the root "
            f"table at byte {root} lies past the end)"
        )
    try:
        graph = _Parser(data, source).parse()
    except TinyhostError:
        raise
    except struct.error as e:  # a read past the end: the file is cut short
        need = _READ_PAST_END.search(str(e))
        if need is not None:
            offset, end = int(need.group(2)), int(need.group(1))
            raise ModelFormatError(
                f"{source}: truncated at byte {len(data):,} of at least {end:,} (a field at "
                f"byte {offset:,} lies past the end)"
            ) from None
        raise ModelFormatError(f"{source}: corrupt flatbuffer ({e})") from None
    except Exception as e:  # the flatbuffers runtime raises anything on corrupt data
        raise ModelFormatError(f"{source}: corrupt flatbuffer ({type(e).__name__}: {e})") from None
    _validate(graph)
    return graph


class _Parser:
    def __init__(self, data: bytes, source: str) -> None:
        self.data = data
        self.source = source
        self.model = tflite.Model.GetRootAsModel(data, 0)

    def fail(self, message: str) -> ModelFormatError:
        return ModelFormatError(f"{self.source}: {message}")

    def length(self, n: int, elem_size: int, what: str) -> int:
        """A vector length that cannot be genuine (larger than the file) is corruption."""
        if n < 0 or n * elem_size > len(self.data):
            raise self.fail(f"{what} claims {n} entries, more than the {len(self.data)}-byte file")
        return n

    def parse(self) -> Graph:
        model = self.model
        n_subgraphs = self.length(model.SubgraphsLength(), 4, "subgraph list")
        if n_subgraphs == 0:
            raise self.fail("the model has no subgraph")
        if n_subgraphs > 1:
            raise self.fail(
                f"the model has {n_subgraphs} subgraphs; tinyhost runs single-subgraph models"
            )
        sg = model.Subgraphs(0)
        n_buffers = self.length(model.BuffersLength(), 4, "buffer list")
        n_codes = self.length(model.OperatorCodesLength(), 4, "operator code list")
        n_tensors = self.length(sg.TensorsLength(), 4, "tensor list")
        n_ops = self.length(sg.OperatorsLength(), 4, "operator list")

        tensors = tuple(self.tensor(sg.Tensors(i), i, n_buffers) for i in range(n_tensors))
        codes = [self.opcode(model.OperatorCodes(i)) for i in range(n_codes)]
        ops = tuple(self.op(sg.Operators(i), i, codes) for i in range(n_ops))
        inputs = self.int_vector(sg.InputsAsNumpy, sg.InputsLength(), "subgraph inputs")
        outputs = self.int_vector(sg.OutputsAsNumpy, sg.OutputsLength(), "subgraph outputs")
        description = model.Description()
        return Graph(
            tensors=tensors,
            ops=ops,
            inputs=tuple(inputs),
            outputs=tuple(outputs),
            name=_text(sg.Name()),
            source=self.source,
            description=_text(description),
        )

    def int_vector(self, as_numpy: Callable[[], Any], n: int, what: str) -> list[int]:
        self.length(n, 4, what)
        if n == 0:
            return []
        return [int(v) for v in as_numpy()]

    def tensor(self, t: tflite.Tensor, index: int, n_buffers: int) -> Tensor:
        name = _text(t.Name()) or f"tensor_{index}"
        where = f"tensor {index} '{name}'"
        type_code = t.Type()
        packed_int4 = type_code == INT4_TYPE  # constant weights: unpacked to int8, as TFLM does
        if packed_int4:
            type_code = tflite.TensorType.INT8
        if type_code not in TENSOR_TYPE_TO_DTYPE:
            type_name = TENSOR_TYPE_NAMES.get(type_code, str(type_code))
            raise self.fail(f"{where} has type {type_name}, which tinyhost does not support")
        dtype = TENSOR_TYPE_TO_DTYPE[type_code]
        shape = tuple(self.int_vector(t.ShapeAsNumpy, t.ShapeLength(), f"{where} shape"))
        if len(shape) > _MAX_RANK or any(d < 0 for d in shape):
            raise self.fail(f"{where} has invalid shape {list(shape)}")
        if int(np.prod(shape, dtype=np.float64)) * dtype.itemsize > _MAX_TENSOR_BYTES:
            raise self.fail(
                f"{where} has shape {list(shape)}: over 1 GiB, not a microcontroller model"
            )

        buffer_index = t.Buffer()
        if not 0 <= buffer_index < max(n_buffers, 1):
            raise self.fail(
                f"{where} refers to buffer {buffer_index}, but the model has {n_buffers}"
            )
        data = self.buffer_data(buffer_index, n_buffers, where) if n_buffers else None
        if packed_int4 and data is None:
            raise self.fail(f"{where} is int4 but not constant: tinyhost (like TFLite Micro) "
                            "takes int4 only as packed constant weights")  # fmt: skip
        if packed_int4:
            count = int(np.prod(shape, dtype=np.int64))
            if data.size != (count + 1) // 2:
                raise self.fail(
                    f"{where}: constant buffer {buffer_index} holds {data.size} bytes, "
                    f"shape {list(shape)} of packed int4 needs {(count + 1) // 2}"
                )
            data = unpack_int4(data, count).reshape(shape)
        elif data is not None:
            expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            if data.size != expected:
                raise self.fail(
                    f"{where}: constant buffer {buffer_index} holds {data.size} bytes, "
                    f"shape {list(shape)} of {dtype} needs {expected}"
                )
            data = data.view(dtype).reshape(shape).copy()
        return Tensor(
            name=name,
            shape=shape,
            dtype=dtype,
            data=data,
            quant=self.quantization(t.Quantization(), shape, where),
            tflite_index=index,
            is_variable=bool(t.IsVariable()) and data is None,
            packed_int4=packed_int4,
        )

    def buffer_data(self, buffer_index: int, n_buffers: int, where: str) -> np.ndarray | None:
        buf = self.model.Buffers(buffer_index)
        offset, size = buf.Offset(), buf.Size()
        if offset > 1:  # data stored after the flatbuffer (models over 2 GiB)
            if offset + size > len(self.data):
                raise self.fail(
                    f"{where}: buffer {buffer_index} data at byte {offset} is past the end"
                )
            return np.frombuffer(self.data, np.uint8, size, offset)
        n = self.length(buf.DataLength(), 1, f"buffer {buffer_index}")
        if n == 0:
            return None
        return buf.DataAsNumpy()

    def quantization(
        self, q: tflite.QuantizationParameters | None, shape: tuple[int, ...], where: str
    ) -> Quantization | None:
        if q is None:
            return None
        n_scale = self.length(q.ScaleLength(), 4, f"{where} quantization scales")
        n_zp = self.length(q.ZeroPointLength(), 8, f"{where} quantization zero points")
        if n_scale == 0:
            return None  # min/max only, or no quantization at all
        scale = np.array(q.ScaleAsNumpy(), dtype=np.float32)
        zero_point = (
            np.array(q.ZeroPointAsNumpy(), dtype=np.int64) if n_zp else np.zeros(n_scale, np.int64)
        )
        if zero_point.size == 1 and n_scale > 1:
            zero_point = np.repeat(zero_point, n_scale)
        if zero_point.size != n_scale:
            raise self.fail(f"{where} has {n_scale} scales but {zero_point.size} zero points")
        axis = q.QuantizedDimension()
        if n_scale > 1:
            # Quirk of real files: a 1-D per-channel bias may carry the weights' axis (e.g. 3
            # for depthwise). TFLite Micro accepts it; the only meaningful axis is 0.
            if len(shape) == 1 and axis != 0:
                axis = 0
            if not 0 <= axis < len(shape) or shape[axis] != n_scale:
                raise self.fail(
                    f"{where}: {n_scale} per-channel scales do not match axis {axis} "
                    f"of shape {list(shape)}"
                )
        else:
            axis = 0
        return Quantization(scale=scale, zero_point=zero_point, axis=axis)

    def opcode(self, code: tflite.OperatorCode) -> tuple[int, str]:
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if builtin == tflite.BuiltinOperator.CUSTOM:
            return builtin, f"CUSTOM({_text(code.CustomCode())})"
        return builtin, BUILTIN_NAMES.get(builtin, f"BUILTIN_{builtin}")

    def op(self, op: tflite.Operator, index: int, codes: list[tuple[int, str]]) -> Op:
        code_index = op.OpcodeIndex()
        if not 0 <= code_index < len(codes):
            raise self.fail(
                f"op {index} uses operator code {code_index}, but the model has {len(codes)}"
            )
        builtin, name = codes[code_index]
        where = f"op {index} ({name})"
        inputs = self.int_vector(op.InputsAsNumpy, op.InputsLength(), f"{where} inputs")
        outputs = self.int_vector(op.OutputsAsNumpy, op.OutputsLength(), f"{where} outputs")
        kind = KIND_BY_CODE.get(builtin, OpKind.UNSUPPORTED)
        options: OpOptions
        if kind is OpKind.UNSUPPORTED:
            options = UnsupportedOptions(name=name, builtin_code=builtin)
        else:
            options = self.options(kind, op, where)
        return Op(
            kind=kind,
            inputs=tuple(None if i < 0 else i for i in inputs),
            outputs=tuple(outputs),
            options=options,
        )

    def options(self, kind: OpKind, op: tflite.Operator, where: str) -> OpOptions:
        parse = _OPTION_PARSERS.get(kind)
        if parse is None:
            return NoOptions()
        options_class, expected_type, convert = parse
        table = op.BuiltinOptions()
        if table is None:
            if kind in _OPTIONS_REQUIRED:
                raise self.fail(f"{where} has no options")
            return convert(None)
        if op.BuiltinOptionsType() != expected_type:
            raise self.fail(
                f"{where} carries options of type {op.BuiltinOptionsType()}, "
                f"expected {expected_type}"
            )
        opts = options_class()
        opts.Init(table.Bytes, table.Pos)
        try:
            return convert(opts)
        except ValueError as e:  # an enum value outside its range
            raise self.fail(f"{where} has invalid options: {e}") from None


def _text(value: bytes | str | None) -> str:
    """A printable string: names end up in one-line error messages and generated C comments."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in value)


def _shape_option(o: Any) -> ReshapeOptions:
    if o is None or o.NewShapeLength() == 0:
        return ReshapeOptions(None)
    if o.NewShapeLength() > _MAX_RANK:
        raise ValueError(f"new_shape of rank {o.NewShapeLength()}")
    return ReshapeOptions(tuple(int(v) for v in o.NewShapeAsNumpy()))


def _squeeze_option(o: Any) -> SqueezeOptions:
    if o is None or o.SqueezeDimsLength() == 0:
        return SqueezeOptions(())
    if o.SqueezeDimsLength() > _MAX_RANK:
        raise ValueError(f"{o.SqueezeDimsLength()} squeeze dims")
    return SqueezeOptions(tuple(int(v) for v in o.SqueezeDimsAsNumpy()))


_OptionParser = tuple[type, int, Callable[[Any], OpOptions]]
_BO = tflite.BuiltinOptions

_OPTION_PARSERS: dict[OpKind, _OptionParser] = {
    OpKind.CONV_2D: (
        tflite.Conv2DOptions,
        _BO.Conv2DOptions,
        lambda o: Conv2DOptions(
            padding=Padding(o.Padding()),
            stride_h=o.StrideH(),
            stride_w=o.StrideW(),
            dilation_h=o.DilationHFactor(),
            dilation_w=o.DilationWFactor(),
            activation=Activation(o.FusedActivationFunction()),
        ),
    ),
    OpKind.DEPTHWISE_CONV_2D: (
        tflite.DepthwiseConv2DOptions,
        _BO.DepthwiseConv2DOptions,
        lambda o: DepthwiseConv2DOptions(
            padding=Padding(o.Padding()),
            stride_h=o.StrideH(),
            stride_w=o.StrideW(),
            depth_multiplier=o.DepthMultiplier(),
            dilation_h=o.DilationHFactor(),
            dilation_w=o.DilationWFactor(),
            activation=Activation(o.FusedActivationFunction()),
        ),
    ),
    OpKind.FULLY_CONNECTED: (
        tflite.FullyConnectedOptions,
        _BO.FullyConnectedOptions,
        lambda o: FullyConnectedOptions() if o is None else _fully_connected_options(o),
    ),
    OpKind.AVERAGE_POOL_2D: (tflite.Pool2DOptions, _BO.Pool2DOptions, lambda o: _pool(o)),
    OpKind.MAX_POOL_2D: (tflite.Pool2DOptions, _BO.Pool2DOptions, lambda o: _pool(o)),
    OpKind.ADD: (tflite.AddOptions, _BO.AddOptions, lambda o: _fused(o)),
    OpKind.SUB: (tflite.SubOptions, _BO.SubOptions, lambda o: _fused(o)),
    OpKind.MUL: (tflite.MulOptions, _BO.MulOptions, lambda o: _fused(o)),
    OpKind.DIV: (tflite.DivOptions, _BO.DivOptions, lambda o: _fused(o)),
    OpKind.RESHAPE: (tflite.ReshapeOptions, _BO.ReshapeOptions, _shape_option),
    OpKind.SQUEEZE: (tflite.SqueezeOptions, _BO.SqueezeOptions, _squeeze_option),
    OpKind.SOFTMAX: (
        tflite.SoftmaxOptions,
        _BO.SoftmaxOptions,
        lambda o: SoftmaxOptions(1.0 if o is None else float(o.Beta())),
    ),
    OpKind.CONCATENATION: (
        tflite.ConcatenationOptions,
        _BO.ConcatenationOptions,
        lambda o: ConcatenationOptions(
            axis=o.Axis(), activation=Activation(o.FusedActivationFunction())
        ),
    ),
    OpKind.LEAKY_RELU: (
        tflite.LeakyReluOptions,
        _BO.LeakyReluOptions,
        lambda o: LeakyReluOptions(float(o.Alpha())),
    ),
    OpKind.MEAN: (
        tflite.ReducerOptions,
        _BO.ReducerOptions,
        lambda o: ReducerOptions(False if o is None else bool(o.KeepDims())),
    ),
    OpKind.SUM: (
        tflite.ReducerOptions,
        _BO.ReducerOptions,
        lambda o: ReducerOptions(False if o is None else bool(o.KeepDims())),
    ),
    OpKind.REDUCE_MAX: (
        tflite.ReducerOptions,
        _BO.ReducerOptions,
        lambda o: ReducerOptions(False if o is None else bool(o.KeepDims())),
    ),
    OpKind.SVDF: (
        tflite.SVDFOptions,
        _BO.SVDFOptions,
        lambda o: SVDFOptions(
            rank=o.Rank(),
            activation=Activation(o.FusedActivationFunction()),
            asymmetric_quantize_inputs=bool(o.AsymmetricQuantizeInputs()),
        ),
    ),
    OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM: (
        tflite.UnidirectionalSequenceLSTMOptions,
        _BO.UnidirectionalSequenceLSTMOptions,
        lambda o: SequenceLSTMOptions(
            activation=Activation(o.FusedActivationFunction()),
            cell_clip=float(o.CellClip()),
            proj_clip=float(o.ProjClip()),
            time_major=bool(o.TimeMajor()),
            asymmetric_quantize_inputs=bool(o.AsymmetricQuantizeInputs()),
        ),
    ),
    OpKind.L2_NORMALIZATION: (tflite.L2NormOptions, _BO.L2NormOptions, lambda o: _fused(o)),
    OpKind.CUMSUM: (
        tflite.CumsumOptions,
        _BO.CumsumOptions,
        lambda o: CumsumOptions() if o is None else CumsumOptions(
            bool(o.Exclusive()), bool(o.Reverse())),
    ),
    OpKind.STRIDED_SLICE: (
        tflite.StridedSliceOptions,
        _BO.StridedSliceOptions,
        lambda o: (
            StridedSliceOptions()
            if o is None
            else StridedSliceOptions(
                begin_mask=o.BeginMask(),
                end_mask=o.EndMask(),
                ellipsis_mask=o.EllipsisMask(),
                new_axis_mask=o.NewAxisMask(),
                shrink_axis_mask=o.ShrinkAxisMask(),
                offset=bool(o.Offset()),
            )
        ),
    ),
    OpKind.SPLIT: (
        tflite.SplitOptions,
        _BO.SplitOptions,
        lambda o: SplitOptions(0 if o is None else o.NumSplits()),
    ),
    OpKind.SPLIT_V: (
        tflite.SplitVOptions,
        _BO.SplitVOptions,
        lambda o: SplitOptions(0 if o is None else o.NumSplits()),
    ),
    OpKind.PACK: (
        tflite.PackOptions,
        _BO.PackOptions,
        lambda o: PackOptions() if o is None else PackOptions(o.Axis(), o.ValuesCount()),
    ),
    OpKind.UNPACK: (
        tflite.UnpackOptions,
        _BO.UnpackOptions,
        lambda o: PackOptions() if o is None else PackOptions(o.Axis(), o.Num()),
    ),
    OpKind.GATHER: (
        tflite.GatherOptions,
        _BO.GatherOptions,
        lambda o: GatherOptions() if o is None else GatherOptions(o.Axis(), o.BatchDims()),
    ),
    OpKind.DEPTH_TO_SPACE: (
        tflite.DepthToSpaceOptions,
        _BO.DepthToSpaceOptions,
        lambda o: BlockSizeOptions(o.BlockSize()),
    ),
    OpKind.SPACE_TO_DEPTH: (
        tflite.SpaceToDepthOptions,
        _BO.SpaceToDepthOptions,
        lambda o: BlockSizeOptions(o.BlockSize()),
    ),
    OpKind.RESIZE_BILINEAR: (
        tflite.ResizeBilinearOptions,
        _BO.ResizeBilinearOptions,
        lambda o: _resize(o),
    ),
    OpKind.RESIZE_NEAREST_NEIGHBOR: (
        tflite.ResizeNearestNeighborOptions,
        _BO.ResizeNearestNeighborOptions,
        lambda o: _resize(o),
    ),
    OpKind.ARG_MAX: (tflite.ArgMaxOptions, _BO.ArgMaxOptions, lambda o: _arg_min_max(o)),
    OpKind.ARG_MIN: (tflite.ArgMinOptions, _BO.ArgMinOptions, lambda o: _arg_min_max(o)),
    OpKind.BATCH_MATMUL: (
        tflite.BatchMatMulOptions,
        _BO.BatchMatMulOptions,
        lambda o: (BatchMatMulOptions() if o is None
                   else BatchMatMulOptions(bool(o.AdjX()), bool(o.AdjY()))),
    ),
}

# Ops whose options have no meaningful default: a file without them is corrupt.
_OPTIONS_REQUIRED = frozenset(
    {
        OpKind.CONV_2D,
        OpKind.DEPTHWISE_CONV_2D,
        OpKind.AVERAGE_POOL_2D,
        OpKind.MAX_POOL_2D,
        OpKind.CONCATENATION,
        OpKind.LEAKY_RELU,
        OpKind.SVDF,
        OpKind.DEPTH_TO_SPACE,
        OpKind.SPACE_TO_DEPTH,
        OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM,
    }
)


def _resize(o: Any) -> ResizeOptions:
    if o is None:
        return ResizeOptions()
    return ResizeOptions(bool(o.AlignCorners()), bool(o.HalfPixelCenters()))


def _arg_min_max(o: Any) -> ArgMinMaxOptions:
    if o is None:
        return ArgMinMaxOptions()
    code = o.OutputType()
    if code not in (tflite.TensorType.INT32, tflite.TensorType.INT64):
        raise ValueError(f"output type {TENSOR_TYPE_NAMES.get(code, code)}")
    return ArgMinMaxOptions("int32" if code == tflite.TensorType.INT32 else "int64")


def _fully_connected_options(o: Any) -> FullyConnectedOptions:
    if o.WeightsFormat() != tflite.FullyConnectedOptionsWeightsFormat.DEFAULT:
        raise ValueError("shuffled weights format is not supported")
    return FullyConnectedOptions(
        activation=Activation(o.FusedActivationFunction()), keep_num_dims=bool(o.KeepNumDims())
    )


def _pool(o: Any) -> Pool2DOptions:
    return Pool2DOptions(
        padding=Padding(o.Padding()),
        stride_h=o.StrideH(),
        stride_w=o.StrideW(),
        filter_h=o.FilterHeight(),
        filter_w=o.FilterWidth(),
        activation=Activation(o.FusedActivationFunction()),
    )


def _fused(o: Any) -> FusedActivationOptions:
    if o is None:
        return FusedActivationOptions()
    return FusedActivationOptions(Activation(o.FusedActivationFunction()))


def _validate(graph: Graph) -> None:
    """Structural checks the rest of tinyhost relies on: every index in range."""
    n = len(graph.tensors)

    def fail(message: str) -> ModelFormatError:
        return ModelFormatError(f"{graph.source}: {message}")

    for role, indices in (("input", graph.inputs), ("output", graph.outputs)):
        for t in indices:
            if not 0 <= t < n:
                raise fail(f"graph {role} refers to tensor {t}, but the graph has {n}")
    for i, op in enumerate(graph.ops):
        for t in [*op.inputs, *op.outputs]:
            if t is not None and not 0 <= t < n:
                raise fail(f"op {i} ({op.name}) refers to tensor {t}, but the graph has {n}")
        if not op.outputs:
            raise fail(f"op {i} ({op.name}) has no output")
        for t in op.outputs:
            if graph.tensors[t].is_constant:
                raise fail(
                    f"op {i} ({op.name}) writes constant tensor {t} '{graph.tensors[t].name}'"
                )
        for attr in ("stride_h", "stride_w", "dilation_h", "dilation_w", "filter_h", "filter_w"):
            value = getattr(op.options, attr, 1)
            if not 1 <= value <= 1 << 16:
                raise fail(f"op {i} ({op.name}) has {attr} = {value}")
