"""plan/scratch.py (the one Python statement of every kernel's scratch) against the C.

The kernels are compiled natively as a shared library in both builds the planner plans for:
portable and DSP (the DSP algorithms with the instructions modelled in C,
TH_NN_EMULATE_DSP). For random CONV_2D / DEPTHWISE_CONV_2D layers (pointwise, 3x3, general,
few input channels, grouped, strided, dilated, padded), `scratch_bytes` and
`fast_scratch_bytes` must equal what `th_conv_s8_scratch_size`, `th_dw_conv_s8_scratch_size`
and `th_dw_conv_s8_scratch_size_fast` return for the same params and dims.
"""

from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tinyhost.arith.padding import compute_window_padding
from tinyhost.ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    Graph,
    Op,
    OpKind,
    Padding,
    Pool2DOptions,
    Quantization,
    Tensor,
)
from tinyhost.plan import PlanOptions
from tinyhost.plan.scratch import (
    conv_direct_edge_scratch,
    conv_few_cout_scratch,
    fast_scratch_bytes,
    scratch_bytes,
    small_cin_conv_fast_scratch,
    small_cin_conv_scratch,
)

REPO = Path(__file__).resolve().parents[1]
KERNELS = REPO / "kernels_c"
CASES = 400  # per build; a case is a few microseconds of ctypes

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


class Dims(ctypes.Structure):
    _fields_ = [("n", ctypes.c_int32), ("h", ctypes.c_int32), ("w", ctypes.c_int32),
                ("c", ctypes.c_int32)]  # fmt: skip


class Tile(ctypes.Structure):
    _fields_ = [("h", ctypes.c_int32), ("w", ctypes.c_int32)]


class Act(ctypes.Structure):
    _fields_ = [("min", ctypes.c_int32), ("max", ctypes.c_int32)]


class ConvParams(ctypes.Structure):  # th_conv_params
    _fields_ = [("input_offset", ctypes.c_int32), ("output_offset", ctypes.c_int32),
                ("stride", Tile), ("padding", Tile), ("dilation", Tile),
                ("activation", Act)]  # fmt: skip


class DwParams(ctypes.Structure):  # th_dw_conv_params
    _fields_ = [("input_offset", ctypes.c_int32), ("output_offset", ctypes.c_int32),
                ("ch_mult", ctypes.c_int32), ("stride", Tile), ("padding", Tile),
                ("dilation", Tile), ("activation", Act)]  # fmt: skip


def _library(tmp_root: Path, dsp: bool) -> ctypes.CDLL:
    sources = sorted(KERNELS.rglob("*.c"))
    digest = hashlib.sha256(b"dsp" if dsp else b"portable")
    for path in (*sources, *sorted(KERNELS.rglob("*.h"))):
        digest.update(path.read_bytes())
    lib = tmp_root / f"libth_nn_{'dsp' if dsp else 'portable'}_{digest.hexdigest()[:12]}.so"
    if not lib.exists():
        cmd = ["gcc", "-std=c99", "-O1", "-shared", "-fPIC", f"-I{KERNELS / 'include'}",
               *(["-DTH_NN_EMULATE_DSP=1"] if dsp else []), *map(str, sources), "-o", str(lib)]
        subprocess.run(cmd, check=True, capture_output=True)
    return ctypes.CDLL(str(lib))


@pytest.fixture(scope="module", params=[False, True], ids=["portable", "dsp"])
def build(request, tmp_path_factory) -> tuple[bool, ctypes.CDLL]:
    return request.param, _library(tmp_path_factory.getbasetemp(), request.param)


def _q(scale: float = 0.05) -> Quantization:
    return Quantization(scale=np.array([scale], np.float32), zero_point=np.array([0]), axis=0)


