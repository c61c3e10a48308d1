"""Checks that every op's tensors agree with each other before anything executes them.

A .tflite file can be well-formed flatbuffer-wise and still describe an impossible op (a
bit flip in a shape, a conv whose filter depth differs from its input). Kernels, the
planner and the code generators trust shapes, so inconsistencies are caught here, once,
with a message naming the op and tensor.
"""

from __future__ import annotations

import numpy as np

from tinyhost.errors import ModelFormatError
from tinyhost.ir import (
    Activation,
    BatchMatMulOptions,
    BlockSizeOptions,
    ConcatenationOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DwPwConv2DOptions,
    GatherOptions,
    Graph,
    Op,
    OpKind,
    PackOptions,
    Padding,
    Pool2DOptions,
    ResizeOptions,
    SequenceLSTMOptions,
    SVDFOptions,
    Tensor,
    dwpw_parts,
)
from tinyhost.passes import axes as movement

_SAME_SHAPE = frozenset(
    {
        OpKind.RELU,
        OpKind.RELU6,
        OpKind.LEAKY_RELU,
        OpKind.HARD_SWISH,
        OpKind.LOGISTIC,
        OpKind.TANH,
        OpKind.SOFTMAX,
        OpKind.QUANTIZE,
        OpKind.DEQUANTIZE,
        OpKind.ABS,
        OpKind.RSQRT,
        OpKind.ELU,
        OpKind.ZEROS_LIKE,
    }
)
_BINARY = frozenset({OpKind.ADD, OpKind.SUB, OpKind.MUL, OpKind.MAXIMUM, OpKind.MINIMUM,
                     OpKind.SQUARED_DIFFERENCE, OpKind.PRELU, OpKind.DIV})
# Broadcasting ops whose TFLite Micro kernels take at most this many dims when the input
# shapes differ (their slow broadcast paths index 4-D or 5-D arrays).
_MAX_BROADCAST_RANK = {OpKind.SQUARED_DIFFERENCE: 4, OpKind.PRELU: 4, OpKind.MAXIMUM: 5,
                       OpKind.MINIMUM: 5, OpKind.DIV: 5}
_MIN_INPUTS = {
    OpKind.CONV_2D: 2,
    OpKind.DEPTHWISE_CONV_2D: 2,
    OpKind.FULLY_CONNECTED: 2,
    OpKind.ADD: 2,
    OpKind.SUB: 2,
    OpKind.MUL: 2,
    OpKind.MAXIMUM: 2,
    OpKind.MINIMUM: 2,
    OpKind.SQUARED_DIFFERENCE: 2,
    OpKind.PRELU: 2,
    OpKind.DIV: 2,
    OpKind.FILL: 2,
    OpKind.PAD: 2,
    OpKind.PADV2: 2,
    OpKind.MEAN: 2,
    OpKind.SUM: 2,
    OpKind.REDUCE_MAX: 2,
    OpKind.TRANSPOSE: 2,
    OpKind.STRIDED_SLICE: 3,
    OpKind.CONCATENATION: 1,
    OpKind.SVDF: 3,  # input, weights_feature, weights_time; bias optional; state checked
    OpKind.EXPAND_DIMS: 2,
    OpKind.SPLIT: 2,
    OpKind.SPLIT_V: 3,
    OpKind.GATHER: 2,
    OpKind.RESIZE_BILINEAR: 2,
    OpKind.RESIZE_NEAREST_NEIGHBOR: 2,
    OpKind.ARG_MAX: 2,
    OpKind.ARG_MIN: 2,
    OpKind.BATCH_MATMUL: 2,
    OpKind.CUMSUM: 2,
}
# Ops whose output has exactly the input's shape (TFLite Micro's HaveSameShapes).
_EXACT_SHAPE = frozenset({OpKind.LOG_SOFTMAX, OpKind.L2_NORMALIZATION, OpKind.CUMSUM})


def conv_output_size(size: int, kernel: int, stride: int, dilation: int, padding: Padding) -> int:
    """TFLite's output extent for SAME / VALID padding."""
    effective = (kernel - 1) * dilation + 1
    if padding is Padding.SAME:
        return (size + stride - 1) // stride
    return (size - effective + stride) // stride


