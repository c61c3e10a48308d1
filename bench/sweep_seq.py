"""Issue 17's compute kernel classes for the sweep of bench/kernels.py: SVDF, LSTM
(UNIDIRECTIONAL_SEQUENCE_LSTM), 16x8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED (int16
activations, int8 weights, int64 bias) and packed-int4-weight CONV_2D / DEPTHWISE_CONV_2D /
FULLY_CONNECTED (int8 activations).

Random shapes (seeded) are built as one-op graphs with the test builders (tests/svdf_graphs.py,
tests/lstm_graphs.py, tests/graphs_16x8.py), merged into graphs of independent branches (at
most 16 model inputs and outputs: the protocol firmware's limit), run through the compiled
backend on a QEMU board with exact per-op instruction counts, and every output is compared
with the NumPy reference. One row per op: class, shape, MACs (tinyhost.ir.stats.op_macs) and
instructions.

Used by `python bench/kernels.py --sweep`; numbers, not pass/fail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from graph_builder import I32, GraphBuilder
from graphs_16x8 import conv_16x8, fc_16x8
from lstm_graphs import lstm_graph
from reference_single_op import q
from svdf_graphs import svdf_graph
from tinyhost import reference
from tinyhost.deploy.runner import run_model
from tinyhost.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    Graph,
    OpKind,
    Padding,
)
from tinyhost.ir.stats import op_macs

MAX_IO = 16  # th_model.h: model inputs / outputs the protocol firmware describes
_MAX_MACS = 300_000

Make = Callable[[np.random.Generator], tuple[Graph, str]]


def _svdf(rng: np.random.Generator) -> tuple[Graph, str]:
    batches, inp = int(rng.integers(1, 3)), int(rng.integers(8, 97))
    units, rank, memory = int(rng.integers(4, 33)), int(rng.integers(1, 3)), int(
        rng.integers(4, 17))
    g = svdf_graph(rng, batches, inp, units, rank, memory)
    return g, f"svdf b{batches} in{inp} u{units} r{rank} m{memory}"


def _lstm(rng: np.random.Generator) -> tuple[Graph, str]:
    batches, steps = int(rng.integers(1, 3)), int(rng.integers(1, 9))
    inp, state = int(rng.integers(4, 41)), int(rng.integers(4, 41))
    g = lstm_graph(rng, batches, steps, inp, state)
    return g, f"lstm b{batches} t{steps} in{inp} s{state}"


def _conv_shape(rng: np.random.Generator, depthwise: bool):
    h, w = int(rng.integers(3, 17)), int(rng.integers(3, 17))
    cin = int(rng.integers(1, 17))
    cout = cin * int(rng.integers(1, 3)) if depthwise else int(rng.integers(1, 33))
    k = int(rng.choice([1, 3, 5])) if not depthwise else int(rng.choice([3, 5]))
    stride = int(rng.integers(1, 3))
    padding = Padding(int(rng.integers(0, 2)))
    if padding is Padding.VALID and (k > h or k > w):
        padding = Padding.SAME
    return h, w, cin, cout, k, stride, padding


def _conv_text(kind: str, h, w, cin, cout, k, stride, padding) -> str:
    return f"{kind} {h}x{w}x{cin}->{cout} k{k} s{stride} {padding.name.lower()}"


def _conv_s16(depthwise: bool) -> Make:
    def make(rng: np.random.Generator) -> tuple[Graph, str]:
        h, w, cin, cout, k, stride, padding = _conv_shape(rng, depthwise)
        act = Activation.RELU if rng.integers(0, 3) == 0 else Activation.NONE
        g = conv_16x8(rng, (1, h, w, cin), cout, (k, k), depthwise=depthwise, stride=stride,
                      padding=padding, per_channel=bool(rng.integers(0, 2)), act=act)
        return g, _conv_text("dw_s16" if depthwise else "conv_s16", h, w, cin, cout, k,
                             stride, padding)
    return make


def _fc_s16(rng: np.random.Generator) -> tuple[Graph, str]:
    batches, depth, units = int(rng.integers(1, 3)), int(rng.integers(8, 513)), int(
        rng.integers(4, 97))
    g = fc_16x8(rng, batches, depth, units, per_channel=bool(rng.integers(0, 2)))
    return g, f"fc_s16 b{batches} {depth}->{units}"


def _pack_weights(g: Graph) -> Graph:
    """The op's weights (input 1) stored as packed int4."""
    w = g.ops[0].inputs[1]
    tensors = list(g.tensors)
    tensors[w] = replace(tensors[w], packed_int4=True)
    return replace(g, tensors=tuple(tensors))


def _w4(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-7, 8, shape).astype(np.int8)


