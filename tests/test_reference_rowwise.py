"""LOG_SOFTMAX, L2_NORMALIZATION and CUMSUM (int8 and float32): the NumPy reference against
TFLite Micro over several shapes, quantizations, axes and options, and what TFLite Micro's
Prepare refuses refused naming the op and tensor.
"""

from __future__ import annotations

import numpy as np
import pytest

from reference_single_op import (
    F32,
    I8,
    I32,
    assert_matches_tflm,
    q,
    random_int8,
    run_reference,
    single_op_graph,
)
from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import (
    Activation,
    CumsumOptions,
    FusedActivationOptions,
    NoOptions,
    OpKind,
    ReducerOptions,
    Tensor,
)

LOG_SOFTMAX_OUT = q(16.0 / 256, 127)
SHAPES = [(1, 10), (3, 7), (2, 3, 33), (1, 2, 2, 64), (4, 1)]


def _unary(kind, options, shape, dtype, in_q=None, out_q=None):
    tensors = [Tensor("x", shape, dtype, quant=in_q), Tensor("y", shape, dtype, quant=out_q)]
    return single_op_graph(kind, options, tensors, [0], [1])


def _cumsum(shape, dtype, axis, exclusive, reverse, in_q=None, out_q=None):
    tensors = [
        Tensor("x", shape, dtype, quant=in_q),
        Tensor("axis", (1,), I32, data=np.array([axis], np.int32)),
        Tensor("y", shape, dtype, quant=out_q),
    ]
    return single_op_graph(OpKind.CUMSUM, CumsumOptions(exclusive, reverse), tensors, [0, 1], [2])


def _rows(rng, shape, spread):
    """int8 rows: uniform, narrow (differences within `spread`) or with one large peak."""
    x = random_int8(rng, shape)
    if spread < 256:
        base = rng.integers(-128, 128 - spread, size=shape[:-1] + (1,))
        x = (base + rng.integers(0, spread, size=shape)).astype(np.int8)
    return x


def test_log_softmax_int8_matches_tflm() -> None:
    rng = np.random.default_rng(50)
    for i, shape in enumerate(SHAPES * 3):
        scale = float(np.exp(rng.uniform(-6, 0.5)))
        graph = _unary(OpKind.LOG_SOFTMAX, NoOptions(), shape, I8,
                       q(scale, int(rng.integers(-128, 128))), LOG_SOFTMAX_OUT)  # fmt: skip
        x = _rows(rng, shape, (256, 8, 40)[i % 3])
        assert_matches_tflm(graph, [x])


def test_log_softmax_every_pair_of_a_two_wide_row() -> None:
    """Rows of two: every difference 0..255 at a fine and a coarse scale."""
    d = np.arange(256)
    x = np.stack([np.full(256, 127), 127 - d], axis=1).astype(np.int8)
    for scale in (0.01, 0.1, 0.5):
        graph = _unary(OpKind.LOG_SOFTMAX, NoOptions(), x.shape, I8, q(scale, 3), LOG_SOFTMAX_OUT)
        assert_matches_tflm(graph, [x])


def test_log_softmax_float_matches_tflm() -> None:
    rng = np.random.default_rng(51)
    x = rng.normal(0, 3, (3, 17)).astype(np.float32)
    assert_matches_tflm(_unary(OpKind.LOG_SOFTMAX, NoOptions(), x.shape, F32), [x])


@pytest.mark.parametrize("out_q", [q(0.0625, 0), q(1 / 256, 127)], ids=["zp0", "scale"])
def test_log_softmax_refuses_other_output_quantization(out_q) -> None:
    graph = _unary(OpKind.LOG_SOFTMAX, NoOptions(), (1, 8), I8, q(0.1, 0), out_q)
    with pytest.raises(UnsupportedModelError, match=r"LOG_SOFTMAX.*'y'.*16/256.*127"):
        run_reference(graph, [np.zeros((1, 8), np.int8)])


