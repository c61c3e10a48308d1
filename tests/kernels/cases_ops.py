"""Kernel test cases of the per-element kernels: AVERAGE_POOL_2D, MAX_POOL_2D, MUL, MEAN,
ADD, SUB, LUT (th_lut_s8) and SOFTMAX (int8 -> int8).

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
  ADD / SUB:     flags, shape1 (4), shape2 (4), output shape (4), input1_offset,
                 input2_offset, output_offset, left_shift, input1 multiplier, shift, input2
                 multiplier, shift, output multiplier, shift, act min max; blobs input1,
                 input2 and, with flags bit 3, the host's two int32 tables
                 (th_add_s8_tables). flags bit 0: the output over input1.
  ADD16 / SUB16: as ADD / SUB with int16 inputs and output (blobs input1, input2), no
                 tables, no in place.
  LUT:           flags, n; blobs table (256), input. flags bit 0: in place.
  SOFTMAX:       flags, rows, depth, input multiplier, input left shift, diff_min; blob
                 input. SOFTMAX16: the same, int16 output (th_softmax_s8_s16).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from kernels.cases import FLAG_FAST_SCRATCH, FLAG_IN_PLACE, Draw, Op, encode_record
from tinyhost.arith.activations import SoftmaxParams, calculate_input_radius
from tinyhost.arith.elementwise import (
    AddParams,
    MulParams,
    add_go,
    add_input_tables,
    add_prep,
    add_sep,
    mul_prep,
    prep_words,
)
from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.arith.pool import PoolParams, maxpool_prep
from tinyhost.arith.reduce import MeanParams
from tinyhost.reference.ops.elementwise import add_int8, mul_int8, sub_int8
from tinyhost.reference.ops.pool import avg_pool_int8, max_pool_int8
from tinyhost.reference.ops.reduce import mean_int8
from tinyhost.reference.ops.softmax import softmax_int8, softmax_int8_int16

FLAG_NO_SCRATCH = 4
FLAG_TABLES = 8
FLAG_PREPARED = 16
OPS_PER_ELEMENT = (Op.AVGPOOL, Op.MAXPOOL, Op.MUL, Op.MEAN)
OPS_ADD_LUT_SOFTMAX = (Op.ADD, Op.SUB, Op.LUT, Op.SOFTMAX, Op.ADD16, Op.SUB16, Op.SOFTMAX16)
WIDE_OUTPUT = (Op.ADD16, Op.SUB16, Op.SOFTMAX16)  # int16 outputs


@dataclass(frozen=True)
class PoolCase:
    op: Op
    x: np.ndarray
    p: PoolParams
    out_shape: tuple[int, int, int, int]
    no_scratch: bool = False
    fast_scratch: bool = False  # the *_scratch_size_fast scratch where the kernel has one
    in_place_d: int | None = None  # the output this many bytes from the input, one buffer
    # max pool: th_maxpool_s8_prepared on the host's th_maxpool_prep (checked first) for a
    # call given this many scratch bytes
    prepared_scratch: int | None = None

    def expected(self) -> np.ndarray:
        fn = avg_pool_int8 if self.op == Op.AVGPOOL else max_pool_int8
        return fn(self.x, self.p)

    def encode(self, case_id: int, interleaved: bool) -> bytes:
        p = self.p
        flags = FLAG_NO_SCRATCH if self.no_scratch else 0
        flags |= FLAG_FAST_SCRATCH if self.fast_scratch else 0
        flags |= FLAG_IN_PLACE if self.in_place_d is not None else 0
        flags |= FLAG_PREPARED if self.prepared_scratch is not None else 0
        ints = [flags, *self.x.shape, *self.out_shape, p.stride_h, p.stride_w, p.pad_top,
                p.pad_left, p.filter_h, p.filter_w, p.act_min, p.act_max]
        if self.in_place_d is not None:
            ints.append(self.in_place_d)
        blobs = [self.x.astype(np.int8).tobytes()]
        if self.prepared_scratch is not None:
            ints.append(self.prepared_scratch)
            prep = maxpool_prep(p, self.x.shape, self.out_shape, self.prepared_scratch)
            blobs.append(np.asarray(prep_words(prep), "<i4").tobytes())
        return encode_record(case_id, self.op, ints, blobs)


@dataclass(frozen=True)
class MulCase:
    op: Op
    a: np.ndarray
    b: np.ndarray
    p: MulParams
    in_place: bool = False
    prepared: bool = False  # th_mul_s8_prepared on the host's th_mul_prep (checked first)
    line: bool = True  # False: the struct's line fields "not proven" (0), the other paths

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(np.broadcast_shapes(self.a.shape, self.b.shape))

    def expected(self) -> np.ndarray:
        return mul_int8(self.a, self.b, self.p)

    def prep(self) -> dict:
        """The th_mul_prep the case runs on (mul_prep, its line dropped unless `line`)."""
        prep = mul_prep(self.p, self.a.shape, self.b.shape, self.out_shape)
        if not self.line:
            prep.update(line=0, line_a=0, line_t=0, line_k=0, px=0, px_w=[0] * 10)
        return prep

    def encode(self, case_id: int, interleaved: bool) -> bytes:
        p = self.p
        flags = (FLAG_IN_PLACE if self.in_place else 0) | (FLAG_PREPARED if self.prepared else 0)
        ints = [flags, *self.a.shape, *self.b.shape,
                *self.out_shape, p.input1_offset, p.input2_offset, p.output_offset,
                p.output_multiplier, p.output_shift, p.activation_min, p.activation_max]
        blobs = [self.a.astype(np.int8).tobytes(), self.b.astype(np.int8).tobytes()]
        if self.prepared:
            blobs.append(np.asarray(prep_words(self.prep()), "<i4").tobytes())
        return encode_record(case_id, self.op, ints, blobs)


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


@dataclass(frozen=True)
class AddCase:
    """ADD or SUB (op; ADD16 / SUB16: int16 operands and output); tables: through
    th_add_s8_tables with the host's input tables."""

    op: Op
    a: np.ndarray
    b: np.ndarray
    p: AddParams
    in_place: bool = False
    tables: bool = False
    prepared: bool = False  # th_add_s8_prepared on the host's th_add_prep (checked first)
    sep: bool = False  # ... with the host's separable form (add_sep) where it is proven
    sep_bias: int = 0  # added to every C word of the form (tests: a wrong table must show)
    go: bool = False  # ... and the host's choice of its loop (add_go), as the compiled backend

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(np.broadcast_shapes(self.a.shape, self.b.shape))

    def expected(self) -> np.ndarray:
        """The output's bytes as int8 (int16 outputs little-endian, as the kernel writes)."""
        out = (add_int8 if self.op in (Op.ADD, Op.ADD16) else sub_int8)(self.a, self.b, self.p)
        return out.astype("<i2").view(np.int8) if self.op in (Op.ADD16, Op.SUB16) else out

    def encode(self, case_id: int, interleaved: bool) -> bytes:
        p = self.p
        flags = ((FLAG_IN_PLACE if self.in_place else 0) | (FLAG_TABLES if self.tables else 0)
                 | (FLAG_PREPARED if self.prepared else 0))  # fmt: skip
        ints = [flags, *self.a.shape, *self.b.shape, *self.out_shape, p.input1_offset,
                p.input2_offset, p.output_offset, p.left_shift, p.input1_multiplier,
                p.input1_shift, p.input2_multiplier, p.input2_shift, p.output_multiplier,
                p.output_shift, p.activation_min, p.activation_max]
        dtype = "<i2" if self.op in (Op.ADD16, Op.SUB16) else np.int8
        blobs = [self.a.astype(dtype).tobytes(), self.b.astype(dtype).tobytes()]
        if self.tables:
            blobs += [t.astype("<i4").tobytes() for t in add_input_tables(p)]
        if self.prepared:
            prep = add_prep(p, self.a.shape, self.b.shape, self.out_shape, self.op is Op.SUB)
            blobs.append(np.asarray(prep_words(prep), "<i4").tobytes())
            sep = add_sep(p, self.op is Op.SUB) if self.sep and prep["fast"] else None
            if sep is not None:
                words = sep[0].astype(np.int64)
                words[256:] += self.sep_bias
                tail = [sep[1]]
                if self.go:
                    tail += list(add_go(prep, self.tables).values())
                blobs.append(np.append(words, tail).astype("<i4").tobytes())
        return encode_record(case_id, self.op, ints, blobs)


