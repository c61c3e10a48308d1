"""Board data and firmware builds (tinyhost.boards / .build, CMakeLists.txt)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tinyhost.boards import list_boards, load_board
from tinyhost.deploy import build, run_semihosted
from tinyhost.deploy.build import BuildResult
from tinyhost.errors import DeployError
from tinyhost.paths import repo_root

ROOT = repo_root()
QEMU_BOARDS = ["mps2-an386", "mps2-an500", "netduinoplus2", "mps3-an547"]
ALL_BOARDS = [*QEMU_BOARDS, "host"]
HELLO = ROOT / "boards" / "examples" / "hello"

HAVE_CMAKE = shutil.which("cmake") is not None
HAVE_ARM_GCC = shutil.which("arm-none-eabi-gcc") is not None
HAVE_GCC = shutil.which("gcc") is not None


def toolchain_skip(board: str) -> None:
    if not HAVE_CMAKE:
        pytest.skip("cmake not installed (apt install cmake ninja-build)")
    if board == "host" and not HAVE_GCC:
        pytest.skip("gcc not installed")
    if board != "host" and not HAVE_ARM_GCC:
        pytest.skip("arm-none-eabi-gcc not installed (apt install gcc-arm-none-eabi)")


@pytest.fixture(scope="session")
def hello_builds() -> dict[str, BuildResult]:
    """hello for every board whose toolchain is present, built once (in parallel) per session.

    Build trees live in build/tests/ and are reused across sessions (incremental rebuilds).
    """
    boards = [b for b in ALL_BOARDS if HAVE_CMAKE and (HAVE_GCC if b == "host" else HAVE_ARM_GCC)]
    with ThreadPoolExecutor() as pool:
        futures = {
            b: pool.submit(build, HELLO, b, ROOT / "build" / "tests" / f"hello-{b}") for b in boards
        }
        return {b: f.result() for b, f in futures.items()}


# --- board data ------------------------------------------------------------------


def test_all_boards_listed() -> None:
    assert set(ALL_BOARDS) <= set(list_boards())


@pytest.mark.parametrize("name", ALL_BOARDS)
def test_board_json_loads(name: str) -> None:
    b = load_board(name)
    assert b.name == name
    assert b.flash_method is None  # all five are emulated or native
    if name == "host":
        assert b.emulator is None and b.is_host
        assert b.counter.unit == "host-ns"
    else:
        assert b.qemu_machine == name
        assert b.cpu is not None and b.cpu.startswith("cortex-m")
        assert b.has_fpu


@pytest.mark.parametrize("name", [n for n in list_boards() if n != "host"])
def test_linker_script_matches_board_json(name: str) -> None:
    b = load_board(name)
    text = (b.path / "linker.ld").read_text()
    pattern = r"(\w+)\s*\(\w+\)\s*:\s*ORIGIN\s*=\s*(\w+),\s*LENGTH\s*=\s*(\w+)"
    regions = {m[1]: (int(m[2], 0), int(m[3], 0)) for m in re.finditer(pattern, text)}
    assert b.flash is not None and b.ram is not None
    assert regions["FLASH"] == (b.flash.base, b.flash.size)
    assert regions["RAM"] == (b.ram.base, b.ram.size)


def test_board_specifics() -> None:
    nd = load_board("netduinoplus2")
    assert (nd.flash.base, nd.flash.size) == (0x08000000, 1 << 20)  # type: ignore[union-attr]
    assert (nd.ram.base, nd.ram.size) == (0x20000000, 128 << 10)  # type: ignore[union-attr]
    assert nd.counter.unit == "instructions"
    m55 = load_board("mps3-an547")
    assert m55.mve and m55.dsp and m55.arena_alignment == 16
    assert load_board("mps2-an500").cpu == "cortex-m7"
    assert load_board("mps2-an386").counter.unit == "systick"


def test_unknown_board_names_valid_ones() -> None:
    with pytest.raises(DeployError) as e:
        load_board("stm32-nonexistent")
    msg = str(e.value)
    assert "unknown board 'stm32-nonexistent'" in msg
    for name in ALL_BOARDS:
        assert name in msg


def test_build_unknown_board_fails_before_cmake(tmp_path: Path) -> None:
    with pytest.raises(DeployError, match="valid boards: ek-ra8m1, host, mps2-an386"):
        build(HELLO, "nope", tmp_path / "b")


@pytest.mark.skipif(not HAVE_CMAKE, reason="cmake not installed")
def test_cmake_unknown_board_message(tmp_path: Path) -> None:
    proc = subprocess.run(
        ["cmake", "-S", str(ROOT), "-B", str(tmp_path / "b"), "-DBOARD=nope"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    assert "unknown board 'nope'; valid boards: ek-ra8m1, host, mps2-an386" in proc.stderr


def test_invalid_board_json_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "boards" / "bad"
    bad.mkdir(parents=True)
    (bad / "board.json").write_text(json.dumps({"name": "bad"}))
    with pytest.raises(DeployError, match="missing keys: description"):
        load_board("bad", root=tmp_path)
    (bad / "board.json").write_text("{not json")
    with pytest.raises(DeployError, match="invalid JSON"):
        load_board("bad", root=tmp_path)


def test_missing_toolchain_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cmake = shutil.which("cmake")
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH
    with pytest.raises(DeployError, match="apt install cmake"):
        build(HELLO, "mps2-an386", tmp_path / "b")
    if cmake is not None:
        (tmp_path / "cmake").symlink_to(cmake)
        with pytest.raises(DeployError, match="apt install gcc-arm-none-eabi"):
            build(HELLO, "mps2-an386", tmp_path / "b")


# --- builds ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_BOARDS)
def test_build_hello(name: str, hello_builds: dict[str, BuildResult]) -> None:
    toolchain_skip(name)
    r = hello_builds[name]
    assert r.elf.is_file() and r.elf.name == "hello.elf"
    assert r.board.name == name
    assert r.size.text > 0 and r.size.flash >= r.size.text
    if name == "host":
        assert r.bin is None
        return
    # The raw image starts with the vector table: initial SP = top of RAM, reset vector in flash.
    assert r.bin is not None and r.bin.is_file()
    words = r.bin.read_bytes()[:8]
    sp, reset = int.from_bytes(words[:4], "little"), int.from_bytes(words[4:], "little")
    b = r.board
    assert b.ram is not None and b.flash is not None
    assert sp == b.ram.end
    assert b.flash.base <= reset < b.flash.end and reset & 1  # Thumb
    assert r.size.flash <= b.flash.size
    # A rebuild of an up-to-date tree is a no-op that finds the same ELF.
    again = build(HELLO, name, r.build_dir)
    assert again.elf == r.elf and again.size == r.size


def test_host_hello_runs_natively(hello_builds: dict[str, BuildResult], tmp_path: Path) -> None:
    toolchain_skip("host")
    res = run_semihosted(hello_builds["host"].elf, "host", timeout=10, cwd=tmp_path)
    assert res.ok, res.describe()
    assert "hello host\n" in res.stdout  # UART = stdout
    assert "hello host\n" in res.stderr  # semihosting console = stderr
    assert re.search(r"counter host-ns \d+", res.stdout)


# --- the SysTick counter extension -------------------------------------------------

SYSTICK_EXTEND_CHECK = r"""
#include <stdio.h>
#include "th_board_internal.h"
int main(void)
{
    /* Up-counts read at irregular steps, wrapping at 2^24 three times. */
    static const uint32_t steps[] = {5u, 0xFFFFF0u, 40u, 3u, 0x7FFFFFu, 0x800000u, 0xFFFFFFu, 1u};
    uint64_t truth = 7u;
    th_systick_count count = {(uint32_t)truth, 0u};
    for (unsigned i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        truth += steps[i];
        uint64_t got = th_systick_extend(&count, (uint32_t)(truth & 0xFFFFFFu));
        printf("%llu %llu\n", (unsigned long long)truth, (unsigned long long)got);
    }
    return 0;
}
"""


def test_systick_extension_counts_through_wraps(tmp_path: Path) -> None:
    """th_systick_extend (the branch-free wrap carry both SysTick counter drivers use) keeps
    a 64-bit count across 24-bit wraps, for any step shorter than one period."""
    if not HAVE_GCC:
        pytest.skip("gcc not installed")
    src = tmp_path / "extend.c"
    src.write_text(SYSTICK_EXTEND_CHECK)
    exe = tmp_path / "extend"
    include = f"-I{ROOT / 'boards' / 'common'}"
    cmd = ["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", include, str(src)]
    cmd += ["-o", str(exe)]
    subprocess.run(cmd, check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    pairs = [tuple(map(int, line.split())) for line in out.splitlines()]
    assert len(pairs) == 8
    assert max(t for t, _ in pairs) > 3 << 24  # the steps do wrap, more than once
    for truth, got in pairs:
        assert got == truth
