"""The radial family: pure ε-DP on ℝ^d with cost ‖x‖_K^m and sensitivity in the norm K.

Independent references: the 1-D optimum Δ/(2 sinh(ε/2)) [Geng13, Thm 2.5] (the radial LP in d = 1
is the symmetric 1-D problem), the d-D ℓ1 staircase's closed form [GKOV15], the cell LP of
:mod:`optmech.families.pure_nd` (a different relaxation, ``symmetry="orbits"``), HiGHS on the same
LP, and a direct check of the continuous dual certificate on a fine grid of radii.
"""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest

import optmech
from optmech.certify import dual_lower_bound
from optmech.mechanisms.multidim import staircase_nd_optimal_cost
from optmech.problems.radial import build_radial, node_prices, periods_needed
from optmech.solvers.chain import ChainBackend
from optmech.solvers.highs import HighsBackend
from optmech.spec import Continuous, Problem, PureDP
from test_cli import run_cli


def radial_lower(eps: float, d: int, m: int, n: int) -> tuple[float, object, object]:
    """(certified lower bound, LP, raw solution) of the radial LP with n nodes per Δ (Δ = 1)."""
    r = build_radial(eps, d, m, n, periods_needed(eps, d, m))
    raw = ChainBackend().solve(r.lp, {})
    return dual_lower_bound(r.lp, raw.row_dual, raw.objective).value, r, raw


@functools.lru_cache(maxsize=None)
def solve(eps, d, cost, norm, symmetry="auto", resolution=None, sensitivity=1.0, gap=None):
    return optmech.solve(Problem(PureDP(eps), cost, sensitivity=sensitivity, domain=Continuous(resolution), dim=d,
                                 norm=norm, symmetry=symmetry, target_gap=gap))


def test_d1_radial_lp_brackets_gengs_closed_form():
    """In d = 1 the radial problem is the symmetric 1-D problem: its lower bounds stay below
    V* = 1/(2 sinh(ε/2)) [Geng13, Thm 2.5] and approach it."""
    for eps in (0.5, 1.0, 3.0):
        v = 1 / (2 * math.sinh(eps / 2))
        lo, _, _ = radial_lower(eps, 1, 1, 256)
        assert lo <= v and (v - lo) / v < 3e-5, (eps, lo, v)


def test_second_order_convergence():
    """The gap to the staircase (V* for ℓ1 cost [GKOV15]) falls like h²: about 4× per doubling of n."""
    v = staircase_nd_optimal_cost("l1", 1.0, 1.0, 2)
    gaps = [v - radial_lower(1.0, 2, 1, n)[0] for n in (16, 32, 64, 128)]
    assert all(g > 0 for g in gaps)
    ratios = [a / b for a, b in zip(gaps, gaps[1:])]
    assert all(3.3 < r < 4.8 for r in ratios), ratios


