"""Soundness: a certified bracket never excludes the optimum V*.

Two parts.

1. **Regressions**: the commands of an audit that once printed certified brackets excluding V*
   (a symmetric reduction assumed from a window's worth of points, costs cheapest at infinity,
   theorem labels and a (ε,δ) lower bound whose hypotheses were only sampled, staircase values
   integrated across a jump).  Each now contains an independently derived value of V* or of a
   bound on it.

2. **An adversarial net** on ℤ: costs drawn from a grammar of far dips and rises beyond any
   window, steps at unaligned breakpoints, costs vanishing at infinity and near-symmetric costs.
   Each result is compared with an *independent* pair of bounds on V* from a much wider window:

   * a lower bound: the all-pairs relaxation on [−N, N] (every pair within the sensitivity,
     p_i <= E·p_j with E a float >= e^ε, the mass outside priced at the cost's minimum there),
     whose dual is re-verified in exact rational arithmetic (any y >= 0 gives the bound
     min(m_out, min_k c_k + (Aᵀy)_k), by weak duality);
   * an upper bound: the smallest ε-DP majorant of that relaxation's window pmf (exactly ε-DP by
     construction, whatever the solver's tolerances), priced at the cost.

   optmech's lower bound must not exceed the independent upper bound, and its upper bound must
   not fall below the independent lower bound.  The default run draws a fixed, derandomised set;
   ``OPTMECH_SOUNDNESS_EXAMPLES=N`` runs N random cases (marked ``slow``).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import optmech
from optmech.costs import parse_cost
from optmech.mechanisms import references_for
from optmech.mechanisms.staircase import Staircase, staircase_cost_abs
from optmech.spec import ApproxDP, Continuous, IntegerLattice, Problem, PureDP


def _pure(cost: str, eps: float, sens: float, domain, **kw) -> optmech.Result:
    return optmech.solve(Problem(PureDP(eps), parse_cost(cost), sens, domain, **kw))


# -- proofs of the reductions' hypotheses ----------------------------------------------------------
@pytest.mark.parametrize("text, real, integer", [
    ("abs(x)", True, True),
    ("x**2 + abs(x)**0.5", True, True),
    ("min(abs(x), 3)", True, True),
    ("where(abs(x) < 3, abs(x), 3 + 2*(abs(x) - 3))", True, True),
    ("where(abs(x) <= 0.5, 0, 1)", True, True),
    ("1 - exp(-abs(x))", True, True),
    ("x**2 - abs(x)", False, True),                           # decreasing on [0, 1/2] only between integers
    # the audit's costs: a far drop, a far dip, a cost vanishing at infinity
    ("where(abs(x) < 40, abs(x), 0.5 + abs(x)/10000)", False, False),
    ("where(abs(x) < 25, abs(x), 0.5 + abs(x)/10000)", False, False),
    ("abs(x)/(1 + (abs(x)/50)**2)", False, False),
    ("abs(x) + where(abs(x) > 1e9, -1, 0)", False, False),   # a dip far beyond any window
    ("where(abs(x) > 0.76, 1, 0) + 0.01*abs(x)", True, True),  # a step at a decimal that is no float
    ("(abs(x) > 0.76) + 0.01*abs(x)", True, True),
    ("where(abs(x) < 0.1, 3*abs(x), 0.19 + abs(x))", False, True),  # a drop at 0.1, between integers
    ("where(abs(x) > 1e12, 0, abs(x))", False, False),
    ("abs(x) + 1e-9*x", False, False),                        # near-symmetric
    ("where(x > 0, x, 2*abs(x))", False, False),
])
def test_symmetric_nondecreasing_is_proven_or_refused(text, real, integer):
    c = parse_cost(text)
    assert c.is_symmetric_nondecreasing() is real
    assert c.is_symmetric_nondecreasing(integer=True) is integer


@pytest.mark.parametrize("text, even", [
    ("abs(x - 1) + abs(x + 1)", False),  # even, but not provable by construction: refused, never assumed
    ("x**2*abs(x) + x**4", True), ("x*x", True), ("x**3*x", True), ("x**3", False),
    ("where(abs(x) > 2, x**2, 0)", True), ("where(x > 2, x**2, 0)", False),
])
def test_evenness_by_construction(text, even):
    assert parse_cost(text).is_even() is even


def test_domain_minimum_covers_the_negative_integers_beyond_4096():
    assert parse_cost("where(x < -5000.5, 1, abs(x) + 2)").domain_minimum(integer=True) <= 1.0
    assert parse_cost("where(x < -1e9, 1, abs(x) + 2)").domain_minimum(integer=True) <= 1.0
    assert parse_cost("abs(x)/(1 + (abs(x)/50)**2)").domain_minimum(integer=True) >= 0.0


# -- the audit's commands ------------------------------------------------------------------------
def test_far_drop_on_integers_is_solved_without_the_symmetric_reduction():
    # V* in [0.50526265065, 0.50526265066] (independent LP on ±3000 with an exactly verified dual);
    # the net below re-derives such values; here we check the bracket and that no V* label is given
    r = _pure("where(abs(x) < 40, abs(x), 0.5 + abs(x)/10000)", 1.0, 1.0, IntegerLattice())
    assert r.certified and r.lower_bound <= 0.50526265066 and r.upper_bound >= 0.50526265065
    assert r.lp["builder"] != "periodic"
    assert not any("symmetric, monotone" in c for c in r.claims)


def test_references_are_not_labelled_optimal_without_proof():
    r = _pure("where(abs(x) < 70, abs(x), 0.5 + abs(x)/10000)", 1.0, 1.0, IntegerLattice())
    names = {ref.name for ref in r.references}
    assert "geometric" not in names
    # the best discrete staircase is listed as an upper bound only (the cost is not proven monotone)
    ds = next(ref for ref in r.references if ref.name == "discrete_staircase")
    assert "optimum V*" not in ds.note and "not known to be V*" in ds.note
    assert r.lower_bound <= 0.50832 <= r.upper_bound + 1e-5


def test_approx_theorem_lower_bound_needs_a_proven_cost_condition():
    from optmech.families.relaxed import approx_references

    refs = {b.name: b for b in approx_references("where(abs(x) < 300, abs(x), 0.5 + abs(x)/100000)", 1.0, 0.01191, 4)}
    assert refs["thm_lower_bound"].valid is False
    assert "NOT a valid lower bound" in refs["thm_lower_bound"].note
    r = optmech.solve(Problem(ApproxDP(1.0, 0.01191), parse_cost("where(abs(x) < 300, abs(x), 0.5 + abs(x)/100000)"),
                              4.0, IntegerLattice(), target_gap=1e-6))
    assert r.certified and r.lower_bound <= 0.4974 + 1e-4
    assert all(not (ref.name == "thm_lower_bound" and getattr(ref, "valid", False)) for ref in r.references)


def test_far_dip_on_the_line_never_excluded():
    # an exactly 1-DP symmetric density (e^{|x|-25} on |x| < 25, flat to 710, then e^{-(|x|-710)})
    # costs 0.5709532: the certified lower bound must not exceed it
    r = _pure("where(abs(x) < 25, abs(x), 0.5 + abs(x)/10000)", 1.0, 1.0, Continuous(), target_gap=3e-2)
    assert r.certified and r.lower_bound <= 0.5709532
    assert not any("symmetric, monotone" in c for c in r.claims)


@pytest.mark.parametrize("domain", [IntegerLattice(), Continuous()])
def test_cost_vanishing_at_infinity_is_an_infimum(domain):
    # V* = 0: discrete Laplace noise centred at 10^6 already costs about 0.0025, and the cost is >= 0
    r = _pure("abs(x)/(1 + (abs(x)/50)**2)", 1.0, 1.0, domain)
    assert r.certified and r.status == "infimum_at_infinity"
    assert r.lower_bound <= 0.0 <= r.upper_bound <= 1e-6
    assert "infimum" in r.message


def test_cost_cheapest_far_out_keeps_the_far_upper_bound():
    # flat 0.5 beyond |x| = 40: noise far out costs 0.5, and nothing costs less than 0.5 - 1e-9
    r = _pure("where(abs(x) < 40, abs(x), 0.5)", 1.0, 1.0, IntegerLattice())
    assert r.certified and r.lower_bound <= 0.5 <= r.upper_bound <= 0.5 + 1e-6


def _staircase_step_cost(eps, delta, gamma, c, k):
    """E[1{|X| > c} + k|X|] under the staircase: the closed-form survival function and E|X|."""
    m = Staircase(epsilon=eps, sensitivity=delta, gamma=gamma)
    return 2.0 * float(m._sf(np.array([c]))[0]) + k * staircase_cost_abs(eps, delta, gamma)


@pytest.mark.parametrize("c", [0.75, 0.5, 1.25, 0.76])
def test_staircase_reference_for_a_step_cost(c):
    eps, delta, k = 1.9999, 0.37, 0.01
    refs = references_for(parse_cost(f"where(abs(x) > {c}, 1, 0) + {k}*abs(x)"), eps, delta, "continuous")
    stair = next(r for r in refs if r.name == "staircase")
    # independent: minimise the closed-form value over a dense γ grid plus the kink c mod Δ
    gammas = np.unique(np.concatenate([np.linspace(0, 1, 20001), [math.fmod(c, delta) / delta]]))
    best = min(_staircase_step_cost(eps, delta, g, c, k) for g in gammas)
    assert stair.value == pytest.approx(best, rel=1e-9)
    assert stair.value <= best * (1 + 1e-12)


@pytest.mark.slow  # a long solve: the default suite keeps to its time budget
def test_step_cost_bracket_contains_the_staircase_optimum():
    # the audit's item 6: the true staircase minimum 0.015597109037 (γ = 0.02/0.37), now proven optimal
    # (the step at the decimal 0.76 is proven upward) and inside the certified bracket
    r = _pure("where(abs(x) > 0.76, 1, 0) + 0.01*abs(x)", 1.9999, 0.37, Continuous())
    assert r.certified and r.lower_bound <= 0.015597109037 <= r.upper_bound
    stair = next(ref for ref in r.references if ref.name == "staircase")
    assert stair.value == pytest.approx(0.015597109037, rel=1e-10) and stair.inside_bracket


def test_audit_commands_as_a_user_runs_them():
    cmd = [sys.executable, "-m", "optmech", "solve", "--privacy", "pure", "--domain", "integer", "--sensitivity", "1",
           "--epsilon", "1", "--cost", "where(abs(x) < 40, abs(x), 0.5 + abs(x)/10000)", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["certified"] and d["lower_bound"] <= 0.50526265066 <= d["upper_bound"] + 1e-10


# -- the adversarial net ---------------------------------------------------------------------------
EXTENDED = int(os.environ.get("OPTMECH_SOUNDNESS_EXAMPLES", "0"))
WINDOW = 600  # the independent window [−N, N]


@st.composite
def adversarial_costs(draw) -> str:
    base = draw(st.sampled_from(["abs(x)", "x**2/4", "abs(x)**0.5", "min(abs(x), 6)"]))
    T = draw(st.integers(3, 300))
    h = draw(st.sampled_from([0.2, 0.5, 1.5]))
    kind = draw(st.sampled_from(["dip", "rise", "step", "vanish", "near_sym", "shifted_step"]))
    if kind == "dip":      # cheaper beyond T, then growing slowly
        return f"where(abs(x) < {T}, {base}, {h} + abs(x)/{draw(st.sampled_from([50, 1000, 10000]))})"
    if kind == "rise":     # a wall beyond T
        return f"{base} + where(abs(x) > {T}, {h}*{T}, 0)"
    if kind == "step":     # a step at an unaligned breakpoint
        return f"where(abs(x) > {T + 0.37}, {h}, 0) + 0.01*abs(x)"
    if kind == "vanish":   # decreasing to 0 beyond T
        return f"abs(x)/(1 + (abs(x)/{T})**2)"
    if kind == "near_sym":
        return f"{base} + {draw(st.sampled_from([1e-9, 1e-4, 0.05]))}*where(x > 0, 1, 0)"
    return f"where(x > {T}, {h}, 0) + 0.01*abs(x) + where(x < {-T // 2}, {h}, 0)"


def _independent_bounds(cost, eps: float, D: int, N: int = WINDOW) -> tuple[float, float]:
    """(lower, upper) bounds on V* for ε-DP noise on ℤ, independent of optmech's builders."""
    k = np.arange(-N, N + 1)
    n = k.size
    c_lo, c_hi = cost.enclose(k.astype(float), k.astype(float))
    E = float(np.nextafter(math.exp(eps), math.inf))
    out_lo = min(float(cost.enclose(float(N + 1), math.inf)[0]), float(cost.enclose(-math.inf, float(-N - 1))[0]))
    # pairs (i, j), 0 < |i - j| <= D, both in the window: p_i - E p_j <= 0
    I, J = [], []
    for s in range(1, D + 1):
        a = np.arange(n - s)
        I += [a, a + s]
        J += [a + s, a]
    I, J = np.concatenate(I), np.concatenate(J)
    m = I.size
    A = sp.csr_array((np.concatenate([np.ones(m), -E * np.ones(m)]), (np.tile(np.arange(m), 2), np.concatenate([I, J]))),
                     shape=(m, n + 1))
    obj = np.append(np.where(np.isfinite(c_lo), c_lo, 1e300), out_lo if math.isfinite(out_lo) else 0.0)
    res = linprog(obj, A_ub=A, b_ub=np.zeros(m), A_eq=np.ones((1, n + 1)), b_eq=[1.0], bounds=(0, None), method="highs")
    assert res.status == 0, res.message
    # exact weak duality: any y >= 0 gives min(out, min_k c_k + (A^T y)_k) <= V*
    y = np.maximum(-res.ineqlin.marginals, 0.0)
    yF = [Fraction(float(v)) for v in y]
    EF = Fraction(E)
    col = [Fraction(float(v)) for v in obj[:n]]
    for r in np.flatnonzero(y):
        col[I[r]] += yF[r]
        col[J[r]] -= EF * yF[r]
    lower = min([Fraction(float(out_lo))] + col) if math.isfinite(out_lo) else min(col)
    lower = float(lower) if lower <= 0 else float(np.nextafter(float(lower), -math.inf))
    # upper: the smallest ε-DP majorant of the relaxation's window pmf, q_i = max_j p_j b^ceil(|i-j|/D) on
    # [-N-T, N+T] (b = e^-ε; exactly ε-DP up to float rounding whatever the solver's tolerances), priced
    # at the cost; beyond ±(N+T) its mass is below e^-60 of the total and ignored
    p = np.maximum(res.x[:n], 0.0)
    T = int(math.ceil(60.0 * D / eps))
    kk = np.arange(-N - T, N + T + 1)
    steps = np.ceil(np.abs(kk[:, None] - k[None, :]) / D)
    q = np.max(p[None, :] * np.exp(-eps * steps), axis=1)
    if not np.sum(q) > 1e-6:  # the relaxation parked (almost) everything outside the window: no upper bound
        return lower, math.inf
    upper = float(np.sum(q * cost(kk.astype(float))) / np.sum(q))
    return lower, upper


