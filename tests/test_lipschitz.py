"""Lipschitz privacy [KHP15]: certified brackets in 1-D (ℤ and ℝ), ℓ1 products and ℓ2 radial."""

import math

import numpy as np
import scipy.integrate
import pytest

from optmech.errors import SpecError
from optmech.problems.lipschitz import audit_chain, build_line, exp_moments, majorant
from optmech.costs import parse_cost
from optmech.drive import solve_lipschitz


def _ref(r, name):
    return next(x for x in r.references if x.name == name)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_continuous_square_contains_laplace(eps):
    r = solve_lipschitz(eps, "square", domain="continuous", resolution=int(20 * eps))
    assert r.certified and (r.status == "optimal") == (r.relative_gap <= 1e-3)  # fixed resolution: optimal iff the target is met
    assert r.lower_bound <= 2 / eps**2 <= r.upper_bound
    assert r.relative_gap < 2e-3
    assert _ref(r, "laplace").inside_bracket
    assert r.problem["privacy"] == "lipschitz" and r.problem["domain"] == "continuous"


def test_continuous_abs_contains_laplace():
    r = solve_lipschitz(1.5, "abs", domain="continuous", resolution=30)
    assert r.certified and r.lower_bound <= 1 / 1.5 <= r.upper_bound
    assert r.relative_gap < 2e-3


def test_bracket_shrinks_with_resolution():
    rs = [solve_lipschitz(1.0, "square", domain="continuous", resolution=n) for n in (5, 10, 20)]
    for a, b in zip(rs, rs[1:]):
        assert b.lower_bound >= a.lower_bound - 1e-12
        assert b.upper_bound <= a.upper_bound + 1e-12
        assert b.relative_gap < a.relative_gap
    for r in rs:
        assert r.lower_bound <= 2.0 <= r.upper_bound


def test_refinement_reaches_target_gap():
    r = solve_lipschitz(1.0, "abs", domain="continuous", target_gap=1e-3)
    assert r.certified and r.relative_gap <= 1e-3 and len(r.history) >= 1


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_integer_abs_is_two_sided_geometric(eps):
    # closed form of the two-sided geometric with ratio b = e^{-eps}: E|X| = 2b/(1-b^2)
    b = math.exp(-eps)
    closed = 2 * b / (1 - b * b)
    r = solve_lipschitz(eps, "abs", domain="integer")
    assert r.certified
    assert r.lower_bound <= closed <= r.upper_bound
    assert r.relative_gap < 1e-8  # the LP optimum is the geometric, verified not assumed
    assert _ref(r, "geometric").inside_bracket


def test_integer_square_is_geometric():
    b = math.exp(-1.0)
    r = solve_lipschitz(1.0, "square")
    assert r.lower_bound <= 2 * b / (1 - b) ** 2 <= r.upper_bound and r.relative_gap < 1e-8


def test_l2_radial_2d_contains_6_over_eps2():
    r = solve_lipschitz(1.0, "l2sq", dim=2, norm="l2", domain="continuous", resolution=40)
    assert r.certified and r.lower_bound <= 6.0 <= r.upper_bound
    assert r.relative_gap < 2e-2
    assert _ref(r, "l2_laplace").inside_bracket
    r3 = solve_lipschitz(2.0, "l2", dim=3, norm="l2", domain="continuous", resolution=40)
    assert r3.certified and r3.lower_bound <= 1.5 <= r3.upper_bound


def test_l1_product():
    r = solve_lipschitz(1.0, "l2sq", dim=3, norm="l1", domain="continuous", resolution=20)
    assert r.certified and r.lower_bound <= 6.0 <= r.upper_bound  # 2n/eps^2, n = 3
    ri = solve_lipschitz(1.0, "l1", dim=2, norm="l1", domain="integer")
    b = math.exp(-1.0)
    assert ri.lower_bound <= 2 * 2 * b / (1 - b * b) <= ri.upper_bound
    assert any("x the 1-D optimum" in c for c in r.claims)


