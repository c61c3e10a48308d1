"""Cortex-M4 / Cortex-M7 cycle ESTIMATE from an executed instruction stream.

Input: the executed instructions in order, each as an `Insn` (instruction class, registers
transferred, whether a branch was taken). Costs follow the Cortex-M4 Technical Reference
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

Always an estimate: caches, bus contention, interrupts and data-dependent divide timing are not
modelled; the exact figure is the instruction count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CLASSES = ("alu", "mul", "div", "load", "store", "ldm", "stm", "branch")


@dataclass(frozen=True)
class Insn:
    cls: str  # one of CLASSES
    regs: int = 1  # registers transferred by ldm/stm (push/pop)
    taken: bool = False  # branches (and ldm/pop loading pc): control left the fall-through


@dataclass(frozen=True)
class CoreModel:
    core: str  # "cortex-m4" | "cortex-m7"
    refill: int = 2  # pipeline refill cycles of a taken branch (M4: 1-3)
    div_cycles: int = 12  # M4/M7 divide: 2-12, worst case by default
    flash_wait_states: int = 0  # added to every refill from flash
    m7_refill: int = 0  # M7: extra cycles of a taken, predicted branch

    def assumptions(self) -> list[str]:
        if self.core == "cortex-m4":
            return [f"taken branch: 1 + {self.refill} refill + {self.flash_wait_states} flash "
                    "wait states", "LDR/STR 2 cycles, 1 when pipelined after another",
                    "LDM/STM 1 + N", f"divide {self.div_cycles} cycles (2-12)",
                    "multiplies and DSP 1 cycle", "no interrupts, no bus contention"]  # fmt: skip
        return ["dual issue of ALU+ALU, ALU+load/store, ALU+branch", "TCM loads/stores 1 cycle",
                f"taken branch: 1 + {self.m7_refill} (predicted)",
                f"divide {self.div_cycles} cycles (2-12)", "no cache misses"]  # fmt: skip


def _check(insns: Sequence[Insn]) -> None:
    for k, i in enumerate(insns):
        if i.cls not in CLASSES:
            raise ValueError(f"instruction {k}: unknown class {i.cls!r}")


def m4_cycles(insns: Sequence[Insn], model: CoreModel) -> int:
    _check(insns)
    total = 0
    prev_mem = False
    for i in insns:
        if i.cls in ("alu", "mul"):
            c = 1
        elif i.cls == "div":
            c = model.div_cycles
        elif i.cls in ("load", "store"):
            c = 1 if prev_mem else 2
        elif i.cls in ("ldm", "stm"):
            c = 1 + i.regs
        else:  # branch
            c = 1
        if i.taken:
            c += model.refill + model.flash_wait_states
        total += c
        # Only single loads/stores pipeline with a following one (TRM 3.3.2).
        prev_mem = i.cls in ("load", "store")
    return total


def m7_cycles(insns: Sequence[Insn], model: CoreModel) -> int:
    _check(insns)
    total = 0
    k = 0
    while k < len(insns):
        i = insns[k]
        c = {"div": model.div_cycles, "ldm": i.regs, "stm": i.regs}.get(i.cls, 1)
        if i.taken:
            c += model.m7_refill
        nxt = insns[k + 1] if k + 1 < len(insns) else None
        pair = (nxt is not None and not i.taken and i.cls in ("alu", "load", "store")
                and nxt.cls in ("alu", "load", "store", "branch")
                and not (i.cls != "alu" and nxt.cls != "alu"))  # fmt: skip
        if pair and nxt is not None:
            c = max(c, 1 + (model.m7_refill if nxt.taken else 0))
            k += 2
        else:
            k += 1
        total += c
    return total


def estimate(insns: Sequence[Insn], model: CoreModel) -> int:
    """Estimated cycles of the sequence on `model.core`."""
    if model.core == "cortex-m4":
        return m4_cycles(insns, model)
    if model.core == "cortex-m7":
        return m7_cycles(insns, model)
    raise ValueError(f"no cycle model for {model.core}")
