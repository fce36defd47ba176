"""Tests of optmech.mechanisms.multidim: the d-D staircase, Laplace, discrete Laplace and ℓ2
Laplace laws.  Every closed form is checked against an independent route (quadrature of the
radial law, the papers' printed formulas, mpmath brute force, Monte Carlo with tolerances from the
sample standard error, fixed seeds), never against hard-coded outputs.

Papers: [GKOV15] = Geng-Kairouz-Oh-Viswanath 2015 (§II), [Geng13] = Geng dissertation (§3.2-3.3, (3.7)),
[GV13] = Geng-Viswanath (ε,δ) paper ((120)-(128)), [KHP15] = Koufogiannis-Han-Pappas (Thm 8, (14)).
"""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, optimize, stats

from optmech.errors import SpecError
from optmech.mechanisms import DiscreteLaplace, Laplace, Staircase, optimal_gamma, staircase_cost
from optmech.mechanisms import geometry as geo
from optmech.mechanisms import laplace_nd as lnd
from optmech.mechanisms import multidim as md
from optmech.mechanisms import staircase_nd as snd
from optmech.mechanisms.base import Mechanism
from optmech.mechanisms.multidim import (
    COSTS_ND,
    DiscreteLaplaceND,
    L2Laplace,
    LaplaceND,
    StaircaseND,
    discrete_laplace_nd_cost,
    l2_laplace_cost,
    laplace_nd_cost,
    optimal_gamma_nd,
    staircase_nd_cost,
    staircase_nd_moment,
    staircase_nd_normaliser,
    staircase_nd_optimal_cost,
)

GL_X, GL_W = np.polynomial.legendre.leggauss(12)


# --------------------------------------------------------------------------------------------
# helpers (independent of the module's formulas)


def radial_pieces(eps: float, delta: float, gamma: float, d: int):
    """Pieces [lo, hi) of ‖x‖₁ with a constant level, up to where b^k k^d is negligible."""
    k_max = 10
    while -eps * k_max + d * math.log(k_max + 1.0) > -45.0:
        k_max *= 2
    for k in range(k_max):
        for lo, hi in ((k, k + gamma), (k + gamma, k + 1.0)):
            if hi > lo:
                yield lo * delta, hi * delta


def radial_quad(m: StaircaseND, power: float = 0.0) -> float:
    """∫ ‖x‖₁^power f(x) dx = ∫ r^power φ(r) (2^d r^{d−1}/(d−1)!) dr by Gauss-Legendre on each piece,
    with φ read from ``m.pdf`` at r·e₁ (the ℓ1 sphere has area 2^d r^{d−1}/(d−1)!)."""
    d = m.dim
    total = []
    for lo, hi in radial_pieces(m.epsilon, m.sensitivity, m.gamma, d):
        r = (lo + hi) / 2.0 + (hi - lo) / 2.0 * GL_X
        pts = np.zeros((r.size, d))
        pts[:, 0] = r
        dens = m.pdf(pts)
        total.append((hi - lo) / 2.0 * np.sum(GL_W * dens * r ** (power + d - 1)))
    return math.fsum(total) * 2.0**d / math.factorial(d - 1)


def mp_V(gamma, c, b, d, m):
    """E‖X‖₁^m/Δ^m = (d/(d+m)) N_{d+m}/N_d with N_q = Σ_{j=1}^q C(q,j) c_{q−j}(b + (1−b)γ^j) [GKOV15, §II]."""

    def N(q):
        return mpmath.fsum(mpmath.binomial(q, j) * c[q - j] * (b + (1 - b) * gamma**j) for j in range(1, q + 1))

    return mpmath.mpf(d) / (d + m) * N(d + m) / N(d)


def mp_constants(eps, kmax):
    """c_k = Σ i^k b^i via mpmath.polylog (c_0 = 1/(1−b)): independent of the Eulerian route."""
    b = mpmath.exp(-mpmath.mpf(eps))
    return b, [1 / (1 - b)] + [mpmath.polylog(-k, b) for k in range(1, kmax + 1)]


def radial_cdf(m: StaircaseND, r: np.ndarray) -> np.ndarray:
    """P(‖X‖₁ <= r) from the shell masses a·b^level·Vol, Vol = (2Δ)^d (hi^d − lo^d)/d! (units of Δ)."""
    eps, delta, g, d = m.epsilon, m.sensitivity, m.gamma, m.dim
    a = staircase_nd_normaliser(eps, delta, g, d)
    c = a * (2.0 * delta) ** d / math.factorial(d)
    y = np.asarray(r, dtype=float) / delta
    k = np.floor(y).astype(int)
    kk = np.arange(k.max() + 2, dtype=float)
    m0 = c * np.exp(-eps * kk) * ((kk + g) ** d - kk**d)
    m1 = c * np.exp(-eps * (kk + 1)) * ((kk + 1) ** d - (kk + g) ** d)
    below = np.concatenate([[0.0], np.cumsum(m0 + m1)])[k]
    kf, t = k.astype(float), y - k
    dens0 = c * np.exp(-eps * kf)  # mass per unit of (·)^d on the first piece
    dens1 = c * np.exp(-eps * (kf + 1))
    part = np.where(t < g, dens0 * ((kf + t) ** d - kf**d), m0[k] + dens1 * ((kf + t) ** d - (kf + g) ** d))
    return below + part


def seed_cost_d2(eps: float, delta: float, gamma: float) -> float:
    """V(P_γ) of [Geng13] (3.7), last line."""
    b = math.exp(-eps)
    u = 1.0 - b
    num = gamma**3 + 3 * b / u * gamma**2 + 3 * (b * b + b) / u**2 * gamma + b * (1 + 4 * b + b * b) / u**3
    den = gamma**2 + 2 * b / u * gamma + (b + b * b) / u**2
    return 2.0 * delta / 3.0 * num / den


def mc_check(samples: np.ndarray, expected: float, z: float = 5.0) -> None:
    """|mean − expected| <= z standard errors (fixed seeds: deterministic)."""
    se = samples.std(ddof=1) / math.sqrt(samples.size)
    assert abs(samples.mean() - expected) <= z * se, (samples.mean(), expected, se)


# --------------------------------------------------------------------------------------------
# staircase: normaliser, moments, costs


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("gamma", [0.0, 0.37, 1.0])
def test_normaliser_integrates_to_one(d, gamma):
    for eps in (0.4, 2.5):
        m = StaircaseND(epsilon=eps, sensitivity=1.7, gamma=gamma, dim=d)
        assert radial_quad(m) == pytest.approx(1.0, rel=1e-12)


def test_normaliser_special_cases_match_seeds():
    for eps in (0.05, 1.0, 6.0):
        b = math.exp(-eps)
        for g in (0.0, 0.2, 0.9, 1.0):
            # d = 1: 1-D staircase [Geng13, (2.13)]; d = 2: [Geng13, §3.3]
            assert staircase_nd_normaliser(eps, 1.3, g, 1) == pytest.approx((1 - b) / (2 * 1.3 * (g + b * (1 - g))), rel=1e-13)
            a2 = 1.0 / (2 * 1.3**2 * (g * g + 2 * b / (1 - b) * g + (b + b * b) / (1 - b) ** 2))
            assert staircase_nd_normaliser(eps, 1.3, g, 2) == pytest.approx(a2, rel=1e-13)