def check_graph(graph: Graph) -> None:
    """Raise ModelFormatError for the first op whose tensors are inconsistent."""
    _check_order(graph)
    for index, op in enumerate(graph.ops):
        if op.kind is not OpKind.UNSUPPORTED:
            _check_activations(graph, index, op)
            _check_op(graph, index, op)


def _check_activations(graph: Graph, index: int, op: Op) -> None:
    """Every int8 activation an op reads or writes has one finite positive scale and an int8
    zero point: a file from the field may carry anything (NaN, 0, -0.1, zero point 300)."""
    def fail(msg: str) -> ModelFormatError:
        return ModelFormatError(f"{graph.source}: op {index} ({op.name}): {msg}")

    for t in (*op.inputs, *op.outputs):
        if t is not None and graph.tensors[t].data is None:
            _check_quantized_activation(graph.tensors[t], fail)


def _check_order(graph: Graph) -> None:
    """Every tensor is available (constant, variable, graph input, or written earlier) when
    read."""
    available = {i for i, t in enumerate(graph.tensors) if t.is_constant or t.is_variable}
    available |= set(graph.inputs)
    for index, op in enumerate(graph.ops):
        for i in op.inputs:
            if i is not None and i not in available:
                raise ModelFormatError(
                    f"{graph.source}: op {index} ({op.name}) reads tensor {i} "
                    f"'{graph.tensors[i].name}' before any op writes it"
                )
        available.update(op.outputs)
    for i in graph.outputs:
        if i not in available:
            raise ModelFormatError(
                f"{graph.source}: graph output tensor {i} '{graph.tensors[i].name}' "
                "is never written"
            )


