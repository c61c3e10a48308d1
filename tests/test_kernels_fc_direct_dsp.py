"""Issue 14's FULLY_CONNECTED block path and the few-channel conv quads, on the shapes they
branch on.

FULLY_CONNECTED (th_nn_fc_s8.c): every block of four channels goes through one dot loop
with the row's partial last word, then the fast requantization when the block's own
accumulators are below 2^29 in magnitude and (per channel) every shift is in [-16, -1],
else the exact one. The cases: input lengths 1..40 (every cin % 4) and a few longer, 1..13
and 16 / 21 outputs (every cout % 4), per tensor and per channel, shifts on both sides of
the fast ranges (-1, -16, -17, -22, -23, >= 0), clamps, two batches, and channels with zero
weights whose bias puts the accumulator exactly at the bound (2^29 - 2 .. 2^29 + 1, both
signs) or far past it (about 2^30 and 2^31, where the fast form would be wrong).
Conv with Cout 1..4 (th_nn_conv_direct_s8.c): interior quads with whole words and
a masked partial word per filter row, odd Cin, KxK / Kx1 / 1xK kernels, strides 1 and 2,
border pixels, rows too narrow for a quad, and pointwise layers at stride 1 taken as one
row. All against the NumPy reference: on the host (ASan/UBSan; portable, emulated DSP and
the build without specialized paths) and one batch on QEMU mps2-an386 (Cortex-M4: the
native DSP build and its assembly loops). The entry check refuses bad constants anywhere.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import ConvCase, FcCase, Op, check_result
from kernels.harness import Driver, build_driver
from kernels.layers import layer_case
from kernels.target import build_firmware, fits_small_firmware, run_cases
from tinyhost.arith.conv import FullyConnectedParams
from tinyhost.arith.fixedpoint import quantize_multiplier

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")

FC_IN = [*range(1, 41), 41, 64, 97, 130]
FC_OUT = [*range(1, 14), 16, 21]
# Shifts around the fast requantization's ranges (per channel [-16, -1], per tensor
# [-22, -1]); None: the multiplier's own (about -9 .. -14 here).
SHIFTS = [None, None, None, -1, -16, -17, -22, -23, 0, 2]
BOUND = 1 << 29


def _quant(rng: np.random.Generator, n: int, cin: int) -> tuple[np.ndarray, np.ndarray]:
    mult, shift = np.empty(n, np.int32), np.empty(n, np.int32)
    for c in range(n):
        mult[c], shift[c] = quantize_multiplier(
            float(rng.uniform(0.3, 3.0)) / (np.sqrt(cin) * 7000))
        forced = SHIFTS[int(rng.integers(len(SHIFTS)))]
        if forced is not None:
            shift[c] = forced
    return mult, shift


def fc_cases(seed: int, count: int) -> list[FcCase]:
    """FC cases over every cin % 4 and cout % 4; a third with zero-weight channels whose
    bias lands the accumulator at the fast bound."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        cin, cout = FC_IN[i % len(FC_IN)], FC_OUT[(i // 2) % len(FC_OUT)]
        per_channel = i % 2 == 1
        mult, shift = _quant(rng, cout if per_channel else 1, cin)
        w = rng.integers(-127, 128, (cout, cin)).astype(np.int8)
        bias = rng.integers(-20000, 20000, cout).astype(np.int32)
        if i % 3 == 0:
            for c in rng.choice(cout, size=min(cout, 2), replace=False):
                w[c] = 0
                # at the bound, or far past it (2 * acc overflows: the fast form is wrong)
                base = BOUND if i % 2 == 0 else int(rng.choice([1 << 30, (1 << 31) - 3]))
                bias[c] = (base + int(rng.integers(-2, 2))) * (1 if rng.random() < 0.5
                                                               else -1)
        p = FullyConnectedParams(
            input_offset=int(rng.integers(-127, 129)),
            filter_offset=0 if per_channel or i % 4 else int(rng.integers(-20, 21)),
            output_offset=int(rng.integers(-128, 128)), out_multiplier=mult, out_shift=shift,
            act_min=-128 if i % 5 else -100, act_max=127 if i % 5 else 90)
        x = rng.integers(-128, 128, (1 + i % 2, cin)).astype(np.int8)
        out.append(FcCase(Op.FC_PER_CHANNEL if per_channel else Op.FC, x, w,
                          None if i % 13 == 12 else bias, p))
    return out


