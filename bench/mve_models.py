"""MLPerf Tiny models on Cortex-M55 (issue 16): exact executed instructions per inference of the
Helium (MVE) build beside the DSP build of the same core, per model and per layer.

    python bench/mve_models.py [--models vww_96_int8 ...] [--backend compiled] [--layers MODEL]
                               [--json]

Three builds of each model run through `tinyhost bench` on QEMU mps3-an547 (icount plugin):
"mve", the board as it is; "dsp8", the DSP build of the same core (a shadow source tree,
TINYHOST_ROOT, whose mps3-an547 board is built -mcpu=cortex-m55+nomve with "mve": false, so
the kernels take their TH_NN_HAS_DSP paths) with int8 weights, the kernels the MVE build
replaces; "dsp16", the same DSP build as `--optimize speed` makes it (host-widened int16 weights
for FULLY_CONNECTED, pointwise and 3x3 convolutions on a DSP core without Helium, extra flash).
Prints MVE/DSP ratios (> 1: the MVE build executes fewer instructions), MACs per instruction,
and Cortex-M55 cycles ESTIMATED from the instruction classes (tinyhost.deploy.cycles: Helium
dual-beat timing with beat overlap; labelled as an estimate, the exact figure is the instruction
count: instructions under-state a vector instruction's cost) and, with --layers, the model's
per-layer table. Models absent from the shared folder are skipped. Numbers, not
a test.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TINYHOST_SHARED", ROOT.parent / "shared"))
MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8"]
BOARD = "mps3-an547"
BUILDS = ("mve", "dsp8", "dsp16")


def shadow_root(where: Path) -> Path:
    """A source tree of links to this checkout whose mps3-an547 is the DSP build of the core."""
    root = where / "dsproot"
    (root / "boards").mkdir(parents=True)
    for name in ("CMakeLists.txt", "kernels_c", "firmware", "host", "tools"):
        (root / name).symlink_to(ROOT / name)
    for entry in (ROOT / "boards").iterdir():
        if entry.name != BOARD:
            (root / "boards" / entry.name).symlink_to(entry)
    board = root / "boards" / BOARD
    board.mkdir()
    shutil.copy(ROOT / "boards" / BOARD / "linker.ld", board / "linker.ld")
    data = json.loads((ROOT / "boards" / BOARD / "board.json").read_text())
    data.update(cpu=f"{data['cpu']}+nomve", mve=False)
    (board / "board.json").write_text(json.dumps(data, indent=2))
    return root


def child(build: str, model: Path, backend: str, work: Path) -> None:
    """One `tinyhost bench --json` run (in a subprocess: TINYHOST_ROOT picks the tree)."""
    import tinyhost.codegen.compiled as compiled
    from tinyhost.cli import main

    if build == "dsp8":  # no host-widened int16 weights: the DSP kernels on int8 weights
        compiled._widen_candidates = lambda *args, **kwargs: {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["bench", "--board", BOARD, "--backend", backend, "--json", "--runs", "1",
                     "--work-dir", str(work), str(model)])  # fmt: skip
    if code:
        raise SystemExit(code)
    print(out.getvalue())


def run(build: str, model: Path, backend: str, tmp: Path, shadow: Path) -> dict:
    env = dict(os.environ)
    if build != "mve":
        env["TINYHOST_ROOT"] = str(shadow)
    proc = subprocess.run(
        [sys.executable, __file__, "--child", build, str(model), backend,
         str(tmp / f"{model.stem}-{build}")],
        env=env, capture_output=True, text=True, check=False)  # fmt: skip
    if proc.returncode:
        raise SystemExit(f"{model.stem} {build}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        child(argv[1], Path(argv[2]), argv[3], Path(argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=MODELS)
    ap.add_argument("--backend", default="compiled", choices=("compiled", "interpreter"))
    ap.add_argument("--layers", default=None, help="print this model's per-layer table")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args(argv)
    rows: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory(prefix="th-mvemodels-") as tmp:
        shadow = shadow_root(Path(tmp))
        for name in args.models:
            model = SHARED / "models" / "mlperf_tiny" / f"{name}.tflite"
            if not model.is_file():
                print(f"{name}: not in {SHARED}, skipped", file=sys.stderr)
                continue
            rows[name] = {b: run(b, model, args.backend, Path(tmp), shadow) for b in BUILDS}
    if args.json:
        keys = ("instructions", "macs", "macs_per_instruction", "cycles_estimate", "bit_exact",
                "per_op")  # fmt: skip
        print(json.dumps({m: {b: {k: r.get(k) for k in keys} for b, r in builds.items()}
                          for m, builds in rows.items()}))  # fmt: skip
        return 0
    print(f"{BOARD} ({args.backend}), exact instructions per inference")
    print(f"{'model':<24} {'MVE':>11} {'DSP int8 w':>11} {'DSP int16 w':>11} {'x int8':>7} "
          f"{'x int16':>7} {'exact':>5}")  # fmt: skip
    for name, b in rows.items():
        mve, d8, d16 = (b[k]["instructions"] for k in BUILDS)
        exact = all(b[k]["bit_exact"] for k in BUILDS)
        print(f"{name:<24} {mve:>11,} {d8:>11,} {d16:>11,} {d8 / mve:>7.2f} {d16 / mve:>7.2f} "
              f"{'yes' if exact else 'NO':>5}")  # fmt: skip
    print("\nMACs per instruction, and Cortex-M55 cycles ESTIMATED (beat model, "
          "tinyhost.deploy.cycles)")
    print(f"{'model':<24} {'MVE MAC/ins':>11} {'DSP8 MAC/ins':>12} {'MVE cycles':>11} "
          f"{'DSP int8 w':>11} {'DSP int16 w':>11} {'x int8':>7} {'x int16':>7}")  # fmt: skip
    for name, b in rows.items():
        rate = [b[k]["macs"] / b[k]["instructions"] for k in ("mve", "dsp8")]
        est = [(b[k].get("cycles_estimate") or {}).get("cycles") for k in BUILDS]
        if None in est:
            print(f"{name:<24} {rate[0]:>11.3f} {rate[1]:>12.3f}   (no cycle estimate)")
            continue
        print(f"{name:<24} {rate[0]:>11.3f} {rate[1]:>12.3f} {est[0]:>11,} {est[1]:>11,} "
              f"{est[2]:>11,} {est[1] / est[0]:>7.2f} {est[2] / est[0]:>7.2f}")  # fmt: skip
    if args.layers in rows:
        ops = [rows[args.layers][k]["per_op"] for k in BUILDS]
        est = [(rows[args.layers][k].get("cycles_estimate") or {}).get("per_op") for k in BUILDS]
        print(f"\n{args.layers} per layer (cycles: ESTIMATED, Cortex-M55 beat model)")
        print(f"{'#':>3} {'op':<18} {'MACs':>8} {'MVE':>9} {'DSP int8 w':>10} {'x':>5} "
              f"{'MVE MAC/ins':>11} {'MVE cyc':>9} {'DSP8 cyc':>9} {'x cyc':>5}")  # fmt: skip
        for i, (m, d8, _) in enumerate(zip(*ops, strict=True)):
            per_ins = f"{m['macs'] / m['instructions']:.3f}" if m["instructions"] else "-"
            gain = f"{d8['instructions'] / m['instructions']:.2f}" if m["instructions"] else "-"
            cyc = [e[i] if e else 0 for e in est[:2]]
            cyc_gain = f"{cyc[1] / cyc[0]:.2f}" if cyc[0] else "-"
            print(f"{i:>3} {m['op']:<18} {m['macs']:>8,} {m['instructions']:>9,} "
                  f"{d8['instructions']:>10,} {gain:>5} {per_ins:>11} {cyc[0]:>9,} "
                  f"{cyc[1]:>9,} {cyc_gain:>5}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
