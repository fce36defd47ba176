"""The command line for Lipschitz privacy [KHP15], Wasserstein utility [QHFL22] and ``optmech compare``."""

from __future__ import annotations

import json

import pytest
from test_cli import run_cli


def test_wasserstein_json_contract():
    p = run_cli("solve", "--utility", "wasserstein", "--input", "poisson:5:0:30", "--epsilon", "2", "--sensitivity", "15",
                "--domain", "integer", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for key in ("lower_bound", "upper_bound", "relative_gap", "certified", "seconds", "references", "lp"):
        assert key in d
    assert d["certified"] and d["relative_gap"] <= 1e-6
    assert d["problem"]["utility"] == "wasserstein" and d["problem"]["privacy"] == "pure"


def test_surrogate_on_a_point_mass_equals_wasserstein(tmp_path):
    """A point-mass input: W1(X, X + θ) = E|θ|, so both utilities give overlapping brackets."""
    f = tmp_path / "x.csv"
    f.write_text("k,p\n3,1\n")
    out = {}
    for u in ("wasserstein", "surrogate"):
        p = run_cli("solve", "--utility", u, "--input-pmf", str(f), "--epsilon", "1", "--sensitivity", "2",
                    "--domain", "integer", "--json")
        assert p.returncode == 0, p.stderr
        out[u] = json.loads(p.stdout)
    a, b = out["wasserstein"], out["surrogate"]
    assert max(a["lower_bound"], b["lower_bound"]) <= min(a["upper_bound"], b["upper_bound"]) * (1 + 1e-12)


def test_lipschitz_cli_contains_2_over_eps_squared():
    p = run_cli("solve", "--privacy", "lipschitz", "--epsilon", "1", "--cost", "square", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["certified"] and d["lower_bound"] <= 2.0 <= d["upper_bound"]
    assert d["problem"]["privacy"] == "lipschitz"


@pytest.mark.parametrize("args", [
    ["solve", "--privacy", "lipschitz", "--epsilon", "1", "--delta", "0.1"],
    ["solve", "--privacy", "lipschitz", "--epsilon", "nan"],
    ["solve", "--utility", "wasserstein", "--epsilon", "1", "--domain", "integer"],
    ["solve", "--utility", "wasserstein", "--input", "poisson:5:0", "--epsilon", "1", "--domain", "integer"],
    ["solve", "--utility", "wasserstein", "--input", "binomial:5:0:3", "--epsilon", "1", "--domain", "integer"],
    ["solve", "--utility", "wasserstein", "--input", "uniform:0:10", "--epsilon", "1", "--domain", "continuous"],
    ["solve", "--utility", "wasserstein", "--input", "uniform:0:10", "--input-pmf", "x.csv", "--epsilon", "1",
     "--domain", "integer"],
    ["solve", "--utility", "wasserstein", "--input", "uniform:0:10", "--epsilon", "1", "--domain", "integer",
     "--privacy", "lipschitz"],
    ["solve", "--input", "uniform:0:10", "--epsilon", "1"],
    ["compare", "--epsilon", "0"],
    ["compare", "--epsilon", "1", "--cost", "linf", "--dim", "2"],
    ["compare", "--epsilon", "1", "--plot", "x.jpg"],  # .png, .pdf and .svg are written (issue 36)
])
def test_bad_inputs(args):
    p = run_cli(*args)
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr


@pytest.mark.parametrize("rows", ["k,p\n0,0.5\n1,-0.1\n2,0.6\n", "k,p\n0,0.5\n1,0.4\n", "k,p\n0.5,1\n", "x,y\n0,1\n"])
def test_bad_input_pmf(tmp_path, rows):
    f = tmp_path / "bad.csv"
    f.write_text(rows)
    p = run_cli("solve", "--utility", "wasserstein", "--input-pmf", str(f), "--epsilon", "1", "--domain", "integer")
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_compare_table_json_and_plot(tmp_path):
    png = tmp_path / "c.png"
    p = run_cli("compare", "--epsilon", "1", "--cost", "abs", "--json", "--plot", str(png))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    rows = {r["name"]: r for r in d["rows"]}
    assert set(rows) == {"dp_optimum", "lipschitz_optimum", "laplace"}
    # the staircase beats Laplace under DP; Laplace (E|X| = 1/ε) is inside the Lipschitz bracket
    assert rows["dp_optimum"]["upper_bound"] < rows["laplace"]["upper_bound"] == pytest.approx(1.0)
    assert rows["lipschitz_optimum"]["lower_bound"] <= 1.0 <= rows["lipschitz_optimum"]["upper_bound"]
    assert png.stat().st_size > 0


def test_l2_lipschitz_with_l1_cost_is_sandwiched():
    """‖x‖₁ cost under ℓ2 Lipschitz privacy: [ℓ1 relaxation at ε, ℓ1 product at ε/√2]; the ℓ2-Laplace
    is feasible (E‖X‖₁ = E r · E(|cos θ| + |sin θ|) = (2/ε)(4/π) in 2-D), so the lower end is below its cost."""
    import math

    from optmech.drive import solve_lipschitz

    r = solve_lipschitz(1.0, "l1", dim=2, norm="l2", domain="continuous", resolution=20)
    assert r.certified and r.status == "gap_not_reached" and "l1-Lipschitz relaxation" in r.message
    assert r.lower_bound <= 8 / math.pi <= 2 * math.sqrt(2) * 1.001  # ℓ2-Laplace vs the product's cost 2√2/ε
    assert r.lower_bound <= r.upper_bound
