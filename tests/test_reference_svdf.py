"""SVDF and variable tensors: the reference against TFLite Micro over consecutive invokes,
the state carried from one to the next, then reset."""

from __future__ import annotations

import numpy as np
import pytest

from reference_single_op import random_int8
from stateful_device import reference_invokes
from svdf_graphs import svdf_graph
from tinyhost import reference
from tinyhost.errors import ModelFormatError
from tinyhost.ir import Activation
from tinyhost.passes.validate import check_graph
from tinyhost.tflite.reader import read_model_bytes
from tinyhost.tflite.writer import write_model

INVOKES = 4


def _tflm_sequence(graph, inputs, reset_after: int) -> list[np.ndarray]:
    """Outputs of consecutive invokes, the interpreter reset after `reset_after` of them."""
    from tflite_micro.python.tflite_micro import runtime

    interpreter = runtime.Interpreter.from_bytes(write_model(graph), arena_size=1 << 20)
    outs = []
    for k, x in enumerate(inputs):
        if k == reset_after:
            interpreter.reset()
        interpreter.set_input(x, 0)
        interpreter.invoke()
        outs.append(np.array(interpreter.get_output(0)))
    return outs


def _reference_sequence(graph, inputs, reset_after: int) -> list[np.ndarray]:
    return [outputs[0] for outputs in reference_invokes(graph, inputs, reset_after)]


@pytest.mark.parametrize(
    "batches,input_size,units,rank,memory,activation,seed,gain",
    [
        (1, 16, 8, 1, 5, Activation.NONE, 0, 1.0),
        (1, 24, 6, 2, 8, Activation.RELU, 1, 1.0),
        (2, 10, 4, 2, 3, Activation.NONE, 2, 1.0),
        (2, 7, 5, 1, 10, Activation.RELU, 3, 1.0),
        (1, 40, 16, 2, 4, Activation.NONE, 4, 1.0),
        (1, 20, 8, 2, 6, Activation.NONE, 5, 0.02),  # the state saturates at int16's bounds
    ],
)
def test_svdf_matches_tflm_across_invokes_and_reset(batches, input_size, units, rank, memory,
                                                    activation, seed, gain):
    rng = np.random.default_rng(seed)
    graph = svdf_graph(rng, batches, input_size, units, rank, memory, activation,
                       state_gain=gain)
    xs = [random_int8(rng, (batches, input_size)) for _ in range(INVOKES)]
    # the same first inputs after the reset: the outputs must repeat the first invokes'
    inputs = xs + xs[:2]
    ours = _reference_sequence(graph, inputs, INVOKES)
    if gain < 1:  # the case reaches the clamp of the newest state values
        state = reference.run(graph, [xs[0]]).state
        assert np.abs(np.concatenate([v.ravel() for v in state.values.values()])).max() == \
            32767 or np.min(np.concatenate([v.ravel() for v in state.values.values()])) == -32768
    theirs = _tflm_sequence(graph, inputs, INVOKES)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_array_equal(a, b.reshape(a.shape), err_msg=f"invoke {k}")
    np.testing.assert_array_equal(ours[INVOKES], ours[0])
    np.testing.assert_array_equal(ours[INVOKES + 1], ours[1])
    # the state matters: the same input twice in a row gives different outputs
    assert any(not np.array_equal(ours[k], ours[k + 1]) for k in range(INVOKES - 1)) or \
        any(not np.array_equal(ours[0], ours[k]) for k in range(1, INVOKES))


def test_svdf_without_bias_is_svdf_with_zero_bias():
    rng = np.random.default_rng(7)
    graph = svdf_graph(rng, 1, 12, 4, 2, 6, bias=True)
    op = graph.ops[0]
    t = graph.tensors[op.inputs[3]]
    tensors = list(graph.tensors)
    tensors[op.inputs[3]] = type(t)(t.name, t.shape, t.dtype, np.zeros_like(t.data), t.quant)
    zeroed = type(graph)(tuple(tensors), graph.ops, graph.inputs, graph.outputs)
    no_bias = type(op)(op.kind, (*op.inputs[:3], None, op.inputs[4]), op.outputs, op.options)
    without = type(graph)(graph.tensors, (no_bias,), graph.inputs, graph.outputs)
    s1 = s2 = None
    for _ in range(3):
        x = random_int8(rng, (1, 12))
        r1 = reference.run(zeroed, [x], state=s1)
        r2 = reference.run(without, [x], state=s2)
        np.testing.assert_array_equal(r1.outputs[0], r2.outputs[0])
        s1, s2 = r1.state, r2.state


