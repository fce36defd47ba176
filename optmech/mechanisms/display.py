"""Rich display helpers shared by the mechanisms and :class:`optmech.result.Result`: compact number
formatting and small, escaped HTML tables for Jupyter's ``_repr_html_``.

Every text that reaches HTML passes through :func:`html.escape`: a cost expression such as
``x<1`` or a mechanism note is shown as written, never interpreted as markup.
"""

from __future__ import annotations

import html
import math
from typing import Any, Iterable

__all__ = ["fmt_number", "html_table", "html_grid", "html_card"]


def fmt_number(x: Any, digits: int = 6) -> str:
    """A short, readable form of a number (``digits`` significant digits; ints and ±inf as such).

    >>> fmt_number(1.0), fmt_number(0.850918128234, 4), fmt_number(float("inf")), fmt_number(3)
    ('1', '0.8509', 'inf', '3')
    """
    if isinstance(x, bool) or x is None:
        return str(x)
    if hasattr(x, "item") and getattr(x, "ndim", 1) == 0:  # numpy scalars
        x = x.item()
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return f"{x:.{digits}g}"
    return str(x)


def html_table(rows: Iterable[tuple[str, Any]], caption: str | None = None) -> str:
    """A two-column HTML table of (name, value) rows, every cell escaped.

    >>> html_table([("cost", "x<1")])
    '<table><tr><th style="text-align:left">cost</th><td style="text-align:left">x&lt;1</td></tr></table>'
    """
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    body = "".join(
        f'<tr><th style="text-align:left">{html.escape(str(k))}</th>'
        f'<td style="text-align:left">{html.escape(v if isinstance(v, str) else fmt_number(v, 10))}</td></tr>'
        for k, v in rows)
    return f"<table>{cap}{body}</table>"


def html_card(title: str, lines: Iterable[str], tables: Iterable[str]) -> str:
    """A titled block: an escaped title, escaped summary lines, then already-built tables.

    >>> html_card("Laplace", ["pure ε-DP"], [])
    '<div><strong>Laplace</strong><br>pure ε-DP</div>'
    """
    parts = [f"<strong>{html.escape(title)}</strong>"] + [f"<br>{html.escape(line)}" for line in lines]
    return "<div>" + "".join(parts) + "".join(tables) + "</div>"


def html_grid(header: Iterable[str], rows: Iterable[Iterable[Any]], caption: str | None = None) -> str:
    """An HTML table with a header row, every cell escaped (numbers shortened by :func:`fmt_number`).

    >>> html_grid(["name", "value"], [["laplace", 1.0]])
    '<table><tr><th>name</th><th>value</th></tr><tr><td>laplace</td><td>1</td></tr></table>'
    """
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    head = "<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{html.escape(v if isinstance(v, str) else fmt_number(v, 10))}</td>" for v in r)
                   + "</tr>" for r in rows)
    return f"<table>{cap}{head}{body}</table>"
