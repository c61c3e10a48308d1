"""Cortex-M4 / Cortex-M7 / Cortex-M55 cycle ESTIMATE from an executed instruction stream.

Input: the stream's class counters (`ClassCounts`): QEMU's icount plugin keeps them per
executed instruction in class mode (tools/qemu-icount, `classes=1`), `count_classes` computes
the same for a hand-written sequence of `Insn` (instruction class, registers transferred,
whether control left the fall-through). Costs follow the Cortex-M4 Technical Reference
Manual (ARM DDI 0439, section 3.3 "Instruction set summary", table 3-1):

  data processing, MOV, compare, SIMD/DSP, MUL/MLA, long multiply (SMULL/SMLAL/UMULL/UMLAL)  1
  SDIV/UDIV                                              2-12 (data dependent: `div_cycles`)
  LDR/STR (single)                                       2; a load/store right after another
                                                         pipelines its address phase: 1
  LDM/STM/PUSH/POP of N registers                        1 + N
  taken branch (B, BL, BX, BLX, CBZ/CBNZ, POP/LDM to PC) + P, the pipeline refill, 1-3: `refill`
  branch not taken                                       1
and board parameters: flash wait states are added to every refill (a taken branch fetches
from a new flash line that the prefetch buffer did not fetch ahead).

Cortex-M7 (ARM DDI 0489, section 3 "Programmers model"; the M7 TRM publishes no per-instruction
table): a 6-stage dual-issue pipeline; this model issues two adjacent instructions in one
cycle when they are ALU+ALU, ALU+load/store or ALU+branch (never two loads/stores, never after
a multiply-accumulate or divide), loads/stores from TCM take 1 cycle, taken branches are
predicted (`m7_refill` extra cycles, 0 when the branch target cache hits), divides as on M4.

Cortex-M55 (scalar pipeline as the M4 model above; Helium from the Armv8.1-M beat model): the
M55 is a dual-beat implementation, so a vector instruction (four beats) takes 2 cycles, and
its last beats overlap the first beats of the next vector instruction when one of the two is a
vector load/store and the other vector data processing (1 cycle saved per such adjacent pair);
low-overhead loop ends (LE/LETP) that loop back cost no refill (the loop is remembered), the
loop instructions themselves 1 cycle.

Always an estimate: caches, bus contention, interrupts and data-dependent divide timing are not
modelled; the exact figure is the instruction count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

# vmem / vop: Helium vector loads and stores / vector data processing; lob: Armv8.1-M
# low-overhead-loop instructions (DLS, WLS, LE and the tail-predicated forms).
CLASSES = ("alu", "mul", "div", "load", "store", "ldm", "stm", "branch", "vmem", "vop", "lob")
CORES = ("cortex-m4", "cortex-m7", "cortex-m55")  # the cores modelled here (board.json "cpu")


def core_of(cpu: str | None) -> str | None:
    """The modelled core of a board's "cpu" ("cortex-m55+nomve": the M55's scalar and DSP
    pipeline, which the model covers alike), or None when no model covers it (or the board,
    the host, has no such core)."""
    if cpu is None:
        return None
    core = cpu.split("+", 1)[0]
    return core if core in CORES else None


@dataclass(frozen=True)
class Insn:
    cls: str  # one of CLASSES
    regs: int = 1  # registers transferred by ldm/stm (push/pop)
    taken: bool = False  # branches (and ldm/pop loading pc): control left the fall-through


@dataclass(frozen=True)
class CoreModel:
    core: str  # "cortex-m4" | "cortex-m7" | "cortex-m55"
    refill: int = 2  # pipeline refill cycles of a taken branch (M4: 1-3)
    div_cycles: int = 12  # M4/M7 divide: 2-12, worst case by default
    flash_wait_states: int = 0  # added to every refill from flash
    m7_refill: int = 0  # M7: extra cycles of a taken, predicted branch

    def assumptions(self) -> list[str]:
        if self.core == "cortex-m55":
            return ["scalar instructions as the Cortex-M4 model", "Helium dual-beat: 2 cycles per "
                    "vector instruction, 1 saved per adjacent vector load/store + vector "
                    "data-processing pair (beat overlap)", "LE/LETP looping back: no refill",
                    f"taken branch: 1 + {self.refill} refill",
                    "TCM, no bus contention"]  # fmt: skip
        if self.core == "cortex-m4":
            return [f"taken branch: 1 + {self.refill} refill + {self.flash_wait_states} flash "
                    "wait states", "LDR/STR 2 cycles, 1 when pipelined after another",
                    "LDM/STM 1 + N", f"divide {self.div_cycles} cycles (2-12)",
                    "multiplies and DSP 1 cycle", "no interrupts, no bus contention"]  # fmt: skip
        return ["dual issue of ALU+ALU, ALU+load/store, ALU+branch", "TCM loads/stores 1 cycle",
                f"taken branch: 1 + {self.m7_refill} (predicted)",
                f"divide {self.div_cycles} cycles (2-12)", "no cache misses"]  # fmt: skip


# The counters QEMU's icount plugin keeps in class mode (tools/qemu-icount/icount.c, the
# order of its mark lines after the running total) and `count_classes` keeps for a sequence.
COUNTERS = (*CLASSES, "mem_pipelined", "block_regs", "taken", "pairs", "voverlap",
            "lob_taken")


@dataclass(frozen=True)
class ClassCounts:
    """What the cycle models need from an instruction stream: instructions per class; loads and
    stores right after a single load/store (M4 pipelining); registers moved by LDM/STM/PUSH/POP
    (LDRD/STRD count as two); taken branches (control left the fall-through: any instruction
    writing the PC); M7 dual-issue pairs formed greedily in program order; adjacent Helium
    vector instructions of the two kinds (memory, data processing: beat overlap); taken
    low-overhead loop ends."""

    alu: int = 0
    mul: int = 0
    div: int = 0
    load: int = 0
    store: int = 0
    ldm: int = 0
    stm: int = 0
    branch: int = 0
    vmem: int = 0
    vop: int = 0
    lob: int = 0
    mem_pipelined: int = 0
    block_regs: int = 0
    taken: int = 0
    pairs: int = 0
    voverlap: int = 0
    lob_taken: int = 0

    @staticmethod
    def of(values: Sequence[int]) -> ClassCounts:
        if len(values) != len(COUNTERS):
            raise ValueError(f"{len(values)} class counters, want {len(COUNTERS)}")
        return ClassCounts(*(int(v) for v in values))

    def __sub__(self, other: ClassCounts) -> ClassCounts:
        return ClassCounts(*(getattr(self, f) - getattr(other, f) for f in COUNTERS))

    @property
    def instructions(self) -> int:
        return sum(getattr(self, c) for c in CLASSES)


def _pairable(first: str, second: str) -> bool:
    """M7 dual issue: ALU+ALU, ALU+load/store, load/store+ALU, ALU+branch."""
    return (first in ("alu", "load", "store") and second in ("alu", "load", "store", "branch")
            and "alu" in (first, second))  # fmt: skip


def count_classes(insns: Sequence[Insn]) -> ClassCounts:
    """The plugin's counters for a sequence (the same state machine, in Python)."""
    c = dict.fromkeys(COUNTERS, 0)
    prev_mem = False
    prev: str | None = None
    pending: str | None = None  # an unpaired instruction that may issue first in a pair
    for k, i in enumerate(insns):
        if i.cls not in CLASSES:
            raise ValueError(f"instruction {k}: unknown class {i.cls!r}")
        c[i.cls] += 1
        c["voverlap"] += {i.cls, prev} == {"vmem", "vop"}
        c["lob_taken"] += i.cls == "lob" and i.taken
        prev = i.cls
        mem = i.cls in ("load", "store")
        c["mem_pipelined"] += mem and prev_mem
        prev_mem = mem
        if i.cls in ("ldm", "stm"):
            c["block_regs"] += i.regs
        c["taken"] += i.taken
        if pending is not None and _pairable(pending, i.cls):
            c["pairs"] += 1
            pending = None
        else:
            pending = i.cls if i.cls in ("alu", "load", "store") and not i.taken else None
    return ClassCounts(**c)


