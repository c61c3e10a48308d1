"""The int8 arithmetic contract (ARCHITECTURE.md §4.1), shared by reference and code generators.

`fixedpoint` holds the integer primitives; the other modules derive each op's integer
parameters from the IR exactly as TFLite Micro's Prepare functions do, so the NumPy
reference and the generated C use the very same numbers.
"""
