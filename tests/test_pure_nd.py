"""Pure ε-DP on ℤ^d: the full lattice LP with signed-permutation orbits, its certified bracket,
and the CLI.  Expected values: the product of 1-D geometric laws for Δ = 1 (exactly optimal for
separable costs, reference/multidim.md §8) and the ℓ1 lattice staircase (the digest's observed
optimum for d = 3..5), both summed independently of the LP."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import optmech
from optmech.certify import dual_lower_bound
from optmech.mechanisms.discrete_staircase_nd import discrete_staircase_nd_costs
from optmech.problems.pure_nd import build_pure_nd, orbit_points
from optmech.solvers import solve_lp
from optmech.spec import IntegerLattice, Problem, PureDP
from test_cli import run_cli


def solve(eps, D, d, cost="l1", norm="l1", **kw):
    return optmech.solve(Problem(privacy=PureDP(eps), cost=cost, sensitivity=D, domain=IntegerLattice(), dim=d, norm=norm, **kw))


def test_orbits_partition_the_domain():
    for d, R, shape in [(2, 5, "cube"), (3, 4, "cube"), (3, 6, "ball"), (4, 3, "ball")]:
        full = orbit_points(d, R, reduced=False, shape=shape)
        red = orbit_points(d, R, reduced=True, shape=shape)
        assert red.size.sum() == len(full.reps)
        assert set(red.index(full.reps)) == set(range(len(red.reps)))


@pytest.mark.parametrize("eps", [0.5, 1.5])
@pytest.mark.parametrize("cost", ["l1", "l2sq"])
def test_delta1_is_the_product_of_geometrics(eps, cost):
    """Δ = 1, d = 2: V* = 2 × the 1-D geometric cost [Geng13, Thm 2.12 per coordinate; digest §8]."""
    b = math.exp(-eps)
    one = 2 * b / (1 - b * b) if cost == "l1" else 2 * b / (1 - b) ** 2
    r = solve(eps, 1, 2, cost)
    assert r.certified and r.relative_gap <= 1e-6
    assert r.lower_bound - 1e-9 <= 2 * one <= r.upper_bound + 1e-9


@pytest.mark.parametrize("d,D,R", [(2, 2, 12), (3, 1, 6), (2, 1, 8)])
def test_orbit_reduction_is_exact(d, D, R):
    for norm in ("l1", "linf"):
        a = build_pure_nd("l1", 1.0, D, R, dim=d, norm=norm, reduced=True)
        b = build_pure_nd("l1", 1.0, D, R, dim=d, norm=norm, reduced=False)
        ra, rb = solve_lp(a.lp), solve_lp(b.lp)
        assert ra.objective == pytest.approx(rb.objective, rel=1e-8)
        la, lb = dual_lower_bound(a.lp, ra.row_dual).value, dual_lower_bound(b.lp, rb.row_dual).value
        assert la == pytest.approx(lb, rel=1e-7)
        assert a.lp.cols < b.lp.cols


def test_d3_lattice_optimum_is_the_lattice_staircase():
    eps, D, d = 2.0, 2, 3
    r = solve(eps, D, d, "l1")
    v = float(discrete_staircase_nd_costs("l1", eps, D, d).min())
    assert r.certified and r.relative_gap <= 1e-6
    assert r.lower_bound - 1e-9 * v <= v <= r.upper_bound + 1e-9 * v
    assert any(x.name == "discrete_staircase" and x.inside_bracket for x in r.references)


def test_linf_norm_is_certified_and_below_the_product_laplace():
    r = solve(1.0, 1, 2, "l1", norm="linf")
    assert r.certified
    lap = next(x for x in r.references if x.name == "discrete_laplace")
    assert r.lower_bound <= lap.value  # i.i.d. discrete Laplace at ε/d is ε-DP for ℓ∞ sensitivity 1
    # ℓ∞ sensitivity 1 allows more shifts than ℓ1 sensitivity 1: the optimum costs more
    assert r.lower_bound > solve(1.0, 1, 2, "l1").upper_bound


def test_cli_dim2_json_and_errors():
    p = run_cli("solve", "--dim", "2", "--epsilon", "1", "--sensitivity", "2", "--domain", "integer", "--cost", "l1", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["certified"] and d["problem"]["dim"] == 2 and d["problem"]["norm"] == "l1"
    for key in ("lower_bound", "upper_bound", "relative_gap", "seconds", "references", "lp"):
        assert key in d
    for bad in (["--norm", "l3"], ["--cost", "x1+x3"], ["--cost", "x"], ["--resolution", "4"], ["--dim", "0"],
                ["--sensitivity", "1.5"], ["--dim", "8", "--sensitivity", "6"], ["--cost", "abs(x1).real"]):
        args = ["solve", "--dim", "2", "--epsilon", "1", "--sensitivity", "2", "--domain", "integer", "--cost", "l1", *bad]
        p = run_cli(*args)
        assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, (bad, p.stderr)


@pytest.mark.slow  # a long solve: the default suite keeps to its time budget
def test_conjecture_mode(tmp_path):
    """--candidate: the ℓ1 lattice staircase is optimal within the certificate at d = 2 (where the
    continuous analogue is proven, [Geng13] Thm 3.1); the product Laplace is not; infeasible candidates
    are refused before solving."""
    base = ["solve", "--dim", "2", "--epsilon", "1", "--sensitivity", "2", "--domain", "integer", "--cost", "l1", "--json"]
    d = json.loads(run_cli(*base, "--candidate", "staircase").stdout)
    c = d["candidate"]
    assert set(c) >= {"name", "value", "gap_to_lower_bound"}
    assert c["optimal_within_certificate"] and c["gap_to_lower_bound"] <= 1e-6
    assert c["value"] == pytest.approx(float(discrete_staircase_nd_costs("l1", 1.0, 2, 2).min()), rel=1e-13)
    lap = json.loads(run_cli(*base, "--candidate", "laplace").stdout)["candidate"]
    b = math.exp(-0.5)  # i.i.d. discrete Laplace, λ = e^{-ε/Δ}: E‖X‖₁ = 2·2λ/(1−λ²) [GV13, (122)]
    assert lap["value"] == pytest.approx(2 * 2 * b / (1 - b * b), rel=1e-13)
    assert not lap["optimal_within_certificate"] and lap["gap_to_lower_bound"] > 1e-3
    # a saved mechanism as the candidate; one made for a larger ε is refused (exit 2, one line)
    f = tmp_path / "m.json"
    for eps, code in (("1", 0), ("2", 2)):
        p = run_cli("mechanism", "--mechanism", "discrete_staircase", "--dim", "2", "--epsilon", eps, "--sensitivity", "2", "--json")
        f.write_text(json.dumps(json.loads(p.stdout)["definition"]))
        p = run_cli(*base, "--candidate", str(f))
        assert p.returncode == code, p.stderr
        if code == 0:
            assert json.loads(p.stdout)["candidate"]["optimal_within_certificate"]
        else:
            assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1
    for bad in ("nope", str(tmp_path / "missing.json")):
        p = run_cli(*base, "--candidate", bad)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    # the layered candidate (the ℓ1-shell LP) is the lattice staircase here: optimal within the certificate
    lay = json.loads(run_cli(*base, "--candidate", "layered").stdout)["candidate"]
    assert lay["name"] == "layered" and lay["optimal_within_certificate"]
    assert lay["parameters"]["layered_lower_bound"] <= lay["value"]
    p = run_cli(*base, "--candidate", "layered", "--norm", "linf")
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1


def test_l2_sensitivity_against_l1_balls():
    """ℓ2 balls of radius 1 and 2 in ℤ² are the ℓ1 balls of the same radius, and the ℓ2 ball of
    radius 3 lies between the ℓ1 balls of radius 3 and 4 (‖v‖₁ <= √2·3 < 5): the optima must match
    and be sandwiched.  d = 3, Δ = 1: 3 × the 1-D geometric optimum for ℓ2² [Geng13, Thm 2.12]."""
    for D in (1, 2):
        a, b = solve(1.0, D, 2, "l1", norm="l2"), solve(1.0, D, 2, "l1", norm="l1")
        assert a.certified and b.certified
        assert a.lower_bound <= b.upper_bound * (1 + 1e-12) and b.lower_bound <= a.upper_bound * (1 + 1e-12)
    mid = solve(1.0, 3, 2, "l1", norm="l2")
    assert mid.certified
    assert solve(1.0, 3, 2, "l1").upper_bound < mid.lower_bound
    assert mid.upper_bound < solve(1.0, 4, 2, "l1").lower_bound
    b = math.exp(-1.0)
    r = solve(1.0, 1, 3, "l2sq", norm="l2")
    assert r.certified and r.lower_bound <= 3 * 2 * b / (1 - b) ** 2 <= r.upper_bound


def test_saved_mechanism_and_plots(tmp_path):
    """--save writes the d-D mechanism (per-point masses of the orbit representatives, summing to 1
    over the orbits); --plot draws the heatmaps (d = 2) or the radial profile (d = 3)."""
    from optmech.plots import nd_masses, orbit_sizes

    for d in (2, 3):
        png, saved = tmp_path / f"d{d}.png", tmp_path / f"d{d}.json"
        p = run_cli("solve", "--dim", str(d), "--epsilon", "2", "--sensitivity", "1", "--domain", "integer", "--cost", "l1",
                    "--plot", str(png), "--save", str(saved), "--symmetry", "orbits")
        assert p.returncode == 0, p.stderr
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        mech = json.loads(saved.read_text())["mechanism"]
        assert mech["kind"] == "lattice_pmf_nd" and mech["dim"] == d
        reps = np.asarray(mech["representatives"])
        assert math.fsum(orbit_sizes(reps) * np.asarray(mech["mass"])) == pytest.approx(1.0, abs=1e-12)
        # the mass at the origin and at a unit vector agree with the i.i.d. geometric optimum (Δ = 1)
        b = math.exp(-2.0)
        p0 = ((1 - b) / (1 + b)) ** d
        pts = np.zeros((2, d), dtype=np.int64)
        pts[1, 0] = -1
        assert np.allclose(nd_masses(mech, pts), [p0, p0 * b], rtol=1e-6)
