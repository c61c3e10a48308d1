"""Integer parameters of the int8 binary elementwise ops (ADD, SUB, MUL).

Derived from the IR exactly as TFLite Micro's CalculateOpDataAdd / CalculateOpDataSub /
CalculateOpDataMul do (all in double).
The dataclasses hold plain ints: the C kernels take the same fields in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.arith.fixedpoint import (
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    wrap_int32,
)
from tinyhost.arith.fused_activation import int8_activation_range, int16_activation_range
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import FusedActivationOptions, Graph, Op, Quantization, Tensor

# ADD and SUB scale int8 inputs up by 2**20 before rescaling, to keep precision (int16: 15).
INT8_ADD_LEFT_SHIFT = 20
INT16_ADD_LEFT_SHIFT = 15


@dataclass(frozen=True)
class AddParams:
    """ADD (and SUB): both inputs rescaled to a common scale, summed, then rescaled to out."""

    input1_offset: int  # -input1 zero point
    input2_offset: int  # -input2 zero point
    output_offset: int  # output zero point
    left_shift: int
    input1_multiplier: int
    input1_shift: int  # <= 0 (right shift)
    input2_multiplier: int
    input2_shift: int
    output_multiplier: int
    output_shift: int
    activation_min: int
    activation_max: int


@dataclass(frozen=True)
class SubParams(AddParams):
    """SUB takes the same fields as ADD, derived the same way."""


@dataclass(frozen=True)
class MulParams:
    input1_offset: int  # -input1 zero point
    input2_offset: int  # -input2 zero point
    output_offset: int  # output zero point
    output_multiplier: int
    output_shift: int  # may be positive (left shift) when s1*s2/s_out >= 1
    activation_min: int
    activation_max: int


def op_where(graph: Graph, op: Op) -> str:
    """'model.tflite: op 3 (ADD)' for messages; the op's index is found by identity."""
    index = next((i for i, o in enumerate(graph.ops) if o is op), None)
    return f"{graph.source}: op {index} ({op.name})"


def per_tensor_quant(graph: Graph, op: Op, tensor: Tensor) -> tuple[np.float32, int]:
    """(scale as float32, zero point) of a per-tensor quantized tensor, or a clear error."""
    q: Quantization | None = tensor.quant
    if q is None or q.scale.size == 0:
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: tensor '{tensor.name}' is {tensor.dtype} without quantization"
        )
    if q.per_channel:
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: tensor '{tensor.name}' has per-channel quantization, "
            "only per-tensor is supported here"
        )
    scale = np.float32(q.scale[0])
    if not (np.isfinite(scale) and scale > 0):
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: tensor '{tensor.name}' has invalid scale {scale}"
        )
    return scale, int(q.zero_point[0])


