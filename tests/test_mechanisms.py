"""Tests of optmech.mechanisms: closed forms vs independent numeric routes, mass, DP ratios,
optimal parameters, references, samplers.  Formulas are checked against the seeds
([Geng13] = Geng dissertation, [GV13] = Geng-Viswanath (ε,δ) paper), never against hard-coded results.
"""

from __future__ import annotations

import math
import time

import mpmath
import numpy as np
import pytest
from scipy import integrate, optimize

from optmech.errors import SpecError
from optmech.mechanisms import (
    DiscreteLaplace,
    DiscreteStaircase,
    Geometric,
    Laplace,
    Reference,
    Staircase,
    discrete_laplace_cost,
    discrete_laplace_cost_abs,
    discrete_laplace_cost_square,
    discrete_staircase_cost,
    discrete_staircase_normaliser,
    geometric_cost,
    laplace_cost,
    laplace_cost_abs,
    laplace_cost_square,
    optimal_gamma,
    optimal_r,
    references_for,
    staircase_cost,
    staircase_cost_abs,
    staircase_cost_moment,
    staircase_cost_square,
    staircase_normaliser,
    staircase_optimal_cost_abs,
    staircase_optimal_cost_square,
    staircase_reference,
)
from optmech.mechanisms import numerics as nx


# --------------------------------------------------------------------------------------------
# a tiny stand-in for optmech.costs.Cost (duck typing: kind, power, spec, __call__, property)


class StubCost:
    def __init__(self, kind, power, f, spec):
        self.kind, self.power, self._f, self.spec = kind, power, f, spec

    def __call__(self, x):
        return self._f(np.asarray(x, dtype=float))

    def is_symmetric_nondecreasing(self, *, integer=False):
        # a stub: every cost built here is |x|^p-like, checked on a wide sample (the real Cost proves it)
        x = np.arange(0.0, 10001.0) if integer else np.linspace(0.0, 1e4, 100001)
        y = self(x)
        return bool(np.allclose(self(-x), y, rtol=1e-12, atol=0) and np.all(np.diff(y) >= 0))


ABS = StubCost("abs", 1, np.abs, "abs")
SQUARE = StubCost("square", 2, np.square, "square")


def POW(p):
    return StubCost("pow", p, lambda x: np.abs(x) ** p, f"pow:{p}")


def EXPR(f, spec):
    return StubCost("expr", None, f, spec)


EXPR_ABS = EXPR(np.abs, "abs(x)")  # same function, forced onto the numeric routes
EXPR_SQUARE = EXPR(np.square, "x**2")
ASYM = EXPR(lambda x: np.where(x > 0, x, 0.5 * x * x), "asymmetric")
DECREASING = EXPR(lambda x: 1.0 / (1.0 + x * x), "1/(1+x^2)")

EPSILONS = [0.1, 1.0, 5.0, 10.0]
DELTAS = [1.0, 2.5]


def rel(a, b):
    return abs(a / b - 1.0)


# --------------------------------------------------------------------------------------------
# series constants


def test_series_constants_match_seed_and_polylog():
    for eps in [1e-3, 0.1, 1.0, 7.0]:
        b, u = nx.b_and_u(eps)
        c = nx.series_constants(b, u, 6)
        # [Geng13] App. A.4 closed forms for c_0..c_3
        assert rel(c[0], 1 / u) < 1e-15
        assert rel(c[1], b / u**2) < 1e-15
        assert rel(c[2], (b * b + b) / u**3) < 1e-14
        assert rel(c[3], (b**3 + 4 * b * b + b) / u**4) < 1e-14
        with mpmath.workdps(40):
            bm = mpmath.exp(-eps)
            for k in range(1, 7):
                assert rel(c[k], float(mpmath.polylog(-k, bm))) < 1e-14


# --------------------------------------------------------------------------------------------
# continuous staircase: density


