"""(ε, δ)-DP: the hockey-stick builder and its certified bracket (1-D and d-D), the solve loop,
and the CLI contract of ``optmech solve --privacy approx`` and ``optmech table``.

Expected values are the digest's independently derived optima (reference/approx-dp.md), summed
here directly, or properties (audits, d = 2 vs 1-D), never outputs of the code under test.
"""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

import optmech
from optmech.audit import delta_curve, finite_pmf, hockey_stick_array
from optmech.costs import parse_cost
from optmech.problems.approx import build_approx, shift_vectors
from optmech.spec import ApproxDP, IntegerLattice, Problem, PureDP
from test_cli import run_cli


def solve(eps, delta, D, cost="abs", dim=1, **kw):
    c = cost if dim > 1 else parse_cost(cost)
    return optmech.solve(Problem(privacy=ApproxDP(eps, delta), cost=c, sensitivity=D, domain=IntegerLattice(), dim=dim, **kw))


def truncated_geometric_cost(eps: float, delta: float, L) -> float:
    """The Δ = 1 optimum of the digest (§3): 𝒫_0 = (2δ + e^ε − 1)/(1 + e^ε), 𝒫_k = 𝒫_0 e^{−ε|k|},
    with a partial last atom (both sides) so that the mass is 1."""
    p0 = (2 * delta + math.expm1(eps)) / (1 + math.exp(eps))
    mass, k, total = p0, 0, p0 * L(0)
    while mass < 1:
        k += 1
        pk = p0 * math.exp(-eps * k)
        take = min(pk, (1 - mass) / 2)
        total += 2 * take * L(k)
        mass += 2 * take
    return total


@pytest.mark.parametrize("eps,delta", [(0.1, 0.05), (0.5, 0.01), (1.0, 0.1), (0.01, 0.005)])
@pytest.mark.parametrize("cost,L", [("abs", abs), ("square", lambda k: k * k)])
def test_delta1_bracket_contains_truncated_geometric(eps, delta, cost, L):
    r = solve(eps, delta, 1, cost)
    assert r.certified and r.relative_gap <= 1e-9
    v = truncated_geometric_cost(eps, delta, L)
    assert r.lower_bound - 1e-12 * v <= v <= r.upper_bound + 1e-12 * v


@pytest.mark.parametrize("D,delta", [(1, 0.1), (1, 0.05), (2, 0.1), (3, 0.05)])
def test_zero_epsilon_l1_is_uniform(D, delta):
    """(0, δ), ℓ1: V* = Δ/(4δ), the uniform mechanism [GV13, Thm 1 for Δ = 1; digest §4.1 for Δ > 1]."""
    r = solve(0.0, delta, D, "abs")
    v = D / (4 * delta)
    assert r.certified and r.lower_bound - 1e-9 * v <= v <= r.upper_bound + 1e-9 * v


@pytest.mark.parametrize("eps,delta,D,cost", [(0.5, 0.05, 3, "abs"), (0.2, 0.02, 2, "square"), (1.0, 0.1, 5, "abs")])
def test_returned_pmf_passes_an_independent_audit(eps, delta, D, cost):
    r = solve(eps, delta, D, cost)
    m = r.mechanism.law
    k = np.arange(m.k_lo, m.k_hi + 1)
    pmf = finite_pmf(k, m.weights / m.total)
    got = delta_curve(pmf, D, [eps])[0]  # every shift 0 < |s| <= Δ, rigorous
    assert got <= delta
    assert r.audit["passed"] and r.audit["realised_delta"] <= delta
    # and the price of that pmf is the upper bound
    L = parse_cost(cost)
    assert math.fsum(L(k.astype(float)) * m.weights / m.total) == pytest.approx(r.upper_bound, rel=1e-12)


