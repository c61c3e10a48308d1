"""Op kinds and their typed options.

Kinds are named and numbered as TFLite's builtin operators so that a kind read from a
.tflite file needs no table to be written back. Options hold only what execution needs.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class OpKind(enum.Enum):
    """Ops tinyhost understands; values are TFLite BuiltinOperator codes."""

    ADD = 0
    AVERAGE_POOL_2D = 1
    CONCATENATION = 2
    CONV_2D = 3
    DEPTHWISE_CONV_2D = 4
    DEPTH_TO_SPACE = 5
    DEQUANTIZE = 6
    FULLY_CONNECTED = 9
    LOGISTIC = 14
    MAX_POOL_2D = 17
    MUL = 18
    RELU = 19
    RELU6 = 21
    RESHAPE = 22
    RESIZE_BILINEAR = 23
    SOFTMAX = 25
    SPACE_TO_DEPTH = 26
    SVDF = 27
    TANH = 28
    PAD = 34
    GATHER = 36
    TRANSPOSE = 39
    MEAN = 40
    SUB = 41
    SQUEEZE = 43
    STRIDED_SLICE = 45
    SPLIT = 49
    ARG_MAX = 56
    PADV2 = 60
    EXPAND_DIMS = 70
    ARG_MIN = 79
    PACK = 83
    UNPACK = 88
    RESIZE_NEAREST_NEIGHBOR = 97
    LEAKY_RELU = 98
    SPLIT_V = 102
    BATCH_MATMUL = 126
    QUANTIZE = 114
    HARD_SWISH = 117
    # Elementwise and unary int8 ops (issue 17)
    DIV = 42
    PRELU = 54
    MAXIMUM = 55
    MINIMUM = 57
    RSQRT = 76
    ZEROS_LIKE = 93
    FILL = 94
    SQUARED_DIFFERENCE = 99
    ABS = 101
    ELU = 111
    # Row and scan ops (issue 17)
    L2_NORMALIZATION = 11
    LOG_SOFTMAX = 50
    CUMSUM = 128
    SUM = 74
    REDUCE_MAX = 82
    # Recurrent (issue 17)
    UNIDIRECTIONAL_SEQUENCE_LSTM = 44
    # Anything else in a .tflite file: kept so it can be reported by index and name.
    UNSUPPORTED = -1


SUPPORTED_OPS: frozenset[OpKind] = frozenset(k for k in OpKind if k is not OpKind.UNSUPPORTED)


class Padding(enum.Enum):
    SAME = 0
    VALID = 1


class Activation(enum.Enum):
    """Fused activation functions, numbered as TFLite's ActivationFunctionType."""

    NONE = 0
    RELU = 1
    RELU_N1_TO_1 = 2
    RELU6 = 3
    TANH = 4
    SIGN_BIT = 5


@dataclass(frozen=True)
class NoOptions:
    """For ops whose behaviour is fixed by their tensors alone (RELU, QUANTIZE, PAD, ...)."""


@dataclass(frozen=True)
class Conv2DOptions:
    padding: Padding
    stride_h: int
    stride_w: int
    dilation_h: int = 1
    dilation_w: int = 1
    activation: Activation = Activation.NONE
    # (top, bottom, left, right) rows/columns of zero-point padding replacing `padding`'s;
    # set by codegen.fold when a PAD op is folded in, never read from a .tflite file.
    explicit_padding: tuple[int, int, int, int] | None = None


@dataclass(frozen=True)
class DepthwiseConv2DOptions:
    padding: Padding
    stride_h: int
    stride_w: int
    depth_multiplier: int = 1
    dilation_h: int = 1
    dilation_w: int = 1
    activation: Activation = Activation.NONE
    explicit_padding: tuple[int, int, int, int] | None = None  # as Conv2DOptions'


@dataclass(frozen=True)
class FullyConnectedOptions:
    activation: Activation = Activation.NONE
    keep_num_dims: bool = False


@dataclass(frozen=True)
class Pool2DOptions:
    padding: Padding
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    activation: Activation = Activation.NONE


@dataclass(frozen=True)
class FusedActivationOptions:
    """ADD, SUB, MUL and DIV: only a fused activation."""

    activation: Activation = Activation.NONE


@dataclass(frozen=True)
class ResidualConv2DOptions(Conv2DOptions):
    """A CONV_2D fused with the residual ADD that is the only reader of its output
    (codegen.fold.fuse_residual_adds, compiled backend; no .tflite form). The op's inputs are
    (input, filter, bias, skip) and its output is the ADD's: the conv's int8 output
    `conv_output` (kept in the graph for its shape and quantization, never planned) is added
    to the skip exactly as the ADD `add_inputs` -> output with `add` did
    (ir.graph.residual_parts rebuilds both ops)."""

    conv_output: int = -1
    add_inputs: tuple[int, int] = (-1, -1)
    add: FusedActivationOptions = FusedActivationOptions()


