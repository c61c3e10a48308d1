"""Weights int8 symmetric (zero point 0, -127..127) per channel or per tensor; biases int32.
With `bits=4`, weights are int4 symmetric (-7..7), which the writer stores packed (TFLite INT4).

TFLite's int8 spec: weight scale = max|w| / 127 over the channel (or tensor), bias scale =
input_scale * weight_scale with zero point 0. A weight scale is raised where the bias would
not fit int32 at that scale, and an all-zero channel borrows a typical scale so its
multiplier stays in range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.ir import Quantization

WEIGHT_QMAX = 127
INT4_QMAX = 7
_INT32_MAX = (1 << 31) - 1
# Headroom: a bias may use at most half the int32 range, so acc + bias cannot overflow.
_BIAS_LIMIT = _INT32_MAX / 2


@dataclass(frozen=True)
class QuantizedWeights:
    values: np.ndarray  # int8, same shape as the float weights
    quant: Quantization  # float32 scales [1] or [channels], zero points 0


def round_half_away(x: np.ndarray) -> np.ndarray:
    """std::round on arrays (np.round rounds halves to even)."""
    x = np.asarray(x, np.float64)
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def _channel_max(w: np.ndarray, axis: int | None) -> np.ndarray:
    if axis is None:
        return np.array([np.max(np.abs(w))], np.float64) if w.size else np.zeros(1)
    moved = np.moveaxis(np.abs(np.asarray(w, np.float64)), axis, 0)
    return moved.reshape(moved.shape[0], -1).max(axis=1)


def weight_scales(
    w: np.ndarray,
    axis: int | None,
    bias: np.ndarray | None = None,
    input_scale: float | None = None,
    qmax: int = WEIGHT_QMAX,
) -> np.ndarray:
    """float32 scales: per channel along `axis`, or one (axis None)."""
    scales = _channel_max(w, axis) / qmax
    if bias is not None and input_scale is not None:
        b = np.abs(np.asarray(bias, np.float64).reshape(-1))
        needed = (b if axis is not None else np.array([b.max(initial=0.0)])) / (
            float(input_scale) * _BIAS_LIMIT
        )
        scales = np.maximum(scales, needed)
    positive = scales[scales > 0]
    fallback = float(np.median(positive)) if positive.size else 1.0
    scales = np.where(scales > 0, scales, fallback)
    # Rounded up to float32 so that max|w| / scale never exceeds qmax after rounding.
    out = scales.astype(np.float32)
    low = out.astype(np.float64) < scales
    out[low] = np.nextafter(out[low], np.float32(np.inf))
    return out


def quantize_weights(
    w: np.ndarray,
    axis: int | None,
    bias: np.ndarray | None = None,
    input_scale: float | None = None,
    bits: int = 8,
) -> QuantizedWeights:
    """Symmetric int8 (or, bits=4, int4 held in int8) weights, per channel along `axis` or per
    tensor (axis None)."""
    qmax = INT4_QMAX if bits == 4 else WEIGHT_QMAX
    scales = weight_scales(w, axis, bias, input_scale, qmax)
    if axis is None:
        broadcast = scales.astype(np.float64)
    else:
        shape = [1] * w.ndim
        shape[axis] = scales.size
        broadcast = scales.astype(np.float64).reshape(shape)
    q = np.clip(round_half_away(np.asarray(w, np.float64) / broadcast), -qmax, qmax)
    quant = Quantization(
        scale=scales, zero_point=np.zeros(scales.size, np.int64), axis=0 if axis is None else axis
    )
    return QuantizedWeights(values=q.astype(np.int8), quant=quant)


def dequantize_weights(qw: QuantizedWeights) -> np.ndarray:
    scales = qw.quant.scale.astype(np.float64)
    if qw.quant.per_channel:
        shape = [1] * qw.values.ndim
        shape[qw.quant.axis] = scales.size
        scales = scales.reshape(shape)
    return qw.values.astype(np.float64) * scales


def bias_scales(input_scale: float, w_scales: np.ndarray) -> np.ndarray:
    """float32 input_scale * weight_scale[c], the product taken in double as TFLite does."""
    return (float(np.float32(input_scale)) * w_scales.astype(np.float64)).astype(np.float32)


def quantize_bias(bias: np.ndarray, input_scale: float, w_scales: np.ndarray,
                  channels: int) -> tuple[np.ndarray, Quantization]:
    """int32 bias at scale input_scale * weight_scale, zero point 0."""
    scales = bias_scales(input_scale, w_scales)
    per_channel = np.broadcast_to(scales.astype(np.float64), (channels,))
    q = round_half_away(np.asarray(bias, np.float64).reshape(-1) / per_channel)
    q = np.clip(q, -_INT32_MAX - 1, _INT32_MAX).astype(np.int32)
    quant = Quantization(scale=scales, zero_point=np.zeros(scales.size, np.int64), axis=0)
    return q, quant