def quantize_multiplier_smaller_than_one(
    real: float, graph: Graph, op: Op, what: str
) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: TFLite Micro aborts unless 0 < real < 1."""
    if not 0.0 < real < 1.0:
        raise UnsupportedModelError(
            f"{op_where(graph, op)}: {what} multiplier {real!r} is outside (0, 1); "
            "TFLite Micro refuses these quantization parameters"
        )
    return quantize_multiplier(real)


def _binary_tensors(graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor]:
    if len(op.inputs) != 2 or None in op.inputs or len(op.outputs) != 1:
        raise UnsupportedModelError(f"{op_where(graph, op)}: expects 2 inputs and 1 output")
    in1, in2 = (graph.tensors[i] for i in op.inputs)  # type: ignore[index]
    return in1, in2, graph.tensors[op.outputs[0]]


def activation_range(graph: Graph, op: Op, output: Tensor) -> tuple[int, int]:
    """The int8 (int16) range of the op's fused activation (CalculateActivationRangeQuantized)
    for an int8 (int16) output."""
    options = op.options
    assert isinstance(options, FusedActivationOptions)
    ranged = int16_activation_range if output.dtype == np.int16 else int8_activation_range
    try:
        return ranged(options.activation, output.quant)  # type: ignore[arg-type]
    except UnsupportedModelError as error:
        raise UnsupportedModelError(f"{op_where(graph, op)}: {error}") from None


def add_params(graph: Graph, op: Op) -> AddParams:
    """CalculateOpDataAdd for int8 and int16: multipliers from double ratios to twice the max
    scale; int16 outputs scale the inputs up by 2**15 instead of 2**20."""
    in1, in2, out = _binary_tensors(graph, op)
    left_shift = INT16_ADD_LEFT_SHIFT if out.dtype == np.int16 else INT8_ADD_LEFT_SHIFT
    (s1, z1), (s2, z2), (so, zo) = (per_tensor_quant(graph, op, t) for t in (in1, in2, out))
    twice_max = 2.0 * float(max(s1, s2))
    m1 = quantize_multiplier_smaller_than_one(float(s1) / twice_max, graph, op, "input1")
    m2 = quantize_multiplier_smaller_than_one(float(s2) / twice_max, graph, op, "input2")
    mo = quantize_multiplier_smaller_than_one(
        twice_max / ((1 << left_shift) * float(so)), graph, op, "output"
    )
    act_min, act_max = activation_range(graph, op, out)
    return AddParams(-z1, -z2, zo, left_shift, *m1, *m2, *mo, act_min, act_max)


def sub_params(graph: Graph, op: Op) -> SubParams:
    """CalculateOpDataSub for int8: the same numbers as ADD.

    Older TFLite Micro sources compute SUB's ratios in float32; the pinned version agrees
    with the double computation only (checked against it), so SUB shares ADD's derivation.
    """
    p = add_params(graph, op)
    return SubParams(**vars(p))


def mul_params(graph: Graph, op: Op) -> MulParams:
    """CalculateOpDataMul for int8: one multiplier s1*s2/s_out (double)."""
    in1, in2, out = _binary_tensors(graph, op)
    (s1, z1), (s2, z2), (so, zo) = (per_tensor_quant(graph, op, t) for t in (in1, in2, out))
    multiplier, shift = quantize_multiplier(float(s1) * float(s2) / float(so))
    act_min, act_max = activation_range(graph, op, out)
    return MulParams(-z1, -z2, zo, multiplier, shift, act_min, act_max)


def add_input_tables(p: AddParams) -> tuple[np.ndarray, np.ndarray]:
    """The rescaled ADD/SUB inputs for every int8 value: two int32 tables of 256.

    table_i[(uint8)x] = RDBPOT(SRDHM((x + input_i_offset) << left_shift, multiplier_i),
    -shift_i), the first step of TFLM's AddElementwise with fixedpoint's arithmetic (the
    same functions the reference runs). The kernels' table path (th_add_s8_tables) looks
    the inputs up instead of rescaling them; index (uint8)x, as the LUT tables.
    """
    x = np.arange(256, dtype=np.uint8).view(np.int8).astype(np.int64)
    tables = []
    for offset, multiplier, shift in ((p.input1_offset, p.input1_multiplier, p.input1_shift),
                                      (p.input2_offset, p.input2_multiplier, p.input2_shift)):
        shifted = wrap_int32((x + offset) << p.left_shift)
        scaled = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier),
                                        -shift)
        tables.append(np.asarray(scaled, dtype=np.int64).astype("<i4"))
    return tables[0], tables[1]


def collapse_broadcast(s1: tuple[int, ...], s2: tuple[int, ...], out: tuple[int, ...]
                       ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:  # fmt: skip
    """The shapes of a binary elementwise op (NumPy broadcasting of s1 and s2 to out) with as
    few dims as walk the same elements (kernels_c/elementwise/th_nn_broadcast.h): output dims
    of 1 dropped, neighbours merged where each input is contiguous in both or broadcasts in
    both; the inputs get the output's dims where they advance and 1 where they broadcast."""
    rank = len(out)
    d1 = (1,) * (rank - len(s1)) + tuple(s1)
    d2 = (1,) * (rank - len(s2)) + tuple(s2)
    merged: list[list[int]] = []  # [dim, input1 advances, input2 advances], innermost first
    for i in range(rank - 1, -1, -1):
        if out[i] == 1:
            continue
        a1, a2 = int(d1[i] != 1), int(d2[i] != 1)
        if merged and merged[-1][1:] == [a1, a2]:
            merged[-1][0] *= out[i]
        else:
            merged.append([out[i], a1, a2])
    merged = merged[::-1] or [[1, 0, 0]]
    return (tuple(d if a else 1 for d, a, _ in merged),
            tuple(d if a else 1 for d, _, a in merged), tuple(d for d, _, _ in merged))


