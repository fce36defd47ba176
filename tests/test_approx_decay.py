"""The periodic-decay path of (ε, δ) on ℤ (issue 37): optmech.problems.approx_decay, optmech.certify_decay and
the family's use of them (optmech.families.approx, optmech.families.approx_decay).

Independent references: the issue's exact values V* (HiGHS on the per-point LP, 10 digits), the per-point
path's own certified bracket (a different LP and certificate), brute-force hockey-stick sums, and the
certificate's dual constraints re-derived in rational arithmetic."""

from __future__ import annotations

import doctest
import json
import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import optmech
import optmech.families.approx as approx_family
import optmech.problems.approx_decay as approx_decay
from optmech.certify_decay import decay_lower_bound
from optmech.costs import parse_cost
from optmech.families.approx_decay import far_node_price
from optmech.problems.approx import outside_min, point_costs
from optmech.problems.approx_cells import NodeCosts
from optmech.problems.approx_decay import DecayLayout, build_decay
from optmech.solvers.highs import HighsBackend
from optmech.spec import ApproxDP, IntegerLattice, NonNegativeIntegers, Problem

#: ε = 1, δ = 0.01, |x|: the issue's exact values
V_STAR = {8: 7.2549774950, 16: 14.5119723191, 32: 29.0253963481, 64: 58.0520075355}


def brute_sums(p: np.ndarray, eps: float, shifts) -> dict[int, float]:
    """Σ_x (p(x) − e^ε p(x + s))_+ for each s, by direct sums (p zero outside its array)."""
    e = math.exp(eps)
    M = len(p)
    out = {}
    for s in shifts:
        pad = np.concatenate([p, np.zeros(abs(s))]) if s > 0 else np.concatenate([np.zeros(-s), p])
        nxt = pad[s:s + M] if s > 0 else pad[:M]
        out[s] = math.fsum(np.maximum(p - e * nxt, 0.0))
    return out


def solve_decay(D, eps, delta, cost="abs", periods=None, tail=None):
    """build_decay at the family's layout, solved by HiGHS's simplex (vertex duals)."""
    from optmech.mechanisms.approx.bounds import thm8_n

    L = parse_cost(cost)
    n = thm8_n(eps, delta)
    K = periods if periods is not None else int(n)
    W = tail if tail is not None else 2 * D
    dlp = build_decay(L, eps, delta, D, K, W)
    raw = HighsBackend().solve(dlp.lp, {})
    return L, dlp, raw


def test_layout_examples():
    assert doctest.testmod(approx_decay, optionflags=doctest.ELLIPSIS).failed == 0


@pytest.mark.parametrize("first_point", [None, -5])
def test_rows_are_the_laws_hockey_stick_sums(first_point):
    """For arbitrary columns (ties included), Σ_rows ω (form)_+ at each shift is the law's hockey-stick sum
    (every row kept), or at most it (rows from first_point on)."""
    rng = np.random.default_rng(3)
    eps, m, K, W = 0.7, 5, 3, 7
    dlp = build_decay(parse_cost("abs"), eps, 0.01, m, K, W, first_point=first_point)
    lay = dlp.layout
    for trial in range(5):
        v = rng.random(lay.columns)
        v[rng.random(lay.columns) < 0.3] = 0.0
        if trial == 0:
            v[:] = 1.0  # ties everywhere
        x = dlp.points()
        col, k = lay.column_of(x)
        p = np.where(col >= 0, lay.ratio ** k * v[np.maximum(col, 0)], 0.0)
        brute = brute_sums(p, eps, range(1, m + 1))
        A = dlp.lp.A.tocsr()
        rows = dlp.lp.row_blocks["hockey_stick"]
        q = np.concatenate([v, [0.0]])
        forms = A[rows][:, :lay.columns + 1] @ q
        for i, s in enumerate(dlp.shifts):
            r = slice(dlp.row_start[i], dlp.row_start[i] + len(dlp.keys[i]))
            lp_sum = math.fsum(dlp.omega[r] * np.maximum(forms[r], 0.0))
            if first_point is None:
                assert lp_sum == pytest.approx(brute[int(s)], rel=1e-12, abs=1e-15)
            else:
                assert lp_sum <= brute[int(s)] * (1 + 1e-12) + 1e-15


