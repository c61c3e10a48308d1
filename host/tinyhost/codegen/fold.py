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
from tinyhost.ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DwPwConv2DOptions,
    FusedActivationOptions,
    Graph,
    Op,
    OpKind,
    Quantization,
    ResidualConv2DOptions,
)
from tinyhost.plan.scratch import is_pointwise_conv, s4_kernel

_PADS = (OpKind.PAD, OpKind.PADV2)
_CONVS = (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D)


@dataclass(frozen=True)
class FoldedPad:
    pad: int  # op index in the source graph
    conv: int  # the conv that does its work now (source graph index)


@dataclass(frozen=True)
class FusedResidual:
    conv: int  # source graph index of the CONV_2D (the fused op keeps its number)
    add: int  # the ADD it computes in its epilogue (source graph index)
    skip: int  # the ADD's other input (tensor index), overwritten by the sum


@dataclass(frozen=True)
class FusedDwPw:
    dw: int  # source graph index of the DEPTHWISE_CONV_2D (the fused op keeps its number)
    pw: int  # the pointwise CONV_2D that consumes its bands (source graph index)


@dataclass(frozen=True)
class Folded:
    graph: Graph
    origin: tuple[int, ...]  # origin[i]: the source graph's index of the folded graph's op i
    pads: tuple[FoldedPad, ...]
    fused: tuple[FusedResidual, ...] = ()
    fused_dw_pw: tuple[FusedDwPw, ...] = ()


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


def _window_fits(graph: Graph, op: Op) -> bool:
    """Every output row's window reaches the input (no row of padding only), so each band of
    output rows is a conv (or depthwise conv) over a non-empty run of input rows."""
    o = op.options
    assert isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions))
    _, h, w, _ = graph.tensors[op.inputs[0]].shape
    _, kh, kw, _ = graph.tensors[op.inputs[1]].shape
    oh = graph.tensors[op.outputs[0]].shape[1]
    p = compute_window_padding(o.padding, h, w, kh, kw, o.stride_h, o.stride_w,
                               o.dilation_h, o.dilation_w, explicit=o.explicit_padding)
    return p.top <= (kh - 1) * o.dilation_h and (oh - 1) * o.stride_h - p.top <= h - 1


def _conv_for_add(graph: Graph, add: int, slot: int, readers: dict[int, list[int]],
                  producer: dict[int, int]) -> int | str:
    """The CONV_2D producing input `slot` of ADD op `add` that can compute the ADD in its
    epilogue, or why not."""
    op = graph.ops[add]
    t, skip = op.inputs[slot], op.inputs[1 - slot]
    c = producer.get(t) if t is not None else None
    if c is None or graph.ops[c].kind is not OpKind.CONV_2D:
        return "not produced by a CONV_2D"
    conv = graph.ops[c]
    if type(conv.options) is not Conv2DOptions:
        return "the conv is fused already"
    if graph.tensors[conv.inputs[0]].dtype != np.int8:
        return "the conv is not int8"
    if t in graph.outputs or readers.get(t, []) != [add]:
        return "the conv output has other readers than the ADD (or is a model output)"
    if conv.inputs[0] == skip:
        return "the conv reads the skip tensor it would overwrite"
    if not _window_fits(graph, conv):
        return "an output row's window lies in padding only"
    return c


def residual_refusal(graph: Graph, index: int, readers: dict[int, list[int]],
                     producer: dict[int, int]) -> int | str:
    """For ADD op `index`: the conv that computes it in its epilogue, or why none can."""
    op = graph.ops[index]
    if op.kind is not OpKind.ADD or not isinstance(op.options, FusedActivationOptions):
        return "not an ADD"
    ts = [op.inputs[0], op.inputs[1], op.outputs[0]]
    if any(t is None or graph.tensors[t].dtype != np.int8 for t in ts):
        return "not int8"
    a, b, out = (graph.tensors[t] for t in ts)  # type: ignore[index]
    if not (tuple(a.shape) == tuple(b.shape) == tuple(out.shape)):
        return "broadcast (input shapes differ from the output's)"
    if len(out.shape) != 4 or out.shape[0] != 1:
        return "not one NHWC image (rank 4, batch 1)"
    if op.inputs[0] == op.inputs[1]:
        return "both inputs are the same tensor"
    found: list[int] = []
    reasons: list[str] = []
    for slot in (0, 1):
        skip = op.inputs[1 - slot]
        assert skip is not None
        if graph.tensors[skip].is_constant or graph.tensors[skip].is_variable:
            reasons.append("the skip is a constant or a variable")
            continue
        if skip in graph.outputs or any(r > index for r in readers.get(skip, [])):
            reasons.append("the skip is read after the ADD (or is a model output)")
            continue
        c = _conv_for_add(graph, index, slot, readers, producer)
        if isinstance(c, str):
            reasons.append(c)
        else:
            found.append(c)
    if found:
        return max(found)  # the conv run last: its input lives least longer
    return "; ".join(dict.fromkeys(reasons))


