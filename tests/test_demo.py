"""`tinyhost demo` (what `make demo` runs): reference accuracies, then the int8 model on the
default QEMU board with every output bit-exact with the reference."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tinyhost.cli import main

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed",
)


@pytest.mark.usefixtures("demo_tree")
def test_demo_runs_on_qemu_bit_exact(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    ref = re.search(r"int8 \(tinyhost\)\s+([\d.]+)%", out)
    dev = re.search(r"on mps2-an386 .*\n\s+top-1 ([\d.]+)% over (\d+) images; outputs bit-exact "
                    r"with the reference: (\d+)/(\d+)", out)  # fmt: skip
    assert ref and dev, out
    n = int(dev.group(2))
    assert n == int(dev.group(4)) == 300
    assert int(dev.group(3)) == n, out
    # the device's accuracy is the reference's: same int8 model, same arithmetic
    assert dev.group(1) == ref.group(1)
    # `make demo` ends with the digits report's path; the report holds the device's accuracy.
    report = re.search(r"\nreport: (\S+\.html)$", out.rstrip())
    assert report, out
    html = Path(report.group(1)).read_text()
    assert f"{dev.group(1)}%" in html and "300/300 samples bit-exact" in html
    float_top1 = float(re.search(r"float32\s+([\d.]+)%", out).group(1))  # type: ignore[union-attr]
    assert float(ref.group(1)) >= float_top1 - 0.5
    assert re.search(r"latency: [\d,]+ instructions per inference", out), out
    scores = r"image 0 \(label \d\): output int8\[1, 10\] = \[(-?\d+, ){9}-?\d+\]"
    assert re.search(scores, out), out


@pytest.mark.usefixtures("demo_tree")
def test_demo_with_the_compiled_backend(capsys: pytest.CaptureFixture[str]) -> None:
    """`tinyhost demo --backend compiled`: the same 300 images, bit-exact, no interpreter."""
    assert main(["demo", "--backend", "compiled"]) == 0
    out = capsys.readouterr().out
    dev = re.search(r"on mps2-an386 \(compiled backend.*\n\s+top-1 ([\d.]+)% over 300 images; "
                    r"outputs bit-exact with the reference: 300/300", out)  # fmt: skip
    ref = re.search(r"int8 \(tinyhost\)\s+([\d.]+)%", out)
    assert dev and ref and dev.group(1) == ref.group(1), out
