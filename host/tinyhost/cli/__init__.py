"""The `tinyhost` command. It only parses arguments and wires the stages together.

One module per command group (`model`: inspect/reference/demo, `quantize`, `plan`, `backend`:
convert/build/run, `bench`, `flash`); `inputs` loads the arrays they take. Errors caused by the
user's input (TinyhostError) are printed as one line on stderr with exit code 2; nothing else
is caught, so a bug still shows its traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tinyhost import __version__
from tinyhost.errors import TinyhostError


def build_parser() -> argparse.ArgumentParser:
    from tinyhost.cli import backend, bench, boards, flash, model, plan, quantize
    from tinyhost.cli import compare as compare_cmd
    from tinyhost.cli import eval as eval_cmd
    from tinyhost.cli import report as report_cmd

    parser = argparse.ArgumentParser(
        prog="tinyhost", description="Bit-exact int8 inference for Cortex-M microcontrollers."
    )
    parser.add_argument("--version", action="version", version=f"tinyhost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in (model, quantize, plan, backend, bench, flash, boards, eval_cmd, compare_cmd,
                  report_cmd):
        group.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except TinyhostError as e:
        print(f"tinyhost: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `tinyhost inspect m.tflite | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("tinyhost: interrupted", file=sys.stderr)
        return 130
