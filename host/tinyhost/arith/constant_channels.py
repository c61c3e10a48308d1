"""Output channels of a CONV_2D whose value no input can change, found on the host.

Trained models carry near-dead channels: a multiplier of 2^-27 under a bias of 2^30, or a
range the activation clamps to one value. Requantization is monotonic in the accumulator, so
a channel whose smallest and largest possible accumulator requantize (and clamp) to the same
int8 value outputs that value for every input. The bounds take every input value int8 allows
(padding reads the zero point, whose term is 0, inside the same bounds), and the arithmetic
is the reference's (`arith.fixedpoint`), so the constants are exactly what the kernel would
have written. The compiled backend then runs the convolution for the other channels only
(ARCHITECTURE.md §4.4b); VWW's late pointwise layers are 55-91% such channels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.arith.conv import conv_params
from tinyhost.arith.fixedpoint import multiply_by_quantized_multiplier
from tinyhost.ir import Graph, Op, OpKind

_INT32 = (-(1 << 31), (1 << 31) - 1)
# Computing only the live channels pays when at least this share of them is constant: the
# expansion costs about a word copy per 4 channels and 3 instructions per live value.
WORTH_SHARE = 1 / 8


@dataclass(frozen=True)
class ConstantChannels:
    live: tuple[int, ...]  # channels the kernel must compute, ascending
    pixel: np.ndarray  # int8 [channels]: the constant channels' values (0 at live ones)

    @property
    def constant_count(self) -> int:
        return self.pixel.size - len(self.live)

    @property
    def worth_it(self) -> bool:
        """Whether computing the live channels only pays (WORTH_SHARE)."""
        return self.constant_count >= WORTH_SHARE * self.pixel.size


def constant_channels(graph: Graph, op: Op) -> ConstantChannels | None:
    """The constant channels of an int8 CONV_2D with constant weights, or None (another op,
    or no channel is constant)."""
    if op.kind is not OpKind.CONV_2D or graph.tensors[op.inputs[0]].dtype != np.int8:
        return None
    weights = graph.tensors[op.inputs[1]].data
    bias_t = op.inputs[2] if len(op.inputs) > 2 else None
    bias_data = None if bias_t is None else graph.tensors[bias_t].data
    if weights is None or (bias_t is not None and bias_data is None):
        return None
    if np.shape(weights)[3] != graph.tensors[op.inputs[0]].shape[3]:
        return None  # grouped: dropping channels would break the groups' channel ranges
    p = conv_params(graph, op)
    w = np.asarray(weights, np.int64).reshape(np.shape(weights)[0], -1)
    bias = np.zeros(w.shape[0], np.int64) if bias_data is None else np.asarray(bias_data, np.int64)
    low_x, high_x = -128 + p.input_offset, 127 + p.input_offset  # x + input_offset
    low = bias + np.minimum(low_x * w, high_x * w).sum(axis=1)
    high = bias + np.maximum(low_x * w, high_x * w).sum(axis=1)
    if low.min() < _INT32[0] or high.max() > _INT32[1]:
        return None  # the kernel's int32 accumulator could wrap: no bound holds

    def output(acc: np.ndarray) -> np.ndarray:
        y = multiply_by_quantized_multiplier(acc, p.out_multiplier, p.out_shift)
        return np.clip(np.asarray(y, np.int64) + p.output_offset, p.act_min, p.act_max)

    lo, hi = output(low), output(high)
    constant = lo == hi
    if not constant.any():
        return None
    live = tuple(int(c) for c in np.flatnonzero(~constant))
    return ConstantChannels(live, np.where(constant, lo, 0).astype(np.int8))
