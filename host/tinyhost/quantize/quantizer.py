"""Float graph + calibration statistics -> full-int8 graph (TFLite's int8 quantization spec).

Activations are int8 asymmetric per tensor. Where TFLite Micro's kernels copy raw values or
fix the output scale, quantization is chosen jointly so no requantize op is needed:
RESHAPE, SQUEEZE, TRANSPOSE, STRIDED_SLICE, PAD, PADV2, MAX_POOL_2D, AVERAGE_POOL_2D,
standalone RELU6, CONCATENATION, MAXIMUM, MINIMUM and the data movement of issue 17
(EXPAND_DIMS, SPLIT, SPLIT_V, PACK, UNPACK, GATHER, DEPTH_TO_SPACE, SPACE_TO_DEPTH, the resizes)
share one quantization between input(s) and output(s) (over the union of their ranges); ARG_MAX
/ ARG_MIN outputs and GATHER indices stay int32; SOFTMAX and LOGISTIC outputs are 1/256 with
zero point -128, TANH and L2_NORMALIZATION outputs 1/128 with zero point 0 and LOG_SOFTMAX
outputs 16/256 with zero point 127. Only when two such fixed choices meet
(say a CONCATENATION of a LOGISTIC and a TANH output) is an int8 -> int8 QUANTIZE inserted.
Weights are int8 symmetric per output channel (CONV_2D axis 0, DEPTHWISE_CONV_2D axis 3,
FULLY_CONNECTED axis 0) or per tensor; biases int32 at input_scale * weight_scale.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from tinyhost.errors import InputDataError, UnsupportedModelError
from tinyhost.ir import (
    Activation,
    Graph,
    NoOptions,
    Op,
    OpKind,
    Quantization,
    Tensor,
)
from tinyhost.quantize.bias_correction import corrected_bias
from tinyhost.quantize.calibration import Calibration, Sample, collect_statistics
from tinyhost.quantize.fold import fold_float_patterns
from tinyhost.quantize.ranges import (
    DEFAULT_PERCENTILE,
    METHODS,
    QuantParams,
    choose_quant_params,
    select_range,
)
from tinyhost.quantize.weights import dequantize_weights, quantize_bias, quantize_weights

_INT8 = np.dtype(np.int8)
_FLOAT32 = np.dtype(np.float32)

# Ops whose int8 kernel copies or compares raw values: input and output share quantization.
_SAME_QUANT_FIRST_INPUT = frozenset({
    OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.TRANSPOSE, OpKind.STRIDED_SLICE, OpKind.PAD,
    OpKind.PADV2, OpKind.MAX_POOL_2D, OpKind.AVERAGE_POOL_2D, OpKind.RELU6, OpKind.REDUCE_MAX,
})
# Output quantization the int8 kernels assume (TFLite's quantization spec).
_FIXED_OUTPUT = {
    OpKind.SOFTMAX: QuantParams(np.float32(1 / 256), -128),
    OpKind.LOGISTIC: QuantParams(np.float32(1 / 256), -128),
    OpKind.TANH: QuantParams(np.float32(1 / 128), 0),
    OpKind.LOG_SOFTMAX: QuantParams(np.float32(16 / 256), 127),
    OpKind.L2_NORMALIZATION: QuantParams(np.float32(1 / 128), 0),
}
# MAXIMUM / MINIMUM compare raw int8 values: inputs (constants too) and output share one
# quantization, as CONCATENATION's do (TFLite's int8 spec).
_SAME_QUANT_ALL_INPUTS = frozenset({OpKind.CONCATENATION, OpKind.MAXIMUM, OpKind.MINIMUM})
# Data movement whose int8 kernel copies (or, RESIZE_BILINEAR, interpolates) raw values:
# the data inputs at these positions and every output share one quantization.
_SAME_QUANT_MOVEMENT = {
    OpKind.EXPAND_DIMS: (0,), OpKind.SPLIT: (1,), OpKind.SPLIT_V: (0,), OpKind.UNPACK: (0,),
    OpKind.GATHER: (0,), OpKind.DEPTH_TO_SPACE: (0,), OpKind.SPACE_TO_DEPTH: (0,),
    OpKind.RESIZE_NEAREST_NEIGHBOR: (0,), OpKind.RESIZE_BILINEAR: (0,),
}
# int32 outputs (indices): not quantized.
_INDEX_OUTPUT = frozenset({OpKind.ARG_MAX, OpKind.ARG_MIN})
_WEIGHTED_AXIS = {OpKind.CONV_2D: 0, OpKind.DEPTHWISE_CONV_2D: 3, OpKind.FULLY_CONNECTED: 0}
_ELEMENTWISE = frozenset({OpKind.ADD, OpKind.SUB, OpKind.MUL, OpKind.DIV})
# Ops the int8 runtime executes once quantized.
_QUANTIZABLE = frozenset({
    *_SAME_QUANT_FIRST_INPUT, *_FIXED_OUTPUT, *_WEIGHTED_AXIS, *_ELEMENTWISE,
    OpKind.CONCATENATION, OpKind.RELU, OpKind.LEAKY_RELU, OpKind.HARD_SWISH, OpKind.MEAN,
    OpKind.SUM,
    OpKind.ABS, OpKind.RSQRT, OpKind.ELU, OpKind.SQUARED_DIFFERENCE, OpKind.PRELU, OpKind.FILL,
    *_SAME_QUANT_ALL_INPUTS,
    *_SAME_QUANT_MOVEMENT, *_INDEX_OUTPUT, OpKind.PACK, OpKind.BATCH_MATMUL, OpKind.CUMSUM,
})
# Ops with int8 kernels whose int16 state and gate scales post-training min/max calibration
# does not derive: the int8 model must come from TFLite's converter.
_NOT_CALIBRATED = frozenset({OpKind.SVDF, OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM})
# Builtins TFLite Micro registers with float32 kernels only (neg.cc, exp.cc, elementwise.cc).
_FLOAT_ONLY = frozenset({"NEG", "EXP", "SQRT", "SIN", "COS", "LOG", "SQUARE"})
_INT8_ACTIVATIONS = frozenset({
    Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1,
})


@dataclass(frozen=True)
class QuantizeOptions:
    method: str = "minmax"  # one of ranges.METHODS
    per_channel: bool = True  # weights per output channel (else per tensor)
    int8_io: bool = True  # int8 inputs/outputs; False: float32 with QUANTIZE/DEQUANTIZE
    bias_correction: bool = True
    percentile: float = DEFAULT_PERCENTILE
    weight_bits: int = 8  # 4: CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED weights as int4


def is_float_model(graph: Graph) -> bool:
    """True when no tensor is quantized: the model needs `quantize` before int8 code."""
    return all(t.quant is None and t.dtype not in (np.int8, np.uint8, np.int16)
               for t in graph.tensors)


def check_quantizable(graph: Graph) -> None:
    """Raise UnsupportedModelError naming every reason `graph` cannot be quantized."""
    src = graph.source
    quantized = [(i, t) for i, t in enumerate(graph.tensors)
                 if t.quant is not None or t.dtype in (np.int8, np.uint8, np.int16)]
    if quantized:
        i, t = quantized[0]
        raise UnsupportedModelError(
            f"{src}: the model is already quantized (tensor {i} '{t.name}' is {t.dtype}"
            f"{' with quantization' if t.quant is not None else ''}); quantize takes a float32 "
            "model"
        )
    problems = []
    indices = _index_tensors(graph)
    for i, t in enumerate(graph.tensors):
        if t.data is None and t.dtype != _FLOAT32 and not (i in indices and t.dtype == np.int32):
            problems.append(f"tensor {i} '{t.name}' is a {t.dtype} activation, not float32")
    for k, op in enumerate(graph.ops):
        where = f"op {k} ({op.name})"
        if op.kind in _NOT_CALIBRATED:
            problems.append(
                f"{where}: {op.kind.name} runs in int8 on the device, but `tinyhost quantize` "
                "does not calibrate its int16 state and gates; quantize the model with the "
                "TFLite converter (full-integer) and convert that")
            continue
        if op.name in _FLOAT_ONLY:
            problems.append(f"{where}: TFLite Micro runs {op.name} in float32 only (it has no "
                            "int8 kernel), so the int8 model could not run it either")
            continue
        if op.kind not in _QUANTIZABLE:
            problems.append(f"{where} has no int8 kernel")
            continue
        activation = getattr(op.options, "activation", Activation.NONE)
        if activation not in _INT8_ACTIVATIONS:
            problems.append(f"{where}: fused {activation.name} has no int8 form")
        if op.kind is OpKind.CONCATENATION and activation is not Activation.NONE:
            problems.append(f"{where}: the int8 CONCATENATION takes no fused activation")
        for pos, i in enumerate(op.inputs):
            if i is None:
                continue
            t = graph.tensors[i]
            if t.data is None or t.dtype != _FLOAT32:
                if op.kind in _WEIGHTED_AXIS and pos == 1 and t.data is None:
                    problems.append(f"{where}: weights '{t.name}' are not constant")
                continue
            if not _float_constant_allowed(op.kind, pos):
                problems.append(f"{where}: float constant input {pos} '{t.name}' has no int8 form")
    if problems:
        raise UnsupportedModelError(
            f"{src}: cannot quantize for the int8 runtime: " + "; ".join(problems)
        )


def _index_tensors(graph: Graph) -> set[int]:
    """int32 activations that stay int32: ARG_MAX / ARG_MIN outputs and GATHER indices."""
    found = {t for op in graph.ops if op.kind in _INDEX_OUTPUT for t in op.outputs}
    found |= {op.inputs[1] for op in graph.ops if op.kind is OpKind.GATHER}
    return found


def _float_constant_allowed(kind: OpKind, pos: int) -> bool:
    if kind in _WEIGHTED_AXIS:
        return pos in (1, 2)
    if kind in _ELEMENTWISE or kind in _SAME_QUANT_ALL_INPUTS or kind is OpKind.PACK:
        return True
    if kind is OpKind.SQUARED_DIFFERENCE:
        return True
    if kind in (OpKind.PRELU, OpKind.FILL):
        return pos == 1  # alpha; the fill value
    if kind in _SAME_QUANT_MOVEMENT:
        return pos in _SAME_QUANT_MOVEMENT[kind]
    if kind is OpKind.BATCH_MATMUL:  # a constant operand: per tensor, its own min/max
        return pos in (0, 1)
    return kind is OpKind.PADV2 and pos == 2


def quantize_model(graph: Graph, samples: list[Sample],
                   options: QuantizeOptions | None = None, progress: bool = False) -> Graph:
    """Fold float-only patterns, calibrate on `samples`, quantize: the whole pipeline."""
    check_quantizable(graph)
    folded = fold_float_patterns(graph)
    calibration = collect_statistics(folded, samples, progress=progress)
    return quantize_graph(folded, calibration, options or QuantizeOptions())


def quantize_graph(graph: Graph, calibration: Calibration,
                   options: QuantizeOptions | None = None) -> Graph:
    """The int8 graph for float `graph`, given statistics collected on that same graph."""
    options = options or QuantizeOptions()
    if options.method not in METHODS:
        raise InputDataError(
            f"unknown calibration method '{options.method}'; choose one of {', '.join(METHODS)}"
        )
    check_quantizable(graph)
    if calibration.tensor_names != tuple(t.name for t in graph.tensors):
        raise InputDataError(
            f"{graph.source}: the calibration statistics were collected on another graph"
        )
    params, requantize_edges = _activation_params(graph, calibration, options)
    return _Builder(graph, calibration, options, params, requantize_edges).build()


# -- activation quantization ---------------------------------------------------------------


def _activation_params(graph: Graph, calibration: Calibration, options: QuantizeOptions
                       ) -> tuple[dict[int, QuantParams], set[tuple[int, int]]]:
    """Per activation tensor its int8 parameters, and the (op, input) edges to requantize."""
    activations = [i for i, t in enumerate(graph.tensors)
                   if t.data is None and t.dtype == _FLOAT32]
    parent = {i: i for i in activations}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    fixed: dict[int, QuantParams] = {}
    for op in graph.ops:
        if op.kind in _FIXED_OUTPUT:
            fixed[op.outputs[0]] = _FIXED_OUTPUT[op.kind]

    requantize: set[tuple[int, int]] = set()
    for k, op in enumerate(graph.ops):
        if op.kind in _SAME_QUANT_FIRST_INPUT:
            positions = [0]
        elif op.kind in _SAME_QUANT_ALL_INPUTS or op.kind is OpKind.PACK:
            positions = list(range(len(op.inputs)))
        elif op.kind in _SAME_QUANT_MOVEMENT:
            positions = list(_SAME_QUANT_MOVEMENT[op.kind])
        else:
            continue
        for out in op.outputs[1:]:  # SPLIT / UNPACK: every output alike
            a, b = find(out), find(op.outputs[0])
            if a != b:
                parent[a] = b
        for pos in positions:
            i = op.inputs[pos]
            if i is None or graph.tensors[i].data is not None:
                continue
            a, b = find(i), find(op.outputs[0])
            if a == b:
                continue
            fa, fb = fixed.get(a), fixed.get(b)
            if fa is not None and fb is not None and fa != fb:
                requantize.add((k, pos))
                continue
            parent[a] = b
            if fa is not None:
                fixed[b] = fa

    ranges: dict[int, tuple[float, float]] = {}
    for i in activations:
        stats = calibration.stats.get(i)
        if stats is None:  # never computed (an unused tensor): any valid parameters do
            lo, hi = 0.0, 0.0
        else:
            histogram = stats.histogram() if options.method != "minmax" else None
            lo, hi = select_range(stats.minimum, stats.maximum, histogram, options.method,
                                  options.percentile)
        root = find(i)
        old = ranges.get(root)
        ranges[root] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
    # Constant CONCATENATION / PACK / GATHER / MAXIMUM / MINIMUM inputs share the output's
    # quantization: widen it to hold them.
    for op in graph.ops:
        if op.kind in _RAW_CONSTANTS or op.kind in _SAME_QUANT_ALL_INPUTS:
            root = find(op.outputs[0])
            for pos, i in enumerate(op.inputs):
                t = None if i is None else graph.tensors[i]
                if (t is not None and t.data is not None and t.dtype == _FLOAT32
                        and _float_constant_allowed(op.kind, pos)):
                    data = np.asarray(t.data, np.float64)
                    lo, hi = ranges[root]
                    ranges[root] = (min(lo, float(data.min(initial=0))),
                                    max(hi, float(data.max(initial=0))))

    params: dict[int, QuantParams] = {}
    for i in activations:
        root = find(i)
        params[i] = fixed[root] if root in fixed else choose_quant_params(*ranges[root])
    return params, requantize


_RAW_CONSTANTS = frozenset({OpKind.CONCATENATION, OpKind.PACK, *_SAME_QUANT_MOVEMENT})


def _quantization(p: QuantParams) -> Quantization:
    return Quantization(scale=np.array([p.scale], np.float32),
                        zero_point=np.array([p.zero_point], np.int64))


# -- graph construction ----------------------------------------------------------------------


class _Builder:
    """Assembles the int8 graph; activation tensors keep their indices, constants are
    re-quantized per use (a constant shared by two ops can need two encodings)."""

    def __init__(self, graph: Graph, calibration: Calibration, options: QuantizeOptions,
                 params: dict[int, QuantParams], requantize: set[tuple[int, int]]) -> None:
        self.graph = graph
        self.calibration = calibration
        self.options = options
        self.params = params
        self.requantize = requantize
        self.tensors: list[Tensor] = list(graph.tensors)
        self.claimed: set[int] = set()
        for i, t in enumerate(graph.tensors):
            if t.data is None and i in params:
                self.tensors[i] = dataclasses.replace(
                    t, dtype=_INT8, quant=_quantization(params[i])
                )

    def place(self, old_index: int, tensor: Tensor) -> int:
        """Store a constant's new encoding in its own slot the first time, else append."""
        if old_index not in self.claimed:
            self.claimed.add(old_index)
            self.tensors[old_index] = tensor
            return old_index
        self.tensors.append(tensor)
        return len(self.tensors) - 1

    def append(self, tensor: Tensor) -> int:
        self.tensors.append(tensor)
        return len(self.tensors) - 1

    def build(self) -> Graph:
        g = self.graph
        ops: list[Op] = []
        for k, op in enumerate(g.ops):
            inputs = list(op.inputs)
            if op.kind in _WEIGHTED_AXIS:
                inputs = self.weighted(k, op)
            else:
                for pos, i in enumerate(op.inputs):
                    if i is None or g.tensors[i].data is None:
                        continue
                    if g.tensors[i].dtype == _FLOAT32:
                        inputs[pos] = self.constant_operand(op, pos, i)
                    else:
                        self.claimed.add(i)  # shape, axes, paddings: kept as they are
            for pos in range(len(inputs)):
                if (k, pos) in self.requantize:
                    source = inputs[pos]
                    target = self.params[op.outputs[0]]
                    t = self.tensors[source]
                    new = self.append(dataclasses.replace(
                        t, name=f"{t.name}/requantized", quant=_quantization(target),
                        tflite_index=None,
                    ))
                    ops.append(Op(OpKind.QUANTIZE, (source,), (new,), NoOptions()))
                    inputs[pos] = new
            ops.append(dataclasses.replace(op, inputs=tuple(inputs)))
        inputs, outputs = tuple(g.inputs), tuple(g.outputs)
        if not self.options.int8_io:
            ops, inputs, outputs = self.float_edges(ops)
        description = (f"{g.description}; " if g.description else "") + (
            f"int8 by tinyhost quantize ({self.options.method}, "
            f"{'per-channel' if self.options.per_channel else 'per-tensor'} "
            f"{'int4 ' if self.options.weight_bits == 4 else ''}weights)"
        )
        return dataclasses.replace(g, tensors=tuple(self.tensors), ops=tuple(ops),
                                   inputs=inputs, outputs=outputs, description=description)

    def weighted(self, k: int, op: Op) -> list[int | None]:
        g = self.graph
        inputs = list(op.inputs)
        x_index, w_index = op.inputs[0], op.inputs[1]
        b_index = op.inputs[2] if len(op.inputs) > 2 else None
        w_tensor = g.tensors[w_index]
        weights = np.asarray(w_tensor.data, np.float64)
        bits = self.options.weight_bits
        # TFLM runs int4 FULLY_CONNECTED weights per tensor only
        per_channel = self.options.per_channel and not (
            bits == 4 and op.kind is OpKind.FULLY_CONNECTED)
        axis = _WEIGHTED_AXIS[op.kind] if per_channel else None
        channels = w_tensor.shape[3] if op.kind is OpKind.DEPTHWISE_CONV_2D else w_tensor.shape[0]
        bias = None if b_index is None else np.asarray(g.tensors[b_index].data, np.float64)
        input_scale = float(self.params[x_index].scale)
        qw = quantize_weights(weights, axis, bias, input_scale, bits)
        inputs[1] = self.place(w_index, dataclasses.replace(
            w_tensor, dtype=_INT8, data=qw.values, quant=qw.quant, packed_int4=bits == 4))
        stats = self.calibration.stats.get(x_index)
        if self.options.bias_correction and stats is not None:
            bias = corrected_bias(g, op, bias if bias is not None else np.zeros(channels),
                                  stats.mean, weights, dequantize_weights(qw))
        if bias is None:
            return inputs
        q_bias, bias_quant = quantize_bias(bias, input_scale, qw.quant.scale, channels)
        if b_index is None:
            name = f"{g.tensors[op.outputs[0]].name}/bias"
            new = Tensor(name=name, shape=(channels,), dtype=np.dtype(np.int32), data=q_bias,
                         quant=bias_quant)
            new_index = self.append(new)
            if len(inputs) > 2:
                inputs[2] = new_index
            else:
                inputs.append(new_index)
        else:
            b_tensor = g.tensors[b_index]
            inputs[2] = self.place(b_index, dataclasses.replace(
                b_tensor, dtype=np.dtype(np.int32), data=q_bias.reshape(b_tensor.shape),
                quant=bias_quant))
        return inputs

    def constant_operand(self, op: Op, pos: int, index: int) -> int:
        t = self.graph.tensors[index]
        data = np.asarray(t.data, np.float64)
        if op.kind in _RAW_CONSTANTS or op.kind in _SAME_QUANT_ALL_INPUTS:
            p = self.params[op.outputs[0]]
        elif op.kind in (OpKind.PADV2, OpKind.FILL):
            p = self.params[op.outputs[0]]  # TFLM writes the raw value: output encoding
        else:
            p = choose_quant_params(float(data.min(initial=0)), float(data.max(initial=0)))
        values = p.quantize(data).astype(np.int8).reshape(t.shape)
        return self.place(index, dataclasses.replace(t, dtype=_INT8, data=values,
                                                     quant=_quantization(p)))

    def float_edges(self, ops: list[Op]) -> tuple[list[Op], tuple[int, ...], tuple[int, ...]]:
        """float32 graph inputs and outputs around the int8 graph: QUANTIZE in, DEQUANTIZE out."""
        g = self.graph
        remap: dict[int, int] = {}
        head: list[Op] = []
        for i in g.inputs:
            int8 = self.tensors[i]
            if int8.dtype != _INT8:  # int32 indices stay as they are
                continue
            new = self.append(dataclasses.replace(int8, name=f"{int8.name}_int8",
                                                  tflite_index=None))
            self.tensors[i] = dataclasses.replace(int8, dtype=_FLOAT32, quant=None)
            remap[i] = new
            head.append(Op(OpKind.QUANTIZE, (i,), (new,), NoOptions()))
        tail: list[Op] = []
        out_remap: dict[int, int] = {}
        for o in g.outputs:
            if o in remap:
                raise UnsupportedModelError(
                    f"{g.source}: tensor '{g.tensors[o].name}' is both input and output"
                )
            int8 = self.tensors[o]
            if int8.dtype != _INT8:  # ARG_MAX / ARG_MIN indices
                continue
            new = self.append(dataclasses.replace(int8, name=f"{int8.name}_int8",
                                                  tflite_index=None))
            self.tensors[o] = dataclasses.replace(int8, dtype=_FLOAT32, quant=None)
            out_remap[o] = new
            tail.append(Op(OpKind.DEQUANTIZE, (new,), (o,), NoOptions()))
        both = {**remap, **out_remap}

        def rewire(op: Op) -> Op:
            return dataclasses.replace(
                op,
                inputs=tuple(None if i is None else both.get(i, i) for i in op.inputs),
                outputs=tuple(out_remap.get(o, o) for o in op.outputs),
            )

        body = [rewire(op) for op in ops]
        return [*head, *body, *tail], tuple(g.inputs), tuple(g.outputs)


def fixed_output_params(kind: OpKind) -> QuantParams | None:
    """The output quantization TFLite's int8 spec fixes for `kind`, if any."""
    return _FIXED_OUTPUT.get(kind)


__all__ = [
    "QuantizeOptions",
    "check_quantizable",
    "fixed_output_params",
    "is_float_model",
    "quantize_graph",
    "quantize_model",
]
