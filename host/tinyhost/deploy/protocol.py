"""Host end of the tinyhost serial protocol (ARCHITECTURE.md §4.5).

The wire format is specified in firmware/protocol/README.md; the device end is
firmware/protocol/th_proto.c. Layers, bottom up:

- `cobs_encode`/`cobs_decode`, `encode_frame`/`decode_frame`, `FrameReader`: pure framing.
- `PipePort`: a pyserial-like port over a pair of file descriptors (a subprocess's
  stdin/stdout, for the `host` board and the protocol test device).
- `Link`: frames over any port: `Link.open(url)` for any pyserial URL (`/dev/ttyACM0`,
  `socket://127.0.0.1:PORT`, `loop://`), `Link.spawn(argv)` for a native device process.
- `Device`: the request/reply client: per-request timeout, retries with the same sequence
  number (the device answers a repeated request from its reply cache, so nothing runs twice),
  resynchronization on the 0x00 delimiter, stale replies (wrong seq) discarded.
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import os
import select
import struct
import subprocess
import termios
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from tinyhost.errors import InputDataError, TinyhostError

PROTOCOL_VERSION = 1
HEADER = struct.Struct("<BHH")  # type, seq, payload length
CRC_SIZE = 4
OVERHEAD = HEADER.size + CRC_SIZE
# The longest frame any device may send (payload length is a u16); the reader's buffer bound.
MAX_FRAME = HEADER.size + 0xFFFF + CRC_SIZE
DELIMITER = b"\x00"
RESPONSE = 0x80


class MsgType(enum.IntEnum):
    HELLO = 0x01
    INFO = 0x02
    SET_INPUT = 0x03
    INVOKE = 0x04
    GET_OUTPUT = 0x05
    GET_PROFILE = 0x06
    LOAD_MODEL = 0x07
    RESET_STATE = 0x08
    FAULT = 0xFD
    READY = 0xFE
    ERROR = 0xFF


class ErrorCode(enum.IntEnum):
    BAD_CRC = 1
    BAD_LENGTH = 2
    BAD_FRAME = 3
    FRAME_TOO_LONG = 4
    UNKNOWN_TYPE = 5
    BAD_PAYLOAD = 6
    BAD_STATE = 7
    BAD_ARG = 8
    TOO_LARGE = 9
    MODEL_INVALID = 10
    INTERNAL = 11
    UNSUPPORTED = 12


# The request was damaged on the way: the device never acted on it, so sending it again is safe.
LINK_ERRORS = frozenset(
    {ErrorCode.BAD_CRC, ErrorCode.BAD_LENGTH, ErrorCode.BAD_FRAME, ErrorCode.FRAME_TOO_LONG}
)

FLAG_MODEL_READY = 0x01
FLAG_CAN_LOAD = 0x02

DTYPES: dict[int, np.dtype] = {
    0: np.dtype(np.int8),
    1: np.dtype(np.uint8),
    2: np.dtype(np.int16),
    3: np.dtype(np.int32),
    4: np.dtype(np.float32),
}
COUNTER_UNITS = {0: "none", 1: "cycles", 2: "instructions", 3: "host-ns", 4: "systick"}
ARENA_GUARD_DETAIL = 0x6A4D0000  # th_model.h TH_MODEL_DETAIL_ARENA_GUARD (debug builds)
STACK_OVERFLOW_DETAIL = 0x6A4D0001  # th_model.h TH_MODEL_DETAIL_STACK_OVERFLOW


class DeviceError(TinyhostError):
    """The device refused a request (`code` is set) or the link failed."""

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        detail: int = 0,
        request: str | None = None,
        port: str = "",
    ) -> None:
        super().__init__(message)
        self.code = code
        self.detail = detail
        self.request = request
        self.port = port


class DeviceTimeout(DeviceError):
    """No valid reply arrived in time, after every retry."""


_EXCEPTIONS = {3: "HardFault", 4: "MemManage", 5: "BusFault", 6: "UsageFault", 7: "SecureFault"}
# Configurable Fault Status Register bits (Armv7-M/v8-M ARM B3.2.15): what the fault was.
_CFSR_BITS = {0: "IACCVIOL", 1: "DACCVIOL", 3: "MUNSTKERR", 4: "MSTKERR", 5: "MLSPERR",
              8: "IBUSERR", 9: "PRECISERR", 10: "IMPRECISERR", 11: "UNSTKERR", 12: "STKERR",
              13: "LSPERR", 16: "UNDEFINSTR", 17: "INVSTATE", 18: "INVPC", 19: "NOCP",
              20: "STKOF", 24: "UNALIGNED", 25: "DIVBYZERO"}  # fmt: skip


class DeviceFault(DeviceError):
    """The device faulted (FAULT frame): the op it was running (position in execution order,
    -1 outside an invoke), the exception and the fault registers."""

    def __init__(self, payload: bytes, port: str) -> None:
        self.op, self.kind, self.registers = -1, "malformed FAULT frame", {}
        if len(payload) == 33:
            exception, self.op = payload[0], struct.unpack_from("<i", payload, 1)[0]
            names = ("pc", "lr", "xpsr", "cfsr", "hfsr", "mmfar", "bfar")
            self.registers = dict(zip(names, struct.unpack_from("<7I", payload, 5)))
            self.kind = _fault_kind(exception, self.registers["cfsr"], self.registers["hfsr"])
        super().__init__(self.describe(f"op {self.op}" if self.op >= 0 else "no op"),
                         port=port)  # fmt: skip

    def describe(self, where: str) -> str:
        regs = ", ".join(f"{n}=0x{v:08x}" for n, v in self.registers.items())
        return f"device fault in {where} ({self.kind}): {regs}"


def _fault_kind(exception: int, cfsr: int, hfsr: int) -> str:
    """"UsageFault: UNDEFINSTR, escalated to HardFault" from the exception taken and the
    status registers (a fault whose handler is disabled escalates: HFSR.FORCED)."""
    causes = [n for b, n in _CFSR_BITS.items() if cfsr >> b & 1]
    kind = _EXCEPTIONS.get(exception, f"exception {exception}")
    if exception == 3 and hfsr >> 30 & 1 and cfsr:
        underlying = ("MemManage" if cfsr & 0xFF else "BusFault" if cfsr & 0xFF00
                      else "UsageFault")  # fmt: skip
        return f"{underlying}: {', '.join(causes)}, escalated to HardFault"
    return f"{kind}: {', '.join(causes)}" if causes else kind


class FrameError(DeviceError):
    """Bytes that are not a valid frame (bad COBS, CRC or length)."""


# ---------------------------------------------------------------------------------------------
# Framing


def crc32(data: bytes) -> int:
    """CRC-32 (IEEE, reflected) as used in every frame."""
    return zlib.crc32(data) & 0xFFFFFFFF


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode `data` (the result holds no 0x00). Matches th_proto_cobs_encode."""
    out = bytearray()
    i, n = 0, len(data)
    while True:
        end = min(n, i + 254)
        zero = data.find(0, i, end)
        run_end = end if zero < 0 else zero
        out.append(run_end - i + 1)
        out += data[i:run_end]
        if run_end >= n:
            return bytes(out)
        if zero < 0:  # a full 254-byte block: no zero consumed
            i = run_end
            continue
        i = run_end + 1
        if i == n:  # a trailing zero needs an empty final block
            out.append(1)
            return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    """Decode one COBS block sequence (no delimiters). Raises FrameError if malformed."""
    if not data:
        raise FrameError("empty COBS frame")
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise FrameError(f"COBS frame holds a 0x00 at byte {i}")
        end = i + code
        if end > n:
            raise FrameError(f"COBS block at byte {i} runs {end - n} bytes past the frame end")
        block = data[i + 1 : end]
        if 0 in block:
            raise FrameError(f"COBS frame holds a 0x00 at byte {i + 1 + block.index(0)}")
        out += block
        if code != 0xFF and end < n:
            out.append(0)
        i = end
    return bytes(out)


