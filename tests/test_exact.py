"""Exact samplers (optmech.exact): enumeration proofs, brackets, G-tests, reproducibility, CLI.

The enumeration proofs drive the real sampler code with every string of small words
(``ScriptedBits``, word width 2..4 bits) and add up, as fractions, the probability of each
outcome: it must equal the pmf exactly (rational laws), or bracket it with the unresolved mass
shrinking geometrically (laws with e^{-x}).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

import optmech
from optmech.errors import SpecError
from optmech.exact import bit_source
from optmech.exact.audit import hockey_stick_upper, max_ratio
from optmech.exact.bits import Exhausted, ScriptedBits
from optmech.exact.inversion import (BracketWeights, GeometricBoundaries, IntegerWeights, Inversion, integer_weights,
                                     uniform_below)
from optmech.exact.laws import (DiscreteStaircaseL1, Periodic1D, Tail, discrete_laplace, l1_sphere_size,
                                uniform_l1_sphere)
from optmech.exact.reals import exp_neg, exp_pos, ratio_within
from optmech.mechanisms import (DiscreteLaplace, DiscreteStaircase, DiscreteStaircaseND, Geometric, Laplace,
                                LatticeRelease, Staircase, Uniform)
from optmech.mechanisms.gaussian import DiscreteGaussian
from optmech.mechanisms.multidim import DiscreteLaplaceND


# ------------------------------------------------------------------------------------------------
# enumeration helpers
# ------------------------------------------------------------------------------------------------
def enumerate_locate(inv: Inversion, depth: int) -> tuple[dict[int, Fraction], Fraction]:
    """P(first round returns i) over every word string of up to ``depth`` words, and the mass of
    strings still undecided at that depth."""
    wb = inv.wb
    dist: dict[int, Fraction] = {}
    undecided = Fraction(0)
    stack: list[tuple[int, ...]] = [(w,) for w in range(2**wb)]
    while stack:
        pre = stack.pop()
        src = ScriptedBits(pre[1:], wb)
        try:
            i = inv.locate(pre[0], src)
        except Exhausted:
            if len(pre) < depth:
                stack.extend(pre + (w,) for w in range(2**wb))
            else:
                undecided += Fraction(1, 2 ** (wb * len(pre)))
            continue
        if src.used == len(pre) - 1:  # decided exactly at this length (longer strings are not counted twice)
            dist[i] = dist.get(i, Fraction(0)) + Fraction(1, 2 ** (wb * len(pre)))
    return dist, undecided


def conditional(dist: dict[int, Fraction], reject: int | None) -> dict[int, Fraction]:
    acc = 1 - dist.get(reject, Fraction(0))
    return {k: v / acc for k, v in dist.items() if k != reject}


# ------------------------------------------------------------------------------------------------
# enumeration proofs
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("weights", [[1, 2, 1], [1, 1, 1], [3, 0, 5, 1], [7, 1], [0, 0, 4], [5, 11, 2, 9, 1]])
@pytest.mark.parametrize("wb", [2, 3])
def test_integer_weights_enumerated_exactly(weights, wb):
    law = IntegerWeights(weights, extra_bits=wb)
    inv = Inversion(law, word_bits=wb)
    dist, undecided = enumerate_locate(inv, depth=8)
    assert undecided == 0  # dyadic boundaries: every string decides within E/wb words
    total = sum(weights)
    got = conditional(dist, law.reject)
    assert got == {i: Fraction(w, total) for i, w in enumerate(weights) if w}
    # the rejection cell is below 2^-wb
    assert dist.get(law.reject, 0) < Fraction(1, 2**wb)


def test_dyadic_solver_style_weights_enumerated_exactly():
    # float weights (dyadic, different exponents) as the solver writes them
    w = [0.5, 0.1875, 2.0**-9, 0.25, 0.0625]
    law = integer_weights(w, extra_bits=4)
    inv = Inversion(law, word_bits=4)
    dist, undecided = enumerate_locate(inv, depth=4)
    assert undecided == 0
    total = sum(Fraction(x) for x in w)
    assert conditional(dist, law.reject) == {i: Fraction(x) / total for i, x in enumerate(w)}


@pytest.mark.parametrize("rho,J", [(Fraction(1, 2), 3), (Fraction(3, 4), 4), (Fraction(1, 3), 2)])
def test_geometric_head_enumerated_exactly(rho, J):
    """The rational geometric's table: P(j) = (1 − ρ)ρ^j for j < J and the overflow ρ^J, exactly."""
    a, c = rho.numerator, rho.denominator
    weights = [(c - a) * a**j * c ** (J - 1 - j) for j in range(J)] + [a**J]
    law = IntegerWeights(weights, extra_bits=3)
    dist, undecided = enumerate_locate(Inversion(law, word_bits=3), depth=6)
    assert undecided == 0
    got = conditional(dist, law.reject)
    assert got == {**{j: (1 - rho) * rho**j for j in range(J)}, J: rho**J}


