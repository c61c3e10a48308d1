"""Run a labelled set on a device, the int8 reference and the float model; log, then sum up.

The firmware is converted and built once; `jobs` worker processes each start their own device
(host process, QEMU or Renode) and take a contiguous shard of the samples. Each worker runs the
NumPy reference (and the float model) on its samples too, so every engine's work fans out.
Every finished sample is one JSON line in the sample log, appended and flushed as it comes:
an interrupted eval keeps what it measured and `resume` runs only the missing samples. The
summary is computed from the log alone, so a resumed eval equals an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinyhost import __version__
from tinyhost.boards import Board, resolve_board
from tinyhost.errors import DeployError, InputDataError, TinyhostError
from tinyhost.evaluate.data import Dataset
from tinyhost.evaluate.metrics import ErrorSums, classification, dequantize, regression
from tinyhost.ir import Graph
from tinyhost.paths import repo_root

MAX_LISTED_MISMATCHES = 50


@dataclass(frozen=True)
class Engines:
    """What one worker needs: the graphs, the firmware, the board, where the data is."""

    graph: Graph
    float_graph: Graph | None
    board: Board
    elf: Path | None
    port: str | None
    timeout: float
    load_image: bytes | None = None  # LOAD_MODEL's, when the board on `port` has another model
    model_hash: int = 0


def _layer_pairs(graph: Graph, float_graph: Graph) -> list[tuple[str, str, int, int]]:
    """(op name, tensor name, int8 tensor, float tensor) for op outputs present in both models.

    Tensors are matched by name (the quantizer and TFLite's converter keep the float names).
    """
    by_name = {t.name: i for i, t in enumerate(float_graph.tensors)}
    pairs = []
    for op in graph.ops:
        for ti in op.outputs:
            t = graph.tensors[ti]
            fi = by_name.get(t.name)
            if fi is None or t.quant is None or t.dtype.kind not in "iu":
                continue
            if int(np.prod(float_graph.tensors[fi].shape)) != int(np.prod(t.shape)):
                continue
            pairs.append((op.name, t.name, ti, fi))
    return pairs


def _deq(graph: Graph, ti: int, x: np.ndarray) -> np.ndarray:
    q = graph.tensors[ti].quant
    if q is None or x.dtype.kind == "f":
        return x.astype(np.float64)
    if len(q.scale) > 1:  # per-axis activations do not occur; keep it exact anyway
        shape = [1] * x.ndim
        shape[q.axis] = -1
        return (x.astype(np.float64) - q.zero_point.reshape(shape)) * q.scale.reshape(shape)
    return dequantize(x, float(q.scale[0]), int(q.zero_point[0]))


def _float_input(graph: Graph, x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "f":
        return x.astype(np.float32)
    return _deq(graph, graph.inputs[0], x).astype(np.float32)


def sample_record(e: Engines, index: int, x: np.ndarray, device_outputs: list[np.ndarray],
                  latency: dict | None) -> dict:  # fmt: skip
    """One sample's log line: device outputs, agreement with the reference, float errors."""
    from tinyhost import reference

    g = e.graph
    keep = e.float_graph is not None
    ref = reference.run(g, [x[None]], keep_intermediates=keep)
    rec: dict = {"i": index, "device": [o.reshape(-1).tolist() for o in device_outputs]}
    mism = []
    for k, (d, r) in enumerate(zip(device_outputs, ref.outputs)):
        dr, rr = d.reshape(-1), r.reshape(-1)
        if dr.shape != rr.shape:
            mism.append([k, -1, None, None])
            continue
        for j in np.flatnonzero(dr != rr)[:MAX_LISTED_MISMATCHES]:
            mism.append([k, int(j), int(dr[j]), int(rr[j])])
    if mism:
        rec["mismatch"] = mism
        rec["reference"] = [o.reshape(-1).tolist() for o in ref.outputs]
    if latency is not None:
        rec["latency"] = latency
    if e.float_graph is not None:
        fg = e.float_graph
        fres = reference.run(fg, [_float_input(g, x)[None]], keep_intermediates=True)
        rec["float"] = [o.reshape(-1).astype(np.float64).tolist() for o in fres.outputs]
        rec["output_err"] = [
            ErrorSums.of(_deq(g, gi, d), f).to_list()
            for gi, d, f in zip(g.outputs, device_outputs, fres.outputs)
        ]  # fmt: skip
        rec["layer_err"] = [
            ErrorSums.of(_deq(g, ti, ref.tensors[ti]), fres.tensors[fi]).to_list()
            for _, _, ti, fi in _layer_pairs(g, fg)
        ]  # fmt: skip
    return rec


BATCH = 16  # samples per link round trip in the workers that do not measure latency


def _worker(e: Engines, xs: np.ndarray, work, queue, timed: bool,
            first: list[int] | None = None) -> None:  # fmt: skip
    """Run the chunk `first` (its own), then chunks of sample indices taken from `work` until
    its None; every sample goes on `queue`, then ("done", None) or ("error", text). Chunks are
    taken as workers get free, so a worker that measures latency (slower) simply runs fewer of
    them; its own first sample makes sure it measures at least one, however slow it starts.

    `timed`: on QEMU, run the icount plugin for exact latency (it slows QEMU about 2x, so by
    default only one worker measures; the others only check outputs).
    """
    from tinyhost.deploy.cycles import CoreModel, core_of, cycles
    from tinyhost.deploy.icount import MarkLog
    from tinyhost.deploy.runner import check_device_model, invoke_once, open_device
    from tinyhost.deploy.selfcheck import check_selfcheck

    try:
        with contextlib.ExitStack() as stack:
            exact = timed and e.port is None and e.board.qemu_machine is not None
            modelled = core_of(e.board.cpu)
            core = CoreModel(modelled) if exact and modelled is not None else None
            icount_out = None
            if exact:
                tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="th-eval-"))
                icount_out = Path(tmp) / "marks.txt"
            device = stack.enter_context(
                open_device(e.elf, e.board, timeout=e.timeout, port=e.port, icount_out=icount_out,
                            classes=core is not None)  # fmt: skip
            )
            info = device.info()
            check_selfcheck(info.selfcheck, e.board.name,
                            "renode" if e.board.renode_platform is not None else None)
            if e.port is not None and (not info.model_ready or info.model_hash != e.model_hash):
                if e.load_image is None:
                    raise DeployError(f"{e.board.name}: the board runs another model and this "
                                      "backend cannot load one: flash this model's firmware")
                device.load_model(e.load_image)
                info = device.info()
            if not info.model_ready:
                raise DeployError(f"{e.board.name}: the firmware did not accept the model blob")
            check_device_model(info, e.graph)
            marks = MarkLog(icount_out) if icount_out is not None else None
            from tinyhost.deploy.runner import prepare_device_inputs

            for chunk in itertools.chain([first] if first else [], iter(work.get, None)):
                if not timed and e.port is None:
                    # Emulators and the host board buffer the link: the chunk's samples in one
                    # round trip (Device.run_batch), the link's latency paid once per chunk.
                    sets = [prepare_device_inputs(e.graph, [xs[i][None]]) for i in chunk]
                    for i, outputs in zip(chunk, device.run_batch(sets)):
                        queue.put(("sample", sample_record(e, i, xs[i], outputs, None)))
                    continue
                for i in chunk:
                    x = xs[i]
                    inputs = prepare_device_inputs(e.graph, [x[None]])
                    run = invoke_once(device, inputs, marks, e.board.clock_hz or 0,
                                      profile=timed)  # fmt: skip
                    lat = run.latency.to_json() if timed else None
                    if lat is not None and core is not None and run.classes is not None:
                        lat["cycles_estimate"] = cycles(run.classes, core)
                    queue.put(("sample", sample_record(e, i, x, run.outputs, lat)))
        queue.put(("done", None))
    except TinyhostError as err:
        queue.put(("error", str(err)))
    except Exception as err:  # a bug: the parent shows it, with the worker's traceback text
        import traceback

        queue.put(("error", f"worker crashed: {err!r}\n{traceback.format_exc()}"))


