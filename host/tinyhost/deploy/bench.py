"""Bench one model on one board: exact instructions, MACs, memory and flash, checked outputs.

`bench` converts, builds and runs the model (tinyhost.deploy.runner.run_model) with the
deterministic input of ../shared/PEERS.md (input byte i = (uint8)(i*7+3)), checks the outputs
against the NumPy reference and reports: instructions per inference (exact on QEMU boards: unit
"instructions"), MACs (tinyhost.ir.stats), MACs per instruction, arena bytes, flash bytes split
into code (text + data of the ELF minus the model) and model data, per op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tinyhost.deploy.cycles import CoreModel, core_of, cycles
from tinyhost.ir import Graph, OpKind
from tinyhost.plan.budget import Budget
from tinyhost.plan.patch import PatchRequest

if TYPE_CHECKING:
    from tinyhost.deploy.runner import ModelRun


def _pattern(count: int) -> np.ndarray:
    return ((np.arange(count, dtype=np.int64) * 7 + 3) % 256).astype(np.uint8)


def _consumer_quant(graph: Graph, tensor: int) -> tuple[float, int] | None:
    """Scale and zero point of the QUANTIZE op that takes a float model input."""
    for op in graph.ops:
        if op.kind is OpKind.QUANTIZE and op.inputs and op.inputs[0] == tensor:
            q = graph.tensors[op.outputs[0]].quant
            if q is not None and q.scale.size == 1:
                return float(q.scale[0]), int(q.zero_point[0])
    return None


def deterministic_inputs(graph: Graph) -> list[np.ndarray]:
    """Each integer input filled with bytes (uint8)(i*7+3), i = byte index in that tensor.

    A float input (QUANTIZE at the model's edge) gets the values that quantize to that same
    int8 pattern, so the int8 network sees the inputs of ../shared/PEERS.md either way."""
    arrays = []
    for index in graph.inputs:
        t = graph.tensors[index]
        dtype = np.dtype(t.dtype)
        count = int(np.prod(t.shape, dtype=np.int64))
        if dtype.kind == "f":
            q = _consumer_quant(graph, index)
            codes = _pattern(count).view(np.int8).astype(np.float64)
            scale, zero_point = q if q is not None else (1.0 / 128, 0)
            arrays.append(((codes - zero_point) * scale).astype(dtype).reshape(t.shape))
            continue
        raw = _pattern(count * dtype.itemsize)
        arrays.append(raw.view(dtype.newbyteorder("<")).astype(dtype).reshape(t.shape))
    return arrays


@dataclass(frozen=True)
class OpBench:
    name: str
    kind: str
    macs: int
    count: int  # in BenchResult.unit

    def to_json(self, unit: str) -> dict:
        key = "instructions" if unit == "instructions" else unit
        return {"op": self.name, "kind": self.kind, "macs": self.macs, key: self.count}


@dataclass(frozen=True)
class BenchResult:
    model: str
    board: str
    backend: str
    unit: str  # "instructions" on QEMU boards
    total: int  # one inference, in `unit`
    macs: int
    arena_bytes: int
    flash_firmware_code_bytes: int  # the whole firmware's flash but the model data
    flash_data_bytes: int
    bit_exact: bool
    runs: int
    repeatable: bool  # every run gave the same total and per-op counts
    per_op: list[OpBench] = field(default_factory=list)
    clock_hz: int = 0
    output_head: list[int] = field(default_factory=list)  # first bytes of output 0 (uint8)
    emulator: dict[str, str] | None = None  # e.g. which Renode ran it (version, path)
    outputs: list[list] = field(default_factory=list)  # each output, its dtype's values
    budget: Budget | None = None  # the fit on the board, as plan --board prints it
    # RAM counted honestly (Cortex-M builds, from the linker map and the painted stack):
    stack_peak_bytes: int | None = None  # deepest stack an invoke used
    ram_static_model_bytes: int | None = None  # the model code's static RAM besides the arena
    ram_protocol_bytes: int | None = None  # app + protocol buffers + LOAD_MODEL buffer, apart
    flash_model_code_bytes: int | None = None  # generated code/interpreter + kernels + runtime
    # Cortex-M4/M7 cycles ESTIMATED from QEMU's instruction classes (deploy/cycles.py)
    cycles_estimate: dict | None = None
    # The firmware's static worst-case stack (deploy/stack.py; None: no bound, or no build
    # with call-graph information), which the measured stack_peak_bytes must stay under
    stack_static_bytes: int | None = None

    @property
    def ram_total_bytes(self) -> int | None:
        """Arena + every other static RAM the model code needs + the measured stack peak."""
        if self.ram_static_model_bytes is None or self.stack_peak_bytes is None:
            return None
        return self.arena_bytes + self.ram_static_model_bytes + self.stack_peak_bytes

    @property
    def flash_code_bytes(self) -> int:
        """Flash of the code that runs the model: generated code or interpreter, kernels and
        the C runtime they call; no weights, no protocol, board or app (Cortex-M builds, from
        the linker map; elsewhere the whole firmware's code)."""
        if self.flash_model_code_bytes is not None:
            return self.flash_model_code_bytes
        return self.flash_firmware_code_bytes

    @property
    def exact(self) -> bool:
        """Counts that must repeat run to run (QEMU's executed instructions)."""
        return self.unit == "instructions"

    @property
    def ok(self) -> bool:
        """Bit-exact, and repeatable where the counter is exact (timing noise is not a fault)."""
        return self.bit_exact and (self.repeatable or not self.exact)

    @property
    def instructions(self) -> int | None:
        return self.total if self.unit == "instructions" else None

    @property
    def macs_per_instruction(self) -> float | None:
        n = self.instructions
        return self.macs / n if n else None

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "board": self.board,
            "backend": self.backend,
            "unit": self.unit,
            "instructions": self.instructions,
            "latency_total": self.total,
            "macs": self.macs,
            "macs_per_instruction": self.macs_per_instruction,
            "arena_bytes": self.arena_bytes,
            "flash_code_bytes": self.flash_code_bytes,
            "flash_firmware_code_bytes": self.flash_firmware_code_bytes,
            "flash_data_bytes": self.flash_data_bytes,
            "bit_exact": self.bit_exact,
            "runs": self.runs,
            "repeatable": self.repeatable,
            "clock_hz": self.clock_hz,
            "per_op": [op.to_json(self.unit) for op in self.per_op],
            "output_head": list(self.output_head),
            "outputs": self.outputs,
            "fit": None if self.budget is None else self.budget.to_json(),
            "ram_total_bytes": self.ram_total_bytes,
            "ram_static_model_bytes": self.ram_static_model_bytes,
            "stack_peak_bytes": self.stack_peak_bytes,
            "ram_protocol_bytes": self.ram_protocol_bytes,
            "flash_model_code_bytes": self.flash_model_code_bytes,
            "flash_model_bytes": self.flash_data_bytes,
            "cycles_estimate": self.cycles_estimate,
            "stack_static_bytes": self.stack_static_bytes,
            **({"emulator": self.emulator} if self.emulator is not None else {}),
        }


def bench(
    graph: Graph,
    board: str,
    *,
    backend: str = "interpreter",
    runs: int = 1,
    work_dir: Path | None = None,
    arena_bytes: int | None = None,
    timeout: float = 1800.0,
    inputs: list[np.ndarray] | None = None,
    optimize: str = "speed",
    patch: PatchRequest | None = None,
    renode: str | None = None,
    fuse_residual: str = "auto",
    fuse_dw_pw: str = "auto",
    kernel_paths: str = "used",
) -> BenchResult:
    """Run ``graph`` ``runs`` times on ``board`` (the deterministic input unless ``inputs``)
    and measure it. Latency is the median run; exact counters must also repeat exactly."""
    from tinyhost import reference
    from tinyhost.boards import resolve_board
    from tinyhost.deploy.build import size_of
    from tinyhost.deploy.footprint import footprint
    from tinyhost.deploy.runner import run_model
    from tinyhost.ir.stats import graph_stats, op_macs

    if runs < 1:
        raise ValueError("runs must be at least 1")
    b = resolve_board(board)
    if inputs is None:
        inputs = deterministic_inputs(graph)
    estimable = b.qemu_machine is not None and core_of(b.cpu) is not None
    # a model with state (variable tensors) starts every run from a reset, so every run
    # computes what one reference invoke does
    fresh = range(runs) if graph.variable_tensors() else ()
    report = run_model(graph, b, [inputs] * runs, backend=backend, work_dir=work_dir,
                       arena_bytes=arena_bytes, timeout=timeout, optimize=optimize, patch=patch,
                       renode=renode, classes=estimable, reset_before=fresh,
                       fuse_residual=fuse_residual, fuse_dw_pw=fuse_dw_pw,
                       kernel_paths=kernel_paths)  # fmt: skip
    expected = reference.run(graph, inputs).outputs
    bit_exact = all(
        len(r.outputs) == len(expected)
        and all(np.array_equal(o, e.reshape(o.shape)) and o.size == e.size
                for o, e in zip(r.outputs, expected))
        for r in report.runs
    )  # fmt: skip
    first = report.runs[0].latency
    repeatable = all(r.latency.total == first.total and r.latency.per_op == first.per_op
                     for r in report.runs)  # fmt: skip
    summary = report.latency_summary()
    assert report.firmware is not None
    size = size_of(report.firmware, b)
    map_path = report.firmware.with_suffix(".map")
    parts = footprint(map_path, report.data_symbols) if map_path.is_file() else None
    macs_of = report.op_macs or [op_macs(graph, graph.ops[i]) for i in report.op_indices]
    per_op = [
        OpBench(name, graph.ops[i].kind.name, m, n)
        for i, name, m, n in zip(report.op_indices, report.op_names, macs_of, summary["per_op"])
    ]
    return BenchResult(
        model=report.model,
        board=b.name,
        backend=backend,
        unit=first.unit,
        total=summary["total"],
        macs=graph_stats(graph).macs,
        arena_bytes=report.arena_bytes,
        flash_firmware_code_bytes=size.flash - report.model_flash_bytes,
        flash_data_bytes=report.model_flash_bytes,
        bit_exact=bit_exact,
        runs=runs,
        repeatable=repeatable,
        per_op=per_op,
        clock_hz=b.clock_hz or 0,
        output_head=list(report.runs[0].outputs[0].tobytes()[:16]),
        outputs=[o.reshape(-1).tolist() for o in report.runs[0].outputs],
        budget=report.budget,
        emulator=report.emulator,
        stack_peak_bytes=report.stack_peak,
        ram_static_model_bytes=None if parts is None else parts.model_ram_bytes,
        ram_protocol_bytes=None if parts is None else parts.protocol_ram_bytes,
        flash_model_code_bytes=None if parts is None else parts.model_code_bytes,
        cycles_estimate=_cycles_estimate(report.runs[0], b.cpu, b.clock_hz or 0),
        stack_static_bytes=report.stack_static,
    )


def _cycles_estimate(run: ModelRun, cpu: str, clock_hz: int) -> dict | None:
    """The run's cycles on `cpu` estimated from its instruction classes, with the model's
    assumptions: an estimate, always labelled so; the exact figure is the instruction count."""
    core = core_of(cpu)
    if run.classes is None or run.classes_per_op is None or core is None:
        return None
    model = CoreModel(core)
    total = cycles(run.classes, model)
    return {"label": "estimate", "core": core, "cycles": total,
            "per_op": [cycles(c, model) for c in run.classes_per_op],
            "time_s": total / clock_hz if clock_hz else None,
            "assumptions": model.assumptions()}  # fmt: skip
