"""`tinyhost compare`: runs a model on two boards itself, checks TFLite Micro's outputs against
ours, and reads `run --json` output beside eval results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from paths import PROJECT_MODELS
from tinyhost import reference
from tinyhost.cli import main
from tinyhost.report.compare import normalize, table
from tinyhost.tflite import read_model

MODEL = PROJECT_MODELS / "digits_tf_int8.tflite"
DATA = PROJECT_MODELS / "digits_data.npz"


def test_compare_two_boards_with_tflm(tmp_path, capsys):
    out = tmp_path / "t.json"
    n = 20
    rc = main(["compare", "--models", str(MODEL), "--boards", "host", "mps2-an386",
               "--data", str(DATA), "--limit", str(n), "-j", "1", "--tflm", "-o", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert f"TFLite Micro vs tinyhost on digits_tf_int8: {n}/{n} samples bit-exact" in text
    check = json.loads(out.read_text())["tflm"][0]
    assert check["tflm_arena_bytes"] == (check["tflm_arena_head_bytes"]
                                         + check["tflm_arena_tail_bytes"]) > 0  # fmt: skip
    assert f"arena: TFLite Micro {check['tflm_arena_bytes']:,} B" in text
    rows = json.loads(out.read_text())["rows"]
    assert [r["board"] for r in rows] == ["host", "mps2-an386"]
    assert [r["unit"] for r in rows] == ["host-ns", "instructions"]
    d = np.load(DATA)
    graph = read_model(MODEL)
    pred = [int(np.argmax(reference.run(graph, [x[None]]).outputs[0])) for x in d["test_x"][:n]]
    want = float(np.mean(np.array(pred) == d["test_y"][:n]))
    assert all(abs(r["top1"] - want) < 1e-12 for r in rows)
    assert all(r["agreement"] == 100.0 for r in rows)
    lines = [ln for ln in text.splitlines() if "digits_tf_int8" in ln and "interpreter" in ln]
    assert len(lines) == 2 and lines[0].startswith("*")


def test_run_json_and_ratios(tmp_path, capsys):
    x = np.load(DATA)["test_x"][:3]
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(MODEL), "--board", "host", "--input", str(tmp_path / "x.npy"),
                 "--json", "--work-dir", str(tmp_path / "w")]) == 0  # fmt: skip
    run = json.loads(capsys.readouterr().out)
    row = normalize(run, "run.json")
    assert row.unit == "host-ns" and row.latency == float(np.median(
        [r["latency"]["total"] for r in run["runs"]]))  # fmt: skip
    slower = normalize({**run, "runs": [{**r, "latency": {**r["latency"], "total": 2 * int(
        row.latency)}} for r in run["runs"]]}, "x")  # fmt: skip
    lines = table([row, slower])
    assert lines[1].split()[8] == "1.00" and lines[2].split()[7] == "2.00"  # "*" marks row 1
    assert main(["compare", str(Path(tmp_path / "missing.json"))]) == 2
