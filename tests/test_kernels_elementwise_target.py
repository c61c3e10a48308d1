"""The elementwise DSP paths of issue 14 on QEMU (Cortex-M4, mps2-an386, native DSP
instructions): th_add_s8 / th_sub_s8 without tables (the direct rows of small tensors: same
shape, channel, spatial and scalar constants, a two-sided broadcast), th_mul_s8's channel
rows with right output shifts (packed halfword factors), the spatial broadcast loops
([H, W, C] against [H, W, 1]: ADD / SUB through the host tables, MUL with right and left
shifts; channel counts with every tail, either side, in place), and the 256-entry output tables
of the scalar and channel broadcasts (th_nn_mono_fill: ADD / SUB through the host tables, MUL
with right and left shifts, every int8 value in every column, scale ratios wide enough that
the saturated runs go from none to all), in one firmware run; every output against the NumPy
reference."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from kernels.cases import Op, check_result
from kernels.cases_ops import (
    AddCase,
    MulCase,
    add_params_of,
    imm_shift_mul_cases,
    imm_shift_mul_pairs_cases,
    mul_px_cf_cases,
    mul_sc_cases,
    sep_cases,
    spatial_mul_line_cases,
    spatial_mul_nosign_cases,
    spatial_nosign_cases,
)
from kernels.target import build_firmware, run_cases
from tinyhost.arith.elementwise import (
    AddParams,
    MulParams,
    add_go,
    add_prep,
    collapse_broadcast,
)
from tinyhost.arith.fixedpoint import quantize_multiplier

# (op, first shape, second shape)
_SHAPES = [
    (Op.ADD, (1,), (1,)), (Op.SUB, (37, 3), (37, 3)), (Op.ADD, (6, 2), (2,)),
    (Op.SUB, (2,), (6, 2)), (Op.ADD, (3, 70), (70,)), (Op.SUB, (20, 2), (20, 1)),
    (Op.ADD, (33, 1), (33, 3)), (Op.SUB, (1,), (100,)), (Op.ADD, (1, 6), (4, 1)),
    (Op.MUL, (13, 5), (5,)), (Op.MUL, (33,), (6, 33)), (Op.MUL, (4, 8), (8,)),
    (Op.MUL, (2, 70), (70,)), (Op.MUL, (7, 3), (3,)), (Op.MUL, (24, 10), (1, 10)),
]
# the spatial loops (ADD / SUB with tables; MUL: a left shift every third case)
_SPATIAL = [
    (Op.ADD, (5, 6, 7), (5, 6, 1)), (Op.SUB, (9, 4, 1), (9, 4, 2)),
    (Op.ADD, (3, 5, 1), (3, 5, 33)), (Op.SUB, (4, 3, 9), (4, 3, 1)),
    (Op.ADD, (6, 5, 6), (6, 5, 1)), (Op.SUB, (7, 4, 64), (7, 4, 1)),
    (Op.MUL, (5, 6, 7), (5, 6, 1)), (Op.MUL, (9, 4, 1), (9, 4, 2)),
    (Op.MUL, (4, 3, 9), (4, 3, 1)), (Op.MUL, (2, 2, 1), (2, 2, 36)),
    (Op.MUL, (3, 8, 3), (3, 8, 1)), (Op.MUL, (2, 3, 65), (2, 3, 1)),
]

# same shape through both tables (tab_row: eight a pass, then four, then the last 0..3;
# input1's table doubled on the stack from TH_ADD_TAB_D_MIN = 384 outputs): every n % 8 below
# and above the doubling threshold, ADD and SUB, every clamp (none, lower, both), in place
_SAME = [(Op.ADD if i % 2 else Op.SUB, n) for i, n in
         enumerate([128, 129, 130, 131, 132, 133, 134, 135, 383, 384, 385, 386, 387, 388, 389,
                    390, 391, 392, 1029, 1030])]


def _same_case(i: int, op: Op, n: int) -> AddCase:
    """RELU6 with a bound inside int8 on one or both sides, or none, in turn; every third in
    place."""
    rng = np.random.default_rng(500 + i)
    s1, s2, so = (float(np.float32(rng.uniform(0.01, 0.2))) for _ in range(3))
    z1, z2 = (int(v) for v in rng.integers(-128, 128, 2))
    zo = [-100, 60, 0][i % 3]  # RELU6: 6 / so >= 30, so 60 + 6 / so may pass 127 (lower only)
    lo, hi = (max(-128, zo), min(127, zo + round(6 / so))) if i % 3 != 2 else (-128, 127)
    a = rng.integers(-128, 128, (1, 1, 1, n)).astype(np.int8)
    b = rng.integers(-128, 128, (1, 1, 1, n)).astype(np.int8)
    return AddCase(op, a, b, add_params_of(s1, s2, so, z1, z2, zo, lo, hi), i % 3 == 1,
                   tables=True)


# th_add_s8 / th_sub_s8 without tables, one input linear (multiplier exactly 1/2, TFLite's for
# the larger input scale: one MLA, lrows): (op, first shape, second shape, the linear input:
# 1, 2, 0 both (equal scales), -1 neither (other multipliers: direct_rows)); same shape, per
# column (channel) and per row constants, the advancing input linear or not, SUB either way
_LINEAR = [
    (Op.SUB, (6, 3, 1), (6, 3, 1), 1), (Op.SUB, (6, 3, 1), (6, 3, 1), 2),
    (Op.ADD, (37, 3), (37, 3), 2), (Op.SUB, (37, 3), (37, 3), 0),
    (Op.ADD, (1, 9), (1, 9), -1), (Op.SUB, (5, 7), (5, 7), -1),
    (Op.ADD, (6, 2), (2,), 1), (Op.SUB, (6, 2), (2,), 1), (Op.SUB, (2,), (6, 2), 2),
    (Op.ADD, (2,), (6, 2), 1), (Op.SUB, (3, 40), (40,), 2), (Op.SUB, (40,), (3, 40), 0),
    (Op.ADD, (20, 2), (20, 1), 1), (Op.SUB, (20, 2), (20, 1), 1), (Op.SUB, (20, 1), (20, 3), 2),
    (Op.SUB, (20, 1), (20, 3), 1), (Op.ADD, (11, 5), (11, 1), 2), (Op.SUB, (1, 7), (9, 7), 1),
]


def _linear_case(i: int, op: Op, sa: tuple, sb: tuple, lin: int) -> AddCase:
    """RELU6 every other case; in place every third where the output has the first's
    shape."""
    rng = np.random.default_rng(700 + i)
    big = float(np.float32(rng.uniform(0.1, 0.2)))
    small = float(np.float32(rng.uniform(0.01, 0.09)))
    s1, s2 = {1: (big, small), 2: (small, big), 0: (big, big), -1: (big, small)}[lin]
    so = float(rng.uniform(0.01, 0.2))
    z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
    lo, hi = (max(-128, zo), min(127, zo + round(6 / so))) if i % 2 else (-128, 127)
    p = add_params_of(s1, s2, so, z1, z2, zo, lo, hi)
    if lin == -1:  # neither multiplier 1/2 (the rescaled inputs still within TFLM's bounds)
        m1, e1 = quantize_multiplier(0.3)
        m2, e2 = quantize_multiplier(0.45 * s2 / s1)
        p = AddParams(-z1, -z2, zo, 20, m1, e1, m2, e2, p.output_multiplier, p.output_shift,
                      lo, hi)
    a = rng.integers(-128, 128, (1,) * (4 - len(sa)) + sa).astype(np.int8)
    b = rng.integers(-128, 128, (1,) * (4 - len(sb)) + sb).astype(np.int8)
    in_place = i % 3 == 0 and sa == tuple(np.broadcast_shapes(sa, sb))
    return AddCase(op, a, b, p, in_place)


# output tables: (op, big shape, broadcast shape), the big side first or second in turn
_TABLES = [
    (Op.ADD, (1, 600), (1,)), (Op.SUB, (1, 600), (1,)), (Op.MUL, (1, 600), (1,)),
    (Op.ADD, (256, 5), (5,)), (Op.SUB, (230, 3), (1, 3)), (Op.MUL, (282, 4), (4,)),
    (Op.MUL, (300, 3), (1, 3)), (Op.SUB, (1, 777), (1,)),
    # many channels: the call's acc edges (th_nn_mono_thresholds) shared by every table
    (Op.ADD, (240, 21), (21,)), (Op.SUB, (228, 13), (1, 13)), (Op.SUB, (256, 17), (17,)),
    # no clamp, 8 to 223 rows: down the columns (chan_cols), SUB either side, row tails 0-3
    (Op.SUB, (10, 6), (6,)), (Op.ADD, (27, 9), (1, 9)), (Op.SUB, (8, 33), (33,)),
    (Op.SUB, (43, 5), (5,)), (Op.ADD, (12, 4), (4,)), (Op.ADD, (223, 2), (2,)),
]


def _case(i: int, op: Op, sa: tuple, sb: tuple, spatial: bool = False) -> AddCase | MulCase:
    rng = np.random.default_rng(100 + i)
    s1, s2 = (float(np.float32(rng.uniform(0.01, 0.2))) for _ in range(2))
    zo = int(rng.integers(-128, 128))
    z1, z2 = (-128, 127) if i % 4 == 0 else (int(v) for v in rng.integers(-128, 128, 2))
    relu6 = i % 3 == 0
    # the firmware's records carry 4-D shapes
    a = rng.integers(-128, 128, (1,) * (4 - len(sa)) + sa).astype(np.int8)
    b = rng.integers(-128, 128, (1,) * (4 - len(sb)) + sb).astype(np.int8)
    in_place = spatial and i % 2 == 0 and sa == tuple(np.broadcast_shapes(sa, sb))
    if op is Op.MUL:
        left = spatial and i % 3 == 0
        so = s1 * s2 * float(rng.uniform(0.15, 0.4) if left else  # a left output shift
                             rng.uniform(1.5, 200.0))  # a right output shift
        lo, hi = (max(-128, zo), min(127, zo + round(6 / so))) if relu6 else (-128, 127)
        m, sh = quantize_multiplier(s1 * s2 / so)
        return MulCase(op, a, b, MulParams(-z1, -z2, zo, m, sh, lo, hi), in_place)
    so = float(rng.uniform(0.01, 0.2))
    lo, hi = (max(-128, zo), min(127, zo + round(6 / so))) if relu6 else (-128, 127)
    return AddCase(op, a, b, add_params_of(s1, s2, so, z1, z2, zo, lo, hi), in_place,
                   tables=spatial)


def _table_case(i: int, op: Op, big: tuple, small: tuple) -> AddCase | MulCase:
    """Every int8 value in every column of the big side; the output scale 2^-6..2^12 times
    an input's (MUL: the product's 2^-6..2^9, even cases left shifts), RELU6 every third."""
    rng = np.random.default_rng(300 + i)
    s1, s2 = (float(np.float32(2.0 ** rng.uniform(-8, 0))) for _ in range(2))
    z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
    cols = big[-1] if small[-1] == big[-1] else 1
    x = np.column_stack([np.resize(rng.permutation(np.arange(-128, 128, dtype=np.int8)),
                                   int(np.prod(big)) // cols) for _ in range(cols)])
    x = x.reshape((1,) * (4 - len(big)) + big)
    y = rng.integers(-128, 128, (1,) * (4 - len(small)) + small).astype(np.int8)
    a, b = (x, y) if i % 2 == 0 else (y, x)
    if op is Op.MUL:
        so = s1 * s2 * 2.0 ** (rng.uniform(-6, -1) if i % 2 == 0 else rng.uniform(1, 9))
    else:
        so = s1 * 2.0 ** rng.uniform(-6, 12)
    lo, hi = (max(-128, zo), min(127, zo + round(6 / so))) if i % 3 == 0 else (-128, 127)
    if op is Op.MUL:
        m, sh = quantize_multiplier(s1 * s2 / so)
        return MulCase(op, a, b, MulParams(-z1, -z2, zo, m, sh, lo, hi))
    return AddCase(op, a, b, add_params_of(s1, s2, so, z1, z2, zo, lo, hi), tables=True)


# activation bounds forced inside int8 (the packed clamp of both bounds: USAT with the lower
# bound in the zero point, UQADD8 + UADD8): (op, first shape, second shape, lo, hi), top only
# (lo -128), both, one value (lo == hi), at the ends; same shape through the tables (four and
# eight a pass, every tail, doubled table from 384), channel rows, spatial, scalar, MUL same /
# spatial / channel with right and left output shifts (spatial: the packed halfword loop up
# to a left shift of 6, the row loops past it); in place every third
_BOUNDS = [
    (Op.ADD, (13,), (13,), -128, 60), (Op.SUB, (389,), (389,), -40, 35),
    (Op.ADD, (1031,), (1031,), 0, 0), (Op.SUB, (70,), (70,), -128, -128),
    (Op.ADD, (63,), (63,), 126, 126), (Op.SUB, (7,), (7,), -100, -10),
    (Op.ADD, (9, 40), (40,), -20, 60), (Op.SUB, (40,), (9, 40), -128, 10),
    (Op.SUB, (11, 3), (3,), -5, 5), (Op.ADD, (5, 6, 7), (5, 6, 1), 40, 100),
    (Op.SUB, (4, 3, 1), (4, 3, 9), -100, -10), (Op.SUB, (1,), (45,), -15, 5),
    (Op.MUL, (45,), (45,), -40, 35), (Op.MUL, (1, 47), (1, 47), -128, 0),
    (Op.MUL, (5, 6, 7), (5, 6, 1), -60, 30), (Op.MUL, (13, 5), (5,), 5, 70),
    (Op.MUL, (22,), (22,), -2, -2), (Op.MUL, (4, 3, 9), (4, 3, 1), -128, 100),
    # MUL spatial with left shifts past TH_MUL_SPATIAL_MAX_LEFT (6): the per-row loops
    (Op.MUL, (6, 5, 12), (6, 5, 1), -128, 127), (Op.MUL, (3, 7, 1), (3, 7, 9), -50, 60),
    # channel output tables (from 128 rows with a clamp) with both bounds inside int8, and one value
    (Op.SUB, (230, 9), (9,), -30, 40), (Op.ADD, (8,), (226, 8), 0, 0),
    (Op.ADD, (225, 12), (12,), -128, 20), (Op.SUB, (224, 5), (5,), -20, 30),
    # clamped: tables from 128 rows (TH_ADD_CHAN_LUT_ROWS_CLAMP), 4 channels on (the
    # call's shared edges)
    (Op.ADD, (128, 7), (7,), -40, 50), (Op.SUB, (6,), (127, 6), -20, 30),
    (Op.SUB, (130, 4), (4,), -128, 40),
    # MUL channel tables with a left shift of 7 (e = 0 in the tables' left-shifted inner
    # words, mul_inner_words), long inner runs
    (Op.MUL, (300, 6), (6,), -128, 127), (Op.MUL, (5,), (290, 5), -40, 60),
]


def _bounds_case(i: int, op: Op, sa: tuple, sb: tuple, lo: int, hi: int) -> AddCase | MulCase:
    """Output scale small enough that the outputs cover int8 (both bounds bite); MUL: a left
    output shift every other case."""
    rng = np.random.default_rng(900 + i)
    s1, s2 = (float(np.float32(rng.uniform(0.02, 0.2))) for _ in range(2))
    z1, z2, zo = (int(v) for v in rng.integers(-60, 60, 3))
    a = rng.integers(-128, 128, (1,) * (4 - len(sa)) + sa).astype(np.int8)
    b = rng.integers(-128, 128, (1,) * (4 - len(sb)) + sb).astype(np.int8)
    in_place = i % 3 == 0 and sa == tuple(np.broadcast_shapes(sa, sb))
    if op is Op.MUL:
        so = s1 * s2 * float(rng.uniform(0.2, 0.4) if i % 2 else rng.uniform(20.0, 60.0))
        if i >= 18:  # a left shift of 7
            so = s1 * s2 * float(rng.uniform(0.008, 0.015))
        m, sh = quantize_multiplier(s1 * s2 / so)
        return MulCase(op, a, b, MulParams(-z1, -z2, zo, m, sh, lo, hi), in_place)
    so = 2 * max(s1, s2) / float(rng.uniform(0.5, 2.0))
    return AddCase(op, a, b, add_params_of(s1, s2, so, z1, z2, zo, lo, hi), in_place,
                   tables=True)


# MUL's output tables chosen by their estimated cost (as test_kernels_misc's
# test_mul_table_choices): scalar broadcasts of 209 to 511 outputs (lookup tails of 0-7),
# channel rows from 76 rows (75 below), narrow tables (large products: the tables pay, the
# channel edges by division, each table over the previous channel's) and wide ones, factors
# of both signs and 0, right and left shifts, three activation ranges.
_MUL_CHOICES = [((300,), (1,)), ((1, 250), (1,)), ((2, 220), (1,)), ((480,), (1,)),
                ((120, 7), (7,)), ((1, 150, 12), (1, 1, 12)), ((100, 33), (33,)),
                ((95, 3), (1, 3)), ((263,), (1,)), ((77, 6), (6,)), ((76, 40), (40,)),
                ((75, 9), (9,))]


def _mul_choice_case(i: int) -> MulCase:
    rng = np.random.default_rng(1500 + i)
    big, small = _MUL_CHOICES[i % len(_MUL_CHOICES)]
    first = (i // len(_MUL_CHOICES)) % 2 == 0  # the big side first
    z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
    lo, hi = ((-128, 127), (max(-128, zo), min(127, zo + 40)),
              (int(rng.integers(-128, 0)), int(rng.integers(0, 128))))[(i // 3) % 3]
    shift = int(rng.integers(-9, -4)) if (i // 2) % 2 else int(rng.integers(-1, 4))
    x = rng.integers(-128, 128, (1,) * (4 - len(big)) + big).astype(np.int8)
    y = rng.integers(-128, 128, (1,) * (4 - len(small)) + small).astype(np.int8)
    if y.size > 1 or i % 4 == 0:  # a factor of 0
        y.reshape(-1)[0] = z2 if first else z1
    a, b = (x, y) if first else (y, x)
    return MulCase(Op.MUL, a, b, MulParams(-z1, -z2, zo, int(rng.integers(2**30, 2**31)),
                                           shift, lo, hi))


def test_elementwise_dsp_paths_on_cortex_m4(kernel_fw_root: Path) -> None:
    shapes = _SHAPES + _SPATIAL
    cases = [_case(i, *s, spatial=i >= len(_SHAPES)) for i, s in enumerate(shapes)]
    cases += [_table_case(i, *s) for i, s in enumerate(_TABLES)]
    cases += [_same_case(i, *s) for i, s in enumerate(_SAME)]
    cases += [_linear_case(i, *s) for i, s in enumerate(_LINEAR)]
    cases += [_bounds_case(i, *s) for i, s in enumerate(_BOUNDS)]
    cases += [_mul_choice_case(i) for i in range(4 * len(_MUL_CHOICES))]
    names = [f"{s[0].name} {s[1]} {s[2]}" for s in shapes + _TABLES]
    names += [f"{op.name} same {n}" for op, n in _SAME]
    names += [f"{s[0].name} {s[1]} {s[2]} linear {s[3]}" for s in _LINEAR]
    names += [f"{s[0].name} {s[1]} {s[2]} bounds {s[3]} {s[4]}" for s in _BOUNDS]
    names += [f"MUL choice {i} {_MUL_CHOICES[i % len(_MUL_CHOICES)]}"
              for i in range(4 * len(_MUL_CHOICES))]
    # every case again through th_add_s8_prepared / th_mul_s8_prepared on the host's
    # prepared struct (the driver first compares it with the kernel's, field by field)
    prepared = [(n, replace(c, prepared=True)) for n, c in zip(names, cases, strict=True)
                if c.op in (Op.ADD, Op.SUB, Op.MUL)]
    names += [f"{n} prepared" for n, _ in prepared]
    cases += [c for _, c in prepared]
    fw = build_firmware("mps2-an386", kernel_fw_root, big=True)
    run = run_cases(fw, cases, interleaved=True)
    problems = [f"{name}: {p}" for name, c, r in zip(names, cases, run.results, strict=True)
                if (p := check_result(c, r)) is not None]
    assert not problems, "\n".join(problems)


def named_problems_on_m4(named: Sequence[tuple[str, AddCase | MulCase]],
                         kernel_fw_root: Path) -> list[str]:
    """Run named cases in one Cortex-M4 kernel-firmware run; each mismatch with its name."""
    fw = build_firmware("mps2-an386", kernel_fw_root, big=True)
    run = run_cases(fw, [c for _, c in named], interleaved=True)
    return [f"{name}: {p}" for (name, c), r in zip(named, run.results, strict=True)
            if (p := check_result(c, r)) is not None]


def test_spatial_mul_line_on_cortex_m4(kernel_fw_root: Path) -> None:
    """MUL spatial broadcasts on the host-proven line (th_mul_prep line: one MLA and the
    saturation an output), clamped (biting, hi idle) and unclamped left shifts, either side
    broadcast, C 2-64, every int8 x; each case also with its line dropped (the other loops).
    Prepared: the driver compares the host's struct with th_mul_s8_prepare's up to nosign
    (its line fields "not proven") and runs the host's."""
    named = spatial_mul_line_cases()
    problems = named_problems_on_m4(named, kernel_fw_root)
    assert not problems, "\n".join(problems)