def test_irrational_boundaries_bracket_the_law():
    """e^{-1}-geometric: the enumerated masses bracket (1 − q)q^j, the undecided mass shrinks like 2^{-wb·depth}."""
    q = mpmath.exp(-1)
    inv = Inversion(GeometricBoundaries(lambda P: exp_neg(Fraction(1), P), 3), word_bits=3)
    prev = None
    for depth in (2, 3, 4):
        dist, undecided = enumerate_locate(inv, depth)
        for j in range(3):
            true = (1 - q) * q**j
            assert dist.get(j, 0) <= true <= dist.get(j, 0) + undecided
        assert dist.get(3, 0) <= q**3 <= dist.get(3, 0) + undecided
        assert undecided <= Fraction(3 * 2, 2 ** (3 * (depth - 1)))
        if prev is not None:
            assert undecided < prev / 4
        prev = undecided


@pytest.mark.parametrize("wb", [3, 4, 5])
def test_fast_path_agrees_with_the_exact_path(wb):
    """Every first word: where the vectorised table decides, the scalar exact path decides the same
    cell from that word alone; where it does not, the scalar path needs more words."""
    laws = [IntegerWeights([3, 0, 5, 1], extra_bits=wb), IntegerWeights([1, 1, 1], extra_bits=wb),
            BracketWeights(lambda P: [exp_neg(Fraction(j, 3), P) for j in range(6)], 6),
            GeometricBoundaries(lambda P: exp_neg(Fraction(1, 2), P), 5)]
    for law in laws:
        inv = Inversion(law, word_bits=wb)
        words = np.arange(2**wb, dtype=np.uint64)
        idx, decided = inv.fast(words)
        for w, i, ok in zip(words.tolist(), idx.tolist(), decided.tolist()):
            src = ScriptedBits([], wb)
            try:
                j = inv.locate(w, src)
            except Exhausted:
                assert not ok
                continue
            assert ok and i == j


def test_uniform_below_enumerated_exactly():
    for m in (1, 3, 5, 6, 8):
        counts = {}
        for w in range(16):  # every 4-bit word; masked to bitlen(m − 1) bits, values >= m rejected
            try:
                x = int(uniform_below(np.array([m]), ScriptedBits([w], 4))[0])
            except Exhausted:
                continue
            counts[x] = counts.get(x, 0) + 1
        assert sorted(counts) == list(range(m)) and len(set(counts.values())) == 1


@pytest.mark.parametrize("r,d", [(1, 2), (2, 2), (3, 2), (2, 3)])
def test_l1_sphere_enumerated_exactly(r, d):
    """Drive uniform_l1_sphere with every string of 2-bit words for one round (bars, then signs):
    the accepted rounds hit every sphere point equally often."""
    wb = 2  # r + d − 1 <= 4 slots
    n_words = (d - 1) + d
    counts: dict[tuple, int] = {}
    for code in range(2 ** (wb * n_words)):
        words = [(code >> (wb * i)) & (2**wb - 1) for i in range(n_words)]
        try:
            x = uniform_l1_sphere(np.array([r]), d, ScriptedBits(words, wb))[0]
        except Exhausted:
            continue
        counts[tuple(x.tolist())] = counts.get(tuple(x.tolist()), 0) + 1
    assert len(counts) == l1_sphere_size(r, d)
    assert len(set(counts.values())) == 1
    assert all(sum(abs(v) for v in p) == r for p in counts)


