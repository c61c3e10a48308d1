"""Code generation: lowering to kernel calls, scratch grants, and the backends that turn them
into a model directory (the interpreter's blob; compiled C next). ARCHITECTURE.md §4.4."""

from tinyhost.codegen.backends import BACKENDS, Backend, get_backend
from tinyhost.codegen.result import ConvertResult

__all__ = ["BACKENDS", "Backend", "ConvertResult", "get_backend"]
