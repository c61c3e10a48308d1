"""int16 LOGISTIC and TANH (and the LSTM's gates, which interpolate the same table): the
NumPy reference against TFLite Micro over every int16 input, bit for bit, for input scales
on each of Prepare's paths (power of two with left shift 0, TANH's left shift 1, the general
multiplier from tiny to large scales); the quantizations TFLite Micro refuses are refused
with the op and tensor named."""

from __future__ import annotations

import numpy as np
import pytest

from reference_single_op import assert_matches_tflm, q, run_reference, run_tflm, single_op_graph
from tinyhost.arith.sigmoid16 import sigmoid16_params, sigmoid_table_u16
from tinyhost.errors import ModelFormatError, UnsupportedModelError
from tinyhost.ir import NoOptions, OpKind, Tensor
from tinyhost.passes.validate import check_graph

I16 = np.dtype(np.int16)
ALL_INT16 = np.arange(-32768, 32768, dtype=np.int16).reshape(256, 256)


def _graph(kind: OpKind, in_scale: float, out_scale: float = 2.0**-15, in_zp: int = 0,
           out_zp: int = 0, shape: tuple[int, ...] = (256, 256)):
    ts = [Tensor("x", shape, I16, quant=q(in_scale, in_zp)),
          Tensor("y", shape, I16, quant=q(out_scale, out_zp))]
    return single_op_graph(kind, NoOptions(), ts, [0], [1])


# 2^-12: the power-of-two path of both (TANH also 2^-11); the rest take the multiplier path,
# 2^-10 and 2^-13 being powers of two that Prepare still sends there, 1e-10 ending at left
# shift 31, 3.0 and 7.0 at left shift 0 with a multiplier over 32767 (7.0: the int32 product
# wraps for large inputs, as TFLM's does).
SCALES = (2.0**-12, 2.0**-11, 2.0**-10, 2.0**-13, 1 / 3000, 0.00071, 1e-7, 1e-10, 0.05, 3.0,
          7.0)


@pytest.mark.parametrize("kind", [OpKind.LOGISTIC, OpKind.TANH])
def test_every_int16_input_matches_tflm(kind):
    paths = set()
    for scale in SCALES:
        g = _graph(kind, scale)
        p = sigmoid16_params(g, g.ops[0])
        paths.add((p.input_multiplier == 0, p.input_left_shift))
        y = assert_matches_tflm(g, [ALL_INT16])[0]
        assert y.min() <= 0 <= y.max() if kind is OpKind.TANH else y.min() >= 0
    # The multiplier-free path (TANH: at both shifts), and shifts 0 and 31 of the other.
    assert (True, 0) in paths and (False, 0) in paths and (False, 31) in paths
    assert ((True, 1) in paths) == (kind is OpKind.TANH)


def test_table_ends():
    """The generated table: sigmoid(0) = 1/2 first, the saturated 65535 last, rising."""
    t = sigmoid_table_u16().astype(np.int64)
    assert t.shape == (256,) and t[0] == 32768 and t[-1] == 65535
    assert np.all(np.diff(t) >= 0)
    assert abs(t[24] / 65536 - 1 / (1 + np.exp(-1.0))) < 2e-5


@pytest.mark.parametrize("kind", [OpKind.LOGISTIC, OpKind.TANH])
@pytest.mark.parametrize("bad", ["in_zp", "out_zp", "out_scale"])
def test_refused_as_tflm_refuses(kind, bad):
    kw = {"in_zp": {"in_zp": 3}, "out_zp": {"out_zp": -2}, "out_scale": {"out_scale": 1 / 256}}
    g = _graph(kind, 2.0**-12, shape=(4,), **kw[bad])
    x = np.arange(4, dtype=np.int16)
    with pytest.raises(Exception):  # noqa: B017 -- TFLM's Prepare fails (its own error type)
        run_tflm(g, [x])
    error = ModelFormatError if bad != "out_scale" else UnsupportedModelError
    with pytest.raises(error, match=("'x'" if bad == "in_zp" else "'y'")) as e:
        check_graph(g)
        run_reference(g, [x])
    assert kind.name in str(e.value)
