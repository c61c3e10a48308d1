"""Integer parameters of AVERAGE_POOL_2D and MAX_POOL_2D, as TFLite Micro's PoolingPrepare.

int8 pooling never requantizes: TFLM requires the input and output quantization to agree
and works on the raw int8 values, so the parameters are only the window and the clamp.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.arith.fused_activation import int8_activation_range
from tinyhost.arith.padding import compute_window_padding
from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import Activation, Graph, Op, Pool2DOptions


@dataclass(frozen=True)
class PoolParams:
    """One 2-D pooling op. For float32 ops act_min/act_max are unused; `activation` applies."""

    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    pad_bottom: int
    pad_right: int
    act_min: int = -128
    act_max: int = 127
    activation: Activation = Activation.NONE


def pool_params(graph: Graph, op: Op) -> PoolParams:
    options = op.options
    where = f"{graph.source}: {op.name}"
    if not isinstance(options, Pool2DOptions):
        raise ModelFormatError(f"{where}: options {type(options).__name__}")
    x = graph.tensors[op.inputs[0]]
    y = graph.tensors[op.outputs[0]]
    if len(x.shape) != 4:
        raise UnsupportedModelError(f"{where}: needs a 4-D input, got {list(x.shape)}")
    pads = compute_window_padding(
        options.padding, x.shape[1], x.shape[2], options.filter_h, options.filter_w,
        options.stride_h, options.stride_w,
    )
    act_min, act_max = -128, 127
    if x.dtype == np.int8:
        if x.quant is None or y.quant is None:
            raise UnsupportedModelError(f"{where}: int8 tensors without quantization")
        # TFLM refuses differing scales (beyond 1e-6) or zero points: values are not rescaled.
        if (abs(float(x.quant.scale[0]) - float(y.quant.scale[0])) > 1e-6
                or int(x.quant.zero_point[0]) != int(y.quant.zero_point[0])):
            raise UnsupportedModelError(
                f"{where}: input '{x.name}' and output '{y.name}' must share scale and zero point"
            )
        act_min, act_max = int8_activation_range(options.activation, y.quant)
    return PoolParams(
        stride_h=options.stride_h,
        stride_w=options.stride_w,
        filter_h=options.filter_h,
        filter_w=options.filter_w,
        pad_top=pads.top,
        pad_left=pads.left,
        pad_bottom=pads.bottom,
        pad_right=pads.right,
        act_min=act_min,
        act_max=act_max,
        activation=options.activation,
    )
