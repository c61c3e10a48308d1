"""`tinyhost convert | build | run`: a model onto a board through a backend.

    tinyhost convert MODEL --backend interpreter --board B -o OUTDIR [--all-ops]
        [--arena-bytes N] [--load-capacity N] [--calib DATA ...]
    tinyhost build OUTDIR --board B [--build-dir DIR] [--sanitize]
    tinyhost run MODEL --board B --backend interpreter --input X.npy [--input ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from tinyhost.errors import InputDataError
from tinyhost.ir import Graph

INT8_MODEL = "model_int8.tflite"  # the int8 model convert deployed, beside its model.json


def _model_dir_of(path: Path) -> Path | None:
    """The model directory behind MODEL: MODEL itself (written by `convert`), or the one a
    firmware (an ELF in a `build` directory) was built from (its CMakeCache's MODEL_DIR)."""
    if path.is_dir():
        return path
    if path.suffix == ".elf" and path.is_file():
        cache = path.parent / "CMakeCache.txt"
        lines = cache.read_text(errors="replace").splitlines() if cache.is_file() else []
        for line in lines:
            if line.startswith("MODEL_DIR:"):
                return Path(line.split("=", 1)[1])
        raise InputDataError(f"{path}: not a firmware tinyhost built (no MODEL_DIR in {cache})")
    return None


def resolve_model(args: argparse.Namespace) -> None:
    """MODEL may be a .tflite, a directory `convert` wrote or a firmware `build` made from one:
    for the latter two, the directory's int8 model runs with the backend and --optimize it was
    converted with, on the board it was converted for (--board must name it)."""
    model_dir = _model_dir_of(Path(args.model))
    if model_dir is None:
        return
    info_path, int8 = model_dir / "model.json", model_dir / INT8_MODEL
    if not info_path.is_file() or not int8.is_file():
        raise InputDataError(f"{args.model}: not a model directory of tinyhost convert (no "
                             f"{info_path.name} and {int8.name} in {model_dir})")  # fmt: skip
    info = json.loads(info_path.read_text())
    if info.get("board") != args.board:
        raise InputDataError(f"{model_dir} was converted for {info.get('board')}, not "
                             f"{args.board}: pass --board {info.get('board')}")  # fmt: skip
    args.model = str(int8)
    args.backend = info.get("backend", args.backend)
    args.optimize = info.get("optimize", args.optimize)
    patch = info.get("patch")
    if patch:
        args.patch, args.max_overhead = patch["request"], patch["max_overhead"]
    elif "patch" in info:  # converted layer by layer: not the default's choice again
        args.patch = "off"
    if "fuse_residual" in info:
        args.fuse_residual = info["fuse_residual"]
    if "kernel_paths" in info:
        args.kernel_paths = "used" if info["kernel_paths"]["recorded"] else "all"
    if "fuse_dw_pw" in info:
        args.fuse_dw_pw = info["fuse_dw_pw"]


def load_int8_graph(path: str, args: argparse.Namespace) -> Graph:
    """Read MODEL; quantize it first when it is float (needs --calib)."""
    from tinyhost.quantize.quantizer import is_float_model
    from tinyhost.tflite import read_model

    graph = read_model(path)
    if is_float_model(graph):
        from tinyhost.cli.quantize import options_from_args, quantize_for_convert

        graph = quantize_for_convert(graph, getattr(args, "calib", None), options_from_args(args))
    return graph


def add_model_options(p: argparse.ArgumentParser) -> None:
    from tinyhost.codegen.backends import backend_names, backends_help

    p.add_argument("--backend", choices=backend_names(), default="interpreter",
                   help=f"how the model runs (default interpreter): {backends_help()}")
    p.add_argument("--board", required=True, help="board name (boards/<name>/)")
    p.add_argument("--all-ops", action="store_true",
                   help="link every available kernel, so LOAD_MODEL can bring other models")
    p.add_argument("--arena-bytes", type=int, metavar="N",
                   help="reserve at least N arena bytes (for models loaded later)")
    p.add_argument("--optimize", choices=("speed", "size"), default="speed",
                   help="compiled backend: the fastest kernels (default), or the smallest code "
                        "(portable kernels built with -Os)")
    p.add_argument("--patch", metavar="auto|off|N",
                   help="compiled backend: run the first layers in N row bands (auto: the "
                        "split and band count with the smallest arena) to go below the "
                        "layer-by-layer memory bound; the input is not preserved (default: "
                        "under --optimize speed, auto within 3%% estimated extra "
                        "instructions where the arena drops by 10%% or more; else off)")
    p.add_argument("--max-overhead", type=float, default=0.10, metavar="F",
                   help="--patch auto: at most this share of extra MACs from recomputed band "
                        "borders (default %(default)g)")
    add_fuse_option(p)
    p.add_argument("--renode", metavar="PATH",
                   help="Renode to run Renode boards with (else $TINYHOST_RENODE, `renode` on "
                        "PATH, or the copy `make setup` unpacked into build/)")  # fmt: skip
    from tinyhost.cli.quantize import add_arguments

    add_arguments(p, calib_required=False)


def add_fuse_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fuse-residual", choices=("auto", "on", "off"), default="auto",
                   help="compiled backend: compute each residual ADD in the epilogue of the "
                        "conv producing one of its inputs, writing the sum over the other "
                        "(the skip), so the two are never live together; auto: where it "
                        "costs no extra conv call or lowers the arena (default auto)")
    p.add_argument("--fuse-dw-pw", choices=("auto", "on", "off"), default="auto",
                   help="compiled backend: run each depthwise conv whose output only a "
                        "pointwise conv reads in bands of rows that the pointwise consumes "
                        "from a small staging buffer, so the depthwise output is never whole; "
                        "auto: where it lowers the arena (default auto)")
    p.add_argument("--kernel-paths", choices=("used", "all"), default="used",
                   help="compiled backend: build only the kernel paths the model takes, "
                        "recorded by running it once on the host (smaller code, same "
                        "results), or every path (default used)")


