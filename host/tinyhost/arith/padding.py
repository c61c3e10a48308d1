"""SAME/VALID window geometry, computed exactly as TFLite's ComputePaddingHeightWidth.

Shared by the reference kernels and the C code generators: every conv and pool window in
tinyhost is placed by these numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinyhost.ir import Padding


@dataclass(frozen=True)
class WindowPadding:
    """Rows/columns of implicit padding around the input; SAME puts any odd one bottom/right."""

    top: int
    bottom: int
    left: int
    right: int
    out_h: int  # output size TFLite computes for these settings
    out_w: int


def compute_out_size(padding: Padding, in_size: int, filter_size: int, stride: int,
                     dilation: int = 1) -> int:
    """TFLite's ComputeOutSize (matching TensorFlow's GetWindowedOutputSize)."""
    if stride == 0:
        return 0
    effective = (filter_size - 1) * dilation + 1
    if padding is Padding.SAME:
        return (in_size + stride - 1) // stride
    return max(0, (in_size + stride - effective) // stride)


def compute_padding_1d(stride: int, dilation: int, in_size: int, filter_size: int,
                       out_size: int) -> tuple[int, int]:
    """(before, after) as ComputePaddingWithOffset: total split in half, the extra one after."""
    effective = (filter_size - 1) * dilation + 1
    total = max(0, (out_size - 1) * stride + effective - in_size)
    return total // 2, total - total // 2


def compute_window_padding(
    padding: Padding,
    in_h: int,
    in_w: int,
    filter_h: int,
    filter_w: int,
    stride_h: int,
    stride_w: int,
    dilation_h: int = 1,
    dilation_w: int = 1,
    explicit: tuple[int, int, int, int] | None = None,
) -> WindowPadding:
    """ComputePaddingHeightWidth: output size from the padding mode, then the padding.
    `explicit` (top, bottom, left, right) replaces the mode: a conv with a PAD folded in."""
    if explicit is not None:
        top, bottom, left, right = explicit
        return WindowPadding(
            top=top, bottom=bottom, left=left, right=right,
            out_h=_explicit_out_size(in_h + top + bottom, filter_h, stride_h, dilation_h),
            out_w=_explicit_out_size(in_w + left + right, filter_w, stride_w, dilation_w),
        )  # fmt: skip
    out_h = compute_out_size(padding, in_h, filter_h, stride_h, dilation_h)
    out_w = compute_out_size(padding, in_w, filter_w, stride_w, dilation_w)
    top, bottom = compute_padding_1d(stride_h, dilation_h, in_h, filter_h, out_h)
    left, right = compute_padding_1d(stride_w, dilation_w, in_w, filter_w, out_w)
    return WindowPadding(top=top, bottom=bottom, left=left, right=right, out_h=out_h, out_w=out_w)


def _explicit_out_size(padded: int, filter_size: int, stride: int, dilation: int) -> int:
    """VALID output extent over an input already `padded`."""
    return max(0, (padded - ((filter_size - 1) * dilation + 1)) // stride + 1)
