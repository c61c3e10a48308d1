"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR over NHWC tensors.

Both work on raw values, as TFLite Micro does for int8 (no zero point is subtracted: an
affine map commutes with a convex combination up to rounding, and TFLM rounds the raw
combination). The source positions and weights come from `arith.resize`; the bilinear sum
is TFLM's: four products of a raw value and two weights in 1/1024, plus or minus 2^19 by the
sum's sign, divided by 2^20 truncating toward zero. Float32 (for calibration) follows TFLM's
float kernel.
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.resize import bilinear_axis, nearest_indices
from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind, ResizeOptions


def _size(x: np.ndarray, size: np.ndarray | None, op: Op) -> tuple[int, int]:
    if x.ndim != 4:
        raise ModelFormatError(f"{op.name} of a rank-{x.ndim} input (NHWC only)")
    s = np.asarray(size).reshape(-1) if size is not None else np.zeros(0)
    if s.size != 2 or (s < 1).any():
        raise ModelFormatError(f"{op.name} size {s.tolist()}: two positive values expected")
    return int(s[0]), int(s[1])


def _options(op: Op) -> ResizeOptions:
    o = op.options if isinstance(op.options, ResizeOptions) else ResizeOptions()
    if o.align_corners and o.half_pixel_centers and op.kind is OpKind.RESIZE_BILINEAR:
        raise ModelFormatError(f"{op.name} with both align_corners and half_pixel_centers")
    return o


def resize_nearest(x: np.ndarray, out_h: int, out_w: int, o: ResizeOptions) -> np.ndarray:
    ys = nearest_indices(x.shape[1], out_h, o.align_corners, o.half_pixel_centers)
    xs = nearest_indices(x.shape[2], out_w, o.align_corners, o.half_pixel_centers)
    return np.ascontiguousarray(x[:, ys][:, :, xs])


def _float_axis(in_size: int, out_size: int, o: ResizeOptions):
    """TFLM's float ResizeBilinear positions: (lower, upper, fraction) per output index."""
    f32 = np.float32
    if o.align_corners and out_size > 1:
        scale = f32(in_size - 1) / f32(out_size - 1)
    else:
        scale = f32(in_size) / f32(out_size)
    i = np.arange(out_size, dtype=np.float32)
    pos = (i + f32(0.5)) * scale - f32(0.5) if o.half_pixel_centers else i * scale
    lower = np.maximum(np.floor(pos).astype(np.int64), 0)
    upper = np.minimum(np.ceil(pos).astype(np.int64), in_size - 1)
    return lower, upper, (pos - lower).astype(np.float32)


def resize_bilinear_float(x: np.ndarray, out_h: int, out_w: int, o: ResizeOptions) -> np.ndarray:
    """float32, as TFLM's float kernel (to float32 rounding of the four-term sum)."""
    y0, y1, fy = _float_axis(x.shape[1], out_h, o)
    x0, x1, fx = _float_axis(x.shape[2], out_w, o)
    fy, fx = fy[None, :, None, None], fx[None, None, :, None]
    one = np.float32(1)

    def at(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return x[:, rows][:, :, cols]

    y = (at(y0, x0) * (one - fy) * (one - fx) + at(y1, x0) * fy * (one - fx)
         + at(y0, x1) * (one - fy) * fx + at(y1, x1) * fy * fx)  # fmt: skip
    return y.astype(np.float32)


def resize_bilinear(x: np.ndarray, out_h: int, out_w: int, o: ResizeOptions) -> np.ndarray:
    if x.dtype == np.float32:
        return resize_bilinear_float(x, out_h, out_w, o)
    if x.dtype != np.int8:
        raise UnsupportedModelError(f"RESIZE_BILINEAR of {x.dtype} (int8 and float32 only)")
    ay = bilinear_axis(x.shape[1], out_h, o.align_corners, o.half_pixel_centers)
    ax = bilinear_axis(x.shape[2], out_w, o.align_corners, o.half_pixel_centers)
    v = x.astype(np.int64)
    wy = ay.weight.astype(np.int64)[None, :, None, None]
    wx = ax.weight.astype(np.int64)[None, None, :, None]
    one = 1 << 10

    def at(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return v[:, rows][:, :, cols]

    total = (at(ay.lower, ax.lower) * (one - wy) * (one - wx)
             + at(ay.upper, ax.lower) * wy * (one - wx)
             + at(ay.lower, ax.upper) * (one - wy) * wx
             + at(ay.upper, ax.upper) * wy * wx)  # fmt: skip
    total = total + np.where(total > 0, 1 << 19, -(1 << 19))
    q = np.abs(total) // (1 << 20) * np.sign(total)  # C division: toward zero
    return q.astype(np.int8)  # TFLM's static_cast (the value is always in range)


def run_resize_nearest(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    x = args[0]
    return [resize_nearest(x, *_size(x, args[1], op), _options(op))]


def run_resize_bilinear(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    x = args[0]
    return [resize_bilinear(x, *_size(x, args[1], op), _options(op))]


KERNELS = {
    OpKind.RESIZE_NEAREST_NEIGHBOR: run_resize_nearest,
    OpKind.RESIZE_BILINEAR: run_resize_bilinear,
}
