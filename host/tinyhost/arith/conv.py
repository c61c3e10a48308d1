"""Integer parameters of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED.

Derived from the IR exactly as TFLite Micro's Prepare functions derive them
(PopulateConvolutionQuantizationParams, CalculateOpDataFullyConnected), so that the NumPy
reference and the C kernels requantize with the very same (multiplier, shift) pairs.
The dataclasses are plain ints and int32 arrays: a C kernel takes the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.arith.fused_activation import int8_activation_range, int16_activation_range
from tinyhost.arith.padding import compute_window_padding
from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    Graph,
    Op,
    OpKind,
    Quantization,
)


@dataclass(frozen=True)
class ConvParams:
    """One CONV_2D or DEPTHWISE_CONV_2D.

    Shifts are exponents as QuantizeMultiplier returns them: positive shifts left. For
    float32 ops the quantization fields are neutral (zero offsets, empty multiplier arrays,
    full int8 range) and unused; `activation` is what the float kernel applies.
    """

    input_offset: int  # -input_zero_point, added to every input value
    output_offset: int  # output_zero_point
    out_multiplier: np.ndarray  # int32 [out_channels], Q31 significands
    out_shift: np.ndarray  # int32 [out_channels]
    act_min: int
    act_max: int
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    pad_top: int
    pad_left: int
    pad_bottom: int  # the window never reads below/right of these, see arith.padding
    pad_right: int
    ch_mult: int = 1  # DEPTHWISE_CONV_2D: output channels per input channel
    activation: Activation = Activation.NONE


@dataclass(frozen=True)
class FullyConnectedParams:
    """One FULLY_CONNECTED; per-tensor weights give multiplier arrays of length 1.

    `filter_offset` is -weights_zero_point for per-tensor weights (TFLM still applies it
    there for backward compatibility) and 0 for per-channel weights (TFLM ignores it).
    """

    input_offset: int
    filter_offset: int
    output_offset: int
    out_multiplier: np.ndarray  # int32 [1] or [out_channels]
    out_shift: np.ndarray  # int32 [1] or [out_channels]
    act_min: int
    act_max: int
    activation: Activation = Activation.NONE


def _where(graph: Graph, op: Op) -> str:
    return f"{graph.source}: {op.name}"


def _quant(graph: Graph, op: Op, index: int | None, role: str) -> Quantization:
    if index is None:
        raise ModelFormatError(f"{_where(graph, op)}: the {role} tensor is missing")
    tensor = graph.tensors[index]
    if tensor.quant is None or tensor.quant.scale.size == 0:
        raise UnsupportedModelError(
            f"{_where(graph, op)}: int8 {role} tensor '{tensor.name}' has no quantization"
        )
    return tensor.quant


def per_channel_multipliers(
    input_scale: float, filter_scales: np.ndarray, output_scale: float, channels: int
) -> tuple[np.ndarray, np.ndarray]:
    """PopulateConvolutionQuantizationParams: double(s_in) * double(s_w[c]) / double(s_out).

    A single filter scale is broadcast to every channel, as TFLM does for per-tensor weights.
    """
    scales = np.asarray(filter_scales, np.float32).reshape(-1)
    if scales.size == 1:
        scales = np.repeat(scales, channels)
    multipliers = np.empty(channels, np.int32)
    shifts = np.empty(channels, np.int32)
    for c in range(channels):
        real = float(np.float32(input_scale)) * float(scales[c]) / float(np.float32(output_scale))
        multiplier, shift = quantize_multiplier(real)
        if shift > 30:  # TFLM's integer arithmetic would overflow; the kernels take <= 30
            raise ModelFormatError(f"a requantization scale of {real:.3g} (a degenerate "
                                   "model's scales): int8 arithmetic cannot represent it")
        multipliers[c], shifts[c] = multiplier, shift
    return multipliers, shifts


def per_tensor_fc_multiplier(
    input_scale: float, filter_scale: float, output_scale: float
) -> tuple[int, int]:
    """The per-tensor FULLY_CONNECTED multiplier: double(s_in) * double(s_w) / double(s_out).

    Older TFLite code (GetQuantizedConvolutionMultipler) rounded s_in * s_w to float32
    first; the pinned tflite-micro multiplies in double, like the per-channel path, and that
    is observable (tests/test_reference_conv.py pins a case where the two differ).
    """
    real = float(np.float32(input_scale)) * float(np.float32(filter_scale))
    return quantize_multiplier(real / float(np.float32(output_scale)))


def is_16x8(graph: Graph, op: Op) -> bool:
    """int16 activations with int8 weights (TFLM's 16x8 CONV_2D / DEPTHWISE_CONV_2D /
    FULLY_CONNECTED)."""
    return (graph.tensors[op.inputs[0]].dtype == np.int16
            and graph.tensors[op.inputs[1]].dtype == np.int8)


def _quant_16x8(graph: Graph, op: Op, channels: int) -> dict:
    """The integer parameters of a 16x8 op: per-channel multipliers (a per-tensor weight
    scale broadcast), the int16 activation range, no offsets. TFLM's 16x8 kernels ignore the
    activations' zero points and apply a weight zero point only per tensor; the 16x8 models
    the converter writes have them all 0, and anything else is refused here rather than
    reproduced. The bias must be int64 (or absent): the kernels accumulate in int64."""
    where = _where(graph, op)
    for role, index in (("input", op.inputs[0]), ("weights", op.inputs[1]),
                        ("output", op.outputs[0])):
        q = _quant(graph, op, index, role)
        if np.any(q.zero_point != 0):
            raise UnsupportedModelError(
                f"{where}: 16x8 {role} '{graph.tensors[index].name}' has zero point "
                f"{q.zero_point.tolist()[:4]}; only 0 is supported")
    y = graph.tensors[op.outputs[0]]
    if y.dtype != np.int16:
        raise UnsupportedModelError(f"{where}: int16 input with {y.dtype} output '{y.name}'")
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    if bias is not None and graph.tensors[bias].dtype != np.int64:
        raise UnsupportedModelError(
            f"{where}: 16x8 bias '{graph.tensors[bias].name}' is {graph.tensors[bias].dtype}; "
            "only int64 biases are supported")
    if bias is None and op.kind is OpKind.DEPTHWISE_CONV_2D:
        raise UnsupportedModelError(f"{where}: a 16x8 DEPTHWISE_CONV_2D without bias (TFLite "
                                    "Micro's kernel reads the absent bias)")
    xq, wq, yq = (graph.tensors[i].quant for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    if wq.per_channel and wq.scale.size != channels:
        raise ModelFormatError(f"{where}: weights have {wq.scale.size} scales for {channels} "
                               "output channels")
    multipliers, shifts = per_channel_multipliers(float(xq.scale[0]), wq.scale,
                                                  float(yq.scale[0]), channels)
    if shifts.max() > 7:  # TFLM's int64 MultiplyByQuantizedMultiplier asserts shift < 8
        raise UnsupportedModelError(f"{where}: a 16x8 requantization scale above 128 (shift "
                                    f"{int(shifts.max())}); the int64 form takes shifts <= 7")
    act_min, act_max = int16_activation_range(op.options.activation, yq)
    return {"input_offset": 0, "output_offset": 0, "out_multiplier": multipliers,
            "out_shift": shifts, "act_min": act_min, "act_max": act_max}


def _neutral_quant() -> dict:
    return {
        "input_offset": 0,
        "output_offset": 0,
        "out_multiplier": np.zeros(0, np.int32),
        "out_shift": np.zeros(0, np.int32),
        "act_min": -128,
        "act_max": 127,
    }


def conv_params(graph: Graph, op: Op) -> ConvParams:
    """ConvParams of a CONV_2D or DEPTHWISE_CONV_2D op, as TFLM's ConvPrepare computes them."""
    options = op.options
    if not isinstance(options, (Conv2DOptions, DepthwiseConv2DOptions)):
        raise ModelFormatError(f"{_where(graph, op)}: options {type(options).__name__}")
    x = graph.tensors[op.inputs[0]]
    w = graph.tensors[op.inputs[1]]
    y = graph.tensors[op.outputs[0]]
    if len(x.shape) != 4 or len(w.shape) != 4 or len(y.shape) != 4:
        raise UnsupportedModelError(
            f"{_where(graph, op)}: needs 4-D input, filter and output, got "
            f"{list(x.shape)}, {list(w.shape)}, {list(y.shape)}"
        )
    depthwise = op.kind is OpKind.DEPTHWISE_CONV_2D
    # Conv filters are [Cout, KH, KW, Cin/groups]; depthwise filters are [1, KH, KW, Cout].
    out_channels = w.shape[3] if depthwise else w.shape[0]
    ch_mult = 1
    if depthwise:
        # Computed from the shapes: some files store 0 in the option.
        if x.shape[3] == 0 or out_channels % x.shape[3] != 0:
            raise ModelFormatError(
                f"{_where(graph, op)}: {out_channels} output channels are not a multiple of "
                f"{x.shape[3]} input channels"
            )
        ch_mult = out_channels // x.shape[3]
    pads = compute_window_padding(
        options.padding, x.shape[1], x.shape[2], w.shape[1], w.shape[2],
        options.stride_h, options.stride_w, options.dilation_h, options.dilation_w,
        explicit=options.explicit_padding,
    )
    if is_16x8(graph, op):
        quant = _quant_16x8(graph, op, out_channels)
    elif x.dtype == np.int8:
        xq = _quant(graph, op, op.inputs[0], "input")
        wq = _quant(graph, op, op.inputs[1], "filter")
        yq = _quant(graph, op, op.outputs[0], "output")
        if wq.per_channel and wq.scale.size != out_channels:
            raise ModelFormatError(
                f"{_where(graph, op)}: filter '{w.name}' has {wq.scale.size} scales for "
                f"{out_channels} output channels"
            )
        multipliers, shifts = per_channel_multipliers(
            float(xq.scale[0]), wq.scale, float(yq.scale[0]), out_channels
        )
        act_min, act_max = int8_activation_range(options.activation, yq)
        quant = {
            "input_offset": -int(xq.zero_point[0]),
            "output_offset": int(yq.zero_point[0]),
            "out_multiplier": multipliers,
            "out_shift": shifts,
            "act_min": act_min,
            "act_max": act_max,
        }
    else:
        quant = _neutral_quant()
    return ConvParams(
        **quant,
        stride_h=options.stride_h,
        stride_w=options.stride_w,
        dilation_h=options.dilation_h,
        dilation_w=options.dilation_w,
        pad_top=pads.top,
        pad_left=pads.left,
        pad_bottom=pads.bottom,
        pad_right=pads.right,
        ch_mult=ch_mult,
        activation=options.activation,
    )


