"""Kernel test cases: random generation, binary records for the C drivers, expectations.

A case is a kernel call (op code = which public C function), its arrays and its integer
params. `encode()` writes the record format of tests/kernels/driver/th_kcase.h; the
expected output always comes from the NumPy reference (`tinyhost.reference.ops`), never
from the C code.

Record layouts (ints, then blobs):
  CONV_* / DW_*: flags, input dims (4), filter dims (4), output dims (4), input_offset,
                 output_offset, stride h w, padding top left, dilation h w, act min max,
                 [ch_mult for DW]; blobs input, filter (layout of the build), bias (empty =
                 none), multiplier int32[Cout], shift int32[Cout]. flags bit 0: in place.
  FC / FC_PER_CHANNEL: flags, batches, cin, cout, input_offset, filter_offset,
                 output_offset, act min max; blobs input, weights (layout of the build),
                 bias, multiplier int32[1 or Cout], shift.
  FC_W16: flags, batches, cin, cout, output_offset, act min max, mult_step, fast; blobs
                 input, int16 weights and bias as codegen/widen.py makes them, multiplier
                 int32[1 or Cout], shift (per channel when the multiplier has Cout values
                 and Cout > 1; filter_offset must be 0).
Generation draws every choice through a `Draw` (hypothesis in host tests, a seeded NumPy
generator for the QEMU tests), so both explore the same space.
"""

from __future__ import annotations

import dataclasses
import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

import numpy as np

from tinyhost.arith.conv import ConvParams, FullyConnectedParams
from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.codegen.layout import conv_filter_layout, fc_weights_layout
from tinyhost.codegen.widen import (
    FC_W16_TABLE_MIN_COUT,
    fc_fast_ok,
    fc_w16_bias,
    fc_w16_rq_table,
    fc_w16_weights,
)
from tinyhost.reference.ops.conv import conv2d_int8, depthwise_conv2d_int8
from tinyhost.reference.ops.fully_connected import fully_connected_int8

CASE_MAGIC = 0x434B4854
RESULT_MAGIC = 0x524B4854
FLAG_IN_PLACE = 1
FLAG_FAST_SCRATCH = 2  # depthwise, conv, maxpool, fc: the kernel's larger, faster scratch size


class Op(IntEnum):
    CONV = 1
    CONV_1X1 = 2
    CONV_3X3 = 3
    CONV_GENERAL = 4
    DW = 10
    DW_3X3 = 11
    DW_GENERAL = 12
    FC = 20
    FC_PER_CHANNEL = 21
    FC_W16 = 22  # th_fc_s8_w16: host-widened int16 weights (the compiled backend's FC)
    AVGPOOL = 30  # kernels/cases_ops.py: pools, MUL and MEAN
    MAXPOOL = 31
    MUL = 40
    ADD = 41  # kernels/cases_ops.py: ADD / SUB (with and without the host's tables), LUT,
    SUB = 42  # SOFTMAX, ADD / SUB int16
    ADD16 = 43
    SUB16 = 44
    MEAN = 50
    LUT = 60
    SOFTMAX = 61
    SOFTMAX16 = 62  # int8 in, int16 out
    BUILD_FLAGS = 90


CONV_OPS = (Op.CONV, Op.CONV_1X1, Op.CONV_3X3, Op.CONV_GENERAL)
DW_OPS = (Op.DW, Op.DW_3X3, Op.DW_GENERAL)
FC_OPS = (Op.FC, Op.FC_PER_CHANNEL)


class Draw(Protocol):
    def int(self, lo: int, hi: int) -> int: ...  # inclusive
    def bool(self, p_true: float = 0.5) -> bool: ...


