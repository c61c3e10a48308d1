"""th_dw_conv_mult_s8 (depthwise, channel multiplier >= 2 up to 16 taps: path DW_MULT of
th_dw_conv_general_s8) against the NumPy reference, on the host under
ASan/UBSan in the DSP build with the instructions modelled in C. Randomized shapes over the
path's range: every filter of 1-16 taps (odd counts end in a zero-weight pair), strides and
dilations, padding on each side alone (windows partly outside on the top, bottom, left or
right only), 1x1 outputs, one or several input channels and batches; filters of 1-4 taps
(the staged-row loop) with multipliers 2-32 on 1-8 input channels, odd and even output
widths, 1x1 filters read straight from the input; and per case its requantization modes:
fast, fast with an activation clamp, and exact (shift >= 0, or a bias too large for the fast
bound)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import ConvCase, Op, check_result
from kernels.harness import Driver, build_driver
from kernels.sweep import describe
from kernels.target import build_firmware, fits_small_firmware, run_cases
from tinyhost.arith.conv import ConvParams
from tinyhost.plan.scratch import dw_general_scratch, dw_mult_applies

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


def _case(rng: np.random.Generator, hw: tuple[int, int], cin: int, mult: int,
          k: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int],
          pads: tuple[int, int, int, int], batches: int = 1) -> ConvCase:
    pt, pb, pl, pr = pads
    oh = (hw[0] + pt + pb - (k[0] - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (hw[1] + pl + pr - (k[1] - 1) * dilation[1] - 1) // stride[1] + 1
    assert oh >= 1 and ow >= 1
    cout = cin * mult
    mult_q = rng.integers(1 << 30, (1 << 31) - 1, cout, dtype=np.int64).astype(np.int32)
    shift = rng.integers(-10, -6, cout, endpoint=True).astype(np.int32)
    p = ConvParams(input_offset=int(rng.integers(-127, 129)),
                   output_offset=int(rng.integers(-128, 128)),
                   out_multiplier=mult_q, out_shift=shift, act_min=-128, act_max=127,
                   stride_h=stride[0], stride_w=stride[1], dilation_h=dilation[0],
                   dilation_w=dilation[1], pad_top=pt, pad_left=pl, pad_bottom=pb,
                   pad_right=pr, ch_mult=mult)
    x = rng.integers(-128, 128, (batches, *hw, cin)).astype(np.int8)
    w = rng.integers(-127, 128, (1, *k, cout)).astype(np.int8)
    bias = rng.integers(-20000, 20000, cout).astype(np.int32)
    return ConvCase(Op.DW, x, w, bias, p, (batches, oh, ow, cout), fast_scratch=True)


def _cases() -> list[ConvCase]:
    rng = np.random.default_rng(1414)
    cases = []
    # Each filter size of the path, random geometry.
    for taps in range(1, 17):
        ks = [(kh, taps // kh) for kh in range(1, taps + 1) if taps % kh == 0]
        k = ks[int(rng.integers(0, len(ks)))]
        stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        dilation = (1, 1) if rng.random() < 0.6 else (int(rng.integers(1, 3)),
                                                      int(rng.integers(1, 3)))
        span = ((k[0] - 1) * dilation[0] + 1, (k[1] - 1) * dilation[1] + 1)
        hw = (span[0] + int(rng.integers(0, 9)), span[1] + int(rng.integers(0, 9)))
        pads = tuple(int(rng.integers(0, s)) for s in (span[0], span[0], span[1], span[1]))
        cin = int(rng.integers(1, 4))
        mult = int(rng.integers(2, 33)) if cin == 1 else int(rng.integers(2, 9))
        cases.append(_case(rng, hw, cin, mult, k, stride, dilation, pads))  # type: ignore[arg-type]
    cases += _few_mult_3x3(rng)
    cases += _loop5(rng)
    cases += _plane_copies(rng)
    cases += _two_channels(rng)
    # Padding on one side only, 3x3 (windows outside on that side), then none at all.
    for pads in ((2, 0, 0, 0), (0, 2, 0, 0), (0, 0, 2, 0), (0, 0, 0, 2), (0, 0, 0, 0)):
        cases.append(_case(rng, (7, 6), 2, 8, (3, 3), (1, 1), (1, 1), pads))  # type: ignore[arg-type]
    # Minimum sizes: a 1x1 output from a window larger than the input, one input pixel.
    cases.append(_case(rng, (2, 2), 1, 9, (3, 3), (2, 2), (1, 1), (1, 0, 1, 0)))
    cases.append(_case(rng, (1, 1), 3, 16, (1, 1), (1, 1), (1, 1), (0, 0, 0, 0)))
    # Two batches, a few channels.
    cases.append(_case(rng, (9, 8), 4, 16, (2, 2), (2, 2), (1, 1), (0, 1, 0, 1), batches=2))
    return [c for case in cases for c in _modes(case, big_bias=True)]


def _few_mult_3x3(rng: np.random.Generator) -> list[ConvCase]:
    """3 x 3 with multipliers 2-4 (the unrolled channels) and 5 (the channel loop) on 2-5
    input channels: strides 1 and 2, padding on each side alone and on all."""
    cases = []
    pads_list = ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (1, 1, 1, 1),
                 (0, 0, 0, 0))
    for i, pads in enumerate(pads_list):
        for mult in (2, 3, 4, 5):
            s = 1 + (i + mult) % 2
            hw = (int(rng.integers(3, 10)), int(rng.integers(3, 10)))
            cases.append(_case(rng, hw, 2 + (i + mult) % 4, mult, (3, 3), (s, s), (1, 1), pads))
    return cases


def _two_channels(rng: np.random.Generator) -> list[ConvCase]:
    """Two input channels, 3 x 3, multiplier 2 (taps read straight from the interleaved
    input, no plane copy): strides 1-3, row dilation 2, padding on each side alone, on all
    and none (rows of the pad row, border windows gathered), widths 3 (every window a
    border one) to 13, two batches; then one input channel in the exact requantization
    (the plane's loop before and after the direct one)."""
    cases = []
    pads_list = ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (1, 1, 1, 1),
                 (0, 0, 0, 0), (2, 2, 2, 2))
    for i, pads in enumerate(pads_list):
        for s in (1, 2, 3):
            dh = 2 if (i + s) % 3 == 0 else 1
            hw = (2 * dh + 1 + int(rng.integers(0, 8)), 3 + int(rng.integers(0, 11)))
            cases.append(_case(rng, hw, 2, 2, (3, 3), (s, s), (dh, 1), pads,
                               batches=1 + (i + s) % 2))
    for ch in (0, 2):  # the exact requantization on input channel 0, then on channel 1
        case = _case(rng, (7, 9), 2, 2, (3, 3), (2, 1), (1, 1), (1, 1, 1, 1))
        shift = case.p.out_shift.copy()
        shift[ch] = 1
        cases.append(dataclasses.replace(case, p=dataclasses.replace(case.p, out_shift=shift)))
    return cases


