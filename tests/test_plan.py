"""The static memory planner on real models: valid plans, bounds, TFLite Micro, budgets, CLI."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from paths import SHARED_FLOAT, SHARED_INT8, SHARED_MODELS, SKIP_NO_SHARED, project_models
from tinyhost.boards import load_board
from tinyhost.errors import TinyhostError
from tinyhost.ir import Conv2DOptions, Graph, Op, OpKind, Padding, Quantization, Tensor
from tinyhost.plan import PlanOptions, plan_memory
from tinyhost.plan.budget import DoesNotFitError, budget_for, require_fits
from tinyhost.plan.checker import check_plan
from tinyhost.plan.footprint import flash_usage
from tinyhost.tflite import read_model
from tinyhost.tflite.writer import write_model_file

OPTION_SETS = {
    "default": PlanOptions(),
    "no-inplace": PlanOptions(inplace=False),
    "mve-16": PlanOptions(alignment=16),
    "portable": PlanOptions(dsp=False, sliding=False),
}


def _shared(rel: str) -> Path:
    path = SHARED_MODELS / rel
    if not path.is_file():
        pytest.skip(SKIP_NO_SHARED)
    return path


def _all_models() -> list[Path]:
    shared = sorted(SHARED_MODELS.rglob("*.tflite")) if SHARED_MODELS.is_dir() else []
    return shared + project_models()


def _lower_bound_by_hand(plan) -> int:
    """Largest sum of live buffers at one step, from the plan's buffers (no overlaps)."""
    a = plan.alignment
    steps = max(len(plan.op_order), 1)
    return max(
        sum(-(-b.size // a) * a for b in plan.buffers if b.first_op <= s <= b.last_op)
        for s in range(steps)
    )


@pytest.mark.parametrize("options", OPTION_SETS.values(), ids=OPTION_SETS.keys())
@pytest.mark.parametrize("path", _all_models(), ids=lambda p: p.name)
def test_every_model_has_a_valid_plan(path: Path, options: PlanOptions) -> None:
    graph = read_model(path)
    plan = plan_memory(graph, options=options)
    assert check_plan(plan) == []
    assert plan.lower_bound_bytes <= plan.arena_bytes
    assert plan.arena_bytes % options.alignment == 0
    if not options.inplace:
        # without in-place kernels nothing shares bytes but aliases: the bound is plain sums
        assert plan.lower_bound_bytes == _lower_bound_by_hand(plan)


CHAINS = ["mlperf_tiny/kws_ref_model.tflite", "mlperf_tiny/ad01_int8.tflite"]


@pytest.mark.parametrize("rel", CHAINS)
def test_chain_models_reach_the_lower_bound(rel: str) -> None:
    graph = read_model(_shared(rel))
    for options in OPTION_SETS.values():
        plan = plan_memory(graph, options=options)
        assert plan.arena_bytes == plan.lower_bound_bytes, options


def test_in_place_never_costs_more_than_without() -> None:
    for path in _all_models():
        graph = read_model(path)
        with_ = plan_memory(graph).arena_bytes
        without = plan_memory(graph, options=PlanOptions(inplace=False)).arena_bytes
        assert with_ <= without, path.name


def _tflm_head_bytes(path: Path) -> int | None:
    code = (
        "import sys\n"
        "from tflite_micro.python.tflite_micro import runtime\n"
        "runtime.Interpreter.from_file(sys.argv[1], arena_size=1 << 24).print_allocations()\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300
    )
    m = re.search(r"Arena allocation head (\d+) bytes", run.stdout + run.stderr)
    return int(m.group(1)) if run.returncode == 0 and m else None


# micro_speech's DEPTHWISE_CONV_2D (depth multiplier 8) fits only because the kernel reads its
# input directly when ch_mult > 1 (no plane scratch): input + output = 5,960 B <= 5,968 B.
@pytest.mark.parametrize("rel", SHARED_INT8 + SHARED_FLOAT)
def test_arena_not_larger_than_tflite_micro_head(rel: str) -> None:
    path = _shared(rel)
    head = _tflm_head_bytes(path)
    if head is None:
        pytest.skip(f"TFLite Micro does not run {rel}")
    plan = plan_memory(read_model(path))
    assert plan.arena_bytes <= head, (plan.arena_bytes, head)


def test_checker_rejects_broken_plans() -> None:
    graph = read_model(_shared("mlperf_tiny/vww_96_int8.tflite"))
    plan = plan_memory(graph, options=PlanOptions(inplace=False))
    assert check_plan(plan) == []
    bufs = list(plan.buffers)
    tensors = [k for k, b in enumerate(bufs) if b.kind == "tensor"]
    # Two buffers live at the same step put on top of each other.
    a, b = next(
        (x, y)
        for x in tensors
        for y in tensors
        if x < y and bufs[x].first_op <= bufs[y].last_op and bufs[y].first_op <= bufs[x].last_op
    )
    moved = bufs.copy()
    moved[b] = replace(bufs[b], offset=bufs[a].offset)
    assert any("overlaps" in e for e in check_plan(replace(plan, buffers=tuple(moved))))
    misaligned = bufs.copy()
    misaligned[a] = replace(bufs[a], offset=bufs[a].offset + 2)
    assert any("not aligned" in e for e in check_plan(replace(plan, buffers=tuple(misaligned))))
    assert any("outside" in e for e in check_plan(replace(plan, arena_bytes=plan.arena_bytes - 4)))
    scratch = [k for k, b in enumerate(bufs) if b.kind == "scratch"]
    no_scratch = tuple(b for k, b in enumerate(bufs) if k != scratch[0])
    assert any("scratch" in e for e in check_plan(replace(plan, buffers=no_scratch)))


def test_checker_rejects_an_undeclared_in_place_claim() -> None:
    graph = read_model(_shared("mlperf_tiny/pretrainedResnet_quant.tflite"))
    plan = plan_memory(graph)
    assert check_plan(plan) == []
    # The same plan checked as if the kernels could not run in place must fail.
    assert check_plan(replace(plan, options=PlanOptions(inplace=False)))


def test_flash_counts_weights_biases_and_requant() -> None:
    graph = read_model(_shared("mlperf_tiny/kws_ref_model.tflite"))
    f = flash_usage(graph)
    shapes = {op.inputs[1] for op in graph.ops if op.kind is OpKind.RESHAPE}
    consts = [t for k, t in enumerate(graph.tensors) if t.is_constant and k not in shapes]
    assert f.weights_bytes == sum(t.size_bytes for t in consts if t.dtype == np.int8)
    assert f.biases_bytes == sum(t.size_bytes for t in consts if t.dtype == np.int32)
    assert f.other_bytes == 8  # the RESHAPE's int32[2] shape operand, not stored
    # (multiplier, shift) per channel of 5 convolutions and 4 depthwise of 64 channels, per
    # weight scale of the FC (one: per tensor), one for the softmax
    fc = next(op for op in graph.ops if op.kind is OpKind.FULLY_CONNECTED)
    assert graph.tensors[fc.inputs[1]].quant.scale.size == 1
    assert f.requant_bytes == 8 * (9 * 64 + 1 + 1)
    assert f.total_bytes == f.weights_bytes + f.biases_bytes + f.requant_bytes


def _big_model(tmp_path: Path) -> Path:
    """A conv whose input and output alone need 96 KiB + 192 KiB."""
    q = Quantization(np.array([0.05], np.float32), np.array([0], np.int64))
    wq = Quantization(np.full(6, 0.01, np.float32), np.zeros(6, np.int64), 0)
    bq = Quantization(np.full(6, 0.0005, np.float32), np.zeros(6, np.int64), 0)
    tensors = (
        Tensor("x", (1, 128, 256, 3), np.dtype(np.int8), None, q),
        Tensor("w", (6, 3, 3, 3), np.dtype(np.int8), np.ones((6, 3, 3, 3), np.int8), wq),
        Tensor("b", (6,), np.dtype(np.int32), np.zeros(6, np.int32), bq),
        Tensor("y", (1, 128, 256, 6), np.dtype(np.int8), None, q),
    )
    op = Op(OpKind.CONV_2D, (0, 1, 2), (3,), Conv2DOptions(Padding.SAME, 1, 1))
    path = tmp_path / "big.tflite"
    write_model_file(Graph(tensors, (op,), (0,), (3,), "big"), path)
    return path


def test_model_too_big_for_a_board_is_refused_with_the_excess(tmp_path: Path) -> None:
    graph = read_model(_big_model(tmp_path))
    board = load_board("netduinoplus2")
    assert board.ram is not None and board.ram.size == 128 * 1024
    plan = plan_memory(graph, options=PlanOptions(alignment=board.arena_alignment, dsp=board.dsp))
    fit = budget_for(board, plan.arena_bytes, flash_usage(graph).total_bytes)
    excess = plan.arena_bytes + fit.reserves.ram - board.ram.size
    assert excess > 0 and fit.ram_headroom == -excess
    with pytest.raises(DoesNotFitError, match=f"RAM .*exceeded by {excess:,} bytes"):
        require_fits(fit, graph.source)


def test_flash_overflow_is_refused_too() -> None:
    board = load_board("mps2-an386")
    assert board.flash is not None
    code = budget_for(board, 1024, 0).reserves.flash
    over = budget_for(board, 1024, board.flash.size - code + 1)
    with pytest.raises(DoesNotFitError, match="flash .*exceeded by 1 bytes"):
        require_fits(over, "m.tflite")
    exact = budget_for(board, 1024, board.flash.size - code)
    assert require_fits(exact, "m.tflite").flash_headroom == 0


def _cli(argv: list[str]) -> int:
    from tinyhost.cli import plan as cli_plan

    parser = argparse.ArgumentParser()
    cli_plan.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_refuses_before_any_build(tmp_path: Path, capsys) -> None:
    with pytest.raises(TinyhostError, match="does not fit netduinoplus2.*exceeded by"):
        _cli(["plan", str(_big_model(tmp_path)), "--board", "netduinoplus2"])
    assert "DOES NOT FIT" in capsys.readouterr().out
    with pytest.raises(TinyhostError, match="unknown board"):
        _cli(["plan", str(_big_model(tmp_path)), "--board", "no-such-board"])


def test_cli_json_and_plots(tmp_path: Path, capsys) -> None:
    model = _shared("mlperf_tiny/pretrainedResnet_quant.tflite")
    svg, png = tmp_path / "plan.svg", tmp_path / "plan.png"
    assert _cli(["plan", str(model), "--json", "--board", "mps2-an386", "--plot", str(svg)]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("arena_bytes", "lower_bound_bytes", "peak_op", "buffers"):
        assert key in out
    assert out["board"]["fits"] is True
    plan = plan_memory(read_model(model))
    assert out["arena_bytes"] == plan.arena_bytes
    for b in out["buffers"]:
        assert {"tensor", "offset", "size", "first_op", "last_op"} <= set(b)
        assert b["offset"] >= 0 and b["offset"] + b["size"] <= out["arena_bytes"]
    assert svg.read_text().lstrip().startswith(("<?xml", "<svg"))
    assert _cli(["plan", str(model), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = capsys.readouterr().out
    assert f"arena: {plan.arena_bytes:,} bytes" in text
    with pytest.raises(TinyhostError, match="svg or .png"):
        _cli(["plan", str(model), "--plot", str(tmp_path / "plan.pdf")])