@pytest.mark.parametrize("eps", [0.3, 2.0])
@pytest.mark.parametrize("gamma", [0.0, 0.3, 1.0])
def test_staircase_pdf_integrates_to_one(eps, gamma):
    delta = 2.5
    st = Staircase(epsilon=eps, sensitivity=delta, gamma=gamma)
    edges = sorted({0.0} | {k * delta for k in range(1, 12)} | {(k + gamma) * delta for k in range(11)})
    body = sum(integrate.quad(st.pdf, a, b, epsabs=0, epsrel=1e-13)[0] for a, b in zip(edges[:-1], edges[1:]))
    # tail beyond K periods: P(|X| >= KΔ) = b^K (each period holds (1-b) b^k)
    tail = math.exp(-eps * 11)
    assert abs(2 * body + tail - 1) < 1e-13
    assert abs(2 * st.sf(11 * delta) - tail) < 1e-15
    assert st.sf(0.0) == pytest.approx(0.5, abs=1e-15)


@pytest.mark.parametrize("gamma", [0.0, 0.17, 0.5, 1.0])
def test_staircase_compact_form(gamma):
    eps, delta = 1.3, 2.0
    st = Staircase(epsilon=eps, sensitivity=delta, gamma=gamma)
    rng = np.random.default_rng(0)
    x = rng.uniform(-15, 15, 5000)
    a = staircase_normaliser(eps, delta, gamma)
    compact = a * np.exp(-eps) ** (np.floor(np.abs(x) / delta - gamma) + 1)
    assert np.allclose(st.pdf(x), compact, rtol=1e-13, atol=0)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("gamma", [0.0, 0.23, 0.8])
def test_staircase_density_ratio_is_dp(eps, gamma):
    delta = 2.5
    st = Staircase(epsilon=eps, sensitivity=delta, gamma=gamma)
    x = np.linspace(-20.0, 20.0, 4001) + 1e-3 * math.pi  # avoid sitting on breakpoints
    d = np.linspace(-delta, delta, 81)
    f = st.pdf(x)
    g = st.pdf(x[:, None] + d[None, :])
    assert np.max(f[:, None] / g) <= math.exp(eps) * (1 + 1e-12)
    assert np.max(f[:, None] / g) >= math.exp(eps) * (1 - 1e-12)  # the constraint binds


def test_staircase_cdf_sf_consistent():
    st = Staircase(epsilon=1.1, sensitivity=1.5, gamma=0.35)
    x = np.linspace(-9, 9, 301) + 0.01
    breaks = sorted({s * (k + g) * 1.5 for k in range(40) for g in (0.0, 0.35) for s in (-1, 1)})

    def cdf_quad(v):
        pts = [p for p in breaks if p < v] + [v]
        return st.cdf(pts[0]) + sum(integrate.quad(st.pdf, a, b, epsabs=0, epsrel=1e-13)[0] for a, b in zip(pts[:-1], pts[1:]))

    assert np.allclose(st.cdf(x[::50]), [cdf_quad(v) for v in x[::50]], rtol=1e-12, atol=0)
    assert np.allclose(st.cdf(x) + st.sf(x), 1.0, atol=1e-15)
    assert st.sf(200.0) > 0 and st.sf(200.0) < 1e-50  # tail formula, no 1 - cdf


# --------------------------------------------------------------------------------------------
# continuous staircase: costs


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", DELTAS)
def test_staircase_closed_costs_equal_numeric_route(eps, delta):
    for gamma in [0.0, 0.12, 0.5, 0.93, 1.0]:
        assert rel(staircase_cost(EXPR_ABS, eps, delta, gamma), staircase_cost_abs(eps, delta, gamma)) < 1e-13
        assert rel(staircase_cost(EXPR_SQUARE, eps, delta, gamma), staircase_cost_square(eps, delta, gamma)) < 1e-13
        # the general moment formula reproduces A.3 and (A.25)
        assert rel(staircase_cost_moment(1, eps, delta, gamma), staircase_cost_abs(eps, delta, gamma)) < 1e-14
        assert rel(staircase_cost_moment(2, eps, delta, gamma), staircase_cost_square(eps, delta, gamma)) < 1e-14
        assert staircase_cost_moment(0, eps, delta, gamma) == pytest.approx(1.0, abs=1e-15)


