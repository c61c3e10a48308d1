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

from tinyhost.arith.constant_channels import constant_channels
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
# No --patch on the compiled backend under --optimize speed (default_patch): `auto` within
# 3% estimated extra instructions, taken only where the arena drops by at least 10%.
SPEED_MAX_OVERHEAD = 0.03
SPEED_MIN_SAVING = 0.10
MAX_TILES = 32


@dataclass(frozen=True)
class OpBand:
    """One op of the stage over one band: the output rows it computes [out_lo, out_hi) (none
    when equal), the input rows it reads [in_lo, in_hi), and the padding rows above and below
    that the band sees."""

    out_lo: int
    out_hi: int
    in_lo: int
    in_hi: int
    pad_top: int
    pad_bottom: int

    @property
    def runs(self) -> bool:
        return self.out_hi > self.out_lo


# What a patched stage costs beyond its extra MACs, in executed instructions: each band op
# call repeats its kernel's per-call setup (requantization tables, plane padding, staging)
# and each kept-rows move copies. Fit on the compiled backend's VWW bands on Cortex-M4
# (bench/plan.py --patch: 3,400-4,100 instructions per call with kept halos, about 1.5 per
# recomputed MAC); an estimate for choosing, not a measurement.
INSTRUCTIONS_PER_CALL = 4000
INSTRUCTIONS_PER_EXTRA_MAC = 1.5


@dataclass(frozen=True)
class PatchCandidate:
    split_op: int  # graph op index: the stage's last op
    tiles: int
    arena_bytes: int
    extra_macs: int
    macs: int  # the whole model's, unpatched
    keep_halo: bool = True  # halo rows kept between bands (else recomputed)
    calls: int = 0  # the stage's kernel calls and moves (views cost nothing)

    @property
    def overhead(self) -> float:
        return self.extra_macs / self.macs if self.macs else 0.0

    @property
    def instruction_overhead(self) -> float:
        """Estimated extra instructions over the model's MACs (a floor for its instructions
        on our kernels, so the share is not underestimated by much)."""
        extra = (self.extra_macs * INSTRUCTIONS_PER_EXTRA_MAC
                 + self.calls * INSTRUCTIONS_PER_CALL)  # fmt: skip
        return extra / self.macs if self.macs else 0.0

    def to_json(self) -> dict:
        return {"split_op": self.split_op, "tiles": self.tiles, "arena_bytes": self.arena_bytes,
                "extra_macs": self.extra_macs, "overhead": round(self.overhead, 4),
                "calls": self.calls,
                "instruction_overhead_estimate": round(self.instruction_overhead, 4),
                "halo": "kept" if self.keep_halo else "recomputed"}  # fmt: skip


# Where a stage tensor lives: ("x", byte offset in the input), ("t", byte offset in the split
# output), or ("area", (op j, band k or -1), byte offset in that rows buffer): op j's rows
# buffer in band k, or in every band when halo rows are kept (kept rows, new rows and the
# views of them), which layout_patched places.
Placement = tuple


@dataclass(frozen=True)
class Patched:
    """The rewritten graph and where its ops come from."""

    graph: Graph
    origin: tuple[int, ...]  # origin[i]: the source graph's op for rewritten op i
    band: tuple[int | None, ...]  # band of rewritten op i (None: not a stage op)
    views: frozenset[int]  # rewritten ops that are views (no code): input rows, concats
    moves: frozenset[int]  # rewritten ops that move kept halo rows to their area's start
    stage_ops: int  # the rewritten graph's first stage_ops ops are the stage
    stage: tuple[int, ...]  # source op indices of the stage, in order
    tiles: int
    keep_halo: bool
    input_tensor: int
    split_tensor: int
    bands: tuple[tuple[OpBand, ...], ...]  # bands[k][j]: stage op j over band k
    placement: dict[int, Placement]  # every stage tensor's place
    reads_input: tuple[bool, ...]  # [j]: stage op j reads the model input

    def buffer_bytes(self) -> dict[tuple[int, int], int]:
        """Bytes of each rows buffer (op j, band k): the most any of its tensors reaches."""
        sizes: dict[tuple[int, int], int] = {}
        for t, place in self.placement.items():
            if place[0] == "area":
                end = place[2] + self.graph.tensors[t].size_bytes
                sizes[place[1]] = max(sizes.get(place[1], 0), end)
        return sizes


def _is_stage_add(graph: Graph, op: Op) -> bool:
    """An ADD of two int8 tensors of one 4-D shape (no broadcast): row bands pass through."""
    if op.kind is not OpKind.ADD or len(op.inputs) != 2 or None in op.inputs:
        return False
    a, b = (graph.tensors[t] for t in op.inputs)  # type: ignore[index]
    y = graph.tensors[op.outputs[0]]
    return a.shape == b.shape == y.shape and len(y.shape) == 4 and a.data is None is b.data


