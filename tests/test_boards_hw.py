"""Real-hardware / Renode STM32 boards: board data, linker scripts and hello builds.

The firmware cannot run here (no board, and Renode runs only in tests/test_renode.py when
installed); what is checked is everything a build can show: memory maps against the chips'
datasheet sizes, the vector table, the drivers linked in, and that semihosting is compiled out.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tinyhost.boards import list_boards, load_board
from tinyhost.deploy import build
from tinyhost.deploy.build import BuildResult
from tinyhost.errors import DeployError
from tinyhost.paths import repo_root

ROOT = repo_root()
HELLO = ROOT / "boards" / "examples" / "hello"
KIB, MIB = 1 << 10, 1 << 20

# Datasheet facts (not read from board.json): flash, contiguous SRAM at 0x20000000, core clock.
CHIPS = {
    "stm32f4_discovery": (1 * MIB, 128 * KIB, 168_000_000),  # STM32F407VG (+64 KiB CCM apart)
    "nucleo-f446re": (512 * KIB, 128 * KIB, 180_000_000),  # STM32F446RE
    "nucleo-l4r5zi": (2 * MIB, 640 * KIB, 120_000_000),  # STM32L4R5ZI: SRAM1+2+3
    "stm32f746g_disco": (1 * MIB, 320 * KIB, 216_000_000),  # STM32F746NG: DTCM+SRAM1+SRAM2
}
HW_BOARDS = sorted(CHIPS)
RENODE_BOARDS = ["stm32f4_discovery", "stm32f746g_disco"]
# The ST-LINK virtual COM port's UART (board user manuals); F4-Discovery has no VCP.
VCP = {
    "nucleo-f446re": (0x40004400, True),  # USART2 PA2/PA3
    "nucleo-l4r5zi": (0x40008000, True),  # LPUART1 PG7/PG8
    "stm32f746g_disco": (0x40011000, True),  # USART1 PA9/PB7
    "stm32f4_discovery": (0x40004400, False),  # USART2 PA2/PA3, external adapter
}

HAVE_TOOLS = shutil.which("cmake") is not None and shutil.which("arm-none-eabi-gcc") is not None
needs_tools = pytest.mark.skipif(
    not HAVE_TOOLS, reason="cmake or arm-none-eabi-gcc not installed (apt install cmake "
    "gcc-arm-none-eabi libnewlib-arm-none-eabi)"
)  # fmt: skip


# --- board data ----------------------------------------------------------------------


def test_hw_boards_listed() -> None:
    assert set(HW_BOARDS) <= set(list_boards())


@pytest.mark.parametrize("name", HW_BOARDS)
def test_hw_board_json(name: str) -> None:
    b = load_board(name)
    flash, ram, clock = CHIPS[name]
    assert b.flash is not None and b.ram is not None
    assert (b.flash.base, b.flash.size) == (0x08000000, flash)
    assert (b.ram.base, b.ram.size) == (0x20000000, ram)
    assert b.clock_hz == clock
    assert b.flash_method in ("openocd", "st-flash", "pyocd") and b.is_hardware
    assert b.probe is not None and b.probe.openocd_target and b.probe.pyocd_target
    # Real hardware reports DWT cycles at the core clock (ARCHITECTURE.md §4.7).
    assert (b.counter.driver, b.counter.unit, b.counter.hz) == ("dwt", "cycles", clock)
    assert not b.semihosting  # BKPT 0xAB without a debugger would HardFault
    assert (b.uart.base, b.uart.vcp) == VCP[name]
    assert b.uart.baud == 115200
    assert b.clock is not None
    drivers = ROOT / "boards" / "common" / "drivers"
    assert (drivers / f"clock_{b.clock.driver}.c").is_file()
    assert (drivers / f"uart_{b.uart.driver.replace('-', '_')}.c").is_file()
    assert (b.path / "board_hw.c").is_file() and (b.path / "board.cmake").is_file()
    if name in RENODE_BOARDS:
        assert b.renode_platform is not None and b.renode_platform.endswith(".repl")
        assert b.qemu_machine is None
    else:
        assert b.emulator is None


def test_no_qemu_board_uses_dwt() -> None:
    """DWT CYCCNT reads 0 on QEMU (ARCHITECTURE.md §4.10)."""
    for name in list_boards():
        b = load_board(name)
        if b.qemu_machine is not None:
            assert b.counter.driver != "dwt", name
            assert b.flash_method is None, name


def _write_board(root: Path, name: str, **over: object) -> None:
    data = json.loads((ROOT / "boards" / "nucleo-f446re" / "board.json").read_text())
    data.update(name=name, **over)
    d = root / "boards" / name
    d.mkdir(parents=True)
    (d / "board.json").write_text(json.dumps(data))
    (d / "linker.ld").write_text("")


def test_board_validation_rules(tmp_path: Path) -> None:
    # A Renode platform models a real board: both may be given.
    _write_board(tmp_path, "both", emulator={"renode": "platforms/cpus/stm32f4.repl"})
    b = load_board("both", root=tmp_path)
    assert b.renode_platform == "platforms/cpus/stm32f4.repl" and b.flash_method == "openocd"
    # QEMU machines are emulators only, and the DWT reads 0 there.
    _write_board(tmp_path, "qemuflash", emulator={"qemu": "netduinoplus2"})
    with pytest.raises(DeployError, match="QEMU board has flash_method null"):
        load_board("qemuflash", root=tmp_path)
    _write_board(tmp_path, "qemudwt", emulator={"qemu": "netduinoplus2"}, flash_method=None)
    with pytest.raises(DeployError, match="DWT CYCCNT reads 0 on QEMU"):
        load_board("qemudwt", root=tmp_path)
    _write_board(tmp_path, "badtool", flash_method="jlink")
    with pytest.raises(DeployError, match="flash_method must be null or one of"):
        load_board("badtool", root=tmp_path)
    _write_board(tmp_path, "noprobe", probe=None)
    with pytest.raises(DeployError, match="needs a 'probe'"):
        load_board("noprobe", root=tmp_path)


# --- builds ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hw_builds() -> dict[str, BuildResult]:
    if not HAVE_TOOLS:
        return {}
    with ThreadPoolExecutor() as pool:
        futures = {
            b: pool.submit(build, HELLO, b, ROOT / "build" / "tests" / f"hello-{b}")
            for b in HW_BOARDS
        }
        return {b: f.result() for b, f in futures.items()}


def _symbols(elf: Path) -> set[str]:
    out = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True)
    return {parts[2] for parts in (ln.split() for ln in out.stdout.splitlines()) if len(parts) == 3}


@needs_tools
@pytest.mark.parametrize("name", HW_BOARDS)
def test_build_hello_hw(name: str, hw_builds: dict[str, BuildResult]) -> None:
    r = hw_builds[name]
    b = r.board
    assert r.elf.is_file() and r.bin is not None
    assert b.ram is not None and b.flash is not None
    words = r.bin.read_bytes()[:8]
    sp, reset = int.from_bytes(words[:4], "little"), int.from_bytes(words[4:], "little")
    assert sp == b.ram.end  # stack at the top of the chip's SRAM
    assert b.flash.base <= reset < b.flash.end and reset & 1
    assert r.size.flash <= b.flash.size
    syms = _symbols(r.elf)
    # Clock + pins run before the UART; the DWT counter decides its unit at run time.
    assert {"th_board_hw_init", "th_clock_hw_init", "th_counter_unit"} <= syms
    # Semihosting is compiled out: no BKPT anywhere (it would HardFault without a debugger).
    dis = subprocess.run(
        ["arm-none-eabi-objdump", "-d", str(r.elf)], capture_output=True, text=True, check=True
    ).stdout
    assert re.search(r"\sbkpt\s", dis) is None
    # Only the board's own drivers are linked (e.g. no CMSDK UART, no TIM2 counter).
    assert "th_board_init" in syms
    strings = r.elf.read_bytes()
    assert b"th_exit " in strings  # the UART exit announcement Renode runs rely on
