"""Building blocks of a reproduction report: checks, sections, result lookup, markdown, figures.

A *report* is a function ``report(ctx: Context) -> Section``.  It reads the certified results of
its catalogue spec (``ctx.rows``), recomputes the paper's closed forms independently, and returns
a :class:`Section`: markdown paragraphs and tables, the PNG figures it wrote into ``ctx.outdir``,
and one :class:`Check` per statement of the paper it compares with (agreement marked).  Papers are
cited by the tags of :mod:`optmech.sources` (``[Geng13, Thm 2.5]``), never by file or catalogue code.

Tables put a column headed "paper states …" beside one headed "certified bracket …" wherever the paper
states a number (a quoted phrase where it states a qualitative claim).  Figures draw certified brackets as
intervals (:func:`bracket_errorbar`), give counts integer ticks (:func:`integer_ticks`), label log axes with
plain numbers (:func:`plain_ticks`) and keep legends off the data (:func:`legend_below`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

__all__ = ["Check", "Section", "Context", "md_table", "md_cell", "fmt", "fmt_bracket", "ref", "ref_param", "figure",
           "register", "REPORTS", "missing", "bracket_errorbar", "integer_ticks", "legend_below", "plain_ticks",
           "plural"]


@dataclass
class Check:
    """One statement of a paper against what optmech certifies.

    ``ok`` is True (agrees), False (disagrees: a finding, with the corrected value in ``optmech``),
    or None (not comparable: the paper gives no number, or the item is not reproduced).  ``seed`` is
    what the paper states.
    """

    claim: str
    seed: str
    optmech: str
    ok: bool | None
    note: str = ""

    @property
    def mark(self) -> str:
        return {True: "✅ agrees", False: "❌ differs", None: "— not compared"}[self.ok]


@dataclass
class Section:
    """The report of one catalogue spec."""

    name: str
    title: str
    seed: str  # the paper's catalogue code ("000" … "004", see optmech.sources) or "conjecture"
    item: str
    body: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    failed: int = 0
    #: what ``--quick`` leaves out (or, in a full run, what it would), one sentence (:mod:`optmech.reproduce.scope`)
    scope: str = ""
    #: the tags of the papers the section cites, its own paper first (:func:`optmech.sources.section_tags`)
    cites: list[str] = field(default_factory=list)

    def add(self, *paragraphs: str) -> None:
        self.body.extend(paragraphs)

    def check(self, claim: str, seed: str, optmech: str, ok: bool | None, note: str = "") -> Check:
        c = Check(claim, seed, optmech, None if ok is None else bool(ok), note)
        self.checks.append(c)
        return c

    @property
    def agreed(self) -> int:
        return sum(c.ok is True for c in self.checks)

    @property
    def differed(self) -> int:
        return sum(c.ok is False for c in self.checks)


@dataclass
class Context:
    """What a report gets: its spec, the results of its problems (in spec order) and the output folder.

    ``rows`` holds ``(params, result)`` pairs; ``result`` is None for a problem that failed (its
    error is in ``errors``).  ``params`` are the normalised parameters (:func:`optmech.sweep.normalised`).
    """

    spec: Any
    rows: list[tuple[dict, dict | None]]
    outdir: Path
    quick: bool
    errors: dict[str, str] = field(default_factory=dict)

    def results(self, **match) -> list[tuple[dict, dict]]:
        """The solved rows whose parameters equal ``match`` (numbers compared as floats)."""
        out = []
        for p, r in self.rows:
            if r is None:
                continue
            if all(_eq(p.get(k), v) for k, v in match.items()):
                out.append((p, r))
        return out

    def one(self, **match) -> dict | None:
        rs = self.results(**match)
        return rs[0][1] if rs else None

    def values(self, key: str) -> list:
        """The distinct values of parameter ``key`` over the spec's problems, in first-seen order."""
        seen: list = []
        for p, _ in self.rows:
            v = p.get(key)
            if v is not None and not any(_eq(v, s) for s in seen):
                seen.append(v)
        return seen


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def missing(section: Section, ctx: Context) -> None:
    """Note the spec's failed problems in ``section`` (a report never hides them)."""
    failed = [p for p, r in ctx.rows if r is None]
    section.failed = len(failed)
    if failed:
        lines = [f"- {', '.join(f'{k}={v}' for k, v in sorted(p.items()))}: {ctx.errors.get(_key(p), 'failed')}"
                 for p in failed[:10]]
        n = len(failed)
        section.add(f"**{plural(n, 'problem')} failed and {'is' if n == 1 else 'are'} missing from this section:**\n"
                    + "\n".join(lines))


def _key(p: dict) -> str:
    from optmech.store import problem_key

    return problem_key(p)


def ref(result: dict | None, name: str) -> dict | None:
    """The reference (closed form or bound) called ``name`` in a result dict, or None."""
    if not result:
        return None
    for r in result.get("references", []) or []:
        if r.get("name") == name:
            return r
    return None


def ref_param(result: dict | None, name: str, param: str) -> Any:
    r = ref(result, name)
    return None if r is None else (r.get("parameters") or {}).get(param)


