"""Patch-based inference: the first stage of a network run in row bands, below the
layer-by-layer memory bound (ARCHITECTURE.md §4.2b).

The stage is a chain of CONV_2D / DEPTHWISE_CONV_2D ops from the model's input, up to a split
op whose output T the rest of the network reads. T's rows are cut into `tiles` bands; each
band is computed through every op of the stage from the input rows its receptive field needs
(halo rows recomputed, padding at the image border exactly as the full layer's, none inside),
into its rows of T. Row bands of an NHWC tensor are contiguous, so a band reads the input and
writes T in place: no copies. The rest runs layer by layer, planned as usual with T as its
input.

Input streaming: the model input is not kept. T is placed so that each band's rows of T land
on input rows no later band reads (the input is consumed as the bands complete), which is what
lets the stage fit in little more than the input itself. th_model.h states that a patched model
does not preserve its input across an invoke.

`patch_graph` rewrites the graph into an equivalent one (bands as ordinary ops; the band inputs
as STRIDED_SLICEs of the input and T as the CONCATENATION of the bands, which the compiled
backend runs as views: no code), so the reference, lowering and code generation need nothing
new, and the reference of the rewrite is checked bit-exact against the original's.
`layout_patched` places everything in one arena and `check_patched` verifies it independently.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tinyhost.arith.padding import compute_window_padding
from tinyhost.errors import TinyhostError
from tinyhost.ir import (
    ConcatenationOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    Graph,
    Op,
    OpKind,
    StridedSliceOptions,
    Tensor,
)
from tinyhost.ir.stats import graph_stats, op_macs
from tinyhost.plan.options import PlanOptions
from tinyhost.plan.planner import MemoryPlan, PlannedBuffer, plan_memory
from tinyhost.plan.scratch import scratch_bytes
from tinyhost.plan.strategies import align_up

_CONVS = (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D)
DEFAULT_MAX_OVERHEAD = 0.10  # extra MACs from recomputed halos, share of the model's
MAX_TILES = 32


@dataclass(frozen=True)
class OpBand:
    """One op of the stage over one band: output rows [out_lo, out_hi), input rows
    [in_lo, in_hi), and the padding rows above and below that the band sees."""

    out_lo: int
    out_hi: int
    in_lo: int
    in_hi: int
    pad_top: int
    pad_bottom: int


@dataclass(frozen=True)
class PatchCandidate:
    split_op: int  # graph op index: the stage's last op
    tiles: int
    arena_bytes: int
    extra_macs: int
    macs: int  # the whole model's, unpatched

    @property
    def overhead(self) -> float:
        return self.extra_macs / self.macs if self.macs else 0.0

    def to_json(self) -> dict:
        return {"split_op": self.split_op, "tiles": self.tiles, "arena_bytes": self.arena_bytes,
                "extra_macs": self.extra_macs, "overhead": round(self.overhead, 4)}  # fmt: skip


@dataclass(frozen=True)
class Patched:
    """The rewritten graph and where its ops come from."""

    graph: Graph
    origin: tuple[int, ...]  # origin[i]: the source graph's op for rewritten op i
    band: tuple[int | None, ...]  # band of rewritten op i (None: not a stage op)
    views: frozenset[int]  # rewritten ops that are views (no code): band slices and the concat
    stage_ops: int  # the rewritten graph's first stage_ops ops are the stage
    stage: tuple[int, ...]  # source op indices of the stage, in order
    tiles: int
    input_tensor: int
    split_tensor: int
    bands: tuple[tuple[OpBand, ...], ...]  # bands[k][j]: stage op j over band k
    band_tensors: tuple[tuple[int, ...], ...]  # [k][j]: the rewritten tensor op j of band k
    band_inputs: tuple[int, ...]  # [k]: band k's input rows (a view of the input)


def stage_chain(graph: Graph) -> list[int]:
    """The ops a patched stage may hold: the chain of convolutions from the model's single
    4-D input, each the only reader of the previous one's output (graph op indices, in order)."""
    if len(graph.inputs) != 1:
        return []
    x = graph.inputs[0]
    t = graph.tensors[x]
    if len(t.shape) != 4 or t.shape[0] != 1 or t.dtype != np.int8:
        return []
    readers = graph.readers()
    chain: list[int] = []
    cur = x
    while True:
        users = readers.get(cur, [])
        if len(users) != 1 or (chain and cur in graph.outputs):
            break
        op = graph.ops[users[0]]
        if op.kind not in _CONVS or op.inputs[0] != cur or cur in op.inputs[1:]:
            break
        chain.append(users[0])
        cur = op.outputs[0]
    # ops are in execution order: the chain must be the first ops run on the input
    return chain if chain == sorted(chain) else []


