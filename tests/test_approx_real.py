"""(ε, δ)-DP on ℝ (issue 20, 1-D): the cell/node LP of :mod:`optmech.problems.approx_cells`.

Each check is derived independently of the family's own arithmetic: the audit's linearity in the
shift by direct integration, the returned density's δ(ε) at off-grid shifts by quadrature, the
lower bound against mechanisms that are (ε, δ)-DP by their own proofs (Laplace, uniform noise),
the scaling against the integer family, and the command line as a user runs it.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import optmech
import optmech.families.approx_real as approx_real
from optmech.costs import parse_cost
from optmech.problems.approx_cells import (AlignedCells, NodeCosts, aligned_cell_mean_upper, aligned_cells_law,
                                           cell_mean_upper, cells_law)
from optmech.spec import Problem


def _solve(**kw):
    params = {"privacy": "approx", "domain": "continuous", "sensitivity": 1, **kw}
    return optmech.solve(Problem.from_params(params), time_limit=60)


def _hockey_stick_integral(density, t: float, eps: float, lo: float, hi: float, points: int = 400_001) -> float:
    """∫ (p(x) − e^ε p(x − t))_+ dx by the midpoint rule on [lo, hi] (p piecewise constant: exact up to the
    cells cut by the grid)."""
    x = np.linspace(lo, hi, points)
    mid = 0.5 * (x[1:] + x[:-1])
    dx = x[1] - x[0]
    return float(np.sum(np.maximum(density(mid) - math.exp(eps) * density(mid - t), 0.0)) * dx)


def test_hockey_stick_of_a_cell_density_is_linear_between_grid_shifts():
    """Equation (1) of approx_cells: for a density constant on centred cells the divergence at
    t = (m + f)h is (1 − f)H_m + f H_{m+1}, checked by direct integration on a random density."""
    rng = np.random.default_rng(7)
    n, R, eps = 4, 6, 0.7
    q = rng.random(2 * R + 1)
    q /= q.sum()
    h = 1.0 / n

    def density(x):
        k = np.floor(x / h + 0.5).astype(int)
        inside = np.abs(k) <= R
        return np.where(inside, q[np.clip(k + R, 0, 2 * R)] / h, 0.0)

    def lattice_H(m):
        pad = np.concatenate([np.zeros(abs(m)), q, np.zeros(abs(m))])
        shifted = np.roll(pad, m)
        return float(np.sum(np.maximum(pad - math.exp(eps) * shifted, 0.0)))

    for m, f in ((0, 0.3), (1, 0.5), (2, 0.25), (3, 0.9)):
        t = (m + f) * h
        want = (1 - f) * lattice_H(m) + f * lattice_H(m + 1)
        got = _hockey_stick_integral(density, t, eps, -R * h - 2, R * h + 2)
        assert got == pytest.approx(want, abs=2e-4)


@pytest.mark.parametrize("kw", [
    {"epsilon": 1, "delta": 0.05, "cost": "abs"},
    {"epsilon": 0.5, "delta": 0.01, "cost": "square", "sensitivity": 2},
])
def test_the_returned_density_is_private_at_real_shifts(kw):
    r = _solve(target_gap=1e-2, **kw)
    assert r.certified and r.lower_bound <= r.upper_bound
    m = r.mechanism
    eps, delta = kw["epsilon"], kw["delta"]
    D = float(kw.get("sensitivity", 1))
    lo, hi = float(m.ppf(1e-12)) - 2 * D, float(m.ppf(1 - 1e-12)) + 2 * D
    for t in (0.137 * D, 0.5 * D, 0.71 * D, D, -0.33 * D):
        assert _hockey_stick_integral(m.pdf, t, eps, lo, hi) <= delta * (1 + 1e-3) + 1e-5
    # the mechanism's exact expected cost is the certified upper end, up to outward rounding
    x = np.linspace(lo, hi, 2_000_001)
    L = parse_cost(kw["cost"])
    cost = float(np.sum(L(x) * m.pdf(x)) * (x[1] - x[0]))
    assert cost <= r.upper_bound * (1 + 1e-4)
    assert cost >= r.lower_bound * (1 - 1e-4)


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-3), (1.0, 0.05), (2.0, 1e-4)])
def test_the_lower_bound_is_below_mechanisms_private_by_their_own_proofs(eps, delta):
    """Laplace noise of scale Δ/ε is ε-DP; uniform noise of width Δ/δ is (0, δ)-DP (TV = |t|δ/Δ)."""
    for cost, laplace, uniform in (("abs", 1 / eps, 1 / (4 * delta)), ("square", 2 / eps**2, 1 / (12 * delta**2))):
        r = _solve(epsilon=eps, delta=delta, cost=cost, target_gap=1e-2)
        assert r.lower_bound <= min(laplace, uniform)
        assert r.upper_bound <= min(laplace, uniform) * (1 + 1e-9) or r.upper_bound <= min(laplace, uniform) + 1e-9


def test_zero_epsilon_brackets_the_uniform_cost():
    """(0, δ) with |x|: uniform noise on [−Δ/(2δ), Δ/(2δ)] costs Δ/(4δ) and is private; on every lattice the
    uniform pmf is the optimum [GV13 §III, observed for Δ <= 7], so the bracket closes around Δ/(4δ)."""
    r = _solve(epsilon=0, delta=0.1, cost="abs", target_gap=1e-3)
    assert r.lower_bound <= 2.5 <= r.upper_bound
    assert r.relative_gap <= 1e-3


def test_the_lower_bound_is_the_integer_problem_scaled_for_abs():
    """For |x| the node prices are exact (no chord error), so the first LP's lower bound is h·V*(ℤ, Δ = n)."""
    n = 4
    r = _solve(epsilon=1, delta=0.05, cost="abs", resolution=n, target_gap=0.5)
    z = optmech.solve(Problem.from_params({"privacy": "approx", "epsilon": 1, "delta": 0.05, "sensitivity": n,
                                           "domain": "integer", "cost": "abs"}), time_limit=60)
    first = r.history[0]
    assert first["size"]["cells_per_sensitivity"] == n
    assert first["lower_bound"] == pytest.approx(z.lower_bound / n, rel=1e-7)