def test_all_shifts_matter():
    """Keeping only the shift Δ would admit sub-lattice pmfs (reference/approx-dp.md §3): the
    solver's pmf must be private for shift 1 as well, and it costs more than a shift-Δ-only LP."""
    eps, delta, D = 0.5, 0.05, 4
    r = solve(eps, delta, D, "abs")
    m = r.mechanism.law
    pmf = finite_pmf(np.arange(m.k_lo, m.k_hi + 1), m.weights / m.total)
    for s in range(1, D + 1):
        assert max(delta_curve(pmf, s, [eps])) <= delta
    from optmech.solvers import solve_lp

    alp = build_approx(parse_cost("abs"), eps, delta, D, 60)
    keep = np.abs(alp.shifts[:, 0]) == D
    # drop the rows of shifts < Δ by relaxing their budgets to 1 (t <= δ bounds: set t free up to 1)
    lp = alp.lp
    ru = lp.row_upper.copy()
    budget = lp.row_blocks["budget"]
    ru[budget.start:budget.stop][~keep] = 1e9
    cu = lp.col_upper.copy()
    K, n_in = len(alp.shifts), (lp.col_blocks["t"].stop - lp.col_blocks["t"].start) // len(alp.shifts)
    tcols = lp.col_blocks["t"].start + np.arange(K * n_in).reshape(K, n_in)
    cu[tcols[~keep].ravel()] = 1.0
    import dataclasses

    relaxed = solve_lp(dataclasses.replace(lp, row_upper=ru, col_upper=cu))
    assert relaxed.objective < r.lower_bound * (1 - 1e-3)


def test_d2_delta1_is_twice_the_1d_optimum():
    """Δ = 1 in d = 2: the marginals are 1-D (ε, δ)-DP and the product of 1-D optima is feasible,
    so V*_2 = 2 V*_1 (reference/approx-dp.md §4.3, §5.3)."""
    for eps, delta in [(1.0, 0.1), (0.3, 0.05)]:
        r1, r2 = solve(eps, delta, 1, "abs"), solve(eps, delta, 1, "l1", dim=2)
        assert r1.certified and r2.certified
        assert r2.lower_bound <= 2 * r1.upper_bound * (1 + 1e-9)
        assert 2 * r1.lower_bound <= r2.upper_bound * (1 + 1e-9)
        assert r2.relative_gap < 1e-8


def test_d3_delta1_is_three_times_the_1d_optimum():
    r1, r3 = solve(1.0, 0.1, 1, "abs"), solve(1.0, 0.1, 1, "l1", dim=3)
    assert r3.certified
    assert 3 * r1.lower_bound <= r3.upper_bound * (1 + 1e-9) and r3.lower_bound <= 3 * r1.upper_bound * (1 + 1e-9)


def test_d2_pmf_is_private_for_every_shift():
    r = solve(0.5, 0.05, 2, "l2sq", dim=2)
    assert r.certified
    assert r.audit["shifts"] == len(shift_vectors(2, 2, half=False)) == 12  # the digest's count for d = Δ = 2
    m = r.mechanism  # the audited pmf on Z^2, a library mechanism with an exact finite-support sampler
    assert m.dim == 2 and m.sample(5, rng=0).shape == (5, 2)
    assert m.privacy().notion == "approx" and m.privacy().delta <= 0.05


def test_asymmetric_cost_and_symmetry_off():
    a = solve(0.5, 0.05, 2, "abs")
    b = solve(0.5, 0.05, 2, "abs", symmetry="off")
    assert abs(a.upper_bound - b.upper_bound) <= 1e-8 * a.upper_bound
    asym = solve(0.5, 0.05, 2, "where(x > 0, x, 3*abs(x))")
    assert asym.certified and asym.relative_gap <= 1e-9
    assert not any("even reduction" in c for c in asym.claims)
    assert asym.upper_bound > a.lower_bound  # a costlier cost


def test_delta_zero_is_pure_dp():
    a = optmech.solve(Problem(privacy=ApproxDP(1.0, 0.0), cost="abs", sensitivity=3, domain=IntegerLattice()))
    b = optmech.solve(Problem(privacy=PureDP(1.0), cost="abs", sensitivity=3, domain=IntegerLattice()))
    assert a.upper_bound == pytest.approx(b.upper_bound, rel=1e-12)


