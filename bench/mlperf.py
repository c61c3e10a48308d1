"""The four MLPerf Tiny int8 models on mps2-an386 beside TFLite Micro + CMSIS-NN.

    python bench/mlperf.py [--json] [--board mps2-an386] [--models kws_ref_model ...]
                           [--backends interpreter compiled]

Each model runs through `tinyhost bench` (tinyhost.deploy.bench.bench): exact executed
instructions of one inference (QEMU icount plugin), with the same deterministic input as the
peer figures (input byte i = (uint8)(i*7+3)). The peer figures are parsed at run time from the
"TensorFlow Lite Micro on the same emulator" table of PEERS.md in the shared folder
(../shared or $TINYHOST_SHARED); models absent from the shared folder are skipped.

Columns: our instructions, TFLM+CMSIS-NN instructions, ratio ours/theirs (< 1 = we execute
fewer), MAC/instruction, our arena vs TFLM's arena_used_bytes(), our code bytes (firmware
text+data minus the model blob: runtime, kernels, board, protocol) vs TFLM's library bytes, and
whether our outputs equal the NumPy reference bit for bit and TFLM's first output bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from tinyhost.deploy.bench import BenchResult, bench
from tinyhost.plan.patch import default_patch
from tinyhost.tflite import read_model

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TINYHOST_SHARED", ROOT.parent / "shared"))
MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8"]
PEER_SECTION = "## TensorFlow Lite Micro on the same emulator"


def _number(cell: str) -> float | None:
    """'7,698,286' -> 7698286; '2.657 M' -> 2657000; anything else None."""
    m = re.fullmatch(r"([\d,]+(?:\.\d+)?)\s*([kKM]?)", cell.strip())
    if not m:
        return None
    value = float(m.group(1).replace(",", "")) * {"": 1, "k": 1e3, "K": 1e3, "M": 1e6}[m.group(2)]
    return int(value) if value.is_integer() else value


def parse_peers(text: str) -> dict[str, dict[str, str]]:
    """Model id (e.g. 'mlperf_tiny/kws_ref_model') -> {column header: cell text} of the TFLM
    table; columns are found by their headers, so reordering them in PEERS.md is fine."""
    start = text.find(PEER_SECTION)
    if start < 0:
        raise ValueError(f"PEERS.md has no section {PEER_SECTION!r}")
    rows: list[str] = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:  # the first table of the section ends here
            break
    if len(rows) < 3:
        raise ValueError("PEERS.md: the TFLM table is missing")
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    table: dict[str, dict[str, str]] = {}
    for line in rows[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[cells[0]] = dict(zip(header[1:], cells[1:]))
    return table


def peer_cell(row: dict[str, str], *words: str) -> str | None:
    """The cell of the first column whose header contains all ``words`` (case-insensitive)."""
    for header, cell in row.items():
        if all(w.lower() in header.lower() for w in words):
            return cell
    return None


def peer_column(row: dict[str, str], *words: str) -> float | None:
    cell = peer_cell(row, *words)
    return None if cell is None else _number(cell)


def peer_output_head(row: dict[str, str]) -> list[int] | None:
    """'80,80,7f' -> [0x80, 0x80, 0x7f]: TFLM's first output bytes (hex)."""
    cell = peer_cell(row, "first output bytes")
    if not cell:
        return None
    try:
        return [int(b, 16) for b in cell.split(",")]
    except ValueError:
        return None


def peer_figures(row: dict[str, str]) -> dict[str, float | None]:
    return {
        "tflm_instructions": peer_column(row, "CMSIS-NN instructions"),
        "tflm_reference_instructions": peer_column(row, "reference-kernel instructions"),
        "tflm_arena_bytes": peer_column(row, "arena bytes"),
        "tflm_lib_bytes": peer_column(row, "lib bytes"),
        "peer_macs": peer_column(row, "MACs"),  # 4 significant digits, in PEERS.md
    }


def _ratio(ours: float | None, theirs: float | None) -> float | None:
    return ours / theirs if ours and theirs else None