def read_log(path: Path) -> tuple[dict | None, dict[int, dict]]:
    """Header and samples of a sample log; a torn last line (killed mid-write) is dropped."""
    header, samples = None, {}
    if not path.is_file():
        return None, {}
    with path.open() as f:
        for line in f:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                break
            if "header" in obj:
                header = obj["header"]
            else:
                samples[int(obj["i"])] = obj
    return header, samples


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo_root(),
                             capture_output=True, text=True, timeout=5)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def run_eval(
    graph: Graph,
    dataset: Dataset,
    board: Board | str,
    *,
    float_graph: Graph | None = None,
    log_path: Path,
    jobs: int | None = None,
    resume: bool = False,
    work_dir: Path | None = None,
    port: str | None = None,
    timeout: float = 600.0,
    progress: bool = True,
    backend: str = "interpreter",
    latency_jobs: int = 1,
) -> dict:
    """Evaluate; returns the results dict (also the content of `tinyhost eval -o`).

    Latency is measured by the first `latency_jobs` workers (0: all), on their samples.
    """
    from tinyhost.codegen import get_backend
    from tinyhost.deploy.runner import build_firmware, default_build_root

    convert = get_backend(backend).convert
    if len(graph.inputs) != 1:
        raise InputDataError(f"{graph.source}: eval takes single-input models "
                             f"({len(graph.inputs)} inputs)")  # fmt: skip
    b = resolve_board(board)
    name = Path(graph.source).stem or "model"
    work = (Path(work_dir) if work_dir is not None
            else default_build_root() / f"{b.name}-{backend}-{name}")
    conv = convert(graph, b, work / "model")
    fw = None if port is not None else build_firmware(work / "model", b, work / "build")
    header = {
        "model": name,
        "model_hash": conv.model_hash,
        "backend": backend,
        "data_sha": _sha(np.ascontiguousarray(dataset.x).tobytes()),
        "samples": len(dataset.x),
        "board": b.name,
        "float": float_graph is not None,
    }
    done: dict[int, dict] = {}
    if resume:
        old, done = read_log(log_path)
        if old is not None and old != header:
            raise InputDataError(f"{log_path}: the log is of another run ({old}); drop --resume "
                                 "or remove it")  # fmt: skip
    if not resume or not log_path.is_file():
        done = {}
    # Rewritten whole: drops a line torn by the interruption, so appends start on a clean line.
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("".join(json.dumps(o) + "\n" for o in [{"header": header},
                                                                *done.values()]))  # fmt: skip
    todo = [i for i in range(len(dataset.x)) if i not in done]
    n_jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    if port is not None:
        n_jobs = 1  # one board, one serial port
    engines = Engines(graph, float_graph, b, fw.elf if fw else None, port, timeout,
                      conv.load_image, conv.model_hash)  # fmt: skip
    start = time.perf_counter()
    if todo:
        timed = n_jobs if latency_jobs <= 0 else min(latency_jobs, n_jobs)
        _fan_out(engines, dataset.x, todo, n_jobs, timed, log_path, len(done), len(dataset.x),
                 progress)  # fmt: skip
    elapsed = time.perf_counter() - start
    _, samples = read_log(log_path)
    results = summarize(graph, float_graph, dataset, samples)
    results.update({
        "model": name,
        "model_path": graph.source,
        "board": b.name,
        "backend": backend,
        "clock_hz": b.clock_hz or 0,
        "arena_bytes": conv.arena_bytes,
        "model_flash_bytes": conv.model_flash_bytes,
        "blob_bytes": conv.model_flash_bytes,  # the key report/compare read
        "flash_code_bytes": fw.size.text if fw else None,
        "ram_bytes": (fw.size.data + fw.size.bss) if fw else None,
        "ops": list(conv.op_names),
        "model_info": model_info(graph, conv.op_order),
        "data": {"source": dataset.source, "samples": len(dataset.x),
                 "preprocessing": dataset.preprocessing, "classes": dataset.class_names},
        "throughput": {"jobs": n_jobs, "samples_run": len(todo), "seconds": elapsed,
                       "samples_per_s": len(todo) / elapsed if todo and elapsed > 0 else None},
        "environment": {"tinyhost": __version__, "commit": _git_commit(),
                        "python": sys.version.split()[0],
                        "firmware": str(fw.elf) if fw else None},
    })  # fmt: skip
    return results


