"""UNIDIRECTIONAL_SEQUENCE_LSTM (int8, int16 cell state): the reference against TFLite Micro
over consecutive invokes, both states carried from one to the next, then reset; options
through the writer and reader; the variants TFLM refuses, refused by validation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from lstm_graphs import lstm_graph
from reference_single_op import q, random_int8
from test_reference_svdf import _reference_sequence, _tflm_sequence
from tinyhost import reference
from tinyhost.errors import ModelFormatError
from tinyhost.ir import Activation, Op, SequenceLSTMOptions, Tensor
from tinyhost.passes.validate import check_graph
from tinyhost.tflite.reader import read_model_bytes
from tinyhost.tflite.writer import write_model

INVOKES = 3


@pytest.mark.parametrize(
    "batches,steps,input_size,state,time_major,clip,power,gain,seed",
    [
        (1, 6, 5, 8, False, 0.0, -11, 1.0, 0),
        (2, 4, 7, 6, False, 0.0, -11, 1.0, 1),
        (3, 3, 4, 5, True, 0.0, -12, 1.0, 2),
        (2, 5, 6, 9, False, 0.75, -11, 1.0, 3),  # cell clip
        (1, 8, 10, 12, False, 0.0, -15, 3.0, 4),  # fine cell scale: tanh's shift is negative
        (2, 4, 3, 4, True, 0.0, -9, 6.0, 5),  # coarse cell scale, gates saturate
    ],
)
def test_lstm_matches_tflm_across_invokes_and_reset(batches, steps, input_size, state,
                                                    time_major, clip, power, gain, seed):
    rng = np.random.default_rng(seed)
    graph = lstm_graph(rng, batches, steps, input_size, state, time_major, clip, power, gain)
    xs = [random_int8(rng, graph.tensors[0].shape) for _ in range(INVOKES)]
    inputs = xs + xs[:2]  # after the reset, the first inputs again: the same outputs
    ours = _reference_sequence(graph, inputs, INVOKES)
    theirs = _tflm_sequence(graph, inputs, INVOKES)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_array_equal(a, b.reshape(a.shape), err_msg=f"invoke {k}")
    np.testing.assert_array_equal(ours[INVOKES], ours[0])
    np.testing.assert_array_equal(ours[INVOKES + 1], ours[1])
    # the state is carried: the second invoke differs from a fresh run of its input
    fresh = reference.run(graph, [xs[1]]).outputs[0]
    assert not np.array_equal(fresh, ours[1])
    # the outputs spread over the int8 range (the activations' tables are exercised)
    assert int(np.ptp(np.concatenate([o.ravel() for o in ours]).astype(int))) > 100
    if clip:
        cell = reference.run(graph, [xs[0]]).state.values[graph.ops[0].inputs[19]]
        assert np.abs(cell.astype(int)).max() == int(clip / 2.0**power)


def test_lstm_options_round_trip():
    graph = lstm_graph(np.random.default_rng(7), 2, 3, 4, 5, time_major=True, cell_clip=2.5)
    again = read_model_bytes(write_model(graph), "lstm.tflite")
    op = again.ops[0]
    assert op.options == SequenceLSTMOptions(Activation.TANH, 2.5, 0.0, True, False)
    assert [i is None for i in op.inputs] == [i is None for i in graph.ops[0].inputs]
    assert [again.tensors[i].is_variable for i in op.inputs[18:20]] == [True, True]


def _with_inputs(graph, changes: dict[int, int | None], extra: list[Tensor] = ()):
    op = graph.ops[0]
    ins = list(op.inputs)
    for k, v in changes.items():
        ins[k] = v
    tensors = (*graph.tensors, *extra)
    return dataclasses.replace(graph, tensors=tensors,
                               ops=(Op(op.kind, tuple(ins), op.outputs, op.options),))


@pytest.mark.parametrize(
    "what,match",
    [
        ("peephole", "peephole"),
        ("projection", "projection"),
        ("layer_norm", "layer norm"),
        ("cifg", "CIFG"),
        ("cell_scale", "power of two"),
        ("activation", "TANH"),
        ("not_variable", "lstm_h"),  # then read before written
    ],
)
def test_lstm_variants_tflm_refuses_are_refused(what, match):
    graph = lstm_graph(np.random.default_rng(8), 1, 2, 3, 4)
    n = len(graph.tensors)
    vec = Tensor("extra", (4,), np.dtype(np.int16), np.zeros(4, np.int16), q(0.01))
    mat = Tensor("proj", (4, 4), np.dtype(np.int8), np.zeros((4, 4), np.int8), q(0.01))
    if what == "peephole":
        graph = _with_inputs(graph, {10: n}, [vec])
    elif what == "projection":
        graph = _with_inputs(graph, {16: n}, [mat])
    elif what == "layer_norm":
        graph = _with_inputs(graph, {21: n}, [vec])
    elif what == "cifg":
        graph = _with_inputs(graph, {1: None, 5: None})
    else:
        op = graph.ops[0]
        tensors = list(graph.tensors)
        if what == "cell_scale":
            tensors[op.inputs[19]] = dataclasses.replace(tensors[op.inputs[19]], quant=q(0.001))
        elif what == "not_variable":
            tensors[op.inputs[18]] = dataclasses.replace(tensors[op.inputs[18]],
                                                         is_variable=False)
        else:
            op = Op(op.kind, op.inputs, op.outputs, SequenceLSTMOptions(Activation.RELU))
        graph = dataclasses.replace(graph, tensors=tuple(tensors), ops=(op,))
    with pytest.raises(ModelFormatError, match=match) as e:
        check_graph(graph)
    assert "UNIDIRECTIONAL_SEQUENCE_LSTM" in str(e.value)