def compare(result: BenchResult, row_text: dict[str, str]) -> dict:
    peer = peer_figures(row_text)
    row = result.to_json()
    row.update(peer)
    head = peer_output_head(row_text)
    ours = result.output_head
    row["tflm_output_head"] = head
    row["same_output_as_tflm"] = None if head is None else ours[: len(head)] == head
    row["ratio_instructions"] = _ratio(result.instructions, peer["tflm_instructions"])
    row["ratio_arena"] = _ratio(result.arena_bytes, peer["tflm_arena_bytes"])
    row["ratio_code"] = _ratio(result.flash_code_bytes, peer["tflm_lib_bytes"])
    return row


def _fmt(v: float | None, spec: str = ",.0f") -> str:
    return "-" if v is None else format(v, spec)


def print_table(rows: list[dict], board: str) -> None:
    print(f"MLPerf Tiny int8 on {board} (exact executed instructions per inference)")
    head = (f"{'model':<24} {'backend':<11} {'ours':>12} {'TFLM+CMSIS':>12} {'ratio':>6} "
            f"{'MAC/ins':>7} "
            f"{'arena':>8} {'TFLM':>8} {'code B':>8} {'TFLM lib':>8} "
            f"{'exact':>5} {'=TFLM':>5}")  # fmt: skip
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['model']:<24} {r['backend']:<11} {_fmt(r['instructions']):>12} "
              f"{_fmt(r['tflm_instructions']):>12} "
              f"{_fmt(r['ratio_instructions'], '.2f'):>6} "
              f"{_fmt(r['macs_per_instruction'], '.3f'):>7} "
              f"{_fmt(r['arena_bytes']):>8} {_fmt(r['tflm_arena_bytes']):>8} "
              f"{_fmt(r['flash_code_bytes']):>8} {_fmt(r['tflm_lib_bytes']):>8} "
              f"{'yes' if r['bit_exact'] else 'NO':>5} "
              f"{_yes_no(r['same_output_as_tflm']):>5}")  # fmt: skip
    print("ratio = ours / TFLM+CMSIS-NN instructions; arena and code in bytes "
          "(code = flash_code_bytes: generated code or interpreter + kernels + runtime, no "
          "weights, protocol or board); exact = outputs equal the NumPy "
          "reference; =TFLM = first output bytes equal TFLM's in PEERS.md")


def _yes_no(v: bool | None) -> str:
    return "-" if v is None else ("yes" if v else "NO")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--board", default="mps2-an386", help="QEMU board (peers: mps2-an386)")
    ap.add_argument("--models", nargs="*", default=MODELS, help="subset of the four models")
    ap.add_argument("--runs", type=int, default=1, help="inferences per model")
    ap.add_argument("--backends", nargs="*", default=["interpreter", "compiled"],
                    help="backends to run, each a row per model (default both)")
    ap.add_argument("--optimize", choices=("speed", "size"), default="speed",
                    help="the compiled backend's build: fastest kernels or smallest code")
    args = ap.parse_args(argv)

    peers_md = SHARED / "PEERS.md"
    peers = parse_peers(peers_md.read_text()) if peers_md.is_file() else {}
    rows, skipped = [], []
    for name in args.models:
        path = SHARED / "models" / "mlperf_tiny" / f"{name}.tflite"
        if not path.is_file():
            skipped.append(name)
            print(f"skip {name}: {path} absent", file=sys.stderr)
            continue
        for backend in args.backends:
            optimize = args.optimize if backend == "compiled" else "speed"
            work = ROOT / "build" / "bench" / f"mlperf-{args.board}-{backend}-{optimize}-{name}"
            # `tinyhost bench`'s defaults: the compiled backend's default --patch included
            result = bench(read_model(path), args.board, backend=backend, runs=args.runs,
                           work_dir=work, optimize=optimize,
                           patch=default_patch(backend, optimize))  # fmt: skip
            rows.append(compare(result, peers.get(f"mlperf_tiny/{name}", {})))
    if args.json:
        json.dump({"board": args.board, "models": rows, "skipped": skipped}, sys.stdout)
        print()
    else:
        print_table(rows, args.board)
    return 0 if all(r["bit_exact"] and r["repeatable"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
