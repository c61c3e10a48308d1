"""The protocol firmware reaches its model only through th_model.h.

firmware/app is built for the host board with a hand-written backend (tests/firmware/
fake_model: no interpreter, no blob, no load hook). Over the real protocol: INFO reports the
backend and the model's I/O with their quantization, INVOKE/GET_OUTPUT/GET_PROFILE go through
the interface, and LOAD_MODEL is answered UNSUPPORTED, which the host turns into one line
saying why.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from tinyhost.boards import load_board
from tinyhost.deploy.build import build
from tinyhost.deploy.protocol import DeviceError, ErrorCode
from tinyhost.deploy.runner import open_device

REPO = Path(__file__).resolve().parents[1]
FAKE = REPO / "tests" / "firmware" / "fake_model"

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")


@pytest.fixture(scope="module")
def fake_firmware(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fake-fw")
    board = load_board("host")
    return build(REPO / "firmware" / "app", board, out, model_dir=FAKE).elf


def test_app_serves_a_backend_through_the_interface(fake_firmware: Path) -> None:
    with open_device(fake_firmware, "host") as device:
        info = device.info()
        assert info.backend == "fake" and info.model_name == "plus_one"
        assert info.model_hash == 0x12345678 and info.n_ops == 2
        (x,) = info.inputs
        assert x.shape == (1, 4) and x.dtype == np.int8
        assert x.scale == pytest.approx(0.5) and x.zero_point == -3
        device.set_input(0, np.array([[1, -2, 126, 127]], np.int8))
        assert device.invoke() == 30
        np.testing.assert_array_equal(device.get_output(0), [[2, -1, 127, 127]])
        assert device.get_profile() == [10, 20]


def test_load_model_on_a_backend_without_a_load_hook(fake_firmware: Path) -> None:
    with open_device(fake_firmware, "host") as device:
        with pytest.raises(DeviceError) as info:
            device.load_model(b"\0" * 64)
        assert info.value.code == ErrorCode.UNSUPPORTED
        message = str(info.value)
        assert "fake backend cannot load a model" in message and "\n" not in message
        assert device.info().model_name == "plus_one"  # the model is untouched


def test_main_uses_no_backend_directly() -> None:
    """The app includes th_model.h, never a backend's own header or functions."""
    main_c = (REPO / "firmware" / "app" / "main.c").read_text()
    assert '#include "th_model.h"' in main_c
    assert not re.search(r"th_interp|model_blob", main_c)
