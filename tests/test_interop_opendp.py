"""optmech.interop.opendp against the real OpenDP (no mocks): measurements built from optmech's
mechanisms, invoked, chained after OpenDP transformations, composed with OpenDP's own
measurements, and their privacy maps checked against independently computed guarantees."""

from __future__ import annotations

import itertools
import math
import sys
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

dp = pytest.importorskip("opendp.prelude")

from optmech.drive import solve  # noqa: E402
from optmech.errors import SpecError  # noqa: E402
from optmech.interop.opendp import make_measurement  # noqa: E402
from optmech.mechanisms import (DiscreteLaplace, DiscreteLaplaceND, DiscreteStaircase, Geometric,  # noqa: E402
                                L2Laplace, Laplace, LaplaceND, LatticeRelease, Staircase)
from optmech.mechanisms.solved import LatticePMFND  # noqa: E402
from optmech.spec import ApproxDP, IntegerLattice, Lipschitz, Problem, PureDP  # noqa: E402

# e bracketed by rationals (|math.e - e| < 2.2e-16): sums in Fraction give rigorous brackets of δ
E_LO, E_HI = Fraction(math.e) - Fraction(1, 10**15), Fraction(math.e) + Fraction(1, 10**15)


def brute_delta(p: dict, shifts, e: Fraction) -> Fraction:
    """max_s Σ_x [p(x) − e·p(x+s)]_+ over the support of p (a dict point -> Fraction), exactly."""
    best = Fraction(0)
    for s in shifts:
        total = Fraction(0)
        for x, px in p.items():
            y = tuple(a + b for a, b in zip(x, s)) if isinstance(x, tuple) else x + s
            total += max(px - e * p.get(y, Fraction(0)), Fraction(0))
        best = max(best, total)
    return best


@pytest.fixture(scope="module")
def approx_pmf():
    return solve(Problem(privacy=ApproxDP(1, 1e-3), sensitivity=4, cost="abs", domain=IntegerLattice())).mechanism


@pytest.fixture(scope="module")
def approx_pmf_delta(approx_pmf):
    """(δ_lo, δ_hi): the exact δ at ε = 1 of the law the exact sampler draws, bracketed."""
    law = approx_pmf.law
    assert law.beta == 0  # finite support: the pmf is the window
    w = {k: Fraction(float(x)) for k, x in zip(range(law.k_lo, law.k_hi + 1), law.weights)}
    total = sum(w.values())
    p = {k: v / total for k, v in w.items() if v > 0}
    shifts = [s for s in range(-4, 5) if s]
    return brute_delta(p, shifts, E_HI), brute_delta(p, shifts, E_LO)


# (1) a solved (ε, δ) pmf on ℤ -----------------------------------------------------------------------
def test_solved_approx_pmf_measurement(approx_pmf, approx_pmf_delta):
    meas = make_measurement(approx_pmf, rng=20240601)
    assert meas.input_domain == dp.atom_domain(T="i64")
    assert meas.input_metric == dp.absolute_distance(T="i64")
    assert meas.output_measure == dp.approximate(dp.max_divergence())
    out = meas(10)
    assert isinstance(out, int)

    eps, delta = meas.map(4)
    lo, hi = approx_pmf_delta
    assert eps == 1.0
    assert delta >= lo  # a valid upper bound of the exact δ ...
    assert delta <= float(hi) * (1 + 1e-9)  # ... and tight
    assert delta <= 1e-3 * (1 + 1e-9)  # the solver's target
    assert meas.map(1) == meas.map(4) == (eps, delta)
    assert meas.check(4, (1.0, 1e-3 * (1 + 1e-9)))
    # beyond Δ: the exact audit at shifts 1..5, against the brute-force sum in fractions
    law = approx_pmf.law
    w = {k: Fraction(float(x)) for k, x in zip(range(law.k_lo, law.k_hi + 1), law.weights)}
    total = sum(w.values())
    p = {k: v / total for k, v in w.items() if v > 0}
    eps5, delta5 = meas.map(5)
    shifts5 = [s for s in range(-5, 6) if s]
    assert eps5 == 1.0 and delta5 > delta
    assert float(brute_delta(p, shifts5, E_HI)) <= delta5 <= float(brute_delta(p, shifts5, E_LO)) * (1 + 1e-9)
    from optmech.interop.opendp import MAX_AUDIT_SHIFT

    with pytest.raises(dp.OpenDPException, match="refused"):
        meas.map(MAX_AUDIT_SHIFT + 1)  # beyond the audit's reach, and no (ε, δ) group privacy


