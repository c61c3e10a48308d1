"""Exact instruction latency on QEMU (icount plugin mark mode) and `tinyhost bench`.

Needs arm-none-eabi-gcc, cmake, gcc and qemu-system-arm (skips with the reason otherwise).
Uses only the project's small models in tests/models.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost.boards import load_all_boards, load_board
from tinyhost.cli import main as cli_main
from tinyhost.codegen.interpreter import convert
from tinyhost.deploy import build
from tinyhost.deploy.bench import deterministic_inputs
from tinyhost.deploy.build import size_of
from tinyhost.deploy.icount import (
    MARKER_OVERHEAD,
    MarkLog,
    build_plugin,
    invoke_latency,
    marker_addresses,
)
from tinyhost.deploy.qemu import Plugin, run_semihosted
from tinyhost.deploy.runner import build_firmware, open_device, run_model
from tinyhost.errors import DeployError
from tinyhost.ir.stats import graph_stats
from tinyhost.paths import repo_root
from tinyhost.tflite import read_model

ROOT = repo_root()
BUILD = ROOT / "build" / "test_bench_icount"
QEMU_BOARDS = sorted(b.name for b in load_all_boards() if b.qemu_machine is not None)
MODEL = PROJECT_MODELS / "mobilenet_block_residual_int8.tflite"  # conv, dwconv, add: 4+ ops
TINY = PROJECT_MODELS / "fc_keepdims_3d_int8.tflite"
LOOP_NS = [1, 10, 1000, 100000]  # boards/examples/icount/main.c

MISSING = [t for t in ("cmake", "arm-none-eabi-gcc", "qemu-system-arm", "gcc")
           if shutil.which(t) is None]  # fmt: skip
needs_tools = pytest.mark.skipif(bool(MISSING), reason=f"not installed: {', '.join(MISSING)}")


# --- pure host-side arithmetic -------------------------------------------------------------


def test_invoke_latency_arithmetic() -> None:
    # entry 100; op0 kernel between 110 and 160; op1 between 170 and 200; exit 215.
    counts = invoke_latency([100, 110, 160, 170, 200, 215], 2)
    assert counts.per_op == [160 - 110 - 2, 200 - 170 - 2]
    assert counts.total == 215 - 100 - 2
    with pytest.raises(DeployError, match="expected 6 marks"):
        invoke_latency([1, 2, 3, 4], 2)
    with pytest.raises(DeployError, match="not increasing"):
        invoke_latency([1, 2, 2, 4], 1)


def test_mark_log_reads_only_new_complete_lines(tmp_path: Path) -> None:
    f = tmp_path / "marks.txt"
    log = MarkLog(f)
    assert log.take() == []
    f.write_text("5\n17\n")
    assert log.take() == [5, 17]
    with f.open("a") as out:
        out.write("23\n4")  # "4" is a line still being written
    assert log.take() == [23]
    with f.open("a") as out:
        out.write("2\n")
    assert log.take() == [42]


def test_deterministic_input_bytes() -> None:
    graph = read_model(TINY)
    (x,) = deterministic_inputs(graph)
    raw = x.astype(x.dtype).tobytes()
    # byte i = (i*7+3) mod 256, written out by hand for the first ones and a wrap-around
    assert list(raw[:4]) == [3, 10, 17, 24]
    assert raw[36] == 255 and raw[37] == 6
    assert x.shape == tuple(graph.tensors[graph.inputs[0]].shape)


# --- the plugin's mark mode against hand-counted loops -------------------------------------


@needs_tools
@pytest.mark.parametrize("board", ["mps2-an386", "netduinoplus2"])
def test_mark_mode_is_exact(board: str) -> None:
    """With marks on th_mark_start and th_mark_stop of boards/examples/icount, each stop line
    minus its start line is the loop's hand count 3n + 2 (loops.S), I/O loop included."""
    fw = build(ROOT / "boards" / "examples" / "icount", board,
               ROOT / "build" / "tests" / f"icount-{board}")  # fmt: skip
    start, stop = marker_addresses(fw.elf)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "marks.txt"
        plugin = Plugin(build_plugin(), (("mark", hex(start)), ("mark", hex(stop)),
                                         ("out", str(out))))  # fmt: skip
        res = run_semihosted(fw.elf, board, timeout=60, plugin=plugin)
        assert res.ok, res.describe()
        lines = [int(v) for v in out.read_text().split()]
    assert len(lines) == 4 * len(LOOP_NS)
    diffs = [b - a for a, b in zip(lines[0::2], lines[1::2])]
    assert diffs == [3 * n + MARKER_OVERHEAD for n in LOOP_NS] * 2
    assert lines == sorted(lines)


# --- exact latency of the interpreter firmware ---------------------------------------------


def _input(graph) -> list[np.ndarray]:
    return deterministic_inputs(graph)


@needs_tools
@pytest.mark.parametrize("board", ["mps2-an386", "netduinoplus2"])
def test_exact_latency_repeats(board: str) -> None:
    graph = read_model(MODEL)
    x = _input(graph)
    reports = [run_model(graph, board, [x, x], work_dir=BUILD / f"{board}-{MODEL.stem}",
                         timeout=300) for _ in range(2)]  # fmt: skip
    runs = [r for rep in reports for r in rep.runs]  # two QEMU processes, two invokes each
    first = runs[0].latency
    assert first.unit == "instructions"
    assert first.hz == load_board(board).clock_hz
    assert len(first.per_op) == len(reports[0].op_names) >= 3
    assert all(n > 0 for n in first.per_op)
    assert sum(first.per_op) <= first.total
    for r in runs[1:]:
        assert r.latency == first