def test_node_prices_and_cell_means_bracket_the_cost():
    """L̂(k) <= L(x_k) and the centred cell's mean <= its upper price, for a smooth and a kinked expression."""
    for text in ("square", "abs(x-0.3)+0.1*x**2", "pow:3"):
        L = parse_cost(text)
        nc = NodeCosts(L, 1.5, 6)
        k = np.arange(-40, 41)
        x = k * 1.5 / 6
        assert np.all(nc.lower(k) <= L(x))
        from scipy.integrate import quad

        means = [quad(lambda t: float(L(np.array(t))), xk - 0.125, xk + 0.125, points=[0.3], epsabs=1e-13)[0] / 0.25
                 for xk in x]
        assert np.all(cell_mean_upper(L, k, 1.5, 6) >= np.array(means) - 1e-9 * (1 + np.abs(means)))
        # the chord between neighbouring nodes exceeds L by at most the proven error
        e = nc.chord_errors(k)
        for j in range(0, 80, 7):
            a, b = x[j], x[j + 1]
            t = np.linspace(0, 1, 1001)
            chord = (1 - t) * L(a) + t * L(b)
            assert np.max(chord - L(a + t * (b - a))) <= e[j] + 1e-12


def test_cells_law_is_a_density_of_the_masses():
    p = np.array([0.1, 0.2, 0.4, 0.2, 0.1])
    law = cells_law(p, 2, 1.0, 4)
    from optmech.mechanisms.tabulated import Tabulated

    m = Tabulated.from_law(law, 1.0, delta=0.1)
    for k, mass in zip(range(-2, 3), p):
        assert m.cdf((k + 0.5) / 4) - m.cdf((k - 0.5) / 4) == pytest.approx(mass, abs=1e-12)


