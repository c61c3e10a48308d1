"""Kernel test cases of the per-element kernels: AVERAGE_POOL_2D, MAX_POOL_2D, MUL, MEAN.

Same record format and rules as kernels/cases.py (expected outputs from the NumPy reference,
`tinyhost.reference.ops`, never from the C code). Record layouts (ints, then blobs):
  AVGPOOL / MAXPOOL: flags, input dims (4), output dims (4), stride h w, padding top left,
                 filter h w, act min max; blob input. flags bit 2: no scratch (the direct
                 paths); bit 1: the kernel's fast scratch (*_scratch_size_fast) if larger.
  MUL:           flags, shape1 (4), shape2 (4), output shape (4), input1_offset,
                 input2_offset, output_offset, multiplier, shift, act min max; blobs input1,
                 input2. flags bit 0: the output over input1.
  MEAN:          flags, input shape (4), axis mask, input zero point, output zero point,
                 multiplier, shift, output shape (4, kept dims); blob input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.cases import FLAG_FAST_SCRATCH, FLAG_IN_PLACE, Draw, Op, encode_record
from tinyhost.arith.elementwise import MulParams
from tinyhost.arith.pool import PoolParams
from tinyhost.arith.reduce import MeanParams
from tinyhost.reference.ops.elementwise import mul_int8
from tinyhost.reference.ops.pool import avg_pool_int8, max_pool_int8
from tinyhost.reference.ops.reduce import mean_int8

FLAG_NO_SCRATCH = 4
OPS_PER_ELEMENT = (Op.AVGPOOL, Op.MAXPOOL, Op.MUL, Op.MEAN)


@dataclass(frozen=True)
class PoolCase:
    op: Op
    x: np.ndarray
    p: PoolParams
    out_shape: tuple[int, int, int, int]
    no_scratch: bool = False
    fast_scratch: bool = False  # the *_scratch_size_fast scratch where the kernel has one

    def expected(self) -> np.ndarray:
        fn = avg_pool_int8 if self.op == Op.AVGPOOL else max_pool_int8
        return fn(self.x, self.p)

    def encode(self, case_id: int, interleaved: bool) -> bytes:
        p = self.p
        flags = FLAG_NO_SCRATCH if self.no_scratch else 0
        flags |= FLAG_FAST_SCRATCH if self.fast_scratch else 0
        ints = [flags, *self.x.shape, *self.out_shape, p.stride_h, p.stride_w, p.pad_top,
                p.pad_left, p.filter_h, p.filter_w, p.act_min, p.act_max]
        return encode_record(case_id, self.op, ints, [self.x.astype(np.int8).tobytes()])


@dataclass(frozen=True)
class MulCase:
    op: Op
    a: np.ndarray
    b: np.ndarray
    p: MulParams
    in_place: bool = False

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(np.broadcast_shapes(self.a.shape, self.b.shape))

    def expected(self) -> np.ndarray:
        return mul_int8(self.a, self.b, self.p)

    def encode(self, case_id: int, interleaved: bool) -> bytes:
        p = self.p
        ints = [FLAG_IN_PLACE if self.in_place else 0, *self.a.shape, *self.b.shape,
                *self.out_shape, p.input1_offset, p.input2_offset, p.output_offset,
                p.output_multiplier, p.output_shift, p.activation_min, p.activation_max]
        return encode_record(case_id, self.op, ints, [self.a.astype(np.int8).tobytes(),
                                                      self.b.astype(np.int8).tobytes()])


@dataclass(frozen=True)
class MeanCase:
    op: Op
    x: np.ndarray
    p: MeanParams

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(1 if d in self.p.axes else n for d, n in enumerate(self.x.shape))

    def expected(self) -> np.ndarray:
        return mean_int8(self.x, self.p)

    def encode(self, case_id: int, interleaved: bool) -> bytes:
        p = self.p
        mask = sum(1 << a for a in p.axes)
        ints = [0, *self.x.shape, mask, p.input_zero_point, p.output_zero_point, p.multiplier,
                p.shift, *self.out_shape]
        return encode_record(case_id, self.op, ints, [self.x.astype(np.int8).tobytes()])


OpCase = PoolCase | MulCase | MeanCase


def _rng(draw: Draw) -> np.random.Generator:
    return np.random.default_rng(draw.int(0, 2**32 - 1))


def _int8(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-128, 128, shape).astype(np.int8)


def _act(draw: Draw) -> tuple[int, int]:
    if draw.bool(0.6):
        return -128, 127
    lo = draw.int(-128, 100)
    return lo, draw.int(lo, 127)


def _channels(draw: Draw) -> int:
    """Tails on both sides of the 4-, 8- and 16-lane widths, and wide rows."""
    return draw.int(1, 20) if draw.bool(0.6) else draw.int(21, 70)


def _window(draw: Draw, size: int, k: int, stride: int) -> tuple[int, int, int]:
    """(pad before, pad after, output size), SAME or VALID as TFLite pads."""
    if draw.bool(0.5):
        out = -(-size // stride)
        total = max((out - 1) * stride + k - size, 0)
        return total // 2, total - total // 2, out
    return 0, 0, (size - k) // stride + 1


def pool_case(draw: Draw, op: Op) -> PoolCase:
    rng = _rng(draw)
    n = draw.int(1, 2)
    c = _channels(draw)
    h, w = draw.int(1, 14), draw.int(1, 14)
    if draw.bool(0.2):  # global pooling (one output pixel: the direct path)
        kh, kw, stride = h, w, 1
    else:
        kh, kw, stride = draw.int(1, min(h, 6)), draw.int(1, min(w, 6)), draw.int(1, 3)
    pt, pb, oh = _window(draw, h, kh, stride)
    pl, pr, ow = _window(draw, w, kw, stride)
    lo, hi = _act(draw)
    p = PoolParams(stride_h=stride, stride_w=stride, filter_h=kh, filter_w=kw, pad_top=pt,
                   pad_left=pl, pad_bottom=pb, pad_right=pr, act_min=lo, act_max=hi)
    return PoolCase(op, _int8(rng, (n, h, w, c)), p, (n, oh, ow, c),
                    no_scratch=draw.bool(0.3))


def _multiplier(draw: Draw, lo: int, hi: int) -> tuple[int, int]:
    """(multiplier >= 0, shift): mostly normalized in [2^30, 2^31), shifts in [lo, hi],
    sometimes the extremes of the kernels' range."""
    m = draw.int(1 << 30, (1 << 31) - 1)
    if draw.bool(0.1):
        m = draw.int(0, 1 << 30) if draw.bool(0.5) else (1 << 31) - 1
    shift = draw.int(lo, hi) if draw.bool(0.9) else (-31 if draw.bool(0.5) else 30)
    return m, shift


