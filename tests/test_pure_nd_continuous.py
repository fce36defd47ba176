"""Pure ε-DP in d dimensions on the continuous domain (cells of width Δ/n), the ℓ1-shell (layered)
LP, expression costs and the d-D command line.

Expected values come from outside the LPs:

* the d = 2 ℓ1 staircase at its best γ, ``staircase_nd_optimal_cost("l1", ε, Δ, 2)``, which is V*
  of the continuous problem for ℓ1 cost and ℓ1 sensitivity [Geng13, (3.7)], linear in Δ;
* the best ℓ1 lattice staircase, min of ``discrete_staircase_nd_costs`` (reference/multidim.md §8);
* Δ = 1 on ℤ^d with a separable cost a|x1| + b|x2|: a shift of ℓ1 length 1 moves one coordinate by
  one, so the product of 1-D geometric laws (parameter λ = e^{−ε}) is ε-DP, and every ε-DP law's
  marginals are 1-D ε-DP, whose optimum is the geometric law [Geng13, Thm 2.12]: V* = (a + b)·2λ/(1 − λ²);
* the rotation y = ((x1 + x2)/2, (x1 − x2)/2) maps ℓ∞ sensitivity onto ℓ1 sensitivity in ℝ²
  (‖v‖∞ = ‖Av‖₁) with ‖x‖₁ = 2‖y‖∞ and ‖x‖₂² = 2‖y‖₂², so V*_ℓ∞(l1) = 2 V*_ℓ1(linf) and
  V*_ℓ∞(l2sq) = 2 V*_ℓ1(l2sq): certified brackets computed on the two (different) cell grids must
  overlap after the factor 2, and 2 × the ℓ1 staircase is an upper bound of the ℓ∞ problem.

The mechanisms written by the solver are audited here independently: their masses are expanded to
the whole domain and every pair of cells (or shells) that a shift of the sensitivity ball connects
is checked against e^ε.
"""

from __future__ import annotations

import functools
import itertools
import json
import math

import numpy as np
import pytest

import optmech
from optmech.mechanisms.discrete_staircase_nd import discrete_staircase_nd_costs
from optmech.mechanisms.multidim import laplace_nd_cost, staircase_nd_optimal_cost
from optmech.problems.pure_nd import build_pure_nd, shell_sizes
from optmech.candidate import solve_layered
from optmech.families.pure_nd import setup_for, upper_from_lp
from optmech.solvers import solve_lp
from optmech.spec import Continuous, IntegerLattice, Problem, PureDP
from test_cli import run_cli

REL = 1e-9  # slack for closed forms evaluated in floating point against certified ends


def problem(eps, D, d=2, cost="l1", norm="l1", resolution=None, integer=False, **kw) -> Problem:
    dom = IntegerLattice() if integer else Continuous(resolution)
    return Problem(privacy=PureDP(eps), cost=cost, sensitivity=D, domain=dom, dim=d, norm=norm, **kw)


@functools.lru_cache(maxsize=None)
def solve(eps, D, d=2, cost="l1", norm="l1", resolution=None, integer=False, symmetry="orbits"):
    """Cached: several tests look at the same instance.  The cell LP (``symmetry="orbits"``): with
    "auto" a cost that is a power of the sensitivity's norm goes to the radial family (test_radial.py)."""
    return optmech.solve(problem(eps, D, d, cost, norm, resolution, integer, symmetry=symmetry))


@functools.lru_cache(maxsize=None)
def layered(eps, D, d=2, cost="l1", resolution=None, integer=False):
    return solve_layered(problem(eps, D, d, cost, "l1", resolution, integer))


def contains(lo, up, v, rel=REL) -> bool:
    return lo - rel * abs(v) <= v <= up + rel * abs(v)


def geometric_abs(eps: float) -> float:
    """E|G| of the two-sided geometric law P(k) ∝ e^{−ε|k|} on ℤ [Geng13, Thm 2.12]."""
    lam = math.exp(-eps)
    return 2 * lam / (1 - lam * lam)


# ------------------------------------------------------------------------------------------------
# 1. d = 2, ℓ1 sensitivity, l1 cost: the bracket contains the staircase and tightens with n
# ------------------------------------------------------------------------------------------------
# ε = 0.5 at n = 4 takes ~15 s (the domain grows like 1/ε): n = 1, 2 there
@pytest.mark.parametrize("eps,resolutions", [(0.5, (1, 2)), (1.0, (2, 4)), (2.0, (2, 4))])
def test_continuous_l1_bracket_contains_the_staircase(eps, resolutions):
    v = staircase_nd_optimal_cost("l1", eps, 1.0, 2)
    rs = [solve(eps, 1.0, resolution=n) for n in resolutions]
    for n, r in zip(resolutions, rs):
        assert r.certified, (n, r.message)
        assert r.lp["builder"] == "cells_nd_orbits" and r.lp["resolution"] == n
        assert contains(r.lower_bound, r.upper_bound, v), (n, r.lower_bound, v, r.upper_bound)
        stair = [x for x in r.references if x.name == "staircase"]
        assert stair and stair[0].value == pytest.approx(v, rel=1e-13) and stair[0].inside_bracket
        assert r.problem["resolution"] == n
    coarse, fine = rs
    assert fine.lower_bound > coarse.lower_bound
    assert fine.relative_gap < coarse.relative_gap


