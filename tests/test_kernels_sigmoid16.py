"""th_logistic_s16 / th_tanh_s16 (int16 LOGISTIC and TANH, ASan + UBSan, portable and
modelled-DSP builds) against the NumPy reference, bit for bit: every int16 input, for random
input scales on each of Prepare's paths, with the generated sigmoid table; in place; and the
arguments they refuse. Params come from single-op graphs through `sigmoid16_params`;
expected values from `tinyhost.arith.sigmoid16` (itself checked against TFLite Micro)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_single_op import q, single_op_graph
from test_kernels_misc import Kernels, _start, assert_same, buf, i32, out
from tinyhost.arith.sigmoid16 import (
    logistic_int16,
    sigmoid16_params,
    sigmoid_table_u16,
    tanh_int16,
)
from tinyhost.ir import NoOptions, OpKind, Tensor

I16 = np.dtype(np.int16)
TABLE = sigmoid_table_u16().astype("<u2")
ALL_INT16 = np.arange(-32768, 32768, dtype=np.int16)
KERNELS = {OpKind.LOGISTIC: ("th_logistic_s16", logistic_int16),
           OpKind.TANH: ("th_tanh_s16", tanh_int16)}


@pytest.fixture(scope="module", params=["portable", "dsp"])
def kern_sig(request) -> Iterator[Kernels]:
    yield from _start(request.param)


def _params(kind: OpKind, scale: float):
    graph = single_op_graph(kind, NoOptions(),
                            [Tensor("x", (4,), I16, quant=q(scale)),
                             Tensor("y", (4,), I16, quant=q(2.0**-15))], [0], [1])
    return sigmoid16_params(graph, graph.ops[0])


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_every_input_matches_the_reference(kern_sig, data):
    kind = data.draw(st.sampled_from([OpKind.LOGISTIC, OpKind.TANH]))
    scale = data.draw(st.one_of(st.sampled_from([2.0**-12, 2.0**-11, 2.0**-13, 7.0, 1e-10]),
                                st.floats(-14, 1).map(lambda e: float(np.float32(2.0**e)))))
    p = _params(kind, scale)
    name, reference = KERNELS[kind]
    want = reference(ALL_INT16, p)
    status, bufs = kern_sig.call(name, ("null", None), buf(i32(p.input_multiplier,
                                                             p.input_left_shift)),
                                 buf(TABLE), ("int", ALL_INT16.size), buf(ALL_INT16),
                                 out(want.nbytes))
    assert status == 0
    assert_same(np.frombuffer(bufs[5], I16), want, f"{name} scale {scale}")


def test_in_place_and_refusals(kern_sig):
    x = np.arange(-32768, 32768, 97, dtype=np.int16)
    for kind, (name, reference) in KERNELS.items():
        p = _params(kind, 1 / 3000)
        quant = buf(i32(p.input_multiplier, p.input_left_shift))
        status, bufs = kern_sig.call(name, ("null", None), quant, buf(TABLE), ("int", x.size),
                                     buf(x), ("alias", 4))
        assert status == 0
        assert_same(np.frombuffer(bufs[4], I16), reference(x, p), f"{name} in place")
        for bad in (i32(-1, 3), i32(100, 32), i32(0, 14), i32(100, -1)):
            status, bufs = kern_sig.call(name, ("null", None), buf(bad), buf(TABLE),
                                         ("int", x.size), buf(x), out(x.nbytes))
            assert status == 1, (name, bad)
            assert set(bufs[5]) == {0x5A}
        status, _ = kern_sig.call(name, ("null", None), quant, ("null", None), ("int", x.size),
                                  buf(x), out(x.nbytes))
        assert status == 1