MAX_RANK = 6  # th_nn_types.h TH_MAX_RANK
_FAST_MAX_E = 22  # th_nn_support.h TH_FAST_MAX_E
_MUL_MAX_LEFT = 13  # th_mul_s8.c TH_MUL_MAX_LEFT


def broadcast_walk(s1: tuple[int, ...], s2: tuple[int, ...], out: tuple[int, ...]
                   ) -> dict[str, int | list[int]]:  # fmt: skip
    """th_bcast_walk as th_nn_bcast_init fills it (kernels_c/elementwise/th_nn_broadcast.h,
    step for step): rank, dims, stride1, stride2 (padded to MAX_RANK with 0), count1,
    count2, count. Shapes must broadcast (the kernel refuses others; so does this)."""
    rank = len(out) or 1
    out = tuple(out) or (1,)
    d1 = (1,) * (rank - len(s1)) + tuple(s1)
    d2 = (1,) * (rank - len(s2)) + tuple(s2)
    dims: list[int] = []
    a1: list[int] = []
    a2: list[int] = []
    next1 = next2 = 1
    for i in range(rank - 1, -1, -1):
        x1, x2, d = d1[i], d2[i], out[i]
        if d < 1 or x1 not in (d, 1) or x2 not in (d, 1) or (d != 1 and x1 == 1 and x2 == 1):
            raise ValueError(f"{s1} and {s2} do not broadcast to {out}")
        st1 = 0 if x1 == 1 else next1
        st2 = 0 if x2 == 1 else next2
        next1 *= x1
        next2 *= x2
        if d == 1:
            continue
        if dims and st1 == a1[-1] * dims[-1] and st2 == a2[-1] * dims[-1]:
            dims[-1] *= d
            continue
        dims.append(d)
        a1.append(st1)
        a2.append(st2)
    if not dims:
        dims, a1, a2 = [1], [0], [0]
    pad = [0] * (MAX_RANK - len(dims))
    return {"rank": len(dims), "dims": dims[::-1] + pad, "stride1": a1[::-1] + pad,
            "stride2": a2[::-1] + pad, "count1": next1, "count2": next2,
            "count": int(np.prod(out))}


def _input_bound(left_shift: int, m: int, e: int) -> int:
    """th_nn_add_sub_s8.c input_bound: the largest |rescaled input| (arithmetic shifts)."""
    hi = ((255 << left_shift) * m) >> 31
    return ((hi + 1) >> e) + 1


def add_prep(p: AddParams, s1: tuple[int, ...], s2: tuple[int, ...], out: tuple[int, ...],
             subtract: bool) -> dict[str, int | list[int] | dict]:
    """th_add_prep (kernels_c/include/th_nn_types.h) as th_add_s8_prepare fills it, without
    the table pointers (t1, t2): the fields in the struct's order, `walk` a broadcast_walk,
    `rq` (multiplier, round_zp, e). The compiled backend keeps it in flash; the kernel
    tests compare it with the C function's field by field."""
    bound = (_input_bound(p.left_shift, p.input1_multiplier, -p.input1_shift)
             + _input_bound(p.left_shift, p.input2_multiplier, -p.input2_shift))
    fast = (p.output_multiplier >= 0 and -_FAST_MAX_E <= p.output_shift <= -1
            and bound < (1 << 29))  # fmt: skip
    e = -p.output_shift
    rq = {"multiplier": p.output_multiplier,
          "round_zp": int(wrap_int32((1 << (e - 1)) + (p.output_offset << e))), "e": e} if fast \
        else {"multiplier": 0, "round_zp": 0, "e": 0}  # fmt: skip
    return {"walk": broadcast_walk(s1, s2, out), "in1_offset": p.input1_offset,
            "in2_offset": p.input2_offset, "left_shift": p.left_shift,
            "m1": p.input1_multiplier, "e1": -p.input1_shift, "m2": p.input2_multiplier,
            "e2": -p.input2_shift, "mo": p.output_multiplier, "eo": -p.output_shift,
            "out_offset": p.output_offset, "act_min": p.activation_min,
            "act_max": p.activation_max, "subtract": int(subtract), "fast": int(fast),
            "rq": rq, "nosign": _nosign(_add_acc2(p, subtract), rq, p.activation_min,
                                        p.activation_max) if fast else 0}


