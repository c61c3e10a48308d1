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
    p.add_argument("--patch", metavar="auto|off|N",
                   help="with --backend compiled: plan the first layers in N row bands (auto: "
                        "the candidate with the smallest arena); lists every candidate "
                        "(default: convert's under --optimize speed)")
    p.add_argument("--max-overhead", type=float, default=0.10, metavar="F",
                   help="--patch auto: at most this share of extra MACs (default %(default)g)")
    from tinyhost.cli.backend import add_fuse_option

    add_fuse_option(p)
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
    from tinyhost.codegen.fold import depthwise_as_conv
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
    graph = depthwise_as_conv(graph)  # as both backends run it (op numbers unchanged)
    options = PlanOptions()
    if board is not None:
        require_device_support(graph, args.backend)  # every op, listed, before any planning
        options = replace(options, alignment=board.arena_alignment, dsp=board.dsp,
                          mve=board.dsp and board.mve)
    if args.alignment:
        options = replace(options, alignment=args.alignment)
    if args.no_inplace:
        options = options.without_inplace()
    request = _patch_request(args)
    if args.patch is None and request is not None:  # the default: shown only when it patches
        from tinyhost.codegen.fold import fold_for_compiled
        from tinyhost.plan.patch import resolve_patch

        if resolve_patch(fold_for_compiled(graph).graph, options, request) is None:
            request = None
    fused = None
    planned = graph
    fusing = args.fuse_residual != "off" or args.fuse_dw_pw != "off"
    if args.backend == "compiled" and fusing and request is None:
        from tinyhost.codegen.compiled import choose_fusions

        fused = choose_fusions(graph, options, args.fuse_residual,
                               args.fuse_dw_pw)  # what the code runs
        planned = fused.graph
    try:
        plan = plan_memory(planned, options=options)
    except ValueError as e:  # e.g. an alignment that is not a power of two
        from tinyhost.errors import TinyhostError

        raise TinyhostError(str(e)) from None
    patch_json = None
    if request is not None:
        plan, patch_json = _patched_plan(graph, options, request)
    flash = flash_usage(graph)
    from tinyhost.cli.backend import fuse_options

    fit = (get_backend(args.backend).fit(graph, board, patch=request, **fuse_options(args))
           if board is not None else None)  # fmt: skip

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
        if patch_json is not None:
            out["patch"] = patch_json
        if fused is not None:  # the plan's op numbers are those of the folded, fused graph
            out["op_origin"] = list(fused.origin)
            out["fused_residual"] = [{"conv": f.conv, "add": f.add,
                                      "skip": graph.tensors[f.skip].name} for f in fused.fused]
            out["fused_dw_pw"] = [{"depthwise": f.dw, "pointwise": f.pw}
                                  for f in fused.fused_dw_pw]
        print(json.dumps(out, indent=2))
    else:
        if patch_json is not None:
            print(_format_patch(patch_json))
        if fused is not None and fused.fused:
            pairs = ", ".join(f"op {f.conv} + ADD op {f.add}" for f in fused.fused)
            print(f"fused residual ADDs (--fuse-residual {args.fuse_residual}): {pairs}; op "
                  "numbers below are "
                  "the compiled backend's (folded) graph's")
        if fused is not None and fused.fused_dw_pw:
            pairs = ", ".join(f"op {f.dw} + CONV_2D op {f.pw}" for f in fused.fused_dw_pw)
            print(f"fused depthwise -> pointwise (--fuse-dw-pw {args.fuse_dw_pw}): {pairs}; "
                  "op numbers below are the compiled backend's (folded) graph's")
        print(format_plan(plan, flash, fit, args.backend))
    if fit is not None:
        require_fits(fit, args.model)  # exit 2 with the bytes missing
    return 0


def _patch_request(args: argparse.Namespace):  # noqa: ANN202
    from tinyhost.errors import TinyhostError
    from tinyhost.plan.patch import parse_patch

    if args.patch is None:  # convert's default (the compiled backend's fastest build)
        from tinyhost.plan.patch import default_patch

        return default_patch(args.backend, "speed")
    request = parse_patch(args.patch, args.max_overhead)
    if request is not None and args.backend != "compiled":
        raise TinyhostError("--patch is the compiled backend's: add --backend compiled")
    return request


def _patched_plan(graph: Graph, options, request):  # noqa: ANN001, ANN202
    """The compiled backend's view: PADs folded, then the stage in bands (plan/patch.py)."""
    from tinyhost.codegen.fold import fold_for_compiled
    from tinyhost.plan.patch import layout_patched, patch_graph, pick

    folded = fold_for_compiled(graph)
    chosen, cands, unpatched = pick(folded.graph, options, request)
    info = {"request": args_text(request), "unpatched_arena_bytes": unpatched,
            "max_overhead": request.max_overhead,
            "candidates": [c.to_json() for c in cands],
            "chosen": None if chosen is None else chosen.to_json()}  # fmt: skip
    if chosen is None:
        from tinyhost.plan import plan_memory

        return plan_memory(folded.graph, options=options), info
    p = patch_graph(folded.graph, chosen.split_op, chosen.tiles, chosen.keep_halo)
    # op numbers as the user's model has them (folded PADs absent from the plan's graph)
    for entry in (*info["candidates"], info["chosen"]):
        entry["split_op"] = folded.origin[entry["split_op"]]
    return layout_patched(p, options).plan, info


def args_text(request) -> str:  # noqa: ANN001
    return "auto" if request.tiles is None else str(request.tiles)


def _format_patch(info: dict) -> str:
    lines = [f"patch: {len(info['candidates'])} candidates (split op, tiles), unpatched arena "
             f"{info['unpatched_arena_bytes']:,} B, max overhead {info['max_overhead']:g}"]
    best = sorted(info["candidates"], key=lambda c: (c["arena_bytes"], c["extra_macs"]))[:8]
    for c in best:
        lines.append(f"  split op {c['split_op']:>3}  tiles {c['tiles']:>3}  arena "
                     f"{c['arena_bytes']:>9,} B  extra MACs {c['extra_macs']:>10,} "
                     f"({100 * c['overhead']:.1f}%), halo {c['halo']}")
    chosen = info["chosen"]
    lines.append("chosen: none (nothing beats layer by layer within the overhead)" if chosen is None
                 else f"chosen: split op {chosen['split_op']}, {chosen['tiles']} row bands, "
                      f"arena {chosen['arena_bytes']:,} B; the input is not preserved")
    return "\n".join(lines)


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
