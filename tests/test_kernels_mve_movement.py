"""Issue 16: the Helium (MVE) paths of the data movement kernels (PAD, CONCATENATION, SPLIT,
TRANSPOSE, STRIDED_SLICE, GATHER, DEPTH_TO_SPACE, SPACE_TO_DEPTH: the tail-predicated copy,
fill, gather and scatter loops of kernels_c/reshape/th_nn_shape.h) and of MAXIMUM / MINIMUM
(VMAX / VMIN) against the NumPy reference on QEMU mps3-an547 (Cortex-M55), random cases
through the kernel test firmware (tests/kernels/cases_movement.py): runs on both sides of
16 bytes, every rank, gathers and scatters at byte, halfword and word offsets, negative slice
steps, broadcasts and in place; and PRELU and SQUARED_DIFFERENCE (exact vector
requantization, both shift signs, every broadcast form). The objdump check shows the Helium
code is the code linked.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import RngDraw, check_result
from kernels.cases_movement import MoveCase, MoveOp, move_case
from kernels.harness import BUILD_FLAG_MVE
from kernels.target import (
    ARENA_CAP,
    RECORD_CAP,
    RESULT_CAP,
    build_firmware,
    function_disassembly,
    run_cases,
)

pytestmark = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="arm-none-eabi-gcc or qemu-system-arm not installed",
)

MVE_BOARD = "mps3-an547"
MVE_FUNCTIONS = {  # function -> instructions its Helium build must contain
    # PAD: fill runs (VDUP, VSTRB) and input runs in WLSTP / LETP loops
    "pad_dim": ("wlstp.8", "vdup.8", "vstrb.8", "vldrb.u8", "letp"),
    "th_concat_s8": ("wlstp.8", "vldrb.u8", "vstrb.8", "letp"),
    "th_split_s8": ("wlstp.8", "vldrb.u8", "vstrb.8", "letp"),
    "th_depth_to_space_s8": ("wlstp.8", "vldrb.u8", "vstrb.8", "letp"),
    # gathers at byte, halfword and word offsets (VIDUP * step), tail-predicated
    "th_strided_slice_s8": ("vidup.u8", "wlstp.16", "wlstp.32", "vldrb.u16", "vstrb.16"),
    "th_transpose_s8": ("vidup.u8", "wlstp.16", "vldrb.u32", "letp"),
    "transpose_by_scatter": ("vidup.u8", "wlstp.8", "vstrb.8", "letp"),
    "max_row": ("wlstp.8", "vmax.s8", "vdup.8", "letp"),
    "min_row": ("wlstp.8", "vmin.s8", "vdup.8", "letp"),
    # PRELU: both branches requantized four lanes at a time, the sign picking one
    "prelu_mve_rr": ("vldrb.s32", "vmul.i32", "vqrdmulh.s32", "vrshl.s32", "vpsel", "vstrb.32"),
    "prelu_mve_ll": ("vshl.s32", "vqrdmulh.s32", "vpsel", "vstrbt.32"),
    # SQUARED_DIFFERENCE: both inputs rescaled, the difference squared, requantized
    "sqdiff_mve_right": ("vldrb.s32", "vqrdmulh.s32", "vsub.i32", "vmul.i32", "vrshl.s32"),
    "sqdiff_mve_left": ("vqrdmulh.s32", "vmul.i32", "vstrbt.32"),
    # a convolution's output rebuilt: the constants copied, the live values scattered
    "th_expand_channels_s8": ("wlstp.8", "vldrh.u16", "vldrbt.s16", "vstrb.16"),
    # GATHER: indices checked by VMINV / VMAXV, one-byte rows gathered at word offsets
    "th_gather_s8": ("vminvt.s32", "vmaxvt.s32", "vldrbt.s32", "vstrbt.32", "wlstp.8"),
}


def fits(case: MoveCase) -> bool:
    record, out = len(case.encode(0)), int(np.prod(case.out_shape))
    return record <= RECORD_CAP and out + 32 <= RESULT_CAP and \
        2 * record + out + 512 <= ARENA_CAP


def random_cases(seed: int, count: int) -> list[MoveCase]:
    draw = RngDraw(np.random.default_rng(seed))
    ops = tuple(MoveOp)
    return [c for i in range(count) if fits(c := move_case(draw, ops[i % len(ops)]))]


def _x(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, shape).astype(np.int8)


def boundary_cases() -> list[MoveCase]:
    """Runs of 15, 16, 17, 31, 32, 33 bytes; transposes whose runs gather at strides of 17
    (the last byte-offset one), 18 and 4000 (halfword offsets), scatter at halfword offsets
    (20x40) and byte offsets (NCHW -> NHWC); slices stepping 17, 18 and 9363 (word offsets)
    and backwards; one-element tensors."""
    out: list[MoveCase] = []
    for i, c in enumerate((15, 16, 17, 31, 32, 33)):
        out.append(MoveCase(MoveOp.PAD, (_x((1, 3, 2, c), i),), (0, 1, 0, 0, 0, 1, 2, 1, -7)))
        out.append(MoveCase(MoveOp.CONCAT, (_x((2, c), i), _x((2, 1), i + 1), _x((2, c), i)),
                            (1,)))
        out.append(MoveCase(MoveOp.MAXIMUM, (_x((1, 2, c), i), _x((1, 2, c), i + 9)), (),
                            True))
        out.append(MoveCase(MoveOp.MINIMUM, (_x((c,), i), _x((3, c), i + 5))))
        out.append(MoveCase(MoveOp.TRANSPOSE, (_x((c, 4, 3), i),), (2, 1, 0)))
    for i, (rows, cols) in enumerate(((20, 17), (20, 18), (2, 4000), (20, 40), (9, 16))):
        out.append(MoveCase(MoveOp.TRANSPOSE, (_x((rows, cols), 20 + i),), (1, 0)))
    out.append(MoveCase(MoveOp.TRANSPOSE, (_x((1, 3, 24, 21), 30),), (0, 2, 3, 1)))
    out.append(MoveCase(MoveOp.TRANSPOSE, (_x((2, 5, 40, 33), 31),), (0, 2, 3, 1)))
    for i, (n, b, s, k) in enumerate(((600, 3, 17, 34), (600, 3, 18, 33), (40, 39, -2, 20),
                                      (9400, 0, 9363, 2), (3000, 5, 150, 19))):
        out.append(MoveCase(MoveOp.STRIDED_SLICE, (_x((2, n), 40 + i),), (0, b, 1, s, 2, k)))
    out.append(MoveCase(MoveOp.PAD, (_x((1,), 50),), (0, 0, 3)))
    out.append(MoveCase(MoveOp.MAXIMUM, (_x((1,), 51), _x((1,), 52))))
    return out


def bad_gathers() -> list[MoveCase]:
    """GATHERs with one index outside [0, 7): first, in a whole vector, in the predicated
    tail, below zero; TFLM fails the op, the kernel must refuse (TH_ERR_ARG) every one."""
    x = _x((1, 2, 7, 1), 60)
    return [MoveCase(MoveOp.GATHER, (x, np.array([idx], np.int32)))
            for idx in ([7, 0, 1, 2, 3], [0, 1, 2, 9, 3, 4], [6, 5, 4, 3, 2, 1, 0, 0, 7],
                        [0, 1, 2, 3, 4, 5, -1])]  # fmt: skip


def assert_all_match(board: str, build_root: Path, batch: list[MoveCase]) -> int:
    """Runs the batch (and bad_gathers) on the board's kernel test firmware; returns its
    build flags."""
    assert all(fits(c) for c in batch)
    bad = bad_gathers()
    run = run_cases(build_firmware(board, build_root), [*batch, *bad], interleaved=False)
    refused = [r.status for r in run.results[len(batch):]]
    assert refused == [1] * len(bad), f"{board}: bad GATHER indices gave status {refused}"
    problems = [f"case {i + 1} {case.op.name} {[t.shape for t in case.inputs]} {case.args}: "
                f"{problem}" for i, (case, result) in enumerate(zip(batch, run.results[:len(batch)],
                                                                    strict=True))
                if (problem := check_result(case, result)) is not None]  # fmt: skip
    assert not problems, f"{board}: {len(problems)} of {len(batch)} mismatch:\n" + "\n".join(
        problems[:10])
    return run.build_flags


def test_mve_movement_on_the_m55(kernel_fw_root: Path) -> None:
    flags = assert_all_match(MVE_BOARD, kernel_fw_root,
                             [*random_cases(seed=160, count=400), *boundary_cases()])
    assert flags & BUILD_FLAG_MVE, f"flags {flags}: not the MVE build"
    elf = build_firmware(MVE_BOARD, kernel_fw_root).elf  # up to date: no rebuild
    for function, mnemonics in MVE_FUNCTIONS.items():
        asm = function_disassembly(elf, function, mve=True)
        for mnemonic in mnemonics:
            assert f"\t{mnemonic}" in asm, f"{MVE_BOARD}: {function} has no {mnemonic}"


def test_same_cases_on_the_dsp_build(kernel_fw_root: Path) -> None:
    """The kernels' other build (Cortex-M4, no Helium) on the same cases: the harness and the
    shared index walks (merged slice dims, the row loop of TRANSPOSE / STRIDED_SLICE)."""
    flags = assert_all_match("mps2-an386", kernel_fw_root,
                             [*random_cases(seed=160, count=200), *boundary_cases()])
    assert not flags & BUILD_FLAG_MVE


def test_case_mix_reaches_the_vector_paths() -> None:
    """The random mix covers what the Helium loops branch on (else a passing run says
    little): every op, runs shorter and longer than 16 bytes and off multiples of 16,
    transposes and slices stepping more than 17 bytes, backwards slices, both broadcast
    sides of MAXIMUM / MINIMUM and in place, GATHER rows of one byte."""
    batch = random_cases(seed=160, count=400)
    assert {c.op for c in batch} == set(MoveOp)
    last = [c.x.shape[-1] for c in batch if c.op in (MoveOp.PAD, MoveOp.CONCAT, MoveOp.SPLIT)]
    assert any(n < 16 for n in last) and any(n > 16 and n % 16 for n in last)
    moves = [c for c in batch if c.op == MoveOp.TRANSPOSE]
    assert any(c.x.shape[c.args[-1] + 1:] and int(np.prod(c.x.shape[c.args[-1] + 1:])) > 17
               for c in moves)  # fmt: skip
    slices = [c for c in batch if c.op == MoveOp.STRIDED_SLICE]
    r = [c.x.ndim for c in slices]
    assert any(c.args[2 * n - 1] < 0 for c, n in zip(slices, r, strict=True))
    assert any(c.args[2 * n - 1] > 1 and c.args[-1] > 16 for c, n in zip(slices, r, strict=True))
    mm = [c for c in batch if c.op in (MoveOp.MAXIMUM, MoveOp.MINIMUM)]
    assert any(c.inputs[0].size == 1 and c.inputs[1].size > 1 for c in mm)
    assert any(c.inputs[1].size < c.inputs[0].size for c in mm)
    assert any(c.in_place for c in mm)
    assert any(c.x.shape[3] == 1 for c in batch if c.op == MoveOp.GATHER)
    prelu = [c for c in batch if c.op == MoveOp.PRELU]
    assert {c.args[4] < 0 for c in prelu} == {c.args[6] < 0 for c in prelu} == {True, False}
    assert any(c.x.shape[-1] > 4 and c.x.shape[-1] % 4 for c in prelu)
    assert any(c.in_place for c in prelu) and any(c.inputs[1].size == 1 for c in prelu)
    sq = [c for c in batch if c.op == MoveOp.SQUARED_DIFFERENCE]
    assert {c.args[9] < 0 for c in sq} == {True, False}  # output shift: right and left
    assert any(c.x.shape[-1] > 4 and c.x.shape[-1] % 4 for c in sq)
    assert any(c.in_place for c in sq) and any(c.x.size == 1 for c in sq)
    expand = [c for c in batch if c.op == MoveOp.EXPAND_CHANNELS]
    assert any(c.x.shape[1] % 8 and c.x.shape[1] > 8 for c in expand)
    assert any(c.x.shape[1] == c.inputs[1].size for c in expand)  # every channel live