def stage_chain(graph: Graph) -> list[int]:
    """The ops a patched stage may hold, in execution order: from the first op on, the
    CONV_2D / DEPTHWISE_CONV_2D ops and residual ADDs that read only the model's single 4-D
    input or tensors made before them in the stage (graph op indices). A prefix of it is a
    stage when only its last op's output is read after it."""
    if len(graph.inputs) != 1:
        return []
    x = graph.inputs[0]
    t = graph.tensors[x]
    if len(t.shape) != 4 or t.shape[0] != 1 or t.dtype != np.int8:
        return []
    made = {x}
    chain: list[int] = []
    for i, op in enumerate(graph.ops):
        acts = [u for u in op.inputs[:1 if op.kind in _CONVS else 2] if u is not None]
        ok = (op.kind in _CONVS and op.inputs[0] in made and
              not any(u in made for u in op.inputs[1:] if u is not None)) or (
              _is_stage_add(graph, op) and all(u in made for u in acts))  # fmt: skip
        if not ok or i != len(chain):
            break
        chain.append(i)
        made.add(op.outputs[0])
    return chain


def split_points(graph: Graph) -> list[int]:
    """The ops a stage may end at: a prefix of stage_chain whose tensors (the input included)
    nothing after it reads, but its last op's output, which is not a model output."""
    chain = stage_chain(graph)
    readers = graph.readers()
    out = []
    for n in range(1, len(chain) + 1):
        inside = set(chain[:n])
        last = graph.ops[chain[n - 1]].outputs[0]
        if last in graph.outputs:
            continue
        made = [graph.inputs[0]] + [graph.ops[i].outputs[0] for i in chain[: n - 1]]
        if any(t in graph.outputs or any(r not in inside for r in readers.get(t, []))
               for t in made):  # fmt: skip
            continue
        out.append(chain[n - 1])
    return out


def _window(graph: Graph, op: Op):  # noqa: ANN202
    o = op.options
    assert isinstance(o, Conv2DOptions | DepthwiseConv2DOptions)
    _, h, w, _ = graph.tensors[op.inputs[0]].shape
    _, kh, kw, _ = graph.tensors[op.inputs[1]].shape
    pad = compute_window_padding(o.padding, h, w, kh, kw, o.stride_h, o.stride_w,
                                 o.dilation_h, o.dilation_w, explicit=o.explicit_padding)
    return o, h, kh, pad


def _producer_index(graph: Graph, stage: list[int]) -> dict[int, int]:
    return {graph.ops[i].outputs[0]: j for j, i in enumerate(stage)}


def _stage_inputs(graph: Graph, op: Op) -> list[int]:
    """The activation tensors a stage op reads (a conv its input, an ADD both)."""
    return [op.inputs[0]] if op.kind in _CONVS else [t for t in op.inputs if t is not None]


def _op_band(graph: Graph, op: Op, lo: int, hi: int) -> OpBand | None:
    """Op over output rows [lo, hi): the input rows it reads and the padding it sees (None:
    the rows read nothing, an impossible band)."""
    if hi <= lo:
        return OpBand(lo, lo, 0, 0, 0, 0)
    if op.kind not in _CONVS:
        return OpBand(lo, hi, lo, hi, 0, 0)
    o, h, kh, pad = _window(graph, op)
    need_lo = lo * o.stride_h - pad.top
    need_hi = (hi - 1) * o.stride_h - pad.top + (kh - 1) * o.dilation_h + 1
    in_lo, in_hi = max(0, need_lo), min(h, need_hi)
    if in_hi <= in_lo:
        return None
    return OpBand(lo, hi, in_lo, in_hi, in_lo - need_lo, need_hi - in_hi)


