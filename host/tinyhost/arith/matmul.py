"""BATCH_MATMUL (int8): TFLite Micro's Prepare. The real multiplier is
double(s_lhs) * double(s_rhs) / double(s_out) (GetQuantizedConvolutionMultipler, as the
per-tensor FULLY_CONNECTED one), zero points are added back as offsets, and there is no fused
activation: the output is clamped to the int8 range."""

from __future__ import annotations

from dataclasses import dataclass

from tinyhost.arith.conv import per_tensor_fc_multiplier
from tinyhost.errors import ModelFormatError
from tinyhost.ir import Graph, Op


@dataclass(frozen=True)
class BatchMatMulParams:
    lhs_offset: int  # -lhs zero point
    rhs_offset: int  # -rhs zero point
    output_offset: int  # output zero point
    multiplier: int
    shift: int
    act_min: int = -128
    act_max: int = 127


def batch_matmul_params(graph: Graph, op: Op) -> BatchMatMulParams:
    lhs, rhs, out = (graph.tensors[t] for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    for t in (lhs, rhs, out):
        if t.quant is None or t.quant.scale.size != 1:
            raise ModelFormatError(f"{op.name}: tensor '{t.name}' needs one scale and zero "
                                   "point (TFLite Micro's BATCH_MATMUL is per tensor)")
    multiplier, shift = per_tensor_fc_multiplier(float(lhs.quant.scale[0]),
                                                 float(rhs.quant.scale[0]),
                                                 float(out.quant.scale[0]))  # fmt: skip
    return BatchMatMulParams(-int(lhs.quant.zero_point[0]), -int(rhs.quant.zero_point[0]),
                             int(out.quant.zero_point[0]), multiplier, shift)  # fmt: skip
