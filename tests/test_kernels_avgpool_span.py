"""Issue 14's stride-1 AVERAGE_POOL_2D span paths (th_avgpool_s8.c, DSP build with scratch),
and the global path (AVG_GLOBAL, no scratch: one output pixel whose window spans whole rows).

On Cortex-M4 the groups of four channels of a span run in assembly: odd and even window
counts (one loop: an even count divides by a tie-free reciprocal, no sign lanes), the
leaving column moved to the next row or not (rows without a row entering and one leaving,
the pixels left of the padding), the columns' sums word-aligned (LDRD / STRD; an odd C's
columns C + 1 halfwords apart, the pad after the last channel), then the channels past C &
~3 two at a time in one word and the last one alone; the columns right of the last window
move in assembly too. Activations other than the full range take the C loops. The cases:
windows 1x1 .. 9x8, planes from one pixel past the window to about three windows, SAME
(padding on every side: top / left and bottom / right differ by one for even windows) and
VALID, C = 1 .. 9, 12, 13, 16, 18, 31 (every tail 0 .. 3, even and odd), one or two images.
Tail cases: C with 1-3 channels past the groups (the assembly's halfword lanes) over rows
2-6 windows wide (long spans, SAME border spans, VALID's columns right of the last window).
Small-count cases: SAME with a kernel side of 1 or 2, whose corner or border windows hold 1
or 2 taps (s1_span_small; the rest of the row the reciprocal), constant inputs at -128 and
127. All against the NumPy reference, on the host (ASan / UBSan, portable and emulated DSP
builds) and in one batch on QEMU mps2-an386 (the native DSP build: the assembly). In-place
cases: the output over the input at the bound plan/overlap.py grants a stride-1 average pool
(row_above: the fused order on QEMU) and at the plain raster bound past it (the kernel's own
check, avg_s1_d_max, must take the split order there).

Global cases: one output pixel over the whole plane (VALID k = H x W, SAME with a larger
window) or over whole rows only (VALID, KH < H, SH > H - KH), planes of 1 .. ~1300 pixels
(past the 256-pixel lane flushes), C = 1 .. 9, 12, 13, 16, 18, 31 (groups of four, the
overlapping last group, the flat paths of 1, 2 and 3 channels), constant inputs at -128 and
127 (the int16 lanes at their bounds), and a window short of the full width (another path).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from kernels.cases_ops import PoolCase
from kernels.pool_batches import (
    avgpool_case,
    check_on_cortex_m4,
    check_on_host,
    draw_cases,
    needs_qemu,
)
from tinyhost.ir import Padding
from tinyhost.plan.overlap import sliding_d_max_padded

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")

CHANNELS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 18, 31]


def _stride1_case(rng: np.random.Generator, i: int, shape: tuple[int, int, int],
                  window: tuple[int, int], padding: Padding, max_elements: int,
                  bounds_at: int) -> PoolCase | None:
    """A stride-1 average pool of draw i (None past max_elements); one in four draws
    (i % 4 == bounds_at) with every input at a bound of int8 (-128 where i % 8 == bounds_at,
    else 127)."""
    if shape[0] * shape[1] * shape[2] > max_elements:
        return None
    case = avgpool_case(rng, i, shape, window, (1, 1), padding)
    if i % 4 == bounds_at:
        value = -128 if i % 8 == bounds_at else 127
        return PoolCase(case.op, np.full_like(case.x, value), case.p, case.out_shape)
    return case


def span_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """Stride-1 average pools cycling through CHANNELS; one in six clamped."""

    def draw(rng: np.random.Generator, i: int) -> PoolCase | None:
        c = CHANNELS[i % len(CHANNELS)]
        fh, fw = int(rng.integers(1, 10)), int(rng.integers(1, 9))
        if fh * fw < 3:
            return None
        h, w = int(rng.integers(fh, 3 * fh + 2)), int(rng.integers(fw, 3 * fw + 2))
        padding = Padding.SAME if i % 2 else Padding.VALID
        if h * w * c > max_elements:
            return None
        return avgpool_case(rng, i, (h, w, c), (fh, fw), (1, 1), padding)

    return draw_cases(seed, count, draw)


TAIL_CHANNELS = [5, 6, 7, 9, 10, 11, 14, 15, 19, 22, 23]


def tail_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """Stride-1 average pools whose C is not a multiple of four (1-3 channels past the groups,
    C odd and even) over wide rows: long interior spans, then the one-pixel border spans of
    SAME and the columns right of the last window (VALID); odd and even window counts."""

    def draw(rng: np.random.Generator, i: int) -> PoolCase | None:
        c = TAIL_CHANNELS[i % len(TAIL_CHANNELS)]
        fh, fw = int(rng.integers(1, 8)), int(rng.integers(2, 9))
        if fh * fw < 3:
            return None
        h, w = int(rng.integers(fh, fh + 5)), int(rng.integers(2 * fw, 6 * fw + 3))
        if h * w * c > max_elements:
            return None
        padding = Padding.SAME if i % 3 else Padding.VALID
        return avgpool_case(rng, i, (h, w, c), (fh, fw), (1, 1), padding)

    return draw_cases(seed, count, draw)


def small_count_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """SAME stride-1 pools whose corner or border windows hold 1 or 2 input taps (kernels
    with a side of 1 or 2: those pixels take s1_span_small, the rest of the row the
    reciprocal), every C tail, even and odd C; one in four at the inputs' bounds."""

    def draw(rng: np.random.Generator, i: int) -> PoolCase | None:
        c = TAIL_CHANNELS[i % len(TAIL_CHANNELS)] if i % 3 else 4 * int(rng.integers(1, 4))
        short, long = int(rng.integers(1, 3)), int(rng.integers(2, 5))
        fh, fw = (short, long) if i % 2 else (long, short)
        h, w = int(rng.integers(1, 3 * fh + 3)), int(rng.integers(1, 3 * fw + 3))
        return _stride1_case(rng, i, (h, w, c), (fh, fw), Padding.SAME, max_elements,
                             bounds_at=3)

    return draw_cases(seed, count, draw)