def fully_connected_params(graph: Graph, op: Op) -> FullyConnectedParams:
    """FullyConnectedParams as TFLM's CalculateOpDataFullyConnected computes them."""
    options = op.options
    if not isinstance(options, FullyConnectedOptions):
        raise ModelFormatError(f"{_where(graph, op)}: options {type(options).__name__}")
    x = graph.tensors[op.inputs[0]]
    w = graph.tensors[op.inputs[1]]
    if len(w.shape) != 2:
        raise UnsupportedModelError(
            f"{_where(graph, op)}: weights '{w.name}' must be 2-D, got {list(w.shape)}"
        )
    if is_16x8(graph, op):
        return FullyConnectedParams(**_quant_16x8(graph, op, w.shape[0]), filter_offset=0,
                                    activation=options.activation)
    if x.dtype != np.int8:
        return FullyConnectedParams(
            input_offset=0, filter_offset=0, output_offset=0,
            out_multiplier=np.zeros(0, np.int32), out_shift=np.zeros(0, np.int32),
            act_min=-128, act_max=127, activation=options.activation,
        )
    xq = _quant(graph, op, op.inputs[0], "input")
    wq = _quant(graph, op, op.inputs[1], "weights")
    yq = _quant(graph, op, op.outputs[0], "output")
    if wq.per_channel:
        if wq.scale.size != w.shape[0]:
            raise ModelFormatError(
                f"{_where(graph, op)}: weights '{w.name}' have {wq.scale.size} scales for "
                f"{w.shape[0]} output channels"
            )
        multipliers, shifts = per_channel_multipliers(
            float(xq.scale[0]), wq.scale, float(yq.scale[0]), w.shape[0]
        )
        filter_offset = 0
    else:
        m, s = per_tensor_fc_multiplier(float(xq.scale[0]), float(wq.scale[0]),
                                        float(yq.scale[0]))
        multipliers, shifts = np.array([m], np.int32), np.array([s], np.int32)
        filter_offset = -int(wq.zero_point[0])
    act_min, act_max = int8_activation_range(options.activation, yq)
    return FullyConnectedParams(
        input_offset=-int(xq.zero_point[0]),
        filter_offset=filter_offset,
        output_offset=int(yq.zero_point[0]),
        out_multiplier=multipliers,
        out_shift=shifts,
        act_min=act_min,
        act_max=act_max,
        activation=options.activation,
    )