def _add_acc2(p: AddParams, subtract: bool) -> np.ndarray:
    """2 (s1 +- s2) for every pair of int8 inputs, s_i the rescaled input (the tables)."""
    t1, t2 = (t.astype(np.int64) for t in add_input_tables(p))
    return 2 * ((t1[:, None] - t2[None, :]) if subtract else (t1[:, None] + t2[None, :]))


def _nosign(acc2: np.ndarray, rq: dict, lo: int, hi: int) -> int:
    """th_add_prep / th_mul_prep nosign, as the kernels' nosign_of / mul_nosign_of: over
    every doubled accumulator acc2 of the call, th_fast_rq_apply2's output clamped to
    [lo, hi] without its sign term equals the one with it at rq's round_zp (1) or at
    round_zp - 1 (2); else 0."""
    y = rq["round_zp"] + ((acc2 * rq["multiplier"] + (1 << 31)) >> 32)
    e = rq["e"]
    want = np.clip((y + np.where(acc2 < 0, -1, 0)) >> e, lo, hi)
    if np.array_equal(np.clip(y >> e, lo, hi), want):
        return 1
    return 2 if np.array_equal(np.clip((y - 1) >> e, lo, hi), want) else 0


SEP_SHIFT = 16  # th_nn_add_sub_s8.c TH_ADD_SEP_F


