"""`tinyhost compare`: one table over results, or over models x boards x backends it runs.

    tinyhost compare RESULTS.json... [--baseline K]
    tinyhost compare --models M... --boards B... [--backends interpreter] --data D
        [--limit N] [-j N] [--tflm] [-o TABLE.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("compare", help="accuracy, latency and memory side by side")
    p.add_argument("results", nargs="*", help="results of eval, bench --json or run --json")
    p.add_argument("--models", nargs="+", default=[], metavar="M", help="int8 .tflite files")
    p.add_argument("--boards", nargs="+", default=[], metavar="B",
                   help="boards to run each model on (with --models)")
    p.add_argument("--backends", nargs="+", default=["interpreter"], metavar="NAME",
                   help="backends to run each model with (default interpreter)")
    p.add_argument("--data", help="labelled set for --models runs (see tinyhost eval)")
    p.add_argument("--labels", help=".npy of labels")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N samples")
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="eval worker processes per run (default: the number of cores)")
    p.add_argument("--baseline", type=int, default=0, metavar="K", help="row the ratios are to")
    p.add_argument("--tflm", action="store_true",
                   help="also run each model on TFLite Micro's Python interpreter: bit-exact?")
    p.add_argument("-o", "--output", metavar="TABLE.json", help="write rows (and runs) as JSON")
    p.set_defaults(func=_cmd_compare)


def _cmd_compare(args: argparse.Namespace) -> int:
    from tinyhost.errors import InputDataError
    from tinyhost.report.compare import normalize, table, tflm_check

    rows, runs, checks = [], [], []
    for path in args.results:
        try:
            r = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise InputDataError(f"{path}: not a readable results file ({e})") from None
        rows.append(normalize(r, path))
    if args.models or args.boards:
        if not (args.models and args.boards and args.data):
            raise InputDataError("running a comparison needs --models, --boards and --data")
        from tinyhost.evaluate.data import Dataset, load_dataset
        from tinyhost.evaluate.runner import run_eval
        from tinyhost.paths import repo_root
        from tinyhost.tflite import read_model

        for m in args.models:
            graph = read_model(m)
            ds = load_dataset(args.data, args.labels, graph.tensors[graph.inputs[0]])
            if args.limit is not None:
                ds = Dataset(ds.x[: args.limit], None if ds.y is None else ds.y[: args.limit],
                             ds.source, ds.preprocessing, ds.class_names)  # fmt: skip
            for board in args.boards:
                for backend in args.backends:
                    log = (repo_root() / "build" / "compare"
                           / f"{Path(m).stem}-{board}-{backend}.samples.jsonl")  # fmt: skip
                    r = run_eval(graph, ds, board, log_path=log, jobs=args.jobs,
                                 backend=backend)  # fmt: skip
                    runs.append(r)
                    rows.append(normalize(r, m))
            if args.tflm:
                checks.append(tflm_check(Path(m), ds.x))
    if not rows:
        raise InputDataError("nothing to compare: give results files or --models/--boards")
    if not 0 <= args.baseline < len(rows):
        raise InputDataError(f"--baseline {args.baseline}: there are {len(rows)} rows")
    print("\n".join(table(rows, args.baseline)))
    arenas = {(r.model, r.arena) for r in rows if r.arena}
    for c in checks:
        print(f"TFLite Micro vs tinyhost on {c['model']}: {c['bit_exact']}/{c['samples']} "
              f"samples bit-exact")  # fmt: skip
        ours = sorted(a for m, a in arenas if m == c["model"])
        if "tflm_arena_bytes" in c:
            print(f"  arena: TFLite Micro {c['tflm_arena_bytes']:,} B (planned activations "
                  f"{c['tflm_arena_head_bytes']:,} + persistent {c['tflm_arena_tail_bytes']:,})"
                  + (f", tinyhost {', '.join(f'{a:,}' for a in ours)} B" if ours else ""))
    if args.output:
        Path(args.output).write_text(json.dumps(
            {"rows": [r.__dict__ for r in rows], "runs": runs, "tflm": checks}, indent=1) + "\n")
    return 0 if all(c["bit_exact"] == c["samples"] for c in checks) else 1
