"""th_log_softmax_s8, th_l2norm_s8 and th_cumsum_s8 against the NumPy reference, bit for bit,
in the sanitized host kernel library (ASan + UBSan), portable and emulated-DSP builds: random
shapes, quantizations, axes and options, in place (output == input) too; bad params refused
with nothing written.

Params come from single-op graphs through `tinyhost.arith.rowwise`; expected outputs from
`tinyhost.reference.ops.rowwise`, never from the C code.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_single_op import q, single_op_graph
from test_kernels_misc import (
    TH_ERR_ARG,
    TH_OK,
    _start,
    arrays_rng,
    assert_same,
    buf,
    i8,
    i32,
    out,
    random_int8,
    scale,
    zero_point,
)
from tinyhost.arith.rowwise import cumsum_params, l2norm_params, log_softmax_params
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import CumsumOptions, FusedActivationOptions, NoOptions, OpKind, Tensor
from tinyhost.reference.ops.rowwise import cumsum_int8, l2norm_int8, log_softmax_int8

I8 = np.dtype(np.int8)
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])  # fmt: skip


@pytest.fixture(scope="module", params=["portable", "dsp"])
def kern_both(request):
    yield from _start(request.param)


def _rows_input(draw, rng, rows, depth):
    """Uniform rows, or rows within a narrow spread (close values: long exp sums)."""
    if draw(st.booleans()):
        return random_int8(rng, (rows, depth))
    spread = draw(st.integers(1, 30))
    base = rng.integers(-128, 128 - spread, size=(rows, 1))
    return (base + rng.integers(0, spread, size=(rows, depth))).astype(np.int8)


def _call_rows(kern, name, params, x, in_place):
    rows, depth = x.shape
    out_arg = ("alias", 4) if in_place else out(x.size)
    status, bufs = kern.call(name, ("null", None), buf(params), ("int", rows), ("int", depth),
                             buf(x), out_arg)  # fmt: skip
    return status, i8(bufs[4 if in_place else 5], x.shape)


@SETTINGS
@given(st.data())
def test_log_softmax(kern_both, data):
    draw = data.draw
    rng = arrays_rng(draw)
    rows, depth = draw(st.integers(1, 4)), draw(st.integers(1, 300))
    shape = (rows, depth)
    tensors = [Tensor("x", shape, I8, quant=q(scale(draw, -8, 1), zero_point(draw))),
               Tensor("y", shape, I8, quant=q(16 / 256, 127))]  # fmt: skip
    graph = single_op_graph(OpKind.LOG_SOFTMAX, NoOptions(), tensors, [0], [1])
    p = log_softmax_params(graph, graph.ops[0])
    x = _rows_input(draw, rng, rows, depth)
    params = i32(p.input_multiplier, p.input_left_shift, p.reverse_multiplier, p.reverse_shift,
                 p.diff_min)  # fmt: skip
    status, got = _call_rows(kern_both, "th_log_softmax_s8", params, x, draw(st.booleans()))
    assert status == TH_OK
    assert_same(got, log_softmax_int8(x, p), f"LOG_SOFTMAX {shape} {p}")


@SETTINGS
@given(st.data())
def test_l2norm(kern_both, data):
    draw = data.draw
    rng = arrays_rng(draw)
    rows, depth = draw(st.integers(1, 4)), draw(st.integers(1, 300))
    shape = (rows, depth)
    zp = zero_point(draw)
    tensors = [Tensor("x", shape, I8, quant=q(scale(draw, -8, 1), zp)),
               Tensor("y", shape, I8, quant=q(1 / 128, 0))]  # fmt: skip
    graph = single_op_graph(OpKind.L2_NORMALIZATION, FusedActivationOptions(), tensors, [0], [1])
    p = l2norm_params(graph, graph.ops[0])
    x = _rows_input(draw, rng, rows, depth)
    if draw(st.booleans()):
        x[0, :] = zp  # a zero row (and one whose sum of squares is 1 or small)
        x[-1, 0] = np.clip(zp + 1, -128, 127)
    status, got = _call_rows(kern_both, "th_l2norm_s8", i32(p.input_offset), x,
                             draw(st.booleans()))  # fmt: skip
    assert status == TH_OK
    assert_same(got, l2norm_int8(x, p), f"L2_NORMALIZATION {shape} zp {zp}")


@SETTINGS
@given(st.data())
def test_cumsum(kern_both, data):
    draw = data.draw
    rng = arrays_rng(draw)
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=4)))
    if draw(st.booleans()):
        shape = (*shape[:-1], draw(st.integers(20, 400)))  # long scans: the int32 sum wraps
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    s_in = scale(draw, -8, 0)
    tensors = [Tensor("x", shape, I8, quant=q(s_in, zero_point(draw))),
               Tensor("axis", (1,), np.dtype(np.int32), data=np.array([axis], np.int32)),
               Tensor("y", shape, I8, quant=q(s_in * float(np.exp(draw(st.floats(-1, 4)))),
                                              zero_point(draw)))]  # fmt: skip
    options = CumsumOptions(draw(st.booleans()), draw(st.booleans()))
    graph = single_op_graph(OpKind.CUMSUM, options, tensors, [0, 1], [2])
    try:
        p = cumsum_params(graph, graph.ops[0])
    except UnsupportedModelError:
        return
    if draw(st.booleans()):  # not TFLM's exact 1/2: the kernel's general input rescale
        p = dataclasses.replace(p, input_multiplier=p.input_multiplier - draw(st.integers(1, 99)))
    x = random_int8(rng, shape)
    outer = int(np.prod(shape[:p.axis], dtype=np.int64))
    inner = int(np.prod(shape[p.axis + 1:], dtype=np.int64))
    params = i32(p.input_offset, p.output_offset, p.input_multiplier, p.input_shift,
                 p.output_multiplier, p.output_shift, int(p.exclusive), int(p.reverse))
    in_place = draw(st.booleans())
    status, bufs = kern_both.call("th_cumsum_s8", ("null", None), buf(params), ("int", outer),
                                  ("int", shape[p.axis]), ("int", inner), buf(x),
                                  ("alias", 5) if in_place else out(x.size))  # fmt: skip
    assert status == TH_OK
    assert_same(i8(bufs[5 if in_place else 6], shape), cumsum_int8(x, p),
                f"CUMSUM {shape} {p}")  # fmt: skip


def test_rowwise_refuse_bad_params(kern_both):
    x = np.zeros((2, 3), np.int8)
    bad_log = i32(1 << 30, -1, 1 << 30, 0, -10)  # negative left shift
    status, got = _call_rows(kern_both, "th_log_softmax_s8", bad_log, x, False)
    assert status == TH_ERR_ARG and (got == 0x5A).all()
    status, got = _call_rows(kern_both, "th_l2norm_s8", i32(200), x, False)  # offset > 128
    assert status == TH_ERR_ARG and (got == 0x5A).all()
    bad_cumsum = i32(0, 0, 1 << 30, 0, 1 << 30, 3, 0, 0)  # output shift > 0
    status, bufs = kern_both.call("th_cumsum_s8", ("null", None), buf(bad_cumsum), ("int", 2),
                                  ("int", 3), ("int", 1), buf(x), out(6))  # fmt: skip
    assert status == TH_ERR_ARG and bufs[6] == b"\x5a" * 6
