"""Run firmware on QEMU (or natively for the host board).

Two ways to run:

* :func:`run_semihosted` runs to the firmware's semihosting exit and returns its exit code with the
  captured UART (stdout) and semihosting console (stderr) output. For test firmware that moves data
  through semihosting files (relative to ``cwd``).
* :func:`open_session` starts the firmware with its UART on a real link: for QEMU a TCP serial port
  (``-serial tcp:127.0.0.1:PORT,server=on,wait=on,nodelay=on``) opened with pyserial's
  ``socket://`` URL; for the host board the process's stdin/stdout. The session is a context
  manager that always kills the process, and a watchdog kills it at the timeout.

All QEMU runs use ``-icount shift=0,align=off,sleep=off``: every timer is deterministic and
netduinoplus2's TIM2 counts one per instruction (ARCHITECTURE.md §4.10).
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

import serial

from tinyhost.boards import Board, resolve_board
from tinyhost.deploy.build import require_tool
from tinyhost.errors import DeployError

ICOUNT_ARGS = ("-icount", "shift=0,align=off,sleep=off")


@dataclass(frozen=True)
class Plugin:
    """A QEMU TCG plugin and its ``key=value`` arguments."""

    path: Path
    args: tuple[tuple[str, str], ...] = ()

    def qemu_arg(self) -> str:
        return ",".join([str(self.path)] + [f"{k}={v}" for k, v in self.args])


@dataclass(frozen=True)
class RunResult:
    exit_code: int | None  # None when killed at the timeout
    stdout: str  # UART output (QEMU -serial stdio, or the host board's stdout)
    stderr: str  # semihosting console and QEMU's own messages
    timed_out: bool

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.exit_code == 0

    def describe(self) -> str:
        status = "timed out" if self.timed_out else f"exit code {self.exit_code}"
        return f"{status}\n--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"


def _qemu_machine(board: Board) -> str:
    machine = board.qemu_machine
    if machine is None:
        raise DeployError(f"board {board.name!r} does not run on QEMU (emulator: {board.emulator})")
    return machine


def qemu_command(
    board: Board,
    elf: Path,
    serial_spec: str = "null",
    plugin: Plugin | None = None,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """The qemu-system-arm command line for ``elf`` on ``board``."""
    cmd = [
        require_tool("qemu-system-arm"),
        "-M", _qemu_machine(board),
        "-nographic",
        "-monitor", "none",
        "-semihosting-config", "enable=on,target=native",
        *ICOUNT_ARGS,
        "-serial", serial_spec,
        "-kernel", str(elf),
    ]  # fmt: skip
    if plugin is not None:
        cmd += ["-plugin", plugin.qemu_arg()]
    return cmd + list(extra_args)


def run_semihosted(
    elf: Path | str,
    board: Board | str,
    timeout: float = 30.0,
    cwd: Path | str | None = None,
    plugin: Plugin | None = None,
    extra_args: Sequence[str] = (),
) -> RunResult:
    """Run to the firmware's exit (semihosting SYS_EXIT_EXTENDED, or exit() on the host board)."""
    b = resolve_board(board)
    elf = Path(elf).resolve()
    if b.is_host:
        if plugin is not None:
            raise DeployError("the icount plugin needs QEMU; the host board runs natively")
        cmd = [str(elf), *extra_args]
    else:
        cmd = qemu_command(b, elf, "stdio", plugin, extra_args)
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as e:
        return RunResult(None, _text(e.stdout), _text(e.stderr), True)
    return RunResult(proc.returncode, _text(proc.stdout), _text(proc.stderr), False)


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode(errors="replace")


# --- sessions with a live UART ------------------------------------------------


class SerialLike(Protocol):
    """The subset of pyserial's API the deploy code and the serial protocol use."""

    timeout: float | None

    def read(self, size: int = 1) -> bytes: ...
    def write(self, data: bytes) -> int | None: ...
    def read_until(self, expected: bytes = b"\n", size: int | None = None) -> bytes: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


class PipePort:
    """pyserial-like port over a child's stdin/stdout (the host board's UART)."""

    def __init__(self, proc: subprocess.Popen[bytes], timeout: float | None = 1.0) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self._proc = proc
        self._in: IO[bytes] = proc.stdout
        self._out: IO[bytes] = proc.stdin
        self.timeout = timeout

    def read(self, size: int = 1) -> bytes:
        """Up to ``size`` bytes; fewer if the timeout passes or the program closes stdout."""
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        buf = bytearray()
        fd = self._in.fileno()
        while len(buf) < size:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                break
            chunk = os.read(fd, size - len(buf))
            if not chunk:
                break
            buf += chunk
        return bytes(buf)

    def read_until(self, expected: bytes = b"\n", size: int | None = None) -> bytes:
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        buf = bytearray()
        saved = self.timeout
        try:
            while not buf.endswith(expected) and (size is None or len(buf) < size):
                if deadline is not None:
                    self.timeout = max(0.0, deadline - time.monotonic())
                c = self.read(1)
                if not c:
                    break
                buf += c
        finally:
            self.timeout = saved
        return bytes(buf)

    def write(self, data: bytes) -> int:
        self._out.write(data)
        self._out.flush()
        return len(data)

    def flush(self) -> None:
        self._out.flush()

    def close(self) -> None:
        for f in (self._out, self._in):
            with contextlib.suppress(OSError):
                f.close()


