"""The periodic-decay path of (ε, δ)-DP on ℝ (issue 38, 1-D target): optmech.families.approx_real with the
machinery of optmech.problems.approx_decay and optmech.certify_decay on the node problem.

Independent references: the per-point relaxation LP at the same resolution (a different LP: its optimum is the
node problem's value, which the decay certificate may not exceed), the per-point path's own certified bracket
(pinned with DECAY_MAX_EPSILON = 0: a different certificate).  The decay law's hockey-stick integral at off-grid
shifts and its cost by quadrature: tests/test_approx_real.py (test_the_upper_end_law_is_private_at_real_shifts)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import optmech
import optmech.families.approx_real as approx_real
from optmech.certify_decay import decay_lower_bound
from optmech.costs import parse_cost
from optmech.families.approx_decay import far_node_price, kept_shifts, layout_for
from optmech.problems.approx import build_approx
from optmech.problems.approx_cells import NodeCosts
from optmech.problems.approx_decay import build_decay
from optmech.solvers.highs import HighsBackend
from optmech.solvers.hockey_ipm import solve_hockey
from optmech.spec import Problem


def _solve(**kw):
    params = {"privacy": "approx", "domain": "continuous", "sensitivity": 1, **kw}
    return optmech.solve(Problem.from_params(params), time_limit=60)


@pytest.mark.parametrize("cost", ["abs", "square"])
def test_decay_certificate_is_below_the_node_problems_optimum(cost):
    """At n = 16 cells per sensitivity the decay dual's certified value is at most the optimum of the per-point
    relaxation LP with the same node prices (HiGHS, a different LP; up to its feasibility tolerance 1e-7), and
    within 1e-5 of it: the certificate bounds the whole node problem, not only the periodic-decay laws."""
    eps, delta, n = 1.0, 1e-4, 16
    L = parse_cost(cost)
    nodes = NodeCosts(L, 1.0, n)
    K, W = layout_for(eps, delta, n)
    dlp = build_decay(L, eps, delta, n, K, W, shifts=kept_shifts(n, 1.0), prices=nodes.lower)
    raw = solve_hockey(dlp.lp)
    cert = decay_lower_bound(dlp, raw.row_dual, nodes.lower, lambda limit: far_node_price(nodes, limit),
                             solver_objective=raw.objective)
    alp = build_approx(L, eps, delta, n, 12 * n, nodes=nodes, symmetry="off")
    ref = HighsBackend().solve(alp.lp, {})
    assert cert.value <= ref.objective * (1 + 1e-7)
    assert cert.value >= ref.objective * (1 - 1e-5)


@pytest.mark.parametrize("cost", ["square"])
def test_decay_bracket_meets_the_per_point_bracket(cost, monkeypatch):
    """ε = 2, δ = 1e-6 (the issue's 1-D target, 1e-4): the decay path's bracket and the per-point path's
    (pinned) are both certified and overlap; the decay path ran and reached the target."""
    r = _solve(epsilon=2, delta=1e-6, cost=cost, target_gap=1e-4)
    assert r.certified and r.relative_gap <= 1e-4
    assert r.history[0]["size"]["layout"] == "periodic_decay"
    monkeypatch.setattr(approx_real, "DECAY_MAX_EPSILON", 0.0)
    q = _solve(epsilon=2, delta=1e-6, cost=cost, target_gap=1e-3)
    assert "layout" not in q.history[0]["size"]
    assert r.lower_bound <= q.upper_bound * (1 + 1e-12) and q.lower_bound <= r.upper_bound * (1 + 1e-12)


def test_a_lossy_decay_dual_hands_over_to_the_per_point_path(monkeypatch):
    """A decay dual judged lossy (here every one: DECAY_LOSS_SHARE = 0) hands the lower end to the per-point
    path, which still certifies the target; the decay law may stay the upper end."""
    monkeypatch.setattr(approx_real, "DECAY_LOSS_SHARE", 0.0)
    monkeypatch.setattr(approx_real, "DECAY_FAILED_GAP", 0.0)
    r = _solve(epsilon=1, delta=1e-3, cost="square", target_gap=1e-4)
    sizes = [h["size"] for h in r.history]
    assert sizes[0].get("layout") == "periodic_decay" and "layout" not in sizes[-1]
    assert r.certified and r.relative_gap <= 1e-4
    assert r.history[0]["lower_bound"] <= r.history[0]["solver_objective"]


def test_the_decay_path_applies_to_abs_and_square_below_its_epsilon():
    """From DECAY_MAX_EPSILON on (measured: the dual does not extend at ε = 5 for |x|), and for other costs
    (no proven far node price), the per-point LP runs."""
    def family(**kw):
        p = Problem.from_params({"privacy": "approx", "domain": "continuous", "sensitivity": 1, **kw})
        return approx_real.ApproxRealFamily(p, None)

    assert family(epsilon=2, delta=1e-6, cost="abs").decay and family(epsilon=0.1, delta=0.01, cost="square").decay
    assert not family(epsilon=5, delta=1e-6, cost="abs").decay
    assert not family(epsilon=1, delta=1e-6, cost="abs(x)+0.1*x**2").decay
    assert isinstance(family(epsilon=1, delta=1e-6, cost="abs").start(), approx_real.RealDecaySize)
    assert isinstance(family(epsilon=5, delta=1e-6, cost="abs").start(), tuple)


def test_cli_json_names_the_decay_layout():
    out = subprocess.run([sys.executable, "-m", "optmech", "solve", "--privacy", "approx", "--epsilon", "2",
                          "--delta", "1e-6", "--domain", "continuous", "--cost", "square", "--target-gap", "1e-3",
                          "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["certified"] and d["relative_gap"] <= 1e-3
    assert d["lp"]["builder"] == "hockey_stick_decay" and d["truncation"]["layout"] == "periodic_decay"
    assert d["audit"]["passed"]
    if d["audit"]["realised_delta"] is not None:  # None: a closed-form reference was cheaper (its own proof)
        assert d["audit"]["realised_delta"] <= 1e-6
