"""The optional kernel paths a compiled model takes, so its build leaves the others out
(ARCHITECTURE.md §4.2c).

A kernel that chooses among specialized paths at run time links every one of them, though a
model takes few: the 2x2 SMLAD cores for each requantization form, the 3x3 depthwise assembly
loops for each stride and block parity, the direct and small-Cin convolutions. Each such
choice in kernels_c names its path (`TH_NN_PATH(NAME)`, `kernels_c/include/th_nn_paths.h`);
a build whose `th_nn_config.h` sets `TH_NN_KEEP_NAME 0` compiles the path out and the call
falls to the kernel's general path, always kept and exact. Leaving a path out therefore never
changes a result, only code size and speed.

Which paths a model takes follows from constants of the compiled model (shapes, parameters,
quantization, arena offsets), not from input values, so it is learned by running the model
once: `model.c` and the kernels built on the host with `TH_NN_RECORD_PATHS` (the DSP kernels
modelled in C with `TH_NN_EMULATE_DSP`, so they choose as a Cortex-M4/M7/M33 build does)
and `tools/path-record/record.c`, which prints the paths taken. The kernel objects are
compiled once per kernel source version and cached. Helium (MVE) builds keep every path (their
choices cannot be run on the host), and so does any build where recording is not possible:
the firmware is then as before, never wrong.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tinyhost.codegen.blob import BlobTarget

PATHS_HEADER = Path("kernels_c") / "include" / "th_nn_paths.h"
CONFIG_HEADER = "th_nn_config.h"
KERNEL_PATHS = ("used", "all")  # convert --kernel-paths
RECORD_SOURCE = Path("tools") / "path-record" / "record.c"
_KEEP = re.compile(r"^#define TH_NN_KEEP_(\w+) 1$", re.MULTILINE)
_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class KernelPaths:
    """The outcome for one model: which known paths its build keeps, and why."""

    known: tuple[str, ...]  # every optional path of kernels_c, in th_nn_paths.h's order
    kept: frozenset[str]  # those the build keeps
    recorded: bool  # kept = the paths the model takes; False: every path kept (see reason)
    reason: str = ""

    @property
    def left_out(self) -> tuple[str, ...]:
        return tuple(p for p in self.known if p not in self.kept)

    def to_json(self) -> dict:
        return {"recorded": self.recorded, "kept": sorted(self.kept),
                "left_out": list(self.left_out), **({"reason": self.reason} if self.reason
                                                    else {})}  # fmt: skip


def known_paths(root: Path) -> tuple[str, ...]:
    """The optional paths th_nn_paths.h declares (each kept by default)."""
    return tuple(_KEEP.findall((root / PATHS_HEADER).read_text()))


def path_sources(root: Path) -> tuple[str, ...]:
    """The kernel sources (relative to kernels_c/) that name a path: the only ones a model's
    th_nn_config.h changes, so the others stay the same object in every build (and cached)."""
    kernels = root / "kernels_c"
    return tuple(str(p.relative_to(kernels)) for p in sorted(kernels.rglob("*.c"))
                 if "TH_NN_PATH(" in p.read_text() or "TH_NN_KEEP_" in p.read_text())


def cmake_paths(root: Path) -> str:
    """model.cmake's lines that build the kernel sources naming a path with the model's
    th_nn_config.h (forced in first: its guard then skips kernels_c's default)."""
    files = "\n".join(f'  "${{TH_ROOT}}/kernels_c/{f}"' for f in path_sources(root))
    return (
        "# The kernel paths the model takes (codegen/prune.py): the sources that name a path\n"
        "# see this directory's th_nn_config.h first; the rest build as for any model.\n"
        "if(TARGET th_kernels)\n"
        f"  set_property(SOURCE\n{files}\n"
        "    TARGET_DIRECTORY th_kernels APPEND PROPERTY COMPILE_OPTIONS\n"
        '    -include "${CMAKE_CURRENT_LIST_DIR}/th_nn_config.h")\n'
        "endif()\n"
    )


def keep_all(root: Path, reason: str) -> KernelPaths:
    known = known_paths(root)
    return KernelPaths(known, frozenset(known), recorded=False, reason=reason)


def _recording_flags(target: BlobTarget) -> list[str] | None:
    if target.mve:
        return None
    return ["-DTH_NN_RECORD_PATHS=1", *(["-DTH_NN_EMULATE_DSP=1"] if target.dsp else [])]


def _kernel_sources(root: Path) -> list[Path]:
    return sorted((root / "kernels_c").rglob("*.c"))


def _kernel_objects(root: Path, gcc: str, flags: list[str], cache: Path) -> list[Path]:
    """The kernels compiled for recording, once per source version and flags (cached)."""
    sources = _kernel_sources(root)
    digest = hashlib.sha256(" ".join(flags).encode())
    for p in sorted((root / "kernels_c").rglob("*")):
        if p.is_file() and p.suffix in (".c", ".h"):
            digest.update(str(p.relative_to(root)).encode() + p.read_bytes())
    out = cache / digest.hexdigest()[:16]
    if out.is_dir():
        return sorted(out.glob("*.o"))
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="objs-", dir=cache))
    include = ["-I", str(root / "kernels_c" / "include"), "-I", str(root / "kernels_c")]

    def compile_one(i_src: tuple[int, Path]) -> subprocess.CompletedProcess[str]:
        i, src = i_src
        cmd = [gcc, "-std=c99", "-O1", "-w", *flags, *include, "-c", str(src),
               "-o", str(tmp / f"{i:03d}_{src.stem}.o")]  # fmt: skip
        return subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT_S)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(compile_one, enumerate(sources)))
    failed = [r for r in results if r.returncode != 0]
    if failed:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError(failed[0].stderr.strip()[-2000:])
    try:
        tmp.rename(out)  # atomic: a concurrent recorder sees all objects or none
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another process made the same objects
    return sorted(out.glob("*.o"))


