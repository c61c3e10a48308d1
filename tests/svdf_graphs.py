"""SVDF graphs built in memory (int8 input and weights_feature, int16 weights_time and state,
int32 bias), shared by the reference oracle test and the device tests."""

from __future__ import annotations

import numpy as np

from reference_single_op import q
from tinyhost.ir import (
    Activation,
    Graph,
    NoOptions,
    Op,
    OpKind,
    SoftmaxOptions,
    SVDFOptions,
    Tensor,
)

I8, I16, I32 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)


def svdf_tensors(rng: np.random.Generator, prefix: str, x: int, batches: int, input_size: int,
                 units: int, rank: int, memory: int, bias: bool,
                 tensors: list[Tensor],
                 state_gain: float = 1.0) -> tuple[int, int, int, int | None, int, int]:
    """Append one SVDF's tensors reading tensor `x`; returns (x, wf, wt, bias, state, y)."""
    filters = units * rank
    s_in = float(tensors[x].quant.scale[0])
    s_wf = 0.01
    # feature sums of random int8 have a spread near 5400 * sqrt(input_size): the newest
    # state values spread near +-9000 (a few saturate at the int16 bounds)
    # (state_gain < 1: a finer state scale, most newest values saturate)
    s_state = float(np.float32(s_in * s_wf * np.sqrt(input_size) * 0.6 * state_gain))
    s_wt = 1.0 / 4096
    # time sums of rank * memory terms of ~9000 x ~4600 spread near +-50 at the output scale
    s_out = float(np.float32(s_state * s_wt * 9000 * 4600 * np.sqrt(rank * memory) / 50))
    n = len(tensors)
    tensors += [
        Tensor(f"{prefix}_wf", (filters, input_size), I8,
               rng.integers(-127, 128, (filters, input_size)).astype(np.int8), q(s_wf)),
        Tensor(f"{prefix}_wt", (filters, memory), I16,
               rng.integers(-8000, 8001, (filters, memory)).astype(np.int16), q(s_wt)),
    ]
    b = None
    if bias:
        s_bias = float(np.float32(np.float32(s_state) * np.float32(s_wt)))
        tensors.append(Tensor(f"{prefix}_b", (units,), I32,
                              rng.integers(-20_000_000, 20_000_001, units).astype(np.int32),
                              q(s_bias)))
        b = len(tensors) - 1
    tensors.append(Tensor(f"{prefix}_state", (batches, filters * memory), I16, None,
                          q(s_state), is_variable=True))
    state = len(tensors) - 1
    tensors.append(Tensor(f"{prefix}_y", (batches, units), I8, None,
                          q(s_out, int(rng.integers(-20, 21)))))
    return x, n, n + 1, b, state, len(tensors) - 1


def svdf_graph(rng: np.random.Generator, batches: int, input_size: int, units: int, rank: int,
               memory: int, activation: Activation = Activation.NONE,
               bias: bool = True, state_gain: float = 1.0) -> Graph:
    """One SVDF op; the graph's only input is the op's input."""
    tensors = [Tensor("x", (batches, input_size), I8, None, q(0.05, int(rng.integers(-10, 11))))]
    x, wf, wt, b, state, y = svdf_tensors(rng, "svdf", 0, batches, input_size, units, rank,
                                          memory, bias, tensors, state_gain)
    op = Op(OpKind.SVDF, (x, wf, wt, b, state), (y,), SVDFOptions(rank, activation))
    return Graph(tuple(tensors), (op,), (x,), (y,), name="svdf")


def svdf_stack_graph(rng: np.random.Generator, second_bias: bool = False) -> Graph:
    """Two SVDFs in a row, as a keyword-spotting model stacks them: rank 1 with bias and
    RELU (ignored by the integer SVDF, as in TFLM), then rank 2 without bias (TFLM's
    Prepare cannot take that: it reads the bias's scale) unless `second_bias`; both outputs
    are model outputs."""
    tensors = [Tensor("x", (1, 16), I8, None, q(0.05, 3))]
    x, wf, wt, b, s1, y1 = svdf_tensors(rng, "svdf1", 0, 1, 16, 12, 1, 4, True, tensors)
    ops = [Op(OpKind.SVDF, (x, wf, wt, b, s1), (y1,), SVDFOptions(1, Activation.RELU))]
    _, wf2, wt2, b2, s2, y2 = svdf_tensors(rng, "svdf2", y1, 1, 12, 6, 2, 8, second_bias,
                                          tensors)
    ops.append(Op(OpKind.SVDF, (y1, wf2, wt2, b2, s2), (y2,), SVDFOptions(2)))
    return Graph(tuple(tensors), tuple(ops), (x,), (y1, y2), name="svdf_stack",
                 source="svdf_stack.tflite")


def kws_svdf_graph(rng: np.random.Generator, second_bias: bool = True) -> Graph:
    """The stack above with the int16 edges a keyword-spotting SVDF model brings: SOFTMAX
    int8 -> int16, QUANTIZE int16 -> int8 of its probabilities and QUANTIZE int8 -> int16
    of the logits; outputs: the first SVDF's, the int16 and int8 probabilities and the int16
    logits."""
    base = svdf_stack_graph(rng, second_bias)
    tensors = list(base.tensors)
    y1, y2 = base.outputs
    logits_q = tensors[y2].quant
    tensors += [
        Tensor("probs16", (1, 6), I16, None, q(1.0 / 65536, -32768)),
        Tensor("probs8", (1, 6), I8, None, q(1.0 / 256, -128)),
        Tensor("logits16", (1, 6), I16, None, q(float(logits_q.scale[0]) / 200.0, 0)),
    ]
    p16, p8, l16 = len(tensors) - 3, len(tensors) - 2, len(tensors) - 1
    ops = [*base.ops,
           Op(OpKind.SOFTMAX, (y2,), (p16,), SoftmaxOptions(1.0)),
           Op(OpKind.QUANTIZE, (p16,), (p8,), NoOptions()),
           Op(OpKind.QUANTIZE, (y2,), (l16,), NoOptions())]
    return Graph(tuple(tensors), tuple(ops), base.inputs, (y1, p16, p8, l16), name="kws_svdf",
                 source="kws_svdf.tflite")
