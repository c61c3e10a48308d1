"""Generate tinyhost's op-coverage test models (TFLite flatbuffers).

This script is the ONLY place (together with make_digits.py) where TensorFlow is
used.  Normal tests never import TensorFlow: they load the committed files this
script writes next to itself:

    *.tflite            small int8 (full-integer PTQ) and float32 models
    reference_io.npz    one fixed input per model and the output of TensorFlow
                        Lite's reference kernels on it (keys "<stem>__in<i>",
                        "<stem>__out<j>", in model input/output order)
    manifest.json       per model: ops read back from the .tflite (with the
                        builtin options that matter), inputs/outputs with
                        shape, dtype, scale, zero point

Generated with TensorFlow 2.21.0 (tensorflow-cpu 2.21.0, Keras 3.15.1,
tflite 2.18.0 for reading the flatbuffers back, Python 3.11).

How to rerun
------------
    python3 -m venv /tmp/tfenv
    /tmp/tfenv/bin/pip install tensorflow-cpu==2.21.0 scikit-learn tflite==2.18.0
    /tmp/tfenv/bin/python tests/models/make_models.py          # writes the files

    # check every model in TensorFlow Lite Micro (no TensorFlow needed; any
    # venv with numpy and the tflite-micro package):
    /tmp/v/bin/python tests/models/make_models.py --verify

    # or both in one go (also writes families/ with that interpreter, see below):
    /tmp/tfenv/bin/python tests/models/make_models.py --verify-with /tmp/v/bin/python

    # only issue 17's op-family models (families/, tinyhost's writer, no TensorFlow):
    /tmp/v/bin/python tests/models/make_models.py --families

The output is deterministic: every model draws its weights and calibration
data from its own numpy Generator seeded with a fixed number (a CRC of the
model name), so adding a model does not change the others.

Quantization recipe for the *_int8 models (standard TF full-integer PTQ):
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = 50 fixed-seed random samples
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = converter.inference_output_type = tf.int8
In TF 2.21 FULLY_CONNECTED weights are quantized per-channel by default; the
"*_pertensor_*" models set the private flag
``converter._experimental_disable_per_channel_quantization_for_dense_layers = True``
to get the (older) per-tensor scheme.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"
REFERENCE = HERE / "reference_io.npz"
N_CALIB = 50

# Ops the model set must cover (checked at the end of generation).
REQUIRED_OPS = [
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "FULLY_CONNECTED",
    "AVERAGE_POOL_2D",
    "MAX_POOL_2D",
    "ADD",
    "SUB",
    "MUL",
    "RESHAPE",
    "SQUEEZE",
    "SOFTMAX",
    "LOGISTIC",
    "TANH",
    "RELU",
    "RELU6",
    "LEAKY_RELU",
    "HARD_SWISH",
    "QUANTIZE",
    "DEQUANTIZE",
    "PAD",
    "CONCATENATION",
    "MEAN",
    "TRANSPOSE",
    "STRIDED_SLICE",
]


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


# --------------------------------------------------------------------------
# Model definitions (TensorFlow only imported inside generate()).
# --------------------------------------------------------------------------


@dataclass
class Spec:
    name: str  # file stem without the _int8/_float suffix
    build: object  # callable(tf, rng) -> python function of the inputs
    inputs: list  # [(name, shape)] ; None entries = dynamic dim at conversion
    kinds: tuple = ("int8",)  # any of "int8", "float", "float_io_int8"
    dense_per_tensor: bool = False
    pin_shapes: dict = field(default_factory=dict)  # input name -> static shape
    # calibration/reference input distribution: "uniform" (-1..1), "normal",
    # or a (lo, hi) uniform range; one for all inputs or a list, one per input
    input_dist: object = "uniform"
    doc: str = ""
    # "large/": models too big for the every-model sweeps of the test suite (tests/paths.py
    # globs tests/models/*.tflite only); the tests that want them name them
    subdir: str = ""


def model_specs():
    """Return the list of Spec.  Builders receive (tf, rng)."""

    def W(tf, rng, shape, fan_in, gain=1.5):
        return tf.constant((rng.normal(0.0, gain / np.sqrt(fan_in), shape)).astype(np.float32))

    def Bv(tf, rng, n, s=0.2):
        return tf.constant(rng.normal(0.0, s, (n,)).astype(np.float32))

    def act(tf, x, a):
        if a is None:
            return x
        if a == "relu":
            return tf.nn.relu(x)
        if a == "relu6":
            return tf.nn.relu6(x)
        if a == "n1to1":
            return tf.clip_by_value(x, -1.0, 1.0)
        raise ValueError(a)

    def conv(tf, rng, x, cout, k, stride=1, padding="SAME", a=None, dil=1):
        kh, kw = k
        cin = x.shape[-1]
        w = W(tf, rng, (kh, kw, cin, cout), kh * kw * cin)
        b = Bv(tf, rng, cout)
        y = tf.nn.conv2d(x, w, strides=stride, padding=padding, dilations=dil)
        return act(tf, y + b, a)

    def dw(tf, rng, x, mult, k, stride=1, padding="SAME", a=None, dil=1):
        kh, kw = k
        cin = x.shape[-1]
        w = W(tf, rng, (kh, kw, cin, mult), kh * kw)
        b = Bv(tf, rng, cin * mult)
        y = tf.nn.depthwise_conv2d(x, w, [1, stride, stride, 1], padding, dilations=[dil, dil])
        return act(tf, y + b, a)

    def fc(tf, rng, x, n, bias=True, a=None):
        w = W(tf, rng, (x.shape[-1], n), x.shape[-1])
        y = tf.matmul(x, w)
        if bias:
            y = y + Bv(tf, rng, n)
        return act(tf, y, a)

    specs = []

    # ---- CONV_2D ---------------------------------------------------------
    def b_conv_s2(tf, rng):
        def f(x):  # 7x9 odd input -> asymmetric SAME padding at stride 2
            return conv(tf, rng, x, 8, (3, 3), stride=2, padding="SAME", a="relu6")

        return f

    specs.append(
        Spec(
            "conv_same_stride2_relu6",
            b_conv_s2,
            [("x", (1, 7, 9, 3))],
            kinds=("int8", "float"),
            doc="CONV_2D 3x3 stride 2 SAME (asymmetric pad), fused RELU6",
        )
    )

    def b_conv_valid(tf, rng):
        def f(x):
            y = conv(tf, rng, x, 6, (5, 5), stride=1, padding="VALID", a="relu")
            return conv(tf, rng, y, 8, (1, 1), stride=1, padding="VALID", a=None)

        return f

    specs.append(
        Spec(
            "conv_valid_5x5_relu_1x1",
            b_conv_valid,
            [("x", (1, 12, 12, 4))],
            doc="CONV_2D 5x5 VALID fused RELU, then 1x1 conv fused NONE",
        )
    )

    def b_conv_misc(tf, rng):
        def f(x):
            y = conv(tf, rng, x, 8, (1, 3), stride=1, padding="SAME", a=None)
            y = conv(tf, rng, y, 8, (3, 3), stride=1, padding="SAME", a="relu", dil=2)
            y = conv(tf, rng, y, 6, (3, 3), stride=1, padding="VALID", a="n1to1", dil=2)
            return conv(tf, rng, y, 4, (3, 3), stride=2, padding="VALID", a="relu6")

        return f

    specs.append(
        Spec(
            "conv_1x3_dilated2_stride2_valid",
            b_conv_misc,
            [("x", (1, 11, 13, 4))],
            doc="CONV_2D 1x3 SAME; 3x3 dilation 2 SAME/VALID; 3x3 stride 2 VALID; "
            "fused NONE/RELU/RELU_N1_TO_1/RELU6",
        )
    )

    # ---- DEPTHWISE_CONV_2D -----------------------------------------------
    def b_dw1(tf, rng):
        def f(x):
            y = dw(tf, rng, x, 1, (3, 3), stride=2, padding="SAME", a="relu6")
            return dw(tf, rng, y, 1, (5, 5), stride=1, padding="SAME", a=None)

        return f

    specs.append(
        Spec(
            "dwconv_mult1_same_stride2_5x5",
            b_dw1,
            [("x", (1, 9, 7, 8))],
            doc="DEPTHWISE_CONV_2D multiplier 1: 3x3 stride 2 SAME RELU6 on odd "
            "9x7 input, then 5x5 stride 1 SAME NONE",
        )
    )

    def b_dw2(tf, rng):
        def f(x):
            y = dw(tf, rng, x, 2, (3, 3), stride=1, padding="VALID", a="relu", dil=2)
            y = dw(tf, rng, y, 3, (1, 3), stride=1, padding="SAME", a=None)
            return dw(tf, rng, y, 1, (3, 3), stride=2, padding="VALID", a="relu6")

        return f

    specs.append(
        Spec(
            "dwconv_mult2_mult3_dilated2_valid",
            b_dw2,
            [("x", (1, 11, 9, 4))],
            doc="DEPTHWISE_CONV_2D multiplier 2 (3x3 dilation 2 VALID RELU), "
            "multiplier 3 (1x3 SAME), multiplier 1 3x3 stride 2 VALID RELU6",
        )
    )

    # ---- FULLY_CONNECTED ---------------------------------------------------
    def b_fc_pc(tf, rng):
        def f(x):
            y = fc(tf, rng, x, 16, bias=True, a="relu")
            return fc(tf, rng, y, 10, bias=False)

        return f

    specs.append(
        Spec(
            "fc_perchannel_bias_relu_nobias",
            b_fc_pc,
            [("x", (1, 32))],
            doc="FULLY_CONNECTED per-channel weights: with bias + fused RELU, then without bias",
        )
    )

    def b_fc_pt(tf, rng):
        def f(x):
            y = fc(tf, rng, x, 12, bias=True, a="relu6")
            return fc(tf, rng, y, 5, bias=False)

        return f

    specs.append(
        Spec(
            "fc_pertensor_bias_relu6_nobias",
            b_fc_pt,
            [("x", (1, 24))],
            dense_per_tensor=True,
            doc="FULLY_CONNECTED per-tensor weights: with bias + fused RELU6, then without bias",
        )
    )

    def b_fc_keep(tf, rng):
        def f(x):  # [1,4,16] @ [16,8] -> FC with keep_num_dims=True
            return fc(tf, rng, x, 8, bias=True, a=None)

        return f

    specs.append(
        Spec(
            "fc_keepdims_3d",
            b_fc_keep,
            [("x", (1, 4, 16))],
            doc="FULLY_CONNECTED on a rank-3 input, keep_num_dims=true, per-channel, with bias",
        )
    )

    def b_fc_keep_pt(tf, rng):
        def f(x):
            return fc(tf, rng, x, 6, bias=False, a="relu")

        return f

    specs.append(
        Spec(
            "fc_keepdims_3d_pertensor_nobias",
            b_fc_keep_pt,
            [("x", (1, 3, 5, 10))],
            dense_per_tensor=True,
            doc="FULLY_CONNECTED on a rank-4 input, keep_num_dims=true, "
            "per-tensor, no bias, fused RELU",
        )
    )

    # ---- pooling -----------------------------------------------------------
    def b_pool(tf, rng):
        def f(x):
            return (
                tf.nn.avg_pool2d(x, 2, 2, "VALID"),
                tf.nn.max_pool2d(x, 3, 2, "SAME"),
                tf.nn.avg_pool2d(x, 3, 1, "SAME"),
                tf.nn.max_pool2d(x, [1, 3], [1, 1], "VALID"),
            )

        return f

    specs.append(
        Spec(
            "pool_avg_max_same_valid",
            b_pool,
            [("x", (1, 7, 9, 8))],
            doc="AVERAGE_POOL_2D 2x2/2 VALID and 3x3/1 SAME; MAX_POOL_2D 3x3/2 "
            "SAME and 1x3/1 VALID on odd 7x9 input",
        )
    )

    # ---- elementwise ---------------------------------------------------------
    def b_elt(tf, rng):
        cvec = tf.constant(rng.uniform(-1.5, 1.5, (1, 1, 1, 8)).astype(np.float32))
        cscal = tf.constant(np.float32(rng.uniform(0.5, 1.5)))

        def f(a, b, c):
            return (
                a + b,  # ADD, same shapes
                a - b,  # SUB, same shapes
                a * b,  # MUL, same shapes
                tf.nn.relu(a + c),  # ADD, [1,1,1,C] activation operand, fused RELU
                b * c,  # MUL, [1,1,1,C] activation operand
                c - a,  # SUB, broadcast first operand
                a * cvec,  # MUL by [1,1,1,C] constant
                b + cvec,  # ADD [1,1,1,C] constant
                a * cscal,  # MUL by scalar constant
                tf.nn.relu6(b - a),  # SUB fused RELU6
            )

        return f

    specs.append(
        Spec(
            "elementwise_add_sub_mul_broadcast",
            b_elt,
            [("a", (1, 5, 6, 8)), ("b", (1, 5, 6, 8)), ("c", (1, 1, 1, 8))],
            doc="ADD/SUB/MUL with two activation inputs (same shape and "
            "[1,1,1,C] broadcast), [1,1,1,C] and scalar constants, fused "
            "RELU/RELU6",
        )
    )

    def b_elt2(tf, rng):
        def f(a, b):
            return (a + b, a * b, a - b)

        return f

    specs.append(
        Spec(
            "elementwise_broadcast_rank3",
            b_elt2,
            [("a", (1, 4, 6)), ("b", (1, 1, 6))],
            doc="ADD/MUL/SUB rank-3 with [1,1,C] broadcast second input",
        )
    )

    # ---- activations -------------------------------------------------------
    def b_act(tf, rng):
        def f(x, y):
            x3 = x * 3.0  # widen the range so the nonlinear parts are exercised
            return (
                tf.nn.sigmoid(x3),
                tf.nn.tanh(x3),
                tf.nn.relu(x3),
                tf.nn.relu6(y),
                tf.nn.relu6(x3 + 3.0),
                tf.nn.leaky_relu(x3, alpha=0.2),
                x3 * tf.nn.relu6(x3 + 3.0) * (1.0 / 6.0),
            )

        return f

    specs.append(
        Spec(
            "activations",
            b_act,
            [("x", (1, 6, 6, 8)), ("y", (1, 4, 4, 4))],
            kinds=("int8", "float"),
            input_dist=["uniform", (0.0, 6.0)],
            doc="LOGISTIC, TANH, RELU, LEAKY_RELU, HARD_SWISH on x*3 (range "
            "-3..3); standalone RELU6 on an input calibrated to 0..6 (TFLM's "
            "int8 RELU6 does not requantize, so it needs input and output "
            "quantization equal); ADD with fused RELU6",
        )
    )

    # ---- softmax / reshape -----------------------------------------------------
    def b_soft(tf, rng):
        def f(logits, x):
            y = tf.reshape(x, (1, 48))
            y = fc(tf, rng, y, 10, bias=True)
            return tf.nn.softmax(y), tf.nn.softmax(logits * 4.0)

        return f

    specs.append(
        Spec(
            "reshape_fc_softmax",
            b_soft,
            [("logits", (1, 5, 7)), ("x", (1, 4, 4, 3))],
            doc="RESHAPE [1,4,4,3]->[1,48], FULLY_CONNECTED, SOFTMAX on [1,10] and "
            "on a rank-3 [1,5,7] input",
        )
    )

    # ---- squeeze ---------------------------------------------------------------
    def b_sq(tf, rng):
        def f(a, b):
            return tf.squeeze(tf.nn.relu(a), axis=[1, 2]), tf.squeeze(tf.nn.tanh(b), axis=[2])

        return f

    specs.append(
        Spec(
            "squeeze",
            b_sq,
            [("a", (None, 1, 1, None)), ("b", (None, 5, 1, None))],
            pin_shapes={"a": (1, 1, 1, 16), "b": (1, 5, 1, 6)},
            doc="SQUEEZE [1,1,1,16]->[1,16] (axes 1,2) and [1,5,1,6]->[1,5,6] (axis "
            "2); converted with dynamic dims so the converter keeps SQUEEZE, "
            "then the shapes are pinned static",
        )
    )

    # ---- pad / concat / transpose / strided slice ---------------------------------
    def b_cat(tf, rng):
        def f(a, b):
            p = tf.pad(a, [[0, 0], [1, 2], [0, 1], [0, 0]])
            cat_c = tf.concat([a, b * 2.5], axis=3)  # different scales -> requantize
            cat_h = tf.concat([p[:, :, :7, :], a], axis=1)
            return p, cat_c, cat_h

        return f

    specs.append(
        Spec(
            "pad_concat_requantize",
            b_cat,
            [("a", (1, 5, 7, 4)), ("b", (1, 5, 7, 3))],
            doc="PAD; CONCATENATION on the channel axis of inputs with different "
            "scales (int8->int8 QUANTIZE requantizes one), and on the height "
            "axis",
        )
    )

    def b_tr(tf, rng):
        def f(x):
            t = tf.transpose(x, [0, 2, 1, 3])
            t2 = tf.transpose(x, [0, 3, 1, 2])
            s = x[:, 1:5:2, ::3, 1:]
            s2 = x[:, -3:, 2:6, :2]
            return t, t2, s, s2

        return f

    specs.append(
        Spec(
            "transpose_strided_slice",
            b_tr,
            [("x", (1, 5, 7, 4))],
            doc="TRANSPOSE (two permutations), STRIDED_SLICE with strides and negative begin",
        )
    )

    # ---- mean ----------------------------------------------------------------------
    def b_mean(tf, rng):
        def f(x):
            return (
                tf.reduce_mean(x, [1, 2], keepdims=True),
                tf.reduce_mean(x, [1, 2], keepdims=False),
                tf.reduce_mean(x[:, :, :, :4] * 2.0, [2], keepdims=True),
            )

        return f

    specs.append(
        Spec(
            "mean_spatial_keepdims",
            b_mean,
            [("x", (1, 7, 9, 8))],
            doc="MEAN over H,W keepdims true/false; MEAN over W only",
        )
    )

    # ---- data movement (issue 17) ----------------------------------------------------
    def b_move(tf, rng):
        def f(x):
            a, b, c = tf.split(x, [2, 2, 4], axis=-1)  # SPLIT_V
            packed = tf.stack([a, b], axis=1)  # PACK
            u = tf.unstack(packed, axis=1)  # UNPACK
            g = tf.gather(x, [5, 0, 2, 2], axis=2)  # GATHER
            s2d = tf.nn.space_to_depth(x, 2)
            near = tf.image.resize(x, [7, 11], method="nearest")
            bil = tf.image.resize(x, [11, 5], method="bilinear")
            bil_ac = tf.compat.v1.image.resize_bilinear(x, [4, 7], align_corners=True)
            amax = tf.argmax(x, axis=-1, output_type=tf.int32)
            amin = tf.argmin(x, axis=1, output_type=tf.int32)
            return packed, u[0], u[1], g, c, s2d, near, bil, bil_ac, amax, amin

        return f

    specs.append(
        Spec(
            "movement",
            b_move,
            [("x", (1, 6, 8, 8))],
            subdir="movement/",
            doc="issue 17's data movement: SPLIT_V, PACK, UNPACK, GATHER, SPACE_TO_DEPTH "
            "(TFLite's reference resolver has no int8 DEPTH_TO_SPACE; TF 2.21 leaves a SPLIT "
            "float), RESIZE_NEAREST_NEIGHBOR (half pixel), RESIZE_BILINEAR (half pixel; "
            "align corners), ARG_MAX / ARG_MIN (int32); in movement/, out of the "
            "every-model sweeps (tests/test_movement_on_device.py)",
        )
    )

    # ---- op families TF's converter makes runnable by TFLM (issue 17, families/) -------
    def b_rowwise(tf, rng):
        def f(x):
            ls = tf.nn.log_softmax(x, axis=-1)  # LOG_SOFTMAX
            l2 = tf.math.l2_normalize(x, axis=-1)  # L2_NORMALIZATION
            # (no CUMSUM: TF 2.21 keeps it float between DEQUANTIZE and QUANTIZE)
            sm = tf.reduce_sum(x, axis=[1, 2])  # SUM
            sm_keep = tf.reduce_sum(ls, axis=[3], keepdims=True)
            mx = tf.reduce_max(x, axis=-1, keepdims=True)  # REDUCE_MAX
            return ls, l2, sm, sm_keep, mx

        return f

    specs.append(
        Spec(
            "rowwise_tf",
            b_rowwise,
            [("x", (1, 4, 5, 16))],
            subdir="families/",
            input_dist="normal",
            doc="issue 17's row-wise ops as TF's converter quantizes them to int8: "
            "LOG_SOFTMAX, L2_NORMALIZATION, SUM (two axes; keepdims), REDUCE_MAX; not "
            "CUMSUM, which TF 2.21 keeps float between DEQUANTIZE and QUANTIZE (the int8 "
            "CUMSUM is in families/rowwise_int8, tinyhost's writer)",
        )
    )

    def b_16x8(tf, rng):
        w1, b1 = W(tf, rng, (3, 3, 3, 8), 27), Bv(tf, rng, 8)
        wd, bd = W(tf, rng, (3, 3, 8, 1), 9), Bv(tf, rng, 8)
        wf, bf = W(tf, rng, (4 * 4 * 8, 10), 128), Bv(tf, rng, 10)
        c = tf.constant(rng.uniform(-1, 1, (1, 10)).astype(np.float32))

        def f(x):
            y = tf.nn.relu(tf.nn.conv2d(x, w1, 1, "SAME") + b1)  # CONV_2D
            y = tf.nn.depthwise_conv2d(y, wd, [1, 2, 2, 1], "SAME") + bd  # DEPTHWISE_CONV_2D
            y = tf.matmul(tf.reshape(y, (1, 128)), wf) + bf  # FULLY_CONNECTED
            a = y + c  # ADD
            m = a * y  # MUL
            d = tf.math.sigmoid(a) - tf.math.tanh(y)  # LOGISTIC, TANH, SUB
            return tf.nn.softmax(a), m, d

        return f

    specs.append(
        Spec(
            "ops",
            b_16x8,
            [("x", (1, 8, 8, 3))],
            kinds=("16x8",),
            subdir="families/",
            input_dist="normal",
            doc="issue 17's 16x8 family as TF's converter makes it (int16 activations, "
            "int8 weights, EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8): "
            "CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, MUL, SUB, SOFTMAX, "
            "LOGISTIC, TANH",
        )
    )

    # ---- float in/out around an int8 graph ---------------------------------------
    def b_fio(tf, rng):
        def f(x):
            y = conv(tf, rng, x, 8, (3, 3), stride=1, padding="SAME", a="relu")
            y = tf.reduce_mean(y, [1, 2])
            return fc(tf, rng, y, 4, bias=True)

        return f

    specs.append(
        Spec(
            "float_io_conv_mean_fc",
            b_fio,
            [("x", (1, 8, 8, 2))],
            kinds=("float_io_int8",),
            doc="int8 graph with float32 input/output: QUANTIZE at the input, "
            "DEQUANTIZE at the output",
        )
    )

    # ---- multi-op ----------------------------------------------------------------------
    def b_mbv2(tf, rng):
        def f(x):
            y = conv(tf, rng, x, 16, (1, 1), a="relu6")
            y = dw(tf, rng, y, 1, (3, 3), stride=1, padding="SAME", a="relu6")
            y = conv(tf, rng, y, 8, (1, 1), a=None)
            y = x + y  # residual
            y = dw(tf, rng, y, 1, (3, 3), stride=2, padding="SAME", a="relu6")
            y = tf.reduce_mean(y, [1, 2])
            return fc(tf, rng, y, 5, bias=True)

        return f

    specs.append(
        Spec(
            "mobilenet_block_residual",
            b_mbv2,
            [("x", (1, 16, 16, 8))],
            kinds=("int8", "float"),
            input_dist="normal",
            doc="MobileNetV2-style inverted residual: 1x1 expand RELU6, dw 3x3 "
            "RELU6, 1x1 project, residual ADD, dw stride 2, MEAN, "
            "FULLY_CONNECTED",
        )
    )

    def b_mbv2_128(tf, rng):
        # The high-resolution first stage of a MobileNetV2 at 128x128 (width 0.35-like): where
        # the layer-by-layer arena peaks and patch-based inference (plan/patch.py) cuts it.
        def f(x):
            y = conv(tf, rng, x, 16, (3, 3), stride=2, padding="SAME", a="relu6")  # 64x64
            y = dw(tf, rng, y, 1, (3, 3), stride=1, padding="SAME", a="relu6")
            y = conv(tf, rng, y, 8, (1, 1), a=None)
            y = conv(tf, rng, y, 48, (1, 1), a="relu6")  # expand
            y = dw(tf, rng, y, 1, (3, 3), stride=2, padding="SAME", a="relu6")  # 32x32
            y = conv(tf, rng, y, 16, (1, 1), a=None)
            z = conv(tf, rng, y, 96, (1, 1), a="relu6")
            z = dw(tf, rng, z, 1, (3, 3), stride=1, padding="SAME", a="relu6")
            y = y + conv(tf, rng, z, 16, (1, 1), a=None)  # inverted residual
            y = conv(tf, rng, y, 96, (1, 1), a="relu6")
            y = dw(tf, rng, y, 1, (3, 3), stride=2, padding="SAME", a="relu6")  # 16x16
            y = conv(tf, rng, y, 24, (1, 1), a=None)
            y = tf.reduce_mean(y, [1, 2])
            return tf.nn.softmax(fc(tf, rng, y, 10, bias=True))

        return f

    specs.append(
        Spec(
            "mobilenetv2_stage_128",
            b_mbv2_128,
            [("x", (1, 128, 128, 3))],
            kinds=("int8",),
            input_dist="normal",
            subdir="large/",
            doc="MobileNetV2 at 128x128: conv 3x3/2, dw + project, three inverted residual "
            "blocks (expand 1x1 RELU6, dw 3x3, project, one residual ADD), MEAN, "
            "FULLY_CONNECTED, SOFTMAX: the high-resolution stage patch-based inference cuts",
        )
    )

    def b_mbv2_224(tf, rng):
        # MobileNetV2 (width 1.0) at 224x224 up to 28x28: the layer-by-layer peak is the first
        # block's 112x112x96 expansion beside its 112x112x16 input (1.4 MB, MCUNetV2's
        # "1,372 kB"); patch-based inference (plan/patch.py) runs that stage in row bands.
        def block(y, expand, out, stride, residual):
            z = conv(tf, rng, y, expand, (1, 1), a="relu6")
            z = dw(tf, rng, z, 1, (3, 3), stride=stride, padding="SAME", a="relu6")
            z = conv(tf, rng, z, out, (1, 1), a=None)
            return y + z if residual else z

        def f(x):
            y = conv(tf, rng, x, 32, (3, 3), stride=2, padding="SAME", a="relu6")  # 112x112
            y = dw(tf, rng, y, 1, (3, 3), stride=1, padding="SAME", a="relu6")
            y = conv(tf, rng, y, 16, (1, 1), a=None)
            y = block(y, 96, 24, 2, False)  # 56x56
            y = block(y, 144, 24, 1, True)
            y = block(y, 144, 32, 2, False)  # 28x28
            y = block(y, 192, 32, 1, True)
            y = tf.reduce_mean(y, [1, 2])
            return tf.nn.softmax(fc(tf, rng, y, 10, bias=True))

        return f

    specs.append(
        Spec(
            "mobilenetv2_224",
            b_mbv2_224,
            [("x", (1, 224, 224, 3))],
            kinds=("int8",),
            input_dist="normal",
            subdir="large/",
            doc="MobileNetV2 (width 1.0) at 224x224 up to 28x28: conv 3x3/2, dw + project, "
            "four inverted residual blocks (two with residual ADDs), MEAN, FULLY_CONNECTED, "
            "SOFTMAX; its layer-by-layer peak is 1.4 MB (plan/patch.py's 224x224 benchmark)",
        )
    )

    def b_kws(tf, rng):
        def f(x):
            y = conv(tf, rng, x, 16, (5, 5), stride=2, padding="SAME", a="relu")
            y = dw(tf, rng, y, 1, (3, 3), stride=1, padding="SAME", a="relu")
            y = conv(tf, rng, y, 16, (1, 1), a="relu")
            y = dw(tf, rng, y, 1, (3, 3), stride=1, padding="SAME", a="relu")
            y = conv(tf, rng, y, 16, (1, 1), a="relu")
            y = tf.nn.avg_pool2d(y, (13, 5), 1, "VALID")
            y = tf.reshape(y, (1, 16))
            return tf.nn.softmax(fc(tf, rng, y, 12, bias=True))

        return f

    specs.append(
        Spec(
            "kws_dscnn",
            b_kws,
            [("x", (1, 25, 10, 1))],
            kinds=("int8", "float"),
            input_dist="normal",
            doc="DS-CNN keyword-spotting shape: conv 5x5/2, 2x (dw 3x3 + 1x1), "
            "AVERAGE_POOL_2D, RESHAPE, FULLY_CONNECTED, SOFTMAX",
        )
    )

    def b_vision(tf, rng):
        def f(x):
            y = tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]])
            y = conv(tf, rng, y, 8, (3, 3), stride=2, padding="VALID", a=None)
            y = y * tf.nn.relu6(y + 3.0) * (1.0 / 6.0)  # hard-swish
            y = tf.nn.max_pool2d(y, 2, 2, "VALID")
            z = dw(tf, rng, y, 2, (3, 3), stride=1, padding="SAME", a=None)
            z = tf.nn.leaky_relu(z, 0.1)
            y = tf.concat([y, z], axis=3)
            y = tf.reduce_mean(y, [1, 2], keepdims=True)
            y = conv(tf, rng, y, 6, (1, 1), a=None)
            y = tf.nn.sigmoid(y)
            return tf.reshape(y, (1, 6))

        return f

    specs.append(
        Spec(
            "vision_hswish_concat_sigmoid",
            b_vision,
            [("x", (1, 32, 32, 3))],
            input_dist="normal",
            doc="PAD + 3x3/2 VALID conv, HARD_SWISH, MAX_POOL_2D, dw multiplier 2, "
            "LEAKY_RELU, CONCATENATION, MEAN keepdims, 1x1 conv, LOGISTIC, "
            "RESHAPE",
        )
    )

    # ---- issue 14: layer shapes nobody tuned the kernels for ----------------------------
    def b_audio(tf, rng):
        def f(x):  # [1, T, 1, C] audio features through K x 1 depthwise stacks
            y = conv(tf, rng, x, 12, (1, 1), a="relu")
            y = dw(tf, rng, y, 1, (3, 1), stride=1, padding="SAME", a="relu")
            y = dw(tf, rng, y, 1, (5, 1), stride=2, padding="SAME", a="relu6")
            y = dw(tf, rng, y, 1, (10, 1), stride=1, padding="SAME", a=None, dil=2)
            y = conv(tf, rng, y, 13, (1, 1), a="relu")
            y = dw(tf, rng, y, 1, (15, 1), stride=1, padding="VALID", a="relu")
            y = dw(tf, rng, y, 2, (3, 1), stride=2, padding="SAME", a=None)
            y = tf.reduce_mean(y, [1, 2])
            return tf.nn.softmax(fc(tf, rng, y, 6))

        return f

    specs.append(
        Spec(
            "audio_dw_kx1_stack",
            b_audio,
            [("x", (1, 98, 1, 10))],
            input_dist="normal",
            doc="issue 14's audio shapes: [1,T,1,C] through DEPTHWISE_CONV_2D 3x1, 5x1 stride "
            "2, 10x1 dilation 2, 15x1 VALID on 13 channels, 3x1 multiplier 2 stride 2; "
            "1x1 convs, MEAN, FULLY_CONNECTED, SOFTMAX",
        )
    )

    def b_dw_first(tf, rng):
        def f(x):  # a one-channel image whose first layer is a multiplier-8 depthwise conv
            y = dw(tf, rng, x, 8, (3, 3), stride=2, padding="SAME", a="relu")
            y = dw(tf, rng, y, 1, (3, 3), stride=1, padding="SAME", a="relu6")
            y = conv(tf, rng, y, 12, (1, 1), a="relu")
            y = dw(tf, rng, y, 3, (5, 5), stride=2, padding="SAME", a="relu")
            y = tf.reduce_mean(y, [1, 2])
            return fc(tf, rng, y, 4)

        return f

    specs.append(
        Spec(
            "dw_mult8_first_layer",
            b_dw_first,
            [("x", (1, 48, 48, 1))],
            input_dist="normal",
            doc="issue 14: DEPTHWISE_CONV_2D multiplier 8 (3x3 stride 2) as the first layer on "
            "a one-channel 48x48 image, dw 3x3, 1x1 conv to 12, dw 5x5 multiplier 3 stride 2, "
            "MEAN, FULLY_CONNECTED",
        )
    )

    def b_mbv2_odd(tf, rng):
        def block(y, expand, out, stride):
            z = conv(tf, rng, y, expand, (1, 1), a="relu6")
            z = dw(tf, rng, z, 1, (3, 3), stride=stride, padding="SAME", a="relu6")
            z = conv(tf, rng, z, out, (1, 1), a=None)
            return y + z if stride == 1 and y.shape[-1] == out else z

        def f(x):  # channel counts that are not a multiple of 4 anywhere
            y = block(x, 27, 7, 1)
            y = block(y, 33, 11, 2)
            y = block(y, 45, 11, 1)
            y = tf.reduce_mean(y, [1, 2])
            return fc(tf, rng, y, 5)

        return f

    specs.append(
        Spec(
            "mobilenet_blocks_odd_channels",
            b_mbv2_odd,
            [("x", (1, 17, 15, 7))],
            input_dist="normal",
            doc="issue 14: MobileNetV2-style inverted residual blocks with odd channel counts "
            "(7 -> 27 -> 7 residual ADD, 7 -> 33 -> 11 dw stride 2, 11 -> 45 -> 11 residual "
            "ADD) on an odd 17x15 plane, MEAN, FULLY_CONNECTED",
        )
    )
    return specs


# --------------------------------------------------------------------------
# Reading a .tflite back (tflite package; no TensorFlow needed)
# --------------------------------------------------------------------------

_TYPE_NAMES = {
    0: "float32",
    1: "float16",
    2: "int32",
    3: "uint8",
    4: "int64",
    7: "int16",
    9: "int8",
}
_ACT = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}
_PAD = {0: "SAME", 1: "VALID"}


def describe_tflite(data: bytes) -> dict:
    """Ops (with the options that matter) and I/O tensors of a flatbuffer."""
    import tflite
    from tflite.BuiltinOperator import BuiltinOperator

    opname = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
    m = tflite.Model.GetRootAsModel(data, 0)
    assert m.SubgraphsLength() == 1
    sg = m.Subgraphs(0)

    def tensor_info(idx):
        t = sg.Tensors(idx)
        q = t.Quantization()
        info = {
            "name": t.Name().decode(),
            "shape": t.ShapeAsNumpy().tolist(),
            "dtype": _TYPE_NAMES.get(t.Type(), str(t.Type())),
        }
        if q is not None and q.ScaleLength():
            sc = q.ScaleAsNumpy().tolist()
            zp = q.ZeroPointAsNumpy().tolist()
            info["scale"] = sc[0] if len(sc) == 1 else sc
            info["zero_point"] = zp[0] if len(zp) == 1 else zp
        return info

    def opts(op, cls):
        o = cls()
        t = op.BuiltinOptions()
        o.Init(t.Bytes, t.Pos)
        return o

    ops = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = m.OperatorCodes(op.OpcodeIndex())
        bc = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        name = opname.get(bc, str(bc))
        d = {
            "op": name,
            "inputs": [
                sg.Tensors(j).ShapeAsNumpy().tolist() if j >= 0 else None
                for j in op.InputsAsNumpy()
            ],
            "outputs": [sg.Tensors(j).ShapeAsNumpy().tolist() for j in op.OutputsAsNumpy()],
        }
        if name == "CONV_2D":
            o = opts(op, tflite.Conv2DOptions)
            d.update(
                padding=_PAD[o.Padding()],
                stride=[o.StrideH(), o.StrideW()],
                dilation=[o.DilationHFactor(), o.DilationWFactor()],
                activation=_ACT[o.FusedActivationFunction()],
            )
        elif name == "DEPTHWISE_CONV_2D":
            o = opts(op, tflite.DepthwiseConv2DOptions)
            d.update(
                padding=_PAD[o.Padding()],
                stride=[o.StrideH(), o.StrideW()],
                dilation=[o.DilationHFactor(), o.DilationWFactor()],
                depth_multiplier=o.DepthMultiplier(),
                activation=_ACT[o.FusedActivationFunction()],
            )
        elif name == "FULLY_CONNECTED":
            o = opts(op, tflite.FullyConnectedOptions)
            ins = op.InputsAsNumpy()
            wq = sg.Tensors(ins[1]).Quantization()
            d.update(
                keep_num_dims=bool(o.KeepNumDims()),
                has_bias=bool(len(ins) > 2 and ins[2] >= 0),
                activation=_ACT[o.FusedActivationFunction()],
            )
            if wq is not None and wq.ScaleLength():
                d["weights"] = "per-channel" if wq.ScaleLength() > 1 else "per-tensor"
        elif name in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
            o = opts(op, tflite.Pool2DOptions)
            d.update(
                padding=_PAD[o.Padding()],
                stride=[o.StrideH(), o.StrideW()],
                filter=[o.FilterHeight(), o.FilterWidth()],
                activation=_ACT[o.FusedActivationFunction()],
            )
        elif name in ("ADD", "SUB", "MUL"):
            cls = {"ADD": tflite.AddOptions, "SUB": tflite.SubOptions, "MUL": tflite.MulOptions}[
                name
            ]
            d["activation"] = _ACT[opts(op, cls).FusedActivationFunction()]
        elif name == "CONCATENATION":
            o = opts(op, tflite.ConcatenationOptions)
            d.update(axis=o.Axis(), activation=_ACT[o.FusedActivationFunction()])
        elif name == "MEAN":
            d["keep_dims"] = bool(opts(op, tflite.ReducerOptions).KeepDims())
        elif name == "SQUEEZE":
            d["squeeze_dims"] = opts(op, tflite.SqueezeOptions).SqueezeDimsAsNumpy().tolist()
        elif name == "LEAKY_RELU":
            d["alpha"] = round(float(opts(op, tflite.LeakyReluOptions).Alpha()), 6)
        elif name == "DEQUANTIZE":
            q = sg.Tensors(op.Inputs(0)).Quantization()
            d["scale"] = float(q.ScaleAsNumpy()[0])
        elif name == "SOFTMAX":
            d["beta"] = float(opts(op, tflite.SoftmaxOptions).Beta())
        if name == "QUANTIZE":
            ti, to = sg.Tensors(op.Inputs(0)), sg.Tensors(op.Outputs(0))
            d["from"] = _TYPE_NAMES.get(ti.Type())
            d["to"] = _TYPE_NAMES.get(to.Type())
        ops.append(d)
    return {
        "ops": sorted({o["op"] for o in ops}),
        "op_details": ops,
        "inputs": [tensor_info(j) for j in sg.InputsAsNumpy()],
        "outputs": [tensor_info(j) for j in sg.OutputsAsNumpy()],
    }


# --------------------------------------------------------------------------
# Generation (TensorFlow)
# --------------------------------------------------------------------------


def _sample(rng, shape, dist):
    if isinstance(dist, tuple):
        return rng.uniform(dist[0], dist[1], shape).astype(np.float32)
    if dist == "normal":
        return rng.normal(0.0, 1.0, shape).astype(np.float32)
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32)


def _dists(spec: Spec) -> list:
    if isinstance(spec.input_dist, list):
        assert len(spec.input_dist) == len(spec.inputs)
        return spec.input_dist
    return [spec.input_dist] * len(spec.inputs)


def _pin_shapes(data: bytes, pins: dict) -> bytes:
    """Make dynamic dims static: set shape and shape_signature of every
    tensor from a TFLite-interpreter shape propagation with the pinned
    input shapes."""
    import tensorflow as tf
    from tensorflow.lite.tools import flatbuffer_utils as fbu

    interp = tf.lite.Interpreter(model_content=data)
    for d in interp.get_input_details():
        name = d["name"].split(":")[0].removeprefix("serving_default_")
        interp.resize_tensor_input(d["index"], pins[name], strict=False)
    interp.allocate_tensors()
    shapes = {d["index"]: list(d["shape"]) for d in interp.get_tensor_details()}
    model = fbu.convert_bytearray_to_object(bytearray(data))
    for i, t in enumerate(model.subgraphs[0].tensors):
        if t.shapeSignature is not None and any(s < 0 for s in t.shapeSignature):
            t.shape = np.array(shapes[i], dtype=np.int32)
            t.shapeSignature = None
    return bytes(fbu.convert_object_to_bytearray(model))


def convert(tf, spec: Spec, kind: str):
    rng = np.random.default_rng(seed_of(spec.name))  # same weights for all kinds
    fn = tf.function(spec.build(tf, rng), autograph=False)
    sigs = [tf.TensorSpec(shape, tf.float32, name=n) for n, shape in spec.inputs]
    cf = fn.get_concrete_function(*sigs)
    conv = tf.lite.TFLiteConverter.from_concrete_functions([cf], fn)
    if kind in ("int8", "float_io_int8", "16x8"):
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        static = [spec.pin_shapes.get(n, shape) for n, shape in spec.inputs]
        crng = np.random.default_rng(seed_of(spec.name) + 1)
        dists = _dists(spec)
        calib = [[_sample(crng, s, d) for s, d in zip(static, dists)] for _ in range(N_CALIB)]

        def rep():
            yield from calib  # each sample in the concrete function's argument order

        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if kind == "16x8":
            conv.target_spec.supported_ops = [
                tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
            ]
            conv.inference_input_type = tf.int16
            conv.inference_output_type = tf.int16
        elif kind == "int8":
            conv.inference_input_type = tf.int8
            conv.inference_output_type = tf.int8
        else:
            conv.inference_input_type = tf.float32
            conv.inference_output_type = tf.float32
        if spec.dense_per_tensor:
            conv._experimental_disable_per_channel_quantization_for_dense_layers = True
    data = conv.convert()
    if spec.pin_shapes:
        data = _pin_shapes(data, spec.pin_shapes)
    return data


def reference_io(tf, data: bytes, spec: Spec):
    """One fixed input and TFLite's reference-kernel output for it."""
    interp = tf.lite.Interpreter(
        model_content=data,
        experimental_op_resolver_type=tf.lite.experimental.OpResolverType.BUILTIN_REF,
    )
    interp.allocate_tensors()
    rng = np.random.default_rng(seed_of(spec.name) + 2)
    ins = []
    for d, dist in zip(interp.get_input_details(), _dists(spec)):
        x = _sample(rng, d["shape"], dist)
        if d["dtype"] in (np.int8, np.int16):
            s, z = d["quantization"]
            info = np.iinfo(d["dtype"])
            x = np.clip(np.round(x / s) + z, info.min, info.max).astype(d["dtype"])
        interp.set_tensor(d["index"], x)
        ins.append(x)
    interp.invoke()
    outs = [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]
    return ins, outs


