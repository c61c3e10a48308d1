"""A picture of the plan: each buffer a rectangle, x = op step, y = arena offset."""

from __future__ import annotations

from pathlib import Path

from tinyhost.errors import TinyhostError
from tinyhost.plan.planner import MemoryPlan

_FONT_PT = 6
_CHAR_PT = 0.6 * _FONT_PT  # a character's width at that size, about
_LINE_PT = 1.3 * _FONT_PT

# Words TF appends to every layer's tensor name: the layer is the part before them.
_GENERIC = {"Conv2D", "Conv2D1", "BiasAdd", "Relu", "Relu6", "FusedBatchNormV3", "MatMul",
            "ReadVariableOp", "resource", "resource1", "add", "Add", "AvgPool", "Reshape",
            "Softmax", "depthwise", "Mean", "Squeeze", "MaxPool"}  # fmt: skip


def _label(name: str, tensors: tuple[int, ...]) -> str:
    """"t12 conv2d_3": the first tensor's index and its layer's name, not TF's full path."""
    parts = [q for q in name.split(";")[0].split("/") if q and q not in _GENERIC]
    short = parts[-1] if parts else name
    short = short if len(short) <= 16 else short[:15] + "…"
    return f"t{tensors[0]} {short}" if tensors else short


def plot_plan(plan: MemoryPlan, path: str | Path) -> Path:
    """Write the plan as .svg or .png (by the file's extension)."""
    path = Path(path)
    if path.suffix.lower() not in (".svg", ".png"):
        raise TinyhostError(f"{path}: the plot must be a .svg or .png file")
    import matplotlib  # lazily: planning itself needs no plotting library

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    steps = max(len(plan.op_order), 1)
    # wide enough to name every op of a layer-by-layer plan; a patched one (hundreds of band
    # steps) is capped and names every n-th step
    width, height = min(max(6.0, 0.35 * steps + 2), 40.0), 6.0
    every = max(1, -(-steps // 110))
    fig, ax = plt.subplots(figsize=(width, height))
    # the axes span roughly 85% x 70% of the figure: points per op step and per arena byte
    point_per_step = 72 * width * 0.85 / steps
    point_per_byte = 72 * height * 0.7 / (plan.arena_bytes * 1.05 or 1)
    cmap = plt.get_cmap("tab20")
    for k, b in enumerate(plan.buffers):
        scratch = b.kind == "scratch"
        ax.add_patch(
            Rectangle(
                (b.first_op - 0.45, b.offset),
                b.last_op - b.first_op + 0.9,
                b.size,
                facecolor="lightgrey" if scratch else cmap(k % 20),
                edgecolor="black",
                linewidth=0.5,
                hatch="//" if scratch else None,
                alpha=0.85,
            )
        )
        label = "scratch" if scratch else _label(b.name, b.tensors)
        # Where it fits, in points: across the box, else along it (rotated), else no label
        # (the op axis and plan --json name every buffer): 30+ ops stay readable.
        wide = (b.last_op - b.first_op + 0.9) * point_per_step
        high = b.size * point_per_byte
        rotation = 0 if wide >= _CHAR_PT * len(label) and high >= _LINE_PT else (
            90 if high >= _CHAR_PT * len(label) and wide >= _LINE_PT else None)
        if rotation is not None:
            ax.text((b.first_op + b.last_op) / 2, b.offset + b.size / 2, label, ha="center",
                    va="center", fontsize=_FONT_PT, rotation=rotation, clip_on=True)
    ax.axhline(plan.arena_bytes, color="red", linewidth=1)
    ax.axhline(plan.lower_bound_bytes, color="green", linewidth=1, linestyle="--")
    ax.set_xlim(-0.6, steps - 0.4)
    ax.set_ylim(0, plan.arena_bytes * 1.05 or 1)
    ax.set_xticks(range(0, steps, every))
    ax.set_xticklabels(
        [f"{i} {plan.graph.ops[i].name}" for i in plan.op_order[::every]], rotation=90,
        fontsize=6,
    )
    ax.set_ylabel("arena offset (bytes)")
    ax.set_title(
        f"{plan.graph.name or Path(plan.graph.source).name}: arena {plan.arena_bytes:,} B "
        f"(red), lower bound {plan.lower_bound_bytes:,} B (green)",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