class RngDraw:
    """Draw from a seeded NumPy generator (target tests, bench)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def int(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    def bool(self, p_true: float = 0.5) -> bool:
        return bool(self.rng.random() < p_true)


def _blob(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data + b"\0" * (-len(data) % 4)


def encode_record(case_id: int, op: int, ints: list[int], blobs: list[bytes]) -> bytes:
    body = struct.pack("<II", case_id, op) + struct.pack("<I", len(ints))
    body += struct.pack(f"<{len(ints)}i", *ints) + struct.pack("<I", len(blobs))
    body += b"".join(_blob(b) for b in blobs)
    return struct.pack("<II", CASE_MAGIC, 8 + len(body)) + body


@dataclass(frozen=True)
class Result:
    case_id: int
    status: int
    data: bytes


def decode_results(buf: bytes) -> list[Result]:
    results, pos = [], 0
    while pos < len(buf):
        magic, total, case_id, status, n = struct.unpack_from("<IIIiI", buf, pos)
        if magic != RESULT_MAGIC or total < 20 or pos + total > len(buf):
            raise ValueError(f"corrupt result record at byte {pos}")
        results.append(Result(case_id, status, bytes(buf[pos + 20:pos + 20 + n])))
        pos += total
    return results


def build_flags_record(case_id: int = 0) -> bytes:
    return encode_record(case_id, Op.BUILD_FLAGS, [], [])


# --------------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class ConvCase:
    """A CONV_2D or DEPTHWISE_CONV_2D call. w: OHWI (conv) or [1, KH, KW, Cout] (dw)."""

    op: Op
    x: np.ndarray
    w: np.ndarray
    bias: np.ndarray | None
    p: ConvParams
    out_shape: tuple[int, int, int, int]
    in_place: bool = False
    fast_scratch: bool = False

    @property
    def depthwise(self) -> bool:
        return self.op in DW_OPS

    @property
    def macs(self) -> int:
        n, oh, ow, oc = self.out_shape
        kh, kw = self.w.shape[1], self.w.shape[2]
        per_out = kh * kw * (1 if self.depthwise else self.w.shape[3])
        return n * oh * ow * oc * per_out

    def clamped(self) -> ConvCase:
        """The same call with an activation clamp inside the int8 range (-100..90), so that
        the kernels' clamping forms run."""
        return dataclasses.replace(self, p=dataclasses.replace(self.p, act_min=-100,
                                                               act_max=90))

    def expected(self) -> np.ndarray:
        fn = depthwise_conv2d_int8 if self.depthwise else conv2d_int8
        y = fn(self.x, self.w, self.bias, self.p)
        if y.shape != self.out_shape:
            raise AssertionError(f"reference shape {y.shape} != case shape {self.out_shape}")
        return y

    def encode(self, case_id: int, interleaved: bool) -> bytes:
        p = self.p
        flags = (FLAG_IN_PLACE if self.in_place else 0) | (
            FLAG_FAST_SCRATCH if self.fast_scratch else 0)
        ints = [flags, *self.x.shape, *self.w.shape,
                *self.out_shape, p.input_offset, p.output_offset, p.stride_h, p.stride_w,
                p.pad_top, p.pad_left, p.dilation_h, p.dilation_w, p.act_min, p.act_max]
        if self.depthwise:
            ints.append(p.ch_mult)
            filt = np.ascontiguousarray(self.w, np.int8).reshape(-1)
        else:
            filt = conv_filter_layout(self.w, interleaved)
        bias = b"" if self.bias is None else self.bias.astype("<i4").tobytes()
        blobs = [self.x.astype(np.int8).tobytes(), filt.tobytes(), bias,
                 p.out_multiplier.astype("<i4").tobytes(), p.out_shift.astype("<i4").tobytes()]
        return encode_record(case_id, self.op, ints, blobs)


