"""`tinyhost report RESULTS... -o report.html|.md|.json`: eval results as a shareable file."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("report", help="eval results -> self-contained HTML, Markdown, JSON")
    p.add_argument("results", nargs="+", help="RESULTS.json files of tinyhost eval")
    p.add_argument("-o", "--output", required=True, metavar="report.html",
                   help=".html (self-contained), .md or .json")  # fmt: skip
    p.add_argument("--baseline", type=int, default=0, metavar="K",
                   help="row of the comparison the ratios are to (default: the first)")
    p.set_defaults(func=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    from tinyhost.errors import InputDataError
    from tinyhost.report.render import load_results, write_report

    results = load_results(args.results)
    if not 0 <= args.baseline < len(results):
        raise InputDataError(f"--baseline {args.baseline}: there are {len(results)} results")
    path = write_report(results, Path(args.output), args.baseline)
    print(path)
    return 0
