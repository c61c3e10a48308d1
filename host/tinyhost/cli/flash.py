"""`tinyhost flash OUTDIR --board B [--flasher openocd|st-flash|pyocd] [--dry-run]`."""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "flash", help="flash a built firmware onto a real board through its ST-LINK"
    )
    p.add_argument(
        "outdir", help="build directory (with th_app.json), a directory with one .elf, or an .elf"
    )
    p.add_argument("--board", required=True, help="board name (boards/<name>/board.json)")
    p.add_argument(
        "--flasher",
        choices=("openocd", "st-flash", "pyocd"),
        help="tool to use (default: the board's flash_method, else openocd, st-flash, pyocd: "
        "the first installed)",
    )
    p.add_argument("--dry-run", action="store_true", help="print the command, do not run it")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds (default 120)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from tinyhost.deploy.flash import describe_serial, flash, plan_flash

    if args.dry_run:
        plan = plan_flash(args.outdir, args.board, args.flasher, dry_run=True)
        if plan.flasher == "st-flash" and plan.image.bin is None:
            print(f"# st-flash needs {plan.command[3]}: made from the ELF with objcopy when run")
        print(plan.shell())
        return 0
    result = flash(args.outdir, args.board, args.flasher, timeout=args.timeout)
    plan = result.plan
    print(f"flashed {plan.image.elf} onto {plan.board.name} with {plan.flasher}")
    print(describe_serial(plan.board))
    return 0
