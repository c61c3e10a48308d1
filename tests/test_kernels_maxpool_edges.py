"""th_maxpool_s8's clipped row pairs in one pass (edge_rows_<k>: the top chain's first two
rows and the bottom's pairs: 1..5 shared rows, all there can be, the fast scratch having two
rows up to windows 7 high) and the
stride-1 row pass over several rows a call (taps_rows: max_rows_padded's quads and
pairs, the chains' pairs), against the NumPy reference: stride 1, SAME and explicit paddings,
windows 2..11 high and 1..8 wide, 1-21 channels, one and two images, clamped activations,
through the prepared entry (the fast scratch) and the generic one, on the host (emulated DSP
build, ASan/UBSan) and on QEMU mps2-an386 (Cortex-M4).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from kernels.cases import Op
from kernels.cases_ops import PoolCase
from kernels.maxpool import check_on_host, check_on_m4, needs_target
from tinyhost.arith.pool import PoolParams, maxpool_prep


def edge_cases(seed: int, count: int, max_elements: int = 2500) -> list[PoolCase]:
    rng = np.random.default_rng(seed)
    out: list[PoolCase] = []
    while len(out) < count:
        i = len(out)
        fh, fw, c = 2 + i % 10, int(rng.integers(1, 9)), 1 + i % 21
        h, w = int(rng.integers(1, 2 * fh + 6)), int(rng.integers(1, fw + 7))
        if i % 3 == 2:  # explicit paddings up to the window
            pt, pb = int(rng.integers(0, fh)), int(rng.integers(0, fh))
            pl, pr = int(rng.integers(0, fw)), int(rng.integers(0, fw))
        else:  # SAME at stride 1
            pt, pl = (fh - 1) // 2, (fw - 1) // 2
            pb, pr = fh - 1 - pt, fw - 1 - pl
        oh, ow = h + pt + pb - fh + 1, w + pl + pr - fw + 1
        n = 1 + i % 2
        if oh < 1 or ow < 1 or n * h * w * c > max_elements:
            continue
        lo, hi = ((int(rng.integers(-128, 0)), int(rng.integers(0, 128))) if i % 5 == 4
                  else (-128, 127))  # fmt: skip
        p = PoolParams(1, 1, fh, fw, pt, pl, pb, pr, lo, hi)
        x = rng.integers(-128, 128, (n, h, w, c)).astype(np.int8)
        full = maxpool_prep(p, x.shape, (n, oh, ow, c), 1 << 30)
        out.append(PoolCase(Op.MAXPOOL, x, p, (n, oh, ow, c),
                            prepared_scratch=max(full["fast"], full["sep"])))
    return out


def shared_rows(case: PoolCase) -> set[int]:
    """The shared row counts of the clipped pairs the case runs (max_chain_top's first two
    rows, max_rows_bottom's pairs)."""
    p, (_, h, _, _), oh = case.p, case.x.shape, case.out_shape[1]
    k = maxpool_prep(p, case.x.shape, case.out_shape, case.prepared_scratch)
    if not k["fast"] or k["rows"] < 2 or k["span"] <= 0:
        return set()
    seen = set()
    ye0 = min(h, p.filter_h - p.pad_top)
    if k["ya"] >= 2 and 0 < ye0 < h:
        seen.add(ye0)
    oy = k["yb"]
    while oy < oh:
        ys = oy - p.pad_top
        if ys < h and oy + 1 < oh and ys + 1 < h:
            seen.add(h - ys - 1)
            oy += 1
        oy += 1
    return seen


def test_the_mix_reaches_every_shared_count() -> None:
    for seed in (7, 9):
        seen = set().union(*(shared_rows(c) for c in edge_cases(seed, 160)))
        assert seen == set(range(1, 6)), sorted(seen)


def test_edges_on_the_host() -> None:
    check_on_host("dsp", edge_cases(7, 160))


@needs_target
def test_edges_on_cortex_m4(kernel_fw_root: Path) -> None:
    check_on_m4(kernel_fw_root, edge_cases(9, 160), 120, 40)


def _same_s1_case(rng: np.random.Generator, h: int, w: int, c: int, fh: int,
                  fw: int) -> PoolCase:
    """An h x w x c max pool, window fh x fw, stride 1, SAME, unclamped, given the fast
    scratch (or the separable one where larger)."""
    pt, pl = (fh - 1) // 2, (fw - 1) // 2
    p = PoolParams(1, 1, fh, fw, pt, pl, fh - 1 - pt, fw - 1 - pl, -128, 127)
    x = rng.integers(-128, 128, (1, h, w, c)).astype(np.int8)
    full = maxpool_prep(p, x.shape, (1, h, w, c), 1 << 30)
    return PoolCase(Op.MAXPOOL, x, p, (1, h, w, c),
                    prepared_scratch=max(full["fast"], full["sep"]))


def row_pass_cases() -> list[PoolCase]:
    """Stride-1 SAME pools, unclamped, the fast scratch: the row pass of rows_asm (Armv7E-M:
    2-8 channels, windows 2..7 wide, w = channels rounded up to 4 bytes 4 or 8), with rows of
    whole blocks (channels + w bytes) and rows ending in the block stepped back to the row's
    end, over 1, 2 and 4 rows a call (heights from 5: max_rows_padded's quads and pairs)."""
    rng = np.random.default_rng(31)
    out: list[PoolCase] = []
    for c in range(2, 9):
        wb = (c + 3) & ~3
        for fw in range(2, 8):
            if c < 4 and fw < 3:
                continue  # row_fixed's taps a word at a time: no pairs
            blk = c + wb
            # output width = input width (SAME): rows of whole blocks (n a multiple of
            # blk), then one pixel more (n mod blk = c)
            whole = blk // math.gcd(c, blk)
            for w in (whole, whole + 1):
                fh = 2 + (c + fw + w) % 6
                out.append(_same_s1_case(rng, fh + 3 + (c + fw) % 4, w, c, fh, fw))
    return out


def test_row_pass_mix() -> None:
    """Every window width 2..7 at w 4 and 8, rows of whole blocks and not."""
    seen = set()
    for case in row_pass_cases():
        c, fw, n = case.x.shape[3], case.p.filter_w, case.out_shape[2] * case.x.shape[3]
        wb = (c + 3) & ~3
        assert n >= c + wb
        seen.add((fw, wb, n % (c + wb) == 0))
    assert seen == {(fw, wb, whole) for fw in range(2, 8) for wb in (4, 8)
                    for whole in (False, True)}, sorted(seen)


def test_row_pass_on_the_host() -> None:
    check_on_host("dsp", row_pass_cases())


@needs_target
def test_row_pass_on_cortex_m4(kernel_fw_root: Path) -> None:
    check_on_m4(kernel_fw_root, row_pass_cases(), 70, 10)


def chain_cases() -> list[PoolCase]:
    """Stride-1 SAME pools, unclamped, the fast scratch, 4-8 channels and windows 5-7 wide:
    the row pass by running maxima (vh_rows: chains at channel 0 and channels - 4, blocks of
    `taps` outputs and a last block of every size 1..taps-1 or none), output widths from
    under one block to over two, over 1, 2 and 4 rows a call (max_taps, the chains' pairs,
    max_rows_padded's pairs and quads)."""
    rng = np.random.default_rng(32)
    out: list[PoolCase] = []
    for c in range(4, 9):
        for fw in range(5, 8):
            if c == 5 and fw == 5:
                continue  # the pairs (vh_rows_call)
            for w in range(1, 2 * fw + 3):
                fh = 2 + (c + fw + w) % 6
                out.append(_same_s1_case(rng, fh + 1 + (c + w) % 5, w, c, fh, fw))
    return out


def test_chain_mix() -> None:
    """Every channel count 4-8 at windows 5-7 (but 5 at 5), every last-block size at rows of
    no whole block and of one, and rows of two or more."""
    seen = set()
    for case in chain_cases():
        c, fw, ow = case.x.shape[3], case.p.filter_w, case.out_shape[2]
        seen.add((c, fw, ow % fw, min(ow // fw, 2)))
    combos = {(c, fw) for c in range(4, 9) for fw in range(5, 8)} - {(5, 5)}
    assert {(c, fw, r, b) for c, fw, r, b in seen if b < 2} == {
        (c, fw, r, b) for c, fw in combos for r in range(fw) for b in range(2)
        if (b, r) != (0, 0)}, sorted(seen)
    assert {(c, fw) for c, fw, _, b in seen if b == 2} == combos


def test_chains_on_the_host() -> None:
    check_on_host("dsp", chain_cases())


@needs_target
def test_chains_on_cortex_m4(kernel_fw_root: Path) -> None:
    check_on_m4(kernel_fw_root, chain_cases(), 190, 20)
