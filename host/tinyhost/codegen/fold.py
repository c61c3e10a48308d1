"""Folding for the compiled backend: graph rewrites that drop an op whose work the next op's
kernel does for free (ARCHITECTURE.md §4.4b).

`fold_pads`: a PAD (or PADV2) that pads only height and width, with the zero point, and whose
output only one CONV_2D / DEPTHWISE_CONV_2D reads (as its input), becomes that conv's padding.
The conv kernels read padding as the input's zero point, which contributes
(zero_point + input_offset) * w = 0 to every sum, exactly as the materialized zeros did: the
result is bit-exact, the PAD's copy is gone and its output is never allocated. The conv carries
the total as `explicit_padding` (top, bottom, left, right), which no .tflite file can express.
The interpreter runs the graph as read (its blob format is fixed by BLOB_FORMAT.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tinyhost.arith.padding import compute_window_padding
from tinyhost.codegen.lower import Call, PadParams, lower_op
from tinyhost.ir import Conv2DOptions, DepthwiseConv2DOptions, Graph, Op, OpKind

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