def test_variable_flag_survives_write_and_read():
    graph = svdf_graph(np.random.default_rng(0), 1, 8, 4, 1, 3)
    back = read_model_bytes(write_model(graph))
    assert back.equals(graph)
    assert back.variable_tensors() == graph.variable_tensors() != []


def test_state_must_be_variable():
    graph = svdf_graph(np.random.default_rng(0), 1, 8, 4, 1, 3)
    index = graph.ops[0].inputs[4]
    t = graph.tensors[index]
    tensors = list(graph.tensors)
    tensors[index] = type(t)(t.name, t.shape, t.dtype, None, t.quant, is_variable=False)
    bad = type(graph)(tuple(tensors), graph.ops, graph.inputs, graph.outputs)
    with pytest.raises(ModelFormatError,
                       match=r"op 0 \(SVDF\).*(not a variable|before any op writes)"):
        check_graph(bad)


def _replace_tensor(graph, index, **changes):
    from dataclasses import replace

    tensors = list(graph.tensors)
    tensors[index] = replace(tensors[index], **changes)
    return replace(graph, tensors=tuple(tensors))


def test_quantization_tflm_refuses_is_refused_naming_op_and_tensor():
    from reference_single_op import q

    graph = svdf_graph(np.random.default_rng(0), 1, 8, 4, 1, 3)
    op = graph.ops[0]
    bad_bias = _replace_tensor(graph, op.inputs[3], quant=q(0.5))
    with pytest.raises(ModelFormatError, match=r"op 0 \(SVDF\).*bias 'svdf_b' has scale"):
        check_graph(bad_bias)
    state = graph.tensors[op.inputs[4]]
    bad_zp = _replace_tensor(graph, op.inputs[4], quant=q(float(state.quant.scale[0]), 5))
    with pytest.raises(ModelFormatError, match=r"op 0 \(SVDF\).*'svdf_state' has zero point 5"):
        check_graph(bad_zp)
    int8_state = _replace_tensor(graph, op.inputs[4], dtype=np.dtype(np.int8))
    with pytest.raises(ModelFormatError, match=r"op 0 \(SVDF\).*'svdf_state' is int8"):
        check_graph(int8_state)


def test_kws_svdf_model_matches_tflm_across_invokes_and_reset():
    """Two SVDFs, SOFTMAX int8 -> int16, QUANTIZE int16 -> int8 and int8 -> int16: every
    output of every invoke, the state reset before the fifth."""
    from tflite_micro.python.tflite_micro import runtime

    from svdf_graphs import kws_svdf_graph

    rng = np.random.default_rng(23)
    graph = kws_svdf_graph(rng)
    xs = [random_int8(rng, (1, 16)) for _ in range(INVOKES)]
    inputs = xs + xs[:2]
    interpreter = runtime.Interpreter.from_bytes(write_model(graph), arena_size=1 << 20)
    state = None
    for k, x in enumerate(inputs):
        if k == INVOKES:
            interpreter.reset()
            state = reference.initial_state(graph)
        result = reference.run(graph, [x], state=state)
        state = result.state
        interpreter.set_input(x, 0)
        interpreter.invoke()
        for j, ours in enumerate(result.outputs):
            theirs = np.array(interpreter.get_output(j))
            assert theirs.dtype == ours.dtype
            np.testing.assert_array_equal(ours, theirs.reshape(ours.shape),
                                          err_msg=f"invoke {k} output {j}")
    assert len({int(v) for v in result.outputs[1].ravel()}) > 1  # probabilities differ
