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

from tinyhost.codegen.interpreter_abi import (
    ABSENT,
    KERNEL_ABI,
    LIMITS,
    ConstRef,
    check_limits,
    pack,
)
from tinyhost.codegen.layout import CONV_BLOCK, FC_BLOCK, interleave_filter
from tinyhost.codegen.lower import Call, lower_graph
from tinyhost.codegen.scratch import ScratchGrants, grant_scratch
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph
from tinyhost.plan import MemoryPlan, PlanOptions, plan_memory

MAGIC = b"THIB"
VERSION = 1
HEADER = struct.Struct("<4sHHIIIIHHHBBIIIIIIIIIIII")
TENSOR = struct.Struct("<BBBB6iIIfiI")
OP = struct.Struct("<HBBIIIIIHHI")
MAX_RANK = LIMITS["TH_INTERP_MAX_RANK"]
SECTION_ALIGN = 16
CRC_START = 16  # the CRC covers every byte after the first 16 (magic, version, sizes, crc)

FLAG_INTERLEAVED = 0x1  # CONV_2D / FULLY_CONNECTED filters in the DSP kernels' layout
FLAG_MVE = 0x2  # planned for the Helium (MVE) kernel build (TH_NN_MVE)

LOC_NONE, LOC_ARENA, LOC_CONST = 0, 1, 2
TFLAG_INTERLEAVED = 0x1
TFLAG_VARIABLE = 0x2  # state kept across invokes, reset on request (BLOB_FORMAT.md)

DTYPE_CODES = {
    np.dtype(np.int8): 0,
    np.dtype(np.uint8): 1,
    np.dtype(np.int16): 2,
    np.dtype(np.int32): 3,
    np.dtype(np.float32): 4,
    np.dtype(np.int64): 5,  # constants only (16x8 biases)
}

assert HEADER.size == 80 and TENSOR.size == 48 and OP.size == 32


@dataclass(frozen=True)
class BlobTarget:
    """What the blob must match in the firmware that runs it."""

    interleaved: bool = False  # DSP build of kernels_c (TH_NN_FILTER_INTERLEAVED)
    dsp: bool = False  # scratch sizes of the DSP kernels
    alignment: int = 4  # arena buffer alignment (16 on MVE)
    mve: bool = False  # Helium build of kernels_c (TH_NN_MVE): its scratch sizes, plain filters


@dataclass(frozen=True)
class Blob:
    data: bytes
    arena_bytes: int
    plan: MemoryPlan
    adapters: tuple[str, ...]  # interpreter adapters the model uses, sorted
    op_order: tuple[int, ...]
    scratch_tail_bytes: int  # scratch placed after the planned arena (kernel needs > plan)
    scratch: tuple[tuple[int, int, int], ...] = ()  # (op, arena offset, bytes) per op with any

    @property
    def crc(self) -> int:
        return struct.unpack_from("<I", self.data, 12)[0]


def _align(n: int, a: int = SECTION_ALIGN) -> int:
    return (n + a - 1) // a * a


def _interleave_block(adapter: str) -> int | None:
    if adapter == "conv2d_s8":
        return CONV_BLOCK
    if adapter in ("fc_s8", "fc_pc_s8"):
        return FC_BLOCK
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
    calls = lower_graph(graph, "interpreter")
    check_limits(graph.source, len(graph.ops), len(graph.tensors), len(graph.inputs),
                 len(graph.outputs), calls)  # fmt: skip
    options = PlanOptions(alignment=target.alignment, dsp=target.dsp, mve=target.mve)
    if plan is None:
        # The overlaps the kernels declare (plan/overlap.py, th_nn.h "Aliasing"): RESHAPE /
        # SQUEEZE aliases, elementwise and depthwise in place, pointwise and sliding windows.
        plan = plan_memory(graph, options=options)
    grants = grant_scratch(graph, calls, plan, options)
    by_op = {c.op: c for c in calls}
    return _serialize(graph, target, plan, grants, [by_op[i] for i in plan.op_order], name)


def _serialize(graph: Graph, target: BlobTarget, plan: MemoryPlan, grants: ScratchGrants,
               calls: list[Call], name: str | None) -> Blob:
    """The blob bytes of `calls` (in execution order) under `plan` and `grants`."""
    consts = _Consts()
    tensor_loc: dict[int, tuple[int, int, int, int]] = {}  # idx -> (loc, offset, nbytes, flags)
    for idx in _arena_tensors(plan):
        t = graph.tensors[idx]
        flags = TFLAG_VARIABLE if t.is_variable else 0
        tensor_loc[idx] = (LOC_ARENA, plan.tensor_offset(idx), t.size_bytes, flags)
    packed = [pack(call) for call in calls]
    # Constant tensors in graph op order (the layout does not depend on the schedule).
    for call, (adapter, _) in sorted(zip(calls, packed), key=lambda cp: cp[0].op):
        block = _interleave_block(adapter.name) if target.interleaved else None
        for pos, t in enumerate(call.inputs):
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
    for call, (adapter, raw_words) in zip(calls, packed):
        i = call.op
        used = {w.key for w in raw_words if isinstance(w, ConstRef)}
        const_offsets = {key: consts.add(np.ascontiguousarray(arr).tobytes())
                         for key, arr in call.arrays.items() if key in used}  # fmt: skip
        words = [const_offsets[w.key] if isinstance(w, ConstRef) else int(w) for w in raw_words]
        for w in words:
            if not -(1 << 31) <= w < (1 << 31):
                raise UnsupportedModelError(f"{graph.source}: op {i}: parameter {w} overflows")
        io_first, params_first = len(io), len(params)
        io.extend(ABSENT if t is None else t for t in call.inputs)
        io.extend(call.outputs)
        params.extend(words)
        grant = grants.for_op(i)
        s_off, s_size = (grant.offset, grant.size) if grant is not None else (0, 0)
        op_records.append(OP.pack(
            adapter.kernel_id, len(call.inputs), len(call.outputs), io_first, params_first,
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
    flags = (FLAG_INTERLEAVED if target.interleaved else 0) | (FLAG_MVE if target.mve else 0)
    HEADER.pack_into(
        out, 0, MAGIC, VERSION, HEADER.size, total, 0, flags, grants.arena_bytes, KERNEL_ABI,
        len(graph.tensors), len(op_records), len(graph.inputs), len(graph.outputs),
        tensors_off, ops_off, io_off, len(io), params_off, len(params), consts_off,
        len(consts.buf), name_off, len(model_name), 0, 0,
    )  # fmt: skip
    struct.pack_into("<I", out, 12, zlib.crc32(bytes(out[CRC_START:])) & 0xFFFFFFFF)
    return Blob(
        data=bytes(out),
        arena_bytes=grants.arena_bytes,
        plan=plan,
        adapters=tuple(sorted({adapter.name for adapter, _ in packed})),
        op_order=tuple(plan.op_order),
        scratch_tail_bytes=grants.tail_bytes,
        scratch=tuple((i, g.offset, g.size) for i, g in sorted(grants.grants.items())),
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

