"""Code generation: lowering to kernel calls, scratch grants, and the backends that turn them
into a model directory (the interpreter's blob, or compiled C). ARCHITECTURE.md §4.4, §4.4b."""

from __future__ import annotations

from typing import Any

__all__ = ["BACKENDS", "Backend", "ConvertResult", "get_backend"]


def __getattr__(name: str) -> Any:
    # Resolved on first use, not at package import: importing the backends here would load
    # every codegen module before `python -m tinyhost.codegen.interpreter_abi --write` runs
    # that module as __main__ (runpy warns of a second copy).
    if name in ("BACKENDS", "Backend", "get_backend"):
        from tinyhost.codegen import backends

        return getattr(backends, name)
    if name == "ConvertResult":
        from tinyhost.codegen.result import ConvertResult

        return ConvertResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
