"""The interpreter's kernel table: stable ids, what each op becomes, and which C it needs.

A kernel id names one interpreter adapter (firmware/interpreter/ops_*.c) and the exact
meaning of its parameter words. Ids are stable: a changed parameter layout gets a new id,
and `KERNEL_ABI` (stored in every blob) changes only when ids are removed or renumbered.

Each entry lists the `kernels_c` functions its adapter calls. An op whose kernel is not
(yet) in kernels_c is refused at conversion with UnsupportedModelError naming the op;
`available_kernels()` finds out by reading kernels_c's sources.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinyhost.arith import conv as conv_arith
from tinyhost.arith import elementwise as ew_arith
from tinyhost.arith import pool as pool_arith
from tinyhost.arith.activations import softmax_params
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind
from tinyhost.plan.scratch import RQ_PAIRS_ON_STACK, small_cin_conv_scratch

KERNEL_ABI = 1


@dataclass(frozen=True)
class KernelSpec:
    kernel_id: int
    name: str  # C adapter: th_interp_op_<name> in firmware/interpreter/<source>
    source: str
    needs: tuple[str, ...]  # kernels_c functions the adapter calls


KERNELS: dict[str, KernelSpec] = {
    k.name: k
    for k in (
        KernelSpec(1, "conv2d_s8", "ops_conv.c", ("th_conv_s8", "th_conv_s8_scratch_size")),
        KernelSpec(
            2, "dwconv2d_s8", "ops_conv.c", ("th_dw_conv_s8", "th_dw_conv_s8_scratch_size")
        ),
        KernelSpec(3, "fc_s8", "ops_fc.c", ("th_fully_connected_s8",)),
        KernelSpec(4, "fc_pc_s8", "ops_fc.c", ("th_fully_connected_per_channel_s8",)),
        KernelSpec(5, "avgpool_s8", "ops_pool.c", ("th_avgpool_s8",)),
        KernelSpec(6, "maxpool_s8", "ops_pool.c", ("th_maxpool_s8",)),
        KernelSpec(7, "softmax_s8", "ops_softmax.c", ("th_softmax_s8",)),
        KernelSpec(8, "add_s8", "ops_elementwise.c", ("th_add_s8",)),
        KernelSpec(9, "copy", "ops_copy.c", ()),
        KernelSpec(10, "sub_s8", "ops_elementwise.c", ("th_sub_s8",)),
        KernelSpec(11, "mul_s8", "ops_elementwise.c", ("th_mul_s8",)),
        KernelSpec(12, "lut_s8", "ops_lut.c", ("th_lut_s8",)),
        KernelSpec(13, "quantize_f32_s8", "ops_quantize.c", ("th_quantize_f32_s8",)),
        KernelSpec(14, "dequantize_s8_f32", "ops_quantize.c", ("th_dequantize_s8_f32",)),
        KernelSpec(15, "mean_s8", "ops_mean.c", ("th_mean_s8",)),
        KernelSpec(16, "pad_s8", "ops_shape.c", ("th_pad_s8",)),
        KernelSpec(17, "concat_s8", "ops_shape.c", ("th_concat_s8",)),
        KernelSpec(18, "transpose_s8", "ops_shape.c", ("th_transpose_s8",)),
        KernelSpec(19, "strided_slice_s8", "ops_shape.c", ("th_strided_slice_s8",)),
        KernelSpec(20, "add_tab_s8", "ops_elementwise.c", ("th_add_s8_tables",)),
        KernelSpec(21, "sub_tab_s8", "ops_elementwise.c", ("th_sub_s8_tables",)),
    )
}
KERNELS_BY_ID = {k.kernel_id: k for k in KERNELS.values()}

_DEFINITION = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(th_\w+)\s*\(", re.MULTILINE)


def kernels_c_dir() -> Path:
    from tinyhost.paths import repo_root

    return repo_root() / "kernels_c"


def defined_functions(root: Path | None = None) -> frozenset[str]:
    """Names of the th_* functions defined (at column 0) in kernels_c/**/*.c."""
    root = root or kernels_c_dir()
    names: set[str] = set()
    for path in sorted(root.rglob("*.c")):
        names.update(_DEFINITION.findall(path.read_text(errors="replace")))
    return frozenset(names)


def available_kernels(root: Path | None = None) -> frozenset[str]:
    """Kernel names whose kernels_c functions all exist."""
    defined = defined_functions(root)
    return frozenset(k.name for k in KERNELS.values() if all(f in defined for f in k.needs))


# --- op -> kernel ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Lowered:
    """One op as the interpreter runs it: kernel, tensors, parameter words, constant arrays.

    `params` are int32 words; a word given as ("const", key) is replaced by the constants
    offset of `consts[key]` when the blob is laid out.
    """

    kernel: KernelSpec
    inputs: tuple[int | None, ...]
    outputs: tuple[int, ...]
    params: tuple[int | tuple[str, str], ...]
    consts: dict[str, np.ndarray]


def _where(graph: Graph, index: int, op: Op) -> str:
    """The op, for messages that lower_graph joins under the model's file name."""
    del graph
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
                f"{_where(graph, index, op)}: tensor {t} '{_short(tensor.name)}' is "
                f"{tensor.dtype}, not int8"
            )


