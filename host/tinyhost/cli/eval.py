"""`tinyhost eval`: accuracy, agreement and latency of a model over a labelled set.

    tinyhost eval MODEL --data D [--labels L] --board B [--backend interpreter]
        [--float FLOAT.tflite] [-j N] [-o RESULTS.json] [--resume]

Samples are logged one JSON line each to RESULTS.samples.jsonl as they finish; --resume runs
only the samples missing from it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("eval", help="accuracy, agreement and latency over a labelled set")
    p.add_argument("model", help="int8 .tflite (float models are quantized with --calib), a "
                                 "directory of tinyhost convert, or a firmware built from one")
    p.add_argument("--data", required=True,
                   help=".npy/.npz (e.g. X_test/y_test), a folder of images (one subfolder per "
                        "class) or a CSV")  # fmt: skip
    p.add_argument("--labels", help=".npy of labels (overrides those in --data)")
    p.add_argument("--float", dest="float_model", metavar="FLOAT.tflite",
                   help="float model: int8-vs-float agreement, per output and per layer")
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="worker processes, each with its own device (default: the cores)")
    p.add_argument("-o", "--output", metavar="RESULTS.json", help="write the results here")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted eval from its sample log")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N samples")
    p.add_argument("--work-dir", help="where the model directory and build go")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per device session")
    p.add_argument("--port", metavar="URL", help="serial port of a flashed board")
    p.add_argument("--latency-jobs", type=int, default=1, metavar="N",
                   help="workers that measure latency (QEMU's icount plugin halves its speed); "
                        "0: all")  # fmt: skip
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    from tinyhost.cli.backend import add_model_options

    add_model_options(p)
    p.set_defaults(func=_cmd_eval)


def _cmd_eval(args: argparse.Namespace) -> int:
    from tinyhost.cli.backend import load_int8_graph, resolve_model
    from tinyhost.evaluate.data import Dataset, load_dataset
    from tinyhost.evaluate.runner import run_eval
    from tinyhost.tflite import read_model

    resolve_model(args)
    graph = load_int8_graph(args.model, args)
    ds = load_dataset(args.data, args.labels, graph.tensors[graph.inputs[0]])
    if args.limit is not None:
        ds = Dataset(ds.x[: args.limit], None if ds.y is None else ds.y[: args.limit],
                     ds.source, ds.preprocessing, ds.class_names)  # fmt: skip
    float_graph = read_model(args.float_model) if args.float_model else None
    out = Path(args.output) if args.output else None
    if out is not None:
        log = out.with_name(out.stem + ".samples.jsonl")
    else:
        from tinyhost.deploy.runner import default_build_root

        log = default_build_root() / f"eval-{args.board}-{Path(args.model).stem}.samples.jsonl"
    results = run_eval(
        graph, ds, args.board, float_graph=float_graph, log_path=log, jobs=args.jobs,
        resume=args.resume, work_dir=Path(args.work_dir) if args.work_dir else None,
        port=args.port, timeout=args.timeout, progress=not args.no_progress,
        backend=args.backend, latency_jobs=args.latency_jobs,
    )  # fmt: skip
    if out is not None:
        out.write_text(json.dumps(results, indent=1) + "\n")
    print("\n".join(summary_lines(results)))
    if out is not None:
        print(f"results: {out} (samples: {log})")
    agree = results.get("agreement", {}).get("device_vs_reference", {})
    return 1 if agree and agree["bit_exact_samples"] != agree["samples"] else 0


def summary_lines(r: dict) -> list[str]:
    """The text summary of eval results."""
    lines = [f"{r['model']} on {r['board']} ({r['backend']}): {r['samples_done']} samples of "
             f"{r['data']['source']}"]  # fmt: skip
    acc = r.get("accuracy", {})
    for engine in ("device", "reference", "float"):
        a = acc.get(engine)
        if a is None:
            continue
        if "top1" in a:
            lines.append(f"  {engine:<10} top-1 {100 * a['top1']:6.2f}%  top-5 "
                         f"{100 * a['top5']:6.2f}%  ({a['correct']}/{a['samples']})")  # fmt: skip
        else:
            lines.append(f"  {engine:<10} MAE {a['mae']:.5g}  RMSE {a['rmse']:.5g}")
    ag = r.get("agreement", {})
    d = ag.get("device_vs_reference")
    if d:
        lines.append(f"  device vs reference: {d['bit_exact_samples']}/{d['samples']} samples "
                     f"bit-exact ({d['percent']:.2f}%)")  # fmt: skip
        for m in d["mismatches"][:10]:
            lines.append(f"    MISMATCH sample {m['sample']} output {m['output']} index "
                         f"{m['index']}: device {m['device']}, "
                         f"reference {m['reference']}")  # fmt: skip
    f = ag.get("int8_vs_float_top1")
    if f:
        lines.append(f"  int8 vs float: same top-1 on {f['same_top1']}/{f['samples']} "
                     f"({f['percent']:.2f}%)")  # fmt: skip
    for e in r.get("output_errors", []):
        lines.append("  output {output}: ".format(**e) + _err(e))
    layers = r.get("layer_errors", [])
    if layers:
        lines.append("  per layer (int8 reference vs float):")
        for e in layers:
            lines.append(f"    {e['op']:<18} {e['tensor'][:28]:<28} " + _err(e))
    lat = r.get("latency")
    if lat:
        ms = ""
        if "ms_at_clock" in lat:
            note = f", {lat['ms_note']}" if "ms_note" in lat else ""
            ms = f" = {lat['ms_at_clock']:.3f} ms at {lat['hz'] / 1e6:g} MHz{note}"
        lines.append(f"  latency: {lat['median']:,.0f} {lat['unit']} median (min "
                     f"{lat['min']:,.0f}, max {lat['max']:,.0f}, over {lat['samples']} "
                     f"samples){ms}")  # fmt: skip
    t = r.get("throughput", {})
    if t.get("samples_per_s"):
        lines.append(f"  throughput: {t['samples_per_s']:.1f} samples/s with {t['jobs']} "
                     f"job(s)")  # fmt: skip
    return lines


def _err(e: dict) -> str:
    def f(v, fmt):
        return "n/a" if v is None else format(v, fmt)

    return (f"RMSE {f(e['rmse'], '.4g')}  MAE {f(e['mae'], '.4g')}  L2r {f(e['l2r'], '.4f')}  "
            f"cos {f(e['cos'], '.5f')}  SNR {f(e['snr_db'], '.1f')} dB")  # fmt: skip