# (hw, cin, cout, kernel, stride): few output channels, odd Cin, rows wide enough for
# interior quads (and some not).
CONV_SHAPES = [
    ((9, 14), 3, 1, 5, 1), ((7, 13), 5, 2, (3, 4), 1), ((6, 21), 7, 3, (2, 5), 2),
    ((12, 11), 31, 1, (6, 5), 1), ((5, 17), 9, 2, (4, 1), 1), ((8, 19), 13, 3, (1, 6), 1),
    ((10, 9), 1, 1, 7, 2), ((4, 30), 6, 2, 3, 1), ((3, 5), 11, 1, (3, 2), 1),
    ((11, 24), 2, 1, (1, 9), 1), ((7, 10), 18, 3, (3, 3), 2), ((6, 16), 4, 1, (2, 2), 1),
    # pointwise: Cout 4 with an odd Cin, stride 1 (the image taken as one row) and 2; a
    # narrow image at stride 1 with Cout 2
    ((5, 7), 25, 4, 1, 1), ((8, 9), 13, 4, 1, 2), ((3, 2), 7, 2, 1, 1), ((3, 3), 9, 4, 1, 1),
]


def conv_cases() -> list[ConvCase]:
    return [layer_case(Op.CONV, hw, cin, cout, k, s, seed=17 * i + cin)
            for i, (hw, cin, cout, k, s) in enumerate(CONV_SHAPES)]


def test_cases_reach_the_branches() -> None:
    """The FC mix has every cin % 4 and cout % 4, shifts on both sides of the fast ranges,
    and accumulators on both sides of the bound; the conv shapes have Cout 1..3 and rows
    with four interior pixels or more."""
    cases = fc_cases(1, 180)
    assert {c.w.shape[1] % 4 for c in cases} == {0, 1, 2, 3}
    assert {c.w.shape[0] % 4 for c in cases} == {0, 1, 2, 3}
    shifts = {int(s) for c in cases for s in c.p.out_shift}
    assert {-1, -16, -17, -22, -23, 0} <= shifts
    at_bound = {int(b) for c in cases if c.bias is not None for b in c.bias
                if abs(int(b)) >= BOUND - 2}
    assert {BOUND - 2, BOUND - 1, BOUND, BOUND + 1, -BOUND, -BOUND + 1} <= at_bound
    assert any(abs(b) >= 1 << 30 for b in at_bound)
    convs = conv_cases()
    assert {c.out_shape[3] for c in convs} == {1, 2, 3, 4}
    assert any(c.out_shape[2] >= 8 for c in convs)


@pytest.mark.parametrize("variant", ["portable", "dsp", "dsp_general"])
def test_fc_and_few_channel_conv_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in [*fc_cases(1, 180), *conv_cases()]:
            problem = check_result(case, driver.run(case))
            assert problem is None, f"{case.op.name} [{variant}] {case.w.shape}: {problem}"


def test_fc_refuses_a_bad_multiplier_or_shift_at_any_channel() -> None:
    """The entry check takes the per-channel constants two at a time: a negative multiplier
    or a shift outside [-31, 30] is refused wherever it is (even, odd, last channel)."""
    rng = np.random.default_rng(5)
    with Driver(build_driver("dsp")) as driver:
        for cout in (1, 4, 5):
            x = rng.integers(-128, 128, (1, 6)).astype(np.int8)
            w = rng.integers(-127, 128, (cout, 6)).astype(np.int8)
            mult, shift = np.full(cout, 1 << 30, np.int32), np.full(cout, -8, np.int32)
            good = FcCase(Op.FC_PER_CHANNEL, x, w, None, FullyConnectedParams(
                0, 0, 0, mult, shift, -128, 127))
            assert check_result(good, driver.run(good)) is None
            for c in sorted({0, cout // 2, cout - 1}):
                for m, sh in ((-1, -8), (1 << 30, -32), (1 << 30, 31)):
                    bm, bs = mult.copy(), shift.copy()
                    bm[c], bs[c] = m, sh
                    bad = FcCase(Op.FC_PER_CHANNEL, x, w, None, FullyConnectedParams(
                        0, 0, 0, bm, bs, -128, 127))
                    assert driver.run(bad).status == 1, (cout, c, m, sh)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                    or shutil.which("qemu-system-arm") is None,
                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
def test_fc_and_few_channel_conv_on_cortex_m4(kernel_fw_root: Path) -> None:
    cases = [c for c in [*fc_cases(3, 180), *conv_cases()] if fits_small_firmware(c)]
    assert len(cases) >= 180
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases, interleaved=True)
    problems = [f"{c.op.name} {c.w.shape}: {p}"
                for c, r in zip(cases, run.results, strict=True)
                if (p := check_result(c, r)) is not None]  # fmt: skip
    assert not problems, f"{len(problems)} of {len(cases)} mismatch:\n" + "\n".join(
        problems[:8])
