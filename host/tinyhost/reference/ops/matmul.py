"""BATCH_MATMUL: LHS [..., rows, depth] times RHS [..., depth, cols] (adj_x / adj_y transpose
the last two dims of either), batch dims broadcast NumPy-style after both are extended to the
output's rank. int8 as TFLite Micro: int32 sums of (lhs + lhs_offset) * (rhs + rhs_offset),
requantized with the per-tensor multiplier (arith.matmul) plus the output zero point, clamped
to int8. float32 for calibration."""

from __future__ import annotations

import numpy as np

from tinyhost.arith.fixedpoint import requantize_to_int8
from tinyhost.arith.matmul import BatchMatMulParams, batch_matmul_params
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import BatchMatMulOptions, Graph, Op, OpKind


def _operands(lhs: np.ndarray, rhs: np.ndarray, adj_x: bool, adj_y: bool):
    if adj_x:
        lhs = np.swapaxes(lhs, -1, -2)
    if adj_y:
        rhs = np.swapaxes(rhs, -1, -2)
    rank = max(lhs.ndim, rhs.ndim)
    return (lhs.reshape((1,) * (rank - lhs.ndim) + lhs.shape),
            rhs.reshape((1,) * (rank - rhs.ndim) + rhs.shape))  # fmt: skip


def batch_matmul_int8(lhs: np.ndarray, rhs: np.ndarray, p: BatchMatMulParams, adj_x: bool,
                      adj_y: bool) -> np.ndarray:
    a, b = _operands(lhs.astype(np.int64) + p.lhs_offset, rhs.astype(np.int64) + p.rhs_offset,
                     adj_x, adj_y)  # fmt: skip
    acc = np.matmul(a, b)
    return requantize_to_int8(acc, p.multiplier, p.shift, p.output_offset, p.act_min, p.act_max)


def run_batch_matmul(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    o = op.options if isinstance(op.options, BatchMatMulOptions) else BatchMatMulOptions()
    lhs, rhs = args[0], args[1]
    if lhs.dtype == np.float32 and rhs.dtype == np.float32:
        a, b = _operands(lhs, rhs, o.adj_x, o.adj_y)
        return [np.matmul(a, b).astype(np.float32)]
    if lhs.dtype != np.int8 or rhs.dtype != np.int8:
        raise UnsupportedModelError(f"{op.name} of {lhs.dtype} x {rhs.dtype} "
                                    "(int8 x int8 or float32 x float32)")  # fmt: skip
    return [batch_matmul_int8(lhs, rhs, batch_matmul_params(graph, op), o.adj_x, o.adj_y)]


KERNELS = {OpKind.BATCH_MATMUL: run_batch_matmul}
