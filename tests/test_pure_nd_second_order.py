"""Second-order prices of the pure ε-DP cell LPs on ℝ^d for the named convex costs (issue 42):
optmech.problems.pure_nd.node_costs with the bounds of optmech.problems.approx_cells_nd.

Independent checks: the inequality the lower bound rests on, E[price(Y) | X = x] <= L(x) for the randomised
rounding Y of x, evaluated directly at random points (near axes, diagonals and the origin too); the upper prices
against the cube means by a fine midpoint rule; and the cell LP's certified lower end against the staircase,
V* for matched norms (the radial family's independent certificate), at the same resolution as the first-order
prices, which it must beat."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import optmech
from optmech.costs_nd import as_cost_nd
from optmech.mechanisms.multidim import staircase_nd_optimal_cost
from optmech.problems.pure_nd import SECOND_ORDER_COSTS, node_costs
from optmech.spec import Continuous, Problem, PureDP

NORM = {"l1": lambda x: np.abs(x).sum(-1), "l2": lambda x: np.sqrt((x * x).sum(-1)),
        "l2sq": lambda x: (x * x).sum(-1), "linf": lambda x: np.abs(x).max(-1)}


def _points(d: int, h: float, rng) -> np.ndarray:
    """Random points, and points on axes, diagonals and next to the origin."""
    x = rng.uniform(-6 * h, 6 * h, size=(4000, d))
    x[:500, 0] = 0.0
    x[500:1000] = x[500:1000, :1] * np.ones(d)  # the diagonal
    x[1000:1500] *= 0.1
    x[1500:1700, 1:] = x[1500:1700, :1] + rng.uniform(-1e-3, 1e-3, size=(200, 1)) * h
    return x


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("kind", SECOND_ORDER_COSTS)
def test_rounded_node_prices_never_exceed_the_cost(kind, d):
    """For every x, Σ over the corners c of x's node cube of (interpolation weight)·price(c) <= L(x): the
    inequality E[price(Y) | X] <= L(X) of the relaxation, checked point by point."""
    rng = np.random.default_rng(7 + d)
    n, D = 4, 1.0
    h = D / n
    c = as_cost_nd(kind, d)
    x = _points(d, h, rng)
    low = np.floor(x / h)
    theta = x / h - low
    expected = np.zeros(len(x))
    for s in itertools.product((0, 1), repeat=d):
        corner = low + np.asarray(s, dtype=float)
        w = np.prod(np.where(np.asarray(s) == 1, theta, 1.0 - theta), axis=1)
        lo, _ = node_costs(c, corner, d, D, n)
        expected += w * lo
    cost = NORM[kind](x)
    assert np.all(expected <= cost * (1 + 1e-12) + 1e-15), float(np.max(expected - cost))
    if kind in ("l1", "l2sq"):  # second order: the prices lose at most d h²/4 on average
        assert float(np.max(cost - expected)) <= d * h * h / 4 * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("kind", SECOND_ORDER_COSTS)
def test_upper_prices_bound_the_cube_means(kind):
    """The upper price of node z is at least the mean of L over the centred cube h(z + [−½, ½]^2)
    (a 400 × 400 midpoint rule), and within O(h²) of it away from the kinks."""
    d, n, D = 2, 4, 1.0
    h = D / n
    z = np.array([[0, 0], [1, 0], [2, 1], [3, 3], [-2, 5], [0, -4]], dtype=float)
    _, hi = node_costs(as_cost_nd(kind, d), z, d, D, n)
    g = (np.arange(400) + 0.5) / 400 - 0.5
    u = np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)
    for zi, up in zip(z, hi):
        mean = float(NORM[kind](h * (zi + u)).mean())
        assert up >= mean * (1 - 1e-12) - 1e-12
        assert up <= mean + h * h + 1e-12


@pytest.mark.parametrize("norm,cost,n", [("l1", "l1", 4), ("l2", "l2", 2), ("l1", "linf", 2)])
def test_cell_lp_lower_end_is_below_the_optimum_and_beats_first_order(norm, cost, n, monkeypatch):
    """ε = 1, d = 2, n cells per Δ: the cell LP's certified lower end with second-order prices lies below V* (matched
    norms: the staircase in that norm, proven optimal and certified independently by the radial family;
    ℓ1 sensitivity with ‖x‖∞ cost: below the best upper end found) and above the lower end of the same LP
    with each cell priced at its minimum (first order, SECOND_ORDER_COSTS emptied)."""
    import optmech.problems.pure_nd as pure_nd

    def run():
        return optmech.solve(Problem(privacy=PureDP(1.0), cost=cost, sensitivity=1.0, domain=Continuous(n), dim=2,
                                     norm=norm, symmetry="orbits"), time_limit=30)

    second = run()
    monkeypatch.setattr(pure_nd, "SECOND_ORDER_COSTS", ())
    first = run()
    for r in (second, first):
        assert r.certified and r.lp["builder"] == "cells_nd_orbits"
    if norm == cost:
        v = staircase_nd_optimal_cost(cost, 1.0, 1.0, 2, norm=norm)
        assert second.lower_bound <= v * (1 + 1e-12) and first.lower_bound <= v * (1 + 1e-12)
    assert second.lower_bound <= min(second.upper_bound, first.upper_bound)
    assert second.lower_bound > first.lower_bound


@pytest.mark.parametrize("d", [2, 3])
def test_l1_shell_prices_of_l2_and_linf(d):
    """On an ℓ1 shell, E‖X‖∞ = E[‖X‖₁]·H_d/d and 1/√d <= E‖X‖₂/E‖X‖₁ <= √(2/(d+1)) (module comment): the prices of
    :func:`optmech.problems.pure_nd.build_pure_nd`'s layered LP bracket the Monte Carlo means of a uniform law on
    the shell (Dirichlet directions with random signs, the radius drawn by its r^{d−1} density)."""
    from optmech.problems.pure_nd import build_pure_nd

    rng = np.random.default_rng(11)
    n = 8
    h = 1.0 / n
    for kind in ("l2", "linf"):
        alp = build_pure_nd(kind, 1.0, 1, 6, dim=d, norm="l1", resolution=n, side="upper", layered=True)
        for k in (0, 3, 6):
            u = rng.random(200_000)
            r = h * (k ** d + u * ((k + 1) ** d - k ** d)) ** (1.0 / d)  # ‖X‖₁ on the shell [kh, (k+1)h)
            theta = rng.dirichlet(np.ones(d), size=len(u))
            x = r[:, None] * theta
            mean = float(NORM[kind](x).mean())
            se = float(NORM[kind](x).std()) / math.sqrt(len(u))
            assert alp.cost_lo[k] <= mean + 5 * se and mean - 5 * se <= alp.cost_hi[k]
            if kind == "linf":
                assert alp.cost_hi[k] == pytest.approx(mean, abs=6 * se)


def test_l1_sensitivity_l2_cost_upper_end_is_the_layered_law_and_costs_its_bound():
    """ℓ1 sensitivity, cost ‖x‖₂, d = 2, ε = 1: the upper end is the audited ℓ1-shell law (the fine layered LP),
    the certified bracket is below the ℓ1 staircase's ‖x‖₂ cost only through that law, and its samples' mean
    ‖x‖₂ lies below the upper end (Monte Carlo, 5 standard errors) and above the lower end."""
    # resolution 4 given: the cell LP is not refined (that is tested in test_pure_nd_continuous.py)
    r = optmech.solve(Problem(privacy=PureDP(1.0), cost="l2", sensitivity=1.0, domain=Continuous(4), dim=2, norm="l1"),
                      time_limit=30)
    assert r.certified and r.lower_bound < r.upper_bound
    assert any("l1 shells" in c for c in r.claims)
    x = r.mechanism.sample(200_000, rng=np.random.default_rng(3))
    v = np.sqrt((x * x).sum(axis=1))
    se = float(v.std()) / math.sqrt(len(v))
    assert r.lower_bound - 5 * se <= float(v.mean()) <= r.upper_bound + 5 * se


def test_a_quadrature_cost_gets_a_proven_closed_form_bound_as_upper_end():
    """ℓ∞ sensitivity with cost ‖x‖₂ (the ℓ∞ staircase's E‖X‖₂ is a quadrature): with no time for an LP the answer
    is still a certified bracket, its upper end √(E‖X‖₂²) of the ℓ∞ staircase (Jensen; E‖X‖₂² exact), which
    Monte Carlo samples of that law confirm: the mean of ‖X‖₂² squares to it, the mean of ‖X‖₂ lies below."""
    # the resolution is given, so the family does not coarsen the cells to fit an LP into the 3 s
    r = optmech.solve(Problem(privacy=PureDP(1.0), cost="l2", sensitivity=1.0, domain=Continuous(resolution=4), dim=2,
                              norm="linf"), time_limit=3)
    assert r.certified and r.lower_bound < r.upper_bound
    assert any("Jensen" in c for c in r.claims)
    x = r.mechanism.sample(200_000, rng=np.random.default_rng(5))
    sq = (x * x).sum(axis=1)
    se = float(sq.std()) / math.sqrt(len(sq))
    assert abs(float(sq.mean()) - r.upper_bound**2) <= 5 * se
    assert float(np.sqrt(sq).mean()) <= r.upper_bound
