"""``optmech recommend`` and ``optmech.recommendation.recommend``: every cost in the table recomputed here.

The expected costs of the rows are re-derived independently of the library: closed forms
(Laplace Δ/ε, the discrete Laplace's 2λ/(1 − λ²), the staircase's Δ/(2 sinh(ε/2)) [Geng13, Thm 2.5],
the Gaussian's σ√(2/π)), and direct sums over the pmf written from its definition (the discrete
staircase [Geng13, (2.17)], the truncated discrete Laplace, the discrete Gaussian [CKS20]); each
calibrated law's privacy is re-checked by a direct hockey-stick sum ([BW18, Thm 8] for the Gaussian).
The composition table is re-accounted with dp_accounting's own constructors.  Machine output is read
the way users read it: the whole stdout of a subprocess must parse.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import norm

from optmech.recommendation import COLUMNS, recommend

# The examples of docs/guide/recommend.md ("Which noise should I add?")
INTEGER_APPROX = ["--epsilon", "1", "--delta", "1e-6", "--sensitivity", "10"]
REAL_COMPOSED = ["--epsilon", "1", "--delta", "1e-5", "--domain", "continuous", "--compositions", "10"]


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("OPTMECH_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "optmech", "recommend", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def hockey_stick(p: np.ndarray, eps: float, shifts) -> float:
    """max_s Σ_k [p(k) − e^ε p(k + s)]_+ over a finite window (p = 0 outside), both signs."""
    worst = 0.0
    n = len(p)
    for s in shifts:
        for q in (np.concatenate([p[s:], np.zeros(s)]), np.concatenate([np.zeros(s), p[:n - s]])):
            worst = max(worst, float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0))))
    return worst


def two_sided(weights_nonneg: np.ndarray) -> np.ndarray:
    """The symmetric pmf on -K..K from its weights on 0..K, normalised."""
    w = np.concatenate([weights_nonneg[:0:-1], weights_nonneg])
    return w / w.sum()


def mean_abs(p: np.ndarray) -> float:
    K = (len(p) - 1) // 2
    return float(np.sum(np.abs(np.arange(-K, K + 1)) * p))


def discrete_staircase_pmf(eps: float, sens: int, r: int, periods: int = 200) -> np.ndarray:
    """[Geng13, (2.17)]: weight 1 on 0 <= k < r, e^-ε on r <= k < Δ (k >= 0), times e^-ε per period; even."""
    k = np.arange(periods * sens)
    m, j = np.divmod(k, sens)
    w = np.exp(-eps * m) * np.where(j < r, 1.0, math.exp(-eps))
    return two_sided(w)


@pytest.fixture(scope="module")
def integer_approx():
    out = cli(*INTEGER_APPROX, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)          # the whole stdout is one document


def row(doc: dict, name: str) -> dict:
    return next(r for r in doc["rows"] if r["mechanism"] == name)


def test_integer_approx_costs_recomputed(integer_approx):
    doc = integer_approx
    eps, delta, sens = 1.0, 1e-6, 10
    assert doc["problem"]["privacy"] == "approx" and doc["v_star"]["certified"] is True
    lo, up = doc["v_star"]["lower"], doc["v_star"]["upper"]
    assert 0 < lo <= up and (up - lo) / up <= 1e-4
    names = [r["mechanism"] for r in doc["rows"]]
    for expected in ("optimum", "discrete_laplace", "discrete_staircase", "truncated_geometric", "rounded_tulap",
                     "discrete_gaussian"):
        assert expected in names
    assert [r["rank"] for r in doc["rows"]] == list(range(1, len(names) + 1))
    costs = [r["expected_cost"] for r in doc["rows"]]
    assert costs == sorted(costs)
    assert doc["columns"] == list(COLUMNS)

    lam = math.exp(-eps / sens)
    assert row(doc, "discrete_laplace")["expected_cost"] == pytest.approx(2 * lam / (1 - lam * lam), rel=1e-12)

    r = row(doc, "discrete_staircase")["parameters"]["r"]
    p = discrete_staircase_pmf(eps, sens, r)
    assert row(doc, "discrete_staircase")["expected_cost"] == pytest.approx(mean_abs(p), rel=1e-10)

    tg = row(doc, "truncated_geometric")
    T = tg["parameters"]["T"]
    p = two_sided(lam ** np.arange(T + 1))
    assert tg["expected_cost"] == pytest.approx(mean_abs(p), rel=1e-10)
    assert hockey_stick(p, eps, range(1, sens + 1)) <= delta * (1 + 1e-9)        # exact δ at T
    p_shorter = two_sided(lam ** np.arange(T))
    assert hockey_stick(p_shorter, eps, range(1, sens + 1)) > delta              # T is the smallest

    dg = row(doc, "discrete_gaussian")
    sigma = dg["parameters"]["sigma"]
    K = int(40 * sigma)
    p = two_sided(np.exp(-np.arange(K + 1) ** 2 / (2 * sigma ** 2)))
    assert dg["expected_cost"] == pytest.approx(mean_abs(p), rel=1e-9)
    assert hockey_stick(p, eps, range(1, sens + 1)) <= delta * (1 + 1e-6)

    # every cost is at least V* (>= the certified lower end), and the ratios bracket cost / V*
    for r in doc["rows"]:
        assert r["expected_cost"] >= lo * (1 - 1e-12)
        assert r["ratio_low"] <= r["expected_cost"] / lo + 1e-12
        assert r["ratio_high"] >= r["expected_cost"] / up - 1e-12
        assert r["ratio_low"] >= 1.0 and r["ratio_low"] <= r["ratio_high"]
    # the optimum is the upper end of the bracket; at --prefer-standard 0 nothing costlier is chosen
    assert row(doc, "optimum")["expected_cost"] == up
    chosen = [r for r in doc["rows"] if r["recommended"]]
    assert len(chosen) == 1 and chosen[0]["mechanism"] == doc["recommended"]
    assert chosen[0]["expected_cost"] <= up * (1 + 1e-12)


def test_text_and_csv_are_the_same_table():
    text = cli(*INTEGER_APPROX)
    assert text.returncode == 0, text.stderr
    assert "V* bracket (certified)" in text.stdout and "recommended" in text.stdout
    out = cli(*INTEGER_APPROX, "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert list(rows[0].keys()) == [*COLUMNS, "v_star_lower", "v_star_upper", "v_star_certified"]
    for r in rows:                       # every mechanism of the csv is on a line of the text table
        assert f" {r['mechanism']} " in text.stdout
        json.loads(r["parameters"])
        assert float(r["ratio_low"]) <= float(r["ratio_high"])
    assert sum(r["recommended"] == "True" for r in rows) == 1


def test_prefer_standard_picks_a_certified_standard_mechanism():
    rec = recommend(1.0, 1e-6, sensitivity=10, prefer_standard=0.01)
    chosen = next(r for r in rec.rows if r["recommended"])
    assert chosen["standard"] and chosen["ratio_high"] <= 1.01
    # the cheapest standard mechanism within 1 % is chosen
    within = [r for r in rec.rows if r["standard"] and r["ratio_high"] <= 1.01]
    assert chosen is min(within, key=lambda r: r["expected_cost"])
    strict = recommend(1.0, 1e-6, sensitivity=10)
    assert strict.choice == "optimum"          # the best standard mechanism is 1.7e-5 above V*
    frame = rec.to_frame()
    assert list(frame.columns) == list(COLUMNS) and len(frame) == len(rec.rows)


def test_pure_integer_the_geometric_is_optimal():
    rec = recommend(1.0, domain="integer")
    b = math.exp(-1.0)
    v = 2 * b / (1 - b * b)                   # [GV13] Thm 10 / [Geng13] Thm 2.12 at Δ = 1
    assert rec.lower <= v <= rec.upper
    assert rec.mechanisms[rec.choice] is not None and rec.rows[0]["standard"]
    assert rec.rows[0]["expected_cost"] == pytest.approx(v, rel=1e-12)


def test_real_line_rows_recomputed():
    rec = recommend(1.0, 1e-6, domain="continuous")
    lo, up = rec.lower, rec.upper
    got = {r["mechanism"]: r for r in rec.rows}
    assert got["laplace"]["expected_cost"] == pytest.approx(1.0, rel=1e-12)
    assert got["staircase"]["expected_cost"] == pytest.approx(1 / (2 * math.sinh(0.5)), rel=1e-12)
    sigma = got["analytic_gaussian"]["parameters"]["sigma"]
    assert got["analytic_gaussian"]["expected_cost"] == pytest.approx(sigma * math.sqrt(2 / math.pi), rel=1e-12)
    a, c = 1 / (2 * sigma), sigma            # [BW18, Thm 8], Δ = 1, ε = 1
    assert norm.cdf(a - c) - math.e * norm.cdf(-a - c) <= 1e-6 * (1 + 1e-9)
    assert "gaussian" not in got             # the classic calibration needs ε < 1 [DR14, Thm A.1]
    assert lo <= 1 / (2 * math.sinh(0.5)) * (1 + 1e-12)
    assert rec.rows[0]["expected_cost"] <= got["staircase"]["expected_cost"]
    assert up > 0


def test_compositions_reaccounted_with_dp_accounting():
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld

    out = cli(*REAL_COMPOSED, "--json", timeout=300)
    assert out.returncode == 0, out.stderr
    comp = json.loads(out.stdout)["compositions"]
    assert comp["compositions"] == 10 and comp["delta"] == 1e-5
    rows = {r["mechanism"]: r for r in comp["rows"]}
    lap = rows["laplace"]
    b = lap["parameters"]["scale"]
    assert lap["expected_cost"] == pytest.approx(b, rel=1e-12)               # E|X| = b
    d = pld.from_laplace_mechanism(b, sensitivity=1.0).self_compose(10).get_delta_for_epsilon(1.0)
    assert d <= 1e-5 * (1 + 1e-6)
    tight = pld.from_laplace_mechanism(b / 1.01, sensitivity=1.0).self_compose(10).get_delta_for_epsilon(1.0)
    assert tight > 1e-5                                                     # calibrated to 1 %
    g = rows["analytic_gaussian"]
    sigma = g["parameters"]["scale"]
    assert g["expected_cost"] == pytest.approx(sigma * math.sqrt(2 / math.pi), rel=1e-12)
    d = pld.from_gaussian_mechanism(sigma, sensitivity=1.0).self_compose(10).get_delta_for_epsilon(1.0)
    assert d <= 1e-5 * (1 + 1e-6)
    # pure laws gain little from δ under composition; the Gaussian wins at k = 10 (and the table says so)
    assert comp["best"] == "analytic_gaussian"
    assert rows["optimum"]["composed_delta"] <= 1e-5
    assert any("does not imply optimality under composition" in n for n in comp["notes"])


def test_pure_compositions_run_at_epsilon_over_k():
    rec = recommend(1.0, sensitivity=1, domain="continuous", compositions=4)
    comp = rec.compositions
    assert comp["delta"] == 0.0
    stair = next(r for r in comp["rows"] if r["mechanism"] == "staircase")
    assert stair["expected_cost"] == pytest.approx(1 / (2 * math.sinh(0.125)), rel=1e-12)


@pytest.mark.parametrize("args, fragment", [
    (["--epsilon", "1", "--prefer-standard", "abc"], "--prefer-standard"),
    (["--epsilon", "1", "--compositions", "0"], "compositions"),
    (["--epsilon", "1", "--delta", "1e-6", "--json", "--format", "csv"], "two outputs"),
    (["--epsilon", "1", "--delta", "1e-6", "--dim", "2", "--compositions", "3"], "1-D"),
    (["--epsilon", "1", "--delta", "1.5"], "delta"),
])
def test_bad_input_one_line(args, fragment):
    out = cli(*args)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and fragment in out.stderr


def test_readme_examples_are_the_tested_ones_and_its_doctests_pass():
    """The guide's recommend commands (docs/guide/recommend.md) are the ones above; the OpenDP and
    dp_accounting examples of docs/guide/interop.md run."""
    import doctest
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1] / "docs" / "guide"
    guide = (docs / "recommend.md").read_text(encoding="utf-8")
    assert "optmech recommend " + " ".join(INTEGER_APPROX) in guide
    assert "optmech recommend " + " ".join(REAL_COMPOSED) in guide
    readme = (docs / "interop.md").read_text(encoding="utf-8")
    pytest.importorskip("opendp")
    pytest.importorskip("dp_accounting")
    section = readme
    test = doctest.DocTestParser().get_doctest(section, {}, "README: Using the optimal noise", "README.md", 0)
    assert len(test.examples) >= 15
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0


def test_interrupt_during_the_composition_table_keeps_the_finished_table():
    """SIGINT while the composition table is computed: exit 130, and stdout is the whole single-release
    table as one JSON document (what finished is not lost)."""
    import signal
    import time

    env = dict(os.environ)
    env.pop("OPTMECH_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "-m", "optmech", "recommend", "--epsilon", "1", "--delta", "1e-6",
                             "--sensitivity", "30", "--compositions", "100", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(12.0)  # the single-release table takes 3-4 s on a slow 2-core machine (twice that under load), the
    # composition table about 35 s more there (a machine twice as fast still has it running at 12 s)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert len(doc["rows"]) >= 3 and any(r["mechanism"] == "optimum" for r in doc["rows"])
    assert "compositions" not in doc or doc["compositions"] is None
    assert any("interrupted" in n for n in doc["notes"])
    assert err.strip().startswith("optmech: interrupted") and len(err.strip().splitlines()) == 1


def test_solve_without_references_keeps_the_bracket():
    """``solve(..., references=False)`` (what the composition search uses) answers the same bracket."""
    from optmech.drive import solve
    from optmech.spec import ApproxDP, IntegerLattice, Problem

    p = Problem(privacy=ApproxDP(0.5, 1e-6), sensitivity=3, cost="abs", domain=IntegerLattice())
    full, bare = solve(p), solve(p, references=False)
    assert full.references and bare.references == []
    assert (bare.lower_bound, bare.upper_bound) == (full.lower_bound, full.upper_bound)
    assert any("references=False" in c for c in bare.claims)


def test_at_epsilon_zero_the_uniform_noise_is_listed_and_recommended():
    """(0, δ)-DP on ℤ: uniform noise on n = 1/δ consecutive integers, E|X| = 250 for δ = 1e-3
    ({−500, …, 499}: (Σ_{k<500} k + Σ_{k<=500} k)/1000), is optimal; no deployed (ε > 0) law is listed."""
    rec = recommend(0.0, 1e-3)
    uni = next(r for r in rec.rows if r["mechanism"] == "uniform")
    assert uni["expected_cost"] == pytest.approx((sum(range(500)) + sum(range(501))) / 1000, rel=1e-12)
    assert rec.lower <= uni["expected_cost"] <= rec.upper * (1 + 1e-12)
    assert rec.choice == "uniform" and uni["sampler"] == "exact"
    assert not any(r["mechanism"] in ("truncated_geometric", "rounded_tulap") for r in rec.rows)
    assert all(r["mechanism"] != "uniform" for r in recommend(1.0, 1e-3).rows)   # listed at ε = 0 only
