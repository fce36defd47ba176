"""Noise on ℕ (``--domain nonnegative``) and δ down to 1e-10 for (ε, δ)-DP on ℤ (issue 37).

Every optimum is compared with an LP built here from scratch (scipy's HiGHS, p on [0, W], the
hockey-stick rows of every shift ±1..Δ), independent of optmech's builders, relaxations and
certificates; the truncated discrete Laplace's half-width is checked minimal with mpmath sums.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from optmech import solve
from optmech.costs import as_cost
from optmech.errors import SpecError
from optmech.families.approx import nonnegative_geometric_upper
from optmech.mechanisms.deployed_integer import truncated_geometric_law
from optmech.spec import ApproxDP, IntegerLattice, NonNegativeIntegers, Problem, PureDP


def exact_lp_on_n(cost, epsilon: float, delta: float, D: int, W: int) -> float:
    """min Σ L(x) p(x) over pmfs on [0, W] with Σ_x (p(x) − e^ε p(x+v))_+ <= δ for every 0 < |v| <= Δ
    (p = 0 outside [0, W]); W is taken large enough that the optimum does not touch W."""
    n = W + 1
    a = math.exp(epsilon)
    shifts = [v for v in range(-D, D + 1) if v]
    S = len(shifts)
    rows, cols, vals = [], [], []
    for j, v in enumerate(shifts):  # p(x) − a p(x+v) − t_{v,x} <= 0
        x = np.arange(n)
        r = j * n + x
        rows += [r, r]
        cols += [x, n + j * n + x]
        vals += [np.ones(n), -np.ones(n)]
        ok = (x + v >= 0) & (x + v < n)
        rows.append(r[ok])
        cols.append(x[ok] + v)
        vals.append(np.full(ok.sum(), -a))
    for j in range(S):  # Σ_x t_{v,x} <= δ
        rows.append(np.full(n, S * n + j))
        cols.append(n + j * n + np.arange(n))
        vals.append(np.ones(n))
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(S * n + S, n + S * n))
    b = np.concatenate([np.zeros(S * n), np.full(S, delta)])
    c = np.concatenate([np.asarray([cost(float(x)) for x in range(n)]), np.zeros(S * n)])
    A_eq = sp.csr_matrix((np.ones(n), (np.zeros(n, dtype=int), np.arange(n))), shape=(1, n + S * n))
    res = linprog(c, A_ub=A, b_ub=b, A_eq=A_eq, b_eq=[1.0], bounds=(0, None), method="highs")
    assert res.status == 0
    p = res.x[:n]
    assert p[-2 * D:].sum() < 1e-9, "the window is too small for this check"
    return float(res.fun)


CASES = [
    (1, 1.0, 0.05, "abs", lambda x: abs(x)),
    (2, 0.5, 0.05, "abs", lambda x: abs(x)),
    (3, 1.0, 0.01, "square", lambda x: x * x),
    (2, 1.0, 0.02, "where(x >= 2, x - 2, 3*(2 - x))", lambda x: x - 2 if x >= 2 else 3 * (2 - x)),
]


@pytest.mark.parametrize("D, eps, delta, spec, fn", CASES)
def test_optimum_on_n_matches_an_independent_lp(D, eps, delta, spec, fn):
    r = solve(Problem(privacy=ApproxDP(eps, delta), cost=spec, domain=NonNegativeIntegers(), sensitivity=D))
    assert r.certified and r.status == "optimal"
    v = exact_lp_on_n(fn, eps, delta, D, W=60 * D)
    assert r.lower_bound <= v * (1 + 1e-9) and v <= r.upper_bound * (1 + 1e-9)
    assert r.relative_gap <= 1e-9
    # on ℕ the optimum is at least the optimum on ℤ (a restriction)
    z = solve(Problem(privacy=ApproxDP(eps, delta), cost=spec, domain=IntegerLattice(), sensitivity=D))
    assert z.lower_bound <= r.upper_bound * (1 + 1e-12)


def hockey_stick_mp(p: list, v: int, eps) -> mpmath.mpf:
    """Σ_x (p(x) − e^ε p(x+v))_+ for a finitely supported pmf (list on 0..len−1), at mpmath precision."""
    a = mpmath.e ** eps
    n = len(p)
    total = mpmath.mpf(0)
    for x in range(n):
        q = p[x + v] if 0 <= x + v < n else 0
        total += max(p[x] - a * q, 0)
    return total


@pytest.mark.parametrize("eps, delta, D", [(1.0, 0.01, 1), (0.5, 0.05, 3), (1.0, 1e-4, 4), (2.0, 1e-3, 2)])
def test_truncated_geometric_half_width_is_the_smallest_private_one(eps, delta, D):
    mpmath.mp.dps = 40
    T = int(truncated_geometric_law(eps, delta, D).parameters["T"])
    lam = mpmath.e ** (-mpmath.mpf(eps) / D)

    def worst(T: int) -> mpmath.mpf:
        w = [lam ** abs(x - T) for x in range(2 * T + 1)]
        z = mpmath.fsum(w)
        p = [x / z for x in w]
        return max(hockey_stick_mp(p, v, mpmath.mpf(eps)) for v in list(range(1, D + 1)) + list(range(-D, 0)))

    assert worst(T) <= delta
    if T > D - 1:
        assert worst(T - 1) > delta


def test_nonnegative_law_is_on_n_and_audited():
    up = nonnegative_geometric_upper(as_cost("abs"), 1.0, 1e-3, 5)
    assert up is not None and up.certified and up.realised_delta <= 1e-3
    R = up.R
    assert up.p[:R].sum() == 0.0  # nothing below 0
    T = up.parameters["half_width"]
    assert math.isclose(up.value, T, rel_tol=1e-12)  # E X = T for the law symmetric about T on ℕ


def test_refusals():
    with pytest.raises(SpecError, match="nonnegative"):
        Problem(privacy=PureDP(1), cost="abs", domain=NonNegativeIntegers())
    with pytest.raises(SpecError, match="nonnegative"):
        Problem(privacy=ApproxDP(1, 0.1), cost="l1", dim=2, domain=NonNegativeIntegers())
    with pytest.raises(SpecError, match="below the supported 1e-10"):
        ApproxDP(1, 1e-11)
    with pytest.raises(SpecError, match="at epsilon = 0"):
        ApproxDP(0, 1e-7)
    ApproxDP(1, 1e-10)  # accepted


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "optmech", *args], capture_output=True, text=True, timeout=300)


def test_cli_json_and_saved_law_on_n(tmp_path):
    out = tmp_path / "law.json"
    p = run_cli("solve", "--privacy", "approx", "--epsilon", "1", "--delta", "0.01", "--sensitivity", "3",
                "--domain", "nonnegative", "--cost", "abs", "--json", "--save", str(out))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["problem"]["domain"] == "nonnegative" and d["certified"]
    assert d["audit"]["passed"] and d["audit"]["realised_delta"] <= 0.01
    v = exact_lp_on_n(lambda x: abs(x), 1.0, 0.01, 3, W=150)
    assert d["lower_bound"] <= v * (1 + 1e-9) and v <= d["upper_bound"] * (1 + 1e-9)
    law = json.loads(out.read_text())
    text = json.dumps(law)
    assert "lattice_pmf" in text
    # the saved law puts no mass below 0
    m = run_cli("mechanism", "--from", str(out), "--json")
    assert m.returncode == 0, m.stderr
    mech = json.loads(m.stdout)
    assert mech["mean"] > 0


def test_time_limit_bracket_on_n_is_certified():
    """Before any LP the bracket is [GV13]'s bound on ℤ (valid on ℕ) and the audited law on ℕ."""
    p = run_cli("solve", "--privacy", "approx", "--epsilon", "1", "--delta", "1e-6", "--sensitivity", "64",
                "--domain", "nonnegative", "--cost", "abs", "--time-limit", "0.05", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["lower_bound"] > 0 and d["upper_bound"] < math.inf
    assert d["audit"]["passed"]
    T = int(truncated_geometric_law(1.0, 1e-6, 64).parameters["T"])
    assert d["upper_bound"] <= T * (1 + 1e-9)


def test_small_delta_is_certified_on_z():
    """δ = 1e-10 is accepted and bracketed: above [GV13] Thm 8, below the discrete Laplace's closed-form
    cost 2λ/(1 − λ²), λ = e^{−ε/Δ} (ε-DP, hence (ε, δ)-DP).  (The bracket can be ~1e-7 wide at such δ: the
    budget's dual is ~1/δ, and the dual's rows cancel terms of that size in double precision.)"""
    from optmech.mechanisms.approx_bounds import theorem_lower_bound
    from optmech.spec import IntegerLattice

    r = solve(Problem(privacy=ApproxDP(1.0, 1e-10), cost="abs", domain=IntegerLattice(), sensitivity=4))
    assert r.certified and r.relative_gap <= 1e-6
    lam = math.exp(-0.25)
    assert r.upper_bound <= 2 * lam / (1 - lam * lam)
    thm = theorem_lower_bound("abs", 1.0, 1e-10, 4)
    assert thm.valid and r.lower_bound >= float(thm.value) * (1 - 1e-9)


@pytest.mark.slow  # a long solve: the default suite keeps to its time budget
def test_large_nonnegative_law_uses_its_closed_form():
    """Δ = 5000, δ = 1e-10: the law on ℕ has ~2·10⁶ points, too many to audit shift by shift within a
    solve; its upper end is then its closed-form certificate (δ(T) in interval arithmetic, E Y = T)."""
    p = run_cli("solve", "--privacy", "approx", "--epsilon", "0.1", "--delta", "1e-10", "--sensitivity", "5000",
                "--domain", "nonnegative", "--cost", "abs", "--time-limit", "3", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    T = int(truncated_geometric_law(0.1, 1e-10, 5000).parameters["T"])
    assert d["certified"] and T <= d["upper_bound"] <= T * (1 + 1e-11)
    assert d["audit"]["passed"] and d["audit"]["realised_delta"] <= 1e-10
    assert d["audit"]["method"].startswith("closed form")
    assert 0 < d["lower_bound"] <= d["upper_bound"]