def _plane_copies(rng: np.random.Generator) -> list[ConvCase]:
    """The plane copy's loops: one input channel (words) and two (bytes 0 and 2 of word
    pairs: eight values a step, then four, then bytes) on rows of 4, 5, 8, 9, 13 and 17
    values; three channels (bytes) once."""
    cases = []
    for i, w in enumerate((4, 5, 8, 9, 13, 17)):
        cin = 1 + i % 2
        cases.append(_case(rng, (4 + i % 3, w), cin, 2 + i, (3, 3), (1, 1 + i % 2), (1, 1),
                           (1, 1, 1, 1)))
        cases.append(_case(rng, (5, w), 3 - cin, 3, (2, 3), (1, 1), (1, 1), (0, 0, 0, 0)))
    cases.append(_case(rng, (6, 11), 3, 2, (3, 3), (1, 1), (1, 1), (0, 1, 1, 0)))
    return cases


def _loop5(rng: np.random.Generator) -> list[ConvCase]:
    """Five tap pairs in the channel loop (two outputs per end check, an odd count one
    first): 3 x 3 with multipliers 5-8 and 13 on one or two input channels, 2 x 5 with 2
    and 3."""
    cases = []
    for i, (k, mult) in enumerate((((3, 3), 5), ((3, 3), 6), ((3, 3), 7), ((3, 3), 8),
                                   ((3, 3), 13), ((2, 5), 2), ((2, 5), 3))):
        s = 1 + i % 2
        hw = (int(rng.integers(3, 9)), int(rng.integers(5, 10)))
        cases.append(_case(rng, hw, 1 + i % 2, mult, k, (s, s), (1, 1), (1, 1, 1, 1)))
    return cases


def _modes(case: ConvCase, big_bias: bool) -> list[ConvCase]:
    """The case in its requantization modes: fast, fast with a clamp, exact (some channels'
    shift >= 0; all of them with a bias beyond the fast bound)."""
    p = case.p
    exact = np.where(np.arange(len(p.out_shift)) % 3 == 0, 1, p.out_shift).astype(np.int32)
    out = [case,
           dataclasses.replace(case, p=dataclasses.replace(p, act_min=-90, act_max=70)),
           dataclasses.replace(case, p=dataclasses.replace(p, out_shift=exact))]
    if big_bias:
        out.append(dataclasses.replace(case, bias=np.full_like(case.bias, 1 << 29)))
    return out


def test_dw_mult_path_matches_reference() -> None:
    cases = _cases()
    for case in cases:  # every case takes the path: its scratch is the records'
        _, kh, kw, _ = case.w.shape
        _, oh, ow, _ = case.out_shape
        p = case.p
        assert dw_mult_applies((kh, kw), p.ch_mult)
        ph = (oh - 1) * p.stride_h + (kh - 1) * p.dilation_h + 1
        pw = (ow - 1) * p.stride_w + (kw - 1) * p.dilation_w + 1
        kp = (kh * kw + 1) // 2
        records = 4 * p.ch_mult * (4 + kp)
        staged = 4 * kp * (ow + ow % 2) if kh * kw <= 4 else (ph * pw + 4 + 3) // 4 * 4
        assert dw_general_scratch(case.x.shape[1:3], (kh, kw), (oh, ow),
                                  (p.stride_h, p.stride_w), (p.dilation_h, p.dilation_w),
                                  p.ch_mult, True) == records + staged
    _run(cases)


