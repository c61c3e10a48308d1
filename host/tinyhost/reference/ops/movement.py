"""More data-movement ops: EXPAND_DIMS, SPLIT, SPLIT_V, PACK, UNPACK, GATHER, DEPTH_TO_SPACE,
SPACE_TO_DEPTH.

Like the ops of `shape.py` they copy values without arithmetic (int8 raw values, as TFLite
Micro does: no rescaling between an input's and an output's quantization), so int8 and
float32 behave alike. Axes may be negative, counted from the end as TFLite does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tinyhost.errors import ModelFormatError
from tinyhost.ir import BlockSizeOptions, GatherOptions, Graph, Op, OpKind, PackOptions
from tinyhost.passes.axes import expanded_shape, gather_axes, resolve_axis, split_sizes


def _scalar(value: np.ndarray | None, what: str) -> int:
    if value is None or np.asarray(value).size != 1:
        raise ModelFormatError(f"{what} must be a single value")
    return int(np.asarray(value).reshape(-1)[0])





# -- EXPAND_DIMS -------------------------------------------------------------------------------

def expand_dims(x: np.ndarray, axis: int) -> np.ndarray:
    return x.reshape(expanded_shape(x.shape, axis))


def run_expand_dims(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    return [expand_dims(args[0], _scalar(args[1], "EXPAND_DIMS axis"))]


# -- SPLIT / SPLIT_V ---------------------------------------------------------------------------


def split(x: np.ndarray, axis: int, sizes: Sequence[int]) -> list[np.ndarray]:
    bounds = np.cumsum([0, *sizes])
    a = resolve_axis(axis, x.ndim, "SPLIT")
    return [np.ascontiguousarray(np.take(x, np.arange(bounds[k], bounds[k + 1]), axis=a))
            for k in range(len(sizes))]  # fmt: skip


def run_split(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    x = args[1]
    axis = resolve_axis(_scalar(args[0], "SPLIT axis"), x.ndim, "SPLIT")
    n = len(op.outputs)
    if n == 0 or x.shape[axis] % n:
        raise ModelFormatError(f"SPLIT of dim {x.shape[axis]} into {n} equal parts")
    return split(x, axis, [x.shape[axis] // n] * n)


def run_split_v(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    x = args[0]
    axis = resolve_axis(_scalar(args[2], "SPLIT_V axis"), x.ndim, "SPLIT_V")
    sizes = split_sizes(x.shape[axis], np.asarray(args[1]).reshape(-1).tolist(), "SPLIT_V")
    if len(sizes) != len(op.outputs):
        raise ModelFormatError(f"SPLIT_V: {len(sizes)} sizes for {len(op.outputs)} outputs")
    return split(x, axis, sizes)


# -- PACK / UNPACK -----------------------------------------------------------------------------

def pack(inputs: Sequence[np.ndarray], axis: int) -> np.ndarray:
    rank = inputs[0].ndim + 1
    return np.stack(list(inputs), axis=resolve_axis(axis, rank, "PACK"))


def unpack(x: np.ndarray, axis: int) -> list[np.ndarray]:
    a = resolve_axis(axis, x.ndim, "UNPACK")
    return [np.ascontiguousarray(np.take(x, k, axis=a)) for k in range(x.shape[a])]


def _pack_options(op: Op) -> PackOptions:
    return op.options if isinstance(op.options, PackOptions) else PackOptions()


def run_pack(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    inputs = [a for a in args if a is not None]
    if any(a.shape != inputs[0].shape for a in inputs):
        raise ModelFormatError(f"PACK of shapes {[list(a.shape) for a in inputs]}")
    return [pack(inputs, _pack_options(op).axis)]


def run_unpack(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    outs = unpack(args[0], _pack_options(op).axis)
    if len(outs) != len(op.outputs):
        raise ModelFormatError(f"UNPACK into {len(outs)} values for {len(op.outputs)} outputs")
    return outs


# -- GATHER ------------------------------------------------------------------------------------


def gather(params: np.ndarray, indices: np.ndarray, axis: int, batch_dims: int) -> np.ndarray:
    """params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]; an index
    outside [0, params.shape[axis]) is an error, as in TFLM."""
    size = params.shape[axis]
    flat = np.asarray(indices).reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= size):
        raise ModelFormatError(f"GATHER index outside [0, {size}): {flat.tolist()[:8]}")
    batch = int(np.prod(params.shape[:batch_dims], dtype=np.int64))
    outer = int(np.prod(params.shape[batch_dims:axis], dtype=np.int64))
    inner = int(np.prod(params.shape[axis + 1:], dtype=np.int64))
    coords = int(np.prod(indices.shape[batch_dims:], dtype=np.int64))
    p = params.reshape(batch, outer, size, inner)
    idx = np.asarray(indices, np.int64).reshape(batch, coords)
    out = np.stack([p[b][:, idx[b], :] for b in range(batch)]) if batch else p[:, :, :0]
    shape = (*params.shape[:axis], *indices.shape[batch_dims:], *params.shape[axis + 1:])
    return np.ascontiguousarray(out).reshape(shape)


def run_gather(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    o = op.options if isinstance(op.options, GatherOptions) else GatherOptions()
    params, indices = args[0], np.asarray(args[1])
    axis, batch_dims = gather_axes(params.ndim, indices.ndim, o)
    return [gather(params, indices, axis, batch_dims)]


# -- DEPTH_TO_SPACE / SPACE_TO_DEPTH -----------------------------------------------------------

def depth_to_space(x: np.ndarray, block: int) -> np.ndarray:
    """NHWC: output (n, h*b + i, w*b + j, c) = input (n, h, w, (i*b + j) * C_out + c)."""
    n, h, w, c = x.shape
    if block < 1 or c % (block * block):
        raise ModelFormatError(f"DEPTH_TO_SPACE of depth {c} by block {block}")
    oc = c // (block * block)
    y = x.reshape(n, h, w, block, block, oc).transpose(0, 1, 3, 2, 4, 5)
    return np.ascontiguousarray(y).reshape(n, h * block, w * block, oc)


def space_to_depth(x: np.ndarray, block: int) -> np.ndarray:
    """The inverse of depth_to_space."""
    n, h, w, c = x.shape
    if block < 1 or h % block or w % block:
        raise ModelFormatError(f"SPACE_TO_DEPTH of {h}x{w} by block {block}")
    y = x.reshape(n, h // block, block, w // block, block, c).transpose(0, 1, 3, 2, 4, 5)
    return np.ascontiguousarray(y).reshape(n, h // block, w // block, block * block * c)


def _block(op: Op) -> int:
    if not isinstance(op.options, BlockSizeOptions):
        raise ModelFormatError(f"{op.name} has no block size")
    return op.options.block_size


def _nhwc(x: np.ndarray, op: Op) -> np.ndarray:
    if x.ndim != 4:
        raise ModelFormatError(f"{op.name} of a rank-{x.ndim} input (NHWC only)")
    return x


def run_depth_to_space(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    return [depth_to_space(_nhwc(args[0], op), _block(op))]


def run_space_to_depth(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    return [space_to_depth(_nhwc(args[0], op), _block(op))]


KERNELS = {
    OpKind.EXPAND_DIMS: run_expand_dims,
    OpKind.SPLIT: run_split,
    OpKind.SPLIT_V: run_split_v,
    OpKind.PACK: run_pack,
    OpKind.UNPACK: run_unpack,
    OpKind.GATHER: run_gather,
    OpKind.DEPTH_TO_SPACE: run_depth_to_space,
    OpKind.SPACE_TO_DEPTH: run_space_to_depth,
}
