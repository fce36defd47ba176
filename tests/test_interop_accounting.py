"""optmech.interop.accounting against the real dp_accounting and independent computations.

Every reference value here is derived independently of the module: closed forms (Laplace,
[BW18] Gaussian via optmech.mechanisms.gaussian.gaussian_delta in mpmath), exact sums in mpmath /
numpy over the pmf pair, brute-force k-fold products of the pmf pair, a fine uniform sub-grid of
the staircase, the project's exact audit (optmech.audit.delta_curve), and dp_accounting's own
constructors and calibration.  The PLDs are pessimistic: δ_PLD(ε) >= the exact δ(ε), and at one
composition within the discretisation error, δ_PLD(ε) <= δ(ε − h) (+ float slack), h = 1e-4.
"""

from __future__ import annotations

import math
import sys

import mpmath
import numpy as np
import pytest

pytest.importorskip("dp_accounting")

from dp_accounting import dp_event, mechanism_calibration  # noqa: E402
from dp_accounting.pld import pld_privacy_accountant  # noqa: E402
from dp_accounting.pld import privacy_loss_distribution as pld  # noqa: E402

import optmech  # noqa: E402
from optmech import ApproxDP, IntegerLattice, Problem  # noqa: E402
from optmech.audit import delta_curve, finite_pmf  # noqa: E402
from optmech.errors import SpecError  # noqa: E402
from optmech.interop import accounting as acc  # noqa: E402
from optmech.mechanisms import DiscreteLaplace, Laplace, Staircase  # noqa: E402
from optmech.mechanisms.gaussian import Gaussian, gaussian_delta  # noqa: E402
from optmech.mechanisms.tabulated import LatticePMF  # noqa: E402

H = 1e-4
SLACK = 1e-12


def exact_pair_delta(p: np.ndarray, s: int, eps: float, k: int = 1) -> float:
    """Σ_o [P^k(o) − e^ε Q^k(o)]_+ for P = p on 0..n−1 and Q(j) = p(j + s), by brute force over
    all k-tuples of outcomes on the padded support (numpy outer products)."""
    n = p.size
    pad = abs(s)
    P = np.concatenate([np.zeros(pad), p, np.zeros(pad)])
    Q = np.roll(P, -s)  # Q(j) = P(j + s) (the padding keeps it from wrapping mass around)
    Pk, Qk = P, Q
    for _ in range(k - 1):
        Pk = np.multiply.outer(Pk, P).ravel()
        Qk = np.multiply.outer(Qk, Q).ravel()
    assert n > 0
    return float(np.maximum(Pk - math.exp(eps) * Qk, 0.0).sum())


@pytest.fixture(scope="module")
def solved():
    r = optmech.drive.solve(Problem(privacy=ApproxDP(1, 1e-3), sensitivity=4, cost="abs", domain=IntegerLattice()))
    return r.mechanism


def test_discrete_laplace_matches_dp_accounting():
    eps0, D = 1.0, 2
    mech = DiscreteLaplace(epsilon=eps0, sensitivity=D)
    mine = mech.privacy_loss_distribution()
    theirs = pld.from_discrete_laplace_mechanism(parameter=eps0 / D, sensitivity=D)  # pmf ∝ e^{-a|k|}, a = ε/Δ
    a = mpmath.mpf(eps0) / D

    def exact(e):  # Σ_k [p(k) − e^ε p(k+Δ)]_+ in mpmath, |k| <= 400 (the rest is < e^-190)
        z = (1 - mpmath.exp(-a)) / (1 + mpmath.exp(-a))
        return float(mpmath.fsum(max(mpmath.mpf(0), z * (mpmath.exp(-a * abs(j)) - mpmath.exp(e) * mpmath.exp(-a * abs(j + D))))
                                 for j in range(-400, 401)))

    for e in (0.0, 0.3, 0.55, 0.9, 0.99):
        d_mine, d_theirs = float(mine.get_delta_for_epsilon(e)), float(theirs.get_delta_for_epsilon(e))
        lo, hi = exact(e), exact(e - H)
        assert lo - SLACK <= d_mine <= hi + SLACK
        assert lo - SLACK <= d_theirs <= hi + SLACK
        assert abs(d_mine - d_theirs) <= (hi - lo) + SLACK
    assert float(mine.get_delta_for_epsilon(eps0)) < 1e-12  # pure ε-DP


