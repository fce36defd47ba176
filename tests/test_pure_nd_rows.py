"""Row generation for pure ε-DP cell LPs with ℓ2 sensitivity (issue 42): the outer ring's rows first
(``optmech.problems.pure_nd.ring_shifts``), the other shifts' rows when a solution violates them; the ℓ2 radial
laws' exact ‖x‖∞ price in ℝ²; a step that skips its restriction LP is predicted without it."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from optmech.budget import LPPlan, Pace
from optmech.certify import dual_lower_bound
from optmech.families.pure_nd_setup import setup_for
from optmech.problems.pure_nd import RING_WIDTH, ring_shifts
from optmech.solvers.dispatch import solve_lp
from optmech.spec import Continuous, Problem, PureDP


def _setup(cost: str, n: int, ring: bool = True, epsilon: float = 1.0):
    import dataclasses

    s = setup_for(Problem(privacy=PureDP(epsilon), cost=cost, sensitivity=1.0, domain=Continuous(resolution=n), dim=2,
                          norm="l2"))
    return dataclasses.replace(s, ring=ring)


def test_the_ring_is_the_lattice_points_near_the_sphere():
    """The lower side's ring at n = 4 in ℝ²: the integer k with 3.5 <= ‖k‖₂ <= 4, counted directly."""
    steps = np.array([k for k in itertools.product(range(-4, 5), repeat=2) if k[0] ** 2 + k[1] ** 2 <= 16])
    mask = ring_shifts(steps, 4)
    direct = {tuple(k) for k in steps if (4 - RING_WIDTH) ** 2 <= k[0] ** 2 + k[1] ** 2}
    assert {tuple(k) for k in steps[mask]} == direct and len(direct) == 12
    assert not mask[np.all(steps == 0, axis=1)].any()
    # the restriction's connected set: ‖(|k| − 1)₊‖₂ >= n − 1 − RING_WIDTH
    up = np.array(list(itertools.product(range(-5, 6), repeat=2)))
    a = np.maximum(np.abs(up) - 1, 0)
    assert np.array_equal(ring_shifts(up, 4, upper_cells=True),
                          (np.sqrt((a * a).sum(axis=1)) >= 2.5) & np.any(up != 0, axis=1))


def test_pending_rows_are_the_dropped_pairs_and_adding_them_gives_the_whole_lp():
    """The ring LP keeps a quarter of the rows; its pending pairs, added back, give the whole LP's value (built
    without the ring), and violated() agrees with the whole LP's rows evaluated at the ring LP's solution."""
    s_ring, s_full = _setup("l1", 4), _setup("l1", 4, ring=False)
    R = 24  # a smaller domain than radius() picks (68): every subset relation holds on any domain
    ring, full = s_ring.build(R, "lower"), s_full.build(R, "lower")
    assert ring.generated and not full.generated
    assert ring.lp.rows + ring.pending[0].size == full.lp.rows
    raw = solve_lp(ring.lp)
    # the rows the whole LP has beyond the ring's, at the ring's solution, against violated()
    x = np.asarray(raw.x)
    excess = full.lp.A @ x - full.lp.row_upper
    q = x[ring.lp.col_blocks["p"]]
    tol = 1e-7 * np.abs(q).max()
    i, j = ring.pending
    mine = q[i] - math.exp(1.0) * ring.sigma[j] / ring.sigma[i] * q[j]
    assert set(ring.violated(x).tolist()) == set(np.flatnonzero(mine > tol).tolist())
    assert np.max(excess) <= max(np.max(mine, initial=0.0), 0.0) + 1e-9
    everything = ring.with_rows(np.arange(i.size))
    assert everything.lp.rows == full.lp.rows and everything.pending[0].size == 0
    assert everything.lp.row_blocks["ratio_generated"].stop == everything.lp.rows
    v_all, v_full = solve_lp(everything.lp).objective, solve_lp(full.lp).objective
    assert v_all == pytest.approx(v_full, rel=1e-9)
    # the ring's relaxation certifies a lower bound no larger than the whole LP's value (a relaxation of it),
    # and here it is the same value: the dropped shifts' rows are slack
    lo = dual_lower_bound(ring.lp, raw.row_dual, raw.objective)
    assert lo.value <= v_full * (1 + 1e-9) and lo.value == pytest.approx(v_full, rel=1e-6)


