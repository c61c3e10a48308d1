"""`tinyhost demo`: the main job on a default that needs no hardware.

Takes the bundled float digits CNN (trained by tests/models/make_digits.py), quantizes it
to int8 with tinyhost's post-training quantizer on the calibration split, and measures top-1
accuracy over the held-out test split for the float model, tinyhost's int8 model and
TensorFlow's int8 model of the same network, all executed by the bit-exact NumPy reference.
Then it converts tinyhost's int8 model for a board (default: QEMU mps2-an386, Cortex-M4),
builds the interpreter firmware, runs every test image on it over the serial link, and
reports the device's accuracy, how many outputs equal the reference bit for bit, latency
in the board counter's unit, arena and flash.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinyhost import reference
from tinyhost.errors import InputDataError
from tinyhost.ir import Graph
from tinyhost.ir.stats import graph_stats
from tinyhost.quantize import quantize_model
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[2]
DEMO_MODELS = REPO / "tests" / "models"


@dataclass(frozen=True)
class Accuracy:
    label: str
    correct: int
    total: int
    ms_per_inference: float

    @property
    def top1(self) -> float:
        return self.correct / self.total


def _classify(graph: Graph, images: np.ndarray) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    predictions = [
        int(np.argmax(reference.run(graph, [image[None]]).outputs[0])) for image in images
    ]
    elapsed = time.perf_counter() - start
    return np.array(predictions), 1000 * elapsed / len(images)


def evaluate(graph: Graph, label: str, images: np.ndarray, labels: np.ndarray) -> Accuracy:
    predictions, ms = _classify(graph, images)
    return Accuracy(label, int(np.sum(predictions == labels)), len(labels), ms)


def device_section(graph: Graph, board: str, images: np.ndarray, labels: np.ndarray,
                   expected: list[np.ndarray], backend: str = "interpreter",
                   renode: str | None = None) -> list[str]:
    """Convert, build and run `graph` on `board` for every image; the report lines."""
    from tinyhost.deploy.runner import run_model

    report = run_model(graph, board, [[image[None]] for image in images], backend=backend,
                       renode=renode)
    outputs = [run.outputs[0] for run in report.runs]
    predictions = np.array([int(np.argmax(o)) for o in outputs])
    same = sum(int(np.array_equal(o, e)) for o, e in zip(outputs, expected))
    totals = [run.latency.total for run in report.runs]
    lat = report.runs[0].latency
    lines = [
        "",
        f"on {report.board} ({report.backend} backend, firmware {report.firmware}):",
        f"  top-1 {100 * float(np.mean(predictions == labels)):.2f}% over {len(labels)} images; "
        f"outputs bit-exact with the reference: {same}/{len(labels)}",
        f"  latency: {int(np.median(totals)):,} {lat.unit} per inference (median; "
        f"min {min(totals):,}, max {max(totals):,})",
        f"  arena {report.arena_bytes:,} B, model {report.model_flash_bytes:,} B",
        f"  image 0 (label {int(labels[0])}): output {outputs[0].dtype}{list(outputs[0].shape)} = "
        f"{outputs[0].reshape(-1).tolist()}, per op "
        + ", ".join(f"{name} {n:,}" for name, n in zip(report.op_names, lat.per_op))
        + f" {lat.unit}",
    ]
    if report.emulator is not None:
        e = report.emulator
        lines.insert(2, f"  run by {e['version']} ({e['path']}, found by {e['found_by']})")
    if lat.hz and lat.unit in ("cycles", "instructions"):
        est = " (estimate: 1 instruction per cycle)" if lat.unit == "instructions" else ""
        lines.append(f"  = {1000 * int(np.median(totals)) / lat.hz:.3f} ms at "
                     f"{lat.hz / 1e6:g} MHz{est}")  # fmt: skip
    if same != len(labels):
        lines.append("  MISMATCH: the device disagrees with the reference (a bug: please report)")
    return lines


def run_demo(models: Path = DEMO_MODELS, board: str | None = "mps2-an386",
             backend: str = "interpreter", renode: str | None = None) -> str:
    data_path = models / "digits_data.npz"
    if not data_path.is_file():
        raise InputDataError(f"{data_path}: demo data missing (run from a tinyhost checkout)")
    data = np.load(data_path)
    images, labels = data["test_x"], data["test_y"]

    float_graph = read_model(models / "digits_float.tflite")
    samples = [[x[None]] for x in data["calib_x"]]
    graphs = {
        "float32": float_graph,
        "int8 (tinyhost)": quantize_model(float_graph, samples),
        "int8 (TF PTQ)": read_model(models / "digits_tf_int8.tflite"),
    }
    lines = []
    results = []
    int8_graph = graphs["int8 (tinyhost)"]
    for label, graph in graphs.items():
        stats = graph_stats(graph)
        lines.append(
            f"{label:<16} {len(graph.ops)} ops, {stats.macs:,} MACs, "
            f"{stats.weight_bytes:,} weight bytes, largest activation "
            f"{stats.largest_activation_bytes:,} bytes"
        )
        results.append(evaluate(graph, label, images, labels))

    lines.append("")
    lines.append(
        f"digits test split: {len(labels)} images (int8 calibrated on "
        f"{len(samples)} other images), executed by the NumPy reference"
    )
    lines.append(f"{'model':<16} {'top-1':>8} {'ms/inference':>13}")
    for r in results:
        lines.append(f"{r.label:<16} {100 * r.top1:>7.2f}% {r.ms_per_inference:>13.2f}")
    if board is not None:
        expected = [reference.run(int8_graph, [image[None]]).outputs[0] for image in images]
        lines += device_section(int8_graph, board, images, labels, expected, backend, renode)
        lines += ["", f"report: {write_demo_report(int8_graph, models, board, backend)}"]
    return "\n".join(lines)


def write_demo_report(int8_graph: Graph, models: Path, board: str,
                      backend: str = "interpreter") -> Path:
    """`tinyhost eval` + `tinyhost report` on the digits test split; the HTML report's path."""
    from tinyhost.evaluate.data import load_dataset
    from tinyhost.evaluate.runner import run_eval
    from tinyhost.paths import repo_root
    from tinyhost.report.render import write_report
    from tinyhost.tflite.writer import write_model_file

    out = repo_root() / "build" / "demo"
    out.mkdir(parents=True, exist_ok=True)
    write_model_file(int8_graph, out / "digits_int8.tflite")  # the report draws its plan
    graph = read_model(out / "digits_int8.tflite")
    ds = load_dataset(str(models / "digits_data.npz"), None, graph.tensors[graph.inputs[0]])
    results = run_eval(graph, ds, board, float_graph=read_model(models / "digits_float.tflite"),
                       log_path=out / f"digits-{backend}.samples.jsonl", progress=False,
                       backend=backend)  # fmt: skip
    return write_report([results], out / "digits-report.html")
