"""Tests of the exact lattice privacy audit (optmech.audit).

Every expected value is derived here, independently of the module: closed forms from
reference/pure-dp.md §5 and discrete-wasserstein.md §2–3 (geometric, discrete staircase,
discrete Laplace, uniform, natural discrete Gaussian via the Canonne–Kamath–Steinke formula),
brute-force evaluations in 50-digit arithmetic (mpmath) over an explicit range, and Google's
dp_accounting privacy-loss distributions.
"""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest

from optmech.audit import (
    PMF_SUM_TOL,
    audit,
    delta_curve,
    epsilon_for_delta,
    finite_pmf,
    hockey_stick,
    realised_epsilon,
)
from optmech.audit_files import audit_file, load_pmf, read_pmf_csv
from optmech.certify import LatticeMechanism, repaired_mechanism
from optmech.errors import SpecError
from optmech.problems.lattice import Grid1D


# ------------------------------------------------------------------------------------------------
# independent constructions
# ------------------------------------------------------------------------------------------------
def with_tails(k_lo: int, weights: np.ndarray, W: int, beta: float) -> LatticeMechanism:
    """Window weights whose first/last W entries continue geometrically (ratio β per W)."""
    w = np.asarray(weights, dtype=float)
    return LatticeMechanism(Grid1D.integer(W), k_lo, w, beta, w[:W].copy(), w[-W:].copy(), total=1.0)


def geometric(eps: float, M: int) -> LatticeMechanism:
    """Two-sided geometric P(i) = (1−b)/(1+b) b^|i| [pure-dp.md §5], window −M..M, exact tails."""
    b = math.exp(-eps)
    i = np.arange(-M, M + 1)
    return with_tails(-M, (1 - b) / (1 + b) * b ** np.abs(i).astype(float), 1, b)


def staircase_weights(eps: float, delta: int, r: int, K: int) -> tuple[int, np.ndarray]:
    """Discrete staircase P_r [pure-dp.md §5] on |i| <= (K+1)Δ − 1: level a on 0 <= j < r,
    b·a on r <= j < Δ, b^q per period, symmetric; a(r) = (1−b)/(2r + 2b(Δ−r) − (1−b))."""
    b = math.exp(-eps)
    a = (1 - b) / (2 * r + 2 * b * (delta - r) - (1 - b))
    n = (K + 1) * delta - 1
    i = np.arange(-n, n + 1)
    q, j = np.divmod(np.abs(i), delta)
    return -n, a * b ** q.astype(float) * np.where(j < r, 1.0, b)


def staircase(eps: float, delta: int, r: int, K: int = 2) -> LatticeMechanism:
    """P_r with the window's outer periods continued by β = b per period (exact: P(i+Δ) = b P(i))."""
    k_lo, w = staircase_weights(eps, delta, r, K)
    return with_tails(k_lo, w, delta, math.exp(-eps))


def discrete_laplace(eps: float, delta: int, M: int) -> LatticeMechanism:
    """p_k = (1−λ)/(1+λ) λ^|k|, λ = e^{−ε/Δ} [pure-dp.md §5], window −M..M, tails ratio λ."""
    lam = math.exp(-eps / delta)
    k = np.arange(-M, M + 1)
    return with_tails(-M, (1 - lam) / (1 + lam) * lam ** np.abs(k).astype(float), 1, lam)


def rule_weight(mech: LatticeMechanism, k: int) -> mpmath.mpf:
    """Exact weight at k by the tail rule, written from the documented rule (50 digits)."""
    W, lo = mech.grid.W, mech.k_lo
    hi = lo + len(mech.weights) - 1
    b = mpmath.mpf(float(mech.beta))
    if lo <= k <= hi:
        return mpmath.mpf(float(mech.weights[k - lo]))
    if k > hi:
        m, r = divmod(k - (hi - W + 1), W)
        return mpmath.mpf(float(mech.right_gen[r])) * b**m
    m, r = divmod((lo + W - 1) - k, W)  # k = lo + (W − 1 − r) − mW
    return mpmath.mpf(float(mech.left_gen[W - 1 - r])) * b**m


