"""Issue 14's per-element paths in one int8 graph, every layer bit-exact with the reference on
the host board and QEMU mps2-an386, both backends: AVERAGE_POOL_2D and MAX_POOL_2D with large
windows at stride 1 (their separable paths, scratch granted by plan/scratch.py), a strided
pool, MEAN over H and W, and ADD / SUB / MUL with the broadcast forms (same shape, per
channel, spatial (1, H, W, 1), scalar), with and without tables (small tensors), relu6 fused.

The graph is built in memory (tests/graph_builder.py); each op's output is a model output.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graph_builder import I32, GraphBuilder
from graph_on_device import (
    QEMU_BOARD_BACKENDS,
    assert_device_matches_reference,
    assert_reference_matches_tflm,
    int8_inputs,
)
from reference_single_op import q
from tinyhost.ir import (
    Activation,
    FusedActivationOptions,
    Graph,
    OpKind,
    Padding,
    Pool2DOptions,
    ReducerOptions,
)

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_pools_elementwise_on_device"
SHAPE = (1, 9, 10, 12)


def pools_elementwise_graph() -> Graph:
    rng = np.random.default_rng(23)
    b = GraphBuilder(rng)
    h, w, c = SHAPE[1:]
    x = b.tensor("x", SHAPE, quant=q(0.05, -3))
    s = b.tensor("s", (1, h, w, 1), quant=q(0.04, 9))
    ch = b.tensor("ch", (1, 1, 1, c), quant=q(0.03, -20))
    outs = []

    def pool(kind: OpKind, padding: Padding, stride: int, kh: int, kw: int, name: str,
             act: Activation = Activation.NONE) -> None:
        if padding is Padding.SAME:
            oh, ow = -(-h // stride), -(-w // stride)
        else:
            oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
        y = b.tensor(name, (1, oh, ow, c), quant=q(0.05, -3))
        b.op(kind, (x,), (y,), Pool2DOptions(padding, stride, stride, kh, kw, act))
        outs.append(y)

    pool(OpKind.AVERAGE_POOL_2D, Padding.SAME, 1, 5, 4, "avg_5x4_s1")
    pool(OpKind.AVERAGE_POOL_2D, Padding.VALID, 1, 3, 3, "avg_3x3_s1_relu6", Activation.RELU6)
    pool(OpKind.MAX_POOL_2D, Padding.SAME, 1, 4, 3, "max_4x3_s1")
    pool(OpKind.MAX_POOL_2D, Padding.VALID, 2, 5, 5, "max_5x5_s2")
    axes = b.tensor("axes", (2,), I32, np.array([1, 2], np.int32))
    m = b.tensor("mean", (1, 1, 1, c), quant=q(0.02, 5))
    b.op(OpKind.MEAN, (x, axes), (m,), ReducerOptions(True))
    outs.append(m)

    def binary(kind: OpKind, u: int, v: int, name: str,
               act: Activation = Activation.NONE) -> None:
        shape = tuple(np.broadcast_shapes(b.tensors[u].shape, b.tensors[v].shape))
        y = b.tensor(name, shape, quant=q(0.07, 4))
        b.op(kind, (u, v), (y,), FusedActivationOptions(act))
        outs.append(y)

    scalar = b.tensor("k", (1,), data=np.array([-57], np.int8), quant=q(0.06, 3))
    for kind in (OpKind.ADD, OpKind.SUB, OpKind.MUL):  # 16 outputs: the firmware's limit
        tag = kind.name.lower()
        binary(kind, x, s, f"{tag}_spatial")
        binary(kind, ch, x, f"{tag}_channel", Activation.RELU6)
        binary(kind, ch, scalar, f"{tag}_small")  # 12 elements: no tables
    binary(OpKind.ADD, x, scalar, "add_scalar")
    binary(OpKind.MUL, x, x, "mul_same", Activation.RELU)
    return b.graph([x, s, ch], outs, "pools_elementwise")


def test_graph_reference_matches_tflm() -> None:
    graph = pools_elementwise_graph()
    assert_reference_matches_tflm(graph, int8_inputs(graph, 6))


def _check(board: str, backend: str) -> None:
    graph = pools_elementwise_graph()
    assert_device_matches_reference(graph, int8_inputs(graph, 6), board, backend,
                                    BUILD / f"{board}-{backend}")


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_every_layer_bit_exact_on_the_host_board(backend: str) -> None:
    _check("host", backend)


@pytest.mark.parametrize(("board", "backend"), QEMU_BOARD_BACKENDS)
def test_every_layer_bit_exact_on_qemu(board: str, backend: str) -> None:
    _check(board, backend)


def random_average_pools_graph() -> tuple[Graph, list[str]]:
    """14 random AVERAGE_POOL_2D layers (issue 14's shapes: windows 2..15, strides 1..3,
    SAME / VALID, 1..64 channels, odd ones included), in pairs on one input (the first of a
    pair cannot be computed in place, the second can); then two global pools (6 and 3
    channels)."""
    rng = np.random.default_rng(1414)
    b = GraphBuilder(rng)
    ins, outs, names = [], [], []
    for i in range(7):  # 14 outputs: the firmware protocol takes 16
        kh, kw = int(rng.integers(2, 16)), int(rng.integers(2, 16))
        h, w = int(rng.integers(kh, kh + 12)), int(rng.integers(kw, kw + 12))
        c = int(rng.choice([1, 3, 4, 6, 9, 18, 33, 64]))
        x = b.tensor(f"x{i}", (1, h, w, c), quant=q(0.05, int(rng.integers(-20, 20))))
        ins.append(x)
        for j in range(2):
            stride = int(rng.integers(1, 4))
            padding = Padding.SAME if (i + j) % 2 else Padding.VALID
            if padding is Padding.SAME:
                oh, ow = -(-h // stride), -(-w // stride)
            else:
                oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
            name = f"avg {h}x{w}x{c} k{kh}x{kw} s{stride} {padding.name.lower()}"
            y = b.tensor(name, (1, oh, ow, c), quant=b.tensors[x].quant)
            act = Activation.RELU6 if i == 5 and j else Activation.NONE
            b.op(OpKind.AVERAGE_POOL_2D, (x,), (y,),
                 Pool2DOptions(padding, stride, stride, kh, kw, act))
            outs.append(y)
            names.append(name)
    for i, (h, w, c) in enumerate([(23, 17, 6), (5, 40, 3)]):  # global: AVG_GLOBAL(_SMALL)
        x = b.tensor(f"g{i}", (1, h, w, c), quant=q(0.05, 3 - 7 * i))
        name = f"avg {h}x{w}x{c} k{h}x{w} s1 valid"
        y = b.tensor(name, (1, 1, 1, c), quant=b.tensors[x].quant)
        b.op(OpKind.AVERAGE_POOL_2D, (x,), (y,), Pool2DOptions(Padding.VALID, 1, 1, h, w))
        ins.append(x)
        outs.append(y)
        names.append(name)
    return b.graph(ins, outs, "random_average_pools"), names


def test_random_average_pools_bit_exact_on_qemu_m4() -> None:
    """The DSP average pool paths (stride-1 spans over zero-padded column sums, strided rows
    with moved column sums, tails past a multiple of four, in place or not, global) on QEMU
    mps2-an386 through the compiled backend, every layer bit-exact with the reference, which
    matches TFLite Micro on the same inputs."""
    graph, names = random_average_pools_graph()
    assert any(" s1 " in n for n in names) and any(" s2 " in n or " s3 " in n for n in names)
    x = int8_inputs(graph, 14)
    assert_reference_matches_tflm(graph, x)
    assert_device_matches_reference(graph, x, "mps2-an386", "compiled",
                                    BUILD / "random-average-pools")