def test_a_pending_row_that_binds_is_generated():
    """A solution that breaks a dropped row is caught: put mass on one cell and none on a neighbour one shift
    inside the ring away, and violated() names that pair."""
    alp = _setup("l1", 4).build(8, "lower")
    x = np.zeros(alp.lp.cols)
    p = alp.lp.col_blocks["p"]
    i, j = alp.pending
    x[p.start + i[0]] = 1.0  # q_i = 1 and q_j = 0 breaks q_i <= e^eps (sigma_j / sigma_i) q_j
    bad = alp.violated(x)
    assert 0 in bad.tolist() and np.all(i[bad] == i[0])


def test_the_radial_staircase_prices_the_linf_cost_exactly_in_the_plane():
    """E‖X‖∞ of the ℓ2 staircase and of the ℓ2-Laplace in ℝ² is E‖X‖₂ · 2√2/π (R independent of the direction):
    the references' upper ends against Monte Carlo of the laws' own samples."""
    from optmech.families.pure_nd_references import closed_form_uppers_nd

    s = setup_for(Problem(privacy=PureDP(1.0), cost="linf", sensitivity=1.0, domain=Continuous(), dim=2, norm="l2"))
    ups = {u.reference: u for u in closed_form_uppers_nd(s)}
    rng = np.random.default_rng(7)
    for name in ("staircase", "l2_laplace"):
        up = ups[name]
        assert up.certified and "2 sqrt(2)/pi" in up.note
        exact = float(up.mechanism.expected_cost("l2")) * 2 * math.sqrt(2) / math.pi
        assert up.value == pytest.approx(exact, rel=1e-11) and up.value >= exact
        x = np.asarray(up.mechanism.sample(200_000, rng=rng))
        m = np.abs(x).max(axis=1)
        assert abs(m.mean() - exact) < 5 * m.std() / math.sqrt(m.size)


def test_a_step_without_its_second_lp_is_not_predicted_from_one_with_it():
    """Pace: the certification measured on a step that solved a restriction LP inside it (lps = 2) does not
    predict a step that solves none (lps = 1); a step of the same kind is still scaled from it."""
    pace = Pace()
    plan2 = LPPlan(rows=1000, cols=100, nonzeros=2000, builder="cells_nd_orbits", lps=2)
    pace.record(plan2, 0.01, 30.0)
    same = pace.predict(plan2, 0.0)
    one = pace.predict(LPPlan(rows=1000, cols=100, nonzeros=2000, builder="cells_nd_orbits", lps=1), 0.0)
    assert same.certify >= 30.0 and one.certify < 1.0


def test_cli_l2_sensitivity_linf_cost_at_resolution_4():  # ε = 2: a smaller domain
    """The whole command at a fixed resolution 4: the lower end is the whole LP's certified bound (built without the
    ring and solved here), the upper end the radial staircase's exact ‖x‖∞ cost, the claims say which rows ran."""
    cmd = [sys.executable, "-m", "optmech", "solve", "--privacy", "pure", "--epsilon", "2", "--sensitivity", "1",
           "--domain", "continuous", "--dim", "2", "--norm", "l2", "--cost", "linf", "--resolution", "4",
           "--target-gap", "0.5", "--time-limit", "60", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    s = _setup("linf", 4, ring=False, epsilon=2.0)
    full = s.build(r["history"][0]["size"]["half_width"], "lower")
    raw = solve_lp(full.lp)
    whole = dual_lower_bound(full.lp, raw.row_dual, raw.objective).value
    assert r["lower_bound"] == pytest.approx(whole, rel=1e-6)
    from optmech.mechanisms.staircase_nd import StaircaseND

    st = StaircaseND.optimal("l1", epsilon=2.0, sensitivity=1.0, dim=2, norm="l2")
    assert r["upper_bound"] == pytest.approx(float(st.expected_cost("l2")) * 2 * math.sqrt(2) / math.pi, rel=1e-11)
    assert r["lower_bound"] <= r["upper_bound"]
    assert any("outer ring" in c for c in r["claims"]) and r["lp"]["generated_rows"] >= 0


@pytest.mark.slow
def test_the_refined_step_skips_the_restriction_and_raises_the_lower_end():
    """With the defaults and 60 s, ℓ2 sensitivity with ‖x‖₁ in ℝ² refines from 4 to 8 cells per Δ (the ring's rows
    make the finer LP fit), skips the restriction LP there (the staircase is far below it) and says so; the lower
    end rises above resolution 4's whole-LP bound."""
    import optmech

    r = optmech.solve(Problem(privacy=PureDP(1.0), cost="l1", sensitivity=1.0, domain=Continuous(), dim=2, norm="l2"),
                      time_limit=60)
    assert r.lp["resolutions"] == [4, 8]
    assert any("restriction LP was not solved at resolution 8" in c for c in r.claims)
    assert r.lower_bound > 2.4 and r.upper_bound == pytest.approx(2.52884889731, rel=1e-9)