def test_certificate_in_exact_arithmetic():
    """Δ = 8, ε = 1, δ = 0.01, |x|: the multipliers the bound rests on satisfy every dual constraint
    θ <= |z| + Ψ(z)/2 on the checked range in rational arithmetic with the E used (E >= e^ε, by mpmath), the
    cost is at least θ beyond it, and θ − δΣλ' is at least the reported value and at most V*."""
    import mpmath

    D, eps, delta = 8, 1.0, 0.01
    L, dlp, raw = solve_decay(D, eps, delta)
    prices = lambda z: point_costs(L, np.asarray(z)[:, None])[0]  # noqa: E731
    cert = decay_lower_bound(dlp, raw.row_dual, prices, lambda lim: outside_min(L, lim, 1), keep=True)
    mu = cert.multipliers
    mpmath.mp.dps = 50
    assert mpmath.mpf(Fraction(mu["E"]).numerator) / Fraction(mu["E"]).denominator >= mpmath.exp(mpmath.mpf(eps))
    E = Fraction(mu["E"])
    x = mu["points"]
    limit = mu["limit"]
    y = {}  # (s, x) -> Fraction
    for s, ys in zip(mu["shifts"], mu["y"]):
        for xi, yi in zip(x, ys):
            if yi:
                y[(s, int(xi))] = Fraction(float(yi))
    for z, c in enumerate(mu["chain"]):
        if c:
            y[(D, z)] = Fraction(float(c))
    lam = {s: max((v for (t, _), v in y.items() if t == s), default=Fraction(0)) for s in mu["shifts"]}
    theta = Fraction(cert.theta)
    for z in range(limit + 1):
        psi = sum(y.get((s, z), 0) - E * y.get((s, z - s), 0) + y.get((s, -z), 0) - E * y.get((s, -z - s), 0)
                  for s in mu["shifts"])
        assert theta <= z + psi / 2, z
    assert theta <= limit + 1  # |z| > limit: every multiplier at z − v is 0 and the cost is |z|
    exact = theta - Fraction(delta) * sum(lam.values())
    assert exact >= Fraction(cert.value)
    assert cert.value <= V_STAR[D] * (1 + 1e-10) and cert.value >= V_STAR[D] * (1 - 1e-12)


def test_any_multipliers_give_a_valid_bound():
    """The bound holds whatever the duals: random row duals and normalisation multipliers stay below V*."""
    rng = np.random.default_rng(7)
    D, eps, delta = 8, 1.0, 0.01
    L, dlp, raw = solve_decay(D, eps, delta)
    prices = lambda z: point_costs(L, np.asarray(z)[:, None])[0]  # noqa: E731
    for _ in range(20):
        y = raw.row_dual * rng.uniform(0.0, 2.0, raw.row_dual.size)
        y[0] = raw.row_dual[0] * rng.uniform(0.5, 1.5)
        cert = decay_lower_bound(dlp, y, prices, lambda lim: outside_min(L, lim, 1))
        assert cert.value <= V_STAR[D] * (1 + 1e-12)


@pytest.mark.parametrize("D", [16, 32, 64])
def test_family_brackets_the_issue_values(D):
    r = optmech.solve(Problem(privacy=ApproxDP(1.0, 0.01), cost="abs", domain=IntegerLattice(), sensitivity=D,
                              target_gap=1e-9))
    assert r.status == "optimal" and r.certified and r.relative_gap <= 1e-9
    assert r.lower_bound <= V_STAR[D] * (1 + 1e-10) and V_STAR[D] * (1 - 1e-10) <= r.upper_bound
    assert r.to_dict()["lp"]["builder"] == "hockey_stick_decay"


