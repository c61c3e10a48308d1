"""The interpreter's calling convention, declared once (ARCHITECTURE.md §4.4).

An adapter (`firmware/interpreter/ops_*.c`) turns one blob op into one kernels_c call. Here,
and only here, are: each adapter's stable kernel id, the names and order of its int32
parameter words, the kernels_c functions it calls, and the interpreter's limits. The C header
the adapters read, `firmware/interpreter/th_interp_abi.h`, is generated from this module
(`python -m tinyhost.codegen.interpreter_abi --write`; tests/test_interpreter_abi.py
regenerates it and fails on any difference), and `pack` turns a lowered call into words by
those same names, so the host and the device cannot disagree on a word's position.

Ids are stable: a changed parameter layout gets a new id, and `KERNEL_ABI` (stored in every
blob) changes only when ids are removed or renumbered.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from tinyhost.arith.activations import (
    DequantizeParams,
    QuantizeParams,
    RequantizeParams,
    SoftmaxParams,
)
from tinyhost.arith.binary import PreluParams
from tinyhost.arith.conv import ConvParams, FullyConnectedParams
from tinyhost.arith.elementwise import AddParams, MulParams
from tinyhost.arith.lstm import LstmParams
from tinyhost.arith.pool import PoolParams
from tinyhost.arith.reduce import MeanParams
from tinyhost.arith.sigmoid16 import Sigmoid16Params
from tinyhost.arith.softmax16 import Softmax16Params
from tinyhost.arith.svdf import SvdfParams
from tinyhost.codegen.lower import (
    MAX_RANK,
    MAX_SPLIT_OUTPUTS,
    ArgParams,
    BlockParams,
    Call,
    ConcatParams,
    GatherParams,
    Int4Params,
    LutParams,
    MatMulParams,
    PackParams,
    PadParams,
    RowParams,
    ScanParams,
    SplitParams,
    StridedSliceParams,
    TransposeParams,
)
from tinyhost.errors import UnsupportedModelError
from tinyhost.paths import repo_root

KERNEL_ABI = 2  # 2: id 74 (lstm_s8 without its table) retired

# Limits of the interpreter (th_interp.c sizes its context with them).
LIMITS = {
    "TH_INTERP_MAX_OPS": 256,  # per-op profile slots in the context
    "TH_INTERP_MAX_OP_INPUTS": 8,
    "TH_INTERP_MAX_OP_OUTPUTS": MAX_SPLIT_OUTPUTS,  # SPLIT / SPLIT_V / UNPACK
    # Inputs and outputs of one op together: the th_interp_op view holds this many tensors
    # (on the stack of init and invoke), so 8 outputs cost no stack over 8 inputs + 2 outputs.
    "TH_INTERP_MAX_OP_IO": 10,
    "TH_INTERP_MAX_RANK": MAX_RANK,
    "TH_INTERP_MAX_TENSORS": 0xFFFE,  # u16 tensor indices; 0xFFFF marks an absent operand
    # Inputs and outputs (each) the protocol firmware describes: th_model.h TH_MODEL_MAX_IO
    # (tests/test_interpreter_abi.py reads it there); the blob itself could hold 255.
    "TH_INTERP_MAX_MODEL_IO": 16,
}
ABSENT = 0xFFFF


@dataclass(frozen=True)
class ConstRef:
    """A parameter word holding the constants-section offset of `Call.arrays[key]`."""

    key: str


Word = int | ConstRef


@dataclass(frozen=True)
class Adapter:
    """One interpreter adapter: th_interp_<name>_prepare/_eval in firmware/interpreter/<source>."""

    kernel_id: int
    name: str
    source: str
    needs: tuple[str, ...]  # kernels_c functions it calls
    words: tuple[str, ...]  # parameter word names, in order; "name[k]" is an array of k words
    macro: str  # prefix of its names in th_interp_abi.h

    def word_names(self) -> list[str]:
        """The words one by one (`perm[6]` -> perm0 ... perm5)."""
        out = []
        for w in self.words:
            m = re.fullmatch(r"(\w+)\[(\d+)\]", w)
            out.extend([f"{m.group(1)}{k}" for k in range(int(m.group(2)))] if m else [w])
        return out


_CONV = ("input_offset", "output_offset", "stride_h", "stride_w", "pad_top", "pad_left",
         "dilation_h", "dilation_w", "act_min", "act_max", "multiplier", "shift")  # fmt: skip
_FC = ("input_offset", "filter_offset", "output_offset", "act_min", "act_max", "multiplier",
       "shift")  # fmt: skip
_ADD = ("input1_offset", "input2_offset", "output_offset", "left_shift", "input1_multiplier",
        "input1_shift", "input2_multiplier", "input2_shift", "output_multiplier",
        "output_shift", "act_min", "act_max")  # fmt: skip
_MUL = ("input1_offset", "input2_offset", "output_offset", "output_multiplier",
        "output_shift", "act_min", "act_max")  # MUL and DIV
_SCALE = ("scale_bits", "zero_point")  # scale_bits: the float32 scale's bit pattern
_REQUANT = ("input_zero_point", "output_zero_point", "multiplier", "shift")

ADAPTERS: tuple[Adapter, ...] = (
    Adapter(1, "conv2d_s8", "ops_conv.c", ("th_conv_s8", "th_conv_s8_scratch_size"), _CONV,
            "CONV2D"),
    Adapter(2, "dwconv2d_s8", "ops_conv.c", ("th_dw_conv_s8", "th_dw_conv_s8_scratch_size"),
            (*_CONV, "ch_mult"), "DWCONV2D"),
    Adapter(3, "fc_s8", "ops_fc.c", ("th_fully_connected_s8",), _FC, "FC"),
    Adapter(4, "fc_pc_s8", "ops_fc.c", ("th_fully_connected_per_channel_s8",), _FC, "FC_PC"),
    Adapter(5, "avgpool_s8", "ops_pool.c", ("th_avgpool_s8", "th_avgpool_s8_scratch_size"),
            ("stride_h", "stride_w", "filter_h", "filter_w", "pad_top", "pad_left", "act_min",
             "act_max"), "POOL"),
    Adapter(6, "maxpool_s8", "ops_pool.c", ("th_maxpool_s8", "th_maxpool_s8_scratch_size"),
            ("stride_h", "stride_w", "filter_h", "filter_w", "pad_top", "pad_left", "act_min",
             "act_max"), "POOL"),
    Adapter(7, "softmax_s8", "ops_softmax.c", ("th_softmax_s8",),
            ("input_multiplier", "input_left_shift", "diff_min"), "SOFTMAX"),
    Adapter(8, "add_s8", "ops_elementwise.c", ("th_add_s8",), _ADD, "ADD"),
    Adapter(9, "copy", "ops_copy.c", (), (), "COPY"),
    Adapter(10, "sub_s8", "ops_elementwise.c", ("th_sub_s8",), _ADD, "ADD"),
    Adapter(11, "mul_s8", "ops_elementwise.c", ("th_mul_s8",), _MUL, "MUL"),
    Adapter(12, "lut_s8", "ops_lut.c", ("th_lut_s8",), ("table",), "LUT"),
    Adapter(13, "quantize_f32_s8", "ops_quantize.c", ("th_quantize_f32_s8",), _SCALE,
            "QUANTIZE"),
    Adapter(14, "dequantize_s8_f32", "ops_quantize.c", ("th_dequantize_s8_f32",), _SCALE,
            "QUANTIZE"),
    Adapter(15, "mean_s8", "ops_mean.c", ("th_mean_s8",),
            ("input_zero_point", "output_zero_point", "axis_mask", "multiplier", "shift"),
            "MEAN"),
    Adapter(16, "pad_s8", "ops_shape.c", ("th_pad_s8",),
            ("pad_value", f"before[{MAX_RANK}]", f"after[{MAX_RANK}]"), "PAD"),
    Adapter(17, "concat_s8", "ops_shape.c", ("th_concat_s8",), ("axis",), "CONCAT"),
    Adapter(18, "transpose_s8", "ops_shape.c", ("th_transpose_s8",), (f"perm[{MAX_RANK}]",),
            "TRANSPOSE"),
    Adapter(19, "strided_slice_s8", "ops_shape.c", ("th_strided_slice_s8",),
            (f"begin[{MAX_RANK}]", f"stride[{MAX_RANK}]", f"count[{MAX_RANK}]"), "SLICE"),
    Adapter(20, "add_tab_s8", "ops_elementwise.c", ("th_add_s8_tables",),
            (*_ADD, "table1", "table2"), "ADD_TAB"),
    Adapter(21, "sub_tab_s8", "ops_elementwise.c", ("th_sub_s8_tables",),
            (*_ADD, "table1", "table2"), "ADD_TAB"),
    # Elementwise int8 ops of issue 17 (ids 30-49).
    Adapter(30, "maximum_s8", "ops_elementwise.c", ("th_maximum_s8",), (), "MINMAX"),
    Adapter(31, "minimum_s8", "ops_elementwise.c", ("th_minimum_s8",), (), "MINMAX"),
    Adapter(32, "sqdiff_s8", "ops_elementwise.c", ("th_squared_difference_s8",), _ADD, "ADD"),
    Adapter(33, "prelu_s8", "ops_elementwise.c", ("th_prelu_s8",),
            ("input_offset", "alpha_offset", "output_offset", "multiplier_pos", "shift_pos",
             "multiplier_neg", "shift_neg"), "PRELU"),
    Adapter(34, "div_s8", "ops_elementwise.c", ("th_div_s8",), _MUL, "MUL"),
    Adapter(35, "fill_s8", "ops_elementwise.c", ("th_fill_s8",), (), "FILL"),
    Adapter(70, "svdf_s8", "ops_svdf.c", ("th_svdf_s8", "th_svdf_s8_scratch_size"),
            ("input_offset", "output_offset", "rank", "feature_multiplier", "feature_shift",
             "time_multiplier", "time_shift"), "SVDF"),
    Adapter(36, "fc_s16", "ops_16x8.c", ("th_fully_connected_s16",), _FC, "FC_S16"),
    Adapter(37, "conv2d_s16", "ops_16x8.c", ("th_conv_s16",), _CONV, "CONV2D_S16"),
    Adapter(38, "dwconv2d_s16", "ops_16x8.c", ("th_dw_conv_s16",), (*_CONV, "ch_mult"),
            "DWCONV2D_S16"),
    Adapter(39, "add_s16", "ops_elementwise.c", ("th_add_s16",), _ADD, "ADD"),
    Adapter(40, "mul_s16", "ops_elementwise.c", ("th_mul_s16",), _MUL, "MUL"),
    Adapter(41, "softmax_s16", "ops_softmax.c", ("th_softmax_s16",),
            ("multiplier", "shift", "exp_lut", "recip_lut"), "SOFTMAX_S16"),
    Adapter(71, "softmax_s8_s16", "ops_softmax.c", ("th_softmax_s8_s16",),
            ("input_multiplier", "input_left_shift", "diff_min"), "SOFTMAX"),
    Adapter(72, "requantize_s8_s16", "ops_quantize.c", ("th_requantize_s8_s16",), _REQUANT,
            "REQUANTIZE"),
    Adapter(73, "requantize_s16_s8", "ops_quantize.c", ("th_requantize_s16_s8",), _REQUANT,
            "REQUANTIZE"),
    # 50-69: issue 17's data movement (ops_movement.c)
    Adapter(50, "split_s8", "ops_movement.c", ("th_split_s8",), ("axis",), "SPLIT"),
    Adapter(51, "pack_s8", "ops_movement.c", ("th_concat_s8",), ("axis",), "SPLIT"),
    Adapter(52, "gather_s8", "ops_movement.c", ("th_gather_s8",),
            ("batch", "outer", "axis_size", "inner", "coords"), "GATHER"),
    Adapter(53, "depth_to_space_s8", "ops_movement.c", ("th_depth_to_space_s8",), ("block",),
            "BLOCK"),
    Adapter(54, "space_to_depth_s8", "ops_movement.c", ("th_space_to_depth_s8",), ("block",),
            "BLOCK"),
    Adapter(55, "resize_nearest_s8", "ops_movement.c", ("th_resize_nearest_s8",),
            ("rows", "cols"), "RESIZE"),
    Adapter(56, "resize_bilinear_s8", "ops_movement.c", ("th_resize_bilinear_s8",),
            ("rows", "cols"), "RESIZE"),
    Adapter(57, "arg_max_s8", "ops_movement.c", ("th_arg_max_s8",),
            ("outer", "axis_size", "inner"), "ARG"),
    Adapter(58, "arg_min_s8", "ops_movement.c", ("th_arg_min_s8",),
            ("outer", "axis_size", "inner"), "ARG"),
    Adapter(59, "batch_matmul_s8", "ops_matmul.c", ("th_batch_matmul_s8",),
            ("lhs_offset", "rhs_offset", "output_offset", "adj_x", "adj_y", "multiplier",
             "shift"), "MATMUL"),
    # Row and scan ops of issue 17 (ids 90-99).
    Adapter(90, "log_softmax_s8", "ops_rowwise.c", ("th_log_softmax_s8",),
            ("rows", "depth", "input_multiplier", "input_left_shift", "reverse_multiplier",
             "reverse_shift", "diff_min"), "LOG_SOFTMAX"),
    Adapter(91, "l2norm_s8", "ops_rowwise.c", ("th_l2norm_s8",),
            ("rows", "depth", "input_offset"), "L2NORM"),
    Adapter(92, "cumsum_s8", "ops_rowwise.c", ("th_cumsum_s8",),
            ("outer", "axis_size", "inner", "input_offset", "output_offset", "input_multiplier",
             "input_shift", "output_multiplier", "output_shift", "exclusive", "reverse"),
            "CUMSUM"),
    Adapter(93, "sum_s8", "ops_mean.c", ("th_sum_s8",),
            ("input_zero_point", "output_zero_point", "axis_mask", "multiplier", "shift"),
            "MEAN"),
    Adapter(94, "reduce_max_s8", "ops_mean.c", ("th_reduce_max_s8",),
            ("input_zero_point", "output_zero_point", "axis_mask", "multiplier", "shift"),
            "MEAN"),
    # Recurrent ops of issue 17 (ids 74-89; id 74, the LSTM before it took its sigmoid
    # table as a constant, is retired: now 100).
    Adapter(100, "lstm_s8", "ops_lstm.c", ("th_lstm_s8",),
            ("time_major", "input_offset", "hidden_offset", "hidden_zero_point",
             "cell_scale_power", "cell_clip", "input_multiplier[4]", "input_shift[4]",
             "recurrent_multiplier[4]", "recurrent_shift[4]", "forget_cell_multiplier",
             "forget_cell_shift", "input_cell_multiplier", "input_cell_shift",
             "hidden_multiplier", "hidden_shift", "input_weights", "recurrent_weights",
             "bias", "sigmoid_table"), "LSTM"),
    # int16 LOGISTIC / TANH (ids 101-102): Prepare's input rescaling and the sigmoid table.
    Adapter(101, "logistic_s16", "ops_lut.c", ("th_logistic_s16",),
            ("multiplier", "shift", "sigmoid_table"), "SIGMOID16"),
    Adapter(102, "tanh_s16", "ops_lut.c", ("th_tanh_s16",),
            ("multiplier", "shift", "sigmoid_table"), "SIGMOID16"),
    Adapter(103, "sub_s16", "ops_elementwise.c", ("th_sub_s16",), _ADD, "ADD"),
    # QUANTIZE to and from int32 (ids 104-107), the words of 72 and 73.
    Adapter(104, "requantize_s8_s32", "ops_quantize.c", ("th_requantize_s8_s32",), _REQUANT,
            "REQUANTIZE"),
    Adapter(105, "requantize_s16_s32", "ops_quantize.c", ("th_requantize_s16_s32",), _REQUANT,
            "REQUANTIZE"),
    Adapter(106, "requantize_s32_s8", "ops_quantize.c", ("th_requantize_s32_s8",), _REQUANT,
            "REQUANTIZE"),
    Adapter(107, "requantize_s32_s16", "ops_quantize.c", ("th_requantize_s32_s16",), _REQUANT,
            "REQUANTIZE"),
    # Packed int4 weights of issue 17 (ids 110-119; ops_int4.c): the weights are a
    # constants-section array of packed rows (th_nn.h "INT4"), not a tensor; the filter's
    # spatial size and FC's Cin are words.
    Adapter(110, "conv2d_s4", "ops_int4.c", ("th_conv_s4", "th_conv_s4_scratch_size"),
            (*_CONV, "filter_h", "filter_w", "weights"), "CONV2D_S4"),
    Adapter(111, "dwconv2d_s4", "ops_int4.c", ("th_dw_conv_s4", "th_dw_conv_s4_scratch_size"),
            (*_CONV, "ch_mult", "filter_h", "filter_w", "weights"), "DWCONV2D_S4"),
    Adapter(112, "fc_s4", "ops_int4.c",
            ("th_fully_connected_s4", "th_fully_connected_s4_scratch_size"),
            ("input_offset", "output_offset", "act_min", "act_max", "multiplier", "shift",
             "cin", "weights"), "FC_S4"),
)  # fmt: skip
ADAPTERS_BY_NAME = {a.name: a for a in ADAPTERS}

# Which adapter runs a kernels_c function (Call.function).
_ADAPTER_OF = {
    "th_conv_s8": "conv2d_s8",
    "th_dw_conv_s8": "dwconv2d_s8",
    "th_fully_connected_s8": "fc_s8",
    "th_fully_connected_per_channel_s8": "fc_pc_s8",
    "th_avgpool_s8": "avgpool_s8",
    "th_maxpool_s8": "maxpool_s8",
    "th_softmax_s8": "softmax_s8",
    "th_add_s8": "add_s8",
    "th_sub_s8": "sub_s8",
    "th_add_s8_tables": "add_tab_s8",
    "th_sub_s8_tables": "sub_tab_s8",
    "th_mul_s8": "mul_s8",
    "th_lut_s8": "lut_s8",
    "th_maximum_s8": "maximum_s8",
    "th_minimum_s8": "minimum_s8",
    "th_squared_difference_s8": "sqdiff_s8",
    "th_prelu_s8": "prelu_s8",
    "th_div_s8": "div_s8",
    "th_fill_s8": "fill_s8",
    "th_quantize_f32_s8": "quantize_f32_s8",
    "th_dequantize_s8_f32": "dequantize_s8_f32",
    "th_mean_s8": "mean_s8",
    "th_pad_s8": "pad_s8",
    "th_concat_s8": "concat_s8",
    "th_transpose_s8": "transpose_s8",
    "th_strided_slice_s8": "strided_slice_s8",
    "th_svdf_s8": "svdf_s8",
    "th_fully_connected_s16": "fc_s16",
    "th_conv_s16": "conv2d_s16",
    "th_dw_conv_s16": "dwconv2d_s16",
    "th_add_s16": "add_s16",
    "th_mul_s16": "mul_s16",
    "th_softmax_s16": "softmax_s16",
    "th_softmax_s8_s16": "softmax_s8_s16",
    "th_requantize_s8_s16": "requantize_s8_s16",
    "th_requantize_s16_s8": "requantize_s16_s8",
    "th_lstm_s8": "lstm_s8",
    "th_conv_s4": "conv2d_s4",
    "th_dw_conv_s4": "dwconv2d_s4",
    "th_fully_connected_s4": "fc_s4",
    "th_logistic_s16": "logistic_s16",
    "th_tanh_s16": "tanh_s16",
    "th_sub_s16": "sub_s16",
    **{f"th_requantize_{k}": f"requantize_{k}" for k in ("s8_s32", "s16_s32", "s32_s8",
                                                           "s32_s16")},
    "copy": "copy",
    "th_split_s8": "split_s8",
    "th_gather_s8": "gather_s8",
    "th_depth_to_space_s8": "depth_to_space_s8",
    "th_space_to_depth_s8": "space_to_depth_s8",
    "th_resize_nearest_s8": "resize_nearest_s8",
    "th_resize_bilinear_s8": "resize_bilinear_s8",
    "th_arg_max_s8": "arg_max_s8",
    "th_arg_min_s8": "arg_min_s8",
    "th_batch_matmul_s8": "batch_matmul_s8",
    "th_log_softmax_s8": "log_softmax_s8",
    "th_l2norm_s8": "l2norm_s8",
    "th_cumsum_s8": "cumsum_s8",
    "th_sum_s8": "sum_s8",
    "th_reduce_max_s8": "reduce_max_s8",
}


def adapter_for(call: Call) -> Adapter:
    if isinstance(call.params, PackParams):  # th_concat_s8 over inputs lacking the axis
        return ADAPTERS_BY_NAME["pack_s8"]
    return ADAPTERS_BY_NAME[_ADAPTER_OF[call.function]]


def _f32_bits(value: float) -> int:
    return struct.unpack("<i", struct.pack("<f", value))[0]


def _rank6(values: tuple[int, ...], fill: int) -> list[int]:
    return list(values) + [fill] * (MAX_RANK - len(values))


def _fields(call: Call) -> dict[str, Word]:
    """The call's parameters by word name (before ordering)."""
    p = call.params
    if isinstance(p, Int4Params):
        shape = p.filter_shape
        words = _fields(Call(call.op, call.function, call.inputs, call.outputs, p.base,
                             {k: v for k, v in call.arrays.items() if k != "weights"}))
        words.update({"multiplier": ConstRef("multiplier"), "shift": ConstRef("shift"),
                      "filter_h": shape[1] if len(shape) == 4 else 1,
                      "filter_w": shape[2] if len(shape) == 4 else 1, "cin": shape[-1],
                      "weights": ConstRef("weights")})  # fmt: skip
        return words
    if isinstance(p, ConvParams):
        return {"input_offset": p.input_offset, "output_offset": p.output_offset,
                "stride_h": p.stride_h, "stride_w": p.stride_w, "pad_top": p.pad_top,
                "pad_left": p.pad_left, "dilation_h": p.dilation_h, "dilation_w": p.dilation_w,
                "act_min": p.act_min, "act_max": p.act_max, "multiplier": ConstRef("multiplier"),
                "shift": ConstRef("shift"), "ch_mult": p.ch_mult}  # fmt: skip
    if isinstance(p, FullyConnectedParams):
        per_channel = "multiplier" in call.arrays
        return {"input_offset": p.input_offset, "filter_offset": p.filter_offset,
                "output_offset": p.output_offset, "act_min": p.act_min, "act_max": p.act_max,
                "multiplier": ConstRef("multiplier") if per_channel else int(p.out_multiplier[0]),
                "shift": ConstRef("shift") if per_channel else int(p.out_shift[0])}  # fmt: skip
    if isinstance(p, PoolParams):
        return {"stride_h": p.stride_h, "stride_w": p.stride_w, "filter_h": p.filter_h,
                "filter_w": p.filter_w, "pad_top": p.pad_top, "pad_left": p.pad_left,
                "act_min": p.act_min, "act_max": p.act_max}  # fmt: skip
    if isinstance(p, SoftmaxParams):
        return {"input_multiplier": p.input_multiplier, "input_left_shift": p.input_left_shift,
                "diff_min": p.diff_min}  # fmt: skip
    if isinstance(p, AddParams):
        return {"input1_offset": p.input1_offset, "input2_offset": p.input2_offset,
                "output_offset": p.output_offset, "left_shift": p.left_shift,
                "input1_multiplier": p.input1_multiplier, "input1_shift": p.input1_shift,
                "input2_multiplier": p.input2_multiplier, "input2_shift": p.input2_shift,
                "output_multiplier": p.output_multiplier, "output_shift": p.output_shift,
                "act_min": p.activation_min, "act_max": p.activation_max,
                "table1": ConstRef("table1"), "table2": ConstRef("table2")}  # fmt: skip
    if isinstance(p, MulParams):
        return {"input1_offset": p.input1_offset, "input2_offset": p.input2_offset,
                "output_offset": p.output_offset, "output_multiplier": p.output_multiplier,
                "output_shift": p.output_shift, "act_min": p.activation_min,
                "act_max": p.activation_max}  # fmt: skip
    if isinstance(p, Softmax16Params):
        return {"multiplier": p.input_multiplier, "shift": p.input_left_shift,
                "exp_lut": ConstRef("exp_lut"), "recip_lut": ConstRef("recip_lut")}
    if isinstance(p, Sigmoid16Params):
        return {"multiplier": p.input_multiplier, "shift": p.input_left_shift,
                "sigmoid_table": ConstRef("sigmoid_table")}
    if isinstance(p, RequantizeParams):
        return {"input_zero_point": p.input_zero_point,
                "output_zero_point": p.output_zero_point, "multiplier": p.multiplier,
                "shift": p.shift}  # fmt: skip
    if isinstance(p, QuantizeParams | DequantizeParams):
        return {"scale_bits": _f32_bits(p.scale), "zero_point": p.zero_point}
    if isinstance(p, MeanParams):
        return {"input_zero_point": p.input_zero_point, "output_zero_point": p.output_zero_point,
                "axis_mask": sum(1 << a for a in p.axes), "multiplier": p.multiplier,
                "shift": p.shift}  # fmt: skip
    if isinstance(p, PadParams):
        words: dict[str, Word] = {"pad_value": p.pad_value}
        words.update({f"before{k}": v for k, v in enumerate(_rank6(p.before, 0))})
        words.update({f"after{k}": v for k, v in enumerate(_rank6(p.after, 0))})
        return words
    if isinstance(p, ConcatParams):
        return {"axis": p.axis}
    if isinstance(p, TransposeParams):
        return {f"perm{k}": v for k, v in enumerate(_rank6(p.perm, 0))}
    if isinstance(p, StridedSliceParams):
        return {**{f"begin{k}": v for k, v in enumerate(_rank6(p.begin, 0))},
                **{f"stride{k}": v for k, v in enumerate(_rank6(p.stride, 1))},
                **{f"count{k}": v for k, v in enumerate(_rank6(p.count, 0))}}  # fmt: skip
    if isinstance(p, LutParams):
        return {"table": ConstRef("table")}
    if isinstance(p, SvdfParams):
        return {"input_offset": p.input_offset, "output_offset": p.output_offset,
                "rank": p.rank, "feature_multiplier": p.feature_multiplier,
                "feature_shift": p.feature_shift, "time_multiplier": p.time_multiplier,
                "time_shift": p.time_shift}  # fmt: skip
    if isinstance(p, LstmParams):
        return {"time_major": int(p.time_major), "input_offset": p.input_offset,
                "hidden_offset": p.hidden_offset, "hidden_zero_point": p.hidden_zero_point,
                "cell_scale_power": p.cell_scale_power, "cell_clip": p.cell_clip,
                **{f"input_multiplier{k}": m for k, m in enumerate(p.input_multipliers)},
                **{f"input_shift{k}": e for k, e in enumerate(p.input_shifts)},
                **{f"recurrent_multiplier{k}": m for k, m in enumerate(p.recurrent_multipliers)},
                **{f"recurrent_shift{k}": e for k, e in enumerate(p.recurrent_shifts)},
                "forget_cell_multiplier": p.forget_cell_multiplier,
                "forget_cell_shift": p.forget_cell_shift,
                "input_cell_multiplier": p.input_cell_multiplier,
                "input_cell_shift": p.input_cell_shift, "hidden_multiplier": p.hidden_multiplier,
                "hidden_shift": p.hidden_shift, "input_weights": ConstRef("input_weights"),
                "recurrent_weights": ConstRef("recurrent_weights"),
                "bias": ConstRef("bias"), "sigmoid_table": ConstRef("sigmoid_table")}  # fmt: skip
    if isinstance(p, PreluParams):
        return {"input_offset": p.input_offset, "alpha_offset": p.alpha_offset,
                "output_offset": p.output_offset, "multiplier_pos": p.multiplier_pos,
                "shift_pos": p.shift_pos, "multiplier_neg": p.multiplier_neg,
                "shift_neg": p.shift_neg}  # fmt: skip
    if isinstance(p, SplitParams | PackParams):
        return {"axis": p.axis}
    if isinstance(p, GatherParams):
        return {"batch": p.batch, "outer": p.outer, "axis_size": p.axis_size,
                "inner": p.inner, "coords": p.coords}  # fmt: skip
    if isinstance(p, BlockParams):
        return {"block": p.block}
    if isinstance(p, MatMulParams):
        a = p.arith
        return {"lhs_offset": a.lhs_offset, "rhs_offset": a.rhs_offset,
                "output_offset": a.output_offset, "adj_x": int(p.adj_x), "adj_y": int(p.adj_y),
                "multiplier": a.multiplier, "shift": a.shift}  # fmt: skip
    if isinstance(p, ArgParams):
        return {"outer": p.outer, "axis_size": p.axis_size, "inner": p.inner}
    if isinstance(p, RowParams):
        return {"rows": p.rows, "depth": p.depth, **dataclasses.asdict(p.arith)}
    if isinstance(p, ScanParams):
        c = p.arith
        return {"outer": p.outer, "axis_size": p.axis_size, "inner": p.inner,
                "input_offset": c.input_offset, "output_offset": c.output_offset,
                "input_multiplier": c.input_multiplier, "input_shift": c.input_shift,
                "output_multiplier": c.output_multiplier, "output_shift": c.output_shift,
                "exclusive": int(c.exclusive), "reverse": int(c.reverse)}  # fmt: skip
    if "rows" in call.arrays:  # ResizeParams
        return {"rows": ConstRef("rows"), "cols": ConstRef("cols")}
    return {}  # CopyParams: no words


