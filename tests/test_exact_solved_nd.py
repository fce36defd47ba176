"""Exact samplers of the certified ℤ^d solver laws: the lattice ℓ1-shell output (ShellDensityND,
optmech.exact.radial.RadialL1Rational) and the pure d-D pmf with its β-majorant extension
(MajorantLatticePMFND, solved.MajorantExactLaw).

Real solver outputs come from small solves; their domains hold all but < 2^-30 of the mass, so the
rejection path beyond (far shells proposed from the rational geometric envelope and accepted by an
exact Bernoulli) is exercised by hand-built laws with a small domain and by laws built with a small
``tail_bits``.  Sampling tests are seeded G-tests against the float pmf.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import optmech
from optmech import IntegerLattice, Problem, PureDP
from optmech.errors import SpecError
from optmech.exact.bits import ScriptedBits, bit_source
from optmech.exact.radial import RadialL1Rational, bernoulli
from optmech.mechanisms.solved import MajorantExactLaw, MajorantLatticePMFND, ShellDensityND, mechanism_from_solver_dict
from test_solved_mechanisms import ball_reps, orbit_size  # the brute-force helpers of the float samplers' tests

BETA = math.exp(-1.0)
N = 200_000


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def g_test_points(x: np.ndarray, pmf) -> float:
    """p-value of a G-test of the draws ``x`` (n, d) against ``pmf`` on the points with expected count
    >= 5, plus one pooled cell for the rest."""
    n = len(x)
    L = int(np.abs(x).max()) + 1
    d = x.shape[1]
    grid = np.stack(np.meshgrid(*[np.arange(-L, L + 1)] * d, indexing="ij"), axis=-1).reshape(-1, d)
    p = pmf(grid)
    keep = n * p >= 5
    pts, exp = grid[keep], n * p[keep]
    key = {tuple(v): i for i, v in enumerate(pts.tolist())}
    obs = np.zeros(len(pts) + 1)
    for v in map(tuple, x.tolist()):
        obs[key.get(v, len(pts))] += 1
    exp = np.append(exp, n - exp.sum())
    assert exp[-1] > -1e-6 * n
    if exp[-1] < 5:  # pool a too-small rest into the smallest kept cell
        j = int(np.argmin(exp[:-1]))
        obs[j] += obs[-1]
        exp[j] += exp[-1]
        obs, exp = obs[:-1], exp[:-1]
    return float(stats.power_divergence(obs, exp, lambda_="log-likelihood").pvalue)


def g_test_counts(counts: np.ndarray, probs: np.ndarray) -> float:
    n = counts.sum()
    exp = probs / probs.sum() * n
    keep = exp >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    ex = np.append(exp[keep], exp[~keep].sum())
    if ex[-1] < 5:
        obs, ex = np.append(obs[:-2], obs[-2:].sum()), np.append(ex[:-2], ex[-2:].sum())
    return float(stats.power_divergence(obs, ex, lambda_="log-likelihood").pvalue)


def solver_dict(r) -> dict:
    return json.loads(json.dumps(r.to_dict(include_mechanism=True)["mechanism"]))


def laplace_dict(group: str, n: int, R: int = 3, d: int = 2, norm: str = "l1") -> dict:
    """Masses ∝ λ^{‖x‖₁} (λ = β^{1/n}) on the ℓ1 ball of radius R: its extension is the discrete Laplace law."""
    reps = ball_reps(d, R, group)
    lam = BETA ** (1.0 / n)
    w = lam ** np.abs(reps).sum(axis=1)
    w = w / math.fsum(orbit_size(reps, group) * w)
    return {"kind": "lattice_pmf_nd", "dim": d, "norm": norm, "sensitivity": n, "symmetry": group,
            "representatives": reps.tolist(), "mass": w.tolist(), "tail_factor": float(w.max()), "tail_rate": lam,
            "beta": BETA}


# ------------------------------------------------------------------------------------------------
# solver outputs (module fixtures: one solve each)
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def shells():
    from optmech.families.pure_nd import PureNDFamily
    from optmech.loop import make_context, run

    problem = Problem(privacy=PureDP(1.0), cost="l1", sensitivity=2, domain=IntegerLattice(), dim=2)
    ctx = make_context(None, None)
    family = PureNDFamily(problem, ctx, layered=True)
    r = run(family, ctx, family.s.gap)
    m = family.report(r.best, r.last, r.status)["mechanism"]
    assert isinstance(m, ShellDensityND) and m.lattice
    return m


@pytest.fixture(scope="module", params=[("l1", 2), ("linf", 1)], ids=["l1-D2", "linf-D1"])
def majorant(request):
    norm, D = request.param
    r = optmech.solve(Problem(privacy=PureDP(1.0), cost="l1", sensitivity=D, domain=IntegerLattice(), dim=2,
                              norm=norm, symmetry="orbits"))
    m = mechanism_from_solver_dict(solver_dict(r))
    assert isinstance(m, MajorantLatticePMFND) and m.norm == norm
    return m


# ------------------------------------------------------------------------------------------------
# the exact Bernoulli
# ------------------------------------------------------------------------------------------------
def test_bernoulli_is_exact_on_every_word():
    # 3-bit words: p = 3/8 is decided by the first word, accepted for exactly the words 0, 1, 2
    src = ScriptedBits(list(range(8)), word_bits=3)
    assert bernoulli([Fraction(3, 8)] * 8, src).tolist() == [True] * 3 + [False] * 5
    # p = 5/16 with 2-bit words: word 1 (U in [1/4, 1/2)) needs a second word, accepted iff it is 0
    for w2, want in ((0, True), (1, False), (3, False)):
        assert bernoulli([Fraction(5, 16)], ScriptedBits([1, w2], word_bits=2)).tolist() == [want]


# ------------------------------------------------------------------------------------------------
# ShellDensityND (lattice shells)
# ------------------------------------------------------------------------------------------------
def test_shells_exact_draws_follow_the_pmf(shells):
    x = shells.sample(N, rng=11, exact=True)
    assert x.shape == (N, 2) and x.dtype == np.int64
    assert g_test_points(x, shells.pmf) > 1e-4


def test_shells_exact_is_reproducible(shells):
    a = shells.sample(1000, rng=7, exact=True)
    b = shells.sample(1000, rng=7, exact=True)
    assert np.array_equal(a, b) and not np.array_equal(a, shells.sample(1000, rng=8, exact=True))


def test_shells_exact_total_brackets_the_float_normaliser(shells):
    lo, hi = shells.exact_law().total_bounds(64)
    assert lo <= hi and float(hi - lo) <= 2.0**-60 * float(lo)
    Z = shells.normaliser()
    assert float(lo) * (1 - 1e-12) <= Z <= float(hi) * (1 + 1e-12)


def test_shells_exact_privacy_is_the_exact_audit(shells):
    p = shells.exact_sampler().privacy()
    target = shells.privacy().epsilon
    assert p.notion == "pure" and p.norm == "l1" and p.sensitivity == shells.sensitivity
    assert math.isfinite(p.epsilon) and -math.log(shells.beta) <= p.epsilon
    # the solver's margin: β = e^{−ε + margin}, and the exact listed ratios stay within 1/β, so the exact law
    # meets the target (its ε is below it by the margin)
    assert p.epsilon <= target
    assert "audited exactly" in p.note and "timing" in p.note


def staircase_shells(n: int = 2, R: int = 4) -> ShellDensityND:
    """Density β^{⌈k/n⌉} on shells 0..R: the extension is the d-D discrete staircase (r = 1)."""
    from optmech.mechanisms.discrete_staircase_nd import sphere_sizes

    k = np.arange(R + 1)
    a = BETA ** np.ceil(k / n)
    a = a / math.fsum(sphere_sizes(k, 2) * a)
    d = {"kind": "l1_shell_density_nd", "dim": 2, "norm": "l1", "sensitivity": n, "shell_width": 1.0,
         "continuous": False, "density": a.tolist(), "tail_factor": 1.0, "tail_rate": BETA ** (1 / n)}
    return mechanism_from_solver_dict(d)


def test_hand_built_shells_extend_to_the_discrete_staircase():
    from optmech.mechanisms.discrete_staircase_nd import DiscreteStaircaseND

    n, R = 2, 4
    m = staircase_shells(n, R)
    ref = DiscreteStaircaseND(epsilon=1.0, sensitivity=n, r=1, dim=2)
    x = m.sample(N, rng=5, exact=True)
    assert np.mean(np.abs(x).sum(axis=1) > R) > 0.2
    assert g_test_points(x, ref.pmf) > 1e-4
    lo, hi = m.exact_law().total_bounds(64)
    assert float(lo) * (1 - 1e-12) <= m.normaliser() <= float(hi) * (1 + 1e-12)
    p = m.exact_sampler().privacy()
    assert p.epsilon == pytest.approx(1.0, abs=1e-12)  # no target: −ln β (the exact profile is a β-majorant), rounded up


def test_shells_rejection_path_matches_the_radius_law():
    # the head stops early (tail_bits = 1): a good share of the draws go through the envelope
    m = staircase_shells()
    beta, prof = m.exact_profile()
    law = RadialL1Rational(prof, m.n, beta, m.R, 2, tail_bits=1)
    k = law.sample_radius(N, bit_source(3))
    assert np.mean(k >= law.T) > 0.05
    K = int(k.max()) + 1
    w = m.shell_density(np.arange(K)) * np.array([max(1, 4 * j) for j in range(K)])
    probs = np.append(w, m.normaliser() - w.sum()) / m.normaliser()
    counts = np.append(np.bincount(k, minlength=K), 0)
    assert g_test_counts(counts, probs) > 1e-4


def test_continuous_shells_have_no_exact_sampler():
    n, R, h = 4, 6, 0.25
    k = np.arange(R + 1)
    a = BETA ** np.ceil(k / n)
    d = {"kind": "l1_shell_density_nd", "dim": 2, "norm": "l1", "sensitivity": 1.0, "shell_width": h,
         "continuous": True, "density": a.tolist(), "tail_factor": 1.0, "tail_rate": BETA ** (1 / n)}
    with pytest.raises(SpecError, match="continuous"):
        mechanism_from_solver_dict(d).sample(3, rng=0, exact=True)


# ------------------------------------------------------------------------------------------------
# MajorantLatticePMFND
# ------------------------------------------------------------------------------------------------
def test_majorant_exact_draws_follow_the_pmf(majorant):
    x = majorant.sample(N, rng=12, exact=True)
    assert x.shape == (N, 2) and x.dtype == np.int64
    assert g_test_points(x, majorant.pmf) > 1e-4


def test_majorant_exact_is_reproducible(majorant):
    a = majorant.sample(1000, rng=7, exact=True)
    assert np.array_equal(a, majorant.sample(1000, rng=7, exact=True))


def test_majorant_exact_total_brackets_the_float_normaliser(majorant):
    lo, hi = majorant.exact_law().total_bounds(64)
    assert lo <= hi and float(hi - lo) <= 2.0**-60 * float(lo)
    Z = majorant.normaliser()
    assert float(lo) * (1 - 1e-12) <= Z <= float(hi) * (1 + 1e-12)


def test_majorant_exact_privacy_is_the_exact_audit(majorant):
    p = majorant.exact_sampler().privacy()
    assert p.notion == "pure" and p.norm == majorant.norm and p.sensitivity == majorant.sensitivity
    assert math.isfinite(p.epsilon) and -math.log(majorant.beta) <= p.epsilon <= majorant.privacy().epsilon
    assert "audited exactly" in p.note


@pytest.mark.parametrize("group", ["none", "signed permutations"])
def test_hand_built_majorant_is_the_discrete_laplace_law(group):
    # a small domain (ℓ1 ball of radius 3): the head holds shells outside it; tail_bits = 1 sends a
    # good share of the draws through the envelope's rejection path
    from optmech.mechanisms.multidim import DiscreteLaplaceND

    m = mechanism_from_solver_dict(laplace_dict(group, 2))
    ref = DiscreteLaplaceND(epsilon=1.0, sensitivity=2, dim=2)
    x = m.sample(N, rng=4, exact=True)
    assert np.mean(np.abs(x).sum(axis=1) > 3) > 0.3
    assert g_test_points(x, ref.pmf) > 1e-4
    law = MajorantExactLaw(m.ext, tail_bits=1)
    assert law.T > law.K_dom and law.k0 == 4
    y = law.sample(N, bit_source(9))
    assert np.mean(np.abs(y).sum(axis=1) >= law.T) > 0.05
    assert g_test_points(y, ref.pmf) > 1e-4
    lo, hi = law.total_bounds(64)
    assert float(lo) * (1 - 1e-12) <= m.normaliser() <= float(hi) * (1 + 1e-12)


def test_exact_audit_sees_below_the_float_slack():
    # one mass raised by 5e-10 (relative): inside the float audit's slack, but the exact law's one-move
    # ratio is then 1/β (1 + 5e-10), which the exact privacy reports
    d = laplace_dict("signed permutations", 1)
    mass = np.array(d["mass"])
    mass[2] *= 1 + 5e-10
    m = mechanism_from_solver_dict({**d, "mass": mass.tolist()})
    eps = m.exact_sampler().privacy().epsilon
    assert eps == pytest.approx(1.0 + 5e-10, abs=1e-12)
    clean = mechanism_from_solver_dict(d).exact_sampler().privacy().epsilon
    assert clean == pytest.approx(1.0, abs=1e-12) and clean < eps


def test_l2_refuses_the_exact_sampler():
    m = mechanism_from_solver_dict(laplace_dict("signed permutations", 1, norm="l2"))
    with pytest.raises(SpecError, match="no closed form"):
        m.sample(5, rng=0)
    with pytest.raises(SpecError, match="no closed form"):
        m.sample(5, rng=0, exact=True)
