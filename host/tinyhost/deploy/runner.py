"""Run a model on a board through the serial protocol: convert, build if needed, talk.

`run_model` is what `tinyhost run` does: convert the model for the board's kernel build,
build the interpreter firmware (reusing the build tree), start it (natively for the `host`
board, on QEMU otherwise), wait for READY, then SET_INPUT / INVOKE / GET_OUTPUT /
GET_PROFILE for each input set. Latency is reported in the board counter's unit
(ARCHITECTURE.md §4.7): `host-ns`, `instructions`, `systick` or `cycles`, never a bare number.

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
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tinyhost.boards import Board, resolve_board
from tinyhost.codegen.result import ConvertResult
from tinyhost.deploy.build import BuildResult, build
from tinyhost.deploy.cycles import ClassCounts
from tinyhost.deploy.icount import MarkLog, invoke_classes, invoke_latency, mark_plugin
from tinyhost.deploy.protocol import (
    Device,
    DeviceError,
    DeviceFault,
    DeviceInfo,
    DeviceTimeout,
    Link,
)
from tinyhost.deploy.qemu import open_session
from tinyhost.errors import DeployError, InputDataError
from tinyhost.ir import Graph
from tinyhost.paths import repo_root
from tinyhost.plan.budget import Budget
from tinyhost.plan.patch import PatchRequest

APP_DIR = Path("firmware") / "app"


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
    stack_peak: int | None = None  # bytes of stack the invoke used (None: not reported)
    # QEMU with the plugin's class mode (run_model classes=True): the invoke's instruction
    # class counters, whole and per op, for the cycle estimate (deploy/cycles.py)
    classes: ClassCounts | None = None
    classes_per_op: list[ClassCounts] | None = None


@dataclass(frozen=True)
class RunReport:
    model: str
    board: str
    backend: str
    arena_bytes: int
    model_flash_bytes: int  # the model's data in flash (the interpreter's blob)
    runs: list[ModelRun]
    op_names: list[str] = field(default_factory=list)  # execution order
    op_indices: list[int] = field(default_factory=list)  # graph op index, execution order
    firmware: Path | None = None
    budget: Budget | None = None  # the fit on the board, as plan --board prints it
    emulator: dict[str, str] | None = None  # which emulator ran it, e.g. Renode's version/path
    data_symbols: tuple[str, ...] = ()  # model data arrays in generated code (footprint)
    stack_static: int | None = None  # the image's static worst-case stack (deploy/stack.py)
    op_macs: list[int] | None = None  # per executed op, when not the source ops' (patched)

    @property
    def stack_peak(self) -> int | None:
        """The deepest stack any invoke used, bytes (None: not measured on this board)."""
        peaks = [r.stack_peak for r in self.runs if r.stack_peak]
        return max(peaks) if peaks else None

    def stacked_outputs(self) -> list[np.ndarray]:
        """Each output tensor of every run, concatenated on the sample axis (as the inputs
        were split: `reference -o` gives the same arrays)."""
        n_out = len(self.runs[0].outputs)
        return [np.concatenate([r.outputs[k] for r in self.runs]) for k in range(n_out)]

    def latency_summary(self) -> dict:
        """Median, min and max over all runs, with the median per op."""
        totals = [r.latency.total for r in self.runs]
        per_op = np.median(np.array([r.latency.per_op for r in self.runs], np.float64), axis=0)
        first = self.runs[0].latency
        return {"unit": first.unit, "hz": first.hz, "samples": len(self.runs),
                "total": int(np.median(totals)), "median": float(np.median(totals)),
                "min": int(min(totals)), "max": int(max(totals)),
                "per_op": [int(round(v)) for v in per_op.tolist()] if len(per_op.shape) else [],
                "summary": f"median over {len(self.runs)} run(s); runs[] has each"}  # fmt: skip

    def to_json(self) -> dict:
        """Top-level fields summarize every run (README.md, "run --json")."""
        outputs = self.stacked_outputs()
        return {
            "model": self.model,
            "board": self.board,
            "backend": self.backend,
            "samples": len(self.runs),
            "outputs": [o.reshape(-1).tolist() for o in outputs],
            "output_shapes": [list(o.shape) for o in outputs],
            "latency": self.latency_summary(),
            "arena_bytes": self.arena_bytes,
            "model_flash_bytes": self.model_flash_bytes,
            "blob_bytes": self.model_flash_bytes,  # kept: the key scripts read before 0.2
            "ops": self.op_names,
            "fit": None if self.budget is None else self.budget.to_json(),
            "stack_peak_bytes": self.stack_peak,
            "stack_static_bytes": self.stack_static,
            "stack_reserve_bytes": None if self.budget is None else self.budget.reserves.stack,
            **({"emulator": self.emulator} if self.emulator is not None else {}),
            "runs": [{"outputs": [o.reshape(-1).tolist() for o in r.outputs],
                      "latency": r.latency.to_json()} for r in self.runs],  # fmt: skip
        }


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
    """Build the protocol firmware for a converted model directory (made for this board)."""
    b = resolve_board(board)
    check_model_dir(Path(model_dir), b)
    if build_dir is None:
        key = hashlib.sha1(str(Path(model_dir).resolve()).encode()).hexdigest()[:10]
        build_dir = default_build_root() / f"fw-{b.name}-{key}"
    defines = {"TH_SANITIZE": sanitize} if b.is_host else {}
    return build(repo_root() / APP_DIR, b, build_dir, defines=defines, model_dir=model_dir)


def _check_static_stack(budget: Budget, fw: BuildResult) -> int | None:
    """The image's static worst-case stack (deploy/stack.py), which must fit the stack the fit
    check reserved for it (else say so before anything runs); None: no bound."""
    from tinyhost.deploy.stack import static_stack

    bound = static_stack(fw.build_dir, fw.elf)
    if bound.bytes is not None and bound.bytes > budget.reserves.stack:
        raise DeployError(f"{fw.elf}: the firmware may need {bound.bytes:,} bytes of stack "
                          f"(static worst case through {' > '.join(bound.path[:6])}...), more "
                          f"than the {budget.reserves.stack:,} the fit check reserves")  # fmt: skip
    return bound.bytes


def check_model_dir(model_dir: Path, board: Board) -> None:
    """A directory tinyhost convert made for `board`; else one line saying what to do."""
    import json

    info_path = model_dir / "model.json"
    if not info_path.is_file():
        raise DeployError(f"{model_dir}: not a converted model directory (no model.json): "
                          f"run tinyhost convert MODEL --board {board.name} -o {model_dir}")
    try:
        converted_for = json.loads(info_path.read_text()).get("board")
    except (OSError, ValueError) as e:
        raise DeployError(f"{info_path}: unreadable: {e}") from e
    if converted_for is not None and converted_for != board.name:
        raise DeployError(
            f"{model_dir} was converted for {converted_for}, not {board.name} (kernel build, "
            f"arena and filter layout differ): convert it again with --board {board.name}"
        )


@contextlib.contextmanager
def _connected(link: Link, timeout: float, ready_timeout: float) -> Iterator[Device]:
    device = Device(link, timeout=timeout)
    try:
        device.connect(ready_timeout=ready_timeout)
        yield device
    finally:
        device.close()


def _bounded(wait: float, timeout: float) -> float:
    """No single wait outlives the run's --timeout."""
    return min(wait, timeout)


