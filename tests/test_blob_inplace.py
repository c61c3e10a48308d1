"""The interpreter blob uses the in-place overlaps the kernels declare (issue #4), and runs.

For every int8 model (shared and tests/models), for the portable build (host board) and the
DSP build (Cortex-M boards, interleaved filters):
  * the blob's arena is the planner's in-place plan (no scratch tail, not the plan without
    in-place overlaps), the plan passes the independent plan checker, and each op's planned
    scratch is exactly what the blob gives the kernel (the C *_scratch_size mirror);
  * every in-place overlap the plan uses is one th_nn.h declares for the kernel the op is
    lowered to, at an offset that kernel allows (stated here again from th_nn.h, not from
    plan/overlap.py).
Then every such blob runs bit-exact with the NumPy reference on QEMU mps2-an386 (the DSP
kernels) over LOAD_MODEL; tests/test_run_host.py does the same on the host board (portable).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from paths import SHARED_INT8, SHARED_MODELS, model_params
from paths import project_models as _project_models
from tinyhost import reference
from tinyhost.arith.conv import conv_params
from tinyhost.arith.pool import pool_params
from tinyhost.boards import load_board
from tinyhost.codegen.blob import BlobTarget, build_blob
from tinyhost.codegen.interpreter import convert, target_for
from tinyhost.codegen.interpreter_abi import adapter_for
from tinyhost.codegen.lower import lower_graph
from tinyhost.deploy.protocol import Device
from tinyhost.deploy.runner import build_firmware, invoke_once, open_device
from tinyhost.ir import Graph, OpKind
from tinyhost.plan import PlanOptions, plan_memory
from tinyhost.plan.checker import check_plan
from tinyhost.plan.overlap import OverlapMode
from tinyhost.plan.scratch import fast_scratch_bytes, scratch_bytes
from tinyhost.quantize.quantizer import is_float_model
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_blob_inplace"
QEMU_BOARD = "mps2-an386"
ARENA = 192 << 10
LOAD_CAPACITY = 1 << 20  # LOAD_MODEL buffer: the largest blob (vww) with room

INT8_MODELS = [SHARED_MODELS / m for m in SHARED_INT8 if (SHARED_MODELS / m).is_file()] + [
    p for p in _project_models() if not is_float_model(read_model(p))
]
TARGETS = {
    "portable": BlobTarget(interleaved=False, dsp=False, alignment=4),
    "dsp": BlobTarget(interleaved=True, dsp=True, alignment=4),
    "dsp-align16": BlobTarget(interleaved=True, dsp=True, alignment=16),  # MVE boards
}


def _declared(graph: Graph, kernel: str, mode: OverlapMode, op: int, src: int, dst: int,
              d: int) -> str | None:
    """Why th_nn.h does not allow this overlap, or None when it does."""
    x, y = graph.tensors[src], graph.tensors[dst]
    o = graph.ops[op]
    if mode is OverlapMode.ELEMENTWISE:
        # th_lut_s8 in place; th_add/sub/mul_s8 over a full-size input; the same pointer.
        if kernel not in ("lut_s8", "add_s8", "sub_s8", "mul_s8", "add_tab_s8", "sub_tab_s8"):
            return f"{kernel} has no elementwise in-place mode"
        if x.size_bytes != y.size_bytes or d != 0:
            return f"elementwise overlap needs a full-size input at d = 0, got d = {d}"
        return None
    if mode is OverlapMode.DEPTHWISE_CHANNEL:
        # rule (a): ch_mult 1, batch 1 (or output not larger), output == input
        w = graph.tensors[o.inputs[1]]
        if kernel != "dwconv2d_s8" or w.shape[3] != x.shape[3] or x.shape[0] != 1:
            return "depthwise in place needs dwconv2d_s8 with ch_mult 1 and batch 1"
        if d % x.shape[3] != 0:
            return f"depthwise in place at d = {d}, not a multiple of C = {x.shape[3]}"
        return None
    if mode is OverlapMode.POINTWISE_PIXEL:
        # rule (b): th_conv_1x1_s8, stride 1, pixels staged before their outputs are written
        w = graph.tensors[o.inputs[1]]
        pixels = int(np.prod(x.shape[:3]))
        if kernel != "conv2d_s8" or w.shape[1:3] != (1, 1) or w.shape[3] != x.shape[3]:
            return "pointwise in place needs a 1x1 conv without groups"
        if x.shape[:3] != y.shape[:3]:
            return "pointwise in place needs stride 1 (same pixels)"
        limit = min(0, pixels * (x.shape[3] - y.shape[3]))
        return None if d <= limit else f"pointwise in place at d = {d} > {limit}"
    if mode is OverlapMode.SLIDING:
        # rule (c): raster-order windowed kernels
        if kernel not in ("conv2d_s8", "avgpool_s8", "maxpool_s8"):
            return f"{kernel} has no raster-order (sliding) in-place mode"
        limit = _raster_limit(graph, op)
        return None if d <= limit else f"raster-order overlap at d = {d} > {limit}"
    return f"undeclared mode {mode}"


def _raster_limit(graph: Graph, op: int) -> int:
    """Largest d at which output pixels 0..q, written in raster order, end before the first
    input byte any pixel >= q still reads (th_nn.h rule (c)), by brute force over pixels."""
    o = graph.ops[op]
    n, h, w, cin = graph.tensors[o.inputs[0]].shape
    _, oh, ow, cout = graph.tensors[o.outputs[0]].shape
    if o.kind in (OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D):
        pp = pool_params(graph, o)
        sh, sw, kh, kw, dh, dw = pp.stride_h, pp.stride_w, pp.filter_h, pp.filter_w, 1, 1
        top, left = pp.pad_top, pp.pad_left
    else:
        cp = conv_params(graph, o)
        _, kh, kw, _ = graph.tensors[o.inputs[1]].shape
        sh, sw, dh, dw, top, left = (cp.stride_h, cp.stride_w, cp.dilation_h, cp.dilation_w,
                                     cp.pad_top, cp.pad_left)  # fmt: skip
    # a stride-1 average pool's pixel (y, x) also reads pixel (y - 1, x)'s window
    above = int(o.kind is OpKind.AVERAGE_POOL_2D and sh == sw == 1)
    first_read = []
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                taps = [((b * h + y * sh - top + ky * dh) * w + ox * sw - left + kx * dw) * cin
                        for y in range(max(oy - above, 0), oy + 1)
                        for ky in range(kh) for kx in range(kw)
                        if 0 <= y * sh - top + ky * dh < h and 0 <= ox * sw - left + kx * dw < w]
                first_read.append(min(taps) if taps else 1 << 40)
    still_needed = np.minimum.accumulate(np.array(first_read[::-1]))[::-1]
    written_end = (np.arange(len(first_read)) + 1) * cout
    return int(np.min(still_needed - written_end))


@pytest.mark.parametrize("target_name", list(TARGETS))
@pytest.mark.parametrize("path", model_params(INT8_MODELS))
def test_blob_arena_is_the_checked_in_place_plan(path: Path, target_name: str) -> None:
    graph = read_model(path)
    target = TARGETS[target_name]
    blob = build_blob(graph, target)
    options = PlanOptions(alignment=target.alignment, dsp=target.dsp)
    plan = plan_memory(graph, options=options)
    plain = plan_memory(graph, options=options.without_inplace())

    assert blob.plan.options.inplace
    assert blob.arena_bytes == plan.arena_bytes == blob.plan.arena_bytes
    assert blob.scratch_tail_bytes == 0
    assert blob.arena_bytes <= plain.arena_bytes
    assert check_plan(blob.plan) == []

    kernel = [adapter_for(call).name for call in lower_graph(graph)]
    options = PlanOptions(dsp=target.dsp)
    for i, op in enumerate(graph.ops):
        planned = blob.plan.scratch_for(i)
        assert (planned.size if planned else 0) == scratch_bytes(graph, op, options), i

    # Each op's scratch in the blob: at least what its kernel needs, inside the arena, and
    # (when larger than planned: the kernel's faster path) on bytes nothing live then uses.
    step_of = {op: k for k, op in enumerate(blob.op_order)}
    for op, offset, size in blob.scratch:
        assert size >= scratch_bytes(graph, graph.ops[op], options)
        assert offset >= 0 and offset + size <= blob.arena_bytes
        own = blob.plan.scratch_for(op)
        for b in blob.plan.buffers:
            if b is own or not b.first_op <= step_of[op] <= b.last_op:
                continue
            assert offset + size <= b.offset or b.offset + b.size <= offset, (op, b.name)

    for u in blob.plan.overlaps:
        if u.mode is OverlapMode.ALIAS:
            assert kernel[u.op] == "copy" and u.d == 0
            continue
        why = _declared(graph, kernel[u.op], u.mode, u.op, u.input_tensor,
                        u.output_tensor, u.d)
        assert why is None, f"op {u.op} {graph.ops[u.op].name}: {why}"


def test_depthwise_gets_its_fast_scratch_only_where_the_arena_has_room() -> None:
    """VWW's late 6x6 depthwise layers are far from the arena peak: they get four planes;
    KWS's depthwise layer is its peak: one plane, so its arena does not grow."""
    granted = {}
    for name in ("kws_ref_model", "vww_96_int8"):
        path = SHARED_MODELS / "mlperf_tiny" / f"{name}.tflite"
        if not path.is_file():
            pytest.skip(f"{path} absent")
        graph = read_model(path)
        blob = build_blob(graph, TARGETS["dsp"])
        options = PlanOptions(dsp=True)
        assert blob.arena_bytes == plan_memory(graph, options=options).arena_bytes
        granted[name] = sum(size == fast_scratch_bytes(graph, graph.ops[op], options) > 0
                            for op, _, size in blob.scratch)
    assert granted["vww_96_int8"] >= 5
    assert granted["kws_ref_model"] == 0


