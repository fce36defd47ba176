"""Certificates: the pure-DP audit (float and exact) and the dual lower bound.

Ground truth is computed here independently: worst ratios with ``fractions.Fraction`` and their
logarithms with mpmath at 60 digits; LP optima by hand or by an independent scipy solve.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from optmech.certify import audit_pure, dual_lower_bound
from optmech.lp import LinearProgram

mpmath.mp.dps = 60
MODES = [False, True]


def true_log_ratio(w: np.ndarray, W: int):
    """max over 0 < |i−j| <= W of log(w_i/w_j), exactly (mpmath, 60 digits); inf if a zero is next
    to a positive weight."""
    fr = [Fraction(float(v)) for v in w]
    worst = Fraction(0)
    for i in range(len(fr)):
        for j in range(max(0, i - W), min(len(fr), i + W + 1)):
            if i == j:
                continue
            if fr[j] == 0:
                if fr[i] > 0:
                    return mpmath.inf
                continue
            worst = max(worst, fr[i] / fr[j])
    if worst == 0:
        return mpmath.mpf(0)
    return mpmath.log(mpmath.mpf(worst.numerator)) - mpmath.log(mpmath.mpf(worst.denominator))


def exp_neg_exact(eps: float):
    return mpmath.exp(-mpmath.mpf(eps))


# ------------------------------------------------------------------------------------------------
# audits reject broken pmfs
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("exact", MODES)
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_bumped_geometric_is_rejected(exact, eps):
    k = np.arange(-20, 21)
    lam = math.exp(-eps)
    p = lam ** np.abs(k).astype(float)
    p[k == 5] *= 1.01  # now p(5)/p(6) = 1.01·e^ε
    p /= p.sum()
    a = audit_pure(int(k[0]), p, 1, eps, exact=exact)
    assert not a.passed
    truth = float(true_log_ratio(p, 1))
    assert truth > eps
    assert a.realised_epsilon >= truth - 1e-15
    assert a.realised_epsilon <= truth + 1e-9
    assert math.isclose(a.realised_epsilon, eps + math.log(1.01), rel_tol=1e-9)
    assert a.worst_index is not None and abs(a.worst_index - 5) <= 1
    assert a.target_epsilon == eps


@pytest.mark.parametrize("exact", MODES)
@pytest.mark.parametrize("delta", [2, 3, 5])
def test_bumped_discrete_laplace_is_rejected(exact, delta):
    eps = 1.0
    k = np.arange(-15 * delta, 15 * delta + 1)
    p = math.exp(-eps / delta) ** np.abs(k).astype(float)
    p[k == 0] *= 1.001  # p(0)/p(±Δ) = 1.001·e^ε
    a = audit_pure(int(k[0]), p / p.sum(), delta, eps, exact=exact)
    assert not a.passed
    assert a.realised_epsilon >= eps + math.log(1.001) - 1e-12
    assert a.worst_index is not None and abs(a.worst_index) <= delta


@pytest.mark.parametrize("exact", MODES)
@pytest.mark.parametrize("where", [10, 20, 39])
def test_zero_mass_gives_infinite_epsilon(exact, where):
    k = np.arange(-20, 21)
    p = math.exp(-1.0) ** np.abs(k).astype(float)
    p[where] = 0.0
    p /= p.sum()
    for W in (1, 3):
        a = audit_pure(int(k[0]), p, W, 1.0, exact=exact)
        assert not a.passed
        assert a.realised_epsilon == math.inf


@pytest.mark.parametrize("exact", MODES)
@pytest.mark.parametrize("bad", [-1e-300, math.nan, math.inf])
def test_negative_or_nonfinite_weight_is_rejected(exact, bad):
    p = np.full(11, 1.0 / 11)
    p[4] = bad
    a = audit_pure(0, p, 2, 1.0, exact=exact)
    assert not a.passed


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_one_ulp_over_the_boundary_is_rejected(eps):
    """Two weights whose exact ratio exceeds e^ε by about one ulp: both audits must reject."""
    target = exp_neg_exact(eps)
    x = math.exp(-eps)
    while mpmath.mpf(x) >= target:
        x = math.nextafter(x, 0.0)
    w = np.array([1.0, x])
    assert true_log_ratio(w, 1) > mpmath.mpf(eps)
    for exact in MODES:
        a = audit_pure(0, w, 1, eps, exact=exact)
        assert not a.passed, f"exact={exact}: ratio just above e^eps accepted: {a}"
        assert a.realised_epsilon > eps


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_exact_audit_accepts_ratio_just_inside(eps):
    target = exp_neg_exact(eps)
    x = math.exp(-eps)
    while mpmath.mpf(x) < target:
        x = math.nextafter(x, 1.0)
    w = np.array([1.0, x, 1.0])
    assert true_log_ratio(w, 1) <= mpmath.mpf(eps)
    a = audit_pure(0, w, 1, eps, exact=True)
    assert a.passed, a


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_exact_audit_passed_agrees_with_realised_epsilon(eps):
    """A passing audit must not report a realised ε above the target (and vice versa)."""
    target = exp_neg_exact(eps)
    x = math.exp(-eps)
    while mpmath.mpf(x) < target:
        x = math.nextafter(x, 1.0)
    for w in (np.array([1.0, x, 1.0]), np.array([1.0, math.nextafter(x, 0.0)])):
        for exact in MODES:
            a = audit_pure(0, w, 1, eps, exact=exact)
            assert a.passed == (a.realised_epsilon <= a.target_epsilon), a


def find_float_tie(eps: float, seed: int = 0):
    """Two weight pairs (u, v) whose float ratios u/v are the same float, one with exact ratio
    <= e^ε and one with exact ratio > e^ε (searched, not hard-coded)."""
    E = mpmath.exp(mpmath.mpf(eps))
    rng = np.random.default_rng(seed)
    inside: dict = {}
    outside: dict = {}
    for _ in range(100000):
        u = float(rng.uniform(1.0, 2.0))
        v0 = u * math.exp(-eps)
        for v in (v0, math.nextafter(v0, 0.0), math.nextafter(v0, 2.0)):
            ex = Fraction(u) / Fraction(v)
            ok = mpmath.mpf(ex.numerator) / ex.denominator <= E
            f = u / v
            (inside if ok else outside).setdefault(f, (u, v))
            if f in inside and f in outside:
                return inside[f], outside[f]
    pytest.fail("no float tie found")


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("order", ["violation_last", "violation_first"])
def test_exact_audit_checks_every_window_not_only_the_float_argmax(eps, order):
    """Windows whose float ratios tie: the exact audit must still find the one that violates ε."""
    (ua, va), (ub, vb) = find_float_tie(eps)
    first, second = ((ua, va), (ub, vb)) if order == "violation_last" else ((ub, vb), (ua, va))
    bridge = math.sqrt(first[1] * second[0])  # ratios ~e^{ε/2} on the bridging windows
    w = np.array([first[0], first[1], bridge, second[0], second[1]])
    truth = true_log_ratio(w, 1)
    assert truth > mpmath.mpf(eps)
    a = audit_pure(0, w, 1, eps, exact=True)
    assert not a.passed, f"exact audit accepted weights {w.tolist()} whose true log-ratio is {truth}"
    assert mpmath.mpf(a.realised_epsilon) >= truth
    f = audit_pure(0, w, 1, eps, exact=False)
    assert not f.passed


# ------------------------------------------------------------------------------------------------
# audits accept private pmfs
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("delta", [1, 2, 4])
def test_exactly_representable_discrete_laplace_passes_exact_audit(delta):
    """λ = 1/2 per step: weights 2^{−|k|} are exact floats, the worst ratio is exactly 2^Δ."""
    eps = delta * math.log(2.0)
    while mpmath.mpf(eps) < delta * mpmath.log(2):
        eps = math.nextafter(eps, math.inf)
    k = np.arange(-40, 41)
    w = 2.0 ** -np.abs(k).astype(float)
    a = audit_pure(int(k[0]), w, delta, eps, exact=True)
    assert a.passed, a
    assert a.realised_epsilon <= eps
    assert a.realised_epsilon >= float(delta * mpmath.log(2)) * (1 - 1e-15)
    f = audit_pure(int(k[0]), w, delta, eps, exact=False)
    assert f.realised_epsilon >= float(delta * mpmath.log(2)) * (1 - 1e-15)  # sound (an upper bound)
    assert f.realised_epsilon <= eps + 1e-13  # and tight


@pytest.mark.parametrize("exact", MODES)
@pytest.mark.parametrize("eps,delta", [(0.1, 1), (1.0, 1), (1.0, 3), (2.0, 5), (0.5, 10)])
def test_discrete_laplace_passes(exact, eps, delta):
    """Discrete Laplace λ = e^{−ε/Δ} [pure-dp.md §5], built with a 1e-9 relative margin in ε so that
    float rounding of the pmf (a few ulps) cannot push a ratio over e^ε."""
    eps_used = eps * (1 - 1e-9)
    lam = math.exp(-eps_used / delta)
    k = np.arange(-30 * delta, 30 * delta + 1)
    p = (1 - lam) / (1 + lam) * lam ** np.abs(k).astype(float)
    p /= p.sum()
    a = audit_pure(int(k[0]), p, delta, eps, exact=exact)
    assert a.passed, a
    assert a.realised_epsilon <= eps
    assert a.realised_epsilon >= eps_used * (1 - 1e-12)  # tight: it found the worst ratio


@pytest.mark.parametrize("exact", MODES)
@pytest.mark.parametrize("eps,delta", [(1.0, 1), (1.0, 3), (0.3, 7)])
def test_discrete_laplace_without_margin_is_judged_exactly(exact, eps, delta):
    """λ = e^{−ε/Δ} exactly as floats: the worst ratio is e^ε up to rounding.  The realised ε must be
    within rounding of ε; the exact audit must decide by the true ratio of the floats."""
    lam = math.exp(-eps / delta)
    k = np.arange(-20 * delta, 20 * delta + 1)
    p = lam ** np.abs(k).astype(float)
    a = audit_pure(int(k[0]), p, delta, eps, exact=exact)
    truth = true_log_ratio(p, delta)
    assert abs(a.realised_epsilon - eps) <= 1e-13
    assert mpmath.mpf(a.realised_epsilon) >= truth * (1 - mpmath.mpf(10) ** -18)
    if exact:
        assert a.passed == bool(truth <= mpmath.mpf(eps))
    elif a.passed:
        assert truth <= mpmath.mpf(eps)


@settings(max_examples=150, deadline=None)
@given(
    w=st.lists(st.floats(min_value=1e-6, max_value=1.0), min_size=2, max_size=12),
    W=st.integers(1, 4),
    eps=st.floats(min_value=0.01, max_value=5.0),
)
def test_audit_sound_on_random_weights(w, W, eps):
    w = np.array(w)
    truth = true_log_ratio(w, W)
    f = audit_pure(0, w, W, eps, exact=False)
    e = audit_pure(0, w, W, eps, exact=True)
    # both report an upper bound of the true realised ε
    assert mpmath.mpf(f.realised_epsilon) >= truth * (1 - mpmath.mpf(10) ** -30)
    assert mpmath.mpf(e.realised_epsilon) >= truth * (1 - mpmath.mpf(10) ** -30)
    assert e.realised_epsilon <= float(truth) * (1 + 1e-14) + 1e-300
    # the float audit never accepts a violation; the exact one decides exactly
    if f.passed:
        assert truth <= mpmath.mpf(eps)
    assert e.passed == bool(truth <= mpmath.mpf(eps))


# ------------------------------------------------------------------------------------------------
# dual lower bound
# ------------------------------------------------------------------------------------------------
INF = math.inf


def tiny_lp() -> LinearProgram:
    """min 3x0 + x1 + 2x2  s.t.  x0 + x1 + x2 = 1,  x1 − 2x0 <= 0,  x1 − 2x2 <= 0,
    −0.5 <= x0 − x2 <= 0.5,  0 <= x <= 1.

    By hand: x1 = 2 min(x0, x2); both cases give cost 3 − 5m resp. 2 − m with m <= 1/4, so the
    optimum is 7/4 at x = (1/4, 1/2, 1/4), with duals y = (7/4, −5/8, −1/8, 0)
    (c = Aᵀy, all reduced costs 0)."""
    A = np.array([[1, 1, 1], [-2, 1, 0], [0, 1, -2], [1, 0, -1]], dtype=float)
    return LinearProgram(
        c=np.array([3.0, 1.0, 2.0]),
        A=sp.csc_array(A),
        row_lower=np.array([1.0, -INF, -INF, -0.5]),
        row_upper=np.array([1.0, 0.0, 0.0, 0.5]),
        col_lower=np.zeros(3),
        col_upper=np.ones(3),
        row_blocks={"normalisation": slice(0, 1), "other": slice(1, 4)},
        col_blocks={"x": slice(0, 3)},
        meta={"normalisation_row": 0},
    )


TINY_OPT = 1.75
TINY_DUAL = np.array([1.75, -0.625, -0.125, 0.0])


def test_tiny_lp_optimum_by_independent_solve():
    lp = tiny_lp()
    A = lp.A.toarray()
    res = linprog(lp.c, A_ub=np.vstack([A[1:3], A[3], -A[3]]), b_ub=[0, 0, 0.5, 0.5],
                  A_eq=A[:1], b_eq=[1.0], bounds=(0, 1), method="highs")
    assert res.status == 0 and math.isclose(res.fun, TINY_OPT, rel_tol=1e-12)
    assert np.allclose(lp.c - A.T @ TINY_DUAL, 0.0)


def test_exact_dual_is_tight():
    v = dual_lower_bound(tiny_lp(), TINY_DUAL).value
    assert v <= TINY_OPT
    assert v >= TINY_OPT - 1e-12


@pytest.mark.parametrize("scale", [1e-12, 1e-8, 1e-4, 1e-2, 1.0, 100.0])
def test_perturbed_dual_stays_below_optimum(scale):
    rng = np.random.default_rng(int(scale * 1e12) % 2**32)
    lp = tiny_lp()
    for _ in range(300):
        y = TINY_DUAL + scale * rng.standard_normal(4)
        v = dual_lower_bound(lp, y).value
        assert v <= TINY_OPT, f"dual {y!r} gave {v!r} > optimum 7/4"
        if scale <= 1e-8:
            assert v >= TINY_OPT - 1e-6


@pytest.mark.parametrize(
    "y",
    [
        np.zeros(4),
        -TINY_DUAL,  # every sign wrong
        np.array([1e6, 1e6, 1e6, 1e6]),
        np.array([1.75, 0.625, 0.125, 0.0]),  # ≤-rows with positive multipliers
        np.array([1.75, -0.625, -0.125, 3.0]),  # two-sided row, large multiplier
        np.array([math.nan, -0.625, math.inf, -math.inf]),
        np.array([1e300, -1e300, 1e-300, -1e-300]),
    ],
)
def test_adversarial_duals_stay_below_optimum(y):
    v = dual_lower_bound(tiny_lp(), y).value
    assert not math.isnan(v)
    assert v <= TINY_OPT


def random_lp(rng, n: int, m: int) -> LinearProgram:
    """A feasible LP with a normalisation row: min c·x, Σx = 1, ratio-like rows x_i − r x_j <= 0."""
    i = rng.integers(0, n, m)
    j = (i + rng.integers(1, n, m)) % n
    r = rng.uniform(1.0, 3.0, m)
    rows = np.concatenate([np.zeros(n, int), np.repeat(np.arange(1, m + 1), 2)])
    cols = np.concatenate([np.arange(n), np.stack([i, j], 1).ravel()])
    vals = np.concatenate([np.ones(n), np.stack([np.ones(m), -r], 1).ravel()])
    A = sp.csc_array(sp.coo_array((vals, (rows, cols)), shape=(m + 1, n)))
    return LinearProgram(
        c=rng.uniform(0.0, 5.0, n),
        A=A,
        row_lower=np.concatenate([[1.0], np.full(m, -INF)]),
        row_upper=np.concatenate([[1.0], np.zeros(m)]),
        col_lower=np.zeros(n),
        col_upper=np.ones(n),
        meta={"normalisation_row": 0},
    )


@pytest.mark.parametrize("seed", range(6))
def test_perturbed_dual_on_random_lps(seed):
    rng = np.random.default_rng(seed)
    lp = random_lp(rng, n=12, m=30)
    A = lp.A.toarray()
    res = linprog(lp.c, A_ub=A[1:], b_ub=np.zeros(A.shape[0] - 1), A_eq=A[:1], b_eq=[1.0],
                  bounds=(0, 1), method="highs")
    assert res.status == 0
    opt = res.fun
    y = np.concatenate([res.eqlin.marginals, res.ineqlin.marginals])
    v = dual_lower_bound(lp, y).value
    assert opt - 1e-7 <= v <= opt + 1e-9 * max(1.0, abs(opt))
    for scale in (1e-6, 1e-2, 1.0):
        for _ in range(50):
            yp = y + scale * rng.standard_normal(len(y))
            assert dual_lower_bound(lp, yp).value <= opt + 1e-9 * max(1.0, abs(opt))


def test_perturbed_dual_of_built_lp_bounds_discrete_staircase():
    """Any dual of the library's own relaxation is a lower bound on V* (here Δ = 2, |x|, ε = 1)."""
    from optmech.costs import parse_cost
    from optmech.problems.lattice import Grid1D
    from optmech.problems.pure import build_general
    from optmech.solvers import solve_lp

    eps, delta = 1.0, 2
    b = math.exp(-eps)
    M = 200
    best = math.inf
    for r in (1, 2):  # discrete staircase by direct summation [pure-dp.md §5]
        a = (1 - b) / (2 * r + 2 * b * (delta - r) - (1 - b))
        i = np.arange(-M, M + 1)
        kk, jj = np.divmod(np.abs(i), delta)
        best = min(best, math.fsum(np.abs(i) * a * b**kk * np.where(jj < r, 1.0, b)))
    plp = build_general(Grid1D.integer(delta), eps, parse_cost("abs"), -40, 40)
    raw = solve_lp(plp.lp, "default")
    y = np.asarray(raw.row_dual, dtype=float)
    v0 = dual_lower_bound(plp.lp, y).value
    assert v0 <= best * (1 + 1e-12)
    assert v0 >= best * (1 - 1e-6)
    rng = np.random.default_rng(7)
    for scale in (1e-9, 1e-5, 1e-2):
        for _ in range(20):
            yp = y * (1 + scale * rng.standard_normal(len(y))) + scale * rng.standard_normal(len(y))
            assert dual_lower_bound(plp.lp, yp).value <= best * (1 + 1e-12)


