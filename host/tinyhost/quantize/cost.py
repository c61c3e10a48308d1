"""What quantization costs: the quantized model's outputs against the float model's, in the
NumPy reference (bit-exact with TFLite Micro), over sample inputs.

`top1_agreement` is the share of samples whose largest output (over the last axis of the first
output) is the float model's; `rmse` the root-mean-square error of the first output,
dequantized, against the float output. Both inputs take float samples (the quantized model's
int8 inputs are quantized from them, as `tinyhost reference` does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tinyhost import reference
from tinyhost.ir import Graph


@dataclass(frozen=True)
class QuantizationCost:
    samples: int
    top1_agreement: float
    rmse: float


def _quantized_input(graph: Graph, index: int, x: np.ndarray) -> np.ndarray:
    t = graph.tensors[graph.inputs[index]]
    if t.quant is None or t.dtype == x.dtype:
        return x.astype(t.dtype)
    q = t.quant
    info = np.iinfo(t.dtype)
    values = np.round(x / float(q.scale[0])) + int(q.zero_point[0])
    return np.clip(values, info.min, info.max).astype(t.dtype)


def _float_output(graph: Graph, y: np.ndarray) -> np.ndarray:
    t = graph.tensors[graph.outputs[0]]
    if t.quant is None:
        return np.asarray(y, np.float64)
    return (np.asarray(y, np.float64) - int(t.quant.zero_point[0])) * float(t.quant.scale[0])


def quantization_cost(float_graph: Graph, quantized: Graph,
                      samples: Sequence[Sequence[np.ndarray]]) -> QuantizationCost:
    """The quantized model against the float model over `samples` (each: one array per input)."""
    agree, squares, count = 0, 0.0, 0
    for sample in samples:
        want = np.asarray(reference.run(float_graph, list(sample)).outputs[0], np.float64)
        xs = [_quantized_input(quantized, i, np.asarray(x)) for i, x in enumerate(sample)]
        got = _float_output(quantized, reference.run(quantized, xs).outputs[0])
        agree += int(np.argmax(got.reshape(-1, got.shape[-1])[0])
                     == np.argmax(want.reshape(-1, want.shape[-1])[0]))  # fmt: skip
        squares += float(np.sum((got - want) ** 2))
        count += want.size
    n = len(samples)
    return QuantizationCost(n, agree / n if n else 0.0,
                            float(np.sqrt(squares / count)) if count else 0.0)  # fmt: skip