@dataclass(frozen=True)
class FcCase:
    """A FULLY_CONNECTED call: x [batches, cin], w [cout, cin]."""

    op: Op
    x: np.ndarray
    w: np.ndarray
    bias: np.ndarray | None
    p: FullyConnectedParams
    fast_scratch: bool = False  # th_fully_connected_s8_scratch_size_fast's scratch

    @property
    def macs(self) -> int:
        return self.x.shape[0] * self.w.shape[0] * self.w.shape[1]

    @property
    def out_shape(self) -> tuple[int, int]:
        return (self.x.shape[0], self.w.shape[0])

    def expected(self) -> np.ndarray:
        return fully_connected_int8(self.x, self.w, self.bias, self.p)

    def encode(self, case_id: int, interleaved: bool) -> bytes:
        p = self.p
        batches, cin = self.x.shape
        if self.op == Op.FC_W16:
            return self._encode_w16(case_id)
        ints = [FLAG_FAST_SCRATCH if self.fast_scratch else 0, batches, cin, self.w.shape[0],
                p.input_offset, p.filter_offset, p.output_offset, p.act_min, p.act_max]
        bias = b"" if self.bias is None else self.bias.astype("<i4").tobytes()
        blobs = [self.x.astype(np.int8).tobytes(),
                 fc_weights_layout(self.w, interleaved).tobytes(), bias,
                 p.out_multiplier.astype("<i4").tobytes(), p.out_shift.astype("<i4").tobytes()]
        return encode_record(case_id, self.op, ints, blobs)

    def _encode_w16(self, case_id: int) -> bytes:
        p = self.p
        batches, cin = self.x.shape
        cout = self.w.shape[0]
        if p.filter_offset != 0:
            raise ValueError("th_fc_s8_w16 takes no filter offset")
        step = int(len(p.out_multiplier) == cout and cout > 1)
        mult, shift = p.out_multiplier[: cout if step else 1], p.out_shift[: cout if step else 1]
        fast = fc_fast_ok(cin, self.bias, mult, shift)
        table = b""
        if step and fast and cout >= FC_W16_TABLE_MIN_COUT:  # as the compiled backend
            table = fc_w16_rq_table(mult, shift, p.output_offset).astype("<i4").tobytes()
        ints = [0, batches, cin, cout, p.output_offset, p.act_min, p.act_max, step, int(fast)]
        blobs = [self.x.astype(np.int8).tobytes(), fc_w16_weights(self.w).astype("<i2").tobytes(),
                 fc_w16_bias(self.bias, self.w, p.input_offset).astype("<i4").tobytes(),
                 mult.astype("<i4").tobytes(), shift.astype("<i4").tobytes(), table]
        return encode_record(case_id, self.op, ints, blobs)


Case = ConvCase | FcCase


def check_result(case: Case, result: Result) -> str | None:
    """None if the kernel's output equals the reference, else a description."""
    if result.status != 0:
        return f"status {result.status}"
    want = case.expected().astype(np.int8)
    got = np.frombuffer(result.data, np.int8)
    if got.size != want.size:
        return f"{got.size} output bytes, want {want.size}"
    got = got.reshape(want.shape)
    if np.array_equal(got, want):
        return None
    bad = np.argwhere(got != want)
    first = tuple(int(i) for i in bad[0])
    return (f"{len(bad)} of {want.size} outputs differ; first at {first}: "
            f"got {int(got[first])}, want {int(want[first])}")


def mismatches(cases: Sequence[Case], results: Sequence[Result],
               name: Callable[[Case], str]) -> list[str]:
    """check_result over a batch: "name: problem" for each case whose output differs."""
    return [f"{name(c)}: {p}" for c, r in zip(cases, results, strict=True)
            if (p := check_result(c, r)) is not None]