@contextlib.contextmanager
def open_device(
    elf: Path | None, board: Board | str, *, timeout: float = 600.0, ready_timeout: float = 20.0,
    request_timeout: float | None = None, port: str | None = None, baud: int | None = None,
    icount_out: Path | None = None, renode: str | None = None, classes: bool = False,
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
        with _connected(Link(ser, f"{b.name} ({port})"), _bounded(request_timeout or 10.0, timeout),
                        ready_timeout) as device:  # fmt: skip
            yield device
        return
    if elf is None:
        raise DeployError(f"{b.name}: no firmware to start and no --port given")
    if b.is_host:
        with _connected(Link.spawn([str(elf)]), _bounded(request_timeout or 2.0, timeout),
                        ready_timeout) as dev:
            yield dev
        return
    if b.renode_platform is not None:
        from tinyhost.deploy.renode import open_renode_session

        with open_renode_session(elf, b, timeout=timeout, renode=renode) as session:
            link = Link(session.port, f"{b.name} (Renode)")  # type: ignore[arg-type]
            with _connected(link, _bounded(request_timeout or 30.0, timeout),
                            _bounded(ready_timeout * 3, timeout)) as device:
                yield device
        return
    if b.qemu_machine is None:
        raise DeployError(
            f"{b.name} is a hardware board: flash it (tinyhost flash) and pass --port with its "
            "serial port (e.g. /dev/ttyACM0, the ST-LINK virtual COM port)"
        )
    plugin = mark_plugin(elf, icount_out, classes=classes) if icount_out is not None else None
    with open_session(elf, b, timeout=timeout, plugin=plugin) as session:
        link = Link(session.port, f"{b.name} (QEMU)")  # type: ignore[arg-type]
        # QEMU under icount is slow on big chunks: generous per-request timeouts.
        with _connected(link, _bounded(request_timeout or 10.0, timeout), ready_timeout) as device:
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
    device: Device, inputs: Sequence[np.ndarray], marks: MarkLog | None = None, clock_hz: int = 0,
    *, profile: bool = True,
) -> ModelRun:  # fmt: skip
    """SET_INPUT, INVOKE, GET_OUTPUT, GET_PROFILE; latency from `marks` when they are logged.

    `marks` is the plugin's mark log of this device (open_device icount_out); the invoke's
    marks give exact instruction counts, reported with `clock_hz` (the board's clock).
    `profile=False` skips GET_PROFILE (one link round trip) when no per-op counts are wanted.
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
    classes = None
    if logged:
        counts = invoke_latency(logged, info.n_ops)
        latency = Latency("instructions", counts.total, counts.per_op, clock_hz)
        if marks is not None and marks.counters:
            classes = invoke_classes(marks.counters, info.n_ops)
    else:
        per_op = device.get_profile() if profile else []
        latency = Latency(info.counter_unit, total, per_op, info.counter_hz)
    return ModelRun(outputs, latency, device.last_stack_peak or None,
                    *(classes if classes is not None else (None, None)))


def prepare_device_inputs(graph: Graph, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The reference's input checks and conversions (float -> int8 quantization, batch dim)."""
    from tinyhost.reference.executor import prepare_inputs

    return prepare_inputs(graph, arrays)


