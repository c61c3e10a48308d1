"""The coverage-guided fuzz targets (bench/fuzz/), bounded: each runs from its committed seed
corpus for a fixed number of executions, with ASan/UBSan on the C targets, and must finish
without a crash. `python bench/fuzz/run.py --minutes M` runs them for longer."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _runner():
    spec = importlib.util.spec_from_file_location("fuzz_run", REPO / "bench" / "fuzz" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_run"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("target", "runs"), [("reader", 3000), ("blob", 30000),
                                              ("proto", 30000)])  # fmt: skip
def test_fuzz_target_bounded_run(target: str, runs: int) -> None:
    result = _runner().run(target, runs, None)
    assert not result["crashed"], result["log_tail"]
    assert result["executions"] >= runs  # libFuzzer reports each one it ran
    assert result["edges"] and result["edges"] > 100  # the target's code is instrumented