def record_paths(
    model_dir: Path, target: BlobTarget, root: Path, cache: Path | None = None
) -> KernelPaths:
    """The paths the compiled model in `model_dir` (model.c, model.h) takes on `target`'s
    kernel build; every path kept where that cannot be learned (the reason says why)."""
    flags = _recording_flags(target)
    if flags is None:
        return keep_all(root, "Helium build: its kernels' choices are not recorded")
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        return keep_all(root, "no host C compiler (gcc) to record the paths taken")
    cache = cache or root / "build" / "path-record"
    try:
        objects = _kernel_objects(root, gcc, flags, cache)
        with tempfile.TemporaryDirectory(prefix="record-", dir=cache) as work:
            exe = Path(work) / "record"
            include = [
                f"-I{d}"
                for d in (
                    model_dir,
                    root / "firmware" / "include",
                    root / "firmware" / "model",
                    root / "kernels_c" / "include",
                    root / "kernels_c",
                )
            ]
            cmd = [gcc, "-std=c99", "-O1", "-w", *flags, "-DTH_MODEL_NO_COUNTER", *include,
                   str(model_dir / "model.c"), str(root / RECORD_SOURCE), *map(str, objects),
                   "-o", str(exe)]  # fmt: skip
            built = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT_S)
            if built.returncode != 0:
                raise RuntimeError(built.stderr.strip()[-2000:])
            ran = subprocess.run([str(exe)], capture_output=True, text=True,
                                 timeout=_TIMEOUT_S)  # fmt: skip
            if ran.returncode != 0 or "paths:" not in ran.stdout:
                raise RuntimeError(f"exit {ran.returncode}: {ran.stderr.strip()[-500:]}")
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        return keep_all(root, f"recording the paths taken failed: {e}")
    taken = frozenset(ran.stdout.split("paths:", 1)[1].split())
    known = known_paths(root)
    return KernelPaths(known, frozenset(p for p in known if p in taken), recorded=True)


def config_header(paths: KernelPaths, model: str, board: str) -> str:
    """th_nn_config.h for the model's kernel build: every known path, 1 kept, 0 left out."""
    reason = " ".join(paths.reason.replace("*/", "* /").split())
    how = (
        "the paths its layers take, recorded by tinyhost convert; the others are left out"
        if paths.recorded
        else f"every path kept ({reason})"
    )
    lines = [
        f"/* th_nn_config.h for model '{model}' on {board}: {how}",
        " * (kernels_c/include/th_nn_paths.h; generated; its guard is kernels_c's default's). */",
        "#ifndef TH_NN_CONFIG_H",
        "#define TH_NN_CONFIG_H",
    ]
    lines += [f"#define TH_NN_KEEP_{p} {int(p in paths.kept)}" for p in paths.known]
    lines += ["#endif", ""]
    return "\n".join(lines)
