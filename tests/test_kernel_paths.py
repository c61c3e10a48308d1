"""Kernel paths a compiled model never takes are left out of its build (ARCHITECTURE §4.2c).

The kernels name their optional paths (TH_NN_PATH, kernels_c/include/th_nn_paths.h);
`convert --backend compiled` records which ones the model takes by running it once on the
host and writes th_nn_config.h. What is checked: every named path has its default, the
recording sees what the model's shapes imply, and on QEMU the build with only the recorded
paths is bit-exact, no layer slower than with every path, and smaller.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from graph_builder import GraphBuilder
from graph_on_device import int8_inputs
from paths import REPO
from reference_single_op import q
from tinyhost.boards import load_board
from tinyhost.codegen.compiled import convert
from tinyhost.codegen.prune import KernelPaths, config_header, keep_all, known_paths
from tinyhost.deploy.bench import bench
from tinyhost.ir import Activation, Conv2DOptions, DepthwiseConv2DOptions, Graph, Padding

BUILD = REPO / "build" / "test_kernel_paths"


def _named_in_kernels() -> set[str]:
    named: set[str] = set()
    for src in (REPO / "kernels_c").rglob("*.c"):
        named |= set(re.findall(r"TH_NN_PATH\((\w+)\)", src.read_text()))
    return named


def test_every_named_path_has_its_default_and_every_default_is_named() -> None:
    known = known_paths(REPO)
    assert len(known) == len(set(known))
    assert _named_in_kernels() == set(known)


def test_config_header_states_every_path() -> None:
    known = known_paths(REPO)
    kept = frozenset(known[::2])
    text = config_header(KernelPaths(known, kept, recorded=True), "m", "mps2-an386")
    for p in known:
        assert f"#define TH_NN_KEEP_{p} {int(p in kept)}\n" in text
    everything = config_header(keep_all(REPO, "no */ compiler"), "m", "b")
    assert "*/ compiler" not in everything  # the reason cannot end the comment early
    assert all(f"#define TH_NN_KEEP_{p} 1\n" in everything for p in known)


def _dw_pw_graph() -> Graph:
    """A 3-channel stem conv, a stride-1 3x3 depthwise (17 columns: odd, >= 4) and a 12 -> 16
    pointwise: no stride-2 depthwise, no pointwise with 8 input channels."""
    b = GraphBuilder(np.random.default_rng(5))
    x = b.tensor("x", (1, 11, 17, 3), quant=q(0.05, 2))
    rng = b.rng

    def out_q() -> object:
        return q(float(rng.uniform(0.03, 0.06)), int(rng.integers(-10, 10)))

    stem = b.conv(x, Conv2DOptions(Padding.SAME, 1, 1, activation=Activation.RELU),
                  rng.integers(-127, 128, (12, 3, 3, 3)),
                  rng.uniform(0.002, 0.01, 12).astype(np.float32),
                  rng.integers(-2000, 2000, 12), out_q(), "stem")  # fmt: skip
    dw = b.conv(stem, DepthwiseConv2DOptions(Padding.SAME, 1, 1),
                rng.integers(-127, 128, (1, 3, 3, 12)),
                rng.uniform(0.002, 0.01, 12).astype(np.float32),
                rng.integers(-2000, 2000, 12), out_q(), "dw")  # fmt: skip
    pw = b.conv(dw, Conv2DOptions(Padding.VALID, 1, 1),
                rng.integers(-127, 128, (16, 1, 1, 12)),
                rng.uniform(0.002, 0.01, 16).astype(np.float32),
                rng.integers(-2000, 2000, 16), out_q(), "pw")  # fmt: skip
    return b.graph([x], [stem, dw, pw], "dw_pw")


def test_recording_keeps_what_the_shapes_take_and_the_export_carries_it(tmp_path) -> None:
    out = tmp_path / "model"
    convert(_dw_pw_graph(), load_board("mps2-an386"), out)
    paths = json.loads((out / "model.json").read_text())["kernel_paths"]
    assert paths["recorded"] is True, paths.get("reason")
    kept, left_out = set(paths["kept"]), set(paths["left_out"])
    assert kept | left_out == set(known_paths(REPO)) and not kept & left_out
    # No stride-2 depthwise and no Cin-8 pointwise: their paths cannot have been taken.
    assert {"DW3X3_S2_EVEN", "DW3X3_S2_ODD", "CONV1X1_K8"} <= left_out
    # 17 output columns (4m + 1), fast requantization: 3 blocks of four (an odd count), then
    # the last five in one block; not the rows of blocks and a single output.
    assert "DW3X3_S1_FIVE_ODD" in kept
    assert {"DW3X3_S1_EVEN", "DW3X3_S1_ODD", "DW3X3_S1_FIVE_EVEN"} <= left_out
    header = (out / "th_nn_config.h").read_text()
    assert (out / "kernels" / "include" / "th_nn_config.h").read_text() == header
    assert "#define TH_NN_KEEP_DW3X3_S2_ODD 0" in header


@pytest.mark.parametrize("board", ["mps2-an386"])
def test_only_the_recorded_paths_build_is_exact_no_slower_and_smaller(board: str) -> None:
    graph = _dw_pw_graph()
    x = int8_inputs(graph, 3)
    used = bench(graph, board, backend="compiled", work_dir=BUILD / "used", inputs=x)
    every = bench(graph, board, backend="compiled", work_dir=BUILD / "all", inputs=x,
                  kernel_paths="all")  # fmt: skip
    assert used.bit_exact and every.bit_exact
    assert used.outputs == every.outputs
    for a, b in zip(used.per_op, every.per_op, strict=True):
        # A path left out that a layer needed would fall to the general path, several times
        # slower; the same path compiled in a smaller function may differ by a few
        # instructions (register allocation, dispatch checks that drop out).
        assert a.count <= b.count * 1.01 + 16, (a.name, a.count, b.count)
    assert used.flash_model_code_bytes < every.flash_model_code_bytes


def _configs(used: list[str]) -> list[dict[str, int]]:
    """Every path kept, none, and each kept alone: what models' builds combine."""
    return [dict.fromkeys(used, 1), dict.fromkeys(used, 0),
            *({**dict.fromkeys(used, 0), p: 1} for p in used)]


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard"])
def test_every_file_compiles_warning_free_whatever_paths_a_build_keeps(cpu: str) -> None:
    """A model's th_nn_config.h may keep any mix of paths: each must build -Werror clean
    (uninitialized-use warnings appear only where a path's code is gone)."""
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is None:
        pytest.skip("arm-none-eabi-gcc not installed")
    known = set(known_paths(REPO))
    failures = []
    for src in sorted((REPO / "kernels_c").rglob("*.c")):
        text = src.read_text()
        used = sorted(set(re.findall(r"TH_NN_(?:PATH\(|KEEP_)(\w+)", text)) & known)
        for config in _configs(used) if used else []:
            defines = [f"-DTH_NN_KEEP_{p}={v}" for p, v in config.items()]
            cmd = [gcc, *f"-mcpu={cpu}".split(), "-mthumb", "-std=c99", "-O2", "-Wall", "-Wextra",
                   "-Werror", f"-I{REPO / 'kernels_c' / 'include'}", f"-I{REPO / 'kernels_c'}",
                   *defines, "-c", str(src), "-o", os.devnull]  # fmt: skip
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                failures.append(f"{src.name} {config}: {proc.stderr[-400:]}")
    assert not failures, "\n".join(failures[:3])
