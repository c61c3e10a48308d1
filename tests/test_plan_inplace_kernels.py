"""The C kernels honour the planner's in-place rules (plan/overlap.py, th_nn.h "Aliasing").

Each case runs a kernels_c function with its input and output inside one byte array (the
arena) at an offset d = output - input that the rule allows (at the rule's bound and below
it), in both builds (portable C; the DSP algorithms with the instructions modelled in C and
interleaved filters), and compares with the NumPy reference bit for bit. Guard bytes around
the two buffers must be untouched. Covered: raster-order windows (CONV_2D through the
th_conv_s8 wrapper: 1x1, 3x3, general, grouped; AVERAGE/MAX_POOL_2D), pointwise convs with
Cout <= Cin (d <= 0) and Cout > Cin (the input in the output's tail), and depthwise channel
by channel at multiples of C on either side. Elementwise in place (th_lut_s8, th_add/sub/
mul_s8 at d = 0) is covered by tests/test_kernels_misc.py.

The kernels are compiled here into a plain shared library (no sanitizers: the guard bytes
catch writes outside the buffers) and called with ctypes.
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kernels.cases import DW_OPS, ConvCase, Op, conv_case, dw_case
from kernels.layers import layer_case
from test_kernels_fc_pool_dsp import (
    c1_words_cases,
    c1_words_span,
    c1_words_taken,
    chain_cases,
    rows_padded_cases,
    rows_padded_geometry,
)
from tinyhost.arith.pool import PoolParams
from tinyhost.codegen.layout import conv_filter_layout
from tinyhost.plan.overlap import sliding_d_max_padded
from tinyhost.plan.scratch import avgpool_scratch, maxpool_scratch
from tinyhost.reference.ops.pool import avg_pool_int8, max_pool_int8

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")

REPO = Path(__file__).resolve().parents[1]
KERNELS = REPO / "kernels_c"
BUILD = REPO / "build" / "test_plan_inplace_kernels"
GUARD = 64
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


class HypothesisDraw:
    """The kernels.cases Draw protocol over hypothesis data."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def int(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))

    def bool(self, p_true: float = 0.5) -> bool:
        return self.data.draw(st.integers(0, 999)) < int(p_true * 1000)


class Dims(ctypes.Structure):
    _fields_ = [("n", ctypes.c_int32), ("h", ctypes.c_int32), ("w", ctypes.c_int32),
                ("c", ctypes.c_int32)]


class Tile(ctypes.Structure):
    _fields_ = [("h", ctypes.c_int32), ("w", ctypes.c_int32)]


class Activation(ctypes.Structure):
    _fields_ = [("min", ctypes.c_int32), ("max", ctypes.c_int32)]


class ConvParamsC(ctypes.Structure):
    _fields_ = [("input_offset", ctypes.c_int32), ("output_offset", ctypes.c_int32),
                ("stride", Tile), ("padding", Tile), ("dilation", Tile),
                ("activation", Activation)]


class DwParamsC(ctypes.Structure):
    _fields_ = [("input_offset", ctypes.c_int32), ("output_offset", ctypes.c_int32),
                ("ch_mult", ctypes.c_int32), ("stride", Tile), ("padding", Tile),
                ("dilation", Tile), ("activation", Activation)]


class PoolParamsC(ctypes.Structure):
    _fields_ = [("stride", Tile), ("filter", Tile), ("padding", Tile),
                ("activation", Activation)]


class Quant(ctypes.Structure):
    _fields_ = [("multiplier", ctypes.c_void_p), ("shift", ctypes.c_void_p)]


class Context(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("size", ctypes.c_int32)]


def _build(variant: str) -> Path:
    sources = sorted(KERNELS.rglob("*.c"))
    flags = ["-std=c99", "-O1", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror",
             f"-I{KERNELS / 'include'}"]
    if variant == "dsp":
        flags.append("-DTH_NN_EMULATE_DSP=1")
    h = hashlib.sha256(" ".join(flags).encode())
    for p in [*sources, *sorted(KERNELS.rglob("*.h"))]:
        h.update(p.read_bytes())
    lib = BUILD / f"libth_nn_{variant}_{h.hexdigest()[:12]}.so"
    if not lib.exists():
        BUILD.mkdir(parents=True, exist_ok=True)
        tmp = lib.with_suffix(".tmp")
        proc = subprocess.run(["gcc", *flags, *map(str, sources), "-o", str(tmp)],
                              capture_output=True, text=True)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        tmp.replace(lib)
    return lib


