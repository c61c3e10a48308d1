"""The static worst-case stack (deploy/stack.py): known (no unexplained recursion or dynamic
frame) for the protocol firmware of both backends on the QEMU boards, within the stack the
fit check reserves, and never below the stack an invoke was measured to use (painted)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from paths import PROJECT_MODELS, SHARED_MODELS
from tinyhost.deploy.bench import bench
from tinyhost.plan.budget import Reserves
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_stack_bound"

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed")  # fmt: skip

MODELS = [PROJECT_MODELS / "kws_dscnn_int8.tflite",
          PROJECT_MODELS / "pad_concat_requantize_int8.tflite"]  # fmt: skip
if (SHARED_MODELS / "mlperf_tiny" / "vww_96_int8.tflite").is_file():
    MODELS.append(SHARED_MODELS / "mlperf_tiny" / "vww_96_int8.tflite")


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_static_bound_covers_the_measured_peak(path: Path, board: str, backend: str) -> None:
    r = bench(read_model(path), board, backend=backend,
              work_dir=BUILD / f"{board}-{backend}-{path.stem}")  # fmt: skip
    assert r.stack_static_bytes is not None
    assert r.stack_peak_bytes is not None and r.stack_peak_bytes > 0
    assert r.stack_peak_bytes <= r.stack_static_bytes <= Reserves().stack
