"""C kernels on the host vs the NumPy reference, under ASan and UBSan (issue #3).

Both builds of the kernels run here: the portable C99 path and the DSP algorithms with the
Cortex-M instructions modelled in C (interleaved filter layout). Hypothesis draws shapes,
strides, paddings, dilations, groups, depth multipliers, zero points, per-channel
multipliers/shifts, biases and activation ranges; any differing byte, non-OK status or
sanitizer report fails. The same cases run on QEMU in test_kernels_target.py.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels.cases import (
    CONV_OPS,
    DW_OPS,
    FC_OPS,
    ConvCase,
    FcCase,
    Op,
    check_result,
    random_case,
)
from kernels.cases_ops import (
    AddCase,
    MulCase,
    add_case,
    imm_shift_mul_cases,
    imm_shift_mul_pairs_cases,
    mul_case,
    mul_px_cf_cases,
    mul_sc_cases,
    sep_cases,
    spatial_mul_line_cases,
    spatial_mul_nosign_cases,
    spatial_nosign_cases,
)
from kernels.harness import BUILD_FLAG_DSP, BUILD_FLAG_INTERLEAVED, Driver, build_driver
from kernels.layers import (
    FEW_CHANNEL_LAYERS,
    REAL_LAYERS,
    layer_case,
    small_cin_cases,
    with_dead_channels,
)
from kernels.sweep import _conv_case, describe, sweep_cases
from tinyhost.arith.conv import ConvParams, FullyConnectedParams
from tinyhost.arith.elementwise import MulParams
from tinyhost.codegen.layout import interleave_filter
from tinyhost.plan.scratch import dw_plane_scratch

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")

VARIANTS = ("portable", "dsp", "dsp_general")
EXAMPLES = 250  # per (variant, op): 3 x 9 x 250 = 6,750 random cases per run


@pytest.fixture(scope="module", params=VARIANTS)
def driver(request: pytest.FixtureRequest) -> Iterator[Driver]:
    with Driver(build_driver(request.param)) as d:
        yield d


class HypothesisDraw:
    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def int(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))

    def bool(self, p_true: float = 0.5) -> bool:
        # Integer draw so hypothesis shrinks toward False.
        return self.data.draw(st.integers(0, 999)) < int(p_true * 1000)


def _check(driver: Driver, case: ConvCase | FcCase | AddCase | MulCase) -> None:
    problem = check_result(case, driver.run(case))
    assert problem is None, f"{case.op.name} [{driver.build.variant}]: {problem}\n{case}"


@pytest.mark.parametrize("op", [*CONV_OPS, *DW_OPS, *FC_OPS], ids=lambda op: op.name)
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_cases_match_reference(driver: Driver, op: Op, data: st.DataObject) -> None:
    _check(driver, random_case(HypothesisDraw(data), op))


def test_build_variants_are_what_they_claim(driver: Driver) -> None:
    dsp = driver.build.variant.startswith("dsp")
    assert bool(driver.build_flags & BUILD_FLAG_DSP) == dsp
    assert bool(driver.build_flags & BUILD_FLAG_INTERLEAVED) == dsp


def _conv_params(**overrides: object) -> ConvParams:
    base = dict(input_offset=5, output_offset=-3, out_multiplier=np.full(4, 1 << 30, np.int32),
                out_shift=np.full(4, -8, np.int32), act_min=-128, act_max=127, stride_h=1,
                stride_w=1, dilation_h=1, dilation_w=1, pad_top=0, pad_left=0, pad_bottom=0,
                pad_right=0)
    base.update(overrides)
    return ConvParams(**base)  # type: ignore[arg-type]


def _conv_1x1(op: Op) -> ConvCase:
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (1, 3, 3, 4)).astype(np.int8)
    w = rng.integers(-127, 128, (4, 1, 1, 4)).astype(np.int8)
    return ConvCase(op, x, w, None, _conv_params(), (1, 3, 3, 4))


def test_specialized_variants_refuse_what_they_do_not_support(driver: Driver) -> None:
    # A 1x1 filter is not 3x3, and a padded 3x3 conv is not 1x1: status TH_ERR_UNSUPPORTED.
    assert driver.run(_conv_1x1(Op.CONV_3X3)).status == 2
    rng = np.random.default_rng(2)
    x = rng.integers(-128, 128, (1, 4, 4, 3)).astype(np.int8)
    w3 = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    padded = ConvCase(Op.CONV_1X1, x, w3, None, _conv_params(pad_top=1, pad_left=1,
                                                             pad_bottom=1, pad_right=1),
                      (1, 4, 4, 4))
    assert driver.run(padded).status == 2
    wdw = rng.integers(-127, 128, (1, 3, 3, 6)).astype(np.int8)
    mult2 = ConvCase(Op.DW_3X3, x, wdw, None,
                     _conv_params(ch_mult=2, out_multiplier=np.full(6, 1 << 30,
                                                                              np.int32),
                                  out_shift=np.full(6, -8, np.int32)), (1, 2, 2, 6))
    assert driver.run(mult2).status == 2
    # ...and the wrappers take the same calls.
    assert check_result(padded, driver.run(ConvCase(Op.CONV, x, w3, None, padded.p,
                                                    (1, 4, 4, 4)))) is None


def test_bad_arguments_are_refused(driver: Driver) -> None:
    case = _conv_1x1(Op.CONV)
    bad_act = ConvCase(Op.CONV, case.x, case.w, None, _conv_params(act_min=5, act_max=4),
                       case.out_shape)
    assert driver.run(bad_act).status == 1
    bad_shift = ConvCase(Op.CONV, case.x, case.w, None,
                         _conv_params(out_shift=np.full(4, -40, np.int32)), case.out_shape)
    assert driver.run(bad_shift).status == 1
    fc = FcCase(Op.FC_PER_CHANNEL, case.x.reshape(9, 4), case.w.reshape(4, 4), None,
                FullyConnectedParams(0, 3, 0, np.full(4, 1 << 30, np.int32),
                                     np.full(4, -5, np.int32), -128, 127))
    assert driver.run(fc).status == 2  # a filter offset makes no sense per channel


def test_interleave_filter_layout_matches_the_documented_index() -> None:
    rng = np.random.default_rng(3)
    for cout, k, block in [(5, 7, 2), (9, 12, 4), (1, 3, 4), (4, 16, 2)]:
        w = rng.integers(-127, 128, (cout, k)).astype(np.int8)
        flat = interleave_filter(w, block)
        kp = (k + 3) // 4 * 4
        assert flat.size == cout * kp
        for c in range(cout):
            for j in range(k):
                first = c // block * block
                g = min(block, cout - first)
                index = first * kp + (j // 4) * 4 * g + (c - first) * 4 + j % 4
                assert flat[index] == w[c, j]


@pytest.mark.parametrize("name,op,shape", REAL_LAYERS, ids=[r[0] for r in REAL_LAYERS])
def test_mlperf_tiny_layers_match_reference(driver: Driver, name: str, op: Op,
                                            shape: dict) -> None:
    case = layer_case(op, **shape)
    assert check_result(case, driver.run(case)) is None


def test_in_place_depthwise_and_pointwise_match_reference(driver: Driver) -> None:
    dw = layer_case(Op.DW, (12, 9), 8, 8, 3, 1)
    pw = layer_case(Op.CONV_1X1, (7, 5), 16, 12, 1, 1)
    pw8 = layer_case(Op.CONV_1X1, (5, 7), 8, 8, 1, 1)  # the 8-input-channel path
    pw8_narrow = layer_case(Op.CONV_1X1, (3, 3), 8, 4, 1, 1)
    for case in (dw, pw, pw8, pw8_narrow):
        in_place = ConvCase(case.op, case.x, case.w, case.bias, case.p, case.out_shape, True)
        assert check_result(in_place, driver.run(in_place)) is None


@pytest.mark.parametrize("cout,dead", [
    (128, [0, 5, 77, 127]),  # table in scratch (Cout > 65)
    (64, [1, 2, 63]),  # table on the stack
    (67, [3, 66]),  # odd Cout: the last channel outside the pairs
    (96, list(range(0, 96, 5))),  # more dead channels than the fix-up list holds
])
def test_pointwise_with_near_dead_channels_matches_reference(driver: Driver, cout: int,
                                                             dead: list[int]) -> None:
    case = with_dead_channels(layer_case(Op.CONV_1X1, (3, 4), 32, cout, 1, 1, seed=cout), dead)
    assert check_result(case, driver.run(case)) is None


@pytest.mark.parametrize("name,op,shape", [r for r in REAL_LAYERS if r[1] is Op.DW],
                         ids=[r[0] for r in REAL_LAYERS if r[1] is Op.DW])
def test_depthwise_layers_with_fast_scratch_match_reference(driver: Driver, name: str, op: Op,
                                                            shape: dict) -> None:
    """Given th_dw_conv_3x3_s8_scratch_size_fast, stride 1 stages four channels per pass."""
    case = dataclasses.replace(layer_case(op, **shape), fast_scratch=True)
    assert check_result(case, driver.run(case)) is None
    in_place = dataclasses.replace(case, in_place=True)
    assert check_result(in_place, driver.run(in_place)) is None


def test_pointwise_with_eight_input_channels_matches_reference(driver: Driver) -> None:
    """Cin == 8 has its own DSP path (per-channel records, chunks of 32 channels)."""
    for cout, hw, seed in ((48, (3, 5), 1), (4, (1, 1), 2), (36, (6, 2), 3), (12, (2, 2), 4)):
        case = layer_case(Op.CONV_1X1, hw, 8, cout, 1, 1, seed=seed)
        assert check_result(case, driver.run(case)) is None


@pytest.mark.parametrize("op,hw,cin,cout,k,stride", FEW_CHANNEL_LAYERS,
                         ids=[f"{r[0].name}-{r[2]}-{r[3]}-{r[4]}" for r in FEW_CHANNEL_LAYERS])
def test_few_output_channels_and_long_odd_columns_match_reference(
        driver: Driver, op: Op, hw: tuple[int, int], cin: int, cout: int,
        k: int | tuple[int, int], stride: int) -> None:
    case = layer_case(op, hw, cin, cout, k, stride, seed=cin * cout)
    assert check_result(case, driver.run(case)) is None
    if op == Op.CONV_1X1 and stride == 1:  # aliasing rule (b): output == input
        in_place = dataclasses.replace(case, in_place=True)
        assert check_result(in_place, driver.run(in_place)) is None
    dilated = dataclasses.replace(case, p=dataclasses.replace(case.p, dilation_h=2,
                                                              dilation_w=2, pad_top=0,
                                                              pad_left=0, pad_bottom=0,
                                                              pad_right=0))
    kh, kw = case.w.shape[1:3]
    oh = (hw[0] - (kh - 1) * 2 - 1) // stride + 1
    ow = (hw[1] - (kw - 1) * 2 - 1) // stride + 1
    if op in (Op.CONV, Op.CONV_GENERAL) and oh > 0 and ow > 0:
        pb = (oh - 1) * stride + (kh - 1) * 2 + 1 - hw[0]
        pr = (ow - 1) * stride + (kw - 1) * 2 + 1 - hw[1]
        dilated = dataclasses.replace(dilated, out_shape=(1, oh, ow, cout),
                                      p=dataclasses.replace(dilated.p, pad_bottom=pb,
                                                            pad_right=pr))
        assert check_result(dilated, driver.run(dilated)) is None


def test_sweep_shapes_match_reference(driver: Driver) -> None:
    """The benchmark sweep's conv, pointwise and fully connected shapes (seed 0)."""
    for kind, case in sweep_cases(0, 30):
        if kind != "depthwise":
            problem = check_result(case, driver.run(case))
            assert problem is None, f"{kind} {describe(case)}: {problem}"