def _conv_s4(depthwise: bool) -> Make:
    def make(rng: np.random.Generator) -> tuple[Graph, str]:
        h, w, cin, cout, k, stride, padding = _conv_shape(rng, depthwise)
        b = GraphBuilder(rng)
        x = b.tensor("x", (1, h, w, cin), quant=q(0.05, int(rng.integers(-20, 21))))
        if depthwise:
            options = DepthwiseConv2DOptions(padding, stride, stride, cout // cin)
            wshape = (1, k, k, cout)
        else:
            options = Conv2DOptions(padding, stride, stride)
            wshape = (cout, k, k, cin)
        scale = 0.05 * 0.04 * 7 * 40 * np.sqrt(k * k * (1 if depthwise else cin)) / 60
        y = b.conv(x, options, _w4(rng, wshape),
                   rng.uniform(0.02, 0.06, cout).astype(np.float32),
                   rng.integers(-200, 200, cout), q(float(scale), int(rng.integers(-10, 11))),
                   "conv")  # fmt: skip
        g = _pack_weights(b.graph([x], [y], "conv_s4"))
        return g, _conv_text("dw_s4" if depthwise else "conv_s4", h, w, cin, cout, k, stride,
                             padding)
    return make


def _fc_s4(rng: np.random.Generator) -> tuple[Graph, str]:
    batches, depth, units = int(rng.integers(1, 3)), int(rng.integers(8, 513)), int(
        rng.integers(4, 97))
    b = GraphBuilder(rng)
    x = b.tensor("x", (batches, depth), quant=q(0.05, int(rng.integers(-20, 21))))
    fw = b.tensor("fc_w", (units, depth), data=_w4(rng, (units, depth)), quant=q(0.03, 0))
    fb = b.tensor("fc_b", (units,), I32, rng.integers(-300, 300, units).astype(np.int32),
                  q(np.float32(0.05 * 0.03), 0))
    y = b.tensor("fc_y", (batches, units), quant=q(float(0.05 * 0.03 * 160 * np.sqrt(depth)
                                                          / 60), -4))  # fmt: skip
    b.op(OpKind.FULLY_CONNECTED, (x, fw, fb), (y,), FullyConnectedOptions())
    return _pack_weights(b.graph([x], [y], "fc_s4")), f"fc_s4 b{batches} {depth}->{units}"


CLASSES: tuple[tuple[str, Make], ...] = (
    ("svdf", _svdf),
    ("lstm", _lstm),
    ("conv_s16", _conv_s16(False)),
    ("dw_s16", _conv_s16(True)),
    ("fc_s16", _fc_s16),
    ("conv_s4", _conv_s4(False)),
    ("dw_s4", _conv_s4(True)),
    ("fc_s4", _fc_s4),
)


def merge(graphs: list[Graph], name: str) -> Graph:
    """Independent one-op graphs side by side in one graph (tensor indices shifted; names
    prefixed so they stay unique)."""
    tensors, ops, inputs, outputs = [], [], [], []
    for n, g in enumerate(graphs):
        base = len(tensors)

        def shift(i: int | None, base: int = base) -> int | None:
            return None if i is None else i + base

        tensors += [replace(t, name=f"b{n}_{t.name}") for t in g.tensors]
        ops += [replace(op, inputs=tuple(shift(i) for i in op.inputs),
                        outputs=tuple(shift(i) for i in op.outputs)) for op in g.ops]
        inputs += [i + base for i in g.inputs]
        outputs += [i + base for i in g.outputs]
    return Graph(tuple(tensors), tuple(ops), tuple(inputs), tuple(outputs), name=name)


def _draw(make: Make, rng: np.random.Generator) -> tuple[Graph, str]:
    while True:
        g, text = make(rng)
        if op_macs(g, g.ops[0]) <= _MAX_MACS:
            return g, text


def sweep_seq(seed: int, per_class: int, board: str, work: Path) -> list[dict]:
    """Rows (class, shape, macs, instructions, floor None) for the classes above; raises
    SystemExit when a device output differs from the reference."""
    rows = []
    for c, (kind, make) in enumerate(CLASSES):
        rng = np.random.default_rng(seed * 1000 + 100 + c)
        drawn = [_draw(make, rng) for _ in range(per_class)]
        for n in range(0, len(drawn), MAX_IO):
            chunk = drawn[n:n + MAX_IO]
            graph = merge([g for g, _ in chunk], f"sweep_{kind}_{n}")
            x = reference.random_inputs(graph, np.random.default_rng(seed + n))
            report = run_model(graph, board, [x], backend="compiled",
                               work_dir=work / f"{kind}-{n}")  # fmt: skip
            want = reference.run(graph, x).outputs
            for i, (got, ref) in enumerate(zip(report.runs[0].outputs, want, strict=True)):
                if not np.array_equal(got, np.asarray(ref).reshape(got.shape)):
                    raise SystemExit(f"{kind} {chunk[i][1]}: output differs from reference")
            counts = dict(zip(report.op_indices, report.runs[0].latency.per_op, strict=True))
            for i, (_, text) in enumerate(chunk):
                rows.append({"class": kind, "shape": text,
                             "macs": op_macs(graph, graph.ops[i]),
                             "instructions": counts[i], "floor": None})
    return rows