def _run_all(device: Device, conv: ConvertResult, graph: Graph,
             prepared: list[list[np.ndarray]], b: Board, backend: str, port: str | None,
             icount_out: Path | None, emulator: dict | None = None,
             reset_before: frozenset[int] = frozenset()) -> list[ModelRun]:
    """Check the target, install the model if the device runs another one, then invoke once
    per input set (the model's state reset first before those in `reset_before`)."""
    from tinyhost.deploy.selfcheck import check_selfcheck

    info = device.info()
    check_selfcheck(info.selfcheck, b.name, emulator["name"] if emulator else None)
    if port is not None and (not info.model_ready or info.model_hash != conv.model_hash):
        if conv.load_image is None:
            raise DeployError(
                f"{b.name}: the board runs another model and the {backend} backend cannot "
                "load one over the link: flash this model's firmware (tinyhost flash)"
            )
        device.load_model(conv.load_image)
        info = device.info()
    if not info.model_ready:
        raise DeployError(f"{b.name}: the firmware did not accept the model")
    check_device_model(info, graph)
    marks = MarkLog(icount_out) if icount_out is not None else None
    from tqdm import tqdm

    # a bar for long runs (many samples), shown on a terminal only
    samples = tqdm(prepared, desc=f"running on {b.name}", unit="sample", leave=False,
                   disable=None if len(prepared) > 1 else True)  # fmt: skip
    runs = []
    for k, inputs in enumerate(samples):
        if k in reset_before:
            device.reset_state()
        runs.append(invoke_once(device, inputs, marks, b.clock_hz or 0))
    return runs


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
    optimize: str = "speed",
    patch: PatchRequest | None = None,
    renode: str | None = None,
    classes: bool = False,
    reset_before: Collection[int] = (),
    fuse_residual: str = "auto",
    fuse_dw_pw: str = "auto",
    kernel_paths: str = "used",
) -> RunReport:
    """Convert, build (cached) and run `graph` on `board` once per input set.

    `classes`: on QEMU, also count instruction classes (slower) for a cycle estimate.
    The input sets run in order on one device, so a model with state (variable tensors, e.g.
    SVDF's) carries it from one to the next, as `reference.run` with its `State` does;
    `reset_before` lists the input sets before which the state is reset (RESET_STATE).

    With `port`, the firmware already on the board (tinyhost flash) is used: when its model
    is not this one (CRC of the blob), the blob goes over LOAD_MODEL, no rebuild.
    """
    from tinyhost.codegen import get_backend

    convert = get_backend(backend).convert
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
    work = (Path(work_dir) if work_dir is not None
            else default_build_root() / f"{b.name}-{backend}-{name}")
    fuse = ({"fuse_residual": fuse_residual, "fuse_dw_pw": fuse_dw_pw,
             "kernel_paths": kernel_paths}
            if backend == "compiled" else {})  # fmt: skip
    conv = convert(graph, b, work / "model", all_ops=all_ops, arena_bytes=arena_bytes,
                   optimize=optimize, patch=patch, **fuse)
    fw = None if port is not None else build_firmware(work / "model", b, work / "build")
    stack_static = None
    if fw is not None and not b.is_host:
        stack_static = _check_static_stack(conv.budget, fw)
    prepared = [prepare_device_inputs(graph, s) for s in input_sets]
    exact = port is None and b.qemu_machine is not None
    with contextlib.ExitStack() as stack:
        icount_out = None
        if exact:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="th-marks-"))
            icount_out = Path(tmp) / "marks.txt"
        started = time.monotonic()
        try:
            device = stack.enter_context(open_device(
                fw.elf if fw else None, b, timeout=timeout, ready_timeout=min(20.0, timeout),
                port=port, icount_out=icount_out, renode=renode, classes=classes))  # fmt: skip
            runs = _run_all(device, conv, graph, prepared, b, backend, port, icount_out,
                            emulator, frozenset(reset_before))
            if time.monotonic() - started > timeout:  # each wait was bounded, the sum not
                raise DeviceTimeout(f"{len(runs)} run(s) took longer")
        except (DeviceError, OSError) as e:  # a reset link after the watchdog, too
            if isinstance(e, DeviceFault):  # name the op as the user's model numbers it
                where = (f"op {conv.op_order[e.op]} ({conv.op_names[e.op]})"
                         if 0 <= e.op < len(conv.op_order) else "no op (outside an invoke)")
                raise DeployError(f"{b.name}: {e.describe(where)}") from None
            if isinstance(e, DeviceTimeout) or time.monotonic() - started >= timeout:
                raise DeployError(
                    f"{b.name}: timed out after {timeout:g} s (--timeout): {e}"
                ) from None
            raise
    if emulator is not None:
        runs = [renode_latency(r) for r in runs]
    return RunReport(
        model=name,
        board=b.name,
        backend=backend,
        arena_bytes=conv.arena_bytes,
        model_flash_bytes=conv.model_flash_bytes,
        runs=runs,
        op_names=list(conv.op_names),
        op_macs=None if conv.op_macs is None else list(conv.op_macs),
        op_indices=list(conv.op_order),
        firmware=fw.elf if fw else None,
        budget=conv.budget,
        data_symbols=conv.data_symbols,
        emulator=emulator,
        stack_static=stack_static,
    )
