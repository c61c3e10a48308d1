"""Issue 16: the Helium paths added for the sweep's worst shapes, against the NumPy reference
on QEMU mps3-an547 (Cortex-M55), one kernel-firmware run:

- depthwise filters of more than 32 taps by groups of taps (mve_dw_rowdot): filter rows read
  contiguously (with and without a predicate at the plane's end), rows gathered at offsets
  kx * DW (dilation along the row), runs of 16 taps in raster order (few filter columns, rows
  longer than 16 taps);
- depthwise staging: a plane that ends before the input's last rows (negative bottom padding),
  interiors whose plane rows are the input's (one contiguous run: K x 1 on [N, T, 1, C], valid
  1 x K), whole rows staged without a predicate (width >= 8, not a multiple of 8);
- FULLY_CONNECTED of 16 < K <= 32 with output channels across the lanes (pixel_narrow):
  16-channel blocks and 1-15 channel tails, per-tensor with a filter offset and per-channel
  (K <= 16 takes fc_mve_short: tests/test_kernels_target.py);
- depthwise windows read straight from the input (no padding, output apart: the rows and
  column dot paths without staging), and in place (staged);
- the sweep's former worst shapes of those kinds (seeds 0-3), and its worst CONV_2D shapes
  (edge windows through im2col: one run copied per window row; the random edge cases of
  test_kernels_mve_ops.py cover it too).

Random geometry, padding, strides, dilation, batches, ch_mult, in place, quantization. The
coverage test checks (in Python, mirroring the C choices) that the mix reaches every branch;
the objdump check that the Helium code is the code linked.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import (
    DW_OPS,
    Case,
    ConvCase,
    FcCase,
    Limits,
    Op,
    RngDraw,
    check_result,
    dw_case,
    fc_case,
)
from kernels.harness import BUILD_FLAG_MVE
from kernels.layers import layer_case
from kernels.sweep import describe, sweep_cases
from kernels.target import build_firmware, function_disassembly, run_cases
from test_kernels_mve_ops import drawn

pytestmark = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="arm-none-eabi-gcc or qemu-system-arm not installed",
)

MVE_BOARD = "mps3-an547"
BIG_RECORD, BIG_RESULT = 131_072, 49_152 - 32  # the big kernel firmware's buffers
MVE_FUNCTIONS = {  # function -> instructions its Helium build must contain
    # groups of taps: contiguous rows (plain and predicated), gathered rows and runs
    "mve_dw_rowdot": ("vldrb.u8", "vldrbt.u8", "vmlava.s8", "vqrdmulh.s32"),
    # short FULLY_CONNECTED rows: weight gathers, VMLA by x + input_offset
    "pixel_narrow": ("vldrb.s32", "vmla.s32", "vqrdmulh.s32", "vstrb.32"),
}
# The sweep's former worst shapes (ratio DSP / MVE instructions below 1.5 before).
SWEEP_SHAPES = {
    0: ("142x1x8->142x1x8 k7x1 s1x1 same", "7x55x5->2x28x1 k4x3 s2x2 same"),
    1: ("68x1x60->20x1x60 k8x1 s2x1 d4x1 same", "12x13x10->6x7x10 k5x9 s2x2 d3x3 same",
        "41x8x58->10x8x58 k12x5 s3x1 same", "32x13x62->16x13x62 k1x6 s2x1 same",
        "28x28x23->14x14x23 k3x3 s2x2 same", "61x25x1->31x13x4 k7x7 s2x2 same",
        "21x17x4->21x17x7 k3x3 s1x1 same"),
    2: ("11x4x13->11x2x13 k14x13 s1x2 d2x3 same", "59x1x14->30x1x14 k5x1 s2x1 same",
        "19->142 per-tensor", "28->168 per-tensor"),
    3: ("21x44x44->7x11x44 k7x12 s3x1 d2x3 same", "52x1x5->26x1x1 k4x4 s2x2 same"),
}


def fits(case: Case) -> bool:
    return (len(case.encode(0, False)) <= BIG_RECORD
            and int(np.prod(case.out_shape)) <= BIG_RESULT)  # fmt: skip


# ---- Python statements of the C choices (th_nn_mve_s8.c), for the coverage checks

def plane(c: ConvCase) -> tuple[int, int]:
    """(PH, PW): the staged plane the outputs read."""
    p, (kh, kw) = c.p, c.w.shape[1:3]
    return ((c.out_shape[1] - 1) * p.stride_h + (kh - 1) * p.dilation_h + 1,
            (c.out_shape[2] - 1) * p.stride_w + (kw - 1) * p.dilation_w + 1)


def groups_mode(c: ConvCase) -> str | None:
    """mve_dw_groups_pick: 'runs', 'rows gathered', 'rows' or None (not that path)."""
    kh, kw = c.w.shape[1:3]
    taps = kh * kw
    if taps <= 32:
        return None
    _, pw = plane(c)
    dh, dw = c.p.dilation_h, c.p.dilation_w

    def offset(t: int) -> int:
        return (t // kw) * dh * pw + (t % kw) * dw if t < taps else 0

    def fit(length: int) -> int:  # groups, 0 if they do not fit
        n = -(-taps // length)
        if n > 16 or length > 16:
            return 0
        for g in range(n):
            base = offset(g * length)
            if any(offset(g * length + j) - base > 255
                   for j in range(min(length, taps - g * length))):  # fmt: skip
                return 0
        return n

    runs = fit(16)
    if runs and (17 * runs < 14 * kh or kw > 16 or kh > 16):
        return "runs"
    if fit(kw):
        return "rows gathered" if dw > 1 else "rows"
    return None


def cropped(c: ConvCase) -> bool:
    """The plane ends before the input's last rows (whole rows staged up to it)."""
    ph, pw = plane(c)
    return (c.p.pad_left + c.x.shape[2] <= pw and c.p.pad_top < ph
            and c.p.pad_top + c.x.shape[1] > ph)  # fmt: skip


