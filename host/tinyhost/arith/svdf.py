"""Integer parameters of the int8 SVDF, as TFLite Micro's PrepareSvdf derives them.

Input int8 [batches, input_size]; weights_feature int8 [filters, input_size]; weights_time
int16 [filters, memory]; bias int32 [units] (optional); the state, a variable int16 tensor
[batches, filters * memory] kept across invokes; output int8 [batches, units], units =
filters / rank. Two requantizations: the feature dot product into the state's scale
(input * weights_feature / state, computed in float32 then taken as double), and the rank
sum of the time dot products into the output's (state * weights_time / output).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.arith.elementwise import per_tensor_quant
from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.ir import Graph, Op, SVDFOptions


@dataclass(frozen=True)
class SvdfParams:
    batches: int
    input_size: int
    filters: int
    units: int
    rank: int
    memory: int
    input_offset: int  # -input zero point
    state_zero_point: int  # added after the feature requantization, subtracted in the time sum
    output_offset: int  # output zero point
    feature_multiplier: int  # input * weights_feature / state
    feature_shift: int
    time_multiplier: int  # state * weights_time / output
    time_shift: int


def svdf_params(graph: Graph, op: Op) -> SvdfParams:
    """For a validated graph (passes.validate checks the shapes, types and bias scale)."""
    o = op.options
    assert isinstance(o, SVDFOptions)
    x, wf, wt = (graph.tensors[op.inputs[k]] for k in range(3))
    state = graph.tensors[op.inputs[4]]
    out = graph.tensors[op.outputs[0]]
    s_in, zp_in = per_tensor_quant(graph, op, x)
    s_wf, _ = per_tensor_quant(graph, op, wf)
    s_wt, _ = per_tensor_quant(graph, op, wt)
    s_state, zp_state = per_tensor_quant(graph, op, state)
    s_out, zp_out = per_tensor_quant(graph, op, out)
    # float32 products and quotient, as the C++ computes them before the cast to double.
    feature = float(np.float32(np.float32(s_in * s_wf) / s_state))
    time = float(np.float32(np.float32(s_state * s_wt) / s_out))
    m1, e1 = quantize_multiplier(feature)
    m2, e2 = quantize_multiplier(time)
    filters, memory = wf.shape[0], wt.shape[1]
    return SvdfParams(
        batches=x.shape[0], input_size=x.shape[1], filters=filters, units=filters // o.rank,
        rank=o.rank, memory=memory, input_offset=-zp_in, state_zero_point=zp_state,
        output_offset=zp_out, feature_multiplier=m1, feature_shift=e1, time_multiplier=m2,
        time_shift=e2,
    )  # fmt: skip
