"""Packed int4 weights on a board (th_conv_s4, th_dw_conv_s4, th_fully_connected_s4) against
the same weights run as int8 (the int8 kernels): model bytes in flash and executed
instructions per op.

1. The digits model (tests/models/digits_float.tflite) quantized with `--weights int8` and
   `--weights int4`, through both backends: instructions per inference, flash_model_bytes.
2. A shape set of single layers (CONV_2D 3x3 and 1x1, DEPTHWISE_CONV_2D 3x3, FULLY_CONNECTED)
   with int4 values, once with the weights flagged packed int4 (the s4 kernels) and once
   unflagged (the int8 kernels on the same values), compiled backend: instructions, MACs per
   instruction, model bytes.

    python bench/int4.py [--board mps2-an386] [--json]

Units follow the board counter (ARCHITECTURE.md §4.7: `instructions` on QEMU). Numbers, not
pass/fail; outputs are checked bit-exact here against the reference (a mismatch aborts).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from reference_single_op import I8, I32, q, single_op_graph  # noqa: E402
from tinyhost import reference  # noqa: E402
from tinyhost.cli import main as cli  # noqa: E402
from tinyhost.deploy.runner import run_model  # noqa: E402
from tinyhost.ir import (  # noqa: E402
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    Graph,
    OpKind,
    Padding,
    Tensor,
)
from tinyhost.ir.stats import op_macs  # noqa: E402
from tinyhost.tflite import read_model  # noqa: E402

BUILD = ROOT / "build" / "bench_int4"
MODELS = ROOT / "tests" / "models"


def _run(graph: Graph, board: str, backend: str, x: list[np.ndarray], tag: str) -> dict:
    report = run_model(graph, board, [x], backend=backend, work_dir=BUILD / tag)
    want = reference.run(graph, x).outputs
    for got, w in zip(report.runs[0].outputs, want, strict=True):
        if not np.array_equal(got, np.asarray(w).reshape(got.shape)):
            raise SystemExit(f"{tag}: device output differs from the reference")
    latency = report.runs[0].latency
    return {"unit": latency.unit, "total": int(sum(latency.per_op)),
            "per_op": [int(n) for n in latency.per_op],
            "flash_model_bytes": report.model_flash_bytes}  # fmt: skip


def digits(board: str) -> list[dict]:
    BUILD.mkdir(parents=True, exist_ok=True)
    data = np.load(MODELS / "digits_data.npz")
    rows = []
    for weights in ("int8", "int4"):
        path = BUILD / f"digits_{weights}.tflite"
        cli(["quantize", str(MODELS / "digits_float.tflite"), "--calib",
             f"{MODELS / 'digits_data.npz'}:calib_x", "--weights", weights, "-o", str(path)])
        g = read_model(path)
        xq = g.tensors[g.inputs[0]].quant
        x = np.clip(np.round(data["test_x"][0] / float(xq.scale[0])) + int(xq.zero_point[0]),
                    -128, 127).astype(np.int8).reshape(g.tensors[g.inputs[0]].shape)
        for backend in ("interpreter", "compiled"):
            r = _run(g, board, backend, [x], f"digits-{weights}-{backend}")
            rows.append({"model": "digits", "weights": weights, "backend": backend, **r})
    return rows


def _layer(kind: OpKind, seed: int) -> tuple[str, Graph]:
    rng = np.random.default_rng(seed)
    if kind is OpKind.FULLY_CONNECTED:
        name, xs, ws, ys, opts, axis = "fc 1x256->64", (1, 256), (64, 256), (1, 64), \
            FullyConnectedOptions(), 0
    elif kind is OpKind.DEPTHWISE_CONV_2D:
        name, xs, ws, ys, axis = "dw 3x3 16x16x32", (1, 16, 16, 32), (1, 3, 3, 32), \
            (1, 16, 16, 32), 3
        opts = DepthwiseConv2DOptions(Padding.SAME, 1, 1, 1)
    elif seed == 1:
        name, xs, ws, ys, axis = "conv 1x1 16x16x32->32", (1, 16, 16, 32), (32, 1, 1, 32), \
            (1, 16, 16, 32), 0
        opts = Conv2DOptions(Padding.VALID, 1, 1)
    else:
        name, xs, ws, ys, axis = "conv 3x3 16x16x16->32", (1, 16, 16, 16), (32, 3, 3, 16), \
            (1, 16, 16, 32), 0
        opts = Conv2DOptions(Padding.SAME, 1, 1)
    cout = ws[axis]
    per_channel = kind is not OpKind.FULLY_CONNECTED  # TFLM: int4 FC per tensor only
    scales = rng.uniform(0.01, 0.03, cout if per_channel else 1).astype(np.float32)
    tensors = [
        Tensor("x", xs, I8, quant=q(0.05, 3)),
        Tensor("w", ws, I8, rng.integers(-7, 8, ws).astype(np.int8), q(scales, 0, axis=axis),
               packed_int4=True),
        Tensor("b", (cout,), I32, rng.integers(-500, 500, cout).astype(np.int32),
               q((0.05 * scales).astype(np.float32), 0)),
        Tensor("y", ys, I8, quant=q(0.25, -3)),
    ]
    return name, single_op_graph(kind, opts, tensors, [0, 1, 2], [3])


def layers(board: str) -> list[dict]:
    rows = []
    for seed, kind in enumerate((OpKind.CONV_2D, OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D,
                                 OpKind.FULLY_CONNECTED)):
        name, g4 = _layer(kind, seed)
        g8 = replace(g4, tensors=tuple(replace(t, packed_int4=False) for t in g4.tensors))
        x = [np.random.default_rng(9).integers(-128, 128, g4.tensors[0].shape).astype(np.int8)]
        macs = op_macs(g4, g4.ops[0])
        for weights, g in (("int8", g8), ("int4", g4)):
            r = _run(g, board, "compiled", x, f"layer{seed}-{weights}")
            rows.append({"layer": name, "weights": weights, "macs": macs,
                         "macs_per_instruction": macs / r["total"], **r})  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = {"board": args.board, "digits": digits(args.board), "layers": layers(args.board)}
    if args.json:
        print(json.dumps(result, indent=1))
        return
    for r in result["digits"]:
        print(f"digits {r['weights']} {r['backend']:11s} {r['total']:>9,} {r['unit']}  "
              f"model {r['flash_model_bytes']:,} B  per op {r['per_op']}")
    for r in result["layers"]:
        print(f"{r['layer']:24s} {r['weights']} {r['total']:>10,} {r['unit']}  "
              f"{r['macs_per_instruction']:.3f} MAC/instr  model {r['flash_model_bytes']:,} B")


if __name__ == "__main__":
    main()
