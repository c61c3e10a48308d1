"""th_requantize_s8_s16 / th_requantize_s16_s8 (QUANTIZE between int8 and int16, ASan +
UBSan, portable build) against the NumPy reference, bit for bit: every int8 input, and
random int16 inputs with the extremes, for random scales and zero points. Params come from
single-op graphs through `requantize_params`; expected values from `reference.ops.quantize`."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_single_op import q, single_op_graph
from test_kernels_misc import Kernels, _start, assert_same, buf, i32, out
from tinyhost.arith.activations import requantize_params
from tinyhost.ir import NoOptions, OpKind, Tensor
from tinyhost.reference.ops.quantize import requantize

I8, I16 = np.dtype(np.int8), np.dtype(np.int16)


@pytest.fixture(scope="module")
def kern_rq() -> Iterator[Kernels]:
    yield from _start("portable")


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_requantize_between_int8_and_int16(kern_rq, data):
    draw = data.draw
    to16 = draw(st.booleans())
    s_in = float(np.float32(2.0 ** draw(st.floats(-12, 2))))
    s_out = float(np.float32(2.0 ** draw(st.floats(-12, 2))))
    zp_in = draw(st.integers(-128, 127)) if to16 else draw(st.sampled_from([0, 0, -300, 1000]))
    zp_out = draw(st.sampled_from([0, 0, 77, -32768])) if to16 else draw(st.integers(-128, 127))
    src, dst = (I8, I16) if to16 else (I16, I8)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if to16:
        x = np.arange(-128, 128, dtype=np.int8)
    else:
        x = np.concatenate([rng.integers(-32768, 32768, 200), [-32768, 32767, 0, zp_in]])
        x = x.astype(np.int16)
    graph = single_op_graph(OpKind.QUANTIZE, NoOptions(),
                            [Tensor("x", x.shape, src, quant=q(s_in, zp_in)),
                             Tensor("y", x.shape, dst, quant=q(s_out, zp_out))], [0], [1])
    p = requantize_params(graph, graph.ops[0])
    want = requantize(x, p, dst)
    name = "th_requantize_s8_s16" if to16 else "th_requantize_s16_s8"
    status, bufs = kern_rq.call(name, ("null", None), buf(i32(p.input_zero_point,
                                                              p.output_zero_point)),
                                buf(i32(p.multiplier, p.shift)), ("int", x.size), buf(x),
                                out(want.nbytes))
    assert status == 0
    assert_same(np.frombuffer(bufs[5], dst), want, f"{name} {s_in}/{s_out}")
