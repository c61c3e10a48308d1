"""Issue 14's few-output-channel conv (th_nn_conv_direct_s8): with dilation.w > 1 (given
th_conv_general_s8_scratch_size_fast: plain filter rows and four int8 columns; the pixels
outside interior quads staged as columns, four at a time in raster order across rows).

With dilation.w 1 (no fast scratch) the rows, and bands of four output rows whose pixels
outside the interior quads go four rows at a time (direct_band), filter rows padded to whole
words where kw * Cin is not (the quads' whole-row loop): Cout 1-3, images up to
16 x 24, padding on every side. With dilation.w > 1 the cases cover Cout 2-4 (the sizes the
fast scratch is offered for) and Cout 1 (never offered: the rows and bands), Cin 1-13 and
31 (every Cin % 4, so K % 4 leaves column tails),
filters 1-5 x 2-5 with dilation.w 2-3 and dilation.h 1-2, strides 1-3, padding drawn per side
(every side, windows wholly in the padding too), outputs 1-12 wide (partial groups, groups
across rows and batches), two batches, clamps, no bias, input offsets at both ends; each with
the fast scratch and without it (the direct or im2col path as before); and pointwise layers
with Cout 1-4 and Cin > 4 not a multiple of 4 (without fast scratch the direct path through
the pointwise kernel, one row of quads with one- to three-pixel tails; with it the pointwise
kernel's own), through th_conv_s8,
against the NumPy reference: on the host (ASan/UBSan; portable, emulated DSP and the build
without optional paths) and one batch on QEMU mps2-an386 (Cortex-M4, the native DSP build).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import ConvCase, check_result, scaled_conv_case
from kernels.harness import Driver, build_driver
from kernels.target import build_firmware, fits_small_firmware, run_cases

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")

CIN = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 31]


def cols_case(rng: np.random.Generator, i: int, band: bool = False) -> ConvCase:
    """dilation.w 2-3 (Cout 2-4, every tenth 1), or with `band` dilation.w 1 where the direct
    path applies without fast scratch (Cout 1 with any Cin, Cout 2-3 with Cin > 4 not a
    multiple of 4, Cout 2 with Cin a multiple of 4): images up to 16 x 24, so bands of four
    output rows with interior rows, borders and rows' last interior pixels four rows at a
    time, between interior quads."""
    cout = 2 + i % 3 if i % 10 != 9 else 1
    cin = CIN[(i * 5 + i // 7) % len(CIN)]
    if band:
        cout = 1 + i % 3 if cin % 4 and cin > 4 else 1 + i % 2 if cin % 4 == 0 else 1
    kh, kw = int(rng.integers(1, 6)), int(rng.integers(2, 6))
    dil = (int(rng.integers(1, 3)), 1 if band else int(rng.integers(2, 4)))
    s = int(rng.integers(1, 4))
    batches = 2 if i % 8 == 3 else 1
    eff = ((kh - 1) * dil[0] + 1, (kw - 1) * dil[1] + 1)
    high, wide = (17, 25) if band else (10, 14)
    while True:
        in_h, in_w = int(rng.integers(1, high)), int(rng.integers(1, wide))
        pads = [int(rng.integers(0, e)) for e in (eff[0], eff[1], eff[0], eff[1])]
        out_h = (in_h + pads[0] + pads[2] - eff[0]) // s + 1
        out_w = (in_w + pads[1] + pads[3] - eff[1]) // s + 1
        if out_h >= 1 and out_w >= 1 and out_w <= wide - 2:
            break
    return scaled_conv_case(rng, i, (batches, in_h, in_w, cin), (cout, kh, kw, cin),
                            (batches, out_h, out_w), s, dil, pads, fast_scratch=i % 6 != 5)


def pointwise_case(rng: np.random.Generator, i: int) -> ConvCase:
    """1x1, Cout 1-4, Cin > 4 not a multiple of 4 (the direct path through the pointwise
    kernel: one row of pixels at stride 1, quads and their tails), strides 1-2, outputs 1-40
    pixels (tails of 1-3), clamps, no bias."""
    cout = 1 + i % 4
    cin = int(rng.choice([5, 6, 7, 9, 11, 13, 31]))
    s = 1 if i % 3 else 2
    in_h, in_w = int(rng.integers(1, 8)), int(rng.integers(1, 12))
    out_h, out_w = (in_h - 1) // s + 1, (in_w - 1) // s + 1
    return scaled_conv_case(rng, i, (1, in_h, in_w, cin), (cout, 1, 1, cin), (1, out_h, out_w), s,
                            (1, 1), [0, 0, 0, 0], fast_scratch=i % 2 == 0)


def pairs_case(rng: np.random.Generator, i: int) -> ConvCase:
    """Cout 2, Cin a multiple of 4 (whole-word filter rows), dilation.w 1: the channel pairs'
    interior quads (CONV_DIRECT_PAIRS), with rows cut by top and bottom padding, strides 1-3,
    1-4 quads and tails of 0-3 pixels, clamps, no bias, both ends of the input offset."""
    cin = int(rng.choice([4, 8, 12, 16]))
    kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 5))
    s = int(rng.integers(1, 4)) if i % 3 else 1
    pads = [int(rng.integers(0, kh)), int(rng.integers(0, kw)), int(rng.integers(0, kh)),
            int(rng.integers(0, kw))]
    out_w = int(rng.integers(4, 20))
    in_w = (out_w - 1) * s + kw - pads[1] - pads[3]
    in_h = int(rng.integers(max(1, kh - pads[0] - pads[2]), 9))
    out_h = (in_h + pads[0] + pads[2] - kh) // s + 1
    return scaled_conv_case(rng, i, (1 + (i % 7 == 3), in_h, in_w, cin), (2, kh, kw, cin),
                            (1 + (i % 7 == 3), out_h, out_w), s, (1, 1), pads,
                            fast_scratch=i % 2 == 0)


def column_case(rng: np.random.Generator, i: int) -> ConvCase:
    """A one-column image with one output column (the column view, path CONV_DIRECT_COLUMN):
    H x 1 x Cin, filters 2-6 x 1-5, dilations 1-2 (padding.w not a multiple of dilation.w:
    no filter column inside, all bias), strides 1-3, padding drawn on both axes (windows
    wholly in the top or bottom padding too), Cout 1 (any Cin) or 2-3 with Cin > 4 not a
    multiple of 4, or 2 with Cin a multiple of 4 (where the direct path applies), heights
    1-40 (quads down the column and their tails), every fourth case given the fast scratch."""
    cin = CIN[(i * 3 + i // 5) % len(CIN)]
    cout = 1 + i % 3 if cin % 4 and cin > 4 else 1 + i % 2 if cin % 4 == 0 else 1
    kh, kw = int(rng.integers(2, 7)), int(rng.integers(1, 6))
    dil = (1 + i % 2, 1 + (i // 2) % 2)
    s = int(rng.integers(1, 4))
    batches = 2 if i % 7 == 3 else 1
    eff = ((kh - 1) * dil[0] + 1, (kw - 1) * dil[1] + 1)
    while True:
        in_h = int(rng.integers(1, 41))
        top, bottom = int(rng.integers(0, eff[0])), int(rng.integers(0, eff[0]))
        left = int(rng.integers(0, eff[1]))
        right = max(0, eff[1] - 1 - left) + int(rng.integers(0, s))
        out_h = (in_h + top + bottom - eff[0]) // s + 1
        out_w = (1 + left + right - eff[1]) // s + 1
        if out_h >= 1 and out_w == 1:
            break
    return scaled_conv_case(rng, i, (batches, in_h, 1, cin), (cout, kh, kw, cin),
                            (batches, out_h, 1), s, dil, [top, left, bottom, right],
                            fast_scratch=i % 4 == 1)


def edge_case(rng: np.random.Generator, i: int) -> ConvCase:
    """Cout 1, dilation.w 1, short filter rows (KW * Cin <= 32 but for every sixteenth case: path
    CONV_DIRECT_EDGES, the border pixels four at a time from a padded patch): Cin 1-8, filters
    1-5 x 1-9, strides 1-3, dilation.h 1-2, left and right padding up to the whole window
    (windows wholly in the padding), top and bottom padding (rows with no filter row inside),
    outputs 1-21 wide (left patches, interior quads, right patches and partial groups), two
    batches, clamps, no bias; three in four with the fast scratch (the patch), the others
    with the ordinary scratch (the patch where it fits)."""
    cin = 1 + i % 8
    kw = int(rng.integers(1, min(9, 32 // cin) + 1)) if i % 16 != 6 else int(rng.integers(5, 10))
    kh = int(rng.integers(1 if kw > 1 else 2, 6))
    s = 1 + i % 3
    dil = (1 + (i // 3) % 2, 1)
    eff_h = (kh - 1) * dil[0] + 1
    fast = i % 4 != 3
    # windows wholly in the padding (a folded PAD) on the patch and on the rows path alike
    side = kw + 2
    pads = [int(rng.integers(0, eff_h)), int(rng.integers(0, side)),
            int(rng.integers(0, eff_h)), int(rng.integers(0, side))]
    while True:
        in_w = int(rng.integers(1, 45))
        in_h = int(rng.integers(1, 9))
        out_h = (in_h + pads[0] + pads[2] - eff_h) // s + 1
        out_w = (in_w + pads[1] + pads[3] - kw) // s + 1
        if out_h >= 1 and 1 <= out_w <= 21:
            break
    batches = 2 if i % 9 == 4 else 1
    return scaled_conv_case(rng, i, (batches, in_h, in_w, cin), (1, kh, kw, cin),
                            (batches, out_h, out_w), s, dil, pads, fast_scratch=fast)


def cols_cases(seed: int, count: int) -> list[ConvCase]:
    """count cases of dilation.w > 1, then count / 2 of dilation.w 1 (the rows and bands),
    then count / 4 pointwise, count / 4 one-column images (the column view), count / 5
    channel pairs, then count / 2 Cout 1 edge patches."""
    rng = np.random.default_rng(seed)
    return ([cols_case(rng, i) for i in range(count)] +
            [cols_case(rng, i, band=True) for i in range(count // 2)] +
            [pointwise_case(rng, i) for i in range(count // 4)] +
            [column_case(rng, i) for i in range(count // 4)] +
            [pairs_case(rng, i) for i in range(count // 5)] +
            [edge_case(rng, i) for i in range(count // 2)])


def test_cases_reach_the_branches() -> None:
    cases = cols_cases(14, 200)
    fast = [c for c in cases if c.fast_scratch and c.out_shape[3] >= 2]
    assert {c.out_shape[3] for c in fast} == {2, 3, 4}
    assert {c.x.shape[3] % 4 for c in fast} == {0, 1, 2, 3}
    assert any(c.out_shape[2] == 1 and c.out_shape[1] > 4 for c in fast)  # across rows
    assert any(int(np.prod(c.out_shape[:3])) % 4 for c in fast)  # a partial last group
    assert any(c.x.shape[0] == 2 for c in fast)
    for side in ("pad_top", "pad_left", "pad_bottom", "pad_right"):
        assert any(getattr(c.p, side) > 0 for c in fast), side
    assert any(c.bias is None for c in fast) and any(c.p.act_min > -128 for c in fast)
    assert any(not c.fast_scratch for c in cases) and any(c.out_shape[3] == 1 for c in cases)
    bands = [c for c in cases if c.p.dilation_w == 1 and c.w.shape[1:3] != (1, 1)]
    assert {c.out_shape[3] for c in bands} == {1, 2, 3}
    assert {c.x.shape[3] % 4 for c in bands} == {0, 1, 2, 3}
    assert any(c.out_shape[3] == 2 and c.x.shape[3] % 4 == 0 for c in bands)
    tall = [c for c in bands if c.out_shape[1] >= 8]
    assert sum(c.out_shape[2] >= 8 and c.p.pad_left > 0 and c.p.pad_right > 0
               for c in tall) >= 5  # borders and interior quads in a band
    assert any(c.out_shape[1] % 4 for c in tall) and any(c.p.stride_h > 1 for c in tall)
    for side in ("pad_top", "pad_left", "pad_bottom", "pad_right"):
        assert any(getattr(c.p, side) > 0 for c in tall), side
    pointwise = [c for c in cases if c.w.shape[1:3] == (1, 1)]
    assert {c.out_shape[3] for c in pointwise} == {1, 2, 3, 4}
    assert any(c.p.stride_h == 2 for c in pointwise)
    assert any(int(np.prod(c.out_shape[:3])) % 4 == 1 for c in pointwise)  # one-pixel tails
    edges = cases[-100:]
    assert all(c.out_shape[3] == 1 and c.p.dilation_w == 1 for c in edges)
    short = [c for c in edges if c.w.shape[2] * c.x.shape[3] <= 32 and c.w.shape[1:3] != (1, 1)]
    assert len(short) > 70 and {c.x.shape[3] for c in short} == set(range(1, 9))
    assert {c.w.shape[2] for c in short} == set(range(1, 10))
    assert {c.p.stride_w for c in short} == {1, 2, 3} and any(c.p.dilation_h == 2 for c in short)
    assert any(c.p.pad_left >= c.w.shape[2] for c in short)  # windows wholly in the padding
    assert any(c.p.pad_right >= c.w.shape[2] for c in short)
    assert sum(c.out_shape[2] >= 12 and c.p.pad_left > 0 for c in short) > 10  # quads between
    assert {c.out_shape[2] % 4 for c in short} == {0, 1, 2, 3}
    assert any(c.out_shape[2] < 4 for c in short) and any(c.x.shape[0] == 2 for c in short)
    assert any(c.p.pad_top > 0 for c in short) and any(c.p.pad_bottom > 0 for c in short)
    assert any(not c.fast_scratch for c in short) and any(c.bias is None for c in short)
    assert any(c.w.shape[2] * c.x.shape[3] > 32 for c in edges)
    rows_path = [c for c in edges if not c.fast_scratch or c.w.shape[2] * c.x.shape[3] > 32]
    assert any(max(c.p.pad_left, c.p.pad_right) >= c.w.shape[2] for c in rows_path)
    pairs = [c for c in cases[-140:-100] if c.x.shape[2] >= 4]
    assert all(c.out_shape[3] == 2 and c.x.shape[3] % 4 == 0 for c in pairs)
    assert any(c.out_shape[2] % 4 == 0 for c in pairs) and any(c.out_shape[2] % 4 for c in pairs)
    assert any(c.p.pad_top > 0 for c in pairs) and any(c.p.pad_bottom > 0 for c in pairs)
    assert any(c.p.input_offset == 128 for c in pairs) and any(c.p.act_min > -128 for c in pairs)
    assert any(c.p.stride_w > 1 for c in pairs) and any(c.x.shape[0] == 2 for c in pairs)
    column = [c for c in cases if c.x.shape[2] == 1 and c.w.shape[1] > 1]
    viewed = [c for c in column if c.p.pad_left % c.p.dilation_w == 0]
    assert {c.out_shape[3] for c in viewed} == {1, 2, 3}
    assert any(c.p.pad_left % c.p.dilation_w for c in column)  # no column inside
    assert any(c.out_shape[1] >= 12 and c.p.pad_top > 0 for c in viewed)  # quads, borders
    assert any(c.p.dilation_h == 2 for c in viewed) and any(c.p.stride_h == 3 for c in viewed)
    assert any(c.x.shape[0] == 2 for c in viewed) and any(c.fast_scratch for c in viewed)


@pytest.mark.parametrize("variant", ["portable", "dsp", "dsp_general"])
def test_direct_columns_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in cols_cases(14, 200):
            problem = check_result(case, driver.run(case))
            assert problem is None, f"[{variant}] {case.x.shape}->{case.out_shape}: {problem}"


def test_direct_columns_on_cortex_m4(kernel_fw_root: Path) -> None:
    cases = [c for c in cols_cases(15, 120) if fits_small_firmware(c)]
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases, interleaved=True)
    for case, result in zip(cases, run.results, strict=True):
        problem = check_result(case, result)
        assert problem is None, f"{case.x.shape}->{case.out_shape}: {problem}"


def tail_case(rng: np.random.Generator, i: int) -> ConvCase:
    """Cout 1, dilation.w 1, every window inside horizontally (no left or right padding),
    1-3 output rows, outputs 4 q + 3 wide (q 0-5): the interior quads, then the last three
    pixels as one patch group (the edge scratch's 1-3-row tails); Cin 1-7, filters 1-5 x 1-7
    with KW * Cin <= 32 (3x3 too: th_conv_3x3_s8, whose scratch holds the patch but not the
    widened rows), strides 1-2, dilation.h 1-2, top and bottom padding, two batches; four
    in five with the fast scratch (the widened rows where the quads are enough, edge_rows)."""
    cin = 1 + i % 7
    kw = int(rng.integers(1, min(7, 32 // cin) + 1)) if i % 6 else 3
    kh = int(rng.integers(1 if kw > 1 else 2, 6)) if i % 6 else 3
    s = 1 + i % 2
    dil = (1 + (i // 5) % 2, 1)
    eff_h = (kh - 1) * dil[0] + 1
    out_w = 4 * int(rng.integers(0, 6)) + 3
    in_w = (out_w - 1) * s + kw + int(rng.integers(0, s))
    while True:
        pads = [int(rng.integers(0, eff_h)), 0, int(rng.integers(0, eff_h)), 0]
        in_h = int(rng.integers(1, eff_h + 2 * s + 1))
        out_h = (in_h + pads[0] + pads[2] - eff_h) // s + 1
        if 1 <= out_h <= 3:
            break
    batches = 2 if i % 9 == 4 else 1
    return scaled_conv_case(rng, i, (batches, in_h, in_w, cin), (1, kh, kw, cin),
                            (batches, out_h, out_w), s, dil, pads, fast_scratch=i % 5 != 3)


def tail_cases(seed: int, count: int) -> list[ConvCase]:
    rng = np.random.default_rng(seed)
    return [tail_case(rng, i) for i in range(count)]


def test_tail_cases_reach_the_branches() -> None:
    cases = tail_cases(24, 120)
    assert {c.x.shape[3] for c in cases} == set(range(1, 8))
    assert {c.out_shape[1] for c in cases} == {1, 2, 3}
    assert {c.out_shape[2] // 4 for c in cases} == set(range(6))
    assert all(c.out_shape[2] % 4 == 3 and c.p.pad_left == c.p.pad_right == 0 for c in cases)
    assert all(c.w.shape[2] * c.x.shape[3] <= 32 for c in cases)
    assert any(c.w.shape[1:3] == (3, 3) and c.p.dilation_h == 1 for c in cases)
    assert {c.p.stride_w for c in cases} == {1, 2} and any(c.p.dilation_h == 2 for c in cases)
    assert any(c.p.pad_top > 0 for c in cases) and any(c.p.pad_bottom > 0 for c in cases)
    assert any(c.x.shape[0] == 2 for c in cases) and any(not c.fast_scratch for c in cases)
    assert any(c.bias is None for c in cases) and any(c.p.act_min > -128 for c in cases)
    # quads enough for the widened rows, and too few
    assert any(c.fast_scratch and c.out_shape[1] * (c.out_shape[2] + 3) // 4 >= 4 for c in cases)
    assert any(c.fast_scratch and c.out_shape[1] * (c.out_shape[2] + 3) // 4 < 4 for c in cases)


@pytest.mark.parametrize("variant", ["portable", "dsp", "dsp_general"])
def test_direct_tails_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in tail_cases(24, 120):
            problem = check_result(case, driver.run(case))
            assert problem is None, f"[{variant}] {case.x.shape}->{case.out_shape}: {problem}"


def test_direct_tails_on_cortex_m4(kernel_fw_root: Path) -> None:
    cases = [c for c in tail_cases(25, 120) if fits_small_firmware(c)]
    assert len(cases) > 100
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases, interleaved=True)
    for case, result in zip(cases, run.results, strict=True):
        problem = check_result(case, result)
        assert problem is None, f"{case.x.shape}->{case.out_shape}: {problem}"


def wide_case(rng: np.random.Generator, i: int) -> ConvCase:
    """Cout 1, dilation.w 1, no left or right padding (no edge patches: the rows and bands),
    filter rows of 1-8 words (KW * Cin <= 32, Cin 4-8 and 12-32 with KW 1; padded where not
    whole words): the rows widened after the plain rows where the scratch holds them and the
    quads' rows reach 3 KH (rows_wide; quad_rows_wide entered at each of its eight words);
    filters up to 5 high, strides 1-2, dilation.h 1-2, top and bottom padding, outputs 4-26
    wide and 1-6 high (some too few quads), two batches; half with the fast scratch."""
    words = 1 + i % 8
    while True:
        cin = int(rng.choice([4, 5, 6, 7, 8, 12, 16, 20, 24, 28, 32]))
        kw = int(rng.integers(1, 33 // cin + 1))
        if (kw * cin + 3) // 4 == words:
            break
    kh = int(rng.integers(2, 6))
    s = 1 + i % 2
    dil = (1 + (i // 2) % 2, 1)
    eff_h = (kh - 1) * dil[0] + 1
    while True:
        out_w = int(rng.integers(4, 27))
        in_h = int(rng.integers(1, 9))
        pads = [int(rng.integers(0, eff_h)), 0, int(rng.integers(0, eff_h)), 0]
        out_h = (in_h + pads[0] + pads[2] - eff_h) // s + 1
        if 1 <= out_h <= 6 and (out_w % 4 != 3 or out_h >= 4):  # (else the edge patch's tail)
            break
    in_w = (out_w - 1) * s + kw + int(rng.integers(0, s))
    batches = 2 if i % 7 == 3 else 1
    return scaled_conv_case(rng, i, (batches, in_h, in_w, cin), (1, kh, kw, cin),
                            (batches, out_h, out_w), s, dil, pads, fast_scratch=i % 2 == 0)


def wide_cases(seed: int, count: int) -> list[ConvCase]:
    rng = np.random.default_rng(seed)
    return [wide_case(rng, i) for i in range(count)]


def test_wide_cases_reach_the_branches() -> None:
    cases = wide_cases(26, 96)
    assert all(c.out_shape[3] == 1 and c.p.pad_left == c.p.pad_right == 0 for c in cases)
    assert {(c.w.shape[2] * c.x.shape[3] + 3) // 4 for c in cases} == set(range(1, 9))
    assert any(c.w.shape[2] * c.x.shape[3] % 4 for c in cases)  # padded rows
    # the quads' rows reach 3 KH (widened), and do not
    def quad_rows(c: ConvCase) -> int:
        return c.x.shape[0] * c.out_shape[1] * (c.out_shape[2] // 4) * min(c.w.shape[1],
                                                                         c.x.shape[1])
    assert sum(quad_rows(c) >= 3 * c.w.shape[1] for c in cases) > 60
    assert any(quad_rows(c) < 3 * c.w.shape[1] for c in cases)
    assert {c.p.stride_w for c in cases} == {1, 2} and any(c.p.dilation_h == 2 for c in cases)
    assert any(c.p.pad_top > 0 for c in cases) and any(c.p.pad_bottom > 0 for c in cases)
    assert any(c.out_shape[1] >= 4 for c in cases)  # bands
    assert any(c.x.shape[0] == 2 for c in cases) and any(not c.fast_scratch for c in cases)


@pytest.mark.parametrize("variant", ["portable", "dsp"])
def test_direct_wide_rows_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in wide_cases(26, 96):
            problem = check_result(case, driver.run(case))
            assert problem is None, f"[{variant}] {case.x.shape}->{case.out_shape}: {problem}"


def test_direct_wide_rows_on_cortex_m4(kernel_fw_root: Path) -> None:
    cases = [c for c in wide_cases(27, 120) if fits_small_firmware(c)]
    assert len(cases) > 100
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases, interleaved=True)
    for case, result in zip(cases, run.results, strict=True):
        problem = check_result(case, result)
        assert problem is None, f"{case.x.shape}->{case.out_shape}: {problem}"


def long_case(rng: np.random.Generator, i: int) -> ConvCase:
    """Cout 1, dilation.w 1, filter rows of 9-24 words (KW * Cin 33-96 bytes, padded where not
    whole words: no edge patches, the rows and bands): the rows widened where the quads' rows
    reach 3 KH and quad_rows_wide_long's loop entered at each of its eight words (words % 8),
    one to three passes; Cin 3-32, filters up to 4 high, strides 1-2, dilation.h 1-2, padding
    on every side, outputs 4-14 wide and 1-5 high, two batches; half with the fast scratch."""
    words = 9 + i % 16
    while True:
        cin = int(rng.integers(3, 33))
        kw = int(rng.integers(1, 97 // cin + 1))
        if (kw * cin + 3) // 4 == words:
            break
    kh = int(rng.integers(1, 5))
    s = 1 + (i // 16) % 2
    dil = (1 + (i // 3) % 2, 1)
    eff_h = (kh - 1) * dil[0] + 1
    while True:
        out_w = int(rng.integers(4, 15))
        in_h = int(rng.integers(1, 7))
        pads = [int(rng.integers(0, eff_h)), int(rng.integers(0, kw)),
                int(rng.integers(0, eff_h)), int(rng.integers(0, kw))]
        out_h = (in_h + pads[0] + pads[2] - eff_h) // s + 1
        in_w = (out_w - 1) * s + kw - pads[1] - pads[3] + int(rng.integers(0, s))
        if 1 <= out_h <= 5 and in_w >= 1:
            break
    batches = 2 if i % 5 == 3 else 1
    return scaled_conv_case(rng, i, (batches, in_h, in_w, cin), (1, kh, kw, cin),
                            (batches, out_h, out_w), s, dil, pads, fast_scratch=i % 2 == 0)


def long_cases(seed: int, count: int) -> list[ConvCase]:
    rng = np.random.default_rng(seed)
    return [long_case(rng, i) for i in range(count)]


def test_long_cases_reach_the_branches() -> None:
    cases = long_cases(28, 96)
    assert all(c.out_shape[3] == 1 and c.p.dilation_w == 1 for c in cases)
    words = {(c.w.shape[2] * c.x.shape[3] + 3) // 4 for c in cases}
    assert {w % 8 for w in words} == set(range(8)) and max(words) > 16
    assert any(c.w.shape[2] * c.x.shape[3] % 4 for c in cases)  # padded rows
    assert any(c.w.shape[2] * c.x.shape[3] % 4 == 0 for c in cases)
    def quad_rows(c: ConvCase) -> int:
        return c.x.shape[0] * c.out_shape[1] * (c.out_shape[2] // 4) * min(c.w.shape[1],
                                                                         c.x.shape[1])
    assert sum(quad_rows(c) >= 3 * c.w.shape[1] for c in cases) > 40
    assert {c.p.stride_w for c in cases} == {1, 2} and any(c.p.dilation_h == 2 for c in cases)
    assert any(c.p.pad_left > 0 for c in cases) and any(c.p.pad_right > 0 for c in cases)
    assert any(c.out_shape[1] >= 4 for c in cases)  # bands
    assert any(c.x.shape[0] == 2 for c in cases) and any(not c.fast_scratch for c in cases)


@pytest.mark.parametrize("variant", ["portable", "dsp"])
def test_direct_long_rows_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in long_cases(28, 96):
            problem = check_result(case, driver.run(case))
            assert problem is None, f"[{variant}] {case.x.shape}->{case.out_shape}: {problem}"


@pytest.mark.parametrize("board", ["mps2-an386", "mps2-an500"])
def test_direct_long_rows_on_cortex_m(kernel_fw_root: Path, board: str) -> None:
    cases = [c for c in long_cases(29, 120) if fits_small_firmware(c)]
    assert len(cases) > 100
    run = run_cases(build_firmware(board, kernel_fw_root), cases, interleaved=True)
    for case, result in zip(cases, run.results, strict=True):
        problem = check_result(case, result)
        assert problem is None, f"[{board}] {case.x.shape}->{case.out_shape}: {problem}"


def run_case(rng: np.random.Generator, i: int) -> ConvCase:
    """Cout 1, dilation.w 1, filter rows of 1-8 words (KW * Cin <= 32) and padding left or
    right (the edge patches), with the fast scratch and quads enough for the widened rows: path
    CONV_DIRECT_ROW_RUN (each output row's patches and interior quads as asm runs, the input
    offset folded in the bias of the filter rows inside). Cin 1-16, filters 1-7 x 1-7 and
    K x 1, 3x3 every sixth (th_conv_3x3_s8), KH 17-18 every 23rd (above RUN_MAX_KH: the edge
    rows as before), strides 1-2, dilation.h 1-2, top and bottom padding (rows with fewer
    filter rows inside, and none), left and right padding up to the whole window, rows of
    4-60 outputs (more than RUN_CHUNK quads: the sums' buffer flushed), two batches, clamps,
    no bias, input offsets at both ends (scaled_conv_case)."""
    cin = 1 + i % 16
    if i % 6 == 0 and cin <= 10:
        kh = kw = 3
    else:
        kw = int(rng.integers(1, min(7, 32 // cin) + 1))
        kh = int(rng.integers(17, 19)) if i % 23 == 5 else int(rng.integers(1 if kw > 1 else 2, 8))
    s = 1 + i % 2
    dil = (1 + (i // 2) % 2 if kh != 3 or kw != 3 else 1, 1)
    eff_h = (kh - 1) * dil[0] + 1
    while True:
        left, right = int(rng.integers(0, kw + 1)), int(rng.integers(0, kw + 1))
        if left + right > 0:
            break
    out_w = int(rng.integers(4, 61 if cin <= 6 else 25))
    in_w = (out_w - 1) * s + kw - left - right + int(rng.integers(0, s))
    if in_w < 1:
        in_w, left, right = (out_w - 1) * s + kw - 1, 1, 0
    top, bottom = int(rng.integers(0, eff_h)), int(rng.integers(0, eff_h))
    in_h = max(1, eff_h - top - bottom + int(rng.integers(0, 3 * s + 1)))
    out_h = (in_h + top + bottom - eff_h) // s + 1
    batches = 2 if i % 8 == 3 else 1
    return scaled_conv_case(rng, i, (batches, in_h, in_w, cin), (1, kh, kw, cin),
                            (batches, out_h, out_w), s, dil, [top, left, bottom, right],
                            fast_scratch=True)


def run_cases_of(seed: int, count: int) -> list[ConvCase]:
    rng = np.random.default_rng(seed)
    return [c for c in (run_case(rng, i) for i in range(count)) if fits_small_firmware(c)]


def _runs(c: ConvCase) -> bool:
    """The row runs apply (edge_rows' widening and RUN_MAX_KH; the edge scratch given)."""
    kh, kw = c.w.shape[1:3]
    return (c.p.dilation_w == 1 and kw * c.x.shape[3] <= 32 and kh <= 16
            and c.x.shape[0] * c.out_shape[1] * ((c.out_shape[2] + 3) // 4)
            * min(kh, c.x.shape[1]) >= 5 * kh)  # fmt: skip


def test_run_cases_reach_the_branches() -> None:
    cases = run_cases_of(32, 160)
    assert len(cases) > 140
    runs = [c for c in cases if _runs(c)]
    assert len(runs) > 100
    assert {c.x.shape[3] for c in runs} == set(range(1, 17))
    assert {(c.w.shape[2] * c.x.shape[3] + 3) // 4 for c in runs} == set(range(1, 9))
    assert any(c.w.shape[1:3] == (3, 3) and c.p.dilation_h == 1 for c in runs)
    assert any(c.w.shape[2] == 1 for c in runs) and any(c.w.shape[1] == 1 for c in runs)
    assert any(c.w.shape[1] > 16 for c in cases)  # the edge rows without runs
    assert {c.p.stride_w for c in runs} == {1, 2} and any(c.p.dilation_h == 2 for c in runs)
    assert sum(c.out_shape[2] > 32 for c in runs) > 10  # sums flushed within a row
    assert any(c.p.pad_left >= c.w.shape[2] for c in runs)  # windows wholly in the padding
    assert any(c.p.pad_right >= c.w.shape[2] for c in runs)
    assert any(c.p.pad_left == 0 for c in runs) and any(c.p.pad_right == 0 for c in runs)
    assert any(c.p.pad_top > 0 for c in runs) and any(c.p.pad_bottom > 0 for c in runs)
    assert any(c.x.shape[0] == 2 for c in runs) and any(c.bias is None for c in runs)
    assert any(c.p.act_min > -128 for c in runs)
    assert {128, -127} <= {c.p.input_offset for c in runs}


@pytest.mark.parametrize("variant", ["portable", "dsp"])
def test_direct_runs_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in run_cases_of(32, 160):
            problem = check_result(case, driver.run(case))
            assert problem is None, f"[{variant}] {case.x.shape}->{case.out_shape}: {problem}"


@pytest.mark.parametrize("board", ["mps2-an386", "mps2-an500"])
def test_direct_runs_on_cortex_m(kernel_fw_root: Path, board: str) -> None:
    cases = run_cases_of(33, 160)
    assert sum(_runs(c) for c in cases) > 100
    run = run_cases(build_firmware(board, kernel_fw_root), cases, interleaved=True)
    for case, result in zip(cases, run.results, strict=True):
        problem = check_result(case, result)
        assert problem is None, f"[{board}] {case.x.shape}->{case.out_shape}: {problem}"