def test_l2norm_int8_matches_tflm() -> None:
    rng = np.random.default_rng(11)
    for i, shape in enumerate(SHAPES * 3):
        zp = int(rng.integers(-128, 128))
        graph = _unary(OpKind.L2_NORMALIZATION, FusedActivationOptions(), shape, I8,
                       q(float(np.exp(rng.uniform(-6, 0))), zp), q(1 / 128, 0))  # fmt: skip
        x = _rows(rng, shape, (256, 3, 40)[i % 3])
        if i % 5 == 0:
            x[..., :] = zp  # an all-zero row: TFLM's inverse sqrt of 0
        assert_matches_tflm(graph, [x])


def test_l2norm_float_matches_tflm() -> None:
    rng = np.random.default_rng(12)
    x = rng.normal(0, 2, (2, 3, 9)).astype(np.float32)
    assert_matches_tflm(_unary(OpKind.L2_NORMALIZATION, FusedActivationOptions(), x.shape, F32),
                        [x])  # fmt: skip


def test_l2norm_refuses_activation_and_five_dims() -> None:
    relu = _unary(OpKind.L2_NORMALIZATION, FusedActivationOptions(Activation.RELU), (1, 8), I8,
                  q(0.1, 0), q(1 / 128, 0))  # fmt: skip
    with pytest.raises(UnsupportedModelError, match=r"L2_NORMALIZATION.*RELU"):
        run_reference(relu, [np.zeros((1, 8), np.int8)])
    shape = (1, 1, 1, 2, 8)
    deep = _unary(OpKind.L2_NORMALIZATION, FusedActivationOptions(), shape, I8, q(0.1, 0),
                  q(1 / 128, 0))  # fmt: skip
    with pytest.raises(UnsupportedModelError, match=r"L2_NORMALIZATION.*'x' has 5 dims"):
        run_reference(deep, [np.zeros(shape, np.int8)])


CUMSUM_CASES = [
    ((1, 10), 1, False, False), ((3, 7), 0, True, False), ((2, 3, 33), -1, False, True),
    ((2, 3, 5), 1, True, True), ((1, 2, 2, 64), 3, False, False), ((4, 5, 6), -2, True, False),
]  # fmt: skip


@pytest.mark.parametrize("shape,axis,exclusive,reverse", CUMSUM_CASES)
def test_cumsum_int8_matches_tflm(shape, axis, exclusive, reverse) -> None:
    rng = np.random.default_rng(abs(hash((shape, axis))) % 1000)
    for _ in range(3):
        s_in = float(np.exp(rng.uniform(-5, 0)))
        s_out = s_in * float(np.exp(rng.uniform(0, 3)))
        graph = _cumsum(shape, I8, axis, exclusive, reverse,
                        q(s_in, int(rng.integers(-128, 128))),
                        q(s_out, int(rng.integers(-128, 128))))  # fmt: skip
        assert_matches_tflm(graph, [random_int8(rng, shape)])


def test_cumsum_long_scan_wraps_as_tflm() -> None:
    """A 300-long scan of large values overflows the int32 accumulator (scaled by 2**19)."""
    x = np.full((1, 300), 127, np.int8)
    graph = _cumsum(x.shape, I8, 1, False, False, q(0.05, -128), q(2.0, 0))
    assert_matches_tflm(graph, [x])


def test_cumsum_float_matches_tflm() -> None:
    rng = np.random.default_rng(128)
    x = rng.normal(0, 1, (3, 4, 5)).astype(np.float32)
    for axis, exclusive, reverse in ((0, False, True), (2, True, False), (-2, True, True)):
        assert_matches_tflm(_cumsum(x.shape, F32, axis, exclusive, reverse), [x])


def test_cumsum_refuses_bad_axis_and_output_scale() -> None:
    graph = _cumsum((2, 3), I8, 2, False, False, q(0.1, 0), q(0.1, 0))
    with pytest.raises(ModelFormatError, match=r"CUMSUM.*axis 2 out of range.*'x'"):
        run_reference(graph, [np.zeros((2, 3), np.int8)])
    tiny = _cumsum((2, 3), I8, 0, False, False, q(0.1, 0), q(1e-8, 0))
    with pytest.raises(UnsupportedModelError, match=r"CUMSUM.*'y' scale"):
        run_reference(tiny, [np.zeros((2, 3), np.int8)])


SUM_CASES = [((2, 3, 4), (1,), True), ((1, 5, 6, 8), (1, 2), False), ((3, 7), (-1,), True),
             ((2, 3, 4), (0, 2), False), ((4, 40), (1,), False)]  # fmt: skip


