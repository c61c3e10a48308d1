"""Flash bytes a model needs besides code: weights, biases and requantization data."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.ir import Graph, OpKind

# Bytes of requantization data per output channel (int32 multiplier + int32 shift).
REQUANT_BYTES_PER_CHANNEL = 8
_FILTERED = (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED)
# Ops that rescale with one (multiplier, shift) per input plus one for the output.
_RESCALES = {
    OpKind.ADD: 3,
    OpKind.SUB: 3,
    OpKind.MUL: 1,
    OpKind.QUANTIZE: 1,
    OpKind.LEAKY_RELU: 2,
    OpKind.HARD_SWISH: 2,
    OpKind.MEAN: 1,
    OpKind.SUM: 1,
    OpKind.SOFTMAX: 1,
    OpKind.LOGISTIC: 1,
    OpKind.TANH: 1,
    OpKind.SVDF: 2,
    OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM: 11,  # 8 gate products, 3 inter-gate products
    OpKind.ABS: 1,
    OpKind.RSQRT: 1,
    OpKind.SQUARED_DIFFERENCE: 3,
    OpKind.PRELU: 2,
    OpKind.DIV: 1,
    OpKind.BATCH_MATMUL: 1,
    OpKind.LOG_SOFTMAX: 2,  # the input and its reverse scaling
    OpKind.CUMSUM: 2,
}


# Host-built resize tables (arith/resize.py): int32 per output row and column.
_RESIZE_TABLES = {OpKind.RESIZE_NEAREST_NEIGHBOR: 1, OpKind.RESIZE_BILINEAR: 3}


@dataclass(frozen=True)
class FlashUsage:
    weights_bytes: int  # filters of CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED, other operands
    biases_bytes: int
    requant_bytes: int  # per-channel multipliers and shifts, resize tables: computed on the host
    other_bytes: int  # constant shape operands and the like (not needed at run time)

    @property
    def total_bytes(self) -> int:
        """What the model's data occupies in flash (shape operands are not stored)."""
        return self.weights_bytes + self.biases_bytes + self.requant_bytes


def flash_usage(graph: Graph) -> FlashUsage:
    weights: set[int] = set()
    biases: set[int] = set()
    other: set[int] = set()
    requant = 0
    for op in graph.ops:
        const = [
            (k, t)
            for k, t in enumerate(op.inputs)
            if t is not None and graph.tensors[t].is_constant
        ]
        if op.kind in _FILTERED:
            for k, t in const:
                (weights if k == 1 else biases if k == 2 else other).add(t)
            out = graph.tensors[op.outputs[0]]
            filt = graph.tensors[op.inputs[1]]
            if out.dtype == np.int8 and filt.quant is not None:
                channels = filt.quant.scale.size
                if channels == 1 and (op.kind is not OpKind.FULLY_CONNECTED or filt.packed_int4):
                    channels = out.shape[-1]  # per-tensor weights still get one entry per channel
                requant += REQUANT_BYTES_PER_CHANNEL * channels
            continue
        shape_operand = op.kind in (
            OpKind.RESHAPE,
            OpKind.SQUEEZE,
            OpKind.MEAN,
            OpKind.SUM,
            OpKind.REDUCE_MAX,
            OpKind.PAD,
            OpKind.PADV2,
            OpKind.TRANSPOSE,
            OpKind.STRIDED_SLICE,
            OpKind.EXPAND_DIMS,
            OpKind.SPLIT_V,
            OpKind.RESIZE_BILINEAR,
            OpKind.RESIZE_NEAREST_NEIGHBOR,
            OpKind.ARG_MAX,
            OpKind.ARG_MIN,
        )
        for k, t in const:
            if (op.kind is OpKind.SVDF and k == 3) or (
                op.kind is OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM and 12 <= k <= 15
            ):
                biases.add(t)
                continue
            # SPLIT's axis is its first operand; the others' shape operands follow the data
            shape_slot = k == 0 if op.kind is OpKind.SPLIT else shape_operand and k >= 1
            (other if shape_slot else weights).add(t)
        if op.kind in _RESIZE_TABLES:  # int32 source positions (and weights) per row, column
            _, oh, ow, _ = graph.tensors[op.outputs[0]].shape
            requant += 4 * _RESIZE_TABLES[op.kind] * (oh + ow)
        first = op.inputs[0] if op.inputs else None
        if first is not None and graph.tensors[first].dtype == np.int8:
            requant += REQUANT_BYTES_PER_CHANNEL * _RESCALES.get(op.kind, 0)
    other -= weights | biases
    depthwise = {op.inputs[1] for op in graph.ops if op.kind is OpKind.DEPTHWISE_CONV_2D}
    size = lambda ts: sum(_stored_bytes(graph, t, t in depthwise) for t in ts)  # noqa: E731
    return FlashUsage(size(weights), size(biases - weights), requant, size(other))


def _stored_bytes(graph: Graph, t: int, depthwise: bool) -> int:
    """A constant's bytes on the device: packed int4 weights as the int4 kernels' rows
    (codegen/layout.py s4_rows: round_up8(K) values per row, two per byte; depthwise one run,
    s4_dw_run)."""
    tensor = graph.tensors[t]
    if not tensor.packed_int4 or tensor.data is None or tensor.data.ndim not in (2, 4):
        return tensor.size_bytes
    shape = tensor.shape  # depthwise [1, KH, KW, C]: one run of KH * KW * C (s4_dw_run)
    rows, k = (1, int(np.prod(shape))) if depthwise else (shape[0], int(np.prod(shape[1:])))
    return int(rows) * ((int(k) + 7) // 8 * 4)
