"""Renode boards: the generated platform and script files, the command line, the missing-tool
error, the interpreter firmware built for them, and (where `renode` is installed) a real run
bit-exact with the reference over the UART socket."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS, SHARED
from tinyhost import reference
from tinyhost.boards import list_boards, load_board
from tinyhost.codegen.interpreter import convert
from tinyhost.deploy.renode import (
    BUNDLED_RENODE,
    RENODE_UARTS,
    RenodeFiles,
    find_renode,
    renode_command,
    renode_files_dir,
    repl_text,
    resc_text,
    write_renode_files,
)
from tinyhost.deploy.runner import RENODE_GRANULE, build_firmware, run_model
from tinyhost.errors import DeployError
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
RENODE_BOARDS = [n for n in list_boards() if load_board(n).renode_platform is not None]
MODEL = PROJECT_MODELS / "kws_dscnn_int8.tflite"
SHARED_RENODE = SHARED / "tools" / "renode"


def renode_available() -> bool:
    """Renode is found; where ../shared carries it `make setup` unpacked it, so never skip."""
    try:
        find_renode()
    except DeployError:
        return SHARED_RENODE.is_dir()  # -> the test runs and fails: set-up did not unpack it
    return True


NEEDS_RENODE = pytest.mark.skipif(not renode_available(),
                                  reason="no Renode and no ../shared/tools/renode")  # fmt: skip


def test_renode_boards_are_the_two_discovery_kits_and_ek_ra8m1() -> None:
    assert sorted(RENODE_BOARDS) == ["ek-ra8m1", "stm32f4_discovery", "stm32f746g_disco"]


@pytest.mark.parametrize("name", RENODE_BOARDS)
def test_committed_files_are_what_the_board_data_generates(name: str) -> None:
    d = renode_files_dir()
    assert (d / f"{name}.repl").read_text() == repl_text(name)
    assert (d / f"{name}.resc").read_text() == resc_text(name)


@pytest.mark.parametrize("name", RENODE_BOARDS)
def test_script_wires_the_board_data(name: str, tmp_path: Path) -> None:
    b = load_board(name)
    files = write_renode_files(name, tmp_path)
    repl, resc = files.repl.read_text(), files.resc.read_text()
    assert f'using "{b.renode_platform}"' in repl
    assert f"systickFrequency: {b.clock_hz}" in repl
    # the UART that board.json names (by base address) is the one exposed as a TCP server
    uart = RENODE_UARTS[b.uart.base]  # type: ignore[index]
    assert re.search(r'CreateServerSocketTerminal \$port "term" false', resc)
    assert f"connector Connect sysbus.{uart} term" in resc
    assert f"cpu PerformanceInMips {round(b.clock_hz / 1e6)}" in resc  # type: ignore[operator]
    assert f"cpu VectorTableOffset {b.flash.base:#010x}" in resc  # type: ignore[union-attr]
    # create, load platform, connect, load, start: in that order
    order = ["mach create", "LoadPlatformDescription", "connector Connect", "LoadELF", "start"]
    positions = [resc.index(step) for step in order]
    assert positions == sorted(positions)


@NEEDS_RENODE
@pytest.mark.parametrize("name", RENODE_BOARDS)
def test_platform_keeps_renodes_sysbus_init_without_the_svd_download(name: str) -> None:
    """Renode's CPU file's sysbus init, minus ApplySVD (5 failed downloads offline)."""
    tree = Path(find_renode().path).resolve().parent / "platforms"
    board_repl = (tree.parent / load_board(name).renode_platform).read_text()  # type: ignore[operator]
    cpu = re.search(r'using "(?:\./)?(platforms/cpus/[^"]+|[^"]+)"', board_repl)
    assert cpu is not None
    cpu_file = tree / "cpus" / Path(cpu.group(1)).name
    if not cpu_file.is_file():  # the discovery kit includes the board file, which names the CPU
        inner = (tree / "boards" / Path(cpu.group(1)).name).read_text()
        cpu_file = tree / "cpus" / Path(re.search(r'using "([^"]+)"', inner).group(1)).name  # type: ignore[union-attr]
    init = cpu_file.read_text().split("sysbus:\n    init:\n", 1)[1]
    theirs = [ln.strip() for ln in init.splitlines() if ln.strip().startswith(("Tag", "ApplySVD"))]
    ours = repl_text(name)
    if not any(t.startswith("ApplySVD") for t in theirs):  # e.g. RA8M1: nothing to download
        assert "sysbus:" not in ours  # Renode's own init stays as it is
        return
    assert "ApplySVD" not in ours and "sysbus:" in ours
    assert any(t.startswith("ApplySVD") for t in theirs)
    for line in theirs:
        if not line.startswith("ApplySVD"):
            assert line in ours


def test_command_line_overrides_elf_repl_and_port(tmp_path: Path) -> None:
    files = RenodeFiles(tmp_path / "b.repl", tmp_path / "b.resc")
    cmd = renode_command(files, tmp_path / "fw.elf", 4567, renode="renode")
    assert cmd[:4] == ["renode", "--disable-xwt", "--console", "--plain"]
    script = cmd[cmd.index("-e") + 1]
    assert f"$elf=@{(tmp_path / 'fw.elf').resolve()}" in script
    assert "$port=4567" in script
    assert script.endswith(f"i @{files.resc.resolve()}")


def test_paths_with_spaces_are_refused(tmp_path: Path) -> None:
    files = RenodeFiles(tmp_path / "b.repl", tmp_path / "b.resc")
    with pytest.raises(DeployError, match="whitespace"):
        renode_command(files, tmp_path / "my fw.elf", 4567)


def test_missing_renode_names_every_way_to_provide_it(tmp_path: Path) -> None:
    with pytest.raises(DeployError) as e:
        find_renode(None, {"PATH": str(tmp_path)}, root=tmp_path)
    msg = str(e.value)
    for option in ("--renode PATH", "TINYHOST_RENODE", "on PATH", "make setup",
                   "github.com/renode/renode/releases"):  # fmt: skip
        assert option in msg


def test_renode_search_order(tmp_path: Path) -> None:
    def exe(name: str) -> Path:
        p = tmp_path / name / "renode"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("#!/bin/sh\n")
        p.chmod(0o755)
        return p

    explicit, env_one, on_path = exe("explicit"), exe("env"), exe("path")
    bundled = tmp_path / "root" / BUNDLED_RENODE
    bundled.parent.mkdir(parents=True)
    bundled.write_text("")
    root = tmp_path / "root"
    env = {"TINYHOST_RENODE": str(env_one), "PATH": str(on_path.parent)}
    assert find_renode(str(explicit), env, root).path == str(explicit.resolve())
    assert find_renode(None, env, root).source == "TINYHOST_RENODE"
    assert find_renode(None, {"PATH": str(on_path.parent)}, root).source == "PATH"
    assert find_renode(None, {"PATH": ""}, root).source == "make setup"
    with pytest.raises(DeployError, match="--renode /nowhere/renode: no such"):
        find_renode("/nowhere/renode", env, root)


def test_missing_renode_refused_before_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TINYHOST_RENODE", str(tmp_path / "no-renode"))
    graph = read_model(MODEL)
    x = np.zeros(graph.tensors[graph.inputs[0]].shape, np.int8)
    work = tmp_path / "work"
    with pytest.raises(DeployError, match="no such Renode"):
        run_model(graph, "stm32f4_discovery", [[x]], work_dir=work)
    assert not work.exists()  # nothing converted or built


def test_non_renode_board_has_no_renode_files() -> None:
    with pytest.raises(DeployError, match="no Renode platform"):
        repl_text("mps2-an386")


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="arm-none-eabi-gcc not installed")
@pytest.mark.parametrize("name", [n for n in RENODE_BOARDS if n != "ek-ra8m1"])  # that one
def test_interpreter_firmware_builds_for_renode_board(name: str) -> None:  # runs: test_ek_ra8m1
    """The firmware Renode would run: vectors at the flash base, DWT counter, no semihosting."""
    b = load_board(name)
    work = REPO / "build" / "test_renode" / name
    conv = convert(read_model(MODEL), b, work / "model")
    fw = build_firmware(conv.out_dir, b, work / "build")
    out = subprocess.run(["arm-none-eabi-readelf", "-S", str(fw.elf)], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    m = re.search(r"\.vectors?\s+PROGBITS\s+([0-9a-f]+)", out) or re.search(
        r"\.isr_vector\s+PROGBITS\s+([0-9a-f]+)", out)  # fmt: skip
    text = re.search(r"\.text\s+PROGBITS\s+([0-9a-f]+)", out)
    first = int(m.group(1), 16) if m else int(text.group(1), 16)  # type: ignore[union-attr]
    assert first == b.flash.base  # type: ignore[union-attr]
    nm = subprocess.run(["arm-none-eabi-nm", str(fw.elf)], capture_output=True, text=True,
                        check=True).stdout  # fmt: skip
    assert "th_counter_read" in nm
    assert fw.size.text + fw.size.data <= b.flash.size  # type: ignore[union-attr]
    assert fw.size.data + fw.size.bss <= b.ram.size  # type: ignore[union-attr]


@NEEDS_RENODE
@pytest.mark.parametrize("name", [n for n in RENODE_BOARDS if n != "ek-ra8m1"])  # that one:
def test_model_on_renode_bit_exact(name: str) -> None:  # tests/test_ek_ra8m1.py, both backends
    graph = read_model(MODEL)
    rng = np.random.default_rng(1)
    sets = [[rng.integers(-128, 128, graph.tensors[graph.inputs[0]].shape).astype(np.int8)]
            for _ in range(2)]  # fmt: skip
    report = run_model(graph, name, sets, work_dir=REPO / "build" / "test_renode" / f"run-{name}",
                       timeout=300)  # fmt: skip
    for inputs, run in zip(sets, report.runs):
        for got, want in zip(run.outputs, reference.run(graph, inputs).outputs):
            np.testing.assert_array_equal(got, want)
        assert run.latency.unit == "instructions"
        assert len(run.latency.per_op) == len(graph.ops)
    assert report.emulator is not None and report.emulator["version"].startswith("Renode v")


@NEEDS_RENODE
def test_renode_counter_is_qemus_instruction_count_in_steps_of_24() -> None:
    """What Renode's counter measures: the firmware's counter delta is the executed instruction
    count (PerformanceInMips = clock MHz, SysTick at the clock), read in steps of 24. The same
    model and input on QEMU's Cortex-M4 (netduinoplus2, exact icount) gives the same total to
    within a few granules (the two boards' firmware differ only in their drivers)."""
    graph = read_model(MODEL)
    x = np.random.default_rng(3).integers(-128, 128, graph.tensors[graph.inputs[0]].shape)
    sets = [[x.astype(np.int8)]]
    renode = run_model(graph, "stm32f4_discovery", sets, timeout=300,
                       work_dir=REPO / "build" / "test_renode" / "unit-renode").runs[0].latency
    qemu = run_model(graph, "netduinoplus2", sets, timeout=300,
                     work_dir=REPO / "build" / "test_renode" / "unit-qemu").runs[0].latency
    assert (renode.unit, qemu.unit) == ("instructions", "instructions")
    assert all(n % RENODE_GRANULE == 0 for n in [renode.total, *renode.per_op])
    assert renode.total > 0
    # one granule per reading, and per op the two boards' counter-read code (DWT/SysTick
    # read vs QEMU's icount mark) differ by a few instructions: 0.1% here, measured 8 apart
    assert abs(renode.total - qemu.total) <= RENODE_GRANULE * (len(graph.ops) + 2)
    # per-op deltas partition the invoke on Renode (QEMU's marks exclude the dispatch glue)
    assert sum(renode.per_op) == renode.total
    assert sum(qemu.per_op) < qemu.total


@NEEDS_RENODE
@pytest.mark.usefixtures("demo_tree")
def test_demo_runs_on_renode() -> None:
    from tinyhost.demo import run_demo

    text = run_demo(board="stm32f4_discovery")
    assert "on stm32f4_discovery (interpreter backend" in text
    m = re.search(r"outputs bit-exact with the reference: (\d+)/(\d+)", text)
    assert m is not None and m.group(1) == m.group(2)
    assert "run by Renode v" in text and "instructions per inference" in text
