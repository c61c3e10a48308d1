"""Every command agrees: the same unsupported ops and the same fit figures everywhere.

- One list of what can run (codegen.support): `inspect` says which ops run on the reference
  but not on the device, and `plan --board` and `convert` refuse the model naming the same
  ops with the same reasons, while `reference` runs it.
- One fit policy (plan.budget): `plan --board`, `convert`, `run` and `bench` print the same
  figures and verdict for the same model and board, and `plan` and `run` the same arena.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost.cli import main
from tinyhost.ir import ConcatenationOptions, Graph, Op, OpKind, Quantization, Tensor
from tinyhost.tflite.writer import write_model_file

DIGITS = PROJECT_MODELS / "digits_tf_int8.tflite"
BOARD = "mps2-an386"


def _concat_of(n: int, path: Path) -> Path:
    """CONCATENATION of n int8 inputs: the reference runs any n, the device kernel up to 8."""
    q = Quantization(scale=np.array([0.1], np.float32), zero_point=np.array([0]), axis=0)
    tensors = [Tensor(f"x{i}", (1, 2, 3), np.dtype(np.int8), quant=q) for i in range(n)]
    tensors.append(Tensor("y", (1, 2, 3 * n), np.dtype(np.int8), quant=q))
    op = Op(OpKind.CONCATENATION, tuple(range(n)), (n,), ConcatenationOptions(axis=2))
    write_model_file(Graph(tuple(tensors), (op,), tuple(range(n)), (n,), "concat"), path)
    return path


def test_every_command_names_the_same_unsupported_ops(tmp_path: Path, capsys) -> None:
    model = _concat_of(9, tmp_path / "concat9.tflite")
    assert main(["inspect", str(model), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    # per op, the three runners: the reference runs any n, neither device kernel takes 9
    assert summary["ops"][0]["runs"] == {"reference": True, "interpreter": False,
                                         "compiled": False}
    device = summary["device"]
    assert device["checked"] and [p["index"] for p in device["not_on_device"]] == [0]
    reason = device["not_on_device"][0]["reason"]
    assert "9 inputs (max 8)" in reason

    assert main(["inspect", str(model)]) == 0
    text = capsys.readouterr().out
    assert "runs on the reference but not on the device (interpreter):" in text
    assert re.search(r"0  CONCATENATION +yes +no +no ", text), text
    assert reason in text

    for argv in (["plan", str(model), "--board", BOARD],
                 ["convert", str(model), "--board", BOARD, "-o", str(tmp_path / "out")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert reason in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()

    x = tmp_path / "x.npy"
    np.save(x, np.ones((1, 2, 3), np.int8))
    argv = ["reference", str(model), "-o", str(tmp_path / "y.npz")]
    for _ in range(9):
        argv += ["--input", str(x)]
    assert main(argv) == 0  # the reference runs what the device cannot


def test_the_same_model_fits_the_same_everywhere(tmp_path: Path, capsys) -> None:
    assert main(["plan", str(DIGITS), "--board", BOARD, "--json"]) == 0
    plan_json = json.loads(capsys.readouterr().out)
    assert plan_json["model"] == str(DIGITS)  # the file, for every model
    planned = plan_json["board"]
    planned.pop("name")
    planned.pop("backend")
    assert planned["fits"] is True and planned["ram_bytes"] > 0

    assert main(["plan", str(DIGITS), "--board", BOARD]) == 0
    plan_text = capsys.readouterr().out
    assert main(["convert", str(DIGITS), "--board", BOARD, "-o", str(tmp_path / "m")]) == 0
    convert_text = capsys.readouterr().out
    verdict = next(line for line in convert_text.splitlines() if line.startswith("fits "))
    assert verdict in plan_text
    assert f"arena {planned['arena_bytes']:,}" in verdict

    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 8, 8, 1), np.int8))
    work = ["--work-dir", str(tmp_path / "work")]
    assert main(["run", str(DIGITS), "--board", BOARD, "--input", str(x), "--json", *work]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["fit"] == planned and run["arena_bytes"] == planned["arena_bytes"]
    assert main(["bench", str(DIGITS), "--board", BOARD, "--json", *work]) == 0
    bench = json.loads(capsys.readouterr().out)
    assert bench["fit"] == planned and bench["arena_bytes"] == planned["arena_bytes"]


@pytest.mark.parametrize("board", ["netduinoplus2", "mps2-an500"])
def test_plan_exits_2_when_the_model_does_not_fit(tmp_path: Path, capsys, board: str) -> None:
    """A model whose arena alone exceeds the board: plan says by how much and exits 2."""
    from tinyhost.boards import load_board

    ram = load_board(board).ram
    assert ram is not None
    model = _concat_of(2, tmp_path / "big.tflite")  # replaced below by a large one
    q = Quantization(scale=np.array([0.1], np.float32), zero_point=np.array([0]), axis=0)
    side = int((ram.size // 2) ** 0.5) + 8
    tensors = (Tensor("a", (1, side, side, 1), np.dtype(np.int8), quant=q),
               Tensor("b", (1, side, side, 1), np.dtype(np.int8), quant=q),
               Tensor("y", (1, side, side, 2), np.dtype(np.int8), quant=q))  # fmt: skip
    op = Op(OpKind.CONCATENATION, (0, 1), (2,), ConcatenationOptions(axis=3))
    write_model_file(Graph(tensors, (op,), (0, 1), (2,), "big"), model)
    assert main(["plan", str(model), "--board", board]) == 2
    captured = capsys.readouterr()
    assert "DOES NOT FIT" in captured.out and "exceeded by" in captured.err


def test_plan_of_a_float_model_is_the_int8_model_convert_deploys(tmp_path: Path, capsys) -> None:
    float_model = PROJECT_MODELS / "digits_float.tflite"
    calib = f"{PROJECT_MODELS / 'digits_data.npz'}:calib_x"
    assert main(["plan", str(float_model), "--board", BOARD, "--calib", calib, "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert "quantized with --calib" in planned["quantized_for_planning"]
    assert main(["convert", str(float_model), "--board", BOARD, "--calib", calib,
                 "-o", str(tmp_path / "m")]) == 0  # fmt: skip
    converted = json.loads((tmp_path / "m" / "model.json").read_text())
    assert converted["arena_bytes"] == planned["board"]["arena_bytes"]
    assert main(["plan", str(float_model)]) == 0
    assert "planned the int8 model quantized from random calibration data" in (
        capsys.readouterr().out)