def _fan_out(e: Engines, xs: np.ndarray, todo: list[int], n_jobs: int, timed: int,
             log_path: Path, already: int, total: int, progress: bool) -> None:  # fmt: skip
    from tqdm import tqdm

    ctx = mp.get_context("fork")  # the graphs go to the workers without pickling
    queue, work = ctx.Queue(), ctx.Queue()
    # Each latency-measuring worker's first sample is its own: on a loaded machine the
    # others could otherwise take every chunk before it has started.
    own = [[i] for i in todo[:timed]] if len(todo) > timed else []
    shared = todo[len(own):]
    for start in range(0, len(shared), BATCH):
        work.put(shared[start : start + BATCH])
    for _ in range(n_jobs):
        work.put(None)  # one stop per worker
    procs = [ctx.Process(target=_worker,
                         args=(e, xs, work, queue, k < timed, own[k] if k < len(own) else None),
                         daemon=True)
             for k in range(n_jobs)]  # fmt: skip
    for p in procs:
        p.start()
    bar = tqdm(total=total, initial=already, desc=f"eval on {e.board.name}", unit="sample",
               file=sys.stderr, disable=not progress, dynamic_ncols=True)  # fmt: skip
    running, error = len(procs), None
    try:
        with log_path.open("a") as log:
            while running:
                kind, payload = _get(queue, procs, running)
                if kind == "sample":
                    log.write(json.dumps(payload) + "\n")
                    log.flush()
                    bar.update(1)
                else:
                    running -= 1
                    if kind == "error" and error is None:
                        error = payload
                        break
    finally:
        bar.close()
        for p in procs:
            if p.is_alive() and error is not None:
                p.terminate()
            p.join(timeout=30)
    if error is not None:
        raise DeployError(f"eval stopped ({log_path} keeps the finished samples; --resume "
                          f"continues): {error}")  # fmt: skip


