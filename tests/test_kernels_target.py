"""C kernels on emulated Cortex-M boards vs the NumPy reference (issue #3).

The test firmware (tests/kernels/firmware) reads the same case records as the host driver
through semihosting, runs them all in one QEMU run per board and writes the outputs back;
they are compared here with the reference. The DSP path must be the one that ran: the
firmware reports its build flags and the ELF's inner loops must contain SMLAD/SXTB16.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from kernels.cases import (
    CONV_OPS,
    DW_OPS,
    FC_OPS,
    Case,
    ConvCase,
    Limits,
    Op,
    RngDraw,
    check_result,
    fc_case,
    random_case,
)
from kernels.harness import (
    BUILD_FLAG_DSP,
    BUILD_FLAG_INTERLEAVED,
    BUILD_FLAG_MVE,
    BUILD_FLAG_NATIVE,
    REPO,
)
from kernels.layers import (
    FEW_CHANNEL_LAYERS,
    REAL_LAYERS,
    layer_case,
    small_cin_cases,
    with_dead_channels,
)
from kernels.sweep import sweep_cases
from kernels.target import build_firmware, fits_small_firmware, function_disassembly, run_cases

pytestmark = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="arm-none-eabi-gcc or qemu-system-arm not installed",
)

DSP_BOARDS = ("mps2-an386", "netduinoplus2", "mps2-an500")  # Cortex-M4, M4F, M7
CASES_PER_BOARD = 1500
OPS = (*CONV_OPS, *DW_OPS, *FC_OPS)
DSP_FUNCTIONS = {  # function -> instructions its DSP build must contain
    "th_nn_mat_mult_s8_s16": ("smlad", "sxtb16", "ldmia", "smmlar"),
    "fc_rows": ("smlad", "sxtab16"),  # th_nn_fc_s8's row loop
    "fc_short_asm": ("smlad", "sxtb16"),  # th_nn_fc_s8, inputs <= 128 (FC_SHORT)
    "th_nn_conv_direct_s8": ("smlad", "sxtab16", "sxtb16"),  # few output channels
    "th_dw_conv_3x3_s8": ("smlad",),
    "dw_rows_s1_even": ("smlad", "smlabt", "smlatb", "smmlar", "ldm"),
    "dw_rows_s2_odd": ("smlad", "smlabt", "smmlar", "ldm"),
    "conv_1x1_k8_pixels": ("smlad", "sxtb16", "ldmia", "smmlar"),
    "dw_row_k2_s2": ("smlad", "smmlar"),  # th_dw_conv_general_s8: any filter, multiplier
}


MVE_BOARD = "mps3-an547"  # Cortex-M55 with Helium
MVE_FUNCTIONS = {  # function -> instructions its Helium build must contain (objdump names
    # VMLADAV without exchange VMLAV)
    "th_nn_mve_pixel_tab": ("vmlava.s8", "vldrb.u8", "vqrdmulh.s32", "vrshl.s32", "vctp.8"),
    "th_nn_mve_pixel2_tab": ("vmlava.s8", "vldrb.u8", "vqrdmulh.s32", "vrshl.s32", "vctp.8"),
    "th_nn_mve_pixel_sums": ("vmlava.s8", "vaddva.s8", "vldrb.u8", "vqrdmulh.s32"),
    "th_nn_mve_kernel_sums": ("vaddva.s8", "vldrb.u8"),
    "fc_mve_short": ("vmlav.s16", "vldrbt.s16", "vqrdmulh.s32", "vstrb.32"),  # FC, cin <= 16
    "quad_narrow": ("vmlav.s8", "vldrb", "vqrdmulh.s32", "vstrb"),  # 4 < K <= 16
    "quad_small_k": ("vmlav", "vldrb", "vqrdmulh.s32", "vstrb"),  # 16 < K <= 32
    "quad_direct": ("vmlav.s8", "vldrb", "vqrdmulh.s32", "vstrb"),  # windows from the input
    "mve_dw_3x3_s1": ("vldrb.s32", "vmla.s32", "vqrdmulh.s32", "vstrb"),
    "mve_dw_3x3_s2": ("vldrb.s32", "vmla.s32", "vqrdmulh.s32", "vstrb"),
    "mve_dw_any": ("vldrb.s32", "vmla.s32", "vqrdmulh.s32", "vstrb"),
    "mve_dw_dot": ("vldrb.u8", "vmlav.s8", "vqrdmulh.s32", "vstrb"),
    "mve_dw_channel_stage": ("vldrb.s16", "vstrb.16"),  # the gather of a channel plane
}


def random_cases(seed: int, count: int) -> list[Case]:
    draw = RngDraw(np.random.default_rng(seed))
    cases: list[Case] = []
    i = 0
    while len(cases) < count:
        case = random_case(draw, OPS[i % len(OPS)])
        i += 1
        if fits_small_firmware(case):
            cases.append(case)
    return cases


def assert_all_match(cases: list[Case], results: list, where: str) -> None:
    problems = []
    for i, (case, result) in enumerate(zip(cases, results, strict=True)):
        problem = check_result(case, result)
        if problem is not None:
            problems.append(f"case {i + 1} {case.op.name}: {problem}")
    assert not problems, f"{where}: {len(problems)} of {len(cases)} mismatch:\n" + "\n".join(
        problems[:10])


@pytest.mark.parametrize("board", DSP_BOARDS)
def test_random_cases_on_dsp_boards(kernel_fw_root: Path, board: str) -> None:
    fw = build_firmware(board, kernel_fw_root)
    cases = random_cases(seed=DSP_BOARDS.index(board), count=CASES_PER_BOARD)
    run = run_cases(fw, cases, interleaved=True)
    expected = BUILD_FLAG_DSP | BUILD_FLAG_INTERLEAVED | BUILD_FLAG_NATIVE
    assert run.build_flags == expected, f"{board} firmware flags {run.build_flags}"
    assert_all_match(cases, run.results, board)
    for function, mnemonics in DSP_FUNCTIONS.items():
        asm = function_disassembly(fw.elf, function)
        for mnemonic in mnemonics:
            assert f"\t{mnemonic}" in asm, f"{board}: {function} has no {mnemonic}"


def test_random_cases_on_the_mve_board(kernel_fw_root: Path) -> None:
    """Cortex-M55: CONV_2D and FULLY_CONNECTED on their Helium paths (plain filters), the
    other kernels on the DSP ones; the MVE kernels really are the ones linked."""
    fw = build_firmware(MVE_BOARD, kernel_fw_root)
    cases = random_cases(seed=55, count=CASES_PER_BOARD)
    run = run_cases(fw, cases, interleaved=False)
    assert run.build_flags == BUILD_FLAG_DSP | BUILD_FLAG_NATIVE | BUILD_FLAG_MVE
    assert_all_match(cases, run.results, MVE_BOARD)
    for function, mnemonics in MVE_FUNCTIONS.items():
        asm = function_disassembly(fw.elf, function, mve=True)
        for mnemonic in mnemonics:
            assert f"\t{mnemonic}" in asm, f"{MVE_BOARD}: {function} has no {mnemonic}"
    for function in ("th_nn_mat_mult_s8_s16", "conv_1x1_k8_pixels", "dw_rows_s1_even",
                     "th_dw_conv_3x3_s8"):  # the DSP conv and depthwise cores: not used
        assert "\tsmlad" not in function_disassembly(fw.elf, function, mve=True)


def test_short_fully_connected_on_the_mve_board(kernel_fw_root: Path) -> None:
    """FULLY_CONNECTED with inputs of 1-16 values (fc_mve_short: the input widened once, no
    sums of weights): per tensor with and without a filter offset, per channel, batches,
    output counts that are not multiples of four."""
    fw = build_firmware(MVE_BOARD, kernel_fw_root)
    draw = RngDraw(np.random.default_rng(56))
    cases = [fc_case(draw, FC_OPS[i % len(FC_OPS)], Limits(max_fc_in=16)) for i in range(240)]
    inputs = {case.x.shape[1] for case in cases}
    assert inputs == set(range(1, 17)), f"input lengths drawn: {sorted(inputs)}"
    assert any(case.p.filter_offset != 0 for case in cases)
    run = run_cases(fw, cases, interleaved=False)
    assert_all_match(cases, run.results, MVE_BOARD)


def test_portable_path_on_cortex_m4(kernel_fw_root: Path) -> None:
    fw = build_firmware("mps2-an386", kernel_fw_root, portable=True)
    cases = random_cases(seed=100, count=500)
    run = run_cases(fw, cases, interleaved=False)
    assert run.build_flags == 0
    assert_all_match(cases, run.results, "mps2-an386 portable")
    fc = function_disassembly(fw.elf, "fc_general")  # th_nn_fc_s8.c's general loop
    assert "<fc_general>:" in fc and "\tsmlad" not in fc


@pytest.mark.parametrize("board", ("mps2-an386", "mps2-an500", MVE_BOARD))
def test_mlperf_tiny_layers_on_target(kernel_fw_root: Path, board: str) -> None:
    fw = build_firmware(board, kernel_fw_root, big=True)
    cases: list[Case] = [layer_case(op, **shape) for _, op, shape in REAL_LAYERS]
    in_place = [layer_case(Op.DW, (24, 24), 16, 16, 3, 2),
                layer_case(Op.CONV, (12, 12), 32, 24, 1, 1),
                layer_case(Op.CONV, (9, 7), 8, 8, 1, 1)]
    # Cin == 8 pointwise: more channels than one 32-record chunk.
    cases.append(layer_case(Op.CONV, (5, 6), 8, 48, 1, 1, seed=3))
    # Near-dead channels (exact fix-up after the block loop), table in scratch and on stack.
    cases.append(with_dead_channels(layer_case(Op.CONV, (6, 6), 128, 128, 1, 1), [0, 9, 127]))
    cases.append(with_dead_channels(layer_case(Op.CONV, (5, 3), 64, 64, 1, 1), [2, 3]))
    # Few input channels (th_conv_small_cin_s8.c): padded column blocks (bp 10, bp 4), with and
    # without the 2-word tail, several tiles of 16 pixels, Cin 1 and 2.
    small_cin = [layer_case(Op.CONV, (9, 40), 3, 8, 3, 1, seed=4),
                 layer_case(Op.CONV, (11, 9), 1, 12, (5, 3), 2, seed=5),
                 layer_case(Op.CONV, (7, 6), 1, 4, 3, 1, seed=6),
                 layer_case(Op.CONV, (8, 8), 2, 16, 3, 2, seed=7)]
    cases += small_cin
    cases += small_cin_cases()  # Cin 1-5: one-row / one-column images, K x 1, VALID
    cases += [type(c)(c.op, c.x, c.w, c.bias, c.p, c.out_shape, True) for c in in_place]
    # Depthwise given the larger scratch: four channels staged per pass (stride 1).
    cases += [dataclasses.replace(c, fast_scratch=True) for c in cases
              if isinstance(c, ConvCase) and c.depthwise]
    # Issue 14's classes: few output channels (the direct path), long odd columns (im2col
    # windows), short fully connected inputs; on the DSP boards the sweep's conv, pointwise
    # and FC shapes.
    cases += [layer_case(op, hw, cin, cout, k, s, seed=cin * cout)
              for op, hw, cin, cout, k, s in FEW_CHANNEL_LAYERS]
    if board != MVE_BOARD:  # (the Helium build's paths are not these)
        cases += [case for kind, case in sweep_cases(0, 30) if kind != "depthwise"]
    else:  # th_nn_mve_conv_s8's four-pixel paths (4 < K <= 32): quads, n < 4 tails, odd
        # Cout, strided and in-place pointwise, im2col windows of one and two vectors
        quads = [layer_case(Op.CONV, (7, 5), 8, 13, 1, 1, seed=11),
                 layer_case(Op.CONV, (6, 7), 16, 9, 1, 2, seed=12),
                 layer_case(Op.CONV, (5, 5), 5, 7, 1, 1, seed=13),
                 layer_case(Op.CONV, (11, 9), 3, 7, 3, 2, seed=14),
                 layer_case(Op.CONV, (6, 7), 5, 3, 2, 1, seed=15),
                 layer_case(Op.CONV, (9, 6), 2, 5, 3, 1, seed=16),
                 # windows read straight from the input (quad_direct): interior quads
                 layer_case(Op.CONV, (12, 21), 3, 13, 3, 1, seed=17),  # two groups
                 layer_case(Op.CONV, (15, 19), 3, 8, 3, 2, seed=18),
                 layer_case(Op.CONV, (10, 13), 4, 3, (2, 3), 1, seed=19),
                 layer_case(Op.CONV, (9, 16), 1, 6, (5, 5), 1, seed=20)]
        cases += quads
        cases += [dataclasses.replace(layer_case(Op.CONV, hw, cin, cout, 1, 1, seed=cin),
                                      in_place=True)  # rule (b): Cout <= Cin, output = input
                  for hw, cin, cout in (((7, 5), 12, 8), ((5, 5), 7, 5), ((3, 3), 16, 16))]
    run = run_cases(fw, cases, interleaved=board != MVE_BOARD)
    assert_all_match(cases, run.results, f"{board} layers")


@pytest.mark.parametrize("cpu,extra", [
    ("cortex-m0", []), ("cortex-m3", []), ("cortex-m4", ["-mfpu=fpv4-sp-d16",
                                                          "-mfloat-abi=hard"]),
    ("cortex-m7", ["-mfpu=fpv5-d16", "-mfloat-abi=hard"]), ("cortex-m33", []),
    ("cortex-m55", []),
])
def test_kernels_compile_cleanly_for_every_core(tmp_path: Path, cpu: str,
                                                extra: list[str]) -> None:
    """-Wall -Wextra -Werror clean on every core the issue names (M0/M3 portable)."""
    sources = sorted((REPO / "kernels_c").rglob("*.c"))
    for src in sources:
        cmd = ["arm-none-eabi-gcc", f"-mcpu={cpu}", "-mthumb", *extra, "-std=c99", "-O2",
               "-Wall", "-Wextra", "-Werror", f"-I{REPO / 'kernels_c' / 'include'}", "-c",
               str(src), "-o", str(tmp_path / (src.stem + ".o"))]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, f"{cpu} {src.name}:\n{proc.stderr}"
    flags_obj = tmp_path / "th_nn_build_flags.o"
    nm = subprocess.run(["arm-none-eabi-objdump", "-d", str(flags_obj)], capture_output=True,
                        text=True, check=True).stdout
    # Cores without the DSP extension report 0 (portable), the others 7.
    has_dsp = cpu not in ("cortex-m0", "cortex-m3")
    assert ("movs\tr0, #7" in nm) == has_dsp, nm
