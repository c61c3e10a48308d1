"""The serial robustness cases of tests/test_qemu_serial.py (garbage, corrupt frames, a
byte-at-a-time host, disconnects and reconnects, a silent link) on a Renode board: the
STM32 USART driver behind Renode's UART socket (stm32f4_discovery). Same tests, same
assertions; only the fixtures start Renode instead of QEMU."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import serial

from test_qemu_serial import (  # noqa: F401 (the tests run here against Renode)
    BUILD,
    MODEL,
    REPLY_WAIT,
    Firmware,
    Qemu,
    test_corrupt_frames_get_link_errors_and_are_never_acted_on,
    test_disconnect_and_reconnect,
    test_random_garbage_gets_one_link_error_per_frame,
    test_silent_link_times_out_then_device_still_works,
    test_slow_host_byte_at_a_time,
)
from test_renode import NEEDS_RENODE
from tinyhost.boards import load_board
from tinyhost.codegen.interpreter import convert
from tinyhost.deploy.protocol import Device, Link
from tinyhost.deploy.renode import open_renode_session
from tinyhost.deploy.runner import build_firmware
from tinyhost.errors import DeployError
from tinyhost.tflite import read_model

BOARD = "stm32f4_discovery"
pytestmark = NEEDS_RENODE


@pytest.fixture(scope="module")
def firmware() -> Firmware:
    board = load_board(BOARD)
    out = BUILD.parent / "test_renode_serial" / BOARD
    conv = convert(read_model(MODEL), board, out / "model")
    fw = build_firmware(conv.out_dir, board, out / "build")
    return Firmware(board.name, fw.elf, conv.model_hash)


@pytest.fixture
def qemu(firmware: Firmware) -> Iterator[Qemu]:  # the name the shared tests ask for
    with open_renode_session(firmware.elf, firmware.board, timeout=300.0,
                             port_timeout=1.0) as session:  # fmt: skip
        assert isinstance(session.port, serial.SerialBase)
        url = str(session.port.port)
        assert url.startswith("socket://")
        device = Device(Link(session.port, f"{firmware.board} (Renode)"), timeout=REPLY_WAIT,
                        retries=2, invoke_timeout=60.0)  # fmt: skip
        device.connect(ready_timeout=3 * REPLY_WAIT)
        q = Qemu(firmware, session, url, device)  # type: ignore[arg-type]
        try:
            yield q
        finally:
            q.device.close()


def test_watchdog_bounds_each_run_not_the_session(firmware: Firmware) -> None:
    """A reload re-arms the session's watchdog (a pool reloading for longer than `timeout`
    keeps its Renode); a run left alone past `timeout` is killed, and the next reload says
    so instead of a bare "not running"."""
    with open_renode_session(firmware.elf, firmware.board, timeout=20.0,
                             port_timeout=1.0) as session:  # fmt: skip
        for _ in range(2):  # 26 s in all, each run 13 s: alive only if each reload re-arms
            time.sleep(13.0)
            session.reload(firmware.elf)
        time.sleep(24.0)
        with pytest.raises(DeployError, match="20 s watchdog"):
            session.reload(firmware.elf)
