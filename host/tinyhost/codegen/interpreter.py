"""`tinyhost convert --backend interpreter`: an int8 graph -> a model directory for the firmware.

The directory holds:

- `model_blob.bin`: the blob (BLOB_FORMAT.md), for LOAD_MODEL or a file system;
- `model_blob.c` / `model_blob.h`: the same bytes as a const, 16-byte aligned C array, and the
  arena size the plan needs (plus any `--arena-bytes` reserve);
- `th_ops_table.c`: the interpreter's op table with only the kernels the model uses (or every
  available one with `all_ops`, for firmware that must accept other models later);
- `model.cmake`: the fragment the top-level CMakeLists.txt includes (-DMODEL_DIR=...);
- `model.json`: what was generated (kernels, arena, plan summary), for the runner and reports;
- `README.md`: how to use the directory inside your own firmware.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinyhost.boards import Board
from tinyhost.codegen.blob import Blob, BlobTarget, build_blob
from tinyhost.codegen.fold import depthwise_as_conv
from tinyhost.codegen.interpreter_abi import ADAPTERS_BY_NAME, available_adapters
from tinyhost.codegen.lower import lower_graph
from tinyhost.codegen.result import ConvertResult
from tinyhost.codegen.support import require_device_support, stack_cmake
from tinyhost.errors import TinyhostError
from tinyhost.ir import Graph
from tinyhost.plan.budget import Budget, budget_for, ram_left_for_loading, require_fits
from tinyhost.plan.stack import StackReserve, stack_reserve

HOST_LOAD_CAPACITY = 4 << 20


def target_for(board: Board) -> BlobTarget:
    """The kernel build a board's firmware has: DSP kernels read interleaved filters, the
    Helium (MVE) build of an MVE board plain ones (th_nn_types.h TH_NN_MVE)."""
    dsp = board.dsp and not board.is_host
    mve = dsp and board.mve
    return BlobTarget(interleaved=dsp and not mve, dsp=dsp, alignment=board.arena_alignment,
                      mve=mve)


@dataclass(frozen=True)
class Sized:
    """The interpreter model for a board, before anything is written."""

    blob: Blob
    adapters: tuple[str, ...]  # in the op table
    arena_bytes: int  # the firmware's static arena
    load_capacity: int  # LOAD_MODEL buffer bytes (0: LOAD_MODEL refused)
    budget: Budget
    stack: StackReserve  # the firmware's stack, derived from the kernels the table reaches


def size_model(graph: Graph, board: Board, *, all_ops: bool = False,
               arena_bytes: int | None = None, load_capacity: int | None = None,
               name: str | None = None) -> Sized:
    """Blob, op table, arena and LOAD_MODEL buffer of `graph` on `board`, and their budget."""
    model_name = name or Path(graph.source).stem or graph.name or "model"
    require_device_support(graph, "interpreter")
    graph = depthwise_as_conv(graph)  # same ops, tensors and values; faster kernels
    blob = build_blob(graph, target_for(board), name=model_name)
    available = available_adapters()
    kernels = tuple(sorted(available if all_ops else set(blob.adapters),
                           key=lambda k: ADAPTERS_BY_NAME[k].kernel_id))  # fmt: skip
    arena = max(blob.arena_bytes, arena_bytes or 0)
    arena = (arena + 15) // 16 * 16
    # The stack: that of the kernels this op table reaches (any kernel with every adapter).
    functions = None if all_ops else sorted({c.function for c in lower_graph(graph)})
    ram_left = ram_left_for_loading(board, arena, functions)
    if load_capacity is None:
        if board.is_host or ram_left is None:
            load_capacity = HOST_LOAD_CAPACITY
        elif all_ops:
            load_capacity = ram_left  # room for whatever model comes later
        else:
            blob_room = (len(blob.data) + 15) // 16 * 16
            load_capacity = blob_room if blob_room <= ram_left else 0
    budget = budget_for(board, arena, len(blob.data),
                        0 if board.is_host else load_capacity, functions)  # fmt: skip
    return Sized(blob, kernels, arena, load_capacity, budget, stack_reserve(board, functions))


def _no_patch(patch: object) -> None:
    if patch is not None:
        raise TinyhostError("--patch is the compiled backend's: the interpreter runs every op "
                            "layer by layer (use --backend compiled)")  # fmt: skip


def _speed_only(optimize: str) -> None:
    if optimize != "speed":
        raise TinyhostError(f"--optimize {optimize} is the compiled backend's: the interpreter "
                            "firmware links the kernels its op table names, as built")

def fit(graph: Graph, board: Board, optimize: str = "speed", patch: object = None,
        **options: object) -> Budget:
    """What `convert` would need on `board` (the `plan --board` figures)."""
    _speed_only(optimize)
    _no_patch(patch)
    return size_model(graph, board, **options).budget  # type: ignore[arg-type]


def io_quantization(graph: Graph) -> dict[str, list[dict]]:
    """Scale and zero point of every model input and output (real = scale * (q - zp))."""
    out: dict[str, list[dict]] = {}
    for role, indices in (("inputs", graph.inputs), ("outputs", graph.outputs)):
        out[role] = []
        for i in indices:
            t = graph.tensors[i]
            q = t.quant
            quantized = q is not None and q.scale.size == 1
            out[role].append({
                "name": t.name, "dtype": str(t.dtype), "shape": list(t.shape),
                "scale": float(np.float32(q.scale[0])) if quantized else None,
                "zero_point": int(q.zero_point[0]) if quantized else None,
            })  # fmt: skip
    return out


def io_quant_defines(graph: Graph) -> str:
    lines = ["/* Model inputs and outputs: real = SCALE * (q - ZERO_POINT). */"]
    for role, entries in io_quantization(graph).items():
        for k, e in enumerate(entries):
            if e["scale"] is None:
                continue
            name = f"TH_MODEL_{role[:-1].upper()}{k}"
            lines.append(f"#define {name}_SCALE {np.float32(e['scale'])!r}f")
            lines.append(f"#define {name}_ZERO_POINT ({e['zero_point']})")
    return "\n".join(lines)


def _c_array(data: bytes) -> str:
    lines = []
    for i in range(0, len(data), 16):
        lines.append("    " + ", ".join(f"0x{b:02x}" for b in data[i : i + 16]) + ",")
    return "\n".join(lines)


def _c_ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def convert(
    graph: Graph,
    board: Board,
    out_dir: Path | str,
    *,
    all_ops: bool = False,
    arena_bytes: int | None = None,
    load_capacity: int | None = None,
    name: str | None = None,
    optimize: str = "speed",
    patch: object = None,
) -> ConvertResult:
    """Write the interpreter model directory for `graph` (int8) and `board`."""
    _speed_only(optimize)
    _no_patch(patch)
    out = Path(out_dir)
    model_name = name or Path(graph.source).stem or graph.name or "model"
    sized = size_model(graph, board, all_ops=all_ops, arena_bytes=arena_bytes,
                       load_capacity=load_capacity, name=model_name)
    require_fits(sized.budget, graph.source)
    blob, kernels, arena, load_capacity = (sized.blob, sized.adapters, sized.arena_bytes,
                                           sized.load_capacity)  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)  # only now: a refused model leaves nothing behind
    _write_sources(out, blob, kernels, arena, load_capacity, model_name, graph, board.name,
                   sized.stack)
    return ConvertResult(
        backend="interpreter",
        board=board.name,
        out_dir=out,
        model_name=model_name,
        arena_bytes=arena,
        plan=blob.plan,
        op_order=blob.op_order,
        op_names=tuple(graph.ops[i].name for i in blob.op_order),
        linked=kernels,
        model_flash_bytes=len(blob.data),
        model_hash=blob.crc,
        load_image=blob.data,
        load_capacity=load_capacity,
        budget=sized.budget,
    )


def _write_sources(
    out: Path, blob: Blob, kernels: tuple[str, ...], arena: int, load_capacity: int,
    model_name: str, graph: Graph, board_name: str, stack: StackReserve,
) -> None:  # fmt: skip
    (out / "model_blob.bin").write_bytes(blob.data)
    (out / "model_blob.h").write_text(
        f"""/* Generated by tinyhost convert --backend interpreter: model '{model_name}'. */