def fuse_residual_adds(graph: Graph, exclude: frozenset[int] = frozenset()
                       ) -> tuple[Graph, tuple[int, ...], tuple[tuple[int, int, int], ...]]:
    """`graph` with each residual ADD computed in the epilogue of the CONV_2D producing one of
    its inputs (ARCHITECTURE.md §4.4b): one op, at the ADD's place, reading the conv's input
    and the skip and writing the sum (the ADD's output, which the planner may put over the
    skip). Returns the graph, the kept ops (indices into `graph`) and (conv, add, skip) per
    fusion; ops in `exclude` (e.g. a patched stage) are left alone."""
    readers = graph.readers()
    producer = {t: i for i, op in enumerate(graph.ops) for t in op.outputs}
    ops = list(graph.ops)
    gone: set[int] = set()
    pairs: list[tuple[int, int, int]] = []
    for i, op in enumerate(graph.ops):
        if op.kind is not OpKind.ADD or i in exclude:
            continue
        c = residual_refusal(graph, i, readers, producer)
        if isinstance(c, str) or c in exclude or c in gone:
            continue
        conv = graph.ops[c]
        t = conv.outputs[0]
        skip = op.inputs[1] if op.inputs[0] == t else op.inputs[0]
        assert skip is not None and isinstance(op.options, FusedActivationOptions)
        o = conv.options
        options = ResidualConv2DOptions(**vars(o), conv_output=t,
                                        add_inputs=(op.inputs[0], op.inputs[1]),
                                        add=op.options)  # type: ignore[arg-type]
        head = (*conv.inputs[:3], None, None)[:3]  # (input, filter, bias or None)
        ops[i] = Op(OpKind.CONV_2D, (*head, skip), op.outputs, options)
        gone.add(c)
        pairs.append((c, i, skip))
    keep = tuple(i for i in range(len(ops)) if i not in gone)
    return replace(graph, ops=tuple(ops[i] for i in keep)), keep, tuple(pairs)


def dwpw_refusal(graph: Graph, index: int, readers: dict[int, list[int]]) -> int | str:
    """For DEPTHWISE_CONV_2D op `index`: the pointwise CONV_2D that can consume its output in
    bands (ARCHITECTURE.md §4.4b), or why none can."""
    op = graph.ops[index]
    if op.kind is not OpKind.DEPTHWISE_CONV_2D or type(op.options) is not DepthwiseConv2DOptions:
        return "not a DEPTHWISE_CONV_2D (or fused already)"
    x, mid = op.inputs[0], op.outputs[0]
    if x is None or any(graph.tensors[t].dtype != np.int8 for t in (x, mid)):
        return "not int8"
    if len(graph.tensors[x].shape) != 4 or graph.tensors[x].shape[0] != 1:
        return "not one NHWC image (rank 4, batch 1)"
    if graph.tensors[op.inputs[1]].data is None or s4_kernel(graph, op):
        return "its filter is not constant int8"
    if mid in graph.outputs or len(readers.get(mid, [])) != 1:
        return "the depthwise output has other readers than one conv (or is a model output)"
    j = readers[mid][0]
    pw = graph.ops[j]
    if (pw.kind is not OpKind.CONV_2D or type(pw.options) is not Conv2DOptions
            or pw.inputs[0] != mid or mid in pw.inputs[1:]):  # fmt: skip
        return "not read by a plain CONV_2D as its input"
    if not is_pointwise_conv(graph, pw) or graph.tensors[pw.inputs[1]].shape[3] != \
            graph.tensors[mid].shape[3] or graph.tensors[pw.inputs[1]].data is None:
        return "the conv is not pointwise (1x1, stride 1, no padding, no groups)"
    if s4_kernel(graph, pw) or graph.tensors[pw.outputs[0]].dtype != np.int8:
        return "the pointwise conv is not int8 with int8 weights"
    if tuple(graph.tensors[pw.outputs[0]].shape[:3]) != tuple(graph.tensors[mid].shape[:3]):
        return "the pointwise output's plane differs from the depthwise output's"
    if not _window_fits(graph, op):
        return "an output row's window lies in padding only"
    return j


