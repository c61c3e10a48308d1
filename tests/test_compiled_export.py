"""The compiled backend's OUT/ is a C library on its own.

The export is copied away from the checkout and built there with nothing but a compiler, by
the very commands its README gives: natively for a `--board host` conversion, and with
arm-none-eabi-gcc for mps2-an386, run on QEMU through semihosting. The printed outputs must
be the reference's for the same input, and the generated code must be -Wall -Wextra -Werror
clean on both compilers.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from paths import PROJECT_MODELS
from tinyhost import reference
from tinyhost.boards import load_board
from tinyhost.codegen import get_backend
from tinyhost.deploy.bench import deterministic_inputs
from tinyhost.tflite import read_model

MODELS = ["digits_tf_int8", "kws_dscnn_int8", "mobilenet_block_residual_int8"]


def _export(tmp_path: Path, model: str, board: str) -> tuple[Path, np.ndarray]:
    graph = read_model(PROJECT_MODELS / f"{model}.tflite")
    made = tmp_path / "made"
    get_backend("compiled").convert(graph, load_board(board), made)
    away = tmp_path / "elsewhere" / model  # nothing of the checkout is reachable from here
    shutil.copytree(made, away)
    expected = reference.run(graph, deterministic_inputs(graph)).outputs[0]
    return away, np.asarray(expected).reshape(-1)


def _printed(stdout: str) -> list[int]:
    return [int(v) for v in stdout.split()]


def _readme_block(readme: str, language: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", readme, re.S)
    assert blocks, f"README has no {language} block"
    return blocks[-1]


@pytest.mark.parametrize("model", MODELS)
def test_native_build_of_a_host_export(tmp_path: Path, model: str) -> None:
    out, expected = _export(tmp_path, model, "host")
    (out / "Makefile").write_text(_readme_block((out / "README.md").read_text(), "make"))
    # CFLAGS from the environment: the README's `CFLAGS +=` adds its own to these
    env = {**os.environ, "CFLAGS": "-Wall -Wextra -Werror"}
    build = subprocess.run(["make", "-C", str(out), "demo"], capture_output=True, text=True,
                           env=env)  # fmt: skip
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(out / "demo")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert _printed(run.stdout) == expected.tolist()


@pytest.mark.parametrize("model", MODELS)
def test_arm_build_of_an_export_runs_on_qemu(tmp_path: Path, model: str) -> None:
    out, expected = _export(tmp_path, model, "mps2-an386")
    script = _readme_block((out / "README.md").read_text(), "sh")
    gcc_line, qemu_line = (" ".join(part.strip() for part in chunk.split("\\\n"))
                           for chunk in script.strip().split("\nqemu-system-arm"))  # fmt: skip
    gcc = subprocess.run(gcc_line + " -Wall -Wextra -Werror", shell=True, cwd=out,
                         capture_output=True, text=True)  # fmt: skip
    assert gcc.returncode == 0, gcc.stderr
    run = subprocess.run("qemu-system-arm " + qemu_line.strip(), shell=True, cwd=out,
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert _printed(run.stdout) == expected.tolist()