def test_continuous_l1_d3_default_resolution():
    """d = 3 (default resolution 2): the d-D staircase is V* for l1 cost in every d (multidim.md §7)."""
    eps = 2.0
    # 20 s: resolution 2, then (no resolution given) 4, in about a second; the family does not start 8, whose
    # predicted time (family.refine_seconds) exceeds what is left
    r = optmech.solve(problem(eps, 1.0, 3, symmetry="orbits"), time_limit=20.0)
    v = staircase_nd_optimal_cost("l1", eps, 1.0, 3)
    assert r.certified and r.lp["resolutions"] == [2, 4] and r.lp["resolution"] == 4
    assert contains(r.lower_bound, r.upper_bound, v), (r.lower_bound, v, r.upper_bound)
    first = r.history[0]
    assert r.lower_bound >= first["lower_bound"] and r.relative_gap < 0.5 * first["relative_gap"]  # second order
    assert any("refined" in c for c in r.claims) and "resolution 4" in r.message


def test_continuous_l1_bracket_scales_with_the_sensitivity():
    """Δ = 2.5: V* = 2.5 × V*(Δ = 1); the cell LPs are the same up to the factor h = Δ/n, so the
    lower bounds scale too."""
    eps, D = 1.0, 2.5
    v = staircase_nd_optimal_cost("l1", eps, D, 2)
    assert v == pytest.approx(D * staircase_nd_optimal_cost("l1", eps, 1.0, 2), rel=1e-12)
    for n in (2, 4):
        r = solve(eps, D, resolution=n)
        assert r.certified
        assert r.lp["cell_width"] == pytest.approx(D / n, rel=1e-15)
        assert contains(r.lower_bound, r.upper_bound, v)
        assert r.lower_bound == pytest.approx(D * solve(eps, 1.0, resolution=n).lower_bound, rel=1e-7)
    assert solve(eps, D, resolution=4).lower_bound > solve(eps, D, resolution=2).lower_bound


# ------------------------------------------------------------------------------------------------
# 2. the orbit-reduced cell LPs equal the unreduced ones
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("side", ["lower", "upper"])
@pytest.mark.parametrize("norm", ["l1", "linf", "l2"])
def test_cell_lp_orbit_reduction_is_exact(norm, side):
    for cost, group in (("l1", True), ("l2sq", True), ("abs(x1)+2*abs(x2)", "signs")):
        if norm != "l1" and cost != "l1":
            continue
        a = build_pure_nd(cost, 1.0, 1.0, 10, dim=2, norm=norm, reduced=group, resolution=2, side=side)
        b = build_pure_nd(cost, 1.0, 1.0, 10, dim=2, norm=norm, reduced=False, resolution=2, side=side)
        assert a.cells and b.cells and a.side == b.side == side
        assert b.variant == "cells_nd" and a.variant == ("cells_nd_orbits" if group is True else "cells_nd_sign_orbits")
        assert a.lp.cols < b.lp.cols
        ra, rb = solve_lp(a.lp), solve_lp(b.lp)
        assert ra.objective == pytest.approx(rb.objective, rel=1e-8), (cost, norm, side)


# ------------------------------------------------------------------------------------------------
# 3. the continuous upper side
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps,n", [(1.0, 2), (2.0, 3)])
def test_cell_upper_lp_and_its_audit(eps, n):
    """The restriction LP (side upper, cell maxima) lies above the relaxation (cell minima) on the
    same domain, and the audited mechanism repaired from it costs at least V*."""
    s = setup_for(problem(eps, 1.0, resolution=n))
    assert s.cells and s.n_lat == n and s.h == pytest.approx(1.0 / n)
    v = staircase_nd_optimal_cost("l1", eps, 1.0, 2)
    R = 12 * n
    lo, up = s.build(R, "lower"), s.build(R, "upper")
    assert (lo.side, up.side) == ("lower", "upper") and up.variant == "cells_nd_orbits"
    assert np.all(up.cost_hi >= up.cost_lo)
    rl, ru = solve_lp(lo.lp), solve_lp(up.lp)
    assert ru.objective >= rl.objective
    assert rl.objective <= v
    u = upper_from_lp(up, ru.x, s)
    assert u.certified, u.note
    assert u.realised_epsilon <= eps
    assert u.value >= v and u.value >= ru.objective * (1 - 1e-9)
    assert 0 <= u.tail_mass < 1
    # the repaired masses sum to 1 over the domain (orbit sizes) and are nonnegative
    assert np.all(u.masses >= 0)
    assert math.fsum(up.support.size * u.masses) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("norm", ["linf", "l2"])
