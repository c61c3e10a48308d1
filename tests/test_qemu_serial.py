"""The serial protocol against the interpreter firmware on QEMU, over a hostile link.

QEMU's UART is a TCP server (`-serial tcp:...,server=on,wait=on`, deploy/qemu.py); the
firmware's real UART driver (CMSDK on mps2-an386, STM32 USART on netduinoplus2), th_proto.c
and the interpreter sit behind it. Each test starts its own QEMU, abuses the link (garbage,
corrupt frames, a byte-at-a-time host, TCP disconnects, a silent link), then checks the device
still answers HELLO and INFO and runs an INVOKE bit-exact with the NumPy reference. Every read
has a timeout and every QEMU is killed by its session (and its watchdog), so nothing hangs.
firmware/protocol/README.md is the wire spec; tests/test_protocol.py covers the same against
the native test device.
"""

from __future__ import annotations

import shutil
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import serial

from paths import PROJECT_MODELS
from tinyhost import reference
from tinyhost.boards import load_board
from tinyhost.codegen.interpreter import convert
from tinyhost.deploy.protocol import (
    HEADER,
    LINK_ERRORS,
    Device,
    DeviceTimeout,
    ErrorCode,
    Frame,
    Link,
    MsgType,
    cobs_encode,
    crc32,
)
from tinyhost.deploy.qemu import Session, open_session
from tinyhost.deploy.runner import build_firmware, invoke_once
from tinyhost.errors import TinyhostError
from tinyhost.ir import Graph
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_qemu_serial"
MODEL = PROJECT_MODELS / "kws_dscnn_int8.tflite"  # compiled into the firmware
BOARDS = ("mps2-an386", "netduinoplus2")  # CMSDK UART and STM32 USART drivers
REPLY_WAIT = 10.0  # seconds for one reply under QEMU; a bound, not a speed figure

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed",
)


@dataclass(frozen=True)
class Firmware:
    board: str
    elf: Path
    blob_crc: int


@pytest.fixture(scope="module", params=BOARDS)
def firmware(request: pytest.FixtureRequest) -> Firmware:
    board = load_board(request.param)
    conv = convert(read_model(MODEL), board, BUILD / board.name / "model")
    fw = build_firmware(conv.out_dir, board, BUILD / board.name / "build")
    return Firmware(board.name, fw.elf, conv.model_hash)


@dataclass
class Qemu:
    """A running firmware, its TCP serial URL and a connected client."""

    fw: Firmware
    session: Session
    url: str
    device: Device

    @property
    def link(self) -> Link:
        return self.device.link


def _connect(url: str, name: str, *, timeout: float = REPLY_WAIT, ready: float = 0.0) -> Device:
    port = serial.serial_for_url(url, timeout=1.0)
    device = Device(Link(port, name), timeout=timeout, retries=2, invoke_timeout=60.0)
    device.connect(ready_timeout=ready)
    return device


@pytest.fixture
def qemu(firmware: Firmware) -> Iterator[Qemu]:
    with open_session(firmware.elf, firmware.board, timeout=300.0, port_timeout=1.0) as session:
        assert isinstance(session.port, serial.SerialBase)
        url = str(session.port.port)  # pyserial's "socket://127.0.0.1:PORT"
        assert url.startswith("socket://")
        device = Device(Link(session.port, f"{firmware.board} (QEMU)"), timeout=REPLY_WAIT,
                        retries=2, invoke_timeout=60.0)  # fmt: skip
        device.connect(ready_timeout=REPLY_WAIT)
        q = Qemu(firmware, session, url, device)
        try:
            yield q
        finally:
            q.device.close()


# ---------------------------------------------------------------------------------------------
# Helpers


def _graph() -> Graph:
    return read_model(MODEL)


def _random_inputs(graph: Graph, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, graph.tensors[i].shape).astype(np.int8) for i in graph.inputs]


def _assert_alive(device: Device, fw: Firmware, seed: int) -> None:
    """HELLO, INFO, then an INVOKE bit-exact with the reference."""
    assert device.hello().model_ready
    info = device.info()
    assert info.model_ready and info.model_hash == fw.blob_crc and info.board == fw.board
    graph = _graph()
    x = _random_inputs(graph, seed)
    run = invoke_once(device, x)
    for got, want in zip(run.outputs, reference.run(graph, x).outputs, strict=True):
        np.testing.assert_array_equal(got, want)


