"""Backends: what `convert` can make of an int8 graph for a board, by name.

Every backend returns the same `ConvertResult`, which is all that `build`, `run`, `bench` and
`flash` need: the runner never looks inside a backend's own artefacts (a blob, generated C).
Adding a backend means adding an entry to `BACKENDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tinyhost.codegen import compiled, interpreter
from tinyhost.codegen.result import ConvertResult
from tinyhost.errors import TinyhostError
from tinyhost.plan.budget import Budget


@dataclass(frozen=True)
class Backend:
    name: str
    summary: str  # one line for --help
    convert: Callable[..., ConvertResult]  # (graph, board, out_dir, **options)
    fit: Callable[..., Budget]  # (graph, board, **options): convert's figures, nothing written


BACKENDS: dict[str, Backend] = {
    "interpreter": Backend(
        "interpreter",
        "model blob + C interpreter (LOAD_MODEL can swap the model without a rebuild)",
        interpreter.convert,
        interpreter.fit,
    ),
    "compiled": Backend(
        "compiled",
        "generated C, one function per op, no interpreter (the model is compiled in)",
        compiled.convert,
        compiled.fit,
    ),
}


def backend_names() -> tuple[str, ...]:
    return tuple(BACKENDS)


def get_backend(name: str) -> Backend:
    try:
        return BACKENDS[name]
    except KeyError:
        raise TinyhostError(
            f"backend {name!r} is not available; choose from {', '.join(BACKENDS)}"
        ) from None


def backends_help() -> str:
    return "; ".join(f"{b.name}: {b.summary}" for b in BACKENDS.values())
