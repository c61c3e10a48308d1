"""The prepared MAX_POOL_2D call (ARCHITECTURE.md §4.4b): th_maxpool_s8_prepared on the host's
th_maxpool_prep (tinyhost.arith.pool.maxpool_prep, what the compiled backend keeps in flash).

For each case the kernel test driver first fills the struct with th_maxpool_s8_prepare for the
case's scratch and compares it with the host's word for word (TH_KCASE_PREP_MISMATCH), then
runs the prepared entry on the host's struct; the generic entry (th_maxpool_s8, which prepares
per call) runs the same case with the kernel's own scratch choice. Geometries: 1-21 channels,
windows 1..15, strides 1-3, SAME / VALID and explicit paddings, planes narrower than the
window, one or two images, activations, and every amount of scratch the struct's fields
branch on (none, the separable size, the fast size, one byte short of either, more). On the
host (ASan/UBSan, portable and emulated DSP builds) and on QEMU mps2-an386 (Cortex-M4).
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from kernels.cases import Op, check_result
from kernels.cases_ops import PoolCase
from kernels.harness import Driver, build_driver
from kernels.maxpool import check_on_host, check_on_m4, needs_target
from tinyhost.arith.padding import compute_window_padding
from tinyhost.arith.pool import PoolParams, maxpool_prep
from tinyhost.ir import Padding


def _scratch_choices(full: dict) -> list[int]:
    """The scratch amounts the struct's fields branch on, for a case whose sizes (given
    every byte) are full's fast and sep."""
    fast, sep = full["fast"], full["sep"]
    out = [0, fast, sep, max(fast, sep), max(fast, sep) + 12]
    out += [v - 1 for v in (fast, sep) if v > 0]
    return out


def prepared_cases(seed: int, count: int, max_elements: int = 3000) -> list[PoolCase]:
    """Max pools for the prepared entry: the geometries of the module docstring, each with
    one of _scratch_choices in turn."""
    rng = np.random.default_rng(seed)
    out: list[PoolCase] = []
    while len(out) < count:
        i = len(out)
        c = int(rng.integers(1, 22)) if i % 3 else int(rng.integers(1, 5))
        fh, fw = int(rng.integers(1, 16)), int(rng.integers(1, 16))
        if i % 4 == 0:
            fh, fw = int(rng.integers(1, 8)), int(rng.integers(1, 9))
        stride = int(rng.integers(1, 4))
        if i % 7 == 6:  # one channel, strides 2-3, windows 4..8 wide (MAX_C1_WORDS)
            c, stride, fw = 1, int(rng.integers(2, 4)), int(rng.integers(4, 9))
        h, w = int(rng.integers(1, fh + 8)), int(rng.integers(1, fw + 8))
        mode = i % 3  # SAME, VALID, explicit
        if mode < 2:
            pads = compute_window_padding(Padding.SAME if mode == 0 else Padding.VALID, h, w,
                                          fh, fw, stride, stride)
            pt, pl, oh, ow = pads.top, pads.left, pads.out_h, pads.out_w
            pb, pr = pads.bottom, pads.right
        else:  # explicit paddings up to the window (rows of no input row)
            pt, pl = int(rng.integers(0, fh)), int(rng.integers(0, fw))
            pb, pr = int(rng.integers(0, fh)), int(rng.integers(0, fw))
            oh = (h + pt + pb - fh) // stride + 1
            ow = (w + pl + pr - fw) // stride + 1
        n = 1 + i % 2
        if oh < 1 or ow < 1 or n * h * w * c > max_elements:
            continue
        lo, hi = ((int(rng.integers(-128, 0)), int(rng.integers(0, 128))) if i % 5 == 0
                  else (-128, 127))  # fmt: skip
        p = PoolParams(stride, stride, fh, fw, pt, pl, pb, pr, lo, hi)
        x = rng.integers(-128, 128, (n, h, w, c)).astype(np.int8)
        out_shape = (n, oh, ow, c)
        choices = _scratch_choices(maxpool_prep(p, x.shape, out_shape, 1 << 30))
        scratch = choices[(i // 2) % len(choices)]
        out.append(PoolCase(Op.MAXPOOL, x, p, out_shape, prepared_scratch=scratch))
    return out


def path_edges(cases: list[PoolCase]) -> set[str]:
    """What the mix reaches of the struct's branches (its fields)."""
    seen = set()
    for case in cases:
        k = maxpool_prep(case.p, case.x.shape, case.out_shape, case.prepared_scratch or 0)
        seen.add("c1" if k["c1"] else f"fast rows {k['rows']}" if k["fast"]
                 else "sep" if k["sep"] else "none")  # fmt: skip
        if k["fast"] and not k["c1"]:
            seen.add("rows_padded" if k["rows_padded"] and k["yb"] - k["ya"] >= 2 else "rows")
            seen.add("top chain" if k["ya"] > 0 else "no top")
            seen.add("bottom" if k["yb"] < case.out_shape[1] else "no bottom")
        if case.x.shape[0] == 2:
            seen.add("two images")
        if case.p.filter_h > case.x.shape[1] or case.p.filter_w > case.x.shape[2]:
            seen.add("narrower than the window")
        if case.p.act_min > -128:
            seen.add("clamp")
    return seen


EDGES = {"c1", "fast rows 1", "fast rows 2", "fast rows 4", "sep", "none", "rows_padded",
         "rows", "top chain", "no top", "bottom", "no bottom", "two images",
         "narrower than the window", "clamp"}  # fmt: skip


@pytest.mark.parametrize("seed", [41, 43])
def test_prepared_mix_reaches_every_branch(seed: int) -> None:
    """The host (41) and Cortex-M4 (43) mixes take every path the struct selects and the
    lanes' row ranges (path_edges)."""
    assert path_edges(prepared_cases(seed, 240)) == EDGES


@pytest.mark.parametrize("variant", ["portable", "dsp"])
def test_prepared_maxpool_on_the_host(variant: str) -> None:
    check_on_host(variant, prepared_cases(41, 240))


@pytest.mark.parametrize("field", ["ya", "fast", "span"])
def test_a_differing_host_struct_is_refused(field: str) -> None:
    """The driver's word-for-word check can fail: a host struct with one field off by one is
    refused before the prepared entry runs."""
    case = next(c for c in prepared_cases(41, 240)
                if maxpool_prep(c.p, c.x.shape, c.out_shape, c.prepared_scratch)["fast"] > 0)

    def bad(*args: object) -> dict:
        prep = maxpool_prep(*args)
        prep[field] += 1
        return prep

    with Driver(build_driver("dsp")) as driver, mock.patch("kernels.cases_ops.maxpool_prep",
                                                           bad):
        problem = check_result(case, driver.run(case))
    assert problem is not None and problem.startswith("status "), problem


@needs_target
def test_prepared_maxpool_on_cortex_m4(kernel_fw_root: Path) -> None:
    check_on_m4(kernel_fw_root, prepared_cases(43, 240), 200, 60)
