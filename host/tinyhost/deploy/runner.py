"""Run a model on a board through the serial protocol: convert, build if needed, talk.

`run_model` is what `tinyhost run` does: convert the model for the board's kernel build,
build the interpreter firmware (reusing the build tree), start it (natively for the `host`
board, on QEMU otherwise), wait for READY, then SET_INPUT / INVOKE / GET_OUTPUT /
GET_PROFILE for each input set. Latency is reported in the board counter's unit
(DESIGN §9): `host-ns`, `instructions`, `systick` or `cycles`, never a bare number.

On QEMU boards QEMU runs with the icount plugin in mark mode and latency is the EXACT count of
executed instructions (unit `instructions`, `hz` = the board's real clock, so milliseconds are
an estimate): `total` spans the whole profiled invoke (dispatch included), `per_op` each op's
kernel call (boards/README.md "Exact instruction latency"). Without the plugin's marks (old
firmware) the device's own counter figures are reported.
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tinyhost.deploy.boards import Board, repo_root, resolve_board
from tinyhost.deploy.build import BuildResult, build
from tinyhost.deploy.errors import DeployError
from tinyhost.deploy.icount import MarkLog, invoke_latency, mark_plugin
from tinyhost.deploy.protocol import Device, DeviceInfo, Link
from tinyhost.deploy.qemu import open_session
from tinyhost.errors import InputDataError
from tinyhost.ir import Graph

APP_DIR = Path("firmware") / "app"
BACKENDS = ("interpreter",)


@dataclass(frozen=True)
class Latency:
    unit: str  # "host-ns" | "instructions" | "systick" | "cycles" | "none"
    total: int  # the whole invoke (profiling on: includes the per-op counter reads/marks)
    per_op: list[int]  # GET_PROFILE, execution order
    hz: int = 0  # counter ticks per second, 0 if unknown

    def to_json(self) -> dict:
        return {"unit": self.unit, "total": self.total, "per_op": list(self.per_op),
                "hz": self.hz}  # fmt: skip


@dataclass(frozen=True)
class ModelRun:
    """One inference on the device."""

    outputs: list[np.ndarray]
    latency: Latency


@dataclass(frozen=True)
class RunReport:
    model: str
    board: str
    backend: str
    arena_bytes: int
    blob_bytes: int
    runs: list[ModelRun]
    op_names: list[str] = field(default_factory=list)  # execution order
    op_indices: list[int] = field(default_factory=list)  # graph op index, execution order
    firmware: Path | None = None
    emulator: dict[str, str] | None = None  # which emulator ran it, e.g. Renode's version/path

    def to_json(self) -> dict:
        first = self.runs[0]
        out = {
            "model": self.model,
            "board": self.board,
            "backend": self.backend,
            "outputs": [o.reshape(-1).tolist() for o in first.outputs],
            "output_shapes": [list(o.shape) for o in first.outputs],
            "latency": first.latency.to_json(),
            "arena_bytes": self.arena_bytes,
            "blob_bytes": self.blob_bytes,
            "ops": self.op_names,
        }
        if self.emulator is not None:
            out["emulator"] = self.emulator
        if len(self.runs) > 1:
            out["runs"] = [
                {"outputs": [o.reshape(-1).tolist() for o in r.outputs],
                 "latency": r.latency.to_json()}
                for r in self.runs
            ]  # fmt: skip
        return out


RENODE_GRANULE = 24  # Renode's counters read in steps of 24 instructions (tests/test_renode.py)


def renode_latency(run: ModelRun) -> ModelRun:
    """Renode's SysTick/DWT counts executed instructions, not a pipeline's cycles.

    The generated .resc sets ``cpu PerformanceInMips`` to the clock in MHz and the .repl the
    SysTick rate to the clock, so one tick is one executed instruction; each reading is that
    count rounded to a multiple of RENODE_GRANULE (tests/test_renode.py checks it against QEMU's
    exact count). Reported as ``instructions``; per-op counts are exact to one granule.
    """
    lat = run.latency
    if lat.unit not in ("systick", "cycles"):
        return run
    return ModelRun(run.outputs, Latency("instructions", lat.total, lat.per_op, lat.hz))


def default_build_root() -> Path:
    return repo_root() / "build" / "tinyhost-run"


def build_firmware(
    model_dir: Path, board: Board | str, build_dir: Path | None = None, sanitize: bool = False
) -> BuildResult:
    """Build the interpreter firmware for a converted model directory."""
    b = resolve_board(board)
    if build_dir is None:
        key = hashlib.sha1(str(Path(model_dir).resolve()).encode()).hexdigest()[:10]
        build_dir = default_build_root() / f"fw-{b.name}-{key}"
    defines = {"TH_SANITIZE": sanitize} if b.is_host else {}
    return build(repo_root() / APP_DIR, b, build_dir, defines=defines, model_dir=model_dir)


@contextlib.contextmanager
def _connected(link: Link, timeout: float, ready_timeout: float) -> Iterator[Device]:
    device = Device(link, timeout=timeout)
    try:
        device.connect(ready_timeout=ready_timeout)
        yield device
    finally:
        device.close()


@contextlib.contextmanager
def open_device(
    elf: Path | None, board: Board | str, *, timeout: float = 600.0, ready_timeout: float = 20.0,
    request_timeout: float | None = None, port: str | None = None, baud: int | None = None,
    icount_out: Path | None = None, renode: str | None = None,
) -> Iterator[Device]:  # fmt: skip
    """Start the firmware and yield a connected Device (READY received or HELLO answered).

    With `icount_out` on a QEMU board, QEMU runs the icount plugin in mark mode, appending the
    running instruction total at every th_icount_mark to that file (read it with MarkLog).

    Where it runs: `port` (a pyserial URL or device, e.g. a board's ST-LINK virtual COM port,
    with the firmware already flashed), else the host board natively, QEMU or Renode as the
    board's data file says. Hardware boards without `port` are refused with what to pass.
    """
    b = resolve_board(board)
    if port is not None:
        import serial

        try:
            ser = serial.serial_for_url(port, baudrate=baud or b.uart.baud or 115200, timeout=1.0)
        except (serial.SerialException, ValueError) as e:
            raise DeployError(f"{b.name}: cannot open serial port {port}: {e}") from e
        with _connected(Link(ser, f"{b.name} ({port})"), request_timeout or 10.0,
                        ready_timeout) as device:  # fmt: skip
            yield device
        return
    if elf is None:
        raise DeployError(f"{b.name}: no firmware to start and no --port given")
    if b.is_host:
        with _connected(Link.spawn([str(elf)]), request_timeout or 2.0, ready_timeout) as dev:
            yield dev
        return
    if b.renode_platform is not None:
        from tinyhost.deploy.renode import open_renode_session

        with open_renode_session(elf, b, timeout=timeout, renode=renode) as session:
            link = Link(session.port, f"{b.name} (Renode)")  # type: ignore[arg-type]
            with _connected(link, request_timeout or 30.0, ready_timeout * 3) as device:
                yield device
        return
    if b.qemu_machine is None:
        raise DeployError(
            f"{b.name} is a hardware board: flash it (tinyhost flash) and pass --port with its "
            "serial port (e.g. /dev/ttyACM0, the ST-LINK virtual COM port)"
        )
    plugin = mark_plugin(elf, icount_out) if icount_out is not None else None
    with open_session(elf, b, timeout=timeout, plugin=plugin) as session:
        link = Link(session.port, f"{b.name} (QEMU)")  # type: ignore[arg-type]
        # QEMU under icount is slow on big chunks: generous per-request timeouts.
        with _connected(link, request_timeout or 10.0, ready_timeout) as device:
            yield device


def check_device_model(info: DeviceInfo, graph: Graph) -> None:
    """The device's model has the graph's inputs and outputs (count, shape, dtype)."""
    for kind, dev, idx in (("input", info.inputs, graph.inputs),
                           ("output", info.outputs, graph.outputs)):  # fmt: skip
        if len(dev) != len(idx):
            raise DeployError(f"device model has {len(dev)} {kind}(s), model {len(idx)}")
        for k, (d, i) in enumerate(zip(dev, idx)):
            t = graph.tensors[i]
            if d.shape != tuple(t.shape) or d.dtype != t.dtype:
                raise DeployError(
                    f"device {kind} {k} is {d.dtype}{list(d.shape)}, model {t.dtype}{list(t.shape)}"
                )


def invoke_once(
    device: Device, inputs: Sequence[np.ndarray], marks: MarkLog | None = None, clock_hz: int = 0
) -> ModelRun:
    """SET_INPUT, INVOKE, GET_OUTPUT, GET_PROFILE; latency from `marks` when they are logged.

    `marks` is the plugin's mark log of this device (open_device icount_out); the invoke's
    marks give exact instruction counts, reported with `clock_hz` (the board's clock).
    """
    info = device.info() if device._info is None else device._info  # noqa: SLF001
    if len(inputs) != len(info.inputs):
        raise InputDataError(f"the device model has {len(info.inputs)} input(s), "
                             f"{len(inputs)} given")  # fmt: skip
    for k, x in enumerate(inputs):
        device.set_input(k, np.asarray(x))
    if marks is not None:
        marks.take()  # anything logged before this invoke is not ours
    total = device.invoke()
    logged = marks.take() if marks is not None else []
    outputs = [device.get_output(k) for k in range(len(info.outputs))]
    if logged:
        counts = invoke_latency(logged, info.n_ops)
        return ModelRun(outputs, Latency("instructions", counts.total, counts.per_op, clock_hz))
    per_op = device.get_profile()
    return ModelRun(outputs, Latency(info.counter_unit, total, per_op, info.counter_hz))


def prepare_device_inputs(graph: Graph, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The reference's input checks and conversions (float -> int8 quantization, batch dim)."""
    from tinyhost.reference.executor import prepare_inputs

    return prepare_inputs(graph, arrays)


def run_model(
    graph: Graph,
    board: Board | str,
    input_sets: Sequence[Sequence[np.ndarray]],
    *,
    backend: str = "interpreter",
    work_dir: Path | None = None,
    all_ops: bool = False,
    arena_bytes: int | None = None,
    timeout: float = 600.0,
    port: str | None = None,
    renode: str | None = None,
) -> RunReport:
    """Convert, build (cached) and run `graph` on `board` once per input set.

    With `port`, the firmware already on the board (tinyhost flash) is used: when its model
    is not this one (CRC of the blob), the blob goes over LOAD_MODEL, no rebuild.
    """
    if backend not in BACKENDS:
        raise DeployError(f"backend {backend!r} is not available; choose from {BACKENDS}")
    from tinyhost.codegen.interpreter import convert

    b = resolve_board(board)
    if port is None and not b.is_host and b.qemu_machine is None and b.renode_platform is None:
        raise DeployError(
            f"{b.name} is a hardware board: flash it (tinyhost flash) and pass --port with its "
            "serial port (e.g. /dev/ttyACM0, the ST-LINK virtual COM port)"
        )
    emulator = None
    if port is None and b.renode_platform is not None:
        # Found (or refused) before anything is built.
        from tinyhost.deploy.renode import find_renode, renode_version

        tool = find_renode(renode)
        renode = tool.path
        emulator = {"name": "renode", "version": renode_version(tool.path), "path": tool.path,
                    "found_by": tool.source}  # fmt: skip
    name = Path(graph.source).stem or "model"
    work = Path(work_dir) if work_dir is not None else default_build_root() / f"{b.name}-{name}"
    conv = convert(graph, b, work / "model", all_ops=all_ops, arena_bytes=arena_bytes)
    fw = None if port is not None else build_firmware(work / "model", b, work / "build")
    prepared = [prepare_device_inputs(graph, s) for s in input_sets]
    runs: list[ModelRun] = []
    exact = port is None and b.qemu_machine is not None
    with contextlib.ExitStack() as stack:
        icount_out = None
        if exact:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="th-marks-"))
            icount_out = Path(tmp) / "marks.txt"
        device = stack.enter_context(open_device(fw.elf if fw else None, b, timeout=timeout,
                                                 port=port, icount_out=icount_out,
                                                 renode=renode))  # fmt: skip
        info = device.info()
        from tinyhost.deploy.selfcheck import check_selfcheck

        check_selfcheck(info.selfcheck, b.name, emulator["name"] if emulator else None)
        if port is not None and (not info.model_ready or info.model_hash != conv.blob.crc):
            device.load_model(conv.blob.data)
            info = device.info()
        if not info.model_ready:
            raise DeployError(f"{b.name}: the firmware did not accept the model blob")
        check_device_model(info, graph)
        marks = MarkLog(icount_out) if icount_out is not None else None
        for inputs in prepared:
            runs.append(invoke_once(device, inputs, marks, b.clock_hz or 0))
    if emulator is not None:
        runs = [renode_latency(r) for r in runs]
    return RunReport(
        model=name,
        board=b.name,
        backend=backend,
        arena_bytes=conv.arena_bytes,
        blob_bytes=len(conv.blob.data),
        runs=runs,
        op_names=[graph.ops[i].name for i in conv.blob.op_order],
        op_indices=list(conv.blob.op_order),
        firmware=fw.elf if fw else None,
        emulator=emulator,
    )