def test_mul_line_asm_loops_on_cortex_m4(kernel_fw_root: Path) -> None:
    """MUL's clamped-line assembly loops (th_mul_s8.c mul_px_run: the host-chosen pixel loop,
    th_mul_prep px; mul_cf_run: the flat channel rows) against the reference: spatial and
    scalar broadcasts with C % 4 of 0-3, channel rows with runs, rows left and single
    outputs, relu6 / relu_n1_to_1 / biting / idle bounds (kernels.cases_ops
    mul_px_cf_cases); prepared (the driver checks px and px_w are 0 in th_mul_s8_prepare's
    fill)."""
    named = mul_px_cf_cases()
    problems = named_problems_on_m4(named, kernel_fw_root)
    assert not problems, "\n".join(problems)


def test_mul_scalar_loop_on_cortex_m4(kernel_fw_root: Path) -> None:
    """MUL's host-chosen int8 scalar loop in assembly (th_mul_prep sc, th_mul_s8.c
    mul_sc_e1..e8: LDM / STM pairs of words, an odd word, the n % 4 last outputs) against the
    reference: e 1-8, either side the scalar, 1-447 outputs, in place too, the scalar's ties
    in x (kernels.cases_ops mul_sc_cases, sc asserted chosen); prepared (the driver checks
    sc and sc_w are 0 in th_mul_s8_prepare's fill)."""
    named = mul_sc_cases()
    problems = named_problems_on_m4(named, kernel_fw_root)
    assert not problems, "\n".join(problems)