def test_solved_pmf_single_composition_brackets_the_audit(solved):
    assert solved.sensitivity == 4 and not solved.symmetric
    P = acc.privacy_loss_distribution(solved)
    eps = [0.0, 0.4, 0.8, 1.0, 1.3]
    audit = delta_curve(solved.law, 4, eps)
    audit_lower = delta_curve(solved.law, 4, [max(0.0, e - H) for e in eps])
    got = P.get_delta_for_epsilon(eps)
    assert np.all(got >= audit - SLACK)
    assert np.all(got <= audit_lower + SLACK)
    assert float(P.get_delta_for_epsilon(solved.privacy().epsilon)) >= solved.privacy().delta - SLACK


def test_solved_pmf_two_fold_not_optimistic(solved):
    P = acc.privacy_loss_distribution(solved)
    lo = int(solved.law.k_lo)
    p = np.asarray(solved.pmf(np.arange(lo, int(solved.law.k_hi) + 1)), dtype=float)
    assert solved.law.beta == 0  # finite support: the window is the whole law
    two = P.self_compose(2)
    for e in (1.0, 1.5, 2.0):
        worst = max(exact_pair_delta(p, s, e, 2) for s in (-4, -3, -2, -1, 1, 2, 3, 4))
        assert float(two.get_delta_for_epsilon(e)) >= worst - SLACK


def test_all_shifts_dominated_when_delta_shift_is_not_the_worst():
    # a non-monotone, asymmetric pmf: shift 1 pairs 0.3 with 0.02, shift 2 pairs like with like
    p = np.array([0.02, 0.3, 0.02, 0.3, 0.03, 0.33])
    mech = LatticePMF(finite_pmf(np.arange(6), p))
    one = {s: exact_pair_delta(p, s, 0.5) for s in (-2, -1, 1, 2)}
    assert one[1] > one[2] and one[-1] > one[-2]  # s = Δ = 2 does not dominate
    P = acc.privacy_loss_distribution(mech, 2)
    for k in (1, 2, 5):
        Pk = P if k == 1 else P.self_compose(k)
        for e in (0.0, 0.5, 1.0, 2.5):
            worst = max(exact_pair_delta(p, s, e, k) for s in (-2, -1, 1, 2))
            assert float(Pk.get_delta_for_epsilon(e)) >= worst - SLACK
            if k == 1:
                assert float(Pk.get_delta_for_epsilon(e)) <= max(
                    exact_pair_delta(p, s, e - H) for s in (-2, -1, 1, 2)) + SLACK


def test_single_shift_pair_matches_from_two_probability_mass_functions():
    p = np.array([0.02, 0.3, 0.02, 0.3, 0.03, 0.33])
    mech = LatticePMF(finite_pmf(np.arange(6), p))
    mine = acc.privacy_loss_distribution(mech, 2, shift=1)
    P = {j: math.log(v) for j, v in enumerate(p)}
    Q = {j - 1: math.log(v) for j, v in enumerate(p)}  # Q(j) = p(j + 1)
    theirs = pld.from_two_probability_mass_functions(Q, P, pessimistic_estimate=True, symmetric=False)
    for e in (0.0, 0.37, 1.21, 2.5):
        d, t = float(mine.get_delta_for_epsilon(e)), float(theirs.get_delta_for_epsilon(e))
        assert t - SLACK <= d <= t + 1e-9
        assert d >= max(exact_pair_delta(p, 1, e), exact_pair_delta(p, -1, e)) - SLACK