def test_solved_approx_pmf_draws_follow_the_pmf(approx_pmf):
    meas = make_measurement(approx_pmf, rng=7)
    n = 3000
    draws = np.array([meas(0) for _ in range(n)])
    ks = np.arange(approx_pmf.law.k_lo, approx_pmf.law.k_hi + 1)
    p = np.asarray(approx_pmf.pmf(ks), dtype=float)
    p = p / p.sum()
    # bins: the central points with expected count >= 20, the rest merged into two tail bins
    big = ks[p * n >= 20]
    lo, hi = int(big.min()), int(big.max())
    obs = [np.sum(draws < lo)] + [np.sum(draws == k) for k in range(lo, hi + 1)] + [np.sum(draws > hi)]
    exp = [p[ks < lo].sum()] + [p[ks == k].sum() for k in range(lo, hi + 1)] + [p[ks > hi].sum()]
    obs, exp = np.array(obs, dtype=float), n * np.array(exp)
    keep = exp > 0
    assert obs[~keep].sum() == 0
    assert stats.chisquare(obs[keep], exp[keep]).pvalue > 1e-4


# (2) chained after clamp and sum --------------------------------------------------------------------
def test_chain_after_clamp_and_sum(approx_pmf):
    space = dp.vector_domain(dp.atom_domain(T="i64")), dp.symmetric_distance()
    summed = space >> dp.t.then_clamp((0, 4)) >> dp.t.then_sum()
    assert summed.map(1) == 4  # OpenDP's sensitivity of the clamped sum: the pmf's Δ
    meas = make_measurement(approx_pmf, rng=3)
    chain = summed >> meas
    out = chain([1, 2, 3, 7, 0])
    assert isinstance(out, int)
    assert chain.map(1) == meas.map(4)
    assert chain.check(1, meas.map(4))
    eps8, delta8 = chain.map(2)  # the sum moves by 8 > Δ = 4: the exact audit at shifts 1..8
    assert eps8 == 1.0 and delta8 >= meas.map(5)[1] and delta8 == meas.map(8)[1]

    # pure DP: two records move the sum by 8 = 2Δ; discrete Laplace's exact ratio gives 2ε
    pure = summed >> make_measurement(DiscreteLaplace(epsilon=0.5, sensitivity=4), rng=3)
    assert pure.map(1) == 0.5
    assert pure.map(2) == 1.0
    assert isinstance(pure([4, 4, 4]), int)


# (3) composed with OpenDP's own measurements ---------------------------------------------------------
def test_composition_with_builtin_geometric():
    space = dp.atom_domain(T="i64"), dp.absolute_distance(T="i64")
    ours = make_measurement(Geometric(epsilon=0.5), rng=11)
    theirs = dp.m.make_geometric(*space, scale=2.0)  # ε = d_in/scale
    comp = dp.c.make_composition([ours, theirs])
    out = comp(5)
    assert len(out) == 2 and all(isinstance(v, int) for v in out)
    assert comp.map(1) == pytest.approx(0.5 + 1 / 2.0, rel=1e-12)
    assert comp.map(1) >= 0.5 + 1 / 2.0
    assert comp.map(1) == ours.map(1) + theirs.map(1)


def test_composition_approx_with_builtin_laplace(approx_pmf):
    space = dp.atom_domain(T="i64"), dp.absolute_distance(T="i64")
    ours = make_measurement(approx_pmf, rng=11)
    theirs = dp.c.make_approximate(dp.m.make_laplace(*space, scale=4.0))
    comp = dp.c.make_composition([ours, theirs])
    eps, delta = comp.map(4)
    e1, d1 = ours.map(4)
    assert eps == pytest.approx(e1 + 4 / 4.0, rel=1e-12)
    assert delta == pytest.approx(d1, rel=1e-12)