def _get(queue, procs: list, running: int) -> tuple[str, object]:
    """The next message; an error when fewer workers live than have yet to say "done"."""
    import queue as queue_mod

    while True:
        try:
            return queue.get(timeout=1.0)
        except queue_mod.Empty:
            if sum(p.is_alive() for p in procs) < running and queue.empty():
                return ("error", "a worker process died without a word")


def _latency_summary(samples: list[dict]) -> dict | None:
    lats = [s["latency"] for s in samples if "latency" in s]
    if not lats:
        return None
    totals = np.array([lt["total"] for lt in lats], dtype=np.float64)
    per_op = np.array([lt["per_op"] for lt in lats if lt["per_op"]], dtype=np.float64)
    first = lats[0]
    out = {
        "unit": first["unit"],
        "hz": first["hz"],
        "samples": len(lats),
        "median": float(np.median(totals)),
        "min": float(totals.min()),
        "max": float(totals.max()),
        "mean": float(totals.mean()),
        "per_op_median": np.median(per_op, axis=0).tolist() if per_op.size else [],
    }
    if first["hz"]:
        out["ms_at_clock"] = 1000 * out["median"] / first["hz"]
        if first["unit"] == "instructions":
            out["ms_note"] = "estimate: 1 instruction = 1 cycle"
    estimates = [lt["cycles_estimate"] for lt in lats if "cycles_estimate" in lt]
    if estimates:
        median = float(np.median(estimates))
        out["cycles_estimate"] = {
            "label": "estimate", "median": median,
            "ms_at_clock": 1000 * median / first["hz"] if first["hz"] else None,
            "model": "deploy/cycles.py: Cortex-M4/M7 costs from the TRMs over QEMU's "
                     "instruction classes",
        }  # fmt: skip
        if out.get("ms_note"):
            out["ms_note"] = "at 1 instruction per cycle; see cycles_estimate"
    return out


