"""`tinyhost convert --backend compiled`: the model as generated C, no interpreter.

From the same lowering, plan and scratch grants as the interpreter (ARCHITECTURE.md §4.4), a
jinja2 template (`templates/compiled_model.c.j2`) writes `model.c`: one function per op that
calls its kernels_c function with every shape, offset and quantization parameter as a
constant (static const structs), activations at the planner's fixed arena offsets, weights in
the layout the board's kernel build reads, and the firmware's model interface
(`firmware/model/th_model.h`), so the protocol firmware runs it unchanged. RESHAPE/SQUEEZE
cost nothing where the plan aliased them; the linker keeps only the kernels the calls name.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

import jinja2
import numpy as np

from tinyhost.arith.activations import (
    DequantizeParams,
    QuantizeParams,
    RequantizeParams,
    SoftmaxParams,
)
from tinyhost.arith.binary import PreluParams
from tinyhost.arith.constant_channels import ConstantChannels, constant_channels
from tinyhost.arith.conv import ConvParams, FullyConnectedParams
from tinyhost.arith.elementwise import (
    AddParams,
    MulParams,
    add_go,
    add_prep,
    add_sep,
    add_unclamped_count,
    collapse_broadcast,
    mul_prep,
    prep_initializer,
)
from tinyhost.arith.lstm import LstmParams
from tinyhost.arith.padding import compute_window_padding
from tinyhost.arith.pool import PoolParams, maxpool_prep
from tinyhost.arith.reduce import MeanParams
from tinyhost.arith.sigmoid16 import Sigmoid16Params
from tinyhost.arith.softmax16 import Softmax16Params
from tinyhost.arith.svdf import SvdfParams
from tinyhost.boards import Board
from tinyhost.codegen.blob import BlobTarget
from tinyhost.codegen.fold import Folded, fold_for_compiled
from tinyhost.codegen.interpreter import io_quant_defines, io_quantization, target_for
from tinyhost.codegen.interpreter_abi import LIMITS
from tinyhost.codegen.layout import CONV_BLOCK, FC_BLOCK, interleave_filter
from tinyhost.codegen.lower import (
    MAX_RANK,
    ArgParams,
    BlockParams,
    Call,
    ConcatParams,
    CopyParams,
    DwPwParams,
    FillParams,
    GatherParams,
    Int4Params,
    LutParams,
    MatMulParams,
    MinMaxParams,
    PackParams,
    PadParams,
    ResidualParams,
    ResizeParams,
    RowParams,
    ScanParams,
    SplitParams,
    StridedSliceParams,
    TransposeParams,
    lower_graph,
)
from tinyhost.codegen.prune import (
    CONFIG_HEADER,
    KERNEL_PATHS,
    cmake_paths,
    config_header,
    keep_all,
    record_paths,
)
from tinyhost.codegen.result import ConvertResult
from tinyhost.codegen.scratch import ScratchGrants, grant_scratch
from tinyhost.codegen.support import require_device_support, stack_cmake
from tinyhost.codegen.widen import (
    CONV_1X1_W16_FUNCTION,
    CONV_3X3_W16_FUNCTION,
    CONV_W16_BLOCK,
    FC_W16_FUNCTION,
    FC_W16_TABLE_MIN_COUT,
    Widened,
    conv_extra_flash,
    conv_rq_table,
    drop_largest,
    fc_extra_flash,
    fc_fast_ok,
    fc_w16_bias,
    fc_w16_rq_table,
    fc_w16_weights,
    w16_weights,
)
from tinyhost.errors import TinyhostError, UnsupportedModelError
from tinyhost.ir import Conv2DOptions, Graph, Op, OpKind, dwpw_parts, residual_parts
from tinyhost.ir.stats import op_macs
from tinyhost.paths import repo_root
from tinyhost.plan import MemoryPlan, PlanOptions, plan_memory
from tinyhost.plan.budget import Budget, budget_for, require_fits
from tinyhost.plan.patch import (
    Patched,
    PatchRequest,
    check_patched,
    layout_patched,
    resolve_patch,
)
from tinyhost.plan.scratch import (
    conv_variant,
    dwpw_band_rows,
    dwpw_bands,
    dwpw_scratch,
    dwpw_staging_offset,
    residual_row_bytes,
    residual_scratch,
    scratch_bytes,
)
from tinyhost.plan.stack import StackReserve, stack_reserve

_CTYPES = {np.dtype(np.int8): "int8_t", np.dtype(np.int32): "int32_t",
           np.dtype(np.int16): "int16_t", np.dtype(np.uint8): "uint8_t",
           np.dtype(np.uint16): "uint16_t", np.dtype(np.int64): "int64_t",
           np.dtype(np.float32): "float"}  # fmt: skip
_S16X8 = ("th_fully_connected_s16", "th_conv_s16", "th_dw_conv_s16")
_DTYPE_CODES = {np.dtype(np.int8): "TH_MODEL_INT8", np.dtype(np.uint8): "TH_MODEL_UINT8",
                np.dtype(np.int16): "TH_MODEL_INT16", np.dtype(np.int32): "TH_MODEL_INT32",
                np.dtype(np.float32): "TH_MODEL_FLOAT32"}  # fmt: skip


@dataclass(frozen=True)
class _Array:
    name: str
    ctype: str
    count: int
    body: str
    nbytes: int


@dataclass(frozen=True)
class _LiveChannels:
    """A CONV_2D run for its non-constant channels only, into `offset` of the arena."""

    channels: ConstantChannels
    offset: int




def _live_channel_plan(graph: Graph, calls: list[Call], plan: MemoryPlan,
                       grants: ScratchGrants) -> dict[int, _LiveChannels]:
    """Convolutions with constant channels (arith/constant_channels.py) that have room in
    the planned arena, at their step, for the live channels' output beside their scratch."""
    out: dict[int, _LiveChannels] = {}
    convs = {c.op for c in calls if c.function == "th_conv_s8"}
    for step, i in enumerate(plan.op_order):
        op = graph.ops[i]
        cc = constant_channels(graph, op) if i in convs else None
        if cc is None or not cc.worth_it:
            continue
        y = graph.tensors[op.outputs[0]]
        size = y.size_bytes // cc.pixel.size * len(cc.live)
        grant = grants.for_op(i)
        avoid = () if grant is None else ((grant.offset, grant.size),)
        room = plan.free_block(step, max(size, 1), avoid=avoid)
        if room is not None:
            out[i] = _LiveChannels(cc, room)
    return out


@dataclass(frozen=True)
class _Bands:
    """How a fused residual conv (ResidualParams) runs: its conv scratch at `offset`, and
    its bands of output rows (first row, rows, arena offset of the band's staging)."""

    offset: int
    conv_scratch: int
    bands: tuple[tuple[int, int, int], ...]


def _band_schedule(graph: Graph, plan: MemoryPlan, step: int, op: Op, staging: int,
                   capacity: int) -> tuple[tuple[int, int, int], ...]:
    """Bands of output rows, each as tall as its staging allows: the `capacity` bytes at
    `staging`, or, when the conv's input dies at this op, the input rows no later band reads
    (those before the band's first input row: a band reads only its own rows), which grow as
    the bands advance (ResNet's 32-row layer: 7 bands instead of 32, the same arena)."""
    conv = residual_parts(op)[0]
    o = conv.options
    assert isinstance(o, Conv2DOptions)
    x = op.inputs[0]
    assert x is not None
    _, h, w, cin = graph.tensors[x].shape
    _, kh, kw, _ = graph.tensors[op.inputs[1]].shape
    _, oh, _, _ = graph.tensors[op.outputs[0]].shape
    pad = compute_window_padding(o.padding, h, w, kh, kw, o.stride_h, o.stride_w,
                                 o.dilation_h, o.dilation_w, explicit=o.explicit_padding)
    row = residual_row_bytes(graph, op)
    buffer = next(b for b in plan.buffers if x in b.tensors)
    dies = (buffer.last_op == step and x not in graph.outputs
            and not graph.tensors[x].is_variable)  # fmt: skip
    bands: list[tuple[int, int, int]] = []
    r0 = 0
    while r0 < oh:
        dead = max(0, r0 * o.stride_h - pad.top) * w * cin if dies else 0
        if dead > capacity and dead >= row:
            rows, where = dead // row, buffer.offset
        else:
            rows, where = capacity // row, staging
        rows = min(rows, oh - r0)
        bands.append((r0, rows, where))
        r0 += rows
    return tuple(bands)


def _residual_bands(graph: Graph, calls: list[Call], plan: MemoryPlan, grants: ScratchGrants,
                    options: PlanOptions) -> dict[int, _Bands]:
    """The bands of each fused residual conv: staging in as much free room as the arena has
    at its step (at least the one row the plan reserved) or in its dead input rows."""
    out: dict[int, _Bands] = {}
    fused = {c.op for c in calls if isinstance(c.params, ResidualParams)}
    for step, i in enumerate(plan.op_order):
        if i not in fused:
            continue
        op = graph.ops[i]
        conv_op = residual_parts(op)[0]
        conv = scratch_bytes(replace(graph, ops=(conv_op,)), conv_op, options)
        row, height = residual_row_bytes(graph, op), graph.tensors[op.outputs[0]].shape[1]
        grant = grants.for_op(i)
        assert grant is not None and grant.size >= residual_scratch(conv, row, 1)
        offset, rows = grant.offset, (grant.size - residual_scratch(conv, 0, 0)) // row
        planned = plan.scratch_for(i)
        for more in range(height, rows, -1):
            room = plan.free_block(step, residual_scratch(conv, row, more), keep=planned)
            if room is not None:
                offset, rows = room, more
                break
        staging = offset + residual_scratch(conv, 0, 0)
        out[i] = _Bands(offset, conv, _band_schedule(graph, plan, step, op, staging,
                                                     rows * row))
    return out


@dataclass(frozen=True)
class _DwPwBands:
    """How a fused depthwise -> pointwise op (DwPwParams) runs: the kernels' scratch at
    `offset` (`kernels` bytes), the staged depthwise rows at `staging`, and its bands of
    depthwise output rows (first row, rows), each `rows` tall but the last."""

    offset: int
    kernels: int
    staging: int
    rows: int
    bands: tuple[tuple[int, int], ...]


