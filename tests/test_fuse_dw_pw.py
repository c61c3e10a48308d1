"""The fused depthwise -> pointwise pair (codegen/fold.py fuse_dw_pw, compiled backend): a
DEPTHWISE_CONV_2D whose output only a pointwise CONV_2D reads runs in bands of output rows
into staging, and the pointwise consumes each band; the depthwise output is never planned.
Bit-exact with TFLite Micro (the reference, itself checked here against the `tflite-micro`
package on every observable tensor) on the host board, QEMU mps2-an386 (DSP kernels) and
mps3-an547 (Helium);
the planner's arena for the fused op is what its live set needs; `auto` fuses where that
lowers the arena; the plan checker validates fused plans.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from graph_builder import GraphBuilder
from graph_on_device import assert_device_matches_reference, assert_reference_matches_tflm
from paths import SHARED_MODELS
from reference_single_op import q
from tinyhost.boards import load_board
from tinyhost.codegen.compiled import convert, generate
from tinyhost.codegen.fold import dwpw_refusal, fold_for_compiled
from tinyhost.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DwPwConv2DOptions,
    Graph,
    Padding,
)
from tinyhost.ir.stats import graph_stats
from tinyhost.plan import PlanOptions, plan_memory
from tinyhost.plan.checker import check_plan
from tinyhost.plan.overlap import OverlapMode
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_fuse_dw_pw"
VWW = SHARED_MODELS / "mlperf_tiny" / "vww_96_int8.tflite"


class _Builder(GraphBuilder):
    def pw(self, x: int, cout: int, act: Activation = Activation.NONE, name: str = "pw") -> int:
        rng = self.rng
        cin = self.tensors[x].shape[3]
        return self.conv(x, Conv2DOptions(Padding.VALID, 1, 1, activation=act),
                         rng.integers(-127, 128, (cout, 1, 1, cin)),
                         rng.uniform(0.002, 0.02, cout).astype(np.float32),
                         rng.integers(-3000, 3000, cout),
                         q(float(rng.uniform(0.03, 0.08)), int(rng.integers(-20, 20))),
                         name)  # fmt: skip

    def dw(self, x: int, k: tuple[int, int], stride: int = 1, padding: Padding = Padding.SAME,
           act: Activation = Activation.NONE, mult: int = 1, name: str = "dw") -> int:
        rng = self.rng
        c = self.tensors[x].shape[3] * mult
        options = DepthwiseConv2DOptions(padding, stride, stride, mult, activation=act)
        return self.conv(x, options, rng.integers(-127, 128, (1, *k, c)),
                         rng.uniform(0.005, 0.03, c).astype(np.float32),
                         rng.integers(-2000, 2000, c),
                         q(float(rng.uniform(0.03, 0.08)), int(rng.integers(-20, 20))),
                         name)  # fmt: skip


def _blocks_graph() -> Graph:
    """Four dw -> pw pairs on an odd plane (11x9, so two-row bands, and bands whose last is
    shorter): 3x3 stride 1 SAME with ReLU6 on the pointwise; 3x3 stride 2 SAME with ReLU6
    on the depthwise (the 3x3 kernel's stride-2 path); 5x3 stride 1 VALID (the general
    depthwise) with a multiplier of 2, its pointwise on host-widened int16 weights; 3x3
    stride 2 VALID. Each pair's pointwise output is a model output, so every fused op's
    result is observed."""
    b = _Builder(np.random.default_rng(31))
    x = b.tensor("x", (1, 11, 9, 6), quant=q(0.05, 3))
    d0 = b.dw(x, (3, 3), name="d0")
    p0 = b.pw(d0, 8, Activation.RELU6, name="p0")
    d1 = b.dw(p0, (3, 3), stride=2, act=Activation.RELU6, name="d1")
    p1 = b.pw(d1, 12, name="p1")
    d2 = b.dw(p1, (5, 3), padding=Padding.VALID, mult=2, name="d2")
    p2 = b.pw(d2, 5, Activation.RELU, name="p2")
    d3 = b.dw(p0, (3, 3), stride=2, padding=Padding.VALID, name="d3")
    p3 = b.pw(d3, 4, name="p3")
    return b.graph([x], [p0, p1, p2, p3], "dw_pw_blocks")


def _inputs(graph: Graph, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, graph.tensors[i].shape).astype(np.int8)
            for i in graph.inputs]  # fmt: skip


def test_blocks_fuse_and_match_tflm_on_host_and_qemu() -> None:
    graph = _blocks_graph()
    board = load_board("mps2-an386")
    g = generate(graph, board, "dw_pw_blocks", fuse_dw_pw="on")
    assert {(f.dw, f.pw) for f in g.folded.fused_dw_pw} == {(0, 1), (2, 3), (4, 5), (6, 7)}
    assert all(isinstance(op.options, DwPwConv2DOptions) for op in g.folded.graph.ops)
    assert "th_dw_conv_3x3_s8" in g.linked and "th_dw_conv_general_s8" in g.linked
    assert "th_conv_1x1_s8" in g.linked  # pointwise with 6 and 8 input channels
    assert [w.op for w in g.widened] == [4]  # 24 input channels: int16 weights, as unfused
    assert "th_conv_1x1_s8_w16" in g.linked
    assert not check_plan(g.plan)
    bands = {d: n for d, n, _ in g.dwpw_bands}
    assert min(bands[0], bands[2], bands[6]) > 1  # band boundaries inside the planes
    x = _inputs(graph, 7)
    assert_reference_matches_tflm(graph, x)
    for name in ("host", "mps2-an386", "mps3-an547"):  # portable, DSP and Helium kernels
        assert_device_matches_reference(graph, x, name, "compiled", BUILD / f"blocks-{name}",
                                        fuse_dw_pw="on")


# ------------------------------------------------------------------ the plan and `auto`


def _pair(shape: tuple[int, int, int, int], stride: int, cout: int) -> Graph:
    """x -> 3x3 depthwise (SAME, `stride`) -> pointwise to `cout` channels."""
    b = _Builder(np.random.default_rng(3))
    x = b.tensor("x", shape, quant=q(0.05, 3))
    y = b.pw(b.dw(x, (3, 3), stride=stride, name="dw"), cout, name="pw")
    return b.graph([x], [y], "pair")


def test_fused_arena_is_the_input_and_a_band_where_the_depthwise_plane_was_the_peak() -> None:
    """16x16x16 -> stride-2 depthwise -> 8x8x32. Unfused, the depthwise step holds its input
    and the DSP 3x3 kernel's int16 plane of the whole padded input (2 * PH * PW bytes, PH =
    (OH - 1) * 2 + 3, PW = ((OW - 1) * 2 + 5) rounded down to even: th_nn.h). Fused, the
    pointwise output (2,048 B) is written over input rows no later band reads, so the arena
    is the input plus one band: a 3-row plane, one staged row (8 * 16 B) and the pointwise
    kernel's few words per input channel."""
    graph = _pair((1, 16, 16, 16), 2, 32)
    x_bytes = 16 * 16 * 16
    plane = 2 * ((8 - 1) * 2 + 3) * (((8 - 1) * 2 + 5) & ~1)
    band_plane, row = 2 * 3 * 18, 8 * 16
    for options in (PlanOptions(), PlanOptions(alignment=16)):
        fused = fold_for_compiled(graph, fuse_dwpw=True)
        assert [(f.dw, f.pw) for f in fused.fused_dw_pw] == [(0, 1)]
        plan = plan_memory(fused.graph, options=options)
        assert not check_plan(plan)
        assert [u.mode for u in plan.overlaps] == [OverlapMode.DW_PW]
        unfused = plan_memory(fold_for_compiled(graph).graph, options=options)
        assert unfused.arena_bytes >= x_bytes + plane
        assert plan.arena_bytes <= x_bytes + band_plane + row + 4 * 16 + 2 * 16
    board = load_board("mps2-an386")
    auto = generate(graph, board, "pair")
    off = generate(graph, board, "pair", fuse_dw_pw="off")
    assert len(auto.folded.fused_dw_pw) == 1 and auto.arena_bytes < off.arena_bytes