def test_hockey_stick_array_matches_brute_force_in_2d():
    rng = np.random.default_rng(2)
    p = rng.random((5, 6))
    p /= p.sum()
    shifts = shift_vectors(2, 2, half=False)
    got = hockey_stick_array(p, shifts, 0.4)
    for v, g in zip(shifts, got):
        total = 0.0
        for i in range(5):
            for j in range(6):
                a, b = i + v[0], j + v[1]
                q = p[a, b] if 0 <= a < 5 and 0 <= b < 6 else 0.0
                total += max(0.0, p[i, j] - math.exp(0.4) * q)
        assert total <= g <= total + 1e-14


@pytest.mark.parametrize(
    "kw",
    [dict(epsilon=-0.1, delta=0.1), dict(epsilon=0.0, delta=0.0), dict(epsilon=1.0, delta=1.0),
     dict(epsilon=1.0, delta=-0.1), dict(epsilon=float("nan"), delta=0.1), dict(epsilon=1.0, delta=float("nan"))],
)
def test_bad_privacy(kw):
    from optmech.errors import SpecError

    with pytest.raises(SpecError):
        ApproxDP(**kw)


# -- CLI -------------------------------------------------------------------------------------------
def test_cli_solve_approx_json_contract():
    p = run_cli("solve", "--privacy", "approx", "--epsilon", "0.5", "--delta", "0.05", "--sensitivity", "3",
                "--domain", "integer", "--cost", "abs", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for key in ("lower_bound", "upper_bound", "relative_gap", "certified", "seconds", "references", "lp"):
        assert key in d
    assert d["certified"] and d["relative_gap"] <= 1e-9
    names = {r["name"] for r in d["references"]}
    assert {"uniform", "discrete_laplace", "discrete_staircase", "thm_lower_bound"} <= names
    thm = next(r for r in d["references"] if r["name"] == "thm_lower_bound")
    assert isinstance(thm["valid"], bool)
    for r in d["references"]:
        if r.get("kind") == "upper" and r["value"] not in (None, "inf"):
            assert r["value"] >= d["lower_bound"] * (1 - 1e-9)
        if r.get("kind") == "lower" and r.get("valid"):
            assert r["value"] <= d["upper_bound"] * (1 + 1e-9)


def test_cli_solve_approx_dim2():
    p = run_cli("solve", "--privacy", "approx", "--epsilon", "1", "--delta", "0.1", "--sensitivity", "1",
                "--domain", "integer", "--dim", "2", "--cost", "l1", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["certified"]


@pytest.mark.parametrize(
    "args",
    [["--epsilon", "1", "--delta", "1"], ["--epsilon", "1", "--delta", "-0.5"], ["--epsilon", "-1", "--delta", "0.1"],
     ["--epsilon", "0", "--delta", "0"], ["--epsilon", "1", "--delta", "0.1", "--sensitivity", "2.5"],
     ["--epsilon", "1", "--delta", "x"], ["--epsilon", "1"], ["--epsilon", "1", "--delta", "0.1", "--dim", "2", "--cost", "abs^2"],
     ["--epsilon", "1", "--delta", "0.1", "--dim", "0"]],
)
def test_cli_solve_approx_bad_input(args):
    p = run_cli("solve", "--privacy", "approx", "--domain", "integer", *args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1


APPROX_COLUMNS = ["sensitivity", "epsilon", "delta", "lb_theorem", "lb_theorem_valid", "lb_relaxed_lp", "v_star_lower",
                  "v_star_upper", "ub_uniform", "ub_laplace", "ub_staircase", "ratio_best_simple_to_v_star"]


def test_cli_table_approx_csv(tmp_path):
    out = tmp_path / "t.csv"
    p = run_cli("table", "--privacy", "approx", "--cost", "abs", "--sensitivity", "1,3", "--epsilon", "0.1,0.5",
                "--delta", "0.05", "--format", "csv", "--out", str(out), "--workers", "2")
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == 4
    assert list(rows[0])[: len(APPROX_COLUMNS)] == APPROX_COLUMNS
    assert [(r["sensitivity"], r["epsilon"]) for r in rows] == [("1", "0.1"), ("1", "0.5"), ("3", "0.1"), ("3", "0.5")]
    for r in rows:
        lo, up = float(r["v_star_lower"]), float(r["v_star_upper"])
        assert lo <= up and (up - lo) <= 1e-8 * up
        for ub in ("ub_uniform", "ub_laplace", "ub_staircase"):
            if r[ub]:
                assert float(r[ub]) >= lo * (1 - 1e-9)
        if r["lb_theorem_valid"] == "true":
            assert float(r["lb_theorem"]) <= up * (1 + 1e-9)
        if r["lb_relaxed_lp"]:
            assert float(r["lb_relaxed_lp"]) <= up * (1 + 1e-9)
        best = min(float(r["ub_uniform"]), float(r["ub_laplace"]))
        assert float(r["ratio_best_simple_to_v_star"]) == pytest.approx(best / up, rel=1e-12)


def test_cli_table_pure_json():
    p = run_cli("table", "--privacy", "pure", "--cost", "abs", "--sensitivity", "1", "--epsilon", "0.5,2",
                "--domain", "continuous", "--format", "json", "--workers", "1")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert [list(r)[:7] for r in rows] == [["sensitivity", "epsilon", "v_star_lower", "v_star_upper", "staircase", "laplace",
                                             "ratio_laplace_to_v_star"]] * 2
    for r in rows:
        v = 1 / (2 * math.sinh(r["epsilon"] / 2))  # [Geng13] Thm 2.5
        assert r["v_star_lower"] - 1e-9 <= v <= r["v_star_upper"] + 1e-9
        assert r["ratio_laplace_to_v_star"] == pytest.approx((1 / r["epsilon"]) / r["v_star_upper"], rel=1e-12)


@pytest.mark.parametrize(
    "args",
    [["--privacy", "approx", "--sensitivity", "1", "--epsilon", "1", "--delta", ""],
     ["--privacy", "approx", "--sensitivity", "1,", "--epsilon", "1", "--delta", "0.1"],
     ["--privacy", "approx", "--sensitivity", "1.5", "--epsilon", "1", "--delta", "0.1"],
     ["--privacy", "approx", "--sensitivity", "1", "--epsilon", "a", "--delta", "0.1"],
     ["--privacy", "approx", "--sensitivity", "1", "--epsilon", "1", "--delta", "1.2"],
     ["--privacy", "approx", "--sensitivity", "1", "--epsilon", "0", "--delta", "0"],
     ["--privacy", "approx", "--sensitivity", "1", "--epsilon", "1"],
     ["--privacy", "pure", "--sensitivity", "1", "--epsilon", "1", "--delta", "0.1"],
     ["--privacy", "approx", "--sensitivity", ",".join(str(i) for i in range(1, 30)), "--epsilon",
      ",".join(str(0.1 * i) for i in range(1, 6)), "--delta", "0.01,0.02,0.05,0.1"]],
)
def test_cli_table_bad_input(args):
    p = run_cli("table", *args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1


def test_dd_pmf_is_saved_and_plotted(tmp_path):
    """d > 1: --save writes the audited pmf (lattice_pmf_nd, finite support); it passes an
    independent hockey-stick check for every shift; --plot draws it."""
    png, saved = tmp_path / "a.png", tmp_path / "a.json"
    p = run_cli("solve", "--privacy", "approx", "--epsilon", "0.5", "--delta", "0.05", "--sensitivity", "2",
                "--domain", "integer", "--dim", "2", "--cost", "l1", "--plot", str(png), "--save", str(saved))
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"
    mech = json.loads(saved.read_text())["mechanism"]
    assert mech["kind"] == "lattice_pmf_nd" and mech["symmetry"] == "none"
    pts, mass = np.asarray(mech["representatives"]), np.asarray(mech["mass"])
    R = int(np.abs(pts).max())
    grid = np.zeros((2 * R + 1,) * 2)
    grid[pts[:, 0] + R, pts[:, 1] + R] = mass
    assert math.fsum(mass) == pytest.approx(1.0, abs=1e-12)
    for v in shift_vectors(2, 2, half=False):  # brute-force hockey-stick sums, padded by Δ
        padded = np.pad(grid, 2)
        shifted = np.roll(padded, (-v[0], -v[1]), axis=(0, 1))
        assert np.maximum(padded - math.exp(0.5) * shifted, 0).sum() <= 0.05 + 1e-12