@dataclass(frozen=True)
class Frame:
    type: int
    seq: int
    payload: bytes


def encode_frame(frame_type: int, seq: int, payload: bytes = b"") -> bytes:
    """The bytes on the wire: 0x00, COBS(header, payload, CRC-32 LE), 0x00."""
    if len(payload) > 0xFFFF:
        raise ValueError(f"payload of {len(payload)} bytes exceeds 65535")
    raw = HEADER.pack(frame_type, seq, len(payload)) + payload
    raw += struct.pack("<I", crc32(raw))
    return DELIMITER + cobs_encode(raw) + DELIMITER


def decode_frame(encoded: bytes) -> Frame:
    """Decode one frame given without delimiters. Raises FrameError if it is not valid."""
    raw = cobs_decode(encoded)
    if len(raw) < OVERHEAD:
        raise FrameError(f"frame of {len(raw)} bytes is shorter than header + CRC ({OVERHEAD})")
    frame_type, seq, length = HEADER.unpack_from(raw)
    if OVERHEAD + length != len(raw):
        raise FrameError(f"length field says {length} payload bytes, frame has {len(raw) - 9}")
    (crc,) = struct.unpack_from("<I", raw, len(raw) - CRC_SIZE)
    if crc != crc32(raw[:-CRC_SIZE]):
        raise FrameError(f"CRC mismatch in frame type 0x{frame_type:02x} seq {seq}")
    return Frame(frame_type, seq, raw[HEADER.size : HEADER.size + length])


