"""int16 pre-widened weights (codegen/widen.py) in patched models (plan/patch.py): the band
convs of the patched stage and the layers after it.

- A graph whose stage holds a 3x3 im2col CONV_2D with a ReLU (the kernel's exact loops), a
  dense pointwise CONV_2D and a stride-2 3x3 CONV_2D without clamp (the host's requantization
  table), then a 1x1 MAX_POOL_2D (ends the stage; its output is the split output exactly) and
  two convs after the stage, every op's output after the stage a model output: in 3 bands
  with kept halos and with recomputed halos, compiled for QEMU mps2-an386 (DSP build, int16
  weights in every band) and the host board (portable build, int8), every output bit-exact
  with the reference, which matches TFLite Micro on the unpatched graph.
- model.json of a patched model lists each widened layer once (the stage's and those after
  it) with the kernel calls reading its one int16 array, and the extra flash it reports is
  exactly what widening adds to the model's flash (no band keeps an int8 copy).
- ResNet-8 in 4 bands on QEMU mps2-an386: its stage's convs and the layers after it widened,
  outputs bit-exact.
- The compiled backend's default under --optimize speed (default_patch): `auto` within 3%
  estimated extra instructions taken only where the arena drops by 10% or more (choose with
  min_saving); what convert, bench and run take with no --patch, --patch off/auto/N,
  --optimize size and the interpreter; ResNet-8 patched by default with no extra MACs; a
  model directory replays its conversion's choice.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from graph_builder import GraphBuilder
from graph_on_device import (
    assert_device_matches_reference,
    assert_reference_matches_tflm,
    int8_inputs,
)
from paths import SHARED_MODELS
from reference_single_op import q
from tinyhost.boards import load_board
from tinyhost.codegen import get_backend
from tinyhost.codegen.compiled import generate
from tinyhost.codegen.fold import fold_for_compiled
from tinyhost.ir import Activation, Conv2DOptions, Graph, OpKind, Padding, Pool2DOptions
from tinyhost.ir.stats import op_macs
from tinyhost.plan import PlanOptions
from tinyhost.plan.budget import budget_for
from tinyhost.plan.patch import (
    SPEED_MAX_OVERHEAD,
    SPEED_MIN_SAVING,
    PatchCandidate,
    PatchRequest,
    choose,
    default_patch,
    pick,
)
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_patch_widen"
BOARD = "mps2-an386"
OPTIONS = PlanOptions(alignment=4, dsp=True)  # mps2-an386's DSP build

needs_toolchain = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed")  # fmt: skip


def _conv(b: GraphBuilder, x: int, cout: int, k: int, stride: int, act: Activation,
          name: str) -> int:
    rng = b.rng
    cin = b.tensors[x].shape[3]
    w = rng.integers(-127, 128, (cout, k, k, cin))
    scales = (2.0 ** rng.uniform(-8, -7, cout)).astype(np.float32)
    bias = rng.integers(-2000, 2000, cout)
    out = q(2.0 ** -3, int(rng.integers(-20, 20)))
    return b.conv(x, Conv2DOptions(Padding.SAME, stride, stride, activation=act), w, scales,
                  bias, out, name)


def _graph() -> Graph:
    b = GraphBuilder(np.random.default_rng(2024))
    x = b.tensor("x", (1, 18, 10, 8), quant=q(2.0 ** -4, 3))
    a = _conv(b, x, 12, 3, 1, Activation.RELU, "c3x3_relu")  # exact loops (a clamp)
    p = _conv(b, a, 32, 1, 1, Activation.NONE, "c1x1")
    t = _conv(b, p, 16, 3, 2, Activation.NONE, "c3x3_s2")  # the host's rq table
    pool = b.tensor("pool", b.tensors[t].shape, quant=b.tensors[t].quant)
    b.op(OpKind.MAX_POOL_2D, (t,), (pool,), Pool2DOptions(Padding.VALID, 1, 1, 1, 1))
    c = _conv(b, pool, 8, 1, 1, Activation.NONE, "after_1x1")
    d = _conv(b, c, 4, 3, 1, Activation.NONE, "after_3x3")
    return b.graph([x], [pool, c, d], "patch_widen")


STAGE = (0, 1, 2)  # the convs a 3-band patch runs in bands (the split: op 2)
WIDENED = (0, 1, 2, 4, 5)  # every conv: the 3x3 im2col ones and the pointwise ones


def test_reference_matches_tflm() -> None:
    graph = _graph()
    assert_reference_matches_tflm(graph, int8_inputs(graph, 1))


def test_model_json_lists_the_widened_layers_of_a_patched_model(tmp_path: Path) -> None:
    graph = _graph()
    board = load_board(BOARD)
    get_backend("compiled").convert(graph, board, tmp_path / "m", patch=PatchRequest(3))
    info = json.loads((tmp_path / "m" / "model.json").read_text())
    assert info["patch"]["split_op"] == STAGE[-1] and info["patch"]["tiles"] == 3
    listed = info["int16_weights"]
    assert [w["op"] for w in listed] == list(WIDENED)
    assert all(w["kind"] == "CONV_2D" for w in listed)
    calls = {w["op"]: w["calls"] for w in listed}
    assert all(calls[op] == 3 for op in STAGE) and calls[4] == calls[5] == 1
    assert {"th_conv_3x3_s8_w16", "th_conv_1x1_s8_w16"} <= set(info["linked"])
    assert "th_conv_3x3_s8" not in info["linked"] and "th_conv_1x1_s8" not in info["linked"]
    # the reported extra flash is exactly what widening adds: a board whose flash holds the
    # int8 model only gets no int16 weights, and the difference is the reported sum
    full = generate(graph, board, "m", patch=PatchRequest(3))
    extra = sum(w.extra_flash_bytes for w in full.widened)
    assert extra == info["int16_weights_extra_flash_bytes"] > 0
    code = budget_for(board, full.arena_bytes, 0, kernels=full.functions).flash_needed
    short = replace(board, flash=replace(board.flash, size=code + full.model_flash_bytes - extra))
    plain = generate(graph, short, "m", patch=PatchRequest(3))
    assert plain.widened == () and plain.patched is not None
    assert full.model_flash_bytes - plain.model_flash_bytes == extra


@needs_toolchain
@pytest.mark.parametrize("keep_halo", [True, False], ids=["kept", "recomputed"])
def test_patched_widened_model_bit_exact_on_qemu(keep_halo: bool) -> None:
    graph = _graph()
    request = PatchRequest(3, keep_halo=keep_halo)
    g = generate(graph, load_board(BOARD), "m", patch=request)
    assert g.patched is not None and g.patched.keep_halo is keep_halo
    assert tuple(w.op for w in g.widened) == WIDENED
    assert_device_matches_reference(graph, int8_inputs(graph, 5), BOARD, "compiled",
                                    BUILD / f"qemu-{keep_halo}", patch=request)


def test_patched_model_bit_exact_on_the_host_board() -> None:
    graph = _graph()
    request = PatchRequest(3)
    assert generate(graph, load_board("host"), "m", patch=request).widened == ()  # no DSP
    assert_device_matches_reference(graph, int8_inputs(graph, 6), "host", "compiled",
                                    BUILD / "host", patch=request)


RESNET = SHARED_MODELS / "mlperf_tiny" / "pretrainedResnet_quant.tflite"


@needs_toolchain
@pytest.mark.skipif(not RESNET.is_file(), reason="shared models absent")
def test_resnet_patched_with_int16_weights_bit_exact_on_qemu() -> None:
    """ResNet-8 in 4 bands (the stage: ops 0-3, the first residual block): its convs widened
    in every band, the layers after the stage widened as unpatched; the outputs bit-exact."""
    graph = read_model(RESNET)
    request = PatchRequest(4)
    g = generate(graph, load_board(BOARD), "resnet", patch=request)
    assert g.patched is not None and g.patched.stage == (0, 1, 2, 3)
    calls = {w.op: w.calls for w in g.widened}
    # op 0 (Cin 3: the few-input-channel path) and the ADDs keep int8; every other conv and
    # the FULLY_CONNECTED take int16 weights, the stage's in each of its calls
    assert sorted(calls) == [1, 2, 4, 5, 8, 9, 14]
    assert calls[1] >= 4 and calls[2] >= 4 and calls[4] == calls[14] == 1
    plain = generate(graph, load_board(BOARD), "resnet")
    assert g.arena_bytes < plain.arena_bytes
    assert_device_matches_reference(graph, int8_inputs(graph, 8), BOARD, "compiled",
                                    BUILD / "qemu-resnet", patch=request)


# -- the compiled backend's default under --optimize speed ----------------------------------------


def _cand(arena: int, extra_calls: int) -> PatchCandidate:
    return PatchCandidate(split_op=0, tiles=2, arena_bytes=arena, extra_macs=0, macs=1_000_000,
                          calls=extra_calls)


def test_choose_takes_a_patch_only_for_the_saving_asked() -> None:
    # estimated overheads: 5 calls 2%, 7 calls 2.8%, 20 calls 8%
    small, medium, big = _cand(950, 5), _cand(880, 7), _cand(600, 20)
    assert choose([small, medium, big], 1000, 0.03) is medium
    assert choose([small, medium, big], 1000, 0.03, min_saving=0.10) is medium
    assert choose([small], 1000, 0.03) is small
    assert choose([small], 1000, 0.03, min_saving=0.10) is None  # 5% saved: not worth it
    assert choose([big], 1000, 0.03, min_saving=0.10) is None  # over the instruction bound
    assert choose([_cand(900, 1)], 1000, 0.03, min_saving=0.10) is not None  # exactly 10%


@pytest.mark.parametrize(("argv", "want"), [
    ([], PatchRequest(None, SPEED_MAX_OVERHEAD, min_saving=SPEED_MIN_SAVING)),
    (["--patch", "off"], None),
    (["--patch", "auto"], PatchRequest(None, 0.10)),
    (["--patch", "4"], PatchRequest(4, 0.10)),
    (["--optimize", "size"], None),
    (["--backend", "interpreter"], None),
])
def test_cli_default_patch_is_the_compiled_speed_rule(argv: list[str], want) -> None:
    from tinyhost.cli import build_parser
    from tinyhost.cli.backend import patch_request

    for command in ("convert", "bench", "run"):
        extra = {"convert": ["-o", "out"], "run": ["--input", "x.npy"]}.get(command, [])
        args = build_parser().parse_args([command, "m.tflite", "--board", BOARD, "--backend",
                                          "compiled", *extra, *argv])
        assert patch_request(args) == want, command


@pytest.mark.skipif(not RESNET.is_file(), reason="shared models absent")
def test_resnet_patched_by_default_below_the_layer_by_layer_arena() -> None:
    """The default patches ResNet-8 (its arena drops by more than 10% within 3% estimated
    instructions), not at the cost of more MACs, and --patch off keeps it layer by layer."""
    graph = read_model(RESNET)
    board = load_board(BOARD)
    g = generate(graph, board, "resnet", patch=default_patch("compiled", "speed"))
    plain = generate(graph, board, "resnet")
    assert g.patched is not None and g.patched.keep_halo
    assert g.arena_bytes <= 0.9 * plain.arena_bytes
    assert sum(g.op_macs() or ()) == sum(op_macs(graph, op) for op in graph.ops)
    assert {w.op for w in g.widened} >= {w.op for w in plain.widened}
    # code generation lays out only the candidates within the overhead: the same choice
    folded = fold_for_compiled(graph).graph
    request = default_patch("compiled", "speed")
    assert request is not None
    everything = pick(folded, OPTIONS, request)
    within = pick(folded, OPTIONS, request, every=False)
    assert within[0] == everything[0] is not None
    assert len(within[1]) < len(everything[1])


@pytest.mark.parametrize(("patch", "want"), [
    (None, None),  # converted layer by layer: stays so, whatever the default
    ({"request": "auto", "max_overhead": 0.03}, PatchRequest(None, 0.03)),
])
def test_a_model_directory_replays_its_patch_choice(tmp_path: Path, patch, want) -> None:
    from tinyhost.cli import build_parser
    from tinyhost.cli.backend import INT8_MODEL, patch_request, resolve_model

    (tmp_path / INT8_MODEL).write_bytes(b"")
    (tmp_path / "model.json").write_text(json.dumps(
        {"board": BOARD, "backend": "compiled", "optimize": "speed", "patch": patch}))
    args = build_parser().parse_args(["bench", str(tmp_path), "--board", BOARD])
    resolve_model(args)
    assert args.backend == "compiled" and patch_request(args) == want
