"""AVERAGE_POOL_2D on chosen shapes (default: issue 14's sweep rows above 6 instructions per
input element on main, session 16): exact instructions per input element on QEMU, outputs
checked against the NumPy reference. `python bench/avg_rows.py [HxWxC:KHxKW:S:same|valid ...]`;
AVG_ROWS_WORK=DIR keeps the build (model, firmware ELF) in DIR.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from graph_builder import GraphBuilder  # noqa: E402
from reference_single_op import q  # noqa: E402
from tinyhost import reference  # noqa: E402
from tinyhost.deploy.runner import run_model  # noqa: E402
from tinyhost.ir import OpKind, Padding, Pool2DOptions  # noqa: E402

ROWS = ["11x8x6:5x6:2:valid", "7x44x31:7x2:3:same", "46x39x12:6x5:2:same",
        "14x14x38:5x5:1:valid", "17x25x39:7x7:1:valid", "30x20x64:4x6:1:valid",
        "32x21x38:6x2:1:valid", "11x28x2:6x2:2:same", "48x12x52:5x6:1:same",
        "37x41x11:6x4:1:valid", "45x36x21:7x7:1:same", "21x21x54:6x6:1:same",
        "46x20x18:4x6:1:same", "45x5x49:6x5:1:same", "6x19x59:5x7:1:same",
        "11x41x5:3x7:1:same"]  # fmt: skip


def main(argv: list[str]) -> int:
    specs = argv or ROWS
    rng = np.random.default_rng(0)
    for start in range(0, len(specs), 16):
        b = GraphBuilder(rng)
        ins, outs, els = [], [], []
        for s in specs[start:start + 16]:
            hwc, k, st, pad = s.split(":")
            h, w, c = map(int, hwc.split("x"))
            kh, kw = map(int, k.split("x"))
            stride = int(st)
            padding = Padding.SAME if pad == "same" else Padding.VALID
            if padding is Padding.SAME:
                oh, ow = -(-h // stride), -(-w // stride)
            else:
                oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
            quant = q(0.05, int(rng.integers(-128, 128)))
            x = b.tensor("x", (1, h, w, c), quant=quant)
            y = b.tensor("y", (1, oh, ow, c), quant=quant)
            b.op(OpKind.AVERAGE_POOL_2D, (x,), (y,),
                 Pool2DOptions(padding, stride, stride, kh, kw))
            ins.append(x)
            outs.append(y)
            els.append(h * w * c)
        graph = b.graph(ins, outs, "avg_rows")
        x = [rng.integers(-128, 128, graph.tensors[t].shape).astype(np.int8)
             for t in graph.inputs]  # fmt: skip
        with tempfile.TemporaryDirectory() as work:
            report = run_model(graph, "mps2-an386", [x], backend="compiled",
                               work_dir=Path(os.environ.get("AVG_ROWS_WORK", work)))
        want = reference.run(graph, x).outputs
        counts = dict(zip(report.op_indices, report.runs[0].latency.per_op, strict=True))
        for i, (got, ref) in enumerate(zip(report.runs[0].outputs, want, strict=True)):
            ok = np.array_equal(got, np.asarray(ref).reshape(got.shape))
            print(f"{counts[i] / els[i]:6.2f} {specs[start + i]:24s} el={els[i]:6d} "
                  f"instr={counts[i]:7d} {'ok' if ok else 'MISMATCH'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