def _lerch_cost(p, eps, delta, gamma):
    """Independent route for |x|^p [derived]: telescoping the period sum gives
    V = Δ^p (1-b)^2 / ((p+1)(b+(1-b)γ)) Σ_k b^k (k+γ)^{p+1}, evaluated in high precision."""
    with mpmath.workdps(30):
        b = mpmath.exp(-eps)
        s = mpmath.nsum(lambda k: b**k * (k + gamma) ** (p + 1), [0, mpmath.inf])
        return float(delta**p * (1 - b) ** 2 / ((p + 1) * (b + (1 - b) * gamma)) * s)


@pytest.mark.parametrize("p", [1.5, 3])
def test_staircase_power_costs_vs_lerch(p):
    for eps, delta, gamma in [(0.5, 1.0, 0.3), (2.0, 2.5, 0.1), (6.0, 1.0, 0.02)]:
        ref = _lerch_cost(p, eps, delta, gamma)
        assert rel(staircase_cost(POW(p), eps, delta, gamma), ref) < 1e-13
        assert rel(staircase_cost(EXPR(lambda x, p=p: np.abs(x) ** p, "e"), eps, delta, gamma), ref) < 1e-13


def test_staircase_asymmetric_cost_numeric():
    eps, delta, gamma = 1.0, 1.0, 0.4
    st = Staircase(epsilon=eps, sensitivity=delta, gamma=gamma)
    pts = sorted({k * delta for k in range(-40, 41)} | {s * (k + gamma) * delta for k in range(40) for s in (-1, 1)})
    direct = sum(integrate.quad(lambda x: ASYM(x) * st.pdf(x), a, b, epsabs=0, epsrel=1e-12)[0] for a, b in zip(pts[:-1], pts[1:]))
    assert rel(st.expected_cost(ASYM), direct) < 1e-10


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0, 10.0, 20.0])
def test_optimal_gamma_closed_forms(eps):
    b = math.exp(-eps)
    # |x|: Thm 2.5 vs the numeric argmin of A.3
    g1 = optimal_gamma(ABS, eps, 1.0)
    assert rel(g1, 1 / (1 + math.exp(eps / 2))) < 1e-14
    num1 = optimize.minimize_scalar(lambda g: staircase_cost_abs(eps, 1.0, g), bounds=(0, 1), method="bounded", options={"xatol": 1e-13})
    assert abs(num1.x - g1) < 1e-6 * max(g1, 1e-3)
    # x^2: (A.28) as printed (safe at these ε) vs ours vs the numeric argmin of (A.25)
    g2 = optimal_gamma(SQUARE, eps, 1.0)
    seed = -b / (1 - b) + (b - 2 * b**2 + 2 * b**4 - b**5) ** (1 / 3) / (2 ** (1 / 3) * (1 - b) ** 2)
    assert rel(g2, seed) < 1e-9
    num2 = optimize.minimize_scalar(lambda g: staircase_cost_square(eps, 1.0, g), bounds=(0, 1), method="bounded", options={"xatol": 1e-13})
    assert abs(num2.x - g2) < 1e-6 * max(g2, 1e-3)
    # (A.27): the stationarity cubic vanishes at γ*
    cubic = 2 / 3 * (1 - b) ** 2 * g2**3 + 2 * b * (1 - b) * g2**2 + 2 * b * b * g2 - (2 * b * b + b) / 3
    assert abs(cubic) < 1e-14 * (2 * b * b + b)
    # V* closed forms equal the cost at γ*
    for delta in DELTAS:
        assert rel(staircase_optimal_cost_abs(eps, delta), staircase_cost_abs(eps, delta, g1)) < 1e-14
        assert rel(staircase_optimal_cost_square(eps, delta), staircase_cost_square(eps, delta, g2)) < 1e-13