def test_aligned_cells_law_and_means():
    """Masses on the aligned cells [kh, (k+1)h) become a density of those masses; the aligned means of
    |x| are the centres' |x| (no cell straddles the kink), and every mean bound is above quadrature."""
    from scipy.integrate import quad

    from optmech.mechanisms.tabulated import Tabulated

    p = np.array([0.1, 0.2, 0.4, 0.2, 0.1])
    m = Tabulated.from_law(aligned_cells_law(p, -3, 1.0, 4), 1.0, delta=0.1)
    for k, mass in zip(range(-3, 2), p):
        assert m.cdf((k + 1) / 4) - m.cdf(k / 4) == pytest.approx(mass, abs=1e-12)
    k = np.arange(-30, 30)
    assert np.allclose(aligned_cell_mean_upper(parse_cost("abs"), k, 1.0, 4), np.abs(k + 0.5) / 4, rtol=1e-14)
    for text in ("square", "abs(x-0.3)+0.1*x**2"):
        L = parse_cost(text)
        means = np.array([quad(lambda t: float(L(np.array(t))), kk * 0.25, (kk + 1) * 0.25, points=[0.3],
                               epsabs=1e-13)[0] / 0.25 for kk in k])
        assert np.all(aligned_cell_mean_upper(L, k, 1.0, 4) >= means - 1e-9 * (1 + np.abs(means)))
    a = AlignedCells(parse_cost("abs"), 1.0, 4)
    assert a.even(np.arange(-5, 5)) and not AlignedCells(parse_cost("abs(x-0.3)"), 1.0, 4).even(np.arange(-5, 5))


@pytest.mark.parametrize("path,cells", [("per_point", "aligned"), ("decay", "centred")])
def test_the_upper_end_law_is_private_at_real_shifts(path, cells, monkeypatch):
    """For |x| the upper bound comes from the aligned cells on the per-point path (pinned) and from the decay
    law's centred cells on the periodic-decay path; either density passes the hockey-stick integral at off-grid
    shifts (quadrature) and costs what the bracket says."""
    if path == "per_point":
        monkeypatch.setattr(approx_real, "DECAY_MAX_EPSILON", 0.0)
    r = _solve(epsilon=1, delta=1e-3, cost="abs", target_gap=1e-3)
    assert r.certified and r.truncation["upper_bound_cells"] == cells
    assert (r.history[-1]["size"].get("layout") == "periodic_decay") == (path == "decay")
    if path == "decay":
        assert any("periodic-decay" in c for c in r.claims)
    m = r.mechanism
    lo, hi = float(m.ppf(1e-12)) - 2, float(m.ppf(1 - 1e-12)) + 2
    for t in (0.113, 0.5, 0.77, 1.0):
        assert _hockey_stick_integral(m.pdf, t, 1.0, lo, hi) <= 1e-3 * (1 + 1e-3) + 1e-5
    x = np.linspace(lo, hi, 2_000_001)
    cost = float(np.sum(np.abs(x) * m.pdf(x)) * (x[1] - x[0]))
    assert r.lower_bound * (1 - 1e-4) <= cost <= r.upper_bound * (1 + 1e-4)


