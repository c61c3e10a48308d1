"""A firmware's static worst-case stack: GCC's per-function frames and the linked call graph.

Cortex-M builds compile with `-fstack-usage` (boards/common/arm-none-eabi.cmake): every object
gets a `.su` file with each function's frame. The calls come from the linked ELF itself
(`objdump -d`: every `bl`/`b` to another function, `blx rN` for a pointer call), so the graph
is exactly what the image runs, assembly included. The bound is the deepest path from `main`
plus, on top of it, an exception entry (the hardware frame with the FP context) and the
deepest path of the fault handler, which may strike at any point. Assumptions, stated so the
figure can be checked:
- a pointer call in a kernel reaches the functions of its own file that nothing calls
  directly (its variant tables); elsewhere those of its own directory (the interpreter's op
  adapters), else those of the other firmware directories (the protocol's callbacks);
- functions without a frame record (libc's memcpy/memset, assembly files) count
  EXTERNAL_BYTES; naked assembly functions, which GCC reports as 0 bytes, count NAKED_BYTES
  (ours push at most r4-r11, lr and 64 bytes of locals);
- the two recursions have known depths (BOUNDED_RECURSION), and the protocol's frame writer
  calls only the link writer (KNOWN_POINTER_CALLS).
Any other recursion or an unbounded dynamic frame (alloca, VLA) makes the bound unknown
(None), said why.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tinyhost.deploy.build import require_tool

EXTERNAL_BYTES = 64
NAKED_BYTES = 128
EXCEPTION_FRAME_BYTES = 8 * 4 + 18 * 4  # r0-r3, r12, lr, pc, xpsr + s0-s15, fpscr, reserved
# Recursions with a known depth: th_pad_s8's pad_dim, one level per dimension (TH_MAX_RANK);
# th_nn_mat_mult_s8_s16 calls itself once, for an odd last channel, with one channel.
BOUNDED_RECURSION = {"pad_dim": 6, "th_nn_mat_mult_s8_s16": 2}
# Pointer calls whose targets are known by role: the protocol's frame writer (th_proto.c
# send_raw) calls only the app's link writer (firmware/app/main.c uart_write) and its INFO
# builder only the app's info callback, never the other request callbacks, which the rule for
# other pointer calls would include.
KNOWN_POINTER_CALLS = {"send_raw": {"uart_write"}, "get_info": {"cb_info"}}
ROOT = "main"
FAULT_ROOT = "th_fault_report"  # the fault handler's C part (HardFault_Handler branches to it)

_SU = re.compile(r"^(.*?):\d+:\d+:([^\t]+)\t(\d+)\t(\S+)", re.M)
_FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
_POOL_WORD = re.compile(r"\t\.word\t0x([0-9a-f]+)$")
_CALL = re.compile(r"\t(?:bl|b|b\.w|b\.n)\t[0-9a-f]+ <([^>+]+)>$")
_POINTER_CALL = re.compile(r"\tblx\t(?:r\d+|ip|lr)$")


@dataclass
class StackBound:
    bytes: int | None  # None: no bound (unbounded recursion or a dynamic frame)
    path: list[str] = field(default_factory=list)  # the deepest chain from main
    fault_bytes: int = 0  # what a fault adds on top (exception frame + handler)
    reason: str = ""  # why there is no bound


class _Graph:
    def __init__(self, su_files: list[Path], disassembly: str) -> None:
        self.frame: dict[str, int] = {}  # function -> bytes (absent: no record)
        self.file: dict[str, str] = {}  # function -> source file
        self.dynamic: set[str] = set()
        for su in su_files:
            for path, name, size, kind in _SU.findall(su.read_text(errors="replace")):
                self.frame[name] = max(self.frame.get(name, 0), int(size))
                self.file[name] = path
                if "dynamic" in kind and "bounded" not in kind:
                    self.dynamic.add(name)
        self.calls: dict[str, set[str]] = {}
        self.pool: dict[str, set[int]] = {}  # function -> words of its literal pool
        at: dict[int, str] = {}  # start address -> function
        current = None
        for line in disassembly.splitlines():
            m = _FUNC.match(line)
            if m:
                current = m.group(2)
                at[int(m.group(1), 16)] = current
                self.calls.setdefault(current, set())
                continue
            if current is None:
                continue
            word = _POOL_WORD.search(line)
            if word:
                self.pool.setdefault(current, set()).add(int(word.group(1), 16) & ~1)
                continue
            call = _CALL.search(line)
            if call and call.group(1) != current:
                self.calls[current].add(call.group(1))
            elif _POINTER_CALL.search(line):
                self.calls[current].add("__indirect_call")
        self.name = {f: f for f in self.calls}  # the graph's functions: the linked image's
        # Functions whose address a function loads from its literal pool (Thumb bit cleared).
        self.addressed = {f: {at[w] for w in words if w in at} - {f}
                          for f, words in self.pool.items()}  # fmt: skip
        called = {d for ds in self.calls.values() for d in ds}
        # Exception handlers are entered by the hardware, and what leads to main (start-up)
        # by the reset: neither through a pointer call.
        start_up = self._callers_of({ROOT})
        self.indirect_targets = {f for f in self.calls if f not in called and f not in start_up
                                 and not f.endswith("_Handler") and f != FAULT_ROOT
                                 and f in self.frame}  # fmt: skip
        self.memo: dict[str, tuple[int, list[str]]] = {}
        self.cut: set[str] = set()  # kernel entries not followed from outside kernels_c

    def _callers_of(self, targets: set[str]) -> set[str]:
        """`targets` and every function that reaches one of them by direct calls."""
        found = set(targets)
        grew = True
        while grew:
            grew = False
            for src, dsts in self.calls.items():
                if src not in found and dsts & found:
                    found.add(src)
                    grew = True
        return found

    def pointer_targets(self, title: str) -> set[str]:
        """What a pointer call in `title` may reach: the functions whose address it or a direct
        caller loads from its literal pool (a helper handed a kernel, e.g. the elementwise
        adapters'); else, in a kernel, the functions of its own file nothing calls directly
        (its variant tables); elsewhere those of its own directory (the interpreter's op
        adapters), else those of the other firmware directories (the protocol's callbacks)."""
        known = KNOWN_POINTER_CALLS.get(title.split(".")[0])
        if known is not None:
            return {f for f in self.calls if f.split(".")[0] in known}
        handed = set(self.addressed.get(title, ()))
        for caller, callees in self.calls.items():
            if title in callees:
                handed |= self.addressed.get(caller, set())
        handed = {f for f in handed if f in self.frame and f != title}
        if handed:
            return handed
        here = self.file.get(title, "")
        targets = self.indirect_targets - {title}
        if "kernels_c/" in here:
            return {t for t in targets if self.file.get(t) == here}
        folder = here.rsplit("/", 1)[0]
        same = {t for t in targets if self.file.get(t, "").rsplit("/", 1)[0] == folder}
        return same or {t for t in targets if "kernels_c/" not in self.file.get(t, "")}

    def own(self, title: str) -> int:
        size = self.frame.get(title)
        if size is None:
            return EXTERNAL_BYTES
        return NAKED_BYTES if size == 0 else size

    def worst(self, title: str, active: tuple[str, ...] = ()) -> tuple[int, list[str]]:
        """Deepest stack from entering `title`, and the chain."""
        if title in self.memo:
            return self.memo[title]
        if title in self.dynamic:
            raise _NoBound(f"{self.name[title]} has a dynamic frame")
        callees = self.callees(title)
        if not self.is_kernel(title):
            callees -= self.cut
        best, chain = 0, []
        for callee in callees:
            if callee in active or callee == title:
                if self.name.get(callee) in BOUNDED_RECURSION:
                    continue  # accounted for below
                raise _NoBound(f"recursion through {self.name.get(callee, callee)}")
            depth, sub = self.worst(callee, (*active, title))
            if depth > best:
                best, chain = depth, sub
        own = self.own(title) * BOUNDED_RECURSION.get(self.name.get(title, ""), 1)
        self.memo[title] = (own + best, [self.name.get(title, title), *chain])
        return self.memo[title]


    def reachable(self, root: str) -> set[str]:
        """Every function a call chain from `root` may enter."""
        seen, todo = {root}, [root]
        while todo:
            for callee in self.callees(todo.pop()):
                if callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
        return seen

    def callees(self, title: str) -> set[str]:
        out = set(self.calls.get(title, ()))
        if "__indirect_call" in out:
            out.discard("__indirect_call")
            out |= self.pointer_targets(title)
        return out

    def is_kernel(self, title: str) -> bool:
        return "kernels_c/" in self.file.get(title, "")

    def kernel_table(self) -> tuple[int, dict[str, int]]:
        """(base, {kernel function: bytes}) for the stack table: `base` is the deepest path from
        main that enters no kernel from outside kernels_c (protocol, self-check, the model's
        own code); each kernel function gets the deepest path from main into a kernel entry
        (a kernel called from outside kernels_c) that may reach it, through that entry."""
        live = self.reachable(ROOT)
        callers: dict[str, set[str]] = {}
        for f in live:
            for c in self.callees(f) - {f}:
                callers.setdefault(c, set()).add(f)
        entries = {c for c, fs in callers.items()
                   if self.is_kernel(c) and any(not self.is_kernel(f) for f in fs)}  # fmt: skip
        into: dict[str, int] = {ROOT: 0}

        def longest_to(title: str, active: tuple[str, ...] = ()) -> int:
            if title not in into:
                into[title] = max((longest_to(f, (*active, title)) + self.own(f)
                                   for f in callers.get(title, ()) if f not in active),
                                  default=0)  # fmt: skip
            return into[title]

        table: dict[str, int] = {}
        for entry in sorted(entries):
            depth = longest_to(entry) + self.worst(entry)[0]
            for g in self.reachable(entry):
                if self.is_kernel(g):
                    table[g] = max(table.get(g, 0), depth)
        # base: the graph without the calls into kernel entries from outside kernels_c
        self.cut, self.memo = entries, {}
        try:
            base = self.worst(ROOT)[0]
        finally:
            self.cut, self.memo = set(), {}
        return base, table


class _NoBound(Exception):
    pass


def _graph(build_dir: Path, elf: Path) -> _Graph | None:
    su_files = sorted(Path(build_dir).rglob("*.su"))
    if not su_files:
        return None
    objdump = require_tool("arm-none-eabi-objdump")
    disassembly = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(elf)],
                                 capture_output=True, text=True).stdout  # fmt: skip
    return _Graph(su_files, disassembly)


