"""(ε, δ)-DP on ℤ^d: the signed-permutation orbit reduction of :func:`build_approx` is exact.

The reduced LP's optimum is compared with the unreduced LP (``symmetry="off"``) and with the ±x
LP (``symmetry="even"``) on small boxes; the orbit bookkeeping is checked against brute-force
enumeration of the hyperoctahedral group; the full solve in d = 3, Δ = 2 is certified, its pmf
passes an independent hockey-stick check for every shift, and in d = 2 it agrees with the
unreduced solve.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import optmech
from optmech.certify import dual_lower_bound
from optmech.problems.approx import build_approx, estimate_size, shift_vectors
from optmech.solvers import load_profile, solve_lp
from optmech.spec import ApproxDP, IntegerLattice, Problem


def signed_permutations(d: int) -> list[tuple[tuple[int, ...], np.ndarray]]:
    return [(perm, np.array(signs)) for perm in itertools.permutations(range(d))
            for signs in itertools.product((1, -1), repeat=d)]


def box_coords(R: int, d: int) -> np.ndarray:
    side = 2 * R + 1
    return np.stack(np.unravel_index(np.arange(side**d), (side,) * d), axis=-1) - R


def flat_index(x: np.ndarray, R: int) -> np.ndarray:
    side = 2 * R + 1
    return np.ravel_multi_index(tuple((x + R).T), (side,) * x.shape[1])


def lp_value(alp):
    raw = solve_lp(alp.lp, load_profile("default"))
    return raw.objective, dual_lower_bound(alp.lp, raw.row_dual, raw.objective).value, raw


CASES = [  # d, Δ, N, cost, ε, δ
    (2, 1, 5, "l1", 1.0, 0.1),
    (2, 2, 5, "l2sq", 0.5, 0.05),
    (2, 2, 6, "linf", 0.3, 0.1),
    (2, 2, 4, "l2", 1.0, 0.02),
    (3, 1, 3, "linf", 1.0, 0.1),
    (3, 2, 3, "l1", 0.7, 0.05),
    (3, 2, 2, "l2sq", 1.5, 0.1),
]


@pytest.mark.parametrize("d,D,N,cost,eps,delta", CASES)
def test_reduced_lp_optimum_equals_unreduced(d, D, N, cost, eps, delta):
    orb = build_approx(cost, eps, delta, D, N, dim=d)
    even = build_approx(cost, eps, delta, D, N, dim=d, symmetry="even")
    off = build_approx(cost, eps, delta, D, N, dim=d, symmetry="off")
    assert (orb.symmetry, orb.variant, even.symmetry, off.symmetry) == ("orbits", "hockey_stick_orbits", "even", "none")
    v_orb, lo_orb, raw = lp_value(orb)
    v_even, _, _ = lp_value(even)
    v_off, _, _ = lp_value(off)
    assert v_orb == pytest.approx(v_off, rel=1e-9) and v_even == pytest.approx(v_off, rel=1e-9)
    # the reduced LP's certificate bounds the unreduced relaxation (hence V*) from below
    assert lo_orb <= v_off * (1 + 1e-12) and lo_orb >= v_off * (1 - 1e-9)
    # the lifted primal is feasible for the unreduced LP: every hockey-stick sum within δ, mass 1
    p = orb.box_masses(raw.x)
    inner = tuple(slice(orb.R - N, orb.R + N + 1) for _ in range(d))
    side = 2 * orb.R + 1
    for v in shift_vectors(d, D, half=False):
        q = np.roll(p, tuple(-v), axis=tuple(range(d)))  # inner x + v stays in the box
        assert np.maximum(p[inner] - math.exp(eps) * q[inner], 0).sum() <= delta * (1 + 1e-8)
    assert p.sum() + orb.far_mass(raw.x) == pytest.approx(1.0, abs=1e-9)
    assert p.shape == (side,) * d


@pytest.mark.parametrize("d,R", [(2, 4), (3, 3)])
def test_point_orbits_are_the_signed_permutation_orbits(d, R):
    N = R - 1
    alp = build_approx("l2", 0.5, 0.05, 1, N, dim=d)
    x = box_coords(R, d)
    pv = alp.point_var
    sizes = alp.orbit_sizes
    assert sizes.sum() == (2 * R + 1) ** d
    assert len(sizes) == math.comb(R + d, d)  # multisets of d values in [0, R]
    images = np.stack([pv[flat_index(x[:, list(perm)] * signs, R)] for perm, signs in signed_permutations(d)])
    assert np.all(images == pv)  # constant on orbits
    # distinct orbits get distinct columns; orbit size = |G| / |stabiliser|
    canon = np.sort(np.abs(x), axis=1)
    _, inv, cnt = np.unique(canon, axis=0, return_inverse=True, return_counts=True)
    assert np.array_equal(np.bincount(inv.ravel()), cnt)
    assert len(np.unique(np.stack([pv, inv.ravel()], axis=1), axis=0)) == len(sizes)
    assert np.array_equal(sizes[pv], cnt[inv.ravel()])
    # objective and normalisation weights are the orbit sizes
    lp = alp.lp
    ps = lp.col_blocks["p"]
    norm = lp.A[[lp.meta["normalisation_row"]], :].toarray().ravel()
    assert np.array_equal(norm[ps], sizes.astype(float))
    rep_cost = np.zeros(len(sizes))
    rep_cost[pv] = np.sqrt((x * x).sum(axis=1))
    assert np.allclose(lp.c[ps], sizes * rep_cost, rtol=1e-15, atol=0)
    assert np.all(lp.c[ps] <= sizes * rep_cost)  # rounded down
    assert np.all(lp.col_upper[ps] * sizes >= 1.0) and np.all(lp.col_upper[ps] * sizes <= 1 + 1e-15)


@pytest.mark.parametrize("d,D,N", [(2, 2, 3), (3, 2, 2), (2, 3, 2), (3, 1, 2)])
def test_shift_and_stabiliser_orbits_brute_force(d, D, N):
    alp = build_approx("l1", 1.0, 0.1, D, N, dim=d)
    G = signed_permutations(d)
    full = shift_vectors(d, D, half=False)
    # one kept shift per orbit of the shift set
    orbit_of = {tuple(v): frozenset(tuple(v[list(perm)] * s) for perm, s in G) for v in full}
    kept = [tuple(v) for v in alp.shifts]
    assert len(set(orbit_of[v] for v in kept)) == len(kept) == len(set(orbit_of.values()))
    assert all(np.all(np.array(v) >= 0) for v in kept)
    # t columns per kept shift: one per Stab(v)-orbit of the inner box, budget weights = orbit sizes
    inner = [tuple(x) for x in box_coords(N, d)]
    lp = alp.lp
    n_t = lp.meta["t_per_shift"]
    budget = lp.A[lp.row_blocks["budget"], :].toarray()[:, lp.col_blocks["t"]]
    start = 0
    for k, v in enumerate(kept):
        stab = [(perm, s) for perm, s in G if tuple(np.array(v)[list(perm)] * s) == v]
        classes = {frozenset(tuple(np.array(x)[list(perm)] * s) for perm, s in stab) for x in inner}
        w = budget[k, start:start + n_t[k]]
        assert n_t[k] == len(classes)
        assert sorted(w.astype(int)) == sorted(len(c) for c in classes)
        assert w.sum() == len(inner)
        assert np.all(budget[np.arange(len(kept)) != k, start:start + n_t[k]] == 0)
        start += n_t[k]
    assert start == lp.col_blocks["t"].stop - lp.col_blocks["t"].start
    # the estimate is exact on columns and an upper bound on nonzeros
    cols, nnz = estimate_size(d, D, N)
    assert cols == lp.cols and nnz >= lp.nonzeros


def test_lp_shrinks_by_the_group_order():
    """d = 3, Δ = 2: 24 shifts → 3 orbits and ~n_in/|Stab| rows each, so the t block shrinks by
    about 48 against the unreduced LP (24 against ±x), and p by about |G| = 48."""
    d, D, N = 3, 2, 12
    alp = build_approx("l1", 1.0, 0.01, D, N, dim=d)
    even = build_approx("l1", 1.0, 0.01, D, N, dim=d, symmetry="even").lp
    off = build_approx("l1", 1.0, 0.01, D, N, dim=d, symmetry="off").lp
    assert alp.lp.cols == estimate_size(d, D, N)[0]
    assert estimate_size(d, D, N, False)[0] == off.cols and estimate_size(d, D, N, orbits=False)[0] >= even.cols
    assert len(alp.shifts) == 3 and len(shift_vectors(d, D, half=False)) == 24
    M, n_in = (2 * (N + D) + 1) ** d, (2 * N + 1) ** d
    assert off.cols == M + 1 + 24 * n_in and even.cols == (M + 1) // 2 + 1 + 12 * n_in
    # Stab sizes 8, 8, 4: n_t ≈ n_in (1/8 + 1/8 + 1/4) = n_in / 2
    n_t = sum(alp.lp.meta["t_per_shift"])
    assert n_in / 2 <= n_t <= 1.2 * n_in / 2
    assert off.cols / alp.lp.cols > 35 and even.cols / alp.lp.cols > 18
    assert off.nonzeros / alp.lp.nonzeros > 35
    assert len(alp.orbit_sizes) == math.comb(N + D + 3, 3) and M / len(alp.orbit_sizes) > 35


def test_symmetry_off_and_1d_unchanged():
    from optmech.costs import parse_cost

    a = build_approx(parse_cost("abs"), 0.5, 0.05, 2, 6)
    assert (a.symmetry, a.variant, a.even) == ("even", "hockey_stick", True)
    b = build_approx("l1", 0.5, 0.05, 2, 3, dim=2, symmetry="off")
    assert b.symmetry == "none" and np.array_equal(b.point_var, np.arange(b.point_var.size))
    assert len(b.shifts) == 12 and not b.even
    c = build_approx(parse_cost("where(x > 0, x, 3*abs(x))"), 0.5, 0.05, 2, 6)
    assert c.symmetry == "none"


def _solve(eps, delta, D, cost, dim, **kw):
    return optmech.solve(Problem(ApproxDP(eps, delta), cost, D, IntegerLattice(), dim=dim, **kw))


def test_d3_delta2_solve_is_certified_and_private():
    eps, delta, D = 1.0, 0.1, 2
    r = _solve(eps, delta, D, "l1", 3)
    assert r.certified and r.status == "optimal"
    assert r.relative_gap <= 1e-9
    assert r.lp["builder"] == "hockey_stick_orbits"
    assert any("orbit reduction" in c for c in r.claims)
    assert r.audit["passed"] and r.audit["shifts"] == 24
    # an independent check of the saved pmf: every shift, brute force on the padded grid
    m = r.mechanism_dict()
    pts, mass = np.asarray(m["representatives"]), np.asarray(m["mass"])
    R = int(np.abs(pts).max()) + D
    grid = np.zeros((2 * R + 1,) * 3)
    grid[tuple((pts + R).T)] = mass
    assert math.fsum(mass) == pytest.approx(1.0, abs=1e-12)
    for v in shift_vectors(3, D, half=False):
        shifted = np.roll(grid, tuple(-v), axis=(0, 1, 2))
        assert np.maximum(grid - math.exp(eps) * shifted, 0).sum() <= delta + 1e-12
    # signed-permutation invariant (transpositions and reflections generate G), l1 cost = upper bound
    for perm in itertools.permutations(range(3)):
        assert np.allclose(np.transpose(grid, perm), grid, rtol=1e-13, atol=0)
    for axis in range(3):
        assert np.allclose(np.flip(grid, axis), grid, rtol=1e-13, atol=0)
    cost = math.fsum(np.abs(pts).sum(axis=1) * mass)
    assert cost == pytest.approx(r.upper_bound, rel=1e-12)
    # Δ = 2 in d = 3 costs at least the Δ = 1 optimum (the shift set only grows)
    r1 = _solve(eps, delta, 1, "l1", 3)
    assert r1.lower_bound <= r.upper_bound


@pytest.mark.parametrize("cost", ["l1", "l2sq"])
def test_d2_solve_agrees_with_unreduced(cost):
    a = _solve(0.5, 0.1, 2, cost, 2)
    b = _solve(0.5, 0.1, 2, cost, 2, symmetry="off")
    assert a.lp["builder"] == "hockey_stick_orbits" and b.lp["builder"] == "hockey_stick"
    assert a.certified and b.certified and a.relative_gap <= 1e-9 and b.relative_gap <= 1e-9
    assert a.lower_bound <= b.upper_bound * (1 + 1e-12) and b.lower_bound <= a.upper_bound * (1 + 1e-12)
    assert a.lp["cols"] * 4 < b.lp["cols"]