def _layer(rng: np.random.Generator) -> Graph:
    """One random CONV_2D or DEPTHWISE_CONV_2D layer, int8, shapes as TFLite computes them."""
    depthwise = rng.random() < 0.45
    kh = int(rng.choice([1, 1, 3, 3, 5, int(rng.integers(1, 8))]))
    kw = int(rng.choice([kh, kh, kh, 1, int(rng.integers(1, 8))]))
    stride = int(rng.choice([1, 1, 2, 3]))
    stride_w = stride if rng.random() < 0.8 else int(rng.integers(1, 4))
    dil = 1 if rng.random() < 0.8 else int(rng.integers(2, 4))
    padding = Padding.SAME if rng.random() < 0.6 else Padding.VALID
    h = int(rng.integers(max(kh, (kh - 1) * dil + 1), 40))
    w = int(rng.integers(max(kw, (kw - 1) * dil + 1), 40))
    cin = int(rng.choice([1, 2, 3, 4, 8, 16, int(rng.integers(1, 70))]))
    if depthwise:
        mult = 1 if rng.random() < 0.75 else int(rng.integers(2, 5))
        cout, filter_shape = cin * mult, (1, kh, kw, cin * mult)
        options: Conv2DOptions | DepthwiseConv2DOptions = DepthwiseConv2DOptions(
            padding, stride, stride_w, mult, dil, dil)
    else:
        groups = 1 if rng.random() < 0.9 else int(rng.choice([g for g in (2, 3, 4)
                                                              if cin % g == 0] or [1]))
        cout = int(rng.choice([4, 8, 16, 2 * int(rng.integers(1, 80)), int(rng.integers(1, 70))]))
        cout = max(groups, cout // groups * groups)
        filter_shape = (cout, kh, kw, cin // groups)
        options = Conv2DOptions(padding, stride, stride_w, dil, dil)
    if padding is Padding.SAME:
        oh, ow = -(-h // stride), -(-w // stride_w)
    else:
        oh = (h - (kh - 1) * dil - 1) // stride + 1
        ow = (w - (kw - 1) * dil - 1) // stride_w + 1
    kind = OpKind.DEPTHWISE_CONV_2D if depthwise else OpKind.CONV_2D
    return _graph(kind, options, (1, h, w, cin), filter_shape, (1, oh, ow, cout))


def _graph(kind: OpKind, options: Conv2DOptions | DepthwiseConv2DOptions,
           x: tuple[int, ...], f: tuple[int, ...], y: tuple[int, ...]) -> Graph:
    cout = y[3]
    tensors = (
        Tensor("x", x, np.dtype(np.int8), quant=_q()),
        Tensor("w", f, np.dtype(np.int8), np.zeros(f, np.int8), _q()),
        Tensor("b", (cout,), np.dtype(np.int32), np.zeros(cout, np.int32), _q(0.0025)),
        Tensor("y", y, np.dtype(np.int8), quant=_q(0.1)),
    )
    return Graph(tensors=tensors, ops=(Op(kind, (0, 1, 2), (3,), options),), inputs=(0,),
                 outputs=(3,), name="layer")  # fmt: skip


def _c_sizes(lib: ctypes.CDLL, graph: Graph) -> tuple[int, int]:
    """(scratch, fast scratch) as the C wrappers state them for this layer."""
    op = graph.ops[0]
    o = op.options
    x, f, y = (graph.tensors[i].shape for i in (0, 1, 3))
    pads = compute_window_padding(o.padding, x[1], x[2], f[1], f[2], o.stride_h, o.stride_w,
                                  o.dilation_h, o.dilation_w)  # fmt: skip
    dims = [Dims(*x), Dims(*f), Dims(*y)]
    common = dict(input_offset=0, output_offset=0, stride=Tile(o.stride_h, o.stride_w),
                  padding=Tile(pads.top, pads.left),
                  dilation=Tile(o.dilation_h, o.dilation_w), activation=Act(-128, 127))
    refs = [ctypes.byref(d) for d in dims]
    if op.kind is OpKind.CONV_2D:
        params = ConvParams(**common)
        fast = lib.th_conv_s8_scratch_size_fast(ctypes.byref(params), *refs)
        return lib.th_conv_s8_scratch_size(ctypes.byref(params), *refs), fast
    params = DwParams(ch_mult=y[3] // x[3], **common)
    fast = lib.th_dw_conv_s8_scratch_size_fast(ctypes.byref(params), *refs)
    return lib.th_dw_conv_s8_scratch_size(ctypes.byref(params), *refs), fast


def test_python_scratch_rules_equal_the_c_functions(build) -> None:
    dsp, lib = build
    for fn in ("th_conv_s8_scratch_size", "th_conv_s8_scratch_size_fast",
               "th_dw_conv_s8_scratch_size", "th_dw_conv_s8_scratch_size_fast"):  # fmt: skip
        getattr(lib, fn).restype = ctypes.c_int32
    options = PlanOptions(dsp=dsp)
    rng = np.random.default_rng(20261124 + dsp)
    seen_nonzero = 0
    for case in range(CASES):
        graph = _layer(rng)
        if min(graph.tensors[3].shape) < 1:
            continue
        want, want_fast = _c_sizes(lib, graph)
        got = scratch_bytes(graph, graph.ops[0], options)
        got_fast = fast_scratch_bytes(graph, graph.ops[0], options)
        shapes = [graph.tensors[i].shape for i in (0, 1, 3)]
        assert (got, got_fast) == (want, want_fast), (case, graph.ops[0], shapes)
        seen_nonzero += want > 0
    assert seen_nonzero > CASES // 4  # the draw reaches the paths that need scratch


def test_small_cin_line_images_scratch_equals_the_c_function(build) -> None:
    """Few-input-channel convs on one-column images (their one-row view's scratch, issue 14)
    and one-row images, Cout % 4 == 0 or not: Python equals C, and the draw reaches both the
    column views that need more than the layer's own geometry and those that do not."""
    dsp, lib = build
    lib.th_conv_s8_scratch_size.restype = ctypes.c_int32
    rng = np.random.default_rng(14)
    larger = 0
    for _ in range(200):
        cin, cout = int(rng.integers(1, 4)), int(rng.integers(1, 20))
        kh, kw, s = int(rng.integers(1, 8)), int(rng.integers(1, 8)), int(rng.integers(1, 4))
        n = int(rng.integers(2, 40))
        column = rng.random() < 0.7
        h, w = (n, 1) if column else (1, n)
        graph = _graph(OpKind.CONV_2D, Conv2DOptions(Padding.SAME, s, s, 1, 1), (1, h, w, cin),
                       (cout, kh, kw, cin), (1, -(-h // s), -(-w // s), cout))
        want, _ = _c_sizes(lib, graph)
        assert scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)) == want, (
            h, w, cin, cout, kh, kw, s)
        if column and h > s:  # the view's geometry is the larger one
            oh = -(-h // s)
            larger += (small_cin_conv_scratch(cin, kh, kw, cout, 1, s, 1, 1, (oh, s))
                       > small_cin_conv_scratch(cin, kh, kw, cout, 1, s, 1, 1))
    assert larger > 10


def test_small_cin_long_fields_fast_scratch_equals_the_c_function(build) -> None:
    """Few-input-channel convs with Cout 1-3 and fields over 8 chunks (path
    CONV_SMALL_CIN_LONG: fast scratch only, 32-pixel tiles): Python equals C for both sizes,
    and the draw reaches layers the fast scratch takes and layers over 16 chunks it does not."""
    dsp, lib = build
    lib.th_conv_s8_scratch_size.restype = ctypes.c_int32
    lib.th_conv_s8_scratch_size_fast.restype = ctypes.c_int32
    rng = np.random.default_rng(19)
    taken = over = 0
    for _ in range(150):
        cin, cout = int(rng.integers(1, 4)), int(rng.integers(1, 5))
        kh, kw, s = int(rng.integers(4, 14)), int(rng.integers(4, 14)), int(rng.integers(1, 4))
        h, w = int(rng.integers(kh, 20)), int(rng.integers(kw, 80))
        graph = _graph(OpKind.CONV_2D, Conv2DOptions(Padding.SAME, s, s, 1, 1), (1, h, w, cin),
                       (cout, kh, kw, cin), (1, -(-h // s), -(-w // s), cout))
        want = _c_sizes(lib, graph)
        got = (scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)),
               fast_scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)))
        assert got == want, (h, w, cin, cout, kh, kw, s)
        args = (cin, kh, kw, cout, -(-w // s), s, 1, 1)
        taken += small_cin_conv_scratch(*args) == 0 < small_cin_conv_fast_scratch(*args)
        over += cout < 4 and small_cin_conv_scratch(*args) == 0 == small_cin_conv_fast_scratch(
            *args)
    assert taken > 10 and over > 10


def test_conv_direct_edge_scratch_equals_the_c_function(build) -> None:
    """Cout 1 convs with short filter rows (path CONV_DIRECT_EDGES: the direct path's edge
    patches, fast scratch only): Python equals C for both sizes, SAME and VALID, strides 1-3,
    dilations, one-column images, and the draw reaches layers the fast scratch takes (DSP;
    3x3 filters through th_conv_3x3_s8 too, every seventh layer) and layers it does not (rows
    over 32 bytes, no border), given as fast scratch where the ordinary scratch is smaller."""
    dsp, lib = build
    lib.th_conv_s8_scratch_size.restype = ctypes.c_int32
    lib.th_conv_s8_scratch_size_fast.restype = ctypes.c_int32
    rng = np.random.default_rng(29)
    taken = offered = not_taken = threes = 0
    for i in range(200):
        cin, kh, kw = int(rng.integers(1, 9)), int(rng.integers(1, 8)), int(rng.integers(1, 10))
        if i % 7 == 1:
            kh = kw = 3
        s, dil = int(rng.integers(1, 4)), 1 if i % 5 else 2
        padding = Padding.SAME if i % 3 else Padding.VALID
        h = int(rng.integers((kh - 1) * dil + 1, 20))
        w = 1 if i % 11 == 0 else int(rng.integers((kw - 1) * dil + 1, 60))
        if padding is Padding.SAME:
            oh, ow = -(-h // s), -(-w // s)
        else:
            oh, ow = (h - (kh - 1) * dil - 1) // s + 1, (w - (kw - 1) * dil - 1) // s + 1
        graph = _graph(OpKind.CONV_2D, Conv2DOptions(padding, s, s, dil, dil), (1, h, w, cin),
                       (1, kh, kw, cin), (1, oh, ow, 1))
        want = _c_sizes(lib, graph)
        got = (scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)),
               fast_scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)))
        assert got == want, (h, w, cin, kh, kw, s, dil, padding)
        edge = conv_direct_edge_scratch(graph, graph.ops[0])
        taken += edge > 0
        offered += edge > 0 and got[1] == edge  # (else the ordinary scratch holds it)
        not_taken += edge == 0
        threes += (kh, kw, dil) == (3, 3, 1) and edge > 0 and got[1] == edge
    assert taken > 20 and not_taken > 20 and (offered > 4 if dsp else offered == 0)
    assert threes > 4 if dsp else threes == 0


def test_conv_few_cout_scratch_equals_the_c_function(build) -> None:
    """Cout 2-3 convs (path CONV_FEW_COUT: widened weights, fast scratch only): Python equals C
    for both sizes, SAME and VALID, strides 1-3, dilations, Cin 1-12, and the draw reaches
    layers the fast scratch takes (DSP; 3x3 filters through th_conv_3x3_s8 too) and layers it
    does not (Cin < 4, dilation.w 2)."""
    dsp, lib = build
    lib.th_conv_s8_scratch_size.restype = ctypes.c_int32
    lib.th_conv_s8_scratch_size_fast.restype = ctypes.c_int32
    rng = np.random.default_rng(31)
    taken = offered = not_taken = 0
    for i in range(200):
        cin, kh, kw = int(rng.integers(1, 13)), int(rng.integers(1, 8)), int(rng.integers(1, 8))
        s, dil = int(rng.integers(1, 4)), 1 if i % 5 else 2
        padding = Padding.SAME if i % 3 else Padding.VALID
        h = int(rng.integers((kh - 1) * dil + 1, 20))
        w = int(rng.integers((kw - 1) * dil + 1, 40))
        if padding is Padding.SAME:
            oh, ow = -(-h // s), -(-w // s)
        else:
            oh, ow = (h - (kh - 1) * dil - 1) // s + 1, (w - (kw - 1) * dil - 1) // s + 1
        graph = _graph(OpKind.CONV_2D, Conv2DOptions(padding, s, s, dil, dil), (1, h, w, cin),
                       (2 + i % 2, kh, kw, cin), (1, oh, ow, 2 + i % 2))
        want = _c_sizes(lib, graph)
        got = (scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)),
               fast_scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)))
        assert got == want, (h, w, cin, kh, kw, s, dil, padding)
        few = conv_few_cout_scratch(graph, graph.ops[0])
        taken += few > 0
        offered += few > 0 and got[1] == few
        not_taken += few == 0
    assert taken > 20 and not_taken > 20 and (offered > 10 if dsp else offered == 0)


def test_the_comparison_can_fail(build) -> None:
    """A rule that is off by 4 bytes is caught: the C function is really consulted."""
    dsp, lib = build
    lib.th_conv_s8_scratch_size.restype = ctypes.c_int32
    rng = np.random.default_rng(7)
    for _ in range(200):
        graph = _layer(rng)
        want, _ = _c_sizes(lib, graph)
        if graph.ops[0].kind is OpKind.CONV_2D and want > 0:
            assert scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)) + 4 != want
            return
    pytest.fail("no conv layer with scratch drawn")