def _dwpw_bands(graph: Graph, calls: list[Call], plan: MemoryPlan, grants: ScratchGrants,
                options: PlanOptions) -> dict[int, _DwPwBands]:
    """The bands of each fused depthwise -> pointwise op: as tall as the arena has room free
    at its step (a multiple of the planned dwpw_band_rows, so the plan's overlap of the
    output over the input stays valid), else the planned ones in the planned scratch."""
    out: dict[int, _DwPwBands] = {}
    fused = {c.op for c in calls if isinstance(c.params, DwPwParams)}
    for step, i in enumerate(plan.op_order):
        if i not in fused:
            continue
        op = graph.ops[i]
        least = dwpw_band_rows(graph, op)
        height = graph.tensors[dwpw_parts(op)[0].outputs[0]].shape[1]
        grant = grants.for_op(i)
        assert grant is not None and grant.size >= dwpw_scratch(graph, op, options, least)
        offset, rows = grant.offset, least
        planned = plan.scratch_for(i)
        for more in range(least * (-(-height // least)), least, -least):
            room = plan.free_block(step, dwpw_scratch(graph, op, options, more), keep=planned)
            if room is not None:
                offset, rows = room, more
                break
        staging = dwpw_staging_offset(graph, op, options, rows)
        out[i] = _DwPwBands(offset, staging, offset + staging, rows,
                            dwpw_bands(height, rows))  # fmt: skip
    return out


class _Model:
    """What the template needs, gathered from the calls (one instance per conversion)."""

    def __init__(self, graph: Graph, plan: MemoryPlan, grants: ScratchGrants,
                 interleaved: bool, live: dict[int, _LiveChannels],
                 bands: dict[int, _Bands], widen: frozenset[int] = frozenset(),
                 dwpw: dict[int, _DwPwBands] | None = None) -> None:
        self.graph = graph
        self.dwpw = dwpw or {}
        self.widen = widen  # ops (graph.ops indices) with host-widened int16 weights
        self.bands = bands
        self.plan = plan
        self.grants = grants
        self.interleaved = interleaved
        self.live = live
        self.arrays: list[_Array] = []
        self._array_data: dict[str, np.ndarray] = {}
        self._tensor_arrays: dict[int, str] = {}
        self.sep = False  # emit th_add_prep's separable tables (DSP builds, add_sep)

    # -- data ---------------------------------------------------------------------------------

    def array(self, name: str, data: np.ndarray) -> str:
        data = np.ascontiguousarray(data).reshape(-1)
        if name in self._array_data:  # the bands of a patched op share their data
            if not np.array_equal(self._array_data[name], data):
                raise TinyhostError(f"two different arrays named {name}")
            return name
        self._array_data[name] = data
        ctype = _CTYPES[data.dtype]
        if data.dtype == np.float32:
            values = [f"{float(v)!r}f" for v in data]
        else:
            values = [str(int(v)) for v in data]
        per_line = 16 if data.itemsize == 1 else 8
        lines = [", ".join(values[k : k + per_line]) for k in range(0, len(values), per_line)]
        body = ",\n".join("    " + line for line in lines)
        self.arrays.append(_Array(name, ctype, max(1, data.size), body or "    0", data.nbytes))
        return name

    def constant_tensor(self, t: int, layout_block: int | None = None) -> str:
        if t not in self._tensor_arrays:
            tensor = self.graph.tensors[t]
            data = np.asarray(tensor.data).astype(tensor.dtype)
            if layout_block is not None:
                data = interleave_filter(data.reshape(data.shape[0], -1), layout_block)
            self._tensor_arrays[t] = self.array(f"tensor_{t}", data)
        return self._tensor_arrays[t]

    def pointer(self, t: int | None, ctype: str, const: bool = True,
                layout_block: int | None = None) -> str:
        """A C expression for tensor t: a const array, or its fixed place in the arena."""
        if t is None:
            return "NULL"
        tensor = self.graph.tensors[t]
        if tensor.data is not None:
            return self.constant_tensor(t, layout_block)
        qual = "const " if const else ""
        return f"({qual}{ctype} *)(arena + {self.plan.tensor_offset(t)})"

    def context(self, op: int) -> str:
        grant = self.grants.for_op(op)
        if grant is None:
            return "    static const th_context ctx = {NULL, 0};"
        return f"    const th_context ctx = {{arena + {grant.offset}, {grant.size}}};"

    def shape(self, t: int) -> str:
        """th_shape of tensor t with its own rank (a scalar as rank 1)."""
        dims = list(self.graph.tensors[t].shape)
        rank = len(dims)
        if rank == 0:
            rank, dims = 1, [1]
        return f"{{{rank}, {{{', '.join(map(str, dims + [1] * (MAX_RANK - len(dims))))}}}}}"

    def binary_shapes(self, a: int, b: int, out: int) -> str:
        """`s1`, `s2` and `so` of a binary elementwise call as the kernel's broadcast walk
        reduces them (collapse_broadcast): the same elements and walk, fewer dims for the
        kernel to analyse on every call."""
        dims = [tuple(int(d) for d in self.graph.tensors[t].shape) for t in (a, b, out)]
        s1, s2, so = collapse_broadcast(*dims)

        def text(d: tuple[int, ...]) -> str:
            return f"{{{len(d)}, {{{', '.join(map(str, [*d, *[1] * (MAX_RANK - len(d))]))}}}}}"

        return (f"    static const th_shape s1 = {text(s1)}, s2 = {text(s2)}, "
                f"so = {text(so)};\n")

    def shape_with_axis(self, t: int, rank: int, axis: int) -> str:
        """th_shape of tensor t seen with `rank` dims: its own, or with a 1 at `axis` (UNPACK
        outputs, PACK inputs)."""
        dims = list(self.graph.tensors[t].shape)
        if len(dims) < rank:
            dims.insert(axis, 1)
        return f"{{{rank}, {{{', '.join(map(str, dims + [1] * (MAX_RANK - len(dims))))}}}}}"

    def movement(self, call: Call, i: int) -> str | None:
        """The C body of an issue-17 data-movement call (None: not one of them)."""
        p, x, out = call.params, call.inputs[0], call.outputs[0]
        y = self.pointer(out, "int8_t", const=False)
        if isinstance(p, SplitParams):
            rank = len(self.graph.tensors[x].shape)
            n = len(call.outputs)
            shapes = ", ".join(self.shape_with_axis(t, rank, p.axis) for t in call.outputs)
            ptrs = ", ".join(self.pointer(t, "int8_t", const=False) for t in call.outputs)
            return (f"    static const th_split_params params = {{{p.axis}, {n}}};\n"
                    f"    static const th_shape si = {self.shape(x)}, shapes[{n}] = {{{shapes}}};\n"
                    f"    int8_t *const outputs[{n}] = {{{ptrs}}};\n"
                    f"    return th_split_s8(NULL, &params, &si, {self.pointer(x, 'int8_t')}, "
                    f"shapes, outputs);")
        if isinstance(p, PackParams):
            rank = len(self.graph.tensors[out].shape)
            n = len(call.inputs)
            shapes = ", ".join(self.shape_with_axis(t, rank, p.axis) for t in call.inputs)
            ptrs = ", ".join(self.pointer(t, "int8_t") for t in call.inputs)
            return (f"    static const th_concat_params params = {{{p.axis}, {n}}};\n"
                    f"    static const th_shape shapes[{n}] = {{{shapes}}};\n"
                    f"    const int8_t *const inputs[{n}] = {{{ptrs}}};\n"
                    f"    static const th_shape so = {self.shape(out)};\n"
                    f"    return th_concat_s8(NULL, &params, shapes, inputs, &so, {y});")
        if isinstance(p, GatherParams):
            return (f"    static const th_gather_params params = {{{p.batch}, {p.outer}, "
                    f"{p.axis_size}, {p.inner}, {p.coords}}};\n"
                    f"    return th_gather_s8(NULL, &params, {self.pointer(x, 'int8_t')}, "
                    f"{self.pointer(call.inputs[1], 'int32_t')}, {y});")
        if isinstance(p, BlockParams):
            return (f"    static const th_dims in = {self.dims4(x)}, out = {self.dims4(out)};\n"
                    f"    return {call.function}(NULL, {p.block}, &in, "
                    f"{self.pointer(x, 'int8_t')}, &out, {y});")
        if isinstance(p, ResizeParams):
            rows = self.array(f"op{i}_rows", np.asarray(call.arrays["rows"], np.int32))
            cols = self.array(f"op{i}_cols", np.asarray(call.arrays["cols"], np.int32))
            return (f"    static const th_resize_tables tables = {{{rows}, {cols}}};\n"
                    f"    static const th_dims in = {self.dims4(x)}, out = {self.dims4(out)};\n"
                    f"    return {call.function}(NULL, &tables, &in, "
                    f"{self.pointer(x, 'int8_t')}, &out, {y});")
        if isinstance(p, MatMulParams):
            a, b = p.arith, call.inputs[1]
            return (f"    static const th_batch_matmul_params params = {{{a.lhs_offset}, "
                    f"{a.rhs_offset}, {a.output_offset}, {int(p.adj_x)}, {int(p.adj_y)}, "
                    f"{{{a.act_min}, {a.act_max}}}}};\n"
                    f"    static const th_per_tensor_quant quant = {{{a.multiplier}, "
                    f"{a.shift}}};\n"
                    f"    static const th_shape sa = {self.shape(x)}, sb = {self.shape(b)}, "
                    f"so = {self.shape(out)};\n"
                    f"    return th_batch_matmul_s8(NULL, &params, &quant, &sa, "
                    f"{self.pointer(x, 'int8_t')}, &sb, {self.pointer(b, 'int8_t')}, &so, {y});")
        if isinstance(p, ArgParams):
            return (f"    static const th_arg_params params = {{{p.outer}, {p.axis_size}, "
                    f"{p.inner}}};\n"
                    f"    return {call.function}(NULL, &params, {self.pointer(x, 'int8_t')}, "
                    f"{self.pointer(out, 'int32_t', const=False)});")
        if isinstance(p, RowParams):
            fields = ", ".join(str(v) for v in dataclasses.astuple(p.arith))
            struct = ("th_log_softmax_params" if call.function == "th_log_softmax_s8"
                      else "th_l2norm_params")
            return (f"    static const {struct} params = {{{fields}}};\n"
                    f"    return {call.function}(NULL, &params, {p.rows}, {p.depth}, "
                    f"{self.pointer(x, 'int8_t')}, {y});")
        if isinstance(p, ScanParams):
            c = p.arith
            return (f"    static const th_cumsum_params params = {{{c.input_offset}, "
                    f"{c.output_offset}, {c.input_multiplier}, {c.input_shift}, "
                    f"{c.output_multiplier}, {c.output_shift}, {int(c.exclusive)}, "
                    f"{int(c.reverse)}}};\n"
                    f"    return th_cumsum_s8(NULL, &params, {p.outer}, {p.axis_size}, "
                    f"{p.inner}, {self.pointer(x, 'int8_t')}, {y});")
        return None

    def reshaping(self, function: str, params: str, x: int, out: int,
                  so: str | None = None) -> str:
        """A data-movement call: params, then input and output shapes and pointers."""
        return (f"    static const {params};\n"
                f"    static const th_shape si = {self.shape(x)}, so = {so or self.shape(out)};\n"
                f"    return {function}(NULL, &params, &si, {self.pointer(x, 'int8_t')}, &so, "
                f"{self.pointer(out, 'int8_t', const=False)});")

    def dims4(self, t: int) -> str:
        return "{" + ", ".join(map(str, self.graph.tensors[t].shape)) + "}"

    # -- one op ---------------------------------------------------------------------------------

    def conv(self, call: Call, p: ConvParams, i: int) -> tuple[str, str]:
        """CONV_2D / DEPTHWISE_CONV_2D: the variant the C wrapper would pick, called directly;
        a CONV_2D with constant channels computes the others only, then expands."""
        x, out = call.inputs[0], call.outputs[0]
        dw = call.function == "th_dw_conv_s8"
        live = self.live.get(call.op)
        multiplier, shift = call.arrays["multiplier"], call.arrays["shift"]
        weights_t, bias_t = call.inputs[1], call.inputs[2]
        filter_dims, out_dims = self.dims4(weights_t), self.dims4(out)
        if live is not None and not live.channels.live:  # every channel constant: no conv
            return self.expand(call, i, live, "pixel"), (
                f"all {live.channels.pixel.size} channels constant")
        widened = live is None and call.op in self.widen
        if widened:
            w = self.array(f"op{i}_weights_s16", w16_weights(
                np.asarray(self.graph.tensors[weights_t].data), CONV_W16_BLOCK))
            b = self.pointer(bias_t, "int32_t")
            y = self.pointer(out, "int8_t", const=False)
        elif live is None:
            block = None if dw or not self.interleaved else CONV_BLOCK
            w = self.pointer(weights_t, "int8_t", layout_block=block)
            b = self.pointer(bias_t, "int32_t")
            y = self.pointer(out, "int8_t", const=False)
        else:
            keep = list(live.channels.live)
            weights = np.asarray(self.graph.tensors[weights_t].data)[keep]
            if self.interleaved:
                weights = interleave_filter(weights.reshape(len(keep), -1), CONV_BLOCK)
            w = self.array(f"op{i}_live_weights", weights.astype(np.int8))
            b = ("NULL" if bias_t is None else self.array(
                f"op{i}_live_bias", np.asarray(self.graph.tensors[bias_t].data)[keep]))
            multiplier, shift = multiplier[keep], shift[keep]
            kdims = self.graph.tensors[weights_t].shape[1:]
            odims = self.graph.tensors[out].shape[:3]
            filter_dims = "{" + ", ".join(map(str, (len(keep), *kdims))) + "}"
            out_dims = "{" + ", ".join(map(str, (*odims, len(keep)))) + "}"
            y = "live"
        mult = self.array(f"op{i}_multiplier", multiplier)
        shift_name = self.array(f"op{i}_shift", shift)
        ptype = "th_dw_conv_params" if dw else "th_conv_params"
        fields = (f".input_offset = {p.input_offset}, .output_offset = {p.output_offset}, "
                  + (f".ch_mult = {p.ch_mult}, " if dw else "")
                  + f".stride = {{{p.stride_h}, {p.stride_w}}}, "
                  f".padding = {{{p.pad_top}, {p.pad_left}}}, "
                  f".dilation = {{{p.dilation_h}, {p.dilation_w}}}, "
                  f".activation = {{{p.act_min}, {p.act_max}}}")  # fmt: skip
        function = conv_variant(self.graph, self.graph.ops[call.op])  # the wrapper's pick
        rq = ""
        if widened and function == "th_conv_3x3_s8":
            table = _conv_table(self.graph, call)
            rq = ", " + ("NULL" if table is None else self.array(f"op{i}_rq_pairs", table))
            function = CONV_3X3_W16_FUNCTION
        elif widened:
            function = CONV_1X1_W16_FUNCTION
        head = (f"{self.context(call.op)}\n"
                f"    static const {ptype} params = {{{fields}}};\n"
                f"    static const th_per_channel_quant quant = {{{mult}, {shift_name}}};\n"
                f"    static const th_dims in = {self.dims4(x)}, filter = {filter_dims}, "
                f"out = {out_dims};\n")
        call_c = (f"{function}(&ctx, &params, &quant, &in, {self.pointer(x, 'int8_t')}, "
                  f"&filter, {w}, {b}, &out, {y}{rq})")
        if live is None:
            return head + f"    return {call_c};", function
        return (head + f"    int8_t *const live = (int8_t *)(arena + {live.offset});\n"
                f"    const th_status status = {call_c};\n"
                f"    if (status != TH_OK) {{\n        return status;\n    }}\n"
                + self.expand(call, i, live, "live"), function)

    def add_params(self, call: Call, p: AddParams, i: int, params: str,
                   quant: str) -> tuple[str, str]:
        """An ADD's static const params and quant structs, and its tables' arguments."""
        head = (f"    static const th_add_params {params} = {{{p.input1_offset}, "
                f"{p.input2_offset}, {p.output_offset}, {p.left_shift}, "
                f"{{{p.activation_min}, {p.activation_max}}}}};\n"
                f"    static const th_add_quant {quant} = {{{p.input1_multiplier}, "
                f"{p.input1_shift}, {p.input2_multiplier}, {p.input2_shift}, "
                f"{p.output_multiplier}, {p.output_shift}}};\n")  # fmt: skip
        tables = ""
        if call.function.endswith("_tables"):
            t1 = self.array(f"op{i}_table1", np.asarray(call.arrays["table1"], np.int32))
            t2 = self.array(f"op{i}_table2", np.asarray(call.arrays["table2"], np.int32))
            tables = f"{t1}, {t2}, "
        return head, tables

    def residual(self, call: Call, r: ResidualParams, i: int) -> tuple[str, str]:
        """A CONV_2D fused with its residual ADD, in bands of output rows: each band is an
        ordinary call of the conv's variant on the input rows its windows read (top padding
        as the full layer's, rows past the input's end read as padding by the kernel, as
        in the full layer), into staging rows after the conv's scratch; then the ADD's
        kernel adds them to the skip's rows and writes the sum's (over the skip when the
        plan put it there). Bit-exact with the conv then the ADD."""
        conv, add = r.conv, r.add
        p, a = conv.params, add.params
        assert isinstance(p, ConvParams) and isinstance(a, AddParams)
        x, w_t, b_t, skip = call.inputs
        out = call.outputs[0]
        _, h, wd, cin = self.graph.tensors[x].shape
        cout, kh, _, _ = self.graph.tensors[w_t].shape
        _, oh, ow, _ = self.graph.tensors[out].shape
        band = self.bands[call.op]
        mult = self.array(f"op{i}_multiplier", conv.arrays["multiplier"])
        shift = self.array(f"op{i}_shift", conv.arrays["shift"])
        w = self.pointer(w_t, "int8_t", layout_block=CONV_BLOCK if self.interleaved else None)
        b = self.pointer(b_t, "int32_t")
        function = conv_variant(self.graph, residual_parts(self.graph.ops[call.op])[0])
        add_head, tables = self.add_params(add, a, i, "add_params", "add_quant")
        row = ow * cout
        staged = "staging" if r.conv_slot == 0 else "skip + first_out"
        other = "skip + first_out" if r.conv_slot == 0 else "staging"
        ones = ", 1" * (MAX_RANK - 1)
        n = len(band.bands)
        table = ", ".join(f"{{{r0}, {rows}, {at}}}" for r0, rows, at in band.bands)
        body = (f"    const th_context ctx = {{arena + {band.offset}, {band.conv_scratch}}};\n"
                f"    /* bands of output rows: first row, rows, staging's arena offset */\n"
                f"    static const int32_t bands[{n}][3] = {{{table}}};\n"
                f"    static const th_conv_params band = {{.input_offset = {p.input_offset}, "
                f".output_offset = {p.output_offset}, .stride = {{{p.stride_h}, {p.stride_w}}}, "
                f".padding = {{0, {p.pad_left}}}, .dilation = {{{p.dilation_h}, "
                f"{p.dilation_w}}}, .activation = {{{p.act_min}, {p.act_max}}}}};\n"
                f"    static const th_per_channel_quant quant = {{{mult}, {shift}}};\n"
                f"    static const th_dims filter = {self.dims4(w_t)};\n"
                f"{add_head}"
                f"    const int8_t *const x = {self.pointer(x, 'int8_t')};\n"
                f"    const int8_t *const skip = {self.pointer(skip, 'int8_t')};\n"
                f"    int8_t *const y = {self.pointer(out, 'int8_t', const=False)};\n"
                f"    for (int32_t k = 0; k < {n}; k++) {{\n"
                f"        const int32_t r0 = bands[k][0], rows = bands[k][1];\n"
                f"        int8_t *const staging = (int8_t *)(arena + bands[k][2]);\n"
                f"        const int32_t first = r0 * {p.stride_h} - {p.pad_top};\n"
                f"        const int32_t top = first < 0 ? 0 : first;\n"
                f"        int32_t end = first + (rows - 1) * {p.stride_h} + "
                f"{(kh - 1) * p.dilation_h + 1};\n"
                f"        if (end > {h}) {{\n            end = {h};\n        }}\n"
                f"        th_conv_params params = band;\n"
                f"        params.padding.h = top - first;\n"
                f"        const th_dims in = {{1, end - top, {wd}, {cin}}}, "
                f"out = {{1, rows, {ow}, {cout}}};\n"
                f"        th_status status = {function}(&ctx, &params, &quant, &in, "
                f"x + top * {wd * cin}, &filter, {w}, {b}, &out, staging);\n"
                f"        if (status != TH_OK) {{\n            return status;\n        }}\n"
                f"        const int32_t first_out = r0 * {row};\n"
                f"        const th_shape s = {{1, {{rows * {row}{ones}}}}};\n"
                f"        status = {add.function}(NULL, &add_params, &add_quant, {tables}&s, "
                f"{staged}, &s, {other}, &s, y + first_out);\n"
                f"        if (status != TH_OK) {{\n            return status;\n        }}\n"
                f"    }}\n    return TH_OK;")  # fmt: skip
        return body, function

    def dwpw_body(self, call: Call, r: DwPwParams, i: int) -> tuple[str, str]:
        """A DEPTHWISE_CONV_2D fused with its pointwise CONV_2D, in bands of depthwise output
        rows: each band is an ordinary call of the depthwise variant on the input rows its
        windows read (top padding as the full layer's, rows past the input's end read as
        padding by the kernel, as in the full layer) into the staging rows, then one of the
        pointwise variant from the staging rows to the band's output rows. Bit-exact with the
        two layers: every output value is computed from the same inputs, parameters and
        requantization."""
        dw, pw = r.dw, r.pw
        p, q = dw.params, pw.params
        assert isinstance(p, ConvParams) and isinstance(q, ConvParams)
        x, dw_w, dw_b, pw_w, pw_b = call.inputs
        out = call.outputs[0]
        dw_op, pw_op = dwpw_parts(self.graph.ops[call.op])
        _, h, wd, cin = self.graph.tensors[x].shape
        _, kh, _, _ = self.graph.tensors[dw_w].shape
        _, _, ow, cm = self.graph.tensors[dw_op.outputs[0]].shape
        cout = self.graph.tensors[out].shape[3]
        band = self.dwpw[call.op]
        dw_fn, pw_fn = conv_variant(self.graph, dw_op), conv_variant(self.graph, pw_op)
        if call.op in self.widen:  # host-widened int16 pointwise weights (codegen/widen.py)
            pw_fn = CONV_1X1_W16_FUNCTION
            pw_weights = self.array(f"op{i}_pw_weights_s16", w16_weights(
                np.asarray(self.graph.tensors[pw_w].data), CONV_W16_BLOCK))
        else:
            block = CONV_BLOCK if self.interleaved else None
            pw_weights = self.pointer(pw_w, "int8_t", layout_block=block)
        dw_mult = self.array(f"op{i}_dw_multiplier", dw.arrays["multiplier"])
        dw_shift = self.array(f"op{i}_dw_shift", dw.arrays["shift"])
        pw_mult = self.array(f"op{i}_pw_multiplier", pw.arrays["multiplier"])
        pw_shift = self.array(f"op{i}_pw_shift", pw.arrays["shift"])
        n = len(band.bands)
        table = ", ".join(f"{{{r0}, {rows}}}" for r0, rows in band.bands)
        body = (f"    const th_context ctx = {{arena + {band.offset}, {band.kernels}}};\n"
                f"    int8_t *const staging = (int8_t *)(arena + {band.staging});\n"
                f"    /* bands of depthwise output rows: first row, rows */\n"
                f"    static const int32_t bands[{n}][2] = {{{table}}};\n"
                f"    static const th_dw_conv_params dw_band = {{.input_offset = "
                f"{p.input_offset}, .output_offset = {p.output_offset}, .ch_mult = {p.ch_mult}, "
                f".stride = {{{p.stride_h}, {p.stride_w}}}, .padding = {{0, {p.pad_left}}}, "
                f".dilation = {{{p.dilation_h}, {p.dilation_w}}}, "
                f".activation = {{{p.act_min}, {p.act_max}}}}};\n"
                f"    static const th_per_channel_quant dw_quant = {{{dw_mult}, {dw_shift}}};\n"
                f"    static const th_dims dw_filter = {self.dims4(dw_w)};\n"
                f"    static const th_conv_params pw = {{.input_offset = {q.input_offset}, "
                f".output_offset = {q.output_offset}, .stride = {{1, 1}}, .padding = {{0, 0}}, "
                f".dilation = {{1, 1}}, .activation = {{{q.act_min}, {q.act_max}}}}};\n"
                f"    static const th_per_channel_quant pw_quant = {{{pw_mult}, {pw_shift}}};\n"
                f"    static const th_dims pw_filter = {self.dims4(pw_w)};\n"
                f"    const int8_t *const x = {self.pointer(x, 'int8_t')};\n"
                f"    int8_t *const y = {self.pointer(out, 'int8_t', const=False)};\n"
                f"    for (int32_t k = 0; k < {n}; k++) {{\n"
                f"        const int32_t r0 = bands[k][0], rows = bands[k][1];\n"
                f"        const int32_t first = r0 * {p.stride_h} - {p.pad_top};\n"
                f"        const int32_t top = first < 0 ? 0 : first;\n"
                f"        int32_t end = first + (rows - 1) * {p.stride_h} + "
                f"{(kh - 1) * p.dilation_h + 1};\n"
                f"        if (end > {h}) {{\n            end = {h};\n        }}\n"
                f"        th_dw_conv_params params = dw_band;\n"
                f"        params.padding.h = top - first;\n"
                f"        const th_dims in = {{1, end - top, {wd}, {cin}}}, "
                f"mid = {{1, rows, {ow}, {cm}}}, out = {{1, rows, {ow}, {cout}}};\n"
                f"        th_status status = {dw_fn}(&ctx, &params, &dw_quant, &in, "
                f"x + top * {wd * cin}, &dw_filter, {self.pointer(dw_w, 'int8_t')}, "
                f"{self.pointer(dw_b, 'int32_t')}, &mid, staging);\n"
                f"        if (status != TH_OK) {{\n            return status;\n        }}\n"
                f"        status = {pw_fn}(&ctx, &pw, &pw_quant, &mid, staging, &pw_filter, "
                f"{pw_weights}, "
                f"{self.pointer(pw_b, 'int32_t')}, &out, y + r0 * {ow * cout});\n"
                f"        if (status != TH_OK) {{\n            return status;\n        }}\n"
                f"    }}\n    return TH_OK;")  # fmt: skip
        return body, f"{dw_fn} + {pw_fn}"

    def expand(self, call: Call, i: int, live: _LiveChannels, source: str) -> str:
        """`return th_expand_channels_s8(...)` from `source` ("live": the computed channels
        in the arena; "pixel": none, every channel constant)."""
        cc = live.channels
        out = call.outputs[0]
        pixels = int(np.prod(self.graph.tensors[out].shape[:3]))
        pixel = self.array(f"op{i}_constant_pixel", cc.pixel)
        index = (self.array(f"op{i}_live_channel", np.asarray(cc.live, np.uint16))
                 if cc.live else "NULL")
        src = pixel if source == "pixel" else "live"
        return (f"    return th_expand_channels_s8(NULL, {src}, {pixels}, {len(cc.live)}, "
                f"{index}, {pixel}, {cc.pixel.size}, "
                f"{self.pointer(out, 'int8_t', const=False)});")

    def s16x8(self, call: Call, i: int) -> str:
        """th_fully_connected_s16 / th_conv_s16 / th_dw_conv_s16: plain-layout filters, int64
        bias, per-channel arrays."""
        p = call.params
        x, w, bias = call.inputs
        out = call.outputs[0]
        mult = self.array(f"op{i}_multiplier", call.arrays["multiplier"])
        shift = self.array(f"op{i}_shift", call.arrays["shift"])
        act = f"{{{p.act_min}, {p.act_max}}}"
        if isinstance(p, FullyConnectedParams):
            cout, cin = (int(d) for d in self.graph.tensors[w].shape)
            batches = int(np.prod(self.graph.tensors[x].shape)) // cin
            head = (f"    static const th_fc_params params = {{0, 0, 0, {act}}};\n"
                    f"    static const th_dims in = {{{batches}, 1, 1, {cin}}}, filter = "
                    f"{{{cout}, 1, 1, {cin}}}, out = {{{batches}, 1, 1, {cout}}};\n")
        else:
            dw = call.function == "th_dw_conv_s16"
            ptype = "th_dw_conv_params" if dw else "th_conv_params"
            fields = ("0, 0, " + (f"{p.ch_mult}, " if dw else "")
                      + f"{{{p.stride_h}, {p.stride_w}}}, {{{p.pad_top}, {p.pad_left}}}, "
                      f"{{{p.dilation_h}, {p.dilation_w}}}, {act}")  # fmt: skip
            head = (f"    static const {ptype} params = {{{fields}}};\n"
                    f"    static const th_dims in = {self.dims4(x)}, filter = {self.dims4(w)}, "
                    f"out = {self.dims4(out)};\n")
        return (head + f"    static const th_per_channel_quant quant = {{{mult}, {shift}}};\n"
                f"    return {call.function}(NULL, &params, &quant, &in, "
                f"{self.pointer(x, 'int16_t')}, &filter, {self.pointer(w, 'int8_t')}, "
                f"{self.pointer(bias, 'int64_t')}, &out, "
                f"{self.pointer(out, 'int16_t', const=False)});")

    def s4(self, call: Call, i: int) -> str:
        """th_conv_s4 / th_dw_conv_s4 / th_fully_connected_s4: the packed int4 rows as a
        uint8_t array (th_nn.h "INT4"), per-channel arrays, the weight tensor not emitted."""
        p = call.params
        assert isinstance(p, Int4Params)
        base, shape = p.base, p.filter_shape
        x, bias, out = call.inputs[0], call.inputs[2], call.outputs[0]
        w = self.array(f"op{i}_weights_s4", call.arrays["weights"])
        mult = self.array(f"op{i}_multiplier", call.arrays["multiplier"])
        shift = self.array(f"op{i}_shift", call.arrays["shift"])
        act = f"{{{base.act_min}, {base.act_max}}}"
        if isinstance(base, FullyConnectedParams):
            cout, cin = int(shape[0]), int(shape[-1])
            batches = int(np.prod(self.graph.tensors[x].shape)) // cin
            head = (f"    static const th_fc_params params = {{{base.input_offset}, 0, "
                    f"{base.output_offset}, {act}}};\n"
                    f"    static const th_dims in = {{{batches}, 1, 1, {cin}}}, filter = "
                    f"{{{cout}, 1, 1, {cin}}}, out = {{{batches}, 1, 1, {cout}}};\n")
        else:
            dw = call.function == "th_dw_conv_s4"
            ptype = "th_dw_conv_params" if dw else "th_conv_params"
            fields = (f"{base.input_offset}, {base.output_offset}, "
                      + (f"{base.ch_mult}, " if dw else "")
                      + f"{{{base.stride_h}, {base.stride_w}}}, "
                      f"{{{base.pad_top}, {base.pad_left}}}, "
                      f"{{{base.dilation_h}, {base.dilation_w}}}, {act}")  # fmt: skip
            head = (f"    static const {ptype} params = {{{fields}}};\n"
                    f"    static const th_dims in = {self.dims4(x)}, filter = "
                    f"{{{', '.join(map(str, shape))}}}, out = {self.dims4(out)};\n")
        return (f"{self.context(call.op)}\n" + head
                + f"    static const th_per_channel_quant quant = {{{mult}, {shift}}};\n"
                f"    return {call.function}(&ctx, &params, &quant, &in, "
                f"{self.pointer(x, 'int8_t')}, &filter, {w}, "
                f"{self.pointer(bias, 'int32_t')}, &out, "
                f"{self.pointer(out, 'int8_t', const=False)});")

    def fc_w16(self, call: Call, p: FullyConnectedParams, i: int, batches: int) -> str:
        """A FULLY_CONNECTED through th_fc_s8_w16: int16 weights and the input offset folded
        into the bias, both made here (codegen/widen.py)."""
        w = np.asarray(self.graph.tensors[call.inputs[1]].data).astype(np.int8)
        w = w.reshape(w.shape[0], -1)
        cout, cin = w.shape
        bias_t = call.inputs[2]
        bias = None if bias_t is None else np.asarray(self.graph.tensors[bias_t].data)
        if call.per_channel:
            mult, shift = call.arrays["multiplier"], call.arrays["shift"]
        else:
            mult, shift = np.asarray(p.out_multiplier[:1]), np.asarray(p.out_shift[:1])
        fast = fc_fast_ok(cin, bias, mult, shift)
        weights = self.array(f"op{i}_weights_s16", fc_w16_weights(w))
        bias_name = self.array(f"op{i}_bias_w16", fc_w16_bias(bias, w, p.input_offset))
        step = int(bool(call.per_channel))
        mult_name = self.array(f"op{i}_multiplier", np.asarray(mult, np.int32))
        shift_name = self.array(f"op{i}_shift", np.asarray(shift, np.int32))
        table = "NULL"
        if step and fast and cout >= FC_W16_TABLE_MIN_COUT:  # the row loop's constants
            table = self.array(f"op{i}_rq_table", fc_w16_rq_table(mult, shift, p.output_offset))
        return (f"    static const th_fc_w16_params params = {{{batches}, {cin}, {cout}, "
                f"{p.output_offset}, {{{p.act_min}, {p.act_max}}}, {step}, {int(fast)}, "
                f"{table}}};\n"
                f"    return {FC_W16_FUNCTION}(&params, {mult_name}, {shift_name}, "
                f"{self.pointer(call.inputs[0], 'int8_t')}, {weights}, {bias_name}, "
                f"{self.pointer(call.outputs[0], 'int8_t', const=False)});")

    def body(self, call: Call, source_op: int) -> tuple[str, str]:
        """(C statements of op_<index>(), a note for its comment)."""
        p, i = call.params, source_op  # arrays and comments use the user's op numbers
        x, out = call.inputs[0], call.outputs[0]
        y = self.pointer(out, "int8_t", const=False)
        if call.function in _S16X8:
            return self.s16x8(call, i), ""
        if isinstance(p, Int4Params):
            return self.s4(call, i), ""
        if isinstance(p, ConvParams):
            return self.conv(call, p, i)
        if isinstance(p, FullyConnectedParams):
            w_shape = self.graph.tensors[call.inputs[1]].shape
            cout, cin = int(w_shape[0]), int(w_shape[1])
            batches = int(np.prod(self.graph.tensors[x].shape)) // cin
            if call.op in self.widen:
                return self.fc_w16(call, p, i, batches), FC_W16_FUNCTION
            block = FC_BLOCK if self.interleaved else None
            w = self.pointer(call.inputs[1], "int8_t", layout_block=block)
            b = self.pointer(call.inputs[2], "int32_t")
            if call.per_channel:
                mult = self.array(f"op{i}_multiplier", call.arrays["multiplier"])
                shift = self.array(f"op{i}_shift", call.arrays["shift"])
                quant = (f"    static const th_per_channel_quant quant = {{{mult}, {shift}}};")
            else:
                quant = (f"    static const th_per_tensor_quant quant = "
                         f"{{{int(p.out_multiplier[0])}, {int(p.out_shift[0])}}};")  # fmt: skip
            return (f"{self.context(call.op)}\n"
                    f"    static const th_fc_params params = {{{p.input_offset}, "
                    f"{p.filter_offset}, {p.output_offset}, {{{p.act_min}, {p.act_max}}}}};\n"
                    f"{quant}\n"
                    f"    static const th_dims in = {{{batches}, 1, 1, {cin}}}, filter = "
                    f"{{{cout}, 1, 1, {cin}}}, out = {{{batches}, 1, 1, {cout}}};\n"
                    f"    return {call.function}(&ctx, &params, &quant, &in, "
                    f"{self.pointer(x, 'int8_t')}, &filter, {w}, {b}, &out, {y});"), ""
        if isinstance(p, PoolParams) and call.function == "th_maxpool_s8":
            # th_maxpool_s8_prepare's fields made here for the scratch granted (§4.4b)
            grant = self.grants.for_op(call.op)
            shapes = [tuple(int(d) for d in self.graph.tensors[t].shape) for t in (x, out)]
            prep = maxpool_prep(p, *shapes, grant.size if grant is not None else 0)
            return (f"{self.context(call.op)}\n"
                    f"    static const th_maxpool_prep prep = {{{prep_initializer(prep)}}};\n"
                    f"    return th_maxpool_s8_prepared(&ctx, &prep, "
                    f"{self.pointer(x, 'int8_t')}, {y});"), ""
        if isinstance(p, PoolParams):
            return (f"{self.context(call.op)}\n"
                    f"    static const th_pool_params params = {{{{{p.stride_h}, {p.stride_w}}}, "
                    f"{{{p.filter_h}, {p.filter_w}}}, {{{p.pad_top}, {p.pad_left}}}, "
                    f"{{{p.act_min}, {p.act_max}}}}};\n"
                    f"    static const th_dims in = {self.dims4(x)}, out = {self.dims4(out)};\n"
                    f"    return {call.function}(&ctx, &params, &in, {self.pointer(x, 'int8_t')}, "
                    f"&out, {y});"), ""
        if isinstance(p, Softmax16Params):
            exp_lut = self.array(f"op{i}_exp_lut", call.arrays["exp_lut"].astype(np.int16))
            recip_lut = self.array(f"op{i}_recip_lut",
                                   call.arrays["recip_lut"].astype(np.int16))
            return (f"    static const th_per_tensor_quant quant = {{{p.input_multiplier}, "
                    f"{p.input_left_shift}}};\n"
                    f"    static const th_shape shape = {self.shape(x)};\n"
                    f"    return th_softmax_s16(NULL, &quant, {exp_lut}, {recip_lut}, &shape, "
                    f"{self.pointer(x, 'int16_t')}, {self.pointer(out, 'int16_t', const=False)});"
                    ), ""
        if isinstance(p, SoftmaxParams):
            out_ctype = _CTYPES[np.dtype(self.graph.tensors[out].dtype)]
            return (f"    static const th_softmax_params params = {{{p.input_multiplier}, "
                    f"{p.input_left_shift}, {p.diff_min}}};\n"
                    f"    static const th_shape shape = {self.shape(x)};\n"
                    f"    return {call.function}(NULL, &params, &shape, "
                    f"{self.pointer(x, 'int8_t')}, {self.pointer(out, out_ctype, const=False)});"
                    ), ""
        if isinstance(p, ResidualParams):
            return self.residual(call, p, i)
        if isinstance(p, DwPwParams):
            return self.dwpw_body(call, p, i)
        if isinstance(p, AddParams) and call.function in ADD_PREPARED:
            # the kernel's per-call set-up made here (th_add_s8_prepare's fields, §4.4b)
            a, b2 = call.inputs[0], call.inputs[1]
            dims = [tuple(int(d) for d in self.graph.tensors[t].shape) for t in (a, b2, out)]
            sub = call.function.startswith("th_sub")
            prep = add_prep(p, *collapse_broadcast(*dims), sub)
            t1 = t2 = "NULL"
            if call.function.endswith("_tables") and not (
                    self.sep and prep["fast"] and _sep_runs(prep, True, p, sub)):
                t1 = self.array(f"op{i}_table1", np.asarray(call.arrays["table1"], np.int32))
                t2 = self.array(f"op{i}_table2", np.asarray(call.arrays["table2"], np.int32))
            tabled = call.function.endswith("_tables")
            sep = add_sep(p, call.function.startswith("th_sub")) if self.sep and \
                prep["fast"] and _sep_runs(prep, tabled, p, sub) else None  # fmt: skip
            # Every field named, 0 where unused: a banded call's prep is built at run time
            # (_compact_steps), and GCC clears an incompletely initialized struct with a call
            # of memset first (188 B: ~110 instructions a call; ResNet-8's 12 ADD bands)
            tail = ", .sep = NULL, .sep_mode = 0"
            go = {"go": 0, "go_n": 0, "go_rows": 0}
            if sep is not None:  # the kernel then never reads the input tables (t1, t2)
                t1 = t2 = "NULL"
                tail = f", .sep = {self.array(f'op{i}_sep', sep[0])}, .sep_mode = {sep[1]}"
                go = add_go(prep, False)  # its loop chosen here (0: the kernel chooses)
            tail += "".join(f", .{k} = {v}" for k, v in go.items())
            return (f"    static const th_add_prep prep = {{.t1 = {t1}, .t2 = {t2}, "
                    f"{prep_initializer(prep)}{tail}}};\n"
                    f"    return th_add_s8_prepared(&prep, {self.pointer(a, 'int8_t')}, "
                    f"{self.pointer(b2, 'int8_t')}, {self.pointer(out, 'int8_t', const=False)});"
                    ), ""
        if isinstance(p, AddParams):
            a, b2 = call.inputs[0], call.inputs[1]
            head, tables = self.add_params(call, p, i, "params", "quant")
            head += self.binary_shapes(a, b2, out)
            et = "int16_t" if call.function in ("th_add_s16", "th_sub_s16") else "int8_t"
            return (head + f"    return {call.function}(NULL, &params, &quant, {tables}&s1, "
                    f"{self.pointer(a, et)}, &s2, {self.pointer(b2, et)}, &so, "
                    f"{self.pointer(out, et, const=False)});"), ""
        if isinstance(p, MulParams) and call.function == "th_mul_s8":
            # th_mul_s8_prepare's fields made here (§4.4b)
            a, b2 = call.inputs[0], call.inputs[1]
            dims = [tuple(int(d) for d in self.graph.tensors[t].shape) for t in (a, b2, out)]
            prep = mul_prep(p, *collapse_broadcast(*dims))
            return (f"    static const th_mul_prep prep = {{{prep_initializer(prep)}}};\n"
                    f"    return th_mul_s8_prepared(&prep, {self.pointer(a, 'int8_t')}, "
                    f"{self.pointer(b2, 'int8_t')}, {self.pointer(out, 'int8_t', const=False)});"
                    ), ""
        if isinstance(p, MulParams):
            a, b2 = call.inputs[0], call.inputs[1]
            et = "int16_t" if call.function == "th_mul_s16" else "int8_t"
            return (f"    static const th_mul_params params = {{{p.input1_offset}, "
                    f"{p.input2_offset}, {p.output_offset}, "
                    f"{{{p.activation_min}, {p.activation_max}}}}};\n"
                    f"    static const th_per_tensor_quant quant = {{{p.output_multiplier}, "
                    f"{p.output_shift}}};\n"
                    f"{self.binary_shapes(a, b2, out)}"
                    f"    return {call.function}(NULL, &params, &quant, &s1, "
                    f"{self.pointer(a, et)}, &s2, {self.pointer(b2, et)}, "
                    f"&so, {self.pointer(out, et, const=False)});"), ""
        if isinstance(p, MinMaxParams | PreluParams):
            a, b2 = call.inputs[0], call.inputs[1]
            shapes = (f"    static const th_shape s1 = {self.shape(a)}, s2 = {self.shape(b2)}, "
                      f"so = {self.shape(out)};\n")  # fmt: skip
            args = (f"&s1, {self.pointer(a, 'int8_t')}, &s2, {self.pointer(b2, 'int8_t')}, "
                    f"&so, {y});")  # fmt: skip
            if isinstance(p, MinMaxParams):
                return f"{shapes}    return {call.function}(NULL, {args}", ""
            return (f"    static const th_prelu_params params = {{{p.input_offset}, "
                    f"{p.alpha_offset}, {p.output_offset}, {p.multiplier_pos}, {p.shift_pos}, "
                    f"{p.multiplier_neg}, {p.shift_neg}}};\n{shapes}"
                    f"    return th_prelu_s8(NULL, &params, {args}"), ""
        if isinstance(p, FillParams):
            size = self.graph.tensors[out].size_bytes
            return f"    return th_fill_s8(NULL, {self.pointer(x, 'int8_t')}, {size}, {y});", ""
        if isinstance(p, LutParams):
            table = self.array(f"op{i}_table", np.asarray(call.arrays["table"], np.int8))
            size = self.graph.tensors[x].size_bytes
            return (f"    return th_lut_s8(NULL, {table}, {size}, {self.pointer(x, 'int8_t')}, "
                    f"{y});"), ""
        if isinstance(p, Sigmoid16Params):
            table = self.array("sigmoid_table", call.arrays["sigmoid_table"].astype(np.uint16))
            n = int(np.prod(self.graph.tensors[x].shape))
            return (f"    static const th_per_tensor_quant quant = {{{p.input_multiplier}, "
                    f"{p.input_left_shift}}};\n"
                    f"    return {call.function}(NULL, &quant, {table}, {n}, "
                    f"{self.pointer(x, 'int16_t')}, {self.pointer(out, 'int16_t', const=False)});"
                    ), ""
        if isinstance(p, RequantizeParams):
            n = int(np.prod(self.graph.tensors[x].shape))
            src, dst = (_CTYPES[np.dtype(self.graph.tensors[t].dtype)] for t in (x, out))
            return (f"    static const th_requantize_params params = {{{p.input_zero_point}, "
                    f"{p.output_zero_point}}};\n"
                    f"    static const th_per_tensor_quant quant = {{{p.multiplier}, {p.shift}}};\n"
                    f"    return {call.function}(NULL, &params, &quant, {n}, "
                    f"{self.pointer(x, src)}, {self.pointer(out, dst, const=False)});"), ""
        if isinstance(p, QuantizeParams | DequantizeParams):
            n = int(np.prod(self.graph.tensors[x].shape))
            q = isinstance(p, QuantizeParams)
            src, dst = ("float", "int8_t") if q else ("int8_t", "float")
            return (f"    static const th_affine_params params = {{{float(np.float32(p.scale))!r}f,"
                    f" {p.zero_point}}};\n"
                    f"    return {call.function}(NULL, &params, {n}, {self.pointer(x, src)}, "
                    f"{self.pointer(out, dst, const=False)});"), ""
        if isinstance(p, MeanParams):  # MEAN, SUM, REDUCE_MAX (which takes no quant)
            mask = sum(1 << a for a in p.axes)
            rescales = call.function != "th_reduce_max_s8"
            quant = (f"    static const th_per_tensor_quant quant = {{{p.multiplier}, "
                     f"{p.shift}}};\n") if rescales else ""
            return (f"    static const th_mean_params params = {{{p.input_zero_point}, "
                    f"{p.output_zero_point}, {mask}u}};\n{quant}"
                    f"    static const th_shape si = {self.shape(x)}, "
                    f"so = {self.shape(out)};\n"
                    f"    return {call.function}(NULL, &params, {'&quant, ' if rescales else ''}"
                    f"&si, {self.pointer(x, 'int8_t')}, &so, {y});"), ""
        if isinstance(p, SvdfParams):
            wf, wt, bias, state = call.inputs[1:5]
            filters = p.units * p.rank
            return (f"{self.context(call.op)}\n"
                    f"    static const th_svdf_params params = {{{p.input_offset}, "
                    f"{p.output_offset}, {p.rank}}};\n"
                    f"    static const th_svdf_quant quant = {{{p.feature_multiplier}, "
                    f"{p.feature_shift}, {p.time_multiplier}, {p.time_shift}}};\n"
                    f"    static const th_dims in = {{{p.batches}, 1, 1, {p.input_size}}}, "
                    f"wf = {{{filters}, 1, 1, {p.input_size}}}, "
                    f"wt = {{{filters}, 1, 1, {p.memory}}}, out = {{{p.batches}, 1, 1, "
                    f"{p.units}}};\n"
                    f"    return th_svdf_s8(&ctx, &params, &quant, &in, "
                    f"{self.pointer(x, 'int8_t')}, &wf, {self.pointer(wf, 'int8_t')}, &wt, "
                    f"{self.pointer(wt, 'int16_t')}, {self.pointer(bias, 'int32_t')}, "
                    f"{self.pointer(state, 'int16_t', const=False)}, &out, {y});"), ""
        if isinstance(p, LstmParams):
            hidden, cell = call.inputs[1:3]
            w_in = self.array(f"op{i}_input_weights", call.arrays["input_weights"])
            w_rec = self.array(f"op{i}_recurrent_weights", call.arrays["recurrent_weights"])
            bias = self.array(f"op{i}_bias", call.arrays["bias"])
            table = self.array("sigmoid_table", call.arrays["sigmoid_table"].astype(np.uint16))
            csv = lambda v: ", ".join(map(str, v))  # noqa: E731
            return (f"    static const th_lstm_params params = {{{p.batches}, {p.time_steps}, "
                    f"{p.input_size}, {p.state_size}, {int(p.time_major)}, {p.input_offset}, "
                    f"{p.hidden_offset}, {p.hidden_zero_point}, {p.cell_scale_power}, "
                    f"{p.cell_clip}}};\n"
                    f"    static const th_lstm_quant quant = {{{{{csv(p.input_multipliers)}}}, "
                    f"{{{csv(p.input_shifts)}}}, {{{csv(p.recurrent_multipliers)}}}, "
                    f"{{{csv(p.recurrent_shifts)}}}, {p.forget_cell_multiplier}, "
                    f"{p.forget_cell_shift}, {p.input_cell_multiplier}, {p.input_cell_shift}, "
                    f"{p.hidden_multiplier}, {p.hidden_shift}}};\n"
                    f"    return th_lstm_s8(NULL, &params, &quant, {self.pointer(x, 'int8_t')}, "
                    f"{w_in}, {w_rec}, {bias}, {table}, "
                    f"{self.pointer(hidden, 'int8_t', const=False)}, "
                    f"{self.pointer(cell, 'int16_t', const=False)}, {y});"), ""
        if isinstance(p, PadParams):
            rank = len(p.before)
            before = ", ".join(map(str, list(p.before) + [0] * (MAX_RANK - rank)))
            after = ", ".join(map(str, list(p.after) + [0] * (MAX_RANK - rank)))
            return self.reshaping("th_pad_s8", f"th_pad_params params = {{{p.pad_value}, "
                                  f"{{{before}}}, {{{after}}}}}", x, out), ""
        if isinstance(p, ConcatParams):
            ins = [t for t in call.inputs if t is not None]
            shapes = ", ".join(self.shape(t) for t in ins)
            ptrs = ", ".join(self.pointer(t, "int8_t") for t in ins)
            return (f"    static const th_concat_params params = {{{p.axis}, {len(ins)}}};\n"
                    f"    static const th_shape shapes[{len(ins)}] = {{{shapes}}};\n"
                    f"    const int8_t *const inputs[{len(ins)}] = {{{ptrs}}};\n"
                    f"    static const th_shape so = {self.shape(out)};\n"
                    f"    return th_concat_s8(NULL, &params, shapes, inputs, &so, {y});"), ""
        if isinstance(p, TransposeParams):
            perm = list(p.perm) + list(range(len(p.perm), MAX_RANK))
            return self.reshaping("th_transpose_s8", f"th_transpose_params params = "
                                  f"{{{{{', '.join(map(str, perm))}}}}}", x, out), ""
        if isinstance(p, StridedSliceParams):
            rank = len(p.begin)
            begin = list(p.begin) + [0] * (MAX_RANK - rank)
            stride = list(p.stride) + [1] * (MAX_RANK - rank)
            count = list(p.count) + [1] * (MAX_RANK - rank)
            so = f"{{{rank}, {{{', '.join(map(str, count))}}}}}"
            return self.reshaping("th_strided_slice_s8", f"th_strided_slice_params params = "
                                  f"{{{{{', '.join(map(str, begin))}}}, "
                                  f"{{{', '.join(map(str, stride))}}}}}", x, out, so), ""
        moved = self.movement(call, i)
        if moved is not None:
            return moved, ""
        if isinstance(p, CopyParams):
            src, dst = self.plan.tensor_offset(x), self.plan.tensor_offset(out)
            if src == dst:
                return "    return TH_OK;", "aliased by the plan: no code"
            n = self.graph.tensors[out].size_bytes
            return f"    memmove(arena + {dst}, arena + {src}, {n});\n    return TH_OK;", ""
        raise TinyhostError(f"op {i}: the compiled backend has no template for {call.function}")


# Integer literals of a generated body (not digits of identifiers or floats, not array
# sizes): the values a band's call may differ in from another band's of the same op.
_LITERAL = re.compile(r"(?<![\w.\[])-?\d+(?![\w.])")
_COMMENT = re.compile(r"\s*/\*.*?\*/", re.S)
_ARG_TYPES = (("int8_t", -(1 << 7), (1 << 7) - 1), ("uint8_t", 0, (1 << 8) - 1),
              ("int16_t", -(1 << 15), (1 << 15) - 1), ("uint16_t", 0, (1 << 16) - 1),
              ("int32_t", -(1 << 31), (1 << 31) - 1))  # fmt: skip


def _compact_steps(ops: list[dict]) -> tuple[list[dict], list[dict]]:
    """A patched model's steps as (functions, steps): the steps whose bodies differ only in
    integer literals (the bands of one op and kernel variant; the stage's views; its moves of
    kept rows) share one function, which takes its step's values from a row of a `static
    const` table (`row`: the row's index, passed by the invoke; equal rows stored once), so
    the code grows with the distinct calls, not with the bands. A declaration with a value
    from the table is built at run time (no longer `static`). Every step stays one entry of
    the invoke's table, so profiles, marks, fault injection and guards see the same steps as
    with one function per step."""
    groups: dict[tuple[object, str], list[int]] = {}
    stripped = [_COMMENT.sub("", op["body"]) for op in ops]
    for k, (op, body) in enumerate(zip(ops, stripped, strict=True)):
        groups.setdefault((op["scope"], _LITERAL.sub("#", body)), []).append(k)
    functions: list[dict] = []
    steps: list[dict] = [{}] * len(ops)
    names: set[str] = set()
    for (scope, _), members in groups.items():
        first = ops[members[0]]
        values = [[int(m.group()) for m in _LITERAL.finditer(stripped[k])] for k in members]
        varying = [j for j in range(len(values[0])) if len({v[j] for v in values}) > 1]
        _, lo, hi = _ARG_TYPES[-1]
        if len(members) == 1 or any(not lo <= v[j] <= hi for v in values for j in varying):
            for k in members:  # a function of its own (a value no int32_t table holds)
                functions.append({**ops[k], "body": f"    (void)row;\n{ops[k]['body']}",
                                  "param": "uint32_t row",
                                  "title": "patched stage" if scope == "patch" else None})
                steps[k] = {"function": ops[k]["function"], "row": 0}
                names.add(ops[k]["function"])
            continue
        # a column equal to an earlier one in every row (a band's length in each of an
        # ADD's counts) read from that one: fewer bytes a row
        keys = {j: tuple(v[j] for v in values) for j in varying}
        columns = list(dict.fromkeys(keys.values()))
        column = {j: columns.index(key) for j, key in keys.items()}
        table = list(zip(*columns, strict=True)) if columns else [()] * len(members)
        unique = list(dict.fromkeys(table))
        base = "patch_step" if scope == "patch" else f"op_{scope}_bands"
        name = next(n for n in (f"{base}{'' if i == 0 else f'_{i}'}" for i in range(99))
                    if n not in names)  # fmt: skip
        names.add(name)
        kinds = " / ".join(sorted({ops[k]["kind"] for k in members}))
        note = re.sub(r"^band \d+ of \d+(; )?", "", first["note"]) if scope != "patch" else ""
        rows = (f"{len(unique)} distinct rows of {len(columns)} values" if varying
                else "the same code")
        shown = "; ".join(n for n in (note, f"{len(members)} steps, {rows}") if n)
        functions.append({"index": first["index"], "kind": kinds, "function": name,
                          "param": "uint32_t row", "note": shown,
                          "title": "patched stage" if scope == "patch" else None,
                          "body": _template_body(stripped[members[0]], column, unique)})
        for k, row in zip(members, table, strict=True):
            steps[k] = {"function": name, "row": unique.index(row)}
    return functions, steps


def _index_type(largest: int) -> str:
    return "uint8_t" if largest < 256 else "uint16_t"


def _row_table(rows: list[int]) -> str:
    """One of the invoke's per-step tables (function, row), 16 a line."""
    lines = [", ".join(f"{r}u" for r in rows[k : k + 16]) for k in range(0, len(rows), 16)]
    return ",\n".join("    " + line for line in lines)


def _split_static(line: str) -> list[str]:
    """A `static const T a = {...}, b = {...};` line whose declarators read the table row:
    those that do built at run time (`const`), the others kept `static const`."""
    indent, rest = line[: len(line) - len(line.lstrip())], line.lstrip()[len("static const "):]
    ctype, _, declarators = rest.rstrip(";").partition(" ")
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(declarators):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(declarators[start:k].strip())
            start = k + 1
    parts.append(declarators[start:].strip())
    fixed = [d for d in parts if "sa[" not in d]
    built = [d for d in parts if "sa[" in d]
    out = [f"{indent}static const {ctype} {', '.join(fixed)};"] if fixed else []
    return out + [f"{indent}const {ctype} {', '.join(built)};"]


def _template_body(body: str, column: dict[int, int], rows: list[tuple[int, ...]]) -> str:
    """`body` with the varying literals (`column`: a literal's index among the literals in
    order -> its column) read from the table row `sa`, one of `rows`."""
    if not column:
        return f"    (void)row;\n{body}"
    position = iter(range(len(_LITERAL.findall(body))))

    def sub(m: re.Match[str]) -> str:
        j = next(position)
        return f"sa[{column[j]}]" if j in column else m.group()

    lines = []
    for line in _LITERAL.sub(sub, body).split("\n"):
        if "sa[" in line and line.lstrip().startswith("static const "):
            lines.extend(_split_static(line))
        else:
            lines.append(line)
    lo, hi = min(min(r) for r in rows), max(max(r) for r in rows)
    ctype = next(t for t, a, b in _ARG_TYPES if a <= lo and hi <= b)
    table = ", ".join("{" + ", ".join(map(str, r)) + "}" for r in rows)
    return (f"    static const {ctype} step_args[{len(rows)}][{len(rows[0])}] = {{{table}}};\n"
            f"    const {ctype} *const sa = step_args[row];\n" + "\n".join(lines))


def _variable_entries(graph: Graph, plan: MemoryPlan) -> list[dict]:
    """Where th_model_reset_state writes each variable tensor's reset value."""
    return [{"name": graph.tensors[t].name.replace("*/", "* /"),
             "offset": plan.tensor_offset(t), "bytes": graph.tensors[t].size_bytes,
             "value": graph.tensors[t].reset_value & 0xFF}
            for t in graph.variable_tensors() if any(t in b.tensors for b in plan.buffers)]


def _io_entries(graph: Graph, plan: MemoryPlan) -> list[dict]:
    entries = []
    for role, indices in (("input", graph.inputs), ("output", graph.outputs)):
        for t in indices:
            tensor = graph.tensors[t]
            q = tensor.quant
            quantized = q is not None and q.scale.size == 1
            dims = list(tensor.shape) + [0] * (MAX_RANK - len(tensor.shape))
            entries.append({
                "role": role, "name": tensor.name.replace("*/", "* /"),
                "offset": plan.tensor_offset(t), "bytes": tensor.size_bytes,
                "dtype": _DTYPE_CODES[np.dtype(tensor.dtype)], "rank": len(tensor.shape),
                "dims": ", ".join(map(str, dims)),
                "scale": repr(float(np.float32(q.scale[0]))) if quantized else "0.0",
                "zero_point": int(q.zero_point[0]) if quantized else 0,
            })  # fmt: skip
    return entries


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )  # fmt: skip


@dataclass(frozen=True)
class Generated:
    model_c: str
    model_h: str
    arena_bytes: int
    model_flash_bytes: int
    model_hash: int
    plan: MemoryPlan  # of folded.graph
    linked: tuple[str, ...]
    data_symbols: tuple[str, ...]
    folded: Folded
    functions: tuple[str, ...]  # every kernels_c function the model calls
    stack: StackReserve  # the firmware's stack, derived from them
    patched: Patched | None = None  # the stage run in row bands (plan/patch.py), if any
    residual_bands: tuple[tuple[int, int], ...] = ()  # (fused conv's source op, its bands)
    widened: tuple[Widened, ...] = ()  # layers stored with host-widened int16 weights
    dwpw_bands: tuple[tuple[int, int, int], ...] = ()  # (fused dw's source op, bands, rows)

    @property
    def op_order(self) -> tuple[int, ...]:
        """Execution order in the source graph's op numbers (folded PADs absent; a patched
        op once per band, its views too)."""
        p = self.patched
        return tuple(self.folded.origin[i if p is None else p.origin[i]]
                     for i in self.plan.op_order)  # fmt: skip

    def op_names(self, source: Graph) -> tuple[str, ...]:
        """The executed ops' kinds; a patched stage's say which band (and which are views)."""
        names = [source.ops[i].name for i in self.op_order]
        p = self.patched
        if p is None:
            pw = {f.dw: f.pw for f in self.folded.fused_dw_pw}
            return tuple(f"{n}+{source.ops[pw[i]].name} (op {pw[i]} fused)" if i in pw else n
                         for i, n in zip(self.op_order, names, strict=True))  # fmt: skip
        g = p.graph
        for step, i in enumerate(self.plan.op_order):
            kind = g.ops[i].kind.name
            if i in p.moves:
                names[step] = f"{kind} (band {p.band[i]}: kept halo rows moved)"
            elif i in p.views and p.band[i] is None:
                names[step] = f"{kind} ({p.tiles} bands' rows, view)"
            elif i in p.views:
                names[step] = f"{kind} (band {p.band[i]} rows, view)"
            elif p.band[i] is not None:
                names[step] += f" band {p.band[i]}/{p.tiles}"
        return tuple(names)

    def op_macs(self, source: Graph | None = None) -> tuple[int, ...] | None:
        """MACs per executed op where they differ from the source op's (None: they do not):
        a patched stage's bands; a fused depthwise -> pointwise op counts both convs."""
        if self.patched is None:
            pw = {f.dw: f.pw for f in self.folded.fused_dw_pw}
            if not pw or source is None:
                return None
            return tuple(op_macs(source, source.ops[i])
                         + (op_macs(source, source.ops[pw[i]]) if i in pw else 0)
                         for i in self.op_order)  # fmt: skip
        g = self.patched.graph
        return tuple(op_macs(g, g.ops[i]) for i in self.plan.op_order)


OPTIMIZE = ("speed", "size")


def kernel_build(board: Board, optimize: str) -> BlobTarget:
    """The kernels the firmware gets: the board's fastest build, or for `size` the portable
    C paths (no DSP variants, plain filter layout), which the firmware then compiles -Os."""
    if optimize not in OPTIMIZE:
        raise TinyhostError(f"--optimize {optimize!r}: one of {', '.join(OPTIMIZE)}")
    if optimize == "size":
        return BlobTarget(interleaved=False, dsp=False, alignment=board.arena_alignment)
    return target_for(board)


FUSE_RESIDUAL = ("auto", "on", "off")
FUSE_DW_PW = FUSE_RESIDUAL


@dataclass(frozen=True)
class _Layout:
    folded: Folded
    plan: MemoryPlan
    calls: list[Call]
    grants: ScratchGrants
    bands: dict[int, _Bands]
    dwpw: dict[int, _DwPwBands] = dataclasses.field(default_factory=dict)


def _layout(folded: Folded, options: PlanOptions) -> _Layout:
    """The unpatched plan, calls, scratch and fused ops' bands of a folded graph."""
    g = folded.graph
    plan = plan_memory(g, options=options)
    calls = lower_graph(g, "compiled")
    grants = grant_scratch(g, calls, plan, options)
    return _Layout(folded, plan, calls, grants, _residual_bands(g, calls, plan, grants, options),
                   _dwpw_bands(g, calls, plan, grants, options))  # fmt: skip


def _fused_layout(source: Graph, options: PlanOptions, fuse: str,
                  fuse_dw_pw: str = "off") -> _Layout:
    """`fuse` on: every residual ADD fused. auto: those that run in one band (no extra call:
    free), and those in several bands only where they lower the arena (ResNet's 32-row
    layer: 32 B less for 13 k more instructions, 7 conv calls instead of 1). Then
    `fuse_dw_pw` on: every depthwise -> pointwise pair fused; auto: only where the arena
    peak is: while the plan's peak op is half of a pair not fused yet, that pair is fused
    if this lowers the arena (the bands cost calls; VWW: 2 plans beyond the first)."""

    def fold(exclude: frozenset[int], dwpw: bool, exclude_dwpw: frozenset[int]) -> _Layout:
        return _layout(fold_for_compiled(source, fuse != "off", exclude, dwpw, exclude_dwpw),
                       options)  # fmt: skip

    layout = fold(frozenset(), fuse_dw_pw == "on", frozenset())
    excluded: set[int] = set()
    for f in layout.folded.fused if fuse == "auto" else ():
        if len(layout.bands[layout.folded.origin.index(f.conv)].bands) == 1:
            continue
        trial = fold(frozenset(excluded | {f.add}), fuse_dw_pw == "on", frozenset())
        if trial.grants.arena_bytes <= layout.grants.arena_bytes:
            excluded.add(f.add)
            layout = trial
    if fuse_dw_pw != "auto":
        return layout
    pairs = fold_for_compiled(source, fuse != "off", frozenset(excluded), True).fused_dw_pw
    fused: set[int] = set()
    while layout.plan.peak_op is not None:
        peak = layout.folded.origin[layout.plan.peak_op]
        d = next((f.dw for f in pairs if peak in (f.dw, f.pw) and f.dw not in fused), None)
        if d is None:
            break
        rest = frozenset(f.dw for f in pairs) - fused - {d}
        trial = fold(frozenset(excluded), True, rest)
        if trial.grants.arena_bytes >= layout.grants.arena_bytes:
            break
        fused.add(d)
        layout = trial
    return layout


def choose_fusions(source: Graph, options: PlanOptions, fuse: str,
                   fuse_dw_pw: str = "off") -> Folded:
    """The folded graph the compiled backend runs, residual ADDs and depthwise -> pointwise
    pairs fused as `fuse` and `fuse_dw_pw` say."""
    return _fused_layout(source, options, fuse, fuse_dw_pw).folded


# int8 ADD / SUB calls made as th_add_s8_prepared with their th_add_prep in flash (§4.4b;
# int8 MUL likewise: th_mul_s8_prepared).
ADD_PREPARED = ("th_add_s8", "th_sub_s8", "th_add_s8_tables", "th_sub_s8_tables")


_ADD_LUT_MIN = 512  # th_nn_add_sub_s8.c TH_ADD_LUT_MIN
_ADD_CHAN_LUT_ROWS = (224, 128)  # ... TH_ADD_CHAN_LUT_ROWS (no clamp), _CLAMP


# Instructions per channel of chan_lut's output table against the input1 values it computes
# one by one (arith/elementwise.py add_unclamped_count), measured on QEMU M4 (32 channels,
# 300 rows, random scales); the per-output costs of chan_lut's lookups and of the separable
# channel walk (sep_chan_flat: 5.7, 5.95 for sep_mode 2; rows over 64: sep_chan_t's 7.1).
_CHAN_LUT_K = ((0, 20, 43, 82, 130, 175, 226, 256), (380, 480, 800, 1000, 1240, 1410, 1510, 1560))
_CHAN_LUT_OUT, _SEP_CHAN_OUT = 3.5, (5.7, 5.7, 5.95)


def _sep_chan_cheaper(p: AddParams, subtract: bool, n: int, rows: int) -> bool:
    """A channel broadcast of `rows` rows of n: the separable walk's estimated instructions
    under chan_lut's (per-channel tables and lookups)."""
    sep = add_sep(p, subtract)
    if sep is None:
        return False
    per_out = (_SEP_CHAN_OUT[sep[1]] if n <= 64 else 7.1) - _CHAN_LUT_OUT
    k = float(np.interp(add_unclamped_count(p, subtract), *_CHAN_LUT_K))
    return rows * n * per_out < n * k


def _sep_runs(prep: dict, tables: bool, p: AddParams | None = None,
              subtract: bool = False) -> bool:
    """th_add_s8_prepared takes the separable form (th_nn_add_sub_s8.c sep_run) for this
    walk once its tables are given: a rank-1 or rank-2 walk, not a scalar broadcast from
    TH_ADD_LUT_MIN outputs (lut_run comes first) nor, with input tables, a channel
    broadcast of chan_lut's rows unless `p` is given and the separable walk is estimated
    cheaper there (_sep_chan_cheaper: then no input tables, so the kernel takes it); one
    input advancing in a row with the other constant along it, or both advancing. The
    tables are emitted only then (a wrong answer costs flash or speed, never a result: the
    kernel decides again)."""
    w = prep["walk"]
    rank, dims, st1, st2 = w["rank"], w["dims"], w["stride1"], w["stride2"]
    if rank > 2 or ((w["count1"] == 1 or w["count2"] == 1) and w["count"] >= _ADD_LUT_MIN):
        return False
    n = dims[rank - 1]
    rows = w["count"] // n
    a, b = st1[rank - 1], st2[rank - 1]
    ra, rb = (st1[0], st2[0]) if rank == 2 else (0, 0)
    if a == 1 and b == 1:
        if rows > 1 and (ra == 0 or rb == 0):
            clamped = prep["act_min"] > -128 or prep["act_max"] < 127
            return not (tables and rows >= _ADD_CHAN_LUT_ROWS[clamped]) or (
                p is not None and _sep_chan_cheaper(p, subtract, n, rows))
        return True
    if a == 0 and b == 1:
        return rows == 1 or (rb == n and ra == 1)
    return a == 1 and b == 0 and (rows == 1 or (ra == n and rb == 1))


def _entry_symbol(call: Call) -> str:
    """The kernel entry a call's body calls: an int8 ADD / SUB / MUL / MAX_POOL_2D its
    prepared entry (Model.body), any other call its function."""
    if isinstance(call.params, AddParams) and call.function in ADD_PREPARED:
        return "th_add_s8_prepared"
    if isinstance(call.params, MulParams) and call.function == "th_mul_s8":
        return "th_mul_s8_prepared"
    if isinstance(call.params, PoolParams) and call.function == "th_maxpool_s8":
        return "th_maxpool_s8_prepared"
    return call.function
_WIDEN_FUNCTIONS = ("th_conv_s8", "th_fully_connected_s8", "th_fully_connected_per_channel_s8")


def _widen_candidates(graph: Graph, calls: list[Call], target: BlobTarget,
                      optimize: str) -> dict[int, int]:
    """Ops (graph.ops indices) that may take host-widened int16 weights (codegen/widen.py)
    -> the flash each adds: FULLY_CONNECTED int8 with constant weights and bias and no filter
    offset, dense pointwise and im2col 3x3 CONV_2D (_pointwise_w16, _conv3x3_w16), under
    --optimize speed on a DSP core without Helium (whose kernels keep int8 weights)."""
    if optimize != "speed" or not target.dsp or target.mve:
        return {}
    out: dict[int, int] = {}
    for c in calls:
        if isinstance(c.params, DwPwParams) and _dwpw_w16(graph, c):  # its pointwise
            w = graph.tensors[c.inputs[3]].shape  # type: ignore[index]
            out[c.op] = conv_extra_flash(int(w[0]), int(np.prod(w[1:])))
            continue
        if c.function == "th_conv_s8" and _pointwise_w16(graph, c):
            w = graph.tensors[c.inputs[1]].shape  # type: ignore[index]
            out[c.op] = conv_extra_flash(int(w[0]), int(np.prod(w[1:])))
            continue
        if c.function == "th_conv_s8" and _conv3x3_w16(graph, c):
            w = graph.tensors[c.inputs[1]].shape  # type: ignore[index]
            out[c.op] = conv_extra_flash(int(w[0]), int(np.prod(w[1:])),
                                         _conv_table(graph, c))
            continue
        if c.function not in ("th_fully_connected_s8", "th_fully_connected_per_channel_s8"):
            continue
        p = c.params
        w, b = c.inputs[1], c.inputs[2]
        if (not isinstance(p, FullyConnectedParams) or p.filter_offset != 0 or w is None
                or graph.tensors[w].data is None
                or (b is not None and graph.tensors[b].data is None)):
            continue
        shape = graph.tensors[w].shape
        out[c.op] = fc_extra_flash(int(shape[0]), int(np.prod(shape[1:])), b is not None,
                                   c.per_channel)
    return out


def _widen_by_source(calls: list[Call], candidates: dict[int, int],
                     origin: tuple[int, ...]) -> dict[int, int]:
    """The candidates as source ops -> the flash each adds: a patched stage's op runs once
    per band on one shared weight array, so it is widened in every band or in none (a band
    left on int8 would keep the int8 array too)."""
    calls_of: dict[int, list[int]] = {}
    for c in calls:
        if c.function in _WIDEN_FUNCTIONS or isinstance(c.params, DwPwParams):
            calls_of.setdefault(origin[c.op], []).append(c.op)
    return {source: max(candidates[i] for i in ops) for source, ops in calls_of.items()
            if all(i in candidates for i in ops)}


def _pointwise_w16(graph: Graph, c: Call) -> bool:
    """th_conv_1x1_s8_w16 takes the op: a dense pointwise CONV_2D (stride 1, the output as
    large as the input, Cin a multiple of 4), constant weights and bias, neither the 8-channel
    nor the direct path of th_conv_1x1_s8 (Cin 8, Cout <= 3), which stay faster on int8."""
    op = graph.ops[c.op]
    w, b = c.inputs[1], c.inputs[2]
    if (conv_variant(graph, op) != "th_conv_1x1_s8" or w is None
            or graph.tensors[w].data is None
            or (b is not None and graph.tensors[b].data is None)):
        return False
    x, y = graph.tensors[c.inputs[0]].shape, graph.tensors[c.outputs[0]].shape  # type: ignore[index]
    p = c.params
    return (isinstance(p, ConvParams) and p.stride_h == 1 and p.stride_w == 1
            and x[1:3] == y[1:3] and x[3] % 4 == 0 and x[3] != 8 and y[3] > 3)


def _dwpw_w16(graph: Graph, c: Call) -> bool:
    """The pointwise half of a fused depthwise -> pointwise op takes th_conv_1x1_s8_w16 as
    the unfused layer would (_pointwise_w16; each band is as dense as the whole layer)."""
    assert isinstance(c.params, DwPwParams)
    parts = replace(graph, ops=dwpw_parts(graph.ops[c.op]))
    return _pointwise_w16(parts, replace(c.params.pw, op=1))


def _conv_table(graph: Graph, c: Call) -> np.ndarray | None:
    """th_conv_3x3_s8_w16's host-made requantization table for call c (None: none)."""
    p = c.params
    assert isinstance(p, ConvParams)
    w, b = c.inputs[1], c.inputs[2]
    taps = int(np.prod(graph.tensors[w].shape[1:]))  # type: ignore[index]
    bias = None if b is None else np.asarray(graph.tensors[b].data)
    return conv_rq_table(bias, c.arrays["multiplier"], c.arrays["shift"], p.output_offset,
                         taps, p.act_min, p.act_max)


def _conv3x3_w16(graph: Graph, c: Call) -> bool:
    """th_conv_3x3_s8_w16 takes the op: th_conv_3x3_s8's im2col path (Cin > 3, Cout > 3, so
    neither its small-Cin nor its direct path), constant weights and bias."""
    w, b = c.inputs[1], c.inputs[2]
    if (conv_variant(graph, graph.ops[c.op]) != "th_conv_3x3_s8" or w is None
            or graph.tensors[w].data is None
            or (b is not None and graph.tensors[b].data is None)):
        return False
    x, y = graph.tensors[c.inputs[0]].shape, graph.tensors[c.outputs[0]].shape  # type: ignore[index]
    return x[3] > 3 and y[3] > 3


def generate(graph: Graph, board: Board, name: str, arena_bytes: int | None = None,
             optimize: str = "speed", patch: PatchRequest | None = None,
             fuse_residual: str = "auto", fuse_dw_pw: str = "auto",
             compact: bool = True) -> Generated:
    """model.c and model.h for `graph` on `board` (nothing written). Residual ADDs are fused
    into their convs (codegen/fold.py) as `fuse_residual` says (_fused_layout), never in a
    patched model. Under --optimize speed, layers take host-widened int16 weights
    (codegen/widen.py) while the model fits the board's flash: all candidates first, then
    without the one adding the most flash, and so on. `compact` False: a patched stage's
    steps each in a function of their own, as before _compact_steps (for comparisons)."""
    fuse = (fuse_residual, fuse_dw_pw)
    g = _generate(graph, board, name, arena_bytes, optimize, patch, fuse, None, compact)
    while g.widened and not _budget(board, g).fits:
        extra = {w.op: w.extra_flash_bytes for w in g.widened}
        keep = drop_largest(frozenset(extra), extra)
        g = _generate(graph, board, name, arena_bytes, optimize, patch, fuse, keep, compact)
    return g


def _generate(graph: Graph, board: Board, name: str, arena_bytes: int | None,
              optimize: str, patch: PatchRequest | None, fuse: tuple[str, str],
              widen: frozenset[int] | None, compact: bool = True) -> Generated:
    """generate() with the widened layers given as source op numbers (None: every
    candidate); `fuse`: (--fuse-residual, --fuse-dw-pw)."""
    fuse_residual, fuse_dw_pw = fuse
    for flag, value in (("--fuse-residual", fuse_residual), ("--fuse-dw-pw", fuse_dw_pw)):
        if value not in FUSE_RESIDUAL:
            raise TinyhostError(f"{flag} {value!r}: one of {', '.join(FUSE_RESIDUAL)}")
    require_device_support(graph, "compiled")
    source = graph
    folded = fold_for_compiled(graph)
    graph = folded.graph
    io_max = LIMITS["TH_INTERP_MAX_MODEL_IO"]  # the protocol firmware's, th_model.h
    if max(len(graph.inputs), len(graph.outputs)) > io_max:
        raise UnsupportedModelError(
            f"{graph.source}: {len(graph.inputs)} inputs and {len(graph.outputs)} outputs "
            f"(the protocol firmware describes at most {io_max} each)"
        )
    target = kernel_build(board, optimize)
    options = PlanOptions(alignment=target.alignment, dsp=target.dsp, mve=target.mve)
    patched = None if patch is None else resolve_patch(graph, options, patch)
    if patched is None:
        layout = _fused_layout(source, options, fuse_residual, fuse_dw_pw)
        folded, plan, calls = layout.folded, layout.plan, layout.calls
        grants, bands, graph = layout.grants, layout.bands, layout.folded.graph
        dwpw = layout.dwpw
    else:
        layout = layout_patched(patched, options)
        problems = check_patched(patched, layout)
        if problems:  # a bug, not a user error: say everything
            raise TinyhostError(f"{graph.source}: the patched layout is unsafe: "
                                + "; ".join(problems))  # fmt: skip
        graph, plan = patched.graph, layout.plan
        calls = lower_graph(graph, "compiled", patched.views | patched.moves)
        grants = grant_scratch(graph, calls, plan, options)
        bands, dwpw = {}, {}
    arena = max(grants.arena_bytes, arena_bytes or 0)  # exact: the array itself is aligned
    live = _live_channel_plan(graph, calls, plan, grants)
    candidates = _widen_candidates(graph, calls, target, optimize)
    for op in (*bands, *live):  # fused residual convs, constant channels: int8 weights
        candidates.pop(op, None)
    origin = (folded.origin if patched is None
              else tuple(folded.origin[o] for o in patched.origin))  # graph op -> source op
    per_source = _widen_by_source(calls, candidates, origin)
    chosen = {op: extra for op, extra in per_source.items() if widen is None or op in widen}
    widened_calls = frozenset(c.op for c in calls if origin[c.op] in chosen)
    model = _Model(graph, plan, grants, target.interleaved, live, bands, widened_calls, dwpw)
    model.sep = target.dsp and not target.mve  # the kernel reads th_add_prep's sep there only
    by_op = {c.op: c for c in calls}
    ops = []
    called: list[str] = []
    for i in plan.op_order:
        source_op = folded.origin[i if patched is None else patched.origin[i]]
        band = None if patched is None else patched.band[i]
        function = f"op_{source_op}" + ("" if band is None else f"_band{band}")
        if patched is not None and i in patched.views:
            what = "rows" if graph.ops[i].kind is OpKind.STRIDED_SLICE else "rows joined"
            ops.append({"index": source_op, "kind": f"{graph.ops[i].name} (view)",
                        "function": f"{function}_view{i}" if band is not None else
                                    f"{function}_out",
                        "body": "    return TH_OK;", "scope": "patch",
                        "note": f"patched stage: the band's {what} in place, no code"})
            continue
        if patched is not None and i in patched.moves:
            ops.append({"index": source_op, "kind": "kept halo rows", "body": _move_rows(
                graph, plan, graph.ops[i]), "function": f"{function}_keep{i}", "scope": "patch",
                "note": "patched stage: rows the next band needs again, to the area's start"})
            continue
        body, note = model.body(by_op[i], source_op)
        constant = "" if i not in live else (
            f"{live[i].channels.constant_count} of {live[i].channels.pixel.size} channels "
            "constant, computed on the host")
        shown = "; ".join(n for n in (note, constant, _folded_note(folded, source_op)) if n)
        if band is not None:
            shown = "; ".join(n for n in (f"band {band} of {patched.tiles}", shown) if n)
        ops.append({"index": source_op, "kind": graph.ops[i].name, "function": function,
                    "body": body, "note": shown, "scope": source_op})
        if i in live:
            called.append("th_expand_channels_s8")
        if i in bands:  # a fused residual conv: its variant and the ADD's kernel
            called.extend((note, by_op[i].params.add.function))  # type: ignore[union-attr]
            fused = next(f for f in folded.fused if f.conv == source_op)
            ops[-1]["note"] = (f"{note} in {len(bands[i].bands)} bands of output rows, each then "
                               f"added to the skip by {by_op[i].params.add.function} "  # type: ignore[union-attr]
                               f"(residual ADD op {fused.add} fused)")
        elif i in dwpw:  # a fused depthwise -> pointwise op: both variants
            called.extend(note.split(" + "))
            fused_pw = next(f.pw for f in folded.fused_dw_pw if f.dw == source_op)
            ops[-1]["kind"] = f"{graph.ops[i].name}+CONV_2D"
            ops[-1]["note"] = (f"{note} in {len(dwpw[i].bands)} bands of {dwpw[i].rows} "
                               f"depthwise output rows (pointwise CONV_2D op {fused_pw} fused)")
        elif note.startswith("th_"):  # a conv variant called directly (the note names it)
            called.append(note)
        elif by_op[i].function not in ("copy", "th_conv_s8", "th_dw_conv_s8"):
            called.append(_entry_symbol(by_op[i]))
    if patched is not None and compact:  # one function per distinct call, not per band
        functions, steps = _compact_steps(ops)
    else:
        functions = [{**op, "param": "void"} for op in ops]
        steps = [{"function": op["function"], "row": 0} for op in ops]
    context = {
        "name": name, "board": board.name, "arena": arena, "plan_arena": plan.arena_bytes,
        "tail": grants.tail_bytes, "n_ops": len(ops), "arrays": model.arrays,
        "functions": functions, "steps": steps, "rows": patched is not None and compact,
        "row_type": _index_type(max(st["row"] for st in steps)),
        "row_table": _row_table([st["row"] for st in steps]),
        "function_type": _index_type(len(functions) - 1),
        "function_table": _row_table([next(k for k, f in enumerate(functions)
                                           if f["function"] == st["function"])
                                      for st in steps]),
        "io": _io_entries(graph, plan), "n_inputs": len(graph.inputs),
        "n_outputs": len(graph.outputs), "io_defines": io_quant_defines(graph),
        "variables": _variable_entries(graph, plan),
    }  # fmt: skip
    env = _environment()
    body = env.get_template("compiled_model.c.j2").render(**context)
    model_hash = zlib.crc32(body.encode()) & 0xFFFFFFFF
    header = env.get_template("compiled_model.h.j2").render(hash=model_hash, **context)
    linked = tuple(sorted(set(called)))
    # The stack: that of every kernel function the model calls (dispatchers included).
    functions = tuple(sorted(set(called) | {c.function for c in calls}
                             - {"th_conv_add_s8", "th_dw_pw_s8"}))
    counts = tuple((folded.origin[i], len(b.bands)) for i, b in sorted(bands.items()))
    dwpw_counts = tuple((folded.origin[i], len(b.bands), b.rows) for i, b in sorted(dwpw.items()))
    return Generated(body, header, arena, sum(a.nbytes for a in model.arrays), model_hash,
                     plan, linked, tuple(a.name for a in model.arrays), folded,
                     functions, stack_reserve(board, functions), patched, counts,
                     tuple(Widened(op, source.ops[op].name, extra,
                                   sum(1 for i in widened_calls if origin[i] == op))
                           for op, extra in sorted(chosen.items())), dwpw_counts)  # fmt: skip


def _move_rows(graph: Graph, plan: MemoryPlan, op: Op) -> str:
    """A patched stage's move of kept rows (a STRIDED_SLICE of whole rows): one memmove
    (views use it too; memcpy where the rows are apart would be faster, by ~200 instructions
    a move on newlib-nano, but adds a second copy routine: 308 B, more than ResNet-8's eleven
    bands save)."""
    src, out = op.inputs[0], op.outputs[0]
    shape = graph.tensors[src].shape
    begin_row = int(np.asarray(graph.tensors[op.inputs[1]].data)[1])
    src_off = plan.tensor_offset(src) + begin_row * shape[2] * shape[3]
    dst_off = plan.tensor_offset(out)
    if src_off == dst_off:
        return "    return TH_OK; /* already in place */"
    n = graph.tensors[out].size_bytes
    return f"    memmove(arena + {dst_off}, arena + {src_off}, {n});\n    return TH_OK;"


def _folded_note(folded: Folded, op: int) -> str:
    pads = [f.pad for f in folded.pads if f.conv == op]
    return f"PAD op {pads[0]} folded into its padding" if pads else ""


def _model_name(graph: Graph, name: str | None) -> str:
    return name or Path(graph.source).stem or graph.name or "model"


def fit(graph: Graph, board: Board, *, arena_bytes: int | None = None,
        name: str | None = None, optimize: str = "speed", patch: PatchRequest | None = None,
        fuse_residual: str = "auto", fuse_dw_pw: str = "auto", kernel_paths: str = "used",
        **options: object) -> Budget:
    """What `convert --backend compiled` would need on `board` (nothing written). The code
    estimate counts whole kernels, as if `kernel_paths` were "all" (an upper bound)."""
    _refuse_interpreter_options(options)
    del kernel_paths
    g = generate(graph, board, _model_name(graph, name), arena_bytes, optimize, patch,
                 fuse_residual, fuse_dw_pw)
    return _budget(board, g)


def _budget(board: Board, g: Generated) -> Budget:
    return budget_for(board, g.arena_bytes, g.model_flash_bytes, kernels=g.functions)


def _refuse_interpreter_options(options: dict) -> None:
    if options.get("all_ops"):
        raise TinyhostError("--all-ops is the interpreter's: the compiled backend links exactly "
                            "the kernels its model calls")  # fmt: skip
    if options.get("load_capacity"):
        raise TinyhostError("--load-capacity is the interpreter's: a compiled model cannot be "
                            "replaced over the link")  # fmt: skip


def convert(graph: Graph, board: Board, out_dir: Path | str, *, arena_bytes: int | None = None,
            name: str | None = None, optimize: str = "speed", patch: PatchRequest | None = None,
            fuse_residual: str = "auto", fuse_dw_pw: str = "auto", kernel_paths: str = "used",
            **options: object) -> ConvertResult:
    """Write model.c, model.h, model.cmake and model.json for `graph` (int8) and `board`.
    kernel_paths "used": the kernels keep only the paths the model takes (codegen/prune.py);
    "all": every path."""
    if kernel_paths not in KERNEL_PATHS:
        raise TinyhostError(f"--kernel-paths {kernel_paths!r}: one of {', '.join(KERNEL_PATHS)}")
    _refuse_interpreter_options(options)
    out = Path(out_dir)
    model_name = _model_name(graph, name)
    g = generate(graph, board, model_name, arena_bytes, optimize, patch, fuse_residual,
                 fuse_dw_pw)
    budget = _budget(board, g)
    require_fits(budget, graph.source)
    out.mkdir(parents=True, exist_ok=True)  # only now: a refused model leaves nothing behind
    (out / "model.c").write_text(g.model_c)
    (out / "model.h").write_text(g.model_h)
    cmake = (_CMAKE.format(name=model_name) + (_CMAKE_SIZE if optimize == "size" else "")
             + stack_cmake(g.stack.bytes if g.stack.derived else None))  # fmt: skip
    (out / "model.cmake").write_text(cmake + cmake_paths(repo_root()))
    paths = (record_paths(out, kernel_build(board, optimize), repo_root())
             if kernel_paths == "used" else keep_all(repo_root(), "--kernel-paths all"))
    (out / CONFIG_HEADER).write_text(config_header(paths, model_name, board.name))
    _write_export(out, board, model_name, g, kernel_build(board, optimize).interleaved)
    info = {
        "model": model_name, "source": graph.source, "backend": "compiled", "board": board.name,
        "arena_bytes": g.arena_bytes, "plan_arena_bytes": g.plan.arena_bytes,
        "plan_lower_bound_bytes": g.plan.lower_bound_bytes,
        "model_flash_bytes": g.model_flash_bytes, "model_hash": g.model_hash,
        "optimize": optimize, "kernel_paths": paths.to_json(),
        "stack_reserve_bytes": g.stack.bytes, "stack_reserve_derived": g.stack.derived,
        "linked": list(g.linked), "op_order": list(g.op_order),
        "ops": [graph.ops[i].name for i in g.op_order],
        "folded": [{"op": f.pad, "kind": graph.ops[f.pad].name, "into": f.conv}
                   for f in g.folded.pads],
        "fuse_residual": fuse_residual,
        "int16_weights": [{"op": w.op, "kind": w.kind, "extra_flash_bytes": w.extra_flash_bytes,
                           "calls": w.calls} for w in g.widened],
        "int16_weights_extra_flash_bytes": sum(w.extra_flash_bytes for w in g.widened),
        "fused_residual": [{"conv": f.conv, "add": f.add, "bands": dict(g.residual_bands)[f.conv]}
                           for f in g.folded.fused],
        "fuse_dw_pw": fuse_dw_pw,
        "fused_dw_pw": [{"depthwise": f.dw, "pointwise": f.pw,
                         "bands": next(n for d, n, _ in g.dwpw_bands if d == f.dw),
                         "band_rows": next(r for d, _, r in g.dwpw_bands if d == f.dw)}
                        for f in g.folded.fused_dw_pw],
        "patch": None if g.patched is None else {
            "split_op": g.folded.origin[g.patched.stage[-1]], "tiles": g.patched.tiles,
            "request": "auto" if patch is None or patch.tiles is None else str(patch.tiles),
            "max_overhead": None if patch is None else patch.max_overhead,
            "min_saving": None if patch is None else patch.min_saving,
            "input_preserved": False},
        **io_quantization(graph),
    }  # fmt: skip
    (out / "model.json").write_text(json.dumps(info, indent=2) + "\n")
    return ConvertResult(
        backend="compiled", board=board.name, out_dir=out, model_name=model_name,
        arena_bytes=g.arena_bytes, plan=g.plan, op_order=g.op_order,
        op_names=g.op_names(graph), linked=g.linked, op_macs=g.op_macs(graph),
        model_flash_bytes=g.model_flash_bytes, model_hash=g.model_hash, load_image=None,
        load_capacity=0, budget=budget, data_symbols=g.data_symbols,
        notes=_patch_notes(g) + _widen_notes(g),
    )  # fmt: skip


def _patch_notes(g: Generated) -> tuple[str, ...]:
    p = g.patched
    if p is None:
        return ()
    ops = f"ops {g.folded.origin[p.stage[0]]}-{g.folded.origin[p.stage[-1]]}"
    return (f"patched: {ops} run in {p.tiles} row bands (arena {g.arena_bytes:,} B); the "
            "input is not preserved across an invoke (--patch off: layer by layer)",)


def _widen_notes(g: Generated) -> tuple[str, ...]:
    if not g.widened:
        return ()
    ops = ", ".join(f"op {w.op} ({w.kind})" for w in g.widened)
    extra = sum(w.extra_flash_bytes for w in g.widened)
    return (f"int16 weights prepared on the host for {ops}: +{extra} B flash",)


def _write_export(out: Path, board: Board, name: str, g: Generated, interleaved: bool) -> None:
    """Make OUT/ usable without tinyhost: headers, kernel sources, an example and README."""
    root = repo_root()
    env = _environment()
    (out / "include").mkdir(exist_ok=True)
    for header in (root / "firmware" / "model" / "th_model.h",
                   root / "firmware" / "include" / "th_profile.h",
                   root / "firmware" / "include" / "th_guard.h"):  # fmt: skip
        shutil.copy2(header, out / "include" / header.name)
    kernels = out / "kernels"
    if kernels.exists():
        shutil.rmtree(kernels)
    shutil.copytree(root / "kernels_c", kernels, ignore=shutil.ignore_patterns("CMakeLists.txt"))
    shutil.copy2(out / CONFIG_HEADER, kernels / "include" / CONFIG_HEADER)  # this model's paths
    example = out / "example"
    example.mkdir(exist_ok=True)
    main_c = env.get_template("export_main.c.j2").render(name=name)
    (example / "main.c").write_text(main_c)
    context = {"name": name, "board": board.name, "arena": g.arena_bytes,
               "model_flash": g.model_flash_bytes, "interleaved": interleaved,
               "qemu": board.qemu_machine, "cpu_flags": f"-mcpu={board.cpu} -mthumb",
               "example": main_c.split("*/", 1)[1].strip()}  # fmt: skip
    if board.qemu_machine is not None and board.flash is not None and board.ram is not None:
        shutil.copy2(Path(__file__).parent / "templates" / "export_startup_qemu.c",
                     example / "startup_qemu.c")  # fmt: skip
        (example / "qemu.ld").write_text(env.get_template("export_qemu.ld.j2").render(
            board=board.name, flash_base=board.flash.base, flash_size=board.flash.size,
            ram_base=board.ram.base, ram_size=board.ram.size))  # fmt: skip
    (out / "README.md").write_text(env.get_template("export_readme.md.j2").render(**context))


_CMAKE = """# Generated by tinyhost convert --backend compiled (model '{name}').
# Included by tinyhost's top-level CMakeLists.txt (-DMODEL_DIR=<this dir>), which sets TH_ROOT.
if(NOT DEFINED TH_ROOT)
  message(FATAL_ERROR "model.cmake is for tinyhost's CMakeLists.txt")
endif()
list(APPEND TH_APP_SOURCES "${{CMAKE_CURRENT_LIST_DIR}}/model.c")
# The layers' identical shape and parameter structs stored once.
set_source_files_properties("${{CMAKE_CURRENT_LIST_DIR}}/model.c" PROPERTIES
                            COMPILE_OPTIONS -fmerge-all-constants)
list(APPEND TH_APP_INCLUDE_DIRS "${{CMAKE_CURRENT_LIST_DIR}}" "${{TH_ROOT}}/firmware/include"
     "${{TH_ROOT}}/firmware/model")
"""

# --optimize size: the portable kernels (no DSP variants; model.c then holds plain filters)
# and every function of the model and the kernels compiled for size.
_CMAKE_SIZE = """# --optimize size: portable kernels, compiled -Os.
if(TARGET th_kernels)
  target_compile_definitions(th_kernels PUBLIC TH_NN_FORCE_PORTABLE=1)
  target_compile_options(th_kernels PRIVATE -Os)
endif()
add_compile_options(-Os)
"""
