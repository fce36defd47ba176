"""Equal costs written differently: same bracket, same LP, about the same time (target: within 2x).

Part 1 (issue 36, item 4): each expression that :mod:`optmech.costs.rewrite` proves to be a named
cost |x|^p (or c·|x|^p) is timed against that named cost in the same run, as ``optmech solve
--epsilon 1 --cost ...`` runs it (pure DP, ℝ, Δ = 1, the default target gap) and on ℤ (Δ = 20,
ε = 0.5); each time is the best of ``--repeat`` solves (more, up to 0.5 s, for millisecond solves), and the table gives the ratio
rewrite/named (target <= 2x), the LP rows and the bracket (for c·|x|^p: the bracket / c, which
should equal the named one).
Part 2: for each group of algebraically equal expressions that are no named cost, every member is
solved on the integer domain (Δ = 20, ε = 0.5) and on ℝ (Δ = 1, ε = 1, target gap 1e-3); the
table shows the certified bracket, the LP rows and the time of each member and the
slowest/fastest ratio of the group.  Part 3 times the tight enclosure of a cost over 10^6 cells
against the plain interval evaluation it starts from (the price of the breakpoint cuts, the
monotonicity test and the subdivision).

    python benchmarks/bench_rewrites.py [--quick] [--repeat N]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import numpy as np

import optmech
from optmech.costs import parse_cost, parse_expr, tree_enclosure
from optmech.spec import Continuous, IntegerLattice, Problem, PureDP

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


def solve(text: str, domain: str) -> tuple[float, float, int, float]:
    if domain == "integer":
        p = Problem(privacy=PureDP(0.5), cost=text, sensitivity=20, domain=IntegerLattice())
    else:
        p = Problem(privacy=PureDP(1.0), cost=text, sensitivity=1.0, domain=Continuous(), target_gap=1e-3)
    t0 = time.perf_counter()
    r = optmech.solve(p, time_limit=300)
    return r.lower_bound, r.upper_bound, int(r.lp["rows"]), time.perf_counter() - t0


def solve_named(text: str, domain: str, repeat: int) -> tuple[float, float, int, float]:
    """Part 1's solve: ``optmech solve --epsilon 1 --cost TEXT`` (ℝ, Δ = 1, default target gap) or
    ℤ with Δ = 20, ε = 0.5; the best time of ``repeat`` runs."""
    if domain == "integer":
        p = Problem(privacy=PureDP(0.5), cost=text, sensitivity=20, domain=IntegerLattice())
    else:
        p = Problem(privacy=PureDP(1.0), cost=text, sensitivity=1.0, domain=Continuous())
    best, spent, runs = float("inf"), 0.0, 0
    while runs < repeat or (spent < 0.5 and runs < 100):  # millisecond solves: enough runs for a stable best
        t0 = time.perf_counter()
        r = optmech.solve(p, time_limit=300)
        dt = time.perf_counter() - t0
        best, spent, runs = min(best, dt), spent + dt, runs + 1
    return r.lower_bound, r.upper_bound, int(r.lp["rows"]), best


def named_part(domains: list[str], repeat: int) -> list[float]:
    """Part 1: each rewrite against its named cost in the same run; returns the ratios."""
    print(f"{'domain':10} {'cost':26} {'as':11} {'lower / c':>16} {'upper / c':>16} {'rows':>6} {'s':>7} {'ratio':>6}")
    ratios = []
    for domain in domains:
        for name, texts in NAMED.items():
            lo0, up0, rows0, t0 = solve_named(name, domain, repeat)
            print(f"{domain:10} {name:26} {'named':11} {lo0:16.12g} {up0:16.12g} {rows0:6d} {t0:7.3f}")
            for text in texts:
                c = parse_cost(text)
                scale, _ = c.monomial or (Fraction(1), None)
                lo, up, rows, sec = solve_named(text, domain, repeat)
                ratios.append(sec / t0)
                print(f"{domain:10} {text:26} {c.canonical:11} {lo / float(scale):16.12g} {up / float(scale):16.12g} "
                      f"{rows:6d} {sec:7.3f} {sec / t0:5.2f}x")
    print(f"rewrite/named time: median {sorted(ratios)[len(ratios) // 2]:.2f}x, worst {max(ratios):.2f}x "
          "(target <= 2x)\n")
    return ratios


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="integer domain only")
    ap.add_argument("--repeat", type=int, default=3, help="solves per cost in part 1 (the best time counts)")
    args = ap.parse_args()
    optmech.solve(Problem(privacy=PureDP(1.0), cost="where(x > 0, x, 2*abs(x))", sensitivity=2,
                          domain=IntegerLattice()))  # warm-up: imports, profile
    domains = ["integer"] if args.quick else ["integer", "continuous"]
    named_part(domains, max(1, args.repeat))
    print(f"{'domain':10} {'group':11} {'cost':42} {'lower':>14} {'upper':>14} {'rows':>7} {'s':>7}")
    for domain in domains:
        for name, group in GROUPS.items():
            times = []
            for text in group:
                lo, up, rows, sec = solve(text, domain)
                times.append(sec)
                print(f"{domain:10} {name:11} {text:42} {lo:14.10g} {up:14.10g} {rows:7d} {sec:7.3f}")
            print(f"{'':10} {name:11} slowest/fastest = {max(times) / min(times):.2f}x (target <= 2x)")
    c = parse_cost("sqrt(abs(x)) + 0.1*x**2")
    lo = np.linspace(-100, 100, 1_000_000)
    t0 = time.perf_counter()
    tree_enclosure(parse_expr(c.spec), lo, lo + 1e-3)  # the plain evaluation, as the baseline
    plain = time.perf_counter() - t0
    t0 = time.perf_counter()
    c.enclose(lo, lo + 1e-3)
    tight = time.perf_counter() - t0
    print(f"enclosure of sqrt(abs(x)) + 0.1*x**2 over 10^6 cells: plain {plain:.3f} s, tight {tight:.3f} s "
          f"({tight / plain:.2f}x)")


if __name__ == "__main__":
    main()
