"""int16 LOGISTIC, TANH and SUB and int32 QUANTIZE on the device: QUANTIZE int8 -> int16
(one general scale, one power of two: both Prepare paths), LOGISTIC and TANH (the generated
sigmoid table passed as a constant), SUB (same shape with zero points, and a per-channel
constant broadcast), QUANTIZE back to int8, and int8 / int16 -> int32 -> int8 / int16; every
op's output a model output, bit-exact with the reference (itself checked against TFLite Micro
on the same graph) through both backends on the host board and QEMU mps2-an386."""

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
from tinyhost import reference
from tinyhost.ir import Activation, FusedActivationOptions, Graph, NoOptions, OpKind

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_int16_activations_on_device"
I8, I16, I32 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)
SHAPE = (1, 8, 8, 4)


def int16_activations_graph() -> Graph:
    b = GraphBuilder(np.random.default_rng(17))
    x = b.tensor("x", SHAPE, quant=q(0.05, -3))
    outs = []

    def unary(kind: OpKind, u: int, name: str, quant, dtype=I16) -> int:
        y = b.tensor(name, SHAPE, dtype, quant=quant)
        b.op(kind, (u,), (y,), NoOptions())
        outs.append(y)
        return y

    def sub(u: int, v: int, name: str, quant, act: Activation = Activation.NONE) -> int:
        y = b.tensor(name, SHAPE, I16, quant=quant)
        b.op(OpKind.SUB, (u, v), (y,), FusedActivationOptions(act))
        outs.append(y)
        return y

    x16 = unary(OpKind.QUANTIZE, x, "x16", q(1 / 2000))  # the multiplier path
    x16p = unary(OpKind.QUANTIZE, x, "x16_pot", q(2.0**-12))  # the power-of-two path
    sig = unary(OpKind.LOGISTIC, x16, "logistic", q(2.0**-15))
    tnh = unary(OpKind.TANH, x16, "tanh", q(2.0**-15))
    unary(OpKind.LOGISTIC, x16p, "logistic_pot", q(2.0**-15))
    unary(OpKind.TANH, x16p, "tanh_pot", q(2.0**-15))
    d = sub(sig, tnh, "sig_minus_tanh", q(7e-5, 11))
    c = b.tensor("c", (1, 1, 1, 4), I16, np.array([-9000, 0, 123, 32767], np.int16),
                 q(3e-4, 0))  # fmt: skip
    sub(x16, c, "x16_minus_c", q(9e-4, -4), Activation.RELU)
    unary(OpKind.QUANTIZE, d, "y8", q(0.01, 2), I8)
    x32 = unary(OpKind.QUANTIZE, x16, "x16_to_s32", q(1e-5, 1000), I32)
    unary(OpKind.QUANTIZE, x32, "s32_to_s8", q(0.04, -7), I8)
    unary(OpKind.QUANTIZE, x32, "s32_to_s16", q(3e-4, 12), I16)
    unary(OpKind.QUANTIZE, x, "s8_to_s32", q(0.002, -50), I32)
    return b.graph([x], outs, "int16_activations")


def test_graph_reference_matches_tflm() -> None:
    graph = int16_activations_graph()
    x = int8_inputs(graph, 4)
    assert_reference_matches_tflm(graph, x)
    outs = reference.run(graph, x).outputs
    assert all(np.unique(o).size > 20 for o in outs)  # values spread over each output


def _check(board: str, backend: str) -> None:
    graph = int16_activations_graph()
    assert_device_matches_reference(graph, int8_inputs(graph, 4), board, backend,
                                    BUILD / f"{board}-{backend}")


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_every_layer_bit_exact_on_the_host_board(backend: str) -> None:
    _check("host", backend)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_every_layer_bit_exact_on_qemu(backend: str) -> None:
    _check("mps2-an386", backend)
