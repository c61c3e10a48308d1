"""Exact instruction counts on QEMU with our TCG plugin (tools/qemu-icount/icount.c).

The plugin counts every instruction executed from the first instruction of ``th_mark_start``
(inclusive) to the first instruction of ``th_mark_stop`` (exclusive); each start/stop pair gives
one count. Both markers are one ``bx lr`` on Cortex-M, so a region of K instructions between the
two calls counts ``K + MARKER_OVERHEAD``.

Mark mode (``mark=ADDR``): every execution of ``th_icount_mark`` appends the running instruction
total to the out file; :class:`MarkLog` reads the new lines, and :func:`invoke_latency` turns the
``2 * n_ops + 2`` marks of one profiled interpreter invoke into exact instruction counts
(boards/README.md "Exact instruction latency").

The plugin is compiled with the host gcc on first use and cached by the hash of its source.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tinyhost.boards import Board, resolve_board
from tinyhost.deploy.build import require_tool
from tinyhost.deploy.cycles import ClassCounts
from tinyhost.deploy.qemu import Plugin, RunResult, run_semihosted
from tinyhost.errors import DeployError
from tinyhost.paths import repo_root

MARKER_OVERHEAD = 2  # the start marker's bx lr + the call to th_mark_stop
START_SYMBOL = "th_mark_start"
STOP_SYMBOL = "th_mark_stop"
MARK_SYMBOL = "th_icount_mark"


def plugin_source_dir(root: Path | None = None) -> Path:
    return (root or repo_root()) / "tools" / "qemu-icount"


def build_plugin(cache_dir: Path | str | None = None, root: Path | None = None) -> Path:
    """Compile icount.c into a shared object (once per source version) and return its path."""
    src_dir = plugin_source_dir(root)
    sources = [src_dir / "icount.c", src_dir / "qemu_plugin_api.h"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]
    cache = Path(cache_dir) if cache_dir else (root or repo_root()) / "build" / "qemu-icount"
    so = cache / f"icount-{digest}.so"
    if so.is_file():
        return so
    cache.mkdir(parents=True, exist_ok=True)
    gcc = require_tool("gcc")
    # Build to a temporary name and rename: concurrent test workers never see half a file.
    fd, tmp_name = tempfile.mkstemp(prefix="icount-", suffix=".so.tmp", dir=cache)
    os.close(fd)
    cmd = [gcc, "-std=c99", "-O2", "-shared", "-fPIC", "-fvisibility=hidden",
           "-Wall", "-Wextra", "-Werror", "-o", tmp_name, str(sources[0])]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        os.unlink(tmp_name)
        raise DeployError(f"building the icount plugin failed:\n{proc.stdout}{proc.stderr}")
    os.replace(tmp_name, so)
    return so


def _symbols(elf: Path | str, names: tuple[str, ...]) -> dict[str, int]:
    """Addresses of those of ``names`` defined in ``elf`` (Thumb bit cleared)."""
    nm = require_tool("arm-none-eabi-nm")
    proc = subprocess.run([nm, str(elf)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise DeployError(f"arm-none-eabi-nm {elf} failed: {proc.stderr.strip()}")
    found: dict[str, int] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in names:
            found[parts[2]] = int(parts[0], 16) & ~1
    return found


def marker_addresses(elf: Path | str) -> tuple[int, int]:
    """Addresses of th_mark_start and th_mark_stop in ``elf`` (Thumb bit cleared)."""
    found = _symbols(elf, (START_SYMBOL, STOP_SYMBOL))
    missing = [s for s in (START_SYMBOL, STOP_SYMBOL) if s not in found]
    if missing:
        raise DeployError(
            f"{elf} has no {' and '.join(missing)}: call th_mark_start()/th_mark_stop() "
            "(boards/include/th_board.h) around the region to count"
        )
    return found[START_SYMBOL], found[STOP_SYMBOL]


def icount_plugin(
    elf: Path | str, out_file: Path | str, cache_dir: Path | str | None = None
) -> Plugin:
    """The plugin spec counting between the markers of ``elf``, writing counts to ``out_file``."""
    start, stop = marker_addresses(elf)
    return Plugin(
        build_plugin(cache_dir),
        (("start", hex(start)), ("stop", hex(stop)), ("out", str(Path(out_file).resolve()))),
    )


def mark_address(elf: Path | str) -> int | None:
    """Address of th_icount_mark in ``elf``, or None if the firmware has no mark."""
    return _symbols(elf, (MARK_SYMBOL,)).get(MARK_SYMBOL)


def mark_plugin(
    elf: Path | str, out_file: Path | str, cache_dir: Path | str | None = None,
    classes: bool = False,
) -> Plugin | None:  # fmt: skip
    """The plugin spec logging every th_icount_mark of ``elf`` to ``out_file``; None without one.
    ``classes``: each line also carries the instruction-class counters (cycles.ClassCounts)."""
    addr = mark_address(elf)
    if addr is None:
        return None
    args = (("mark", hex(addr)), ("out", str(Path(out_file).resolve())))
    return Plugin(build_plugin(cache_dir), args + ((("classes", "1"),) if classes else ()))


class MarkLog:
    """Reads the mark lines the plugin appended to its out file since the last :meth:`take`."""

    def __init__(self, out_file: Path | str) -> None:
        self.path = Path(out_file)
        self._offset = 0

    def take(self) -> list[int]:
        """The running totals logged since the last call (complete lines only); in class mode
        their class counters are kept in `counters`, one per total."""
        self.counters: list[ClassCounts] = []
        if not self.path.is_file():
            return []
        with self.path.open("rb") as f:
            f.seek(self._offset)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self._offset += end
        totals = []
        for line in data[:end].splitlines():
            fields = [int(x) for x in line.split()]
            totals.append(fields[0])
            if len(fields) > 1:
                self.counters.append(ClassCounts.of(fields[1:]))
        return totals


@dataclass(frozen=True)
class InvokeCounts:
    """Exact instructions of one profiled interpreter invoke, from its marks."""

    total: int  # entry mark to exit mark: dispatch, kernels, counter reads, inner marks
    per_op: list[int]  # each op's kernel call (between the marks around it)


def invoke_classes(counters: list[ClassCounts], n_ops: int) -> tuple[ClassCounts,
                                                                     list[ClassCounts]]:
    """The class counters of one invoke (whole, per op) from its marks' counters, as
    invoke_latency splits the totals (the counters include the marks' own calls)."""
    if len(counters) != 2 * n_ops + 2:
        raise DeployError(f"{len(counters)} class-counter marks for {n_ops} ops, want "
                          f"{2 * n_ops + 2}")  # fmt: skip
    per_op = [counters[2 + 2 * i] - counters[1 + 2 * i] for i in range(n_ops)]
    return counters[-1] - counters[0], per_op


def invoke_latency(marks: list[int], n_ops: int) -> InvokeCounts:
    """Turn the ``2 * n_ops + 2`` running totals of one invoke into instruction counts.

    Each difference of consecutive marks counts the instructions between the two calls plus
    MARKER_OVERHEAD (the mark's ``bx lr`` and the next ``bl``), which is subtracted.
    """
    if len(marks) != 2 * n_ops + 2:
        raise DeployError(
            f"icount: expected {2 * n_ops + 2} marks for an invoke of {n_ops} ops, got {len(marks)}"
        )
    if any(b <= a for a, b in zip(marks, marks[1:])):
        raise DeployError(f"icount: mark totals are not increasing: {marks[:8]}...")
    per_op = [marks[2 + 2 * i] - marks[1 + 2 * i] - MARKER_OVERHEAD for i in range(n_ops)]
    return InvokeCounts(marks[-1] - marks[0] - MARKER_OVERHEAD, per_op)


def read_counts(out_file: Path | str) -> list[int]:
    path = Path(out_file)
    if not path.is_file():
        return []
    return [int(line) for line in path.read_text().split()]


@dataclass(frozen=True)
class IcountRun:
    counts: list[int]
    run: RunResult


def run_with_icount(
    elf: Path | str,
    board: Board | str,
    timeout: float = 60.0,
    cwd: Path | str | None = None,
    cache_dir: Path | str | None = None,
) -> IcountRun:
    """Run ``elf`` to its exit under the plugin; the counts and the run's output."""
    b = resolve_board(board)
    if b.qemu_machine is None:
        raise DeployError(f"instruction counting needs a QEMU board; {b.name!r} is not one")
    with tempfile.TemporaryDirectory(prefix="th-icount-") as tmp:
        out_file = Path(tmp) / "counts.txt"
        plugin = icount_plugin(elf, out_file, cache_dir)
        run = run_semihosted(elf, b, timeout=timeout, cwd=cwd, plugin=plugin)
        return IcountRun(read_counts(out_file), run)


def count_instructions(
    elf: Path | str,
    board: Board | str,
    timeout: float = 60.0,
    cwd: Path | str | None = None,
    cache_dir: Path | str | None = None,
) -> list[int]:
    """Instruction counts of each th_mark_start/th_mark_stop pair, in execution order.

    Raises DeployError if the firmware does not exit with code 0 within ``timeout``.
    """
    r = run_with_icount(elf, board, timeout, cwd, cache_dir)
    if not r.run.ok:
        raise DeployError(
            f"{elf} on {board if isinstance(board, str) else board.name}: {r.run.describe()}"
        )
    return r.counts
