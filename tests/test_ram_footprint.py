"""RAM counted honestly, both backends: arena + the model code's other static RAM + the stack
peak measured during invoke (painted stack), with the protocol's buffers apart.

On QEMU mps2-an386 the firmware paints its stack before each INVOKE and reports the deepest
word overwritten; the linker map splits static RAM and code between the model (backend,
kernels, runtime), the protocol and the board (tinyhost.deploy.footprint).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from paths import PROJECT_MODELS, shared_model
from tinyhost.deploy.bench import bench
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_ram_footprint"
STACK = 16 << 10  # boards/common/th_sections.ld


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_ram_total_adds_up(backend: str) -> None:
    graph = read_model(PROJECT_MODELS / "kws_dscnn_int8.tflite")
    r = bench(graph, "mps2-an386", backend=backend, work_dir=BUILD / f"kws-{backend}")
    assert r.bit_exact
    assert r.stack_peak_bytes is not None and 0 < r.stack_peak_bytes < STACK
    assert r.ram_static_model_bytes is not None and r.ram_protocol_bytes is not None
    assert r.ram_total_bytes == r.arena_bytes + r.ram_static_model_bytes + r.stack_peak_bytes
    assert r.ram_protocol_bytes > 512  # the frame buffers, counted apart
    assert r.flash_model_code_bytes is not None
    assert 0 < r.flash_model_code_bytes < r.flash_firmware_code_bytes
    assert r.flash_code_bytes == r.flash_model_code_bytes
    out = r.to_json()
    assert out["ram_total_bytes"] == r.ram_total_bytes


def test_compiled_model_needs_less_static_ram_than_the_interpreter() -> None:
    """No interpreter context (its per-op profile alone is 1 KiB) in the compiled firmware."""
    graph = read_model(PROJECT_MODELS / "kws_dscnn_int8.tflite")
    interp, comp = (bench(graph, "mps2-an386", backend=b, work_dir=BUILD / f"kws-{b}")
                    for b in ("interpreter", "compiled"))  # fmt: skip
    assert comp.ram_static_model_bytes < interp.ram_static_model_bytes
    assert comp.ram_total_bytes < interp.ram_total_bytes


def test_stack_peak_sees_a_kernel_s_stack_table() -> None:
    """KWS's pointwise layers (Cout 64) keep their 1 KiB requantization table on the stack
    (th_nn.h): a painted-stack measurement must see more than that."""
    graph = read_model(shared_model("mlperf_tiny/kws_ref_model.tflite"))
    r = bench(graph, "mps2-an386", backend="compiled", work_dir=BUILD / "kws-ref")
    assert r.stack_peak_bytes is not None and r.stack_peak_bytes > 1024


def test_host_board_reports_no_stack() -> None:
    graph = read_model(PROJECT_MODELS / "digits_tf_int8.tflite")
    r = bench(graph, "host", work_dir=BUILD / "digits-host")
    assert r.stack_peak_bytes is None and r.ram_total_bytes is None
