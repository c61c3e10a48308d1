"""Regenerate plan/stack_table.json: per CPU, the static stack bound of every kernel function.

    python -m tinyhost.deploy.stack_table [--check]

`plan` and `convert` derive the firmware's stack reserve from this table before any image
exists (plan/stack.py); `run` checks the built image's own bound against that reserve. The
table is measured, per CPU the boards use, on the protocol firmware with the interpreter and
every op adapter (so every kernel), with deploy/stack.py's call graph. --check rebuilds it and
fails if any committed figure is below the measured one (tests run this).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tinyhost.boards import load_board
from tinyhost.codegen import get_backend
from tinyhost.deploy.build import build
from tinyhost.deploy.stack import stack_table_entry
from tinyhost.paths import repo_root
from tinyhost.plan.stack import TABLE_PATH
from tinyhost.tflite import read_model

# One QEMU board per CPU the boards use: the table is keyed by CPU.
BOARDS = {"cortex-m4": "mps2-an386", "cortex-m7": "mps2-an500", "cortex-m55": "mps3-an547"}
# Any model will do: the op table is built with every adapter.
MODEL = Path("tests") / "models" / "kws_dscnn_int8.tflite"


def measure(work: Path) -> dict:
    root = repo_root()
    graph = read_model(root / MODEL)
    table = {}
    for cpu, name in BOARDS.items():
        board = load_board(name)
        model_dir = work / name / "model"
        get_backend("interpreter").convert(graph, board, model_dir, all_ops=True)
        fw = build(root / "firmware" / "app", board, work / name / "build", model_dir=model_dir)
        table[cpu] = stack_table_entry(fw.build_dir, fw.elf)
    return table


def stale_entries(committed: dict, measured: dict) -> list[str]:
    """Every figure of `measured` the committed table does not cover."""
    problems = []
    for cpu, m in measured.items():
        c = committed.get(cpu)
        if c is None:
            problems.append(f"{cpu}: not in the table")
            continue
        for key in ("base", "fault"):
            if m[key] > c[key]:
                problems.append(f"{cpu} {key}: {m[key]} measured > {c[key]} in the table")
        for fn, depth in m["kernels"].items():
            if depth > c["kernels"].get(fn, -1):
                problems.append(f"{cpu} {fn}: {depth} measured > "
                                f"{c['kernels'].get(fn, 'none')} in the table")  # fmt: skip
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="fail if the committed table is below the measured figures")
    ap.add_argument("--work-dir", type=Path, help="build here (default: a temporary dir)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="th-stack-table-") as tmp:
        measured = measure(args.work_dir or Path(tmp))
    if args.check:
        problems = stale_entries(json.loads(TABLE_PATH.read_text()), measured)
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            print("regenerate: python -m tinyhost.deploy.stack_table", file=sys.stderr)
        return 1 if problems else 0
    TABLE_PATH.write_text(json.dumps(measured, indent=1, sort_keys=True) + "\n")
    print(f"wrote {TABLE_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
