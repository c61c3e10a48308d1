"""Graphs built in memory op by op, for tests that need shapes or quantization no model file
has (folded PADs, constant channels)."""

from __future__ import annotations

import numpy as np

from reference_single_op import q
from tinyhost.ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    Graph,
    Op,
    OpKind,
    OpOptions,
    Padding,
    Quantization,
    Tensor,
)
from tinyhost.passes.validate import check_graph

I8, I32 = np.dtype(np.int8), np.dtype(np.int32)


def conv_out_size(size: int, k: int, stride: int, dilation: int, padding: Padding) -> int:
    if padding is Padding.SAME:
        return -(-size // stride)
    return (size - ((k - 1) * dilation + 1)) // stride + 1


class GraphBuilder:
    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.tensors: list[Tensor] = []
        self.ops: list[Op] = []

    def tensor(self, name: str, shape: tuple[int, ...], dtype: np.dtype = I8,
               data: np.ndarray | None = None, quant: Quantization | None = None) -> int:
        self.tensors.append(Tensor(name, tuple(shape), dtype, data, quant))
        return len(self.tensors) - 1

    def op(self, kind: OpKind, inputs: tuple[int, ...], outputs: tuple[int, ...],
           options: OpOptions) -> None:
        self.ops.append(Op(kind, inputs, outputs, options))

    def conv(self, x: int, options: Conv2DOptions | DepthwiseConv2DOptions,
             weights: np.ndarray, weight_scales: np.ndarray, bias: np.ndarray,
             out_quant: Quantization, name: str) -> int:
        """CONV_2D (weights [Cout, KH, KW, Cin]) or DEPTHWISE_CONV_2D ([1, KH, KW, Cout]) of
        x, per-channel int8 weights, int32 bias; the output shape follows the options."""
        _, h, w, _ = self.tensors[x].shape
        depthwise = isinstance(options, DepthwiseConv2DOptions)
        cout = weights.shape[3] if depthwise else weights.shape[0]
        wt = self.tensor(f"{name}_w", weights.shape, I8, weights.astype(np.int8),
                         q(weight_scales, 0, axis=3 if depthwise else 0))  # fmt: skip
        xq = self.tensors[x].quant
        assert xq is not None
        bias_q = q((float(xq.scale[0]) * weight_scales).astype(np.float32), 0)
        bt = self.tensor(f"{name}_b", (cout,), I32, bias.astype(np.int32), bias_q)
        oh = conv_out_size(h, weights.shape[1], options.stride_h, options.dilation_h,
                           options.padding)  # fmt: skip
        ow = conv_out_size(w, weights.shape[2], options.stride_w, options.dilation_w,
                           options.padding)  # fmt: skip
        y = self.tensor(f"{name}_y", (1, oh, ow, cout), quant=out_quant)
        kind = OpKind.DEPTHWISE_CONV_2D if depthwise else OpKind.CONV_2D
        self.op(kind, (x, wt, bt), (y,), options)
        return y

    def graph(self, inputs: list[int], outputs: list[int], name: str) -> Graph:
        g = Graph(tuple(self.tensors), tuple(self.ops), tuple(inputs), tuple(outputs),
                  name=name)  # fmt: skip
        check_graph(g)
        return g
