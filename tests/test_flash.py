"""`tinyhost flash`: tool choice, exact command lines, and the errors users see.

Tool choice and commands are tested with stub `openocd`/`st-flash`/`pyocd` scripts written into
a private PATH (our logic, not the hardware). The real tools run only if installed, and only
while no ST-LINK is attached (the tests must never flash a board someone plugged in).
"""

from __future__ import annotations

import argparse
import json
import shutil
import stat
import sys
from pathlib import Path

import pytest

from tinyhost.boards import load_board
from tinyhost.deploy import build
from tinyhost.deploy.flash import (
    FlashImage,
    describe_serial,
    find_image,
    flash,
    flash_command,
    plan_flash,
    select_flasher,
)
from tinyhost.errors import DeployError
from tinyhost.paths import repo_root

TOOLS = ("openocd", "st-flash", "pyocd")


def _stub(bindir: Path, name: str, output: str = "", code: int = 0) -> Path:
    """An executable that records its argv (JSON, one line per call) and prints `output`."""
    bindir.mkdir(parents=True, exist_ok=True)
    log = bindir / f"{name}.calls"
    path = bindir / name
    path.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"sys.stderr.write({output!r})\n"
        f"sys.exit({code})\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _calls(bindir: Path, name: str) -> list[list[str]]:
    log = bindir / f"{name}.calls"
    if not log.is_file():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


ARM, X86_64 = 40, 62  # ELF e_machine


def _elf_header(machine: int) -> bytes:
    """The first bytes of a little-endian 32-bit executable for `machine`."""
    return b"\x7fELF\x01\x01\x01" + bytes(9) + (2).to_bytes(2, "little") + \
        machine.to_bytes(2, "little") + bytes(32)


@pytest.fixture
def outdir(tmp_path: Path) -> Path:
    """A fake build directory as tinyhost.deploy.build leaves it (th_app.json, .elf, .bin)."""
    d = tmp_path / "build"
    d.mkdir()
    (d / "app.elf").write_bytes(_elf_header(ARM))
    (d / "app.bin").write_bytes(b"\x00" * 16)
    (d / "th_app.json").write_text(json.dumps({"name": "app", "elf": str(d / "app.elf")}))
    return d


# --- finding the image -------------------------------------------------------------------


def test_find_image_forms(outdir: Path, tmp_path: Path) -> None:
    img = find_image(outdir)
    assert img.elf == (outdir / "app.elf").resolve() and img.bin == (outdir / "app.bin").resolve()
    assert find_image(outdir / "app.elf") == img
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "fw.elf").write_bytes(b"x")
    assert find_image(plain) == FlashImage((plain / "fw.elf").resolve(), None)
    (plain / "other.elf").write_bytes(b"x")
    with pytest.raises(DeployError, match="exactly one .elf, found fw.elf, other.elf"):
        find_image(plain)
    with pytest.raises(DeployError, match="does not exist"):
        find_image(tmp_path / "nope")
    with pytest.raises(DeployError, match="not an .elf"):
        find_image(outdir / "app.bin")


# --- tool choice ---------------------------------------------------------------------------


