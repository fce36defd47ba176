"""The compact W1 LP (window-minimum privacy rows, support-only epigraph, geometric tail profile)
against the direct one and against exact evaluations [QHFL22, §IV-C]: every check is on small cases."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from optmech.certify import dual_lower_bound
from optmech.drive import solve_wasserstein
from optmech.families.wasserstein import (
    _upper_approx,
    _upper_pure,
    binned_laplacian_mechanism,
    discrete_laplace_mechanism,
    initial_half_width,
    staircase003_mechanism,
    staircase_mechanism,
)
from optmech.inputs import parse_input_spec
from optmech.problems.lattice import Grid1D, LatticeMechanism
from optmech.problems.wasserstein import (
    build_wasserstein,
    mechanism_total,
    outside_support_price,
    w1_of_lattice_law,
    w1_of_mechanism,
    w1_of_pmf,
    w1_of_pmf_bounded,
)
from optmech.problems.windows import window_ratio_rows
from optmech.solvers import load_profile, solve_lp
from test_approx_scale import truncated_laplace  # the independently built (ε, δ)-DP laws of the ℤ tests


# -- the window-minimum rows are the pair rows ------------------------------------------------------
def _block_minima(p: np.ndarray, W: int) -> tuple[np.ndarray, np.ndarray]:
    """Suffix and prefix minima of p inside blocks of length 2W + 1 (plain loops)."""
    L, N = 2 * W + 1, len(p)
    smin, pmin = np.empty(N), np.empty(N)
    for j in range(N):
        start, end = (j // L) * L, min((j // L) * L + L - 1, N - 1)
        smin[j], pmin[j] = p[j:end + 1].min(), p[start:j + 1].min()
    return smin, pmin


@pytest.mark.parametrize("N,W", [(7, 1), (12, 2), (23, 3), (23, 5), (9, 4), (40, 6)])
def test_window_rows_are_the_pair_rows(N, W):
    """For random laws near the ratio boundary: the rows hold with the true block minima as auxiliaries
    exactly when every pair |i − j| <= W satisfies p_i <= e^ε p_j.  The true minima are the largest
    auxiliaries the link and chain rows allow (both bound them above), and the window rows only need
    them large, so this decides whether *some* auxiliaries satisfy the rows: the projections agree."""
    rng = np.random.default_rng(N * 100 + W)
    eps = 0.7
    E = math.exp(eps)
    seen = {True: 0, False: 0}
    for trial in range(80):
        p = np.exp(np.cumsum(rng.uniform(-eps / W, eps / W, N)))  # every pair within W is fine
        if trial % 2:  # move one point by up to e^{±1.5ε}: often breaks a pair, sometimes not
            i = rng.integers(N)
            p[i] *= math.exp(rng.uniform(-1.5, 1.5) * eps)
        s = np.exp(rng.uniform(-2, 2, N))  # any positive scale
        pair_ok = all(np.all(p[:-d] <= E * p[d:]) and np.all(p[d:] <= E * p[:-d]) for d in range(1, min(W, N - 1) + 1))
        rows = window_ratio_rows(np.arange(N), s, W, E, N, 3 * N, np.full(N, 1e9))
        smin, pmin = _block_minima(p, W)
        x = np.concatenate([p * s, smin * s, pmin * s])
        worst = max(float(np.max((mat.tocsr() @ x) / (abs(mat.tocsr()) @ x))) for _, mat, _, _ in rows.blocks)
        assert (worst <= 1e-14) == pair_ok, (trial, worst, pair_ok)
        seen[pair_ok] += 1
        assert np.all(x[rows.aux] <= rows.aux_upper)
    assert seen[True] > 10 and seen[False] > 10, seen
    # O(N) rows, independent of W
    assert sum(mat.shape[0] for _, mat, _, _ in rows.blocks) <= 6 * N


# -- a DP law is a feasible point of the compact LP, at a cost <= its W1 --------------------------------
def _lp_point(wl, inp, law: LatticeMechanism) -> np.ndarray:
    """The point the module docstring maps ``law`` to (window masses, excess far masses, window minima,
    noise cdf, epigraph values)."""
    lp, K, m = wl.lp, wl.K, wl.m
    j = np.arange(-K, K + 1)
    p = law.mass(j)
    s = lp.meta["scale"]
    x = np.zeros(lp.cols)
    x[lp.col_blocks["q"]] = p * s
    span = np.arange(-K - 200 * m, K + 200 * m + 1)
    mass = law.mass(span)
    left, right = math.fsum(mass[span < -K]), math.fsum(mass[span > K])
    tau = math.exp(-wl.epsilon) / -math.expm1(-wl.epsilon)
    x[lp.col_blocks["far"]] = [max(0.0, left - tau * math.fsum(p[:m])), max(0.0, right - tau * math.fsum(p[-m:]))]
    if "aux" in lp.col_blocks:
        smin, pmin = _block_minima(p, m)
        x[lp.col_blocks["aux"]] = np.concatenate([smin * s, pmin * s])
    if "G" in lp.col_blocks:
        g = np.arange(lp.meta["G_first"], lp.meta["G_first"] + lp.col_blocks["G"].stop - lp.col_blocks["G"].start)
        x[lp.col_blocks["G"]] = [math.fsum(mass[span <= gj]) for gj in g]
    if "epigraph_plus" in lp.row_blocks:
        Ax = lp.A @ x
        rp, rm = lp.row_blocks["epigraph_plus"], lp.row_blocks["epigraph_minus"]
        x[lp.col_blocks["t"]] = np.maximum(lp.row_lower[rp] - Ax[rp], lp.row_lower[rm] - Ax[rm])
    return x


@pytest.mark.parametrize("spec,eps,m,r", [("poisson:2:0:8", 1.0, 3, 2), ("gaussian:0:3:-8:8", 2.0, 4, 1),
                                          ("uniform:0:0", 0.5, 2, 1)])
def test_dp_law_is_a_feasible_point_of_the_compact_lp(spec, eps, m, r):
    """The staircase P_r (ε-DP, geometric beyond every period) maps to a feasible point whose objective is
    its W1 (up to rounding): a relaxation, tight for laws geometric beyond the window."""
    inp = parse_input_spec(spec)
    law = staircase_mechanism(eps, m, r)
    law.total = mechanism_total(law)
    for K in (inp.hi - inp.lo + m, inp.hi - inp.lo + 3 * m):
        wl = build_wasserstein(inp, eps, m, K)
        lp = wl.lp
        x = _lp_point(wl, inp, law)
        Ax = lp.A @ x
        scale = abs(lp.A) @ np.abs(x) + 1.0
        assert np.all(Ax >= lp.row_lower - 1e-13 * scale) and np.all(Ax <= lp.row_upper + 1e-13 * scale)
        assert np.all(x >= 0) and np.all(x <= lp.col_upper * (1 + 1e-12))
        true, err = w1_of_mechanism(inp, law)
        obj = float(lp.c @ x)
        assert obj <= true + err + 1e-12 and obj >= true - 1e-10 * true, (obj, true)


def test_outside_price_is_the_split_of_w1():
    """A shift by l has W1 = |l|: h(l) plus the support terms |F_X(k) − F_X(k − l)| is |l|."""
    inp = parse_input_spec("poisson:3:0:12")
    F = inp.cdf()
    for l in range(-20, 21):
        Fk = F[:-1]
        k = np.arange(inp.lo, inp.hi)
        Fs = np.where(k - l >= inp.hi, 1.0, np.where(k - l < inp.lo, 0.0, F[np.clip(k - l - inp.lo, 0, len(F) - 1)]))
        total = outside_support_price(inp, np.array([l]))[0] + math.fsum(np.abs(Fk - Fs))
        assert math.isclose(total, abs(l), rel_tol=1e-14, abs_tol=1e-14), l
        assert math.isclose(w1_of_pmf(inp, l, np.array([1.0])), abs(l), rel_tol=1e-13, abs_tol=1e-14)


def test_w1_rounding_bound_holds_against_exact_arithmetic():
    """w1_of_pmf_bounded's value is within its stated bound of the exact rational value of the same
    float data (Σ_k |F_X(k)·S − F_Y(k)|, fractions), and so are both lattice-law evaluators."""
    from fractions import Fraction

    rng = np.random.default_rng(5)
    for spec in ("poisson:3:0:12", "gaussian:0:2:-6:6"):
        inp = parse_input_spec(spec)
        F = [Fraction(float(v)) for v in inp.cdf()]
        dX = [F[0]] + [F[i] - F[i - 1] for i in range(1, len(F))]
        for k_first, n in ((-15, 31), (-3, 9)):
            q = rng.random(n)
            q /= q.sum()
            qf = [Fraction(float(v)) for v in q]
            S = sum(qf)
            lo, hi = inp.lo, inp.hi
            exact = Fraction(0)
            for k in range(lo + k_first - 1, hi + k_first + n + 1):
                fx = Fraction(0) if k < lo else (Fraction(1) if k >= hi else F[k - lo])
                fy = sum(qf[l - k_first] * dX[i - lo] for l in range(k_first, k_first + n)
                         for i in range(lo, hi + 1) if i + l <= k)
                exact += abs(fx * S - fy)
            val, err = w1_of_pmf_bounded(inp, k_first, q)
            assert abs(Fraction(val) - exact) <= Fraction(err), (spec, k_first, val, float(exact), err)
            assert w1_of_pmf(inp, k_first, q) == val


# -- the lattice-law evaluator -----------------------------------------------------------------------
def _laws(eps: float, m: int) -> list[LatticeMechanism]:
    rng = np.random.default_rng(m)
    laws = [staircase_mechanism(eps, m, r) for r in (1, (m + 1) // 2, m)]
    laws += [discrete_laplace_mechanism(eps, m), binned_laplacian_mechanism(m / eps), staircase003_mechanism(eps, m, 5)[0]]
    one_sided = LatticeMechanism(Grid1D.integer(1), 1, np.ones(1), 0.3, np.zeros(1), np.ones(1))
    finite = LatticeMechanism(Grid1D.integer(3), -5, rng.random(13), 0.0, np.zeros(3), np.zeros(3))
    for law in laws + [one_sided, finite]:
        law.total = mechanism_total(law)
    return laws + [one_sided, finite]


@pytest.mark.parametrize("spec", ["poisson:5:0:30", "uniform:0:0", "gaussian:0:5:-20:20", "uniform:-3:40", None])
def test_lattice_law_evaluator_agrees_with_the_extended_sum(spec):
    inp = None if spec is None else parse_input_spec(spec)
    for eps, m in ((1.0, 3), (2.0, 15), (0.5, 1)):
        for law in _laws(eps, m):
            a, ea = w1_of_mechanism(inp, law)
            b, eb = w1_of_lattice_law(inp, law)
            # the extended sum convolves in double precision: allow 1e-12 relative beside the stated bounds
            assert abs(a - b) <= ea + eb + 1e-12 * abs(a), (spec, eps, m, a, b)


# -- compact against direct, solved both ways ---------------------------------------------------------
def _bracket(wl, inp, eps, m, delta, utility):
    raw = solve_lp(wl.lp, load_profile("default"))
    lower = dual_lower_bound(wl.lp, raw.row_dual, raw.objective).value
    X = inp if utility == "wasserstein" else None
    if delta == 0:
        up = _upper_pure(inp, utility, wl.window_masses(raw.x), wl.K, eps, m)
    else:
        up = _upper_approx(inp, utility, wl.window_masses(raw.x), wl.K, eps, delta, m)
    assert up.certified and X is X
    return lower, up.value


@pytest.mark.parametrize("spec,eps,m,delta,utility", [
    ("poisson:5:0:30", 2.0, 5, 0.0, "wasserstein"),
    ("gaussian:0:3:-8:8", 1.0, 3, 0.0, "wasserstein"),
    ("poisson:3:0:10", 1.0, 2, 0.0, "surrogate"),
    ("poisson:3:0:10", 1.0, 2, 0.05, "wasserstein"),
])
def test_compact_bracket_agrees_with_the_direct_one(spec, eps, m, delta, utility):
    """The family's certified bracket (compact LP at K = w + m for pure DP) and the direct LP's bracket
    at the first version's window (built and certified here) overlap and agree to 1e-7."""
    inp = parse_input_spec(spec)
    res = solve_wasserstein(inp, eps, m, delta=delta, utility=utility, target_gap=1e-8)
    assert res.certified
    K = max(initial_half_width(inp, eps, m, 1e-8), inp.hi - inp.lo + m)
    lo_d, up_d = _bracket(build_wasserstein(inp, eps, m, K, delta=delta, utility=utility, direct=True),
                          inp, eps, m, delta, utility)
    tol = 1e-12 * up_d
    assert max(res.lower_bound, lo_d) <= min(res.upper_bound, up_d) + tol
    assert abs(res.lower_bound - lo_d) <= 1e-7 * up_d and abs(res.upper_bound - up_d) <= 1e-7 * up_d
    if delta == 0:  # the compact window is far smaller
        assert res.history[-1]["size"]["half_width"] < K


