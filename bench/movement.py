"""Issue 17's data movement and BATCH_MATMUL on a board: executed instructions per op.

Runs the device-test graph of tests/test_movement_on_device.py (SPLIT, SPLIT_V, PACK, UNPACK,
GATHER, DEPTH_TO_SPACE, SPACE_TO_DEPTH, both resizes, ARG_MAX / ARG_MIN, EXPAND_DIMS and two
BATCH_MATMULs on a 1x4x6x8 input) through both backends and prints each op's count and its
count per output byte; then BATCH_MATMUL 32x64 @ 64x32 with and without adj_y, per MAC.
Outputs are checked against the reference by run_model's callers in the tests, not here.

    python bench/movement.py [--board mps2-an386] [--json]

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

from reference_single_op import I8, q, single_op_graph  # noqa: E402
from test_movement_on_device import _input, movement_graph  # noqa: E402
from tinyhost.deploy.runner import run_model  # noqa: E402
from tinyhost.ir import BatchMatMulOptions, OpKind, Tensor  # noqa: E402

BUILD = ROOT / "build" / "bench_movement"


def per_op(board: str) -> list[dict]:
    graph = movement_graph()
    rows = []
    for backend in ("compiled", "interpreter"):
        report = run_model(graph, board, [_input()], backend=backend,
                           work_dir=BUILD / f"{board}-{backend}")  # fmt: skip
        latency = report.runs[0].latency
        for i, n in zip(report.op_indices, latency.per_op):
            op = graph.ops[i]
            out = sum(graph.tensors[t].size_bytes for t in op.outputs)
            rows.append({"backend": backend, "op": i, "kind": op.kind.name, "unit": latency.unit,
                         "count": n, "output_bytes": out, "per_byte": n / out})  # fmt: skip
    return rows


def matmul(board: str, rows: int = 32, depth: int = 64, cols: int = 32) -> list[dict]:
    rng = np.random.default_rng(0)
    out = []
    for adj_y in (False, True):
        rhs_shape = (1, cols, depth) if adj_y else (1, depth, cols)
        graph = single_op_graph(
            OpKind.BATCH_MATMUL, BatchMatMulOptions(False, adj_y),
            [Tensor("a", (1, rows, depth), I8, quant=q(0.02, 1)),
             Tensor("b", rhs_shape, I8, quant=q(0.02, -2)),
             Tensor("y", (1, rows, cols), I8, quant=q(0.5, 3))], [0, 1], [2])  # fmt: skip
        x = [rng.integers(-128, 128, (1, rows, depth)).astype(np.int8),
             rng.integers(-128, 128, rhs_shape).astype(np.int8)]  # fmt: skip
        report = run_model(graph, board, [x], backend="compiled",
                           work_dir=BUILD / f"{board}-matmul-{adj_y}")  # fmt: skip
        latency = report.runs[0].latency
        macs = rows * depth * cols
        out.append({"adj_y": adj_y, "macs": macs, "unit": latency.unit,
                    "count": latency.per_op[0], "per_mac": latency.per_op[0] / macs})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--board", default="mps2-an386")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    ops, mm = per_op(args.board), matmul(args.board)
    if args.json:
        print(json.dumps({"board": args.board, "ops": ops, "matmul": mm}))
        return 0
    for r in ops:
        print(f"{r['backend']:<12} op {r['op']:>2} {r['kind']:<24} {r['count']:>8} {r['unit']}"
              f"  {r['output_bytes']:>5} B out  {r['per_byte']:6.2f} per byte")
    for r in mm:
        print(f"BATCH_MATMUL 32x64 @ 64x32 adj_y={r['adj_y']!s:<5} {r['count']:>8} {r['unit']}"
              f"  {r['per_mac']:.2f} per MAC")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
