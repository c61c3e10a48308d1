"""`tinyhost convert`: float models are quantized first, bad models are refused before any
file is written, models too big for the board are refused with the bytes missing."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost.boards import MemoryRegion, load_board
from tinyhost.cli import main
from tinyhost.cli.quantize import quantize_for_convert
from tinyhost.codegen.blob import build_blob
from tinyhost.codegen.interpreter import convert, target_for
from tinyhost.plan.budget import DoesNotFitError
from tinyhost.quantize import QuantizeOptions
from tinyhost.tflite import read_model

DIGITS = PROJECT_MODELS / "digits_float.tflite"
UNSUPPORTED = PROJECT_MODELS / "unsupported" / "exp_gather_sqrt_neg_float.tflite"


@pytest.fixture(scope="module")
def calib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("calib") / "calib.npy"
    np.save(path, np.load(PROJECT_MODELS / "digits_data.npz")["calib_x"][:64])
    return path


def test_float_model_needs_calibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "out"
    assert main(["convert", str(DIGITS), "--board", "host", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "digits_float.tflite" in err and "--calib" in err
    assert not out.exists()


def test_float_model_is_quantized_with_the_calibration(tmp_path: Path, calib: Path) -> None:
    out = tmp_path / "out"
    assert main(["convert", str(DIGITS), "--board", "mps2-an386", "-o", str(out),
                 "--calib", str(calib)]) == 0  # fmt: skip
    # the same quantization done through the library gives the same blob, byte for byte
    graph = quantize_for_convert(read_model(DIGITS), str(calib), QuantizeOptions(),
                                 progress=False)  # fmt: skip
    blob = build_blob(graph, target_for(load_board("mps2-an386")), name="digits_float")
    assert (out / "model_blob.bin").read_bytes() == blob.data
    info = json.loads((out / "model.json").read_text())
    assert info["blob_crc"] == blob.crc and info["arena_bytes"] >= blob.arena_bytes
    assert (out / "model.cmake").is_file() and (out / "th_ops_table.c").is_file()


def test_random_calibration_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(DIGITS), "--board", "host", "-o", str(tmp_path / "o"),
                 "--calib", "random"]) == 0  # fmt: skip
    assert "accuracy is unknown" in capsys.readouterr().err


def test_unsupported_ops_all_listed_before_any_output(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["convert", str(UNSUPPORTED), "--board", "host", "-o", str(out),
                 "--calib", "random"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    for op in ("op 0 (EXP)", "op 3 (SQRT)", "op 4 (NEG)"):
        assert op in err
    assert not out.exists()


def test_model_too_big_for_the_board_says_by_how_much(tmp_path: Path) -> None:
    graph = quantize_for_convert(read_model(DIGITS), "random", warn=lambda _: None,
                                 progress=False)  # fmt: skip
    board = load_board("netduinoplus2")
    tiny = dataclasses.replace(board, ram=MemoryRegion(board.ram.base, 8 << 10))  # type: ignore[union-attr]
    with pytest.raises(DoesNotFitError) as info:
        convert(graph, tiny, tmp_path / "out")
    msg = str(info.value)
    m = re.search(r"RAM ([\d,]+) of 8,192 bytes .*exceeded by ([\d,]+) bytes", msg)
    assert m, msg
    need = int(m.group(1).replace(",", ""))
    assert int(m.group(2).replace(",", "")) == need - 8192 > 0
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(__import__("shutil").which("arm-none-eabi-gcc") is None,
                    reason="arm-none-eabi-gcc not installed")
def test_all_ops_firmware_links_with_its_default_load_buffer(tmp_path: Path) -> None:
    """--all-ops gives LOAD_MODEL all the RAM the firmware leaves: it must still link."""
    from tinyhost.deploy.runner import build_firmware

    graph = quantize_for_convert(read_model(DIGITS), "random", warn=lambda _: None,
                                 progress=False)  # fmt: skip
    board = load_board("netduinoplus2")
    result = convert(graph, board, tmp_path / "model", all_ops=True)
    assert result.load_capacity > 32 << 10
    fw = build_firmware(result.out_dir, board, tmp_path / "build")
    assert fw.size.bss >= result.arena_bytes + result.load_capacity


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_run_and_eval_take_a_converted_directory_or_its_firmware(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], backend: str) -> None:
    """`run`/`eval` MODEL may be what `convert` wrote (its int8 model, backend and board) or
    the firmware `build` made from it; the same outputs as from the .tflite."""
    model = PROJECT_MODELS / "digits_tf_int8.tflite"
    x = np.load(PROJECT_MODELS / "digits_data.npz")["test_x"][:3]
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    assert main(["convert", str(model), "--board", "host", "--backend", backend,
                 "-o", str(out)]) == 0  # fmt: skip
    assert main(["build", str(out), "--board", "host", "--build-dir",
                 str(tmp_path / "build")]) == 0  # fmt: skip
    results = []
    for target in (model, out, tmp_path / "build" / "tinyhost_fw.elf"):
        capsys.readouterr()
        chosen = ["--backend", backend] if target == model else []  # else the directory's
        assert main(["run", str(target), "--board", "host", "--input", str(tmp_path / "x.npy"),
                     *chosen, "--json", "-o", str(tmp_path / f"{len(results)}.npy")]) == 0
        results.append(np.load(tmp_path / f"{len(results)}.npy"))
        assert json.loads(capsys.readouterr().out)["backend"] == backend
    assert all(np.array_equal(results[0], r) for r in results[1:])
    assert main(["run", str(out), "--board", "mps2-an386", "--input",
                 str(tmp_path / "x.npy")]) == 2  # fmt: skip
    assert "was converted for host, not mps2-an386" in capsys.readouterr().err
