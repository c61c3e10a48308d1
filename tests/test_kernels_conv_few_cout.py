"""Issue 14's Cout-2 and Cout-3 conv (th_nn_conv_few_cout_s8, path CONV_FEW_COUT): given
th_conv_general_s8_scratch_size_fast, every channel's weights widened to int16 and the input
widened once for every channel, interior pixels in runs of up to sixteen, filter rows of 1-4
words and more (the asm's word loop of four entered part-way), windows cut by the left or
right edge (or whose last word would pass the input's end) staged with the padding value.

Cases: Cout 3 and 2 (and Cout 1 beside them, which keeps the direct and im2col paths), Cin 1-13
and 31 (every Cin % 4; Cin < 4 stays with the few-input-channel path), filters 1-7 x 1-7
(1x1 goes to its own kernel;
3x3 with dilation 1 through th_conv_3x3_s8), strides 1-3, dilation.h 1-3 and every seventh
dilation.w 2 (not this path), padding drawn per side up to windows wholly in the padding,
outputs 1-40 wide (runs of sixteen and partial runs), VALID layers whose last window ends at the
input's last byte (the staged read past the end), two batches, clamps, no bias, input offsets
at both ends; three in four with the fast scratch (the path), the others with the ordinary
scratch (the paths as before), through th_conv_s8, against the NumPy reference: on the host
(ASan/UBSan; portable, emulated DSP and the build without optional paths) and on QEMU
mps2-an386 (Cortex-M4, the native DSP build's asm).
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


def takes_path(c: ConvCase) -> bool:
    """The case runs th_nn_conv_few_cout_s8 (th_nn_conv_few_cout_scratch > 0, the fast
    scratch given; th_conv_s8 picks the general or the 3x3 variant, both take it)."""
    kh, kw, cin = c.w.shape[1:]
    return (c.fast_scratch and c.out_shape[3] in (2, 3) and cin >= 4 and c.p.dilation_w == 1
            and (kh, kw) != (1, 1))


def few_case(rng: np.random.Generator, i: int) -> ConvCase:
    cout = 1 if i % 6 == 5 else (2 if i % 5 in (1, 3) else 3)
    cin = CIN[i % len(CIN)]
    kh, kw = int(rng.integers(1, 8)), int(rng.integers(1, 8))
    if (kh, kw) == (1, 1):
        kw = 2
    s = 1 + (i // 2) % 3
    dil = (1 + (i // 5) % 3, 2 if i % 7 == 3 else 1)
    if i % 13 == 5:  # th_conv_3x3_s8
        kh, kw, dil = 3, 3, (1, 1)
    eff = ((kh - 1) * dil[0] + 1, (kw - 1) * dil[1] + 1)
    valid = i % 4 == 0  # no padding: the last window at the input's end
    pads = [int(rng.integers(0, eff[0] + 1)), int(rng.integers(0, eff[1] + 2)),
            int(rng.integers(0, eff[0] + 1)), int(rng.integers(0, eff[1] + 2))]
    if valid:
        pads = [0, 0, 0, 0]
    while True:
        in_h, in_w = int(rng.integers(1, eff[0] + 6)), int(rng.integers(1, 48))
        out_h = (in_h + pads[0] + pads[2] - eff[0]) // s + 1
        out_w = (in_w + pads[1] + pads[3] - eff[1]) // s + 1
        if valid and out_h >= 1 and out_w >= 1:  # the last window ends at the last column
            in_w = (out_w - 1) * s + eff[1]
            in_h = (out_h - 1) * s + eff[0]
        if out_h >= 1 and 1 <= out_w <= (40 if i % 3 == 0 else 20):
            break
    batches = 2 if i % 9 == 4 else 1
    return scaled_conv_case(rng, i, (batches, in_h, in_w, cin), (cout, kh, kw, cin),
                            (batches, out_h, out_w), s, dil, pads, fast_scratch=i % 4 != 3,
                            no_bias_every=11)


def few_cases(seed: int, count: int) -> list[ConvCase]:
    rng = np.random.default_rng(seed)
    return [few_case(rng, i) for i in range(count)]


def test_cases_reach_the_branches() -> None:
    cases = few_cases(14, 240)
    taken = [c for c in cases if takes_path(c)]
    assert len(taken) > 80
    assert {c.x.shape[3] % 4 for c in taken} == {0, 1, 2, 3}
    assert {c.w.shape[2] * c.x.shape[3] % 4 for c in taken} == {0, 1, 2, 3}  # row tails
    assert {c.p.stride_w for c in taken} == {1, 2, 3}
    assert {c.p.dilation_h for c in taken} == {1, 2, 3}
    assert sum(c.out_shape[2] > 16 for c in taken) > 10  # a run of sixteen and a partial run
    assert {c.out_shape[3] for c in taken} == {2, 3}
    assert {-(-c.w.shape[2] * c.x.shape[3] // 4) % 4 for c in taken} == {0, 1, 2, 3}  # entries
    for side in ("pad_top", "pad_left", "pad_bottom", "pad_right"):
        assert any(getattr(c.p, side) > 0 for c in taken), side
    assert any(c.p.pad_left >= c.w.shape[2] for c in taken)  # windows wholly in the padding
    assert any(c.p.pad_top >= (c.w.shape[1] - 1) * c.p.dilation_h + 1
               for c in taken)  # an output row with no filter row inside
    # VALID, a row tail: the last window's last word would read past the input (staged)
    assert sum(c.p.pad_right == 0 and c.p.pad_left == 0 and c.w.shape[2] * c.x.shape[3] % 4
               for c in taken) > 5
    assert any(c.x.shape[0] == 2 for c in taken) and any(c.bias is None for c in taken)
    assert any(c.p.act_min > -128 for c in taken) and any(c.p.act_min == -128 for c in taken)
    assert any(c.p.input_offset == 128 for c in taken) and any(c.p.input_offset == -127
                                                                 for c in taken)
    others = [c for c in cases if not takes_path(c)]
    assert any(c.out_shape[3] == 3 and not c.fast_scratch for c in others)
    assert any(c.out_shape[3] == 3 and c.p.dilation_w == 2 for c in others)
    assert any(c.out_shape[3] == 3 and c.x.shape[3] < 4 for c in others)
    assert {c.out_shape[3] for c in others} == {1, 2, 3}
    assert any(c.out_shape[3] == 2 and c.fast_scratch and c.x.shape[3] >= 4
               and c.p.dilation_w == 2 for c in others)
    assert sum(c.w.shape[1:3] == (3, 3) and c.p.dilation_h == 1 for c in taken) >= 2


@pytest.mark.parametrize("variant", ["portable", "dsp", "dsp_general"])
def test_few_cout_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in few_cases(14, 240):
            problem = check_result(case, driver.run(case))
            assert problem is None, f"[{variant}] {case.x.shape}->{case.out_shape}: {problem}"


def test_few_cout_on_cortex_m4(kernel_fw_root: Path) -> None:
    cases = [c for c in few_cases(15, 200) if fits_small_firmware(c)]
    assert sum(takes_path(c) for c in cases) > 60
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases, interleaved=True)
    for case, result in zip(cases, run.results, strict=True):
        problem = check_result(case, result)
        assert problem is None, f"{case.x.shape}->{case.out_shape}: {problem}"
