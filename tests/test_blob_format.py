"""The blob serializer: header, sections, constants and filter layout (BLOB_FORMAT.md)."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost.arith.conv import conv_params
from tinyhost.codegen.blob import (
    OP,
    TENSOR,
    BlobTarget,
    build_blob,
    read_header,
)
from tinyhost.codegen.interpreter_abi import ADAPTERS
from tinyhost.codegen.layout import interleave_filter
from tinyhost.codegen.lower import lower_graph
from tinyhost.errors import UnsupportedModelError
from tinyhost.tflite import read_model

MODEL = PROJECT_MODELS / "conv_valid_5x5_relu_1x1_int8.tflite"


def test_header_crc_and_section_order() -> None:
    graph = read_model(MODEL)
    blob = build_blob(graph)
    h = read_header(blob.data)
    assert h.magic == b"THIB" and h.version == 1 and h.header_size == 80
    assert h.total_size == len(blob.data)
    assert h.crc == zlib.crc32(blob.data[16:]) & 0xFFFFFFFF
    assert h.n_tensors == len(graph.tensors) and h.n_ops == len(graph.ops)
    starts = [h.tensors_off, h.ops_off, h.io_off, h.params_off, h.name_off, h.consts_off]
    assert starts == sorted(starts) and all(s % 16 == 0 for s in starts)
    assert h.tensors_off + TENSOR.size * h.n_tensors <= h.ops_off
    assert h.ops_off + OP.size * h.n_ops <= h.io_off
    assert blob.data[h.name_off : h.name_off + h.name_len] == graph.name.encode() or h.name_len


def test_conv_params_and_multipliers_match_arith() -> None:
    """The words the C adapter reads are exactly tinyhost.arith's numbers."""
    graph = read_model(MODEL)
    blob = build_blob(graph)
    h = read_header(blob.data)
    for k in range(h.n_ops):
        kid, n_in, n_out, io_first, p_first, p_count, *_ = OP.unpack_from(
            blob.data, h.ops_off + k * OP.size)
        assert {a.kernel_id: a for a in ADAPTERS}[kid].name == "conv2d_s8"
        words = struct.unpack_from(f"<{p_count}i", blob.data, h.params_off + 4 * p_first)
        op = graph.ops[blob.op_order[k]]
        p = conv_params(graph, op)
        assert words[:10] == (p.input_offset, p.output_offset, p.stride_h, p.stride_w,
                              p.pad_top, p.pad_left, p.dilation_h, p.dilation_w, p.act_min,
                              p.act_max)
        cout = p.out_multiplier.size
        mult = np.frombuffer(blob.data, "<i4", cout, h.consts_off + words[10])
        shift = np.frombuffer(blob.data, "<i4", cout, h.consts_off + words[11])
        np.testing.assert_array_equal(mult, p.out_multiplier)
        np.testing.assert_array_equal(shift, p.out_shift)
        assert (h.consts_off + words[10]) % 16 == 0


def test_interleave_matches_documented_index() -> None:
    rng = np.random.default_rng(0)
    for cout, k, block in [(5, 7, 2), (8, 12, 4), (3, 1, 4), (9, 27, 2)]:
        w = rng.integers(-127, 128, (cout, k)).astype(np.int8)
        out = interleave_filter(w, block)
        kp = (k + 3) // 4 * 4
        assert out.size == cout * kp
        for c in range(cout):
            first = c // block * block
            g = min(block, cout - first)
            for j in range(kp):
                idx = first * kp + (j // 4) * 4 * g + (c - first) * 4 + j % 4
                assert out[idx] == (w[c, j] if j < k else 0)


def test_dsp_target_sets_flag_and_interleaves() -> None:
    graph = read_model(MODEL)
    plain, dsp = build_blob(graph), build_blob(graph, BlobTarget(interleaved=True, dsp=True))
    assert read_header(plain.data).flags == 0 and read_header(dsp.data).flags == 1


def test_unsupported_op_is_named() -> None:
    path = PROJECT_MODELS / "unsupported"
    models = sorted(path.glob("*.tflite")) if path.is_dir() else []
    if not models:
        pytest.skip("no unsupported-op models")
    graph = read_model(models[0])
    with pytest.raises(UnsupportedModelError, match=r"op \d+ \("):
        lower_graph(graph)