def _lower_conv(graph: Graph, index: int, op: Op) -> Lowered:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    p = conv_arith.conv_params(graph, op)
    dw = op.kind is OpKind.DEPTHWISE_CONV_2D
    words: list[int | tuple[str, str]] = [
        p.input_offset, p.output_offset, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
        p.dilation_h, p.dilation_w, p.act_min, p.act_max, ("const", "multiplier"),
        ("const", "shift"),
    ]  # fmt: skip
    if dw:
        words.append(p.ch_mult)
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    return Lowered(
        KERNELS["dwconv2d_s8" if dw else "conv2d_s8"],
        (op.inputs[0], op.inputs[1], bias),
        (op.outputs[0],),
        tuple(words),
        {"multiplier": p.out_multiplier.astype("<i4"), "shift": p.out_shift.astype("<i4")},
    )


def _lower_fc(graph: Graph, index: int, op: Op) -> Lowered:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    p = conv_arith.fully_connected_params(graph, op)
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    io = ((op.inputs[0], op.inputs[1], bias), (op.outputs[0],))
    head = [p.input_offset, p.filter_offset, p.output_offset, p.act_min, p.act_max]
    if p.out_multiplier.size == 1:
        return Lowered(KERNELS["fc_s8"], *io,
                       tuple(head + [int(p.out_multiplier[0]), int(p.out_shift[0])]), {})
    return Lowered(
        KERNELS["fc_pc_s8"], *io,
        tuple(head + [("const", "multiplier"), ("const", "shift")]),
        {"multiplier": p.out_multiplier.astype("<i4"), "shift": p.out_shift.astype("<i4")},
    )  # fmt: skip


def _lower_pool(graph: Graph, index: int, op: Op) -> Lowered:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    p = pool_arith.pool_params(graph, op)
    name = "avgpool_s8" if op.kind is OpKind.AVERAGE_POOL_2D else "maxpool_s8"
    words = (p.stride_h, p.stride_w, p.filter_h, p.filter_w, p.pad_top, p.pad_left,
             p.act_min, p.act_max)  # fmt: skip
    return Lowered(KERNELS[name], (op.inputs[0],), (op.outputs[0],), words, {})


def _lower_softmax(graph: Graph, index: int, op: Op) -> Lowered:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    p = softmax_params(graph, op)
    words = (p.input_multiplier, p.input_left_shift, p.diff_min)
    return Lowered(KERNELS["softmax_s8"], (op.inputs[0],), (op.outputs[0],), words, {})


# ADD/SUB with at least this many output elements take the table kernels (add_tab_s8):
# 2 KB of constants (two tables of 256 int32) buy ~90 fewer instructions per element on
# Cortex-M4 (~105 -> ~14), i.e. >= ~11.5K instructions per inference here; below, the op
# costs under ~13K instructions in all and the flash is the scarcer resource.
ADD_TABLE_MIN_ELEMENTS = 128


