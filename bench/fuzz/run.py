"""Coverage-guided fuzzing of everything that parses outside input (issue 19).

    python bench/fuzz/run.py [--minutes M | --runs N] [--targets reader blob proto] [--json]
    python bench/fuzz/run.py --make-corpus      # rewrite the committed seed corpora

Targets (libFuzzer engines, each starting from its committed corpus in bench/fuzz/corpus/):
- reader: the .tflite reader, validation pass and inspect (atheris, fuzz_reader.py);
- blob: the interpreter's blob validator th_interp_init, and an invoke of every accepted blob
  (fuzz_blob.c, clang -fsanitize=fuzzer,address,undefined);
- proto: the serial frame decoder and request dispatcher th_proto (fuzz_proto.c, same).
Reports per target: executions, coverage (libFuzzer's `cov`: edges; atheris: Python and
native edges), corpus size and crashes (inputs that crashed are kept in build/fuzz/crashes/).
The compiled backend's generated model init parses nothing (every parameter is a literal in
the generated code), so it has no target.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BUILD = ROOT / "build" / "fuzz"
CORPUS = HERE / "corpus"
TARGETS = ("reader", "blob", "proto")
SEED_MODELS = ("digits_tf_int8", "reshape_fc_softmax_int8", "pad_concat_requantize_int8",
               "elementwise_add_sub_mul_broadcast_int8", "squeeze_int8",
               # one per op family (sequence state, int16, int4, row-wise ops), so the
               # fuzzer starts inside their interpreter adapters
               "families/lstm_stack", "families/svdf_kws", "families/chain_16x8",
               "families/int16_activations", "families/int4_chain",
               "families/rowwise_int8", "families/elementwise_int8")  # fmt: skip
_STATS = re.compile(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)")


def _clang() -> str:
    clang = shutil.which("clang")
    if clang is None:
        raise SystemExit("clang not found: apt-get install clang (make setup installs it)")
    return clang


def build_target(name: str) -> Path:
    """The libFuzzer binary of `blob` or `proto` (built once, then reused)."""
    BUILD.mkdir(parents=True, exist_ok=True)
    exe = BUILD / f"fuzz_{name}"
    interp, proto = ROOT / "firmware" / "interpreter", ROOT / "firmware" / "protocol"
    if name == "blob":
        table = _op_table()
        sources = [HERE / "fuzz_blob.c", interp / "th_interp.c", table,
                   *sorted(interp.glob("ops_*.c")), *sorted((ROOT / "kernels_c").rglob("*.c"))]
        includes = [interp, ROOT / "firmware" / "include", ROOT / "kernels_c" / "include",
                    ROOT / "kernels_c"]  # fmt: skip
    else:
        sources, includes = [HERE / "fuzz_proto.c", proto / "th_proto.c"], [proto]
    cmd = [_clang(), "-std=c99", "-g", "-O1", "-fsanitize=fuzzer,address,undefined",
           "-fno-sanitize-recover=all", "-Wall", "-Wextra", "-Werror",
           *(f"-I{i}" for i in includes), *map(str, sources), "-o", str(exe)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"building fuzz_{name} failed:\n{proc.stderr[-3000:]}")
    return exe


def _op_table() -> Path:
    """The all-ops adapter table a convert run writes (every adapter whose kernel exists)."""
    from tinyhost.boards import load_board
    from tinyhost.codegen.interpreter import convert
    from tinyhost.tflite import read_model

    model = ROOT / "tests" / "models" / f"{SEED_MODELS[0]}.tflite"
    out = convert(read_model(model), load_board("host"), BUILD / "table", all_ops=True).out_dir
    return out / "th_ops_table.c"


def command(name: str) -> list[str]:
    if name == "reader":
        return [sys.executable, str(HERE / "fuzz_reader.py")]
    return [str(build_target(name))]


def run(name: str, runs: int | None, seconds: int | None) -> dict:
    """Fuzz one target from a scratch copy of its corpus; its numbers."""
    crashes = BUILD / "crashes"
    crashes.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"th-fuzz-{name}-") as tmp:
        work = Path(tmp) / "corpus"
        shutil.copytree(CORPUS / name, work)
        limits = [f"-runs={runs}"] if runs is not None else [f"-max_total_time={seconds}"]
        cmd = [*command(name), str(work), *limits, "-timeout=10", "-rss_limit_mb=2048",
               f"-artifact_prefix={crashes}/{name}-", "-print_final_stats=1"]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    log = proc.stdout + proc.stderr
    stats = _STATS.findall(log)
    done = re.search(r"Done (\d+) runs in (\d+) second", log)
    execs = int(done.group(1)) if done else (int(stats[-1][0]) if stats else 0)
    return {"target": name, "executions": execs,
            "seconds": int(done.group(2)) if done else None,
            "edges": int(stats[-1][1]) if stats else None,
            "features": int(stats[-1][2]) if stats else None,
            "corpus": int(stats[-1][3]) if stats else None,
            "crashed": proc.returncode != 0, "exit_code": proc.returncode,
            "log_tail": "" if proc.returncode == 0 else log[-3000:]}  # fmt: skip


def make_corpus() -> None:
    """Seeds: small project models (reader), their blobs (blob: two arena-size bytes first),
    and request sequences, good and broken (proto: the records fuzz_proto.c reads)."""
    import struct

    from tinyhost.codegen.blob import build_blob
    from tinyhost.tflite import read_model

    for name in TARGETS:
        shutil.rmtree(CORPUS / name, ignore_errors=True)
        (CORPUS / name).mkdir(parents=True)
    for stem in SEED_MODELS:
        path = ROOT / "tests" / "models" / f"{stem}.tflite"
        name = Path(stem).name
        (CORPUS / "reader" / f"{name}.tflite").write_bytes(path.read_bytes())
        blob = build_blob(read_model(path))
        arena = min(blob.arena_bytes, 0xFFFF)
        (CORPUS / "blob" / f"{name}.bin").write_bytes(struct.pack("<H", arena) + blob.data)

    def frame(msg_type: int, seq: int, payload: bytes = b"") -> bytes:
        body = bytes([msg_type, seq]) + payload
        return bytes([len(body) + 1, 0]) + body  # even first byte: a well-formed frame

    def raw(data: bytes) -> bytes:
        return bytes([len(data) + 1, 1]) + data  # odd first byte: fed as is

    sequences = {
        "session": frame(1, 1) + frame(2, 2, struct.pack("<I", 0))
        + frame(3, 3, struct.pack("<BI", 0, 0) + bytes(64)) + frame(4, 4)
        + frame(5, 5, struct.pack("<BIH", 0, 0, 0)) + frame(6, 6, struct.pack("<H", 0)),
        "load": frame(7, 1, struct.pack("<II", 0, 8) + bytes(8)),
        "garbage": raw(bytes(range(1, 60))) + frame(1, 2),
        "resync": raw(b"\x00\x05\x01\x02") + frame(2, 3, struct.pack("<I", 4)),
    }  # fmt: skip
    for name, data in sequences.items():
        (CORPUS / "proto" / f"{name}.bin").write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, help="fuzz each target this long")
    ap.add_argument("--runs", type=int, help="fuzz each target for this many executions")
    ap.add_argument("--targets", nargs="*", default=list(TARGETS), choices=TARGETS)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--make-corpus", action="store_true", help="rewrite the seed corpora")
    args = ap.parse_args(argv)
    if args.make_corpus:
        make_corpus()
        return 0
    seconds = None if args.runs is not None else int(60 * (args.minutes or 1.0))
    rows = [run(t, args.runs, seconds) for t in args.targets]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            print(f"{r['target']:<7} {r['executions']:>10,} executions  {r['seconds']} s  "
                  f"edges {r['edges']}  corpus {r['corpus']}  "
                  f"{'CRASH (exit ' + str(r['exit_code']) + ')' if r['crashed'] else '0 crashes'}")
            if r["crashed"]:
                print(r["log_tail"])
    return 1 if any(r["crashed"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
