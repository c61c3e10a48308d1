"""The files commands read and write: input arrays (`reference`, `run`, `bench`) and output
paths, each with one-line errors that name the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tinyhost.errors import InputDataError
from tinyhost.ir import Graph


def load_array(spec: str) -> np.ndarray:
    """One input array: `X.npy`, `X.npz` holding one array, or `X.npz:KEY` (as --calib takes).

    NaN and infinite values are refused, as in calibration data: no device computes them."""
    text, key = spec, None
    if ".npz:" in spec:
        text, key = spec.rsplit(":", 1)
    p = Path(text)
    if p.is_dir():
        raise InputDataError(
            f"{text}: a folder; --input takes one array file per model input (X.npy, X.npz or "
            "X.npz:KEY), with a leading sample axis to run several samples"
        )
    if not p.is_file():
        raise InputDataError(f"{text}: no such file")
    try:
        loaded = np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise InputDataError(f"{text}: not a readable .npy/.npz array ({e})") from None
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            keys = list(loaded.files)
            if key is None and len(keys) != 1:
                raise InputDataError(
                    f"{text}: holds {len(keys)} arrays ({', '.join(keys) or 'none'}): pick one "
                    f"with {text}:KEY"
                )
            key = keys[0] if key is None else key
            if key not in keys:
                raise InputDataError(f"{text}: no array '{key}' (keys: {', '.join(keys)})")
            array = loaded[key]
            where = f"{text}:{key}"
    else:
        if key is not None:
            raise InputDataError(f"{spec}: only a .npz file has keys")
        array, where = loaded, text
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        bad = np.argwhere(~np.isfinite(array))[0].tolist()
        raise InputDataError(f"{where}: holds NaN or infinite values (first at index {bad})")
    if array.dtype.kind not in "biuf":
        raise InputDataError(f"{where}: dtype {array.dtype} is not numeric")
    return array


def output_path(path: str, what: str = "output", *, directory: bool = False) -> Path:
    """Where a command will write `what`: the parent folder must exist, and a file must not
    be a folder (or a folder a file), so nothing fails half-way with a traceback."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputDataError(f"{path}: cannot write the {what}: folder {parent} does not exist")
    if directory and p.exists() and not p.is_dir():
        raise InputDataError(f"{path}: cannot write the {what} there: it is a file, not a folder")
    if not directory and p.is_dir():
        raise InputDataError(f"{path}: cannot write the {what} there: it is a folder")
    return p


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
