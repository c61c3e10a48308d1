"""Tensors, ops and the graph that holds them in execution order."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from tinyhost.ir.ops import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DwPwConv2DOptions,
    OpKind,
    OpOptions,
    ResidualConv2DOptions,
    UnsupportedOptions,
)


@dataclass(frozen=True, eq=False)
class Quantization:
    """Affine quantization real = scale * (q - zero_point), per tensor or along `axis`.

    Scales are kept as float32, exactly as stored in the .tflite file, because TFLite Micro
    derives its integer multipliers from the float32 values.
    """

    scale: np.ndarray  # float32, shape [1] or [channels]
    zero_point: np.ndarray  # int64, same length as scale
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1

    def equals(self, other: Quantization | None) -> bool:
        return (
            other is not None
            and np.array_equal(self.scale, other.scale)
            and np.array_equal(self.zero_point, other.zero_point)
            and (not self.per_channel or self.axis == other.axis)
        )


@dataclass(frozen=True, eq=False)
class Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    data: np.ndarray | None = None  # constant contents (weights, biases, shapes) or None
    quant: Quantization | None = None
    tflite_index: int | None = None  # index in the source .tflite subgraph, for messages
    # A variable tensor (TFLite's is_variable): state an op reads and rewrites in place, kept
    # across invokes and reset to `reset_value` on request (TFLM's ResetVariableTensors).
    is_variable: bool = False
    # Constant int8 values in [-8, 7] that the file stores as packed int4 (TFLite's INT4: two per
    # byte, the low nibble first). TFLM unpacks them to int8 before any kernel runs; so does the
    # reader, and the writer packs them again.
    packed_int4: bool = False

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def reset_value(self) -> int:
        """What a reset fills a variable tensor with: TFLM's ResetVariableTensors writes the
        zero point into int8 tensors and zero bytes into every other type."""
        if self.dtype == np.int8 and self.quant is not None:
            return int(self.quant.zero_point[0])
        return 0

    @property
    def size_bytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def equals(self, other: Tensor) -> bool:
        """Same name, shape, dtype, data and quantization (tflite_index is not compared)."""
        if (self.name, self.shape, self.dtype, self.is_variable) != (
            other.name, other.shape, other.dtype, other.is_variable
        ):
            return False
        if (self.data is None) != (other.data is None):
            return False
        if self.data is not None and not np.array_equal(self.data, other.data):
            return False
        if self.quant is None:
            return other.quant is None
        return self.quant.equals(other.quant)


@dataclass(frozen=True)
class Op:
    kind: OpKind
    inputs: tuple[int | None, ...]  # graph tensor indices; None for an absent optional input
    outputs: tuple[int, ...]
    options: OpOptions

    @property
    def name(self) -> str:
        """TFLite's name for the op, also for unsupported ones."""
        if isinstance(self.options, UnsupportedOptions):
            return self.options.name
        return self.kind.name


def residual_parts(op: Op) -> tuple[Op, Op]:
    """(the CONV_2D, the ADD) a fused residual op (ResidualConv2DOptions) stands for."""
    o = op.options
    assert isinstance(o, ResidualConv2DOptions)
    base = Conv2DOptions(**{f.name: getattr(o, f.name) for f in fields(Conv2DOptions)})
    conv = Op(OpKind.CONV_2D, op.inputs[:3], (o.conv_output,), base)
    return conv, Op(OpKind.ADD, o.add_inputs, op.outputs, o.add)


def dwpw_parts(op: Op) -> tuple[Op, Op]:
    """(the DEPTHWISE_CONV_2D, the pointwise CONV_2D) a fused op (DwPwConv2DOptions) stands
    for."""
    o = op.options
    assert isinstance(o, DwPwConv2DOptions)
    base = DepthwiseConv2DOptions(**{f.name: getattr(o, f.name)
                                     for f in fields(DepthwiseConv2DOptions)})
    dw = Op(OpKind.DEPTHWISE_CONV_2D, op.inputs[:3], (o.dw_output,), base)
    pw_inputs = (o.dw_output, *op.inputs[3:5])
    return dw, Op(OpKind.CONV_2D, pw_inputs, op.outputs, o.pw)


@dataclass(frozen=True, eq=False)
class Graph:
    """One subgraph in execution order. `source` names the file it came from, for errors."""

    tensors: tuple[Tensor, ...]
    ops: tuple[Op, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    name: str = ""
    source: str = "<memory>"
    description: str = field(default="")

    def tensor(self, index: int) -> Tensor:
        return self.tensors[index]

    def readers(self) -> dict[int, list[int]]:
        """For each tensor, the ops that read it (in op order, each once)."""
        out: dict[int, list[int]] = {}
        for i, op in enumerate(self.ops):
            for t in dict.fromkeys(t for t in op.inputs if t is not None):
                out.setdefault(t, []).append(i)
        return out

    def variable_tensors(self) -> list[int]:
        """Indices of the variable (state) tensors, in tensor order."""
        return [i for i, t in enumerate(self.tensors) if t.is_variable]

    def unsupported_ops(self) -> list[tuple[int, Op]]:
        return [(i, op) for i, op in enumerate(self.ops) if op.kind is OpKind.UNSUPPORTED]

    def equals(self, other: Graph) -> bool:
        """Structural equality: same tensors (by content), ops, inputs and outputs."""
        return (
            len(self.tensors) == len(other.tensors)
            and all(a.equals(b) for a, b in zip(self.tensors, other.tensors))
            and self.ops == other.ops
            and self.inputs == other.inputs
            and self.outputs == other.outputs
        )