def test_continuous_linf_l2_are_certified_below_laplace(norm):
    """No closed form: the bracket is certified, its lower end is below the i.i.d. Laplace law that
    is ε-DP for that norm (ε/d per coordinate for ℓ∞, ε/√d for ℓ2), and above the ℓ1 problem's
    optimum (the ℓ1 ball lies inside the ℓ2 and ℓ∞ balls: more rows, higher V*)."""
    eps = 2.0
    r = solve(eps, 1.0, norm=norm, resolution=2)
    assert r.certified and r.upper_bound >= r.lower_bound > 0
    assert r.lp["builder"] == "cells_nd_orbits"
    c = 2.0 if norm == "linf" else math.sqrt(2.0)
    lap = laplace_nd_cost("l1", eps / c, 1.0, 2)
    assert lap == pytest.approx(2 * c / eps, rel=1e-13)
    assert r.lower_bound <= lap
    ref = {x.name: x for x in r.references}
    assert ref["laplace"].value == pytest.approx(lap, rel=1e-13)
    if norm == "l2":  # density ∝ exp(−ε‖x‖₂/Δ) [KHP15]
        assert r.lower_bound <= ref["l2_laplace"].value
    # V*_norm >= V*_l1 = the staircase, so the upper end is above it
    assert r.upper_bound >= staircase_nd_optimal_cost("l1", eps, 1.0, 2)
    # the upper end is the best of the audited cell density and the exact closed forms (the staircase in the
    # sensitivity's norm: E‖X‖₁ = E R · E‖Θ‖₁, below i.i.d. Laplace); its law is the mechanism
    assert r.upper_bound <= ref["staircase"].value * (1 + 1e-11) and r.upper_bound <= lap
    assert r.mechanism.privacy().epsilon == eps and r.mechanism.privacy().norm == norm


@pytest.mark.parametrize("cost", ["l1", "l2sq"])
def test_linf_sensitivity_is_a_rotated_l1_problem(cost):
    """In ℝ², V*_ℓ∞(l1) = 2 V*_ℓ1(linf) and V*_ℓ∞(l2sq) = 2 V*_ℓ1(l2sq) (module docstring): the two
    certified brackets overlap after the factor 2, and 2 × the ℓ1 staircase bounds the ℓ∞ problem."""
    eps = 2.0
    a = solve(eps, 1.0, cost=cost, norm="linf", resolution=2)
    b = solve(eps, 1.0, cost="linf" if cost == "l1" else "l2sq", norm="l1", resolution=2)
    assert a.certified and b.certified
    assert a.lower_bound <= 2 * b.upper_bound * (1 + 1e-12)
    assert 2 * b.lower_bound <= a.upper_bound * (1 + 1e-12)
    stair = 2 * staircase_nd_optimal_cost("linf" if cost == "l1" else "l2sq", eps, 1.0, 2)
    assert a.lower_bound <= stair * (1 + REL)


# ------------------------------------------------------------------------------------------------
# 4. the layered (shell) LP on the lattice against the full lattice LP and the lattice staircase
# ------------------------------------------------------------------------------------------------
# d = 3, Δ = 3, ε = 1 takes ~150 s for the full lattice LP: the grid is thinned to a few seconds
@pytest.mark.parametrize("d,D,eps,cost", [
    (2, 1, 1.0, "l1"), (2, 2, 1.0, "l1"), (2, 2, 2.0, "l2sq"), (2, 3, 2.0, "l1"), (2, 3, 2.0, "l2sq"),
    (3, 1, 1.0, "l1"), (3, 1, 1.0, "l2sq"), (3, 2, 2.0, "l1"), (3, 2, 2.0, "l2sq"), (3, 3, 2.0, "l1"),
])
def test_layered_lattice_agrees_with_full_lp_and_staircase(d, D, eps, cost):
    full = solve(eps, D, d=d, cost=cost, integer=True)
    lay = layered(eps, D, d=d, cost=cost, integer=True)
    v = float(discrete_staircase_nd_costs(cost, eps, D, d).min())
    assert full.certified and lay.certified, (full.message, lay.message)
    assert lay.lower <= lay.upper and lay.cell_width == 1.0 and lay.shells > D
    assert contains(full.lower_bound, full.upper_bound, v), (full.lower_bound, v, full.upper_bound)
    assert contains(lay.lower, lay.upper, v), (lay.lower, v, lay.upper)
    assert max(full.lower_bound, lay.lower) <= min(full.upper_bound, lay.upper) * (1 + 1e-12)
    # the layered mechanism is a real ε-DP law, so its audited cost is an upper bound of V*
    assert lay.upper >= full.lower_bound
    # its masses (per point of each sphere) sum to 1 over the spheres and respect the window rows
    w = np.asarray(lay.masses)
    sizes = shell_sizes(np.arange(len(w)), d, False)
    assert np.all(w >= 0) and math.fsum(sizes * w) == pytest.approx(1.0, abs=1e-12)
    _audit_window(w, D, eps)


