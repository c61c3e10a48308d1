"""The interpreter firmware on the host board: LOAD_MODEL swaps, and a hostile link.

The firmware is built with ASan + UBSan (-DTH_SANITIZE=ON): any memory error kills it, which
the next request would notice. Every exchange has a timeout; nothing can hang.
"""

from __future__ import annotations

import os
import signal
import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost import reference
from tinyhost.boards import load_board
from tinyhost.codegen.blob import build_blob
from tinyhost.codegen.interpreter import convert, target_for
from tinyhost.deploy.protocol import (
    Device,
    DeviceError,
    DeviceTimeout,
    ErrorCode,
    MsgType,
    encode_frame,
)
from tinyhost.deploy.runner import build_firmware, invoke_once, open_device
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_interpreter_protocol"
MODEL_A = PROJECT_MODELS / "kws_dscnn_int8.tflite"  # compiled in
MODEL_B = PROJECT_MODELS / "mobilenet_block_residual_int8.tflite"  # loaded at run time


@pytest.fixture(scope="module")
def firmware() -> Path:
    board = load_board("host")
    conv = convert(read_model(MODEL_A), board, BUILD / "model", all_ops=True,
                   arena_bytes=64 << 10)  # fmt: skip
    return build_firmware(conv.out_dir, board, BUILD / "build", sanitize=True).elf


@pytest.fixture
def device(firmware: Path) -> Iterator[Device]:
    with open_device(firmware, "host", request_timeout=5.0) as dev:
        yield dev


def _inputs(path: Path, seed: int) -> tuple[object, list[np.ndarray]]:
    graph = read_model(path)
    rng = np.random.default_rng(seed)
    return graph, [rng.integers(-128, 128, graph.tensors[i].shape).astype(np.int8)
                   for i in graph.inputs]  # fmt: skip


def _assert_runs(device: Device, path: Path, seed: int) -> None:
    graph, x = _inputs(path, seed)
    run = invoke_once(device, x)
    for got, want in zip(run.outputs, reference.run(graph, x).outputs):
        np.testing.assert_array_equal(got, want)


def test_compiled_in_model_then_load_model_swaps_without_rebuild(device: Device) -> None:
    info = device.info()
    assert info.model_ready and info.model_name == MODEL_A.stem
    _assert_runs(device, MODEL_A, 1)

    blob_b = build_blob(read_model(MODEL_B), target_for(load_board("host")))
    device.load_model(blob_b.data)
    info = device.info()
    assert info.model_hash == blob_b.crc and info.n_ops == len(read_model(MODEL_B).ops)
    _assert_runs(device, MODEL_B, 2)  # the very next INVOKE uses B

    blob_a = build_blob(read_model(MODEL_A), target_for(load_board("host")))
    device.load_model(blob_a.data)
    _assert_runs(device, MODEL_A, 3)


def test_invalid_blob_is_refused_and_leaves_no_model(device: Device) -> None:
    blob = bytearray(build_blob(read_model(MODEL_B), target_for(load_board("host"))).data)
    blob[200] ^= 0x10  # stale CRC
    with pytest.raises(DeviceError) as e:
        device.load_model(bytes(blob))
    assert e.value.code == ErrorCode.MODEL_INVALID
    assert e.value.detail & 0xFF == 5  # TH_INTERP_E_CRC
    assert not device.info().model_ready
    with pytest.raises(DeviceError) as e:
        device.invoke()
    assert e.value.code == ErrorCode.BAD_STATE
    # a good blob afterwards is accepted
    device.load_model(build_blob(read_model(MODEL_B), target_for(load_board("host"))).data)
    _assert_runs(device, MODEL_B, 4)


def test_blob_for_another_kernel_build_is_refused(device: Device) -> None:
    from tinyhost.codegen.blob import BlobTarget

    dsp_blob = build_blob(read_model(MODEL_B), BlobTarget(interleaved=True, dsp=True))
    with pytest.raises(DeviceError) as e:
        device.load_model(dsp_blob.data)
    assert e.value.code == ErrorCode.MODEL_INVALID and e.value.detail & 0xFF == 7


def test_bad_requests_get_errors_and_device_stays_ready(device: Device) -> None:
    device.info()
    with pytest.raises(DeviceError) as e:  # input index out of range
        device.request(MsgType.SET_INPUT, struct.pack("<BI", 9, 0) + b"\x01")
    assert e.value.code == ErrorCode.BAD_ARG
    with pytest.raises(DeviceError) as e:  # data past the end of the tensor
        device.request(MsgType.SET_INPUT, struct.pack("<BI", 0, 10**6) + b"\x01")
    assert e.value.code == ErrorCode.BAD_ARG
    with pytest.raises(DeviceError) as e:  # unknown type
        device.request(0x33, b"xyz")
    assert e.value.code == ErrorCode.UNKNOWN_TYPE
    with pytest.raises(DeviceError) as e:  # wrong payload length for INVOKE
        device.request(MsgType.GET_OUTPUT, b"\x00")
    assert e.value.code == ErrorCode.BAD_PAYLOAD
    _assert_runs(device, MODEL_A, 5)


def test_garbage_and_corrupt_frames_then_recovery(device: Device) -> None:
    rng = np.random.default_rng(9)
    link = device.link
    for _ in range(30):
        link.send_bytes(rng.integers(0, 256, int(rng.integers(1, 400)), dtype=np.uint8).tobytes())
    frame = bytearray(encode_frame(MsgType.INVOKE, 77))
    frame[3] ^= 0x40  # corrupt inside the COBS body: a link error, never acted on
    link.send_bytes(bytes(frame))
    link.send_bytes(b"\x00" + b"\x05" * 3000 + b"\x00")  # over-long frame
    # The device answered the junk with link errors (dropped as stale); it still works.
    device.hello()
    _assert_runs(device, MODEL_A, 6)


def test_silent_link_times_out_then_recovers(device: Device) -> None:
    proc = device.link.process
    assert proc is not None
    device.timeout, device.retries = 0.3, 1
    os.kill(proc.pid, signal.SIGSTOP)  # the device goes silent
    try:
        with pytest.raises(DeviceTimeout):
            device.hello()
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    device.timeout, device.retries = 5.0, 3
    device.hello()  # late replies to the timed-out HELLO are stale and dropped
    _assert_runs(device, MODEL_A, 7)
