"""Scratch granting: where each kernel call's scratch lives in the arena, for every backend.

A kernel asks for `plan.scratch.scratch_bytes` (its `*_scratch_size`); the planner placed a
scratch buffer of that size where it could. This step decides the final grant per call:
- the planned buffer when it is large enough;
- more, when the kernel has a faster path for more scratch (`fast_scratch_bytes`, the C
  `*_scratch_size_fast`) and the plan has that many bytes free at that step (no growth);
- otherwise a shared tail region after the planned arena (the arena grows by the largest).
"""

from __future__ import annotations

from dataclasses import dataclass

from tinyhost.codegen.lower import Call
from tinyhost.ir import Graph
from tinyhost.plan import MemoryPlan, PlanOptions
from tinyhost.plan.scratch import fast_scratch_bytes, scratch_bytes


@dataclass(frozen=True)
class ScratchGrant:
    op: int
    offset: int  # in the arena
    size: int
    fast: bool  # the kernel's faster path (size >= its fast scratch)


@dataclass(frozen=True)
class ScratchGrants:
    grants: dict[int, ScratchGrant]  # by op index; ops that need none are absent
    tail_bytes: int  # scratch placed after the planned arena
    arena_bytes: int  # the planned arena plus the tail

    def for_op(self, op: int) -> ScratchGrant | None:
        return self.grants.get(op)


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def grant_scratch(graph: Graph, calls: list[Call], plan: MemoryPlan,
                  options: PlanOptions) -> ScratchGrants:
    """Scratch for every call of `calls` (any order) under `plan`, built for `options.dsp`."""
    by_op = {c.op: c for c in calls}
    tail_offset = _align(plan.arena_bytes, options.alignment)
    tail = 0
    grants: dict[int, ScratchGrant] = {}
    for step, i in enumerate(plan.op_order):
        if i not in by_op:
            continue
        op = graph.ops[i]
        need = scratch_bytes(graph, op, options)
        # A faster path may want scratch where the ordinary one needs none (the general
        # depthwise with ch_mult > 1): it gets it only from free room, never from the tail.
        fast = fast_scratch_bytes(graph, op, options)
        if need == 0 and fast == 0:
            continue
        planned = plan.scratch_for(i)
        room = plan.free_block(step, fast, keep=planned) if fast > need else None
        if room is not None:
            grants[i] = ScratchGrant(i, room, fast, True)
        elif need == 0:
            continue
        elif planned is not None and planned.size >= need:
            grants[i] = ScratchGrant(i, planned.offset, planned.size, False)
        else:
            grants[i] = ScratchGrant(i, tail_offset, need, False)
            tail = max(tail, _align(need, options.alignment))
    arena = max(plan.arena_bytes, tail_offset + tail) if tail else plan.arena_bytes
    return ScratchGrants(grants, tail, arena)
