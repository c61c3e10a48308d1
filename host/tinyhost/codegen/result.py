"""What every backend's `convert` returns: a converted model directory, backend-neutral."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tinyhost.plan import MemoryPlan
from tinyhost.plan.budget import Budget


@dataclass(frozen=True)
class ConvertResult:
    """A converted model directory, described for the stages after it."""

    backend: str
    board: str
    out_dir: Path
    model_name: str
    arena_bytes: int  # the firmware's static arena
    plan: MemoryPlan
    op_order: tuple[int, ...]  # graph op indices in execution order (the per-op profile's)
    op_names: tuple[str, ...]  # the ops' kinds, execution order
    linked: tuple[str, ...]  # what the firmware links: interpreter adapters, kernel functions
    model_flash_bytes: int  # model data in flash (weights, biases, tables, descriptions)
    model_hash: int  # what the device reports in INFO for this model
    load_image: bytes | None  # what LOAD_MODEL takes to install this model; None: cannot
    load_capacity: int  # LOAD_MODEL receive buffer of the firmware (0: refused)
    budget: Budget  # the fit on the board (plan.budget: the same figures everywhere)
    data_symbols: tuple[str, ...] = ()  # constant arrays of model data in generated code
    # MACs of each executed op where they differ from its source op's (a patched stage's
    # bands compute part of an op each); None: the source ops'
    op_macs: tuple[int, ...] | None = None
    notes: tuple[str, ...] = ()  # what the conversion chose that the user should hear of
