"""`tinyhost compare`: results of eval, bench and run --json side by side, with ratios.

Every kind of result is normalized to a `render.Row` (missing figures stay None, printed as
"-"); latency ratios are only computed between rows of the same unit, since instructions on
QEMU, ns on the host and cycles on hardware do not compare.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tinyhost.errors import InputDataError
from tinyhost.report.render import Row, comparison_rows


def normalize(r: dict, source: str) -> Row:
    """A Row from eval results, `bench --json` or `run --json` output."""
    if not isinstance(r, dict) or "model" not in r or "board" not in r:
        raise InputDataError(f"{source}: not tinyhost results (no model/board keys)")
    if "samples_done" in r:  # eval
        return comparison_rows([r])[0]
    if "latency_total" in r:  # bench
        hz = r.get("clock_hz") or 0
        return Row(r["model"], r["board"], r.get("backend", "interpreter"), None, None,
                   r["latency_total"], r.get("unit", ""), 1000 * r["latency_total"] / hz if hz
                   else None, r.get("arena_bytes"), r.get("ram_total_bytes"),
                   r.get("flash_code_bytes"), r.get("flash_data_bytes"),
                   (r.get("cycles_estimate") or {}).get("cycles"))  # fmt: skip
    lat = r.get("latency", {})  # run --json: the first run's latency
    hz = lat.get("hz") or 0
    totals = [x["latency"]["total"] for x in r.get("runs", [])] or [lat.get("total")]
    med = float(np.median(totals)) if totals[0] is not None else None
    return Row(r["model"], r["board"], r.get("backend", "interpreter"), None, None, med,
               lat.get("unit", ""), 1000 * med / hz if hz and med else None,
               r.get("arena_bytes"), None, None, r.get("blob_bytes"))  # fmt: skip


def table(rows: Sequence[Row], baseline: int = 0) -> list[str]:
    """The comparison as aligned text lines; the baseline row is marked with '*'."""
    base = rows[baseline]

    def n(v, f=",.0f"):
        return "-" if v is None else format(v, f)

    head = ["", "model", "board", "backend", "top-1", "bit-exact", "latency", "unit", "x base",
            "ms@clock", "est. cycles", "arena B", "RAM B", "code B", "model B"]  # fmt: skip
    body = []
    for k, r in enumerate(rows):
        ratio = (n(r.latency / base.latency, ".2f") if r.latency and base.latency
                 and r.unit == base.unit else "-")  # fmt: skip
        body.append(["*" if k == baseline else "", r.model, r.board, r.backend,
                     "-" if r.top1 is None else f"{100 * r.top1:.2f}%",
                     "-" if r.agreement is None else f"{r.agreement:.1f}%", n(r.latency), r.unit,
                     ratio, n(r.ms, ".3f"), n(r.cycles_est), n(r.arena), n(r.ram), n(r.flash_code),
                     n(r.flash_model)])  # fmt: skip
    widths = [max(len(str(c[i])) for c in [head, *body]) for i in range(len(head))]
    left = {1, 2, 3, 7}
    return ["  ".join(str(c).ljust(w) if i in left else str(c).rjust(w)
                      for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
            for cells in [head, *body]]  # fmt: skip


def tflm_check(model_path: Path, xs: np.ndarray) -> dict:
    """TFLite Micro's Python interpreter on the same int8 samples: bit-exact with tinyhost?

    The reference is bit-exact with the device (eval checks that), so comparing TFLM with the
    reference compares it with the device.
    """
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError:
        raise InputDataError("--tflm needs TFLite Micro's Python package: pip install "
                             "tflite-micro") from None  # fmt: skip
    from tinyhost import reference
    from tinyhost.reference.executor import prepare_inputs
    from tinyhost.tflite import read_model

    graph = read_model(model_path)
    interp = runtime.Interpreter.from_bytes(model_path.read_bytes(), arena_size=8 << 20)
    same, mism = 0, []
    for i, x in enumerate(xs):
        inputs = prepare_inputs(graph, [x[None]])
        interp.reset()
        interp.set_input(inputs[0], 0)
        interp.invoke()
        ours = reference.run(graph, inputs).outputs
        theirs = [np.array(interp.get_output(k)) for k in range(len(ours))]
        if all(np.array_equal(a.reshape(-1), b.reshape(-1)) for a, b in zip(ours, theirs)):
            same += 1
        else:
            mism.append(i)
    return {"model": model_path.stem, "samples": len(xs), "bit_exact": same,
            "mismatched_samples": mism[:20], **tflm_arena(interp)}  # fmt: skip


_ARENA_LINE = re.compile(r"Arena allocation (total|head|tail) (\d+) bytes")


def tflm_arena(interp: object) -> dict[str, int]:
    """TFLM's arena use after a run, from its recording allocator's report (printed by the
    C++ side to file descriptor 2, so captured there): `tflm_arena_bytes` (head + tail, what a
    TFLM user must reserve) and its `head` (the planned activations) and `tail` (persistent
    allocations) parts."""
    with tempfile.TemporaryFile() as capture:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(capture.fileno(), 2)
            interp.print_allocations()  # type: ignore[attr-defined]
            ctypes.CDLL(None).fflush(None)  # anything the C side buffered, while fd 2 is ours
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        text = capture.read().decode(errors="replace")
    found = {k: int(v) for k, v in _ARENA_LINE.findall(text)}
    if "total" not in found:
        return {}
    return {"tflm_arena_bytes": found["total"], "tflm_arena_head_bytes": found.get("head", 0),
            "tflm_arena_tail_bytes": found.get("tail", 0)}  # fmt: skip
