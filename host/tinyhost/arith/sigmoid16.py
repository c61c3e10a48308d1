"""int16 LOGISTIC and TANH (TFLite Micro's reference_integer_ops, also the LSTM's gates): the
256-entry sigmoid table they interpolate, generated here, their Prepare parameters and the
arithmetic.

The table holds sigmoid(i / 24), i = 0..255, in unsigned 0.16, each sample biased by half
the linear interpolation's error at the step's midpoint (as TFLite's LUT generator does), so
that interpolating between two entries errs evenly above and below. The last entry has no
next step: it is the function's limit, 1.0, saturated to the table's largest value 65535
(TFLite's generator clamps every entry to the output type; TANH's saturation past the table
is this same value).

Inputs are rescaled, `(x * multiplier + round) >> left_shift` with Prepare's pair below, so
that one table step (1/24) is 2^9 units for LOGISTIC and 2^8 for TANH (2 * sigmoid(2x) - 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from tinyhost.arith.elementwise import op_where, per_tensor_quant
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind

TABLE_SIZE = 256
TABLE_STEPS_PER_UNIT = 24  # entry i is sigmoid(i / 24)
TABLE_MAX = 0xFFFF
INPUT_INTEGER_BITS = 3  # Prepare's kInputIntegerBits: int16 inputs read as Q3.12
OUTPUT_FRACTIONAL_BITS = 15  # outputs at 2^-15


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@cache
def sigmoid_table_u16() -> np.ndarray:
    """uint16 [256]: the table int16 LOGISTIC, TANH and the LSTM's gates interpolate."""
    step = 1.0 / TABLE_STEPS_PER_UNIT
    values = []
    for i in range(TABLE_SIZE - 1):
        x = i * step
        here, mid, nxt = _sigmoid(x), _sigmoid(x + step / 2), _sigmoid(x + step)
        midpoint_error = (here + nxt) / 2 - mid  # of a straight line from here to next
        values.append(round((1 << 16) * (here - midpoint_error / 2)))
    values.append(min(1 << 16, TABLE_MAX))  # sigmoid's limit 1.0, saturated
    table = np.asarray(values, dtype=np.uint16)
    table.flags.writeable = False
    return table


@dataclass(frozen=True)
class Sigmoid16Params:
    """The input rescaling: multiplier 0 is the power-of-two case (3 << left_shift, no
    shift), as the reference kernels resolve it."""

    input_multiplier: int
    input_left_shift: int


def checked_log2(x: float) -> tuple[bool, int]:
    """CheckedLog2 in float32: (x is within 1e-3 of a power of two in log2, rounded log2)."""
    f = np.float32
    log2 = f(f(np.log(f(x))) * f(f(1) / f(np.log(f(2)))))
    rounded = f(math.copysign(math.floor(abs(float(log2)) + 0.5), float(log2)))  # std::round
    return bool(abs(f(log2 - rounded)) < f(1e-3)), int(rounded)


def sigmoid16_params(graph: Graph, op: Op) -> Sigmoid16Params:
    """LOGISTIC / TANH Prepare for int16: zero points 0, output scale 2^-15; a power-of-two
    input scale 2^-12 (TANH also 2^-11) takes the multiplier-free path, any other scale a
    multiplier scale * 3 * 4096 doubled until above 32767 / 2 (left_shift at most 31)."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    where = op_where(graph, op)
    if x.dtype != np.int16 or y.dtype != np.int16:
        raise UnsupportedModelError(f"{where}: int16 {op.kind.name} needs int16 input and "
                                    f"output, got {x.dtype} and {y.dtype}")
    in_scale, in_zp = per_tensor_quant(graph, op, x)
    out_scale, out_zp = per_tensor_quant(graph, op, y)
    for tensor, zp in ((x, in_zp), (y, out_zp)):
        if zp != 0:
            raise UnsupportedModelError(f"{where}: tensor '{tensor.name}' of int16 "
                                        f"{op.kind.name} must have zero point 0, got {zp}")
    exact, out_log2 = checked_log2(float(out_scale))
    if not exact or out_log2 != -OUTPUT_FRACTIONAL_BITS:
        raise UnsupportedModelError(f"{where}: output '{y.name}' of int16 {op.kind.name} must "
                                    f"have scale 2^-15, got {float(out_scale)!r}")
    pot, in_log2 = checked_log2(float(in_scale))
    left_shift = (15 - INPUT_INTEGER_BITS) + in_log2
    pot_shifts = (0, 1) if op.kind is OpKind.TANH else (0,)
    if pot and left_shift in pot_shifts:
        return Sigmoid16Params(0, left_shift)
    multiplier = float(in_scale) * 4096.0 * 3.0
    left_shift = 0
    while multiplier <= 32767.0 / 2.0 and left_shift <= 30:
        left_shift += 1
        multiplier *= 2.0
    return Sigmoid16Params(int(multiplier), left_shift)


def _scaled(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """(x * multiplier + round) >> left_shift in int32 (the product wraps as the C does)."""
    if multiplier == 0:
        multiplier, left_shift = 3 << left_shift, 0
    rounding = (1 << (left_shift - 1)) if left_shift > 0 else 0
    prod = x.astype(np.int64) * multiplier + rounding
    prod = ((prod + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    return prod >> left_shift


def _interpolate(a: np.ndarray, frac_bits: int, saturated: int) -> np.ndarray:
    """table[a >> frac_bits] interpolated towards the next entry, in 0.16 << frac_bits;
    `saturated` past the table."""
    table = sigmoid_table_u16().astype(np.int64)
    uh = a >> frac_bits
    idx = np.minimum(uh, TABLE_SIZE - 2)
    lo, hi = table[idx], table[idx + 1]
    interp = (lo << frac_bits) + (a & ((1 << frac_bits) - 1)) * (hi - lo)
    return np.where(uh >= TABLE_SIZE - 1, saturated, interp)


def logistic_int16(x: np.ndarray, p: Sigmoid16Params) -> np.ndarray:
    """reference_integer_ops::Logistic on int16: 2^-15 out."""
    v = _scaled(x, p.input_multiplier, p.input_left_shift)
    r = _interpolate(np.abs(v), 9, 0x7FFF << 10)
    r = np.where(v >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1)
    return (r >> 10).astype(np.int16)


def tanh_int16(x: np.ndarray, p: Sigmoid16Params) -> np.ndarray:
    """reference_integer_ops::Tanh on int16: 2 * sigmoid(2x) - 1 from the same table, 2^-15
    out."""
    v = _scaled(x, p.input_multiplier, p.input_left_shift)
    r = _interpolate(np.abs(v), 8, 0xFFFF << 8)
    r = np.where(v >= 0, r - (1 << 23) + (1 << 7), -r + (1 << 23) + (1 << 7) - 1)
    return (r >> 8).astype(np.int16)
