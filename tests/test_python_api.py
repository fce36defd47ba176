"""The Python API as the ecosystem expects it (issue 18): scipy.stats names on every mechanism
(``rvs``, ``ppf``, ``logpmf``/``logpdf``, ``support``, ``entropy``, ``median``), the DP-library
usage ``mech(values)`` / ``mech.randomise(values)``, Jupyter rendering of results and mechanisms,
and the ``optmech`` facade (``__all__``, ``dir``, lazy names).

Expected values are derived independently of the code under test: closed forms stated here
(Laplace entropy 1 + ln 2s, ...), direct sums over the pmf, quadrature, and scipy.stats.
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import integrate, stats

import optmech
from optmech.errors import SpecError
from optmech.mechanisms import (
    DiscreteLaplace,
    DiscreteLaplaceND,
    DiscreteStaircase,
    DiscreteStaircaseND,
    Geometric,
    L2Laplace,
    Laplace,
    LaplaceND,
    Staircase,
    StaircaseND,
    Uniform,
    UniformContinuous,
    discrete_staircase_normaliser,
    staircase_normaliser,
)
from optmech.spec import ApproxDP, Continuous, IntegerLattice, Lipschitz, Problem, PureDP


# -- shared solver outputs (tiny problems, solved once) -------------------------------------------
@pytest.fixture(scope="module")
def solved():
    out = {}
    out["lattice"] = optmech.solve(Problem(privacy=PureDP(1), cost="abs", domain=IntegerLattice(), sensitivity=2))
    out["cells"] = optmech.solve(Problem(privacy=PureDP(1), cost="abs", domain=Continuous(4), target_gap=1e-3))
    out["finite"] = optmech.solve(Problem(privacy=ApproxDP(0.5, 0.1), cost="abs", domain=IntegerLattice()))
    out["lipschitz"] = optmech.solve(Problem(privacy=Lipschitz(1.0), cost="abs", domain=IntegerLattice()))
    out["nd"] = optmech.solve(Problem(privacy=PureDP(1), cost="l1", dim=2, domain=IntegerLattice()))
    return out


LATTICE_1D = [
    Geometric(epsilon=1.0),
    DiscreteLaplace(epsilon=0.7, sensitivity=3),
    DiscreteStaircase(epsilon=1.2, sensitivity=5, r=2),
    Uniform(delta=0.1, sensitivity=1),
    Uniform(delta=0.3, sensitivity=2),
]
CONTINUOUS_1D = [
    Laplace(epsilon=0.8, sensitivity=2.0),
    Staircase(epsilon=1.0, sensitivity=1.0, gamma=0.3),
    UniformContinuous(delta=0.2, sensitivity=1.0),
]
ND = [
    LaplaceND(epsilon=1.0, sensitivity=1.0, dim=2),
    DiscreteLaplaceND(epsilon=1.0, sensitivity=1, dim=3),
    StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.4, dim=2),
    DiscreteStaircaseND(epsilon=1.0, sensitivity=2, r=1, dim=2),
    L2Laplace(epsilon=1.0, dim=2),
]
ALL = LATTICE_1D + CONTINUOUS_1D + ND
Q = np.array([1e-12, 1e-6, 0.01, 0.1, 0.25, 0.5, 0.5 + 1e-12, 0.75, 0.9, 0.99, 1 - 1e-6, 1 - 1e-12])


# -- rvs -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mech", ALL, ids=repr)
def test_rvs_is_sample_with_scipy_names(mech):
    a = mech.rvs(size=7, random_state=3)
    b = mech.sample(7, rng=3)
    assert np.array_equal(a, b)
    c = mech.rvs(size=(2, 3), random_state=np.random.default_rng(11))
    d = mech.rvs(size=(2, 3), random_state=np.random.default_rng(11))
    assert np.array_equal(c, d)
    assert c.shape == ((2, 3) if mech.dim == 1 else (2, 3, mech.dim))
    one = mech.rvs(random_state=0)
    assert np.shape(one) == (() if mech.dim == 1 else (mech.dim,))
    assert mech.rvs(size=4).shape[0] == 4  # random_state=None: fresh entropy


# -- ppf -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mech", LATTICE_1D, ids=repr)
def test_lattice_ppf_is_the_generalised_inverse_of_the_cdf(mech):
    k = mech.ppf(Q)
    assert np.all(k == np.floor(k))
    assert np.all(mech.cdf(k) >= Q)
    assert np.all(mech.cdf(k - 1) < Q)
    assert np.all(np.diff(k) >= 0)
    # scalar in, scalar out; the ends and out-of-range as scipy
    assert np.ndim(mech.ppf(0.5)) == 0
    lo, hi = mech.support()
    assert mech.ppf(0.0) == lo - 1 and mech.ppf(1.0) == hi
    assert np.isnan(mech.ppf(1.5)) and np.isnan(mech.ppf(-0.1))


def test_solver_lattice_ppf_is_the_generalised_inverse(solved):
    for key in ("lattice", "finite", "lipschitz"):
        mech = solved[key].mechanism
        k = mech.ppf(Q)
        assert np.all(mech.cdf(k) >= Q) and np.all(mech.cdf(k - 1) < Q), key


def test_geometric_ppf_matches_scipy_dlaplace():
    ref = stats.dlaplace(1.0)  # P(k) ∝ e^{-|k|}
    q = np.array([0.01, 0.2, 0.5, 0.7, 0.95, 0.999])
    assert np.array_equal(Geometric(epsilon=1.0).ppf(q), ref.ppf(q))


@pytest.mark.parametrize("mech", CONTINUOUS_1D, ids=repr)
def test_continuous_ppf_inverts_the_cdf(mech):
    x = mech.ppf(Q)
    assert np.all(np.diff(x) >= 0)
    np.testing.assert_allclose(mech.cdf(x), Q, rtol=1e-9, atol=1e-15)


def test_laplace_ppf_matches_scipy():
    mech = Laplace(epsilon=0.8, sensitivity=2.0)
    np.testing.assert_allclose(mech.ppf(Q), stats.laplace(scale=2.5).ppf(Q), rtol=1e-12, atol=1e-14)
    assert mech.ppf(0.0) == -math.inf and mech.ppf(1.0) == math.inf


def test_solver_density_ppf_inverts_the_cdf(solved):
    mech = solved["cells"].mechanism
    x = mech.ppf(Q)
    np.testing.assert_allclose(mech.cdf(x), Q, rtol=1e-9, atol=1e-13)


def test_ppf_needs_one_dimension():
    with pytest.raises(TypeError, match="dim = 1"):
        LaplaceND(epsilon=1.0, sensitivity=1.0, dim=2).ppf(0.5)
    one = LaplaceND(epsilon=1.0, sensitivity=1.0, dim=1)
    assert one.ppf(0.75) == pytest.approx(math.log(2.0), rel=1e-14)


# -- logpmf / logpdf -----------------------------------------------------------------------------
@pytest.mark.parametrize("mech", LATTICE_1D, ids=repr)
def test_logpmf_is_log_pmf(mech):
    k = np.arange(-60, 61)
    p = mech.pmf(k)
    lp = mech.logpmf(k)
    np.testing.assert_allclose(lp[p > 0], np.log(p[p > 0]), rtol=1e-12)
    assert np.all(lp[p == 0] == -np.inf)
    assert mech.logpmf(0.5) == -np.inf  # off the lattice
    assert np.ndim(mech.logpmf(1)) == 0


@pytest.mark.parametrize("mech", CONTINUOUS_1D, ids=repr)
def test_logpdf_is_log_pdf(mech):
    x = np.linspace(-30, 30, 1201)
    f = mech.pdf(x)
    lf = mech.logpdf(x)
    np.testing.assert_allclose(lf[f > 0], np.log(f[f > 0]), rtol=1e-12, atol=1e-13)
    assert np.all(lf[f == 0] == -np.inf)


def test_log_densities_stay_finite_where_the_density_underflows():
    dl = DiscreteLaplace(epsilon=1.0, sensitivity=1)
    assert dl.pmf(3000) == 0.0
    assert dl.logpmf(3000) == pytest.approx(math.log(math.tanh(0.5)) - 3000.0, rel=1e-15)
    lap = Laplace(epsilon=1.0, sensitivity=1.0)
    assert lap.pdf(3000.0) == 0.0 and lap.logpdf(3000.0) == pytest.approx(-3000.0 - math.log(2.0), rel=1e-15)
    st = Staircase(epsilon=1.0, sensitivity=1.0, gamma=0.5)
    # |x| = 3000.25: level 3000 (t = 0.25 < γ), so ln f = ln a − 3000
    assert st.logpdf(3000.25) == pytest.approx(math.log(staircase_normaliser(1.0, 1.0, 0.5)) - 3000.0, rel=1e-15)
    ds = DiscreteStaircase(epsilon=1.0, sensitivity=2, r=1)
    a = discrete_staircase_normaliser(1.0, 2, 1)
    assert ds.logpmf(4001) == pytest.approx(math.log(a) - 2001.0, rel=1e-15)  # 4001 = 2000Δ + 1: level 2000 + [1 >= r]


def test_nd_log_densities():
    lap = LaplaceND(epsilon=1.0, sensitivity=1.0, dim=2)
    x = np.array([[0.3, -1.2], [4.0, 2.0]])
    one = Laplace(epsilon=1.0, sensitivity=1.0)
    np.testing.assert_allclose(lap.logpdf(x), one.logpdf(x[:, 0]) + one.logpdf(x[:, 1]), rtol=1e-14)
    dl = DiscreteLaplaceND(epsilon=1.0, sensitivity=1, dim=2)
    k = np.array([[1, -2], [0, 0]])
    np.testing.assert_allclose(dl.logpmf(k), np.log(dl.pmf(k)), rtol=1e-13)
    assert dl.logpmf([0.5, 0]) == -np.inf
    with pytest.raises(TypeError, match="lattice"):
        dl.logpdf([0, 0])
    with pytest.raises(TypeError, match="continuous"):
        lap.logpmf([0, 0])


def test_solver_log_densities(solved):
    mech = solved["lattice"].mechanism
    k = np.arange(-80, 81)
    p = mech.pmf(k)
    np.testing.assert_allclose(mech.logpmf(k)[p > 0], np.log(p[p > 0]), rtol=1e-12)
    cells = solved["cells"].mechanism
    x = np.linspace(-20, 20, 801)
    np.testing.assert_allclose(cells.logpdf(x), np.log(cells.pdf(x)), rtol=1e-12)
    assert np.isfinite(cells.logpdf(1e4)) and cells.pdf(1e4) == 0.0  # the tail's log stays finite


# -- support -------------------------------------------------------------------------------------
def test_support_like_scipy(solved):
    assert Laplace(epsilon=1.0, sensitivity=1.0).support() == (-math.inf, math.inf)
    assert Geometric(epsilon=1.0).support() == (-math.inf, math.inf)
    u = Uniform(delta=0.1, sensitivity=1)
    lo, hi = u.support()
    assert (lo, hi) == (-5.0, 4.0)
    assert u.pmf(lo) > 0 and u.pmf(hi) > 0 and u.pmf(lo - 1) == 0 and u.pmf(hi + 1) == 0
    assert UniformContinuous(delta=0.2, sensitivity=1.0).support() == (-2.5, 2.5)
    assert Uniform(delta=0.25, sensitivity=1, dim=3).support() == (-2.0, 1.0)
    finite = solved["finite"].mechanism  # (ε, δ) output: finite support
    lo, hi = finite.support()
    assert math.isfinite(lo) and math.isfinite(hi)
    assert finite.pmf(lo) > 0 and finite.pmf(hi) > 0
    assert finite.pmf(np.arange(lo - 50, lo)).sum() == 0 and finite.pmf(np.arange(hi + 1, hi + 50)).sum() == 0
    assert solved["lattice"].mechanism.support() == (-math.inf, math.inf)


# -- entropy ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps,sens", [(1.0, 1.0), (0.5, 3.0), (4.0, 0.25)])
def test_laplace_entropy_closed_form(eps, sens):
    b = sens / eps
    assert Laplace(epsilon=eps, sensitivity=sens).entropy() == pytest.approx(1.0 + math.log(2.0 * b), rel=1e-15)
    assert LaplaceND(epsilon=eps, sensitivity=sens, dim=3).entropy() == pytest.approx(3 * (1.0 + math.log(2.0 * b)))


def direct_entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-np.sum(p * np.log(p)))


@pytest.mark.parametrize("mech", [Geometric(epsilon=1.0), Geometric(epsilon=0.3), DiscreteLaplace(epsilon=0.7, sensitivity=3),
                                  DiscreteLaplace(epsilon=5.0, sensitivity=1), DiscreteStaircase(epsilon=1.2, sensitivity=5, r=2),
                                  DiscreteStaircase(epsilon=0.5, sensitivity=3, r=3)], ids=repr)
def test_lattice_entropy_by_direct_summation(mech):
    k = np.arange(-4000, 4001)
    assert mech.entropy() == pytest.approx(direct_entropy(mech.pmf(k)), rel=1e-12)


def test_geometric_entropy_against_scipy():
    assert Geometric(epsilon=1.0).entropy() == pytest.approx(float(stats.dlaplace(1.0).entropy()), rel=1e-12)


def test_uniform_entropies():
    u = Uniform(delta=0.1, sensitivity=1)
    assert u.entropy() == pytest.approx(math.log(10))
    assert Uniform(delta=0.1, sensitivity=1, dim=3).entropy() == pytest.approx(3 * math.log(10))
    assert UniformContinuous(delta=0.2, sensitivity=1.0).entropy() == pytest.approx(math.log(5.0))


def test_staircase_entropy_by_quadrature():
    for gamma in (0.0, 0.3, 1.0):
        mech = Staircase(epsilon=1.0, sensitivity=1.5, gamma=gamma)
        edges = np.unique(np.concatenate([np.arange(0, 90, 1.5), np.arange(0, 90, 1.5) + 1.5 * gamma]))

        def f(x):
            d = mech.pdf(x)
            return -d * math.log(d) if d > 0 else 0.0

        h = 2 * math.fsum(integrate.quad(f, a, b)[0] for a, b in zip(edges[:-1], edges[1:]) if b > a)
        assert mech.entropy() == pytest.approx(h, rel=1e-10)


def test_l2_laplace_entropy_by_radial_quadrature():
    mech = L2Laplace(epsilon=1.0, dim=2)

    def f(r):  # −f ln f on the circle of radius r (length 2πr)
        d = float(mech.pdf([r, 0.0]))
        return -d * math.log(d) * 2 * math.pi * r if d > 0 else 0.0

    h = integrate.quad(f, 0, 80, limit=200)[0]
    assert mech.entropy() == pytest.approx(h, rel=1e-9)


def test_solver_entropies_by_direct_sums(solved):
    mech = solved["lattice"].mechanism
    assert mech.entropy() == pytest.approx(direct_entropy(mech.pmf(np.arange(-3000, 3001))), rel=1e-12)
    assert solved["finite"].mechanism.entropy() == pytest.approx(
        direct_entropy(solved["finite"].mechanism.pmf(np.arange(-200, 201))), rel=1e-13)
    lp = solved["lipschitz"].mechanism
    assert lp.entropy() == pytest.approx(direct_entropy(lp.pmf(np.arange(-3000, 3001))), rel=1e-12)
    cells = solved["cells"].mechanism  # piecewise constant: −Σ mass · ln density over the cells
    g = cells.law.grid
    k = np.arange(-4000, 4001)
    mass, dens = cells.law.mass(k), cells.law.density(k)
    ok = mass > 0
    assert cells.entropy() == pytest.approx(float(-np.sum(mass[ok] * np.log(dens[ok]))), rel=1e-12)
    assert g.kind == "cells"


def test_entropy_refuses_where_not_cheap():
    with pytest.raises(NotImplementedError, match="entropy"):
        StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.4, dim=2).entropy()
    # dim 1 of a d-D family: the 1-D law's entropy
    assert StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=0.4, dim=1).entropy() == pytest.approx(
        Staircase(epsilon=1.0, sensitivity=1.0, gamma=0.4).entropy())


# -- moments and median ----------------------------------------------------------------------------
def test_median(solved):
    assert Laplace(epsilon=1.0, sensitivity=1.0).median() == 0.0
    assert Geometric(epsilon=1.0).median() == 0.0
    for delta, sens in [(0.5, 1), (0.1, 1), (0.3, 2), (0.25, 1)]:
        u = Uniform(delta=delta, sensitivity=sens)
        assert u.median() == u.ppf(0.5)
        assert u.cdf(u.median()) >= 0.5 > u.cdf(u.median() - 1)
    mech = solved["lattice"].mechanism
    assert mech.median() == mech.ppf(0.5)
    assert np.array_equal(LaplaceND(epsilon=1.0, sensitivity=1.0, dim=2).median(), [0.0, 0.0])
    assert Laplace(epsilon=1.0, sensitivity=1.0).std() == pytest.approx(math.sqrt(2.0))


# -- randomise / __call__ ------------------------------------------------------------------------------
@pytest.mark.parametrize("mech", ALL, ids=repr)
def test_randomise_keeps_the_shape(mech):
    d = mech.dim
    lattice = mech.lattice
    scalar = np.int64(7) if lattice else 7.5
    if d == 1:
        out = mech.randomise(scalar, rng=0)
        assert np.ndim(out) == 0
        for shape in [(5,), (2, 3), (0,)]:
            v = np.full(shape, 3 if lattice else 3.25)
            assert mech.randomise(v, rng=1).shape == shape
    else:
        for shape in [(d,), (5, d), (2, 3, d)]:
            v = np.zeros(shape, dtype=np.int64 if lattice else float)
            assert mech.randomise(v, rng=1).shape == shape
        with pytest.raises(SpecError, match="last axis"):
            mech.randomise(np.zeros((4, d + 1)), rng=0)


@pytest.mark.parametrize("mech", ALL, ids=repr)
def test_call_is_randomise(mech):
    v = np.zeros((6,) if mech.dim == 1 else (6, mech.dim), dtype=np.int64 if mech.lattice else float) + 10
    assert np.array_equal(mech(v, rng=4), mech.randomise(v, rng=4))
    noise = mech.sample(v.shape[:1] if mech.dim > 1 else v.shape, rng=4)  # the same draws, added
    np.testing.assert_allclose(mech.randomise(v, rng=4) - v, noise, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mech", [Laplace(epsilon=0.8, sensitivity=2.0), Geometric(epsilon=0.6),
                                  DiscreteStaircase(epsilon=0.9, sensitivity=5, r=2), Uniform(delta=0.1, sensitivity=1)],
                         ids=repr)
def test_randomise_adds_noise_of_the_law(mech):
    n = 40_000
    true = np.full(n, 100) if mech.lattice else np.full(n, 100.0)
    noisy = mech(true, rng=2024)
    noise = (noisy - true).astype(float)
    # mean shift: the answers move by E X on average, within 5 standard errors
    assert abs(noise.mean() - mech.mean()) < 5 * math.sqrt(mech.var() / n)
    # distribution of the added noise (randomised PIT on lattices)
    if mech.lattice:
        u = mech.cdf(noise - 1) + np.random.default_rng(1).random(n) * mech.pmf(noise)
        assert stats.kstest(u, "uniform").pvalue > 1e-3
    else:
        assert stats.kstest(noise, mech.cdf).pvalue > 1e-3


def test_randomise_dtypes_and_refusals():
    g = Geometric(epsilon=1.0)
    out = g(np.array([1, 2, 3]), rng=0)
    assert out.dtype.kind == "i"
    assert g(np.array([1.0, 2.0]), rng=0).dtype.kind == "f"  # integral floats are accepted
    with pytest.raises(SpecError, match="lattice mechanism: values must be integers"):
        g(np.array([1.5]), rng=0)
    with pytest.raises(SpecError, match="numbers"):
        Laplace(epsilon=1.0, sensitivity=1.0)(np.array(["a"]))
    with pytest.raises(SpecError, match="finite"):
        Laplace(epsilon=1.0, sensitivity=1.0)(np.array([np.nan]))
    secure = Laplace(epsilon=1.0, sensitivity=1.0).randomise(np.zeros(3), rng="secure")
    assert secure.shape == (3,)
    assert Laplace(epsilon=1.0, sensitivity=1.0).randomize(1.0, rng=5) == Laplace(epsilon=1.0, sensitivity=1.0).randomise(1.0, rng=5)


def test_solver_mechanisms_randomise(solved):
    noisy = solved["lattice"].mechanism(np.array([[1, 2], [3, 4]]), rng=0)
    assert noisy.shape == (2, 2)
    v = np.zeros((7, 2), dtype=np.int64)
    assert solved["nd"].mechanism(v, rng=0).shape == (7, 2)
    assert solved["cells"].mechanism(np.linspace(0, 1, 5), rng=0).shape == (5,)


def test_l2_solver_mechanism_refuses_to_randomise_as_it_refuses_to_sample():
    r = optmech.solve(Problem(privacy=PureDP(1), cost="l2sq", dim=2, norm="l2", domain=IntegerLattice(), target_gap=1e-2))
    mech = r.mechanism
    with pytest.raises(SpecError) as sampled:
        mech.sample(3, rng=0)
    with pytest.raises(SpecError) as randomised:
        mech(np.zeros((3, 2), dtype=np.int64), rng=0)
    assert str(randomised.value) == str(sampled.value)
    assert "\n" not in str(randomised.value)


# -- display ---------------------------------------------------------------------------------------
def test_result_repr_is_one_line_with_the_bracket(solved):
    r = solved["lattice"]
    text = repr(r)
    assert "\n" not in text and text.startswith("<Result ") and text.endswith(">")
    assert "pure" in text and "ε=1" in text and "Δ=2" in text and "cost=abs" in text and "certified" in text
    lo, hi = text[text.index("[") + 1:text.index("]")].split(", ")
    assert float(lo) == pytest.approx(r.lower_bound, rel=1e-11) and float(hi) == pytest.approx(r.upper_bound, rel=1e-11)
    assert float(lo) <= float(hi)
    unc = dataclasses.replace(r, certified=False)
    assert "UNCERTIFIED" in repr(unc)


def test_result_repr_html_has_bracket_gap_status_and_escapes(solved):
    from optmech.result import bracket_text

    r = solved["cells"]
    html = r._repr_html_()
    assert bracket_text(r.lower_bound, r.upper_bound) in html
    assert repr(float(r.lower_bound)) in html and repr(float(r.upper_bound)) in html
    assert "relative gap" in html and str(r.status) in html and "certified" in html
    assert "<table>" in html and "epsilon" in html
    evil = dataclasses.replace(r, problem={**r.problem, "cost": "<script>alert(1)</script>"}, message="a < b & c")
    out = evil._repr_html_()
    assert "<script>" not in out and "&lt;script&gt;" in out and "a &lt; b &amp; c" in out
    multi = dataclasses.replace(r, problem={**r.problem, "cost": "min(abs(x),\n 3)"})
    assert "\n" not in repr(multi) and "cost=min(abs(x), 3)" in repr(multi)  # one line whatever the cost text


@pytest.mark.parametrize("mech", ALL, ids=repr)
def test_mechanism_repr_and_html(mech):
    text = repr(mech)
    assert "\n" not in text and text.startswith(type(mech).__name__ + "(")
    assert eval(text, {type(mech).__name__: type(mech)}) == mech  # constructor style
    html = mech._repr_html_()
    assert type(mech).__name__ in html and "privacy guarantee" in html and "parameters" in html
    priv = mech.privacy()
    assert ("pure ε-DP" if priv.notion == "pure" else "(ε, δ)-DP") in html


def test_solver_mechanism_html_and_repr(solved):
    for key in ("lattice", "cells", "finite", "lipschitz", "nd"):
        mech = solved[key].mechanism
        assert "\n" not in repr(mech)
        html = mech._repr_html_()
        assert "privacy guarantee" in html and "<script" not in html
    assert "ε-Lipschitz privacy" in solved["lipschitz"].mechanism._repr_html_()


def test_mechanism_html_escapes_its_text():
    class Odd(Laplace):
        def __repr__(self):
            return "Odd(<b>)"

    html = Odd(epsilon=1.0, sensitivity=1.0)._repr_html_()
    assert "<b>" not in html and "Odd(&lt;b&gt;)" in html


# -- the facade ------------------------------------------------------------------------------------------
def test_dir_lists_the_public_api():
    names = dir(optmech)
    for n in ("solve", "Problem", "Result", "Laplace", "read_store", "build_table"):
        assert n in names
    assert set(optmech.__all__) <= set(names)
    assert names == sorted(names)


def test_every_name_in_all_resolves():
    for n in optmech.__all__:
        assert getattr(optmech, n) is not None, n
    assert optmech.Laplace is Laplace and optmech.Result.__name__ == "Result"
    from optmech.store import read
    from optmech.table import build_table

    assert optmech.read_store is read
    assert optmech.build_table is build_table
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        optmech.nonsense  # noqa: B018


def test_submodules_are_attributes_after_a_plain_import():
    """The README's ``optmech.store.read(path)`` after nothing but ``import optmech``."""
    code = ("import optmech; print(optmech.store.read.__module__, optmech.plots.plot_result.__name__, "
            "optmech.table.build_table.__name__, 'store' in dir(optmech))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["optmech.store", "plot_result", "build_table", "True"]


def test_import_optmech_stays_lazy():
    code = "import sys, optmech; print(sorted(m for m in ('numpy', 'scipy', 'highspy', 'optmech.mechanisms') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
