"""Throughput of `tinyhost eval` in samples/second (a benchmark, not a test).

    python bench/eval.py [--samples N] [-j N] [--json]

Rows: the demo's digits model (its 300 test images) and MLPerf Tiny's kws_ref_model (random
int8 inputs derived from the shared sample: eval's throughput does not depend on the values)
on the host board and on QEMU (mps2-an386). The firmware is built before the clock starts;
each figure is samples run / wall time of the eval proper (devices started, every sample on
the device and the NumPy reference, logged).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from tinyhost.evaluate.data import Dataset
from tinyhost.evaluate.runner import run_eval
from tinyhost.paths import repo_root
from tinyhost.tflite import read_model

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"


def _digits(n: int) -> tuple[Path, Dataset]:
    models = repo_root() / "tests" / "models"
    d = np.load(models / "digits_data.npz")
    x, y = d["test_x"], d["test_y"].astype(np.int64)
    reps = -(-n // len(x))
    return models / "digits_tf_int8.tflite", Dataset(np.concatenate([x] * reps)[:n],
                                                     np.concatenate([y] * reps)[:n], "digits",
                                                     "as stored")  # fmt: skip


def _kws(n: int) -> tuple[Path, Dataset] | None:
    path = SHARED_MODELS / "mlperf_tiny" / "kws_ref_model.tflite"
    if not path.is_file():
        return None
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (n, 49, 10, 1), dtype=np.int8)
    return path, Dataset(x, None, "random int8", "none")


def measure(model: Path, ds: Dataset, board: str, jobs: int | None, work: Path) -> dict:
    graph = read_model(model)
    r = run_eval(graph, ds, board, log_path=work / f"{model.stem}-{board}.samples.jsonl",
                 work_dir=work / f"{board}-{model.stem}", jobs=jobs, progress=False)  # fmt: skip
    t = r["throughput"]
    return {"model": model.stem, "board": board, "samples": t["samples_run"], "jobs": t["jobs"],
            "seconds": round(t["seconds"], 2), "samples_per_s": round(t["samples_per_s"], 1),
            "bit_exact": r["agreement"]["device_vs_reference"]["percent"]}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=300, help="digits samples (kws: a tenth)")
    ap.add_argument("-j", "--jobs", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = repo_root() / "build" / "bench-eval"
    cases = [_digits(args.samples), _kws(max(10, args.samples // 10))]
    rows = []
    for case in cases:
        if case is None:
            continue
        for board in ("host", "mps2-an386"):
            rows.append(measure(case[0], case[1], board, args.jobs, work))
            if not args.json:
                r = rows[-1]
                print(f"{r['model']:<16} {r['board']:<11} {r['samples']:>5} samples  "
                      f"{r['samples_per_s']:>8.1f} samples/s  (-j {r['jobs']}, "
                      f"{r['bit_exact']:.0f}% bit-exact)", flush=True)  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
