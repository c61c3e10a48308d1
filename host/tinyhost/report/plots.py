"""Inline SVG pictures for the report: horizontal bars and the confusion matrix.

Hand-written SVG strings (no plotting library, no fonts to embed; no namespace URL either:
HTML5 inlines SVG without one). Each function is pure and returns one <svg> element sized for
its content, with a <title> per mark for hover values.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

PALETTE = ("#2563eb", "#0d9488", "#d97706", "#db2777", "#7c3aed", "#65a30d")


def hbars(labels: Sequence[str], values: Sequence[float], unit: str, *, plot_id: str,
          color: str = PALETTE[0], fmt: str = ",.0f") -> str:  # fmt: skip
    """One bar per label, longest = full width; the value printed after the bar."""
    row, label_w, bar_w, right = 22, 230, 420, 140
    width, height = label_w + bar_w + right, row * len(labels) + 10
    top = max((v for v in values if v is not None), default=0) or 1
    parts = [f'<svg class="plot" id="{plot_id}" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img">']  # fmt: skip
    for k, (label, v) in enumerate(zip(labels, values)):
        y = 5 + k * row
        w = 0 if v is None else max(1.0, bar_w * v / top)
        text = "n/a" if v is None else format(v, fmt)
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end" class="lbl">'
            f"{escape(label[:30])}</text>"
            f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row - 7}" rx="3" '
            f'fill="{color}"><title>{escape(label)}: {text} {escape(unit)}</title></rect>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + 15}" class="val">{text} '
            f"{escape(unit)}</text>"
        )  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def confusion(matrix: Sequence[Sequence[int]], names: Sequence[str], *, plot_id: str) -> str:
    """Heat map, rows true class, columns predicted; diagonal blue, errors orange."""
    n = len(matrix)
    cell = max(18, min(44, 440 // max(n, 1)))
    margin = 90
    size = margin + cell * n + 10
    row_sums = [sum(r) or 1 for r in matrix]
    parts = [f'<svg class="plot" id="{plot_id}" width="{size}" height="{size}" '
             f'viewBox="0 0 {size} {size}" role="img">',
             f'<text x="{margin + cell * n / 2}" y="14" text-anchor="middle" class="axis">'
             "predicted</text>",
             f'<text x="14" y="{margin + cell * n / 2}" text-anchor="middle" class="axis" '
             f'transform="rotate(-90 14 {margin + cell * n / 2})">true</text>']  # fmt: skip
    for i, r in enumerate(matrix):
        name = escape(str(names[i])[:10])
        parts.append(f'<text x="{margin - 6}" y="{margin + i * cell + cell / 2 + 4}" '
                     f'text-anchor="end" class="lbl">{name}</text>'
                     f'<text x="{margin + i * cell + cell / 2}" y="{margin - 8}" '
                     f'text-anchor="middle" class="lbl">{name}</text>')  # fmt: skip
        for j, v in enumerate(r):
            frac = v / row_sums[i]
            base = (37, 99, 235) if i == j else (217, 119, 6)
            alpha = 0.08 + 0.92 * frac if v else 0.0
            fill = f"rgba({base[0]},{base[1]},{base[2]},{alpha:.3f})"
            ink = "#fff" if frac > 0.55 else "#1f2937"
            x, y = margin + j * cell, margin + i * cell
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell - 1}" height="{cell - 1}" fill="{fill}" '
                f'stroke="#e5e7eb"><title>true {name}, predicted {escape(str(names[j]))}: '
                f"{v}</title></rect>"
                + (f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" text-anchor="middle" '
                   f'class="cell" fill="{ink}">{v}</text>' if v else "")
            )  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)