def _audit_window(w: np.ndarray, window: int, eps: float) -> None:
    """w[k] <= e^ε w[j] for |k − j| <= window (spheres or shells that a shift connects)."""
    assert np.all(w > 0)
    lw = np.log(w)
    worst = max(float(np.max(lw[:-s] - lw[s:])) for s in range(1, min(window, len(w) - 1) + 1))
    worst = max(worst, max(float(np.max(lw[s:] - lw[:-s])) for s in range(1, min(window, len(w) - 1) + 1)))
    assert worst <= eps * (1 + 1e-12), worst


# ------------------------------------------------------------------------------------------------
# 5. the layered LP on the continuous domain
# ------------------------------------------------------------------------------------------------
def test_continuous_layered_is_the_staircase():
    """64 shells per Δ: the best layered density is within 1e-4 of V* and, being ε-DP, above it."""
    eps, n = 2.0, 64
    v = staircase_nd_optimal_cost("l1", eps, 1.0, 2)
    lb = layered(eps, 1.0, resolution=n)
    assert lb.certified and lb.lower <= lb.upper
    assert lb.cell_width == pytest.approx(1.0 / n, rel=1e-15)
    assert lb.upper >= v * (1 - 1e-12)
    assert lb.upper <= v * (1 + 1e-4)
    w = np.asarray(lb.masses)  # per unit h^d on each shell
    assert len(w) == lb.shells
    assert math.fsum(shell_sizes(np.arange(len(w)), 2, True) * w) == pytest.approx(1.0, abs=1e-12)
    _audit_window(w, n, eps)


# ------------------------------------------------------------------------------------------------
# 6. expression costs
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("expr,named", [("x1**2+x2**2", "l2sq"), ("abs(x1)+abs(x2)", "l1")])
def test_invariant_expression_equals_the_named_cost(expr, named):
    a, b = solve(1.0, 2, cost=expr, integer=True), solve(1.0, 2, cost=named, integer=True)
    assert a.certified and b.certified
    assert max(a.lower_bound, b.lower_bound) <= min(a.upper_bound, b.upper_bound) * (1 + 1e-12)
    assert a.lp["builder"] == b.lp["builder"] == "lattice_nd_orbits"
    assert any("signed-permutation" in c and "proven invariant at every point" in c for c in a.claims), a.claims
    v = float(discrete_staircase_nd_costs(named, 1.0, 2, 2).min())
    assert contains(a.lower_bound, a.upper_bound, v)


@pytest.mark.parametrize("eps", [1.0, 2.0])
def test_weighted_l1_is_the_product_of_geometrics(eps):
    """|x1| + 2|x2|, Δ = 1 on ℤ²: not invariant under swapping the coordinates, so no signed-permutation
    orbits; V* = 3·E|G| (module docstring)."""
    v = 3 * geometric_abs(eps)
    for sym in ("auto", "off"):
        r = solve(eps, 1, cost="abs(x1)+2*abs(x2)", integer=True, symmetry=sym)
        assert r.certified and r.relative_gap <= 1e-6
        assert contains(r.lower_bound, r.upper_bound, v), (sym, r.lower_bound, v, r.upper_bound)
        assert r.lp["builder"] != "lattice_nd_orbits"
        assert not any("signed-permutation" in c for c in r.claims)
        if sym == "off":
            assert r.lp["builder"] == "lattice_nd"
    # a cost without any sign symmetry: the full lattice; the product of geometrics is still ε-DP
    r = solve(eps, 1, cost="abs(x1)+2*abs(x2)+0.5*x1", integer=True)
    assert r.certified and r.lp["builder"] == "lattice_nd"
    assert r.lower_bound <= v * (1 + REL)


