"""Issue 16: the Helium (MVE) paths of AVERAGE_POOL_2D, MAX_POOL_2D, MUL and MEAN against the
NumPy reference on QEMU mps3-an547 (Cortex-M55), random cases through the kernel test firmware
(tests/kernels/cases_ops.py): channel counts on both sides of the 4-, 8- and 16-lane widths,
global and strided windows with SAME / VALID padding, the pools with and without their
separable scratch, MUL's broadcast forms (per channel, spatial, scalar, both scalar, either
side) and in place, MEAN over H and W (the vector path) and other axes, over more than 256
rows, requantization extremes; ADD and SUB (the same broadcast forms, with and without the
host's input tables, in place, TFLM-derived and extreme multipliers and shifts), the LUT
activations' table lookup (lengths off multiples of 16, in place) and int8 SOFTMAX (rows off
multiples of 4 and 16, diff_min cutting rows or not). The same cases on the DSP board
(Cortex-M4) check the harness against the kernels' other build. The objdump check shows the
Helium code is the code linked.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest

from kernels.cases import (
    CONV_OPS,
    DW_OPS,
    Case,
    ConvCase,
    Limits,
    Op,
    RngDraw,
    check_result,
    conv_case,
    dw_case,
)
from kernels.cases_ops import (
    OPS_ADD_LUT_SOFTMAX,
    OPS_PER_ELEMENT,
    AddCase,
    LutCase,
    OpCase,
    SoftmaxCase,
    fits_firmware,
    op_case,
)
from kernels.harness import BUILD_FLAG_MVE
from kernels.layers import layer_case
from kernels.target import (
    build_firmware,
    fits_small_firmware,
    function_disassembly,
    run_cases,
)

T = TypeVar("T")

pytestmark = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="arm-none-eabi-gcc or qemu-system-arm not installed",
)

MVE_BOARD = "mps3-an547"
MVE_FUNCTIONS = {  # functions (space-separated) -> instructions their Helium build must contain
    # the generic entry prepares, then runs the prepared entry (the compiled backend's call)
    "th_maxpool_s8_prepared": ("vmax.s8", "vctp.8", "vldrbt.u8", "vstrbt.8"),
    "avg_direct_mve": ("vldrbt.s16", "vadd.i16", "vmulh.u32", "vstrbt.32"),
    "acc_out": ("vldrht.s32", "vmulh.u32", "vstrbt.32"),
    # th_avgpool_s8 with its separable path, out of line (the stack bound: th_avgpool_s8.c)
    "th_avgpool_s8 avg_separable_image": ("vldrbt.s16", "vldrht.s32", "vstrht.16"),
    "mve_same_right": ("vldrb.s32", "vmul.i32", "vqrdmulh.s32", "vrshl.s32", "vstrb.32"),
    "mve_bcast_left": ("vldrb.s32", "vmul.i32", "vshl.s32", "vqrdmulh.s32", "vstrbt.32"),
    "mean_rc_mve": ("vldrbt.s16", "vadd.i16", "vqrdmulh.s32", "vstrbt.32"),
    "mve_dw_dot2": ("vldrb.u8", "vmlav.s8", "vmlava.s8", "vqrdmulh.s32"),
    # depthwise: taps of 8 channels transposed by a scatter, sums of weights by VADDV; a
    # whole-rows interior staged as one run (gather, scatter to the table's offsets)
    "th_nn_mve_dw_conv_s8": ("vstrbt.8", "vaddv.s8", "vaddva.s8"),
    "mve_dw_channel_stage": ("vldrht.u16", "vstrbt.16", "vldrb.s16", "vstrb.16"),
    # 3x3 stride 1: a 2x2 output block per 4x4-window gather, four VMLADAV, edges predicated
    "mve_dw_dot_2x2": ("vldrb.u8", "vldrbt.u8", "vmlav.s8", "vqrdmulh.s32", "vstrbt.32"),
    # more than 32 taps: per output and filter row one predicated VLDRB and one VMLADAVA
    "mve_dw_rowdot": ("vldrbt.u8", "vmlava.s8", "vqrdmulh.s32", "vstrbt.32"),
    # CONV_2D of one to four output channels: per pixel pair and filter row 16 taps a step
    "few_dot": ("vldrb.u8", "vldrbt.u8", "vmlava.s8"),
    "conv_few_cout": ("vqrdmulh.s32", "vstrbt.32"),
    # inner windows' columns: even and odd taps gathered at 16-bit offsets, narrowed
    "gather_cols": ("vldrb.s16", "vmovnb.i16", "vmovnt.i16", "vstrbt.8"),
    # 16 < K <= 32, four pixels: the columns' two halves, eight VMLADAV(A) per channel
    "quad_wide": ("vldrbt.u8", "vmlav.s8", "vmlava.s8", "vqrdmulh.s32", "vstrb.32"),
    # ADD / SUB: both inputs through the host's tables (VLDRW gathers), or rescaled on the
    # vector; one input broadcast
    "mve_add_tab": ("vldrb.u32", "vldrw.u32", "vqrdmulh.s32", "vrshl.s32", "vstrb.32"),
    "mve_sub_rq": ("vldrb.s32", "vshl.s32", "vqrdmulh.s32", "vsub.i32", "vstrbt.32"),
    "mve_bcast_neg_tab": ("vldrbt.u32", "vldrw.u32", "vsub.i32", "vstrbt.32"),
    # rows shorter than 16: one flat run, the broadcast input by a byte gather at the lanes'
    # channel or pixel (counted on the vector)
    "mve_flat_sub_tab": ("vidup.u32", "vmin.u32", "vldrw.u32", "vsub.i32", "vstrbt.32"),
    # int16 ADD / SUB: four lanes, broadcast inputs loaded once per row
    "mve_sub_row16": ("vldrht.s32", "vqrdmulh.s32", "vrshl.s32", "vsub.i32", "vstrht.32"),
    # LUT activations: 16 lookups per byte gather
    "th_lut_s8": ("vldrb.u8", "vldrbt.u8", "vstrbt.8"),
    # SOFTMAX: row max by VMAXV, exps on four lanes, predicated sum
    "th_nn_sum_of_exps": ("vmaxv.s8", "vqrdmulh.s32", "vqshl.s32", "vaddvat.s32"),
}


def drawn(seed: int, count: int, make: Callable[[RngDraw, int], T],
          keep: Callable[[T], bool]) -> list[T]:  # fmt: skip
    """The first `count` cases make(draw, i) (i = 0, 1, ...) that `keep` accepts."""
    draw = RngDraw(np.random.default_rng(seed))
    out: list[T] = []
    i = 0
    while len(out) < count:
        case = make(draw, i)
        i += 1
        if keep(case):
            out.append(case)
    return out


def cases(seed: int, count: int) -> list[OpCase]:
    return drawn(seed, count, lambda d, i: op_case(d, OPS_PER_ELEMENT[i % 4]), fits_firmware)


def add_lut_softmax_cases(seed: int, count: int) -> list[OpCase]:
    ops = OPS_ADD_LUT_SOFTMAX
    return drawn(seed, count, lambda d, i: op_case(d, ops[i % len(ops)]), fits_firmware)


def dw_17_to_32_taps(seed: int, count: int) -> list[Case]:
    return drawn(seed, count, lambda d, i: dw_case(d, DW_OPS[i % len(DW_OPS)]),
                 lambda c: 16 < c.w.shape[1] * c.w.shape[2] <= 32
                 and fits_small_firmware(c, False))  # fmt: skip


def dw_tap_table_cases(seed: int, count: int) -> list[Case]:
    """Depthwise filters of at most 32 taps (the transposed tap table) on up to 48 channels
    (several 16-channel blocks, tails) and planes around the 256-pixel run limit."""
    limits = Limits(max_hw=14, max_c=48, max_batches=2)
    return drawn(seed, count, lambda d, i: dw_case(d, DW_OPS[i % len(DW_OPS)], limits),
                 lambda c: c.w.shape[1] * c.w.shape[2] <= 32
                 and fits_small_firmware(c, False))  # fmt: skip


def dw_row_dot_cases(seed: int, count: int) -> list[Case]:
    """Depthwise filters of more than 32 taps (by filter rows of at most 16 when rows <= 16
    and dilation along the row 1; else the per-tap path), random geometry and quantization."""
    return drawn(seed, count, lambda d, i: dw_case(d, Op.DW if i % 2 else Op.DW_GENERAL,
                                                   Limits(max_hw=12, max_c=20)),
                 lambda c: c.w.shape[1] * c.w.shape[2] > 32
                 and fits_small_firmware(c, False))  # fmt: skip


def dw_row_dot_boundaries() -> list[Case]:
    """The sweep's worst depthwise shape (5x15 stride 2) and the rows path's limits: 16 rows
    and 17 (per tap), rows of 16 taps and 17 (per tap); in place and not."""
    shapes = [((9, 10), 42, (5, 15), 2), ((18, 5), 6, (16, 3), 1), ((19, 5), 5, (17, 3), 1),
              ((6, 20), 7, (3, 16), 1), ((6, 21), 6, (2, 17), 1), ((8, 9), 19, (7, 7), 1)]
    out: list[Case] = []
    for i, (hw, c, k, s) in enumerate(shapes):
        case = layer_case(Op.DW, hw, c, c, k, s, seed=60 + i)
        out += [case, replace(case, in_place=True)]
    # 5x9 rows two input rows apart (dilation 2 along the columns, no padding there)
    base = layer_case(Op.DW, (20, 9), 6, 6, (5, 9), 1, seed=70)
    dilated = replace(base, p=replace(base.p, dilation_h=2, pad_top=0, pad_bottom=0),
                      out_shape=(1, 12, 9, 6))
    return [*out, dilated]


def dw_run_boundaries() -> list[Case]:
    """SAME 3x3 / 5x5 layers staged as one run (whole rows; the run's table shares the 515
    entries of the narrow outputs' table) or row by row (more pixels than the table has left:
    24x24, 70x7 beside its 493 output entries), pixel counts off multiples of 8, channels off
    multiples of 8 and 16, in place and not; 3x3 stride 1 (2x2 output blocks) at its plane
    width limit, odd and even output sides; one-column outputs."""
    shapes = [((16, 16), 33, 3, 1), ((17, 15), 17, 3, 1), ((16, 17), 20, 3, 1),
              ((6, 6), 128, 3, 1), ((6, 6), 128, 3, 2), ((3, 3), 256, 3, 1),
              ((7, 5), 18, 5, 1), ((5, 3), 31, 3, 2), ((1, 9), 16, (1, 9), 1),
              ((24, 24), 9, 3, 1), ((70, 7), 9, 3, 1), ((36, 7), 10, 3, 1),
              # 3x3 stride 1 by 2x2 blocks (outputs 8+ wide, or more than 512): planes 84
              # wide (the limit) and 85, odd and even rows and columns; narrower: flattened
              ((3, 82), 4, 3, 1), ((3, 83), 4, 3, 1), ((5, 9), 12, 3, 1), ((4, 11), 8, 3, 1),
              ((80, 7), 3, 3, 1), ((1, 1), 20, 3, 1), ((2, 5), 9, 3, 1),
              # one output column (K x 1 on [1, T, 1, C]): run as one row of T outputs
              ((142, 1), 8, (7, 1), 1), ((34, 1), 21, (5, 1), 2), ((5, 1), 3, (4, 1), 1)]
    out: list[Case] = []
    for i, (hw, c, k, s) in enumerate(shapes):
        case = layer_case(Op.DW, hw, c, c, k, s, seed=40 + i)
        out += [case, replace(case, in_place=True)]
    return out


def conv_at_most_4_taps(seed: int, count: int) -> list[Case]:
    return drawn(seed, count, lambda d, i: conv_case(d, CONV_OPS[i % len(CONV_OPS)]),
                 lambda c: c.w[0].size <= 4 and fits_small_firmware(c, False))


def conv_few_cout_cases(seed: int, count: int) -> list[Case]:
    """CONV_2D with one to four output channels (th_nn_mve_conv_s8's few-channel paths): K
    over 32 (pixel pairs, windows read in place or through columns) and pointwise K of 17-32
    (four pixels a step), random geometry, dilation, padding, batches and quantization."""
    def keep(c: Case) -> bool:
        if not isinstance(c, ConvCase) or c.w.shape[0] > 4 or c.w.shape[3] != c.x.shape[3]:
            return False
        k = c.w[0].size
        pointwise = c.w.shape[1:3] == (1, 1) and c.p.pad_top == c.p.pad_left == 0
        return (k > 32 or (pointwise and k > 16)) and fits_small_firmware(c, False)

    return drawn(seed, count, lambda d, i: conv_case(d, CONV_OPS[i % len(CONV_OPS)],
                                                     Limits(max_hw=14, max_c=40)), keep)


def conv_few_cout_boundaries() -> list[Case]:
    """The sweep's worst few-channel shapes, narrower (a 9x1 window on 12 channels, stride 2,
    rows above and below the input; 4x3 on 5; a strided pointwise of 25), window rows of 16 and
    17 bytes, one output column (every pair across two rows), in place."""
    shapes = [((15, 20), 12, 1, (9, 1), 2), ((7, 21), 5, 1, (4, 3), 2), ((10, 13), 25, 1, 1, 2),
              ((9, 7), 8, 2, (5, 2), 1), ((9, 7), 17, 3, (3, 1), 1), ((11, 1), 6, 3, (7, 1), 1),
              ((6, 9), 33, 2, 1, 1), ((5, 6), 20, 3, 1, 1)]
    out: list[Case] = []
    for i, (hw, cin, cout, k, s) in enumerate(shapes):
        case = layer_case(Op.CONV, hw, cin, cout, k, s, seed=80 + i)
        out.append(case)
        if k == 1 and s == 1:  # rule (b): the output over the input
            out.append(replace(case, in_place=True))
    # dilation 2 both ways (runs of Cin along the row), rows above and below the input
    base = layer_case(Op.CONV, (13, 12), 11, 2, 3, 1, seed=90)
    out.append(replace(base, p=replace(base.p, dilation_h=2, dilation_w=2, pad_top=2,
                                       pad_bottom=2, pad_left=2, pad_right=2)))
    assert all(fits_small_firmware(c, False) for c in out)
    return out


def conv_gather_cases(seed: int, count: int) -> list[Case]:
    """CONV_2D with windows of more than one tap and K <= 32 (four pixels a step) or K <= 64
    and more than four output channels (pixel pairs): inner windows' columns gathered at
    16-bit offsets, any dilation; and the sweep's worst shapes of that kind narrowed: 9x1 and
    8x1 windows on one channel, 2x6, a 3x3 on RGB at stride 2 (VWW's first layer), a dilated
    3x2 on 4 channels."""
    def keep(c: Case) -> bool:
        return (isinstance(c, ConvCase) and c.w.shape[3] == c.x.shape[3]
                and (c.w[0].size <= 32 or (c.w[0].size <= 64 and c.w.shape[0] > 4))
                and c.w.shape[1] * c.w.shape[2] > 1
                and fits_small_firmware(c, False))  # fmt: skip

    out = drawn(seed, count, lambda d, i: conv_case(d, Op.CONV if i % 2 else Op.CONV_GENERAL,
                                                    Limits(max_hw=16, max_c=12)), keep)
    shapes = [((20, 16), 1, 33, (9, 1), 1), ((24, 14), 1, 30, (8, 1), 1),
              ((18, 15), 1, 2, (2, 6), 2), ((17, 18), 3, 8, 3, 2), ((9, 10), 2, 5, (7, 1), 1)]
    for i, (hw, cin, cout, k, s) in enumerate(shapes):
        out.append(layer_case(Op.CONV, hw, cin, cout, k, s, seed=100 + i))
    base = layer_case(Op.CONV, (14, 12), 4, 6, (3, 2), 1, seed=110)
    out.append(replace(base, p=replace(base.p, dilation_h=3, dilation_w=2, pad_top=3,
                                       pad_bottom=3, pad_left=1, pad_right=1)))
    assert all(fits_small_firmware(c, False) for c in out[count:])
    return out


def assert_all_match(board: str, build_root: Path, seed: int, count: int,
                     extra: list[Case] | None = None) -> int:  # fmt: skip
    fw = build_firmware(board, build_root)
    batch: list = [*cases(seed, count), *(extra or [])]
    count = len(batch)
    run = run_cases(fw, batch, interleaved=False)
    problems = [f"case {i + 1} {case.op.name}: {problem}"
                for i, (case, result) in enumerate(zip(batch, run.results, strict=True))
                if (problem := check_result(case, result)) is not None]  # fmt: skip
    assert not problems, f"{board}: {len(problems)} of {count} mismatch:\n" + "\n".join(
        problems[:10])
    assert set(OPS_PER_ELEMENT) <= {case.op for case in batch}
    return run.build_flags


def test_mve_pools_mul_mean_on_the_m55(kernel_fw_root: Path) -> None:
    flags = assert_all_match(MVE_BOARD, kernel_fw_root, seed=16, count=800,
                             extra=[*dw_17_to_32_taps(seed=17, count=200),
                                    *conv_at_most_4_taps(seed=18, count=150),
                                    *dw_tap_table_cases(seed=19, count=200),
                                    *dw_run_boundaries(),
                                    *dw_row_dot_cases(seed=20, count=80),
                                    *dw_row_dot_boundaries(),
                                    *conv_few_cout_cases(seed=21, count=120),
                                    *conv_few_cout_boundaries(),
                                    *conv_gather_cases(seed=22, count=140),
                                    *add_lut_softmax_cases(seed=23, count=800)])
    assert flags & BUILD_FLAG_MVE, f"{MVE_BOARD} firmware flags {flags}: not the MVE build"
    elf = build_firmware(MVE_BOARD, kernel_fw_root).elf  # up to date: no rebuild
    for function, mnemonics in MVE_FUNCTIONS.items():
        asm = "".join(function_disassembly(elf, name, mve=True) for name in function.split())
        for mnemonic in mnemonics:
            assert f"\t{mnemonic}" in asm, f"{MVE_BOARD}: {function} has no {mnemonic}"


def test_same_cases_on_the_dsp_build(kernel_fw_root: Path) -> None:
    flags = assert_all_match("mps2-an386", kernel_fw_root, seed=16, count=300,
                             extra=add_lut_softmax_cases(seed=23, count=300))
    assert not flags & BUILD_FLAG_MVE


def test_case_mix_reaches_the_vector_paths() -> None:
    """The random mix covers what the vector paths branch on (else a passing run says little):
    tails, more than 16 channels, global and separable pools, every MUL form, long MEANs."""
    batch = cases(seed=16, count=800)
    pools = [c for c in batch if c.op in (Op.AVGPOOL, Op.MAXPOOL)]
    assert any(c.x.shape[3] % 16 and c.x.shape[3] > 16 for c in pools)
    assert any(c.out_shape[1:3] == (1, 1) for c in pools)
    assert any(not c.no_scratch and c.p.stride_h == 1 and c.p.filter_h > 1 for c in pools)
    muls = [c for c in batch if c.op == Op.MUL]
    assert {c.b.size == 1 for c in muls} == {True, False}
    assert any(c.a.size == 1 and c.b.size > 1 for c in muls) and any(c.in_place for c in muls)
    means = [c for c in batch if c.op == Op.MEAN]
    assert any(c.p.axes == (1, 2) and c.x.shape[1] * c.x.shape[2] > 256 for c in means)


def test_add_lut_softmax_mix_reaches_the_vector_paths() -> None:
    """ADD / SUB cases cover every broadcast form on either side, both ops with and without
    tables, in place, rows off multiples of 4, input and output shifts of 0 and below, fused
    clamps, the int16 kernels; LUT lengths below and above 16 off multiples of 16, in place;
    SOFTMAX (int8 and int16 outputs) rows off multiples of 4 and 16, longer than 256, with
    differences below diff_min."""
    batch = add_lut_softmax_cases(seed=23, count=800)
    adds = [c for c in batch if isinstance(c, AddCase) and c.op in (Op.ADD, Op.SUB)]
    adds16 = [c for c in batch if isinstance(c, AddCase) and c.op in (Op.ADD16, Op.SUB16)]
    assert {c.op for c in adds16} == {Op.ADD16, Op.SUB16}
    assert any(c.a.size != c.b.size for c in adds16) and any(c.p.input1_offset for c in adds16)
    assert any(c.a.size > 16 and c.a.size % 4 for c in adds16)
    assert {(c.op, c.tables) for c in adds} == {(o, t) for o in (Op.ADD, Op.SUB)
                                                for t in (True, False)}  # fmt: skip
    forms = set()
    for c in adds:
        big, small = (c.a, c.b) if c.a.size >= c.b.size else (c.b, c.a)
        side = c.a.size < c.b.size
        if small.size == big.size:
            forms.add(("same", False))
        elif small.size == 1:
            forms.add(("scalar" if big.size > 1 else "both scalar", side))
        elif small.shape[3] == 1:
            forms.add(("spatial", side))
        else:
            forms.add(("channel", side))
    assert {f for f, _ in forms} == {"same", "scalar", "spatial", "channel"}
    # rows shorter than a vector (the flat path): per pixel and per channel, C below 4
    # (two wraps per step) and 4-15, output counts off multiples of 4
    partial = [c for c in adds if c.a.shape != c.b.shape and min(c.a.size, c.b.size) > 1]
    short = [(c, c.a.shape[3] == c.b.shape[3], max(c.a.shape[3], c.b.shape[3]))
             for c in partial]  # (case, per channel, C)
    assert any(not channel and 2 <= n < 4 for _, channel, n in short)
    assert any(channel and 4 <= n < 16 for _, channel, n in short)
    assert any(n < 16 and int(np.prod(c.out_shape)) % 4 for c, _, n in short)
    assert {("channel", True), ("channel", False), ("spatial", True), ("spatial", False)} <= forms
    assert any(c.in_place and c.a.size > 16 for c in adds)
    assert any(c.a.shape[3] % 4 and c.a.shape[3] > 16 for c in adds)
    assert any(c.p.output_shift == 0 for c in adds) and any(c.p.output_shift < 0 for c in adds)
    assert any(c.p.input1_shift == 0 for c in adds) and any(c.p.input2_shift < -20 for c in adds)
    assert any(c.p.activation_min > -128 for c in adds)
    luts = [c for c in batch if isinstance(c, LutCase)]
    assert any(c.x.size < 16 for c in luts) and any(c.x.size > 16 and c.x.size % 16
                                                    for c in luts)  # fmt: skip
    assert any(c.in_place for c in luts)
    soft = [c for c in batch if isinstance(c, SoftmaxCase)]
    assert {c.op for c in soft} == {Op.SOFTMAX, Op.SOFTMAX16}
    assert any(c.x.shape[1] % 16 and c.x.shape[1] > 16 for c in soft)
    assert any(c.x.shape[1] > 256 for c in soft) and any(c.x.shape[1] % 4 for c in soft)
    assert any((c.x.astype(int) - c.x.max(axis=1, keepdims=True) < c.p.diff_min).any()
               for c in soft)  # fmt: skip


def test_depthwise_mix_reaches_the_row_dot_path() -> None:
    """The more-than-32-taps cases reach the rows path and its fallbacks: several 4-output
    steps with a tail, dilation along the columns, strides, batches, both shift signs."""
    dws = [c for c in [*dw_row_dot_cases(seed=20, count=80), *dw_row_dot_boundaries()]
           if isinstance(c, ConvCase)]
    rows = [c for c in dws if c.w.shape[1] <= 16 and c.w.shape[2] <= 16
            and c.p.dilation_w == 1]  # fmt: skip
    assert len(rows) >= 20 and len(dws) > len(rows)
    assert any(c.out_shape[1] * c.out_shape[2] % 4 for c in rows)
    assert any(c.p.dilation_h > 1 for c in rows) and any(c.p.stride_w > 1 for c in rows)
    assert any(c.x.shape[0] > 1 for c in rows) and any(c.in_place for c in rows)
    shifts = np.concatenate([c.p.out_shift for c in rows])
    assert (shifts < 0).any() and (shifts >= 0).any()


def test_depthwise_mix_reaches_the_table_and_run_paths() -> None:
    """The depthwise cases reach what the tap table and the staged run branch on: more than
    one 8-channel block with a tail, 17-32 taps, ch_mult > 1, runs off multiples of 8 and
    interiors over the table's room, both signs of shift, in place."""
    dws = [c for c in [*dw_tap_table_cases(seed=19, count=200), *dw_run_boundaries()]
           if isinstance(c, ConvCase)]
    assert any(c.out_shape[3] > 16 and c.out_shape[3] % 8 for c in dws)
    assert any(16 < c.w.shape[1] * c.w.shape[2] <= 32 and c.out_shape[3] > 16 for c in dws)
    assert any(c.p.ch_mult > 1 and c.out_shape[3] > 16 for c in dws)
    pixels = [c.x.shape[1] * c.x.shape[2] for c in dws]
    assert any(n <= 256 and n % 8 for n in pixels) and any(n > 515 for n in pixels)
    assert any(c.out_shape[2] < 8 and c.out_shape[1] * c.out_shape[2] + 3 + n > 515
               for c, n in zip(dws, pixels, strict=True))  # fmt: skip
    shifts = np.concatenate([c.p.out_shift for c in dws])
    assert (shifts < 0).any() and (shifts >= 0).any()
    assert any(c.in_place and c.out_shape[3] > 16 for c in dws)
    blocks = [c for c in dws if c.w.shape[1:3] == (3, 3) and c.p.stride_h == c.p.stride_w == 1
              and c.p.dilation_h == c.p.dilation_w == 1 and c.out_shape[2] >= 8]  # fmt: skip
    assert any(c.out_shape[1] % 2 and c.out_shape[2] % 2 for c in blocks)
    assert any(c.x.shape[0] > 1 for c in blocks) and any(c.in_place for c in blocks)
    columns = [c for c in dws if c.out_shape[2] == 1 and c.out_shape[1] >= 4
               and c.w.shape[1] * c.w.shape[2] <= 16]  # fmt: skip
    assert any(c.p.stride_h > 1 for c in columns) and any(c.p.dilation_h > 1 for c in columns)
    assert any(c.out_shape[1] % 4 for c in columns) and any(c.in_place for c in columns)


def test_conv_mix_reaches_the_few_channel_paths() -> None:
    """The few-output-channel cases reach what those paths branch on: one to four channels,
    K over 32 in runs longer than 16 bytes and not, rows above and below the input, padding
    along the row (columns), dilation along the row, strides, batches, odd output widths
    (pairs across rows), strided and in-place pointwise of K 17-32, both shift signs."""
    few = [c for c in [*conv_few_cout_cases(seed=21, count=120), *conv_few_cout_boundaries()]
           if isinstance(c, ConvCase)]
    wide = [c for c in few if c.w[0].size > 32]
    assert {c.w.shape[0] for c in wide} == {1, 2, 3, 4}
    assert any(c.w.shape[2] * c.w.shape[3] > 16 for c in wide)
    assert any(c.w.shape[2] * c.w.shape[3] <= 16 for c in wide)
    assert any(c.p.pad_top > 0 and c.p.pad_bottom > 0 for c in wide)
    assert any(c.p.pad_left > 0 for c in wide) and any(c.p.dilation_w > 1 for c in wide)
    assert any(c.p.dilation_h > 1 for c in wide) and any(c.p.stride_h > 1 for c in wide)
    assert any(c.x.shape[0] > 1 for c in wide) and any(c.out_shape[2] % 2 for c in wide)
    pointwise = [c for c in few if 16 < c.w[0].size <= 32 and c.w.shape[1:3] == (1, 1)]
    assert any(c.in_place for c in pointwise) and any(c.p.stride_w > 1 for c in pointwise)
    shifts = np.concatenate([c.p.out_shift for c in few])
    assert (shifts < 0).any() and (shifts >= 0).any()


def test_conv_mix_reaches_the_gathered_columns() -> None:
    """The gathered-column conv cases have inner windows (gathered) and edge ones (im2col) of
    one to four vectors, more than two window rows at K <= 16, K <= 4, odd pixel counts on the
    pairs path, dilation, strides, batches."""
    cases = [c for c in conv_gather_cases(seed=22, count=140) if isinstance(c, ConvCase)]
    inner = [c for c in cases if c.x.shape[1] > (c.w.shape[1] - 1) * c.p.dilation_h + 1
             and c.x.shape[2] > (c.w.shape[2] - 1) * c.p.dilation_w + 1]  # fmt: skip
    assert any(c.w[0].size <= 16 and c.w.shape[1] > 2 for c in inner)
    assert any(c.w[0].size > 16 for c in inner) and any(c.w[0].size <= 4 for c in inner)
    assert any(c.w[0].size > 32 and c.w[0].size % 16 for c in inner)
    assert any(c.w[0].size > 32 and c.out_shape[1] * c.out_shape[2] % 2 for c in inner)
    assert any(c.p.dilation_h > 1 or c.p.dilation_w > 1 for c in inner)
    assert any(c.p.pad_top > 0 and c.p.pad_left > 0 for c in inner)
    assert any(c.p.stride_h > 1 for c in inner) and any(c.x.shape[0] > 1 for c in inner)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_pools_elementwise_graph_on_the_m55(backend: str, tmp_path: Path) -> None:
    """Issue 14's pools / MEAN / ADD / SUB / MUL graph through both backends on mps3-an547:
    the Helium paths as the firmware links them, every layer bit-exact with the reference."""
    from graph_on_device import assert_device_matches_reference, int8_inputs
    from test_pools_elementwise_on_device import pools_elementwise_graph

    graph = pools_elementwise_graph()
    assert_device_matches_reference(graph, int8_inputs(graph, 6), MVE_BOARD, backend,
                                    tmp_path / backend)
