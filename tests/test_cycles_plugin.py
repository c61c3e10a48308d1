"""The icount plugin's class mode on QEMU: a hand-written Thumb-2 sequence between two marks is
counted exactly as `cycles.count_classes` counts the same sequence classified by hand, and a
real model's per-op counters add up to its exact instruction counts."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tinyhost.deploy.cycles import CoreModel, Insn, count_classes, cycles
from tinyhost.deploy.icount import MarkLog, mark_plugin
from tinyhost.deploy.qemu import run_semihosted
from tinyhost.deploy.runner import run_model
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed")  # fmt: skip

# The window between the marks: the source, and what executes, classified by hand from the
# TRM's table (the loop runs twice: taken, then not taken).
SOURCE = """    ldr r0, [r1]
    ldr r2, [r1, #4]
    adds r3, r0, r2
    smlad r4, r0, r2, r3
    str r4, [r1, #8]
    push {r4, r5, r6}
    pop {r4, r5, r6}
    ldrd r4, r5, [r1]
    udiv r6, r4, r5
    movs r7, #2
1:  subs r7, #1
    bne 1b
    add r0, r0, r0
    ldr r3, [r1]
    add r0, r0, r3"""
EXECUTED = [Insn("load"), Insn("load"), Insn("alu"), Insn("mul"), Insn("store"),
            Insn("stm", regs=3), Insn("ldm", regs=3), Insn("ldm", regs=2), Insn("div"),
            Insn("alu"), Insn("alu"), Insn("branch", taken=True), Insn("alu"), Insn("branch"),
            Insn("alu"), Insn("load"), Insn("alu")]  # fmt: skip

PROGRAM = """
    .syntax unified
    .thumb
    .section .vectors, "a"
    .word 0x20010000
    .word reset
    .text
    .thumb_func
    .global th_icount_mark
th_icount_mark:
    bx lr
    .thumb_func
reset:
    ldr r1, =0x20000000
    movs r0, #7
    str r0, [r1]
    movs r0, #3
    str r0, [r1, #4]
    bl th_icount_mark
{body}
    bl th_icount_mark
    movs r0, #0x18
    ldr r1, =0x20026
    bkpt 0xab
"""
LINKER = "SECTIONS { . = 0x0; .vectors : { *(.vectors) } .text : { *(.text*) } }\n"


def test_plugin_counts_a_hand_written_sequence_like_the_model(tmp_path: Path) -> None:
    got, total = _window_counters(tmp_path, SOURCE, "cortex-m4", "mps2-an386")
    # The window: the first mark's `bx lr` (taken), the sequence, the `bl` to the second mark
    want = count_classes([Insn("branch", taken=True), *EXECUTED, Insn("branch", taken=True)])
    assert got == want
    assert got.instructions == total


# Helium (Cortex-M55): QEMU's disassembler does not know MVE, so the plugin classifies these
# from their encodings. r2 = 20 bytes: the tail-predicated loop runs twice (16 + 4 lanes).
SOURCE_MVE = """    vldrb.s8 q0, [r1]
    vldrw.u32 q1, [r1, #16]
    vmla.s32 q1, q0, r2
    vmladav.s8 r4, q0, q0
    vqrdmulh.s32 q1, q1, r2
    vadd.i32 q1, q1, q0
    vstrb.8 q1, [r1, #32]
    add r0, r0, r0
    dlstp.8 lr, r2
1:  vldrb.u8 q2, [r1], #16
    vstrb.8 q2, [r1, #32]
    letp lr, 1b
    ldr r3, [r1]"""
EXECUTED_MVE = [Insn("vmem"), Insn("vmem"), Insn("vop"), Insn("vop"), Insn("vop"), Insn("vop"),
                Insn("vmem"), Insn("alu"), Insn("lob"), Insn("vmem"), Insn("vmem"),
                Insn("lob", taken=True), Insn("vmem"), Insn("vmem"), Insn("lob"),
                Insn("load")]  # fmt: skip
MVE_SETUP = """    ldr r0, =0xE000ED88
    ldr r3, =0x00F00000
    str r3, [r0]
    dsb
    isb
    movs r2, #20
"""


def _window_counters(tmp_path: Path, body: str, cpu: str, board: str, setup: str = ""):
    src = tmp_path / "seq.S"
    src.write_text(PROGRAM.format(body=body).replace("reset:\n", "reset:\n" + setup, 1))
    (tmp_path / "seq.ld").write_text(LINKER)
    elf = tmp_path / "seq.elf"
    subprocess.run(["arm-none-eabi-gcc", f"-mcpu={cpu}", "-mthumb", "-nostdlib",
                    "-T", str(tmp_path / "seq.ld"), str(src), "-o", str(elf)],
                   check=True)  # fmt: skip
    out = tmp_path / "marks.txt"
    plugin = mark_plugin(elf, out, classes=True)
    assert plugin is not None
    result = run_semihosted(elf, board, plugin=plugin)
    assert result.exit_code == 0, result.stderr
    log = MarkLog(out)
    totals = log.take()
    assert len(totals) == 2 and len(log.counters) == 2
    return log.counters[1] - log.counters[0], totals[1] - totals[0]


def test_plugin_classifies_helium_and_loop_instructions_by_encoding(tmp_path: Path) -> None:
    got, total = _window_counters(tmp_path, SOURCE_MVE, "cortex-m55", "mps3-an547", MVE_SETUP)
    want = count_classes([Insn("branch", taken=True), *EXECUTED_MVE,
                          Insn("branch", taken=True)])  # fmt: skip
    assert got == want
    assert (got.vmem, got.vop, got.lob, got.voverlap, got.lob_taken) == (7, 4, 3, 2, 1)
    assert got.instructions == total
    m55 = cycles(got, CoreModel("cortex-m55", refill=2))
    # By hand: 11 vector instructions x 2 - 2 overlaps = 20; 3 loop instructions; the scalar
    # add 1 and load 2; the mark's bx lr and the bl: 2 x (1 + 2 refill); the taken LETP: none.
    assert m55 == 20 + 3 + 1 + 2 + 6


@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_per_op_counters_add_up_to_the_exact_counts(board: str) -> None:
    graph = read_model(REPO / "tests" / "models" / "kws_dscnn_int8.tflite")
    x = np.random.default_rng(0).integers(-128, 128, graph.tensors[graph.inputs[0]].shape)
    report = run_model(graph, board, [[x.astype(np.int8)]], classes=True,
                       work_dir=REPO / "build" / f"test_cycles_plugin-{board}")  # fmt: skip
    run = report.runs[0]
    assert run.classes is not None and run.classes_per_op is not None
    marker_calls = 2  # each op's window also holds a mark's `bx lr` and the next `bl`
    for counts, exact in zip(run.classes_per_op, run.latency.per_op, strict=True):
        assert counts.instructions == exact + marker_calls
    core = "cortex-m4" if board == "mps2-an386" else "cortex-m55"
    estimate = cycles(run.classes, CoreModel(core))
    assert run.classes.instructions < estimate < 3 * run.classes.instructions
    helium = run.classes.vmem + run.classes.vop
    if board == "mps3-an547":  # the Helium kernels: most of the work in vector instructions
        assert helium > run.classes.instructions // 10 and run.classes.voverlap > 0
    else:
        assert helium == 0 and run.classes.lob == 0