def row_table_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """Stride-1 rows whose segments (pixels of one count and one update) the assembly walks
    from a table in one call per row (s1_row_w), C >= 4 odd and even: SAME with
    windows 9-16 wide (more segments than the table holds: s1_span by segment), planes
    narrower than the window (the left padding past the last pixel), window heights that
    change the table between rows (SAME's top and bottom rows), two images (the table
    made again for the second); one in six clamped (the C loops)."""

    def draw(rng: np.random.Generator, i: int) -> PoolCase | None:
        c = [4, 5, 6, 7, 8, 9, 11, 13][i % 8]
        kind = i % 3
        if kind == 0:  # wide windows: 2 * fw - 1 > 16 segments
            fh, fw = int(rng.integers(1, 4)), int(rng.integers(9, 17))
            w = int(rng.integers(fw, 3 * fw))
        elif kind == 1:  # a plane narrower than the window
            fh, fw = int(rng.integers(2, 6)), int(rng.integers(3, 9))
            w = int(rng.integers(1, fw))
        else:
            fh, fw = int(rng.integers(2, 8)), int(rng.integers(2, 8))
            w = int(rng.integers(fw, 4 * fw))
        if fh * fw < 3:
            return None
        h = int(rng.integers(1, 3 * fh + 2))
        if h * w * c > max_elements:
            return None
        padding = Padding.VALID if kind == 2 and i % 2 else Padding.SAME
        if padding is Padding.VALID and (h < fh or w < fw):
            return None
        return avgpool_case(rng, i, (h, w, c), (fh, fw), (1, 1), padding)

    return draw_cases(seed, count, draw)


