"""Models from the field: tinyhost never trusts a .tflite's quantization or shapes. A scale that
is NaN, infinite, zero or negative, a zero point out of the int8 range, scales no int8
arithmetic can represent, negative or absurd dimensions: each gives one line naming the file,
op and tensor, and exit code 2, from every command that would use it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost.cli import main
from tinyhost.ir import Graph
from tinyhost.tflite import read_model
from tinyhost.tflite.writer import write_model

BASE = PROJECT_MODELS / "kws_dscnn_int8.tflite"


def _with_quant(graph: Graph, t: int, **changes: np.ndarray) -> Graph:
    tensors = list(graph.tensors)
    tensors[t] = dataclasses.replace(tensors[t],
                                     quant=dataclasses.replace(tensors[t].quant, **changes))
    return dataclasses.replace(graph, tensors=tuple(tensors))


def _with_shape(graph: Graph, shape: tuple[int, ...]) -> Graph:
    tensors = list(graph.tensors)
    for t in (graph.ops[0].inputs[0],):
        tensors[t] = dataclasses.replace(tensors[t], shape=shape)
    return dataclasses.replace(graph, tensors=tuple(tensors))


def _cases() -> dict[str, tuple[Graph, str]]:
    g = read_model(BASE)
    conv = g.ops[0]
    y, w = conv.outputs[0], conv.inputs[1]
    n = g.tensors[w].quant.scale.size
    f32 = np.float32
    return {
        "nan scale": (_with_quant(g, y, scale=np.array([np.nan], f32)), r"has scale \[nan\]"),
        "zero scale": (_with_quant(g, y, scale=np.array([0.0], f32)), r"has scale \[0\.0\]"),
        "negative scale": (_with_quant(g, y, scale=np.array([-0.1], f32)), r"has scale \[-0\.1"),
        "infinite weight scales": (_with_quant(g, w, scale=np.full(n, np.inf, f32)),
                                   r"weights '.*' have a scale that is not finite and positive"),
        "zero point 300": (_with_quant(g, y, zero_point=np.array([300])), r"zero point 300"),
        "scale too small": (_with_quant(g, y, scale=np.array([1e-45], f32)),
                            r"op 0 \(CONV_2D\): a requantization scale of .* cannot represent"),
        "negative dimension": (_with_shape(g, (1, -5, 10, 1)), r"invalid shape \[1, -5, 10, 1\]"),
        "absurd dimensions": (_with_shape(g, (1, 1 << 20, 1 << 20, 1)), r"over 1 GiB"),
    }  # fmt: skip


CASES = _cases()


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("command", ["convert", "plan", "reference"])
def test_field_model_gives_one_line_and_exit_2(case: str, command: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    graph, pattern = CASES[case]
    model = tmp_path / "field.tflite"
    model.write_bytes(write_model(graph))
    args = {"convert": ["convert", str(model), "--board", "host", "-o", str(tmp_path / "o")],
            "plan": ["plan", str(model), "--board", "host"],
            "reference": ["reference", str(model), "--input", str(tmp_path / "x.npy"), "-o",
                          str(tmp_path / "o")]}[command]
    np.save(tmp_path / "x.npy", np.zeros((1, 25, 10, 1), np.int8))  # the base model's input
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(model) in err, err
    if command != "plan" or "dimension" in case:  # plan needs no requantization
        import re

        assert re.search(pattern, err), err
    assert not (tmp_path / "o").exists()  # nothing written
