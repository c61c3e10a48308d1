"""Link storms on the real firmware: thousands of corrupt, truncated, oversized, duplicated and
reordered frames, written whole, in random pieces and byte by byte, with pauses, interleaved
with valid exchanges whose answers are checked. The device must answer every valid request
correctly, never hang, and its link counters (INFO) must account for every rejected frame:
the host classifies each delimited chunk it sent with its own decoder (the same COBS, length
and CRC rules) and the device's `frames_bad` must grow by exactly that many."""

from __future__ import annotations

import shutil
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost import reference
from tinyhost.boards import load_board
from tinyhost.codegen import get_backend
from tinyhost.deploy.protocol import Device, FrameError, FrameReader, MsgType, encode_frame
from tinyhost.deploy.runner import build_firmware, invoke_once, open_device
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_link_storm"
MODEL = PROJECT_MODELS / "digits_tf_int8.tflite"


def _damaged(rng: np.random.Generator, device: Device) -> tuple[bytes, str]:
    """One delimited chunk of a kind drawn at random (0x00 on both ends)."""
    kind = rng.choice(["garbage", "flipped", "truncated", "oversized", "duplicate",
                       "reordered"], p=[0.3, 0.25, 0.25, 0.02, 0.09, 0.09])  # fmt: skip
    seq = int(rng.integers(1, 0xFFFF))
    good = encode_frame(MsgType.INFO, seq, b"")  # 0x00 ... 0x00
    if kind == "garbage":
        body = rng.integers(1, 256, int(rng.integers(1, 48)), dtype=np.uint8).tobytes()
        return b"\x00" + body + b"\x00", kind
    if kind == "flipped":
        raw = bytearray(good)
        k = int(rng.integers(1, len(raw) - 1))
        raw[k] = (raw[k] ^ (1 << int(rng.integers(0, 8)))) or 0x55  # stays a non-delimiter
        return bytes(raw), kind
    if kind == "truncated":
        return good[: int(rng.integers(2, len(good) - 1))] + b"\x00", kind
    if kind == "oversized":
        n = 5 + device.max_payload + 4 + int(rng.integers(8, 200))
        return b"\x00" + rng.integers(1, 256, 2 * n, dtype=np.uint8).tobytes() + b"\x00", kind
    if kind == "duplicate":  # a valid INFO sent twice: the second is answered from the cache
        return good + good, kind
    return good, kind  # "reordered": a valid request with an arbitrary (old) seq


def _write(device: Device, data: bytes, rng: np.random.Generator) -> None:
    """Whole, in random pieces, or byte by byte, sometimes with a pause."""
    port = device.link.port
    style = rng.integers(0, 10)
    if style == 0:
        for b in data:
            port.write(bytes([b]))
    elif style < 4:
        cuts = sorted(set(int(c) for c in rng.integers(0, len(data), 3)))
        for a, b in zip([0, *cuts], [*cuts, len(data)]):
            port.write(data[a:b])
            if rng.random() < 0.05:
                time.sleep(0.002)
    else:
        port.write(data)
    if hasattr(port, "flush"):
        port.flush()


def _drain(device: Device) -> None:
    """Read the device's answers to the storm until the link is quiet."""
    while device.link.receive(0.05) is not None:
        pass


def _storm(device: Device, frames: int, check_every: int, x: np.ndarray,
           want: np.ndarray) -> None:  # fmt: skip
    rng = np.random.default_rng(zlib.crc32(device.link.name.encode()))
    before = device.info()
    assert before.frames_bad is not None, "the firmware reports no link counters"
    rejected = checked = 0
    for k in range(frames):
        chunk, _ = _damaged(rng, device)
        # what the device must reject: the host decoder's verdict on each delimited chunk
        verdicts = FrameReader(5 + device.max_payload + 4).feed(chunk)
        rejected += sum(isinstance(v, FrameError) for v in verdicts)
        _write(device, chunk, rng)
        if (k + 1) % check_every == 0 or k + 1 == frames:
            _drain(device)
            run = invoke_once(device, [x])  # a valid exchange, answer checked
            np.testing.assert_array_equal(run.outputs[0], want)
            checked += 1
    _drain(device)
    after = device.info()
    assert after.frames_bad - before.frames_bad == rejected
    assert after.replies_cached > before.replies_cached  # the duplicates were recognized
    assert checked >= frames // check_every


def _firmware(board_name: str) -> Path:
    board = load_board(board_name)
    conv = get_backend("interpreter").convert(read_model(MODEL), board,
                                              BUILD / board_name / "model")  # fmt: skip
    return build_firmware(conv.out_dir, board, BUILD / board_name / "build").elf


def _sample() -> tuple[np.ndarray, np.ndarray]:
    graph = read_model(MODEL)
    x = np.random.default_rng(3).integers(-128, 128, graph.tensors[graph.inputs[0]].shape)
    x = x.astype(np.int8)
    return x, reference.run(graph, [x]).outputs[0]


def test_storm_on_the_host_board() -> None:
    x, want = _sample()
    with open_device(_firmware("host"), "host", timeout=300.0) as device:
        _storm(device, 10_000, 250, x, want)


@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="qemu-system-arm not installed")
@pytest.mark.parametrize("board", ["mps2-an386", "netduinoplus2"])
def test_storm_on_qemu(board: str) -> None:
    x, want = _sample()
    with open_device(_firmware(board), board, timeout=600.0) as device:
        _storm(device, 2_000, 100, x, want)
