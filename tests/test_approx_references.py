"""Tests of optmech.mechanisms.gaussian and optmech.mechanisms.approx_references: (ε, δ) reference noise.

Every check is against an independently derived property: the exact δ(ε) of [BW18, Thm 8]
re-evaluated here in mpmath, costs by scipy quadrature and Monte Carlo, the truncated Laplace
δ(ε) by direct numerical integration of (p(x) − e^ε p(x − t))_+, the discrete Gaussian δ(ε) by a
brute-force sum over a wide window, and monotonicity of the calibrations; never values copied
from the code under test.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from optmech.costs import parse_cost
from optmech.errors import SpecError
from optmech.mechanisms.approx_references import (
    TruncatedLaplace,
    continuous_approx_references,
    discrete_approx_references,
    truncated_laplace,
    truncated_laplace_cost,
)
from optmech.mechanisms.base import Mechanism
from optmech.mechanisms.gaussian import (
    DiscreteGaussian,
    Gaussian,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    discrete_gaussian_cost,
    discrete_gaussian_delta,
    discrete_gaussian_sigma,
    gaussian_cost,
    gaussian_delta,
)


def delta_g(sigma: float, eps: float, sens: float, dps: int = 80):
    """[BW18, Thm 8] in mpmath, written out here: Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)."""
    with mpmath.workdps(dps):
        s, e, D = mpmath.mpf(sigma), mpmath.mpf(eps), mpmath.mpf(sens)
        return +(mpmath.ncdf(D / (2 * s) - e * s / D) - mpmath.exp(e) * mpmath.ncdf(-D / (2 * s) - e * s / D))


CASES = [(1.0, 1e-5, 1.0), (0.1, 1e-6, 2.0), (0.0, 0.05, 1.0), (3.0, 0.3, 0.5), (10.0, 1e-10, 1.0),
         (50.0, 1e-5, 3.0), (1e-4, 1e-3, 1.0), (0.5, 0.9, 1.0)]


# --------------------------------------------------------------------------------------------
# the analytic and classic Gaussian calibrations


@pytest.mark.parametrize("eps,delta,sens", CASES)
def test_analytic_sigma_is_the_smallest_private_sigma(eps, delta, sens):
    s = analytic_gaussian_sigma(eps, delta, sens)
    assert delta_g(s, eps, sens) <= delta
    assert delta_g(s * (1 - 1e-9), eps, sens) > delta
    assert delta_g(s * (1 - 1e-13), eps, sens) > delta * (1 - 1e-11)     # tight to ~full double precision
    assert gaussian_delta(s, eps, sens) <= delta


def test_gaussian_delta_is_an_upper_bound_and_tight():
    for sigma, eps, sens in [(1.0, 1.0, 1.0), (30.0, 0.01, 1.0), (0.2, 5.0, 2.0), (1e4, 1.0, 1.0), (2.0, 0.0, 1.0)]:
        exact = delta_g(sigma, eps, sens, dps=120)
        got = gaussian_delta(sigma, eps, sens)
        assert got >= exact and got <= exact * (1 + 4e-16) + 1e-320


def test_gaussian_delta_decreases_in_sigma_and_grows_with_the_shift():
    sig = np.geomspace(0.15, 12.0, 40)        # δ from 1 − 1e-10 down to 1e-160 (no rounding to 1 or 0)
    d = [gaussian_delta(s, 1.0, 1.0) for s in sig]
    assert all(a > b for a, b in zip(d, d[1:]))
    shifts = np.linspace(0.1, 2.0, 20)
    d = [float(delta_g(1.0, 1.0, t)) for t in shifts]
    assert all(a < b for a, b in zip(d, d[1:]))


def test_analytic_sigma_below_classic_where_the_classic_is_valid():
    # [BW18]: the analytic calibration needs less noise; the classic one is private for 0 < ε < 1 [DR14, Thm A.1]
    for eps in (0.01, 0.1, 0.5, 0.9, 0.999):
        for delta in (1e-12, 1e-6, 1e-3, 0.1, 0.5, 0.9):
            c = classic_gaussian_sigma(eps, delta, 1.0)
            assert c.valid
            assert analytic_gaussian_sigma(eps, delta, 1.0) < c.sigma
            assert delta_g(c.sigma, eps, 1.0) <= delta


def test_classic_sigma_flags_and_fails_for_large_epsilon():
    c = classic_gaussian_sigma(50.0, 1e-5, 1.0)
    assert not c.valid and "NOT guaranteed" in c.note
    assert delta_g(c.sigma, 50.0, 1.0) > 1e-5          # not private at all there ([BW18] §2)
    assert math.isclose(c.sigma, math.sqrt(2 * math.log(1.25e5)) / 50.0, rel_tol=1e-15)
    assert classic_gaussian_sigma(1.0, 1e-5, 1.0).valid is False
    assert classic_gaussian_sigma(0.0, 1e-5, 1.0).sigma == math.inf


def test_sigma_monotone_in_delta_and_epsilon():
    deltas = [1e-9, 1e-6, 1e-4, 1e-2, 0.1, 0.4]
    s = [analytic_gaussian_sigma(1.0, d, 1.0) for d in deltas]
    assert all(a > b for a, b in zip(s, s[1:]))
    epss = [0.0, 0.01, 0.1, 1.0, 3.0, 10.0]
    s = [analytic_gaussian_sigma(e, 1e-5, 1.0) for e in epss]
    assert all(a > b for a, b in zip(s, s[1:]))
    s = [discrete_gaussian_sigma(1.0, d, 2) for d in deltas]
    assert all(a > b for a, b in zip(s, s[1:]))
    s = [discrete_gaussian_sigma(e, 1e-4, 1) for e in epss]
    assert all(a > b for a, b in zip(s, s[1:]))


# --------------------------------------------------------------------------------------------
# Gaussian costs


@pytest.mark.parametrize("cost", ["abs", "square", "pow:1.5", "pow:3", "where(x > 0, x, 3*x**2)", "min(abs(x), 1)"])
def test_gaussian_cost_1d_against_quad_and_monte_carlo(cost):
    sigma = 1.7
    L = parse_cost(cost)
    f = lambda x: float(L(np.array([x]))[0]) * stats.norm.pdf(x, scale=sigma)  # noqa: E731
    ref = integrate.quad(f, -np.inf, 0, epsabs=0, epsrel=1e-12)[0] + integrate.quad(f, 0, np.inf, epsabs=0, epsrel=1e-12)[0]
    got = gaussian_cost(cost, sigma)
    assert got >= ref * (1 - 1e-12) and math.isclose(got, ref, rel_tol=1e-10)
    x = np.random.default_rng(1).normal(0, sigma, 400_000)
    y = L(x)
    assert abs(y.mean() - got) < 5 * y.std() / math.sqrt(x.size)


@pytest.mark.parametrize("d", [2, 3])
def test_gaussian_cost_nd_against_quad_and_monte_carlo(d):
    sigma = 0.8
    x = np.random.default_rng(d).normal(0, sigma, (300_000, d))
    samples = {"l1": np.abs(x).sum(1), "l2": np.sqrt((x * x).sum(1)), "l2sq": (x * x).sum(1), "linf": np.abs(x).max(1)}
    # independent integrals: ‖X‖₂/σ ~ χ_d, ‖X‖∞ via P(max|X_i| > t) = 1 − (2Φ(t/σ) − 1)^d
    quad = {"l2": sigma * integrate.quad(lambda r: r * stats.chi.pdf(r, d), 0, np.inf)[0],
            "l1": d * sigma * integrate.quad(lambda r: 2 * r * stats.norm.pdf(r), 0, np.inf)[0],
            "l2sq": sigma**2 * integrate.quad(lambda r: r * stats.chi2.pdf(r, d), 0, np.inf)[0],
            "linf": integrate.quad(lambda t: 1 - (2 * stats.norm.cdf(t / sigma) - 1) ** d, 0, np.inf, epsabs=0, epsrel=1e-12)[0]}
    for name, y in samples.items():
        got = gaussian_cost(name, sigma, dim=d)
        assert got >= quad[name] * (1 - 1e-12) and math.isclose(got, quad[name], rel_tol=1e-9), name
        assert abs(y.mean() - got) < 5 * y.std() / math.sqrt(y.size), name


# --------------------------------------------------------------------------------------------
# truncated Laplace [GDGK20]


def tl_density(eps, delta, sens):
    lam = sens / eps
    A = lam * math.log(1 + math.expm1(eps) / (2 * delta))   # the paper's formulas, written out here
    B = 1 / (2 * lam * (1 - math.exp(-A / lam)))
    return (lambda x: B * math.exp(-abs(x) / lam) if abs(x) <= A else 0.0), A


def hockey_stick(p, eps, t, pts):
    """∫ (p(x) − e^ε p(x − t))_+ dx by quad, cut at the kinks ``pts``."""
    g = lambda x: max(p(x) - math.exp(eps) * p(x - t), 0.0)  # noqa: E731
    pts = sorted(set(pts))
    return sum(integrate.quad(g, a, b, epsabs=1e-13, epsrel=1e-11, limit=200)[0] for a, b in zip(pts[:-1], pts[1:]))


@pytest.mark.parametrize("eps,delta,sens", [(1.0, 0.1, 1.0), (0.3, 0.01, 2.0), (3.0, 1e-4, 1.0), (1.0, 0.45, 1.0)])
def test_truncated_laplace_is_private_with_delta_attained_at_the_sensitivity(eps, delta, sens):
    p, A = tl_density(eps, delta, sens)
    assert math.isclose(integrate.quad(p, -A, 0)[0] + integrate.quad(p, 0, A)[0], 1.0, rel_tol=1e-12)
    mech = TruncatedLaplace(epsilon=eps, delta=delta, sensitivity=sens)
    assert math.isclose(mech.A, A, rel_tol=1e-13) and math.isclose(mech.lam, sens / eps, rel_tol=1e-15)
    for t in np.linspace(0, sens, 26)[1:]:
        v = hockey_stick(mech.pdf, eps, t, [-A, t - A, 0.0, t, A, t + A])
        assert v <= delta * (1 + 1e-9), t
        v2 = hockey_stick(mech.pdf, eps, -t, [-A, -t - A, 0.0, -t, A, A - t])   # the other direction
        assert v2 <= delta * (1 + 1e-9), t
    assert math.isclose(hockey_stick(mech.pdf, eps, sens, [-A, sens - A, 0.0, sens, A]), delta, rel_tol=1e-8)
    assert mech.privacy().delta <= delta


def test_truncated_laplace_above_one_half_is_private_but_not_tight():
    eps, delta, sens = 1.0, 0.8, 1.0
    mech = TruncatedLaplace(epsilon=eps, delta=delta, sensitivity=sens)
    A = mech.A
    assert A < sens
    v = hockey_stick(mech.pdf, eps, sens, [-A, sens - A, 0.0, A, sens, sens + A])
    assert v < delta - 1e-3 and math.isclose(mech.privacy().delta, v, rel_tol=1e-8)


@pytest.mark.parametrize("cost", ["abs", "square", "pow:0.5", "pow:4", "where(x > 0, x, 3*x**2)"])
def test_truncated_laplace_costs_against_quad(cost):
    eps, delta, sens = 0.7, 0.02, 1.5
    p, A = tl_density(eps, delta, sens)
    L = parse_cost(cost)
    f = lambda x: float(L(np.array([x]))[0]) * p(x)  # noqa: E731
    ref = integrate.quad(f, -A, 0, epsabs=0, epsrel=1e-12)[0] + integrate.quad(f, 0, A, epsabs=0, epsrel=1e-12)[0]
    got = truncated_laplace_cost(cost, eps, delta, sens)
    assert got >= ref * (1 - 1e-12) and math.isclose(got, ref, rel_tol=1e-10)


def test_truncated_laplace_sampler_and_cdf():
    mech = TruncatedLaplace(epsilon=0.8, delta=0.05, sensitivity=1.0)
    x = mech.sample(20_000, rng=3)
    assert np.all(np.abs(x) <= mech.A)
    assert stats.kstest(x, mech.cdf).pvalue > 1e-3
    grid = np.linspace(-mech.A, mech.A, 7)
    num = [integrate.quad(mech.pdf, -mech.A, g)[0] for g in grid]
    assert np.allclose(mech.cdf(grid), num, rtol=0, atol=1e-12)
    assert np.allclose(mech.cdf(mech.ppf(np.array([0.01, 0.3, 0.5, 0.9]))), [0.01, 0.3, 0.5, 0.9], atol=1e-14)
    assert Mechanism.from_dict(mech.to_dict()) == mech


# --------------------------------------------------------------------------------------------
# discrete Gaussian [CKS20]


def brute_dg_delta(sigma, eps, sens):
    K = int(50 * sigma) + 50 + sens
    k = np.arange(-K, K + 1, dtype=float)
    p = np.exp(-k * k / (2 * sigma * sigma))
    p /= math.fsum(p)
    return max(math.fsum(np.maximum(p[:-s] - math.exp(eps) * p[s:], 0.0)) for s in range(1, sens + 1))


def test_discrete_gaussian_delta_against_brute_force():
    for sigma in (0.3, 0.8, 1.0, 2.5, 6.0, 25.0):
        for eps in (0.0, 0.05, 0.5, 1.0, 4.0):
            for sens in (1, 2, 4):
                brute = brute_dg_delta(sigma, eps, sens)
                got = discrete_gaussian_delta(sigma, eps, sens)
                if brute < 1e-250:
                    continue
                assert got >= brute * (1 - 1e-11), (sigma, eps, sens)
                assert got <= brute * (1 + 1e-9), (sigma, eps, sens)


def test_discrete_gaussian_sigma_is_tight_and_delta_is_monotone():
    for eps, delta, sens in [(1.0, 1e-5, 1), (0.5, 1e-3, 3), (0.0, 0.1, 1), (5.0, 1e-8, 2)]:
        s = discrete_gaussian_sigma(eps, delta, sens)
        assert brute_dg_delta(s, eps, sens) <= delta
        assert brute_dg_delta(s * (1 - 1e-9), eps, sens) > delta
    sig = np.geomspace(0.1, 20.0, 120)          # δ(σ) nonincreasing: what "smallest σ" relies on
    for eps, sens in [(0.5, 1), (1.0, 3), (3.0, 2)]:
        d = [discrete_gaussian_delta(s, eps, sens) for s in sig]
        assert all(b <= a * (1 + 1e-12) for a, b in zip(d, d[1:]))


def test_discrete_gaussian_cost_and_mechanism():
    sigma = 2.2
    k = np.arange(-300, 301, dtype=float)
    p = np.exp(-k * k / (2 * sigma * sigma))
    p /= math.fsum(p)
    for cost in ("abs", "square", "pow:3", "where(x > 0, x, 3*x**2)"):
        L = parse_cost(cost)
        ref = math.fsum(L(k) * p)
        got = discrete_gaussian_cost(cost, sigma)
        assert ref * (1 - 1e-13) <= got <= ref * (1 + 1e-11), cost
    mech = DiscreteGaussian(sigma=sigma, epsilon=1.0)
    assert math.isclose(mech.delta, brute_dg_delta(sigma, 1.0, 1), rel_tol=1e-9)
    assert np.allclose(mech.pmf(k[:40]), p[:40], rtol=1e-13, atol=0)
    assert np.allclose(mech.cdf(np.array([-3.0, -0.5, 0.0, 2.0, 7.0])),
                       [p[k <= v].sum() for v in (-3.0, -1.0, 0.0, 2.0, 7.0)], rtol=1e-12, atol=1e-15)
    x = mech.sample(50_000, rng=7)
    counts = np.array([(x == v).sum() for v in range(-6, 7)])
    expected = 50_000 * p[(k >= -6) & (k <= 6)]
    assert stats.chisquare(counts, expected * counts.sum() / expected.sum()).pvalue > 1e-3
    assert Mechanism.from_dict(mech.to_dict()) == mech
    with pytest.raises(SpecError):
        DiscreteGaussian(sigma=0.5, epsilon=1.0, delta=1e-6)           # too little noise


def test_gaussian_mechanism():
    g = Gaussian(epsilon=1.0, delta=1e-5, sensitivity=2.0)
    assert g.sigma == analytic_gaussian_sigma(1.0, 1e-5, 2.0) and g.privacy().delta == 1e-5
    x = g.sample(20_000, rng=2)
    assert stats.kstest(x, g.cdf).pvalue > 1e-3
    assert math.isclose(float(g.pdf(0.7)), stats.norm.pdf(0.7, scale=g.sigma), rel_tol=1e-14)
    assert math.isclose(float(g.ppf(0.9)), stats.norm.ppf(0.9, scale=g.sigma), rel_tol=1e-14)
    assert Mechanism.from_dict(g.to_dict()) == g
    with pytest.raises(SpecError):
        Gaussian(sigma=1.0, epsilon=1.0, delta=1e-5)
    with pytest.raises(SpecError):
        Gaussian(sigma=1.0).privacy()


# --------------------------------------------------------------------------------------------
# the reference sets


def test_continuous_references_1d():
    eps, delta, sens = 0.5, 1e-3, 1.0
    bs = {b.name: b for b in continuous_approx_references("abs", eps, delta, sens)}
    assert set(bs) == {"gaussian", "analytic_gaussian", "truncated_laplace", "laplace", "staircase", "uniform"}
    assert all(b.kind == "upper" and b.valid for b in bs.values())
    s = bs["analytic_gaussian"].parameters["sigma"]
    assert delta_g(s, eps, sens) <= delta and math.isclose(bs["analytic_gaussian"].value, s * math.sqrt(2 / math.pi))
    assert math.isclose(bs["laplace"].value, sens / eps)
    assert math.isclose(bs["uniform"].value, sens / (4 * delta))                 # E|U| = half-width/2
    assert math.isclose(bs["staircase"].value, sens * math.exp(eps / 2) / math.expm1(eps))   # [Geng13, Thm 2.5]
    assert bs["truncated_laplace"].value < bs["laplace"].value
    for name, tag in [("gaussian", "[DR14"), ("analytic_gaussian", "[BW18"), ("truncated_laplace", "[GDGK20")]:
        assert tag in bs[name].note
    big = {b.name: b for b in continuous_approx_references("square", 2.0, 1e-3, 1.0)}
    assert not big["gaussian"].valid and "NOT a valid bound" in big["gaussian"].note
    zero = {b.name: b for b in continuous_approx_references("abs", 0.0, 0.1, 1.0)}
    assert zero["analytic_gaussian"].valid and zero["uniform"].valid
    assert not zero["laplace"].valid and not zero["gaussian"].valid and not zero["truncated_laplace"].valid


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_continuous_references_nd(d, norm):
    eps, delta, sens = 1.0, 0.01, 1.5
    for cost in ("l1", "l2", "l2sq"):
        bs = {b.name: b for b in continuous_approx_references(cost, eps, delta, sens, dim=d, norm=norm)}
        lap = "l2_laplace" if norm == "l2" else "laplace"  # the l2-Laplace has one name in every family
        assert set(bs) == {"gaussian", "analytic_gaussian", lap, "staircase", "uniform"}
        # the Gaussian uses the ℓ2 sensitivity, which is Δ for both norms
        s = bs["analytic_gaussian"].parameters["sigma"]
        assert math.isclose(s, analytic_gaussian_sigma(eps, delta, sens), rel_tol=0)
        if norm == "l2":
            expect = {"l2": d * sens / eps, "l2sq": d * (d + 1) * (sens / eps) ** 2}  # ℓ2-Laplace, ‖X‖₂ ~ Gamma(d, Δ/ε)
        else:
            expect = {"l1": d * sens / eps, "l2sq": 2 * d * (sens / eps) ** 2}         # product Laplace
        if cost in expect:
            assert math.isclose(bs[lap].value, expect[cost], rel_tol=1e-12), cost
        assert all(b.valid for n, b in bs.items() if n != "gaussian")


def test_discrete_references():
    (b,) = discrete_approx_references("abs", 0.5, 1e-4, 2)
    sigma = b.parameters["sigma"]
    assert b.name == "discrete_gaussian" and b.valid and b.kind == "upper"
    assert brute_dg_delta(sigma, 0.5, 2) <= 1e-4
    k = np.arange(-int(60 * sigma), int(60 * sigma) + 1, dtype=float)
    p = np.exp(-k * k / (2 * sigma * sigma))
    p /= math.fsum(p)
    assert b.value >= math.fsum(np.abs(k) * p) * (1 - 1e-13)
    assert math.isclose(b.value, math.fsum(np.abs(k) * p), rel_tol=1e-11)


# --------------------------------------------------------------------------------------------
# bad parameters


BAD = [dict(delta=0.0), dict(delta=-0.1), dict(delta=1.0), dict(delta=1.5), dict(epsilon=-1.0), dict(sensitivity=0.0),
       dict(sensitivity=-1.0), dict(epsilon=float("nan")), dict(delta=True)]


@pytest.mark.parametrize("bad", BAD)
def test_bad_parameters_give_one_line_spec_errors(bad):
    good = dict(epsilon=1.0, delta=1e-3, sensitivity=1)
    kw = {**good, **bad}
    calls = [
        lambda: analytic_gaussian_sigma(kw["epsilon"], kw["delta"], kw["sensitivity"]),
        lambda: classic_gaussian_sigma(kw["epsilon"], kw["delta"], kw["sensitivity"]),
        lambda: discrete_gaussian_sigma(kw["epsilon"], kw["delta"], kw["sensitivity"]),
        lambda: truncated_laplace(kw["epsilon"], kw["delta"], kw["sensitivity"]),
        lambda: continuous_approx_references("abs", kw["epsilon"], kw["delta"], kw["sensitivity"]),
        lambda: discrete_approx_references("abs", kw["epsilon"], kw["delta"], kw["sensitivity"]),
        lambda: TruncatedLaplace(**kw),
        lambda: Gaussian(**kw),
        lambda: DiscreteGaussian(**kw),
    ]
    for call in calls:
        with pytest.raises(SpecError) as info:
            call()
        assert "\n" not in str(info.value) and str(info.value)


def test_bad_sigma_dim_norm_and_cost():
    for call in [lambda: gaussian_delta(0.0, 1.0, 1.0), lambda: gaussian_delta(1.0, -1.0, 1.0),
                 lambda: gaussian_cost("abs", -1.0), lambda: gaussian_cost("l3", 1.0, dim=2),
                 lambda: discrete_gaussian_delta(1.0, 1.0, 1.5), lambda: discrete_gaussian_cost("abs", math.inf),
                 lambda: continuous_approx_references("l1", 1.0, 0.1, 1.0, dim=2, norm="linf"),
                 lambda: continuous_approx_references("l1", 1.0, 0.1, 1.0, dim=129),
                 lambda: continuous_approx_references("abs", 1.0, 0.1, 1.0, dim=2)]:
        with pytest.raises(SpecError) as info:
            call()
        assert "\n" not in str(info.value)
