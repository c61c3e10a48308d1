"""CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, pooling and MEAN against TFLite Micro.

Random single-op graphs (shapes, strides, dilations, paddings, depth multipliers, zero
points, per-channel scales, fused activations) are written with tinyhost's writer, run in
TFLite Micro and by the NumPy reference; int8 outputs must agree bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reference_single_op import (
    F32,
    I8,
    I32,
    assert_matches_tflm,
    q,
    random_int8,
    run_reference,
    run_tflm,
    single_op_graph,
)
from tinyhost.arith.conv import conv_params
from tinyhost.arith.fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier
from tinyhost.arith.padding import compute_out_size, compute_window_padding
from tinyhost.arith.reduce import fold_count
from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    Graph,
    OpKind,
    Padding,
    Pool2DOptions,
    ReducerOptions,
    Tensor,
)
from tinyhost.reference.ops.conv import conv2d_int8, depthwise_conv2d_int8

CASES = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
INT8_ACTIVATIONS = [Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1]


def _log_uniform(draw, low: float, high: float) -> float:
    return float(10 ** draw(st.floats(math.log10(low), math.log10(high))))


def _zero_point(draw) -> int:
    return draw(st.integers(-128, 127))


def _output_scale(draw, in_scale: float, w_scale: float, depth: int) -> float:
    """Around the scale that maps a typical accumulator onto +-50, times up to 2**+-4.

    Uniform int8 inputs minus a zero point and uniform weights give accumulators of about
    7000 * sqrt(depth); outputs then use most of the int8 range without all saturating.
    """
    typical = in_scale * w_scale * 7000 * math.sqrt(depth) / 50
    return float(typical * 2 ** draw(st.floats(-4, 4)))


def _filter_scales(draw, channels: int) -> np.ndarray:
    """A base scale with per-channel factors within 2**+-1.5 of it, as real models have."""
    base = _log_uniform(draw, 1e-3, 1e-1)
    return np.float32([base * 2 ** draw(st.floats(-1.5, 1.5)) for _ in range(channels)])


# -- CONV_2D and DEPTHWISE_CONV_2D -------------------------------------------------------------


@st.composite
def conv_cases(draw, depthwise: bool, dtype: np.dtype, grouped: bool = False):
    n = draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding = draw(st.sampled_from(Padding))
    h, w = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    if padding is Padding.VALID:
        assume(h >= (kh - 1) * dh + 1 and w >= (kw - 1) * dw + 1)
    pads = compute_window_padding(padding, h, w, kh, kw, sh, sw, dh, dw)
    cin = draw(st.integers(1, 6))
    if depthwise:
        multiplier = draw(st.integers(1, 3))
        cout = cin * multiplier
        filter_shape = (1, kh, kw, cout)
        depth = kh * kw
    else:
        groups = draw(st.sampled_from([g for g in range(2, cin + 1) if cin % g == 0] or [1])) \
            if grouped else 1
        cout = groups * draw(st.integers(1, 4 if grouped else 8))
        filter_shape = (cout, kh, kw, cin // groups)
        depth = kh * kw * cin // groups
    activation = draw(st.sampled_from(INT8_ACTIVATIONS))
    has_bias = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    axis = 3 if depthwise else 0
    if dtype == I8:
        in_scale = _log_uniform(draw, 1e-3, 1.0)
        per_channel = draw(st.booleans())
        w_scales = _filter_scales(draw, cout if per_channel else 1)
        out_scale = _output_scale(draw, in_scale, float(w_scales.mean()), depth)
        weights = rng.integers(-127, 128, size=filter_shape, dtype=np.int8)
        bias_scales = (np.float32(in_scale) * w_scales).astype(np.float32)
        x_t = Tensor("x", (n, h, w, cin), I8, quant=q(in_scale, _zero_point(draw)))
        w_t = Tensor("w", filter_shape, I8, weights, q(w_scales, 0, axis=axis))
        b_t = Tensor("b", (cout,), I32, rng.integers(-5000, 5000, cout, dtype=np.int32),
                     q(bias_scales if per_channel else bias_scales[:1], 0))
        y_t = Tensor("y", (n, pads.out_h, pads.out_w, cout), I8,
                     quant=q(out_scale, _zero_point(draw)))
        x = random_int8(rng, x_t.shape)
    else:
        weights = rng.standard_normal(filter_shape).astype(np.float32)
        x_t = Tensor("x", (n, h, w, cin), F32)
        w_t = Tensor("w", filter_shape, F32, weights)
        b_t = Tensor("b", (cout,), F32, rng.standard_normal(cout).astype(np.float32))
        y_t = Tensor("y", (n, pads.out_h, pads.out_w, cout), F32)
        x = rng.standard_normal(x_t.shape).astype(np.float32)
    if depthwise:
        options = DepthwiseConv2DOptions(padding, sh, sw, multiplier, dh, dw, activation)
        kind = OpKind.DEPTHWISE_CONV_2D
    else:
        options = Conv2DOptions(padding, sh, sw, dh, dw, activation)
        kind = OpKind.CONV_2D
    graph = single_op_graph(kind, options, [x_t, w_t, b_t, y_t], [0, 1, 2 if has_bias else None],
                            [3])
    return graph, [x]


@CASES
@given(conv_cases(depthwise=False, dtype=I8))
def test_conv2d_int8_matches_tflm(case) -> None:
    assert_matches_tflm(*case)


@settings(CASES, max_examples=25)
@given(conv_cases(depthwise=False, dtype=I8, grouped=True))
def test_grouped_conv2d_int8_matches_tflm(case) -> None:
    # TFLM runs grouped convolutions (filter depth = input depth / groups); the graph
    # validator refuses them, so the array-level kernel is checked directly.
    graph, (x,) = case
    op = graph.ops[0]
    bias = graph.tensors[op.inputs[2]].data if op.inputs[2] is not None else None
    ours = conv2d_int8(x, graph.tensors[1].data, bias, conv_params(graph, op))
    np.testing.assert_array_equal(ours, run_tflm(graph, [x])[0].reshape(ours.shape))


def _with_zero_bias(graph: Graph) -> Graph:
    """The same depthwise conv with an all-zero bias operand instead of none.

    TFLM crashes preparing a DEPTHWISE_CONV_2D without bias (it releases the absent bias
    tensor unconditionally), so a zero bias stands in for it in the oracle run.
    """
    op = graph.ops[0]
    bias = graph.tensors[2]
    zero = replace(bias, data=np.zeros(bias.shape, bias.dtype))
    tensors = (*graph.tensors[:2], zero, *graph.tensors[3:])
    return replace(graph, tensors=tensors, ops=(replace(op, inputs=(0, 1, 2)),))


def _assert_depthwise_matches_tflm(graph: Graph, x: np.ndarray) -> None:
    if graph.ops[0].inputs[2] is not None:
        assert_matches_tflm(graph, [x])
        return
    ours = run_reference(graph, [x])[0]
    theirs = assert_matches_tflm(_with_zero_bias(graph), [x])[0]
    np.testing.assert_array_equal(ours, theirs)


@CASES
@given(conv_cases(depthwise=True, dtype=I8))
def test_depthwise_conv2d_int8_matches_tflm(case) -> None:
    graph, (x,) = case
    _assert_depthwise_matches_tflm(graph, x)


@settings(CASES, max_examples=25)
@given(conv_cases(depthwise=False, dtype=F32))
def test_conv2d_float_matches_tflm(case) -> None:
    assert_matches_tflm(*case)


@settings(CASES, max_examples=25)
@given(conv_cases(depthwise=True, dtype=F32))
def test_depthwise_conv2d_float_matches_tflm(case) -> None:
    graph, (x,) = case
    _assert_depthwise_matches_tflm(graph, x)


def _depthwise_graph(stored_multiplier: int):
    rng = np.random.default_rng(5)
    tensors = [
        Tensor("x", (1, 6, 6, 2), I8, quant=q(0.05, -3)),
        Tensor("w", (1, 3, 3, 6), I8, rng.integers(-127, 128, (1, 3, 3, 6), dtype=np.int8),
               q(np.float32([0.01, 0.02, 0.03, 0.01, 0.02, 0.03]), 0, axis=3)),
        Tensor("b", (6,), I32, rng.integers(-900, 900, 6, dtype=np.int32),
               q(np.float32([0.01, 0.02, 0.03, 0.01, 0.02, 0.03]) * np.float32(0.05))),
        Tensor("y", (1, 6, 6, 6), I8, quant=q(0.1, 4)),
    ]
    options = DepthwiseConv2DOptions(Padding.SAME, 1, 1, stored_multiplier)
    return single_op_graph(OpKind.DEPTHWISE_CONV_2D, options, tensors, [0, 1, 2], [3])


def test_depthwise_multiplier_comes_from_the_shapes() -> None:
    # Files that store depth_multiplier 0 must compute like the correct value 3 (TFLM itself
    # would read 0 and write nothing, so it is the oracle only for the stored-3 graph).
    good, zero = _depthwise_graph(3), _depthwise_graph(0)
    assert conv_params(zero, zero.ops[0]).ch_mult == 3
    x = random_int8(np.random.default_rng(6), (1, 6, 6, 2))
    expected = assert_matches_tflm(good, [x])[0]
    np.testing.assert_array_equal(run_reference(zero, [x])[0], expected)


def test_depthwise_channel_mismatch_is_refused() -> None:
    graph = _depthwise_graph(3)
    bad = single_op_graph(
        OpKind.DEPTHWISE_CONV_2D, graph.ops[0].options,
        [Tensor("x", (1, 6, 6, 4), I8, quant=q(0.05)), *graph.tensors[1:]],
        [0, 1, 2], [3],
    )
    with pytest.raises(ModelFormatError, match="not a multiple"):
        conv_params(bad, bad.ops[0])


def test_depthwise_array_function_checks_channels() -> None:
    graph = _depthwise_graph(3)
    p = conv_params(graph, graph.ops[0])
    with pytest.raises(UnsupportedModelError):
        depthwise_conv2d_int8(np.zeros((1, 6, 6, 3), np.int8), graph.tensors[1].data, None, p)


# -- FULLY_CONNECTED ---------------------------------------------------------------------------


@st.composite
def fc_cases(draw, dtype: np.dtype):
    units, features = draw(st.integers(1, 16)), draw(st.integers(1, 32))
    batch_dims = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    batches = int(np.prod(batch_dims, dtype=np.int64))
    keep_num_dims = draw(st.booleans()) and len(batch_dims) > 0
    if keep_num_dims:
        in_shape = (*batch_dims, features)
        out_shape = (*batch_dims, units)
    else:
        # Any shape holding batches * features values: TFLM reads it as rows of `features`.
        total = batches * features
        split = draw(st.sampled_from([d for d in range(1, total + 1) if total % d == 0]))
        in_shape = draw(st.sampled_from([(total,), (split, total // split),
                                         (1, split, total // split)]))
        out_shape = (batches, units)
    activation = draw(st.sampled_from(INT8_ACTIVATIONS))
    has_bias = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype == I8:
        in_scale = _log_uniform(draw, 1e-3, 1.0)
        per_channel = draw(st.booleans()) and units > 1
        w_scales = _filter_scales(draw, units if per_channel else 1)
        out_scale = _output_scale(draw, in_scale, float(w_scales.mean()), features)
        bias_scales = (np.float32(in_scale) * w_scales).astype(np.float32)
        x_t = Tensor("x", in_shape, I8, quant=q(in_scale, _zero_point(draw)))
        w_t = Tensor("w", (units, features), I8,
                     rng.integers(-127, 128, (units, features), dtype=np.int8),
                     q(w_scales, 0, axis=0))
        b_t = Tensor("b", (units,), I32, rng.integers(-5000, 5000, units, dtype=np.int32),
                     q(bias_scales, 0))
        y_t = Tensor("y", out_shape, I8, quant=q(out_scale, _zero_point(draw)))
        x = random_int8(rng, in_shape)
    else:
        x_t = Tensor("x", in_shape, F32)
        w_t = Tensor("w", (units, features), F32,
                     rng.standard_normal((units, features)).astype(np.float32))
        b_t = Tensor("b", (units,), F32, rng.standard_normal(units).astype(np.float32))
        y_t = Tensor("y", out_shape, F32)
        x = rng.standard_normal(in_shape).astype(np.float32)
    graph = single_op_graph(
        OpKind.FULLY_CONNECTED, FullyConnectedOptions(activation, keep_num_dims),
        [x_t, w_t, b_t, y_t], [0, 1, 2 if has_bias else None], [3],
    )
    return graph, [x]


@CASES
@given(fc_cases(I8))
def test_fully_connected_int8_matches_tflm(case) -> None:
    assert_matches_tflm(*case)


@settings(CASES, max_examples=25)
@given(fc_cases(F32))
def test_fully_connected_float_matches_tflm(case) -> None:
    assert_matches_tflm(*case)


# -- AVERAGE_POOL_2D and MAX_POOL_2D -----------------------------------------------------------


@st.composite
def pool_cases(draw, kind: OpKind, dtype: np.dtype):
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 5))
    fh, fw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding = draw(st.sampled_from(Padding))
    h, w = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    if padding is Padding.VALID:
        assume(h >= fh and w >= fw)
    pads = compute_window_padding(padding, h, w, fh, fw, sh, sw)
    activation = draw(st.sampled_from(INT8_ACTIVATIONS))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype == I8:
        quant = q(_log_uniform(draw, 1e-3, 1.0), _zero_point(draw))
        x_t = Tensor("x", (n, h, w, c), I8, quant=quant)
        y_t = Tensor("y", (n, pads.out_h, pads.out_w, c), I8, quant=quant)
        x = random_int8(rng, x_t.shape)
    else:
        x_t = Tensor("x", (n, h, w, c), F32)
        y_t = Tensor("y", (n, pads.out_h, pads.out_w, c), F32)
        x = (rng.standard_normal(x_t.shape) * 3).astype(np.float32)
    options = Pool2DOptions(padding, sh, sw, fh, fw, activation)
    return single_op_graph(kind, options, [x_t, y_t], [0], [1]), [x]


@CASES
@given(pool_cases(OpKind.AVERAGE_POOL_2D, I8))
def test_average_pool_int8_matches_tflm(case) -> None:
    assert_matches_tflm(*case)


@CASES
@given(pool_cases(OpKind.MAX_POOL_2D, I8))
def test_max_pool_int8_matches_tflm(case) -> None:
    assert_matches_tflm(*case)


@settings(CASES, max_examples=20)
@given(st.sampled_from([OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D]).flatmap(
    lambda kind: pool_cases(kind, F32)))
def test_pool_float_matches_tflm(case) -> None:
    assert_matches_tflm(*case)


def test_average_pool_rounds_half_away_from_zero() -> None:
    # 2x2 windows summing to +-2 and +-6 (averages +-0.5 and +-1.5) pin down the rounding.
    x = np.int8([[1, 1, 0, 0, -1, -1, 0, 0], [3, 3, 0, 0, -3, -3, 0, 0]]).reshape(1, 2, 4, 2)
    tensors = [Tensor("x", (1, 2, 4, 2), I8, quant=q(0.5)),
               Tensor("y", (1, 1, 2, 2), I8, quant=q(0.5))]
    graph = single_op_graph(OpKind.AVERAGE_POOL_2D, Pool2DOptions(Padding.VALID, 2, 2, 2, 2),
                            tensors, [0], [1])
    y = assert_matches_tflm(graph, [x])[0]
    # Sums 1+1+3+3=8 and 0: channel 0 of window 0 is (1+0+3+0)/4 = 1, etc.
    expected = np.array(
        [[(1 + 0 + 3 + 0) / 4, (1 + 0 + 3 + 0) / 4], [(-1 + 0 - 3 + 0) / 4, (-1 - 3) / 4]]
    )
    assert y.reshape(2, 2).tolist() == [[1, 1], [-1, -1]] == np.trunc(expected).tolist()


# -- MEAN --------------------------------------------------------------------------------------


@st.composite
def mean_cases(draw, dtype: np.dtype):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    # TFLM resolves at most two distinct axes; entries may repeat or count from the end.
    distinct = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=min(2, rank),
                             unique=True))
    axes = [a - rank if draw(st.booleans()) else a for a in distinct]
    if draw(st.booleans()):
        axes.append(axes[0])
    keep_dims = draw(st.booleans())
    out_shape = tuple(
        1 if i in distinct else d for i, d in enumerate(shape) if keep_dims or i not in distinct
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    axis_t = Tensor("axes", (len(axes),), I32, np.int32(axes))
    if dtype == I8:
        in_quant = q(_log_uniform(draw, 1e-3, 1.0), _zero_point(draw))
        out_quant = in_quant if draw(st.booleans()) else q(
            float(in_quant.scale[0]) * 2 ** draw(st.floats(-3, 3)), _zero_point(draw))
        x_t = Tensor("x", shape, I8, quant=in_quant)
        y_t = Tensor("y", out_shape, I8, quant=out_quant)
        x = random_int8(rng, shape)
    else:
        x_t, y_t = Tensor("x", shape, F32), Tensor("y", out_shape, F32)
        x = rng.standard_normal(shape).astype(np.float32)
    graph = single_op_graph(OpKind.MEAN, ReducerOptions(keep_dims), [x_t, axis_t, y_t], [0, 1],
                            [2])
    return graph, [x]


@settings(CASES, max_examples=80)
@given(mean_cases(I8))
def test_mean_int8_matches_tflm(case) -> None:
    assert_matches_tflm(*case)


@settings(CASES, max_examples=25)
@given(mean_cases(F32))
def test_mean_float_matches_tflm(case) -> None:
    assert_matches_tflm(*case)


@pytest.mark.parametrize("count", [1, 2, 3, 7, 49, 100, 1 << 20, (1 << 33) + 5])
def test_fold_count_approximates_division(count: int) -> None:
    multiplier, shift = 1_518_500_250, -3  # about 0.0884
    folded, folded_shift = fold_count(multiplier, shift, count)
    assert 0 <= folded <= multiplier
    real = folded * 2.0 ** (folded_shift - 31)
    assert real == pytest.approx(multiplier * 2.0 ** (shift - 31) / count, rel=1e-6, abs=2**-62)


# -- SAME / VALID geometry ---------------------------------------------------------------------


@given(st.integers(1, 40), st.integers(1, 7), st.integers(1, 4), st.integers(1, 3))
def test_window_padding_matches_tensorflow_formulas(size, kernel, stride, dilation) -> None:
    effective = (kernel - 1) * dilation + 1
    same = compute_window_padding(Padding.SAME, size, size, kernel, kernel, stride, stride,
                                  dilation, dilation)
    assert same.out_h == math.ceil(size / stride)
    total = max(0, (same.out_h - 1) * stride + effective - size)
    # SAME puts the odd row/column at the bottom/right.
    assert (same.top, same.bottom) == (total // 2, total - total // 2)
    assert same.bottom - same.top in (0, 1)
    valid_out = compute_out_size(Padding.VALID, size, kernel, stride, dilation)
    assert valid_out == max(0, math.ceil((size - effective + 1) / stride))
    if valid_out:
        valid = compute_window_padding(Padding.VALID, size, size, kernel, kernel, stride, stride,
                                       dilation, dilation)
        assert (valid.top, valid.left) == (0, 0)


def test_per_tensor_fc_multiplies_scales_in_double() -> None:
    # Older TFLite rounded input_scale * filter_scale to float32 before dividing; the pinned
    # TFLM multiplies in double. For these scales that moves the Q31 multiplier by 14 and,
    # through the double rounding, turns accumulators +-37398 (64.499 in real terms) into
    # +-65 rather than +-64.
    s_in, s_w, s_out = np.float32(0.025809007), np.float32(0.008768611), np.float32(0.13121918)
    tensors = [
        Tensor("x", (1, 1), I8, quant=q(s_in, 0)),
        Tensor("w", (2, 1), I8, np.int8([[1], [1]]), q(s_w, 0)),
        Tensor("b", (2,), I32, np.int32([-37398, 37398]), q(np.float32(s_in * s_w), 0)),
        Tensor("y", (1, 2), I8, quant=q(s_out, 0)),
    ]
    graph = single_op_graph(OpKind.FULLY_CONNECTED, FullyConnectedOptions(), tensors,
                            [0, 1, 2], [3])
    y = assert_matches_tflm(graph, [np.int8([[0]])])[0]
    assert y.tolist() == [[-65, 65]]
    # The float32 product would have given a different answer: the case is sensitive.
    multiplier, shift = quantize_multiplier(float(np.float32(s_in * s_w)) / float(s_out))
    in_float = multiply_by_quantized_multiplier(np.int64([-37398, 37398]), multiplier, shift)
    assert in_float.tolist() == [-64, 64]


def test_conv_params_are_plain_int32_arrays() -> None:
    graph = _depthwise_graph(3)
    p = conv_params(graph, graph.ops[0])
    assert p.out_multiplier.dtype == np.int32 and p.out_shift.dtype == np.int32
    assert p.out_multiplier.shape == p.out_shift.shape == (6,)
    # Q31 significands of positive multipliers lie in [2**30, 2**31).
    assert np.all((p.out_multiplier >= 1 << 30) & (p.out_multiplier.astype(np.int64) < 1 << 31))
    assert (p.input_offset, p.output_offset) == (3, 4)
    assert (p.pad_top, p.pad_bottom, p.pad_left, p.pad_right) == (1, 1, 1, 1)
