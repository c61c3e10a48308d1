"""The interpreter's model blob: a versioned, self-describing, little-endian binary.

Layout (firmware/interpreter/BLOB_FORMAT.md is the full specification, and th_interp.c the
reader that validates every byte of it):

    header (80 B) | tensor table (48 B each) | op table (32 B each) | io list (u16 each)
    | params (i32 words) | model name | constants (each array 16-byte aligned)

Every section starts on a 16-byte boundary. Tensors live either in the arena (offset from
the memory plan) or in the constants section (offset relative to it). Kernel parameter
words are the exact integers `tinyhost.arith` derives (TFLite Micro's Prepare), so the C
side never computes a multiplier.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

from tinyhost.codegen.kernels import KERNEL_ABI, Lowered, lower_graph, scratch_needed
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph
from tinyhost.plan import MemoryPlan, PlanOptions, plan_memory
from tinyhost.plan.scratch import fast_scratch_bytes

MAGIC = b"THIB"
VERSION = 1
HEADER = struct.Struct("<4sHHIIIIHHHBBIIIIIIIIIIII")
TENSOR = struct.Struct("<BBBB6iIIfiI")
OP = struct.Struct("<HBBIIIIIHHI")
MAX_RANK = 6
MAX_OP_INPUTS = 8
ABSENT = 0xFFFF
SECTION_ALIGN = 16
CRC_START = 16  # the CRC covers every byte after the first 16 (magic, version, sizes, crc)

FLAG_INTERLEAVED = 0x1  # CONV_2D / FULLY_CONNECTED filters in the DSP kernels' layout

LOC_NONE, LOC_ARENA, LOC_CONST = 0, 1, 2
TFLAG_INTERLEAVED = 0x1

DTYPE_CODES = {
    np.dtype(np.int8): 0,
    np.dtype(np.uint8): 1,
    np.dtype(np.int16): 2,
    np.dtype(np.int32): 3,
    np.dtype(np.float32): 4,
}

assert HEADER.size == 80 and TENSOR.size == 48 and OP.size == 32


@dataclass(frozen=True)
class BlobTarget:
    """What the blob must match in the firmware that runs it."""

    interleaved: bool = False  # DSP build of kernels_c (TH_NN_FILTER_INTERLEAVED)
    dsp: bool = False  # scratch sizes of the DSP kernels
    alignment: int = 4  # arena buffer alignment (16 on MVE)


@dataclass(frozen=True)
class Blob:
    data: bytes
    arena_bytes: int
    plan: MemoryPlan
    kernels: tuple[str, ...]  # kernel names the model uses, sorted
    op_order: tuple[int, ...]
    scratch_tail_bytes: int  # scratch placed after the planned arena (kernel needs > plan)
    scratch: tuple[tuple[int, int, int], ...] = ()  # (op, arena offset, bytes) per op with any

    @property
    def crc(self) -> int:
        return struct.unpack_from("<I", self.data, 12)[0]


def _align(n: int, a: int = SECTION_ALIGN) -> int:
    return (n + a - 1) // a * a


def interleave_filter(matrix: np.ndarray, block: int) -> np.ndarray:
    """[Cout, K] int8 -> the DSP kernels' layout (th_nn_support.h, th_filter_index).

    K is zero-padded to Kp = round_up(K, 4); output channels go in blocks of `block` (the last
    may have g < block channels) and within a block the 4-tap chunks of its channels
    interleave: index(c, k) = (c // B) * B * Kp + (k // 4) * 4 * g + (c % B) * 4 + k % 4.
    """
    cout, k = matrix.shape
    kp = (k + 3) // 4 * 4
    padded = np.zeros((cout, kp), np.int8)
    padded[:, :k] = matrix
    out = np.empty(cout * kp, np.int8)
    for first in range(0, cout, block):
        g = min(block, cout - first)
        chunk = padded[first : first + g].reshape(g, kp // 4, 4).transpose(1, 0, 2)
        out[first * kp : (first + g) * kp] = chunk.reshape(-1)
    return out


def _interleave_block(kernel_name: str) -> int | None:
    if kernel_name == "conv2d_s8":
        return 2
    if kernel_name in ("fc_s8", "fc_pc_s8"):
        return 4
    return None


class _Consts:
    def __init__(self) -> None:
        self.buf = bytearray()

    def add(self, data: bytes) -> int:
        self.buf += b"\0" * (_align(len(self.buf)) - len(self.buf))
        offset = len(self.buf)
        self.buf += data
        return offset


def build_blob(
    graph: Graph,
    target: BlobTarget | None = None,
    plan: MemoryPlan | None = None,
    name: str | None = None,
) -> Blob:
    """Lower, plan and serialize `graph` (int8) into an interpreter blob."""
    target = target or BlobTarget()
    lowered = lower_graph(graph)
    if plan is None:
        # The overlaps the kernels declare (plan/overlap.py, th_nn.h "Aliasing"): RESHAPE /
        # SQUEEZE aliases, elementwise and depthwise in place, pointwise and sliding windows.
        options = PlanOptions(alignment=target.alignment, dsp=target.dsp)
        plan = plan_memory(graph, options=options)
    order = plan.op_order
    if len(graph.tensors) >= ABSENT:
        raise UnsupportedModelError(f"{graph.source}: {len(graph.tensors)} tensors (max 65534)")
    if len(graph.inputs) > 255 or len(graph.outputs) > 255:
        raise UnsupportedModelError(f"{graph.source}: more than 255 model inputs or outputs")

    # Scratch: the planner's buffer when it is large enough, else one shared tail region.
    arena = plan.arena_bytes
    tail_offset = _align(arena, target.alignment)
    tail = 0
    scratch: dict[int, tuple[int, int]] = {}
    for step, i in enumerate(order):
        need = scratch_needed(graph, lowered[i], target.dsp)
        # A kernel with a faster path for more scratch gets it where the arena has room free
        # (also one that needs none otherwise: the general depthwise with ch_mult > 1).
        fast = fast_scratch_bytes(graph, graph.ops[i], PlanOptions(dsp=target.dsp))
        if need == 0 and fast == 0:
            continue
        planned = plan.scratch_for(i)
        room = plan.free_block(step, fast, keep=planned) if fast > need else None
        if room is not None:
            scratch[i] = (room, fast)
        elif need == 0:
            continue
        elif planned is not None and planned.size >= need:
            scratch[i] = (planned.offset, planned.size)
        else:
            scratch[i] = (tail_offset, need)
            tail = max(tail, _align(need, target.alignment))
    arena_bytes = max(arena, tail_offset + tail) if tail else arena

    consts = _Consts()
    tensor_loc: dict[int, tuple[int, int, int, int]] = {}  # idx -> (loc, offset, nbytes, flags)
    for idx in _arena_tensors(plan):
        tensor_loc[idx] = (LOC_ARENA, plan.tensor_offset(idx), graph.tensors[idx].size_bytes, 0)
    for low in lowered:
        block = _interleave_block(low.kernel.name) if target.interleaved else None
        for pos, t in enumerate(low.inputs):
            if t is None or t in tensor_loc:
                continue
            tensor = graph.tensors[t]
            if tensor.data is None:
                continue
            data = np.ascontiguousarray(tensor.data).astype(tensor.dtype.newbyteorder("<"))
            flags = 0
            if pos == 1 and block is not None:
                data = interleave_filter(data.reshape(data.shape[0], -1), block)
                flags = TFLAG_INTERLEAVED
            raw = data.tobytes()
            tensor_loc[t] = (LOC_CONST, consts.add(raw), len(raw), flags)

    io: list[int] = [*graph.inputs, *graph.outputs]
    params: list[int] = []
    op_records: list[bytes] = []
    for i in order:
        low = lowered[i]
        const_offsets = {key: consts.add(arr.tobytes()) for key, arr in low.consts.items()}
        words = [const_offsets[w[1]] if isinstance(w, tuple) else int(w) for w in low.params]
        for w in words:
            if not -(1 << 31) <= w < (1 << 31):
                raise UnsupportedModelError(f"{graph.source}: op {i}: parameter {w} overflows")
        io_first, params_first = len(io), len(params)
        io.extend(ABSENT if t is None else t for t in low.inputs)
        io.extend(low.outputs)
        params.extend(words)
        s_off, s_size = scratch.get(i, (0, 0))
        op_records.append(OP.pack(
            low.kernel.kernel_id, len(low.inputs), len(low.outputs), io_first, params_first,
            len(words), s_off, s_size, i, graph.ops[i].kind.value & 0xFFFF, 0,
        ))  # fmt: skip

    tensor_records = [_tensor_record(graph, idx, tensor_loc.get(idx)) for idx in
                      range(len(graph.tensors))]  # fmt: skip
    model_name = (name if name is not None else (graph.name or "model")).encode()[:255]

    tensors_off = _align(HEADER.size)
    ops_off = _align(tensors_off + TENSOR.size * len(tensor_records))
    io_off = _align(ops_off + OP.size * len(op_records))
    params_off = _align(io_off + 2 * len(io))
    name_off = _align(params_off + 4 * len(params))
    consts_off = _align(name_off + len(model_name) + 1)
    total = _align(consts_off + len(consts.buf))

    out = bytearray(total)
    for k, rec in enumerate(tensor_records):
        out[tensors_off + k * TENSOR.size : tensors_off + (k + 1) * TENSOR.size] = rec
    for k, rec in enumerate(op_records):
        out[ops_off + k * OP.size : ops_off + (k + 1) * OP.size] = rec
    out[io_off : io_off + 2 * len(io)] = np.asarray(io, "<u2").tobytes()
    out[params_off : params_off + 4 * len(params)] = np.asarray(params, "<i4").tobytes()
    out[name_off : name_off + len(model_name)] = model_name
    out[consts_off : consts_off + len(consts.buf)] = consts.buf
    flags = FLAG_INTERLEAVED if target.interleaved else 0
    HEADER.pack_into(
        out, 0, MAGIC, VERSION, HEADER.size, total, 0, flags, arena_bytes, KERNEL_ABI,
        len(graph.tensors), len(op_records), len(graph.inputs), len(graph.outputs),
        tensors_off, ops_off, io_off, len(io), params_off, len(params), consts_off,
        len(consts.buf), name_off, len(model_name), 0, 0,
    )  # fmt: skip
    struct.pack_into("<I", out, 12, zlib.crc32(bytes(out[CRC_START:])) & 0xFFFFFFFF)
    return Blob(
        data=bytes(out),
        arena_bytes=arena_bytes,
        plan=plan,
        kernels=tuple(sorted({low.kernel.name for low in lowered})),
        op_order=tuple(order),
        scratch_tail_bytes=tail,
        scratch=tuple((i, off, size) for i, (off, size) in sorted(scratch.items())),
    )


def _arena_tensors(plan: MemoryPlan) -> list[int]:
    return sorted({t for b in plan.buffers if b.kind == "tensor" for t in b.tensors})


def _tensor_record(graph: Graph, idx: int, loc: tuple[int, int, int, int] | None) -> bytes:
    tensor = graph.tensors[idx]
    location, offset, nbytes, flags = loc if loc is not None else (LOC_NONE, 0, 0, 0)
    code = DTYPE_CODES.get(np.dtype(tensor.dtype))
    if code is None:
        if location != LOC_NONE:
            raise UnsupportedModelError(
                f"{graph.source}: tensor '{tensor.name}' has dtype {tensor.dtype}"
            )
        code = 0xFF
    shape = tuple(int(d) for d in tensor.shape)
    if len(shape) > MAX_RANK:
        raise UnsupportedModelError(
            f"{graph.source}: tensor '{tensor.name}' has rank {len(shape)} (max {MAX_RANK})"
        )
    dims = list(shape) + [0] * (MAX_RANK - len(shape))
    scale, zero_point = 0.0, 0
    q = tensor.quant
    if q is not None and q.scale.size >= 1 and not q.per_channel:
        scale, zero_point = float(np.float32(q.scale[0])), int(q.zero_point[0])
    return TENSOR.pack(code, len(shape), location, flags, *dims, offset, nbytes, scale,
                       zero_point, 0)  # fmt: skip


# --- reading back (tests, `tinyhost inspect`-style summaries) -----------------------------


@dataclass(frozen=True)
class BlobHeader:
    magic: bytes
    version: int
    header_size: int
    total_size: int
    crc: int
    flags: int
    arena_size: int
    kernel_abi: int
    n_tensors: int
    n_ops: int
    n_inputs: int
    n_outputs: int
    tensors_off: int
    ops_off: int
    io_off: int
    io_count: int
    params_off: int
    params_words: int
    consts_off: int
    consts_size: int
    name_off: int
    name_len: int
    reserved0: int
    reserved1: int


def read_header(data: bytes) -> BlobHeader:
    return BlobHeader(*HEADER.unpack_from(data, 0))


def lowered_ops(graph: Graph) -> list[Lowered]:
    return lower_graph(graph)