def test_normaliser_against_seed_formula_in_mpmath():
    """a(γ) = d!/(2^dΔ^d Σ_k C(d,k) c_{d−k}(b + (1−b)γ^k)) [GKOV15, §II] with polylog c_k."""
    with mpmath.workdps(40):
        for d, eps, g in [(3, 0.3, 0.4), (6, 1e-3, 0.7), (10, 5.0, 0.01), (20, 0.5, 0.5)]:
            b, c = mp_constants(eps, d)
            n = mpmath.fsum(mpmath.binomial(d, k) * c[d - k] * (b + (1 - b) * mpmath.mpf(g) ** k) for k in range(1, d + 1))
            ref = mpmath.factorial(d) / (2**d * mpmath.mpf(1.5) ** d * n)
            assert staircase_nd_normaliser(eps, 1.5, g, d) == pytest.approx(float(ref), rel=1e-12)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_moments_against_radial_quadrature(d):
    for eps, g in [(0.5, 0.25), (2.0, 0.8), (1.0, 0.0)]:
        m = StaircaseND(epsilon=eps, sensitivity=0.7, gamma=g, dim=d)
        for p in (1, 2, 3):
            assert staircase_nd_moment(p, eps, 0.7, g, d) == pytest.approx(radial_quad(m, p), rel=1e-11)
            assert m.moment(p) == staircase_nd_moment(p, eps, 0.7, g, d)


def test_moments_against_mpmath_seed_form():
    with mpmath.workdps(50):
        for d, eps, g, p in [(4, 1e-3, 0.3, 1), (4, 1e-3, 0.3, 2), (7, 3.0, 0.9, 3), (2, 30.0, 1e-4, 1)]:
            b, c = mp_constants(eps, d + p)
            ref = mp_V(mpmath.mpf(g), c, b, d, p) * mpmath.mpf(2) ** p
            assert staircase_nd_moment(p, eps, 2.0, g, d) == pytest.approx(float(ref), rel=1e-12)


def test_d2_cost_is_seed_000_eq_3_7():
    for eps in (0.01, 0.3, 1.0, 4.0, 20.0):
        for g in (0.0, 0.1, 0.5, 0.77, 1.0):
            assert staircase_nd_cost("l1", eps, 1.9, g, 2) == pytest.approx(seed_cost_d2(eps, 1.9, g), rel=1e-12)


def test_gamma_is_circular():
    rng = np.random.default_rng(11)
    for d in (1, 2, 4):
        m0 = StaircaseND(epsilon=0.8, sensitivity=1.1, gamma=0.0, dim=d)
        m1 = StaircaseND(epsilon=0.8, sensitivity=1.1, gamma=1.0, dim=d)
        x = rng.laplace(size=(500, d)) * 3.0
        np.testing.assert_allclose(m0.pdf(x), m1.pdf(x), rtol=1e-13)
        for cost in COSTS_ND + ("pow:3",):
            assert m0.expected_cost(cost) == pytest.approx(m1.expected_cost(cost), rel=1e-13)


def test_d1_agrees_with_1d_staircase():
    rng = np.random.default_rng(2)
    for eps, g in [(0.5, 0.3), (2.0, 0.0), (3.0, 1.0)]:
        m = StaircaseND(epsilon=eps, sensitivity=1.4, gamma=g, dim=1)
        s = Staircase(epsilon=eps, sensitivity=1.4, gamma=g)
        x = rng.normal(scale=4.0, size=300)
        np.testing.assert_allclose(m.pdf(x[:, None]), s.pdf(x), rtol=1e-13)
        np.testing.assert_allclose(m.pdf(x), s.pdf(x), rtol=1e-13)  # bare numbers for d = 1
        np.testing.assert_allclose(m.cdf(x), s.cdf(x), rtol=1e-13)
        for name, one in [("l1", "abs"), ("l2", "abs"), ("linf", "abs"), ("l2sq", "square")]:
            assert m.expected_cost(name) == pytest.approx(s.expected_cost(one), rel=1e-12)
        assert m.expected_cost("abs") == pytest.approx(s.expected_cost("abs"), rel=1e-14)  # 1-D pass-through
        assert m.var()[0] == pytest.approx(s.var(), rel=1e-12)
        draws = m.sample(20_000, rng=4)
        assert draws.shape == (20_000, 1)
        assert stats.kstest(draws[:, 0], s.cdf).pvalue > 1e-3
    for eps in (0.1, 1.0, 5.0):
        assert optimal_gamma_nd("l1", eps, 1) == pytest.approx(optimal_gamma(_abs_cost(), eps, 1.0), rel=1e-14)


def _abs_cost():
    from optmech.costs import parse_cost

    return parse_cost("abs")


def test_direction_factors():
    """E‖Θ‖₂ = E‖G‖₂/d (G i.i.d. Exp(1)), E‖Θ‖∞ = H_d/d, E‖Θ‖₂² = 2/(d+1): quadrature / known laws."""
    # E‖G‖₂ for d = 1 is E G = 1; for d = 2 by a double integral
    assert geo.exp_l2_mean(1) == pytest.approx(1.0, rel=1e-13)
    ref2 = integrate.dblquad(lambda y, x: math.exp(-x - y) * math.hypot(x, y), 0, 60, 0, 60, epsabs=1e-13, epsrel=1e-13)[0]
    assert geo.exp_l2_mean(2) == pytest.approx(ref2, rel=1e-10)
    # large-t / small-t branches of 1 − φ for Exp(1) against mpmath
    t = np.array([1e-12, 1e-6, 1e-3, 0.06, 0.0626, 0.07, 1.0, 1e3, 1e9])
    with mpmath.workdps(40):
        ref = [
            float(mpmath.quad(lambda x: mpmath.exp(-x) * -mpmath.expm1(-mpmath.mpf(tt) * x * x), [0, 1, 10, mpmath.inf]))
            for tt in t
        ]
    np.testing.assert_allclose(geo.omphi_exp(t), ref, rtol=3e-15)
    # E‖Z‖∞ for d = 1 is √(2/π); d = 3 by the order-statistic integral via scipy
    assert geo.normal_linf_mean(1) == pytest.approx(math.sqrt(2 / math.pi), rel=1e-13)
    ref3 = integrate.quad(lambda s: 1 - (2 * stats.norm.cdf(s) - 1) ** 3, 0, np.inf, epsabs=1e-14)[0]
    assert geo.normal_linf_mean(3) == pytest.approx(ref3, rel=1e-9)
    # Monte Carlo of the ℓ1-sphere direction factors
    rng = np.random.default_rng(8)
    for d in (2, 3, 5):
        e = rng.standard_exponential((200_000, d))
        theta = e / e.sum(axis=1, keepdims=True)
        mc_check(np.sqrt((theta**2).sum(axis=1)), geo.exp_l2_mean(d) / d)
        mc_check(theta.max(axis=1), geo.harmonic(d) / d)
        mc_check((theta**2).sum(axis=1), 2.0 / (d + 1))


# --------------------------------------------------------------------------------------------
# optimal gamma


def test_quartic_root_is_the_minimum():
    for eps in (0.05, 0.5, 1.0, 2.0, 8.0, 30.0):
        g = optimal_gamma_nd("l1", eps, 2)
        b = math.exp(-eps)
        poly = [(1 - b) ** 2, 4 * b * (1 - b), 6 * b * b, -2 * b * (2 * b + 1), b * b]
        roots = sorted(r.real for r in np.roots(poly) if abs(r.imag) < 1e-12 and 0 <= r.real <= 1)
        assert len(roots) == 2
        assert g == pytest.approx(roots[1], rel=1e-7)
        # numeric minimisation of (3.7) on the circle: the larger root is the minimum, the smaller a maximum
        res = optimize.minimize_scalar(
            lambda x: seed_cost_d2(eps, 1.0, x), bounds=(roots[0], 1.0), method="bounded", options={"xatol": 1e-12}
        )
        assert g == pytest.approx(res.x, abs=2e-5)
        h = 1e-2 * roots[0]
        if eps <= 8.0:  # beyond, V is flat to double precision near the tiny smaller root
            v_max = seed_cost_d2(eps, 1.0, roots[0])
            assert v_max > max(seed_cost_d2(eps, 1.0, roots[0] - h), seed_cost_d2(eps, 1.0, roots[0] + h))
        assert seed_cost_d2(eps, 1.0, g) < min(seed_cost_d2(eps, 1.0, 0.0), seed_cost_d2(eps, 1.0, roots[0]))
    # ε → ∞: γ* ~ (2b)^{1/3}; far beyond double-precision underflow of γ⁴
    for eps in (100.0, 700.0):
        assert optimal_gamma_nd("l1", eps, 2) == pytest.approx((2 * math.exp(-eps)) ** (1 / 3), rel=1e-6)
    # the quartic and the general high-precision route agree
    for eps in (0.01, 1.0, 10.0, 300.0):
        assert snd.gamma_quartic(eps) == pytest.approx(snd.gamma_mp(eps, 2, 1), rel=1e-12)


