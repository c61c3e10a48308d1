"""Integer parameters of MEAN, as TFLite Micro's PrepareMeanOrSumHelper and EvalMeanHelper.

TFLM's int8 MEAN always takes the QuantizedMeanOrSum path: the zero-point-corrected sum is
requantized with input_scale/output_scale folded with 1/count. (Older TFLM releases had a
fast path for equal input/output quantization that truncated sum/count; the pinned
tflite-micro no longer has it and rounds, and tinyhost follows the pinned oracle.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import Graph, Op, ReducerOptions


@dataclass(frozen=True)
class MeanParams:
    axes: tuple[int, ...]  # resolved: non-negative, duplicates removed, in the given order
    keep_dims: bool
    input_zero_point: int = 0
    output_zero_point: int = 0
    multiplier: int = 0  # QuantizeMultiplier(input_scale / output_scale), before the 1/count
    shift: int = 0


def resolve_axes(axes: np.ndarray | list[int], rank: int) -> tuple[int, ...]:
    """ResolveAxis: negative axes count from the end, duplicates are dropped."""
    resolved: list[int] = []
    for a in np.asarray(axes).reshape(-1).tolist():
        current = a + rank if a < 0 else a
        if not 0 <= current < rank:
            raise ModelFormatError(f"MEAN axis {a} is out of range for rank {rank}")
        if current not in resolved:
            resolved.append(current)
    return tuple(resolved)


def fold_count(multiplier: int, shift: int, count: int) -> tuple[int, int]:
    """QuantizedMeanOrSum's rescaling by 1/count, done in integers.

    shift_by = floor(log2(count)), limited to 32 and to 31 + shift so the final right shift
    stays within 31; the multiplier becomes (multiplier << shift_by) / count (truncating).
    """
    if count <= 0:
        return multiplier, shift
    by = min(count.bit_length() - 1, 32, 31 + shift)
    # Positive operands: floor division is C's truncation here. A negative `by` (only
    # for shift < -31, which QuantizeMultiplier never produces) would be UB in C.
    folded = (multiplier << by) // count if by >= 0 else (multiplier >> -by) // count
    return folded, shift - by


def reduce_max_params(graph: Graph, op: Op, axes: np.ndarray | None = None) -> MeanParams:
    """REDUCE_MAX int8: TFLite Micro's Eval refuses input and output quantizations that
    differ (scale or zero point); the output is the raw maximum."""
    p = mean_params(graph, op, axes)
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.dtype == np.int8:
        assert x.quant is not None and y.quant is not None  # mean_params checked
        same = (np.float32(x.quant.scale[0]) == np.float32(y.quant.scale[0])
                and int(x.quant.zero_point[0]) == int(y.quant.zero_point[0]))
        if not same:
            raise UnsupportedModelError(
                f"{graph.source}: {op.name}: tensor '{y.name}' must share input '{x.name}''s "
                f"scale and zero point (TFLite Micro's int8 REDUCE_MAX takes no rescale)")
    return p


def mean_params(graph: Graph, op: Op, axes: np.ndarray | None = None) -> MeanParams:
    """MeanParams of a MEAN op; `axes` overrides the axis tensor (e.g. a runtime value)."""
    where = f"{graph.source}: {op.name}"
    options = op.options
    if not isinstance(options, ReducerOptions):
        raise ModelFormatError(f"{where}: options {type(options).__name__}")
    x = graph.tensors[op.inputs[0]]
    y = graph.tensors[op.outputs[0]]
    if axes is None:
        axes = graph.tensors[op.inputs[1]].data
        if axes is None:
            raise UnsupportedModelError(f"{where}: the axis tensor must be constant")
    resolved = resolve_axes(axes, len(x.shape))
    if x.dtype != np.int8:
        return MeanParams(axes=resolved, keep_dims=options.keep_dims)
    if x.quant is None or y.quant is None:
        raise UnsupportedModelError(f"{where}: int8 tensors without quantization")
    in_scale, out_scale = np.float32(x.quant.scale[0]), np.float32(y.quant.scale[0])
    multiplier, shift = quantize_multiplier(float(in_scale) / float(out_scale))
    return MeanParams(
        axes=resolved,
        keep_dims=options.keep_dims,
        input_zero_point=int(x.quant.zero_point[0]),
        output_zero_point=int(y.quant.zero_point[0]),
        multiplier=multiplier,
        shift=shift,
    )
