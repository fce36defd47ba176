"""Equal costs written differently: same bracket, same LP, about the same time (target: within 2x).

For each group of algebraically equal expressions, every member is solved on the integer domain
(Δ = 20, ε = 0.5) and on ℝ (Δ = 1, ε = 1, target gap 1e-3); the table shows the certified bracket,
the LP rows and the time of each member and the slowest/fastest ratio of the group.  A second part
times the tight enclosure of a cost over 10^6 cells against the plain interval evaluation it starts
from (the price of the breakpoint cuts, the monotonicity test and the subdivision).

    python benchmarks/bench_rewrites.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import optmech
from optmech.costs import parse_cost
from optmech.spec import Continuous, IntegerLattice, Problem, PureDP

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="integer domain only")
    args = ap.parse_args()
    optmech.solve(Problem(privacy=PureDP(1.0), cost="where(x > 0, x, 2*abs(x))", sensitivity=2,
                          domain=IntegerLattice()))  # warm-up: imports, profile
    domains = ["integer"] if args.quick else ["integer", "continuous"]
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
    from optmech.costs import _enclosure  # the plain evaluation, as the baseline of this benchmark

    t0 = time.perf_counter()
    _enclosure(c._tree, lo, lo + 1e-3)
    plain = time.perf_counter() - t0
    t0 = time.perf_counter()
    c.enclose(lo, lo + 1e-3)
    tight = time.perf_counter() - t0
    print(f"enclosure of sqrt(abs(x)) + 0.1*x**2 over 10^6 cells: plain {plain:.3f} s, tight {tight:.3f} s "
          f"({tight / plain:.2f}x)")


if __name__ == "__main__":
    main()
