"""Host-prepared int16 weights for the compiled backend's MAC-heavy layers (--optimize speed).

The compiled backend knows every weight when it generates code, so for a layer it may store
the weights pre-widened to int16 in the order the DSP loop consumes them: the loop then loads
halfword pairs and issues SMLAD, with no SXTB16 per weight word (kernels_c/include/th_nn.h,
th_fc_s8_w16). It costs flash (two bytes per weight instead of one), so `choose` takes it
layer by layer only where the model still fits the board's flash.

FULLY_CONNECTED layout, per block of 4 output channels (Cout padded to a multiple of 4 with
zero rows) and chunk of 4 inputs k..k+3 (Cin padded with zeros): for each channel of the block
w[c][k], w[c][k+2], w[c][k+1], w[c][k+3] (SXTB16 and SXTB16 ROR 8 of the input word). The
input offset moves into the bias: bias[c] + input_offset * sum_k w[c][k], wrapped to int32
like the kernels' accumulators, so the accumulators equal the int8 kernels' bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FAST_MAX_E = 22  # TH_FAST_MAX_E, kernels_c/include/th_nn_support.h
FAST_ACC_LIMIT = 1 << 29  # th_fast_rq_ok: |acc| < 2^29
FC_W16_FUNCTION = "th_fc_s8_w16"
CONV_1X1_W16_FUNCTION = "th_conv_1x1_s8_w16"
CONV_3X3_W16_FUNCTION = "th_conv_3x3_s8_w16"
FC_W16_BLOCK = 4  # output channels per block: FULLY_CONNECTED
CONV_W16_BLOCK = 2  # CONV_2D (th_nn_mat_mult_s16w_tab: channel pairs)


@dataclass(frozen=True)
class Widened:
    """A layer stored with int16 weights: its source op, kind, the flash it adds and the
    kernel calls reading its one int16 array (a patched stage's op: one per band)."""

    op: int
    kind: str
    extra_flash_bytes: int
    calls: int = 1


def _wrap32(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, np.int64)
    return ((v + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)


def _pad(n: int) -> int:
    return (n + 3) & ~3


def w16_weights(w: np.ndarray, block: int) -> np.ndarray:
    """[Cout, K...] int8 -> 1-D int16 array: per block of `block` channels (Cout padded with
    zero channels) and chunk of 4 taps (K padded with zeros), each channel's taps in the
    order 0, 2, 1, 3 (th_fc_s8_w16 with block 4, th_conv_1x1_s8_w16 with block 2)."""
    w = np.asarray(w, np.int8).reshape(w.shape[0], -1)
    cout, k = w.shape
    rows = -(-cout // block) * block
    padded = np.zeros((rows, _pad(k)), np.int16)
    padded[:cout, :k] = w
    # [blocks, block ch, chunks, 4 taps] -> [blocks, chunks, block ch, taps 0, 2, 1, 3]
    blocks = padded.reshape(rows // block, block, _pad(k) // 4, 4).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(blocks[..., [0, 2, 1, 3]]).reshape(-1)


def fc_w16_weights(w: np.ndarray) -> np.ndarray:
    """[Cout, Cin] int8 -> 1-D int16 array in th_fc_s8_w16's order."""
    return w16_weights(w, FC_W16_BLOCK)


def fc_w16_bias(bias: np.ndarray | None, w: np.ndarray, input_offset: int) -> np.ndarray:
    """int32[round_up4(Cout)]: bias + input_offset * sum of each channel's weights, wrapped."""
    w = np.asarray(w, np.int64).reshape(w.shape[0], -1)
    cout = w.shape[0]
    b = np.zeros(_pad(cout), np.int64)
    if bias is not None:
        b[:cout] = np.asarray(bias, np.int64)
    b[:cout] += input_offset * w.sum(axis=1)
    return _wrap32(b)


def fc_fast_ok(cin: int, bias: np.ndarray | None, multipliers: np.ndarray,
               shifts: np.ndarray) -> bool:
    """Whether th_fast_rq is exact for every channel of a FULLY_CONNECTED: the conditions
    th_nn_fc_s8 checks at entry, with the original bias."""
    max_bias = 0 if bias is None or len(bias) == 0 else int(np.abs(np.asarray(bias,
                                                                              np.int64)).max())
    m = np.asarray(multipliers, np.int64)
    s = np.asarray(shifts, np.int64)
    return bool(cin * 255 * 255 + max_bias < FAST_ACC_LIMIT and (m >= 0).all()
                and ((s <= -1) & (s >= -FAST_MAX_E)).all())


FC_W16_TABLE_MIN_COUT = 16  # th_fc_s8_w16's row loop (fewer outputs: the block loop)


def fc_w16_rq_table(multipliers: np.ndarray, shifts: np.ndarray,
                    output_offset: int) -> np.ndarray:
    """th_fc_s8_w16's per-channel constants for mult_step 2 (int32[round_up4(Cout) * 3]):
    per block of four channels the th_fast_rq multiplier and round_zp of each channel in
    turn, then the four e; the padding channels repeat the last one. Only where fc_fast_ok
    holds (e in [1, 22], multipliers >= 0)."""
    m = np.asarray(multipliers, np.int64)
    e = -np.asarray(shifts, np.int64)
    pad = _pad(len(m)) - len(m)
    m, e = np.pad(m, (0, pad), mode="edge"), np.pad(e, (0, pad), mode="edge")
    round_zp = _wrap32((np.int64(1) << (e - 1)) + (np.int64(output_offset) << e))
    pairs = np.stack([m, round_zp.astype(np.int64)], axis=1).reshape(-1, 8)
    return _wrap32(np.concatenate([pairs, e.reshape(-1, 4)], axis=1).reshape(-1))


def fc_extra_flash(cout: int, cin: int, has_bias: bool, per_channel: bool) -> int:
    """Flash th_fc_s8_w16's arrays take beyond the int8 kernel's: int16 weights and a bias
    (always, Cout padded to 4) against block-4 int8 weights and the bias if any, plus the
    multiplier and shift arrays a per-tensor layer now has, or the row loop's table a
    per-channel one of FC_W16_TABLE_MIN_COUT outputs or more may get (fc_w16_rq_table)."""
    table = _pad(cout) * 12 if per_channel and cout >= FC_W16_TABLE_MIN_COUT else 0
    widened = _pad(cout) * _pad(cin) * 2 + _pad(cout) * 4 + (table if per_channel else 8)
    return widened - (cout * _pad(cin) + (cout * 4 if has_bias else 0))


def conv_rq_table(bias: np.ndarray | None, multipliers: np.ndarray, shifts: np.ndarray,
                  output_offset: int, taps: int, act_min: int, act_max: int) -> np.ndarray | None:
    """th_conv_3x3_s8_w16's requantization constants per channel pair (int32 [pairs, 8]:
    bias, multiplier, round_zp, e of both channels), or None when the kernel's table does
    not apply: the fast form must be exact for every channel (th_nn_out_stage_init with
    th_acc_bound(taps, 128, bias)), no activation clamp, a bias."""
    if bias is None or act_min > -128 or act_max < 127:
        return None
    b = np.asarray(bias, np.int64)
    m = np.asarray(multipliers, np.int64)
    s = np.asarray(shifts, np.int64)
    bound = taps * 256 * 128 + (int(np.abs(b).max()) if b.size else 0)
    if not (bound < FAST_ACC_LIMIT and (m >= 0).all() and ((s <= -1) & (s >= -FAST_MAX_E)).all()):
        return None
    e = -s
    round_zp = _wrap32((np.int64(1) << (e - 1)) + (np.int64(output_offset) << e))
    pairs = len(b) // 2
    columns = [b, m, round_zp.astype(np.int64), e]
    table = np.stack([c[: 2 * pairs].reshape(pairs, 2) for c in columns], axis=1)
    return _wrap32(table.reshape(pairs, 8))


def conv_extra_flash(cout: int, k: int, table: np.ndarray | None = None) -> int:
    """Flash a CONV_2D's int16 weights take beyond the int8 block-2 layout, with the
    requantization table th_conv_3x3_s8_w16 gets (if any)."""
    weights = -(-cout // CONV_W16_BLOCK) * CONV_W16_BLOCK * _pad(k) * 2 - cout * _pad(k)
    return weights + (0 if table is None else table.nbytes)


def drop_largest(chosen: frozenset[int], extra: dict[int, int]) -> frozenset[int]:
    """`chosen` without the layer that adds the most flash (the next try when the model
    does not fit)."""
    largest = max(sorted(chosen), key=lambda op: extra[op])
    return chosen - {largest}
