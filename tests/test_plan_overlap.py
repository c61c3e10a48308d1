"""The overlap rules of plan/overlap.py, proven on simulated kernels.

Each test runs a kernel with the access order the rule's row states inside one byte array
(the arena), with the output at the offset the rule allows, and compares with the same
kernel run on separate buffers. This is the contract the C kernels implement.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tinyhost.ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FusedActivationOptions,
    Graph,
    NoOptions,
    Op,
    OpKind,
    Padding,
    SoftmaxOptions,
    Tensor,
)
from tinyhost.plan import PlanOptions
from tinyhost.plan.overlap import OVERLAP_TABLE, OverlapMode, op_overlaps, sliding_d_max

SETTINGS = settings(max_examples=60, deadline=None)


def _out_size(n: int, k: int, s: int, pad: Padding) -> int:
    return -(-n // s) if pad is Padding.SAME else (n - k) // s + 1


def _pad_before(n: int, o: int, k: int, s: int, pad: Padding) -> int:
    return 0 if pad is Padding.VALID else max((o - 1) * s + k - n, 0) // 2


def _windowed(read, write, h, w, cin, oh, ow, cout, k, s, pad) -> None:
    """A raster-order windowed kernel: output pixel q reads only its own window."""
    pt, pl = _pad_before(h, oh, k, s, pad), _pad_before(w, ow, k, s, pad)
    for oy in range(oh):
        for ox in range(ow):
            acc = np.zeros(cout, np.int64)
            for ky in range(k):
                for kx in range(k):
                    iy, ix = oy * s - pt + ky, ox * s - pl + kx
                    if 0 <= iy < h and 0 <= ix < w:
                        px = read((iy * w + ix) * cin, cin)
                        acc += (px.sum() * (ky * 3 + kx + 1)) + np.arange(cout) * px[0]
            write((oy * ow + ox) * cout, acc % 251)


def _run_overlapped(x: np.ndarray, d: int, out_len: int, kernel) -> np.ndarray:
    base = max(-d, 0) + 8
    arena = np.full(base + max(x.size, d + out_len) + 8, -1, np.int64)
    arena[base : base + x.size] = x
    o = base + d
    kernel(
        lambda at, n: arena[base + at : base + at + n].copy(),
        lambda at, v: arena.__setitem__(slice(o + at, o + at + v.size), v),
    )
    return arena[o : o + out_len]


def _run_separate(x: np.ndarray, out_len: int, kernel) -> np.ndarray:
    out = np.full(out_len, -1, np.int64)
    kernel(
        lambda at, n: x[at : at + n].copy(),
        lambda at, v: out.__setitem__(slice(at, at + v.size), v),
    )
    return out


@SETTINGS
@given(
    st.integers(1, 7),
    st.integers(1, 7),
    st.integers(1, 5),
    st.integers(1, 6),
    st.sampled_from([1, 2, 3]),
    st.sampled_from([1, 2]),
    st.sampled_from([Padding.SAME, Padding.VALID]),
    st.integers(0, 9),
    st.integers(0, 2**31),
)
def test_sliding_rule_is_safe_at_its_bound(h, w, cin, cout, k, s, pad, slack, seed) -> None:
    if pad is Padding.VALID and (h < k or w < k):
        pad = Padding.SAME
    oh, ow = _out_size(h, k, s, pad), _out_size(w, k, s, pad)
    x = np.random.default_rng(seed).integers(-128, 128, h * w * cin)
    d_max = sliding_d_max((1, h, w, cin), (1, oh, ow, cout), (k, k, s, s, 1, 1, pad))

    def kernel(read, write):
        _windowed(read, write, h, w, cin, oh, ow, cout, k, s, pad)

    want = _run_separate(x, oh * ow * cout, kernel)
    for d in (d_max, d_max - slack):
        assert np.array_equal(_run_overlapped(x, d, oh * ow * cout, kernel), want), d


def test_sliding_bounds_by_hand() -> None:
    # 1x1, Cin == Cout: output pixel q may start where input pixel q-1 starts.
    assert sliding_d_max((1, 4, 4, 8), (1, 4, 4, 8), (1, 1, 1, 1, 1, 1, Padding.VALID)) == -8
    # 3x3 SAME stride 1: pixel (y, x) still needs input (y-1, x-1): a row and two pixels back.
    assert sliding_d_max((1, 6, 5, 4), (1, 6, 5, 4), (3, 3, 1, 1, 1, 1, Padding.SAME)) == -28
    # Global average pool: the one output pixel needs the whole input; it goes in front.
    assert sliding_d_max((1, 5, 5, 16), (1, 1, 1, 16), (5, 5, 5, 5, 1, 1, Padding.VALID)) == -16


@SETTINGS
@given(
    st.integers(1, 7),
    st.integers(1, 7),
    st.integers(1, 6),
    st.sampled_from([1, 3]),
    st.sampled_from([1, 2]),
    st.sampled_from([Padding.SAME, Padding.VALID]),
    st.integers(-3, 3),
    st.integers(0, 2**31),
)
def test_depthwise_channel_rule(h, w, c, k, s, pad, shift, seed) -> None:
    """Channel by channel from a one-plane scratch: any offset that is a multiple of C."""
    if pad is Padding.VALID and (h < k or w < k):
        pad = Padding.SAME
    oh, ow = _out_size(h, k, s, pad), _out_size(w, k, s, pad)
    pt, pl = _pad_before(h, oh, k, s, pad), _pad_before(w, ow, k, s, pad)
    x = np.random.default_rng(seed).integers(-128, 128, h * w * c)

    def kernel(read, write):
        for ch in range(c):
            plane = np.array([read(p * c + ch, 1)[0] for p in range(h * w)])  # the scratch
            for oy in range(oh):
                for ox in range(ow):
                    acc = ch
                    for ky in range(k):
                        for kx in range(k):
                            iy, ix = oy * s - pt + ky, ox * s - pl + kx
                            if 0 <= iy < h and 0 <= ix < w:
                                acc += plane[iy * w + ix] * (ky * k + kx + 2)
                    write((oy * ow + ox) * c + ch, np.array([acc % 251]))

    want = _run_separate(x, oh * ow * c, kernel)
    assert np.array_equal(_run_overlapped(x, shift * c, oh * ow * c, kernel), want)


@SETTINGS
@given(
    st.integers(1, 30),
    st.integers(1, 9),
    st.integers(1, 9),
    st.integers(1, 3),
    st.integers(0, 2**31),
)
def test_pointwise_pixel_rule(pixels, cin, cout, k, seed) -> None:
    """K input pixels saved to scratch, then their outputs written; d at the rule's bound."""
    x = np.random.default_rng(seed).integers(-128, 128, pixels * cin)
    wts = np.random.default_rng(seed + 1).integers(-3, 4, (cout, cin))

    def kernel(read, write):
        for p0 in range(0, pixels, k):
            n = min(k, pixels - p0)
            saved = read(p0 * cin, n * cin).reshape(n, cin)  # the scratch
            for j in range(n):
                write((p0 + j) * cout, (wts @ saved[j]) % 251)

    d = 0 if cout <= cin else pixels * cin - pixels * cout
    want = _run_separate(x, pixels * cout, kernel)
    assert np.array_equal(_run_overlapped(x, d, pixels * cout, kernel), want)