def brute_epsilon(mech: LatticeMechanism, delta: int, periods: int = 3):
    """max log w(i)/w(j) over |i − j| <= Δ on window ± (periods·W + 2Δ), 50 digits; None if unbounded."""
    W, lo = mech.grid.W, mech.k_lo
    hi = lo + len(mech.weights) - 1
    ks = range(lo - periods * W - 2 * delta, hi + periods * W + 2 * delta + 1)
    with mpmath.workdps(50):
        w = [rule_weight(mech, k) for k in ks]
        best = mpmath.mpf(0)
        for i in range(len(w)):
            for j in range(i + 1, min(i + delta + 1, len(w))):
                for x, y in ((w[i], w[j]), (w[j], w[i])):
                    if x > 0 and y == 0:
                        return None
                    if x > 0:
                        best = max(best, mpmath.log(x / y))
    return best


def brute_delta_finite(k: np.ndarray, p: np.ndarray, delta: int, eps: float) -> mpmath.mpf:
    """max_s Σ_k [p(k) − e^ε p(k+s)]_+ of a finite pmf, 50 digits, every shift 0 < |s| <= Δ."""
    with mpmath.workdps(50):
        c = mpmath.exp(mpmath.mpf(eps))
        pm = {int(a): mpmath.mpf(float(b)) for a, b in zip(k, p)}
        best = mpmath.mpf(0)
        for s in [*range(-delta, 0), *range(1, delta + 1)]:
            t = mpmath.fsum(max(0, v - c * pm.get(kk + s, 0)) for kk, v in pm.items())
            best = max(best, t)
        return best


def ulp(x: float) -> float:
    return math.ulp(x)


# ------------------------------------------------------------------------------------------------
# realised pure ε
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_geometric_epsilon_is_exact(eps):
    mech = geometric(eps, 12)
    got = realised_epsilon(mech, 1)
    exact = brute_epsilon(mech, 1)
    assert got >= exact  # an upper bound of the exact value for the float masses
    assert got - float(exact) <= 2 * ulp(float(exact))
    assert got == pytest.approx(eps, rel=4e-15, abs=0)


@pytest.mark.parametrize("delta", [3, 5])
def test_discrete_staircase_epsilon_is_exact(delta):
    eps = 0.7
    for r in sorted({1, 2, delta}):
        mech = staircase(eps, delta, r)
        got = realised_epsilon(mech, delta)
        exact = brute_epsilon(mech, delta, periods=2)
        assert got >= exact
        assert got - float(exact) <= 2 * ulp(float(exact))
        assert got == pytest.approx(eps, rel=1e-14, abs=0)
        # P_r(r − 1) = a and P_r(r) = b·a are adjacent: the full ratio e^ε is already met at
        # shift 1, so the staircase's ε does not depend on Δ' <= Δ (unlike the discrete Laplace)
        assert realised_epsilon(mech, 1) == pytest.approx(eps, rel=1e-14, abs=0)


def test_discrete_laplace_epsilon_only_at_shift_delta():
    eps, delta = 1.3, 4
    mech = discrete_laplace(eps, delta, 40)
    rep = audit(mech, delta)
    assert rep.epsilon == pytest.approx(eps, rel=1e-13, abs=0)
    assert abs(rep.worst_shift) == delta
    # every shift s sees only s·ε/Δ: checking shift 1 alone would report ε/Δ
    for d in range(1, delta):
        assert realised_epsilon(mech, d) == pytest.approx(eps * d / delta, rel=1e-13, abs=0)