class SvdfParams(ctypes.Structure):  # th_svdf_params
    _fields_ = [("input_offset", ctypes.c_int32), ("output_offset", ctypes.c_int32),
                ("rank", ctypes.c_int32)]  # fmt: skip


def test_svdf_scratch_rule_equals_the_c_function(build) -> None:
    from svdf_graphs import svdf_graph

    dsp, lib = build
    lib.th_svdf_s8_scratch_size.restype = ctypes.c_int32
    rng = np.random.default_rng(11 + dsp)
    for _ in range(60):
        batches, size = int(rng.integers(1, 4)), int(rng.integers(1, 300))
        units, rank, memory = (int(v) for v in rng.integers(1, 9, 3))
        graph = svdf_graph(rng, batches, size, units, rank, memory)
        filters = units * rank
        params = SvdfParams(0, 0, rank)
        want = lib.th_svdf_s8_scratch_size(ctypes.byref(params),
                                           ctypes.byref(Dims(batches, 1, 1, size)),
                                           ctypes.byref(Dims(filters, 1, 1, size)),
                                           ctypes.byref(Dims(filters, 1, 1, memory)))
        assert want > 0
        assert scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)) == want, size


class PoolParams(ctypes.Structure):  # th_pool_params
    _fields_ = [("stride", Tile), ("filter", Tile), ("padding", Tile), ("activation", Act)]


