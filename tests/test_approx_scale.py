"""(ε, δ) on ℤ at scale: the edge rows of the 1-D relaxation and shift row generation.

The relaxation property is checked directly: an (ε, δ)-DP law whose support runs past the box is
mapped to the LP's variables (masses on the box, the far mass, each epigraph variable at its
positive part) and must satisfy every row.  The laws are built here (truncated discrete Laplace,
truncation point found by an independent brute-force hockey-stick sum), not by the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import optmech
import optmech.families.approx as approx_family
from optmech.costs import parse_cost
from optmech.problems.approx import build_approx
from optmech.solvers.highs import HighsBackend
from optmech.spec import ApproxDP, IntegerLattice, Problem


def brute_delta(w: np.ndarray, eps: float, D: int) -> float:
    """max over 0 < |v| <= Δ of Σ_x (w(x) − e^ε w(x+v))_+, by direct sums (w zero outside its array)."""
    e = math.exp(eps)
    pad = np.concatenate([np.zeros(D), w, np.zeros(D)])
    M = len(w)
    out = 0.0
    for v in range(-D, D + 1):
        if v:
            out = max(out, float(np.maximum(pad[D:D + M] - e * pad[D + v:D + v + M], 0.0).sum()))
    return out


def truncated_laplace(eps: float, delta: float, D: int, centre: int = 0) -> tuple[np.ndarray, int]:
    """A discrete Laplace of rate ε/Δ on [−A, A] + centre, A the smallest width whose brute-force
    δ(ε) is at most δ/2 (a law that uses its δ at the truncation edge): (pmf, offset of index 0)."""
    for A in range(D, 100000, max(1, D // 2)):
        k = np.arange(-A, A + 1)
        w = np.exp(-eps * np.abs(k) / D)
        w /= w.sum()
        if brute_delta(w, eps, D) <= delta / 2:
            return w, -A + centre
    raise AssertionError("no truncation found")


def image_in_lp(alp, w: np.ndarray, k0: int) -> np.ndarray:
    """The law w (w[i] at k0 + i) as a point of the LP: p on the box (its column's value), the far
    mass, and every epigraph variable at the positive part of its row."""
    lp = alp.lp
    x = np.zeros(lp.c.size)
    R = alp.R
    k = np.arange(-R, R + 1)
    full = np.zeros(len(k))
    inside = (k - k0 >= 0) & (k - k0 < len(w))
    full[inside] = w[(k - k0)[inside]]
    x[alp.point_var] = full  # every point of a column has the same mass (the laws here are even where reduced)
    x[lp.col_blocks["far"].start] = 1.0 - full.sum()
    r = lp.A @ x  # epigraph columns are still 0: each row's value without its own t
    t = lp.col_blocks["t"]
    for name in ("hockey_stick", "edge"):
        rows = lp.row_blocks.get(name)
        if rows is None:
            continue
        coo = lp.A[rows].tocoo()  # each row's own epigraph column has coefficient −1
        tcol = coo.col[(coo.col >= t.start) & (coo.data == -1.0)]
        trow = coo.row[(coo.col >= t.start) & (coo.data == -1.0)]
        x[tcol] = np.maximum(r[rows][trow], 0.0)
    return x


@pytest.mark.parametrize("eps,delta,D,sym,centre", [(0.5, 0.05, 3, "auto", 0), (0.2, 0.02, 4, "auto", 0),
                                                     (0.5, 0.05, 3, "off", 2), (1.0, 0.1, 5, "off", -3)])
def test_edge_rows_admit_every_private_law(eps, delta, D, sym, centre):
    """A DP law whose support runs past the box is feasible for the edge-row relaxation."""
    w, k0 = truncated_laplace(eps, delta, D, centre)
    assert brute_delta(w, eps, D) <= delta
    A = (len(w) - 1) // 2
    N = max(1, A - 2 * D)  # the box [−N−Δ, N+Δ] cuts the law: far mass and edge mass are both positive
    alp = build_approx(parse_cost("abs"), eps, delta, D, N, symmetry=sym, edge_rows=True)
    assert alp.lp.row_blocks["edge"].stop > alp.lp.row_blocks["edge"].start
    x = image_in_lp(alp, w, k0)
    assert x[alp.lp.col_blocks["far"].start] > 0
    r = alp.lp.A @ x
    tol = 1e-12
    assert np.all(r <= alp.lp.row_upper + tol) and np.all(r >= alp.lp.row_lower - tol)
    assert np.all(x <= alp.lp.col_upper + tol)


@pytest.mark.parametrize("eps,delta,D,cost,sym", [(0.1, 0.01, 6, "abs", "auto"), (0.1, 0.02, 5, "square", "auto"),
                                                  (0.1, 0.01, 4, "where(x > 0, x, 2*abs(x))", "off")])
def test_edge_rows_close_the_small_window(eps, delta, D, cost, sym):
    """With edge rows the LP on N ≈ Δ(n + 1) equals the plain relaxation on twice the window (whose
    value the audited upper bound meets), where the plain LP on the small window falls short."""
    L = parse_cost(cost)
    from optmech.mechanisms.approx_bounds import thm8_n

    n = thm8_n(eps, delta)
    small = int(math.ceil(1.25 * D * (n + 1))) + D
    wide = int(2 * D * (math.ceil(n) + 2)) * 2
    hb = HighsBackend()
    ref = hb.solve(build_approx(L, eps, delta, D, wide, symmetry=sym).lp, {}).objective
    edge = hb.solve(build_approx(L, eps, delta, D, small, symmetry=sym, edge_rows=True).lp, {}).objective
    plain = hb.solve(build_approx(L, eps, delta, D, small, symmetry=sym).lp, {}).objective
    assert edge == pytest.approx(ref, rel=1e-8)
    assert plain < ref * (1 - 1e-4)


def solve(eps, delta, D, cost="abs", **kw):
    return optmech.solve(Problem(privacy=ApproxDP(eps, delta), cost=parse_cost(cost), sensitivity=D,
                                 domain=IntegerLattice(), **kw))


def test_shift_row_generation_adds_the_violated_shifts(monkeypatch):
    """Starting from too few shifts, the loop adds those the audit finds violated; the bracket then
    agrees with the LP that keeps every shift, and every step's lower bound is below the final upper."""
    eps, delta, D = 0.3, 0.02, 12
    monkeypatch.setattr(approx_family, "ALL_SHIFTS_UP_TO", 0)
    monkeypatch.setattr(approx_family, "START_SHIFT_SHARE", 0.05)
    r = solve(eps, delta, D)
    kept = [h["size"]["shifts_kept"] for h in r.history]
    assert kept[0] == 1 and max(kept) > 1
    monkeypatch.setattr(approx_family, "START_SHIFT_SHARE", 1.0)
    full = solve(eps, delta, D)
    assert full.history[0]["size"]["shifts_kept"] == D
    assert r.certified and full.certified
    assert r.lower_bound <= full.upper_bound * (1 + 1e-12) and full.lower_bound <= r.upper_bound * (1 + 1e-12)
    assert all(h["lower_bound"] <= r.upper_bound * (1 + 1e-12) for h in r.history)
    assert r.relative_gap <= 1e-8


def test_asymmetric_cost_large_sensitivity():
    """Δ = 12 with an asymmetric cost (no reduction): certified to 1e-8 with the pmf audited."""
    r = solve(0.1, 0.01, 12, "where(x > 0, x, 2*abs(x))", symmetry="off")
    assert r.certified and r.relative_gap <= 1e-8
    assert r.audit["passed"] and r.audit["realised_delta"] <= 0.01


def test_coarse_levels_bracket_the_exact_optimum(monkeypatch):
    """Large Δ starts on the coarse lattices kℤ (k | Δ) and refines to the exact LP.  Every coarse step's
    lower bound is below, and its audited upper bound above, the exact bracket; for |x| the node prices
    are exact (k|i|), so the coarse LP at factor k is k times the exact LP of sensitivity Δ/k, solved
    here independently."""
    monkeypatch.setattr(approx_family, "COARSE_FROM", 8)
    monkeypatch.setattr(approx_family, "COARSE_START", 4)
    eps, delta, D = 0.3, 0.02, 12
    r = solve(eps, delta, D)
    ks = [h["size"].get("coarse_factor", 1) for h in r.history]
    assert ks[0] == 3 and ks[-1] == 1 and ks == sorted(ks, reverse=True) and 2 in ks
    assert r.certified and r.relative_gap <= 1e-8
    for h in r.history:
        assert h["lower_bound"] <= r.upper_bound * (1 + 1e-12)
        assert h["upper_bound"] >= r.lower_bound * (1 - 1e-12)
    monkeypatch.setattr(approx_family, "COARSE_FROM", 10**9)
    for h in r.history:
        k = h["size"].get("coarse_factor", 1)
        if k > 1:
            sub = solve(eps, delta, D // k)
            assert h["lower_bound"] == pytest.approx(k * sub.lower_bound, rel=1e-9)


def test_coarse_upper_is_an_audited_blow_up(monkeypatch):
    """Δ = 64, cost |x|, stopped after the first (coarse) step: the mechanism is private for every
    shift 1..64 by an independent brute-force sum, and its cost is the upper bound."""
    monkeypatch.setattr(approx_family, "COARSE_START", 8)
    monkeypatch.setattr(approx_family, "DECAY_FROM", 10**9)  # the per-point path (the decay path: test_approx_decay)
    r = optmech.solve(Problem(privacy=ApproxDP(0.5, 0.05), cost=parse_cost("abs"), sensitivity=64,
                              domain=IntegerLattice(), target_gap=1e-2))
    assert r.history[0]["size"]["coarse_factor"] == 8 and r.certified
    m = r.mechanism.law
    w = m.weights / m.total
    assert brute_delta(w, 0.5, 64) <= 0.05
    k = np.arange(m.k_lo, m.k_lo + len(w))
    assert math.fsum(np.abs(k) * w) == pytest.approx(r.upper_bound, rel=1e-9)
