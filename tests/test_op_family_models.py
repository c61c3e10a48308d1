"""Issue 17's op families as committed model files (tests/models/families/, written by
tests/models/make_models.py: --families with tinyhost's writer, and TF's converter for the
int8 row-wise ops and a 16x8 model): each file read back; the reference bit-exact with
TFLite Micro on every tensor; then on the host board through both backends over three
consecutive invokes (the stateful SVDF and LSTM families reset before the third, which
repeats the first input) and, for the families with new compute kernels (16x8, SVDF, LSTM,
int4), on QEMU mps2-an386 (Cortex-M4, DSP build) through both backends: one firmware per
family and backend, every output of every invoke equal to the reference bit for bit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from stateful_device import reference_invokes
from test_reference_oracle import _compare_all_tensors
from tinyhost import reference
from tinyhost.deploy.runner import run_model
from tinyhost.ir import Graph, OpKind
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_op_family_models"
FAMILIES = PROJECT_MODELS / "families"
# written by tinyhost's writer (families/manifest.json) and by TF's converter (the models'
# manifest.json one level up: rowwise_tf_int8, ops_16x8)
WRITTEN = json.loads((FAMILIES / "manifest.json").read_text())["models"]
STEMS = sorted(p.stem for p in FAMILIES.glob("*.tflite"))
STATEFUL = {Path(m["file"]).stem for m in WRITTEN if m["stateful"]}
QEMU_FAMILIES = ["chain_16x8", "svdf_kws", "lstm_stack", "int4_chain"]
INVOKES = 3
RESET = 2  # stateful families: state reset before the third invoke (the first input again)

# What each family file must hold (so a regenerated file cannot silently lose an op).
EXPECTED_OPS = {
    "elementwise_int8": {OpKind.ABS, OpKind.ELU, OpKind.RSQRT, OpKind.ZEROS_LIKE, OpKind.MINIMUM,
                         OpKind.MAXIMUM, OpKind.SQUARED_DIFFERENCE, OpKind.PRELU, OpKind.DIV,
                         OpKind.FILL},
    "rowwise_int8": {OpKind.LOG_SOFTMAX, OpKind.L2_NORMALIZATION, OpKind.CUMSUM, OpKind.SUM,
                     OpKind.REDUCE_MAX},
    "chain_16x8": {OpKind.QUANTIZE, OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D,
                   OpKind.FULLY_CONNECTED, OpKind.ADD, OpKind.MUL, OpKind.SOFTMAX},
    "int16_activations": {OpKind.QUANTIZE, OpKind.LOGISTIC, OpKind.TANH, OpKind.SUB},
    "svdf_kws": {OpKind.SVDF, OpKind.SOFTMAX, OpKind.QUANTIZE},
    "lstm_stack": {OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM},
    "int4_chain": {OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED},
    "rowwise_tf_int8": {OpKind.LOG_SOFTMAX, OpKind.L2_NORMALIZATION, OpKind.SUM,
                        OpKind.REDUCE_MAX},
    "ops_16x8": {OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED, OpKind.ADD,
                 OpKind.MUL, OpKind.SUB, OpKind.SOFTMAX, OpKind.LOGISTIC, OpKind.TANH},
}  # fmt: skip


def _graph(stem: str) -> Graph:
    return read_model(FAMILIES / f"{stem}.tflite")


def _inputs(graph: Graph, stem: str) -> list[list[np.ndarray]]:
    """Three input sets; for stateful families the third repeats the first (after a reset
    it must give the first invoke's outputs again)."""
    rng = np.random.default_rng(sum(map(ord, stem)))
    sets = [reference.random_inputs(graph, rng) for _ in range(INVOKES)]
    if stem in STATEFUL:
        sets[RESET] = sets[0]
    return sets


def test_every_family_file_holds_its_ops_and_the_stateful_ones_carry_state() -> None:
    assert set(STEMS) == set(EXPECTED_OPS)
    for stem in STEMS:
        graph = _graph(stem)
        assert {op.kind for op in graph.ops} >= EXPECTED_OPS[stem], stem
        assert bool(graph.variable_tensors()) == (stem in STATEFUL), stem
    int4 = _graph("int4_chain")
    assert sum(t.packed_int4 for t in int4.tensors) == 3  # conv, dw and fc weights packed
    for stem in ("chain_16x8", "ops_16x8"):
        g = _graph(stem)
        assert {g.tensors[op.inputs[0]].dtype for op in g.ops if op.kind in (
            OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED)} == {
            np.dtype(np.int16)}, stem  # fmt: skip


@pytest.mark.parametrize("stem", STEMS)
def test_reference_matches_tflm_on_every_tensor(stem: str) -> None:
    graph = _graph(stem)
    for x in _inputs(graph, stem)[:2]:
        compared = _compare_all_tensors(graph, x, FAMILIES / f"{stem}.tflite")
        assert compared == sum(len(op.outputs) for op in graph.ops)


@pytest.mark.parametrize("stem", sorted(STATEFUL))
def test_stateful_reference_matches_tflm_over_invokes_and_a_reset(stem: str) -> None:
    """The state carried over the invokes and reset (TFLM's interpreter.reset) as TFLM
    does: every output of every invoke."""
    from tflite_micro.python.tflite_micro import runtime

    graph = _graph(stem)
    sets = _inputs(graph, stem)
    data = (FAMILIES / f"{stem}.tflite").read_bytes()
    interpreter = runtime.Interpreter.from_bytes(data, arena_size=1 << 20)
    expected = reference_invokes(graph, [s[0] for s in sets], RESET)
    for k, (x, want) in enumerate(zip(sets, expected, strict=True)):
        if k == RESET:
            interpreter.reset()
        interpreter.set_input(x[0], 0)
        interpreter.invoke()
        for j, w in enumerate(want):
            got = np.array(interpreter.get_output(j)).reshape(w.shape)
            np.testing.assert_array_equal(got, w, err_msg=f"{stem}: invoke {k}, output {j}")


def _check_on_device(stem: str, board: str, backend: str) -> None:
    graph = _graph(stem)
    sets = _inputs(graph, stem)  # elementwise: the device against the reference, DIV too
    reset = RESET if stem in STATEFUL else INVOKES  # INVOKES: no reset
    expected = []
    state = reference.initial_state(graph)
    for k, x in enumerate(sets):
        if k == reset:
            state = reference.initial_state(graph)
        result = reference.run(graph, x, state=state)
        state = result.state
        expected.append(result.outputs)
    if stem in STATEFUL:  # the reset really restarts: the repeated input, the same outputs
        shared = reference_invokes(graph, [s[0] for s in sets], reset)  # the other helper
        for ours, theirs in zip(expected, shared, strict=True):
            for a, b in zip(ours, theirs, strict=True):
                np.testing.assert_array_equal(a, b)
        for a, b in zip(expected[RESET], expected[0], strict=True):
            np.testing.assert_array_equal(a, b)
        assert any(not np.array_equal(a, b) for a, b in zip(expected[1], expected[0]))
    report = run_model(graph, board, sets, backend=backend,
                       work_dir=BUILD / f"{board}-{backend}-{stem}",
                       reset_before={RESET} if stem in STATEFUL else ())
    assert len(report.runs) == len(sets)
    for k, (run, want) in enumerate(zip(report.runs, expected)):
        for t, got, w in zip(graph.outputs, run.outputs, want, strict=True):
            np.testing.assert_array_equal(
                got, w.reshape(got.shape),
                err_msg=f"{backend} on {board}, invoke {k}, output '{graph.tensors[t].name}'")


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
@pytest.mark.parametrize("stem", STEMS)
def test_bit_exact_on_the_host_board_over_invokes(stem: str, backend: str) -> None:
    _check_on_device(stem, "host", backend)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
@pytest.mark.parametrize("stem", QEMU_FAMILIES)
def test_bit_exact_on_qemu_over_invokes(stem: str, backend: str) -> None:
    _check_on_device(stem, "mps2-an386", backend)
