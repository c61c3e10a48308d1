"""Issue 14's pointwise paths for few output channels (th_conv_1x1_s8, CONV1X1_FEW: Cout <= 8,
and CONV1X1_FEW16: Cout 9-16 with Cin not a multiple of 4, the weights widened once per call
into the fast scratch, th_conv_1x1_s8_scratch_size_fast) and for one output pixel
(CONV1X1_ONE: any Cout, the int8 weights read once, four channels per input word).

The cases cover every Cout 1..16 (one tile of 1-4 channels, or one to three tiles of four and
a last one of 1-4), every Cin % 4 (the last input word read at Cin - 4 with its repeated
lanes weighted 0) from the minimum Cin 4 up, strides 1-3, two batches, activation clamps, no
bias, input offsets at both ends, in place (rule (b): a pixel's first tiles wait in a stash
until the last has read the pixel), and shifts outside the fast range (CONV1X1_FEW is then
refused and the old paths run; CONV1X1_ONE requantizes such channels exactly); one output
pixel with Cout 1-40 (tiles of four, then the last 1-3 channels in one pass), strided from a
larger input, in place, and with accumulators about +-2^29 (CONV1X1_ONE takes the fast
requantization where its own |acc| < 2^29, exact otherwise). Each runs with the fast scratch
and without it, as CONV_1X1 and through th_conv_s8 (CONV), against the NumPy reference: on
the host (ASan/UBSan; portable, emulated DSP and the build without optional paths) and one
batch on QEMU mps2-an386 (Cortex-M4, the native DSP build).
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import ConvCase, Op, check_result
from kernels.harness import Driver, build_driver
from kernels.target import build_firmware, fits_small_firmware, run_cases
from tinyhost.arith.conv import ConvParams
from tinyhost.arith.fixedpoint import quantize_multiplier

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")

CIN = [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 27, 28, 31, 33, 57, 66, 103]


def few_case(rng: np.random.Generator, i: int) -> ConvCase:
    cout = 1 + i % 16
    cin = CIN[(i // 8 * 5 + i) % len(CIN)]
    stride = (1, 1) if i % 4 else (1 + i % 3, 2 + (i // 4) % 2)
    batches = 2 if i % 11 == 5 else 1
    in_h, in_w = int(rng.integers(1, 7)), int(rng.integers(1, 9))
    if i % 6 == 3:  # one output pixel (CONV1X1_ONE), any Cout
        cout, batches = int(rng.integers(1, 41)), 1
        if i % 12 == 9:  # strided from a larger input
            stride, in_h, in_w = (2, 3), int(rng.integers(1, 3)), int(rng.integers(2, 4))
        else:
            in_h, in_w = 1, 1
    out_h, out_w = (in_h - 1) // stride[0] + 1, (in_w - 1) // stride[1] + 1
    mult, shift = np.empty(cout, np.int32), np.empty(cout, np.int32)
    for c in range(cout):
        mult[c], shift[c] = quantize_multiplier(float(rng.uniform(0.3, 3.0)) /
                                                (np.sqrt(cin) * 7000))
    if i % 13 == 7:  # outside the fast range: the path is refused
        shift[int(rng.integers(cout))] = int(rng.choice([0, -23]))
    clamp = i % 5 == 2
    p = ConvParams(input_offset=int(rng.choice([-127, 128, int(rng.integers(-127, 129))])),
                   output_offset=int(rng.integers(-128, 128)), out_multiplier=mult,
                   out_shift=shift, act_min=-100 if clamp else -128, act_max=90 if clamp else 127,
                   stride_h=stride[0], stride_w=stride[1], dilation_h=1, dilation_w=1,
                   pad_top=0, pad_left=0, pad_bottom=0, pad_right=0)
    x = rng.integers(-128, 128, (batches, in_h, in_w, cin)).astype(np.int8)
    w = rng.integers(-127, 128, (cout, 1, 1, cin)).astype(np.int8)
    bias = None if i % 9 == 4 else rng.integers(-20000, 20000, cout).astype(np.int32)
    if i % 30 == 3:  # one pixel, |acc| about 2^29: CONV1X1_ONE's fast/exact choice per channel
        for c in range(cout):
            mult[c], shift[c] = quantize_multiplier(float(rng.uniform(1.2e-7, 2.3e-7)))
        edge = rng.integers(2**29 - 300_000, 2**29 + 300_000, cout)
        bias = (edge * rng.choice([-1, 1], cout)).astype(np.int32)
    return ConvCase(Op.CONV_1X1 if i % 2 else Op.CONV, x, w, bias, p,
                    (batches, out_h, out_w, cout),
                    in_place=i % 12 in (1, 3, 4, 7, 10) and stride == (1, 1) and cout <= cin,
                    fast_scratch=i % 7 != 6)


def few_cases(seed: int, count: int) -> list[ConvCase]:
    rng = np.random.default_rng(seed)
    return [few_case(rng, i) for i in range(count)]


def test_cases_reach_the_branches() -> None:
    cases = few_cases(14, 240)
    couts = {c.out_shape[3] for c in cases if c.fast_scratch}
    assert couts >= set(range(1, 17))
    assert {c.x.shape[3] % 4 for c in cases if c.fast_scratch} == {0, 1, 2, 3}
    assert any(c.in_place and c.out_shape[3] > 4 for c in cases)
    wide = [c for c in cases if c.fast_scratch and c.out_shape[3] > 8 and c.x.shape[3] % 4]
    assert {c.out_shape[3] for c in wide} >= set(range(9, 17))
    assert any(c.in_place for c in wide) and any(c.p.stride_w > 1 for c in wide)
    assert any(c.x.shape[0] == 2 for c in cases)
    assert any(c.bias is None for c in cases) and any(c.p.act_min > -128 for c in cases)
    assert any(not c.fast_scratch for c in cases)
    one = [c for c in cases if c.out_shape[:3] == (1, 1, 1)]
    assert {c.out_shape[3] % 4 for c in one if c.out_shape[3] > 4} == {0, 1, 2, 3}
    assert {(c.x.shape[3] + 3) // 4 % 2 for c in one} == {0, 1}  # odd and even word counts
    assert any(c.in_place for c in one) and any(c.x.shape[2] > 1 for c in one)
    edge = [c for c in one if c.bias is not None and np.abs(c.bias).max() > 2**29 - 300_000]
    assert any(c.p.act_min == -128 for c in edge)


@pytest.mark.parametrize("variant", ["portable", "dsp", "dsp_general"])
def test_few_output_channels_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in few_cases(14, 240):
            problem = check_result(case, driver.run(case))
            assert problem is None, f"[{variant}] {case.x.shape}->{case.out_shape}: {problem}"


def test_few_output_channels_on_cortex_m4(kernel_fw_root: Path) -> None:
    cases = [c for c in few_cases(15, 160) if fits_small_firmware(c)]
    cases.append(replace(cases[0], fast_scratch=True))
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases, interleaved=True)
    for case, result in zip(cases, run.results, strict=True):
        problem = check_result(case, result)
        assert problem is None, f"{case.x.shape}->{case.out_shape}: {problem}"


def few4_cases(seed: int, count: int) -> list[ConvCase]:
    """Cout 4 (CONV1X1_FEW4 on the native DSP build: one assembly loop per pixel): Cin 4-40
    (the loop's word count nw - 1 from 0, refused, to 9; every Cin % 4 for the last word at
    Cin - 4), rows of one or more pixels with strides 1-3 in each direction, two batches, in
    place, no bias, input offsets at both ends; a clamp (refused: few_run4) now and then."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(count):
        cin = 4 + i % 37
        stride = (1 + i % 3, 1 + (i // 3) % 3)
        batches = 2 if i % 7 == 3 else 1
        in_h, in_w = int(rng.integers(1, 8)), int(rng.integers(2, 10))
        out_h, out_w = (in_h - 1) // stride[0] + 1, (in_w - 1) // stride[1] + 1
        x = rng.integers(-128, 128, (batches, in_h, in_w, cin)).astype(np.int8)
        w = rng.integers(-127, 128, (4, 1, 1, cin)).astype(np.int8)
        mult, shift = np.empty(4, np.int32), np.empty(4, np.int32)
        for c in range(4):
            mult[c], shift[c] = quantize_multiplier(float(rng.uniform(0.3, 3.0)) /
                                                    (np.sqrt(cin) * 7000))
        clamp = i % 9 == 4
        p = ConvParams(input_offset=int(rng.choice([-127, 128, int(rng.integers(-127, 129))])),
                       output_offset=int(rng.integers(-128, 128)), out_multiplier=mult,
                       out_shift=shift, act_min=-100 if clamp else -128,
                       act_max=90 if clamp else 127, stride_h=stride[0], stride_w=stride[1],
                       dilation_h=1, dilation_w=1, pad_top=0, pad_left=0, pad_bottom=0,
                       pad_right=0)
        bias = None if i % 8 == 5 else rng.integers(-20000, 20000, 4).astype(np.int32)
        cases.append(ConvCase(Op.CONV_1X1 if i % 2 else Op.CONV, x, w, bias, p,
                              (batches, out_h, out_w, 4),
                              in_place=i % 5 == 1 and stride == (1, 1), fast_scratch=True))
    return cases


def test_few4_cases_reach_the_branches() -> None:
    cases = few4_cases(4, 48)
    assert {c.x.shape[3] % 4 for c in cases if c.x.shape[3] > 4} == {0, 1, 2, 3}
    assert {(c.x.shape[3] + 3) // 4 - 1 for c in cases} >= set(range(10))
    assert any(c.in_place for c in cases) and any(c.x.shape[0] == 2 for c in cases)
    assert any(c.out_shape[1] > 1 and c.out_shape[2] > 1 and c.p.stride_w > 1 for c in cases)
    assert any(c.out_shape[2] == 1 for c in cases) and any(c.bias is None for c in cases)
    assert any(c.p.act_min > -128 for c in cases)


def test_few4_on_the_host() -> None:
    with Driver(build_driver("dsp")) as driver:
        for case in few4_cases(4, 48):
            problem = check_result(case, driver.run(case))
            assert problem is None, f"{case.x.shape}->{case.out_shape}: {problem}"


def test_few4_on_cortex_m4(kernel_fw_root: Path) -> None:
    cases = few4_cases(5, 48)
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases, interleaved=True)
    for case, result in zip(cases, run.results, strict=True):
        problem = check_result(case, result)
        assert problem is None, f"{case.x.shape}->{case.out_shape}: {problem}"
