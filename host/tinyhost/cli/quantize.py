"""`tinyhost quantize`: float .tflite -> full-int8 .tflite, and the hook `convert` uses.

    tinyhost quantize MODEL.tflite --calib DATA -o OUT.tflite
        [--method minmax|percentile|mse] [--per-tensor] [--int8-io|--float-io]
        [--no-bias-correction]

DATA is a .npy array of samples, a .npz (FILE.npz:KEY picks an array), a folder of .npy
files, or `random` (standard-normal samples; a warning says accuracy is then unknown).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from tinyhost.errors import InputDataError
from tinyhost.ir import Graph
from tinyhost.quantize import (
    METHODS,
    QuantizeOptions,
    check_quantizable,
    load_calibration_data,
    quantize_model,
    random_calibration_data,
)
from tinyhost.quantize.calibration import Sample

RANDOM = "random"
RANDOM_WARNING = (
    "calibrating on random data (--calib random): the int8 model runs, but its accuracy is "
    "unknown; pass real input samples with --calib DATA"
)


def _warn_stderr(message: str) -> None:
    print(f"tinyhost: warning: {message}", file=sys.stderr)


def calibration_samples(graph: Graph, calib: str | None,
                        warn: Callable[[str], None] = _warn_stderr) -> list[Sample]:
    """Samples from --calib; `random` gives synthetic ones after a warning."""
    if calib is None:
        raise InputDataError(
            f"{graph.source}: the model is float32 and must be quantized first: pass "
            "--calib DATA (.npy/.npz of input samples or a folder of .npy files), or "
            "--calib random to accept unknown accuracy"
        )
    if calib == RANDOM:
        warn(RANDOM_WARNING)
        return random_calibration_data(graph)
    return load_calibration_data(calib, graph)


def quantize_for_convert(graph: Graph, calib_arg: str | None,
                         options: QuantizeOptions | None = None,
                         warn: Callable[[str], None] = _warn_stderr,
                         progress: bool = True) -> Graph:
    """What `convert` does with a float model: quantize it, requiring --calib."""
    check_quantizable(graph)
    samples = calibration_samples(graph, calib_arg, warn)
    return quantize_model(graph, samples, options or QuantizeOptions(), progress=progress)


def add_arguments(p: argparse.ArgumentParser, calib_required: bool = True) -> None:
    """The quantization options, shared with `convert`."""
    p.add_argument(
        "--calib", required=calib_required, metavar="DATA",
        help="calibration inputs: .npy/.npz array of samples (FILE.npz:KEY picks one), a "
             "folder of .npy files, or 'random' (accuracy unknown)",
    )
    p.add_argument("--method", choices=METHODS, default="minmax",
                   help="activation range per tensor: min/max, 99.99th percentile, or the "
                        "MSE-optimal clipping (default minmax)")
    p.add_argument("--per-tensor", action="store_true",
                   help="one weight scale per tensor instead of per output channel")
    io = p.add_mutually_exclusive_group()
    io.add_argument("--int8-io", dest="int8_io", action="store_true", default=True,
                    help="int8 model inputs and outputs (default)")
    io.add_argument("--float-io", dest="int8_io", action="store_false",
                    help="float32 inputs and outputs, QUANTIZE/DEQUANTIZE at the edges")
    p.add_argument("--no-bias-correction", action="store_true",
                   help="keep biases as calibrated, without correcting weight rounding")
    p.add_argument("--weights", choices=("int8", "int4"), default="int8",
                   help="CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED weights: int8 "
                        "(default) or int4 (-7..7, stored packed as TFLite INT4; `quantize` "
                        "reports the accuracy cost against int8)")


def options_from_args(args: argparse.Namespace) -> QuantizeOptions:
    return QuantizeOptions(
        method=args.method,
        per_channel=not args.per_tensor,
        int8_io=args.int8_io,
        bias_correction=not args.no_bias_correction,
        weight_bits=4 if getattr(args, "weights", "int8") == "int4" else 8,
    )


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "quantize", help="post-training quantization: float .tflite -> full-int8 .tflite"
    )
    p.add_argument("model", help="float32 .tflite file")
    p.add_argument("-o", "--output", required=True, help="int8 .tflite to write")
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from tinyhost.cli.inputs import output_path
    from tinyhost.tflite import read_model
    from tinyhost.tflite.writer import write_model

    output_path(args.output, "quantized model")
    graph = read_model(args.model)
    check_quantizable(graph)
    samples = calibration_samples(graph, args.calib)
    options = options_from_args(args)
    quantized = quantize_model(graph, samples, options, progress=True)
    data = write_model(quantized)
    Path(args.output).write_bytes(data)
    io = "int8" if args.int8_io else "float32"
    print(
        f"quantized {len(quantized.ops)} ops on {len(samples)} calibration samples "
        f"({args.method}, {'per-tensor' if args.per_tensor else 'per-channel'} "
        f"{args.weights} weights, {io} I/O) -> {args.output} ({len(data):,} bytes)"
    )
    if options.weight_bits == 4:
        _print_int4_cost(graph, quantized, samples, options)
    return 0


_COST_SAMPLES = 64  # calibration samples the int4-vs-int8 comparison runs


def _print_int4_cost(graph: Graph, int4: Graph, samples: list, options: QuantizeOptions) -> None:
    """The accuracy int4 weights cost: both quantized models against the float model on the
    first calibration samples (the NumPy reference, bit-exact with TFLite Micro)."""
    from dataclasses import replace

    from tinyhost.quantize.cost import quantization_cost

    int8 = quantize_model(graph, samples, replace(options, weight_bits=8), progress=False)
    probe = samples[:_COST_SAMPLES]
    for name, model in (("int8", int8), ("int4", int4)):
        c = quantization_cost(graph, model, probe)
        print(f"  {name} weights vs float on {c.samples} calibration samples: top-1 agreement "
              f"{100 * c.top1_agreement:.1f}%, output RMSE {c.rmse:.4g}")
