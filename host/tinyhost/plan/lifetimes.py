"""When each activation is live, in steps of an execution order.

A step is a position in the op order being planned (the graph's own order unless the planner
reorders a graph with branches). Graph inputs are written by the host before the first op
and graph outputs read after the last, so their lifetimes reach step 0 and the last step.
Variable tensors (state kept across invokes, e.g. SVDF's) are persistent: live from the first
step to the last, so no other tensor or scratch ever shares their bytes and they hold their
values from one invoke to the next. Constants live in flash and have no lifetime here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tinyhost.ir import Graph


@dataclass(frozen=True)
class Lifetime:
    first: int  # first step at which the tensor's bytes must hold data (written)
    last: int  # last step that reads them

    def overlaps(self, other: Lifetime) -> bool:
        return self.first <= other.last and other.first <= self.last


def check_order(graph: Graph, order: Sequence[int]) -> None:
    """Raise ValueError unless `order` is a permutation of the ops that respects data flow."""
    if sorted(order) != list(range(len(graph.ops))):
        raise ValueError(f"op order {list(order)} is not a permutation of the graph's ops")
    producer = {t: i for i, op in enumerate(graph.ops) for t in op.outputs}
    done: set[int] = set()
    for i in order:
        for t in graph.ops[i].inputs:
            if t is not None and t in producer and producer[t] not in done:
                raise ValueError(f"op {i} runs before op {producer[t]} that produces its input {t}")
        done.add(i)


def arena_tensors(graph: Graph) -> list[int]:
    """Tensors that need arena bytes: every non-constant tensor an op or the host touches."""
    used: set[int] = set(graph.inputs) | set(graph.outputs)
    for op in graph.ops:
        used.update(t for t in op.inputs if t is not None)
        used.update(op.outputs)
    return sorted(t for t in used if not graph.tensors[t].is_constant)


def tensor_lifetimes(graph: Graph, order: Sequence[int]) -> dict[int, Lifetime]:
    """Lifetime of every arena tensor for the ops run in `order`."""
    last_step = max(len(order) - 1, 0)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for step, i in enumerate(order):
        op = graph.ops[i]
        for t in op.inputs:
            if t is not None:
                last[t] = max(last.get(t, step), step)
                first.setdefault(t, 0)  # read but never written by an op: written by the host
        for t in op.outputs:
            first[t] = min(first.get(t, step), step)
            last.setdefault(t, step)  # written, maybe never read: still needs its bytes
    for t in graph.inputs:
        first[t] = 0
        last.setdefault(t, 0)
    for t in graph.outputs:
        first.setdefault(t, 0)
        last[t] = last_step
    for t in graph.variable_tensors():
        if t in first:
            first[t], last[t] = 0, last_step
    return {t: Lifetime(first[t], last[t]) for t in arena_tensors(graph)}
