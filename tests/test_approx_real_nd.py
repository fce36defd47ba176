"""(ε, δ)-DP on ℝ^d (issue 20): the cube-cell LPs of :mod:`optmech.problems.approx_cells_nd`.

Each check is derived independently: the shift sets by brute force over real shifts, equation (1)
(the hockey-stick divergence of a cube-constant density is the multilinear interpolation of the
lattice divergences) by direct 2-D integration, the node prices against the multilinear
interpolant at random points, the cell means against quadrature, and the solve against mechanisms
private by their own proofs.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest

import optmech
from optmech.problems.approx_cells_nd import (audit_shifts, ball_shifts, box_points, cell_mean_upper_nd,
                                              node_prices)
from optmech.spec import Problem


def _set(a: np.ndarray) -> set:
    return {tuple(int(x) for x in v) for v in a}


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_audit_shifts_hold_every_corner_of_the_cubes_of_real_shifts(norm):
    rng = np.random.default_rng(3)
    d, n = 2, 3
    S = _set(audit_shifts(d, n, norm))
    B = _set(ball_shifts(d, n, norm))
    assert B <= S
    for _ in range(3000):
        t = rng.normal(size=d)
        t *= n * rng.random() ** 0.5 / np.linalg.norm(t, 1 if norm == "l1" else 2)
        m = np.floor(t).astype(int)
        for e in itertools.product((0, 1), repeat=d):
            v = tuple(int(x) for x in m + np.array(e))
            assert v == (0, 0) or v in S


def test_cube_density_divergence_is_multilinear_in_the_shift():
    """Equation (1), by integrating (f − e^ε f(· − t))_+ on a fine grid for a random cube-constant f."""
    rng = np.random.default_rng(11)
    R, eps = 2, 0.6
    side = 2 * R + 1
    q = rng.random((side, side))
    q /= q.sum()

    def lattice_H(v):
        pad = np.pad(q, 4)
        shifted = np.roll(pad, (v[0], v[1]), axis=(0, 1))
        return float(np.maximum(pad - math.exp(eps) * shifted, 0.0).sum())

    g = 100  # midpoints per unit; the shifts and the cells' edges fall on the grid, so the sum is exact
    lo, hi = -R - 3.5, R + 3.5
    x = lo + (np.arange(int((hi - lo) * g)) + 0.5) / g
    X, Y = np.meshgrid(x, x, indexing="ij")

    def f(a, b):
        i = np.floor(a + 0.5).astype(int) + R
        j = np.floor(b + 0.5).astype(int) + R
        ok = (i >= 0) & (i < side) & (j >= 0) & (j < side)
        return np.where(ok, q[np.clip(i, 0, side - 1), np.clip(j, 0, side - 1)], 0.0)

    F = f(X, Y)
    for t in ((0.3, 0.7), (1.25, -0.4), (-0.81, 0.07)):
        got = float(np.maximum(F - math.exp(eps) * f(X - t[0], Y - t[1]), 0.0).sum()) / g**2
        m = np.floor(t).astype(int)
        phi = np.array(t) - m
        want = 0.0
        for e in itertools.product((0, 1), repeat=2):
            w = np.prod([phi[i] if e[i] else 1 - phi[i] for i in range(2)])
            want += w * lattice_H(m + np.array(e))
        assert got == pytest.approx(want, abs=1e-9)


_EXPRESSIONS = {"sqrt(abs(x1)) + (x2 - 0.3)**2": lambda x: math.sqrt(abs(x[0])) + (x[1] - 0.3) ** 2,
                "where(x1 > 0.2, 2*abs(x2), abs(x1 + x2))": lambda x: 2 * abs(x[1]) if x[0] > 0.2 else abs(x[0] + x[1])}


@pytest.mark.parametrize("cost", ["l1", "l2", "l2sq", *_EXPRESSIONS])
def test_node_prices_under_the_interpolant_are_below_the_cost(cost):
    """E[L̂(Y) | X] <= L(X) at random X, Y the coordinatewise randomised rounding (module docstring);
    expressions (concave, shifted, discontinuous) through their sub-box enclosures."""
    from optmech.costs_nd import parse_cost_nd

    rng = np.random.default_rng(5)
    d, n, R, D = 2, 3, 5, 1.5
    h = D / n
    price, far = node_prices(cost if cost in ("l1", "l2", "l2sq") else parse_cost_nd(cost, 2), d, n, R, D)
    pts = box_points(d, R)
    table = {tuple(int(a) for a in p): float(v) for p, v in zip(pts, price)}
    L = {"l1": lambda x: np.abs(x).sum(), "l2": lambda x: np.linalg.norm(x), "l2sq": lambda x: float(x @ x),
         **_EXPRESSIONS}[cost]
    for _ in range(4000):
        x = rng.uniform(-(R + 2) * h, (R + 2) * h, size=d)
        if rng.random() < 0.3:
            x *= 0.1  # near the origin, where l2's interpolation error is first order
        c = np.floor(x / h).astype(int)
        th = x / h - c
        e = 0.0
        for s in itertools.product((0, 1), repeat=d):
            w = np.prod([th[i] if s[i] else 1 - th[i] for i in range(d)])
            v = tuple(int(a) for a in c + np.array(s))
            e += w * table.get(v, far)
        assert e <= L(x) + 1e-12


def test_expression_cell_means_are_upper_bounds():
    from optmech.costs_nd import parse_cost_nd

    rng = np.random.default_rng(3)
    k = np.array([[0, 0], [1, 0], [2, -3], [0, 4], [-1, -1]])
    u = rng.random((200_000, 2)) - 0.5
    for text, L in _EXPRESSIONS.items():
        ub = cell_mean_upper_nd(parse_cost_nd(text, 2), k, 1.0, 4)
        for kk, b in zip(k, ub):
            x = (kk + u) / 4
            mc = float(np.mean([L(v) for v in x[:20_000]]))
            assert mc <= b + 1e-2 * max(b, 1e-2)


def test_an_expression_brackets_the_same_optimum_as_its_named_cost():
    """abs(x1) + abs(x2) is l1 written as an expression: its (first-order) bracket and l1's (exact node
    prices, closed-form references) enclose the same V*, both below i.i.d. Laplace(Δ/ε), ε-DP for ℓ1
    sensitivity Δ; an asymmetric expression is solved without the symmetry reduction."""
    eps, delta = 2.0, 0.05
    named = _solve(epsilon=eps, delta=delta, norm="l1", cost="l1", resolution=2, target_gap=0.9)
    expr = _solve(epsilon=eps, delta=delta, norm="l1", cost="abs(x1) + abs(x2)", resolution=2, target_gap=0.9)
    assert expr.certified and expr.lower_bound <= expr.upper_bound
    assert expr.lower_bound <= named.upper_bound and named.lower_bound <= expr.upper_bound
    assert expr.lower_bound <= 2.0 / eps and expr.references == []
    skew = _solve(epsilon=eps, delta=delta, norm="l1", cost="abs(x1) + 2*abs(x2)", resolution=2, target_gap=0.9)
    assert skew.lower_bound <= 3.0 / eps and skew.lower_bound <= skew.upper_bound
    assert skew.history[0]["lp"]["cols"] > expr.history[0]["lp"]["cols"]  # no signed-permutation orbits


def test_cell_means_are_upper_bounds():
    rng = np.random.default_rng(2)
    k = np.array([[0, 0], [1, 0], [2, -3], [0, 4]])
    u = rng.random((400_000, 2)) - 0.5
    for cost, L in (("l1", lambda x: np.abs(x).sum(1)), ("l2", lambda x: np.linalg.norm(x, axis=1)),
                    ("l2sq", lambda x: (x * x).sum(1))):
        ub = cell_mean_upper_nd(cost, k, 1.0, 4)
        for kk, b in zip(k, ub):
            mc = float(L((kk + u) / 4).mean())
            assert mc <= b + 1e-3 * max(b, 1e-3)


def _solve(**kw):
    params = {"privacy": "approx", "domain": "continuous", "sensitivity": 1, "dim": 2, **kw}
    return optmech.solve(Problem.from_params(params), time_limit=120)


@pytest.mark.parametrize("norm,cost", [("l1", "l1"), ("l2", "l2sq")])
def test_a_small_solve_brackets_below_private_mechanisms(norm, cost):
    eps, delta = 2.0, 0.05
    r = _solve(epsilon=eps, delta=delta, norm=norm, cost=cost, resolution=2, target_gap=0.9)
    assert r.lower_bound <= r.upper_bound
    assert math.isfinite(r.upper_bound) and r.certified
    refs = {x.name: x for x in r.references}
    # the Laplace reference is named for its law: i.i.d. coordinates (l1), the l2-Laplace (l2), as in pure d-D
    assert "laplace" in refs if norm == "l1" else ("l2_laplace" in refs and "laplace" not in refs)
    for name in ("analytic_gaussian", "laplace" if norm == "l1" else "l2_laplace"):
        assert r.lower_bound <= refs[name].value * (1 + 1e-9)
    # i.i.d. Laplace of scale b per coordinate: ε-DP for ℓ1 sensitivity Δ at b = Δ/ε (ℓ2: Δ√d/ε)
    b = (1.0 if norm == "l1" else math.sqrt(2)) / eps
    iid = {"l1": 2 * b, "l2sq": 2 * 2 * b * b}[cost]
    assert r.lower_bound <= iid
    assert any("multilinear" in c for c in r.claims)


def test_cli_json_and_bad_input():
    p = subprocess.run([sys.executable, "-m", "optmech", "solve", "--privacy", "approx", "--epsilon", "2", "--delta",
                        "0.05", "--sensitivity", "1", "--dim", "2", "--norm", "l2", "--domain", "continuous", "--cost",
                        "l2", "--resolution", "2", "--target-gap", "0.9", "--json"], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    assert j["lower_bound"] <= j["upper_bound"] and j["problem"]["norm"] == "l2"
    t = subprocess.run(p.args[:-1], capture_output=True, text=True, timeout=300)  # the text report
    assert t.returncode == 0 and "(ℓ2), dim 2" in t.stdout and "bracket (certified)" in t.stdout, t.stderr
    for args, needle in ((["--cost", "linf"], "l2sq and expressions"), (["--cost", "l2", "--norm", "linf"], "l2"),
                         (["--cost", "x1 - 3"], "negative"), (["--cost", "abs(x1) + x3"], "x3"),
                         (["--cost", "x1**2 - x1*x2 + x2**2"], "proven nonnegative")):
        p = subprocess.run([sys.executable, "-m", "optmech", "solve", "--privacy", "approx", "--epsilon", "1",
                            "--delta", "0.01", "--sensitivity", "1", "--dim", "2", "--domain", "continuous", *args],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, (args, p.stderr)
        assert needle in p.stderr


# -- the mechanism the solve returns ---------------------------------------------------------------
def _cube_sum(f_vals: np.ndarray, cell: float, d: int) -> float:
    return float(f_vals.sum()) * cell**d


def _hockey_stick_on_grid(mech, t, eps: float, g: int) -> float:
    """∫ (f(x) − e^ε f(x − t))_+ dx for a cube-constant f, exactly: midpoints of a grid of g cells per
    cube, t on that grid, so both densities are constant on every grid cell."""
    h, R = mech.h, int(np.abs(mech.reps).max()) + 2
    u = h / g
    x = (np.arange(-(R + 0.5) * g, (R + 0.5) * g) + 0.5) * u
    X = np.stack(np.meshgrid(x, x, indexing="ij"), axis=-1)
    return _cube_sum(np.maximum(mech.pdf(X) - math.exp(eps) * mech.pdf(X - np.asarray(t)), 0.0), u, 2)


def test_the_cube_mechanism_is_the_audited_candidate(monkeypatch):
    """Without the closed-form references the upper bound is an audited cube density: its pdf is a
    density, its sample cost agrees with the upper bound, its divergence at real shifts is <= δ (exact
    grid integration), and it survives the Result's JSON round trip."""
    from optmech.families.approx_real_nd import ApproxRealNDFamily
    from optmech.mechanisms.solved import CubePMFND, mechanism_from_solver_dict
    from optmech.result import Result

    monkeypatch.setattr(ApproxRealNDFamily, "initial_uppers", lambda self: [])
    eps, delta = 2.0, 1e-2
    r = _solve(epsilon=eps, delta=delta, norm="l1", cost="l1", resolution=2, target_gap=0.9)
    m = r.mechanism
    assert r.certified and isinstance(m, CubePMFND) and m.kind == "cube_pmf_nd" and m.dim == 2
    assert m.h == 0.5 and m.group == "signed_permutations"
    assert not any("not exported" in c for c in r.claims) and any("cube_pmf_nd" in c for c in r.claims)
    p = m.privacy()  # δ re-audited on the masses (issue 36 item 9): the solve's realised δ, up to rounding
    assert (p.notion, p.epsilon, p.sensitivity, p.norm) == ("approx", eps, 1.0, "l1") and p.delta <= delta
    assert r.audit["passed"] and r.audit["realised_delta"] <= delta
    assert abs(p.delta - r.audit["realised_delta"]) <= 1e-12 and "audited at load" in p.note
    # the pdf integrates to 1 on the box (constant on cubes: midpoints of 2 sub-cells per cube are exact)
    R = int(np.abs(m.reps).max()) + 1
    x = (np.arange(-(R + 0.5) * 2, (R + 0.5) * 2) + 0.5) * m.h / 2
    X = np.stack(np.meshgrid(x, x, indexing="ij"), axis=-1)
    assert _cube_sum(m.pdf(X), m.h / 2, 2) == pytest.approx(1.0, abs=1e-12)
    assert float(m.pdf([100.0, 0.0])) == 0.0
    # its cost: the exact cube means sum to the certified upper bound (l1 cube means are exact up to
    # rounding), and a sample agrees within its error
    assert m.expected_cost("l1") <= r.upper_bound and m.expected_cost("l1") == pytest.approx(r.upper_bound, rel=1e-9)
    s = np.abs(m.sample(100_000, rng=7)).sum(axis=1)
    assert abs(s.mean() - r.upper_bound) < 5 * s.std() / math.sqrt(len(s))
    # (ε, δ) at real shifts of ℓ1 norm 1 (and inside), by exact integration on a grid of h/8
    for t in ((1.0, 0.0), (0.5, -0.5), (0.375, 0.625), (-0.25, 0.125)):
        assert _hockey_stick_on_grid(m, t, eps, 8) <= delta * (1 + 1e-9)
    # the JSON round trip, and the same law listed cube by cube (symmetry "none")
    back = Result.from_json(r.to_json(include_mechanism=True))
    assert back.mechanism == m and back.mechanism_dict() == r.mechanism_dict()
    assert np.array_equal(back.mechanism.pdf(X), m.pdf(X)) and back.mechanism.privacy() == p
    d = r.mechanism_dict()
    full = [(np.array(z) * s1, w) for z, w in zip(d["representatives"], d["mass"])
            for s1 in {(a, b) for a in (-1, 1) for b in (-1, 1)}]
    pts = {tuple(int(v) for v in z[list(o)]): w for z, w in full for o in ((0, 1), (1, 0))}
    flat = mechanism_from_solver_dict({**d, "symmetry": "none", "representatives": [list(k) for k in pts],
                                       "mass": list(pts.values())})
    assert flat.group == "none" and np.allclose(flat.pdf(X), m.pdf(X), rtol=1e-15, atol=0)
    assert flat.expected_cost("l1") == pytest.approx(m.expected_cost("l1"), rel=1e-12)


