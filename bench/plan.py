"""Arena bytes of every shared model next to TFLite Micro's (../shared/PEERS.md).

    python bench/plan.py [--json] [--tflm]
    python bench/plan.py --patch [--json] [--board B] [--no-large]

The arena figures are those of the interpreter blob, i.e. what the firmware really
allocates: the planner's plan with the in-place overlaps the kernels declare and the exact
scratch of the kernels, for the DSP build (Cortex-M4/M7/M33 boards) and the portable build
(host board, Cortex-M0/M3). Next to them: the planner's lower bound, the plan without
in-place overlaps, TFLite Micro's head (planned activations, PEERS.md) and its whole arena
on Cortex-M4. --tflm also runs the tflite-micro package to measure its head.
Target (issue #4): at most 0.6x TFLite Micro's arena on each MLPerf Tiny model.

--patch: patch-based inference (plan/patch.py) with the compiled backend on QEMU (exact
instructions): per shared model, the arena and instructions layer by layer and with
`--patch auto`, beside TFLite Micro's arena, and the model code's flash (the generated code
+ kernels: one function per band op); then VWW's and ResNet-8's trade-off curves, arena and code
against extra instructions, over tile counts (VWW: halo rows kept and recomputed).
--no-large leaves out the project's MobileNetV2 models (the 224x224 one is planned only).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tinyhost.codegen.blob import BlobTarget, build_blob
from tinyhost.errors import TinyhostError
from tinyhost.plan import PlanOptions, plan_memory
from tinyhost.tflite import read_model

SHARED = Path(os.environ.get("TINYHOST_SHARED", Path(__file__).resolve().parents[2] / "shared"))
# TFLite Micro arena_used_bytes() on Cortex-M4 with CMSIS-NN, from ../shared/PEERS.md.
TFLM_ARENA = {
    "mlperf_tiny/kws_ref_model": 22820,
    "mlperf_tiny/vww_96_int8": 100708,
    "mlperf_tiny/pretrainedResnet_quant": 54996,
    "mlperf_tiny/ad01_int8": 2580,
    "tflm/micro_speech_quantized": 6836,
}
# TFLite Micro's head (the planned activations), from ../shared/PEERS.md.
TFLM_HEAD = {
    "mlperf_tiny/kws_ref_model": 16000,
    "mlperf_tiny/vww_96_int8": 73728,
    "mlperf_tiny/pretrainedResnet_quant": 49152,
    "mlperf_tiny/ad01_int8": 768,
    "tflm/micro_speech_quantized": 5968,
}
TARGETS = {
    "dsp": BlobTarget(interleaved=True, dsp=True, alignment=4),
    "portable": BlobTarget(interleaved=False, dsp=False, alignment=4),
}
MLPERF = [k for k in TFLM_ARENA if k.startswith("mlperf_tiny/")]
MODELS = list(TFLM_ARENA) + ["tflm/hello_world_int8", "tflm/network_model", "tflm/simple_add_model"]


def tflm_head(path: Path) -> int | None:
    code = (
        "import sys\nfrom tflite_micro.python.tflite_micro import runtime\n"
        "runtime.Interpreter.from_file(sys.argv[1]).print_allocations()\n"
    )
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    m = re.search(r"Arena allocation head (\d+) bytes", r.stdout + r.stderr)
    return int(m.group(1)) if r.returncode == 0 and m else None


def planned_arenas(graph, board_name: str) -> tuple[int, int]:  # noqa: ANN001
    """Layer-by-layer and `--patch auto` arenas of the compiled backend's plan for the board
    (PADs folded, as `tinyhost plan --backend compiled --patch auto`), no build."""
    from tinyhost.boards import load_board
    from tinyhost.codegen.fold import fold_for_compiled
    from tinyhost.plan import PlanOptions
    from tinyhost.plan.patch import PatchRequest, pick

    board = load_board(board_name)
    options = PlanOptions(alignment=board.arena_alignment, dsp=board.dsp,
                          mve=board.dsp and board.mve)  # fmt: skip
    chosen, _, unpatched = pick(fold_for_compiled(graph).graph, options, PatchRequest())
    return unpatched, unpatched if chosen is None else chosen.arena_bytes


def patch_bench(args: argparse.Namespace) -> int:
    import tempfile

    from tinyhost.deploy.bench import bench
    from tinyhost.plan.patch import PatchRequest

    rows, curve = [], []
    with tempfile.TemporaryDirectory(prefix="th-bench-patch-") as tmp:
        def measure(graph, request, tag: str) -> tuple[int, int, int]:  # noqa: ANN001
            r = bench(graph, args.board, backend="compiled", patch=request,
                      work_dir=Path(tmp) / tag)  # fmt: skip
            if not r.bit_exact:
                raise SystemExit(f"{tag}: NOT bit-exact")
            return r.arena_bytes, r.total, r.flash_model_code_bytes or 0

        project = Path(__file__).resolve().parents[1] / "tests" / "models"
        paths = [(n, SHARED / "models" / f"{n}.tflite") for n in MODELS]
        for stem in () if args.no_large else ("mobilenetv2_stage_128", "mobilenetv2_224"):
            paths.append((f"tests/models/large/{stem}", project / "large" / f"{stem}_int8.tflite"))
        for name, path in paths:
            if not path.is_file():
                continue
            graph = read_model(path)
            code = p_code = None
            try:
                arena, instr, code = measure(graph, None, f"{len(rows)}-plain")
                p_arena, p_instr, p_code = measure(graph, PatchRequest(), f"{len(rows)}-auto")
            except TinyhostError as e:
                # too big for the board layer by layer (MobileNetV2 at 224x224: 1.2 MB):
                # the planner's arenas, no run
                print(f"{name}: {e}; arenas planned only", file=sys.stderr)
                arena, p_arena = planned_arenas(graph, args.board)
                instr = p_instr = None
            rows.append({"model": name, "arena_bytes": arena, "instructions": instr,
                         "patched_arena_bytes": p_arena, "patched_instructions": p_instr,
                         "code_bytes": code, "patched_code_bytes": p_code,
                         "tflm_arena_m4": TFLM_ARENA.get(name)})  # fmt: skip
        curves = (("vww_96_int8", (2, 3, 4, 6, 8, 12, 16, 24, 48), (True, False)),
                  ("pretrainedResnet_quant", (2, 4, 8, 16, 32), (True,)))
        for model, counts, halos in curves:
            path = SHARED / "models" / "mlperf_tiny" / f"{model}.tflite"
            if not path.is_file():
                continue
            graph = read_model(path)
            _, base, base_code = measure(graph, None, f"{model}-plain")
            curve.append({"model": model, "tiles": 0, "halo": "-", "arena_bytes": _,
                          "instructions": base, "extra_instructions": 0.0,
                          "code_bytes": base_code})  # fmt: skip
            for keep in halos:
                for tiles in counts[: None if keep else -1]:
                    arena, instr, code = measure(graph, PatchRequest(tiles, keep_halo=keep),
                                                 f"{model}-{tiles}-{keep}")  # fmt: skip
                    curve.append({"model": model, "tiles": tiles,
                                  "halo": "kept" if keep else "recomputed",
                                  "arena_bytes": arena, "instructions": instr,
                                  "extra_instructions": round(instr / base - 1, 4),
                                  "code_bytes": code})  # fmt: skip
    if args.json:
        print(json.dumps({"board": args.board, "models": rows, "vww_curve": curve}, indent=2))
        return 0
    print(f"compiled backend on {args.board}, --patch auto vs layer by layer")
    print(f"{'model':36} {'arena':>8} {'patched':>8} {'TFLM M4':>8} {'instructions':>13} "
          f"{'patched':>13} {'extra':>7} {'code':>8} {'patched':>8}")  # fmt: skip
    for r in rows:
        tflm = "-" if r["tflm_arena_m4"] is None else f"{r['tflm_arena_m4']:,}"
        runs = [r["instructions"], r["patched_instructions"]]
        shown = [f"{n:>13,}" if n is not None else f"{'(plan only)':>13}" for n in runs]
        extra = f"{100 * (runs[1] / runs[0] - 1):>6.1f}%" if None not in runs else ""
        codes = "" if r["code_bytes"] is None else (
            f" {r['code_bytes']:>8,} {r['patched_code_bytes']:>8,}")
        print(f"{r['model']:36} {r['arena_bytes']:>8,} {r['patched_arena_bytes']:>8,} "
              f"{tflm:>8} {shown[0]} {shown[1]} {extra:>7}{codes}")  # fmt: skip
    if curve:
        print("\ntrade-off (the split with the smallest arena for each tile count; 0 tiles: "
              "layer by layer):")
        for c in curve:
            extra = 100 * c["extra_instructions"]
            print(f"  {c['model']:24} {c['tiles']:>3} tiles, halo {c['halo']:<10} arena "
                  f"{c['arena_bytes']:>7,} B  instructions {c['instructions']:>11,} "
                  f"({extra:+.1f}%)  code {c['code_bytes']:>7,} B")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--tflm", action="store_true", help="measure TFLM's head with the package")
    ap.add_argument("--patch", action="store_true",
                    help="patched vs layer-by-layer arena and instructions (compiled, QEMU)")
    ap.add_argument("--board", default="mps2-an386", help="--patch: the QEMU board")
    ap.add_argument("--no-large", action="store_true",
                    help="--patch: without the project's MobileNetV2 models")
    args = ap.parse_args()
    if args.patch:
        return patch_bench(args)
    rows = []
    for name in MODELS:
        path = SHARED / "models" / f"{name}.tflite"
        if not path.is_file():
            continue
        graph = read_model(path)
        row: dict = {"model": name}
        for key, target in TARGETS.items():
            try:
                blob = build_blob(graph, target)
            except TinyhostError:
                row[key] = row[f"{key}_lower_bound"] = row[f"{key}_no_in_place"] = None
                continue
            row[key] = blob.arena_bytes
            row[f"{key}_lower_bound"] = blob.plan.lower_bound_bytes
            plain = PlanOptions(alignment=target.alignment, dsp=target.dsp, inplace=False)
            row[f"{key}_no_in_place"] = plan_memory(graph, options=plain).arena_bytes
            if key == "dsp":
                peak = blob.plan.peak_op
                row["peak_op"] = "-" if peak is None else f"{peak} {graph.ops[peak].name}"
                row["overlaps"] = sorted({u.mode.value for u in blob.plan.overlaps})
        row["tflm_head"] = TFLM_HEAD.get(name)
        row["tflm_arena_m4"] = TFLM_ARENA.get(name)
        row["tflm_head_measured"] = tflm_head(path) if args.tflm else None
        if row["tflm_arena_m4"] and row["dsp"]:
            row["ratio"] = round(row["dsp"] / row["tflm_arena_m4"], 3)
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0

    def f(v: int | None) -> str:
        return "-" if v is None else f"{v:,}"

    print(f"{'model':36} {'DSP blob':>9} {'LB':>7} {'plain':>7} {'portable':>9} {'LB':>7} "
          f"{'plain':>7} {'TFLM head':>9} {'TFLM M4':>8} {'ratio':>6}  peak")  # fmt: skip
    for r in rows:
        print(f"{r['model']:36} {f(r['dsp']):>9} {f(r['dsp_lower_bound']):>7} "
              f"{f(r['dsp_no_in_place']):>7} {f(r['portable']):>9} "
              f"{f(r['portable_lower_bound']):>7} {f(r['portable_no_in_place']):>7} "
              f"{f(r['tflm_head_measured'] or r['tflm_head']):>9} "
              f"{f(r['tflm_arena_m4']):>8} {r.get('ratio', '-'):>6}  {r.get('peak_op', '-')}")
    missed = [r["model"] for r in rows if r["model"] in MLPERF and r.get("ratio", 1) > 0.6]
    print("target <= 0.6x TFLM on MLPerf Tiny:", "met" if not missed else f"missed on {missed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