@SETTINGS
@given(
    st.integers(1, 40),
    st.sampled_from([(1, 1), (1, 4), (4, 1), (2, 2)]),
    st.integers(0, 5),
    st.integers(0, 2**31),
)
def test_elementwise_rule(n, items, slack, seed) -> None:
    """Element i read before output element i is written; element sizes may differ."""
    ib, ob = items
    x = np.random.default_rng(seed).integers(-128, 128, n * ib)

    def kernel(read, write):
        for i in range(n):
            v = read(i * ib, ib)
            write(i * ob, (np.full(ob, v.sum() * 3 + 1)) % 251)

    d_max = 0 if ob <= ib else n * ib - n * ob
    want = _run_separate(x, n * ob, kernel)
    assert np.array_equal(_run_overlapped(x, d_max - slack, n * ob, kernel), want)


def test_every_rule_states_its_contract() -> None:
    modes = {r.mode for r in OVERLAP_TABLE}
    assert modes == set(OverlapMode)
    for r in OVERLAP_TABLE:
        assert r.kinds and r.condition and r.offset and r.access_order and r.scratch


# ------------------------------------------------ the table declares only what kernels do


def _graph(kind: OpKind, options, shapes: list[tuple[int, ...]], const: set[int],
           dtypes: dict[int, np.dtype] | None = None) -> Graph:
    """One op: tensors 0..k-2 are its inputs (those in `const` constants), k-1 its output."""
    tensors = []
    for i, shape in enumerate(shapes):
        dtype = np.dtype((dtypes or {}).get(i, np.int8))
        data = np.ones(shape, dtype) if i in const else None
        tensors.append(Tensor(f"t{i}", shape, dtype, data))
    n = len(shapes) - 1
    op = Op(kind, tuple(range(n)), (n,), options)
    return Graph(tuple(tensors), (op,), tuple(i for i in range(n) if i not in const), (n,), "t")


