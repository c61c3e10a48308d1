"""Graph rewrites before lowering: ops whose work another kernel does better or for free
(ARCHITECTURE.md §4.4b). Each keeps every activation tensor and its values: the reference of the
rewritten graph is bit-exact with the original's.

`fold_pads` (compiled backend): a PAD (or PADV2) that pads only height and width, with the zero
point, and whose output only one CONV_2D / DEPTHWISE_CONV_2D reads (as its input), becomes that
conv's padding. The conv kernels read padding as the input's zero point, which contributes
(zero_point + input_offset) * w = 0 to every sum, exactly as the materialized zeros did: the
result is bit-exact, the PAD's copy is gone and its output is never allocated. The conv carries
the total as `explicit_padding` (top, bottom, left, right), which no .tflite file can express.
The interpreter runs PADs as read (its blob format is fixed by BLOB_FORMAT.md).

`depthwise_as_conv` (both backends): a DEPTHWISE_CONV_2D on a one-channel input with
multiplier M is a CONV_2D with Cin = 1 and M output channels (output m = sum over taps of
x * w[..., m], the same per-channel requantization): its filter [1, kh, kw, M] becomes
[M, kh, kw, 1] (per-channel axis 3 -> 0), and it runs on the few-input-channel conv path
instead of a depthwise path built for many channels (micro_speech's 10x8 layer, multiplier 8:
0.05 -> ~0.5 MAC/instruction).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tinyhost.arith.padding import compute_window_padding
from tinyhost.codegen.lower import Call, PadParams, lower_op
from tinyhost.ir import Conv2DOptions, DepthwiseConv2DOptions, Graph, Op, OpKind, Quantization

_PADS = (OpKind.PAD, OpKind.PADV2)
_CONVS = (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D)


@dataclass(frozen=True)
class FoldedPad:
    pad: int  # op index in the source graph
    conv: int  # the conv that does its work now (source graph index)


@dataclass(frozen=True)
class Folded:
    graph: Graph
    origin: tuple[int, ...]  # origin[i]: the source graph's index of the folded graph's op i
    pads: tuple[FoldedPad, ...]


def _same_quantization(graph: Graph, a: int, b: int) -> bool:
    qa, qb = graph.tensors[a].quant, graph.tensors[b].quant
    return (qa is not None and qb is not None and qa.scale.size == qb.scale.size == 1
            and float(qa.scale[0]) == float(qb.scale[0])
            and int(qa.zero_point[0]) == int(qb.zero_point[0]))  # fmt: skip


def _foldable(graph: Graph, index: int, readers: dict[int, list[int]]) -> int | None:
    """The conv that can absorb PAD op `index`, or None."""
    op = graph.ops[index]
    call = lower_op(graph, index)
    if not isinstance(call, Call) or not isinstance(call.params, PadParams):
        return None
    p = call.params
    if len(p.before) != 4 or p.before[0] or p.after[0] or p.before[3] or p.after[3]:
        return None  # batch or channel padding: not a window's padding
    out = op.outputs[0]
    users = readers.get(out, [])
    if out in graph.outputs or len(users) != 1:
        return None
    conv = graph.ops[users[0]]
    if conv.kind not in _CONVS or conv.inputs[0] != out or out in conv.inputs[1:]:
        return None
    quant = graph.tensors[out].quant
    if not _same_quantization(graph, op.inputs[0], out) or quant is None:
        return None
    if p.pad_value != int(quant.zero_point[0]) or graph.tensors[out].dtype != np.int8:
        return None
    return users[0]


def _absorb(graph: Graph, conv: Op, pad: PadParams, source: int) -> Op:
    o = conv.options
    assert isinstance(o, Conv2DOptions | DepthwiseConv2DOptions)
    _, h, w, _ = graph.tensors[conv.inputs[0]].shape  # the padded input
    _, kh, kw, _ = graph.tensors[conv.inputs[1]].shape
    own = compute_window_padding(o.padding, h, w, kh, kw, o.stride_h, o.stride_w,
                                 o.dilation_h, o.dilation_w, explicit=o.explicit_padding)
    total = (own.top + pad.before[1], own.bottom + pad.after[1],
             own.left + pad.before[2], own.right + pad.after[2])  # fmt: skip
    return replace(conv, inputs=(source, *conv.inputs[1:]),
                   options=replace(o, explicit_padding=total))  # fmt: skip


def fold_pads(graph: Graph) -> Folded:
    """`graph` with every foldable PAD absorbed by the conv after it (module docstring)."""
    readers = graph.readers()
    ops = list(graph.ops)
    folded: list[FoldedPad] = []
    for i, op in enumerate(graph.ops):
        if op.kind not in _PADS:
            continue
        j = _foldable(graph, i, readers)
        if j is None:
            continue
        call = lower_op(graph, i)
        assert isinstance(call, Call) and isinstance(call.params, PadParams)
        ops[j] = _absorb(graph, ops[j], call.params, op.inputs[0])
        folded.append(FoldedPad(i, j))
    gone = {f.pad for f in folded}
    origin = tuple(i for i in range(len(ops)) if i not in gone)
    return Folded(replace(graph, ops=tuple(ops[i] for i in origin)), origin, tuple(folded))


def _as_conv(graph: Graph, op: Op, tensors: list) -> Op | None:
    """The CONV_2D doing a one-channel depthwise conv's work (new filter appended), or None."""
    o = op.options
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    if (not isinstance(o, DepthwiseConv2DOptions) or len(x.shape) != 4 or x.shape[3] != 1
            or w.data is None or len(w.shape) != 4 or w.shape[0] != 1
            or w.dtype != np.int8 or x.dtype != np.int8):  # fmt: skip
        return None
    q = w.quant
    if q is not None and q.per_channel and q.axis != 3:
        return None
    quant = None if q is None else Quantization(q.scale, q.zero_point,
                                                0 if q.per_channel else q.axis)  # fmt: skip
    data = np.ascontiguousarray(np.transpose(np.asarray(w.data), (3, 1, 2, 0)))
    tensors.append(replace(w, name=f"{w.name}/as_conv", shape=data.shape, data=data,
                           quant=quant, tflite_index=None))  # fmt: skip
    options = Conv2DOptions(o.padding, o.stride_h, o.stride_w, o.dilation_h, o.dilation_w,
                            o.activation, o.explicit_padding)  # fmt: skip
    return Op(OpKind.CONV_2D, (op.inputs[0], len(tensors) - 1, *op.inputs[2:]), op.outputs,
              options)  # fmt: skip


def depthwise_as_conv(graph: Graph) -> Graph:
    """`graph` with every one-channel depthwise conv as a CONV_2D (module docstring)."""
    tensors = list(graph.tensors)
    ops = list(graph.ops)
    for i, op in enumerate(graph.ops):
        if op.kind is OpKind.DEPTHWISE_CONV_2D:
            conv = _as_conv(graph, op, tensors)
            if conv is not None:
                ops[i] = conv
    if len(tensors) == len(graph.tensors):
        return graph
    return replace(graph, tensors=tuple(tensors), ops=tuple(ops))


def fold_for_compiled(graph: Graph) -> Folded:
    """Every rewrite the compiled backend makes: PADs folded, one-channel depthwise as conv."""
    folded = fold_pads(graph)
    return replace(folded, graph=depthwise_as_conv(folded.graph))