@dataclass(frozen=True)
class LutCase:
    op: Op
    x: np.ndarray  # 1-D
    table: np.ndarray  # 256 int8, indexed by (uint8)x
    in_place: bool = False

    @property
    def out_shape(self) -> tuple[int, ...]:
        return self.x.shape

    def expected(self) -> np.ndarray:
        return self.table[self.x.view(np.uint8)]

    def encode(self, case_id: int, interleaved: bool) -> bytes:
        return encode_record(case_id, self.op, [FLAG_IN_PLACE if self.in_place else 0,
                                                self.x.size],
                             [self.table.astype(np.int8).tobytes(),
                              self.x.astype(np.int8).tobytes()])  # fmt: skip


@dataclass(frozen=True)
class SoftmaxCase:
    op: Op
    x: np.ndarray  # [rows, depth]
    p: SoftmaxParams

    @property
    def out_shape(self) -> tuple[int, ...]:
        return self.x.shape

    def expected(self) -> np.ndarray:
        """The output's bytes as int8 (int16 outputs little-endian, as the kernel writes)."""
        if self.op == Op.SOFTMAX16:
            return softmax_int8_int16(self.x, self.p).astype("<i2").view(np.int8)
        return softmax_int8(self.x, self.p)

    def encode(self, case_id: int, interleaved: bool) -> bytes:
        p = self.p
        ints = [0, *self.x.shape, p.input_multiplier, p.input_left_shift, p.diff_min]
        return encode_record(case_id, self.op, ints, [self.x.astype(np.int8).tobytes()])


OpCase = PoolCase | MulCase | MeanCase | AddCase | LutCase | SoftmaxCase


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


def _binary_operands(draw: Draw) -> tuple[np.ndarray, np.ndarray]:
    """Two int8 operands in one of the broadcast forms (same shape, per channel, scalar,
    spatial, both scalar), either side broadcasting."""
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
    return a, b


def mul_case(draw: Draw) -> MulCase:
    a, b = _binary_operands(draw)
    m, shift = _multiplier(draw, -16, 2)
    lo, hi = _act(draw)
    p = MulParams(input1_offset=draw.int(-127, 128), input2_offset=draw.int(-127, 128),
                  output_offset=draw.int(-128, 127), output_multiplier=m, output_shift=shift,
                  activation_min=lo, activation_max=hi)
    in_place = a.shape == tuple(np.broadcast_shapes(a.shape, b.shape)) and draw.bool(0.3)
    return MulCase(Op.MUL, a, b, p, in_place, prepared=draw.bool(0.4))


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


def _add_quant(draw: Draw) -> tuple[int, int, int, int, int, int, int]:
    """(left_shift, m1, s1, m2, s2, mo, so): mostly as TFLM's CalculateOpDataAdd derives
    them from random scales; sometimes any multiplier >= 0 and shift in [-31, 0] (the
    kernels' whole range, left shifts 0 to 22)."""
    if draw.bool(0.8):
        rng = _rng(draw)
        s1, s2, so = (float(np.float32(2.0 ** rng.uniform(-10, 2))) for _ in range(3))
        twice_max = 2.0 * max(s1, s2)
        m1, e1 = quantize_multiplier(s1 / twice_max)
        m2, e2 = quantize_multiplier(s2 / twice_max)
        real = twice_max / ((1 << 20) * so)
        if not 0.0 < real < 1.0:
            real = 0.75
        mo, eo = quantize_multiplier(real)
        return 20, m1, e1, m2, e2, mo, eo
    def one() -> tuple[int, int]:
        m = draw.int(0, (1 << 31) - 1) if draw.bool(0.3) else draw.int(1 << 30, (1 << 31) - 1)
        return m, draw.int(-31, 0) if draw.bool(0.5) else draw.int(-3, 0)
    (m1, e1), (m2, e2), (mo, eo) = one(), one(), one()
    return draw.int(0, 22), m1, e1, m2, e2, mo, eo


