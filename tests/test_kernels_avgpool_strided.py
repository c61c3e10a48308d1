"""Issue 14's strided AVERAGE_POOL_2D path (th_avgpool_s8.c AVG_STRIDED: strides >= 2 both
ways, DSP build with scratch): fresh int16 column sums per output row, grouped by four
channels (C >= 4 where they fit the scratch: 2 * W * round_up4(C) bytes) or in natural
order, then spans of pixels of one count four channels at a time (the last group overlapping
for C % 4, C < 4 one partial group), edge pixels (padding on any side) as spans of their
own, counts below 3 summed from the input. The cases: strides 2-4 (equal and not), windows
from 2 * SH * SW taps (or fewer where the windows share rows: KH > SH) up to 9x9, SAME and
VALID, planes from one window to about three, C = 1 .. 9, 12, 13, 16, 18, 31 (C < 4 with
window widths 1-9 in turn: each span copy), odd and even counts, one in six clamped, one in
five with two images; and two-channel pools of windows two columns wide (AVG_STRIDED_PAIRS:
window heights 3-9, spans of odd and even length, with and without edge pixels). All
against the NumPy reference, on the host (ASan / UBSan, portable and emulated DSP builds)
and in one batch on QEMU mps2-an386 (the native DSP build).
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
    out_pixels,
)
from tinyhost.ir import Padding
from tinyhost.plan.scratch import avgpool_scratch

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")

CHANNELS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 18, 31]


def strided_cases(seed: int, count: int, max_elements: int) -> list[PoolCase]:
    """Average pools the strided path takes, cycling through CHANNELS."""

    def draw(rng: np.random.Generator, i: int) -> PoolCase | None:
        c = CHANNELS[i % len(CHANNELS)]
        sh, sw = int(rng.integers(2, 5)), int(rng.integers(2, 5))
        if i % 3:
            sw = sh
        fh, fw = int(rng.integers(1, 10)), int(rng.integers(1, 10))
        if c < 4:  # every width 1-9 in turn: each span copy of 1-3 channels
            fw = 1 + i // len(CHANNELS) % 9
        if not (2 * sh * sw <= fh * fw or fh > sh):
            return None
        h, w = int(rng.integers(fh, 3 * fh + 2)), int(rng.integers(fw, 3 * fw + 2))
        padding = Padding.SAME if i % 2 else Padding.VALID
        geometry = ((h, w, c), (fh, fw), (sh, sw), padding)
        if h * w * c > max_elements or out_pixels(*geometry) <= 1:
            return None
        return avgpool_case(rng, i, *geometry)

    return draw_cases(seed, count, draw)


def pairs_cases(seed: int, count: int) -> list[PoolCase]:
    """Two channels, windows two columns wide (AVG_STRIDED_PAIRS: the span's windows summed
    from the input, two pixels a word): window heights 3-9 (constant row counts, fewer rows
    where the padding cuts them, and the variable one), planes from one window up, so spans
    of odd and even length, with and without edge pixels (SAME padding on either side)."""

    def draw(rng: np.random.Generator, i: int) -> PoolCase | None:
        fh = 3 + i % 7  # sh < fh: the strided path applies (windows sharing rows) for any sw
        sh, sw = int(rng.integers(2, min(fh, 5))), int(rng.integers(2, 5))
        h, w = int(rng.integers(fh, 3 * fh + 2)), int(rng.integers(2, 5 * sw + 3))
        padding = Padding.SAME if i % 2 else Padding.VALID
        geometry = ((h, w, 2), (fh, 2), (sh, sw), padding)
        if out_pixels(*geometry) <= 1:
            return None
        return avgpool_case(rng, i, *geometry)

    return draw_cases(seed, count, draw)


def test_pairs_cases_reach_every_branch() -> None:
    """Spans of odd and even length, window heights 3-9 unclamped, edge pixels beside a
    span, clamps, SAME padding cutting windows (the counts: 2 * rows, even)."""
    spans, heights, edges = set(), set(), set()
    for c in pairs_cases(9, 60) + pairs_cases(10, 60):
        w, ow = c.x.shape[2], c.out_shape[2]
        ia = min(ow, (c.p.pad_left + c.p.stride_w - 1) // c.p.stride_w)
        ib = max(ia, min(ow, (w - 2 + c.p.pad_left) // c.p.stride_w + 1))
        spans.add((ib - ia) % 2)
        edges.add(ia > 0 or ib < ow)
        if (c.p.act_min, c.p.act_max) == (-128, 127):
            heights.add(c.p.filter_h)
    assert spans == {0, 1} and edges == {False, True}
    assert set(range(3, 10)) <= heights, heights
    cases = pairs_cases(9, 60)
    assert any(c.p.pad_top > 0 for c in cases) and any(c.p.act_min > -128 for c in cases)


def test_strided_cases_reach_every_branch() -> None:
    """Every tail of C, both paddings, odd and even counts, unequal strides, and each case
    given scratch (the path runs only with it)."""
    cases = strided_cases(7, 120, 4000)
    assert {c.x.shape[3] % 4 for c in cases} == {0, 1, 2, 3}
    assert any(c.p.pad_left > 0 and c.p.pad_right > c.p.pad_left for c in cases)
    assert {(c.p.filter_h * c.p.filter_w) % 2 for c in cases} == {0, 1}
    assert any(c.p.stride_h != c.p.stride_w for c in cases)
    layouts = set()
    widths: dict[tuple[bool, bool], set[int]] = {}
    natural_heights = set()
    for c in cases:
        w, ch = c.x.shape[2], c.x.shape[3]
        geometry = (w, ch, c.out_shape[1:3], (c.p.filter_h, c.p.filter_w),
                    (c.p.stride_h, c.p.stride_w))
        need = avgpool_scratch(*geometry)
        assert need > 0
        layout = (ch >= 4, 2 * w * ((ch + 3) // 4 * 4) <= need)
        layouts.add(layout)
        if not (layout[0] and layout[1]):
            natural_heights.add(c.p.filter_h)
        if (c.p.act_min, c.p.act_max) == (-128, 127):
            widths.setdefault(layout, set()).add(c.p.filter_w)
    # natural-order column sums (st_cols): each constant row count's copy (register-offset
    # loads) and the variable one (more than 7 rows)
    assert set(range(2, 9)) <= natural_heights, natural_heights
    # C >= 4 grouped (where they fit) and not, C < 4
    assert {(True, True), (True, False), (False, False)} <= layouts
    # Unclamped spans take a copy per window width 2-7, wider ones the variable-width copy:
    # each drawn for C < 4 (natural order) and grouped C >= 4 (LDRD column pairs).
    for layout in ((False, False), (True, True)):
        assert set(range(2, 9)) <= widths[layout], (layout, widths[layout])
    assert any(c.p.filter_h > c.p.stride_h and c.p.filter_h * c.p.filter_w <
               2 * c.p.stride_h * c.p.stride_w for c in cases)  # fmt: skip


@pytest.mark.parametrize("variant", ["portable", "dsp"])
def test_strided_path_on_the_host(variant: str) -> None:
    check_on_host(variant, strided_cases(7, 120, 4000) + pairs_cases(9, 60))


@needs_qemu
def test_strided_path_on_cortex_m4(kernel_fw_root: Path) -> None:
    check_on_cortex_m4(kernel_fw_root, strided_cases(8, 120, 6000) + pairs_cases(10, 60), 150)