def test_auto_does_not_fuse_where_the_arena_does_not_drop() -> None:
    """8x8x8 -> stride-1 depthwise -> 8x8x32: unfused, both steps run in place (the
    pointwise output, 2,048 B, holds its input); fused, the output cannot start before
    input rows a later band still reads, plus a staged row: no smaller. `on` still fuses."""
    graph = _pair((1, 8, 8, 8), 1, 32)
    board = load_board("mps2-an386")
    auto = generate(graph, board, "pair")
    on = generate(graph, board, "pair", fuse_dw_pw="on")
    off = generate(graph, board, "pair", fuse_dw_pw="off")
    assert not auto.folded.fused_dw_pw and auto.arena_bytes == off.arena_bytes
    assert len(on.folded.fused_dw_pw) == 1 and on.arena_bytes >= off.arena_bytes
    assert off.arena_bytes >= 8 * 8 * 32


def test_the_checker_refuses_an_output_over_rows_still_to_be_read() -> None:
    """The fused op's overlap bound is real: the output moved one aligned step past it (its
    first band then overwrites input rows the second band reads) fails the plan checker."""
    graph = _pair((1, 16, 16, 16), 2, 32)
    plan = plan_memory(fold_for_compiled(graph, fuse_dwpw=True).graph)
    (u,) = plan.overlaps
    buffers = list(plan.buffers)
    k = next(i for i, b in enumerate(buffers) if u.output_tensor in b.tensors)
    x_at = plan.tensor_offset(u.input_tensor)
    # band b (one 8-pixel row of 32 channels each) starts reading input row 2b - 1
    d_max = min((2 * b - 1) * 16 * 16 - b * 8 * 32 for b in range(1, 8))
    assert not check_plan(plan) and plan.tensor_offset(u.output_tensor) - x_at <= d_max
    moved = replace(buffers[k], offset=x_at + d_max + plan.alignment)
    buffers[k] = moved
    bad = replace(plan, buffers=tuple(buffers))
    assert check_plan(bad)


