"""`tinyhost bench MODEL --board B [--backend B] [--runs N] [--json]` (tinyhost.deploy.bench)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tinyhost.deploy.bench import BenchResult, bench


def add_parser(subparsers) -> None:
    from tinyhost.cli.backend import add_model_options

    p = subparsers.add_parser(
        "bench", help="exact instructions, MACs, arena and flash of a model on a board"
    )
    p.add_argument("model", help=".tflite file (float models are quantized with --calib)")
    p.add_argument("--runs", type=int, default=1, metavar="N",
                   help="inferences to run; latency is their median (exact instruction counts "
                        "must also repeat)")
    p.add_argument("--input", action="append", metavar="X.npy",
                   help="one sample per model input instead of the deterministic PEERS.md "
                        "input (X.npy, X.npz or X.npz:KEY)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--work-dir", help="where the model directory and build go")
    p.add_argument("--timeout", type=float, default=1800.0,
                   help="seconds the device may take in all: start-up, handshake and every "
                        "request (default %(default)g)")
    add_model_options(p)
    p.set_defaults(func=_cmd_bench)


def _cmd_bench(args: argparse.Namespace) -> int:
    from tinyhost.cli.backend import load_int8_graph, patch_request

    graph = load_int8_graph(args.model, args)
    inputs = None
    if args.input:
        from tinyhost.cli.inputs import load_array
        from tinyhost.deploy.runner import prepare_device_inputs

        inputs = prepare_device_inputs(graph, [load_array(p) for p in args.input])
    result = bench(graph, args.board, backend=args.backend, runs=args.runs,
                   work_dir=Path(args.work_dir) if args.work_dir else None,
                   arena_bytes=args.arena_bytes, timeout=args.timeout,
                   inputs=inputs, optimize=args.optimize, renode=args.renode,
                   patch=patch_request(args),
                   fuse_residual=args.fuse_residual,
                   fuse_dw_pw=args.fuse_dw_pw,
                   kernel_paths=args.kernel_paths)  # fmt: skip
    if args.json:
        json.dump(result.to_json(), sys.stdout)
        print()
    else:
        print_result(result)
    return 0 if result.ok else 1


def print_result(r: BenchResult) -> None:
    print(f"{r.model} on {r.board} ({r.backend}), {r.runs} run(s)")
    if r.emulator is not None:
        print(f"  emulator      {r.emulator['name']} {r.emulator['version']} "
              f"({r.emulator['path']})")
    ms = f" (~{r.total / r.clock_hz * 1e3:.2f} ms at {r.clock_hz / 1e6:g} MHz, 1 IPC)" if (
        r.unit == "instructions" and r.clock_hz) else ""  # fmt: skip
    print(f"  latency       {r.total:>12,} {r.unit}{ms}")
    if r.cycles_estimate is not None:
        est = r.cycles_estimate
        at = f" (~{est['time_s'] * 1e3:.2f} ms)" if est["time_s"] else ""
        print(f"  cycles        {est['cycles']:>12,} ESTIMATE for {est['core']}{at}: "
              f"{'; '.join(est['assumptions'])}")
    mpi = r.macs_per_instruction
    print(f"  MACs          {r.macs:>12,}" + (f"  ({mpi:.3f} MAC/instruction)" if mpi else ""))
    print(f"  arena         {r.arena_bytes:>12,} B")
    if r.ram_total_bytes is not None:
        print(f"  RAM total     {r.ram_total_bytes:>12,} B (arena + {r.ram_static_model_bytes:,} "
              f"static + {r.stack_peak_bytes:,} stack peak; protocol "
              f"{r.ram_protocol_bytes:,} B apart)")  # fmt: skip
    if r.stack_static_bytes is not None and r.budget is not None:
        print(f"  stack         {r.stack_static_bytes:>12,} B static bound ("
              f"{r.stack_peak_bytes or 0:,} measured, {r.budget.reserves.stack:,} reserved)")
    print(f"  flash code    {r.flash_code_bytes:>12,} B (backend + kernels + runtime; "
          f"whole firmware {r.flash_firmware_code_bytes:,} B)")
    print(f"  flash model   {r.flash_data_bytes:>12,} B")
    if r.budget is not None:
        print(f"  fit           {r.budget.verdict()}")
    print(f"  bit-exact     {'yes' if r.bit_exact else 'NO'} (NumPy reference)")
    if r.exact:
        print(f"  repeatable    {'yes' if r.repeatable else 'NO'}")
    elif r.runs > 1:
        print(f"  latency       median of {r.runs} runs ({r.unit} vary run to run)")
    for k, op in enumerate(r.per_op):
        share = 100.0 * op.count / r.total if r.total else 0.0
        # a patched stage's ops name their band or view themselves
        label = op.name if op.name.startswith(op.kind) or "view" in op.name else (
            f"{op.kind} {op.name}")
        print(f"  {k:>4} {label[:40]:<40} {op.count:>12,} {share:5.1f}%  {op.macs:>10,} MACs")
