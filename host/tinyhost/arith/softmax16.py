"""int16 SOFTMAX (int16 in, int16 out): TFLite Micro's integer parameters and the two
513-entry tables its Prepare generates (gen_lut in float32: exp on [-10, 0] and 1 / (1 + x)
on [0, 1], each sample biased by half the interpolation error at the step's midpoint).

The tables are computed here with the same float32 steps; the tests check the result
against TFLite Micro bit for bit. The kernels take them as constants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, SoftmaxOptions

LUT_STEPS = 512  # int16-input tables: 512 steps and one more value for the last slope
_F = np.float32


@dataclass(frozen=True)
class Softmax16Params:
    """The input difference to the row max scaled so that [-65535, 0] is [-10, 0]."""

    input_multiplier: int
    input_left_shift: int  # a QuantizeMultiplier shift (may be negative)


def _round(x: np.float32) -> np.float32:
    """TfLiteRound on a float: half away from zero."""
    return _F(math.copysign(math.floor(abs(float(x)) + 0.5), float(x)))


def _gen_lut(func, input_min: float, input_max: float) -> np.ndarray:
    """gen_lut<float, int16_t, int16_t> with output range [-1, 1]."""
    lo, hi = _F(input_min), _F(input_max)
    step = _F((hi - lo) / _F(LUT_STEPS))
    half = _F(step / _F(2))
    scale = _F(_F(65536) / _F(2))  # (int16 max - min + 1) / (1 - (-1))
    lut = np.empty(LUT_STEPS + 1, np.int16)
    for i in range(LUT_STEPS):
        x = _F(lo + _F(_F(i) * step))
        val, mid = func(x), func(_F(x + half))
        nxt = func(_F(lo + _F(_F(i + 1) * step)))
        sample = _round(_F(val * scale))
        interp = _round(_F(_F(_F(nxt * scale) + sample) / _F(2)))
        bias = _round(_F(_F(interp - _round(_F(mid * scale))) / _F(2)))
        lut[i] = int(min(max(_F(sample - bias), _F(-32768)), _F(32767)))
    lut[LUT_STEPS] = int(min(max(_round(_F(func(hi) * scale)), _F(-32768)), _F(32767)))
    return lut


@cache
def softmax16_luts() -> tuple[np.ndarray, np.ndarray]:
    """(exp table on [-10, 0], 1 / (1 + x) table on [0, 1]), int16 [513] each."""
    exp_lut = _gen_lut(lambda v: _F(np.exp(_F(v))), -10.0, 0.0)
    recip_lut = _gen_lut(lambda v: _F(_F(1) / _F(_F(1) + _F(v))), 0.0, 1.0)
    exp_lut.flags.writeable = False
    recip_lut.flags.writeable = False
    return exp_lut, recip_lut


def softmax16_params(graph: Graph, op: Op) -> Softmax16Params:
    """CalculateSoftmaxParams for int16: output zero point 0 and scale 1/32768 (TFLM
    refuses anything else), input scale * beta / (10 / 65535) as a (multiplier, shift)."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    where = f"{graph.source}: {op.name}"
    if x.quant is None or y.quant is None:
        raise UnsupportedModelError(f"{where}: int16 softmax without quantization")
    out_scale, out_zp = _F(y.quant.scale[0]), int(y.quant.zero_point[0])
    target = _F(1) / _F(32768)
    if out_zp != 0 or not abs(out_scale - target) <= _F(0.001) * target:
        raise UnsupportedModelError(f"{where}: int16 softmax output '{y.name}' must have zero "
                                    f"point 0 and scale 1/32768, got {out_zp} and {out_scale}")
    options = op.options
    assert isinstance(options, SoftmaxOptions)
    real = float(_F(x.quant.scale[0])) * float(_F(options.beta)) / (10.0 / 65535.0)
    multiplier, shift = quantize_multiplier(real)
    if not -31 <= shift <= 30:
        raise UnsupportedModelError(f"{where}: input scale x beta = {real!r} is out of range")
    return Softmax16Params(multiplier, shift)
