"""Issue 36, item 5 beyond 1-D: every d-D reference carries ``parameters["shift"]`` (a list of d
numbers), 0 where it is proven best (named costs, optmech.mechanisms.references.centre_is_best_nd),
and for a cost expression the product discrete Laplace at the shift vector a coordinate-wise search
finds, priced rigorously; (ε, δ) tables on ℝ list the references the solve lists.

Values are checked against independent derivations: the product discrete Laplace with
P(X_i = k) = (1 − λ)/(1 + λ) λ^{|k|} has E|X_i| = 2 Σ_{k>=1} k (1 − λ)/(1 + λ) λ^k = 2λ/(1 − λ²)
(Σ k λ^k = λ/(1 − λ)²), and E X_i² = 2λ/(1 − λ)² likewise (Σ k² λ^k = λ(1 + λ)/(1 − λ)³); other
expectations are brute-force sums over a window whose neglected mass is below 1e-30."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import optmech
from optmech.costs_nd import parse_cost_nd
from optmech.drive import solve_lipschitz
from optmech.mechanisms.approx_references import continuous_approx_references
from optmech.mechanisms.references import centre_is_best_nd, shifted_cost_nd
from optmech.table import build_table

ROOT = Path(__file__).resolve().parents[1]
SHIFTED = "abs(x1 - 3) + abs(x2)"
FAR = "where(abs(x1) < 5, abs(x1)+abs(x2), 0.5+abs(x2))"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "optmech", *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd=ROOT)


def abs_mean(lam: float) -> float:
    """E|X| for the two-sided geometric law P(k) ∝ λ^{|k|}: 2λ/(1 − λ²) (module docstring)."""
    return 2 * lam / (1 - lam**2)


def square_mean(lam: float) -> float:
    """E X² for the same law: 2λ/(1 − λ)²."""
    return 2 * lam / (1 - lam) ** 2


def brute_force_2d(cost_text: str, lam: float, shift) -> float:
    """E c(X + t) for i.i.d. two-sided geometric coordinates, summed over |k| <= K with λ^K < 1e-32."""
    K = int(math.ceil(75 / -math.log(lam)))
    k = np.arange(-K, K + 1, dtype=float)
    p = (1 - lam) / (1 + lam) * lam ** np.abs(k)
    x1, x2 = np.meshgrid(k + shift[0], k + shift[1], indexing="ij")
    c = parse_cost_nd(cost_text, 2)(np.stack([x1, x2], axis=-1))
    return math.fsum((np.outer(p, p) * c).ravel())


def pure_z2(cost: str, eps: float = 1.0, sensitivity: int = 1):
    return optmech.solve(optmech.Problem(privacy=optmech.PureDP(eps), cost=cost, sensitivity=sensitivity, dim=2,
                                         norm="l1", domain=optmech.IntegerLattice()))


# ------------------------------------------------------------------------------------------------
# expressions on ℤ²: the product discrete Laplace at the shift found
# ------------------------------------------------------------------------------------------------
def test_pure_z2_shifted_l1_lists_the_discrete_laplace_at_3_0():
    r = pure_z2(SHIFTED)
    (dl,) = [x for x in r.references if x.name == "discrete_laplace"]
    lam = math.exp(-1.0)  # λ = e^{−ε/Δ}, ε = 1, Δ = 1, ℓ1 sensitivity
    assert dl.parameters["shift"] == [3, 0] and all(isinstance(v, int) for v in dl.parameters["shift"])
    # E|X1 + 3 − 3| + E|X2| = 2 E|X| of the centred law's l1 cost
    assert dl.value == pytest.approx(2 * abs_mean(lam), rel=1e-10)
    assert dl.value >= 2 * abs_mean(lam) * (1 - 1e-14)  # priced as an upper bound
    assert dl.exact and dl.inside_bracket  # Δ = 1: the product geometric law is optimal for l1
    assert r.lower_bound <= dl.value * (1 + 1e-9) and "shifted by t = (3, 0)" in dl.note
    # the centred law costs E|X1 − 3| + E|X2| (brute force): the shift saves more than 2
    assert brute_force_2d(SHIFTED, lam, (0, 0)) > dl.value + 2


def test_far_branch_expression_moves_the_law_where_the_cost_is_cheaper():
    lam = math.exp(-1.0)
    refs = [x for x in pure_z2(FAR).references if x.name == "discrete_laplace"]
    (dl,) = refs
    t = dl.parameters["shift"]
    assert len(t) == 2 and t[1] == 0 and abs(t[0]) >= 10  # the branch 0.5 + |x2| lies at |x1| >= 5
    exact = brute_force_2d(FAR, lam, t)
    assert dl.value == pytest.approx(exact, rel=1e-10) and dl.value >= exact * (1 - 1e-14)
    assert exact == pytest.approx(0.5 + abs_mean(lam), rel=1e-6)
    assert dl.value < brute_force_2d(FAR, lam, (0, 0))


def test_shifted_cost_nd_is_the_cost_at_x_plus_t():
    c = parse_cost_nd(FAR, 2)
    pts = np.array([[-30.0, 1.0], [-26.0, -2.0], [0.0, 0.0], [4.5, 3.0]])
    moved = shifted_cost_nd(c, [-28, 0])
    assert np.array_equal(moved(pts), c(pts + np.array([-28.0, 0.0])))
    assert shifted_cost_nd(c, [0, 0]) is c


# ------------------------------------------------------------------------------------------------
# named costs: shift 0, proven, values unchanged
# ------------------------------------------------------------------------------------------------
def test_named_costs_are_proven_centred():
    for kind in ("l1", "l2", "l2sq", "linf", "l1sq", "linfsq", "abs", "square"):
        assert centre_is_best_nd(kind)
    assert not centre_is_best_nd(parse_cost_nd("abs(x1) + abs(x2)", 2))  # an expression is searched, not assumed


def test_pure_named_costs_list_shift_zero_with_their_closed_forms():
    lam = math.exp(-0.5)  # ε = 1, Δ = 2, ℓ1
    r = pure_z2("l1", sensitivity=2)
    refs = {x.name: x for x in r.references}
    assert refs["discrete_laplace"].value == pytest.approx(2 * abs_mean(lam), rel=1e-12)
    r2 = pure_z2("l2sq", sensitivity=2)
    refs2 = {x.name: x for x in r2.references}
    assert refs2["discrete_laplace"].value == pytest.approx(2 * square_mean(lam), rel=1e-12)
    for x in [*r.references, *r2.references]:
        assert x.parameters["shift"] == [0, 0] and "search" not in x.note, x
    # ℝ² with ℓ2 sensitivity and cost ‖x‖₂ (the radial family): the ℓ2-Laplace has E‖X‖₂ = d Δ/ε = 2
    rr = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1.0), cost="l2", dim=2, norm="l2",
                                       domain=optmech.Continuous(), target_gap=1e-3))
    refs = {x.name: x for x in rr.references}
    assert refs["l2_laplace"].value == pytest.approx(2.0, rel=1e-12)
    for x in rr.references:
        assert x.parameters["shift"] == [0.0, 0.0], x


def test_approx_z2_named_cost_lists_shift_zero():
    r = optmech.solve(optmech.Problem(privacy=optmech.ApproxDP(1.0, 0.05), cost="l1", sensitivity=2, dim=2,
                                      domain=optmech.IntegerLattice()))
    refs = {x.name: x for x in r.references}
    assert refs["discrete_laplace"].value == pytest.approx(2 * abs_mean(math.exp(-0.5)), rel=1e-12)
    for x in r.references:
        if x.kind == "lower":
            assert "shift" not in x.parameters
        else:
            assert x.parameters["shift"] == [0, 0], x


def test_approx_r2_references_are_centred_with_unchanged_values():
    r = optmech.solve(optmech.Problem(privacy=optmech.ApproxDP(1.0, 0.05), cost="l2", sensitivity=1.0, dim=2,
                                      norm="l2", domain=optmech.Continuous(), target_gap=0.5), time_limit=2)
    before = {b.name: b.value for b in continuous_approx_references("l2", 1.0, 0.05, 1.0, dim=2, norm="l2")}
    assert r.references
    for x in r.references:
        assert x.parameters["shift"] == [0.0, 0.0], x
        assert x.value == before[x.name] or (math.isnan(x.value) and math.isnan(before[x.name]))


def test_lipschitz_references_carry_shift_zero():
    r1 = solve_lipschitz(1.0, "abs", domain="integer")
    r2 = solve_lipschitz(1.0, "square", domain="integer", dim=2)
    assert [x.parameters["shift"] for x in r1.references] == [0]
    assert [x.parameters["shift"] for x in r2.references] == [[0, 0]]
    assert r2.references[0].value == pytest.approx(2 * square_mean(math.exp(-1.0)), rel=1e-12)


# ------------------------------------------------------------------------------------------------
# what a user reads: JSON and text
# ------------------------------------------------------------------------------------------------
def test_cli_json_and_text_carry_the_shift():
    args = ("solve", "--epsilon", "1", "--dim", "2", "--domain", "integer", "--norm", "l1", "--cost", SHIFTED)
    p = run_cli(*args, "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)  # the whole stdout is one JSON object
    (dl,) = [x for x in out["references"] if x["name"] == "discrete_laplace"]
    assert dl["parameters"]["shift"] == [3, 0]
    assert dl["value"] == pytest.approx(2 * abs_mean(math.exp(-1.0)), rel=1e-10)
    p = run_cli(*args)
    assert p.returncode == 0 and "shift=(3, 0)" in p.stdout and "in the --json output" not in p.stdout


# ------------------------------------------------------------------------------------------------
# tables and solve agree
# ------------------------------------------------------------------------------------------------
def test_approx_table_on_R_lists_the_solves_shifted_references():
    cost, eps, delta = "abs(x - 2)", 1.0, 0.05
    row = build_table("approx", cost=cost, sensitivities=[1], epsilons=[eps], deltas=[delta], domain="continuous",
                      target_gap=1e-2, workers=1)[0]
    r = optmech.solve(optmech.Problem(privacy=optmech.ApproxDP(eps, delta), cost=cost, sensitivity=1,
                                      domain=optmech.Continuous(), target_gap=1e-2))
    listed = {x.name: x for x in r.references}
    for name in ("uniform", "laplace", "staircase", "analytic_gaussian", "truncated_laplace"):
        assert row[f"ub_{name}"] == listed[name].value, name
    # Laplace(1) moved by 2: E|X + 2 − 2| = E|X| = Δ/ε = 1, not the centred E|X − 2| = 2 + e^{−2}
    assert listed["laplace"].parameters["shift"] == 2.0
    assert row["ub_laplace"] == pytest.approx(1.0, rel=1e-9)


def test_pure_table_on_z2_lists_the_shifted_discrete_laplace():
    row = build_table("pure", cost=SHIFTED, sensitivities=[1], epsilons=[1.0], domain="integer", dim=2,
                      workers=1)[0]
    assert row["laplace"] == pytest.approx(2 * abs_mean(math.exp(-1.0)), rel=1e-10)
