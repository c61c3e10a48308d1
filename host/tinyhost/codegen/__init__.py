"""Code generation: the interpreter's model blob (and, later, compiled C) from an int8 graph."""

from tinyhost.codegen.blob import Blob, BlobTarget, build_blob

__all__ = ["Blob", "BlobTarget", "build_blob"]
