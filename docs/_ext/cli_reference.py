"""Sphinx directive ``cli-reference``: the ``--help`` of ``optmech`` and of every subcommand.

The text is rendered at build time from :func:`optmech.cli.main.build_parser`, the parser the
command line itself uses, so the reference cannot drift from the program.  Usage (MyST)::

    ```{cli-reference}
    ```

or, in reStructuredText, ``.. cli-reference::``.  It produces

* a section "Exit statuses": every status of :data:`optmech.cli.args.EXIT_MEANINGS`, with its
  meaning, in the words the help uses;
* a section per command, ``optmech`` first, then each subcommand (recursively, should a
  subcommand get subcommands of its own) in the order ``optmech --help`` lists them: the
  one-line summary and the whole ``--help`` output as a literal block (its examples and exit
  statuses included).

argparse wraps help to the terminal width, which it reads from ``COLUMNS``; the directive fixes
``COLUMNS`` while it formats, so the page does not depend on the terminal of whoever builds it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

#: The terminal width the help is formatted for (argparse wraps to COLUMNS − 2).
COLUMNS = 90


@contextlib.contextmanager
def fixed_columns(columns: int = COLUMNS) -> Iterator[None]:
    """Set ``COLUMNS`` for argparse's formatter, restoring the previous value afterwards."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def walk(parser: argparse.ArgumentParser) -> Iterator[tuple[argparse.ArgumentParser, str]]:
    """``(parser, summary)`` for the parser and every subcommand below it, depth first, in the
    order the parent's help lists them."""
    yield parser, ""
    for action in parser._actions:  # argparse has no public accessor for its subcommands
        if isinstance(action, argparse._SubParsersAction):
            summaries = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                for p, summary in walk(sub):
                    yield p, summary or summaries.get(name, "")


def section(document: nodes.document, title: str, ident: str) -> nodes.section:
    """A section node with a title and a unique id, registered as an implicit target."""
    sec = nodes.section()
    sec["ids"].append(nodes.make_id(ident))
    sec["names"].append(nodes.fully_normalize_name(title))
    sec += nodes.title(title, title)
    document.note_implicit_target(sec, sec)
    return sec


class CliReference(SphinxDirective):
    """Render ``optmech --help`` and every subcommand's ``--help``."""

    has_content = False
    required_arguments = 0
    optional_arguments = 0

    def run(self) -> list[nodes.Node]:
        from optmech.cli import args as cli_args
        from optmech.cli.main import build_parser

        # Rebuild this page when the command line changes.
        cli_dir = Path(cli_args.__file__).resolve().parent
        for path in sorted(cli_dir.glob("*.py")):
            self.env.note_dependency(str(path))

        document = self.state.document
        out: list[nodes.Node] = []

        exits = section(document, "Exit statuses", "cli-exit-statuses")
        exits += nodes.paragraph(text="Every command exits with one of these statuses; each command's help "
                                      "below lists the ones it can return.")
        items = nodes.bullet_list()
        for code, meaning in sorted(cli_args.EXIT_MEANINGS.items()):
            para = nodes.paragraph()
            para += nodes.literal(text=str(code))
            para += nodes.Text(f"  {meaning}")
            items += nodes.list_item("", para)
        exits += items
        out.append(exits)

        with fixed_columns():
            for parser, summary in walk(build_parser()):
                title = parser.prog
                sec = section(document, title, "cli-" + title.replace(" ", "-"))
                if summary:
                    sec += nodes.paragraph(text=summary[0].upper() + summary[1:] + ("" if summary.endswith(".") else "."))
                text = parser.format_help().rstrip() + "\n"
                block = nodes.literal_block(text, text)
                block["language"] = "none"
                sec += block
                out.append(sec)
        return out


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("cli-reference", CliReference)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