def test_no_tool_says_what_to_install(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    with pytest.raises(DeployError) as e:
        select_flasher(load_board("nucleo-f446re"), path=str(empty))
    msg = str(e.value)
    for hint in ("apt install openocd", "apt install stlink-tools", "pip install pyocd"):
        assert hint in msg


def test_tool_order(tmp_path: Path) -> None:
    b = load_board("nucleo-f446re")  # flash_method: openocd
    bindir = tmp_path / "bin"
    _stub(bindir, "pyocd")
    assert select_flasher(b, path=str(bindir))[0] == "pyocd"
    _stub(bindir, "st-flash")
    assert select_flasher(b, path=str(bindir))[0] == "st-flash"  # before pyocd
    _stub(bindir, "openocd")
    name, exe = select_flasher(b, path=str(bindir))
    assert (name, exe) == ("openocd", str(bindir / "openocd"))  # the board's own method first
    assert select_flasher(b, "pyocd", path=str(bindir))[0] == "pyocd"  # --flasher wins


def test_requested_tool_missing(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    _stub(bindir, "openocd")
    with pytest.raises(DeployError, match="st-flash not found on PATH; install it: apt install"):
        select_flasher(load_board("nucleo-f446re"), "st-flash", path=str(bindir))
    with pytest.raises(DeployError, match="unknown flasher 'jlink'"):
        select_flasher(load_board("nucleo-f446re"), "jlink", path=str(bindir))


# --- command lines ---------------------------------------------------------------------------

OPENOCD_TARGETS = {  # the chip families' openocd target scripts
    "nucleo-f446re": "target/stm32f4x.cfg",
    "stm32f4_discovery": "target/stm32f4x.cfg",
    "stm32f746g_disco": "target/stm32f7x.cfg",
    "nucleo-l4r5zi": "target/stm32l4x.cfg",
}
PYOCD_PARTS = {  # CMSIS-Pack part names
    "nucleo-f446re": "stm32f446retx",
    "stm32f4_discovery": "stm32f407vgtx",
    "stm32f746g_disco": "stm32f746nghx",
    "nucleo-l4r5zi": "stm32l4r5zitx",
}


@pytest.mark.parametrize("board", sorted(OPENOCD_TARGETS))
def test_commands(board: str) -> None:
    b = load_board(board)
    img = FlashImage(Path("/fw/app.elf"), Path("/fw/app.bin"))
    assert flash_command(b, "openocd", "/x/openocd", img) == [
        "/x/openocd", "-f", "interface/stlink.cfg", "-f", OPENOCD_TARGETS[board],
        "-c", "program /fw/app.elf verify reset exit",
    ]  # fmt: skip
    assert flash_command(b, "st-flash", "st-flash", img) == [
        "st-flash", "--reset", "write", "/fw/app.bin", "0x08000000",
    ]  # fmt: skip
    assert flash_command(b, "pyocd", "pyocd", img) == [
        "pyocd", "flash", "-t", PYOCD_PARTS[board], "/fw/app.elf",
    ]  # fmt: skip


def test_openocd_path_with_spaces_is_one_tcl_word() -> None:
    img = FlashImage(Path("/my fw/app.elf"), None)
    cmd = flash_command(load_board("nucleo-l4r5zi"), "openocd", "openocd", img)
    assert cmd[-1] == "program {/my fw/app.elf} verify reset exit"


def test_emulator_only_board_cannot_be_flashed(outdir: Path) -> None:
    with pytest.raises(DeployError, match="not a real board"):
        plan_flash(outdir, "netduinoplus2")


# --- running (stubs) ---------------------------------------------------------------------------


def test_flash_runs_the_tool(outdir: Path, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    _stub(bindir, "openocd", output="** Programming Finished **\n")
    res = flash(outdir, "stm32f746g_disco", path=str(bindir))
    assert res.plan.flasher == "openocd" and "Programming Finished" in res.output
    elf = str((outdir / "app.elf").resolve())
    assert _calls(bindir, "openocd") == [
        ["-f", "interface/stlink.cfg", "-f", "target/stm32f7x.cfg",
         "-c", f"program {elf} verify reset exit"],
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("tool", "output"),
    [
        ("openocd", "Info : clock speed 2000 kHz\nError: open failed\n** OpenOCD init failed **"),
        ("st-flash", "WARN usb.c: Couldn't find any ST-Link devices\n"),
        ("pyocd", "0000842 C No connected debug probes [__main__]\n"),
    ],
)
def test_no_probe_is_explained(outdir: Path, tmp_path: Path, tool: str, output: str) -> None:
    """The tools' own no-probe messages (openocd 0.12 and st-flash 1.7 measured here)."""
    bindir = tmp_path / "bin"
    _stub(bindir, tool, output=output, code=1)
    with pytest.raises(DeployError) as e:
        flash(outdir, "nucleo-f446re", tool, path=str(bindir))
    assert f"{tool} found no debug probe: connect the board's ST-LINK" in str(e.value)


def test_other_failures_show_the_log(outdir: Path, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    _stub(bindir, "openocd", output="Error: verify failed at 0x08000100\n", code=1)
    with pytest.raises(DeployError, match=r"(?s)openocd failed \(exit code 1\).*verify failed"):
        flash(outdir, "nucleo-f446re", path=str(bindir))
    _stub(bindir, "pyocd", output="LIBUSB_ERROR_ACCESS\n", code=1)
    with pytest.raises(DeployError, match="USB permission denied"):
        flash(outdir, "nucleo-f446re", "pyocd", path=str(bindir))


@pytest.mark.skipif(any(shutil.which(t) is None for t in ("arm-none-eabi-gcc", "cmake")),
                    reason="no arm-none-eabi-gcc or cmake")
def test_st_flash_makes_the_bin(tmp_path: Path) -> None:
    """st-flash writes raw images: a build dir without .bin gets one from the ELF."""
    # the tree test_boards_hw.py builds (build() locks it): up to date when that file ran
    # first, built here otherwise: the test does not depend on the order files run in
    elf_src = build(repo_root() / "boards" / "examples" / "hello", "nucleo-f446re",
                    repo_root() / "build" / "tests" / "hello-nucleo-f446re").elf  # fmt: skip
    d = tmp_path / "fw"
    d.mkdir()
    shutil.copy(elf_src, d / "hello.elf")
    bindir = tmp_path / "bin"
    _stub(bindir, "st-flash")
    flash(d, "nucleo-f446re", "st-flash", path=str(bindir))
    (call,) = _calls(bindir, "st-flash")
    assert call[:3] == ["--reset", "write", str((d / "hello.bin").resolve())]
    assert call[3] == "0x08000000"
    raw = (d / "hello.bin").read_bytes()
    assert int.from_bytes(raw[:4], "little") == 0x20000000 + 128 * 1024  # initial SP


# --- CLI -------------------------------------------------------------------------------------


def _cli(argv: list[str]) -> argparse.Namespace:
    from tinyhost.cli import flash as cli_flash

    parser = argparse.ArgumentParser(prog="tinyhost")
    cli_flash.add_parser(parser.add_subparsers())
    return parser.parse_args(argv)


def test_cli_dry_run_prints_the_command(
    outdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    bindir = tmp_path / "bin"
    _stub(bindir, "st-flash")
    monkeypatch.setenv("PATH", str(bindir))
    args = _cli(["flash", str(outdir), "--board", "nucleo-l4r5zi", "--dry-run"])
    assert args.func(args) == 0
    out = capsys.readouterr().out.strip()
    bin_path = (outdir / "app.bin").resolve()
    assert out == f"{bindir / 'st-flash'} --reset write {bin_path} 0x08000000"
    assert _calls(bindir, "st-flash") == []  # dry run: nothing executed


def test_dry_run_prints_the_command_without_any_flasher(
    outdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    empty = tmp_path / "nothing"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    args = _cli(["flash", str(outdir), "--board", "nucleo-f446re", "--dry-run"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("openocd -f interface/stlink.cfg") and "app.elf" in out


def test_firmware_built_for_another_board_is_refused(outdir: Path) -> None:
    info = json.loads((outdir / "th_app.json").read_text())
    (outdir / "th_app.json").write_text(json.dumps({**info, "board": "nucleo-l4r5zi"}))
    with pytest.raises(DeployError, match="built for nucleo-l4r5zi, not nucleo-f446re"):
        plan_flash(outdir, "nucleo-f446re", dry_run=True)
    assert plan_flash(outdir, "nucleo-l4r5zi", dry_run=True).board.name == "nucleo-l4r5zi"


def test_a_host_build_is_refused(outdir: Path) -> None:
    (outdir / "app.elf").write_bytes(_elf_header(X86_64))
    with pytest.raises(DeployError, match="not an Arm firmware .*host build"):
        plan_flash(outdir, "nucleo-f446re", dry_run=True)


def test_cli_requires_board(outdir: Path) -> None:
    with pytest.raises(SystemExit):
        _cli(["flash", str(outdir)])


def test_describe_serial() -> None:
    nucleo = describe_serial(load_board("nucleo-f446re"), ["/dev/ttyACM0"])
    assert "USART2 TX=PA2 RX=PA3" in nucleo and "/dev/ttyACM0" in nucleo
    assert "no virtual COM port" in describe_serial(load_board("stm32f4_discovery"), [])


# --- real tools (when installed, and only with no ST-LINK attached) -----------------------------


def _stlink_attached() -> bool:
    try:
        from serial.tools import list_ports
    except ImportError:  # pragma: no cover
        return False
    if any(p.vid == 0x0483 for p in list_ports.comports()):
        return True
    sysfs = Path("/sys/bus/usb/devices")
    return sysfs.is_dir() and any(
        (d / "idVendor").is_file() and (d / "idVendor").read_text().strip() == "0483"
        for d in sysfs.iterdir()
    )


@pytest.mark.parametrize("tool", ["openocd", "st-flash"])
def test_real_tool_without_probe(tool: str, outdir: Path) -> None:
    if shutil.which(tool) is None:
        package = "openocd" if tool == "openocd" else "stlink-tools"
        pytest.skip(f"{tool} not installed (apt install {package})")
    if _stlink_attached():
        pytest.skip("an ST-LINK is attached: the tests do not flash real boards")
    with pytest.raises(DeployError, match=f"{tool} found no debug probe"):
        flash(outdir, "nucleo-f446re", tool, timeout=60)
