"""Render optmech's docstrings' plain-text bars (``|x|``, ``|s| <= Δ``, ``‖x‖``) as written.

optmech's docstrings write their mathematics as plain Unicode text, as ``help()`` shows it: an
absolute value is ``|x|``.  reStructuredText reads ``|x|`` as a *substitution reference* and
fails ("Undefined substitution referenced: "x"") or, for ``|s|<=Δ``, half-parses it.  No
docstring of optmech uses a substitution (``.. |name| replace::``), so this extension escapes
every bar (``|`` → ``\\|``) in the reST that autodoc hands to Sphinx (after numpydoc), except
where a backslash would itself be shown or change the meaning:

* inside inline literals (````x````), roles (``:math:`|x|```) and interpreted text (```x```);
* inside literal blocks (the indented block after a line ending in ``::``), directive bodies
  (``.. math::``, ``.. code-block::``; in LaTeX ``\\|`` would be a double bar) and doctest blocks
  (``>>>`` up to the next blank line);
* inside a grid table (between its ``+---+`` borders), whose bars are the table.

Everything else in the docstring is left exactly as it is, so a real markup error (a bad
indentation, an unknown role, a broken reference) still fails the ``-W`` build.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sphinx.application import Sphinx

#: Inline spans whose bars must stay as they are: ``literal``, :role:`text`, `interpreted`.
PROTECTED = re.compile(r"``.+?``|:[\w:+.-]+:`[^`]*`|`[^`]*`_{0,2}", re.DOTALL)
#: A bar not already escaped.
BAR = re.compile(r"(?<!\\)\|")
#: A grid table's border line: ``+----+----+`` or ``+====+``.
TABLE_BORDER = re.compile(r"^\s*\+[-=+]+\+\s*$")
#: A directive's first line: ``.. name::`` (its indented body is not running text).
DIRECTIVE = re.compile(r"^\s*\.\. [\w:-]+::")


def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def escape_inline(line: str) -> str:
    """Escape the bars of one line of running text, outside inline literals, roles and interpreted text."""
    out, pos = [], 0
    for m in PROTECTED.finditer(line):
        out.append(BAR.sub(r"\\|", line[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(BAR.sub(r"\\|", line[pos:]))
    return "".join(out)


def escape_bars(lines: Sequence[str]) -> list[str]:
    """The docstring's reST lines with the bars of running text escaped (module docstring).

    Running text is escaped a paragraph at a time, so an inline literal that wraps onto the
    next line (````--domain⏎continuous````) is still recognised as one."""
    borders = [i for i, line in enumerate(lines) if TABLE_BORDER.match(line)]
    table = range(borders[0], borders[-1] + 1) if len(borders) >= 2 else range(0)
    out: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            out.extend(escape_inline("\n".join(paragraph)).split("\n"))
            paragraph.clear()

    literal_from: int | None = None  # indentation of the line that opened a literal block / directive
    doctest = False
    for i, line in enumerate(lines):
        blank = not line.strip()
        if literal_from is not None:
            if blank or indent(line) > literal_from:
                out.append(line)
                continue
            literal_from = None
        if doctest:
            if blank:
                doctest = False
            out.append(line)
            continue
        if blank or i in table or line.lstrip().startswith(">>>") or DIRECTIVE.match(line):
            flush()
            doctest = line.lstrip().startswith(">>>") and i not in table
            if DIRECTIVE.match(line) and i not in table:
                literal_from = indent(line)
            out.append(line)
            continue
        paragraph.append(line)
        if line.rstrip().endswith("::"):  # the paragraph introduces a literal block
            flush()
            literal_from = indent(line)
    flush()
    return out


def process_docstring(app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    lines[:] = escape_bars(lines)


def setup(app: Sphinx) -> dict[str, object]:
    # After numpydoc (priority 500): escape the reST it produced, not the numpy sections it reads.
    app.connect("autodoc-process-docstring", process_docstring, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