def pack(call: Call) -> tuple[Adapter, list[Word]]:
    """The adapter that runs `call` and its parameter words, in the adapter's order."""
    adapter = adapter_for(call)
    fields = _fields(call)
    return adapter, [fields[name] for name in adapter.word_names()]


def check_limits(graph_source: str, n_ops: int, n_tensors: int, n_inputs: int,
                 n_outputs: int, calls: list[Call]) -> None:
    """Refuse, on the host, a model over any of the interpreter's limits."""
    problems = []
    if n_ops > LIMITS["TH_INTERP_MAX_OPS"]:
        problems.append(f"{n_ops} ops (the interpreter runs at most "
                        f"{LIMITS['TH_INTERP_MAX_OPS']})")  # fmt: skip
    if n_tensors > LIMITS["TH_INTERP_MAX_TENSORS"]:
        problems.append(f"{n_tensors} tensors (max {LIMITS['TH_INTERP_MAX_TENSORS']})")
    if max(n_inputs, n_outputs) > LIMITS["TH_INTERP_MAX_MODEL_IO"]:
        problems.append(f"{n_inputs} inputs and {n_outputs} outputs "
                        f"(max {LIMITS['TH_INTERP_MAX_MODEL_IO']} each)")  # fmt: skip
    for call in calls:
        if len(call.inputs) > LIMITS["TH_INTERP_MAX_OP_INPUTS"]:
            problems.append(f"op {call.op}: {len(call.inputs)} inputs "
                            f"(max {LIMITS['TH_INTERP_MAX_OP_INPUTS']})")  # fmt: skip
        if len(call.outputs) > LIMITS["TH_INTERP_MAX_OP_OUTPUTS"]:
            problems.append(f"op {call.op}: {len(call.outputs)} outputs "
                            f"(max {LIMITS['TH_INTERP_MAX_OP_OUTPUTS']})")  # fmt: skip
        if len(call.inputs) + len(call.outputs) > LIMITS["TH_INTERP_MAX_OP_IO"]:
            problems.append(f"op {call.op}: {len(call.inputs)} inputs and {len(call.outputs)} "
                            f"outputs (max {LIMITS['TH_INTERP_MAX_OP_IO']} together)")  # fmt: skip
    if problems:
        raise UnsupportedModelError(
            f"{graph_source}: over the interpreter's limits: " + "; ".join(problems)
        )


