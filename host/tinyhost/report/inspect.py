"""`tinyhost inspect`: what a model contains, as a JSON-ready dict and as a text table."""

from __future__ import annotations

from typing import Any

from tinyhost.ir import Graph, Op, OpKind, Tensor
from tinyhost.ir.stats import graph_stats, op_macs


def _quant_summary(tensor: Tensor) -> dict[str, Any] | None:
    q = tensor.quant
    if q is None:
        return None
    if q.per_channel:
        return {
            "per_channel": True,
            "axis": q.axis,
            "channels": int(q.scale.size),
            "scale_min": float(q.scale.min()),
            "scale_max": float(q.scale.max()),
            "zero_point": sorted({int(z) for z in q.zero_point}),
        }
    return {"per_channel": False, "scale": float(q.scale[0]), "zero_point": int(q.zero_point[0])}


def _tensor_summary(graph: Graph, index: int) -> dict[str, Any]:
    t = graph.tensors[index]
    return {
        "index": index,
        "name": t.name,
        "shape": list(t.shape),
        "dtype": str(t.dtype),
        "constant": t.is_constant,
        "quantization": _quant_summary(t),
    }


def _op_summary(graph: Graph, index: int, op: Op, runs: dict[str, bool | None]
                ) -> dict[str, Any]:
    return {
        "index": index,
        "kind": op.name,
        "supported": op.kind is not OpKind.UNSUPPORTED,
        "runs": runs,
        "macs": op_macs(graph, op) if op.kind is not OpKind.UNSUPPORTED else 0,
        "inputs": [_tensor_summary(graph, i) for i in op.inputs if i is not None],
        "outputs": [_tensor_summary(graph, i) for i in op.outputs],
    }


def _device_summary(graph: Graph, backend: str) -> dict[str, Any]:
    """Which ops the reference runs but the device does not (codegen.support decides)."""
    from tinyhost.codegen.support import device_problems
    from tinyhost.quantize.quantizer import is_float_model

    if backend == "reference":
        return {"backend": backend, "checked": True, "not_on_device": []}
    if is_float_model(graph):
        return {"backend": backend, "checked": False,
                "note": "float model: convert quantizes it first (--calib); the device runs "
                        "the int8 model, so support is checked on that",
                "not_on_device": []}  # fmt: skip
    from tinyhost.errors import TinyhostError
    from tinyhost.passes.validate import check_graph

    reader_unsupported = {i for i, _ in graph.unsupported_ops()}
    try:
        check_graph(graph)  # the lowering takes validated graphs only
    except TinyhostError as e:
        return {"backend": backend, "checked": False, "note": f"not checked: {e}",
                "not_on_device": []}  # fmt: skip
    problems = [p for p in device_problems(graph, backend) if p.op not in reader_unsupported]
    return {"backend": backend, "checked": True,
            "not_on_device": [{"index": p.op, "kind": p.kind, "reason": p.reason}
                              for p in problems]}  # fmt: skip


RUNNERS = ("reference", "interpreter", "compiled")


def _runs_per_op(graph: Graph, devices: dict[str, dict[str, Any]]) -> list[dict[str, bool | None]]:
    """Per op and runner: True / False, or None where the device support was not checked (a
    float model, whose int8 twin is what the device runs)."""
    from tinyhost.reference.ops import KERNELS

    table = []
    for index, op in enumerate(graph.ops):
        on_reference = op.kind in KERNELS
        runs: dict[str, bool | None] = {"reference": on_reference}
        for name, device in devices.items():
            refused = {p["index"] for p in device["not_on_device"]}
            runs[name] = (None if not device["checked"]
                          else on_reference and index not in refused)  # fmt: skip
        table.append(runs)
    return table


def inspect_graph(graph: Graph, backend: str = "interpreter") -> dict[str, Any]:
    """`backend`'s device support is the summary's "device"; every op also says which of the
    reference, the interpreter and the compiled backend run it ("runs")."""
    stats = graph_stats(graph)
    devices = {name: _device_summary(graph, name) for name in RUNNERS[1:]}
    runs = _runs_per_op(graph, devices)
    return {
        "model": graph.source,
        "macs": stats.macs,
        "weight_bytes": stats.weight_bytes,
        "largest_activation_bytes": stats.largest_activation_bytes,
        "largest_activation": stats.largest_activation,
        "inputs": [_tensor_summary(graph, i) for i in graph.inputs],
        "outputs": [_tensor_summary(graph, i) for i in graph.outputs],
        "ops": [_op_summary(graph, i, op, runs[i]) for i, op in enumerate(graph.ops)],
        "unsupported": [{"index": i, "kind": op.name} for i, op in graph.unsupported_ops()],
        "device": devices.get(backend) or _device_summary(graph, backend),
    }


def _fmt_tensor(t: dict[str, Any]) -> str:
    text = f"{t['dtype']}{t['shape']}"
    q = t["quantization"]
    if q is not None and not t["constant"]:
        text += f" (s={q['scale']:.4g}, zp={q['zero_point']})" if not q["per_channel"] else ""
    return text


def _fmt_runs(runs: dict[str, bool | None]) -> str:
    """'yes'/'no'/'?' (not checked: float model) per runner, in RUNNERS order."""
    marks = {True: "yes", False: "no", None: "?"}
    return " ".join(f"{marks[runs[name]]:<3}" for name in RUNNERS)


def format_inspect(summary: dict[str, Any]) -> str:
    """A fixed-width table people can read in a terminal."""
    lines = [f"model: {summary['model']}"]
    for role in ("inputs", "outputs"):
        for t in summary[role]:
            lines.append(f"{role[:-1]:>6}: {t['name']} {_fmt_tensor(t)}")
    lines.append("")
    lines.append(f"{'#':>4}  {'op':<23} {'ref int cmp':<11} {'MACs':>12}  {'inputs -> outputs'}")
    for op in summary["ops"]:
        activations = [_fmt_tensor(t) for t in op["inputs"] if not t["constant"]]
        weights = [f"{t['dtype']}{t['shape']}" for t in op["inputs"] if t["constant"]]
        flag = "" if op["supported"] else "   <-- unsupported"
        lines.append(
            f"{op['index']:>4}  {op['kind']:<23} {_fmt_runs(op['runs']):<11} {op['macs']:>12,}  "
            f"{', '.join(activations)} -> {', '.join(_fmt_tensor(t) for t in op['outputs'])}"
            + (f"  [const {', '.join(weights)}]" if weights else "")
            + flag
        )
    lines.append("")
    lines.append(f"total MACs: {summary['macs']:,}")
    lines.append(f"weight bytes: {summary['weight_bytes']:,}")
    lines.append(
        f"largest activation: {summary['largest_activation_bytes']:,} bytes "
        f"({summary['largest_activation']})"
    )
    if summary["unsupported"]:
        ops = ", ".join(f"{u['index']} ({u['kind']})" for u in summary["unsupported"])
        lines.append(f"unsupported ops: {ops}")
    else:
        lines.append("unsupported ops: none")
    device = summary["device"]
    if not device["checked"]:
        lines.append(f"device ({device['backend']}): {device['note']}")
    elif device["not_on_device"]:
        lines.append(f"runs on the reference but not on the device ({device['backend']}):")
        lines.extend(f"  {p['reason']}" for p in device["not_on_device"])
    else:
        lines.append(f"device ({device['backend']}): every supported op runs")
    return "\n".join(lines)
