"""What an emulated STM32 run costs on Renode: start-up and per-inference wall time.

For each Renode board, one interpreter firmware with the model compiled in: the wall time from
starting Renode to the firmware answering (the UART socket open, READY/HELLO), then the wall
time of each INVOKE (set input, invoke, get output, get profile), and Renode's own count of the
inference (instructions, see tinyhost.deploy.runner.renode_latency). Also whether Renode's log
mentions an SVD download (the generated platform files must avoid one).

    PYTHONPATH=host python bench/renode.py [--model tests/models/kws_dscnn_int8.tflite]
                                           [--runs 5] [--board stm32f4_discovery ...]

Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from tinyhost.boards import load_board
from tinyhost.codegen.interpreter import convert
from tinyhost.deploy.renode import find_renode, open_renode_session, renode_version
from tinyhost.deploy.runner import Link, _connected, build_firmware, invoke_once
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BOARDS = ("stm32f4_discovery", "stm32f746g_disco")


def measure(model: Path, board_name: str, runs: int) -> dict:
    board = load_board(board_name)
    graph = read_model(model)
    work = REPO / "build" / "bench_renode" / board_name / model.stem
    conv = convert(graph, board, work / "model")
    elf = build_firmware(conv.out_dir, board, work / "build").elf
    rng = np.random.default_rng(0)
    inputs = [rng.integers(-128, 128, graph.tensors[i].shape).astype(np.int8)
              for i in graph.inputs]  # fmt: skip
    t0 = time.perf_counter()
    session = open_renode_session(elf, board, timeout=600.0)
    with session:
        link = Link(session.port, f"{board_name} (Renode)")  # type: ignore[arg-type]
        with _connected(link, 60.0, 60.0) as device:
            device.info()
            startup = time.perf_counter() - t0
            walls, counts = [], []
            for _ in range(runs):
                t = time.perf_counter()
                run = invoke_once(device, inputs)
                walls.append(time.perf_counter() - t)
                counts.append(run.latency.total)
    return {
        "board": board_name,
        "model": model.stem,
        "startup_s": round(startup, 2),
        "invoke_s_median": round(statistics.median(walls), 3),
        "invoke_s_min": round(min(walls), 3),
        "count": counts[0],
        "emulated_ms_at_clock": round(1e3 * counts[0] / (board.clock_hz or 1), 3),
        "svd_in_log": "svd" in session.log.lower(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=REPO / "tests/models/kws_dscnn_int8.tflite")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--board", action="append", choices=BOARDS)
    args = ap.parse_args()
    tool = find_renode()
    print(f"{renode_version(tool.path)} ({tool.path}, found by {tool.source})")
    rows = [measure(args.model, b, args.runs) for b in args.board or BOARDS]
    print(f"{'board':<20} {'start-up s':>10} {'invoke s':>9} {'count':>10} {'SVD in log':>10}")
    for r in rows:
        print(f"{r['board']:<20} {r['startup_s']:>10} {r['invoke_s_median']:>9} "
              f"{r['count']:>10,} {'yes' if r['svd_in_log'] else 'no':>10}")  # fmt: skip
    print(json.dumps({"renode": renode_version(tool.path), "results": rows}))


if __name__ == "__main__":
    main()