def _raw(frame_type: int, seq: int, payload: bytes, *, length: int | None = None,
         crc_xor: int = 0) -> bytes:  # fmt: skip
    """A decoded frame with an optionally wrong length field or CRC."""
    body = HEADER.pack(frame_type, seq, len(payload) if length is None else length) + payload
    return body + struct.pack("<I", crc32(body) ^ crc_xor)


def _wire(raw: bytes) -> bytes:
    return b"\0" + cobs_encode(raw) + b"\0"


def _receive(link: Link) -> Frame:
    frame = link.receive(REPLY_WAIT)
    assert frame is not None, f"no reply within {REPLY_WAIT} s"
    return frame


def _error(frame: Frame) -> tuple[int, int, int]:
    assert frame.type == MsgType.ERROR, f"expected ERROR, got type 0x{frame.type:02x}"
    code, request_type, detail = struct.unpack("<BBI", frame.payload)
    return code, request_type, detail


def _frames_in(data: bytes) -> int:
    """Non-empty chunks between delimiters: the device answers each with one frame."""
    return len([s for s in data.split(b"\0") if s])


# ---------------------------------------------------------------------------------------------
# Garbage and corrupt frames


def test_random_garbage_gets_one_link_error_per_frame(qemu: Qemu) -> None:
    rng = np.random.default_rng(21)
    link = qemu.link
    for size in (1, 40, 700, 2500):
        for zero_every in (5, 300):
            data = rng.integers(1, 256, size, dtype=np.uint8)
            data[rng.random(size) < 1 / zero_every] = 0
            burst = b"\0" + data.tobytes() + b"\0"
            link.send_bytes(burst)
            for _ in range(_frames_in(burst)):  # exactly one reply per non-empty frame
                assert _error(_receive(link))[0] in LINK_ERRORS
            assert link.receive(0.2) is None
    link.send_bytes(b"\x05\x01\x02\x07")  # no delimiter: the next frame's 0x00 ends it
    _assert_alive(qemu.device, qemu.fw, 1)
    assert qemu.device.stale_replies >= 1  # the error about the partial garbage


def test_corrupt_frames_get_link_errors_and_are_never_acted_on(qemu: Qemu) -> None:
    device, link = qemu.device, qemu.link
    max_payload = device.max_payload
    cases = [  # name, wire bytes, expected code, expected seq
        ("bad CRC", _wire(_raw(MsgType.HELLO, 301, b"", crc_xor=1)), ErrorCode.BAD_CRC, 301),
        ("length too big", _wire(_raw(MsgType.SET_INPUT, 302, bytes(8), length=9)),
         ErrorCode.BAD_LENGTH, 302),
        ("length too small", _wire(_raw(MsgType.INVOKE, 303, bytes(8), length=2)),
         ErrorCode.BAD_LENGTH, 303),
        ("too long", _wire(_raw(MsgType.SET_INPUT, 304, bytes(max_payload + 1))),
         ErrorCode.FRAME_TOO_LONG, 304),
        ("bad COBS", b"\0\x09\x01\x31\x01\0", ErrorCode.BAD_FRAME, 0x0131),
        ("short", _wire(bytes([MsgType.HELLO, 0x32, 0x01, 0, 0])), ErrorCode.BAD_FRAME, 0x0132),
    ]  # fmt: skip
    for name, data, code, seq in cases:
        link.send_bytes(data)
        reply = _receive(link)
        got_code, _, detail = _error(reply)
        assert got_code == code, name
        assert reply.seq == seq, name
        if code == ErrorCode.FRAME_TOO_LONG:
            assert detail == max_payload, name
    for frame_type in (0x09, 0x42, MsgType.INFO | 0x80):  # 0x08 is RESET_STATE now
        link.send(frame_type, 77, b"abc")
        reply = _receive(link)
        assert reply.seq == 77
        assert _error(reply) == (ErrorCode.UNKNOWN_TYPE, frame_type, frame_type)
    assert link.receive(0.2) is None  # exactly one reply each

    # A SET_INPUT with a bad CRC is not stored: the INVOKE after it uses the good input.
    graph = _graph()
    x = _random_inputs(graph, 2)
    device.set_input(0, x[0])
    other = (~x[0].astype(np.uint8)).tobytes()[: max_payload - 5]
    link.send_bytes(_wire(_raw(MsgType.SET_INPUT, 401, struct.pack("<BI", 0, 0) + other,
                               crc_xor=0x100)))  # fmt: skip
    assert _error(_receive(link))[0] == ErrorCode.BAD_CRC
    device.invoke()
    got = device.get_output(0)
    np.testing.assert_array_equal(got, reference.run(graph, x).outputs[0])
    _assert_alive(device, qemu.fw, 3)