def cycles(counts: ClassCounts, model: CoreModel) -> int:
    """Estimated cycles of a stream with these counters on `model.core`.

    Cortex-M4: 1 per ALU/multiply/branch, `div_cycles` per divide, 2 per single load/store
    less 1 for each pipelined behind another, 1 + N per LDM/STM, + refill and flash wait
    states per taken branch. Cortex-M7: 1 per instruction (divides `div_cycles`, LDM/STM one
    per register), + `m7_refill` per taken branch, less 1 per dual-issued pair. Cortex-M55: the
    M4 figure of the scalar instructions, 1 per loop instruction, 2 per Helium instruction less
    1 per overlapping pair, no refill for a loop end looping back."""
    c = counts
    if model.core == "cortex-m55":
        scalar = replace(c, vmem=0, vop=0, lob=0, voverlap=0, lob_taken=0,
                         taken=c.taken - c.lob_taken)  # fmt: skip
        return (cycles(scalar, replace(model, core="cortex-m4")) + c.lob
                + 2 * (c.vmem + c.vop) - c.voverlap)  # fmt: skip
    if model.core == "cortex-m4":
        return (c.alu + c.mul + c.branch + model.div_cycles * c.div
                + 2 * (c.load + c.store) - c.mem_pipelined + c.ldm + c.stm + c.block_regs
                + (model.refill + model.flash_wait_states) * c.taken)  # fmt: skip
    if model.core == "cortex-m7":
        return (c.alu + c.mul + c.branch + c.load + c.store + model.div_cycles * c.div
                + c.block_regs + model.m7_refill * c.taken - c.pairs)  # fmt: skip
    raise ValueError(f"no cycle model for {model.core}")


def estimate(insns: Sequence[Insn], model: CoreModel) -> int:
    """Estimated cycles of the sequence on `model.core`."""
    if model.core not in CORES:
        raise ValueError(f"no cycle model for {model.core}")
    return cycles(count_classes(insns), model)