def test_non_even_expression_is_reported_and_its_sign_definite_form_is_solved():
    """|x1| + 2|x2| + x1/2 equals where(x1 > 0, 1.5 x1, 0.5|x1|) + 2|x2|.  The first form's minimum
    outside the domain is -inf by interval arithmetic (|x1| and x1/2 are enclosed independently on
    x1 <= -R), so its lower bound is uninformative and the message says why and how to rewrite it;
    the sign-definite form is bounded: every ε-DP law's marginals are 1-D ε-DP on ℤ, so
    V* >= 2.5 E|G| (Δ = 1), and the product of geometrics gives V* <= 3 E|G|."""
    eps = 2.0
    weak = solve(eps, 1, cost="abs(x1)+2*abs(x2)+0.5*x1", integer=True)
    assert weak.status != "optimal" and "sign-definite" in weak.message
    r = solve(eps, 1, cost="where(x1 > 0, 1.5*x1, 0.5*abs(x1))+2*abs(x2)", integer=True)
    assert r.certified and r.status == "optimal"
    assert 2.5 * geometric_abs(eps) * (1 - REL) <= r.lower_bound <= r.upper_bound <= 3 * geometric_abs(eps) * (1 + REL)
    assert weak.certified and weak.upper_bound >= r.lower_bound  # the same function: its upper bound is valid too


def test_layered_with_an_expression_cost_on_the_lattice():
    """The shell LP prices an expression by exact sums over each lattice sphere; abs(x1)+abs(x2) is l1."""
    from optmech.candidate import prepare_candidate

    p = problem(2.0, 1, cost="abs(x1)+abs(x2)", integer=True)
    prepare_candidate(p, "layered")
    lb = solve_layered(p)
    v = float(discrete_staircase_nd_costs("l1", 2.0, 1, 2).min())
    assert lb.certified and contains(lb.lower, lb.upper, v)


def test_weighted_l1_on_the_continuous_domain():
    """|x1| + 2|x2| with ℓ1 sensitivity 1 in ℝ²: each marginal is a 1-D ε-DP law, so V* >= 3 × the
    1-D staircase optimum, and i.i.d. Laplace(1/ε) is ε-DP: V* <= 3/ε."""
    eps = 2.0
    # 2 s: the cell LP alone (the marginal bound, which needs more time, is tested in test_dominance.py)
    r = optmech.solve(problem(eps, 1.0, cost="abs(x1)+2*abs(x2)", resolution=2, symmetry="orbits"), time_limit=2.0)
    assert r.certified
    assert "orbits" not in r.lp["builder"] or r.lp["builder"] == "cells_nd_sign_orbits"
    assert r.lower_bound <= 3 / eps
    assert r.upper_bound >= 3 * staircase_nd_optimal_cost("l1", eps, 1.0, 1) * (1 - REL)
    # the ℓ1 staircase is invariant under swapping the coordinates: its E(|X1| + 2|X2|) = 1.5·E‖X‖₁, an upper end
    assert r.upper_bound <= 1.5 * staircase_nd_optimal_cost("l1", eps, 1.0, 2) * (1 + 1e-9)
    mech = r.mechanism_dict()
    if mech.get("kind") == "cell_pmf_nd":
        _audit_cells(mech, eps, "l1", 2)


# ------------------------------------------------------------------------------------------------
# 7. the command line
# ------------------------------------------------------------------------------------------------
BASE = ["solve", "--epsilon", "1"]


@pytest.mark.parametrize("bad,mention", [
    (["--dim", "2", "--cost", "x1+x3"], "x3"),
    (["--dim", "2", "--cost", "x"], "x"),
    (["--dim", "0"], "dim"),
    (["--dim", "2", "--norm", "l3"], "l3"),
    (["--dim", "2", "--domain", "integer", "--sensitivity", "1.5"], "1.5"),
    (["--dim", "8", "--sensitivity", "6", "--domain", "integer"], "GiB"),
    (["--dim", "2", "--candidate", "layered", "--norm", "linf"], "l1"),
    (["--dim", "2", "--domain", "integer", "--resolution", "4"], "resolution"),
])
def test_cli_rejects(bad, mention):
    p = run_cli(*BASE, *bad)
    assert p.returncode == 2, (bad, p.stderr)
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and mention in lines[0], (bad, p.stderr)
    assert "Traceback" not in p.stderr


