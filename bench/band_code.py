"""Code size of banded ops (compiled backend, issue 13): flash_code_bytes (generated code +
kernels + runtime, no weights), model.c's code, exact instructions and the arena, per
configuration: ResNet-8 default (patched, --patch auto) and --patch 4, VWW default (dw->pw
fused) and --patch auto, KWS default. Numbers, never pass/fail.

    python bench/band_code.py [--board mps2-an386] [--json] [--only NAME ...]

Measured on mps2-an386 (kernels of bdfb7b4 in both columns), one function per step before,
one per distinct call with per-step table rows after (codegen/compiled.py _compact_steps):

    config          flash_code_bytes     instructions (exact)      steps  bit-exact
    resnet-default  33,003 -> 28,863     10,950,393 -> 10,952,541    123  yes
    resnet-patch4   29,719 -> 28,292     10,908,562 -> 10,909,457     56  yes
    vww-patch-auto  47,900 -> 36,650      7,003,156 ->  7,007,101    268  yes
    vww-default     36,060 (unpatched: model.c unchanged), 6,793,645  29  yes
    kws-default     23,442 (unpatched: model.c unchanged), 2,994,395  13  yes
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from tinyhost.deploy.bench import bench
from tinyhost.plan.patch import default_patch, parse_patch
from tinyhost.tflite import read_model

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TINYHOST_SHARED", ROOT.parent / "shared"))
MLPERF = SHARED / "models" / "mlperf_tiny"
BUILD = ROOT / "build" / "bench_band_code"
# name -> (model, --patch or None for the default)
CONFIGS = {
    "resnet-default": ("pretrainedResnet_quant.tflite", None),
    "resnet-patch4": ("pretrainedResnet_quant.tflite", "4"),
    "vww-default": ("vww_96_int8.tflite", None),
    "vww-patch-auto": ("vww_96_int8.tflite", "auto"),
    "kws-default": ("kws_ref_model.tflite", None),
}


def _text_bytes(obj: Path) -> int | None:
    """The code (.text) of model.c's object file, if the build left one."""
    import subprocess

    if not obj.is_file():
        return None
    out = subprocess.run(["arm-none-eabi-size", "-A", str(obj)], capture_output=True,
                         text=True, check=False).stdout
    return sum(int(line.split()[1]) for line in out.splitlines()
               if line.startswith(".text"))  # fmt: skip


def measure(name: str, board: str) -> dict:
    model, patch = CONFIGS[name]
    graph = read_model(MLPERF / model)
    work = BUILD / f"{name}-{board}"
    r = bench(graph, board, backend="compiled", work_dir=work,
              patch=default_patch("compiled", "speed") if patch is None
              else parse_patch(patch))  # fmt: skip
    objs = list(work.rglob("model.c.obj"))
    return {"config": name, "board": board, "flash_code_bytes": r.flash_code_bytes,
            "model_c_text_bytes": _text_bytes(objs[0]) if objs else None,
            "instructions": r.total, "arena_bytes": r.arena_bytes, "bit_exact": r.bit_exact,
            "profile_entries": len(r.per_op)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", nargs="*", choices=sorted(CONFIGS))
    args = ap.parse_args()
    rows = [measure(n, args.board) for n in (args.only or CONFIGS)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for r in rows:
        text = "?" if r["model_c_text_bytes"] is None else f"{r['model_c_text_bytes']:,}"
        print(f"{r['config']:16} flash_code {r['flash_code_bytes']:>7,} B  model.c .text "
              f"{text:>6} B  instructions {r['instructions']:>11,}  arena "
              f"{r['arena_bytes']:>7,} B  entries {r['profile_entries']:>4}  "
              f"bit-exact {r['bit_exact']}")


if __name__ == "__main__":
    main()