def test_small_eps_limit_d2():
    """ε → 0: 6γ² − 6γ + 1 = 0, so γ* → ½ + 1/(2√3) (reference/multidim.md §4)."""
    limit = 0.5 + 1 / (2 * math.sqrt(3))
    errs = [abs(optimal_gamma_nd("l1", eps, 2) - limit) for eps in (1e-1, 1e-2, 1e-3)]
    assert errs[2] < 1e-3 and errs[0] > errs[1] > errs[2]


@pytest.mark.parametrize(
    "d,eps,cost",
    [
        (3, 0.5, "l1"), (3, 3.0, "l1"), (4, 0.01, "l1"), (4, 2.0, "l1"), (5, 1.0, "l2sq"),
        (3, 0.2, "l2sq"), (6, 5.0, "linf"), (2, 1.5, "l2sq"), (12, 0.3, "l2"),
    ],
)
def test_gamma_star_against_mpmath_grid(d, eps, cost):
    """Brute force: V(γ) on a 401-point grid of the circle in mpmath (polylog c_k, seed form of N)."""
    m = 2 if cost == "l2sq" else 1
    g_star = optimal_gamma_nd(cost, eps, d)
    with mpmath.workdps(60):
        b, c = mp_constants(eps, d + m)
        grid = [mpmath.mpf(i) / 400 for i in range(401)]
        vals = [mp_V(x, c, b, d, m) for x in grid]
        i = min(range(401), key=lambda j: vals[j])
        v_star = mp_V(mpmath.mpf(g_star), c, b, d, m)
        assert v_star <= vals[i] * (1 + mpmath.mpf(10) ** -40)
    dist = abs(g_star - float(grid[i]))
    assert min(dist, 1 - dist) <= 1 / 400 + 1e-12
    # the cost helpers use that γ*
    opt = staircase_nd_optimal_cost(cost, eps, 2.0, d)
    assert opt == pytest.approx(staircase_nd_cost(cost, eps, 2.0, g_star, d), rel=1e-15)
    assert StaircaseND.optimal(cost, epsilon=eps, sensitivity=2.0, dim=d).gamma == g_star


def test_gamma_star_precision_is_enough(monkeypatch):
    """Flat cases (small ε, larger d: V varies by ~(ε/2π)^d relative) do not move with 40 more
    digits, and a too-low starting precision is detected from the spread of V and raised."""
    g = snd.gamma_mp.__wrapped__(0.005, 6, 1)
    g20 = snd.gamma_mp.__wrapped__(0.3, 20, 1)
    base = snd.gamma_mp_digits
    monkeypatch.setattr(snd, "gamma_mp_digits", lambda e, d, m: base(e, d, m) + 40)
    assert snd.gamma_mp.__wrapped__(0.005, 6, 1) == pytest.approx(g, rel=1e-13)
    monkeypatch.setattr(snd, "gamma_mp_digits", lambda e, d, m: 20)
    assert snd.gamma_mp.__wrapped__(0.3, 20, 1) == pytest.approx(g20, rel=1e-13)


def test_gamma_star_shared_by_l1_proportional_costs():
    for d, eps in [(3, 0.7), (5, 2.0)]:
        g = optimal_gamma_nd("l1", eps, d)
        assert optimal_gamma_nd("l2", eps, d) == g == optimal_gamma_nd("linf", eps, d) == optimal_gamma_nd("pow:1", eps, d)
    # and the optimum never exceeds Laplace (the staircase family contains no Laplace, but beats it)
    for d, eps in [(2, 0.3), (3, 1.0), (5, 4.0)]:
        for cost in ("l1", "l2sq"):
            assert staircase_nd_optimal_cost(cost, eps, 1.0, d) <= laplace_nd_cost(cost, eps, 1.0, d)


# --------------------------------------------------------------------------------------------
# privacy


def _dp_pairs(rng, n, d, delta, norm):
    x = rng.laplace(size=(n, d)) * 3.0 * delta
    t = rng.normal(size=(n, d)) if norm == "l2" else rng.laplace(size=(n, d))
    size = np.sqrt((t * t).sum(axis=1)) if norm == "l2" else np.abs(t).sum(axis=1)
    t *= (delta * rng.uniform(0.5, 1.0, size=n) ** 0.1 / size)[:, None]
    return x, t


@pytest.mark.parametrize("d", [2, 3, 5])
def test_dp_ratio_staircase(d):
    rng = np.random.default_rng(d)
    for g in (0.3, 0.0):
        m = StaircaseND(epsilon=0.9, sensitivity=1.7, gamma=g, dim=d)
        x, t = _dp_pairs(rng, 20_000, d, 1.7, "l1")
        t *= 1 - 1e-12
        ratio = m.pdf(x) / m.pdf(x + t)
        assert ratio.max() <= math.exp(0.9) * (1 + 1e-12)
        assert ratio.min() >= math.exp(-0.9) * (1 - 1e-12)
        assert ratio.max() == pytest.approx(math.exp(0.9), rel=1e-12)  # attained (three-valued ratio)
        # explicit attaining pair: just below a step, pushed outwards by Δ along e₁
        k = 3
        x0 = np.zeros(d)
        x0[0] = (k + g) * 1.7 - 1e-9
        x1 = x0.copy()
        x1[0] += 1.7
        assert m.pdf(x0) / m.pdf(x1) == pytest.approx(math.exp(0.9), rel=1e-12)


def test_dp_ratio_laplace_family():
    rng = np.random.default_rng(3)
    eps, delta = 0.8, 2.0
    cases = [(LaplaceND(epsilon=eps, sensitivity=delta, dim=3), "l1"), (L2Laplace(epsilon=eps, sensitivity=delta, dim=3), "l2")]
    for m, norm in cases:
        x, t = _dp_pairs(rng, 20_000, 3, delta, norm)
        ratio = m.pdf(x) / m.pdf(x + t)
        assert ratio.max() <= math.exp(eps) * (1 + 1e-12)
        assert ratio.max() >= math.exp(0.95 * eps)
        assert m.privacy().norm == norm and m.privacy().notion == "pure" and m.privacy().epsilon == eps
    # discrete: integer shifts with ‖t‖₁ <= Δ
    m = DiscreteLaplaceND(epsilon=eps, sensitivity=3, dim=3)
    k = rng.integers(-20, 21, size=(20_000, 3))
    t = rng.integers(-3, 4, size=(20_000, 3))
    ok = np.abs(t).sum(axis=1) <= 3
    ratio = m.pmf(k[ok]) / m.pmf(k[ok] + t[ok])
    assert ratio.max() <= math.exp(eps) * (1 + 1e-12)
    assert ratio.max() == pytest.approx(math.exp(eps), rel=1e-12)
    assert "Lipschitz" in L2Laplace(epsilon=1.0, dim=2).privacy().note
    assert StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.5, dim=2).privacy().norm == "l1"