class FrameReader:
    """Splits a byte stream on 0x00 into frames, resynchronizing after any damage.

    `feed` returns, in order, a Frame or a FrameError for every non-empty chunk between
    delimiters; an over-long chunk is dropped up to the next delimiter (one FrameError).
    """

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self._max_encoded = max_frame + max_frame // 254 + 2
        self._buf = bytearray()
        self._overflow = False

    def feed(self, data: bytes) -> list[Frame | FrameError]:
        out: list[Frame | FrameError] = []
        start = 0
        while True:
            zero = data.find(0, start)
            piece = data[start:] if zero < 0 else data[start:zero]
            if not self._overflow:
                self._buf += piece
                if len(self._buf) > self._max_encoded:
                    self._overflow = True
                    self._buf.clear()
            if zero < 0:
                return out
            if self._overflow:
                out.append(FrameError(f"frame longer than {self._max_encoded} bytes dropped"))
            elif self._buf:
                try:
                    out.append(decode_frame(bytes(self._buf)))
                except FrameError as exc:
                    out.append(exc)
            self._buf.clear()
            self._overflow = False
            start = zero + 1


# ---------------------------------------------------------------------------------------------
# Ports and links


class Port(Protocol):
    """What Link needs from a port: pyserial's Serial has it, and so does PipePort."""

    timeout: float | None

    def read(self, size: int = 1) -> bytes: ...

    def write(self, data: bytes) -> int | None: ...

    def close(self) -> None: ...


class PipePort:
    """A pyserial-like port over two file descriptors (e.g. a subprocess's stdout and stdin).

    `read(n)` waits up to `timeout` seconds (None = forever, 0 = poll) for at least one byte
    and returns what is available, up to n bytes; b"" on timeout. EOF raises EOFError.
    """

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.timeout: float | None = 1.0

    @property
    def in_waiting(self) -> int:
        buf = fcntl.ioctl(self.read_fd, termios.FIONREAD, b"\0\0\0\0")
        return struct.unpack("i", buf)[0]

    def read(self, size: int = 1) -> bytes:
        ready, _, _ = select.select([self.read_fd], [], [], self.timeout)
        if not ready:
            return b""
        data = os.read(self.read_fd, size)
        if not data:
            raise EOFError("end of stream")
        return data

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        while view:
            view = view[os.write(self.write_fd, view) :]
        return len(data)

    def close(self) -> None:
        pass  # the fds belong to whoever created them


