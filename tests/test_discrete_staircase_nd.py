"""The ℓ1 discrete staircase on ℤ^d (reference/multidim.md §8): sphere formulas by enumeration,
reductions to known laws, normalisation, privacy by brute force, optimal r, the sampler."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from optmech.errors import SpecError
from optmech.mechanisms import DiscreteLaplaceND, DiscreteStaircase, Mechanism, make_mechanism
from optmech.mechanisms.discrete_staircase_nd import (
    DiscreteStaircaseND,
    discrete_staircase_nd_costs,
    sphere_l2sq_sums,
    sphere_sizes,
)


def box(d: int, R: int) -> np.ndarray:
    return np.array(list(itertools.product(range(-R, R + 1), repeat=d)))


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_sphere_formulas_by_enumeration(d):
    pts = box(d, 8)
    n1, n2 = np.abs(pts).sum(1), (pts**2).sum(1)
    k = np.arange(0, 9)
    assert np.array_equal(sphere_sizes(k, d), [np.sum(n1 == v) for v in k])
    assert np.array_equal(sphere_l2sq_sums(k, d), [n2[n1 == v].sum() for v in k])


def test_reductions():
    """d = 1 is P_r [Geng13, (2.17)]; Δ = 1 is the product of geometric laws [Geng13, Thm 2.12]."""
    m1, s1 = DiscreteStaircaseND(epsilon=0.7, sensitivity=4, r=3, dim=1), DiscreteStaircase(epsilon=0.7, sensitivity=4, r=3)
    k = np.arange(-30, 31)
    assert np.allclose(m1.pmf(k[:, None]), s1.pmf(k), rtol=1e-13)
    assert m1.expected_cost("l1") == pytest.approx(s1.expected_cost("abs"), rel=1e-13)
    for d in (2, 3):
        m, g = DiscreteStaircaseND(epsilon=1.1, sensitivity=1, r=1, dim=d), DiscreteLaplaceND(epsilon=1.1, sensitivity=1, dim=d)
        pts = box(d, 4)
        assert np.allclose(m.pmf(pts), g.pmf(pts), rtol=1e-13)
        for c in ("l1", "l2sq"):
            assert m.expected_cost(c) == pytest.approx(g.expected_cost(c), rel=1e-13)


@pytest.mark.parametrize("d,D,r,eps", [(2, 3, 2, 0.9), (3, 2, 1, 1.5), (2, 4, 4, 0.6)])
def test_mass_cost_and_privacy_by_brute_force(d, D, r, eps):
    m = DiscreteStaircaseND(epsilon=eps, sensitivity=D, r=r, dim=d)
    R = 60 if d == 2 else 30
    pts = box(d, R)
    p = m.pmf(pts)
    tail = float(np.exp(-eps * (R // D - 1)) * (2 * R) ** d)  # a crude bound on the mass outside the box
    assert abs(p.sum() - 1) < max(tail, 1e-12)
    n1 = np.abs(pts).sum(1)
    assert m.expected_cost("l1") == pytest.approx(float((n1 * p).sum()), rel=max(1e-10, 10 * tail))
    # privacy: every pair inside a small box at ℓ1 distance <= Δ; the worst ratio is e^ε exactly
    small = box(d, 2 * D + 1)
    shifts = [v for v in box(d, D) if 0 < np.abs(v).sum() <= D]
    worst = max(float(np.max(m.pmf(small) / m.pmf(small + v))) for v in shifts)
    assert worst == pytest.approx(math.exp(eps), rel=1e-12)


def test_optimal_r_and_costs_by_r():
    eps, D, d = 0.8, 5, 3
    values = discrete_staircase_nd_costs("l2sq", eps, D, d)
    for r in (1, 3, 5):
        assert values[r - 1] == pytest.approx(DiscreteStaircaseND(epsilon=eps, sensitivity=D, r=r, dim=d).expected_cost("l2sq"), rel=1e-13)
    best = DiscreteStaircaseND.optimal("l2sq", epsilon=eps, sensitivity=D, dim=d)
    assert best.expected_cost("l2sq") == pytest.approx(values.min(), rel=1e-14)
    with pytest.raises(SpecError):
        best.expected_cost("linf")


@pytest.mark.parametrize("d,D,r", [(2, 3, 2), (3, 2, 1), (5, 2, 2)])
def test_sampler_matches_the_law(d, D, r):
    m = DiscreteStaircaseND(epsilon=0.8, sensitivity=D, r=r, dim=d)
    x = m.sample(100_000, rng=7)
    assert x.shape == (100_000, d) and x.dtype == np.int64
    n1 = np.abs(x).sum(1)
    for name, v in (("l1", n1.astype(float)), ("l2sq", (x.astype(float) ** 2).sum(1))):
        assert abs(v.mean() - m.expected_cost(name)) < 5 * v.std() / math.sqrt(v.size)
    # the radius law: chi-square of ‖X‖₁ against |S_k| φ(k) a
    ks = np.arange(0, 25)
    expected = sphere_sizes(ks, d) * np.exp(-0.8 * (np.floor((ks - r) / D) + 1)) * math.exp(m._log_a) * x.shape[0]
    observed = np.array([np.sum(n1 == k) for k in ks])
    rest = x.shape[0] - observed.sum()
    assert stats.chisquare(np.append(observed, rest), np.append(expected, x.shape[0] - expected.sum())).pvalue > 1e-3
    # given the radius, the point is uniform on the sphere: coordinates are exchangeable and sign-symmetric
    assert abs(np.mean(x[:, 0] > 0) - np.mean(x[:, 0] < 0)) < 0.01
    assert abs(np.mean(np.abs(x[:, 0])) - np.mean(np.abs(x[:, -1]))) < 5 * np.abs(x[:, 0]).std() / math.sqrt(x.shape[0]) * 1.5


def test_round_trip_and_factory():
    m, how = make_mechanism("discrete_staircase", epsilon=1.0, sensitivity=3, dim=2, cost="l1")
    assert isinstance(m, DiscreteStaircaseND) and how.shape == "optimal"
    assert Mechanism.from_dict(json.loads(json.dumps(m.to_dict()))) == m
    for bad in (dict(r=0), dict(r=4), dict(dim=0), dict(epsilon=0.0)):
        kw = dict(epsilon=1.0, sensitivity=3, r=2, dim=2) | bad
        with pytest.raises(SpecError):
            DiscreteStaircaseND(**kw)