# --------------------------------------------------------------------------------------------
# samplers


def _sample_checks(m, x, d):
    a = np.abs(x.astype(float))
    mc_check(a.sum(axis=1), m.expected_cost("l1"))
    mc_check((a * a).sum(axis=1), m.expected_cost("l2sq"))
    mc_check(np.sqrt((a * a).sum(axis=1)), m.expected_cost("l2"))
    mc_check(a.max(axis=1), m.expected_cost("linf"))
    for j in range(d):
        mc_check(x[:, j].astype(float), 0.0)
        mc_check(x[:, j].astype(float) ** 2, m.var()[j])


@pytest.mark.parametrize("d", [2, 3, 5])
def test_sampler_moments_all_mechanisms(d):
    mechs = [
        StaircaseND(epsilon=0.8, sensitivity=1.5, gamma=0.35, dim=d),
        StaircaseND(epsilon=3.0, sensitivity=1.0, gamma=optimal_gamma_nd("l1", 3.0, d), dim=d),
        LaplaceND(epsilon=0.8, sensitivity=1.5, dim=d),
        DiscreteLaplaceND(epsilon=0.8, sensitivity=2, dim=d),
        L2Laplace(epsilon=0.8, sensitivity=1.5, dim=d),
    ]
    for i, m in enumerate(mechs):
        x = m.sample(100_000, rng=100 * d + i)
        assert x.shape == (100_000, d)
        assert x.dtype == (np.int64 if m.lattice else np.float64)
        _sample_checks(m, x, d)
        assert np.array_equal(m.mean(), np.zeros(d)) and m.var().shape == (d,)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_staircase_sampler_laws(d):
    """Direction uniform on the ℓ1 sphere (|X₁|/‖X‖₁ ~ Beta(1, d−1)) and radius law (KS against
    the cdf from the shell masses), for the table and the Worpitzky-mixture shell samplers."""
    for g in (0.3, 1.0):
        m = StaircaseND(epsilon=0.7, sensitivity=1.3, gamma=g, dim=d)
        x = m.sample(40_000, rng=d)
        r = np.abs(x).sum(axis=1)
        assert stats.kstest(np.abs(x[:, 0]) / r, stats.beta(1, d - 1).cdf).pvalue > 1e-3
        assert stats.kstest(r, lambda q: radial_cdf(m, q)).pvalue > 1e-3
        assert np.mean(x[:, d - 1] > 0) == pytest.approx(0.5, abs=0.01)


def test_staircase_mixture_shell_sampler(monkeypatch):
    monkeypatch.setattr(snd, "MAX_TABLE_SHELLS", 0)  # force the exact mixture
    for d in (1, 2, 5):
        m = StaircaseND(epsilon=0.7, sensitivity=1.3, gamma=0.3, dim=d)
        x = m.sample(40_000, rng=7)
        assert m._sampler.mixture is not None
        assert stats.kstest(np.abs(x).sum(axis=1), lambda q: radial_cdf(m, q)).pvalue > 1e-3
    monkeypatch.undo()
    m = StaircaseND(epsilon=1e-5, sensitivity=1.0, gamma=0.4, dim=3)  # table would need > MAX_TABLE_SHELLS shells
    x = m.sample(20_000, rng=9)
    assert m._sampler.mixture is not None
    mc_check(np.abs(x).sum(axis=1), m.expected_cost("l1"))


def test_sample_shapes_and_rng():
    m = StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.5, dim=3)
    assert m.sample(rng=1).shape == (3,)
    assert m.sample((4, 5), rng=1).shape == (4, 5, 3)
    np.testing.assert_array_equal(m.sample(10, rng=3), m.sample(10, rng=3))
    assert DiscreteLaplaceND(epsilon=1.0, sensitivity=1, dim=2).sample((2, 3), rng=0).shape == (2, 3, 2)


# --------------------------------------------------------------------------------------------
# Laplace-type laws: normalisation and costs


def test_l2_laplace_normalisation_and_costs():
    for eps, delta in [(0.7, 1.0), (2.0, 3.0)]:
        m2 = L2Laplace(epsilon=eps, sensitivity=delta, dim=2)
        s = delta / eps
        # d = 2: polar integration of the 2-D pdf (uses actual points, not the sphere-area formula)
        def polar(r, th, m2=m2):
            return r * float(m2.pdf(np.array([r * math.cos(th), r * math.sin(th)])))

        total = integrate.dblquad(polar, 0, 2 * math.pi, 0, 60 * s)[0]
        assert total == pytest.approx(1.0, rel=1e-8)
        m3 = L2Laplace(epsilon=eps, sensitivity=delta, dim=3)
        total3 = integrate.quad(lambda r: 4 * math.pi * r * r * float(m3.pdf(np.array([0.0, r, 0.0]))), 0, 80 * s)[0]
        assert total3 == pytest.approx(1.0, rel=1e-10)
    # [KHP15] Thm 8: E‖V‖² = n(n+1)/ε² at Δ = 1
    assert l2_laplace_cost("l2sq", 0.5, 4) == pytest.approx(4 * 5 / 0.25, rel=1e-15)
    m1 = L2Laplace(epsilon=1.2, sensitivity=0.5, dim=1)
    lap = Laplace(epsilon=1.2, sensitivity=0.5)
    x = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(m1.pdf(x), lap.pdf(x), rtol=1e-14)
    np.testing.assert_allclose(m1.cdf(x), lap.cdf(x), rtol=1e-14)
    for name in COSTS_ND:
        assert m1.expected_cost(name) == pytest.approx(lap.expected_cost("square" if name == "l2sq" else "abs"), rel=1e-12)


def test_laplace_nd_normalisation_and_costs():
    m = LaplaceND(epsilon=0.9, sensitivity=1.2, dim=2)
    total = integrate.dblquad(lambda y, x: float(m.pdf(np.array([x, y]))), -60, 60, -60, 60, epsabs=1e-12)[0]
    assert total == pytest.approx(1.0, rel=1e-8)
    s = 1.2 / 0.9
    assert laplace_nd_cost("l1", 0.9, 1.2, 4) == pytest.approx(4 * s, rel=1e-15)
    assert laplace_nd_cost("l2sq", 0.9, 1.2, 4) == pytest.approx(8 * s * s, rel=1e-15)
    assert laplace_nd_cost("linf", 0.9, 1.2, 3) == pytest.approx(s * (1 + 1 / 2 + 1 / 3), rel=1e-15)
    # ‖X‖₁/s ~ Gamma(d): E‖X‖₁² = s² d(d+1)
    assert m.expected_cost("pow:2") == pytest.approx(s * s * 6, rel=1e-13)
    x = m.sample(100_000, rng=12)
    mc_check(np.abs(x).sum(axis=1) ** 3, m.expected_cost("pow:3"))


