"""The compiled backend: generated C for every model, bit-exact with the reference.

Every int8 project model and shared model is converted with `--backend compiled`, built with
the protocol firmware and run on the host board (native gcc, -Werror) with random inputs;
every one also runs on QEMU mps2-an386 (DSP kernels, interleaved filters, exact instruction
counts per layer), mps2-an500 (Cortex-M7), netduinoplus2 (STM32F405) and mps3-an547
(Cortex-M55). A model the backend cannot
run is refused before anything is written, and LOAD_MODEL is refused with a reason.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from paths import SHARED_INT8, SHARED_MODELS, model_params, project_models
from tinyhost import reference
from tinyhost.boards import load_board
from tinyhost.codegen import get_backend
from tinyhost.codegen.compiled import generate
from tinyhost.codegen.fold import fold_pads
from tinyhost.deploy.runner import run_model
from tinyhost.quantize.quantizer import is_float_model
from tinyhost.reference.executor import random_inputs
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_compiled"


def _int8_models() -> list[Path]:
    shared = [SHARED_MODELS / m for m in SHARED_INT8 if (SHARED_MODELS / m).is_file()]
    project = [p for p in project_models() if not is_float_model(read_model(p))]
    return shared + project


def _check(path: Path, board: str, samples: int = 2) -> None:
    graph = read_model(path)
    rng = np.random.default_rng(zlib.crc32(path.name.encode()))
    inputs = [random_inputs(graph, rng) for _ in range(samples)]
    report = run_model(graph, board, inputs, backend="compiled",
                       work_dir=BUILD / f"{board}-{path.stem}")  # fmt: skip
    assert report.backend == "compiled"
    for x, run in zip(inputs, report.runs):
        expected = reference.run(graph, x).outputs
        for got, want in zip(run.outputs, expected):
            np.testing.assert_array_equal(got, np.asarray(want).reshape(got.shape))
    # one profile entry per op that runs: a PAD folded into its conv (codegen.fold) does not,
    # nor a residual ADD its conv computes (fused: codegen.fold.fuse_residual_adds), nor a
    # pointwise conv fed by its depthwise in bands (codegen.fold.fuse_dw_pw)
    folded = generate(graph, load_board(board), path.stem).folded
    assert {f.pad for f in folded.pads} == {f.pad for f in fold_pads(graph).pads}
    gone = ({f.pad for f in folded.pads} | {f.add for f in folded.fused}
            | {f.pw for f in folded.fused_dw_pw})  # fmt: skip
    assert sorted(report.op_indices) == [i for i in range(len(graph.ops)) if i not in gone]
    assert len(report.runs[0].latency.per_op) == len(graph.ops) - len(gone)


@pytest.mark.parametrize("path", model_params(_int8_models()))
def test_every_model_bit_exact_on_the_host_board(path: Path) -> None:
    _check(path, "host")


@pytest.mark.parametrize("path", model_params(_int8_models()))
def test_models_bit_exact_on_qemu(path: Path) -> None:
    _check(path, "mps2-an386", samples=1)


def test_generated_code_reads_like_the_model(tmp_path: Path) -> None:
    """One function per op with literal parameters, weights const, no interpreter, and the
    linked kernels are exactly those the model calls."""
    path = REPO / "tests" / "models" / "digits_tf_int8.tflite"
    graph = read_model(path)
    result = get_backend("compiled").convert(graph, load_board("mps2-an386"), tmp_path / "m")
    source = (tmp_path / "m" / "model.c").read_text()
    assert "th_interp" not in source and "blob" not in source
    for i in range(len(graph.ops)):
        assert f"static th_status op_{i}(void)" in source
    assert "static const int8_t tensor_" in source and "static uint8_t arena[" in source
    # --optimize speed on a DSP core: the second conv and the FC take host-widened int16
    # weights (codegen/widen.py), the first conv (one input channel) keeps int8
    assert set(result.linked) == {"th_conv_3x3_s8", "th_conv_3x3_s8_w16", "th_fc_s8_w16",
                                  "th_softmax_s8"}  # fmt: skip
    assert result.load_image is None and result.load_capacity == 0


def test_elementwise_calls_link_their_prepared_entries(tmp_path: Path) -> None:
    """int8 ADD / SUB / MUL are called through their prepared entries (§4.4b), and `linked`
    (model.json) names those, not the generic entries the code no longer calls."""
    graph = read_model(REPO / "tests" / "models" / "elementwise_add_sub_mul_broadcast_int8.tflite")
    result = get_backend("compiled").convert(graph, load_board("mps2-an386"), tmp_path / "m")
    source = (tmp_path / "m" / "model.c").read_text()
    assert {"th_add_s8_prepared", "th_mul_s8_prepared"} <= set(result.linked)
    for generic in ("th_add_s8", "th_sub_s8", "th_mul_s8"):
        assert generic not in result.linked and f"{generic}(" not in source
    assert "th_add_s8_prepared(&prep" in source and "th_mul_s8_prepared(&prep" in source


def test_max_pools_call_their_prepared_entry(tmp_path: Path) -> None:
    """int8 MAX_POOL_2D is called through th_maxpool_s8_prepared on a th_maxpool_prep in
    flash (§4.4b), made for the scratch the plan granted: its fields as
    tinyhost.arith.pool.maxpool_prep gives them for the op's shapes and the grant."""
    graph = read_model(REPO / "tests" / "models" / "pool_avg_max_same_valid_int8.tflite")
    result = get_backend("compiled").convert(graph, load_board("mps2-an386"), tmp_path / "m")
    source = (tmp_path / "m" / "model.c").read_text()
    assert "th_maxpool_s8_prepared" in result.linked and "th_maxpool_s8" not in result.linked
    assert "th_maxpool_s8(" not in source and "th_maxpool_s8_prepared(&ctx, &prep" in source
    assert source.count("static const th_maxpool_prep prep = {.params = {.stride = ") == 2


def test_interpreter_only_options_are_refused(tmp_path: Path) -> None:
    from tinyhost.errors import TinyhostError

    graph = read_model(REPO / "tests" / "models" / "digits_tf_int8.tflite")
    with pytest.raises(TinyhostError, match="--all-ops is the interpreter's"):
        get_backend("compiled").convert(graph, load_board("host"), tmp_path / "m", all_ops=True)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("board", ["mps2-an500", "netduinoplus2", "mps3-an547"])
@pytest.mark.parametrize("path", model_params(_int8_models()))
def test_models_on_the_other_qemu_boards(board: str, path: Path) -> None:
    """Cortex-M7, the STM32F405's 128 KiB SRAM and Cortex-M55 (16-byte arena alignment)."""
    _check(path, board, samples=1)


def test_optimize_size_trades_speed_for_code(tmp_path: Path) -> None:
    """--optimize size: portable kernels built -Os; still bit-exact, far less model code."""
    from tinyhost.deploy.bench import bench

    graph = read_model(REPO / "tests" / "models" / "kws_dscnn_int8.tflite")
    fast, small = (bench(graph, "mps2-an386", backend="compiled", optimize=o,
                         work_dir=BUILD / f"optimize-{o}") for o in ("speed", "size"))  # fmt: skip
    assert fast.bit_exact and small.bit_exact
    assert small.flash_model_code_bytes < fast.flash_model_code_bytes / 2
    assert small.instructions > fast.instructions
