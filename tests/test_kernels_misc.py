"""The int8 kernels without MAC loops (kernels_c/{pooling,elementwise,activations,softmax,
quantization,reshape,reduce}) against the NumPy reference, bit for bit.

The kernels are built by K1's harness (tests/kernels/harness.py) into the sanitized shared
library `libth_nn_host.so` (ASan + UBSan, -fno-sanitize-recover). These tests call it with
ctypes from a worker subprocess that has libasan preloaded, because the kernel signatures
here (shapes, pointer arrays, float buffers) are not in the driver's case-record format yet.
Every buffer the kernel sees is malloc'ed at its exact size, so ASan stops the worker on a
one-byte overrun, and the test fails with the sanitizer report.

Params come from single-op graphs through the real `tinyhost.arith.*_params` functions
(random scales, zero points and activations); expected outputs come from
`tinyhost.reference.ops`, never from the C code. Unary int8 ops are checked exhaustively
(all 256 inputs) through the host-built tables of `tinyhost.codegen.lut`.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels.harness import HarnessError, build_driver
from reference_single_op import q, single_op_graph
from tinyhost.arith.activations import (
    QuantizeParams,
    softmax_params,
)
from tinyhost.arith.elementwise import (
    MulParams,
    add_input_tables,
    add_params,
    mul_params,
    sub_params,
)
from tinyhost.arith.padding import compute_window_padding
from tinyhost.arith.pool import PoolParams
from tinyhost.arith.reduce import mean_params
from tinyhost.codegen.lut import LUT_OPS, TABLE_INPUTS, apply_table, op_table
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import (
    Activation,
    FusedActivationOptions,
    LeakyReluOptions,
    NoOptions,
    OpKind,
    Padding,
    ReducerOptions,
    SoftmaxOptions,
    StridedSliceOptions,
    Tensor,
)
from tinyhost.plan.scratch import avgpool_scratch, maxpool_fast_scratch, maxpool_scratch
from tinyhost.reference.ops import activations as ref_act
from tinyhost.reference.ops import quantize as ref_quant
from tinyhost.reference.ops.elementwise import add_int8, mul_int8, sub_int8
from tinyhost.reference.ops.pool import avg_pool_int8, max_pool_int8
from tinyhost.reference.ops.reduce import mean_int8, reduce_max
from tinyhost.reference.ops.shape import (
    concatenate,
    dense_spec,
    pad,
    slice_bounds,
    strided_slice,
    transpose,
)
from tinyhost.reference.ops.softmax import softmax_int8, softmax_int8_int16

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
I8 = np.dtype(np.int8)
F32 = np.dtype(np.float32)
TH_OK, TH_ERR_ARG, TH_ERR_UNSUPPORTED = 0, 1, 2
MAX_RANK = 6
INT8_ACTIVATIONS = [Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1]

# ------------------------------------------------------------------------------ the worker

_WORKER = r"""
import ctypes, pickle, struct, sys
lib = ctypes.CDLL(sys.argv[1])
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    head = inp.read(4)
    if len(head) < 4:
        break
    name, args = pickle.loads(inp.read(struct.unpack('<I', head)[0]))
    ptrs, sizes, owned, keep = [], [], [], []
    for kind, value in args:  # pass 1: allocate, so 'ptrs' may name later buffers
        p, n = None, 0
        if kind in ('buf', 'out', 'data'):
            n = len(value) if kind != 'out' else value
            p = libc.malloc(max(n, 1))  # exact size: ASan guards the bytes around it
            owned.append(p)
            if kind == 'out':
                ctypes.memset(p, 0x5A, n)
            else:
                ctypes.memmove(p, value, n)
        ptrs.append(p)
        sizes.append(n)
    for i, (kind, value) in enumerate(args):
        if kind == 'alias':
            ptrs[i], sizes[i] = ptrs[value], sizes[value]
    cargs = []
    for i, (kind, value) in enumerate(args):  # pass 2: the C arguments
        if kind in ('buf', 'out', 'alias'):
            cargs.append(ctypes.c_void_p(ptrs[i]))
        elif kind == 'ptrs':
            array = (ctypes.c_void_p * len(value))(*[ptrs[k] for k in value])
            keep.append(array)
            cargs.append(array)
        elif kind == 'ctx':  # a th_context over the scratch buffer of arg `value`
            class Ctx(ctypes.Structure):
                _fields_ = [('buf', ctypes.c_void_p), ('size', ctypes.c_int32)]
            ctx = Ctx(ptrs[value], sizes[value])
            keep.append(ctx)
            cargs.append(ctypes.byref(ctx))
        elif kind == 'int':
            cargs.append(ctypes.c_int32(value))
        elif kind == 'null':
            cargs.append(None)
    fn = getattr(lib, name)
    fn.restype = ctypes.c_int32
    status = fn(*cargs)
    data = [ctypes.string_at(p, n) if p is not None and n else b'' for p, n in zip(ptrs, sizes)]
    for p in owned:
        libc.free(p)
    reply = pickle.dumps((status, data))
    out.write(struct.pack('<I', len(reply)) + reply)
    out.flush()
