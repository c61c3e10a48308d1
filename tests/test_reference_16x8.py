"""16x8 FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D (int16 activations, int8 weights,
int64 bias) and int16 ADD / SUB / MUL: the NumPy reference against TFLite Micro, bit for bit, and
the quantizations refused (16x8 zero points, int32 bias; int16 MUL zero points, which TFLM
refuses too) with the op and tensor named."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from graphs_16x8 import conv_16x8, fc_16x8, int16_input
from reference_single_op import assert_matches_tflm, q, run_reference, single_op_graph
from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import (
    Activation,
    FusedActivationOptions,
    OpKind,
    Padding,
    SoftmaxOptions,
    Tensor,
)
from tinyhost.passes.validate import check_graph


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("per_channel", [True, False])
@pytest.mark.parametrize("act", [Activation.NONE, Activation.RELU, Activation.RELU6])
def test_fc_16x8_matches_tflm(bias, per_channel, act):
    rng = np.random.default_rng(hash((bias, per_channel, act.value)) % 2**32)
    for batches, depth, units in ((1, 7, 5), (3, 33, 10), (2, 200, 3)):
        g = fc_16x8(rng, batches, depth, units, bias=bias, per_channel=per_channel, act=act,
                    out_scale=0.05 if act is not Activation.RELU6 else 0.0005)
        assert_matches_tflm(g, [int16_input(rng, g)])


@pytest.mark.parametrize("depthwise", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_conv_16x8_matches_tflm(depthwise, bias):
    rng = np.random.default_rng(7 + depthwise * 2 + bias)
    cases = [((1, 6, 5, 3), 6, (3, 3), 1, Padding.SAME, Activation.NONE, 1),
             ((2, 7, 7, 4), 4, (3, 2), 2, Padding.VALID, Activation.RELU, 1),
             ((1, 9, 8, 2), 4, (3, 3), 1, Padding.SAME, Activation.RELU6, 2),
             ((1, 5, 5, 8), 8, (1, 1), 1, Padding.VALID, Activation.NONE, 1)]
    for shape, cout, kernel, stride, pad, act, dil in cases:
        for per_channel in (True, False):
            g = conv_16x8(rng, shape, cout, kernel, depthwise=depthwise, stride=stride,
                          padding=pad, bias=bias, per_channel=per_channel, act=act,
                          dilation=dil, out_scale=0.02 if act is not Activation.RELU6 else 1e-3)
            if depthwise and not bias:  # TFLM's kernel dereferences the absent bias
                with pytest.raises(UnsupportedModelError, match="without bias"):
                    run_reference(g, [int16_input(rng, g)])
                continue
            assert_matches_tflm(g, [int16_input(rng, g)])


def test_16x8_saturates_and_large_biases():
    """Outputs at both int16 bounds, and biases near 2**40 through the int64 requantization."""
    rng = np.random.default_rng(3)
    g = fc_16x8(rng, 4, 64, 8, out_scale=0.001)
    b = g.tensors[2]
    big = dataclasses.replace(b, data=rng.integers(-(1 << 40), 1 << 40, 8).astype(np.int64))
    g = dataclasses.replace(g, tensors=(*g.tensors[:2], big, g.tensors[3]))
    y = assert_matches_tflm(g, [int16_input(rng, g)])[0]
    assert (y == 32767).any() and (y == -32768).any()


@pytest.mark.parametrize("what", ["input_zp", "output_zp", "int32_bias"])
def test_16x8_refuses_what_it_does_not_reproduce(what):
    rng = np.random.default_rng(1)
    bias_dtype = np.dtype(np.int32 if what == "int32_bias" else np.int64)
    g = fc_16x8(rng, 1, 4, 2, bias_dtype=bias_dtype)
    if what != "int32_bias":
        k = 0 if what == "input_zp" else 3
        t = dataclasses.replace(g.tensors[k], quant=q(0.01, 5))
        g = dataclasses.replace(g, tensors=tuple(t if i == k else x
                                                 for i, x in enumerate(g.tensors)))
    with pytest.raises(UnsupportedModelError, match="'x'|'y'|'b'") as e:
        run_reference(g, [int16_input(rng, g)])
    assert "16x8" in str(e.value)


def _binary16(kind, shapes, zps, act, rng):
    i16 = np.dtype(np.int16)
    s1, s2 = rng.uniform(1e-4, 1e-2, 2)
    so = (s1 + s2) * rng.uniform(0.3, 3) if kind is not OpKind.MUL else (
        s1 * s2 * 30000 * rng.uniform(0.1, 3))
    if act is Activation.RELU6:
        so = 6 / 20000
    ts = [Tensor("a", shapes[0], i16, quant=q(s1, zps[0])),
          Tensor("b", shapes[1], i16, quant=q(s2, zps[1])),
          Tensor("y", shapes[0], i16, quant=q(so, zps[2]))]
    g = single_op_graph(kind, FusedActivationOptions(act), ts, [0, 1], [2])
    a = rng.integers(-32768, 32768, shapes[0]).astype(np.int16)
    b = rng.integers(-32768, 32768, shapes[1]).astype(np.int16)
    return g, [a, b]


@pytest.mark.parametrize("kind", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("act", [Activation.NONE, Activation.RELU, Activation.RELU6])
def test_add_sub_mul_int16_match_tflm(kind, act):
    rng = np.random.default_rng(len(kind) * 10 + act.value + (kind == "SUB"))
    zero_points = [(0, 0, 0), (5, -7, 3)] if kind != "MUL" else [(0, 0, 0)]
    for zps in zero_points:
        for shapes in (((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (1, 1, 4)), ((5,), ())):
            for _ in range(3):
                g, xs = _binary16(OpKind[kind], shapes, zps, act, rng)
                assert_matches_tflm(g, xs)


def test_int16_mul_with_a_zero_point_is_refused():
    """TFLite Micro's MulPrepare refuses int16 zero points; validation names the tensor."""
    g, _ = _binary16(OpKind.MUL, ((4,), (4,)), (0, 5, 0), Activation.NONE,
                     np.random.default_rng(0))
    with pytest.raises(ModelFormatError, match="'b' has zero point 5"):
        check_graph(g)


