"""QUANTIZE to and from int32 (int8 / int16 -> int32, int32 -> int8 / int16; TFLite Micro
runs those four and refuses int32 -> int32): the reference against TFLite Micro bit for bit,
including the int32 wraps of its arithmetic (x - zero point for int32 inputs, the sum with
the output zero point for int32 outputs); and th_requantize_*_s32 / th_requantize_s32_*
(ASan + UBSan, portable build) against the reference on the same inputs."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from reference_single_op import q, run_reference, run_tflm, single_op_graph
from test_kernels_misc import Kernels, _start, assert_same, buf, i32, out
from tinyhost.arith.activations import requantize_params
from tinyhost.ir import NoOptions, OpKind, Tensor

PAIRS = ((np.int8, np.int32), (np.int16, np.int32), (np.int32, np.int8), (np.int32, np.int16))


def _zero_point(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(rng.integers(max(lo, -(1 << 30)), min(hi, 1 << 30) + 1))


def _cases():
    """(graph, input) per pair: random scales and zero points over the full range of each
    type, plus edges where TFLM's int32 arithmetic wraps."""
    rng = np.random.default_rng(32)
    cases = []
    for src, dst in PAIRS:
        lo_in, hi_in = np.iinfo(src).min, np.iinfo(src).max
        lo_out, hi_out = np.iinfo(dst).min, np.iinfo(dst).max
        for k in range(12):
            si, so = (float(2.0 ** rng.uniform(-14, 3)) for _ in range(2))
            zi = _zero_point(rng, lo_in, hi_in) if k % 3 else 0
            zo = _zero_point(rng, lo_out, hi_out) if k % 2 else 0
            x = rng.integers(lo_in, int(hi_in) + 1, 400)
            x[:100] = rng.integers(max(lo_in, -70000), min(hi_in, 70000) + 1, 100)
            x[-4:] = [lo_in, hi_in, 0, zi]
            cases.append((src, dst, si, so, zi, zo, x.astype(src)))
    # The sum with the output zero point wraps (rescaled values near 2^31).
    edge = np.array([32767, -32768, 0, 100], np.int16)
    cases += [(np.int16, np.int32, 1.0, 1 / 65535.9, 0, 1 << 30, edge),
              (np.int16, np.int32, 1.0, 1 / 65535.9, 0, -(1 << 30), edge),
              (np.int32, np.int16, 1.0, 1.0, -1000, 0,
               np.array([2**31 - 1, -(2**31), 0, 5], np.int32))]
    out = []
    for src, dst, si, so, zi, zo, x in cases:
        ts = [Tensor("x", x.shape, np.dtype(src), quant=q(si, zi)),
              Tensor("y", x.shape, np.dtype(dst), quant=q(so, zo))]
        out.append((single_op_graph(OpKind.QUANTIZE, NoOptions(), ts, [0], [1]), x))
    return out


CASES = _cases()


def test_reference_matches_tflm():
    wraps = 0
    for graph, x in CASES:
        ours, theirs = run_reference(graph, [x])[0], run_tflm(graph, [x])[0]
        assert ours.dtype == theirs.dtype == graph.tensors[1].dtype
        np.testing.assert_array_equal(ours, theirs.reshape(ours.shape),
                                      err_msg=f"{x.dtype} -> {ours.dtype}")
        if ours.dtype == np.int32:  # the wrapped sums: an opposite sign to a clamp
            wraps += int(np.sum((ours.astype(np.int64) < 0) & (x > 32000)))
    assert wraps > 0


def test_int32_to_int32_is_refused_as_tflm_refuses():
    graph, x = CASES[-1]
    ts = [graph.tensors[0], Tensor("y", x.shape, np.dtype(np.int32), quant=q(1.0))]
    g = single_op_graph(OpKind.QUANTIZE, NoOptions(), ts, [0], [1])
    with pytest.raises(Exception):  # noqa: B017 -- TFLM's own error type
        run_tflm(g, [x])
    with pytest.raises(Exception, match="QUANTIZE|quantize"):
        run_reference(g, [x])


@pytest.fixture(scope="module")
def kern_q32() -> Iterator[Kernels]:
    yield from _start("portable")


def _short(dtype) -> str:
    return {np.dtype(np.int8): "s8", np.dtype(np.int16): "s16", np.dtype(np.int32): "s32"}[
        np.dtype(dtype)]


def test_kernels_match_reference(kern_q32):
    for graph, x in CASES:
        op = graph.ops[0]
        p = requantize_params(graph, op)
        want = run_reference(graph, [x])[0]
        name = f"th_requantize_{_short(x.dtype)}_{_short(want.dtype)}"
        status, bufs = kern_q32.call(name, ("null", None),
                                     buf(i32(p.input_zero_point, p.output_zero_point)),
                                     buf(i32(p.multiplier, p.shift)), ("int", x.size), buf(x),
                                     out(want.nbytes))
        assert status == 0, name
        assert_same(np.frombuffer(bufs[5], want.dtype), want, name)
    status, bufs = kern_q32.call("th_requantize_s32_s8", ("null", None), buf(i32(0, 300)),
                                 buf(i32(1 << 30, 0)), ("int", 4), buf(np.zeros(4, np.int32)),
                                 out(4))
    assert status == 1 and set(bufs[5]) == {0x5A}  # output zero point outside int8
