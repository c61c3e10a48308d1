"""Generate a float model with ops tinyhost does not support, for the error-path tests.

Run with the TensorFlow venv described in make_models.py:
    /tmp/tfenv/bin/python tests/models/make_unsupported.py
It writes tests/models/unsupported/exp_gather_sqrt_neg_float.tflite: EXP, SQRT and NEG (which
TFLite Micro runs in float32 only: no int8 kernel exists) around supported ops, so a tool must
list all three with their op indices. The folder is
separate so that the suites iterating over tests/models/*.tflite do not pick it up.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "unsupported" / "exp_gather_sqrt_neg_float.tflite"


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    weights = tf.constant(np.linspace(-1, 1, 16 * 4, dtype=np.float32).reshape(16, 4))

    @tf.function(input_signature=[tf.TensorSpec([1, 16], tf.float32)])
    def model(x):
        y = tf.exp(x)  # EXP
        y = tf.gather(y, [3, 1, 2, 0, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14], axis=1)  # GATHER
        y = tf.nn.relu(tf.matmul(y, weights))  # FULLY_CONNECTED
        return tf.negative(tf.sqrt(y))  # SQRT, NEG

    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [model.get_concrete_function()], model
    )
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_bytes(converter.convert())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
