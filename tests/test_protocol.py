"""The serial protocol (ARCHITECTURE.md §4.5, firmware/protocol/README.md), both ends.

The device end runs as the native test device (firmware/protocol/test_device: th_proto with a
fake application), built with gcc and ASan/UBSan, over real pipes and a pty. Every read has a
timeout and every process is killed in a finally, so no test can hang.
"""

from __future__ import annotations

import hashlib
import os
import re
import select
import shutil
import struct
import subprocess
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tinyhost.deploy.protocol import (
    LINK_ERRORS,
    Device,
    DeviceError,
    DeviceTimeout,
    ErrorCode,
    Frame,
    FrameError,
    FrameReader,
    Link,
    MsgType,
    PipePort,
    cobs_decode,
    cobs_encode,
    crc32,
    decode_frame,
    encode_frame,
    parse_info,
)
from tinyhost.errors import InputDataError, TinyhostError

REPO = Path(__file__).resolve().parents[1]
PROTO_DIR = REPO / "firmware" / "protocol"
BUILD_DIR = REPO / "build" / "test_protocol"
CFLAGS = [
    "-std=c99",
    "-O1",
    "-g",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
]
# ASan's leak checker needs ptrace, which some containers forbid; leaks are not the point here.
SAN_ENV = {
    **os.environ,
    "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0",
    "UBSAN_OPTIONS": "print_stacktrace=1",
}

FAKE_IN_SIZE = 2000  # fake_app.h: input 0 is int8 [1, 40, 50]
FAKE_N_OPS = 300
MAX_PAYLOAD = 1024


# ---------------------------------------------------------------------------------------------
# Building the native programs


