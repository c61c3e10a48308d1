"""`tinyhost bench`: exact instructions, MACs, memory and flash of one model on one board.

    tinyhost bench MODEL --board B [--backend interpreter] [--runs N] [--json]

Converts, builds and runs the model (tinyhost.deploy.runner.run_model) with the deterministic
input of /work/shared/PEERS.md (input byte i = (uint8)(i*7+3)), checks the outputs against the
NumPy reference and reports: instructions per inference (exact on QEMU boards: unit
"instructions"), MACs (tinyhost.ir.stats), MACs per instruction, arena bytes, flash bytes split
into code (text + data of the ELF minus the model blob) and model data (the blob), per op.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tinyhost.ir import Graph


def deterministic_inputs(graph: Graph) -> list[np.ndarray]:
    """Each input tensor filled with bytes (uint8)(i*7+3), i = byte index in that tensor."""
    arrays = []
    for index in graph.inputs:
        t = graph.tensors[index]
        dtype = np.dtype(t.dtype)
        if dtype.kind not in "iu":
            raise ValueError(f"bench needs integer model inputs; input {t.name!r} is {dtype}")
        nbytes = int(np.prod(t.shape, dtype=np.int64)) * dtype.itemsize
        raw = ((np.arange(nbytes, dtype=np.int64) * 7 + 3) % 256).astype(np.uint8)
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
    flash_code_bytes: int
    flash_data_bytes: int
    bit_exact: bool
    runs: int
    repeatable: bool  # every run gave the same total and per-op counts
    per_op: list[OpBench] = field(default_factory=list)
    clock_hz: int = 0
    output_head: list[int] = field(default_factory=list)  # first bytes of output 0 (uint8)
    emulator: dict[str, str] | None = None  # e.g. which Renode ran it (version, path)

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
            "flash_data_bytes": self.flash_data_bytes,
            "bit_exact": self.bit_exact,
            "runs": self.runs,
            "repeatable": self.repeatable,
            "clock_hz": self.clock_hz,
            "per_op": [op.to_json(self.unit) for op in self.per_op],
            "output_head": list(self.output_head),
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
    renode: str | None = None,
) -> BenchResult:
    """Run ``graph`` ``runs`` times on ``board`` with the deterministic input and measure it."""
    from tinyhost import reference
    from tinyhost.deploy.boards import resolve_board
    from tinyhost.deploy.build import size_of
    from tinyhost.deploy.runner import run_model
    from tinyhost.ir.stats import graph_stats, op_macs

    if runs < 1:
        raise ValueError("runs must be at least 1")
    b = resolve_board(board)
    inputs = deterministic_inputs(graph)
    report = run_model(graph, b, [inputs] * runs, backend=backend, work_dir=work_dir,
                       arena_bytes=arena_bytes, timeout=timeout, renode=renode)  # fmt: skip
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
    assert report.firmware is not None
    size = size_of(report.firmware, b)
    per_op = [
        OpBench(graph.ops[i].name, graph.ops[i].kind.name, op_macs(graph, graph.ops[i]), n)
        for i, n in zip(report.op_indices, first.per_op)
    ]
    return BenchResult(
        model=report.model,
        board=b.name,
        backend=backend,
        unit=first.unit,
        total=first.total,
        macs=graph_stats(graph).macs,
        arena_bytes=report.arena_bytes,
        flash_code_bytes=size.flash - report.blob_bytes,
        flash_data_bytes=report.blob_bytes,
        bit_exact=bit_exact,
        runs=runs,
        repeatable=repeatable,
        per_op=per_op,
        clock_hz=b.clock_hz or 0,
        output_head=list(report.runs[0].outputs[0].tobytes()[:16]),
        emulator=report.emulator,
    )


def add_parser(subparsers) -> None:
    from tinyhost.cli_backend import _add_model_options

    p = subparsers.add_parser(
        "bench", help="exact instructions, MACs, arena and flash of a model on a board"
    )
    p.add_argument("model", help=".tflite file (float models are quantized with --calib)")
    p.add_argument("--runs", type=int, default=1, metavar="N",
                   help="inferences to run (all must give the same counts)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--work-dir", help="where the model directory and build go")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds for the whole run")
    _add_model_options(p)
    p.set_defaults(func=_cmd_bench)


def _cmd_bench(args: argparse.Namespace) -> int:
    from tinyhost.cli_backend import load_int8_graph

    graph = load_int8_graph(args.model, args)
    result = bench(graph, args.board, backend=args.backend, runs=args.runs,
                   work_dir=Path(args.work_dir) if args.work_dir else None,
                   arena_bytes=args.arena_bytes, timeout=args.timeout,
                   renode=args.renode)  # fmt: skip
    if args.json:
        json.dump(result.to_json(), sys.stdout)
        print()
    else:
        print_result(result)
    return 0 if result.bit_exact and result.repeatable else 1


def print_result(r: BenchResult) -> None:
    print(f"{r.model} on {r.board} ({r.backend}), {r.runs} run(s)")
    if r.emulator is not None:
        print(f"  emulator      {r.emulator['name']} {r.emulator['version']} "
              f"({r.emulator['path']})")
    ms = f" (~{r.total / r.clock_hz * 1e3:.2f} ms at {r.clock_hz / 1e6:g} MHz, 1 IPC)" if (
        r.unit == "instructions" and r.clock_hz) else ""  # fmt: skip
    print(f"  latency       {r.total:>12,} {r.unit}{ms}")
    mpi = r.macs_per_instruction
    print(f"  MACs          {r.macs:>12,}" + (f"  ({mpi:.3f} MAC/instruction)" if mpi else ""))
    print(f"  arena         {r.arena_bytes:>12,} B")
    print(f"  flash code    {r.flash_code_bytes:>12,} B")
    print(f"  flash model   {r.flash_data_bytes:>12,} B")
    print(f"  bit-exact     {'yes' if r.bit_exact else 'NO'} (NumPy reference)")
    print(f"  repeatable    {'yes' if r.repeatable else 'NO'}")
    for k, op in enumerate(r.per_op):
        share = 100.0 * op.count / r.total if r.total else 0.0
        label = op.kind if op.name == op.kind else f"{op.kind} {op.name}"
        print(f"  {k:>4} {label[:40]:<40} {op.count:>12,} {share:5.1f}%  {op.macs:>10,} MACs")
