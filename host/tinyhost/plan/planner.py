"""plan_memory: one arena for every activation and scratch buffer, with its size known on
the host, as close to the lower bound as the strategies get.

Steps: lifetimes from the op order -> alias groups (RESHAPE/SQUEEZE share bytes) -> per op the
cheapest declared overlap whose input dies there (overlap.py) -> blocks and allowed pairs ->
every strategy (strategies.py) -> keep the smallest arena; overlaps the winner did not use
are dropped (their op then runs its ordinary kernel and scratch) and the plan is redone.
Graphs with branches are also planned in other valid op orders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from tinyhost.ir import Graph
from tinyhost.plan.lifetimes import Lifetime, check_order, tensor_lifetimes
from tinyhost.plan.options import PlanOptions
from tinyhost.plan.overlap import Overlap, OverlapMode, op_overlaps
from tinyhost.plan.scratch import scratch_bytes
from tinyhost.plan.strategies import Block, Pair, Problem, align_up, arena_size, strategies


@dataclass(frozen=True)
class PlannedBuffer:
    name: str
    kind: str  # "tensor" (an activation and its aliases) or "scratch"
    tensors: tuple[int, ...]  # graph tensor indices sharing these bytes; () for scratch
    offset: int
    size: int
    first_op: int  # steps in MemoryPlan.op_order (equal to op indices in the graph's order)
    last_op: int
    op: int | None = None  # scratch: the graph op index that uses it


@dataclass(frozen=True)
class UsedOverlap:
    """An overlap the plan relies on: the op's kernel must run in this mode."""

    op: int
    mode: OverlapMode
    input_tensor: int
    output_tensor: int
    d: int  # offset(output) - offset(input)


@dataclass(frozen=True)
class MemoryPlan:
    arena_bytes: int
    lower_bound_bytes: int
    lower_bound_step: int
    peak_step: int
    alignment: int
    op_order: tuple[int, ...]
    buffers: tuple[PlannedBuffer, ...]
    overlaps: tuple[UsedOverlap, ...]
    strategy: str
    options: PlanOptions
    graph: Graph = field(repr=False, compare=False)

    @property
    def peak_op(self) -> int | None:
        """Graph op index at which the arena is fullest."""
        return self.op_order[self.peak_step] if self.op_order else None

    @property
    def gap_bytes(self) -> int:
        return self.arena_bytes - self.lower_bound_bytes

    def tensor_offset(self, tensor: int) -> int:
        for b in self.buffers:
            if tensor in b.tensors:
                return b.offset
        raise KeyError(f"tensor {tensor} has no arena buffer")

    def scratch_for(self, op: int) -> PlannedBuffer | None:
        return next((b for b in self.buffers if b.kind == "scratch" and b.op == op), None)

    def free_block(self, step: int, size: int, keep: PlannedBuffer | None = None,
                   avoid: tuple[tuple[int, int], ...] = ()) -> int | None:
        """Lowest aligned offset of `size` bytes inside the arena that no buffer live at `step`
        uses (but `keep`, which may be reused) nor the (offset, size) ranges of `avoid`, or
        None: room a kernel can have for free."""
        taken = sorted([(b.offset, b.offset + b.size) for b in self.buffers
                        if b.first_op <= step <= b.last_op and b is not keep and b.size > 0]
                       + [(o, o + n) for o, n in avoid if n > 0])
        offset = 0
        for start, end in taken:
            if offset + size <= start:
                break
            offset = max(offset, align_up(end, self.alignment))
        return offset if offset + size <= self.arena_bytes else None

    def to_json(self) -> dict:
        g = self.graph
        peak = self.peak_op
        return {
            "model": g.name or g.source,
            "arena_bytes": self.arena_bytes,
            "lower_bound_bytes": self.lower_bound_bytes,
            "gap_bytes": self.gap_bytes,
            "peak_op": peak,
            "peak_op_name": None if peak is None else g.ops[peak].name,
            "lower_bound_op": self.op_order[self.lower_bound_step] if self.op_order else None,
            "alignment": self.alignment,
            "strategy": self.strategy,
            "op_order": list(self.op_order),
            "buffers": [
                {
                    "tensor": b.name,
                    "kind": b.kind,
                    "tensors": list(b.tensors),
                    "offset": b.offset,
                    "size": b.size,
                    "first_op": b.first_op,
                    "last_op": b.last_op,
                    **({"op": b.op} if b.op is not None else {}),
                }
                for b in self.buffers
            ],
            "overlaps": [
                {
                    "op": u.op,
                    "op_name": g.ops[u.op].name,
                    "mode": u.mode.value,
                    "input": g.tensors[u.input_tensor].name,
                    "output": g.tensors[u.output_tensor].name,
                    "d": u.d,
                }
                for u in self.overlaps
            ],
        }


