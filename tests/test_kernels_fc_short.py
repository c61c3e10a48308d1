"""Issue 14's short-input FULLY_CONNECTED paths: th_fc_s8_w16 (the compiled backend's
host-widened int16 weights, kernel op FC_W16) and the int8 kernels, on the shapes their
block loops branch on.

th_fc_s8_w16 runs the whole blocks of four channels in a row loop of its own when the host
found the fast requantization exact (`fast`, codegen/widen.py fc_fast_ok) and there are 16
outputs or more, per tensor or per channel, the last 1..3 channels (and every channel of a
smaller or not `fast` layer) in its block loop; the partial last input word is read inside
the dot loop; inputs of 128 or more take the four-chunk dot. The cases: input lengths 1..40
(every cin % 4) and longer ones, outputs 1..13, 16, 21 (every cout % 4), per tensor and per
channel, shifts at the ends of the fast range (-1, -22) and outside it (-23, 0, 2: `fast`
off), biases large enough to turn `fast` off, activation clamps, one to three batches. The
int8 kernels (FC, FC_PER_CHANNEL) on the same shapes. All against the NumPy reference:
on the host (ASan/UBSan; portable, emulated DSP and the build without optional paths) and
one batch on QEMU mps2-an386
(Cortex-M4: the native DSP build and its assembly loops).
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from graph_builder import GraphBuilder
from graph_on_device import (
    assert_device_matches_reference,
    assert_reference_matches_tflm,
    int8_inputs,
)
from kernels.cases import FcCase, Op, check_result
from kernels.harness import Driver, build_driver
from kernels.target import build_firmware, fits_small_firmware, run_cases
from reference_single_op import q
from tinyhost import reference
from tinyhost.arith.conv import FullyConnectedParams
from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.codegen.widen import fc_fast_ok
from tinyhost.ir import FullyConnectedOptions, Graph, OpKind

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")

FC_IN = [*range(1, 41), 45, 61, 64, 69, 88, 97, 130, 257]
FC_OUT = [*range(1, 14), 16, 17, 21, 22, 35, 64]
# None: the multiplier's own shift (about -9 .. -14 here); the others at and past the ends
# of the fast range [-22, -1].
SHIFTS = [None] * 6 + [-1, -22, -23, 0, 2]


def _quant(rng: np.random.Generator, n: int, cin: int) -> tuple[np.ndarray, np.ndarray]:
    mult, shift = np.empty(n, np.int32), np.empty(n, np.int32)
    for c in range(n):
        mult[c], shift[c] = quantize_multiplier(
            float(rng.uniform(0.3, 3.0)) / (np.sqrt(cin) * 7000))
        if rng.random() < 0.15:
            forced = SHIFTS[int(rng.integers(len(SHIFTS)))]
            if forced is not None:
                shift[c] = forced
    return mult, shift


def fc_cases(seed: int, count: int) -> list[FcCase]:
    """int8 FC / FC_PER_CHANNEL cases over every cin % 4 and cout % 4 (no filter offset:
    each also runs as FC_W16)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        cin, cout = FC_IN[i % len(FC_IN)], FC_OUT[(i // 2) % len(FC_OUT)]
        per_channel = i % 2 == 1
        mult, shift = _quant(rng, cout if per_channel else 1, cin)
        w = rng.integers(-127, 128, (cout, cin)).astype(np.int8)
        bias = rng.integers(-20000, 20000, cout).astype(np.int32)
        if i % 7 == 3:  # past the host's fast bound: the general loop
            bias[int(rng.integers(cout))] = int(rng.choice([1 << 29, -(1 << 30)]))
        p = FullyConnectedParams(
            input_offset=int(rng.integers(-127, 129)), filter_offset=0,
            output_offset=int(rng.integers(-128, 128)), out_multiplier=mult, out_shift=shift,
            act_min=-128 if i % 5 else -100, act_max=127 if i % 5 else 90)
        x = rng.integers(-128, 128, (1 + i % 3, cin)).astype(np.int8)
        out.append(FcCase(Op.FC_PER_CHANNEL if per_channel else Op.FC, x, w,
                          None if i % 11 == 10 else bias, p))
    return out


def all_cases(seed: int, count: int) -> list[FcCase]:
    """The int8 cases and each again on th_fc_s8_w16."""
    cases = fc_cases(seed, count)
    return cases + [replace(c, op=Op.FC_W16) for c in cases]


def _fast(case: FcCase) -> bool:
    return fc_fast_ok(case.w.shape[1], case.bias, case.p.out_multiplier, case.p.out_shift)


def test_cases_reach_the_branches() -> None:
    """Every cin % 4 and cout % 4, whole blocks and a last partial block, per tensor and per
    channel, on both sides of the host's `fast`, clamps, several batches."""
    cases = fc_cases(1, 200)
    assert {c.w.shape[1] % 4 for c in cases} == {0, 1, 2, 3}
    assert {c.w.shape[0] % 4 for c in cases} == {0, 1, 2, 3}
    assert {c.op for c in cases} == {Op.FC, Op.FC_PER_CHANNEL}
    for op in (Op.FC, Op.FC_PER_CHANNEL):
        fast = {_fast(c) for c in cases if c.op == op and c.w.shape[0] >= 4}
        assert fast == {True, False}, op
    assert any(c.p.act_min > -128 for c in cases)
    assert {c.x.shape[0] for c in cases} == {1, 2, 3}
    rows = [c for c in cases if c.w.shape[0] >= 16 and _fast(c)]  # the row loop's
    assert {c.w.shape[0] % 4 for c in rows} == {0, 1, 2, 3}
    assert {c.op for c in rows} == {Op.FC, Op.FC_PER_CHANNEL}
    assert any(c.w.shape[1] >= 128 for c in rows)
    assert any(c.bias is None for c in cases)


@pytest.mark.parametrize("variant", ["portable", "dsp", "dsp_general"])
def test_short_fc_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in all_cases(1, 200):
            problem = check_result(case, driver.run(case))
            assert problem is None, (f"{case.op.name} [{variant}] {case.w.shape} "
                                     f"fast={_fast(case)}: {problem}")


def test_fc_w16_refuses_bad_arguments() -> None:
    """A record the w16 kernel cannot take (filter offset) is refused on the host side, and
    the kernel refuses a mult_step outside 0..1 (the driver checks the blob sizes)."""
    case = fc_cases(2, 1)[0]
    with pytest.raises(ValueError, match="filter offset"):
        replace(case, op=Op.FC_W16, p=replace(case.p, filter_offset=3)).encode(0, True)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                    or shutil.which("qemu-system-arm") is None,
                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
def test_short_fc_on_cortex_m4(kernel_fw_root: Path) -> None:
    cases = [c for c in all_cases(3, 200) if fits_small_firmware(c)]
    assert len(cases) >= 380
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases, interleaved=True)
    problems = [f"{c.op.name} {c.w.shape} fast={_fast(c)}: {p}"
                for c, r in zip(cases, run.results, strict=True)
                if (p := check_result(c, r)) is not None]  # fmt: skip
    assert not problems, f"{len(problems)} of {len(cases)} mismatch:\n" + "\n".join(
        problems[:8])


def _per_channel_fc_graph() -> Graph:
    """Two rows of 34 through per-channel FCs of 33 (cout % 4 == 1) and then 18 (== 2)
    outputs and a per-tensor one of 19 (== 3): the compiled backend's table (mult_step 2)
    and the row loop's last partial block, every output a model output."""
    rng = np.random.default_rng(14)
    b = GraphBuilder(rng)
    x = b.tensor("x", (2, 34), quant=q(0.05, 3))

    def fc(src: int, cin: int, cout: int, per_channel: bool, name: str, zp: int) -> int:
        scales = rng.uniform(0.01, 0.04, cout if per_channel else 1).astype(np.float32)
        w = b.tensor(f"{name}_w", (cout, cin), data=rng.integers(-127, 128, (cout, cin))
                     .astype(np.int8), quant=q(scales, 0, axis=0))  # fmt: skip
        in_scale = float(b.tensors[src].quant.scale[0])
        bias = b.tensor(f"{name}_b", (cout,), np.dtype(np.int32),
                        rng.integers(-3000, 3000, cout).astype(np.int32),
                        q((in_scale * scales).astype(np.float32), 0))
        spread = in_scale * 0.025 * 74 * 74 * np.sqrt(cin) / 50  # the sums' std / 50
        y = b.tensor(f"{name}_y", (2, cout), quant=q(float(spread), zp))
        b.op(OpKind.FULLY_CONNECTED, (src, w, bias), (y,), FullyConnectedOptions())
        return y

    a = fc(x, 34, 33, True, "fc1", -5)
    c = fc(a, 33, 18, True, "fc2", 7)
    d = fc(c, 18, 19, False, "fc3", -2)
    return b.graph([x], [a, c, d], "fc_w16_tails")


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                    or shutil.which("qemu-system-arm") is None,
                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")
def test_per_channel_fc_tails_compiled_on_cortex_m4(tmp_path: Path) -> None:
    """Bit-exact with TFLM in the reference and with the reference on QEMU mps2-an386
    through the compiled backend (th_fc_s8_w16 with the host's table)."""
    g = _per_channel_fc_graph()
    x = int8_inputs(g, 3)
    assert_reference_matches_tflm(g, x)
    outs = reference.run(g, x).outputs
    assert all(len(np.unique(o)) > 8 for o in outs)  # not saturated: the test can fail
    assert_device_matches_reference(g, x, "mps2-an386", "compiled", tmp_path)
    sources = "".join(p.read_text() for p in tmp_path.rglob("*.c"))
    assert sources.count("_rq_table[") >= 2 and "th_fc_s8_w16" in sources