def test_laplace_and_gaussian_closed_forms():
    mech = Laplace(epsilon=1.0, sensitivity=2.0)
    P = mech.privacy_loss_distribution()
    for e in (0.0, 0.25, 0.7, 0.95):
        exact = 1.0 - math.exp((e - 1.0) / 2.0)  # Laplace pair at Δ: δ(ε) = 1 − e^{(ε − Δ/b)/2}
        exact_lo = 1.0 - math.exp((e - H - 1.0) / 2.0)
        assert exact - SLACK <= float(P.get_delta_for_epsilon(e)) <= exact_lo + SLACK
    assert float(P.get_delta_for_epsilon(1.0)) < 1e-12
    g = Gaussian(sigma=2.0, sensitivity=1.5)
    G = g.privacy_loss_distribution()
    for e in (0.0, 0.5, 1.0, 2.0):
        lo, hi = gaussian_delta(2.0, e, 1.5), gaussian_delta(2.0, max(0.0, e - H), 1.5)
        assert lo - SLACK <= float(G.get_delta_for_epsilon(e)) <= hi + 1e-10


def test_staircase_cells_against_a_fine_subgrid():
    D, eps0, gamma = 1.0, 1.0, 0.3
    mech = Staircase(epsilon=eps0, sensitivity=D, gamma=gamma)
    P = mech.privacy_loss_distribution()
    m = 1000  # sub-cells per Δ: γΔ and (1 − γ)Δ are on this grid
    x = (np.arange(-45 * m, 45 * m) + 0.5) * D / m
    w = np.asarray(mech.pdf(x)) * D / m

    def exact(e):
        return float(np.maximum(w[m:] - math.exp(e) * w[:-m], 0.0).sum() + w[:m].sum())

    for e in (0.0, 0.3, 0.7, 0.95):
        assert exact(e) - 1e-9 <= float(P.get_delta_for_epsilon(e)) <= exact(e - H) + 1e-9
    assert float(P.get_delta_for_epsilon(eps0)) < 1e-12  # ε-DP at Δ


def test_composed_delta_and_calibration_match_dp_accounting():
    k, eps, delta = 10, 2.0, 1e-5

    def make(b: float) -> Laplace:
        return Laplace(epsilon=1.0 / b, sensitivity=1.0)  # scale = Δ/ε = b

    scale, mech, achieved = acc.calibrate_for_compositions(make, 0.5, 50.0, k, eps, delta, rel_tol=1e-3)
    assert achieved <= delta and isinstance(mech, Laplace)
    assert acc.composed_delta(mech, None, k, eps) == achieved
    theirs = mechanism_calibration.calibrate_dp_mechanism(
        pld_privacy_accountant.PLDAccountant,
        lambda b: dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(b), k),
        eps, delta, mechanism_calibration.ExplicitBracketInterval(0.5, 50.0))
    assert abs(scale - theirs) <= 0.02 * theirs
    assert acc.composed_delta(make(scale / 1.01), None, k, eps) > delta  # the scale is near-minimal


def test_bad_inputs_and_missing_dp_accounting(monkeypatch):
    mech = DiscreteLaplace(epsilon=1, sensitivity=1)
    with pytest.raises(SpecError, match="shift"):
        acc.privacy_loss_distribution(mech, shift=0)
    with pytest.raises(SpecError, match="integer multiple"):
        acc.privacy_loss_distribution(Staircase(epsilon=1, sensitivity=1, gamma=0.3), 1.5)
    with pytest.raises(SpecError, match="compositions"):
        acc.composed_delta(mech, None, 0, 1.0)
    with pytest.raises(SpecError, match="raise hi"):
        acc.calibrate_for_compositions(lambda b: Laplace(epsilon=1 / b, sensitivity=1), 0.1, 0.2, 10, 0.5, 1e-9)
    monkeypatch.setitem(sys.modules, "dp_accounting.pld", None)
    with pytest.raises(SpecError, match=r"pip install optmech\[interop\]"):
        mech.privacy_loss_distribution()
