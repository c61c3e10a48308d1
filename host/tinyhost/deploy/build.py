"""Build firmware for a board with the top-level CMakeLists.txt (cmake + ninja or make)."""

from __future__ import annotations

import fcntl
import json
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tinyhost.boards import Board, resolve_board
from tinyhost.errors import DeployError
from tinyhost.paths import repo_root

APT_HINTS = {
    "cmake": "apt install cmake ninja-build",
    "arm-none-eabi-gcc": "apt install gcc-arm-none-eabi libnewlib-arm-none-eabi",
    "arm-none-eabi-size": "apt install binutils-arm-none-eabi",
    "arm-none-eabi-nm": "apt install binutils-arm-none-eabi",
    "gcc": "apt install gcc",
    "size": "apt install binutils",
    "qemu-system-arm": "apt install qemu-system-arm",
}


def require_tool(name: str) -> str:
    """Path of an executable, or a DeployError saying what to install."""
    path = shutil.which(name)
    if path is None:
        hint = APT_HINTS.get(name)
        raise DeployError(f"{name} not found on PATH" + (f"; install it: {hint}" if hint else ""))
    return path


@dataclass(frozen=True)
class SizeInfo:
    text: int
    data: int
    bss: int

    @property
    def flash(self) -> int:
        """Bytes in flash: code + constants + the initial image of .data."""
        return self.text + self.data

    @property
    def ram(self) -> int:
        """Static RAM: .data + .bss + .arena (the stack comes on top)."""
        return self.data + self.bss


@dataclass(frozen=True)
class BuildResult:
    elf: Path
    bin: Path | None
    size: SizeInfo
    board: Board
    build_dir: Path
    log: str


def _run(cmd: list[str], cwd: Path | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        tail = "\n".join(out.splitlines()[-40:])
        raise DeployError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{tail}")
    return out


_NINJA_STEP = re.compile(r"^\[(\d+)/(\d+)\]")


def _run_with_progress(cmd: list[str], what: str) -> str:
    """`cmd` (a build) with a progress bar from ninja's "[n/m]" lines (shown on a terminal
    only); the output, as _run returns it."""
    from tqdm import tqdm

    lines = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as proc, \
            tqdm(desc=what, unit="step", disable=None, leave=False) as bar:  # fmt: skip
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            step = _NINJA_STEP.match(line)
            if step:
                bar.total = int(step.group(2))
                bar.n = int(step.group(1))
                bar.refresh()
    out = "".join(lines)
    if proc.returncode != 0:
        tail = "\n".join(out.splitlines()[-40:])
        raise DeployError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{tail}")
    return out


def size_of(elf: Path, board: Board) -> SizeInfo:
    """text/data/bss of an ELF (Berkeley format of arm-none-eabi-size or size)."""
    tool = require_tool("size" if board.is_host else "arm-none-eabi-size")
    lines = _run([tool, str(elf)]).splitlines()
    try:
        text, data, bss = (int(x) for x in lines[1].split()[:3])
    except (IndexError, ValueError) as e:
        raise DeployError(f"cannot parse size output for {elf}: {lines!r}") from e
    return SizeInfo(text=text, data=data, bss=bss)


def _cached_board(build_dir: Path) -> str | None:
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith("BOARD:"):
            return line.split("=", 1)[1]
    return None


def build(
    app_dir: Path | str,
    board: Board | str,
    build_dir: Path | str,
    defines: Mapping[str, str | int | bool] | None = None,
    model_dir: Path | str | None = None,
    root: Path | None = None,
) -> BuildResult:
    """Configure and build ``app_dir`` for ``board`` in ``build_dir``: the ELF and its sizes.

    ``defines`` become ``-D<key>=<value>`` CMake cache entries (an app.cmake can read them).
    Build directories are reused: a second call only rebuilds what changed.
    """
    root = root or repo_root()
    b = resolve_board(board, root)
    app = Path(app_dir).resolve()
    if not app.is_dir():
        raise DeployError(f"app directory {app} does not exist")
    out = Path(build_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)

    cmake = require_tool("cmake")
    require_tool("gcc" if b.is_host else "arm-none-eabi-gcc")
    # One build at a time per build tree (parallel test workers may share one).
    with open(out / ".tinyhost-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_locked(app, b, out, cmake, defines, model_dir, root)


def _build_locked(
    app: Path,
    b: Board,
    out: Path,
    cmake: str,
    defines: Mapping[str, str | int | bool] | None,
    model_dir: Path | str | None,
    root: Path,
) -> BuildResult:
    # A CMake build tree is tied to its toolchain: start over if the board changed.
    cached = _cached_board(out)
    if cached is not None and cached != b.name:
        (out / "CMakeCache.txt").unlink()
        shutil.rmtree(out / "CMakeFiles", ignore_errors=True)

    generator = "Ninja" if shutil.which("ninja") else "Unix Makefiles"
    cmd = [cmake, "-S", str(root), "-B", str(out), "-G", generator,
           f"-DBOARD={b.name}", f"-DAPP={app}"]  # fmt: skip
    cmd.append(f"-DMODEL_DIR={Path(model_dir).resolve()}" if model_dir else "-DMODEL_DIR=")
    if shutil.which("ccache"):
        # Many builds share the kernels: compile them once. -g would put the build directory
        # into ccache's hash; the debug info's directory is all that differs without it.
        # CCACHE_BASEDIR makes the paths under the repository relative to the build tree, so
        # the line markers of a model's forced-in th_nn_config.h (codegen/prune.py) no longer
        # name its own directory: two models whose paths compile the same code share objects
        # (a compiled model's build: ~60 s of kernel compiles -> ~7 s from the cache).
        cmd.append("-DCMAKE_C_COMPILER_LAUNCHER=/usr/bin/env;CCACHE_NOHASHDIR=true;"
                   f"CCACHE_BASEDIR={root};ccache")
    for key, value in (defines or {}).items():
        v = ("ON" if value else "OFF") if isinstance(value, bool) else str(value)
        cmd.append(f"-D{key}={v}")
    if (out / "CMakeCache.txt").is_file():
        # Keep the generator of an existing tree (CMake refuses to switch).
        cmd = [c for c in cmd if c not in ("-G", generator)]
    log = _run(cmd)
    log += _run_with_progress([cmake, "--build", str(out)], f"building for {b.name}")

    info_path = out / "th_app.json"
    try:
        info = json.loads(info_path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise DeployError(f"build produced no readable {info_path}: {e}") from e
    elf = Path(info["elf"])
    if not elf.is_file():
        raise DeployError(f"build reported {elf}, which does not exist")
    bin_path = out / f"{info['name']}.bin"
    return BuildResult(
        elf=elf,
        bin=bin_path if bin_path.is_file() else None,
        size=size_of(elf, b),
        board=b,
        build_dir=out,
        log=log,
    )
