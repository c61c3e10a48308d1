"""atheris target: the .tflite reader, the validation pass and `inspect` on arbitrary bytes.

    python bench/fuzz/fuzz_reader.py bench/fuzz/corpus/reader [-runs=N | -max_total_time=S]

Any exception other than tinyhost's own errors (one line for the user) is a crash.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from tinyhost.errors import TinyhostError
    from tinyhost.passes.validate import check_graph
    from tinyhost.report.inspect import inspect_graph
    from tinyhost.tflite import read_model_bytes


def test_one_input(data: bytes) -> None:
    try:
        graph = read_model_bytes(data, "fuzz.tflite")
        check_graph(graph)
        inspect_graph(graph, "interpreter")
    except TinyhostError:
        pass


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
