"""A float graph with ABS, RSQRT, ELU, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU, DIV, FILL,
quantized: MAXIMUM / MINIMUM share one quantization with their inputs (constants too),
PRELU's constant alpha and the other constants become int8; the int8 graph runs bit-exact
in TFLite Micro and stays close to the float graph."""

from __future__ import annotations

import numpy as np

from test_quantize import _int8_inputs, assert_tflm_bit_exact
from tinyhost import reference
from tinyhost.ir import FusedActivationOptions, Graph, NoOptions, Op, OpKind, Tensor
from tinyhost.quantize import quantize_model

F32 = np.dtype(np.float32)


def _t(name, shape, data=None) -> Tensor:
    return Tensor(name, tuple(shape), F32, None if data is None else np.asarray(data, F32))


def _float_graph() -> Graph:
    c = 4
    tensors = [
        _t("x", (1, 3, 3, c)), _t("abs", (1, 3, 3, c)), _t("rsqrt", (1, 3, 3, c)),
        _t("elu", (1, 3, 3, c)), _t("floor", (c,), [-0.5, 0.0, 0.25, -1.0]),
        _t("max", (1, 3, 3, c)), _t("min", (1, 3, 3, c)), _t("sqdiff", (1, 3, 3, c)),
        _t("alpha", (c,), [0.1, -0.2, 0.3, 0.05]), _t("prelu", (1, 3, 3, c)),
        _t("divisor", (c,), [0.5, 1.0, 2.0, 4.0]), _t("div", (1, 3, 3, c)),
        Tensor("dims", (2,), np.dtype(np.int32), np.array([2, 3], np.int32)),
        _t("value", (), 0.75), _t("fill", (2, 3)),
    ]  # fmt: skip
    ops = [
        Op(OpKind.ABS, (0,), (1,), NoOptions()),
        Op(OpKind.RSQRT, (1,), (2,), NoOptions()),
        Op(OpKind.ELU, (0,), (3,), NoOptions()),
        Op(OpKind.MAXIMUM, (3, 4), (5,), NoOptions()),
        Op(OpKind.MINIMUM, (5, 1), (6,), NoOptions()),
        Op(OpKind.SQUARED_DIFFERENCE, (6, 0), (7,), NoOptions()),
        Op(OpKind.PRELU, (7, 8), (9,), NoOptions()),
        Op(OpKind.DIV, (9, 10), (11,), FusedActivationOptions()),
        Op(OpKind.FILL, (12, 13), (14,), NoOptions()),
    ]
    return Graph(tuple(tensors), tuple(ops), (0,), (2, 11, 14), source="<elementwise>")


def test_quantized_elementwise_graph_is_bit_exact_and_close() -> None:
    graph = _float_graph()
    rng = np.random.default_rng(2)
    # |x| >= 0.5 keeps RSQRT's input away from 0, where its float value is unbounded.
    samples = [[(rng.choice([-1, 1], (1, 3, 3, 4)) * rng.uniform(0.5, 2.0, (1, 3, 3, 4)))
                .astype(np.float32)] for _ in range(16)]  # fmt: skip
    q = quantize_model(graph, samples)
    assert [op.kind for op in q.ops] == [op.kind for op in graph.ops]
    for op in q.ops:
        if op.kind in (OpKind.MAXIMUM, OpKind.MINIMUM):
            quants = {(float(q.tensors[i].quant.scale[0]), int(q.tensors[i].quant.zero_point[0]))
                      for i in (*op.inputs, *op.outputs)}  # fmt: skip
            assert len(quants) == 1, f"{op.name} tensors quantized differently: {quants}"
        for i in op.inputs[1:] if op.kind is OpKind.FILL else op.inputs:  # FILL: int32 dims
            assert q.tensors[i].dtype == np.int8
    assert_tflm_bit_exact(q, _int8_inputs(q, samples))
    assert_close_to_float(graph, q, samples[:4])


def assert_close_to_float(graph: Graph, q: Graph, samples, floor: float | None = None) -> None:
    """Each dequantized output within 10% of its float output's span (where the float value
    is above `floor`, if given: a saturating fixed output range)."""
    for sample in samples:
        want = reference.run(graph, sample).outputs
        got = reference.run(q, [reference.prepare_inputs(q, sample)[0]]).outputs
        for k, (w, g) in enumerate(zip(want, got)):
            t = q.tensors[q.outputs[k]]
            s, z = float(t.quant.scale[0]), int(t.quant.zero_point[0])
            real = (g.astype(np.float64) - z) * s
            close = np.ones(w.shape, bool) if floor is None else w > floor
            span = max(float(np.max(w) - np.min(w)), float(np.max(np.abs(w))))
            error = np.max(np.abs(real - w)[close])
            assert error < 0.1 * span, (t.name, error)