def _modes(graph: Graph) -> dict[OverlapMode, list]:
    out: dict[OverlapMode, list] = {}
    for ov in op_overlaps(graph, 0, PlanOptions()):
        out.setdefault(ov.mode, []).append(ov)
    return out


def test_depthwise_has_no_raster_order_overlap() -> None:
    """Depthwise kernels go channel by channel over the whole image: only multiples of C."""
    dw = DepthwiseConv2DOptions(Padding.SAME, 1, 1)
    m = _modes(_graph(OpKind.DEPTHWISE_CONV_2D, dw, [(1, 6, 6, 4), (1, 3, 3, 4), (1, 6, 6, 4)],
                      {1}))  # fmt: skip
    assert set(m) == {OverlapMode.DEPTHWISE_CHANNEL}
    assert m[OverlapMode.DEPTHWISE_CHANNEL][0].modulus == 4
    # depth multiplier 2 (from the shapes): no in-place mode at all
    m2 = _modes(_graph(OpKind.DEPTHWISE_CONV_2D, dw, [(1, 6, 6, 4), (1, 3, 3, 8), (1, 6, 6, 8)],
                       {1}))  # fmt: skip
    assert m2 == {}


def test_pointwise_needs_the_1x1_kernel() -> None:
    conv = Conv2DOptions(Padding.VALID, 1, 1)
    plain = _modes(_graph(OpKind.CONV_2D, conv, [(1, 4, 4, 8), (6, 1, 1, 8), (1, 4, 4, 6)], {1}))
    assert set(plain) == {OverlapMode.POINTWISE_PIXEL, OverlapMode.SLIDING}
    assert plain[OverlapMode.POINTWISE_PIXEL][0].d_max == 0
    # grouped 1x1 (filter Cin 4 of 8): the reference loop re-reads the pixel per channel
    grouped = _modes(_graph(OpKind.CONV_2D, conv, [(1, 4, 4, 8), (6, 1, 1, 4), (1, 4, 4, 6)],
                            {1}))  # fmt: skip
    assert set(grouped) == {OverlapMode.SLIDING}


def test_elementwise_is_the_same_pointer_only() -> None:
    relu = _modes(_graph(OpKind.RELU, NoOptions(), [(1, 10), (1, 10)], set()))
    (ov,) = relu[OverlapMode.ELEMENTWISE]
    assert (ov.d_min, ov.d_max) == (0, 0)
    add = FusedActivationOptions()
    same = _modes(_graph(OpKind.ADD, add, [(2, 5), (2, 5), (2, 5)], set()))
    assert len(same[OverlapMode.ELEMENTWISE]) == 2
    # a broadcast input never shares the output's bytes; the full-size one may
    bcast = _modes(_graph(OpKind.ADD, add, [(2, 5), (1, 5), (2, 5)], set()))
    assert [o.input_tensor for o in bcast[OverlapMode.ELEMENTWISE]] == [0]
    # no in-place mode: SOFTMAX, float QUANTIZE / DEQUANTIZE
    assert _modes(_graph(OpKind.SOFTMAX, SoftmaxOptions(1.0), [(1, 10), (1, 10)], set())) == {}
    f32 = {0: np.dtype(np.float32)}
    assert _modes(_graph(OpKind.QUANTIZE, NoOptions(), [(1, 10), (1, 10)], set(), f32)) == {}
    assert _modes(_graph(OpKind.DEQUANTIZE, NoOptions(), [(1, 10), (1, 10)], set(),
                         {1: np.dtype(np.float32)})) == {}  # fmt: skip