class Link:
    """Frames over a port. `name` (the URL or process) appears in every error message."""

    def __init__(
        self, port: Port, name: str, *, process: subprocess.Popen[bytes] | None = None
    ) -> None:
        self.port = port
        self.name = name
        self.process = process
        self.reader = FrameReader()
        self.pending: list[Frame | FrameError] = []
        self.bad_frames = 0  # damaged frames skipped while resynchronizing

    @classmethod
    def open(cls, url: str, *, baudrate: int = 115200) -> Link:
        """A link over any pyserial URL: /dev/ttyACM0, socket://host:port, loop://, ..."""
        import serial  # pyserial; imported here so framing works without it

        try:
            port = serial.serial_for_url(url, baudrate=baudrate, timeout=1.0)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise DeviceError(f"cannot open serial port {url}: {exc}", port=url) from exc
        return cls(port, url)

    @classmethod
    def spawn(cls, argv: Sequence[str], **popen_kwargs: object) -> Link:
        """Start a native device (e.g. the host board) and link to its stdin/stdout.

        The process is killed by close().
        """
        try:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                **popen_kwargs,  # type: ignore[arg-type]
            )
        except OSError as exc:
            raise DeviceError(f"cannot start device {argv[0]}: {exc}", port=argv[0]) from exc
        assert proc.stdin is not None and proc.stdout is not None
        port = PipePort(proc.stdout.fileno(), proc.stdin.fileno())
        return cls(port, f"process {os.path.basename(argv[0])} (pid {proc.pid})", process=proc)

    def send(self, frame_type: int, seq: int, payload: bytes = b"") -> None:
        self.send_bytes(encode_frame(frame_type, seq, payload))

    def send_bytes(self, data: bytes) -> None:
        """Raw bytes onto the wire (tests use this to inject damaged frames)."""
        try:
            self.port.write(data)
        except (OSError, ValueError) as exc:
            raise DeviceError(f"cannot write to {self.name}: {exc}", port=self.name) from exc
        flush = getattr(self.port, "flush", None)
        if flush is not None:
            flush()

    def receive(self, timeout: float) -> Frame | None:
        """The next valid frame, or None if none arrives within `timeout` seconds.

        Damaged frames are counted in `bad_frames` and skipped.
        """
        deadline = time.monotonic() + timeout
        while True:
            while self.pending:
                item = self.pending.pop(0)
                if isinstance(item, Frame):
                    return item
                self.bad_frames += 1
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.pending.extend(self.reader.feed(self._read(remaining)))

    def _read(self, timeout: float) -> bytes:
        try:
            self.port.timeout = timeout
            data = self.port.read(1)
            if data:  # then whatever else has already arrived, without waiting
                self.port.timeout = 0
                data += self.port.read(65536)
            return data
        except EOFError as exc:
            raise DeviceError(
                f"{self.name} closed the link{self._exit_note()}", port=self.name
            ) from exc
        except Exception as exc:  # pyserial raises SerialException (an OSError) and others
            if isinstance(exc, TinyhostError):
                raise
            raise DeviceError(
                f"cannot read from {self.name}: {exc}{self._exit_note()}", port=self.name
            ) from exc

    def _exit_note(self) -> str:
        if self.process is None:
            return ""
        code = self.process.poll()
        return "" if code is None else f" (exit code {code})"

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.port.close()
        proc = self.process
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
            if proc.poll() is None:
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)

    def __enter__(self) -> Link:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------
# Payloads


@dataclass(frozen=True)
class Hello:
    """HELLO_RESP / READY: what a session needs before anything else."""

    protocol_version: int
    max_payload: int
    flags: int

    @property
    def model_ready(self) -> bool:
        return bool(self.flags & FLAG_MODEL_READY)


@dataclass(frozen=True)
class TensorInfo:
    dtype: np.dtype
    shape: tuple[int, ...]
    scale: float
    zero_point: int

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


@dataclass(frozen=True)
class DeviceInfo:
    protocol_version: int
    flags: int
    fw_version: str
    board: str
    backend: str
    model_name: str
    model_hash: int
    arena_size: int
    counter_unit: str
    counter_hz: int
    n_ops: int
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    # Start-up self-check verdict: "ok", "none" (nothing to check), "fail:SSUB8,...";
    # None from firmware that predates it (the field is optional, after the tensors).
    selfcheck: str | None = None
    # The device's link counters at this INFO (None from firmware that predates them):
    # non-empty frames received, of which rejected before dispatch (damaged, too long), and
    # duplicates answered from the reply cache.
    frames_rx: int | None = None
    frames_bad: int | None = None
    replies_cached: int | None = None

    @property
    def model_ready(self) -> bool:
        return bool(self.flags & FLAG_MODEL_READY)

    @property
    def can_load_model(self) -> bool:
        return bool(self.flags & FLAG_CAN_LOAD)


