"""The kernels of issue 17's data movement (th_split_s8, th_gather_s8, th_depth_to_space_s8,
th_space_to_depth_s8, th_resize_nearest_s8, th_resize_bilinear_s8, th_arg_max_s8,
th_arg_min_s8; PACK is th_concat_s8) and th_batch_matmul_s8 against the NumPy reference, bit
for bit, in the sanitized host build (test_kernels_misc.py's worker: every buffer at its
exact size under ASan), with the tables of `tinyhost.arith.resize` the lowering passes; and
their refusals.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_single_op import random_int8
from test_kernels_misc import (
    TH_ERR_ARG,
    TH_OK,
    Kernels,
    _start,
    assert_same,
    buf,
    i8,
    i32,
    out,
    shape_bytes,
)
from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.arith.matmul import BatchMatMulParams
from tinyhost.arith.resize import bilinear_axis, nearest_indices
from tinyhost.ir import ResizeOptions
from tinyhost.reference.ops.argminmax import arg_min_max
from tinyhost.reference.ops.matmul import batch_matmul_int8
from tinyhost.reference.ops.movement import depth_to_space, gather, space_to_depth, split
from tinyhost.reference.ops.resize import resize_bilinear, resize_nearest

CASES = settings(max_examples=40, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow,
                                        HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def kern() -> Iterator[Kernels]:
    yield from _start("portable")


def _rng(draw) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


def _shape(draw, lo: int, hi: int, max_rank: int) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.integers(lo, hi), min_size=1, max_size=max_rank)))


def _dims(shape) -> bytes:
    return i32(*shape)


@CASES
@given(st.data())
def test_split(kern, data):
    draw = data.draw
    shape = list(_shape(draw, 1, 4, 4))
    axis = draw(st.integers(0, len(shape) - 1))
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    shape[axis] = sum(sizes)
    x = random_int8(_rng(draw), shape)
    want = split(x, axis, sizes)
    n = len(sizes)
    shapes = b"".join(shape_bytes(w.shape) for w in want)
    # args: ctx, params, input shape, input, output shapes, pointer array, then the outputs
    first = 6
    status, bufs = kern.call("th_split_s8", ("null", None), buf(i32(axis, n)),
                             buf(shape_bytes(tuple(shape))), buf(x), buf(shapes),
                             ("ptrs", list(range(first, first + n))),
                             *[out(w.size) for w in want])  # fmt: skip
    assert status == TH_OK
    for k, w in enumerate(want):
        assert_same(i8(bufs[first + k], w.shape), w, f"split {shape} axis {axis} part {k}")


def test_split_refuses_sizes_that_do_not_add_up(kern):
    x = np.arange(6, dtype=np.int8).reshape(2, 3)
    shapes = shape_bytes((2, 1)) + shape_bytes((2, 1))
    status, bufs = kern.call("th_split_s8", ("null", None), buf(i32(1, 2)),
                             buf(shape_bytes((2, 3))), buf(x), buf(shapes),
                             ("ptrs", [6, 7]), out(2), out(2))  # fmt: skip
    assert status == TH_ERR_ARG
    assert bufs[6] == b"\x5a\x5a"  # nothing written


@CASES
@given(st.data())
def test_gather(kern, data):
    draw = data.draw
    rng = _rng(draw)
    shape = _shape(draw, 1, 5, 4)
    axis = draw(st.integers(0, len(shape) - 1))
    batch_dims = draw(st.integers(0, axis))
    index_shape = [*shape[:batch_dims], *draw(st.lists(st.integers(1, 4), max_size=2))]
    indices = rng.integers(0, shape[axis], size=index_shape).astype(np.int32)
    x = random_int8(rng, shape)
    want = gather(x, indices, axis, batch_dims)
    batch = int(np.prod(shape[:batch_dims]))
    params = i32(batch, int(np.prod(shape[batch_dims:axis])), shape[axis],
                 int(np.prod(shape[axis + 1:])), int(np.prod(index_shape[batch_dims:])))
    status, bufs = kern.call("th_gather_s8", ("null", None), buf(params), buf(x),
                             buf(indices), out(want.size))  # fmt: skip
    assert status == TH_OK
    assert_same(i8(bufs[4], want.shape), want, f"gather {shape} axis {axis}")


def test_gather_refuses_an_index_out_of_range_and_writes_nothing(kern):
    x = np.arange(6, dtype=np.int8).reshape(3, 2)
    status, bufs = kern.call("th_gather_s8", ("null", None), buf(i32(1, 1, 3, 2, 2)), buf(x),
                             buf(np.int32([1, 3])), out(4))  # fmt: skip
    assert status == TH_ERR_ARG
    assert bufs[4] == b"\x5a" * 4


@CASES
@given(st.data())
def test_depth_to_space_and_space_to_depth(kern, data):
    draw = data.draw
    n, h, w, c = (draw(st.integers(1, 3)) for _ in range(4))
    block = draw(st.integers(1, 4))
    x = random_int8(_rng(draw), (n, h, w, c * block * block))
    want = depth_to_space(x, block)
    status, bufs = kern.call("th_depth_to_space_s8", ("null", None), ("int", block),
                             buf(_dims(x.shape)), buf(x), buf(_dims(want.shape)), out(want.size))
    assert status == TH_OK
    assert_same(i8(bufs[5], want.shape), want, f"depth_to_space {x.shape} by {block}")
    back = space_to_depth(want, block)
    status, bufs = kern.call("th_space_to_depth_s8", ("null", None), ("int", block),
                             buf(_dims(want.shape)), buf(want), buf(_dims(x.shape)), out(x.size))
    assert status == TH_OK
    assert_same(i8(bufs[5], x.shape), back, f"space_to_depth {want.shape} by {block}")


def test_depth_to_space_refuses_a_depth_the_block_does_not_divide(kern):
    x = np.zeros((1, 2, 2, 6), np.int8)
    status, _ = kern.call("th_depth_to_space_s8", ("null", None), ("int", 2),
                          buf(_dims(x.shape)), buf(x), buf(_dims((1, 4, 4, 1))), out(16))
    assert status == TH_ERR_ARG


def _resize_case(draw):
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 5))
    h, w = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    oh, ow = draw(st.integers(1, 15)), draw(st.integers(1, 15))
    mode = draw(st.sampled_from(["plain", "align", "half"]))
    x = random_int8(_rng(draw), (n, h, w, c))
    return x, oh, ow, ResizeOptions(mode == "align", mode == "half")


@CASES
@given(st.data())
def test_resize_nearest(kern, data):
    x, oh, ow, o = _resize_case(data.draw)
    _, h, w, _ = x.shape
    want = resize_nearest(x, oh, ow, o)
    rows = nearest_indices(h, oh, o.align_corners, o.half_pixel_centers)
    cols = nearest_indices(w, ow, o.align_corners, o.half_pixel_centers)
    status, bufs = kern.call("th_resize_nearest_s8", ("null", None), ("ptrs", [6, 7]),
                             buf(_dims(x.shape)), buf(x), buf(_dims(want.shape)),
                             out(want.size), ("data", rows.tobytes()), ("data", cols.tobytes()))
    assert status == TH_OK
    assert_same(i8(bufs[5], want.shape), want, f"resize nearest {x.shape} -> {oh}x{ow} {o}")


def _bilinear_table(axis) -> bytes:
    return np.stack([axis.lower, axis.upper, axis.weight], axis=1).astype("<i4").tobytes()


@CASES
@given(st.data())
def test_resize_bilinear(kern_both, data):
    kern = kern_both
    x, oh, ow, o = _resize_case(data.draw)
    _, h, w, _ = x.shape
    want = resize_bilinear(x, oh, ow, o)
    rows = _bilinear_table(bilinear_axis(h, oh, o.align_corners, o.half_pixel_centers))
    cols = _bilinear_table(bilinear_axis(w, ow, o.align_corners, o.half_pixel_centers))
    status, bufs = kern.call("th_resize_bilinear_s8", ("null", None), ("ptrs", [6, 7]),
                             buf(_dims(x.shape)), buf(x), buf(_dims(want.shape)),
                             out(want.size), ("data", rows), ("data", cols))
    assert status == TH_OK
    assert_same(i8(bufs[5], want.shape), want, f"resize bilinear {x.shape} -> {oh}x{ow} {o}")


def test_resize_refuses_a_table_index_outside_the_input(kern):
    x = np.zeros((1, 2, 2, 1), np.int8)
    status, bufs = kern.call("th_resize_nearest_s8", ("null", None), ("ptrs", [6, 7]),
                             buf(_dims(x.shape)), buf(x), buf(_dims((1, 2, 2, 1))), out(4),
                             ("data", np.int32([0, 2]).tobytes()),
                             ("data", np.int32([0, 1]).tobytes()))  # fmt: skip
    assert status == TH_ERR_ARG
    assert bufs[5] == b"\x5a" * 4


@CASES
@given(st.data(), st.booleans())
def test_arg_max_and_min(kern, data, largest):
    draw = data.draw
    shape = _shape(draw, 1, 5, 4)
    axis = draw(st.integers(0, len(shape) - 1))
    # few distinct values: ties, where the first index must win
    x = _rng(draw).integers(-3, 3, size=shape).astype(np.int8)
    want = arg_min_max(x, axis, largest, np.dtype(np.int32))
    params = i32(int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1:])))
    name = "th_arg_max_s8" if largest else "th_arg_min_s8"
    status, bufs = kern.call(name, ("null", None), buf(params), buf(x), out(4 * want.size))
    assert status == TH_OK
    got = np.frombuffer(bufs[3], "<i4").reshape(want.shape)
    np.testing.assert_array_equal(got, want)


@pytest.fixture(scope="module", params=["portable", "dsp"])
def kern_both(request) -> Iterator[Kernels]:
    """th_batch_matmul_s8 and th_resize_bilinear_s8 have DSP paths: the emulated DSP build runs
    them on the host."""
    yield from _start(request.param)


@CASES
@given(st.data())
def test_batch_matmul(kern_both, data):
    kern = kern_both
    draw = data.draw
    rng = _rng(draw)
    rank = draw(st.integers(2, 4))
    rows, depth, cols = (draw(st.integers(1, 9)) for _ in range(3))
    adj_x, adj_y = draw(st.booleans()), draw(st.booleans())
    batch = [draw(st.integers(1, 3)) for _ in range(rank - 2)]
    lhs_batch = [1 if draw(st.booleans()) else d for d in batch]
    rhs_batch = [d if lb == 1 else (1 if draw(st.booleans()) else d)
                 for d, lb in zip(batch, lhs_batch)]  # fmt: skip
    lhs = random_int8(rng, (*lhs_batch, *((depth, rows) if adj_x else (rows, depth))))
    rhs = random_int8(rng, (*rhs_batch, *((cols, depth) if adj_y else (depth, cols))))
    p = BatchMatMulParams(draw(st.integers(-127, 128)), draw(st.integers(-127, 128)),
                          draw(st.integers(-128, 127)), *quantize_multiplier(
                              2.0 ** draw(st.floats(-16, -4))),
                          draw(st.integers(-128, -100)), draw(st.integers(100, 127)))
    want = batch_matmul_int8(lhs, rhs, p, adj_x, adj_y)
    params = i32(p.lhs_offset, p.rhs_offset, p.output_offset, int(adj_x), int(adj_y),
                 p.act_min, p.act_max)
    status, bufs = kern.call("th_batch_matmul_s8", ("null", None), buf(params),
                             buf(i32(p.multiplier, p.shift)), buf(shape_bytes(lhs.shape)),
                             buf(lhs), buf(shape_bytes(rhs.shape)), buf(rhs),
                             buf(shape_bytes(want.shape)), out(want.size))  # fmt: skip
    assert status == TH_OK
    assert_same(i8(bufs[8], want.shape), want, f"batch matmul {lhs.shape} x {rhs.shape}")


def test_batch_matmul_refuses_different_depths(kern):
    status, _ = kern.call("th_batch_matmul_s8", ("null", None), buf(i32(0, 0, 0, 0, 0, -128, 127)),
                          buf(i32(1 << 30, 0)), buf(shape_bytes((2, 3))), buf(bytes(6)),
                          buf(shape_bytes((4, 2))), buf(bytes(8)), buf(shape_bytes((2, 2))),
                          out(4))  # fmt: skip
    assert status == TH_ERR_ARG
