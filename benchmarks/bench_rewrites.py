"""Equal costs written differently: same bracket, same LP, about the same time (target: within 2x).

Part 1 (issue 36, item 4): each expression that :mod:`optmech.costs.rewrite` proves to be a named
cost |x|^p (or c·|x|^p) is timed against that named cost in the same run (the baseline,
``against(named)``), as ``optmech solve --epsilon 1 --cost ...`` runs it (pure DP, ℝ, Δ = 1, the
default target gap) and on ℤ (Δ = 20, ε = 0.5).  Cases ``<ℤ|ℝ>: <expression> vs <named>``; the
harness ratio is rewrite/named (target <= 2x); the baseline's note compares the LP rows and the
bracket (for c·|x|^p: the bracket / c, which should equal the named one).
Part 2: for each group of algebraically equal expressions that are no named cost, every member is
solved on the integer domain (Δ = 20, ε = 0.5) and on ℝ (Δ = 1, ε = 1, target gap 1e-3), against
the group's first member as baseline (cases ``<ℤ|ℝ>: <group>: <expression>``; the first member's
own case has no baseline): the certified brackets must overlap (the harness flags disjoint ones),
and the slowest/fastest time ratio of a group (target <= 2x) is read off its members' ratios to
the first.  Part 3 (``enclosure over 10^6 cells``) times the tight enclosure of a cost over 10^6
cells against the plain interval evaluation it starts from (the baseline; the price of the
breakpoint cuts, the monotonicity test and the subdivision).

Through the harness (``benchmarks/harness.py``: every solve after an untimed warm-up solve, in a
fresh process per repeat, the median of ``--repeats``; the former runner took the best of
``--repeat`` solves in one process)::

    python -m benchmarks.harness run benchmarks/bench_rewrites.py [--repeats 5] [--only ℤ]   # --only ℤ: the former --quick
    python benchmarks/bench_rewrites.py [same options]                 # the same

Results: ``benchmarks/results/bench_rewrites.jsonl``.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import add_case, against, main  # noqa: E402

#: named cost -> expressions proven equal to it (or to c times it)
NAMED = {
    "pow:3": ["abs(x)**3", "abs(x*x*x)", "(x**2)**1.5", "x*x*abs(x)", "2*abs(x)**3"],
    "pow:0.5": ["sqrt(abs(x))", "abs(x)**0.5", "(abs(x))**(1/2)", "sqrt(sqrt(x*x))", "3*sqrt(abs(x))"],
    "square": ["x*x", "x**2", "abs(x)*abs(x)", "0.1*x**2"],
    "abs": ["abs(-x)", "abs(x)**1", "max(x, -x)", "where(x >= 0, x, -x)", "(x>=0)*x + (x<0)*(-x)"],
    "pow:1.5": ["abs(x)**1.5", "abs(x)*sqrt(abs(x))"],
}

GROUPS = {
    "asymmetric": ["x*(x>=0) + 3*abs(x)*(x<0)", "where(x >= 0, x, 3*abs(x))", "max(x, -3*x)",
                   "where(x < 0, -3*x, x)", "(x>=0)*x + (x<0)*(-3*x)"],
    "capped": ["min(abs(x), 5) + 0.1*x**2", "where(abs(x) < 5, abs(x), 5) + 0.1*x*x",
               "where(x*x < 25, abs(x), 5) + x**2/10"],
    "quadratic": ["abs(x)**2 + abs(x)", "x**2 + abs(x)", "x*x + abs(x)", "where(x > 0, x*x + x, x*x - x)"],
}


DOMAINS = {"integer": "ℤ", "continuous": "ℝ"}
ENCLOSED = "sqrt(abs(x)) + 0.1*x**2"


def warm() -> None:
    """Untimed: imports and the solver profile (an asymmetric integer solve, Δ = 2)."""
    import optmech
    from optmech.spec import IntegerLattice, Problem, PureDP

    optmech.solve(Problem(privacy=PureDP(1.0), cost="where(x > 0, x, 2*abs(x))", sensitivity=2,
                          domain=IntegerLattice()))


def _problem(text: str, domain: str, group: bool) -> object:
    from optmech.spec import Continuous, IntegerLattice, Problem, PureDP

    if domain == "integer":
        return Problem(privacy=PureDP(0.5), cost=text, sensitivity=20, domain=IntegerLattice())
    if group:
        return Problem(privacy=PureDP(1.0), cost=text, sensitivity=1.0, domain=Continuous(), target_gap=1e-3)
    return Problem(privacy=PureDP(1.0), cost=text, sensitivity=1.0, domain=Continuous())


def _solve(text: str, domain: str, group: bool) -> dict:
    import optmech

    r = optmech.solve(_problem(text, domain, group), time_limit=300)
    return {"lower": float(r.lower_bound), "upper": float(r.upper_bound), "gap": float(r.relative_gap),
            "certified": bool(r.certified), "rows": int(r.lp["rows"])}


def rewrite(text: str, domain: str) -> dict:
    """Part 1, our side: the expression as written; its bracket also divided by its monomial's c."""
    from optmech.costs import parse_cost

    out = _solve(text, domain, False)
    c = parse_cost(text)
    scale, _ = c.monomial or (Fraction(1), None)
    out.update(canonical=str(c.canonical), scale=float(scale), lower_over_c=out["lower"] / float(scale),
               upper_over_c=out["upper"] / float(scale), note=f"as {c.canonical}")
    return out


