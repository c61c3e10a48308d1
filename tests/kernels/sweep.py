"""Random layer shapes per layer class for the kernel sweep (bench/kernels.py --sweep).

Shapes are drawn from the wide distributions of issue 14 (depthwise K x K up to 15, K x 1 /
1 x K audio shapes, channel multipliers up to 32 including one input channel, odd channel
counts, strides, dilations; conv with Cin 1-5 and K x 1 kernels; fully connected with any
input length, per tensor and per channel, and the same FC shapes again as class
fully_connected_w16 on th_fc_s8_w16, the compiled backend's path), sized like
microcontroller layers (1k-500k MACs) and with realistic requantization (as TFLM computes
it from float scales), so the kernels take the paths they take in real models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from kernels.cases import ConvCase, FcCase, Op
from tinyhost.arith.conv import ConvParams, FullyConnectedParams
from tinyhost.arith.fixedpoint import quantize_multiplier

MIN_MACS, MAX_MACS = 1_000, 500_000
# What one case may occupy in the big kernel firmware (TH_KTEST_BIG buffers, with margin).
MAX_RECORD, MAX_OUTPUT = 150_000, 60_000


def _quant(rng: np.random.Generator, n: int, taps: int) -> tuple[np.ndarray, np.ndarray]:
    scale = 30.0 / (np.sqrt(taps) * 110 * 70)
    mult, shift = np.empty(n, np.int32), np.empty(n, np.int32)
    for c in range(n):
        mult[c], shift[c] = quantize_multiplier(scale * float(rng.uniform(0.5, 2.0)))
    return mult, shift


def _same_or_valid(rng: np.random.Generator, size: int, k: int, stride: int,
                   dilation: int) -> tuple[int, int, int] | None:
    """(pad_before, pad_after, out) for SAME or VALID padding; None if no output."""
    eff = (k - 1) * dilation + 1
    if rng.random() < 0.7:  # SAME
        out = -(-size // stride)
        pad = max((out - 1) * stride + eff - size, 0)
        return pad // 2, pad - pad // 2, out
    if size < eff:
        return None
    out = (size - eff) // stride + 1
    return 0, (out - 1) * stride + eff - size, out


def _conv_case(rng: np.random.Generator, op: Op, hw: tuple[int, int], cin: int, cout: int,
               k: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int],
               mult_ch: int = 1) -> ConvCase | None:
    depthwise = op == Op.DW
    wh = _same_or_valid(rng, hw[0], k[0], stride[0], dilation[0])
    ww = _same_or_valid(rng, hw[1], k[1], stride[1], dilation[1])
    if wh is None or ww is None:
        return None
    taps = k[0] * k[1] * (1 if depthwise else cin)
    mult, shift = _quant(rng, cout, taps)
    p = ConvParams(input_offset=128 - int(rng.integers(0, 20)),
                   output_offset=-128 + int(rng.integers(0, 40)),
                   out_multiplier=mult, out_shift=shift, act_min=-128, act_max=127,
                   stride_h=stride[0], stride_w=stride[1], dilation_h=dilation[0],
                   dilation_w=dilation[1], pad_top=wh[0], pad_left=ww[0], pad_bottom=wh[1],
                   pad_right=ww[1], ch_mult=mult_ch if depthwise else 1)
    x = rng.integers(-128, 128, (1, *hw, cin)).astype(np.int8)
    w_shape = (1, *k, cout) if depthwise else (cout, *k, cin)
    w = rng.integers(-127, 128, w_shape).astype(np.int8)
    bias = rng.integers(-20000, 20000, cout).astype(np.int32)
    # Every layer runs with its kernel's *_scratch_size_fast (the path the planner grants where
    # the arena has room; without it the general depthwise is the reference loop).
    return ConvCase(op, x, w, bias, p, (1, wh[2], ww[2], cout), fast_scratch=True)


def _pick(rng: np.random.Generator, values: list[int]) -> int:
    return int(values[int(rng.integers(0, len(values)))])


def depthwise(rng: np.random.Generator) -> ConvCase | None:
    kind = int(rng.integers(0, 5))
    dilation = (1, 1)
    stride = (1, 1)
    mult_ch = 1
    if kind == 0:  # channel multiplier > 1, often on one input channel (first layers)
        cin = 1 if rng.random() < 0.5 else int(rng.integers(2, 9))
        mult_ch = int(rng.integers(8, 33)) if cin == 1 else int(rng.integers(2, 5))
        k = (3, 3) if rng.random() < 0.6 else (int(rng.integers(1, 8)),) * 2
        s = int(rng.integers(1, 3))
        stride = (s, s)
        side = int(rng.integers(8, 97))
        hw = (side, side)
    elif kind == 1:  # K x 1 on audio shapes [1, T, 1, C]
        kk = int(rng.integers(3, 16))
        k = (kk, 1)
        hw = (int(rng.integers(16, 200)), 1)
        cin = int(rng.integers(4, 129))
        stride = (int(rng.integers(1, 3)), 1)
        if rng.random() < 0.3:
            dilation = (int(rng.integers(2, 5)), 1)
    elif kind == 2:  # 1 x K on [1, 1, T, C]
        kk = int(rng.integers(3, 16))
        k = (1, kk)
        hw = (1, int(rng.integers(16, 200)))
        cin = int(rng.integers(4, 129))
        stride = (1, int(rng.integers(1, 3)))
    elif kind == 3:  # 3x3, channels not a multiple of 4, large planes (MobileNetV2 style)
        k = (3, 3)
        cin = _pick(rng, [3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35])
        side = int(rng.integers(8, 64))
        hw = (side, side)
        s = int(rng.integers(1, 3))
        stride = (s, s)
    else:  # any K x K up to 15, strides, dilations
        k = (int(rng.integers(1, 16)), int(rng.integers(1, 16)))
        cin = int(rng.integers(1, 65))
        hw = (int(rng.integers(4, 49)), int(rng.integers(4, 49)))
        stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        if rng.random() < 0.3:
            dilation = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    return _conv_case(rng, Op.DW, hw, cin, cin * mult_ch, k, stride, dilation, mult_ch)


def conv(rng: np.random.Generator, couts: tuple[int, int] = (1, 65)) -> ConvCase | None:
    """A conv layer; Cout from [couts[0], couts[1]) (bench/conv_few_cout.py: 1-4)."""
    kind = int(rng.integers(0, 3))
    dilation = (1, 1)
    if kind == 0:  # first layers: few, odd input channels
        cin = int(rng.integers(1, 6))
        kk = int(rng.integers(2, 8))
        k = (kk, kk)
    elif kind == 1:  # K x 1 on audio shapes
        cin = int(rng.integers(1, 33))
        k = (int(rng.integers(2, 11)), 1 if rng.random() < 0.7 else int(rng.integers(2, 5)))
    else:  # any K x K, odd Cin, dilations
        cin = int(rng.integers(1, 49))
        k = (int(rng.integers(2, 8)), int(rng.integers(2, 8)))
        if rng.random() < 0.3:
            dilation = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    cout = int(rng.integers(*couts))
    hw = (int(rng.integers(4, 65)), int(rng.integers(1, 65)))
    s = int(rng.integers(1, 3))
    return _conv_case(rng, Op.CONV, hw, cin, cout, k, (s, s), dilation)


def pointwise(rng: np.random.Generator) -> ConvCase | None:
    cin, cout = int(rng.integers(1, 129)), int(rng.integers(1, 129))
    hw = (int(rng.integers(1, 49)), int(rng.integers(1, 49)))
    s = 1 if rng.random() < 0.8 else 2
    return _conv_case(rng, Op.CONV, hw, cin, cout, (1, 1), (s, s), (1, 1))


def fully_connected(rng: np.random.Generator) -> FcCase | None:
    cin, cout = int(rng.integers(1, 1025)), int(rng.integers(1, 257))
    per_channel = rng.random() < 0.5
    mult, shift = _quant(rng, cout if per_channel else 1, cin)
    p = FullyConnectedParams(input_offset=int(rng.integers(-20, 20)), filter_offset=0,
                             output_offset=int(rng.integers(-20, 20)), out_multiplier=mult,
                             out_shift=shift, act_min=-128, act_max=127)
    x = rng.integers(-128, 128, (1, cin)).astype(np.int8)
    w = rng.integers(-127, 128, (cout, cin)).astype(np.int8)
    bias = rng.integers(-20000, 20000, cout).astype(np.int32)
    # With th_fully_connected_s8_scratch_size_fast's scratch, as the planner grants it.
    return FcCase(Op.FC_PER_CHANNEL if per_channel else Op.FC, x, w, bias, p, fast_scratch=True)


CLASSES: dict[str, Callable[[np.random.Generator], ConvCase | FcCase | None]] = {
    "conv": conv, "pointwise": pointwise, "depthwise": depthwise,
    "fully_connected": fully_connected,
}


def describe(case: ConvCase | FcCase) -> str:
    """A one-line shape: input -> output, kernel, stride, dilation, multiplier."""
    if isinstance(case, FcCase):
        per_channel = case.op == Op.FC_PER_CHANNEL or (
            case.op == Op.FC_W16 and case.w.shape[0] > 1
            and len(case.p.out_multiplier) == case.w.shape[0])
        kind = "per-channel" if per_channel else "per-tensor"
        return f"{case.w.shape[1]}->{case.w.shape[0]} {kind}"
    p = case.p
    _, h, w, c = case.x.shape
    _, oh, ow, oc = case.out_shape
    text = (f"{h}x{w}x{c}->{oh}x{ow}x{oc} k{case.w.shape[1]}x{case.w.shape[2]} "
            f"s{p.stride_h}x{p.stride_w}")
    if (p.dilation_h, p.dilation_w) != (1, 1):
        text += f" d{p.dilation_h}x{p.dilation_w}"
    if case.depthwise and p.ch_mult > 1:
        text += f" m{p.ch_mult}"
    if p.pad_top or p.pad_left or p.pad_bottom or p.pad_right:
        text += " same"
    return text


def sweep_cases(seed: int, per_class: int) -> list[tuple[str, ConvCase | FcCase]]:
    """per_class cases of each class within the MAC range and the firmware's buffers."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, ConvCase | FcCase]] = []
    for name, draw in CLASSES.items():
        n = 0
        while n < per_class:
            case = draw(rng)
            if case is None or not MIN_MACS <= case.macs <= MAX_MACS:
                continue
            if (len(case.encode(0, True)) > MAX_RECORD
                    or int(np.prod(case.out_shape)) > MAX_OUTPUT):
                continue
            out.append((name, case))
            n += 1
    # The same FC shapes on th_fc_s8_w16, the path the compiled backend's speed builds take
    # (host-widened int16 weights); the int8 rows are the interpreter's path. Those whose
    # record (twice the weight bytes) exceeds the firmware's buffer are left out.
    w16 = [replace(case, op=Op.FC_W16) for name, case in out if name == "fully_connected"]
    return out + [("fully_connected_w16", case) for case in w16
                  if len(case.encode(0, True)) <= MAX_RECORD]