# --- which adapters this checkout's kernels_c can serve ---------------------------------------

_DEFINITION = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(th_\w+)\s*\(", re.MULTILINE)


def defined_functions(root: Path | None = None) -> frozenset[str]:
    """Names of the th_* functions defined (at column 0) in kernels_c/**/*.c."""
    root = root or repo_root() / "kernels_c"
    names: set[str] = set()
    for path in sorted(root.rglob("*.c")):
        names.update(_DEFINITION.findall(path.read_text(errors="replace")))
    return frozenset(names)


def available_adapters(root: Path | None = None) -> frozenset[str]:
    """Adapter names whose kernels_c functions all exist."""
    defined = defined_functions(root)
    return frozenset(a.name for a in ADAPTERS if all(f in defined for f in a.needs))


# --- the generated C header -------------------------------------------------------------------

HEADER_PATH = Path("firmware") / "interpreter" / "th_interp_abi.h"


def render_header() -> str:
    lines = [
        "/*",
        " * th_interp_abi.h - the interpreter's calling convention: kernel ids, parameter words,",
        " * limits. GENERATED from host/tinyhost/codegen/interpreter_abi.py: do not edit; run",
        " * `python -m tinyhost.codegen.interpreter_abi --write` (tests/test_interpreter_abi.py",
        " * fails when this file and the Python declaration differ).",
        " */",
        "#ifndef TH_INTERP_ABI_H",
        "#define TH_INTERP_ABI_H",
        "",
        f"#define TH_INTERP_KERNEL_ABI {KERNEL_ABI}u",
        "",
        "/* Limits */",
    ]
    for name, value in LIMITS.items():
        guard = name == "TH_INTERP_MAX_OPS"
        if guard:
            lines.append(f"#ifndef {name}")
        lines.append(f"#define {name} {value}")
        if guard:
            lines.append("#endif")
    lines.append(f"#define TH_INTERP_ABSENT 0x{ABSENT:X}u /* operand index of an absent input */")
    lines += ["", "/* Kernel ids (blob op records) */"]
    for a in ADAPTERS:
        lines.append(f"#define TH_KERNEL_{a.name.upper()} {a.kernel_id}u")
    lines += ["", "/* Parameter words: index of each word in the op's array, and their count */"]
    done: dict[str, tuple[str, ...]] = {}
    for a in ADAPTERS:
        if a.macro in done:  # adapters sharing a prefix share their words exactly
            if done[a.macro] != a.words:
                raise AssertionError(f"{a.name}: words differ from those of TH_{a.macro}_*")
            continue
        done[a.macro] = a.words
        _emit_words(lines, a)
    lines += ["", "#endif /* TH_INTERP_ABI_H */", ""]
    return "\n".join(lines)


def _emit_words(lines: list[str], a: Adapter) -> None:
    index = 0
    for w in a.words:
        m = re.fullmatch(r"(\w+)\[(\d+)\]", w)
        name, count = (m.group(1), int(m.group(2))) if m else (w, 1)
        lines.append(f"#define TH_{a.macro}_P_{name.upper()} {index}u")
        index += count
    lines.append(f"#define TH_{a.macro}_WORDS {index}u")


def write_header(root: Path | None = None) -> Path:
    path = (root or repo_root()) / HEADER_PATH
    path.write_text(render_header())
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="print or write th_interp_abi.h")
    parser.add_argument("--write", action="store_true", help=f"write {HEADER_PATH}")
    args = parser.parse_args(argv)
    if args.write:
        print(write_header())
    else:
        print(render_header(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