# ---------------------------------------------------------------------------------------------
# A slow host


class SlowPort:
    """Writes one byte at a time with a delay, and pauses mid-way through every write."""

    def __init__(self, inner: serial.SerialBase, delay: float, pause: float) -> None:
        self.inner = inner
        self.delay = delay
        self.pause = pause
        self.bytes_written = 0

    @property
    def timeout(self) -> float | None:
        return self.inner.timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self.inner.timeout = value

    def read(self, size: int = 1) -> bytes:
        return self.inner.read(size)

    def write(self, data: bytes) -> int:
        for i in range(len(data)):
            self.inner.write(data[i : i + 1])
            self.inner.flush()
            self.bytes_written += 1
            time.sleep(self.pause if i == len(data) // 2 else self.delay)
        return len(data)

    def close(self) -> None:
        self.inner.close()


def test_slow_host_byte_at_a_time(qemu: Qemu) -> None:
    device = qemu.device
    slow = SlowPort(device.link.port, delay=0.001, pause=0.3)  # type: ignore[arg-type]
    device.link.port = slow
    _assert_alive(device, qemu.fw, 4)
    assert slow.bytes_written > len(_random_inputs(_graph(), 4)[0].tobytes())
    assert device.retries_used == 0  # every request arrived whole, however slowly


# ---------------------------------------------------------------------------------------------
# Disconnects and a silent link


def test_disconnect_and_reconnect(qemu: Qemu) -> None:
    name = f"{qemu.fw.board} (QEMU, reconnected)"
    _assert_alive(qemu.device, qemu.fw, 5)
    qemu.device.close()  # clean disconnect between requests

    qemu.device = _connect(qemu.url, name)  # READY came once, at boot: HELLO starts the session
    _assert_alive(qemu.device, qemu.fw, 6)

    # Disconnect in the middle of a frame: the next frame's 0x00 ends the partial one.
    graph = _graph()
    x = _random_inputs(graph, 7)
    half = _wire(_raw(MsgType.SET_INPUT, 501, struct.pack("<BI", 0, 0) + x[0].tobytes()))
    qemu.link.send_bytes(half[: len(half) // 2])
    qemu.device.close()
    qemu.device = _connect(qemu.url, name)
    _assert_alive(qemu.device, qemu.fw, 8)

    # Disconnect with a reply in flight: the request is acted on, its reply is lost.
    qemu.link.send(MsgType.INVOKE, 502)
    qemu.device.close()
    qemu.device = _connect(qemu.url, name)
    _assert_alive(qemu.device, qemu.fw, 9)


def test_silent_link_times_out_then_device_still_works(qemu: Qemu) -> None:
    # QEMU serves one client at a time: a second connection is accepted by the kernel but
    # never read by QEMU, a link on which nothing ever answers.
    silent_port = serial.serial_for_url(qemu.url, timeout=1.0)
    silent = Device(Link(silent_port, "silent"), timeout=0.3, retries=2)
    try:
        start = time.monotonic()
        with pytest.raises(DeviceTimeout) as e:
            silent.hello()
        assert time.monotonic() - start < 30  # bounded: a hang guard, not a speed figure
        assert isinstance(e.value, TinyhostError)
        assert "HELLO" in str(e.value) and "after 2 retries" in str(e.value)
        assert "silent" in str(e.value) and silent.retries_used == 2
        with pytest.raises(DeviceTimeout, match="READY"):
            silent.wait_ready(0.3)
    finally:
        silent.close()
    _assert_alive(qemu.device, qemu.fw, 10)
