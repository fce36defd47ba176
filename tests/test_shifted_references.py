"""Issue 36, item 5: every family lists each closed-form law at its best shift (one rule,
optmech.mechanisms.references.shift_references), with ``parameters["shift"]`` in text and JSON, and
the plot draws the listed law at the listed shift with the listed value.

Values are checked against independent derivations: the staircase's closed form for |x|
([Geng13] Thm 2.5: V* = Δ e^{ε/2}/(e^ε − 1)), and brute-force sums over integer shifts with a
rigorous geometric tail bound."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import optmech
from optmech.costs import parse_cost
from optmech.families.approx_real import continuous_reference_values
from optmech.mechanisms.references import references_for, search_shift, shifted_cost

ASYM = "where(x > 0, x, 2*abs(x))"
ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "optmech", *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd=ROOT)


def staircase_abs_optimum(eps: float, delta: float) -> float:
    """V* for |x| under ε-DP on ℝ: Δ e^{ε/2}/(e^ε − 1) [Geng13, Thm 2.5]."""
    return delta * math.exp(eps / 2) / math.expm1(eps)


def discrete_laplace_shift_costs(eps: float, delta: int, shifts: np.ndarray) -> np.ndarray:
    """E c(X + t), c = ASYM, X discrete Laplace with λ = e^{−ε/Δ}, for each integer t: the sum over
    |k| <= K plus an upper bound of the tail (c(x) <= 2|x| <= 2(|k| + |t|)), summed in closed form;
    K is chosen so that the tail is below 1e-15 of the value, and the test asserts that."""
    lam = math.exp(-eps / delta)
    p0 = (1 - lam) / (1 + lam)
    K = int(math.ceil(60.0 / (1 - lam))) + 100
    k = np.arange(-K, K + 1, dtype=float)
    p = p0 * lam ** np.abs(k)
    out = []
    for t in shifts:
        y = k + t
        body = math.fsum(p * np.where(y > 0, y, 2 * np.abs(y)))
        # Σ_{k>K} λ^k (k + |t|) = λ^{K+1} [(K+1)/(1−λ) + λ/(1−λ)² + |t|/(1−λ)], both sides, times 2·p0
        tail = 2 * 2 * p0 * lam ** (K + 1) * ((K + 1) / (1 - lam) + lam / (1 - lam) ** 2 + abs(t) / (1 - lam))
        assert tail <= 1e-15 * body
        out.append(body)
    return np.array(out)


# ------------------------------------------------------------------------------------------------
# pure ε-DP, ℝ and ℤ
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps,delta", [(1.0, 1.0), (0.7, 2.0)])
def test_abs_shifted_by_5_on_R_lists_the_staircase_at_5(eps, delta):
    refs = {r.name: r for r in references_for(parse_cost("abs(x-5)"), eps, delta, "continuous")}
    st, lap = refs["staircase"], refs["laplace"]
    assert st.parameters["shift"] == 5.0 and lap.parameters["shift"] == 5.0
    # E|X + 5 − 5| = E|X|: the staircase's V* for |x| and the Laplace's Δ/ε
    assert st.value == pytest.approx(staircase_abs_optimum(eps, delta), rel=1e-9)
    assert lap.value == pytest.approx(delta / eps, rel=1e-9)
    assert "shifted by 5" in st.note and "numeric search" in st.note


def test_asymmetric_cost_on_Z_best_integer_shift_against_brute_force():
    eps, delta = 1.0, 20
    refs = {r.name: r for r in references_for(parse_cost(ASYM), eps, delta, "integer")}
    dl = refs["discrete_laplace"]
    shifts = np.arange(-60, 61)
    costs = discrete_laplace_shift_costs(eps, delta, shifts)
    i = int(np.argmin(costs))
    assert 0 < i < shifts.size - 1  # an interior minimum of a convex function: the global one
    assert dl.parameters["shift"] == int(shifts[i]) != 0
    assert dl.value == pytest.approx(costs[i], rel=1e-9)
    assert dl.value <= costs[60]  # no more than the centred law
    assert "shifted by" in dl.note
    # the discrete staircase (best r, an upper bound here) is listed and shifted as well
    ds = refs["discrete_staircase"]
    assert ds.parameters["shift"] != 0 and ds.value < dl.value and ds.note.startswith("shifted by")


def test_symmetric_costs_keep_shift_zero_without_a_search():
    for domain, delta in (("continuous", 1.0), ("integer", 3)):
        for cost in ("abs", "square", "abs(x)**3"):
            for r in references_for(parse_cost(cost), 1.0, delta, domain):
                assert r.parameters["shift"] == 0 and "search" not in r.note, (cost, r)


def test_shifted_cost_and_search_shift():
    c = shifted_cost(parse_cost(ASYM), 3)
    x = np.array([-4.0, -3.0, -2.5, 0.0, 1.0])
    assert np.array_equal(c(x), parse_cost(ASYM)(x + 3))
    lo, hi = c.enclose(np.array([-4.0]), np.array([-2.0]))  # L on [-1, 1]: [0, 2]
    assert lo[0] <= 0.0 and hi[0] >= 2.0
    assert search_shift(parse_cost("abs(x + 12)"), optmech.DiscreteLaplace(epsilon=1.0, sensitivity=3), integer=True)[0] == -12


# ------------------------------------------------------------------------------------------------
# (ε, δ): ℤ and ℝ
# ------------------------------------------------------------------------------------------------
def test_approx_on_Z_lists_shifted_references_for_an_asymmetric_cost():
    eps, delta, D = 1.0, 1e-3, 4
    r = optmech.solve(optmech.Problem(privacy=optmech.ApproxDP(eps, delta), cost=ASYM, sensitivity=D,
                                      domain=optmech.IntegerLattice()))
    refs = {x.name: x for x in r.references}
    for name in ("uniform", "discrete_laplace", "discrete_staircase", "discrete_gaussian"):
        assert isinstance(refs[name].parameters["shift"], int) and refs[name].parameters["shift"] != 0, name
        assert refs[name].value >= r.lower_bound
    # the same rule as the pure family: the discrete Laplace at its brute-force best shift
    shifts = np.arange(-30, 31)
    costs = discrete_laplace_shift_costs(eps, D, shifts)
    i = int(np.argmin(costs))
    assert refs["discrete_laplace"].parameters["shift"] == int(shifts[i])
    assert refs["discrete_laplace"].value == pytest.approx(costs[i], rel=1e-9)
    pure = {x.name: x for x in references_for(parse_cost(ASYM), eps, D, "integer")}
    assert pure["discrete_laplace"].parameters["shift"] == refs["discrete_laplace"].parameters["shift"]
    assert pure["discrete_laplace"].value == refs["discrete_laplace"].value
    # the discrete Gaussian keeps its rigour (exact sum + tail bound) at the shift: check by a direct sum
    dg = refs["discrete_gaussian"]
    assert dg.exact
    s, t = dg.parameters["sigma"], dg.parameters["shift"]
    k = np.arange(-4000, 4001, dtype=float)
    p = np.exp(-k * k / (2 * s * s))
    y = k + t
    direct = math.fsum(p * np.where(y > 0, y, 2 * np.abs(y))) / math.fsum(p)
    assert dg.value == pytest.approx(direct, rel=1e-12) and dg.value >= direct * (1 - 1e-15)
    y = k
    assert dg.value < math.fsum(p * np.where(y > 0, y, 2 * np.abs(y))) / math.fsum(p)


def test_approx_on_R_lists_laws_shifted_by_5():
    eps, delta, D = 1.0, 1e-3, 1.0
    problem = optmech.Problem(privacy=optmech.ApproxDP(eps, delta), cost="abs(x-5)", sensitivity=D,
                              domain=optmech.Continuous())
    refs = {x.name: x for x in continuous_reference_values(problem, 0.0, math.inf)}
    for name in ("analytic_gaussian", "truncated_laplace", "laplace", "staircase", "uniform"):
        assert refs[name].parameters["shift"] == 5.0, name
    assert refs["laplace"].value == pytest.approx(D / eps, rel=1e-9)
    assert refs["staircase"].value == pytest.approx(staircase_abs_optimum(eps, D), rel=1e-9)
    s = refs["analytic_gaussian"].parameters["sigma"]
    assert refs["analytic_gaussian"].value == pytest.approx(s * math.sqrt(2 / math.pi), rel=1e-7)
    # E|U| = a/2, a = Δ/(2δ); the uniform's route is a rigorous upper enclosure (4096 pieces) of the integral
    assert D / (4 * delta) <= refs["uniform"].value <= D / (4 * delta) * (1 + 1e-3)


# ------------------------------------------------------------------------------------------------
# what a user sees: JSON, text and the plot
# ------------------------------------------------------------------------------------------------
def test_cli_json_and_text_carry_the_shift():
    proc = run_cli("solve", "--epsilon", "1", "--domain", "integer", "--sensitivity", "20", "--cost", ASYM, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    refs = {r["name"]: r for r in out["references"]}
    assert all("shift" in r["parameters"] for r in out["references"])
    shifts = np.arange(-60, 61)
    costs = discrete_laplace_shift_costs(1.0, 20, shifts)
    i = int(np.argmin(costs))
    assert refs["discrete_laplace"]["parameters"]["shift"] == int(shifts[i])
    assert refs["discrete_laplace"]["value"] == pytest.approx(costs[i], rel=1e-9)
    proc = run_cli("solve", "--epsilon", "1", "--cost", "abs(x-5)")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"staircase\s+.*0\.9595", proc.stdout) and "shift=5" in proc.stdout, proc.stdout


def test_plot_draws_the_listed_reference_at_its_listed_shift():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from optmech.plots import plot_result

    r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1.0), cost="abs(x-5)", sensitivity=1.0,
                                      domain=optmech.Continuous(resolution=8)))
    best = min((x for x in r.references if x.name in ("staircase", "laplace")), key=lambda x: x.value)
    assert best.name == "staircase" and best.parameters["shift"] == 5.0
    ax = plot_result(r).axes[0]
    (line,) = [ln for ln in ax.lines if ln.get_label().startswith("staircase")]
    label = line.get_label()
    assert "shifted by +5" in label
    assert float(re.search(r"cost ([0-9.e+-]+)", label).group(1)) == float(f"{best.value:.6g}")
    law = optmech.Staircase(epsilon=1.0, sensitivity=1.0, gamma=best.parameters["gamma"])
    x = np.asarray(line.get_xdata(), dtype=float)
    y = np.asarray(line.get_ydata(), dtype=float)
    ok = np.isfinite(y)
    assert np.allclose(y[ok], law.pdf(x[ok] - 5.0), rtol=1e-12, atol=0)