def named(name: str, domain: str, ours: dict) -> dict:
    """Part 1, the baseline: the named cost; the note compares the rewrite's bracket / c and LP rows."""
    out = _solve(name, domain, False)
    d = max(abs(ours["lower_over_c"] - out["lower"]), abs(ours["upper_over_c"] - out["upper"])) / abs(out["upper"])
    out["bracket_over_c_rel_diff"] = d
    out["note"] = f"named bracket vs rewrite's / c: {d:.1e} rel.; rows {out['rows']} vs {ours['rows']}"
    return out


def member(text: str, domain: str) -> dict:
    """Part 2: one member of a group of equal expressions (bracket, LP rows)."""
    out = _solve(text, domain, True)
    out["note"] = f"rows {out['rows']}"
    return out


def first_member(first: str, domain: str) -> dict:
    """Part 2, the baseline: the group's first member."""
    return member(first, domain)


_CELLS: list = []


def _cells() -> tuple:
    """The cost and its 10^6 cells, made once a process (by the untimed warm-up)."""
    if not _CELLS:
        import numpy as np

        from optmech.costs import parse_cost

        lo = np.linspace(-100, 100, 1_000_000)
        _CELLS.append((parse_cost(ENCLOSED), lo, lo + 1e-3))
    return _CELLS[0]


def tight_enclosure() -> dict:
    """Part 3, our side: the cost's tight enclosure over 10^6 cells."""
    c, lo, hi = _cells()
    c.enclose(lo, hi)
    return {"cells": int(lo.size), "cost": ENCLOSED}


def plain_enclosure() -> dict:
    """Part 3, the baseline: the plain interval evaluation of the expression tree."""
    from optmech.costs import parse_expr, tree_enclosure

    c, lo, hi = _cells()
    tree_enclosure(parse_expr(c.spec), lo, hi)
    return {"cells": int(lo.size), "cost": ENCLOSED}


def warm_enclosure() -> None:
    """Untimed: numpy and the cost module."""
    _cells()


for _domain, _dl in DOMAINS.items():
    for _name, _texts in NAMED.items():
        for _text in _texts:
            add_case(rewrite, f"{_dl}: {_text} vs {_name}", warmup=warm,
                     baseline=against(named, label=f"named {_name}", warmup=warm),
                     params={"text": _text, "name": _name, "domain": _domain})
for _domain, _dl in DOMAINS.items():
    for _group, _members in GROUPS.items():
        for _k, _text in enumerate(_members):
            add_case(member, f"{_dl}: {_group}: {_text}", warmup=warm,
                     baseline=against(first_member, label=f"first member: {_members[0]}", warmup=warm) if _k else None,
                     params={"text": _text, "first": _members[0], "domain": _domain})
add_case(tight_enclosure, "enclosure over 10^6 cells", warmup=warm_enclosure,
         baseline=against(plain_enclosure, label="plain tree_enclosure", warmup=warm_enclosure))


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