@pytest.mark.skipif(not VWW.is_file(), reason="shared models not present")
def test_vww_auto_fuses_where_the_peak_is_and_lists_the_pairs(tmp_path: Path) -> None:
    """VWW's peak is the 48x48x16 stride-2 depthwise (op 3) with its whole-input int16
    plane; auto fuses it with its pointwise (and only pairs that lower the arena), the plan
    checks, and model.json names the pairs, the profile the fused op once."""
    graph = read_model(VWW)
    board = load_board("mps2-an386")
    off = generate(graph, board, "vww", fuse_dw_pw="off")
    result = convert(graph, board, tmp_path / "vww")
    info = json.loads((tmp_path / "vww" / "model.json").read_text())
    pairs = [(p["depthwise"], p["pointwise"]) for p in info["fused_dw_pw"]]
    assert (3, 4) in pairs and info["fuse_dw_pw"] == "auto"
    assert result.arena_bytes < off.arena_bytes
    assert not check_plan(result.plan)
    assert 4 not in result.op_order and result.op_order.count(3) == 1
    names = dict(zip(result.op_order, result.op_names, strict=True))
    assert names[3].startswith("DEPTHWISE_CONV_2D+CONV_2D")
    assert result.op_macs is not None and sum(result.op_macs) == graph_stats(graph).macs


# ------------------------------------------------------------------ refused where it must be


def test_fusion_refused_when_a_condition_fails() -> None:
    b = _Builder(np.random.default_rng(4))
    x = b.tensor("x", (1, 6, 6, 4), quant=q(0.05, 0))
    d0 = b.dw(x, (3, 3), name="d0")  # read by a pointwise and by a second conv
    p0 = b.pw(d0, 4, name="p0")
    other = b.pw(d0, 2, name="other")
    d1 = b.dw(p0, (3, 3), name="d1")  # read by a 3x3 conv, not a pointwise one
    rng = b.rng
    c1 = b.conv(d1, Conv2DOptions(Padding.SAME, 1, 1), rng.integers(-127, 128, (4, 3, 3, 4)),
                np.full(4, 0.01, np.float32), np.zeros(4), q(0.05, 1), "c1")
    d2 = b.dw(c1, (3, 3), name="d2")  # its output is a model output
    p2 = b.pw(d2, 3, name="p2")
    graph = b.graph([x], [other, p2, d2], "refused")
    readers = graph.readers()
    reasons = [dwpw_refusal(graph, i, readers) for i in (0, 3, 5)]
    assert all(isinstance(r, str) for r in reasons), reasons
    assert "other readers" in reasons[0] and "other readers" in reasons[2]
    assert "not pointwise" in reasons[1]
    assert not fold_for_compiled(graph, fuse_dwpw=True).fused_dw_pw
