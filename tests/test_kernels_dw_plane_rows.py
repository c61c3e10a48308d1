"""The general depthwise's plane path's row kernels of issue 14 against the NumPy reference, on
the host (DSP modelled in C, under ASan and UBSan) and in one QEMU Cortex-M4 run: unit stride
along the rows (kernels specialised for S = 1, whose blocks of four outputs share their
overlapping window loads) and blocks of four across dilation phases (several phases whose
outputs are not adjacent: short phase rows still computed four outputs at a time).

Random 2-D filters of 15 or more taps (so that the plane path applies) with stride 1 along at
least one axis, every tap-pair count 1-8 and beyond, dilation phases, "same" and "valid"
padding (borders on every side), odd channel counts, row lengths that leave 0-3 outputs after
the blocks of four, with an activation clamp (the one-output-at-a-time mode) and in place;
then strides 2-3 with dilations 2-3 along the rows (the blocks across phases); then filters
shorter across the rows than the stride (only the rows read are staged); then the flat blocks'
edges (channels of 1-3 outputs, multipliers 2-3); then filters one tap across on the rows path
(one-input-row bands); then filters two taps across taken by the rows path before the plane
path (DW_ROWS_KA2). The default build runs the flat blocks (DW_PLANE_FLAT), the build with
every optional path left out the row kernels.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import ConvCase, Op, mismatches
from kernels.harness import Driver, build_driver
from kernels.sweep import _conv_case, describe
from kernels.target import build_firmware, fits_small_firmware, run_cases
from tinyhost.plan.scratch import dw_plane_scratch, dw_rows_ka2


def _cases() -> list[ConvCase]:
    rng = np.random.default_rng(1413)
    cases: list[ConvCase] = []
    kbs = list(range(2, 19))  # tap pairs 1 .. 9 along the rows
    while len(cases) < 40:
        kb = kbs[len(cases) % len(kbs)]
        ka = max(int(rng.integers(2, 8)), -(-15 // kb))  # 15 or more taps
        k = (ka, kb) if rng.integers(0, 2) else (kb, ka)
        s_other = int(rng.integers(1, 4))
        stride = (s_other, 1) if k[1] >= k[0] else (1, s_other)
        dilation = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        span = [(k[i] - 1) * dilation[i] + 1 for i in range(2)]
        hw = (span[0] + int(rng.integers(0, 9)), span[1] + int(rng.integers(0, 9)))
        cin = int(rng.choice([1, 3, 5, 7, 9]))
        case = _conv_case(rng, Op.DW, hw, cin, cin, k, stride, dilation, 1)
        if case is None or not fits_small_firmware(case):
            continue
        if dw_plane_scratch(k, case.out_shape[1:3], stride, dilation, 1) == 0:
            continue
        if len(cases) % 5 == 1:
            case = case.clamped()
        elif len(cases) % 5 == 2:
            case = dataclasses.replace(case, in_place=True)
        cases.append(case)
    # Strides and dilations along the rows with no common factor: blocks across the phases.
    across = [((12, 13), 10, (5, 9), (2, 2), (3, 3)), ((9, 20), 3, (3, 5), (1, 2), (1, 3)),
              ((15, 11), 1, (4, 4), (3, 2), (2, 3)), ((8, 17), 7, (2, 8), (2, 3), (1, 2)),
              ((13, 9), 5, (9, 2), (3, 1), (2, 1))]
    for i, (hw, cin, k, stride, dilation) in enumerate(across):
        case = None
        while case is None:
            case = _conv_case(rng, Op.DW, hw, cin, cin, k, stride, dilation, 1)
        assert dw_plane_scratch(k, case.out_shape[1:3], stride, dilation, 1) > 0
        if i == 1:
            case = case.clamped()
        cases += [case, dataclasses.replace(case, in_place=True)]
    # Filters shorter than the stride across the rows (rows between their spans never read,
    # never staged), in either frame, C = 1 included.
    apart = [((19, 23), 5, (2, 8), (3, 1), (1, 1)), ((20, 17), 3, (2, 9), (3, 2), (1, 1)),
             ((25, 14), 1, (2, 10), (3, 1), (1, 1)), ((16, 21), 7, (8, 2), (1, 3), (1, 1)),
             ((22, 18), 4, (2, 12), (3, 2), (1, 2)), ((30, 12), 6, (3, 5), (4, 1), (1, 1))]
    for i, (hw, cin, k, stride, dilation) in enumerate(apart):
        for variant in range(2):
            case = None
            while case is None:
                case = _conv_case(rng, Op.DW, hw, cin, cin, k, stride, dilation, 1)
            assert dw_plane_scratch(k, case.out_shape[1:3], stride, dilation, 1) > 0
            if variant == 1:
                case = dataclasses.replace(case, in_place=True) if i % 2 else case.clamped()
            cases.append(case)
    # The flat blocks (path DW_PLANE_FLAT: a channel's outputs in blocks of four whatever
    # rows they fall in): channels of 1-3 outputs (one partial block), multipliers 2-3 (17 or
    # more taps: not the multiplier path), unit-stride blocks split by a row end, either frame.
    flat = [((5, 9), 3, (5, 9), (5, 9), (1, 1), 1), ((6, 12), 2, (3, 6), (3, 5), (1, 1), 1),
            ((7, 10), 1, (4, 5), (4, 4), (1, 1), 3), ((13, 9), 3, (8, 4), (1, 2), (1, 1), 2),
            ((9, 14), 5, (3, 6), (2, 1), (2, 1), 2), ((10, 11), 4, (5, 4), (1, 1), (1, 1), 3),
            ((17, 6), 3, (9, 2), (1, 2), (2, 1), 1)]
    for i, (hw, cin, k, stride, dilation, mult) in enumerate(flat):
        case = None
        while case is None:
            case = _conv_case(rng, Op.DW, hw, cin, cin * mult, k, stride, dilation, mult)
        assert dw_plane_scratch(k, case.out_shape[1:3], stride, dilation, mult) > 0
        if i % 3 == 1:
            case = case.clamped()
        elif i % 3 == 2 and mult == 1:
            case = dataclasses.replace(case, in_place=True)
        cases.append(case)
    # The rows path's one-input-row bands (a filter one tap across, one phase: stage_line),
    # one and four channels per pass (C 37: a tail of one), "same" and "valid", in place.
    lines = [((43, 29), 3, (1, 12), (3, 2)), ((4, 48), 37, (1, 9), (2, 3)),
             ((41, 15), 6, (9, 1), (2, 1)), ((9, 30), 5, (1, 11), (2, 1))]
    for i, (hw, cin, k, stride) in enumerate(lines):
        case = None
        while case is None:
            case = _conv_case(rng, Op.DW, hw, cin, cin, k, stride, (1, 1), 1)
        cases += [case, dataclasses.replace(case, in_place=True) if i % 2 else
                  case.clamped()]
    return cases + _ka2_cases(rng)


def _ka2_cases(rng: np.random.Generator) -> list[ConvCase]:
    """Path DW_ROWS_KA2: filters two taps across in the rows path's frame where the plane path
    also applies (bands pairing the two rows; stride 2 kernels of 9-16 pairs and any), "same"
    padding that leaves one of an output row's two input rows outside (gather_pad: first and
    second row, four channels a pass and a tail of 1-3), 0-3 outputs after the blocks, every
    phase count, a clamp (one output at a time) and in place (the plane path instead)."""
    cases: list[ConvCase] = []
    kbs = [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 20]
    while len(cases) < 22:
        kb = kbs[len(cases) % len(kbs)]
        k = (2, kb) if rng.integers(0, 2) else (kb, 2)
        a = 0 if k[0] == 2 else 1  # the axis across (two taps)
        stride, dilation = [1, 1], [1, 1]
        stride[a] = int(rng.integers(1, 4))
        dilation[a] = int(rng.integers(1, 3))
        stride[1 - a] = int(rng.integers(1, 4))
        dilation[1 - a] = int(rng.integers(1, 3))
        span = [(k[i] - 1) * dilation[i] + 1 for i in range(2)]
        hw = (span[0] + int(rng.integers(0, 12)), span[1] + int(rng.integers(0, 12)))
        cin = int(rng.choice([1, 2, 3, 4, 5, 6, 7, 9]))
        case = _conv_case(rng, Op.DW, hw, cin, cin, k, tuple(stride), tuple(dilation), 1)
        if case is None or not fits_small_firmware(case) or not dw_rows_ka2(
                k, case.out_shape[1:3], tuple(stride), tuple(dilation), 1):
            continue
        if len(cases) % 6 == 1:
            case = case.clamped()
        elif len(cases) % 6 == 4:
            case = dataclasses.replace(case, in_place=True)
        cases.append(case)
    # The target sweep shape and one row outside on either side (seed 0, 39x7x17).
    for hw, cin, k, stride, dilation in [((39, 7), 17, (11, 2), (1, 3), (2, 2)),
                                        ((8, 19), 14, (2, 15), (3, 2), (2, 2)),
                                        ((30, 4), 6, (13, 2), (2, 2), (2, 1))]:
        case = None
        while case is None:
            case = _conv_case(rng, Op.DW, hw, cin, cin, k, stride, dilation, 1)
        assert dw_rows_ka2(k, case.out_shape[1:3], stride, dilation, 1)
        cases.append(case)
    return cases


CASES = _cases()


def test_cases_cover_the_unit_stride_kernels() -> None:
    """Every tap-pair count 1-8 (each its own kernel) and a longer one, tails of 0-3 outputs."""
    pairs = {(c.w.shape[2] + 1) // 2 for c in CASES} | {(c.w.shape[1] + 1) // 2 for c in CASES}
    assert set(range(1, 10)) <= pairs
    tails = {c.out_shape[2] % 4 for c in CASES} | {c.out_shape[1] % 4 for c in CASES}
    assert tails == {0, 1, 2, 3}


@pytest.fixture(scope="module", params=("dsp", "dsp_general"))
def driver(request: pytest.FixtureRequest) -> Iterator[Driver]:
    with Driver(build_driver(request.param)) as d:
        yield d


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_plane_row_kernels_match_reference_on_host(driver: Driver) -> None:
    results = [driver.run(case) for case in CASES]
    problems = mismatches(CASES, results, lambda c: f"{describe(c)} in place {c.in_place}")
    assert not problems, f"[{driver.build.variant}] " + "\n".join(problems[:10])


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                    or shutil.which("qemu-system-arm") is None,
                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
def test_plane_row_kernels_match_reference_on_cortex_m4(kernel_fw_root: Path) -> None:
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), CASES, interleaved=True)
    problems = mismatches(CASES, run.results, describe)
    assert not problems, "\n".join(problems[:10])
