"""Corrupted interpreter blobs are refused with an error code, never read or written outside.

Hundreds of blobs (bit flips, truncations, bad offsets, huge sizes, nonsense parameters, with
and without a recomputed CRC) go through th_interp_init in a native driver built with
AddressSanitizer and UBSan: each blob sits in a buffer of exactly its length and the arena is
allocated at exactly the size passed, so any out-of-bounds access aborts the driver. A blob
that still validates (e.g. a flipped weight bit with a fixed CRC) must also run.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS, SHARED_MODELS
from tinyhost.boards import load_board
from tinyhost.codegen.blob import HEADER, OP, TENSOR, build_blob, read_header
from tinyhost.codegen.interpreter import convert
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_blob_fuzz"
OK, E_TRUNCATED, E_MAGIC, E_VERSION, E_CRC = 0, 2, 3, 4, 5

BASE_MODELS = [
    PROJECT_MODELS / "vision_hswish_concat_sigmoid_int8.tflite",
    PROJECT_MODELS / "pad_concat_requantize_int8.tflite",
    PROJECT_MODELS / "transpose_strided_slice_int8.tflite",
    PROJECT_MODELS / "elementwise_add_sub_mul_broadcast_int8.tflite",
    PROJECT_MODELS / "mobilenet_block_residual_int8.tflite",
    PROJECT_MODELS / "float_io_conv_mean_fc_int8.tflite",
    SHARED_MODELS / "mlperf_tiny" / "kws_ref_model.tflite",
]


@dataclass(frozen=True)
class Outcome:
    status: int
    op: int
    detail: int
    invoked: bool


@pytest.fixture(scope="module")
def driver() -> Path:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc not found")
    BUILD.mkdir(parents=True, exist_ok=True)
    # The all-ops table of a convert run: every adapter whose kernel exists.
    conv = convert(read_model(BASE_MODELS[0]), load_board("host"), BUILD / "table", all_ops=True)
    interp = REPO / "firmware" / "interpreter"
    sources = [interp / "th_interp.c", interp / "test" / "blob_check.c",
               conv.out_dir / "th_ops_table.c"]  # fmt: skip
    sources += sorted(interp.glob("ops_*.c"))
    sources += sorted((REPO / "kernels_c").rglob("*.c"))
    exe = BUILD / "blob_check"
    cmd = [gcc, "-std=c99", "-O1", "-g", "-fsanitize=address,undefined",
           "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-Wall", "-Wextra", "-Werror",
           "-I", str(interp), "-I", str(REPO / "firmware" / "include"),
           "-I", str(REPO / "kernels_c" / "include"),
           "-I", str(REPO / "kernels_c"), *map(str, sources), "-o", str(exe)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return exe


def run_driver(exe: Path, cases: list[tuple[bytes, int]]) -> list[Outcome]:
    stdin = b"".join(struct.pack("<II", len(b), arena) + b for b, arena in cases)
    proc = subprocess.run([str(exe)], input=stdin, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-4000:]
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == len(cases), proc.stderr.decode(errors="replace")[-2000:]
    return [Outcome(int(s), int(o), int(d), i == "1") for s, o, d, i in
            (line.split() for line in lines)]  # fmt: skip


def fix_crc(blob: bytearray) -> bytearray:
    total = min(struct.unpack_from("<I", blob, 8)[0], len(blob))
    if total >= 16:
        struct.pack_into("<I", blob, 12, zlib.crc32(bytes(blob[16:total])) & 0xFFFFFFFF)
    return blob


def _bases() -> list[tuple[str, bytes, int]]:
    out = []
    for path in BASE_MODELS:
        if not path.is_file():
            continue
        blob = build_blob(read_model(path))
        out.append((path.stem, blob.data, blob.arena_bytes))
    return out


def _field_offsets(blob: bytes) -> list[tuple[int, int]]:
    """(byte offset, size) of every structural field: header, tensor and op records, params."""
    h = read_header(blob)
    fields = [(off, 4) for off in range(8, HEADER.size, 4)] + [(24, 2), (26, 2), (28, 2)]
    for t in range(h.n_tensors):
        base = h.tensors_off + t * TENSOR.size
        fields += [(base, 1), (base + 1, 1), (base + 2, 1), (base + 3, 1)]
        fields += [(base + 4 + 4 * d, 4) for d in range(6)] + [(base + 28, 4), (base + 32, 4)]
    for o in range(h.n_ops):
        base = h.ops_off + o * OP.size
        fields += [(base, 2), (base + 2, 1), (base + 3, 1)]
        fields += [(base + off, 4) for off in (4, 8, 12, 16, 20)]
    fields += [(h.io_off + 2 * k, 2) for k in range(h.io_count)]
    fields += [(h.params_off + 4 * k, 4) for k in range(h.params_words)]
    return fields


NASTY = [0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFF0,
         0x40000000, 0x10, -1 & 0xFFFFFFFF, 6, 7, 64]  # fmt: skip


def mutations(name: str, blob: bytes, arena: int, rng: np.random.Generator, n: int):
    """(label, blob, arena_len, crc_ok) for n corruptions of one blob."""
    fields = _field_offsets(blob)
    for k in range(n):
        kind = k % 6
        b = bytearray(blob)
        if kind == 0:  # random bit flips, CRC left stale
            for _ in range(int(rng.integers(1, 9))):
                pos = int(rng.integers(0, len(b)))
                b[pos] ^= 1 << int(rng.integers(0, 8))
            yield f"{name}: bit flips", bytes(b), arena, False
        elif kind == 1:  # truncation (total_size says more than there is)
            cut = int(rng.integers(0, len(b)))
            yield f"{name}: truncated to {cut}", bytes(b[:cut]), arena, False
        elif kind == 2:  # a structural field set to a nasty value, CRC recomputed
            off, size = fields[int(rng.integers(0, len(fields)))]
            value = NASTY[int(rng.integers(0, len(NASTY)))] & ((1 << (8 * size)) - 1)
            b[off : off + size] = value.to_bytes(size, "little")
            yield f"{name}: field @{off} = {value:#x}", bytes(fix_crc(b)), arena, True
        elif kind == 3:  # a structural field set to random bits, CRC recomputed
            off, size = fields[int(rng.integers(0, len(fields)))]
            b[off : off + size] = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
            yield f"{name}: field @{off} random", bytes(fix_crc(b)), arena, True
        elif kind == 4:  # bit flips anywhere, CRC recomputed (weights, params, tables)
            for _ in range(int(rng.integers(1, 5))):
                pos = int(rng.integers(16, len(b)))
                b[pos] ^= 1 << int(rng.integers(0, 8))
            yield f"{name}: flips + crc", bytes(fix_crc(b)), arena, True
        else:  # a short arena, or a blob whose total_size/arena claims are huge
            choice = int(rng.integers(0, 3))
            if choice == 0:
                yield f"{name}: arena {arena // 2}", blob, arena // 2, True
            elif choice == 1:
                struct.pack_into("<I", b, 20, 0xFFFFFFF0)  # arena_size
                yield f"{name}: huge arena_size", bytes(fix_crc(b)), arena, True
            else:
                struct.pack_into("<I", b, 8, len(b) + int(rng.integers(1, 1 << 20)))
                yield f"{name}: total_size past the end", bytes(b), arena, False


def test_valid_blobs_are_accepted_and_run(driver: Path) -> None:
    bases = _bases()
    assert bases, "no base models"
    outcomes = run_driver(driver, [(data, arena) for _, data, arena in bases])
    for (name, _, _), out in zip(bases, outcomes):
        assert out == Outcome(OK, -1, 0, True) or (out.status == OK and out.invoked), name


def test_corrupted_blobs_are_refused_without_memory_errors(driver: Path) -> None:
    rng = np.random.default_rng(2026)
    bases = _bases()
    per_base = max(100, 720 // max(len(bases), 1))
    cases = [m for name, data, arena in bases for m in mutations(name, data, arena, rng, per_base)]
    outcomes = run_driver(driver, [(b, arena) for _, b, arena, _ in cases])
    refused = 0
    for (label, _blob, arena, crc_ok), out in zip(cases, outcomes):
        if out.status != OK:
            refused += 1
            assert 1 <= out.status <= 17, label
        if not crc_ok:
            # a stale CRC (or a cut) is caught before anything else is trusted
            assert out.status in (E_TRUNCATED, E_MAGIC, E_VERSION, E_CRC, 6), (label, out)
        if label.endswith("huge arena_size") or label.endswith(f"arena {arena}"):
            assert out.status != OK, (label, out)
    assert len(cases) >= 500
    assert refused >= 500, f"only {refused} of {len(cases)} refused"


def test_every_header_field_change_is_refused(driver: Path) -> None:
    """Changing any structural header word (with a fixed CRC) is caught: the layout is checked
    field by field, not just by checksum."""
    name, data, arena = _bases()[0]
    cases = []
    for off in (6, 8, 24, 26, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68, 72, 76):
        b = bytearray(data)
        size = 2 if off in (6, 24, 26, 28) else 4
        old = int.from_bytes(b[off : off + size], "little")
        b[off : off + size] = ((old + 0x1001) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        cases.append((bytes(fix_crc(b)), arena))
    outcomes = run_driver(driver, cases)
    assert all(o.status != OK for o in outcomes), outcomes


def test_stateful_blob_runs_and_its_corruptions_are_refused(driver: Path) -> None:
    """A model with state (SVDF's variable tensors, blob tensor flag bit 1, reset by init):
    valid it runs; corrupted (the flag on a constant tensor included) it is refused without a
    memory error."""
    from svdf_graphs import kws_svdf_graph

    graph = kws_svdf_graph(np.random.default_rng(5), second_bias=False)
    blob = build_blob(graph)
    h = read_header(blob.data)
    flagged = [t for t in range(h.n_tensors)
               if blob.data[h.tensors_off + t * TENSOR.size + 3] & 2]  # fmt: skip
    assert flagged == graph.variable_tensors()
    const = next(t for t in range(h.n_tensors) if blob.data[h.tensors_off + t * TENSOR.size + 2]
                 == 2)  # fmt: skip
    bad = bytearray(blob.data)
    bad[h.tensors_off + const * TENSOR.size + 3] |= 2  # "variable" on a constant
    rng = np.random.default_rng(17)
    cases = [("valid", blob.data, blob.arena_bytes, True),
             ("variable constant", bytes(fix_crc(bad)), blob.arena_bytes, True),
             *mutations("kws_svdf", blob.data, blob.arena_bytes, rng, 120)]
    outcomes = run_driver(driver, [(b, arena) for _, b, arena, _ in cases])
    assert outcomes[0].status == OK and outcomes[0].invoked
    assert outcomes[1].status == 8  # TH_INTERP_E_TENSOR
    for (label, _b, _arena, crc_ok), out in zip(cases[2:], outcomes[2:]):
        assert 0 <= out.status <= 17, label
        if not crc_ok:
            assert out.status in (E_TRUNCATED, E_MAGIC, E_VERSION, E_CRC, 6), (label, out)


def test_lstm_blob_runs_and_its_corruptions_are_refused(driver: Path) -> None:
    """Two LSTMs (four variable tensors, gate constants named by parameter words): valid it
    runs; corrupted it is refused or runs without a memory error; a weights word pointing
    past the constants is refused."""
    from lstm_graphs import lstm_stack_graph
    from tinyhost.codegen.interpreter_abi import ADAPTERS_BY_NAME

    graph = lstm_stack_graph(np.random.default_rng(5))
    blob = build_blob(graph)
    h = read_header(blob.data)
    flagged = [t for t in range(h.n_tensors)
               if blob.data[h.tensors_off + t * TENSOR.size + 3] & 2]  # fmt: skip
    assert flagged == graph.variable_tensors()
    words = ADAPTERS_BY_NAME["lstm_s8"].word_names()
    bad = bytearray(blob.data)
    at = h.params_off + 4 * words.index("recurrent_weights")  # the first op's word
    struct.pack_into("<i", bad, at, struct.unpack_from("<i", bad, at)[0] + (1 << 20))
    rng = np.random.default_rng(23)
    cases = [("valid", blob.data, blob.arena_bytes, True),
             ("weights past the constants", bytes(fix_crc(bad)), blob.arena_bytes, True),
             *mutations("lstm_stack", blob.data, blob.arena_bytes, rng, 120)]
    outcomes = run_driver(driver, [(b, arena) for _, b, arena, _ in cases])
    assert outcomes[0].status == OK and outcomes[0].invoked
    assert outcomes[1].status != OK
    for (label, _b, _arena, crc_ok), out in zip(cases[2:], outcomes[2:]):
        assert 0 <= out.status <= 17, label
        if not crc_ok:
            assert out.status in (E_TRUNCATED, E_MAGIC, E_VERSION, E_CRC, 6), (label, out)