@pytest.mark.parametrize("eps", [1e-8, 1e-5, 1e-3])
def test_optimal_gamma_square_small_epsilon(eps):
    # (A.28) loses digits to cancellation as b -> 1; compare with (A.28) in 50-digit arithmetic.
    with mpmath.workdps(50):
        b = mpmath.exp(-mpmath.mpf(eps))
        seed = -b / (1 - b) + (b - 2 * b**2 + 2 * b**4 - b**5) ** (mpmath.mpf(1) / 3) / (mpmath.cbrt(2) * (1 - b) ** 2)
    assert rel(optimal_gamma(SQUARE, eps, 1.0), float(seed)) < 1e-14
    assert optimal_gamma(SQUARE, eps, 1.0) == pytest.approx(0.5, abs=eps)  # γ* -> 1/2 (Thm 2.9)


@pytest.mark.parametrize("eps", [0.1, 1.0, 10.0])
def test_optimal_gamma_numeric_route_agrees(eps):
    for closed, expr in [(ABS, EXPR_ABS), (SQUARE, EXPR_SQUARE), (POW(3), EXPR(lambda x: np.abs(x) ** 3, "|x|^3"))]:
        g_c = optimal_gamma(closed, eps, 2.5)
        g_n = optimal_gamma(expr, eps, 2.5)
        assert abs(g_c - g_n) < 1e-6 * max(g_c, 1e-3)
        r_c, r_n = staircase_reference(closed, eps, 2.5), staircase_reference(expr, eps, 2.5)
        assert rel(r_c.value, r_n.value) < 1e-13
        assert not r_n.exact


def test_optimal_gamma_cubic_cost_is_minimum():
    eps, delta = 0.7, 1.0
    g = optimal_gamma(POW(3), eps, delta)
    v = staircase_cost_moment(3, eps, delta, g)
    grid = np.linspace(0, 1, 2001)
    assert v <= min(staircase_cost_moment(3, eps, delta, x) for x in grid) * (1 + 1e-15)


def test_asymptotic_gain_at_eps_10():
    # [Geng13] §2.10.1: "about 15-fold and 23-fold improvement" at ε ≈ 10 (Fig. 2.7)
    eps, delta = 10.0, 1.0
    gain_abs = laplace_cost_abs(eps, delta) / staircase_optimal_cost_abs(eps, delta)
    gain_sq = laplace_cost_square(eps, delta) / staircase_optimal_cost_square(eps, delta)
    assert 10 <= gain_abs <= 30 and 10 <= gain_sq <= 30
    assert gain_sq > gain_abs


def test_small_epsilon_gap_series():
    # [Geng13] Cor 2.6 and 2.8: V_Lap - V* -> Δ ε/24 (|x|) and Δ²/12 (x²) as ε -> 0
    eps, delta = 1e-3, 2.0
    gap1 = laplace_cost_abs(eps, delta) - staircase_optimal_cost_abs(eps, delta)
    gap2 = laplace_cost_square(eps, delta) - staircase_optimal_cost_square(eps, delta)
    assert gap1 == pytest.approx(delta * (eps / 24 - 7 * eps**3 / 5760), rel=1e-6)
    assert gap2 == pytest.approx(delta**2 * (1 / 12 - eps**2 / 720), rel=1e-6)


# --------------------------------------------------------------------------------------------
# discrete staircase and geometric


def _brute(cost, eps, delta, r, n_periods=None):
    mech = DiscreteStaircase(epsilon=eps, sensitivity=delta, r=r)
    n = (n_periods or int(50 / eps) + 5) * delta
    i = np.arange(-n, n + 1)
    p = mech.pmf(i)
    return math.fsum(p * cost(i))


