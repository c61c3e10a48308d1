"""Fixtures shared by the test files; plain helpers live in paths.py."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from pathlib import Path

import pytest

from paths import SKIP_NO_SHARED, find_shared_dir

# The files that take longest (firmware builds and emulator runs for every model), started
# first: under pytest-xdist a worker takes whole files in collection order, so a long file
# started last would leave the other worker idle at the end.
LONG_FIRST = ("test_compiled.py", "test_renode_e2e.py", "test_layers_on_device.py",
              "test_qemu_e2e.py", "test_kernels_host.py", "test_kernels_target.py")  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest in order


@pytest.fixture
def shared_dir() -> Path:
    """The shared folder; the test is skipped when it is absent."""
    shared = find_shared_dir()
    if shared is None:
        pytest.skip(SKIP_NO_SHARED)
    return shared


@pytest.fixture(scope="session")
def kernel_fw_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the kernel-test firmware is built (tests/kernels/target.py names each build by
    board and variant): each variant is built once a session and is up to date for every
    later test that asks for it, instead of a from-scratch build per test (~7-30 s each)."""
    return tmp_path_factory.mktemp("kernel-fw")


@pytest.fixture
def demo_tree() -> Iterator[None]:
    """`tinyhost demo` writes one fixed tree (build/demo/: model, sample logs, report) that
    tests in two files read back: under pytest-xdist (make test) they take turns on it."""
    lock_path = Path(__file__).resolve().parents[1] / "build" / "demo.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