#ifndef TH_MODEL_BLOB_H
#define TH_MODEL_BLOB_H

#include <stdint.h>

#define TH_MODEL_NAME "{model_name}"
/* Arena the plan needs ({blob.arena_bytes} B), plus any --arena-bytes reserve. */
#define TH_MODEL_ARENA_BYTES {arena}u
/* LOAD_MODEL receive buffer (0 = the firmware refuses LOAD_MODEL). */
#define TH_MODEL_LOAD_CAPACITY {load_capacity}u
#define TH_MODEL_BLOB_CRC 0x{blob.crc:08x}u
{io_quant_defines(graph)}

extern const uint8_t th_model_blob[];
extern const uint32_t th_model_blob_len;

#endif
"""
    )
    (out / "model_blob.c").write_text(
        f"""/* Generated by tinyhost convert: the interpreter blob of '{model_name}'
 * ({len(blob.data)} bytes, CRC-32 0x{blob.crc:08x}; layout in BLOB_FORMAT.md). */
#include "model_blob.h"

__attribute__((aligned(16))) const uint8_t th_model_blob[{len(blob.data)}] = {{
{_c_array(blob.data)}
}};
const uint32_t th_model_blob_len = {len(blob.data)}u;
"""
    )
    rows = "\n".join(
        f"    {{TH_KERNEL_{k.upper()}, \"{k}\", th_interp_{k}_prepare, th_interp_{k}_eval}},"
        for k in kernels
    )
    (out / "th_ops_table.c").write_text(
        f"""/* Generated by tinyhost convert: the interpreter's op table ({len(kernels)} kernels).
 * A blob naming a kernel id that is not listed here is refused by th_interp_init. */
