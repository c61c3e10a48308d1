"""16x8 single-op graphs (int16 activations, int8 weights, int64 bias) shared by the
reference, kernel and device tests."""

from __future__ import annotations

import numpy as np

from reference_single_op import q, single_op_graph
from tinyhost.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    FusedActivationOptions,
    Graph,
    OpKind,
    Padding,
    SoftmaxOptions,
    Tensor,
)

I8, I16, I32, I64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))


def _weights(rng: np.random.Generator, shape: tuple[int, ...], channels: int,
             per_channel: bool, axis: int) -> Tensor:
    data = rng.integers(-127, 128, shape).astype(np.int8)
    scales = rng.uniform(0.002, 0.02, channels if per_channel else 1)
    return Tensor("w", shape, I8, data=data, quant=q(scales, 0, axis))


def _bias(rng: np.random.Generator, w: Tensor, in_scale: float, channels: int,
          dtype=I64) -> Tensor:
    scales = np.broadcast_to(w.quant.scale, (channels,)) * np.float32(in_scale)
    data = rng.integers(-(1 << 20), 1 << 20, channels).astype(dtype)
    return Tensor("b", (channels,), dtype, data=data, quant=q(scales, 0))


def fc_16x8(rng: np.random.Generator, batches: int, depth: int, units: int, *,
            bias: bool = True, per_channel: bool = True, act: Activation = Activation.NONE,
            in_scale: float = 0.01, out_scale: float = 0.05, bias_dtype=I64) -> Graph:
    w = _weights(rng, (units, depth), units, per_channel, 0)
    ts = [Tensor("x", (batches, depth), I16, quant=q(in_scale)), w]
    inputs: list[int | None] = [0, 1, None]
    if bias:
        ts.append(_bias(rng, w, in_scale, units, bias_dtype))
        inputs[2] = 2
    ts.append(Tensor("y", (batches, units), I16, quant=q(out_scale)))
    return single_op_graph(OpKind.FULLY_CONNECTED, FullyConnectedOptions(act), ts, inputs,
                           [len(ts) - 1])


def conv_16x8(rng: np.random.Generator, shape: tuple[int, int, int, int], cout: int,
              kernel: tuple[int, int], *, depthwise: bool = False, stride: int = 1,
              padding: Padding = Padding.SAME, bias: bool = True, per_channel: bool = True,
              act: Activation = Activation.NONE, in_scale: float = 0.01,
              out_scale: float = 0.05, dilation: int = 1) -> Graph:
    n, h, w_, cin = shape
    if depthwise:
        wshape, axis = (1, *kernel, cout), 3
        options = DepthwiseConv2DOptions(padding, stride, stride, cout // cin, dilation,
                                         dilation, act)
    else:
        wshape, axis = (cout, *kernel, cin), 0
        options = Conv2DOptions(padding, stride, stride, dilation, dilation, act)
    w = _weights(rng, wshape, cout, per_channel, axis)
    ts = [Tensor("x", shape, I16, quant=q(in_scale)), w]
    inputs: list[int | None] = [0, 1, None]
    if bias:
        ts.append(_bias(rng, w, in_scale, cout))
        inputs[2] = 2

    def out_size(size: int, k: int) -> int:
        eff = (k - 1) * dilation + 1
        return (size + stride - 1) // stride if padding is Padding.SAME else (
            (size - eff + stride) // stride)

    ts.append(Tensor("y", (n, out_size(h, kernel[0]), out_size(w_, kernel[1]), cout), I16,
                     quant=q(out_scale)))
    kind = OpKind.DEPTHWISE_CONV_2D if depthwise else OpKind.CONV_2D
    return single_op_graph(kind, options, ts, inputs, [len(ts) - 1])


def int16_input(rng: np.random.Generator, graph: Graph) -> np.ndarray:
    t = graph.tensors[graph.inputs[0]]
    x = rng.integers(-32768, 32768, t.shape).astype(np.int16)
    flat = x.reshape(-1)
    flat[: min(2, flat.size)] = (-32768, 32767)[: min(2, flat.size)]
    return x