class Session:
    """A running firmware with its UART reachable as ``session.port`` (pyserial-like).

    Use as a context manager; the process is killed on exit, and by a watchdog at ``timeout``.
    """

    def __init__(
        self,
        board: Board,
        elf: Path,
        timeout: float = 30.0,
        cwd: Path | str | None = None,
        plugin: Plugin | None = None,
        extra_args: Sequence[str] = (),
        port_timeout: float = 5.0,
    ) -> None:
        self.board = board
        self.elf = elf
        self.timeout = timeout
        self.cwd = cwd
        self.plugin = plugin
        self.extra_args = tuple(extra_args)
        self.port_timeout = port_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._port: SerialLike | None = None
        self._stdout: IO[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._watchdog: threading.Timer | None = None
        self._timed_out = threading.Event()
        self.result: RunResult | None = None

    # context manager ---------------------------------------------------------
    def __enter__(self) -> Session:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> SerialLike:
        if self._port is None:
            raise DeployError("session not started")
        return self._port

    # lifecycle -----------------------------------------------------------------
    def start(self) -> None:
        if self.board.is_host:
            self._start_host()
        else:
            self._start_qemu()
        self._watchdog = threading.Timer(self.timeout, self._on_timeout)
        self._watchdog.daemon = True
        self._watchdog.start()

    def _on_timeout(self) -> None:
        self._timed_out.set()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()

    def _start_host(self) -> None:
        if self.plugin is not None:
            raise DeployError("the icount plugin needs QEMU; the host board runs natively")
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in _finish)
        self._proc = subprocess.Popen(
            [str(self.elf), *self.extra_args],
            cwd=self.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._port = PipePort(self._proc, timeout=self.port_timeout)

    def _start_qemu(self) -> None:
        last_error = ""
        for _attempt in range(5):
            port = _free_port()
            spec = f"tcp:127.0.0.1:{port},server=on,wait=on,nodelay=on"
            cmd = qemu_command(self.board, self.elf, spec, self.plugin, self.extra_args)
            self._stdout = tempfile.TemporaryFile()  # noqa: SIM115 (closed in _finish)
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in _finish)
            self._proc = subprocess.Popen(
                cmd,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                stdout=self._stdout,
                stderr=self._stderr,
            )
            ser = self._connect(port)
            if ser is not None:
                ser.timeout = self.port_timeout
                self._port = ser
                return
            last_error = self._read_tmp(self._stderr)
            self._reap()
            if "in use" not in last_error:  # anything but a lost race for the port
                break
        raise DeployError(f"QEMU did not open its serial port: {last_error.strip()}")

    def _connect(self, port: int) -> serial.SerialBase | None:
        """Connect to QEMU's serial server; None if QEMU exited first."""
        assert self._proc is not None
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return None
            try:
                return serial.serial_for_url(
                    f"socket://127.0.0.1:{port}", timeout=self.port_timeout
                )
            except serial.SerialException:
                time.sleep(0.01)
        self._proc.kill()
        return None

    def wait(self, timeout: float | None = None) -> RunResult:
        """Wait for the firmware to exit (bounded by the session timeout) and collect its output."""
        assert self._proc is not None
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._timed_out.set()
        return self._finish()

    def close(self) -> None:
        if self._proc is not None and self.result is None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._finish()

    def _finish(self) -> RunResult:
        assert self._proc is not None
        if self.result is not None:
            return self.result
        if self._port is not None:
            with contextlib.suppress(Exception):
                self._port.close()
        code = self._proc.wait()
        if self._watchdog is not None:
            self._watchdog.cancel()
        out = self._read_tmp(self._stdout)
        err = self._read_tmp(self._stderr)
        timed_out = self._timed_out.is_set()
        self.result = RunResult(None if timed_out else code, out, err, timed_out)
        return self.result

    def _reap(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
        for f in (self._stdout, self._stderr):
            if f is not None:
                f.close()

    @staticmethod
    def _read_tmp(f: IO[bytes] | None) -> str:
        if f is None:
            return ""
        f.seek(0)
        text = f.read().decode(errors="replace")
        f.close()
        return text


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def open_session(
    elf: Path | str,
    board: Board | str,
    timeout: float = 30.0,
    cwd: Path | str | None = None,
    plugin: Plugin | None = None,
    extra_args: Sequence[str] = (),
    port_timeout: float = 5.0,
) -> Session:
    """Start ``elf`` on ``board`` with a live UART; use as ``with open_session(...) as s:``.

    ``port_timeout`` is the read timeout of ``s.port``; ``timeout`` bounds the whole run.
    """
    s = Session(
        resolve_board(board), Path(elf).resolve(), timeout, cwd, plugin, extra_args, port_timeout
    )
    return s
