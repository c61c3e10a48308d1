"""The general depthwise's channel-inner path (th_dw_conv_lines_s8.c, issue 14) against the
NumPy reference, on the host (DSP modelled in C, under ASan and UBSan) and in one QEMU
Cortex-M4 run (its Thumb-2 block loops).

The cases take that path (plan/scratch.py dw_lines_scratch > 0: ch_mult 1, 4 or more
channels, at most 8 taps or a 2-D window of at most 64, 1-D tensors and short lines): one-row
and one-column tensors (the filter oriented either way), every tap count 1-8 (the unrolled
whole-window loops) and clipped windows at padded edges (the general loop), windows wholly in
the padding, channel counts with every tail (C % 4 = 0-3, the smallest 4), strides, dilations,
small 2-D planes, 2-D windows of 9-14 taps (the general loop for every pixel); each with and
without a bias. Cases the path refuses at run time (an activation clamp, a
shift that rules out the fast requantization) check the fallback. QUANT_CASES: per-channel
constants at the edges of the record pass's checks (the entry leaves them to it), valid ones
run, invalid ones refused (TH_ERR_ARG).

PAIR_SHAPES take its pairs variant (one tap across the line, SMLAD over tap pairs of a staged
line): odd and even tap counts up to 16 (the last pair half empty or whole), strides 1-3 and
dilations (phase rows), channel counts with every tail (C % 4 = 0-3, the last block
overlapping the one before), padding on both ends (SAME, slots half or wholly outside),
several lines (2-D tensors, either orientation). ACROSS_SHAPES take it with two taps across
(a slot pairs the two lines an output line reads): 2-8 taps along, either orientation, strides
1-3 both ways, dilations across and along (phase rows), SAME lines half in the padding, every
tail, issue 14's sweep row 21x8x19 k5x2 s2x3. SPLIT_SHAPES take it with an odd stride along
the line and no dilation (pairs_geometry's split: one phase row of slots at even positions,
outputs starting at odd ones read a second record of weight pairs shifted by one tap): odd
tap counts 5-15 at strides 1, 3 and 5, even ones 10-14 at stride 3 (the first phase's last
pair (0, 0)), every tail (C % 4 = 0-3), SAME padding of either parity (the pad made even) and
VALID, even input lengths (the line staged straight) and odd ones (a slot at the end half
outside), two or more outputs a line, several lines either orientation, issue 14's sweep row
4x48x37 k1x9 s2x3.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import ConvCase, Op, check_result
from kernels.harness import Driver, build_driver
from kernels.sweep import _conv_case, describe
from kernels.target import build_firmware, fits_small_firmware, run_cases
from tinyhost.plan.scratch import _dw_pairs, dw_lines_scratch

# (hw, cin, k, stride, dilation)
SHAPES = [
    ((1, 71), 124, (1, 3), (1, 2), (1, 1)),
    ((1, 12), 24, (1, 5), (1, 2), (1, 1)),
    ((1, 9), 23, (1, 8), (1, 3), (1, 2)),
    ((1, 5), 22, (1, 1), (1, 1), (1, 1)),
    ((1, 9), 4, (1, 2), (1, 2), (1, 1)),
    ((1, 3), 9, (1, 7), (1, 1), (1, 3)),
    ((1, 10), 45, (1, 4), (1, 2), (1, 1)),
    ((1, 8), 30, (1, 6), (1, 2), (1, 1)),
    ((34, 1), 127, (5, 1), (2, 1), (1, 1)),
    ((65, 1), 104, (3, 1), (2, 1), (1, 1)),
    ((68, 1), 60, (8, 1), (2, 1), (4, 1)),
    ((14, 1), 21, (5, 1), (2, 1), (1, 1)),
    ((5, 1), 26, (7, 1), (1, 1), (1, 1)),
    ((6, 9), 8, (2, 3), (1, 2), (1, 1)),
    ((5, 4), 11, (4, 2), (2, 1), (1, 2)),
    ((7, 7), 4, (2, 2), (2, 2), (1, 1)),
    # the row loops (one-row windows, at most 3 taps; a line's whole windows in one call,
    # the tail's block in it): strides 1 and 2, a dilation, a transposed 2-D plane and lines
    # of a 2-D plane (pixels apart by more than a tap step), every tap count with and
    # without a tail, every tail, one full block and a tail, 20 and 21 blocks
    ((1, 39), 50, (1, 3), (1, 2), (1, 1)),
    ((31, 1), 65, (3, 1), (1, 1), (1, 1)),
    ((40, 1), 22, (3, 1), (2, 1), (4, 1)),
    ((12, 5), 13, (3, 1), (2, 1), (1, 1)),
    ((4, 20), 7, (1, 2), (2, 1), (1, 2)),
    ((1, 16), 80, (1, 3), (1, 1), (1, 1)),
    ((1, 16), 81, (1, 3), (1, 1), (1, 1)),
    ((1, 6), 8, (1, 1), (1, 1), (1, 1)),
    ((1, 11), 11, (1, 3), (1, 1), (1, 1)),
    ((9, 1), 9, (2, 1), (1, 1), (1, 1)),
    ((3, 10), 6, (1, 2), (1, 1), (1, 1)),
    # 2-D windows of more than 8 taps (the general block loop): strides across and along,
    # dilations, windows clipped on every side of small planes (SAME), either orientation,
    # every tail (C % 4 = 0-3)
    ((21, 8), 19, (5, 2), (2, 3), (1, 1)),
    ((6, 7), 4, (3, 3), (1, 1), (2, 2)),
    ((5, 9), 6, (2, 5), (1, 2), (1, 1)),
    ((9, 5), 7, (7, 2), (2, 1), (1, 1)),
    ((8, 6), 8, (4, 3), (3, 2), (1, 2)),
    ((4, 4), 5, (3, 4), (1, 1), (1, 1)),
    ((7, 7), 9, (3, 3), (1, 2), (1, 1)),
]

# (hw, cin, k, stride, dilation): the pairs variant for SAME and VALID padding
PAIR_SHAPES = [
    ((1, 46), 44, (1, 11), (1, 2), (1, 1)),
    ((33, 1), 21, (13, 1), (2, 1), (2, 1)),
    ((1, 50), 6, (1, 15), (1, 2), (1, 1)),
    ((1, 37), 7, (1, 16), (1, 1), (1, 1)),
    ((1, 60), 14, (1, 11), (1, 2), (1, 1)),
    ((30, 1), 10, (9, 1), (3, 1), (2, 1)),
    ((18, 1), 8, (14, 1), (2, 1), (1, 1)),
    ((30, 3), 8, (9, 1), (3, 1), (2, 1)),
    ((30, 2), 12, (11, 1), (2, 1), (1, 1)),
    ((3, 40), 16, (1, 13), (2, 2), (1, 1)),
    # issue 14's sweep row (seed 2): edge slots at both ends, odd and even staging runs
    ((59, 1), 14, (5, 1), (2, 1), (1, 1)),
]

# (hw, cin, k, stride, dilation): the pairs variant with two taps across
ACROSS_SHAPES = [
    ((21, 8), 19, (5, 2), (2, 3), (1, 1)),
    ((9, 30), 12, (2, 7), (2, 1), (1, 1)),
    ((12, 20), 8, (2, 4), (1, 2), (2, 1)),
    ((6, 6), 10, (2, 2), (1, 1), (1, 1)),
    ((11, 10), 6, (3, 2), (1, 1), (1, 2)),
    ((16, 5), 4, (7, 2), (2, 3), (1, 1)),
    ((30, 9), 7, (6, 2), (2, 3), (2, 1)),
    ((40, 6), 11, (5, 2), (3, 1), (1, 1)),
    ((9, 40), 6, (2, 4), (3, 3), (1, 2)),
    ((8, 36), 5, (2, 3), (2, 2), (1, 3)),
    # no padding along the line either way (pad_left 0): the one-run line loop
    # (pairs_line_wide) with a one-channel tail
    ((9, 20), 13, (2, 3), (3, 2), (1, 1)),
]

# (hw, cin, k, stride, dilation): the pairs variant split (_split)
SPLIT_SHAPES = [
    ((4, 48), 37, (1, 9), (2, 3), (1, 1)),
    ((1, 47), 5, (1, 9), (1, 3), (1, 1)),
    ((1, 40), 6, (1, 7), (1, 1), (1, 1)),
    ((1, 23), 9, (1, 5), (1, 1), (1, 1)),
    ((29, 1), 13, (11, 1), (1, 1), (1, 1)),
    ((31, 1), 7, (15, 1), (1, 1), (1, 1)),
    ((1, 50), 4, (1, 14), (1, 3), (1, 1)),
    ((1, 44), 10, (1, 10), (1, 3), (1, 1)),
    ((30, 2), 11, (12, 1), (3, 1), (1, 1)),
    ((3, 41), 12, (1, 13), (2, 5), (1, 1)),
    ((1, 9), 8, (1, 9), (1, 3), (1, 1)),
    ((20, 3), 16, (11, 1), (3, 2), (1, 1)),
]


def _split(case: ConvCase) -> bool:
    """pairs_geometry splits the case's line (one tap across; along it an odd stride, no
    dilation, an odd tap count or a stride above 1, at most 15 taps, two outputs or more)."""
    p = case.p
    k = (int(case.w.shape[1]), int(case.w.shape[2]))
    b = 0 if k[0] > k[1] else 1
    sb, db, kb = (p.stride_h, p.stride_w)[b], (p.dilation_h, p.dilation_w)[b], k[b]
    return (k[1 - b] == 1 and db == 1 and sb % 2 == 1 and (kb % 2 == 1 or sb > 1)
            and kb // 2 + 1 <= 8 and case.out_shape[1:3][b] > 1)


def _pairs_variant(case: ConvCase) -> bool:
    """plan/scratch.py's choice for the case is the pairs variant."""
    p, c = case.p, case.x.shape[3]
    k = (int(case.w.shape[1]), int(case.w.shape[2]))
    stride, dilation = (p.stride_h, p.stride_w), (p.dilation_h, p.dilation_w)
    pairs = _dw_pairs(k, case.out_shape[1:3], stride, dilation, c // 4 + (c % 4 != 0))
    need = dw_lines_scratch(k, case.out_shape[1:3], stride, dilation, 1, c)
    return pairs is not None and need == pairs[0]


def _pair_cases() -> list[ConvCase]:
    out: list[ConvCase] = []
    for seed, shapes in ((1416, PAIR_SHAPES), (1419, ACROSS_SHAPES), (1420, SPLIT_SHAPES)):
        rng = np.random.default_rng(seed)
        for hw, cin, k, stride, dilation in shapes:
            for _ in range(2):  # SAME or VALID drawn twice
                case = None
                while case is None:
                    case = _conv_case(rng, Op.DW, hw, cin, cin, k, stride, dilation)
                assert _pairs_variant(case), describe(case)
                assert (min(k) == 2) == (shapes is ACROSS_SHAPES), describe(case)
                assert _split(case) == (shapes is SPLIT_SHAPES), describe(case)
                out += [case, dataclasses.replace(case, bias=None)]
    return out


def _cases() -> tuple[list[ConvCase], int]:
    """The cases, and how many of them (the first) run the path."""
    rng = np.random.default_rng(1415)
    lines: list[ConvCase] = []
    refused: list[ConvCase] = []
    for i, (hw, cin, k, stride, dilation) in enumerate(SHAPES):
        for _ in range(2):  # SAME or VALID drawn twice
            case = None
            while case is None:
                case = _conv_case(rng, Op.DW, hw, cin, cin, k, stride, dilation)
            assert dw_lines_scratch(k, case.out_shape[1:3], stride, dilation, 1, cin) > 0, \
                describe(case)
            lines += [case, dataclasses.replace(case, bias=None)]
        p = case.p
        exact = p.out_shift.copy()
        exact[1] = max(int(exact[1]), 0)  # one channel with shift >= 0: exact requantization
        refused += [dataclasses.replace(case, p=dataclasses.replace(p, act_min=-90, act_max=70)),
                    dataclasses.replace(case, p=dataclasses.replace(p, out_shift=exact))]
        if i < 4 and case.bias is not None:
            # The record checks (lines_rq_blocks) at their edges: |bias| at the largest the
            # fast requantization takes (2^29 - 1 - taps 2^15: runs the path) and one past it
            # either sign, and e = TH_FAST_MAX_E + 1 (both refused).
            lim = 2**29 - 1 - k[0] * k[1] * 2**15
            for b0 in (lim, -lim, lim + 1, -lim - 1):
                bias = case.bias.copy()
                bias[i % cin] = b0
                refused.append(dataclasses.replace(case, bias=bias))
            far = p.out_shift.copy()
            far[-1] = -23
            refused.append(dataclasses.replace(case, p=dataclasses.replace(p, out_shift=far)))
    pairs = _pair_cases()
    return pairs + lines + refused, len(pairs) + len(lines)


CASES, N_LINES = _cases()


def _quant_edge_cases() -> list[tuple[ConvCase, bool]]:
    """Per-channel constants at the record pass's checks, which stand in for the entry's
    (th_dw_lines.h): shifts -1 and -22 (the fast range's ends: the path runs), -23, 0, -31
    and 30 (valid, outside it: the rows path), a negative multiplier or a shift of -32 or 31
    (refused: the bool), at the first, a middle and the last channel of a row loop with a
    two-channel tail, the taps variant's block loop and the pairs variant."""
    rng = np.random.default_rng(1417)
    out = []
    for hw, cin, k, stride in (((1, 39), 50, (1, 3), (1, 2)), ((1, 12), 24, (1, 5), (1, 2)),
                               ((1, 46), 44, (1, 11), (1, 2))):
        case = None
        while case is None:
            case = _conv_case(rng, Op.DW, hw, cin, cin, k, stride, (1, 1))
        assert dw_lines_scratch(k, case.out_shape[1:3], stride, (1, 1), 1, cin) > 0
        for c in sorted({0, cin // 2, cin - 1}):
            for m, sh, ok in ((1 << 30, -1, True), (1 << 30, -22, True), (1 << 30, -23, True),
                              (1 << 30, 0, True), (1 << 30, -31, True), (1 << 30, 30, True),
                              (-1, -8, False), (1 << 30, -32, False), (1 << 30, 31, False)):
                mult, shift = case.p.out_multiplier.copy(), case.p.out_shift.copy()
                mult[c], shift[c] = m, sh
                p = dataclasses.replace(case.p, out_multiplier=mult, out_shift=shift)
                out.append((dataclasses.replace(case, p=p), ok))
    return out


QUANT_CASES = _quant_edge_cases()


def _quant_problems(cases: list[tuple[ConvCase, bool]], results: list) -> list[str]:
    problems = []
    for (case, ok), result in zip(cases, results, strict=True):
        where = f"{describe(case)} m {case.p.out_multiplier.min()} shift " \
                f"{case.p.out_shift.min()}..{case.p.out_shift.max()}"
        if ok and (p := check_result(case, result)) is not None:
            problems.append(f"{where}: {p}")
        if not ok and result.status != 1:
            problems.append(f"{where}: status {result.status}, expected refused")
    return problems


@pytest.fixture(scope="module", params=("dsp", "dsp_general"))
def driver(request: pytest.FixtureRequest) -> Iterator[Driver]:
    with Driver(build_driver(request.param)) as d:
        yield d


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_lines_path_matches_reference_on_host(driver: Driver) -> None:
    for case in CASES:
        problem = check_result(case, driver.run(case))
        assert problem is None, f"{describe(case)} [{driver.build.variant}]: {problem}"
    problems = _quant_problems(QUANT_CASES, [driver.run(c) for c, _ in QUANT_CASES])
    assert not problems, f"[{driver.build.variant}] " + "\n".join(problems[:8])


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                    or shutil.which("qemu-system-arm") is None,
                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
def test_lines_path_matches_reference_on_cortex_m4(kernel_fw_root: Path) -> None:
    cases = [c for c in CASES if fits_small_firmware(c)]
    assert len(cases) >= N_LINES - 4
    quant = [(c, ok) for c, ok in QUANT_CASES if fits_small_firmware(c)]
    assert len(quant) == len(QUANT_CASES)
    fw = build_firmware("mps2-an386", kernel_fw_root)
    run = run_cases(fw, cases + [c for c, _ in quant], interleaved=True)
    problems = [f"{describe(c)}: {p}"
                for c, r in zip(cases, run.results[:len(cases)], strict=True)
                if (p := check_result(c, r)) is not None]
    problems += _quant_problems(quant, run.results[len(cases):])
    assert not problems, "\n".join(problems[:10])