def chain_16x8(rng: np.random.Generator) -> Graph:
    """QUANTIZE int8 -> int16, CONV_2D 16x8 (3x3 SAME, RELU), DEPTHWISE_CONV_2D 16x8 (3x3,
    stride 2, multiplier 2), FULLY_CONNECTED 16x8 (per-tensor weights), QUANTIZE int16 ->
    int8; ADD int16 (a constant row) and MUL int16 after the FC, SOFTMAX int16 of the ADD;
    outputs the int8 result and the int16 softmax. Scales keep the int16 values
    spread over thousands (a few saturate)."""
    from tinyhost.ir import NoOptions, Op

    tensors: list[Tensor] = [Tensor("x8", (1, 8, 8, 3), I8, quant=q(0.05, 3))]
    ops: list[Op] = []
    s_x16 = 0.05 / 200  # int8 values land near +-25,000

    def add(t: Tensor) -> int:
        tensors.append(t)
        return len(tensors) - 1

    def layer(kind, options, x: int, wshape, channels, axis, out_shape, spread,
              per_channel=True) -> int:
        s_in = float(tensors[x].quant.scale[0])
        k = int(np.prod(wshape)) // channels
        w = _weights(rng, wshape, channels, per_channel, axis)
        wi = add(w)
        bi = add(_bias(rng, w, s_in, channels))
        # accumulators spread near spread_in * 73 * sqrt(k); aim the output at +-8,000
        s_out = s_in * float(np.mean(w.quant.scale)) * spread * 73 * np.sqrt(k) / 8000
        yi = add(Tensor(f"y{len(ops)}", out_shape, I16, quant=q(float(np.float32(s_out)))))
        ops.append(Op(kind, (x, wi, bi), (yi,), options))
        return yi

    x16 = add(Tensor("x16", (1, 8, 8, 3), I16, quant=q(s_x16)))
    ops.append(Op(OpKind.QUANTIZE, (0,), (x16,), NoOptions()))
    c = layer(OpKind.CONV_2D, Conv2DOptions(Padding.SAME, 1, 1, activation=Activation.RELU),
              x16, (8, 3, 3, 3), 8, 0, (1, 8, 8, 8), 15000)
    d = layer(OpKind.DEPTHWISE_CONV_2D, DepthwiseConv2DOptions(Padding.SAME, 2, 2, 2), c,
              (1, 3, 3, 16), 16, 3, (1, 4, 4, 16), 6000)
    f = layer(OpKind.FULLY_CONNECTED, FullyConnectedOptions(), d, (10, 256), 10, 0, (1, 10),
              8000, per_channel=False)
    s_f = float(tensors[f].quant.scale[0])
    bias16 = add(Tensor("c16", (10,), I16, rng.integers(-20000, 20000, 10).astype(np.int16),
                        q(s_f * 0.5)))
    a = add(Tensor("a16", (1, 10), I16, quant=q(s_f * 1.5)))
    ops.append(Op(OpKind.ADD, (f, bias16), (a,), FusedActivationOptions()))
    m = add(Tensor("m16", (1, 10), I16, quant=q(s_f * 1.5 * s_f * 1e4)))
    ops.append(Op(OpKind.MUL, (a, f), (m,), FusedActivationOptions()))
    y8 = add(Tensor("y8", (1, 10), I8, quant=q(float(tensors[m].quant.scale[0]) * 100, -5)))
    ops.append(Op(OpKind.QUANTIZE, (m,), (y8,), NoOptions()))
    sm = add(Tensor("softmax16", (1, 10), I16, quant=q(1 / 32768)))
    ops.append(Op(OpKind.SOFTMAX, (a,), (sm,), SoftmaxOptions(beta=float(
        np.float32(4.0 / (8000 * s_f * 1.5))))))  # fmt: skip
    return Graph(tensors=tuple(tensors), ops=tuple(ops), inputs=(0,), outputs=(y8, sm),
                 name="chain_16x8")