def test_discrete_laplace_nd_normalisation_and_costs():
    for d, eps, delta in [(2, 0.6, 1), (3, 1.5, 2)]:
        m = DiscreteLaplaceND(epsilon=eps, sensitivity=delta, dim=d)
        bound = math.ceil(40 * delta / eps)  # λ^bound = e^{-40}
        axes = np.meshgrid(*[np.arange(-bound, bound + 1)] * d, indexing="ij")
        pts = np.stack(axes, axis=-1)
        p = m.pmf(pts)
        assert p.sum() == pytest.approx(1.0, rel=1e-12)
        a = np.abs(pts).astype(float)
        assert m.expected_cost("l1") == pytest.approx((p * a.sum(-1)).sum(), rel=1e-11)
        assert m.expected_cost("l2sq") == pytest.approx((p * (a * a).sum(-1)).sum(), rel=1e-11)
        assert m.expected_cost("linf") == pytest.approx((p * a.max(-1)).sum(), rel=1e-11)
        assert m.expected_cost("l2") == pytest.approx((p * np.sqrt((a * a).sum(-1))).sum(), rel=1e-11)
        assert m.pmf(np.full(d, 0.5)) == 0.0
    # [GV13] (122), (127)
    lam = math.exp(-0.3 / 2)
    assert discrete_laplace_nd_cost("l1", 0.3, 2, 5) == pytest.approx(2 * 5 * lam / (1 - lam * lam), rel=1e-13)
    assert discrete_laplace_nd_cost("l2sq", 0.3, 2, 5) == pytest.approx(2 * 5 * lam / (1 - lam) ** 2, rel=1e-13)
    # d = 1 agrees with the 1-D law
    m1, one = DiscreteLaplaceND(epsilon=0.7, sensitivity=2, dim=1), DiscreteLaplace(epsilon=0.7, sensitivity=2)
    k = np.arange(-10, 11)
    np.testing.assert_allclose(m1.pmf(k), one.pmf(k), rtol=1e-14)
    np.testing.assert_allclose(m1.cdf(k + 0.5), one.cdf(k + 0.5), rtol=1e-14)


def test_discrete_laplace_series_branches():
    """1 − φ(t) in all three branches (positive sum, subtracted sum, Euler-Maclaurin) and the
    Euler-Maclaurin E‖X‖∞ against direct high-precision / long sums."""
    for a in (2.0, 0.05, 0.001):
        # reference: the full positive series, summed term by term (no branches, no truncation by t)
        k = np.arange(1.0, math.ceil(45 / a) + 1)
        ts = np.array([1e-11, 1e-8, 1e-6, 1e-4, 1e-2, 1.0, 30.0])
        ref = [2 * math.tanh(a / 2) * math.fsum(np.exp(-a * k) * -np.expm1(-t * k * k)) for t in ts]
        np.testing.assert_allclose(lnd.omphi_dlap(ts, a), ref, rtol=4e-15)
    a, d = 1e-5, 4
    lam = math.exp(-a)
    n = np.arange(int(41.5 / a) + 2, dtype=float)
    direct = float(np.sum(-np.expm1(d * np.log1p(-2 / (1 + lam) * np.exp(-a * (n + 1))))))
    assert lnd.dlap_linf_mean(a, d) == pytest.approx(direct, rel=1e-12)
    # tiny ε/Δ: the discrete law approaches Laplace(Δ/ε)
    assert discrete_laplace_nd_cost("l2", 1e-6, 1, 3) == pytest.approx(laplace_nd_cost("l2", 1e-6, 1.0, 3), rel=1e-9)


def test_pdf_point_validation_and_cdf():
    m = StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.5, dim=3)
    assert np.shape(m.pdf(np.zeros((4, 3)))) == (4,)
    assert np.ndim(m.pdf(np.zeros(3))) == 0
    with pytest.raises(SpecError):
        m.pdf(np.zeros((4, 2)))
    with pytest.raises(TypeError):
        m.cdf(0.0)
    with pytest.raises(TypeError):
        m.sf(0.0)
    with pytest.raises(TypeError):
        m.pmf(np.zeros(3))
    with pytest.raises(TypeError):
        DiscreteLaplaceND(epsilon=1.0, sensitivity=1, dim=2).pdf(np.zeros(2))
    assert np.all(m.std() == np.sqrt(m.var()))


# --------------------------------------------------------------------------------------------
# serialisation and bad input


def test_json_round_trip():
    mechs = [
        StaircaseND(epsilon=0.5, sensitivity=2.5, gamma=0.125, dim=4),
        LaplaceND(epsilon=1.5, sensitivity=1.0, dim=2),
        DiscreteLaplaceND(epsilon=0.5, sensitivity=3, dim=6),
        L2Laplace(epsilon=2.0, dim=3, sensitivity=0.5),
    ]
    for m in mechs:
        d = m.to_dict()
        assert d["dim"] == m.dim
        assert Mechanism.from_dict(d) == m
        again = Mechanism.from_dict(json.loads(json.dumps(d)))
        assert again == m and type(again) is type(m) and again.dim == m.dim
        assert json.loads(json.dumps(m.privacy().to_dict()))["epsilon"] == m.epsilon


@pytest.mark.parametrize(
    "make",
    [
        lambda: StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=1.5, dim=2),
        lambda: StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=-0.1, dim=2),
        lambda: StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.5, dim=0),
        lambda: StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.5, dim=2.5),
        lambda: StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.5, dim=129),  # MAX_DIM = 128
        lambda: StaircaseND(epsilon=0.0, sensitivity=1.0, gamma=0.5, dim=2),
        lambda: LaplaceND(epsilon=-1.0, sensitivity=1.0, dim=2),
        lambda: LaplaceND(epsilon=1.0, sensitivity=1.0, dim=True),
        lambda: DiscreteLaplaceND(epsilon=1.0, sensitivity=1.5, dim=2),
        lambda: L2Laplace(epsilon=1.0, dim=-3),
        lambda: StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.5, dim=2).expected_cost("l3"),
        lambda: StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.5, dim=2).expected_cost("pow:1.5"),
        lambda: L2Laplace(epsilon=1.0, dim=2).expected_cost("pow:2"),
        lambda: DiscreteLaplaceND(epsilon=1.0, sensitivity=1, dim=2).expected_cost("abs"),
        lambda: optimal_gamma_nd("square", 1.0, 3),
        lambda: optimal_gamma_nd("l1", 0.0, 3),
        lambda: optimal_gamma_nd("l1", 1.0, 0),
        lambda: staircase_nd_moment(1, 1.0, 1.0, 2.0, 2),
        lambda: Mechanism.from_dict({"name": "staircase_nd", "epsilon": 1.0, "sensitivity": 1.0, "gamma": 0.5}),
    ],
)
def test_bad_input_raises_spec_error(make):
    with pytest.raises(SpecError):
        make()


def test_unknown_cost_message_lists_names():
    with pytest.raises(SpecError, match="l1, l2, l2sq, linf"):
        LaplaceND(epsilon=1.0, sensitivity=1.0, dim=3).expected_cost("huber")


def test_staircase_cost_pow_matches_1d_numeric_route():
    """pow:M at d = 1 equals the 1-D closed form; ‖x‖₁^M at d > 1 equals the radial quadrature."""
    assert staircase_nd_cost("pow:3", 0.7, 1.0, 0.4, 1) == pytest.approx(staircase_cost(_pow_cost(3), 0.7, 1.0, 0.4), rel=1e-12)
    m = StaircaseND(epsilon=0.7, sensitivity=1.0, gamma=0.4, dim=3)
    assert m.expected_cost("pow:4") == pytest.approx(radial_quad(m, 4), rel=1e-10)
    assert m.expected_cost("pow:0") == 1.0


def _pow_cost(p):
    from optmech.costs import parse_cost

    return parse_cost(f"pow:{p}")


# --------------------------------------------------------------------------------------------
# the staircase in other norms (issue 21): ℓ2, ℓ∞, ℓp, weighted ℓp.  Every check below is
# independent of the module's formulas: norms and volumes are recomputed here, integrals by grids
# and importance sampling, directions and cross-norm costs by Monte Carlo (5 standard errors).

P_OF = {"l1": 1.0, "l2": 2.0, "linf": math.inf, "lp:3": 3.0}
WEIGHTS = {2: (1.0, 4.0), 3: (1.0, 4.0, 0.25)}


def norm_cases(d):
    """(norm, weights, p) for ℓ1, ℓ2, ℓ∞, ℓ3 and a weighted ℓ2."""
    return [(n, None, p) for n, p in P_OF.items()] + [("l2", WEIGHTS[d], 2.0)]


