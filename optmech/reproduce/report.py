"""Building blocks of a reproduction report: checks, sections, result lookup, markdown, figures.

A *report* is a function ``report(ctx: Context) -> Section``.  It reads the certified results of
its catalogue spec (``ctx.rows``), recomputes the paper's closed forms independently, and returns
a :class:`Section`: markdown paragraphs and tables, the PNG figures it wrote into ``ctx.outdir``,
and one :class:`Check` per statement of the paper it compares with (agreement marked).  Papers are
cited by the tags of :mod:`optmech.sources` (``[Geng13, Thm 2.5]``), never by file or catalogue code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

__all__ = ["Check", "Section", "Context", "md_table", "fmt", "fmt_bracket", "ref", "ref_param", "figure",
           "register", "REPORTS", "missing"]


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
        section.add(f"**{len(failed)} problem(s) failed and are missing from this section:**\n" + "\n".join(lines))


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


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-markdown table; cells formatted with :func:`fmt`."""
    head = "| " + " | ".join(header) + " |"
    sep = "|" + "|".join("---" for _ in header) + "|"
    body = ["| " + " | ".join(c if isinstance(c, str) else fmt(c) for c in row) + " |" for row in rows]
    return "\n".join([head, sep, *body])


def figure(ctx: Context, section: Section, name: str, draw: Callable[[Any], None], *,
           size: tuple[float, float] = (6.4, 4.2)) -> None:
    """Draw one PNG (``draw(fig)``) into the output folder and list it in ``section``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=size)
    try:
        draw(fig)
        fig.tight_layout()
        path = ctx.outdir / "figures" / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)
    section.figures.append(f"figures/{name}.png")


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
