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
    Graph,
    OpKind,
    Padding,
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