def test_depthwise_sweep_shapes_match_reference(driver: Driver) -> None:
    """The benchmark sweep's depthwise shapes (seeds 0 and 1, with their fast scratch): the
    rows path's partial blocks, four-channel passes and one-row audio shapes."""
    for seed in (0, 1):
        for kind, case in sweep_cases(seed, 30):
            if kind == "depthwise":
                problem = check_result(case, driver.run(case))
                assert problem is None, f"seed {seed} {describe(case)}: {problem}"


def test_depthwise_plane_path_in_place_clamped_and_batched(driver: Driver) -> None:
    """The depthwise plane path (filters of 15 or more taps, fast scratch) in both frames,
    with dilation phases, ch_mult 2, in place, two batches, and an activation clamp (the
    records' one-output-at-a-time mode)."""
    rng = np.random.default_rng(14)
    shapes = [((12, 11), 6, (5, 5), (1, 1), (1, 1), 1), ((20, 9), 5, (7, 3), (2, 1), (2, 2), 1),
              ((9, 16), 3, (3, 6), (1, 2), (1, 3), 2), ((17, 6), 4, (11, 2), (1, 1), (2, 1), 1)]
    for hw, cin, k, stride, dilation, mult in shapes:
        case = _conv_case(rng, Op.DW, hw, cin, cin * mult, k, stride, dilation, mult)
        assert case is not None and case.fast_scratch
        assert dw_plane_scratch(k, case.out_shape[1:3], stride, dilation, mult) > 0
        clamped = case.clamped()
        batched = dataclasses.replace(case, x=np.concatenate([case.x, case.x[:, ::-1]]),
                                      out_shape=(2, *case.out_shape[1:]))
        variants = [case, clamped, batched]
        if mult == 1:
            variants.append(dataclasses.replace(case, in_place=True))
        for v in variants:
            problem = check_result(v, driver.run(v))
            assert problem is None, f"{describe(v)} in place {v.in_place}: {problem}"