@pytest.mark.parametrize("shape,axes,keep", SUM_CASES)
def test_sum_int8_matches_tflm(shape, axes, keep) -> None:
    """SUM: MEAN's zero-point corrected sum, requantized without the 1/count fold."""
    rng = np.random.default_rng(len(shape) * 10 + len(axes))
    kept = [1 if i in {a % len(shape) for a in axes} else d for i, d in enumerate(shape)]
    out_shape = tuple(kept) if keep else tuple(
        d for i, d in enumerate(shape) if i not in {a % len(shape) for a in axes})
    for _ in range(4):
        s_in = float(np.exp(rng.uniform(-5, 0)))
        tensors = [Tensor("x", shape, I8, quant=q(s_in, int(rng.integers(-128, 128)))),
                   Tensor("axes", (len(axes),), I32, data=np.array(axes, np.int32)),
                   Tensor("y", out_shape, I8, quant=q(s_in * float(np.exp(rng.uniform(-1, 4))),
                                                      int(rng.integers(-128, 128))))]  # fmt: skip
        graph = single_op_graph(OpKind.SUM, ReducerOptions(keep), tensors, [0, 1], [2])
        assert_matches_tflm(graph, [random_int8(rng, shape)])


def test_sum_float_matches_tflm() -> None:
    rng = np.random.default_rng(74)
    x = rng.normal(0, 1, (2, 3, 4)).astype(np.float32)
    tensors = [Tensor("x", x.shape, F32), Tensor("axes", (1,), I32, data=np.array([1], np.int32)),
               Tensor("y", (2, 4), F32)]  # fmt: skip
    assert_matches_tflm(single_op_graph(OpKind.SUM, ReducerOptions(False), tensors, [0, 1], [2]),
                        [x])  # fmt: skip


@pytest.mark.parametrize("shape,axes,keep", SUM_CASES)
def test_reduce_max_int8_matches_tflm(shape, axes, keep) -> None:
    """REDUCE_MAX: the raw maximum; input and output share one quantization."""
    rng = np.random.default_rng(82 + len(shape))
    reduced = {a % len(shape) for a in axes}
    out_shape = tuple(1 if i in reduced else d for i, d in enumerate(shape)) if keep else tuple(
        d for i, d in enumerate(shape) if i not in reduced)
    quant = q(0.05, int(rng.integers(-128, 128)))
    tensors = [Tensor("x", shape, I8, quant=quant),
               Tensor("axes", (len(axes),), I32, data=np.array(axes, np.int32)),
               Tensor("y", out_shape, I8, quant=quant)]  # fmt: skip
    graph = single_op_graph(OpKind.REDUCE_MAX, ReducerOptions(keep), tensors, [0, 1], [2])
    assert_matches_tflm(graph, [random_int8(rng, shape)])
    assert_matches_tflm(graph, [np.full(shape, -128, np.int8)])


def test_reduce_max_refuses_a_rescale() -> None:
    for out_q in (q(0.05, 4), q(0.1, 3)):  # TFLM's Eval fails on either difference
        tensors = [Tensor("x", (2, 3), I8, quant=q(0.05, 3)),
                   Tensor("axes", (1,), I32, data=np.array([1], np.int32)),
                   Tensor("y", (2,), I8, quant=out_q)]  # fmt: skip
        graph = single_op_graph(OpKind.REDUCE_MAX, ReducerOptions(False), tensors, [0, 1], [2])
        with pytest.raises(UnsupportedModelError, match=r"REDUCE_MAX.*'y' must share.*'x'"):
            run_reference(graph, [np.zeros((2, 3), np.int8)])


def test_reduce_max_float_matches_tflm() -> None:
    x = np.random.default_rng(83).normal(0, 1, (2, 3, 4)).astype(np.float32)
    tensors = [Tensor("x", x.shape, F32),
               Tensor("axes", (2,), I32, data=np.array([0, 2], np.int32)),
               Tensor("y", (1, 3, 1), F32)]  # fmt: skip
    assert_matches_tflm(single_op_graph(OpKind.REDUCE_MAX, ReducerOptions(True), tensors, [0, 1],
                                        [2]), [x])  # fmt: skip
