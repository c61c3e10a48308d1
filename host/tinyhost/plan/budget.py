"""Does the plan fit the board? Checked before any build; refused with the numbers if not."""

from __future__ import annotations

from dataclasses import dataclass

from tinyhost.errors import TinyhostError
from tinyhost.plan.footprint import FlashUsage
from tinyhost.plan.planner import MemoryPlan

# Kept free for what the plan does not see: stack, firmware state, and the code itself.
DEFAULT_RAM_RESERVE = 4 * 1024
DEFAULT_FLASH_RESERVE = 64 * 1024


class DoesNotFitError(TinyhostError):
    """The model's arena or constants exceed the board's RAM or flash."""


@dataclass(frozen=True)
class BoardLimits:
    name: str
    ram_bytes: int | None  # None: no limit (the host board)
    flash_bytes: int | None
    alignment: int = 4  # 16 on MVE cores
    ram_reserve: int = DEFAULT_RAM_RESERVE
    flash_reserve: int = DEFAULT_FLASH_RESERVE
    dsp: bool = True


@dataclass(frozen=True)
class Budget:
    board: BoardLimits
    ram_needed: int  # arena + reserve
    flash_needed: int  # model constants + reserve

    @property
    def ram_headroom(self) -> int | None:
        b = self.board.ram_bytes
        return None if b is None else b - self.ram_needed

    @property
    def flash_headroom(self) -> int | None:
        b = self.board.flash_bytes
        return None if b is None else b - self.flash_needed

    @property
    def fits(self) -> bool:
        return all(r is None or r >= 0 for r in (self.ram_headroom, self.flash_headroom))

    def describe(self) -> str:
        b = self.board
        parts = []
        for what, need, have, room, reserve in (
            ("RAM", self.ram_needed, b.ram_bytes, self.ram_headroom, b.ram_reserve),
            ("flash", self.flash_needed, b.flash_bytes, self.flash_headroom, b.flash_reserve),
        ):
            if have is None or room is None:
                parts.append(f"{what} {need:,} bytes (no limit)")
                continue
            verdict = f"{room:,} bytes free" if room >= 0 else f"exceeded by {-room:,} bytes"
            parts.append(
                f"{what} {need:,} of {have:,} bytes (incl. {reserve:,} reserved): {verdict}"
            )
        return f"{b.name}: " + "; ".join(parts)


def load_board_limits(name: str) -> BoardLimits:
    """RAM/flash sizes and kernel build of a board (boards/<name>/board.json)."""
    from tinyhost.boards import load_board

    b = load_board(name)
    return BoardLimits(
        name,
        None if b.ram is None else b.ram.size,
        None if b.flash is None else b.flash.size,
        b.arena_alignment,
        dsp=b.dsp,
    )


def budget(plan: MemoryPlan, flash: FlashUsage, board: BoardLimits) -> Budget:
    return Budget(
        board,
        ram_needed=plan.arena_bytes + board.ram_reserve,
        flash_needed=flash.total_bytes + board.flash_reserve,
    )


def require_fits(plan: MemoryPlan, flash: FlashUsage, board: BoardLimits) -> Budget:
    """The budget, or DoesNotFitError saying by how many bytes RAM / flash are exceeded."""
    b = budget(plan, flash, board)
    if not b.fits:
        model = plan.graph.name or plan.graph.source
        raise DoesNotFitError(f"{model} does not fit {b.describe()}")
    return b
