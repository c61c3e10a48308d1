"""ek-ra8m1 (Renesas EK-RA8M1, Cortex-M85) on Renode: its board data against Renode's platform
file, and one Renode running the protocol firmware of both backends (start-up self-check,
MLPerf KWS and a project model bit-exact with the reference, per-op profiles).

Renode 1.15.1's cortex-m85 executes no Helium (MVE) and computes the Armv8.1-M conditional
selects (CSEL/CSET/CSINC/CSNEG) wrongly, and GCC 12 has no -mcpu=cortex-m85, so the board is
built for Armv7E-M (cortex-m7, the DSP kernels): see boards/README.md and
bench/renode_m85_isa.py, which shows both facts on the running Renode.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS, SHARED_MODELS, SKIP_NO_SHARED
from test_renode import NEEDS_RENODE
from test_renode_e2e import RenodePool
from tinyhost import reference
from tinyhost.boards import load_board
from tinyhost.cli.boards import board_summary
from tinyhost.codegen import get_backend
from tinyhost.codegen.blob import build_blob
from tinyhost.codegen.interpreter import convert, target_for
from tinyhost.deploy.renode import RENODE_UARTS, find_renode
from tinyhost.deploy.runner import build_firmware, invoke_once, renode_latency
from tinyhost.reference.executor import random_inputs
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_ek_ra8m1"
BOARD = "ek-ra8m1"
KWS = SHARED_MODELS / "mlperf_tiny" / "kws_ref_model.tflite"
PROJECT = PROJECT_MODELS / "kws_dscnn_int8.tflite"


def test_board_is_a_cortex_m85_built_for_armv7em() -> None:
    b = load_board(BOARD)
    assert (b.core_name, b.cpu, b.fpu, b.dsp, b.mve) == ("cortex-m85", "cortex-m7", "fpv5-d16",
                                                         True, False)  # fmt: skip
    assert b.renode_platform == "platforms/boards/renesas-ek_ra8m1.repl"
    assert not b.semihosting and b.flash_method is None
    row = board_summary(b)
    assert (row["core"], row["mcpu"]) == ("cortex-m85", "cortex-m7")
    assert row["runs_on"].startswith("Renode (")
    # boards without a "core" key show their -mcpu
    assert board_summary(load_board("mps3-an547"))["core"] == "cortex-m55"


def _blocks(repl: str) -> dict[str, str]:
    """Renode .repl entries by name: 'name: Type @ ...' plus its indented lines."""
    out: dict[str, str] = {}
    for m in re.finditer(r"^(\w+):([^\n]*\n(?:[ \t]+[^\n]*\n|\n)*)", repl, re.M):
        out[m.group(1)] = m.group(2)
    return out


@NEEDS_RENODE
def test_memory_map_and_uart_are_renodes_ra8m1() -> None:
    """Flash, RAM, the UART's base and its receive event as Renode's R7FA8M1A CPU file maps them."""
    b = load_board(BOARD)
    tree = Path(find_renode().path).resolve().parent
    board_repl = (tree / b.renode_platform).read_text()  # type: ignore[operator]
    cpu_file = re.search(r'using "([^"]+)"', board_repl).group(1)  # type: ignore[union-attr]
    blocks = _blocks((tree / cpu_file).read_text())
    assert '"cortex-m85"' in blocks["cpu"]

    def region(name: str) -> tuple[int, int]:
        text = blocks[name]
        bases = [int(x, 16) for x in re.findall(r"sysbus (0x[0-9A-Fa-f]+)", text)]
        size = int(re.search(r"size: (0x[0-9A-Fa-f]+)", text).group(1), 16)  # type: ignore[union-attr]
        return bases[0], size

    flash_base, flash_size = region("code_flash")
    ram_base, ram_size = region("sram")
    assert b.flash is not None and b.ram is not None
    assert b.flash.base == flash_base and b.flash.size <= flash_size
    assert (b.ram.base, b.ram.size) == (ram_base, ram_size)
    uart = RENODE_UARTS[b.uart.base]  # type: ignore[index]
    assert f"@ sysbus {b.uart.base:#x}" in blocks[uart].lower()
    rx_event = json.loads((b.path / "board.json").read_text())["uart"]["rx_event"]
    assert re.search(rf"ReceiveIRQ -> icu@{rx_event}\b", blocks[uart], re.I)


@pytest.fixture(scope="module")
def pool() -> Iterator[RenodePool]:
    p = RenodePool()
    yield p
    p.close()


def _check_runs(device, graph, seed: str, n_ops: int) -> None:  # noqa: ANN001
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    for _ in range(2):
        inputs = random_inputs(graph, rng)
        run = renode_latency(invoke_once(device, inputs))
        want = reference.run(graph, inputs).outputs
        assert len(run.outputs) == len(want)
        for got, exp in zip(run.outputs, want):
            np.testing.assert_array_equal(got.reshape(exp.shape), exp)
        assert run.latency.unit == "instructions" and run.latency.total > 0
        assert len(run.latency.per_op) == n_ops


@NEEDS_RENODE
def test_interpreter_on_ek_ra8m1(pool: RenodePool) -> None:
    """One interpreter firmware: the project KWS compiled in, MLPerf KWS over LOAD_MODEL."""
    b = load_board(BOARD)
    graph = read_model(PROJECT)
    conv = convert(graph, b, BUILD / "interp" / "model", all_ops=True, arena_bytes=32 << 10,
                   load_capacity=96 << 10)  # fmt: skip
    device = pool.load(BOARD, "interpreter", build_firmware(conv.out_dir, b,
                                                            BUILD / "interp" / "build").elf)
    info = device.info()
    assert info.backend == "interpreter" and info.model_ready
    assert info.selfcheck == "ok"  # SSUB8/SEL, SMLAD, SSAT & co. computed as the Arm ARM says
    _check_runs(device, graph, PROJECT.name, len(graph.ops))
    if not KWS.is_file():
        pytest.skip(SKIP_NO_SHARED)
    kws = read_model(KWS)
    device.load_model(build_blob(kws, target_for(b)).data)
    assert device.info().model_ready
    _check_runs(device, kws, KWS.name, len(kws.ops))


@NEEDS_RENODE
@pytest.mark.parametrize("path", [PROJECT, KWS], ids=["project-kws_dscnn", "mlperf-kws"])
def test_compiled_on_ek_ra8m1(pool: RenodePool, path: Path) -> None:
    if not path.is_file():
        pytest.skip(SKIP_NO_SHARED)
    b = load_board(BOARD)
    graph = read_model(path)
    out = BUILD / "compiled" / path.stem
    conv = get_backend("compiled").convert(graph, b, out / "model")
    device = pool.load(BOARD, f"compiled:{path.stem}",
                       build_firmware(conv.out_dir, b, out / "build").elf)
    info = device.info()
    assert info.backend == "compiled" and info.model_hash == conv.model_hash
    assert info.selfcheck == "ok"
    _check_runs(device, graph, path.name, len(conv.op_order))