def _build(name: str, main_source: str) -> Path:
    """Compile th_proto + fake app + `main_source`, cached by a hash of sources and flags."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not found")
    sources = [
        PROTO_DIR / "th_proto.c",
        PROTO_DIR / "test_device" / "fake_app.c",
        PROTO_DIR / "test_device" / main_source,
    ]
    headers = [PROTO_DIR / "th_proto.h", PROTO_DIR / "test_device" / "fake_app.h"]
    digest = hashlib.sha256(" ".join(CFLAGS).encode())
    for path in sources + headers:
        digest.update(path.read_bytes())
    exe = BUILD_DIR / f"{name}-{digest.hexdigest()[:16]}"
    if not exe.exists():
        BUILD_DIR.mkdir(parents=True, exist_ok=True)
        tmp = exe.with_suffix(f".tmp{os.getpid()}")
        cmd = ["gcc", *CFLAGS, f"-I{PROTO_DIR}", *map(str, sources), "-o", str(tmp)]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"build failed: {' '.join(cmd)}\n{result.stderr}"
        os.replace(tmp, exe)
    return exe


@pytest.fixture(scope="session")
def device_exe() -> Path:
    return _build("test_device", "main.c")


@pytest.fixture(scope="session")
def fuzz_exe() -> Path:
    return _build("fuzz", "fuzz.c")


@pytest.fixture
def link(device_exe: Path, tmp_path: Path) -> Iterator[Link]:
    """A fresh test device over pipes. At the end it must exit cleanly on EOF (a sanitizer
    report would make its exit code non-zero)."""
    err_path = tmp_path / "device.stderr"
    with err_path.open("wb") as err:
        lnk = Link.spawn([str(device_exe)], stderr=err, env=SAN_ENV)
    proc = lnk.process
    assert proc is not None
    try:
        yield lnk
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        assert code == 0, f"device exit code {code}: {err_path.read_text()[-3000:]}"
    finally:
        lnk.close()


def make_device(link: Link, **kwargs: float) -> Device:
    """A client for the test device, after its READY."""
    dev = Device(link, **{"timeout": 2.0, "retries": 2, **kwargs})
    dev.wait_ready(5.0)
    return dev


def raw_frame(
    frame_type: int, seq: int, payload: bytes, *, length: int | None = None, crc_xor: int = 0
) -> bytes:
    """An unencoded frame, optionally with a lying length field or a wrong CRC."""
    length = len(payload) if length is None else length
    raw = struct.pack("<BHH", frame_type, seq, length) + payload
    return raw + struct.pack("<I", crc32(raw) ^ crc_xor)


def wire(raw: bytes) -> bytes:
    return b"\0" + cobs_encode(raw) + b"\0"


def error_fields(frame: Frame) -> tuple[int, int, int]:
    assert frame.type == MsgType.ERROR, frame
    return struct.unpack("<BBI", frame.payload)


def receive(link: Link, timeout: float = 5.0) -> Frame:
    frame = link.receive(timeout)
    assert frame is not None, "no reply from the test device"
    return frame


def expected_output(x: np.ndarray) -> np.ndarray:
    """fake_app.h: out = in * 3 + 1, wrapping in 8 bits."""
    return (x.astype(np.int64) * 3 + 1).astype(np.uint8).view(np.int8)


def valid_blob(body: bytes) -> bytes:
    return body + struct.pack("<I", zlib.crc32(body))


# ---------------------------------------------------------------------------------------------
# Framing: known vectors and properties


@pytest.mark.parametrize(
    ("data", "encoded"),
    [  # examples from the COBS paper / Wikipedia
        (b"", b"\x01"),
        (b"\x00", b"\x01\x01"),
        (b"\x00\x00", b"\x01\x01\x01"),
        (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
        (b"\x11\x22\x33\x44", b"\x05\x11\x22\x33\x44"),
        (b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
        (bytes(range(1, 255)), b"\xff" + bytes(range(1, 255))),
        (bytes(range(0, 255)), b"\x01\xff" + bytes(range(1, 255))),
        (bytes(range(1, 256)), b"\xff" + bytes(range(1, 255)) + b"\x02\xff"),
    ],
)
def test_cobs_known_vectors(data: bytes, encoded: bytes) -> None:
    assert cobs_encode(data) == encoded
    assert cobs_decode(encoded) == data


def test_crc32_check_value() -> None:
    assert crc32(b"123456789") == 0xCBF43926  # the CRC-32/IEEE catalogue check value


def test_decoder_accepts_trailing_empty_block_after_full_block() -> None:
    data = bytes(range(1, 255))
    assert cobs_decode(b"\xff" + data + b"\x01") == data


@given(st.binary(max_size=2000))
def test_cobs_roundtrip(data: bytes) -> None:
    enc = cobs_encode(data)
    assert 0 not in enc
    assert len(enc) <= len(data) + len(data) // 254 + 1
    assert cobs_decode(enc) == data


@given(st.binary(max_size=600))
def test_cobs_decode_any_bytes_raises_only_frame_error(data: bytes) -> None:
    try:
        out = cobs_decode(data)
    except FrameError:
        return
    assert cobs_decode(cobs_encode(out)) == out


@given(st.binary(max_size=600))
def test_decode_frame_any_bytes_raises_only_frame_error(data: bytes) -> None:
    try:
        frame = decode_frame(data)
    except FrameError as exc:
        assert isinstance(exc, TinyhostError)
        return
    # Only a well-formed frame may decode, and it must re-encode to the same frame.
    assert decode_frame(encode_frame(frame.type, frame.seq, frame.payload)[1:-1]) == frame


@given(st.integers(0, 255), st.integers(0, 0xFFFF), st.binary(max_size=1500))
def test_frame_roundtrip(frame_type: int, seq: int, payload: bytes) -> None:
    data = encode_frame(frame_type, seq, payload)
    assert data[0] == 0 and data[-1] == 0 and 0 not in data[1:-1]
    assert decode_frame(data[1:-1]) == Frame(frame_type, seq, payload)


@given(st.binary(min_size=1, max_size=300), st.integers(0, 10_000), st.integers(0, 7))
def test_single_bit_flip_is_detected(payload: bytes, where: int, bit: int) -> None:
    raw = bytearray(raw_frame(0x05, 7, payload))
    raw[where % len(raw)] ^= 1 << bit
    with pytest.raises(FrameError):
        decode_frame(cobs_encode(bytes(raw)))


frames_st = st.builds(Frame, st.integers(0, 255), st.integers(0, 0xFFFF), st.binary(max_size=300))


@given(
    st.lists(st.one_of(frames_st, st.binary(max_size=200)), max_size=12),
    st.lists(st.integers(1, 400), min_size=1, max_size=20),
)
def test_frame_reader_resynchronizes(items: list, cuts: list[int]) -> None:
    """Valid frames survive any garbage between delimiters, fed in any chunking."""
    stream = bytearray()
    for item in items:
        stream += (
            encode_frame(item.type, item.seq, item.payload) if isinstance(item, Frame) else item
        )
    reader = FrameReader()
    out: list = []
    pos, k = 0, 0
    while pos < len(stream):
        n = cuts[k % len(cuts)]
        out += reader.feed(bytes(stream[pos : pos + n]))
        pos, k = pos + n, k + 1
    out += reader.feed(b"\0")
    got = [f for f in out if isinstance(f, Frame)]
    assert all(isinstance(f, (Frame, FrameError)) for f in out)
    want = [f for f in items if isinstance(f, Frame)]
    it = iter(got)  # the valid frames appear, in order (garbage could add, never remove)
    assert all(any(g == w for g in it) for w in want)


def test_frame_reader_drops_overlong_frame_then_recovers() -> None:
    reader = FrameReader(max_frame=100)
    good = encode_frame(0x81, 3, b"ok")
    out = reader.feed(b"\x05" * 1000 + good)
    assert isinstance(out[0], FrameError) and "longer" in str(out[0])
    assert out[1:] == [Frame(0x81, 3, b"ok")]


def test_parse_info_rejects_every_truncation() -> None:
    record = (
        struct.pack("<HB", 1, 3)
        + b"\x01a\x01b\x01c\x01d"
        + struct.pack("<IIBIHBB", 7, 8, 2, 0, 5, 1, 0)
        + struct.pack("<BBIIfi", 0, 2, 3, 4, 0.5, -1)
    )
    info = parse_info(record)
    assert info.inputs[0].shape == (3, 4) and info.counter_unit == "instructions"
    for cut in range(len(record)):
        with pytest.raises(ValueError):
            parse_info(record[:cut])


# ---------------------------------------------------------------------------------------------
# Python-only link behaviour over pyserial's loop:// (the host hears its own requests)


def loop_link() -> Link:
    pytest.importorskip("serial")
    return Link.open("loop://")


def test_loop_link_ignores_own_request_and_stale_replies() -> None:
    with loop_link() as lnk:
        dev = Device(lnk, timeout=1.0, retries=0, first_seq=10)
        hello = struct.pack("<HHB", 1, 512, 1)
        lnk.send_bytes(
            encode_frame(0x81, 9, hello)  # late reply to an earlier request
            + b"\x07garbage\x00"  # damaged frame
            + encode_frame(MsgType.ERROR, 0, bytes(6))  # error about noise
            + encode_frame(0x81, 10, hello)
        )
        got = dev.hello()
        assert got.max_payload == 512 and got.model_ready
        assert dev.stale_replies >= 2 and lnk.bad_frames >= 1


def test_link_errors_are_retried_then_reported() -> None:
    with loop_link() as lnk:
        dev = Device(lnk, timeout=1.0, retries=2, first_seq=5)
        err = struct.pack("<BBI", ErrorCode.BAD_CRC, MsgType.INVOKE, 9)
        lnk.send_bytes(encode_frame(MsgType.ERROR, 5, err) * 3)
        with pytest.raises(DeviceError, match="BAD_CRC.*after 2 retries") as info:
            dev.invoke()
        assert info.value.code == ErrorCode.BAD_CRC
        assert dev.retries_used == 2


def test_request_error_is_final_without_retry() -> None:
    with loop_link() as lnk:
        dev = Device(lnk, timeout=1.0, retries=3, first_seq=5)
        err = struct.pack("<BBI", ErrorCode.BAD_STATE, MsgType.INVOKE, 0)
        lnk.send_bytes(encode_frame(MsgType.ERROR, 5, err))
        with pytest.raises(DeviceError, match="refused INVOKE: BAD_STATE") as info:
            dev.invoke()
        assert info.value.code == ErrorCode.BAD_STATE and dev.retries_used == 0


def test_sequence_numbers_wrap_and_skip_zero() -> None:
    with loop_link() as lnk:
        dev = Device(lnk, first_seq=0xFFFE)
        assert [dev.next_seq() for _ in range(3)] == [0xFFFE, 0xFFFF, 1]


# ---------------------------------------------------------------------------------------------
# Round trips against the native test device over pipes


def test_ready_hello_info(link: Link) -> None:
    dev = make_device(link)
    hello = dev.hello()
    assert (hello.protocol_version, hello.max_payload) == (1, MAX_PAYLOAD)
    info = dev.info()
    assert (info.fw_version, info.board, info.backend) == ("th-test-device 1.0", "host", "fake")
    assert (info.model_name, info.model_hash, info.arena_size) == ("builtin-echo", 0x12345678, 4096)
    assert (info.counter_unit, info.counter_hz, info.n_ops) == ("host-ns", 10**9, FAKE_N_OPS)
    assert info.model_ready and info.can_load_model
    (inp,) = info.inputs
    assert (inp.dtype, inp.shape, inp.scale, inp.zero_point) == (np.int8, (1, 40, 50), 0.5, -3)
    out0, out1 = info.outputs
    assert (out0.dtype, out0.shape, out0.scale, out0.zero_point) == (np.int8, (1, 40, 50), 0.25, 7)
    assert (out1.dtype, out1.shape) == (np.int32, (1,))


def test_set_input_invoke_get_output_profile(link: Link) -> None:
    dev = make_device(link)
    rng = np.random.default_rng(1)
    for run in (1, 2):
        x = rng.integers(-128, 128, size=(1, 40, 50), dtype=np.int8)
        dev.set_input(0, x)  # 2000 bytes: two chunks
        assert dev.invoke() == 1000 * run
        np.testing.assert_array_equal(dev.get_output(0), expected_output(x))
        crc = np.uint32(zlib.crc32(x.tobytes())).view(np.int32)
        np.testing.assert_array_equal(dev.get_output(1), [crc])
    profile = dev.get_profile()  # 300 entries: two frames
    assert len(profile) == FAKE_N_OPS
    assert profile[:3] == [2, 4, 0]  # invocations, SET_INPUT chunks, LOAD_MODEL chunks
    assert profile[3:] == [2 * k for k in range(3, FAKE_N_OPS)]


def test_user_errors(link: Link) -> None:
    dev = make_device(link)
    with pytest.raises(DeviceError, match="BAD_STATE") as info:
        dev.get_output(0)  # nothing invoked yet
    assert info.value.code == ErrorCode.BAD_STATE
    with pytest.raises(InputDataError, match="expects int8"):
        dev.set_input(0, np.zeros((1, 40, 50), np.float32))
    with pytest.raises(InputDataError, match="1 input"):
        dev.set_input(3, np.zeros(1, np.int8))
    with pytest.raises(DeviceError, match="BAD_ARG") as info:
        dev.set_input_bytes(1, b"\x01")
    assert info.value.code == ErrorCode.BAD_ARG
    with pytest.raises(DeviceError, match="BAD_PAYLOAD"):
        dev.request(MsgType.INVOKE, b"xyz")
    with pytest.raises(DeviceError, match="UNKNOWN_TYPE") as info:
        dev.request(0x42)
    assert info.value.detail == 0x42 and dev.retries_used == 0
    past_end = [
        (MsgType.INFO, struct.pack("<I", 100_000)),
        (MsgType.GET_PROFILE, struct.pack("<H", FAKE_N_OPS + 1)),
        (MsgType.SET_INPUT, struct.pack("<BI", 0, FAKE_IN_SIZE - 1) + b"ab"),
    ]
    for request, payload in past_end:
        with pytest.raises(DeviceError, match="BAD_ARG"):
            dev.request(request, payload)
    assert dev.hello().model_ready  # still serving


def test_load_model(link: Link) -> None:
    dev = make_device(link)
    body = np.random.default_rng(2).integers(0, 256, 3000, dtype=np.uint8).tobytes()
    blob = valid_blob(body)
    dev.load_model(blob)  # 3004 bytes: three chunks
    info = dev.info()
    assert (info.model_name, info.model_hash) == ("loaded", zlib.crc32(body))
    assert dev.get_profile()[2] == 3

    bad = bytearray(blob)
    bad[100] ^= 1
    with pytest.raises(DeviceError, match="MODEL_INVALID") as err:
        dev.load_model(bytes(bad))
    assert err.value.code == ErrorCode.MODEL_INVALID
    assert not dev.info().model_ready
    with pytest.raises(DeviceError, match="BAD_STATE"):
        dev.invoke()  # a failed load leaves no usable model
    with pytest.raises(DeviceError, match="TOO_LARGE"):
        dev.load_model(bytes(5000))
    dev.load_model(blob)
    assert dev.info().model_ready
    dev.set_input(0, np.ones((1, 40, 50), np.int8))
    dev.invoke()


def test_pty_round_trip(device_exe: Path) -> None:
    serial = pytest.importorskip("serial")
    proc = subprocess.Popen(
        [str(device_exe), "--pty"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=SAN_ENV,
    )
    lnk = None
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 10)
        assert ready, "test device printed no pty name"
        match = re.match(rb"PTY (\S+)", proc.stderr.readline())
        assert match, "unexpected pty banner"
        lnk = Link(serial.serial_for_url(match.group(1).decode(), timeout=1), "pty")
        dev = Device(lnk, timeout=2.0, retries=2)
        assert dev.connect().max_payload == MAX_PAYLOAD  # READY went before we opened
        x = np.arange(FAKE_IN_SIZE).astype(np.int8).reshape(1, 40, 50)
        dev.set_input(0, x)
        dev.invoke()
        np.testing.assert_array_equal(dev.get_output(0), expected_output(x))
    finally:
        if lnk is not None:
            lnk.close()
        proc.kill()
        proc.wait(timeout=10)


# ---------------------------------------------------------------------------------------------
# Corrupt input: the device answers with an error (or nothing for empty frames) and then
# serves the next valid request.


def test_corrupt_frames_get_link_errors_with_their_seq(link: Link) -> None:
    dev = make_device(link)
    long_raw = raw_frame(MsgType.SET_INPUT, 306, bytes(range(1, 250)) * 2)
    cases = [  # name, bytes, expected code (None = any link error), expected seq
        ("bad CRC", wire(raw_frame(MsgType.HELLO, 301, b"", crc_xor=1)), ErrorCode.BAD_CRC, 301),
        (
            "length too big",
            wire(raw_frame(MsgType.SET_INPUT, 302, bytes(8), length=9)),
            ErrorCode.BAD_LENGTH,
            302,
        ),
        (
            "length too small",
            wire(raw_frame(MsgType.INVOKE, 303, bytes(8), length=2)),
            ErrorCode.BAD_LENGTH,
            303,
        ),
        (
            "raw truncated",
            wire(raw_frame(MsgType.SET_INPUT, 304, bytes(40))[:-3]),
            ErrorCode.BAD_LENGTH,
            304,
        ),
        (
            "too long",
            wire(raw_frame(MsgType.SET_INPUT, 305, bytes(2000))),
            ErrorCode.FRAME_TOO_LONG,
            305,
        ),
        ("encoding truncated", wire(long_raw)[:300] + b"\0", None, 306),
        ("short", wire(bytes([MsgType.HELLO, 0x32, 0x01, 0, 0])), ErrorCode.BAD_FRAME, 0x0132),
        ("bad COBS", b"\0\x09\x01\x31\x01\0", ErrorCode.BAD_FRAME, 0x0131),
        ("one byte", b"\0\x02\x07\0", ErrorCode.BAD_FRAME, 0),
    ]
    for name, data, code, seq in cases:
        link.send_bytes(data)
        reply = receive(link)
        got_code, _, detail = error_fields(reply)
        assert got_code == code if code is not None else got_code in LINK_ERRORS, name
        assert reply.seq == seq, name
        if code == ErrorCode.FRAME_TOO_LONG:
            assert detail == MAX_PAYLOAD
    assert link.receive(0.2) is None  # exactly one reply each
    assert dev.hello().model_ready


def test_unknown_type_and_reply_types_are_refused(link: Link) -> None:
    make_device(link)
    for frame_type in (0x00, 0x09, 0x42, 0x81, MsgType.READY, MsgType.ERROR):
        link.send(frame_type, 77, b"abc")
        reply = receive(link)
        assert reply.seq == 77
        assert error_fields(reply) == (ErrorCode.UNKNOWN_TYPE, frame_type, frame_type)


def test_reset_state_without_a_handler_says_so(link: Link) -> None:
    """RESET_STATE (protocol 1.2) takes no payload; an application without the callback
    answers UNSUPPORTED, which the host turns into a sentence naming the request."""
    dev = make_device(link)
    link.send(MsgType.RESET_STATE, 78, b"x")
    reply = receive(link)
    assert error_fields(reply)[:2] == (ErrorCode.BAD_PAYLOAD, MsgType.RESET_STATE)
    with pytest.raises(DeviceError, match="RESET_STATE"):
        dev.reset_state()


def test_empty_frames_get_no_reply(link: Link) -> None:
    dev = make_device(link)
    link.send_bytes(b"\0" * 500)
    assert link.receive(0.3) is None
    assert dev.hello().max_payload == MAX_PAYLOAD


def test_random_bit_flips_never_act(link: Link) -> None:
    dev = make_device(link)
    rng = np.random.default_rng(3)
    x = np.full((1, 40, 50), 5, np.int8)
    dev.set_input(0, x)
    for i in range(200):
        raw = raw_frame(MsgType.SET_INPUT, 1000 + i, struct.pack("<BI", 0, 0) + bytes(64))
        data = bytearray(wire(raw))
        pos = int(rng.integers(1, len(data) - 1))
        data[pos] ^= 1 << int(rng.integers(0, 8))
        link.send_bytes(bytes(data))
        # One link error per non-empty frame (a flip to 0x00 splits the frame in two).
        n_frames = len([s for s in bytes(data).split(b"\0") if s])
        for _ in range(n_frames):
            assert error_fields(receive(link))[0] in LINK_ERRORS
    assert link.receive(0.2) is None
    dev.invoke()
    np.testing.assert_array_equal(dev.get_output(0), expected_output(x))
    assert dev.get_profile()[1] == 2  # only the two real SET_INPUT chunks were stored


def test_garbage_bursts(link: Link) -> None:
    dev = make_device(link)
    rng = np.random.default_rng(4)
    for size in (1, 100, 4096, 20_000):
        for zero_every in (3, 256, 5000):
            data = rng.integers(1, 256, size, dtype=np.uint8)
            data[rng.random(size) < 1 / zero_every] = 0
            burst = b"\0" + data.tobytes() + b"\0"
            link.send_bytes(burst)
            expected = len([s for s in burst.split(b"\0") if s])
            for _ in range(expected):  # exactly one reply per non-empty frame
                assert error_fields(receive(link))[0] in LINK_ERRORS
            assert link.receive(0.05) is None
            assert dev.hello().max_payload == MAX_PAYLOAD


def test_partial_garbage_before_request_is_resynchronized(link: Link) -> None:
    dev = make_device(link)
    link.send_bytes(b"\x05\x01\x02")  # no delimiter: the next frame's leading 0x00 ends it
    assert dev.invoke() == 1000
    assert dev.stale_replies == 1  # the BAD_FRAME about the garbage had another seq


# ---------------------------------------------------------------------------------------------
# Lost replies and silent links


class DropReplies:
    """Port wrapper that swallows the first `count` reply frames of type `reply_type`."""

    def __init__(self, inner: PipePort, reply_type: int, count: int) -> None:
        self.inner = inner
        self.reply_type = reply_type
        self.count = count
        self.dropped = 0
        self.partial = bytearray()

    @property
    def timeout(self) -> float | None:
        return self.inner.timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self.inner.timeout = value

    def read(self, size: int = 1) -> bytes:
        out = bytearray()
        for byte in self.inner.read(size):
            self.partial.append(byte)
            if byte == 0:
                piece, self.partial = bytes(self.partial), bytearray()
                try:
                    frame = decode_frame(piece[:-1]) if len(piece) > 1 else None
                except FrameError:
                    frame = None
                if frame and frame.type == self.reply_type and self.dropped < self.count:
                    self.dropped += 1
                    continue
                out += piece
        return bytes(out)

    def write(self, data: bytes) -> int:
        return self.inner.write(data)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize(
    "reply_type",
    [MsgType.INVOKE | 0x80, MsgType.LOAD_MODEL | 0x80, MsgType.SET_INPUT | 0x80],
    ids=["INVOKE", "LOAD_MODEL", "SET_INPUT"],
)
def test_retry_after_lost_reply_does_not_act_twice(link: Link, reply_type: int) -> None:
    dev = make_device(link, timeout=0.5, invoke_timeout=0.5)
    assert isinstance(link.port, PipePort)
    dropper = DropReplies(link.port, reply_type, count=1)
    link.port = dropper
    x = np.arange(FAKE_IN_SIZE).astype(np.int8).reshape(1, 40, 50)
    dev.set_input(0, x)
    assert dev.invoke() == 1000
    np.testing.assert_array_equal(dev.get_output(0), expected_output(x))
    dev.load_model(valid_blob(bytes(2500)))
    assert dropper.dropped == 1 and dev.retries_used == 1
    link.port = dropper.inner
    invocations, input_chunks, model_chunks = dev.get_profile()[:3]
    assert (invocations, input_chunks, model_chunks) == (1, 2, 3)


def test_silent_device_times_out(tmp_path: Path) -> None:
    with Link.spawn(["sh", "-c", "cat >/dev/null"]) as lnk:
        dev = Device(lnk, timeout=0.2, retries=2)
        start = time.monotonic()
        with pytest.raises(DeviceTimeout) as info:
            dev.hello()
        assert time.monotonic() - start < 30  # bounded: a hang guard, not a speed test
        message = str(info.value)
        assert "HELLO" in message and "after 2 retries" in message
        assert lnk.name in message and dev.retries_used == 2
        with pytest.raises(DeviceTimeout, match="READY"):
            dev.wait_ready(0.2)


def test_echoing_link_is_not_mistaken_for_a_device() -> None:
    with Link.spawn(["cat"]) as lnk:  # hears its own requests back
        dev = Device(lnk, timeout=0.2, retries=1, invoke_timeout=0.2)
        with pytest.raises(DeviceTimeout, match="INVOKE"):
            dev.invoke()
        assert dev.stale_replies == 2


def test_device_exit_is_reported_not_waited_on() -> None:
    with Link.spawn(["sh", "-c", "exit 3"]) as lnk:
        dev = Device(lnk, timeout=5.0, retries=5)
        with pytest.raises(DeviceError, match="closed the link|cannot write"):
            dev.hello()


def test_unopenable_port_raises_device_error() -> None:
    pytest.importorskip("serial")
    with pytest.raises(DeviceError, match="/nonexistent/tty"):
        Link.open("/nonexistent/tty")


# ---------------------------------------------------------------------------------------------
# The C side on its own


@pytest.mark.parametrize("seed", [1, 2])
def test_c_fuzz_under_sanitizers(fuzz_exe: Path, seed: int) -> None:
    result = subprocess.run(
        [str(fuzz_exe), str(seed), "100000"],
        capture_output=True,
        text=True,
        timeout=300,
        env=SAN_ENV,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 failures" in result.stdout


def test_c_compiles_for_cortex_m4(tmp_path: Path) -> None:
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc not found")
    for source in (PROTO_DIR / "th_proto.c", PROTO_DIR / "test_device" / "fake_app.c"):
        cmd = [
            "arm-none-eabi-gcc",
            "-std=c99",
            "-mcpu=cortex-m4",
            "-mthumb",
            "-Os",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            f"-I{PROTO_DIR}",
            "-c",
            str(source),
            "-o",
            str(tmp_path / (source.stem + ".o")),
        ]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
