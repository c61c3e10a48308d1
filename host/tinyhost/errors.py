"""The one exception type tinyhost raises for bad input, and its subclasses.

Every message names what is wrong and where (file, op index, tensor, byte offset),
so the CLI can print it as a single line and exit non-zero without a traceback.
"""

from __future__ import annotations


class TinyhostError(Exception):
    """Base of every error caused by the user's input rather than a bug in tinyhost."""


class ModelFormatError(TinyhostError):
    """The file is not a readable .tflite model (truncated, corrupt, wrong format)."""


class UnsupportedModelError(TinyhostError):
    """The model is well formed but uses ops or types tinyhost cannot execute."""


class InputDataError(TinyhostError):
    """An input, calibration or data file is missing or has the wrong shape or dtype."""


class DeployError(TinyhostError):
    """A board, build, emulator or flashing step failed; the message says why and what to do."""
