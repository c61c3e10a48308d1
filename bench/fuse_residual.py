"""The fused residual ADD (compiled backend, codegen/fold.py): arena and exact instructions,
layer by layer, with `--fuse-residual off`, `auto` (the default) and `on`, on QEMU.

    python bench/fuse_residual.py [--board mps2-an386] [--json] [MODEL.tflite ...]

Default model: pretrainedResnet_quant (../shared, or $TINYHOST_SHARED). Per layer, a fused
conv's count covers its ADD too (the ADD's own row shows 0): compare the conv + ADD sum of
the unfused run with the fused conv. Numbers, never pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from tinyhost.boards import load_board
from tinyhost.codegen.compiled import generate
from tinyhost.deploy.bench import bench
from tinyhost.tflite import read_model

SHARED = Path(os.environ.get("TINYHOST_SHARED", Path(__file__).resolve().parents[2] / "shared"))
RESNET = SHARED / "models" / "mlperf_tiny" / "pretrainedResnet_quant.tflite"
MODES = ("off", "auto", "on")
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench_fuse_residual"


def _per_op(graph, board: str, mode: str, result) -> dict[str, int]:  # noqa: ANN001
    """Counts by source op ("2 CONV_2D"), from the generated code's execution order."""
    order = generate(graph, load_board(board), "m", fuse_residual=mode).op_order
    assert len(order) == len(result.per_op)
    return {f"{i} {graph.ops[i].name}": o.count for i, o in zip(order, result.per_op,
                                                                 strict=True)}


def measure(model: Path, board: str) -> dict:
    graph = read_model(model)
    runs = {m: bench(graph, board, backend="compiled", fuse_residual=m,
                     work_dir=BUILD / f"{model.stem}-{m}") for m in MODES}  # fmt: skip
    per_op = {m: _per_op(graph, board, m, r) for m, r in runs.items()}
    names = [f"{i} {op.name}" for i, op in enumerate(graph.ops)]
    return {
        "model": model.stem, "board": board,
        "modes": {m: {"arena_bytes": r.arena_bytes, "instructions": r.total,
                      "bit_exact": r.bit_exact, "per_op": per_op[m]}
                  for m, r in runs.items()},
        "ops": names,
    }  # fmt: skip


def _print(d: dict) -> None:
    modes = d["modes"]
    print(f"{d['model']} on {d['board']} (compiled backend, exact instructions)")
    for m in MODES:
        r = modes[m]
        print(f"  --fuse-residual {m:4}: arena {r['arena_bytes']:>7,} B, instructions "
              f"{r['instructions']:>11,}, bit-exact {r['bit_exact']}")
    print(f"  {'op':<22}" + "".join(f"{m:>12}" for m in MODES))
    for name in d["ops"]:
        row = [modes[m]["per_op"].get(name, 0) for m in MODES]
        print(f"  {name:<22}" + "".join(f"{v:>12,}" for v in row))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", type=Path)
    p.add_argument("--board", default="mps2-an386")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    results = [measure(m, args.board) for m in (args.models or [RESNET])]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for r in results:
        _print(r)


if __name__ == "__main__":
    main()
