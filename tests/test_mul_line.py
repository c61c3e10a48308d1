"""th_mul_prep's line form (tinyhost.arith.elementwise.mul_line, ARCHITECTURE.md §4.4b):
the host's proof against brute force over every int8 pair, as the kernel computes it
(th_mul_s8.c spatial_line_t), where it proves a line and where it must not."""

from __future__ import annotations

import numpy as np

from tinyhost.arith.elementwise import MUL_LINE_E, MulParams, mul_line, mul_prep
from tinyhost.arith.fixedpoint import quantize_multiplier
from tinyhost.reference.ops.elementwise import mul_int8

XS = np.arange(-128, 128, dtype=np.int64)


def _line_outputs(p: MulParams, line: dict) -> np.ndarray:
    """The kernel's outputs [x, y] (x the full input, y the factor) in int64, int32 checked."""
    ox, oy = ((p.input1_offset, p.input2_offset) if line["line"] == 1
              else (p.input2_offset, p.input1_offset))  # fmt: skip
    fa = (XS[None, :] + oy) * line["line_a"] + (1 << (line["line_t"] - 1))
    assert np.abs(fa).max() < 2**31
    m = fa >> line["line_t"]
    acc = (XS[:, None] + ox) * m + line["line_k"]
    assert np.abs(acc).max() < 2**31
    s = acc >> MUL_LINE_E
    lo, hi = p.activation_min, p.activation_max
    if lo > -128 or hi < 127:
        return lo + np.minimum(np.clip(s, 0, 255), hi - lo)
    return np.clip(s, -128, 127)


def _reference(p: MulParams, side: int) -> np.ndarray:
    x = XS.astype(np.int8)[:, None].repeat(256, 1)
    y = XS.astype(np.int8)[None, :].repeat(256, 0)
    return (mul_int8(x, y, p) if side == 1 else mul_int8(y, x, p)).astype(np.int64)


def _params(rng: np.random.Generator) -> MulParams:
    s1, s2, so = rng.uniform(0.01, 0.2, 3) * (rng.uniform(1, 6) if rng.integers(0, 4) == 0
                                              else 1.0)  # fmt: skip
    z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
    m, sh = quantize_multiplier(float(s1) * float(s2) / float(so))
    if rng.integers(0, 2) == 0:
        return MulParams(-z1, -z2, zo, m, sh, -128, 127)
    lo = max(-128, zo - int(rng.integers(0, 3)))
    return MulParams(-z1, -z2, zo, m, sh, lo, min(127, zo + int(rng.integers(10, 300))))


def test_mul_line_proof_matches_brute_force() -> None:
    """Every proven line reproduces the reference on all 65536 pairs, both orientations;
    proven and unproven layers both occur (clamped right shifts mostly proven; unclamped
    right shifts whose ties sit on both sides of a zero product never: one line cannot round
    away from zero on both sides)."""
    rng = np.random.default_rng(14)
    proven = unproven = 0
    for _ in range(40):
        p = _params(rng)
        for side in (1, 2):
            line = mul_line(p, side)
            if not line["line"]:
                unproven += 1
                continue
            assert line["line"] == side
            proven += 1
            assert np.array_equal(_line_outputs(p, line), _reference(p, side))
    assert proven >= 10 and unproven >= 10


def test_mul_line_two_sign_pieces_not_proven() -> None:
    """Unclamped right shifts with the sign term needed (nosign 0): ties on both sides of
    zero; no line (the kernel keeps its sign-term loops)."""
    rng = np.random.default_rng(3)
    seen = 0
    for _ in range(60):
        z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
        m, sh = quantize_multiplier(float(rng.uniform(0.002, 0.45)))
        p = MulParams(-z1, -z2, zo, m, sh, -128, 127)
        if mul_prep(p, (4, 3), (4, 1), (4, 3))["nosign"] != 0:
            continue
        seen += 1
        assert mul_line(p, 1)["line"] == 0
    assert seen >= 20


def test_mul_line_check_can_fail() -> None:
    """The brute-force comparison is sharp: a proven line moved by one output step (line_k
    +- 2^16) or with another slope no longer matches."""
    rng = np.random.default_rng(7)
    for _ in range(100):
        p = _params(rng)
        line = mul_line(p, 1)
        if line["line"]:
            break
    else:
        raise AssertionError("no proven line")
    want = _reference(p, 1)
    for change in ({"line_k": line["line_k"] + (1 << MUL_LINE_E)},
                   {"line_k": line["line_k"] - (1 << MUL_LINE_E)},
                   {"line_a": line["line_a"] + max(1, abs(line["line_a"]) // 16)}):
        try:
            got = _line_outputs(p, {**line, **change})
        except AssertionError:  # out of int32: refused as the proof refuses it
            continue
        assert not np.array_equal(got, want)


def test_mul_line_orientation() -> None:
    """line names the broadcast side: input2 the smaller (1), input1 (2), none for the same
    size (0), as mul_prep fills it from the shapes."""
    m, sh = quantize_multiplier(0.01)
    p = MulParams(3, -5, 2, m, sh, 2, 60)
    assert mul_prep(p, (1, 4, 4, 8), (1, 4, 4, 1), (1, 4, 4, 8))["line"] == 1
    assert mul_prep(p, (1, 4, 4, 1), (1, 4, 4, 8), (1, 4, 4, 8))["line"] == 2
    assert mul_prep(p, (1, 4, 4, 8), (1, 4, 4, 8), (1, 4, 4, 8))["line"] == 0
