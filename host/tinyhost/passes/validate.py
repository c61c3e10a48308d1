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
    ConcatenationOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    Graph,
    Op,
    OpKind,
    Padding,
    Pool2DOptions,
    SVDFOptions,
    Tensor,
)

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
    OpKind.TRANSPOSE: 2,
    OpKind.STRIDED_SLICE: 3,
    OpKind.CONCATENATION: 1,
    OpKind.SVDF: 3,  # input, weights_feature, weights_time; bias optional; state checked
}


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
    elif op.kind is OpKind.MEAN:
        axes = _constant(graph, op.inputs[1], "axes", fail).reshape(-1)
        if any(not -len(x.shape) <= a < len(x.shape) for a in axes):
            raise fail(f"axes {axes.tolist()} out of range for rank {len(x.shape)}")
    elif op.kind is OpKind.SVDF:
        _check_svdf(graph, op, x, out, fail)
    elif op.kind is OpKind.STRIDED_SLICE:
        for i, role in zip(op.inputs[1:4], ("begin", "end", "strides")):
            values = _constant(graph, i, role, fail)
            if values.size != len(x.shape):
                raise fail(f"{role} has {values.size} entries for rank {len(x.shape)}")
            if role == "strides" and (values == 0).any():
                raise fail("a stride is 0")


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