def knorm(x, p, w=None):
    """(Σ w_i |x_i|^p)^{1/p} along the last axis (max |x_i| for p = ∞), written out here."""
    a = np.abs(np.asarray(x, dtype=float))
    if w is not None:
        a = a * np.asarray(w) ** (1.0 / p)
    if p == math.inf:
        return a.max(axis=-1)
    return (a**p).sum(axis=-1) ** (1.0 / p)


def ball_volume(d, p, w=None):
    """vol{x : ‖x‖ <= 1}: d = 2 by quadrature of the boundary curve, d = 3 by the textbook forms."""
    if d == 2 and p != math.inf:
        quarter = integrate.quad(lambda s: (1.0 - s**p) ** (1.0 / p), 0.0, 1.0, epsabs=1e-14, epsrel=1e-13)[0]
        v = 4.0 * quarter
    elif p == math.inf:
        v = 2.0**d
    else:
        v = (2.0 * math.gamma(1.0 + 1.0 / p)) ** d / math.gamma(1.0 + d / p)
    if w is not None:
        v /= math.prod(wi ** (1.0 / p) for wi in w)
    return v


def test_other_norm_normaliser_is_one_over_ball_volume_times_the_l1_series():
    """a_K vol(B_K) = a_1 vol(B_1): vol(B_1) = 2^d/d! reproduces [GKOV15]'s a(γ); d = 2 volumes
    from quadrature (π for the disc, π/√(w₁w₂) for the ellipse, ...)."""
    for d in (2, 3):
        for norm, w, p in norm_cases(d) + [("l1", WEIGHTS[d], 1.0), ("lp:1.5", WEIGHTS[d], 1.5)]:
            a1 = staircase_nd_normaliser(0.9, 1.3, 0.4, d)
            ak = StaircaseND(epsilon=0.9, sensitivity=1.3, gamma=0.4, dim=d, norm=norm, weights=w).normaliser
            assert ak * ball_volume(d, p, w) == pytest.approx(a1 * 2.0**d / math.factorial(d), rel=1e-9)
            assert staircase_nd_normaliser(0.9, 1.3, 0.4, d, norm=norm, weights=w) == ak
    assert ball_volume(2, 2.0, (1.0, 4.0)) == pytest.approx(math.pi / 2.0, rel=1e-12)


@pytest.mark.parametrize("norm,w,p", norm_cases(2))
def test_other_norm_pdf_integrates_to_one_on_a_grid_d2(norm, w, p):
    """Midpoint rule on the quadrant x > 0 (every norm here is sign symmetric), h = 0.005.  The
    density jumps on every shell boundary, so the rule's error is O(h) (measured <= 1.6e-3 here,
    halving with h); a wrong volume factor would be off by O(1)."""
    eps, delta = 2.0, 0.7
    m = StaircaseND(epsilon=eps, sensitivity=delta, gamma=0.35, dim=2, norm=norm, weights=w)
    h, top = 0.005, 12.0  # mass beyond ‖x‖ = 12 is < 1e-12; ‖x‖ >= |x_i| for every norm here (w_i >= 1)
    c = np.arange(h / 2, top, h)
    total = 0.0
    for chunk in np.array_split(c, 8):
        x = np.stack(np.meshgrid(chunk, c, indexing="ij"), axis=-1)
        total += float(m.pdf(x).sum())
    assert 4.0 * h * h * total == pytest.approx(1.0, abs=3e-3)
    # the pdf is the staircase of the norm written out here
    pts = np.random.default_rng(3).normal(size=(500, 2)) * 2.0
    level = np.floor(knorm(pts, p, w) / delta - 0.35) + 1.0
    np.testing.assert_allclose(m.pdf(pts), m.normaliser * np.exp(-eps * level), rtol=1e-12)


@pytest.mark.parametrize("norm,w,p", norm_cases(3))
def test_other_norm_pdf_integrates_to_one_importance_sampling_d3(norm, w, p):
    """∫f = E_q[f(Y)/q(Y)] for Y with i.i.d. Laplace(s) coordinates, s = c_K Δ/ε where
    c_K = sup ‖y‖₁/‖y‖_K = ‖(w_i^{−1/p})‖_{p/(p−1)} (Hölder), so f/q is bounded."""
    eps, delta, d, n = 1.5, 0.8, 3, 200_000
    m = StaircaseND(epsilon=eps, sensitivity=delta, gamma=0.6, dim=d, norm=norm, weights=w)
    a = np.ones(d) if w is None else np.asarray(w) ** (-1.0 / p)
    c_k = a.max() if p == 1.0 else (a.sum() if p == math.inf else float((a ** (p / (p - 1))).sum() ** ((p - 1) / p)))
    s = c_k * delta / eps
    y = np.random.default_rng(11).laplace(0.0, s, size=(n, d))
    logq = -d * math.log(2.0 * s) - np.abs(y).sum(axis=1) / s
    ratio = np.exp(m.logpdf(y) - logq)
    mc_check(ratio, 1.0)
    assert ratio.std() / math.sqrt(n) < 0.01


@pytest.mark.parametrize("d", [2, 3])
def test_other_norm_sampler_radius_direction_and_costs(d):
    """‖X‖_K moments = E[R^m] (moment()); cross-norm costs (closed forms) = sample means; the
    direction laws: ℓ2 (also weighted, after D = diag(√w)) uniform on the sphere, ℓ∞ argmax uniform
    and the other coordinates uniform on [−max, max]; R independent of the direction."""
    for i, (norm, w, p) in enumerate(norm_cases(d)):
        m = StaircaseND(epsilon=1.1, sensitivity=1.3, gamma=0.3, dim=d, norm=norm, weights=w)
        x = m.sample(60_000, rng=500 + 10 * d + i)
        assert x.shape == (60_000, d) and x.dtype == np.float64
        r = knorm(x, p, w)
        for k in (1, 2, 3):
            mc_check(r**k, m.moment(k))
        a = np.abs(x)
        values = {"l1": a.sum(axis=1), "l2": np.sqrt((a * a).sum(axis=1)), "l2sq": (a * a).sum(axis=1),
                  "linf": a.max(axis=1), "pow:2": a.sum(axis=1) ** 2}
        checked = []
        for cost, v in values.items():
            try:
                expected = m.expected_cost(cost)
            except SpecError:
                continue
            mc_check(v, expected)
            checked.append(cost)
        assert {"l1", "l2sq", "pow:2"} <= set(checked)
        for j in range(d):
            mc_check(x[:, j], 0.0)
            mc_check(x[:, j] ** 2, m.var()[j])
        if p == 2.0:  # Θ = D X/‖X‖_w uniform on the unit sphere
            theta = x * (np.ones(d) if w is None else np.sqrt(w)) / r[:, None]
            np.testing.assert_allclose(np.sqrt((theta**2).sum(axis=1)), 1.0, rtol=1e-12)
            for j in range(d):
                mc_check(theta[:, j], 0.0)
                mc_check(theta[:, j] ** 2, 1.0 / d)
            # |Θ₁| has density ∝ (1 − t²)^{(d−3)/2}: Θ₁² ~ Beta(1/2, (d−1)/2)
            assert stats.kstest(theta[:, 0] ** 2, stats.beta(0.5, (d - 1) / 2.0).cdf).pvalue > 1e-3
            big = r > np.median(r)
            mc_check(theta[big, 0] ** 2, 1.0 / d)
        if p == math.inf:
            top = np.argmax(a, axis=1)
            for j in range(d):
                mc_check((top == j).astype(float), 1.0 / d)
            others = (x / r[:, None])[np.arange(d)[None, :] != top[:, None]]
            assert stats.kstest(others, stats.uniform(-1.0, 2.0).cdf).pvalue > 1e-3
        if p == 3.0:  # E|Θ₁|^s = E|G₁|^s / E‖G‖₃^s (G = ‖G‖₃Θ, independent), G_i density ∝ e^{−|t|³}
            theta = np.abs(x[:, 0]) / r
            for s in (1, 2):
                expected = math.gamma((s + 1) / 3) / math.gamma(1 / 3) * math.gamma(d / 3) / math.gamma((d + s) / 3)
                mc_check(theta**s, expected)


