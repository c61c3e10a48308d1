"""repo_root(): the checkout beside the package, or TINYHOST_ROOT for an installed copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tinyhost.errors import DeployError
from tinyhost.paths import ROOT_ENV, repo_root

REPO = Path(__file__).resolve().parents[1]


def test_checkout_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ROOT_ENV, raising=False)
    assert repo_root() == REPO


def test_setting_that_is_not_a_checkout_is_refused(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ROOT_ENV, str(tmp_path))
    with pytest.raises(DeployError, match=ROOT_ENV):
        repo_root()


def _installed_copy(tmp_path: Path) -> dict[str, str]:
    """The package alone in a site-packages-like folder, as `pip install` leaves it."""
    site = tmp_path / "site-packages"
    shutil.copytree(REPO / "host" / "tinyhost", site / "tinyhost",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != ROOT_ENV}
    env["PYTHONPATH"] = str(site)
    return env


def test_installed_copy_uses_the_setting(tmp_path: Path) -> None:
    env = _installed_copy(tmp_path)
    probe = "from tinyhost.paths import repo_root; print(repo_root())"
    alone = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                           text=True, cwd=tmp_path)
    assert alone.returncode != 0 and ROOT_ENV in alone.stderr
    env[ROOT_ENV] = str(REPO)
    found = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                           text=True, cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()) == REPO


def test_installed_copy_cli_error_is_one_line(tmp_path: Path) -> None:
    """A command that needs the C sources says what to set, without a traceback."""
    env = _installed_copy(tmp_path)
    model = REPO / "tests" / "models" / "digits_tf_int8.tflite"
    out = subprocess.run([sys.executable, "-m", "tinyhost.cli", "convert", str(model),
                          "--board", "host", "-o", str(tmp_path / "out")],
                         env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert ROOT_ENV in out.stderr and "Traceback" not in out.stderr