@pytest.mark.parametrize("kind", [OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D])
def test_pool_scratch_rule_equals_the_c_function(build, kind: OpKind) -> None:
    """The pools' separable paths: scratch_bytes of a pool graph (windows large and small,
    strides 1..3, global, SAME and VALID) equals th_avgpool_s8_scratch_size /
    th_maxpool_s8_scratch_size in both builds, and fast_scratch_bytes the max pool's
    th_maxpool_s8_scratch_size_fast (the average pool has none)."""
    dsp, lib = build
    fn = (lib.th_avgpool_s8_scratch_size if kind is OpKind.AVERAGE_POOL_2D
          else lib.th_maxpool_s8_scratch_size)  # fmt: skip
    fn.restype = ctypes.c_int32
    fast = lib.th_maxpool_s8_scratch_size_fast if kind is OpKind.MAX_POOL_2D else None
    if fast is not None:
        fast.restype = ctypes.c_int32
    rng = np.random.default_rng(21 + dsp)
    nonzero = nonzero_fast = 0
    for _ in range(CASES // 4):
        h, w, c = (int(v) for v in rng.integers(1, 40, 3))
        kh, kw = int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1))
        sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        padding = Padding.SAME if rng.random() < 0.3 else Padding.VALID
        pads = compute_window_padding(padding, h, w, kh, kw, sh, sw)
        oh, ow = pads.out_h, pads.out_w
        tensors = (Tensor("x", (1, h, w, c), np.dtype(np.int8), quant=_q()),
                   Tensor("y", (1, oh, ow, c), np.dtype(np.int8), quant=_q()))
        graph = Graph(tensors=tensors, ops=(Op(kind, (0,), (1,),
                                              Pool2DOptions(padding, sh, sw, kh, kw)),),
                      inputs=(0,), outputs=(1,), name="pool")  # fmt: skip
        params = PoolParams(Tile(sh, sw), Tile(kh, kw), Tile(pads.top, pads.left),
                            Act(-128, 127))
        refs = (ctypes.byref(params), ctypes.byref(Dims(1, h, w, c)),
                ctypes.byref(Dims(1, oh, ow, c)))
        want = fn(*refs)
        assert scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)) == want
        want_fast = fast(*refs) if fast is not None else 0
        assert fast_scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)) == want_fast
        nonzero += want > 0
        nonzero_fast += want_fast > 0
    assert nonzero > CASES // 40
    assert kind is OpKind.AVERAGE_POOL_2D or not dsp or nonzero_fast > CASES // 40


