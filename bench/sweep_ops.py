"""Issue 14's sweep for the classes measured per element: pools (AVERAGE_POOL_2D, MAX_POOL_2D,
MEAN) and elementwise (ADD, SUB, MUL, with and without broadcast).

Random shapes (seeded) are built as graphs of independent one-op branches (at most 16 model
inputs and outputs per graph: the protocol firmware's limit), run through the compiled backend
on a QEMU board with exact per-op instruction counts, and every output is compared with the
NumPy reference. One row per op: class, shape, elements (the issue's wording: input elements;
for a binary op the elements of both operands, e.g. n + 1 for a scalar broadcast, 2n for the
same shape), output_elements and instructions; the floor is 6 instructions per input element.

Used by `python bench/kernels.py --sweep`; numbers, not pass/fail.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from graph_builder import I32, GraphBuilder
from reference_single_op import q
from tinyhost import reference
from tinyhost.deploy.runner import run_model
from tinyhost.ir import (
    Activation,
    FusedActivationOptions,
    Graph,
    OpKind,
    Padding,
    Pool2DOptions,
    ReducerOptions,
)

ELEMENT_FLOOR = 6.0  # instructions per element (issue 14)
MAX_IO = 16  # th_model.h: model inputs / outputs the protocol firmware describes
_MAX_ELEMENTS = 40_000


def _pool(b: GraphBuilder, rng: np.random.Generator) -> tuple[int, int, str, int, int]:
    """One pool or MEAN branch: (input, output, shape text, input elements, output
    elements)."""
    while True:
        h, w, c = int(rng.integers(2, 49)), int(rng.integers(2, 49)), int(rng.integers(1, 65))
        if h * w * c <= _MAX_ELEMENTS:
            break
    quant = q(float(rng.uniform(0.01, 0.1)), int(rng.integers(-128, 128)))
    x = b.tensor("x", (1, h, w, c), quant=quant)
    kind = rng.choice(["avg", "max", "mean"])
    if kind == "mean":
        keep = bool(rng.integers(0, 2))
        axes = b.tensor("axes", (2,), I32, np.array([1, 2], np.int32))
        y = b.tensor("y", (1, 1, 1, c) if keep else (1, c),
                     quant=q(float(rng.uniform(0.01, 0.1)), int(rng.integers(-128, 128))))
        b.op(OpKind.MEAN, (x, axes), (y,), ReducerOptions(keep))
        return x, y, f"mean {h}x{w}x{c}", h * w * c, c
    glob = rng.integers(0, 4) == 0  # a quarter: the whole plane (global pooling)
    kh, kw = (h, w) if glob else (int(rng.integers(2, min(h, 7) + 1)),
                                  int(rng.integers(2, min(w, 7) + 1)))  # fmt: skip
    stride = 1 if glob else int(rng.integers(1, 4))
    padding = Padding.VALID if glob else Padding(int(rng.integers(0, 2)))
    if padding is Padding.SAME:
        oh, ow = -(-h // stride), -(-w // stride)
    else:
        oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    y = b.tensor("y", (1, oh, ow, c), quant=quant)
    op = OpKind.AVERAGE_POOL_2D if kind == "avg" else OpKind.MAX_POOL_2D
    b.op(op, (x,), (y,), Pool2DOptions(padding, stride, stride, kh, kw))
    return (x, y, f"{kind}pool {h}x{w}x{c} k{kh}x{kw} s{stride} {padding.name.lower()}",
            h * w * c, oh * ow * c)


def _elementwise(b: GraphBuilder, rng: np.random.Generator
                 ) -> tuple[tuple[int, int], int, str, int, int]:  # fmt: skip
    """One ADD / SUB / MUL branch: (inputs, output, shape text, input elements of both
    operands, output elements)."""
    while True:
        h, w, c = int(rng.integers(1, 41)), int(rng.integers(1, 41)), int(rng.integers(1, 65))
        if h * w * c <= _MAX_ELEMENTS:
            break
    shape = (1, h, w, c)
    form = rng.choice(["same", "channel", "scalar", "spatial"])
    other = {"same": shape, "channel": (1, 1, 1, c), "scalar": (1, 1, 1, 1),
             "spatial": (1, h, w, 1)}[form]  # fmt: skip
    kind = rng.choice([OpKind.ADD, OpKind.SUB, OpKind.MUL])

    def quant() -> object:
        return q(float(rng.uniform(0.01, 0.2)), int(rng.integers(-128, 128)))

    a = b.tensor("a", shape, quant=quant())
    o = b.tensor("b", other, quant=quant())
    y = b.tensor("y", shape, quant=quant())
    act = Activation.RELU6 if rng.integers(0, 4) == 0 else Activation.NONE
    b.op(kind, (a, o), (y,), FusedActivationOptions(act))
    text = f"{kind.name.lower()} {h}x{w}x{c} {form}" + (" relu6" if act is not Activation.NONE
                                                        else "")  # fmt: skip
    return (a, o), y, text, h * w * c + int(np.prod(other)), h * w * c


def _graphs(make: Callable, count: int, inputs_per_op: int, seed: int
            ) -> list[tuple[Graph, list[tuple[str, int, int]]]]:  # fmt: skip
    """`count` branches made by `make`, packed into graphs within the I/O limit."""
    rng = np.random.default_rng(seed)
    per_graph = MAX_IO // inputs_per_op
    out = []
    for start in range(0, count, per_graph):
        b = GraphBuilder(rng)
        ins, outs, rows = [], [], []
        for _ in range(min(per_graph, count - start)):
            x, y, text, elements, out_elements = make(b, rng)
            ins.extend(x if isinstance(x, tuple) else (x,))
            outs.append(y)
            rows.append((text, elements, out_elements))
        out.append((b.graph(ins, outs, f"sweep_{len(out)}"), rows))
    return out


def sweep_ops(seed: int, per_class: int, board: str, work: Path,
              classes: frozenset[str] | None = None) -> list[dict]:
    """Rows (class, shape, macs 0, elements, output_elements, instructions, floor) for pools
    and elementwise (`classes`: only these); raises SystemExit when a device output differs
    from the reference."""
    rows = []
    for kind, make, inputs_per_op in (("pool", _pool, 1), ("elementwise", _elementwise, 2)):
        if classes is not None and kind not in classes:
            continue
        for n, (graph, shapes) in enumerate(_graphs(make, per_class, inputs_per_op,
                                                    seed * 1000 + len(kind))):  # fmt: skip
            rng = np.random.default_rng(seed + n)
            x = [rng.integers(-128, 128, graph.tensors[t].shape).astype(np.int8)
                 for t in graph.inputs]  # fmt: skip
            report = run_model(graph, board, [x], backend="compiled",
                               work_dir=work / f"{kind}-{n}")  # fmt: skip
            want = reference.run(graph, x).outputs
            for i, (got, ref) in enumerate(zip(report.runs[0].outputs, want, strict=True)):
                if not np.array_equal(got, np.asarray(ref).reshape(got.shape)):
                    raise SystemExit(f"{kind} {shapes[i][0]}: output differs from reference")
            counts = dict(zip(report.op_indices, report.runs[0].latency.per_op, strict=True))
            for i, (text, elements, out_elements) in enumerate(shapes):
                rows.append({"class": kind, "shape": text, "macs": 0, "elements": elements,
                             "output_elements": out_elements,
                             "instructions": counts[i], "floor": None,
                             "element_floor": ELEMENT_FLOOR})  # fmt: skip
    return rows

