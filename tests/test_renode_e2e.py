"""End to end on the Renode boards (stm32f4_discovery, stm32f746g_disco): every int8 model
through the real interpreter firmware and through its compiled firmware on Renode, bit-exact
with the NumPy reference.

Per board one firmware is built with every kernel and a LOAD_MODEL buffer, and one Renode
process serves all models that fit it over LOAD_MODEL (a Renode start costs ~2-3 s, a build
more); blobs too big for the buffer are compiled into their own firmware, which the same
Renode loads in place of the first (RenodeSession.reload, ~0.1 s), as it loads each model's
compiled-backend firmware. Each model runs two
inputs and must report a per-op profile with one count per op.

Renode comes from `make setup` (../shared/tools/renode unpacked into build/): where ../shared
carries it these tests run, never skip.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from paths import SHARED_INT8, SHARED_MODELS, model_id
from paths import project_models as _project_models
from test_renode import NEEDS_RENODE
from tinyhost import reference
from tinyhost.boards import load_board
from tinyhost.codegen import get_backend
from tinyhost.codegen.interpreter import convert
from tinyhost.deploy.protocol import Device, Link
from tinyhost.deploy.renode import RenodeSession, open_renode_session
from tinyhost.deploy.runner import build_firmware, invoke_once, renode_latency
from tinyhost.errors import DeployError
from tinyhost.quantize.quantizer import is_float_model
from tinyhost.reference.executor import random_inputs
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_renode_e2e"
PROJECT_INT8 = [p for p in _project_models() if not is_float_model(read_model(p))]
SEED = REPO / "tests" / "models" / "fc_pertensor_bias_relu6_nobias_int8.tflite"
LOADED = "loaded"

pytestmark = NEEDS_RENODE


@dataclass(frozen=True)
class BoardPlan:
    arena: int  # the LOAD_MODEL firmware's arena
    load_capacity: int  # its LOAD_MODEL buffer
    shared: tuple[str, ...]  # shared int8 models run on this board (all project ones run)
    compiled: tuple[str, ...]  # of those, compiled into their own firmware


ALL_SHARED = tuple(m.removesuffix(".tflite") for m in SHARED_INT8)
PLANS = {
    # 128 KiB SRAM: every shared model; ResNet's, VWW's and AD01's blobs (85-270 KB) go in
    # flash with their own firmware (VWW's arena is ~41 KB, AD01's under 1 KB).
    "stm32f4_discovery": BoardPlan(48 << 10, 48 << 10, ALL_SHARED,
                                   ("mlperf_tiny/pretrainedResnet_quant",
                                    "mlperf_tiny/vww_96_int8", "mlperf_tiny/ad01_int8")),
    # 320 KiB SRAM: the ~250 KB blobs are compiled in.
    "stm32f746g_disco": BoardPlan(112 << 10, 128 << 10, ALL_SHARED,
                                  ("mlperf_tiny/vww_96_int8", "mlperf_tiny/ad01_int8")),
}  # fmt: skip


def _cases() -> list:
    params = []
    for board, plan in PLANS.items():
        compiled = [SHARED_MODELS / f"{m}.tflite" for m in plan.compiled]
        loaded = [SHARED_MODELS / f"{m}.tflite" for m in plan.shared if m not in plan.compiled]
        cases = [(p, LOADED) for p in loaded + PROJECT_INT8] + [(p, model_id(p)) for p in compiled]
        for path, key in cases:
            params.append(pytest.param(board, path, key, id=f"{board}-{model_id(path)}"))
    return params


# Renode's watchdog bounds one firmware's run, and the interpreter firmware serves ~30 models
# (LOAD_MODEL) in one run: each exchange is bounded by the Device's own timeouts, so this is
# only the backstop against a hung Renode, sized for a loaded 2-core machine (two xdist workers).
RUN_TIMEOUT = 3600.0


class RenodePool:
    """One Renode, of the board in use; a test that wants another firmware gets it loaded into
    the running machine (RenodeSession.reload), the same firmware is reused as it is."""

    def __init__(self) -> None:
        self._key: tuple[str, str] | None = None
        self._stack = contextlib.ExitStack()
        self._device: Device | None = None
        self._sessions: dict[str, RenodeSession] = {}

    def device(self, board_name: str, key: str) -> Device:
        if self._key == (board_name, key) and self._device is not None:
            return self._device
        if self._device is not None:
            self._device.close()
            self._device = None
        board = load_board(board_name)
        out = BUILD / board_name / key.replace("/", "-")
        if key == LOADED:
            plan = PLANS[board_name]
            conv = convert(read_model(SEED), board, out / "model", all_ops=True,
                           arena_bytes=plan.arena, load_capacity=plan.load_capacity)  # fmt: skip
        else:
            conv = convert(read_model(SHARED_MODELS / f"{key}.tflite"), board, out / "model",
                           load_capacity=0)  # fmt: skip
        return self.load(board_name, key, build_firmware(conv.out_dir, board, out / "build").elf)

    def load(self, board_name: str, key: str, elf: Path) -> Device:
        """The device running `elf` (known as `key`) on the board's Renode."""
        if self._key == (board_name, key) and self._device is not None:
            return self._device
        if self._device is not None:
            self._device.close()
            self._device = None
        for other in [b for b in self._sessions if b != board_name]:
            # An idle Renode keeps emulating its firmware's UART polling (about half a core):
            # one alive at a time, as the cases run board by board.
            self._sessions.pop(other).close()
        session = self._sessions.get(board_name)
        if session is not None:
            try:
                session.reload(elf)
            except DeployError:  # that Renode is gone: later tests must not all fail with it
                session.close()
                del self._sessions[board_name]
                session = None
        if session is None:
            session = self._stack.enter_context(
                open_renode_session(elf, board_name, timeout=RUN_TIMEOUT))  # fmt: skip
            self._sessions[board_name] = session
        self._device = Device(Link(session.port, f"{board_name} (Renode)"), timeout=60.0,
                              invoke_timeout=60.0)  # fmt: skip
        self._device.connect(ready_timeout=60.0)
        self._key = (board_name, key)
        return self._device

    def close(self) -> None:
        if self._device is not None:
            self._device.close()
        self._stack.close()
        self._stack = contextlib.ExitStack()
        self._sessions = {}
        self._key = None
        self._device = None