def test_epsilon_against_brute_force_on_random_pmfs():
    """Random asymmetric windows, zeros, tails or none, W != Δ: within 2 ulps above the exact value."""
    rng = np.random.default_rng(11)
    for trial in range(12):
        W, N, D = int(rng.integers(1, 4)), int(rng.integers(1, 10)), int(rng.integers(1, 5))
        w = rng.random(N) + 0.05
        if trial % 3 == 0:
            w[rng.integers(0, N)] = 0.0
        tails = trial % 4 != 0
        gens = (rng.random(W) + 0.1, rng.random(W) + 0.1) if tails else (np.zeros(W), np.zeros(W))
        mech = LatticeMechanism(
            Grid1D.integer(W), int(rng.integers(-5, 5)), w, float(rng.uniform(0.1, 0.8)) if tails else 0.0,
            gens[0], gens[1], total=1.0,
        )
        got, exact = realised_epsilon(mech, D), brute_epsilon(mech, D, periods=2)
        assert (got is None) == (exact is None)
        if got is not None:
            assert got >= exact and got - float(exact) <= 2 * ulp(float(exact))


# ------------------------------------------------------------------------------------------------
# δ(ε)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "mech,delta",
    [(geometric(1.0, 20), 1), (staircase(0.9, 3, 2), 3), (staircase(1.5, 5, 1), 5), (discrete_laplace(0.6, 3, 30), 3)],
)
def test_delta_vanishes_exactly_from_the_realised_epsilon(mech, delta):
    e = realised_epsilon(mech, delta)
    at, above, below = delta_curve(mech, delta, [e, e + 0.5, e * (1 - 1e-6)])
    assert at == 0.0 and above == 0.0
    assert below > 0.0
    rep = audit(mech, delta).to_dict()
    assert rep["delta_curve"][0][0] == 0.0
    assert rep["delta_curve"][-1] == [e, 0.0]
    assert all(d1 >= d2 for (_, d1), (_, d2) in zip(rep["delta_curve"], rep["delta_curve"][1:]))


def test_geometric_delta_curve_closed_form():
    """Δ = 1: p(k)/p(k+1) = e^{ε0} for k >= 0 and e^{−ε0} below, so
    δ(ε) = P(X >= 0) − e^ε P(X >= 1) = (1 − b e^ε)/(1 + b) for ε <= ε0; δ(0) = tanh(ε0/2)."""
    eps0 = 1.0
    b = math.exp(-eps0)
    mech = geometric(eps0, 25)
    grid = [0.0, 0.3, 0.7, 0.95, 0.999]
    got = delta_curve(mech, 1, grid)
    for e, d in zip(grid, got):
        # near ε0 both sides cancel: agreement is absolute, at the unit roundoff of the mass
        assert d == pytest.approx((1 - b * math.exp(e)) / (1 + b), rel=1e-13, abs=4e-15)
    assert got[0] == pytest.approx(math.tanh(eps0 / 2), rel=1e-13)
    for target in (1e-2, 1e-5):
        e = epsilon_for_delta(mech, 1, target)
        assert e == pytest.approx(math.log((1 - target * (1 + b)) / b), rel=1e-9)
        assert delta_curve(mech, 1, [e])[0] <= target
        assert delta_curve(mech, 1, [e * (1 - 1e-7)])[0] > target


def test_delta_against_brute_force_every_shift():
    """Random finite pmfs (asymmetric, with gaps): the maximum over ALL shifts, rigorous and tight."""
    rng = np.random.default_rng(3)
    for trial in range(10):
        n = int(rng.integers(2, 9))
        k = np.sort(rng.choice(np.arange(-6, 7), size=n, replace=False))
        p = rng.random(n) + 0.01
        p /= p.sum()
        pmf = finite_pmf(k, p)
        for D in (1, 2, 3):
            for e in (0.0, 0.2, 1.0):
                got = delta_curve(pmf, D, [e])[0]
                with mpmath.workdps(50):  # independent of the global precision other test modules set
                    raw = brute_delta_finite(k, p, D, e) / min(1, mpmath.fsum(mpmath.mpf(float(x)) for x in p))
                    exact = min(raw, mpmath.mpf(1))  # δ is a probability bound: clipped to [0, 1]
                assert got >= exact - mpmath.mpf(10) ** -40
                assert got - exact <= 4e-15  # a few units of roundoff of the total mass


