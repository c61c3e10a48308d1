"""`tinyhost report`: the HTML renders in a real headless browser (Debian's chromium, which
`make setup` installs), is not blank, holds the accuracy, the latency table and every plot,
and names no external URL; the Markdown and JSON versions carry the same figures."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost.cli import main
from tinyhost.evaluate.data import Dataset
from tinyhost.evaluate.runner import run_eval
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_report"  # not test_eval.py's tree: the two may run at once (xdist)


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    # No skip: CI installs chromium (Makefile APT_PACKAGES); a missing browser is a failure.
    assert path, "chromium not installed: run `make system-packages` (apt-get install chromium)"
    return path


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("report")
    graph = read_model(PROJECT_MODELS / "digits_tf_int8.tflite")
    d = np.load(PROJECT_MODELS / "digits_data.npz")
    ds = Dataset(d["test_x"][:80], d["test_y"][:80].astype(np.int64), "digits", "as stored")
    float_graph = read_model(PROJECT_MODELS / "digits_float.tflite")
    paths = []
    for k, jobs in enumerate((2, 1)):
        r = run_eval(graph, ds, "host", float_graph=float_graph,
                     log_path=tmp / f"r{k}.samples.jsonl", work_dir=BUILD / "host", jobs=jobs,
                     progress=False)  # fmt: skip
        p = tmp / f"r{k}.json"
        p.write_text(json.dumps(r))
        paths.append(p)
    return paths


def test_html_report_renders_in_headless_chromium(results, tmp_path, capsys):
    html = tmp_path / "report.html"
    assert main(["report", *map(str, results), "-o", str(html)]) == 0
    assert str(html) in capsys.readouterr().out
    text = html.read_text()
    assert not re.search(r"(https?:)?//[\w.-]+\.\w+/|url\(|<script|<link", text), \
        "the report must be self-contained"  # fmt: skip
    r = json.loads(results[0].read_text())
    top1 = f"{100 * r['accuracy']['device']['top1']:.2f}%"

    browser = _chromium()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    dom = subprocess.run([browser, *flags, "--dump-dom", html.as_uri()], capture_output=True,
                         text=True, timeout=120).stdout  # fmt: skip
    assert top1 in dom
    ids = ("latency-table-0", "plot-latency-0", "plot-confusion-0", "plot-layer-error-0",
           "plot-plan-0", "comparison-table")
    for needed in (f'id="{i}"' for i in ids):
        assert needed in dom, needed
    assert dom.count("<rect") >= 100 + len(r["ops"])  # confusion cells and latency bars drawn

    shot = tmp_path / "shot.png"
    subprocess.run([browser, *flags, "--window-size=1280,1600", f"--screenshot={shot}",
                    html.as_uri()], capture_output=True, timeout=120)  # fmt: skip
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size == (1280, 1600)
        px = np.asarray(im.convert("RGB"), dtype=np.int16)
    # Not blank: many distinct colours, and the header's dark blue is painted at the top.
    assert len(np.unique(px.reshape(-1, 3), axis=0)) > 50
    assert px[20, 20, 2] > px[20, 20, 0] + 60


def test_markdown_and_json_reports(results, tmp_path):
    r = json.loads(results[0].read_text())
    md = tmp_path / "r.md"
    assert main(["report", *map(str, results), "-o", str(md), "--baseline", "1"]) == 0
    text = md.read_text()
    assert f"{100 * r['accuracy']['device']['top1']:.2f}%" in text
    assert "(baseline)" in text and "| int8 vs float |" in text
    js = tmp_path / "r.json"
    assert main(["report", *map(str, results), "-o", str(js)]) == 0
    data = json.loads(js.read_text())
    assert [row["top1"] for row in data["comparison"]] == [r["accuracy"]["device"]["top1"]] * 2
    assert main(["report", str(results[0]), "-o", str(tmp_path / "r.txt")]) == 2
