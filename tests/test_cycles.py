"""The cycle estimate on hand-written instruction sequences, against counts worked out by hand
from the Cortex-M4 TRM's table 3-1 (and the M7 model's stated dual-issue rules)."""

from __future__ import annotations

import pytest

from tinyhost.deploy.cycles import CoreModel, Insn, core_of, estimate

M4 = CoreModel("cortex-m4", refill=2)
M7 = CoreModel("cortex-m7")


def test_m4_single_instructions():
    assert estimate([Insn("alu")], M4) == 1
    assert estimate([Insn("mul")], M4) == 1  # MUL/MLA/SMLAL: 1
    assert estimate([Insn("load")], M4) == 2  # LDR: 2
    assert estimate([Insn("stm", regs=4)], M4) == 5  # STM of 4 registers: 1 + N
    assert estimate([Insn("branch")], M4) == 1  # not taken
    assert estimate([Insn("branch", taken=True)], M4) == 3  # 1 + P, P = 2
    assert estimate([Insn("div")], CoreModel("cortex-m4", div_cycles=2)) == 2


def test_m4_load_pipelining_and_loop():
    # ldr, ldr, ldr: 2 + 1 + 1 (neighbouring loads pipeline their address phase)
    assert estimate([Insn("load")] * 3, M4) == 4
    # ldr; add; ldr: the add breaks the pipelining: 2 + 1 + 2
    assert estimate([Insn("load"), Insn("alu"), Insn("load")], M4) == 5
    # A MAC loop body: ldr, ldr, smlad, subs, bne (taken): 2 + 1 + 1 + 1 + 3 = 8
    body = [Insn("load"), Insn("load"), Insn("mul"), Insn("alu"), Insn("branch", taken=True)]
    assert estimate(body * 10, M4) == 80
    # pop {r4-r7, pc}: 1 + 5 registers + refill 2
    assert estimate([Insn("ldm", regs=5, taken=True)], M4) == 8


def test_m4_flash_wait_states_on_refill():
    ws = CoreModel("cortex-m4", refill=2, flash_wait_states=5)
    assert estimate([Insn("branch", taken=True), Insn("alu")], ws) == 1 + 2 + 5 + 1


def test_m7_dual_issue():
    assert estimate([Insn("alu")] * 4, M7) == 2  # two ALU pairs
    assert estimate([Insn("load"), Insn("load")], M7) == 2  # one load/store port
    assert estimate([Insn("alu"), Insn("load")], M7) == 1
    assert estimate([Insn("div"), Insn("alu")], CoreModel("cortex-m7", div_cycles=4)) == 5


def test_unknown_class_and_core():
    with pytest.raises(ValueError, match="unknown class"):
        estimate([Insn("fpu")], M4)
    with pytest.raises(ValueError, match="no cycle model"):
        estimate([], CoreModel("cortex-m0"))


M55 = CoreModel("cortex-m55", refill=2)


def test_m55_beat_overlap_and_low_overhead_loops():
    assert estimate([Insn("vmem")], M55) == 2  # four beats, two per cycle
    assert estimate([Insn("vop"), Insn("vop")], M55) == 4  # same kind: no overlap
    # load, MAC, load, MAC: each meets the other kind: 4 x 2 - 3 overlaps
    assert estimate([Insn("vmem"), Insn("vop")] * 2, M55) == 5
    # a scalar instruction between them breaks the overlap: 2 + 1 + 2
    assert estimate([Insn("vmem"), Insn("alu"), Insn("vop")], M55) == 5
    # a tail-predicated loop of 10 iterations: DLSTP, then (VLDRB, VMLA, LETP) x 10, the last
    # LETP falling through; a loop end looping back costs no refill
    body = [Insn("vmem"), Insn("vop")]
    loop = [Insn("lob")] + (body + [Insn("lob", taken=True)]) * 9 + body + [Insn("lob")]
    assert estimate(loop, M55) == 1 + 10 * (2 + 2 - 1) + 10
    # an ordinary taken branch still pays its refill, as on the M4
    assert estimate([Insn("branch", taken=True)], M55) == 3


def test_core_of_a_board():
    assert core_of("cortex-m55+nomve") == "cortex-m55"  # the shadow DSP build of the M55
    assert core_of("cortex-m4") == "cortex-m4"
    assert core_of("cortex-m0plus") is None and core_of(None) is None  # the host board
