"""Labelled data sets for `tinyhost eval`: .npy/.npz arrays, an image folder, a CSV.

Every loader returns float32 (or the model input's own dtype) samples shaped like the model's
input without its batch axis, the labels (or None) and a line saying what preprocessing was
applied, which the results keep.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinyhost.errors import InputDataError
from tinyhost.ir import Tensor

X_KEYS = ("X_test", "x_test", "test_x", "X", "x", "inputs", "data")
Y_KEYS = ("y_test", "Y_test", "test_y", "y", "Y", "labels", "targets")
LABEL_COLUMNS = ("label", "target", "y", "class")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".pgm", ".ppm", ".tif", ".tiff")


@dataclass(frozen=True)
class Dataset:
    x: np.ndarray  # (N, *input shape without batch)
    y: np.ndarray | None  # (N,) class indices or (N, ...) regression targets
    source: str
    preprocessing: str
    class_names: list[str] | None = None


def _pick(arrays: dict[str, np.ndarray], keys: tuple[str, ...], path: Path, what: str) -> str:
    for k in keys:
        if k in arrays:
            return k
    raise InputDataError(f"{path}: no {what} array (looked for {', '.join(keys)}; "
                         f"found {', '.join(arrays) or 'none'})")  # fmt: skip


def _load_arrays(path: Path) -> tuple[np.ndarray, np.ndarray | None]:
    try:
        loaded = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise InputDataError(f"{path}: not a readable .npy/.npz file ({e})") from None
    if isinstance(loaded, np.ndarray):
        return loaded, None
    arrays = {k: loaded[k] for k in loaded.files}
    x = arrays[_pick(arrays, X_KEYS, path, "input")]
    y_key = next((k for k in Y_KEYS if k in arrays), None)
    return x, (arrays[y_key] if y_key else None)


def _fit_shape(x: np.ndarray, sample_shape: tuple[int, ...], path: Path) -> np.ndarray:
    if x.shape[1:] == sample_shape:
        return x
    if x.ndim == len(sample_shape) + 2 and x.shape[1] == 1 and x.shape[2:] == sample_shape:
        return x[:, 0]  # samples saved with their batch axis
    if x.ndim >= 1 and int(np.prod(x.shape[1:])) == int(np.prod(sample_shape)):
        return x.reshape((x.shape[0], *sample_shape))
    raise InputDataError(f"{path}: samples are {list(x.shape[1:])}, the model input is "
                         f"{list(sample_shape)}")  # fmt: skip


def load_images(folder: Path, tensor: Tensor) -> Dataset:
    """One subfolder per class (sorted names = class indices); images resized to the input.

    Pixels are scaled to [0, 1] floats, then quantized by the input's own parameters when it
    is int8 (prepare_inputs does that): the preprocessing line says so.
    """
    from PIL import Image

    shape = tuple(tensor.shape[1:])
    if len(shape) != 3 or shape[2] not in (1, 3):
        raise InputDataError(f"{folder}: an image folder needs an (H, W, 1|3) input, the model "
                             f"input is {list(tensor.shape)}")  # fmt: skip
    h, w, c = shape
    classes = sorted(p.name for p in folder.iterdir() if p.is_dir())
    if not classes:
        raise InputDataError(f"{folder}: no class subfolders")
    xs, ys = [], []
    for k, name in enumerate(classes):
        for f in sorted((folder / name).iterdir()):
            if f.suffix.lower() not in IMAGE_SUFFIXES:
                continue
            try:
                with Image.open(f) as im:
                    im = im.convert("L" if c == 1 else "RGB").resize((w, h), Image.BILINEAR)
                    a = np.asarray(im, dtype=np.float32) / 255.0
            except OSError as e:
                raise InputDataError(f"{f}: not a readable image ({e})") from None
            xs.append(a.reshape(shape))
            ys.append(k)
    if not xs:
        raise InputDataError(f"{folder}: no images in the class subfolders")
    mode = "grayscale" if c == 1 else "RGB"
    pre = (f"images decoded with Pillow, {mode}, resized to {w}x{h} (bilinear), "
           f"pixels / 255 -> [0, 1]")  # fmt: skip
    if tensor.quant is not None and tensor.dtype == np.int8:
        pre += (f", quantized with the input's scale {float(tensor.quant.scale[0]):g} and zero "
                f"point {int(tensor.quant.zero_point[0])}")  # fmt: skip
    return Dataset(np.stack(xs), np.array(ys, dtype=np.int64), str(folder), pre, classes)


def load_csv(path: Path, sample_shape: tuple[int, ...]) -> Dataset:
    """Numeric rows; a header column named label/target/y holds the labels."""
    try:
        with path.open(newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise InputDataError(f"{path}: {e}") from None
    header: list[str] | None = None
    if rows and any(not _is_number(v) for v in rows[0]):
        header, rows = rows[0], rows[1:]
    label_col = None
    if header is not None:
        names = [h.strip().lower() for h in header]
        label_col = next((i for i, h in enumerate(names) if h in LABEL_COLUMNS), None)
    xs, ys = [], []
    for n, row in enumerate(rows, start=2 if header else 1):
        try:
            values = [float(v) for v in row]
        except ValueError:
            raise InputDataError(f"{path}: line {n}: not a number in {row}") from None
        if label_col is not None:
            ys.append(values.pop(label_col))
        xs.append(values)
    x = _fit_shape(np.array(xs, dtype=np.float32), sample_shape, path)
    y = None
    if ys:
        y_arr = np.array(ys)
        y = y_arr.astype(np.int64) if np.all(y_arr == np.round(y_arr)) else y_arr
    return Dataset(x, y, str(path), "CSV rows as float32")


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def load_dataset(data: str, labels: str | None, tensor: Tensor) -> Dataset:
    """The set behind --data (and --labels, a .npy of labels that overrides the data's)."""
    path = Path(data)
    sample_shape = tuple(tensor.shape[1:])
    if path.is_dir():
        ds = load_images(path, tensor)
    elif not path.is_file():
        raise InputDataError(f"{data}: no such file or folder")
    elif path.suffix.lower() == ".csv":
        ds = load_csv(path, sample_shape)
    else:
        x, y = _load_arrays(path)
        x = _fit_shape(x, sample_shape, path)
        ds = Dataset(x, y, str(path), "arrays as stored (float inputs quantized with the "
                                      "input's scale and zero point)")  # fmt: skip
    if labels is not None:
        lp = Path(labels)
        if not lp.is_file():
            raise InputDataError(f"{labels}: no such file")
        y, _ = _load_arrays(lp) if lp.suffix.lower() != ".csv" else (None, None)
        if y is None:
            raise InputDataError(f"{labels}: expected a .npy array of labels")
        ds = Dataset(ds.x, y, ds.source, ds.preprocessing, ds.class_names)
    if ds.y is not None and len(ds.y) != len(ds.x):
        raise InputDataError(f"{labels or data}: {len(ds.y)} labels for {len(ds.x)} samples")
    one_hot = ds.y is not None and ds.y.ndim == 2 and ds.y.shape[1] > 1
    if one_hot and ds.y is not None and np.all((ds.y == 0) | (ds.y == 1)):
        ds = Dataset(ds.x, np.argmax(ds.y, axis=1), ds.source, ds.preprocessing, ds.class_names)
    return ds