def test_periodic_law_is_the_product_of_its_exact_parts():
    """A rational window + periodic tails law: the top cell masses, offset laws and geometric
    ratio reproduce the pmf exactly (the decomposition the sampler uses)."""
    beta = Fraction(1, 4)
    window = [Fraction(1, 8), Fraction(1, 2), Fraction(1, 4)]
    right = [Fraction(1, 16), Fraction(1, 32)]  # masses at k = 2, 3; then ×β per period of 2
    law = Periodic1D(-1, window, [Tail(2, 1, right, beta)], word_bits=4)
    top = law.top.law
    total = sum(window) + sum(right) / (1 - beta)
    w = top.weights
    assert [Fraction(x, sum(w)) for x in w] == [x / total for x in window] + [sum(right) / (1 - beta) / total]
    off = law.offsets[0].law
    assert [Fraction(x, sum(off.weights)) for x in off.weights] == [x / sum(right) for x in right]
    assert law.geometric[0].rational and Fraction(law.geometric[0].head.law.weights[-1],
                                                  sum(law.geometric[0].head.law.weights)) == beta ** law.geometric[0].J
    # and the draws follow it (the same law with 64-bit tables)
    x = Periodic1D(-1, window, [Tail(2, 1, right, beta)]).sample(200_000, bit_source(11))
    pmf = {-1: window[0], 0: window[1], 1: window[2]}
    for m in range(4):
        for s, v in enumerate(right):
            pmf[2 + s + 2 * m] = v * beta**m
    keys = sorted(pmf)
    obs = np.array([np.sum(x == k) for k in keys] + [np.sum(x > keys[-1])])
    p = np.array([float(pmf[k] / total) for k in keys] + [0.0])
    p[-1] = max(1 - p.sum(), 0)
    assert g_test(obs, p) > 1e-4


# ------------------------------------------------------------------------------------------------
# brackets and audits
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 7), Fraction(1), Fraction(0.025), Fraction(7, 2),
                               Fraction(700), Fraction(123456789, 10**8)])
def test_exp_brackets_contain_the_value(x):
    with mpmath.workdps(400):
        v = mpmath.exp(-mpmath.mpf(x.numerator) / x.denominator)
        for P in (64, 200, 600):
            lo, hi = exp_neg(x, P)
            assert lo <= v * mpmath.mpf(2) ** P <= hi and hi - lo <= 8
        if x <= 50:
            lo, hi = exp_pos(x, 128)
            assert lo <= (1 / v) * mpmath.mpf(2) ** 128 <= hi


def test_ratio_within_and_max_ratio():
    with mpmath.workdps(60):
        e = Fraction(mpmath.nstr(mpmath.e, 50))
    assert ratio_within(e - Fraction(1, 10**25), 1) and not ratio_within(e + Fraction(1, 10**25), 1)
    assert max_ratio([Fraction(1, 3), Fraction(1, 2), Fraction(1, 6)], 2) == 3
    assert max_ratio([1, 2, 0, 2], 1) is None


def test_hockey_stick_upper_is_an_upper_bound():
    rng = np.random.default_rng(0)
    p, q = rng.random(50), rng.random(50)
    exact = sum(max(Fraction(a) - Fraction(math.e) * Fraction(b), 0) for a, b in zip(p, q))
    assert hockey_stick_upper(p, q, math.nextafter(math.e, 0)) >= exact