class _Cursor:
    """Reads little-endian fields; running off the end raises ValueError."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, fmt: str) -> tuple:
        st = struct.Struct("<" + fmt)
        if self.pos + st.size > len(self.data):
            raise ValueError(f"truncated at byte {self.pos}")
        values = st.unpack_from(self.data, self.pos)
        self.pos += st.size
        return values

    def string(self) -> str:
        (n,) = self.take("B")
        if self.pos + n > len(self.data):
            raise ValueError(f"string truncated at byte {self.pos}")
        text = self.data[self.pos : self.pos + n].decode("utf-8", errors="replace")
        self.pos += n
        return text


def parse_hello(payload: bytes) -> Hello:
    if len(payload) < 5:
        raise ValueError(f"HELLO payload of {len(payload)} bytes, expected 5")
    version, max_payload, flags = struct.unpack_from("<HHB", payload)
    return Hello(version, max_payload, flags)


def _parse_tensors(cur: _Cursor, count: int) -> tuple[TensorInfo, ...]:
    tensors = []
    for _ in range(count):
        code, rank = cur.take("BB")
        if code not in DTYPES:
            raise ValueError(f"unknown dtype code {code}")
        dims = cur.take(f"{rank}I")
        scale, zero_point = cur.take("fi")
        tensors.append(
            TensorInfo(DTYPES[code], tuple(int(d) for d in dims), float(scale), int(zero_point))
        )
    return tuple(tensors)


def parse_info(data: bytes) -> DeviceInfo:
    """Decode the INFO record (all chunks joined). Raises ValueError if malformed."""
    cur = _Cursor(data)
    version, flags = cur.take("HB")
    fw_version, board, backend, model_name = (cur.string() for _ in range(4))
    model_hash, arena_size, unit, counter_hz, n_ops, n_in, n_out = cur.take("IIBIHBB")
    inputs = _parse_tensors(cur, n_in)
    outputs = _parse_tensors(cur, n_out)
    selfcheck = (cur.string() or None) if cur.pos < len(data) else None
    counters = cur.take("III") if len(data) - cur.pos >= 12 else (None, None, None)
    return DeviceInfo(
        version,
        flags,
        fw_version,
        board,
        backend,
        model_name,
        model_hash,
        arena_size,
        COUNTER_UNITS.get(unit, f"unit-{unit}"),
        counter_hz,
        n_ops,
        inputs,
        outputs,
        selfcheck,
        *counters,
    )


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"code {code}"


def _type_name(frame_type: int) -> str:
    try:
        return MsgType(frame_type).name
    except ValueError:
        return f"type 0x{frame_type:02x}"


# ---------------------------------------------------------------------------------------------
# The client


class Device:
    """A device at the other end of a Link.

    Every request waits `timeout` seconds for its reply (`invoke_timeout` for INVOKE), then
    sends the same frame again with the same seq, up to `retries` times, before raising
    DeviceTimeout. Replies with another seq are stale (answers to earlier attempts) and
    dropped. Chunk sizes follow the device's max payload, learned from READY or HELLO.
    """

    def __init__(
        self,
        link: Link,
        *,
        timeout: float = 2.0,
        retries: int = 3,
        invoke_timeout: float = 60.0,
        first_seq: int | None = None,
    ) -> None:
        self.link = link
        self.timeout = timeout
        self.retries = retries
        self.invoke_timeout = invoke_timeout
        seq = first_seq if first_seq is not None else int.from_bytes(os.urandom(2), "little")
        self._seq = (seq - 1) % 0xFFFF  # next_seq() yields 1..0xFFFF, never 0 (READY's)
        self.max_payload = 256  # safe until the device says otherwise
        self._info: DeviceInfo | None = None
        self.retries_used = 0  # total resends, for diagnostics and tests
        self.last_stack_peak: int | None = None  # of the last INVOKE, bytes
        self.stale_replies = 0

    # -- session ---------------------------------------------------------------------------

    def wait_ready(self, timeout: float) -> Hello:
        """Wait for the device's unsolicited READY frame (sent once at boot)."""
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            frame = self.link.receive(remaining)
            if frame is not None and frame.type == MsgType.READY:
                return self._accept_hello(frame, "READY")
        raise DeviceTimeout(
            f"no READY from {self.link.name} within {timeout:g} s",
            request="READY",
            port=self.link.name,
        )

    def connect(self, ready_timeout: float = 0.0) -> Hello:
        """Start a session: optionally wait for READY, then HELLO (with retries)."""
        if ready_timeout > 0:
            with contextlib.suppress(DeviceTimeout):
                self.wait_ready(ready_timeout)
        return self.hello()

    def hello(self) -> Hello:
        frame = self.request(MsgType.HELLO)
        return self._accept_hello(frame, "HELLO")

    def _accept_hello(self, frame: Frame, what: str) -> Hello:
        try:
            hello = parse_hello(frame.payload)
        except ValueError as exc:
            raise self._malformed(what, exc) from exc
        if hello.protocol_version != PROTOCOL_VERSION:
            raise DeviceError(
                f"{self.link.name} speaks protocol version {hello.protocol_version}, "
                f"this host speaks {PROTOCOL_VERSION}",
                request=what,
                port=self.link.name,
            )
        self.max_payload = hello.max_payload
        return hello

    # -- requests --------------------------------------------------------------------------

    def info(self) -> DeviceInfo:
        """Board, firmware, model and tensor description (INFO, chunked)."""
        data = bytearray()
        total = None
        while total is None or len(data) < total:
            frame = self.request(MsgType.INFO, struct.pack("<I", len(data)))
            if len(frame.payload) < 8:
                raise self._malformed("INFO", ValueError("reply shorter than 8 bytes"))
            total, offset = struct.unpack_from("<II", frame.payload)
            chunk = frame.payload[8:]
            if offset != len(data) or (not chunk and len(data) < total):
                raise self._malformed("INFO", ValueError(f"chunk at offset {offset}"))
            data += chunk
        try:
            self._info = parse_info(bytes(data[:total]))
        except (ValueError, struct.error) as exc:
            raise self._malformed("INFO", exc) from exc
        return self._info

    def _cached_info(self) -> DeviceInfo:
        return self._info if self._info is not None else self.info()

    def set_input(self, index: int, array: np.ndarray) -> None:
        """Send input tensor `index`; its dtype and shape must match the device's."""
        info = self._cached_info()
        if not 0 <= index < len(info.inputs):
            raise InputDataError(
                f"input {index}: the model on {self.link.name} has {len(info.inputs)} input(s)"
            )
        t = info.inputs[index]
        arr = np.asarray(array)
        if arr.dtype != t.dtype or tuple(arr.shape) != t.shape:
            raise InputDataError(
                f"input {index}: device expects {t.dtype} {t.shape}, "
                f"got {arr.dtype} {tuple(arr.shape)}"
            )
        self.set_input_bytes(index, arr.astype(t.dtype.newbyteorder("<")).tobytes())

    def set_input_bytes(self, index: int, data: bytes) -> None:
        chunk = self.max_payload - 5
        for offset in range(0, max(len(data), 1), chunk):
            piece = data[offset : offset + chunk]
            self.request(MsgType.SET_INPUT, struct.pack("<BI", index, offset) + piece)

    def invoke(self) -> int:
        """Run the model once; returns the elapsed count in the INFO counter unit (0 = none).

        The bytes of stack the invoke used are kept in `last_stack_peak` (None: the firmware
        does not report it, 0: not measured there)."""
        frame = self.request(MsgType.INVOKE, timeout=self.invoke_timeout)
        if len(frame.payload) not in (8, 12):
            raise self._malformed("INVOKE", ValueError(f"{len(frame.payload)} bytes"))
        self.last_stack_peak = (struct.unpack_from("<I", frame.payload, 8)[0]
                                if len(frame.payload) == 12 else None)  # fmt: skip
        return struct.unpack_from("<Q", frame.payload)[0]

    def reset_state(self) -> None:
        """Set the model's variable tensors (state kept across invokes, e.g. SVDF's) to their
        reset values, as after a fresh start (TFLM's ResetVariableTensors)."""
        try:
            frame = self.request(MsgType.RESET_STATE)
        except DeviceError as e:
            if e.code not in (ErrorCode.UNKNOWN_TYPE, ErrorCode.UNSUPPORTED):
                raise
            raise DeviceError(
                f"{self.link.name}: the firmware does not know RESET_STATE (protocol 1.2): "
                "rebuild it from this checkout to reset a model's state",
                code=e.code, request="RESET_STATE", port=self.link.name,
            ) from None
        if frame.payload:
            raise self._malformed("RESET_STATE", ValueError(f"{len(frame.payload)} bytes"))

    def get_output(self, index: int) -> np.ndarray:
        """Output tensor `index` with the device's dtype and shape."""
        info = self._cached_info()
        if not 0 <= index < len(info.outputs):
            raise InputDataError(
                f"output {index}: the model on {self.link.name} has {len(info.outputs)} output(s)"
            )
        t = info.outputs[index]
        data = self.get_output_bytes(index)
        if len(data) != t.nbytes:
            raise self._malformed(
                "GET_OUTPUT", ValueError(f"{len(data)} bytes, INFO says {t.nbytes}")
            )
        le = np.frombuffer(data, dtype=t.dtype.newbyteorder("<"))
        return le.astype(t.dtype).reshape(t.shape)

    def get_output_bytes(self, index: int) -> bytes:
        data = bytearray()
        total = None
        while total is None or len(data) < total:
            frame = self.request(MsgType.GET_OUTPUT, struct.pack("<BIH", index, len(data), 0))
            if len(frame.payload) < 8:
                raise self._malformed("GET_OUTPUT", ValueError("reply shorter than 8 bytes"))
            total, offset = struct.unpack_from("<II", frame.payload)
            chunk = frame.payload[8:]
            if offset != len(data) or (not chunk and len(data) < total):
                raise self._malformed("GET_OUTPUT", ValueError(f"chunk at offset {offset}"))
            data += chunk
        return bytes(data[:total])

    def get_profile(self) -> list[int]:
        """Per-op counts of the last INVOKE, in the INFO counter unit."""
        counts: list[int] = []
        total = None
        while total is None or len(counts) < total:
            frame = self.request(MsgType.GET_PROFILE, struct.pack("<H", len(counts)))
            body = frame.payload
            if len(body) < 4 or (len(body) - 4) % 4:
                raise self._malformed("GET_PROFILE", ValueError(f"{len(body)} bytes"))
            total, first = struct.unpack_from("<HH", body)
            batch = struct.unpack_from(f"<{(len(body) - 4) // 4}I", body, 4)
            if first != len(counts) or (not batch and len(counts) < total):
                raise self._malformed("GET_PROFILE", ValueError(f"entries from {first}"))
            counts.extend(batch)
        return counts[:total]

    def load_model(self, blob: bytes) -> None:
        """Send an interpreter blob; the device verifies it on the final chunk."""
        chunk = self.max_payload - 9
        total = len(blob)
        offsets = range(0, max(total, 1), chunk)
        for offset in offsets:
            piece = blob[offset : offset + chunk]
            final = offset + chunk >= total
            try:
                frame = self.request(
                    MsgType.LOAD_MODEL, struct.pack("<IIB", offset, total, int(final)) + piece
                )
            except DeviceError as e:
                if e.code != ErrorCode.UNSUPPORTED:
                    raise
                backend = self.info().backend
                raise DeviceError(
                    f"{self.link.name}: the firmware's {backend} backend cannot load a model "
                    "over the link (its model is compiled in): build and flash the firmware "
                    "for this model instead (tinyhost build / flash)",
                    code=e.code, request="LOAD_MODEL", port=self.link.name,
                ) from None
            if frame.payload != struct.pack("<I", offset + len(piece)):
                raise self._malformed("LOAD_MODEL", ValueError(frame.payload.hex()))
        self._info = None  # the model changed

    def run_batch(self, input_sets: Sequence[Sequence[np.ndarray]]) -> list[list[np.ndarray]]:
        """Every input set's outputs, with all requests of the batch (SET_INPUT, INVOKE,
        GET_OUTPUT per set) written before the first reply is read: one link round trip per
        batch instead of three or more per sample. For links that hold what the device has
        not read yet (an emulator's or the host board's), not a bare hardware UART, whose
        receive FIFO would overflow while the device computes. Any error reply raises, as
        request() does; nothing is retried."""
        info = self._cached_info()
        chunk_in, chunk_out = self.max_payload - 5, self.max_payload - 8
        plan: list[tuple[int, bytes, int | None]] = []  # (type, payload, output index)
        for inputs in input_sets:
            if len(inputs) != len(info.inputs):
                raise InputDataError(f"the device model has {len(info.inputs)} input(s), "
                                     f"{len(inputs)} given")  # fmt: skip
            for k, (x, t) in enumerate(zip(inputs, info.inputs)):
                arr = np.asarray(x)
                if arr.dtype != t.dtype or tuple(arr.shape) != t.shape:
                    raise InputDataError(f"input {k}: device expects {t.dtype} {t.shape}, got "
                                         f"{arr.dtype} {tuple(arr.shape)}")  # fmt: skip
                data = arr.astype(t.dtype.newbyteorder("<")).tobytes()
                for off in range(0, max(len(data), 1), chunk_in):
                    plan.append((MsgType.SET_INPUT,
                                 struct.pack("<BI", k, off) + data[off : off + chunk_in], None))
            plan.append((MsgType.INVOKE, b"", None))
            for k, t in enumerate(info.outputs):
                for off in range(0, max(t.nbytes, 1), chunk_out):
                    plan.append((MsgType.GET_OUTPUT, struct.pack("<BIH", k, off, chunk_out), k))
        seqs = []
        for frame_type, payload, _ in plan:
            seqs.append(self.next_seq())
            self.link.send(frame_type, seqs[-1], payload)
        replies: dict[int, Frame] = {}
        deadline = time.monotonic() + self.timeout + self.invoke_timeout * len(input_sets)
        wanted = set(seqs)
        while wanted:
            reply = self.link.receive(max(0.0, deadline - time.monotonic()))
            if reply is None:
                raise DeviceTimeout(f"{len(wanted)} of {len(seqs)} batched replies missing from "
                                    f"{self.link.name}", port=self.link.name)  # fmt: skip
            if reply.type == MsgType.FAULT:
                raise DeviceFault(reply.payload, self.link.name)
            if reply.seq not in wanted:
                self.stale_replies += 1
                continue
            if reply.type == MsgType.ERROR:
                index = seqs.index(reply.seq)
                raise self._device_error(_type_name(plan[index][0]), reply)
            replies[reply.seq] = reply
            wanted.discard(reply.seq)
        return self._batch_outputs(info, plan, seqs, replies, len(input_sets))

    def _batch_outputs(self, info: DeviceInfo, plan: list[tuple[int, bytes, int | None]],
                       seqs: list[int], replies: dict[int, Frame],
                       n_sets: int) -> list[list[np.ndarray]]:  # fmt: skip
        """run_batch's GET_OUTPUT replies reassembled, per input set and output."""
        chunks: list[list[bytes]] = [[] for _ in range(n_sets * len(info.outputs))]
        invokes = 0
        for (frame_type, _, k), seq in zip(plan, seqs):
            if frame_type == MsgType.INVOKE:
                invokes += 1
            if k is None:
                continue
            payload = replies[seq].payload
            if len(payload) < 8:
                raise self._malformed("GET_OUTPUT", ValueError("reply shorter than 8 bytes"))
            chunks[(invokes - 1) * len(info.outputs) + k].append(payload[8:])
        out = []
        for s in range(n_sets):
            arrays = []
            for k, t in enumerate(info.outputs):
                data = b"".join(chunks[s * len(info.outputs) + k])
                if len(data) != t.nbytes:
                    raise self._malformed("GET_OUTPUT", ValueError(
                        f"{len(data)} bytes, INFO says {t.nbytes}"))  # fmt: skip
                le = np.frombuffer(data, dtype=t.dtype.newbyteorder("<"))
                arrays.append(le.astype(t.dtype).reshape(t.shape))
            out.append(arrays)
        return out

    # -- the exchange ----------------------------------------------------------------------

    def next_seq(self) -> int:
        self._seq = self._seq % 0xFFFF + 1
        return self._seq

    def request(
        self, frame_type: int, payload: bytes = b"", *, timeout: float | None = None
    ) -> Frame:
        """Send one request and return its reply frame (retrying with the same seq)."""
        if len(payload) > self.max_payload:
            raise ValueError(
                f"payload of {len(payload)} bytes exceeds the device's {self.max_payload}"
            )
        wait = self.timeout if timeout is None else timeout
        seq = self.next_seq()
        name = _type_name(frame_type)
        last_link_error: Frame | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                self.retries_used += 1
            self.link.send(frame_type, seq, payload)
            deadline = time.monotonic() + wait
            while (remaining := deadline - time.monotonic()) > 0:
                reply = self.link.receive(remaining)
                if reply is None:
                    break
                if reply.type == MsgType.FAULT:
                    raise DeviceFault(reply.payload, self.link.name)
                if reply.seq != seq or reply.type == MsgType.READY:
                    self.stale_replies += 1
                    continue
                if reply.type == MsgType.ERROR:
                    code = reply.payload[0] if reply.payload else 0
                    if code in LINK_ERRORS:  # our frame was damaged: send it again now
                        last_link_error = reply
                        break
                    raise self._device_error(name, reply)
                if reply.type != (frame_type | RESPONSE):
                    self.stale_replies += 1
                    continue
                return reply
        if last_link_error is not None:
            raise self._device_error(name, last_link_error, f" after {self.retries} retries")
        raise DeviceTimeout(
            f"no reply to {name} (seq {seq}) from {self.link.name} within {wait:g} s, "
            f"after {self.retries} retries",
            request=name,
            port=self.link.name,
        )

    def _device_error(self, name: str, reply: Frame, note: str = "") -> DeviceError:
        code, detail = 0, 0
        if len(reply.payload) >= 6:
            code, _, detail = struct.unpack_from("<BBI", reply.payload)
        elif reply.payload:
            code = reply.payload[0]
        what = f"{_error_name(code)} (detail {detail})"
        if detail == ARENA_GUARD_DETAIL:
            what = "the invoke wrote past the model's arena (its guard bytes changed)"
        elif detail == STACK_OVERFLOW_DETAIL:
            what = ("the invoke overflowed the device's stack (the canary words at its limit "
                    "changed): rebuild with a larger stack (TH_STACK_BYTES)")  # fmt: skip
        return DeviceError(
            f"{self.link.name} refused {name}: {what}{note}",
            code=code,
            detail=detail,
            request=name,
            port=self.link.name,
        )

    def _malformed(self, name: str, exc: Exception) -> DeviceError:
        return DeviceError(
            f"malformed {name} reply from {self.link.name}: {exc}",
            request=name,
            port=self.link.name,
        )

    def close(self) -> None:
        self.link.close()

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
