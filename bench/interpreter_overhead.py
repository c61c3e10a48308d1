"""Per-op overhead of the interpreter: what dispatch costs on top of the kernels.

A synthetic model of N RESHAPE ops (the copy adapter is a no-op on the aliased buffers the
planner gives them) runs on a board; each op's profile entry is then pure interpreter work:
decoding the op record and its tensors, finding the kernel, calling the adapter, reading the
counter. Also a chain of N one-element ADDs (dispatch + the smallest real kernel call).

    python bench/interpreter_overhead.py [--board host|netduinoplus2|mps2-an386] [--ops 200]

Prints a table and one JSON line. Units follow the board counter (ARCHITECTURE.md §4.7).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np

from tinyhost.deploy.runner import run_model
from tinyhost.ir import (
    FusedActivationOptions,
    Graph,
    Op,
    OpKind,
    Quantization,
    ReshapeOptions,
    Tensor,
)

ROOT = Path(__file__).resolve().parents[1]


def reshape_chain(n: int) -> Graph:
    shapes = [(1, 8), (8, 1)]
    tensors = [Tensor("x", (1, 8), np.dtype(np.int8))]
    ops = []
    for k in range(n):
        shape = shapes[(k + 1) % 2]
        tensors.append(Tensor(f"s{k}", (2,), np.dtype(np.int32), np.array(shape, np.int32)))
        tensors.append(Tensor(f"y{k}", shape, np.dtype(np.int8)))
        ops.append(Op(OpKind.RESHAPE, (len(tensors) - 3 if k else 0, len(tensors) - 2),
                      (len(tensors) - 1,), ReshapeOptions(shape)))
    return Graph(tuple(tensors), tuple(ops), (0,), (len(tensors) - 1,), "reshape_chain",
                 "reshape_chain")


def add_chain(n: int) -> Graph:
    q = Quantization(np.array([0.05], np.float32), np.array([0], np.int64))
    tensors = [Tensor("x", (1, 1), np.dtype(np.int8), quant=q),
               Tensor("c", (1, 1), np.dtype(np.int8), np.array([[3]], np.int8), quant=q)]
    ops = []
    prev = 0
    for k in range(n):
        tensors.append(Tensor(f"y{k}", (1, 1), np.dtype(np.int8), quant=q))
        ops.append(Op(OpKind.ADD, (prev, 1), (len(tensors) - 1,), FusedActivationOptions()))
        prev = len(tensors) - 1
    return Graph(tuple(tensors), tuple(ops), (0,), (prev,), "add_chain", "add_chain")


def measure(graph: Graph, board: str, repeats: int) -> dict:
    x = np.zeros(graph.tensors[graph.inputs[0]].shape, np.int8)
    work = ROOT / "build" / "bench" / f"overhead-{board}-{graph.name}"
    report = run_model(graph, board, [[x]] * repeats, work_dir=work)
    per_op = [c for run in report.runs for c in run.latency.per_op]
    lat = report.runs[0].latency
    return {"model": graph.name, "ops": len(graph.ops), "unit": lat.unit,
            "median_per_op": statistics.median(per_op), "min_per_op": min(per_op),
            "mean_per_op": statistics.fmean(per_op)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="host")
    p.add_argument("--ops", type=int, default=200)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    rows = [measure(g, args.board, args.repeats) for g in (reshape_chain(args.ops),
                                                           add_chain(args.ops))]
    print(f"{'model':<15} {'ops':>5} {'median/op':>10} {'min/op':>8} unit")
    for r in rows:
        print(f"{r['model']:<15} {r['ops']:>5} {r['median_per_op']:>10.0f} "
              f"{r['min_per_op']:>8} {r['unit']}")
    print(json.dumps({"board": args.board, "results": rows}))


if __name__ == "__main__":
    main()