def mul_case(draw: Draw) -> MulCase:
    rng = _rng(draw)
    h, w, c = draw.int(1, 12), draw.int(1, 12), _channels(draw)
    shape = (1, h, w, c)
    form = draw.int(0, 4)
    other = [shape, (1, 1, 1, c), (1, 1, 1, 1), (1, h, w, 1), (1, 1, 1, 1)][form]
    a, b = _int8(rng, shape), _int8(rng, other)
    if form == 4:  # both scalar
        a = _int8(rng, other)
    if draw.bool(0.5):
        a, b = b, a
    m, shift = _multiplier(draw, -16, 2)
    lo, hi = _act(draw)
    p = MulParams(input1_offset=draw.int(-127, 128), input2_offset=draw.int(-127, 128),
                  output_offset=draw.int(-128, 127), output_multiplier=m, output_shift=shift,
                  activation_min=lo, activation_max=hi)
    in_place = a.shape == tuple(np.broadcast_shapes(a.shape, b.shape)) and draw.bool(0.3)
    return MulCase(Op.MUL, a, b, p, in_place)


def mean_case(draw: Draw) -> MeanCase:
    rng = _rng(draw)
    n = 1 if draw.bool(0.8) else 2
    h, w, c = draw.int(1, 30), draw.int(1, 30), _channels(draw)
    if draw.bool(0.15):  # more than 256 rows: the int16 sums move to int32 more than once
        h, w, c = draw.int(20, 40), draw.int(14, 20), draw.int(1, 10)
    axes = [(1, 2), (1, 2), (1, 2), (1,), (2,), (1, 2, 3), (3,)][draw.int(0, 6)]
    m, shift = _multiplier(draw, -8, 3)
    p = MeanParams(axes=axes, keep_dims=True, input_zero_point=draw.int(-128, 127),
                   output_zero_point=draw.int(-128, 127), multiplier=m, shift=shift)
    return MeanCase(Op.MEAN, _int8(rng, (n, h, w, c)), p)


def op_case(draw: Draw, op: Op) -> OpCase:
    if op in (Op.AVGPOOL, Op.MAXPOOL):
        return pool_case(draw, op)
    return mul_case(draw) if op == Op.MUL else mean_case(draw)


def fits_firmware(case: OpCase) -> bool:
    """Within the default kernel firmware's buffers (kernels/target.py)."""
    from kernels.target import ARENA_CAP, RECORD_CAP, RESULT_CAP

    record = len(case.encode(0, False))
    out = int(np.prod(case.out_shape))
    return record <= RECORD_CAP and out + 32 <= RESULT_CAP and \
        3 * record + 2 * out + 512 <= ARENA_CAP
