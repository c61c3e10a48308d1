"""Trying the tool as a new user would: each finding of issue 12 as a test.

Samples, summaries and saved outputs of `run`; `bench` outputs in the tensor's dtype, float
I/O models and timing noise on the host board; input files (.npz, .npz:KEY, folders, NaN);
output paths; `build` of a directory converted for another board; `--timeout`; `boards`;
help text for every option.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost import reference
from tinyhost.boards import list_boards
from tinyhost.cli import build_parser, main
from tinyhost.tflite import read_model

DIGITS = PROJECT_MODELS / "digits_tf_int8.tflite"
DIGITS_FLOAT = PROJECT_MODELS / "digits_float.tflite"
DATA = PROJECT_MODELS / "digits_data.npz"


def _samples(tmp_path: Path, n: int) -> tuple[Path, np.ndarray]:
    x = np.load(DATA)["test_x"][:n]
    path = tmp_path / f"x{n}.npy"
    np.save(path, x)
    return path, x


def _expected(x: np.ndarray) -> np.ndarray:
    graph = read_model(DIGITS)
    return np.concatenate([reference.run(graph, [x[k : k + 1]]).outputs[0]
                           for k in range(len(x))])  # fmt: skip


def test_every_option_has_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    missing = [f"{name} {a.option_strings or a.dest}" for name, p in sub.choices.items()
               for a in p._actions  # noqa: SLF001
               if not isinstance(a, argparse._HelpAction) and not a.help]  # noqa: SLF001
    assert not missing
    assert "(default 600)" in sub.choices["run"].format_help().replace("\n", " ").replace(
        "  ", " ")


def test_boards_lists_every_board(capsys) -> None:
    assert main(["boards", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == list_boards()
    by_name = {r["name"]: r for r in rows}
    assert by_name["mps3-an547"]["mve"] is True and by_name["mps2-an386"]["dsp"] is True
    assert by_name["netduinoplus2"]["ram_bytes"] == 128 * 1024
    assert by_name["mps2-an386"]["runs_on"].startswith("QEMU")
    assert main(["boards"]) == 0
    assert "stm32f4_discovery" in capsys.readouterr().out


def test_run_many_samples_summarizes_and_saves_them(tmp_path: Path, capsys) -> None:
    x_path, x = _samples(tmp_path, 5)
    out = tmp_path / "y.npy"
    argv = ["run", str(DIGITS), "--board", "host", "--input", str(x_path), "-o", str(out),
            "--work-dir", str(tmp_path / "w")]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "latency over 5 samples: median" in text and "min" in text and "max" in text
    assert f"outputs of 5 sample(s) saved to {out}" in text
    saved = np.load(out)
    np.testing.assert_array_equal(saved, _expected(x))

    assert main([*argv[:-4], "--json", "--work-dir", str(tmp_path / "w")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["samples"] == 5 and len(report["runs"]) == 5
    assert report["latency"]["samples"] == 5 and "median" in report["latency"]["summary"]
    assert report["output_shapes"] == [list(saved.shape)]
    assert report["outputs"] == [saved.reshape(-1).tolist()]
    totals = sorted(r["latency"]["total"] for r in report["runs"])
    assert report["latency"]["min"] == totals[0] and report["latency"]["max"] == totals[-1]


def test_input_files(tmp_path: Path, capsys) -> None:
    x = np.load(DATA)["test_x"][:2]
    base = ["run", str(DIGITS), "--board", "host", "--work-dir", str(tmp_path / "w"), "--json"]
    np.savez(tmp_path / "one.npz", x=x)
    np.savez(tmp_path / "two.npz", x=x, y=x)
    for spec in (tmp_path / "one.npz", f"{tmp_path / 'two.npz'}:y"):
        assert main([*base, "--input", str(spec)]) == 0
        assert json.loads(capsys.readouterr().out)["samples"] == 2
    bad = x.copy()
    bad[1, 3, 4, 0] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    for spec, message in ((tmp_path / "two.npz", "holds 2 arrays (x, y)"),
                          (f"{tmp_path / 'two.npz'}:z", "no array 'z'"),
                          (tmp_path, "a folder; --input takes one array file"),
                          (tmp_path / "nan.npy", "NaN or infinite values (first at index "
                                                 "[1, 3, 4, 0])")):  # fmt: skip
        assert main([*base, "--input", str(spec)]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_output_paths_get_one_line(tmp_path: Path, capsys) -> None:
    x_path, _ = _samples(tmp_path, 1)
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    missing = tmp_path / "no" / "such"
    cases = [
        (["reference", str(DIGITS), "--input", str(x_path), "-o", str(missing / "y.npy")],
         "folder"),
        (["convert", str(DIGITS), "--board", "host", "-o", str(a_file)], "it is a file"),
        (["plan", str(DIGITS), "--plot", str(missing / "p.svg")], "does not exist"),
        (["run", str(DIGITS), "--board", "host", "--input", str(x_path),
          "-o", str(missing / "y.npy")], "does not exist"),
    ]  # fmt: skip
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_build_refuses_a_directory_converted_for_another_board(tmp_path: Path, capsys) -> None:
    out = tmp_path / "m"
    assert main(["convert", str(DIGITS), "--board", "mps2-an386", "-o", str(out)]) == 0
    info = json.loads((out / "model.json").read_text())
    assert info["board"] == "mps2-an386"
    (inp,) = info["inputs"]
    assert inp["dtype"] == "int8" and inp["scale"] > 0 and -128 <= inp["zero_point"] <= 127
    header = (out / "model_blob.h").read_text()
    assert "TH_MODEL_INPUT0_SCALE" in header and "TH_MODEL_OUTPUT0_ZERO_POINT" in header
    capsys.readouterr()
    assert main(["build", str(out), "--board", "netduinoplus2"]) == 2
    err = capsys.readouterr().err
    assert "converted for mps2-an386, not netduinoplus2" in err and err.count("\n") == 1


def test_bench_outputs_in_the_tensor_dtype_and_median_on_host(tmp_path: Path, capsys) -> None:
    argv = ["bench", str(DIGITS), "--board", "host", "--runs", "3", "--json",
            "--work-dir", str(tmp_path / "w")]  # fmt: skip
    assert main(argv) == 0  # host-ns vary run to run: not a failure
    out = json.loads(capsys.readouterr().out)
    assert out["unit"] == "host-ns" and out["runs"] == 3 and out["bit_exact"] is True
    (values,) = out["outputs"]
    assert min(values) < 0  # int8 as signed: a raw byte view would have no negatives
    from tinyhost.deploy.bench import deterministic_inputs

    graph = read_model(DIGITS)
    expected = reference.run(graph, deterministic_inputs(graph)).outputs[0]
    assert values == expected.reshape(-1).tolist()


def test_bench_takes_a_float_io_model_and_inputs(tmp_path: Path, capsys) -> None:
    x_path, x = _samples(tmp_path, 1)
    argv = ["bench", str(DIGITS_FLOAT), "--board", "host", "--float-io", "--calib",
            f"{DATA}:calib_x", "--input", str(x_path), "--json",
            "--work-dir", str(tmp_path / "w")]  # fmt: skip
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bit_exact"] is True
    (values,) = out["outputs"]
    assert len(values) == 10 and all(isinstance(v, float) for v in values)
    argv = [a for a in argv if a not in ("--input", str(x_path))]
    assert main(argv) == 0  # the deterministic input, for a float input too
    assert json.loads(capsys.readouterr().out)["bit_exact"] is True


def test_timeout_says_so(tmp_path: Path, capsys) -> None:
    x_path, _ = _samples(tmp_path, 1)
    argv = ["run", str(DIGITS), "--board", "mps2-an386", "--input", str(x_path),
            "--work-dir", str(tmp_path / "w"), "--timeout", "0.05"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "timed out after 0.05 s (--timeout)" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("cut", [20, 3000])
def test_truncated_file_says_where(tmp_path: Path, capsys, cut: int) -> None:
    data = DIGITS.read_bytes()
    path = tmp_path / "cut.tflite"
    path.write_bytes(data[:cut])
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"truncated at byte {cut:,} of at least" in err and err.count("\n") == 1


def test_run_reports_its_stack(tmp_path: Path, capsys) -> None:
    """run --json on a Cortex-M board: the measured stack peak, the image's static bound and
    the reserve it was linked with, in that order of size."""
    x_path, _ = _samples(tmp_path, 1)
    argv = ["run", str(DIGITS), "--board", "mps2-an386", "--input", str(x_path),
            "--work-dir", str(tmp_path / "w"), "--json"]  # fmt: skip
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert 0 < out["stack_peak_bytes"] <= out["stack_static_bytes"] <= out["stack_reserve_bytes"]
    assert out["stack_reserve_bytes"] == out["fit"]["reserves"]["stack"]