"""


class Kernels:
    """A worker process with the sanitized kernel library loaded; call(name, *args).

    Args: ("buf", bytes) an input copied to a fresh exact-size malloc, ("out", n) n bytes
    filled with 0x5A, ("data", bytes) like "buf" but not passed (reached through "ptrs"),
    ("alias", k) the same pointer as arg k, ("ptrs", [k, ...]) an array of the pointers of
    those args, ("ctx", k) a th_context over arg k's buffer and size, ("int", v) an int32,
    ("null", None). Returns the status and
    the bytes of every buffer after the call.
    """

    def __init__(self, lib: Path) -> None:
        self.lib = lib
        self.proc: subprocess.Popen | None = None
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())

    def _spawn(self) -> subprocess.Popen:
        env = dict(os.environ)
        asan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                              text=True, check=True).stdout.strip()
        env["LD_PRELOAD"] = asan
        env["ASAN_OPTIONS"] = "detect_leaks=0:halt_on_error=1:abort_on_error=0"
        env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
        self._stderr.seek(0)
        self._stderr.truncate()
        return subprocess.Popen([sys.executable, "-c", _WORKER, str(self.lib)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=self._stderr, env=env)

    def _died(self) -> HarnessError:
        assert self.proc is not None
        self.proc.wait(timeout=10)
        self._stderr.seek(0)
        log = self._stderr.read().decode(errors="replace")
        code = self.proc.returncode
        self.proc = None  # the next call starts a fresh worker: one failure, not a cascade
        return HarnessError(f"kernel worker died (exit {code}):\n{log[-6000:]}")

    def call(self, name: str, *args: tuple) -> tuple[int, list[bytes]]:
        if self.proc is None:
            self.proc = self._spawn()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = pickle.dumps((name, list(args)))
        try:
            self.proc.stdin.write(struct.pack("<I", len(request)) + request)
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise self._died() from exc
        head = self.proc.stdout.read(4)
        if len(head) < 4:
            raise self._died()
        body = self.proc.stdout.read(struct.unpack("<I", head)[0])
        return pickle.loads(body)

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        self._stderr.close()


def _start(variant: str) -> Iterator[Kernels]:
    try:
        build = build_driver(variant)
    except HarnessError as error:
        pytest.fail(f"kernel build failed: {error}")
    k = Kernels(build.shared_lib)
    yield k
    k.close()


@pytest.fixture(scope="module")
def kern() -> Iterator[Kernels]:
    yield from _start("portable")


@pytest.fixture(scope="module", params=["portable", "dsp", "dsp_general"])
def kern_both(request) -> Iterator[Kernels]:
    """Every build: kernels with a DSP path (max pool) run it with modelled instructions;
    dsp_general leaves every optional path out (th_nn_paths.h), so the general ones run."""
    yield from _start(request.param)


# ------------------------------------------------------------------------- struct packing


def shape_bytes(shape: tuple[int, ...]) -> bytes:
    dims = list(shape) + [0] * (MAX_RANK - len(shape))
    return struct.pack("<7i", len(shape), *dims)


def i32(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}i", *values)


def buf(data: bytes | np.ndarray) -> tuple:
    return ("buf", data.tobytes() if isinstance(data, np.ndarray) else data)


def out(n: int) -> tuple:
    return ("out", n)


def i8(data: bytes, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(data, np.int8).reshape(shape)


def assert_same(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    assert got.shape == want.shape, (got.shape, want.shape)
    if not np.array_equal(got, want):
        bad = np.argwhere(got != want)
        first = tuple(int(i) for i in bad[0])
        raise AssertionError(f"{what}: {len(bad)} of {want.size} differ; first at {first}: "
                             f"got {got[first]}, want {want[first]}")


# ----------------------------------------------------------------------- random choices


def scale(draw, lo: float = -10.0, hi: float = 0.0) -> float:
    return float(np.float32(2.0 ** draw(st.floats(lo, hi))))


def zero_point(draw) -> int:
    return draw(st.integers(-128, 127))


def arrays_rng(draw) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


def random_int8(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-128, 128, size=shape, dtype=np.int8)


# ------------------------------------------------------------------------------- pooling


def _pool_case(draw, rng):
    n = draw(st.integers(1, 2))
    h, w = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    c = draw(st.sampled_from([1, 3, 4, 8, 17, 32, 33, 40, 70]))
    if draw(st.booleans()):
        fh, fw = h, w  # global pooling
        sh = sw = 1
    elif draw(st.booleans()):
        fh, fw = draw(st.integers(1, 5)), draw(st.integers(1, 5))
        sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    else:  # large windows, stride 1 or 2: the separable / sliding paths
        fh, fw = draw(st.integers(2, 8)), draw(st.integers(2, 8))
        sh, sw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    padding = draw(st.sampled_from([Padding.SAME, Padding.VALID]))
    pads = compute_window_padding(padding, h, w, fh, fw, sh, sw)
    if pads.out_h <= 0 or pads.out_w <= 0:
        padding = Padding.SAME
        pads = compute_window_padding(padding, h, w, fh, fw, sh, sw)
    lo = draw(st.sampled_from([-128, -128, draw(st.integers(-128, 120))]))
    hi = draw(st.sampled_from([127, 127, draw(st.integers(lo, 127))]))
    p = PoolParams(sh, sw, fh, fw, pads.top, pads.left, pads.bottom, pads.right, lo, hi)
    x = random_int8(rng, (n, h, w, c))
    return x, p, (n, pads.out_h, pads.out_w, c)


def _pool_args(x: np.ndarray, p: PoolParams, out_shape) -> list[tuple]:
    params = i32(p.stride_h, p.stride_w, p.filter_h, p.filter_w, p.pad_top, p.pad_left,
                 p.act_min, p.act_max)
    return [("null", None), buf(params), buf(i32(*x.shape)), buf(x), buf(i32(*out_shape)),
            out(int(np.prod(out_shape)))]


@SETTINGS
@given(st.data())
def test_avgpool(kern_both, data):
    """Without scratch (direct sums) and with the scratch plan/scratch.py grants (the
    separable path where it applies, exactly that many bytes: ASan sees any overrun)."""
    draw = data.draw
    x, p, out_shape = _pool_case(draw, arrays_rng(draw))
    want = avg_pool_int8(x, p)
    status, bufs = kern_both.call("th_avgpool_s8", *_pool_args(x, p, out_shape))
    assert status == TH_OK
    assert_same(i8(bufs[5], out_shape), want, "avgpool")
    need = avgpool_scratch(x.shape[2], x.shape[3], out_shape[1:3], (p.filter_h, p.filter_w),
                           (p.stride_h, p.stride_w))
    if need:
        args = _pool_args(x, p, out_shape)
        status, bufs = kern_both.call("th_avgpool_s8", ("ctx", 6), *args[1:], out(need))
        assert status == TH_OK
        assert_same(i8(bufs[5], out_shape), want, "avgpool separable")


def test_avgpool_large_windows_stride1(kern_both):
    """The separable path at stride 1 with windows up to 16x16 (the DSP build's int16-lane
    path: filter.h * filter.w <= 256) and past it (257+: the int32 path), every channel
    count 1..9 and wider odd ones, SAME / VALID / explicit padding (border windows of every
    count, 1 and 2 included), activations; against the NumPy reference, with exactly the
    granted scratch (ASan sees any overrun)."""
    rng = np.random.default_rng(14)
    for i in range(60):
        c = [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 18, 31, 52][i % 13]
        fh, fw = int(rng.integers(1, 17)), int(rng.integers(1, 17))
        if i % 10 == 9:
            fh, fw = 17, 16  # 272 taps: past the int16 lanes
        h = int(rng.integers(max(fh // 2, 1), fh + 8))
        w = int(rng.integers(max(fw // 2, 1), fw + 8))
        if fh * fw < 4:
            fw = 4
        form = i % 3
        if form == 2:  # explicit padding up to filter - 1 on each side
            pt, pl = int(rng.integers(0, fh)), int(rng.integers(0, fw))
            pb, pr = int(rng.integers(0, fh)), int(rng.integers(0, fw))
            oh, ow = h + pt + pb - fh + 1, w + pl + pr - fw + 1
            if oh < 1 or ow < 1:
                continue
        else:
            pads = compute_window_padding(Padding.SAME if form == 0 else Padding.VALID, h, w,
                                          fh, fw, 1, 1)
            if pads.out_h < 1 or pads.out_w < 1:
                continue
            pt, pl, pb, pr = pads.top, pads.left, pads.bottom, pads.right
            oh, ow = pads.out_h, pads.out_w
        lo, hi = ((-128, 127) if i % 4 else
                  (int(rng.integers(-128, 0)), int(rng.integers(0, 128))))
        p = PoolParams(1, 1, fh, fw, pt, pl, pb, pr, lo, hi)
        x = random_int8(rng, (1 + i % 2, h, w, c))
        out_shape = (x.shape[0], oh, ow, c)
        want = avg_pool_int8(x, p)
        need = avgpool_scratch(w, c, (oh, ow), (fh, fw), (1, 1))
        args = _pool_args(x, p, out_shape)
        ctx = (("ctx", 6),) if need else (("null", None),)
        status, bufs = kern_both.call("th_avgpool_s8", *ctx, *args[1:],
                                      *((out(need),) if need else ()))
        assert status == TH_OK, (i, x.shape, p)  # padding < filter: every window has input
        assert_same(i8(bufs[5], out_shape), want, f"avgpool {x.shape} k{fh}x{fw} case {i}")


def test_avgpool_strided_large_windows(kern_both):
    """Issue 14's average pool shapes: windows 2..15 each way, strides 1..3 (each way),
    SAME / VALID, 1..64 channels (odd ones, tails past a multiple of four), activations;
    with exactly the scratch plan/scratch.py grants (the column-sum paths, stride-1 rows with
    zero padding columns, strided rows with moved or fresh column sums) and without it, in
    both builds, against the NumPy reference."""
    rng = np.random.default_rng(1414)
    for i in range(40):
        c = [1, 2, 3, 4, 5, 7, 8, 13, 18, 31, 33, 64][i % 12]
        fh, fw = int(rng.integers(2, 16)), int(rng.integers(2, 16))
        sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        h = int(rng.integers(fh, fh + 9))
        w = int(rng.integers(fw, fw + 9))
        padding = Padding.SAME if i % 2 else Padding.VALID
        pads = compute_window_padding(padding, h, w, fh, fw, sh, sw)
        lo, hi = ((-128, 127) if i % 5 else
                  (int(rng.integers(-128, 0)), int(rng.integers(0, 128))))
        p = PoolParams(sh, sw, fh, fw, pads.top, pads.left, pads.bottom, pads.right, lo, hi)
        x = random_int8(rng, (1 + i % 2, h, w, c))
        out_shape = (x.shape[0], pads.out_h, pads.out_w, c)
        want = avg_pool_int8(x, p)
        need = avgpool_scratch(w, c, out_shape[1:3], (fh, fw), (sh, sw))
        tag = f"avgpool {x.shape} k{fh}x{fw} s{sh}x{sw} {padding.name} case {i}"
        status, bufs = kern_both.call("th_avgpool_s8", *_pool_args(x, p, out_shape))
        assert status == TH_OK, tag
        assert_same(i8(bufs[5], out_shape), want, tag)
        if need:
            args = _pool_args(x, p, out_shape)
            status, bufs = kern_both.call("th_avgpool_s8", ("ctx", 6), *args[1:], out(need))
            assert status == TH_OK, tag
            assert_same(i8(bufs[5], out_shape), want, tag + " with scratch")


@SETTINGS
@given(st.data())
def test_maxpool(kern_both, data):
    draw = data.draw
    x, p, out_shape = _pool_case(draw, arrays_rng(draw))
    want = max_pool_int8(x, p)
    status, bufs = kern_both.call("th_maxpool_s8", *_pool_args(x, p, out_shape))
    assert status == TH_OK
    assert_same(i8(bufs[5], out_shape), want, "maxpool")
    need = maxpool_scratch(x.shape[2], x.shape[3], out_shape[1:3], (p.filter_h, p.filter_w),
                           (p.stride_h, p.stride_w))
    if need:  # the separable path, exactly the scratch plan/scratch.py grants
        args = _pool_args(x, p, out_shape)
        status, bufs = kern_both.call("th_maxpool_s8", ("ctx", 6), *args[1:], out(need))
        assert status == TH_OK
        assert_same(i8(bufs[5], out_shape), want, "maxpool separable")
    fast = maxpool_fast_scratch(x.shape[2], x.shape[3], out_shape[1:3],
                                (p.filter_h, p.filter_w), (p.stride_h, p.stride_w))
    if fast:  # the DSP build's padded rows (two where SH == 1), exactly that scratch
        args = _pool_args(x, p, out_shape)
        status, bufs = kern_both.call("th_maxpool_s8", ("ctx", 6), *args[1:], out(fast))
        assert status == TH_OK
        assert_same(i8(bufs[5], out_shape), want, "maxpool fast scratch")


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_pool_explicit_padding(kern, data):
    """Padding wider than SAME's: avgpool refuses windows with no input (as the reference
    and TFLM do) without writing; maxpool gives -128 there."""
    draw = data.draw
    rng = arrays_rng(draw)
    h, w, c = draw(st.integers(1, 6)), draw(st.integers(1, 6)), draw(st.integers(1, 9))
    fh, fw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    pt, pl = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    pb, pr = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    out_h = (h + pt + pb - fh) // sh + 1
    out_w = (w + pl + pr - fw) // sw + 1
    if out_h <= 0 or out_w <= 0:
        return
    pb, pr = (out_h - 1) * sh + fh - h - pt, (out_w - 1) * sw + fw - w - pl
    p = PoolParams(sh, sw, fh, fw, pt, pl, pb, pr)
    x = random_int8(rng, (1, h, w, c))
    out_shape = (1, out_h, out_w, c)
    status, bufs = kern.call("th_maxpool_s8", *_pool_args(x, p, out_shape))
    assert status == TH_OK
    assert_same(i8(bufs[5], out_shape), max_pool_int8(x, p), "maxpool")
    status, bufs = kern.call("th_avgpool_s8", *_pool_args(x, p, out_shape))
    try:
        want = avg_pool_int8(x, p)
    except UnsupportedModelError:
        assert status == TH_ERR_ARG
        assert set(bufs[5]) == {0x5A}, "refused call wrote its output"
        return
    assert status == TH_OK
    assert_same(i8(bufs[5], out_shape), want, "avgpool")


def test_pools_refuse_out_of_range_geometry(kern):
    """th_nn_check_pool's bounds (strides and windows in [1, 0xFFFF], padding in [0, 0xFFFF],
    N*H*W*C below 2^30 on both sides, factors up to 2^31 - 1: no 64-bit overflow) refused
    by both pools without writing; the values just inside accepted."""
    x = np.arange(24, dtype=np.int8).reshape(1, 3, 4, 2)
    base = [1, 1, 2, 2, 0, 0, -128, 127]
    big = 2**31 - 1
    bad_params = [(k, v) for k in range(4) for v in (0, -1, -(2**31), 0x10000, big)]
    bad_params += [(k, v) for k in (4, 5) for v in (-1, -(2**31), 0x10000, big)]
    # (input, output) dims, one side over 2^30 elements (the input buffer the small case's:
    # refused before any read)
    bad_dims = [((1, 2**15, 2**15, 1), (1, 1, 1, 1)), ((big,) * 4, (big, 1, 1, big)),
                ((2, 2**14, 2**14, 2), (2, 1, 1, 2)), ((1, 65537, 65537, 1), (1, 1, 1, 1)),
                ((3, 1, 1, 2**29), (3, 1, 1, 2**29)), ((1, 3, 4, 2), (1, 2**14, 2**15, 2)),
                ((1, 3, 4, 2), (1, big, big, 2)), ((1, 3, 4, 2), (1, 2**29, 1, 2))]
    for name in ("th_maxpool_s8", "th_avgpool_s8"):
        for k, v in bad_params:
            params = list(base)
            params[k] = v
            status, bufs = kern.call(name, ("null", None), buf(i32(*params)),
                                     buf(i32(*x.shape)), buf(x), buf(i32(1, 2, 3, 2)), out(12))
            assert status == TH_ERR_ARG, (name, k, v)
            assert set(bufs[5]) == {0x5A}, (name, k, v)
        for ins, outs in bad_dims:
            status, bufs = kern.call(name, ("null", None), buf(i32(*base)), buf(i32(*ins)),
                                     buf(x), buf(i32(*outs)), out(12))
            assert status == TH_ERR_ARG, (name, ins, outs)
            assert set(bufs[5]) == {0x5A}, (name, ins, outs)
        # just inside: one 1x1 output (avgpool's window needs an input row: padding 0xFFFE)
        pad = 0xFFFF if name == "th_maxpool_s8" else 0xFFFE
        edge = [0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, pad, pad, -128, 127]
        status, bufs = kern.call(name, ("null", None), buf(i32(*edge)), buf(i32(*x.shape)),
                                 buf(x), buf(i32(1, 1, 1, 2)), out(2))
        assert status == TH_OK, name

# ---------------------------------------------------------------------- ADD, SUB, MUL


def _broadcast_shapes(draw) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    kind = draw(st.sampled_from(["same", "channel", "scalar", "spatial", "general", "general"]))
    rank = draw(st.integers(1, 6)) if kind == "general" else draw(st.sampled_from([2, 4, 4]))
    max_dim = 4 if rank > 4 else 7
    out_shape = tuple(draw(st.integers(1, max_dim)) for _ in range(rank))
    if kind == "same":
        return out_shape, out_shape, out_shape
    if kind == "channel":
        other = (1,) * (rank - 1) + out_shape[-1:]
        if draw(st.booleans()):
            other = other[-1:]
        pair = (out_shape, other)
    elif kind == "spatial":  # (..., H, W, 1) against (..., H, W, C): short broadcast rows
        pair = (out_shape, out_shape[:-1] + (1,))
    elif kind == "scalar":
        other = (1,) * draw(st.integers(0, rank)) or (1,)
        pair = (out_shape, other)
    else:
        shapes = []
        for _ in range(2):
            s = tuple(d if draw(st.booleans()) else 1 for d in out_shape)
            shapes.append(s[draw(st.integers(0, rank - 1)):])
        a, b = shapes
        # make sure the broadcast of a and b is out_shape
        out_shape = tuple(np.broadcast_shapes(a, b))
        pair = (a, b)
    if draw(st.booleans()):
        pair = pair[::-1]
    return pair[0], pair[1], out_shape


def _binary_graph(kind, activation, shapes, quants):
    tensors = [Tensor(name, shape, I8, quant=qq)
               for name, shape, qq in zip(("a", "b", "y"), shapes, quants)]
    return single_op_graph(kind, FusedActivationOptions(activation), tensors, [0, 1], [2])


@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data(), st.sampled_from([OpKind.ADD, OpKind.SUB, OpKind.MUL]))
def test_binary(kern_both, data, kind):
    """Without tables (small tensors), both builds: the DSP one requantizes with SMMLAR
    where that is exact."""
    kern = kern_both
    draw = data.draw
    rng = arrays_rng(draw)
    s1 = scale(draw, -8, 0)
    s2 = s1 if draw(st.booleans()) else scale(draw, -8, 0)
    so = scale(draw, -8, 1)
    quants = [q(s, zero_point(draw)) for s in (s1, s2, so)]
    shapes = _broadcast_shapes(draw)
    activation = draw(st.sampled_from(INT8_ACTIVATIONS))
    graph = _binary_graph(kind, activation, shapes, quants)
    a, b = random_int8(rng, shapes[0]), random_int8(rng, shapes[1])
    try:
        if kind is OpKind.MUL:
            p = mul_params(graph, graph.ops[0])
        else:
            p = (add_params if kind is OpKind.ADD else sub_params)(graph, graph.ops[0])
    except UnsupportedModelError:
        return  # TFLM refuses these scales too
    if kind is OpKind.MUL:
        want = mul_int8(a, b, p)
        args = [buf(i32(p.input1_offset, p.input2_offset, p.output_offset,
                        p.activation_min, p.activation_max)),
                buf(i32(p.output_multiplier, p.output_shift))]
        name = "th_mul_s8"
    else:
        want = (add_int8 if kind is OpKind.ADD else sub_int8)(a, b, p)
        args = [buf(i32(p.input1_offset, p.input2_offset, p.output_offset, p.left_shift,
                        p.activation_min, p.activation_max)),
                buf(i32(p.input1_multiplier, p.input1_shift, p.input2_multiplier,
                        p.input2_shift, p.output_multiplier, p.output_shift))]
        name = "th_add_s8" if kind is OpKind.ADD else "th_sub_s8"
    # In place when an input has the output's shape (the documented aliasing rule).
    in_place = [i for i in (0, 1) if shapes[i] == shapes[2] and draw(st.booleans())]
    out_arg = ("alias", 4 + 2 * in_place[0]) if in_place else out(want.size)
    status, bufs = kern.call(name, ("null", None), *args, buf(shape_bytes(shapes[0])), buf(a),
                             buf(shape_bytes(shapes[1])), buf(b), buf(shape_bytes(shapes[2])),
                             out_arg)
    assert status == TH_OK
    assert_same(i8(bufs[8], shapes[2]), want, f"{kind.name} {shapes} in_place={in_place}")


def test_mul_left_shifts(kern_both):
    """MUL with output shifts 0..15 (the DSP build's SMMLAR left-shift rows up to 13, the
    exact rows past it), multipliers across [0, 2^31), offsets at their extremes, every
    broadcast form and activations; against the NumPy reference."""
    rng = np.random.default_rng(41)
    forms = [((2, 5, 7), (2, 5, 7)), ((2, 5, 7), (7,)), ((3, 9), (1,)), ((1,), (4, 6)),
             ((4, 6, 1), (4, 6, 5)), ((1,), (1,)), ((33,), (33,))]
    for i in range(96):
        sa, sb = forms[i % len(forms)]
        shift = i % 16
        m = int(rng.integers(0, 2**31)) if i % 5 else (2**31 - 1 if i % 2 else 1 << 30)
        lo, hi = ((-128, 127) if i % 3 else
                  (int(rng.integers(-128, 0)), int(rng.integers(0, 128))))
        offsets = [int(v) for v in rng.integers(-127, 129, 2)]
        if i % 7 == 0:
            offsets = [128, -127] if i % 2 else [-127, 128]
        p = MulParams(input1_offset=offsets[0], input2_offset=offsets[1],
                      output_offset=int(rng.integers(-128, 128)), output_multiplier=m,
                      output_shift=shift, activation_min=lo, activation_max=hi)
        a, b = random_int8(rng, sa), random_int8(rng, sb)
        out_shape = tuple(np.broadcast_shapes(sa, sb))
        want = mul_int8(a, b, p)
        status, bufs = kern_both.call(
            "th_mul_s8", ("null", None),
            buf(i32(p.input1_offset, p.input2_offset, p.output_offset, lo, hi)),
            buf(i32(m, shift)), buf(shape_bytes(sa)), buf(a), buf(shape_bytes(sb)), buf(b),
            buf(shape_bytes(out_shape)), out(want.size))
        assert status == TH_OK
        assert_same(i8(bufs[8], out_shape), want, f"MUL {sa} x {sb} shift {shift} m {m}")


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data(), st.sampled_from([OpKind.ADD, OpKind.SUB]))
def test_binary_tables(kern_both, data, kind):
    """th_add_s8_tables / th_sub_s8_tables with the host-built tables (either may be NULL),
    against the reference, broadcast and in place included; the DSP build runs the SMMLAR
    requantization path."""
    draw = data.draw
    rng = arrays_rng(draw)
    s1 = scale(draw, -8, 0)
    s2 = s1 if draw(st.booleans()) else scale(draw, -8, 0)
    quants = [q(s, zero_point(draw)) for s in (s1, s2, scale(draw, -8, 1))]
    shapes = _broadcast_shapes(draw)
    if draw(st.booleans()):  # long rows: the 4-element loop and its tail
        n = draw(st.integers(4, 70))
        shapes = ((2, n), (2, n), (2, n)) if draw(st.booleans()) else ((2, n), (1, n), (2, n))
    activation = draw(st.sampled_from(INT8_ACTIVATIONS))
    graph = _binary_graph(kind, activation, shapes, quants)
    a, b = random_int8(rng, shapes[0]), random_int8(rng, shapes[1])
    try:
        p = (add_params if kind is OpKind.ADD else sub_params)(graph, graph.ops[0])
    except UnsupportedModelError:
        return
    want = (add_int8 if kind is OpKind.ADD else sub_int8)(a, b, p)
    t1, t2 = add_input_tables(p)
    which = draw(st.sampled_from(["12", "12", "12", "1", "2"]))  # mostly both tables
    tables = [buf(t) if str(k + 1) in which else ("null", None) for k, t in enumerate((t1, t2))]
    in_place = [i for i in (0, 1) if shapes[i] == shapes[2] and draw(st.booleans())]
    out_arg = ("alias", 6 + 2 * in_place[0]) if in_place else out(want.size)
    status, bufs = kern_both.call(
        "th_add_s8_tables" if kind is OpKind.ADD else "th_sub_s8_tables", ("null", None),
        buf(i32(p.input1_offset, p.input2_offset, p.output_offset, p.left_shift,
                p.activation_min, p.activation_max)),
        buf(i32(p.input1_multiplier, p.input1_shift, p.input2_multiplier, p.input2_shift,
                p.output_multiplier, p.output_shift)),
        *tables, buf(shape_bytes(shapes[0])), buf(a), buf(shape_bytes(shapes[1])), buf(b),
        buf(shape_bytes(shapes[2])), out_arg)
    assert status == TH_OK
    assert_same(i8(bufs[10], shapes[2]), want,
                f"{kind.name} {shapes} in_place={in_place} tables={[t[0] for t in tables]}")


# Forms of the elementwise fast paths (th_nn_add_sub_s8.c, th_mul_s8.c), each on both sides
# of its threshold: scalar broadcast below / at TH_*_LUT_MIN (512) outputs (the lookups
# eight a pass, tails of 4 and 7), channel rows
# repeated into the stack row (C <= 16 / 32) or in column blocks (C > 32 / 64, with tails),
# spatial constants in blocks of 16 rows, per-channel output tables from 224 (ADD / SUB;
# columns from 8 rows below without a clamp; MUL: where they pay, test_mul_table_choices)
# rows, same shapes with a doubled table from 512 outputs, tiny tensors; (out shape,
# broadcast shape).
_FAST_FORMS = [
    ((2, 300), (2, 300)), ((1, 37), (1, 37)),
    ((1, 511), (1,)), ((1, 512), (1,)), ((3, 4, 50), (1, 1, 1)), ((1, 9), (1,)),
    # scalar tables' lookups (eight a pass): tails of 4 and of 7
    ((1, 524), (1,)), ((1, 519), (1,)),
    ((40, 7), (7,)), ((2, 16), (16,)), ((5, 33), (1, 33)), ((9, 70), (70,)), ((3, 130), (130,)),
    ((5, 6, 7), (5, 6, 1)), ((37, 3), (37, 1)), ((18, 65), (18, 1)),
    ((2, 3), (3,)), ((1,), (1,)),
    # channel rows from TH_ADD_CHAN_LUT_ROWS (224): an output table per channel, odd counts
    ((224, 5), (5,)), ((1, 331, 3), (1, 1, 3)), ((19, 17, 2), (2,)), ((223, 4), (4,)),
    ((280, 3), (3,)), ((279, 2), (2,)),
    # same shape from 512 outputs: input1's table doubled (odd counts: the tail)
    ((7, 75), (7, 75)), ((511,), (511,)),
    # no clamp: down the columns from TH_ADD_CHAN_COL_ROWS (8) rows to the tables; row
    # tails of 1-3
    ((7, 9), (9,)), ((8, 9), (1, 9)), ((11, 3, 5), (5,)), ((223, 2), (2,)), ((45, 33), (33,)),
    # clamped channel rows: tables from TH_ADD_CHAN_LUT_ROWS_CLAMP (128)
    ((128, 6), (6,)), ((127, 5), (5,)),
]


def _fast_case(rng: np.random.Generator, i: int, kind: OpKind
               ) -> tuple[tuple, np.ndarray, np.ndarray, object]:  # fmt: skip
    """Case i: shapes (either operand broadcast), inputs and params; zero points at their
    extremes every fifth case, every activation in turn."""
    big, small = _FAST_FORMS[i % len(_FAST_FORMS)]
    pair = (big, small) if (i // len(_FAST_FORMS)) % 2 == 0 else (small, big)
    shapes = (pair[0], pair[1], tuple(np.broadcast_shapes(big, small)))
    zps = [int(v) for v in rng.integers(-128, 128, 3)]
    if i % 5 == 0:
        zps = [-128, 127, int(rng.integers(-128, 128))] if i % 2 else [127, -128, -128]
    scales = [float(np.float32(2.0 ** rng.uniform(-8, 0))) for _ in range(3)]
    activation = INT8_ACTIVATIONS[i % len(INT8_ACTIVATIONS)]
    graph = _binary_graph(kind, activation, shapes, [q(sv, z) for sv, z in zip(scales, zps)])
    if kind is OpKind.MUL and i % 2:  # raw params: left shifts and any multiplier
        lo, hi = ((-128, 127) if i % 3 else
                  (int(rng.integers(-128, 0)), int(rng.integers(0, 128))))  # fmt: skip
        p = MulParams(input1_offset=-zps[0], input2_offset=-zps[1], output_offset=zps[2],
                      output_multiplier=int(rng.integers(0, 2**31)),
                      output_shift=int(rng.integers(-12, 14)), activation_min=lo,
                      activation_max=hi)
    elif kind is OpKind.MUL:
        p = mul_params(graph, graph.ops[0])
    else:
        p = (add_params if kind is OpKind.ADD else sub_params)(graph, graph.ops[0])
    a, b = random_int8(rng, shapes[0]), random_int8(rng, shapes[1])
    return shapes, a, b, p


def _binary_call(kind: OpKind, a: np.ndarray, b: np.ndarray, p: object, tables: bool
                 ) -> tuple[np.ndarray, str, list, int]:  # fmt: skip
    """The reference output, the kernel's name, its parameter (and ADD / SUB table) buffers
    and the index of its first shape argument."""
    if kind is OpKind.MUL:
        return (mul_int8(a, b, p), "th_mul_s8",
                [buf(i32(p.input1_offset, p.input2_offset, p.output_offset, p.activation_min,
                         p.activation_max)), buf(i32(p.output_multiplier, p.output_shift))],
                4)  # fmt: skip
    want = (add_int8 if kind is OpKind.ADD else sub_int8)(a, b, p)
    name = "th_add_s8" if kind is OpKind.ADD else "th_sub_s8"
    args = [buf(i32(p.input1_offset, p.input2_offset, p.output_offset, p.left_shift,
                    p.activation_min, p.activation_max)),
            buf(i32(p.input1_multiplier, p.input1_shift, p.input2_multiplier, p.input2_shift,
                    p.output_multiplier, p.output_shift))]
    if not tables:
        return want, name, args, 4
    return want, name + "_tables", args + [buf(t) for t in add_input_tables(p)], 6


def test_binary_fast_paths(kern_both):
    """ADD / SUB (with and without the host tables) and MUL over every broadcast form on
    both sides of the fast paths' thresholds (scalar tables, channel rows, spatial blocks,
    tiny tensors), either operand broadcast, all activations, offsets and multipliers of
    every sign and extreme, in place where allowed: 0 mismatches against the reference."""
    rng = np.random.default_rng(14)
    for kind in (OpKind.ADD, OpKind.SUB, OpKind.MUL):
        for i in range(2 * len(_FAST_FORMS)):
            shapes, a, b, p = _fast_case(rng, i, kind)
            in_place = shapes[0] == shapes[2] and i % 3 == 0
            # mostly the table kernels, as the lowering picks
            want, name, args, first = _binary_call(kind, a, b, p, tables=i % 4 != 3)
            out_arg = ("alias", first) if in_place else out(want.size)
            status, bufs = kern_both.call(
                name, ("null", None), *args, buf(shape_bytes(shapes[0])), buf(a),
                buf(shape_bytes(shapes[1])), buf(b), buf(shape_bytes(shapes[2])), out_arg)
            assert status == TH_OK
            assert_same(i8(bufs[first + 4], shapes[2]), want,
                        f"{name} {shapes} case {i} in_place={in_place} {p}")


# The output tables of the scalar (from 512 outputs) and channel (from 224 rows; MUL: where
# they pay) broadcasts (th_nn_mono_fill, MUL's mul_fill / mul_fill_th: runs at both ends
# found by binary search or division, the sign of the accumulator split): every int8 value
# in every column, scale ratios from 2^-12 to 2^6 so the runs go from empty to the whole
# table, zero points at their extremes.
_TABLE_FORMS = [((2, 256), (1,)), ((1, 1, 512), (1, 1, 1)), ((256, 3), (3,)),
                ((283, 2), (1, 2)), ((256, 11), (11,))]


def test_binary_output_tables(kern_both):
    """ADD / SUB (host tables) and MUL (right and left shifts) through the scalar and channel
    output tables, either operand broadcast, every activation: 0 mismatches against the
    reference."""
    rng = np.random.default_rng(1416)
    for kind in (OpKind.ADD, OpKind.SUB, OpKind.MUL):
        for i in range(24):
            big, small = _TABLE_FORMS[i % len(_TABLE_FORMS)]
            pair = (big, small) if (i // len(_TABLE_FORMS)) % 2 == 0 else (small, big)
            shapes = (pair[0], pair[1], tuple(np.broadcast_shapes(big, small)))
            zps = [int(v) for v in rng.integers(-128, 128, 3)]
            if i % 5 == 0:
                zps = [-128, 127, int(rng.integers(-128, 128))] if i % 2 else [127, -128, 0]
            scales = [float(np.float32(2.0 ** rng.uniform(-8, 0))) for _ in range(2)]
            scales.append(float(np.float32(scales[0] * 2.0 ** rng.uniform(-6, 12))))
            if kind is OpKind.MUL:
                scales[2] = float(np.float32(scales[0] * scales[1] * 2.0 ** rng.uniform(-6, 9)))
            graph = _binary_graph(kind, INT8_ACTIVATIONS[i % len(INT8_ACTIVATIONS)], shapes,
                                  [q(sv, z) for sv, z in zip(scales, zps)])
            p = {OpKind.ADD: add_params, OpKind.SUB: sub_params,
                 OpKind.MUL: mul_params}[kind](graph, graph.ops[0])
            # every int8 value in every column of the broadcast side's partner
            cols = big[-1] if small[-1] == big[-1] else 1
            x = np.column_stack([np.resize(rng.permutation(np.arange(-128, 128, dtype=np.int8)),
                                           int(np.prod(big)) // cols)
                                 for _ in range(cols)]).reshape(big)  # fmt: skip
            y = random_int8(rng, small)
            a, b = (x, y) if pair[0] == big else (y, x)
            want, name, args, first = _binary_call(kind, a, b, p, tables=True)
            status, bufs = kern_both.call(
                name, ("null", None), *args, buf(shape_bytes(shapes[0])), buf(a),
                buf(shape_bytes(shapes[1])), buf(b), buf(shape_bytes(shapes[2])),
                out(want.size))
            assert status == TH_OK
            assert_same(i8(bufs[first + 4], shapes[2]), want, f"{name} {shapes} case {i} {p}")


# MUL's output tables chosen by their estimated cost (th_mul_s8.c: mul_lut_pays,
# mul_chan_lut_pays): scalar broadcasts of 209 to 511 outputs (the lookups eight a pass:
# tails of 0-7) and channel rows from 76 rows (TH_MUL_CHAN_LUT_ROWS; 75 below it),
# where large products (narrow tables: few entries between the saturated runs) make the
# tables pay and small ones do not; the channel tables' edges by division (mul_fill_th), each
# table written over the previous channel's (its runs only where they differ, the positive
# factors first): factors y + oy of both signs and 0 (a channel value at its zero point),
# right shifts (the rounding's sign term) and left shifts, every activation; (out shape,
# broadcast shape).
_MUL_CHOICE_FORMS = [((300,), (1,)), ((1, 250), (1,)), ((2, 220), (1,)), ((480,), (1,)),
                     ((120, 7), (7,)), ((1, 150, 12), (1, 1, 12)), ((100, 33), (33,)),
                     ((95, 3), (1, 3)), ((263,), (1,)), ((77, 6), (6,)), ((76, 40), (40,)),
                     ((75, 9), (9,))]


def test_mul_table_inner_words(kern_both):
    """MUL channel and scalar tables whose inner words run long (wide tables: small products)
    through each form of mul_inner_words: right shifts e of 1-15 (the left-shifted SMMLA form,
    e = 15 its last), 16-20 (the plain loop), multipliers below 2^30 (the form's range check
    on the run's ends falls back), clamps on either side: 0 mismatches against the NumPy
    reference."""
    rng = np.random.default_rng(1427)
    forms = [((300, 5), (5,)), ((260, 3), (1, 3)), ((700,), (1,)), ((1, 290, 4), (1, 1, 4))]
    shifts = [-1, -4, -9, -14, -15, -16, -18, -20]
    for i in range(4 * len(shifts)):
        big, small = forms[i % len(forms)]
        pair = (big, small) if (i // 2) % 2 == 0 else (small, big)
        zps = [int(v) for v in rng.integers(-128, 128, 3)]
        shift = shifts[i % len(shifts)]
        # normalized multipliers, and small ones from i >= 16 (2^10 .. 2^29)
        mult = (int(rng.integers(2**30, 2**31)) if i < 16
                else int(2 ** rng.uniform(10, 29.9)))  # fmt: skip
        lo, hi = ((-128, 127) if i % 3 else
                  (int(rng.integers(-128, -20)), int(rng.integers(20, 128))))  # fmt: skip
        p = MulParams(input1_offset=-zps[0], input2_offset=-zps[1], output_offset=zps[2],
                      output_multiplier=mult, output_shift=shift, activation_min=lo,
                      activation_max=hi)
        x = random_int8(rng, big)
        y = random_int8(rng, small)
        a, b = (x, y) if pair[0] == big else (y, x)
        want, name, args, first = _binary_call(OpKind.MUL, a, b, p, tables=True)
        status, bufs = kern_both.call(
            name, ("null", None), *args, buf(shape_bytes(pair[0])), buf(a),
            buf(shape_bytes(pair[1])), buf(b), buf(shape_bytes(want.shape)), out(want.size))
        assert status == TH_OK
        assert_same(i8(bufs[first + 4], want.shape), want, f"{name} {pair} case {i} {p}")


def test_mul_table_choices(kern_both):
    """th_mul_s8 through the scalar and channel tables on either side of their cost
    estimates, either operand broadcast: 0 mismatches against the NumPy reference."""
    rng = np.random.default_rng(1426)
    for i in range(8 * len(_MUL_CHOICE_FORMS)):
        big, small = _MUL_CHOICE_FORMS[i % len(_MUL_CHOICE_FORMS)]
        pair = (big, small) if (i // len(_MUL_CHOICE_FORMS)) % 2 == 0 else (small, big)
        zps = [int(v) for v in rng.integers(-128, 128, 3)]
        if i % 5 == 0:
            zps = [-128, 127, int(rng.integers(-128, 128))] if i % 2 else [127, -128, -128]
        act = (i // 3) % 3  # none, relu6-like, a narrow range
        lo, hi = ((-128, 127), (max(-128, zps[2]), min(127, zps[2] + 40)),
                  (int(rng.integers(-128, 0)), int(rng.integers(0, 128))))[act]
        # large products (shift -1 .. 3: narrow tables) or small ones (-9 .. -5: wide)
        wide = (i // 2) % 2 == 1
        shift = int(rng.integers(-9, -4)) if wide else int(rng.integers(-1, 4))
        p = MulParams(input1_offset=-zps[0], input2_offset=-zps[1], output_offset=zps[2],
                      output_multiplier=int(rng.integers(2**30, 2**31)), output_shift=shift,
                      activation_min=lo, activation_max=hi)
        x = random_int8(rng, big)
        y = random_int8(rng, small)
        if y.size > 1 or i % 4 == 0:  # a factor of 0
            y.reshape(-1)[0] = zps[1] if pair[0] == big else zps[0]
        a, b = (x, y) if pair[0] == big else (y, x)
        want, name, args, first = _binary_call(OpKind.MUL, a, b, p, tables=True)
        status, bufs = kern_both.call(
            name, ("null", None), *args, buf(shape_bytes(pair[0])), buf(a),
            buf(shape_bytes(pair[1])), buf(b), buf(shape_bytes(want.shape)), out(want.size))
        assert status == TH_OK
        assert_same(i8(bufs[first + 4], want.shape), want, f"{name} {pair} case {i} {p}")


# Forms of th_nn_add_sub_s8's direct rows (no tables: the lowering's small tensors): same
# shapes (one row and several), channel rows against one stack row of constants (up to 32 a
# block: 31, 32, 33, 70 columns), spatial and scalar constants per row (blocks of 32 rows:
# 31, 32, 33, 40 rows), and a broadcast of both inputs ([1, n] against [r, 1]) that the
# general rows take; (first shape, second shape).
_DIRECT_FORMS = [
    ((1,), (1,)), ((3,), (3,)), ((37,), (37,)), ((3, 5), (3, 5)), ((2, 1, 4), (2, 1, 4)),
    ((6, 2), (2,)), ((2, 31), (1, 31)), ((3, 32), (32,)), ((2, 33), (33,)), ((2, 70), (70,)),
    ((7, 1), (1,)), ((20, 2), (20, 1)), ((31, 3), (31, 1)), ((32, 1), (32, 1)),
    ((33, 2), (33, 1)), ((5, 8, 1), (5, 8, 3)), ((100,), (1,)), ((3, 1, 1), (1, 1, 1)),
    ((1, 6), (4, 1)),
]


def test_add_sub_direct_rows(kern_both):
    """th_add_s8 / th_sub_s8 without tables over every form of the direct rows, either
    operand first, equal scales (both input shifts 0) every third case, zero points at their
    extremes every fifth, every activation, in place where allowed: 0 mismatches against
    the NumPy reference."""
    rng = np.random.default_rng(1414)
    for kind in (OpKind.ADD, OpKind.SUB):
        for i in range(4 * len(_DIRECT_FORMS)):
            first, second = _DIRECT_FORMS[i % len(_DIRECT_FORMS)]
            pair = (first, second) if (i // len(_DIRECT_FORMS)) % 2 == 0 else (second, first)
            shapes = (pair[0], pair[1], tuple(np.broadcast_shapes(first, second)))
            zps = [int(v) for v in rng.integers(-128, 128, 3)]
            if i % 5 == 0:
                zps = [-128, 127, int(rng.integers(-128, 128))] if i % 2 else [127, -128, -128]
            scales = [float(np.float32(2.0 ** rng.uniform(-8, 0))) for _ in range(3)]
            if i % 3 == 0:
                scales[1] = scales[0]
            graph = _binary_graph(kind, INT8_ACTIVATIONS[i % len(INT8_ACTIVATIONS)], shapes,
                                  [q(sv, z) for sv, z in zip(scales, zps)])
            p = (add_params if kind is OpKind.ADD else sub_params)(graph, graph.ops[0])
            a, b = random_int8(rng, shapes[0]), random_int8(rng, shapes[1])
            want = (add_int8 if kind is OpKind.ADD else sub_int8)(a, b, p)
            alias = [j for j in (0, 1) if shapes[j] == shapes[2]]
            out_arg = ("alias", 4 + 2 * alias[i % len(alias)]) if alias and i % 2 else \
                out(want.size)
            status, bufs = kern_both.call(
                "th_add_s8" if kind is OpKind.ADD else "th_sub_s8", ("null", None),
                buf(i32(p.input1_offset, p.input2_offset, p.output_offset, p.left_shift,
                        p.activation_min, p.activation_max)),
                buf(i32(p.input1_multiplier, p.input1_shift, p.input2_multiplier,
                        p.input2_shift, p.output_multiplier, p.output_shift)),
                buf(shape_bytes(shapes[0])), buf(a), buf(shape_bytes(shapes[1])), buf(b),
                buf(shape_bytes(shapes[2])), out_arg)
            assert status == TH_OK
            assert_same(i8(bufs[8], shapes[2]), want, f"{kind.name} {shapes} case {i} {p}")


# MUL channel rows (th_mul_s8.c chanv_t): columns 1-70 (groups of four and every tail, one
# block of 32 or several), rows that fill the stack row exactly or leave a remainder.
_MUL_CHAN_FORMS = [(7, 1), (13, 2), (3, 3), (9, 4), (13, 5), (5, 7), (4, 8), (3, 15),
                   (5, 16), (2, 17), (4, 31), (3, 32), (6, 33), (2, 50), (3, 70), (319, 6)]


def test_mul_channel_rows(kern_both):
    """MUL [rows, C] against [C] (either operand first) with right output shifts (the fast
    path's packed halfword factors), every activation, zero points at their extremes every
    fourth case, in place every third: 0 mismatches against the NumPy reference."""
    rng = np.random.default_rng(1415)
    for i in range(3 * len(_MUL_CHAN_FORMS)):
        rows, c = _MUL_CHAN_FORMS[i % len(_MUL_CHAN_FORMS)]
        big, small = (rows, c), ((c,) if i % 2 else (1, c))
        pair = (big, small) if (i // len(_MUL_CHAN_FORMS)) % 2 == 0 else (small, big)
        zps = [int(v) for v in rng.integers(-128, 128, 3)]
        if i % 4 == 0:
            zps = [-128, 127, int(rng.integers(-128, 128))] if i % 8 else [127, -128, -128]
        scales = [float(np.float32(2.0 ** rng.uniform(-8, -1))) for _ in range(2)]
        so = float(np.float32(scales[0] * scales[1] * 2.0 ** rng.uniform(1.05, 12)))
        shapes = (pair[0], pair[1], big)
        graph = _binary_graph(OpKind.MUL, INT8_ACTIVATIONS[i % len(INT8_ACTIVATIONS)], shapes,
                              [q(sv, z) for sv, z in zip([*scales, so], zps)])
        p = mul_params(graph, graph.ops[0])
        assert p.output_shift < 0  # the right-shift (fast) rows
        a, b = random_int8(rng, shapes[0]), random_int8(rng, shapes[1])
        want = mul_int8(a, b, p)
        first = 4 if shapes[0] == big else 6
        out_arg = ("alias", first) if i % 3 == 0 else out(want.size)
        status, bufs = kern_both.call(
            "th_mul_s8", ("null", None),
            buf(i32(p.input1_offset, p.input2_offset, p.output_offset, p.activation_min,
                    p.activation_max)),
            buf(i32(p.output_multiplier, p.output_shift)), buf(shape_bytes(shapes[0])), buf(a),
            buf(shape_bytes(shapes[1])), buf(b), buf(shape_bytes(shapes[2])), out_arg)
        assert status == TH_OK
        assert_same(i8(bufs[8], big), want, f"MUL {shapes} case {i} {p}")


# Spatial broadcast [rows, C] against [rows, 1] (th_nn_add_sub_s8.c and th_mul_s8.c
# spatial_t): C 2-70 (groups of four and every tail of 1-3, channel counts below one group),
# 2 to 40 pixels, 4-D [1, H, W, C] against [1, H, W, 1] and [H, W*C] against [H, 1];
# (big shape, broadcast shape).
_SPATIAL_FORMS = [
    ((2, 2), (2, 1)), ((9, 3), (9, 1)), ((5, 4), (5, 1)), ((3, 5), (3, 1)), ((4, 6), (4, 1)),
    ((7, 7), (7, 1)), ((2, 8), (2, 1)), ((3, 13), (3, 1)), ((40, 17), (40, 1)),
    ((1, 5, 4, 31), (1, 5, 4, 1)), ((1, 2, 3, 33), (1, 2, 3, 1)), ((2, 64), (2, 1)),
    ((3, 70), (3, 1)), ((4, 3, 5), (4, 1, 1)), ((1, 20, 1, 2), (1, 20, 1, 1)),
]


def test_spatial_rows(kern_both):
    """ADD / SUB (with the host tables, as the lowering calls them) and MUL over the spatial
    forms, either operand broadcast, every activation, zero points at their extremes every
    fifth case, MUL with right shifts (the packed halfword factors) and left shifts, in place
    of the full-size input every third case: 0 mismatches against the NumPy reference."""
    rng = np.random.default_rng(1416)
    for kind in (OpKind.ADD, OpKind.SUB, OpKind.MUL):
        for i in range(2 * len(_SPATIAL_FORMS)):
            big, small = _SPATIAL_FORMS[i % len(_SPATIAL_FORMS)]
            first = i // len(_SPATIAL_FORMS) == 0  # the full-size input first
            shapes = ((big, small) if first else (small, big)) + (big,)
            zps = [int(v) for v in rng.integers(-128, 128, 3)]
            if i % 5 == 0:
                zps = [-128, 127, int(rng.integers(-128, 128))] if i % 2 else [127, -128, -128]
            scales = [float(np.float32(2.0 ** rng.uniform(-8, 0))) for _ in range(3)]
            if kind is OpKind.MUL:  # right shifts; every fourth case a left shift
                scales[2] = scales[0] * scales[1] * float(
                    2.0 ** (rng.uniform(-3, -1) if i % 4 == 3 else rng.uniform(1, 12)))
            graph = _binary_graph(kind, INT8_ACTIVATIONS[i % len(INT8_ACTIVATIONS)], shapes,
                                  [q(sv, z) for sv, z in zip(scales, zps)])
            a, b = random_int8(rng, shapes[0]), random_int8(rng, shapes[1])
            if kind is OpKind.MUL:
                p = mul_params(graph, graph.ops[0])
                want, name, nargs = mul_int8(a, b, p), "th_mul_s8", 4
                args = [buf(i32(p.input1_offset, p.input2_offset, p.output_offset,
                                p.activation_min, p.activation_max)),
                        buf(i32(p.output_multiplier, p.output_shift))]
            else:
                p = (add_params if kind is OpKind.ADD else sub_params)(graph, graph.ops[0])
                want = (add_int8 if kind is OpKind.ADD else sub_int8)(a, b, p)
                name = "th_add_s8_tables" if kind is OpKind.ADD else "th_sub_s8_tables"
                nargs = 6
                args = [buf(i32(p.input1_offset, p.input2_offset, p.output_offset,
                                p.left_shift, p.activation_min, p.activation_max)),
                        buf(i32(p.input1_multiplier, p.input1_shift, p.input2_multiplier,
                                p.input2_shift, p.output_multiplier, p.output_shift)),
                        *(buf(t) for t in add_input_tables(p))]
            big_arg = nargs if first else nargs + 2
            out_arg = ("alias", big_arg) if i % 3 == 0 else out(want.size)
            status, bufs = kern_both.call(
                name, ("null", None), *args, buf(shape_bytes(shapes[0])), buf(a),
                buf(shape_bytes(shapes[1])), buf(b), buf(shape_bytes(big)), out_arg)
            assert status == TH_OK
            assert_same(i8(bufs[nargs + 4], big), want, f"{name} {shapes} case {i} {p}")


def test_add_input_tables_match_reference():
    """Table entries summed and finished as the reference does give the reference's ADD
    for all 65536 input pairs."""
    from tinyhost.arith.fixedpoint import wrap_int32
    from tinyhost.reference.ops.elementwise import _finish

    graph = _binary_graph(OpKind.ADD, Activation.NONE, ((16, 16), (16, 16), (16, 16)),
                          [q(0.05, 3), q(0.02, -7), q(0.07, 1)])
    p = add_params(graph, graph.ops[0])
    t1, t2 = add_input_tables(p)
    x = np.arange(256, dtype=np.uint8).view(np.int8)
    a, b = np.meshgrid(x, x, indexing="ij")
    idx = lambda v: v.view(np.uint8).astype(np.intp)  # noqa: E731
    got = _finish(wrap_int32(t1[idx(a)].astype(np.int64) + t2[idx(b)]), p)
    assert_same(got, add_int8(a, b, p), "tables vs reference")


def test_binary_refuses_bad_shapes(kern):
    params = buf(i32(0, 0, 0, 20, -128, 127))
    quant = buf(i32(1 << 30, -1, 1 << 30, -1, 1 << 30, -20))
    a = np.zeros((2, 3), np.int8)
    b = np.zeros((4, 3), np.int8)
    for s2, out_shape in [((4, 3), (2, 3)), ((2, 3), (2, 4)), ((2, 3), (1, 2, 3, 1))]:
        status, bufs = kern.call("th_add_s8", ("null", None), params, quant,
                                 buf(shape_bytes((2, 3))), buf(a), buf(shape_bytes(s2)),
                                 buf(b if s2 == (4, 3) else a), buf(shape_bytes(out_shape)),
                                 out(int(np.prod(out_shape))))
        assert status == TH_ERR_ARG, (s2, out_shape)
        assert set(bufs[8]) == {0x5A}


# ------------------------------------------------------------------------------- SOFTMAX


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data(), st.sampled_from([np.int8, np.int16]))
def test_softmax(kern, data, out_dtype):
    draw = data.draw
    rng = arrays_rng(draw)
    rows = draw(st.integers(1, 4))
    depth = draw(st.sampled_from([1, 2, 10, 12, draw(st.integers(1, 300)), 1000, 4095]))
    shape = (rows, depth) if draw(st.booleans()) else (1, rows, 1, depth)
    beta = draw(st.sampled_from([1.0, draw(st.floats(0.1, 4.0))]))
    in_q = q(scale(draw, -7, 1), zero_point(draw))
    out_q = q(1 / 256, -128) if out_dtype == np.int8 else q(1 / 65536, -32768)
    tensors = [Tensor("x", shape, I8, quant=in_q),
               Tensor("y", shape, np.dtype(out_dtype), quant=out_q)]
    graph = single_op_graph(OpKind.SOFTMAX, SoftmaxOptions(beta), tensors, [0], [1])
    try:
        p = softmax_params(graph, graph.ops[0])
    except UnsupportedModelError:
        return
    x = random_int8(rng, shape)
    if draw(st.booleans()):  # rows with ties and a narrow spread
        x = (x // 16).astype(np.int8)
    itemsize = np.dtype(out_dtype).itemsize
    name = "th_softmax_s8" if out_dtype == np.int8 else "th_softmax_s8_s16"
    status, bufs = kern.call(name, ("null", None),
                             buf(i32(p.input_multiplier, p.input_left_shift, p.diff_min)),
                             buf(shape_bytes(shape)), buf(x), out(x.size * itemsize))
    assert status == TH_OK
    want = softmax_int8(x, p) if out_dtype == np.int8 else softmax_int8_int16(x, p)
    got = np.frombuffer(bufs[4], out_dtype).reshape(shape)
    assert_same(got, want, f"softmax {shape} beta={beta}")


def test_softmax_refuses_rows_that_could_overflow(kern):
    x = np.zeros((1, 4096), np.int8)
    status, bufs = kern.call("th_softmax_s8", ("null", None), buf(i32(1 << 30, 20, -100)),
                             buf(shape_bytes(x.shape)), buf(x), out(x.size))
    assert status == TH_ERR_UNSUPPORTED
    assert set(bufs[4]) == {0x5A}


# ------------------------------------------------------------------- unary int8 (tables)


def _unary_graph(draw, kind: OpKind):
    in_q = q(scale(draw, -9, 1), zero_point(draw))
    if kind is OpKind.LOGISTIC:
        out_q = q(1 / 256, -128)
    elif kind is OpKind.TANH:
        out_q = q(1 / 128, 0)
    else:
        out_q = q(scale(draw, -9, 1), zero_point(draw))
    options = LeakyReluOptions(draw(st.floats(-2.0, 2.0))) if kind is OpKind.LEAKY_RELU \
        else NoOptions()
    tensors = [Tensor("x", (256,), I8, quant=in_q), Tensor("y", (256,), I8, quant=out_q)]
    return single_op_graph(kind, options, tensors, [0], [1])


def _unary_reference(graph, x: np.ndarray) -> np.ndarray:
    """The reference kernel applied directly to x (not through a table)."""
    from tinyhost.arith import activations as a
    from tinyhost.arith import unary as u
    from tinyhost.reference.ops import unary as ref_unary

    op = graph.ops[0]
    fn = {
        OpKind.LOGISTIC: lambda: ref_act.logistic_int8(x, a.logistic_params(graph, op)),
        OpKind.TANH: lambda: ref_act.tanh_int8(x, a.tanh_params(graph, op)),
        OpKind.HARD_SWISH: lambda: ref_act.hard_swish_int8(x, a.hard_swish_params(graph, op)),
        OpKind.LEAKY_RELU: lambda: ref_act.leaky_relu_int8(x, a.leaky_relu_params(graph, op)),
        OpKind.RELU: lambda: ref_act.relu_int8(x, a.relu_params(graph, op)),
        OpKind.RELU6: lambda: ref_act.relu6_int8(x, a.relu6_params(graph, op)),
        OpKind.QUANTIZE: lambda: ref_quant.requantize(x, a.requantize_params(graph, op)),
        OpKind.ABS: lambda: ref_unary.abs_int8(x, u.abs_params(graph, op)),
        OpKind.RSQRT: lambda: ref_unary.rsqrt_int8(x, u.rsqrt_params(graph, op)),
        OpKind.ELU: lambda: ref_unary.elu_int8(x, u.elu_params(graph, op)),
        OpKind.ZEROS_LIKE: lambda: np.zeros_like(x),
    }[op.kind]
    return fn()


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data(), st.sampled_from(sorted(LUT_OPS, key=lambda k: k.value)))
def test_unary_lut_exhaustive(kern, data, kind):
    """All 256 inputs (shuffled, with a tail that is not a multiple of 4), out of place and
    in place, against the reference kernel evaluated directly."""
    draw = data.draw
    rng = arrays_rng(draw)
    graph = _unary_graph(draw, kind)
    try:
        table = op_table(graph, graph.ops[0])
    except UnsupportedModelError:
        return
    x = rng.permutation(TABLE_INPUTS)
    x = np.concatenate([x, x[:draw(st.integers(0, 7))]])
    want = _unary_reference(graph, x)
    assert_same(apply_table(table, x), want, f"{kind.name} table")
    in_place = draw(st.booleans())
    status, bufs = kern.call("th_lut_s8", ("null", None), buf(table), ("int", x.size), buf(x),
                             ("alias", 3) if in_place else out(x.size))
    assert status == TH_OK
    assert_same(i8(bufs[4], x.shape), want, f"{kind.name} in_place={in_place}")


def test_lut_table_order_is_uint8_index():
    """Entry i of a table is f((int8)i): the order th_lut_s8 indexes with (uint8_t)x."""
    tensors = [Tensor("x", (256,), I8, quant=q(0.5, 3)), Tensor("y", (256,), I8,
                                                                quant=q(0.5, 3))]
    graph = single_op_graph(OpKind.RELU, NoOptions(), tensors, [0], [1])
    table = op_table(graph, graph.ops[0])
    # Same scales: RELU is max(x, zero point 3).
    assert table[0] == 3 and table[10] == 10 and table[127] == 127
    assert table[128] == 3 and table[255] == 3  # x = -128 and x = -1


def test_lut_refuses_non_int8():
    tensors = [Tensor("x", (4,), F32), Tensor("y", (4,), F32)]
    graph = single_op_graph(OpKind.TANH, NoOptions(), tensors, [0], [1])
    with pytest.raises(UnsupportedModelError, match="int8"):
        op_table(graph, graph.ops[0])


# --------------------------------------------------------------- QUANTIZE / DEQUANTIZE


def _quantize_inputs(rng: np.random.Generator, s: np.float32) -> np.ndarray:
    k = rng.integers(-300, 300, 200).astype(np.float32)
    halves = (k + np.float32(0.5)) * s  # lands on or next to .5 after the division
    near = np.nextafter(halves, np.float32(np.inf) * np.sign(rng.standard_normal(200)))
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e38, -1e38, 1e-45, -1e-45,
                        0.49999997, -0.49999997, 2.5, -2.5], np.float32)
    wide = (rng.standard_normal(200) * 200 * s).astype(np.float32)
    return np.concatenate([halves, near.astype(np.float32), special, wide]).astype(np.float32)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_quantize_float(kern, data):
    draw = data.draw
    rng = arrays_rng(draw)
    s = np.float32(scale(draw, -20, 4))
    zp = zero_point(draw)
    x = _quantize_inputs(rng, s)
    want = ref_quant.quantize_float(x, QuantizeParams(float(s), zp))
    params = struct.pack("<fi", s, zp)
    status, bufs = kern.call("th_quantize_f32_s8", ("null", None), buf(params),
                             ("int", x.size), buf(x), out(x.size))
    assert status == TH_OK
    assert_same(i8(bufs[4], x.shape), want, f"quantize scale={s} zp={zp}")


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_dequantize_exhaustive(kern, data):
    """Bitwise equal float32 (the float32 product vs TFLM's double product)."""
    draw = data.draw
    # Scales from subnormal-producing to huge (overflow to inf) included.
    s = np.float32(draw(st.sampled_from([
        2.0 ** draw(st.floats(-140, -100)), 2.0 ** draw(st.floats(-30, 10)),
        2.0 ** draw(st.floats(110, 127)), float(np.float32(draw(st.floats(1e-6, 1.0)))),
    ])))
    zp = zero_point(draw)
    x = TABLE_INPUTS.copy()
    from tinyhost.arith.activations import DequantizeParams

    want = ref_quant.dequantize(x, DequantizeParams(float(s), zp))
    status, bufs = kern.call("th_dequantize_s8_f32", ("null", None),
                             buf(struct.pack("<fi", s, zp)), ("int", x.size), buf(x),
                             out(4 * x.size))
    assert status == TH_OK
    got = np.frombuffer(bufs[4], np.float32)
    assert_same(got.view(np.uint32), want.view(np.uint32), f"dequantize scale={s} zp={zp}")


# ------------------------------------------------------------------------ data movement


def _shape(draw, rank_lo: int = 1, rank_hi: int = 5, dim_hi: int = 5) -> tuple[int, ...]:
    rank = draw(st.integers(rank_lo, rank_hi))
    return tuple(draw(st.integers(1, dim_hi)) for _ in range(rank))


@SETTINGS
@given(st.data())
def test_pad(kern, data):
    draw = data.draw
    rng = arrays_rng(draw)
    shape = _shape(draw, 1, 6, 4)
    widths = [(draw(st.integers(0, 3)) if draw(st.booleans()) else 0,
               draw(st.integers(0, 3)) if draw(st.booleans()) else 0) for _ in shape]
    value = zero_point(draw)
    x = random_int8(rng, shape)
    want = pad(x, widths, value)
    before = [w[0] for w in widths] + [0] * (MAX_RANK - len(shape))
    after = [w[1] for w in widths] + [0] * (MAX_RANK - len(shape))
    status, bufs = kern.call("th_pad_s8", ("null", None), buf(i32(value, *before, *after)),
                             buf(shape_bytes(shape)), buf(x), buf(shape_bytes(want.shape)),
                             out(want.size))
    assert status == TH_OK
    assert_same(i8(bufs[5], want.shape), want, f"pad {shape} {widths}")


@SETTINGS
@given(st.data())
def test_concat(kern, data):
    draw = data.draw
    rng = arrays_rng(draw)
    shape = _shape(draw, 1, 5, 4)
    axis = draw(st.integers(0, len(shape) - 1))
    count = draw(st.integers(1, 4))
    inputs = []
    for _ in range(count):
        s = list(shape)
        s[axis] = draw(st.integers(1, 4))
        inputs.append(random_int8(rng, tuple(s)))
    want = concatenate(inputs, axis)
    shapes = b"".join(shape_bytes(a.shape) for a in inputs)
    args = [("null", None), buf(i32(axis, count)), buf(shapes)]
    first = len(args) + 2  # after the pointer array, the output shape: the output
    ptrs = ("ptrs", list(range(first + 1, first + 1 + count)))
    status, bufs = kern.call("th_concat_s8", *args, ptrs, buf(shape_bytes(want.shape)),
                             out(want.size), *[("data", a.tobytes()) for a in inputs])
    assert status == TH_OK
    assert_same(i8(bufs[first], want.shape), want, f"concat axis {axis}")


@SETTINGS
@given(st.data())
def test_transpose(kern, data):
    draw = data.draw
    rng = arrays_rng(draw)
    shape = _shape(draw, 1, 6, 4)
    perm = draw(st.permutations(range(len(shape))))
    x = random_int8(rng, shape)
    want = transpose(x, perm)
    status, bufs = kern.call("th_transpose_s8", ("null", None),
                             buf(i32(*perm, *[0] * (MAX_RANK - len(perm)))),
                             buf(shape_bytes(shape)), buf(x), buf(shape_bytes(want.shape)),
                             out(want.size))
    assert status == TH_OK
    assert_same(i8(bufs[5], want.shape), want, f"transpose {shape} {perm}")


def resolve_strided_slice(shape, begin, end, strides, o: StridedSliceOptions):
    """Per input dim (first index, step, count) as the reference walks them; None when the
    result is empty. (A code generator needs the same resolution.)"""
    entries = dense_spec(len(shape), len(begin), o)
    firsts, steps, counts = [], [], []
    axis = 0
    for kind, i in entries:
        if kind == "new":
            continue
        size = shape[axis]
        if kind == "full":
            start, stop, stride = 0, size, 1
        else:
            stride = strides[i]
            start, stop = slice_bounds(size, begin[i], end[i], stride,
                                       bool(o.begin_mask >> i & 1), bool(o.end_mask >> i & 1),
                                       bool(o.shrink_axis_mask >> i & 1), o.offset)
        n = len(range(start, stop, stride))
        if n == 0:
            return None
        firsts.append(start)
        steps.append(stride)
        counts.append(n)
        axis += 1
    return firsts, steps, tuple(counts)


@SETTINGS
@given(st.data())
def test_strided_slice(kern, data):
    draw = data.draw
    rng = arrays_rng(draw)
    shape = _shape(draw, 1, 5, 6)
    n_spec = draw(st.integers(1, len(shape)))
    begin = [draw(st.integers(-7, 7)) for _ in range(n_spec)]
    end = [draw(st.integers(-7, 7)) for _ in range(n_spec)]
    strides = [draw(st.sampled_from([1, 1, 2, 3, -1, -2])) for _ in range(n_spec)]
    mask = st.integers(0, (1 << n_spec) - 1)
    o = StridedSliceOptions(begin_mask=draw(mask), end_mask=draw(mask),
                            shrink_axis_mask=draw(mask) if draw(st.booleans()) else 0,
                            offset=draw(st.booleans()) and draw(st.booleans()))
    x = random_int8(rng, shape)
    try:
        want = strided_slice(x, begin, end, strides, o)
    except Exception:  # noqa: BLE001 (invalid shrink etc.: nothing to compare)
        return
    resolved = resolve_strided_slice(shape, begin, end, strides, o)
    if resolved is None:
        assert want.size == 0
        return
    firsts, steps, counts = resolved
    pad_n = [0] * (MAX_RANK - len(shape))
    status, bufs = kern.call("th_strided_slice_s8", ("null", None),
                             buf(i32(*firsts, *pad_n, *steps, *pad_n)),
                             buf(shape_bytes(shape)), buf(x), buf(shape_bytes(counts)),
                             out(int(np.prod(counts))))
    assert status == TH_OK
    assert_same(i8(bufs[5], want.shape), want, f"strided_slice {shape} {begin} {end} {strides}")


def test_strided_slice_refuses_out_of_range(kern):
    x = np.arange(8, dtype=np.int8)
    for first, step, count in [(8, 1, 1), (6, 1, 3), (1, -1, 3), (0, 0, 2)]:
        status, bufs = kern.call("th_strided_slice_s8", ("null", None),
                                 buf(i32(first, 0, 0, 0, 0, 0, step, 0, 0, 0, 0, 0)),
                                 buf(shape_bytes((8,))), buf(x), buf(shape_bytes((count,))),
                                 out(count))
        assert status == TH_ERR_ARG, (first, step, count)
        assert set(bufs[5]) == {0x5A}


# --------------------------------------------------------------------------------- MEAN


@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mean(kern_both, data):
    """Both builds: the DSP one sums four channels at a time over H and W (int16 lanes
    moved to int32 every 256 pixels: large planes and all-extreme inputs are drawn)."""
    kern = kern_both
    draw = data.draw
    rng = arrays_rng(draw)
    if draw(st.booleans()):
        big = draw(st.booleans())
        shape = (draw(st.integers(1, 2)), draw(st.integers(1, 40 if big else 12)),
                 draw(st.integers(1, 20 if big else 12)), draw(st.integers(1, 20)))
        axes = [1, 2]
    else:
        shape = _shape(draw, 1, 5, 5)
        axes = sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    given_axes = [a - len(shape) if draw(st.booleans()) else a for a in axes]
    keep_dims = draw(st.booleans())
    in_q = q(scale(draw, -8, 0), zero_point(draw))
    out_q = in_q if draw(st.booleans()) else q(scale(draw, -8, 0), zero_point(draw))
    kind = draw(st.sampled_from(["mean", "sum", "max"]))
    is_sum = kind == "sum"  # SUM: th_sum_s8, the sum not divided by the count
    if kind == "max":  # REDUCE_MAX: th_reduce_max_s8, one quantization in and out
        out_q = in_q
    if is_sum and draw(st.booleans()):  # an output scale that keeps sums in range
        count = int(np.prod([shape[a] for a in axes]))
        out_q = q(float(in_q.scale[0]) * count * draw(st.floats(0.05, 0.5)), zero_point(draw))
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keep_dims \
        else tuple(d for i, d in enumerate(shape) if i not in axes)
    tensors = [Tensor("x", shape, I8, quant=in_q),
               Tensor("axes", (len(axes),), np.dtype(np.int32),
                      data=np.array(given_axes, np.int32)),
               Tensor("y", out_shape, I8, quant=out_q)]
    graph = single_op_graph(OpKind.MEAN, ReducerOptions(keep_dims), tensors, [0, 1], [2])
    p = mean_params(graph, graph.ops[0])
    x = random_int8(rng, shape)
    extreme = draw(st.sampled_from([None, None, None, -128, 127]))
    if extreme is not None:
        x = np.full(shape, extreme, np.int8)
    want = reduce_max(x, p) if kind == "max" else mean_int8(x, p, divide=not is_sum)
    mask = sum(1 << a for a in p.axes)
    kernel_out_shape = want.shape if want.ndim else (1,)
    from tinyhost.arith.fixedpoint import quantize_multiplier

    multiplier, shift = quantize_multiplier(float(np.float32(in_q.scale[0]))
                                            / float(np.float32(out_q.scale[0])))
    assert (multiplier, shift) == (p.multiplier, p.shift)
    params = buf(struct.pack("<iiI", p.input_zero_point, p.output_zero_point, mask))
    if kind == "max":
        status, bufs = kern.call("th_reduce_max_s8", ("null", None), params,
                                 buf(shape_bytes(shape)), buf(x),
                                 buf(shape_bytes(kernel_out_shape)), out(want.size))  # fmt: skip
        assert status == TH_OK
        assert_same(i8(bufs[5], want.shape), want, f"max {shape} axes {axes}")
        return
    status, bufs = kern.call(f"th_{kind}_s8", ("null", None), params,
                             buf(i32(p.multiplier, p.shift)), buf(shape_bytes(shape)), buf(x),
                             buf(shape_bytes(kernel_out_shape)), out(want.size))
    assert status == TH_OK
    assert_same(i8(bufs[6], want.shape), want, f"{kind} {shape} axes {axes}")


def test_mean_long_runs_of_few_channels(kern_both):
    """MEAN / SUM over H and W of 1-3 channels (the DSP build sums the run by byte position,
    int16 lanes moved to int32 every 256 periods) and of 5-7 (the last group of four
    overlapping), runs far past 256 periods, random and all-extreme inputs; against the
    NumPy reference."""
    rng = np.random.default_rng(1414)
    shapes = [(1, 40, 40, 1), (1, 33, 71, 1), (1, 45, 40, 3), (1, 50, 41, 2), (1, 3, 5, 1),
              (1, 37, 29, 5), (1, 30, 40, 7), (1, 23, 17, 3), (2, 9, 7, 3), (1, 1, 1, 2)]
    for i, shape in enumerate(shapes):
        in_q = q(float(rng.uniform(0.01, 0.1)), int(rng.integers(-128, 128)))
        out_q = q(float(rng.uniform(0.01, 0.1)), int(rng.integers(-128, 128)))
        tensors = [Tensor("x", shape, I8, quant=in_q),
                   Tensor("axes", (2,), np.dtype(np.int32), data=np.array([1, 2], np.int32)),
                   Tensor("y", (shape[0], 1, 1, shape[3]), I8, quant=out_q)]
        graph = single_op_graph(OpKind.MEAN, ReducerOptions(True), tensors, [0, 1], [2])
        p = mean_params(graph, graph.ops[0])
        x = random_int8(rng, shape) if i % 3 else np.full(shape, (-128, 127)[i % 2], np.int8)
        for kind in ("mean", "sum"):
            want = mean_int8(x, p, divide=kind == "mean")
            params = buf(struct.pack("<iiI", p.input_zero_point, p.output_zero_point, 6))
            status, bufs = kern_both.call(f"th_{kind}_s8", ("null", None), params,
                                          buf(i32(p.multiplier, p.shift)),
                                          buf(shape_bytes(shape)), buf(x),
                                          buf(shape_bytes(want.shape)), out(want.size))
            assert status == TH_OK
            assert_same(i8(bufs[6], want.shape), want, f"{kind} {shape}")


# ------------------------------------------------------------------- TFLM-level checks


def test_lut_tables_match_tflm():
    """A few tables against TFLite Micro itself on all 256 inputs (the reference is already
    checked against TFLM in test_reference_activations; this guards the table path)."""
    pytest.importorskip("tflite_micro")
    from reference_single_op import run_tflm

    rng = np.random.default_rng(7)
    for kind in sorted(LUT_OPS, key=lambda k: k.value):
        in_scale = float(np.float32(2.0 ** rng.uniform(-6, 0)))
        in_zp = int(rng.integers(-20, 20))
        out_q = {OpKind.LOGISTIC: q(1 / 256, -128), OpKind.TANH: q(1 / 128, 0)}.get(
            kind, q(float(np.float32(2.0 ** rng.uniform(-6, 0))), int(rng.integers(-20, 20))))
        options = LeakyReluOptions(0.2) if kind is OpKind.LEAKY_RELU else NoOptions()
        tensors = [Tensor("x", (256,), I8, quant=q(in_scale, in_zp)),
                   Tensor("y", (256,), I8, quant=out_q)]
        graph = single_op_graph(kind, options, tensors, [0], [1])
        table = op_table(graph, graph.ops[0])
        x = TABLE_INPUTS.copy()
        if kind is OpKind.RSQRT:  # TFLM refuses inputs below the zero point (negative values)
            x = np.maximum(x, in_zp).astype(np.int8)
        (theirs,) = run_tflm(graph, [x])
        assert_same(apply_table(table, x), np.asarray(theirs, np.int8).reshape(-1),
                    f"{kind.name} vs TFLM")

