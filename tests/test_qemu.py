"""Running firmware on QEMU and the host board, and the exact icount plugin.

Needs arm-none-eabi-gcc, cmake and qemu-system-arm; each test skips with the reason if one is
missing. Builds are shared with test_boards.py through build/tests/ (reused, incremental).
"""

from __future__ import annotations

import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tinyhost.deploy import (
    MARKER_OVERHEAD,
    build,
    count_instructions,
    open_session,
    run_semihosted,
    run_with_icount,
)
from tinyhost.deploy.build import BuildResult
from tinyhost.deploy.icount import marker_addresses
from tinyhost.errors import DeployError
from tinyhost.paths import repo_root

ROOT = repo_root()
EXAMPLES = ROOT / "boards" / "examples"
QEMU_BOARDS = ["mps2-an386", "mps2-an500", "netduinoplus2", "mps3-an547"]
ALL_BOARDS = [*QEMU_BOARDS, "host"]
LOOP_NS = [1, 10, 1000, 100000]  # boards/examples/icount/main.c

MISSING = [
    tool
    for tool in ("cmake", "arm-none-eabi-gcc", "qemu-system-arm", "gcc")
    if shutil.which(tool) is None
]
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"not installed: {', '.join(MISSING)}")


@pytest.fixture(scope="session")
def firmware() -> dict[tuple[str, str], BuildResult]:
    """(app, board) -> build, for hello on all boards and icount/fault on the QEMU boards."""
    jobs = [("hello", b) for b in ALL_BOARDS]
    jobs += [("icount", b) for b in QEMU_BOARDS]
    jobs += [("fault", b) for b in ("mps2-an386", "mps3-an547")]
    with ThreadPoolExecutor() as pool:
        futures = {
            (app, b): pool.submit(build, EXAMPLES / app, b, ROOT / "build" / "tests" / f"{app}-{b}")
            for app, b in jobs
        }
        return {k: f.result() for k, f in futures.items()}


@pytest.mark.parametrize("board", ALL_BOARDS)
def test_hello_over_serial_link(board: str, firmware: dict[tuple[str, str], BuildResult]) -> None:
    """UART over QEMU's TCP serial port (pyserial socket://), or stdin/stdout for host."""
    elf = firmware[("hello", board)].elf
    with open_session(elf, board, timeout=30) as s:
        line = s.port.read_until(f"hello {board}\n".encode())
        assert line.endswith(f"hello {board}\n".encode()), line
        # RX was on before that line went out, so this byte cannot be lost (ARCHITECTURE.md §4.10).
        s.port.write(b"x")
        rest = s.port.read_until(b"echo:x\n")
        assert rest.endswith(b"echo:x\n"), rest
        assert b"ready\n" in rest
        res = s.wait(timeout=20)
    assert res.exit_code == 0, res.describe()
    assert f"hello {board}\n" in res.stderr  # the same line over semihosting


@pytest.mark.parametrize("board", ALL_BOARDS)
def test_semihosting_files_and_exit_code(
    board: str, firmware: dict[tuple[str, str], BuildResult], tmp_path: Path
) -> None:
    elf = firmware[("hello", board)].elf
    res = run_semihosted(elf, board, timeout=30, cwd=tmp_path)
    assert res.exit_code == 0, res.describe()
    assert not (tmp_path / "hello_out.txt").exists()
    # hello reads its exit code from hello_in.txt and writes hello_out.txt (SYS_OPEN/FLEN/READ/
    # WRITE/CLOSE); the code comes back through SYS_EXIT_EXTENDED.
    (tmp_path / "hello_in.txt").write_text("7\n")
    res = run_semihosted(elf, board, timeout=30, cwd=tmp_path)
    assert res.exit_code == 7, res.describe()
    assert (tmp_path / "hello_out.txt").read_text() == f"board={board}\n"
    assert f"hello {board}\n" in res.stdout  # UART (QEMU -serial stdio)
    assert "bye\n" in res.stderr


@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_hardfault_reports_and_exits(
    board: str, firmware: dict[tuple[str, str], BuildResult]
) -> None:
    res = run_semihosted(firmware[("fault", board)].elf, board, timeout=30)
    assert res.exit_code == 120, res.describe()  # TH_EXIT_HARDFAULT
    assert "*** HardFault ***" in res.stderr
    assert re.search(r"pc=0x[0-9a-f]{8}", res.stderr)