def _window(graph: Graph, op: Op):  # noqa: ANN202
    o = op.options
    assert isinstance(o, Conv2DOptions | DepthwiseConv2DOptions)
    _, h, w, _ = graph.tensors[op.inputs[0]].shape
    _, kh, kw, _ = graph.tensors[op.inputs[1]].shape
    pad = compute_window_padding(o.padding, h, w, kh, kw, o.stride_h, o.stride_w,
                                 o.dilation_h, o.dilation_w, explicit=o.explicit_padding)
    return o, h, kh, pad


def band_geometry(graph: Graph, stage: list[int], tiles: int) -> list[list[OpBand]] | None:
    """bands[k][j]: the rows stage op j computes and reads for band k of the split output,
    or None when a band would be empty."""
    out_h = graph.tensors[graph.ops[stage[-1]].outputs[0]].shape[1]
    if not 2 <= tiles <= out_h:
        return None
    edges = [round(k * out_h / tiles) for k in range(tiles + 1)]
    bands: list[list[OpBand]] = []
    for k in range(tiles):
        lo, hi = edges[k], edges[k + 1]
        per_op: list[OpBand] = []
        for i in reversed(stage):
            o, h, kh, pad = _window(graph, graph.ops[i])
            need_lo = lo * o.stride_h - pad.top
            need_hi = (hi - 1) * o.stride_h - pad.top + (kh - 1) * o.dilation_h + 1
            in_lo, in_hi = max(0, need_lo), min(h, need_hi)
            if in_hi <= in_lo or hi <= lo:
                return None
            per_op.append(OpBand(lo, hi, in_lo, in_hi, in_lo - need_lo, need_hi - in_hi))
            lo, hi = in_lo, in_hi
        bands.append(per_op[::-1])
    return bands


def extra_macs(graph: Graph, stage: list[int], bands: list[list[OpBand]]) -> int:
    """MACs the bands add by recomputing halo rows (MACs are linear in output rows)."""
    extra = 0
    for j, i in enumerate(stage):
        op = graph.ops[i]
        height = graph.tensors[op.outputs[0]].shape[1]
        rows = sum(b[j].out_hi - b[j].out_lo for b in bands)
        extra += op_macs(graph, op) // height * (rows - height)
    return extra


# -- the rewrite ---------------------------------------------------------------------------------


def _const_i32(name: str, values: list[int]) -> Tensor:
    data = np.asarray(values, np.int32)
    return Tensor(name, (len(values),), np.dtype(np.int32), data)


def patch_graph(graph: Graph, split_op: int, tiles: int) -> Patched:
    """`graph` with its stage (up to `split_op`) run in `tiles` row bands (module docstring)."""
    chain = stage_chain(graph)
    if split_op not in chain:
        raise TinyhostError(f"op {split_op} does not end a stage that can be patched "
                         f"(the chain from the input is {chain})")  # fmt: skip
    stage = chain[: chain.index(split_op) + 1]
    geometry = band_geometry(graph, stage, tiles)
    if geometry is None:
        raise TinyhostError(f"{tiles} tiles do not split op {split_op}'s output")
    tensors = list(graph.tensors)
    x, t_split = graph.inputs[0], graph.ops[stage[-1]].outputs[0]

    def add(t: Tensor) -> int:
        tensors.append(t)
        return len(tensors) - 1

    ops: list[Op] = []
    origin: list[int] = []
    band_of: list[int | None] = []
    views: set[int] = set()
    band_tensors: list[tuple[int, ...]] = []
    band_inputs: list[int] = []
    outs_of_bands: list[int] = []
    for k, per_op in enumerate(geometry):
        xt = graph.tensors[x]
        first = per_op[0]
        rows = first.in_hi - first.in_lo
        src = add(replace(xt, name=f"{xt.name}/band{k}", shape=(1, rows, *xt.shape[2:]),
                          tflite_index=None))  # fmt: skip
        begin = add(_const_i32(f"patch/band{k}/begin", [0, first.in_lo, 0, 0]))
        end = add(_const_i32(f"patch/band{k}/end", [1, first.in_hi, *xt.shape[2:]]))
        strides = add(_const_i32(f"patch/band{k}/strides", [1, 1, 1, 1]))
        views.add(len(ops))
        ops.append(Op(OpKind.STRIDED_SLICE, (x, begin, end, strides), (src,),
                      StridedSliceOptions()))  # fmt: skip
        origin.append(stage[0])
        band_of.append(k)
        band_inputs.append(src)
        made: list[int] = []
        cur = src
        for j, i in enumerate(stage):
            op = graph.ops[i]
            b = per_op[j]
            _, _, _, pad = _window(graph, op)
            yt = graph.tensors[op.outputs[0]]
            out = add(replace(yt, name=f"{yt.name}/band{k}",
                              shape=(1, b.out_hi - b.out_lo, *yt.shape[2:]),
                              tflite_index=None))  # fmt: skip
            options = replace(op.options, explicit_padding=(b.pad_top, b.pad_bottom,
                                                            pad.left, pad.right))  # fmt: skip
            ops.append(replace(op, inputs=(cur, *op.inputs[1:]), outputs=(out,),
                               options=options))  # fmt: skip
            origin.append(i)
            band_of.append(k)
            made.append(out)
            cur = out
        band_tensors.append(tuple(made))
        outs_of_bands.append(cur)
    views.add(len(ops))
    ops.append(Op(OpKind.CONCATENATION, tuple(outs_of_bands), (t_split,),
                  ConcatenationOptions(axis=1)))  # fmt: skip
    origin.append(stage[-1])
    band_of.append(None)
    stage_ops = len(ops)
    done = set(stage)
    for i, op in enumerate(graph.ops):
        if i not in done:
            ops.append(op)
            origin.append(i)
            band_of.append(None)
    patched = replace(graph, tensors=tuple(tensors), ops=tuple(ops))
    return Patched(patched, tuple(origin), tuple(band_of), frozenset(views), stage_ops,
                   tuple(stage), tiles, x, t_split,
                   tuple(tuple(b) for b in geometry), tuple(band_tensors),
                   tuple(band_inputs))  # fmt: skip


