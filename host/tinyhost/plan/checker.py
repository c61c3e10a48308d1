"""Independent check of a MemoryPlan against the graph and the overlap table.

It recomputes lifetimes itself (not with the planner's code) and accepts two tensors that
are live at the same step and share bytes only when overlap.py declares it: a RESHAPE /
SQUEEZE alias at the same offset, or an in-place overlap the plan states, whose input dies
at that op and whose offset satisfies the rule. Every test of the planner runs it.
"""

from __future__ import annotations

from tinyhost.ir import Graph
from tinyhost.plan.overlap import OverlapMode, op_overlaps
from tinyhost.plan.planner import MemoryPlan
from tinyhost.plan.scratch import scratch_bytes


def _lifetimes(graph: Graph, order: tuple[int, ...]) -> dict[int, tuple[int, int]]:
    span: dict[int, list[int]] = {}
    end = max(len(order) - 1, 0)

    def touch(t: int, step: int) -> None:
        if graph.tensors[t].is_constant:
            return
        s = span.setdefault(t, [step, step])
        s[0], s[1] = min(s[0], step), max(s[1], step)

    produced = {t for op in graph.ops for t in op.outputs}
    for step, i in enumerate(order):
        for t in graph.ops[i].inputs:
            if t is not None:
                touch(t, step)
                if t not in produced:
                    touch(t, 0)
        for t in graph.ops[i].outputs:
            touch(t, step)
    for t in graph.inputs:
        touch(t, 0)
    for t in graph.outputs:
        touch(t, end)
    for t in graph.variable_tensors():  # state: kept from one invoke to the next
        if t in span:
            touch(t, 0)
            touch(t, end)
    return {t: (s[0], s[1]) for t, s in span.items()}


def check_plan(plan: MemoryPlan) -> list[str]:
    """Every way the plan is wrong, as sentences; an empty list means it is valid."""
    g, order, a = plan.graph, plan.op_order, plan.alignment
    errors: list[str] = []
    if sorted(order) != list(range(len(g.ops))):
        return [f"op order {order} is not a permutation of the ops"]
    step_of = {i: s for s, i in enumerate(order)}
    life = _lifetimes(g, order)

    if plan.arena_bytes % a:
        errors.append(f"arena size {plan.arena_bytes} not a multiple of {a}")
    where: dict[int, tuple[int, int]] = {}  # tensor -> (offset, buffer index)
    for k, b in enumerate(plan.buffers):
        if b.offset % a:
            errors.append(f"{b.name}: offset {b.offset} not aligned to {a}")
        if b.offset < 0 or b.offset + b.size > plan.arena_bytes:
            errors.append(f"{b.name}: [{b.offset}, {b.offset + b.size}) outside the arena")
        for t in b.tensors:
            if t in where:
                errors.append(f"tensor {t} is in two buffers")
            where[t] = (b.offset, k)
            if g.tensors[t].size_bytes > b.size:
                errors.append(f"{b.name}: {b.size} bytes < tensor {t}'s {g.tensors[t].size_bytes}")
    for t, (first, last) in life.items():
        if t not in where:
            errors.append(f"tensor {t} ({g.tensors[t].name}) has no buffer")
            continue
        b = plan.buffers[where[t][1]]
        if not (b.first_op <= first and last <= b.last_op):
            errors.append(
                f"{b.name}: steps [{b.first_op}, {b.last_op}] miss tensor {t}'s [{first}, {last}]"
            )

    # Declared aliases, derived again from the table.
    alias_root: dict[int, int] = {}
    for i in order:
        for ov in op_overlaps(g, i, plan.options):
            if ov.mode is OverlapMode.ALIAS:
                alias_root[ov.output_tensor] = alias_root.get(ov.input_tensor, ov.input_tensor)

    def root(t: int) -> int:
        return alias_root.get(t, t)

    # In-place overlaps the plan states; each must be one the table allows.
    inplace: dict[tuple[int, int], int] = {}  # (input, output) -> op
    used_mode: dict[int, OverlapMode] = {}
    outputs = set(g.outputs)
    for u in plan.overlaps:
        if u.mode is OverlapMode.ALIAS:
            if root(u.output_tensor) != root(u.input_tensor):
                errors.append(f"op {u.op}: alias {u.input_tensor}->{u.output_tensor} undeclared")
            continue
        allowed = [
            ov
            for ov in op_overlaps(g, u.op, plan.options)
            if ov.mode is u.mode
            and ov.input_tensor == u.input_tensor
            and ov.output_tensor == u.output_tensor
        ]
        s = step_of[u.op]
        group = [t for t in life if root(t) == root(u.input_tensor)]
        dies = all(life[t][1] <= s for t in group) and not any(t in outputs for t in group)
        if not allowed:
            errors.append(f"op {u.op}: {u.mode.value} overlap of {u.input_tensor} not declared")
        elif not dies:
            errors.append(f"op {u.op}: input {u.input_tensor} is still needed after the op")
        elif u.input_tensor in where and u.output_tensor in where:
            d = where[u.output_tensor][0] - where[u.input_tensor][0]
            if d != u.d or not allowed[0].allows(d):
                errors.append(f"op {u.op}: offset difference {d} breaks the {u.mode.value} rule")
        inplace[(u.input_tensor, u.output_tensor)] = u.op
        if allowed:
            used_mode[u.op] = u.mode

    # Scratch: present, big enough for the kernel variant the plan implies, alone at its op.
    for s, i in enumerate(order):
        op = g.ops[i]
        need = scratch_bytes(g, op, plan.options)
        if i in used_mode:
            need = next(
                ov.scratch_bytes
                for ov in op_overlaps(g, i, plan.options)
                if ov.mode is used_mode[i]
            )
        sc = plan.scratch_for(i)
        if need and (sc is None or sc.size < need or not sc.first_op <= s <= sc.last_op):
            errors.append(f"op {i} {op.name}: needs {need} scratch bytes at step {s}")

    # Pairwise: nothing live at the same step shares bytes unless declared.
    inplace_roots = {(root(a), root(b)) for a, b in inplace}
    spans = []
    for t, (first, last) in life.items():
        if t in where:
            spans.append((("t", t), where[t][0], g.tensors[t].size_bytes, first, last))
    for b in plan.buffers:
        if b.kind == "scratch":
            spans.append((("s", b.op), b.offset, b.size, b.first_op, b.last_op))
    for x in range(len(spans)):
        kx, ox, sx, fx, lx = spans[x]
        for y in range(x + 1, len(spans)):
            ky, oy, sy, fy, ly = spans[y]
            if not (fx <= ly and fy <= lx and ox < oy + sy and oy < ox + sx and sx and sy):
                continue
            if kx[0] == ky[0] == "t":
                tx, ty = kx[1], ky[1]
                if root(tx) == root(ty) and ox == oy:
                    continue
                # An in-place pair is about bytes: it covers every alias of its input (an
                # ADD of x and reshape(x) reads both at index i before writing index i).
                if {(root(tx), root(ty)), (root(ty), root(tx))} & inplace_roots:
                    continue
            errors.append(
                f"{_label(g, kx)} [{ox}, {ox + sx}) steps [{fx}, {lx}] overlaps "
                f"{_label(g, ky)} [{oy}, {oy + sy}) steps [{fy}, {ly}]"
            )
    return errors


def _label(g: Graph, key: tuple[str, int | None]) -> str:
    kind, v = key
    if kind == "t" and v is not None:
        return f"tensor {v} ({g.tensors[v].name})"
    return f"scratch of op {v}"