def test_other_norm_cross_costs_closed_forms():
    """The cone factors E‖Θ‖_L^m against the brief's closed forms and limiting cases: ℓ1 cone =
    signed Dirichlet (E‖Θ‖₂² = 2/(d+1)), ℓ2 sphere (E‖Θ‖₁ = dΓ(d/2)/(√πΓ((d+1)/2)), ‖Θ‖₂ = 1,
    linf as for the ℓ2 Laplace), ℓ∞ cube (E‖Θ‖₁ = 1 + (d−1)/2, E‖Θ‖₂² = 1 + (d−1)/3), weighted
    ℓ1 with unit weights = ℓ1, ℓp → ℓ1/ℓ2/ℓ∞ as p → 1/2/∞, and mpmath quadrature for ℓ3 in d = 2."""
    eps, delta, g = 0.9, 1.2, 0.45
    for d in (2, 3, 5):
        def make(norm, w=None):
            return StaircaseND(epsilon=eps, sensitivity=delta, gamma=g, dim=d, norm=norm, weights=w)

        r1, r2 = staircase_nd_moment(1, eps, delta, g, d), staircase_nd_moment(2, eps, delta, g, d)
        l1, l2, li = make("l1"), make("l2"), make("linf")
        assert l1.expected_cost("l2sq") == pytest.approx(2.0 / (d + 1) * r2, rel=1e-13)
        sphere_l1 = d * math.gamma(d / 2) / (math.sqrt(math.pi) * math.gamma((d + 1) / 2))
        assert l2.expected_cost("l1") == pytest.approx(sphere_l1 * r1, rel=1e-13)
        assert l2.expected_cost("l2") == l2.moment(1) and l2.expected_cost("l2sq") == l2.moment(2)
        assert l2.expected_cost("linf") / r1 == pytest.approx(
            l2_laplace_cost("linf", 1.0, d) / l2_laplace_cost("l2", 1.0, d), rel=1e-13)
        assert li.expected_cost("l1") == pytest.approx((1 + (d - 1) / 2) * r1, rel=1e-13)
        assert li.expected_cost("l2sq") == pytest.approx((1 + (d - 1) / 3) * r2, rel=1e-13)
        assert li.expected_cost("linf") == li.moment(1)
        ones = make("l1", (1.0,) * d)
        for cost in ("l1", "l2sq", "pow:2"):
            assert ones.expected_cost(cost) == pytest.approx(l1.expected_cost(cost), rel=1e-13)
            assert make("lp:1.0000001").expected_cost(cost) == pytest.approx(l1.expected_cost(cost), rel=1e-5)
            assert make("lp:2.0000001").expected_cost(cost) == pytest.approx(l2.expected_cost(cost), rel=1e-5)
            assert make("lp:1e7").expected_cost(cost) == pytest.approx(li.expected_cost(cost), rel=1e-5)
        # weighted ℓ2 with weights c·1 is ℓ2 scaled by c^{-1/2}
        assert make("l2", (4.0,) * d).expected_cost("l1") == pytest.approx(l2.expected_cost("l1") / 2.0, rel=1e-13)
        assert make("l2", (4.0,) * d).expected_cost("pow:2") == pytest.approx(l2.expected_cost("pow:2") / 4.0, rel=1e-13)
    # ℓ3, d = 2: E‖Θ‖₁, E‖Θ‖₂², E‖Θ‖₁² under the cone measure by mpmath quadrature along the curve

    def cone_mean(fun):
        """θ(t) = (t, (1 − t³)^{1/3}); the cone over dθ has area |θ × θ'| dt/2 = (y − t y') dt/2.
        Symmetric ``fun``: the arc t <= 2^{−1/3} (up to the diagonal) suffices, and avoids the
        endpoint singularity of y' at t = 1."""
        with mpmath.workdps(30):
            y = lambda t: (1 - t**3) ** (mpmath.mpf(1) / 3)
            dy = lambda t: -(t**2) * (1 - t**3) ** (mpmath.mpf(-2) / 3)
            wgt = lambda t: y(t) - t * dy(t)
            edge = mpmath.mpf(2) ** (mpmath.mpf(-1) / 3)
            num = mpmath.quad(lambda t: fun(t, y(t)) * wgt(t), [0, edge])
            return float(num / mpmath.quad(wgt, [0, edge]))

    m3 = StaircaseND(epsilon=eps, sensitivity=delta, gamma=g, dim=2, norm="lp:3")
    r1, r2 = staircase_nd_moment(1, eps, delta, g, 2), staircase_nd_moment(2, eps, delta, g, 2)
    assert m3.expected_cost("l1") == pytest.approx(cone_mean(lambda s, t: s + t) * r1, rel=1e-12)
    assert m3.expected_cost("l2sq") == pytest.approx(cone_mean(lambda s, t: s * s + t * t) * r2, rel=1e-12)
    assert m3.expected_cost("pow:2") == pytest.approx(cone_mean(lambda s, t: (s + t) ** 2) * r2, rel=1e-12)


@pytest.mark.parametrize("d", [2, 3])
def test_other_norm_privacy_ratio(d):
    """f(x)/f(x + t) <= e^ε at random x and random t with ‖t‖_K <= Δ (norms written out here),
    with equality attained; privacy() names the norm."""
    rng = np.random.default_rng(40 + d)
    eps, delta = 0.8, 1.5
    for norm, w, p in norm_cases(d) + [("lp:1.7", WEIGHTS[d], 1.7)]:
        m = StaircaseND(epsilon=eps, sensitivity=delta, gamma=0.25, dim=d, norm=norm, weights=w)
        x = rng.normal(size=(50_000, d)) * 3.0 * delta
        t = rng.normal(size=(50_000, d))
        t *= (delta * (1 - 1e-12) * rng.random(50_000) ** 0.3 / knorm(t, p, w))[:, None]
        assert np.all(knorm(t, p, w) <= delta)
        ratio = np.exp(m.logpdf(x) - m.logpdf(x + t))
        assert ratio.max() <= math.exp(eps) * (1 + 1e-12)
        assert ratio.max() == pytest.approx(math.exp(eps), rel=1e-12)
        priv = m.privacy()
        assert priv.notion == "pure" and priv.epsilon == eps and priv.sensitivity == delta
        assert priv.norm == (norm if w is None else f"{norm}, weights ({', '.join(f'{v:g}' for v in w)})")
        assert "triangle" in priv.note or norm == "l1"


def test_l1_norm_is_bit_identical_to_the_default():
    """norm='l1' (and lp:1) is today's staircase: same normaliser, pdf, costs, dict and samples;
    the samples are the shell radius times the Laplace-direction draw, in that order of the rng."""
    for d in (1, 2, 3, 5):
        base = StaircaseND(epsilon=0.7, sensitivity=1.3, gamma=0.3, dim=d)
        x = base.sample(2000, rng=5)
        rng = np.random.default_rng(5)
        radius = snd.StaircaseSampler(0.7, 0.3, d).radius(2000, rng)
        np.testing.assert_array_equal(x, geo.l1_directions_scaled(radius * 1.3, d, rng))
        for norm in ("l1", "lp:1", " L1 "):
            m = StaircaseND(epsilon=0.7, sensitivity=1.3, gamma=0.3, dim=d, norm=norm)
            assert m.to_dict() == base.to_dict() and "norm" not in m.to_dict() and m == base
            assert m.normaliser == base.normaliser
            np.testing.assert_array_equal(m.sample(2000, rng=5), x)
            np.testing.assert_array_equal(m.pdf(x), base.pdf(x))
            for cost in ("l1", "l2", "l2sq", "linf", "pow:3"):
                assert m.expected_cost(cost) == base.expected_cost(cost)
            assert m.privacy() == base.privacy()