def _check_op(graph: Graph, index: int, op: Op) -> None:
    if isinstance(op.options, DwPwConv2DOptions):  # a fused pair (codegen/fold.py): its parts
        for part in dwpw_parts(op):
            _check_op(graph, index, part)
        return
    where = f"{graph.source}: op {index} ({op.name})"

    def fail(message: str) -> ModelFormatError:
        return ModelFormatError(f"{where}: {message}")

    required = _MIN_INPUTS.get(op.kind, 1)
    if len(op.inputs) < required or any(i is None for i in op.inputs[:required]):
        raise fail(f"has inputs {list(op.inputs)}; the first {required} are required")
    x = graph.tensors[op.inputs[0]]
    out = graph.tensors[op.outputs[0]]
    _check_quantized_activation(x, fail)
    _check_quantized_activation(out, fail)

    if op.kind in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D):
        _check_conv(graph, op, x, out, fail)
    elif op.kind is OpKind.FULLY_CONNECTED:
        _check_fully_connected(graph, op, x, out, fail)
    elif op.kind in (OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D):
        opt = op.options
        assert isinstance(opt, Pool2DOptions)
        if len(x.shape) != 4:
            raise fail(f"input shape {list(x.shape)} is not 4-D")
        expected = (
            x.shape[0],
            conv_output_size(x.shape[1], opt.filter_h, opt.stride_h, 1, opt.padding),
            conv_output_size(x.shape[2], opt.filter_w, opt.stride_w, 1, opt.padding),
            x.shape[3],
        )
        _expect_shape(out, expected, fail)
    elif op.kind in _BINARY:
        y = graph.tensors[op.inputs[1]]
        _check_quantized_activation(y, fail)
        try:
            broadcast = np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise fail(f"inputs {list(x.shape)} and {list(y.shape)} do not broadcast") from None
        _expect_shape(out, tuple(broadcast), fail)
        if op.kind is OpKind.MUL and x.dtype == np.int16:  # TFLM's MulPrepare
            for t in (x, y, out):
                if t.quant is not None and np.any(t.quant.zero_point != 0):
                    raise fail(f"int16 tensor '{t.name}' has zero point "
                               f"{int(t.quant.zero_point[0])}; TFLite Micro's int16 MUL "
                               "takes 0 only")
        limit = _MAX_BROADCAST_RANK.get(op.kind)
        if limit is not None and x.shape != y.shape and len(broadcast) > limit:
            raise fail(f"broadcasts {list(x.shape)} with {list(y.shape)} over "
                       f"{len(broadcast)} dims; TFLite Micro's kernel takes at most {limit}")
    elif op.kind is OpKind.FILL:
        value = graph.tensors[op.inputs[1]]
        if value.shape != ():
            raise fail(f"value '{value.name}' has shape {list(value.shape)}, not a scalar")
        if x.data is not None and [int(d) for d in np.asarray(x.data).reshape(-1)] != list(
            out.shape
        ):
            raise fail(f"dims {np.asarray(x.data).tolist()} differ from the output shape "
                       f"{list(out.shape)}")
    elif op.kind in _SAME_SHAPE or op.kind in (OpKind.RESHAPE, OpKind.SQUEEZE):
        _expect_elements(out, x, fail)
        if op.kind in (OpKind.LOGISTIC, OpKind.TANH) and x.dtype == np.int16:
            for t in (x, out):  # TFLM's Prepare: symmetric int16 only
                if t.quant is not None and np.any(t.quant.zero_point != 0):
                    raise fail(f"int16 tensor '{t.name}' has zero point "
                               f"{int(t.quant.zero_point[0])}; int16 {op.kind.name} takes 0")
    elif op.kind in _EXACT_SHAPE:
        _expect_shape(out, x.shape, fail)
        if op.kind is OpKind.CUMSUM:
            axis = _scalar(_constant(graph, op.inputs[1], "axis", fail), "axis", fail)
            if not -len(x.shape) <= axis < len(x.shape):
                raise fail(f"axis {axis} out of range for tensor '{x.name}' {list(x.shape)}")
    elif op.kind in (OpKind.PAD, OpKind.PADV2):
        pads = _constant(graph, op.inputs[1], "paddings", fail)
        if pads.shape != (len(x.shape), 2) or (pads < 0).any():
            raise fail(f"paddings {pads.tolist()} do not fit input rank {len(x.shape)}")
        expected = tuple(int(d + p[0] + p[1]) for d, p in zip(x.shape, pads))
        _expect_shape(out, expected, fail)
    elif op.kind is OpKind.CONCATENATION:
        _check_concatenation(graph, op, out, fail)
    elif op.kind is OpKind.TRANSPOSE:
        perm = _constant(graph, op.inputs[1], "permutation", fail).reshape(-1)
        if sorted(perm.tolist()) != list(range(len(x.shape))):
            raise fail(f"permutation {perm.tolist()} is not one of rank {len(x.shape)}")
        _expect_shape(out, tuple(x.shape[p] for p in perm), fail)
    elif op.kind in (OpKind.MEAN, OpKind.SUM, OpKind.REDUCE_MAX):
        axes = _constant(graph, op.inputs[1], "axes", fail).reshape(-1)
        if any(not -len(x.shape) <= a < len(x.shape) for a in axes):
            raise fail(f"axes {axes.tolist()} out of range for rank {len(x.shape)}")
    elif op.kind is OpKind.SVDF:
        _check_svdf(graph, op, x, out, fail)
    elif op.kind is OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM:
        _check_sequence_lstm(graph, op, x, out, fail)
    elif op.kind is OpKind.STRIDED_SLICE:
        for i, role in zip(op.inputs[1:4], ("begin", "end", "strides")):
            values = _constant(graph, i, role, fail)
            if values.size != len(x.shape):
                raise fail(f"{role} has {values.size} entries for rank {len(x.shape)}")
            if role == "strides" and (values == 0).any():
                raise fail("a stride is 0")
    elif op.kind in _MOVEMENT:
        _check_movement(graph, op, fail)


_MOVEMENT = frozenset({
    OpKind.EXPAND_DIMS, OpKind.SPLIT, OpKind.SPLIT_V, OpKind.PACK, OpKind.UNPACK, OpKind.GATHER,
    OpKind.DEPTH_TO_SPACE, OpKind.SPACE_TO_DEPTH, OpKind.RESIZE_BILINEAR,
    OpKind.RESIZE_NEAREST_NEIGHBOR, OpKind.ARG_MAX, OpKind.ARG_MIN, OpKind.BATCH_MATMUL,
})  # fmt: skip