def test_all_shifts_are_needed():
    """Alternating masses: shift 1 is far worse than shift 2 = Δ (the paper's shift-m-only check fails)."""
    k = np.arange(0, 9)
    p = np.where(k % 2 == 0, 1.0, 0.1)
    p = p / p.sum()
    pmf = finite_pmf(k, p)
    d1 = max(hockey_stick(pmf, 1, 0.5), hockey_stick(pmf, -1, 0.5))
    d2 = max(hockey_stick(pmf, 2, 0.5), hockey_stick(pmf, -2, 0.5))
    assert d1 > d2
    rep = audit(pmf, 2, ["0.5"])
    assert rep.delta_at["0.5"] == pytest.approx(d1, rel=1e-15)
    assert abs(rep.delta_worst_shift["0.5"]) == 1


def test_perturbed_pmf_is_detected():
    eps, delta, r = 1.0, 3, 1
    k_lo, w = staircase_weights(eps, delta, r, 3)
    a = w[-k_lo]  # P_r(0) = a(r)
    w = w.copy()
    w[-k_lo] *= 1.01  # raise p(0) by 1 %
    mech = with_tails(k_lo, w, delta, math.exp(-eps))
    rep = audit(mech, delta, [str(eps)])
    # p(0)/p(±Δ) = 1.01·a/(b·a): the worst ratio grows by exactly log 1.01
    assert rep.epsilon > eps
    assert rep.epsilon == pytest.approx(eps + math.log1p(0.01), rel=1e-13)
    # the term k = 0, s = Δ alone contributes 1.01a − e^ε·b·a = 0.01a
    assert rep.delta_at[str(eps)] >= 0.01 * a * (1 - 1e-9)
    assert rep.mass_error == pytest.approx(0.01 * a, rel=1e-9)


@pytest.mark.parametrize("n,delta", [(5, 1), (10, 3), (4, 7)])
def test_uniform_is_not_pure_and_delta_is_delta_over_n(n, delta):
    """discrete-wasserstein.md §3 (corrected [QHFL22] (22)): δ = m/(b − a + Δ_lattice) = Δ/n, capped at 1,
    for every ε >= 0 (only the mass shifted onto zeros counts)."""
    pmf = finite_pmf(np.arange(n), np.full(n, 1.0 / n))
    assert realised_epsilon(pmf, delta) is None
    expect = min(delta, n) / n
    for d in delta_curve(pmf, delta, [0.0, 0.5, 5.0, 40.0]):
        assert d == pytest.approx(expect, rel=1e-14)
        assert d >= expect * (1 - 4e-16)
    rep = audit(pmf, delta, deltas=[expect / 2, min(1.0, expect + 1e-12)])
    assert rep.epsilon is None and rep.epsilon_witness is not None
    assert rep.delta_limit == pytest.approx(expect, rel=1e-14)
    assert list(rep.epsilon_at.values()) == [None, 0.0]


@pytest.mark.parametrize("sigma", [1.0, 3.0])
def test_natural_discrete_gaussian_matches_cks(sigma):
    """CKS closed form at Δ = m = 1 (discrete-wasserstein.md §3, Remark 2):
    δ = Pr[θ > εσ² − 1/2] − e^ε Pr[θ > εσ² + 1/2], probabilities by direct summation."""
    K = int(math.ceil(14 * sigma))  # truncated mass below e^{-98}
    k = np.arange(-K, K + 1)
    q = np.exp(-(k.astype(float) ** 2) / (2 * sigma**2))
    p = q / math.fsum(q)
    pmf = finite_pmf(k, p)

    def sf(t: float) -> float:
        return math.fsum(p[k > t])

    eps_list = [0.0, 0.25, 1.0, 2.0]
    got = delta_curve(pmf, 1, eps_list)
    for e, d in zip(eps_list, got):
        cks = sf(e * sigma**2 - 0.5) - math.exp(e) * sf(e * sigma**2 + 0.5)
        assert d == pytest.approx(cks, rel=1e-12, abs=1e-16)


