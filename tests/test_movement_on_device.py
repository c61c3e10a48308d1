"""Issue 17's data-movement ops on the device, both backends: one int8 graph with EXPAND_DIMS,
SPLIT, SPLIT_V, PACK, UNPACK, GATHER, DEPTH_TO_SPACE, SPACE_TO_DEPTH, RESIZE_NEAREST_NEIGHBOR,
RESIZE_BILINEAR, ARG_MAX and ARG_MIN (int32 outputs), and BATCH_MATMUL (a constant RHS; two
activations with adj_y) runs on the host board and on QEMU mps2-an386 (Cortex-M4, DSP build)
and mps3-an547 (Cortex-M55), and every output must equal the NumPy reference bit for bit (the
reference itself is checked against TFLite Micro per op in test_reference_movement.py and here
on the whole graph). The TensorFlow-converted model of these ops (tests/models/movement/) is
checked against TFLite Micro on every tensor and runs on the host board through both
backends."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

from graph_on_device import QEMU_BOARD_BACKENDS
from paths import PROJECT_MODELS
from reference_single_op import I8, I32, q, run_tflm, single_op_graph
from test_reference_oracle import _compare_all_tensors
from tinyhost import reference
from tinyhost.codegen.lower import lower_graph
from tinyhost.deploy.protocol import DeviceError
from tinyhost.deploy.runner import run_model
from tinyhost.ir import (
    ArgMinMaxOptions,
    BatchMatMulOptions,
    BlockSizeOptions,
    GatherOptions,
    Graph,
    NoOptions,
    Op,
    OpKind,
    PackOptions,
    ResizeOptions,
    SplitOptions,
    Tensor,
)
from tinyhost.plan import plan_memory
from tinyhost.tflite import read_model

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "test_movement_on_device"
QUANT = q(0.05, -3)
TF_MODEL = PROJECT_MODELS / "movement" / "movement_int8.tflite"  # out of the model sweeps


def movement_graph() -> Graph:
    tensors: list[Tensor] = []

    def t(name: str, shape, dtype=I8, data=None) -> int:
        quant = QUANT if dtype == I8 and data is None else None
        tensors.append(Tensor(name, tuple(shape), dtype, data, quant))
        return len(tensors) - 1

    def c(name: str, values) -> int:
        data = np.asarray(values, np.int32)
        return t(name, data.shape, I32, data)

    x = t("x", (1, 4, 6, 8))
    ops = []
    a, b = t("a", (1, 4, 6, 4)), t("b", (1, 4, 6, 4))
    ops.append(Op(OpKind.SPLIT, (c("axis_last", -1), x), (a, b), SplitOptions(2)))
    sv = [t("sv0", (1, 1, 6, 8)), t("sv1", (1, 1, 6, 8)), t("sv2", (1, 2, 6, 8))]
    ops.append(Op(OpKind.SPLIT_V, (x, c("sizes", [1, -1, 2]), c("axis1", [1])), tuple(sv),
                  SplitOptions(3)))
    packed = t("packed", (1, 2, 4, 6, 4))
    ops.append(Op(OpKind.PACK, (a, b), (packed,), PackOptions(1, 2)))
    unpacked = tuple(t(f"u{k}", (1, 2, 4, 4)) for k in range(6))
    ops.append(Op(OpKind.UNPACK, (packed,), unpacked, PackOptions(-2, 6)))
    gathered = t("gathered", (1, 4, 2, 2, 8))
    ops.append(Op(OpKind.GATHER, (x, c("indices", [[3, 0], [5, 5]])), (gathered,),
                  GatherOptions(2)))
    d2s, s2d = t("d2s", (1, 8, 12, 2)), t("s2d", (1, 2, 3, 32))
    ops.append(Op(OpKind.DEPTH_TO_SPACE, (x,), (d2s,), BlockSizeOptions(2)))
    ops.append(Op(OpKind.SPACE_TO_DEPTH, (d2s,), (s2d,), BlockSizeOptions(4)))
    near, bil = t("nearest", (1, 7, 9, 8)), t("bilinear", (1, 9, 5, 8))
    ops.append(Op(OpKind.RESIZE_NEAREST_NEIGHBOR, (x, c("size_n", [7, 9])), (near,),
                  ResizeOptions(False, True)))
    ops.append(Op(OpKind.RESIZE_BILINEAR, (x, c("size_b", [9, 5])), (bil,),
                  ResizeOptions(True, False)))
    amax, amin = t("argmax", (1, 4, 6), I32), t("argmin", (1, 6, 8), I32)
    ops.append(Op(OpKind.ARG_MAX, (x, c("axis_am", [-1])), (amax,), ArgMinMaxOptions("int32")))
    ops.append(Op(OpKind.ARG_MIN, (x, c("axis_an", [1])), (amin,), ArgMinMaxOptions("int32")))
    expanded = t("expanded", (1, 2, 1, 4, 4))
    ops.append(Op(OpKind.EXPAND_DIMS, (unpacked[5], c("axis_e", [2])), (expanded,),
                  NoOptions()))
    rhs = np.random.default_rng(9).integers(-128, 128, (8, 5)).astype(np.int8)
    rhs_t = len(tensors)
    tensors.append(Tensor("rhs", (8, 5), I8, rhs, q(0.02, 3)))
    mm1 = t("matmul_const", (1, 4, 6, 5))
    ops.append(Op(OpKind.BATCH_MATMUL, (x, rhs_t), (mm1,), BatchMatMulOptions()))
    mm2 = t("matmul_adj_y", (1, 4, 6, 6))
    ops.append(Op(OpKind.BATCH_MATMUL, (a, b), (mm2,), BatchMatMulOptions(False, True)))
    tensors[mm1] = dataclasses.replace(tensors[mm1], quant=q(0.1, 2))
    tensors[mm2] = dataclasses.replace(tensors[mm2], quant=q(0.08, -1))
    outputs = (sv[0], sv[2], packed, unpacked[0], gathered, d2s, s2d, near, bil, amax, amin,
               expanded, mm1, mm2)
    return Graph(tuple(tensors), tuple(ops), (x,), outputs, name="movement")


def _input() -> np.ndarray:
    # few distinct values, so ARG_MAX / ARG_MIN meet ties
    return np.random.default_rng(17).integers(-128, 128, (1, 4, 6, 8)).astype(np.int8) // 32


def test_the_graph_matches_tflm_and_expand_dims_costs_nothing() -> None:
    graph = movement_graph()
    x = _input()
    ours = reference.run(graph, [x]).outputs
    for got, want in zip(ours, run_tflm(graph, [x])):
        np.testing.assert_array_equal(got, want.reshape(got.shape))
    plan = plan_memory(graph)
    expand = next(op for op in graph.ops if op.kind is OpKind.EXPAND_DIMS)
    assert plan.tensor_offset(expand.outputs[0]) == plan.tensor_offset(expand.inputs[0])
    assert {c.function for c in lower_graph(graph)} >= {"th_split_s8", "th_concat_s8", "copy"}


def test_the_tensorflow_model_matches_tflm_on_every_tensor() -> None:
    """The converter's own forms of these ops (tests/models/make_models.py "movement")."""
    graph = read_model(TF_MODEL)
    kinds = {op.kind for op in graph.ops}
    assert {OpKind.SPLIT_V, OpKind.PACK, OpKind.UNPACK, OpKind.GATHER, OpKind.SPACE_TO_DEPTH,
            OpKind.RESIZE_NEAREST_NEIGHBOR, OpKind.RESIZE_BILINEAR, OpKind.ARG_MAX,
            OpKind.ARG_MIN} <= kinds  # fmt: skip
    x = reference.random_inputs(graph, np.random.default_rng(3))
    assert _compare_all_tensors(graph, x, TF_MODEL) == sum(len(op.outputs) for op in graph.ops)


