"""`tinyhost eval`: accuracy equals the reference's, agreement is bit-exact, labels matter,
data loaders, the sample log and --resume.

The expected accuracies are computed here from the NumPy reference (the oracle) and the
labels, not taken from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost import reference
from tinyhost.cli import main
from tinyhost.evaluate.data import Dataset, load_dataset, load_images
from tinyhost.evaluate.metrics import ErrorSums, classification
from tinyhost.evaluate.runner import read_log, run_eval
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_eval"
INT8 = PROJECT_MODELS / "digits_tf_int8.tflite"
FLOAT = PROJECT_MODELS / "digits_float.tflite"
DATA = PROJECT_MODELS / "digits_data.npz"


@pytest.fixture(scope="module")
def digits():
    graph = read_model(INT8)
    d = np.load(DATA)
    x, y = d["test_x"], d["test_y"].astype(np.int64)
    ref = np.array([reference.run(graph, [s[None]]).outputs[0].reshape(-1) for s in x])
    return graph, x, y, ref


def _eval(graph, ds, board, tmp_path, name, **kw):
    return run_eval(graph, ds, board, log_path=tmp_path / f"{name}.samples.jsonl",
                    work_dir=BUILD / board, progress=False, **kw)  # fmt: skip


def test_eval_host_accuracy_agreement_and_wrong_labels(digits, tmp_path):
    graph, x, y, ref = digits
    expected_top1 = float(np.mean(np.argmax(ref, axis=1) == y))
    r = _eval(graph, Dataset(x, y, "digits", "as stored"), "host", tmp_path, "ok",
              float_graph=read_model(FLOAT), jobs=2)  # fmt: skip
    assert r["accuracy"]["device"]["top1"] == pytest.approx(expected_top1)
    assert r["accuracy"]["reference"]["top1"] == pytest.approx(expected_top1)
    agree = r["agreement"]["device_vs_reference"]
    assert agree == {"bit_exact_samples": len(x), "samples": len(x), "percent": 100.0,
                     "mismatches": []}  # fmt: skip
    assert np.array(r["accuracy"]["device"]["confusion"]).sum() == len(x)
    assert np.trace(r["accuracy"]["device"]["confusion"]) == r["accuracy"]["device"]["correct"]
    # int8 vs float per layer: one entry per op output, cosine close to 1 for a good model.
    assert [e["op"] for e in r["layer_errors"]] == [op.name for op in graph.ops]
    assert all(e["cos"] > 0.99 for e in r["layer_errors"])
    assert r["latency"]["unit"] == "host-ns" and r["latency"]["median"] > 0

    wrong = (y + 1) % 10
    expected_wrong = float(np.mean(np.argmax(ref, axis=1) == wrong))
    r2 = _eval(graph, Dataset(x, wrong, "digits", "as stored"), "host", tmp_path, "wrong", jobs=1)
    assert r2["accuracy"]["device"]["top1"] == pytest.approx(expected_wrong)
    assert r2["accuracy"]["device"]["top1"] < 0.2 < expected_top1


def test_eval_qemu_matches_reference(digits, tmp_path):
    graph, x, y, ref = digits
    n = 40
    r = _eval(graph, Dataset(x[:n], y[:n], "digits", "as stored"), "mps2-an386", tmp_path,
              "qemu", jobs=2)  # fmt: skip
    assert r["accuracy"]["device"]["correct"] == int(np.sum(np.argmax(ref[:n], axis=1) == y[:n]))
    assert r["agreement"]["device_vs_reference"]["bit_exact_samples"] == n
    assert r["latency"]["unit"] == "instructions" and r["latency"]["min"] > 1000
    # one of the two workers runs the icount plugin, on the chunks it takes
    assert 0 < r["latency"]["samples"] <= n
    # Cortex-M4 cycles estimated from the instruction classes QEMU executed, labelled so
    est = r["latency"]["cycles_estimate"]
    assert est["label"] == "estimate"
    assert r["latency"]["median"] < est["median"] < 3 * r["latency"]["median"]
    from tinyhost.report.render import comparison_rows

    assert comparison_rows([r])[0].cycles_est == est["median"]


def test_resume_after_interruption_equals_uninterrupted(digits, tmp_path):
    graph, x, y, _ = digits
    ds = Dataset(x[:60], y[:60], "digits", "as stored")
    full = _eval(graph, ds, "host", tmp_path, "full", jobs=2)
    log = tmp_path / "part.samples.jsonl"
    # An interruption: a header, some samples, and a line torn mid-write.
    lines = (tmp_path / "full.samples.jsonl").read_text().splitlines()
    log.write_text("\n".join(lines[:25]) + "\n" + lines[25][: len(lines[25]) // 2])
    assert len(read_log(log)[1]) == 24
    resumed = _eval(graph, ds, "host", tmp_path, "part", jobs=2, resume=True)
    assert resumed["throughput"]["samples_run"] == 36
    for key in ("accuracy", "agreement", "samples_done"):
        assert resumed[key] == full[key]
    assert sorted(read_log(log)[1]) == list(range(60))


def test_image_folder_round_trip(tmp_path):
    from PIL import Image

    graph = read_model(INT8)
    rng = np.random.default_rng(0)
    pixels = {}
    for cls in ("cat", "dog"):
        (tmp_path / cls).mkdir()
        for k in range(3):
            a = rng.integers(0, 256, (8, 8), dtype=np.uint8)
            Image.fromarray(a, mode="L").save(tmp_path / cls / f"{k}.png")
            pixels[(cls, k)] = a
    ds = load_images(tmp_path, graph.tensors[graph.inputs[0]])
    assert ds.class_names == ["cat", "dog"]
    assert ds.y.tolist() == [0, 0, 0, 1, 1, 1]
    want = np.stack([pixels[(c, k)] for c in ("cat", "dog") for k in range(3)])
    np.testing.assert_allclose(ds.x[..., 0], want / 255.0, atol=1e-7)
    assert "quantized" in ds.preprocessing and "8x8" in ds.preprocessing


def test_npz_keys_labels_override_and_csv(tmp_path):
    graph = read_model(INT8)
    t = graph.tensors[graph.inputs[0]]
    x = np.arange(3 * 64, dtype=np.float32).reshape(3, 8, 8, 1)
    np.savez(tmp_path / "d.npz", X_test=x, y_test=np.array([1, 2, 3]))
    np.save(tmp_path / "l.npy", np.array([7, 8, 9]))
    ds = load_dataset(str(tmp_path / "d.npz"), None, t)
    assert ds.y.tolist() == [1, 2, 3] and ds.x.shape == (3, 8, 8, 1)
    assert load_dataset(str(tmp_path / "d.npz"), str(tmp_path / "l.npy"), t).y.tolist() == [7, 8, 9]
    rows = ["label," + ",".join(f"f{i}" for i in range(64))]
    rows += [f"{k}," + ",".join(str(v) for v in x[k].reshape(-1)) for k in range(3)]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    ds = load_dataset(str(tmp_path / "d.csv"), None, t)
    assert ds.y.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(ds.x, x)


def test_classification_metrics_by_hand():
    y = np.array([0, 0, 1, 2])
    scores = np.array([[9, 1, 0], [1, 9, 0], [0, 9, 1], [5, 0, 4]])
    m = classification(y, scores)
    assert m["top1"] == 0.5 and m["confusion"] == [[1, 1, 0], [0, 1, 0], [1, 0, 0]]
    assert m["per_class"][1]["precision"] == 0.5 and m["per_class"][1]["recall"] == 1.0
    assert m["per_class"][2]["f1"] == 0.0


def test_error_sums_add_up_and_match_direct_figures():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(50), rng.standard_normal(50)
    s = ErrorSums.of(a[:20], b[:20]) + ErrorSums.of(a[20:], b[20:])
    f = s.figures()
    assert f["rmse"] == pytest.approx(np.sqrt(np.mean((a - b) ** 2)))
    assert f["mae"] == pytest.approx(np.mean(np.abs(a - b)))
    cos = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    assert f["cos"] == pytest.approx(cos)
    assert f["snr_db"] == pytest.approx(10 * np.log10(b @ b / ((a - b) @ (a - b))))


def test_cli_eval_writes_results_and_rejects_bad_data(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["eval", str(INT8), "--data", str(DATA), "--board", "host", "--limit", "20",
               "-j", "1", "-o", str(out), "--no-progress", "--work-dir", str(BUILD / "host")])
    assert rc == 0
    r = json.loads(out.read_text())
    assert r["samples_done"] == 20 and "accuracy" in r
    assert "bit-exact (100.00%)" in capsys.readouterr().out
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((4, 5), dtype=np.float32))
    assert main(["eval", str(INT8), "--data", str(bad), "--board", "host"]) == 2
    assert "bad.npy" in capsys.readouterr().err
