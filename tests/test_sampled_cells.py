"""Second-order bounds for general costs on ℝ (:class:`optmech.problems.lattice.SampledCells`) and
the interior-point route of the general 1-D window LP (issue 23).

The grid's minorants and cell-mean bounds are checked pointwise against the cost itself (float
evaluation at many points, high-precision quadrature for the means); the solves against the
closed-form staircase optimum for |x| [Geng13, Thm 2.4] and against the first-order cell LP, an
independent bracket of the same V*.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import optmech
from optmech.costs import parse_cost
from optmech.problems.lattice import Grid1D, SampledCells
from optmech.spec import Continuous, IntegerLattice, Problem, PureDP

COSTS = [
    "where(x > 0, x, 2*abs(x))",  # asymmetric, kink at 0
    "where(x > 0, x*x, 2*x*x)",  # asymmetric, smooth pieces
    "min(abs(x), 0.5*abs(x - 3) + 1)",  # non-monotone: two basins
    "sqrt(abs(x)) + where(x > 0, 0, abs(x))",  # unbounded slope at 0
    "abs(x - 0.3) * (1 + 0.5*min(abs(x), 1))",
    "exp(-x*x) + 0.1*abs(x)",  # non-monotone, smooth
]


def grid(resolution: int = 8) -> SampledCells:
    return SampledCells.with_resolution(1.0, resolution, near=40 * resolution)


@pytest.mark.parametrize("text", COSTS)
def test_minorants_lie_below_the_cost(text):
    cost, g = parse_cost(text), grid()
    j = np.arange(-60, 60)
    ga, gb = g.minorant_ends(cost, j)
    t = np.linspace(0.0, 1.0, 257)
    s = g.sample(j)[:, None] + t[None, :] * g.h
    affine = ga[:, None] * (1 - t[None, :]) + gb[:, None] * t[None, :]
    assert np.all(affine <= cost(s)), text
    # second order where the cost is affine: the chord loses nothing but rounding
    if text.startswith("where(x > 0, x,"):
        right = j >= 1
        assert np.allclose(ga[right], cost(g.sample(j[right])), rtol=1e-12, atol=0)


@pytest.mark.parametrize("text", COSTS)
def test_point_costs_take_the_smaller_neighbour(text):
    cost, g = parse_cost(text), grid()
    k = np.arange(-40, 40)
    _, left = g.minorant_ends(cost, k - 1)
    right, _ = g.minorant_ends(cost, k)
    c = g.cost_lower(cost, k)
    assert np.array_equal(c, np.minimum(left, right))
    assert np.all(c <= cost(g.sample(k)))


@pytest.mark.parametrize("text", COSTS)
def test_cell_mean_upper_bounds_the_mean_to_second_order(text):
    cost, g = parse_cost(text), grid()
    mpmath.mp.dps = 20
    k = np.arange(-6, 6)
    up, means = g.cost_upper(cost, k), []
    for kk in k:
        a, b = float(g.left(kk)), float(g.right(kk))
        pts = sorted({a, b, *(p for p in (0.0, 1.0, -1.0, 3.0, 2.0) if a < p < b)})
        means.append(float(mpmath.quad(lambda x: mpmath.mpf(float(cost(np.array([float(x)]))[0])), pts) / (b - a)))
    means = np.array(means)
    assert np.all(up >= means * (1 - 1e-12) - 1e-15), text
    h = g.h
    if text == "where(x > 0, x*x, 2*x*x)":  # |L''| <= 4: within (d_hi − d_lo)·h/8 <= h²/2 of the mean
        assert np.all(up - means <= 0.5 * h * h + 1e-12)
    if text == "where(x > 0, x, 2*abs(x))":  # affine on every cell but the one at 0: exact up to rounding
        away = (g.left(k) > 0) | (g.right(k) < 0)  # the two cells that touch the kink are first order
        assert np.allclose(up[away], means[away], rtol=1e-12, atol=0)


@pytest.mark.parametrize("text", COSTS[:3])
def test_outside_price_is_below_every_point_cost_beyond(text):
    cost, g = parse_cost(text), SampledCells.with_resolution(1.0, 8, near=64)
    for k_first, direction in ((20, 1), (-21, -1), (70, 1), (-80, -1)):
        beyond = np.arange(k_first, k_first + direction * 400, direction)
        assert g.outside_min(cost, k_first, direction) <= np.min(g.cost_lower(cost, beyond))


def test_abs_cost_without_symmetry_brackets_the_staircase_optimum():
    # |x| through the general (sampled) path: the closed-form staircase value must lie in the bracket,
    # and second order reaches 1e-6 with a few thousand cells per period at most (first order: ~1e5)
    r = optmech.solve(Problem(privacy=PureDP(1.0), cost="abs", sensitivity=1.0, domain=Continuous(),
                              target_gap=1e-6, symmetry="off"))
    assert r.certified and r.status == "optimal" and r.lp["builder"] == "general"
    stair = [ref for ref in r.references if ref.name == "staircase"]
    assert stair and all(ref.inside_bracket and ref.exact for ref in stair)
    assert r.lower_bound <= stair[0].value <= r.upper_bound
    assert max(h["size"]["cells_per_period"] for h in r.history) <= 2048
    assert any("sampled cells" in c for c in r.claims)


@pytest.mark.parametrize("text", ["min(abs(x), 0.5*abs(x - 3) + 1)", "where(x > 0, x, 2*abs(x))"])
def test_sampled_bracket_meets_the_cell_minimum_bracket(text):
    fine = optmech.solve(Problem(privacy=PureDP(1.0), cost=text, sensitivity=1.0, domain=Continuous(),
                                 target_gap=1e-5))
    coarse = optmech.solve(Problem(privacy=PureDP(1.0), cost=text, sensitivity=1.0,
                                   domain=Continuous(resolution=32)))  # the first-order cell LP
    assert fine.certified and coarse.certified and fine.relative_gap <= 1e-5
    assert coarse.lower_bound <= fine.upper_bound and fine.lower_bound <= coarse.upper_bound
    assert coarse.upper_bound - coarse.lower_bound > 100 * (fine.upper_bound - fine.lower_bound)


def test_large_general_integer_lp_goes_to_the_interior_point_solver():
    cost = "where(x > 0, x, 2*abs(x))"
    p = Problem(privacy=PureDP(1.0), cost=cost, sensitivity=300, domain=IntegerLattice(), target_gap=1e-9,
                symmetry="off")
    ipm = optmech.solve(p)
    simplex = optmech.solve(p, solver="ipm")  # HiGHS's profile: IPX with crossover, then simplex
    assert ipm.lp["solver"] == "clarabel" and simplex.lp["solver"] == "highs"
    for r in (ipm, simplex):
        assert r.certified and r.relative_gap <= 1e-9
    assert ipm.lower_bound <= simplex.upper_bound and simplex.lower_bound <= ipm.upper_bound
    assert math.isclose(ipm.upper_bound, simplex.upper_bound, rel_tol=1e-9)
