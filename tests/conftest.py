"""Fixtures shared by the test files; plain helpers live in paths.py."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from pathlib import Path

import pytest

from paths import SKIP_NO_SHARED, find_shared_dir


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
