"""Host harness: build the kernels with ASan/UBSan into a driver executable and talk to it.

Choice: a small C driver (tests/kernels/driver/) linked with the sanitizers, run as a
subprocess that reads case records on stdin and answers result records on stdout, instead
of a ctypes-loaded shared library with libasan LD_PRELOADed into Python. Reasons: the
sanitizers then watch a plain C process (no interposition of Python's allocator, no leak
reports from the interpreter, no LD_PRELOAD ordering issues), a crash or sanitizer report
kills only the driver and is reported with its stderr, and the very same case records and
case runner (th_kcase.c) drive the QEMU test firmware. One persistent process serves all
cases of a test session, so a case costs a pipe round trip.

`build_driver()` also builds `libth_nn_host.so` (the kernels as a shared library with the
same flags) for anyone who wants ctypes; the tests use the driver.

Variants: "portable" (the C99 path, OHWI filters) and "dsp" (the DSP algorithms with the
instructions modelled in C, TH_NN_EMULATE_DSP, interleaved filters).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from kernels.cases import Case, Result, build_flags_record, decode_results
from tinyhost.codegen.prune import known_paths

REPO = Path(__file__).resolve().parents[2]
KERNELS_DIR = REPO / "kernels_c"
DRIVER_DIR = Path(__file__).resolve().parent / "driver"

CFLAGS = ("-std=c99", "-O1", "-g", "-Wundef", "-fsanitize=address,undefined",
          "-fno-omit-frame-pointer",
          "-fno-sanitize-recover=all", "-Wall", "-Wextra", "-Werror")
# dsp_general: the DSP build with every optional path left out (th_nn_paths.h), so each
# kernel's general path, the fallback of a compiled model's pruned build, takes every case.
VARIANT_DEFINES = {
    "portable": (),
    "dsp": ("-DTH_NN_EMULATE_DSP=1",),
    "dsp_general": ("-DTH_NN_EMULATE_DSP=1",
                    *(f"-DTH_NN_KEEP_{p}=0" for p in known_paths(REPO))),
}
BUILD_FLAG_DSP = 1
BUILD_FLAG_INTERLEAVED = 2
BUILD_FLAG_NATIVE = 4
BUILD_FLAG_MVE = 8


class HarnessError(RuntimeError):
    """The driver could not be built, or died (sanitizer report, crash)."""


def cache_dir() -> Path:
    base = os.environ.get("TINYHOST_CACHE") or os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "tinyhost" / "kernels"


def _sources() -> list[Path]:
    return sorted(KERNELS_DIR.rglob("*.c"))


def _headers() -> list[Path]:
    return sorted(KERNELS_DIR.rglob("*.h")) + sorted(DRIVER_DIR.glob("*.h"))


def _digest(variant: str, cc: str) -> str:
    h = hashlib.sha256()
    h.update(" ".join((cc, *CFLAGS, *VARIANT_DEFINES[variant])).encode())
    for path in (*_sources(), *_headers(), *sorted(DRIVER_DIR.glob("*.c"))):
        h.update(str(path.relative_to(REPO)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class HostBuild:
    variant: str
    driver: Path
    shared_lib: Path


def build_driver(variant: str, cc: str = "gcc") -> HostBuild:
    """Compile (or reuse from the cache) the sanitized driver and shared library."""
    if shutil.which(cc) is None:
        raise HarnessError(f"{cc} not found")
    out = cache_dir() / f"{variant}-{_digest(variant, cc)}"
    driver, lib = out / "th_kdriver", out / "libth_nn_host.so"
    if driver.exists() and lib.exists():
        return HostBuild(variant, driver, lib)
    out.mkdir(parents=True, exist_ok=True)
    # One builder per variant: parallel test workers (xdist) wait for it, then reuse its build.
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (driver.exists() and lib.exists()):
            _compile_driver(variant, cc, out, driver, lib)
    return HostBuild(variant, driver, lib)


def _compile_driver(variant: str, cc: str, out: Path, driver: Path, lib: Path) -> None:
    common = [cc, *CFLAGS, *VARIANT_DEFINES[variant], f"-I{KERNELS_DIR / 'include'}"]
    srcs = [str(s) for s in _sources()]
    tmp_driver, tmp_lib = out / f"th_kdriver.{os.getpid()}", out / f"lib.{os.getpid()}.so"
    steps = [
        [*common, f"-I{DRIVER_DIR}", *srcs, *map(str, sorted(DRIVER_DIR.glob("*.c"))),
         "-o", str(tmp_driver)],
        [*common, "-shared", "-fPIC", *srcs, "-o", str(tmp_lib)],
    ]
    # the two compiles (each one gcc over every kernel) run side by side: two cores
    with ThreadPoolExecutor(max_workers=len(steps)) as pool:
        procs = list(pool.map(lambda cmd: subprocess.run(cmd, capture_output=True, text=True),
                              steps))  # fmt: skip
    for cmd, proc in zip(steps, procs, strict=True):
        if proc.returncode != 0:
            raise HarnessError(f"build failed: {' '.join(cmd)}\n{proc.stderr}")
    tmp_driver.replace(driver)
    tmp_lib.replace(lib)


class Driver:
    """A running sanitized driver; use as a context manager."""

    def __init__(self, build: HostBuild) -> None:
        self.build = build
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:halt_on_error=1"
        env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
        self._stderr_path = cache_dir() / f"driver-{os.getpid()}-{id(self)}.stderr"
        self._stderr = open(self._stderr_path, "w+b")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen([str(build.driver)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr, env=env)
        flags = self.call(build_flags_record())
        self.build_flags = struct.unpack("<i", flags.data)[0]

    @property
    def interleaved(self) -> bool:
        return bool(self.build_flags & BUILD_FLAG_INTERLEAVED)

    def _died(self, what: str) -> HarnessError:
        self.proc.wait(timeout=10)
        self._stderr.seek(0)
        log = self._stderr.read().decode(errors="replace")
        return HarnessError(f"driver {what} (exit {self.proc.returncode}):\n{log[-6000:]}")

    def call(self, record: bytes) -> Result:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(record)
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise self._died("closed its input") from exc
        head = self.proc.stdout.read(8)
        if len(head) < 8:
            raise self._died("stopped")
        total = struct.unpack_from("<I", head, 4)[0]
        rest = self.proc.stdout.read(total - 8)
        return decode_results(head + rest)[0]

    def run(self, case: Case, case_id: int = 1) -> Result:
        return self.call(case.encode(case_id, self.interleaved))

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.seek(0)
        log = self._stderr.read().decode(errors="replace")
        self._stderr.close()
        self._stderr_path.unlink(missing_ok=True)
        if self.proc.returncode != 0:
            raise HarnessError(f"driver exited {self.proc.returncode}:\n{log[-6000:]}")

    def __enter__(self) -> Driver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
