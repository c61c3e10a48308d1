"""Placement strategies: give every block an aligned offset so that blocks live at the same
step never overlap, except pairs whose overlap a declared rule allows.

The interface is TFLite Micro's planner interface, reduced to data: a `Problem` (blocks with
size and first/last step, plus allowed overlapping pairs) goes in, offsets come out. Each
strategy is a pure function; the planner runs them all and keeps the smallest arena.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Block:
    size: int
    first: int
    last: int
    after: int | None = None  # block this one is computed from (its op's main input), a hint


@dataclass(frozen=True)
class Pair:
    """Blocks `src` (dies at the step) and `dst` (born there) may overlap if the offset
    d = offset[dst] - offset[src] satisfies d_min <= d <= d_max and d % modulus == 0."""

    src: int
    dst: int
    d_min: int
    d_max: int
    modulus: int
    residue: int = 0  # d % modulus == residue (non-zero only in mirrored problems)

    def allows(self, d: int) -> bool:
        return self.d_min <= d <= self.d_max and (d - self.residue) % self.modulus == 0


@dataclass(frozen=True)
class Problem:
    blocks: tuple[Block, ...]
    pairs: tuple[Pair, ...]
    alignment: int


def align_up(x: int, a: int) -> int:
    return -(-x // a) * a


def align_down(x: int, a: int) -> int:
    return x // a * a


class _Placer:
    def __init__(self, problem: Problem):
        self.p = problem
        self.a = problem.alignment
        blocks = problem.blocks
        self.conflicts: list[list[int]] = [
            [j for j, c in enumerate(blocks) if j != i and b.first <= c.last and c.first <= b.last]
            for i, b in enumerate(blocks)
        ]
        self.pair_of: dict[tuple[int, int], Pair] = {}
        for pr in problem.pairs:
            self.pair_of[(pr.src, pr.dst)] = pr
        self.offsets: list[int | None] = [None] * len(blocks)

    def ok(self, i: int, at: int) -> bool:
        if at < 0 or at % self.a:
            return False
        size = self.p.blocks[i].size
        for j in self.conflicts[i]:
            o = self.offsets[j]
            if o is None:
                continue
            if at < o + self.p.blocks[j].size and o < at + size:
                pr = self.pair_of.get((j, i))
                if pr is not None and pr.allows(at - o):
                    continue
                pr = self.pair_of.get((i, j))
                if pr is not None and pr.allows(o - at):
                    continue
                return False
        return True

    def pair_candidates(self, i: int) -> list[int]:
        out = []
        size = self.p.blocks[i].size
        for (s, d), pr in self.pair_of.items():
            if d == i and self.offsets[s] is not None:
                base, other, sign = self.offsets[s], self.p.blocks[s].size, 1
                in_size, out_size = other, size
            elif s == i and self.offsets[d] is not None:
                base, other, sign = self.offsets[d], self.p.blocks[d].size, -1
                in_size, out_size = size, other
            else:
                continue
            step = math.lcm(pr.modulus, self.a)
            for want in (0, in_size - out_size, pr.d_max, pr.d_min):
                w = min(max(want, pr.d_min), pr.d_max)
                for dd in (align_down(w, step), align_up(w, step)):
                    for shift in range(0, step, self.a):  # residues of a mirrored pair
                        if pr.allows(dd + shift):
                            out.append(base + sign * (dd + shift))
                            break
        return out

    def candidates(self, i: int, top: int | None = None) -> list[int]:
        size = self.p.blocks[i].size
        cands = {0}
        for j in self.conflicts[i]:
            o = self.offsets[j]
            if o is not None:
                cands.add(align_up(o + self.p.blocks[j].size, self.a))
                cands.add(align_down(o - size, self.a))
        if top is not None:
            cands.add(align_down(top - size, self.a))
        cands.update(self.pair_candidates(i))
        return sorted(c for c in cands if c >= 0 and (top is None or c + size <= top))

    def high_water(self) -> int:
        return max(
            (o + b.size for o, b in zip(self.offsets, self.p.blocks) if o is not None), default=0
        )


def _run(problem: Problem, order: list[int], pick: str) -> list[int]:
    pl = _Placer(problem)
    for i in order:
        valid = [c for c in pl.candidates(i) if pl.ok(i, c)]
        if pick == "first":
            at = valid[0]
        else:  # "least growth": the arena grows least; among equals, the tightest hole
            hw = pl.high_water()
            size = problem.blocks[i].size
            at = min(valid, key=lambda c: (max(hw, c + size), _slack(pl, i, c), c))
        pl.offsets[i] = at
    return [int(o) for o in pl.offsets]  # type: ignore[arg-type]


def _slack(pl: _Placer, i: int, at: int) -> int:
    """Free bytes between the block's end and the next live block above it."""
    end = at + pl.p.blocks[i].size
    above = [
        pl.offsets[j]
        for j in pl.conflicts[i]
        if pl.offsets[j] is not None and pl.offsets[j] >= end  # type: ignore[operator]
    ]
    return (min(above) - end) if above else 0  # type: ignore[type-var, operator]