def add_case(draw: Draw, op: Op) -> AddCase:
    """Every broadcast form of MUL's cases (same, per channel, scalar, spatial, both scalar,
    either side), channel counts with tails, in place, with and without tables."""
    a, b = _binary_operands(draw)
    left, m1, e1, m2, e2, mo, eo = _add_quant(draw)
    lo, hi = _act(draw)
    p = AddParams(input1_offset=draw.int(-127, 128), input2_offset=draw.int(-127, 128),
                  output_offset=draw.int(-128, 127), left_shift=left, input1_multiplier=m1,
                  input1_shift=e1, input2_multiplier=m2, input2_shift=e2,
                  output_multiplier=mo, output_shift=eo, activation_min=lo, activation_max=hi)
    in_place = a.shape == tuple(np.broadcast_shapes(a.shape, b.shape)) and draw.bool(0.3)
    return AddCase(op, a, b, p, in_place, tables=draw.bool(0.6), prepared=draw.bool(0.4))


def add16_case(draw: Draw, op: Op) -> AddCase:
    """int16 ADD / SUB: the broadcast forms of add_case, symmetric inputs and a left shift of
    15 as TFLM's int16 kernels have them, or any offsets and left shifts in the kernel's
    range; multipliers and shifts as add_case draws them."""
    a8, b8 = _binary_operands(draw)
    rng = _rng(draw)
    a, b = (rng.integers(-32768, 32768, x.shape).astype(np.int16) for x in (a8, b8))
    _, m1, e1, m2, e2, mo, eo = _add_quant(draw)
    extreme = draw.bool(0.3)
    def off() -> int:
        return draw.int(-32767, 32768) if extreme else 0
    lo, hi = (-32768, 32767) if draw.bool(0.6) else (draw.int(-32768, 0), draw.int(1, 32767))
    p = AddParams(input1_offset=off(), input2_offset=off(), output_offset=off() // 2,
                  left_shift=draw.int(0, 15) if extreme else 15, input1_multiplier=m1,
                  input1_shift=e1, input2_multiplier=m2, input2_shift=e2,
                  output_multiplier=mo, output_shift=eo, activation_min=lo, activation_max=hi)
    return AddCase(op, a, b, p)


def lut_case(draw: Draw) -> LutCase:
    rng = _rng(draw)
    n = draw.int(1, 40) if draw.bool(0.5) else draw.int(41, 3000)
    return LutCase(Op.LUT, _int8(rng, (n,)), _int8(rng, (256,)), in_place=draw.bool(0.3))