@pytest.mark.parametrize("eps", [0.2, 1.0, 4.0])
@pytest.mark.parametrize("delta", [1, 2, 5])
def test_discrete_staircase_pmf_mass_and_dp(eps, delta):
    for r in range(1, delta + 1):
        mech = DiscreteStaircase(epsilon=eps, sensitivity=delta, r=r)
        n = 40 * delta
        i = np.arange(-n, n + 1)
        p = mech.pmf(i)
        assert abs(math.fsum(p) + mech.sf(n) + mech.cdf(-n - 1) - 1) < 1e-14
        # P(i) <= e^ε P(i + s) for |s| <= Δ on a window, binding somewhere
        s = np.arange(-delta, delta + 1)
        ratio = p[delta:-delta, None] / mech.pmf(i[delta:-delta, None] + s[None, :])
        assert ratio.max() <= math.exp(eps) * (1 + 1e-12)
        assert ratio.max() >= math.exp(eps) * (1 - 1e-12)
        assert mech.pmf(0.5) == 0.0
        assert mech.pmf(0) == pytest.approx(discrete_staircase_normaliser(eps, delta, r), rel=1e-15)
        # the flat central block has 2r - 1 points (pure-dp.md §5)
        assert np.sum(np.isclose(p, p.max(), rtol=1e-14, atol=0)) == 2 * r - 1


@pytest.mark.parametrize("eps", [0.1, 1.0, 6.0])
@pytest.mark.parametrize("delta", [1, 3, 8])
def test_discrete_staircase_costs_vs_brute_force(eps, delta):
    for r in {1, (delta + 1) // 2, delta}:
        for cost in [ABS, SQUARE, POW(3)]:
            bf = _brute(cost, eps, delta, r)
            assert rel(discrete_staircase_cost(cost, eps, delta, r), bf) < 1e-13
        assert rel(discrete_staircase_cost(EXPR_SQUARE, eps, delta, r), _brute(SQUARE, eps, delta, r)) < 1e-13
        assert rel(discrete_staircase_cost(ASYM, eps, delta, r), _brute(ASYM, eps, delta, r)) < 1e-13


@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0, 8.0])
def test_optimal_r_vs_brute_force(eps):
    for delta in [1, 2, 3, 7, 12]:
        for cost, expr in [(ABS, EXPR_ABS), (SQUARE, EXPR_SQUARE)]:
            values = [_brute(cost, eps, delta, r) for r in range(1, delta + 1)]
            r_star, v_star = optimal_r(cost, eps, delta)
            assert rel(v_star, min(values)) < 1e-13
            assert values[r_star - 1] <= min(values) * (1 + 1e-13)
            r_n, v_n = optimal_r(expr, eps, delta)
            assert rel(v_n, v_star) < 1e-13


def test_optimal_r_large_delta_is_fast():
    t0 = time.perf_counter()
    r1, v1 = optimal_r(ABS, 1.0, 10**6)
    r2, v2 = optimal_r(SQUARE, 1.0, 10**6)
    assert time.perf_counter() - t0 < 2.0
    # the lattice optimum approaches the continuous one (scaled by Δ) as Δ grows
    assert rel(v1 / 1e6, staircase_optimal_cost_abs(1.0, 1.0)) < 1e-5
    assert rel(v2 / 1e12, staircase_optimal_cost_square(1.0, 1.0)) < 1e-5
    assert abs(r1 / 1e6 - optimal_gamma(ABS, 1.0, 1.0)) < 1e-5


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_delta_one_is_geometric(eps):
    b = math.exp(-eps)
    i = np.arange(-30, 31)
    geo = (1 - b) / (1 + b) * b ** np.abs(i)  # [Geng13] Thm 2.12
    assert np.allclose(DiscreteStaircase(epsilon=eps, sensitivity=1, r=1).pmf(i), geo, rtol=1e-14, atol=0)
    assert np.allclose(Geometric(epsilon=eps).pmf(i), geo, rtol=1e-14, atol=0)
    assert Geometric(epsilon=eps).pmf(0) == pytest.approx(math.tanh(eps / 2), rel=1e-15)
    for cost in [ABS, SQUARE, POW(4), EXPR_ABS]:
        assert rel(geometric_cost(cost, eps), discrete_staircase_cost(cost, eps, 1, 1)) < 1e-14
        assert optimal_r(cost, eps, 1)[0] == 1
    assert rel(geometric_cost(ABS, eps), 2 * b / (1 - b * b)) < 1e-14
    assert rel(geometric_cost(SQUARE, eps), 2 * b / (1 - b) ** 2) < 1e-14
    with pytest.raises(SpecError):
        Geometric(epsilon=eps, sensitivity=2)
    with pytest.raises(SpecError):
        geometric_cost(ABS, eps, 3)


