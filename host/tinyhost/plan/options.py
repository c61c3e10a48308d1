"""What the planner may assume about the kernels it plans for."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class PlanOptions:
    """Switches for every overlap rule of `overlap.OVERLAP_TABLE`, and the scratch build.

    The rules state what the kernels_c kernels guarantee (th_nn.h "Aliasing"); the interpreter
    blob plans with all of them. `inplace=False` turns every in-place rule off at once
    (aliases of RESHAPE/SQUEEZE stay: they need nothing from a kernel), for comparison.
    """

    alignment: int = 4  # 16 for MVE boards
    alias: bool = True  # RESHAPE / SQUEEZE output is its input's bytes
    inplace: bool = True  # master switch for the rules below
    inplace_elementwise: bool = True
    inplace_depthwise: bool = True
    inplace_pointwise: bool = True
    sliding: bool = True  # raster-order overlap of CONV_2D / AVERAGE_POOL_2D / MAX_POOL_2D
    dsp: bool = True  # scratch sizes of the Cortex-M DSP kernels (False: portable C)
    mve: bool = False  # with dsp: the Helium build's CONV_2D scratch sizes (th_nn_mve_s8.c)
    reorder: bool = True  # try other topological op orders for graphs with branches

    def rule_enabled(self, option: str) -> bool:
        if option == "alias":
            return self.alias
        return self.inplace and bool(getattr(self, option))

    def without_inplace(self) -> PlanOptions:
        return replace(self, inplace=False)
