"""`tinyhost inspect | reference | demo`: a model on its own, no board."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from tinyhost.cli.inputs import load_array, output_path, split_batches


def _cmd_inspect(args: argparse.Namespace) -> int:
    from tinyhost.report.inspect import format_inspect, inspect_graph
    from tinyhost.tflite import read_model

    summary = inspect_graph(read_model(args.model), args.backend)
    print(json.dumps(summary, indent=2) if args.json else format_inspect(summary))
    return 0


def _cmd_reference(args: argparse.Namespace) -> int:
    from tinyhost import reference
    from tinyhost.tflite import read_model

    out = output_path(args.output, "outputs")
    if args.dump_dir:
        output_path(args.dump_dir, "tensor dumps", directory=True)
    graph = read_model(args.model)
    reference.check_executable(graph)
    arrays = [load_array(p) for p in args.input]
    batches = split_batches(graph, arrays)
    results = [
        reference.run(graph, batch, keep_intermediates=bool(args.dump_dir)) for batch in batches
    ]

    outputs = [np.concatenate([r.outputs[i] for r in results]) for i in range(len(graph.outputs))]
    if len(outputs) == 1:
        np.save(out, outputs[0])
    else:
        np.savez(out, **{f"output_{i}": o for i, o in enumerate(outputs)})
    if args.dump_dir:
        _dump_tensors(graph, results[0].tensors, Path(args.dump_dir))
    for i, o in enumerate(outputs):
        print(f"output {i}: {o.dtype}{list(o.shape)} -> {out}")
    return 0


def _dump_tensors(graph, tensors: dict[int, np.ndarray], directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    index = []
    for i, value in sorted(tensors.items()):
        if graph.tensors[i].is_constant:
            continue
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", graph.tensors[i].name)[:80]
        name = f"{i:04d}_{safe}.npy"
        np.save(directory / name, value)
        index.append({"tensor": i, "name": graph.tensors[i].name, "file": name})
    (directory / "index.json").write_text(json.dumps(index, indent=2))


def _cmd_demo(args: argparse.Namespace) -> int:
    from tinyhost.demo import run_demo

    print(run_demo(board=None if args.board == "none" else args.board, backend=args.backend,
                   renode=args.renode))
    return 0


def add_parser(sub) -> None:
    from tinyhost.codegen.backends import backend_names

    p = sub.add_parser("inspect", help="list a model's ops, shapes, quantization and MACs")
    p.add_argument("model", help=".tflite file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--backend", choices=backend_names(), default="interpreter",
                   help="backend whose device support is listed (default interpreter)")
    p.set_defaults(func=_cmd_inspect)

    p = sub.add_parser("reference", help="run a model through the NumPy reference")
    p.add_argument("model", help=".tflite file")
    p.add_argument(
        "--input",
        action="append",
        required=True,
        metavar="X.npy",
        help="input array (repeat for several inputs); float input to an int8 model is quantized",
    )
    p.add_argument("-o", "--output", required=True, help="output .npy (.npz for several outputs)")
    p.add_argument("--dump-dir", help="save every intermediate tensor here as .npy")
    p.set_defaults(func=_cmd_reference)

    p = sub.add_parser("demo", help="run the bundled demo model end to end (no hardware)")
    p.add_argument("--board", default="mps2-an386",
                   help="where the int8 model runs after the reference (default mps2-an386 on "
                        "QEMU; 'host' runs natively; 'none' skips the device; "
                        "stm32f4_discovery / stm32f746g_disco run on Renode)")
    p.add_argument("--backend", choices=backend_names(), default="interpreter",
                   help="how the model runs on the board (default interpreter)")
    p.add_argument("--renode", metavar="PATH",
                   help="Renode for the Renode boards (else $TINYHOST_RENODE, `renode` on PATH, "
                        "or the copy `make setup` unpacked into build/)")  # fmt: skip
    p.set_defaults(func=_cmd_demo)

