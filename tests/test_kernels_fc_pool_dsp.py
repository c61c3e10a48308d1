"""Issue 14's DSP paths of FULLY_CONNECTED and the pools on the shapes they branch on.

FULLY_CONNECTED: the fast requantization's bias bound is checked block by block (a block of
four channels with one large bias and every block after it take the exact path, the blocks
before it stay fast), and the last block's 1..3 channels have their own dot products; cases
with input lengths 1..9 and odd, 1..9 and odd outputs, per tensor and per channel, filter
offsets, two batches. AVERAGE_POOL_2D / MAX_POOL_2D: large windows (up to 16x16) at stride 1
(the average's int16-lane span path) and 2, SAME / VALID padding, 1..9 and odd channel
counts, activations; half the max pools given th_maxpool_s8_scratch_size_fast (padded rows
of column maxima, two at a time at stride 1). MAX_POOL_2D again at strides 1-3 with windows
1..8 and 1-23 channels, each case without scratch, with the separable or with the fast scratch
(the strided row loop packing the taps of 1-3 channel pixels into words, the stride-1 pixel
pairs, flat blocks of word pairs for any channel count), and at strides 2-4 with 1-4 channels
and windows 1..9 wide (the strided row loop's constant tap counts); a mix aimed at
max_rows_padded (the padded layout's rows whose windows are inside the image, in one call),
its edges computed from the geometry and asserted reached (rows_padded_edges; in place:
tests/test_plan_inplace_kernels.py); a mix of small planes cut by the top and bottom padding
(explicit paddings, rows with no input row) aimed at the padded layout's chains
(max_chain_top, its first two rows in one pass at stride.h 1, max_rows_bottom; chain_edges
asserted reached). MEAN over H and W of small
planes with 1-64 channels (eight channels a row pass, fast or exact requantization). All
against the NumPy reference: on the host (ASan/UBSan, portable and emulated DSP builds) and
one batch on QEMU mps2-an386 (Cortex-M4, the native DSP build).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import FcCase, Op, check_result
from kernels.cases_ops import MeanCase, PoolCase, fits_firmware
from kernels.harness import Driver, build_driver
from kernels.target import build_firmware, fits_small_firmware, run_cases
from tinyhost.arith.conv import FullyConnectedParams
from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.arith.padding import compute_window_padding
from tinyhost.arith.pool import PoolParams
from tinyhost.arith.reduce import MeanParams
from tinyhost.ir import Padding

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")

FC_IN = [1, 2, 3, 4, 5, 7, 9, 17, 30, 61]
FC_OUT = [1, 2, 3, 4, 5, 6, 7, 9, 13, 18]
POOL_CHANNELS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 18, 31]


def fc_cases(seed: int, count: int) -> list[FcCase]:
    """FC cases whose biases are mostly small (the fast requantization) with, in half of
    them, one or two channels far past the bound (|bias| up to 2^30)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        cin, cout = FC_IN[i % len(FC_IN)], FC_OUT[(i // 3) % len(FC_OUT)]
        per_channel = i % 2 == 1
        n = cout if per_channel else 1
        mult, shift = np.empty(n, np.int32), np.empty(n, np.int32)
        for c in range(n):
            mult[c], shift[c] = quantize_multiplier(
                float(rng.uniform(0.3, 3.0)) / (np.sqrt(cin) * 7000))
        bias = rng.integers(-20000, 20000, cout).astype(np.int32)
        if i % 4 < 2:
            for c in rng.choice(cout, size=min(cout, 1 + i % 2), replace=False):
                bias[c] = int(rng.integers(1 << 29, 1 << 30)) * (1 if rng.random() < 0.5
                                                                 else -1)
        p = FullyConnectedParams(
            input_offset=int(rng.integers(-127, 129)),
            filter_offset=0 if per_channel or i % 3 else int(rng.integers(-20, 21)),
            output_offset=int(rng.integers(-128, 128)), out_multiplier=mult, out_shift=shift,
            act_min=-128 if i % 5 else -100, act_max=127 if i % 5 else 90)
        x = rng.integers(-128, 128, (1 + i % 2, cin)).astype(np.int8)
        w = rng.integers(-127, 128, (cout, cin)).astype(np.int8)
        out.append(FcCase(Op.FC_PER_CHANNEL if per_channel else Op.FC, x, w,
                          None if i % 11 == 10 else bias, p))
    return out


def _window_case(rng: np.random.Generator, hwc: tuple[int, int, int], k: tuple[int, int],
                 stride: int, padding: Padding, max_elements: int, act: bool, batch2: int
                 ) -> tuple[np.ndarray, PoolParams, tuple[int, int, int, int]] | None:
    """A pool's input, parameters (a random activation range where act) and output shape;
    None where the output is empty or the input has more than max_elements per image."""
    h, w, c = hwc
    pads = compute_window_padding(padding, h, w, k[0], k[1], stride, stride)
    if pads.out_h < 1 or pads.out_w < 1 or h * w * c > max_elements:
        return None
    lo, hi = (int(rng.integers(-128, 0)), int(rng.integers(0, 128))) if act else (-128, 127)
    p = PoolParams(stride, stride, k[0], k[1], pads.top, pads.left, pads.bottom, pads.right,
                   lo, hi)
    x = rng.integers(-128, 128, (1 + batch2, h, w, c)).astype(np.int8)
    return x, p, (x.shape[0], pads.out_h, pads.out_w, c)


def pool_cases(seed: int, count: int) -> list[PoolCase]:
    """Average and max pools with windows up to 16x16, stride 1 (two thirds) or 2."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        i = len(out)
        c = POOL_CHANNELS[i % len(POOL_CHANNELS)]
        fh, fw = int(rng.integers(1, 17)), int(rng.integers(2, 17))
        stride = 2 if i % 3 == 2 else 1
        h, w = int(rng.integers(max(fh // 2, 1), fh + 10)), int(rng.integers(fw // 2, fw + 10))
        made = _window_case(rng, (h, w, c), (fh, fw), stride,
                            Padding.SAME if i % 2 else Padding.VALID, 6000, i % 4 == 0, i % 2)
        if made is None:
            continue
        x, p, out_shape = made
        op = Op.AVGPOOL if i % 4 != 3 else Op.MAXPOOL
        out.append(PoolCase(op, x, p, out_shape,
                            fast_scratch=i % 8 == 7))  # half the max pools: padded rows
    return out


MAX_CHANNELS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 18, 23]


def maxpool_cases(seed: int, count: int, fast: bool = False) -> list[PoolCase]:
    """Max pools at strides 1-3 with windows 1..8 (the strided row loop: 1-3 channels packed
    as pixels into words, including windows of under four bytes), SAME / VALID padding,
    activations, in turn without scratch, with the separable scratch and with the fast one.
    fast: every case with the fast scratch, stride 1 in three of four and planes up to 13
    columns (the two-row column pass at window heights 2..7, its rows of under four bytes and
    its last word past a multiple of four; the stride-1 row pass in blocks of one or two word
    pairs or a loop per block, rows the blocks do not fill, rows of under one block)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        i = len(out)
        c = MAX_CHANNELS[i % len(MAX_CHANNELS)]
        fh, fw = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        if fast:
            stride = 1 if i % 4 else int(rng.integers(2, 4))
            h, w = int(rng.integers(fh, fh + 6)), int(rng.integers(1, fw + 6))
        else:
            stride = 1 + i % 3
            h, w = int(rng.integers(1, fh + 9)), int(rng.integers(1, fw + 12))
        made = _window_case(rng, (h, w, c), (fh, fw), stride,
                            Padding.SAME if (i // 3) % 2 else Padding.VALID, 4000, i % 5 == 0,
                            i % 2)
        if made is None:
            continue
        x, p, out_shape = made
        mode = 2 if fast else (i // 2) % 3
        out.append(PoolCase(Op.MAXPOOL, x, p, out_shape, no_scratch=mode == 0,
                            fast_scratch=mode == 2))
    return out


def strided_small_c_cases(seed: int, count: int) -> list[PoolCase]:
    """Max pools of 1-4 channels at strides 2-4 (the strided row loop: 4 channels a pixel a
    word, 1-3 packed into words; windows 1..9 wide, constant tap counts 2..7 and the variable
    count past them, windows of under four bytes), windows clipped at SAME borders,
    activations, with the separable or the fast scratch in turn."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        i = len(out)
        fh, fw = int(rng.integers(1, 5)), 1 + i % 9
        stride = int(rng.integers(2, 5))
        h, w = int(rng.integers(1, fh + 4)), int(rng.integers(max(fw // 2, 1), fw * 3 + 4))
        made = _window_case(rng, (h, w, 1 + (i // 9) % 4), (fh, fw), stride,
                            Padding.SAME if (i // 36) % 2 else Padding.VALID, 4000, i % 3 == 0,
                            i % 4 == 1)
        if made is not None:
            x, p, out_shape = made
            out.append(PoolCase(Op.MAXPOOL, x, p, out_shape, fast_scratch=i % 2 == 0))
    return out


@dataclass(frozen=True)
class RowsPadded:
    """Where a MAX_POOL_2D case goes in the DSP build's padded layout (th_maxpool_s8.c,
    max_lanes_image), from the geometry as the C computes it: padded (the fast size given),
    rows: output rows whose windows lie inside the image vertically (yb - ya), pairs: the
    two-row column pass (stride.h 1, KH 2..7), eligible: max_rows_padded's row pass
    applies (stride.w > 1, or stride 1 unclamped with KW <= 7), taken: it runs (>= 2 rows)."""

    padded: bool
    rows: int
    pairs: bool
    eligible: bool
    ya: int = 0  # rows [ya, yb) the padded layout's middle: before, max_chain_top's rows
    yb: int = 0  # (padded, span > 0); from yb, max_rows_bottom's
    span: int = 0

    @property
    def taken(self) -> bool:
        return self.padded and self.eligible and self.rows >= 2


def _ceil4(n: int) -> int:
    return (n + 3) & ~3


def rows_padded_geometry(case: PoolCase) -> RowsPadded:
    """RowsPadded of case as th_maxpool_s8 (DSP build) and the test driver's scratch see it."""
    _, h, w, c = case.x.shape
    _, oh, ow, _ = case.out_shape
    p = case.p
    cols = (ow - 1) * p.stride_w + p.filter_w  # max_padded_cols
    pairs = p.stride_h == 1 and 2 <= p.filter_h <= 7 and oh > 1
    quads = pairs and p.filter_h >= 5 and oh >= 4  # max_fast_rows
    fast = 0 if oh * ow <= 1 else (4 if quads else 2 if pairs else 1) * _ceil4(cols * c)
    separable = oh * ow > 1 and p.filter_h * p.filter_w > p.filter_h * p.stride_w + p.filter_w
    size = 0 if case.no_scratch else _ceil4(w * c) if separable else 0
    if case.fast_scratch and not case.no_scratch:
        size = max(size, fast)
    t0 = min(p.pad_left, cols)
    span = (max(t0, min(w + p.pad_left, cols)) - t0) * c  # padded_bytes
    padded = fast > 0 and size >= fast and not c1_words_taken(case, span)
    e, sh, top = h - p.filter_h + p.pad_top, p.stride_h, p.pad_top
    ya = min(-(-top // sh), oh) if span > 0 else oh
    yb = ya if e < 0 else max(ya, min(oh, e // sh + 1))
    if padded and span > 0 and top > 0 and top % sh == 0 and ya < yb and (
            not pairs or (yb - ya) % 2 == 1):
        ya += 1  # the row of origin 0 joins max_chain_top's rows
    clamp = p.act_min > -128 or p.act_max < 127
    return RowsPadded(padded, yb - ya, padded and pairs,
                      p.stride_w > 1 or (not clamp and p.filter_w <= 7), ya, yb, span)


def c1_words_taken(case: PoolCase, span: int) -> bool:
    """th_maxpool_s8's MAX_C1_WORDS path (DSP build) takes case (the fast scratch given, one
    channel, strides >= 2, windows 4..8 wide, at least 4 input columns read: span, the
    padded layout's bytes from the input, padded_bytes)."""
    _, _, w, c = case.x.shape
    _, oh, ow, _ = case.out_shape
    p = case.p
    cols = (ow - 1) * p.stride_w + p.filter_w
    pairs = p.stride_h == 1 and 2 <= p.filter_h <= 7 and oh > 1
    fast = 0 if oh * ow <= 1 else _ceil4(cols * c) * (
        4 if pairs and p.filter_h >= 5 and oh >= 4 else 2 if pairs else 1)
    return (case.fast_scratch and not case.no_scratch and fast > 0 and c == 1
            and p.stride_h >= 2 and p.stride_w >= 2 and 4 <= p.filter_w <= 8 and span >= 4)


def c1_words_span(case: PoolCase) -> int:
    """padded_bytes' span (bytes of a row of the padded layout read from the input)."""
    _, _, w, c = case.x.shape
    p = case.p
    cols = (case.out_shape[2] - 1) * p.stride_w + p.filter_w
    t0 = min(p.pad_left, cols)
    return (max(t0, min(w + p.pad_left, cols)) - t0) * c


def c1_words_cases(seed: int, count: int) -> list[PoolCase]:
    """Max pools of one channel at strides 2-4 (H and W drawn apart) with the fast scratch,
    aimed at MAX_C1_WORDS: windows 4..8 wide and 1..9 high, up to wider and higher than the
    plane, explicit paddings on every side (rows and columns past the window: windows with no
    input row), rows read 4..40 bytes wide (one chunk of 4..12 bytes, several with the last
    one overlapping), clamps, two batches; one in six just outside it (windows 3 or 9 wide,
    stride 1 one way, the separable scratch only) against the paths it falls to."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        i = len(out)
        sh, sw = int(rng.integers(2, 5)), int(rng.integers(2, 5))
        fh, fw = int(rng.integers(1, 10)), 4 + i % 5
        outside = i % 6 == 5
        if outside:
            fw, sw, sh = [(3, sw, sh), (9, sw, sh), (fw, 1, sh), (fw, sw, 1)][(i // 6) % 4]
        h, w = int(rng.integers(1, fh + 8)), int(rng.integers(1, 41))
        top, bottom = int(rng.integers(0, fh + 1)), int(rng.integers(0, fh + 1))
        left, right = int(rng.integers(0, fw)), int(rng.integers(0, fw))
        oh, ow = (h + top + bottom - fh) // sh + 1, (w + left + right - fw) // sw + 1
        if oh < 1 or ow < 1 or oh * ow <= 1:
            continue
        lo, hi = (int(rng.integers(-128, 0)), int(rng.integers(0, 128))) if i % 4 == 3 \
            else (-128, 127)  # fmt: skip
        p = PoolParams(sh, sw, fh, fw, top, left, bottom, right, lo, hi)
        x = rng.integers(-128, 128, (1 + (i % 7 == 0), h, w, 1)).astype(np.int8)
        out.append(PoolCase(Op.MAXPOOL, x, p, (x.shape[0], oh, ow, 1),
                            fast_scratch=not (outside and (i // 6) % 8 == 7)))
    return out


def c1_words_edges(cases: list[PoolCase]) -> set[str]:
    """The branches of max_c1_words that cases take (and the cases just outside it)."""
    got = set()
    for case in cases:
        p, (_, h, w, _), span = case.p, case.x.shape, c1_words_span(case)
        if not c1_words_taken(case, span):
            got.add("outside")
            continue
        got.add(f"KW {p.filter_w}")
        got.add("one chunk" if span <= 12 else "chunks, last overlapping" if span % 12
                else "whole chunks")
        if span < 8:
            got.add("chunk under 8 bytes")
        if p.act_min > -128 or p.act_max < 127:
            got.add("clamp")
        if case.x.shape[0] == 2:
            got.add("two batches")
        for oy in range(case.out_shape[1]):
            ys = oy * p.stride_h - p.pad_top
            rows = min(ys + p.filter_h, h) - max(ys, 0)
            got.add("no input row" if rows <= 0 else "odd rows" if rows % 2 else "even rows")
        if p.pad_left > 0:
            got.add("left padding")
        if (case.out_shape[2] - 1) * p.stride_w + p.filter_w > w + p.pad_left:
            got.add("right padding")
        if p.filter_h > h:
            got.add("window higher than the plane")
        if p.filter_w > w:
            got.add("window wider than the plane")
        ow = case.out_shape[2]  # c1_row: outputs folded alone, four at a time, last four back
        got.add("under four outputs" if ow < 4 else "fours" if ow % 4 == 0
                else "last four overlapping")
    return got


C1_WORDS_EDGES = {"outside", "KW 4", "KW 5", "KW 6", "KW 7", "KW 8", "one chunk",
                  "chunks, last overlapping", "whole chunks", "chunk under 8 bytes", "clamp",
                  "two batches", "no input row", "odd rows", "even rows", "left padding",
                  "right padding", "window higher than the plane",
                  "window wider than the plane", "under four outputs", "fours",
                  "last four overlapping"}


ROWS_PADDED_CHANNELS = [1, 2, 3, 4, 5, 6, 8, 13]


def rows_padded_cases(seed: int, count: int) -> list[PoolCase]:
    """Max pools aimed at max_rows_padded (the padded layout's rows whose windows are inside
    the image vertically, in one call): 1..5 such rows (1: the call not taken; 2: one pair;
    odd counts: a row left after the pairs), strides 1-3 drawn apart for H and W (stride.h 1:
    two rows a pass; stride.w > 1: max_row_strided, 1-3 channels packed, windows of under four
    bytes and up to 9 taps), 1-13 channels, SAME / VALID, activations, one or two batches,
    the fast scratch (one in seven: the separable scratch only, padded where it is as large).
    In place (rule (c) at its bound): tests/test_plan_inplace_kernels.py."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        i = len(out)
        c = ROWS_PADDED_CHANNELS[i % len(ROWS_PADDED_CHANNELS)]
        sh, sw = 1 + i % 3, 1 + (i // 3) % 3
        fh = int(rng.integers(2 if sh == 1 and i % 5 else 1, 8))  # mostly pairs at stride 1
        fw = int(rng.integers(1, 10 if sw > 1 else 8))
        rows = 1 + (i // 2) % 5
        h = fh + (rows - 1) * sh + int(rng.integers(0, sh))
        w = int(rng.integers(max(fw // 2, 1), fw + 3 * sw + 4))
        padding = Padding.SAME if (i // 4) % 2 else Padding.VALID
        pads = compute_window_padding(padding, h, w, fh, fw, sh, sw)
        if pads.out_h * pads.out_w <= 1 or (1 + i % 2) * h * w * c > 3000:
            continue
        lo, hi = (int(rng.integers(-128, 0)), int(rng.integers(0, 128))) if i % 5 == 2 \
            else (-128, 127)  # fmt: skip
        p = PoolParams(sh, sw, fh, fw, pads.top, pads.left, pads.bottom, pads.right, lo, hi)
        x = rng.integers(-128, 128, (1 + i % 2, h, w, c)).astype(np.int8)
        out.append(PoolCase(Op.MAXPOOL, x, p, (x.shape[0], pads.out_h, pads.out_w, c),
                            fast_scratch=i % 7 != 6))
    return out


def rows_padded_edges(cases: list[PoolCase]) -> set[str]:
    """The edges of max_rows_padded's call that cases reach (rows_padded_geometry)."""
    got = set()
    for case in cases:
        g, p, c = rows_padded_geometry(case), case.p, case.x.shape[3]
        if g.padded and g.eligible and g.rows == 1:
            got.add("one row: not taken")
        if not g.taken:
            continue
        clamp = p.act_min > -128 or p.act_max < 127
        got |= {f"stride.h {p.stride_h}", f"stride.w {p.stride_w}",
                f"C {c}" if c <= 4 else "C >= 5",
                "SAME" if p.pad_top or p.pad_left else "VALID"}
        got |= {name for name, hit in [
            ("two rows", g.rows == 2), ("pairs, one row left", g.pairs and g.rows % 2 == 1),
            ("pairs, none left", g.pairs and g.rows % 2 == 0 and g.rows > 2),
            ("single rows", not g.pairs), ("clamp", clamp),
            ("C >= 5 strided", c >= 5 and p.stride_w > 1),
            ("under four bytes", c * p.filter_w < 4 and p.stride_w > 1),
            ("KW > 7 strided", p.filter_w > 7), ("two batches", case.x.shape[0] == 2),
            ("separable scratch only", not case.fast_scratch)] if hit}
    return got


ROWS_PADDED_EDGES = {
    "one row: not taken", "two rows", "pairs, one row left", "pairs, none left",
    "single rows", "stride.h 1", "stride.h 2", "stride.h 3", "stride.w 1", "stride.w 2",
    "stride.w 3", "C 1", "C 2", "C 3", "C 4", "C >= 5", "C >= 5 strided", "SAME", "VALID",
    "clamp", "under four bytes", "KW > 7 strided", "two batches",
    "separable scratch only"}


QUAD_CHANNELS = [1, 2, 3, 4, 5, 6, 7, 9, 12, 17, 21]


def quad_cases(seed: int, count: int) -> list[PoolCase]:
    """Max pools aimed at the four-row column pass (quad_rows_call in max_rows_padded:
    stride.h 1, KH 5..7, four or more output rows, the fast scratch's four rows): 4..11 rows
    of unclipped windows (quads, then a pair and / or a row left), KH 5-7 (rows 8-9 of a pass
    at 6 and 7), rows of under four bytes and rows ending past a multiple of four, stride.w
    1-3 with windows up to 15 wide (wider than the plane too), C 1-21 odd and even, SAME /
    VALID, clamps, two images."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        i = len(out)
        c = QUAD_CHANNELS[i % len(QUAD_CHANNELS)]
        fh, sw = 5 + i % 3, 1 if i % 4 else 2 + (i // 4) % 2
        fw = int(rng.integers(1, 8 if sw == 1 and i % 8 else 16))
        rows = 4 + (i // 2) % 8
        h = fh + rows - 1
        w = 1 if c < 4 and i % 2 else int(rng.integers(1, fw + 6))  # rows of C bytes
        padding = Padding.SAME if (i // 5) % 2 else Padding.VALID
        pads = compute_window_padding(padding, h, w, fh, fw, 1, sw)
        if pads.out_w < 1 or (1 + (i % 6 == 0)) * h * w * c > 3000:
            continue
        lo, hi = (int(rng.integers(-128, 0)), int(rng.integers(0, 128))) \
            if i % 7 == 3 or i % 8 == 4 else (-128, 127)  # fmt: skip
        p = PoolParams(1, sw, fh, fw, pads.top, pads.left, pads.bottom, pads.right, lo, hi)
        x = rng.integers(-128, 128, (1 + (i % 6 == 0), h, w, c)).astype(np.int8)
        out.append(PoolCase(Op.MAXPOOL, x, p, (x.shape[0], pads.out_h, pads.out_w, c),
                            fast_scratch=True))
    return out


def quad_edges(cases: list[PoolCase]) -> set[str]:
    """The edges of the four-row pass that cases reach (rows_padded_geometry)."""
    got = set()
    for case in cases:
        g, p, c = rows_padded_geometry(case), case.p, case.x.shape[3]
        if not (g.taken and g.pairs and p.filter_h >= 5 and case.out_shape[1] >= 4
                and g.rows >= 4):
            continue
        got |= {f"KH {p.filter_h}", f"rows % 4 == {g.rows % 4}",
                "row under four bytes" if g.span < 4 else "row past whole words"
                if g.span % 4 else "whole words", f"stride.w {min(p.stride_w, 2)}",
                "C < 4" if c < 4 else "C odd" if c % 2 else "C even"}
        got |= {name for name, hit in [
            ("clamp", p.act_min > -128 or p.act_max < 127), ("two images", case.x.shape[0] == 2),
            ("SAME", p.pad_top > 0), ("VALID", p.pad_top == 0 and p.pad_left == 0)] if hit}
    return got


QUAD_EDGES = {"KH 5", "KH 6", "KH 7", "rows % 4 == 0", "rows % 4 == 1", "rows % 4 == 2",
              "rows % 4 == 3", "row under four bytes", "row past whole words", "whole words",
              "stride.w 1", "stride.w 2", "C < 4", "C odd", "C even", "clamp", "two images",
              "SAME", "VALID"}


def chain_cases(seed: int, count: int) -> list[PoolCase]:
    """Max pools with the fast scratch on small planes whose windows are cut by the top or
    bottom (max_chain_top: the rows from input row 0, one chain adding rows; max_rows_bottom:
    the rows cut by the bottom, two a pass at stride.h 1), explicit paddings up to past the
    window (rows with no input row: -128), strides 1-3, 1-13 channels, activations."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        i = len(out)
        c = ROWS_PADDED_CHANNELS[i % len(ROWS_PADDED_CHANNELS)]
        sh, sw = (1, 1) if i % 3 else (int(rng.integers(2, 4)), int(rng.integers(1, 4)))
        fh, fw = int(rng.integers(1, 8)), int(rng.integers(1, 6))
        h, w = int(rng.integers(1, fh + 4)), int(rng.integers(1, fw + 5))
        top = int(rng.integers(0, fh + (2 if i % 5 == 0 else 0)))
        bottom = int(rng.integers(0, fh + (2 if i % 5 == 1 else 0)))
        left, right = int(rng.integers(0, fw)), int(rng.integers(0, fw))
        oh, ow = (h + top + bottom - fh) // sh + 1, (w + left + right - fw) // sw + 1
        if oh < 2 or ow < 1 or h * w * c > 1500:
            continue
        lo, hi = (int(rng.integers(-128, 0)), int(rng.integers(0, 128))) if i % 4 == 3 \
            else (-128, 127)  # fmt: skip
        p = PoolParams(sh, sw, fh, fw, top, left, bottom, right, lo, hi)
        x = rng.integers(-128, 128, (1 + (i % 7 == 0), h, w, c)).astype(np.int8)
        out.append(PoolCase(Op.MAXPOOL, x, p, (x.shape[0], oh, ow, c), fast_scratch=True))
    return out


def chain_edges(cases: list[PoolCase]) -> set[str]:
    """The branches of max_chain_top and max_rows_bottom that cases take, from the geometry
    as th_maxpool_s8 (DSP build) computes it (rows_padded_geometry)."""
    got = set()
    for case in cases:
        _, h, w, c = case.x.shape
        _, oh, ow, _ = case.out_shape
        p, g = case.p, rows_padded_geometry(case)
        if not g.padded or g.span <= 0:
            continue
        sh, top, fh, ya, yb = p.stride_h, p.pad_top, p.filter_h, g.ya, g.yb
        if ya > -(-top // sh):
            got.add("top: the row of origin 0")
        done = 0
        ye0 = min(h, fh - top)
        if g.pairs and ya >= 2 and 0 < ye0 < h:  # max_top_pair, the chain going on in cm1
            got.add("top: two rows" if ya == 2 else "top: two rows, then more")
            done = ye0 + 1
        for oy in range(2 if done else 0, ya):
            ye = min(h, oy * sh - top + fh)
            got.add("top: no input row" if ye <= 0 else "top: first rows" if done == 0
                    else "top: rows added" if ye > done else "top: none added")
            done = max(done, ye)
        pairs = g.pairs
        oy = yb
        while oy < oh:
            ys = oy * sh - top
            if ys >= h:
                got.add("bottom: no input row")
            elif pairs and oy + 1 < oh and ys + 1 < h:
                got.add("bottom: two rows")
                # max_of2 over the span: bytes, whole words, words and the last one back
                got.add("two rows: under 4 bytes" if g.span < 4 else "two rows: words"
                        if g.span % 4 == 0 else "two rows: last word back")
                oy += 1
            else:
                got.add("bottom: one row, stride.h 1" if pairs else "bottom: one row")
            oy += 1
        if p.act_min > -128 or p.act_max < 127:
            got.add("clamp")
        got.add("C < 4" if c < 4 else "C >= 4")
    return got


CHAIN_EDGES = {"top: no input row", "top: first rows", "top: rows added", "top: none added",
               "top: the row of origin 0", "top: two rows", "top: two rows, then more",
               "bottom: no input row", "bottom: two rows", "bottom: one row, stride.h 1",
               "bottom: one row", "clamp", "C < 4", "C >= 4", "two rows: under 4 bytes",
               "two rows: words", "two rows: last word back"}


def mean_cases(seed: int, count: int) -> list[MeanCase]:
    """MEAN over H and W of small planes with many channels (the DSP build: eight channels
    a row pass, the last group overlapping, fast requantization) and 1-7 channels; scale
    ratios from 1/20 to 40, so folded shifts fall both in the fast requantization's range
    and outside it (th_requantize's path)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        c = [1, 3, 5, 7, 8, 9, 12, 15, 17, 31, 46, 55, 64][i % 13]
        h, w = int(rng.integers(1, 7)), int(rng.integers(1, 15))
        m, shift = quantize_multiplier(float(rng.choice([rng.uniform(0.05, 2.0),
                                                         rng.uniform(2.0, 40.0)])))
        p = MeanParams(axes=(1, 2), keep_dims=True,
                       input_zero_point=int(rng.integers(-128, 128)),
                       output_zero_point=int(rng.integers(-128, 128)), multiplier=m,
                       shift=shift)
        x = rng.integers(-128, 128, (1, h, w, c)).astype(np.int8)
        if i % 9 == 4:
            x[:] = (-128, 127)[i % 2]
        out.append(MeanCase(Op.MEAN, x, p))
    return out


@pytest.mark.parametrize("variant", ["portable", "dsp"])
def test_fc_and_pools_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in [*fc_cases(1, 120), *pool_cases(2, 90), *maxpool_cases(5, 150),
                     *maxpool_cases(9, 120, fast=True), *strided_small_c_cases(11, 72),
                     *rows_padded_cases(15, 48), *chain_cases(21, 80), *mean_cases(7, 60),
                     *c1_words_cases(25, 120), *quad_cases(29, 60)]:
            problem = check_result(case, driver.run(case))
            assert problem is None, f"{case.op.name} [{variant}] {case.x.shape}: {problem}"


@pytest.mark.parametrize("seed", [25, 27])
def test_maxpool_c1_words_mix_reaches_its_edges(seed: int) -> None:
    """The MAX_C1_WORDS mixes of the host (25) and the Cortex-M4 (27) runs take every branch
    of max_c1_words (c1_words_edges), and the paths next to it."""
    assert c1_words_edges(c1_words_cases(seed, 120)) == C1_WORDS_EDGES


def test_fc_mix_reaches_the_fallbacks() -> None:
    """The FC mix has blocks that must leave the fast requantization (a bias past 2^29)
    after fast ones, and last blocks of 1, 2 and 3 channels."""
    cases = fc_cases(1, 120)
    assert any(c.bias is not None and np.abs(c.bias.astype(np.int64)).max() >= 1 << 29
               and np.abs(c.bias[:4].astype(np.int64)).max() < 1 << 20 for c in cases)
    assert {c.w.shape[0] % 4 for c in cases} == {0, 1, 2, 3}


@pytest.mark.parametrize("seed", [15, 17])
def test_maxpool_rows_padded_mix_reaches_its_edges(seed: int) -> None:
    """The max_rows_padded mixes of the host (15) and the Cortex-M4 (17) runs reach every
    edge of the call (rows_padded_geometry; checked against a probe in the C on these and the
    other max pool mixes when written), most of their cases taking it."""
    cases = rows_padded_cases(seed, 48)
    assert rows_padded_edges(cases) == ROWS_PADDED_EDGES
    assert sum(rows_padded_geometry(c).taken for c in cases) >= 24


@pytest.mark.parametrize("seed", [29, 31])
def test_maxpool_quad_mix_reaches_its_edges(seed: int) -> None:
    """The four-row column pass mixes of the host (29) and the Cortex-M4 (31) runs reach
    every edge of it (quad_edges), most of their cases taking it."""
    cases = quad_cases(seed, 60)
    assert quad_edges(cases) == QUAD_EDGES
    assert sum(rows_padded_geometry(c).taken for c in cases) >= 30


@pytest.mark.parametrize("seed", [21, 23])
def test_maxpool_chain_mix_reaches_its_edges(seed: int) -> None:
    """The max_chain_top / max_rows_bottom mixes of the host (21) and the Cortex-M4 (23) runs
    take every branch of both (chain_edges)."""
    assert chain_edges(chain_cases(seed, 80)) == CHAIN_EDGES


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                    or shutil.which("qemu-system-arm") is None,
                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
def test_fc_and_pools_on_cortex_m4(kernel_fw_root: Path) -> None:
    rows_padded = rows_padded_cases(17, 48)
    assert all(fits_firmware(c) for c in rows_padded)  # the edges checked above, all run
    cases = [*[c for c in fc_cases(3, 80) if fits_small_firmware(c)],
             *[c for c in pool_cases(4, 80) if fits_firmware(c)],
             *[c for c in maxpool_cases(6, 60) if fits_firmware(c)],
             *[c for c in maxpool_cases(10, 60, fast=True) if fits_firmware(c)],
             *[c for c in strided_small_c_cases(12, 72) if fits_firmware(c)],
             *rows_padded, *chain_cases(23, 80), *quad_cases(31, 60),
             *[c for c in c1_words_cases(27, 120) if fits_firmware(c)],
             *[c for c in mean_cases(8, 40) if fits_firmware(c)]]
    assert len(cases) >= 350
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases, interleaved=True)
    problems = [f"{c.op.name} {c.x.shape}: {p}"
                for c, r in zip(cases, run.results, strict=True)
                if (p := check_result(c, r)) is not None]  # fmt: skip
    assert not problems, f"{len(problems)} of {len(cases)} mismatch:\n" + "\n".join(
        problems[:8])
