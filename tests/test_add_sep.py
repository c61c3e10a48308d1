"""th_add_prep's separable form (tinyhost.arith.elementwise add_sep, ARCHITECTURE.md §4.4b):
the host's exhaustive proof against brute force over every pair of int8 inputs."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.cases_ops import add_params_of, sep_params
from tinyhost.arith.elementwise import SEP_SHIFT, AddParams, add_input_tables, add_sep
from tinyhost.reference.ops.elementwise import add_int8, sub_int8

VALUES = np.arange(256, dtype=np.uint8).view(np.int8)  # index (uint8)x, as the tables


def _reference(p: AddParams, sub: bool) -> np.ndarray:
    """TFLM's output for every (input1, input2) pair, [256, 256] by uint8 index."""
    return (sub_int8 if sub else add_int8)(VALUES[:, None], VALUES[None, :], p).astype(np.int64)


def _kernel(words: np.ndarray, mode: int, p: AddParams) -> np.ndarray:
    """What the kernel's separable loops compute for every pair (int32 sums, as the M4)."""
    t, c = words[:256].astype(np.int64), words[256:].astype(np.int64)
    s = t[:, None] + c[None, :]
    assert s.min() >= -(1 << 31) and s.max() < 1 << 31  # the proof's range promise
    u = np.clip(s >> SEP_SHIFT, 0, 255)
    lo, hi = p.activation_min, p.activation_max
    if mode == 0:
        return u - 128
    return u + lo if mode == 1 else np.minimum(u, hi - lo) + lo


@pytest.mark.parametrize("sub", [False, True], ids=["add", "sub"])
@pytest.mark.parametrize("mode,clamp", [(0, "none"), (0, "wide"), (1, "lo"), (2, "both")])
@pytest.mark.parametrize("seed", range(6))
def test_proven_tables_match_brute_force(sub: bool, mode: int, clamp: str, seed: int) -> None:
    p = sep_params(mode, clamp, 40 * seed + 7, sub)
    words, got_mode = add_sep(p, sub)
    assert got_mode == mode and words.dtype == np.dtype("<i4") and words.shape == (512,)
    assert np.array_equal(_kernel(words, mode, p), _reference(p, sub))


def test_random_scales_prove_and_match() -> None:
    """The sweep's quantization (scales 0.01-0.2, any zero points, RELU6 or none): proven
    every time here, and right."""
    rng = np.random.default_rng(3)
    for i in range(40):
        s1, s2, so = (float(np.float32(rng.uniform(0.01, 0.2))) for _ in range(3))
        z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
        lo, hi = (max(-128, zo), min(127, zo + round(6 / so))) if i % 3 == 0 else (-128, 127)
        p = add_params_of(s1, s2, so, z1, z2, zo, lo, hi)
        sub = i % 2 == 1
        got = add_sep(p, sub)
        assert got is not None, p
        assert np.array_equal(_kernel(got[0], got[1], p), _reference(p, sub)), p


@pytest.mark.parametrize("sub", [False, True], ids=["add", "sub"])
def test_refused_where_the_sign_term_decides(sub: bool) -> None:
    """Power-of-two scales tie on both sides of zero: no tables exist (the proof says None),
    and the tables the floor formula suggests are wrong for some pair."""
    p = sep_params(None, "none", 11, sub)
    assert add_sep(p, sub) is None
    t1, t2 = (t.astype(np.int64) for t in add_input_tables(p))
    eo = -p.output_shift
    g = 31 + eo - SEP_SHIFT
    k = (1 << 30) + (1 << (30 + eo))
    t = (t1 * p.output_multiplier) >> g
    c = -((-((-t2 if sub else t2) * p.output_multiplier + k)) >> g) + \
        ((p.output_offset + 128) << 16)
    words = np.concatenate([t, c])
    assert not np.array_equal(_kernel(words, 0, p), _reference(p, sub))


def test_refused_where_a_sum_leaves_int32() -> None:
    """An output scale far below the inputs' (outputs 2^16 steps apart and more): None."""
    p = add_params_of(0.5, 0.5, 0.5 / 40000, 0, 0, 0, -128, 127)
    assert add_sep(p, False) is None


def test_channel_rows_choose_the_cheaper_form() -> None:
    """codegen/compiled.py _sep_runs for channel rows past chan_lut's count (224 without a
    clamp) with input tables: the separable walk where the per-channel output tables would
    compute most entries (scales alike: hardly any output saturates), chan_lut where nearly
    every entry is a saturated run (an output scale far under the inputs'); below the count
    always the separable walk."""
    from tinyhost.arith.elementwise import add_prep, add_unclamped_count
    from tinyhost.codegen.compiled import _sep_runs

    wide = add_params_of(0.047, 0.061, 0.3, 3, -5, 2, -128, 127)
    steep = add_params_of(0.047, 0.061, 0.0041, 3, -5, 2, -128, 127)
    assert add_unclamped_count(wide, False) > 200 > 30 > add_unclamped_count(steep, False)
    for p, rows, sep in ((wide, 300, True), (steep, 300, False), (steep, 100, True),
                         (wide, 3000, False)):
        prep = add_prep(p, (rows, 32), (1, 32), (rows, 32), False)
        assert prep["fast"]
        assert _sep_runs(prep, True, p, False) is sep, (rows, sep)
        assert _sep_runs(prep, False, p, False)  # no input tables: no chan_lut