@dataclass
class _Setup:
    """Blocks and pairs for one op order and one set of allowed overlaps."""

    blocks: list[Block]
    pairs: list[Pair]
    block_tensors: list[tuple[int, ...]]
    block_op: list[int | None]  # scratch blocks: graph op index
    real_size: list[int]  # bytes actually used (blocks are rounded up to the alignment)
    pair_overlap: list[Overlap]
    lower_bound: int
    lower_bound_step: int


def _alias_roots(graph: Graph, order: Sequence[int], options: PlanOptions) -> dict[int, int]:
    root: dict[int, int] = {}
    for i in order:
        for ov in op_overlaps(graph, i, options):
            if ov.mode is OverlapMode.ALIAS:
                root[ov.output_tensor] = root.get(ov.input_tensor, ov.input_tensor)
    return root


def _setup(
    graph: Graph,
    order: Sequence[int],
    options: PlanOptions,
    banned: frozenset[int],
    stationary: bool = False,
) -> _Setup:
    a = options.alignment
    life = tensor_lifetimes(graph, order)
    roots = _alias_roots(graph, order, options)
    groups: dict[int, list[int]] = {}
    for t in life:
        groups.setdefault(roots.get(t, t), []).append(t)
    group_of = {t: r for r, ts in groups.items() for t in ts}
    glife = {
        r: Lifetime(min(life[t].first for t in ts), max(life[t].last for t in ts))
        for r, ts in groups.items()
    }
    gsize = {r: max(graph.tensors[t].size_bytes for t in ts) for r, ts in groups.items()}
    outputs = set(graph.outputs)

    # The cheapest overlap per op whose input dies there (and is no graph output).
    chosen: dict[int, Overlap] = {}
    for step, i in enumerate(order):
        if i in banned:
            continue
        ordinary = align_up(scratch_bytes(graph, graph.ops[i], options), a)
        best: tuple[tuple[bool, int], Overlap] | None = None
        for ov in op_overlaps(graph, i, options):
            if ov.mode is OverlapMode.ALIAS:
                continue
            gi, go = group_of[ov.input_tensor], group_of[ov.output_tensor]
            if gi == go or glife[gi].last != step or glife[go].first != step:
                continue
            if any(t in outputs for t in groups[gi]):
                continue
            ext = align_up(ov.min_extent(a, gsize[gi], gsize[go]), a)
            cost = ext + align_up(ov.scratch_bytes, a)
            plain = align_up(gsize[gi], a) + align_up(gsize[go], a) + ordinary
            # "stationary" prefers rules that let the output start where its input starts, so
            # chains of in-place ops do not drift through the arena
            key = (ov.allows(0) is False, cost) if stationary else (False, cost)
            if cost < plain and (best is None or key < best[0]):
                best = (key, ov)
        if best is not None:
            chosen[i] = best[1]

    roots_sorted = sorted(groups)
    index = {r: k for k, r in enumerate(roots_sorted)}
    producer_input: dict[int, int] = {}
    for i in order:
        op = graph.ops[i]
        ins = [t for t in op.inputs if t is not None and t in group_of]
        for t in op.outputs:
            if ins and t in group_of:
                producer_input.setdefault(group_of[t], index[group_of[ins[0]]])
    blocks = [
        Block(align_up(gsize[r], a), glife[r].first, glife[r].last, producer_input.get(r))
        for r in roots_sorted
    ]
    block_tensors: list[tuple[int, ...]] = [tuple(sorted(groups[r])) for r in roots_sorted]
    block_op: list[int | None] = [None] * len(blocks)
    real_size = [gsize[r] for r in roots_sorted]
    pairs: list[Pair] = []
    pair_overlap: list[Overlap] = []
    scratch_at: dict[int, int] = {}
    for step, i in enumerate(order):
        ov = chosen.get(i)
        size = ov.scratch_bytes if ov is not None else scratch_bytes(graph, graph.ops[i], options)
        if ov is not None:
            pairs.append(
                Pair(
                    index[group_of[ov.input_tensor]],
                    index[group_of[ov.output_tensor]],
                    ov.d_min,
                    ov.d_max,
                    ov.modulus,
                )
            )
            pair_overlap.append(ov)
        if size > 0:
            scratch_at[step] = len(blocks)
            blocks.append(Block(align_up(size, a), step, step))
            block_tensors.append(())
            block_op.append(i)
            real_size.append(size)

    # Lower bound: at each step, what is live, each chosen pair at its smallest footprint.
    lb, lb_step = 0, 0
    for step in range(max(len(order), 1)):
        live = [k for k, b in enumerate(blocks) if b.first <= step <= b.last and block_tensors[k]]
        total = sum(align_up(blocks[k].size, a) for k in live)
        i = order[step] if order else None
        ov = chosen.get(i) if i is not None else None
        ordinary = 0 if i is None else align_up(scratch_bytes(graph, graph.ops[i], options), a)
        if ov is not None:
            pin, pout = gsize[group_of[ov.input_tensor]], gsize[group_of[ov.output_tensor]]
            paired = align_up(ov.min_extent(a, pin, pout), a) + align_up(ov.scratch_bytes, a)
            plain = align_up(pin, a) + align_up(pout, a) + ordinary
            total += min(paired, plain) - align_up(pin, a) - align_up(pout, a)
        else:
            total += ordinary
        if total > lb:
            lb, lb_step = total, step
    return _Setup(blocks, pairs, block_tensors, block_op, real_size, pair_overlap, lb, lb_step)


