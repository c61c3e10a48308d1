"""Run time of the NumPy reference per inference on every shared model (a benchmark, not a test).

    python bench/reference.py [--json] [--repeat N]

Prints one row per model: ops, MACs and the median wall time of `tinyhost.reference.run`
over N runs on a fixed random input (after one warm-up run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from tinyhost import reference
from tinyhost.ir.stats import graph_stats
from tinyhost.tflite import read_model

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"


def _inputs(graph) -> list[np.ndarray]:
    return reference.random_inputs(graph, np.random.default_rng(0))


def measure(path: Path, repeat: int) -> dict:
    graph = read_model(path)
    inputs = _inputs(graph)
    reference.run(graph, inputs)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        reference.run(graph, inputs)
        times.append(time.perf_counter() - start)
    return {
        "model": path.relative_to(path.parents[1]).as_posix(),
        "ops": len(graph.ops),
        "macs": graph_stats(graph).macs,
        "median_ms": round(1000 * statistics.median(times), 2),
        "min_ms": round(1000 * min(times), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--models", type=Path, default=SHARED_MODELS)
    args = parser.parse_args()
    if not args.models.is_dir():
        print(f"no models at {args.models}", file=sys.stderr)
        return 1
    rows = []
    for path in sorted(args.models.rglob("*.tflite")):
        graph = read_model(path)
        try:
            reference.check_executable(graph)
        except Exception as e:  # hybrid models are refused: report, don't time
            print(f"skip {path.name}: {e}", file=sys.stderr)
            continue
        rows.append(measure(path, args.repeat))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'model':<42} {'ops':>4} {'MACs':>12} {'median ms':>10} {'min ms':>8}")
        for r in rows:
            print(
                f"{r['model']:<42} {r['ops']:>4} {r['macs']:>12,} "
                f"{r['median_ms']:>10.2f} {r['min_ms']:>8.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
