"""ABS, RSQRT, ELU (int8 and float32), ZEROS_LIKE and FILL: the NumPy reference against
TFLite Micro.

Every int8 input value (the device runs these ops as 256-entry tables made from the
reference) over several input/output scales and zero points, equal scales included (ABS
skips its rescale then); RSQRT only where TFLite Micro accepts the input (not below the
zero point), and the reference refuses the rest as TFLite Micro does.
"""

from __future__ import annotations

import numpy as np
import pytest

from reference_single_op import (
    F32,
    I8,
    assert_matches_tflm,
    q,
    run_reference,
    run_tflm,
    single_op_graph,
)
from tinyhost.codegen.lut import apply_table, op_table
from tinyhost.errors import InputDataError
from tinyhost.ir import NoOptions, OpKind, Tensor

UNARY = [OpKind.ABS, OpKind.RSQRT, OpKind.ELU]
ALL_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)


def _graph(kind: OpKind, dtype: np.dtype, in_q=None, out_q=None, shape=(1, 256)):
    tensors = [Tensor("x", shape, dtype, quant=in_q), Tensor("y", shape, dtype, quant=out_q)]
    return single_op_graph(kind, NoOptions(), tensors, [0], [1])


def _quantizations(seed: int, n: int):
    rng = np.random.default_rng(seed)
    for i in range(n):
        s_in = float(np.exp(rng.uniform(-7, 1)))
        s_out = s_in if i % 4 == 0 else float(np.exp(rng.uniform(-7, 1)))
        yield s_in, int(rng.integers(-128, 128)), s_out, int(rng.integers(-128, 128))


@pytest.mark.parametrize("kind", UNARY, ids=lambda k: k.name)
def test_int8_every_value_matches_tflm(kind: OpKind) -> None:
    for s_in, z_in, s_out, z_out in _quantizations(kind.value, 24):
        graph = _graph(kind, I8, q(s_in, z_in), q(s_out, z_out))
        x = ALL_INT8 if kind is not OpKind.RSQRT else np.maximum(ALL_INT8, z_in).astype(np.int8)
        ours = assert_matches_tflm(graph, [x])[0]
        # The device's table gives the same values (it is made from the reference).
        np.testing.assert_array_equal(apply_table(op_table(graph, graph.ops[0]), x), ours)


def test_int8_corner_quantizations_match_tflm() -> None:
    """Zero points at the ends of int8, tiny and large scale ratios."""
    cases = [(1.0, -128, 1.0, 127), (0.001, 127, 0.5, -128), (0.5, 0, 0.001, 0),
             (2.0 ** -10, -128, 2.0 ** -3, -128), (0.25, 5, 0.25, 5)]  # fmt: skip
    for kind in UNARY:
        for s_in, z_in, s_out, z_out in cases:
            graph = _graph(kind, I8, q(s_in, z_in), q(s_out, z_out))
            x = ALL_INT8 if kind is not OpKind.RSQRT else np.maximum(ALL_INT8, z_in).astype(np.int8)
            assert_matches_tflm(graph, [x])


def test_int8_shapes_match_tflm() -> None:
    rng = np.random.default_rng(7)
    for kind in UNARY:
        for shape in [(3,), (2, 5, 7), (1, 4, 4, 6)]:
            graph = _graph(kind, I8, q(0.03, -20), q(0.05, 10), shape)
            x = rng.integers(-20 if kind is OpKind.RSQRT else -128, 128, shape).astype(np.int8)
            assert_matches_tflm(graph, [x])


def test_rsqrt_of_a_negative_value_is_refused_like_tflm() -> None:
    graph = _graph(OpKind.RSQRT, I8, q(0.1, 3), q(0.1, 0), (1, 4))
    x = np.array([[3, 4, 2, 100]], np.int8)  # 2 < zero point 3: a negative value
    with pytest.raises(RuntimeError):
        run_tflm(graph, [x])
    with pytest.raises(InputDataError, match="RSQRT of a negative value"):
        run_reference(graph, [x])


@pytest.mark.parametrize("kind", UNARY, ids=lambda k: k.name)
def test_float_matches_tflm(kind: OpKind) -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(0, 3, (2, 50)).astype(np.float32)
    if kind is OpKind.RSQRT:
        x = np.abs(x) + np.float32(0.01)
    assert_matches_tflm(_graph(kind, F32, shape=(2, 50)), [x])


def test_zeros_like_matches_tflm() -> None:
    """Raw zeros of the output type, whatever the quantization (zero point 5 here)."""
    rng = np.random.default_rng(1)
    x8 = rng.integers(-128, 128, (2, 3, 4)).astype(np.int8)
    graph = _graph(OpKind.ZEROS_LIKE, I8, q(0.1, 5), q(0.1, 5), (2, 3, 4))
    ours = assert_matches_tflm(graph, [x8])[0]
    assert not ours.any()
    np.testing.assert_array_equal(apply_table(op_table(graph, graph.ops[0]), x8), ours)
    assert_matches_tflm(_graph(OpKind.ZEROS_LIKE, F32, shape=(5,)),
                        [rng.normal(size=5).astype(np.float32)])


def test_fill_matches_tflm() -> None:
    """The raw value whatever the quantizations, a constant value or an input."""
    for value in (np.array(-7, np.int8), None):
        tensors = [Tensor("dims", (3,), np.dtype(np.int32), data=np.array([2, 3, 4], np.int32)),
                   Tensor("v", (), I8, data=value, quant=q(0.1, 3)),
                   Tensor("y", (2, 3, 4), I8, quant=q(0.2, -1))]  # fmt: skip
        graph = single_op_graph(OpKind.FILL, NoOptions(), tensors, [0, 1], [2])
        fed = [] if value is not None else [np.array(5, np.int8)]
        ours = assert_matches_tflm(graph, fed)[0]
        assert np.all(ours == (-7 if value is not None else 5))
    tensors = [Tensor("dims", (2,), np.dtype(np.int32), data=np.array([3, 2], np.int32)),
               Tensor("v", (), F32, data=np.array(1.5, np.float32)), Tensor("y", (3, 2), F32)]
    assert_matches_tflm(single_op_graph(OpKind.FILL, NoOptions(), tensors, [0, 1], [2]), [])