# --------------------------------------------------------------------------------------------
# Laplace and discrete Laplace


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("delta", [1, 3])
def test_discrete_laplace_costs_vs_brute_force(eps, delta):
    lam = math.exp(-eps / delta)
    mech = DiscreteLaplace(epsilon=eps, sensitivity=delta)
    n = int(60 * delta / eps) + 10
    i = np.arange(-n, n + 1)
    p = mech.pmf(i)
    assert np.allclose(p, (1 - lam) / (1 + lam) * lam ** np.abs(i), rtol=1e-13, atol=0)  # [GV13] (64)
    assert abs(math.fsum(p) + mech.sf(n) + mech.cdf(-n - 1) - 1) < 1e-14
    for cost in [ABS, SQUARE, POW(3), POW(1.5), EXPR_ABS, ASYM]:
        assert rel(discrete_laplace_cost(cost, eps, delta), math.fsum(p * cost(i))) < 1e-13
    assert rel(discrete_laplace_cost_abs(eps, delta), 2 * lam / (1 - lam * lam)) < 1e-13  # [GV13] (231)
    assert rel(discrete_laplace_cost_square(eps, delta), 2 * lam / (1 - lam) ** 2) < 1e-13  # [GV13] (238)
    # ε-DP for sensitivity Δ: p_k <= e^ε p_{k+s}, |s| <= Δ
    assert np.max(p[delta:-delta] / p[2 * delta :]) <= math.exp(eps) * (1 + 1e-12)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("delta", [1.0, 2.5])
def test_laplace_costs_vs_quad(eps, delta):
    s = delta / eps
    mech = Laplace(epsilon=eps, sensitivity=delta)
    assert laplace_cost(ABS, eps, delta) == pytest.approx(delta / eps, rel=1e-15)
    assert laplace_cost(SQUARE, eps, delta) == pytest.approx(2 * (delta / eps) ** 2, rel=1e-15)
    for cost in [EXPR_ABS, EXPR_SQUARE, POW(1.5), ASYM, EXPR(lambda x: np.minimum(np.abs(x), 2.2), "clip")]:
        q = sum(
            integrate.quad(lambda x: cost(x) * mech.pdf(x), a, b, epsabs=0, epsrel=1e-13, limit=400, points=pts)[0]
            for a, b, pts in [(-80 * s, 0, [-2.2]), (0, 80 * s, [2.2])]
        )
        assert rel(laplace_cost(cost, eps, delta), q) < 1e-12
    x = np.linspace(-5, 5, 11)
    assert np.allclose(mech.cdf(x) + mech.sf(x), 1.0, atol=1e-15)


def test_diverging_cost_gives_inf():
    cost = EXPR(lambda x: np.exp(np.abs(x)), "exp|x|")
    assert laplace_cost(cost, 0.5, 1.0) == math.inf
    assert staircase_cost(cost, 0.5, 1.0, 0.3) == math.inf
    assert discrete_laplace_cost(cost, 0.5, 1) == math.inf
    # converges when ε > Δ: E e^{|X|} = ε/(ε - 1) for Laplace with Δ = 1
    assert laplace_cost(cost, 4.0, 1.0) == pytest.approx(4.0 / 3.0, rel=1e-13)


# --------------------------------------------------------------------------------------------
# references


