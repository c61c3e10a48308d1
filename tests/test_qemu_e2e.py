"""End to end on the QEMU boards: int8 models through the real interpreter firmware.

For each QEMU board (netduinoplus2, mps2-an386, mps2-an500, mps3-an547) one interpreter
firmware is built with every available kernel and a LOAD_MODEL buffer; each model's blob then
goes over QEMU's TCP serial link, so every model runs through the real firmware (UART driver,
protocol, blob validation, dispatch, DSP kernels) without a rebuild per model. Blobs too big
for a board's LOAD_MODEL buffer (or too slow to send over the emulated UART) are compiled in
instead: one firmware per such model. Every int8 model runs on mps2-an386; every board runs
all the project models and the shared ones that fit it.

Each model runs two inputs; outputs must equal the NumPy reference (bit-exact with TFLite
Micro). The first input runs twice: QEMU runs with -icount, so the latency total and the
per-op counts must be identical both times, in the same unit.

Only one QEMU runs at a time (the firmware busy-polls its UART, so an idle QEMU eats a core):
tests are grouped by firmware and the previous QEMU is stopped before the next one starts.
"""

from __future__ import annotations

import contextlib
import inspect
import shutil
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from paths import (
    SHARED_DATA,
    SHARED_INT8,
    SHARED_MODELS,
    SKIP_NO_SHARED,
    model_id,
)
from paths import project_models as _project_models
from tinyhost import reference
from tinyhost.boards import Board, load_board
from tinyhost.codegen.blob import build_blob
from tinyhost.codegen.interpreter import convert, target_for
from tinyhost.deploy.protocol import Device
from tinyhost.deploy.runner import ModelRun, build_firmware, invoke_once, open_device
from tinyhost.ir import Graph
from tinyhost.quantize.quantizer import is_float_model
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_qemu_e2e"
UNITS = ("instructions", "systick", "cycles")

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed",
)

PROJECT_INT8 = [p for p in _project_models() if not is_float_model(read_model(p))]
# The LOAD_MODEL firmware's seed model: a project model, so it exists without ../shared.
SEED = REPO / "tests" / "models" / "fc_pertensor_bias_relu6_nobias_int8.tflite"


@dataclass(frozen=True)
class BoardPlan:
    """How a board's models run: which shared ones, and which are compiled in."""

    arena: int  # the LOAD_MODEL firmware's arena
    load_capacity: int  # its LOAD_MODEL buffer
    shared: tuple[str, ...]  # shared int8 models run on this board (all project ones run)
    compiled: tuple[str, ...]  # of those, compiled into their own firmware


ALL_SHARED = tuple(m.removesuffix(".tflite") for m in SHARED_INT8)
PLANS = {
    # 4 MiB RAM: every model. The two biggest blobs (~250 KB) take ~10-20 s over the emulated
    # UART, longer than building a firmware with the blob in flash.
    "mps2-an386": BoardPlan(256 << 10, 384 << 10, ALL_SHARED,
                            ("mlperf_tiny/vww_96_int8", "mlperf_tiny/ad01_int8")),
    "mps2-an500": BoardPlan(256 << 10, 384 << 10,
                            ("mlperf_tiny/kws_ref_model", "mlperf_tiny/vww_96_int8",
                             "tflm/hello_world_int8", "tflm/micro_speech_quantized",
                             "tflm/network_model", "tflm/simple_add_model"),
                            ("mlperf_tiny/vww_96_int8",)),
    # 512 KiB DTCM.
    "mps3-an547": BoardPlan(64 << 10, 320 << 10,
                            ("mlperf_tiny/kws_ref_model", "mlperf_tiny/pretrainedResnet_quant",
                             "tflm/hello_world_int8", "tflm/micro_speech_quantized",
                             "tflm/network_model", "tflm/simple_add_model"),
                            ("mlperf_tiny/pretrainedResnet_quant",)),
    # 128 KiB SRAM: 48 KiB arena (simple_add needs all of it) + 48 KiB LOAD_MODEL buffer;
    # ResNet's arena alone (~49 KB) leaves no room for its 85 KB blob: compiled in.
    "netduinoplus2": BoardPlan(48 << 10, 48 << 10,
                               ("mlperf_tiny/kws_ref_model", "mlperf_tiny/pretrainedResnet_quant",
                                "tflm/hello_world_int8", "tflm/micro_speech_quantized",
                                "tflm/network_model", "tflm/simple_add_model"),
                               ("mlperf_tiny/pretrainedResnet_quant",)),
}  # fmt: skip
LOADED = "loaded"  # firmware key of a board's LOAD_MODEL firmware