@needs_tools
def test_tim2_agrees_with_marks() -> None:
    """netduinoplus2's TIM2 counts one per instruction under icount. The device's own figures
    span counter read to counter read, the marks' figures mark to mark: the invoke totals differ
    by the few instructions outside the first and last counter read, and each op's TIM2 count
    is its exact kernel count plus the next op's dispatch."""
    graph = read_model(MODEL)
    work = BUILD / f"netduinoplus2-{MODEL.stem}"
    convert(graph, load_board("netduinoplus2"), work / "model")
    fw = build_firmware(work / "model", "netduinoplus2", work / "build")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "marks.txt"
        with open_device(fw.elf, "netduinoplus2", timeout=120, icount_out=out) as dev:
            log = MarkLog(out)
            for k, x in enumerate(_input(graph)):
                dev.set_input(k, x)
            log.take()
            tim2_total = dev.invoke()
            exact = invoke_latency(log.take(), dev.info().n_ops)
            tim2 = dev.get_profile()
    assert len(tim2) == len(exact.per_op)
    assert 0 < exact.total - tim2_total < 64, (exact.total, tim2_total)
    for t, e in zip(tim2, exact.per_op):
        assert e < t < e + 1000, (tim2, exact.per_op)


@needs_tools
@pytest.mark.parametrize("board", QEMU_BOARDS)
def test_unit_is_instructions_on_every_qemu_board(board: str) -> None:
    graph = read_model(TINY)
    rep = run_model(graph, board, [_input(graph)], work_dir=BUILD / f"{board}-{TINY.stem}",
                    timeout=300)  # fmt: skip
    lat = rep.runs[0].latency
    assert lat.unit == "instructions"
    assert 0 < sum(lat.per_op) <= lat.total


# --- tinyhost bench ------------------------------------------------------------------------


@needs_tools
def test_bench_json() -> None:
    board = "mps2-an386"
    work = BUILD / f"{board}-{MODEL.stem}"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli_main(["bench", str(MODEL), "--board", board, "--json", "--runs", "2",
                         "--work-dir", str(work)])  # fmt: skip
    assert code == 0
    out = json.loads(buf.getvalue())
    for key in ("model", "board", "backend", "instructions", "macs", "arena_bytes",
                "flash_code_bytes", "flash_data_bytes", "macs_per_instruction", "per_op",
                "unit", "bit_exact"):  # fmt: skip
        assert key in out, key
    graph = read_model(MODEL)
    assert out["model"] == MODEL.stem and out["board"] == board
    assert out["backend"] == "interpreter" and out["unit"] == "instructions"
    assert out["bit_exact"] is True and out["repeatable"] is True
    assert out["macs"] == graph_stats(graph).macs > 0
    assert out["instructions"] > 0
    assert out["macs_per_instruction"] == pytest.approx(out["macs"] / out["instructions"])
    assert sum(op["macs"] for op in out["per_op"]) == out["macs"]
    assert 0 < sum(op["instructions"] for op in out["per_op"]) <= out["instructions"]
    with tempfile.TemporaryDirectory() as tmp:
        result = convert(graph, load_board(board), Path(tmp))
    assert out["flash_data_bytes"] == result.model_flash_bytes == len(result.load_image or b"")
    elf = Path(json.loads((work / "build" / "th_app.json").read_text())["elf"])
    size = size_of(elf, load_board(board))
    assert out["flash_firmware_code_bytes"] + out["flash_data_bytes"] == size.text + size.data
    # the code that runs the model: less than the firmware's (no protocol, board or app)
    assert 0 < out["flash_code_bytes"] < out["flash_firmware_code_bytes"]
    est = out["cycles_estimate"]  # Cortex-M4: the board's core, labelled an estimate
    assert est["label"] == "estimate" and est["core"] == "cortex-m4" and est["assumptions"]
    assert out["instructions"] < est["cycles"] < 3 * out["instructions"]
    assert len(est["per_op"]) == len(out["per_op"]) and sum(est["per_op"]) <= est["cycles"]


# --- bench/mlperf.py's reading of PEERS.md -------------------------------------------------


def test_mlperf_parses_peer_table_by_header() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("mlperf", ROOT / "bench" / "mlperf.py")
    assert spec is not None and spec.loader is not None
    mlperf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mlperf)
    text = (
        "# Peers\n\n## TensorFlow Lite Micro on the same emulator\nnotes\n\n"
        "| model | TFLM arena bytes | MACs | TFLM+CMSIS-NN instructions | TFLM lib bytes (x) "
        "| first output bytes |\n|---|--:|--:|--:|--:|---|\n"
        "| mlperf_tiny/a | 1,024 | 2.5 M | 7,698,286 | 45,691 | 80,7f,0a |\n\n"
        "| board | TFLM+CMSIS-NN instructions |\n|---|--:|\n| other | 5 |\n"
    )
    peers = mlperf.parse_peers(text)
    assert list(peers) == ["mlperf_tiny/a"]
    fig = mlperf.peer_figures(peers["mlperf_tiny/a"])
    assert fig["tflm_instructions"] == 7698286 and fig["tflm_arena_bytes"] == 1024
    assert fig["tflm_lib_bytes"] == 45691 and fig["peer_macs"] == 2_500_000
    assert mlperf.peer_output_head(peers["mlperf_tiny/a"]) == [0x80, 0x7F, 0x0A]
