"""Constant output channels (arith/constant_channels.py): found soundly, and the compiled
backend's live-channel convolutions bit-exact on the host board and QEMU.

Convolutions get near-dead channels (a tiny weight scale under a bias of 2^30), channels
their ReLU clamps away (a large negative bias) and borderline channels that are not constant
(their whole range spans two output steps), at random positions; the claim that a channel
is constant is checked against the reference on random and extreme inputs, and the compiled
model (which computes only the other channels) against the reference.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graph_builder import GraphBuilder
from reference_single_op import q
from tinyhost import reference
from tinyhost.arith.constant_channels import constant_channels
from tinyhost.boards import load_board
from tinyhost.codegen.compiled import generate
from tinyhost.deploy.runner import run_model
from tinyhost.ir import Activation, Conv2DOptions, Graph, Padding
from tinyhost.reference.executor import random_inputs

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_constant_channels"


def _layer(b: GraphBuilder, x: int, cout: int, k: int, dead: np.ndarray, clamped: np.ndarray,
           name: str) -> int:
    rng = b.rng
    cin = b.tensors[x].shape[3]
    weights = rng.integers(-127, 128, (cout, k, k, cin))
    scales = rng.uniform(0.002, 0.02, cout).astype(np.float32)
    scales[dead] = 1e-9  # multiplier ~2^-30: the bias decides the value
    bias = rng.integers(-3000, 3000, cout)
    bias[dead] = rng.choice([-(1 << 30), 1 << 30], int(dead.sum()))
    bias[clamped] = -(1 << 24)  # always below zero: ReLU clamps it
    # Borderline: not constant, but all-positive weights whose whole range moves the output
    # by about two steps between the all -128 and all 127 inputs (a loose bound fails here).
    border = ~dead & ~clamped & (rng.random(cout) < 0.3)
    weights[border] = np.abs(weights[border]) + 1
    span = 255 * np.abs(weights).reshape(cout, -1).sum(axis=1)
    scales[border] = (2.0 * 0.05 / (0.04 * span[border])).astype(np.float32)
    bias[border] = 0
    options = Conv2DOptions(Padding.SAME, 1, 1, activation=Activation.RELU)
    return b.conv(x, options, weights, scales, bias, q(0.05, -128), name)


def _graph(seed: int) -> tuple[Graph, list[int]]:
    """Three convolutions; the second has every channel constant."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder(rng)
    x = b.tensor("x", (1, 7, 6, 16), quant=q(0.04, 3))
    shapes = [(24, 1), (8, 3), (40, 3)]
    outputs = []
    for n, (cout, k) in enumerate(shapes):
        dead = rng.random(cout) < 0.3
        clamped = ~dead & (rng.random(cout) < 0.3)
        if n == 1:
            dead, clamped = np.ones(cout, bool), np.zeros(cout, bool)
        x = _layer(b, x, cout, k, dead, clamped, f"conv{n}")
        outputs.append(x)
    return b.graph([0], outputs, "constant_channels"), outputs


@pytest.mark.parametrize("seed", range(6))
def test_constant_channels_are_constant(seed: int) -> None:
    graph, outputs = _graph(seed)
    rng = np.random.default_rng(seed)
    x = random_inputs(graph, rng)[0]
    inputs = [x, np.full_like(x, -128), np.full_like(x, 127),
              np.where(rng.random(x.shape) < 0.5, -128, 127).astype(np.int8)]  # fmt: skip
    found = 0
    for op in graph.ops:
        cc = constant_channels(graph, op)
        assert cc is not None
        constant = np.setdiff1d(np.arange(cc.pixel.size), cc.live)
        found += constant.size
        # the claim holds for whatever the layer's input is: run the layer alone
        layer = Graph(graph.tensors, (op,), (op.inputs[0],), (op.outputs[0],))
        for sample in inputs:
            feed = sample if op.inputs[0] == 0 else np.resize(sample, graph.tensors[
                op.inputs[0]].shape).astype(np.int8)
            y = reference.run(layer, [feed]).outputs[0]
            assert np.all(y[..., constant] == cc.pixel[constant])
    assert found >= 8


def _run(board: str, seed: int) -> None:
    graph, _ = _graph(seed)
    g = generate(graph, load_board(board), "cc")
    assert "th_expand_channels_s8" in g.linked
    assert "all 8 channels constant" in g.model_c
    x = random_inputs(graph, np.random.default_rng(seed))
    report = run_model(graph, board, [x], backend="compiled", work_dir=BUILD / f"{board}-{seed}")
    for got, want in zip(report.runs[0].outputs, reference.run(graph, x).outputs):
        np.testing.assert_array_equal(got, np.asarray(want).reshape(got.shape))


@pytest.mark.parametrize("seed", [0, 1])
def test_live_channels_bit_exact_on_the_host_board(seed: int) -> None:
    _run("host", seed)


@pytest.mark.parametrize("seed", [2, 3])
def test_live_channels_bit_exact_on_qemu(seed: int) -> None:
    _run("mps2-an386", seed)
