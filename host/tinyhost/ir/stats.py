"""Static figures of a graph: MACs per op, weight bytes, activation sizes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.ir.graph import Graph, Op
from tinyhost.ir.ops import OpKind


def op_macs(graph: Graph, op: Op) -> int:
    """Multiply-accumulates of one op, counted as MLPerf Tiny counts them (conv, FC and
    BATCH_MATMUL), and SVDF's feature and time dot products (batches * filters * (input_size +
    memory)).

    Inconsistent ops (which validation refuses) count 0 so that `inspect` can still list them.
    """
    if op.kind is OpKind.SVDF:
        return _svdf_macs(graph, op)
    if op.kind is OpKind.BATCH_MATMUL:
        return _matmul_macs(graph, op)
    if op.kind is OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM:
        return _lstm_macs(graph, op)
    if op.kind not in _RANKS or len(op.inputs) < 2 or op.inputs[1] is None:
        return 0
    rank = _RANKS[op.kind]
    if len(graph.tensors[op.inputs[1]].shape) != rank or not graph.tensors[op.outputs[0]].shape:
        return 0
    if op.kind is OpKind.CONV_2D:
        out = graph.tensors[op.outputs[0]].shape  # N, H, W, Cout
        weights = graph.tensors[op.inputs[1]].shape  # Cout, KH, KW, Cin
        return int(np.prod(out, dtype=np.int64)) * weights[1] * weights[2] * weights[3]
    if op.kind is OpKind.DEPTHWISE_CONV_2D:
        out = graph.tensors[op.outputs[0]].shape  # N, H, W, Cout
        weights = graph.tensors[op.inputs[1]].shape  # 1, KH, KW, Cout
        return int(np.prod(out, dtype=np.int64)) * weights[1] * weights[2]
    if op.kind is OpKind.FULLY_CONNECTED:
        out = graph.tensors[op.outputs[0]].shape
        weights = graph.tensors[op.inputs[1]].shape  # Cout, Cin
        return int(np.prod(out, dtype=np.int64)) * weights[-1]
    return 0


def _svdf_macs(graph: Graph, op: Op) -> int:
    if len(op.inputs) < 3 or any(t is None for t in op.inputs[:3]):
        return 0
    x, wf, wt = (graph.tensors[t].shape for t in op.inputs[:3])  # type: ignore[index]
    if len(x) != 2 or len(wf) != 2 or len(wt) != 2:
        return 0
    return x[0] * wf[0] * (wf[1] + wt[1])


def _matmul_macs(graph: Graph, op: Op) -> int:
    """Output elements times the depth (LHS's last dim, or its second last with adj_x)."""
    if len(op.inputs) < 2 or op.inputs[0] is None or not op.outputs:
        return 0
    lhs = graph.tensors[op.inputs[0]].shape
    if len(lhs) < 2:
        return 0
    depth = lhs[-2] if getattr(op.options, "adj_x", False) else lhs[-1]
    return int(np.prod(graph.tensors[op.outputs[0]].shape, dtype=np.int64)) * depth


def _lstm_macs(graph: Graph, op: Op) -> int:
    """The gates' input and recurrent products: batches * steps * 4 * state * (input + state)
    (the elementwise cell and hidden updates are not counted)."""
    if len(op.inputs) < 6 or op.inputs[0] is None or op.inputs[5] is None:
        return 0
    x, w_rec = graph.tensors[op.inputs[0]].shape, graph.tensors[op.inputs[5]].shape
    if len(x) != 3 or len(w_rec) != 2:
        return 0
    return x[0] * x[1] * 4 * w_rec[0] * (x[2] + w_rec[1])


_RANKS = {OpKind.CONV_2D: 4, OpKind.DEPTHWISE_CONV_2D: 4, OpKind.FULLY_CONNECTED: 2}


@dataclass(frozen=True)
class GraphStats:
    macs: int
    weight_bytes: int  # every constant tensor: weights, biases, shape operands
    largest_activation_bytes: int
    largest_activation: str


def graph_stats(graph: Graph) -> GraphStats:
    activations = [t for t in graph.tensors if not t.is_constant]
    largest = max(activations, key=lambda t: t.size_bytes, default=None)
    return GraphStats(
        macs=sum(op_macs(graph, op) for op in graph.ops if op.kind is not OpKind.UNSUPPORTED),
        weight_bytes=sum(t.size_bytes for t in graph.tensors if t.is_constant),
        largest_activation_bytes=0 if largest is None else largest.size_bytes,
        largest_activation="" if largest is None else largest.name,
    )