def test_expression_cost():
    r = solve_lipschitz(1.0, "x**2 + abs(x)", domain="continuous", resolution=20)
    assert r.certified and r.lower_bound <= 3.0 <= r.upper_bound  # Laplace: 2 + 1


def test_audit_detects_violation():
    eps = 1.0
    k = np.arange(-30, 31)
    q = majorant(np.exp(-eps * np.abs(k)), math.exp(-eps + 1e-11))
    assert audit_chain(q, 1.0, eps).passed
    bad = q.copy()
    bad[35] *= 1.001  # one mass raised by 0.1%: a neighbour ratio exceeds e^eps
    a = audit_chain(bad, 1.0, eps)
    assert not a.passed and a.realised_rate > eps and a.worst_index in (34, 35)
    zero = q.copy()
    zero[10] = 0.0
    assert not audit_chain(zero, 1.0, eps).passed


def test_lower_bound_below_laplace_point_of_relaxation():
    # Laplace's cell masses (and far masses) are a feasible point of the cell relaxation; its LP
    # objective is >= the LP optimum >= the certified lower bound, and the LP value is close to 2
    from optmech.certify import dual_lower_bound
    from optmech.solvers import load_profile, solve_lp

    eps, h, K = 1.0, 0.1, 400
    cl = build_line(parse_cost("square"), eps, h, K, cells=True)
    k = np.arange(-K, K + 1)
    lo, hi = (np.abs(k) - 0.5) * h, (np.abs(k) + 0.5) * h
    cell = np.where(k == 0, 1 - math.exp(-eps * h / 2), 0.5 * (np.exp(-eps * lo) - np.exp(-eps * hi)))
    far = 0.5 * math.exp(-eps * (K + 0.5) * h)
    x = np.concatenate([cell / cl.sigma, [far, far]])
    act = cl.lp.A @ x
    assert np.all(act <= cl.lp.row_upper + 1e-12) and np.all(act >= cl.lp.row_lower - 1e-12)
    raw = solve_lp(cl.lp, load_profile("default"))
    lb = dual_lower_bound(cl.lp, raw.row_dual, raw.objective).value
    assert lb <= raw.objective <= float(cl.lp.c @ x) + 1e-12
    assert abs(lb - 2.0) < 5e-3 and float(cl.lp.c @ x) <= 2.0


def test_exp_moments():
    for x in (0.0, 1e-6, 0.3, 3.9, 4.1, 20.0):
        M = exp_moments(x, 4)
        for i in range(5):
            # quadrature reference
            s = np.linspace(0, 1, 200001)
            ref = scipy.integrate.trapezoid(s**i * np.exp(-x * s), s)  # np.trapezoid needs numpy >= 2
            assert abs(M[i] - ref) <= 1e-8 * ref


@pytest.mark.parametrize("kw", [
    dict(epsilon=0.0, cost="abs"),
    dict(epsilon=-1.0, cost="abs"),
    dict(epsilon=float("nan"), cost="abs"),
    dict(epsilon=1.0, cost="linf", dim=2, norm="l1"),
    dict(epsilon=1.0, cost="linf", dim=2, norm="l2", domain="continuous"),  # l1 under l2: sandwiched (tested in test_cli_lipschitz_wasserstein)
    dict(epsilon=1.0, cost="l2sq", dim=2, norm="l2", domain="integer"),
    dict(epsilon=1.0, cost="abs", norm="linf"),
    dict(epsilon=1.0, cost="abs", domain="lattice"),
    dict(epsilon=1.0, cost="abs", domain="integer", resolution=4),
    dict(epsilon=1.0, cost="exp(2*abs(x))"),
])
def test_bad_inputs(kw):
    eps = kw.pop("epsilon")
    cost = kw.pop("cost")
    with pytest.raises(SpecError):
        solve_lipschitz(eps, cost, **kw)