def test_session_is_killed_on_exit(firmware: dict[tuple[str, str], BuildResult]) -> None:
    with open_session(firmware[("hello", "netduinoplus2")].elf, "netduinoplus2", timeout=30) as s:
        s.port.read_until(b"hello netduinoplus2\n")
    assert s.result is not None  # QEMU was reaped, whatever it was doing


def test_session_timeout_kills_qemu(firmware: dict[tuple[str, str], BuildResult]) -> None:
    """The watchdog ends a run that outlives its budget even if nobody reads the port."""
    elf = firmware[("hello", "mps2-an386")].elf
    # -S: QEMU starts with the CPU stopped, so the firmware never runs nor exits.
    with open_session(elf, "mps2-an386", timeout=1.0, extra_args=["-S"]) as s:
        res = s.wait(timeout=20)
    assert res.timed_out and res.exit_code is None


# --- the icount plugin -----------------------------------------------------------------


def expected_counts() -> list[int]:
    # Both loops in boards/examples/icount/loops.S: the start marker's bx lr, n iterations of
    # 3 instructions, the bl to the stop marker; icount_loop first, then icount_io_loop.
    per_loop = [3 * n + MARKER_OVERHEAD for n in LOOP_NS]
    return per_loop + per_loop


@pytest.mark.parametrize("board", QEMU_BOARDS)
def test_icount_plugin_is_exact(board: str, firmware: dict[tuple[str, str], BuildResult]) -> None:
    elf = firmware[("icount", board)].elf
    counts = count_instructions(elf, board, timeout=60)
    assert counts == expected_counts()
    # Differences are exactly 3 per extra iteration, including the loop that reads a device
    # register every iteration (the io-recompile path of -icount).
    for first in (0, len(LOOP_NS)):
        for i in range(1, len(LOOP_NS)):
            d = counts[first + i] - counts[first]
            assert d == 3 * (LOOP_NS[i] - LOOP_NS[0])
    assert count_instructions(elf, board, timeout=60) == counts  # deterministic


def parse_counter_lines(stderr: str) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {"loop": [], "ioloop": []}
    for kind, n, delta in re.findall(r"^(loop|ioloop) n=(\d+) counter=(\d+)$", stderr, re.M):
        out[kind].append(int(delta))
        assert int(n) == LOOP_NS[len(out[kind]) - 1]
    return out


def test_tim2_agrees_with_plugin(firmware: dict[tuple[str, str], BuildResult]) -> None:
    """netduinoplus2 TIM2 (prescaler 0, -icount shift=0) counts one per instruction: around the
    same calls it reads the plugin's count plus a constant (the calls and the counter reads)."""
    elf = firmware[("icount", "netduinoplus2")].elf
    runs = [run_with_icount(elf, "netduinoplus2", timeout=60) for _ in range(2)]
    for r in runs:
        assert r.run.ok, r.run.describe()
    assert runs[0].counts == runs[1].counts == expected_counts()
    tim = parse_counter_lines(runs[0].run.stderr)
    assert tim == parse_counter_lines(runs[1].run.stderr)  # deterministic
    k = len(LOOP_NS)
    for kind, plugin in (("loop", runs[0].counts[:k]), ("ioloop", runs[0].counts[k:])):
        offsets = {t - p for t, p in zip(tim[kind], plugin, strict=True)}
        assert len(offsets) == 1, (kind, tim[kind], plugin)
        assert 0 < offsets.pop() < 64  # a few dozen instructions of call + counter read


def test_systick_is_coarse_but_consistent(firmware: dict[tuple[str, str], BuildResult]) -> None:
    """mps2 SysTick runs at 25 MHz of virtual time: one tick per 40 instructions."""
    res = run_with_icount(firmware[("icount", "mps2-an386")].elf, "mps2-an386", timeout=60)
    ticks = parse_counter_lines(res.run.stderr)["loop"][-1]
    assert abs(ticks * 40 - res.counts[len(LOOP_NS) - 1]) <= 80


def test_marker_symbols_required(firmware: dict[tuple[str, str], BuildResult]) -> None:
    with pytest.raises(DeployError, match="no th_mark_start and th_mark_stop"):
        marker_addresses(firmware[("hello", "mps2-an386")].elf)


def test_icount_needs_qemu(firmware: dict[tuple[str, str], BuildResult]) -> None:
    with pytest.raises(DeployError, match="needs a QEMU board"):
        count_instructions(firmware[("hello", "host")].elf, "host")