@pytest.mark.parametrize("norm,cls", [("l1", "LaplaceND"), ("l2", "StaircaseND")])
def test_the_reference_mechanism_has_the_reference_calibration(norm, cls):
    """At resolution 2 a pure ε-DP reference is the upper bound: for ℓ1 the product Laplace, for ℓ2 (at ε = 8,
    where the staircase is cheaper than the radial shell law of the quick resolution) the ℓ2 staircase (cheaper
    than the ℓ2-Laplace, which is its γ → 0 limit's neighbour); the mechanism returned is that law with the
    reference's own calibration, pure ε-DP in the sensitivity's norm."""
    eps, delta = (2.0 if norm == "l1" else 8.0), 1e-2
    r = _solve(epsilon=eps, delta=delta, norm=norm, cost=norm, resolution=2, target_gap=0.9)
    m = r.mechanism
    name = "laplace" if norm == "l1" else "staircase"
    assert r.audit["method"] == f"closed form: the {name} reference (its own privacy proof)"
    assert type(m).__name__ == cls and m.dim == 2
    ref = next(x for x in r.references if x.name == name)
    if norm == "l1":
        assert m.scale == ref.parameters["scale"]
    else:
        assert m.gamma == ref.parameters["gamma"] and ref.parameters["norm"] == "l2"
        l2lap = next(x for x in r.references if x.name == "l2_laplace")
        assert ref.value <= l2lap.value
    assert m.epsilon == eps and m.sensitivity == 1.0
    assert r.upper_bound == pytest.approx(ref.value, rel=1e-11)
    p = m.privacy()
    assert (p.notion, p.epsilon, p.delta, p.norm) == ("pure", eps, 0.0, norm)
    assert any(c.startswith(f"mechanism: the {name} reference itself, {cls}(") for c in r.claims)
    assert not any("not exported" in c for c in r.claims)
    if norm == "l1":  # the pdf integrates to 1 (midpoint rule on [-12, 12]^2; the tails beyond are below 1e-9)
        u = 0.01
        x = (np.arange(-1200, 1200) + 0.5) * u
        X = np.stack(np.meshgrid(x, x, indexing="ij"), axis=-1)
        assert _cube_sum(m.pdf(X), u, 2) == pytest.approx(1.0, abs=1e-3)
    else:  # radial: ∫ pdf(r e_1) 2π r dr on [0, 6] (midpoints; the tail beyond is below e^-40)
        u = 1e-5
        rad = (np.arange(600_000) + 0.5) * u
        assert math.fsum(m.pdf(np.stack([rad, np.zeros_like(rad)], axis=-1)) * 2 * math.pi * rad * u) == pytest.approx(
            1.0, abs=1e-4)
    s = m.sample(100_000, rng=3)
    c = np.abs(s).sum(axis=1) if norm == "l1" else np.linalg.norm(s, axis=1)
    assert abs(c.mean() - r.upper_bound) < 5 * c.std() / math.sqrt(len(c))