def test_other_norms_at_d1_are_the_1d_staircase():
    """d = 1: every unweighted norm is |x| (identical to ℓ1); a weight w gives the 1-D staircase
    with sensitivity Δ w^{−1/p}."""
    base = StaircaseND(epsilon=0.7, sensitivity=1.3, gamma=0.3, dim=1)
    one_d = Staircase(epsilon=0.7, sensitivity=1.3, gamma=0.3)
    x = base.sample(3000, rng=2)
    for norm in ("l2", "linf", "lp:3"):
        m = StaircaseND(epsilon=0.7, sensitivity=1.3, gamma=0.3, dim=1, norm=norm)
        assert m.normaliser == base.normaliser and m.privacy().norm == "abs"
        np.testing.assert_array_equal(m.sample(3000, rng=2), x)
        np.testing.assert_array_equal(m.pdf(x), base.pdf(x))
        np.testing.assert_allclose(m.pdf(x[:, 0]), one_d.pdf(x[:, 0]), rtol=1e-13)
        for cost in ("l1", "l2sq", "linf", "pow:3", "abs"):
            assert m.expected_cost(cost) == base.expected_cost(cost)
    for norm, w, p in (("l2", (4.0,), 2.0), ("lp:3", (8.0,), 3.0), ("l1", (0.5,), 1.0)):
        m = StaircaseND(epsilon=0.7, sensitivity=1.3, gamma=0.3, dim=1, norm=norm, weights=w)
        ref = Staircase(epsilon=0.7, sensitivity=1.3 * w[0] ** (-1.0 / p), gamma=0.3)
        grid = np.linspace(-8, 8, 1601)
        np.testing.assert_allclose(m.pdf(grid), ref.pdf(grid), rtol=1e-12)
        assert m.expected_cost("abs") == pytest.approx(ref.expected_cost("abs"), rel=1e-13)
        assert m.expected_cost("l2sq") == pytest.approx(ref.expected_cost("square"), rel=1e-13)
        assert m.var()[0] == pytest.approx(ref.var(), rel=1e-13)
        mc_check(np.abs(m.sample(40_000, rng=8)[:, 0]), ref.expected_cost("abs"))


def test_other_norm_optimal_gamma():
    """γ* depends only on the cost's order: brute force over γ of the ℓ2 staircase's E‖X‖₂ and
    of the ℓ∞ staircase's E‖X‖∞² (= moment(2)) in d = 3."""
    grid = np.linspace(0.0, 1.0, 801)
    m = StaircaseND.optimal("l2", epsilon=1.0, sensitivity=1.0, dim=3, norm="l2")
    assert m.norm == "l2" and m.gamma == optimal_gamma_nd("l1", 1.0, 3)
    brute = grid[np.argmin([StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=g, dim=3, norm="l2").expected_cost("l2")
                            for g in grid])]
    assert abs(m.gamma - brute) < 2e-3
    m2 = StaircaseND.optimal("pow:2", epsilon=2.0, sensitivity=1.0, dim=3, norm="linf")
    brute = grid[np.argmin([StaircaseND(epsilon=2.0, sensitivity=1.0, gamma=g, dim=3, norm="linf").moment(2)
                            for g in grid])]
    assert abs(m2.gamma - brute) < 2e-3
    w = WEIGHTS[3]
    opt = staircase_nd_optimal_cost("l2sq", 1.0, 1.0, 3, norm="lp:3", weights=w)
    assert opt == pytest.approx(min(staircase_nd_cost("l2sq", 1.0, 1.0, g, 3, norm="lp:3", weights=w) for g in grid), rel=1e-6)
    assert opt <= min(staircase_nd_cost("l2sq", 1.0, 1.0, g, 3, norm="lp:3", weights=w) for g in grid)


def test_other_norm_round_trip():
    mechs = [StaircaseND(epsilon=0.6, sensitivity=1.5, gamma=0.2, dim=3, norm=n, weights=w) for n, w, _ in norm_cases(3)]
    mechs += [StaircaseND(epsilon=0.6, sensitivity=1.5, gamma=0.2, dim=2, norm="lp:2.5", weights=[2, 3]),
              StaircaseND(epsilon=0.6, sensitivity=1.5, gamma=0.2, dim=2, norm="LP:INF")]
    for m in mechs:
        d = m.to_dict()
        assert d.get("norm", "l1") == m.norm and d.get("weights") == m.weights
        for again in (Mechanism.from_dict(d), Mechanism.from_dict(json.loads(json.dumps(d)))):
            assert again == m and hash(again) == hash(m) and again.norm == m.norm and again.weights == m.weights
            np.testing.assert_array_equal(again.sample(50, rng=1), m.sample(50, rng=1))
        assert eval("md." + repr(m)) == m
    assert mechs[-1].norm == "linf" and mechs[-2].weights == (2.0, 3.0) and mechs[-2].norm == "lp:2.5"
    assert StaircaseND(epsilon=1, sensitivity=1, gamma=0.5, dim=2, norm="lp:3.0").norm == "lp:3"


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"norm": "l3"}, "unknown norm 'l3'"),
        ({"norm": "l0"}, "unknown norm"),
        ({"norm": 2}, "norm must be a string"),
        ({"norm": "lp:0.5"}, "P >= 1"),
        ({"norm": "lp:nan"}, "P >= 1"),
        ({"norm": "lp:three"}, "must be a number"),
        ({"norm": "l2", "weights": (1.0,)}, "dim = 2"),
        ({"norm": "l2", "weights": (1.0, 0.0)}, "> 0"),
        ({"norm": "l2", "weights": (1.0, -2.0)}, "> 0"),
        ({"norm": "l2", "weights": (1.0, math.inf)}, "> 0"),
        ({"norm": "l2", "weights": (1.0, True)}, "numbers"),
        ({"norm": "l2", "weights": "12"}, "list"),
        ({"norm": "linf", "weights": (1.0, 2.0)}, "linf takes none"),
    ],
)
def test_other_norm_bad_input(kwargs, match):
    with pytest.raises(SpecError, match=match) as info:
        StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.5, dim=2, **kwargs)
    assert "\n" not in str(info.value)


def test_other_norm_inexact_costs_refused():
    for norm, w, cost in (("linf", None, "l2"), ("lp:3", None, "linf"), ("l2", (1.0, 2.0, 3.0), "l2"),
                          ("l2", None, "pow:3"), ("lp:3", None, "pow:1.5")):
        m = StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.5, dim=3, norm=norm, weights=w)
        with pytest.raises(SpecError) as info:
            m.expected_cost(cost)
        assert "\n" not in str(info.value) and repr(cost) in str(info.value)
    with pytest.raises(SpecError, match="unknown norm"):
        staircase_nd_cost("l1", 1.0, 1.0, 0.5, 2, norm="l5")
    with pytest.raises(SpecError, match="unknown norm"):
        Mechanism.from_dict({"name": "staircase_nd", "epsilon": 1.0, "sensitivity": 1.0, "gamma": 0.5, "dim": 2, "norm": "x"})
    with pytest.raises(SpecError, match="unknown norm"):
        StaircaseND.optimal("l1", epsilon=1.0, sensitivity=1.0, dim=2, norm="l7")
