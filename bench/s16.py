"""Issue 17's 16x8 kernels (int16 activations, int8 weights): exact instructions per MAC of
CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED on a QEMU board.

    python bench/s16.py [--board mps2-an386] [--backend compiled] [--json]

One graph of independent single-op 16x8 layers (tests/graphs_16x8.py; the first three are the
shapes of chain_16x8, the 16x8 device test's model), run once through the chosen backend;
every output compared with the NumPy reference. Prints instructions per op and per MAC (the
whole kernel call: checks, taps, requantization). Numbers, not pass/fail.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from graphs_16x8 import conv_16x8, fc_16x8, int16_input  # noqa: E402
from tinyhost import reference  # noqa: E402
from tinyhost.deploy.runner import run_model  # noqa: E402
from tinyhost.ir import Graph, Padding  # noqa: E402


def layers(rng: np.random.Generator) -> list[tuple[str, Graph, int]]:
    """(name, single-op graph, MACs) per layer."""
    out = []

    def conv(name, shape, cout, k, depthwise=False, stride=1, padding=Padding.SAME):
        g = conv_16x8(rng, shape, cout, (k, k), depthwise=depthwise, stride=stride,
                      padding=padding)
        y = g.tensors[g.ops[0].outputs[0]].shape
        macs = int(np.prod(y)) * k * k * (1 if depthwise else shape[3])
        out.append((name, g, macs))

    def fc(name, depth, units):
        out.append((name, fc_16x8(rng, 1, depth, units), depth * units))

    conv("conv 3x3 8x8x3->8", (1, 8, 8, 3), 8, 3)
    conv("dw 3x3 s2 8x8x8 x2", (1, 8, 8, 8), 16, 3, depthwise=True, stride=2)
    fc("fc 256->10", 256, 10)
    conv("conv 3x3 16x16x16->16", (1, 16, 16, 16), 16, 3)
    conv("conv 1x1 16x16x32->32", (1, 16, 16, 32), 32, 1)
    conv("dw 3x3 s1 16x16x32", (1, 16, 16, 32), 32, 3, depthwise=True)
    fc("fc 1024->64", 1024, 64)
    return out


def merged(parts: list[Graph]) -> Graph:
    """The single-op graphs side by side in one graph (tensor indices shifted)."""
    tensors, ops, inputs, outputs = [], [], [], []
    for g in parts:
        base = len(tensors)
        tensors.extend(replace(t, name=f"{t.name}{len(ops)}") for t in g.tensors)

        def sh(i: int | None, base: int = base) -> int | None:
            return None if i is None else i + base

        ops.extend(replace(op, inputs=tuple(sh(i) for i in op.inputs),
                           outputs=tuple(sh(i) for i in op.outputs)) for op in g.ops)
        inputs.extend(i + base for i in g.inputs)
        outputs.extend(i + base for i in g.outputs)
    return Graph(tensors=tuple(tensors), ops=tuple(ops), inputs=tuple(inputs),
                 outputs=tuple(outputs), name="s16_bench")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--backend", default="compiled", choices=["compiled", "interpreter"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(7)
    parts = layers(rng)
    graph = merged([g for _, g, _ in parts])
    xs = [int16_input(rng, g) for _, g, _ in parts]
    with tempfile.TemporaryDirectory() as tmp:
        report = run_model(graph, args.board, [xs], backend=args.backend, work_dir=Path(tmp))
    want = reference.run(graph, xs).outputs
    for got, ref in zip(report.runs[0].outputs, want, strict=True):
        if not np.array_equal(got, np.asarray(ref).reshape(got.shape)):
            raise SystemExit("output differs from the reference")
    counts = dict(zip(report.op_indices, report.runs[0].latency.per_op, strict=True))
    rows = [{"layer": name, "macs": macs, "instructions": counts[i],
             "instructions_per_mac": counts[i] / macs}
            for i, (name, _, macs) in enumerate(parts)]
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print(f"{r['layer']:<26} {r['macs']:>8} MACs {r['instructions']:>10} instr "
                  f"{r['instructions_per_mac']:6.2f} / MAC")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
