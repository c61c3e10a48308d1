"""Issue 17's int16 activations and int32 QUANTIZE, per element, and the LSTM that shares their
sigmoid table: exact instruction counts per op on a QEMU board.

    python bench/sigmoid16.py [--board mps2-an386] [--backend compiled] [--json]

One graph (x int8 [1, 64, 64, 4], 16384 elements): QUANTIZE int8 -> int16, LOGISTIC and TANH
on two input scales (1/2000: the multiplier path; 2^-12: the power-of-two path), SUB int16,
QUANTIZE int16 -> int32 and int32 -> int8; and one UNIDIRECTIONAL_SEQUENCE_LSTM (batch 1,
20 steps, input 32, state 32; tests/lstm_graphs.py), run through the chosen backend; every
output compared with the NumPy reference. Prints instructions per op and per element (LSTM:
per step). Numbers, not pass/fail.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from graph_builder import GraphBuilder  # noqa: E402
from lstm_graphs import lstm_graph  # noqa: E402
from reference_single_op import q  # noqa: E402
from tinyhost import reference  # noqa: E402
from tinyhost.deploy.runner import run_model  # noqa: E402
from tinyhost.ir import Activation, FusedActivationOptions, Graph, NoOptions, OpKind  # noqa: E402

SHAPE = (1, 64, 64, 4)
I8, I16, I32 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)
LSTM_STEPS = 20


def activations_graph() -> Graph:
    b = GraphBuilder(np.random.default_rng(5))
    x = b.tensor("x", SHAPE, quant=q(0.05, -3))
    outs = []

    def op(kind: OpKind, ins: tuple[int, ...], name: str, quant, dtype=I16) -> int:
        y = b.tensor(name, SHAPE, dtype, quant=quant)
        options = FusedActivationOptions(Activation.NONE) if kind is OpKind.SUB else NoOptions()
        b.op(kind, ins, (y,), options)
        outs.append(y)
        return y

    x16 = op(OpKind.QUANTIZE, (x,), "quantize s8->s16", q(1 / 2000))
    x16p = op(OpKind.QUANTIZE, (x,), "quantize s8->s16 (2^-12)", q(2.0**-12))
    sig = op(OpKind.LOGISTIC, (x16,), "logistic s16", q(2.0**-15))
    tnh = op(OpKind.TANH, (x16,), "tanh s16", q(2.0**-15))
    op(OpKind.LOGISTIC, (x16p,), "logistic s16 (pot)", q(2.0**-15))
    op(OpKind.TANH, (x16p,), "tanh s16 (pot)", q(2.0**-15))
    op(OpKind.SUB, (sig, tnh), "sub s16", q(7e-5, 11))
    x32 = op(OpKind.QUANTIZE, (x16,), "quantize s16->s32", q(1e-5, 1000), I32)
    op(OpKind.QUANTIZE, (x32,), "quantize s32->s8", q(0.04, -7), I8)
    return b.graph([x], outs, "sigmoid16_bench")


def measure(graph: Graph, board: str, backend: str, work: Path) -> list[tuple[str, int]]:
    rng = np.random.default_rng(1)
    x = [rng.integers(-128, 128, graph.tensors[t].shape).astype(np.int8) for t in graph.inputs]
    report = run_model(graph, board, [x], backend=backend, work_dir=work)
    want = reference.run(graph, x).outputs
    for got, ref in zip(report.runs[0].outputs, want, strict=True):
        if not np.array_equal(got, np.asarray(ref).reshape(got.shape)):
            raise SystemExit(f"{graph.name}: output differs from the reference")
    counts = dict(zip(report.op_indices, report.runs[0].latency.per_op, strict=True))
    return [(graph.tensors[op.outputs[0]].name, counts[i]) for i, op in enumerate(graph.ops)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--backend", default="compiled", choices=["compiled", "interpreter"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        elements = int(np.prod(SHAPE))
        for name, n in measure(activations_graph(), args.board, args.backend,
                               Path(tmp) / "act"):  # fmt: skip
            rows.append({"op": name, "instructions": n, "per": "element",
                         "per_unit": n / elements})  # fmt: skip
        lstm = lstm_graph(np.random.default_rng(3), 1, LSTM_STEPS, 32, 32)
        for name, n in measure(lstm, args.board, args.backend, Path(tmp) / "lstm"):
            rows.append({"op": f"lstm 1x{LSTM_STEPS}x32 state 32 ({name})", "instructions": n,
                         "per": "step", "per_unit": n / LSTM_STEPS})  # fmt: skip
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print(f"{r['op']:<40} {r['instructions']:>10}  {r['per_unit']:8.2f} / {r['per']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