def test_in_place_shrinks_the_mlperf_blobs() -> None:
    """The in-place overlaps matter where the issue says they do (vww, kws, resnet)."""
    for name in ("kws_ref_model", "vww_96_int8", "pretrainedResnet_quant"):
        path = SHARED_MODELS / "mlperf_tiny" / f"{name}.tflite"
        if not path.is_file():
            pytest.skip(f"{path} absent")
        graph = read_model(path)
        for target in TARGETS.values():
            plain = plan_memory(graph, options=PlanOptions(dsp=target.dsp, inplace=False))
            blob = build_blob(graph, target)
            assert blob.arena_bytes < 0.8 * plain.arena_bytes, name
            assert {u.mode for u in blob.plan.overlaps} - {OverlapMode.ALIAS}, name


@pytest.mark.parametrize("board", ["host", QEMU_BOARD, "mps3-an547"])
def test_tinyhost_plan_reports_the_blob_arena(board: str, capsys: pytest.CaptureFixture[str]
                                              ) -> None:  # fmt: skip
    """`tinyhost plan MODEL --board B --json` states the arena the firmware allocates."""
    import argparse
    import json

    from tinyhost.cli import plan as cli_plan

    path = SHARED_MODELS / "mlperf_tiny" / "vww_96_int8.tflite"
    if not path.is_file():
        path = INT8_MODELS[-1]
    parser = argparse.ArgumentParser()
    cli_plan.add_parser(parser.add_subparsers())
    args = parser.parse_args(["plan", str(path), "--board", board, "--json"])
    assert args.func(args) == 0
    reported = json.loads(capsys.readouterr().out)["arena_bytes"]
    assert reported == build_blob(read_model(path), target_for(load_board(board))).arena_bytes