def test_fc_fast_scratch_rule_equals_the_c_function(build) -> None:
    """fast_scratch_bytes of an int8 FULLY_CONNECTED (inputs around the short path's 128 and
    up to 1024, 1-20 outputs: both sides of Cout >= 8) equals
    th_fully_connected_s8_scratch_size_fast in both builds; scratch_bytes stays 0."""
    dsp, lib = build
    fn = lib.th_fully_connected_s8_scratch_size_fast
    fn.restype = ctypes.c_int32
    rng = np.random.default_rng(31 + dsp)
    nonzero = 0
    for _ in range(CASES // 8):
        cin = int(rng.choice([int(rng.integers(1, 1025)), int(rng.integers(120, 140))]))
        cout = int(rng.integers(1, 21))
        tensors = (Tensor("x", (1, cin), np.dtype(np.int8), quant=_q()),
                   Tensor("w", (cout, cin), np.dtype(np.int8), quant=_q()),
                   Tensor("y", (1, cout), np.dtype(np.int8), quant=_q()))
        graph = Graph(tensors=tensors, ops=(Op(OpKind.FULLY_CONNECTED, (0, 1), (2,),
                                              FullyConnectedOptions()),),
                      inputs=(0,), outputs=(2,), name="fc")  # fmt: skip
        want = fn(None, ctypes.byref(Dims(1, 1, 1, cin)), ctypes.byref(Dims(cout, 1, 1, cin)))
        assert fast_scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)) == want
        assert scratch_bytes(graph, graph.ops[0], PlanOptions(dsp=dsp)) == 0
        nonzero += want > 0
    assert not dsp or nonzero > CASES // 40