def static_stack(build_dir: Path, elf: Path) -> StackBound:
    """The bound for the firmware `elf` built in `build_dir` (module docstring)."""
    graph = _graph(build_dir, elf)
    if graph is None:
        return StackBound(None, reason=f"no stack-usage files in {build_dir}")
    if ROOT not in graph.calls:
        return StackBound(None, reason=f"no {ROOT} in {elf}")
    try:
        depth, path = graph.worst(ROOT)
        fault = EXCEPTION_FRAME_BYTES + (graph.worst(FAULT_ROOT)[0]
                                         if FAULT_ROOT in graph.calls else 0)  # fmt: skip
    except _NoBound as e:
        return StackBound(None, reason=str(e))
    return StackBound(depth + fault, path, fault)


def stack_table_entry(build_dir: Path, elf: Path) -> dict:
    """What plan/stack_table.json holds for one CPU, measured on an interpreter firmware with
    every op adapter (so every kernel): `base`, `fault` and `kernels` (plan/stack.py)."""
    graph = _graph(build_dir, elf)
    if graph is None or ROOT not in graph.calls:
        raise ValueError(f"{elf}: no stack-usage files or no {ROOT}")
    base, kernels = graph.kernel_table()
    fault = EXCEPTION_FRAME_BYTES + (graph.worst(FAULT_ROOT)[0]
                                     if FAULT_ROOT in graph.calls else 0)  # fmt: skip
    return {"base": base, "fault": fault, "kernels": dict(sorted(kernels.items()))}
