"""Tables shared by the reader and the writer: TFLite enum values <-> IR types."""

from __future__ import annotations

import numpy as np
import tflite

from tinyhost.ir import OpKind

# Every .tflite file carries this identifier in bytes 4..7; the current schema is version 3.
FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3

# TFLite TensorType -> numpy dtype, for the types tinyhost can hold.
TENSOR_TYPE_TO_DTYPE: dict[int, np.dtype] = {
    tflite.TensorType.FLOAT32: np.dtype(np.float32),
    tflite.TensorType.FLOAT16: np.dtype(np.float16),
    tflite.TensorType.INT32: np.dtype(np.int32),
    tflite.TensorType.UINT8: np.dtype(np.uint8),
    tflite.TensorType.INT64: np.dtype(np.int64),
    tflite.TensorType.BOOL: np.dtype(np.bool_),
    tflite.TensorType.INT16: np.dtype(np.int16),
    tflite.TensorType.INT8: np.dtype(np.int8),
    tflite.TensorType.FLOAT64: np.dtype(np.float64),
}
DTYPE_TO_TENSOR_TYPE: dict[np.dtype, int] = {v: k for k, v in TENSOR_TYPE_TO_DTYPE.items()}

# Every builtin operator name by code, to name unsupported ops in messages.
BUILTIN_NAMES: dict[int, str] = {
    v: k for k, v in vars(tflite.BuiltinOperator).items() if k.isupper() and isinstance(v, int)
}
TENSOR_TYPE_NAMES: dict[int, str] = {
    v: k for k, v in vars(tflite.TensorType).items() if k.isupper() and isinstance(v, int)
}

KIND_BY_CODE: dict[int, OpKind] = {k.value: k for k in OpKind if k is not OpKind.UNSUPPORTED}


INT4_TYPE = tflite.TensorType.INT4


def pack_int4(values: np.ndarray) -> np.ndarray:
    """int8 values in [-8, 7] as TFLite's packed INT4 bytes: two per byte, the element with the
    even index in the low nibble (an odd count leaves the last high nibble zero)."""
    flat = np.asarray(values, np.int8).reshape(-1).astype(np.uint8) & 0x0F
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    return (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8)


def unpack_int4(data: np.ndarray, count: int) -> np.ndarray:
    """`count` int8 values from packed INT4 bytes (pack_int4's inverse), sign-extended."""
    raw = np.asarray(data, np.uint8)
    nibbles = np.empty(raw.size * 2, np.uint8)
    nibbles[0::2], nibbles[1::2] = raw & 0x0F, raw >> 4
    return ((nibbles[:count].astype(np.int16) ^ 8) - 8).astype(np.int8)
