"""Issue 17's LOG_SOFTMAX, L2_NORMALIZATION, CUMSUM, SUM and REDUCE_MAX on a board: executed
instructions per op and per input element.

Runs one graph of [rows, depth] int8 ops (SOFTMAX and MEAN beside them for scale) through the
compiled backend, and the device-test graph of tests/test_rowwise_on_device.py through both
backends; every output is checked against the NumPy reference.

    python bench/rowwise.py [--board mps2-an386] [--rows 32] [--depth 64] [--json]

Units follow the board counter (ARCHITECTURE.md §4.7: `instructions` on QEMU). Numbers, not
pass/fail.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from graph_builder import GraphBuilder  # noqa: E402
from reference_single_op import q  # noqa: E402
from test_rowwise_on_device import rowwise_graph  # noqa: E402
from tinyhost import reference  # noqa: E402
from tinyhost.deploy.runner import run_model  # noqa: E402
from tinyhost.ir import (  # noqa: E402
    CumsumOptions,
    FusedActivationOptions,
    Graph,
    NoOptions,
    OpKind,
    ReducerOptions,
    SoftmaxOptions,
)

BUILD = ROOT / "build" / "bench_rowwise"


def sized_graph(rows: int, depth: int) -> Graph:
    b = GraphBuilder(np.random.default_rng(0))
    x = b.tensor("x", (rows, depth), quant=q(0.05, -3))
    outs = []
    for kind, quant, options in (
        (OpKind.SOFTMAX, q(1 / 256, -128), SoftmaxOptions()),
        (OpKind.LOG_SOFTMAX, q(16 / 256, 127), NoOptions()),
        (OpKind.L2_NORMALIZATION, q(1 / 128, 0), FusedActivationOptions()),
    ):
        y = b.tensor(kind.name.lower(), (rows, depth), quant=quant)
        b.op(kind, (x,), (y,), options)
        outs.append(y)
    for axis in (1, 0):
        a = b.tensor(f"axis{axis}", (1,), np.dtype(np.int32), data=np.array([axis], np.int32))
        y = b.tensor(f"cumsum_axis{axis}", (rows, depth), quant=q(0.8, 5))
        b.op(OpKind.CUMSUM, (x, a), (y,), CumsumOptions())
        outs.append(y)
        for kind, quant in ((OpKind.MEAN, q(0.05, 2)), (OpKind.SUM, q(1.5, 2)),
                            (OpKind.REDUCE_MAX, q(0.05, -3))):
            shape = (depth,) if axis == 0 else (rows,)
            y = b.tensor(f"{kind.name.lower()}_axis{axis}", shape, quant=quant)
            b.op(kind, (x, a), (y,), ReducerOptions(False))
            outs.append(y)
    return b.graph([x], outs, "rowwise_sized")


def run(graph: Graph, board: str, backend: str, tag: str) -> list[dict]:
    rng = np.random.default_rng(1)
    x = [rng.integers(-128, 128, graph.tensors[t].shape).astype(np.int8) for t in graph.inputs]
    report = run_model(graph, board, [x], backend=backend, work_dir=BUILD / f"{board}-{tag}")
    want = reference.run(graph, x).outputs
    for got, ref in zip(report.runs[0].outputs, want, strict=True):
        if not np.array_equal(got, np.asarray(ref).reshape(got.shape)):
            raise SystemExit(f"{tag}: a device output differs from the reference")
    latency = report.runs[0].latency
    rows = []
    for i, n in zip(report.op_indices, latency.per_op):
        op = graph.ops[i]
        elements = int(np.prod(graph.tensors[op.inputs[0]].shape))  # input elements
        rows.append({"graph": tag, "backend": backend, "op": i,
                     "name": graph.tensors[op.outputs[0]].name, "unit": latency.unit,
                     "count": n, "elements": elements, "per_element": n / elements})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--board", default="mps2-an386")
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--depth", type=int, default=64)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = run(sized_graph(args.rows, args.depth), args.board, "compiled",
               f"sized-{args.rows}x{args.depth}")
    for backend in ("compiled", "interpreter"):
        rows += run(rowwise_graph(), args.board, backend, f"device-test-{backend}")
    if args.json:
        print(json.dumps({"board": args.board, "rows": rows}))
        return 0
    print(f"{'graph':<26} {'op':<16} {'count':>10} {'elements':>9} {'per element':>12}")
    for r in rows:
        print(f"{r['graph']:<26} {r['name']:<16} {r['count']:>10} {r['elements']:>9} "
              f"{r['per_element']:>12.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
