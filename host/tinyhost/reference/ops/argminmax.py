"""ARG_MAX and ARG_MIN: the index along one axis of the first largest (smallest) value, as
TFLite Micro's ArgMinMax (a strict comparison, so ties keep the first index). The axis is a
constant operand (negative counted from the end); the output drops that axis and is int32
(TFLM refuses int64)."""

from __future__ import annotations

import numpy as np

from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind
from tinyhost.reference.ops.movement import resolve_axis


def arg_min_max(x: np.ndarray, axis: int, largest: bool, dtype: np.dtype) -> np.ndarray:
    a = resolve_axis(axis, x.ndim, "ARG_MAX" if largest else "ARG_MIN")
    if x.shape[a] == 0:
        raise ModelFormatError("ARG_MAX/ARG_MIN over an empty axis")
    # np.argmax/argmin return the first index of the extreme value, as TFLM's loop does.
    found = np.argmax(x, axis=a) if largest else np.argmin(x, axis=a)
    return np.ascontiguousarray(found.astype(dtype))


def _run(largest: bool):
    def run(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
        axis = np.asarray(args[1]).reshape(-1)
        if axis.size != 1:
            raise ModelFormatError(f"{op.name} axis {axis.tolist()}: one value expected")
        dtype = graph.tensors[op.outputs[0]].dtype
        if dtype != np.int32:  # TFLM's ArgMinMax writes int32 only
            raise UnsupportedModelError(f"{op.name} output of type {dtype}: TFLite Micro "
                                        "writes int32 indices only")
        return [arg_min_max(args[0], int(axis[0]), largest, dtype)]

    return run


KERNELS = {OpKind.ARG_MAX: _run(True), OpKind.ARG_MIN: _run(False)}