def test_sensitivity_60_is_fast_and_tight():
    """Poisson(20) on [0, 60], ε = 2, m = 60: 2·N·m pair rows before (~9 s); now one small LP, gap <= 1e-8,
    the best staircase inside the bracket or above it by at most the target."""
    t0 = time.perf_counter()
    res = solve_wasserstein(parse_input_spec("poisson:20:0:60"), 2.0, 60, target_gap=1e-8)
    sec = time.perf_counter() - t0
    assert res.certified and res.status == "optimal" and res.relative_gap <= 1e-8
    st = next(r for r in res.references if r.name == "discrete_staircase")
    assert res.lower_bound <= st.value <= res.upper_bound * (1 + 1e-8)
    assert res.lp["rows"] < 2 * 60 * (2 * res.history[-1]["size"]["half_width"] + 1)
    assert sec < 20, sec


# -- (ε, δ): the edge rows keep the relaxation valid and let the window shrink ---------------------
@pytest.mark.parametrize("spec,eps,delta,m,centre", [("poisson:1:0:2", 1.0, 0.02, 2, 0),
                                                     ("poisson:2:0:3", 0.5, 0.02, 3, 4),
                                                     ("gaussian:0:1:-1:1", 1.0, 0.02, 4, -3)])
def test_approx_edge_rows_admit_every_private_law(spec, eps, delta, m, centre):
    """An (ε, δ)-DP law whose support runs past the window on both sides maps to a feasible point of the
    δ > 0 LP (window masses, far masses, every τ and edge variable at its row's positive part, G the law's
    CDF, t from the epigraph rows), and its objective is at most the law's exact W1."""
    inp = parse_input_spec(spec)
    w, k0 = truncated_laplace(eps, delta, m, centre)
    K = inp.hi - inp.lo + m
    assert k0 < -K and k0 + len(w) - 1 > K  # the law leaves the window: far and edge rows are active
    wl = build_wasserstein(inp, eps, m, K, delta=delta)
    lp = wl.lp
    span = np.arange(k0, k0 + len(w))
    x = np.zeros(lp.cols)
    j = np.arange(-K, K + 1)
    p = np.where((j >= k0) & (j < k0 + len(w)), w[np.clip(j - k0, 0, len(w) - 1)], 0.0)
    x[lp.col_blocks["q"]] = p
    x[lp.col_blocks["far"]] = [math.fsum(w[span < -K]), math.fsum(w[span > K])]
    g = np.arange(lp.meta["G_first"], lp.meta["G_first"] + lp.col_blocks["G"].stop - lp.col_blocks["G"].start)
    x[lp.col_blocks["G"]] = [math.fsum(w[span <= gj]) for gj in g]
    # every slack column at the positive part of the one row where it has coefficient +1 (its own)
    for block, cols in (("hockey_stick_terms", "tau"), ("hockey_stick_edges", "edge")):
        rows, c = lp.row_blocks[block], lp.col_blocks[cols]
        r = lp.A @ x
        coo = lp.A[rows].tocoo()
        own = (coo.col >= c.start) & (coo.col < c.stop)
        x[coo.col[own]] = np.maximum(-r[rows][coo.row[own]], 0.0)
    assert x[lp.col_blocks["edge"]].max() > 0  # an edge row binds for this law
    Ax = lp.A @ x
    rp, rm = lp.row_blocks["epigraph_plus"], lp.row_blocks["epigraph_minus"]
    x[lp.col_blocks["t"]] = np.maximum(lp.row_lower[rp] - Ax[rp], lp.row_lower[rm] - Ax[rm])
    Ax = lp.A @ x
    scale = abs(lp.A) @ np.abs(x) + 1.0
    assert np.all(Ax >= lp.row_lower - 1e-13 * scale) and np.all(Ax <= lp.row_upper + 1e-13 * scale)
    assert np.all(x >= 0) and np.all(x <= lp.col_upper * (1 + 1e-12))
    true = w1_of_pmf(inp, k0, w)
    assert float(lp.c @ x) <= true * (1 + 1e-12) + 1e-13