@pytest.mark.parametrize("eps, delta, cost", [(0.5, 1e-6, "square"), (2.0, 0.01, "abs")])
def test_agrees_with_the_per_point_path(eps, delta, cost, monkeypatch):
    """Two independent certificates (this path's, and the per-point relaxation's repaired dual with its own
    audited law) bracket the same V*: each lower end is below the other's upper end."""
    D = 16
    prob = Problem(privacy=ApproxDP(eps, delta), cost=cost, domain=IntegerLattice(), sensitivity=D, target_gap=1e-8)
    a = optmech.solve(prob)
    assert a.to_dict()["lp"]["builder"] == "hockey_stick_decay"
    monkeypatch.setattr(approx_family, "DECAY_FROM", 10**9)
    b = optmech.solve(prob)
    assert b.to_dict()["lp"]["builder"] != "hockey_stick_decay"
    assert a.certified and b.certified and a.relative_gap <= 1e-8
    assert a.lower_bound <= b.upper_bound * (1 + 1e-12) and b.lower_bound <= a.upper_bound * (1 + 1e-12)


def test_coarse_levels_refine_to_the_exact_value(monkeypatch):
    """Δ = 64 started on the coarse lattice 4ℤ: every step's bounds bracket the issue's V*, the levels get
    finer, and the final law is private at every shift by brute force."""
    monkeypatch.setattr(approx_family, "first_level", lambda sensitivity, seconds, coarse_ok, one_sided=False: 4)
    r = optmech.solve(Problem(privacy=ApproxDP(1.0, 0.01), cost="abs", domain=IntegerLattice(), sensitivity=64,
                              target_gap=1e-9))
    ks = [h["size"].get("coarse_factor", 1) for h in r.history]
    assert ks[0] == 4 and ks[-1] == 1 and ks == sorted(ks, reverse=True)
    for h in r.history:
        assert h["lower_bound"] <= V_STAR[64] * (1 + 1e-10) <= h["upper_bound"] * (1 + 2e-10)
    assert r.certified and r.relative_gap <= 1e-9
    law = r.mechanism.law
    w = law.weights / law.total
    sums = brute_sums(w, 1.0, [s for s in range(-64, 65) if s])
    assert max(sums.values()) <= 0.01 * (1 + 1e-9)
    k = np.arange(law.k_lo, law.k_lo + len(w))
    assert math.fsum(np.abs(k) * w) <= r.upper_bound * (1 + 1e-12)


@pytest.mark.parametrize("cost", ["abs", "square"])
def test_far_node_price_bounds_the_node_prices(cost):
    nodes = NodeCosts(parse_cost(cost), 1000.0, 125)  # h = 8 (not a power of two: rounded nodes)
    limit = 300
    far = far_node_price(nodes, limit)
    z = np.arange(limit + 1, limit + 20000)
    assert np.all(nodes.lower(z) >= far) and np.all(nodes.lower(-z) >= far)


def test_asymmetric_cost_takes_the_per_point_path():
    r = optmech.solve(Problem(privacy=ApproxDP(1.0, 0.01), cost="where(x >= 0, x, 2*abs(x))",
                              domain=IntegerLattice(), sensitivity=16))
    assert r.to_dict()["lp"]["builder"] != "hockey_stick_decay" and r.certified


