"""The interpreter's calling convention: declared once in Python, generated into C, enforced.

- th_interp_abi.h is exactly what codegen/interpreter_abi.py generates (regenerate and diff);
- every adapter the firmware has is declared, and the adapters' sources use only the
  generated names for parameter positions (no literal word index survives);
- a model over a device limit is refused on the host before any file is written.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinyhost.boards import load_board
from tinyhost.codegen.interpreter import convert
from tinyhost.codegen.interpreter_abi import (
    ADAPTERS,
    HEADER_PATH,
    LIMITS,
    ConstRef,
    pack,
    render_header,
)
from tinyhost.codegen.lower import lower_graph
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, NoOptions, Op, OpKind, Quantization, Tensor
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
INTERP = REPO / "firmware" / "interpreter"


def test_generated_header_is_up_to_date() -> None:
    committed = (REPO / HEADER_PATH).read_text()
    assert committed == render_header(), (
        "th_interp_abi.h differs from codegen/interpreter_abi.py: run "
        "`python -m tinyhost.codegen.interpreter_abi --write`"
    )


def test_the_documented_command_prints_the_header_without_warnings() -> None:
    """`python -m tinyhost.codegen.interpreter_abi` (the header's banner) runs cleanly."""
    run = subprocess.run(
        [sys.executable, "-W", "error", "-m", "tinyhost.codegen.interpreter_abi"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert run.stdout == (REPO / HEADER_PATH).read_text()


def test_every_adapter_in_the_firmware_is_declared() -> None:
    """The C adapters (th_interp_<name>_prepare) and the Python table name the same set."""
    declared = {a.name for a in ADAPTERS}
    in_c = set(re.findall(r"th_interp_status th_interp_(\w+)_prepare\(",
                          (INTERP / "th_interp_ops.h").read_text()))  # fmt: skip
    assert in_c == declared
    ids = [a.kernel_id for a in ADAPTERS]
    assert len(set(ids)) == len(ids) and all(0 < i < 0xFFFF for i in ids)


def test_adapters_read_words_by_generated_name_only() -> None:
    """A literal index into the parameter words (p[3], op->params[12]) is a second copy."""
    for source in sorted(INTERP.glob("ops_*.c")):
        text = source.read_text()
        literal = re.findall(r"\b(?:p|params)\[\s*\d+", text)
        assert not literal, f"{source.name}: {literal}"
        counts = re.findall(r"n_params\s*[!=]=\s*\d", text)
        assert not counts, f"{source.name}: {counts}"


def test_packing_fills_every_word_by_name() -> None:
    graph = read_model(REPO / "tests" / "models" / "digits_tf_int8.tflite")
    for call in lower_graph(graph):
        adapter, words = pack(call)
        assert len(words) == len(adapter.word_names())
        for w in words:
            assert isinstance(w, int | ConstRef)
            if isinstance(w, ConstRef):
                assert w.key in call.arrays


def _relu_chain(n_ops: int) -> Graph:
    q = Quantization(scale=np.array([0.1], np.float32), zero_point=np.array([0]), axis=0)
    tensors = tuple(Tensor(f"t{i}", (1, 4), np.dtype(np.int8), quant=q)
                    for i in range(n_ops + 1))  # fmt: skip
    ops = tuple(Op(OpKind.RELU, (i,), (i + 1,), NoOptions()) for i in range(n_ops))
    return Graph(tensors=tensors, ops=ops, inputs=(0,), outputs=(n_ops,), name="chain",
                 source="chain.tflite")  # fmt: skip


def test_a_model_over_the_op_limit_is_refused_before_writing(tmp_path: Path) -> None:
    limit = LIMITS["TH_INTERP_MAX_OPS"]
    out = tmp_path / "out"
    with pytest.raises(UnsupportedModelError, match=rf"{limit + 1} ops .*at most {limit}"):
        convert(_relu_chain(limit + 1), load_board("host"), out)
    assert not out.exists()
    convert(_relu_chain(limit), load_board("host"), out)  # at the limit: fine
    assert (out / "model_blob.bin").is_file()


def test_model_io_limit_is_the_firmware_s() -> None:
    """The host's I/O limit is the one the protocol firmware describes (th_model.h)."""
    header = (REPO / "firmware" / "model" / "th_model.h").read_text()
    m = re.search(r"#define TH_MODEL_MAX_IO (\d+)", header)
    assert m and int(m.group(1)) == LIMITS["TH_INTERP_MAX_MODEL_IO"]