def generate(only: list[str] | None = None) -> None:
    """Write every model, or with `only` (spec names) just those, the other files, their
    manifest entries and reference I/O kept as they are."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    tf.random.set_seed(0)
    if only is None:
        for p in [*HERE.glob("*.tflite"), *HERE.glob("large/*.tflite")]:
            if not p.name.startswith("digits_"):
                p.unlink()
    suffix = {"int8": "int8", "float": "float", "float_io_int8": "int8", "16x8": "16x8"}
    manifest = {
        "generator": "tests/models/make_models.py",
        "tensorflow": tf.__version__,
        "models": [],
    }
    ref = {}
    kept = []
    if only is not None:
        old = json.loads(MANIFEST.read_text())["models"]
        ref = dict(np.load(REFERENCE))
        names = {f"{s.subdir}{s.name}_{suffix[k]}.tflite" for s in model_specs() if s.name in only
                 for k in s.kinds}  # fmt: skip
        kept = [m for m in old if m["file"] not in names and not m["file"].startswith("digits_")]
        ref = {k: v for k, v in ref.items()
               if f"{k.split('__')[0]}.tflite" not in {Path(n).name for n in names}}
    for spec in model_specs():
        if only is not None and spec.name not in only:
            continue
        for kind in spec.kinds:
            stem = f"{spec.name}_{suffix[kind]}"
            data = convert(tf, spec, kind)
            (HERE / spec.subdir).mkdir(exist_ok=True)
            (HERE / spec.subdir / f"{stem}.tflite").write_bytes(data)
            info = describe_tflite(data)
            ins, outs = reference_io(tf, data, spec)
            for i, x in enumerate(ins):
                ref[f"{stem}__in{i}"] = x
            for j, y in enumerate(outs):
                ref[f"{stem}__out{j}"] = y
            manifest["models"].append(
                {
                    "file": f"{spec.subdir}{stem}.tflite",
                    "kind": kind,
                    "description": spec.doc,
                    "bytes": len(data),
                    **info,
                }
            )
            print(f"wrote {stem}.tflite ({len(data)} B)", flush=True)
    manifest["models"] = kept + manifest["models"] + digits_entries()
    np.savez_compressed(REFERENCE, **ref)
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
    print_coverage(manifest)


def digits_entries() -> list:
    """Manifest entries for the trained digits models (make_digits.py), if present."""
    out = []
    for p in sorted(HERE.glob("digits_*.tflite")):
        data = p.read_bytes()
        info = describe_tflite(data)
        out.append(
            {
                "file": p.name,
                "kind": "int8" if info["inputs"][0]["dtype"] == "int8" else "float",
                "description": "digits CNN trained by make_digits.py on sklearn load_digits; "
                "inputs/labels in digits_data.npz (no entry in reference_io.npz)",
                "bytes": len(data),
                **info,
            }
        )
    return out


def refresh_digits_in_manifest() -> None:
    """Replace the digits_* entries of manifest.json (called by make_digits.py)."""
    if not MANIFEST.is_file():
        return
    manifest = json.loads(MANIFEST.read_text())
    manifest["models"] = [
        m for m in manifest["models"] if not m["file"].startswith("digits_")
    ] + digits_entries()
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")


def print_coverage(manifest) -> None:
    print("\nOps per model:")
    covered = set()
    for m in manifest["models"]:
        covered.update(m["ops"])
        print(f"  {m['file']:<48} {', '.join(m['ops'])}")
    acts = {
        o["activation"] for m in manifest["models"] for o in m["op_details"] if "activation" in o
    }
    print(f"\nfused activations seen: {sorted(acts)}")
    missing = [op for op in REQUIRED_OPS if op not in covered]
    print(f"required ops missing: {missing or 'none'}")


# --------------------------------------------------------------------------
# One model per op family of issue 17 (families/), written by tinyhost's writer
# --------------------------------------------------------------------------
#
# TF 2.21's converter cannot make these runnable by TFLM (it crashes calibrating a
# quantized LSTM; int4 weights need the project's quantizer; the int16 QUANTIZE edges to
# and from int32 and the rank-1/rank-2 SVDF stack have no Keras layer), so each family is
# the graph the device tests build (tests/*_graphs.py and the op-family device tests),
# drawn from its fixed seed and written with tinyhost.tflite.writer. This part needs the
# tinyhost package (not TensorFlow): `--families` with the project's venv, which
# `--verify-with` runs before `--verify`. Stateful families carry "stateful" in the
# manifest; tests/test_op_family_models.py runs them over several invokes with a reset.

FAMILIES = HERE / "families"
FAMILIES_MANIFEST = FAMILIES / "manifest.json"


def family_graphs() -> list:
    """(stem, graph, stateful, description) per family, each from its builder's seed."""
    tests_dir = str(HERE.parent)
    if tests_dir not in sys.path:
        sys.path.insert(0, tests_dir)
    from graphs_16x8 import chain_16x8
    from lstm_graphs import lstm_stack_graph
    from svdf_graphs import kws_svdf_graph
    from test_elementwise_unary_binary_on_device import elementwise_graph
    from test_int4_on_device import _int4_graph
    from test_int16_activations_on_device import int16_activations_graph
    from test_rowwise_on_device import rowwise_graph

    return [
        ("elementwise_int8", elementwise_graph(), False,
         "ABS, ELU, RSQRT, ZEROS_LIKE, MINIMUM, MAXIMUM, SQUARED_DIFFERENCE, PRELU "
         "(per-channel and scalar alpha), DIV (RELU6), FILL; broadcasts"),
        ("rowwise_int8", rowwise_graph(), False,
         "LOG_SOFTMAX, L2_NORMALIZATION, CUMSUM (reverse, exclusive), SUM, REDUCE_MAX; "
         "rows of 16 and 5"),
        ("chain_16x8", chain_16x8(np.random.default_rng(21)), False,
         "16x8: QUANTIZE s8->s16, CONV_2D/DEPTHWISE_CONV_2D (per-channel) and "
         "FULLY_CONNECTED (per-tensor) with int16 activations and int64 bias, ADD, MUL, "
         "SOFTMAX int16, QUANTIZE s16->s8"),
        ("int16_activations", int16_activations_graph(), False,
         "int16 LOGISTIC, TANH (multiplier and power-of-two input scales), SUB (RELU), "
         "QUANTIZE s8<->s16<->s32"),
        ("svdf_kws", kws_svdf_graph(np.random.default_rng(17)), True,
         "SVDF rank 1 then rank 2 (TFLM needs both biases), int16 state; SOFTMAX s8->s16, "
         "QUANTIZE s16->s8 and s8->s16 edges"),
        ("lstm_stack", lstm_stack_graph(np.random.default_rng(23)), True,
         "two stacked UNIDIRECTIONAL_SEQUENCE_LSTMs (batch-major with cell clip, "
         "time-major), int16 cell state"),
        ("int4_chain", _int4_graph(), False,
         "packed int4 weights: CONV_2D (per-channel, RELU), DEPTHWISE_CONV_2D (mult 3, "
         "stride 2), FULLY_CONNECTED (per-tensor, odd rows)"),
    ]


