"""NumPy reference executor: TFLite Micro's int8 arithmetic and float32 (ARCHITECTURE.md §4.1)."""

from tinyhost.reference.executor import (
    RunResult,
    State,
    check_executable,
    initial_state,
    prepare_inputs,
    random_inputs,
    run,
)

__all__ = ["RunResult", "State", "check_executable", "initial_state", "prepare_inputs",
           "random_inputs", "run"]
