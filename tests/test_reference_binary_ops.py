"""MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU, DIV (int8 and float32): the NumPy reference
against TFLite Micro, bit for bit for int8.

Random broadcast shapes (same shape, [C] and [1, 1, 1, C] against [N, H, W, C], scalars,
both inputs broadcasting, ranks 1-4), scales and zero points; MAXIMUM / MINIMUM also with
quantizations that differ (TFLM compares raw values whatever they are); PRELU with
per-channel and scalar alpha; DIV over every pair of int8 values (zero divisors included:
their result is the oracle's) with each fused activation.
"""

from __future__ import annotations

import numpy as np
import pytest

from reference_single_op import F32, I8, assert_matches_tflm, q, random_int8, single_op_graph
from tinyhost.errors import ModelFormatError
from tinyhost.ir import Activation, FusedActivationOptions, NoOptions, OpKind, Tensor
from tinyhost.passes.validate import check_graph

KINDS = [OpKind.MAXIMUM, OpKind.MINIMUM, OpKind.SQUARED_DIFFERENCE, OpKind.PRELU, OpKind.DIV]
SHAPES = [
    ((1, 4, 4, 3), (1, 4, 4, 3)),
    ((1, 4, 4, 3), (3,)),
    ((1, 4, 4, 3), (1, 1, 1, 3)),
    ((1, 1, 1, 3), (1, 4, 4, 3)),
    ((2, 3), (1,)),
    ((5, 1, 3), (1, 4, 1)),
    ((1, 4, 4, 3), (1, 4, 1, 1)),
    ((7,), (7,)),
]


def _graph(kind, shapes, dtype, quants=(None, None, None), activation=Activation.NONE):
    out = tuple(np.broadcast_shapes(*shapes))
    tensors = [Tensor(name, shape, dtype, quant=qq)
               for name, shape, qq in zip(("a", "b", "y"), (*shapes, out), quants)]  # fmt: skip
    options = FusedActivationOptions(activation) if kind is OpKind.DIV else NoOptions()
    return single_op_graph(kind, options, tensors, [0, 1], [2])


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_int8_matches_tflm(kind: OpKind) -> None:
    rng = np.random.default_rng(kind.value)
    for trial in range(40):
        shapes = SHAPES[trial % len(SHAPES)]
        if kind is OpKind.PRELU and trial % 3 == 0:
            shapes = (shapes[0], (shapes[0][-1],))  # per-channel alpha
        if kind is OpKind.PRELU and trial % 3 == 1:
            shapes = (shapes[0], (1,))  # one alpha
        s = [float(np.exp(rng.uniform(-6, 1))) for _ in range(3)]
        z = [int(rng.integers(-128, 128)) for _ in range(3)]
        if kind in (OpKind.MAXIMUM, OpKind.MINIMUM) and trial % 2 == 0:
            s, z = [s[0]] * 3, [z[0]] * 3  # what the converter writes
        graph = _graph(kind, shapes, I8, [q(si, zi) for si, zi in zip(s, z)])
        assert_matches_tflm(graph, [random_int8(rng, shapes[0]), random_int8(rng, shapes[1])])


def test_div_every_pair_matches_tflm() -> None:
    a = np.repeat(np.arange(-128, 128), 256).astype(np.int8).reshape(1, -1)
    b = np.tile(np.arange(-128, 128), 256).astype(np.int8).reshape(1, -1)
    rng = np.random.default_rng(42)
    activations = [Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1]
    for trial in range(8):
        s = [float(np.exp(rng.uniform(-6, 1))) for _ in range(3)]
        z = [int(rng.integers(-128, 128)) for _ in range(3)]
        graph = _graph(OpKind.DIV, (a.shape, b.shape), I8, [q(si, zi) for si, zi in zip(s, z)],
                       activations[trial % 4])  # fmt: skip
        assert_matches_tflm(graph, [a, b])
    # Decimal scales whose ratio s1 / (s2 * s_out) is a short decimal (2.5, 0.4, 2/3): many
    # quotients land on exact ties, where how the ratio is computed decides the rounding.
    for s, z in [((0.03, 0.04, 0.3), (-128, 7, 0)), ((0.02, 0.05, 1.0), (3, -9, 4)),
                 ((0.1, 0.3, 0.5), (0, 0, -2))]:
        graph = _graph(OpKind.DIV, (a.shape, b.shape), I8, [q(si, zi) for si, zi in zip(s, z)])
        assert_matches_tflm(graph, [a, b])


def test_squared_difference_extreme_inputs_match_tflm() -> None:
    """The largest differences (255 apart) over a range of scales: the int32 square and the
    output multiplier's left shifts."""
    a = np.array([[-128, 127, -128, 127, 0, 5]], np.int8)
    b = np.array([[127, -128, -128, 127, 0, -5]], np.int8)
    for s1, s2, so in [(1.0, 1.0, 0.001), (0.001, 1.0, 1.0), (0.5, 0.25, 100.0), (2.0, 2.0, 1.0)]:
        for z1, z2, zo in [(-128, 127, -128), (0, 0, 0), (127, -128, 127)]:
            graph = _graph(OpKind.SQUARED_DIFFERENCE, ((1, 6), (1, 6)), I8,
                           [q(s1, z1), q(s2, z2), q(so, zo)])  # fmt: skip
            assert_matches_tflm(graph, [a, b])


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_float_matches_tflm(kind: OpKind) -> None:
    rng = np.random.default_rng(11)
    for shapes in SHAPES[:4]:
        if kind is OpKind.PRELU:
            shapes = (shapes[0], (shapes[0][-1],))
        graph = _graph(kind, shapes, F32, activation=Activation.RELU6)
        x = [rng.normal(0, 2, s).astype(np.float32) for s in shapes]
        assert_matches_tflm(graph, x)


def test_prelu_per_channel_quantized_alpha_is_refused() -> None:
    """TFLM would read only the first scale of a per-channel alpha: refused, naming it."""
    tensors = [Tensor("x", (1, 2, 2, 3), I8, quant=q(0.1, 0)),
               Tensor("alpha", (3,), I8, data=np.array([1, -2, 3], np.int8),
                      quant=q([0.1, 0.2, 0.3], 0, axis=0)),
               Tensor("y", (1, 2, 2, 3), I8, quant=q(0.1, 0))]  # fmt: skip
    graph = single_op_graph(OpKind.PRELU, NoOptions(), tensors, [0, 1], [2])
    from reference_single_op import run_reference

    with pytest.raises(ModelFormatError, match="PRELU.*'alpha' is quantized per channel"):
        run_reference(graph, [np.zeros((1, 2, 2, 3), np.int8)])


def test_broadcast_over_tflm_rank_limit_is_refused() -> None:
    graph = _graph(OpKind.SQUARED_DIFFERENCE, ((2, 1, 3, 1, 2), (1, 2, 1, 4, 1)), I8,
                   [q(0.1, 0), q(0.1, 0), q(0.1, 0)])  # fmt: skip
    with pytest.raises(ModelFormatError, match="at most 4"):
        check_graph(graph)