def _check(graph: Graph, x: np.ndarray, board: str, backend: str) -> None:
    want = reference.run(graph, [x]).outputs
    report = run_model(graph, board, [x], backend=backend,
                       work_dir=BUILD / f"{board}-{backend}-{graph.name}")  # fmt: skip
    assert len(report.runs[0].outputs) == len(want) == len(graph.outputs)
    for t, got, w in zip(graph.outputs, report.runs[0].outputs, want):
        assert got.dtype == w.dtype and np.array_equal(got.reshape(w.shape), w), (
            f"{backend} on {board}: output '{graph.tensors[t].name}' differs"
        )


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_bit_exact_on_the_host_board(backend: str) -> None:
    _check(movement_graph(), _input(), "host", backend)
    tf_graph = read_model(TF_MODEL)
    x = reference.random_inputs(tf_graph, np.random.default_rng(5))[0]
    _check(tf_graph, x, "host", backend)


@pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm or arm-none-eabi-gcc not installed")  # fmt: skip
@pytest.mark.parametrize(("board", "backend"),
                         [*QEMU_BOARD_BACKENDS, ("mps3-an547", "interpreter")])
def test_bit_exact_on_qemu(board: str, backend: str) -> None:
    """Cortex-M4 and M7 (DSP paths) and Cortex-M55 (DSP paths in the Helium build)."""
    _check(movement_graph(), _input(), board, backend)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_gather_by_indices_the_host_sends(backend: str) -> None:
    """GATHER with int32 indices as a graph input (batch_dims 1): bit-exact; an index out of
    range makes the device refuse the invoke (th_gather_s8 checks before reading), as TFLM
    fails the op, rather than read outside the tensor."""
    graph = single_op_graph(OpKind.GATHER, GatherOptions(1, 1),
                            [Tensor("x", (2, 5, 3), I8, quant=QUANT), Tensor("i", (2, 4), I32),
                             Tensor("y", (2, 4, 3), I8, quant=QUANT)], [0, 1], [2])  # fmt: skip
    x = np.arange(30, dtype=np.int8).reshape(2, 5, 3)
    i = np.int32([[4, 0, 1, 4], [2, 2, 3, 0]])
    work = BUILD / f"host-{backend}-gather"
    got = run_model(graph, "host", [[x, i]], backend=backend, work_dir=work).runs[0].outputs[0]
    want = reference.run(graph, [x, i]).outputs[0]
    np.testing.assert_array_equal(got.reshape(want.shape), want)
    with pytest.raises(DeviceError, match="refused INVOKE"):
        run_model(graph, "host", [[x, np.int32([[4, 0, 1, 5], [2, 2, 3, 0]])]], backend=backend,
                  work_dir=work)  # fmt: skip
