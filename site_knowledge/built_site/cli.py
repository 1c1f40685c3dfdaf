"""``site-knowledge compile SITE_DIR [-f mkdocs.yml]``: after ``zensical build`` or any build."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from site_knowledge.built_site.content import (
    DEFAULT_SELECTORS,
    THEME_ADDITIONS,
    ContentRule,
    parse_selectors,
)
from site_knowledge.compiler.assemble import summary
from site_knowledge.compiler.model import BuildError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``compile`` subcommand."""
    parser = subparsers.add_parser(
        "compile", help="build the artifact and chat box of a site built without the plugin",
        description="Run after `zensical build` (or `mkdocs build` without the plugin): reads "
                    "the built pages, writes the knowledge artifact and gives every page the "
                    "chat box, as the MkDocs plugin does. Safe to run again.")
    parser.add_argument("site_dir", type=Path, metavar="SITE_DIR", help="the built site folder")
    parser.add_argument("-f", "--config-file", type=Path, default=Path("mkdocs.yml"),
                        help="the site's mkdocs.yml (default: ./mkdocs.yml)")
    parser.add_argument("--content-selector", default=DEFAULT_SELECTORS,
                        help="where a page's main content is: simple CSS selectors tried in "
                             f"order (default: {DEFAULT_SELECTORS!r})")
    parser.add_argument("--exclude-selector", default="",
                        help="elements inside the main content that a theme override adds and "
                             f"that are not page text, besides {THEME_ADDITIONS!r}")
    parser.set_defaults(handler=run_compile)


def run_compile(args: argparse.Namespace) -> int:
    """Compile; exit 1 with the file and the reason when an input is bad, 2 on bad arguments."""
    from site_knowledge.built_site.compile import compile_built_site

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s - %(message)s")
    try:
        cut = ", ".join(filter(None, (THEME_ADDITIONS, args.exclude_selector)))
        rule = ContentRule(parse_selectors(args.content_selector), parse_selectors(cut))
    except ValueError as error:
        print(f"site-knowledge compile: {error}", file=sys.stderr)
        return 2
    try:
        result = compile_built_site(args.site_dir, args.config_file, rule)
    except BuildError as error:
        print(f"site-knowledge compile: {error}", file=sys.stderr)
        return 1
    if result is None:
        print(f"site-knowledge compile: {args.config_file} sets enabled: false; nothing done",
              file=sys.stderr)
        return 0
    for warning in result.warnings:
        print(f"site-knowledge compile: warning: {warning}", file=sys.stderr)
    print(f"{summary(result.report, result.asset_bytes)}; chat box on {result.with_launcher} "
          f"pages ({result.rewritten} rewritten)")
    return 0