#include "th_interp_ops.h"

const th_interp_kernel th_interp_kernels[] = {{
{rows}
}};
const uint32_t th_interp_kernel_count = {len(kernels)}u;
"""
    )
    sources = sorted({ADAPTERS_BY_NAME[k].source for k in kernels})
    src_lines = "\n".join(f'  "${{TH_INTERP_DIR}}/{s}"' for s in sources)
    (out / "model.cmake").write_text(
        f"""# Generated by tinyhost convert --backend interpreter (model '{model_name}').
# Included by tinyhost's top-level CMakeLists.txt (-DMODEL_DIR=<this dir>), which sets
# TH_ROOT: pulls in the interpreter backend and adds the blob, the op table and the op
# adapters the table names.
if(NOT DEFINED TH_ROOT)
  message(FATAL_ERROR "model.cmake is for tinyhost's CMakeLists.txt; see README.md here")
endif()
include("${{TH_ROOT}}/firmware/interpreter/interpreter.cmake")
list(APPEND TH_APP_SOURCES
  "${{CMAKE_CURRENT_LIST_DIR}}/model_blob.c"
  "${{CMAKE_CURRENT_LIST_DIR}}/th_ops_table.c"
{src_lines})
list(APPEND TH_APP_INCLUDE_DIRS "${{CMAKE_CURRENT_LIST_DIR}}")
"""
        + stack_cmake(stack.bytes if stack.derived else None)
    )
    plan = blob.plan
    info = {
        "model": model_name,
        "source": graph.source,
        "backend": "interpreter",
        "blob_bytes": len(blob.data),
        "blob_crc": blob.crc,
        "arena_bytes": arena,
        "plan_arena_bytes": plan.arena_bytes,
        "plan_lower_bound_bytes": plan.lower_bound_bytes,
        "scratch_tail_bytes": blob.scratch_tail_bytes,
        "load_capacity": load_capacity,
        "kernels": list(kernels),
        "model_kernels": list(blob.adapters),
        "op_order": list(blob.op_order),
        "ops": [graph.ops[i].name for i in blob.op_order],
        "board": board_name,
        "stack_reserve_bytes": stack.bytes,
        "stack_reserve_derived": stack.derived,
        **io_quantization(graph),
    }
    (out / "model.json").write_text(json.dumps(info, indent=2) + "\n")
    (out / "README.md").write_text(_README.format(name=model_name, blob=len(blob.data),
                                                  arena=arena, interp="firmware/interpreter",
                                                  sources=", ".join(sources)))  # fmt: skip


_README = """# {name}: tinyhost interpreter model

Generated by `tinyhost convert --backend interpreter`. Blob: {blob} bytes
(`model_blob.bin`, also compiled in by `model_blob.c`); arena: {arena} bytes.

## In the tinyhost firmware

    cmake -S <tinyhost> -B build -DBOARD=<board> -DAPP=firmware/app -DMODEL_DIR=<this dir>

`tinyhost run` does this for you and talks to the firmware over the serial protocol.

## In your own firmware

Compile `model_blob.c`, `th_ops_table.c`, the interpreter (`{interp}/th_interp.c` of the
tinyhost checkout and the adapters {sources}) and the kernels in `kernels_c/` (include dirs:
this directory, `{interp}`, `firmware/include`, `kernels_c/include`). Provide
`uint64_t th_counter_read(void)` (any free-running counter; only used for the per-op
profile). Then:

```c
#include "model_blob.h"
#include "th_interp.h"

static th_interp ctx;
static uint8_t arena[TH_MODEL_ARENA_BYTES] __attribute__((aligned(16)));

if (th_interp_init(&ctx, th_model_blob, th_model_blob_len, arena, sizeof arena) != TH_INTERP_OK) {{
    th_interp_error e = th_interp_last_error(&ctx);  /* e.status, e.op, e.detail */
}}
th_interp_tensor in, out;
th_interp_input(&ctx, 0, &in);         /* in.data, in.bytes, in.dims, in.scale, in.zero_point */
memcpy(in.data, my_int8_input, in.bytes);
th_interp_invoke_ex(&ctx, 1);          /* 1 = record per-op counter ticks */
th_interp_output(&ctx, 0, &out);
uint32_t n; uint64_t total;
const uint32_t *per_op = th_interp_profile(&ctx, &n, &total);
```

A blob can also arrive at run time (e.g. `model_blob.bin` over serial or from a file):
`th_interp_init` validates it completely (magic, version, CRC-32, every offset and size,
kernel ids against `th_ops_table.c`, shapes against parameters) and refuses it with a status
before anything runs. The blob must be 4-byte aligned and stay unchanged while in use.
"""