def _lower_add(graph: Graph, index: int, op: Op) -> Lowered:
    _require_int8(graph, index, op, [*op.inputs, op.outputs[0]])
    if op.kind is OpKind.MUL:
        m = ew_arith.mul_params(graph, op)
        words = (m.input1_offset, m.input2_offset, m.output_offset, m.output_multiplier,
                 m.output_shift, m.activation_min, m.activation_max)  # fmt: skip
        return Lowered(KERNELS["mul_s8"], (op.inputs[0], op.inputs[1]), (op.outputs[0],),
                       words, {})  # fmt: skip
    p = ew_arith.add_params(graph, op)
    words = (p.input1_offset, p.input2_offset, p.output_offset, p.left_shift,
             p.input1_multiplier, p.input1_shift, p.input2_multiplier, p.input2_shift,
             p.output_multiplier, p.output_shift, p.activation_min, p.activation_max)  # fmt: skip
    io = ((op.inputs[0], op.inputs[1]), (op.outputs[0],))
    sub = op.kind is OpKind.SUB
    if graph.tensors[op.outputs[0]].size_bytes < ADD_TABLE_MIN_ELEMENTS:
        return Lowered(KERNELS["sub_s8" if sub else "add_s8"], *io, words, {})
    table1, table2 = ew_arith.add_input_tables(p)
    return Lowered(KERNELS["sub_tab_s8" if sub else "add_tab_s8"], *io,
                   (*words, ("const", "table1"), ("const", "table2")),
                   {"table1": table1, "table2": table2})  # fmt: skip


def _lower_copy(graph: Graph, index: int, op: Op) -> Lowered:
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.size_bytes != y.size_bytes or x.dtype != y.dtype:
        raise UnsupportedModelError(
            f"{_where(graph, index, op)}: reshapes {x.dtype}{list(x.shape)} into "
            f"{y.dtype}{list(y.shape)} (sizes differ)"
        )
    return Lowered(KERNELS["copy"], (op.inputs[0],), (op.outputs[0],), (), {})


_LUT_OPS = (OpKind.LOGISTIC, OpKind.TANH, OpKind.RELU, OpKind.RELU6, OpKind.LEAKY_RELU,
            OpKind.HARD_SWISH)  # fmt: skip


def _const(graph: Graph, index: int, op: Op, position: int) -> np.ndarray:
    t = op.inputs[position] if position < len(op.inputs) else None
    data = None if t is None else graph.tensors[t].data
    if data is None:
        raise UnsupportedModelError(
            f"{_where(graph, index, op)}: operand {position} must be a constant"
        )
    return np.asarray(data)


def _lower_lut(graph: Graph, index: int, op: Op) -> Lowered:
    """Unary int8 -> int8 ops as a 256-entry table, made by the reference itself (th_nn.h)."""
    from tinyhost.reference.ops import KERNELS as REFERENCE

    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    x = np.arange(256, dtype=np.uint8).view(np.int8)  # table index = (uint8_t)x
    (table,) = REFERENCE[op.kind](graph, op, [x])
    table = np.asarray(table).reshape(-1)
    if table.dtype != np.int8 or table.size != 256:
        raise UnsupportedModelError(f"{_where(graph, index, op)}: not an int8 -> int8 function")
    return Lowered(KERNELS["lut_s8"], (op.inputs[0],), (op.outputs[0],), (("const", "table"),),
                   {"table": table})  # fmt: skip


def _f32_bits(value: float) -> int:
    return int(np.array([value], np.float32).view(np.int32)[0])


def _lower_quantize(graph: Graph, index: int, op: Op) -> Lowered:
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.dtype == np.int8:
        return _lower_lut(graph, index, op)  # int8 -> int8 requantization
    if x.dtype != np.float32 or y.dtype != np.int8:
        raise UnsupportedModelError(
            f"{_where(graph, index, op)}: QUANTIZE {x.dtype} -> {y.dtype} is not supported"
        )
    from tinyhost.arith.activations import quantize_params

    p = quantize_params(graph, op)
    return Lowered(KERNELS["quantize_f32_s8"], (op.inputs[0],), (op.outputs[0],),
                   (_f32_bits(p.scale), p.zero_point), {})  # fmt: skip


