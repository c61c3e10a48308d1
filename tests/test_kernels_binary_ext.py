"""th_maximum_s8, th_minimum_s8, th_squared_difference_s8, th_prelu_s8, th_div_s8 against
the NumPy reference, bit for bit, in the sanitized host kernel library (ASan + UBSan), portable and
emulated-DSP builds: random broadcast shapes (per-channel PReLU alpha and scalars among
them), quantizations and in-place runs where the aliasing rule allows them; DIV also over
every pair of int8 values (zero divisors and shifts past 31 included).

Params come from single-op graphs through `tinyhost.arith.binary`; expected outputs from
`tinyhost.reference.ops.binary`, never from the C code.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_single_op import q, single_op_graph
from test_kernels_misc import (
    TH_ERR_ARG,
    TH_OK,
    _broadcast_shapes,
    _start,
    arrays_rng,
    assert_same,
    buf,
    i8,
    i32,
    out,
    random_int8,
    scale,
    shape_bytes,
    zero_point,
)
from tinyhost.arith.binary import div_params, prelu_params, squared_difference_params
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Activation, FusedActivationOptions, NoOptions, OpKind, Tensor
from tinyhost.reference.ops.binary import (
    div_int8,
    maximum,
    minimum,
    prelu_int8,
    squared_difference_int8,
)

I8 = np.dtype(np.int8)
KINDS = [OpKind.MAXIMUM, OpKind.MINIMUM, OpKind.SQUARED_DIFFERENCE, OpKind.PRELU, OpKind.DIV]
INT8_ACTIVATIONS = [Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1]


@pytest.fixture(scope="module", params=["portable", "dsp"])
def kern_both(request):
    yield from _start(request.param)


def _graph(kind, shapes, quants, activation=Activation.NONE):
    tensors = [Tensor(name, shape, I8, quant=qq)
               for name, shape, qq in zip(("a", "b", "y"), shapes, quants)]  # fmt: skip
    options = FusedActivationOptions(activation) if kind is OpKind.DIV else NoOptions()
    return single_op_graph(kind, options, tensors, [0, 1], [2])


def _case(kind, graph, a, b):
    """(kernel name, leading param buffers, expected output)."""
    op = graph.ops[0]
    if kind is OpKind.SQUARED_DIFFERENCE:
        p = squared_difference_params(graph, op)
        args = [buf(i32(p.input1_offset, p.input2_offset, p.output_offset, p.left_shift,
                        p.activation_min, p.activation_max)),
                buf(i32(p.input1_multiplier, p.input1_shift, p.input2_multiplier,
                        p.input2_shift, p.output_multiplier, p.output_shift))]  # fmt: skip
        return "th_squared_difference_s8", args, squared_difference_int8(a, b, p)
    if kind is OpKind.PRELU:
        p = prelu_params(graph, op)
        args = [buf(i32(p.input_offset, p.alpha_offset, p.output_offset, p.multiplier_pos,
                        p.shift_pos, p.multiplier_neg, p.shift_neg))]  # fmt: skip
        return "th_prelu_s8", args, prelu_int8(a, b, p)
    if kind is OpKind.DIV:
        p = div_params(graph, op)
        args = [buf(i32(p.input1_offset, p.input2_offset, p.output_offset,
                        p.activation_min, p.activation_max)),
                buf(i32(p.output_multiplier, p.output_shift))]  # fmt: skip
        return "th_div_s8", args, div_int8(a, b, p)
    if kind is OpKind.MAXIMUM:
        return "th_maximum_s8", [], maximum(a, b)
    return "th_minimum_s8", [], minimum(a, b)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data(), st.sampled_from(KINDS))
def test_binary_ext(kern_both, data, kind):
    draw = data.draw
    rng = arrays_rng(draw)
    shapes = _broadcast_shapes(draw)
    if kind is OpKind.PRELU and draw(st.booleans()):  # per-channel alpha [C] on [N, H, W, C]
        c = draw(st.integers(1, 9))
        x_shape = (1, draw(st.integers(1, 4)), draw(st.integers(1, 4)), c)
        shapes = (x_shape, (c,), x_shape)
    elif draw(st.booleans()):  # long same-shape rows
        n = draw(st.integers(1, 70))
        shapes = ((2, n), (2, n), (2, n))
    quants = [q(scale(draw, -8, 0), zero_point(draw)) for _ in range(3)]
    graph = _graph(kind, shapes, quants, draw(st.sampled_from(INT8_ACTIVATIONS)))
    a, b = random_int8(rng, shapes[0]), random_int8(rng, shapes[1])
    try:
        name, args, want = _case(kind, graph, a, b)
    except UnsupportedModelError:
        return  # scales TFLM refuses too
    want = np.broadcast_to(want, shapes[2])
    first = len(args) + 1  # index of the input1 shape argument
    in_place = [i for i in (0, 1) if shapes[i] == shapes[2] and draw(st.booleans())]
    out_arg = ("alias", first + 1 + 2 * in_place[0]) if in_place else out(want.size)
    status, bufs = kern_both.call(name, ("null", None), *args, buf(shape_bytes(shapes[0])),
                                  buf(a), buf(shape_bytes(shapes[1])), buf(b),
                                  buf(shape_bytes(shapes[2])), out_arg)  # fmt: skip
    assert status == TH_OK
    assert_same(i8(bufs[first + 5], shapes[2]), want, f"{kind.name} {shapes} {in_place}")


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_binary_ext_refuses_bad_shapes_and_params(kern_both, kind):
    graph = _graph(kind, ((2, 3), (2, 3), (2, 3)), [q(0.1, 1), q(0.2, -3), q(0.3, 2)])
    a = np.zeros((2, 3), np.int8)
    name, args, _ = _case(kind, graph, a, a)
    # (2, 3) with (4,) does not broadcast to (2, 3)
    status, bufs = kern_both.call(name, ("null", None), *args, buf(shape_bytes((2, 3))),
                                  buf(a), buf(shape_bytes((4,))), buf(np.zeros(4, np.int8)),
                                  buf(shape_bytes((2, 3))), out(6))  # fmt: skip
    assert status == TH_ERR_ARG
    assert bufs[len(args) + 6] == b"\x5a" * 6  # nothing written
    if args:  # a negative multiplier is refused
        words = np.frombuffer(args[-1][1], np.int32).copy()
        words[{OpKind.PRELU: 3, OpKind.SQUARED_DIFFERENCE: 0}.get(kind, 0)] = -5
        bad = [*args[:-1], buf(words.tobytes())]
        status, _ = kern_both.call(name, ("null", None), *bad, buf(shape_bytes((2, 3))),
                                   buf(a), buf(shape_bytes((2, 3))), buf(a),
                                   buf(shape_bytes((2, 3))), out(6))  # fmt: skip
        assert status == TH_ERR_ARG


def test_div_every_pair(kern_both):
    a = np.repeat(np.arange(-128, 128), 256).astype(np.int8)
    b = np.tile(np.arange(-128, 128), 256).astype(np.int8)
    rng = np.random.default_rng(9)
    for trial in range(6):
        quants = [q(float(np.exp(rng.uniform(-6, 1))), int(rng.integers(-128, 128)))
                  for _ in range(3)]  # fmt: skip
        graph = _graph(OpKind.DIV, ((a.size,), (a.size,), (a.size,)), quants,
                       INT8_ACTIVATIONS[trial % 4])  # fmt: skip
        name, args, want = _case(OpKind.DIV, graph, a, b)
        shape = buf(shape_bytes((a.size,)))
        status, bufs = kern_both.call(name, ("null", None), *args, shape, buf(a), shape, buf(b),
                                      shape, out(a.size))  # fmt: skip
        assert status == TH_OK
        assert_same(i8(bufs[8], (a.size,)), want, f"DIV every pair, trial {trial}")


def test_fill(kern_both):
    value = np.array([-77], np.int8)
    status, bufs = kern_both.call("th_fill_s8", ("null", None), buf(value), ("int", 37), out(37))
    assert status == TH_OK
    assert_same(i8(bufs[3], (37,)), np.full(37, -77, np.int8), "FILL")
    status, bufs = kern_both.call("th_fill_s8", ("null", None), ("null", None), ("int", 4),
                                  out(4))  # fmt: skip
    assert status == TH_ERR_ARG and bufs[3] == b"\x5a" * 4
