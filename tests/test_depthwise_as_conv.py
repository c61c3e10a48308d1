"""A one-channel DEPTHWISE_CONV_2D runs as a CONV_2D with Cin = 1 (codegen.fold,
depthwise_as_conv): the rewrite keeps the reference bit-exact on every tensor, happens only
for one-channel inputs, and both backends run the rewritten layers bit-exact on the host board
and on QEMU mps2-an386 (DSP kernels) against the reference of the original graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graph_builder import GraphBuilder
from reference_single_op import q
from tinyhost import reference
from tinyhost.codegen.fold import depthwise_as_conv
from tinyhost.deploy.runner import run_model
from tinyhost.ir import DepthwiseConv2DOptions, Graph, OpKind, Padding
from tinyhost.reference.executor import random_inputs

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_depthwise_as_conv"

# (input h, w, kernel, stride, dilation, padding, multiplier): audio-like and image-like
# first layers, micro_speech's 10x8 stride-2 layer among them
CASES = [
    (49, 40, (10, 8), 2, 1, Padding.SAME, 8),
    (20, 16, (3, 3), 1, 1, Padding.VALID, 16),
    (17, 13, (5, 3), 2, 2, Padding.SAME, 3),
    (12, 1, (4, 1), 1, 1, Padding.SAME, 32),
]


def _graph(seed: int, channels: int = 1) -> Graph:
    """Each case as an independent one-op branch of one graph (every input one channel, and
    one extra branch with `channels` channels when that is more than one)."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder(rng)
    inputs, outputs = [], []
    cases = CASES if channels == 1 else CASES[:1]
    for n, (h, w, k, stride, dilation, padding, mult) in enumerate(cases):
        x = b.tensor(f"x{n}", (1, h, w, channels), quant=q(0.05, int(rng.integers(-128, 128))))
        cout = channels * mult
        options = DepthwiseConv2DOptions(padding, stride, stride, mult, dilation, dilation)
        weights = rng.integers(-127, 128, (1, *k, cout))
        scales = rng.uniform(0.002, 0.02, cout).astype(np.float32)
        bias = rng.integers(-3000, 3000, cout)
        y = b.conv(x, options, weights, scales, bias, q(0.08, int(rng.integers(-128, 128))),
                   f"dw{n}")  # fmt: skip
        inputs.append(x)
        outputs.append(y)
    return b.graph(inputs, outputs, f"dw_one_channel_{seed}")


def test_rewrite_is_a_conv_and_keeps_every_tensor() -> None:
    graph = _graph(0)
    conv = depthwise_as_conv(graph)
    assert [op.kind for op in conv.ops] == [OpKind.CONV_2D] * len(CASES)
    for seed in range(3):
        x = random_inputs(graph, np.random.default_rng(seed))
        want = reference.run(graph, x, keep_intermediates=True)
        got = reference.run(conv, x, keep_intermediates=True)
        for t in range(len(graph.tensors)):
            if graph.tensors[t].data is None:
                np.testing.assert_array_equal(got.tensors[t], want.tensors[t])


def test_only_one_channel_inputs_are_rewritten() -> None:
    graph = _graph(1, channels=3)
    assert depthwise_as_conv(graph) is graph


@pytest.mark.parametrize("board", ["host", "mps2-an386"])
@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_rewritten_layers_bit_exact_on_device(board: str, backend: str) -> None:
    graph = _graph(2)
    xs = [random_inputs(graph, np.random.default_rng(s)) for s in range(2)]
    report = run_model(graph, board, xs, backend=backend,
                       work_dir=BUILD / f"{board}-{backend}")  # fmt: skip
    for run, x in zip(report.runs, xs, strict=True):
        for got, want in zip(run.outputs, reference.run(graph, x).outputs, strict=True):
            np.testing.assert_array_equal(got, np.asarray(want).reshape(got.shape))


def test_plan_shows_the_arena_convert_uses(tmp_path: Path, capsys) -> None:
    """`tinyhost plan` plans the graph the backends run (the rewrite in place): its arena is
    the interpreter's before the firmware's 16-byte rounding."""
    import json

    from tinyhost.boards import load_board
    from tinyhost.cli import main
    from tinyhost.codegen.interpreter import size_model
    from tinyhost.tflite.writer import write_model_file

    graph = _graph(3)
    path = tmp_path / "dw1.tflite"
    write_model_file(graph, path)
    assert main(["plan", str(path), "--board", "mps2-an386", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)["arena_bytes"]
    sized = size_model(graph, load_board("mps2-an386"))
    assert planned == sized.blob.arena_bytes
