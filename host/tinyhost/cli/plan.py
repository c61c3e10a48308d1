"""`tinyhost plan MODEL [--board B] [--json] [--plot FILE.svg|png]`: the arena, exactly."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from tinyhost.ir import Graph


def add_parser(subparsers) -> argparse.ArgumentParser:
    from tinyhost.cli.quantize import add_arguments
    from tinyhost.codegen.backends import backend_names

    p = subparsers.add_parser(
        "plan", help="plan the activation arena; say whether the model fits a board"
    )
    p.add_argument("model", help=".tflite file (a float model is planned as the int8 model "
                                 "convert would deploy: quantized with --calib)")
    p.add_argument("--board", help="board name (boards/<name>/board.json): check that the "
                                   "device runs every op and that RAM and flash suffice")
    p.add_argument("--backend", choices=backend_names(), default="interpreter",
                   help="backend whose footprint --board checks (default interpreter)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE", help="draw the plan to FILE.svg or FILE.png")
    p.add_argument(
        "--no-inplace",
        action="store_true",
        help="plan without in-place kernels (aliases of RESHAPE/SQUEEZE stay)",
    )
    p.add_argument("--alignment", type=int, help="buffer alignment in bytes (default: board's)")
    add_arguments(p, calib_required=False)
    p.set_defaults(func=run)
    return p


def _int8_graph(args: argparse.Namespace) -> tuple[Graph, str | None]:
    """The graph to plan and, for a float model, what was assumed to quantize it."""
    from tinyhost.cli.quantize import RANDOM, options_from_args, quantize_for_convert
    from tinyhost.quantize.quantizer import is_float_model
    from tinyhost.tflite import read_model

    graph = read_model(args.model)
    if not is_float_model(graph):
        return graph, None
    calib = args.calib or RANDOM
    note = ("planned the int8 model quantized from random calibration data (no --calib: "
            "sizes are exact, accuracy unknown)" if args.calib is None
            else f"planned the int8 model quantized with --calib {args.calib}")  # fmt: skip
    quantized = quantize_for_convert(graph, calib, options_from_args(args),
                                     warn=lambda _m: None, progress=False)  # fmt: skip
    return quantized, note


def run(args: argparse.Namespace) -> int:
    from tinyhost.boards import load_board
    from tinyhost.cli.inputs import output_path
    from tinyhost.codegen import get_backend
    from tinyhost.codegen.support import require_device_support
    from tinyhost.plan import PlanOptions, plan_memory
    from tinyhost.plan.budget import require_fits
    from tinyhost.plan.footprint import flash_usage

    if args.plot:
        output_path(args.plot, "plot")
    board = load_board(args.board) if args.board else None
    graph, note = _int8_graph(args)
    if note and not args.json:
        print(f"note: {note}")
    options = PlanOptions()
    if board is not None:
        require_device_support(graph, args.backend)  # every op, listed, before any planning
        options = replace(options, alignment=board.arena_alignment, dsp=board.dsp,
                          mve=board.dsp and board.mve)
    if args.alignment:
        options = replace(options, alignment=args.alignment)
    if args.no_inplace:
        options = options.without_inplace()
    try:
        plan = plan_memory(graph, options=options)
    except ValueError as e:  # e.g. an alignment that is not a power of two
        from tinyhost.errors import TinyhostError

        raise TinyhostError(str(e)) from None
    flash = flash_usage(graph)
    fit = get_backend(args.backend).fit(graph, board) if board is not None else None

    if args.plot:
        from tinyhost.plan.plot import plot_plan

        plot_plan(plan, args.plot)
    if args.json:
        out = plan.to_json()
        out["model"] = str(args.model)
        out["quantized_for_planning"] = note
        out["flash"] = {
            "weights_bytes": flash.weights_bytes,
            "biases_bytes": flash.biases_bytes,
            "requant_bytes": flash.requant_bytes,
            "total_bytes": flash.total_bytes,
        }
        if fit is not None:
            out["board"] = {"name": fit.board, "backend": args.backend, **fit.to_json()}
        print(json.dumps(out, indent=2))
    else:
        print(format_plan(plan, flash, fit, args.backend))
    if fit is not None:
        require_fits(fit, args.model)  # exit 2 with the bytes missing
    return 0


def format_plan(plan, flash, fit, backend: str = "interpreter") -> str:
    g = plan.graph
    peak = plan.peak_op
    ordered = plan.op_order == tuple(range(len(g.ops)))
    lines = [
        f"model: {g.source}  ({len(g.ops)} ops, {'file order' if ordered else 'reordered'})",
        f"arena: {plan.arena_bytes:,} bytes   lower bound: {plan.lower_bound_bytes:,} bytes "
        f"(gap {plan.gap_bytes:,})   alignment {plan.alignment}",
        "peak at: " + ("-" if peak is None else f"op {peak} {g.ops[peak].name}"),
        f"strategy: {plan.strategy}",
        f"flash: weights {flash.weights_bytes:,} + biases {flash.biases_bytes:,} + "
        f"requantization {flash.requant_bytes:,} = {flash.total_bytes:,} bytes",
    ]
    if fit is not None:
        lines.append(f"{fit.verdict()} ({backend})")
    if not ordered:
        lines.append("op order: " + " ".join(map(str, plan.op_order)))
    inplace = [u for u in plan.overlaps if u.mode.value != "alias"]
    if inplace:
        lines.append("in place: " + ", ".join(f"op {u.op} {u.mode.value}" for u in inplace))
    lines.append(f"{'offset':>8} {'size':>8} {'ops':>9}  buffer")
    for b in sorted(plan.buffers, key=lambda b: (b.offset, b.first_op)):
        lines.append(f"{b.offset:>8} {b.size:>8} {b.first_op:>4}-{b.last_op:<4}  {b.name}")
    return "\n".join(lines)
