"""The firmware's start-up self-check (firmware/selfcheck) and the host's refusal of a target
that fails it: the C checks pass on the kernels' emulated-DSP models and on QEMU's Cortex-M4
(Renode: tests/test_renode_e2e.py), a forced failure names the instruction, INFO stays backward
compatible, and `run` refuses to report outputs from a failing target."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tinyhost.boards import load_board
from tinyhost.codegen.interpreter import convert
from tinyhost.deploy import protocol
from tinyhost.deploy.runner import build_firmware, open_device, run_model
from tinyhost.deploy.selfcheck import check_selfcheck, failing_instructions
from tinyhost.errors import DeployError
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
SELFCHECK = REPO / "firmware" / "selfcheck"
MODEL = REPO / "tests" / "models" / "fc_pertensor_bias_relu6_nobias_int8.tflite"
DRIVER = '#include <stdio.h>\n#include "th_selfcheck.h"\n' \
         'int main(void) { puts(th_selfcheck_run()); return 0; }\n'  # fmt: skip
FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]


def _host_verdict(tmp_path: Path, *defines: str) -> str:
    (tmp_path / "main.c").write_text(DRIVER)
    exe = tmp_path / "selfcheck"
    subprocess.run(["gcc", *FLAGS, *defines, f"-I{SELFCHECK}", f"-I{REPO / 'kernels_c/include'}",
                    str(SELFCHECK / "th_selfcheck.c"), str(tmp_path / "main.c"), "-o", str(exe)],
                   check=True)  # fmt: skip
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.strip()


def test_checks_pass_on_the_emulated_dsp_models(tmp_path: Path) -> None:
    assert _host_verdict(tmp_path, "-DTH_NN_EMULATE_DSP=1") == "ok"


def test_forced_failure_names_the_instruction(tmp_path: Path) -> None:
    assert _host_verdict(tmp_path, "-DTH_NN_EMULATE_DSP=1",
                         "-DTH_SELFCHECK_FORCE_FAIL=1") == "fail:SSUB8"  # fmt: skip


def test_without_dsp_kernels_there_is_nothing_to_check(tmp_path: Path) -> None:
    assert _host_verdict(tmp_path) == "none"


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m7", "cortex-m55"])
def test_native_checks_compile_warning_free(cpu: str, tmp_path: Path) -> None:
    abi = ["-mfloat-abi=hard"] if cpu == "cortex-m55" else []  # as boards/mps3-an547 builds
    subprocess.run(["arm-none-eabi-gcc", *FLAGS, f"-mcpu={cpu}", "-mthumb", *abi, "-c",
                    f"-I{SELFCHECK}", f"-I{REPO / 'kernels_c/include'}",
                    str(SELFCHECK / "th_selfcheck.c"), "-o", str(tmp_path / "s.o")],
                   check=True)  # fmt: skip
    decode = ["-marmv8.1-m.main"] if cpu == "cortex-m55" else []  # objdump's MVE decoder
    nm = subprocess.run(["arm-none-eabi-objdump", "-d", *decode, str(tmp_path / "s.o")],
                        capture_output=True, text=True, check=True).stdout  # fmt: skip
    for insn in ("ssub8", "sadd8", "ssub16", "sadd16", "usub8", "sel", "usat", "smmlar"):
        assert f"\t{insn}" in nm, insn
    # Cortex-M55 also checks its Helium instructions, the others cannot (objdump prints
    # VMLADAV without exchange as its alias VMLAV)
    helium = (("vmladav.s8", "vmlav.s8"), ("vqrdmulh.s32",), ("vrshl.s32",), ("vldrb.s16",))
    for names in helium:
        assert any(f"\t{n}" in nm for n in names) == (cpu == "cortex-m55"), names


def test_refusal_names_the_instruction_and_the_fix() -> None:
    with pytest.raises(DeployError, match=r"this Renode computes the GE flags of SSUB8 wrongly.*"
                                          r"fixed Renode"):  # fmt: skip
        check_selfcheck("fail:SSUB8", "stm32f4_discovery", "renode")
    with pytest.raises(DeployError, match="SMLAD, SSAT wrongly"):
        check_selfcheck("fail:SMLAD,SSAT", "mps2-an386")
    for verdict in ("ok", "none", None):
        check_selfcheck(verdict, "mps2-an386")  # no error
    assert failing_instructions("fail:SSUB8,SEL") == ["SSUB8", "SEL"]


def _info_record(trailer: bytes) -> bytes:
    def s(text: str) -> bytes:
        return bytes([len(text)]) + text.encode()

    head = struct.pack("<HB", 1, 1) + s("fw") + s("host") + s("interpreter") + s("m")
    return head + struct.pack("<IIBIHBB", 7, 64, 2, 0, 3, 0, 0) + trailer


def test_info_selfcheck_field_is_optional() -> None:
    assert protocol.parse_info(_info_record(b"")).selfcheck is None  # older firmware
    assert protocol.parse_info(_info_record(b"\x0afail:SSUB8")).selfcheck == "fail:SSUB8"
    assert protocol.parse_info(_info_record(b"\x02ok")).n_ops == 3


def test_run_refuses_a_target_whose_check_fails(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:  # fmt: skip
    real = protocol.parse_info

    def failing(data: bytes) -> protocol.DeviceInfo:
        info = real(data)
        assert info.selfcheck == "none"  # the host board's firmware does send its verdict
        return protocol.DeviceInfo(**{**info.__dict__, "selfcheck": "fail:SSUB8"})

    monkeypatch.setattr(protocol, "parse_info", failing)
    graph = read_model(MODEL)
    x = np.zeros(graph.tensors[graph.inputs[0]].shape, np.int8)
    with pytest.raises(DeployError, match="self-check.*SSUB8"):
        run_model(graph, "host", [[x]], work_dir=tmp_path / "w")


@pytest.mark.skipif(shutil.which("qemu-system-arm") is None
                    or shutil.which("arm-none-eabi-gcc") is None,
                    reason="qemu-system-arm or arm-none-eabi-gcc not installed")  # fmt: skip
@pytest.mark.parametrize("board_name", ["mps2-an386", "mps3-an547"])
def test_checks_pass_on_qemu(board_name: str) -> None:
    """Cortex-M4 (DSP) and Cortex-M55 (DSP and Helium)."""
    board = load_board(board_name)
    work = REPO / "build" / "test_selfcheck" / board.name
    conv = convert(read_model(MODEL), board, work / "model")
    elf = build_firmware(conv.out_dir, board, work / "build").elf
    with open_device(elf, board, timeout=120.0) as device:
        assert device.info().selfcheck == "ok"
