"""The int8 FULLY_CONNECTED kernels' path FC_SHORT (th_nn_fc_s8.c, issue 14): inputs of at
most 128 values (longer ones given th_fully_connected_s8_scratch_size_fast's scratch, the
widened row there), no filter offset, a bias and the fast requantization (per tensor: its shift;
per channel: every shift in [-16, -1], checked at entry) widen (x + input_offset) once per
batch row into int16 pairs (natively four chunks a pass, then two, one and the tail) and run
the whole blocks of four channels in one assembly loop (a C loop in builds without the native
DSP), a block failing the bound (|acc| >= 2^30) ending it so the general block loop takes
it and the rest.

The cases: every input length 1..65 and some up to 128, and 129 (past the path; every
cin % 4, odd and even chunk counts), outputs with every cout % 4 (the last channels' pass),
per tensor and per channel, clamped and whole activation ranges, one to three batches, a
huge bias in a middle block (|acc| >= 2^30: the bound fails mid-row; or |acc| just below
2^30: the bound holds at its ends, both signs), a per-channel shift of 0 or -20 in a
middle block (outside the fast range: path not taken), a per-tensor shift outside the fast range
(path not taken); and 129..517 with the fast scratch (8 outputs or more; fewer: none
given, the general path), every cin % 4 and chunk count % 8. Against the NumPy reference
on the host (ASan/UBSan; portable, emulated DSP and the build without optional paths) and
on QEMU mps2-an386 (Cortex-M4, the assembly loops: the clamped one (path FC_SHORT) and the
full-range one (FC_SHORT_FULL), and for inputs of at most 32 both in one pass of the dot
(FC_SHORT_ONE)). Also on the
M4: the per-channel entry check's native eight-channel pass (th_nn_check_fc_fast8) at its
edges, and the scalar checks folded into one word (each refused alone).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import FcCase, Op, check_result
from kernels.harness import Driver, build_driver
from kernels.target import build_firmware, fits_small_firmware, run_cases
from tinyhost.arith.conv import FullyConnectedParams
from tinyhost.arith.fixedpoint import quantize_multiplier

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


CINS = [*range(1, 66), 67, 90, 101, 126, 127, 128, 129]
# Past 128 with th_fully_connected_s8_scratch_size_fast's scratch: the widened row there
# (every cin % 4, chunk counts % 8 all met); cin % 5 == 0 with fewer than 8 outputs (no
# scratch: the general path).
LONG_CINS = [*range(129, 137), 139, 140, 141, 146, 151, 156, 177, 256, 257, 300, 517]


def short_cases(seed: int, cins: list[int] = CINS, fast: bool = False) -> list[FcCase]:
    """One case per input length of CINS, alternating per tensor and per channel; FAST: the
    kernel given its fast scratch."""
    rng = np.random.default_rng(seed)
    out = []
    for cin in cins:
        per_channel = cin % 2 == 0
        cout = 4 * int(rng.integers(2 if fast else 1, 7)) + cin % 4
        if fast and cin % 5 == 0:
            cout = 4 + cin % 4
        n = cout if per_channel else 1
        mult, shift = np.empty(n, np.int32), np.empty(n, np.int32)
        for c in range(n):
            mult[c], shift[c] = quantize_multiplier(
                float(rng.uniform(0.5, 2.0)) * 40 / (np.sqrt(cin) * 9500 + 17000))
        bias = rng.integers(-30000, 30000, cout).astype(np.int32)
        # |x + input_offset| * |w| <= 255 * 128 per input: the dot's bound
        dot = cin * 255 * 128
        if cin % 7 == 3 and cout >= 8:  # the bound (|acc| < 2^30) fails in the second block
            bias[5] = (1 << 30) + dot if cin % 2 else -(1 << 30) - dot
        if cin % 7 == 6 and cout >= 8:  # inside it at its ends: |acc| up to 2^30 - 1
            bias[5] = (1 << 30) - 1 - dot if cin % 2 else -(1 << 30) + dot
            bias[6] = -bias[5]
        if per_channel and cin % 6 == 2 and cout >= 8:  # a shift outside [-16, -1]
            mult[6], shift[6] = (1 << 30), (0 if cin % 4 == 2 else -20)
        if not per_channel and cin % 9 == 5:  # per tensor outside the fast range: no path
            mult[0], shift[0] = 1 << 30, 0
        clamp = cin % 3 == 0
        p = FullyConnectedParams(
            input_offset=int(rng.integers(-127, 129)), filter_offset=0,
            output_offset=int(rng.integers(-40, 40)), out_multiplier=mult, out_shift=shift,
            act_min=-90 if clamp else -128, act_max=100 if clamp else 127)
        x = rng.integers(-128, 128, (1 + cin % 3, cin)).astype(np.int8)
        w = rng.integers(-127, 128, (cout, cin)).astype(np.int8)
        out.append(FcCase(Op.FC_PER_CHANNEL if per_channel else Op.FC, x, w, bias, p,
                          fast_scratch=fast))
    return out


def all_cases(seed: int) -> list[FcCase]:
    return short_cases(seed) + short_cases(seed, LONG_CINS, True)


def test_short_cases_cover_the_path() -> None:
    """The cases take the path and its exits; outputs are not saturated (the test can fail)."""
    cases = short_cases(1)
    assert {c.w.shape[1] % 4 for c in cases} == {0, 1, 2, 3}
    assert {(c.w.shape[1] + 3) // 4 % 2 for c in cases if c.w.shape[1] <= 128} == {0, 1}
    assert {c.w.shape[0] % 4 for c in cases} == {0, 1, 2, 3}
    assert {c.x.shape[0] for c in cases} == {1, 2, 3}
    assert any(abs(int(c.bias[5])) >= 1 << 30 for c in cases if c.w.shape[0] >= 8)
    assert any(1 << 29 < abs(int(c.bias[5])) < 1 << 30 for c in cases if c.w.shape[0] >= 8)
    assert {int(s) for c in cases for s in c.p.out_shift} >= {0, -20}
    assert {c.p.act_min for c in cases} == {-128, -90}
    # Path FC_SHORT_ONE (inputs <= 32, a block or more): every chunk count (its entry),
    # both requantizations clamped and not, a block failing the bound.
    one = [c for c in cases if c.w.shape[1] <= 32 and c.w.shape[0] >= 4]
    assert {(c.w.shape[1] + 3) // 4 for c in one} == set(range(1, 9))
    assert {(c.op, c.p.act_min) for c in one} == {(op, lo) for op in (Op.FC, Op.FC_PER_CHANNEL)
                                                  for lo in (-128, -90)}
    assert any(abs(int(c.bias[5])) >= 1 << 30 for c in one if c.w.shape[0] >= 8)
    spread = [len(np.unique(c.expected())) for c in cases
              if c.w.shape[0] >= 8 and int(c.p.out_shift[0]) != 0]
    assert min(spread) > 4
    long = short_cases(1, LONG_CINS, True)
    taken = [c for c in long if c.w.shape[0] >= 8]
    assert {c.w.shape[1] % 4 for c in taken} == {0, 1, 2, 3}
    assert {(c.w.shape[1] + 3) // 4 % 8 for c in taken} == set(range(8))
    assert {c.op for c in taken} == {Op.FC, Op.FC_PER_CHANNEL}
    assert any(c.w.shape[0] < 8 for c in long)


@pytest.mark.parametrize("variant", ["portable", "dsp", "dsp_general"])
def test_fc_short_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in all_cases(1):
            problem = check_result(case, driver.run(case))
            assert problem is None, f"[{variant}] {case.op.name} {case.w.shape}: {problem}"


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                    or shutil.which("qemu-system-arm") is None,
                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
def test_fc_short_on_cortex_m4(kernel_fw_root: Path) -> None:
    cases = [c for seed in (2, 3) for c in all_cases(seed) if fits_small_firmware(c)]
    assert len(cases) >= 150
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases, interleaved=True)
    problems = [f"{c.op.name} {c.w.shape} act {c.p.act_min}..{c.p.act_max}: {p}"
                for c, r in zip(cases, run.results, strict=True)
                if (p := check_result(c, r)) is not None]  # fmt: skip
    assert not problems, f"{len(problems)} mismatch:\n" + "\n".join(problems[:8])


def entry_check_cases() -> list[tuple[FcCase, bool]]:
    """Per-channel constants at the entry check's edges, eight channels a pass on the DSP
    build (th_nn_check_fc_fast8; the last cout % 8 in C): shifts -1, -16 (its fast range's
    ends) and -17, 0, -31, 30 (valid, outside it: the general path) at one channel; a
    negative multiplier or a shift of -32 or 31 (refused: the bool) at the first, a middle or
    the last channel."""
    rng = np.random.default_rng(14)
    out = []
    for cout in (4, 8, 9, 13, 16, 23):
        x = rng.integers(-128, 128, (1, 6)).astype(np.int8)
        w = rng.integers(-127, 128, (cout, 6)).astype(np.int8)
        bias = rng.integers(-3000, 3000, cout).astype(np.int32)
        for c in sorted({0, cout // 2, cout - 1}):
            for m, sh, ok in ((1 << 30, -1, True), (1 << 30, -16, True), (1 << 30, -17, True),
                              (1 << 30, 0, True), (1 << 30, -31, True), (1 << 30, 30, True),
                              (-1, -8, False), (1 << 30, -32, False), (1 << 30, 31, False)):
                mult, shift = np.full(cout, 1 << 30, np.int32), np.full(cout, -8, np.int32)
                mult[c], shift[c] = m, sh
                p = FullyConnectedParams(3, 0, -2, mult, shift, -128, 127)
                out.append((FcCase(Op.FC_PER_CHANNEL, x, w, bias, p), ok))
    return out


def scalar_check_cases() -> list[tuple[FcCase, bool]]:
    """The scalar checks ORed into one word at entry, each at its edges alone: offsets and the
    activation range just inside and just outside int8's (refused: the bool), min > max, a
    negative per-tensor multiplier, shifts -32 and 31."""
    rng = np.random.default_rng(1418)
    x = rng.integers(-128, 128, (1, 6)).astype(np.int8)
    w = rng.integers(-127, 128, (5, 6)).astype(np.int8)
    bias = rng.integers(-3000, 3000, 5).astype(np.int32)
    base = {"input_offset": 3, "filter_offset": 0, "output_offset": -2, "act_min": -128,
            "act_max": 127}
    edits = [({"input_offset": v}, ok) for v, ok in ((-127, True), (128, True), (-128, False),
                                                      (129, False))]
    edits += [({"filter_offset": v}, ok) for v, ok in ((-127, True), (128, True),
                                                        (-128, False), (129, False))]
    edits += [({"output_offset": v}, ok) for v, ok in ((-128, True), (127, True),
                                                        (-129, False), (128, False))]
    edits += [({"act_min": lo, "act_max": hi}, ok)
              for lo, hi, ok in ((-128, -128, True), (127, 127, True), (-129, 0, False),
                                 (0, 128, False), (5, 4, False))]
    out = []
    for edit, ok in edits:
        p = FullyConnectedParams(**{**base, **edit}, out_multiplier=np.array([1 << 30], np.int32),
                                 out_shift=np.array([-8], np.int32))
        out.append((FcCase(Op.FC, x, w, bias, p), ok))
    for m, sh, ok in ((-1, -8, False), (1 << 30, -32, False), (1 << 30, 31, False),
                      (1 << 30, -31, True), (0, 30, True)):
        p = FullyConnectedParams(**base, out_multiplier=np.array([m], np.int32),
                                 out_shift=np.array([sh], np.int32))
        out.append((FcCase(Op.FC, x, w, bias, p), ok))
    return out


@pytest.mark.parametrize("variant", ["portable", "dsp"])
def test_fc_scalar_checks_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case, ok in scalar_check_cases():
            result = driver.run(case)
            if ok:
                assert check_result(case, result) is None, (variant, case.p)
            else:
                assert result.status == 1, (variant, case.p)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                    or shutil.which("qemu-system-arm") is None,
                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
def test_fc_entry_check_on_cortex_m4(kernel_fw_root: Path) -> None:
    """The native entry check: valid constants run (outputs match), invalid ones refused."""
    cases = entry_check_cases() + scalar_check_cases()
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), [c for c, _ in cases],
                    interleaved=True)
    problems = []
    for (case, ok), result in zip(cases, run.results, strict=True):
        where = (case.w.shape[0], case.p.out_multiplier.tolist(), case.p.out_shift.tolist())
        if ok and (p := check_result(case, result)) is not None:
            problems.append(f"{where}: {p}")
        if not ok and result.status != 1:
            problems.append(f"{where}: status {result.status}, expected refused")
    assert not problems, f"{len(problems)} wrong:\n" + "\n".join(problems[:8])
