"""The quantizer on issue 17's data movement: a float32 graph with EXPAND_DIMS, SPLIT,
SPLIT_V, PACK, UNPACK, GATHER, DEPTH_TO_SPACE, SPACE_TO_DEPTH, the resizes, ARG_MAX and
ARG_MIN (and BATCH_MATMUL, its constant RHS quantized per tensor) becomes an int8 graph in
which every moved tensor shares its input's quantization (TFLM copies raw values), ARG_MAX /
ARG_MIN outputs stay int32, every tensor runs bit-exact in TFLite Micro, and both backends can
lower it."""

from __future__ import annotations

import dataclasses

import numpy as np

from test_movement_on_device import movement_graph
from test_quantize import _int8_inputs, assert_tflm_bit_exact
from tinyhost.codegen.lower import lower_graph
from tinyhost.quantize import QuantizeOptions, quantize_model, random_calibration_data


def _float(graph):
    def f(t):
        if t.dtype != np.int8:
            return t
        data = None if t.data is None else (t.data * t.quant.scale[0]).astype(np.float32)
        return dataclasses.replace(t, dtype=np.dtype(np.float32), data=data, quant=None)

    return dataclasses.replace(graph, tensors=tuple(f(t) for t in graph.tensors))


def test_movement_graph_quantizes_to_shared_scales_and_runs_bit_exact() -> None:
    graph = _float(movement_graph())
    samples = random_calibration_data(graph, 4)
    q = quantize_model(graph, samples)
    int8 = [t for t in q.tensors if t.data is None and t.dtype == np.int8
            and not t.name.startswith("matmul")]  # fmt: skip
    assert len(int8) > 10 and all(t.quant.equals(int8[0].quant) for t in int8)
    indices = [t for t in q.tensors if t.name in ("argmax", "argmin")]
    assert [t.dtype for t in indices] == [np.dtype(np.int32)] * 2
    assert_tflm_bit_exact(q, _int8_inputs(q, samples))
    assert len(lower_graph(q)) == len(q.ops)


def test_float_io_leaves_the_int32_outputs_alone() -> None:
    graph = _float(movement_graph())
    q = quantize_model(graph, random_calibration_data(graph, 2), QuantizeOptions(int8_io=False))
    outs = {q.tensors[i].name: q.tensors[i].dtype for i in q.outputs}
    assert outs["argmax"] == np.int32 and outs["bilinear"] == np.float32