def test_the_chain_bisection_matches_highs_on_the_same_lp():
    r = build_radial(2.0, 3, 2, 16, periods_needed(2.0, 3, 2))
    chain = ChainBackend().solve(r.lp, {})
    highs = HighsBackend().solve(r.lp, {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert chain.objective == pytest.approx(highs.objective, rel=1e-8)
    a = dual_lower_bound(r.lp, chain.row_dual).value
    b = dual_lower_bound(r.lp, highs.row_dual).value
    assert a == pytest.approx(b, rel=1e-8) and a <= highs.objective * (1 + 1e-8)  # HiGHS stops at its tolerances
    # the chain's primal is feasible: monotone, privacy rows (with the LP's ê), normalised
    x = chain.x
    assert np.all(x >= 0) and np.all(np.diff(x) <= 0)
    A = r.lp.A
    act = A @ x
    assert act[0] == pytest.approx(1.0, rel=1e-12)
    assert np.all(act[1:] <= 1e-12 * np.max(x))


def test_the_dual_certificate_holds_between_the_nodes():
    """The continuous claim behind the lower bound: with the certified ν and Λ interpolated linearly
    from the privacy rows' duals, F(s) = C(s) − ν s^d + Λ(s) − e^ε Λ(s − 1) >= 0 at every radius of a
    grid 50× finer than the nodes, out to the tail (a check of the interpolation allowance)."""
    eps, d, m, n = 1.0, 2, 1, 8
    lo, r, raw = radial_lower(eps, d, m, n)
    K = n * r.periods
    mu = -raw.row_dual[r.lp.row_blocks["privacy"]]
    lam_nodes = np.concatenate([[0.0], np.cumsum(np.maximum(mu, 0.0))])  # Λ at s = 0, h, .., K h

    def lam(s):
        return np.interp(s * n, np.arange(K + 1), lam_nodes, left=0.0, right=lam_nodes[-1])

    s = np.linspace(0.0, r.periods + 3.0, 50 * n * (r.periods + 3) + 1)
    C = d / (d + m) * s ** (d + m)
    F = C - lo * s**d + lam(s) - math.exp(eps) * lam(s - 1.0)
    assert lo > 0 and np.min(F) >= -1e-9 * np.max(np.abs(C)), float(np.min(F))


def test_node_prices_are_below_the_interpolated_cost():
    """p_k <= C(s_k) − E_k, and the first node's price is <= 0 (the cell [0, h])."""
    n, N, d, m = 4, 40, 3, 2
    L = node_prices(n, N, d, m)
    k = np.arange(1, N + 1)
    C = d / (d + m) * (k / n) ** (d + m)
    E = d * (d + m - 1) / (8 * n * n) * ((k + 1) / n) ** (d + m - 2)
    assert np.all(L <= C - E) and L[0] <= 0.0


@pytest.mark.parametrize("eps,d,cost,norm", [(1.0, 2, "l1", "l1"), (0.5, 2, "l2", "l2"), (2.0, 3, "linf", "linf"),
                                             (1.0, 2, "l2sq", "l2"), (2.0, 3, "l1sq", "l1")])
def test_the_bracket_is_tight_and_holds_the_staircase(eps, d, cost, norm):
    r = solve(eps, d, cost, norm)
    assert r.certified and r.status == "optimal" and r.relative_gap <= 1e-6
    m = 2 if cost.endswith("sq") else 1
    v = staircase_nd_optimal_cost(f"pow:{m}", eps, 1.0, d)  # the ℓ1 staircase's E‖X‖₁^m: the same radial law
    assert r.lower_bound <= v <= r.upper_bound
    assert r.lp["builder"] == "radial"
    assert type(r.mechanism).__name__ == "StaircaseND" and r.mechanism.privacy().norm == norm
    assert any("Brunn-Minkowski" in c for c in r.claims)


def test_every_norm_gives_the_same_bracket():
    a, b, c = solve(1.0, 2, "l1", "l1"), solve(1.0, 2, "l2", "l2"), solve(1.0, 2, "linf", "linf")
    assert a.lower_bound == b.lower_bound == c.lower_bound and a.upper_bound == b.upper_bound == c.upper_bound


@pytest.mark.parametrize("norm", ["l2", pytest.param("linf", marks=pytest.mark.slow)])
def test_the_radial_bracket_lies_inside_the_cell_lps(norm):
    """A different relaxation (cells priced at their minimum, symmetry orbits only) must contain the
    radial bracket: both are certified."""
    cell = solve(1.0, 2, norm, norm, symmetry="orbits", resolution=2)
    rad = solve(1.0, 2, norm, norm)
    assert cell.lp["builder"] != "radial" and cell.certified
    assert cell.lower_bound <= rad.lower_bound and rad.upper_bound <= cell.upper_bound * (1 + 1e-12)
    assert cell.relative_gap > 100 * rad.relative_gap


def test_the_sensitivity_scales_the_bracket_by_its_power():
    a, b = solve(1.0, 2, "l2sq", "l2"), solve(1.0, 2, "l2sq", "l2", sensitivity=2.5)
    assert b.lower_bound == pytest.approx(6.25 * a.lower_bound, rel=1e-12)
    assert b.upper_bound == pytest.approx(6.25 * a.upper_bound, rel=1e-12)


def test_a_resolution_is_rounded_up_to_a_power_of_two_and_kept():
    r = solve(2.0, 2, "l1", "l1", resolution=10)
    assert r.lp["resolution"] == 16 and len(r.history) == 1 and r.certified
    assert any("rounded up to 16" in c for c in r.claims)
    assert r.status == "gap_not_reached" or r.relative_gap <= r.problem["target_gap"]


def test_cli_json_whole_stdout():
    p = run_cli("solve", "--epsilon", "2", "--dim", "3", "--norm", "l2", "--cost", "l2", "--domain", "continuous",
                "--target-gap", "1e-4", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["certified"] and d["status"] == "optimal" and d["relative_gap"] <= 1e-4
    assert d["lp"]["builder"] == "radial" and "staircase in the l2 norm" in d["audit"]["method"]
    st = next(x for x in d["references"] if x["name"] == "staircase")
    assert st["inside_bracket"] and d["lower_bound"] <= st["value"]


@pytest.mark.parametrize("args,mention", [
    (["--norm", "l2", "--cost", "l1sq"], "l1 sensitivity"),
    (["--norm", "l1", "--cost", "linfsq"], "linf sensitivity"),
    (["--norm", "l1", "--cost", "l1", "--symmetry", "sideways"], "--symmetry"),
    (["--norm", "lp:3", "--cost", "l1"], "norm"),
    (["--norm", "l2", "--cost", "l2", "--resolution", "100000000"], "GiB"),
])
def test_bad_input_is_one_line(args, mention):
    p = run_cli("solve", "--epsilon", "1", "--dim", "2", "--domain", "continuous", *args)
    assert p.returncode == 2 and p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and mention in lines[0] and "Traceback" not in p.stderr, p.stderr