def scaled_conv_case(rng: np.random.Generator, i: int, x_shape: tuple[int, ...],
                     w_shape: tuple[int, ...], out_nhw: tuple[int, int, int], stride: int,
                     dil: tuple[int, int], pads: list[int], fast_scratch: bool,
                     no_bias_every: int = 9) -> ConvCase:
    """A CONV_2D case of random data for a geometry a path test chose: multipliers scaled to
    the filter size (outputs mostly inside int8), every fifth case clamped, case i without
    bias where i % no_bias_every == 4. pads: top, left, bottom, right."""
    cout = w_shape[0]
    k = w_shape[1] * w_shape[2] * w_shape[3]
    mult, shift = np.empty(cout, np.int32), np.empty(cout, np.int32)
    for c in range(cout):
        mult[c], shift[c] = quantize_multiplier(float(rng.uniform(0.3, 3.0)) /
                                                (np.sqrt(k) * 7000))
    clamp = i % 5 == 2
    p = ConvParams(input_offset=int(rng.choice([-127, 128, int(rng.integers(-127, 129))])),
                   output_offset=int(rng.integers(-128, 128)), out_multiplier=mult,
                   out_shift=shift, act_min=-100 if clamp else -128, act_max=90 if clamp else 127,
                   stride_h=stride, stride_w=stride, dilation_h=dil[0], dilation_w=dil[1],
                   pad_top=pads[0], pad_left=pads[1], pad_bottom=pads[2], pad_right=pads[3])
    x = rng.integers(-128, 128, x_shape).astype(np.int8)
    w = rng.integers(-127, 128, w_shape).astype(np.int8)
    bias = (None if i % no_bias_every == 4 else
            rng.integers(-20000, 20000, cout).astype(np.int32))
    return ConvCase(Op.CONV, x, w, bias, p, (*out_nhw, cout), fast_scratch=fast_scratch)


# ---------------------------------------------------------------------------- generation


def _arrays_rng(draw: Draw) -> np.random.Generator:
    return np.random.default_rng(draw.int(0, 2**32 - 1))


