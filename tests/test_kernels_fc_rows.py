"""th_fc_s8_w16's row loop (issue 14, FULLY_CONNECTED below the floor): the whole blocks of
four channels of a `fast` layer with 16 outputs or more run in one assembly loop per
requantization (per tensor, per channel with the host's table) and store (clamped bytewise,
or not where the activation range is int8's whole one: path FC_W16_FULL), the dot entered
by computed branches set once per row (the phase of chunks % per-pass, no chunks at all, the
partial last input word or none), the last 1..3 channels as one more pass.

The cases cover every one of those entries: whole input words 0..9 and 32..35 (every
remainder modulo the two-chunk and four-chunk dots), every cin % 4, every cout % 4, both
requantizations, clamped and whole ranges, one and two batches. On the host (ASan/UBSan;
portable, emulated DSP and without optional paths) and on QEMU mps2-an386 (Cortex-M4) in
the kernel firmware (every path kept: the four-chunk dot) and through the compiled backend
(paths recorded: inputs under 128 keep the two-chunk dot), all against the NumPy reference.
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
from tinyhost.ir import Activation, FullyConnectedOptions, Graph, OpKind

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")

# whole input words 0..9 and 32..35, each with every partial last word
ROW_IN = [4 * k + t for k in [*range(10), 32, 33, 34, 35] for t in range(4) if 4 * k + t > 0]
ROW_OUT = [16, 17, 18, 19, 20, 23, 37]
ON_DEVICE = "arm-none-eabi-gcc or qemu-system-arm not installed"


def _needs_qemu() -> bool:
    return shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None


def row_cases(seed: int) -> list[FcCase]:
    """FC_W16 cases the row loop takes (fast, 16 outputs or more): every cin of ROW_IN,
    per tensor and per channel, clamped (every third) or not."""
    rng = np.random.default_rng(seed)
    out = []
    for i, cin in enumerate(ROW_IN):
        for per_channel in (False, True):
            cout = ROW_OUT[(i + per_channel) % len(ROW_OUT)]
            n = cout if per_channel else 1
            mult, shift = np.empty(n, np.int32), np.empty(n, np.int32)
            for c in range(n):
                # outputs spread over about +-40 (the sums' std: the dot's and the bias')
                mult[c], shift[c] = quantize_multiplier(
                    float(rng.uniform(0.5, 2.0)) * 40 / (np.sqrt(cin) * 9500 + 17000))
            clamp = i % 3 == 0
            p = FullyConnectedParams(
                input_offset=int(rng.integers(-127, 129)), filter_offset=0,
                output_offset=int(rng.integers(-100, 100)), out_multiplier=mult,
                out_shift=shift, act_min=-90 if clamp else -128, act_max=100 if clamp else 127)
            x = rng.integers(-128, 128, (1 + i % 2, cin)).astype(np.int8)
            w = rng.integers(-127, 128, (cout, cin)).astype(np.int8)
            bias = rng.integers(-30000, 30000, cout).astype(np.int32)
            out.append(FcCase(Op.FC_W16, x, w, bias, p))
    return out


def _fast(case: FcCase) -> bool:
    return fc_fast_ok(case.w.shape[1], case.bias, case.p.out_multiplier, case.p.out_shift)


def test_row_cases_reach_every_entry() -> None:
    """Every case takes the row loop; the dot's entries (chunks % 2, % 4, none), partial
    words, last channels, requantizations and stores all occur; outputs are not saturated."""
    cases = row_cases(1)
    assert all(_fast(c) and c.w.shape[0] >= 16 for c in cases)
    chunks = [c.w.shape[1] // 4 for c in cases]
    assert {k % 4 for k in chunks if k >= 4} == {0, 1, 2, 3} and 0 in chunks
    assert {c.w.shape[1] % 4 for c in cases} == {0, 1, 2, 3}
    assert {c.w.shape[0] % 4 for c in cases} == {0, 1, 2, 3}
    per_channel = {len(c.p.out_multiplier) > 1 for c in cases}
    assert per_channel == {True, False}
    assert {c.p.act_min == -128 for c in cases} == {True, False}
    assert {c.x.shape[0] for c in cases} == {1, 2}
    spread = [len(np.unique(c.expected())) for c in cases]
    assert min(spread) > 5


@pytest.mark.parametrize("variant", ["portable", "dsp", "dsp_general"])
def test_row_loop_on_the_host(variant: str) -> None:
    with Driver(build_driver(variant)) as driver:
        for case in row_cases(1):
            problem = check_result(case, driver.run(case))
            assert problem is None, f"[{variant}] {case.w.shape}: {problem}"


@pytest.mark.skipif(_needs_qemu(), reason=ON_DEVICE)
def test_row_loop_on_cortex_m4(kernel_fw_root: Path) -> None:
    """The kernel firmware (every path kept: the four-chunk dot), with the int8 kernels on
    the same shapes."""
    cases = [c for c in row_cases(2) if fits_small_firmware(c)]
    int8 = [replace(c, op=Op.FC_PER_CHANNEL if len(c.p.out_multiplier) > 1 else Op.FC)
            for c in cases]
    assert len(cases) >= 100
    run = run_cases(build_firmware("mps2-an386", kernel_fw_root), cases + int8, interleaved=True)
    problems = [f"{c.op.name} {c.w.shape} act {c.p.act_min}..{c.p.act_max}: {p}"
                for c, r in zip(cases + int8, run.results, strict=True)
                if (p := check_result(c, r)) is not None]  # fmt: skip
    assert not problems, f"{len(problems)} mismatch:\n" + "\n".join(problems[:8])


def _row_graph() -> Graph:
    """Chained FCs through the compiled backend (recorded paths: inputs under 128, the
    two-chunk dot): input lengths 2 (no whole word), 13 (three words, an odd count, and a
    partial one), 20 (five words), 36 (nine); per tensor and per channel; RELU (clamped) and
    none; 17-23 outputs (the last channels' pass)."""
    rng = np.random.default_rng(15)
    b = GraphBuilder(rng)
    x = b.tensor("x", (2, 2), quant=q(0.05, 3))

    def fc(src: int, cin: int, cout: int, per_channel: bool, relu: bool, name: str) -> int:
        scales = rng.uniform(0.01, 0.04, cout if per_channel else 1).astype(np.float32)
        w = b.tensor(f"{name}_w", (cout, cin), data=rng.integers(-127, 128, (cout, cin))
                     .astype(np.int8), quant=q(scales, 0, axis=0))  # fmt: skip
        in_scale = float(b.tensors[src].quant.scale[0])
        bias = b.tensor(f"{name}_b", (cout,), np.dtype(np.int32),
                        rng.integers(-3000, 3000, cout).astype(np.int32),
                        q((in_scale * scales).astype(np.float32), 0))
        spread = in_scale * 0.025 * 74 * 74 * np.sqrt(cin) / 50
        y = b.tensor(f"{name}_y", (2, cout), quant=q(float(spread), -20 if relu else 4))
        act = Activation.RELU if relu else Activation.NONE
        b.op(OpKind.FULLY_CONNECTED, (src, w, bias), (y,), FullyConnectedOptions(act))
        return y

    a = fc(x, 2, 13, False, False, "fc0")  # fewer than 16 outputs: the block loop
    c = fc(a, 13, 20, True, True, "fc1")
    d = fc(c, 20, 36, False, True, "fc2")
    e = fc(d, 36, 17, True, False, "fc3")
    f = fc(e, 17, 23, False, False, "fc4")
    g = fc(x, 2, 19, True, False, "fc5")
    return b.graph([x], [a, c, d, e, f, g], "fc_w16_rows")


@pytest.mark.skipif(_needs_qemu(), reason=ON_DEVICE)
def test_row_loop_compiled_on_cortex_m4(tmp_path: Path) -> None:
    """Bit-exact with TFLM in the reference and with the reference on QEMU mps2-an386
    through the compiled backend (its recorded paths: both requantizations and stores)."""
    g = _row_graph()
    x = int8_inputs(g, 5)
    assert_reference_matches_tflm(g, x)
    outs = reference.run(g, x).outputs
    assert all(len(np.unique(o)) > 6 for o in outs)  # not saturated: the test can fail
    assert_device_matches_reference(g, x, "mps2-an386", "compiled", tmp_path)
    configs = "".join(p.read_text() for p in tmp_path.rglob("th_nn_config.h"))
    for path in ("FC_W16_TENSOR", "FC_W16_CHANNEL", "FC_W16_FULL"):
        assert f"TH_NN_KEEP_{path} 1" in configs, path
    assert "TH_NN_KEEP_FC_W16_UNROLL4 0" in configs