def test_spatial_nosign_loops_on_cortex_m4(kernel_fw_root: Path) -> None:
    """The spatial loops with and without the rounding's sign term (th_add_prep /
    th_mul_prep nosign 0, 1, 2: the host's proof picks the loop), ADD / SUB / MUL, either
    side broadcast, every clamp, C 2-64, each pixel holding a tie a wrong loop would change;
    prepared (the driver first compares the host's struct, nosign included, with
    th_*_prepare's)."""
    named = spatial_nosign_cases() + spatial_mul_nosign_cases()
    problems = named_problems_on_m4(named, kernel_fw_root)
    assert not problems, "\n".join(problems)


def test_mul_immediate_shift_loops_on_cortex_m4(kernel_fw_root: Path) -> None:
    """MUL spatial, channel and scalar broadcasts on the loops with e = -shift an immediate
    (spatial_fast_e1..e8, chanv_fast_e1..e8) and e 9 (none: e in a register), the sign term
    needed and placed in every pixel / column (kernels.cases_ops imm_shift_mul_cases)."""
    named = imm_shift_mul_cases()
    problems = named_problems_on_m4(named, kernel_fw_root)
    assert not problems, "\n".join(problems)


def test_mul_spatial_pairs_on_cortex_m4(kernel_fw_root: Path) -> None:
    """MUL spatial rows on the word-pair assembly loops (th_mul_s8.c mul_sp2_e1..e8: C % 8
    == 0, LDRD / STRD), e 1-8, C 8 / 24 / 64 beside C % 8 == 4, a tie in every pixel
    (kernels.cases_ops imm_shift_mul_pairs_cases)."""
    named = imm_shift_mul_pairs_cases()
    problems = named_problems_on_m4(named, kernel_fw_root)
    assert not problems, "\n".join(problems)


