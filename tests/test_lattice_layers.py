"""The coupled ℓ1-layer lower bound on ℤ^d (optmech/problems/lattice_layers.py).

Independent checks: couplings at the level of points (max-flow on the point graph, no orbits), the
lifted dual checked point by point against the full lattice LP's dual constraints, the full lattice
LP's certified bracket (``symmetry="orbits"``), and the lattice staircase's closed form.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow

import optmech
from optmech.mechanisms.discrete_staircase_nd import discrete_staircase_nd_costs
from optmech import couplings as cp
from optmech.problems import lattice_layers as ll
from optmech.solvers.highs import HighsBackend
from optmech.spec import IntegerLattice, Problem, PureDP
from test_cli import run_cli


def sphere_points(k: int, d: int) -> np.ndarray:
    pts = [p for p in itertools.product(range(-k, k + 1), repeat=d) if sum(map(abs, p)) == k]
    return np.array(pts, dtype=np.int64).reshape(-1, d)


def point_coupling(k: int, d: int) -> np.ndarray | None:
    """The joint law (|S_k| × |S_{k+1}|) of a coupling of the uniform laws on S_k and S_{k+1} on unit
    steps, from a max-flow on the points themselves; None if there is none."""
    X, Y = sphere_points(k, d), sphere_points(k + 1, d)
    nx_, ny = len(X), len(Y)
    i, j = np.nonzero(np.abs(X[:, None, :] - Y[None, :, :]).sum(axis=-1) == 1)
    s, t = nx_ + ny, nx_ + ny + 1
    rows = np.concatenate([np.full(nx_, s), i, nx_ + np.arange(ny)])
    cols = np.concatenate([np.arange(nx_), nx_ + j, np.full(ny, t)])
    cap = np.concatenate([np.full(nx_, ny), np.full(len(i), nx_ * ny), np.full(ny, nx_)]).astype(np.int32)
    res = maximum_flow(sp.csr_array((cap, (rows, cols)), shape=(s + 2, s + 2)), s, t)
    if res.flow_value != nx_ * ny:
        return None
    F = res.flow.toarray()[:nx_, nx_:nx_ + ny].astype(float)
    return F / (nx_ * ny)


@pytest.mark.parametrize("d", [2, 3])
def test_orbit_couplings_agree_with_point_couplings(d):
    for k in range(0, 7):
        assert cp.coupling_exists(k, k + 1, d) == (point_coupling(k, d) is not None)
        assert cp.coupling_exists(k, k + 1, d)


def test_the_forest_path_agrees_with_max_flow():
    """The HiGHS + exact leaf-elimination path proves the same couplings as the integer max-flow."""
    for d, k in [(2, 5), (3, 9), (4, 6)]:
        A, sa, B, sb, pairs = ll.sphere_pair_edges(k, k + 1, d)
        Sk, Sj = int(sum(sa)), int(sum(sb))
        g = math.gcd(Sk, Sj)
        supply = [int(v) * (Sj // g) for v in sa]
        demand = [int(v) * (Sk // g) for v in sb]
        assert cp.exact_maxflow_feasible(supply, demand, pairs, Sk * Sj // g)
        assert cp.forest_transport_feasible(supply, demand, pairs)
    # toy transports: a0 (1) reaches b0 only, a1 (3) reaches b0 and b1: feasible for demands (2, 2)
    pairs = np.array([[0, 0], [1, 0], [1, 1]])
    assert cp.exact_maxflow_feasible([1, 3], [2, 2], pairs, 4) and cp.forest_transport_feasible([1, 3], [2, 2], pairs)
    # a0 (3) reaches only b0, which takes 1: refused by both
    pairs = np.array([[0, 0], [1, 1]])
    assert not cp.exact_maxflow_feasible([3, 1], [1, 3], pairs, 4) and not cp.forest_transport_feasible([3, 1], [1, 3], pairs)


def test_the_lifted_dual_is_feasible_point_by_point():
    """Lift the layer LP's dual with point-level couplings (compositions of unit couplings) and check the
    full lattice LP's dual constraint L(x) − ν + Σ_y λ(x, y) − e^ε Σ_w λ(w, x) >= 0 at every point."""
    d, D, eps, R = 2, 2, 1.0, 9
    unit = cp.prove_unit_couplings(R, d)
    pairs = ll.coupled_pairs(R, D, unit)
    lp = ll.build_layer_lp(eps, D, d, 1, R, pairs)
    raw = HighsBackend().solve(lp, {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    nu, mu = float(raw.row_dual[0]), np.maximum(-raw.row_dual[1:], 0.0)
    T = [point_coupling(k, d) for k in range(R)]
    T = [t * t.shape[0] for t in T]  # transition matrices (rows sum to 1)
    spheres = [sphere_points(k, d) for k in range(R + 1)]
    out = [np.zeros(len(p)) for p in spheres]
    inn = [np.zeros(len(p)) for p in spheres]
    for (k, j), m in zip(pairs, mu):
        M = np.eye(len(spheres[k]))
        for q in range(k, j):
            M = M @ T[q]
        lam = m * M / len(spheres[k])  # λ(x, y) = μ π(x, y), π = M/|S_k|
        assert np.all(np.abs(spheres[k][:, None, :] - spheres[j][None, :, :]).sum(-1)[lam > 0] <= D)
        out[k] += lam.sum(axis=1)
        inn[j] += lam.sum(axis=0)
    for k in range(R + 1):
        red = k - nu + out[k] - math.exp(eps) * inn[k]
        assert np.all(red >= -1e-9), (k, red.min())


def test_bracket_against_the_full_lattice_lp():
    p = dict(privacy=PureDP(1.0), cost="l1", sensitivity=2, domain=IntegerLattice(), dim=2)
    full = optmech.solve(Problem(**p, symmetry="orbits"))
    lay = optmech.solve(Problem(**p))
    assert lay.lp["builder"] == "layers_coupled" and lay.certified
    assert full.lower_bound <= lay.upper_bound and lay.lower_bound <= full.upper_bound
    v = min(discrete_staircase_nd_costs("l1", 1.0, 2, 2))
    assert lay.lower_bound <= v <= lay.upper_bound
    assert type(lay.mechanism).__name__ == "DiscreteStaircaseND"


def test_cli_lattice_target_d3_delta10():
    """Issue 21's lattice size: ℤ³, Δ = 10, ε = 2, certified to 1e-6 (0.5 s here; the full LP needs ~91 s)."""
    p = run_cli("solve", "--dim", "3", "--sensitivity", "10", "--epsilon", "2", "--domain", "integer", "--cost", "l1",
                "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["status"] == "optimal" and d["certified"] and d["relative_gap"] <= 1e-6
    assert d["lp"]["builder"] == "layers_coupled" and len(d["history"]) == 1
    v = min(discrete_staircase_nd_costs("l1", 2.0, 10, 3))
    assert d["lower_bound"] <= v <= d["upper_bound"]
    assert any("coupling" in c for c in d["claims"])