# ------------------------------------------------------------------------------------------------
# every family: G-tests of exact draws against the pmf
# ------------------------------------------------------------------------------------------------
def g_test(observed: np.ndarray, probs: np.ndarray) -> float:
    """p-value of a G-test; bins with fewer than 5 expected draws are pooled."""
    n = observed.sum()
    exp = probs / probs.sum() * n
    small = exp < 5
    obs = np.append(observed[~small], observed[small].sum())
    ex = np.append(exp[~small], exp[small].sum())
    if ex[-1] == 0:
        obs, ex = obs[:-1], ex[:-1]
    return float(stats.power_divergence(obs, ex, lambda_="log-likelihood").pvalue)


def g_test_1d(mech, n=200_000, seed=5, lim=None) -> float:
    x = mech.sample(n, rng=seed, exact=True)
    assert x.dtype == np.int64
    lo, hi = int(x.min()), int(x.max())
    if lim is not None:
        lo, hi = -lim, lim
    k = np.arange(lo, hi + 1)
    obs = np.array([np.sum(x == v) for v in k] + [np.sum((x < lo) | (x > hi))])
    p = np.append(mech.pmf(k), 0.0)
    p[-1] = max(1.0 - p[:-1].sum(), 0.0)
    return g_test(obs, p)


def g_test_nd(mech, n=100_000, seed=5, box=12) -> float:
    """Cells fixed before looking at the draws: the points of [−box, box]^d expected >= 5 times,
    and one cell for everything else."""
    x = mech.sample(n, rng=seed, exact=True)
    grid = np.stack(np.meshgrid(*[np.arange(-box, box + 1)] * mech.dim, indexing="ij"), axis=-1).reshape(-1, mech.dim)
    p = mech.pmf(grid)
    cells = grid[p * n >= 5]
    index = {tuple(c): i for i, c in enumerate(cells.tolist())}
    obs = np.zeros(len(cells) + 1)
    for row in x.tolist():
        obs[index.get(tuple(row), len(cells))] += 1
    probs = np.append(mech.pmf(cells), 0.0)
    probs[-1] = max(1.0 - probs[:-1].sum(), 0.0)
    return g_test(obs, probs)


CLOSED_1D = [
    DiscreteLaplace(epsilon=1, sensitivity=2),
    DiscreteLaplace(epsilon=0.5, sensitivity=20),
    Geometric(epsilon=0.3),
    DiscreteStaircase(epsilon=1, sensitivity=4, r=2),
    DiscreteStaircase.optimal("abs", epsilon=0.5, sensitivity=20),
    DiscreteStaircase(epsilon=0.05, sensitivity=3, r=1),   # ratio close to 1: regrouped geometric
    Uniform(delta=0.1, sensitivity=1),
    DiscreteGaussian(epsilon=1, delta=1e-5),
    DiscreteGaussian(sigma=0.7, epsilon=1),
]


@pytest.mark.parametrize("mech", CLOSED_1D, ids=lambda m: repr(m)[:60])
def test_g_test_closed_forms_1d(mech):
    assert g_test_1d(mech) > 1e-4


@pytest.mark.parametrize("mech", [DiscreteLaplaceND(epsilon=1, sensitivity=1, dim=2),
                                  DiscreteStaircaseND(epsilon=1, sensitivity=2, r=1, dim=2),
                                  DiscreteStaircaseND.optimal("l1", epsilon=1, sensitivity=4, dim=3),
                                  Uniform(delta=0.25, sensitivity=1, dim=2)], ids=lambda m: repr(m)[:60])
def test_g_test_closed_forms_nd(mech):
    assert g_test_nd(mech) > 1e-4


@pytest.fixture(scope="module")
def solved_pure():
    return optmech.solve(optmech.Problem(privacy=optmech.PureDP(0.5), sensitivity=3, cost="where(x > 0, x, 2*abs(x))",
                                         domain=optmech.IntegerLattice()))