@dataclass(frozen=True)
class DwPwConv2DOptions(DepthwiseConv2DOptions):
    """A DEPTHWISE_CONV_2D fused with the pointwise CONV_2D (1x1, stride 1, no padding, no
    groups) that is the only reader of its output (codegen.fold.fuse_dw_pw, compiled backend;
    no .tflite form). The op's inputs are (input, dw filter, dw bias, pw filter, pw bias) and
    its output is the pointwise conv's: the depthwise output `dw_output` (kept in the graph
    for its shape and quantization, never planned) is computed in bands of rows into staging
    and consumed by the pointwise conv with options `pw` (ir.graph.dwpw_parts rebuilds both
    ops)."""

    dw_output: int = -1
    pw: Conv2DOptions = Conv2DOptions(Padding.VALID, 1, 1)


@dataclass(frozen=True)
class ReshapeOptions:
    # The target shape when the file gives it as an option rather than a shape tensor.
    new_shape: tuple[int, ...] | None = None


@dataclass(frozen=True)
class SqueezeOptions:
    squeeze_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class SoftmaxOptions:
    beta: float = 1.0


@dataclass(frozen=True)
class ConcatenationOptions:
    axis: int
    activation: Activation = Activation.NONE


@dataclass(frozen=True)
class LeakyReluOptions:
    alpha: float


@dataclass(frozen=True)
class ReducerOptions:
    keep_dims: bool = False


@dataclass(frozen=True)
class StridedSliceOptions:
    begin_mask: int = 0
    end_mask: int = 0
    ellipsis_mask: int = 0
    new_axis_mask: int = 0
    shrink_axis_mask: int = 0
    offset: bool = False


@dataclass(frozen=True)
class SVDFOptions:
    """SVDF: `rank` filters per unit; the fused activation (TFLM's integer SVDF ignores it)."""

    rank: int
    activation: Activation = Activation.NONE
    asymmetric_quantize_inputs: bool = False


@dataclass(frozen=True)
class SplitOptions:
    """SPLIT and SPLIT_V: the number of outputs."""

    num_splits: int


@dataclass(frozen=True)
class PackOptions:
    """PACK (`count` inputs stacked along a new `axis`) and UNPACK (`count` outputs)."""

    axis: int = 0
    count: int = 0


@dataclass(frozen=True)
class GatherOptions:
    axis: int = 0
    batch_dims: int = 0


@dataclass(frozen=True)
class BlockSizeOptions:
    """DEPTH_TO_SPACE and SPACE_TO_DEPTH."""

    block_size: int


@dataclass(frozen=True)
class ResizeOptions:
    """RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR."""

    align_corners: bool = False
    half_pixel_centers: bool = False


@dataclass(frozen=True)
class ArgMinMaxOptions:
    """ARG_MAX and ARG_MIN: the output index type, "int32" or "int64"."""

    output_type: str = "int64"


@dataclass(frozen=True)
class BatchMatMulOptions:
    """BATCH_MATMUL: adj_x / adj_y transpose the last two dims of LHS / RHS."""

    adj_x: bool = False
    adj_y: bool = False


@dataclass(frozen=True)
class SequenceLSTMOptions:
    """UNIDIRECTIONAL_SEQUENCE_LSTM: the cell gate's activation (TANH or SIGMOID, the others
    sigmoid), cell and projection clips (0: none), time-major input [time, batch, input]
    (else [batch, time, input])."""

    activation: Activation = Activation.TANH
    cell_clip: float = 0.0
    proj_clip: float = 0.0
    time_major: bool = False
    asymmetric_quantize_inputs: bool = False


@dataclass(frozen=True)
class CumsumOptions:
    """CUMSUM along the axis its second (constant int32) input names."""

    exclusive: bool = False
    reverse: bool = False


@dataclass(frozen=True)
class UnsupportedOptions:
    """What is known of an op tinyhost cannot execute: its TFLite name (or custom code)."""

    name: str
    builtin_code: int


OpOptions = (
    NoOptions
    | Conv2DOptions
    | DepthwiseConv2DOptions
    | FullyConnectedOptions
    | Pool2DOptions
    | FusedActivationOptions
    | ReshapeOptions
    | SqueezeOptions
    | SoftmaxOptions
    | ConcatenationOptions
    | LeakyReluOptions
    | ReducerOptions
    | StridedSliceOptions
    | SVDFOptions
    | SplitOptions
    | PackOptions
    | GatherOptions
    | BlockSizeOptions
    | ResizeOptions
    | ArgMinMaxOptions
    | BatchMatMulOptions
    | SequenceLSTMOptions
    | CumsumOptions
    | UnsupportedOptions
)