def add_sep(p: AddParams, subtract: bool) -> tuple[np.ndarray, int] | None:
    """th_add_prep's separable form (kernels_c/include/th_nn_types.h `sep`, `sep_mode`;
    ARCHITECTURE.md §4.4b), or None where it is not proven (the kernel's other paths run).

    With the rounding's sign term idle, TFLM's output rescale of S = s1 +- s2 is one floor,
    out - zo = floor((S * mo + K) / 2^N), N = 31 + eo, K = 2^30 + 2^(30 + eo): a floor of
    A[x] + B[y], separable. So with T[x] = floor(s1[x] * mo / 2^(N - 16)) each input2 value
    y has an interval of C for which clamp((T[x] + C) >> 16, L, L + H) is TFLM's output for
    all 256 x ((L, H) per sep_mode: (-128, 255) for 0, (act_min, 255) for 1, (act_min,
    act_max - act_min) for 2); C[y] is taken from it, less L * 2^16 (the kernel computes
    min(USAT8((T + C) >> 16), H) + L). The check is exhaustive over the 65536 pairs against
    the reference arithmetic itself (sign term, double rounding, clamp), so the formula
    above only guides the choice of T: a result is never assumed. Returns (512 int32:
    T then C, indexed by the uint8 value; sep_mode), the cheapest mode that holds, or None
    when no mode does or a sum leaves int32. Only where add_prep's `fast` holds."""
    t1, t2 = (t.astype(np.int64) for t in add_input_tables(p))
    raw = wrap_int32(t1[:, None] - t2[None, :] if subtract else t1[:, None] + t2[None, :])
    scaled = rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(raw, p.output_multiplier), -p.output_shift)
    out = np.clip(np.asarray(scaled, np.int64) + p.output_offset, p.activation_min,
                  p.activation_max)  # [x, y]: TFLM's output of the pair
    big = 1 << 62
    shift = 31 - p.output_shift - SEP_SHIFT  # N - 16 >= 16: t1 * mo < 2^62, no overflow
    t = (t1 * p.output_multiplier) >> shift
    for mode, lo, hi in ((0, -128, 127), (1, p.activation_min, p.activation_min + 255),
                         (2, p.activation_min, p.activation_max)):
        if mode == 1 and p.activation_min == -128:
            continue  # the same as mode 0
        # F(w) = clamp(w, lo, hi) must give out: w == out inside, w <= lo / w >= hi at a bound
        wl = np.where(out == lo, -big, out << SEP_SHIFT)
        wh = np.where(out == hi, big, ((out + 1) << SEP_SHIFT) - 1)
        c_lo = (wl - t[:, None]).max(axis=0)
        c_hi = (wh - t[:, None]).min(axis=0)
        if (out < lo).any() or (out > hi).any() or (c_lo > c_hi).any():
            continue
        # any C inside the interval (an end of its finite part), then USAT8 of w - lo
        c = np.where(c_lo > -big // 2, c_lo, np.where(c_hi < big // 2, c_hi, 0))
        c = c - (lo << SEP_SHIFT)
        sums = t[:, None] + c[None, :]
        if sums.min() < -(1 << 31) or sums.max() >= 1 << 31:
            return None
        return np.concatenate([t, c]).astype("<i4"), mode
    return None


# th_nn_types.h TH_ADD_GO_*: th_add_prep go's forms (go = form * 2 + first)
GO_ROWS, GO_MIX1, GO_MIX2, GO_MIX3 = 1, 2, 3, 4
GO_MIX_SHORT = {2: 5, 3: 6, 5: 7, 6: 8, 7: 9, 9: 14, 10: 15, 11: 16}  # TH_ADD_GO_MIX_N*, by n
GO_SAME, GO_CHAN, GO_ROWS8, GO_ROWS84 = 10, 11, 12, 13
GO_ROWS16 = 17
_ADD_LUT_MIN = 512  # th_nn_add_sub_s8.c TH_ADD_LUT_MIN
_ADD_CHAN_LUT_ROWS = (224, 128)  # ... TH_ADD_CHAN_LUT_ROWS (no clamp), _CLAMP
_ADD_MIX_MAX = 40  # ... sep_run: runs of n % 4 != 0 up to this go four a block
# add_go chooses where what it saves is at least 0.5% of the call: past that it is not worth
# the dispatch's code (add_go, about 140 bytes) in a model with no other such call. A
# broadcast walk's choice (sep_run's tests) is ~60 instructions, a loop ~5.9 an output:
# calls under 2048 outputs. A same-shape run's is one stride test, ~16 (MLPerf ResNet-8's
# ADD bands: 152 -> 136 a call), its loop 7.4 an output: under 432 (the bands' 512 and 1536
# keep the kernel's choice: 16 is 0.41% and 0.14% of them)
_GO_MAX_OUTPUTS = 2048
_GO_MAX_OUTPUTS_SAME = 432


def add_go(prep: dict, tables: bool) -> dict[str, int]:
    """th_add_prep's go, go_n, go_rows (th_nn_types.h; ARCHITECTURE.md §4.4b) for a call
    with the separable form: the loop th_nn_add_sub_s8.c sep_run picks for this walk, so
    th_add_s8_prepared goes straight to it (the kernel still drops a path its build left
    out). All 0, "not chosen", where sep_run would not run (a walk of rank 3 and more, a
    scalar broadcast lut_run takes, channel rows chan_lut takes when the call has input
    tables (`tables`), rows of the same shape that are not one run) or runs its row loop,
    and for calls of _GO_MAX_OUTPUTS outputs and more (same-shape runs:
    _GO_MAX_OUTPUTS_SAME)."""
    none = {"go": 0, "go_n": 0, "go_rows": 0}
    w = prep["walk"]
    rank, dims, st1, st2 = w["rank"], w["dims"], w["stride1"], w["stride2"]
    scalar = w["count1"] == 1 or w["count2"] == 1
    if w["count"] >= _GO_MAX_OUTPUTS or rank > 2 or (scalar and w["count"] >= _ADD_LUT_MIN):
        return none
    n = dims[rank - 1]
    rows = w["count"] // n
    a, b = st1[rank - 1], st2[rank - 1]
    ra, rb = (st1[0], st2[0]) if rank == 2 else (0, 0)
    if a == 1 and b == 1 and rows > 1 and (ra == 0 or rb == 0):
        clamped = prep["act_min"] > -128 or prep["act_max"] < 127
        if tables and rows >= _ADD_CHAN_LUT_ROWS[clamped]:
            return none
        return {"go": GO_CHAN * 2 + int(ra == 0), "go_n": n, "go_rows": rows}
    if a == 1 and b == 1:
        if w["count"] >= _GO_MAX_OUTPUTS_SAME:
            return none
        if rows == 1 or (ra == n and rb == n):
            return {"go": GO_SAME * 2 + 1, "go_n": n * rows, "go_rows": 1}
        return none
    first = a == 0
    if (b != 1 or (rows > 1 and (rb != n or ra != 1))) if first else \
            (a != 1 or b != 0 or (rows > 1 and (ra != n or rb != 1))):  # fmt: skip
        return none
    m = n % 4
    form = (GO_ROWS8, GO_ROWS84)[n % 8 // 4] if m == 0 else GO_ROWS
    if n == 16:
        form = GO_ROWS16
    if rows >= 4 and m != 0 and (m != 1 or n >= 5) and n <= _ADD_MIX_MAX:
        form = GO_MIX_SHORT[n] if n < 12 else (GO_MIX1, GO_MIX2, GO_MIX3)[m - 1]
    return {"go": form * 2 + int(first), "go_n": n, "go_rows": rows}


def add_unclamped_count(p: AddParams, subtract: bool) -> float:
    """The mean over input2's 256 values of the input1 values whose output lies strictly
    inside the activation range: what a channel's output table (th_nn_add_sub_s8.c chan_lut)
    computes entry by entry, its saturated ends being filled in runs. Guides
    codegen/compiled.py's choice between those tables and the separable form; never a
    result."""
    t1, t2 = (t.astype(np.int64) for t in add_input_tables(p))
    raw = wrap_int32(t1[:, None] - t2[None, :] if subtract else t1[:, None] + t2[None, :])
    scaled = rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(raw, p.output_multiplier), -p.output_shift)
    out = np.asarray(scaled, np.int64) + p.output_offset
    inside = (out > p.activation_min) & (out < p.activation_max)
    return float(inside.sum(axis=0).mean())


def mul_prep(p: MulParams, s1: tuple[int, ...], s2: tuple[int, ...], out: tuple[int, ...]
             ) -> dict[str, int | list[int] | dict]:  # fmt: skip
    """th_mul_prep (kernels_c/include/th_nn_types.h) as th_mul_s8_prepare fills it, as
    add_prep."""
    sh = p.output_shift
    fast = p.output_multiplier >= 0 and -_FAST_MAX_E <= sh <= -1  # 255^2 < 2^29
    rq = {"multiplier": p.output_multiplier,
          "round_zp": int(wrap_int32((1 << (-sh - 1)) + (p.output_offset << -sh))), "e": -sh} \
        if fast else {"multiplier": 0, "round_zp": 0, "e": 0}  # fmt: skip
    nosign = _nosign(_mul_acc2(p), rq, p.activation_min, p.activation_max) if fast else 0
    return {"walk": broadcast_walk(s1, s2, out), "in1_offset": p.input1_offset,
            "in2_offset": p.input2_offset, "multiplier": p.output_multiplier, "shift": sh,
            "out_offset": p.output_offset, "act_min": p.activation_min,
            "act_max": p.activation_max, "fast": int(fast), "left": int(0 <= sh <= _MUL_MAX_LEFT),
            "rq": rq, "nosign": nosign, **(line := mul_line(p, _mul_factor_side(s1, s2))),
            **mul_px(p, line, s1, s2, out), **mul_sc(p, rq, nosign, line, s1, s2, out)}


# th_mul_prep's line form: acc = (x + ox) m_y + line_k in int32, out = sat(acc >> MUL_LINE_E)
# (SSAT, or USAT and the clamp), m_y = ((y + oy) line_a + 2^(line_t - 1)) >> line_t.
MUL_LINE_E = 16
_MUL_LINE_SEARCH = 12  # line_a tried within this of the nearest to the real slope


def _mul_factor_side(s1: tuple[int, ...], s2: tuple[int, ...]) -> int:
    """th_mul_prep line's orientation: 1 where input2 is the broadcast factor y (fewer
    elements than input1), 2 where input1 is, 0 for same-size inputs (no line)."""
    n1, n2 = int(np.prod(s1)), int(np.prod(s2))
    return 1 if n2 < n1 else 2 if n1 < n2 else 0


def mul_line(p: MulParams, side: int) -> dict[str, int]:
    """th_mul_prep's line fields (ARCHITECTURE.md §4.4b): for a fixed factor y the output is a
    function of x alone, a staircase in x that one line floor(((x + ox) m_y + K) / 2^16)
    (SSAT, or USAT then the clamp to [lo, hi] on lo's side) may reproduce. The slope m_y is
    made from y on the device (one MLA and a shift a pixel: line_a, line_t), K is one
    constant for the layer: searched here (line_a near the real multiplier, K's interval the
    intersection of every pair's), then checked on all 65536 (x, y) pairs as the device
    computes them (int32, no wrap). line 0 where no such line exists (the unclamped right
    shifts mostly: TFLM's rounding ties away from zero on both sides of a product 0, which no
    one line does) or side is 0; the kernel then keeps its other paths."""
    none = {"line": 0, "line_a": 0, "line_t": 0, "line_k": 0}
    if side == 0:
        return none
    ox, oy = (p.input1_offset, p.input2_offset) if side == 1 else (p.input2_offset,
                                                                    p.input1_offset)
    lo, hi = p.activation_min, p.activation_max
    xs = np.arange(-128, 128, dtype=np.int64)
    t = (xs + ox)[:, None]
    f = (xs + oy)[None, :]
    v = np.clip(multiply_by_quantized_multiplier(t * f, p.output_multiplier,
                                                 p.output_shift).astype(np.int64)
                + p.output_offset, lo, hi)
    clamp = lo > -128 or hi < 127
    want, a, b = (v - lo, 0, hi - lo) if clamp else (v, -128, 127)
    e = MUL_LINE_E
    slope = p.output_multiplier * 2.0 ** (p.output_shift - 31 + e)  # m_y per unit of y + oy
    sh = 1  # m_y's shift: as large as |255 line_a| + 2^sh < 2^30 allows
    while sh < 30 and abs(slope) * 2.0 ** (sh + 1) * 255 < 2.0 ** 29:
        sh += 1
    a0 = int(round(slope * 2.0 ** sh))
    for da in sorted(range(-_MUL_LINE_SEARCH, _MUL_LINE_SEARCH + 1), key=abs):
        la = a0 + da
        fa = f * la + (1 << (sh - 1))
        if np.abs(fa).max() >= 2**31:
            continue
        m = fa >> sh
        base = t * m
        kmin = int(np.where(want > a, want * 2**e - base, -(2**62)).max())
        kmax = int(np.where(want < b, (want + 1) * 2**e - 1 - base, 2**62).min())
        if kmin > kmax:
            continue
        k = min(max(0, kmin), kmax)
        acc = base + k
        if np.abs(acc).max() >= 2**31 or not _mul_line_ok(acc, v, lo, hi, clamp):
            continue
        return {"line": side, "line_a": la, "line_t": sh, "line_k": k}
    return none


# th_mul_s8.c: a scalar table (mul_lut) cannot pay against the line's pixel loop below this
# many outputs (10 instructions saved an output against TH_MUL_SEARCH_FIXED10's 950)
_MUL_PX_LUT_MIN = 951


def mul_px(p: MulParams, line: dict[str, int], s1: tuple[int, ...], s2: tuple[int, ...],
           out: tuple[int, ...]) -> dict[str, int | list[int]]:
    """th_mul_prep's px and px_w (ARCHITECTURE.md §4.4b): the host's choice of the clamped
    line's pixel loop (th_mul_s8.c mul_px_run) for the whole call, with its constants, where
    the line is proven (`line`, mul_line), the activation clamps and the call is a spatial
    broadcast ([rows, C] against [rows, 1] as the walk collapses it, C >= 4) or a scalar one
    of 4 to _MUL_PX_LUT_MIN - 1 outputs (where th_mul_s8_prepared's own dispatch takes the
    same loop: no table pays). px 0 (px_w zeros) elsewhere."""
    none = {"px": 0, "px_w": [0] * 10}
    side = line["line"]
    lo, hi = p.activation_min, p.activation_max
    if side == 0 or not (lo > -128 or hi < 127):
        return none
    walk = broadcast_walk(s1, s2, out)
    count, rank, dims = walk["count"], walk["rank"], walk["dims"]
    st1, st2 = walk["stride1"], walk["stride2"]
    if rank == 2 and dims[0] > 1 and st1[0] != 0 and st2[0] != 0 and \
            (st1[1] == 0) != (st2[1] == 0) and (2 if st1[1] == 0 else 1) == side:
        n, rows = dims[1], dims[0]
    elif (walk["count2"] if side == 1 else walk["count1"]) == 1 and count < _MUL_PX_LUT_MIN:
        n, rows = count, 1
    else:
        return none
    if n < 4:
        return none
    ox, oy = (p.input1_offset, p.input2_offset) if side == 1 else (p.input2_offset,
                                                                    p.input1_offset)
    la, lt = line["line_a"], line["line_t"]

    def splat(v: int) -> int:
        return int(wrap_int32((v & 0xFF) * 0x01010101))

    return {"px": side, "px_w": [la, int(wrap_int32(oy * la + (1 << (lt - 1)))), lt, ox,
                                 line["line_k"], n, n & 3, splat(255 - (hi - lo)),
                                 splat(hi + 1), rows]}


# th_mul_s8.c: the scalar loop's immediate-shift instances (TH_MUL_IMM_E) and the least
# outputs a scalar output table may pay for there (mul_lut_min's 448)
_MUL_SC_MAX_E = 8
_MUL_SC_LUT_MIN = 448


def mul_sc(p: MulParams, rq: dict, nosign: int, line: dict[str, int], s1: tuple[int, ...],
           s2: tuple[int, ...], out: tuple[int, ...]) -> dict[str, int | list[int]]:
    """th_mul_prep's sc and sc_w (ARCHITECTURE.md §4.4b): the host's choice of the int8
    scalar loop (th_mul_s8.c mul_sc_e1..e8: e = -shift an immediate, the rounding's sign term
    kept) for the whole call, with its constants, where the call is a scalar broadcast of
    fewer outputs than any output table pays for, the output is int8 (no clamp), the shift
    right by 1-8 on the fast rows, the sign term not proven idle (nosign 0: the kernel's own
    loops drop it) and no line (its loop is cheaper). sc: 1 where input2 is the scalar, 2
    where input1 is; sc_w: outputs, multiplier, round_zp, ox in both halfwords, 2 oy (oy
    the scalar's offset). sc 0 (sc_w zeros) elsewhere."""
    none = {"sc": 0, "sc_w": [0] * 5}
    walk = broadcast_walk(s1, s2, out)
    count, c1, c2 = walk["count"], walk["count1"], walk["count2"]
    if not (1 <= rq["e"] <= _MUL_SC_MAX_E) or nosign != 0 or line["line"] != 0 or \
            (p.activation_min, p.activation_max) != (-128, 127) or count >= _MUL_SC_LUT_MIN or \
            (c1 != 1 and c2 != 1):
        return none
    side = 2 if c1 == 1 else 1
    ox, oy = (p.input1_offset, p.input2_offset) if side == 1 else (p.input2_offset,
                                                                    p.input1_offset)
    ox2 = int(wrap_int32((ox & 0xFFFF) | (ox << 16)))
    return {"sc": side, "sc_w": [count, rq["multiplier"], rq["round_zp"], ox2, 2 * oy]}


def _mul_line_ok(acc: np.ndarray, v: np.ndarray, lo: int, hi: int, clamp: bool) -> bool:
    """The line's outputs as the kernel makes them (arithmetic shift, SSAT, or USAT and
    th_nn_store4u's clamp) equal the reference's v for every pair."""
    s = acc >> MUL_LINE_E
    out = lo + np.minimum(np.clip(s, 0, 255), hi - lo) if clamp else np.clip(s, -128, 127)
    return bool(np.array_equal(out, v))


def _mul_acc2(p: MulParams) -> np.ndarray:
    """2 (x1 + offset1)(x2 + offset2) for every pair of int8 inputs (th_fast_rq_apply's
    doubled accumulator)."""
    x = np.arange(-128, 128, dtype=np.int64)
    return 2 * ((x[:, None] + p.input1_offset) * (x[None, :] + p.input2_offset))


def prep_words(prep: dict) -> list[int]:
    """The int32 fields of a prepared struct in their C order (nested dicts and lists
    flattened): the bytes from its first int32 field to its last."""
    words: list[int] = []
    for v in prep.values():
        if isinstance(v, dict):
            words += prep_words(v)
        elif isinstance(v, list):
            words += v
        else:
            words.append(int(v))
    return words


def prep_initializer(prep: dict) -> str:
    """A C initializer of the prepared struct's int32 fields (designated: .name = value)."""
    def value(v: object) -> str:
        if isinstance(v, dict):
            return "{" + ", ".join(f".{k} = {value(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "{" + ", ".join(map(str, v)) + "}"
        return str(v)
    return ", ".join(f".{k} = {value(v)}" for k, v in prep.items())
