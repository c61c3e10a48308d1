"""`tinyhost plan MODEL [--board B] [--json] [--plot FILE.svg|png]`: the arena, exactly."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "plan", help="plan the activation arena; say whether the model fits a board"
    )
    p.add_argument("model", help=".tflite file")
    p.add_argument("--board", help="board name (boards/<name>/board.json): check RAM and flash")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE", help="draw the plan to FILE.svg or FILE.png")
    p.add_argument(
        "--no-inplace",
        action="store_true",
        help="plan without in-place kernels (aliases of RESHAPE/SQUEEZE stay)",
    )
    p.add_argument("--alignment", type=int, help="buffer alignment in bytes (default: board's)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from tinyhost.plan import PlanOptions, plan_memory
    from tinyhost.plan.budget import budget, load_board_limits, require_fits
    from tinyhost.plan.footprint import flash_usage
    from tinyhost.tflite import read_model

    graph = read_model(args.model)
    options = PlanOptions()
    board = load_board_limits(args.board) if args.board else None
    if board is not None:
        options = replace(options, alignment=board.alignment, dsp=board.dsp)
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
    fit = budget(plan, flash, board) if board is not None else None

    if args.plot:
        from tinyhost.plan.plot import plot_plan

        plot_plan(plan, args.plot)
    if args.json:
        out = plan.to_json()
        out["flash"] = {
            "weights_bytes": flash.weights_bytes,
            "biases_bytes": flash.biases_bytes,
            "requant_bytes": flash.requant_bytes,
            "total_bytes": flash.total_bytes,
        }
        if fit is not None:
            out["board"] = {
                "name": fit.board.name,
                "ram_bytes": fit.board.ram_bytes,
                "flash_bytes": fit.board.flash_bytes,
                "ram_needed": fit.ram_needed,
                "flash_needed": fit.flash_needed,
                "ram_headroom": fit.ram_headroom,
                "flash_headroom": fit.flash_headroom,
                "fits": fit.fits,
            }
        print(json.dumps(out, indent=2))
    else:
        print(format_plan(plan, flash, fit))
    if board is not None:
        require_fits(plan, flash, board)  # refuses a model that does not fit, with the numbers
    return 0


def format_plan(plan, flash, fit) -> str:
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
        lines.append(("fits " if fit.fits else "DOES NOT FIT ") + fit.describe())
    if not ordered:
        lines.append("op order: " + " ".join(map(str, plan.op_order)))
    inplace = [u for u in plan.overlaps if u.mode.value != "alias"]
    if inplace:
        lines.append("in place: " + ", ".join(f"op {u.op} {u.mode.value}" for u in inplace))
    lines.append(f"{'offset':>8} {'size':>8} {'ops':>9}  buffer")
    for b in sorted(plan.buffers, key=lambda b: (b.offset, b.first_op)):
        lines.append(f"{b.offset:>8} {b.size:>8} {b.first_op:>4}-{b.last_op:<4}  {b.name}")
    return "\n".join(lines)
