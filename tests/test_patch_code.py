"""Code size of patched models (compiled backend, codegen/compiled.py _compact_steps): the steps
of a patched stage that differ only in integer literals share one function reading its step's
values from a table, so model.c grows with the distinct calls, not with the bands.

- model.c of a patched model has one function per banded op (and kernel variant), where the
  per-step form (`generate(..., compact=False)`, the code before) has one per band, and the
  invoke still has one entry per step: the same op_names, profile length and steps;
- its code (model.c compiled for Cortex-M4 as the firmware is, weights left out) is smaller
  than the per-step form's by at least 16 B for each function no longer emitted (a function
  holds at least its kernel call, its arguments and its return); its invoke is the per-step
  form's but for the call (marks, running op, fault injection, arena guard, profile);
- on QEMU mps2-an386, the patch-widen graph (every op's output a model output: layer by layer)
  in 3 bands is bit-exact with the reference (which matches TFLite Micro there,
  test_patch_widen.py) and reports one profile entry per step, each band's conv counted.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from graph_on_device import int8_inputs
from paths import PROJECT_MODELS, SHARED_MODELS
from test_patch_widen import _graph as widen_graph
from tinyhost import reference
from tinyhost.boards import load_board
from tinyhost.codegen.compiled import generate
from tinyhost.plan.patch import PatchRequest, default_patch
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_patch_code"
BOARD = "mps2-an386"
RESNET = SHARED_MODELS / "mlperf_tiny" / "pretrainedResnet_quant.tflite"
# removed function -> at least this many bytes of code fewer (a call, its arguments, a return)
MIN_BYTES_PER_FUNCTION = 16

_FUNCTION = re.compile(r"/\* (op \d+|patched stage): [^\n]*\*/\nstatic th_status (\w+)\(")

needs_gcc = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                               reason="arm-none-eabi-gcc not installed")  # fmt: skip


def _cases() -> list[tuple[str, object, PatchRequest | None]]:
    cases = [("widen-kept", widen_graph, PatchRequest(3, keep_halo=True)),
             ("widen-recomputed", widen_graph, PatchRequest(3, keep_halo=False)),
             ("kws_dscnn-3", lambda: read_model(PROJECT_MODELS / "kws_dscnn_int8.tflite"),
              PatchRequest(3))]  # fmt: skip
    if RESNET.is_file():
        cases.append(("resnet-default", lambda: read_model(RESNET),
                      default_patch("compiled", "speed")))
    return cases


CASES = _cases()


def _functions(model_c: str) -> list[tuple[str, str]]:
    """(comment head: "op N" or "patched stage", name) of every op function of model.c."""
    return _FUNCTION.findall(model_c)


def _code_bytes(g, tag: str) -> int:
    """model.c's code and constants but the model data arrays, built as the firmware does."""
    d = BUILD / tag
    d.mkdir(parents=True, exist_ok=True)
    (d / "model.c").write_text(g.model_c)
    (d / "model.h").write_text(g.model_h)
    includes = [f"-I{d}"] + [f"-I{REPO / p}" for p in ("firmware/include", "firmware/model",
                                                       "kernels_c/include")]  # fmt: skip
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O2", "-std=c99",
                    "-Wall", "-Wextra", "-Werror", "-fmerge-all-constants",
                    "-ffunction-sections", "-fdata-sections", *includes, "-c",
                    str(d / "model.c"), "-o", str(d / "model.o")], check=True)  # fmt: skip
    sizes = subprocess.run(["arm-none-eabi-size", "-A", str(d / "model.o")], check=True,
                           capture_output=True, text=True).stdout
    data = {f".rodata.{s}" for s in g.data_symbols}
    return sum(int(f[1]) for f in (line.split() for line in sizes.splitlines())
               if len(f) >= 2 and f[0].startswith((".text", ".rodata")) and f[0] not in data)


@pytest.mark.parametrize(("name", "make", "request_"), CASES, ids=[c[0] for c in CASES])
def test_one_function_per_banded_op_and_the_same_steps(name: str, make, request_) -> None:
    graph = make()
    board = load_board(BOARD)
    new = generate(graph, board, "m", patch=request_)
    old = generate(graph, board, "m", patch=request_, compact=False)
    p = new.patched
    assert p is not None
    steps = len(new.op_order)
    # the steps, their names (the profile's) and what they compute are those of the per-step form
    assert new.op_order == old.op_order and new.op_names(graph) == old.op_names(graph)
    assert new.op_macs(graph) == old.op_macs(graph)
    assert len(_functions(old.model_c)) == steps  # the form before: one function per step
    assert f"op_function[{steps}]" in new.model_c and f"op_row[{steps}]" in new.model_c
    functions = _functions(new.model_c)
    banded = {new.folded.origin[p.origin[i]] for i in new.plan.op_order
              if p.band[i] is not None and i not in p.views and i not in p.moves}
    per_op: dict[str, int] = {}
    for head, _ in functions:
        per_op[head] = per_op.get(head, 0) + 1
    assert banded and all(per_op[f"op {op}"] == 1 for op in banded), per_op
    # the views (no code) and the moves of kept rows (memmove)
    assert per_op.get("patched stage", 0) <= 3
    unbanded = sum(1 for i in new.plan.op_order if p.band[i] is None and i not in p.views)
    assert len(functions) <= len(banded) + 3 + unbanded < steps
    # the invoke is the per-step form's but for the call: the same marks, running op, fault
    # injection, arena guard and profile per step
    calls = ("ops[i]()", "functions[op_function[i]](op_row[i])")
    assert _invoke(old.model_c).count(calls[0]) == 1
    assert _invoke(new.model_c) == _invoke(old.model_c).replace(*calls)
    assert "TH_FAULT_INJECT_OP" in _invoke(new.model_c)


