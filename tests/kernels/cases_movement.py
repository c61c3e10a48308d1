"""Kernel test cases of the data movement and raw binary kernels: PAD, CONCATENATION, SPLIT,
TRANSPOSE, STRIDED_SLICE, MAXIMUM, MINIMUM, GATHER, DEPTH_TO_SPACE, SPACE_TO_DEPTH (the
Helium copy, fill and gather loops of kernels_c/reshape/th_nn_shape.h, and VMAX / VMIN) and
PRELU.

Same record format and rules as kernels/cases.py (expected outputs from the NumPy reference,
`tinyhost.reference.ops` or NumPy indexing, never from the C code); the driver side is
tests/kernels/driver/th_kcase_movement.c. Record layouts (ints, then blobs); a shape is its
rank then its dims:
  PAD:           flags, input shape, before[rank], after[rank], pad value; blob input.
  CONCAT:        flags, axis, output shape, n, n input shapes; blobs: the n inputs.
  SPLIT:         flags, axis, input shape, n, n output shapes; blob input. The result is the
                 outputs back to back.
  TRANSPOSE:     flags, input shape, output shape, perm[rank]; blob input.
  STRIDED_SLICE: flags, input shape, output shape, begin[rank], stride[rank]; blob input.
  MAXIMUM / MINIMUM: flags, shape1, shape2, output shape; blobs input1, input2. flags bit 0:
                 the output over input1.
  PRELU:         as MAXIMUM, then input_offset, alpha_offset, output_offset, multiplier_pos,
                 shift_pos, multiplier_neg, shift_neg (args); blobs input, alpha.
  SQUARED_DIFFERENCE: as MAXIMUM, then the fields of arith.binary.SquaredDifferenceParams in
                 order (args).
  EXPAND_CHANNELS: flags, pixels, live count, channels; blobs live (pixels x live count),
                 pixel (the constants, channels), live_channel (uint16, distinct).
  GATHER:        flags, batch, outer, axis size, inner, coords; blobs input, indices (int32).
  DEPTH_TO_SPACE / SPACE_TO_DEPTH: flags, block, input shape (4), output shape (4); blob
                 input.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from kernels.cases import FLAG_IN_PLACE, Draw, encode_record
from tinyhost.arith.binary import PreluParams, SquaredDifferenceParams
from tinyhost.reference.ops.binary import maximum, minimum, prelu_int8, squared_difference_int8
from tinyhost.reference.ops.movement import depth_to_space, gather, space_to_depth, split
from tinyhost.reference.ops.shape import concatenate, pad, transpose


class MoveOp(IntEnum):
    PAD = 100
    CONCAT = 101
    SPLIT = 102
    TRANSPOSE = 103
    STRIDED_SLICE = 104
    MAXIMUM = 105
    MINIMUM = 106
    GATHER = 107
    DEPTH_TO_SPACE = 108
    SPACE_TO_DEPTH = 109
    PRELU = 110
    SQUARED_DIFFERENCE = 111
    EXPAND_CHANNELS = 112


BINARY = (MoveOp.MAXIMUM, MoveOp.MINIMUM, MoveOp.PRELU, MoveOp.SQUARED_DIFFERENCE)


def _shape(s: tuple[int, ...]) -> list[int]:
    return [len(s), *s]


@dataclass(frozen=True)
class MoveCase:
    """One call. inputs: the tensors in blob order; args: the op's integers (see expected)."""

    op: MoveOp
    inputs: tuple[np.ndarray, ...]
    args: tuple[int, ...] = ()
    in_place: bool = False

    @property
    def x(self) -> np.ndarray:
        return self.inputs[0]

    def _slice_index(self) -> tuple[np.ndarray, ...]:
        r = self.x.ndim
        begin, stride, count = self.args[:r], self.args[r:2 * r], self.args[2 * r:]
        axes = [b + s * np.arange(n) for b, s, n in zip(begin, stride, count, strict=True)]
        return np.ix_(*axes)

    def expected(self) -> np.ndarray:
        x, r, op = self.x, self.x.ndim, self.op
        if op == MoveOp.PAD:
            return pad(x, list(zip(self.args[:r], self.args[r:2 * r], strict=True)),
                       self.args[2 * r])
        if op == MoveOp.CONCAT:
            return concatenate(self.inputs, self.args[0])
        if op == MoveOp.SPLIT:
            parts = split(x, self.args[0], self.args[1:])
            return np.concatenate([p.reshape(-1) for p in parts])
        if op == MoveOp.TRANSPOSE:
            return transpose(x, self.args)
        if op == MoveOp.STRIDED_SLICE:
            return x[self._slice_index()]
        if op in BINARY:
            a, b = np.broadcast_arrays(*self.inputs)
            if op == MoveOp.PRELU:
                return prelu_int8(a, b, PreluParams(*self.args))
            if op == MoveOp.SQUARED_DIFFERENCE:
                return squared_difference_int8(a, b, SquaredDifferenceParams(*self.args))
            return (maximum if op == MoveOp.MAXIMUM else minimum)(a, b)
        if op == MoveOp.GATHER:
            return gather(x, self.inputs[1], 2, 1)
        if op == MoveOp.EXPAND_CHANNELS:
            y = np.tile(self.inputs[1], (x.shape[0], 1))
            y[:, self.inputs[2]] = x
            return y
        fn = depth_to_space if op == MoveOp.DEPTH_TO_SPACE else space_to_depth
        return fn(x, self.args[0])

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(self.expected().shape)

    def encode(self, case_id: int, interleaved: bool = False) -> bytes:
        x, r, op = self.x, self.x.ndim, self.op
        out = () if op == MoveOp.GATHER else self.out_shape  # a bad GATHER has no reference
        ints: list[int] = [FLAG_IN_PLACE if self.in_place else 0]
        blobs = [x.astype(np.int8).tobytes()]
        if op == MoveOp.PAD:
            ints += [*_shape(x.shape), *self.args]
        elif op == MoveOp.CONCAT:
            ints += [self.args[0], *_shape(out), len(self.inputs)]
            ints += [v for t in self.inputs for v in _shape(t.shape)]
            blobs = [t.astype(np.int8).tobytes() for t in self.inputs]
        elif op == MoveOp.SPLIT:
            axis, sizes = self.args[0], self.args[1:]
            parts = [tuple(n if d == axis else x.shape[d] for d in range(r)) for n in sizes]
            ints += [axis, *_shape(x.shape), len(sizes)]
            ints += [v for s in parts for v in _shape(s)]
        elif op == MoveOp.TRANSPOSE:
            ints += [*_shape(x.shape), *_shape(out), *self.args]
        elif op == MoveOp.STRIDED_SLICE:
            ints += [*_shape(x.shape), *_shape(out), *self.args[:2 * r]]
        elif op in BINARY:
            b = self.inputs[1]
            ints += [*_shape(x.shape), *_shape(b.shape), *_shape(out), *self.args]
            blobs.append(b.astype(np.int8).tobytes())
        elif op == MoveOp.EXPAND_CHANNELS:
            ints += [*x.shape, self.inputs[1].size]
            blobs += [self.inputs[1].astype(np.int8).tobytes(),
                      self.inputs[2].astype("<u2").tobytes()]
        elif op == MoveOp.GATHER:
            idx = self.inputs[1]
            ints += [*x.shape, idx.shape[1]]
            blobs.append(idx.astype("<i4").tobytes())
        else:
            ints += [self.args[0], *_shape(x.shape), *_shape(out)]
        return encode_record(case_id, op, ints, blobs)


