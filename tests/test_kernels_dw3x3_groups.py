"""th_dw_conv_3x3_s8 with 1-3 channels (multiplier 1): given the fast scratch, all 2 or 3
channels staged in one pass (fill_group_small: word loads of four contiguous pixels
unpacked with SXTB16 / PKH in copy3_rows_asm and copy2_rows_asm), and the padding written
with word stores (an odd run writing one interior value the copy then overwrites). Against
the NumPy reference on the host under ASan/UBSan (portable, DSP modelled in C) and on QEMU
(Cortex-M4 and M7: the assembly). Randomized shapes over the copy's edges: interior rows
starting at an odd column (one pixel first) and 0-3 pixels after the quads, rows shorter
than a quad, padding on each side alone, both strides, tall layers (transposed only when
rows are shorter than 8 outputs), in place, two batches, an activation clamp and the exact
requantization (the C loops on the same planes), and the same shapes without the fast
scratch (one plane).

With 4-13 channels (every C % 4): groups of four staged planes (path DW3X3_GROUP4,
fill_group4: one word load per pixel), a last one or two channels one plane at a time, a
last three staged as the last four (the first of them done: in place, its input already
holds outputs), on small planes (1-20 rows and columns, where a channel's fixed costs
dominate and the row loops run few blocks), with and without a bias, in place for every
C % 4; and interiors narrower than a quad of pixels (one to three columns after a first
one at an odd column, or alone), so that the four-plane copy's per-row dispatch
(copy4_rows_asm: first pixel, quads, pair, last pixel, each taken or not) also runs its
no-quad branches. The last three of C % 4 == 3 channels (7, 11) store only their three
planes (path DW3X3_GROUP3, copy4_last3_asm: the four-plane copy's rows without plane 0), on
QEMU over the same edges; interiors of 4-19 columns copy their 1-4 quads straight-line
(path DW3X3_COPY_SHORT, both four-plane copies); a last one or two channels (C % 4 == 1,
2) copy one plane's rows with the four-plane copy's jumps (path DW3X3_LONE,
copy4_lone_asm). Outputs taller than wide whose rows cost
less untransposed (path DW3X3_ROWS_PLAIN, e.g. 9x8) stay plain. The host tests also run the
build that leaves every optional path out (dsp_general: one plane at a time)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import ConvCase
from kernels.dw3x3 import (
    BOARDS,
    check_on_host,
    check_on_target,
    dw3x3_case,
    needs_gcc,
    needs_target,
    row_cost,
)
from kernels.target import fits_small_firmware

pytestmark = needs_gcc


def _cases(seed: int, count: int, channels: tuple[int, int] = (1, 3),
           side: int = 30) -> list[ConvCase]:
    """Channels cycle through [channels[0], channels[1]]; input sides below `side`."""
    rng = np.random.default_rng(seed)
    lo, hi = channels
    cases = []
    for i in range(count):
        c = lo + i % (hi - lo + 1)
        s = 1 + (i // 3) % 2
        hw = (int(rng.integers(1, side)), int(rng.integers(1, side)))
        if i % 7 == 0:  # tall: transposed below 8 output columns (C <= 3) or to a smaller plane
            hw = (int(rng.integers(side * 2 // 3, side * 4 // 3)), int(rng.integers(1, 14)))
        pads = tuple(int(rng.integers(0, 3)) for _ in range(4))
        if i % 5 == 1:  # padding on one side only
            pads = tuple(int(k == i % 4) for k in range(4))
        if (hw[0] + pads[0] + pads[1] < 3 or hw[1] + pads[2] + pads[3] < 3):
            pads = (1, 1, 1, 1)
            hw = (max(hw[0], 1), max(hw[1], 1))
        batches = 2 if i % 11 == 3 else 1
        case = dw3x3_case(rng, hw, c, s, pads, batches,  # type: ignore[arg-type]
                     bias=i % 9 != 4)
        out = int(np.prod(case.out_shape[1:]))
        # in place: also every C % 4 among 4-13 channels
        in_place = i % 4 == 2 or (lo >= 4 and i % 10 in (3, 7))
        if in_place and batches == 1 and out <= hw[0] * hw[1] * c:
            case = dataclasses.replace(case, in_place=True)
        cases.append(case)
    return cases


def _modes(case: ConvCase) -> list[ConvCase]:
    """Fast requantization, with a clamp, exact (a channel's shift >= 0), one plane."""
    p = case.p
    exact = np.where(np.arange(len(p.out_shift)) % 2 == 0, 1, p.out_shift).astype(np.int32)
    return [case,
            dataclasses.replace(case, p=dataclasses.replace(p, act_min=-90, act_max=70)),
            dataclasses.replace(case, p=dataclasses.replace(p, out_shift=exact)),
            dataclasses.replace(case, fast_scratch=False)]


def _all(seed: int, count: int) -> list[ConvCase]:
    return [m for case in _cases(seed, count) for m in _modes(case)]


def _groups(seed: int, count: int) -> list[ConvCase]:
    """4-13 channels (every C % 4), small planes, in every mode."""
    return [m for case in _cases(seed, count, (4, 13), 21) for m in _modes(case)]


def _narrow(seed: int) -> list[ConvCase]:
    """4-7 channels, interiors of 1-4 columns starting at an odd (left padding 1) or even
    column, both strides and orientations (tall ones are transposed), fast requantization."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(16):
        cols = 1 + (i // 2) % 4
        pl = 1 - i % 2
        # no taller than wide (plain), or tall (transposed: the columns along plane rows)
        rows = int(rng.integers(1, cols + pl + 1)) if i % 5 != 3 else int(rng.integers(12, 20))
        hw = (rows, cols) if i % 7 != 5 else (cols, rows)
        pads = (1, 1, pl, 2) if hw[1] == cols else (pl, 2, 1, 1)
        cases.append(dw3x3_case(rng, hw, 4 + i % 4, 1 + i // 8, pads, bias=i % 3 != 1))
    return cases


def _short(seed: int) -> list[ConvCase]:
    """Four-plane copies of rows of 1-4 pixel quads (path DW3X3_COPY_SHORT: straight-line
    quads entered at the row's count), interiors of 4-19 columns (and 20-23: the quad loop
    beside them) starting at an odd or even column, so with and without a first pixel, a
    pair and a last pixel; 4-13 and 29-37 channels (every C % 4: the last three's own copy,
    copy4_last3_asm), both strides, SAME-like and VALID padding, plain and transposed."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(40):
        cols = 4 + i % 20
        pl = i % 2 if i % 5 != 4 else 0
        pr = int(rng.integers(0, 2)) if i % 5 != 4 else 0
        rows = int(rng.integers(3, cols + 1))
        c = 4 + i % 10 if i % 3 != 2 else 29 + i % 9
        hw, pads = (rows, cols), (1, 1, pl, pr)
        if i % 8 == 7:  # tall: transposed, the columns along plane rows
            hw, pads = (cols, min(rows, 5)), (pl, pr, 1, 1)
        if i % 5 == 4:  # VALID
            pads = (0, 0, 0, 0)
        cases.append(dw3x3_case(rng, hw, c, 1 + (i // 2) % 2, pads, bias=i % 3 != 1))
    return cases


def _lone(seed: int) -> list[ConvCase]:
    """A last one or two channels after the groups of four (C % 4 == 1, 2: path DW3X3_LONE,
    copy4_lone_asm: one plane's rows with the four-plane copy's jumps) over its row parts:
    interiors of 1-24 columns starting at an odd or even column (a first pixel or not, 0-5
    quads straight-line or looped, a pair, a last pixel), both strides, SAME-like and VALID
    padding, plain and transposed, two images (the next image's groups after the lone
    plane), in place."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(36):
        cols = 1 + i % 24
        pl = (i // 2) % 2 if i % 6 != 5 else 0
        pr = max(int(rng.integers(0, 2)), 3 - cols - pl) if i % 6 != 5 else 0
        rows = int(rng.integers(2, 9))
        c = (5, 6, 9, 10, 33, 34)[i % 6]
        hw, pads = (rows, cols), (1, 1, pl, pr)
        if i % 9 == 8:  # tall: transposed, the columns along plane rows
            hw, pads = (cols + 8, min(rows, 4)), (pl, pr, 1, 1)
        if i % 6 == 5:  # VALID
            pads = (0, 0, 0, 0)
            hw = (max(hw[0], 3), max(hw[1], 3))
        case = dw3x3_case(rng, hw, c, 1 + (i // 3) % 2, pads, batches=1 + (i % 7 == 3),
                     bias=i % 4 != 1)
        if i % 5 == 2:
            case = dataclasses.replace(case, in_place=True)
        cases.append(case)
    return cases


def _rows_plain(seed: int, count: int = 24) -> list[ConvCase]:
    """Outputs taller than wide whose rows cost less untransposed (path DW3X3_ROWS_PLAIN:
    out_w < out_h < 2 * out_w, e.g. 9x8 from 17x17 stride 2), 4-11 channels, both strides,
    padding on each side or none (the four-plane padding's word runs rounded out at odd
    first and last interior columns)."""
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < count:
        i = len(cases)
        s = 1 + i % 2
        ow = int(rng.integers(4, 13))
        oh = int(rng.integers(ow + 1, 2 * ow))
        if ow * row_cost(oh) < oh * row_cost(ow):
            continue  # transposed
        pads = tuple(int(rng.integers(0, 2)) for _ in range(4))
        hw = ((oh - 1) * s + 3 - pads[0] - pads[1], (ow - 1) * s + 3 - pads[2] - pads[3])
        cases.append(dw3x3_case(rng, hw, 4 + i % 8, s, pads, bias=i % 3 != 1))
    return cases


# dsp_general: every optional path left out (DW3X3_GROUP4, DW3X3_SMALL_GROUP among them), so
# the staged groups fall back to one plane at a time: still exact.
@pytest.mark.parametrize("variant", ("portable", "dsp", "dsp_general"))
def test_dw3x3_few_channels_match_reference(variant: str) -> None:
    cases = (_all(315, 100) + _groups(317, 60) + _narrow(319) + _rows_plain(321)
             + _short(323) + _lone(325))
    check_on_host(variant, cases)


@needs_target
@pytest.mark.parametrize("board", BOARDS)
def test_dw3x3_few_channels_on_target(tmp_path: Path, board: str) -> None:
    """The copy assembly (quads, a first pixel, 1-3 last pixels, several rows) on QEMU."""
    cases = [c for c in _all(316, 90) if fits_small_firmware(c)]
    assert len(cases) > 250
    groups = [c for c in _groups(318, 50) if fits_small_firmware(c)]
    assert len(groups) > 150
    # copy4_last3_asm (C % 4 == 3 with the fast scratch), also in place and on narrow rows
    last3 = [c for c in groups if c.out_shape[3] % 4 == 3 and c.fast_scratch]
    assert len(last3) >= 25 and any(c.in_place for c in last3)
    plain = [c for c in _rows_plain(322) if fits_small_firmware(c)]
    assert len(plain) >= 20
    cases += groups + plain + [c for c in _narrow(320) if fits_small_firmware(c)]
    check_on_target(board, tmp_path, cases)


@needs_target
@pytest.mark.parametrize("board", BOARDS)
def test_dw3x3_copy_short_on_target(tmp_path: Path, board: str) -> None:
    """copy4_rows_asm / copy4_last3_asm rows of 1-4 quads straight-line (DW3X3_COPY_SHORT)
    on QEMU (Cortex-M4 and M7), in every mode, next to rows of 5 quads (the loop); and
    copy4_lone_asm (DW3X3_LONE) over its row parts."""
    cases = [m for c in _short(324) for m in _modes(c)]
    cases = [c for c in cases if fits_small_firmware(c)]
    assert len(cases) >= 120
    cols = {c.x.shape[2] if c.out_shape[1] <= c.out_shape[2] else c.x.shape[1] for c in cases}
    assert set(range(4, 20)) <= cols
    assert any(c.out_shape[3] % 4 == 3 and c.fast_scratch for c in cases)
    # copy4_lone_asm (C % 4 == 1, 2), every interior width of 1-24 columns
    lone = [c for c in _lone(326) if fits_small_firmware(c)]
    assert len(lone) >= 30 and {c.out_shape[3] % 4 for c in lone} == {1, 2}
    assert any(c.in_place for c in lone) and any(c.out_shape[0] == 2 for c in lone)
    cases += lone
    check_on_target(board, tmp_path, cases)