def test_tails_short_window_equals_long_window():
    eps, delta, r = 0.8, 3, 2
    short = staircase(eps, delta, r, K=0)  # one period each side, everything else by the tail rule
    long_ = staircase(eps, delta, r, K=30)
    e_s, e_l = realised_epsilon(short, delta), realised_epsilon(long_, delta)
    assert e_s == pytest.approx(e_l, rel=4e-15)
    grid = [0.0, 0.2, 0.5, 0.79]
    ds, dl = delta_curve(short, delta, grid), delta_curve(long_, delta, grid)
    np.testing.assert_allclose(ds, dl, rtol=1e-13, atol=1e-16)
    # and a finite truncation far out (mass b^60 ≈ 1e-21 dropped) agrees below ε
    k_lo, w = staircase_weights(eps, delta, r, 60)
    trunc = finite_pmf(np.arange(k_lo, k_lo + len(w)), w)
    np.testing.assert_allclose(delta_curve(trunc, delta, grid), ds, rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------------------------------------
# dp_accounting cross-check
# ------------------------------------------------------------------------------------------------
def _truncated(mech: LatticeMechanism, reach: int) -> tuple[np.ndarray, np.ndarray]:
    """The law on window ± reach (tail rule via LatticeMechanism.weight), renormalised."""
    k = np.arange(mech.k_lo - reach, mech.k_lo + len(mech.weights) + reach)
    w = mech.weight(k)
    return k, w / math.fsum(w)


def test_dp_accounting_agrees():
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    h = 1e-4
    # a solver-like pmf: a perturbed staircase window repaired to its ε-DP majorant with
    # geometric tails (what optmech solve returns), truncated far out
    k_lo, w = staircase_weights(1.0, 3, 2, 4)
    w = w * (1 + 0.05 * np.sin(np.arange(len(w))))
    solver_like = repaired_mechanism(Grid1D.integer(3), k_lo, w, 1.0)
    cases = [(geometric(0.8, 10), 1, 80), (staircase(1.0, 3, 2), 3, 150), (solver_like, 3, 200)]
    for mech, delta, reach in cases:
        k, p = _truncated(mech, reach)
        pmf = finite_pmf(k, p)
        logp = {int(a): math.log(b) for a, b in zip(k, p) if b > 0}
        for s in [*range(-delta, 0), *range(1, delta + 1)]:
            lower = {a: logp[a + s] for a in logp if a + s in logp}  # outcome k -> log p(k + s)
            dist = pld.from_two_probability_mass_functions(
                log_probability_mass_function_lower=lower,
                log_probability_mass_function_upper=logp,
                value_discretization_interval=h,
            )
            for e in (0.1, 0.5):
                ours = hockey_stick(pmf, s, e)
                theirs = dist.get_delta_for_epsilon(e)
                assert ours <= theirs + 1e-12  # theirs is pessimistic
                assert theirs - ours <= 1.01 * h


# ------------------------------------------------------------------------------------------------
# round trip through optmech solve --save
# ------------------------------------------------------------------------------------------------
def test_solve_save_roundtrip(tmp_path):
    import optmech
    from optmech.costs import parse_cost
    from optmech.spec import IntegerLattice, Problem, PureDP

    eps, delta = 1.0, 3
    result = optmech.solve(Problem(privacy=PureDP(eps), cost=parse_cost("abs"), sensitivity=delta, domain=IntegerLattice()))
    path = tmp_path / "solved.json"
    path.write_text(json.dumps(result.to_dict(include_mechanism=True)))
    pmf = load_pmf(path)
    np.testing.assert_array_equal(pmf.weights, result.mechanism.law.weights)
    payload = audit_file(path, delta, ["1", "0.5"])
    assert payload["epsilon"] is not None and payload["epsilon"] <= eps
    assert payload["delta_at"]["1"] == 0.0 and payload["delta_at"]["0.5"] > 0
    assert payload["tail_rule"]["period"] == delta
    assert payload["support"]["min"] is None and payload["support"]["max"] is None
    # without a sensitivity the saved one is used
    assert audit_file(path, None)["sensitivity"] == delta


# ------------------------------------------------------------------------------------------------
# report schema and readers
# ------------------------------------------------------------------------------------------------
def _write(tmp_path, text: str, name: str = "pmf.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_audit_file_schema(tmp_path):
    b = math.exp(-1.0)
    k = np.arange(-40, 41)
    p = (1 - b) / (1 + b) * b ** np.abs(k).astype(float)
    rows = "\n".join(f"{a},{float(x)!r}" for a, x in zip(k, p))
    path = _write(tmp_path, "k,p\n" + rows + "\n\n")
    d = audit_file(path, 1, ["0.1", "1e-1", 0.5])
    for key in ("epsilon", "delta_at", "delta_curve", "sensitivity", "worst_shift", "support", "tail_rule", "mass_error"):
        assert key in d
    assert d["epsilon"] is None  # a finite CSV pmf is never pure-DP
    assert list(d["delta_at"]) == ["0.1", "1e-1", "0.5"]
    assert d["delta_at"]["0.1"] == d["delta_at"]["1e-1"]
    assert 40 <= len(d["delta_curve"]) <= 100
    assert d["delta_curve"][0][0] == 0.0
    assert d["support"] == {"min": -40, "max": 40, "window": [-40, 40], "finite": True}
    assert d["tail_rule"] is None
    json.dumps(d, allow_nan=False)


def test_csv_accepts_integral_floats(tmp_path):
    pmf = read_pmf_csv(_write(tmp_path, "k,p\n3.0,0.25\n-1,0.75\n"))
    assert pmf.k_lo == -1 and list(pmf.weights) == [0.75, 0.0, 0.0, 0.0, 0.25]


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("x,p\n0,1\n", "header"),
        ("k,p\n0,-0.5\n1,1.5\n", ">= 0"),
        ("k,p\n0,nan\n", "finite"),
        ("k,p\n0,inf\n", "finite"),
        ("k,p\n0,0.5\n1,0.4\n", "PMF_SUM_TOL"),
        ("k,p\n0,0.5\n0,0.5\n", "more than once"),
        ("k,p\n1.5,1\n", "integer"),
        ("k,p\nabc,1\n", "integer"),
        ("k,p\n0,abc\n", "number"),
        ("k,p\n", "no rows"),
        ("", "empty"),
        ("k,p\n0,0.5,1\n1,0.5\n", "2 fields"),
    ],
)
def test_csv_errors(tmp_path, text, fragment):
    with pytest.raises(SpecError) as err:
        load_pmf(_write(tmp_path, text))
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_sum_tolerance_is_stated():
    assert PMF_SUM_TOL == 1e-9


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("{not json", "malformed JSON"),
        ('{"problem": {}}', "mechanism"),
        ('{"mechanism": null}', "mechanism"),
        ('{"mechanism": {"kind": "piecewise_constant_density"}}', "lattice pmfs"),
        ('{"mechanism": {"kind": "lattice_pmf", "k_lo": 0}}', "malformed mechanism"),
        ("[1, 2]", "JSON object"),
    ],
)
def test_json_errors(tmp_path, text, fragment):
    with pytest.raises(SpecError) as err:
        load_pmf(_write(tmp_path, text, "m.json"))
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_missing_file(tmp_path):
    for name in ("nope.csv", "nope.json"):
        with pytest.raises(SpecError) as err:
            load_pmf(tmp_path / name)
        assert "cannot read" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("sens", [0, -1, 1.5, "x", True, None])
def test_bad_sensitivity(tmp_path, sens):
    path = _write(tmp_path, "k,p\n0,0.5\n1,0.5\n")
    with pytest.raises(SpecError) as err:
        audit_file(path, sens, ["1"])
    assert "sensitivity" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("eps", ["-1", "nan", "abc", float("inf"), -0.5])
def test_bad_epsilon(tmp_path, eps):
    path = _write(tmp_path, "k,p\n0,0.5\n1,0.5\n")
    with pytest.raises(SpecError) as err:
        audit_file(path, 1, [eps])
    assert "epsilon" in str(err.value) and "\n" not in str(err.value)