def fmt(x: Any, digits: int = 6) -> str:
    """A number for a report table: ``digits`` significant digits; '—' for None/NaN."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            return "∞" if x > 0 else ("−∞" if x < 0 else "—")
        return f"{x:.{digits}g}"
    return str(x)


def fmt_bracket(result: dict | None, digits: int = 7) -> str:
    """``[lower, upper]`` of a certified result; marks an uncertified one plainly."""
    if not result:
        return "failed"
    lo, hi = result.get("lower_bound"), result.get("upper_bound")
    s = f"[{fmt(lo, digits)}, {fmt(hi, digits)}]"
    return s if result.get("certified") else s + " (uncertified)"


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``plural(1, "problem")`` -> "1 problem", ``plural(3, "problem")`` -> "3 problems"."""
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"


def md_cell(c: Any) -> str:
    """One markdown table cell: numbers through :func:`fmt`, a ``|`` escaped (``E|X|`` would split the cell)."""
    text = c if isinstance(c, str) else fmt(c)
    out, prev = [], ""
    for ch in text.replace("\n", " "):
        out.append("\\|" if ch == "|" and prev != "\\" else ch)
        prev = ch
    return "".join(out)


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-markdown table; cells formatted with :func:`fmt`, pipes inside cells escaped."""
    head = "| " + " | ".join(md_cell(h) for h in header) + " |"
    sep = "|" + "|".join("---" for _ in header) + "|"
    body = ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join([head, sep, *body])


def figure(ctx: Context, section: Section, name: str, draw: Callable[[Any], None], *,
           size: tuple[float, float] = (6.4, 4.2)) -> None:
    """Draw one PNG (``draw(fig)``) into the output folder and list it in ``section``.

    The figure is a pyplot-free :class:`matplotlib.figure.Figure`: no backend is switched, so
    calling :func:`optmech.reproduce.reproduce` from a notebook leaves its inline backend alone.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    draw(fig)
    fig.tight_layout()
    path = ctx.outdir / "figures" / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    # "tight" keeps a legend placed outside the axes (legend_below) inside the picture
    fig.savefig(path, dpi=110, bbox_inches="tight", pad_inches=0.1)
    section.figures.append(f"figures/{name}.png")


def bracket_errorbar(ax, xs: Sequence[float], lows: Sequence[float], highs: Sequence[float], **kw):
    """Certified brackets [lower, upper] drawn as intervals at ``xs`` (an errorbar from lower to upper).

    The marker sits at the midpoint; ``kw`` goes to ``ax.errorbar`` (``fmt``, ``color``, ``label`` ...).
    """
    mids = [(lo + hi) / 2 for lo, hi in zip(lows, highs)]
    yerr = [[m - lo for m, lo in zip(mids, lows)], [hi - m for m, hi in zip(mids, highs)]]
    kw.setdefault("fmt", "o")
    kw.setdefault("capsize", 3)
    kw.setdefault("ms", 4)
    return ax.errorbar(list(xs), mids, yerr=yerr, **kw)


def integer_ticks(ax, axis: str = "x") -> None:
    """Integer-valued ticks on ``axis`` (a dimension, a sensitivity, r): no 2.5 on a count."""
    from matplotlib.ticker import MaxNLocator

    getattr(ax, f"{axis}axis").set_major_locator(MaxNLocator(integer=True))


def plain_ticks(ax, axis: str, values: Sequence[float], digits: int = 3) -> None:
    """Major ticks exactly at ``values``, labelled as plain numbers (``0.5``, not ``5×10⁻¹``); no minor labels.

    For log axes whose default labels (``3×10⁻¹ 4×10⁻¹ …``) crowd and overlap.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    a = getattr(ax, f"{axis}axis")
    a.set_major_locator(FixedLocator(sorted(set(float(v) for v in values))))
    a.set_major_formatter(FuncFormatter(lambda v, _: fmt(float(v), digits)))
    a.set_minor_formatter(NullFormatter())


def legend_below(fig, ax, *, ncol: int = 3, fontsize: float = 8):
    """One legend for the whole figure, under the axes (it never covers data); entries from ``ax`` (one axes or a
    list of them; a label repeated across panels is listed once)."""
    handles, labels = [], []
    for a in (ax if isinstance(ax, (list, tuple)) else [ax]):
        for h, lab in zip(*a.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if not handles:
        return None
    return fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol, fontsize=fontsize,
                      frameon=False)


#: report name -> report function (filled by :func:`register`)
REPORTS: dict[str, Callable[[Context], Section]] = {}


def register(name: str):
    """Decorator: make a report available to catalogue specs as ``[reproduce] report = name``."""
    def deco(fn: Callable[[Context], Section]) -> Callable[[Context], Section]:
        REPORTS[name] = fn
        return fn
    return deco


def new_section(ctx: Context, title: str) -> Section:
    """A section headed by the spec's ``[reproduce]`` table, with its failures already noted."""
    rep = ctx.spec.reproduce
    s = Section(ctx.spec.name, rep.get("title", title), rep["seed"], rep["item"])
    if ctx.spec.description:
        s.add(ctx.spec.description.strip())
    missing(s, ctx)
    return s


def within(value: float | None, target: float, rel: float) -> bool:
    """|value/target − 1| ≤ rel (the agreement test for numbers a paper prints rounded)."""
    return value is not None and math.isfinite(value) and abs(value / target - 1.0) <= rel


__all__ += ["new_section", "within"]
