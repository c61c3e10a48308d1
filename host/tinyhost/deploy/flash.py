"""Flash firmware onto a real board through its ST-LINK: openocd, st-flash or pyocd.

Tool choice (:func:`select_flasher`): ``--flasher`` if given (it must be installed), else the
board's ``flash_method`` if installed, else the first installed of ``openocd``, ``st-flash``,
``pyocd`` (in that order). Commands (:func:`flash_command`):

* openocd: ``openocd -f interface/stlink.cfg -f target/<chip>.cfg``
  ``-c "program ELF verify reset exit"``
* st-flash: ``st-flash --reset write BIN <flash base>`` (st-flash takes a raw image)
* pyocd: ``pyocd flash -t <part> ELF`` (some parts need ``pyocd pack install <part>`` first)

Errors are DeployErrors saying what to do: which package to install when no tool is found, and
"connect the board" when the tool reports no probe (parsed from its output).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tinyhost.boards import FLASH_METHODS, Board, resolve_board
from tinyhost.errors import DeployError

INSTALL_HINTS = {
    "openocd": "apt install openocd",
    "st-flash": "apt install stlink-tools",
    "pyocd": "pip install pyocd",
}

# Output of each tool when no probe is attached (or it cannot be opened).
_NO_PROBE_PATTERNS = {
    "openocd": ("open failed", "no device found", "unable to find a matching",
                "init mode failed", "no st-link"),
    "st-flash": ("couldn't find any st-link", "no st-link", "unable to open"),
    "pyocd": ("no connected debug probes", "no available debug probes", "no probe"),
}  # fmt: skip
_PERMISSION_PATTERNS = ("libusb_error_access", "permission denied", "access denied")


@dataclass(frozen=True)
class FlashImage:
    """What to flash: the ELF, and the raw image beside it (None until made for st-flash)."""

    elf: Path
    bin: Path | None


@dataclass(frozen=True)
class FlashPlan:
    board: Board
    flasher: str  # "openocd" | "st-flash" | "pyocd"
    command: list[str]
    image: FlashImage

    def shell(self) -> str:
        return shlex.join(self.command)


def find_image(outdir: Path | str) -> FlashImage:
    """The firmware in ``outdir``: a tinyhost build dir (``th_app.json``), a directory with
    exactly one ``.elf``, or an ``.elf`` file itself."""
    p = Path(outdir)
    if p.is_file():
        if p.suffix != ".elf":
            raise DeployError(f"{p} is not an .elf file")
        elf = p
    elif p.is_dir():
        info = p / "th_app.json"
        if info.is_file():
            try:
                elf = Path(json.loads(info.read_text())["elf"])
            except (OSError, ValueError, KeyError) as e:
                raise DeployError(f"{info}: unreadable build info: {e}") from e
            if not elf.is_file():
                raise DeployError(f"{info} names {elf}, which does not exist: rebuild")
        else:
            elves = sorted(p.glob("*.elf"))
            if len(elves) != 1:
                found = ", ".join(e.name for e in elves) or "none"
                raise DeployError(
                    f"{p}: expected a tinyhost build directory (th_app.json) or exactly one "
                    f".elf, found {found}"
                )
            elf = elves[0]
    else:
        raise DeployError(f"{p} does not exist")
    bin_path = elf.with_suffix(".bin")
    return FlashImage(elf.resolve(), bin_path.resolve() if bin_path.is_file() else None)


_EM_ARM = 40  # ELF e_machine of 32-bit Arm


def check_image_board(image: FlashImage, board: Board) -> None:
    """Refuse firmware built for another board, or a host build (not an Arm ELF).

    The build records its board in th_app.json beside the ELF (CMakeLists.txt)."""
    head = image.elf.read_bytes()[:20]
    if head[:4] != b"\x7fELF" or len(head) < 20:
        raise DeployError(f"{image.elf} is not an ELF file")
    machine = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
    if machine != _EM_ARM:
        raise DeployError(
            f"{image.elf} is not an Arm firmware (ELF machine {machine}: a host build?); "
            f"build it for {board.name}: tinyhost build OUTDIR --board {board.name}"
        )
    info = image.elf.parent / "th_app.json"
    if info.is_file():
        try:
            built_for = json.loads(info.read_text()).get("board")
        except (OSError, ValueError) as e:
            raise DeployError(f"{info}: unreadable build info: {e}") from e
        if built_for and built_for != board.name:
            raise DeployError(
                f"{image.elf} was built for {built_for}, not {board.name}: build it for "
                f"{board.name} (tinyhost build OUTDIR --board {board.name})"
            )


def _which(tool: str, path: str | None) -> str | None:
    return shutil.which(tool, path=path)


def select_flasher(
    board: Board, requested: str | None = None, path: str | None = None
) -> tuple[str, str]:
    """(tool name, executable) per the order in the module docstring.

    ``path`` replaces $PATH for the lookup (tests use a directory of stub tools).
    """
    if requested is not None:
        if requested not in FLASH_METHODS:
            raise DeployError(f"unknown flasher {requested!r}; one of {', '.join(FLASH_METHODS)}")
        exe = _which(requested, path)
        if exe is None:
            raise DeployError(
                f"{requested} not found on PATH; install it: {INSTALL_HINTS[requested]}"
            )
        return requested, exe
    order = [board.flash_method] if board.flash_method else []
    order += [t for t in FLASH_METHODS if t not in order]
    for tool in order:
        exe = _which(tool, path)
        if exe is not None:
            return tool, exe
    hints = "; ".join(f"{t}: {INSTALL_HINTS[t]}" for t in FLASH_METHODS)
    raise DeployError(
        f"no flashing tool found on PATH (looked for {', '.join(order)}); install one: {hints}"
    )


def _tcl_word(s: str) -> str:
    """A path as one word of an openocd (Tcl) command."""
    return "{" + s + "}" if any(c.isspace() for c in s) else s


def flash_command(board: Board, flasher: str, exe: str, image: FlashImage) -> list[str]:
    """The command line flashing ``image`` onto ``board`` with ``flasher`` (at ``exe``)."""
    if board.probe is None or board.flash is None:
        raise DeployError(f"board {board.name!r} cannot be flashed (no probe data in board.json)")
    probe = board.probe
    if flasher == "openocd":
        if probe.openocd_target is None:
            raise DeployError(f"board {board.name!r}: no probe.openocd_target in board.json")
        return [exe, "-f", probe.openocd_interface, "-f", probe.openocd_target,
                "-c", f"program {_tcl_word(str(image.elf))} verify reset exit"]  # fmt: skip
    if flasher == "st-flash":
        bin_path = image.bin or image.elf.with_suffix(".bin")
        return [exe, "--reset", "write", str(bin_path), f"{board.flash.base:#010x}"]
    if flasher == "pyocd":
        if probe.pyocd_target is None:
            raise DeployError(f"board {board.name!r}: no probe.pyocd_target in board.json")
        return [exe, "flash", "-t", probe.pyocd_target, str(image.elf)]
    raise DeployError(f"unknown flasher {flasher!r}; one of {', '.join(FLASH_METHODS)}")


def plan_flash(
    outdir: Path | str,
    board: Board | str,
    flasher: str | None = None,
    path: str | None = None,
    dry_run: bool = False,
) -> FlashPlan:
    """Find the image, check it was built for `board`, pick the tool and build its command
    (nothing is run). With `dry_run`, a missing tool is named by its plain command name."""
    b = resolve_board(board)
    if not b.is_hardware:
        raise DeployError(
            f"board {b.name!r} is not a real board (flash_method null); boards that can be "
            "flashed have a flash_method in board.json"
        )
    image = find_image(outdir)
    check_image_board(image, b)
    try:
        name, exe = select_flasher(b, flasher, path)
    except DeployError:
        if not dry_run:
            raise
        # A dry run shows the command a user would run once the tool is installed.
        name = flasher or b.flash_method or FLASH_METHODS[0]
        exe = name
    return FlashPlan(b, name, flash_command(b, name, exe, image), image)


def _make_bin(image: FlashImage) -> FlashImage:
    if image.bin is not None:
        return image
    objcopy = shutil.which("arm-none-eabi-objcopy")
    if objcopy is None:
        raise DeployError(
            f"st-flash needs a raw image and {image.elf.with_suffix('.bin')} is missing; "
            "install arm-none-eabi-objcopy (apt install binutils-arm-none-eabi) or rebuild"
        )
    out = image.elf.with_suffix(".bin")
    proc = subprocess.run([objcopy, "-O", "binary", str(image.elf), str(out)],
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        raise DeployError(f"objcopy failed: {proc.stderr.strip()}")
    return FlashImage(image.elf, out)


def explain_failure(flasher: str, returncode: int, output: str) -> str:
    """A DeployError message for a failed flashing run: no probe, permissions, or the log."""
    low = output.lower()
    tail = "\n".join(output.strip().splitlines()[-15:])
    if any(p in low for p in _PERMISSION_PATTERNS):
        return (
            f"{flasher} cannot open the ST-LINK (USB permission denied): install the udev rules "
            f"(e.g. apt install stlink-tools / openocd ship them) and replug, or run as root\n"
            f"{tail}"
        )
    if any(p in low for p in _NO_PROBE_PATTERNS.get(flasher, ())):
        return (
            f"{flasher} found no debug probe: connect the board's ST-LINK USB port (check "
            f"`lsusb` for 0483:374x) and try again\n{tail}"
        )
    return f"{flasher} failed (exit code {returncode})\n{tail}"


@dataclass(frozen=True)
class FlashResult:
    plan: FlashPlan
    output: str


def flash(
    outdir: Path | str,
    board: Board | str,
    flasher: str | None = None,
    timeout: float = 120.0,
    path: str | None = None,
) -> FlashResult:
    """Flash the firmware in ``outdir`` onto ``board``; DeployError with the reason on failure."""
    plan = plan_flash(outdir, board, flasher, path)
    if plan.flasher == "st-flash" and plan.image.bin is None:
        image = _make_bin(plan.image)
        command = flash_command(plan.board, plan.flasher, plan.command[0], image)
        plan = FlashPlan(plan.board, plan.flasher, command, image)
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    try:
        proc = subprocess.run(
            plan.command, capture_output=True, text=True, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired as e:
        raise DeployError(
            f"{plan.flasher} did not finish within {timeout:.0f} s: {plan.shell()}"
        ) from e
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise DeployError(explain_failure(plan.flasher, proc.returncode, output))
    return FlashResult(plan, output)


def find_vcp_ports() -> list[str]:
    """Serial devices of attached ST-LINKs (USB vendor 0x0483): the boards' virtual COM ports."""
    from serial.tools import list_ports

    return sorted(p.device for p in list_ports.comports() if p.vid == 0x0483)


def describe_serial(board: Board, ports: Sequence[str] | None = None) -> str:
    """Where the board's UART is, for the user."""
    pins = board.uart.pins or "the UART"
    if not board.uart.vcp:
        return (
            f"serial: {pins} at {board.uart.baud} baud; this board has no virtual COM port: "
            "wire a 3.3 V USB-UART adapter"
        )
    found = list(ports) if ports is not None else find_vcp_ports()
    where = ", ".join(found) if found else "no ST-LINK serial port found (is the board plugged?)"
    return f"serial: {pins} on the ST-LINK virtual COM port at {board.uart.baud} baud: {where}"
