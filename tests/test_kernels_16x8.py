"""th_fully_connected_s16 / th_conv_s16 / th_dw_conv_s16 (16x8: int16 activations, int8
weights, int64 bias), th_add_s16 / th_sub_s16 / th_mul_s16 and th_softmax_s16 (ASan + UBSan,
portable build) against the NumPy reference, bit for bit: several shapes, strides, paddings,
dilations and multipliers, per-channel and per-tensor weights, activations, saturating outputs
and biases near 2**40, broadcasts; nonzero offsets refused. Params come from `tinyhost.arith` on
single-op graphs; expected outputs from `tinyhost.reference`, never from the C code."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np
import pytest

from graphs_16x8 import conv_16x8, fc_16x8, int16_input
from reference_single_op import q, run_reference, single_op_graph
from test_kernels_misc import Kernels, _start, assert_same, buf, i32, out, shape_bytes
from tinyhost.arith.conv import conv_params, fully_connected_params
from tinyhost.arith.elementwise import add_params, mul_params
from tinyhost.arith.softmax16 import softmax16_luts, softmax16_params
from tinyhost.ir import (
    Activation,
    FusedActivationOptions,
    Graph,
    OpKind,
    Padding,
    SoftmaxOptions,
    Tensor,
)

I16 = np.dtype(np.int16)
TH_OK, TH_ERR_UNSUPPORTED = 0, 2


@pytest.fixture(scope="module")
def kern16() -> Iterator[Kernels]:
    yield from _start("portable")


@pytest.fixture(scope="module", params=["portable", "dsp"])
def kern16v(request) -> Iterator[Kernels]:
    """Both builds: the portable C and the DSP paths modelled in C (TH_NN_EMULATE_DSP)."""
    yield from _start(request.param)


def _run(kern: Kernels, g: Graph, x: np.ndarray, offset: int = 0) -> tuple[int, np.ndarray]:
    op = g.ops[0]
    w = g.tensors[op.inputs[1]]
    y = g.tensors[op.outputs[0]]
    bias = ("null", None) if op.inputs[2] is None else buf(
        np.asarray(g.tensors[op.inputs[2]].data, "<i8"))
    nbytes = y.size_bytes
    if op.kind is OpKind.FULLY_CONNECTED:
        p = fully_connected_params(g, op)
        cout, cin = w.shape
        batches = x.size // cin
        params = i32(offset, 0, 0, p.act_min, p.act_max)
        dims = (i32(batches, 1, 1, cin), i32(cout, 1, 1, cin), i32(batches, 1, 1, cout))
        name = "th_fully_connected_s16"
    else:
        p = conv_params(g, op)
        head = (offset, 0) + ((p.ch_mult,) if op.kind is OpKind.DEPTHWISE_CONV_2D else ())
        params = i32(*head, p.stride_h, p.stride_w, p.pad_top, p.pad_left, p.dilation_h,
                     p.dilation_w, p.act_min, p.act_max)
        dims = (i32(*x.shape), i32(*w.shape), i32(*y.shape))
        name = "th_dw_conv_s16" if op.kind is OpKind.DEPTHWISE_CONV_2D else "th_conv_s16"
    mult = ("data", np.asarray(p.out_multiplier, "<i4").tobytes())
    shift = ("data", np.asarray(p.out_shift, "<i4").tobytes())
    # args: 0 ctx, 1 params, 2 quant, 3 in dims, 4 x, 5 filter dims, 6 w, 7 bias, 8 out dims,
    # 9 y, 10 multiplier, 11 shift
    status, bufs = kern.call(name, ("null", None), buf(params), ("ptrs", [10, 11]),
                             buf(dims[0]), buf(x), buf(dims[1]),
                             buf(np.asarray(w.data, np.int8)), bias, buf(dims[2]),
                             out(nbytes), mult, shift)
    return status, np.frombuffer(bufs[9], "<i2").reshape(y.shape)


def _check(kern: Kernels, g: Graph, rng: np.random.Generator) -> np.ndarray:
    x = int16_input(rng, g)
    want = run_reference(g, [x])[0]
    status, got = _run(kern, g, x)
    assert status == TH_OK
    assert_same(got, want.reshape(got.shape), g.ops[0].kind.name)
    return want


def test_fc_s16_matches_reference(kern16v):
    rng = np.random.default_rng(11)
    for batches, depth, units in ((1, 1, 1), (3, 33, 10), (2, 257, 5)):
        for per_channel in (True, False):
            for act in (Activation.NONE, Activation.RELU, Activation.RELU6):
                for bias in (True, False):
                    _check(kern16v, fc_16x8(rng, batches, depth, units, bias=bias, act=act,
                                            per_channel=per_channel), rng)


@pytest.mark.parametrize("depthwise", [False, True])
def test_conv_s16_matches_reference(kern16v, depthwise):
    rng = np.random.default_rng(12 + depthwise)
    cases = [((1, 6, 5, 3), 6, (3, 3), 1, Padding.SAME, Activation.NONE, 1),
             ((2, 7, 7, 4), 8, (3, 2), 2, Padding.VALID, Activation.RELU, 1),
             ((1, 9, 8, 2), 4, (3, 3), 1, Padding.SAME, Activation.RELU6, 2),
             ((1, 5, 5, 8), 8, (1, 1), 1, Padding.VALID, Activation.NONE, 1),
             ((1, 4, 6, 1), 3, (5, 5), 3, Padding.SAME, Activation.NONE, 1)]
    for shape, cout, kernel, stride, pad, act, dil in cases:
        for per_channel in (True, False):
            g = conv_16x8(rng, shape, cout, kernel, depthwise=depthwise, stride=stride,
                          padding=pad, per_channel=per_channel, act=act, dilation=dil,
                          bias=depthwise or per_channel)
            _check(kern16v, g, rng)


def test_s16_saturates_and_large_biases(kern16v):
    rng = np.random.default_rng(13)
    g = fc_16x8(rng, 4, 64, 8, out_scale=0.001)
    big = dataclasses.replace(g.tensors[2],
                              data=rng.integers(-(1 << 40), 1 << 40, 8).astype(np.int64))
    g = dataclasses.replace(g, tensors=(*g.tensors[:2], big, g.tensors[3]))
    y = _check(kern16v, g, rng)
    assert (y == 32767).any() and (y == -32768).any()


def test_s16_refuses_offsets(kern16):
    rng = np.random.default_rng(14)
    for g in (fc_16x8(rng, 1, 4, 2), conv_16x8(rng, (1, 3, 3, 2), 2, (1, 1)),
              conv_16x8(rng, (1, 3, 3, 2), 2, (1, 1), depthwise=True)):
        status, _ = _run(kern16, g, int16_input(rng, g), offset=3)
        assert status == TH_ERR_UNSUPPORTED


@pytest.mark.parametrize("kind", ["ADD", "SUB", "MUL"])
def test_add_sub_mul_s16_match_reference(kern16, kind):
    """Same shapes, broadcasts (a row, a scalar, both sides), activations, zero points
    (ADD and SUB only: TFLM's int16 MUL takes none)."""
    rng = np.random.default_rng(15 + len(kind))
    shapes = [((2, 3, 4), (2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,), (2, 3, 4)),
              ((1,), (5, 2), (5, 2)), ((3, 1, 2), (1, 4, 1), (3, 4, 2))]
    zero_points = [(0, 0, 0), (5, -7, 3), (-32768, 32767, 100)] if kind != "MUL" else [
        (0, 0, 0)]
    for s1, s2, so in shapes:
        for zps in zero_points:
            for act in (Activation.NONE, Activation.RELU, Activation.RELU6):
                g, (a, b) = _binary16_graph(OpKind[kind], s1, s2, so, zps, act, rng)
                want = run_reference(g, [a, b])[0]
                if kind != "MUL":
                    p = add_params(g, g.ops[0])
                    params = i32(p.input1_offset, p.input2_offset, p.output_offset,
                                 p.left_shift, p.activation_min, p.activation_max)
                    quant = i32(p.input1_multiplier, p.input1_shift, p.input2_multiplier,
                                p.input2_shift, p.output_multiplier, p.output_shift)
                else:
                    p = mul_params(g, g.ops[0])
                    params = i32(p.input1_offset, p.input2_offset, p.output_offset,
                                 p.activation_min, p.activation_max)
                    quant = i32(p.output_multiplier, p.output_shift)
                status, bufs = kern16.call(
                    f"th_{kind.lower()}_s16", ("null", None), buf(params), buf(quant),
                    buf(shape_bytes(s1)), buf(a), buf(shape_bytes(s2)), buf(b),
                    buf(shape_bytes(so)), out(want.nbytes))
                assert status == TH_OK
                assert_same(np.frombuffer(bufs[8], "<i2").reshape(so), want,
                            f"{kind} {s1} {s2} {zps} {act.name}")


def _binary16_graph(kind, s1, s2, so, zps, act, rng):
    sc1, sc2 = rng.uniform(1e-4, 1e-2, 2)
    out_scale = (sc1 + sc2) * rng.uniform(0.3, 3) if kind is not OpKind.MUL else (
        sc1 * sc2 * 30000 * rng.uniform(0.1, 3))
    if act is Activation.RELU6:
        out_scale = 6 / 20000
    ts = [Tensor("a", s1, I16, quant=q(sc1, zps[0])), Tensor("b", s2, I16, quant=q(sc2, zps[1])),
          Tensor("y", so, I16, quant=q(out_scale, zps[2]))]
    g = single_op_graph(kind, FusedActivationOptions(act), ts, [0, 1], [2])
    a = rng.integers(-32768, 32768, s1).astype(np.int16)
    b = rng.integers(-32768, 32768, s2).astype(np.int16)
    a.reshape(-1)[0], b.reshape(-1)[-1] = -32768, 32767
    return g, (a, b)


def test_softmax_s16_matches_reference(kern16):
    rng = np.random.default_rng(17)
    exp_lut, recip_lut = softmax16_luts()
    for scale in (1e-3, 3e-4, 0.01, 2e-6):
        for shape in ((4, 10), (1, 1000), (2, 3, 7), (1, 1)):
            ts = [Tensor("x", shape, I16, quant=q(scale)),
                  Tensor("y", shape, I16, quant=q(1 / 32768))]
            g = single_op_graph(OpKind.SOFTMAX, SoftmaxOptions(1.0), ts, [0], [1])
            x = rng.integers(-32768, 32768, shape).astype(np.int16)
            want = run_reference(g, [x])[0]
            p = softmax16_params(g, g.ops[0])
            status, bufs = kern16.call("th_softmax_s16", ("null", None),
                                       buf(i32(p.input_multiplier, p.input_left_shift)),
                                       buf(exp_lut.astype("<i2")), buf(recip_lut.astype("<i2")),
                                       buf(shape_bytes(shape)), buf(x), out(want.nbytes))
            assert status == TH_OK
            assert_same(np.frombuffer(bufs[6], "<i2").reshape(shape), want,
                        f"softmax {scale} {shape}")


def test_s16_random_shapes_hit_the_dsp_paths(kern16v):
    """Random 16x8 shapes on both builds: K tails (Cin and depth not multiples of 4), Cin
    odd, 1x1 / non-square / dilated kernels, padding, patches over 128 values (the DSP conv's
    row path) and under (its gathered patch), FC depths over the 256-product blocks, 1-7
    output channels (groups of 4, 2, 1), depthwise multipliers 1-3, per-tensor and
    per-channel; output scales from 1e-4 (shift >= -1: the requantization's slow path) up."""
    rng = np.random.default_rng(18)
    for _ in range(10):
        g = fc_16x8(rng, int(rng.integers(1, 3)), int(rng.integers(1, 600)),
                    int(rng.integers(1, 8)), per_channel=bool(rng.integers(2)),
                    out_scale=float(rng.choice([1e-4, 0.05, 3.0])))
        _check(kern16v, g, rng)
    for depthwise in (False, True):
        for _ in range(12):
            cin = int(rng.integers(1, 42 if not depthwise else 10))
            cout = cin * int(rng.integers(1, 4)) if depthwise else int(rng.integers(1, 8))
            kernel = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
            dil = int(rng.choice([1, 1, 2]))
            size = (int(rng.integers(kernel[0] * dil, 9)), int(rng.integers(kernel[1] * dil, 9)))
            g = conv_16x8(rng, (1, *size, cin), cout, kernel, depthwise=depthwise,
                          stride=int(rng.integers(1, 3)),
                          padding=Padding.SAME if rng.integers(2) else Padding.VALID,
                          per_channel=bool(rng.integers(2)), dilation=dil,
                          out_scale=float(rng.choice([1e-4, 0.05, 3.0])))
            _check(kern16v, g, rng)


def test_s16_sums_beyond_int32(kern16v):
    """Inputs of the weights' sign at full scale: FC and CONV sums past 2^31 (the 32-bit
    block sums widened to int64; the int64 requantization) still match the reference."""
    rng = np.random.default_rng(19)
    g = fc_16x8(rng, 1, 1500, 3, out_scale=2000.0)
    w = np.asarray(g.tensors[1].data, np.int64)
    x = np.where(w[0] >= 0, 32767, -32768).astype(np.int16).reshape(1, 1500)
    assert abs(int((x.astype(np.int64) * w[0]).sum())) > 2**31
    want = run_reference(g, [x])[0]
    status, got = _run(kern16v, g, x)
    assert status == TH_OK
    assert_same(got, want.reshape(got.shape), "fc beyond int32")
    g = conv_16x8(rng, (1, 3, 3, 170), 5, (3, 3), padding=Padding.VALID, out_scale=2000.0)
    w = np.asarray(g.tensors[1].data, np.int64)
    x = np.where(w[0] >= 0, 32767, -32768).astype(np.int16)[None]
    assert abs(int((x.astype(np.int64) * w[0]).sum())) > 2**31
    want = run_reference(g, [x])[0]
    status, got = _run(kern16v, g, x)
    assert status == TH_OK
    assert_same(got, want.reshape(got.shape), "conv beyond int32")