def test_references_names():
    names = lambda refs: [r.name for r in refs]  # noqa: E731
    assert names(references_for(ABS, 1.0, 2.5, "continuous")) == ["staircase", "laplace"]
    assert names(references_for(ABS, 1.0, 3, "integer")) == ["discrete_staircase", "discrete_laplace"]
    assert names(references_for(SQUARE, 1.0, 1, "integer")) == ["discrete_staircase", "geometric", "discrete_laplace"]
    # costs not proven symmetric nondecreasing: the best (discrete) staircase too, as an upper bound (not V*)
    refs = references_for(ASYM, 1.0, 2.5, "continuous")
    assert names(refs) == ["staircase", "laplace"] and refs[0].note.startswith("upper bound")
    assert refs[0].value == pytest.approx(staircase_cost(ASYM, 1.0, 2.5, refs[0].parameters["gamma"]), rel=1e-12)
    assert names(references_for(ASYM, 1.0, 1, "integer")) == ["discrete_staircase", "discrete_laplace"]
    assert names(references_for(DECREASING, 1.0, 1, "integer")) == ["discrete_staircase", "discrete_laplace"]
    assert staircase_reference(ASYM, 1.0, 1.0) is None


def test_references_values_and_ordering():
    eps, delta = 2.0, 2.5
    st, lap = references_for(SQUARE, eps, delta, "continuous")
    assert st.exact and lap.exact
    assert st.parameters["gamma"] == optimal_gamma(SQUARE, eps, delta)
    assert st.parameters["gamma_heuristic"] == pytest.approx(math.exp(-eps) / 2)
    assert st.value == pytest.approx(staircase_optimal_cost_square(eps, delta), rel=1e-15)
    assert st.value < lap.value
    ds, dl = references_for(ABS, eps, 4, "integer")
    assert ds.parameters["r"] == optimal_r(ABS, eps, 4)[0] and ds.value <= dl.value
    ds1, geo, dl1 = references_for(POW(3), eps, 1, "integer")
    assert rel(ds1.value, geo.value) < 1e-14 and rel(geo.value, dl1.value) < 1e-14
    d = references_for(EXPR_ABS, eps, 2.5, "continuous")[0].to_dict()
    assert d["name"] == "staircase" and d["exact"] is False and "numeric" in d["note"]
    assert Reference("x", math.inf).to_dict()["value"] == "inf"


def test_references_validation():
    with pytest.raises(SpecError):
        references_for(ABS, 1.0, 2.5, "integer")  # non-integer sensitivity on ℤ
    with pytest.raises(SpecError):
        references_for(ABS, 1.0, 1.0, "lattice")
    with pytest.raises(SpecError):
        references_for(ABS, -1.0, 1.0, "continuous")
    with pytest.raises(SpecError):
        references_for(ABS, 1.0, 0.0, "continuous")


# --------------------------------------------------------------------------------------------
# mechanism objects


def test_mechanism_validation_and_serialisation():
    with pytest.raises(SpecError):
        Staircase(epsilon=1.0, sensitivity=1.0, gamma=1.5)
    with pytest.raises(SpecError):
        Staircase(epsilon=float("nan"), sensitivity=1.0, gamma=0.5)
    with pytest.raises(SpecError):
        DiscreteStaircase(epsilon=1.0, sensitivity=3, r=4)
    with pytest.raises(SpecError):
        DiscreteStaircase(epsilon=1.0, sensitivity=2.5, r=1)
    with pytest.raises(TypeError):
        Staircase(1.0, 1.0, 0.5)  # keyword-only
    st = Staircase(epsilon=1.0, sensitivity=2.0, gamma=0.25)
    assert st.to_dict() == {"name": "staircase", "epsilon": 1.0, "sensitivity": 2.0, "gamma": 0.25}
    assert "gamma=0.25" in repr(st)
    with pytest.raises(TypeError):
        st.pmf(0)
    with pytest.raises(TypeError):
        DiscreteStaircase(epsilon=1.0, sensitivity=2, r=1).pdf(0.0)
    assert DiscreteStaircase(epsilon=1.0, sensitivity=3.0, r=2).sensitivity == 3
    opt = Staircase.optimal(ABS, epsilon=1.0, sensitivity=2.0)
    assert opt.expected_cost(ABS) == pytest.approx(staircase_optimal_cost_abs(1.0, 2.0), rel=1e-14)
    dopt = DiscreteStaircase.optimal(SQUARE, epsilon=1.0, sensitivity=5)
    assert dopt.expected_cost(SQUARE) == pytest.approx(optimal_r(SQUARE, 1.0, 5)[1], rel=1e-15)


