"""A fault on the device is reported, not hung: the firmware's fault handler sends a FAULT frame
(the op it was running, the exception, the fault registers) before it ends, and the host fails
the run with "device fault in op N (KIND): ..." (exit code 2 from the CLI)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost.boards import load_board
from tinyhost.codegen import get_backend
from tinyhost.deploy.build import build
from tinyhost.deploy.protocol import DeviceFault
from tinyhost.deploy.runner import invoke_once, open_device
from tinyhost.errors import DeployError
from tinyhost.paths import repo_root
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_faults"

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed")  # fmt: skip


@pytest.mark.parametrize("board_name", ["mps2-an386", "mps3-an547"])
def test_injected_fault_is_reported_with_its_op(board_name: str) -> None:
    """A compiled model whose op 2 (execution order) executes UDF: UsageFault, escalated."""
    graph = read_model(PROJECT_MODELS / "kws_dscnn_int8.tflite")
    board = load_board(board_name)
    work = BUILD / board_name
    conv = get_backend("compiled").convert(graph, board, work / "model")
    fw = build(repo_root() / "firmware" / "app", board, work / "build",
               defines={"TH_FAULT_INJECT_OP": 2}, model_dir=work / "model")  # fmt: skip
    x = np.zeros(graph.tensors[graph.inputs[0]].shape, np.int8)
    with open_device(fw.elf, board, timeout=60.0) as device:
        assert device.info().model_ready  # the fault strikes only inside invoke
        with pytest.raises(DeviceFault) as caught:
            invoke_once(device, [x])
    fault = caught.value
    assert fault.op == 2
    assert fault.kind == "UsageFault: UNDEFINSTR, escalated to HardFault"
    assert fault.registers["cfsr"] >> 16 & 1 and fault.registers["hfsr"] >> 30 & 1
    assert re.match(r"device fault in op 2 \(UsageFault: UNDEFINSTR, escalated to HardFault\): "
                    r"pc=0x[0-9a-f]{8}", str(fault))  # fmt: skip
    assert conv.op_order[2] == 2  # what the runner names: the source op


def test_run_fails_naming_the_source_op(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_model turns the fault into one DeployError naming the op as the model numbers it."""
    from tinyhost.deploy.runner import build as real
    from tinyhost.deploy.runner import run_model

    def with_fault(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        kwargs["defines"] = {**(kwargs.get("defines") or {}), "TH_FAULT_INJECT_OP": 1}
        return real(*args, **kwargs)

    monkeypatch.setattr("tinyhost.deploy.runner.build", with_fault)
    graph = read_model(PROJECT_MODELS / "kws_dscnn_int8.tflite")
    x = np.zeros(graph.tensors[graph.inputs[0]].shape, np.int8)
    with pytest.raises(DeployError, match=r"mps2-an386: device fault in op 1 \(DEPTHWISE_CONV_2D\) "
                                          r"\(UsageFault: UNDEFINSTR"):  # fmt: skip
        run_model(graph, "mps2-an386", [[x]], backend="compiled",
                  work_dir=BUILD / "run-model")  # fmt: skip


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_guard_bytes_pass_a_clean_invoke(backend: str) -> None:
    """A debug build (guard bytes after the arena, checked after every invoke) runs the model
    bit-exact: the guards sit outside every planned buffer."""
    from tinyhost import reference

    graph = read_model(PROJECT_MODELS / "kws_dscnn_int8.tflite")
    board = load_board("mps2-an386")
    work = BUILD / f"guards-{backend}"
    get_backend(backend).convert(graph, board, work / "model")
    fw = build(repo_root() / "firmware" / "app", board, work / "build",
               defines={"TH_DEBUG_GUARDS": True}, model_dir=work / "model")  # fmt: skip
    x = np.random.default_rng(1).integers(-128, 128, graph.tensors[graph.inputs[0]].shape)
    x = x.astype(np.int8)
    with open_device(fw.elf, board, timeout=60.0) as device:
        run = invoke_once(device, [x])
    np.testing.assert_array_equal(run.outputs[0], reference.run(graph, [x]).outputs[0])


def test_write_past_the_arena_is_reported() -> None:
    """A compiled model whose op 1 writes one byte past the arena: the invoke fails saying so,
    and the next invoke (guards restored) runs."""
    from tinyhost.deploy.protocol import DeviceError

    graph = read_model(PROJECT_MODELS / "kws_dscnn_int8.tflite")
    board = load_board("mps2-an386")
    work = BUILD / "overrun"
    get_backend("compiled").convert(graph, board, work / "model")
    fw = build(repo_root() / "firmware" / "app", board, work / "build",
               defines={"TH_DEBUG_GUARDS": True, "TH_OVERRUN_INJECT_OP": 1},
               model_dir=work / "model")  # fmt: skip
    x = np.zeros(graph.tensors[graph.inputs[0]].shape, np.int8)
    with open_device(fw.elf, board, timeout=60.0) as device:
        with pytest.raises(DeviceError, match="wrote past the model's arena"):
            invoke_once(device, [x])
        assert device.info().model_ready  # the device is still there and answers


def test_a_fault_resets_and_the_device_comes_back() -> None:
    """Built as hardware builds are (TH_FAULT_RESET: reset after the report instead of ending),
    the device reports the fault, resets (QEMU restarts the machine on SYSRESETREQ), and
    answers again: READY, INFO with the model bound, and the same fault on the next invoke."""
    graph = read_model(PROJECT_MODELS / "kws_dscnn_int8.tflite")
    board = load_board("mps2-an386")
    work = BUILD / "reset"
    get_backend("compiled").convert(graph, board, work / "model")
    fw = build(repo_root() / "firmware" / "app", board, work / "build",
               defines={"TH_FAULT_INJECT_OP": 1, "TH_FAULT_RESET": True},
               model_dir=work / "model")  # fmt: skip
    x = np.zeros(graph.tensors[graph.inputs[0]].shape, np.int8)
    with open_device(fw.elf, board, timeout=60.0) as device:
        for _ in range(2):
            with pytest.raises(DeviceFault) as caught:
                invoke_once(device, [x])
            assert caught.value.op == 1
            assert device.info().model_ready  # after the reset


def test_stack_overflow_is_reported() -> None:
    """A firmware linked with a stack smaller than its invoke needs: the canary words at the
    stack's limit change, the invoke fails saying so, and the device keeps answering."""
    from tinyhost.deploy.protocol import DeviceError

    graph = read_model(PROJECT_MODELS / "kws_dscnn_int8.tflite")
    board = load_board("mps2-an386")
    work = BUILD / "stack-overflow"
    get_backend("compiled").convert(graph, board, work / "model")
    fw = build(repo_root() / "firmware" / "app", board, work / "build",
               defines={"TH_STACK_BYTES": 1024}, model_dir=work / "model")  # fmt: skip
    x = np.zeros(graph.tensors[graph.inputs[0]].shape, np.int8)
    with open_device(fw.elf, board, timeout=60.0) as device:
        with pytest.raises(DeviceError, match="overflowed the device's stack"):
            invoke_once(device, [x])
        assert device.info().model_ready