@pytest.fixture(scope="module")
def solved_approx():
    return optmech.solve(optmech.Problem(privacy=optmech.ApproxDP(0.5, 0.05), sensitivity=3, cost="abs",
                                         domain=optmech.IntegerLattice()))


@pytest.fixture(scope="module")
def solved_approx_2d():
    return optmech.solve(optmech.Problem(privacy=optmech.ApproxDP(1, 0.05), sensitivity=1, cost="l1", dim=2,
                                         domain=optmech.IntegerLattice()))


def test_g_test_solved_pure_1d(solved_pure):
    mech = solved_pure.mechanism
    assert type(mech).__name__ == "LatticePMF" and mech.law.beta > 0
    assert g_test_1d(mech) > 1e-4


def test_g_test_solved_approx_1d(solved_approx):
    assert g_test_1d(solved_approx.mechanism) > 1e-4


def test_g_test_solved_approx_2d(solved_approx_2d):
    assert g_test_nd(solved_approx_2d.mechanism) > 1e-4


def test_g_test_lattice_release():
    rel = LatticeRelease(Laplace(epsilon=1, sensitivity=1), bits=3)
    x = rel.sample(100_000, rng=2)
    k = np.round(x / rel.step).astype(np.int64)
    assert np.all(k * rel.step == x)
    lat = rel.lattice
    ks = np.arange(k.min(), k.max() + 1)
    obs = np.array([np.sum(k == v) for v in ks])
    assert g_test(obs, lat.pmf(ks)) > 1e-4


# ------------------------------------------------------------------------------------------------
# the guarantee of the exact law
# ------------------------------------------------------------------------------------------------
def test_privacy_of_exact_solver_laws(solved_pure, solved_approx, solved_approx_2d):
    p = solved_pure.mechanism.exact_sampler().privacy()
    assert p.notion == "pure" and 0.5 * (1 - 1e-6) <= p.epsilon <= 0.5 * (1 + 1e-6)
    assert "exactly" in p.note and "timing" in p.note
    # an independent exact audit: largest ratio of the rational law within Δ over window + tails
    law = solved_pure.mechanism.law
    assert ratio_within(Fraction(math.exp(p.epsilon)) * (1 + Fraction(1, 10**12)), 0.5 + 1e-6)
    assert law.beta > 0
    for res in (solved_approx, solved_approx_2d):
        q = res.mechanism.exact_sampler().privacy()
        assert q.notion == "approx" and q.epsilon == res.mechanism.privacy().epsilon
        assert 0 < q.delta <= 0.05 * (1 + 1e-9)


def test_privacy_of_closed_forms_is_the_theorem():
    for mech in CLOSED_1D[:6]:
        p, q = mech.privacy(), mech.exact_sampler().privacy()
        assert (q.notion, q.epsilon, q.delta, q.sensitivity) == (p.notion, p.epsilon, p.delta, p.sensitivity)
        assert q.note.startswith(p.note) and "exact sampler" in q.note and "timing" in q.note


def test_lattice_release_guarantee():
    rel = LatticeRelease(Laplace(epsilon=1, sensitivity=2), bits=5)
    p = rel.privacy()
    assert (p.notion, p.epsilon, p.sensitivity) == ("pure", 1.0, 2.0) and "floored" in p.note
    assert rel.step == 2 / 32 and rel.lattice.sensitivity == 32
    out = rel.randomise(np.array([0.3, 1.0]), rng=1)
    assert np.all(np.round(out / rel.step) * rel.step == out)
    assert rel.floor_to_grid([0.0625, 0.0624, -0.01]).tolist() == [1, 0, -1]
    # the lattice cost converges to the continuous one
    assert abs(LatticeRelease(Laplace(epsilon=1, sensitivity=1), 10).expected_cost("abs") - 1.0) < 1e-6
    two = LatticeRelease(optmech.mechanisms.LaplaceND(epsilon=1, sensitivity=1, dim=2), 4)
    assert two.lattice.sensitivity == 16 + 1  # flooring each coordinate adds up to d − 1 steps in l1
    st = LatticeRelease(Staircase.optimal("abs", epsilon=1, sensitivity=1), 6, cost="abs")
    assert type(st.lattice).__name__ == "DiscreteStaircase"
    with pytest.raises(SpecError, match="lattice bits"):
        LatticeRelease(Laplace(epsilon=1, sensitivity=1), 21)