def test_small_input_channel_convs_match_reference(driver: Driver) -> None:
    for case in small_cin_cases():
        problem = check_result(case, driver.run(case))
        assert problem is None, f"[{driver.build.variant}] {describe(case)}: {problem}"


def test_spatial_mul_line_matches_reference(driver: Driver) -> None:
    """The MUL spatial line loops (th_mul_prep line, kernels.cases_ops
    spatial_mul_line_cases) under the sanitizers, with and without the line; the same cases
    run on QEMU in test_kernels_elementwise_target.py."""
    for name, case in spatial_mul_line_cases():
        problem = check_result(case, driver.run(case))
        assert problem is None, f"[{driver.build.variant}] {name}: {problem}"


def test_mul_line_asm_loops_match_reference(driver: Driver) -> None:
    """The C models of MUL's clamped-line assembly loops (mul_px_run from the host's px_w,
    mul_cf_run; kernels.cases_ops mul_px_cf_cases) under the sanitizers; the assembly on
    QEMU in test_kernels_elementwise_target.py."""
    for name, case in mul_px_cf_cases():
        problem = check_result(case, driver.run(case))
        assert problem is None, f"[{driver.build.variant}] {name}: {problem}"


def test_mul_scalar_loop_matches_reference(driver: Driver) -> None:
    """The C model of MUL's host-chosen int8 scalar loop (th_mul_s8.c mul_sc_e1..e8 from the
    host's sc_w; kernels.cases_ops mul_sc_cases: e 1-8, 1-447 outputs, ties placed) under the
    sanitizers; the assembly on QEMU in test_kernels_elementwise_target.py."""
    for name, case in mul_sc_cases():
        problem = check_result(case, driver.run(case))
        assert problem is None, f"[{driver.build.variant}] {name}: {problem}"