def _invoke(model_c: str) -> str:
    start = model_c.index("th_model_status th_model_invoke(")
    return model_c[start : model_c.index("\n}\n", start)]


@needs_gcc
@pytest.mark.parametrize(("name", "make", "request_"), CASES, ids=[c[0] for c in CASES])
def test_code_smaller_by_the_functions_removed(name: str, make, request_) -> None:
    graph = make()
    board = load_board(BOARD)
    new = generate(graph, board, "m", patch=request_)
    old = generate(graph, board, "m", patch=request_, compact=False)
    removed = len(_functions(old.model_c)) - len(_functions(new.model_c))
    assert removed > 0
    before, after = _code_bytes(old, f"{name}-old"), _code_bytes(new, f"{name}-new")
    assert after <= before - MIN_BYTES_PER_FUNCTION * removed, (before, after, removed)


needs_toolchain = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed")  # fmt: skip


@needs_toolchain
def test_patched_layers_bit_exact_on_qemu_with_one_profile_entry_per_step() -> None:
    from tinyhost.deploy.runner import run_model

    graph = widen_graph()
    request_ = PatchRequest(3, keep_halo=True)
    g = generate(graph, load_board(BOARD), "m", patch=request_)
    x = int8_inputs(graph, 11)
    report = run_model(graph, BOARD, [x], backend="compiled", work_dir=BUILD / "qemu",
                       patch=request_)  # fmt: skip
    run = report.runs[0]
    for t, got, want in zip(graph.outputs, run.outputs, reference.run(graph, x).outputs,
                            strict=True):  # fmt: skip
        assert np.array_equal(got, np.asarray(want).reshape(got.shape)), graph.tensors[t].name
    assert list(report.op_names) == list(g.op_names(graph))
    assert run.latency.unit == "instructions" and len(run.latency.per_op) == len(g.op_order)
    p = g.patched
    assert p is not None
    # every band of every banded conv ran its kernel (a view costs next to nothing)
    calls = [n for n, i in zip(run.latency.per_op, g.plan.op_order, strict=True)
             if p.band[i] is not None and i not in p.views and i not in p.moves]
    views = [n for n, i in zip(run.latency.per_op, g.plan.op_order, strict=True)
             if i in p.views]
    assert calls and min(calls) > 10 * max(views, default=0)


_STEP_TABLE = re.compile(r"step_args\[(\d+)\]\[(\d+)\] = \{(\{.*?\})\};")


@pytest.mark.parametrize(("name", "make", "request_"), CASES, ids=[c[0] for c in CASES])
def test_step_tables_hold_each_column_once(name: str, make, request_) -> None:
    """A step table's columns all differ: a value equal in every row to another column's (a
    band's length in each of an ADD's counts) is read from that one column."""
    g = generate(make(), load_board(BOARD), "m", patch=request_)
    tables = _STEP_TABLE.findall(g.model_c)
    assert tables
    for n, m, body in tables:
        rows = [tuple(int(v) for v in r.split(",")) for r in re.findall(r"\{([^{}]*)\}", body)]
        assert len(rows) == int(n) and all(len(r) == int(m) for r in rows), body
        columns = list(zip(*rows, strict=True))
        assert len(set(columns)) == len(columns), body


@needs_gcc
@pytest.mark.skipif(not RESNET.is_file(), reason="MLPerf ResNet-8 not in the shared folder")
def test_banded_add_prep_built_without_a_library_call() -> None:
    """ResNet-8's ADD bands build their th_add_prep at run time (the band's length from the
    step table). Its initializer names every field, 0 where unused (the host-chosen loop's
    go, go_n, go_rows too): else GCC clears the struct's 188 bytes with a call of memset
    first (~110 instructions a band). model.c, compiled as the firmware is, calls neither
    memset nor memcpy."""
    g = generate(read_model(RESNET), load_board(BOARD), "m",
                 patch=default_patch("compiled", "speed"))  # fmt: skip
    assert "\n    const th_add_prep prep = {" in g.model_c  # one built at run time
    _code_bytes(g, "resnet-prep")
    dis = subprocess.run(["arm-none-eabi-objdump", "-dr", str(BUILD / "resnet-prep" / "model.o")],
                         check=True, capture_output=True, text=True).stdout  # fmt: skip
    assert not re.search(r"R_ARM_THM_(CALL|JUMP24)\s+(memset|memcpy)\b", dis)