@pytest.mark.parametrize("gamma", [0.0, 0.3])
def test_staircase_sampler_ks(gamma):
    from scipy import stats

    st = Staircase(epsilon=1.5, sensitivity=2.0, gamma=gamma)
    x = st.sample(20000, rng=np.random.default_rng(12345))
    assert stats.kstest(x, st.cdf).pvalue > 1e-3
    assert abs(np.mean(np.abs(x)) / st.expected_cost(ABS) - 1) < 0.05


@pytest.mark.parametrize("mech", [DiscreteStaircase(epsilon=0.8, sensitivity=4, r=2), DiscreteLaplace(epsilon=1.0, sensitivity=2), Geometric(epsilon=0.7)])
def test_discrete_samplers_chi2(mech):
    from scipy import stats

    k = mech.sample(40000, rng=np.random.default_rng(7))
    assert k.dtype == np.int64
    support = np.arange(-12, 13)
    observed = np.array([np.sum(k == v) for v in support] + [np.sum(np.abs(k) > 12)])
    expected = np.append(mech.pmf(support), mech.sf(12) + mech.cdf(-13)) * k.size
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_laplace_sampler_ks():
    from scipy import stats

    mech = Laplace(epsilon=0.5, sensitivity=1.0)
    assert stats.kstest(mech.sample(20000, rng=3), mech.cdf).pvalue > 1e-3


# --------------------------------------------------------------------------------------------
# numeric machinery at small ε (Gregory tail, Chebyshev interpolation)


def test_gregory_coefficients():
    # sum_{k>=0} e^{-ck} = 1/(1-e^{-c}) = 1/c + 1/2 + Σ g_m (e^{-c}-1)^m + O(c^7)
    for c in [1e-4, 1e-3, 1e-2]:  # tail mode only runs when ε ≲ 0.012
        approx = 1 / c + 0.5 + sum(g * (math.exp(-c) - 1) ** (m + 1) for m, g in enumerate(nx.GREGORY))
        assert rel(approx, -1 / math.expm1(-c)) < 1e-15


@pytest.mark.parametrize("eps", [1e-6, 1e-4, 0.02])
def test_numeric_routes_small_epsilon(eps):
    for closed, expr in [(ABS, EXPR_ABS), (SQUARE, EXPR_SQUARE)]:
        assert rel(staircase_reference(expr, eps, 1.0).value, staircase_reference(closed, eps, 1.0).value) < 1e-13
        assert rel(laplace_cost(expr, eps, 2.0), laplace_cost(closed, eps, 2.0)) < 1e-13
        for delta in [1, 3, 1000]:
            assert rel(optimal_r(expr, eps, delta)[1], optimal_r(closed, eps, delta)[1]) < 1e-13
            assert rel(discrete_laplace_cost(expr, eps, delta), discrete_laplace_cost(closed, eps, delta)) < 1e-13
    ref = staircase_reference(EXPR_SQUARE, 1e-6, 1.0)
    assert "Gregory" in ref.note and not ref.exact


def test_kinked_cost_falls_back_to_direct_sum():
    clip = EXPR(lambda x: np.minimum(np.abs(x), 1234.5), "min(|x|, 1234.5)")
    eps, delta = 0.2, 200  # Δ > 128 asks for interpolation; the kink in period 6 must make it decline
    m = nx.PeriodSum(nx.symmetrised(clip), eps, float(delta), interpolate=True)
    assert not m.interpolated
    for r in [1, 57]:
        assert rel(discrete_staircase_cost(clip, eps, delta, r), _brute(clip, eps, delta, r)) < 1e-13
