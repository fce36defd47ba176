"""Independent builders and solvers must give overlapping certified brackets."""

from __future__ import annotations

import pytest

import optmech
from optmech.spec import Continuous, IntegerLattice, Problem, PureDP


@pytest.mark.parametrize("cost", ["abs", "square", "min(abs(x), 300)"])
def test_general_and_periodic_builders_agree_at_larger_sensitivity(cost):
    """Two independent LPs (the windowed general relaxation, solved by HiGHS, and the one-period
    reduction, solved by the chain backend) must give overlapping certified brackets."""
    problem = dict(privacy=PureDP(0.8), cost=cost, sensitivity=200, domain=IntegerLattice())
    general = optmech.solve(Problem(**problem, symmetry="off"))
    periodic = optmech.solve(Problem(**problem))
    assert general.lp["builder"] == "general" and periodic.lp["builder"] == "periodic"
    assert general.certified and periodic.certified
    assert general.lower_bound <= periodic.upper_bound and periodic.lower_bound <= general.upper_bound
    assert max(general.relative_gap, periodic.relative_gap) <= 1e-9


def test_general_continuous_path_brackets_the_staircase():
    """The general builder on refined cells (first-order lower bound) still brackets V*."""
    r = optmech.solve(Problem(PureDP(2.0), "abs", domain=Continuous(), symmetry="off", target_gap=3e-3),
                      time_limit=120)
    staircase = next(x for x in r.references if x.name == "staircase")
    assert r.certified and r.lower_bound <= staircase.value <= r.upper_bound
    assert r.relative_gap <= 3e-3


@pytest.mark.slow  # a long solve: the default suite keeps to its time budget
def test_expression_cost_on_the_continuum_converges_and_brackets_the_staircase():
    """min(|x|, 1) with Δ = 1: Thm 2.4 makes the best staircase optimal; its cost is computed here
    in closed form, V(γ) = 2[aγ²/2 + ba(1−γ²)/2 + (b/(1−b))(aγ + ba(1−γ))] with
    a = (1−b)/(2(γ + b(1−γ))) [Geng13, (2.13)], and minimised over γ."""
    import math

    from scipy.optimize import minimize_scalar

    eps = 1.0
    b = math.exp(-eps)

    def cost(g: float) -> float:
        a = (1 - b) / (2 * (g + b * (1 - g)))
        return 2 * (a * g * g / 2 + b * a * (1 - g * g) / 2 + b / (1 - b) * (a * g + b * a * (1 - g)))

    v_star = minimize_scalar(cost, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-12}).fun
    r = optmech.solve(Problem(PureDP(eps), "min(abs(x), 1)", domain=Continuous()), time_limit=60)
    assert r.certified and r.lp["builder"] == "periodic"
    assert r.relative_gap <= 1e-4
    assert r.lower_bound <= v_star <= r.upper_bound
