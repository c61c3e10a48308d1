"""Figures from outputs: classification and regression metrics, int8-vs-float error.

Tensor errors follow `stedgeai validate`: RMSE, MAE, L2 relative error ||a - b|| / ||b||,
cosine similarity and SNR 10 log10(||b||^2 / ||a - b||^2) of the dequantized int8 tensor `a`
against the float model's `b`. They are kept as sums (`ErrorSums`) so that samples logged
one by one, by several processes or across a resumed run, add up to the same figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ErrorSums:
    n: int = 0
    sse: float = 0.0  # sum (a - b)^2
    sae: float = 0.0  # sum |a - b|
    saa: float = 0.0  # sum a^2
    sbb: float = 0.0  # sum b^2
    sab: float = 0.0  # sum a b

    @staticmethod
    def of(a: np.ndarray, b: np.ndarray) -> ErrorSums:
        a64 = np.asarray(a, dtype=np.float64).reshape(-1)
        b64 = np.asarray(b, dtype=np.float64).reshape(-1)
        d = a64 - b64
        return ErrorSums(int(a64.size), float(d @ d), float(np.abs(d).sum()), float(a64 @ a64),
                         float(b64 @ b64), float(a64 @ b64))  # fmt: skip

    def __add__(self, o: ErrorSums) -> ErrorSums:
        return ErrorSums(self.n + o.n, self.sse + o.sse, self.sae + o.sae, self.saa + o.saa,
                         self.sbb + o.sbb, self.sab + o.sab)  # fmt: skip

    def to_list(self) -> list[float]:
        return [self.n, self.sse, self.sae, self.saa, self.sbb, self.sab]

    @staticmethod
    def from_list(v: list[float]) -> ErrorSums:
        return ErrorSums(int(v[0]), *(float(x) for x in v[1:]))

    def figures(self) -> dict[str, float | None]:
        if self.n == 0:
            return {"rmse": None, "mae": None, "l2r": None, "cos": None, "snr_db": None}
        denom = math.sqrt(self.saa * self.sbb)
        return {
            "rmse": math.sqrt(self.sse / self.n),
            "mae": self.sae / self.n,
            "l2r": math.sqrt(self.sse / self.sbb) if self.sbb > 0 else None,
            "cos": self.sab / denom if denom > 0 else None,
            "snr_db": 10 * math.log10(self.sbb / self.sse) if self.sse > 0 and self.sbb > 0
            else None,
        }  # fmt: skip


def confusion_matrix(labels: np.ndarray, predictions: np.ndarray, n_classes: int) -> np.ndarray:
    """Rows: true class, columns: predicted class."""
    m = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(m, (labels, predictions), 1)
    return m


def classification(labels: np.ndarray, scores: np.ndarray) -> dict:
    """Top-1/top-5 accuracy, per-class precision/recall/F1, confusion matrix.

    `scores` is (N, classes); ties in top-1 go to the lowest index, as np.argmax does.
    """
    n_classes = scores.shape[1]
    labels = labels.astype(np.int64)
    pred = np.argmax(scores, axis=1)
    k = min(5, n_classes)
    # Stable sort on -score: ties keep the lower index first, consistent with argmax.
    topk = np.argsort(-scores.astype(np.float64), axis=1, kind="stable")[:, :k]
    cm = confusion_matrix(labels, pred, n_classes)
    per_class = []
    for c in range(n_classes):
        tp = int(cm[c, c])
        predicted, actual = int(cm[:, c].sum()), int(cm[c, :].sum())
        p = tp / predicted if predicted else 0.0
        r = tp / actual if actual else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        per_class.append({"class": c, "precision": p, "recall": r, "f1": f1, "support": actual})
    return {
        "top1": float(np.mean(pred == labels)),
        "top5": float(np.mean(np.any(topk == labels[:, None], axis=1))),
        "correct": int(np.sum(pred == labels)),
        "samples": int(len(labels)),
        "per_class": per_class,
        "confusion": cm.tolist(),
    }


def regression(targets: np.ndarray, values: np.ndarray) -> dict:
    d = values.astype(np.float64).reshape(len(values), -1) - targets.astype(np.float64).reshape(
        len(targets), -1)
    return {"mae": float(np.mean(np.abs(d))), "rmse": float(np.sqrt(np.mean(d * d))),
            "samples": int(len(targets))}  # fmt: skip


def dequantize(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    return (x.astype(np.float64) - zero_point) * scale
