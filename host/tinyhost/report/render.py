"""`tinyhost report`: eval results -> one self-contained HTML file, Markdown, or JSON.

The HTML has inline CSS and inline SVG/PNG only (no script, no CDN, no URL), so it opens
offline and can be attached to a CI run. Templates are jinja2 files shipped as package data.
"""

from __future__ import annotations

import base64
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tinyhost.errors import InputDataError
from tinyhost.report import plots

TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class Row:
    """One line of the comparison table."""

    model: str
    board: str
    backend: str
    top1: float | None
    agreement: float | None
    latency: float | None
    unit: str
    ms: float | None
    arena: int | None
    ram: int | None
    flash_code: int | None
    flash_model: int | None
    cycles_est: float | None = None  # Cortex-M4/M7 cycles, estimated (deploy/cycles.py)


def load_results(paths: list[str]) -> list[dict]:
    out = []
    for p in paths:
        try:
            r = json.loads(Path(p).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise InputDataError(f"{p}: not a readable results file ({e})") from None
        if not isinstance(r, dict) or "model" not in r or "board" not in r:
            raise InputDataError(f"{p}: not tinyhost eval results (no model/board keys)")
        out.append(r)
    return out


def comparison_rows(results: list[dict]) -> list[Row]:
    rows = []
    for r in results:
        acc = r.get("accuracy", {}).get("device", {})
        lat = r.get("latency", {})
        agree = r.get("agreement", {}).get("device_vs_reference", {})
        rows.append(Row(r["model"], r["board"], r.get("backend", "interpreter"), acc.get("top1"),
                        agree.get("percent"), lat.get("median"), lat.get("unit", ""),
                        lat.get("ms_at_clock"), r.get("arena_bytes"), r.get("ram_bytes"),
                        r.get("flash_code_bytes"), r.get("blob_bytes"),
                        lat.get("cycles_estimate", {}).get("median")))  # fmt: skip
    return rows


def plan_png(model_path: str | None) -> str | None:
    """The planner's picture of the model's arena as a data: URI, when the model is at hand."""
    if not model_path or not Path(model_path).is_file():
        return None
    from tinyhost.plan.planner import plan_memory
    from tinyhost.plan.plot import plot_plan
    from tinyhost.tflite import read_model

    plan = plan_memory(read_model(model_path))
    with tempfile.TemporaryDirectory(prefix="th-report-") as tmp:
        png = plot_plan(plan, Path(tmp) / "plan.png").read_bytes()
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _sections(r: dict, k: int) -> dict:
    """Per-result pictures and tables for the templates."""
    acc = r.get("accuracy", {}).get("device")
    lat = r.get("latency")
    info = r.get("model_info", {})
    out: dict = {"r": r, "k": k}
    if lat and lat.get("per_op_median"):
        names = [f"{i}: {n}" for i, n in enumerate(r.get("ops", []))]
        out["latency_svg"] = plots.hbars(names, lat["per_op_median"], lat["unit"],
                                         plot_id=f"plot-latency-{k}")  # fmt: skip
    if r.get("layer_errors"):
        le = r["layer_errors"]
        out["error_svg"] = plots.hbars([f"{e['op']} {e['tensor']}" for e in le],
                                       [e["snr_db"] for e in le], "dB SNR",
                                       plot_id=f"plot-layer-error-{k}", color=plots.PALETTE[1],
                                       fmt=".1f")  # fmt: skip
    if acc and "confusion" in acc:
        n = len(acc["confusion"])
        names = r.get("data", {}).get("classes") or [str(c) for c in range(n)]
        out["confusion_svg"] = plots.confusion(acc["confusion"], names,
                                               plot_id=f"plot-confusion-{k}")  # fmt: skip
        out["class_names"] = names
    out["plan_png"] = plan_png(r.get("model_path"))
    out["model_ops"] = info.get("ops", [])
    return out


def _env():
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=jinja2.select_autoescape(["html"]),
                             trim_blocks=True, lstrip_blocks=True)  # fmt: skip
    env.filters["num"] = lambda v, f=",.0f": "n/a" if v is None else format(v, f)
    env.filters["pct"] = lambda v: "n/a" if v is None else f"{100 * v:.2f}%"
    return env


def render(results: list[dict], fmt: str, baseline: int = 0) -> str:
    """The report as "html", "md" or "json" text."""
    if fmt == "json":
        rows = [r.__dict__ for r in comparison_rows(results)]
        return json.dumps({"results": results, "comparison": rows}, indent=1) + "\n"
    rows = comparison_rows(results)
    base = rows[baseline] if rows else None
    ctx = {
        "results": [_sections(r, k) for k, r in enumerate(results)] if fmt == "html"
        else [{"r": r, "k": k} for k, r in enumerate(results)],
        "rows": rows,
        "base": base,
        "title": " vs ".join(dict.fromkeys(f"{r['model']} on {r['board']}" for r in results)),
    }  # fmt: skip
    name = "report.html.j2" if fmt == "html" else "report.md.j2"
    return _env().get_template(name).render(**ctx)


def write_report(results: list[dict], path: Path, baseline: int = 0) -> Path:
    suffix = path.suffix.lower()
    fmt = {".html": "html", ".htm": "html", ".md": "md", ".json": "json"}.get(suffix)
    if fmt is None:
        raise InputDataError(f"{path}: the report must be .html, .md or .json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(results, fmt, baseline))
    return path