def test_separable_add_sub_on_cortex_m4(kernel_fw_root: Path) -> None:
    """ADD / SUB through th_add_prep's separable form on the M4 (kernels.cases_ops sep_cases:
    every sep_mode, spatial / same / channel / scalar, C 1-70, in place, unproven
    parameters); then the proven ones with a C table one step off, which must change the
    output of every case the form runs (the form is taken, in every shape it claims). The
    host's choice of the loop (th_add_prep go, each case's "... go" twin) must be the
    kernel's own: the same loop, minus the choosing (at least 30 instructions a call fewer;
    as many where the host leaves the choice to the kernel)."""
    named = sep_cases()
    wrong = [(n, replace(c, sep_bias=1 << 16)) for n, c in named
             if "sep_mode None" not in n and "output tables" not in n]
    fw = build_firmware("mps2-an386", kernel_fw_root, big=True)
    run = run_cases(fw, [c for _, c in named + wrong], interleaved=True, icount=True)
    results = run.results
    problems = [f"{name}: {p}" for (name, c), r in zip(named, results, strict=False)
                if (p := check_result(c, r)) is not None]
    problems += [f"{name}: a wrong table went unnoticed" for (name, c), r in
                 zip(wrong, results[len(named):], strict=True) if check_result(c, r) is None]
    for i, (name, c) in enumerate(named):
        if not c.go:
            continue
        own, chosen = run.counts[i - 1], run.counts[i]
        assert named[i - 1][1].a is c.a and not named[i - 1][1].go
        prep = add_prep(c.p, *collapse_broadcast(c.a.shape, c.b.shape, c.out_shape),
                        c.op is Op.SUB)
        if "sep_mode None" in name or not add_go(prep, c.tables)["go"]:  # the kernel chooses
            ok = abs(chosen - own) <= 8
        else:
            ok = chosen <= own - 30
        if not ok:
            problems.append(f"{name}: {own} instructions choosing, {chosen} chosen by the host")
    assert not problems, "\n".join(problems)