def _cases() -> list:
    """(board, model path, firmware key), grouped by firmware so each QEMU starts once."""
    cases = []
    for board, plan in PLANS.items():
        compiled = [SHARED_MODELS / f"{m}.tflite" for m in plan.compiled]
        loaded = [SHARED_MODELS / f"{m}.tflite" for m in plan.shared if m not in plan.compiled]
        for path in loaded + PROJECT_INT8:
            cases.append((board, path, LOADED))
        for path in compiled:
            cases.append((board, path, model_id(path)))
    params = []
    for board, path, key in cases:
        marks = []
        if not path.is_file():
            reason = SKIP_NO_SHARED if not SHARED_MODELS.is_dir() else f"{path} absent"
            marks = [pytest.mark.skip(reason=reason)]
        params.append(pytest.param(board, path, key, marks=marks,
                                   id=f"{board}-{model_id(path)}"))  # fmt: skip
    return params


# ---------------------------------------------------------------------------------------------
# Firmware and QEMU sessions


def _exact_latency_supported() -> bool:
    """Whether the runner can log exact instruction counts (QEMU icount plugin marks)."""
    return ("icount_out" in inspect.signature(open_device).parameters
            and "marks" in inspect.signature(invoke_once).parameters)  # fmt: skip


def _build(board: Board, key: str) -> Path:
    """The firmware `key` of `board`: the LOAD_MODEL one, or one with a shared model compiled in."""
    out = BUILD / board.name / key.replace("/", "-")
    if key == LOADED:
        plan = PLANS[board.name]
        conv = convert(read_model(SEED), board, out / "model", all_ops=True,
                       arena_bytes=plan.arena, load_capacity=plan.load_capacity)  # fmt: skip
    else:
        graph = read_model(SHARED_MODELS / f"{key}.tflite")
        conv = convert(graph, board, out / "model", load_capacity=0)
    return build_firmware(conv.out_dir, board, out / "build").elf


@dataclass
class Target:
    """A running firmware: the device, and the runner's exact-count mark log if any."""

    board: Board
    device: Device
    marks: object | None

    def run(self, inputs: list[np.ndarray]) -> ModelRun:
        if self.marks is None:
            return invoke_once(self.device, inputs)
        return invoke_once(self.device, inputs, self.marks,  # type: ignore[call-arg]
                           self.board.clock_hz or 0)  # fmt: skip


class QemuPool:
    """At most one QEMU at a time; the firmware of a (board, key) is built once."""

    def __init__(self) -> None:
        self._elves: dict[tuple[str, str], Path] = {}
        self._key: tuple[str, str] | None = None
        self._stack = contextlib.ExitStack()
        self._target: Target | None = None

    def target(self, board_name: str, key: str) -> Target:
        if self._key == (board_name, key) and self._target is not None:
            return self._target
        self.close()
        board = load_board(board_name)
        if (board_name, key) not in self._elves:
            self._elves[(board_name, key)] = _build(board, key)
        elf = self._elves[(board_name, key)]
        kwargs: dict[str, object] = {}
        marks = None
        if _exact_latency_supported():
            from tinyhost.deploy.icount import MarkLog

            log = elf.parent / "marks.txt"
            log.unlink(missing_ok=True)
            kwargs["icount_out"] = log
            marks = MarkLog(log)
        device = self._stack.enter_context(
            open_device(elf, board, timeout=1200.0, request_timeout=20.0, **kwargs)
        )
        self._key = (board_name, key)
        self._target = Target(board, device, marks)
        return self._target

    def close(self) -> None:
        self._stack.close()
        self._stack = contextlib.ExitStack()
        self._key = None
        self._target = None