@pytest.mark.parametrize("spec,eps,delta,m", [("poisson:3:0:10", 0.5, 0.01, 10), ("uniform:0:0", 1.0, 0.05, 6),
                                               pytest.param("poisson:20:0:60", 0.3, 0.001, 10, marks=pytest.mark.slow)])
def test_approx_first_window_gives_the_wide_bracket(spec, eps, delta, m):
    """The (ε, δ) family's first window (m + 1.25·m(n + 1), at least the input's width + m) gives the
    lower bound of a window three times as wide, to 1e-9, and a bracket as tight, to 1e-8 (the previous
    first window was sized for a geometric tail below the target gap: 2 to 9 times wider)."""
    from optmech.families.wasserstein import approx_half_width

    inp = parse_input_spec(spec)
    K = approx_half_width(inp, eps, delta, m)
    assert K < initial_half_width(inp, eps, m, 1e-8) / 2
    lo_s, up_s = _bracket(build_wasserstein(inp, eps, m, K, delta=delta), inp, eps, m, delta, "wasserstein")
    lo_w, up_w = _bracket(build_wasserstein(inp, eps, m, 3 * K, delta=delta), inp, eps, m, delta, "wasserstein")
    # the same lower bound, and an upper bound within the wide bracket's precision: the two uppers are the
    # audited vertices of two LPs, which differ by the solver's tolerance (5e-9 relative on one CPU, measured)
    assert abs(lo_s - lo_w) <= 1e-9 * up_w and up_s - lo_w <= 1e-8 * up_s and up_s - lo_s <= 1e-8 * up_s


def test_approx_edge_rows_tighten_a_window_that_cuts_the_optimum():
    """On a window narrower than the optimum's reach, the relaxation with edge rows still has the optimum's
    value (that of a wide window), where the one without them parks mass at the edges and falls short."""
    inp, eps, delta, m = parse_input_spec("poisson:3:0:10"), 1.0, 0.02, 4
    prof = load_profile("default")
    wide = solve_lp(build_wasserstein(inp, eps, m, 40, delta=delta).lp, prof).objective
    for K in (14, 18):
        edge = solve_lp(build_wasserstein(inp, eps, m, K, delta=delta).lp, prof).objective
        plain = solve_lp(build_wasserstein(inp, eps, m, K, delta=delta, edge_rows=False).lp, prof).objective
        assert edge == pytest.approx(wide, rel=1e-9) and plain < wide * (1 - 1e-3)
