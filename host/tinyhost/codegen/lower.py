"""Lowering: each op of an int8 graph as one call of a `kernels_c` function, backend-neutral.

A `Call` names the kernels_c entry point (`function`), the tensors it reads and writes, and
its parameters as a typed record whose fields carry the names of the C structs they fill
(`kernels_c/include/th_nn_types.h`; ARCHITECTURE.md §4.1): `arith`'s parameter dataclasses
where one exists, the small records below otherwise. Every backend starts from these calls:
the interpreter packs them into parameter words (`codegen.interpreter_abi`), a compiled
backend writes them out as literals. What an op needs that is not a tensor (requantization
arrays, lookup tables) is in `Call.arrays`, by name.

`lower_graph` refuses a graph with UnsupportedModelError listing every op it cannot lower, so
one call tells the user everything at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from tinyhost.arith import conv as conv_arith
from tinyhost.arith import elementwise as ew_arith
from tinyhost.arith import pool as pool_arith
from tinyhost.arith.activations import (
    DequantizeParams,
    QuantizeParams,
    RequantizeParams,
    SoftmaxParams,
    dequantize_params,
    quantize_params,
    requantize_params,
    softmax_params,
)
from tinyhost.arith.binary import (
    PreluParams,
    div_params,
    prelu_params,
    squared_difference_params,
)
from tinyhost.arith.conv import ConvParams, FullyConnectedParams
from tinyhost.arith.elementwise import AddParams, MulParams
from tinyhost.arith.lstm import (
    BIASES,
    CELL_STATE,
    HIDDEN_STATE,
    INPUT_WEIGHTS,
    RECURRENT_WEIGHTS,
    LstmParams,
    lstm_params,
)
from tinyhost.arith.matmul import BatchMatMulParams, batch_matmul_params
from tinyhost.arith.pool import PoolParams
from tinyhost.arith.reduce import MeanParams, mean_params, reduce_max_params
from tinyhost.arith.resize import bilinear_axis, bilinear_in_range, nearest_indices
from tinyhost.arith.rowwise import (
    CumsumParams,
    L2NormParams,
    LogSoftmaxParams,
    cumsum_params,
    l2norm_params,
    log_softmax_params,
)
from tinyhost.arith.sigmoid16 import Sigmoid16Params, sigmoid16_params, sigmoid_table_u16
from tinyhost.arith.softmax16 import Softmax16Params, softmax16_luts, softmax16_params
from tinyhost.arith.svdf import SvdfParams, svdf_params
from tinyhost.codegen.layout import s4_filter_rows, s4_rows
from tinyhost.codegen.lut import op_table
from tinyhost.errors import TinyhostError, UnsupportedModelError
from tinyhost.ir import (
    Activation,
    BatchMatMulOptions,
    BlockSizeOptions,
    ConcatenationOptions,
    DwPwConv2DOptions,
    GatherOptions,
    Graph,
    Op,
    OpKind,
    PackOptions,
    ResidualConv2DOptions,
    ResizeOptions,
    StridedSliceOptions,
    dwpw_parts,
    residual_parts,
)
from tinyhost.passes.axes import gather_axes
from tinyhost.passes.validate import check_graph
from tinyhost.plan.scratch import s4_kernel
from tinyhost.reference.ops.shape import check_same_quantization, dense_spec, slice_bounds

MAX_RANK = 6  # th_nn.h TH_MAX_RANK: data-movement kernels take up to 6 dimensions
MAX_CONCAT_INPUTS = 8  # th_concat_s8 (th_nn.h)
MAX_SPLIT_OUTPUTS = 8  # the interpreter's TH_INTERP_MAX_OP_OUTPUTS

# ADD/SUB with at least this many output elements take the table kernels (th_add_s8_tables):
# 2 KB of constants (two tables of 256 int32) buy ~90 fewer instructions per element on
# Cortex-M4 (~105 -> ~14), i.e. >= ~11.5K instructions per inference here; below, the op
# costs under ~13K instructions in all and the flash is the scarcer resource.
ADD_TABLE_MIN_ELEMENTS = 128


# --- parameter records of the calls that have no arith dataclass ----------------------------


@dataclass(frozen=True)
class Int4Params:
    """th_conv_s4 / th_dw_conv_s4 / th_fully_connected_s4: the int8 kernel's parameters, the
    weight tensor's shape (the call does not read the tensor: its packed rows are
    `Call.arrays["weights"]`, codegen/layout.py s4_rows)."""

    base: ConvParams | FullyConnectedParams
    filter_shape: tuple[int, ...]


@dataclass(frozen=True)
class LutParams:
    """th_lut_s8: y = table[(uint8_t)x]; the table is `Call.arrays["table"]`."""


@dataclass(frozen=True)
class MinMaxParams:
    """th_maximum_s8 / th_minimum_s8 compare raw values: no parameters."""


@dataclass(frozen=True)
class FillParams:
    """th_fill_s8: the output is the raw value (the call's one input) repeated."""


@dataclass(frozen=True)
class PadParams:
    pad_value: int
    before: tuple[int, ...]  # per dimension, up to MAX_RANK
    after: tuple[int, ...]


@dataclass(frozen=True)
class ConcatParams:
    axis: int  # non-negative


@dataclass(frozen=True)
class TransposeParams:
    perm: tuple[int, ...]


@dataclass(frozen=True)
class StridedSliceParams:
    """The slice resolved on the host: per kept input dimension, start, step and count."""

    begin: tuple[int, ...]
    stride: tuple[int, ...]
    count: tuple[int, ...]


@dataclass(frozen=True)
class CopyParams:
    """RESHAPE / SQUEEZE / EXPAND_DIMS: the bytes are the same; a copy when the plan does not
    alias them."""


@dataclass(frozen=True)
class SplitParams:
    """SPLIT / SPLIT_V / UNPACK (th_split_s8): the input axis, non-negative. An UNPACK output
    lacks that axis; the kernel sees it with the axis as 1."""

    axis: int


@dataclass(frozen=True)
class PackParams:
    """PACK (th_concat_s8 along the new `axis` of the output, each input seen with it as 1)."""

    axis: int


@dataclass(frozen=True)
class GatherParams:
    """th_gather_params: the shapes collapsed around the gathered axis."""

    batch: int
    outer: int
    axis_size: int
    inner: int
    coords: int


@dataclass(frozen=True)
class BlockParams:
    """DEPTH_TO_SPACE / SPACE_TO_DEPTH."""

    block: int


@dataclass(frozen=True)
class ResizeParams:
    """RESIZE_*: the tables are `Call.arrays["rows"]` and `["cols"]` (int32, arith.resize)."""


@dataclass(frozen=True)
class ArgParams:
    """th_arg_params: ARG_MAX / ARG_MIN over the input seen as (outer, axis_size, inner)."""

    outer: int
    axis_size: int
    inner: int


@dataclass(frozen=True)
class MatMulParams:
    """th_batch_matmul_params and its th_per_tensor_quant (arith.matmul)."""

    arith: BatchMatMulParams
    adj_x: bool
    adj_y: bool


@dataclass(frozen=True)
class ResidualParams:
    """A CONV_2D fused with its residual ADD (codegen/fold.py): the two calls it stands for,
    the conv's output going to staging rows and the ADD's skip input (`skip_slot`) being
    the op's input 3."""

    conv: Call
    add: Call
    conv_slot: int  # the ADD's input that was the conv's output (0 or 1)


@dataclass(frozen=True)
class DwPwParams:
    """A DEPTHWISE_CONV_2D fused with its pointwise CONV_2D (codegen/fold.py): the two calls
    it stands for, the depthwise output going to staging rows the pointwise reads."""

    dw: Call
    pw: Call


@dataclass(frozen=True)
class RowParams:
    """th_log_softmax_s8 / th_l2norm_s8: the op's arith params over (rows, depth)."""

    arith: LogSoftmaxParams | L2NormParams
    rows: int
    depth: int


@dataclass(frozen=True)
class ScanParams:
    """th_cumsum_s8: arith.rowwise.CumsumParams over the input as (outer, axis_size, inner)."""

    arith: CumsumParams
    outer: int
    axis_size: int
    inner: int


CallParams = (
    ConvParams | FullyConnectedParams | PoolParams | SoftmaxParams | AddParams | MulParams
    | LutParams | QuantizeParams | DequantizeParams | MeanParams | PadParams | ConcatParams
    | TransposeParams | StridedSliceParams | CopyParams | SvdfParams | LstmParams
    | RequantizeParams | MinMaxParams | PreluParams | FillParams | SplitParams | PackParams
    | GatherParams | BlockParams | ResizeParams | ArgParams | MatMulParams | Softmax16Params
    | ResidualParams
    | DwPwParams
    | Int4Params
    | RowParams | ScanParams
    | Sigmoid16Params
)  # fmt: skip


@dataclass(frozen=True)
class Call:
    """One op as a kernels_c call.

    `function` is the kernels_c entry point (`copy` for RESHAPE/SQUEEZE/EXPAND_DIMS, a plain
    byte copy).
    `inputs` keep the op's positions (None for an absent optional operand, e.g. no bias),
    except th_lstm_s8's: (input, hidden state, cell state), its constants in `arrays`, and
    the int4 kernels' (th_*_s4): (input, None, bias), the packed weights in `arrays`.
    """

    op: int  # index of the op in graph.ops
    function: str
    inputs: tuple[int | None, ...]
    outputs: tuple[int, ...]
    params: CallParams
    arrays: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def per_channel(self) -> bool:
        """FULLY_CONNECTED with one multiplier per output channel."""
        return isinstance(self.params, FullyConnectedParams) and "multiplier" in self.arrays


def _where(index: int, op: Op) -> str:
    return f"op {index} ({op.name})"


def _short(name: str, limit: int = 48) -> str:
    """TF's fused tensor names run to hundreds of characters: keep the head."""
    return name if len(name) <= limit else name[: limit - 3] + "..."


def _require_int8(graph: Graph, index: int, op: Op, tensors: list[int | None]) -> None:
    for t in tensors:
        if t is None:
            continue
        tensor = graph.tensors[t]
        if tensor.dtype != np.int8:
            raise UnsupportedModelError(
                f"{_where(index, op)}: tensor {t} '{_short(tensor.name)}' is "
                f"{tensor.dtype}, not int8"
            )


def _requant_arrays(multiplier: np.ndarray, shift: np.ndarray) -> dict[str, np.ndarray]:
    return {"multiplier": multiplier.astype("<i4"), "shift": shift.astype("<i4")}


def _lower_residual(graph: Graph, index: int, op: Op) -> Call:
    conv_op, add_op = residual_parts(op)
    parts = replace(graph, ops=(conv_op, add_op))
    conv, add = _lower_conv(parts, 0, conv_op), _lower_binary(parts, 1, add_op)
    if conv.function != "th_conv_s8" or not add.function.startswith("th_add_s8"):
        raise UnsupportedModelError(f"{_where(index, op)}: no int8 kernels for its conv and ADD")
    slot = add_op.inputs.index(conv_op.outputs[0])
    return Call(index, "th_conv_add_s8", op.inputs, op.outputs,
                ResidualParams(replace(conv, op=index), replace(add, op=index), slot))


def _lower_dwpw(graph: Graph, index: int, op: Op) -> Call:
    dw_op, pw_op = dwpw_parts(op)
    parts = replace(graph, ops=(dw_op, pw_op))
    dw, pw = _lower_conv(parts, 0, dw_op), _lower_conv(parts, 1, pw_op)
    if dw.function != "th_dw_conv_s8" or pw.function != "th_conv_s8":
        raise UnsupportedModelError(f"{_where(index, op)}: no int8 kernels for its depthwise "
                                    "and pointwise convs")  # fmt: skip
    return Call(index, "th_dw_pw_s8", op.inputs, op.outputs,
                DwPwParams(replace(dw, op=index), replace(pw, op=index)))


def _lower_s4(graph: Graph, index: int, op: Op,
              p: ConvParams | FullyConnectedParams) -> Call:
    """Packed int4 weights kept packed (plan.scratch.s4_kernel): per-channel arrays always
    (a per-tensor pair repeated), the weights as packed rows in `arrays`."""
    w = graph.tensors[op.inputs[1]]
    data = np.asarray(w.data, np.int8)
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    if op.kind is OpKind.FULLY_CONNECTED:
        function, rows = "th_fully_connected_s4", s4_rows(data)
    elif op.kind is OpKind.DEPTHWISE_CONV_2D:
        function, rows = "th_dw_conv_s4", s4_filter_rows(data, True)
    else:
        function, rows = "th_conv_s4", s4_filter_rows(data, False)
    cout = graph.tensors[op.outputs[0]].shape[-1]
    multiplier = np.broadcast_to(np.asarray(p.out_multiplier).reshape(-1), (cout,))
    shift = np.broadcast_to(np.asarray(p.out_shift).reshape(-1), (cout,))
    arrays = {**_requant_arrays(multiplier, shift), "weights": rows}
    return Call(index, function, (op.inputs[0], None, bias), (op.outputs[0],),
                Int4Params(p, tuple(int(d) for d in w.shape)), arrays)


def _lower_conv(graph: Graph, index: int, op: Op) -> Call:
    if isinstance(op.options, ResidualConv2DOptions):
        return _lower_residual(graph, index, op)
    if isinstance(op.options, DwPwConv2DOptions):
        return _lower_dwpw(graph, index, op)
    if s4_kernel(graph, op):
        return _lower_s4(graph, index, op, conv_arith.conv_params(graph, op))
    s16 = conv_arith.is_16x8(graph, op)  # int16 activations: th_conv_s16 / th_dw_conv_s16
    if not s16:
        _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    p = conv_arith.conv_params(graph, op)
    dw = op.kind is OpKind.DEPTHWISE_CONV_2D
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    suffix = "_s16" if s16 else "_s8"
    return Call(index, ("th_dw_conv" if dw else "th_conv") + suffix,
                (op.inputs[0], op.inputs[1], bias), (op.outputs[0],), p,
                _requant_arrays(p.out_multiplier, p.out_shift))  # fmt: skip


def _lower_fc(graph: Graph, index: int, op: Op) -> Call:
    p = conv_arith.fully_connected_params(graph, op)
    if s4_kernel(graph, op) and p.filter_offset == 0:
        return _lower_s4(graph, index, op, p)
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    if conv_arith.is_16x8(graph, op):  # per-channel multipliers always (arith)
        return Call(index, "th_fully_connected_s16", (op.inputs[0], op.inputs[1], bias),
                    (op.outputs[0],), p, _requant_arrays(p.out_multiplier, p.out_shift))
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    per_channel = p.out_multiplier.size > 1
    function = "th_fully_connected_per_channel_s8" if per_channel else "th_fully_connected_s8"
    arrays = _requant_arrays(p.out_multiplier, p.out_shift) if per_channel else {}
    return Call(index, function, (op.inputs[0], op.inputs[1], bias), (op.outputs[0],), p,
                arrays)  # fmt: skip


def _lower_pool(graph: Graph, index: int, op: Op) -> Call:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    p = pool_arith.pool_params(graph, op)
    function = "th_avgpool_s8" if op.kind is OpKind.AVERAGE_POOL_2D else "th_maxpool_s8"
    return Call(index, function, (op.inputs[0],), (op.outputs[0],), p)


def _lower_softmax(graph: Graph, index: int, op: Op) -> Call:
    """int8 -> int8 (th_softmax_s8), int8 -> int16 (th_softmax_s8_s16) or int16 -> int16
    (th_softmax_s16, with its two tables)."""
    if all(graph.tensors[t].dtype == np.int16 for t in (op.inputs[0], op.outputs[0])):
        exp_lut, recip_lut = softmax16_luts()
        return Call(index, "th_softmax_s16", (op.inputs[0],), (op.outputs[0],),
                    softmax16_params(graph, op),
                    {"exp_lut": exp_lut.astype("<i2"), "recip_lut": recip_lut.astype("<i2")})
    _require_int8(graph, index, op, [op.inputs[0]])
    s16 = graph.tensors[op.outputs[0]].dtype == np.int16
    if not s16:
        _require_int8(graph, index, op, [op.outputs[0]])
    return Call(index, "th_softmax_s8_s16" if s16 else "th_softmax_s8", (op.inputs[0],),
                (op.outputs[0],), softmax_params(graph, op))  # fmt: skip


def _lower_binary(graph: Graph, index: int, op: Op) -> Call:
    io = ((op.inputs[0], op.inputs[1]), (op.outputs[0],))
    if all(
        graph.tensors[t].dtype == np.int16 for t in (*op.inputs, op.outputs[0])
    ):  # int16 ADD / SUB / MUL
        if op.kind is OpKind.MUL:
            return Call(index, "th_mul_s16", *io, ew_arith.mul_params(graph, op))
        if op.kind is OpKind.SUB:
            return Call(index, "th_sub_s16", *io, ew_arith.sub_params(graph, op))
        return Call(index, "th_add_s16", *io, ew_arith.add_params(graph, op))
    _require_int8(graph, index, op, [*op.inputs, op.outputs[0]])
    if op.kind is OpKind.MUL:
        return Call(index, "th_mul_s8", *io, ew_arith.mul_params(graph, op))
    p = ew_arith.add_params(graph, op)
    name = "th_sub_s8" if op.kind is OpKind.SUB else "th_add_s8"
    if graph.tensors[op.outputs[0]].size_bytes < ADD_TABLE_MIN_ELEMENTS:
        return Call(index, name, *io, p)
    table1, table2 = ew_arith.add_input_tables(p)
    return Call(index, name + "_tables", *io, p, {"table1": table1, "table2": table2})


def _lower_binary_ext(graph: Graph, index: int, op: Op) -> Call:
    """MAXIMUM, MINIMUM, SQUARED_DIFFERENCE (ADD's param structs), PRELU (input, alpha),
    DIV (MUL's param structs)."""
    _require_int8(graph, index, op, [*op.inputs, op.outputs[0]])
    io = ((op.inputs[0], op.inputs[1]), (op.outputs[0],))
    if op.kind is OpKind.SQUARED_DIFFERENCE:
        return Call(index, "th_squared_difference_s8", *io, squared_difference_params(graph, op))
    if op.kind is OpKind.PRELU:
        return Call(index, "th_prelu_s8", *io, prelu_params(graph, op))
    if op.kind is OpKind.DIV:
        return Call(index, "th_div_s8", *io, div_params(graph, op))
    name = "th_maximum_s8" if op.kind is OpKind.MAXIMUM else "th_minimum_s8"
    return Call(index, name, *io, MinMaxParams())


def _lower_fill(graph: Graph, index: int, op: Op) -> Call:
    """FILL: the dims operand is the output's static shape (validated); only the value runs."""
    _require_int8(graph, index, op, [op.inputs[1], op.outputs[0]])
    return Call(index, "th_fill_s8", (op.inputs[1],), (op.outputs[0],), FillParams())


def _lower_lut(graph: Graph, index: int, op: Op) -> Call:
    """Unary int8 -> int8 ops as a 256-entry table made by the reference (codegen.lut)."""
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    try:
        table = op_table(graph, op)
    except ValueError as e:
        raise UnsupportedModelError(f"{_where(index, op)}: {e}") from None
    return Call(index, "th_lut_s8", (op.inputs[0],), (op.outputs[0],), LutParams(),
                {"table": table})  # fmt: skip


def _lower_sigmoid(graph: Graph, index: int, op: Op) -> Call:
    """LOGISTIC / TANH: int8 as a table (_lower_lut), int16 as th_logistic_s16 / th_tanh_s16
    interpolating the generated sigmoid table."""
    if graph.tensors[op.inputs[0]].dtype != np.int16:
        return _lower_lut(graph, index, op)
    function = "th_logistic_s16" if op.kind is OpKind.LOGISTIC else "th_tanh_s16"
    return Call(index, function, (op.inputs[0],), (op.outputs[0],), sigmoid16_params(graph, op),
                {"sigmoid_table": sigmoid_table_u16().astype("<u2")})


_REQUANTIZE = {(np.dtype(np.int8), np.dtype(np.int16)): "th_requantize_s8_s16",
               (np.dtype(np.int16), np.dtype(np.int8)): "th_requantize_s16_s8",
               (np.dtype(np.int8), np.dtype(np.int32)): "th_requantize_s8_s32",
               (np.dtype(np.int16), np.dtype(np.int32)): "th_requantize_s16_s32",
               (np.dtype(np.int32), np.dtype(np.int8)): "th_requantize_s32_s8",
               (np.dtype(np.int32), np.dtype(np.int16)): "th_requantize_s32_s16"}


def _lower_quantize(graph: Graph, index: int, op: Op) -> Call:
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if (x.dtype, y.dtype) in _REQUANTIZE:
        return Call(index, _REQUANTIZE[(x.dtype, y.dtype)], (op.inputs[0],), (op.outputs[0],),
                    requantize_params(graph, op))
    if x.dtype == np.int8 and y.dtype == np.int8:
        return _lower_lut(graph, index, op)  # int8 -> int8 requantization
    if x.dtype != np.float32 or y.dtype != np.int8:
        raise UnsupportedModelError(
            f"{_where(index, op)}: QUANTIZE {x.dtype} -> {y.dtype} is not supported"
        )
    return Call(index, "th_quantize_f32_s8", (op.inputs[0],), (op.outputs[0],),
                quantize_params(graph, op))  # fmt: skip


def _lower_dequantize(graph: Graph, index: int, op: Op) -> Call:
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.dtype != np.int8 or y.dtype != np.float32:
        raise UnsupportedModelError(
            f"{_where(index, op)}: DEQUANTIZE {x.dtype} -> {y.dtype} is not supported"
        )
    return Call(index, "th_dequantize_s8_f32", (op.inputs[0],), (op.outputs[0],),
                dequantize_params(graph, op))  # fmt: skip


def _lower_mean(graph: Graph, index: int, op: Op) -> Call:
    """MEAN (th_mean_s8), SUM (th_sum_s8: the same sum, not divided by the count) and
    REDUCE_MAX (th_reduce_max_s8: the raw maximum over the same walk)."""
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    if op.kind is OpKind.REDUCE_MAX:
        return Call(index, "th_reduce_max_s8", (op.inputs[0],), (op.outputs[0],),
                    reduce_max_params(graph, op))  # fmt: skip
    name = "th_mean_s8" if op.kind is OpKind.MEAN else "th_sum_s8"
    return Call(index, name, (op.inputs[0],), (op.outputs[0],), mean_params(graph, op))


def _lower_svdf(graph: Graph, index: int, op: Op) -> Call:
    """th_svdf_s8; the state (input 4, a variable tensor) is read and written in place."""
    _require_int8(graph, index, op, [op.inputs[0], op.inputs[1], op.outputs[0]])
    state = graph.tensors[op.inputs[4]]
    if state.dtype != np.int16 or graph.tensors[op.inputs[2]].dtype != np.int16:
        raise UnsupportedModelError(
            f"{_where(index, op)}: SVDF with {state.dtype} state: only int16 state and "
            "weights_time are supported"
        )
    for k in (1, 2, 3):
        if op.inputs[k] is not None and graph.tensors[op.inputs[k]].data is None:
            raise UnsupportedModelError(f"{_where(index, op)}: operand {k} must be a constant")
    return Call(index, "th_svdf_s8", tuple(op.inputs[:5]), (op.outputs[0],),
                svdf_params(graph, op))


def _lower_sequence_lstm(graph: Graph, index: int, op: Op) -> Call:
    """th_lstm_s8. The call reads (input, hidden state, cell state): the two states are
    variable tensors read and written in place; the eight gate weights and four biases
    (constants) are stacked per gate into `arrays` (input_weights, recurrent_weights,
    bias), the order th_nn.h states."""
    _require_int8(graph, index, op, [op.inputs[0], op.inputs[HIDDEN_STATE], op.outputs[0]])
    if graph.tensors[op.inputs[CELL_STATE]].dtype != np.int16:
        raise UnsupportedModelError(f"{_where(index, op)}: only an int16 cell state is "
                                    "supported")
    for k in (*INPUT_WEIGHTS, *RECURRENT_WEIGHTS, *BIASES):
        if graph.tensors[op.inputs[k]].data is None:
            raise UnsupportedModelError(f"{_where(index, op)}: operand {k} must be a constant")
    p = lstm_params(graph, op)
    if not -40 <= p.cell_scale_power <= 2:
        raise UnsupportedModelError(f"{_where(index, op)}: cell state scale 2^"
                                    f"{p.cell_scale_power} is outside th_lstm_s8's [-40, 2]")
    stack = lambda ks, dtype: np.concatenate(  # noqa: E731
        [np.asarray(graph.tensors[op.inputs[k]].data, dtype).reshape(-1) for k in ks])
    arrays = {"input_weights": stack(INPUT_WEIGHTS, np.int8),
              "recurrent_weights": stack(RECURRENT_WEIGHTS, np.int8),
              "bias": stack(BIASES, np.int32),
              "sigmoid_table": sigmoid_table_u16().astype("<u2")}  # fmt: skip
    return Call(index, "th_lstm_s8",
                (op.inputs[0], op.inputs[HIDDEN_STATE], op.inputs[CELL_STATE]),
                (op.outputs[0],), p, arrays)


def _const(graph: Graph, index: int, op: Op, position: int) -> np.ndarray:
    t = op.inputs[position] if position < len(op.inputs) else None
    data = None if t is None else graph.tensors[t].data
    if data is None:
        raise UnsupportedModelError(f"{_where(index, op)}: operand {position} must be a constant")
    return np.asarray(data)


def _lower_pad(graph: Graph, index: int, op: Op) -> Call:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    x = graph.tensors[op.inputs[0]]
    widths = _const(graph, index, op, 1).astype(np.int64).reshape(-1, 2)
    if widths.shape[0] != len(x.shape) or len(x.shape) > MAX_RANK or np.any(widths < 0):
        raise UnsupportedModelError(f"{_where(index, op)}: paddings {widths.tolist()}")
    if len(op.inputs) > 2 and op.inputs[2] is not None:
        value = int(_const(graph, index, op, 2).reshape(-1)[0])
    else:
        q = graph.tensors[op.outputs[0]].quant
        value = int(q.zero_point[0]) if q is not None else 0
    params = PadParams(value, tuple(int(v) for v in widths[:, 0]),
                       tuple(int(v) for v in widths[:, 1]))  # fmt: skip
    return Call(index, "th_pad_s8", (op.inputs[0],), (op.outputs[0],), params)


def _lower_concat(graph: Graph, index: int, op: Op) -> Call:
    ins = [t for t in op.inputs if t is not None]
    _require_int8(graph, index, op, [*ins, op.outputs[0]])
    o = op.options
    assert isinstance(o, ConcatenationOptions)
    if o.activation is not Activation.NONE:
        raise UnsupportedModelError(f"{_where(index, op)}: fused {o.activation.name}")
    if len(ins) > MAX_CONCAT_INPUTS:
        raise UnsupportedModelError(
            f"{_where(index, op)}: {len(ins)} inputs (max {MAX_CONCAT_INPUTS})"
        )
    check_same_quantization(graph, op)
    rank = len(graph.tensors[op.outputs[0]].shape)
    axis = o.axis + rank if o.axis < 0 else o.axis
    return Call(index, "th_concat_s8", tuple(ins), (op.outputs[0],), ConcatParams(axis))


def _lower_transpose(graph: Graph, index: int, op: Op) -> Call:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    perm = tuple(int(v) for v in _const(graph, index, op, 1).reshape(-1))
    if len(perm) > MAX_RANK:
        raise UnsupportedModelError(f"{_where(index, op)}: rank {len(perm)} (max {MAX_RANK})")
    return Call(index, "th_transpose_s8", (op.inputs[0],), (op.outputs[0],),
                TransposeParams(perm))  # fmt: skip


def _lower_strided_slice(graph: Graph, index: int, op: Op) -> Call:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    x = graph.tensors[op.inputs[0]]
    begin, end, strides = (
        [int(v) for v in _const(graph, index, op, k).reshape(-1)] for k in (1, 2, 3)
    )
    o = op.options if isinstance(op.options, StridedSliceOptions) else StridedSliceOptions()
    starts, steps, counts = [], [], []
    axis = 0
    for kind, i in dense_spec(len(x.shape), len(begin), o):
        if kind == "new":
            continue
        size = x.shape[axis]
        if kind == "full":
            start, stop, step = 0, size, 1
        else:
            step = strides[i]
            start, stop = slice_bounds(size, begin[i], end[i], step, bool(o.begin_mask >> i & 1),
                                       bool(o.end_mask >> i & 1),
                                       bool(o.shrink_axis_mask >> i & 1), o.offset)  # fmt: skip
        starts.append(start)
        steps.append(step)
        counts.append(len(range(start, stop, step)))
        axis += 1
    if len(counts) > MAX_RANK or int(np.prod(counts)) != int(
        np.prod(graph.tensors[op.outputs[0]].shape)
    ):
        raise UnsupportedModelError(f"{_where(index, op)}: slice of {counts} elements")
    return Call(index, "th_strided_slice_s8", (op.inputs[0],), (op.outputs[0],),
                StridedSliceParams(tuple(starts), tuple(steps), tuple(counts)))  # fmt: skip


def _lower_copy(graph: Graph, index: int, op: Op) -> Call:
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.size_bytes != y.size_bytes or x.dtype != y.dtype:
        raise UnsupportedModelError(
            f"{_where(index, op)}: reshapes {x.dtype}{list(x.shape)} into "
            f"{y.dtype}{list(y.shape)} (sizes differ)"
        )
    return Call(index, "copy", (op.inputs[0],), (op.outputs[0],), CopyParams())


def _prod(dims) -> int:
    return int(np.prod(dims, dtype=np.int64))


def _lower_split(graph: Graph, index: int, op: Op) -> Call:
    data = 1 if op.kind is OpKind.SPLIT else 0
    x_t = op.inputs[data]
    _require_int8(graph, index, op, [x_t, *op.outputs])
    x = graph.tensors[x_t]
    rank = len(x.shape)
    if op.kind is OpKind.UNPACK:
        o = op.options
        assert isinstance(o, PackOptions)
        axis = o.axis
    else:
        axis = int(_const(graph, index, op, 0 if op.kind is OpKind.SPLIT else 2).reshape(-1)[0])
    axis = axis + rank if axis < 0 else axis
    if rank > MAX_RANK or len(op.outputs) > MAX_SPLIT_OUTPUTS:
        raise UnsupportedModelError(f"{_where(index, op)}: rank {rank} into "
                                    f"{len(op.outputs)} outputs (max rank {MAX_RANK}, "
                                    f"{MAX_SPLIT_OUTPUTS} outputs)")  # fmt: skip
    return Call(index, "th_split_s8", (x_t,), tuple(op.outputs), SplitParams(axis))


def _lower_pack(graph: Graph, index: int, op: Op) -> Call:
    _require_int8(graph, index, op, [*op.inputs, op.outputs[0]])
    o = op.options
    assert isinstance(o, PackOptions)
    rank = len(graph.tensors[op.outputs[0]].shape)
    if rank > MAX_RANK or len(op.inputs) > MAX_CONCAT_INPUTS:
        raise UnsupportedModelError(f"{_where(index, op)}: {len(op.inputs)} inputs of rank "
                                    f"{rank - 1} (max {MAX_CONCAT_INPUTS}, rank "
                                    f"{MAX_RANK - 1})")  # fmt: skip
    axis = o.axis + rank if o.axis < 0 else o.axis
    return Call(index, "th_concat_s8", tuple(op.inputs), (op.outputs[0],), PackParams(axis))


def _lower_gather(graph: Graph, index: int, op: Op) -> Call:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    x, idx = graph.tensors[op.inputs[0]].shape, graph.tensors[op.inputs[1]].shape
    o = op.options
    assert isinstance(o, GatherOptions)
    axis, batch = gather_axes(len(x), len(idx), o)
    params = GatherParams(_prod(x[:batch]), _prod(x[batch:axis]), x[axis], _prod(x[axis + 1:]),
                          _prod(idx[batch:]))  # fmt: skip
    return Call(index, "th_gather_s8", (op.inputs[0], op.inputs[1]), (op.outputs[0],), params)


def _lower_space_depth(graph: Graph, index: int, op: Op) -> Call:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    o = op.options
    assert isinstance(o, BlockSizeOptions)
    name = ("th_depth_to_space_s8" if op.kind is OpKind.DEPTH_TO_SPACE
            else "th_space_to_depth_s8")  # fmt: skip
    return Call(index, name, (op.inputs[0],), (op.outputs[0],), BlockParams(o.block_size))


def _lower_resize(graph: Graph, index: int, op: Op) -> Call:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    o = op.options
    assert isinstance(o, ResizeOptions)
    _, h, w, _ = graph.tensors[op.inputs[0]].shape
    _, oh, ow, _ = graph.tensors[op.outputs[0]].shape
    flags = (o.align_corners, o.half_pixel_centers)
    if op.kind is OpKind.RESIZE_NEAREST_NEIGHBOR:
        rows, cols = nearest_indices(h, oh, *flags), nearest_indices(w, ow, *flags)
        name = "th_resize_nearest_s8"
    else:
        ay, ax = bilinear_axis(h, oh, *flags), bilinear_axis(w, ow, *flags)
        if not (bilinear_in_range(ay, h) and bilinear_in_range(ax, w)):
            raise UnsupportedModelError(f"{_where(index, op)}: a source position outside the "
                                        "input (TFLM would read out of bounds)")  # fmt: skip
        rows = np.stack([ay.lower, ay.upper, ay.weight], axis=1).reshape(-1)
        cols = np.stack([ax.lower, ax.upper, ax.weight], axis=1).reshape(-1)
        name = "th_resize_bilinear_s8"
    return Call(index, name, (op.inputs[0],), (op.outputs[0],), ResizeParams(),
                {"rows": rows.astype("<i4"), "cols": cols.astype("<i4")})  # fmt: skip


def _lower_arg(graph: Graph, index: int, op: Op) -> Call:
    _require_int8(graph, index, op, [op.inputs[0]])
    x = graph.tensors[op.inputs[0]].shape
    y = graph.tensors[op.outputs[0]]
    if y.dtype != np.int32:
        raise UnsupportedModelError(f"{_where(index, op)}: output '{_short(y.name)}' is "
                                    f"{y.dtype}, not int32")  # fmt: skip
    axis = int(_const(graph, index, op, 1).reshape(-1)[0])
    axis = axis + len(x) if axis < 0 else axis
    name = "th_arg_max_s8" if op.kind is OpKind.ARG_MAX else "th_arg_min_s8"
    return Call(index, name, (op.inputs[0],), (op.outputs[0],),
                ArgParams(_prod(x[:axis]), x[axis], _prod(x[axis + 1:])))  # fmt: skip


def _lower_batch_matmul(graph: Graph, index: int, op: Op) -> Call:
    _require_int8(graph, index, op, [op.inputs[0], op.inputs[1], op.outputs[0]])
    o = op.options
    assert isinstance(o, BatchMatMulOptions)
    rank = len(graph.tensors[op.outputs[0]].shape)
    if rank > MAX_RANK:
        raise UnsupportedModelError(f"{_where(index, op)}: rank {rank} (max {MAX_RANK})")
    return Call(index, "th_batch_matmul_s8", (op.inputs[0], op.inputs[1]), (op.outputs[0],),
                MatMulParams(batch_matmul_params(graph, op), o.adj_x, o.adj_y))  # fmt: skip


def _lower_rows(graph: Graph, index: int, op: Op) -> Call:
    """LOG_SOFTMAX and L2_NORMALIZATION: rows along the last axis."""
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    shape = graph.tensors[op.inputs[0]].shape
    log = op.kind is OpKind.LOG_SOFTMAX
    arith = log_softmax_params(graph, op) if log else l2norm_params(graph, op)
    return Call(index, "th_log_softmax_s8" if log else "th_l2norm_s8", (op.inputs[0],),
                (op.outputs[0],), RowParams(arith, _prod(shape[:-1]), shape[-1]))  # fmt: skip


def _lower_cumsum(graph: Graph, index: int, op: Op) -> Call:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    shape = graph.tensors[op.inputs[0]].shape
    p = cumsum_params(graph, op)
    return Call(index, "th_cumsum_s8", (op.inputs[0],), (op.outputs[0],),
                ScanParams(p, _prod(shape[:p.axis]), shape[p.axis], _prod(shape[p.axis + 1:])))


_LUT_OPS = (OpKind.RELU, OpKind.RELU6, OpKind.LEAKY_RELU,
            OpKind.HARD_SWISH, OpKind.ABS, OpKind.RSQRT, OpKind.ELU,
            OpKind.ZEROS_LIKE)  # fmt: skip

LOWERINGS: dict[OpKind, Callable[[Graph, int, Op], Call]] = {
    **{k: _lower_lut for k in _LUT_OPS},
    OpKind.LOGISTIC: _lower_sigmoid,
    OpKind.TANH: _lower_sigmoid,
    OpKind.QUANTIZE: _lower_quantize,
    OpKind.DEQUANTIZE: _lower_dequantize,
    OpKind.MEAN: _lower_mean,
    OpKind.SUM: _lower_mean,
    OpKind.REDUCE_MAX: _lower_mean,
    OpKind.SVDF: _lower_svdf,
    OpKind.UNIDIRECTIONAL_SEQUENCE_LSTM: _lower_sequence_lstm,
    OpKind.PAD: _lower_pad,
    OpKind.PADV2: _lower_pad,
    OpKind.CONCATENATION: _lower_concat,
    OpKind.TRANSPOSE: _lower_transpose,
    OpKind.STRIDED_SLICE: _lower_strided_slice,
    OpKind.CONV_2D: _lower_conv,
    OpKind.DEPTHWISE_CONV_2D: _lower_conv,
    OpKind.FULLY_CONNECTED: _lower_fc,
    OpKind.AVERAGE_POOL_2D: _lower_pool,
    OpKind.MAX_POOL_2D: _lower_pool,
    OpKind.SOFTMAX: _lower_softmax,
    OpKind.ADD: _lower_binary,
    OpKind.SUB: _lower_binary,
    OpKind.MUL: _lower_binary,
    OpKind.MAXIMUM: _lower_binary_ext,
    OpKind.MINIMUM: _lower_binary_ext,
    OpKind.SQUARED_DIFFERENCE: _lower_binary_ext,
    OpKind.PRELU: _lower_binary_ext,
    OpKind.DIV: _lower_binary_ext,
    OpKind.FILL: _lower_fill,
    OpKind.RESHAPE: _lower_copy,
    OpKind.SQUEEZE: _lower_copy,
    OpKind.EXPAND_DIMS: _lower_copy,
    OpKind.SPLIT: _lower_split,
    OpKind.SPLIT_V: _lower_split,
    OpKind.UNPACK: _lower_split,
    OpKind.PACK: _lower_pack,
    OpKind.GATHER: _lower_gather,
    OpKind.DEPTH_TO_SPACE: _lower_space_depth,
    OpKind.SPACE_TO_DEPTH: _lower_space_depth,
    OpKind.RESIZE_NEAREST_NEIGHBOR: _lower_resize,
    OpKind.RESIZE_BILINEAR: _lower_resize,
    OpKind.ARG_MAX: _lower_arg,
    OpKind.ARG_MIN: _lower_arg,
    OpKind.BATCH_MATMUL: _lower_batch_matmul,
    OpKind.LOG_SOFTMAX: _lower_rows,
    OpKind.L2_NORMALIZATION: _lower_rows,
    OpKind.CUMSUM: _lower_cumsum,
}


@dataclass(frozen=True)
class LoweringProblem:
    """Why one op cannot run on the device."""

    op: int
    kind: str
    reason: str

    def __str__(self) -> str:
        return self.reason


def lower_op(graph: Graph, index: int) -> Call | LoweringProblem:
    """One op as a call, or why it cannot be one."""
    op = graph.ops[index]
    lower = LOWERINGS.get(op.kind)
    if lower is None:
        return LoweringProblem(index, op.name, f"{_where(index, op)}: no kernel for this op")
    try:
        return lower(graph, index, op)
    except TinyhostError as e:  # unsupported, or parameters the kernels cannot take
        reason = str(e) if f"op {index} " in str(e) else f"{_where(index, op)}: {e}"
        return LoweringProblem(index, op.name, reason)


def lowering_problems(graph: Graph) -> list[LoweringProblem]:
    """Every op that cannot be lowered, in op order (empty: the whole graph lowers)."""
    results = (lower_op(graph, i) for i in range(len(graph.ops)))
    return [r for r in results if isinstance(r, LoweringProblem)]


def unsupported_message(graph: Graph, problems: list[LoweringProblem], backend: str) -> str:
    hint = ""
    if any(p.reason.endswith("not int8") for p in problems):
        hint = (" (int8 activations only: quantize a float model with --calib, and use the "
                "float original of a hybrid one)")  # fmt: skip
    return (f"{graph.source}: the {backend} backend cannot run {len(problems)} op(s){hint}: "
            + "; ".join(str(p) for p in problems))  # fmt: skip


def lower_graph(graph: Graph, backend: str = "interpreter",
                skip: frozenset[int] = frozenset()) -> list[Call]:
    """Every op of `graph` as a call (but the `skip` ops, which a backend runs as views of
    other tensors, without code); UnsupportedModelError lists every op that is not. The
    graph is validated first (a file from the field may carry NaN scales and the like)."""
    check_graph(graph)
    calls: list[Call] = []
    problems: list[LoweringProblem] = []
    for index in range(len(graph.ops)):
        if index in skip:
            continue
        result = lower_op(graph, index)
        if isinstance(result, LoweringProblem):
            problems.append(result)
        else:
            calls.append(result)
    if problems:
        raise UnsupportedModelError(unsupported_message(graph, problems, backend))
    return calls
