"""Deployed integer noise (optmech.mechanisms.deployed_integer) against independent brute force.

Every reference value here is re-derived from the laws' definitions in mpmath (50 digits) or Fractions:
pmfs summed term by term, δ_s = Σ_x [p(x) − e^ε p(x+s)]_+ over all shifts 1..Δ, the Tulap pmf from its CDF
[AS18, AV23] (not from the module's cell construction).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from optmech.audit import hockey_stick_array
from optmech.mechanisms.deployed_integer import (deployed_laws, discrete_gaussian_law, rounded_tulap_law,
                                                 truncated_geometric_law, window_delta)
from optmech.mechanisms.gaussian import discrete_gaussian_sigma

CASES = [(eps, dlt, D) for D in (1, 2, 3, 4) for eps, dlt in ((0.5, 1e-2), (1.0, 1e-3), (2.0, 1e-6))]


def brute_delta(p: dict[int, mp.mpf], eps: float, D: int) -> mp.mpf:
    """max_{s=1..Δ} Σ_x [p(x) − e^ε p(x+s)]_+ over the (finite) support, in mpmath."""
    E = mp.e ** mp.mpf(eps)
    return max(sum(max(px - E * p.get(x + s, 0), 0) for x, px in p.items()) for s in range(1, D + 1))


def tg_pmf(eps: float, D: int, T: int) -> dict[int, mp.mpf]:
    lam = mp.e ** (-mp.mpf(eps) / D)
    w = {x: lam ** abs(x) for x in range(-T, T + 1)}
    Z = sum(w.values())
    return {x: v / Z for x, v in w.items()}


def moments(p: dict[int, mp.mpf]) -> tuple[mp.mpf, mp.mpf]:
    return sum(abs(x) * v for x, v in p.items()), sum(x * x * v for x, v in p.items())


@pytest.fixture(autouse=True)
def _digits():
    with mp.workdps(50):
        yield


@pytest.mark.parametrize("eps,dlt,D", CASES)
def test_truncated_geometric_minimal_and_private(eps, dlt, D):
    law = truncated_geometric_law(eps, dlt, D)
    T = law.parameters["T"]
    assert law.private and law.audited_delta <= dlt
    assert brute_delta(tg_pmf(eps, D, T), eps, D) <= dlt
    assert brute_delta(tg_pmf(eps, D, T - 1), eps, D) > dlt          # T is minimal
    m1, m2 = moments(tg_pmf(eps, D, T))
    assert law.cost_abs[0] <= m1 <= law.cost_abs[1] and law.cost_square[0] <= m2 <= law.cost_square[1]
    assert law.cost_abs[1] - law.cost_abs[0] <= 1e-12 * m1
    # the non-negative translate: same δ, E Y = T, E Y² = E X² + T²
    y = deployed_laws(eps, dlt, D, names=("truncated_geometric_nonneg",))["truncated_geometric_nonneg"]
    assert y.offset == 0 and y.cost_abs == (T, T)
    assert y.cost_square[0] <= m2 + T * T <= y.cost_square[1] and y.private


@pytest.mark.parametrize("eps,dlt,D", CASES[::2])
def test_discrete_laplace(eps, dlt, D):
    law = deployed_laws(eps, dlt, D, names=("discrete_laplace",))["discrete_laplace"]
    lam = mp.e ** (-mp.mpf(eps) / D)
    W = 4000
    p = {x: (1 - lam) / (1 + lam) * lam ** abs(x) for x in range(-W, W + 1)}   # tail < 1e-200 here
    m1, m2 = moments(p)
    assert law.cost_abs[0] <= m1 <= law.cost_abs[1] and law.cost_square[0] <= m2 <= law.cost_square[1]
    assert law.audited_delta <= 1e-12 and law.private          # ε-DP: δ(ε) = 0 up to rounding and tail
    # the float window is the law: masses within pmf_error
    k = np.arange(law.offset, law.offset + law.pmf.size)
    sel = np.abs(k) <= 50
    assert all(abs(law.pmf[i] - float(p[int(k[i])])) <= 1e-15 for i in np.flatnonzero(sel))


def tulap_cdf(x: mp.mpf, b: mp.mpf, q: mp.mpf) -> mp.mpf:
    """CDF of Tulap(0, b, q) [AS18]: the untruncated F, then truncation to its central 1 − q mass."""
    r = mp.nint(x)
    if x <= 0:
        F = b ** (-r) / (1 + b) * (b + (x - r + mp.mpf(1) / 2) * (1 - b))
    else:
        F = 1 - b**r / (1 + b) * (b + (r - x + mp.mpf(1) / 2) * (1 - b))
    return min(max((F - q / 2) / (1 - q), mp.mpf(0)), mp.mpf(1))


@pytest.mark.parametrize("eps,dlt,D", [(1.0, 1e-2, 1), (0.5, 1e-3, 1), (2.0, 1e-6, 1), (1.0, 1e-2, 2),
                                       (1.0, 1e-3, 3), (0.5, 1e-2, 4)])
def test_rounded_tulap_against_cdf(eps, dlt, D):
    law = rounded_tulap_law(eps, dlt, D)
    dcal = law.parameters["delta_calibrated"]
    b = mp.e ** (-mp.mpf(eps))
    q = 2 * mp.mpf(dcal) * b / (1 - b + 2 * mp.mpf(dcal) * b)
    J = -law.offset
    p = {j: tulap_cdf((mp.mpf(j) + 0.5) / D, b, q) - tulap_cdf((mp.mpf(j) - 0.5) / D, b, q) for j in range(-J, J + 1)}
    assert abs(sum(p.values()) - 1) < 1e-40
    got = law.pmf
    assert max(abs(float(p[j]) - got[j + J]) for j in p) <= 1e-15
    assert sum(abs(float(p[j]) - got[j + J]) for j in p) <= law.pmf_error
    d = brute_delta(p, eps, D)
    assert d <= dlt and law.private and law.audited_delta <= dlt
    if D == 1:   # the CND is tight at Δ = 1 [AV23]: δ(ε) equals the calibration δ
        assert abs(d / mp.mpf(dcal) - 1) < 1e-30
    m1, m2 = moments(p)
    assert law.cost_abs[0] <= m1 <= law.cost_abs[1] and law.cost_square[0] <= m2 <= law.cost_square[1]


@pytest.mark.parametrize("eps,dlt,D", [(1.0, 1e-3, 1), (0.5, 1e-2, 2), (2.0, 1e-6, 3)])
def test_discrete_gaussian(eps, dlt, D):
    law = discrete_gaussian_law(eps, dlt, D)
    sigma = law.parameters["sigma"]
    assert law.private
    assert abs(sigma / discrete_gaussian_sigma(eps, dlt, D) - 1) < 1e-9       # the same smallest σ
    K = int(40 * sigma) + 40
    w = {x: mp.e ** (-mp.mpf(x) ** 2 / (2 * mp.mpf(sigma) ** 2)) for x in range(-K, K + 1)}
    Z = sum(w.values())
    p = {x: v / Z for x, v in w.items()}
    assert brute_delta(p, eps, D) <= dlt
    m1, m2 = moments(p)
    assert law.cost_abs[0] <= m1 <= law.cost_abs[1] and law.cost_square[0] <= m2 <= law.cost_square[1]


def test_window_delta_bounds_exact_and_matches_audit():
    rng = np.random.default_rng(3)
    for n, eps in ((7, 0.3), (40, 1.0), (200, 2.0)):
        p = rng.random(n) ** 3
        p /= p.sum()
        shifts = np.arange(1, 6)
        got = window_delta(p, eps, shifts)
        ref = hockey_stick_array(p, shifts[:, None], eps)
        c = Fraction(math.exp(eps)) * (1 - Fraction(1, 10**15))   # below e^ε
        P = [Fraction(x) for x in p]
        for i, s in enumerate(shifts):
            exact = sum(max(P[x] - c * (P[x + s] if x + s < n else 0), 0) for x in range(n))
            assert Fraction(got[i]) >= exact
            assert abs(got[i] - ref[i]) <= 1e-14


def test_all_laws_private_and_ordered_small_grid():
    for eps, dlt, D in ((1.0, 1e-6, 1), (0.5, 1e-6, 10)):
        laws = deployed_laws(eps, dlt, D)
        assert all(law.private for law in laws.values())
        for law in laws.values():
            assert law.cost_abs[0] <= law.cost_abs[1] and law.cost_square[0] <= law.cost_square[1]
            assert abs(law.pmf.sum() - 1) < 1e-9
