"""LOG_SOFTMAX, L2_NORMALIZATION, CUMSUM, SUM and REDUCE_MAX in one int8 graph: every layer
bit-exact with the reference (itself checked against TFLite Micro here) on the host board and
QEMU mps2-an386 through both backends, and on mps2-an500 (Cortex-M7, interpreter) and
mps3-an547 (Cortex-M55, compiled).

Each op's output is a model output. Rows of 16 and 5 values, CUMSUM along an inner axis
(reversed) and the last one (exclusive), and one op reading another's output.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graph_builder import GraphBuilder
from graph_on_device import (
    assert_device_matches_reference,
    assert_reference_matches_tflm,
    int8_inputs,
)
from reference_single_op import q
from tinyhost.ir import (
    CumsumOptions,
    FusedActivationOptions,
    Graph,
    NoOptions,
    OpKind,
    ReducerOptions,
)

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_rowwise_on_device"
SHAPE = (1, 4, 5, 16)


def rowwise_graph() -> Graph:
    b = GraphBuilder(np.random.default_rng(50))
    x = b.tensor("x", SHAPE, quant=q(0.07, -5))
    r = b.tensor("r", (3, 5), quant=q(0.3, 10))
    outs = []

    def op(kind, src, quant, name, options=None, axis=None):
        y = b.tensor(name, b.tensors[src].shape, quant=quant)
        inputs = (src,)
        if axis is not None:
            a = b.tensor(f"{name}_axis", (1,), np.dtype(np.int32),
                         data=np.array([axis], np.int32))  # fmt: skip
            inputs = (src, a)
        b.op(kind, inputs, (y,), options or NoOptions())
        outs.append(y)
        return y

    ls = op(OpKind.LOG_SOFTMAX, x, q(16 / 256, 127), "log_softmax")
    op(OpKind.LOG_SOFTMAX, r, q(16 / 256, 127), "log_softmax_r")
    op(OpKind.L2_NORMALIZATION, x, q(1 / 128, 0), "l2norm", FusedActivationOptions())
    op(OpKind.L2_NORMALIZATION, r, q(1 / 128, 0), "l2norm_r", FusedActivationOptions())
    op(OpKind.CUMSUM, ls, q(0.5, 100), "cumsum_rev", CumsumOptions(False, True), axis=1)
    op(OpKind.CUMSUM, x, q(0.4, -7), "cumsum_excl", CumsumOptions(True, False), axis=-1)
    op(OpKind.CUMSUM, r, q(1.1, 3), "cumsum_r", CumsumOptions(), axis=0)
    for src, axes, keep, shape, quant, name in (
        (x, (1, 2), False, (1, 16), q(0.9, -20), "sum_hw"),
        (r, (0,), True, (1, 5), q(0.5, 4), "sum_r"),
    ):
        a = b.tensor(f"{name}_axes", (len(axes),), np.dtype(np.int32),
                     data=np.array(axes, np.int32))  # fmt: skip
        y = b.tensor(name, shape, quant=quant)
        b.op(OpKind.SUM, (src, a), (y,), ReducerOptions(keep))
        outs.append(y)
    for src, axes, keep, shape, name in ((x, (3,), True, (1, 4, 5, 1), "max_c"),
                                         (r, (0, 1), False, (), "max_r")):
        a = b.tensor(f"{name}_axes", (len(axes),), np.dtype(np.int32),
                     data=np.array(axes, np.int32))  # fmt: skip
        y = b.tensor(name, shape, quant=b.tensors[src].quant)
        b.op(OpKind.REDUCE_MAX, (src, a), (y,), ReducerOptions(keep))
        outs.append(y)
    return b.graph([x, r], outs, "rowwise")


def test_graph_reference_matches_tflm() -> None:
    graph = rowwise_graph()
    assert_reference_matches_tflm(graph, int8_inputs(graph, 7))


def _check(board: str, backend: str) -> None:
    graph = rowwise_graph()
    assert_device_matches_reference(graph, int8_inputs(graph, 7), board, backend,
                                    BUILD / f"{board}-{backend}")


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_every_layer_bit_exact_on_the_host_board(backend: str) -> None:
    _check("host", backend)


@pytest.mark.parametrize("board,backend", [
    ("mps2-an386", "interpreter"), ("mps2-an386", "compiled"), ("mps2-an500", "interpreter"),
    ("mps3-an547", "compiled"),
])  # fmt: skip
def test_every_layer_bit_exact_on_qemu(board: str, backend: str) -> None:
    _check(board, backend)
