"""ABS, RSQRT, ELU, ZEROS_LIKE, MINIMUM, MAXIMUM, SQUARED_DIFFERENCE, PRELU, DIV, FILL in one
int8 graph: every layer bit-exact with the reference on the host board and QEMU mps2-an386, both
backends.

The graph is built in memory (tests/graph_builder.py): each op's output is a model output,
so the device returns what every op wrote. Broadcasts: a [C] constant, a [1, 1, 1, C]
activation, per-channel PReLU alpha and a scalar.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graph_builder import GraphBuilder
from graph_on_device import (
    QEMU_BOARD_BACKENDS,
    assert_device_matches_reference,
    assert_reference_matches_tflm,
    int8_inputs,
)
from reference_single_op import q
from tinyhost.ir import Activation, FusedActivationOptions, Graph, NoOptions, OpKind

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_elementwise_unary_binary_on_device"
SHAPE = (1, 5, 6, 8)


def elementwise_graph() -> Graph:
    """x -> ABS, ELU, RSQRT(ABS), and binary ops over x, ABS and a [1,1,1,C] input c."""
    rng = np.random.default_rng(17)
    b = GraphBuilder(rng)
    x = b.tensor("x", SHAPE, quant=q(0.05, -3))
    c = b.tensor("c", (1, 1, 1, SHAPE[3]), quant=q(0.04, 7))
    outs = []

    def unary(kind: OpKind, src: int, quant, name: str) -> int:
        y = b.tensor(name, b.tensors[src].shape, quant=quant)
        b.op(kind, (src,), (y,), NoOptions())
        outs.append(y)
        return y

    def binary(kind: OpKind, u: int, v: int, quant, name: str) -> int:
        shape = tuple(np.broadcast_shapes(b.tensors[u].shape, b.tensors[v].shape))
        y = b.tensor(name, shape, quant=quant)
        options = FusedActivationOptions() if kind is OpKind.DIV else NoOptions()
        b.op(kind, (u, v), (y,), options)
        outs.append(y)
        return y

    a = unary(OpKind.ABS, x, q(0.03, -128), "abs")
    e = unary(OpKind.ELU, x, q(0.04, 20), "elu")
    unary(OpKind.RSQRT, a, q(0.02, -100), "rsqrt")
    unary(OpKind.ZEROS_LIKE, x, q(0.05, 9), "zeros")
    channels = SHAPE[3]
    k = b.tensor("k", (channels,), data=rng.integers(-128, 128, channels).astype(np.int8),
                 quant=q(0.05, -3))
    binary(OpKind.MAXIMUM, x, k, q(0.05, -3), "max_const")  # [C] constant broadcast
    binary(OpKind.MINIMUM, c, x, q(0.05, -3), "min_bcast")  # [1,1,1,C] first
    binary(OpKind.SQUARED_DIFFERENCE, x, e, q(0.2, -120), "sqdiff")  # same shape
    binary(OpKind.SQUARED_DIFFERENCE, c, a, q(0.1, -128), "sqdiff_bcast")
    alpha = b.tensor("alpha", (channels,), data=rng.integers(-128, 128, channels).astype(np.int8),
                     quant=q(0.01, 4))
    binary(OpKind.PRELU, x, alpha, q(0.06, 5), "prelu")  # per-channel alpha
    scalar = b.tensor("alpha1", (1,), data=np.array([-90], np.int8), quant=q(0.02, -128))
    binary(OpKind.PRELU, e, scalar, q(0.04, 0), "prelu_scalar")
    # DIV, fused RELU6: by an activation (zero divisors included) and by a [1,1,1,C] input
    y = b.tensor("div", SHAPE, quant=q(0.08, -10))
    b.op(OpKind.DIV, (x, e), (y,), FusedActivationOptions(Activation.RELU6))
    outs.append(y)
    binary(OpKind.DIV, a, c, q(0.3, 0), "div_bcast")
    dims = b.tensor("dims", (2,), np.dtype(np.int32), data=np.array([3, 5], np.int32))
    value = b.tensor("value", (), data=np.array(-77, np.int8), quant=q(0.1, 2))
    filled = b.tensor("fill", (3, 5), quant=q(0.1, 2))
    b.op(OpKind.FILL, (dims, value), (filled,), NoOptions())
    outs.append(filled)
    return b.graph([x, c], outs, "elementwise_unary_binary")


def test_graph_reference_matches_tflm() -> None:
    graph = elementwise_graph()
    assert_reference_matches_tflm(graph, int8_inputs(graph, 5))


def _check(board: str, backend: str) -> None:
    graph = elementwise_graph()
    assert_device_matches_reference(graph, int8_inputs(graph, 5), board, backend,
                                    BUILD / f"{board}-{backend}")


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_every_layer_bit_exact_on_the_host_board(backend: str) -> None:
    _check("host", backend)


@pytest.mark.parametrize(("board", "backend"), QEMU_BOARD_BACKENDS)
def test_every_layer_bit_exact_on_qemu(board: str, backend: str) -> None:
    _check(board, backend)
