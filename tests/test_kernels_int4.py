"""th_fully_connected_s4 / th_conv_s4 / th_dw_conv_s4 (packed int4 weights, th_nn.h "INT4")
against the int8 kernels on the same weights unpacked, bit for bit, in the portable and the
emulated-DSP build (ASan + UBSan): random shapes with odd element counts (a nibble tail in
every row), per-channel multipliers, biases or none, activations, padding, stride, dilation,
depth multipliers; each s4 kernel gets exactly the scratch its *_scratch_size states (and
plan/scratch.py states the same sizes)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from test_kernels_misc import Kernels, _start, assert_same, buf, i32, out
from tinyhost.codegen.layout import conv_filter_layout, fc_weights_layout, s4_filter_rows, s4_rows

TH_OK, TH_ERR_SCRATCH = 0, 3


@pytest.fixture(scope="module", params=["portable", "dsp"])
def kern4(request) -> Iterator[tuple[Kernels, bool]]:
    for k in _start(request.param):
        yield k, request.param == "dsp"  # the emulated DSP build reads interleaved filters


def _quant(rng: np.random.Generator, cout: int) -> tuple[tuple, tuple]:
    mult = rng.integers(1 << 29, (1 << 31) - 1, cout).astype("<i4")
    shift = rng.integers(-12, -5, cout).astype("<i4")
    if rng.random() < 0.3:  # a channel the fast requantization is not exact for
        shift[int(rng.integers(0, cout))] = -25
    return ("data", mult.tobytes()), ("data", shift.tobytes())


def _bias(rng: np.random.Generator, cout: int) -> tuple:
    if rng.random() < 0.25:
        return ("null", None)
    return buf(rng.integers(-3000, 3000, cout).astype("<i4"))


def _act(rng: np.random.Generator) -> tuple[int, int]:
    return ((-128, 127), (-20, 127), (-128, 40))[int(rng.integers(0, 3))]


def _int4(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-8, 8, shape).astype(np.int8)


def _x(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-128, 128, shape).astype(np.int8)


def _scratch(kern: Kernels, name: str, *args: tuple) -> int:
    size, _ = kern.call(name, *args)
    return size


def _both(kern: Kernels, s8: str, s4: str, args8: list, args4: list, need: int,
          nbytes: int, what: str) -> np.ndarray:
    """Run the int8 kernel and the s4 one (scratch exactly `need`): same output bytes. The
    args are (params, quant, in dims, x, filter dims, w, bias, out dims) after the context;
    multiplier and shift follow the output."""
    status8, bufs8 = kern.call(s8, *args8)
    assert status8 == TH_OK, (what, status8)
    status4, bufs4 = kern.call(s4, ("ctx", 12), *args4, out(need))
    assert status4 == TH_OK, (what, status4)
    got = np.frombuffer(bufs4[9], np.int8)
    want = np.frombuffer(bufs8[9], np.int8)
    assert got.size == nbytes
    assert_same(got, want, what)
    if need > 4:  # too little scratch is refused, never overrun
        status, _ = kern.call(s4, ("ctx", 12), *args4, out(need - 4))
        assert status == TH_ERR_SCRATCH
    return got


def test_fc_s4_matches_int8(kern4):
    kern, interleaved = kern4
    rng = np.random.default_rng(41)
    for batches, cin, cout in ((1, 1, 1), (1, 7, 3), (2, 9, 5), (3, 33, 10), (1, 64, 4),
                               (2, 129, 7), (1, 15, 1)):
        w = _int4(rng, (cout, cin))
        x = _x(rng, (batches, cin))
        lo, hi = _act(rng)
        params = buf(i32(int(rng.integers(-127, 129)), 0, int(rng.integers(-128, 128)), lo, hi))
        mult, shift = _quant(rng, cout)
        dims = (buf(i32(batches, 1, 1, cin)), buf(i32(cout, 1, 1, cin)),
                buf(i32(batches, 1, 1, cout)))
        bias = _bias(rng, cout)
        need = _scratch(kern, "th_fully_connected_s4_scratch_size", params, dims[0], dims[1])
        assert need == 2 * ((cin + 7) // 8 * 8)
        head = (params, ("ptrs", [10, 11]), dims[0], buf(x), dims[1])
        args8 = [("null", None), *head, buf(fc_weights_layout(w, interleaved)), bias,
                 dims[2], out(batches * cout), mult, shift]
        args4 = [*head, buf(s4_rows(w)), bias, dims[2], out(batches * cout), mult, shift]
        _both(kern, "th_fully_connected_per_channel_s8", "th_fully_connected_s4", args8,
              args4, need, batches * cout, f"fc {batches}x{cin}->{cout}")


def _window(rng: np.random.Generator, size: int, k: int, stride: int, dil: int) -> tuple:
    """(padding before, output size) of a random SAME-like or VALID window."""
    span = (k - 1) * dil + 1
    pad = int(rng.integers(0, span)) if rng.random() < 0.6 else 0
    out_size = (size + 2 * pad - span) // stride + 1
    return pad, max(out_size, 1) if size + 2 * pad >= span else None


CONV_CASES = [  # (n, h, w, cin, cout or ch_mult, kh, kw, stride, dilation)
    (1, 5, 5, 3, 4, 3, 3, 1, 1), (1, 6, 7, 1, 5, 3, 3, 2, 1), (2, 4, 5, 5, 3, 1, 1, 1, 1),
    (1, 7, 6, 2, 3, 5, 3, 1, 2), (1, 8, 8, 8, 8, 3, 3, 2, 1), (1, 3, 9, 3, 2, 1, 5, 1, 1),
    (1, 5, 4, 7, 1, 2, 2, 1, 1), (1, 4, 4, 16, 6, 3, 3, 1, 1), (1, 9, 9, 4, 6, 3, 3, 1, 1),
]


@pytest.mark.parametrize("depthwise", [False, True])
def test_conv_s4_matches_int8(kern4, depthwise):
    kern, interleaved = kern4
    rng = np.random.default_rng(42 + depthwise)
    for n, h, w_, cin, co, kh, kw, stride, dil in CONV_CASES:
        mult = (1, 2, 3)[co % 3] if depthwise else 1
        cout = cin * mult if depthwise else co
        pad_h, oh = _window(rng, h, kh, stride, dil)
        pad_w, ow = _window(rng, w_, kw, stride, dil)
        if oh is None or ow is None:
            continue
        wshape = (1, kh, kw, cout) if depthwise else (cout, kh, kw, cin)
        w = _int4(rng, wshape)
        x = _x(rng, (n, h, w_, cin))
        lo, hi = _act(rng)
        head = (int(rng.integers(-127, 129)), int(rng.integers(-128, 128)))
        head = (*head, mult) if depthwise else head
        params = buf(i32(*head, stride, stride, pad_h, pad_w, dil, dil, lo, hi))
        mults, shifts = _quant(rng, cout)
        dims = (buf(i32(n, h, w_, cin)), buf(i32(*wshape)), buf(i32(n, oh, ow, cout)))
        bias = _bias(rng, cout)
        kind = "dw_conv" if depthwise else "conv"
        need8 = _scratch(kern, f"th_{kind}_s8_scratch_size", params, *dims)
        need = _scratch(kern, f"th_{kind}_s4_scratch_size", params, *dims)
        if depthwise:  # the int8 filter widened at the scratch's head, then the int8 kernel's
            assert need == (kh * kw * cout + 3) // 4 * 4 + need8
        else:
            assert need == 4 * ((kh * kw * cin + 7) // 8 * 8) + 16 * cout  # 2 columns, table
        w8 = w.reshape(-1) if depthwise else conv_filter_layout(w, interleaved)
        head_args = (params, ("ptrs", [10, 11]), dims[0], buf(x), dims[1])
        nbytes = n * oh * ow * cout
        ctx8 = ("ctx", 12) if need8 else ("null", None)
        args8 = [ctx8, *head_args, buf(w8), bias, dims[2], out(nbytes), mults, shifts,
                 *([out(need8)] if need8 else [])]
        args4 = [*head_args, buf(s4_filter_rows(w, depthwise)), bias, dims[2], out(nbytes),
                 mults, shifts]
        what = f"{kind} {(n, h, w_, cin)} {wshape} s{stride} d{dil} p{(pad_h, pad_w)}"
        want = _both(kern, f"th_{kind}_s8", f"th_{kind}_s4", args8, args4, need, nbytes, what)
        fast = _scratch(kern, f"th_{kind}_s4_scratch_size_fast", params, *dims) if depthwise \
            else 0
        if fast:  # the int8 kernel's faster path on the rest of the scratch
            fast8 = _scratch(kern, "th_dw_conv_s8_scratch_size_fast", params, *dims)
            assert fast == (kh * kw * cout + 3) // 4 * 4 + fast8
            status, bufs = kern.call(f"th_{kind}_s4", ("ctx", 12), *args4, out(fast))
            assert status == TH_OK, what
            assert_same(np.frombuffer(bufs[9], np.int8), want, f"{what} fast")


def test_s4_dw_run_layout():
    """The depthwise run (th_nn.h "INT4"): [KH, KW, C] values in order, two per byte low
    nibble first, zero-padded to a multiple of 8 values."""
    w = np.array([1, -2, 7, 0, -8, 3, 5, 0, 0, -1, 4], np.int8).reshape(1, 1, 1, 11)
    got = s4_filter_rows(w, True)
    assert got.tolist() == [0xE1, 0x07, 0x38, 0x05, 0xF0, 0x04, 0, 0]


def test_s4_rows_layout():
    """The packed layout (th_nn_s4.h): rows padded to 8 values, two per byte low nibble
    first, nibble p of a group holding value (p's bits reversed): 0 4 2 6 1 5 3 7."""
    w = np.array([[1, -2, 7, 0, 0, 0, 0, 0, 5], [-8, 0, 3, 0, 0, 0, 0, 0, 0]], np.int8)
    got = s4_rows(w).reshape(2, 8)
    assert got[0].tolist() == [0x01, 0x07, 0x0E, 0, 0x05, 0, 0, 0]
    assert got[1].tolist() == [0x08, 0x03, 0, 0, 0, 0, 0, 0]
