"""The general depthwise's rows path on 2-D filters (issue 14): its per-output-channel records
(weight pairs in band order, start value, requantization constants) against the NumPy
reference, on the host (DSP modelled in C, under ASan and UBSan) and in one QEMU Cortex-M4 run.

The cases take the rows path (fast scratch, filters of two or more rows after orientation and
fewer than 15 taps, or planes too large for the plane path): odd and even tap counts, strides
1-3, dilations, channel multipliers up to 32, odd channel counts, one-row tensors, and all
three record modes (fast requantization; with an activation clamp; exact requantization when
a bias of 2^29 or a non-negative shift rules the fast one out), with and without a bias.
Then random filters of one or two rows after orientation, whose bands stage up to four
adjacent channels per pass (word loads split with SXTB16 for four, bytes for a tail of two
or three, C 1-11): one and two input rows per band (both inside, or one in the padding),
odd and even column counts, dilation phases, strides 1-3, an activation clamp, in place;
and one-row filters of 8 and 12 channels (whole passes of four, no tail) the rows path
still takes.
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
from tinyhost.plan.scratch import dw_lines_scratch, dw_plane_scratch

# (hw, cin, k, stride, dilation, mult): 2-D filters the rows path stages as bands.
SHAPES = [
    ((9, 9), 1, (3, 3), (2, 2), (1, 1), 26),
    ((6, 6), 1, (3, 3), (1, 1), (1, 1), 32),
    ((21, 8), 19, (5, 2), (2, 3), (1, 1), 1),
    ((6, 43), 9, (2, 5), (3, 1), (1, 1), 1),
    ((11, 7), 5, (3, 2), (1, 2), (2, 1), 3),
    ((10, 12), 3, (2, 3), (3, 3), (1, 2), 2),
    ((13, 9), 7, (3, 3), (1, 2), (1, 1), 1),
    ((8, 10), 2, (2, 2), (2, 1), (3, 2), 9),
    ((12, 5), 6, (7, 2), (1, 1), (1, 1), 1),
    ((16, 16), 1, (2, 2), (1, 1), (1, 1), 32),
    ((4, 14), 11, (3, 1), (1, 2), (1, 1), 1),
    ((1, 40), 13, (1, 5), (1, 2), (1, 1), 1),
    ((30, 1), 6, (15, 1), (1, 1), (1, 1), 1),
]

# (hw, cin, k, stride, dilation): one-row filters whose channels fill whole passes of four
# that the rows path still takes (an even tap count at stride 1 along the line, which the
# lines path's estimate loses on; k1x5 s1 d2x1 and k1x9 s2x3, here before, take its pairs
# variant split since session 24); with two rows across, the lines path's two-across variant
# takes every such shape.
TAIL_FREE = [
    ((11, 16), 8, (1, 6), (1, 1), (2, 1)),
    ((11, 19), 12, (1, 6), (1, 1), (1, 1)),
]


def _cases() -> list[ConvCase]:
    rng = np.random.default_rng(1414)
    cases: list[ConvCase] = []
    for hw, cin, k, stride, dilation, mult in SHAPES:
        case = None
        while case is None:
            case = _conv_case(rng, Op.DW, hw, cin, cin * mult, k, stride, dilation, mult)
        assert case.fast_scratch
        p = case.p
        exact = case.p.out_shift.copy()
        exact[::2] = np.maximum(exact[::2], 0)  # shift >= 0: exact requantization
        big_bias = case.bias.copy()
        big_bias[1::3] = np.where(np.arange(len(big_bias))[1::3] % 2, 1 << 29, -(1 << 29))
        cases += [
            case,
            dataclasses.replace(case, p=dataclasses.replace(p, act_min=-90, act_max=70)),
            dataclasses.replace(case, p=dataclasses.replace(p, out_shift=exact)),
            dataclasses.replace(case, bias=big_bias),
            dataclasses.replace(case, bias=None),
        ]
    return cases + _group_cases()


def _group_cases() -> list[ConvCase]:
    """Rows-path shapes (neither the plane nor the channel-inner path applies) whose filter
    has one or two rows after orientation: the bands of up to four channels per pass."""
    rng = np.random.default_rng(1415)
    cases: list[ConvCase] = []
    while len(cases) < 28:
        kb = int(rng.integers(2, 8))
        ka = 1 + len(cases) % 2
        k = (ka, kb) if rng.integers(0, 2) else (kb, ka)
        stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        dilation = (int(rng.choice([1, 1, 2])), int(rng.choice([1, 1, 2])))
        span = [(k[i] - 1) * dilation[i] + 1 for i in range(2)]
        hw = (span[0] + int(rng.integers(0, 12)), span[1] + int(rng.integers(0, 12)))
        cin = int(rng.choice([1, 2, 3, 4, 5, 6, 7, 11]))
        case = _conv_case(rng, Op.DW, hw, cin, cin, k, stride, dilation, 1)
        if case is None or not fits_small_firmware(case):
            continue
        if not _rows_path(case):
            continue
        if len(cases) % 4 == 1:
            case = case.clamped()
        elif len(cases) % 4 == 2:
            case = dataclasses.replace(case, in_place=True)
        cases.append(case)
    for i, (hw, cin, k, stride, dilation) in enumerate(TAIL_FREE):
        case = None
        while case is None or not fits_small_firmware(case):
            case = _conv_case(rng, Op.DW, hw, cin, cin, k, stride, dilation, 1)
        cases.append(dataclasses.replace(case, in_place=True) if i % 2 else case)
    return cases


def _rows_path(case: ConvCase) -> bool:
    """Neither the plane path nor the channel-inner (lines) path takes the depthwise (the
    host's mirrors of their choices, tinyhost.plan.scratch)."""
    k = tuple(case.w.shape[1:3])
    out_hw = case.out_shape[1:3]
    s, d = (case.p.stride_h, case.p.stride_w), (case.p.dilation_h, case.p.dilation_w)
    return not (dw_plane_scratch(k, out_hw, s, d, 1)
                or dw_lines_scratch(k, out_hw, s, d, 1, case.x.shape[3]))


CASES = _cases()


def test_group_cases_cover_the_channel_tails() -> None:
    """Passes of four channels and tails of one to three, one and two filter rows. (Without
    a tail the lines path, two taps across included, takes nearly every such shape.)"""
    groups = _group_cases()
    assert {c.x.shape[3] % 4 for c in groups} >= {1, 2, 3}
    assert any(c.x.shape[3] > 4 for c in groups)
    assert {min(c.w.shape[1:3]) for c in groups} == {1, 2}
    assert any(c.in_place for c in groups)
    assert all(_rows_path(c) for c in groups)
    tail_free = [c for c in groups if c.x.shape[3] % 4 == 0]
    assert len(tail_free) >= len(TAIL_FREE)


@pytest.fixture(scope="module", params=("dsp", "dsp_general"))
def driver(request: pytest.FixtureRequest) -> Iterator[Driver]:
    with Driver(build_driver(request.param)) as d:
        yield d


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_rows_path_records_match_reference_on_host(driver: Driver) -> None:
    for case in CASES:
        problem = check_result(case, driver.run(case))
        assert problem is None, f"{describe(case)} [{driver.build.variant}]: {problem}"


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                    or shutil.which("qemu-system-arm") is None,
                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
def test_rows_path_records_match_reference_on_cortex_m4(kernel_fw_root: Path) -> None:
    assert all(fits_small_firmware(c) for c in CASES)
    fw = build_firmware("mps2-an386", kernel_fw_root)
    run = run_cases(fw, CASES, interleaved=True)
    problems = [f"{describe(c)}: {p}" for c, r in zip(CASES, run.results, strict=True)
                if (p := check_result(c, r)) is not None]
    assert not problems, "\n".join(problems[:10])
