"""Does a model fit the board? One policy for `plan --board`, `convert`, `run` and `bench`.

The firmware needs, besides the model's arena and its data in flash, RAM and flash that no
plan sees. They are named here once (ARCHITECTURE.md §4.8), so every command adds the same
reserves and prints the same figures and verdict; a model that does not fit is refused before
any file is written, with the bytes missing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tinyhost.boards import Board
from tinyhost.errors import TinyhostError
from tinyhost.plan.stack import DEFAULT_STACK_BYTES, stack_reserve

# RAM the plan does not see: the stack (derived per model from the static stack bound of the
# kernels it calls, plan/stack.py; the linker script reserves what model.cmake asks for)
# The protocol firmware's .data/.bss besides arena and load buffer: protocol frame buffers,
# the interpreter context and its per-op profile (measured about 5 KiB), with headroom.
FIRMWARE_STATE_BYTES = 8 << 10
# Flash for the firmware's code: runtime, protocol, board, kernels (measured < 60 KiB).
FIRMWARE_CODE_BYTES = 48 << 10


class DoesNotFitError(TinyhostError):
    """The model's arena or data exceed the board's RAM or flash."""


@dataclass(frozen=True)
class Reserves:
    """What the firmware needs besides the model, per memory."""

    stack: int = DEFAULT_STACK_BYTES
    firmware_state: int = FIRMWARE_STATE_BYTES
    load_buffer: int = 0  # LOAD_MODEL receive buffer
    firmware_code: int = FIRMWARE_CODE_BYTES

    @property
    def ram(self) -> int:
        return self.stack + self.firmware_state + self.load_buffer

    @property
    def flash(self) -> int:
        return self.firmware_code


@dataclass(frozen=True)
class Budget:
    """A model's footprint on one board: the same figures wherever they are printed."""

    board: str
    ram_bytes: int | None  # the board's; None: no limit (the host board)
    flash_bytes: int | None
    arena_bytes: int  # the firmware's static arena for the model
    model_flash_bytes: int  # the model's data in flash
    reserves: Reserves

    @property
    def ram_needed(self) -> int:
        return self.arena_bytes + self.reserves.ram

    @property
    def flash_needed(self) -> int:
        return self.model_flash_bytes + self.reserves.flash

    @property
    def ram_headroom(self) -> int | None:
        return None if self.ram_bytes is None else self.ram_bytes - self.ram_needed

    @property
    def flash_headroom(self) -> int | None:
        return None if self.flash_bytes is None else self.flash_bytes - self.flash_needed

    @property
    def fits(self) -> bool:
        return all(r is None or r >= 0 for r in (self.ram_headroom, self.flash_headroom))

    def describe(self) -> str:
        r = self.reserves
        parts = []
        for what, need, have, room, detail in (
            ("RAM", self.ram_needed, self.ram_bytes, self.ram_headroom,
             f"arena {self.arena_bytes:,} + stack {r.stack:,} + firmware {r.firmware_state:,}"
             + (f" + load buffer {r.load_buffer:,}" if r.load_buffer else "")),
            ("flash", self.flash_needed, self.flash_bytes, self.flash_headroom,
             f"model {self.model_flash_bytes:,} + code {r.firmware_code:,}"),
        ):  # fmt: skip
            if have is None or room is None:
                parts.append(f"{what} {need:,} bytes ({detail}; no limit)")
                continue
            verdict = f"{room:,} bytes free" if room >= 0 else f"exceeded by {-room:,} bytes"
            parts.append(f"{what} {need:,} of {have:,} bytes ({detail}): {verdict}")
        return f"{self.board}: " + "; ".join(parts)

    def verdict(self) -> str:
        """The one line every command prints for this fit."""
        return f"{'fits' if self.fits else 'DOES NOT FIT'} {self.describe()}"

    def to_json(self) -> dict:
        return {
            "board": self.board,
            "fits": self.fits,
            "arena_bytes": self.arena_bytes,
            "model_flash_bytes": self.model_flash_bytes,
            "ram_bytes": self.ram_bytes,
            "flash_bytes": self.flash_bytes,
            "ram_needed": self.ram_needed,
            "flash_needed": self.flash_needed,
            "ram_headroom": self.ram_headroom,
            "flash_headroom": self.flash_headroom,
            "reserves": {"stack": self.reserves.stack,
                         "firmware_state": self.reserves.firmware_state,
                         "load_buffer": self.reserves.load_buffer,
                         "firmware_code": self.reserves.firmware_code},  # fmt: skip
        }


def budget_for(board: Board, arena_bytes: int, model_flash_bytes: int,
               load_buffer: int = 0, kernels: Iterable[str] | None = None) -> Budget:
    """The budget of a model of these sizes on `board`, with the firmware's reserves; the
    stack is derived from the kernel functions the model calls (None: any kernel)."""
    return Budget(
        board.name,
        None if board.ram is None else board.ram.size,
        None if board.flash is None else board.flash.size,
        arena_bytes,
        model_flash_bytes,
        Reserves(stack=stack_reserve(board, kernels).bytes, load_buffer=load_buffer),
    )


def ram_left_for_loading(board: Board, arena_bytes: int,
                         kernels: Iterable[str] | None = None) -> int | None:
    """RAM free for a LOAD_MODEL buffer after arena and reserves (16-byte multiple)."""
    if board.ram is None:
        return None
    reserves = Reserves(stack=stack_reserve(board, kernels).bytes)
    return max(0, board.ram.size - arena_bytes - reserves.ram) // 16 * 16


def require_fits(budget: Budget, model: str) -> Budget:
    """`budget`, or DoesNotFitError saying by how many bytes RAM / flash are exceeded."""
    if not budget.fits:
        raise DoesNotFitError(f"{model} does not fit {budget.describe()}")
    return budget