def test_aligned_resolution_minimises_the_breakpoint_offset():
    """The resolution chosen puts b·Δ nearest a node (brute force over the range); the breakpoint of |x| is
    [Geng13, Thm 2.5]'s γ* = 1/(1 + e^{ε/2})."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        b = float(rng.uniform(0.01, 0.99))
        lo = int(rng.integers(2, 60))
        hi = lo + int(rng.integers(0, 80))
        n = approx_real.aligned_resolution(lo, hi, b)
        offs = {k: abs(b * k - round(b * k)) for k in range(lo, hi + 1)}
        assert lo <= n <= hi and offs[n] == min(offs.values())
    assert approx_real.aligned_resolution(5, 9, None) == 5
    for eps in (0.5, 2.0, 5.0):
        b = approx_real.staircase_breakpoint(parse_cost("abs"), eps, 1.0)
        assert b == pytest.approx(1 / (1 + math.exp(eps / 2)), rel=1e-9)
    assert approx_real.staircase_breakpoint(parse_cost("abs"), 0.0, 1.0) is None


def test_a_refinement_prefers_the_resolutions_predicted_to_reach_the_target(monkeypatch):
    """_aligned_next with a breakpoint: where a resolution in ALIGN_LOW..ALIGN_REACH times the O(h²) prediction
    k = n·(gap/(TARGET_MARGIN·target))^{1/2} fits the time left, the choice lies in that window and is the best
    aligned there (least offset per cell width, brute force); where none fits, the larger ones that do are
    still taken (the former rule); a gap already below the target has no window."""
    from types import SimpleNamespace

    fam = approx_real.ApproxRealFamily(Problem.from_params(
        {"privacy": "approx", "domain": "continuous", "sensitivity": 1, "epsilon": 5, "delta": 1e-6, "cost": "abs"}),
        None)
    b = fam.breakpoint
    fam.ctx = SimpleNamespace(remaining=lambda: left)
    fam._current = (66, 300, (66,))
    monkeypatch.setattr(fam, "plan", lambda size: SimpleNamespace(work=float(size[0]) ** 2))

    def size_at(k):
        return (int(k), 300, (int(k),))

    def best(ks):
        ks = np.asarray(ks)
        off = np.maximum(np.abs(b * ks - np.round(b * ks)), approx_real.ALIGN_OFFSET_FLOOR)
        return int(ks[int(np.argmin(off / ks))])

    for gap in (1.03e-4, 2.3e-4, 5e-4):
        left = math.inf
        step = SimpleNamespace(built=SimpleNamespace(model=SimpleNamespace(n=66)), seconds=1.0, gap=gap)
        want = 66 * min(4, max(2, math.ceil(math.sqrt(gap / 1e-4) - 0.05)))  # as grow() asks
        need = 66 * math.sqrt(gap / (approx_real.TARGET_MARGIN * 1e-4))
        window = [k for k in range(67, math.ceil(approx_real.ALIGN_REACH * want) + 1)
                  if approx_real.ALIGN_LOW * need <= k <= approx_real.ALIGN_REACH * need]
        k = fam._aligned_next(step, want, size_at)
        assert window and k == best(window), gap
        # the time left admits only resolutions below the window: the best aligned of those
        top = int(approx_real.ALIGN_LOW * need) - 1
        left = approx_real.TIME_SAFETY * 1.0 * (top / 66) ** (2 * approx_real.Pace.GROWTH) * 1.0001
        k = fam._aligned_next(step, want, size_at)
        assert k <= top and k == best(range(67, top + 1)), gap


def test_no_aligned_candidate_once_the_target_is_met():
    """The aligned-cell candidate is an LP of its own: once a step's certified lower end and the best certified
    upper end known (here the staircase's closed form) meet the target, extra_uppers solves nothing."""
    from types import SimpleNamespace

    fam = approx_real.ApproxRealFamily(Problem.from_params(
        {"privacy": "approx", "domain": "continuous", "sensitivity": 1, "epsilon": 5, "delta": 1e-6, "cost": "abs",
         "target_gap": 1e-4}), None)
    ups = fam.initial_uppers()
    best = min(u.value for u in ups if u.certified)

    def refuse(*a, **k):
        raise AssertionError("an LP was solved after the target was met")

    fam.ctx = SimpleNamespace(solve_lp=refuse, remaining=lambda: 60.0)
    fam.aligned_won = True  # it would otherwise be proposed at every resolution
    step = SimpleNamespace(built=SimpleNamespace(model=SimpleNamespace(n=79)),
                           upper=SimpleNamespace(certified=True, value=best * 1.01),
                           lower=SimpleNamespace(value=best * (1 - 0.9e-4)))
    assert fam.extra_uppers(step) == []
    assert fam.known_upper == best


def test_refinements_put_the_staircase_step_on_a_node():
    """ε = 2, δ = 1e-3, |x| on the per-point path: every resolution after the first puts the staircase's step
    within 0.05 cells of a node, and the solve reaches the target gap 1e-4 (n = 26: b·n = 6.99)."""
    r = _solve(epsilon=2, delta=1e-3, cost="abs", target_gap=1e-4)
    b = 1 / (1 + math.exp(1.0))
    ns = [h["size"]["cells_per_sensitivity"] for h in r.history if "half_width_cells" in h["size"]]
    assert len(ns) >= 2
    assert all(abs(b * n - round(b * n)) <= 0.05 for n in ns[1:])
    assert r.certified and r.relative_gap <= 1e-4


def test_the_aligned_candidate_is_at_most_the_staircase_on_its_cells(monkeypatch):
    """At ε = 5, δ = 1e-6, |x| and n = 40 cells per Δ, the staircase with γ = 3/40 (its steps on the aligned
    cells' edges, ε-DP by [Geng13, Thm 2.4]'s construction) is a feasible point of the aligned-cell LP up to
    its tail beyond the box (mass below e^{-50}), so the audited candidate costs at most its closed form
    [Geng13, App. A.3].  Without closed-form references the bracket's upper end is the best cell law."""
    from optmech.mechanisms.staircase import staircase_cost_abs

    monkeypatch.setattr(approx_real, "closed_form_uppers", lambda *a, **k: [])
    r = _solve(epsilon=5, delta=1e-6, cost="abs", target_gap=5e-3, resolution=40)
    assert r.history[0]["size"]["cells_per_sensitivity"] == 40
    assert r.truncation["upper_bound_cells"] == "aligned"
    assert r.lower_bound <= r.upper_bound <= staircase_cost_abs(5.0, 1.0, 3 / 40) * (1 + 1e-9)


def test_a_spike_at_zero_lowers_the_upper_end_at_large_delta(monkeypatch):
    """ε = 5, δ = 1e-2, |x|: the optimum puts mass about δ at 0, and the aligned candidate with a spike (mass a on
    [−η/2, η/2)) is the upper end.  Independently of the family's audit: the law's own audit on its fine grid
    (Tabulated.privacy), the hockey-stick integral at off-grid shifts (quadrature, including a shift smaller than
    a cell), and its cost by quadrature; without the spike the upper end is higher."""
    kw = dict(epsilon=5, delta=1e-2, cost="abs", target_gap=5e-3, resolution=26)
    r = _solve(**kw)
    a = r.truncation["upper_bound_spike_mass"]
    assert r.certified and r.truncation["upper_bound_cells"] == "aligned" and 0 < a < 1e-2
    m = r.mechanism
    assert m.privacy().delta <= 1e-2
    lo, hi = float(m.ppf(1e-12)) - 2, float(m.ppf(1 - 1e-12)) + 2
    from optmech.problems.approx_cells import spike_steps

    h = 1 / 26
    eta = h / spike_steps(26)
    q = np.arange(math.floor(lo) - 1, math.ceil(hi) + 2)
    edges = np.unique(np.concatenate([np.arange(math.floor(lo / h) - 1, math.ceil(hi / h) + 2) * h,
                                      q - eta / 2, q + eta / 2]))
    for t in (0.0013, 0.113, 0.5, 1.0):
        # exact for a piecewise-constant density: the integrand is constant between the merged edges of p and p(· − t)
        b = np.unique(np.concatenate([edges, edges + t]))
        mid, width = 0.5 * (b[1:] + b[:-1]), np.diff(b)
        H = math.fsum(width * np.maximum(m.pdf(mid) - math.exp(5.0) * m.pdf(mid - t), 0.0))
        assert H <= 1e-2 * (1 + 1e-9)
    x = np.linspace(lo, hi, 4_000_001)
    cost = float(np.sum(np.abs(x) * m.pdf(x)) * (x[1] - x[0]))
    assert r.lower_bound * (1 - 1e-4) <= cost <= r.upper_bound * (1 + 1e-4)
    monkeypatch.setattr(approx_real, "SPIKE_MIN", 1.0)  # no spike; the first resolution only
    plain = _solve(**dict(kw, target_gap=0.5))
    assert plain.truncation["upper_bound_spike_mass"] == 0.0
    assert r.upper_bound < plain.upper_bound


def test_dropping_shifts_relaxes_and_generation_recovers_the_full_lp():
    """An LP that keeps some shifts has an optimum at most the full LP's (a relaxation); the solve,
    which keeps only the shifts it needs, reaches the full LP's lower bound at the same resolution."""
    from optmech.problems.approx import build_approx
    from optmech.solvers import solve_lp

    L = parse_cost("abs")
    n, N = 8, 64
    full = solve_lp(build_approx(L, 1.0, 1e-4, n, N, nodes=NodeCosts(L, 1.0, n)).lp).objective
    part = solve_lp(build_approx(L, 1.0, 1e-4, n, N, nodes=NodeCosts(L, 1.0, n),
                                 keep_shifts=np.array([[8], [5]])).lp).objective
    assert part <= full + 1e-9
    r = _solve(epsilon=1, delta=1e-4, cost="abs", target_gap=1e-4)
    kept = [h["size"]["shifts_kept"] for h in r.history]
    ns = [h["size"]["cells_per_sensitivity"] for h in r.history]
    assert any(k < m for k, m in zip(kept, ns))  # some step solved with fewer rows than the full LP
    assert r.relative_gap <= 1e-4


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "optmech", *args], capture_output=True, text=True, timeout=120)