def _movement_shapes(graph: Graph, op: Op, fail) -> list[tuple[int, ...]]:
    """The output shapes an op of _MOVEMENT must have, from its inputs and options."""
    t = [None if i is None else graph.tensors[i] for i in op.inputs]
    o = op.options
    try:
        if op.kind is OpKind.EXPAND_DIMS:
            axis = _scalar(_constant(graph, op.inputs[1], "axis", fail), "axis", fail)
            return [movement.expanded_shape(t[0].shape, axis)]
        if op.kind in (OpKind.SPLIT, OpKind.SPLIT_V):
            split_v = op.kind is OpKind.SPLIT_V
            x = t[0] if split_v else t[1]
            axis_in = op.inputs[2] if split_v else op.inputs[0]
            axis = movement.resolve_axis(
                _scalar(_constant(graph, axis_in, "axis", fail), "axis", fail),
                len(x.shape), op.name)
            n = len(op.outputs)
            if split_v:
                given = _constant(graph, op.inputs[1], "size_splits", fail).reshape(-1)
                sizes = movement.split_sizes(x.shape[axis], given.tolist(), op.name)
            elif x.shape[axis] % n:
                raise fail(f"dim {axis} of size {x.shape[axis]} does not split into {n}")
            else:
                sizes = [x.shape[axis] // n] * n
            if len(sizes) != n:  # (num_splits is not read: TFLM counts the op's outputs)
                raise fail(f"{len(sizes)} sizes for {n} outputs")
            return [(*x.shape[:axis], s, *x.shape[axis + 1:]) for s in sizes]
        if op.kind is OpKind.PACK:
            assert isinstance(o, PackOptions)
            shapes = {tuple(graph.tensors[i].shape) for i in op.inputs if i is not None}
            if len(shapes) != 1 or (o.count and o.count != len(op.inputs)):
                raise fail(f"inputs of shapes {sorted(shapes)} cannot be packed")
            shape = list(shapes.pop())
            shape.insert(movement.resolve_axis(o.axis, len(shape) + 1, op.name), len(op.inputs))
            return [tuple(shape)]
        if op.kind is OpKind.UNPACK:
            assert isinstance(o, PackOptions)
            shape = list(t[0].shape)
            axis = movement.resolve_axis(o.axis, len(shape), op.name)
            if shape[axis] != len(op.outputs) or (o.count and o.count != len(op.outputs)):
                raise fail(f"dim {axis} of size {shape[axis]} unpacks into {len(op.outputs)} "
                           f"(num {o.count})")
            del shape[axis]
            return [tuple(shape)] * len(op.outputs)
        if op.kind is OpKind.GATHER:
            assert isinstance(o, GatherOptions)
            x, idx = t[0].shape, t[1].shape
            if t[1].dtype != np.int32:
                raise fail(f"indices '{t[1].name}' are {t[1].dtype}, not int32")
            axis, batch = movement.gather_axes(len(x), len(idx), o)
            if tuple(x[:batch]) != tuple(idx[:batch]):
                raise fail(f"batch dims of {list(x)} and indices {list(idx)} differ")
            return [(*x[:axis], *idx[batch:], *x[axis + 1:])]
        if op.kind in (OpKind.DEPTH_TO_SPACE, OpKind.SPACE_TO_DEPTH):
            assert isinstance(o, BlockSizeOptions)
            b = o.block_size
            if len(t[0].shape) != 4 or b < 1:
                raise fail(f"input {list(t[0].shape)} with block size {b} (NHWC, block >= 1)")
            n, h, w, c = t[0].shape
            if op.kind is OpKind.DEPTH_TO_SPACE:
                if c % (b * b):
                    raise fail(f"depth {c} is not a multiple of {b}x{b}")
                return [(n, h * b, w * b, c // (b * b))]
            if h % b or w % b:
                raise fail(f"{h}x{w} is not a multiple of the block {b}")
            return [(n, h // b, w // b, c * b * b)]
        if op.kind in (OpKind.RESIZE_BILINEAR, OpKind.RESIZE_NEAREST_NEIGHBOR):
            assert isinstance(o, ResizeOptions)
            size = _constant(graph, op.inputs[1], "size", fail).reshape(-1)
            if len(t[0].shape) != 4 or size.size != 2 or (size < 1).any():
                raise fail(f"input {list(t[0].shape)} resized to {size.tolist()}")
            if op.kind is OpKind.RESIZE_BILINEAR and o.align_corners and o.half_pixel_centers:
                raise fail("align_corners and half_pixel_centers together")
            n, _, _, c = t[0].shape
            return [(n, int(size[0]), int(size[1]), c)]
        if op.kind is OpKind.BATCH_MATMUL:
            return [_batch_matmul_shape(t[0], t[1], o, fail)]
        # ARG_MAX / ARG_MIN
        out = graph.tensors[op.outputs[0]]
        if out.dtype != np.int32:
            raise fail(f"output '{out.name}' is {out.dtype}; TFLite Micro writes int32 only")
        axis = movement.resolve_axis(
            _scalar(_constant(graph, op.inputs[1], "axis", fail), "axis", fail),
            len(t[0].shape), op.name)
        return [tuple(d for i, d in enumerate(t[0].shape) if i != axis)]
    except ModelFormatError as e:
        if str(e).startswith(graph.source):
            raise
        raise fail(str(e)) from None


def _batch_matmul_shape(lhs: Tensor, rhs: Tensor, o, fail) -> tuple[int, ...]:
    """TFLM's BATCH_MATMUL Prepare: ranks 2-4, batch dims that broadcast, equal depths."""
    assert isinstance(o, BatchMatMulOptions)
    if not (2 <= len(lhs.shape) <= 4 and 2 <= len(rhs.shape) <= 4):
        raise fail(f"operands {list(lhs.shape)} and {list(rhs.shape)}: ranks 2 to 4 only")
    if lhs.dtype != rhs.dtype:
        raise fail(f"operands '{lhs.name}' {lhs.dtype} and '{rhs.name}' {rhs.dtype} differ")
    for t in (lhs, rhs):
        if t.dtype == np.int8 and (t.quant is None or t.quant.scale.size != 1):
            raise fail(f"'{t.name}' is not quantized per tensor (TFLite Micro's BATCH_MATMUL)")
    rank = max(len(lhs.shape), len(rhs.shape))
    a = (1,) * (rank - len(lhs.shape)) + tuple(lhs.shape)
    b = (1,) * (rank - len(rhs.shape)) + tuple(rhs.shape)
    rows, depth = (a[-1], a[-2]) if o.adj_x else (a[-2], a[-1])
    depth_b, cols = (b[-1], b[-2]) if o.adj_y else (b[-2], b[-1])
    batch = []
    for da, db in zip(a[:-2], b[:-2]):
        if da != db and 1 not in (da, db):
            raise fail(f"batch dims of {list(lhs.shape)} and {list(rhs.shape)} do not broadcast")
        batch.append(max(da, db) if 1 in (da, db) else da)
    if depth != depth_b:
        raise fail(f"depths {depth} and {depth_b} of {list(lhs.shape)} x {list(rhs.shape)} "
                   "differ")  # fmt: skip
    return (*batch, rows, cols)


def _check_movement(graph: Graph, op: Op, fail) -> None:
    expected = _movement_shapes(graph, op, fail)
    if len(expected) != len(op.outputs):
        raise fail(f"{len(op.outputs)} outputs, expected {len(expected)}")
    for t, shape in zip(op.outputs, expected):
        if op.kind is OpKind.EXPAND_DIMS:
            _expect_elements(graph.tensors[t], graph.tensors[op.inputs[0]], fail)
        else:
            _expect_shape(graph.tensors[t], shape, fail)


def _scalar(values: np.ndarray, role: str, fail) -> int:
    if values.size != 1:
        raise fail(f"{role} {values.tolist()}: one value expected")
    return int(values.reshape(-1)[0])


def _check_quantized_activation(t: Tensor, fail) -> None:
    if t.dtype == np.int8:
        if t.quant is None:
            raise fail(f"int8 tensor '{t.name}' has no quantization parameters")
        if t.quant.per_channel:
            raise fail(f"activation tensor '{t.name}' is quantized per channel")
        if not np.isfinite(t.quant.scale).all() or (t.quant.scale <= 0).any():
            raise fail(f"tensor '{t.name}' has scale {t.quant.scale.tolist()}")
        if not -128 <= int(t.quant.zero_point[0]) <= 127:
            raise fail(f"tensor '{t.name}' has zero point {int(t.quant.zero_point[0])}")


def _constant(graph: Graph, index: int | None, role: str, fail) -> np.ndarray:
    if index is None or graph.tensors[index].data is None:
        raise fail(f"{role} must be a constant tensor")
    return np.asarray(graph.tensors[index].data, np.int64)


def _expect_shape(out: Tensor, expected: tuple[int, ...], fail) -> None:
    if tuple(out.shape) != tuple(expected):
        raise fail(f"output '{out.name}' has shape {list(out.shape)}, expected {list(expected)}")


def _expect_elements(out: Tensor, x: Tensor, fail) -> None:
    if int(np.prod(out.shape)) != int(np.prod(x.shape)):
        raise fail(
            f"output '{out.name}' {list(out.shape)} and input '{x.name}' {list(x.shape)} "
            "differ in element count"
        )


def _check_weights(w: Tensor, channels: int, axis: int, x: Tensor, fail) -> None:
    if w.dtype != x.dtype and not (x.dtype in (np.float32, np.int16) and w.dtype == np.int8):
        raise fail(f"weights '{w.name}' are {w.dtype}, input is {x.dtype}")
    if w.dtype == np.int8:
        if w.quant is None:
            raise fail(f"int8 weights '{w.name}' have no quantization parameters")
        if w.quant.per_channel and (w.quant.axis != axis or w.quant.scale.size != channels):
            raise fail(
                f"weights '{w.name}' have {w.quant.scale.size} scales on axis {w.quant.axis}, "
                f"expected {channels} on axis {axis}"
            )
        if not np.isfinite(w.quant.scale).all() or (w.quant.scale <= 0).any():
            raise fail(f"weights '{w.name}' have a scale that is not finite and positive: "
                       f"{w.quant.scale.tolist()[:4]}")


def _check_bias(graph: Graph, op: Op, channels: int, fail) -> None:
    if len(op.inputs) < 3 or op.inputs[2] is None:
        return
    bias = graph.tensors[op.inputs[2]]
    if int(np.prod(bias.shape)) != channels:
        raise fail(
            f"bias '{bias.name}' has {int(np.prod(bias.shape))} values for {channels} channels"
        )


def _check_conv(graph: Graph, op: Op, x: Tensor, out: Tensor, fail) -> None:
    w = graph.tensors[op.inputs[1]]
    opt = op.options
    assert isinstance(opt, Conv2DOptions | DepthwiseConv2DOptions)
    if len(x.shape) != 4 or len(w.shape) != 4 or len(out.shape) != 4:
        raise fail(
            f"input {list(x.shape)}, filter {list(w.shape)}, output {list(out.shape)} not 4-D"
        )
    if op.kind is OpKind.CONV_2D:
        channels, axis = w.shape[0], 0
        if w.shape[3] == 0 or x.shape[3] % w.shape[3] != 0 or x.shape[3] != w.shape[3]:
            raise fail(f"filter depth {w.shape[3]} does not match input depth {x.shape[3]}")
    else:
        channels, axis = w.shape[3], 3
        if w.shape[0] != 1 or x.shape[3] == 0 or channels % x.shape[3] != 0:
            raise fail(f"depthwise filter {list(w.shape)} does not fit input depth {x.shape[3]}")
    _check_weights(w, channels, axis, x, fail)
    _check_bias(graph, op, channels, fail)
    if opt.explicit_padding is None:
        out_h = conv_output_size(x.shape[1], w.shape[1], opt.stride_h, opt.dilation_h,
                                 opt.padding)  # fmt: skip
        out_w = conv_output_size(x.shape[2], w.shape[2], opt.stride_w, opt.dilation_w,
                                 opt.padding)  # fmt: skip
    else:  # a PAD folded in (codegen.fold): VALID over the padded input
        top, bottom, left, right = opt.explicit_padding
        out_h = conv_output_size(x.shape[1] + top + bottom, w.shape[1], opt.stride_h,
                                 opt.dilation_h, Padding.VALID)  # fmt: skip
        out_w = conv_output_size(x.shape[2] + left + right, w.shape[2], opt.stride_w,
                                 opt.dilation_w, Padding.VALID)  # fmt: skip
    expected = (x.shape[0], out_h, out_w, channels)
    if min(expected) <= 0:
        raise fail(f"the filter {list(w.shape)} does not fit the input {list(x.shape)}")
    _expect_shape(out, expected, fail)


def _check_fully_connected(graph: Graph, op: Op, x: Tensor, out: Tensor, fail) -> None:
    w = graph.tensors[op.inputs[1]]
    if len(w.shape) != 2 or w.shape[1] == 0:
        raise fail(f"weights '{w.name}' have shape {list(w.shape)}, expected [out, in]")
    units, depth = w.shape
    elements = int(np.prod(x.shape))
    if elements % depth != 0:
        raise fail(f"input {list(x.shape)} does not split into rows of {depth}")
    _check_weights(w, units, 0, x, fail)
    if w.packed_int4 and w.quant is not None and w.quant.per_channel:
        raise fail(f"weights '{w.name}' are int4 per channel: TFLite Micro runs int4 "
                   "FULLY_CONNECTED weights per tensor only")  # fmt: skip
    _check_bias(graph, op, units, fail)
    if int(np.prod(out.shape)) != elements // depth * units or (
        out.shape and out.shape[-1] != units
    ):
        raise fail(
            f"output '{out.name}' {list(out.shape)} does not hold {elements // depth}x{units}"
        )


def _check_concatenation(graph: Graph, op: Op, out: Tensor, fail) -> None:
    opt = op.options
    assert isinstance(opt, ConcatenationOptions)
    shapes = [graph.tensors[i].shape for i in op.inputs if i is not None]
    rank = len(out.shape)
    axis = opt.axis + rank if opt.axis < 0 else opt.axis
    if not 0 <= axis < rank or any(len(s) != rank for s in shapes):
        raise fail(f"axis {opt.axis} or input ranks do not fit output rank {rank}")
    expected = list(shapes[0])
    expected[axis] = sum(s[axis] for s in shapes)
    for s in shapes:
        if any(a != b for d, (a, b) in enumerate(zip(s, shapes[0])) if d != axis):
            raise fail(f"input shapes {[list(s) for s in shapes]} differ off axis {axis}")
    _expect_shape(out, tuple(expected), fail)


def _check_svdf(graph: Graph, op: Op, x: Tensor, out: Tensor, fail) -> None:
    """TFLM's PrepareSvdf: shapes, the state a variable tensor, int8/int16/int32 types."""
    opt = op.options
    assert isinstance(opt, SVDFOptions)
    if len(op.inputs) != 5 or op.inputs[4] is None:
        raise fail(f"has inputs {list(op.inputs)}; SVDF takes 5, the last its state")
    wf, wt = graph.tensors[op.inputs[1]], graph.tensors[op.inputs[2]]
    state = graph.tensors[op.inputs[4]]
    if not state.is_variable:
        raise fail(f"state '{state.name}' is not a variable tensor")
    if len(x.shape) != 2 or len(wf.shape) != 2 or len(wt.shape) != 2:
        raise fail(f"input {list(x.shape)}, weights_feature {list(wf.shape)}, weights_time "
                   f"{list(wt.shape)} must be 2-D")
    batches, filters, memory = x.shape[0], wf.shape[0], wt.shape[1]
    if opt.rank < 1 or filters % opt.rank:
        raise fail(f"rank {opt.rank} does not divide the {filters} filters")
    units = filters // opt.rank
    if wf.shape[1] != x.shape[1] or wt.shape[0] != filters:
        raise fail(f"weights_feature {list(wf.shape)} / weights_time {list(wt.shape)} do not "
                   f"fit input {list(x.shape)}")
    if op.inputs[3] is not None and int(np.prod(graph.tensors[op.inputs[3]].shape)) != units:
        raise fail(f"bias '{graph.tensors[op.inputs[3]].name}' does not hold {units} values")
    _expect_shape(state, (batches, filters * memory), fail)
    _expect_shape(out, (batches, units), fail)
    if x.dtype == np.int8:
        want = {1: np.int8, 2: np.int16, 3: np.int32, 4: np.int16}
        for k, dtype in want.items():
            t = op.inputs[k]
            if t is not None and graph.tensors[t].dtype != dtype:
                raise fail(f"'{graph.tensors[t].name}' is {graph.tensors[t].dtype}; the int8 "
                           f"SVDF takes {np.dtype(dtype)} there")
        if out.dtype != np.int8:
            raise fail(f"output '{out.name}' is {out.dtype}, not int8")
        for t in (wf, wt, state):
            if t.quant is None or t.quant.per_channel:
                raise fail(f"'{t.name}' needs one (per-tensor) scale")
        if int(state.quant.zero_point[0]) != 0:
            raise fail(f"int16 state '{state.name}' has zero point "
                       f"{int(state.quant.zero_point[0])}, expected 0")
        if op.inputs[3] is not None:
            bias = graph.tensors[op.inputs[3]]
            want = float(np.float32(state.quant.scale[0]) * np.float32(wt.quant.scale[0]))
            got = float(bias.quant.scale[0]) if bias.quant is not None else float("nan")
            if not abs(got - want) < 1e-5:  # TFLM's PrepareSvdf refuses the model
                raise fail(f"bias '{bias.name}' has scale {got!r}, not state scale x "
                           f"weights_time scale ({want!r}) as TFLite Micro requires")


_LSTM_VARIANTS = (
    ((9, 10, 11), "peephole weights (cell_to_*_weights)"),
    ((16, 17), "a projection"),
    ((20, 21, 22, 23), "layer norm coefficients"),
)


def _check_sequence_lstm(graph: Graph, op: Op, x: Tensor, out: Tensor, fail) -> None:
    """TFLM's UnidirectionalSequenceLstmPrepare: 24 inputs; the standard LSTM only (no
    peephole, projection, layer norm or CIFG); shapes; both states variable; the int8
    types; sigmoid or tanh for the cell gate."""
    opt = op.options
    assert isinstance(opt, SequenceLSTMOptions)
    ins = op.inputs
    if len(ins) != 24:
        raise fail(f"has {len(ins)} inputs; UNIDIRECTIONAL_SEQUENCE_LSTM takes 24")
    for indices, what in _LSTM_VARIANTS:
        if any(ins[k] is not None for k in indices):
            raise fail(f"has {what}; TFLite Micro's LSTM does not support them")
    missing = [k for k in (*range(1, 9), 12, 13, 14, 15, 18, 19) if ins[k] is None]
    if missing:
        what = " (CIFG, which TFLite Micro does not support)" if 1 in missing else ""
        raise fail(f"lacks inputs {missing}{what}")
    hidden, cell = graph.tensors[ins[18]], graph.tensors[ins[19]]
    for t in (hidden, cell):
        if not t.is_variable:
            raise fail(f"state '{t.name}' is not a variable tensor")
    if opt.activation is not Activation.TANH:
        raise fail(f"cell gate activation {opt.activation.name}; TFLite Micro's LSTM takes "
                   "TANH")
    if opt.cell_clip < 0:
        raise fail(f"cell_clip {opt.cell_clip} is negative")
    if len(x.shape) != 3:
        raise fail(f"input {list(x.shape)} must be 3-D")
    batches = x.shape[1] if opt.time_major else x.shape[0]
    state = graph.tensors[ins[5]].shape[0] if len(graph.tensors[ins[5]].shape) == 2 else -1
    for k in (*range(1, 9), 12, 13, 14, 15):
        w = graph.tensors[ins[k]]
        want = (state,) if k > 8 else (state, x.shape[2] if k < 5 else state)
        if tuple(w.shape) != want:
            raise fail(f"'{w.name}' has shape {list(w.shape)}, expected {list(want)}")
    for t in (hidden, cell):
        if int(np.prod(t.shape)) != batches * state:
            raise fail(f"state '{t.name}' {list(t.shape)} does not hold {batches} x {state}")
    _expect_shape(out, (x.shape[0], x.shape[1], state), fail)
    if x.dtype == np.int8:
        want = {**{k: np.int8 for k in range(1, 9)}, **{k: np.int32 for k in (12, 13, 14, 15)},
                18: np.int8, 19: np.int16}
        for k, dtype in want.items():
            t = graph.tensors[ins[k]]
            if t.dtype != dtype:
                raise fail(f"'{t.name}' is {t.dtype}; the int8 LSTM takes {np.dtype(dtype)} "
                           "there")
        if out.dtype != np.int8:
            raise fail(f"output '{out.name}' is {out.dtype}, not int8")
        for k in (*range(1, 9), 18, 19):
            t = graph.tensors[ins[k]]
            if t.quant is None or t.quant.per_channel:
                raise fail(f"'{t.name}' needs one (per-tensor) scale")
            if k < 9 and int(t.quant.zero_point[0]) != 0:
                raise fail(f"weights '{t.name}' have zero point {int(t.quant.zero_point[0])}, "
                           "expected 0")
        if int(cell.quant.zero_point[0]) != 0:
            raise fail(f"int16 cell state '{cell.name}' has zero point "
                       f"{int(cell.quant.zero_point[0])}, expected 0")
        scale = float(cell.quant.scale[0])
        if scale <= 0 or scale != 2.0 ** round(np.log2(scale)):
            raise fail(f"cell state '{cell.name}' scale {scale!r} is not a power of two")