def write_families() -> None:
    from tinyhost.tflite.writer import write_model

    FAMILIES.mkdir(exist_ok=True)
    entries = []
    for stem, graph, stateful, doc in family_graphs():
        data = write_model(graph)
        (FAMILIES / f"{stem}.tflite").write_bytes(data)
        ops = sorted({op.kind.name for op in graph.ops})
        entries.append({"file": f"{stem}.tflite", "stateful": stateful, "description": doc,
                        "bytes": len(data), "ops": ops})
        print(f"wrote families/{stem}.tflite ({len(data)} B): {', '.join(ops)}", flush=True)
    FAMILIES_MANIFEST.write_text(
        json.dumps({"generator": "tests/models/make_models.py --families",
                    "models": entries}, indent=1) + "\n")


def verify_families() -> int:
    """Each family file in TFLite Micro: it loads, runs three invokes (state carried), and
    every output equals tinyhost's reference on the same inputs."""
    from tflite_micro.python.tflite_micro import runtime

    from tinyhost import reference
    from tinyhost.tflite import read_model

    bad = 0
    entries = sorted(FAMILIES.glob("*.tflite"))  # the writer's and TF's converter's
    for path in entries:
        try:
            graph = read_model(path)
            data = path.read_bytes()  # kept alive while TFLM reads it
            it = runtime.Interpreter.from_bytes(data, arena_size=1 << 20)
            rng = np.random.default_rng(seed_of(path.name))
            state = reference.initial_state(graph)
            for k in range(3):
                xs = reference.random_inputs(graph, rng)
                for i, x in enumerate(xs):
                    it.set_input(x, i)
                it.invoke()
                ours = reference.run(graph, xs, state=state)
                state = ours.state
                for j, want in enumerate(ours.outputs):
                    got = np.asarray(it.get_output(j)).reshape(want.shape)
                    if not np.array_equal(got, want):
                        n = int(np.count_nonzero(got != want))
                        raise AssertionError(f"invoke {k}, output {j}: {n} values differ")
            print(f"ok  families/{path.name:<40} 3 invokes bit-exact")
        except Exception as e:  # noqa: BLE001 - report every model
            bad += 1
            print(f"ERR families/{path.name:<40} {type(e).__name__}: {e}")
    print(f"families: {len(entries) - bad} passed, {bad} failed")
    return 1 if bad else 0


