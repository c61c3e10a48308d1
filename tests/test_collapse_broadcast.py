"""collapse_broadcast (the shapes the compiled backend passes to the binary elementwise
kernels): the reduced shapes walk the same elements as the originals, checked with NumPy's
broadcasting on random shapes of every form, and no two neighbouring dims are left that
could merge."""

from __future__ import annotations

import numpy as np

from tinyhost.arith.elementwise import collapse_broadcast


def _shapes(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...]]:
    rank = int(rng.integers(1, 7))
    out = tuple(int(d) for d in rng.integers(1, 5, rank))
    a, b = (tuple(d if rng.integers(0, 2) else 1 for d in out) for _ in range(2))
    return a[int(rng.integers(0, rank)):], b[int(rng.integers(0, rank)):]


def test_collapsed_shapes_walk_the_same_elements() -> None:
    rng = np.random.default_rng(14)
    forms = [((1, 20, 1, 2), (1, 20, 1, 1)), ((1, 6, 1, 2), (1, 1, 1, 2)), ((1, 1, 1, 1),) * 2,
             ((1, 5, 5, 8),) * 2, ((3,), (2, 4, 3)), ((2, 1, 3, 4), (1, 5, 3, 1))]
    forms += [_shapes(rng) for _ in range(400)]
    for s1, s2 in forms:
        out = tuple(np.broadcast_shapes(s1, s2))
        c1, c2, co = collapse_broadcast(s1, s2, out)
        assert len(c1) == len(c2) == len(co) >= 1 and int(np.prod(co)) == int(np.prod(out))
        assert tuple(np.broadcast_shapes(c1, c2)) == co
        for s, c in ((s1, c1), (s2, c2)):
            x = np.arange(int(np.prod(s))).reshape(s)
            want = np.broadcast_to(x, out).ravel()
            assert np.array_equal(np.broadcast_to(x.reshape(c), co).ravel(), want), (s1, s2)
        # neighbours where each input advances in both or broadcasts in both are merged
        flags = [(a != 1, b != 1) for a, b in zip(c1, c2, strict=True)]
        assert all(f != g for f, g in zip(flags, flags[1:])), (s1, s2, c1, c2)
        assert co == (1,) or 1 not in co