@pytest.fixture(scope="module", params=["portable", "dsp"])
def lib(request: pytest.FixtureRequest) -> ctypes.CDLL:
    cdll = ctypes.CDLL(str(_build(request.param)))
    cdll.th_nn_build_flags.restype = ctypes.c_int32
    assert bool(cdll.th_nn_build_flags() & 1) == (request.param == "dsp")
    return cdll


def _arena(x: np.ndarray, d: int, out_len: int, seed: int) -> tuple[np.ndarray, int, int]:
    """Guard | the input and output span | guard, random bytes; (arena, in_at, out_at)."""
    lo = min(0, d)
    span = max(x.size, d + out_len) - lo
    arena = np.random.default_rng(seed).integers(-128, 128, span + 2 * GUARD).astype(np.int8)
    in_at = GUARD - lo
    arena[in_at : in_at + x.size] = x.reshape(-1)
    return arena, in_at, in_at + d


def _check_guards(before: np.ndarray, after: np.ndarray) -> None:
    assert np.array_equal(before[:GUARD], after[:GUARD]), "write below the buffers"
    assert np.array_equal(before[-GUARD:], after[-GUARD:]), "write above the buffers"


def _ptr(a: np.ndarray, at: int = 0) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data + at)


def _run_conv(lib: ctypes.CDLL, case: ConvCase, d: int, seed: int) -> None:
    p = case.p
    dw = case.op in DW_OPS
    interleaved = bool(lib.th_nn_build_flags() & 2)
    x_dims = Dims(*case.x.shape)
    w_dims = Dims(*case.w.shape)
    y_dims = Dims(*case.out_shape)
    act = Activation(p.act_min, p.act_max)
    if dw:
        params = DwParamsC(p.input_offset, p.output_offset, p.ch_mult,
                           Tile(p.stride_h, p.stride_w), Tile(p.pad_top, p.pad_left),
                           Tile(p.dilation_h, p.dilation_w), act)  # fmt: skip
        filt = np.ascontiguousarray(case.w, np.int8).reshape(-1)
        size_fn, fn = lib.th_dw_conv_s8_scratch_size, lib.th_dw_conv_s8
    else:
        params = ConvParamsC(p.input_offset, p.output_offset, Tile(p.stride_h, p.stride_w),
                             Tile(p.pad_top, p.pad_left), Tile(p.dilation_h, p.dilation_w),
                             act)  # fmt: skip
        filt = conv_filter_layout(case.w, interleaved)
        size_fn, fn = lib.th_conv_s8_scratch_size, lib.th_conv_s8
    size_fn.restype = ctypes.c_int32
    fn.restype = ctypes.c_int32
    scratch_size = size_fn(ctypes.byref(params), ctypes.byref(x_dims), ctypes.byref(w_dims),
                           ctypes.byref(y_dims))  # fmt: skip
    scratch = np.zeros(max(scratch_size, 4) // 4 + 1, np.int32)
    ctx = Context(scratch.ctypes.data if scratch_size > 0 else None, scratch_size)
    mult = np.ascontiguousarray(p.out_multiplier, np.int32)
    shift = np.ascontiguousarray(p.out_shift, np.int32)
    quant = Quant(mult.ctypes.data, shift.ctypes.data)
    bias = None if case.bias is None else np.ascontiguousarray(case.bias, np.int32)
    out_len = int(np.prod(case.out_shape))
    arena, in_at, out_at = _arena(case.x, d, out_len, seed)
    before = arena.copy()
    status = fn(ctypes.byref(ctx), ctypes.byref(params), ctypes.byref(quant),
                ctypes.byref(x_dims), _ptr(arena, in_at), ctypes.byref(w_dims), _ptr(filt),
                None if bias is None else _ptr(bias), ctypes.byref(y_dims),
                _ptr(arena, out_at))  # fmt: skip
    assert status == 0
    _check_guards(before, arena)
    got = arena[out_at : out_at + out_len].reshape(case.out_shape)
    want = case.expected().astype(np.int8)
    assert np.array_equal(got, want), f"{case.op.name} d={d}: {np.sum(got != want)} differ"


def _sliding_bound(case: ConvCase) -> int:
    p = case.p
    _, kh, kw, _ = case.w.shape
    return sliding_d_max_padded(case.x.shape, case.out_shape,
                                (kh, kw, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w),
                                (p.pad_top, p.pad_left))  # fmt: skip


@SETTINGS
@given(data=st.data(), slack=st.integers(0, 9))
def test_conv_raster_order_at_the_sliding_bound(lib: ctypes.CDLL, data: st.DataObject,
                                                slack: int) -> None:
    case = conv_case(HypothesisDraw(data), Op.CONV)
    bound = _sliding_bound(case)
    for k, d in enumerate((bound, bound - slack)):
        _run_conv(lib, case, d, seed=k)


@SETTINGS
@given(data=st.data(), cin=st.sampled_from((1, 3, 4, 8, 8, 12, 16, 24)),
       cout=st.integers(1, 48), slack=st.integers(0, 2))
def test_pointwise_in_place_at_the_pixel_bound(lib: ctypes.CDLL, data: st.DataObject,
                                               cin: int, cout: int, slack: int) -> None:
    """1x1 stride 1 (th_conv_1x1_s8): d <= 0 when Cout <= Cin, else the input in the tail."""
    base = conv_case(HypothesisDraw(data), Op.CONV_1X1)
    n, h, w, _ = base.x.shape
    assume(n == 1)
    rng = np.random.default_rng(cin * 31 + cout)
    x = rng.integers(-128, 128, (1, h, w, cin)).astype(np.int8)
    wt = rng.integers(-127, 128, (cout, 1, 1, cin)).astype(np.int8)
    p = base.p
    reps = -(-cout // p.out_multiplier.size)
    p = dataclasses.replace(p, stride_h=1, stride_w=1, pad_top=0, pad_left=0, pad_bottom=0,
                            pad_right=0, out_multiplier=np.tile(p.out_multiplier, reps)[:cout],
                            out_shift=np.tile(p.out_shift, reps)[:cout])
    bias = None if base.bias is None else np.resize(base.bias, cout).astype(np.int32)
    case = ConvCase(Op.CONV, x, wt, bias, p, (1, h, w, cout))
    bound = 0 if cout <= cin else h * w * (cin - cout)
    for k, d in enumerate((bound, bound - slack * cin)):
        _run_conv(lib, case, d, seed=k)


@pytest.mark.parametrize("cout", (8, 16, 48))
def test_eight_input_channel_pointwise_in_place_at_the_bound(lib: ctypes.CDLL,
                                                             cout: int) -> None:
    """Cin == 8 has its own DSP path, in chunks of 32 channels (which must not run in place:
    a later chunk re-reads input an earlier one overwrote)."""
    case = layer_case(Op.CONV, (6, 5), 8, cout, 1, 1, seed=cout)
    bound = 0 if cout <= 8 else 6 * 5 * (8 - cout)
    for k, d in enumerate((bound, bound - 8)):
        _run_conv(lib, case, d, seed=k)


@SETTINGS
@given(data=st.data(), shift=st.integers(-3, 3))
def test_depthwise_in_place_at_multiples_of_c(lib: ctypes.CDLL, data: st.DataObject,
                                              shift: int) -> None:
    """Channel by channel (th_dw_conv_s8: 3x3 and general): d = k * C on either side, and the
    output in the tail of the input (d = in - out), with ch_mult 1 and one batch."""
    case = dw_case(HypothesisDraw(data), Op.DW)
    assume(case.p.ch_mult == 1 and case.x.shape[0] == 1)
    out_len = int(np.prod(case.out_shape))
    assume(out_len <= case.x.size)
    c = case.x.shape[3]
    for k, d in enumerate((0, shift * c, case.x.size - out_len)):
        _run_conv(lib, case, d, seed=k)


def _pool_case(data: st.DataObject) -> tuple[np.ndarray, PoolParams, tuple[int, ...]]:
    draw = data.draw
    n, h, w, c = (draw(st.integers(1, 2)), draw(st.integers(1, 9)), draw(st.integers(1, 9)),
                  draw(st.integers(1, 40)))  # fmt: skip
    fh, fw = draw(st.integers(1, min(h, 7))), draw(st.integers(1, min(w, 7)))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    pt, pl = draw(st.integers(0, fh - 1)), draw(st.integers(0, fw - 1))
    oh = (h + pt - fh) // sh + 1
    ow = (w + pl - fw) // sw + 1
    lo = draw(st.integers(-128, 0))
    p = PoolParams(sh, sw, fh, fw, pt, pl, max((oh - 1) * sh + fh - h - pt, 0),
                   max((ow - 1) * sw + fw - w - pl, 0), lo, draw(st.integers(lo, 127)))
    x = np.random.default_rng(draw(st.integers(0, 2**31))).integers(-128, 128, (n, h, w, c))
    return x.astype(np.int8), p, (n, oh, ow, c)


@SETTINGS
@given(data=st.data(), slack=st.integers(0, 9), avg=st.booleans())
def test_pool_raster_order_at_the_sliding_bound(lib: ctypes.CDLL, data: st.DataObject,
                                                slack: int, avg: bool) -> None:
    x, p, out_shape = _pool_case(data)
    want = (avg_pool_int8 if avg else max_pool_int8)(x, p)
    assert want.shape == out_shape
    bound = _pool_bound(x.shape, out_shape, p)
    # the scratch the plan grants: the separable paths where they apply
    rule = avgpool_scratch if avg else maxpool_scratch
    need = rule(x.shape[2], x.shape[3], out_shape[1:3], (p.filter_h, p.filter_w),
                (p.stride_h, p.stride_w))
    for k, d in enumerate((bound, bound - slack)):
        got = _run_pool_at(lib.th_avgpool_s8 if avg else lib.th_maxpool_s8, x, p, out_shape,
                           need, d, seed=k)
        assert np.array_equal(got, want), f"{'avg' if avg else 'max'} pool d={d}"


def _pool_bound(in_shape: tuple[int, ...], out_shape: tuple[int, ...], p: PoolParams) -> int:
    """Rule (c)'s largest d for the pool p (plan/overlap.py)."""
    return sliding_d_max_padded(in_shape, out_shape,
                                (p.filter_h, p.filter_w, p.stride_h, p.stride_w, 1, 1),
                                (p.pad_top, p.pad_left))  # fmt: skip


def _pool_params_c(p: PoolParams) -> PoolParamsC:
    return PoolParamsC(Tile(p.stride_h, p.stride_w), Tile(p.filter_h, p.filter_w),
                       Tile(p.pad_top, p.pad_left), Activation(p.act_min, p.act_max))


def _run_pool_at(fn: Callable[..., int], x: np.ndarray, p: PoolParams,
                 out_shape: tuple[int, ...], scratch_size: int, d: int, seed: int
                 ) -> np.ndarray:
    """The pool fn (th_avgpool_s8 / th_maxpool_s8) with scratch_size bytes of scratch and its
    output d bytes from its input in one arena (guards checked); the output."""
    fn.restype = ctypes.c_int32  # type: ignore[attr-defined]
    out_len = int(np.prod(out_shape))
    scratch = np.zeros(max(scratch_size, 4), np.uint8)
    ctx = Context(scratch.ctypes.data if scratch_size else None, scratch_size)
    arena, in_at, out_at = _arena(x, d, out_len, seed=seed)
    before = arena.copy()
    status = fn(ctypes.byref(ctx), ctypes.byref(_pool_params_c(p)),
                ctypes.byref(Dims(*x.shape)), _ptr(arena, in_at),
                ctypes.byref(Dims(*out_shape)), _ptr(arena, out_at))  # fmt: skip
    assert status == 0
    _check_guards(before, arena)
    return arena[out_at : out_at + out_len].reshape(out_shape)


def test_maxpool_rows_padded_in_place_at_the_sliding_bound(lib: ctypes.CDLL) -> None:
    """max_rows_padded (the DSP build's padded layout, whole rows of windows inside the image
    in one call, two a pass at stride.h 1) in place: the cases of tests/
    test_kernels_fc_pool_dsp.py's rows_padded mix that take it, with the scratch each draws
    (the fast size, or the separable one), the output at rule (c)'s bound and a pixel below;
    and the chain mix's (rows cut by the top and bottom: max_chain_top, max_rows_bottom, the
    bottom rows read two at a time before either is written) at the bound, a pixel below and
    two output rows below; and MAX_C1_WORDS's (one channel, strides >= 2: each output row's
    column maxima read before it is written) at the bound and a pixel below."""
    cases = [c for c in rows_padded_cases(15, 48) if rows_padded_geometry(c).taken]
    assert len(cases) >= 24
    c1 = [c for c in c1_words_cases(29, 40) if c1_words_taken(c, c1_words_span(c))]
    assert len(c1) >= 25
    cases += c1
    chains = chain_cases(21, 30)
    for i, case in enumerate([*cases, *chains]):
        x, p = case.x, case.p
        dims = (Dims(*x.shape), Dims(*case.out_shape))
        size = maxpool_scratch(x.shape[2], x.shape[3], case.out_shape[1:3],
                               (p.filter_h, p.filter_w), (p.stride_h, p.stride_w))
        lib.th_maxpool_s8_scratch_size_fast.restype = ctypes.c_int32
        if case.fast_scratch:
            size = max(size, lib.th_maxpool_s8_scratch_size_fast(
                ctypes.byref(_pool_params_c(p)), ctypes.byref(dims[0]),
                ctypes.byref(dims[1])))
        bound = _pool_bound(x.shape, case.out_shape, p)
        want = max_pool_int8(x, p)
        below = [2 * case.out_shape[2] * x.shape[3]] if i >= len(cases) else []
        for k, d in enumerate([bound, bound - x.shape[3], *[bound - b for b in below]]):
            got = _run_pool_at(lib.th_maxpool_s8, x, p, case.out_shape, size, d, seed=k)
            assert np.array_equal(got, want), f"{x.shape} {p} d={d} scratch {size}"


def test_the_bound_is_tight_for_a_raster_kernel(lib: ctypes.CDLL) -> None:
    """Just past the sliding bound a raster-order kernel does clobber unread input: the tests
    above run at the edge of what is safe, not far inside it."""
    # decreasing values: each window's maximum is its first tap, the byte clobbered first
    x = (100 - np.arange(4 * 4 * 2)).astype(np.int8).reshape(1, 4, 4, 2)
    p = PoolParams(1, 1, 2, 2, 0, 0, 0, 0)
    out_shape = (1, 3, 3, 2)
    bound = sliding_d_max_padded(x.shape, out_shape, (2, 2, 1, 1, 1, 1), (0, 0))
    want = max_pool_int8(x, p)
    params = PoolParamsC(Tile(1, 1), Tile(2, 2), Tile(0, 0), Activation(-128, 127))
    lib.th_maxpool_s8.restype = ctypes.c_int32
    exact = {}
    for d in range(bound, bound + 5):
        arena, in_at, out_at = _arena(x, d, want.size, seed=0)
        assert lib.th_maxpool_s8(None, ctypes.byref(params), ctypes.byref(Dims(*x.shape)),
                                 _ptr(arena, in_at), ctypes.byref(Dims(*out_shape)),
                                 _ptr(arena, out_at)) == 0  # fmt: skip
        got = arena[out_at : out_at + want.size].reshape(out_shape)
        exact[d] = bool(np.array_equal(got, want))
    assert exact[bound] and not all(exact.values()), exact