def test_mul_immediate_shift_loops_match_reference(driver: Driver) -> None:
    """The MUL loops with e = -shift an immediate (kernels.cases_ops imm_shift_mul_cases:
    spatial, channel, scalar, e 1-9, ties placed) under the sanitizers; on QEMU in
    test_kernels_elementwise_target.py."""
    for name, case in imm_shift_mul_cases():
        problem = check_result(case, driver.run(case))
        assert problem is None, f"[{driver.build.variant}] {name}: {problem}"


def test_mul_spatial_pairs_match_reference(driver: Driver) -> None:
    """The C model of MUL's spatial word-pair loops (mul_sp2_e1..e8; kernels.cases_ops
    imm_shift_mul_pairs_cases) under the sanitizers; the assembly on QEMU in
    test_kernels_elementwise_target.py."""
    for name, case in imm_shift_mul_pairs_cases():
        problem = check_result(case, driver.run(case))
        assert problem is None, f"[{driver.build.variant}] {name}: {problem}"


def test_spatial_nosign_loops_match_reference(driver: Driver) -> None:
    """The spatial loops with and without the rounding's sign term (th_add_prep /
    th_mul_prep nosign 0, 1, 2), ties in every pixel (kernels.cases_ops
    spatial_nosign_cases, spatial_mul_nosign_cases); the driver compares the host's struct
    with th_*_prepare's first (its exhaustive proof under the sanitizers). The same cases
    run on QEMU in test_kernels_elementwise_target.py."""
    for name, case in spatial_nosign_cases() + spatial_mul_nosign_cases():
        problem = check_result(case, driver.run(case))
        assert problem is None, f"[{driver.build.variant}] {name}: {problem}"