def test_cli_continuous_layered_candidate():
    p = run_cli(*BASE, "--dim", "2", "--domain", "continuous", "--resolution", "3", "--candidate", "layered", "--symmetry",
                "orbits", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["problem"]["dim"] == 2 and d["problem"]["domain"] == "continuous" and d["problem"]["resolution"] == 3
    assert d["certified"] and d["lp"]["resolution"] == 3
    c = d["candidate"]
    assert c["name"] == "layered"
    assert c["value"] >= d["lower_bound"]
    assert c["gap_to_lower_bound"] == pytest.approx((c["value"] - d["lower_bound"]) / c["value"], rel=1e-9)
    # the layered law is ε-DP: its cost is at least V* (the staircase), and its own bracket is ordered
    v = staircase_nd_optimal_cost("l1", 1.0, 1.0, 2)
    assert c["value"] >= v * (1 - 1e-12)
    assert c["parameters"]["layered_lower_bound"] <= c["value"]
    assert c["parameters"]["shell_width"] == pytest.approx(1 / 3, rel=1e-15)


# ------------------------------------------------------------------------------------------------
# 8. the saved mechanism
# ------------------------------------------------------------------------------------------------
def _orbit_size(reps: np.ndarray, symmetry: str) -> np.ndarray:
    from optmech.plots import orbit_sizes

    if symmetry == "signed permutations":
        return orbit_sizes(reps)
    if symmetry == "coordinate signs":
        return 2.0 ** (reps != 0).sum(axis=1)
    assert symmetry == "none", symmetry
    return np.ones(len(reps))


def _cube(mech: dict) -> tuple[np.ndarray, int]:
    """The cell masses of a ``cell_pmf_nd`` mechanism on the cube [−R, R]^d of its representatives."""
    reps = np.asarray(mech["representatives"], dtype=np.int64)
    mass = np.asarray(mech["mass"], dtype=float)
    d = reps.shape[1]
    R = int(np.abs(reps).max())
    sym = mech["symmetry"]
    lookup = {tuple(r): m for r, m in zip(reps.tolist(), mass.tolist())}
    out = np.zeros((2 * R + 1,) * d)
    for z in itertools.product(range(-R, R + 1), repeat=d):
        a = np.asarray(z)
        key = tuple(np.sort(np.abs(a))) if sym == "signed permutations" else tuple(np.abs(a)) if sym == "coordinate signs" \
            else tuple(a)
        out[tuple(a + R)] = lookup.get(key, 0.0)
    return out, R


def _connected(norm: str, n: int, d: int) -> list[tuple[int, ...]]:
    """Cell shifts k with inf over u in (−1, 1)^d of ‖k + u‖ < n: the pairs a density constant on
    cells must respect (ℓ1: Σ (|k_i| − 1)₊ <= n − 1)."""
    out = []
    for k in itertools.product(range(-n - 1, n + 2), repeat=d):
        a = np.maximum(np.abs(np.asarray(k)) - 1, 0)
        val = {"l1": a.sum(), "linf": a.max(), "l2": math.sqrt((a * a).sum())}[norm]
        if val < n and any(k):
            out.append(k)
    return out


def _audit_cells(mech: dict, eps: float, norm: str, n: int) -> None:
    """Every listed cell pair connected by a shift of the ball has mass ratio <= e^ε."""
    P, R = _cube(mech)
    d = P.ndim
    assert np.all(P > 0)  # a β-majorant is positive on the whole (connected) cube
    worst = 0.0
    for k in _connected(norm, n, d):
        src = tuple(slice(max(0, -s), 2 * R + 1 - max(0, s)) for s in k)
        dst = tuple(slice(max(0, s), 2 * R + 1 - max(0, -s)) for s in k)
        worst = max(worst, float(np.max(np.log(P[src]) - np.log(P[dst]))))
    assert worst <= eps * (1 + 1e-12), worst


def _check_mechanism(mech: dict, eps: float, norm: str, n: int) -> None:
    assert isinstance(mech, dict) and "kind" in mech
    if mech["kind"] == "cell_pmf_nd":
        assert mech["dim"] == 2 and mech["norm"] == norm
        assert mech["cell_width"] == pytest.approx(1.0 / n, rel=1e-15)
        reps = np.asarray(mech["representatives"], dtype=np.int64)
        mass = np.asarray(mech["mass"], dtype=float)
        assert reps.shape == (len(mass), 2) and np.all(mass >= 0)
        total = math.fsum(_orbit_size(reps, mech["symmetry"]) * mass)
        assert total <= 1 + 1e-12 and total == pytest.approx(1.0, abs=1e-9)
        _audit_cells(mech, eps, norm, n)
    elif mech["kind"] == "l1_shell_density_nd":
        assert mech["dim"] == 2 and mech["continuous"] is True
        w, dens = mech["shell_width"], np.asarray(mech["density"], dtype=float)
        assert np.all(dens >= 0)
        total = math.fsum(dens * w**2 * shell_sizes(np.arange(len(dens)), 2, True))
        assert total <= 1 + 1e-12 and total == pytest.approx(1.0, abs=1e-9)
        _audit_window(dens, int(round(1.0 / w)), eps)


#: the cost ‖x‖₁ as an expression: no closed form competes with the LPs' upper bounds, so the audited
#: cell density is the mechanism
#: an expression the cell LP solves (one proven <= a named cost would get that cost's closed-form laws as its
#: upper end and mechanism: optmech.costs.dominance; so would a linear combination of |x_i|, x_i^2 and norms,
#: priced exactly: optmech.families.pure_nd_references.linear_uppers; and a cost of polynomial growth the
#: independent-Laplace laws priced on cells, optmech.families.pure_nd_product; the exponential term is none of these)
L1_EXPR = "abs(x1) + abs(x2) + 0.001*exp(0.1*abs(x1)) + 0.001"


def test_expression_equal_to_l1_gets_the_staircase():
    """The same ‖x‖₁ written as an expression: proven <= l1 (equal), so the ℓ1 staircase's closed form is an upper
    end and, being the best one, the mechanism (issue 42)."""
    r = optmech.solve(problem(2.0, 1.0, cost="abs(x1) + abs(x2)", resolution=2, symmetry="orbits"), time_limit=2.0)
    mech = r.mechanism_dict()
    assert mech["gamma"] > 0 and mech["dim"] == 2
    from optmech.mechanisms.staircase_nd import StaircaseND

    st = StaircaseND.optimal("l1", epsilon=2.0, sensitivity=1.0, dim=2, norm="l1")
    assert r.upper_bound == pytest.approx(float(st.expected_cost("l1")), rel=1e-9)


def test_mechanism_nd_of_continuous_solves():
    """The cell LP's law as the mechanism, in each norm (3 s each: the marginal lower bound, which takes about
    6 s more, gives the same bracket here)."""
    eps = 2.0
    for norm in ("l1", "linf", "l2"):
        d = optmech.solve(problem(eps, 1.0, 2, L1_EXPR, norm, 2, False, symmetry="orbits"),
                          time_limit=3.0).mechanism_dict()
        assert d["kind"] == "cell_pmf_nd"
        _check_mechanism(d, eps, norm, 2)


def test_cli_save_continuous_mechanism(tmp_path):
    f = tmp_path / "m.json"
    p = run_cli("solve", "--epsilon", "2", "--dim", "2", "--domain", "continuous", "--resolution", "2", "--norm", "linf",
                "--cost", L1_EXPR, "--time-limit", "3", "--save", str(f))
    assert p.returncode == 0, p.stderr
    saved = json.loads(f.read_text())
    assert saved["certified"] and saved["problem"]["norm"] == "linf"
    _check_mechanism(saved["mechanism"], 2.0, "linf", 2)


def test_d5_continuous_is_solved_and_contains_the_staircase():
    """Regression: the fine shell LP's normalisation row spanned 0.27..1.3e10 in d = 5 (shell sizes
    ~k^4) and HiGHS called it infeasible; shells are now scaled by their size."""
    import optmech
    from optmech.spec import Continuous, Problem, PureDP

    r = optmech.solve(Problem(privacy=PureDP(2.0), cost="l1", sensitivity=1, domain=Continuous(2), dim=5,
                              symmetry="orbits"))
    assert r.certified
    st = next(x for x in r.references if x.name == "staircase")
    assert r.lower_bound <= st.value <= r.upper_bound * (1 + 1e-9)
    assert r.upper_bound <= st.value * (1 + 1e-4)        # the fine shell upper bound is in use


def test_a_time_limit_before_any_lp_returns_the_closed_form_bracket():
    """ℓ∞ sensitivity 1 in d = 2 with cost ‖x‖∞ at resolution 8, the cell LP (``--symmetry orbits``): no
    LP fits 2 s, so the answer is the certified bracket [0, the best closed form], the ℓ∞ staircase,
    whose E‖X‖∞ is the ℓ1 staircase's E‖X‖₁ (the same radial law) [Geng13, (3.7)]; i.i.d. Laplace(2)
    (ε-DP for ‖t‖∞ <= 1 since ‖t‖₁ <= 2) would give E max(|X1|, |X2|) = 2·(1 + 1/2) = 3."""
    p = run_cli("solve", "--epsilon", "1", "--dim", "2", "--norm", "linf", "--cost", "linf", "--resolution", "8",
                "--time-limit", "2", "--symmetry", "orbits", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["status"] == "gap_not_reached" and d["certified"] and d["lower_bound"] == 0.0
    v = staircase_nd_optimal_cost("l1", 1.0, 1.0, 2)
    assert v <= d["upper_bound"] <= v * (1 + 1e-11) < 3.0
    assert "time limit" in d["message"] and any("closed-form staircase" in c for c in d["claims"])
    r = optmech.solve(Problem(PureDP(1.0), "linf", sensitivity=1, domain=Continuous(resolution=8), dim=2,
                              norm="linf", symmetry="orbits"), time_limit=2)
    assert type(r.mechanism).__name__ == "StaircaseND" and r.mechanism.privacy().norm == "linf"
    assert r.mechanism.privacy().epsilon == 1.0


def test_the_staircase_candidate_in_the_sensitivitys_own_norm():
    """Conjecture mode on ℝ² with ℓ2 sensitivity: the candidate is the ℓ2 staircase at its best γ.  Its
    radius has the ℓ1 staircase's radial law, so E‖X‖₂ equals the ℓ1 staircase's E‖X‖₁ (an identity
    independent of the ℓ2 code path); it must lie in the certified bracket."""
    p = run_cli("solve", "--epsilon", "1", "--dim", "2", "--norm", "l2", "--cost", "l2", "--candidate", "staircase",
                "--resolution", "2", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    c = d["candidate"]
    assert c["name"] == "staircase_nd" and c["parameters"]["norm"] == "l2" and c["inside_bracket"]
    assert c["value"] == pytest.approx(staircase_nd_optimal_cost("l1", 1.0, 1.0, 2), rel=1e-12)
    assert d["lower_bound"] <= c["value"] <= d["upper_bound"]
    bad = run_cli("solve", "--epsilon", "1", "--dim", "2", "--norm", "l2", "--cost", "l2", "--candidate", "staircase",
                  "--domain", "integer", "--sensitivity", "2")
    assert bad.returncode == 2 and bad.stdout == "" and "l1 sensitivity" in bad.stderr


def test_the_staircase_in_the_sensitivitys_norm_is_a_reference():
    """ℓ2 sensitivity in ℝ², cost ‖x‖₁: the ℓ2 staircase's E‖X‖₁ is E[R]·E‖Θ‖₁ with Θ uniform on the
    circle, E|cos θ| + E|sin θ| = 4/π, and E[R] is the ℓ1 staircase's E‖X‖₁ (same radial law, same γ*
    since the cost has order 1)."""
    r = optmech.solve(Problem(PureDP(1.0), "l1", sensitivity=1, domain=Continuous(resolution=2), dim=2, norm="l2"))
    refs = {x.name: x for x in r.references}
    want = staircase_nd_optimal_cost("l1", 1.0, 1.0, 2) * 4 / math.pi
    assert refs["staircase"].value == pytest.approx(want, rel=1e-9)
    assert r.lower_bound <= refs["staircase"].value and "l2 norm" in refs["staircase"].note


def test_the_cells_cube_is_wide_enough_for_the_bound(monkeypatch):
    """The cells' cube is sized by the ℓ∞ decay of an ε-DP law beyond it, whatever the sensitivity's norm
    (pure_nd_setup.radius): ℓ∞ sensitivity, cost ‖x‖₁, ε = 2, 4 cells per Δ.  Solved again on a cube 1.6 times as
    wide, the certified lower end rises by under 1e-4 of itself (what truncation cost), and the default cube is
    at most as wide as the ℓ1-decay sizing (norm factor 2 in d = 2) made it."""
    import optmech.families.pure_nd as pure_nd_family
    import optmech.families.pure_nd_setup as setup_module

    problem = Problem(privacy=PureDP(2.0), cost="l1", sensitivity=1.0, domain=Continuous(resolution=4), dim=2,
                      norm="linf")
    base = optmech.solve(problem, time_limit=60)
    R = base.truncation["half_width"]
    assert R <= 48  # the norm-factor sizing: 48 at ε = 2
    wide = int(math.ceil(1.6 * R / 4)) * 4
    monkeypatch.setattr(pure_nd_family, "radius", lambda s: wide)
    widened = optmech.solve(problem, time_limit=60)
    assert widened.truncation["half_width"] >= wide
    assert base.certified and widened.certified
    assert widened.lower_bound - base.lower_bound <= 1e-4 * base.lower_bound


def test_the_first_cells_are_coarsened_when_their_lp_would_not_fit():
    """ℓ∞ sensitivity, cost ‖x‖₁, ε = 0.5, d = 2: at the default 4 cells per Δ the first relaxation LP has about
    310,000 rows, more than first_step_rows allows for a minute, so the cells start at 2 per Δ and the claims
    say so; the bracket is certified, its lower end at least V*(‖x‖∞) (the norm comparison: ‖x‖₁ >= ‖x‖∞) and
    its gap under 1e-2 (the comparison's bracket is 0.33 wide).  A given resolution is never changed."""
    from optmech.families.pure_nd import first_step_rows

    assert first_step_rows(60.0) < first_step_rows(600.0) and math.isinf(first_step_rows(math.inf))
    problem = Problem(privacy=PureDP(0.5), cost="l1", sensitivity=1.0, domain=Continuous(), dim=2, norm="linf")
    r = optmech.solve(problem, time_limit=60)
    assert r.certified
    assert r.history[0]["size"]["resolution"] == 2
    assert any("not the default 4" in c for c in r.claims)
    linf_staircase = optmech.solve(Problem(privacy=PureDP(0.5), cost="linf", sensitivity=1.0, domain=Continuous(),
                                           dim=2, norm="linf"), time_limit=60)
    assert r.lower_bound >= linf_staircase.lower_bound
    assert r.relative_gap < 0.01
    given = Problem(privacy=PureDP(0.5), cost="l1", sensitivity=1.0, domain=Continuous(resolution=4), dim=2,
                    norm="linf")
    from optmech.families.pure_nd import PureNDFamily

    class Ctx:
        time_limit = 60.0

    assert PureNDFamily(given, Ctx()).s.n_lat == 4