@dataclass(frozen=True)
class _Result:
    arena: int
    strategy: str
    offsets: list[int]
    setup: _Setup
    order: tuple[int, ...]
    banned: frozenset[int]
    lower_bound: int = 0  # with every overlap allowed (bans only help the search)
    lower_bound_step: int = 0


def _solve(setup: _Setup, alignment: int, lower_bound: int) -> tuple[int, str, list[int]]:
    problem = Problem(tuple(setup.blocks), tuple(setup.pairs), alignment)
    best: tuple[int, str, list[int]] | None = None
    for name, strategy in strategies(align_up(lower_bound, alignment)).items():
        offsets = strategy(problem)
        if offsets is None:
            continue
        size = arena_size(problem, offsets)
        if best is None or size < best[0]:
            best = (size, name, offsets)
        if size <= lower_bound:
            break
    assert best is not None
    return best


def _unused_pairs(setup: _Setup, offsets: list[int]) -> set[int]:
    """Ops whose allowed overlap the placement did not take."""
    unused = set()
    for pr, ov in zip(setup.pairs, setup.pair_overlap):
        s, d = pr.src, pr.dst
        if not (
            offsets[s] < offsets[d] + setup.blocks[d].size
            and offsets[d] < offsets[s] + setup.blocks[s].size
        ):
            unused.add(ov.op)
    return unused


def _plan_order(graph: Graph, order: tuple[int, ...], options: PlanOptions) -> _Result:
    results: list[_Result] = []
    all_ops = frozenset(range(len(graph.ops)))
    lb: tuple[int, int] | None = None
    for stationary in (False, True):
        tried: set[frozenset[int]] = set()
        queue = [frozenset(), all_ops]
        while queue and len(tried) < 6:
            banned = queue.pop(0)
            if banned in tried:
                continue
            tried.add(banned)
            setup = _setup(graph, order, options, banned, stationary)
            if lb is None:
                lb = (setup.lower_bound, setup.lower_bound_step)
            size, name, offsets = _solve(setup, options.alignment, setup.lower_bound)
            unused = _unused_pairs(setup, offsets)
            if unused:
                # those ops run their ordinary kernel (other scratch): plan again without them
                queue.insert(0, banned | unused)
            else:
                results.append(_Result(size, name, offsets, setup, order, banned))
        if all_ops not in tried:  # the plan without in-place overlaps always exists
            setup = _setup(graph, order, options, all_ops, stationary)
            size, name, offsets = _solve(setup, options.alignment, setup.lower_bound)
            results.append(_Result(size, name, offsets, setup, order, all_ops))
    best = min(results, key=lambda r: (r.arena, len(r.setup.pairs) == 0))
    assert lb is not None
    return replace(best, lower_bound=lb[0], lower_bound_step=lb[1])


