"""`tinyhost boards [--json]`: every board, its core and memories, and where it runs."""

from __future__ import annotations

import argparse
import json

from tinyhost.boards import Board, list_boards, load_board


def runs_on(board: Board) -> str:
    """Where `tinyhost run` runs the firmware for this board."""
    if board.is_host:
        return "host (native process)"
    if board.qemu_machine is not None:
        return f"QEMU -M {board.qemu_machine}"
    if board.renode_platform is not None:
        where = f"Renode ({board.renode_platform})"
        return where + (" or the board (--port)" if board.is_hardware else "")
    return "the board: tinyhost flash, then --port"


def board_summary(board: Board) -> dict:
    return {
        "name": board.name,
        "description": board.description,
        "core": board.core_name or "host",
        "mcpu": board.cpu,  # what the compiler builds for (differs from core: ek-ra8m1)
        "dsp": board.dsp,
        "mve": board.mve,
        "clock_hz": board.clock_hz,
        "ram_bytes": None if board.ram is None else board.ram.size,
        "flash_bytes": None if board.flash is None else board.flash.size,
        "runs_on": runs_on(board),
        "counter_unit": board.counter.unit,
        "flash_method": board.flash_method,
    }


def _kib(n: int | None) -> str:
    return "-" if n is None else f"{n // 1024:,} KiB"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("boards", help="list the boards: core, DSP/MVE, RAM/flash, where "
                                             "they run")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON array")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    rows = [board_summary(load_board(name)) for name in list_boards()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    head = f"{'board':<18} {'core':<12} {'DSP':<4} {'MVE':<4} {'MHz':>5} {'RAM':>9} {'flash':>10}"
    print(head + "  runs on")
    for r in rows:
        mhz = "-" if not r["clock_hz"] else f"{r['clock_hz'] / 1e6:g}"
        print(f"{r['name']:<18} {r['core']:<12} {'yes' if r['dsp'] else 'no':<4} "
              f"{'yes' if r['mve'] else 'no':<4} {mhz:>5} {_kib(r['ram_bytes']):>9} "
              f"{_kib(r['flash_bytes']):>10}  {r['runs_on']}")  # fmt: skip
    return 0