@pytest.fixture(scope="module")
def pool() -> Iterator[QemuPool]:
    p = QemuPool()
    try:
        yield p
    finally:
        p.close()


# ---------------------------------------------------------------------------------------------
# Inputs and checks


def _random_input(graph: Graph, index: int, rng: np.random.Generator) -> np.ndarray:
    t = graph.tensors[index]
    if t.dtype == np.float32:
        return rng.normal(0, 1.0, t.shape).astype(np.float32)
    info = np.iinfo(t.dtype)
    return rng.integers(info.min, info.max + 1, t.shape).astype(t.dtype)


def _sample_input(path: Path, graph: Graph) -> list[np.ndarray] | None:
    """A real sample input for the shared models that have one (kws, ic)."""
    samples = {"kws_ref_model": "mlperf_tiny/kws_input0_49x10_int8.npy",
               "pretrainedResnet_quant": "mlperf_tiny/ic_input0_32x32x3_uint8.npy"}  # fmt: skip
    rel = samples.get(path.stem)
    if rel is None or not (SHARED_DATA / rel).is_file() or len(graph.inputs) != 1:
        return None
    x = np.load(SHARED_DATA / rel)
    t = graph.tensors[graph.inputs[0]]
    if x.size != int(np.prod(t.shape)) or t.dtype != np.int8:
        return None
    if x.dtype == np.uint8:
        x = (x.astype(np.int16) - 128).astype(np.int8)
    return [x.astype(np.int8).reshape(t.shape)]


def _input_sets(path: Path, graph: Graph) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(zlib.crc32(path.stem.encode()))
    sets = [[_random_input(graph, i, rng) for i in graph.inputs] for _ in range(2)]
    sample = _sample_input(path, graph)
    return [sample, sets[1]] if sample is not None else sets


def _assert_bit_exact(run: ModelRun, graph: Graph, inputs: list[np.ndarray], what: str) -> None:
    expected = reference.run(graph, inputs).outputs
    assert len(run.outputs) == len(expected), what
    for k, (got, want) in enumerate(zip(run.outputs, expected)):
        assert got.dtype == want.dtype and got.shape == want.shape, f"{what} output {k}"
        np.testing.assert_array_equal(got, want, err_msg=f"{what} output {k}")


def _assert_latency(run: ModelRun, graph: Graph, what: str) -> None:
    lat = run.latency
    assert lat.unit in UNITS, f"{what}: latency unit {lat.unit!r}"
    assert len(lat.per_op) == len(graph.ops), what
    assert lat.total > 0, what
    # Per-op spans are disjoint parts of the invoke: together no more than the whole.
    assert sum(lat.per_op) <= lat.total, f"{what}: {sum(lat.per_op)} > {lat.total}"


@pytest.mark.parametrize("board,path,key", _cases())
def test_model_bit_exact_on_qemu(pool: QemuPool, board: str, path: Path, key: str) -> None:
    graph = read_model(path)
    target = pool.target(board, key)
    blob = build_blob(graph, target_for(target.board), name=path.stem)
    if key == LOADED:
        target.device.load_model(blob.data)
    info = target.device.info()
    assert info.model_ready and info.model_hash == blob.crc
    assert info.board == board and info.backend == "interpreter"
    assert info.n_ops == len(graph.ops)

    first, second = _input_sets(path, graph)
    run_a = target.run(first)
    run_b = target.run(second)
    run_a2 = target.run(first)  # same input again: same outputs, same counts
    _assert_bit_exact(run_a, graph, first, "input 0")
    _assert_bit_exact(run_b, graph, second, "input 1")
    _assert_bit_exact(run_a2, graph, first, "input 0 again")
    for run, what in ((run_a, "input 0"), (run_b, "input 1"), (run_a2, "input 0 again")):
        _assert_latency(run, graph, what)
    assert run_a2.latency.unit == run_a.latency.unit
    assert run_a2.latency.total == run_a.latency.total, "latency total differs between runs"
    assert run_a2.latency.per_op == run_a.latency.per_op, "per-op counts differ between runs"
