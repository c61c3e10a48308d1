"""AVERAGE_POOL_2D and MAX_POOL_2D: TFLite Micro's reference pooling.

Windows are clipped to the input: padding is never averaged in. int8 average pool divides
the window sum by the number of valid taps rounding half away from zero with C's integer
division; int8 max pool starts from -128; both clamp to the activation range. No
requantization: TFLM requires input and output to share their quantization.
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.fused_activation import apply_float_activation
from tinyhost.arith.pool import PoolParams, pool_params
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind
from tinyhost.reference.ops._window import output_size, pad_for_window, taps, valid_counts


def _windows(x: np.ndarray, p: PoolParams, fill: float | int):
    out_h = output_size(x.shape[1], p.pad_top, p.pad_bottom, p.filter_h, p.stride_h)
    out_w = output_size(x.shape[2], p.pad_left, p.pad_right, p.filter_w, p.stride_w)
    if out_h <= 0 or out_w <= 0:
        raise UnsupportedModelError(
            f"pool window {p.filter_h}x{p.filter_w} does not fit input {list(x.shape)}"
        )
    padded = pad_for_window(x, p.pad_top, p.pad_left, out_h, out_w, p.filter_h, p.filter_w,
                            p.stride_h, p.stride_w, fill)
    return out_h, out_w, taps(padded, p.filter_h, p.filter_w, out_h, out_w, p.stride_h,
                              p.stride_w)


def _counts(x: np.ndarray, p: PoolParams, out_h: int, out_w: int) -> np.ndarray:
    rows = valid_counts(x.shape[1], p.pad_top, out_h, p.filter_h, p.stride_h)
    cols = valid_counts(x.shape[2], p.pad_left, out_w, p.filter_w, p.stride_w)
    counts = (rows[:, None] * cols[None, :])[None, :, :, None]
    if np.any(counts == 0):
        # TFLM's AveragePool returns an error for a window with no input in it.
        raise UnsupportedModelError("AVERAGE_POOL_2D has a window entirely in the padding")
    return counts


def avg_pool_int8(x: np.ndarray, p: PoolParams) -> np.ndarray:
    out_h, out_w, views = _windows(x.astype(np.int32), p, 0)
    acc = np.zeros((x.shape[0], out_h, out_w, x.shape[3]), np.int32)
    for _, _, view in views:
        acc += view
    counts = _counts(x, p, out_h, out_w).astype(np.int32)
    half = counts // 2
    # acc > 0 ? (acc + n/2) / n : (acc - n/2) / n, with C's truncation toward zero.
    rounded = np.where(acc > 0, (acc + half) // counts, -((half - acc) // counts))
    return np.clip(rounded, p.act_min, p.act_max).astype(np.int8)


def max_pool_int8(x: np.ndarray, p: PoolParams) -> np.ndarray:
    out_h, out_w, views = _windows(x, p, np.int8(-128))
    result = np.full((x.shape[0], out_h, out_w, x.shape[3]), -128, np.int8)
    for _, _, view in views:
        np.maximum(result, view, out=result)
    return np.clip(result, p.act_min, p.act_max).astype(np.int8)


def avg_pool_float(x: np.ndarray, p: PoolParams) -> np.ndarray:
    out_h, out_w, views = _windows(x.astype(np.float32), p, 0.0)
    # Taps are added in TFLM's order (rows, then columns), so sums match it exactly.
    acc = np.zeros((x.shape[0], out_h, out_w, x.shape[3]), np.float32)
    for _, _, view in views:
        acc += view
    y = acc / _counts(x, p, out_h, out_w).astype(np.float32)
    return apply_float_activation(y.astype(np.float32), p.activation).astype(np.float32)


def max_pool_float(x: np.ndarray, p: PoolParams) -> np.ndarray:
    lowest = np.finfo(np.float32).min
    out_h, out_w, views = _windows(x.astype(np.float32), p, lowest)
    result = np.full((x.shape[0], out_h, out_w, x.shape[3]), lowest, np.float32)
    for _, _, view in views:
        np.maximum(result, view, out=result)
    return apply_float_activation(result, p.activation).astype(np.float32)


def _dispatch(int8_fn, float_fn):
    def run(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
        x = args[0]
        p = pool_params(graph, op)
        if x.dtype == np.int8:
            return [int8_fn(x, p)]
        if x.dtype == np.float32:
            return [float_fn(x, p)]
        raise UnsupportedModelError(f"{graph.source}: {op.name} on {x.dtype} is not supported")

    return run


run_average_pool_2d = _dispatch(avg_pool_int8, avg_pool_float)
run_max_pool_2d = _dispatch(max_pool_int8, max_pool_float)

KERNELS = {
    OpKind.AVERAGE_POOL_2D: run_average_pool_2d,
    OpKind.MAX_POOL_2D: run_max_pool_2d,
}