def _net_settings(default: int):
    return settings(max_examples=EXTENDED or default, deadline=None, derandomize=not EXTENDED, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _check_case(cost_text: str, eps: float, D: int) -> None:
    cost = parse_cost(cost_text)
    try:
        r = optmech.solve(Problem(PureDP(eps), cost, float(D), IntegerLattice(), target_gap=1e-6), time_limit=60)
    except optmech.SpecError:
        return  # a one-line refusal is allowed
    lo, up = _independent_bounds(cost, eps, D)
    if r.certified:
        assert r.lower_bound <= up * (1 + 1e-7) + 1e-9, (cost_text, eps, D, r.lower_bound, up)
        assert r.upper_bound >= lo - 1e-9, (cost_text, eps, D, r.upper_bound, lo)


@_net_settings(12)
@given(cost=adversarial_costs(), eps=st.sampled_from([0.5, 1.0, 2.0]), D=st.integers(1, 2))
def test_adversarial_net(cost, eps, D):
    _check_case(cost, eps, D)


@pytest.mark.slow
@pytest.mark.skipif(not EXTENDED, reason="set OPTMECH_SOUNDNESS_EXAMPLES=N for the extended run")
@_net_settings(1)
@given(cost=adversarial_costs(), eps=st.floats(0.3, 3.0).map(lambda v: round(v, 2)), D=st.integers(1, 3))
def test_adversarial_net_extended(cost, eps, D):
    _check_case(cost, eps, D)


def test_net_catches_the_old_failure():
    # the independent bounds alone place V* of the audit's first command where it is
    lo, up = _independent_bounds(parse_cost("where(abs(x) < 40, abs(x), 0.5 + abs(x)/10000)"), 1.0, 1)
    assert lo <= 0.50526265066 and up >= 0.50526265065 and up - lo < 1e-6
    assert up < 0.8509181282  # the old, wrong "certified" lower bound exceeds it


def test_approx_cost_vanishing_at_infinity_is_an_infimum():
    # (ε,δ) on ℤ: a shift of the audited pmf is (ε,δ)-DP; far out the cost tends to 0, its floor
    r = optmech.solve(Problem(ApproxDP(1.0, 0.01), parse_cost("abs(x)/(1 + (abs(x)/50)**2)"), 1.0, IntegerLattice()))
    assert r.certified and r.status == "infimum_at_infinity"
    assert r.lower_bound <= 0.0 <= r.upper_bound <= 1e-6


def test_sign_split_costs_are_proven_even():
    assert parse_cost("where(x > 0, x*x + x, x*x - x)").is_symmetric_nondecreasing()
    assert parse_cost("where(x < 0, -x, x)").is_even()
    assert not parse_cost("where(x > 0, x*x + x, x*x + x)").is_even()
    assert not parse_cost("where(x >= 0, x, 3*abs(x))").is_even()


@pytest.mark.parametrize("domain, sens", [(Continuous(), 1.0), (IntegerLattice(), 5.0)])
def test_extreme_epsilon_stops_with_a_reason_and_a_certified_bracket(domain, sens):
    r = _pure("square", 29.9, sens, domain)
    assert r.certified and 0 < r.lower_bound <= r.upper_bound
    stair = next(ref for ref in r.references if ref.name in ("staircase", "discrete_staircase"))
    assert r.lower_bound <= stair.value <= r.upper_bound * (1 + 1e-9)   # the theorem's V* (closed form) inside
    assert r.seconds < 60 and len(r.history) < 30
    if r.status != "optimal":
        assert "conditioning" in r.message or "stopped improving" in r.message