# (4) pure DP on floats -------------------------------------------------------------------------------
def test_laplace_on_floats():
    mech = Laplace(epsilon=1, sensitivity=2)
    meas = make_measurement(mech, rng=5)
    assert meas.input_domain == dp.atom_domain(T="f64", nan=False)
    assert meas.input_metric == dp.absolute_distance(T="f64")
    assert meas.output_measure == dp.max_divergence()
    assert meas.map(2.0) == 1.0 and meas.map(0.5) == 1.0
    assert meas.map(5.0) == 3.0  # group privacy: ε·⌈5/2⌉
    h = 2.0 / 256  # default release: step Δ/2^8
    out = meas(3.3)
    assert isinstance(out, float) and out / h == round(out / h)
    # the noise is the Laplace(Δ/ε) law on the grid: Kolmogorov–Smirnov distance within the DKW bound
    x0 = 3.3
    j = math.floor(x0 / h)
    noise = np.array([meas(x0) for _ in range(2000)]) - j * h
    d = stats.kstest(noise, stats.laplace(scale=2.0).cdf).statistic
    assert d < 1.63 / math.sqrt(2000) + h  # 99% DKW band plus one grid cell


def test_staircase_on_floats_and_float_sum_chain():
    mech = Staircase.optimal("abs", epsilon=1, sensitivity=2.5)
    meas = make_measurement(mech, bits=6, rng=9)
    assert meas.map(2.5) == 1.0
    assert meas.map(2.6) == 2.0
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    summed = space >> dp.t.then_clamp((0.0, 2.0)) >> dp.t.then_sum()
    d_out = summed.map(1)
    assert 2.0 <= d_out <= 2.5  # OpenDP pads the float sum's sensitivity for rounding
    chain = summed >> meas
    assert chain.map(1) == 1.0
    assert isinstance(chain([0.5, 1.5, 9.0]), float)


def test_lattice_release_given_directly():
    rel = LatticeRelease(Laplace(epsilon=1, sensitivity=1), bits=4)
    meas = make_measurement(rel, rng=1)
    out = meas(0.3)
    assert out * 16 == round(out * 16)
    assert meas.map(1.0) == 1.0


# (5) d-dimensional mechanisms on vectors -------------------------------------------------------------
def test_laplace_nd_on_float_vectors():
    meas = make_measurement(LaplaceND(epsilon=1, sensitivity=1, dim=2), rng=4)
    assert meas.input_domain == dp.vector_domain(dp.atom_domain(T="f64", nan=False), size=2)
    assert meas.input_metric == dp.l1_distance(T="f64")
    out = meas([1.5, -2.0])
    assert len(out) == 2 and all(isinstance(v, float) for v in out)
    assert meas.map(1.0) == 1.0
    assert meas.map(2.5) == 3.0  # group privacy on R^2, l1


def test_discrete_laplace_nd_on_integer_vectors():
    meas = make_measurement(DiscreteLaplaceND(epsilon=1, sensitivity=2, dim=2), T="i32", rng=4)
    assert meas.input_domain == dp.vector_domain(dp.atom_domain(T="i32"), size=2)
    assert meas.input_metric == dp.l1_distance(T="i32")
    out = meas([3, -4])
    assert len(out) == 2 and all(isinstance(v, int) for v in out)
    assert meas.map(2) == 1.0
    assert meas.map(3) == 1.5  # λ^{-||s||_1}: ε·3/2 exactly


def test_l2_lattice_pmf_on_integer_vectors():
    pts = np.array(list(itertools.product(range(-3, 4), repeat=2)))
    weights = np.exp(-np.sqrt((pts**2).sum(axis=1)))
    mech = LatticePMFND({"kind": "lattice_pmf_nd", "dim": 2, "norm": "l2", "symmetry": "none",
                         "representatives": pts.tolist(), "mass": weights.tolist(), "tail_factor": 0.0,
                         "sensitivity": 1, "epsilon": 1.0, "delta": 0.1})
    meas = make_measurement(mech, rng=2)
    assert meas.input_metric == dp.l2_distance(T="i64")
    out = meas([10, 20])
    assert len(out) == 2 and all(isinstance(v, int) for v in out)
    eps, delta = meas.map(1)
    w = {tuple(x): Fraction(float(v)) for x, v in zip(pts.tolist(), weights)}
    total = sum(w.values())
    p = {x: v / total for x, v in w.items()}
    shifts = [(1, 0), (-1, 0), (0, 1), (0, -1)]  # the integer shifts with ||s||_2 <= 1
    assert eps == 1.0
    assert float(brute_delta(p, shifts, E_HI)) <= delta <= float(brute_delta(p, shifts, E_LO)) * (1 + 1e-9)
    with pytest.raises(dp.OpenDPException, match="refused"):
        meas.map(2)