def fuse_dw_pw(graph: Graph, exclude: frozenset[int] = frozenset()
               ) -> tuple[Graph, tuple[int, ...], tuple[tuple[int, int], ...]]:
    """`graph` with each DEPTHWISE_CONV_2D whose output only a pointwise CONV_2D reads fused
    with it (ARCHITECTURE.md §4.4b): one op at the depthwise's place, reading the depthwise
    input and both convs' constants and writing the pointwise output; the depthwise output
    is never planned. Returns the graph, the kept ops (indices into `graph`) and (dw, pw)
    per fusion; depthwise ops in `exclude` are left alone."""
    readers = graph.readers()
    ops = list(graph.ops)
    gone: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for i, op in enumerate(graph.ops):
        if op.kind is not OpKind.DEPTHWISE_CONV_2D or i in exclude:
            continue
        j = dwpw_refusal(graph, i, readers)
        if isinstance(j, str):
            continue
        pw = graph.ops[j]
        assert isinstance(op.options, DepthwiseConv2DOptions)
        assert isinstance(pw.options, Conv2DOptions)
        options = DwPwConv2DOptions(**vars(op.options), dw_output=op.outputs[0],
                                    pw=pw.options)  # fmt: skip
        dw_head = (*op.inputs[:3], None, None)[:3]
        pw_tail = (*pw.inputs[1:3], None, None)[:2]
        ops[i] = Op(OpKind.DEPTHWISE_CONV_2D, (*dw_head, *pw_tail), pw.outputs, options)
        gone.add(j)
        pairs.append((i, j))
    keep = tuple(i for i in range(len(ops)) if i not in gone)
    return replace(graph, ops=tuple(ops[i] for i in keep)), keep, tuple(pairs)


def fold_for_compiled(graph: Graph, fuse_residual: bool = False,
                      exclude: frozenset[int] = frozenset(), fuse_dwpw: bool = False,
                      exclude_dwpw: frozenset[int] = frozenset()) -> Folded:
    """Every rewrite the compiled backend makes: PADs folded, one-channel depthwise as conv,
    with `fuse_residual` the residual ADDs computed by the conv before them (but the ADDs of
    `exclude`, source graph numbers), and with `fuse_dwpw` each depthwise fused with the
    pointwise conv reading its output (but the depthwise ops of `exclude_dwpw`)."""
    folded = fold_pads(graph)
    folded = replace(folded, graph=depthwise_as_conv(folded.graph))
    if fuse_residual:
        folded = _fuse_residual(folded, exclude)
    if fuse_dwpw:
        skip = frozenset(i for i, o in enumerate(folded.origin) if o in exclude_dwpw)
        g, keep, pairs = fuse_dw_pw(folded.graph, skip)
        if pairs:
            fused = tuple(FusedDwPw(folded.origin[i], folded.origin[j]) for i, j in pairs)
            folded = replace(folded, graph=g, origin=tuple(folded.origin[i] for i in keep),
                             fused_dw_pw=fused)  # fmt: skip
    return folded


def _fuse_residual(folded: Folded, exclude: frozenset[int]) -> Folded:
    skip = frozenset(i for i, o in enumerate(folded.origin) if o in exclude)
    g, keep, pairs = fuse_residual_adds(folded.graph, skip)
    if not pairs:
        return folded
    origin = list(folded.origin)
    for c, i, _ in pairs:
        origin[i] = folded.origin[c]  # the fused op keeps the conv's number
    fused = tuple(FusedResidual(folded.origin[c], folded.origin[i], skip) for c, i, skip in pairs)
    return Folded(g, tuple(origin[i] for i in keep), folded.pads, fused)
