"""Board descriptions: ``boards/<name>/board.json`` loaded into frozen dataclasses.

A board is a folder under ``boards/`` with a ``board.json``; the CMake build reads the same
file by name (``-DBOARD=<name>``), so adding a board means adding a folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tinyhost.errors import DeployError
from tinyhost.paths import repo_root

COUNTER_UNITS = ("instructions", "cycles", "systick", "host-ns")
TOOLCHAINS = ("arm-none-eabi", "host")
EMULATOR_KINDS = ("qemu", "renode")
FLASH_METHODS = ("openocd", "st-flash", "pyocd")


def boards_dir(root: Path | None = None) -> Path:
    return (root or repo_root()) / "boards"


@dataclass(frozen=True)
class MemoryRegion:
    base: int
    size: int

    @property
    def end(self) -> int:
        return self.base + self.size


@dataclass(frozen=True)
class UartInfo:
    driver: str
    base: int | None = None
    clock_hz: int | None = None
    baud: int | None = None
    pins: str | None = None  # e.g. "USART2 TX=PA2 RX=PA3 (AF7)" (real boards)
    vcp: bool = False  # reachable as the ST-LINK's virtual COM port (USB CDC, /dev/ttyACM*)


@dataclass(frozen=True)
class CounterInfo:
    driver: str
    unit: str
    hz: int


@dataclass(frozen=True)
class Emulator:
    kind: str  # "qemu" | "renode"
    machine: str  # QEMU -M machine, or Renode platform (.repl path in Renode's tree)


@dataclass(frozen=True)
class ClockInfo:
    """Clock setup of a real-hardware board (drivers/clock_<driver>.c); core clock = clock_hz."""

    driver: str
    hse_hz: int = 0  # 0: the PLL runs from the internal HSI oscillator
    overdrive: bool = False


@dataclass(frozen=True)
class ProbeInfo:
    """How the flashing tools name the chip (tinyhost.deploy.flash)."""

    openocd_target: str | None = None  # e.g. "target/stm32f4x.cfg"
    pyocd_target: str | None = None  # e.g. "stm32f446retx"
    openocd_interface: str = "interface/stlink.cfg"


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    toolchain: str
    cpu: str | None
    fpu: str | None
    float_abi: str | None
    dsp: bool
    mve: bool
    clock_hz: int | None
    flash: MemoryRegion | None
    ram: MemoryRegion | None
    irqs: int
    uart: UartInfo
    counter: CounterInfo
    emulator: Emulator | None
    flash_method: str | None
    path: Path
    # Optional keys (absent in the QEMU/host boards' board.json):
    clock: ClockInfo | None = None
    semihosting: bool = True  # false: no semihosting host (real hardware, Renode)
    probe: ProbeInfo | None = None
    # The core when -mcpu cannot name it (e.g. "cortex-m85" built as "cortex-m7": GCC 12 has no
    # cortex-m85); None: the core is `cpu`.
    core: str | None = None

    @property
    def core_name(self) -> str | None:
        """The core the board has (`core`, else `cpu`)."""
        return self.core or self.cpu

    @property
    def is_host(self) -> bool:
        return self.toolchain == "host"

    @property
    def has_fpu(self) -> bool:
        return self.fpu is not None

    @property
    def qemu_machine(self) -> str | None:
        if self.emulator is not None and self.emulator.kind == "qemu":
            return self.emulator.machine
        return None

    @property
    def renode_platform(self) -> str | None:
        if self.emulator is not None and self.emulator.kind == "renode":
            return self.emulator.machine
        return None

    @property
    def is_hardware(self) -> bool:
        """A real board that can be flashed (it may also have a Renode model)."""
        return self.flash_method is not None

    @property
    def arena_alignment(self) -> int:
        """Arena buffer alignment (ARCHITECTURE.md §4.2): 16 bytes for MVE targets, else 4."""
        return 16 if self.mve else 4


def list_boards(root: Path | None = None) -> list[str]:
    """Names of all boards (folders of ``boards/`` that hold a board.json), sorted."""
    d = boards_dir(root)
    return sorted(p.parent.name for p in d.glob("*/board.json"))


def load_board(name: str, root: Path | None = None) -> Board:
    """Load and validate ``boards/<name>/board.json``."""
    valid = list_boards(root)
    if name not in valid:
        raise DeployError(f"unknown board {name!r}; valid boards: {', '.join(valid)}")
    path = boards_dir(root) / name / "board.json"
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise DeployError(f"{path}: invalid JSON: {e}") from e
    return _parse_board(data, path)


def load_all_boards(root: Path | None = None) -> list[Board]:
    return [load_board(n, root) for n in list_boards(root)]


def resolve_board(board: Board | str, root: Path | None = None) -> Board:
    return board if isinstance(board, Board) else load_board(board, root)


# --- parsing ----------------------------------------------------------------


def _err(path: Path, msg: str) -> DeployError:
    return DeployError(f"{path}: {msg}")


def _int(path: Path, key: str, v: Any) -> int:
    """Integers may be written as JSON numbers or as strings like "0x20000000"."""
    if isinstance(v, bool):
        raise _err(path, f"{key}: expected an integer, got {v!r}")
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        try:
            return int(v, 0)
        except ValueError:
            pass
    raise _err(path, f"{key}: expected an integer, got {v!r}")


def _opt_int(path: Path, key: str, v: Any) -> int | None:
    return None if v is None else _int(path, key, v)


def _opt_str(path: Path, key: str, v: Any) -> str | None:
    if v is None or isinstance(v, str):
        return v
    raise _err(path, f"{key}: expected a string or null, got {v!r}")


def _bool(path: Path, key: str, v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise _err(path, f"{key}: expected true/false, got {v!r}")


def _region(path: Path, key: str, v: Any) -> MemoryRegion | None:
    if v is None:
        return None
    if not isinstance(v, dict) or set(v) != {"base", "size"}:
        raise _err(path, f"{key}: expected {{'base': ..., 'size': ...}}, got {v!r}")
    region = MemoryRegion(
        _int(path, f"{key}.base", v["base"]), _int(path, f"{key}.size", v["size"])
    )
    if region.size <= 0:
        raise _err(path, f"{key}.size must be positive")
    return region


_REQUIRED = (
    "name", "description", "toolchain", "cpu", "fpu", "float_abi", "dsp", "mve", "clock_hz",
    "flash", "ram", "irqs", "uart", "counter", "emulator", "flash_method",
)  # fmt: skip


def _parse_board(data: Any, path: Path) -> Board:
    if not isinstance(data, dict):
        raise _err(path, "expected a JSON object")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise _err(path, f"missing keys: {', '.join(missing)}")
    name = data["name"]
    if name != path.parent.name:
        raise _err(path, f"name {name!r} does not match its folder {path.parent.name!r}")
    toolchain = data["toolchain"]
    if toolchain not in TOOLCHAINS:
        raise _err(path, f"toolchain must be one of {TOOLCHAINS}, got {toolchain!r}")

    uart = data["uart"]
    if not isinstance(uart, dict) or not isinstance(uart.get("driver"), str):
        raise _err(path, "uart: expected an object with a 'driver'")
    counter = data["counter"]
    if not isinstance(counter, dict) or not isinstance(counter.get("driver"), str):
        raise _err(path, "counter: expected an object with 'driver', 'unit', 'hz'")
    if counter.get("unit") not in COUNTER_UNITS:
        raise _err(
            path, f"counter.unit must be one of {COUNTER_UNITS}, got {counter.get('unit')!r}"
        )

    emu_raw = data["emulator"]
    emulator: Emulator | None = None
    if emu_raw is not None:
        if not isinstance(emu_raw, dict) or len(emu_raw) != 1:
            raise _err(path, f"emulator: expected null or one of {EMULATOR_KINDS}: <machine>")
        ((kind, machine),) = emu_raw.items()
        if kind not in EMULATOR_KINDS or not isinstance(machine, str):
            raise _err(
                path, f"emulator: expected one of {EMULATOR_KINDS}: <machine>, got {emu_raw!r}"
            )
        emulator = Emulator(kind, machine)

    clock_raw = data.get("clock")
    clock: ClockInfo | None = None
    if clock_raw is not None:
        if not isinstance(clock_raw, dict) or not isinstance(clock_raw.get("driver"), str):
            raise _err(path, "clock: expected null or an object with a 'driver'")
        clock = ClockInfo(
            driver=clock_raw["driver"],
            hse_hz=_int(path, "clock.hse_hz", clock_raw.get("hse_hz", 0)),
            overdrive=_bool(path, "clock.overdrive", clock_raw.get("overdrive", False)),
        )
    probe_raw = data.get("probe")
    probe: ProbeInfo | None = None
    if probe_raw is not None:
        if not isinstance(probe_raw, dict):
            raise _err(path, "probe: expected null or an object")
        probe = ProbeInfo(
            openocd_target=_opt_str(path, "probe.openocd_target", probe_raw.get("openocd_target")),
            pyocd_target=_opt_str(path, "probe.pyocd_target", probe_raw.get("pyocd_target")),
            openocd_interface=_opt_str(
                path, "probe.openocd_interface", probe_raw.get("openocd_interface")
            )
            or "interface/stlink.cfg",
        )

    board = Board(
        name=name,
        description=str(data["description"]),
        toolchain=toolchain,
        cpu=_opt_str(path, "cpu", data["cpu"]),
        fpu=_opt_str(path, "fpu", data["fpu"]),
        float_abi=_opt_str(path, "float_abi", data["float_abi"]),
        dsp=_bool(path, "dsp", data["dsp"]),
        mve=_bool(path, "mve", data["mve"]),
        clock_hz=_opt_int(path, "clock_hz", data["clock_hz"]),
        flash=_region(path, "flash", data["flash"]),
        ram=_region(path, "ram", data["ram"]),
        irqs=_int(path, "irqs", data["irqs"]),
        uart=UartInfo(
            driver=uart["driver"],
            base=_opt_int(path, "uart.base", uart.get("base")),
            clock_hz=_opt_int(path, "uart.clock_hz", uart.get("clock_hz")),
            baud=_opt_int(path, "uart.baud", uart.get("baud")),
            pins=_opt_str(path, "uart.pins", uart.get("pins")),
            vcp=_bool(path, "uart.vcp", uart.get("vcp", False)),
        ),
        counter=CounterInfo(
            driver=counter["driver"],
            unit=counter["unit"],
            hz=_int(path, "counter.hz", counter.get("hz")),
        ),
        emulator=emulator,
        flash_method=_opt_str(path, "flash_method", data["flash_method"]),
        path=path.parent,
        clock=clock,
        semihosting=_bool(path, "semihosting", data.get("semihosting", True)),
        probe=probe,
        core=_opt_str(path, "core", data.get("core")),
    )
    if not board.is_host:
        for key in ("cpu", "flash", "ram", "clock_hz"):
            if getattr(board, key) is None:
                raise _err(path, f"{key} is required for a {toolchain} board")
        if board.uart.base is None:
            raise _err(path, "uart.base is required for a Cortex-M board")
        if not (board.path / "linker.ld").is_file():
            raise _err(path, "Cortex-M board folder has no linker.ld")
    if board.flash_method is not None and board.flash_method not in FLASH_METHODS:
        raise _err(path, f"flash_method must be null or one of {FLASH_METHODS}")
    # A QEMU machine is only an emulator; a Renode platform models a real board, so one folder
    # may describe both (e.g. stm32f746g_disco: Renode + openocd).
    if board.qemu_machine is not None and board.flash_method is not None:
        raise _err(path, "a QEMU board has flash_method null")
    if board.flash_method is not None and board.probe is None:
        raise _err(path, "a board with a flash_method needs a 'probe' object")
    if board.counter.driver == "dwt" and board.qemu_machine is not None:
        raise _err(path, "counter 'dwt' on a QEMU board: DWT CYCCNT reads 0 on QEMU")
    return board