# beyond the sensitivity: exact audits and group privacy ----------------------------------------------
def test_pure_lattice_pmf_beyond_sensitivity():
    mech = solve(Problem(privacy=PureDP(1), sensitivity=3, cost="abs", domain=IntegerLattice())).mechanism
    meas = make_measurement(mech, rng=1)
    eps = meas.map(3)
    assert eps == pytest.approx(1.0, abs=1e-9)
    # independent: the largest log ratio of the sampler's masses over the shifts 1..d (window plus
    # two tail periods each side, where the tails repeat), in exact rationals
    law = mech.law
    W, beta = law.grid.W, Fraction(float(law.beta))

    def weight(k):
        if law.k_lo <= k <= law.k_hi:
            return Fraction(float(law.weights[k - law.k_lo]))
        if k > law.k_hi:
            m, r = divmod(k - (law.k_hi - W + 1), W)
            return Fraction(float(law.right_gen[r])) * beta**m
        m, r = divmod((law.k_lo + W - 1) - k, W)
        return Fraction(float(law.left_gen[W - 1 - r])) * beta**m

    ks = range(law.k_lo - 3 * W - 8, law.k_hi + 3 * W + 9)
    for d in (4, 6, 7):
        ratio = max(weight(k) / weight(k + s) for k in ks for s in range(-d, d + 1) if s)
        assert meas.map(d) >= math.log(ratio) - 1e-15
        assert meas.map(d) <= math.log(ratio) + 1e-9
        assert meas.map(d) <= eps * math.ceil(d / 3) * (1 + 1e-15)


def test_group_privacy_for_discrete_staircase():
    meas = make_measurement(DiscreteStaircase(epsilon=0.7, sensitivity=4, r=2))
    assert meas.map(4) == 0.7
    assert meas.map(5) >= 1.4 and meas.map(5) == pytest.approx(1.4, rel=1e-15)
    assert meas.map(12) == pytest.approx(2.1, rel=1e-15) and meas.map(12) >= float(Fraction(0.7) * 3)


# (6) refusals ------------------------------------------------------------------------------------------
def test_refusals():
    with pytest.raises(SpecError, match="no exact sampler nor lattice release"):
        make_measurement(L2Laplace(epsilon=1, dim=2))
    with pytest.raises(SpecError, match="T must be 'f64'"):
        make_measurement(Laplace(epsilon=1, sensitivity=1), T="i64")
    with pytest.raises(SpecError, match="T must be one of i32, i64"):
        make_measurement(Geometric(epsilon=1), T="f64")
    with pytest.raises(SpecError, match="bits is for continuous laws"):
        make_measurement(Geometric(epsilon=1), bits=4)
    with pytest.raises(SpecError, match="lattice bits"):
        make_measurement(Laplace(epsilon=1, sensitivity=1), bits=40)
    with pytest.raises(SpecError, match="needs an optmech Mechanism"):
        make_measurement("laplace")
    meas = make_measurement(Geometric(epsilon=1))
    with pytest.raises(dp.OpenDPException, match="d_in must be >= 0"):
        meas.map(-1)
    with pytest.raises(dp.OpenDPException, match="finite number"):
        make_measurement(Laplace(epsilon=1, sensitivity=1))(math.inf)


def test_lipschitz_mechanism_is_refused():
    mech = solve(Problem(privacy=Lipschitz(1), cost="abs", domain=IntegerLattice())).mechanism
    assert mech.privacy().notion == "lipschitz"
    with pytest.raises(SpecError, match="Lipschitz private"):
        make_measurement(mech)


def test_missing_opendp_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)  # `import opendp.prelude` now raises ImportError
    with pytest.raises(SpecError, match=r"needs OpenDP .*pip install opendp"):
        make_measurement(Geometric(epsilon=1))


def test_outputs_saturate_at_the_type_range():
    meas = make_measurement(Geometric(epsilon=1e-3), T="i32", rng=1)
    outs = [meas(2**31 - 1) for _ in range(20)]
    assert max(outs) == 2**31 - 1 and min(outs) < 2**31 - 1
    assert make_measurement(Laplace(epsilon=1, sensitivity=1), rng=1)(1.7e308) <= np.finfo(float).max
