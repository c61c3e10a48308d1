"""EXPAND_DIMS, SPLIT, SPLIT_V, PACK, UNPACK, GATHER, DEPTH_TO_SPACE, SPACE_TO_DEPTH,
RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR, ARG_MAX, ARG_MIN and BATCH_MATMUL (int8).

Random single-op graphs (ranks 1-4, negative axes, several shapes and options) run in TFLite
Micro and in the NumPy reference must agree bit for bit; where NumPy states the op plainly
(split, stack, take) it is a second oracle.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_single_op import (
    F32,
    I8,
    I32,
    I64,
    assert_matches_tflm,
    q,
    random_int8,
    run_tflm,
    single_op_graph,
)
from tinyhost.errors import ModelFormatError
from tinyhost.ir import (
    ArgMinMaxOptions,
    BatchMatMulOptions,
    BlockSizeOptions,
    GatherOptions,
    NoOptions,
    OpKind,
    PackOptions,
    ResizeOptions,
    SplitOptions,
    Tensor,
)
from tinyhost.passes.validate import check_graph
from tinyhost.reference.ops.movement import gather, split_sizes

CASES = settings(max_examples=25, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
QUANT = q(0.07, -5)
shapes = st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple)
seeds = st.integers(0, 2**32 - 1)


def _t(name: str, shape, quant=QUANT) -> Tensor:
    return Tensor(name, tuple(int(d) for d in shape), I8, quant=quant)


def _const(name: str, values, dtype=I32) -> Tensor:
    data = np.asarray(values, dtype)
    return Tensor(name, data.shape, dtype, data)


def _x(seed: int, shape) -> np.ndarray:
    return random_int8(np.random.default_rng(seed), shape)


def _axis(data, rank: int) -> int:
    a = data.draw(st.integers(0, rank - 1))
    return a - rank if data.draw(st.booleans()) else a


@CASES
@given(shapes, seeds, st.data())
def test_expand_dims_matches_tflm(shape, seed, data) -> None:
    rank = len(shape)
    axis = data.draw(st.integers(-(rank + 1), rank))
    a = axis + rank + 1 if axis < 0 else axis
    out = (*shape[:a], 1, *shape[a:])
    graph = single_op_graph(OpKind.EXPAND_DIMS, NoOptions(),
                            [_t("x", shape), _const("axis", [axis]), _t("y", out)], [0, 1], [2])
    x = _x(seed, shape)
    y = assert_matches_tflm(graph, [x])[0]
    np.testing.assert_array_equal(y, np.expand_dims(x, a))


@CASES
@given(shapes, seeds, st.data())
def test_split_matches_tflm(shape, seed, data) -> None:
    rank = len(shape)
    axis = _axis(data, rank)
    a = axis % rank
    n = data.draw(st.sampled_from([d for d in range(1, 5) if shape[a] * d <= 8]))
    full = list(shape)
    full[a] *= n
    part = list(full)
    part[a] //= n
    tensors = [_const("axis", axis), _t("x", full)] + [_t(f"y{k}", part) for k in range(n)]
    graph = single_op_graph(OpKind.SPLIT, SplitOptions(n), tensors, [0, 1],
                            list(range(2, 2 + n)))  # fmt: skip
    x = _x(seed, full)
    ys = assert_matches_tflm(graph, [x])
    for y, want in zip(ys, np.split(x, n, axis=a)):
        np.testing.assert_array_equal(y, want)


@CASES
@given(shapes, seeds, st.data())
def test_split_v_matches_tflm(shape, seed, data) -> None:
    rank = len(shape)
    axis = _axis(data, rank)
    a = axis % rank
    sizes = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    full = list(shape)
    full[a] = sum(sizes)
    written = list(sizes)
    if data.draw(st.booleans()):
        written[data.draw(st.integers(0, len(sizes) - 1))] = -1
    outs = [_t(f"y{k}", [*full[:a], s, *full[a + 1:]]) for k, s in enumerate(sizes)]
    tensors = [_t("x", full), _const("sizes", written), _const("axis", [axis]), *outs]
    graph = single_op_graph(OpKind.SPLIT_V, SplitOptions(len(sizes)), tensors, [0, 1, 2],
                            list(range(3, 3 + len(sizes))))  # fmt: skip
    x = _x(seed, full)
    ys = assert_matches_tflm(graph, [x])
    for y, want in zip(ys, np.split(x, np.cumsum(sizes)[:-1], axis=a)):
        np.testing.assert_array_equal(y, want)


@CASES
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), seeds, st.data())
def test_pack_matches_tflm(shape, seed, data) -> None:
    rank = len(shape) + 1
    axis = _axis(data, rank)
    n = data.draw(st.integers(1, 4))
    out = list(shape)
    out.insert(axis % rank, n)
    tensors = [_t(f"x{k}", shape) for k in range(n)] + [_t("y", out)]
    graph = single_op_graph(OpKind.PACK, PackOptions(axis, n), tensors, list(range(n)), [n])
    xs = [_x(seed + k, shape) for k in range(n)]
    y = assert_matches_tflm(graph, xs)[0]
    np.testing.assert_array_equal(y, np.stack(xs, axis=axis % rank))


@CASES
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4).map(tuple), seeds, st.data())
def test_unpack_matches_tflm(shape, seed, data) -> None:
    rank = len(shape)
    axis = _axis(data, rank)
    a = axis % rank
    part = [d for i, d in enumerate(shape) if i != a]
    n = shape[a]
    tensors = [_t("x", shape)] + [_t(f"y{k}", part) for k in range(n)]
    graph = single_op_graph(OpKind.UNPACK, PackOptions(axis, n), tensors, [0],
                            list(range(1, 1 + n)))  # fmt: skip
    x = _x(seed, shape)
    ys = assert_matches_tflm(graph, [x])
    for k, y in enumerate(ys):
        np.testing.assert_array_equal(y, np.take(x, k, axis=a))


@CASES
@given(st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple), seeds, st.data())
def test_gather_matches_tflm(shape, seed, data) -> None:
    rank = len(shape)
    axis = _axis(data, rank)
    a = axis % rank
    batch_dims = data.draw(st.integers(0, a))
    index_shape = list(shape[:batch_dims]) + data.draw(
        st.lists(st.integers(1, 3), min_size=0, max_size=2))
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, shape[a], size=index_shape).astype(np.int32)
    out = [*shape[:a], *index_shape[batch_dims:], *shape[a + 1:]]
    constant = data.draw(st.booleans())
    idx_t = (_const("indices", indices) if constant
             else Tensor("indices", tuple(index_shape), I32))
    graph = single_op_graph(OpKind.GATHER, GatherOptions(axis, batch_dims),
                            [_t("x", shape), idx_t, _t("y", out)], [0, 1], [2])
    x = _x(seed, shape)
    y = assert_matches_tflm(graph, [x] if constant else [x, indices])[0]
    if batch_dims == 0:
        np.testing.assert_array_equal(y, np.take(x, indices, axis=a))


def test_gather_refuses_an_index_out_of_range() -> None:
    with pytest.raises(ModelFormatError, match="GATHER index"):
        gather(np.zeros((3, 2), np.int8), np.array([0, 3]), 0, 0)


@CASES
@given(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
       st.integers(2, 3), seeds)
def test_depth_to_space_and_back_match_tflm(n, h, w, c, block, seed) -> None:
    shape = (n, h, w, c * block * block)
    out = (n, h * block, w * block, c)
    graph = single_op_graph(OpKind.DEPTH_TO_SPACE, BlockSizeOptions(block),
                            [_t("x", shape), _t("y", out)], [0], [1])
    x = _x(seed, shape)
    y = assert_matches_tflm(graph, [x])[0]
    back = single_op_graph(OpKind.SPACE_TO_DEPTH, BlockSizeOptions(block),
                           [_t("y", out), _t("z", shape)], [0], [1])
    np.testing.assert_array_equal(assert_matches_tflm(back, [y])[0], x)


@CASES
@given(st.integers(1, 2), st.integers(1, 6), st.integers(1, 6), st.integers(1, 3),
       st.integers(1, 9), st.integers(1, 9), st.sampled_from(["plain", "align", "half"]), seeds)
def test_resize_nearest_matches_tflm(n, h, w, c, oh, ow, mode, seed) -> None:
    o = ResizeOptions(mode == "align", mode == "half")
    graph = single_op_graph(OpKind.RESIZE_NEAREST_NEIGHBOR, o,
                            [_t("x", (n, h, w, c)), _const("size", [oh, ow]),
                             _t("y", (n, oh, ow, c))], [0, 1], [2])  # fmt: skip
    assert_matches_tflm(graph, [_x(seed, (n, h, w, c))])


@CASES
@given(st.integers(1, 2), st.integers(1, 7), st.integers(1, 7), st.integers(1, 3),
       st.integers(1, 13), st.integers(1, 13), st.sampled_from(["plain", "align", "half"]),
       seeds, st.sampled_from([I8, F32]))
def test_resize_bilinear_matches_tflm(n, h, w, c, oh, ow, mode, seed, dtype) -> None:
    o = ResizeOptions(mode == "align", mode == "half")
    quant = QUANT if dtype == I8 else None
    tensors = [Tensor("x", (n, h, w, c), dtype, quant=quant), _const("size", [oh, ow]),
               Tensor("y", (n, oh, ow, c), dtype, quant=quant)]
    graph = single_op_graph(OpKind.RESIZE_BILINEAR, o, tensors, [0, 1], [2])
    x = _x(seed, (n, h, w, c)).astype(dtype)
    y = assert_matches_tflm(graph, [x])[0]
    if (oh, ow) == (h, w) and mode != "half":
        np.testing.assert_array_equal(y, x)  # the identity resize


@CASES
@given(shapes, seeds, st.booleans(), st.data())
def test_arg_max_min_match_tflm(shape, seed, largest, data) -> None:
    rank = len(shape)
    axis = _axis(data, rank)
    out = [d for i, d in enumerate(shape) if i != axis % rank]
    dtype = I32  # TFLM's ARG_MAX / ARG_MIN write int32 only
    kind = OpKind.ARG_MAX if largest else OpKind.ARG_MIN
    graph = single_op_graph(kind, ArgMinMaxOptions("int32"),
                            [_t("x", shape), _const("axis", [axis]),
                             Tensor("y", tuple(out), dtype)], [0, 1], [2])  # fmt: skip
    # few distinct values: ties, where the first index must win
    x = np.random.default_rng(seed).integers(-2, 2, size=shape).astype(np.int8)
    y = assert_matches_tflm(graph, [x])[0]
    want = np.argmax(x, axis=axis) if largest else np.argmin(x, axis=axis)
    np.testing.assert_array_equal(y, want)


def test_arg_max_with_int64_output_is_refused_as_tflm_refuses_it() -> None:
    graph = single_op_graph(OpKind.ARG_MAX, ArgMinMaxOptions("int64"),
                            [_t("x", (2, 3)), _const("axis", [1]), Tensor("y", (2,), I64)],
                            [0, 1], [2])  # fmt: skip
    with pytest.raises(RuntimeError):
        run_tflm(graph, [np.zeros((2, 3), np.int8)])
    with pytest.raises(ModelFormatError, match="int32"):
        check_graph(graph)


def test_split_v_sizes_must_add_up() -> None:
    assert split_sizes(7, [2, -1, 1], "t") == [2, 4, 1]
    with pytest.raises(ModelFormatError):
        split_sizes(7, [2, 2], "t")
    with pytest.raises(ModelFormatError):
        split_sizes(7, [-1, -1], "t")


# -- BATCH_MATMUL ------------------------------------------------------------------------------


@CASES
@given(st.integers(2, 4), st.integers(1, 5), st.integers(1, 9), st.integers(1, 5),
       st.booleans(), st.booleans(), st.booleans(), seeds, st.data())
def test_batch_matmul_matches_tflm(rank, rows, depth, cols, adj_x, adj_y, const_rhs, seed,
                                   data) -> None:
    batch = data.draw(st.lists(st.integers(1, 3), min_size=rank - 2, max_size=rank - 2))
    # broadcast: either side may have 1 (or fewer dims) where the other has more
    lhs_batch = [1 if data.draw(st.booleans()) else d for d in batch]
    rhs_batch = [d if lb == 1 else (1 if data.draw(st.booleans()) else d)
                 for d, lb in zip(batch, lhs_batch)]  # fmt: skip
    if rhs_batch and data.draw(st.booleans()) and all(d == 1 for d in rhs_batch):
        rhs_batch = []  # a rank-2 RHS against a batched LHS
    lhs_shape = (*lhs_batch, *((depth, rows) if adj_x else (rows, depth)))
    rhs_shape = (*rhs_batch, *((cols, depth) if adj_y else (depth, cols)))
    out_shape = (*[max(a, b) for a, b in zip(lhs_batch, [*([1] * (len(lhs_batch)
                 - len(rhs_batch))), *rhs_batch])], rows, cols)  # fmt: skip
    rng = np.random.default_rng(seed)
    rhs = random_int8(rng, rhs_shape)
    zp = [int(v) for v in rng.integers(-20, 20, 3)]
    rhs_t = (Tensor("rhs", rhs_shape, I8, rhs, q(0.02, zp[1])) if const_rhs
             else Tensor("rhs", rhs_shape, I8, quant=q(0.02, zp[1])))  # fmt: skip
    graph = single_op_graph(OpKind.BATCH_MATMUL, BatchMatMulOptions(adj_x, adj_y),
                            [Tensor("lhs", lhs_shape, I8, quant=q(0.03, zp[0])), rhs_t,
                             Tensor("y", out_shape, I8, quant=q(0.05, zp[2]))],
                            [0, 1], [2])  # fmt: skip
    lhs = random_int8(rng, lhs_shape)
    assert_matches_tflm(graph, [lhs] if const_rhs else [lhs, rhs])


# -- refusals: validation names the op and what is wrong ----------------------------------------


def _bad_graphs():
    x = _t("x", (1, 4, 6, 8))
    yield "does not split into 3", single_op_graph(
        OpKind.SPLIT, SplitOptions(3), [_const("axis", 1), x, _t("a", (1, 1, 6, 8)),
                                        _t("b", (1, 1, 6, 8)), _t("c", (1, 2, 6, 8))],
        [0, 1], [2, 3, 4])  # fmt: skip
    yield "not a multiple of 3x3", single_op_graph(
        OpKind.DEPTH_TO_SPACE, BlockSizeOptions(3), [x, _t("y", (1, 12, 18, 1))], [0], [1])
    yield "indices 'i' are int64", single_op_graph(
        OpKind.GATHER, GatherOptions(1), [x, _const("i", [0, 2], I64), _t("y", (1, 2, 6, 8))],
        [0, 1], [2])  # fmt: skip
    yield "align_corners and half_pixel_centers", single_op_graph(
        OpKind.RESIZE_BILINEAR, ResizeOptions(True, True),
        [x, _const("size", [8, 12]), _t("y", (1, 8, 12, 8))], [0, 1], [2])  # fmt: skip
    yield "depths 8 and 5", single_op_graph(
        OpKind.BATCH_MATMUL, BatchMatMulOptions(), [x, _t("w", (5, 3)), _t("y", (1, 4, 6, 3))],
        [0, 1], [2])  # fmt: skip
    yield "expected \\[2, 6, 8\\]", single_op_graph(
        OpKind.UNPACK, PackOptions(0, 1), [_t("p", (1, 2, 6, 8)), _t("y", (2, 6, 9))], [0], [1])


@pytest.mark.parametrize(("message", "graph"), list(_bad_graphs()),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_validation_refuses_inconsistent_ops(message, graph) -> None:
    with pytest.raises(ModelFormatError, match=rf"op 0 \({graph.ops[0].name}\).*{message}"):
        check_graph(graph)
