"""Corrupt, truncated and random files: always tinyhost's own error, never a crash or hang.

Every mutated file goes through the reader, `inspect` and the reference. A mutation may
leave a valid model (a flipped weight bit); then everything must simply work.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from paths import SHARED_MODELS, project_models
from tinyhost import reference
from tinyhost.errors import TinyhostError
from tinyhost.report.inspect import inspect_graph
from tinyhost.tflite import read_model_bytes

_SECONDS_PER_CASE = 20


def _base_models() -> list[bytes]:
    wanted = (
        "kws_dscnn_int8",
        "mobilenet_block_residual_int8",
        "reshape_fc_softmax_int8",
        "pad_concat_requantize_int8", "vision_hswish_concat_sigmoid_int8",
    )
    paths = [p for p in project_models() if p.stem in wanted]
    shared = SHARED_MODELS / "tflm" / "hello_world_int8.tflite"
    if shared.is_file():
        paths.append(shared)
    assert paths, "no base models to mutate"
    return [p.read_bytes() for p in paths]


def _mutations(seed: int) -> Iterator[tuple[str, bytes]]:
    rng = np.random.default_rng(seed)
    bases = _base_models()
    yield "empty", b""
    yield "text", b"this is not a model\n" * 10
    yield "identifier only", b"\x10\x00\x00\x00TFL3" + bytes(8)
    for k in range(80):
        base = bases[k % len(bases)]
        cut = int(rng.integers(1, len(base)))
        yield f"truncated at byte {cut}", base[:cut]
    for k in range(160):
        base = bytearray(bases[k % len(bases)])
        # Half the flips hit the first and last KiB, where tables and vectors of offsets sit.
        for _ in range(int(rng.integers(1, 9))):
            region = int(rng.integers(0, 3))
            if region == 0:
                pos = int(rng.integers(0, min(1024, len(base))))
            elif region == 1:
                pos = int(rng.integers(max(0, len(base) - 1024), len(base)))
            else:
                pos = int(rng.integers(0, len(base)))
            base[pos] ^= 1 << int(rng.integers(0, 8))
        yield f"bit flips #{k}", bytes(base)
    for k in range(40):
        n = int(rng.integers(8, 4096))
        junk = bytearray(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
        if k % 2:
            junk[4:8] = b"TFL3"
            junk[0:4] = int(rng.integers(0, n)).to_bytes(4, "little")
        yield f"random {n} bytes #{k}", bytes(junk)


@contextmanager
def _time_limit(seconds: int, what: str) -> Iterator[None]:
    def on_alarm(signum, frame):
        raise TimeoutError(f"{what}: still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _exercise(data: bytes) -> str:
    """Read, inspect and run the file; returns 'error' or 'ok'."""
    try:
        graph = read_model_bytes(data, "mutated.tflite")
        inspect_graph(graph)
        reference.check_executable(graph)
        reference.run(graph, reference.random_inputs(graph, np.random.default_rng(0)))
    except TinyhostError as e:
        message = str(e)
        assert message.startswith("mutated.tflite"), f"error does not name the file: {message}"
        assert "\n" not in message
        return "error"
    return "ok"


@pytest.mark.parametrize("seed", [11, 12])
def test_mutated_models_give_tinyhost_errors(seed: int) -> None:
    outcomes = {"error": 0, "ok": 0}
    cases = 0
    for label, data in _mutations(seed):
        with _time_limit(_SECONDS_PER_CASE, label):
            try:
                outcomes[_exercise(data)] += 1
            except Exception as e:  # anything but TinyhostError is a bug
                pytest.fail(f"{label}: {type(e).__name__}: {e}")
        cases += 1
    assert cases >= 280
    # Truncations and random files must all be refused; so the error count is at least theirs.
    assert outcomes["error"] >= 120, outcomes


def test_cli_reports_corrupt_model_in_one_line(tmp_path) -> None:
    bad = tmp_path / "broken.tflite"
    bad.write_bytes(_base_models()[0][:300])
    result = subprocess.run(
        [sys.executable, "-m", "tinyhost.cli", "inspect", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0], result.stderr


def test_cli_reports_missing_file(tmp_path) -> None:
    missing = tmp_path / "nope.tflite"
    result = subprocess.run(
        [sys.executable, "-m", "tinyhost.cli", "inspect", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == f"tinyhost: error: {missing}: no such file"
