"""Runs a graph op by op through the registered reference kernels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from tinyhost.arith.fixedpoint import affine_quantize
from tinyhost.errors import InputDataError, ModelFormatError, TinyhostError, UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind
from tinyhost.passes.validate import check_graph
from tinyhost.reference.ops import KERNELS

# Ops whose constant operands are weights: int8 weights under float activations = hybrid.
_WEIGHTED = frozenset({OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED})


@dataclass(frozen=True)
class State:
    """The values of a graph's variable tensors between two invokes, by tensor index.

    What TFLite Micro keeps in its arena across invokes (SVDF's state): `run` takes one and
    returns the next, so a sequence of invokes is a fold over the inputs; nothing is global.
    """

    values: Mapping[int, np.ndarray]


def initial_state(graph: Graph) -> State:
    """The state after a reset (and before the first invoke): each variable tensor filled
    with its reset value, as TFLM's ResetVariableTensors does."""
    values = {}
    for i in graph.variable_tensors():
        t = graph.tensors[i]
        values[i] = np.full(t.shape, t.reset_value, dtype=t.dtype)
    return State(MappingProxyType(values))


@dataclass(frozen=True)
class RunResult:
    outputs: list[np.ndarray]
    # Every tensor's value by graph tensor index (inputs, intermediates, outputs), when asked for.
    tensors: dict[int, np.ndarray]
    # The variable tensors after this invoke: pass it to the next `run` to carry the state.
    state: State = field(default_factory=lambda: State(MappingProxyType({})))


def check_executable(graph: Graph) -> None:
    """Raise UnsupportedModelError listing every op the reference cannot execute."""
    unsupported = [f"{i} ({op.name})" for i, op in enumerate(graph.ops) if op.kind not in KERNELS]
    hybrid = [
        f"{i} ({op.name})"
        for i, op in enumerate(graph.ops)
        if op.kind in _WEIGHTED and _is_hybrid(graph, op)
    ]
    problems = []
    if unsupported:
        problems.append(f"unsupported ops: {', '.join(unsupported)}")
    if hybrid:
        problems.append(
            f"hybrid ops (float32 activations with int8 weights): {', '.join(hybrid)}; "
            "quantize the whole model to int8 or keep it all float32"
        )
    if problems:
        raise UnsupportedModelError(f"{graph.source}: " + "; ".join(problems))
    check_graph(graph)


def _is_hybrid(graph: Graph, op: Op) -> bool:
    activation = graph.tensors[op.inputs[0]] if op.inputs and op.inputs[0] is not None else None
    weights = (
        graph.tensors[op.inputs[1]] if len(op.inputs) > 1 and op.inputs[1] is not None else None
    )
    return (
        activation is not None
        and weights is not None
        and activation.dtype == np.float32
        and weights.dtype in (np.int8, np.uint8)
    )


def prepare_inputs(graph: Graph, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Check the user's inputs against the graph and convert them where that is unambiguous.

    A float array given to an int8 input is quantized with that input's parameters; a
    missing leading batch dimension of 1 is added.
    """
    if len(arrays) != len(graph.inputs):
        raise InputDataError(
            f"{graph.source}: the model has {len(graph.inputs)} input(s), {len(arrays)} given"
        )
    prepared = []
    for position, (index, array) in enumerate(zip(graph.inputs, arrays)):
        tensor = graph.tensors[index]
        where = f"input {position} '{tensor.name}'"
        array = np.asarray(array)
        if array.shape != tensor.shape:
            if array.size == int(np.prod(tensor.shape)) and tuple(array.shape) == tensor.shape[1:]:
                array = array.reshape(tensor.shape)
            else:
                raise InputDataError(
                    f"{graph.source}: {where} expects shape {list(tensor.shape)}, "
                    f"got {list(array.shape)}"
                )
        if array.dtype == tensor.dtype:
            prepared.append(array)
        elif np.issubdtype(array.dtype, np.floating) and tensor.dtype == np.int8:
            if tensor.quant is None:
                raise InputDataError(f"{graph.source}: {where} is int8 without quantization")
            scale, zero_point = float(tensor.quant.scale[0]), int(tensor.quant.zero_point[0])
            prepared.append(affine_quantize(array, scale, zero_point))
        elif np.issubdtype(array.dtype, np.floating) and tensor.dtype == np.float32:
            prepared.append(array.astype(np.float32))
        else:
            raise InputDataError(
                f"{graph.source}: {where} expects {tensor.dtype}, got {array.dtype}"
            )
    return prepared


def random_inputs(graph: Graph, rng: np.random.Generator) -> list[np.ndarray]:
    """Random arrays for the graph's inputs: integers uniform over the dtype's whole range,
    floats standard normal. For tests and benchmarks that need any valid input."""
    arrays = []
    for index in graph.inputs:
        t = graph.tensors[index]
        if t.dtype.kind == "f":
            arrays.append(rng.standard_normal(t.shape).astype(t.dtype))
        else:
            info = np.iinfo(t.dtype)
            arrays.append(rng.integers(info.min, info.max, t.shape, dtype=t.dtype, endpoint=True))
    return arrays


def run(graph: Graph, inputs: Sequence[np.ndarray], keep_intermediates: bool = False,
        state: State | None = None) -> RunResult:
    """Execute the graph; inputs are converted by `prepare_inputs` first.

    `state` holds the variable tensors' values from the previous invoke (None: as after a
    reset). A kernel of an op that reads variable tensors returns, after its outputs, their
    new values in the op's input order; `RunResult.state` carries them to the next invoke.
    """
    check_executable(graph)
    values: dict[int, np.ndarray] = {}
    for index, tensor in enumerate(graph.tensors):
        if tensor.data is not None:
            values[index] = tensor.data
    start = initial_state(graph) if state is None else state
    variables = graph.variable_tensors()
    for index in variables:
        if index not in start.values:
            raise InputDataError(f"{graph.source}: the state lacks variable tensor {index}")
        values[index] = np.array(start.values[index], dtype=graph.tensors[index].dtype)
    for index, array in zip(graph.inputs, prepare_inputs(graph, inputs)):
        values[index] = array

    last_use = _last_uses(graph)
    for op_index, op in enumerate(graph.ops):
        args = [None if i is None else values[i] for i in op.inputs]
        try:
            results = KERNELS[op.kind](graph, op, args)
        except TinyhostError as e:  # kernels know the op, not where it sits: add that
            raise type(e)(f"{graph.source}: op {op_index} ({op.name}): {e}") from None
        updated = [i for i in op.inputs if i is not None and graph.tensors[i].is_variable]
        for tensor_index, result in zip((*op.outputs, *updated), results):
            tensor = graph.tensors[tensor_index]
            if result.dtype != tensor.dtype or result.size != int(np.prod(tensor.shape)):
                raise ModelFormatError(
                    f"{graph.source}: op {op_index} ({op.name}) computes "
                    f"{result.dtype}{list(result.shape)}, but the model declares output "
                    f"'{tensor.name}' as {tensor.dtype}{list(tensor.shape)}"
                )
            values[tensor_index] = result.reshape(tensor.shape)
        if not keep_intermediates:
            for i in op.inputs:
                if (i is not None and last_use.get(i) == op_index
                        and graph.tensors[i].data is None and not graph.tensors[i].is_variable):
                    values.pop(i, None)

    outputs = [values[i] for i in graph.outputs]
    after = State(MappingProxyType({i: values[i] for i in variables}))
    return RunResult(outputs=outputs, tensors=values if keep_intermediates else {}, state=after)


def _last_uses(graph: Graph) -> dict[int, int]:
    last: dict[int, int] = {}
    for op_index, op in enumerate(graph.ops):
        for i in op.inputs:
            if i is not None:
                last[i] = op_index
    for i in graph.outputs:
        last[i] = len(graph.ops)
    return last