def test_cli_json():
    """The command line's whole stdout is one JSON document naming the layout, the builder and both ends."""
    out = subprocess.run([sys.executable, "-m", "optmech", "solve", "--privacy", "approx", "--epsilon", "0.1",
                          "--delta", "1e-8", "--sensitivity", "24", "--cost", "abs", "--target-gap", "1e-8",
                          "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["status"] == "optimal" and res["certified"] and res["relative_gap"] <= 1e-8
    assert res["lp"]["builder"] == "hockey_stick_decay" and res["truncation"]["layout"] == "periodic_decay"
    assert res["audit"]["passed"] and res["audit"]["realised_delta"] <= 1e-8
    assert any("dual of the full problem on Z" in c for c in res["claims"])


def test_layout_bad_input():
    from optmech.errors import SpecError

    with pytest.raises(SpecError):
        build_decay(parse_cost("abs"), 1.0, 0.01, 4, 0, 3)
    with pytest.raises(SpecError):
        build_decay(parse_cost("abs"), 1.0, 0.01, 4, 2, 3, shifts=[5])
    assert DecayLayout(4, 2, 3, 1.0).support_half_width == 11


# -- noise on ℕ: the one-sided layout ---------------------------------------------------------------------
ASYM = "where(x >= 0, x, 2*abs(x))"


def test_onesided_certificate_in_exact_arithmetic():
    """Δ = 16, ε = 0.5, δ = 0.01 on ℕ: every dual constraint θ <= L(z) + Ψ(z) at z = 0..limit holds in rational
    arithmetic with the multipliers the bound rests on (signed shifts, both chains), the cost is at least θ
    beyond, and θ − δΣλ is at least the reported value."""
    from optmech.certify_decay import onesided_lower_bound
    from optmech.problems.approx_decay import OneSidedLayout, build_decay_onesided

    D, eps, delta = 16, 0.5, 0.01
    L = parse_cost(ASYM)
    lay = OneSidedLayout(D, 6, 2 * D, 5, 3 * D, eps)
    dlp = build_decay_onesided(L, eps, delta, lay)
    raw = HighsBackend().solve(dlp.lp, {})
    prices = lambda z: point_costs(L, np.asarray(z)[:, None])[0]  # noqa: E731
    cert = onesided_lower_bound(dlp, raw.row_dual, prices, lambda lim: outside_min(L, lim, 1), keep=True)
    mu = cert.multipliers
    E = Fraction(mu["E"])
    y = {}
    for v, ys in zip(mu["shifts"], mu["y"]):
        for xi, yi in zip(mu["points"], ys):
            if yi:
                y[(v, int(xi))] = Fraction(float(yi))
    for z, c in enumerate(mu["up_chain"]):
        if c:
            y[(D, z)] = Fraction(float(c))
    for z, c in enumerate(mu["down_chain"]):
        if c:
            y[(-D, z)] = Fraction(float(c))
    lam = {v: max((w for (t, _), w in y.items() if t == v), default=Fraction(0)) for v in mu["shifts"]}
    theta = Fraction(cert.theta)
    for z in range(mu["limit"] + 1):
        psi = sum(y.get((v, z), 0) - E * y.get((v, z - v), 0) for v in mu["shifts"])
        assert theta <= z + psi, z
    assert theta <= mu["limit"] + 1
    assert theta - Fraction(delta) * sum(lam.values()) >= Fraction(cert.value)
    assert cert.value <= raw.objective * (1 + 1e-9) and cert.value >= raw.objective * (1 - 1e-9)


def test_onesided_family_agrees_with_the_per_point_path(monkeypatch):
    """Noise on ℕ with the issue's asymmetric cost: the one-sided path and the per-point path (p = 0 below 0)
    bracket the same V*, and the law is supported on ℕ and private at every shift by brute force."""
    prob = Problem(privacy=ApproxDP(0.5, 0.01), cost=ASYM, domain=NonNegativeIntegers(), sensitivity=16,
                   target_gap=1e-8)
    a = optmech.solve(prob)
    assert a.to_dict()["lp"]["builder"] == "hockey_stick_decay" and a.history[0]["size"]["layout"] == "one_sided_decay"
    assert a.certified and a.relative_gap <= 1e-8
    law = a.mechanism.law
    w = law.weights / law.total
    k = np.arange(law.k_lo, law.k_lo + len(w))
    assert np.all(w[k < 0] == 0)
    sums = brute_sums(w, 0.5, [s for s in range(-16, 17) if s])
    assert max(sums.values()) <= 0.01 * (1 + 1e-9)
    monkeypatch.setattr(approx_family, "DECAY_FROM", 10**9)
    b = optmech.solve(prob)
    assert b.to_dict()["lp"]["builder"] != "hockey_stick_decay" and b.certified
    assert a.lower_bound <= b.upper_bound * (1 + 1e-12) and b.lower_bound <= a.upper_bound * (1 + 1e-12)
