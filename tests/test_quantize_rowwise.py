"""A float graph with LOG_SOFTMAX, L2_NORMALIZATION, CUMSUM, SUM and REDUCE_MAX, quantized: the
fixed output quantizations TFLite Micro's kernels assume (16/256 and 127, 1/128 and 0), CUMSUM's
and SUM's from their ranges, REDUCE_MAX's its input's; the int8 graph runs bit-exact in TFLite
Micro and stays close to the float graph."""

from __future__ import annotations

import numpy as np

from test_quantize import _int8_inputs, assert_tflm_bit_exact
from test_quantize_elementwise_ops import assert_close_to_float
from tinyhost.ir import (
    CumsumOptions,
    FusedActivationOptions,
    Graph,
    NoOptions,
    Op,
    OpKind,
    ReducerOptions,
    Tensor,
)
from tinyhost.quantize import quantize_model

F32 = np.dtype(np.float32)
SHAPE = (1, 4, 8)


def _float_graph() -> Graph:
    tensors = [
        Tensor("x", SHAPE, F32), Tensor("log_softmax", SHAPE, F32),
        Tensor("l2norm", SHAPE, F32),
        Tensor("axis", (1,), np.dtype(np.int32), np.array([2], np.int32)),
        Tensor("cumsum", SHAPE, F32),
        Tensor("sum_axes", (1,), np.dtype(np.int32), np.array([1], np.int32)),
        Tensor("sum", (1, 8), F32),
        Tensor("max", (1, 8), F32),
    ]  # fmt: skip
    ops = [
        Op(OpKind.LOG_SOFTMAX, (0,), (1,), NoOptions()),
        Op(OpKind.L2_NORMALIZATION, (0,), (2,), FusedActivationOptions()),
        Op(OpKind.CUMSUM, (0, 3), (4,), CumsumOptions(exclusive=False, reverse=True)),
        Op(OpKind.SUM, (0, 5), (6,), ReducerOptions(keep_dims=False)),
        Op(OpKind.REDUCE_MAX, (0, 5), (7,), ReducerOptions(keep_dims=False)),
    ]
    return Graph(tuple(tensors), tuple(ops), (0,), (1, 2, 4, 6, 7), source="<rowwise>")


def test_quantized_rowwise_graph_is_bit_exact_and_close() -> None:
    graph = _float_graph()
    rng = np.random.default_rng(3)
    samples = [[rng.normal(0, 1.5, SHAPE).astype(np.float32)] for _ in range(16)]
    q = quantize_model(graph, samples)
    assert [op.kind for op in q.ops] == [op.kind for op in graph.ops]
    fixed = {"log_softmax": (0.0625, 127), "l2norm": (1 / 128, 0)}
    for name, (scale, zp) in fixed.items():
        t = next(t for t in q.tensors if t.name == name)
        assert (float(t.quant.scale[0]), int(t.quant.zero_point[0])) == (scale, zp)
    x_q, max_q = q.tensors[0].quant, q.tensors[7].quant  # REDUCE_MAX: one quantization
    assert (x_q.scale[0], x_q.zero_point[0]) == (max_q.scale[0], max_q.zero_point[0])
    assert_tflm_bit_exact(q, _int8_inputs(q, samples))
    # LOG_SOFTMAX saturates at -128 (-15.9): compared where the float value is above -15.
    assert_close_to_float(graph, q, samples[:4], floor=-15.0)