@pytest.mark.parametrize("op", [Op.ADD, Op.SUB, Op.MUL], ids=lambda op: op.name)
@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_prepared_binary_matches_reference(driver: Driver, op: Op, data: st.DataObject) -> None:
    """th_add_s8_prepared / th_mul_s8_prepared on the host's prepared struct
    (tinyhost.arith.elementwise add_prep / mul_prep, the compiled backend's): the driver first
    compares it word for word with what th_*_prepare fills (TH_KCASE_PREP_MISMATCH), then
    runs it; the generic entry runs the same case; both against the reference. Every
    broadcast form, clamps, tables or not, in place."""
    draw = HypothesisDraw(data)
    case = mul_case(draw) if op is Op.MUL else add_case(draw, op)
    _check(driver, dataclasses.replace(case, prepared=True))
    _check(driver, dataclasses.replace(case, prepared=False))
    if op is not Op.MUL:  # ... and with the host's separable form where it is proven
        _check(driver, dataclasses.replace(case, prepared=True, sep=True))


def test_mul_saturated_requantization_matches_reference(driver: Driver) -> None:
    """MUL's exact requantization with a left shift of 30: the requantized product lands
    near INT32_MIN / INT32_MAX, where adding the output offset in 32 bits overflowed (UBSan)
    and wrapped to the other clamp; the reference adds in 64 bits. Every sign of product,
    offsets at both ends, each broadcast form, prepared and generic entries."""
    rng = np.random.default_rng(30)
    for zo in (-128, -36, 0, 127):
        for b_shape in ((1, 3, 5, 4), (1, 1, 1, 4), (1, 1, 1, 1), (1, 3, 5, 1)):
            a = rng.integers(-128, 128, (1, 3, 5, 4), dtype=np.int8)
            b = rng.integers(-128, 128, b_shape, dtype=np.int8)
            p = MulParams(input1_offset=3, input2_offset=-5, output_offset=zo,
                          output_multiplier=(1 << 31) - 1, output_shift=30,
                          activation_min=-128, activation_max=127)
            for prepared in (False, True):
                _check(driver, MulCase(Op.MUL, a, b, p, prepared=prepared))


def test_separable_add_sub_match_reference(driver: Driver) -> None:
    """ADD / SUB through th_add_prep's separable form (kernels.cases_ops sep_cases: every
    sep_mode, every form, C 1-70, in place, and unproven parameters), under the sanitizers;
    on the DSP builds a C table one step off must change the output of every case that
    has the form (so each form does run it), on the portable one and the one without the
    optional paths (which never read it) none. The same cases run on QEMU in
    test_kernels_elementwise_target.py."""
    dsp = driver.build.variant == "dsp"
    for name, case in sep_cases():
        problem = check_result(case, driver.run(case))
        assert problem is None, f"[{driver.build.variant}] {name}: {problem}"
        if "sep_mode None" not in name and "output tables" not in name:
            wrong = dataclasses.replace(case, sep_bias=1 << 16)
            problem = check_result(wrong, driver.run(wrong))
            assert (problem is not None) == dsp, f"[{driver.build.variant}] {name}: {problem}"
