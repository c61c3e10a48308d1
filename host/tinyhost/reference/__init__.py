"""NumPy reference executor: TFLite Micro's int8 arithmetic and float32 (ARCHITECTURE.md §4.1)."""

from tinyhost.reference.executor import (
    RunResult,
    check_executable,
    prepare_inputs,
    random_inputs,
    run,
)

__all__ = ["RunResult", "check_executable", "prepare_inputs", "random_inputs", "run"]