# -- memory --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PatchedLayout:
    plan: MemoryPlan  # of patched.graph: every tensor's place, steps in its op order
    rest: MemoryPlan  # the layer-by-layer plan of the rest (T as its input), unshifted
    input_offset: int
    split_offset: int
    band_area: tuple[int, int]  # (offset, bytes): band buffers and their scratch


def _rest_graph(p: Patched) -> Graph:
    g = p.graph
    return replace(g, ops=g.ops[p.stage_ops:], inputs=(p.split_tensor,))


def layout_patched(p: Patched, options: PlanOptions,
                   rest: MemoryPlan | None = None) -> PatchedLayout:
    """One arena for the patched graph: the rest planned as usual (`rest`: that plan, when
    already made for this split), the stage streamed."""
    g, a = p.graph, options.alignment
    if rest is None:
        rest = plan_memory(_rest_graph(p), options=options)
    x, t = g.tensors[p.input_tensor], g.tensors[p.split_tensor]
    row_in = x.shape[2] * x.shape[3] * x.dtype.itemsize
    row_t = t.shape[2] * t.shape[3] * t.dtype.itemsize
    # T band k may land on input rows no later band reads: offset(T) - offset(X) <= room.
    # A one-op stage reads the input and writes T in the same call: not even its own rows.
    own = len(p.stage) == 1
    room = min((p.bands[k + (0 if own else 1)][0].in_lo * row_in - p.bands[k][-1].out_hi * row_t
                for k in range(p.tiles - (0 if own else 1))), default=0)  # fmt: skip
    delta = min(0, room) // a * a if room < 0 else 0  # offset(T) - offset(X)
    lo, hi = min(0, delta), max(x.size_bytes, delta + t.size_bytes)  # relative to X
    # band buffers: op j's band output in area j % 2 (the last op writes T), then scratch
    stage = [g.ops[i] for i in range(p.stage_ops)]
    sizes = [0, 0]
    for per_band in p.band_tensors:
        for j, tensor in enumerate(per_band[:-1]):
            sizes[j % 2] = max(sizes[j % 2], align_up(g.tensors[tensor].size_bytes, a))
    scratch = max((align_up(scratch_bytes(g, op, options), a) for op in stage
                   if op.kind in _CONVS), default=0)  # fmt: skip
    band_bytes = sizes[0] + sizes[1] + scratch
    t_rest = rest.tensor_offset(p.split_tensor)
    best = None
    for band_first in (True, False):
        x_off = max(t_rest - delta, -lo + (band_bytes if band_first else 0))
        x_off = align_up(x_off, a)
        shift = x_off + delta - t_rest
        band_off = 0 if band_first else align_up(x_off + hi, a)
        arena = max(rest.arena_bytes + shift, x_off + hi, band_off + band_bytes)
        if best is None or arena < best[0]:
            best = (align_up(arena, a), x_off, shift, band_off)
    assert best is not None
    arena, x_off, shift, band_off = best
    return PatchedLayout(_combined_plan(p, rest, arena, x_off, x_off + delta, shift, band_off,
                                        sizes, options),
                         rest, x_off, x_off + delta, (band_off, band_bytes))  # fmt: skip


