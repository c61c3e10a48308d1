"""Data-movement ops: RESHAPE, SQUEEZE, TRANSPOSE, STRIDED_SLICE, PAD, PADV2, CONCATENATION.

They copy values without arithmetic, so int8 and float32 behave alike. Two TFLite Micro
facts matter for int8: CONCATENATION copies raw values and therefore refuses inputs whose
scale or zero point differ from the output's (it never rescales), and PAD fills with the
output zero point (PADV2 with its constant operand, also raw).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tinyhost.arith.fused_activation import apply_float_activation
from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import (
    Activation,
    ConcatenationOptions,
    Graph,
    Op,
    OpKind,
    ReshapeOptions,
    SqueezeOptions,
    StridedSliceOptions,
)


def _ints(values: np.ndarray | Sequence[int]) -> list[int]:
    return [int(v) for v in np.asarray(values).reshape(-1)]


# -- RESHAPE ---------------------------------------------------------------------------------

def resolve_shape(new_shape: Sequence[int], size: int) -> tuple[int, ...]:
    """Fill in a single -1 so the element count is `size`."""
    shape = [int(d) for d in new_shape]
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise ModelFormatError(f"RESHAPE target {shape} has more than one -1")
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if unknown:
        if known == 0 or size % known:
            raise ModelFormatError(f"RESHAPE cannot fit {size} elements into {shape}")
        shape[unknown[0]] = size // known
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise ModelFormatError(f"RESHAPE cannot fit {size} elements into {shape}")
    return tuple(shape)


def reshape(x: np.ndarray, new_shape: Sequence[int]) -> np.ndarray:
    return x.reshape(resolve_shape(new_shape, x.size))


def run_reshape(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    # The shape operand first, then the option, then the output tensor itself.
    shape_arg = args[1] if len(args) > 1 else None
    options = op.options
    if shape_arg is not None and np.asarray(shape_arg).size > 0:
        new_shape = _ints(shape_arg)
    elif isinstance(options, ReshapeOptions) and options.new_shape:
        new_shape = list(options.new_shape)
    else:
        new_shape = list(graph.tensors[op.outputs[0]].shape)
    return [reshape(args[0], new_shape)]


# -- SQUEEZE ---------------------------------------------------------------------------------

def squeeze(x: np.ndarray, squeeze_dims: Sequence[int]) -> np.ndarray:
    """Drop the given size-1 dims (negative allowed), or every size-1 dim when none given."""
    if not squeeze_dims:
        return x.reshape([d for d in x.shape if d != 1])
    dims = {d + x.ndim if d < 0 else d for d in squeeze_dims}
    for d in dims:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            raise ModelFormatError(f"SQUEEZE dim {d} of shape {list(x.shape)} is not 1")
    return x.reshape([n for i, n in enumerate(x.shape) if i not in dims])


def run_squeeze(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    options = op.options
    dims = options.squeeze_dims if isinstance(options, SqueezeOptions) else ()
    return [squeeze(args[0], dims)]


# -- TRANSPOSE -------------------------------------------------------------------------------

def transpose(x: np.ndarray, perm: Sequence[int]) -> np.ndarray:
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(x.ndim)):
        raise ModelFormatError(f"TRANSPOSE perm {perm} is not a permutation of {x.ndim} dims")
    return np.ascontiguousarray(np.transpose(x, perm))


def run_transpose(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    return [transpose(args[0], _ints(args[1]))]


# -- STRIDED_SLICE ---------------------------------------------------------------------------

def dense_spec(rank: int, n_spec: int, o: StridedSliceOptions) -> list[tuple[str, int]]:
    """Map each index spec entry to the input dim it slices (TensorFlow's BuildDenseSpec).

    Returns one ('dim', spec_index) per input dim in order, or ('full', -1) for dims an
    ellipsis covers, plus ('new', spec_index) entries where new_axis_mask adds a dim.
    """
    ellipsis = [i for i in range(n_spec) if o.ellipsis_mask >> i & 1]
    if len(ellipsis) > 1:
        raise ModelFormatError("STRIDED_SLICE has more than one ellipsis")
    entries: list[tuple[str, int]] = []
    special = o.ellipsis_mask | o.new_axis_mask
    spec_dims = sum(1 for i in range(n_spec) if not special >> i & 1)
    if spec_dims > rank:
        raise ModelFormatError(f"STRIDED_SLICE indexes {spec_dims} dims of a rank-{rank} input")
    for i in range(n_spec):
        if o.ellipsis_mask >> i & 1:
            entries.extend([("full", -1)] * (rank - spec_dims))
        elif o.new_axis_mask >> i & 1:
            entries.append(("new", i))
        else:
            entries.append(("dim", i))
    if not ellipsis:  # an implicit ellipsis at the end keeps the remaining dims whole
        entries.extend([("full", -1)] * (rank - spec_dims))
    return entries


def _clamp(v: int, lo: int, hi: int) -> int:
    return hi if v > hi else lo if v < lo else v


def slice_bounds(size: int, begin: int, end: int, stride: int, begin_masked: bool,
                 end_masked: bool, shrink: bool, offset: bool) -> tuple[int, int]:
    """(start, stop) as TFLM's StridedSliceStartForAxis / StridedSliceEndForAxis."""
    if stride == 0:
        raise ModelFormatError("STRIDED_SLICE stride must be non-zero")
    start = begin + size if begin < 0 else begin
    start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
    if begin_masked:
        start = 0 if stride > 0 else size - 1
    if shrink:
        return start, start if start >= size else start + 1
    stop = end + start if offset else end
    stop = stop + size if stop < 0 else stop
    stop = _clamp(stop, 0, size) if stride > 0 else _clamp(stop, -1, size - 1)
    if end_masked:
        stop = size if stride > 0 else -1
    return start, stop


def strided_slice(x: np.ndarray, begin: Sequence[int], end: Sequence[int],
                  strides: Sequence[int], o: StridedSliceOptions) -> np.ndarray:
    begin, end, strides = [int(v) for v in begin], [int(v) for v in end], [int(v) for v in strides]
    if not len(begin) == len(end) == len(strides):
        raise ModelFormatError("STRIDED_SLICE begin, end and strides differ in length")
    entries = dense_spec(x.ndim, len(begin), o)
    result = x
    out_shape: list[int] = []
    axis = 0
    for kind, i in entries:
        if kind == "new":
            out_shape.append(1)
            continue
        size = x.shape[axis]
        if kind == "full":
            start, stop, stride, shrink = 0, size, 1, False
        else:
            stride = strides[i]
            shrink = bool(o.shrink_axis_mask >> i & 1)
            start, stop = slice_bounds(size, begin[i], end[i], stride,
                                       bool(o.begin_mask >> i & 1), bool(o.end_mask >> i & 1),
                                       shrink, o.offset)
        # TFLM's loop: from start while (stride > 0 ? i < stop : i > stop).
        index = np.arange(start, stop, stride)
        result = np.take(result, index, axis=axis)
        if shrink:
            if index.size != 1:
                raise ModelFormatError(
                    f"STRIDED_SLICE shrinks dim {axis} of size {size} at index {begin[i]}"
                )
        else:
            out_shape.append(index.size)
        axis += 1
    return np.ascontiguousarray(result).reshape(out_shape)


def run_strided_slice(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    options = op.options
    if not isinstance(options, StridedSliceOptions):
        options = StridedSliceOptions()
    return [strided_slice(args[0], _ints(args[1]), _ints(args[2]), _ints(args[3]), options)]


# -- PAD / PADV2 -----------------------------------------------------------------------------

def pad(x: np.ndarray, paddings: np.ndarray | Sequence[Sequence[int]],
        value: float | int) -> np.ndarray:
    """Pad each dim by (before, after) with `value` (a raw value of x's dtype)."""
    widths = np.asarray(paddings, np.int64).reshape(-1, 2)
    if widths.shape[0] != x.ndim or np.any(widths < 0):
        raise ModelFormatError(
            f"PAD paddings {widths.tolist()} do not fit an input of shape {list(x.shape)}"
        )
    return np.pad(x, [tuple(int(v) for v in w) for w in widths], constant_values=value)


def run_pad(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    x = args[0]
    constant = args[2] if len(args) > 2 else None
    if constant is not None:
        value = np.asarray(constant).reshape(-1)[0]
    elif x.dtype == np.int8:
        out_quant = graph.tensors[op.outputs[0]].quant
        value = int(out_quant.zero_point[0]) if out_quant is not None else 0
    else:
        value = 0
    return [pad(x, args[1], value)]


# -- CONCATENATION ---------------------------------------------------------------------------

def concatenate(inputs: Sequence[np.ndarray], axis: int) -> np.ndarray:
    rank = inputs[0].ndim
    positive = axis + rank if axis < 0 else axis
    if not 0 <= positive < rank:
        raise ModelFormatError(f"CONCATENATION axis {axis} is out of range for rank {rank}")
    return np.concatenate(inputs, axis=positive)


def check_same_quantization(graph: Graph, op: Op) -> None:
    """TFLM's ConcatenationPrepare: every int8 input has exactly the output's quantization."""
    out = graph.tensors[op.outputs[0]]
    for index in op.inputs:
        if index is None:
            continue
        t = graph.tensors[index]
        same = (
            t.quant is not None
            and out.quant is not None
            and np.float32(t.quant.scale[0]) == np.float32(out.quant.scale[0])
            and int(t.quant.zero_point[0]) == int(out.quant.zero_point[0])
        )
        if not same:
            raise UnsupportedModelError(
                f"{graph.source}: {op.name}: int8 input '{t.name}' is quantized unlike output "
                f"'{out.name}'; TFLite Micro does not rescale concatenated inputs"
            )


def run_concatenation(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    options = op.options
    if not isinstance(options, ConcatenationOptions):
        raise ModelFormatError(f"{graph.source}: {op.name} has options {type(options).__name__}")
    inputs = [a for a in args if a is not None]
    out = graph.tensors[op.outputs[0]]
    if out.dtype == np.int8:
        check_same_quantization(graph, op)
    y = concatenate(inputs, options.axis)
    if options.activation is not Activation.NONE:
        if y.dtype != np.float32:
            # TFLM refuses a fused activation on CONCATENATION.
            raise UnsupportedModelError(
                f"{graph.source}: {op.name} with fused {options.activation.name} on {y.dtype}"
            )
        y = apply_float_activation(y, options.activation)
    return [y]


KERNELS = {
    OpKind.RESHAPE: run_reshape,
    OpKind.SQUEEZE: run_squeeze,
    OpKind.TRANSPOSE: run_transpose,
    OpKind.STRIDED_SLICE: run_strided_slice,
    OpKind.PAD: run_pad,
    OpKind.PADV2: run_pad,
    OpKind.CONCATENATION: run_concatenation,
}
