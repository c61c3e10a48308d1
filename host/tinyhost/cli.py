"""The `tinyhost` command. It only parses arguments and wires the stages together.

Errors caused by the user's input (TinyhostError) are printed as one line on stderr with
exit code 2; nothing else is caught, so a bug still shows its traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tinyhost import __version__
from tinyhost.errors import InputDataError, TinyhostError


def load_array(path: str) -> np.ndarray:
    """Load one .npy file, with errors that name it."""
    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"{path}: no such file")
    try:
        return np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise InputDataError(f"{path}: not a readable .npy array ({e})") from None


def _cmd_inspect(args: argparse.Namespace) -> int:
    from tinyhost.report.inspect import format_inspect, inspect_graph
    from tinyhost.tflite import read_model

    summary = inspect_graph(read_model(args.model))
    print(json.dumps(summary, indent=2) if args.json else format_inspect(summary))
    return 0


def _cmd_reference(args: argparse.Namespace) -> int:
    from tinyhost import reference
    from tinyhost.tflite import read_model

    graph = read_model(args.model)
    reference.check_executable(graph)
    arrays = [load_array(p) for p in args.input]
    batches = _split_batches(graph, arrays)
    results = [
        reference.run(graph, batch, keep_intermediates=bool(args.dump_dir)) for batch in batches
    ]

    outputs = [np.concatenate([r.outputs[i] for r in results]) for i in range(len(graph.outputs))]
    out = Path(args.output)
    if len(outputs) == 1:
        np.save(out, outputs[0])
    else:
        np.savez(out, **{f"output_{i}": o for i, o in enumerate(outputs)})
    if args.dump_dir:
        _dump_tensors(graph, results[0].tensors, Path(args.dump_dir))
    for i, o in enumerate(outputs):
        print(f"output {i}: {o.dtype}{list(o.shape)} -> {out}")
    return 0


def _split_batches(graph, arrays: list[np.ndarray]) -> list[list[np.ndarray]]:
    """Inputs with a leading sample axis on a batch-1 model run once per sample."""
    shapes = [graph.tensors[i].shape for i in graph.inputs]
    counts = {
        a.shape[0]
        for a, s in zip(arrays, shapes)
        if len(s) >= 1
        and s[0] == 1
        and a.ndim == len(s)
        and a.shape[1:] == s[1:]
        and a.shape[0] > 1
    }
    if len(counts) != 1 or len(arrays) != len(shapes):
        return [arrays]
    n = counts.pop()
    return [[a[k : k + 1] for a in arrays] for k in range(n)]


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

    print(run_demo(board=None if args.board == "none" else args.board, renode=args.renode))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tinyhost", description="Bit-exact int8 inference for Cortex-M microcontrollers."
    )
    parser.add_argument("--version", action="version", version=f"tinyhost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("inspect", help="list a model's ops, shapes, quantization and MACs")
    p.add_argument("model", help=".tflite file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
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
    p.add_argument("--renode", metavar="PATH",
                   help="Renode for the Renode boards (else $TINYHOST_RENODE, `renode` on PATH, "
                        "or the copy `make setup` unpacked into build/)")  # fmt: skip
    p.set_defaults(func=_cmd_demo)

    # Subcommands that live in their own modules.
    from tinyhost import cli_backend, cli_bench, cli_flash, cli_plan, cli_quantize

    cli_quantize.add_parser(sub)
    cli_plan.add_parser(sub)
    cli_backend.add_parser(sub)
    cli_bench.add_parser(sub)
    cli_flash.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except TinyhostError as e:
        print(f"tinyhost: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `tinyhost inspect m.tflite | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("tinyhost: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