def _combined_plan(p: Patched, rest: MemoryPlan, arena: int, x_off: int, t_off: int,
                   shift: int, band_off: int, sizes: list[int],
                   options: PlanOptions) -> MemoryPlan:
    g = p.graph
    n_stage = p.stage_ops
    x, t = g.tensors[p.input_tensor], g.tensors[p.split_tensor]
    row_in = x.shape[2] * x.shape[3] * x.dtype.itemsize
    row_t = t.shape[2] * t.shape[3] * t.dtype.itemsize
    buffers: list[PlannedBuffer] = []
    last_read = max(i for i in range(n_stage) if p.input_tensor in g.ops[i].inputs)
    buffers.append(PlannedBuffer("input (streamed)", "tensor", (p.input_tensor,), x_off,
                                 x.size_bytes, 0, last_read))  # fmt: skip
    scratch_off = band_off + sizes[0] + sizes[1]
    step = 0
    for k in range(p.tiles):
        first = p.bands[k][0]
        # the slice (a view of the input), then the stage's ops
        buffers.append(PlannedBuffer(f"input band {k}", "tensor", (p.band_inputs[k],),
                                     x_off + first.in_lo * row_in,
                                     g.tensors[p.band_inputs[k]].size_bytes, step, step + 1))
        step += 1
        for j, tensor in enumerate(p.band_tensors[k]):
            last = j == len(p.band_tensors[k]) - 1
            offset = (t_off + p.bands[k][j].out_lo * row_t if last
                      else band_off + (0 if j % 2 == 0 else sizes[0]))  # fmt: skip
            buffers.append(PlannedBuffer(f"band {k} op {p.stage[j]}", "tensor", (tensor,),
                                         offset, g.tensors[tensor].size_bytes, step,
                                         n_stage - 1 if last else step + 1))  # fmt: skip
            need = scratch_bytes(g, g.ops[step], options)
            if need:
                buffers.append(PlannedBuffer(f"band {k} op {p.stage[j]} scratch", "scratch",
                                             (), scratch_off, need, step, step, op=step))
            step += 1
    assert step == n_stage - 1  # the concat (a view) remains
    for b in rest.buffers:
        first = 0 if p.split_tensor in b.tensors else b.first_op + n_stage
        buffers.append(replace(b, offset=b.offset + shift, first_op=first,
                               last_op=b.last_op + n_stage,
                               op=None if b.op is None else b.op + n_stage))  # fmt: skip
    assert t_off == rest.tensor_offset(p.split_tensor) + shift
    order = tuple(range(n_stage)) + tuple(i + n_stage for i in rest.op_order)
    overlaps = tuple(replace(o, op=o.op + n_stage) for o in rest.overlaps)
    return MemoryPlan(arena, rest.lower_bound_bytes, rest.lower_bound_step + n_stage,
                      rest.peak_step + n_stage, options.alignment, order, tuple(buffers),
                      overlaps, f"patched ({p.tiles} row bands) + {rest.strategy}", options,
                      g)  # fmt: skip


def check_patched(p: Patched, layout: PatchedLayout) -> list[str]:
    """Every way the stage's layout is unsafe, as sentences (empty: safe). Independent of
    layout_patched: recomputes what each band reads and writes and checks that no write lands
    on bytes a later step still reads, and that the band area and the streamed region are
    apart and inside the arena."""
    g = p.graph
    errors: list[str] = []
    x, t = g.tensors[p.input_tensor], g.tensors[p.split_tensor]
    row_in = x.shape[2] * x.shape[3]
    row_t = t.shape[2] * t.shape[3]
    xo, to = layout.input_offset, layout.split_offset
    written: list[tuple[int, int]] = []  # T rows written so far, as byte ranges
    for k in range(p.tiles):
        first, last = p.bands[k][0], p.bands[k][-1]
        reads = (xo + first.in_lo * row_in, xo + first.in_hi * row_in)
        if len(p.stage) == 1:  # the same call reads the input and writes T
            written.append((to + last.out_lo * row_t, to + last.out_hi * row_t))
        for w0, w1 in written:
            if w0 < reads[1] and reads[0] < w1:
                errors.append(f"band {k} reads input bytes [{reads[0]}, {reads[1]}) that an "
                              f"earlier band's output [{w0}, {w1}) overwrote")  # fmt: skip
        if len(p.stage) > 1:
            written.append((to + last.out_lo * row_t, to + last.out_hi * row_t))
    expected = sum(b[-1].out_hi - b[-1].out_lo for b in p.bands)
    if expected != t.shape[1] or any(p.bands[k][-1].out_hi != p.bands[k + 1][-1].out_lo
                                     for k in range(p.tiles - 1)):  # fmt: skip
        errors.append("the bands do not cover the split output's rows exactly once")
    stream = (min(xo, to), max(xo + x.size_bytes, to + t.size_bytes))
    b0, nb = layout.band_area
    if nb and b0 < stream[1] and stream[0] < b0 + nb:
        errors.append(f"band area [{b0}, {b0 + nb}) overlaps the streamed input/output "
                      f"[{stream[0]}, {stream[1]})")  # fmt: skip
    arena = layout.plan.arena_bytes
    for lo, hi, what in ((*stream, "streamed region"), (b0, b0 + nb, "band area")):
        if lo < 0 or hi > arena:
            errors.append(f"{what} [{lo}, {hi}) outside the {arena}-byte arena")
    return errors


