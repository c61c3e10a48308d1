"""ADD, SUB and MUL in the broadcast forms of issue 14's fast paths (scalar broadcast through a
per-call output table, channel rows or columns, per-channel output tables from 224 rows,
spatial constants, the table-free small path), with and without a fused RELU6, in one int8 graph:
the reference agrees with TFLite Micro, and every
output is bit-exact with it on QEMU mps2-an386 (Cortex-M4, DSP paths) through the compiled
backend (its recorded kernel paths)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graph_builder import GraphBuilder
from graph_on_device import (
    assert_device_matches_reference,
    assert_reference_matches_tflm,
    int8_inputs,
)
from reference_single_op import q
from tinyhost.ir import Activation, FusedActivationOptions, Graph, OpKind

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_elementwise_fast_on_device"
BIG = (1, 12, 11, 40)  # 5280 elements: the table kernels, the scalar tables


def fast_forms_graph() -> Graph:
    b = GraphBuilder(np.random.default_rng(14))
    x = b.tensor("x", BIG, quant=q(0.05, -3))
    x2 = b.tensor("x2", BIG, quant=q(0.03, 100))
    s = b.tensor("s", (1, 1, 1, 1), quant=q(0.07, -128))
    c = b.tensor("c", (1, 1, 1, BIG[3]), quant=q(0.02, 12))
    p = b.tensor("p", BIG[:3] + (1,), quant=q(0.04, 127))
    t = b.tensor("t", (1, 3, 2, 5), quant=q(0.06, 7))  # small: no tables
    tc = b.tensor("tc", (1, 1, 1, 5), quant=q(0.05, -20))
    n = b.tensor("n", (1, 340, 3), quant=q(0.05, 30))  # 340 rows: a table per channel
    nc = b.tensor("nc", (3,), quant=q(0.01, -5))
    r = b.tensor("r", (1, 40, 3), quant=q(0.03, -60))  # short channel rows: repeated
    outs = []

    def binary(kind: OpKind, u: int, v: int, quant, act=Activation.NONE) -> None:
        shape = tuple(np.broadcast_shapes(b.tensors[u].shape, b.tensors[v].shape))
        y = b.tensor(f"{kind.name.lower()}{len(outs)}", shape, quant=quant)
        b.op(kind, (u, v), (y,), FusedActivationOptions(act))
        outs.append(y)

    binary(OpKind.ADD, x, s, q(0.08, 5))  # scalar
    binary(OpKind.SUB, s, x, q(0.06, -9), Activation.RELU6)
    binary(OpKind.MUL, x, s, q(0.2, 3))
    binary(OpKind.ADD, c, x, q(0.05, 0), Activation.RELU6)  # channel, C = 40
    binary(OpKind.SUB, x, c, q(0.07, -4))  # no clamp, 132 rows: down the columns
    binary(OpKind.MUL, x, c, q(0.01, -2), Activation.RELU6)
    binary(OpKind.ADD, x, p, q(0.09, 2))  # spatial
    binary(OpKind.SUB, p, x, q(0.08, 1), Activation.RELU6)
    binary(OpKind.MUL, p, x, q(0.03, 0))
    binary(OpKind.ADD, x, x2, q(0.06, -1), Activation.RELU6)  # same
    binary(OpKind.SUB, x2, x, q(0.05, 3))
    binary(OpKind.ADD, t, tc, q(0.1, -6), Activation.RELU6)  # small channel, no tables
    binary(OpKind.SUB, tc, t, q(0.08, 0))
    binary(OpKind.ADD, n, nc, q(0.04, 8))  # C = 3, 340 rows: per-channel output tables
    binary(OpKind.MUL, nc, n, q(0.003, -1), Activation.RELU6)
    binary(OpKind.SUB, nc, r, q(0.05, 2), Activation.RELU6)  # C = 3 rows repeated
    return b.graph([x, x2, s, c, p, t, tc, n, nc, r], outs, "elementwise_fast")


def test_fast_forms_bit_exact_on_qemu_m4() -> None:
    graph = fast_forms_graph()
    x = int8_inputs(graph, 3)
    assert_reference_matches_tflm(graph, x)
    assert_device_matches_reference(graph, x, "mps2-an386", "compiled", BUILD / "m4")
