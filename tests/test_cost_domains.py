"""Costs are checked on the domain the problem lives on, and equal costs behave alike.

* A cost nonnegative on ℤ but not on ℝ (x² + x) is accepted on the integer domain and refused on
  the continuous one; the claims say what was proven about its sign.
* Algebraically equal ways of writing a piecewise cost (indicator products, ``where``, ``max``)
  get the same enclosures, the same LP and the same certified bracket.
* A lower bound that cannot improve stops the loop at once with a reason.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

import optmech
from optmech.costs import parse_cost
from optmech.errors import CostError, SpecError
from optmech.spec import Continuous, IntegerLattice, Problem, PureDP


def discrete_laplace_cost(cost, epsilon: float, sensitivity: int, n: int = 4000) -> float:
    """E L(X) for the discrete Laplace p(k) ∝ e^{−ε|k|/Δ}, which is ε-DP: an upper bound of V*."""
    k = np.arange(-n, n + 1, dtype=float)
    w = np.exp(-epsilon * np.abs(k) / sensitivity)
    return math.fsum(w * cost(k)) / math.fsum(w)


def test_nonnegative_on_integers_is_accepted_there_and_refused_on_the_reals():
    c = parse_cost("x**2 + x")
    k = np.arange(-50, 51, dtype=float)
    assert np.all(c(k) >= 0)                      # x(x+1) >= 0 on ℤ
    assert c.domain_minimum(integer=True) >= 0    # proven, not sampled
    assert c.domain_minimum(integer=False) < 0    # −1/4 at x = −1/2
    r = optmech.solve(Problem(privacy=PureDP(1.3), cost="x**2 + x", sensitivity=12, domain=IntegerLattice()))
    assert r.certified and r.status == "optimal"
    assert 0 <= r.lower_bound <= r.upper_bound <= discrete_laplace_cost(c, 1.3, 12) * (1 + 1e-12)
    assert any("proven nonnegative on ℤ" in claim for claim in r.claims)
    assert not any("assumed" in claim for claim in r.claims)
    # the same function on ℤ, written another way, lies in the same bracket
    r2 = optmech.solve(Problem(privacy=PureDP(1.3), cost="x*(x+1)", sensitivity=12, domain=IntegerLattice()))
    assert max(r.lower_bound, r2.lower_bound) <= min(r.upper_bound, r2.upper_bound) * (1 + 1e-12)
    with pytest.raises((CostError, SpecError), match="negative"):
        Problem(privacy=PureDP(1.3), cost="x**2 + x", sensitivity=12, domain=Continuous())


def test_cli_integer_cost_of_the_issue():
    p = subprocess.run([sys.executable, "-m", "optmech", "solve", "--domain", "integer", "--sensitivity", "12",
                        "--epsilon", "1.3", "--cost", "x**2 + x", "--json"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    import json

    assert json.loads(p.stdout)["certified"] is True


@pytest.mark.parametrize("integer", [True, False])
def test_proven_floor_is_a_lower_bound(integer):
    for text in ["x**2 - 2*x + 1", "(x - 0.1)**2", "where(abs(x) < 40, abs(x), 0.5 + abs(x)/10000)",
                 "sqrt(abs(x)) + exp(-x**2)", "min(abs(x), 5) + 0.1*x**2", "x*(x>=0) + 3*abs(x)*(x<0)"]:
        c = parse_cost(text)
        pts = np.arange(-3000.0, 3001.0) if integer else np.linspace(-30, 30, 600001)
        assert c.domain_minimum(integer=integer) <= float(np.min(c(pts))), text
    # a touching zero at a dyadic point is still proven nonnegative on ℝ (bisection reaches it)
    assert parse_cost("(x-1)**2").domain_minimum(integer=False) >= 0


REWRITES = [
    ["x*(x>=0) + 3*abs(x)*(x<0)", "where(x >= 0, x, 3*abs(x))", "max(x, -3*x)", "where(x < 0, -3*x, x)",
     "(x>=0)*x + (x<0)*(-3*x)"],
    ["min(abs(x), 5) + 0.1*x**2", "where(abs(x) < 5, abs(x), 5) + 0.1*x*x", "where(x*x < 25, abs(x), 5) + x**2/10"],
    ["abs(x)**2 + abs(x)", "x**2 + abs(x)", "x*x + abs(x)", "where(x > 0, x*x + x, x*x - x)"],
]


def test_enclosures_of_rewrites_agree():
    lo = np.array([-np.inf, -1e6, -7.0, -1.0, -0.25, 0.0, 2.0, 40.0])
    hi = np.array([-1e6, -7.0, -1.0, 1.0, 0.5, 3.0, 9.0, np.inf])
    for group in REWRITES:
        encs = [parse_cost(t).enclose(lo, hi) for t in group]
        for t, (l, h) in zip(group[1:], encs[1:]):
            np.testing.assert_allclose(l, encs[0][0], rtol=1e-12, err_msg=t)
            np.testing.assert_allclose(h, encs[0][1], rtol=1e-12, err_msg=t)


@pytest.mark.parametrize("group", REWRITES, ids=["asymmetric", "capped", "quadratic"])
@pytest.mark.parametrize("domain", ["integer", pytest.param("continuous", marks=pytest.mark.slow)])
def test_rewrites_get_the_same_bracket(group, domain):
    dom, sens, gap = (IntegerLattice(), 20, None) if domain == "integer" else (Continuous(), 1.0, 1e-3)
    results = [optmech.solve(Problem(privacy=PureDP(0.5 if domain == "integer" else 1.0), cost=t, sensitivity=sens,
                                     domain=dom, target_gap=gap), time_limit=120) for t in group]
    for t, r in zip(group, results):
        assert r.certified and r.status == "optimal", (t, r.status, r.message)
    lows, ups = [r.lower_bound for r in results], [r.upper_bound for r in results]
    assert max(lows) <= min(ups) * (1 + 1e-12), list(zip(group, lows, ups))
    rows = [r.lp["rows"] for r in results]
    assert max(rows) <= 2 * min(rows), list(zip(group, rows))


def test_a_lower_bound_that_cannot_improve_stops_at_once(monkeypatch):
    from optmech.problems.lattice import Grid1D

    # make the price of mass beyond the window 0 however far out (what a loose enclosure did): the
    # relaxation then parks mass there, and widening the window cannot help
    monkeypatch.setattr(Grid1D, "outside_min", lambda self, cost, k_first, direction: 0.0)
    r = optmech.solve(Problem(privacy=PureDP(0.5), cost="where(x >= 0, x, 3*abs(x))", sensitivity=20,
                              domain=IntegerLattice()), time_limit=120)
    assert r.status == "gap_not_reached"
    assert "cannot improve" in r.message and "where(" in r.message
    assert len(r.history) <= 4
    assert r.lower_bound <= r.upper_bound


def test_unbounded_below_is_refused_with_a_reason():
    p = subprocess.run([sys.executable, "-m", "optmech", "solve", "--domain", "integer", "--sensitivity", "3",
                        "--epsilon", "1", "--cost", "abs(x)*(1 + sqrt(abs(x)) - sqrt(abs(x)))", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and "bounded below" in p.stderr