def summarize(graph: Graph, float_graph: Graph | None, dataset: Dataset,
              samples: dict[int, dict]) -> dict:  # fmt: skip
    """The results from the logged samples (order-independent)."""
    order = sorted(samples)
    recs = [samples[i] for i in order]
    out: dict = {"samples_done": len(recs)}
    if not recs:
        return out
    mismatches = [{"sample": r["i"], "output": m[0], "index": m[1], "device": m[2],
                   "reference": m[3]} for r in recs for m in r.get("mismatch", [])]  # fmt: skip
    equal = sum(1 for r in recs if "mismatch" not in r)
    out["agreement"] = {"device_vs_reference": {
        "bit_exact_samples": equal, "samples": len(recs), "percent": 100.0 * equal / len(recs),
        "mismatches": mismatches[:MAX_LISTED_MISMATCHES * 4]}}  # fmt: skip
    dev0 = np.array([r["device"][0] for r in recs], dtype=np.float64)
    ref0 = np.array([r.get("reference", r["device"])[0] for r in recs], dtype=np.float64)
    y = dataset.y[order] if dataset.y is not None else None
    is_class = y is not None and y.ndim == 1 and y.dtype.kind in "iu" and dev0.shape[1] > 1
    if is_class:
        out["task"] = "classification"
        out["accuracy"] = {"device": classification(y, dev0), "reference": _brief(y, ref0)}
    elif y is not None:
        out["task"] = "regression"
        q = graph.tensors[graph.outputs[0]]
        out["accuracy"] = {"device": regression(y, _deq(graph, graph.outputs[0],
                                                        dev0.astype(q.dtype)))}  # fmt: skip
    if float_graph is not None:
        fl0 = np.array([r["float"][0] for r in recs], dtype=np.float64)
        if is_class:
            assert y is not None
            out["accuracy"]["float"] = _brief(y, fl0)
            same = np.argmax(fl0, axis=1) == np.argmax(dev0, axis=1)
            out["agreement"]["int8_vs_float_top1"] = {
                "same_top1": int(same.sum()), "samples": len(recs),
                "percent": 100.0 * float(same.mean())}  # fmt: skip
        elif y is not None:
            out["accuracy"]["float"] = regression(y, fl0)
        sums = [ErrorSums() for _ in recs[0]["output_err"]]
        for r in recs:
            sums = [a + ErrorSums.from_list(v) for a, v in zip(sums, r["output_err"])]
        out["output_errors"] = [{"output": k, **s.figures()} for k, s in enumerate(sums)]
        pairs = _layer_pairs(graph, float_graph)
        lsums = [ErrorSums() for _ in pairs]
        for r in recs:
            lsums = [a + ErrorSums.from_list(v) for a, v in zip(lsums, r["layer_err"])]
        out["layer_errors"] = [{"op": op, "tensor": t, **s.figures()}
                               for (op, t, _, _), s in zip(pairs, lsums)]  # fmt: skip
    lat = _latency_summary(recs)
    if lat is not None:
        out["latency"] = lat
    return out


def model_info(graph: Graph, order: Sequence[int]) -> dict:
    """Ops in execution order with output shapes and MACs; totals."""
    from tinyhost.ir.stats import graph_stats, op_macs

    stats = graph_stats(graph)
    ops = [{"index": i, "op": graph.ops[i].name,
            "output": [list(graph.tensors[t].shape) for t in graph.ops[i].outputs],
            "macs": op_macs(graph, graph.ops[i])} for i in order]  # fmt: skip
    return {"ops": ops, "macs": stats.macs, "weight_bytes": stats.weight_bytes,
            "largest_activation_bytes": stats.largest_activation_bytes}  # fmt: skip


def _brief(y: np.ndarray, scores: np.ndarray) -> dict:
    full = classification(y, scores)
    return {k: full[k] for k in ("top1", "top5", "correct", "samples")}


ProgressFn = Callable[[int], None]
