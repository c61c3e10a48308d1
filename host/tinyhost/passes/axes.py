"""Axis and shape rules of the data-movement ops, as TFLite Micro resolves them (negative
axes counted from the end): shared by validation and the reference (reference/ops/movement.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from tinyhost.errors import ModelFormatError
from tinyhost.ir import GatherOptions


def resolve_axis(axis: int, rank: int, what: str) -> int:
    """A TFLite axis in [-rank, rank) as a non-negative one."""
    if not -rank <= axis < rank:
        raise ModelFormatError(f"{what}: axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def expanded_shape(shape: Sequence[int], axis: int) -> tuple[int, ...]:
    """TFLM's ExpandDims: axis in [-(rank + 1), rank], a negative one counted from the end."""
    rank = len(shape)
    if not -(rank + 1) <= axis <= rank:
        raise ModelFormatError(f"EXPAND_DIMS axis {axis} is out of range for rank {rank}")
    a = axis + rank + 1 if axis < 0 else axis
    return (*shape[:a], 1, *shape[a:])


def split_sizes(size: int, sizes: Sequence[int], what: str) -> list[int]:
    """SPLIT_V's size_splits with at most one -1 filled in; they must add up to `size`."""
    sizes = [int(s) for s in sizes]
    unknown = [i for i, s in enumerate(sizes) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in sizes):
        raise ModelFormatError(f"{what}: size_splits {sizes}")
    if unknown:
        sizes[unknown[0]] = size - sum(s for s in sizes if s != -1)
    if sum(sizes) != size or any(s < 0 for s in sizes):
        raise ModelFormatError(f"{what}: size_splits {sizes} do not add up to {size}")
    return sizes


def gather_axes(params_rank: int, indices_rank: int, o: GatherOptions) -> tuple[int, int]:
    """(axis, batch_dims), both non-negative, as TFLM's Gather Prepare resolves them."""
    axis = resolve_axis(o.axis, params_rank, "GATHER")
    batch_dims = o.batch_dims + indices_rank if o.batch_dims < 0 else o.batch_dims
    if not 0 <= batch_dims <= min(axis, indices_rank):
        raise ModelFormatError(
            f"GATHER batch_dims {o.batch_dims} with axis {o.axis} and indices of rank "
            f"{indices_rank}"
        )
    return axis, batch_dims