def test_cli_json_is_one_document_with_a_certified_bracket():
    r = _cli("solve", "--privacy", "approx", "--epsilon", "1", "--delta", "0.05", "--sensitivity", "1", "--domain",
             "continuous", "--cost", "abs", "--target-gap", "1e-2", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["certified"] and d["lower_bound"] <= d["upper_bound"]
    assert d["problem"]["domain"] == "continuous" and d["lp"]["builder"] in ("hockey_stick_cells", "hockey_stick_decay")
    assert d["audit"]["passed"] and d["audit"]["realised_delta"] <= 0.05


@pytest.mark.parametrize("args,needle", [
    (["--delta", "1"], "delta"),
    (["--delta", "-0.1"], "delta"),
    (["--delta", "0.1", "--epsilon", "-1"], "epsilon"),
    (["--delta", "0.1", "--dim", "2", "--cost", "linf"], "l2sq and expressions"),
    (["--delta", "0.1", "--cost", "x-5"], "negative"),
])
def test_bad_input_is_one_line(args, needle):
    base = ["solve", "--privacy", "approx", "--sensitivity", "1", "--domain", "continuous"]
    if "--epsilon" not in args:
        base += ["--epsilon", "1"]
    r = _cli(*base, *args)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and needle in r.stderr, r.stderr


def _staircase_abs_series(eps: float, gamma: float, D: float = 1.0, terms: int = 400) -> float:
    """E|X| of the staircase [Geng13, (2.13)] by its series, independently of optmech: density a on
    [0, γΔ), a e^{-ε} on [γΔ, Δ), then the same steps times e^{-kε} on [kΔ, (k+1)Δ), mirrored; a from
    ∫ = 1."""
    k = np.arange(terms, dtype=float)
    r = np.exp(-eps * k)
    lo, mid, hi = k * D, (k + gamma) * D, (k + 1) * D
    mass = r * ((mid - lo) + math.exp(-eps) * (hi - mid))
    first = r * ((mid**2 - lo**2) + math.exp(-eps) * (hi**2 - mid**2)) / 2.0
    a = 1.0 / (2.0 * math.fsum(mass))
    return 2.0 * a * math.fsum(first)


def test_a_closed_form_reference_is_a_certified_upper_and_the_mechanism_returned():
    """At ε = 2, δ = 1e-6 the staircase (ε-DP, so (ε, δ)-DP) is cheaper than the coarse cell density:
    the bracket's upper end is its cost, γ* = 1/(1 + e^{ε/2}) [Geng13, Thm 2.4], and the mechanism
    handed back is that staircase."""
    eps = 2.0
    gamma = 1.0 / (1.0 + math.exp(eps / 2.0))
    value = _staircase_abs_series(eps, gamma)
    r = _solve(epsilon=eps, delta=1e-6, cost="abs", resolution=8, target_gap=0.5)
    assert r.lower_bound <= value <= r.upper_bound <= value * (1 + 1e-11)
    assert r.truncation["upper_bound_cells"] == "reference:staircase"
    assert r.mechanism.name == "staircase" and r.mechanism.gamma == pytest.approx(gamma, rel=1e-12)
    assert r.mechanism.privacy().epsilon == eps
    x = r.mechanism.sample(200_000, rng=3)
    assert abs(np.abs(x).mean() - value) < 5 * np.abs(x).std() / math.sqrt(x.size)
    assert any("closed-form reference 'staircase'" in c for c in r.claims)


def test_cli_reports_the_reference_upper_in_one_json_document():
    out = _cli("solve", "--privacy", "approx", "--epsilon", "2", "--delta", "1e-6", "--sensitivity", "1",
               "--domain", "continuous", "--cost", "abs", "--resolution", "8", "--target-gap", "0.5", "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["truncation"]["upper_bound"] == "closed form: the staircase reference"
    assert d["audit"]["method"].startswith("closed form")
    ref = {x["name"]: x for x in d["references"]}["staircase"]
    assert ref["value"] <= d["upper_bound"] <= ref["value"] * (1 + 1e-11)


def test_sample_from_a_saved_reference_mechanism(tmp_path):
    save, out = tmp_path / "r.json", tmp_path / "s.csv"
    p = _cli("solve", "--privacy", "approx", "--epsilon", "2", "--delta", "1e-6", "--sensitivity", "1",
             "--domain", "continuous", "--cost", "abs", "--resolution", "8", "--target-gap", "0.5", "--save", str(save))
    assert p.returncode == 0, p.stderr
    s = _cli("sample", "--from", str(save), "-n", "4", "--out", str(out), "--seed", "1")
    assert s.returncode == 0, s.stderr
    rows = out.read_text().splitlines()
    assert rows[0] == "x" and len(rows) == 5 and all(math.isfinite(float(v)) for v in rows[1:])


def _outward_pairs(alp):
    """(|x|, |x + v|) of every hockey-stick row, read back from the matrix (under the ±x reduction column c holds
    the pair ±(R − c))."""
    import scipy.sparse as sp

    A = sp.csr_array(alp.lp.A)[alp.lp.row_blocks["hockey_stick"]][:, :alp.lp.col_blocks["p"].stop]
    e = math.exp(alp.lp.meta["epsilon"])
    pairs = []
    for r in range(A.shape[0]):
        cols, vals = A.indices[A.indptr[r]:A.indptr[r + 1]], A.data[A.indptr[r]:A.indptr[r + 1]]
        if cols.size == 1:  # x and x + v in one pair: |x + v| = |x|
            assert vals[0] == pytest.approx(1 - e)
            pairs.append((alp.R - cols[0], alp.R - cols[0]))
        else:
            plus, minus = cols[vals == 1.0][0], cols[vals == -e][0]
            pairs.append((alp.R - plus, alp.R - minus))
    return np.array(pairs)


@pytest.mark.parametrize("cost,eps,delta,N", [("square", 5.0, 1e-6, 90), ("abs", 2.0, 1e-4, 120)])
def test_outward_rows_keep_the_rows_of_the_outward_fall_and_the_optimum(cost, eps, delta, N):
    """build_approx(outward_rows=True) keeps exactly the rows (v, x) with |x + v| >= |x| (read from the matrix),
    N + 1 + ⌊v/2⌋ of them per shift v; the full LP has the others too.  Its optimum (HiGHS simplex) is at most
    the full LP's (a relaxation: its certificate is below the full LP's simplex objective) and, measured here,
    equal to it within 1e-9."""
    from optmech.certify import dual_lower_bound
    from optmech.problems.approx import build_approx
    from optmech.solvers import solve_lp
    from test_hockey_ipm import SIMPLEX as simplex

    c, n = parse_cost(cost), 20
    out = build_approx(c, eps, delta, n, N, nodes=NodeCosts(c, 1.0, n), outward_rows=True)
    full = build_approx(c, eps, delta, n, N, nodes=NodeCosts(c, 1.0, n))
    pairs = _outward_pairs(out)
    assert np.all(pairs[:, 1] >= pairs[:, 0])
    assert np.any((lambda p: p[:, 1] < p[:, 0])(_outward_pairs(full)))
    assert out.lp.meta["t_per_shift"] == [N + 1 + v // 2 for v in range(1, n + 1)]
    r_out, r_full = solve_lp(out.lp, simplex), solve_lp(full.lp, simplex)
    assert dual_lower_bound(out.lp, r_out.row_dual).value <= r_full.objective * (1 + 1e-9)
    assert r_out.objective == pytest.approx(r_full.objective, rel=1e-9)


@pytest.mark.parametrize("kw", [{"symmetry": "off"}, {"edge_rows": True}])
def test_outward_rows_need_the_even_reduction(kw):
    from optmech.errors import SpecError
    from optmech.problems.approx import build_approx

    c = parse_cost("square")
    with pytest.raises(SpecError, match="outward_rows"):
        build_approx(c, 1.0, 1e-3, 4, 10, nodes=NodeCosts(c, 1.0, 4), outward_rows=True, **kw)


def test_the_family_goes_back_to_every_row_when_the_outward_lp_is_not_enough(monkeypatch):
    """x² at ε = 5: the per-point LPs are built with the outward rows; when a step's primal needs the dropped
    rows (forced here), the same size is solved again with every row, and every later step keeps them."""
    r = _solve(epsilon=5, delta=1e-6, cost="square", target_gap=1e-2)
    assert r.certified and all(h["size"]["outward_rows_only"] for h in r.history)
    calls = []

    def once(self, step):
        calls.append(step.built.model.n)
        return len(calls) == 1

    monkeypatch.setattr(approx_real.ApproxRealFamily, "_inward_used", once)
    r2 = _solve(epsilon=5, delta=1e-6, cost="square", target_gap=1e-2)
    sizes = [h["size"] for h in r2.history]
    assert sizes[0]["outward_rows_only"] and not any(s["outward_rows_only"] for s in sizes[1:])
    assert sizes[1]["cells_per_sensitivity"] == sizes[0]["cells_per_sensitivity"]
    assert r2.certified and r2.lower_bound <= r.upper_bound and r.lower_bound <= r2.upper_bound


def test_outward_rows_only_for_monotone_costs_and_the_audit_catches_their_misuse(monkeypatch):
    """|(|x| − 1)| is even but falls on [0, 1]: its LPs keep every row (the cost is not proven nondecreasing in
    |x|).  Forced to the outward rows, the first LP's law grows outward where the cost falls and its audit (before
    any repair) exceeds δ at a kept shift, so the family solves the same size with every row and keeps them: the
    bracket then overlaps the one with every row from the start."""
    cost = "abs(abs(x)-1)"
    assert not parse_cost(cost).is_symmetric_nondecreasing() and parse_cost("square").is_symmetric_nondecreasing()
    plain = _solve(epsilon=1, delta=1e-3, cost=cost, target_gap=1e-3)
    assert plain.certified and not any(h["size"]["outward_rows_only"] for h in plain.history)
    init = approx_real.ApproxRealFamily.__init__

    def forced(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.outward_rows = True

    monkeypatch.setattr(approx_real.ApproxRealFamily, "__init__", forced)
    r = _solve(epsilon=1, delta=1e-3, cost=cost, target_gap=1e-3)
    sizes = [h["size"] for h in r.history]
    assert sizes[0]["outward_rows_only"] and not any(s["outward_rows_only"] for s in sizes[1:])
    assert sizes[1]["cells_per_sensitivity"] == sizes[0]["cells_per_sensitivity"]
    assert r.certified and r.lower_bound <= plain.upper_bound and plain.lower_bound <= r.upper_bound
    assert r.relative_gap < 2e-3