# --------------------------------------------------------------------------
# Verification in TensorFlow Lite Micro (no TensorFlow)
# --------------------------------------------------------------------------


def verify() -> int:
    from tflite_micro.python.tflite_micro import runtime

    manifest = json.loads(MANIFEST.read_text())
    ref = np.load(REFERENCE)
    bad = 0
    for m in manifest["models"]:
        stem = Path(m["file"]).stem
        if f"{stem}__in0" not in ref:
            print(f"--  {m['file']:<48} no reference I/O (digits: make_digits.py --verify)")
            continue
        if m["file"].startswith("families/"):
            # TFLite's reference kernels are not TFLM's here (int8 SUM rescales otherwise,
            # 16x8 rounds otherwise): checked against tinyhost's reference below instead
            print(f"--  {m['file']:<48} TFLM against tinyhost's reference (families below)")
            continue
        try:
            it = runtime.Interpreter.from_file(
                str(HERE / m["file"]),
                arena_size=8 * 1024 * 1024,  # the 224x224 MobileNetV2 needs ~4.7 MB in TFLM
                intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors,
            )
            for i in range(len(m["inputs"])):
                it.set_input(ref[f"{stem}__in{i}"], i)
            it.invoke()
            diffs = []
            for j in range(len(m["outputs"])):
                y = it.get_output(j)
                r = ref[f"{stem}__out{j}"]
                if y.shape != r.shape or y.dtype != r.dtype:
                    raise AssertionError(f"out{j}: {y.shape}/{y.dtype} vs {r.shape}/{r.dtype}")
                diffs.append(float(np.max(np.abs(y.astype(np.float64) - r))))
            worst = max(diffs)
            if m["kind"] == "float_io_int8":  # one LSB of the dequantized output
                tol = 1.001 * max(o["scale"] for o in m["op_details"] if o["op"] == "DEQUANTIZE")
            elif m["outputs"][0]["dtype"] == "int8":
                tol = 1.0
            else:
                tol = 1e-4
            ok = worst <= tol
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} {m['file']:<48} max|tflm-tflite| = {worst:g}")
        except Exception as e:  # noqa: BLE001 - report every model
            bad += 1
            print(f"ERR {m['file']:<48} {type(e).__name__}: {e}")
    n = sum(1 for m in manifest["models"] if f"{Path(m['file']).stem}__in0" in ref
            and not m["file"].startswith("families/"))
    print(f"{n - bad} passed, {bad} failed")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--verify", action="store_true", help="only run the committed models in TFLite Micro"
    )
    ap.add_argument(
        "--verify-with",
        metavar="PYTHON",
        help="after generating, run --verify with this interpreter",
    )
    ap.add_argument(
        "--families",
        action="store_true",
        help="only write families/ (needs tinyhost, not TensorFlow)",
    )
    ap.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="regenerate only these specs (e.g. rowwise_tf ops), keeping the rest",
    )
    a = ap.parse_args()
    if a.verify:
        return verify() | (verify_families() if FAMILIES_MANIFEST.is_file() else 0)
    if a.families:
        write_families()
        return 0
    generate(a.only)
    if a.verify_with:
        return subprocess.call([a.verify_with, __file__, "--families"]) or subprocess.call(
            [a.verify_with, __file__, "--verify"]
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
