"""What a built firmware spends on the model, from its linker map (Cortex-M builds).

The firmware is compiled with one section per function and object (-ffunction-sections
-fdata-sections), so the GNU ld map names every input section with the object it came from.
Each is put in one part:
- model: the backend's code and state (generated model.c, the interpreter and its op table),
  the kernels, and the C runtime they call (libc/libgcc helpers);
- model data: the interpreter's blob (model_blob.c) or the compiled model's constant arrays;
- arena: the `.arena` section;
- protocol: the serial protocol and the app (firmware/app, firmware/protocol) and the
  LOAD_MODEL receive buffer, reported apart;
- board: startup, drivers, semihosting, the start-up self-check.
A member of the C runtime (libc, libgcc) is charged to the model when the model's code, or a
runtime member the model needs, references it (the map's cross-reference table, -Wl,--cref),
else to the protocol or the board that pulled it in.
`bench` reports RAM honestly with it (ARCHITECTURE.md §4.8): arena + the model's other static
RAM + the stack peak measured during invoke.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_SECTION = re.compile(r"^ (\.[\w.$]+|COMMON)(?:\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S.*))?$")
_CONTINUATION = re.compile(r"^\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S.*)$")
_RAM = (".bss", ".data", "COMMON", ".arena")
_CODE = (".text", ".rodata")
_PROTOCOL_SYMBOLS = (".bss.load_buf",)  # the LOAD_MODEL receive buffer


@dataclass(frozen=True)
class Footprint:
    arena_bytes: int
    model_ram_bytes: int  # static RAM of the model's code besides the arena
    protocol_ram_bytes: int  # app, protocol buffers, LOAD_MODEL buffer
    board_ram_bytes: int
    model_code_bytes: int  # flash: backend code, kernels, runtime (no model data)
    model_data_bytes: int  # flash: blob or constant arrays
    protocol_code_bytes: int
    board_code_bytes: int


def _part(section: str, source: str) -> str:
    if section.startswith(_PROTOCOL_SYMBOLS) or "firmware/app/" in source \
            or "firmware/protocol/" in source:
        return "protocol"
    if "libth_board.a" in source or "th_board_rt.dir" in source \
            or "firmware/selfcheck/" in source:
        return "board"
    if "model_blob.c" in source:
        return "model_data"
    return "model"  # kernels, interpreter, generated model


def _is_runtime(source: str) -> bool:
    """A member of the toolchain's libraries (libc, libgcc, libm, ...), not of ours."""
    return ".a(" in source and "libth_" not in source


def _references(text: str) -> dict[str, set[str]]:
    """From the cross-reference table: for each defining object, the objects that reference
    one of its symbols."""
    start = text.find("Cross Reference Table")
    refs: dict[str, set[str]] = {}
    definer: str | None = None
    for line in text[start:].splitlines()[3:] if start >= 0 else []:
        if not line.strip():
            continue
        if not line[0].isspace():  # "symbol   definer"
            fields = line.split(None, 1)
            definer = fields[1].strip() if len(fields) == 2 else None
        elif definer is not None:
            refs.setdefault(definer, set()).add(line.strip())
    return refs


def _runtime_parts(sources: set[str], refs: dict[str, set[str]]) -> dict[str, str]:
    """Part of each runtime member: model if the model (directly or through other runtime
    members) references it, else the part of the first non-runtime object that does."""
    runtime = {s for s in sources if _is_runtime(s)}
    parts: dict[str, str] = {}
    for wanted in ("model", "protocol", "board"):
        changed = True
        while changed:
            changed = False
            for member in runtime - parts.keys():
                users = refs.get(member, set())
                if any(parts.get(u) == wanted or (not _is_runtime(u) and _part("", u) == wanted)
                       for u in users):
                    parts[member] = wanted
                    changed = True
    return {m: parts.get(m, "board") for m in runtime}


def _input_sections(text: str) -> list[tuple[str, int, str]]:
    """(section, size, source object) of every input section in the memory map."""
    start = text.find("Linker script and memory map")
    lines = text[start:].splitlines() if start >= 0 else []
    out = []
    pending: str | None = None
    for line in lines:
        if pending is not None:
            m = _CONTINUATION.match(line)
            if m:
                out.append((pending, int(m.group(2), 16), m.group(3)))
            pending = None
            continue
        m = _SECTION.match(line)
        if not m:
            continue
        if m.group(2) is None:
            pending = m.group(1)  # a long name: address, size and file on the next line
        else:
            out.append((m.group(1), int(m.group(3), 16), m.group(4)))
    return out


def footprint(map_path: Path, model_data_symbols: tuple[str, ...] = ()) -> Footprint:
    """Split the firmware's RAM and flash by part. `model_data_symbols` name constant arrays
    of model data inside the model's own object (the compiled backend's weights)."""
    ram = {"arena": 0, "model": 0, "protocol": 0, "board": 0, "model_data": 0}
    code = dict.fromkeys(ram, 0)
    text = map_path.read_text(errors="replace")
    sections = _input_sections(text)
    runtime = _runtime_parts({src for _, _, src in sections}, _references(text))
    for section, size, source in sections:
        if section.startswith(".arena"):
            ram["arena"] += size
            continue
        part = runtime.get(source) or _part(section, source)
        if section.startswith(_RAM):
            ram[part] += size
        elif section.startswith(_CODE):
            is_data = any(section == f".rodata.{s}" for s in model_data_symbols)
            code["model_data" if is_data else part] += size
    return Footprint(
        arena_bytes=ram["arena"],
        model_ram_bytes=ram["model"] + ram["model_data"],
        protocol_ram_bytes=ram["protocol"],
        board_ram_bytes=ram["board"],
        model_code_bytes=code["model"],
        model_data_bytes=code["model_data"],
        protocol_code_bytes=code["protocol"],
        board_code_bytes=code["board"],
    )