def test_polish_row_duals_repairs_a_dual_defect_on_one_column():
    """polish_row_duals: start from HiGHS's simplex duals of a cell LP on ℝ (x², ε = 5, δ = 1e-6, 20 cells per
    sensitivity, outward rows) with the multipliers of the rows that draw on one mass column made 1e-3 too large,
    which sinks the certificate below zero; one polish brings it back to the simplex duals' own certificate (to
    1e-12 relative), at most the LP's optimum (weak duality); duals without a defect are left as good as they were."""
    import scipy.sparse as sp

    from optmech.certify import dual_lower_bound, polish_row_duals
    from optmech.costs import as_cost
    from optmech.problems.approx import build_approx
    from optmech.problems.approx_cells import NodeCosts
    from optmech.solvers import solve_lp
    from test_hockey_ipm import SIMPLEX as simplex

    cost, n = as_cost("square"), 20
    alp = build_approx(cost, 5.0, 1e-6, n, 90, nodes=NodeCosts(cost, 1.0, n), outward_rows=True)
    lp = alp.lp
    ref = solve_lp(lp, simplex)
    exact = dual_lower_bound(lp, ref.row_dual).value
    hockey = np.arange(lp.row_blocks["hockey_stick"].start, lp.row_blocks["hockey_stick"].stop)
    column = sp.csc_array(lp.A)[:, [int(alp.point_var[alp.R + 5])]]
    rows = column.indices[column.data < 0]
    rows = rows[np.isin(rows, hockey)]
    assert rows.size > 0
    y = ref.row_dual.copy()
    y[rows] -= 1e-3
    assert dual_lower_bound(lp, y).value < 0.0
    repaired = dual_lower_bound(lp, polish_row_duals(lp, y, ref.objective, hockey)).value
    assert repaired == pytest.approx(exact, rel=1e-12, abs=0.0)
    assert repaired <= ref.objective * (1 + 1e-9)
    assert dual_lower_bound(lp, polish_row_duals(lp, ref.row_dual, ref.objective, hockey)).value >= exact