def _run(cases: list[ConvCase]) -> None:
    with Driver(build_driver("dsp")) as driver:
        for case in cases:
            problem = check_result(case, driver.run(case))
            assert problem is None, f"{describe(case)}: {problem}"


def _small_cases() -> list[ConvCase]:
    """Filters of 1-4 taps (the staged-row loop), multipliers 2-32 on 1-8 input channels."""
    rng = np.random.default_rng(1415)
    cases = []
    shapes = [(1, 1), (1, 2), (2, 1), (1, 3), (3, 1), (2, 2), (1, 4), (4, 1)]
    for i in range(24):
        k = shapes[i % len(shapes)]
        stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        dilation = (1, 1) if rng.random() < 0.6 else (int(rng.integers(1, 4)),
                                                      int(rng.integers(1, 4)))
        span = ((k[0] - 1) * dilation[0] + 1, (k[1] - 1) * dilation[1] + 1)
        hw = (span[0] + int(rng.integers(0, 12)), span[1] + int(rng.integers(0, 12)))
        pads = tuple(int(rng.integers(0, s + 1)) for s in (span[0], span[0], span[1], span[1]))
        cin = 1 if i % 3 == 0 else int(rng.integers(2, 9))
        mult = int(rng.integers(2, 33)) if cin == 1 else int(rng.integers(2, 5))
        cases.append(_case(rng, hw, cin, mult, k, stride, dilation, pads))  # type: ignore[arg-type]
    # Padding on one side only (2x2, out_w odd and even), then one output column, one pixel.
    for pads in ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (0, 0, 0, 0)):
        cases.append(_case(rng, (6, 7), 3, 2, (2, 2), (1, 1), (1, 1), pads))
        cases.append(_case(rng, (5, 8), 1, 9, (2, 2), (1, 1), (1, 1), pads))
    cases.append(_case(rng, (7, 1), 2, 3, (2, 1), (1, 1), (1, 1), (0, 1, 0, 0)))
    cases.append(_case(rng, (1, 1), 1, 32, (2, 2), (1, 1), (1, 1), (1, 0, 0, 1)))
    cases.append(_case(rng, (9, 8), 4, 2, (2, 2), (2, 2), (1, 1), (0, 1, 0, 1), batches=2))
    cases += _one_by_one(rng)
    return [c for case in cases for c in _modes(case, big_bias=False)]


def _one_by_one(rng: np.random.Generator) -> list[ConvCase]:
    """1 x 1 filters without padding (the input streamed directly): the whole plane as one
    run (stride 1) with odd and even pixel counts, rows apart (strides, odd widths), one
    pixel, two batches."""
    shapes = (((5, 7), 3, 3, (1, 1)), ((6, 4), 2, 2, (1, 1)), ((7, 9), 4, 2, (2, 2)),
              ((5, 6), 1, 17, (1, 2)), ((6, 5), 5, 3, (2, 1)), ((1, 1), 2, 4, (1, 1)),
              ((3, 8), 1, 32, (3, 3)))
    cases = [_case(rng, hw, cin, mult, (1, 1), s, (1, 1), (0, 0, 0, 0))  # type: ignore[arg-type]
             for hw, cin, mult, s in shapes]
    cases.append(_case(rng, (4, 5), 3, 2, (1, 1), (1, 1), (1, 1), (0, 0, 0, 0), batches=2))
    return cases


def test_dw_mult_small_filters_match_reference() -> None:
    cases = _small_cases()
    for case in cases:  # every case takes the path's staged-row loop
        _, kh, kw, _ = case.w.shape
        assert kh * kw <= 4 and dw_mult_applies((kh, kw), case.p.ch_mult)
    _run(cases)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                    or shutil.which("qemu-system-arm") is None,
                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
def test_dw_mult_small_filters_on_cortex_m4(kernel_fw_root: Path) -> None:
    """The staged-row loop's assembly (pairs of pixels, an odd last pixel paired with the
    next row's first), the 1x1 loop on the input, the 3 x 3 plane loop with multipliers 2-5
    (unrolled channels), the five-pair channel loop (odd and even counts), the plane
    copies and the two-channel row loop on QEMU mps2-an386, one firmware run."""
    rng = np.random.default_rng(1416)
    few = [c for case in _few_mult_3x3(rng) + _loop5(rng) + _plane_copies(rng)
           + _two_channels(rng) for c in _modes(case, big_bias=False)]
    cases = [c for c in _small_cases() + few if fits_small_firmware(c)]
    assert len(cases) > 150
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases, interleaved=True)
    for case, result in zip(cases, run.results, strict=True):
        problem = check_result(case, result)
        assert problem is None, f"{describe(case)}: {problem}"