def fuse_options(args: argparse.Namespace) -> dict[str, str]:
    """--fuse-residual, --fuse-dw-pw and --kernel-paths as convert's keywords (the compiled
    backend's only)."""
    if args.backend != "compiled":
        return {}
    return {"fuse_residual": args.fuse_residual, "fuse_dw_pw": args.fuse_dw_pw,
            "kernel_paths": args.kernel_paths}


def patch_request(args: argparse.Namespace):  # noqa: ANN201
    """--patch / --max-overhead as a PatchRequest (None: off); no --patch: the backend's
    default (plan/patch.py default_patch)."""
    from tinyhost.plan.patch import default_patch, parse_patch

    if args.patch is None:
        return default_patch(args.backend, args.optimize)
    return parse_patch(args.patch, args.max_overhead)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("convert", help="model -> a model directory (C sources) for a board")
    p.add_argument("model", help=".tflite file (float models are quantized with --calib)")
    p.add_argument("-o", "--output", required=True, metavar="OUTDIR", help="directory to write")
    p.add_argument("--load-capacity", type=int, metavar="N",
                   help="LOAD_MODEL buffer bytes in the firmware (default: board-dependent)")
    add_model_options(p)
    p.set_defaults(func=_cmd_convert)

    p = subparsers.add_parser("build", help="build the firmware for a converted model directory")
    p.add_argument("model_dir", help="OUTDIR of tinyhost convert")
    p.add_argument("--board", required=True,
                   help="board name; must be the board the directory was converted for")
    p.add_argument("--build-dir", help="CMake build directory (reused between builds)")
    p.add_argument("--sanitize", action="store_true", help="host board: ASan + UBSan")
    p.set_defaults(func=_cmd_build)

    p = subparsers.add_parser("run", help="convert, build and run a model on a board")
    p.add_argument("model", help=".tflite file, a directory of tinyhost convert, or a firmware "
                                 "(.elf) built from one")
    p.add_argument("--input", action="append", required=True, metavar="X.npy",
                   help="input array (repeat for several inputs); a leading sample axis runs "
                        "each sample")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--work-dir", help="where the model directory and build go")
    p.add_argument("-o", "--output", metavar="OUT.npy",
                   help="save every sample's outputs (.npy; .npz for several output tensors)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds the device may take in all: start-up, handshake and every "
                        "request (default %(default)g)")
    p.add_argument("--port", metavar="URL",
                   help="serial port of a flashed board (e.g. /dev/ttyACM0 or any pyserial URL); "
                        "the model goes over LOAD_MODEL when the board has another one")
    add_model_options(p)
    p.set_defaults(func=_cmd_run)