@pytest.mark.parametrize("scale", [1e-3, 3e-4, 1 / 4096, 0.01, 2e-6])
def test_softmax_int16_matches_tflm(scale):
    """int16 -> int16 SOFTMAX (its float32-generated tables included), rows of 1 to 1000."""
    rng = np.random.default_rng(int(scale * 1e6))
    i16 = np.dtype(np.int16)
    for beta in (1.0, 0.5):
        for shape in ((4, 10), (1, 1000), (2, 3, 7), (1, 1)):
            ts = [Tensor("x", shape, i16, quant=q(scale)),
                  Tensor("y", shape, i16, quant=q(1 / 32768))]
            g = single_op_graph(OpKind.SOFTMAX, SoftmaxOptions(beta), ts, [0], [1])
            x = rng.integers(-32768, 32768, shape).astype(np.int16)
            y = assert_matches_tflm(g, [x])[0]
            assert y.max() > 0


def test_softmax_int16_output_quantization_is_checked():
    i16 = np.dtype(np.int16)
    ts = [Tensor("x", (1, 4), i16, quant=q(1e-3)), Tensor("y", (1, 4), i16, quant=q(1 / 256))]
    g = single_op_graph(OpKind.SOFTMAX, SoftmaxOptions(1.0), ts, [0], [1])
    with pytest.raises(UnsupportedModelError, match="'y' must have zero point 0 and scale"):
        run_reference(g, [np.zeros((1, 4), np.int16)])


def test_16x8_refuses_a_scale_above_128():
    """TFLM's int64 MultiplyByQuantizedMultiplier asserts shift < 8 (scale < 128)."""
    g = fc_16x8(np.random.default_rng(2), 1, 4, 2, in_scale=1.0, out_scale=1e-6)
    with pytest.raises(UnsupportedModelError, match="scale above 128"):
        run_reference(g, [np.zeros((1, 4), np.int16)])