def _lower_dequantize(graph: Graph, index: int, op: Op) -> Lowered:
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.dtype != np.int8 or y.dtype != np.float32:
        raise UnsupportedModelError(
            f"{_where(graph, index, op)}: DEQUANTIZE {x.dtype} -> {y.dtype} is not supported"
        )
    from tinyhost.arith.activations import dequantize_params

    p = dequantize_params(graph, op)
    return Lowered(KERNELS["dequantize_s8_f32"], (op.inputs[0],), (op.outputs[0],),
                   (_f32_bits(p.scale), p.zero_point), {})  # fmt: skip


def _lower_mean(graph: Graph, index: int, op: Op) -> Lowered:
    from tinyhost.arith.reduce import mean_params

    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    p = mean_params(graph, op)
    mask = sum(1 << a for a in p.axes)
    words = (p.input_zero_point, p.output_zero_point, mask, p.multiplier, p.shift)
    return Lowered(KERNELS["mean_s8"], (op.inputs[0],), (op.outputs[0],), words, {})


def _rank6(values: list[int], fill: int) -> list[int]:
    return list(values) + [fill] * (6 - len(values))


def _lower_pad(graph: Graph, index: int, op: Op) -> Lowered:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    x = graph.tensors[op.inputs[0]]
    widths = _const(graph, index, op, 1).astype(np.int64).reshape(-1, 2)
    if widths.shape[0] != len(x.shape) or len(x.shape) > 6 or np.any(widths < 0):
        raise UnsupportedModelError(f"{_where(graph, index, op)}: paddings {widths.tolist()}")
    if len(op.inputs) > 2 and op.inputs[2] is not None:
        value = int(_const(graph, index, op, 2).reshape(-1)[0])
    else:
        q = graph.tensors[op.outputs[0]].quant
        value = int(q.zero_point[0]) if q is not None else 0
    words = [value, *_rank6(widths[:, 0].tolist(), 0), *_rank6(widths[:, 1].tolist(), 0)]
    return Lowered(KERNELS["pad_s8"], (op.inputs[0],), (op.outputs[0],), tuple(words), {})


def _lower_concat(graph: Graph, index: int, op: Op) -> Lowered:
    from tinyhost.ir import Activation, ConcatenationOptions
    from tinyhost.reference.ops.shape import check_same_quantization

    ins = [t for t in op.inputs if t is not None]
    _require_int8(graph, index, op, [*ins, op.outputs[0]])
    o = op.options
    assert isinstance(o, ConcatenationOptions)
    if o.activation is not Activation.NONE:
        raise UnsupportedModelError(f"{_where(graph, index, op)}: fused {o.activation.name}")
    if len(ins) > 8:
        raise UnsupportedModelError(f"{_where(graph, index, op)}: {len(ins)} inputs (max 8)")
    check_same_quantization(graph, op)
    rank = len(graph.tensors[op.outputs[0]].shape)
    axis = o.axis + rank if o.axis < 0 else o.axis
    return Lowered(KERNELS["concat_s8"], tuple(ins), (op.outputs[0],), (axis,), {})


def _lower_transpose(graph: Graph, index: int, op: Op) -> Lowered:
    _require_int8(graph, index, op, [op.inputs[0], op.outputs[0]])
    perm = [int(v) for v in _const(graph, index, op, 1).reshape(-1)]
    return Lowered(KERNELS["transpose_s8"], (op.inputs[0],), (op.outputs[0],),
                   tuple(_rank6(perm, 0)), {})  # fmt: skip


def _lower_strided_slice(graph: Graph, index: int, op: Op) -> Lowered:
    from tinyhost.ir import StridedSliceOptions
    from tinyhost.reference.ops.shape import dense_spec, slice_bounds

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
    if len(counts) > 6 or int(np.prod(counts)) != int(np.prod(graph.tensors[op.outputs[0]].shape)):
        raise UnsupportedModelError(f"{_where(graph, index, op)}: slice of {counts} elements")
    words = [*_rank6(starts, 0), *_rank6(steps, 1), *_rank6(counts, 0)]
    return Lowered(KERNELS["strided_slice_s8"], (op.inputs[0],), (op.outputs[0],), tuple(words),
                   {})  # fmt: skip