def _cmd_convert(args: argparse.Namespace) -> int:
    from tinyhost.boards import load_board
    from tinyhost.cli.inputs import output_path
    from tinyhost.codegen import get_backend

    output_path(args.output, "model directory", directory=True)
    board = load_board(args.board)
    convert = get_backend(args.backend).convert
    graph = load_int8_graph(args.model, args)
    result = convert(graph, board, args.output, all_ops=args.all_ops,
                     arena_bytes=args.arena_bytes, load_capacity=args.load_capacity,
                     optimize=args.optimize, patch=patch_request(args), **fuse_options(args))
    from tinyhost.tflite.writer import write_model

    # the int8 model as deployed, so `run`/`eval` can take this directory (or its firmware)
    (Path(args.output) / INT8_MODEL).write_bytes(write_model(graph))
    print(f"{args.output}: {result.backend}, model {result.model_flash_bytes} B "
          f"(hash 0x{result.model_hash:08x}), arena {result.arena_bytes} B, "
          f"links: {', '.join(result.linked)}")
    for note in result.notes:
        print(note)
    print(result.budget.verdict())
    return 0


def _cmd_build(args: argparse.Namespace) -> int:
    from tinyhost.deploy.runner import build_firmware

    build_dir = Path(args.build_dir) if args.build_dir else None
    fw = build_firmware(Path(args.model_dir), args.board, build_dir, sanitize=args.sanitize)
    print(f"{fw.elf}: text {fw.size.text} B, data {fw.size.data} B, bss {fw.size.bss} B")
    return 0


def _save_outputs(path: Path, outputs: list[np.ndarray]) -> None:
    if len(outputs) == 1:
        np.save(path, outputs[0])
    else:
        np.savez(path, **{f"output_{k}": o for k, o in enumerate(outputs)})


def _cmd_run(args: argparse.Namespace) -> int:
    from tinyhost.cli.inputs import load_array, output_path, split_batches
    from tinyhost.deploy.runner import run_model

    out_path = output_path(args.output, "outputs") if args.output else None
    resolve_model(args)
    graph = load_int8_graph(args.model, args)
    arrays = [load_array(p) for p in args.input]
    report = run_model(
        graph, args.board, split_batches(graph, arrays), backend=args.backend,
        work_dir=Path(args.work_dir) if args.work_dir else None, all_ops=args.all_ops,
        arena_bytes=args.arena_bytes, timeout=args.timeout, port=args.port,
        optimize=args.optimize, renode=args.renode, patch=patch_request(args),
        fuse_residual=args.fuse_residual, fuse_dw_pw=args.fuse_dw_pw,
        kernel_paths=args.kernel_paths,
    )  # fmt: skip
    if out_path is not None:
        _save_outputs(out_path, report.stacked_outputs())
    if args.json:
        json.dump(report.to_json(), sys.stdout)
        print()
        return 0
    summary = report.latency_summary()
    unit, n = summary["unit"], summary["samples"]
    print(f"{report.model} on {report.board} ({report.backend}): arena {report.arena_bytes} B, "
          f"model {report.model_flash_bytes} B")
    if report.emulator is not None:
        print(f"emulator: {report.emulator['name']} {report.emulator['version']} "
              f"({report.emulator['path']}, found by {report.emulator['found_by']})")
    if report.budget is not None:
        print(report.budget.verdict())
    if report.stack_peak is not None or report.stack_static is not None:
        known = [f"{what} {v:,} B" for what, v in (
            ("measured peak", report.stack_peak), ("static bound", report.stack_static),
            ("reserved", report.budget.reserves.stack if report.budget else None)) if v]
        print(f"stack: {', '.join(known)}")
    for k, o in enumerate(report.stacked_outputs()):
        flat = report.runs[0].outputs[k].reshape(-1)
        more = " ..." if flat.size > 16 else ""
        head = "" if n == 1 else " (sample 0)"
        print(f"output {k}: {o.dtype}{list(o.shape)}{head} = {flat[:16].tolist()}{more}")
    if out_path is not None:
        print(f"outputs of {n} sample(s) saved to {out_path}")
    elif n > 1:
        print(f"{n} samples: pass -o OUT.npy to save every output")
    hz = summary["hz"]
    est = ""
    if hz and unit in ("cycles", "instructions"):
        guess = " if 1 instruction = 1 cycle" if unit == "instructions" else ""
        est = f" = {1000 * summary['total'] / hz:.3f} ms at {hz / 1e6:g} MHz{guess}"
    if n == 1:
        print(f"latency: {summary['total']:,} {unit} total{est}")
    else:
        print(f"latency over {n} samples: median {summary['total']:,}, min {summary['min']:,}, "
              f"max {summary['max']:,} {unit}{est}")  # fmt: skip
    for name, count in zip(report.op_names, summary["per_op"]):
        print(f"  {name:<20} {count:>12,} {unit}")
    return 0