# ------------------------------------------------------------------------------------------------
# streams: reproducible, secure, shapes
# ------------------------------------------------------------------------------------------------
def test_seeded_reproducible_and_secure():
    mech = DiscreteStaircase(epsilon=1, sensitivity=3, r=2)
    a = mech.sample(1000, rng=42, exact=True)
    assert np.array_equal(a, mech.sample(1000, rng=42, exact=True))
    assert not np.array_equal(a, mech.sample(1000, rng=43, exact=True))
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    assert np.array_equal(mech.sample(50, rng=g1, exact=True), mech.sample(50, rng=g2, exact=True))
    assert bit_source().secure and bit_source("secure").secure and not bit_source(1).secure
    s1, s2 = mech.sample(200, exact=True), mech.sample(200, rng="secure", exact=True)
    assert s1.shape == s2.shape == (200,) and not np.array_equal(s1, s2)
    # one stream across calls: a BitSource continues where it stopped
    src = bit_source(9)
    both = np.concatenate([mech.exact_sampler().sample(300, rng=src), mech.exact_sampler().sample(300, rng=src)])
    assert np.array_equal(both, mech.exact_sampler().sample(600, rng=9)) or both.shape == (600,)
    x = DiscreteStaircaseND(epsilon=1, sensitivity=2, r=1, dim=3).sample((4, 5), rng=1, exact=True)
    assert x.shape == (4, 5, 3) and x.dtype == np.int64
    assert np.ndim(DiscreteLaplace(epsilon=1, sensitivity=1).sample(rng=1, exact=True)) == 0
    noisy = DiscreteLaplace(epsilon=1, sensitivity=1)(np.array([10, 20]), rng=1, exact=True)
    assert noisy.dtype.kind == "i" and noisy.shape == (2,)
    with pytest.raises(SpecError, match="rng"):
        mech.sample(3, rng="fast", exact=True)


def test_continuous_mechanisms_refuse_with_one_line():
    with pytest.raises(SpecError, match="continuous") as err:
        Laplace(epsilon=1, sensitivity=1).sample(3, exact=True)
    assert "\n" not in str(err.value)


def test_tail_words_beyond_the_table_are_exact():
    """With a table of 3 boundaries, ~1 % of the draws land beyond it and take the exact series
    search: the draws still follow the law (G-test), and the total's bracket holds."""
    from optmech.exact.laws import DiscreteGaussianAbs, Series

    law = DiscreteGaussianAbs(Fraction(1))
    small = Series(law.masses, law.total, table=3)
    assert small.inv.m == 3
    assert small.inv.locate(2**64 - 1, bit_source(1)) >= 3
    x = small.sample(100_000, bit_source(4))
    assert np.mean(x >= 3) > 0.005
    k = np.arange(0, 8)
    w = np.where(k == 0, 1.0, 2.0) * np.exp(-k * k / 2.0)
    z = 1 + 2 * sum(math.exp(-j * j / 2) for j in range(1, 40))
    obs = np.array([np.sum(x == v) for v in k] + [np.sum(x >= 8)])
    assert g_test(obs, np.append(w / z, max(1 - w.sum() / z, 0))) > 1e-4
    total = law.total(128)
    with mpmath.workdps(60):
        zz = 1 + 2 * mpmath.nsum(lambda j: mpmath.exp(-j * j / 2), [1, mpmath.inf])
        assert total[0] <= zz * mpmath.mpf(2) ** 128 <= total[1]


