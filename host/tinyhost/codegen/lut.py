"""256-entry tables for the unary int8 -> int8 ops, computed by the NumPy reference.

The C kernel `th_lut_s8` runs every unary int8 function (LOGISTIC, TANH, HARD_SWISH,
LEAKY_RELU, RELU, RELU6, ABS, RSQRT, ELU, ZEROS_LIKE, QUANTIZE int8 -> int8) as one table
load per element. The table is the reference function evaluated on all 256 int8 inputs, so the
device is bit-exact with the reference (and through it with TFLite Micro) by construction;
the reference stays the only statement of the arithmetic.

Table order is the C index `(uint8_t)x`: entries 0..127 hold f(0..127), entries 128..255
hold f(-128..-1).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tinyhost.arith.activations import (
    hard_swish_params,
    leaky_relu_params,
    logistic_params,
    relu6_params,
    relu_params,
    requantize_params,
    tanh_params,
)
from tinyhost.arith.elementwise import op_where
from tinyhost.arith.unary import abs_params, elu_params, rsqrt_params
from tinyhost.errors import UnsupportedModelError
from tinyhost.ir import Graph, Op, OpKind

TABLE_SIZE = 256

# Every int8 value in table order.
TABLE_INPUTS = np.arange(TABLE_SIZE, dtype=np.uint8).view(np.int8)

LUT_OPS = frozenset({
    OpKind.LOGISTIC, OpKind.TANH, OpKind.HARD_SWISH, OpKind.LEAKY_RELU, OpKind.RELU,
    OpKind.RELU6, OpKind.QUANTIZE, OpKind.ABS, OpKind.RSQRT, OpKind.ELU, OpKind.ZEROS_LIKE,
})


def table_from(function: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The table of an elementwise int8 -> int8 function (evaluated once on all inputs)."""
    values = np.asarray(function(TABLE_INPUTS.copy()))
    if values.shape != (TABLE_SIZE,) or values.dtype != np.int8:
        raise ValueError(f"table function returned {values.dtype} {values.shape}, "
                         f"want int8 ({TABLE_SIZE},)")
    return values.copy()


def apply_table(table: np.ndarray, x: np.ndarray) -> np.ndarray:
    """What th_lut_s8 computes, in NumPy (for tests and the host board)."""
    return table[np.asarray(x, np.int8).view(np.uint8)]


def op_table(graph: Graph, op: Op) -> np.ndarray:
    """The table of one unary int8 op, its params derived as TFLite Micro's Prepare does."""
    # Imported here: the reference kernels depend on tinyhost.arith, not the reverse.
    from tinyhost.reference.ops import activations, quantize, unary

    x = graph.tensors[op.inputs[0]] if op.inputs and op.inputs[0] is not None else None
    y = graph.tensors[op.outputs[0]] if op.outputs else None
    if x is None or y is None or x.dtype != np.int8 or y.dtype != np.int8:
        raise UnsupportedModelError(f"{op_where(graph, op)}: a table needs int8 in and out")
    # op -> (its integer params, the reference function that applies them to int8 values)
    recipes = {
        OpKind.LOGISTIC: (logistic_params, activations.logistic_int8),
        OpKind.TANH: (tanh_params, activations.tanh_int8),
        OpKind.HARD_SWISH: (hard_swish_params, activations.hard_swish_int8),
        OpKind.LEAKY_RELU: (leaky_relu_params, activations.leaky_relu_int8),
        OpKind.RELU: (relu_params, activations.relu_int8),
        OpKind.RELU6: (relu6_params, activations.relu6_int8),
        OpKind.ABS: (abs_params, unary.abs_int8),
        OpKind.RSQRT: (rsqrt_params, unary.rsqrt_int8),
        OpKind.ELU: (elu_params, unary.elu_int8),
        OpKind.QUANTIZE: (requantize_params,
                          lambda v, p: quantize.requantize(v, p, np.int8)),
    }  # fmt: skip
    if op.kind is OpKind.ZEROS_LIKE:  # raw zeros whatever the input (zeros_like.cc)
        return table_from(np.zeros_like)
    if op.kind in recipes:
        params_of, apply = recipes[op.kind]
        p = params_of(graph, op)
        return table_from(lambda v: apply(v, p))
    raise UnsupportedModelError(f"{op_where(graph, op)}: no int8 table for {op.name}")