def softmax_case(draw: Draw, op: Op = Op.SOFTMAX) -> SoftmaxCase:
    """Rows of 1 to 300 values (tails of every vector width), input scales from tiny to
    large (diff_min cutting off most of a row or none), values spread or near the maximum."""
    rng = _rng(draw)
    rows, depth = draw.int(1, 4), (draw.int(1, 40) if draw.bool(0.6) else draw.int(41, 300))
    scale = 2.0 ** rng.uniform(-8, 0)
    real = min(scale * float(1 << 26), float((1 << 31) - 1))
    multiplier, shift = quantize_multiplier(real)
    p = SoftmaxParams(multiplier, shift, -calculate_input_radius(5, shift))
    x = _int8(rng, (rows, depth))
    if draw.bool(0.3):  # values near the maximum: many exps summed
        x = np.clip(x // 16 + 100, -128, 127).astype(np.int8)
    return SoftmaxCase(op, x, p)


def op_case(draw: Draw, op: Op) -> OpCase:
    if op in (Op.AVGPOOL, Op.MAXPOOL):
        return pool_case(draw, op)
    if op in (Op.ADD, Op.SUB):
        return add_case(draw, op)
    if op in (Op.ADD16, Op.SUB16):
        return add16_case(draw, op)
    if op == Op.LUT:
        return lut_case(draw)
    if op in (Op.SOFTMAX, Op.SOFTMAX16):
        return softmax_case(draw, op)
    return mul_case(draw) if op == Op.MUL else mean_case(draw)


def fits_firmware(case: OpCase) -> bool:
    """Within the default kernel firmware's buffers (kernels/target.py)."""
    from kernels.target import ARENA_CAP, RECORD_CAP, RESULT_CAP

    record = len(case.encode(0, False))
    out = int(np.prod(case.out_shape)) * (2 if case.op in WIDE_OUTPUT else 1)
    return record <= RECORD_CAP and out + 32 <= RESULT_CAP and \
        3 * record + 2 * out + 512 <= ARENA_CAP


def _tie_pairs(acc2: np.ndarray, rq: dict, lo: int, hi: int) -> list[tuple[int, int]]:
    """The (input1, input2) int8 pairs (acc2: their doubled accumulators, [256, 256] from
    -128) whose clamped output without the fast requantization's sign term differs from the
    one with it, at round_zp or round_zp - 1 (th_add_prep / th_mul_prep nosign's proof,
    tinyhost.arith.elementwise._nosign)."""
    y = rq["round_zp"] + ((acc2 * rq["multiplier"] + (1 << 31)) >> 32)
    e = rq["e"]
    want = np.clip((y + np.where(acc2 < 0, -1, 0)) >> e, lo, hi)
    bad = (np.clip(y >> e, lo, hi) != want) | (np.clip((y - 1) >> e, lo, hi) != want)
    return [(int(i) - 128, int(j) - 128) for i, j in zip(*np.nonzero(bad), strict=True)]


def spatial_nosign_cases() -> list[tuple[str, AddCase]]:
    """ADD / SUB spatial broadcasts ([H, W, C] against [H, W, 1], tables, prepared) for each
    th_add_prep nosign (0: the loop with the sign term; 1, 2: without it, 2 at round_zp - 1),
    each sign of the loop (SUB with input1 broadcast: neg), every clamp (none, lower, both),
    C 2-64 (every n % 8), two pixels to many; the parameters searched until add_prep gives
    the nosign wanted (power-of-two scales tie often, random ones rarely). Each pixel holds
    a pair whose output a wrong choice changes (a tie the proof found, _tie_pairs), so the
    loops without the term, or without round_zp - 1, would fail where they do not apply."""
    cases = []
    chans = [2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 31, 33, 63, 64]
    i = 0
    for want in (0, 1, 2):
        for op in (Op.ADD, Op.SUB):
            for first in (True, False):  # the broadcast input: input2, or input1
                for clamp in ("none", "lo", "both"):
                    c = chans[i % len(chans)]
                    hw = [(2, 1), (1, 3), (5, 7), (9, 11)][i % 4]
                    rng = np.random.default_rng(700 + i)
                    for _ in range(2000):
                        pot = want == 0
                        s1, s2, so = (float(2.0 ** int(rng.integers(-7, -2))) if pot else
                                      float(np.float32(rng.uniform(0.01, 0.2)))
                                      for _ in range(3))  # fmt: skip
                        z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
                        # bounds below the zero point too, where the ties of negative
                        # sums lie
                        lo = max(-127, zo - int(rng.integers(0, 60)))
                        lo, hi = {"none": (-128, 127), "lo": (lo, 127),
                                  "both": (lo, min(126, zo + round(6 / so)))}[clamp]
                        if lo > hi:
                            continue
                        twice = 2 * max(s1, s2)
                        m1, e1 = quantize_multiplier(s1 / twice)
                        m2, e2 = quantize_multiplier(s2 / twice)
                        mo, eo = quantize_multiplier(twice / ((1 << 20) * so))
                        p = AddParams(-z1, -z2, zo, 20, m1, e1, m2, e2, mo, eo, lo, hi)
                        big, small = (1, *hw, c), (1, *hw, 1)
                        sa, sb = (big, small) if first else (small, big)
                        prep = add_prep(p, sa, sb, big, op is Op.SUB)
                        if prep["fast"] and prep["nosign"] == want:
                            break
                    else:
                        raise AssertionError(f"no parameters with nosign {want} ({i})")
                    a = rng.integers(-128, 128, sa).astype(np.int8)
                    b = rng.integers(-128, 128, sb).astype(np.int8)
                    t1, t2 = (np.roll(t.astype(np.int64), 128) for t in add_input_tables(p))
                    acc2 = 2 * (t1[:, None] + (-t2 if op is Op.SUB else t2)[None, :])
                    ties = _tie_pairs(acc2, prep["rq"], lo, hi)
                    assert ties or want == 1
                    big_x, small_x = (a, b) if first else (b, a)
                    for k, pix in enumerate(np.ndindex(*hw)):
                        if ties:
                            ta, tb = ties[(k * 7919) % len(ties)]
                            small_x[(0, *pix, 0)] = tb if first else ta
                            big_x[(0, *pix, k % c)] = ta if first else tb
                    case = AddCase(op, a, b, p, in_place=first and i % 2 == 0, tables=True,
                                   prepared=True)
                    cases.append((f"{op.name} {sa} {sb} {clamp} nosign {want}", case))
                    i += 1
    return cases


def add_params_of(s1: float, s2: float, so: float, z1: int, z2: int, zo: int, lo: int,
                   hi: int) -> AddParams:
    """CalculateOpDataAdd's integers for these scales (as add_params)."""
    twice = 2 * max(s1, s2)
    m1, e1 = quantize_multiplier(s1 / twice)
    m2, e2 = quantize_multiplier(s2 / twice)
    mo, eo = quantize_multiplier(twice / ((1 << 20) * so))
    return AddParams(-z1, -z2, zo, 20, m1, e1, m2, e2, mo, eo, lo, hi)


def sep_params(mode: int | None, clamp: str, seed: int, sub: bool) -> AddParams:
    """ADD / SUB parameters whose separable form (add_sep) has sep_mode `mode` (None: not
    proven: power-of-two scales, whose ties the sign term decides), with the activation
    `clamp`: none, lo (act_min above -128 only), both, or wide (bounds the outputs never
    reach, the clamp idle: mode 0)."""
    rng = np.random.default_rng(seed)
    for _ in range(4000):
        if mode is None:
            s1, s2, so = (float(2.0 ** int(rng.integers(-7, -2))) for _ in range(3))
        else:
            s1, s2, so = (float(np.float32(rng.uniform(0.01, 0.2))) for _ in range(3))
        if clamp in ("lo", "wide"):
            so = max(so, 2.5 * max(s1, s2))  # outputs away from the ends (no saturation)
        z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
        lo, hi = {"none": (-128, 127), "lo": (max(-127, zo), 127),
                  "both": (max(-127, zo), min(126, zo + round(6 / so))),
                  "wide": (-127, 126)}[clamp]  # fmt: skip
        if lo > hi:
            continue
        p = add_params_of(s1, s2, so, z1, z2, zo, lo, hi)
        if not add_prep(p, (1,), (1,), (1,), sub)["fast"]:
            continue
        got = add_sep(p, sub)
        if (got[1] if got is not None else None) == mode:
            return p
    raise AssertionError(f"no parameters with sep_mode {mode} ({clamp}, {seed})")


def sep_cases() -> list[tuple[str, AddCase]]:
    """ADD / SUB through the separable form (th_add_prep sep; prepared, the host's tables):
    every sep_mode (0: no clamp or an idle one; 1: the lower bound; 2: both), each form the
    kernel runs it on (spatial with either input broadcast, n % 4 of 0-3 (sep_mix_t), same
    shape, channel with either input broadcast: rows of at most 64 as one flat run
    (sep_chan_flat: its assembly passes and its C rest on both sides of len + 3), long rows
    in column blocks, rows past the output tables' count with and without input tables, a
    small scalar), C 1-70 (every n % 8), tiny to large, in place; and parameters where it is
    not proven (the other paths run). Each case twice: the kernel choosing the loop, and the
    host (th_add_prep go, add_go; name "... go"), as the compiled backend calls it."""
    cases = []
    forms = [("spatial2", (5, 7), 13), ("spatial1", (9, 4), 31), ("same", (3, 11), 9),
             ("chan2", (6, 5), 12), ("chan1", (4, 9), 40), ("chan2", (3, 1), 70),
             ("scalar2", (1, 1), 37), ("spatial2", (2, 1), 2), ("spatial1", (20, 1), 1),
             ("chan2", (17, 16), 3), ("same", (1, 1), 7), ("spatial2", (8, 8), 64),
             ("chan1", (40, 10), 5), ("scalar1", (1, 1), 300),
             # sep_chan_flat: all in C (3 outputs; 63 < len 63 + 3), one assembly pass at
             # exactly len + 3 (22 rows of 3) and a 64-output rest after it (2 rows of 64)
             ("chan2", (1, 3), 1), ("chan1", (3, 7), 3), ("chan2", (2, 11), 3),
             ("chan1", (2, 1), 64),
             # sep_mix_t (four pixels a block): n % 4 of 2 (q 1, 3 pixels left over), 2 (q 0),
             # 3 (q 0, 2 left over), 1 (q 1, 3 left over)
             ("spatial2", (3, 5), 6), ("spatial1", (2, 2), 2), ("spatial2", (1, 6), 3),
             ("spatial1", (7, 1), 5),
             # ... n < 8 as straight-line blocks (sep_mix_short): 7 (2 blocks and 1 pixel
             # left), 3 (2 blocks), 2 (1 block, 2 left)
             ("spatial2", (3, 3), 7), ("spatial1", (4, 2), 3), ("spatial2", (6, 1), 2),
             # ... pixels of 16, each straight-line (sep_rows16): 7 pixels, 1 pixel
             ("spatial1", (7, 1), 16), ("spatial2", (1, 1), 16)]  # fmt: skip
    i = 0
    for mode, clamp in ((0, "none"), (0, "wide"), (1, "lo"), (2, "both"), (None, "none")):
        for op in (Op.ADD, Op.SUB):
            for form, hw, c in forms:
                p = sep_params(mode, clamp, 900 + i, op is Op.SUB)
                rng = np.random.default_rng(1900 + i)
                big = (1, *hw, c)
                other = {"spatial": (1, *hw, 1), "same": big, "chan": (1, 1, 1, c),
                         "scalar": (1, 1, 1, 1)}[form[:-1] if form[-1] in "12" else form]
                sa, sb = (other, big) if form.endswith("1") else (big, other)
                a = rng.integers(-128, 128, sa).astype(np.int8)
                b = rng.integers(-128, 128, sb).astype(np.int8)
                # output 0 (inputs a[0], b[0] in every form) off the clamp's bounds, so a
                # table one step off changes it
                x = np.arange(-128, 128, dtype=np.int8)
                grid = (sub_int8 if op is Op.SUB else add_int8)(x[:, None], x[None, :], p)
                inside = np.argwhere((grid > p.activation_min) & (grid < p.activation_max))
                pick = inside[(7 * i) % len(inside)]
                a.flat[0], b.flat[0] = x[pick[0]], x[pick[1]]
                case = AddCase(op, a, b, p, in_place=sa == big and i % 2 == 0,
                               tables=i % 3 != 0, prepared=True, sep=True)
                # channel rows past chan_lut's count go to the output tables when the
                # call has input tables (th_nn_add_sub_s8.c sep_run)
                luts = form.startswith("chan") and case.tables and hw[0] * hw[1] >= 128
                name = (f"{op.name} {form} {sa} {sb} {clamp} sep_mode {mode}"
                        + (" output tables" if luts else ""))
                cases.append((name, case))
                # the compiled backend's call: the host chose the loop (add_go)
                cases.append((name + " go", replace(case, go=True)))
                i += 1
    return cases


def spatial_mul_nosign_cases() -> list[tuple[str, MulCase]]:
    """MUL spatial broadcasts (right output shifts: the fast loop) for each th_mul_prep
    nosign (0, 1, 2), either side broadcast, clamped or not, C 2-64, ties placed in every
    pixel as spatial_nosign_cases does."""
    cases = []
    chans = [2, 3, 4, 5, 7, 8, 9, 13, 16, 31, 33, 64]
    i = 0
    for want in (0, 1, 2):
        for first in (True, False):
            for clamp in (False, True):
                c = chans[i % len(chans)]
                hw = [(2, 1), (1, 3), (5, 7), (9, 11)][i % 4]
                rng = np.random.default_rng(900 + i)
                for _ in range(4000):
                    pot = want == 0 or rng.integers(0, 4) == 0
                    ratio = (2.0 ** int(rng.integers(1, 8)) if pot
                             else float(rng.uniform(1.5, 200.0)))  # fmt: skip
                    m, sh = quantize_multiplier(1.0 / ratio)
                    z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
                    lo = max(-127, zo - int(rng.integers(0, 60))) if clamp else -128
                    hi = min(126, zo + int(rng.integers(5, 60))) if clamp else 127
                    p = MulParams(-z1, -z2, zo, m, sh, lo, hi)
                    big, small = (1, *hw, c), (1, *hw, 1)
                    sa, sb = (big, small) if first else (small, big)
                    prep = mul_prep(p, sa, sb, big)
                    if prep["fast"] and not prep["left"] and prep["nosign"] == want:
                        break
                else:
                    raise AssertionError(f"no MUL parameters with nosign {want} ({i})")
                a = rng.integers(-128, 128, sa).astype(np.int8)
                b = rng.integers(-128, 128, sb).astype(np.int8)
                x = np.arange(-128, 128, dtype=np.int64)
                acc2 = 2 * ((x[:, None] - z1) * (x[None, :] - z2))
                ties = _tie_pairs(acc2, prep["rq"], lo, hi)
                assert ties or want == 1
                big_x, small_x = (a, b) if first else (b, a)
                for k, pix in enumerate(np.ndindex(*hw)):
                    if ties:
                        ta, tb = ties[(k * 7919) % len(ties)]
                        small_x[(0, *pix, 0)] = tb if first else ta
                        big_x[(0, *pix, k % c)] = ta if first else tb
                # the line dropped: these reach the right-shift loops (nosign's)
                cases.append((f"MUL {sa} {sb} clamp {clamp} nosign {want}",
                              MulCase(Op.MUL, a, b, p, in_place=first and i % 2 == 0,
                                      prepared=True, line=False)))
                i += 1
    return cases


def imm_shift_mul_cases(forms: list[tuple[str, tuple[int, int], int]] | None = None,
                        seed: int = 2900, es: range = range(1, 10)
                        ) -> list[tuple[str, MulCase]]:  # fmt: skip
    """MUL broadcasts on th_mul_s8's immediate-shift loops (int8 outputs, the sign term kept,
    e = -shift an immediate in SSAT: spatial_fast_e1..e8, chanv_fast_e1..e8) for every e in
    1-8 and 9 (no instance: the loops with e in a register), spatial, channel (rows below the
    tables', n % 4 every value, rows repeated in chanv_pack's row or in blocks) and scalar
    (one pixel of the spatial loops, below the scalar table's count, and the clamp's loop),
    either side broadcast, C 1-130; parameters with the sign term needed (nosign 0) and no
    line, each pixel, channel or the scalar with a tie a loop without the sign term (or with
    a wrong shift) would change; prepared (the host's struct, compared with the C one first)
    and the generic entry."""
    cases = []
    forms = forms or [("spatial", (3, 5), 13), ("spatial", (2, 2), 64), ("spatial", (4, 4), 6),
                      ("channel", (2, 5), 27), ("channel", (3, 4), 3), ("channel", (1, 2), 130),
                      ("channel", (2, 3), 70), ("scalar", (1, 1), 45), ("scalar", (2, 3), 30),
                      ("scalar", (1, 1), 3)]  # fmt: skip
    i = 0
    for e in es:
        for bform, hw, c in forms:
            first = i % 2 == 0
            clamp = bform == "scalar" and e % 3 == 0  # the scalar's clamped spatial loop
            rng = np.random.default_rng(seed + i)
            for _ in range(4000):
                m, sh = quantize_multiplier(float(rng.uniform(1.0, 1.999)) * 2.0 ** -(e + 1))
                z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
                lo = max(-127, zo - int(rng.integers(0, 60))) if clamp else -128
                hi = min(126, zo + int(rng.integers(5, 60))) if clamp else 127
                p = MulParams(-z1, -z2, zo, m, sh, lo, hi)
                big = (1, *hw, c)
                small = {"spatial": (1, *hw, 1), "channel": (1, 1, 1, c),
                         "scalar": (1, 1, 1, 1)}[bform]  # fmt: skip
                sa, sb = (big, small) if first else (small, big)
                prep = mul_prep(p, sa, sb, big)
                if sh == -e and prep["fast"] and prep["nosign"] == 0 and not prep["line"]:
                    break
            else:
                raise AssertionError(f"no MUL parameters with nosign 0, e {e} ({i})")
            a = rng.integers(-128, 128, sa).astype(np.int8)
            b = rng.integers(-128, 128, sb).astype(np.int8)
            x = np.arange(-128, 128, dtype=np.int64)
            ties = _tie_pairs(2 * ((x[:, None] - z1) * (x[None, :] - z2)), prep["rq"], lo, hi)
            assert ties
            big_x, small_x = (a, b) if first else (b, a)
            bflat, sflat = big_x.reshape(-1), small_x.reshape(-1)
            if bform == "scalar":  # every tie of one factor value, in turn
                ty = ties[0][1] if first else ties[0][0]
                sflat[0] = ty
                mine = [t for t in ties if (t[1] if first else t[0]) == ty]
                for j in range(bflat.size):
                    bflat[(j * 7) % bflat.size] = mine[j % len(mine)][0 if first else 1]
            else:  # a tie in every pixel (spatial) or column (channel)
                for j in range(sflat.size):
                    ta, tb = ties[(j * 7919) % len(ties)]
                    sflat[j] = tb if first else ta
                    pos = j * c + j % c if bform == "spatial" else (j % (bflat.size // c)) * c + j
                    bflat[pos] = ta if first else tb
            cases.append((f"MUL {bform} {sa} {sb} e {e} clamp {clamp}",
                          MulCase(Op.MUL, a, b, p, in_place=first and i % 4 == 0,
                                  prepared=i % 3 != 0)))
            i += 1
    return cases


def imm_shift_mul_pairs_cases() -> list[tuple[str, MulCase]]:
    """imm_shift_mul_cases' spatial broadcasts where th_mul_s8's word-pair loops run
    (mul_sp2_e1..e8: C % 8 == 0, aligned buffers): C 8 (one pair a pixel), 24 (three), 64,
    up to 35 pixels, e 1-8, either side broadcast, in place and prepared in turn, a tie in
    every pixel; and C 12 / 36 (C % 8 == 4: spatial_fast_e<e>'s C loop) beside them."""
    forms = [("spatial", (1, 1), 8), ("spatial", (5, 7), 8), ("spatial", (3, 3), 24),
             ("spatial", (2, 3), 64), ("spatial", (3, 4), 12), ("spatial", (2, 2), 36)]
    return imm_shift_mul_cases(forms, seed=3900, es=range(1, 9))


def spatial_mul_line_cases() -> list[tuple[str, MulCase]]:
    """MUL spatial broadcasts on the host-proven line (th_mul_prep line, mul_line), and
    channel and one-factor (scalar) broadcasts on the line's rows: either side broadcast,
    clamped (the activation's bounds biting, or the upper one idle: hi 127)
    and unclamped (left shifts 0 and 1: larger ones overflow int32 on the line), C 2-64
    (every n % 4), two pixels to many, every int8 value of x against each pixel's y where
    the tensor is large enough; the parameters searched until mul_line proves a line. The
    same cases with the line dropped run on the other loops (line=False)."""
    cases = []
    chans = [2, 3, 4, 5, 7, 8, 9, 13, 16, 31, 33, 64]
    forms = [("clamp", 0), ("clamp", 0), ("hi127", 0), ("left", 0), ("left", -1)]
    forms += [("clamp", 0), ("left", 0), ("clamp", 0)]  # channel rows, then one factor
    i = 0
    for f_i, (form, left) in enumerate(forms):
        for first in (True, False):
            c = chans[i % len(chans)]
            hw = [(2, 1), (1, 3), (5, 7), (9, 11), (16, 16)][i % 5]
            bform = "spatial" if f_i < 5 else "channel" if f_i < 7 else "scalar"
            rng = np.random.default_rng(1900 + i)
            for _ in range(4000):
                if form == "left":
                    m, sh = quantize_multiplier(2.0 ** left * float(rng.uniform(1.0, 1.99)))
                    z1, z2 = (int(v) for v in rng.integers(-20, 20, 2))
                else:
                    m, sh = quantize_multiplier(1.0 / float(rng.uniform(1.5, 300.0)))
                    z1, z2 = (int(v) for v in rng.integers(-128, 128, 2))
                zo = int(rng.integers(-128, 128))
                lo, hi = -128, 127
                if form == "clamp":
                    lo = max(-127, zo - int(rng.integers(0, 60)))
                    hi = min(126, zo + int(rng.integers(5, 60)))
                elif form == "hi127":
                    lo = max(-127, zo)
                p = MulParams(-z1, -z2, zo, m, sh, lo, hi)
                big = (1, *hw, c)
                small = {"spatial": (1, *hw, 1), "channel": (1, 1, 1, c),
                         "scalar": (1, 1, 1, 1)}[bform]  # fmt: skip
                sa, sb = (big, small) if first else (small, big)
                if mul_prep(p, sa, sb, big)["line"]:
                    break
            else:
                raise AssertionError(f"no MUL parameters with a line ({form}, {i})")
            a = rng.integers(-128, 128, sa).astype(np.int8)
            b = rng.integers(-128, 128, sb).astype(np.int8)
            big_x = a if first else b
            flat = big_x.reshape(-1)
            flat[: min(256, flat.size)] = np.arange(-128, 128)[: min(256, flat.size)]
            for line in (True, False):
                cases.append((f"MUL {bform} {sa} {sb} {form} shift {sh} line {line}",
                              MulCase(Op.MUL, a, b, p, in_place=first and i % 2 == 0,
                                      prepared=True, line=line)))
            i += 1
    return cases


# mul_px_cf_cases' parameters (z1, z2, zo, multiplier, shift, act_min, act_max), one per
# shape: drawn as the sweep draws scales (0.01-0.2) with the clamp forms in turn, kept where
# mul_line proves a line (the search takes minutes; the cases assert the line still holds)
_PX_CF_PARAMS = [
    (34, 52, 110, 2008684099, -2, 110, 127),
    (29, 116, 1, 1286692033, 0, -49, 51),
    (13, -111, -99, 1965205225, 0, -127, -54),
    (-126, -80, 125, 1919270269, -2, 125, 127),
    (-71, -58, 4, 1389493665, 0, -128, 56),
    (-53, -52, 101, 1296770159, -2, 101, 127),
    (-34, -53, 127, 2101717096, -6, 117, 127),
    (69, -103, -38, 1410282929, 0, -55, 15),
    (-30, -39, 18, 1197466335, 0, 5, 127),
    (6, -9, 43, 2001722614, 0, -128, 59),
    (-91, -24, 115, 1582774285, -6, 115, 127),
    (-102, 93, 96, 1098010878, 0, 76, 116),
    (110, -39, 126, 1084860488, -3, 88, 126),
    (114, -47, -127, 2098707552, -4, -127, 127),
    (123, -82, 13, 1092185834, 0, -128, 48),
    (-102, -128, 125, 1586320743, -2, 125, 127),
    (22, 116, -56, 1663746802, 0, -77, -35),
    (-50, 51, 25, 1904837876, -6, 25, 64),
    (104, 16, 88, 1473612709, 0, 83, 127),
    (53, -57, 52, 1692298890, 0, -128, 85),
    (88, -121, 67, 1344635307, -3, 67, 99),
    (-18, 52, 127, 1346659308, -2, 102, 127),
    (-82, -4, 91, 1257270801, 0, 57, 100),
    (106, -17, 126, 1843090120, 0, 102, 127),
    (37, -69, -122, 1269395038, 0, -128, -88),
    (-84, 11, -15, 1595277243, 0, -15, 127),
    (19, -77, 48, 1400221504, 0, 13, 83),
    (39, 96, 31, 1151852642, 0, -16, 47),
]


def mul_px_cf_cases() -> list[tuple[str, MulCase]]:
    """MUL on the clamped line's assembly loops (th_mul_s8.c): the host-chosen pixel loop
    (th_mul_prep px, mul_px: spatial broadcasts and scalar ones below the table's 951
    outputs, C % 4 each of 0-3, one pixel to many; asserted chosen) and the flat channel
    rows (mul_chan_flat: lcm(C, 4) <= 32, runs of rows, the rows left as a shorter run and up
    to three single outputs); clamps relu6-like (lo at the zero point), relu_n1_to_1-like,
    both bounds biting, hi idle (127), lo idle (-128); either side broadcast, in place too;
    every int8 value of x where the tensor is large enough."""
    spatial = [((2, 1), 4), ((3, 5), 5), ((1, 7), 6), ((6, 6), 7), ((4, 2), 17),
               ((2, 3), 30), ((16, 18), 17), ((2, 2), 64)]
    scalar = [(1, 1, 4), (1, 3, 14), (7, 27, 2), (1, 1, 7), (31, 30, 1), (2, 3, 5)]
    channel = [((24, 4), 10), ((3, 3), 3), ((5, 1), 10), ((2, 1), 2), ((9, 1), 3),
               ((7, 2), 6), ((3, 4), 7), ((2, 5), 12), ((3, 1), 14), ((5, 3), 16),
               ((2, 2), 20), ((3, 1), 28), ((4, 2), 32), ((13, 1), 5)]
    shapes = ([("spatial", hw, c) for hw, c in spatial]
              + [("scalar", (h, w), c) for h, w, c in scalar]
              + [("channel", hw, c) for hw, c in channel])  # fmt: skip
    cases = []
    for i, ((bform, hw, c), (z1, z2, zo, m, sh, lo, hi)) in enumerate(
            zip(shapes, _PX_CF_PARAMS, strict=True)):
        first = i % 2 == 0
        rng = np.random.default_rng(3100 + i)
        big = (1, *hw, c)
        small = {"spatial": (1, *hw, 1), "channel": (1, 1, 1, c),
                 "scalar": (1, 1, 1, 1)}[bform]  # fmt: skip
        sa, sb = (big, small) if first else (small, big)
        p = MulParams(-z1, -z2, zo, m, sh, lo, hi)
        prep = mul_prep(p, sa, sb, big)
        assert prep["line"] == (1 if first else 2), (bform, hw, c)
        # the host chooses the pixel loop for every spatial and scalar shape here
        assert (prep["px"] != 0) == (bform != "channel"), (bform, hw, c)
        a = rng.integers(-128, 128, sa).astype(np.int8)
        b = rng.integers(-128, 128, sb).astype(np.int8)
        flat = (a if first else b).reshape(-1)
        flat[: min(256, flat.size)] = np.arange(-128, 128)[: min(256, flat.size)]
        cases.append((f"MUL {bform} {sa} {sb} [{lo}, {hi}] shift {sh}",
                      MulCase(Op.MUL, a, b, p, in_place=first and i % 4 == 0,
                              prepared=True)))
    return cases


def mul_sc_cases() -> list[tuple[str, MulCase]]:
    """MUL int8 scalar broadcasts on the host-chosen scalar loop (th_mul_prep sc, th_mul_s8.c
    mul_sc_e1..e8: e = -shift an immediate, the sign term kept; asserted chosen): e 1-8,
    either side the scalar, outputs 1-447 so that the loop's odd word, odd pair, pairs two a
    pass and n % 4 last outputs each come with and without the others, in place too;
    parameters with the sign term needed (nosign 0) and no line, x holding every output
    where a loop without the sign term, or with another shift, differs (the scalar's ties),
    then every int8 value. Prepared (the loop is the host's choice)."""
    counts = [1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 15, 16, 17, 22, 24, 27, 31, 36, 46, 180, 240,
              447]
    cases = []
    for i, n in enumerate(counts * 2):
        e = 1 + i % 8
        first = i % 2 == 0  # input1 the large one, input2 the scalar
        rng = np.random.default_rng(3300 + i)
        big, small = (1, 1, 1, n), (1, 1, 1, 1)
        sa, sb = (big, small) if first else (small, big)
        for _ in range(4000):
            m, sh = quantize_multiplier(float(rng.uniform(1.0, 1.999)) * 2.0 ** -(e + 1))
            z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
            p = MulParams(-z1, -z2, zo, m, sh, -128, 127)
            prep = mul_prep(p, sa, sb, big)
            if prep["sc"] != 0:
                break
        else:
            raise AssertionError(f"no MUL parameters the scalar loop takes, e {e} ({i})")
        # one output: both inputs are scalars, input1 taken as the factor (as the kernel)
        assert sh == -e and prep["sc"] == (1 if first and n > 1 else 2), (n, e)
        x = np.arange(-128, 128, dtype=np.int64)
        ties = _tie_pairs(2 * ((x[:, None] - z1) * (x[None, :] - z2)), prep["rq"], -128, 127)
        assert ties
        a = rng.integers(-128, 128, sa).astype(np.int8)
        b = rng.integers(-128, 128, sb).astype(np.int8)
        big_x, small_x = (a, b) if first else (b, a)
        bflat, sflat = big_x.reshape(-1), small_x.reshape(-1)
        ty = ties[(i * 7919) % len(ties)][1 if first else 0]
        sflat[0] = ty  # the scalar of a tie: each of its ties in x in turn, then every value
        mine = [t[0 if first else 1] for t in ties if t[1 if first else 0] == ty]
        vals = mine + [v for v in range(-128, 128) if v not in mine]
        bflat[:] = np.array([vals[j % len(vals)] for j in range(n)], np.int8)
        cases.append((f"MUL scalar {sa} {sb} e {e}",
                      MulCase(Op.MUL, a, b, p, in_place=first and i % 3 == 0,
                              prepared=True)))
    return cases