# -- choosing ------------------------------------------------------------------------------------


def candidates(graph: Graph, options: PlanOptions,
               tiles: int | None = None) -> list[PatchCandidate]:
    """Every (split op, tiles) the stage allows with its arena and extra MACs (tiles: only
    that count)."""
    chain = stage_chain(graph)
    macs = graph_stats(graph).macs
    out: list[PatchCandidate] = []
    for n_ops in range(1, len(chain) + 1):
        stage = chain[:n_ops]
        split_t = graph.ops[stage[-1]].outputs[0]
        if split_t in graph.outputs:
            break
        height = graph.tensors[split_t].shape[1]
        counts = [tiles] if tiles is not None else range(2, min(height, MAX_TILES) + 1)
        rest = None  # the same for every tile count of this split
        for n in counts:
            bands = band_geometry(graph, stage, n)
            if bands is None:
                continue
            p = patch_graph(graph, stage[-1], n)
            layout = layout_patched(p, options, rest)
            rest = layout.rest
            out.append(PatchCandidate(stage[-1], n, layout.plan.arena_bytes,
                                      extra_macs(graph, stage, bands), macs))
    return out


def choose(cands: list[PatchCandidate], unpatched_arena: int,
           max_overhead: float = DEFAULT_MAX_OVERHEAD) -> PatchCandidate | None:
    """The smallest arena within the MAC overhead, if it beats the unpatched one (ties: fewer
    extra MACs, then fewer tiles)."""
    ok = [c for c in cands if c.overhead <= max_overhead and c.arena_bytes < unpatched_arena]
    return min(ok, key=lambda c: (c.arena_bytes, c.extra_macs, c.tiles), default=None)


@dataclass(frozen=True)
class PatchRequest:
    """What the user asked for: `--patch auto` (tiles None) or `--patch N`."""

    tiles: int | None = None
    max_overhead: float = DEFAULT_MAX_OVERHEAD


def parse_patch(text: str | None, max_overhead: float = DEFAULT_MAX_OVERHEAD
                ) -> PatchRequest | None:  # fmt: skip
    """`--patch auto|off|N` (None and "off": no patching)."""
    if text is None or text == "off":
        return None
    if text == "auto":
        return PatchRequest(None, max_overhead)
    if text.isdigit() and int(text) >= 2:
        return PatchRequest(int(text), max_overhead)
    raise TinyhostError(f"--patch {text!r}: auto, off, or a number of tiles >= 2")


def pick(graph: Graph, options: PlanOptions, request: PatchRequest
         ) -> tuple[PatchCandidate | None, list[PatchCandidate], int]:  # fmt: skip
    """(the chosen candidate or None, every candidate, the unpatched arena)."""
    unpatched = plan_memory(graph, options=options).arena_bytes
    cands = candidates(graph, options, request.tiles)
    if request.tiles is None:
        return choose(cands, unpatched, request.max_overhead), cands, unpatched
    best = min(cands, key=lambda c: (c.arena_bytes, c.extra_macs), default=None)
    return best, cands, unpatched


def resolve_patch(graph: Graph, options: PlanOptions, request: PatchRequest) -> Patched | None:
    """The patched graph the request leads to; None when `auto` finds nothing better than
    layer by layer. `--patch N` that no stage allows is an error."""
    chosen, _, _ = pick(graph, options, request)
    if chosen is None:
        if request.tiles is not None:
            raise TinyhostError(f"{graph.source}: no stage of this model can run in "
                             f"{request.tiles} row bands (a chain of convolutions from the "
                             "input whose output is at least that many rows)")  # fmt: skip
        return None
    return patch_graph(graph, chosen.split_op, chosen.tiles)