def two_ended(problem: Problem, capacity: int) -> list[int] | None:
    """Ping-pong placement inside a fixed capacity, in order of birth.

    Each block goes to the opposite end from the block it is computed from (chains then
    alternate bottom/top, which meets the lower bound), or onto that block where a pair
    allows it; scratch fills the middle. Returns None when something does not fit.
    """
    pl = _Placer(problem)
    side: list[str] = ["low"] * len(problem.blocks)
    blocks = problem.blocks
    order = sorted(range(len(blocks)), key=lambda i: (blocks[i].first, -blocks[i].size))
    for i in order:
        b = problem.blocks[i]
        valid = [c for c in pl.candidates(i, top=capacity) if pl.ok(i, c)]
        if not valid:
            return None
        want = "high" if b.after is not None and side[b.after] == "low" else "low"
        paired = sorted(
            c for c in set(pl.pair_candidates(i)) if c in valid and _overlaps_partner(pl, i, c)
        )
        if paired:
            # stay on the partner's side, as far toward the other end as the rule allows
            at = paired[0] if want == "high" else paired[-1]
            side[i] = "low" if want == "high" else "high"
        else:
            at = valid[-1] if want == "high" else valid[0]
            side[i] = want
        pl.offsets[i] = at
    return [int(o) for o in pl.offsets]  # type: ignore[arg-type]


def _overlaps_partner(pl: _Placer, i: int, at: int) -> bool:
    size = pl.p.blocks[i].size
    for s, d in pl.pair_of:
        j = s if d == i else d if s == i else None
        if j is None or pl.offsets[j] is None:
            continue
        o = pl.offsets[j]
        if at < o + pl.p.blocks[j].size and o < at + size:  # type: ignore[operator]
            return True
    return False


def _orders(problem: Problem) -> dict[str, list[int]]:
    b = problem.blocks
    idx = range(len(b))
    return {
        "size": sorted(idx, key=lambda i: (-b[i].size, b[i].first)),  # TFLite Micro's greedy
        "birth": sorted(idx, key=lambda i: (b[i].first, -b[i].size)),
        "duration": sorted(idx, key=lambda i: (-(b[i].last - b[i].first), -b[i].size)),
        "area": sorted(idx, key=lambda i: (-b[i].size * (b[i].last - b[i].first + 1), b[i].first)),
        "peak": _peak_first(b),
    }


def _peak_first(b: tuple[Block, ...]) -> list[int]:
    """The blocks live at the busiest step first (largest first), then the rest by duration:
    the peak is the step the lower bound comes from, so packing it first leaves the other
    steps, which have room to spare, to fit around it."""
    if not b:
        return []
    load: dict[int, int] = {}
    for blk in b:
        for step in range(blk.first, blk.last + 1):
            load[step] = load.get(step, 0) + blk.size
    peak = max(load, key=lambda s: (load[s], -s))
    live = [i for i, blk in enumerate(b) if blk.first <= peak <= blk.last]
    rest = [i for i, blk in enumerate(b) if not blk.first <= peak <= blk.last]
    return sorted(live, key=lambda i: (-b[i].size, b[i].first)) + sorted(
        rest, key=lambda i: (-(b[i].last - b[i].first), -b[i].size)
    )


Strategy = Callable[[Problem], list[int] | None]


def mirror(problem: Problem) -> Problem:
    """The same problem seen from the top of the arena: offset' = top - offset - size.

    Block sizes must be multiples of the alignment so mirrored offsets stay aligned."""
    b = problem.blocks
    pairs = []
    for pr in problem.pairs:
        shift = b[pr.src].size - b[pr.dst].size  # d' = shift - d
        pairs.append(
            Pair(
                pr.src,
                pr.dst,
                shift - pr.d_max,
                shift - pr.d_min,
                pr.modulus,
                (shift - pr.residue) % pr.modulus,
            )
        )
    return Problem(problem.blocks, tuple(pairs), problem.alignment)


def unmirror(problem: Problem, offsets: list[int] | None) -> list[int] | None:
    if offsets is None:
        return None
    top = max((o + b.size for o, b in zip(offsets, problem.blocks)), default=0)
    return [top - o - b.size for o, b in zip(offsets, problem.blocks)]


def strategies(lower_bound: int) -> dict[str, Strategy]:
    """Every strategy by name; `lower_bound` is the capacity the two-ended one aims for.
    Each also runs on the mirrored problem (placing from the top of the arena down)."""
    base: dict[str, Strategy] = {}
    for name in ("size", "birth", "duration", "area", "peak"):
        for pick, label in (("first", "first-fit"), ("least", "best-fit")):
            base[f"{label} by {name}"] = lambda p, n=name, k=pick: _run(p, _orders(p)[n], k)
    base["two-ended at lower bound"] = lambda p: two_ended(p, lower_bound)
    out = dict(base)
    for name, fn in base.items():
        out[f"{name}, top down"] = lambda p, f=fn: unmirror(p, f(mirror(p)))
    return out


def arena_size(problem: Problem, offsets: list[int]) -> int:
    end = max((o + b.size for o, b in zip(offsets, problem.blocks)), default=0)
    return align_up(end, problem.alignment)