LOWERINGS: dict[OpKind, Callable[[Graph, int, Op], Lowered]] = {
    **{k: _lower_lut for k in _LUT_OPS},
    OpKind.QUANTIZE: _lower_quantize,
    OpKind.DEQUANTIZE: _lower_dequantize,
    OpKind.MEAN: _lower_mean,
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
    OpKind.ADD: _lower_add,
    OpKind.SUB: _lower_add,
    OpKind.MUL: _lower_add,
    OpKind.RESHAPE: _lower_copy,
    OpKind.SQUEEZE: _lower_copy,
}


def lower_graph(graph: Graph, available: frozenset[str] | None = None) -> list[Lowered]:
    """Every op of `graph` as a kernel call; UnsupportedModelError lists every op that is not."""
    available = available_kernels() if available is None else available
    lowered: list[Lowered] = []
    problems: list[str] = []
    for index, op in enumerate(graph.ops):
        lower = LOWERINGS.get(op.kind)
        if lower is None:
            problems.append(f"op {index} ({op.name}): no interpreter kernel for this op")
            continue
        try:
            low = lower(graph, index, op)
        except UnsupportedModelError as e:
            problems.append(str(e))
            continue
        if low.kernel.name not in available:
            missing = ", ".join(low.kernel.needs)
            problems.append(
                f"op {index} ({op.name}): its kernel ({missing}) is not in kernels_c yet"
            )
            continue
        lowered.append(low)
    if problems:
        hint = ""
        if any(p.endswith("not int8") for p in problems):
            hint = (" (the interpreter runs int8 activations only: quantize a float model with "
                    "--calib, and use the float original of a hybrid one)")  # fmt: skip
        raise UnsupportedModelError(
            f"{graph.source}: the interpreter backend cannot run {len(problems)} op(s){hint}: "
            + "; ".join(problems)
        )
    return lowered


# --- scratch sizes (mirrors of the kernels' *_scratch_size for the blob's build flavor) -----


def _ru4(k: int) -> int:
    return (k + 3) & ~3


def scratch_needed(graph: Graph, low: Lowered, dsp: bool) -> int:
    """Bytes of scratch the C kernel asks for (its *_scratch_size), for a DSP or portable build.

    The interpreter checks the blob against the real *_scratch_size at load time, so a
    mismatch here is refused on the device, never silently overrun.
    """
    name = low.kernel.name
    if name in ("conv2d_s8", "dwconv2d_s8"):
        x = graph.tensors[low.inputs[0]].shape
        w = graph.tensors[low.inputs[1]].shape
        y = graph.tensors[low.outputs[0]].shape
        sh, sw, pad_t, pad_l, dh, dw_ = (int(v) for v in low.params[2:8])  # type: ignore[arg-type]
        if name == "conv2d_s8":
            no_groups = x[3] == w[3]
            kh, kw, wc = w[1], w[2], w[3]
            if (no_groups and kh == 1 and kw == 1 and pad_t == 0 and pad_l == 0
                    and (y[1] - 1) * sh < x[1] and (y[2] - 1) * sw < x[2]):  # fmt: skip
                if not dsp:
                    return x[3]
                dense = (sh, sw) == (1, 1) and y[1:3] == x[1:3] and x[3] % 4 == 0
                pairs = y[3] // 2
                return 4 * _ru4(x[3]) + (32 * pairs if dense and pairs > RQ_PAIRS_ON_STACK else 0)
            if not (dsp and no_groups):
                return 0
            # 3x3 and general: im2col of two pixels, or the few-input-channel path
            small = small_cin_conv_scratch(wc, kh, kw, y[3], y[2], sw, dh, dw_)
            return max(4 * _ru4(kh * kw * wc), small)
        mult = int(low.params[12])  # type: ignore[arg-type]
        is_3x3 = w[1] == 3 and w[2] == 3 and mult == 1 and dh == 1 and dw_ == 1 and sh == sw
        if dsp and is_3x3 and sh in (1, 2):
            plane_w = ((y[2] - 1) * sh + 4 + 1) & ~1
            return 2 * ((y[1] - 1) * sh + 3) * plane_w  # one plane (more: fast_scratch_bytes)
        if mult != 1:
            return 0  # th_dw_conv_general_s8 reads the input directly (never in place)
        return _ru4(x[1] * x[2])
    return 0  # th_nn.h: pooling, elementwise, softmax and data movement need no scratch
