"""Fused activation ranges: the clamp every int8 and float kernel applies last."""

from __future__ import annotations

import numpy as np

from tinyhost.arith.fixedpoint import round_half_away
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Activation, Quantization


def _quantize_bound(value: float, quant: Quantization) -> int:
    # TFLite Micro rounds value/scale in float32 before adding the zero point.
    scaled = float(np.float32(value) / np.float32(quant.scale[0]))
    return int(quant.zero_point[0]) + round_half_away(scaled)


def int8_activation_range(activation: Activation, output_quant: Quantization) -> tuple[int, int]:
    """CalculateActivationRangeQuantized for an int8 output."""
    return activation_range(activation, output_quant, -128, 127)


def int16_activation_range(activation: Activation, output_quant: Quantization) -> tuple[int, int]:
    """CalculateActivationRangeQuantized for an int16 output."""
    return activation_range(activation, output_quant, -32768, 32767)


def activation_range(activation: Activation, output_quant: Quantization, qmin: int,
                     qmax: int) -> tuple[int, int]:
    """CalculateActivationRangeQuantized for an output of range [qmin, qmax]."""
    if activation is Activation.NONE:
        return qmin, qmax
    if activation is Activation.RELU:
        return max(qmin, _quantize_bound(0.0, output_quant)), qmax
    if activation is Activation.RELU6:
        return (
            max(qmin, _quantize_bound(0.0, output_quant)),
            min(qmax, _quantize_bound(6.0, output_quant)),
        )
    if activation is Activation.RELU_N1_TO_1:
        return (
            max(qmin, _quantize_bound(-1.0, output_quant)),
            min(qmax, _quantize_bound(1.0, output_quant)),
        )
    raise UnsupportedModelError(f"fused activation {activation.name} is not supported for "
                               "integer outputs")


def apply_float_activation(x: np.ndarray, activation: Activation) -> np.ndarray:
    """The float32 fused activations."""
    if activation is Activation.NONE:
        return x
    if activation is Activation.RELU:
        return np.maximum(x, np.float32(0))
    if activation is Activation.RELU6:
        return np.clip(x, np.float32(0), np.float32(6))
    if activation is Activation.RELU_N1_TO_1:
        return np.clip(x, np.float32(-1), np.float32(1))
    # A fused TANH is ignored by TFLite Micro's float kernels and refused for int8: refuse it
    # rather than pick one of two behaviours silently.
    raise UnsupportedModelError(f"fused activation {activation.name} is not supported")