def candidate_orders(graph: Graph) -> list[tuple[int, ...]]:
    """The graph's order, plus memory-greedy and depth-first orders when it has branches."""
    n = len(graph.ops)
    original = tuple(range(n))
    producer = {t: i for i, op in enumerate(graph.ops) for t in op.outputs}
    deps = [{producer[t] for t in op.inputs if t is not None and t in producer} for op in graph.ops]
    consumers: dict[int, int] = {}
    for op in graph.ops:
        for t in {t for t in op.inputs if t is not None}:
            consumers[t] = consumers.get(t, 0) + 1
    if all(c <= 1 for c in consumers.values()):
        return [original]

    def size(t: int) -> int:
        tt = graph.tensors[t]
        return 0 if tt.is_constant else tt.size_bytes

    def schedule(key) -> tuple[int, ...]:
        done: list[int] = []
        remaining = dict(consumers)
        while len(done) < n:
            ready = [i for i in range(n) if i not in done and deps[i] <= set(done)]
            i = min(ready, key=lambda j: key(j, done, remaining))
            for t in {t for t in graph.ops[i].inputs if t is not None}:
                remaining[t] -= 1
            done.append(i)
        return tuple(done)

    def memory(j, done, remaining):
        op = graph.ops[j]
        born = sum(size(t) for t in op.outputs)
        freed = sum(size(t) for t in {t for t in op.inputs if t is not None} if remaining[t] == 1)
        return (born - freed, j)

    def depth_first(j, done, remaining):
        last = max((done.index(d) for d in deps[j]), default=-1)
        return (-last, j)

    orders = [original]
    for key in (memory, depth_first):
        o = schedule(key)
        if o not in orders:
            orders.append(o)
    return orders


def plan_memory(
    graph: Graph,
    alignment: int | None = None,
    options: PlanOptions | None = None,
    order: Sequence[int] | None = None,
) -> MemoryPlan:
    """Plan the arena of `graph`. `alignment` overrides options.alignment (4, or 16 for MVE)."""
    options = options or PlanOptions()
    if alignment is not None:
        options = replace(options, alignment=alignment)
    if options.alignment <= 0 or options.alignment & (options.alignment - 1):
        raise ValueError(f"alignment must be a power of two, not {options.alignment}")
    if order is not None:
        orders = [tuple(order)]
        check_order(graph, orders[0])
    elif options.reorder:
        orders = candidate_orders(graph)
    else:
        orders = [tuple(range(len(graph.ops)))]

    results = [_plan_order(graph, o, options) for o in orders]
    best = min(results, key=lambda r: (r.arena, orders.index(r.order)))
    return _to_plan(graph, best, options)


def _busiest_step(buffers: list[PlannedBuffer], steps: int) -> int:
    """The step at which the most arena bytes hold live data (overlaps counted once)."""
    best_step, best = 0, -1
    for step in range(max(steps, 1)):
        spans = sorted(
            (b.offset, b.offset + b.size) for b in buffers if b.first_op <= step <= b.last_op
        )
        used, reach = 0, 0
        for lo, hi in spans:
            if hi > reach:
                used += hi - max(lo, reach)
                reach = hi
        if used > best:
            best_step, best = step, used
    return best_step


def _to_plan(graph: Graph, r: _Result, options: PlanOptions) -> MemoryPlan:
    s = r.setup
    buffers = []
    for k, b in enumerate(s.blocks):
        tensors = s.block_tensors[k]
        if tensors:
            root = min(tensors, key=lambda t: (s.blocks[k].first, t))
            name, kind, op = graph.tensors[root].name, "tensor", None
        else:
            op = s.block_op[k]
            name, kind = f"scratch of op {op} {graph.ops[op].name}", "scratch"
        buffers.append(
            PlannedBuffer(name, kind, tensors, r.offsets[k], s.real_size[k], b.first, b.last, op)
        )
    used = [
        UsedOverlap(
            ov.op,
            ov.mode,
            ov.input_tensor,
            ov.output_tensor,
            r.offsets[pr.dst] - r.offsets[pr.src],
        )
        for pr, ov in zip(s.pairs, s.pair_overlap)
    ]
    aliases = []
    for step, i in enumerate(r.order):
        del step
        for ov in op_overlaps(graph, i, options):
            if ov.mode is OverlapMode.ALIAS:
                aliases.append(UsedOverlap(i, ov.mode, ov.input_tensor, ov.output_tensor, 0))
    peak_step = _busiest_step(buffers, len(r.order))
    return MemoryPlan(
        arena_bytes=r.arena,
        lower_bound_bytes=r.lower_bound,
        lower_bound_step=r.lower_bound_step,
        peak_step=peak_step,
        alignment=options.alignment,
        op_order=r.order,
        buffers=tuple(sorted(buffers, key=lambda b: (b.first_op, b.kind, b.offset))),
        overlaps=tuple(sorted(aliases + used, key=lambda u: u.op)),
        strategy=r.strategy,
        options=options,
        graph=graph,
    )