def fused_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """The fused order of the row walker (output apart from the input: each column moved to
    the row's window rows when it enters): VALID over many rows (its columns drift by -1 a
    row, +~row l, cancelled in each row's start; one in four at the inputs' bounds, where
    the lanes reach -128 * 256), SAME with windows up to 15 (its top rows one row entering,
    bottom rows one leaving), planes narrower than the window (every column moved before
    the walk), C with every tail, odd and even; one in six clamped, one in five two images
    (avgpool_case)."""

    def draw(rng: np.random.Generator, i: int) -> PoolCase | None:
        c = [4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 16, 19][i // 3 % 12]  # every C in each kind
        kind = i % 3
        fh, fw = int(rng.integers(1, 16)), int(rng.integers(2, 16))
        if fh * fw < 3 or fh * fw > 256:
            return None
        if kind == 0:  # VALID, many rows
            h, w = int(rng.integers(3 * fh, 3 * fh + 40)), int(rng.integers(fw, fw + 6))
            padding = Padding.VALID
        elif kind == 1:  # SAME
            h, w = int(rng.integers(fh, 3 * fh + 2)), int(rng.integers(fw, 3 * fw + 2))
            padding = Padding.SAME
        else:  # SAME, a plane narrower than the window
            h, w = int(rng.integers(1, 3 * fh + 2)), int(rng.integers(1, fw))
            padding = Padding.SAME
        return _stride1_case(rng, i, (h, w, c), (fh, fw), padding, max_elements,
                             bounds_at=0)

    return draw_cases(seed, count, draw)


def few_rows_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """Planes one to three rows taller than the window (VALID: 2-4 output rows; SAME: its
    first full row then one to three more), windows wide beside few output columns (the
    fused order's table for rows of both moving set after VALID's first row or SAME's first
    full one, s1_steady_rows from the next row: one row, or more), windows two columns wide
    (VALID's mode 4) among them; C 4-19 with every tail and either group parity, one in
    four at the inputs' bounds, one in six clamped, one in five two images (avgpool_case)."""

    def draw(rng: np.random.Generator, i: int) -> PoolCase | None:
        c = [4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 16, 18, 19][i // 2 % 13]
        fh, fw = int(rng.integers(1, 8)), int(rng.integers(2, 10))
        if fh * fw < 3:
            return None
        h = fh + int(rng.integers(1, 4))
        w = fw + int(rng.integers(0, 4))
        padding = Padding.VALID if i % 2 == 0 else Padding.SAME
        return _stride1_case(rng, i, (h, w, c), (fh, fw), padding, max_elements,
                             bounds_at=1)

    return draw_cases(seed, count, draw)


def w2_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """Windows two columns wide (the row walker's TH_S1_W2_ROW_LOOP where both rows move:
    acc + the entering column, which becomes acc; VALID takes it instead of mode 7's drift):
    VALID and SAME (its right padding entering after the loop: acc left exact), window
    heights 1-7, C 4-19 with every tail and either group parity, rows past the first few
    (s1_steady_rows); one in four at the inputs' bounds, one in six clamped (the C loops),
    one in five two images (avgpool_case)."""

    def draw(rng: np.random.Generator, i: int) -> PoolCase | None:
        c = [4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 16, 19][i // 2 % 12]
        fh = int(rng.integers(1, 8))
        if 2 * fh < 3:
            fh = 2
        padding = Padding.VALID if i % 2 == 0 else Padding.SAME
        h, w = int(rng.integers(fh, 3 * fh + 8)), int(rng.integers(2, 14))
        return _stride1_case(rng, i, (h, w, c), (fh, 2), padding, max_elements,
                             bounds_at=1)

    return draw_cases(seed, count, draw)


def first_rows_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """Pools whose first output row's window holds two input rows (SAME with a 3-row filter,
    VALID or SAME with a 2-row one), C < 16 with every tail, odd and even: those two rows
    summed into the column sums in one pass (cols_rows2), at stride 1 (the row walker's
    padded columns for odd C) and at stride (2, 1) (the pixel-by-pixel rows); wide and
    one-column planes, windows 1 to 7 wide (1: no column before the first pixel's entering
    one, acc set without a warm run)."""

    def draw(rng: np.random.Generator, i: int) -> PoolCase | None:
        c = [1, 3, 4, 5, 6, 7, 9, 10, 11, 13, 14, 15][i % 12]
        fh = 3 if i % 3 else 2
        fw = int(rng.integers(1, 8))
        if fh * fw < 3:
            return None
        h, w = int(rng.integers(2, 12)), int(rng.integers(1, 5 * fw + 3))
        padding = Padding.SAME if fh == 3 or i % 2 else Padding.VALID
        if padding is Padding.VALID and w < fw:
            return None
        stride = (2, 1) if i % 4 == 3 else (1, 1)  # (2, 1): the other strides' rows
        if h * w * c > max_elements:
            return None
        return avgpool_case(rng, i, (h, w, c), (fh, fw), stride, padding)

    return draw_cases(seed, count, draw)


def _in_place_bound(case: PoolCase, row_above: bool) -> int:
    """Rule (c)'s largest d for the pool (plan/overlap.py; row_above: the stride-1 row
    walker's read of the row above each output row's windows), down to a word (the planner's
    offsets are aligned)."""
    p = case.p
    bound = sliding_d_max_padded(case.x.shape, case.out_shape,
                                 (p.filter_h, p.filter_w, 1, 1, 1, 1), (p.pad_top, p.pad_left),
                                 row_above)  # fmt: skip
    return bound & ~3


def in_place_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """fused_cases with the output over the input in one buffer: at the bound the planner
    grants a stride-1 average pool (the row above the windows kept: the fused order where
    the assembly runs, the spans channel by channel elsewhere; the kernel checks the bound
    itself, avg_s1_d_max) and at the plain raster bound past it, where the kernel must
    fall back to the split order (the next window's rows summed afresh)."""
    out = []
    for i, case in enumerate(fused_cases(seed, count, max_elements)):
        d = _in_place_bound(case, row_above=i % 3 != 2)
        out.append(PoolCase(case.op, case.x, case.p, case.out_shape, in_place_d=d))
    return out


def global_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """One output pixel per image: the whole plane (VALID, or SAME with a window one larger
    each way), whole rows (VALID, KH < H, stride past the rest), or (one in seven) a window
    short of the full width; two constant inputs at the lanes' bounds last."""

    def draw(rng: np.random.Generator, i: int) -> PoolCase | None:
        c = CHANNELS[i % len(CHANNELS)]
        h, w = int(rng.integers(1, 41)), int(rng.integers(1, 41))
        if h * w * c > max_elements:
            return None
        kind = i % 7
        if kind == 6 and w > 1:  # not whole rows: the other paths
            kernel, stride, padding = (h, w - 1), (1, 2), Padding.VALID
        elif kind in (1, 4) and h > 1:  # rows [0, KH) of the plane
            kh = int(rng.integers(1, h))
            kernel, stride, padding = (kh, w), (h - kh + 1, 1), Padding.VALID
        elif kind == 3:
            kernel, stride, padding = (h + 1, w + 1), (h + 1, w + 1), Padding.SAME
        else:
            kernel, stride, padding = (h, w), (1, 1), Padding.VALID
        return avgpool_case(rng, i, (h, w, c), kernel, stride, padding)

    out = draw_cases(seed, count, draw)
    rng = np.random.default_rng(seed)
    for value, shape in ((-128, (31, 21, 5)), (127, (1, 1300, 3))):
        case = avgpool_case(rng, 1, shape, shape[:2], (1, 1), Padding.VALID)
        out.append(PoolCase(case.op, np.full_like(case.x, value), case.p, case.out_shape))
    return out


def test_span_cases_reach_every_branch() -> None:
    """Odd and even C with every tail, both paddings, odd and even counts; global cases of
    every tail, past one lane flush, over part of the rows, and not whole rows."""
    cases = span_cases(5, 120, 4000)
    assert {c.x.shape[3] % 4 for c in cases} == {0, 1, 2, 3}
    assert any(c.p.pad_left > 0 and c.p.pad_right > c.p.pad_left for c in cases)
    counts = {(c.p.filter_h * c.p.filter_w) % 2 for c in cases}
    assert counts == {0, 1}
    glob = global_cases(5, 70, 8000)
    assert all(c.out_shape[1:3] == (1, 1) for c in glob)
    assert {c.x.shape[3] for c in glob} >= {1, 2, 3, 5, 6, 7, 8}
    assert any(c.x.shape[1] * c.x.shape[2] > 512 for c in glob)
    assert any(c.p.filter_h < c.x.shape[1] for c in glob)
    assert any(c.p.filter_w < c.x.shape[2] for c in glob)
    tails = tail_cases(5, 60, 6000)
    assert {c.x.shape[3] % 4 for c in tails} == {1, 2, 3}
    assert {c.x.shape[3] % 2 for c in tails} == {0, 1}
    assert {(c.p.filter_h * c.p.filter_w) % 2 for c in tails} == {0, 1}
    assert any(c.p.pad_left > 0 for c in tails) and any(c.p.pad_left == 0 for c in tails)
    rows = row_table_cases(5, 48, 4000)
    assert any(2 * c.p.filter_w - 1 > 16 and c.p.pad_left > 0 for c in rows)
    assert any(c.x.shape[2] < c.p.filter_w for c in rows)
    assert {c.x.shape[3] % 2 for c in rows} == {0, 1} and any(c.x.shape[0] == 2 for c in rows)
    fused = fused_cases(5, 60, 6000)
    valid = [c for c in fused if c.p.pad_left == 0 and c.p.pad_top == 0]
    assert any(c.x.shape[1] >= 3 * c.p.filter_h + 20 for c in valid)
    assert {c.x.shape[3] % 4 for c in valid} == {0, 1, 2, 3}
    assert any(c.x.shape[2] < c.p.filter_w for c in fused)
    assert any(max(c.p.filter_h, c.p.filter_w) >= 13 and c.p.pad_top > 0 for c in fused)
    assert any(c.x.min() == c.x.max() == -128 and c.p.filter_h * c.p.filter_w > 128
               for c in valid)
    placed = in_place_cases(5, 60, 6000)
    out_len = [int(np.prod(c.out_shape)) for c in placed]
    assert all(c.in_place_d is not None for c in placed)
    # the output overlaps the input (d > -output bytes), at both bounds, VALID and SAME
    over = [c for c, n in zip(placed, out_len, strict=True) if c.in_place_d > -n]
    assert len(over) >= 40
    assert any(c.in_place_d < _in_place_bound(c, row_above=False) for c in over)
    assert {c.p.pad_top > 0 for c in over} == {False, True}
    # the row walker's fused loops entered at either group of a pair (s1_seg.up's parity);
    # SAME's right padding entering (up 8, TH_S1_NE_ROW_LOOP) with every tail
    assert {c.x.shape[3] % 4 for c in fused if c.p.pad_right > 0} == {0, 1, 2, 3}
    assert {c.x.shape[3] // 4 % 2 for c in fused if c.x.shape[3] >= 4} == {0, 1}
    # SAME's left padding leaving while both rows move (up 9, TH_S1_FL_ROW_LOOP): every
    # tail, either group parity
    left = [c for c in fused if c.p.pad_left > 0 and c.x.shape[2] >= c.p.filter_w and
            c.x.shape[1] > c.p.filter_h]
    assert {c.x.shape[3] % 4 for c in left} == {0, 1, 2, 3}
    assert {c.x.shape[3] // 4 % 2 for c in left} == {0, 1}
    # two or more rows after the first with both rows moving (s1_steady_rows: SAME mode 4,
    # VALID mode 7 with its drift), a warm run before pixel 0 (0 < fw - 1 - pl < W)
    steady = [c for c in fused if c.x.shape[1] >= c.p.filter_h + 2 and
              0 < c.p.filter_w - 1 - c.p.pad_left < c.x.shape[2]]
    for padded in (False, True):
        assert {c.x.shape[3] % 4 for c in steady if (c.p.pad_top > 0) == padded} == {0, 1, 2, 3}
    # SAME's window heights changing between rows that keep the table's segments (its top
    # and bottom rows: s1_table_rows, the reciprocals and updates anew) with every tail
    heights = [c for c in fused if c.p.pad_bottom > 0 and c.p.filter_h >= 2 and
               2 * c.p.filter_w - 1 <= 16 and c.x.shape[2] >= c.p.filter_w]
    assert {c.x.shape[3] % 4 for c in heights} == {0, 1, 2, 3}
    # first windows of 3 or more input rows (or 2 at C >= 16) summed afresh by cols_fresh,
    # C >= 4 with every tail
    fresh = [c for c in cases + fused if c.x.shape[3] >= 4 and
             min(c.x.shape[1], c.p.filter_h - c.p.pad_top) >= (2 if c.x.shape[3] >= 16 else 3)]
    assert {c.x.shape[3] % 4 for c in fresh} == {0, 1, 2, 3}
    # its unrolled heights (3 and 4 rows) and its two-rows loop (2, 5 or more), every tail
    # (the channels past C & ~3 from the column's last four bytes)
    def fresh_rows(c: PoolCase) -> int:
        return min(c.x.shape[1], c.p.filter_h - c.p.pad_top)

    for heights in ({3}, {4}, {2, *range(5, 16)}):
        assert {c.x.shape[3] % 4 for c in fresh if fresh_rows(c) in heights} == {0, 1, 2, 3}
    first = first_rows_cases(5, 60, 4000)
    two = [c for c in first if c.p.filter_h - c.p.pad_top == 2 and c.x.shape[1] >= 2]
    assert {c.x.shape[3] % 4 for c in two} == {0, 1, 2, 3}
    assert {c.p.stride_h for c in two} == {1, 2} and any(c.p.filter_w == 1 for c in two)
    # windows two columns wide (TH_S1_W2_ROW_LOOP): VALID and SAME, every tail, either
    # group parity, steady rows
    w2 = [c for c in w2_cases(5, 48, 4000) if c.p.filter_w == 2]
    for padded in (False, True):
        sel = [c for c in w2 if (c.p.pad_right > 0) == padded and c.x.shape[1] >= c.p.filter_h + 2]
        assert {c.x.shape[3] % 4 for c in sel} == {0, 1, 2, 3}
        assert {c.x.shape[3] // 4 % 2 for c in sel} == {0, 1}
    # the steady rows' table set after VALID's first row or SAME's first full one (not
    # clamped, C >= 4: the fused order), one steady row and more, every tail, either group
    # parity, VALID's mode 7 and mode 4 (windows two columns wide)
    few = [c for c in few_rows_cases(5, 60, 3000) if c.p.act_min == -128 and
           c.p.act_max == 127 and 0 < c.p.filter_w - 1 - c.p.pad_left < c.x.shape[2]]
    for padded in (False, True):
        sel = [c for c in few if (c.p.pad_top > 0) == padded]
        assert {c.x.shape[3] % 4 for c in sel} == {0, 1, 2, 3}
        assert {c.x.shape[3] // 4 % 2 for c in sel} == {0, 1}
        assert {c.x.shape[1] - c.p.filter_h >= 2 for c in sel} == {False, True}
    assert {c.p.filter_w == 2 for c in few if c.p.pad_top == 0} == {False, True}
    small = small_count_cases(5, 40, 3000)
    corner = [c for c in small if (c.p.filter_h - max(c.p.pad_top, c.p.pad_bottom)) *
              (c.p.filter_w - max(c.p.pad_left, c.p.pad_right)) < 3]
    assert {c.x.shape[3] % 4 for c in corner} == {0, 1, 2, 3}


@pytest.mark.parametrize("variant", ["portable", "dsp"])
def test_span_paths_on_the_host(variant: str) -> None:
    check_on_host(variant, span_cases(5, 120, 4000) + global_cases(5, 70, 8000) +
                  tail_cases(5, 60, 6000) + small_count_cases(5, 40, 3000) +
                  row_table_cases(5, 48, 4000) + fused_cases(5, 60, 6000) +
                  in_place_cases(7, 60, 6000) + first_rows_cases(5, 60, 4000) +
                  w2_cases(5, 48, 4000) + few_rows_cases(5, 60, 3000))


@needs_qemu
def test_span_paths_on_cortex_m4(kernel_fw_root: Path) -> None:
    check_on_cortex_m4(kernel_fw_root, span_cases(6, 160, 6000) + global_cases(6, 60, 6000) +
                       tail_cases(6, 60, 6000) + small_count_cases(6, 40, 3000) +
                       row_table_cases(6, 60, 6000) + fused_cases(6, 80, 6000) +
                       in_place_cases(8, 60, 6000) + first_rows_cases(6, 60, 4000) +
                       w2_cases(6, 60, 4000) + few_rows_cases(6, 60, 3000), 480)


def test_tie_free_constants_are_exact() -> None:
    """avg_s1_div_set's tie-free reciprocal for even counts (the stride-1 spans: no sign
    lanes), as the assembly and s1_avg4_t compute it (x = s + k in an int16 lane, SMLAWB by
    M with accumulator A, the quotient in the top halfword), against TFLM's rounding (half
    away from zero) for every sum s in [-128c, 127c] of every even count c = 4..256; odd
    counts keep M = 2 ceil(2^31 / c), A = M / 2. The assembly's accumulator A' (avg_s1_raw_acc:
    x = s itself, no + k) gives the same quotients for every count."""
    for c in range(3, 257):
        h = c // 2
        if c % 2:
            m = 2 * -(-(1 << 31) // c)
            a = m // 2
            low = 0
        else:
            m = ((1 << 31) + (1 << 15) + h - 1) // h
            e = (m * c) & 0xFFFFFFFF  # uint32 as in C
            assert 1 << 15 < 129 * e < 1 << 32
            a = (m >> 1) - ((129 * e - ((m & 1) << 15)) >> 16)  # ceil((2^15 m - 129 e) / 2^16)
            low = 129 * e
        raw = (m * (h + 128 * c) - low + 0xFFFF) >> 16  # avg_s1_raw_acc
        assert 0 < raw < 1 << 31
        assert m < 1 << 31
        s = np.arange(-128 * c, 127 * c + 1, dtype=np.int64)
        x = s + h + 128 * c - 32768
        assert x.min() >= -32768 and x.max() <= 32767
        r = ((m * x) >> 16) + a
        want = np.where(s > 0, (s + h) // c, -((h - s) // c)) + 128
        np.testing.assert_array_equal(r >> 16, want, err_msg=f"count {c}")
        assert r.min() >= 0 and r.max() < 256 << 16
        r = ((m * s) >> 16) + raw  # the raw sum s in the lane (|s| <= 32768)
        np.testing.assert_array_equal(r >> 16, want, err_msg=f"count {c} (raw)")
        assert r.min() >= 0 and r.max() < 256 << 16