def direct(c: ConvCase) -> bool:
    """Windows read straight from the input (the rows and column dot paths: at most 16 taps
    within 256 bytes of the input, no padding, output apart from the input)."""
    kh, kw = c.w.shape[1:3]
    ph, pw = plane(c)
    cin, (oh, ow) = c.x.shape[3], c.out_shape[1:3]
    span = (kh - 1) * c.p.dilation_h * c.x.shape[2] * cin + (kw - 1) * c.p.dilation_w * cin
    two_by_two = (kh, kw) == (3, 3) and c.p.stride_w == 1 and c.p.dilation_w == 1 and pw <= 84
    column = ow == 1 and oh >= 4
    return (kh * kw <= 16 and span <= 255 and c.p.pad_top == 0 and c.p.pad_left == 0
            and ph <= c.x.shape[1] and pw <= c.x.shape[2] and not c.in_place
            and (column or (ow >= 8 and not two_by_two)))  # fmt: skip


def contiguous(c: ConvCase) -> bool:
    """The interior's plane rows are the input's: staged as one gathered run."""
    ph, pw = plane(c)
    return c.p.pad_left == 0 and c.x.shape[2] == pw and c.p.pad_top < ph


# ---- the cases

def dw_group_cases(seed: int, count: int) -> list[Case]:
    """More than 32 taps: random geometry (a third of them dilated along the row)."""
    def make(d: RngDraw, i: int) -> ConvCase:
        c = dw_case(d, Op.DW if i % 2 else Op.DW_GENERAL, Limits(max_hw=14, max_c=20))
        if i % 3 == 0 and c.p.dilation_w == 1 and c.w.shape[2] > 1:
            dw = 2 + i % 3  # the same window, dilated along the row
            pw = (c.out_shape[2] - 1) * c.p.stride_w + (c.w.shape[2] - 1) * dw + 1
            pl = min(c.p.pad_left, pw - 1)
            c = replace(c, p=replace(c.p, dilation_w=dw, pad_left=pl,
                                     pad_right=pw - c.x.shape[2] - pl))
        return c

    return drawn(seed, count, make, lambda c: groups_mode(c) is not None and fits(c)
                 and c.p.pad_right >= -c.p.dilation_w * (c.w.shape[2] - 1))  # fmt: skip


