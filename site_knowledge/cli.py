"""The ``site-knowledge`` command: compile, query, gateway, serve, eval."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from site_knowledge import __version__

SUBCOMMAND_MODULES = ("site_knowledge.built_site.cli", "site_knowledge.querycli",
                      "site_knowledge.gateway.cli", "site_knowledge.llama.modelcli",
                      "site_knowledge.gateway.reportcli",
                      "site_knowledge.evalcli")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(prog="site-knowledge", description=__doc__)
    parser.add_argument("--version", action="version", version=f"site-knowledge {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            optional = {"starlette", "uvicorn", "httpx"}
            if error.name == name or (error.name or "").split(".")[0] in optional:
                continue  # the [gateway] extra is not installed
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    args = build_parser().parse_args(argv)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
