"""Per-element kernels on Cortex-M55 (issue 16): exact executed instructions of AVERAGE_POOL_2D,
MAX_POOL_2D, MUL, MEAN, ADD / SUB (with and without the host's tables), the LUT activations
and int8 SOFTMAX (and pointwise layers of few input channels, convolutions of K <= 32
(th_nn_mve_conv_s8's four-pixel paths), depthwise layers of 17 to 32 taps), the Helium (MVE)
build beside the DSP build on the same board.

    python bench/mve_ops.py [--board mps3-an547] [--random N] [--json] [--movement]

Builds the kernel test firmware (tests/kernels/firmware, big buffers) twice for the board,
with TH_NN_FORCE_NO_MVE (the DSP path, what the board ran before the MVE paths) and without,
runs fixed layer shapes (MLPerf Tiny pools, typical MUL / MEAN / ADD / SOFTMAX shapes) and N
random cases (tests/kernels/cases_ops.py) under the QEMU icount plugin, checks every output
against the NumPy reference and prints instructions per call and per element and the gain of
the MVE path. Numbers, not a test.

The data movement (PAD, CONCATENATION, SPLIT, TRANSPOSE, STRIDED_SLICE, GATHER,
DEPTH_TO_SPACE, SPACE_TO_DEPTH) and MAXIMUM / MINIMUM are measured too (fixed shapes and N / 2
random cases of tests/kernels/cases_movement.py); `--movement` measures only them.
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

from kernels.cases import ConvCase, Op, RngDraw, check_result  # noqa: E402
from kernels.cases_movement import MoveCase, MoveOp, move_case  # noqa: E402
from kernels.cases_ops import (  # noqa: E402
    OPS_ADD_LUT_SOFTMAX,
    OPS_PER_ELEMENT,
    AddCase,
    LutCase,
    MeanCase,
    MulCase,
    OpCase,
    PoolCase,
    SoftmaxCase,
    op_case,
)
from kernels.layers import layer_case  # noqa: E402
from kernels.target import build_firmware, run_cases  # noqa: E402
from tinyhost.arith.activations import SoftmaxParams, calculate_input_radius  # noqa: E402
from tinyhost.arith.elementwise import AddParams, MulParams  # noqa: E402
from tinyhost.arith.fixedpoint import quantize_multiplier  # noqa: E402
from tinyhost.arith.pool import PoolParams  # noqa: E402
from tinyhost.arith.reduce import MeanParams  # noqa: E402
from tinyhost.deploy import MARKER_OVERHEAD  # noqa: E402


def _x(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, shape).astype(np.int8)


def _pool(op: Op, hwc: tuple[int, int, int], k: int, s: int, same: bool = False,
          scratch: bool = True) -> PoolCase:  # fmt: skip
    h, w, c = hwc
    kh, kw = (h, w) if k == 0 else (k, k)
    if same:
        oh, ow = -(-h // s), -(-w // s)
        th, tw = max((oh - 1) * s + kh - h, 0), max((ow - 1) * s + kw - w, 0)
    else:
        oh, ow, th, tw = (h - kh) // s + 1, (w - kw) // s + 1, 0, 0
    p = PoolParams(stride_h=s, stride_w=s, filter_h=kh, filter_w=kw, pad_top=th // 2,
                   pad_left=tw // 2, pad_bottom=th - th // 2, pad_right=tw - tw // 2)
    return PoolCase(op, _x((1, h, w, c)), p, (1, oh, ow, c), no_scratch=not scratch)


def _mul(shape: tuple[int, ...], other: tuple[int, ...]) -> MulCase:
    p = MulParams(input1_offset=5, input2_offset=-3, output_offset=-7,
                  output_multiplier=1_518_500_250, output_shift=-8, activation_min=-128,
                  activation_max=127)
    return MulCase(Op.MUL, _x(shape, 1), _x(other, 2), p)


def _add(op: Op, shape: tuple[int, ...], other: tuple[int, ...], tables: bool = True,
         relu6: bool = False) -> AddCase:  # fmt: skip
    """Scales 0.05 and 0.03 in, 0.06 out (TFLM's CalculateOpDataAdd), ResNet-like offsets."""
    m1, e1 = quantize_multiplier(0.05 / 0.1)
    m2, e2 = quantize_multiplier(0.03 / 0.1)
    mo, eo = quantize_multiplier(0.1 / ((1 << 20) * 0.06))
    p = AddParams(input1_offset=5, input2_offset=-3, output_offset=-7, left_shift=20,
                  input1_multiplier=m1, input1_shift=e1, input2_multiplier=m2,
                  input2_shift=e2, output_multiplier=mo, output_shift=eo,
                  activation_min=-7 if relu6 else -128, activation_max=93 if relu6 else 127)
    return AddCase(op, _x(shape, 1), _x(other, 2), p, tables=tables)


def _add16(op: Op, shape: tuple[int, ...], other: tuple[int, ...]) -> AddCase:
    """int16: symmetric, left shift 15 (TFLM's int16 derivation), scales as _add."""
    p = replace(_add(Op.ADD, shape, other).p, input1_offset=0, input2_offset=0,
                output_offset=0, left_shift=15, activation_min=-32768, activation_max=32767)
    rng = np.random.default_rng(6)
    a, b = (rng.integers(-32768, 32768, s).astype(np.int16) for s in (shape, other))
    return AddCase(op, a, b, p)


def _lut(n: int) -> LutCase:
    return LutCase(Op.LUT, _x((n,), 3), _x((256,), 4))


def _softmax(rows: int, depth: int, scale: float = 0.1) -> SoftmaxCase:
    m, shift = quantize_multiplier(scale * float(1 << 26))
    p = SoftmaxParams(m, shift, -calculate_input_radius(5, shift))
    return SoftmaxCase(Op.SOFTMAX, _x((rows, depth), 5), p)


def _dw(hw: tuple[int, int], cin: int, cout: int, k: int | tuple[int, int],
        stride: int) -> ConvCase:  # fmt: skip
    """A depthwise layer given the DSP path's faster scratch (the MVE path ignores it)."""
    return replace(layer_case(Op.DW, hw, cin, cout, k, stride), fast_scratch=True)


def _mean(hwc: tuple[int, int, int]) -> MeanCase:
    p = MeanParams(axes=(1, 2), keep_dims=True, input_zero_point=-3, output_zero_point=4,
                   multiplier=1_300_000_000, shift=-1)
    return MeanCase(Op.MEAN, _x((1, *hwc)), p)


def _move(op: MoveOp, *inputs: np.ndarray | tuple[int, ...], args: tuple[int, ...] = ()
          ) -> MoveCase:  # fmt: skip
    arrays = tuple(_x(a, i) if isinstance(a, tuple) else a for i, a in enumerate(inputs))
    return MoveCase(op, arrays, args)


def _slice(shape: tuple[int, ...], begin: tuple[int, ...], stride: tuple[int, ...]) -> MoveCase:
    count = tuple(len(range(b, n, s)) for n, b, s in zip(shape, begin, stride, strict=True))
    return _move(MoveOp.STRIDED_SLICE, shape, args=(*begin, *stride, *count))


def movement_cases() -> list[tuple[str, MoveCase]]:
    """Data movement and MAXIMUM / MINIMUM: typical layer shapes (SAME padding of a conv
    input, channel concatenations of a detector head, NHWC <-> NCHW transposes)."""
    idx = np.random.default_rng(3).integers(0, 64, (1, 48)).astype(np.int32)
    live = np.delete(np.arange(64, dtype=np.uint16), [3, 17, 40, 41])
    prelu = (5, -3, -7, 1_518_500_250, -1, 1_300_000_000, -8)  # offsets, pos and neg
    sqdiff = (5, -3, -100, 7, 1_518_500_250, -1, 1_300_000_000, -1, 1_200_000_000, -19, -128,
              127)  # arith.binary.SquaredDifferenceParams
    return [
        ("pad 1 px 24x24x16", _move(MoveOp.PAD, (1, 24, 24, 16), args=(0, 1, 1, 0, 0, 1, 1, 0,
                                                                       0))),
        ("pad 1 px 48x48x3", _move(MoveOp.PAD, (1, 48, 48, 3), args=(0, 0, 0, 0, 0, 1, 1, 0,
                                                                     -5))),
        ("pad channels 16x16x20->32", _move(MoveOp.PAD, (1, 16, 16, 20),
                                            args=(0, 0, 0, 0, 0, 0, 0, 12, 3))),
        ("concat c 16x16x(32+32)", _move(MoveOp.CONCAT, (1, 16, 16, 32), (1, 16, 16, 32),
                                         args=(3,))),
        ("concat c 16x16x(8+24+5)", _move(MoveOp.CONCAT, (1, 16, 16, 8), (1, 16, 16, 24),
                                          (1, 16, 16, 5), args=(3,))),
        ("concat h (8+8)x16x32", _move(MoveOp.CONCAT, (1, 8, 16, 32), (1, 8, 16, 32),
                                       args=(1,))),
        ("split c 16x16x64 -> 2", _move(MoveOp.SPLIT, (1, 16, 16, 64), args=(3, 32, 32))),
        ("split c 16x16x24 -> 3", _move(MoveOp.SPLIT, (1, 16, 16, 24), args=(3, 8, 8, 8))),
        ("transpose nhwc->nchw 32x32x16", _move(MoveOp.TRANSPOSE, (1, 32, 32, 16),
                                                args=(0, 3, 1, 2))),
        ("transpose nchw->nhwc 16x32x32", _move(MoveOp.TRANSPOSE, (1, 16, 32, 32),
                                                args=(0, 2, 3, 1))),
        ("transpose hw 24x20x32", _move(MoveOp.TRANSPOSE, (1, 24, 20, 32), args=(0, 2, 1, 3))),
        ("transpose 2d 40x300", _move(MoveOp.TRANSPOSE, (40, 300), args=(1, 0))),
        ("slice stride 2 hw 32x32x16", _slice((1, 32, 32, 16), (0, 0, 0, 0), (1, 2, 2, 1))),
        ("slice stride 2 c 16x16x64", _slice((1, 16, 16, 64), (0, 0, 0, 1), (1, 1, 1, 2))),
        ("slice crop 32x32x16", _slice((1, 32, 32, 16), (0, 4, 4, 0), (1, 1, 1, 1))),
        ("maximum same 16x16x32", _move(MoveOp.MAXIMUM, (1, 16, 16, 32), (1, 16, 16, 32))),
        ("maximum channel 16x16x32", _move(MoveOp.MAXIMUM, (1, 16, 16, 32), (32,))),
        ("minimum scalar 16x16x32", _move(MoveOp.MINIMUM, (1, 16, 16, 32), (1,))),
        ("minimum same 7x7x5", _move(MoveOp.MINIMUM, (1, 7, 7, 5), (1, 7, 7, 5))),
        ("prelu channel 16x16x32", _move(MoveOp.PRELU, (1, 16, 16, 32), (32,), args=prelu)),
        ("prelu same 16x16x32", _move(MoveOp.PRELU, (1, 16, 16, 32), (1, 16, 16, 32),
                                      args=prelu)),
        ("sqdiff same 16x16x32", _move(MoveOp.SQUARED_DIFFERENCE, (1, 16, 16, 32),
                                       (1, 16, 16, 32), args=sqdiff)),
        ("sqdiff channel 16x16x32", _move(MoveOp.SQUARED_DIFFERENCE, (1, 16, 16, 32), (32,),
                                          args=sqdiff)),
        ("gather 48 rows of 32", _move(MoveOp.GATHER, (1, 1, 64, 32), idx)),
        ("gather 48 of 64 bytes", _move(MoveOp.GATHER, (1, 1, 64, 1), idx)),
        ("expand 12x12: 60 of 64 live", _move(MoveOp.EXPAND_CHANNELS, (144, 60), (64,), live)),
        ("depth_to_space 2 8x8x64", _move(MoveOp.DEPTH_TO_SPACE, (1, 8, 8, 64), args=(2,))),
        ("space_to_depth 2 16x16x16", _move(MoveOp.SPACE_TO_DEPTH, (1, 16, 16, 16),
                                            args=(2,))),
    ]


def fixed_cases() -> list[tuple[str, OpCase | ConvCase | MoveCase]]:
    return [
        ("kws avgpool global 25x5x64", _pool(Op.AVGPOOL, (25, 5, 64), 0, 1)),
        ("vww avgpool global 3x3x256", _pool(Op.AVGPOOL, (3, 3, 256), 0, 1)),
        ("resnet avgpool global 8x8x64", _pool(Op.AVGPOOL, (8, 8, 64), 0, 1)),
        ("avgpool 3x3 s1 same 16x16x32", _pool(Op.AVGPOOL, (16, 16, 32), 3, 1, True)),
        ("avgpool 3x3 s1 same direct", _pool(Op.AVGPOOL, (16, 16, 32), 3, 1, True, False)),
        ("avgpool 2x2 s2 24x24x16", _pool(Op.AVGPOOL, (24, 24, 16), 2, 2)),
        ("avgpool 3x3 s1 12x12x5", _pool(Op.AVGPOOL, (12, 12, 5), 3, 1, True)),
        ("maxpool 2x2 s2 24x24x16", _pool(Op.MAXPOOL, (24, 24, 16), 2, 2)),
        ("maxpool 3x3 s2 same 24x24x32", _pool(Op.MAXPOOL, (24, 24, 32), 3, 2, True)),
        ("maxpool 3x3 s1 same 16x16x32", _pool(Op.MAXPOOL, (16, 16, 32), 3, 1, True)),
        ("maxpool 3x3 s1 12x12x5", _pool(Op.MAXPOOL, (12, 12, 5), 3, 1, True)),
        ("mul same 16x16x32", _mul((1, 16, 16, 32), (1, 16, 16, 32))),
        ("mul channel 16x16x32", _mul((1, 16, 16, 32), (1, 1, 1, 32))),
        ("mul scalar 16x16x32", _mul((1, 16, 16, 32), (1, 1, 1, 1))),
        ("mul spatial 16x16x32", _mul((1, 16, 16, 32), (1, 16, 16, 1))),
        ("mul same 7x7x5", _mul((1, 7, 7, 5), (1, 7, 7, 5))),
        ("mean hw 16x16x32", _mean((16, 16, 32))),
        ("mean hw 25x5x64", _mean((25, 5, 64))),
        ("mean hw 12x12x5", _mean((12, 12, 5))),
        ("add same 16x16x32 tables", _add(Op.ADD, (1, 16, 16, 32), (1, 16, 16, 32))),
        ("add same 16x16x32 relu6", _add(Op.ADD, (1, 16, 16, 32), (1, 16, 16, 32),
                                         relu6=True)),
        ("sub same 16x16x32 tables", _add(Op.SUB, (1, 16, 16, 32), (1, 16, 16, 32))),
        ("add channel 16x16x32 tables", _add(Op.ADD, (1, 16, 16, 32), (1, 1, 1, 32))),
        ("add spatial 16x16x32 tables", _add(Op.ADD, (1, 16, 16, 32), (1, 16, 16, 1))),
        ("sub scalar 16x16x32 tables", _add(Op.SUB, (1, 1, 1, 1), (1, 16, 16, 32))),
        ("add same 7x7x5 tables", _add(Op.ADD, (1, 7, 7, 5), (1, 7, 7, 5))),
        ("add same 4x4x7 (no tables)", _add(Op.ADD, (1, 4, 4, 7), (1, 4, 4, 7), False)),
        ("sub channel 8x8x13 (no tables)", _add(Op.SUB, (1, 8, 8, 13), (1, 1, 1, 13),
                                                False)),
        ("add16 same 16x16x32", _add16(Op.ADD16, (1, 16, 16, 32), (1, 16, 16, 32))),
        ("sub16 channel 16x16x32", _add16(Op.SUB16, (1, 16, 16, 32), (1, 1, 1, 32))),
        ("lut 16x16x32", _lut(16 * 16 * 32)),
        ("lut 7x7x5", _lut(7 * 7 * 5)),
        ("softmax 1x2 (vww)", _softmax(1, 2)),
        ("softmax 1x10 (ic)", _softmax(1, 10)),
        ("softmax 1x12 (kws)", _softmax(1, 12)),
        ("softmax 4x100", _softmax(4, 100)),
        ("softmax 1x1000 narrow", _softmax(1, 1000, 0.01)),
        ("pw 48x48x4->16 (MACs)", layer_case(Op.CONV, (48, 48), 4, 16, 1, 1)),
        ("pw 24x24x4->32 (MACs)", layer_case(Op.CONV, (24, 24), 4, 32, 1, 1)),
        ("pw 32x32x3->8 (MACs)", layer_case(Op.CONV, (32, 32), 3, 8, 1, 1)),
        ("pw 32x32x8->16 (MACs)", layer_case(Op.CONV, (32, 32), 8, 16, 1, 1)),
        ("vww pw 48x48x8->16 (MACs)", layer_case(Op.CONV, (48, 48), 8, 16, 1, 1)),
        ("vww pw 24x24x16->32 (MACs)", layer_case(Op.CONV, (24, 24), 16, 32, 1, 1)),
        ("vww pw 24x24x32->32 (MACs)", layer_case(Op.CONV, (24, 24), 32, 32, 1, 1)),
        ("vww conv 3x3 s2 96x96x3->8 (MACs)", layer_case(Op.CONV, (96, 96), 3, 8, 3, 2)),
        ("conv 3x3 s1 24x24x2->16 (MACs)", layer_case(Op.CONV, (24, 24), 2, 16, 3, 1)),
        ("kws dw3x3 s1 25x5x64 (MACs)", _dw((25, 5), 64, 64, 3, 1)),
        ("vww dw3x3 s1 48x48x8 (MACs)", _dw((48, 48), 8, 8, 3, 1)),
        ("vww dw3x3 s2 12x12x128 (MACs)", _dw((12, 12), 128, 128, 3, 2)),
        ("dw 5x5 s1 24x24x32 (MACs)", _dw((24, 24), 32, 32, 5, 1)),
        ("dw 5x5 s2 24x24x32 (MACs)", _dw((24, 24), 32, 32, 5, 2)),
        ("dw 5x5 s1 6x6x64 (MACs)", _dw((6, 6), 64, 64, 5, 1)),
        ("dw 7x3 s1 20x12x16 (MACs)", _dw((20, 12), 16, 16, (7, 3), 1)),
        ("dw 1x25 s1 1x60x16 (MACs)", _dw((1, 60), 16, 16, (1, 25), 1)),
        *movement_cases(),
    ]


def elements(case: OpCase | ConvCase | MoveCase) -> int:
    if isinstance(case, ConvCase):
        return case.macs
    return int(case.x.size if isinstance(case, PoolCase | MeanCase) else np.prod(case.out_shape))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps3-an547")
    ap.add_argument("--random", type=int, default=40, help="random cases (cases_ops)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="JSON rows on stdout")
    ap.add_argument("--movement", action="store_true",
                    help="only the data movement and MAXIMUM / MINIMUM cases")
    args = ap.parse_args(argv)
    entries = list(movement_cases()) if args.movement else fixed_cases()
    draw = RngDraw(np.random.default_rng(args.seed))
    ops = (*OPS_PER_ELEMENT, *OPS_ADD_LUT_SOFTMAX)
    for i in range(0 if args.movement else args.random):
        case = op_case(draw, ops[i % len(ops)])
        entries.append((f"random {i} {case.op.name.lower()}", case))
    for i in range(args.random // 2):
        move = move_case(draw, tuple(MoveOp)[i % len(MoveOp)])
        entries.append((f"random {i} {move.op.name.lower()}", move))
    cases = [c for _, c in entries]
    counts: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory(prefix="th-mvebench-") as tmp:
        for path, no_mve in (("dsp", True), ("mve", False)):
            fw = build_firmware(args.board, Path(tmp), big=True, no_mve=no_mve)
            run = run_cases(fw, cases, interleaved=no_mve, icount=True)  # conv: DSP layout
            for (name, case), result in zip(entries, run.results, strict=True):
                problem = check_result(case, result)
                if problem is not None:
                    raise SystemExit(f"{name} [{path}]: differs from the reference: {problem}")
            counts[path] = [c - MARKER_OVERHEAD for c in run.counts]
    out = sys.stderr if args.json else sys.stdout
    rows = []
    print(f"{'case':32} {'elements':>8} {'dsp':>10} {'mve':>10} {'dsp/el':>7} {'mve/el':>7} "
          f"{'gain':>6}", file=out)
    for i, (name, case) in enumerate(entries):
        n, d, m = elements(case), counts["dsp"][i], counts["mve"][i]
        rows.append({"case": name, "op": case.op.name, "elements": n, "dsp": d, "mve": m})
        if not name.startswith("random"):
            print(f"{name:32} {n:>8} {d:>10,} {m:>10,} {d / n:>7.2f} {m / n:>7.2f} "
                  f"{d / m:>5.2f}x", file=out)
    for op in (*ops, *MoveOp):
        gains = [r["dsp"] / r["mve"] for r in rows if r["op"] == op.name
                 and r["case"].startswith("random")]  # fmt: skip
        if gains:
            print(f"random {op.name:10} n={len(gains):3} median gain {np.median(gains):.2f}x "
                  f"worst {min(gains):.2f}x best {max(gains):.2f}x", file=out)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
