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
    src = tmp_path / "seq.S"
    src.write_text(PROGRAM.format(body=SOURCE))
    (tmp_path / "seq.ld").write_text(LINKER)
    elf = tmp_path / "seq.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib",
                    "-T", str(tmp_path / "seq.ld"), str(src), "-o", str(elf)],
                   check=True)  # fmt: skip
    out = tmp_path / "marks.txt"
    plugin = mark_plugin(elf, out, classes=True)
    assert plugin is not None
    result = run_semihosted(elf, "mps2-an386", plugin=plugin)
    assert result.exit_code == 0, result.stderr
    log = MarkLog(out)
    totals = log.take()
    assert len(totals) == 2 and len(log.counters) == 2
    got = log.counters[1] - log.counters[0]
    # The window: the first mark's `bx lr` (taken), the sequence, the `bl` to the second mark
    want = count_classes([Insn("branch", taken=True), *EXECUTED, Insn("branch", taken=True)])
    assert got == want
    assert got.instructions == totals[1] - totals[0]


def test_per_op_counters_add_up_to_the_exact_counts() -> None:
    graph = read_model(REPO / "tests" / "models" / "kws_dscnn_int8.tflite")
    x = np.random.default_rng(0).integers(-128, 128, graph.tensors[graph.inputs[0]].shape)
    report = run_model(graph, "mps2-an386", [[x.astype(np.int8)]], classes=True,
                       work_dir=REPO / "build" / "test_cycles_plugin")  # fmt: skip
    run = report.runs[0]
    assert run.classes is not None and run.classes_per_op is not None
    marker_calls = 2  # each op's window also holds a mark's `bx lr` and the next `bl`
    for counts, exact in zip(run.classes_per_op, run.latency.per_op, strict=True):
        assert counts.instructions == exact + marker_calls
    m4 = cycles(run.classes, CoreModel("cortex-m4"))
    assert run.classes.instructions < m4 < 3 * run.classes.instructions
