"""The static worst-case stack (deploy/stack.py): known (no unexplained recursion or dynamic
frame) for the protocol firmware of both backends on the QEMU boards, within the stack the
fit check derived before the build (plan/stack.py, which the firmware is linked with), and
never below the stack an invoke was measured to use (painted). The committed stack table
covers what the kernels of this checkout measure."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from paths import PROJECT_MODELS, SHARED_MODELS
from tinyhost.deploy.bench import bench
from tinyhost.plan.stack import DEFAULT_STACK_BYTES
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
    assert r.budget is not None
    reserve = r.budget.reserves.stack
    assert r.stack_peak_bytes <= r.stack_static_bytes <= reserve < DEFAULT_STACK_BYTES


def test_stack_table_covers_this_checkout() -> None:
    """plan/stack_table.json is at least what the kernels and firmware of this checkout
    measure, per CPU (else: python -m tinyhost.deploy.stack_table)."""
    from tinyhost.deploy.stack_table import main

    assert main(["--check", "--work-dir", str(BUILD / "table")]) == 0


def test_reserve_follows_the_kernels() -> None:
    """A model calling only light kernels gets a smaller stack than one calling the deepest
    (and every Cortex-M CPU the boards use has a table entry)."""
    from tinyhost.boards import load_board
    from tinyhost.plan.stack import stack_reserve

    for name in ("mps2-an386", "mps2-an500", "mps3-an547", "netduinoplus2",
                 "stm32f746g_disco"):  # fmt: skip
        board = load_board(name)
        light = stack_reserve(board, ["th_maxpool_s8"])
        every = stack_reserve(board, None)
        assert light.derived and every.derived
        assert light.bytes < every.bytes < DEFAULT_STACK_BYTES
