"""PAD folded into the conv after it (codegen.fold, compiled backend): bit-exact, and only
where it is exact.

Graphs of independent PAD -> CONV_2D / DEPTHWISE_CONV_2D chains over random geometries
(asymmetric and large paddings, on top of SAME or VALID, every conv kernel variant) are run
through the reference before and after folding, and on the host board and QEMU mps2-an386
(DSP kernels) through the compiled backend, against the reference of the unfolded graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from graph_builder import I8, I32, GraphBuilder
from reference_single_op import q
from tinyhost import reference
from tinyhost.boards import load_board
from tinyhost.codegen.compiled import generate
from tinyhost.codegen.fold import fold_pads
from tinyhost.deploy.runner import run_model
from tinyhost.ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    Graph,
    NoOptions,
    OpKind,
    Padding,
)
from tinyhost.passes.validate import check_graph
from tinyhost.reference.executor import random_inputs

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_fold_pad"


@dataclass(frozen=True)
class Chain:
    depthwise: bool
    k: tuple[int, int]
    stride: int
    dilation: int
    padding: Padding
    pads: tuple[int, int, int, int]  # PAD's (top, bottom, left, right)
    cin: int
    cout: int  # depthwise: cin * multiplier


class _Builder(GraphBuilder):
    def chain(self, x: int, c: Chain, n: int, pad_kind: OpKind = OpKind.PAD,
              pad_value: int | None = None, extra_reader: bool = False) -> int:
        """PAD then the chain's conv; the conv's output (or with extra_reader, the padded
        tensor, to be made a model output)."""
        rng = self.rng
        _, h, w, cin = self.tensors[x].shape
        t, b, left, r = c.pads
        widths = np.array([[0, 0], [t, b], [left, r], [0, 0]], np.int32)
        inputs = [x, self.tensor(f"pads{n}", (4, 2), I32, widths)]
        if pad_value is not None:
            inputs.append(self.tensor(f"value{n}", (1,), I8, np.array([pad_value], np.int8)))
        padded = self.tensor(f"padded{n}", (1, h + t + b, w + left + r, cin),
                             quant=self.tensors[x].quant)  # fmt: skip
        self.op(pad_kind, tuple(inputs), (padded,), NoOptions())
        kh, kw = c.k
        options: Conv2DOptions | DepthwiseConv2DOptions
        if c.depthwise:
            shape = (1, kh, kw, c.cout)
            options = DepthwiseConv2DOptions(c.padding, c.stride, c.stride, c.cout // cin,
                                             c.dilation, c.dilation)  # fmt: skip
        else:
            shape = (c.cout, kh, kw, cin)
            options = Conv2DOptions(c.padding, c.stride, c.stride, c.dilation, c.dilation)
        y = self.conv(padded, options, rng.integers(-127, 128, shape),
                      rng.uniform(0.002, 0.02, c.cout).astype(np.float32),
                      rng.integers(-2000, 2000, c.cout),
                      q(0.05, int(rng.integers(-10, 10))), f"conv{n}")  # fmt: skip
        return padded if extra_reader else y


def _random_chain(rng: np.random.Generator, cin: int) -> Chain:
    depthwise = bool(rng.integers(0, 2))
    k = [(1, 1), (3, 3), (3, 3), (5, 5), (1, 3), (3, 1), (2, 2)][int(rng.integers(0, 7))]
    stride = int(rng.integers(1, 3))
    dilation = 1 if rng.random() < 0.7 else 2
    padding = Padding.SAME if rng.random() < 0.5 else Padding.VALID
    pads = tuple(int(v) for v in rng.integers(0, 4, 4))
    cout = cin * int(rng.integers(1, 3)) if depthwise else int(rng.choice([4, 8, 6]))
    return Chain(depthwise, k, stride, dilation, padding, pads, cin, cout)  # type: ignore[arg-type]


def _graph(seed: int, chains: int) -> Graph:
    rng = np.random.default_rng(seed)
    b = _Builder(rng)
    x8 = b.tensor("x8", (1, 9, 11, 8), quant=q(0.03, 5))
    x3 = b.tensor("x3", (1, 12, 10, 3), quant=q(0.02, -7))  # few input channels path
    outputs = []
    for n in range(chains):
        x = x3 if n % 3 == 2 else x8
        outputs.append(b.chain(x, _random_chain(rng, b.tensors[x].shape[3]), n))
    return b.graph([x8, x3], outputs, "fold_pad")


@pytest.mark.parametrize("seed", range(40))
def test_folding_keeps_the_reference_bit_exact(seed: int) -> None:
    graph = _graph(seed, 6)
    folded = fold_pads(graph)
    assert len(folded.pads) == 6 and len(folded.graph.ops) == 6
    check_graph(folded.graph)
    x = random_inputs(graph, np.random.default_rng(seed))
    for want, got in zip(reference.run(graph, x).outputs, reference.run(folded.graph, x).outputs):
        np.testing.assert_array_equal(want, got)


def test_only_exact_folds_happen() -> None:
    rng = np.random.default_rng(7)
    b = _Builder(rng)
    x = b.tensor("x", (1, 6, 6, 4), quant=q(0.03, 5))
    same = Chain(False, (3, 3), 1, 1, Padding.VALID, (1, 1, 1, 1), 4, 8)
    kept = [
        b.chain(x, same, 0, OpKind.PADV2, pad_value=6),  # pads with 6, not the zero point 5
        b.chain(x, same, 1, extra_reader=True),  # the padded tensor is read again
    ]
    folded_ok = b.chain(x, same, 2, OpKind.PADV2, pad_value=5)  # PADV2 with the zero point
    graph = b.graph([x], [*kept, folded_ok], "fold_pad")
    folded = fold_pads(graph)
    assert [(f.pad, f.conv) for f in folded.pads] == [(4, 5)]
    out = generate(graph, load_board("host"), "fold")
    assert out.op_order == (0, 1, 2, 3, 5) and "th_pad_s8" in out.linked


def _run_folded(board: str, seed: int) -> None:
    graph = _graph(seed, 9)
    x = random_inputs(graph, np.random.default_rng(seed))
    report = run_model(graph, board, [x], backend="compiled",
                       work_dir=BUILD / f"{board}-{seed}")  # fmt: skip
    assert len(report.runs[0].latency.per_op) == 9  # the PADs do not run
    for got, want in zip(report.runs[0].outputs, reference.run(graph, x).outputs):
        np.testing.assert_array_equal(got, np.asarray(want).reshape(got.shape))


@pytest.mark.parametrize("seed", [1, 2])
def test_folded_pads_bit_exact_on_the_host_board(seed: int) -> None:
    _run_folded("host", seed)


@pytest.mark.parametrize("seed", [3, 4])
def test_folded_pads_bit_exact_on_qemu(seed: int) -> None:
    _run_folded("mps2-an386", seed)