def dw_group_boundaries() -> list[Case]:
    """Runs of 16 (12x5: four runs for twelve rows; 2x24: rows over 16 taps), gathered rows
    at the 255-byte span (15 x 3 taps: 14 * 18 = 252 of 256), rows of 16, in place."""
    out: list[Case] = []
    shapes = [((20, 8), 9, (12, 5), 3, (1, 1)), ((7, 30), 5, (2, 24), 1, (1, 1)),
              ((10, 12), 6, (3, 15), 1, (1, 18)), ((9, 20), 4, (3, 16), 2, (2, 1)),
              ((16, 6), 17, (14, 3), 1, (1, 2))]
    for i, (hw, ch, k, s, (dh, dw)) in enumerate(shapes):
        base = layer_case(Op.DW, hw, ch, ch, k, s, seed=200 + i)
        kh, kw = base.w.shape[1:3]
        oh = (hw[0] + base.p.pad_top + base.p.pad_bottom - (kh - 1) * dh - 1) // s + 1
        ow = (hw[1] + base.p.pad_left + base.p.pad_right - (kw - 1) * dw - 1) // s + 1
        if oh < 1 or ow < 1:
            pt, pl = (kh - 1) * dh, (kw - 1) * dw
            oh, ow = (hw[0] + pt - 1) // s + 1, (hw[1] + pl - 1) // s + 1
            p = replace(base.p, pad_top=pt // 2, pad_left=pl // 2)
        else:
            p = base.p
        p = replace(p, dilation_h=dh, dilation_w=dw,
                    pad_bottom=(oh - 1) * s + (kh - 1) * dh + 1 - hw[0] - p.pad_top,
                    pad_right=(ow - 1) * s + (kw - 1) * dw + 1 - hw[1] - p.pad_left)
        case = replace(base, p=p, out_shape=(1, oh, ow, ch))
        out += [case, replace(case, in_place=True)]
    return out


def dw_staging_cases(seed: int, count: int) -> list[Case]:
    """Random depthwise cases whose staging takes the new branches (cropped planes, one
    contiguous run), with and without in place and ch_mult."""
    return drawn(seed, count, lambda d, i: dw_case(d, DW_OPS[i % len(DW_OPS)],
                                                   Limits(max_hw=16, max_c=20)),
                 lambda c: (cropped(c) or contiguous(c)) and fits(c))  # fmt: skip


def dw_direct_cases(seed: int, count: int) -> list[Case]:
    """Valid (unpadded) depthwise cases of at most 16 taps whose windows are read from the
    input (and the same in place, which stages instead)."""
    def make(d: RngDraw, i: int) -> ConvCase:
        c = dw_case(d, DW_OPS[i % len(DW_OPS)], Limits(max_hw=20, max_c=12))
        kh, kw = c.w.shape[1:3]
        oh = (c.x.shape[1] - (kh - 1) * c.p.dilation_h - 1) // c.p.stride_h + 1
        ow = (c.x.shape[2] - (kw - 1) * c.p.dilation_w - 1) // c.p.stride_w + 1
        p = replace(c.p, pad_top=0, pad_left=0,
                    pad_bottom=(oh - 1) * c.p.stride_h + (kh - 1) * c.p.dilation_h + 1
                    - c.x.shape[1],
                    pad_right=(ow - 1) * c.p.stride_w + (kw - 1) * c.p.dilation_w + 1
                    - c.x.shape[2])  # fmt: skip
        return replace(c, p=p, out_shape=(c.x.shape[0], max(oh, 1), max(ow, 1),
                                          c.out_shape[3]), in_place=False)

    cases = drawn(seed, count, make, lambda c: min(c.out_shape[1:3]) >= 1 and direct(c)
                  and (c.x.shape[1] - (c.w.shape[1] - 1) * c.p.dilation_h >= 1)
                  and (c.x.shape[2] - (c.w.shape[2] - 1) * c.p.dilation_w >= 1)
                  and fits(c))  # fmt: skip
    return [*cases, *[replace(c, in_place=True) for c in cases[::4] if c.p.ch_mult == 1]]


def dw_staging_boundaries() -> list[Case]:
    """Whole rows staged without a predicate (rows of 9-27 pixels, more pixels than the
    run table holds), a cropped plane of whole rows, K x 1 and 1 x K on 1-D tensors."""
    out: list[Case] = []
    for i, (hw, c, k, s) in enumerate([((24, 27), 9, 3, 2), ((40, 17), 5, 3, 1),
                                       ((60, 9), 3, (5, 3), 2), ((70, 1), 12, (5, 1), 2),
                                       ((1, 75), 33, (1, 3), 2), ((150, 1), 17, (7, 1), 1)]):
        case = layer_case(Op.DW, hw, c, c, k, s, seed=300 + i)
        out += [case, replace(case, in_place=True)]
    # valid padding with rows left over at the bottom: the plane ends before the input
    base = layer_case(Op.DW, (30, 12), 7, 7, (4, 3), 3, seed=310)
    oh = (30 - 4) // 3 + 1
    crop = replace(base, p=replace(base.p, pad_top=0, pad_bottom=(oh - 1) * 3 + 4 - 30),
                   out_shape=(1, oh, base.out_shape[2], 7))
    return [*out, crop, replace(crop, in_place=True)]


def fc_narrow_cases(seed: int, count: int) -> list[Case]:
    """16 < K <= 32 and at least 8 output channels: blocks of 16 and tails, both
    quantizations."""
    return drawn(seed, count,
                 lambda d, i: fc_case(d, Op.FC_PER_CHANNEL if i % 2 else Op.FC,
                                      Limits(max_fc_in=32, max_fc_out=70)),
                 lambda c: 16 < c.w.shape[1] <= 32 and c.w.shape[0] >= 8)


def sweep_worst() -> list[Case]:
    out: list[Case] = []
    for seed, shapes in SWEEP_SHAPES.items():
        found = {describe(c): c for _, c in sweep_cases(seed, 30)}
        out += [found[s] for s in shapes]
    return out


def all_cases() -> list[Case]:
    return [*dw_group_cases(seed=161, count=60), *dw_group_boundaries(),
            *dw_staging_cases(seed=162, count=80), *dw_staging_boundaries(),
            *dw_direct_cases(seed=164, count=40),
            *fc_narrow_cases(seed=163, count=80), *sweep_worst()]


def test_worst_shape_paths_on_the_m55(kernel_fw_root: Path) -> None:
    batch = all_cases()
    assert all(fits(c) for c in batch)
    fw = build_firmware(MVE_BOARD, kernel_fw_root, big=True)
    run = run_cases(fw, batch, interleaved=False)
    assert run.build_flags & BUILD_FLAG_MVE, f"firmware flags {run.build_flags}: not MVE"
    problems = [f"case {i + 1} {describe(case)}: {problem}"
                for i, (case, result) in enumerate(zip(batch, run.results, strict=True))
                if (problem := check_result(case, result)) is not None]  # fmt: skip
    assert not problems, f"{len(problems)} of {len(batch)} mismatch:\n" + "\n".join(
        problems[:10])
    for function, mnemonics in MVE_FUNCTIONS.items():
        asm = function_disassembly(fw.elf, function, mve=True)
        for mnemonic in mnemonics:
            assert f"\t{mnemonic}" in asm, f"{MVE_BOARD}: {function} has no {mnemonic}"


def test_worst_shape_mix_reaches_every_branch() -> None:
    dws = [c for c in all_cases() if isinstance(c, ConvCase) and c.depthwise]
    modes = [groups_mode(c) for c in dws]
    assert {"runs", "rows gathered", "rows"} <= set(modes)
    grouped = [c for c, m in zip(dws, modes, strict=True) if m is not None]
    assert any(c.w.shape[2] > 16 for c in grouped)  # rows longer than 16 taps: runs
    assert any(c.in_place for c in grouped) and any(c.x.shape[0] > 1 for c in grouped)
    assert any(c.p.ch_mult > 1 for c in grouped)
    assert any(c.out_shape[1] * c.out_shape[2] % 4 for c in grouped)
    shifts = np.concatenate([c.p.out_shift for c in grouped])
    assert (shifts < 0).any() and (shifts >= 0).any()
    assert sum(cropped(c) for c in dws) >= 10 and sum(contiguous(c) for c in dws) >= 10
    reads = [c for c in dws if direct(c)]
    assert any(c.out_shape[2] == 1 for c in reads) and any(c.out_shape[2] >= 8 for c in reads)
    assert any(c.p.ch_mult > 1 for c in reads) and any(c.x.shape[0] > 1 for c in reads)
    assert any(c.p.stride_w > 1 or c.p.stride_h > 1 for c in reads)
    assert any(c.p.dilation_h > 1 or c.p.dilation_w > 1 for c in reads)
    assert any(c.out_shape[2] % 4 for c in reads)
    assert any(cropped(c) and c.in_place for c in dws)
    assert any(contiguous(c) and c.in_place for c in dws)
    assert any(contiguous(c) and c.x.shape[2] == 1 and c.out_shape[1] >= 4 for c in dws)
    rows = [c for c in dws if not contiguous(c) and c.p.pad_left + c.x.shape[2] <= plane(c)[1]
            and c.x.shape[2] >= 8 and c.x.shape[2] % 8 and c.x.shape[1] * c.x.shape[2] > 515]
    assert len(rows) >= 2
    fcs = [c for c in all_cases() if isinstance(c, FcCase) and 16 < c.w.shape[1] <= 32]
    assert any(c.w.shape[0] % 16 for c in fcs) and any(c.w.shape[0] < 16 for c in fcs)
    assert any(c.w.shape[0] >= 32 for c in fcs) and any(c.x.shape[0] > 1 for c in fcs)
    assert any(c.op == Op.FC_PER_CHANNEL for c in fcs)
    assert any(c.op == Op.FC and c.p.filter_offset != 0 for c in fcs)
    assert any(c.bias is None for c in fcs) and any(c.bias is not None for c in fcs)
