"""TruncatedDiscreteLaplace: the law, its exact δ, its exact sampler, and its use in OpenDP / dp_accounting.

Reference values are computed here from the definition p(k) ∝ λ^{|k|} on [−T, T]: the hockey-stick
divergence by an exact sum in fractions (λ replaced by a rational bracket of e^{−ε/Δ} is not needed:
δ is a ratio of masses, checked in floats against the interval-arithmetic bound with a relative margin,
and in exact rationals for a rational λ via the structural identity δ = mass of the top Δ points).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from optmech.errors import SpecError
from optmech.mechanisms import Mechanism, TruncatedDiscreteLaplace


def law(eps: float, sens: int, T: int) -> np.ndarray:
    k = np.arange(-T, T + 1)
    p = np.exp(-eps * np.abs(k) / sens)
    return p / p.sum()


def hockey_stick(p: np.ndarray, eps: float, shifts) -> float:
    n = len(p)
    out = 0.0
    for s in shifts:
        q = np.concatenate([p[s:], np.zeros(s)])
        out = max(out, math.fsum(np.maximum(p - math.exp(eps) * q, 0.0)))
    return out


@pytest.mark.parametrize("eps, delta, sens", [(1.0, 1e-6, 10), (0.5, 1e-3, 3), (2.0, 1e-8, 1), (0.1, 1e-5, 7)])
def test_smallest_half_width_and_its_delta(eps, delta, sens):
    m = TruncatedDiscreteLaplace(epsilon=eps, delta=delta, sensitivity=sens)
    T = m.half_width
    d_T = hockey_stick(law(eps, sens, T), eps, range(1, sens + 1))
    # the float sum of the tie terms p(k) − e^ε p(k+s) ≈ 0 is off by about u·(1 + e^ε) per unit of mass
    slack = 4 * 2.0**-53 * (1 + math.exp(eps))
    assert d_T <= delta and m.privacy().delta >= d_T * (1 - 1e-9) - slack
    assert m.privacy().delta <= delta
    assert hockey_stick(law(eps, sens, T - 1), eps, range(1, sens + 1)) > delta       # T is the smallest


def test_delta_is_the_mass_of_the_top_points_exactly():
    """With a rational λ the identity δ(T) = mass of the top Δ points holds exactly (fractions)."""
    lam, T, D = Fraction(1, 2), 6, 3
    w = {k: lam ** abs(k) for k in range(-T, T + 1)}
    Z = sum(w.values())
    p = {k: v / Z for k, v in w.items()}
    c = 1 / lam ** D                       # e^ε = λ^{-Δ}
    for s in range(1, D + 1):
        hs = sum(max(p[k] - c * p.get(k + s, 0), 0) for k in p)
        assert hs == sum(p[k] for k in range(T - s + 1, T + 1))
    eps = D * math.log(2)
    m = TruncatedDiscreteLaplace(epsilon=eps, sensitivity=D, half_width=T)
    assert m.delta >= float(sum(p[k] for k in range(T - D + 1, T + 1))) * (1 - 1e-12)
    assert m.delta <= float(sum(p[k] for k in range(T - D + 1, T + 1))) * (1 + 1e-9)


def test_pmf_cdf_costs_against_the_definition():
    m = TruncatedDiscreteLaplace(epsilon=0.7, delta=1e-4, sensitivity=5)
    T = m.half_width
    p = law(0.7, 5, T)
    k = np.arange(-T, T + 1)
    assert np.allclose(m.pmf(k), p, rtol=1e-12, atol=0)
    assert float(m.pmf(T + 1)) == 0.0 and float(m.pmf(0.5)) == 0.0
    assert np.allclose(m.cdf(k), np.cumsum(p), rtol=1e-10, atol=1e-15)
    assert m.expected_cost("abs") == pytest.approx(float(np.sum(np.abs(k) * p)), rel=1e-12)
    assert m.expected_cost("square") == pytest.approx(float(np.sum(k * k * p)), rel=1e-12)
    assert m.support() == (-T, T)
    assert Mechanism.from_dict(m.to_dict()) == m


def test_exact_sampler_draws_the_law():
    m = TruncatedDiscreteLaplace(epsilon=1.0, half_width=4, sensitivity=2)
    x = m.exact_sampler().sample(20000, rng=3)
    assert x.dtype.kind == "i" and np.abs(x).max() <= 4
    counts = np.bincount(x + 4, minlength=9)
    _, pval = chisquare(counts, 20000 * law(1.0, 2, 4))
    assert pval > 1e-4
    assert np.array_equal(m.exact_sampler().sample(50, rng=7), m.exact_sampler().sample(50, rng=7))


def test_bad_parameters():
    with pytest.raises(SpecError, match="one of delta"):
        TruncatedDiscreteLaplace(epsilon=1.0, sensitivity=2)
    with pytest.raises(SpecError, match="half_width"):
        TruncatedDiscreteLaplace(epsilon=1.0, half_width=-1)


def test_opendp_and_dp_accounting_take_it():
    pytest.importorskip("opendp")
    pytest.importorskip("dp_accounting")
    from optmech.interop.accounting import composed_delta
    from optmech.interop.opendp import make_measurement

    m = TruncatedDiscreteLaplace(epsilon=1.0, delta=1e-6, sensitivity=10)
    meas = make_measurement(m)
    assert isinstance(meas(5), int)
    eps, delta = meas.map(10)
    assert eps == 1.0 and delta == m.delta
    exact = hockey_stick(law(1.0, 10, m.half_width), 1.0, range(1, 11))
    d1 = composed_delta(m, None, 1, 1.0)
    assert exact * (1 - 1e-9) <= d1 <= exact + 1e-6 * 1e-3        # pessimistic, within the loss grid
