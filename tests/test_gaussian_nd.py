"""GaussianND: the isotropic Gaussian on ℝ^d, checked against independent computations, and as the
mechanism of an (ε, δ) solve on ℝ^d whose upper end is the analytic Gaussian (issue 38)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from optmech.mechanisms import GaussianND, Mechanism


def bw18_delta(sigma: float, eps: float, shift: float) -> float:
    """[BW18, Thm 8]: Φ(s/(2σ) − εσ/s) − e^ε Φ(−s/(2σ) − εσ/s)."""
    a, b = shift / (2 * sigma), eps * sigma / shift
    return norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b)


def test_the_two_dimensional_pair_has_the_one_dimensional_curve():
    """δ of (N(0, σ²I), N(v, σ²I)) in 2-D by quadrature on a grid equals [BW18]'s 1-D δ at ‖v‖₂."""
    sigma, eps, v = 1.3, 0.5, np.array([0.6, 0.8])       # ‖v‖₂ = 1
    g = GaussianND(sigma=sigma, epsilon=eps, dim=2)
    t = np.linspace(-9, 9, 1201)
    h = t[1] - t[0]
    X, Y = np.meshgrid(t, t, indexing="ij")
    pts = np.stack([X, Y], axis=-1)
    p, q = g.pdf(pts), g.pdf(pts - v)
    delta_grid = float(np.maximum(p - math.exp(eps) * q, 0).sum() * h * h)
    assert delta_grid == pytest.approx(bw18_delta(sigma, eps, 1.0), rel=2e-3)
    assert g.privacy().delta == pytest.approx(bw18_delta(sigma, eps, 1.0), rel=1e-9)
    assert float((p * h * h).sum()) == pytest.approx(1.0, abs=1e-6)


def test_calibration_and_costs():
    g = GaussianND(epsilon=1.0, delta=1e-5, sensitivity=2.0, dim=4)
    s = g.sigma
    assert bw18_delta(s, 1.0, 2.0) <= 1e-5 * (1 + 1e-9)
    assert bw18_delta(s * (1 - 1e-6), 1.0, 2.0) > 1e-5               # the smallest σ
    assert g.expected_cost("l1") == pytest.approx(4 * s * math.sqrt(2 / math.pi), rel=1e-12)
    assert g.expected_cost("l2sq") == pytest.approx(4 * s * s, rel=1e-12)
    chi_mean = math.sqrt(2) * math.gamma(2.5) / math.gamma(2.0)      # E‖Z‖₂ for d = 4
    assert g.expected_cost("l2") == pytest.approx(s * chi_mean, rel=1e-12)
    e_max = integrate.quad(lambda t: 1 - (2 * norm.cdf(t) - 1) ** 4, 0, np.inf)[0]
    assert g.expected_cost("linf") == pytest.approx(s * e_max, rel=1e-7)
    x = g.sample(200_000, rng=3)
    assert x.shape == (200_000, 4)
    assert np.cov(x.T) == pytest.approx(s * s * np.eye(4), abs=0.02 * s * s)
    assert Mechanism.from_dict(g.to_dict()) == g


@pytest.mark.slow  # a long solve: the default suite keeps to its time budget
def test_an_approx_solve_on_the_plane_returns_the_gaussian_it_prices():
    import optmech
    from optmech.spec import Problem

    r = optmech.solve(Problem.from_params({"privacy": "approx", "epsilon": 1, "delta": 0.1, "sensitivity": 1,
                                           "domain": "continuous", "dim": 2, "norm": "l1", "cost": "l1"}),
                      time_limit=30)
    ref = next(x for x in r.references if x.name == "analytic_gaussian")
    if r.upper_bound > ref.value * (1 + 1e-9):
        pytest.skip("a cheaper upper end than the analytic Gaussian was found within the time limit")
    m = r.mechanism
    assert isinstance(m, GaussianND)
    assert m.expected_cost("l1") == pytest.approx(r.upper_bound, rel=1e-9)
    assert m.privacy().delta <= 0.1 and m.privacy().epsilon == 1.0
    assert any("GaussianND" in c for c in r.claims)
