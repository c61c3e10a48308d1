"""The fused depthwise -> pointwise pair (compiled backend, codegen/fold.py fuse_dw_pw): arena
and exact instructions with `--fuse-dw-pw off`, `auto` (the default) and `on`, on QEMU, and
per fused pair the instructions of the fused op against the two unfused layers.

    python bench/fuse_dw_pw.py [--board mps2-an386] [--json] [MODEL.tflite ...]

Default models: vww_96_int8 (../shared, or $TINYHOST_SHARED) and the project's
mobilenetv2_stage_128_int8. Numbers, never pass/fail.
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

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TINYHOST_SHARED", ROOT.parent / "shared"))
MODELS = (SHARED / "models" / "mlperf_tiny" / "vww_96_int8.tflite",
          ROOT / "tests" / "models" / "large" / "mobilenetv2_stage_128_int8.tflite")
MODES = ("off", "auto", "on")
BUILD = ROOT / "build" / "bench_fuse_dw_pw"


def measure(model: Path, board: str) -> dict:
    graph = read_model(model)
    out: dict = {"model": model.stem, "board": board, "modes": {}}
    for mode in MODES:
        g = generate(graph, load_board(board), "m", fuse_dw_pw=mode)
        r = bench(graph, board, backend="compiled", fuse_dw_pw=mode,
                  work_dir=BUILD / f"{model.stem}-{mode}")  # fmt: skip
        counts = {i: o.count for i, o in zip(g.op_order, r.per_op, strict=True)}
        out["modes"][mode] = {
            "arena_bytes": r.arena_bytes, "instructions": r.total, "bit_exact": r.bit_exact,
            "fused": [{"depthwise": f.dw, "pointwise": f.pw,
                       "bands": next(n for d, n, _ in g.dwpw_bands if d == f.dw),
                       "band_rows": next(k for d, _, k in g.dwpw_bands if d == f.dw),
                       "instructions": counts[f.dw]} for f in g.folded.fused_dw_pw],
            "per_op": counts,
        }  # fmt: skip
    off = out["modes"]["off"]["per_op"]
    for mode in ("auto", "on"):
        for f in out["modes"][mode]["fused"]:
            f["unfused_instructions"] = off[f["depthwise"]] + off[f["pointwise"]]
    return out


def _print(d: dict) -> None:
    print(f"{d['model']} on {d['board']} (compiled backend, exact instructions)")
    for mode, r in d["modes"].items():
        print(f"  --fuse-dw-pw {mode:4}: arena {r['arena_bytes']:>8,} B, instructions "
              f"{r['instructions']:>11,}, bit-exact {r['bit_exact']}")
        for f in r["fused"]:
            print(f"      ops {f['depthwise']:>2}+{f['pointwise']:<2} {f['bands']:>3} bands of "
                  f"{f['band_rows']:>2} rows: {f['instructions']:>10,} (unfused "
                  f"{f.get('unfused_instructions', 0):>10,})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", type=Path)
    p.add_argument("--board", default="mps2-an386")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    results = [measure(m, args.board) for m in (args.models or [m for m in MODELS
                                                                if m.is_file()])]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for r in results:
        _print(r)


if __name__ == "__main__":
    main()
