"""Every benchmark script starts from the command line as its docstring says (`python
bench/X.py --help`): an import that only works from the test tree, or a script shadowing a
package it imports, fails here instead of in a user's shell. (They measure, so no numbers are
checked: tests never time anything.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if '__name__ == "__main__"' in p.read_text())


def test_the_scripts_are_found() -> None:
    names = {p.name for p in SCRIPTS}
    assert {"kernels.py", "mlperf.py", "plan.py"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_starts(script: Path) -> None:
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                          text=True, timeout=120, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