def _computable(graph: Graph, op: Op, available: list[int]) -> int:
    """The output rows an op can compute when its inputs have `available` rows each."""
    y_h = graph.tensors[op.outputs[0]].shape[1]
    if op.kind not in _CONVS:
        return min([y_h, *available])
    o, h, kh, pad = _window(graph, op)
    a = available[0]
    if a >= h:
        return y_h
    return max(0, min(y_h, (a + pad.top - (kh - 1) * o.dilation_h - 1) // o.stride_h + 1))


def band_geometry(graph: Graph, stage: list[int], tiles: int,
                  keep_halo: bool = True) -> list[list[OpBand]] | None:
    """bands[k][j]: the rows stage op j computes and reads in band k, or None when a band
    would be empty. The split output is cut into `tiles` bands of rows; ops are visited last
    to first: each op's output must provide the rows every reader in the stage needs in the
    band. Halos recomputed: every op computes all of them, one band per tile. Halos kept: each
    op computes only rows not computed before, and at most its share of rows per band
    (ceil(height / tiles)), as far as its inputs allow: the first tile's receptive field is
    filled over a few warm-up bands in which the split op computes nothing, instead of in
    one band whose rows buffers would be several times the steady state's."""
    out_h = graph.tensors[graph.ops[stage[-1]].outputs[0]].shape[1]
    ops = [graph.ops[i] for i in stage]
    heights = [graph.tensors[op.outputs[0]].shape[1] for op in ops]
    # kept halos: more bands than split rows make the earlier, taller ops' steps finer
    if not 2 <= tiles <= (max(heights) if keep_halo else out_h):
        return None
    edges = [round(k * out_h / tiles) for k in range(tiles + 1)]
    if not keep_halo and any(b <= a for a, b in zip(edges, edges[1:])):
        return None
    producer = _producer_index(graph, stage)
    cap = [-(-h // tiles) for h in heights]
    done = [0] * len(stage)  # rows of each op's output computed so far (keep_halo)
    bands: list[list[OpBand]] = []
    last = len(stage) - 1
    while (done[last] < out_h) if keep_halo else len(bands) < tiles:
        k = len(bands)
        if k > 4 * tiles + 4 * max(heights):  # a stage that does not advance: not patchable
            return None
        target = (done[last] if keep_halo else edges[k], edges[min(k + 1, tiles)])
        need: dict[int, tuple[int, int]] = {last: target}
        wanted: list[tuple[int, int]] = [(0, 0)] * len(stage)
        for j in reversed(range(len(stage))):
            lo, hi = need.get(j, (done[j], done[j]))
            if keep_halo and j != last:
                # rows continue where the op stopped (a row no reader needs, under a strided
                # 1x1 reader, is still computed once, as the unpatched op does): each rows
                # buffer holds one run of rows
                lo = done[j] if hi > done[j] else hi
            wanted[j] = (lo, hi)
            band = _op_band(graph, ops[j], lo, hi)
            if band is None:
                return None
            if not band.runs:
                continue
            for u in _stage_inputs(graph, ops[j]):
                if u in producer:
                    pj = producer[u]
                    old = need.get(pj)
                    need[pj] = (band.in_lo, band.in_hi) if old is None else (
                        min(old[0], band.in_lo), max(old[1], band.in_hi))
        per_op: list[OpBand] = []
        for j, (lo, hi) in enumerate(wanted):
            if keep_halo and hi > lo:
                available = [done[producer[u]] if u in producer else graph.tensors[u].shape[1]
                             for u in _stage_inputs(graph, ops[j])]  # fmt: skip
                hi = min(hi, done[j] + cap[j], _computable(graph, ops[j], available))
            band = _op_band(graph, ops[j], lo, max(lo, hi))
            if band is None:
                return None
            per_op.append(band)
            done[j] = max(done[j], band.out_hi)
        bands.append(per_op)
    return bands


def extra_macs(graph: Graph, stage: list[int], bands: list[list[OpBand]]) -> int:
    """MACs the bands add by recomputing halo rows (MACs are linear in output rows)."""
    extra = 0
    for j, i in enumerate(stage):
        op = graph.ops[i]
        height = graph.tensors[op.outputs[0]].shape[1]
        rows = sum(b[j].out_hi - b[j].out_lo for b in bands if b[j].runs)
        extra += op_macs(graph, op) // height * (rows - height)
    return extra


# -- the rewrite ---------------------------------------------------------------------------------


def _const_i32(name: str, values: list[int]) -> Tensor:
    data = np.asarray(values, np.int32)
    return Tensor(name, (len(values),), np.dtype(np.int32), data)


def patch_graph(graph: Graph, split_op: int, tiles: int, keep_halo: bool = True) -> Patched:
    """`graph` with its stage (up to `split_op`) run in `tiles` row bands (module docstring)."""
    chain = stage_chain(graph)
    if split_op not in split_points(graph):
        raise TinyhostError(f"op {split_op} does not end a stage that can be patched "
                            f"(they can end at ops {split_points(graph)})")  # fmt: skip
    stage = chain[: chain.index(split_op) + 1]
    geometry = band_geometry(graph, stage, tiles, keep_halo)
    if geometry is None:
        raise TinyhostError(f"{tiles} tiles do not split op {split_op}'s output")
    return _Rewriter(graph, stage, tiles, keep_halo, geometry).run()


class _Rewriter:
    """Builds the patched graph band by band (one instance per patch_graph call)."""

    def __init__(self, graph: Graph, stage: list[int], tiles: int, keep_halo: bool,
                 bands: list[list[OpBand]]) -> None:
        self.graph, self.stage, self.tiles, self.keep, self.bands = (graph, stage, tiles,
                                                                     keep_halo, bands)
        self.tensors = list(graph.tensors)
        self.ops: list[Op] = []
        self.origin: list[int] = []
        self.band: list[int | None] = []
        self.views: set[int] = set()
        self.moves: set[int] = set()
        self.placement: dict[int, Placement] = {}
        self.x = graph.inputs[0]
        self.t = graph.ops[stage[-1]].outputs[0]

    def row_bytes(self, j: int) -> int:
        """Bytes per row of stage op j's output."""
        _, _, w, c = self.graph.tensors[self.graph.ops[self.stage[j]].outputs[0]].shape
        return w * c

    def rows_tensor(self, like: int, rows: int, name: str) -> int:
        t = self.tensors[like]
        self.tensors.append(replace(t, name=f"{t.name}/{name}", shape=(1, rows, *t.shape[2:]),
                                    tflite_index=None))  # fmt: skip
        return len(self.tensors) - 1

    def emit(self, op: Op, source: int, band: int | None, kind: str = "") -> int:
        index = len(self.ops)
        self.ops.append(op)
        self.origin.append(source)
        self.band.append(band)
        if kind == "view":
            self.views.add(index)
        elif kind == "move":
            self.moves.add(index)
        return index

    def slice_rows(self, src: int, lo: int, hi: int, name: str, source: int, band: int,
                   kind: str) -> int:
        """A STRIDED_SLICE of rows [lo, hi) of 4-D tensor `src`: a view or a move."""
        shape = self.tensors[src].shape
        out = self.rows_tensor(src, hi - lo, name)
        consts = []
        for what, values in (("begin", [0, lo, 0, 0]), ("end", [1, hi, *shape[2:]]),
                             ("strides", [1, 1, 1, 1])):  # fmt: skip
            self.tensors.append(_const_i32(f"patch/{name}/{what}", values))
            consts.append(len(self.tensors) - 1)
        self.emit(Op(OpKind.STRIDED_SLICE, (src, *consts), (out,), StridedSliceOptions()),
                  source, band, kind)  # fmt: skip
        return out

    def run(self) -> Patched:
        g, stage, m = self.graph, self.stage, len(self.stage)
        producer = _producer_index(g, stage)
        x_row = g.tensors[self.x].shape[2] * g.tensors[self.x].shape[3]
        t_row = self.row_bytes(m - 1)
        cur: dict[int, tuple[int, int]] = {}  # op j's current rows buffer and its first row
        t_rows: list[int] = []
        needs: list[dict[int, tuple[int, int]]] = []  # [k][j]: rows of op j read in band k
        for per_op in self.bands:
            band_needs: dict[int, tuple[int, int]] = {}
            for j, b in enumerate(per_op):
                if b.runs:
                    for u in _stage_inputs(g, g.ops[stage[j]]):
                        if u in producer:
                            pj, old = producer[u], band_needs.get(producer[u])
                            band_needs[pj] = (b.in_lo, b.in_hi) if old is None else (
                                min(old[0], b.in_lo), max(old[1], b.in_hi))
            needs.append(band_needs)
        # [k][j]: the first row of op j's output that band k or a later one reads (kept rows
        # start there; rows above it are never read again)
        keep_from: list[dict[int, int]] = [{} for _ in self.bands]
        later: dict[int, int] = {}
        for k in reversed(range(len(self.bands))):
            for j, (lo, _) in needs[k].items():
                later[j] = min(lo, later.get(j, lo))
            keep_from[k] = dict(later)
        for k, per_op in enumerate(self.bands):
            for j, b in enumerate(per_op):
                if self.keep and j != m - 1:
                    self.kept_band_op(k, j, b, keep_from[k].get(j), cur, producer, x_row)
                else:
                    self.band_op(k, j, b, needs[k].get(j), cur, producer, x_row, t_row,
                                 t_rows)
        self.emit(Op(OpKind.CONCATENATION, tuple(t_rows), (self.t,),
                     ConcatenationOptions(axis=1)), stage[-1], None, "view")  # fmt: skip
        stage_ops = len(self.ops)
        done = set(stage)
        for i, op in enumerate(g.ops):
            if i not in done:
                self.emit(op, i, None)
        patched = replace(g, tensors=tuple(self.tensors), ops=tuple(self.ops))
        reads_input = tuple(self.x in _stage_inputs(g, g.ops[i]) for i in stage)
        return Patched(patched, tuple(self.origin), tuple(self.band), frozenset(self.views),
                       frozenset(self.moves), stage_ops, tuple(stage), self.tiles, self.keep,
                       self.x, self.t, tuple(tuple(b) for b in self.bands),
                       self.placement, reads_input)  # fmt: skip

    def rows_view(self, u: int, lo: int, hi: int, cur: dict, producer: dict, k: int,
                  x_row: int) -> int:
        """Rows [lo, hi) of stage tensor u (the input, or an op's rows buffer) as a tensor."""
        if u == self.x:
            view = self.slice_rows(self.x, lo, hi, f"band{k}", self.stage[0], k, "view")
            self.placement[view] = ("x", lo * x_row)
            return view
        pj = producer[u]
        buf, first = cur[pj]
        if (lo, hi) == (first, first + self.tensors[buf].shape[1]):
            return buf
        view = self.slice_rows(buf, lo - first, hi - first, f"band{k}/rows", self.stage[pj],
                               k, "view")  # fmt: skip
        kind, area, off = self.placement[buf]
        self.placement[view] = (kind, area, off + (lo - first) * self.row_bytes(pj))
        return view

    def compute(self, k: int, j: int, b: OpBand, cur: dict, producer: dict,
                x_row: int) -> int:
        """Emit op j over band k's rows; returns its rows tensor (not yet placed)."""
        g, op = self.graph, self.graph.ops[self.stage[j]]
        srcs = [self.rows_view(u, b.in_lo, b.in_hi, cur, producer, k, x_row)
                for u in _stage_inputs(g, op)]  # fmt: skip
        new = self.rows_tensor(op.outputs[0], b.out_hi - b.out_lo, f"band{k}")
        if op.kind in _CONVS:
            _, _, _, pad = _window(g, op)
            options = replace(op.options, explicit_padding=(b.pad_top, b.pad_bottom,
                                                            pad.left, pad.right))
            self.emit(replace(op, inputs=(srcs[0], *op.inputs[1:]), outputs=(new,),
                              options=options), self.stage[j], k)  # fmt: skip
        else:
            self.emit(replace(op, inputs=tuple(srcs), outputs=(new,)), self.stage[j], k)
        return new

    def kept_band_op(self, k: int, j: int, b: OpBand, keep_lo: int | None, cur: dict,
                     producer: dict, x_row: int) -> None:
        """Op j (not the split op) over band k, halo rows kept: one rows buffer for all bands.
        When it computes rows, the rows still to be read (from keep_lo) move to the buffer's
        start and the new rows follow them; otherwise the buffer stays as it is and readers
        take views into it."""
        if not b.runs:
            return
        area = (j, -1)
        retained = None
        if j in cur and keep_lo is not None:
            buf, first = cur[j]
            lo, hi = max(keep_lo, first), first + self.tensors[buf].shape[1]
            if hi > lo:
                retained = self.slice_rows(buf, lo - first, hi - first, f"band{k}/kept",
                                           self.stage[j], k, "move")  # fmt: skip
                self.placement[retained] = ("area", area, 0)
        assert j not in cur or b.out_lo == cur[j][1] + self.tensors[cur[j][0]].shape[1]
        new = self.compute(k, j, b, cur, producer, x_row)
        head = 0 if retained is None else self.tensors[retained].size_bytes
        self.placement[new] = ("area", area, head)
        if retained is None:
            cur[j] = (new, b.out_lo)
            return
        rows = self.tensors[retained].shape[1] + b.out_hi - b.out_lo
        whole = self.rows_tensor(self.graph.ops[self.stage[j]].outputs[0], rows,
                                 f"band{k}/rows")  # fmt: skip
        self.emit(Op(OpKind.CONCATENATION, (retained, new), (whole,),
                     ConcatenationOptions(axis=1)), self.stage[j], k, "view")
        self.placement[whole] = ("area", area, 0)
        cur[j] = (whole, b.out_lo - self.tensors[retained].shape[1])

    def band_op(self, k: int, j: int, b: OpBand, need: tuple[int, int] | None, cur: dict,
                producer: dict, x_row: int, t_row: int, t_rows: list[int]) -> None:
        """Op j over band k when halo rows are recomputed (one rows buffer per band, which
        the layout packs by lifetime), or the split op (its rows go to T)."""
        if not b.runs:
            return
        new = self.compute(k, j, b, cur, producer, x_row)
        if j == len(self.stage) - 1:
            self.placement[new] = ("t", b.out_lo * t_row)
            t_rows.append(new)
            return
        self.placement[new] = ("area", (j, k), 0)
        if need is not None:
            cur[j] = (new, b.out_lo)


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


def _x_reads(p: Patched) -> list[tuple[int, int] | None]:
    """Per band, the input rows its ops read (None: none)."""
    out: list[tuple[int, int] | None] = []
    for band in p.bands:
        rows = [(b.in_lo, b.in_hi) for b, r in zip(band, p.reads_input, strict=True)
                if r and b.runs]  # fmt: skip
        out.append((min(r[0] for r in rows), max(r[1] for r in rows)) if rows else None)
    return out


def _stream_room(p: Patched, row_in: int, row_t: int) -> int:
    """The most offset(T) - offset(X) may be: band k's rows of T must not land on input rows
    a later band reads (a one-op stage reads and writes in one call: not its own either)."""
    reads = _x_reads(p)
    own = p.reads_input[-1]
    room = None
    for k, b in enumerate(p.bands):
        later = [r for r in reads[k if own else k + 1:] if r is not None]
        if later:
            r = later[0][0] * row_in - b[-1].out_hi * row_t
            room = r if room is None else min(room, r)
    return 0 if room is None else room


def _live_room(p: Patched, alignment: int) -> int:
    """Room a band's conv needs for its live channels (arith/constant_channels.py: the
    compiled backend computes those only, into free arena room, then expands them): the
    largest over the stage's band convs that have enough constant channels."""
    g = p.graph
    room = 0
    for i in range(p.stage_ops):
        cc = constant_channels(g, g.ops[i]) if g.ops[i].kind is OpKind.CONV_2D else None
        if cc is not None and cc.worth_it:
            y = g.tensors[g.ops[i].outputs[0]]
            room = max(room, align_up(y.size_bytes // cc.pixel.size * len(cc.live), alignment))
    return room


def _steps(p: Patched) -> dict[int, tuple[int, int]]:
    """Each stage tensor's first and last step (rewritten op index) in the stage."""
    span: dict[int, list[int]] = {}
    g = p.graph
    for step in range(p.stage_ops):
        op = g.ops[step]
        for t in [*op.inputs, *op.outputs]:
            if t is not None and g.tensors[t].data is None:
                s = span.setdefault(t, [step, step])
                s[0], s[1] = min(s[0], step), max(s[1], step)
    return {t: (s[0], s[1]) for t, s in span.items()}


def _pack_buffers(p: Patched, alignment: int) -> tuple[dict[tuple[int, int], int], int]:
    """Offsets of the rows buffers (op j, band k) in the band region, and its size: a buffer
    lives from its first member's first step to its last member's last step (kept rows are
    read by the next band's move), and buffers live at the same time never share bytes
    (greedy by size, lowest offset that fits)."""
    steps = _steps(p)
    life: dict[tuple[int, int], list[int]] = {}
    for t, place in p.placement.items():
        if place[0] == "area" and t in steps:
            lo, hi = steps[t]
            span = life.setdefault(place[1], [lo, hi])
            span[0], span[1] = min(span[0], lo), max(span[1], hi)
    sizes = {key: align_up(n, alignment) for key, n in p.buffer_bytes().items()}
    placed: list[tuple[int, int, int, int]] = []  # offset, end, first step, last step
    offsets: dict[tuple[int, int], int] = {}
    for key in sorted(sizes, key=lambda k: (-sizes[k], life[k][0])):
        first, last = life[key]
        busy = sorted((o, e) for o, e, f0, f1 in placed if f0 <= last and first <= f1)
        offset = 0
        for o, e in busy:
            if offset + sizes[key] <= o:
                break
            offset = max(offset, align_up(e, alignment))
        offsets[key] = offset
        placed.append((offset, offset + sizes[key], first, last))
    return offsets, max((e for _, e, _, _ in placed), default=0)


def layout_patched(p: Patched, options: PlanOptions,
                   rest: MemoryPlan | None = None) -> PatchedLayout:
    """One arena for the patched graph: the rest planned as usual (`rest`: that plan, when
    already made for this split), the stage streamed, its band areas beside."""
    g, a = p.graph, options.alignment
    if rest is None:
        rest = plan_memory(_rest_graph(p), options=options)
    x, t = g.tensors[p.input_tensor], g.tensors[p.split_tensor]
    row_in = x.shape[2] * x.shape[3] * x.dtype.itemsize
    row_t = t.shape[2] * t.shape[3] * t.dtype.itemsize
    room = _stream_room(p, row_in, row_t)
    delta = room // a * a if room < 0 else 0  # offset(T) - offset(X)
    lo, hi = min(0, delta), max(x.size_bytes, delta + t.size_bytes)  # relative to X
    buffers, area_bytes = _pack_buffers(p, a)
    scratch = max((align_up(scratch_bytes(g, g.ops[i], options), a)
                   for i in range(p.stage_ops) if g.ops[i].kind in _CONVS), default=0)
    band_bytes = area_bytes + scratch + _live_room(p, a)
    t_rest = rest.tensor_offset(p.split_tensor)
    best = None
    for band_first in (True, False):
        x_off = align_up(max(t_rest - delta, -lo + (band_bytes if band_first else 0)), a)
        shift = x_off + delta - t_rest
        band_off = 0 if band_first else align_up(x_off + hi, a)
        arena = align_up(max(rest.arena_bytes + shift, x_off + hi, band_off + band_bytes), a)
        if best is None or arena < best[0]:
            best = (arena, x_off, shift, band_off)
    assert best is not None
    arena, x_off, shift, band_off = best
    area_off = {key: band_off + off for key, off in buffers.items()}
    plan = _combined_plan(p, rest, arena, x_off, x_off + delta, shift, area_off,
                          band_off + area_bytes, options)  # fmt: skip
    return PatchedLayout(plan, rest, x_off, x_off + delta, (band_off, band_bytes))


def _combined_plan(p: Patched, rest: MemoryPlan, arena: int, x_off: int, t_off: int,
                   shift: int, area_off: dict[tuple[int, int], int], scratch_off: int,
                   options: PlanOptions) -> MemoryPlan:
    g = p.graph
    n_stage = p.stage_ops
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for step in range(n_stage):
        op = g.ops[step]
        for tensor in op.outputs:
            first.setdefault(tensor, step)
            last[tensor] = max(last.get(tensor, step), step)
        for tensor in op.inputs:
            if tensor is not None and g.tensors[tensor].data is None:
                first.setdefault(tensor, 0)
                last[tensor] = step
    buffers: list[PlannedBuffer] = [
        PlannedBuffer("input (streamed)", "tensor", (p.input_tensor,), x_off,
                      g.tensors[p.input_tensor].size_bytes, 0, last[p.input_tensor])]
    for tensor, place in p.placement.items():
        if place[0] == "x":
            offset = x_off + place[1]
        elif place[0] == "t":
            offset = t_off + place[1]
            last[tensor] = n_stage - 1  # kept until the bands' rows are whole
        else:
            offset = area_off[place[1]] + place[2]
        buffers.append(PlannedBuffer(g.tensors[tensor].name, "tensor", (tensor,), offset,
                                     g.tensors[tensor].size_bytes, first[tensor],
                                     last[tensor]))  # fmt: skip
    for step in range(n_stage):
        need = scratch_bytes(g, g.ops[step], options) if g.ops[step].kind in _CONVS else 0
        if need:
            buffers.append(PlannedBuffer(f"stage op {step} scratch", "scratch", (), scratch_off,
                                         need, step, step, op=step))  # fmt: skip
    for b in rest.buffers:
        start = 0 if p.split_tensor in b.tensors else b.first_op + n_stage
        buffers.append(replace(b, offset=b.offset + shift, first_op=start,
                               last_op=b.last_op + n_stage,
                               op=None if b.op is None else b.op + n_stage))  # fmt: skip
    assert t_off == rest.tensor_offset(p.split_tensor) + shift
    order = tuple(range(n_stage)) + tuple(i + n_stage for i in rest.op_order)
    overlaps = tuple(replace(o, op=o.op + n_stage) for o in rest.overlaps)
    halo = "kept" if p.keep_halo else "recomputed"
    return MemoryPlan(arena, rest.lower_bound_bytes, rest.lower_bound_step + n_stage,
                      rest.peak_step + n_stage, options.alignment, order, tuple(buffers),
                      overlaps, f"patched ({p.tiles} row bands, halo {halo}) + "
                      f"{rest.strategy}", options, g)  # fmt: skip


def check_patched(p: Patched, layout: PatchedLayout) -> list[str]:
    """Every way the stage's layout is unsafe, as sentences (empty: safe). Independent of
    layout_patched: recomputes what each band reads and writes and checks that no band's rows
    of T land on input rows a later band (or, in a one-op stage, the same call) reads, that
    the bands cover T's rows once, that the band area keeps apart from the streamed region,
    that rows buffers live at the same time do not share bytes, and that everything lies
    inside the arena."""
    g = p.graph
    errors: list[str] = []
    x, t = g.tensors[p.input_tensor], g.tensors[p.split_tensor]
    row_in = x.shape[2] * x.shape[3]
    row_t = t.shape[2] * t.shape[3]
    xo, to = layout.input_offset, layout.split_offset
    written: list[tuple[int, int]] = []  # T rows written so far, as byte ranges
    for k, (band, reads) in enumerate(zip(p.bands, _x_reads(p), strict=True)):
        last = band[-1]
        mine = (to + last.out_lo * row_t, to + last.out_hi * row_t)
        if p.reads_input[-1]:  # the same call reads the input and writes T
            written.append(mine)
        if reads is not None:
            r0, r1 = xo + reads[0] * row_in, xo + reads[1] * row_in
            for w0, w1 in written:
                if w0 < r1 and r0 < w1:
                    errors.append(f"band {k} reads input bytes [{r0}, {r1}) that an "
                                  f"earlier band's output [{w0}, {w1}) overwrote")  # fmt: skip
        if not p.reads_input[-1]:
            written.append(mine)
    rows = [(b[-1].out_lo, b[-1].out_hi) for b in p.bands]
    if rows[0][0] != 0 or rows[-1][1] != t.shape[1] or any(
            a[1] != b[0] for a, b in zip(rows, rows[1:])):  # fmt: skip
        errors.append("the bands do not cover the split output's rows exactly once")
    stream = (min(xo, to), max(xo + x.size_bytes, to + t.size_bytes))
    b0, nb = layout.band_area
    if nb and b0 < stream[1] and stream[0] < b0 + nb:
        errors.append(f"band area [{b0}, {b0 + nb}) overlaps the streamed input/output "
                      f"[{stream[0]}, {stream[1]})")  # fmt: skip
    # rows buffers: the bytes each occupies and when (recomputed from the plan's offsets)
    steps = _steps(p)
    extent: dict[tuple[int, int], list[int]] = {}
    for tensor, place in p.placement.items():
        if place[0] == "area" and tensor in steps:
            off = layout.plan.tensor_offset(tensor)
            end = off + g.tensors[tensor].size_bytes
            e = extent.setdefault(place[1], [off, end, *steps[tensor]])
            e[0], e[1] = min(e[0], off), max(e[1], end)
            e[2], e[3] = min(e[2], steps[tensor][0]), max(e[3], steps[tensor][1])
    items = sorted(extent.items())
    for n, (ka, a) in enumerate(items):
        if nb and not (b0 <= a[0] and a[1] <= b0 + nb):
            errors.append(f"rows buffer {ka} [{a[0]}, {a[1]}) outside the band area")
        for kb, b in items[n + 1:]:
            if a[0] < b[1] and b[0] < a[1] and a[2] <= b[3] and b[2] <= a[3]:
                errors.append(f"rows buffers {ka} and {kb} share bytes while both are live")
    arena = layout.plan.arena_bytes
    for lo, hi, what in ((*stream, "streamed region"), (b0, b0 + nb, "band area")):
        if lo < 0 or hi > arena:
            errors.append(f"{what} [{lo}, {hi}) outside the {arena}-byte arena")
    return errors


# -- choosing ------------------------------------------------------------------------------------


def candidates(graph: Graph, options: PlanOptions, tiles: int | None = None,
               max_overhead: float | None = None) -> list[PatchCandidate]:
    """Every (split op, tiles, halo kept or recomputed) the stage allows with its arena and
    extra MACs (tiles: only that count; max_overhead: only those `choose` could take with
    it, the others not laid out)."""
    chain = stage_chain(graph)
    macs = graph_stats(graph).macs
    out: list[PatchCandidate] = []
    for split in split_points(graph):
        stage = chain[: chain.index(split) + 1]
        split_t = graph.ops[split].outputs[0]
        height = graph.tensors[split_t].shape[1]
        tallest = max(graph.tensors[graph.ops[i].outputs[0]].shape[1] for i in stage)
        counts = [tiles] if tiles is not None else range(2, min(height, MAX_TILES) + 1)
        finer = [] if tiles is not None else sorted(
            {min(height << e, tallest) for e in range(1, 8)} - {height})
        rest = None  # the same for every tile count of this split
        for n, keeps in [*((n, (True, False)) for n in counts), *((n, (True,)) for n in finer)]:
            for keep in keeps:
                bands = band_geometry(graph, stage, n, keep)
                if bands is None:
                    continue
                extra = extra_macs(graph, stage, bands)
                bound = PatchCandidate(stage[-1], n, 0, extra, macs, keep)
                if max_overhead is not None and bound.overhead > max_overhead:
                    continue
                p = patch_graph(graph, stage[-1], n, keep)
                calls = sum(1 for i in range(p.stage_ops) if i not in p.views)
                bound = replace(bound, calls=calls)
                if max_overhead is not None and bound.instruction_overhead > max_overhead:
                    continue
                layout = layout_patched(p, options, rest)
                rest = layout.rest
                out.append(replace(bound, arena_bytes=layout.plan.arena_bytes))
    return out


def choose(cands: list[PatchCandidate], unpatched_arena: int,
           max_overhead: float = DEFAULT_MAX_OVERHEAD,
           min_saving: float = 0.0) -> PatchCandidate | None:
    """The smallest arena within the overhead, if it beats the unpatched one by more than
    `min_saving` of it (ties: fewer extra MACs, then fewer calls). The overhead bounds both
    the extra MACs and the estimated extra instructions (band calls and moves included), so
    that `auto` does not trade a few bytes for many more calls."""
    most = min(unpatched_arena - 1, int(unpatched_arena * (1 - min_saving)))
    ok = [c for c in cands if c.overhead <= max_overhead
          and c.instruction_overhead <= max_overhead and c.arena_bytes <= most]
    return min(ok, key=lambda c: (c.arena_bytes, c.extra_macs, c.calls), default=None)


@dataclass(frozen=True)
class PatchRequest:
    """What the user asked for: `--patch auto` (tiles None) or `--patch N`."""

    tiles: int | None = None
    max_overhead: float = DEFAULT_MAX_OVERHEAD
    keep_halo: bool | None = None  # only that halo scheme (None: either)
    min_saving: float = 0.0  # auto: patch only where the arena drops by this share or more


def default_patch(backend: str, optimize: str) -> PatchRequest | None:
    """What no --patch means: on the compiled backend under --optimize speed, `auto` within
    SPEED_MAX_OVERHEAD where the arena drops by SPEED_MIN_SAVING or more (ResNet-8: 33,888 ->
    25,728 B, fewer instructions; VWW's 3% candidate saves 5%: not taken); else off
    (ARCHITECTURE.md §4.2b)."""
    if backend != "compiled" or optimize != "speed":
        return None
    return PatchRequest(None, SPEED_MAX_OVERHEAD, min_saving=SPEED_MIN_SAVING)


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


def pick(graph: Graph, options: PlanOptions, request: PatchRequest, every: bool = True
         ) -> tuple[PatchCandidate | None, list[PatchCandidate], int]:  # fmt: skip
    """(the chosen candidate or None, every candidate, the unpatched arena); every=False:
    for `auto`, only the candidates within the overhead are laid out and listed."""
    unpatched = plan_memory(graph, options=options).arena_bytes
    bound = None if every or request.tiles is not None else request.max_overhead
    cands = [c for c in candidates(graph, options, request.tiles, bound)
             if request.keep_halo is None or c.keep_halo == request.keep_halo]
    if request.tiles is None:
        return (choose(cands, unpatched, request.max_overhead, request.min_saving), cands,
                unpatched)  # fmt: skip
    best = min(cands, key=lambda c: (c.arena_bytes, c.extra_macs, not c.keep_halo),
               default=None)  # fmt: skip
    return best, cands, unpatched


def resolve_patch(graph: Graph, options: PlanOptions, request: PatchRequest) -> Patched | None:
    """The patched graph the request leads to; None when `auto` finds nothing better than
    layer by layer. `--patch N` that no stage allows is an error."""
    chosen, _, _ = pick(graph, options, request, every=False)
    if chosen is None:
        if request.tiles is not None:
            raise TinyhostError(f"{graph.source}: no stage of this model can run in "
                                f"{request.tiles} row bands (a chain of convolutions from "
                                "the input whose output is at least that many rows)")
        return None
    return patch_graph(graph, chosen.split_op, chosen.tiles, chosen.keep_halo)