# ------------------------------------------------------------------- QEMU, the DSP kernels

needs_qemu = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed",
)


@pytest.fixture(scope="module")
def qemu_device() -> Iterator[Device]:
    board = load_board(QEMU_BOARD)
    conv = convert(read_model(INT8_MODELS[0]), board, BUILD / "model", all_ops=True,
                   arena_bytes=ARENA, load_capacity=LOAD_CAPACITY)  # fmt: skip
    elf = build_firmware(conv.out_dir, board, BUILD / "build").elf
    with open_device(elf, QEMU_BOARD, request_timeout=60.0) as dev:
        yield dev


@needs_qemu
@pytest.mark.parametrize("path", model_params(INT8_MODELS))
def test_in_place_blob_bit_exact_on_qemu(qemu_device: Device, path: Path) -> None:
    graph = read_model(path)
    board = load_board(QEMU_BOARD)
    target = target_for(board)
    assert target.dsp and target.interleaved
    blob = build_blob(graph, target)
    assert blob.arena_bytes <= ARENA and len(blob.data) <= LOAD_CAPACITY
    qemu_device.load_model(blob.data)
    info = qemu_device.info()
    assert info.model_ready and info.model_hash == blob.crc
    rng = np.random.default_rng(17)
    for _ in range(2):
        inputs = reference.random_inputs(graph, rng)
        run = invoke_once(qemu_device, inputs)
        expected = reference.run(graph, inputs).outputs
        assert len(run.outputs) == len(expected)
        for k, (got, want) in enumerate(zip(run.outputs, expected)):
            assert got.dtype == want.dtype and got.shape == want.shape, k
            np.testing.assert_array_equal(got, want, err_msg=f"output {k}")
