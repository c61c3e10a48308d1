"""Patch-based inference (plan/patch.py): the first stage of a model in row bands.

The rewrite is checked where it can fail: the NumPy reference of the patched graph equals the
original's on every tensor the rest of the model reads (the split output) and on the outputs,
for every split and several tile counts of every project and shared model that has a stage;
the layout passes its independent checker and the rest's plan the plan checker; the compiled
firmware runs patched models bit-exact on the host board and on QEMU; a model that does not fit
a board's RAM layer by layer fits it patched, and `convert` says so."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS, SHARED_MODELS
from tinyhost import reference
from tinyhost.codegen.fold import fold_pads
from tinyhost.plan import PlanOptions
from tinyhost.plan.checker import check_plan
from tinyhost.plan.patch import (
    INSTRUCTIONS_PER_CALL,
    PatchCandidate,
    band_geometry,
    candidates,
    check_patched,
    choose,
    extra_macs,
    layout_patched,
    patch_graph,
    split_points,
    stage_chain,
)
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_patch"
OPTIONS = PlanOptions(alignment=4, dsp=True)

# the project models with a stage that can be patched (a chain of convs whose output the rest
# of the model reads)
MODELS = sorted(p for p in PROJECT_MODELS.glob("*_int8.tflite")
                if candidates(fold_pads(read_model(p)).graph, OPTIONS, 2))  # fmt: skip
VWW = SHARED_MODELS / "mlperf_tiny" / "vww_96_int8.tflite"
SHARED = [SHARED_MODELS / "mlperf_tiny" / n for n in ("vww_96_int8.tflite", "kws_ref_model.tflite",
                                                       "pretrainedResnet_quant.tflite")]
needs_shared = pytest.mark.skipif(not VWW.is_file(), reason="../shared models not present")


def _graph(path: Path):
    return fold_pads(read_model(path)).graph


def _input(graph, seed: int = 0) -> np.ndarray:
    x = graph.tensors[graph.inputs[0]]
    return np.random.default_rng(seed).integers(-128, 128, x.shape).astype(np.int8)


def _check_rewrite(graph, split: int, tiles: int) -> None:
    """Both halo schemes where the tile count allows them (kept halos also take more bands
    than the split output has rows: warm-up bands where the split op computes nothing)."""
    chain = stage_chain(graph)
    stage = chain[: chain.index(split) + 1]
    for keep in (True, False):
        if band_geometry(graph, stage, tiles, keep) is not None:
            _check_one(graph, split, tiles, keep)


def _check_one(graph, split: int, tiles: int, keep: bool) -> None:
    p = patch_graph(graph, split, tiles, keep)
    x = _input(graph, split * 31 + tiles)
    want = reference.run(graph, [x], keep_intermediates=True)
    got = reference.run(p.graph, [x], keep_intermediates=True)
    np.testing.assert_array_equal(got.tensors[p.split_tensor], want.tensors[p.split_tensor])
    for a, b in zip(got.outputs, want.outputs, strict=True):
        np.testing.assert_array_equal(a, b)
    layout = layout_patched(p, OPTIONS)
    assert check_patched(p, layout) == []
    assert check_plan(layout.rest) == []
    assert layout.plan.tensor_offset(p.input_tensor) == layout.input_offset
    if keep:  # every row of every stage op computed at most once: no extra MACs
        stage = list(p.stage)
        assert extra_macs(graph, stage, [list(b) for b in p.bands]) <= 0


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_rewrite_is_bit_exact_for_every_split(path: Path) -> None:
    graph = _graph(path)
    chain = stage_chain(graph)
    for split in split_points(graph):
        t = graph.ops[split].outputs[0]
        stage = chain[: chain.index(split) + 1]
        tallest = max(graph.tensors[graph.ops[i].outputs[0]].shape[1] for i in stage)
        for tiles in sorted({2, 3, graph.tensors[t].shape[1], tallest}):
            if band_geometry(graph, stage, tiles) is not None:
                _check_rewrite(graph, split, tiles)


@needs_shared
@pytest.mark.parametrize("path", SHARED, ids=[p.stem for p in SHARED])
def test_rewrite_is_bit_exact_on_shared_models(path: Path) -> None:
    graph = _graph(path)
    chain = split_points(graph)
    for split in chain[:: max(1, len(chain) // 3)][:3]:
        height = graph.tensors[graph.ops[split].outputs[0]].shape[1]
        for tiles in sorted({2, min(5, height), height}):
            _check_rewrite(graph, split, tiles)


def test_bands_cover_each_row_once_and_pad_only_at_the_border() -> None:
    graph = _graph(PROJECT_MODELS / "kws_dscnn_int8.tflite")
    stage = stage_chain(graph)[:3]
    bands = band_geometry(graph, stage, 4)
    assert bands is not None
    height = graph.tensors[graph.ops[stage[-1]].outputs[0]].shape[1]
    last = [b[-1] for b in bands]
    assert last[0].out_lo == 0 and last[-1].out_hi == height
    assert all(a.out_hi == b.out_lo for a, b in zip(last, last[1:]))
    for band in bands:
        for j, ob in enumerate(band):
            h = graph.tensors[graph.ops[stage[j]].inputs[0]].shape[1]
            assert 0 <= ob.in_lo < ob.in_hi <= h
            assert ob.pad_top == 0 or ob.in_lo == 0  # padding above only at the image's top
            assert ob.pad_bottom == 0 or ob.in_hi == h


def test_layout_checker_catches_a_clobbered_input() -> None:
    """Moving T onto input rows a later band still reads is reported."""
    graph = _graph(PROJECT_MODELS / "kws_dscnn_int8.tflite")
    p = patch_graph(graph, stage_chain(graph)[2], 4)
    layout = layout_patched(p, OPTIONS)
    x = graph.tensors[p.input_tensor]
    bad = replace(layout, split_offset=layout.input_offset + x.size_bytes // 2)
    assert any("overwrote" in e for e in check_patched(p, bad))


@needs_shared
def test_vww_auto_goes_below_the_layer_by_layer_arena() -> None:
    from tinyhost.plan import plan_memory
    from tinyhost.plan.patch import PatchRequest, pick

    graph = _graph(VWW)
    chosen, cands, unpatched = pick(graph, OPTIONS, PatchRequest())
    assert unpatched == plan_memory(graph, options=OPTIONS).arena_bytes
    assert chosen is not None and chosen.arena_bytes < unpatched
    assert chosen.overhead <= 0.10
    assert {c.split_op for c in cands} >= {0, 1, 2}
    assert candidates(graph, OPTIONS, tiles=3) and all(c.tiles == 3
                                                       for c in candidates(graph, OPTIONS, 3))


# -- on the device -------------------------------------------------------------------------------

needs_toolchain = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed")  # fmt: skip

# every project model with a stage, and the shared ones that have one
DEVICE_MODELS = MODELS + [p for p in SHARED if p.is_file()]


@pytest.mark.parametrize("tiles", ["2", "3", "auto"])
@pytest.mark.parametrize("path", DEVICE_MODELS, ids=[p.stem for p in DEVICE_MODELS])
def test_patched_firmware_is_bit_exact_on_the_host_board(path: Path, tiles: str) -> None:
    from tinyhost.deploy.runner import run_model
    from tinyhost.plan.patch import parse_patch

    graph = read_model(path)
    xs = [[_input(graph, s)] for s in range(2)]
    report = run_model(graph, "host", xs, backend="compiled", patch=parse_patch(tiles),
                       work_dir=BUILD / f"host-{path.stem}-{tiles}")  # fmt: skip
    for run, x in zip(report.runs, xs, strict=True):
        np.testing.assert_array_equal(run.outputs[0], reference.run(graph, x).outputs[0])


@needs_toolchain
@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_patched_firmware_is_bit_exact_on_qemu(board: str) -> None:
    from tinyhost.deploy.runner import run_model
    from tinyhost.plan.patch import PatchRequest

    graph = read_model(PROJECT_MODELS / "kws_dscnn_int8.tflite")
    xs = [[_input(graph, s)] for s in range(2)]
    report = run_model(graph, board, xs, backend="compiled", patch=PatchRequest(3),
                       work_dir=BUILD / f"{board}-kws")  # fmt: skip
    for run, x in zip(report.runs, xs, strict=True):
        np.testing.assert_array_equal(run.outputs[0], reference.run(graph, x).outputs[0])
    assert any("band 2/3" in n for n in report.op_names)


@needs_shared
@needs_toolchain
def test_vww_patched_on_qemu_is_bit_exact_and_smaller() -> None:
    from tinyhost.deploy.bench import bench
    from tinyhost.plan.patch import PatchRequest

    graph = read_model(VWW)
    plain = bench(graph, "mps2-an386", backend="compiled", work_dir=BUILD / "vww-plain")
    patched = bench(graph, "mps2-an386", backend="compiled", patch=PatchRequest(),
                    work_dir=BUILD / "vww-patched")  # fmt: skip
    assert plain.bit_exact and patched.bit_exact
    assert patched.arena_bytes < plain.arena_bytes
    assert sum(op.macs for op in patched.per_op) >= plain.macs  # halos recomputed, not skipped


def test_a_model_that_fits_only_patched(tmp_path: Path, capsys) -> None:
    """On a board whose RAM is a little short of the layer-by-layer need, convert refuses the
    model with the bytes missing and converts it with --patch auto."""
    from tinyhost.boards import load_board
    from tinyhost.codegen import get_backend
    from tinyhost.plan.budget import DoesNotFitError
    from tinyhost.plan.patch import PatchRequest

    graph = read_model(PROJECT_MODELS / "digits_tf_int8.tflite")
    board = load_board("mps2-an386")
    compiled = get_backend("compiled")
    plain = compiled.fit(graph, board)
    patched = compiled.fit(graph, board, patch=PatchRequest(None, max_overhead=1.0))
    assert patched.ram_needed < plain.ram_needed
    assert board.ram is not None
    small = replace(board, ram=replace(board.ram, size=patched.ram_needed))
    with pytest.raises(DoesNotFitError, match="exceeded by"):
        compiled.convert(graph, small, tmp_path / "plain")
    result = compiled.convert(graph, small, tmp_path / "patched",
                              patch=PatchRequest(None, max_overhead=1.0))  # fmt: skip
    assert result.budget.fits
    info = json.loads((tmp_path / "patched" / "model.json").read_text())
    assert info["patch"]["input_preserved"] is False and info["patch"]["tiles"] >= 2


def test_cli_plan_lists_candidates_and_interpreter_refuses(tmp_path: Path, capsys) -> None:
    from tinyhost.cli import main

    model = str(PROJECT_MODELS / "digits_tf_int8.tflite")
    assert main(["plan", model, "--board", "mps2-an386", "--backend", "compiled",
                 "--patch", "auto", "--max-overhead", "1", "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    cands = out["patch"]["candidates"]
    assert cands and set(cands[0]) >= {"split_op", "tiles", "arena_bytes", "extra_macs"}
    assert out["patch"]["chosen"] in cands
    assert out["arena_bytes"] == out["patch"]["chosen"]["arena_bytes"]
    assert out["arena_bytes"] < out["patch"]["unpatched_arena_bytes"]
    assert out["board"]["arena_bytes"] >= out["arena_bytes"]  # the fit of the patched model
    assert main(["convert", model, "--board", "mps2-an386", "--patch", "2",
                 "-o", str(tmp_path / "x")]) == 2  # fmt: skip
    assert "--patch is the compiled backend's" in capsys.readouterr().err
    assert main(["plan", model, "--backend", "compiled", "--patch", "one"]) == 2
    assert "--patch 'one'" in capsys.readouterr().err


MOBILENET = PROJECT_MODELS / "large" / "mobilenetv2_stage_128_int8.tflite"


@needs_toolchain
def test_mobilenet_128_runs_on_a_128k_board_only_patched(tmp_path: Path) -> None:
    """The project's MobileNetV2 stage at 128x128 (tests/models/make_models.py) needs ~205 KB
    of arena layer by layer: refused for netduinoplus2 (128 KB RAM) with the bytes missing;
    patched it fits, and runs there on QEMU bit-exact."""
    from tinyhost.boards import load_board
    from tinyhost.codegen import get_backend
    from tinyhost.deploy.runner import run_model
    from tinyhost.plan.budget import DoesNotFitError
    from tinyhost.plan.patch import PatchRequest

    graph = read_model(MOBILENET)
    board = load_board("netduinoplus2")
    with pytest.raises(DoesNotFitError, match="exceeded by"):
        get_backend("compiled").convert(graph, board, tmp_path / "plain")
    x = _input(graph, 5)
    report = run_model(graph, board.name, [[x]], backend="compiled", patch=PatchRequest(),
                       work_dir=BUILD / "mobilenet-netduino")  # fmt: skip
    np.testing.assert_array_equal(report.runs[0].outputs[0], reference.run(graph, [x]).outputs[0])
    assert report.budget is not None and report.budget.fits
    assert report.arena_bytes < 0.6 * get_backend("compiled").fit(
        graph, load_board("mps2-an386")).arena_bytes  # fmt: skip


def test_mobilenet_128_rewrite_is_bit_exact() -> None:
    graph = _graph(MOBILENET)
    splits = split_points(graph)
    assert any(graph.ops[i].kind.name == "ADD" for i in stage_chain(graph)[: splits[-1] + 1])
    _check_rewrite(graph, splits[-1], 8)  # through the inverted residual
    _check_rewrite(graph, splits[1], 16)


MOBILENET_224 = PROJECT_MODELS / "large" / "mobilenetv2_224_int8.tflite"


def test_mobilenet_224_goes_4x_below_the_layer_by_layer_arena() -> None:
    """MobileNetV2 (width 1.0) at 224x224: its layer-by-layer bound is the first block's
    112x112x96 expansion; run in row bands up to its first 28-row op, one band per row of the
    tallest stage op (warm-up bands fill the first band's receptive field), the arena is at
    least 4x smaller, bit-exact, with no row computed twice."""
    from tinyhost.plan import plan_memory

    graph = _graph(MOBILENET_224)
    chain = stage_chain(graph)
    split = next(i for i in split_points(graph)
                 if graph.tensors[graph.ops[i].outputs[0]].shape[1] == 28)  # fmt: skip
    stage = chain[: chain.index(split) + 1]
    tallest = max(graph.tensors[graph.ops[i].outputs[0]].shape[1] for i in stage)
    _check_one(graph, split, tallest, keep=True)
    p = patch_graph(graph, split, tallest, keep_halo=True)
    patched = layout_patched(p, OPTIONS).plan.arena_bytes
    unpatched = plan_memory(graph, options=OPTIONS).arena_bytes
    assert len(p.bands) > tallest  # warm-up bands: the split op computes nothing in them
    assert 4 * patched <= unpatched, (patched, unpatched)


def test_auto_bounds_the_calls_not_only_the_macs() -> None:
    """Kept halos add no MACs, but every band call repeats its kernel's setup: `auto` takes
    the smallest arena whose estimated extra instructions also stay within the bound."""
    macs = 10_000_000
    calls_at_10_percent = macs // 10 // INSTRUCTIONS_PER_CALL
    many = PatchCandidate(3, 48, 30_000, 0, macs, True, calls_at_10_percent + 1)
    fewer = PatchCandidate(3, 24, 31_000, 0, macs, True, calls_at_10_percent)
    recomputed = PatchCandidate(3, 8, 29_000, macs // 5, macs, False, 10)
    assert many.overhead == 0.0 and many.instruction_overhead > 0.1
    assert choose([many, fewer, recomputed], 40_000, 0.1) == fewer
    assert choose([many, fewer, recomputed], 40_000, 0.5) == recomputed
    assert choose([many, fewer], 30_500, 0.1) is None  # the one within bounds is not smaller