def test_a_gaussian_upper_bound_returns_the_gaussian_and_says_why():
    """result.mechanism is the law at the upper end in every dimension (issue 38): the d-D Gaussian."""
    from optmech.mechanisms import GaussianND

    r = _solve(epsilon=1.0, delta=0.05, norm="l1", cost="l2sq", resolution=2, target_gap=0.9)
    assert r.audit["method"] == "closed form: the analytic_gaussian reference (its own privacy proof)"
    sigma = next(x for x in r.references if x.name == "analytic_gaussian").parameters["sigma"]
    assert isinstance(r.mechanism, GaussianND) and r.mechanism.sigma == sigma
    assert r.mechanism.expected_cost("l2sq") == pytest.approx(r.upper_bound, rel=1e-9)
    line = next(c for c in r.claims if c.startswith("mechanism:"))
    assert "GaussianND" in line and repr(sigma) in line


def test_cli_json_and_the_saved_mechanism(tmp_path):
    from optmech.result import Result

    save = tmp_path / "r.json"
    p = subprocess.run([sys.executable, "-m", "optmech", "solve", "--privacy", "approx", "--epsilon", "8", "--delta",
                        "1e-2", "--sensitivity", "1", "--dim", "2", "--norm", "l2", "--domain", "continuous", "--cost",
                        "l2", "--resolution", "2", "--target-gap", "0.9", "--time-limit", "30", "--json", "--save",
                        str(save)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)  # the whole stdout is the JSON result
    assert not any("not exported" in c for c in j["claims"])
    assert any(c.startswith("mechanism: the staircase reference itself, StaircaseND(") for c in j["claims"])
    saved = Result.from_json(save.read_text())
    gamma = next(x for x in j["references"] if x["name"] == "staircase")["parameters"]["gamma"]
    assert saved.mechanism_dict() == {"name": "staircase_nd", "epsilon": 8.0, "sensitivity": 1.0, "gamma": gamma,
                                      "dim": 2, "norm": "l2"}
    assert type(saved.mechanism).__name__ == "StaircaseND" and saved.mechanism.gamma == gamma
    assert saved.upper_bound == j["upper_bound"]
    # `optmech sample --from` reads the saved file as users do (a CSV of d columns)
    out = tmp_path / "s.csv"
    s = subprocess.run([sys.executable, "-m", "optmech", "sample", "--from", str(save), "-n", "5", "--out", str(out),
                        "--seed", "3"], capture_output=True, text=True, timeout=120)
    assert s.returncode == 0, s.stderr
    rows = out.read_text().splitlines()
    assert rows[0] == "x1,x2" and len(rows) == 6 and all(len(r.split(",")) == 2 for r in rows[1:])


def test_a_saved_cube_mechanism_loads_from_its_file(monkeypatch, tmp_path):
    """The file a user saves holds the cube density; `load_mechanism_file` (behind `sample --from`)
    rebuilds it with the problem's (ε, δ)."""
    from optmech.families.approx_real_nd import ApproxRealNDFamily
    from optmech.mechanisms.files import load_mechanism_file
    from optmech.mechanisms.solved import CubePMFND

    monkeypatch.setattr(ApproxRealNDFamily, "initial_uppers", lambda self: [])
    r = _solve(epsilon=2.0, delta=1e-2, norm="l1", cost="l1", resolution=2, target_gap=0.9)
    path = tmp_path / "cube.json"
    path.write_text(r.to_json(include_mechanism=True))
    m = load_mechanism_file(str(path))
    assert isinstance(m, CubePMFND) and m == r.mechanism
    assert m.privacy().epsilon == 2.0 and abs(m.privacy().delta - r.audit["realised_delta"]) <= 1e-12  # re-audited