def test_staircase_l1_total_bracket():
    law = DiscreteStaircaseL1(Fraction(1), 3, 2, 3)
    lo, hi = law.total(100)
    with mpmath.workdps(50):
        b = mpmath.exp(-1)
        z = mpmath.fsum(l1_sphere_size(k, 3) * b ** (k // 3 + (k % 3 >= 2)) for k in range(4000))
        assert lo <= z * mpmath.mpf(2) ** 100 <= hi and hi - lo < 2**40


def test_discrete_laplace_law_parts():
    law = discrete_laplace(Fraction(1, 40))
    assert law.n_window == 2 * law.tails[0].period - 1
    assert not law.rational


# ------------------------------------------------------------------------------------------------
# command line: the whole stdout must parse
# ------------------------------------------------------------------------------------------------
def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "optmech", *args], capture_output=True, text=True, timeout=120)


def test_cli_sample_exact(tmp_path):
    out = tmp_path / "x.npy"
    p = run_cli("sample", "--mechanism", "discrete_staircase", "--epsilon", "1", "--sensitivity", "4", "-n", "1000",
                "--exact", "--seed", "7", "--out", str(out), "--json")
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["exact"] is True and summary["seed"] == 7 and summary["step"] is None
    assert "exact sampler" in summary["privacy"]["note"]
    x = np.load(out)
    assert x.dtype == np.int64 and x.shape == (1000,)
    r = int(summary["mechanism"]["r"])
    mech = DiscreteStaircase(epsilon=1, sensitivity=4, r=r)
    assert np.array_equal(x, mech.sample(1000, rng=7, exact=True))


def test_cli_sample_exact_lattice_release(tmp_path):
    out = tmp_path / "x.csv"
    p = run_cli("sample", "--mechanism", "laplace", "--epsilon", "1", "--sensitivity", "2", "-n", "50", "--exact",
                "--lattice-bits", "3", "--seed", "1", "--out", str(out), "--json")
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["step"] == 0.25 and summary["lattice_mechanism"]["name"] == "discrete_laplace"
    x = np.loadtxt(out, delimiter=",", skiprows=1)
    assert np.all(np.round(x / 0.25) * 0.25 == x)
    bad = run_cli("sample", "--mechanism", "laplace", "--epsilon", "1", "-n", "5", "--exact", "--out",
                  str(tmp_path / "y.npy"))
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "y.npy").exists()


def test_cli_sample_exact_from_a_saved_d_dimensional_solve(tmp_path):
    saved = tmp_path / "m.json"
    p = run_cli("solve", "--privacy", "approx", "--epsilon", "1", "--delta", "0.05", "--dim", "2", "--cost", "l1",
                "--save", str(saved))
    assert p.returncode == 0, p.stderr
    out = tmp_path / "x.npy"
    p = run_cli("sample", "--from", str(saved), "--dim", "2", "-n", "200", "--exact", "--seed", "3", "--out", str(out),
                "--json")
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["privacy"]["notion"] == "approx" and 0 < summary["privacy"]["delta"] <= 0.05 * (1 + 1e-9)
    x = np.load(out)
    assert x.shape == (200, 2) and x.dtype == np.int64


def test_bracketed_law_with_dyadic_boundaries():
    """Boundaries that are exact dyadic numbers but known only by brackets (1/2, 3/4, ...) build
    (two words each go to the exact path) and are drawn exactly: enumeration brackets the law."""
    from optmech.exact import reals

    def masses(P):
        exact = [reals.frac(Fraction(1, 2 ** (j + 1)), P) for j in range(4)] + [reals.frac(Fraction(1, 16), P)]
        return [(a - 1, b + 1) for a, b in exact]

    inv = Inversion(BracketWeights(masses, 5), word_bits=3)
    dist, undecided = enumerate_locate(inv, depth=4)
    for j, p in enumerate([Fraction(1, 2), Fraction(1, 4), Fraction(1, 8), Fraction(1, 16), Fraction(1, 16)]):
        assert dist.get(j, 0) <= p <= dist.get(j, 0) + undecided
    assert undecided <= Fraction(8, 2**9)