def _quant(draw: Draw, rng: np.random.Generator, channels: int, taps: int,
           per_channel: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Multipliers and shifts that keep most outputs off the rails, with corner cases."""
    # |x + offset| ~ 110 and |w| ~ 70 on average: aim the output spread at ~40 steps.
    real = 40.0 / (math.sqrt(taps) * 110 * 70)
    base = int(math.floor(math.log2(real))) + 1
    n = channels if per_channel else 1
    mult = rng.integers(1 << 30, (1 << 31) - 1, n, dtype=np.int64, endpoint=True)
    kind = draw.int(0, 9)
    if kind == 0:  # right shift 0 or small left shifts: the exact slow path of DSP kernels
        shift = rng.integers(0, 3, n)
    elif kind == 1:  # very small multipliers: outputs collapse to the zero point
        shift = rng.integers(-31, -20, n, endpoint=True)
    else:
        shift = base + rng.integers(-2, 2, n, endpoint=True)
    return mult.astype(np.int32), np.clip(shift, -31, 30).astype(np.int32)


def _bias(draw: Draw, rng: np.random.Generator, channels: int, taps: int) -> np.ndarray | None:
    kind = draw.int(0, 9)
    if kind == 0:
        return None
    if kind == 1:  # large: disables the fast requantization, may wrap like TFLM's int32
        return rng.integers(-(1 << 30), 1 << 30, channels).astype(np.int32)
    return rng.integers(-taps * 3000 - 1, taps * 3000 + 1, channels).astype(np.int32)


def _activation(draw: Draw) -> tuple[int, int]:
    if draw.bool(0.6):
        return -128, 127
    lo = draw.int(-128, 100)
    return lo, draw.int(lo, 127)


def _int8(rng: np.random.Generator, shape: tuple[int, ...], weights: bool = False) -> np.ndarray:
    lo = -127 if weights else -128
    return rng.integers(lo, 128, shape).astype(np.int8)


@dataclass(frozen=True)
class Limits:
    """Size limits of generated cases (the target firmware has little RAM)."""

    max_hw: int = 10
    max_c: int = 24
    max_batches: int = 2
    max_fc_in: int = 96
    max_fc_out: int = 40


def _window(draw: Draw, in_size: int, k: int, stride: int, dilation: int,
            allow_pad: bool) -> tuple[int, int, int]:
    """(pad_before, pad_after, out_size) with at least one output."""
    eff = (k - 1) * dilation + 1
    pad_before = draw.int(0, eff - 1) if allow_pad else 0
    pad_after = draw.int(0, eff - 1) if allow_pad else 0
    if in_size + pad_before + pad_after < eff:
        pad_after = eff - in_size - pad_before
    out = (in_size + pad_before + pad_after - eff) // stride + 1
    # pad_after as the reference wants it: what the last window reaches beyond the input.
    pad_after = (out - 1) * stride + eff - in_size - pad_before
    return pad_before, pad_after, out


def conv_case(draw: Draw, op: Op, limits: Limits = Limits()) -> ConvCase:
    rng = _arrays_rng(draw)
    batches = draw.int(1, limits.max_batches)
    in_h, in_w = draw.int(1, limits.max_hw), draw.int(1, limits.max_hw)
    groups = 1
    if op in (Op.CONV_1X1,) or (op in (Op.CONV, Op.CONV_GENERAL) and draw.bool(0.3)):
        kh = kw = 1
    elif op == Op.CONV_3X3 or draw.bool(0.5):
        kh = kw = 3
    else:
        kh, kw = draw.int(1, 5), draw.int(1, 5)
    dil_h = dil_w = 1
    if op in (Op.CONV, Op.CONV_GENERAL) and draw.bool(0.3):
        dil_h, dil_w = draw.int(1, 3), draw.int(1, 3)
    stride_h, stride_w = draw.int(1, 3), draw.int(1, 3)
    if op in (Op.CONV, Op.CONV_GENERAL) and draw.bool(0.2):
        groups = draw.int(2, 3)
    cg = draw.int(1, max(1, limits.max_c // groups))
    cin = cg * groups
    cout = groups * draw.int(1, max(1, limits.max_c // groups))
    if groups == 1 and draw.bool(0.25):
        cout = draw.int(1, 3)  # the DSP build's direct path (th_nn_conv_direct_s8.c)
    allow_pad = op != Op.CONV_1X1 and not (kh == 1 and kw == 1 and draw.bool(0.5))
    pt, pb, out_h = _window(draw, in_h, kh, stride_h, dil_h, allow_pad)
    pl, pr, out_w = _window(draw, in_w, kw, stride_w, dil_w, allow_pad)
    in_place = False
    if (op in (Op.CONV, Op.CONV_1X1) and groups == 1 and kh == kw == 1 and pt == pl == 0
            and draw.bool(0.3)):
        # aliasing rule (b): stride 1, no padding, Cout <= Cin
        stride_h = stride_w = 1
        pt, pb, out_h = 0, 0, in_h
        pl, pr, out_w = 0, 0, in_w
        cout = draw.int(1, cin)
        in_place = True
    taps = kh * kw * cg
    mult, shift = _quant(draw, rng, cout, taps)
    act_min, act_max = _activation(draw)
    p = ConvParams(
        input_offset=-draw.int(-128, 127), output_offset=draw.int(-128, 127),
        out_multiplier=mult, out_shift=shift, act_min=act_min, act_max=act_max,
        stride_h=stride_h, stride_w=stride_w, dilation_h=dil_h, dilation_w=dil_w,
        pad_top=pt, pad_left=pl, pad_bottom=pb, pad_right=pr,
    )
    return ConvCase(
        op=op, x=_int8(rng, (batches, in_h, in_w, cin)),
        w=_int8(rng, (cout, kh, kw, cg), weights=True), bias=_bias(draw, rng, cout, taps),
        p=p, out_shape=(batches, out_h, out_w, cout), in_place=in_place,
    )


def dw_case(draw: Draw, op: Op, limits: Limits = Limits()) -> ConvCase:
    rng = _arrays_rng(draw)
    batches = draw.int(1, limits.max_batches)
    in_h, in_w = draw.int(1, limits.max_hw + 4), draw.int(1, limits.max_hw + 4)
    cin = draw.int(1, limits.max_c)
    mult_ch = 1
    dil_h = dil_w = 1
    if op == Op.DW_3X3 or draw.bool(0.45):
        kh = kw = 3
        stride_h = stride_w = draw.int(1, 2)
    else:
        stride_h, stride_w = draw.int(1, 3), draw.int(1, 3)
        shape = draw.int(0, 2)
        if shape == 0:  # any K x K' up to 15
            kh, kw = draw.int(1, 15), draw.int(1, 15)
        elif shape == 1:  # K x 1 on audio shapes [1, T, 1, C]
            kh, kw = draw.int(2, 15), 1
            in_h, in_w = draw.int(1, 3 * limits.max_hw), draw.int(1, 2)
        else:  # 1 x K
            kh, kw = 1, draw.int(2, 15)
            in_h, in_w = draw.int(1, 2), draw.int(1, 3 * limits.max_hw)
    if op != Op.DW_3X3 and draw.bool(0.3):
        # multipliers up to 32 come with few input channels (first layers)
        mult_ch = draw.int(1, 3) if draw.bool(0.6) else draw.int(4, 32)
        if mult_ch > 3:
            cin = draw.int(1, 2)
    if op != Op.DW_3X3 and draw.bool(0.2):
        dil_h, dil_w = draw.int(1, 3), draw.int(1, 3)
    pt, pb, out_h = _window(draw, in_h, kh, stride_h, dil_h, True)
    pl, pr, out_w = _window(draw, in_w, kw, stride_w, dil_w, True)
    cout = cin * mult_ch
    mult, shift = _quant(draw, rng, cout, kh * kw)
    act_min, act_max = _activation(draw)
    p = ConvParams(
        input_offset=-draw.int(-128, 127), output_offset=draw.int(-128, 127),
        out_multiplier=mult, out_shift=shift, act_min=act_min, act_max=act_max,
        stride_h=stride_h, stride_w=stride_w, dilation_h=dil_h, dilation_w=dil_w,
        pad_top=pt, pad_left=pl, pad_bottom=pb, pad_right=pr, ch_mult=mult_ch,
    )
    return ConvCase(
        op=op, x=_int8(rng, (batches, in_h, in_w, cin)),
        w=_int8(rng, (1, kh, kw, cout), weights=True), bias=_bias(draw, rng, cout, kh * kw),
        p=p, out_shape=(batches, out_h, out_w, cout),
        # aliasing rule (a): ch_mult 1, and one batch or an output no larger than the input
        in_place=(mult_ch == 1 and (batches == 1 or out_h * out_w <= in_h * in_w)
                  and draw.bool(0.4)),
        fast_scratch=draw.bool(0.5),
    )




def fc_case(draw: Draw, op: Op, limits: Limits = Limits()) -> FcCase:
    rng = _arrays_rng(draw)
    batches = draw.int(1, 3)
    cin = draw.int(1, limits.max_fc_in)
    cout = draw.int(1, limits.max_fc_out)
    per_channel = op == Op.FC_PER_CHANNEL
    mult, shift = _quant(draw, rng, cout, cin, per_channel)
    act_min, act_max = _activation(draw)
    filter_offset = 0 if per_channel or draw.bool(0.5) else draw.int(-20, 20)
    p = FullyConnectedParams(
        input_offset=-draw.int(-128, 127), filter_offset=filter_offset,
        output_offset=draw.int(-128, 127), out_multiplier=mult, out_shift=shift,
        act_min=act_min, act_max=act_max,
    )
    return FcCase(op=op, x=_int8(rng, (batches, cin)), w=_int8(rng, (cout, cin), True),
                  bias=_bias(draw, rng, cout, cin), p=p)


def random_case(draw: Draw, op: Op, limits: Limits = Limits()) -> Case:
    if op in CONV_OPS:
        return conv_case(draw, op, limits)
    if op in DW_OPS:
        return dw_case(draw, op, limits)
    return fc_case(draw, op, limits)
