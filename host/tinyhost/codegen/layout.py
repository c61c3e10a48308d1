"""Filter layouts the DSP kernels read (kernels_c/include/th_nn_support.h, ARCHITECTURE.md §4.3).

CONV_2D filters use blocks of 2 output channels, FULLY_CONNECTED weights blocks of 4: the
[Cout, K] matrix (K = KH*KW*Cin) is zero-padded to Kp = round_up(K, 4) and, inside each block
of g channels (the last block may be smaller), the 4-byte chunks of the channels interleave,
so one word load brings 4 taps of a channel and the next words the same taps of the block's
other channels: index(c, k) = (c // B) * B * Kp + (k // 4) * 4 * g + (c % B) * 4 + k % 4.
Portable builds take the plain OHWI / [Cout, Cin] layout; depthwise filters are always plain.
"""

from __future__ import annotations

import numpy as np

CONV_BLOCK = 2
FC_BLOCK = 4


def round_up4(k: int) -> int:
    return (k + 3) & ~3


def interleave_filter(w: np.ndarray, block: int) -> np.ndarray:
    """[Cout, ...] int8 -> 1-D int8 array of Cout * round_up4(K) bytes in block layout."""
    cout = w.shape[0]
    matrix = np.asarray(w, np.int8).reshape(cout, -1)
    k = matrix.shape[1]
    kp = round_up4(k)
    padded = np.zeros((cout, kp), np.int8)
    padded[:, :k] = matrix
    out = np.empty(cout * kp, np.int8)
    for first in range(0, cout, block):
        g = min(block, cout - first)
        # [g, kp/4, 4] -> [kp/4, g, 4]: chunk j of every channel of the block, in order.
        chunk = padded[first : first + g].reshape(g, kp // 4, 4).transpose(1, 0, 2)
        out[first * kp : (first + g) * kp] = chunk.reshape(-1)
    return out


def conv_filter_layout(w: np.ndarray, interleaved: bool) -> np.ndarray:
    """The CONV_2D filter bytes a build expects (OHWI, or block-2 interleaved)."""
    if interleaved:
        return interleave_filter(w, CONV_BLOCK)
    return np.ascontiguousarray(w, np.int8).reshape(-1)


def fc_weights_layout(w: np.ndarray, interleaved: bool) -> np.ndarray:
    """The FULLY_CONNECTED weight bytes a build expects ([Cout, Cin], or block-4)."""
    if interleaved:
        return interleave_filter(w, FC_BLOCK)
    return np.ascontiguousarray(w, np.int8).reshape(-1)


def round_up8(k: int) -> int:
    return (k + 7) & ~7


# Nibble p of each group of eight holds value S4_ORDER[p] of the group (p's three bits
# reversed), so that one word unpacks into the int16 pairs (v0, v1), (v2, v3), (v4, v5),
# (v6, v7) by two masks and SXTB16 / SXTB16 ROR 8 (th_nn_s4.h).
S4_ORDER = (0, 4, 2, 6, 1, 5, 3, 7)


def s4_rows(matrix: np.ndarray) -> np.ndarray:
    """[Cout, K] int4 values (int8 in [-8, 7]) -> the packed rows the th_*_s4 kernels read
    (th_nn.h "INT4", every build): each row zero-padded to round_up8(K) values, two per byte
    (nibble 2i low, 2i + 1 high, as TFLite), the values of each group of eight in S4_ORDER."""
    m = np.asarray(matrix, np.int8)
    cout, k = m.shape
    kp = round_up8(k)
    padded = np.zeros((cout, kp), np.uint8)
    padded[:, :k] = m.astype(np.uint8) & 0xF
    nibbles = padded.reshape(cout, kp // 8, 8)[:, :, list(S4_ORDER)].reshape(cout, kp)
    return (nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)).reshape(-1)


def s4_dw_run(w: np.ndarray) -> np.ndarray:
    """A DEPTHWISE_CONV_2D filter ([1, KH, KW, C] int4 values) as th_dw_conv_s4 reads it
    (th_nn.h "INT4"): the KH*KW*C values in that order, zero-padded to a multiple of 8 (whole
    words), two per byte in TFLite's nibble order (value 2i low, 2i + 1 high)."""
    v = np.asarray(w, np.int8).reshape(-1)
    padded = np.zeros(round_up8(v.size), np.uint8)
    padded[: v.size] = v.astype(np.uint8) & 0xF
    return padded[0::2] | (padded[1::2] << 4)


def s4_filter_rows(w: np.ndarray, depthwise: bool) -> np.ndarray:
    """The packed int4 weights of a CONV_2D filter (OHWI: one s4_rows row per output channel)
    or a DEPTHWISE_CONV_2D filter ([1, KH, KW, C]: s4_dw_run)."""
    a = np.asarray(w, np.int8)
    if depthwise:
        return s4_dw_run(a)
    return s4_rows(a.reshape(a.shape[0], -1))
