"""Input arrays for the commands that take them (`reference`, `run`, `bench`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tinyhost.errors import InputDataError
from tinyhost.ir import Graph


def load_array(path: str) -> np.ndarray:
    """Load one .npy file, with errors that name it."""
    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"{path}: no such file")
    try:
        return np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise InputDataError(f"{path}: not a readable .npy array ({e})") from None


def split_batches(graph: Graph, arrays: list[np.ndarray]) -> list[list[np.ndarray]]:
    """Inputs with a leading sample axis on a batch-1 model run once per sample."""
    shapes = [graph.tensors[i].shape for i in graph.inputs]
    counts = {
        a.shape[0]
        for a, s in zip(arrays, shapes)
        if len(s) >= 1
        and s[0] == 1
        and a.ndim == len(s)
        and a.shape[1:] == s[1:]
        and a.shape[0] > 1
    }
    if len(counts) != 1 or len(arrays) != len(shapes):
        return [arrays]
    n = counts.pop()
    return [[a[k : k + 1] for a in arrays] for k in range(n)]