# ---------------------------------------------------------------------------- generation


def _rng(draw: Draw) -> np.random.Generator:
    return np.random.default_rng(draw.int(0, 2**32 - 1))


def _int8(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-128, 128, shape).astype(np.int8)


def _dim(draw: Draw) -> int:
    """Short and long rows: sizes on both sides of 16 and its multiples."""
    return draw.int(1, 6) if draw.bool(0.5) else draw.int(7, 40)


def _shrink(dims: list[int], cap: int, keep: int = -1) -> tuple[int, ...]:
    """Halve the largest dim (other than `keep`) until at most cap elements."""
    while int(np.prod(dims)) > cap:
        i = int(np.argmax([0 if j == keep else n for j, n in enumerate(dims)]))
        dims[i] = max(1, dims[i] // 2)
    return tuple(dims)


def _tensor_shape(draw: Draw, rank: int, cap: int = 4000) -> tuple[int, ...]:
    return _shrink([_dim(draw) for _ in range(rank)], cap)


def pad_case(draw: Draw) -> MoveCase:
    rng = _rng(draw)
    shape = _tensor_shape(draw, draw.int(1, 4), 2500)
    r = len(shape)
    before = [draw.int(0, 3) if draw.bool(0.5) else 0 for _ in range(r)]
    after = [draw.int(0, 18) if draw.bool(0.5) and d == r - 1 else draw.int(0, 2)
             for d in range(r)]
    while int(np.prod([n + a + b for n, a, b in zip(shape, before, after, strict=True)])) > 8000:
        shape = _shrink(list(shape), int(np.prod(shape)) // 2)
    return MoveCase(MoveOp.PAD, (_int8(rng, shape),), (*before, *after, draw.int(-128, 127)))


def concat_case(draw: Draw) -> MoveCase:
    rng = _rng(draw)
    lengths = [_dim(draw) if draw.bool(0.5) else draw.int(1, 3) for _ in range(draw.int(1, 4))]
    base = [_dim(draw) for _ in range(draw.int(1, 4))]
    axis = draw.int(0, len(base) - 1)
    base[axis] = 1
    base = list(_shrink(base, 6000 // sum(lengths)))
    parts = []
    for n in lengths:
        base[axis] = n
        parts.append(_int8(rng, tuple(base)))
    return MoveCase(MoveOp.CONCAT, tuple(parts), (axis,))


def split_case(draw: Draw) -> MoveCase:
    rng = _rng(draw)
    sizes = [draw.int(1, 20) for _ in range(draw.int(1, 4))]
    shape = [_dim(draw) for _ in range(draw.int(1, 4))]
    axis = draw.int(0, len(shape) - 1)
    shape[axis] = sum(sizes)
    return MoveCase(MoveOp.SPLIT, (_int8(rng, _shrink(shape, 3000, axis)),), (axis, *sizes))


def transpose_case(draw: Draw) -> MoveCase:
    rng = _rng(draw)
    shape = _tensor_shape(draw, draw.int(2, 5), 4000)
    perm = [int(p) for p in rng.permutation(len(shape))]
    if draw.bool(0.3):  # a large innermost stride (the halfword- and word-offset gathers)
        shape = (draw.int(2, 12), draw.int(300, 700) if draw.bool(0.5) else draw.int(20, 60))
        shape = (*shape, 1) if draw.bool(0.3) else shape
        perm = [1, 0] if len(shape) == 2 else [1, 0, 2]
    return MoveCase(MoveOp.TRANSPOSE, (_int8(rng, shape),), tuple(perm))


def strided_slice_case(draw: Draw) -> MoveCase:
    rng = _rng(draw)
    shape = _tensor_shape(draw, draw.int(1, 4), 4000)
    if draw.bool(0.3):  # long rows: several 16-byte gathers a run
        shape = (*_tensor_shape(draw, draw.int(0, 2), 40), draw.int(40, 100))
    begin, stride, count = [], [], []
    for n in shape:
        s = draw.int(1, 3) if draw.bool(0.7) else -draw.int(1, 3)
        b = draw.int(0, n - 1)
        room = b // -s + 1 if s < 0 else (n - 1 - b) // s + 1
        begin.append(b)
        stride.append(s)
        count.append(room if draw.bool(0.5) else draw.int(1, room))
    return MoveCase(MoveOp.STRIDED_SLICE, (_int8(rng, shape),), (*begin, *stride, *count))


def _multiplier(draw: Draw) -> tuple[int, int]:
    """(multiplier >= 0, shift in [-31, 30]): mostly normalized, sometimes the extremes."""
    m = draw.int(1 << 30, (1 << 31) - 1) if draw.bool(0.9) else draw.int(0, (1 << 31) - 1)
    shift = draw.int(-10, 3) if draw.bool(0.9) else (-31 if draw.bool(0.5) else 30)
    return m, shift


def min_max_case(draw: Draw, op: MoveOp) -> MoveCase:
    rng = _rng(draw)
    shape = _tensor_shape(draw, draw.int(1, 4), 3000)
    form = draw.int(0, 3)
    other = [shape, shape[-1:], (1,), (*shape[:-1], 1)][form]
    a, b = _int8(rng, shape), _int8(rng, other)
    if draw.bool(0.3):  # equal values: ties pick the common value
        a = np.where(rng.random(shape) < 0.5, np.broadcast_to(b, shape), a).astype(np.int8)
    if draw.bool(0.4):
        a, b = b, a
    in_place = a.shape == tuple(np.broadcast_shapes(a.shape, b.shape)) and draw.bool(0.4)
    args: tuple[int, ...] = ()
    if op == MoveOp.PRELU:
        offsets = (draw.int(-127, 128), draw.int(-127, 128), draw.int(-128, 127))
        args = (*offsets, *_multiplier(draw), *_multiplier(draw))
    elif op == MoveOp.SQUARED_DIFFERENCE:  # inputs rescaled by at most 1/2 (TFLM's choice)
        offsets = (draw.int(-127, 128), draw.int(-127, 128), draw.int(-128, 127))
        m1, m2 = (draw.int(1 << 30, (1 << 31) - 1) for _ in range(2))
        e1, e2 = (-draw.int(1, 3) if draw.bool(0.8) else -draw.int(4, 31) for _ in range(2))
        mo, so = _multiplier(draw)
        lo = draw.int(-128, 100) if draw.bool(0.3) else -128
        args = (*offsets, 7, m1, e1, m2, e2, mo, max(so - 14, -31), lo, 127)
    return MoveCase(op, (a, b), args, in_place)


def gather_case(draw: Draw) -> MoveCase:
    rng = _rng(draw)
    batch, outer, size = draw.int(1, 2), draw.int(1, 4), draw.int(1, 20)
    inner = draw.int(1, 5) if draw.bool(0.4) else draw.int(6, 70)
    coords = draw.int(1, 12)
    x = _int8(rng, (batch, outer, size, inner))
    idx = rng.integers(0, size, (batch, coords)).astype(np.int32)
    return MoveCase(MoveOp.GATHER, (x, idx))


def expand_channels_case(draw: Draw) -> MoveCase:
    """A few dead channels or many, on both sides of 8 and 16 live ones."""
    rng = _rng(draw)
    channels = draw.int(1, 20) if draw.bool(0.5) else draw.int(21, 100)
    live_count = draw.int(1, channels)
    pixels = draw.int(1, 3000 // channels)
    ch = np.sort(rng.choice(channels, live_count, replace=False)).astype(np.uint16)
    return MoveCase(MoveOp.EXPAND_CHANNELS, (_int8(rng, (pixels, live_count)),
                                             _int8(rng, (channels,)), ch))


def space_depth_case(draw: Draw, op: MoveOp) -> MoveCase:
    rng = _rng(draw)
    block, n = draw.int(2, 3), draw.int(1, 2)
    h, w, c = draw.int(1, 6), draw.int(1, 6), draw.int(1, 24)
    shape = (n, h, w, c * block * block) if op == MoveOp.DEPTH_TO_SPACE else \
        (n, h * block, w * block, c)
    return MoveCase(op, (_int8(rng, shape),), (block,))


def move_case(draw: Draw, op: MoveOp) -> MoveCase:
    makers = {MoveOp.PAD: pad_case, MoveOp.CONCAT: concat_case, MoveOp.SPLIT: split_case,
              MoveOp.TRANSPOSE: transpose_case, MoveOp.STRIDED_SLICE: strided_slice_case,
              MoveOp.GATHER: gather_case, MoveOp.EXPAND_CHANNELS: expand_channels_case}
    if op in makers:
        return makers[op](draw)
    if op in BINARY:
        return min_max_case(draw, op)
    return space_depth_case(draw, op)
