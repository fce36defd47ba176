"""The solver outputs as library mechanisms (optmech.mechanisms.solved).

Real solver dicts come from small solves through the public API; hand-built dicts are chosen so
that the law they define is a known closed form (discrete Laplace, staircases, Laplace, ℓ2 Laplace)
or is checked against move counts found by breadth-first search over the solver's own step sets.
Sampling tests are seeded (deterministic) G-tests or KS tests against independently derived laws.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import integrate, stats

import optmech
from optmech import ApproxDP, IntegerLattice, Problem, PureDP
from optmech.errors import SpecError
from optmech.mechanisms.base import Mechanism
from optmech.mechanisms.discrete_staircase_nd import DiscreteStaircaseND, sphere_sizes
from optmech.mechanisms.laplace import DiscreteLaplace, Laplace
from optmech.mechanisms.multidim import DiscreteLaplaceND, L2Laplace, StaircaseND
from optmech.mechanisms.solved import (
    CellPMFND,
    FiniteLatticePMFND,
    LipschitzCells,
    LipschitzPoints,
    LipschitzProduct,
    LipschitzRadial,
    MajorantLatticePMFND,
    ShellDensityND,
    mechanism_from_solver_dict,
)
from optmech.problems.pure_nd import layer_steps

BETA = math.exp(-1.0)


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def solver_dict(r) -> dict:
    return json.loads(json.dumps(r.to_dict(include_mechanism=True)["mechanism"]))


def solve_lipschitz(*args, **kwargs):
    try:
        from optmech.drive import solve_lipschitz as f
    except ImportError:  # pragma: no cover - the API before the refactor
        from optmech.solve_lipschitz import solve_lipschitz as f
    return f(*args, **kwargs)


def grid(d: int, L: int) -> np.ndarray:
    return np.stack(np.meshgrid(*[np.arange(-L, L + 1)] * d, indexing="ij"), axis=-1).reshape(-1, d)


def g_test(observed: np.ndarray, probs: np.ndarray) -> float:
    """p-value of a G-test of counts against probabilities (bins with < 5 expected merged at the end)."""
    n = observed.sum()
    exp = probs / probs.sum() * n
    keep = np.flatnonzero(exp >= 5)
    last = keep[-1]
    obs = np.append(observed[:last], observed[last:].sum())
    ex = np.append(exp[:last], exp[last:].sum())
    small = ex < 5
    obs = np.append(obs[~small], obs[small].sum())
    ex = np.append(ex[~small], ex[small].sum())
    if ex[-1] == 0:
        obs, ex = obs[:-1], ex[:-1]
    return float(stats.power_divergence(obs, ex, lambda_="log-likelihood").pvalue)


def ball_reps(d: int, R: int, group: str, shape: str = "ball") -> np.ndarray:
    """Canonical representatives of the ℓ1 ball (or the cube) of radius R."""
    pts = grid(d, R)
    if shape == "ball":
        pts = pts[np.abs(pts).sum(axis=1) <= R]
    if group == "coordinate signs":
        pts = np.abs(pts)
    elif group == "signed permutations":
        pts = np.sort(np.abs(pts), axis=1)
    return np.unique(pts, axis=0)


def orbit_size(reps: np.ndarray, group: str) -> np.ndarray:
    d = reps.shape[1]
    if group == "none":
        return np.ones(len(reps))
    out = []
    for r in reps:  # brute force, independent of the module's formula
        imgs = set()
        for p in itertools.permutations(range(d)) if group == "signed permutations" else [tuple(range(d))]:
            for s in itertools.product((-1, 1), repeat=d):
                imgs.add(tuple(np.array(r)[list(p)] * s))
        out.append(len(imgs))
    return np.array(out, dtype=float)


def bfs_moves(layers: list[np.ndarray], d: int, L: int) -> np.ndarray:
    """Least number of moves (one step of each layer) from 0 to every point of [−L, L]^d."""
    V = np.zeros((1, d), dtype=np.int64)
    for s in layers:
        V = np.unique((V[:, None, :] + s[None]).reshape(-1, d), axis=0)
    dist = np.full((2 * L + 1,) * d, -1)
    dist[(L,) * d] = 0
    cur, m = np.zeros((1, d), dtype=np.int64), 0
    while True:
        m += 1
        nb = np.unique((cur[:, None, :] + V[None]).reshape(-1, d), axis=0)
        nb = nb[np.all(np.abs(nb) <= L, axis=1)]
        nb = nb[dist[tuple((nb + L).T)] < 0]
        if len(nb) == 0:
            return dist
        dist[tuple((nb + L).T)] = m
        cur = nb


# ------------------------------------------------------------------------------------------------
# real solver outputs
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pure2():
    # the full lattice LP (symmetry "orbits"): with "auto" the coupled layer LP and the lattice staircase answer
    return optmech.solve(Problem(privacy=PureDP(1.0), cost="l1", sensitivity=2, domain=IntegerLattice(), dim=2,
                                 symmetry="orbits"))


@pytest.fixture(scope="module")
def approx2():
    return optmech.solve(Problem(privacy=ApproxDP(1.0, 0.05), cost="l1", sensitivity=1, domain=IntegerLattice(), dim=2))


def test_pure_nd_output_is_a_normalised_law_inside_the_bracket(pure2):
    d = solver_dict(pure2)
    m = mechanism_from_solver_dict(d)
    assert isinstance(m, MajorantLatticePMFND) and m.dim == 2 and m.lattice
    assert m.to_dict() == d and json.loads(json.dumps(m.to_dict())) == d and "name" not in m.to_dict()
    assert Mechanism.from_dict(d) == m and Mechanism.from_dict({"name": d["kind"], **d}).to_dict() == d
    tail = pure2.audit["tail_mass_bound"]
    Z = m.normaliser()
    assert 0 < Z - 1 <= tail * (1 + 1e-6)  # the extension's mass is within the solver's tail bound
    pts = grid(2, 70)
    total = math.fsum(m.pmf(pts))
    assert abs(total - 1) <= tail
    # the listed masses are the law on the domain (up to Z), and the pmf is symmetric
    reps = np.asarray(d["representatives"])
    np.testing.assert_allclose(m.pmf(reps), np.asarray(d["mass"]) / Z, rtol=1e-15)
    np.testing.assert_allclose(m.pmf(pts), m.pmf(pts[:, ::-1] * [-1, 1]), rtol=1e-15)
    assert m.pmf([0.5, 0]) == 0.0
    cost = m.expected_cost("l1")
    assert pure2.lower_bound * (1 - 1e-9) <= cost <= pure2.upper_bound * (1 + 1e-9)
    np.testing.assert_allclose(cost, math.fsum(m.pmf(pts) * np.abs(pts).sum(axis=1)), rtol=1e-9)
    p = m.privacy()  # ε audited on the masses (issue 36 item 9): the target less the solver's margin, rounded up
    assert (p.notion, p.delta, p.sensitivity, p.norm) == ("pure", 0.0, 2, "l1") and 1.0 - 1e-9 < p.epsilon <= 1.0
    assert "audited at load" in p.note


def test_pure_nd_output_samples(pure2):
    m = mechanism_from_solver_dict(solver_dict(pure2))
    assert m.sample(rng=0).shape == (2,) and m.sample((3, 4), rng=0).shape == (3, 4, 2)
    x = m.sample(60_000, rng=7)
    assert x.shape == (60_000, 2) and x.dtype.kind == "i"
    np.testing.assert_array_equal(x, m.sample(60_000, rng=7))
    assert not np.array_equal(x, m.sample(60_000, rng=8))
    pts = grid(2, 70)
    shell = np.abs(pts).sum(axis=1)
    probs = np.bincount(shell, weights=m.pmf(pts))[:40]
    counts = np.bincount(np.abs(x).sum(axis=1), minlength=40)[:40]
    probs = np.append(probs, 1 - probs.sum())
    counts = np.append(counts, len(x) - counts.sum())
    assert g_test(counts, probs) > 1e-3


def test_approx_output_is_the_finite_pmf(approx2):
    d = solver_dict(approx2)
    m = mechanism_from_solver_dict(d)
    assert isinstance(m, FiniteLatticePMFND) and m.to_dict() == d
    pts = np.asarray(d["representatives"])
    mass = np.asarray(d["mass"])
    np.testing.assert_allclose(m.pmf(pts), mass / math.fsum(mass), rtol=1e-15)
    assert math.fsum(m.pmf(grid(2, 12))) == pytest.approx(1.0, abs=1e-15)
    assert m.pmf([100, 0]) == 0.0
    cost = m.expected_cost("l1")
    assert cost == pytest.approx(math.fsum(mass * np.abs(pts).sum(axis=1)) / math.fsum(mass), rel=1e-14)
    assert approx2.lower_bound * (1 - 1e-9) <= cost <= approx2.upper_bound * (1 + 1e-9)
    p = m.privacy()  # δ re-audited from the masses (issue 36 item 9): at most the target, and tight
    assert (p.notion, p.epsilon, p.sensitivity) == ("approx", 1.0, 1) and 0.05 - 1e-9 < p.delta <= 0.05
    assert p.delta == approx2.audit["realised_delta"] or abs(p.delta - approx2.audit["realised_delta"]) < 1e-12
    x = m.sample(50_000, rng=3)
    assert x.shape == (50_000, 2)
    np.testing.assert_array_equal(x, m.sample(50_000, rng=3))
    idx = m.index.find(x)
    assert np.all(idx >= 0)  # only listed points
    assert g_test(np.bincount(idx, minlength=len(pts)), m.p) > 1e-3


def test_approx_privacy_from_keywords(approx2):
    d = {k: v for k, v in solver_dict(approx2).items() if k not in ("epsilon", "delta")}
    p = mechanism_from_solver_dict(d, epsilon=1.0, delta=0.05).privacy()
    assert p.epsilon == 1.0 and 0.05 - 1e-9 < p.delta <= 0.05  # δ re-audited at the keywords' ε
    assert math.isnan(mechanism_from_solver_dict(d).privacy().epsilon)
    with pytest.raises(SpecError, match="contradicts"):
        mechanism_from_solver_dict({**d, "epsilon": 1.0}, epsilon=2.0)


def test_l2_output_refuses_sampling_with_one_line():
    r = optmech.solve(Problem(privacy=PureDP(1.0), cost="l2", sensitivity=1, domain=IntegerLattice(), dim=2, norm="l2"))
    d = solver_dict(r)
    m = mechanism_from_solver_dict(d)
    assert m.to_dict() == d and m.privacy().norm == "l2"
    for call in (lambda: m.sample(10, rng=0), lambda: m.pmf([0, 0]), lambda: m.expected_cost("l2")):
        with pytest.raises(SpecError) as exc:
            call()
        msg = str(exc.value)
        assert "\n" not in msg and "l2" in msg and "no closed form" in msg


def test_shell_output(tmp_path):
    from optmech.spec import Continuous

    from optmech.families.pure_nd import PureNDFamily
    from optmech.loop import make_context, run

    # the layered (ℓ1-shell) variant of the cell family: its upper end is the audited shell density (in a
    # plain solve the staircase's closed form, or the radial family, is the upper end instead)
    problem = Problem(privacy=PureDP(1.0), cost="l1", sensitivity=1, domain=Continuous(resolution=2), dim=2)
    ctx = make_context(None, None)
    family = PureNDFamily(problem, ctx, layered=True)
    r = run(family, ctx, family.s.gap)
    m = family.report(r.best, r.last, r.status)["mechanism"]
    d = json.loads(json.dumps(m.to_dict()))
    assert isinstance(m, ShellDensityND) and d["kind"] == "l1_shell_density_nd"
    assert mechanism_from_solver_dict(d).to_dict() == d and not m.lattice
    cost = m.expected_cost("l1")
    assert r.best.lower * (1 - 1e-9) <= cost <= r.best.upper_value * (1 + 1e-9)
    x = m.sample(1000, rng=1)
    assert x.shape == (1000, 2) and x.dtype.kind == "f"


# ------------------------------------------------------------------------------------------------
# hand-built pure d-D laws with known closed forms
# ------------------------------------------------------------------------------------------------
def laplace_dict(group: str, n: int, R: int = 3, d: int = 2, with_beta: bool = True) -> dict:
    """Masses ∝ λ^{‖x‖₁} (λ = β^{1/n}) on the ℓ1 ball of radius R: a β-majorant for ℓ1 moves of length
    <= n whose extension is λ^{‖x‖₁} on all of ℤ^d, i.e. the discrete Laplace law."""
    reps = ball_reps(d, R, group)
    lam = BETA ** (1.0 / n)
    w = lam ** np.abs(reps).sum(axis=1)
    w = w / math.fsum(orbit_size(reps, group) * w)
    out = {"kind": "lattice_pmf_nd", "dim": d, "norm": "l1", "sensitivity": n, "symmetry": group,
           "representatives": reps.tolist(), "mass": w.tolist(), "tail_factor": float(w.max()), "tail_rate": lam}
    if with_beta:
        out["beta"] = BETA
    return out


@pytest.mark.parametrize("group", ["none", "coordinate signs", "signed permutations"])
@pytest.mark.parametrize("n", [1, 2])
def test_extension_of_discrete_laplace_masses_is_discrete_laplace(group, n):
    m = mechanism_from_solver_dict(laplace_dict(group, n, with_beta=n == 1))
    ref = DiscreteLaplaceND(epsilon=1.0, sensitivity=n, dim=2)
    pts = grid(2, 25)
    np.testing.assert_allclose(m.pmf(pts), ref.pmf(pts), rtol=1e-12)
    p = m.privacy()
    assert p.notion == "pure" and p.epsilon == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("group", ["none", "signed permutations"])
def test_sampler_matches_discrete_laplace_including_the_tail(group):
    m = mechanism_from_solver_dict(laplace_dict(group, 1, R=2))
    x = m.sample(40_000, rng=11)
    k = np.abs(x).sum(axis=1)
    assert np.mean(k > 2) > 0.2  # the extension beyond the listed domain is sampled often
    lam = BETA
    K = np.arange(30)
    probs = sphere_sizes(K, 2) * ((1 - lam) / (1 + lam)) ** 2 * lam**K
    probs = np.append(probs, 1 - probs.sum())
    counts = np.append(np.bincount(k, minlength=30)[:30], np.sum(k >= 30))
    assert g_test(counts, probs) > 1e-3
    # signs and coordinates are exchangeable
    assert abs(np.mean(x[:, 0] > 0) - np.mean(x[:, 0] < 0)) < 0.02


def test_linf_extension_is_the_linf_geometric_law():
    reps = ball_reps(2, 2, "signed permutations", shape="cube")
    w = BETA ** np.abs(reps).max(axis=1)
    w = w / math.fsum(orbit_size(reps, "signed permutations") * w)
    d = {"kind": "lattice_pmf_nd", "dim": 2, "norm": "linf", "sensitivity": 1, "symmetry": "signed permutations",
         "representatives": reps.tolist(), "mass": w.tolist(), "tail_factor": 1.0, "tail_rate": BETA**0.5}
    m = mechanism_from_solver_dict(d)  # β derived from tail_rate**M, M = 2
    k = np.arange(1, 200)
    Z = 1 + math.fsum(((2 * k + 1) ** 2 - (2 * k - 1) ** 2) * BETA**k)
    pts = grid(2, 20)
    np.testing.assert_allclose(m.pmf(pts), BETA ** np.abs(pts).max(axis=1) / Z, rtol=1e-9)
    x = m.sample(40_000, rng=5)
    kk = np.abs(x).max(axis=1)
    probs = np.append(1.0, ((2 * k[:24] + 1) ** 2 - (2 * k[:24] - 1) ** 2) * BETA ** k[:24]) / Z
    counts = np.bincount(kk, minlength=25)[:25]
    assert g_test(np.append(counts, len(x) - counts.sum()), np.append(probs, 1 - probs.sum())) > 1e-3


def test_cell_extension_matches_breadth_first_move_counts():
    """Cells of width 1/2 for Δ = 1 (n = 2): masses β^{ρ(z)} on the cube |z_i| <= 2 with ρ the BFS move
    count over the solver's step sets (one layer of unit ℓ1 steps, one of {−1,0,1}^2); the law is
    β^{ρ(z)} on every cell, per unit area ∝ that."""
    h, L = 0.5, 75
    layers = layer_steps("l1", 2, 2, upper_cells=True)
    dist = bfs_moves(layers, 2, L)
    rho = lambda z: dist[tuple((np.asarray(z) + L).T)]  # noqa: E731
    reps = ball_reps(2, 2, "signed permutations", shape="cube")
    w = BETA ** rho(reps).astype(float)
    w = w / math.fsum(orbit_size(reps, "signed permutations") * w)
    d = {"kind": "cell_pmf_nd", "dim": 2, "norm": "l1", "sensitivity": 1.0, "symmetry": "signed permutations",
         "representatives": reps.tolist(), "mass": w.tolist(), "tail_factor": 1.0, "tail_rate": BETA ** (1 / 3),
         "cell_width": h, "beta": BETA}
    m = mechanism_from_solver_dict(d)
    assert isinstance(m, CellPMFND) and m.to_dict() == d
    z = grid(2, L)
    ref = BETA ** rho(z).astype(float)
    Zref = math.fsum(ref)  # beyond the box ρ >= 38: below 1e-13 of it
    assert m.normaliser() == pytest.approx(Zref * w[0], rel=1e-12)  # masses are β^ρ scaled by w[0]
    dens = m.pdf(h * (z + np.random.default_rng(0).uniform(-0.49, 0.49, z.shape)))
    np.testing.assert_allclose(dens * h * h, ref / Zref, rtol=1e-12)
    x = m.sample(40_000, rng=2)
    assert x.shape == (40_000, 2) and x.dtype.kind == "f"
    zi = np.floor(x / h + 0.5).astype(np.int64)
    frac = x / h - zi + 0.5
    assert stats.kstest(frac.ravel(), "uniform").pvalue > 1e-3  # uniform within cells
    counts = np.bincount(rho(zi), minlength=30)[:30]
    probs = np.bincount(rho(z), weights=ref / Zref)[:30]
    assert np.mean(np.abs(zi).max(axis=1) > 2) > 0.05  # the extension is sampled
    assert g_test(np.append(counts, len(x) - counts.sum()), np.append(probs, 1 - probs.sum())) > 1e-3


def test_not_a_majorant_is_refused():
    d = laplace_dict("signed permutations", 1)
    mass = np.asarray(d["mass"])
    mass[3] *= 10
    m = mechanism_from_solver_dict({**d, "mass": mass.tolist()})
    with pytest.raises(SpecError, match="not a beta-majorant"):
        m.sample(5, rng=0)


# ------------------------------------------------------------------------------------------------
# shells
# ------------------------------------------------------------------------------------------------
def test_lattice_shells_extend_to_the_discrete_staircase():
    n, R = 2, 4
    k = np.arange(R + 1)
    a = BETA ** np.ceil(k / n)
    a = a / math.fsum(sphere_sizes(k, 2) * a)
    d = {"kind": "l1_shell_density_nd", "dim": 2, "norm": "l1", "sensitivity": n, "shell_width": 1.0,
         "continuous": False, "density": a.tolist(), "tail_factor": 1.0, "tail_rate": BETA ** (1 / n)}
    m = mechanism_from_solver_dict(d)
    assert isinstance(m, ShellDensityND) and m.lattice and m.to_dict() == d
    ref = DiscreteStaircaseND(epsilon=1.0, sensitivity=n, r=1, dim=2)
    pts = grid(2, 30)
    np.testing.assert_allclose(m.pmf(pts), ref.pmf(pts), rtol=1e-12)
    for cost in ("l1", "l2sq"):
        assert m.expected_cost(cost) == pytest.approx(ref.expected_cost(cost), rel=1e-12)
    x = m.sample(40_000, rng=4)
    kk = np.abs(x).sum(axis=1)
    probs = np.bincount(np.abs(pts).sum(axis=1), weights=ref.pmf(pts))[:30]
    counts = np.bincount(kk, minlength=30)[:30]
    assert np.mean(kk > R) > 0.2
    assert g_test(np.append(counts, len(x) - counts.sum()), np.append(probs, 1 - probs.sum())) > 1e-3


def test_continuous_shells_extend_to_the_staircase():
    n, R, h = 4, 6, 0.25
    k = np.arange(R + 1)
    vol = h**2 * 2.0 * ((k + 1) ** 2 - k**2)  # area of {kh <= ‖x‖₁ < (k+1)h} in 2-D: 2h²(2k+1)
    a = BETA ** np.ceil(k / n)
    a = a / math.fsum(vol * a)
    d = {"kind": "l1_shell_density_nd", "dim": 2, "norm": "l1", "sensitivity": 1.0, "shell_width": h,
         "continuous": True, "density": a.tolist(), "tail_factor": 1.0, "tail_rate": BETA ** (1 / n)}
    m = mechanism_from_solver_dict(d)
    ref = StaircaseND(epsilon=1.0, sensitivity=1.0, gamma=1.0 / n, dim=2)
    x = np.random.default_rng(1).uniform(-6, 6, (2000, 2))
    np.testing.assert_allclose(m.pdf(x), ref.pdf(x), rtol=1e-12)
    for cost in ("l1", "l2sq", "linf"):
        assert m.expected_cost(cost) == pytest.approx(ref.expected_cost(cost), rel=1e-10)
    s = m.sample(40_000, rng=6)
    r = np.abs(s).sum(axis=1)
    ref_s = ref.sample(400_000, rng=0)
    assert stats.ks_2samp(r, np.abs(ref_s).sum(axis=1)).pvalue > 1e-3
    assert stats.kstest(s[:, 0] / r, "uniform", args=(-1, 2)).pvalue > 1e-3  # ℓ1-uniform direction: x1/‖x‖₁ ~ U(−1, 1)


# ------------------------------------------------------------------------------------------------
# Lipschitz outputs
# ------------------------------------------------------------------------------------------------
def test_lipschitz_points_is_the_two_sided_geometric_law():
    eps, K = 0.7, 4
    x = np.arange(-K, K + 1)
    d = {"kind": "lipschitz_points", "per_coordinate": False, "knots": x.tolist(),
         "values": (3.0 * np.exp(-eps * np.abs(x))).tolist(), "interpolation": "pmf", "tail_rate": eps}
    m = mechanism_from_solver_dict(d)
    ref = DiscreteLaplace(epsilon=eps, sensitivity=1)
    k = np.arange(-60, 61)
    np.testing.assert_allclose(m.pmf(k), ref.pmf(k), rtol=1e-12)
    t = np.linspace(-40, 40, 321)
    np.testing.assert_allclose(m.cdf(t), ref.cdf(t), rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(m.sf(t), ref.sf(t), rtol=1e-12, atol=1e-16)
    for cost in ("abs", "square", "pow:3"):
        assert m.expected_cost(cost) == pytest.approx(ref.expected_cost(cost), rel=1e-12)
    assert abs(m.mean()) < 1e-15 and m.var() == pytest.approx(ref.var(), rel=1e-12)
    s = m.sample(40_000, rng=9)
    assert s.shape == (40_000,) and s.dtype.kind == "i" and np.mean(np.abs(s) > K) > 0.03  # P(|X| > 4) = 0.040
    edges = np.arange(-15, 16)
    probs = np.concatenate([[ref.cdf(-16)], ref.pmf(edges), [ref.sf(15)]])
    counts = np.concatenate([[np.sum(s < -15)], np.bincount(s[np.abs(s) <= 15] + 15, minlength=31), [np.sum(s > 15)]])
    assert g_test(counts, probs) > 1e-3
    p = m.privacy()
    assert p.notion == "lipschitz" and p.epsilon == pytest.approx(eps, rel=1e-12) and p.sensitivity is None


def test_lipschitz_cells_is_the_laplace_law():
    eps, h = 1.3, 1.0  # coarse knots: the law inside a piece matters (log-linear interpolation is exact here)
    x = np.arange(-4, 5) * h
    d = {"kind": "lipschitz_cells", "per_coordinate": False, "knots": x.tolist(),
         "values": (0.2 * np.exp(-eps * np.abs(x))).tolist(), "interpolation": "log-linear", "tail_rate": eps}
    m = mechanism_from_solver_dict(d)
    assert isinstance(m, LipschitzCells)
    ref = Laplace(epsilon=eps, sensitivity=1.0)
    t = np.random.default_rng(2).uniform(-15, 15, 500)
    np.testing.assert_allclose(m.pdf(t), ref.pdf(t), rtol=1e-12)
    np.testing.assert_allclose(m.cdf(t), ref.cdf(t), rtol=1e-11, atol=1e-15)
    np.testing.assert_allclose(m.sf(t), ref.sf(t), rtol=1e-11, atol=1e-15)
    for cost in ("abs", "square"):
        assert m.expected_cost(cost) == pytest.approx(ref.expected_cost(cost), rel=1e-12)
    s = m.sample(40_000, rng=10)
    assert stats.kstest(s, ref.cdf).pvalue > 1e-3
    assert m.privacy().epsilon == pytest.approx(eps, rel=1e-12)


def test_lipschitz_radial_is_the_l2_laplace_law():
    eps, h, d_ = 0.8, 2.0, 3  # coarse knots: the radial law inside a piece matters
    r = np.arange(0, 3) * h  # R = 4: P(r > R) = 0.38, the exponential tail is sampled often
    d = {"kind": "lipschitz_shells", "per_coordinate": False, "knots": r.tolist(), "values": np.exp(-eps * r).tolist(),
         "interpolation": "log-linear", "tail_rate": eps, "dim": d_}
    m = mechanism_from_solver_dict(d)
    assert isinstance(m, LipschitzRadial) and m.dim == d_ and m.to_dict() == d
    ref = L2Laplace(epsilon=eps, dim=d_)
    x = np.random.default_rng(3).normal(0, 3, (500, d_))
    np.testing.assert_allclose(m.pdf(x), ref.pdf(x), rtol=1e-11)
    assert m.expected_cost("l2") == pytest.approx(d_ / eps, rel=1e-12)
    assert m.expected_cost("l2sq") == pytest.approx(d_ * (d_ + 1) / eps**2, rel=1e-12)
    s = m.sample(30_000, rng=12)
    assert s.shape == (30_000, d_)
    assert stats.kstest(np.sqrt((s * s).sum(axis=1)), stats.gamma(d_, scale=1 / eps).cdf).pvalue > 1e-3
    u = s / np.sqrt((s * s).sum(axis=1, keepdims=True))
    assert stats.kstest(u[:, 0], "uniform", args=(-1, 2)).pvalue > 1e-3  # in 3-D a uniform direction's x1 is U(−1, 1)
    p = m.privacy()
    assert p.norm == "l2" and p.epsilon == pytest.approx(eps, rel=1e-12)
    # without "dim" the radial law is 1-D: the Laplace law
    one = mechanism_from_solver_dict({k: v for k, v in d.items() if k != "dim"})
    t = np.linspace(-5, 5, 11)
    np.testing.assert_allclose(one.pdf(t), Laplace(epsilon=eps, sensitivity=1.0).pdf(t), rtol=1e-11)


def test_lipschitz_product_is_iid():
    eps = 0.9
    x = np.arange(-5, 6)
    d = {"kind": "lipschitz_points", "per_coordinate": True, "knots": x.tolist(),
         "values": np.exp(-eps * np.abs(x)).tolist(), "interpolation": "pmf", "tail_rate": eps, "dim": 3}
    m = mechanism_from_solver_dict(d)
    assert isinstance(m, LipschitzProduct) and m.to_dict() == d and Mechanism.from_dict(d) == m
    ref = DiscreteLaplaceND(epsilon=eps, sensitivity=1, dim=3)
    pts = grid(3, 8)
    np.testing.assert_allclose(m.pmf(pts), ref.pmf(pts), rtol=1e-12)
    assert m.expected_cost("l1") == pytest.approx(ref.expected_cost("l1"), rel=1e-12)
    assert m.expected_cost("l2sq") == pytest.approx(ref.expected_cost("l2sq"), rel=1e-12)
    assert m.sample((4, 5), rng=1).shape == (4, 5, 3)
    p = m.privacy()
    assert (p.notion, p.norm) == ("lipschitz", "l1") and p.epsilon == pytest.approx(eps, rel=1e-12)
    with pytest.raises(SpecError, match="dim"):
        mechanism_from_solver_dict({k: v for k, v in d.items() if k != "dim"})


@pytest.mark.parametrize("args, kwargs", [
    ((1.0, "abs"), {}),
    ((1.0, "abs"), {"domain": "continuous"}),
    ((1.0, "l1"), {"dim": 2}),
    ((1.0, "l2"), {"dim": 2, "norm": "l2", "domain": "continuous", "resolution": 8}),
])
def test_lipschitz_solver_outputs(args, kwargs):
    r = solve_lipschitz(*args, **kwargs)
    d = solver_dict(r)
    m = mechanism_from_solver_dict(d)
    assert m.to_dict() == d and Mechanism.from_dict(d) == m
    p = m.privacy()
    assert p.notion == "lipschitz" and p.epsilon <= 1.0 + 1e-12
    cost = m.expected_cost(r.problem["cost"])
    assert r.lower_bound * (1 - 1e-9) <= cost <= r.upper_bound * (1 + 1e-9)
    s = m.sample(2000, rng=21)
    np.testing.assert_array_equal(s, m.sample(2000, rng=21))
    dim = kwargs.get("dim", 1)
    assert s.shape == ((2000,) if dim == 1 else (2000, dim))
    if isinstance(m, LipschitzPoints):
        k = np.arange(-300, 301)
        assert math.fsum(m.pmf(k)) == pytest.approx(1.0, abs=1e-14)
        assert m.cdf(300) == pytest.approx(1.0, abs=1e-15) and m.cdf(-301) < 1e-100
        assert stats.kstest(s, lambda t: m.cdf(t)).statistic < 0.5  # sanity; exact tests use the hand-built laws
    if isinstance(m, LipschitzCells):
        t = np.linspace(-60, 60, 240_001)
        assert integrate.simpson(m.pdf(t), x=t) == pytest.approx(1.0, abs=1e-12)  # knots are even grid points
        assert m.cdf(60) - m.cdf(-60) == pytest.approx(1.0, abs=1e-15)
        assert stats.kstest(s, m.cdf).pvalue > 1e-3


@pytest.mark.slow
def test_lipschitz_radial_solver_output_default_resolution():
    r = solve_lipschitz(1.0, "l2", dim=2, norm="l2", domain="continuous")
    d = solver_dict(r)
    m = mechanism_from_solver_dict(d)
    assert isinstance(m, LipschitzRadial) and m.to_dict() == d and m.dim == d.get("dim", 2)
    cost = m.expected_cost("l2")
    assert r.lower_bound * (1 - 1e-9) <= cost <= r.upper_bound * (1 + 1e-9)
    assert m.sample(100, rng=0).shape == (100, 2)


# ------------------------------------------------------------------------------------------------
# malformed input
# ------------------------------------------------------------------------------------------------
def test_malformed_dicts_raise_spec_errors():
    good = laplace_dict("signed permutations", 1)
    for bad in ({**good, "kind": "nope"}, {k: v for k, v in good.items() if k != "mass"}, {**good, "mass": [1.0]},
                {**good, "symmetry": "rotations"}, {**good, "tail_rate": 1.5}, "not a dict"):
        with pytest.raises(SpecError):
            mechanism_from_solver_dict(bad)
    with pytest.raises(SpecError):
        mechanism_from_solver_dict({"kind": "lipschitz_points", "knots": [0, 1, 3], "values": [1, 1, 1], "tail_rate": 1})
