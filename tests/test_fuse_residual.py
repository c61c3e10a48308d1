"""The fused residual ADD (codegen/fold.py fuse_residual_adds, compiled backend): the conv
producing one input of an ADD computes the ADD in bands of output rows and writes the sum
over the skip. Bit-exact with TFLite Micro (the reference, itself checked here against the
`tflite-micro` package, on every observable tensor) on the host board and QEMU mps2-an386
(DSP kernels); refused wherever one of its conditions fails; its plans pass the plan checker.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from graph_builder import GraphBuilder
from graph_on_device import assert_device_matches_reference, assert_reference_matches_tflm
from paths import SHARED_MODELS
from reference_single_op import q
from tinyhost.boards import load_board
from tinyhost.codegen.compiled import generate
from tinyhost.codegen.fold import fold_for_compiled, fuse_residual_adds, residual_refusal
from tinyhost.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FusedActivationOptions,
    Graph,
    OpKind,
    Padding,
    ResidualConv2DOptions,
)
from tinyhost.plan import PlanOptions, plan_memory
from tinyhost.plan.checker import check_plan
from tinyhost.plan.overlap import OverlapMode
from tinyhost.plan.patch import PatchRequest
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_fuse_residual"
RESNET = SHARED_MODELS / "mlperf_tiny" / "pretrainedResnet_quant.tflite"


class _Builder(GraphBuilder):
    def c(self, x: int, cout: int, k: tuple[int, int], stride: int = 1,
          padding: Padding = Padding.SAME, act: Activation = Activation.NONE,
          name: str = "conv") -> int:
        rng = self.rng
        cin = self.tensors[x].shape[3]
        options = Conv2DOptions(padding, stride, stride, activation=act)
        return self.conv(x, options, rng.integers(-127, 128, (cout, *k, cin)),
                         rng.uniform(0.002, 0.02, cout).astype(np.float32),
                         rng.integers(-3000, 3000, cout),
                         q(float(rng.uniform(0.03, 0.08)), int(rng.integers(-20, 20))),
                         name)  # fmt: skip

    def add(self, a: int, b: int, act: Activation = Activation.NONE, name: str = "add") -> int:
        shape = np.broadcast_shapes(self.tensors[a].shape, self.tensors[b].shape)
        y = self.tensor(name, tuple(shape),
                        quant=q(float(self.rng.uniform(0.05, 0.1)),
                                int(self.rng.integers(-20, 20))))  # fmt: skip
        self.op(OpKind.ADD, (a, b), (y,), FusedActivationOptions(act))
        return y


def _residual_graph() -> tuple[Graph, int]:
    """Three residual blocks (9x7 input, 6 channels, not a multiple of 4): 3x3 stride 1 with
    a ReLU on the ADD and the conv as the ADD's second input; a stride-2 block whose 1x1
    stride-2 shortcut conv is fused (the conv as the first input); a 5x3 (general kernel)
    conv over a 1x1's output, ReLU6 on the ADD. Every tensor that stays observable (not a
    fused conv's output, not an overwritten skip) is a model output. Returns (graph,
    expected number of fusions)."""
    b = _Builder(np.random.default_rng(18))
    x = b.tensor("x", (1, 9, 7, 6), quant=q(0.05, 3))
    a0 = b.c(x, 6, (3, 3), name="a0")  # the skip of block A
    am = b.c(a0, 6, (3, 3), act=Activation.RELU, name="am")
    a1 = b.c(am, 6, (3, 3), name="a1")
    add1 = b.add(a0, a1, Activation.RELU, "add1")
    b1 = b.c(add1, 10, (3, 3), stride=2, act=Activation.RELU, name="b1")
    b2 = b.c(b1, 10, (3, 3), name="b2")  # the skip of block B
    sc = b.c(add1, 10, (1, 1), stride=2, padding=Padding.VALID, name="shortcut")
    add2 = b.add(sc, b2, name="add2")
    c0 = b.c(add2, 10, (1, 1), act=Activation.RELU, name="c0")
    c1 = b.c(c0, 10, (5, 3), name="c1")
    add3 = b.add(c1, add2, Activation.RELU6, "add3")
    return b.graph([x], [add1, b1, c0, add3], "residual_blocks"), 3


def _observable(graph: Graph, dying_inputs: bool = False) -> Graph:
    """`graph` with every tensor a fusion keeps as a model output too (with `dying_inputs`
    but the fused convs' inputs, so that they die at the fused op and their dead rows can
    hold the staging)."""
    fused = fold_for_compiled(graph, fuse_residual=True)
    hidden = {graph.ops[f.conv].outputs[0] for f in fused.fused} | {f.skip for f in fused.fused}
    if dying_inputs:
        hidden |= {graph.ops[f.conv].inputs[0] for f in fused.fused}
    outs = [t for op in graph.ops for t in op.outputs if t not in hidden]
    return replace(graph, outputs=tuple(dict.fromkeys([*outs, *graph.outputs])))


def _inputs(graph: Graph, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, graph.tensors[i].shape).astype(np.int8)
            for i in graph.inputs]  # fmt: skip


def test_residual_blocks_fuse_and_match_tflm_on_host_and_qemu() -> None:
    graph, expected = _residual_graph()
    graph = _observable(graph)
    board = load_board("mps2-an386")
    g = generate(graph, board, "residual_blocks", fuse_residual="on")
    assert len(g.folded.fused) == expected
    assert {(f.conv, f.add) for f in g.folded.fused} == {(2, 3), (6, 7), (9, 10)}
    assert "th_conv_general_s8" in g.linked and "th_conv_1x1_s8" in g.linked
    assert not check_plan(g.plan)
    x = _inputs(graph, 7)
    assert_reference_matches_tflm(graph, x)
    for name in ("host", "mps2-an386"):
        assert_device_matches_reference(graph, x, name, "compiled", BUILD / f"blocks-{name}",
                                        fuse_residual="on")


@pytest.mark.skipif(not RESNET.is_file(), reason="shared models not present")
def test_resnet_fused_matches_tflm_every_observable_layer_on_host_and_qemu() -> None:
    """Twice: every tensor the fusion leaves observable a model output (the staging in the
    planned scratch), and the fused convs' inputs hidden as well (the 32-row layer's staging
    then moves into its dead input rows: 7 bands instead of 32)."""
    board = load_board("mps2-an386")
    for dying in (False, True):
        graph = _observable(read_model(RESNET), dying)
        g = generate(graph, board, "resnet", fuse_residual="on")
        assert len(g.folded.fused) == 3 and ("bands[7][3]" in g.model_c) == dying
        x = _inputs(graph, 3)
        assert_reference_matches_tflm(graph, x)
        for name in ("host", "mps2-an386"):
            assert_device_matches_reference(graph, x, name, "compiled",
                                            BUILD / f"resnet-{name}-{dying}",
                                            fuse_residual="on")


@pytest.mark.skipif(not RESNET.is_file(), reason="shared models not present")
def test_resnet_fused_plan_is_checked_and_smaller() -> None:
    graph = read_model(RESNET)
    fused = fold_for_compiled(graph, fuse_residual=True)
    assert [(f.conv, f.add) for f in fused.fused] == [(2, 3), (6, 7), (10, 11)]
    for options in (PlanOptions(), PlanOptions(dsp=False), PlanOptions(alignment=16)):
        plan = plan_memory(fused.graph, options=options)
        assert not check_plan(plan)
        modes = [u.mode for u in plan.overlaps]
        assert modes.count(OverlapMode.RESIDUAL) == 3
        unfused = plan_memory(fold_for_compiled(graph).graph, options=options)
        assert plan.arena_bytes < unfused.arena_bytes
    board = load_board("mps2-an386")
    auto, off = generate(graph, board, "r"), generate(graph, board, "r", fuse_residual="off")
    assert (auto.arena_bytes, off.arena_bytes) == (33_856, 33_888)
    assert len(auto.folded.fused) == 3 and not off.folded.fused


@pytest.mark.skipif(not RESNET.is_file(), reason="shared models not present")
def test_auto_keeps_only_free_or_arena_lowering_fusions() -> None:
    """auto drops a fusion run in several bands (extra conv calls) unless dropping it grows
    the arena; on keeps every one; a fusion in one band is always kept."""
    board = load_board("mps2-an386")
    blocks = _observable(_residual_graph()[0])
    for graph, dropped in ((_observable(read_model(RESNET), True), {2, 6}), (blocks, set())):
        on = generate(graph, board, "m", fuse_residual="on")
        auto = generate(graph, board, "m", fuse_residual="auto")
        off = generate(graph, board, "m", fuse_residual="off")
        kept = {f.conv for f in auto.folded.fused}
        several = {c for c, n in on.residual_bands if n > 1}
        assert {c for c, n in on.residual_bands if n == 1} <= kept
        assert {f.conv for f in on.folded.fused} - kept == dropped
        assert dropped <= several  # only fusions that cost calls are dropped
        assert auto.arena_bytes <= on.arena_bytes
        if several & kept:  # kept although it costs calls: it lowers the arena
            assert auto.arena_bytes < off.arena_bytes


# ------------------------------------------------------------- refused where it must be


def _one_block(shape=(1, 6, 5, 4), skip_shape=None, extra: str = "") -> tuple[Graph, int]:
    """x -> s = conv(x) (the skip) -> m = conv(s) -> y = conv(m) -> ADD(s, y), with `extra`
    breaking one condition. Returns (graph, the ADD's op index)."""
    b = _Builder(np.random.default_rng(5))
    x = b.tensor("x", shape, quant=q(0.05, 0))
    s = b.c(x, shape[3], (3, 3), name="s")
    skip = s
    if skip_shape is not None:  # a broadcast skip: 1x1 spatially
        skip = b.c(x, shape[3], (shape[1], shape[2]), padding=Padding.VALID, name="pooled")
    m = b.c(s, shape[3], (3, 3), name="m")
    conv_in = skip if extra == "conv_reads_skip" else m
    if extra == "depthwise":
        o = DepthwiseConv2DOptions(Padding.SAME, 1, 1)
        y = b.conv(conv_in, o, b.rng.integers(-127, 128, (1, 3, 3, shape[3])),
                   np.full(shape[3], 0.01, np.float32), np.zeros(shape[3]), q(0.05, 1), "dw")
    else:
        y = b.c(conv_in, shape[3], (3, 3), name="y")
    out = b.add(skip, y)
    outputs = [out]
    if extra == "conv_output_read":
        outputs.append(b.c(y, 2, (1, 1), name="other"))
    if extra == "conv_output_is_output":
        outputs.append(y)
    if extra == "skip_read_after":
        outputs.append(b.c(skip, 2, (1, 1), name="later"))
    if extra == "skip_is_output":
        outputs.append(skip)
    add_index = next(i for i, op in enumerate(b.ops) if op.kind is OpKind.ADD)
    return b.graph([x], outputs, "block"), add_index


def _refusal(graph: Graph, index: int) -> int | str:
    readers = graph.readers()
    producer = {t: i for i, op in enumerate(graph.ops) for t in op.outputs}
    return residual_refusal(graph, index, readers, producer)


def test_the_plain_block_fuses() -> None:
    graph, index = _one_block()
    assert _refusal(graph, index) == index - 1
    fused, _, pairs = fuse_residual_adds(graph)
    assert pairs and isinstance(fused.ops[-1].options, ResidualConv2DOptions)


@pytest.mark.parametrize(("extra", "kwargs", "reason"), [
    ("conv_output_read", {}, "other readers"),
    ("conv_output_is_output", {}, "other readers"),
    ("skip_read_after", {}, "read after the ADD"),
    ("skip_is_output", {}, "read after the ADD"),
    ("conv_reads_skip", {}, "reads the skip"),
    ("depthwise", {}, "not produced by a CONV_2D"),
    ("", {"skip_shape": (1, 1, 1, 4)}, "broadcast"),
])  # fmt: skip
def test_fusion_refused_when_a_condition_fails(extra: str, kwargs: dict, reason: str) -> None:
    graph, index = _one_block(extra=extra, **kwargs)
    why = _refusal(graph, index)
    assert isinstance(why, str) and reason in why, why
    assert not fuse_residual_adds(graph)[2]
    assert not fold_for_compiled(graph, fuse_residual=True).fused


def test_fusion_refused_for_a_row_of_padding_only() -> None:
    b = _Builder(np.random.default_rng(9))
    x = b.tensor("x", (1, 4, 5, 4), quant=q(0.05, 0))
    skip = b.tensor("skip", (1, 5, 5, 4), quant=q(0.04, 2))
    y = b.c(x, 4, (3, 3), padding=Padding.VALID, name="y")
    # a PAD of 3 rows folded in on top of a 3x3 window: output row 0 reads padding only
    b.tensors[y] = replace(b.tensors[y], shape=(1, 5, 5, 4))
    conv = b.ops[-1]
    b.ops[-1] = replace(conv, options=replace(conv.options, explicit_padding=(3, 0, 1, 1)))
    b.add(skip, y)
    graph = b.graph([x, skip], [len(b.tensors) - 1], "padded")
    why = _refusal(graph, 1)
    assert isinstance(why, str) and "padding only" in why, why


def test_fusion_off_and_patched_stages_keep_the_add() -> None:
    graph, _ = _residual_graph()
    board = load_board("mps2-an386")
    assert not generate(graph, board, "m", fuse_residual="off").folded.fused
    patched = generate(graph, board, "m", patch=PatchRequest(tiles=2))
    assert patched.patched is not None and not patched.folded.fused
