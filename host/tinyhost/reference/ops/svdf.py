"""SVDF: TFLite Micro's integer SVDF (EvalIntegerSvdfReference) with an int16 state.

Per invoke: each state row (one per batch and filter, `memory` values oldest first) moves
one step left; its newest value is the feature dot product of the input, requantized to the
state's scale; the time dot product of each row with weights_time is summed over the `rank`
filters of a unit, plus the bias, and requantized to int8. TFLM's integer path applies no
fused activation (RELU included): the option is ignored, as there.

The kernel returns the output and then the state's new value (the executor keeps it for
the next invoke; ARCHITECTURE.md §4.12).
"""

from __future__ import annotations

import numpy as np

from tinyhost.arith.fixedpoint import multiply_by_quantized_multiplier, wrap_int32
from tinyhost.arith.svdf import SvdfParams, svdf_params
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind


def svdf_int8(x: np.ndarray, weights_feature: np.ndarray, weights_time: np.ndarray,
              bias: np.ndarray | None, state: np.ndarray,
              p: SvdfParams) -> tuple[np.ndarray, np.ndarray]:
    """(output int8 [batches, units], new state int16 [batches, filters * memory])."""
    rows = state.astype(np.int64).reshape(p.batches, p.filters, p.memory)
    shifted = np.empty_like(rows)
    shifted[:, :, :-1] = rows[:, :, 1:]
    xs = x.astype(np.int64).reshape(p.batches, p.input_size) + p.input_offset
    dot = wrap_int32(xs @ weights_feature.astype(np.int64).T)  # [batches, filters]
    newest = multiply_by_quantized_multiplier(dot, p.feature_multiplier, p.feature_shift)
    shifted[:, :, -1] = np.clip(newest + p.state_zero_point, -32768, 32767)
    time = wrap_int32(np.einsum("bfm,fm->bf", shifted - p.state_zero_point,
                                weights_time.astype(np.int64)))
    acc = time.reshape(p.batches, p.units, p.rank).sum(axis=2)
    if bias is not None:
        acc = acc + bias.astype(np.int64).reshape(1, p.units)
    acc = wrap_int32(acc)
    y = multiply_by_quantized_multiplier(acc, p.time_multiplier, p.time_shift) + p.output_offset
    new_state = shifted.astype(np.int16).reshape(state.shape)
    return np.clip(y, -128, 127).astype(np.int8), new_state


def run_svdf(graph: Graph, op: Op, args: list[np.ndarray | None]) -> list[np.ndarray]:
    x, wf, wt, bias, state = args[:5]
    if x.dtype != np.int8 or state.dtype != np.int16:
        raise UnsupportedModelError(
            f"SVDF with {x.dtype} input and {state.dtype} state is not supported (int8 input, "
            "int16 state)"
        )
    y, new_state = svdf_int8(x, wf, wt, bias, state, svdf_params(graph, op))
    return [y, new_state]


KERNELS = {OpKind.SVDF: run_svdf}