@pytest.fixture(scope="module")
def pool() -> Iterator[RenodePool]:
    p = RenodePool()
    yield p
    p.close()


@pytest.mark.parametrize(("board", "path", "key"), _cases())
def test_model_bit_exact_on_renode(pool: RenodePool, board: str, path: Path, key: str) -> None:
    if not path.is_file():
        pytest.fail(f"{path} absent")  # ../shared is there (NEEDS_RENODE): its models must be
    graph = read_model(path)
    device = pool.device(board, key)
    if key == LOADED:
        from tinyhost.codegen.blob import build_blob
        from tinyhost.codegen.interpreter import target_for

        device.load_model(build_blob(graph, target_for(load_board(board))).data)
    info = device.info()
    assert info.model_ready
    assert info.selfcheck == "ok"  # the shared Renode computes SSUB8/SEL & co. as hardware does
    rng = np.random.default_rng(zlib.crc32(path.name.encode()))  # reproducible per model
    for _ in range(2):
        inputs = [rng.integers(-128, 128, graph.tensors[i].shape).astype(np.int8)
                  if graph.tensors[i].dtype == np.int8 else
                  rng.integers(0, 256, graph.tensors[i].shape).astype(graph.tensors[i].dtype)
                  for i in graph.inputs]  # fmt: skip
        run = invoke_once(device, inputs)
        want = reference.run(graph, inputs).outputs
        assert len(run.outputs) == len(want)
        for got, exp in zip(run.outputs, want):
            np.testing.assert_array_equal(got.reshape(exp.shape), exp)
        assert len(run.latency.per_op) == len(graph.ops)
        assert run.latency.total > 0


def _compiled_cases() -> list:
    shared = [SHARED_MODELS / f"{m}.tflite" for m in ALL_SHARED]
    return [pytest.param(board, path, id=f"{board}-{model_id(path)}")
            for board in PLANS for path in shared + PROJECT_INT8]


@pytest.mark.parametrize(("board", "path"), _compiled_cases())
def test_compiled_backend_bit_exact_on_renode(pool: RenodePool, board: str,
                                              path: Path) -> None:
    """Every int8 model's compiled firmware on both Renode boards, per-op profile included."""
    if not path.is_file():
        pytest.fail(f"{path} absent")
    graph = read_model(path)
    out = BUILD / f"compiled-{board}" / model_id(path).replace("/", "-")
    conv = get_backend("compiled").convert(graph, load_board(board), out / "model")
    elf = build_firmware(conv.out_dir, board, out / "build").elf
    device = pool.load(board, f"compiled:{model_id(path)}", elf)
    info = device.info()
    assert info.backend == "compiled" and info.model_hash == conv.model_hash
    assert info.selfcheck == "ok"
    rng = np.random.default_rng(zlib.crc32(path.name.encode()))
    for _ in range(2):
        inputs = random_inputs(graph, rng)
        run = renode_latency(invoke_once(device, inputs))
        for got, want in zip(run.outputs, reference.run(graph, inputs).outputs, strict=True):
            np.testing.assert_array_equal(got.reshape(want.shape), want)
        assert len(run.latency.per_op) == len(conv.op_order)
        assert run.latency.unit == "instructions" and run.latency.total > 0
