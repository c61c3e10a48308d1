"""Which ops the device runs: one answer for inspect, plan, convert, run and bench.

The lowering decides (ARCHITECTURE.md §4.9): an op runs on a backend when it lowers to a kernel
call that backend has. Every command asks here, so they list the same ops for the same model.
"""

from __future__ import annotations

from tinyhost.codegen.interpreter_abi import adapter_for, available_adapters
from tinyhost.codegen.lower import LoweringProblem, lower_op, unsupported_message
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph
from tinyhost.passes.validate import check_graph


def device_problems(graph: Graph, backend: str = "interpreter") -> list[LoweringProblem]:
    """Every op of `graph` the backend cannot run, with the reason, in op order."""
    available = available_adapters() if backend == "interpreter" else None
    problems = []
    for index, op in enumerate(graph.ops):
        result = lower_op(graph, index)
        if isinstance(result, LoweringProblem):
            problems.append(result)
        elif available is not None and adapter_for(result).name not in available:
            missing = ", ".join(adapter_for(result).needs)
            problems.append(LoweringProblem(
                index, op.name, f"op {index} ({op.name}): its kernel ({missing}) is not in "
                "kernels_c"))  # fmt: skip
    return problems


def require_device_support(graph: Graph, backend: str = "interpreter") -> None:
    """UnsupportedModelError listing every op the backend cannot run (nothing if all run);
    ModelFormatError first if the graph is inconsistent (validated before anything uses it)."""
    check_graph(graph)
    problems = device_problems(graph, backend)
    if problems:
        raise UnsupportedModelError(unsupported_message(graph, problems, backend))


def stack_cmake(stack_bytes: int | None) -> str:
    """model.cmake lines that size the firmware's stack (plan/stack.py), or none (no derived
    figure: the linker script's default)."""
    if stack_bytes is None:
        return ""
    return f"""# The stack this model's firmware needs: the static bound of the kernels it calls
# (plan/stack.py). A -DTH_STACK_BYTES=<bytes> on the cmake command line wins.
if(NOT TH_STACK_BYTES)
  set(TH_STACK_BYTES {stack_bytes})
endif()
"""
