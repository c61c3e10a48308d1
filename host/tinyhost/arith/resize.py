"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR (int8): the per-row and per-column source
positions and weights, computed as TFLite Micro computes them, once per axis.

Nearest neighbour: TFLM's GetNearestNeighbor, float32 arithmetic (the scale is a float32
quotient, `(i + offset) * scale` a float32 product, then floor, or round half away from zero
with align_corners). Bilinear int8: TFLM's ResizeBilinearInteger, integer arithmetic in
units of 1/1024: a scale `scale_10`, per output index a scaled position `p`, the lower source
index `max(p / 1024, 0)` (C division), the upper `min((p + 1023) / 1024, size - 1)` and the
upper weight `p - 1024 * lower` (the lower one is 1024 minus it). The kernels read these
tables; nothing of the arithmetic runs on the device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

FRACTION_BITS = 10
ONE = 1 << FRACTION_BITS


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncation toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def nearest_indices(in_size: int, out_size: int, align_corners: bool,
                    half_pixel_centers: bool) -> np.ndarray:
    """Source index of every output index along one axis (int32)."""
    f32 = np.float32
    if align_corners and out_size > 1:
        scale = f32(in_size - 1) / f32(out_size - 1)
    else:
        scale = f32(in_size) / f32(out_size)
    offset = f32(0.5 if half_pixel_centers else 0.0)
    out = np.empty(out_size, np.int32)
    for i in range(out_size):
        v = f32(f32(i) + offset) * scale
        if align_corners:
            # std::round, half away from zero (exact in double for a float32 value)
            r = int(math.floor(abs(float(v)) + 0.5)) * (1 if v >= 0 else -1)
        else:
            r = math.floor(float(v))
        r = min(r, in_size - 1)
        if half_pixel_centers:
            r = max(r, 0)
        out[i] = r
    return out


@dataclass(frozen=True)
class BilinearAxis:
    """Per output index along one axis: the two source indices and the upper weight
    (in 1/1024; the lower source gets 1024 minus it)."""

    lower: np.ndarray  # int32
    upper: np.ndarray  # int32
    weight: np.ndarray  # int32


def bilinear_axis(in_size: int, out_size: int, align_corners: bool,
                  half_pixel_centers: bool) -> BilinearAxis:
    if align_corners and out_size > 1:
        scale = _c_div(ONE * (in_size - 1) + (out_size - 1) // 2, out_size - 1)
    else:
        scale = _c_div(ONE * in_size + out_size // 2, out_size)
    lower, upper, weight = [], [], []
    for i in range(out_size):
        p = i * scale + (_c_div(scale, 2) - (1 << (FRACTION_BITS - 1)) if half_pixel_centers
                         else 0)  # fmt: skip
        lo = max(_c_div(p, ONE), 0)
        hi = min(_c_div(p + ONE - 1, ONE), in_size - 1)
        lower.append(lo)
        upper.append(hi)
        weight.append(p - ONE * lo)
    return BilinearAxis(np.array(lower, np.int32), np.array(upper, np.int32),
                        np.array(weight, np.int32))  # fmt: skip


def bilinear_in_range(axis: BilinearAxis, in_size: int) -> bool:
    """Every source index inside the input and every weight within [-1024, 2048]: the
    kernels' int32 sums of four int8 x weight products cannot overflow."""
    idx = np.concatenate([axis.lower, axis.upper])
    return bool(idx.size == 0 or (idx.min() >= 0 and idx.max() < in_size)) and bool(
        axis.weight.size == 0 or (axis.weight.min() >= -ONE and axis.weight.max() <= 2 * ONE))
